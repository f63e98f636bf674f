//! What more than one generator uses: the doc lines of a buffer field, the parameter lists,
//! the derived values and a buffer's raw bytes on the run-time path. Imports no generator.

use crate::model::{Buffer, Container, Size};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

/// Whether a field's doc line ([`formula_doc`]) says if the buffer counts in `total_bytes`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Tracking {
    /// Say it, `tracked` or `untracked (not in `total_bytes`)`: an arena's buffers.
    Mention,
    /// Leave it out: a layout's regions, which all count in the layout's `total_bytes`.
    Omit,
}

/// One `#[doc]` line describing the formula, dtype, gate, floor and (as `tracking` says)
/// tracking, joined by ` · `.
pub fn formula_doc(b: &Buffer, dtype: &str, tracking: Tracking) -> String {
    let mut parts = Vec::new();
    match &b.size {
        Some(Size::Shape { text, .. }) => parts.push(format!("Shape `{text}` of `{dtype}`")),
        Some(Size::Bytes(f)) => parts.push(format!("Bytes `{}` (as `{dtype}`)", f.text)),
        None => {}
    }
    if let Some(g) = &b.gate {
        parts.push(format!("gate `{}`", g.text));
    }
    if let Some(m) = &b.min_bytes {
        parts.push(format!("at least `{}` bytes", m.text));
    }
    if let Some(r) = &b.phase {
        parts.push(if r.first == r.last {
            format!("phase `{}`", r.first)
        } else {
            format!("phases `{}..={}`", r.first, r.last)
        });
    }
    if tracking == Tracking::Mention {
        parts.push(
            if b.tracked {
                "tracked"
            } else {
                "untracked (not in `total_bytes`)"
            }
            .to_string(),
        );
    }
    parts.join(" · ")
}

/// The buffer's element type as written (`bf16`), for docs.
pub fn dtype_text(b: &Buffer) -> String {
    b.elem
        .as_ref()
        .map(|t| crate::formula::text_of(quote!(#t)))
        .unwrap_or_default()
}

/// `#[doc]` attributes: the author's doc lines, a blank line and `extra`. One attribute per
/// line, so `cargo expand` shows them as `///` lines.
pub fn field_doc(docs: &[String], extra: &str) -> TokenStream {
    let blank = (!docs.is_empty()).then_some(String::new());
    let lines = docs
        .iter()
        .map(|d| format!(" {d}"))
        .chain(blank)
        .chain([format!(" {extra}")]);
    quote!(#(#[doc = #lines])*)
}

/// `name: Type` for every input, in order: the parameters of `from_config`, `layout` and
/// their const forms.
pub fn input_decls(cont: &Container) -> Vec<TokenStream> {
    cont.inputs
        .iter()
        .map(|i| {
            let (name, ty) = (&i.name, &i.ty);
            quote!(#name: #ty)
        })
        .collect()
}

/// `name: Type` for the inputs passed by reference, in order: the parameters that
/// `from_inputs` and its kin take before the struct of the by-value inputs.
pub fn ref_input_decls(cont: &Container) -> Vec<TokenStream> {
    cont.inputs
        .iter()
        .filter(|i| i.by_ref)
        .map(|i| {
            let (name, ty) = (&i.name, &i.ty);
            quote!(#name: #ty)
        })
        .collect()
}

/// The arguments `from_inputs` passes to `from_config`: the references as they are, the
/// by-value inputs read from the struct `inputs`.
pub fn by_name_args(cont: &Container) -> Vec<TokenStream> {
    cont.inputs
        .iter()
        .map(|i| {
            let n = &i.name;
            if i.by_ref {
                quote!(#n)
            } else {
                quote!(inputs.#n)
            }
        })
        .collect()
}

/// `let name: usize = checked formula?;` for each derived value. An error in it names the
/// derived value and the buffers whose formulas read it (directly or through another
/// derived value), not a buffer of that name.
pub fn derived_lets(cont: &Container) -> Vec<TokenStream> {
    let f = format_ident!("__f");
    cont.derived
        .iter()
        .map(|d| {
            let name = &d.name;
            let label = name.to_string();
            let value = d.formula.checked(&f);
            let used_by = buffers_reading(cont, &label);
            quote! {
                let #name: usize = ::arena_runtime::__private::derived(
                    ::arena_runtime::CheckedArith::new(#label),
                    &[#(#used_by),*],
                    |#f| ::core::result::Result::Ok(#value),
                )?;
            }
        })
        .collect()
}

/// The buffers whose formulas read the derived value `name`, directly or through the
/// derived values after it that read it.
fn buffers_reading(cont: &Container, name: &str) -> Vec<String> {
    let mut readers = vec![name.to_string()];
    for d in &cont.derived {
        let reads = d
            .formula
            .value_names()
            .iter()
            .any(|n| readers.contains(&n.to_string()));
        if reads {
            readers.push(d.name.to_string());
        }
    }
    cont.buffers
        .iter()
        .filter(|b| {
            b.size
                .iter()
                .flat_map(|s| s.formulas())
                .chain(&b.gate)
                .chain(&b.min_bytes)
                .flat_map(|f| f.value_names())
                .any(|n| readers.contains(&n.to_string()))
        })
        .map(|b| b.ident.to_string())
        .collect()
}

/// `<T as Element>::SIZE` for the buffer's element type, spanned at the type: every use is
/// the same projection at the same place, so a type that is not an `Element` is one error.
pub fn elem_size(b: &Buffer) -> TokenStream {
    let elem = b.elem.as_ref().expect("checked: a DevicePtr field");
    quote_spanned!(crate::span_of(elem)=> <#elem as ::arena_runtime::dtype::Element>::SIZE)
}

/// Tokens for a buffer's raw bytes (before gate and floor), using the `CheckedArith` `__f`.
pub fn raw_bytes(b: &Buffer) -> TokenStream {
    let f = format_ident!("__f");
    match b.size.as_ref().expect("checked: shape or bytes") {
        Size::Shape { dims, .. } => {
            let size = elem_size(b);
            let dims = dims.iter().map(|d| d.checked(&f));
            quote!(#f.shape(&[#(#dims),*], #size)?)
        }
        Size::Bytes(formula) => formula.checked(&f),
    }
}

/// Whether `tree` is, or holds, the identifier `name`.
pub fn mentions(tree: &proc_macro2::TokenTree, name: &proc_macro2::Ident) -> bool {
    match tree {
        proc_macro2::TokenTree::Ident(i) => i == name,
        proc_macro2::TokenTree::Group(g) => g.stream().into_iter().any(|t| mentions(&t, name)),
        _ => false,
    }
}
