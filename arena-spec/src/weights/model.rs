//! The weights outside the token mixers and FFNs: the embedding, the output head, the norms,
//! Gemma 4's per-layer inputs and DeepSeek-V4's hyper-connections.

use super::{WeightFormats, WeightLayers};
use crate::config::ModelConfig;
use arena_runtime::dtype::bf16;
use arena_runtime::{Arena, DevicePtr};

/// The model's embedding, head and norms, each buffer one tensor (every layer's copy back to
/// back where `per_layer`), in 16 bits whatever the format (quantized checkpoints keep
/// these unquantized).
#[derive(Arena, Debug, Clone, Copy)]
#[arena(
    sizes = ModelWeightsSizes,
    inputs(config: &ModelConfig, w: &WeightLayers, formats: &WeightFormats),
    docs(
        sizes = "Byte size of the embedding, the head, the norms and the per-layer inputs.",
        from_config = "Each tensor's size, in bytes, every layer's copy together.",
        total_bytes = "The sum: these weights' bytes."
    )
)]
pub struct ModelWeights {
    /// `model.embed_tokens.weight`, `[vocabulary rows, hidden]` (the rank's rows; Molmo2's
    /// hold its `additional_vocab_size` rows too).
    #[buffer(
        per_layer = w.embedding,
        shape = [w.embedding_rows, config.hidden_size],
        gate = w.embedding > 0,
        tensor = "model.embed_tokens.weight",
        split = vocab
    )]
    pub embed_tokens: DevicePtr<bf16>,
    /// `lm_head.weight`, `[vocabulary rows, hidden]`; none where tied to the embedding.
    #[buffer(
        per_layer = w.lm_head,
        shape = [w.vocab_rows, config.hidden_size],
        gate = w.lm_head > 0,
        tensor = "lm_head.weight",
        split = vocab
    )]
    pub lm_head: DevicePtr<bf16>,
    /// The embedding's norm (BLOOM's `word_embeddings_layernorm.weight`), `[hidden]`.
    #[buffer(shape = [config.hidden_size], gate = w.embedding_norm > 0)]
    pub embed_norm: DevicePtr<bf16>,
    /// Its bias, `[hidden]`, where the norms have biases.
    #[buffer(shape = [config.hidden_size], gate = w.embedding_norm > 0 && w.layer_norm_bias > 0)]
    pub embed_norm_bias: DevicePtr<bf16>,
    /// `lm_head.bias`, `[vocabulary rows]`, where the head has a bias (GPT-J).
    #[buffer(shape = [w.vocab_rows], gate = w.head_bias > 0)]
    pub lm_head_bias: DevicePtr<bf16>,
    /// The learned position embedding (GPT-2's `transformer.wpe.weight`), `[positions,
    /// hidden]`; none where positions are rotary or absent.
    #[buffer(shape = [w.position_rows, config.hidden_size], gate = w.position_rows > 0)]
    pub embed_positions: DevicePtr<bf16>,
    /// `model.norm.weight`, `[hidden]`.
    #[buffer(per_layer = w.final_norm, shape = [config.hidden_size], gate = w.final_norm > 0, tensor = "model.norm.weight")]
    pub norm: DevicePtr<bf16>,
    /// Every layer's norm weights, `[norms a layer, hidden]` a layer (`input_layernorm`,
    /// `post_attention_layernorm`, and the family's others: `WeightLayers::norms_per_layer`);
    /// a model of fewer norms than the names holds the first names' (Llama's two of Gemma's
    /// four).
    #[buffer(
        per_layer = w.layers,
        shape = [w.norms_per_layer, config.hidden_size],
        gate = w.layers > 0 && w.norms_per_layer > 0,
        tensor = [
            "model.layers.{layer}.input_layernorm.weight",
            "model.layers.{layer}.post_attention_layernorm.weight",
            "model.layers.{layer}.pre_feedforward_layernorm.weight",
            "model.layers.{layer}.post_feedforward_layernorm.weight"
        ]
    )]
    pub layer_norms: DevicePtr<bf16>,
    /// `model.norm.bias`, `[hidden]`, where the norms are LayerNorms with a bias (StableLM).
    #[buffer(per_layer = w.final_norm_bias, shape = [config.hidden_size], gate = w.final_norm_bias > 0, tensor = "model.norm.bias")]
    pub norm_bias: DevicePtr<bf16>,
    /// Every layer's norm biases, `[norms a layer, hidden]` a layer, beside `layer_norms`
    /// where the norms are LayerNorms with a bias (StableLM).
    #[buffer(
        per_layer = w.layers,
        shape = [w.norms_per_layer, config.hidden_size],
        gate = w.layers > 0 && w.norms_per_layer > 0 && w.layer_norm_bias > 0,
        tensor = ["model.layers.{layer}.input_layernorm.bias", "model.layers.{layer}.post_attention_layernorm.bias"]
    )]
    pub layer_norm_biases: DevicePtr<bf16>,
    /// DeciLM's norms, `[hidden]` each, in block order, a block's `input_layernorm` (where
    /// its attention is not a no-op) before its `post_attention_layernorm` (where its FFN is
    /// not).
    #[buffer(per_layer = w.block_norms, shape = [config.hidden_size], gate = w.block_norms > 0)]
    pub block_norms: DevicePtr<bf16>,
    /// Gemma 4's `model.embed_tokens_per_layer.weight`, `[vocabulary rows, layers · P]`.
    #[buffer(
        per_layer = w.per_layer_embedding,
        shape = [w.vocab_rows, config.per_layer_inputs_width],
        gate = w.per_layer_embedding > 0
    )]
    pub embed_tokens_per_layer: DevicePtr<bf16>,
    /// Gemma 4's `model.per_layer_model_projection.weight`, `[layers · P, hidden]`.
    #[buffer(
        per_layer = w.per_layer_embedding,
        shape = [formats.other.linear_bytes(config.per_layer_inputs_width, config.hidden_size)],
        gate = w.per_layer_embedding > 0
    )]
    pub per_layer_model_projection: DevicePtr<u8>,
    /// Gemma 4's `model.per_layer_projection_norm.weight`, `[P]`.
    #[buffer(
        per_layer = w.per_layer_embedding,
        shape = [config.per_layer_input_dim],
        gate = w.per_layer_embedding > 0
    )]
    pub per_layer_projection_norm: DevicePtr<bf16>,
    /// Gemma 4's `layers.*.per_layer_input_gate.weight`, `[P, hidden]` a layer.
    #[buffer(
        per_layer = w.per_layer_inputs,
        shape = [formats.other.linear_bytes(config.per_layer_input_dim, config.hidden_size)],
        gate = w.per_layer_inputs > 0
    )]
    pub per_layer_input_gate: DevicePtr<u8>,
    /// Gemma 4's `layers.*.per_layer_projection.weight`, `[hidden, P]` a layer.
    #[buffer(
        per_layer = w.per_layer_inputs,
        shape = [formats.other.linear_bytes(config.hidden_size, config.per_layer_input_dim)],
        gate = w.per_layer_inputs > 0
    )]
    pub per_layer_projection: DevicePtr<u8>,
    /// DeepSeek-V4's hyper-connections around each layer's attention and FFN
    /// (`DeepseekV4HyperConnection`, `attn_hc` and `ffn_hc`): the mixing base, `[2, (2 + hc)
    /// · hc]` a layer…
    #[buffer(
        per_layer = w.hyper,
        shape = [2, (2 + config.hc_mult) * config.hc_mult],
        gate = w.hyper > 0
    )]
    pub hc_base: DevicePtr<bf16>,
    /// …the projection from the `hc` streams, `[(2 + hc) · hc, hc · hidden]` twice a layer…
    #[buffer(
        per_layer = w.hyper,
        shape = [2, formats.other.linear_bytes((2 + config.hc_mult) * config.hc_mult, config.hc_mult * config.hidden_size)],
        gate = w.hyper > 0
    )]
    pub hc_fn: DevicePtr<u8>,
    /// …and three scales, `[2, 3]` a layer.
    #[buffer(per_layer = w.hyper, shape = [2, 3], gate = w.hyper > 0)]
    pub hc_scale: DevicePtr<bf16>,
    /// The head's hyper-connection (`model.hc_head`): `hc_base`, `[hc]`…
    #[buffer(per_layer = w.hyper_head, shape = [config.hc_mult], gate = w.hyper_head > 0)]
    pub hc_head_base: DevicePtr<bf16>,
    /// …`hc_scale`, `[1]`…
    #[buffer(per_layer = w.hyper_head, shape = [1], gate = w.hyper_head > 0)]
    pub hc_head_scale: DevicePtr<bf16>,
    /// …and `hc_fn`, `[hc, hc · hidden]`.
    #[buffer(
        per_layer = w.hyper_head,
        shape = [formats.other.linear_bytes(config.hc_mult, config.hc_mult * config.hidden_size)],
        gate = w.hyper_head > 0
    )]
    pub hc_head_fn: DevicePtr<u8>,
}
