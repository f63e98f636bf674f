use crate::config::ModelConfig;
use arena_runtime::dtype::F8E4M3;
use arena_runtime::{DevicePtr, Regions};

/// The grouped FP8 MoE scratch: disjoint regions; the shared, gate, up and down phases reuse
/// them on one stream (the seeds). Rows are `M · top_k` (one per routed token copy; `ModelConfig::expert_fanout`); K is
/// the widest GEMM input of the expert path (`hidden` or the expert width). The regions and
/// their shapes are chosen here: the seeds name the layout, not its contents.
#[derive(Regions)]
#[regions(
    const,
    layout = MoeFp8ScratchLayout,
    inputs(config: &ModelConfig, max_batch_tokens: usize),
    derived(
        rows = max_batch_tokens * config.expert_fanout(),
        k = max(config.hidden_size, config.expert_width()),
        k_blocks = ceil_div(k, 128)
    )
)]
pub struct MoeFp8Scratch {
    /// FP8 activations grouped by expert, `[rows, K]`.
    #[region(shape = [rows, k])]
    pub act_fp8: DevicePtr<F8E4M3>,
    /// One FP32 scale per 128 activations, `[rows, K/128]`.
    #[region(shape = [rows, k_blocks])]
    pub act_scale: DevicePtr<f32>,
    /// The scales K-major, `[K/128, ceil16(rows)]`, for the block-scaled grouped GEMM.
    #[region(shape = [k_blocks, ceil16(rows)])]
    pub act_scale_kmajor: DevicePtr<f32>,
    /// Token copy index per grouped row.
    #[region(shape = [rows])]
    pub sorted_token_ids: DevicePtr<i32>,
    /// Start row of each expert's group, plus the end; one group per expert this GPU holds
    /// (`ModelConfig::local_experts`: all, or `num_experts / ep` on an expert-parallel rank).
    #[region(shape = [config.local_experts() + 1])]
    pub expert_offsets: DevicePtr<i32>,
    /// `(m, n, k)` of each expert's GEMM.
    #[region(shape = [config.local_experts(), 3])]
    pub problem_sizes: DevicePtr<i32>,
    /// A, B, C and scale pointers of each expert's GEMM.
    #[region(shape = [config.local_experts(), 4])]
    pub gemm_ptrs: DevicePtr<u64>,
}
