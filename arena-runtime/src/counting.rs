//! `CountingDevice<D>`: counts live allocations and injects failures, for leak tests, and
//! the fault-injection check run through it.

use crate::allocated::{AllocOptions, Allocated};
use crate::arena::Arena;
use crate::device::{Device, MemInfo};
use crate::error::{ArenaError, DeviceError};
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

// The "fail at allocation n, nothing leaks" check, written once for any arena: what the
// runtime's, the example arena's and the engine arena's tests all run.
impl<D: Device> CountingDevice<D> {
    /// Allocates `sizes` once per allocation the arena makes, failing the n-th each time,
    /// in per-buffer mode (one failure per non-empty buffer) and in slab mode. Each failure
    /// must leave nothing allocated and be an [`ArenaError::Alloc`] naming the buffer (or
    /// the slab) and the bytes asked, with the injected error as its source. Returns how
    /// many failures were checked, or the first broken promise.
    pub fn check_every_allocation_failure<A: Arena>(
        make: impl Fn() -> D,
        sizes: &A::Sizes,
    ) -> Result<usize, String> {
        let live: Vec<_> = A::BUFFERS
            .iter()
            .zip(A::byte_sizes(sizes))
            .filter(|(_, bytes)| *bytes > 0)
            .collect();
        let mut checked = 0;
        for (n, (decl, bytes)) in live.iter().enumerate().map(|(i, x)| (i + 1, x)) {
            let what = format!("buffer `{}`", decl.name);
            check_one::<A, D>(&make, sizes, AllocOptions::per_buffer(), n, &what, *bytes)?;
            checked += 1;
        }
        if !live.is_empty() {
            let slab = format!("the {}-buffer slab of {}", A::BUFFERS.len(), A::NAME);
            let device = CountingDevice::new(make());
            let total = Allocated::<A, _>::allocate(&device, sizes, AllocOptions::default())
                .map(|a| a.allocated_bytes())
                .map_err(|e| format!("the slab did not allocate without a fault: {e}"))?;
            if device.live_allocations() != 0 {
                return Err("dropping the arena left memory allocated".into());
            }
            check_one::<A, D>(&make, sizes, AllocOptions::default(), 1, &slab, total)?;
            checked += 1;
        }
        Ok(checked)
    }
}

fn check_one<A: Arena, D: Device>(
    make: &impl Fn() -> D,
    sizes: &A::Sizes,
    options: AllocOptions,
    n: usize,
    what: &str,
    bytes: usize,
) -> Result<(), String> {
    let device = CountingDevice::new(make());
    device.fail_at(n);
    let result = Allocated::<A, _>::allocate(&device, sizes, options);
    let leaked = device.live_allocations();
    match result {
        Ok(_) => Err(format!("failing allocation {n} ({what}) did not fail")),
        Err(_) if leaked != 0 => Err(format!(
            "failing allocation {n} ({what}) leaked {leaked} allocations"
        )),
        Err(ArenaError::Alloc {
            what: named,
            bytes: asked,
            source: DeviceError::Injected { index },
            ..
        }) if named == what && asked == bytes && index == n => Ok(()),
        Err(e) => Err(format!(
            "failing allocation {n}: expected an error naming {what} and {bytes} bytes, got: {e:?}"
        )),
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
