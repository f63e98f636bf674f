//! What a family's layers hold beyond their widths, for the weights' parameter count: which
//! projections carry a bias, the q/k norms, the norms a layer, the FFN's shape, sinks and
//! router biases — the reference's attention, MoE and decoder-layer classes (transformers
//! 5.24; vLLM's module where transformers has none). A row without them
//! ([`super::FamilyRules::weights`] `None`) has its weights refused by name, never estimated.

/// Whether a projection carries a bias.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bias {
    /// Never (`bias=False`).
    Never,
    /// Always (`bias=True`: Qwen2's q, k and v).
    Always,
    /// Where the file's `attention_bias` is true (`bias=config.attention_bias`).
    AttentionBias,
    /// Where the file's `mlp_bias` is true (`bias=config.mlp_bias`).
    MlpBias,
}

/// The attention's q and k norms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QkNorm {
    /// None.
    None,
    /// q and k normed a head (`head_dim` each).
    PerHead,
    /// q and k normed whole (`heads · head_dim`, `kv_heads · head_dim`), the rank's heads.
    Whole,
    /// The same over the whole model's heads, on every rank: the rank's heads times tp (for
    /// kv heads replicated rather than split, at least the model's).
    WholeUnsplit,
}

/// A family's answers for the weights (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeightRules {
    /// q, k and v's bias.
    pub qkv_bias: Bias,
    /// o's bias.
    pub o_bias: Bias,
    /// The dense MLP's gate, up and down biases (`Never` but where the family's MLP reads
    /// `mlp_bias`: Llama's, Granite's, MiniCPM3's).
    pub mlp_bias: Bias,
    /// The q and k norms.
    pub qk_norm: QkNorm,
    /// The q and k norms exist only where the file's `use_qk_norm` is true (Cohere,
    /// GLM-4 MoE).
    pub qk_norm_switched: bool,
    /// Two more norms a layer where the file's `use_post_norm` is true (HyperCLOVA X's
    /// `post_norm1` and `post_norm2`: `ModelConfig::post_norms`).
    pub post_norms_switched: bool,
    /// Norm weights of `hidden_size` a layer: input and post-attention (2); Gemma's pre- and
    /// post-FFN too (4); Nemotron-H's one a block (1); Cohere's parallel block's one.
    pub norms_per_layer: usize,
    /// One more a layer where the model has per-layer inputs (Gemma 4's
    /// `post_per_layer_input_norm`).
    pub per_layer_input_norm: bool,
    /// This many more a layer where the model is MoE (Gemma 4's
    /// `pre_feedforward_layernorm_2`, `post_feedforward_layernorm_1` and `_2` beside its MoE
    /// block).
    pub moe_norms: usize,
    /// The FFN has a gate projection (SwiGLU); false for Nemotron-H's squared-ReLU up/down.
    pub gated_ffn: bool,
    /// Learned scalars of the dense MLP's activation a layer (Apertus's xIELU: `alpha_p`,
    /// `alpha_n`, 2); 0 for a fixed activation.
    pub activation_params: usize,
    /// Every layer has an FFN after its mixer; false for Nemotron-H and Mamba-2, whose FFNs
    /// (if any) are layers of their own.
    pub ffn_every_layer: bool,
    /// The MoE block runs beside a dense MLP in the same layer (Gemma 4's
    /// `enable_moe_block`, the MLP held as its shared expert), with Gemma 4's router.
    pub moe_beside_dense: bool,
    /// `shared_expert_gate` (Qwen3-Next, Qwen3.5-MoE).
    pub shared_expert_gate: bool,
    /// A sink a head (`GptOssAttention.sinks`).
    pub sinks: bool,
    /// Sinks on the sliding-window layers only (`MiMoV2FlashAttention`: `is_swa`).
    pub sinks_sliding_only: bool,
    /// Biases on the experts' projections and the router (`GptOssExperts`,
    /// `GptOssTopKRouter`).
    pub expert_bias: bool,
    /// `e_score_correction_bias` is a parameter (`LagunaTopKRouter`).
    pub router_bias: bool,
    /// `e_score_correction_bias` is a buffer (`register_buffer`: DeepSeek-V3's
    /// `DeepseekV3TopkRouter` and the classes built on it, `Glm4MoeTopkRouter`,
    /// `KimiLinear`'s, `MiniMaxM2SparseMoeBlock`, `NemotronHTopkRouter`), kept in FP32
    /// beside the weights.
    pub router_bias_buffer: bool,
    /// A norm of the routed block's output on each MoE layer (A.X-K1's
    /// `mlp.post_mlp_layernorm`).
    pub moe_post_norm: bool,
    /// The norms are LayerNorms with a bias beside each weight (StableLM's `nn.LayerNorm`):
    /// every norm a layer and the final one.
    pub norm_bias: bool,
    /// A bias a head on the attention's output gate (Beam's `self_attn.gate_bias`).
    pub output_gate_bias: bool,
    /// A learned absolute position embedding of `max_position_embeddings` plus this many rows
    /// (GPT-2's `wpe`: 0); `None` for a model without one.
    pub position_rows_beyond_context: Option<usize>,
    /// The output head has a bias (GPT-J's `lm_head`, an `nn.Linear` with its default bias).
    pub head_bias: bool,
    /// A norm of the embedding's output before the first layer (BLOOM's
    /// `word_embeddings_layernorm`), with a bias where `norm_bias`.
    pub embedding_norm: bool,
    /// How the family's checkpoints name their tensors against the names the weight
    /// declarations give (`#[buffer(tensor = ...)]`: the names of transformers' Llama, Qwen
    /// and Qwen-MoE modules in their `save_pretrained` checkpoints): `None` where the
    /// family's names are not declared yet, so its checkpoints are refused by name rather
    /// than read with names that may be wrong; else the renames, each `(declared, stored)`
    /// a piece of a declared name and what the family's checkpoints write in its place,
    /// applied in order (`&[]`: the declared names as they are).
    pub checkpoint_names: Option<&'static [(&'static str, &'static str)]>,
    /// Tensors the family's checkpoints store fused where the weight declarations hold them
    /// apart: `(stored, parts)`, a piece of the stored tensor's name and the pieces of the
    /// declared names of its row blocks, in order (Phi-3's `qkv_proj` for `q_proj`, `k_proj`,
    /// `v_proj`). The first block's rows are its place's (all ranks' together); the others
    /// share the rest equally (k and v; gate and up).
    pub checkpoint_fused: &'static [(&'static str, &'static [&'static str])],
}

impl WeightRules {
    /// Llama's (`LlamaAttention`, `LlamaMLP`, `LlamaDecoderLayer`): `attention_bias` on q, k,
    /// v and o, no q/k norm, two norms a layer, a SwiGLU MLP after each attention. Rows state
    /// where theirs differ (`..WeightRules::LLAMA`).
    pub const LLAMA: WeightRules = WeightRules {
        qkv_bias: Bias::AttentionBias,
        o_bias: Bias::AttentionBias,
        mlp_bias: Bias::Never,
        qk_norm: QkNorm::None,
        qk_norm_switched: false,
        post_norms_switched: false,
        norms_per_layer: 2,
        per_layer_input_norm: false,
        moe_norms: 0,
        gated_ffn: true,
        activation_params: 0,
        ffn_every_layer: true,
        moe_beside_dense: false,
        shared_expert_gate: false,
        sinks: false,
        sinks_sliding_only: false,
        expert_bias: false,
        router_bias: false,
        router_bias_buffer: false,
        moe_post_norm: false,
        norm_bias: false,
        output_gate_bias: false,
        position_rows_beyond_context: None,
        head_bias: false,
        embedding_norm: false,
        checkpoint_names: None,
        checkpoint_fused: &[],
    };
}
