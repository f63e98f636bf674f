//! `DevicePtr<T>`: a typed device address with its length, as the arena hands it out.

use crate::dtype::Element;
use core::fmt;
use core::marker::PhantomData;

/// A device address holding `len` elements of `T`, or NULL with length 0.
///
/// It is a plain value (`Copy`): the arena that produced it owns the memory, and the
/// pointer is valid until that arena is released. It never dereferences on the host.
///
/// At a kernel launch (feature `cuda`), `launch.arg(&ptr)` pushes its address alone: the
/// `T*` parameter the kernel declares. A kernel parameter that is a pointer table (`T**`: the
/// A/B/C pointers of a grouped GEMM, per-layer state pointers) takes a device copy of
/// [`DevicePtr::address_table`], not one `DevicePtr`, and a slice of `DevicePtr`s does not
/// upload as one (each also carries its length; `tests/ui/pointer_table_upload.rs`):
///
/// ```no_run
/// # #[cfg(feature = "cuda")]
/// # fn launch(
/// #     stream: &std::sync::Arc<arena_runtime::cudarc::driver::CudaStream>,
/// #     kernel: &arena_runtime::cudarc::driver::CudaFunction,
/// #     a: arena_runtime::DevicePtr<f32>,
/// #     b: arena_runtime::DevicePtr<f32>,
/// # ) -> Result<(), Box<dyn std::error::Error>> {
/// use arena_runtime::cudarc::driver::{LaunchConfig, PushKernelArg};
/// use arena_runtime::DevicePtr;
///
/// // `__global__ void k(const float* const* tables, float* out)`
/// let tables = stream.clone_htod(&DevicePtr::address_table(&[a, b]))?;
/// let mut launch = stream.launch_builder(kernel);
/// launch.arg(&tables).arg(&a);
/// unsafe { launch.launch(LaunchConfig::for_num_elems(2)) }?;
/// # Ok(())
/// # }
/// ```
#[repr(C)]
pub struct DevicePtr<T> {
    addr: u64,
    len: usize,
    _elem: PhantomData<*const T>,
}

// SAFETY: a device address is only a number on the host side; nothing dereferences it here,
// so sharing or sending one between threads touches no memory.
unsafe impl<T> Send for DevicePtr<T> {}
// SAFETY: as for `Send`.
unsafe impl<T> Sync for DevicePtr<T> {}

impl<T> Clone for DevicePtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DevicePtr<T> {}

impl<T> PartialEq for DevicePtr<T> {
    fn eq(&self, other: &Self) -> bool {
        self.addr == other.addr && self.len == other.len
    }
}
impl<T> Eq for DevicePtr<T> {}

impl<T> Default for DevicePtr<T> {
    fn default() -> Self {
        Self::NULL
    }
}

impl<T> DevicePtr<T> {
    /// The pointer of a buffer that is not allocated (a gated buffer of 0 bytes).
    pub const NULL: Self = Self {
        addr: 0,
        len: 0,
        _elem: PhantomData,
    };

    /// A pointer to `len` elements at device address `addr`.
    ///
    /// Making one is safe: nothing on the host reads through it. Using it in a kernel is
    /// the caller's promise that the memory is live and this long.
    pub const fn from_raw_parts(addr: u64, len: usize) -> Self {
        Self {
            addr,
            len,
            _elem: PhantomData,
        }
    }

    /// True for [`DevicePtr::NULL`].
    pub const fn is_null(&self) -> bool {
        self.addr == 0
    }

    /// The device address as an integer (0 for NULL).
    pub const fn as_raw(&self) -> u64 {
        self.addr
    }

    /// The address field itself: what a kernel launch pushes for this pointer.
    #[cfg(feature = "cuda")]
    pub(crate) const fn address_ref(&self) -> &u64 {
        &self.addr
    }

    /// The addresses of `ptrs`, in order, one `u64` each: the device pointer table a `T**`
    /// kernel parameter reads (grouped-GEMM A/B/C pointers, per-layer state pointers).
    /// Upload it as it is, e.g. `stream.clone_htod(&DevicePtr::address_table(&ptrs))`; a
    /// slice of `DevicePtr`s cannot be uploaded directly (each also carries its length).
    pub fn address_table(ptrs: &[DevicePtr<T>]) -> Vec<u64> {
        ptrs.iter().map(|p| p.addr).collect()
    }

    /// Length in elements.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// True when the buffer holds no element.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: Element> DevicePtr<T> {
    /// A pointer to the `bytes` bytes at `addr`, as whole elements of `T`.
    pub const fn from_byte_len(addr: u64, bytes: usize) -> Self {
        Self::from_raw_parts(addr, bytes / T::SIZE)
    }

    /// Length in bytes.
    pub const fn byte_len(&self) -> usize {
        self.len * T::SIZE
    }

    /// The same bytes seen as another element type; the length counts whole elements of `U`.
    pub const fn cast<U: Element>(self) -> DevicePtr<U> {
        DevicePtr::from_raw_parts(self.addr, self.byte_len() / U::SIZE)
    }

    /// A pointer to `len` elements of `U` starting `offset_bytes` into this buffer, or
    /// `None` when that range does not lie inside it.
    pub fn slice_bytes<U: Element>(&self, offset_bytes: usize, len: usize) -> Option<DevicePtr<U>> {
        let bytes = len.checked_mul(U::SIZE)?;
        let end = offset_bytes.checked_add(bytes)?;
        if self.is_null() || end > self.byte_len() {
            return None;
        }
        Some(DevicePtr::from_raw_parts(
            self.addr + offset_bytes as u64,
            len,
        ))
    }
}

impl<T: Element> fmt::Debug for DevicePtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_null() {
            write!(f, "DevicePtr<{}>::NULL", T::NAME)
        } else {
            write!(
                f,
                "DevicePtr<{}>({:#x}, {} elems)",
                T::NAME,
                self.addr,
                self.len
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::bf16;

    #[test]
    fn null_and_lengths() {
        let p = DevicePtr::<bf16>::NULL;
        assert!(p.is_null());
        assert_eq!(p.byte_len(), 0);
        let q = DevicePtr::<bf16>::from_raw_parts(0x1000, 8);
        assert_eq!(q.as_raw(), 0x1000);
        assert_eq!(q.len(), 8);
        assert_eq!(q.byte_len(), 16);
        assert_eq!(q.cast::<u8>().len(), 16);
        assert_eq!(
            DevicePtr::<f32>::from_byte_len(0x1000, 10),
            DevicePtr::from_raw_parts(0x1000, 2)
        );
        assert_eq!(DevicePtr::<f32>::from_byte_len(0x1000, 12).len(), 3);
        assert_eq!(q.cast::<f32>().len(), 4, "16 bytes are 4 f32");
        assert_eq!(q.cast::<u64>().byte_len(), 16);
        assert_eq!(format!("{q:?}"), "DevicePtr<bf16>(0x1000, 8 elems)");
        assert_eq!(format!("{p:?}"), "DevicePtr<bf16>::NULL");
    }

    #[test]
    fn an_address_table_holds_the_addresses_alone() {
        let ptrs = [
            DevicePtr::<f32>::from_raw_parts(0x1000, 4),
            DevicePtr::NULL,
            DevicePtr::from_raw_parts(0x2000, 9),
        ];
        assert_eq!(DevicePtr::address_table(&ptrs), [0x1000, 0, 0x2000]);
    }

    #[test]
    fn slices_stay_inside() {
        let q = DevicePtr::<u8>::from_raw_parts(0x1000, 64);
        assert_eq!(q.slice_bytes::<f32>(16, 4).unwrap().as_raw(), 0x1010);
        assert!(q.slice_bytes::<f32>(16, 13).is_none());
        assert!(DevicePtr::<u8>::NULL.slice_bytes::<u8>(0, 0).is_none());
        // A region that ends exactly at the buffer's end, as the last region of a layout does.
        let last = q
            .slice_bytes::<f32>(48, 4)
            .expect("ends at the end: inside");
        assert_eq!((last.as_raw(), last.byte_len()), (0x1030, 16));
        assert!(
            q.slice_bytes::<u8>(64, 0).is_some(),
            "an empty slice at the end"
        );
        assert!(
            q.slice_bytes::<u8>(64, 1).is_none(),
            "one byte past the end"
        );
    }

    #[test]
    fn equality_is_address_and_length_and_empty_is_zero_length() {
        let p = DevicePtr::<f32>::from_raw_parts(0x1000, 4);
        assert_eq!(p, DevicePtr::from_raw_parts(0x1000, 4));
        assert_ne!(
            p,
            DevicePtr::from_raw_parts(0x1000, 5),
            "same address, other length"
        );
        assert_ne!(
            p,
            DevicePtr::from_raw_parts(0x2000, 4),
            "same length, other address"
        );
        assert_ne!(p, DevicePtr::NULL);
        assert!(!p.is_empty());
        assert!(DevicePtr::<f32>::from_raw_parts(0x1000, 0).is_empty());
        assert!(DevicePtr::<f32>::NULL.is_empty() && DevicePtr::<f32>::default().is_null());
    }
}
