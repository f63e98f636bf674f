//! The rows of the Gemma families: Gemma 1 and 2 (GeGLU MLPs, Gemma 2's alternating sliding
//! layers), Gemma 3 (sliding with a full layer each `sliding_window_pattern`-th) and Gemma 4
//! (two head sizes, per-layer inputs, KV-shared layers, its MoE variants).

use super::*;

// Gemma (gemma/modeling_gemma.py): Llama's attention and gated MLP (GeGLU, 84–92) with the
// head size of `head_dim` (`GemmaAttention`, 224; class default 256, configuration: 72) and
// tied embeddings by default (configuration: 81).
pub(super) const GEMMA: FamilyRules = FamilyRules {
    model_type: "gemma",
    reference: reference!("gemma", "GemmaConfig", "GemmaForCausalLM"),
    // GemmaConfig.
    defaults: &[("head_dim", 256)],
    tied_embeddings: true,
    // GemmaAttention: `attention_bias` on q, k, v and o; two norms a layer
    // (`GemmaDecoderLayer`, 293–294).
    weights: Some(WeightRules::LLAMA),
    ..DECODER
};

// Gemma 2 (gemma2/modeling_gemma2.py): Gemma's layers with pre- and post-FFN norms
// (`Gemma2DecoderLayer`, 291–295) and every other layer on sliding-window attention:
// `Gemma2Config.__post_init__` (configuration: 94–97) makes layer i slide where (i + 1) is
// odd, each second layer full. Soft-capping and `query_pre_attn_scalar` change no width.
pub(super) const GEMMA2: FamilyRules = FamilyRules {
    model_type: "gemma2",
    reference: reference!("gemma2", "Gemma2Config", "Gemma2ForCausalLM"),
    // Gemma2Config.
    defaults: &[("head_dim", 256), ("sliding_window", 4096)],
    tied_embeddings: true,
    // Without `layer_types`, the class's rule: every layer slides but each second. No
    // file key names the period; `sliding_window_pattern` is Gemma 3's spelling, read if a
    // file carries it.
    kv_layers: KvLayers {
        window_pattern: Some(("sliding_window_pattern", 2)),
        ..KvLayers::AS_LISTED
    },
    // Gemma2Attention: `attention_bias` on q, k, v and o, no q/k norm; four norms a layer.
    weights: Some(WeightRules {
        norms_per_layer: 4,
        // Gemma's four norms a layer, Llama's projections.
        checkpoint_names: Some(&[]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

pub(super) const GEMMA3: FamilyRules = FamilyRules {
    model_type: "gemma3",
    text_model_type: Some("gemma3_text"),
    reference: reference!("gemma3", "Gemma3TextConfig", "Gemma3ForCausalLM"),
    // Gemma3TextConfig.validate_architecture (configuration_gemma3.py: 115–121).
    heads_divide_hidden: true,
    // Gemma3TextConfig (configuration_gemma3.py): Google's multimodal files list
    // only a few text keys.
    defaults: &[
        ("vocab_size", 262_208),
        ("hidden_size", 2304),
        ("intermediate_size", 9216),
        ("num_hidden_layers", 26),
        ("num_attention_heads", 8),
        ("num_key_value_heads", 4),
        ("head_dim", 256),
        ("max_position_embeddings", 131_072),
    ],
    // Gemma3TextConfig: without `layer_types`, every layer slides but each
    // `sliding_window_pattern`-th (default 6).
    tied_embeddings: true,
    kv_layers: KvLayers {
        window_pattern: Some(("sliding_window_pattern", 6)),
        ..KvLayers::AS_LISTED
    },
    // Gemma3Attention: q/k norms of `head_dim`, `attention_bias`; four norms a layer
    // (`Gemma3DecoderLayer`).
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        norms_per_layer: 4,
        checkpoint_names: Some(&[]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

/// Gemma 4's full layers: their own head size and kv heads, keys equal to values where set.
const GEMMA4_GLOBAL: GlobalLayers = GlobalLayers {
    head_dim: "global_head_dim",
    kv_heads: "num_global_key_value_heads",
    k_eq_v: "attention_k_eq_v",
    per_layer_config: false,
};

/// Gemma 4's per-layer widths: the full layers' (`GEMMA4_GLOBAL`), and the KV-shared
/// layers' double-wide MLP.
const GEMMA4_WIDTHS: LayerWidths = LayerWidths {
    value_head_dim: None,
    sliding_kv_factor: 1,
    heads_per_layer: None,
    gate: None,
    global: Some(GEMMA4_GLOBAL),
    double_wide_ffn: Some(("use_double_wide_mlp", "num_kv_shared_layers")),
};

// Gemma 4 (gemma4/modeling_gemma4.py), the text model under `text_config`: sliding
// layers of `head_dim`, full layers of `global_head_dim` whose kv heads are
// `num_global_key_value_heads` and whose keys are their values where
// `attention_k_eq_v` (configuration_gemma4.py: 208–221; `Gemma4TextAttention`,
// 1153–1183). Per-layer input embeddings (`per_layer_inputs`), KV-shared layers
// (`kv_layers`, their double-wide MLP) and the MoE block beside the MLP (its MLP
// held as the block's shared expert) are sized by the arena and the weights.
pub(super) const GEMMA4: FamilyRules = FamilyRules {
    model_type: "gemma4",
    text_model_type: Some("gemma4_text"),
    reference: reference!("gemma4", "Gemma4TextConfig", "Gemma4ForCausalLM"),
    // Gemma-4 MoE (`enable_moe_block`): every layer runs its dense MLP of
    // `intermediate_size` beside 128 experts and sums the two (1352–1357,
    // 1387–1403): for the buffers the dense MLP is an always-on MLP beside the
    // routed experts, as a shared expert is.
    moe: Some(MoeKeys {
        experts: &["num_experts"],
        experts_field: "num_experts",
        expert_width: "moe_intermediate_size",
        shared: SharedExpert::Width("intermediate_size"),
        dense_layers: DenseLayers::None,
        top_k: &["top_k_experts"],
        enabled_by: Some("enable_moe_block"),
        latent: None,
    }),
    // Gemma4TextConfig (configuration_gemma4.py: 150–181, 208–209).
    defaults: &[
        ("num_key_value_heads", 4),
        ("head_dim", 256),
        ("global_head_dim", 512),
        ("hidden_size_per_layer_input", 256),
    ],
    // Per-layer input embeddings (E2B, E4B) and KV-shared layers are sized: the first
    // by `per_layer_inputs`, the second needs no activation buffer of its own (a
    // shared layer projects q only, `Gemma4TextAttention` 1170–1184) but doubles its
    // MLP where `use_double_wide_mlp` is on.
    refusals: &[],
    per_layer_inputs: Some("hidden_size_per_layer_input"),
    // Gemma4TextConfig: the last `num_kv_shared_layers` layers reuse the keys and
    // values of the last earlier layer of their kind (`kv_sharing_modes`).
    tied_embeddings: true,
    kv_layers: KvLayers {
        shared_count: Some("num_kv_shared_layers"),
        ..KvLayers::AS_LISTED
    },
    layer_widths: Some(GEMMA4_WIDTHS),
    // Gemma4TextAttention: q/k norms of the layer's head size (its v norm has no weight),
    // `attention_bias`; `Gemma4TextDecoderLayer`'s four norms, with `post_per_layer_input_norm`
    // where the model has per-layer inputs and `pre_feedforward_layernorm_2`,
    // `post_feedforward_layernorm_1` and `_2` where the MoE block runs beside the MLP
    // (`enable_moe_block`).
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        norms_per_layer: 4,
        per_layer_input_norm: true,
        moe_norms: 3,
        moe_beside_dense: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Gemma 4 Unified's text model (`Gemma4UnifiedTextConfig` under `text_config`;
// gemma4_unified/modeling_gemma4_unified.py): Gemma 4's attention (per-head q/k norms, a
// weightless v norm, KV-shared layers, k = v on full layers: 325–370) and MLP (its double-wide
// form on KV-shared layers: 436–447) in Gemma 2's four-norm layer (`Gemma4UnifiedTextDecoderLayer`)
// with no per-layer inputs and no MoE block. Full layers take their head size and kv heads
// from the file's `per_layer_config`, which the configuration class writes from
// `global_head_dim` (512) and, where `attention_k_eq_v`, `num_global_key_value_heads` where a
// file has none (configuration_gemma4_unified.py: 176–189).
pub(super) const GEMMA4_UNIFIED: FamilyRules = FamilyRules {
    model_type: "gemma4_unified",
    text_model_type: Some("gemma4_unified_text"),
    reference: reference!(
        "gemma4_unified",
        "Gemma4UnifiedTextConfig",
        "Gemma4UnifiedForCausalLM",
    ),
    moe: None,
    // Gemma4UnifiedTextConfig (configuration_gemma4_unified.py: 124–130, 176).
    defaults: &[
        ("num_key_value_heads", 4),
        ("head_dim", 256),
        ("global_head_dim", 512),
    ],
    per_layer_inputs: None,
    layer_widths: Some(LayerWidths {
        global: Some(GlobalLayers {
            per_layer_config: true,
            ..GEMMA4_GLOBAL
        }),
        ..GEMMA4_WIDTHS
    }),
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        norms_per_layer: 4,
        ..WeightRules::LLAMA
    }),
    ..GEMMA4
};
