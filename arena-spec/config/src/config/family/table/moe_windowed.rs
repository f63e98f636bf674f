//! The rows of the MoE families whose local layers (sliding windows or chunks) follow a rule
//! of their own rather than a `layer_types` list alone (a period, a pattern key, a list under
//! another name): Llama 4, MiMo-V2-Flash, Beam, Cohere 2 MoE, AFMoE and Granite MoE SWA.

use super::*;

pub(super) const LLAMA4: FamilyRules = FamilyRules {
    model_type: "llama4",
    text_model_type: Some("llama4_text"),
    reference: reference!("llama4", "Llama4TextConfig", "Llama4ForCausalLM"),
    // Llama4TextMoe: a shared expert as wide as a routed one.
    moe: Some(MoeKeys {
        experts: &["num_local_experts"],
        experts_field: "num_local_experts",
        expert_width: "intermediate_size",
        shared: SharedExpert::SameAsExpert,
        dense_layers: DenseLayers::Interleaved,
        top_k: &["num_experts_per_tok"],
        enabled_by: None,
        latent: None,
    }),
    // Llama4TextDecoderLayer: the dense layers run at `intermediate_size_mlp`.
    dense_width_key: "intermediate_size_mlp",
    // Llama4TextConfig.
    defaults: &[("head_dim", 128), ("interleave_moe_layer_step", 1)],
    kv_layers: KvLayers {
        chunked: Some(ChunkedLayers {
            chunk: ("attention_chunk_size", 8192),
            rope_list: "no_rope_layers",
            interval: ("no_rope_layer_interval", 4),
        }),
        ..KvLayers::AS_LISTED
    },
    // Llama4TextAttention: as Llama's (its q/k norm has no weight).
    weights: Some(WeightRules::LLAMA),
    ..DECODER
};

// MiMo-V2-Flash (mimo_v2_flash/modeling_mimo_v2_flash.py): q and k of `head_dim` (192),
// v and the O projection's input of `v_head_dim` (128, 352–357); sliding layers hold
// twice the kv heads (341); layer 0 dense, the rest routed, no shared expert
// (`mlp_layer_types`, configuration: 119–120); `num_local_experts` is the
// attribute_map alias of `n_routed_experts` (74).
pub(super) const MIMO_V2_FLASH: FamilyRules = FamilyRules {
    model_type: "mimo_v2_flash",
    reference: reference!(
        "mimo_v2_flash",
        "MiMoV2FlashConfig",
        "MiMoV2FlashForCausalLM"
    ),
    moe: Some(MoeKeys {
        experts: &["num_local_experts", "n_routed_experts"],
        experts_field: "n_routed_experts",
        expert_width: "moe_intermediate_size",
        shared: SharedExpert::None,
        dense_layers: DenseLayers::FirstKOrTypes,
        top_k: &["num_experts_per_tok"],
        enabled_by: None,
        latent: None,
    }),
    // MiMoV2FlashConfig (configuration: 82, 104–105); its default `mlp_layer_types`
    // makes layer 0 dense (`first_k_dense_replace` 1 stands for that rule).
    defaults: &[
        ("num_key_value_heads", 4),
        ("head_dim", 192),
        ("v_head_dim", 128),
        ("first_k_dense_replace", 1),
    ],
    kv_layers: KvLayers {
        listed_by: Some(("hybrid_layer_pattern", "sliding_window_size")),
        ..KvLayers::AS_LISTED
    },
    layer_widths: Some(LayerWidths {
        value_head_dim: Some("v_head_dim"),
        sliding_kv_factor: 2,
        heads_per_layer: None,
        gate: None,
        global: None,
        double_wide_ffn: None,
    }),
    // MiMoV2FlashAttention: no o bias, no q/k norm, a sink a head on its sliding layers (the
    // full ones at their own kv heads: the full group); `MiMoV2FlashTopKRouter`'s
    // `e_score_correction_bias` is a buffer.
    weights: Some(WeightRules {
        o_bias: Bias::Never,
        sinks: true,
        sinks_sliding_only: true,
        router_bias_buffer: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Beam (beam/modeling_beam.py): attention with q/k norms of `head_dim` and an output gate of
// its own (`gate_proj`, hidden → heads · head_dim, held as a doubled q) with a bias a head
// (`gate_bias`, 202–233), four norms a layer, DeepSeek-V3's grouped router (its correction
// bias a buffer) over routed experts of `moe_intermediate_size` and no shared expert, dense
// layers by `mlp_layer_types` (else the first `first_k_dense_replace`, three by the class:
// configuration 31–33); without `layer_types` every sixth layer and the last are full
// (configuration: 112–117).
pub(super) const BEAM: FamilyRules = FamilyRules {
    model_type: "beam",
    reference: reference!("beam", "BeamConfig", "BeamForCausalLM"),
    output_gate: Some(true),
    moe: Some(MoeKeys {
        dense_layers: DenseLayers::FirstKOrTypes,
        ..NUM_EXPERTS_MOE
    }),
    defaults: &[("first_k_dense_replace", 3)],
    kv_layers: KvLayers {
        window_pattern: Some(("", 6)),
        full_at: FullAt::PeriodEndAndLast,
        ..KvLayers::AS_LISTED
    },
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        norms_per_layer: 4,
        router_bias_buffer: true,
        output_gate_bias: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Cohere 2 MoE (cohere2_moe/modeling_cohere2_moe.py): Cohere 2's parallel block (one norm a
// layer, 358–360; attention at `head_dim`, read with `getattr`, 280) with routed experts as
// wide as `intermediate_size` (`Cohere2MoeExperts`, 102–111), a shared MLP of
// `num_shared_experts` experts' width (none at 0, the class default: 176–179), and dense
// layers by `mlp_layer_types`, else the first `first_k_dense_replace`, at
// `prefix_dense_intermediate_size` (353; configuration: 139–160). Without `layer_types` the
// first `first_k_dense_replace` layers follow `prefix_dense_sliding_window_pattern` (class
// default 1: all full) and every `sliding_window_pattern`-th layer after them is full
// (configuration: 142–152).
pub(super) const COHERE2_MOE: FamilyRules = FamilyRules {
    model_type: "cohere2_moe",
    reference: reference!("cohere2_moe", "Cohere2MoeConfig", "Cohere2MoeForCausalLM"),
    moe: Some(MoeKeys {
        expert_width: "intermediate_size",
        shared: SharedExpert::CountOfTimesExpertWidth(&["num_shared_experts"]),
        dense_layers: DenseLayers::FirstKOrTypes,
        ..NUM_EXPERTS_MOE
    }),
    dense_width_key: "prefix_dense_intermediate_size",
    kv_layers: KvLayers {
        dense_prefix_pattern: Some(("prefix_dense_sliding_window_pattern", 1)),
        ..super::dense::COHERE2.kv_layers
    },
    ..super::dense::COHERE2
};

// AFMoE (afmoe/modeling_afmoe.py): attention with q/k norms of `head_dim` and an output gate
// (`AfmoeAttention.gate_proj`, hidden → heads · head_dim, 334–336: the weights of a doubled q,
// as Qwen3-Next's), four norms a layer (`AfmoeDecoderLayer`, 405–410), routed experts of
// `moe_intermediate_size` behind a router whose `expert_bias` is a parameter (211), a shared
// MLP of `num_shared_experts` experts' width (209), the first `num_dense_layers` dense; every
// `global_attn_every_n_layers`-th layer full without `layer_types` (configuration: 106–110).
pub(super) const AFMOE: FamilyRules = FamilyRules {
    model_type: "afmoe",
    reference: reference!("afmoe", "AfmoeConfig", "AfmoeForCausalLM"),
    output_gate: Some(true),
    moe: Some(MoeKeys {
        shared: SharedExpert::CountOfTimesExpertWidth(&["num_shared_experts"]),
        dense_layers: DenseLayers::FirstKOf("num_dense_layers"),
        ..NUM_EXPERTS_MOE
    }),
    kv_layers: KvLayers {
        window_pattern: Some(("global_attn_every_n_layers", 4)),
        ..KvLayers::AS_LISTED
    },
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        norms_per_layer: 4,
        router_bias: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Granite MoE with sliding windows (granitemoe_swa/modeling_granitemoe_swa.py): Granite MoE
// with the shared MLP (`GraniteMoeSWAMLP`, 304–320; none at `shared_intermediate_size` 0,
// 360), each attention with a learned sink a head (`sinks`, 233), and Granite-SWA's
// `layer_types` (the first of each four layers full without it, configuration: 109–112).
pub(super) const GRANITEMOE_SWA: FamilyRules = FamilyRules {
    model_type: "granitemoe_swa",
    reference: reference!(
        "granitemoe_swa",
        "GraniteMoeSWAConfig",
        "GraniteMoeSWAForCausalLM",
    ),
    kv_layers: super::dense::GRANITE_SWA.kv_layers,
    weights: Some(WeightRules {
        sinks: true,
        ..WeightRules::LLAMA
    }),
    ..super::moe::GRANITEMOESHARED
};

// Flint (flint/modeling_flint.py): Qwen3-MoE's attention (q/k norms per head) with a
// sink a head (`FlintAttention.sinks`, 264; sliding layers rotary, full ones NoPE, which
// changes no width); routed experts as Qwen3-MoE's and a shared expert always added, without a
// gate (`FlintSparseMoeBlock`, 145–150); dense MLPs on `mlp_only_layers` (315–320). Without
// the lists, `FlintConfig.__post_init__` (configuration: 74–80) makes the first two layers, each
// layer `i % 4 == 1` and the last full, and layers 0 and 1 dense. Its router and sinks are FP32
// in transformers (`_keep_in_fp32_modules_strict`, 376); priced in the checkpoint's dtype as
// every other family's router.
pub(super) const FLINT: FamilyRules = FamilyRules {
    model_type: "flint",
    reference: reference!("flint", "FlintConfig", "FlintForCausalLM"),
    moe: Some(MoeKeys {
        dense_layers: DenseLayers::SparseStep(&[0, 1]),
        ..QWEN2_MOE
    }),
    // FlintConfig (configuration: 42–70): `head_dim` 128, not hidden / heads.
    defaults: &[
        ("decoder_sparse_step", 1),
        ("head_dim", 128),
        ("sliding_window", 513),
        ("shared_expert_intermediate_size", 1024),
    ],
    kv_layers: KvLayers {
        window_pattern: Some(("", 4)),
        full_at: FullAt::FirstTwoSecondOfPeriodAndLast,
        ..KvLayers::AS_LISTED
    },
    // FlintAttention: Qwen3-MoE's (`attention_bias` on all four, class default false).
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        sinks: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};
