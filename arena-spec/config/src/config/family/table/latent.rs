//! The rows of the families with multi-head latent attention or DeepSeek-V4's compressed
//! attention: DeepSeek-V2 (and V2-Lite), V3, V3.2 and V4, Kimi-K2 and K2.5, GLM-5
//! (`glm_moe_dsa`), GLM-4.7-Flash (`glm4_moe_lite`), MiniCPM3.

use super::*;

pub(super) const DEEPSEEK_V3: FamilyRules = FamilyRules {
    model_type: "deepseek_v3",
    reference: reference!("deepseek_v3", "DeepseekV3Config", "DeepseekV3ForCausalLM"),
    mla: true,
    moe: Some(DEEPSEEK_V3_MOE),
    defaults: DEEPSEEK_V3_DEFAULTS,
    // DeepseekV3Attention: `attention_bias` on q, k, v and o; the router's
    // `e_score_correction_bias` a buffer.
    weights: Some(WeightRules {
        router_bias_buffer: true,
        // DeepSeek-V3's checkpoints name the shared expert `shared_experts`
        // (`DeepseekV3MoE.shared_experts`).
        checkpoint_names: Some(&[(".mlp.shared_expert.", ".mlp.shared_experts.")]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// A.X-K1 (axk1/modeling_axk1.py): DeepSeek-V3's MLA (`AXK1Attention`, 366; q always through
// its low rank) and MoE (`AXK1MoE`, 215–239: the grouped sigmoid router with its correction
// bias a buffer), and a norm of the MoE block's output on each MoE layer
// (`post_mlp_layernorm`, 230); dense layers by `mlp_layer_types`, else the first
// `first_k_dense_replace` (class default 1, `AXK1Config.__post_init__`).
pub(super) const AXK1: FamilyRules = FamilyRules {
    model_type: "axk1",
    reference: reference!("axk1", "AXK1Config", "AXK1ForCausalLM"),
    mla: true,
    moe: Some(MoeKeys {
        dense_layers: DenseLayers::FirstKOrTypes,
        ..DEEPSEEK_V3_MOE
    }),
    // AXK1Config: DeepSeek-V3's ranks and head dims, one dense layer.
    defaults: &[
        ("q_lora_rank", 1536),
        ("kv_lora_rank", 512),
        ("qk_nope_head_dim", 128),
        ("qk_rope_head_dim", 64),
        ("v_head_dim", 128),
        ("n_shared_experts", 1),
        ("first_k_dense_replace", 1),
    ],
    weights: Some(WeightRules {
        router_bias_buffer: true,
        moe_post_norm: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

pub(super) const DEEPSEEK_V32: FamilyRules = FamilyRules {
    model_type: "deepseek_v32",
    reference: reference!(
        "deepseek_v32",
        "DeepseekV32Config",
        "DeepseekV32ForCausalLM",
    ),
    mla: true,
    // DeepseekV32Config re-routes `num_experts` (configuration: 140).
    moe: Some(DSA_MOE),
    // DeepseekV32Config: DeepSeek-V3's, and the indexer.
    defaults: &[
        ("q_lora_rank", 1536),
        ("kv_lora_rank", 512),
        ("qk_nope_head_dim", 128),
        ("qk_rope_head_dim", 64),
        ("v_head_dim", 128),
        ("n_shared_experts", 1),
        ("first_k_dense_replace", 3),
        ("index_n_heads", 64),
        ("index_head_dim", 128),
        ("index_topk", 2048),
    ],
    // DeepseekV32's: DeepSeek-V3's, with the indexer.
    weights: Some(WeightRules {
        router_bias_buffer: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// DeepseekV4Config's defaults where a file omits a key (configuration: 129–160).
// Every layer routes (no `first_k_dense_replace`), beside exactly one shared MLP as
// wide as a routed expert whatever `n_shared_experts` says (`DeepseekV4MoE`).
pub(super) const DEEPSEEK_V4: FamilyRules = FamilyRules {
    model_type: "deepseek_v4",
    reference: reference!("deepseek_v4", "DeepseekV4Config", "DeepseekV4ForCausalLM"),
    moe: Some(MoeKeys {
        // `num_local_experts` is the attribute_map alias (configuration: 103–106).
        experts: &["num_local_experts", "n_routed_experts"],
        experts_field: "n_routed_experts",
        expert_width: "moe_intermediate_size",
        shared: SharedExpert::SameAsExpert,
        dense_layers: DenseLayers::None,
        top_k: &["num_experts_per_tok"],
        enabled_by: None,
        latent: None,
    }),
    dense_width_key: "moe_intermediate_size",
    defaults: &[
        ("head_dim", 512),
        ("q_lora_rank", 1024),
        ("n_routed_experts", 256),
        ("num_experts_per_tok", 6),
        ("moe_intermediate_size", 2048),
        ("hc_mult", 4),
        ("o_groups", 8),
        ("o_lora_rank", 1024),
        ("index_n_heads", 64),
        ("index_head_dim", 128),
        ("index_topk", 512),
        ("num_hash_layers", 3),
        // `DeepseekV4Config.sliding_window`: the window every layer keeps.
        ("sliding_window", 128),
    ],
    compressed: Some(CompressedAttention {
        csa_rate: 4,
        hca_rate: 128,
    }),
    // DeepseekV4Attention: no bias, no q/k norm; a router with a bias buffer.
    weights: Some(WeightRules {
        qkv_bias: Bias::Never,
        o_bias: Bias::Never,
        router_bias_buffer: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// transformers has no `kimi_k2` model type: kimi_k25/configuration_kimi_k25.py
// (85–86) builds a `kimi_k2` text config as DeepSeek-V3.
pub(super) const KIMI_K2: FamilyRules = FamilyRules {
    model_type: "kimi_k2",
    reference: reference!("deepseek_v3", "DeepseekV3Config", "DeepseekV3ForCausalLM"),
    mla: true,
    moe: Some(DEEPSEEK_V3_MOE),
    defaults: DEEPSEEK_V3_DEFAULTS,
    // Kimi-K2's text model: DeepSeek-V3's.
    weights: Some(WeightRules {
        router_bias_buffer: true,
        // DeepSeek-V3's checkpoints name the shared expert `shared_experts`
        // (`DeepseekV3MoE.shared_experts`).
        checkpoint_names: Some(&[(".mlp.shared_expert.", ".mlp.shared_experts.")]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Kimi-K2.5: a `kimi_k2` text config under `text_config`, which `Kimi_K25Config` builds
// as DeepSeek-V3 (kimi_k25/configuration_kimi_k25.py: 69, 85–86): the kimi_k2 row's
// answers, read one level down.
pub(super) const KIMI_K25: FamilyRules = FamilyRules {
    model_type: "kimi_k25",
    text_model_type: Some("kimi_k2"),
    reference: reference!("deepseek_v3", "DeepseekV3Config", "DeepseekV3ForCausalLM"),
    mla: true,
    moe: Some(DEEPSEEK_V3_MOE),
    defaults: DEEPSEEK_V3_DEFAULTS,
    // Kimi-K2.5's text model: DeepSeek-V3's.
    weights: Some(WeightRules {
        router_bias_buffer: true,
        // DeepSeek-V3's checkpoints name the shared expert `shared_experts`
        // (`DeepseekV3MoE.shared_experts`).
        checkpoint_names: Some(&[(".mlp.shared_expert.", ".mlp.shared_experts.")]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

pub(super) const GLM_MOE_DSA: FamilyRules = FamilyRules {
    model_type: "glm_moe_dsa",
    reference: reference!("glm_moe_dsa", "GlmMoeDsaConfig", "GlmMoeDsaForCausalLM"),
    mla: true,
    // GlmMoeDsaConfig re-routes `num_experts` (configuration: 160).
    moe: Some(DSA_MOE),
    // GlmMoeDsaConfig: the MLA ranks and head dims, the experts, the indexer.
    defaults: &[
        ("q_lora_rank", 2048),
        ("kv_lora_rank", 512),
        ("qk_nope_head_dim", 192),
        ("qk_rope_head_dim", 64),
        ("v_head_dim", 256),
        ("n_shared_experts", 1),
        ("first_k_dense_replace", 3),
        ("index_n_heads", 32),
        ("index_head_dim", 128),
        ("index_topk", 2048),
    ],
    // GLM-5's: DeepSeek-V3.2's.
    weights: Some(WeightRules {
        router_bias_buffer: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// DeepSeek-V2 and V2-Lite (deepseek_v2/modeling_deepseek_v2.py): DeepSeek-V3's MLA, with a
// plain q projection where `q_lora_rank` is null (V2-Lite: `q_proj`, 313–323), and its
// experts (`DeepseekV2Experts`, 47–56) beside `n_shared_experts` shared ones; the router
// (`DeepseekV2TopkRouter`, 86–92) keeps no `e_score_correction_bias`.
pub(super) const DEEPSEEK_V2: FamilyRules = FamilyRules {
    model_type: "deepseek_v2",
    reference: reference!("deepseek_v2", "DeepseekV2Config", "DeepseekV2ForCausalLM"),
    mla: true,
    // DeepseekV2Config maps `num_experts` onto `n_routed_experts` (configuration: 101–103).
    moe: Some(MoeKeys {
        experts: &["num_experts", "n_routed_experts"],
        ..DEEPSEEK_V3_MOE
    }),
    // DeepseekV2Config (configuration: 104–119).
    defaults: &[
        ("q_lora_rank", 1536),
        ("kv_lora_rank", 512),
        ("qk_nope_head_dim", 128),
        ("qk_rope_head_dim", 64),
        ("v_head_dim", 128),
        ("n_shared_experts", 2),
        ("first_k_dense_replace", 0),
        ("n_routed_experts", 64),
        ("moe_intermediate_size", 1407),
    ],
    // DeepseekV2Attention: `attention_bias` on q_a (or q), kv_a and o.
    weights: Some(WeightRules::LLAMA),
    ..DECODER
};

// GLM-4.7-Flash (glm4_moe_lite/modeling_glm4_moe_lite.py): DeepSeek-V3's MLA (233–272) and
// experts, dense where `mlp_layer_types` says (507), with no indexer; its router keeps
// `e_score_correction_bias` as a buffer (386).
pub(super) const GLM4_MOE_LITE: FamilyRules = FamilyRules {
    model_type: "glm4_moe_lite",
    reference: reference!(
        "glm4_moe_lite",
        "Glm4MoeLiteConfig",
        "Glm4MoeLiteForCausalLM"
    ),
    mla: true,
    moe: Some(DSA_MOE),
    // Glm4MoeLiteConfig (configuration: 80–116); without `mlp_layer_types` the first layer is
    // dense (`__post_init__`, 119–120): `first_k_dense_replace` 1.
    defaults: &[
        ("q_lora_rank", 768),
        ("kv_lora_rank", 512),
        ("qk_nope_head_dim", 192),
        ("qk_rope_head_dim", 64),
        ("v_head_dim", 256),
        ("n_shared_experts", 1),
        ("first_k_dense_replace", 1),
    ],
    weights: Some(WeightRules {
        router_bias_buffer: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// MiniCPM3 (minicpm3/modeling_minicpm3.py): DeepSeek-V2's MLA (256–285) with a dense MLP
// (132–134), tied embeddings by default; its `scale_emb`, `scale_depth` and `dim_model_base`
// scale activations and change no width.
pub(super) const MINICPM3: FamilyRules = FamilyRules {
    model_type: "minicpm3",
    reference: reference!("minicpm3", "MiniCPM3Config", "MiniCPM3ForCausalLM"),
    mla: true,
    // MiniCPM3Config (configuration: 102–112). Its `v_head_dim` defaults to None, which
    // `__post_init__` makes H / nH (124–125): 64 for its defaults, the figure here; a file
    // with an explicit null is refused by the MLA check (`v_head_dim` 0), not guessed.
    defaults: &[
        ("q_lora_rank", 768),
        ("kv_lora_rank", 256),
        ("qk_nope_head_dim", 64),
        ("qk_rope_head_dim", 32),
        ("v_head_dim", 64),
    ],
    tied_embeddings: true,
    // MiniCPM3Attention: `attention_bias` on q_a, kv_a and o; MiniCPM3MLP: `mlp_bias`.
    weights: Some(WeightRules {
        mlp_bias: Bias::MlpBias,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};
