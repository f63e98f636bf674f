//! Launch shapes of `gpu.cu`'s kernels and the bounds check a launch makes of its views
//! (feature `cuda`).

use crate::ops::Result;
use arena_runtime::cudarc::driver::LaunchConfig;
use arena_runtime::{CudaDevice, View};

/// A launch of `n` independent elements, 256 threads a block (grid-stride loops cover the
/// rest).
pub fn elementwise(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(256).clamp(1, 65535) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// One warp per output value.
pub fn warps(outputs: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((outputs * 32).div_ceil(256) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The views' lengths checked against what a launch will touch: a kernel indexes raw
/// pointers, so this is the bounds check it does not do.
pub fn need<T: arena_runtime::dtype::Element>(
    v: &View<'_, T, CudaDevice>,
    n: usize,
    what: &str,
) -> Result<()> {
    if v.len() < n {
        return Err(format!(
            "{what}: `{}` holds {} values, the op needs {n}",
            v.name(),
            v.len()
        )
        .into());
    }
    Ok(())
}
