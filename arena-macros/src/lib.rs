//! Derive macros for the declarative buffer arena. Use them through `arena_runtime`, which
//! re-exports them next to the types the generated code calls.
//!
//! This crate is only the macros' entry points. The derive itself is two crates:
//! `arena-macros-impl` reads the struct and its attributes with `syn` (`ast.rs`, `attr.rs`),
//! and `arena-macros-core`, which needs no `syn` and so builds beside it, checks the rules
//! across fields (`valid.rs`) and generates the code (`expand/arena.rs`,
//! `expand/const_path.rs`, `expand/regions.rs` on the shared `expand/parts.rs`); `formula`
//! parses and rewrites the size formulas; `ctxt` collects every error so all are reported at
//! once.

use proc_macro::TokenStream;

/// Declares a buffer arena: one `DevicePtr<T>` field per buffer with `#[buffer(...)]`, sized by
/// formulas over the arena's inputs. Use it through `arena_runtime`, whose re-export carries
/// the full reference (keys, formulas, generated items, phases, views, the const path), with
/// examples compiled as that crate's doctests.
#[proc_macro_derive(Arena, attributes(arena, buffer))]
pub fn derive_arena(input: TokenStream) -> TokenStream {
    arena_macros_impl::derive_arena(input.into()).into()
}

/// Declares a buffer carved into `#[region(...)]` fields back to back. Use it through
/// `arena_runtime`, whose re-export carries the full reference with compiled examples.
#[proc_macro_derive(Regions, attributes(regions, region))]
pub fn derive_regions(input: TokenStream) -> TokenStream {
    arena_macros_impl::derive_regions(input.into()).into()
}

/// A size formula outside an arena: `size!(a * b + c)` evaluates to
/// `Result<usize, SizeError>` with every operation checked, as in `#[buffer]` formulas. It
/// expands to a labeled block, so it works in a `const fn` too (calls in it must then be
/// `const fn`s returning a `usize`, `u32`, `u64` or `Result<usize, SizeError>`).
#[proc_macro]
pub fn size(input: TokenStream) -> TokenStream {
    arena_macros_impl::size(input.into()).into()
}
