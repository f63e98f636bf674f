//! Generated items as head and body, so the real expansion and the fallback render the same
//! heads and cannot drift.
//!
//! When a declaration has an error, a derive emits the `compile_error!`s and, beside them,
//! the fallback: every item the author's other code can name, with bodies that never run,
//! so one mistake is one error rather than one more at every use of the arena. Both come
//! from one list of [`Item`]s: the real expansion renders each body, the fallback a stub.

use crate::ctxt::Ctxt;
use crate::model::Container;
use proc_macro2::TokenStream;
use quote::quote;

/// One generated associated item: its head (attributes and signature) and how to make
/// its body. The body is made only for the real expansion: on error the declaration may be
/// too broken to build it.
pub struct Item<'a> {
    head: TokenStream,
    body: Box<dyn Fn() -> TokenStream + 'a>,
    stub: TokenStream,
    kind: ItemKind,
}

#[derive(Clone, Copy)]
enum ItemKind {
    /// `head { body }`
    Function,
    /// `head = body;`
    Const,
}

/// Which rendering: the real items, or the fallback's stubs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Render {
    Real,
    Stub,
}

impl<'a> Item<'a> {
    /// A function; its stub body is `unimplemented!()`.
    pub fn function(head: TokenStream, body: impl Fn() -> TokenStream + 'a) -> Self {
        Item {
            head,
            body: Box::new(body),
            stub: quote!(::core::unimplemented!()),
            kind: ItemKind::Function,
        }
    }

    /// A `const fn`, with the body its stub takes: a value, not `unimplemented!()`, because
    /// a `const` item or an `assert_fits!` that calls it is evaluated even beside the
    /// declaration's errors, and a panicking stub would add one more error at each of them.
    pub fn const_function(
        head: TokenStream,
        body: impl Fn() -> TokenStream + 'a,
        stub: TokenStream,
    ) -> Self {
        Item {
            head,
            body: Box::new(body),
            stub,
            kind: ItemKind::Function,
        }
    }

    /// An associated constant, with the value its stub takes.
    pub fn constant(
        head: TokenStream,
        value: impl Fn() -> TokenStream + 'a,
        stub: TokenStream,
    ) -> Self {
        Item {
            head,
            body: Box::new(value),
            stub,
            kind: ItemKind::Const,
        }
    }

    fn render(&self, how: Render) -> TokenStream {
        let head = &self.head;
        let body = match how {
            Render::Real => (self.body)(),
            Render::Stub => self.stub.clone(),
        };
        match self.kind {
            ItemKind::Function => quote!(#head { #body }),
            ItemKind::Const => quote!(#head = #body;),
        }
    }
}

/// A derive's output for a read declaration (`None` when it could not be read): checked
/// (`valid`), then `render(cont, Real)`; with errors, the errors and beside them
/// `render(cont, Stub)`, the fallback: the items the author's other code refers to, with
/// bodies that never run, so one mistake in a declaration is reported once rather than at
/// every use. The same item list as the real expansion, so the two cannot drift.
pub fn generate(
    cx: &Ctxt,
    cont: Option<&Container>,
    render: fn(&Container, Render) -> TokenStream,
) -> TokenStream {
    let Some(cont) = cont else {
        return cx.to_compile_errors();
    };
    crate::valid::check(cx, cont);
    if cx.has_errors() {
        let errors = cx.to_compile_errors();
        let fallback = render(cont, Render::Stub);
        return quote!(#errors #fallback);
    }
    render(cont, Render::Real)
}

/// Every item of a list, rendered one way.
pub fn render(items: &[Item], how: Render) -> TokenStream {
    items.iter().map(|i| i.render(how)).collect()
}
