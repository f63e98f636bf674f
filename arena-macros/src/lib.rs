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
/// `const_from_config`, `const_from_inputs`, `named_sizes`, `sizes_with_tracking`, and
/// `total_bytes` as a `const fn`; every function a formula calls must then be a `const fn`).
#[proc_macro_derive(Arena, attributes(arena, buffer))]
pub fn derive_arena(input: TokenStream) -> TokenStream {
    arena_macros_impl::derive_arena(input.into()).into()
}

/// Declares a region layout: one buffer carved into `#[region(...)]` fields back to back.
///
/// Container keys: `layout = Name` (default `<Struct>Layout`), `inputs(...)`, `derived(...)`,
/// `align = N` (each region's offset alignment, default 256). Field keys: `shape` or `bytes`.
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
