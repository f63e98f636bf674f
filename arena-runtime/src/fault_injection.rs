//! The "fail at allocation n, nothing leaks" check, written once for any arena: what the
//! runtime's, the example arena's and the engine arena's tests all run.

use crate::arena::{AllocOptions, Allocated};
use crate::counting::CountingDevice;
use crate::device::Device;
use crate::error::{ArenaError, DeviceError};
use crate::layout::Arena;

impl<D: Device> CountingDevice<D> {
    /// Allocates `sizes` once per allocation the arena makes, failing the n-th each time,
    /// in per-buffer mode (one failure per non-empty buffer) and in slab mode. Each failure
    /// must leave nothing allocated and be an [`ArenaError::Alloc`] naming the buffer (or
    /// the slab) and the bytes asked, with the injected error as its source. Returns how
    /// many failures were checked, or the first broken promise.
    pub fn check_every_allocation_failure<L: Arena>(
        make: impl Fn() -> D,
        sizes: &L::Sizes,
    ) -> Result<usize, String> {
        let live: Vec<_> = L::BUFFERS
            .iter()
            .zip(L::byte_sizes(sizes))
            .filter(|(_, bytes)| *bytes > 0)
            .collect();
        let mut checked = 0;
        for (n, (decl, bytes)) in live.iter().enumerate().map(|(i, x)| (i + 1, x)) {
            let what = format!("buffer `{}`", decl.name);
            check_one::<L, D>(&make, sizes, AllocOptions::per_buffer(), n, &what, *bytes)?;
            checked += 1;
        }
        if !live.is_empty() {
            let slab = format!("the {}-buffer slab of {}", L::BUFFERS.len(), L::NAME);
            let device = CountingDevice::new(make());
            let total = Allocated::<L, _>::allocate(&device, sizes, AllocOptions::default())
                .map(|a| a.allocated_bytes())
                .map_err(|e| format!("the slab did not allocate without a fault: {e}"))?;
            if device.live_allocations() != 0 {
                return Err("dropping the arena left memory allocated".into());
            }
            check_one::<L, D>(&make, sizes, AllocOptions::default(), 1, &slab, total)?;
            checked += 1;
        }
        Ok(checked)
    }
}

fn check_one<L: Arena, D: Device>(
    make: &impl Fn() -> D,
    sizes: &L::Sizes,
    options: AllocOptions,
    n: usize,
    what: &str,
    bytes: usize,
) -> Result<(), String> {
    let device = CountingDevice::new(make());
    device.fail_at(n);
    let result = Allocated::<L, _>::allocate(&device, sizes, options);
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
