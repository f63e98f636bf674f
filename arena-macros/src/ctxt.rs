//! Collects every error of one derive, so the author sees all of them at once.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::cell::RefCell;
use std::fmt::Display;

#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    /// An error spanning `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.errors
            .borrow_mut()
            .push(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// An error at one span.
    pub fn error_at<M: Display>(&self, span: proc_macro2::Span, message: M) {
        self.errors
            .borrow_mut()
            .push(syn::Error::new(span, message));
    }

    pub fn syn_error(&self, err: syn::Error) {
        self.errors.borrow_mut().push(err);
    }

    pub fn error_count(&self) -> usize {
        self.errors.borrow().len()
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.borrow().is_empty()
    }

    /// All errors as `compile_error!` invocations (empty when there are none).
    pub fn to_compile_errors(&self) -> TokenStream {
        let errors: Vec<syn::Error> = self.errors.borrow_mut().drain(..).collect();
        let mut errors = errors.into_iter();
        match errors.next() {
            None => TokenStream::new(),
            Some(mut first) => {
                for e in errors {
                    first.combine(e);
                }
                first.to_compile_error()
            }
        }
    }
}
