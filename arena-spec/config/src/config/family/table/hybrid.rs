//! The rows of the families whose layers are not all softmax attention: Gated DeltaNet
//! (Qwen3-Next, Qwen3.5), lightning attention (MiniMax-M1), Kimi delta attention, LFM2's short
//! convolution (LFM2, LFM2-MoE), Mamba-2 (Nemotron-H, Mamba-2), DeciLM's per-block layers, and the synthetic
//! rows.

use super::*;

pub(super) const QWEN3_NEXT: FamilyRules = FamilyRules {
    model_type: "qwen3_next",
    reference: reference!("qwen3_next", "Qwen3NextConfig", "Qwen3NextForCausalLM"),
    mixers: Mixers::GatedDeltaNetHybrid,
    moe: Some(QWEN2_MOE),
    // Qwen3NextAttention: q_proj is heads · head_dim · 2 (modeling: 241–243).
    output_gate: Some(true),
    // Qwen3NextConfig.
    // Qwen3NextConfig: `full_attention_interval` 4 when no `layer_types`.
    defaults: &[
        ("head_dim", 256),
        ("full_attention_interval", 4),
        ("shared_expert_intermediate_size", 512),
        ("decoder_sparse_step", 1),
    ],
    // Qwen3NextAttention: Qwen3's with the gated q; the MoE's shared expert is gated
    // (`Qwen3NextSparseMoeBlock.shared_expert_gate`).
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        shared_expert_gate: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

pub(super) const QWEN35: FamilyRules = FamilyRules {
    model_type: "qwen3_5",
    text_model_type: Some("qwen3_5_text"),
    reference: reference!("qwen3_5", "Qwen3_5TextConfig", "Qwen3_5ForCausalLM"),
    mixers: Mixers::GatedDeltaNetHybrid,
    // Qwen3_5Attention: q_proj is heads · head_dim · 2 (modeling: 754–756).
    output_gate: Some(true),
    // Qwen3_5TextRotaryEmbedding always expands positions to 3 streams.
    mrope: Mrope::Always,
    // Qwen3_5TextConfig.head_dim.
    // Qwen3_5TextConfig: `full_attention_interval` 4 when no `layer_types`.
    defaults: &[("head_dim", 256), ("full_attention_interval", 4)],
    // Qwen3.5's attention: Qwen3-Next's.
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        shared_expert_gate: true,
        // Qwen3.5's checkpoints keep the Gated DeltaNet's projections split
        // (`in_proj_qkv`, `in_proj_z`, `in_proj_b`, `in_proj_a`): the names declared.
        checkpoint_names: Some(&[]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// OLMo Hybrid (olmo_hybrid/modeling_olmo_hybrid.py): Qwen3.5's layout of Gated DeltaNet and
// full-attention layers, a dense MLP in every layer. Its Gated DeltaNet splits what Qwen3-Next
// fuses (q, k, v, g, a and b projections, 270–330: the same widths, 2 · k + 2 · v and 2 · nV,
// a bias-free conv of 2 · k + v channels, a gated norm a value head wide); its attention
// layers are OLMo 3's (q and k normed across the whole projection, no output gate), with the
// norms after the attention and MLP (`post_attention_layernorm`, `post_feedforward_layernorm`),
// the linear layers' before (`input_layernorm`, `post_attention_layernorm`): two a layer
// either way (454–466). Every fourth layer full where the file lists no `layer_types`
// (configuration_olmo_hybrid.py: 121–129).
pub(super) const OLMO_HYBRID: FamilyRules = FamilyRules {
    model_type: "olmo_hybrid",
    reference: reference!("olmo_hybrid", "OlmoHybridConfig", "OlmoHybridForCausalLM"),
    mixers: Mixers::GatedDeltaNetHybrid,
    output_gate: Some(false),
    defaults: &[("full_attention_interval", 4)],
    weights: Some(WeightRules {
        qk_norm: QkNorm::WholeUnsplit,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

pub(super) const QWEN35_MOE: FamilyRules = FamilyRules {
    model_type: "qwen3_5_moe",
    text_model_type: Some("qwen3_5_moe_text"),
    reference: reference!(
        "qwen3_5_moe",
        "Qwen3_5MoeTextConfig",
        "Qwen3_5MoeForCausalLM",
    ),
    mixers: Mixers::GatedDeltaNetHybrid,
    // Qwen3_5MoeDecoderLayer routes in every layer.
    moe: Some(MoeKeys {
        shared: SharedExpert::Width("shared_expert_intermediate_size"),
        ..NUM_EXPERTS_MOE
    }),
    // Qwen3_5MoeAttention: q_proj is heads · head_dim · 2 (modeling: 771–773).
    output_gate: Some(true),
    mrope: Mrope::Always,
    // Qwen3_5MoeTextConfig.
    // Qwen3_5MoeTextConfig: `full_attention_interval` 4 when no `layer_types`.
    defaults: &[
        ("head_dim", 256),
        ("full_attention_interval", 4),
        ("shared_expert_intermediate_size", 512),
    ],
    // Qwen3.5-MoE's: Qwen3-Next's.
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        shared_expert_gate: true,
        // Qwen3.5's checkpoints keep the Gated DeltaNet's projections split
        // (`in_proj_qkv`, `in_proj_z`, `in_proj_b`, `in_proj_a`): the names declared.
        checkpoint_names: Some(&[]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// MiniMax-M1 (`model_type: "minimax_m1"`): the vendor's remote code
// (`modeling_minimax_m1.py`, MiniMax-AI/MiniMax-M1), of which transformers' `minimax`
// is the port the oracle builds (with `attn_type_list` as its `layer_types`):
// lightning layers where `attn_type_list` is 0, GQA softmax attention where it is 1;
// every layer routes (`MiniMaxM1SparseMoeBlock`: experts `intermediate_size` wide), a
// shared MLP of the same width only where `shared_intermediate_size` > 0
// (`MiniMaxM1DecoderLayer`, 971–976; vLLM's MiniMax-Text-01 port sizes it by
// `shared_intermediate_size` itself, which may be a per-layer list: a file with a
// shared MLP is read as the vendor's code builds it).
pub(super) const MINIMAX_M1: FamilyRules = FamilyRules {
    model_type: "minimax_m1",
    reference: reference!("minimax", "MiniMaxConfig", "MiniMaxForCausalLM"),
    mixers: Mixers::LightningHybrid,
    moe: Some(MoeKeys {
        experts: &["num_local_experts"],
        experts_field: "num_local_experts",
        expert_width: "intermediate_size",
        shared: SharedExpert::SameAsExpertIf("shared_intermediate_size"),
        dense_layers: DenseLayers::None,
        top_k: &["num_experts_per_tok"],
        enabled_by: None,
        latent: None,
    }),
    // `getattr(config, 'head_dim', hidden_size // num_heads)` in both attentions.
    head_dim: HeadDim::Key,
    // MiniMaxM1Config (configuration_minimax_m1.py: 101, 114–115).
    defaults: &[
        ("num_key_value_heads", 8),
        ("num_local_experts", 8),
        ("num_experts_per_tok", 2),
    ],
    linear_mixer: Some(LinearMixer::Lightning),
    // MiniMaxAttention (transformers' `minimax`, MiniMax-M1's port): no bias, no q/k norm.
    weights: Some(WeightRules {
        qkv_bias: Bias::Never,
        o_bias: Bias::Never,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Kimi-Linear (kimi_linear/modeling_kimi_linear.py): Kimi delta attention
// (`KimiLinearDeltaAttention`) beside MLA layers without RoPE (`KimiLinearAttention`,
// `q_lora_rank` null: a plain `q_proj`); DeepSeek-style experts with shared experts
// and leading dense layers (`KimiLinearMoE`, `KimiLinearMLP`). Several keys are
// `attribute_map` aliases (configuration: 62–69): the files write `num_experts`,
// `num_experts_per_token` and `num_shared_experts`.
pub(super) const KIMI_LINEAR: FamilyRules = FamilyRules {
    model_type: "kimi_linear",
    reference: reference!("kimi_linear", "KimiLinearConfig", "KimiLinearForCausalLM"),
    mixers: Mixers::KdaHybrid,
    mla: true,
    moe: Some(MoeKeys {
        experts: &["num_local_experts", "num_experts"],
        experts_field: "num_experts",
        expert_width: "moe_intermediate_size",
        shared: SharedExpert::CountOfTimesExpertWidth(&["n_shared_experts", "num_shared_experts"]),
        dense_layers: DenseLayers::FirstKOrTypes,
        top_k: &["num_experts_per_tok", "num_experts_per_token"],
        enabled_by: None,
        latent: None,
    }),
    // KimiLinearConfig (configuration: 71–111, 142–146): its MLA ranks, one shared
    // expert, one leading dense layer, 32 KDA heads of 128 with a 4-tap conv.
    defaults: &[
        ("kv_lora_rank", 512),
        ("qk_nope_head_dim", 128),
        ("qk_rope_head_dim", 64),
        ("v_head_dim", 128),
        ("n_shared_experts", 1),
        ("first_k_dense_replace", 1),
        ("num_local_experts", 256),
        ("num_experts_per_tok", 8),
        ("linear_num_heads", 32),
        ("linear_head_dim", 128),
        ("linear_conv_kernel_dim", 4),
    ],
    // Kimi-K3's text model is a `kimi_linear` config with features the reference does not
    // build and no buffer here sizes (`family::UNSIZED_MODEL_TYPES` refuses its outer
    // file; these refuse its text config read alone).
    refusals: &[
        Refusal {
            key: "mla_use_output_gate",
            scope: RefusalScope::AnyModel,
            reason: "an output gate on the MLA layers (vLLM's g_proj) needs a buffer \
                     the arena does not size, and transformers' KimiLinearAttention \
                     builds none to check it against",
        },
        Refusal {
            key: "routed_expert_hidden_size",
            scope: RefusalScope::AnyModel,
            reason: "experts running at a width of their own (Kimi-K3's latent \
                     experts) are not read from this key; nothing checks them",
        },
        Refusal {
            key: "attn_res_block_size",
            scope: RefusalScope::AnyModel,
            reason: "attention residuals (Kimi-K3) are a layer kind the arena does \
                     not size",
        },
    ],
    // `attribute_map`: `max_position_embeddings` is `model_max_length` (configuration: 63).
    per_layer_inputs: None,
    context_keys: &["max_position_embeddings", "model_max_length"],
    linear_mixer: Some(LinearMixer::Kda {
        nested: ("linear_attn_config", "linear_attn_config."),
        heads: ("num_heads", "linear_num_heads"),
        head_dim: ("head_dim", "linear_head_dim"),
        conv_kernel: ("short_conv_kernel_size", "linear_conv_kernel_dim"),
    }),
    // KimiLinear's MLA layers (no q LoRA): no bias, no q/k norm; a router with a bias buffer.
    weights: Some(WeightRules {
        qkv_bias: Bias::Never,
        o_bias: Bias::Never,
        router_bias_buffer: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// LFM2 (lfm2/modeling_lfm2.py): gated short convolutions (`Lfm2ShortConv`) and GQA
// attention with per-head q/k norms, a SwiGLU MLP whose width `Lfm2MLP` derives from
// `block_ff_dim` (LFM2_FFN).
// LFM2-VL files (`lfm2_vl`, `Lfm2VlForConditionalGeneration`) nest an `lfm2` text
// config under `text_config`; their SigLIP2 vision tower and projector are not
// sized here.
pub(super) const LFM2: FamilyRules = FamilyRules {
    model_type: "lfm2_vl",
    text_model_type: Some("lfm2"),
    reference: reference!("lfm2", "Lfm2Config", "Lfm2ForCausalLM"),
    mixers: Mixers::ShortConvHybrid,
    // `Lfm2Attention`: `hidden_size // num_attention_heads` (the files carry no
    // `head_dim`).
    head_dim: HeadDim::Key,
    defaults: LFM2_DEFAULTS,
    linear_mixer: Some(LinearMixer::ShortConv {
        kernel: "conv_L_cache",
    }),
    ffn_auto_adjust: Some(LFM2_FFN),
    tied_embeddings: true,
    // Lfm2Attention: q/k layernorms of `head_dim`, no bias; `operator_norm` and `ffn_norm` a
    // layer.
    weights: Some(WeightRules {
        qkv_bias: Bias::Never,
        o_bias: Bias::Never,
        qk_norm: QkNorm::PerHead,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

pub(super) const NEMOTRON_H: FamilyRules = FamilyRules {
    model_type: "nemotron_h",
    reference: reference!("nemotron_h", "NemotronHConfig", "NemotronHForCausalLM"),
    mixers: Mixers::NemotronHybrid,
    // `num_local_experts` is the `attribute_map` alias (configuration: 84).
    moe: Some(MoeKeys {
        experts: &["num_local_experts", "n_routed_experts"],
        experts_field: "n_routed_experts",
        expert_width: "moe_intermediate_size",
        shared: SharedExpert::Width("moe_shared_expert_intermediate_size"),
        dense_layers: DenseLayers::PerLayer,
        top_k: &["num_experts_per_tok"],
        enabled_by: None,
        latent: Some("moe_latent_size"),
    }),
    mamba: Some(NEMOTRON_MAMBA),
    // NemotronHAttention reads `config.head_dim`; NVIDIA's older files name the
    // same value `attention_head_dim`, which the reference ignores.
    head_dim: HeadDim::KeyWithLegacy("attention_head_dim"),
    // NemotronHConfig (its chunk is 128, Mamba2Config's 256).
    defaults: &[
        ("head_dim", 128),
        ("mamba_head_dim", 64),
        ("n_groups", 8),
        ("chunk_size", 128),
        ("conv_kernel", 4),
        ("num_experts_per_tok", 2),
        ("moe_shared_expert_intermediate_size", 7688),
    ],
    // NemotronHAttention (`attention_bias`), one norm a block, squared-ReLU MLPs and experts
    // without a gate, FFNs as layers of their own.
    weights: Some(WeightRules {
        norms_per_layer: 1,
        gated_ffn: false,
        ffn_every_layer: false,
        router_bias_buffer: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Granite 4.0 hybrid (granitemoehybrid/modeling_granitemoehybrid.py): each layer a Mamba-2
// mixer (`GraniteMoeHybridMambaLayer`, Bamba's: `in_proj` of d_inner + conv channels + heads,
// a conv over x, B and C with a bias by `mamba_conv_bias`, the gated norm, `out_proj`) or
// Granite's attention, then in the same layer the MoE block where `num_local_experts` > 0
// (router, experts of `intermediate_size`) and always a shared MLP of
// `shared_intermediate_size` (`GraniteMoeHybridDecoderLayer`, 943–965): with no experts the
// shared MLP is the layer's dense FFN. Two norms a layer; the multipliers change no width.
pub(super) const GRANITEMOEHYBRID: FamilyRules = FamilyRules {
    model_type: "granitemoehybrid",
    reference: reference!(
        "granitemoehybrid",
        "GraniteMoeHybridConfig",
        "GraniteMoeHybridForCausalLM",
    ),
    mixers: Mixers::Mamba2Hybrid,
    moe: Some(MoeKeys {
        experts: &["num_local_experts"],
        shared: SharedExpert::Width("shared_intermediate_size"),
        ..MIXTRAL_MOE
    }),
    mamba: Some(MambaKeys {
        heads: "mamba_n_heads",
        head_dim: "mamba_d_head",
        state: "mamba_d_state",
        n_groups: &["mamba_n_groups"],
        conv_kernel: &["mamba_d_conv"],
        chunk_size: &["mamba_chunk_size"],
        expand: Some("mamba_expand"),
    }),
    // The dense FFN where the model routes to no experts: the shared MLP.
    dense_width_key: "shared_intermediate_size",
    // GraniteMoeHybridConfig (configuration_granitemoehybrid.py: 88–102).
    defaults: &[
        ("num_local_experts", 8),
        ("num_experts_per_tok", 2),
        ("shared_intermediate_size", 1024),
        ("mamba_n_heads", 128),
        ("mamba_n_groups", 1),
        ("mamba_d_state", 256),
        ("mamba_d_conv", 4),
        ("mamba_expand", 2),
        ("mamba_chunk_size", 256),
    ],
    refusals: &[
        Refusal {
            key: "mamba_proj_bias",
            scope: RefusalScope::AnyModel,
            reason: "biases on the Mamba-2 in and out projections are not declared in the weights",
        },
        Refusal {
            key: "mamba_conv_bias",
            scope: RefusalScope::AnyModelWhenFalse,
            reason: "the weights declare the Mamba-2 conv's bias",
        },
    ],
    aliases: &[("layer_types", "layers_block_type")],
    weights: Some(WeightRules::LLAMA),
    ..DECODER
};

// Llama-Nemotron NAS (DeciLM): no transformers class; NVIDIA's `modeling_decilm.py`
// is the reference (`config/blocks.rs`). Its attention is Llama's with per-block kv
// heads; head_dim is hidden / heads (`DeciLMAttention`).
pub(super) const NEMOTRON_NAS: FamilyRules = FamilyRules {
    model_type: "nemotron-nas",
    reference: None,
    mixers: Mixers::Blocks,
    // vLLM's `DeciLMDecoderLayer` (`nemotron_nas.py`): a `LlamaAttention` and a `LlamaMLP` a
    // block, `attention_bias` on q, k, v and o; its norms and FFN widths go by block (the
    // weights' `block_norms` and `ffn_blocks`).
    weights: Some(WeightRules::LLAMA),
    ..DECODER
};

pub(super) const MAMBA2: FamilyRules = FamilyRules {
    model_type: "mamba2",
    reference: reference!("mamba2", "Mamba2Config", "Mamba2ForCausalLM"),
    mixers: Mixers::Mamba2,
    // Mamba2Config knows only the plain spellings; Mamba2Mixer builds `expand ·
    // hidden_size`, which validate_architecture requires to be heads · head_dim.
    mamba: Some(MambaKeys {
        heads: "num_heads",
        head_dim: "head_dim",
        state: "state_size",
        n_groups: &["n_groups"],
        conv_kernel: &["conv_kernel"],
        chunk_size: &["chunk_size"],
        expand: Some("expand"),
    }),
    // A plain Mamba-2 file's `head_dim` is the Mamba head size.
    head_dim: HeadDim::NotAttention,
    // Mamba2Block: a mixer and no MLP.
    mixer_only: true,
    // Mamba2Config.
    defaults: &[
        ("head_dim", 64),
        ("n_groups", 8),
        ("expand", 2),
        ("chunk_size", 256),
        ("conv_kernel", 4),
    ],
    // Mamba2ForCausalLM: a Mamba-2 mixer and one norm a layer, no FFN (the mixer's weights
    // are Nemotron-H's: `MambaMixer2`).
    weights: Some(WeightRules {
        qkv_bias: Bias::Never,
        o_bias: Bias::Never,
        norms_per_layer: 1,
        ffn_every_layer: false,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// No reference: DeepSeek's attention and expert keys, Nemotron-H's Mamba-2 keys.
pub(super) const SYNTHETIC: FamilyRules = FamilyRules {
    model_type: "arena_synthetic",
    reference: None,
    mixers: Mixers::AnyKind,
    mla: true,
    moe: Some(MoeKeys {
        experts: &["n_routed_experts"],
        experts_field: "n_routed_experts",
        expert_width: "moe_intermediate_size",
        shared: SharedExpert::CountTimesExpertWidth,
        dense_layers: DenseLayers::FirstK,
        top_k: &["num_experts_per_tok"],
        enabled_by: None,
        latent: None,
    }),
    mamba: Some(NEMOTRON_MAMBA),
    // The only family whose file decides.
    output_gate: None,
    ..DECODER
};

// LFM2-MoE (lfm2_moe/modeling_lfm2_moe.py): LFM2's short convolutions and attention, the first
// `num_dense_layers` layers with an MLP of `intermediate_size` as written (`Lfm2MoeMLP`,
// 118–128: no auto-adjust), the others routed experts of `moe_intermediate_size` (132–141)
// with a sigmoid router (171–180) and an expert-bias buffer where `use_expert_bias` (198–206).
pub(super) const LFM2_MOE: FamilyRules = FamilyRules {
    model_type: "lfm2_moe",
    text_model_type: None,
    reference: reference!("lfm2_moe", "Lfm2MoeConfig", "Lfm2MoeForCausalLM"),
    moe: Some(MoeKeys {
        dense_layers: DenseLayers::FirstKOf("num_dense_layers"),
        ..NUM_EXPERTS_MOE
    }),
    // Lfm2MoeConfig (configuration: 77–80). Its `conv_L_cache` (3) is not defaulted here:
    // without a layer list the loader reads every layer as attention, as LFM2's class does
    // (transformers' Lfm2MoeConfig builds nothing then), so no such file asks for it; a file
    // with short convolutions and no `conv_L_cache` is refused as missing it.
    defaults: &[("num_key_value_heads", 8), ("num_dense_layers", 2)],
    ffn_auto_adjust: None,
    weights: Some(WeightRules {
        router_bias_buffer: true,
        ..LFM2.weights.unwrap()
    }),
    ..LFM2
};
