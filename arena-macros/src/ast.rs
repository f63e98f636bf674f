//! The input model: what an author declared, parsed once, keeping the original tokens for
//! spans. `Kind` says which derive it is for (an arena or a region layout).

use crate::attr::{self, Entry};
use crate::ctxt::Ctxt;
use crate::formula::Formula;
use proc_macro2::{Delimiter, Ident, Span, TokenStream, TokenTree};
use quote::format_ident;
use syn::{Data, DeriveInput, Fields, GenericArgument, PathArguments, Type};

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Arena,
    Regions,
}

impl Kind {
    pub fn container_attr(self) -> &'static str {
        match self {
            Kind::Arena => "arena",
            Kind::Regions => "regions",
        }
    }
    pub fn field_attr(self) -> &'static str {
        match self {
            Kind::Arena => "buffer",
            Kind::Regions => "region",
        }
    }
    fn container_keys(self) -> &'static [&'static str] {
        match self {
            Kind::Arena => &[
                "sizes",
                "inputs",
                "derived",
                "docs",
                "inputs_struct",
                "const",
                "phases",
            ],
            Kind::Regions => &["layout", "inputs", "derived", "align", "const"],
        }
    }
    fn field_keys(self) -> &'static [&'static str] {
        match self {
            Kind::Arena => &["shape", "bytes", "gate", "min_bytes", "untracked", "phase"],
            Kind::Regions => &["shape", "bytes"],
        }
    }
}

pub struct Input {
    pub name: Ident,
    pub ty: Type,
}

pub struct Derived {
    pub name: Ident,
    pub formula: Formula,
}

/// The author's documentation for generated items (`#[arena(docs(sizes = "…", ...))]`),
/// placed before the generated doc lines.
#[derive(Default)]
pub struct Docs {
    /// On the sizes struct.
    pub sizes: Option<String>,
    /// On `from_config` and `try_from_config`.
    pub from_config: Option<String>,
    /// On `total_bytes`.
    pub total_bytes: Option<String>,
}

pub enum Size {
    /// Dimensions in elements.
    Shape { dims: Vec<Formula>, text: String },
    /// A byte count.
    Bytes(Formula),
}

impl Size {
    pub fn text(&self) -> &str {
        match self {
            Size::Shape { text, .. } => text,
            Size::Bytes(f) => &f.text,
        }
    }

    pub fn formulas(&self) -> Vec<&Formula> {
        match self {
            Size::Shape { dims, .. } => dims.iter().collect(),
            Size::Bytes(f) => vec![f],
        }
    }
}

/// One buffer (or region) field.
pub struct Buffer<'a> {
    pub original: &'a syn::Field,
    pub ident: Ident,
    /// The `T` of `DevicePtr<T>`; `None` when the field is not a `DevicePtr`.
    pub elem: Option<Type>,
    pub docs: Vec<String>,
    pub size: Option<Size>,
    pub gate: Option<Formula>,
    pub min_bytes: Option<Formula>,
    pub tracked: bool,
    /// `phase = name` or `phase = first..=last`; `None`: the whole step.
    pub phase: Option<PhaseRange>,
}

/// The phases a buffer is live in, as written (checked against the container's list in
/// `valid`).
pub struct PhaseRange {
    pub first: Ident,
    pub last: Ident,
}

pub struct Container<'a> {
    pub original: &'a DeriveInput,
    pub ident: Ident,
    /// The generated sizes struct (arena) or layout struct (regions).
    pub companion: Ident,
    pub inputs: Vec<Input>,
    pub derived: Vec<Derived>,
    pub docs: Docs,
    /// The generated struct of the by-value inputs (`<Arena>Inputs` unless named), and the
    /// extra derives asked for it (`inputs_struct(Name, derive(Serialize))`).
    pub inputs_struct: Ident,
    pub inputs_struct_derives: Vec<TokenStream>,
    pub align: usize,
    /// `#[arena(const)]` / `#[regions(const)]`: also generate the const sizing path.
    pub const_path: bool,
    /// `#[arena(phases(a, b, ...))]`: the step's phases in order.
    pub phases: Vec<Ident>,
    pub buffers: Vec<Buffer<'a>>,
}

impl<'a> Container<'a> {
    pub fn from_ast(cx: &Ctxt, input: &'a DeriveInput, kind: Kind) -> Option<Container<'a>> {
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
            original: input,
            ident: input.ident.clone(),
            companion: default_companion,
            inputs: Vec::new(),
            derived: Vec::new(),
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
                container.apply(entry, cx);
            }
        }
        container.buffers = fields
            .into_iter()
            .map(|f| Buffer::from_field(cx, f, kind))
            .collect();
        Some(container)
    }

    fn apply(&mut self, entry: Entry, cx: &Ctxt) {
        match entry.key.to_string().as_str() {
            "sizes" | "layout" => {
                let usage = format!("{} = Name", entry.key);
                if let Some(ts) = entry.assigned(&usage, cx) {
                    match syn::parse2::<Ident>(ts) {
                        Ok(id) => self.companion = id,
                        Err(e) => cx.syn_error(syn::Error::new(
                            e.span(),
                            format!("expected a struct name: `{usage}`"),
                        )),
                    }
                }
            }
            "inputs" => {
                if let Some(ts) = entry.listed("inputs(name: Type, ...)", cx) {
                    self.inputs = attr::parse_inputs(ts, cx)
                        .into_iter()
                        .map(|(name, ty)| Input { name, ty })
                        .collect();
                }
            }
            "derived" => {
                if let Some(ts) = entry.listed("derived(name = formula, ...)", cx) {
                    for (name, tokens) in attr::parse_named(ts, "derived value", cx) {
                        let what = format!("derived value `{name}`");
                        if let Some(formula) = Formula::parse(tokens, &what, cx) {
                            self.derived.push(Derived { name, formula });
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
                        Some(Ok(id)) => self.inputs_struct = id,
                        Some(Err(e)) => cx.syn_error(syn::Error::new(
                            e.span(),
                            format!("expected a struct name: `{usage}`"),
                        )),
                        None => cx.error_at(key_span, format!("expected `{usage}`")),
                    }
                    for part in parts {
                        let mut trees = part.into_iter();
                        match (trees.next(), trees.next(), trees.next()) {
                            (Some(TokenTree::Ident(d)), Some(TokenTree::Group(g)), None)
                                if d == "derive" && g.delimiter() == Delimiter::Parenthesis =>
                            {
                                self.inputs_struct_derives
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
                                cx.syn_error(syn::Error::new(
                                    e.span(),
                                    "expected a string literal",
                                ));
                                continue;
                            }
                        };
                        let slot = match name.to_string().as_str() {
                            "sizes" => &mut self.docs.sizes,
                            "from_config" => &mut self.docs.from_config,
                            "total_bytes" => &mut self.docs.total_bytes,
                            other => {
                                let entries = ["sizes", "from_config", "total_bytes"];
                                let mut hint = crate::suggest::hint(other, entries);
                                if hint.is_empty() {
                                    hint = "; the entries are `sizes`, `from_config` and `total_bytes`".into();
                                }
                                cx.error_at(
                                    name.span(),
                                    format!("unknown doc entry `{other}`{hint}"),
                                );
                                continue;
                            }
                        };
                        if slot.replace(text).is_some() {
                            cx.error_at(name.span(), format!("`{name}` is documented twice"));
                        }
                    }
                }
            }
            "const" => self.const_path = entry.flag(cx),
            "phases" => {
                if let Some(ts) = entry.listed("phases(first, second, ...)", cx) {
                    for part in attr::split_commas(ts) {
                        match syn::parse2::<Ident>(part.clone()) {
                            Ok(id) => self.phases.push(id),
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
                        Ok((v, _)) if v.is_power_of_two() => self.align = v,
                        Ok((_, l)) => cx.error_spanned_by(&l, "`align` must be a power of two"),
                        Err(e) => cx.syn_error(e),
                    }
                }
            }
            _ => unreachable!("keys are checked by attr::entries"),
        }
    }

    pub fn input_names(&self) -> impl Iterator<Item = &Ident> {
        self.inputs.iter().map(|i| &i.name)
    }
}

impl<'a> Buffer<'a> {
    fn from_field(cx: &Ctxt, field: &'a syn::Field, kind: Kind) -> Buffer<'a> {
        let ident = field
            .ident
            .clone()
            .unwrap_or_else(|| Ident::new("_", Span::call_site()));
        let elem = device_ptr_elem(&field.ty);
        if elem.is_none() {
            cx.error_spanned_by(&field.ty, format!("`{ident}` must be a `DevicePtr<T>`: the element type `T` is the buffer's dtype"));
        }
        let mut buffer = Buffer {
            original: field,
            ident,
            elem,
            docs: attr::doc_lines(&field.attrs),
            size: None,
            gate: None,
            min_bytes: None,
            tracked: true,
            phase: None,
        };
        let name = kind.field_attr();
        let attrs: Vec<&syn::Attribute> = field
            .attrs
            .iter()
            .filter(|a| a.path().is_ident(name))
            .collect();
        if attrs.is_empty() {
            cx.error_spanned_by(buffer.original,
                format!("`{}` has no `#[{name}(...)]`: every field is a buffer with a `shape = [...]` or `bytes = ...`", buffer.ident),
            );
        }
        let has_attr = !attrs.is_empty();
        let errors_before = cx.error_count();
        let mut shape_or_bytes: Vec<Ident> = Vec::new();
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
                                let text = crate::formula::text_of(ts);
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
        buffer
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
