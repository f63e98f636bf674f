//! The [`Arena`] trait `#[derive(Arena)]` implements, and what the derive declares about an
//! arena: one `BufferDecl` per buffer, in field order.

/// A buffer as declared: everything but its size, which depends on the inputs. The derive
/// writes one per buffer, field by field, so `cargo expand` reads as a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferDecl {
    /// The field name.
    pub name: &'static str,
    /// The element type's name (`bf16`, `f32`, ...).
    pub dtype: &'static str,
    /// Bytes per element.
    pub elem_size: usize,
    /// The shape or byte formula as written (`[max_batch_tokens, config.hidden_size]`).
    pub formula: &'static str,
    /// True when the formula is a shape (elements), false for a byte formula.
    pub is_shape: bool,
    /// The shape's number of dimensions (0 for a byte formula): how many numbers
    /// [`Arena::shape`] gives for the buffer.
    pub rank: usize,
    /// The gate as written, if any.
    pub gate: Option<&'static str>,
    /// The floor in bytes as written, if any.
    pub min_bytes: Option<&'static str>,
    /// Counted in `total_bytes`.
    pub tracked: bool,
    /// The first line of the field's doc comment.
    pub doc: &'static str,
    /// The phases of the step it is live in (`#[buffer(phase = ...)]`; the whole step by
    /// default). Only an arena allocated with `AllocOptions::reuse()` acts on it.
    pub live: crate::Live,
    /// The checkpoint tensors it holds, as written (`#[buffer(tensor = ...)]`): one name, or
    /// one a row of its first dimension after the layers (a layer's norms, an expert
    /// block's gate and up), with `{placeholder}`s a loader fills in (`{expert}`, and a
    /// layer group's name). Empty where none is named.
    pub tensors: &'static [&'static str],
    /// `#[buffer(per_layer = ...)]`: the first dimension counts layers, one slot a layer.
    pub per_layer: bool,
    /// `#[buffer(split = name)]`: how a parallel rank's share of those tensors is cut, as
    /// written (a loader's word: arena-spec's weights use `out`, `in`, `kv_out`, `vocab`).
    pub split: Option<&'static str>,
}

impl BufferDecl {
    /// A gated buffer may be 0 bytes and NULL.
    pub const fn gated(&self) -> bool {
        self.gate.is_some()
    }

    /// A buffer named `name` of elements `dtype` (an `Element`'s `DTYPE`: `bf16::DTYPE`)
    /// whose size is `formula`: a shape of `rank` dimensions (0: a byte formula), tracked,
    /// live in the whole step, without gate or floor. The derive builds each declaration from
    /// it and states only what differs, through the methods below.
    pub const fn new(
        name: &'static str,
        dtype: crate::dtype::Dtype,
        formula: &'static str,
        rank: usize,
        doc: &'static str,
    ) -> Self {
        BufferDecl {
            name,
            dtype: dtype.name,
            elem_size: dtype.size,
            formula,
            is_shape: rank > 0,
            rank,
            gate: None,
            min_bytes: None,
            tracked: true,
            doc,
            live: crate::Live::WholeStep,
            tensors: &[],
            per_layer: false,
            split: None,
        }
    }

    /// The same, its tensors cut for a parallel rank as `split` says (`split = ...`).
    pub const fn split_by(mut self, split: &'static str) -> Self {
        self.split = Some(split);
        self
    }

    /// The same, its first dimension a layer count (`per_layer`).
    pub const fn per_layer(mut self) -> Self {
        self.per_layer = true;
        self
    }

    /// The same, holding the checkpoint tensors `names` (`tensor = ...`).
    pub const fn holds(mut self, names: &'static [&'static str]) -> Self {
        self.tensors = names;
        self
    }

    /// The same, gated by `gate` (as written).
    pub const fn gated_by(mut self, gate: &'static str) -> Self {
        self.gate = Some(gate);
        self
    }

    /// The same, floored at `min_bytes` (as written).
    pub const fn floored_at(mut self, min_bytes: &'static str) -> Self {
        self.min_bytes = Some(min_bytes);
        self
    }

    /// The same, left out of `total_bytes`.
    pub const fn untracked(mut self) -> Self {
        self.tracked = false;
        self
    }

    /// The same, live in `live` only.
    pub const fn live_in(mut self, live: crate::Live) -> Self {
        self.live = live;
        self
    }
}

#[doc(hidden)]
/// Hands out the buffers' pointers in field order: the derive's `from_addresses` calls
/// [`Pointers::next_ptr`] once per field, and the field's type gives the element type.
pub struct Pointers<'a> {
    addrs: &'a [u64],
    bytes: &'a [usize],
    next: usize,
}

impl<'a> Pointers<'a> {
    /// One address and one byte size per buffer, in field order.
    pub fn new(addrs: &'a [u64], bytes: &'a [usize]) -> Self {
        Self {
            addrs,
            bytes,
            next: 0,
        }
    }

    /// The next buffer's pointer: its address, and its bytes as whole elements of `T`
    /// (`Element::SIZE` is `size_of::<T>()`). NULL once past the last buffer.
    pub fn next_ptr<T>(&mut self) -> crate::DevicePtr<T> {
        let i = self.next;
        self.next += 1;
        let addr = self.addrs.get(i).copied().unwrap_or(0);
        let bytes = self.bytes.get(i).copied().unwrap_or(0);
        let len = bytes.checked_div(core::mem::size_of::<T>()).unwrap_or(0);
        crate::DevicePtr::from_raw_parts(addr, len)
    }
}

/// A buffer with its size, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferInfo {
    pub decl: &'static BufferDecl,
    pub bytes: usize,
}

impl BufferInfo {
    /// Elements, for a shape buffer; bytes for a byte buffer of `u8`.
    pub fn elements(&self) -> usize {
        self.bytes / self.decl.elem_size
    }
}

/// Implemented by `#[derive(Arena)]` (the trait of the derive's name, as serde's derives
/// implement theirs): how to go between an arena struct, its sizes struct and the
/// runtime's generic allocation code, [`Allocated`](crate::Allocated).
pub trait Arena: Sized {
    /// The generated sizes struct.
    type Sizes: Copy + core::fmt::Debug;
    /// The arena's name, for error messages.
    const NAME: &'static str;
    /// Every buffer, in field order.
    const BUFFERS: &'static [BufferDecl];
    /// The step's phases in order (`#[arena(phases(...))]`), empty when none are declared:
    /// the names of `Self::Phase::ALL`, as a `const`.
    const PHASES: &'static [&'static str] = &[];
    /// The generated enum of the arena's phases (`<Arena>Phase`), or [`crate::NoPhases`] for
    /// an arena that declares none.
    type Phase: crate::Phase;

    /// Each buffer's bytes, in field order.
    fn byte_sizes(sizes: &Self::Sizes) -> Vec<usize>;

    /// Buffer `buffer`'s shape at these sizes (`rank` numbers; empty for a byte formula, a
    /// closed gate or an arena written by hand): what views narrow by rows.
    fn shape(sizes: &Self::Sizes, buffer: usize) -> &[usize] {
        let _ = (sizes, buffer);
        &[]
    }

    /// Buffer `buffer`'s bytes before its `min_bytes` floor: what its shape or byte formula
    /// gives (0 for a closed gate), so a report can tell a buffer held at its floor. An
    /// arena written by hand has no floors: its bytes.
    fn raw_bytes(sizes: &Self::Sizes, buffer: usize) -> usize {
        Self::byte_sizes(sizes).get(buffer).copied().unwrap_or(0)
    }

    /// The arena struct from each buffer's address (0 for a buffer of 0 bytes) and its bytes
    /// (as [`Self::byte_sizes`] gives them), in field order: one of each per buffer.
    fn from_addresses(addrs: &[u64], bytes: &[usize]) -> Self;

    /// The sum of the tracked buffers, saturating: what a preflight reserves.
    fn tracked_total(sizes: &Self::Sizes) -> usize {
        crate::checked::saturating_sum(Self::tracked(sizes).map(|(_, bytes)| bytes))
    }

    /// The sum of the tracked buffers, or an error naming the buffer at which it overflows.
    fn checked_tracked_total(sizes: &Self::Sizes) -> Result<usize, crate::SizeError> {
        crate::checked::checked_total(Self::tracked(sizes))
    }

    /// Name and bytes of each tracked buffer, in field order.
    fn tracked(sizes: &Self::Sizes) -> impl Iterator<Item = (&'static str, usize)> {
        Self::BUFFERS
            .iter()
            .zip(Self::byte_sizes(sizes))
            .filter(|(decl, _)| decl.tracked)
            .map(|(decl, bytes)| (decl.name, bytes))
    }

    /// The phase named `name`, for a name read at run time (a command line, a config);
    /// code names the phase itself (`MyArenaPhase::Ffn`), which the compiler checks.
    fn phase(name: &str) -> Option<Self::Phase> {
        use crate::Phase as _;
        Self::Phase::ALL.iter().copied().find(|p| p.name() == name)
    }

    /// The reuse slab's plan at these sizes: buffers whose phases never overlap share bytes
    /// (256-byte alignment, no guard bands), with the lower bound and the plain slab.
    fn reuse_plan(sizes: &Self::Sizes) -> Result<crate::ReusePlan, crate::SizeError> {
        Self::reuse_plan_with(sizes, 256, 0)
    }

    /// [`Self::reuse_plan`] at an alignment (a power of two) and guard band of the caller's:
    /// what `Allocated::allocate` places a reuse slab with.
    fn reuse_plan_with(
        sizes: &Self::Sizes,
        align: usize,
        guard: usize,
    ) -> Result<crate::ReusePlan, crate::SizeError> {
        let names: Vec<&'static str> = Self::BUFFERS.iter().map(|d| d.name).collect();
        let live: Vec<crate::Live> = Self::BUFFERS.iter().map(|d| d.live).collect();
        crate::ReusePlan::new(
            &names,
            &Self::byte_sizes(sizes),
            &live,
            Self::PHASES.len(),
            align,
            guard,
        )
    }

    /// The bytes `allocate_with(device, sizes, options)` takes from the device: every
    /// buffer, tracked or not, with its alignment padding and guard bands: the slab, the
    /// reuse slab, or the sum of the per-buffer allocations (`Allocated::allocated_bytes`
    /// after the fact). What a preflight reserves for the whole arena: `total_bytes` counts
    /// only the tracked buffers, but untracked ones are allocated too. For a device whose
    /// alignment is at most `options.align` (every backend here: 256 bytes).
    fn slab_bytes(
        sizes: &Self::Sizes,
        options: crate::AllocOptions,
    ) -> Result<usize, crate::SizeError> {
        let align = options.align.max(256).next_power_of_two();
        let guard = options.guard_bytes;
        let bytes = Self::byte_sizes(sizes);
        match options.mode {
            crate::AllocMode::Slab => {
                let names: Vec<&'static str> = Self::BUFFERS.iter().map(|d| d.name).collect();
                Ok(crate::SlabPlan::new(&names, &bytes, align, guard)?.total)
            }
            crate::AllocMode::Reuse => Ok(Self::reuse_plan_with(sizes, align, guard)?.footprint),
            crate::AllocMode::PerBuffer => crate::checked::checked_total(
                Self::BUFFERS
                    .iter()
                    .zip(&bytes)
                    .filter(|(_, &b)| b > 0)
                    .map(|(d, &b)| (d.name, b.saturating_add(guard))),
            ),
        }
    }

    /// Each buffer with its size, in field order.
    fn buffer_infos(sizes: &Self::Sizes) -> Vec<BufferInfo> {
        Self::BUFFERS
            .iter()
            .zip(Self::byte_sizes(sizes))
            .map(|(decl, bytes)| BufferInfo { decl, bytes })
            .collect()
    }

    /// Checks `sizes` against what each buffer's declaration allows, the first breach being
    /// the error: an ungated buffer is never 0 bytes, every size is a whole number of
    /// elements, a non-empty buffer is at least its floor where the floor is a number
    /// (`min_bytes = 256`; a floor that is a formula of the inputs cannot be re-evaluated
    /// here), and a shape buffer holds at least its shape. `allocate` and `check_placement`
    /// run it, so sizes edited by hand cannot give a NULL ungated buffer or a buffer of a
    /// partial element.
    fn check_sizes(sizes: &Self::Sizes) -> Result<(), crate::ImpossibleSize> {
        check_byte_sizes::<Self>(sizes, &Self::byte_sizes(sizes))
    }
}

/// [`Arena::check_sizes`] on the byte sizes already taken from `sizes` (`A::byte_sizes`), for
/// `allocate`, which needs them too.
pub(crate) fn check_byte_sizes<A: Arena>(
    sizes: &A::Sizes,
    bytes: &[usize],
) -> Result<(), crate::ImpossibleSize> {
    for (i, (decl, &bytes)) in A::BUFFERS.iter().zip(bytes).enumerate() {
        let shape = A::shape(sizes, i);
        // The formulas' own product (`None` past usize::MAX).
        let shape_bytes = crate::CheckedArith::new(decl.name)
            .shape(shape, decl.elem_size)
            .ok();
        let rule = if !decl.gated() && bytes == 0 {
            Some("it is not gated, so it is never 0 bytes".to_string())
        } else if decl.elem_size > 0 && bytes % decl.elem_size != 0 {
            Some(format!(
                "it holds `{}` elements of {} bytes each",
                decl.dtype, decl.elem_size
            ))
        } else if bytes > 0 && !shape.is_empty() && shape_bytes.is_none_or(|b| bytes < b) {
            Some(format!(
                "its shape {shape:?} of `{}` needs {} bytes",
                decl.dtype,
                shape_bytes.map_or("more than usize::MAX".to_string(), |b| b.to_string())
            ))
        } else {
            match decl.min_bytes.and_then(numeric_floor) {
                Some(floor) if bytes > 0 && bytes < floor => Some(format!(
                    "its floor is {floor} bytes (`min_bytes = {floor}`)"
                )),
                _ => None,
            }
        };
        if let Some(rule) = rule {
            return Err(crate::ImpossibleSize {
                buffer: decl.name,
                bytes,
                rule,
            });
        }
    }
    Ok(())
}

/// A floor written as a plain number (`256`, `4_096`), or `None` for a formula.
fn numeric_floor(text: &str) -> Option<usize> {
    text.trim().replace('_', "").parse().ok()
}

#[cfg(test)]
mod tests {
    use super::BufferDecl;
    use crate::dtype::{bf16, Element};

    /// The builder methods the derive calls set what they say and nothing else.
    #[test]
    fn a_declaration_states_its_tensors_layers_and_split() {
        const NAMES: &[&str] = &["model.layers.{layer}.a", "model.layers.{layer}.b"];
        let plain = BufferDecl::new("w", bf16::DTYPE, "[2, 8]", 2, "doc");
        assert_eq!(
            (plain.tensors.len(), plain.per_layer, plain.split),
            (0, false, None)
        );
        let d = plain.per_layer().holds(NAMES).split_by("out");
        assert_eq!(
            (d.tensors, d.per_layer, d.split),
            (NAMES, true, Some("out"))
        );
        assert_eq!((d.name, d.rank, d.tracked, d.gate), ("w", 2, true, None));
    }
}
