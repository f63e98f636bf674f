use crate::config::ModelConfig;
use arena_runtime::{DevicePtr, Regions};

/// Mamba-2 SSD chunked-scan scratch, `dt | dA_cumsum | CB`, for `M` tokens in chunks of
/// the config's `chunk_size`.
#[derive(Regions)]
#[regions(
    const,
    layout = SsdLayout,
    inputs(config: &ModelConfig, max_batch_tokens: usize),
    derived(chunk = config.mamba_chunk(), chunks = ceil_div(max_batch_tokens, chunk))
)]
pub struct SsdScratch {
    /// Softplus'd time step per head and position, FP32.
    #[region(shape = [config.mamba_num_heads, chunks, chunk])]
    pub dt: DevicePtr<f32>,
    /// Cumulative `dt · A` within each chunk, FP32.
    #[region(shape = [config.mamba_num_heads, chunks, chunk])]
    pub da_cumsum: DevicePtr<f32>,
    /// `C·Bᵀ` per chunk and group, FP32.
    #[region(shape = [chunks, config.mamba_n_groups, chunk, chunk])]
    pub cb: DevicePtr<f32>,
}
