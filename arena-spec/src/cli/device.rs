//! `--device host|cuda:N`: allocate the arena on the chosen device and check it.

use super::common::CliError;
use arena_runtime::{Allocated, Device};
use arena_spec::{BufferArena, BufferSizes};

/// Where `plan` allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceChoice {
    Host,
    Cuda(usize),
}

impl std::str::FromStr for DeviceChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "host" => Ok(DeviceChoice::Host),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(DeviceChoice::Cuda)
                .ok_or_else(|| format!("`{s}` is not a device: use host or cuda:N")),
        }
    }
}

/// What allocating the arena showed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AllocSummary {
    pub device: String,
    /// Bytes of the device allocations (the slab, padding included).
    pub allocated_bytes: usize,
    /// How much the device's free memory dropped, where the device can tell.
    pub free_memory_drop: Option<usize>,
}

pub fn allocate_and_check(
    choice: DeviceChoice,
    sizes: &BufferSizes,
) -> Result<AllocSummary, CliError> {
    match choice {
        DeviceChoice::Host => check_on(arena_runtime::HostDevice::new(), sizes),
        #[cfg(feature = "cuda")]
        DeviceChoice::Cuda(n) => {
            let device = arena_runtime::CudaDevice::new(n)
                .map_err(|e| CliError::Usage(format!("cannot open cuda:{n}: {e}")))?;
            check_on(device, sizes)
        }
        #[cfg(not(feature = "cuda"))]
        DeviceChoice::Cuda(_) => Err(CliError::Usage(
            "this build has no CUDA support: rebuild with `--features cuda` to use --device cuda:N"
                .into(),
        )),
    }
}

fn check_on<D: Device>(device: D, sizes: &BufferSizes) -> Result<AllocSummary, CliError> {
    let name = device.name();
    let before = device.mem_info();
    let arena = BufferArena::allocate(device, sizes)?;
    let after = arena.device().mem_info();
    check_invariants(&arena, sizes)?;
    let allocated_bytes = arena.allocated_bytes();
    arena.release()?;
    let free_memory_drop = before
        .zip(after)
        .map(|(b, a)| b.free.saturating_sub(a.free));
    Ok(AllocSummary {
        device: name,
        allocated_bytes,
        free_memory_drop,
    })
}

/// Every buffer at its size, 256-byte aligned, disjoint; gated empty ones NULL.
fn check_invariants<D: Device>(
    arena: &Allocated<BufferArena, D>,
    sizes: &BufferSizes,
) -> Result<(), CliError> {
    let expected = <BufferArena as arena_runtime::Arena>::byte_sizes(sizes);
    let mut spans = Vec::new();
    for (p, &bytes) in arena.placements().iter().zip(&expected) {
        let fail = |what: &str| {
            Err(CliError::Usage(format!(
                "invariant broken: buffer `{}` {what}",
                p.decl.name
            )))
        };
        if p.bytes != bytes {
            return fail(&format!("has {} bytes, sized {bytes}", p.bytes));
        }
        if (p.addr == 0) != (bytes == 0) {
            return fail("is NULL exactly when it is not empty");
        }
        if p.addr % 256 != 0 {
            return fail("is not 256-byte aligned");
        }
        if bytes > 0 {
            spans.push((p.addr, p.addr + bytes as u64, p.decl.name));
        }
    }
    spans.sort();
    for w in spans.windows(2) {
        if w[0].1 > w[1].0 {
            return Err(CliError::Usage(format!(
                "invariant broken: `{}` overlaps `{}`",
                w[0].2, w[1].2
            )));
        }
    }
    Ok(())
}
