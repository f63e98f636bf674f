//! What only the derives' generated code calls. Not API: it changes whenever the expansion
//! does, so nothing outside generated code should name it (hidden from the docs, as
//! serde's and thiserror's `__private` are).

use crate::checked::CheckedArith;
use crate::error::SizeError;

pub use crate::const_eval::{Konst, KonstArith};
/// The const sizing path's helpers (`#[arena(const)]`, `assert_fits!`).
pub mod konst {
    pub use crate::const_eval::{fits, fits_reuse, total, unwrap_size, Message};
    pub use crate::const_eval::{named, tracked, tracked_total, with_tracking};
    pub use crate::ReuseBytes;
}
pub use crate::arena::Pointers;
pub use crate::regions::{check_carve, RegionCursor};

/// Each buffer's shape and bytes before the floor, recorded in field order as the generated
/// sizing computes them and then kept in the sizes struct (`__dims`, `__raw`), where
/// `Arena::shape` and `Arena::raw_bytes` read them: one call a buffer in the generated code.
pub struct Recorder<const R: usize, const N: usize> {
    dims: [[usize; R]; N],
    raw: [usize; N],
    next: usize,
}

impl<const R: usize, const N: usize> Default for Recorder<R, N> {
    fn default() -> Self {
        Self {
            dims: [[0; R]; N],
            raw: [0; N],
            next: 0,
        }
    }
}

impl<const R: usize, const N: usize> Recorder<R, N> {
    /// The next buffer's dims (empty for a byte formula or a closed gate) and bytes.
    fn record(&mut self, dims: &[usize], bytes: usize) {
        if let (Some(row), Some(raw)) = (self.dims.get_mut(self.next), self.raw.get_mut(self.next))
        {
            for (slot, &d) in row.iter_mut().zip(dims) {
                *slot = d;
            }
            *raw = bytes;
        }
        self.next += 1;
    }

    /// A shaped buffer's final size: its dims and bytes recorded, then [`finish`]ed.
    pub fn shape(
        &mut self,
        f: CheckedArith,
        dims: &[usize],
        elem_size: usize,
        floor: usize,
        gated: bool,
    ) -> Result<usize, SizeError> {
        let bytes = f.shape(dims, elem_size)?;
        self.record(dims, bytes);
        finish(f, bytes, floor, gated)
    }

    /// A byte formula's final size, as [`Self::shape`] with no dims.
    pub fn bytes(
        &mut self,
        f: CheckedArith,
        bytes: usize,
        floor: usize,
        gated: bool,
    ) -> Result<usize, SizeError> {
        self.record(&[], bytes);
        finish(f, bytes, floor, gated)
    }

    /// A buffer whose gate is closed: no shape, 0 bytes.
    pub fn closed(&mut self) -> usize {
        self.record(&[], 0);
        0
    }

    /// What was recorded: each buffer's dims and its bytes before the floor.
    pub fn into_parts(self) -> ([[usize; R]; N], [usize; N]) {
        (self.dims, self.raw)
    }
}

/// Buffer `i`'s shape as [`Recorder`] kept it: its declaration's `rank` numbers, or none for a
/// byte formula or a closed gate (a gated buffer recorded with no bytes and no dims).
pub fn recorded_shape<'s, const R: usize>(
    dims: &'s [[usize; R]],
    raw: &[usize],
    decls: &[crate::BufferDecl],
    i: usize,
) -> &'s [usize] {
    match (dims.get(i), decls.get(i)) {
        (Some(row), Some(decl)) => {
            let closed = decl.gated() && raw.get(i) == Some(&0) && row.iter().all(|&d| d == 0);
            if closed {
                &[]
            } else {
                &row[..decl.rank.min(R)]
            }
        }
        _ => &[],
    }
}

/// The final size: at least `floor` bytes, and not 0 unless the buffer is gated.
pub fn finish(
    f: CheckedArith,
    bytes: usize,
    floor: usize,
    gated: bool,
) -> Result<usize, SizeError> {
    let bytes = bytes.max(floor);
    if bytes == 0 && !gated {
        return Err(SizeError::Zero { buffer: f.name() });
    }
    Ok(bytes)
}

/// Evaluates a derived value: an error inside `value` becomes a [`SizeError::Derived`]
/// naming the derived value and `used_by`, the buffers that read it, instead of a buffer of
/// the derived value's name.
pub fn derived(
    f: CheckedArith,
    used_by: &'static [&'static str],
    value: impl FnOnce(CheckedArith) -> Result<usize, SizeError>,
) -> Result<usize, SizeError> {
    value(f).map_err(|source| SizeError::Derived {
        name: f.name(),
        used_by,
        source: Box::new(source),
    })
}

/// What the generated view sets read of an allocated arena: each buffer's name and shape, and
/// the view of buffer `i` built from them, so a generated field is one call.
pub struct ViewSource<'a, A: crate::Arena, D: crate::Device> {
    arena: &'a crate::Allocated<A, D>,
}

impl<'a, A: crate::Arena, D: crate::Device> ViewSource<'a, A, D> {
    #[inline]
    pub fn new(arena: &'a crate::Allocated<A, D>) -> Self {
        Self { arena }
    }

    /// Buffer `i`'s name.
    #[inline]
    pub fn name(&self, i: usize) -> &'static str {
        A::BUFFERS.get(i).map_or("", |d| d.name)
    }

    /// Buffer `i`'s shape at the arena's sizes; empty for a buffer of 0 bytes (a closed
    /// gate), as for a byte formula.
    #[inline]
    pub fn shape(&self, i: usize) -> &'a [usize] {
        match self.arena.placements().get(i) {
            Some(p) if p.bytes > 0 => A::shape(self.arena.sizes(), i),
            _ => &[],
        }
    }

    /// A read-only view of buffer `i`, whose pointer is `ptr`.
    #[inline]
    pub fn view<T>(&self, i: usize, ptr: crate::DevicePtr<T>) -> crate::View<'a, T, D> {
        crate::View::from_parts(self.name(i), ptr, self.shape(i), self.arena.device())
    }

    /// A writable view of buffer `i`, whose pointer is `ptr`: the caller holds the arena's
    /// mutable borrow (a generated writable set's `of`).
    #[inline]
    pub fn view_mut<T>(&self, i: usize, ptr: crate::DevicePtr<T>) -> crate::ViewMut<'a, T, D> {
        crate::ViewMut::from_parts(self.name(i), ptr, self.shape(i), self.arena.device())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: CheckedArith = CheckedArith::new("buf");

    #[test]
    fn shapes_floors_and_zero() {
        let mut r = Recorder::<2, 4>::default();
        assert_eq!(r.shape(F, &[2, 3], 4, 0, false), Ok(24));
        assert_eq!(r.bytes(F, 7, 256, false), Ok(256));
        assert_eq!(r.closed(), 0);
        assert_eq!(r.shape(F, &[0, 3], 4, 0, true), Ok(0));
        assert_eq!(
            r.into_parts(),
            ([[2, 3], [0, 0], [0, 0], [0, 3]], [24, 7, 0, 0])
        );
        assert_eq!(finish(F, 0, 256, false), Ok(256));
        assert_eq!(finish(F, 0, 0, true), Ok(0));
        assert_eq!(
            finish(F, 0, 0, false),
            Err(SizeError::Zero { buffer: "buf" })
        );
    }

    #[test]
    fn a_closed_gate_has_no_shape_and_an_open_one_keeps_its_zeros() {
        use crate::dtype::{bf16, Element};
        let decls = [
            crate::BufferDecl::new("closed", bf16::DTYPE, "[m]", 1, "").gated_by("g"),
            crate::BufferDecl::new("open", bf16::DTYPE, "[m, 0]", 2, "").gated_by("g"),
            crate::BufferDecl::new("plain", bf16::DTYPE, "[m, n]", 2, ""),
        ];
        let dims = [[0, 0], [16, 0], [4, 8]];
        let raw = [0, 0, 64];
        assert_eq!(recorded_shape(&dims, &raw, &decls, 0), &[] as &[usize]);
        assert_eq!(recorded_shape(&dims, &raw, &decls, 1), [16, 0]);
        assert_eq!(recorded_shape(&dims, &raw, &decls, 2), [4, 8]);
        assert_eq!(recorded_shape(&dims, &raw, &decls, 3), &[] as &[usize]);
    }

    #[test]
    fn a_derived_value_is_named_with_its_readers() {
        let err = derived(F, &["a", "b"], |f| f.mul(usize::MAX, 2)).unwrap_err();
        assert_eq!(err.buffer(), "buf");
        assert!(matches!(
            err,
            SizeError::Derived {
                used_by: ["a", "b"],
                ..
            }
        ));
        assert_eq!(derived(F, &[], |f| f.add(1, 2)), Ok(3));
        assert_eq!(
            err.to_string(),
            format!(
                "derived value `buf` (read by `a`, `b`): {} * 2 overflows usize",
                usize::MAX
            )
        );
        let unread = derived(F, &[], |f| f.div(1, 0)).unwrap_err();
        assert_eq!(
            unread.to_string(),
            "derived value `buf` (read by no buffer): 1 / 0 divides by zero"
        );
        let zero = derived(F, &["a"], |_| Err(SizeError::Zero { buffer: "inner" })).unwrap_err();
        assert!(
            zero.to_string()
                .ends_with("buffer `inner` is not gated but its formula gives 0 bytes"),
            "{zero}"
        );
    }
}
