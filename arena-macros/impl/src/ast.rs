//! Reads the derive's input into the model (`arena_macros_core::model`): the struct, its
//! fields and their attributes, keeping the original tokens for spans. With `attr.rs` and the
//! entry points in `lib.rs`, the part of the derive that needs `syn`; everything after it
//! (checks, code generation) is in `arena-macros-core`.

use crate::attr::{self, Entry};
use arena_macros_core::ctxt::Ctxt;
use arena_macros_core::formula::Formula;
use arena_macros_core::model::{Buffer, Container, Derived, Docs, Input, Kind, PhaseRange, Size};
use proc_macro2::{Delimiter, Ident, Span, TokenStream, TokenTree};
use quote::{format_ident, ToTokens};
use syn::{Data, DeriveInput, Fields, GenericArgument, PathArguments, Type};

/// The model of a derive's input, or `None` (with the error in `cx`) when it is not a struct
/// with named fields.
pub fn container(cx: &Ctxt, input: &DeriveInput, kind: Kind) -> Option<Container> {
    let fields = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => named.named.iter().collect::<Vec<_>>(),
            _ => {
                cx.error_spanned_by(
                    &input.ident,
                    "an arena is a struct with named fields, one per buffer",
                );
                return None;
            }
        },
        _ => {
            cx.error_spanned_by(
                &input.ident,
                "an arena is a struct with named fields, one per buffer",
            );
            return None;
        }
    };
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(&input.generics, "an arena struct cannot be generic");
    }

    let default_companion = match kind {
        Kind::Arena => format_ident!("{}Sizes", input.ident),
        Kind::Regions => format_ident!("{}Layout", input.ident),
    };
    let mut container = Container {
        ident: input.ident.clone(),
        vis: input.vis.to_token_stream(),
        companion: default_companion,
        inputs: Vec::new(),
        derived: Vec::new(),
        unparsed_derived: Vec::new(),
        docs: Docs::default(),
        inputs_struct: format_ident!("{}Inputs", input.ident),
        inputs_struct_derives: Vec::new(),
        align: 256,
        const_path: false,
        phases: Vec::new(),
        buffers: Vec::new(),
    };

    let name = kind.container_attr();
    for a in input.attrs.iter().filter(|a| a.path().is_ident(name)) {
        for entry in attr::entries(a, name, kind.container_keys(), cx) {
            apply(&mut container, entry, cx);
        }
    }
    container.buffers = fields.into_iter().map(|f| buffer(cx, f, kind)).collect();
    Some(container)
}

/// One container attribute entry, applied to the model.
fn apply(cont: &mut Container, entry: Entry, cx: &Ctxt) {
    match entry.key.to_string().as_str() {
        "sizes" | "layout" => {
            let usage = format!("{} = Name", entry.key);
            if let Some(ts) = entry.assigned(&usage, cx) {
                match syn::parse2::<Ident>(ts) {
                    Ok(id) => cont.companion = id,
                    Err(e) => cx.error_at(e.span(), format!("expected a struct name: `{usage}`")),
                }
            }
        }
        "inputs" => {
            if let Some(ts) = entry.listed("inputs(name: Type, ...)", cx) {
                cont.inputs = attr::parse_inputs(ts, cx)
                    .into_iter()
                    .map(|(name, ty)| Input {
                        name,
                        by_ref: matches!(ty, Type::Reference(_)),
                        plain_scalar: is_plain_scalar(&ty),
                        ty: ty.into_token_stream(),
                    })
                    .collect();
            }
        }
        "derived" => {
            if let Some(ts) = entry.listed("derived(name = formula, ...)", cx) {
                for (name, tokens) in attr::parse_named(ts, "derived value", cx) {
                    let what = format!("derived value `{name}`");
                    match Formula::parse(tokens, &what, cx) {
                        Some(formula) => cont.derived.push(Derived { name, formula }),
                        None => cont.unparsed_derived.push(name),
                    }
                }
            }
        }
        "inputs_struct" => {
            let usage = "inputs_struct(Name) or inputs_struct(Name, derive(Trait, ...))";
            let key_span = entry.key.span();
            if let Some(ts) = entry.listed(usage, cx) {
                let parts = attr::split_commas(ts);
                let mut parts = parts.into_iter();
                match parts.next().map(syn::parse2::<Ident>) {
                    Some(Ok(id)) => cont.inputs_struct = id,
                    Some(Err(e)) => {
                        cx.error_at(e.span(), format!("expected a struct name: `{usage}`"))
                    }
                    None => cx.error_at(key_span, format!("expected `{usage}`")),
                }
                for part in parts {
                    let mut trees = part.into_iter();
                    match (trees.next(), trees.next(), trees.next()) {
                        (Some(TokenTree::Ident(d)), Some(TokenTree::Group(g)), None)
                            if d == "derive" && g.delimiter() == Delimiter::Parenthesis =>
                        {
                            cont.inputs_struct_derives
                                .extend(attr::split_commas(g.stream()));
                        }
                        (first, _, _) => cx.error_at(
                            first.map_or(key_span, |t| t.span()),
                            format!("expected `{usage}`"),
                        ),
                    }
                }
            }
        }
        "docs" => {
            let usage = "docs(sizes = \"...\", from_config = \"...\", total_bytes = \"...\")";
            if let Some(ts) = entry.listed(usage, cx) {
                for (name, tokens) in attr::parse_named(ts, "doc entry", cx) {
                    let text = match syn::parse2::<syn::LitStr>(tokens) {
                        Ok(lit) => lit.value(),
                        Err(e) => {
                            cx.error_at(e.span(), "expected a string literal");
                            continue;
                        }
                    };
                    let slot = match name.to_string().as_str() {
                        "sizes" => &mut cont.docs.sizes,
                        "from_config" => &mut cont.docs.from_config,
                        "total_bytes" => &mut cont.docs.total_bytes,
                        other => {
                            let entries = ["sizes", "from_config", "total_bytes"];
                            let mut hint = arena_macros_core::suggest::hint(other, entries);
                            if hint.is_empty() {
                                hint = "; the entries are `sizes`, `from_config` and `total_bytes`"
                                    .into();
                            }
                            cx.error_at(name.span(), format!("unknown doc entry `{other}`{hint}"));
                            continue;
                        }
                    };
                    if slot.replace(text).is_some() {
                        cx.error_at(name.span(), format!("`{name}` is documented twice"));
                    }
                }
            }
        }
        "const" => cont.const_path = entry.flag(cx),
        "phases" => {
            if let Some(ts) = entry.listed("phases(first, second, ...)", cx) {
                for part in attr::split_commas(ts) {
                    match syn::parse2::<Ident>(part.clone()) {
                        Ok(id) => cont.phases.push(id),
                        Err(_) => cx.error_spanned_by(
                            part,
                            "a phase is a name: `phases(attention, ffn, lm_head)`",
                        ),
                    }
                }
            }
        }
        "align" => {
            if let Some(ts) = entry.assigned("align = 256", cx) {
                match syn::parse2::<syn::LitInt>(ts)
                    .and_then(|l| l.base10_parse::<usize>().map(|v| (v, l)))
                {
                    Ok((v, _)) if v.is_power_of_two() => cont.align = v,
                    Ok((_, l)) => cx.error_spanned_by(&l, "`align` must be a power of two"),
                    // A literal's parse error has one message at one span; an error carrying
                    // a span range (a type's, say) would keep only its start here.
                    Err(e) => {
                        for err in e {
                            cx.error_at(err.span(), err);
                        }
                    }
                }
            }
        }
        _ => unreachable!("keys are checked by attr::entries"),
    }
}

/// The model of one buffer (or region) field.
fn buffer(cx: &Ctxt, field: &syn::Field, kind: Kind) -> Buffer {
    let ident = field
        .ident
        .clone()
        .unwrap_or_else(|| Ident::new("_", Span::call_site()));
    let elem = device_ptr_elem(&field.ty).map(|t| t.into_token_stream());
    if elem.is_none() {
        cx.error_spanned_by(
            &field.ty,
            format!(
                "`{ident}` must be a `DevicePtr<T>`: the element type `T` is the buffer's dtype"
            ),
        );
    }
    let mut buffer = Buffer {
        ident,
        elem,
        docs: attr::doc_lines(&field.attrs),
        size: None,
        gate: None,
        min_bytes: None,
        tracked: true,
        phase: None,
        per_layer: false,
        tensors: Vec::new(),
        split: None,
    };
    let name = kind.field_attr();
    let attrs: Vec<&syn::Attribute> = field
        .attrs
        .iter()
        .filter(|a| a.path().is_ident(name))
        .collect();
    if attrs.is_empty() {
        cx.error_spanned_by(field,
                format!("`{}` has no `#[{name}(...)]`: every field is a buffer with a `shape = [...]` or `bytes = ...`", buffer.ident),
            );
    }
    let has_attr = !attrs.is_empty();
    let errors_before = cx.error_count();
    let mut shape_or_bytes: Vec<Ident> = Vec::new();
    let mut per_layer: Option<(Ident, Formula)> = None;
    for a in attrs {
        for entry in attr::entries(a, name, kind.field_keys(), cx) {
            let key = entry.key.clone();
            let what = format!("`{key}` of `{}`", buffer.ident);
            match key.to_string().as_str() {
                "shape" => {
                    shape_or_bytes.push(key);
                    let parsed = entry
                        .assigned("shape = [d0, d1, ...]", cx)
                        .and_then(|ts| attr::parse_shape(ts.clone(), cx).map(|s| (s, ts)));
                    if let Some(((dims, _), ts)) = parsed {
                        let dims: Vec<Option<Formula>> = dims
                            .into_iter()
                            .map(|d| Formula::parse(d, &what, cx))
                            .collect();
                        if dims.iter().all(Option::is_some) {
                            let text = arena_macros_core::formula::text_of(ts);
                            buffer.size = Some(Size::Shape {
                                dims: dims.into_iter().flatten().collect(),
                                text,
                            });
                        }
                    }
                }
                "bytes" => {
                    shape_or_bytes.push(key);
                    if let Some(f) = entry
                        .assigned("bytes = formula", cx)
                        .and_then(|ts| Formula::parse(ts, &what, cx))
                    {
                        buffer.size = Some(Size::Bytes(f));
                    }
                }
                "per_layer" => {
                    let key = entry.key.clone();
                    per_layer = entry
                        .assigned("per_layer = count", cx)
                        .and_then(|ts| Formula::parse(ts, &what, cx))
                        .map(|count| (key, count));
                }
                "gate" => {
                    buffer.gate = entry
                        .assigned("gate = condition", cx)
                        .and_then(|ts| Formula::parse(ts, &what, cx))
                }
                "min_bytes" => {
                    buffer.min_bytes = entry
                        .assigned("min_bytes = formula", cx)
                        .and_then(|ts| Formula::parse(ts, &what, cx))
                }
                "untracked" => buffer.tracked = !entry.flag(cx),
                "tensor" => {
                    let usage = "tensor = \"name\" or tensor = [\"row 0\", \"row 1\", ...]";
                    if let Some(ts) = entry.assigned(usage, cx) {
                        buffer.tensors = tensor_names(ts, &buffer.ident, usage, cx);
                    }
                }
                "split" => {
                    let usage = "split = name";
                    buffer.split = entry.assigned(usage, cx).and_then(|ts| {
                        match ts.clone().into_iter().collect::<Vec<_>>().as_slice() {
                            [TokenTree::Ident(id)] => Some(id.clone()),
                            _ => {
                                cx.error_spanned_by(
                                    ts,
                                    format!(
                                        "`split` of `{}` is one identifier: `{usage}`",
                                        buffer.ident
                                    ),
                                );
                                None
                            }
                        }
                    });
                }
                "phase" => {
                    buffer.phase = entry
                        .assigned("phase = name or phase = first..=last", cx)
                        .and_then(|ts| parse_phase(ts, &buffer.ident, cx))
                }
                _ => unreachable!("keys are checked by attr::entries"),
            }
        }
    }
    match shape_or_bytes.as_slice() {
        // A typo in a key was reported already; one typo is one error.
        [] if has_attr && cx.error_count() == errors_before => cx.error_spanned_by(
            &buffer.ident,
            format!(
                "`{}` needs exactly one of `shape = [...]` or `bytes = ...`",
                buffer.ident
            ),
        ),
        [_, second, ..] => cx.error_at(
            second.span(),
            format!(
                "`{}` has both `shape` and `bytes`; give exactly one of them",
                buffer.ident
            ),
        ),
        _ => {}
    }
    // `per_layer = count`: one `shape` a layer, `count` of them back to back, so the buffer
    // is `[count, ...shape]` and `view.layer(i)` is layer i's.
    buffer.per_layer = per_layer.is_some();
    check_placeholders(&buffer, cx);
    if let (Some(split), true) = (&buffer.split, buffer.tensors.is_empty()) {
        cx.error_spanned_by(split, format!("`split` of `{}` says how its checkpoint tensors are cut: name them with `tensor = ...`", buffer.ident));
    }
    if let Some((key, count)) = per_layer {
        match &mut buffer.size {
            Some(Size::Shape { dims, text }) => {
                *text = format!("{} layers × {text}", count.text);
                dims.insert(0, count);
            }
            Some(Size::Bytes(_)) => cx.error_at(
                key.span(),
                format!(
                    "`per_layer` of `{}` repeats a `shape`, not `bytes`: write the layer's \
                     `shape = [...]`",
                    buffer.ident
                ),
            ),
            None => {}
        }
    }
    buffer
}

/// `"name"` or `["row 0", "row 1", ...]`: string literals, at least one.
fn tensor_names(tokens: TokenStream, buffer: &Ident, usage: &str, cx: &Ctxt) -> Vec<String> {
    let literal = |tt: &TokenTree| match syn::parse2::<syn::LitStr>(tt.clone().into()) {
        Ok(lit) if !lit.value().trim().is_empty() => Some(lit.value()),
        _ => None,
    };
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let names = match trees.as_slice() {
        [one] => match one {
            TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Bracket => {
                let rows = attr::split_commas(g.stream());
                let parsed: Vec<Option<String>> = rows
                    .into_iter()
                    .map(|row| match row.into_iter().collect::<Vec<_>>().as_slice() {
                        [tt] => literal(tt),
                        _ => None,
                    })
                    .collect();
                if !parsed.is_empty() && parsed.iter().all(Option::is_some) {
                    Some(parsed.into_iter().flatten().collect())
                } else {
                    None
                }
            }
            other => literal(other).map(|n| vec![n]),
        },
        _ => None,
    };
    names.unwrap_or_else(|| {
        cx.error_spanned_by(
            tokens,
            format!("`tensor` of `{buffer}` is one or more non-empty string literals: `{usage}`"),
        );
        Vec::new()
    })
}

/// A tensor name's `{placeholder}`s: each an identifier, `{expert}` an expert's index, any
/// other a layer group's — at most one, and only in a per-layer buffer (whose names without
/// one fit a buffer of at most one layer, as the embedding on its stage).
fn check_placeholders(buffer: &Buffer, cx: &Ctxt) {
    for name in &buffer.tensors {
        let mut groups = Vec::new();
        let mut rest = name.as_str();
        let mut well_formed = true;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else {
                well_formed = false;
                break;
            };
            let inner = &rest[open + 1..open + close];
            let ident = !inner.is_empty()
                && inner.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
                && !inner.starts_with(|c: char| c.is_ascii_digit());
            if !ident {
                well_formed = false;
                break;
            }
            if inner != "expert" {
                groups.push(inner);
            }
            rest = &rest[open + close + 1..];
        }
        if !well_formed || rest.contains('}') {
            cx.error_spanned_by(
                &buffer.ident,
                format!("`tensor` of `{}`: `{name}` has a `{{` or `}}` that does not enclose a placeholder name (`{{layer}}`, `{{expert}}`)", buffer.ident),
            );
        } else if groups.len() > 1 {
            cx.error_spanned_by(
                &buffer.ident,
                format!("`tensor` of `{}`: `{name}` names {} layer groups; a tensor names at most one (`{{layer}}`, or a group's name), the layer its slot holds", buffer.ident, groups.len()),
            );
        } else if !buffer.per_layer && !groups.is_empty() {
            cx.error_spanned_by(
                &buffer.ident,
                format!("`tensor` of `{}`: `{name}` names a layer (`{{{}}}`), but the buffer is not `per_layer`", buffer.ident, groups[0]),
            );
        }
    }
}

/// `name` or `first..=last`.
fn parse_phase(tokens: TokenStream, buffer: &Ident, cx: &Ctxt) -> Option<PhaseRange> {
    let usage = format!(
        "`phase` of `{buffer}` is a phase name or an inclusive range of them: `phase = ffn` or `phase = attention..=ffn`"
    );
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let ident = |t: &TokenTree| match t {
        TokenTree::Ident(id) => Some(id.clone()),
        _ => None,
    };
    let punct = |t: &TokenTree, c: char| matches!(t, TokenTree::Punct(p) if p.as_char() == c);
    match trees.as_slice() {
        [one] => ident(one).map(|id| PhaseRange {
            first: id.clone(),
            last: id,
        }),
        [a, d1, d2, eq, b] if punct(d1, '.') && punct(d2, '.') && punct(eq, '=') => {
            match (ident(a), ident(b)) {
                (Some(first), Some(last)) => Some(PhaseRange { first, last }),
                _ => None,
            }
        }
        [_, d1, d2, _] if punct(d1, '.') && punct(d2, '.') => {
            cx.error_spanned_by(
                tokens,
                format!("`phase` of `{buffer}`: write the range inclusive, `first..=last`: both ends are live"),
            );
            return None;
        }
        _ => None,
    }
    .or_else(|| {
        cx.error_spanned_by(tokens, usage);
        None
    })
}

/// The `T` of a `DevicePtr<T>` type (any path ending in `DevicePtr`).
fn device_ptr_elem(ty: &Type) -> Option<Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "DevicePtr" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.iter().collect::<Vec<_>>().as_slice() {
        [GenericArgument::Type(t)] => Some(t.clone()),
        _ => None,
    }
}

/// True for a type whose values are plain numbers or flags (so the inputs struct can be
/// `Copy`, `Eq` and `Hash`).
fn is_plain_scalar(ty: &Type) -> bool {
    const SCALARS: [&str; 13] = [
        "usize", "u8", "u16", "u32", "u64", "u128", "isize", "i8", "i16", "i32", "i64", "i128",
        "bool",
    ];
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.get_ident().is_some_and(|i| SCALARS.iter().any(|s| i == s)))
}
