//! DeepSeek-V4's attention weights (`DeepseekV4Attention`: a low-rank q, one K=V head, the
//! grouped low-rank output, a sink a head) and its compressors (`DeepseekV4CSACompressor`
//! with the `DeepseekV4Indexer`'s own, `DeepseekV4HCACompressor`).

use super::{WeightFormats, WeightLayers};
use crate::config::ModelConfig;
use arena_runtime::dtype::bf16;
use arena_runtime::{Arena, DevicePtr};

/// DeepSeek-V4's attention and compressor tensors, one buffer a tensor, every layer's copy
/// back to back; matrices `u8` in the checkpoint's format, the rest 16-bit. Every V4 layer
/// has each of its attention's tensors: a file without `q_lora_rank`, `o_groups` or
/// `o_lora_rank` is an error naming the buffer (0 bytes, or a division by 0), not a model
/// sized without them.
#[derive(Arena, Debug, Clone, Copy)]
#[arena(
    sizes = CompressedAttentionWeightsSizes,
    inputs(config: &ModelConfig, w: &WeightLayers, formats: &WeightFormats),
    docs(
        sizes = "Byte size of each DeepSeek-V4 attention tensor, every layer's copy together.",
        from_config = "Each DeepSeek-V4 attention tensor's size, in bytes.",
        total_bytes = "The sum: the DeepSeek-V4 attention weights."
    )
)]
pub struct CompressedAttentionWeights {
    /// `self_attn.q_a_proj.weight`, `[q_lora_rank, hidden]`.
    #[buffer(
        per_layer = w.one_vector,
        shape = [formats.attention.linear_bytes(config.q_lora_rank, config.hidden_size)],
        gate = w.one_vector > 0
    )]
    pub q_a_proj: DevicePtr<u8>,
    /// `self_attn.q_a_norm.weight`, `[q_lora_rank]`.
    #[buffer(per_layer = w.one_vector, shape = [config.q_lora_rank], gate = w.one_vector > 0)]
    pub q_a_norm: DevicePtr<bf16>,
    /// `self_attn.q_b_proj.weight`, `[heads · head_dim, q_lora_rank]`.
    #[buffer(
        per_layer = w.one_vector,
        shape = [formats.attention.linear_bytes(config.num_attention_heads * config.head_dim(), config.q_lora_rank)],
        gate = w.one_vector > 0
    )]
    pub q_b_proj: DevicePtr<u8>,
    /// `self_attn.kv_proj.weight`, the one K=V head, `[head_dim, hidden]`.
    #[buffer(
        per_layer = w.one_vector,
        shape = [formats.attention.linear_bytes(config.head_dim(), config.hidden_size)],
        gate = w.one_vector > 0
    )]
    pub kv_proj: DevicePtr<u8>,
    /// `self_attn.kv_norm.weight`, `[head_dim]`.
    #[buffer(per_layer = w.one_vector, shape = [config.head_dim()], gate = w.one_vector > 0)]
    pub kv_norm: DevicePtr<bf16>,
    /// `self_attn.o_a_proj.weight`, each group's heads to its rank, `[groups · o_lora_rank, heads · head_dim / groups]`.
    #[buffer(
        per_layer = w.one_vector,
        shape = [formats.attention_out.linear_bytes(config.o_groups * config.o_lora_rank, config.num_attention_heads * config.head_dim() / config.o_groups)],
        gate = w.one_vector > 0
    )]
    pub o_a_proj: DevicePtr<u8>,
    /// `self_attn.o_b_proj.weight`, `[hidden, groups · o_lora_rank]`.
    #[buffer(
        per_layer = w.one_vector,
        shape = [formats.attention_out.linear_bytes(config.hidden_size, config.o_groups * config.o_lora_rank)],
        gate = w.one_vector > 0
    )]
    pub o_b_proj: DevicePtr<u8>,
    /// `self_attn.sinks`, one a head.
    #[buffer(per_layer = w.one_vector, shape = [config.num_attention_heads], gate = w.one_vector > 0)]
    pub sinks: DevicePtr<bf16>,
    /// The CSA compressor's `compressor.csa.kv_proj.weight`, overlapping windows, `[2 · head_dim, hidden]`.
    #[buffer(
        per_layer = w.csa,
        shape = [formats.attention.linear_bytes(2 * config.head_dim(), config.hidden_size)],
        gate = w.csa > 0
    )]
    pub csa_kv_proj: DevicePtr<u8>,
    /// `compressor.csa.gate_proj.weight`, `[2 · head_dim, hidden]`.
    #[buffer(
        per_layer = w.csa,
        shape = [formats.attention.linear_bytes(2 * config.head_dim(), config.hidden_size)],
        gate = w.csa > 0
    )]
    pub csa_gate_proj: DevicePtr<u8>,
    /// `compressor.csa.kv_norm.weight`, `[head_dim]`.
    #[buffer(per_layer = w.csa, shape = [config.head_dim()], gate = w.csa > 0)]
    pub csa_kv_norm: DevicePtr<bf16>,
    /// `compressor.csa.position_bias`, a learned bias a window slot, `[ratio, 2 · head_dim]`.
    #[buffer(per_layer = w.csa, shape = [config.index_ratio(), 2 * config.head_dim()], gate = w.csa > 0)]
    pub csa_position_bias: DevicePtr<bf16>,
    /// The CSA indexer's `compressor.csa.indexer.q_b_proj.weight`, `[index heads · index_head_dim, q_lora_rank]`.
    #[buffer(
        per_layer = w.csa_indexer,
        shape = [formats.attention.linear_bytes(config.index_n_heads * config.index_head_dim, config.q_lora_rank)],
        gate = w.csa_indexer > 0
    )]
    pub csa_indexer_q_b_proj: DevicePtr<u8>,
    /// `compressor.csa.indexer.kv_proj.weight`, `[2 · index_head_dim, hidden]`.
    #[buffer(
        per_layer = w.csa_indexer,
        shape = [formats.attention.linear_bytes(2 * config.index_head_dim, config.hidden_size)],
        gate = w.csa_indexer > 0
    )]
    pub csa_indexer_kv_proj: DevicePtr<u8>,
    /// `compressor.csa.indexer.gate_proj.weight`, `[2 · index_head_dim, hidden]`.
    #[buffer(
        per_layer = w.csa_indexer,
        shape = [formats.attention.linear_bytes(2 * config.index_head_dim, config.hidden_size)],
        gate = w.csa_indexer > 0
    )]
    pub csa_indexer_gate_proj: DevicePtr<u8>,
    /// `compressor.csa.indexer.kv_norm.weight`, `[index_head_dim]`.
    #[buffer(per_layer = w.csa_indexer, shape = [config.index_head_dim], gate = w.csa_indexer > 0)]
    pub csa_indexer_kv_norm: DevicePtr<bf16>,
    /// `compressor.csa.indexer.position_bias`, `[ratio, 2 · index_head_dim]`.
    #[buffer(per_layer = w.csa_indexer, shape = [config.index_ratio(), 2 * config.index_head_dim], gate = w.csa_indexer > 0)]
    pub csa_indexer_position_bias: DevicePtr<bf16>,
    /// `compressor.csa.indexer.weights_proj.weight`, `[index heads, hidden]`, 16-bit in every format.
    #[buffer(per_layer = w.csa_indexer, shape = [config.index_n_heads, config.hidden_size], gate = w.csa_indexer > 0)]
    pub csa_indexer_weights_proj: DevicePtr<bf16>,
    /// The HCA compressor's `compressor.hca.kv_proj.weight`, disjoint windows, `[head_dim, hidden]`.
    #[buffer(
        per_layer = w.hca,
        shape = [formats.attention.linear_bytes(config.head_dim(), config.hidden_size)],
        gate = w.hca > 0
    )]
    pub hca_kv_proj: DevicePtr<u8>,
    /// `compressor.hca.gate_proj.weight`, `[head_dim, hidden]`.
    #[buffer(
        per_layer = w.hca,
        shape = [formats.attention.linear_bytes(config.head_dim(), config.hidden_size)],
        gate = w.hca > 0
    )]
    pub hca_gate_proj: DevicePtr<u8>,
    /// `compressor.hca.kv_norm.weight`, `[head_dim]`.
    #[buffer(per_layer = w.hca, shape = [config.head_dim()], gate = w.hca > 0)]
    pub hca_kv_norm: DevicePtr<bf16>,
    /// `compressor.hca.position_bias`, `[ratio, head_dim]`.
    #[buffer(per_layer = w.hca, shape = [config.hca_compress_ratio, config.head_dim()], gate = w.hca > 0)]
    pub hca_position_bias: DevicePtr<bf16>,
}
