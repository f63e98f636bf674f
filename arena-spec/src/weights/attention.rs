//! The attention layers' weights (`self_attn.*`): q, k, v and o with their biases and norms,
//! gpt-oss's sinks and Laguna's output gate, for the layers at the model's widths and, where
//! the full-attention layers have widths of their own (Gemma 4, Laguna), for those apart.
//! MLA and DeepSeek-V4's attention are declared in `latent.rs` and `compressed.rs`.

use super::{WeightFormats, WeightLayers};
use crate::config::ModelConfig;
use arena_runtime::dtype::bf16;
use arena_runtime::{Arena, DevicePtr};

/// The attention layers' projections, biases and norms: one buffer a tensor, every layer's
/// copy back to back. Matrices are `u8` in the checkpoint's format
/// ([`WeightFormat::linear_bytes`](crate::config::WeightFormat::linear_bytes), scales included); biases, norms and sinks 16-bit.
/// A group without a tensor (no bias, no v where keys are values) has it 0 bytes and NULL.
#[derive(Arena, Debug, Clone, Copy)]
#[arena(
    sizes = AttentionWeightsSizes,
    inputs(config: &ModelConfig, w: &WeightLayers, formats: &WeightFormats),
    docs(
        sizes = "Byte size of each attention tensor, every layer's copy together.",
        from_config = "Each attention tensor's size, in bytes.",
        total_bytes = "The sum: the attention layers' weights."
    )
)]
pub struct AttentionWeights {
    /// `self_attn.q_proj.weight`, `[q, hidden]` a layer (q doubled where the output is gated).
    #[buffer(
        per_layer = w.attention.layers,
        shape = [formats.attention.linear_bytes(w.attention.q, config.hidden_size)],
        gate = w.attention.layers > 0 && w.attention.q > 0,
        tensor = "model.layers.{attention_layer}.self_attn.q_proj.weight",
        split = out
    )]
    pub q_proj: DevicePtr<u8>,
    /// `self_attn.k_proj.weight`, `[kv heads · head_dim, hidden]` a layer with its own keys.
    #[buffer(
        per_layer = w.attention.kv_layers,
        shape = [formats.attention.linear_bytes(w.attention.k, config.hidden_size)],
        gate = w.attention.kv_layers > 0 && w.attention.k > 0,
        tensor = "model.layers.{attention_layer}.self_attn.k_proj.weight",
        split = kv_out
    )]
    pub k_proj: DevicePtr<u8>,
    /// `self_attn.v_proj.weight`, `[kv heads · value head, hidden]` a layer with its own values.
    #[buffer(
        per_layer = w.attention.v_layers,
        shape = [formats.attention.linear_bytes(w.attention.v, config.hidden_size)],
        gate = w.attention.v_layers > 0 && w.attention.v > 0,
        tensor = "model.layers.{attention_layer}.self_attn.v_proj.weight",
        split = kv_out
    )]
    pub v_proj: DevicePtr<u8>,
    /// `self_attn.o_proj.weight`, `[hidden, heads · value head]` a layer.
    #[buffer(
        per_layer = w.attention.layers,
        shape = [formats.attention_out.linear_bytes(config.hidden_size, w.attention.o_in)],
        gate = w.attention.layers > 0 && w.attention.o_in > 0,
        tensor = "model.layers.{attention_layer}.self_attn.o_proj.weight",
        split = in
    )]
    pub o_proj: DevicePtr<u8>,
    /// `self_attn.q_proj.bias` where the family biases q.
    #[buffer(
        per_layer = w.attention.layers,
        shape = [w.attention.q_bias],
        gate = w.attention.layers > 0 && w.attention.q_bias > 0,
        tensor = "model.layers.{attention_layer}.self_attn.q_proj.bias",
        split = out
    )]
    pub q_bias: DevicePtr<bf16>,
    /// `self_attn.k_proj.bias`.
    #[buffer(
        per_layer = w.attention.kv_layers,
        shape = [w.attention.k_bias],
        gate = w.attention.kv_layers > 0 && w.attention.k_bias > 0,
        tensor = "model.layers.{attention_layer}.self_attn.k_proj.bias",
        split = kv_out
    )]
    pub k_bias: DevicePtr<bf16>,
    /// `self_attn.v_proj.bias`.
    #[buffer(
        per_layer = w.attention.v_layers,
        shape = [w.attention.v_bias],
        gate = w.attention.v_layers > 0 && w.attention.v_bias > 0,
        tensor = "model.layers.{attention_layer}.self_attn.v_proj.bias",
        split = kv_out
    )]
    pub v_bias: DevicePtr<bf16>,
    /// `self_attn.o_proj.bias`.
    #[buffer(
        per_layer = w.attention.layers,
        shape = [w.attention.o_bias],
        gate = w.attention.layers > 0 && w.attention.o_bias > 0,
        tensor = "model.layers.{attention_layer}.self_attn.o_proj.bias"
    )]
    pub o_bias: DevicePtr<bf16>,
    /// `self_attn.q_norm.weight`: a head's width, or all heads' (OLMo 3, MiniMax-M2).
    #[buffer(
        per_layer = w.attention.layers,
        shape = [w.attention.q_norm],
        gate = w.attention.layers > 0 && w.attention.q_norm > 0,
        tensor = "model.layers.{attention_layer}.self_attn.q_norm.weight"
    )]
    pub q_norm: DevicePtr<bf16>,
    /// `self_attn.k_norm.weight`, on the layers with their own keys.
    #[buffer(
        per_layer = w.attention.kv_layers,
        shape = [w.attention.k_norm],
        gate = w.attention.kv_layers > 0 && w.attention.k_norm > 0,
        tensor = "model.layers.{attention_layer}.self_attn.k_norm.weight"
    )]
    pub k_norm: DevicePtr<bf16>,
    /// `self_attn.sinks`, one logit a head (gpt-oss).
    #[buffer(
        per_layer = w.attention.layers,
        shape = [w.attention.sinks],
        gate = w.attention.layers > 0 && w.attention.sinks > 0,
        tensor = "model.layers.{attention_layer}.self_attn.sinks"
    )]
    pub sinks: DevicePtr<bf16>,
    /// `self_attn.gate_bias`, one a head: Beam's bias on its output gate.
    #[buffer(
        per_layer = w.attention.layers,
        shape = [w.attention.gate_bias],
        gate = w.attention.layers > 0 && w.attention.gate_bias > 0
    )]
    pub gate_bias: DevicePtr<bf16>,
    /// `self_attn.g_proj.weight`, Laguna's output gate, `[heads · gate a head, hidden]`.
    #[buffer(
        per_layer = w.attention.layers,
        shape = [formats.attention.linear_bytes(w.attention.output_gate, config.hidden_size)],
        gate = w.attention.layers > 0 && w.attention.output_gate > 0
    )]
    pub g_proj: DevicePtr<u8>,
    /// `self_attn.q_proj.weight` of the full-attention layers at their own widths (`WeightLayers::full`).
    #[buffer(
        per_layer = w.full.layers,
        shape = [formats.attention.linear_bytes(w.full.q, config.hidden_size)],
        gate = w.full.layers > 0 && w.full.q > 0
    )]
    pub full_q_proj: DevicePtr<u8>,
    /// `self_attn.k_proj.weight` of the full-attention layers at their own widths (`WeightLayers::full`).
    #[buffer(
        per_layer = w.full.kv_layers,
        shape = [formats.attention.linear_bytes(w.full.k, config.hidden_size)],
        gate = w.full.kv_layers > 0 && w.full.k > 0
    )]
    pub full_k_proj: DevicePtr<u8>,
    /// `self_attn.v_proj.weight` of the full-attention layers at their own widths (`WeightLayers::full`).
    #[buffer(
        per_layer = w.full.v_layers,
        shape = [formats.attention.linear_bytes(w.full.v, config.hidden_size)],
        gate = w.full.v_layers > 0 && w.full.v > 0
    )]
    pub full_v_proj: DevicePtr<u8>,
    /// `self_attn.o_proj.weight` of the full-attention layers at their own widths (`WeightLayers::full`).
    #[buffer(
        per_layer = w.full.layers,
        shape = [formats.attention_out.linear_bytes(config.hidden_size, w.full.o_in)],
        gate = w.full.layers > 0 && w.full.o_in > 0
    )]
    pub full_o_proj: DevicePtr<u8>,
    /// `self_attn.q_proj.bias` where the family biases q of the full-attention layers at their own widths (`WeightLayers::full`).
    #[buffer(
        per_layer = w.full.layers,
        shape = [w.full.q_bias],
        gate = w.full.layers > 0 && w.full.q_bias > 0
    )]
    pub full_q_bias: DevicePtr<bf16>,
    /// `self_attn.k_proj.bias` of the full-attention layers at their own widths (`WeightLayers::full`).
    #[buffer(
        per_layer = w.full.kv_layers,
        shape = [w.full.k_bias],
        gate = w.full.kv_layers > 0 && w.full.k_bias > 0
    )]
    pub full_k_bias: DevicePtr<bf16>,
    /// `self_attn.v_proj.bias` of the full-attention layers at their own widths (`WeightLayers::full`).
    #[buffer(
        per_layer = w.full.v_layers,
        shape = [w.full.v_bias],
        gate = w.full.v_layers > 0 && w.full.v_bias > 0
    )]
    pub full_v_bias: DevicePtr<bf16>,
    /// `self_attn.o_proj.bias` of the full-attention layers at their own widths (`WeightLayers::full`).
    #[buffer(
        per_layer = w.full.layers,
        shape = [w.full.o_bias],
        gate = w.full.layers > 0 && w.full.o_bias > 0
    )]
    pub full_o_bias: DevicePtr<bf16>,
    /// `self_attn.q_norm.weight`: a head's width of the full-attention layers at their own widths (`WeightLayers::full`).
    #[buffer(
        per_layer = w.full.layers,
        shape = [w.full.q_norm],
        gate = w.full.layers > 0 && w.full.q_norm > 0
    )]
    pub full_q_norm: DevicePtr<bf16>,
    /// `self_attn.k_norm.weight` of the full-attention layers at their own widths (`WeightLayers::full`).
    #[buffer(
        per_layer = w.full.kv_layers,
        shape = [w.full.k_norm],
        gate = w.full.kv_layers > 0 && w.full.k_norm > 0
    )]
    pub full_k_norm: DevicePtr<bf16>,
    /// `self_attn.sinks` of the full-attention layers at their own widths (`WeightLayers::full`).
    #[buffer(
        per_layer = w.full.layers,
        shape = [w.full.sinks],
        gate = w.full.layers > 0 && w.full.sinks > 0
    )]
    pub full_sinks: DevicePtr<bf16>,
    /// `self_attn.g_proj.weight` of the full-attention layers at their own widths (`WeightLayers::full`).
    #[buffer(
        per_layer = w.full.layers,
        shape = [formats.attention.linear_bytes(w.full.output_gate, config.hidden_size)],
        gate = w.full.layers > 0 && w.full.output_gate > 0
    )]
    pub full_g_proj: DevicePtr<u8>,
}
