//! The input model: what an author declared, parsed once by `arena-macros` (`ast.rs`) from
//! the struct and its attributes. Tokens keep their spans, so every later error and every
//! generated item that repeats an author's tokens points at the author's code. `Kind` says
//! which derive it is for (an arena or a region layout).

use crate::formula::Formula;
use proc_macro2::{Ident, TokenStream};

/// Which derive a model is for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Arena,
    Regions,
}

impl Kind {
    /// The struct's attribute: `#[arena(...)]` or `#[regions(...)]`.
    pub fn container_attr(self) -> &'static str {
        match self {
            Kind::Arena => "arena",
            Kind::Regions => "regions",
        }
    }

    /// A field's attribute: `#[buffer(...)]` or `#[region(...)]`.
    pub fn field_attr(self) -> &'static str {
        match self {
            Kind::Arena => "buffer",
            Kind::Regions => "region",
        }
    }

    /// The keys the struct's attribute takes.
    pub fn container_keys(self) -> &'static [&'static str] {
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

    /// The keys a field's attribute takes.
    pub fn field_keys(self) -> &'static [&'static str] {
        match self {
            Kind::Arena => &[
                "shape",
                "bytes",
                "per_layer",
                "gate",
                "min_bytes",
                "untracked",
                "phase",
                "tensor",
                "split",
            ],
            Kind::Regions => &["shape", "bytes"],
        }
    }
}

/// One parameter of `from_config`, `name: Type`.
pub struct Input {
    pub name: Ident,
    pub ty: TokenStream,
    /// The type is a reference (`&Config`): passed through, not stored in the inputs struct.
    pub by_ref: bool,
    /// The type is a plain number or flag (`usize`, `bool`, ...), so the inputs struct can
    /// derive `Copy`, `Eq` and `Hash`.
    pub plain_scalar: bool,
}

/// A derived value, `derived(name = formula)`: computed once, in order, before the buffers.
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

/// How a buffer's size is written.
pub enum Size {
    /// Dimensions in elements.
    Shape { dims: Vec<Formula>, text: String },
    /// A byte count.
    Bytes(Formula),
}

impl Size {
    /// The formula as written, for docs and reports.
    pub fn text(&self) -> &str {
        match self {
            Size::Shape { text, .. } => text,
            Size::Bytes(f) => &f.text,
        }
    }

    /// The number of dimensions: 0 for a byte formula.
    pub fn rank(&self) -> usize {
        match self {
            Size::Shape { dims, .. } => dims.len(),
            Size::Bytes(_) => 0,
        }
    }

    /// Every formula of the size (each dimension, or the byte count).
    pub fn formulas(&self) -> Vec<&Formula> {
        match self {
            Size::Shape { dims, .. } => dims.iter().collect(),
            Size::Bytes(f) => vec![f],
        }
    }
}

/// One buffer (or region) field.
pub struct Buffer {
    pub ident: Ident,
    /// The `T` of `DevicePtr<T>`; `None` when the field is not a `DevicePtr`.
    pub elem: Option<TokenStream>,
    pub docs: Vec<String>,
    pub size: Option<Size>,
    pub gate: Option<Formula>,
    pub min_bytes: Option<Formula>,
    pub tracked: bool,
    /// `phase = name` or `phase = first..=last`; `None`: the whole step.
    pub phase: Option<PhaseRange>,
    /// `per_layer = count` was given (its count is the shape's first dimension).
    pub per_layer: bool,
    /// `tensor = "name"` or `tensor = ["row 0", "row 1", ...]`: the checkpoint tensors the
    /// buffer holds, checked for their placeholders by `ast`.
    pub tensors: Vec<String>,
    /// `split = name`: how a parallel rank's share of those tensors is cut, for the loader
    /// to read (an identifier, recorded as written).
    pub split: Option<Ident>,
}

/// The phases a buffer is live in, as written (checked against the container's list in
/// `valid`).
pub struct PhaseRange {
    pub first: Ident,
    pub last: Ident,
}

/// The whole declaration: the struct, its attribute's keys and its fields.
pub struct Container {
    pub ident: Ident,
    /// The struct's visibility, which the generated structs take.
    pub vis: TokenStream,
    /// The generated sizes struct (arena) or layout struct (regions).
    pub companion: Ident,
    pub inputs: Vec<Input>,
    pub derived: Vec<Derived>,
    /// Derived values whose formula did not parse (already reported): still declared, so a
    /// use of one is not a second error.
    pub unparsed_derived: Vec<Ident>,
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
    pub buffers: Vec<Buffer>,
}

impl Container {
    /// The largest rank of a buffer's shape (at least 1): the width of the sizes struct's
    /// per-buffer shape rows.
    pub fn max_rank(&self) -> usize {
        self.buffers
            .iter()
            .filter_map(|b| b.size.as_ref().map(Size::rank))
            .max()
            .unwrap_or(0)
            .max(1)
    }

    /// Each phase once, by its generated variant, with its position in `phases(...)`: the
    /// phase enum and the phase view sets have one item per variant. A phase listed twice (or
    /// two that give one variant) is an error `valid` reports; the fallback must still compile.
    pub fn distinct_phases(&self) -> Vec<(usize, &Ident)> {
        let mut out: Vec<(usize, &Ident)> = Vec::new();
        for (i, p) in self.phases.iter().enumerate() {
            if !out
                .iter()
                .any(|(_, q)| phase_variant(q) == phase_variant(p))
            {
                out.push((i, p));
            }
        }
        out
    }

    /// Whether `b` is live in phase `p` (its position in `phases(...)`); a buffer without
    /// `phase` is live in every phase, one whose range names an unknown phase in none.
    pub fn live_in(&self, b: &Buffer, p: usize) -> bool {
        match &b.phase {
            None => true,
            Some(r) => {
                let at = |id: &Ident| self.phases.iter().position(|q| q == id);
                matches!((at(&r.first), at(&r.last)), (Some(a), Some(z)) if a <= p && p <= z)
            }
        }
    }

    /// The names of `from_config`'s parameters, in order.
    pub fn input_names(&self) -> impl Iterator<Item = &Ident> {
        self.inputs.iter().map(|i| &i.name)
    }
}

/// `lm_head` → `LmHead`: a phase's variant in the generated `<Arena>Phase` enum. A name with
/// nothing but underscores keeps its own spelling; one that would be the keyword `Self` gets
/// `Phase` appended (`valid` reports two phases that give one variant).
pub fn phase_variant(phase: &Ident) -> Ident {
    let text: String = phase
        .to_string()
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
                None => String::new(),
            }
        })
        .collect();
    let text = match text.as_str() {
        "" => phase.to_string(),
        "Self" => "SelfPhase".to_string(),
        _ => text,
    };
    Ident::new(&text, phase.span())
}

#[cfg(test)]
mod tests {
    use super::phase_variant;
    use proc_macro2::{Ident, Span};

    fn variant(name: &str) -> String {
        phase_variant(&Ident::new(name, Span::call_site())).to_string()
    }

    #[test]
    fn a_phase_becomes_its_camel_case_variant() {
        assert_eq!(variant("lm_head"), "LmHead");
        assert_eq!(variant("attn__out_"), "AttnOut");
        // Nothing but underscores: its own spelling (an empty name is no identifier).
        assert_eq!(variant("__"), "__");
        // `self_` would be the keyword `Self`.
        assert_eq!(variant("self_"), "SelfPhase");
    }
}
