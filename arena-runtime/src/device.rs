//! The `Device` trait: the few operations an arena needs from a memory backend.

use crate::error::DeviceError;

/// Free and total memory of a device, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemInfo {
    pub free: usize,
    pub total: usize,
}

/// Host-to-device copies in order through a backend's staging memory ([`Device::upload`]).
pub trait Upload {
    /// Copies `data` to `addr`. It may return before the bytes reach the device, but after
    /// `data` was read: the caller may reuse it at once. An error of an earlier copy may be
    /// returned by a later call or by [`Self::finish`].
    ///
    /// # Safety
    /// `addr .. addr + data.len()` lies inside a live allocation of this device, and stays
    /// live until [`Self::finish`] returns.
    unsafe fn copy(&mut self, addr: u64, data: &[u8]) -> Result<(), DeviceError>;

    /// Waits until every copy has reached the device.
    fn finish(self: Box<Self>) -> Result<(), DeviceError>;
}

/// [`Device::upload`]'s default: each copy one [`Device::write`].
struct WriteEach<'a, D: Device + ?Sized>(&'a D);

impl<D: Device + ?Sized> Upload for WriteEach<'_, D> {
    unsafe fn copy(&mut self, addr: u64, data: &[u8]) -> Result<(), DeviceError> {
        // SAFETY: the caller's promise (`Upload::copy`) is `Device::write`'s.
        unsafe { self.0.write(addr, data) }
    }

    fn finish(self: Box<Self>) -> Result<(), DeviceError> {
        Ok(())
    }
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

    /// A sequence of host-to-device copies (a checkpoint's tensors into the weight arenas)
    /// through staging memory of at most `staging_bytes` that the backend owns for the
    /// upload's lifetime. By default each copy is a [`Self::write`]; the CUDA backend stages
    /// through pinned host buffers, so the copy of one piece overlaps the staging of the next.
    fn upload(&self, staging_bytes: usize) -> Result<Box<dyn Upload + '_>, DeviceError> {
        let _ = staging_bytes;
        Ok(Box::new(WriteEach(self)))
    }

    /// Sets `bytes` bytes at `addr` to `value` (poison mode). By default through
    /// [`Self::write`], a MiB at a time; a GPU backend overrides it with a device memset,
    /// asynchronous on the backend's stream, so it is ordered as the kernels on that stream
    /// are (and may be recorded in a stream capture).
    ///
    /// # Safety
    /// `addr .. addr + bytes` lies inside a live allocation of this device.
    unsafe fn fill(&self, addr: u64, bytes: usize, value: u8) -> Result<(), DeviceError> {
        const CHUNK: usize = 1 << 20;
        let pattern = vec![value; bytes.min(CHUNK)];
        let mut done = 0;
        while done < bytes {
            let n = (bytes - done).min(CHUNK);
            // SAFETY: `done + n <= bytes`, inside the caller's range.
            unsafe { self.write(addr + done as u64, &pattern[..n]) }?;
            done += n;
        }
        Ok(())
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
    fn upload(&self, staging_bytes: usize) -> Result<Box<dyn Upload + '_>, DeviceError> {
        (**self).upload(staging_bytes)
    }

    unsafe fn fill(&self, addr: u64, bytes: usize, value: u8) -> Result<(), DeviceError> {
        // SAFETY: forwarded with the caller's promise unchanged.
        unsafe { (**self).fill(addr, bytes, value) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counting::CountingDevice;
    use crate::host::HostDevice;

    #[test]
    fn a_reference_to_a_device_is_the_same_device() {
        let inner = CountingDevice::new(HostDevice::new());
        let by_ref: &CountingDevice<HostDevice> = &inner;
        assert_eq!(Device::name(&by_ref), inner.name());
        assert_eq!(Device::alignment(&by_ref), inner.alignment());
        let addr = Device::alloc(&by_ref, 512).unwrap();
        assert_ne!(addr, 0);
        assert_eq!((inner.live_allocations(), inner.live_bytes()), (1, 512));
        let mut back = [0u8; 3];
        // SAFETY: `addr` is a live 512-byte allocation of `inner`; all accesses are inside it.
        unsafe {
            Device::write(&by_ref, addr + 5, &[7, 8, 9]).unwrap();
            Device::read(&by_ref, addr + 5, &mut back).unwrap();
            Device::free(&by_ref, addr, 512).unwrap();
        }
        assert_eq!(back, [7, 8, 9]);
        assert_eq!(inner.live_allocations(), 0);
        assert_eq!(Device::mem_info(&by_ref), inner.mem_info());
    }

    /// The default upload writes each copy where it is asked, in order, through a reference
    /// to the device too.
    #[test]
    fn an_upload_copies_each_piece_to_its_address() {
        let device = HostDevice::new();
        let addr = device.alloc(64).unwrap();
        let by_ref = &device;
        let mut upload = Device::upload(&by_ref, 16).unwrap();
        let mut back = [0u8; 64];
        // SAFETY: every copy lies inside the live 64-byte allocation, freed after `finish`.
        unsafe {
            upload.copy(addr, &[1; 40]).unwrap();
            upload.copy(addr + 32, &[2; 32]).unwrap();
            upload.finish().unwrap();
            device.read(addr, &mut back).unwrap();
            device.free(addr, 64).unwrap();
        }
        assert_eq!(back[..32], [1; 32]);
        assert_eq!(back[32..], [2; 32]);
    }
}
