//! The `Device` trait: the few operations an arena needs from a memory backend.

use crate::error::DeviceError;

/// Free and total memory of a device, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemInfo {
    pub free: usize,
    pub total: usize,
}

/// A memory backend: raw byte allocations at device addresses.
///
/// The arena calls `alloc` only while it is being constructed and `free` only on release,
/// so a backend sees exactly one `free` per successful `alloc`.
pub trait Device {
    /// A short description for error messages (`host`, `cuda:0`, ...).
    fn name(&self) -> String;

    /// The alignment every address `alloc` returns is guaranteed to have.
    fn alignment(&self) -> usize {
        256
    }

    /// Allocates `bytes` (> 0) bytes and returns the device address.
    fn alloc(&self, bytes: usize) -> Result<u64, DeviceError>;

    /// Frees an allocation.
    ///
    /// # Safety
    /// `addr` was returned by `alloc` of this device for `bytes` bytes and is not freed yet;
    /// nothing uses the memory afterwards.
    unsafe fn free(&self, addr: u64, bytes: usize) -> Result<(), DeviceError>;

    /// Free and total memory, where the backend can tell.
    fn mem_info(&self) -> Option<MemInfo> {
        None
    }

    /// Copies host bytes to `addr` (used for guard bands).
    ///
    /// # Safety
    /// `addr .. addr + data.len()` lies inside a live allocation of this device.
    unsafe fn write(&self, addr: u64, data: &[u8]) -> Result<(), DeviceError> {
        let _ = (addr, data);
        Err(DeviceError::Unsupported("writing memory"))
    }

    /// Copies device bytes at `addr` to the host.
    ///
    /// # Safety
    /// `addr .. addr + out.len()` lies inside a live allocation of this device.
    unsafe fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), DeviceError> {
        let _ = (addr, out);
        Err(DeviceError::Unsupported("reading memory"))
    }
}

impl<D: Device + ?Sized> Device for &D {
    fn name(&self) -> String {
        (**self).name()
    }
    fn alignment(&self) -> usize {
        (**self).alignment()
    }
    fn alloc(&self, bytes: usize) -> Result<u64, DeviceError> {
        (**self).alloc(bytes)
    }
    unsafe fn free(&self, addr: u64, bytes: usize) -> Result<(), DeviceError> {
        // SAFETY: forwarded with the caller's promise unchanged.
        unsafe { (**self).free(addr, bytes) }
    }
    fn mem_info(&self) -> Option<MemInfo> {
        (**self).mem_info()
    }
    unsafe fn write(&self, addr: u64, data: &[u8]) -> Result<(), DeviceError> {
        // SAFETY: forwarded with the caller's promise unchanged.
        unsafe { (**self).write(addr, data) }
    }
    unsafe fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), DeviceError> {
        // SAFETY: forwarded with the caller's promise unchanged.
        unsafe { (**self).read(addr, out) }
    }
}
