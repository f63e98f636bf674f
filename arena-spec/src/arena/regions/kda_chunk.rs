use crate::arena::constants::FLA_CHUNK;
use crate::config::ModelConfig;
use arena_runtime::dtype::bf16;
use arena_runtime::{DevicePtr, Regions};

/// Beyond the seeds: Kimi delta attention's chunked-prefill scratch, in chunks of `FLA_CHUNK`
/// tokens: what FLA's `chunk_kda` forward writes and keeps between its stages
/// (flash-linear-attention `fla/ops/kda/chunk_fwd.py`, which vLLM vendors under
/// `vllm/model_executor/layers/fla/ops/`): the cumulative per-channel decay `g`, the
/// intra-chunk `W`, `U` and decayed `q`/`k`, the two intra-chunk attention blocks `Aqk` and
/// `Akk` (FP32, `FLA_CHUNK` a token and head), the state at every chunk boundary (FP32) and the
/// state-corrected `U`. Chunk boundaries restart at every sequence of a varlen batch, so the
/// chunks are at most `ceil(M / FLA_CHUNK)` plus one partial chunk a sequence; chosen here:
/// `max_sequences` bounds the sequences (the arena passes `min(max_batch_size, M)`).
#[derive(Regions)]
#[regions(
    const,
    layout = KdaChunkLayout,
    inputs(config: &ModelConfig, max_batch_tokens: usize, max_sequences: usize),
    derived(
        chunks = ceil_div(max_batch_tokens, FLA_CHUNK) + max_sequences,
        heads = config.kda_heads,
        dim = config.kda_head_dim
    )
)]
pub struct KdaChunkScratch {
    /// Cumulative decay (log) within each chunk, per channel, FP32.
    #[region(shape = [max_batch_tokens, heads, dim])]
    pub gc: DevicePtr<f32>,
    /// `W = A·(β·K)` per token and head.
    #[region(shape = [max_batch_tokens, heads, dim])]
    pub w: DevicePtr<bf16>,
    /// `U = A·(β·V)` per token and head.
    #[region(shape = [max_batch_tokens, heads, dim])]
    pub u: DevicePtr<bf16>,
    /// `q` decayed to the chunk's start (`qg`).
    #[region(shape = [max_batch_tokens, heads, dim])]
    pub qg: DevicePtr<bf16>,
    /// `k` decayed to the chunk's end (`kg`).
    #[region(shape = [max_batch_tokens, heads, dim])]
    pub kg: DevicePtr<bf16>,
    /// The intra-chunk q·k block (`Aqk`), FP32, kept for the output stage.
    #[region(shape = [max_batch_tokens, heads, FLA_CHUNK])]
    pub aqk: DevicePtr<f32>,
    /// The intra-chunk k·k block (`Akk`), FP32.
    #[region(shape = [max_batch_tokens, heads, FLA_CHUNK])]
    pub akk: DevicePtr<f32>,
    /// The recurrent state at each chunk boundary, FP32.
    #[region(shape = [chunks, heads, dim, dim])]
    pub s: DevicePtr<f32>,
    /// `U` corrected by the chunk's incoming state (`v_new`).
    #[region(shape = [max_batch_tokens, heads, dim])]
    pub uc: DevicePtr<bf16>,
}
