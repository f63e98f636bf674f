//! The one check of where an allocated arena's buffers landed: what the CLI runs after
//! every allocation and what the tests assert, so the contract is stated once.

use crate::arena::Allocated;
use crate::device::Device;
use crate::error::PlacementError;
use crate::layout::Arena;

impl<L: Arena, D: Device> Allocated<L, D> {
    /// Checks the placement contract: every buffer at exactly its sized bytes, NULL exactly
    /// when empty, aligned to [`Self::alignment`], inside one of the arena's allocations,
    /// and disjoint from every other buffer. The first breach is the error.
    pub fn check_placement(&self) -> Result<(), PlacementError> {
        let sized = L::byte_sizes(self.sizes());
        let mut spans = Vec::new();
        for (p, &bytes) in self.placements().iter().zip(&sized) {
            let buffer = p.decl.name;
            if p.bytes != bytes {
                return Err(PlacementError::WrongSize {
                    buffer,
                    placed: p.bytes,
                    sized: bytes,
                });
            }
            if (p.addr == 0) != (bytes == 0) {
                return Err(PlacementError::NullMismatch { buffer, bytes });
            }
            if bytes == 0 {
                continue;
            }
            if p.addr % self.alignment() as u64 != 0 {
                return Err(PlacementError::Misaligned {
                    buffer,
                    addr: p.addr,
                    align: self.alignment(),
                });
            }
            let end = p.addr.checked_add(bytes as u64);
            let inside = self
                .allocations()
                .iter()
                .any(|a| p.addr >= a.addr && end.is_some_and(|e| e <= a.addr + a.bytes as u64));
            if !inside {
                return Err(PlacementError::Outside {
                    buffer,
                    addr: p.addr,
                    bytes,
                });
            }
            spans.push((p.addr, p.addr + bytes as u64, buffer));
        }
        spans.sort_unstable();
        for w in spans.windows(2) {
            if w[0].1 > w[1].0 {
                return Err(PlacementError::Overlap {
                    first: w[0].2,
                    second: w[1].2,
                });
            }
        }
        Ok(())
    }
}
