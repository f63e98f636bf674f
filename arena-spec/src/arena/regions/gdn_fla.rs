use crate::arena::constants::FLA_CHUNK;
use crate::config::ModelConfig;
use arena_runtime::dtype::bf16;
use arena_runtime::{DevicePtr, Regions};

/// GDN FLA chunked-prefill scratch, `W | U | S | uc | gc` back to back, for `M` tokens in
/// chunks of `FLA_CHUNK`. Only the key and value head dims 128 run these kernels; the arena
/// gates the buffer on that.
#[derive(Regions)]
#[regions(
    const,
    layout = GdnFlaLayout,
    inputs(config: &ModelConfig, max_batch_tokens: usize),
    derived(chunks = ceil_div(max_batch_tokens, FLA_CHUNK), hv = config.linear_num_value_heads)
)]
pub struct GdnFlaScratch {
    /// `W = A·(β·K)` per token and value head.
    #[region(shape = [max_batch_tokens, hv, config.linear_key_head_dim])]
    pub w: DevicePtr<bf16>,
    /// `U = A·(β·V)` per token and value head.
    #[region(shape = [max_batch_tokens, hv, config.linear_value_head_dim])]
    pub u: DevicePtr<bf16>,
    /// The recurrent state at each chunk boundary, FP32.
    #[region(shape = [chunks, hv, config.linear_key_head_dim, config.linear_value_head_dim])]
    pub s: DevicePtr<f32>,
    /// `U` corrected by the chunk's incoming state.
    #[region(shape = [max_batch_tokens, hv, config.linear_value_head_dim])]
    pub uc: DevicePtr<bf16>,
    /// Cumulative gate (log decay) within each chunk, FP32.
    #[region(shape = [max_batch_tokens, hv])]
    pub gc: DevicePtr<f32>,
}
