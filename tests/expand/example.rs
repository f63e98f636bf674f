// The arena of the README: one buffer of each kind of declaration.
use arena_runtime::{dtype::bf16, Arena, DevicePtr};

/// The model shapes the example arena reads.
#[derive(Debug, Clone)]
pub struct ModelConfig {
    pub hidden_size: usize,
    pub num_experts: usize,
    pub adapter_max_rank: usize,
}

/// A sizing function with its own byte formula, checked as a `#[buffer]` formula is by
/// `size!`: plain `*` and `+` here would wrap silently in a release build.
pub fn scratch_bytes(
    config: &ModelConfig,
    max_seq_len: usize,
) -> Result<usize, arena_runtime::SizeError> {
    arena_runtime::size!(config.hidden_size * 4 + max_seq_len)
}

/// The GPU buffers of one forward pass, `M = max_batch_tokens`.
#[derive(Arena)]
#[arena(sizes = BufferSizes, inputs(config: &ModelConfig, max_batch_tokens: usize, max_seq_len: usize))]
pub struct BufferArena {
    /// Hidden states of the current pass, "[M, hidden]" · BF16.
    #[buffer(shape = [max_batch_tokens, config.hidden_size])]
    pub hidden_states: DevicePtr<bf16>,
    /// FP32 router logits; 256 bytes for a model without experts.
    #[buffer(shape = [max_batch_tokens, config.num_experts], min_bytes = 256)]
    pub gate_logits_f32: DevicePtr<f32>,
    /// LoRA shrink output; 0 when the model serves no adapters.
    #[buffer(shape = [max_batch_tokens, config.adapter_max_rank], gate = config.adapter_max_rank > 0)]
    pub lora_xa: DevicePtr<bf16>,
    /// Scratch with its own byte formula (C:\scratch), left out of the preflight total.
    #[buffer(bytes = scratch_bytes(config, max_seq_len), untracked)]
    pub side_scratch: DevicePtr<u8>,
}
