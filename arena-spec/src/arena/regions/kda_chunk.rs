use crate::arena::constants::FLA_CHUNK;
use crate::config::ModelConfig;
use arena_runtime::dtype::bf16;
use arena_runtime::{DevicePtr, Regions};

/// Beyond the seeds: Kimi delta attention's chunked-prefill scratch, `W | U | S | uc | gc`
/// back to back for `M` tokens in chunks of `FLA_CHUNK`: the seeds' GDN FLA layout
/// (`GdnFlaScratch`) at KDA's heads, with the cumulative decay kept per channel (KDA's gate
/// is `[heads, head_dim]` a token where GDN's is one value a head), as FLA's `chunk_kda`
/// keeps it (vLLM `vllm/model_executor/layers/fla/ops/kda.py`). Chosen here: the layout and
/// element types follow the GDN scratch; key and value heads are the same heads in KDA.
#[derive(Regions)]
#[regions(
    const,
    layout = KdaChunkLayout,
    inputs(config: &ModelConfig, max_batch_tokens: usize),
    derived(
        chunks = ceil_div(max_batch_tokens, FLA_CHUNK),
        heads = config.kda_heads,
        dim = config.kda_head_dim
    )
)]
pub struct KdaChunkScratch {
    /// `W = A·(β·K)` per token and head.
    #[region(shape = [max_batch_tokens, heads, dim])]
    pub w: DevicePtr<bf16>,
    /// `U = A·(β·V)` per token and head.
    #[region(shape = [max_batch_tokens, heads, dim])]
    pub u: DevicePtr<bf16>,
    /// The recurrent state at each chunk boundary, FP32.
    #[region(shape = [chunks, heads, dim, dim])]
    pub s: DevicePtr<f32>,
    /// `U` corrected by the chunk's incoming state.
    #[region(shape = [max_batch_tokens, heads, dim])]
    pub uc: DevicePtr<bf16>,
    /// Cumulative decay (log) within each chunk, per channel, FP32.
    #[region(shape = [max_batch_tokens, heads, dim])]
    pub gc: DevicePtr<f32>,
}
