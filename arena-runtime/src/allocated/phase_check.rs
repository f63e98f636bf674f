//! The "run a step's phases in order and nothing live is clobbered" check, written once for
//! any arena: what the engine arena's and an author's arena's host tests run.

use crate::allocated::{Allocated, POISON_PATTERN};
use crate::arena::Arena;
use crate::device::Device;
use crate::phase::Phase as _;
use crate::reuse::Live;

impl<A: Arena, D: Device> Allocated<A, D> {
    /// Runs the declared phases in order over the arena's memory, through `Device::write`
    /// and `read`: as each phase begins it is poisoned ([`Self::poison_phase`]), every buffer
    /// that begins there must then hold the poison (a whole-step buffer is not poisoned) and
    /// is written with a byte of its own, and every buffer live in the phase must still hold
    /// its byte. So no byte of a live buffer is reused while it is live, and poisoning fills
    /// exactly the buffers that begin at a phase. Overwrites every buffer; for tests.
    /// Returns the first broken promise, naming the buffer and the phase.
    pub fn check_step(&self) -> Result<(), String> {
        // Each buffer's byte: 1..=251, never 0 nor the poison.
        let byte = |i: usize| (i % 251 + 1) as u8;
        let read = |addr: u64, bytes: usize| -> Result<Vec<u8>, String> {
            let mut out = vec![0u8; bytes];
            // SAFETY: `addr .. addr + bytes` is a buffer of this arena, which `self` keeps
            // allocated.
            unsafe { self.device().read(addr, &mut out) }.map_err(|e| e.to_string())?;
            Ok(out)
        };
        let live: Vec<_> = self
            .placements()
            .iter()
            .enumerate()
            .filter(|(_, p)| p.bytes > 0)
            .collect();
        for &step_phase in <A::Phase as crate::Phase>::ALL {
            let (phase, phase_name) = (step_phase.index(), step_phase.name());
            self.poison_phase(step_phase).map_err(|e| e.to_string())?;
            for &(i, p) in &live {
                if !p.decl.live.starts_at(phase) {
                    continue;
                }
                if p.decl.live != Live::WholeStep
                    && read(p.addr, p.bytes)?.iter().any(|&b| b != POISON_PATTERN)
                {
                    return Err(format!(
                        "`{}` is not poisoned as phase `{phase_name}` begins",
                        p.decl.name
                    ));
                }
                // SAFETY: as in `read`.
                unsafe { self.device().write(p.addr, &vec![byte(i); p.bytes]) }
                    .map_err(|e| e.to_string())?;
            }
            for &(i, p) in &live {
                if p.decl.live.contains(phase)
                    && read(p.addr, p.bytes)?.iter().any(|&b| b != byte(i))
                {
                    return Err(format!(
                        "`{}` was overwritten in phase `{phase_name}`",
                        p.decl.name
                    ));
                }
            }
        }
        Ok(())
    }
}
