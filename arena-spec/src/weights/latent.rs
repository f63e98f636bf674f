//! Multi-head latent attention's weights (DeepSeek-V3 and its kin, `DeepseekV3Attention`):
//! the low-rank q and kv projections, their norms, o, and DeepSeek-V3.2's indexer
//! (`DeepseekV32Indexer`).

use super::{WeightFormats, WeightLayers};
use crate::config::ModelConfig;
use arena_runtime::dtype::bf16;
use arena_runtime::{Arena, DevicePtr};

/// The MLA layers' projections and norms, one buffer a tensor, every layer's copy back to
/// back; matrices `u8` in the checkpoint's format, norms 16-bit.
#[derive(Arena, Debug, Clone, Copy)]
#[arena(
    sizes = LatentAttentionWeightsSizes,
    inputs(config: &ModelConfig, w: &WeightLayers, formats: &WeightFormats),
    docs(
        sizes = "Byte size of each MLA tensor, every layer's copy together.",
        from_config = "Each MLA tensor's size, in bytes.",
        total_bytes = "The sum: the MLA weights."
    )
)]
pub struct LatentAttentionWeights {
    /// `self_attn.q_a_proj.weight`, `[q_lora_rank, hidden]` a layer with a low-rank q.
    #[buffer(
        per_layer = w.mla_q_lora,
        shape = [formats.attention.linear_bytes(config.q_lora_rank, config.hidden_size)],
        gate = w.mla_q_lora > 0,
        tensor = "model.layers.{attention_layer}.self_attn.q_a_proj.weight"
    )]
    pub q_a_proj: DevicePtr<u8>,
    /// `self_attn.q_a_layernorm.weight`, `[q_lora_rank]`.
    #[buffer(per_layer = w.mla_q_lora, shape = [config.q_lora_rank], gate = w.mla_q_lora > 0, tensor = "model.layers.{attention_layer}.self_attn.q_a_layernorm.weight")]
    pub q_a_layernorm: DevicePtr<bf16>,
    /// `self_attn.q_b_proj.weight`, `[heads · (nope + rope), q_lora_rank]`.
    #[buffer(
        per_layer = w.mla_q_lora,
        shape = [formats.attention.linear_bytes(config.num_attention_heads * (config.qk_nope_head_dim + config.qk_rope_head_dim), config.q_lora_rank)],
        gate = w.mla_q_lora > 0,
        tensor = "model.layers.{attention_layer}.self_attn.q_b_proj.weight",
        split = out
    )]
    pub q_b_proj: DevicePtr<u8>,
    /// `self_attn.q_proj.weight`, `[heads · (nope + rope), hidden]` a layer without a low-rank q (Kimi-Linear).
    #[buffer(
        per_layer = w.mla_q_direct,
        shape = [formats.attention.linear_bytes(config.num_attention_heads * (config.qk_nope_head_dim + config.qk_rope_head_dim), config.hidden_size)],
        gate = w.mla_q_direct > 0,
        tensor = "model.layers.{attention_layer}.self_attn.q_proj.weight",
        split = out
    )]
    pub q_proj: DevicePtr<u8>,
    /// `self_attn.kv_a_proj_with_mqa.weight`, `[kv_lora_rank + rope, hidden]`.
    #[buffer(
        per_layer = w.mla,
        shape = [formats.attention.linear_bytes(config.kv_lora_rank + config.qk_rope_head_dim, config.hidden_size)],
        gate = w.mla > 0,
        tensor = "model.layers.{attention_layer}.self_attn.kv_a_proj_with_mqa.weight"
    )]
    pub kv_a_proj_with_mqa: DevicePtr<u8>,
    /// `self_attn.kv_a_layernorm.weight`, `[kv_lora_rank]`.
    #[buffer(per_layer = w.mla, shape = [config.kv_lora_rank], gate = w.mla > 0, tensor = "model.layers.{attention_layer}.self_attn.kv_a_layernorm.weight")]
    pub kv_a_layernorm: DevicePtr<bf16>,
    /// `self_attn.kv_b_proj.weight`, `[heads · (nope + v), kv_lora_rank]`.
    #[buffer(
        per_layer = w.mla,
        shape = [formats.attention.linear_bytes(config.num_attention_heads * (config.qk_nope_head_dim + config.v_head_dim), config.kv_lora_rank)],
        gate = w.mla > 0,
        tensor = "model.layers.{attention_layer}.self_attn.kv_b_proj.weight",
        split = out
    )]
    pub kv_b_proj: DevicePtr<u8>,
    /// `self_attn.o_proj.weight`, `[hidden, heads · v]`.
    #[buffer(
        per_layer = w.mla,
        shape = [formats.attention_out.linear_bytes(config.hidden_size, config.num_attention_heads * config.v_head_dim)],
        gate = w.mla > 0,
        tensor = "model.layers.{attention_layer}.self_attn.o_proj.weight",
        split = in
    )]
    pub o_proj: DevicePtr<u8>,
    /// DeepSeek-V3.2's `self_attn.indexer.wq_b.weight`, `[index heads · index_head_dim, q_lora_rank]`.
    #[buffer(
        per_layer = w.mla_indexer,
        shape = [formats.attention.linear_bytes(config.index_n_heads * config.index_head_dim, config.q_lora_rank)],
        gate = w.mla_indexer > 0,
        tensor = "model.layers.{attention_layer}.self_attn.indexer.wq_b.weight"
    )]
    pub indexer_wq_b: DevicePtr<u8>,
    /// `self_attn.indexer.wk.weight`, `[index_head_dim, hidden]`.
    #[buffer(
        per_layer = w.mla_indexer,
        shape = [formats.attention.linear_bytes(config.index_head_dim, config.hidden_size)],
        gate = w.mla_indexer > 0,
        tensor = "model.layers.{attention_layer}.self_attn.indexer.wk.weight"
    )]
    pub indexer_wk: DevicePtr<u8>,
    /// `self_attn.indexer.k_norm` (a LayerNorm): weight and bias, `[2, index_head_dim]`.
    #[buffer(per_layer = w.mla_indexer, shape = [2, config.index_head_dim], gate = w.mla_indexer > 0, tensor = ["model.layers.{attention_layer}.self_attn.indexer.k_norm.weight", "model.layers.{attention_layer}.self_attn.indexer.k_norm.bias"])]
    pub indexer_k_norm: DevicePtr<bf16>,
    /// `self_attn.indexer.weights_proj.weight`, `[index heads, hidden]`, 16-bit in every format (vLLM and SGLang build it with `quant_config=None`).
    #[buffer(per_layer = w.mla_indexer, shape = [config.index_n_heads, config.hidden_size], gate = w.mla_indexer > 0, tensor = "model.layers.{attention_layer}.self_attn.indexer.weights_proj.weight")]
    pub indexer_weights_proj: DevicePtr<bf16>,
}
