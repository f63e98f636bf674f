//! `CountingDevice<D>`: counts live allocations and injects failures, for leak tests.

use crate::device::{Device, MemInfo};
use crate::error::DeviceError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Debug, Default)]
struct Counters {
    /// Live allocations: address to bytes.
    live: HashMap<u64, usize>,
    allocs: usize,
    frees: usize,
    /// The allocation index (1-based, counted over this device's life) that fails.
    fail_at: Option<usize>,
}

/// Wraps a device and counts what goes through it. Clones share one set of counters, so a
/// test keeps a clone and reads the counters after handing the other to an arena.
///
/// A `free` of an address that is not live is refused (and counted), so a double free is
/// caught instead of reaching the inner device.
#[derive(Debug, Clone)]
pub struct CountingDevice<D> {
    inner: D,
    counters: Arc<Mutex<Counters>>,
}

impl<D: Device> CountingDevice<D> {
    pub fn new(inner: D) -> Self {
        Self {
            inner,
            counters: Arc::default(),
        }
    }

    fn counters(&self) -> MutexGuard<'_, Counters> {
        // A panic elsewhere cannot leave the counters half-updated; keep counting.
        self.counters.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Allocations made and not yet freed.
    pub fn live_allocations(&self) -> usize {
        self.counters().live.len()
    }

    /// Bytes of the live allocations.
    pub fn live_bytes(&self) -> usize {
        self.counters().live.values().sum()
    }

    /// Successful allocations so far.
    pub fn allocations(&self) -> usize {
        self.counters().allocs
    }

    /// Successful frees so far.
    pub fn frees(&self) -> usize {
        self.counters().frees
    }

    /// Makes the `n`-th call to `alloc` from now (1 = the next one) fail.
    pub fn fail_at(&self, n: usize) {
        let mut c = self.counters();
        c.fail_at = Some(c.allocs + n);
    }

    /// Cancels a pending `fail_at`.
    pub fn clear_failure(&self) {
        self.counters().fail_at = None;
    }

    pub fn inner(&self) -> &D {
        &self.inner
    }
}

impl<D: Device> Device for CountingDevice<D> {
    fn name(&self) -> String {
        format!("counting({})", self.inner.name())
    }

    fn alignment(&self) -> usize {
        self.inner.alignment()
    }

    fn alloc(&self, bytes: usize) -> Result<u64, DeviceError> {
        let mut c = self.counters();
        let index = c.allocs + 1;
        if c.fail_at == Some(index) {
            c.fail_at = None;
            return Err(DeviceError::Injected { index });
        }
        let addr = self.inner.alloc(bytes)?;
        c.allocs = index;
        c.live.insert(addr, bytes);
        Ok(addr)
    }

    unsafe fn free(&self, addr: u64, bytes: usize) -> Result<(), DeviceError> {
        let mut c = self.counters();
        match c.live.get(&addr) {
            Some(&b) if b == bytes => {}
            _ => return Err(DeviceError::UnknownAddress { addr }),
        }
        // SAFETY: the caller's promise, and the address is a live allocation of `inner` of
        // exactly these bytes (checked against the ledger above).
        unsafe { self.inner.free(addr, bytes) }?;
        c.live.remove(&addr);
        c.frees += 1;
        Ok(())
    }

    fn mem_info(&self) -> Option<MemInfo> {
        self.inner.mem_info()
    }

    unsafe fn write(&self, addr: u64, data: &[u8]) -> Result<(), DeviceError> {
        // SAFETY: forwarded with the caller's promise unchanged.
        unsafe { self.inner.write(addr, data) }
    }

    unsafe fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), DeviceError> {
        // SAFETY: forwarded with the caller's promise unchanged.
        unsafe { self.inner.read(addr, out) }
    }

    unsafe fn fill(&self, addr: u64, bytes: usize, value: u8) -> Result<(), DeviceError> {
        // SAFETY: forwarded with the caller's promise unchanged.
        unsafe { self.inner.fill(addr, bytes, value) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostDevice;

    #[test]
    fn counts_and_refuses_double_free() {
        let d = CountingDevice::new(HostDevice::new());
        let view = d.clone();
        let a = d.alloc(512).unwrap();
        assert_eq!((view.live_allocations(), view.live_bytes()), (1, 512));
        // SAFETY: `a` is a live allocation of `d`; the second free is refused, not performed.
        unsafe {
            d.free(a, 512).unwrap();
            assert_eq!(d.free(a, 512), Err(DeviceError::UnknownAddress { addr: a }));
        }
        assert_eq!((view.live_allocations(), view.frees()), (0, 1));
    }

    /// A device reporting memory, as a GPU does.
    struct WithMemory;
    impl Device for WithMemory {
        fn name(&self) -> String {
            "with-memory".into()
        }
        fn alloc(&self, _bytes: usize) -> Result<u64, DeviceError> {
            Ok(4096)
        }
        unsafe fn free(&self, _addr: u64, _bytes: usize) -> Result<(), DeviceError> {
            Ok(())
        }
        fn mem_info(&self) -> Option<MemInfo> {
            Some(MemInfo { free: 3, total: 7 })
        }
    }

    #[test]
    fn it_is_the_device_it_wraps_and_a_cleared_failure_does_not_fire() {
        let d = CountingDevice::new(WithMemory);
        assert_eq!(
            (d.name(), d.alignment()),
            ("counting(with-memory)".to_string(), 256),
            "the default alignment"
        );
        assert_eq!(d.mem_info(), Some(MemInfo { free: 3, total: 7 }));
        assert_eq!(
            Device::mem_info(&&d),
            d.mem_info(),
            "a reference forwards too"
        );
        let wide = CountingDevice::new(HostDevice::with_alignment(1024).unwrap());
        assert_eq!(
            (wide.name(), wide.alignment()),
            ("counting(host)".to_string(), 1024)
        );
        d.fail_at(1);
        d.clear_failure();
        assert_eq!(d.alloc(8), Ok(4096));
        assert_eq!(d.allocations(), 1);
    }

    #[test]
    fn injected_failure_hits_the_nth_call() {
        let d = CountingDevice::new(HostDevice::new());
        d.fail_at(2);
        let a = d.alloc(16).unwrap();
        assert_eq!(d.alloc(16), Err(DeviceError::Injected { index: 2 }));
        let b = d.alloc(16).unwrap();
        // SAFETY: `a` and `b` are live allocations of `d`, each freed once.
        unsafe {
            d.free(a, 16).unwrap();
            d.free(b, 16).unwrap();
        }
        assert_eq!(d.live_allocations(), 0);
    }
}
