//! Derive macros for the declarative buffer arena. Use them through `arena_runtime`, which
//! re-exports them next to the types the generated code calls.
//!
//! The pipeline follows the usual derive layout: `ast` (reads the struct into the model,
//! keeping the original tokens for spans) → `attr` (attribute parsing) → then, in
//! `arena-macros-core`, `valid` (rules across fields) → `expand` (code generation:
//! `expand/arena.rs`, `expand/const_path.rs`, `expand/regions.rs` on the shared
//! `expand/parts.rs`); `formula` parses and rewrites the size formulas; `ctxt` collects
//! every error so all are reported at once. Only the reading needs `syn`: the rest is a
//! crate of its own that builds beside `syn` (see `arena-macros-core`).

mod ast;
mod attr;

#[cfg(test)]
mod hand;
#[cfg(test)]
mod tests;

use arena_macros_core::ctxt::Ctxt;
use arena_macros_core::model::{Container, Kind};
use proc_macro::TokenStream;

/// Declares a buffer arena: one `#[buffer(...)]` field per buffer.
///
/// ```ignore
/// #[derive(Arena)]
/// #[arena(sizes = BufferSizes, inputs(config: &Config, max_batch_tokens: usize),
///         derived(m16 = ceil16(max_batch_tokens)))]
/// pub struct BufferArena {
///     /// Hidden states of the current pass.
///     #[buffer(shape = [max_batch_tokens, config.hidden_size])]
///     pub hidden_states: DevicePtr<bf16>,
/// }
/// ```
///
/// Field keys: exactly one of `shape = [d0, ...]` (elements of the pointer's type) or
/// `bytes = formula`; optional `gate = condition` (0 bytes and NULL unless it holds),
/// `min_bytes = formula` (a floor) and `untracked` (left out of `total_bytes`).
/// Container keys: `sizes = Name` (default `<Arena>Sizes`), `inputs(name: Type, ...)` (the
/// parameters of `from_config`, in order), `derived(name = formula, ...)` (values computed
/// once, in order, before the buffers), `const` (also generate the const sizing path:
/// `const_from_config`, `const_from_inputs`, `named_sizes`, and `total_bytes` as a
/// `const fn`; every function a formula calls must then be a `const fn`).
#[proc_macro_derive(Arena, attributes(arena, buffer))]
pub fn derive_arena(input: TokenStream) -> TokenStream {
    arena(input.into()).into()
}

/// Declares a region layout: one buffer carved into `#[region(...)]` fields back to back.
///
/// Container keys: `layout = Name` (default `<Struct>Layout`), `inputs(...)`, `derived(...)`,
/// `align = N` (each region's offset alignment, default 256). Field keys: `shape` or `bytes`.
#[proc_macro_derive(Regions, attributes(regions, region))]
pub fn derive_regions(input: TokenStream) -> TokenStream {
    regions(input.into()).into()
}

/// A size formula outside an arena: `size!(a * b + c)` evaluates to
/// `Result<usize, SizeError>` with every operation checked, as in `#[buffer]` formulas. It
/// expands to a labeled block, so it works in a `const fn` too (calls in it must then be
/// `const fn`s returning a `usize`, `u32`, `u64` or `Result<usize, SizeError>`).
#[proc_macro]
pub fn size(input: TokenStream) -> TokenStream {
    arena_macros_core::size_macro(input.into()).into()
}

/// `#[derive(Arena)]` on tokens.
fn arena(input: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    read_then(input, Kind::Arena, arena_macros_core::derive_arena)
}

/// `#[derive(Regions)]` on tokens.
fn regions(input: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    read_then(input, Kind::Regions, arena_macros_core::derive_regions)
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
