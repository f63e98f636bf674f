//! Borrowed views of an allocated arena's buffers: what kernels, copies and cuBLAS take.
//!
//! A [`DevicePtr`] is a plain address: copied out of the handle it outlives `release`. A view
//! borrows the handle (`Allocated`), so it cannot; it knows its buffer's shape at these sizes,
//! so a step of `m ≤ M` tokens narrows it to its first `m` rows, checked against the buffer
//! (an error naming the buffer, the rows asked for and the capacity, never an overrun). A
//! [`View`] reads; a [`ViewMut`] may be written, and only one exists per buffer at a time
//! (it borrows the handle mutably). With the `cuda` feature both implement cudarc's
//! `DeviceSlice`, `DevicePtr` (and `ViewMut` `DevicePtrMut`), so `memcpy_htod`, `memcpy_dtoh`,
//! `memset_zeros` and cuBLAS take them directly.
//!
//! The derive generates the view sets (no strings): `<Arena>Views::of(&arena)` (every
//! buffer, read-only; for an arena with phases refused on a reuse slab, where a buffer whose
//! phase has ended holds another's bytes), `<Arena>ViewsMut::of(&mut arena)` (every buffer,
//! writable; refused on a reuse slab, where buffers of disjoint phases reuse bytes) and, per phase,
//! `<Arena><Phase>Views::of(&mut arena)`: writable views of exactly the buffers live in that
//! phase, so reaching another phase's buffer is a compile error (no such field).

mod error;
mod rows;
mod shape;
#[cfg(test)]
mod tests;

pub use error::ViewError;
pub use rows::SplitRows;
use shape::Dims;
pub use shape::{Shape, MAX_RANK};

use crate::device::Device;
use crate::dtype::Element;
use crate::ptr::DevicePtr;
use crate::regions::Region;
use core::marker::PhantomData;

/// A read-only view of an arena buffer (or a narrowing of one), borrowing the allocated
/// arena: it cannot outlive `release`. `Copy`, as `&` is.
///
/// ```
/// use arena_runtime::{dtype::bf16, Arena, DevicePtr, HostDevice, ViewError};
///
/// #[derive(Arena)]
/// #[arena(inputs(m: usize, hidden: usize), phases(attention, ffn))]
/// pub struct Step {
///     #[buffer(shape = [m, hidden])]
///     pub hidden_states: DevicePtr<bf16>,
///     #[buffer(shape = [m, 3 * hidden], phase = attention)]
///     pub qkv: DevicePtr<bf16>,
///     #[buffer(shape = [m, 4 * hidden], phase = ffn)]
///     pub act: DevicePtr<bf16>,
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut arena = Step::allocate(HostDevice::new(), &StepSizes::try_from_config(16, 64)?)?;
/// let views = StepViews::of(&arena)?; // refused on a reuse slab: `Step` has phases
/// let qkv = views.qkv.rows(4)?; // this step's 4 tokens
/// assert_eq!(qkv.shape(), [4, 192]);
/// assert!(matches!(
///     views.qkv.rows(17),
///     Err(ViewError::Rows { rows: 17, capacity: 16, .. })
/// ));
/// // The FFN phase's writable views: `hidden_states` and `act` (no `qkv` field).
/// let mut ffn = StepFfnViews::of(&mut arena);
/// let act = ffn.act.rows(4)?;
/// assert_eq!(act.len(), 4 * 256);
/// arena.release()?;
/// # Ok(())
/// # }
/// ```
pub struct View<'a, T, D> {
    ptr: DevicePtr<T>,
    dims: Dims<'a>,
    name: &'static str,
    device: &'a D,
}

/// A writable view of an arena buffer, borrowing the allocated arena mutably: one per buffer
/// at a time, and none beside a [`View`] of it. Reborrow it with [`ViewMut::reborrow`] or read
/// it through [`ViewMut::as_view`].
pub struct ViewMut<'a, T, D> {
    ptr: DevicePtr<T>,
    dims: Dims<'a>,
    name: &'static str,
    device: &'a D,
    _exclusive: PhantomData<&'a mut ()>,
}

impl<T, D> View<'_, T, D> {
    /// The pointer field itself: what a kernel launch pushes.
    #[cfg(feature = "cuda")]
    #[inline(always)]
    pub(crate) fn ptr_ref(&self) -> &DevicePtr<T> {
        &self.ptr
    }
}

impl<T, D> ViewMut<'_, T, D> {
    #[cfg(feature = "cuda")]
    #[inline(always)]
    pub(crate) fn ptr_ref(&self) -> &DevicePtr<T> {
        &self.ptr
    }
}

impl<T, D> Clone for View<'_, T, D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, D> Copy for View<'_, T, D> {}

impl<T: Element, D> core::fmt::Debug for View<'_, T, D> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "View(`{}` {:?} {:?})",
            self.name,
            self.dims.shape(),
            self.ptr
        )
    }
}

impl<T: Element, D> core::fmt::Debug for ViewMut<'_, T, D> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "ViewMut(`{}` {:?} {:?})",
            self.name,
            self.dims.shape(),
            self.ptr
        )
    }
}

/// What both views read and how both narrow; one body for the two.
macro_rules! view_common {
    ($view:ident) => {
        impl<'a, T: Element, D: Device> $view<'a, T, D> {
            /// The buffer's name (the field's).
            #[inline]
            pub fn name(&self) -> &'static str {
                self.name
            }

            /// Its shape: the declaration's, evaluated at these sizes, narrowed as asked (empty
            /// for a byte formula or a closed gate; one dimension after `range`).
            #[inline]
            pub fn shape(&self) -> Shape {
                self.dims.shape()
            }

            /// Elements in view: the whole buffer for an unnarrowed view, so for a buffer
            /// held at its `min_bytes` floor more than its shape has (`rows(capacity)` is the
            /// shaped extent).
            #[inline]
            pub fn len(&self) -> usize {
                self.ptr.len()
            }

            /// True when nothing is in view (a gated-off buffer, 0 rows).
            #[inline]
            pub fn is_empty(&self) -> bool {
                self.ptr.len() == 0
            }

            /// Bytes in view.
            #[inline]
            pub fn byte_len(&self) -> usize {
                self.ptr.byte_len()
            }

            /// The device address (0 when empty).
            #[inline]
            pub fn as_raw(&self) -> u64 {
                self.ptr.as_raw()
            }

            /// The plain pointer, for raw FFI: it does not borrow the arena, so it is valid
            /// only while the arena is (see [`DevicePtr`]).
            #[inline]
            pub fn device_ptr_unchecked(&self) -> DevicePtr<T> {
                self.ptr
            }

            /// The device the arena lives on (on CUDA, the stream its own work is ordered on).
            /// Its raw `read`/`write` are `unsafe` and unchecked: a `View` is read-only in
            /// the safe API (`read_bytes`, cudarc's `DevicePtr`), which is what it promises.
            #[inline]
            pub fn device(&self) -> &'a D {
                self.device
            }

            /// The first `rows` rows of a `[rows, ...]` buffer: for a step of `m ≤ M` tokens.
            /// An error names the buffer, the rows asked for and the capacity.
            #[inline]
            fn narrow_rows(&self, rows: usize) -> Result<(DevicePtr<T>, Dims<'a>), ViewError> {
                if !self.dims.shaped {
                    return Err(ViewError::NoShape { buffer: self.name });
                }
                let capacity = self.dims.lead;
                if rows > capacity {
                    return Err(ViewError::Rows {
                        buffer: self.name,
                        rows,
                        capacity,
                    });
                }
                let row: usize = self.dims.rest.iter().product();
                let narrowed = Dims {
                    lead: rows,
                    ..self.dims
                };
                // Within `len`: rows * row ≤ capacity * row, the shape's elements.
                let len = (rows * row).min(self.ptr.len());
                let addr = if len == 0 { 0 } else { self.ptr.as_raw() };
                Ok((DevicePtr::from_raw_parts(addr, len), narrowed))
            }

            /// Layer `layer` of a per-layer buffer `[layers, d1, d2, ...]` (`#[buffer(per_layer =
            /// ...)]`): its `[d1, d2, ...]`, contiguous.
            #[inline]
            fn narrow_layer(&self, layer: usize) -> Result<(DevicePtr<T>, Dims<'a>), ViewError> {
                if !self.dims.shaped {
                    return Err(ViewError::NoShape { buffer: self.name });
                }
                let layers = self.dims.lead;
                let Some((&lead, rest)) = self.dims.rest.split_first() else {
                    return Err(ViewError::Layer {
                        buffer: self.name,
                        layer,
                        layers: 0,
                    });
                };
                if layer >= layers {
                    return Err(ViewError::Layer {
                        buffer: self.name,
                        layer,
                        layers,
                    });
                }
                let per_layer: usize = self.dims.rest.iter().product();
                // Within `len`: (layer + 1) * per_layer ≤ layers * per_layer, the shape's
                // elements.
                let len = per_layer.min(self.ptr.len().saturating_sub(layer * per_layer));
                let addr = if len == 0 {
                    0
                } else {
                    self.ptr.as_raw() + (layer * per_layer * T::SIZE) as u64
                };
                let dims = Dims {
                    lead,
                    rest,
                    shaped: true,
                };
                Ok((DevicePtr::from_raw_parts(addr, len), dims))
            }

            #[inline]
            fn narrow_range(
                &self,
                range: core::ops::Range<usize>,
            ) -> Result<(DevicePtr<T>, Dims<'a>), ViewError> {
                let len = self.ptr.len();
                if range.start > range.end || range.end > len {
                    return Err(ViewError::Range {
                        buffer: self.name,
                        start: range.start,
                        end: range.end,
                        len,
                    });
                }
                let n = range.end - range.start;
                let addr = if n == 0 {
                    0
                } else {
                    self.ptr.as_raw() + (range.start * T::SIZE) as u64
                };
                Ok((DevicePtr::from_raw_parts(addr, n), Dims::flat(n)))
            }

            /// The whole view as `U`s, flat: whole elements, aligned as `U` is.
            #[inline]
            fn narrow_cast<U: Element>(&self) -> Result<(DevicePtr<U>, Dims<'a>), ViewError> {
                let (addr, bytes) = (self.ptr.as_raw(), self.ptr.byte_len());
                if bytes % U::SIZE != 0 || addr % core::mem::align_of::<U>() as u64 != 0 {
                    return Err(ViewError::Cast {
                        buffer: self.name,
                        addr,
                        bytes,
                        dtype: U::NAME,
                    });
                }
                let n = bytes / U::SIZE;
                let addr = if n == 0 { 0 } else { addr };
                Ok((DevicePtr::from_raw_parts(addr, n), Dims::flat(n)))
            }

            #[inline]
            fn narrow_region<U: Element>(
                &self,
                region: Region,
            ) -> Result<(DevicePtr<U>, Dims<'a>), ViewError> {
                let capacity = self.ptr.byte_len();
                let fits = region
                    .offset
                    .checked_add(region.bytes)
                    .is_some_and(|end| end <= capacity);
                if !fits || region.bytes % U::SIZE != 0 {
                    return Err(ViewError::Region {
                        buffer: self.name,
                        offset: region.offset,
                        bytes: region.bytes,
                        capacity,
                        dtype: U::NAME,
                    });
                }
                let n = region.bytes / U::SIZE;
                let addr = if n == 0 {
                    0
                } else {
                    self.ptr.as_raw() + region.offset as u64
                };
                Ok((DevicePtr::from_raw_parts(addr, n), Dims::flat(n)))
            }
        }
    };
}

view_common!(View);
view_common!(ViewMut);

impl<'a, T, D> View<'a, T, D> {
    /// The view of a buffer: its pointer, its shape at these sizes, its name. Generated view
    /// sets call it; `device` is the arena's, borrowed for `'a`. No bound on `T`, so a field
    /// whose type is not an element is one error (the derive's), not one more here.
    #[doc(hidden)]
    #[inline]
    pub fn from_parts(
        name: &'static str,
        ptr: DevicePtr<T>,
        dims: &'a [usize],
        device: &'a D,
    ) -> Self {
        View {
            ptr,
            dims: Dims::of(dims),
            name,
            device,
        }
    }
}

impl<'a, T: Element, D: Device> View<'a, T, D> {
    /// The first `rows` rows (see [`ViewMut::rows`]).
    #[inline]
    pub fn rows(&self, rows: usize) -> Result<View<'a, T, D>, ViewError> {
        let (ptr, dims) = self.narrow_rows(rows)?;
        Ok(View { ptr, dims, ..*self })
    }

    /// Layer `layer` of a per-layer buffer (`#[buffer(per_layer = count, shape = [...])]`,
    /// whose first dimension is the layer count): that layer's `shape`, contiguous. An error
    /// names the buffer, the layer asked for and the count.
    #[inline]
    pub fn layer(&self, layer: usize) -> Result<View<'a, T, D>, ViewError> {
        let (ptr, dims) = self.narrow_layer(layer)?;
        Ok(View { ptr, dims, ..*self })
    }

    /// Elements `range` of the buffer, flattened (one dimension).
    #[inline]
    pub fn range(&self, range: core::ops::Range<usize>) -> Result<View<'a, T, D>, ViewError> {
        let (ptr, dims) = self.narrow_range(range)?;
        Ok(View { ptr, dims, ..*self })
    }

    /// A region of a buffer carved by a `Regions` layout (`layout.field`), as elements of `U`:
    /// flat (one dimension), named as the buffer. A `Region` is an offset and a byte count,
    /// so `U` is checked only to divide the bytes, not against the region's declared type.
    #[inline]
    pub fn region<U: Element>(&self, region: Region) -> Result<View<'a, U, D>, ViewError> {
        let (ptr, dims) = self.narrow_region::<U>(region)?;
        Ok(View {
            ptr,
            dims,
            name: self.name,
            device: self.device,
        })
    }
}

impl<'a, T: Element, D: Device> View<'a, T, D> {
    /// Copies the view's bytes into `out`, which must be exactly [`View::byte_len`] long,
    /// through the device (`Device::read`; on CUDA a copy on the device's stream, waited for).
    /// Safe: the view is inside its buffer and borrows the live arena.
    pub fn read_bytes(&self, out: &mut [u8]) -> Result<(), ViewError> {
        copy_check(self.name, out.len(), self.byte_len())?;
        if out.is_empty() {
            return Ok(());
        }
        // SAFETY: `as_raw() .. + byte_len()` is inside a buffer of the arena this view
        // borrows, so it is live for the call.
        unsafe { self.device.read(self.as_raw(), out) }.map_err(|source| ViewError::Device {
            buffer: self.name,
            source,
        })
    }

    /// The same bytes as elements of `U` (one dimension): a weight place declared as `u8`
    /// (a matrix in its checkpoint's format) read at the type a kernel reads it, `bf16` for a
    /// 16-bit checkpoint. An error names the buffer where the bytes are not whole `U`s or do
    /// not start at `U`'s alignment.
    #[inline]
    pub fn cast<U: Element>(&self) -> Result<View<'a, U, D>, ViewError> {
        let (ptr, dims) = self.narrow_cast::<U>()?;
        Ok(View {
            ptr,
            dims,
            name: self.name,
            device: self.device,
        })
    }

    /// The same bytes as `u8`s (one dimension): for copies of any dtype.
    #[inline]
    pub fn bytes(&self) -> View<'a, u8, D> {
        View {
            ptr: self.ptr.cast::<u8>(),
            dims: Dims::flat(self.ptr.byte_len()),
            name: self.name,
            device: self.device,
        }
    }
}

/// A host slice of exactly the view's bytes.
fn copy_check(buffer: &'static str, host: usize, view: usize) -> Result<(), ViewError> {
    if host == view {
        Ok(())
    } else {
        Err(ViewError::HostLength { buffer, host, view })
    }
}

impl<'a, T: Element, D: Device> ViewMut<'a, T, D> {
    /// Copies `data`, exactly [`ViewMut::byte_len`] bytes, into the view through the device
    /// (`Device::write`; on CUDA a copy on the device's stream, waited for). Safe: the view is
    /// inside its buffer and borrows the live arena mutably.
    pub fn write_bytes(&mut self, data: &[u8]) -> Result<(), ViewError> {
        copy_check(self.name, data.len(), self.byte_len())?;
        if data.is_empty() {
            return Ok(());
        }
        // SAFETY: as in `View::read_bytes`.
        unsafe { self.device.write(self.as_raw(), data) }.map_err(|source| ViewError::Device {
            buffer: self.name,
            source,
        })
    }

    /// Copies the view's bytes into `out` (see [`View::read_bytes`]).
    pub fn read_bytes(&self, out: &mut [u8]) -> Result<(), ViewError> {
        self.as_view().read_bytes(out)
    }

    /// The same bytes as writable elements of `U`, consuming the view (see [`View::cast`]).
    #[inline]
    pub fn into_cast<U: Element>(self) -> Result<ViewMut<'a, U, D>, ViewError> {
        let (ptr, dims) = self.narrow_cast::<U>()?;
        Ok(ViewMut {
            ptr,
            dims,
            name: self.name,
            device: self.device,
            _exclusive: PhantomData,
        })
    }

    /// The same bytes as writable `u8`s (one dimension), consuming the view.
    #[inline]
    pub fn into_bytes(self) -> ViewMut<'a, u8, D> {
        ViewMut {
            ptr: self.ptr.cast::<u8>(),
            dims: Dims::flat(self.ptr.byte_len()),
            name: self.name,
            device: self.device,
            _exclusive: PhantomData,
        }
    }

    /// The same bytes as writable `u8`s (one dimension): for copies of any dtype.
    #[inline]
    pub fn bytes(&mut self) -> ViewMut<'_, u8, D> {
        let (ptr, dims) = (self.ptr.cast::<u8>(), Dims::flat(self.ptr.byte_len()));
        self.narrowed(ptr, dims)
    }
}

impl<'a, T, D> ViewMut<'a, T, D> {
    /// The writable view of a buffer. Generated view sets call it, once per buffer, from a
    /// mutable borrow of the arena.
    #[doc(hidden)]
    #[inline]
    pub fn from_parts(
        name: &'static str,
        ptr: DevicePtr<T>,
        dims: &'a [usize],
        device: &'a D,
    ) -> Self {
        ViewMut {
            ptr,
            dims: Dims::of(dims),
            name,
            device,
            _exclusive: PhantomData,
        }
    }
}

impl<'a, T: Element, D: Device> ViewMut<'a, T, D> {
    /// Reads it: a [`View`] borrowing this one.
    #[inline]
    pub fn as_view(&self) -> View<'_, T, D> {
        View {
            ptr: self.ptr,
            dims: self.dims,
            name: self.name,
            device: self.device,
        }
    }

    /// A shorter-lived writable view of the same bytes (to pass on and keep this one).
    #[inline]
    pub fn reborrow(&mut self) -> ViewMut<'_, T, D> {
        let (ptr, dims) = (self.ptr, self.dims);
        self.narrowed(ptr, dims)
    }

    /// A writable view of part of this one's bytes, borrowing it: what every narrowing returns.
    #[inline]
    fn narrowed<U>(&mut self, ptr: DevicePtr<U>, dims: Dims<'a>) -> ViewMut<'_, U, D> {
        ViewMut {
            ptr,
            dims,
            name: self.name,
            device: self.device,
            _exclusive: PhantomData,
        }
    }

    /// The first `rows` rows of a `[rows, ...]` buffer, for a step of `m ≤ M` tokens: the
    /// same row width, `rows` rows. An error names the buffer, the rows asked for and the
    /// capacity; 0 rows is an empty view.
    #[inline]
    pub fn rows(&mut self, rows: usize) -> Result<ViewMut<'_, T, D>, ViewError> {
        let (ptr, dims) = self.narrow_rows(rows)?;
        Ok(self.narrowed(ptr, dims))
    }

    /// The first `rows` rows, consuming the view (keeps its lifetime).
    #[inline]
    pub fn into_rows(self, rows: usize) -> Result<ViewMut<'a, T, D>, ViewError> {
        let (ptr, dims) = self.narrow_rows(rows)?;
        Ok(ViewMut { ptr, dims, ..self })
    }

    /// Layer `layer` of a per-layer buffer, writable (see [`View::layer`]).
    #[inline]
    pub fn layer(&mut self, layer: usize) -> Result<ViewMut<'_, T, D>, ViewError> {
        let (ptr, dims) = self.narrow_layer(layer)?;
        Ok(self.narrowed(ptr, dims))
    }

    /// Layer `layer`, consuming the view (keeps its lifetime).
    #[inline]
    pub fn into_layer(self, layer: usize) -> Result<ViewMut<'a, T, D>, ViewError> {
        let (ptr, dims) = self.narrow_layer(layer)?;
        Ok(ViewMut { ptr, dims, ..self })
    }

    /// Elements `range` of the buffer, flattened (one dimension).
    #[inline]
    pub fn range(
        &mut self,
        range: core::ops::Range<usize>,
    ) -> Result<ViewMut<'_, T, D>, ViewError> {
        let (ptr, dims) = self.narrow_range(range)?;
        Ok(self.narrowed(ptr, dims))
    }

    /// A region of a buffer carved by a `Regions` layout, as writable elements of `U`.
    #[inline]
    pub fn region<U: Element>(&mut self, region: Region) -> Result<ViewMut<'_, U, D>, ViewError> {
        let (ptr, dims) = self.narrow_region::<U>(region)?;
        Ok(self.narrowed(ptr, dims))
    }
}
