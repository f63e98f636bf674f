//! The derives of `arena-macros` as functions on token streams: reading the struct and its
//! attributes into the model of `arena-macros-core` (the only part that needs `syn`), then
//! handing it to the core's checks and code generation. Not a public API: `arena-macros`
//! (the proc-macro crate, a shim over these functions) and the workspace's snapshot tests
//! are its users, and nothing here is stable.
//!
//! Why a crate of its own: a proc-macro crate can export only macros, so the expansion
//! snapshots of arenas declared in other crates (the engine arena in `arena-spec`) could not
//! call the derive as a function; here they can, from the workspace's `arena-tests`.
//!
//! The pipeline follows the usual derive layout: `ast` (reads the struct into the model,
//! keeping the original tokens for spans) → `attr` (attribute parsing) → then, in
//! `arena-macros-core`, `valid` (rules across fields) → `expand` (code generation);
//! `formula` parses and rewrites the size formulas; `ctxt` collects every error so all are
//! reported at once.

mod ast;
mod attr;

#[cfg(test)]
mod tests;

use arena_macros_core::ctxt::Ctxt;
use arena_macros_core::model::{Container, Kind};
use proc_macro2::TokenStream;

/// `#[derive(Arena)]` on tokens: the struct in, the generated items (or every error, with
/// the fallback items) out.
pub fn derive_arena(input: TokenStream) -> TokenStream {
    read_then(input, Kind::Arena, arena_macros_core::derive_arena)
}

/// `#[derive(Regions)]` on tokens.
pub fn derive_regions(input: TokenStream) -> TokenStream {
    read_then(input, Kind::Regions, arena_macros_core::derive_regions)
}

/// `size!(formula)` on tokens.
pub fn size(input: TokenStream) -> TokenStream {
    arena_macros_core::size_macro(input)
}

/// Reads the struct into the model (the part that needs `syn`), then hands it to `generate`
/// (`arena_macros_core::derive_arena` or `derive_regions`), which checks it and generates the
/// code or renders every error.
fn read_then(
    input: proc_macro2::TokenStream,
    kind: Kind,
    generate: fn(&Ctxt, Option<&Container>) -> proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let input = match syn::parse2::<syn::DeriveInput>(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let cx = Ctxt::default();
    let cont = ast::container(&cx, &input, kind);
    generate(&cx, cont.as_ref())
}
