//! The syn-free half of `arena-macros`: the input model, the formula grammar, the rules
//! across fields and the code generation of `#[derive(Arena)]`, `#[derive(Regions)]` and
//! `size!`. Not a public API: `arena-macros` is its only user, and nothing here is stable.
//!
//! Why a crate of its own: it needs only `proc-macro2` and `quote`, so Cargo builds it while
//! `syn` builds, on another core. A clean build of a user's project then waits on `syn` and
//! on `arena-macros`' small syn-dependent part (reading the struct and its attributes into
//! [`model`]), not on the whole derive (see `arena-spec/measurements/compile_time.md`).
//!
//! The pipeline: `arena-macros` builds a [`model::Container`] (`ast.rs`, `attr.rs`) and hands
//! it to [`derive_arena`] or [`derive_regions`]: `valid` checks the rules across fields, then
//! `expand` generates the code, one module per generator: `expand/arena.rs` (with the const
//! sizing path, `expand/const_path.rs`) and `expand/regions.rs`, on the helpers they share
//! (`expand/parts.rs`) and one item list for the expansion and its fallback
//! (`expand/items.rs`). [`formula`] checks and rewrites the size formulas (parsed by
//! `formula_parse`); [`ctxt::Ctxt`] collects every error so all are reported at once.

pub mod ctxt;
mod expand;
pub mod formula;
mod formula_parse;
pub mod model;
#[doc(hidden)]
pub mod rng;
pub mod suggest;
mod valid;

pub use expand::{derive_arena, derive_regions};

use proc_macro2::{Ident, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::ToTokens;

/// The spans of the first and the last token (the same for one token, the call site for
/// none): the range an error or a span of the tokens covers.
pub(crate) fn span_range(tokens: TokenStream) -> (Span, Span) {
    let mut spans = tokens.into_iter().map(|tt| tt.span());
    let first = spans.next().unwrap_or_else(Span::call_site);
    (first, spans.last().unwrap_or(first))
}

/// The span of some tokens, as `syn`'s `Spanned::span` gives it: the first token's, joined
/// to the last's where the compiler can join spans.
pub(crate) fn span_of(tokens: &impl ToTokens) -> Span {
    let (first, last) = span_range(tokens.to_token_stream());
    first.join(last).unwrap_or(first)
}

/// The lifetime tokens `'name` (a joint apostrophe and the name), for block labels.
pub(crate) fn lifetime(name: &str) -> TokenStream {
    [
        TokenTree::Punct(Punct::new('\'', Spacing::Joint)),
        TokenTree::Ident(Ident::new(name, Span::call_site())),
    ]
    .into_iter()
    .collect()
}

/// `size!(formula)`: the formula with every operation checked, as a labeled block giving
/// `Result<usize, SizeError>` (a labeled block rather than a closure and `?`, so the same
/// expansion runs in a `const fn`).
pub fn size_macro(input: TokenStream) -> TokenStream {
    let cx = ctxt::Ctxt::default();
    let Some(formula) = formula::Formula::parse(input, "`size!`", &cx) else {
        return cx.to_compile_errors();
    };
    let f = quote::format_ident!("__f");
    let label = formula.text.clone();
    let block = lifetime("__size");
    let body = formula.breaking(&f, &block);
    quote::quote!({
        let #f = ::arena_runtime::CheckedArith::new(#label);
        #block: {
            ::core::result::Result::<usize, ::arena_runtime::SizeError>::Ok(#body)
        }
    })
}
