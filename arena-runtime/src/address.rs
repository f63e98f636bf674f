//! `AddressDevice`: addresses without memory, for planning an arena and checking its placement
//! without the bytes it plans.

use crate::device::Device;
use crate::error::DeviceError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Where the address space starts: far from 0, so no address is NULL, and from any host
/// allocation a test might confuse it with. Chosen here.
const FIRST_ADDRESS: u64 = 1 << 44;

#[derive(Debug, Default)]
struct Extents {
    next: u64,
    /// Live allocations: address to bytes.
    live: HashMap<u64, usize>,
}

/// A device that hands out aligned, never-reused addresses and records each allocation's
/// extent, with no memory behind them: allocating a 15 GiB arena on it costs a few
/// microseconds and no memory, and `Allocated::check_placement` checks the same placement a
/// real device would get (sizes, alignment, disjointness, gated buffers NULL). Reading,
/// writing and filling are refused (`DeviceError::Unsupported`), so guard bands, poison mode
/// and views' copies are errors on it, never silent.
///
/// What `arena plan` uses unless a device is asked for. Clones share one address space.
#[derive(Debug, Clone)]
pub struct AddressDevice {
    align: usize,
    extents: Arc<Mutex<Extents>>,
}

impl Default for AddressDevice {
    fn default() -> Self {
        Self {
            align: 256,
            extents: Arc::new(Mutex::new(Extents {
                next: FIRST_ADDRESS,
                live: HashMap::new(),
            })),
        }
    }
}

impl AddressDevice {
    /// Its [`Device::name`], by which a report tells a placement checked without memory.
    pub const NAME: &'static str = "addresses only (no memory)";

    /// Addresses aligned to 256 bytes, as a CUDA allocation's are.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes allocated and not yet freed.
    pub fn live_bytes(&self) -> usize {
        self.lock().live.values().sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Extents> {
        // A panic while the lock is held leaves plain numbers behind: still consistent.
        self.extents.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Device for AddressDevice {
    fn name(&self) -> String {
        Self::NAME.to_string()
    }

    fn alignment(&self) -> usize {
        self.align
    }

    fn alloc(&self, bytes: usize) -> Result<u64, DeviceError> {
        if bytes == 0 {
            return Err(DeviceError::InvalidSize { bytes });
        }
        let mut e = self.lock();
        let addr = e.next;
        let end = (bytes as u64)
            .checked_add(self.align as u64 - 1)
            .map(|b| b & !(self.align as u64 - 1))
            .and_then(|b| addr.checked_add(b))
            .ok_or(DeviceError::OutOfMemory { bytes })?;
        e.next = end;
        e.live.insert(addr, bytes);
        Ok(addr)
    }

    unsafe fn free(&self, addr: u64, bytes: usize) -> Result<(), DeviceError> {
        let mut e = self.lock();
        match e.live.get(&addr) {
            Some(&b) if b == bytes => {
                e.live.remove(&addr);
                Ok(())
            }
            _ => Err(DeviceError::UnknownAddress { addr }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_aligned_disjoint_and_freed_once() {
        let d = AddressDevice::new();
        let a = d.alloc(1000).unwrap();
        let b = d.alloc(1 << 40).unwrap();
        assert_eq!(a % 256, 0);
        assert!(b >= a + 1000 && b.is_multiple_of(256));
        assert_eq!(d.live_bytes(), 1000 + (1 << 40));
        // SAFETY: no memory is behind the addresses; free only checks the extent.
        unsafe {
            assert!(d.free(a, 999).is_err(), "the wrong size is refused");
            d.free(a, 1000).unwrap();
            assert!(d.free(a, 1000).is_err(), "a double free is refused");
            d.free(b, 1 << 40).unwrap();
        }
        assert_eq!(d.live_bytes(), 0);
        // SAFETY: `a` is freed; the device refuses before touching anything.
        let written = unsafe { d.write(a, &[1]) };
        assert!(matches!(written, Err(DeviceError::Unsupported(_))));
    }

    /// Each extent is rounded up to the alignment and no further, so consecutive allocations
    /// pack as a CUDA allocator's pages would; no address is NULL; the device names itself.
    #[test]
    fn extents_round_up_to_the_alignment_exactly() {
        let d = AddressDevice::new();
        assert_eq!(
            (d.name(), d.alignment()),
            (AddressDevice::NAME.to_string(), 256)
        );
        let a = d.alloc(256).unwrap();
        let b = d.alloc(255).unwrap();
        let c = d.alloc(1).unwrap();
        assert_ne!(a, 0, "no address is NULL");
        assert_eq!((b - a, c - b), (256, 256));
    }
}
