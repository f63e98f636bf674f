//! The rows of the families whose layers are softmax attention with routed experts: Mixtral, DBRX,
//! Qwen2-MoE, Qwen3-MoE and Qwen3-VL-MoE, GLM-4 MoE, gpt-oss, Laguna, MiniMax-M2, OLMoE,
//! Granite MoE and its shared-expert kin, ERNIE 4.5 MoE, Aria, GLM-4.5V, EXAONE MoE and
//! Hunyuan v3 (`moe_windowed.rs` holds those whose local layers follow a rule of their own).

use super::*;

pub(super) const MIXTRAL: FamilyRules = FamilyRules {
    model_type: "mixtral",
    reference: reference!("mixtral", "MixtralConfig", "MixtralForCausalLM"),
    moe: Some(MIXTRAL_MOE),
    kv_layers: KvLayers {
        all_slide: true,
        ..KvLayers::AS_LISTED
    },
    // MixtralAttention: as Llama's. Its checkpoints keep the names of the classes before
    // transformers 5 fused the experts (`block_sparse_moe`, an expert's `w1`, `w3` and `w2`
    // for gate, up and down: the `mixtral` entry of transformers' `conversion_mapping.py`,
    // which renames them back when it loads one).
    weights: Some(WeightRules {
        checkpoint_names: Some(&[
            (".mlp.experts.", ".block_sparse_moe.experts."),
            (".mlp.gate.", ".block_sparse_moe.gate."),
            (".gate_proj.weight", ".w1.weight"),
            (".up_proj.weight", ".w3.weight"),
            (".down_proj.weight", ".w2.weight"),
        ]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// DBRX (dbrx/modeling_dbrx.py): Mixtral's shape under its own names. The attention's q, k
// and v are one `Wqkv` (hidden + 2 · kv heads · head size out, 187–189) and its output
// `out_proj`, no biases; every layer a MoE of `DbrxExpertGLU`'s w1, v1 and w2, each
// `[experts · ffn_hidden_size, hidden]` (247–256: gate, up and down), a bias-free router
// (316); the three norms a layer and the final one `nn.LayerNorm(bias=False)` (360–365,
// 475). The widths sit in `attn_config` and `ffn_config` (configuration_dbrx.py: 30–80),
// the rest under the `attribute_map` names (115–120); an untied head, which the class
// insists on (156–159).
pub(super) const DBRX: FamilyRules = FamilyRules {
    model_type: "dbrx",
    reference: reference!("dbrx", "DbrxConfig", "DbrxForCausalLM"),
    moe: Some(MIXTRAL_MOE),
    aliases: &[
        ("hidden_size", "d_model"),
        ("num_attention_heads", "n_heads"),
        ("num_hidden_layers", "n_layers"),
        ("max_position_embeddings", "max_seq_len"),
        ("num_key_value_heads", "attn_config.kv_n_heads"),
        ("num_local_experts", "ffn_config.moe_num_experts"),
        ("num_experts_per_tok", "ffn_config.moe_top_k"),
        ("intermediate_size", "ffn_config.ffn_hidden_size"),
    ],
    // DbrxAttentionConfig and DbrxFFNConfig, where a file has no `attn_config` or
    // `ffn_config` (configuration_dbrx.py: 40, 72–74).
    defaults: &[
        ("num_key_value_heads", 1),
        ("num_local_experts", 4),
        ("num_experts_per_tok", 1),
        ("intermediate_size", 3584),
    ],
    refusals: &[Refusal {
        key: "tie_word_embeddings",
        scope: RefusalScope::AnyModel,
        reason:
            "DBRX's configuration class refuses tied embeddings (DbrxConfig.validate_architecture)",
    }],
    // One norm before the attention and one after it (`norm_1`, `norm_2`), without bias.
    weights: Some(WeightRules::LLAMA),
    ..DECODER
};

pub(super) const QWEN2_MOE: FamilyRules = FamilyRules {
    model_type: "qwen2_moe",
    reference: reference!("qwen2_moe", "Qwen2MoeConfig", "Qwen2MoeForCausalLM"),
    moe: Some(super::QWEN2_MOE),
    // Qwen2MoeConfig.
    defaults: &[
        ("shared_expert_intermediate_size", 5632),
        ("decoder_sparse_step", 1),
    ],
    ..DECODER
};

pub(super) const QWEN3_MOE: FamilyRules = FamilyRules {
    model_type: "qwen3_moe",
    reference: reference!("qwen3_moe", "Qwen3MoeConfig", "Qwen3MoeForCausalLM"),
    // `num_local_experts` is the `attribute_map` alias of `num_experts` and wins;
    // Qwen3MoeSparseMoeBlock has no shared expert.
    moe: Some(MoeKeys {
        experts: &["num_local_experts", "num_experts"],
        experts_field: "num_experts",
        expert_width: "moe_intermediate_size",
        shared: SharedExpert::None,
        dense_layers: DenseLayers::SparseStep(&[]),
        top_k: &["num_experts_per_tok"],
        enabled_by: None,
        latent: None,
    }),
    // Qwen3MoeConfig: every layer routes unless told otherwise. It has no
    // `head_dim` field: Qwen3MoeAttention falls back to hidden / heads.
    defaults: &[("decoder_sparse_step", 1)],
    // Qwen3MoeAttention: Qwen3's.
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        checkpoint_names: Some(&[]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

pub(super) const QWEN3_VL_MOE: FamilyRules = FamilyRules {
    model_type: "qwen3_vl_moe",
    text_model_type: Some("qwen3_vl_moe_text"),
    reference: reference!(
        "qwen3_vl_moe",
        "Qwen3VLMoeTextConfig",
        "Qwen3VLMoeForConditionalGeneration",
    ),
    // Qwen3VLMoeTextDecoderLayer routes unless in `mlp_only_layers` or off the sparse
    // step (modeling: 352–357); `num_experts` is the attribute_map alias of
    // `num_local_experts` (configuration: 53–55); no shared expert.
    moe: Some(MoeKeys {
        experts: &["num_experts", "num_local_experts"],
        experts_field: "num_local_experts",
        expert_width: "moe_intermediate_size",
        shared: SharedExpert::None,
        dense_layers: DenseLayers::SparseStep(&[]),
        top_k: &["num_experts_per_tok"],
        enabled_by: None,
        latent: None,
    }),
    // Qwen3VLMoeTextConfig: `head_dim or hidden_size // num_attention_heads` (115).
    head_dim: HeadDim::Key,
    mrope: Mrope::Always,
    defaults: &[("decoder_sparse_step", 1)],
    // Qwen3-VL-MoE's text attention: Qwen3's.
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

pub(super) const GLM4_MOE: FamilyRules = FamilyRules {
    model_type: "glm4_moe",
    reference: reference!("glm4_moe", "Glm4MoeConfig", "Glm4MoeForCausalLM"),
    moe: Some(DEEPSEEK_V3_MOE),
    // Glm4MoeConfig.
    defaults: &[("n_shared_experts", 1), ("first_k_dense_replace", 1)],
    // Glm4MoeAttention: `attention_bias` on q, k, v; o unbiased; q/k norms where
    // `use_qk_norm`; a router bias buffer.
    weights: Some(WeightRules {
        o_bias: Bias::Never,
        qk_norm: QkNorm::PerHead,
        qk_norm_switched: true,
        router_bias_buffer: true,
        // Glm4MoeMoE's shared experts are `shared_experts` (vLLM's `Glm4MoeForCausalLM`).
        checkpoint_names: Some(&[(".mlp.shared_expert.", ".mlp.shared_experts.")]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

pub(super) const GPT_OSS: FamilyRules = FamilyRules {
    model_type: "gpt_oss",
    reference: reference!("gpt_oss", "GptOssConfig", "GptOssForCausalLM"),
    moe: Some(MIXTRAL_MOE),
    // GptOssConfig: head_dim 64 (not hidden / heads = 45).
    defaults: &[("head_dim", 64)],
    // GptOssAttention: `attention_bias` on all four and a sink a head; biased experts and
    // router.
    weights: Some(WeightRules {
        sinks: true,
        expert_bias: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Laguna (laguna/modeling_laguna.py): q heads per layer
// (`num_attention_heads_per_layer`, 417), a softplus output gate `g_proj` of the
// attention input (354–356), layer 0 dense and the rest routed beside a shared
// expert (218–224; `mlp_layer_types`, configuration: 131–132).
pub(super) const LAGUNA: FamilyRules = FamilyRules {
    model_type: "laguna",
    reference: reference!("laguna", "LagunaConfig", "LagunaForCausalLM"),
    moe: Some(MoeKeys {
        shared: SharedExpert::Width("shared_expert_intermediate_size"),
        dense_layers: DenseLayers::FirstKOrTypes,
        ..NUM_EXPERTS_MOE
    }),
    // LagunaConfig (configuration: 96, 107, 118).
    defaults: &[
        ("num_key_value_heads", 8),
        ("head_dim", 128),
        ("shared_expert_intermediate_size", 512),
        ("first_k_dense_replace", 1),
    ],
    layer_widths: Some(LayerWidths {
        value_head_dim: None,
        sliding_kv_factor: 1,
        heads_per_layer: Some("num_attention_heads_per_layer"),
        gate: Some("gating"),
        global: None,
        double_wide_ffn: None,
    }),
    // LagunaAttention: q/k norms of `head_dim`, no bias, the per-head output gate (`g_proj`);
    // `LagunaTopKRouter` learns `e_score_correction_bias`.
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        router_bias: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Step-3.7's text model (`Step3p7TextConfig`, `model_type` "step3p5", under `text_config`;
// step3p7/modeling_step3p7.py): Laguna's attention (q and k normed a head, no biases, a
// sigmoid gate a head, `g_proj`: `Step3p7Attention`, 872) in a decoder whose `"dense"` layers
// (by `mlp_layer_types`, else the first three) run an MLP of `intermediate_size` and whose
// `"sparse"` ones route to `n_routed_experts` experts of `moe_intermediate_size` behind a router
// whose `e_score_correction_bias` is a buffer (MiniMax-M3's), beside a shared MLP of
// `share_expert_dim`. Its legacy spellings (`moe_layers_enum`, `attention_other_setting`),
// sliding layers of their own head count and sparse attention are refused by name.
pub(super) const STEP3P7: FamilyRules = FamilyRules {
    model_type: "step3p7",
    text_model_type: Some("step3p5"),
    reference: reference!(
        "step3p7",
        "Step3p7TextConfig",
        "Step3p7ForConditionalGeneration",
    ),
    moe: Some(MoeKeys {
        // `attribute_map` (configuration_step3p7.py: 134–141): `num_local_experts` and
        // `moe_num_experts` are `n_routed_experts`, `moe_top_k` `num_experts_per_tok`,
        // `share_expert_dims` `share_expert_dim`.
        experts: &["num_local_experts", "moe_num_experts", "n_routed_experts"],
        experts_field: "n_routed_experts",
        expert_width: "moe_intermediate_size",
        shared: SharedExpert::Width("share_expert_dim"),
        dense_layers: DenseLayers::FirstKOrTypes,
        top_k: &["moe_top_k", "num_experts_per_tok"],
        enabled_by: None,
        latent: None,
    }),
    // Step3p7TextConfig (configuration_step3p7.py: 150–175); its default `mlp_layer_types`
    // makes the first three layers dense (configuration: 226–231).
    defaults: &[
        ("num_key_value_heads", 8),
        ("head_dim", 128),
        ("n_routed_experts", 288),
        ("num_experts_per_tok", 8),
        ("moe_intermediate_size", 1280),
        ("share_expert_dim", 1280),
        ("first_k_dense_replace", 3),
    ],
    refusals: &[
        Refusal {
            key: "num_sliding_attention_heads",
            scope: RefusalScope::UnlessSameAs("num_attention_heads"),
            reason: "sliding-attention layers with a head count of their own are not sized here",
        },
        Refusal {
            key: "attention_other_setting",
            scope: RefusalScope::Present,
            reason: "the legacy per-type attention override is not read here: resave the file \
                     with transformers (it writes `num_sliding_attention_heads`)",
        },
        Refusal {
            key: "moe_layers_enum",
            scope: RefusalScope::Present,
            reason: "the legacy list of routed layers is not read here: resave the file with \
                     transformers (it writes `mlp_layer_types`)",
        },
        Refusal {
            key: "sparse_attention_config",
            scope: RefusalScope::Present,
            reason: "sparse attention (a Lightning indexer beside the attention) is not sized here",
        },
    ],
    aliases: &[("share_expert_dim", "share_expert_dims")],
    layer_widths: Some(LayerWidths {
        value_head_dim: None,
        sliding_kv_factor: 1,
        heads_per_layer: None,
        gate: Some("gating"),
        global: None,
        double_wide_ffn: None,
    }),
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        router_bias_buffer: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// MiniMax-M2 (minimax_m2/modeling_minimax_m2.py): every layer routes; an expert's width
// is `intermediate_size` (MiniMaxM2Experts, 76–77); no shared expert; q/k RMSNorm over
// the whole projection (292–293); `num_experts` is the attribute_map alias of
// `num_local_experts` (configuration: 69–71).
pub(super) const MINIMAX_M2: FamilyRules = FamilyRules {
    model_type: "minimax_m2",
    reference: reference!("minimax_m2", "MiniMaxM2Config", "MiniMaxM2ForCausalLM"),
    moe: Some(MIXTRAL_MOE),
    // MiniMaxM2Config (configuration: 79–80): 8 kv heads, head_dim 128.
    defaults: &[("num_key_value_heads", 8), ("head_dim", 128)],
    // MiniMaxM2Attention: q and k normed over all the rank's heads (vLLM shards its norm
    // weight by tp); a router bias buffer.
    weights: Some(WeightRules {
        qkv_bias: Bias::Never,
        o_bias: Bias::Never,
        qk_norm: QkNorm::Whole,
        router_bias_buffer: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// MiniMax-M3's text model (`MiniMaxM3VLTextConfig` under `text_config`;
// minimax_m3_vl/modeling_minimax_m3_vl.py): Llama's attention without biases, q and k normed a
// head (408–427); on each `"sparse"` layer routed experts of `intermediate_size` (194–203)
// behind a router whose `e_score_correction_bias` is a buffer, and always a shared MLP of
// `shared_intermediate_size` (`MiniMaxM3VLSparseMoeBlock`, 255–261); on each `"dense"` one an
// MLP of `dense_intermediate_size` (640–650). Its sparse-attention layers (an indexer beside the
// attention, `"minimax_m3_sparse"`, or listed in `sparse_attention_config`) are not sized.
pub(super) const MINIMAX_M3_VL: FamilyRules = FamilyRules {
    model_type: "minimax_m3_vl",
    text_model_type: Some("minimax_m3_vl_text"),
    reference: reference!(
        "minimax_m3_vl",
        "MiniMaxM3VLTextConfig",
        "MiniMaxM3VLForCausalLM",
    ),
    moe: Some(MoeKeys {
        shared: SharedExpert::Width("shared_intermediate_size"),
        dense_layers: DenseLayers::TypesOrFrequency,
        ..MIXTRAL_MOE
    }),
    dense_width_key: "dense_intermediate_size",
    // MiniMaxM3VLTextConfig (configuration_minimax_m3_vl.py).
    defaults: &[
        ("num_key_value_heads", 4),
        ("head_dim", 128),
        ("dense_intermediate_size", 12288),
        ("shared_intermediate_size", 3072),
    ],
    refusals: &[Refusal {
        key: "sparse_attention_config",
        scope: RefusalScope::Present,
        reason: "MiniMax-M3's sparse attention (a Lightning indexer beside the attention on the \
                 layers it lists) is not sized here",
    }],
    weights: Some(WeightRules {
        qkv_bias: Bias::Never,
        o_bias: Bias::Never,
        qk_norm: QkNorm::PerHead,
        router_bias_buffer: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// OLMoE (olmoe/modeling_olmoe.py): Llama's attention with q and k normed whole (`q_norm` over
// `hidden_size`, `k_norm` over nKV · hd: 222–225) and routed experts of `intermediate_size`
// (`OlmoeExperts`, 279–288; `OlmoeTopKRouter`, 318–325), no shared expert.
pub(super) const OLMOE: FamilyRules = FamilyRules {
    model_type: "olmoe",
    reference: reference!("olmoe", "OlmoeConfig", "OlmoeForCausalLM"),
    // OlmoeConfig: `num_experts`, its `attribute_map` alias `num_local_experts`
    // (configuration: 44).
    moe: Some(MoeKeys {
        experts: &["num_local_experts", "num_experts"],
        experts_field: "num_experts",
        expert_width: "intermediate_size",
        ..MIXTRAL_MOE
    }),
    // OlmoeAttention: `attention_bias` on all four; q and k normed over all their heads, whole
    // on every rank (vLLM's `OlmoeAttention` norms `total_num_heads · head_dim`).
    weights: Some(WeightRules {
        qk_norm: QkNorm::WholeUnsplit,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Granite MoE (granitemoe/modeling_granitemoe.py): Granite's attention (270–285) with routed
// experts of `intermediate_size` (`GraniteMoeExperts`, 136–145; `GraniteMoeTopKRouter`,
// 113–126); the multipliers change no width.
pub(super) const GRANITEMOE: FamilyRules = FamilyRules {
    model_type: "granitemoe",
    reference: reference!("granitemoe", "GraniteMoeConfig", "GraniteMoeForCausalLM"),
    moe: Some(MoeKeys {
        experts: &["num_local_experts"],
        ..MIXTRAL_MOE
    }),
    // GraniteMoeAttention: `attention_bias` on q, k, v and o.
    weights: Some(WeightRules::LLAMA),
    ..DECODER
};

// Granite MoE with a shared MLP (granitemoeshared/modeling_granitemoeshared.py): Granite MoE
// and, where `shared_intermediate_size` is above 0, a gated MLP of that width beside the
// experts (`GraniteMoeSharedMLP`: `input_linear` hidden → 2 · S, `output_linear` S → hidden,
// 83–86; none at 0, 344).
pub(super) const GRANITEMOESHARED: FamilyRules = FamilyRules {
    model_type: "granitemoeshared",
    reference: reference!(
        "granitemoeshared",
        "GraniteMoeSharedConfig",
        "GraniteMoeSharedForCausalLM",
    ),
    moe: Some(MoeKeys {
        experts: &["num_local_experts"],
        shared: SharedExpert::Width("shared_intermediate_size"),
        ..MIXTRAL_MOE
    }),
    ..GRANITEMOE
};

// ERNIE 4.5 MoE (ernie4_5_moe/modeling_ernie4_5_moe.py): ERNIE 4.5's attention and dense MLP
// (its `intermediate_size` on the dense layers), routed experts of `moe_intermediate_size`
// (`Ernie4_5_MoeExperts`, 297–306) behind a router whose `e_score_correction_bias` is a
// parameter (`Ernie4_5_MoeStatics`, 282), a shared MLP of `moe_num_shared_experts` experts'
// width (`Ernie4_5_MoeSparseMoeBlock`, 369–371), the routed layers by start, end and interval
// (398–400); tied embeddings by default (configuration: 104).
pub(super) const ERNIE4_5_MOE: FamilyRules = FamilyRules {
    model_type: "ernie4_5_moe",
    reference: reference!(
        "ernie4_5_moe",
        "Ernie4_5_MoeConfig",
        "Ernie4_5_MoeForCausalLM"
    ),
    moe: Some(MoeKeys {
        // `attribute_map`: num_experts → moe_num_experts, num_experts_per_tok → moe_k.
        experts: &["num_experts", "moe_num_experts"],
        experts_field: "moe_num_experts",
        expert_width: "moe_intermediate_size",
        shared: SharedExpert::CountOfTimesExpertWidth(&["moe_num_shared_experts"]),
        dense_layers: DenseLayers::StartEndInterval,
        top_k: &["num_experts_per_tok", "moe_k"],
        enabled_by: None,
        latent: None,
    }),
    // Ernie4_5_MoeConfig (configuration: 108–113).
    defaults: &[
        ("moe_k", 6),
        ("moe_num_experts", 64),
        ("moe_num_shared_experts", 2),
        ("moe_layer_start_index", 1),
        ("moe_layer_interval", 1),
    ],
    weights: Some(WeightRules {
        router_bias: true,
        ..WeightRules::LLAMA
    }),
    ..super::dense::ERNIE4_5
};

// Aria's text model (`AriaTextConfig` under `text_config`; aria/modeling_aria.py): Llama's
// attention (`AriaTextAttention`, 408–432) and a MoE on every layer (`AriaTextMoELayer`,
// 319–334, 494): `moe_num_experts` routed experts as wide as `intermediate_size`
// (`AriaExperts`, 275–288), `moe_topk` of them a token, and a shared MLP of
// `moe_num_shared_experts` experts' width (`AriaSharedExpertsMLP`, 227–245). `mlp_bias` would
// bias the shared MLP, which the weights do not declare: refused.
pub(super) const ARIA: FamilyRules = FamilyRules {
    model_type: "aria",
    text_model_type: Some("aria_text"),
    reference: reference!("aria", "AriaTextConfig", "AriaForConditionalGeneration"),
    moe: Some(MoeKeys {
        experts: &["moe_num_experts"],
        experts_field: "moe_num_experts",
        expert_width: "intermediate_size",
        shared: SharedExpert::CountOfTimesExpertWidth(&["moe_num_shared_experts"]),
        dense_layers: DenseLayers::None,
        top_k: &["moe_topk"],
        enabled_by: None,
        latent: None,
    }),
    // AriaTextConfig (configuration: 88–90).
    defaults: &[
        ("moe_num_experts", 8),
        ("moe_topk", 2),
        ("moe_num_shared_experts", 2),
    ],
    refusals: &[Refusal {
        key: "mlp_bias",
        scope: RefusalScope::AnyModel,
        reason:
            "biases on the shared experts' projections (mlp_bias) are not declared in the weights",
    }],
    weights: Some(WeightRules::LLAMA),
    ..DECODER
};

// GLM-4.5V's text model (`Glm4vMoeTextConfig` under `text_config`;
// glm4v_moe/modeling_glm4v_moe.py): GLM-4.5's experts and router (a bias buffer, 282) and
// attention without q/k norms (`Glm4vMoeTextAttention`, 200–222), M-RoPE's three streams.
pub(super) const GLM4V_MOE: FamilyRules = FamilyRules {
    model_type: "glm4v_moe",
    text_model_type: Some("glm4v_moe_text"),
    reference: reference!(
        "glm4v_moe",
        "Glm4vMoeTextConfig",
        "Glm4vMoeForConditionalGeneration",
    ),
    moe: Some(DEEPSEEK_V3_MOE),
    mrope: Mrope::Always,
    // Glm4vMoeTextConfig.
    defaults: &[("n_shared_experts", 1), ("first_k_dense_replace", 1)],
    weights: Some(WeightRules {
        o_bias: Bias::Never,
        router_bias_buffer: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// EXAONE MoE (exaone_moe/modeling_exaone_moe.py): EXAONE 4's attention (unbiased, q/k norms of
// `head_dim`: 137–161), DeepSeek-style experts beside `num_shared_experts` shared ones
// (`ExaoneMoeSparseMoEBlock`, 309–329), dense layers by `mlp_layer_types` else the first
// `first_k_dense_replace`, and a router bias buffer (239).
pub(super) const EXAONE_MOE: FamilyRules = FamilyRules {
    model_type: "exaone_moe",
    reference: reference!("exaone_moe", "ExaoneMoeConfig", "ExaoneMoeForCausalLM"),
    moe: Some(MoeKeys {
        experts: &["num_experts"],
        experts_field: "num_experts",
        shared: SharedExpert::CountOfTimesExpertWidth(&["num_shared_experts"]),
        dense_layers: DenseLayers::FirstKOrTypes,
        ..DEEPSEEK_V3_MOE
    }),
    // ExaoneMoeConfig (configuration: 106–119). Which layers slide is read from
    // `layer_types` (its files list them); a file without them keeps every layer's keys
    // whole, never less than the reference (its `sliding_window_pattern` may be a string,
    // "LLLG", not read here).
    defaults: &[("first_k_dense_replace", 1), ("num_shared_experts", 1)],
    weights: Some(WeightRules {
        qkv_bias: Bias::Never,
        o_bias: Bias::Never,
        qk_norm: QkNorm::PerHead,
        router_bias_buffer: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Hunyuan v3 (hy_v3/modeling_hy_v3.py): `attention_bias` on q, k, v and o with q/k norms of
// `head_dim` (199–225), experts beside a shared MLP of `num_shared_experts` · the experts'
// width (`HYV3MoE`, 340–364) and a router bias buffer (346), the first layer dense unless
// `mlp_layer_types` says (374; configuration 105–111).
pub(super) const HY_V3: FamilyRules = FamilyRules {
    model_type: "hy_v3",
    reference: reference!("hy_v3", "HYV3Config", "HYV3ForCausalLM"),
    // HYV3Config maps `num_local_experts` onto `num_experts` (configuration: 49–51).
    moe: Some(MoeKeys {
        experts: &["num_local_experts", "num_experts"],
        ..EXAONE_MOE.moe.unwrap()
    }),
    defaults: &[("first_k_dense_replace", 1), ("num_shared_experts", 1)],
    // HYV3MLP's `mlp_bias` puts biases on the MLP, which the weights do not declare.
    refusals: &[Refusal {
        key: "mlp_bias",
        scope: RefusalScope::AnyModel,
        reason: "biases on the MLP's projections (mlp_bias) are not declared in the weights",
    }],
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        router_bias_buffer: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};
