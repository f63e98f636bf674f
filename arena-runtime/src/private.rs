//! What only the derives' generated code calls. Not API: it changes whenever the expansion
//! does, so nothing outside generated code should name it (hidden from the docs, as
//! serde's and thiserror's `__private` are).

use crate::checked::CheckedArith;
use crate::error::SizeError;

pub use crate::const_eval::{Konst, KonstArith};
/// The const sizing path's helpers (`#[arena(const)]`, `assert_fits!`).
pub mod konst {
    pub use crate::const_eval::{fits, fits_shared, total, unwrap_size, Message};
    pub use crate::const_eval::{named, tracked, tracked_total, with_tracking};
    pub use crate::SharedBytes;
}
pub use crate::arena::Pointers;
pub use crate::regions::{check_carve, RegionCursor};

/// A shape's bytes, handing its dims and those bytes (before any floor) to `on_dims` (how
/// `dims()` and reports see each shape).
pub fn shape_reported(
    f: CheckedArith,
    dims: &[usize],
    elem_size: usize,
    on_dims: &mut dyn FnMut(&[usize], usize),
) -> Result<usize, SizeError> {
    let bytes = f.shape(dims, elem_size)?;
    on_dims(dims, bytes);
    Ok(bytes)
}

/// A byte formula's value, handing `on_dims` the empty shape a byte formula has and its
/// bytes before any floor.
pub fn bytes_reported(bytes: usize, on_dims: &mut dyn FnMut(&[usize], usize)) -> usize {
    on_dims(&[], bytes);
    bytes
}

/// A shaped buffer's final size, its shape and bytes before the floor handed to `on_dims`:
/// [`shape_reported`] then [`finish`], one call a buffer in the generated sizing.
pub fn sized_shape(
    f: CheckedArith,
    dims: &[usize],
    elem_size: usize,
    floor: usize,
    gated: bool,
    on_dims: &mut dyn FnMut(&[usize], usize),
) -> Result<usize, SizeError> {
    finish(
        f,
        shape_reported(f, dims, elem_size, on_dims)?,
        floor,
        gated,
    )
}

/// A byte formula's final size, as [`sized_shape`].
pub fn sized_bytes(
    f: CheckedArith,
    bytes: usize,
    floor: usize,
    gated: bool,
    on_dims: &mut dyn FnMut(&[usize], usize),
) -> Result<usize, SizeError> {
    finish(f, bytes_reported(bytes, on_dims), floor, gated)
}

/// A buffer whose gate is closed: no shape, 0 bytes.
pub fn closed(on_dims: &mut dyn FnMut(&[usize], usize)) -> usize {
    on_dims(&[], 0);
    0
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

/// Keeps each buffer's dims as the formulas report them (into the sizes struct's hidden
/// per-buffer rows, in field order), then hands them on to the caller's `on_dims`.
pub struct DimsRecorder<'a, 'b, const R: usize> {
    dims: &'a mut [[usize; R]],
    next: usize,
    on_dims: &'a mut (dyn FnMut(&[usize], usize) + 'b),
}

impl<'a, 'b, const R: usize> DimsRecorder<'a, 'b, R> {
    pub fn new(
        dims: &'a mut [[usize; R]],
        on_dims: &'a mut (dyn FnMut(&[usize], usize) + 'b),
    ) -> Self {
        Self {
            dims,
            next: 0,
            on_dims,
        }
    }

    /// The next buffer's dims (empty for a byte formula or a closed gate) and bytes.
    pub fn record(&mut self, dims: &[usize], bytes: usize) {
        if let Some(row) = self.dims.get_mut(self.next) {
            for (slot, &d) in row.iter_mut().zip(dims) {
                *slot = d;
            }
        }
        self.next += 1;
        (self.on_dims)(dims, bytes)
    }
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
        let mut seen = Vec::new();
        let mut on_dims = |d: &[usize], b: usize| seen.push((d.to_vec(), b));
        assert_eq!(shape_reported(F, &[2, 3], 4, &mut on_dims), Ok(24));
        assert_eq!(bytes_reported(7, &mut on_dims), 7);
        assert_eq!(closed(&mut on_dims), 0);
        assert_eq!(seen, [(vec![2, 3], 24), (vec![], 7), (vec![], 0)]);
        assert_eq!(finish(F, 0, 256, false), Ok(256));
        assert_eq!(finish(F, 0, 0, true), Ok(0));
        assert_eq!(
            finish(F, 0, 0, false),
            Err(SizeError::Zero { buffer: "buf" })
        );
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
