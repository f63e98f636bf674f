//! `HostDevice`: real, aligned host memory standing in for a GPU.
//!
//! Tests, CI and the CLI use it when there is no GPU: buffers are real memory, so tests
//! can write every byte of every buffer and prove the layout.

use crate::device::Device;
use crate::error::DeviceError;
use std::alloc::{self, Layout};

/// Host memory with the alignment a CUDA allocation has (256 bytes by default).
#[derive(Debug, Clone, Copy)]
pub struct HostDevice {
    align: usize,
}

impl Default for HostDevice {
    fn default() -> Self {
        Self { align: 256 }
    }
}

impl HostDevice {
    /// A host device aligning every allocation to 256 bytes.
    pub fn new() -> Self {
        Self::default()
    }

    /// A host device with another alignment (a power of two).
    pub fn with_alignment(align: usize) -> Option<Self> {
        align.is_power_of_two().then_some(Self { align })
    }

    fn layout(&self, bytes: usize) -> Result<Layout, DeviceError> {
        if bytes == 0 {
            return Err(DeviceError::InvalidSize { bytes });
        }
        Layout::from_size_align(bytes, self.align).map_err(|_| DeviceError::InvalidSize { bytes })
    }

    /// The bytes of a live allocation as a host slice.
    ///
    /// # Safety
    /// `addr .. addr + len` lies inside a live allocation of a `HostDevice`, and nothing else
    /// accesses it while the slice lives.
    pub unsafe fn slice_mut<'a>(addr: u64, len: usize) -> &'a mut [u8] {
        // SAFETY: the caller promises the range is inside a live host allocation, whose
        // provenance `alloc` exposed, and that nothing else aliases it meanwhile.
        unsafe {
            std::slice::from_raw_parts_mut(
                std::ptr::with_exposed_provenance_mut(addr as usize),
                len,
            )
        }
    }
}

impl Device for HostDevice {
    fn name(&self) -> String {
        "host".to_string()
    }

    fn alignment(&self) -> usize {
        self.align
    }

    fn alloc(&self, bytes: usize) -> Result<u64, DeviceError> {
        let layout = self.layout(bytes)?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(DeviceError::OutOfMemory { bytes });
        }
        Ok(ptr.expose_provenance() as u64)
    }

    unsafe fn free(&self, addr: u64, bytes: usize) -> Result<(), DeviceError> {
        let layout = self.layout(bytes)?;
        if addr == 0 {
            return Err(DeviceError::UnknownAddress { addr });
        }
        // SAFETY: the caller passes a live allocation of this device with its size (the
        // `Device::free` contract); `alloc` made it with this layout and exposed it.
        unsafe { alloc::dealloc(std::ptr::with_exposed_provenance_mut(addr as usize), layout) };
        Ok(())
    }

    unsafe fn write(&self, addr: u64, data: &[u8]) -> Result<(), DeviceError> {
        let dst: *mut u8 = std::ptr::with_exposed_provenance_mut(addr as usize);
        // SAFETY: the caller promises `addr .. addr + data.len()` is inside a live allocation
        // (the `Device::write` contract); a host slice never overlaps device memory we own.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len()) };
        Ok(())
    }

    unsafe fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), DeviceError> {
        let src: *const u8 = std::ptr::with_exposed_provenance(addr as usize);
        // SAFETY: as `write`, for `addr .. addr + out.len()`.
        unsafe { std::ptr::copy_nonoverlapping(src, out.as_mut_ptr(), out.len()) };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_zeroed_round_trip() {
        let d = HostDevice::new();
        let a = d.alloc(1000).unwrap();
        assert_eq!(a % 256, 0);
        // SAFETY: `a` is a live 1000-byte allocation of `d`; every access is inside it.
        unsafe {
            d.write(a + 10, &[1, 2, 3]).unwrap();
            let mut out = [0u8; 4];
            d.read(a + 9, &mut out).unwrap();
            assert_eq!(out, [0, 1, 2, 3]);
            d.free(a, 1000).unwrap();
        }
        assert!(d.alloc(0).is_err());
        assert!(HostDevice::with_alignment(3).is_none());
        assert_eq!((d.name(), d.alignment()), ("host".to_string(), 256));
    }

    #[test]
    fn a_wider_alignment_reaches_every_allocation() {
        let d = HostDevice::with_alignment(4096).expect("a power of two");
        assert_eq!(d.alignment(), 4096);
        let addrs: Vec<u64> = (1..5).map(|i| d.alloc(i * 100).unwrap()).collect();
        assert!(addrs.iter().all(|a| a % 4096 == 0), "{addrs:x?}");
        for (i, a) in addrs.into_iter().enumerate() {
            // SAFETY: each address is a live allocation of `d` of this size, freed once.
            unsafe { d.free(a, (i + 1) * 100) }.unwrap();
        }
    }
}
