//! The const sizing path of `#[arena(const)]`: `const_from_config` / `const_from_inputs`
//! (usable in `const` items), `named_sizes`, and `total_bytes` as a `const fn`.
//!
//! The same formulas as the run-time path, in the same order, with the same gates, floors,
//! zero check and tracking; only a failure differs. At run time it is a `SizeError` value; here
//! each formula panics with a message naming the buffer and the formula, and a panic during
//! const evaluation is the compile error. Helpers live in
//! `::arena_runtime::__private::{Konst, konst}`.

use super::items::Item;
use super::parts::{by_name_args, elem_size, input_decls, mentions, ref_input_decls};
use crate::model::{Buffer, Container, Size};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// What a failed formula of `what` (a buffer or derived value) says at compile time, before
/// the failed operation's own figures (`: 2147483648 * 1099511627776 overflows usize`).
fn message(arena: &str, what: &str, formula: &str) -> String {
    format!("arena `{arena}`, const sizing: {what} = `{formula}`")
}

/// `let name: usize = ...;` for each derived value, in order.
fn derived_lets(cont: &Container) -> Vec<TokenStream> {
    let f = format_ident!("__f");
    let arena = cont.ident.to_string();
    cont.derived
        .iter()
        .map(|d| {
            let name = &d.name;
            let label = name.to_string();
            let msg = message(&arena, &format!("derived value `{label}`"), &d.formula.text);
            let m = format_ident!("__m");
            let value = d.formula.konst(&f, &m);
            quote! {
                let #name: usize = {
                    let #m: &'static str = #msg;
                    let #f = __A::new(#label, #m);
                    #value
                };
            }
        })
        .collect()
}

/// `__sizes.name = ...;` for each buffer: gate, raw bytes, floor, zero check.
fn size_lets(cont: &Container) -> Vec<TokenStream> {
    let f = format_ident!("__f");
    let arena = cont.ident.to_string();
    cont.buffers
        .iter()
        .enumerate()
        .map(|(index, b)| {
            let ident = &b.ident;
            let label = ident.to_string();
            let what = format!("buffer `{label}`");
            // Each failure's message bound once a buffer, named by every operation of its
            // formula, floor or gate.
            let (m, m_floor, m_gate) = (
                format_ident!("__m"),
                format_ident!("__m_floor"),
                format_ident!("__m_gate"),
            );
            let (f_floor, f_gate) = (format_ident!("__f_floor"), format_ident!("__f_gate"));
            let msg = message(
                &arena,
                &what,
                b.size.as_ref().map(Size::text).unwrap_or_default(),
            );
            let bytes = raw_bytes(b, index, &m);
            let arith = quote!(__A::new);
            let mut messages = quote! {
                let #m: &'static str = #msg;
                let #f = #arith(#label, #m);
            };
            // A floor's or gate's own message and arithmetic, where its formula has any.
            let uses = |tokens: &TokenStream, name: &proc_macro2::Ident| {
                tokens.clone().into_iter().any(|t| mentions(&t, name))
            };
            let floor = b.min_bytes.as_ref().map_or(quote!(0), |floor| {
                let tokens = floor.konst(&f_floor, &m_floor);
                if uses(&tokens, &f_floor) || uses(&tokens, &m_floor) {
                    let msg = message(&arena, &format!("floor of {what}"), &floor.text);
                    messages.extend(quote! {
                        let #m_floor: &'static str = #msg;
                        let #f_floor = #arith(#label, #m_floor);
                    });
                }
                tokens
            });
            let body = match &b.gate {
                Some(gate) => {
                    let tokens = gate.konst_bool(&f_gate, &m_gate);
                    if uses(&tokens, &f_gate) || uses(&tokens, &m_gate) {
                        let msg = message(&arena, &format!("gate of {what}"), &gate.text);
                        messages.extend(quote! {
                            let #m_gate: &'static str = #msg;
                            let #f_gate = #arith(#label, #m_gate);
                        });
                    }
                    quote! {
                        if #tokens {
                            #f.finish(#arena, #bytes, #floor, true, &mut __sizes.__raw[#index])
                        } else {
                            0
                        }
                    }
                }
                None => {
                    quote!(#f.finish(#arena, #bytes, #floor, false, &mut __sizes.__raw[#index]))
                }
            };
            quote! {
                __sizes.#ident = {
                    #messages
                    #body
                };
            }
        })
        .collect()
}

/// A buffer's bytes before gate and floor; a shape's dims are kept in `__sizes.__dims`, as
/// the run-time path keeps them.
fn raw_bytes(b: &Buffer, index: usize, msg: &proc_macro2::Ident) -> TokenStream {
    let f = format_ident!("__f");
    match b.size.as_ref().expect("checked: shape or bytes") {
        Size::Shape { dims, .. } => {
            let size = elem_size(b);
            let dims = dims.iter().map(|d| d.konst(&f, msg));
            quote!(#f.shape(&[#(#dims),*], &mut __sizes.__dims[#index], #size))
        }
        Size::Bytes(formula) => formula.konst(&f, msg),
    }
}

/// The const path's items, for an arena that asked for them.
pub fn const_items<'a>(cont: &'a Container) -> Vec<Item<'a>> {
    if !cont.const_path {
        return Vec::new();
    }
    let decls = input_decls(cont);
    let count = cont.buffers.len();
    let zeros = zero_sizes(cont);
    let mut items = vec![
        Item::const_function(
            quote! {
                /// [`Self::from_config`] as a `const fn`, for `const` items: the same formulas,
                /// gates, floors and tracking. A formula that overflows, divides by zero or goes
                /// below 0 (or an ungated buffer of 0 bytes) panics with a message naming the
                /// buffer, which in a `const` is a compile error. Called at run time it panics
                /// too: use [`Self::try_from_config`] there.
                #[allow(clippy::too_many_arguments, unused_variables)]
                pub const fn const_from_config(#(#decls),*) -> Self
            },
            move || {
                let derived = derived_lets(cont);
                let lets = size_lets(cont);
                let idents = cont.buffers.iter().map(|b| &b.ident);
                let arena = cont.ident.to_string();
                let total_msg =
                    format!("arena `{arena}`, const sizing: the total of the tracked buffers overflows usize");
                let (rank, count) = (cont.max_rank(), cont.buffers.len());
                quote! {
                    // The checked values' unwrapping and the checked arithmetic, named by every
                    // formula below.
                    use ::arena_runtime::__private::{Konst as __K, KonstArith as __A};
                    #(#derived)*
                    let mut __sizes = Self { #(#idents: 0,)* __dims: [[0; #rank]; #count], __raw: [0; #count] };
                    #(#lets)*
                    let _ = ::arena_runtime::__private::konst::total(
                        &__sizes.byte_sizes_const(),
                        &Self::TRACKED,
                        #total_msg,
                    );
                    __sizes
                }
            },
            zeros.clone(),
        ),
        Item::constant(
            quote! {
                /// Whether each buffer counts in `total_bytes`, in field order.
                const TRACKED: [bool; #count]
            },
            move || {
                let arena = &cont.ident;
                quote!(::arena_runtime::__private::konst::tracked(<#arena as ::arena_runtime::Arena>::BUFFERS))
            },
            quote!([false; #count]),
        ),
        Item::const_function(
            quote! {
                /// Each buffer's bytes, in field order.
                const fn byte_sizes_const(&self) -> [usize; #count]
            },
            move || {
                let idents = cont.buffers.iter().map(|b| &b.ident);
                quote!([#(self.#idents),*])
            },
            quote!([0; #count]),
        ),
        Item::const_function(
            quote! {
                /// Each buffer's name and bytes, in field order.
                pub const fn named_sizes(&self) -> [(&'static str, usize); #count]
            },
            move || {
                let arena = &cont.ident;
                quote!(::arena_runtime::__private::konst::named(
                    <#arena as ::arena_runtime::Arena>::BUFFERS,
                    self.byte_sizes_const(),
                ))
            },
            quote!([("", 0); #count]),
        ),
        Item::const_function(
            quote! {
                /// Each buffer's name, bytes and whether `total_bytes` counts it, in field
                /// order (`assert_fits!` names the largest counted ones when a budget is
                /// blown, and the untracked bytes apart).
                pub const fn sizes_with_tracking(&self) -> [(&'static str, usize, bool); #count]
            },
            move || {
                let arena = &cont.ident;
                quote!(::arena_runtime::__private::konst::with_tracking(
                    <#arena as ::arena_runtime::Arena>::BUFFERS,
                    self.byte_sizes_const(),
                ))
            },
            quote!([("", 0, false); #count]),
        ),
        Item::const_function(
            quote! {
                /// The reuse slab (`AllocOptions::reuse()`: buffers of disjoint phases reuse
                /// bytes, 256-byte alignment, no guard bands) as a `const fn`: its footprint,
                /// lower bound and the phase that sets the bound, planned by the run-time
                /// planner's own code, so `footprint` is what `allocate` takes
                /// (`assert_fits!(.., reuse_budget = ..)` reads it). Every buffer counts,
                /// tracked or not.
                pub const fn reuse_bytes(&self) -> ::arena_runtime::ReuseBytes
            },
            move || {
                let arena = &cont.ident;
                let name = arena.to_string();
                quote! {
                    ::arena_runtime::ReuseBytes::plan(
                        #name,
                        <#arena as ::arena_runtime::Arena>::BUFFERS,
                        <#arena as ::arena_runtime::Arena>::PHASES,
                        &self.byte_sizes_const(),
                    )
                }
            },
            quote!(::arena_runtime::ReuseBytes {
                footprint: 0,
                lower_bound: 0,
                fullest_phase: ::core::option::Option::None
            }),
        ),
    ];
    if let Some(item) = const_from_inputs(cont) {
        items.push(item);
    }
    items
}

/// `const_from_inputs`: the named form, when the arena has by-value inputs.
fn const_from_inputs<'a>(cont: &'a Container) -> Option<Item<'a>> {
    let by_value = cont.inputs.iter().any(|i| !i.by_ref);
    if !by_value {
        return None;
    }
    let name = &cont.inputs_struct;
    let refs = ref_input_decls(cont);
    Some(Item::const_function(
        quote! {
            /// [`Self::const_from_config`] with the by-value inputs by name.
            pub const fn const_from_inputs(#(#refs,)* inputs: &#name) -> Self
        },
        move || {
            let args = by_name_args(cont);
            quote!(Self::const_from_config(#(#args),*))
        },
        zero_sizes(cont),
    ))
}

/// `total_bytes` as a `const fn` (saturating, as the run-time one), for the const path.
pub fn const_total_bytes<'a>(cont: &'a Container, doc: TokenStream) -> Item<'a> {
    Item::const_function(
        quote! {
            #doc
            /// The sum of the tracked buffers: what a preflight reserves for the arena.
            pub const fn total_bytes(&self) -> usize
        },
        move || {
            let arena = &cont.ident;
            quote!(::arena_runtime::__private::konst::tracked_total(
                <#arena as ::arena_runtime::Arena>::BUFFERS,
                self.byte_sizes_const(),
            ))
        },
        quote!(0),
    )
}

/// The fallback's sizes: every buffer 0 bytes, a value const evaluation accepts, so a
/// budget over a broken declaration adds no error of its own.
fn zero_sizes(cont: &Container) -> TokenStream {
    let idents = cont.buffers.iter().map(|b| &b.ident);
    let (rank, count) = (cont.max_rank(), cont.buffers.len());
    quote!(Self { #(#idents: 0,)* __dims: [[0; #rank]; #count], __raw: [0; #count] })
}
