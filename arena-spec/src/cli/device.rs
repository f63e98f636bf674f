//! `--device host|cuda:N`: allocate the arena on the chosen device and check it.

use super::common::CliError;
use arena_runtime::Device;
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
    arena
        .check_placement()
        .map_err(|e| CliError::Usage(format!("invariant broken: {e}")))?;
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
