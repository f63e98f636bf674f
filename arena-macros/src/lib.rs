//! Derive macros for the declarative buffer arena. Use them through `arena_runtime`, which
//! re-exports them next to the types the generated code calls.
//!
//! The pipeline follows the usual derive layout: `ast` (the input model, keeping the
//! original tokens for spans) → `attr` (attribute parsing) → `valid` (rules across
//! fields) → `expand` / `expand_regions` (code generation). `formula` parses and
//! rewrites the size formulas; `ctxt` collects every error so all are reported at once.

mod ast;
mod attr;
mod ctxt;
mod expand;
mod expand_regions;
mod formula;
mod formula_parse;
mod items;
mod suggest;
mod valid;

#[cfg(test)]
mod hand;
#[cfg(test)]
mod tests;

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
/// once, in order, before the buffers).
#[proc_macro_derive(Arena, attributes(arena, buffer))]
pub fn derive_arena(input: TokenStream) -> TokenStream {
    expand::derive(input.into()).into()
}

/// Declares a region layout: one buffer carved into `#[region(...)]` fields back to back.
///
/// Container keys: `layout = Name` (default `<Struct>Layout`), `inputs(...)`, `derived(...)`,
/// `align = N` (each region's offset alignment, default 256). Field keys: `shape` or `bytes`.
#[proc_macro_derive(Regions, attributes(regions, region))]
pub fn derive_regions(input: TokenStream) -> TokenStream {
    expand_regions::derive(input.into()).into()
}

/// A size formula outside an arena: `size!(a * b + c)` evaluates to
/// `Result<usize, SizeError>` with every operation checked, as in `#[buffer]` formulas.
#[proc_macro]
pub fn size(input: TokenStream) -> TokenStream {
    expand_size(input.into()).into()
}

fn expand_size(input: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let cx = ctxt::Ctxt::default();
    let Some(formula) = formula::Formula::parse(input, "`size!`", &cx) else {
        return cx.to_compile_errors();
    };
    let f = quote::format_ident!("__f");
    let label = formula.text.clone();
    let body = formula.checked(&f);
    quote::quote!({
        let #f = ::arena_runtime::CheckedArith::new(#label);
        #[allow(clippy::redundant_closure_call, clippy::needless_question_mark)]
        (|| -> ::core::result::Result<usize, ::arena_runtime::SizeError> {
            ::core::result::Result::Ok(#body)
        })()
    })
}
