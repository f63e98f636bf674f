//! The FFN weights: dense MLPs (and Gemma 4's double-wide ones), the routed experts with
//! their router, shared experts and the families' extras.

use super::{WeightFormats, WeightLayers};
use crate::config::ModelConfig;
use arena_runtime::dtype::bf16;
use arena_runtime::{Arena, DevicePtr};

/// The FFN tensors, one buffer a tensor, every layer's copy back to back; matrices and
/// experts `u8` in the checkpoint's format ([`WeightFormat::linear_bytes`](crate::config::WeightFormat::linear_bytes),
/// [`WeightFormat::experts_bytes`](crate::config::WeightFormat::experts_bytes)), routers, biases and scales 16-bit.
#[derive(Arena, Debug, Clone, Copy)]
#[arena(
    sizes = FfnWeightsSizes,
    inputs(config: &ModelConfig, w: &WeightLayers, formats: &WeightFormats),
    docs(
        sizes = "Byte size of each FFN tensor, every layer's copy together.",
        from_config = "Each FFN tensor's size, in bytes.",
        total_bytes = "The sum: the FFN weights."
    )
)]
pub struct FfnWeights {
    /// The dense MLP's `mlp.gate_proj.weight`, `[width, hidden]` (none for a squared-ReLU MLP).
    #[buffer(
        per_layer = w.dense.layers,
        shape = [formats.dense_ffn.linear_bytes(w.dense.width * w.gated_ffn, config.hidden_size)],
        gate = w.dense.layers > 0 && w.gated_ffn > 0,
        tensor = "model.layers.{dense_layer}.mlp.gate_proj.weight",
        split = out
    )]
    pub gate_proj: DevicePtr<u8>,
    /// The dense MLP's `mlp.up_proj.weight`, `[width, hidden]`.
    #[buffer(
        per_layer = w.dense.layers,
        shape = [formats.dense_ffn.linear_bytes(w.dense.width, config.hidden_size)],
        gate = w.dense.layers > 0,
        tensor = "model.layers.{dense_layer}.mlp.up_proj.weight",
        split = out
    )]
    pub up_proj: DevicePtr<u8>,
    /// The dense MLP's `mlp.down_proj.weight`, `[hidden, width]`.
    #[buffer(
        per_layer = w.dense.layers,
        shape = [formats.dense_ffn.linear_bytes(config.hidden_size, w.dense.width)],
        gate = w.dense.layers > 0,
        tensor = "model.layers.{dense_layer}.mlp.down_proj.weight",
        split = in
    )]
    pub down_proj: DevicePtr<u8>,
    /// The dense MLP's `mlp.gate_proj.bias`, `[width]` a layer, where it has biases
    /// (`WeightLayers::dense_bias`; none for a squared-ReLU MLP).
    #[buffer(
        per_layer = w.dense.layers,
        shape = [w.dense.width],
        gate = w.dense.layers > 0 && w.gated_ffn > 0 && w.dense_bias > 0,
        tensor = "model.layers.{dense_layer}.mlp.gate_proj.bias",
        split = out
    )]
    pub gate_bias: DevicePtr<bf16>,
    /// The dense MLP's `mlp.up_proj.bias`, `[width]` a layer, where it has biases.
    #[buffer(
        per_layer = w.dense.layers,
        shape = [w.dense.width],
        gate = w.dense.layers > 0 && w.dense_bias > 0,
        tensor = "model.layers.{dense_layer}.mlp.up_proj.bias",
        split = out
    )]
    pub up_bias: DevicePtr<bf16>,
    /// The dense MLP's `mlp.down_proj.bias`, `[hidden]` a layer, where it has biases.
    #[buffer(
        per_layer = w.dense.layers,
        shape = [config.hidden_size],
        gate = w.dense.layers > 0 && w.dense_bias > 0,
        tensor = "model.layers.{dense_layer}.mlp.down_proj.bias"
    )]
    pub down_bias: DevicePtr<bf16>,
    /// The dense MLP's learned activation scalars, `[n]` a layer (Apertus's xIELU:
    /// `mlp.act_fn.alpha_p` and `alpha_n`).
    #[buffer(
        per_layer = w.dense.layers,
        shape = [w.activation_params],
        gate = w.dense.layers > 0 && w.activation_params > 0
    )]
    pub act_fn: DevicePtr<bf16>,
    /// The Gemma 4's double-wide (KV-shared layers') MLP's `mlp.gate_proj.weight`, `[width, hidden]` (none for a squared-ReLU MLP).
    #[buffer(
        per_layer = w.dense_wide.layers,
        shape = [formats.dense_ffn.linear_bytes(w.dense_wide.width * w.gated_ffn, config.hidden_size)],
        gate = w.dense_wide.layers > 0 && w.gated_ffn > 0
    )]
    pub wide_gate_proj: DevicePtr<u8>,
    /// The Gemma 4's double-wide (KV-shared layers') MLP's `mlp.up_proj.weight`, `[width, hidden]`.
    #[buffer(
        per_layer = w.dense_wide.layers,
        shape = [formats.dense_ffn.linear_bytes(w.dense_wide.width, config.hidden_size)],
        gate = w.dense_wide.layers > 0
    )]
    pub wide_up_proj: DevicePtr<u8>,
    /// The Gemma 4's double-wide (KV-shared layers') MLP's `mlp.down_proj.weight`, `[hidden, width]`.
    #[buffer(
        per_layer = w.dense_wide.layers,
        shape = [formats.dense_ffn.linear_bytes(config.hidden_size, w.dense_wide.width)],
        gate = w.dense_wide.layers > 0
    )]
    pub wide_down_proj: DevicePtr<u8>,
    /// DeciLM's `mlp.gate_proj.weight`, `[width, hidden]` a block at the block's width, every
    /// block's back to back (block `i` at [`FfnBlocks::range`](super::FfnBlocks::range)).
    #[buffer(
        shape = [w.ffn_blocks.bytes(formats.dense_ffn, config.hidden_size, false)],
        gate = w.ffn_blocks.layers() > 0
    )]
    pub block_gate_proj: DevicePtr<u8>,
    /// DeciLM's `mlp.up_proj.weight`, `[width, hidden]` a block, as `block_gate_proj`.
    #[buffer(
        shape = [w.ffn_blocks.bytes(formats.dense_ffn, config.hidden_size, false)],
        gate = w.ffn_blocks.layers() > 0
    )]
    pub block_up_proj: DevicePtr<u8>,
    /// DeciLM's `mlp.down_proj.weight`, `[hidden, width]` a block, as `block_gate_proj`.
    #[buffer(
        shape = [w.ffn_blocks.bytes(formats.dense_ffn, config.hidden_size, true)],
        gate = w.ffn_blocks.layers() > 0
    )]
    pub block_down_proj: DevicePtr<u8>,
    /// The routed experts' `mlp.experts.gate_up_proj`, `[local experts, (1 + gated) · expert
    /// width, hidden]` a layer (the latent width where the experts run in one,
    /// [`ModelConfig::expert_io_width`]): gate and up each `[local experts, expert width, hidden]`
    /// with its own scales (a checkpoint's `gate_proj` and `up_proj`; vLLM's `w13` scales
    /// are `2 · ceil(width / block)` rows), the width padded as the format's engine pads it
    /// ([`WeightFormat::expert_width`](crate::config::WeightFormat::expert_width)).
    #[buffer(
        per_layer = w.moe,
        shape = [1 + w.gated_ffn, formats.experts.experts_bytes(config.local_experts(), formats.experts.expert_width(config.moe_intermediate_size), formats.experts.expert_hidden(config.expert_io_width()))],
        gate = w.moe > 0,
        tensor = ["model.layers.{moe_layer}.mlp.experts.{expert}.gate_proj.weight", "model.layers.{moe_layer}.mlp.experts.{expert}.up_proj.weight"],
        split = out
    )]
    pub experts_gate_up: DevicePtr<u8>,
    /// `mlp.experts.down_proj`, `[local experts, hidden, expert width]`, both padded as the
    /// format's engine pads them ([`WeightFormat::expert_hidden`](crate::config::WeightFormat::expert_hidden)).
    #[buffer(
        per_layer = w.moe,
        shape = [formats.experts.experts_bytes(config.local_experts(), formats.experts.expert_hidden(config.expert_io_width()), formats.experts.expert_width(config.moe_intermediate_size))],
        gate = w.moe > 0,
        tensor = "model.layers.{moe_layer}.mlp.experts.{expert}.down_proj.weight",
        split = in
    )]
    pub experts_down: DevicePtr<u8>,
    /// Latent MoE (Nemotron-3's `moe_latent_size`): `mixer.fc1_latent_proj.weight`,
    /// `[latent, hidden]`, the tokens projected into the space the routed experts run in
    /// (`NemotronHMoE`, whose experts are `[experts, width, latent]` and back); whole on every
    /// rank (chosen here: a small matrix, kept replicated rather than split).
    #[buffer(
        per_layer = w.moe,
        shape = [formats.experts.linear_bytes(config.moe_latent_size, config.hidden_size)],
        gate = w.moe > 0 && config.moe_latent_size > 0
    )]
    pub latent_in_proj: DevicePtr<u8>,
    /// `mixer.fc2_latent_proj.weight`, `[hidden, latent]`: the experts' output back to the
    /// hidden size.
    #[buffer(
        per_layer = w.moe,
        shape = [formats.experts.linear_bytes(config.hidden_size, config.moe_latent_size)],
        gate = w.moe > 0 && config.moe_latent_size > 0
    )]
    pub latent_out_proj: DevicePtr<u8>,
    /// The router's `mlp.gate.weight`, `[experts, hidden]` (every expert's row on every rank).
    #[buffer(per_layer = w.moe, shape = [config.num_experts, config.hidden_size], gate = w.moe > 0 && w.scaled_router == 0, tensor = "model.layers.{moe_layer}.mlp.gate.weight")]
    pub router: DevicePtr<bf16>,
    /// gpt-oss's `mlp.router.bias`, `[experts]`.
    #[buffer(per_layer = w.expert_bias, shape = [config.num_experts], gate = w.expert_bias > 0)]
    pub router_bias: DevicePtr<bf16>,
    /// gpt-oss's `mlp.experts.gate_up_proj_bias`, `[local experts, 2 · expert width]` (the
    /// width padded as the experts').
    #[buffer(per_layer = w.expert_bias, shape = [config.local_experts(), 2 * formats.experts.expert_width(config.moe_intermediate_size)], gate = w.expert_bias > 0)]
    pub experts_gate_up_bias: DevicePtr<bf16>,
    /// gpt-oss's `mlp.experts.down_proj_bias`, `[local experts, hidden]` (the hidden size
    /// padded as the experts').
    #[buffer(per_layer = w.expert_bias, shape = [config.local_experts(), formats.experts.expert_hidden(config.hidden_size)], gate = w.expert_bias > 0)]
    pub experts_down_bias: DevicePtr<bf16>,
    /// Laguna's `mlp.gate.e_score_correction_bias`, a learned parameter, `[experts]`.
    #[buffer(per_layer = w.router_bias, shape = [config.num_experts], gate = w.router_bias > 0, tensor = "model.layers.{moe_layer}.mlp.gate.e_score_correction_bias")]
    pub e_score_correction_bias: DevicePtr<bf16>,
    /// The router's `e_score_correction_bias` where the reference keeps it as a buffer, not a
    /// parameter (DeepSeek-V3 and its kin, GLM-4.5 and GLM-5, Kimi, MiniMax-M2,
    /// Nemotron-H: transformers' `register_buffer`, the oracle's `buffers_numel`), `[experts]`
    /// FP32 as checkpoints store it and engines load it. Untracked: allocated in the slab, out
    /// of `total_bytes`, so the parameter count stays the reference's.
    #[buffer(per_layer = w.router_bias_buffer, shape = [config.num_experts], gate = w.router_bias_buffer > 0, untracked, tensor = "model.layers.{moe_layer}.mlp.gate.e_score_correction_bias")]
    pub e_score_correction_bias_f32: DevicePtr<f32>,
    /// Gemma 4's `router.proj.weight`, `[experts, hidden]`.
    #[buffer(per_layer = w.scaled_router, shape = [config.num_experts, config.hidden_size], gate = w.scaled_router > 0)]
    pub scaled_router_proj: DevicePtr<bf16>,
    /// Gemma 4's `router.scale`, `[hidden]`, and `router.per_expert_scale`, `[experts]`, together.
    #[buffer(per_layer = w.scaled_router, shape = [config.hidden_size + config.num_experts], gate = w.scaled_router > 0)]
    pub scaled_router_scales: DevicePtr<bf16>,
    /// A.X-K1's `mlp.post_mlp_layernorm.weight`, `[hidden]` a MoE layer: a norm of the routed
    /// block's output (`AXK1MoE`).
    #[buffer(per_layer = w.moe_post_norm, shape = [config.hidden_size], gate = w.moe_post_norm > 0)]
    pub moe_post_norm: DevicePtr<bf16>,
    /// The shared experts' `mlp.shared_experts.gate_proj.weight`, `[shared width, hidden]`; Gemma 4's `mlp.gate_proj.weight` where its MoE block runs beside the MLP (the config's shared expert, `ModelConfig::shared_expert_intermediate_size`), and so `up_proj` and `down_proj` below.
    #[buffer(
        per_layer = w.moe,
        shape = [formats.shared_experts.linear_bytes(w.gated_ffn * config.shared_expert_intermediate_size, config.hidden_size)],
        gate = w.moe > 0 && w.gated_ffn > 0 && config.shared_expert_intermediate_size > 0,
        tensor = "model.layers.{moe_layer}.mlp.shared_expert.gate_proj.weight",
        split = out
    )]
    pub shared_gate_proj: DevicePtr<u8>,
    /// `mlp.shared_experts.up_proj.weight`, `[shared width, hidden]`.
    #[buffer(
        per_layer = w.moe,
        shape = [formats.shared_experts.linear_bytes(config.shared_expert_intermediate_size, config.hidden_size)],
        gate = w.moe > 0 && config.shared_expert_intermediate_size > 0,
        tensor = "model.layers.{moe_layer}.mlp.shared_expert.up_proj.weight",
        split = out
    )]
    pub shared_up_proj: DevicePtr<u8>,
    /// `mlp.shared_experts.down_proj.weight`, `[hidden, shared width]`.
    #[buffer(
        per_layer = w.moe,
        shape = [formats.shared_experts.linear_bytes(config.hidden_size, config.shared_expert_intermediate_size)],
        gate = w.moe > 0 && config.shared_expert_intermediate_size > 0,
        tensor = "model.layers.{moe_layer}.mlp.shared_expert.down_proj.weight",
        split = in
    )]
    pub shared_down_proj: DevicePtr<u8>,
    /// `mlp.shared_expert_gate.weight`, `[1, hidden]` (Qwen3-Next, Qwen3.5-MoE), 16-bit in
    /// every format (vLLM builds it with `quant_config=None`).
    #[buffer(
        per_layer = w.shared_expert_gate,
        shape = [1, config.hidden_size],
        gate = w.shared_expert_gate > 0,
        tensor = "model.layers.{moe_layer}.mlp.shared_expert_gate.weight"
    )]
    pub shared_expert_gate: DevicePtr<bf16>,
}
