//! Collects every error of one derive, so the author sees all of them at once.

use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::ToTokens;
use std::cell::RefCell;
use std::fmt::Display;

/// One error: its message and the span range it underlines.
struct Message {
    start: Span,
    end: Span,
    text: String,
}

/// The errors of one derive, in the order they were found.
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Vec<Message>>,
}

impl Ctxt {
    /// An error spanning `tokens` (from the first token to the last).
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.spanned(tokens.into_token_stream(), message.to_string());
    }

    fn spanned(&self, tokens: TokenStream, text: String) {
        let (start, end) = crate::span_range(tokens);
        self.errors.borrow_mut().push(Message { start, end, text });
    }

    /// An error at one span.
    pub fn error_at<M: Display>(&self, span: Span, message: M) {
        self.errors.borrow_mut().push(Message {
            start: span,
            end: span,
            text: message.to_string(),
        });
    }

    /// Errors so far: a caller compares counts to tell whether its own step added one.
    pub fn error_count(&self) -> usize {
        self.errors.borrow().len()
    }

    /// Whether any error was found: the derive then emits the errors and the fallback.
    pub fn has_errors(&self) -> bool {
        !self.errors.borrow().is_empty()
    }

    /// All errors as `::core::compile_error! { "..." }` invocations (empty when there are
    /// none): the path at the start of each error's range and the message at its end, so
    /// rustc underlines the whole range.
    pub fn to_compile_errors(&self) -> TokenStream {
        let mut out = TokenStream::new();
        for m in self.errors.borrow_mut().drain(..) {
            let punct = |c, spacing| {
                let mut p = Punct::new(c, spacing);
                p.set_span(m.start);
                TokenTree::Punct(p)
            };
            let mut text = Literal::string(&m.text);
            text.set_span(m.end);
            let mut body = Group::new(Delimiter::Brace, TokenTree::Literal(text).into());
            body.set_span(m.end);
            out.extend([
                punct(':', Spacing::Joint),
                punct(':', Spacing::Alone),
                TokenTree::Ident(Ident::new("core", m.start)),
                punct(':', Spacing::Joint),
                punct(':', Spacing::Alone),
                TokenTree::Ident(Ident::new("compile_error", m.start)),
                punct('!', Spacing::Alone),
                TokenTree::Group(body),
            ]);
        }
        out
    }
}
