// An author's arena for one decoder step in three phases: the attention mixer, the FFN, the
// LM head. A buffer names the phase, or range of phases, it is live in; the rest are live
// for the whole step. Buffers of disjoint phases may share bytes in a shared slab.
use arena_runtime::{dtype::bf16, Arena, DevicePtr};

/// The model shapes the step arena reads.
#[derive(Debug, Clone)]
pub struct StepConfig {
    pub hidden: usize,
    pub intermediate: usize,
    pub vocab: usize,
}

/// The buffers of one decoder step, `M = max_batch_tokens`.
#[derive(Arena)]
#[arena(
    sizes = StepSizes,
    inputs(config: &StepConfig, max_batch_tokens: usize, logit_rows: usize),
    phases(attention, ffn, lm_head)
)]
pub struct StepArena {
    /// The residual stream, read and written by every phase: the whole step.
    #[buffer(shape = [max_batch_tokens, config.hidden])]
    pub hidden_states: DevicePtr<bf16>,
    /// Fused q|k|v projection output: read by attention only.
    #[buffer(shape = [max_batch_tokens, 3 * config.hidden], phase = attention)]
    pub qkv: DevicePtr<bf16>,
    /// Attention output before the O projection.
    #[buffer(shape = [max_batch_tokens, config.hidden], phase = attention)]
    pub attn_out: DevicePtr<bf16>,
    /// Per-token expert ids: the router writes them at the end of the attention phase and
    /// the experts read them, so they are live across both; at least 256 bytes.
    #[buffer(shape = [max_batch_tokens], min_bytes = 256, phase = attention..=ffn)]
    pub expert_ids: DevicePtr<u32>,
    /// Gate and up projections side by side.
    #[buffer(shape = [max_batch_tokens, 2 * config.intermediate], phase = ffn)]
    pub gate_up: DevicePtr<bf16>,
    /// The FFN's activation, the down projection's input.
    #[buffer(shape = [max_batch_tokens, config.intermediate], phase = ffn)]
    pub act: DevicePtr<bf16>,
    /// Logits of the sampled rows, after the last layer.
    #[buffer(shape = [logit_rows, config.vocab], phase = lm_head)]
    pub logits: DevicePtr<f32>,
}
