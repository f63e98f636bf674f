//! The rows of the dense families whose layers are softmax attention (GQA, sliding, with
//! per-layer widths) and a dense MLP: Llama, Cohere, Mistral, Ministral 3 and Mistral 3,
//! Qwen2, Qwen3 and Qwen3-VL, Phi-3, OLMo 3, EXAONE 4, GLM-4 and GLM-4.1V, Granite and its
//! kin, Cohere 2; the Gemma families are in `gemma.rs`.

use super::*;

pub(super) const LLAMA: FamilyRules = FamilyRules {
    model_type: "llama",
    reference: reference!("llama", "LlamaConfig", "LlamaForCausalLM"),
    // LlamaConfig.validate_architecture (configuration_llama.py: 93–99).
    heads_divide_hidden: true,
    // LlamaAttention: `attention_bias` on q, k, v and o; LlamaMLP: `mlp_bias` on its three.
    weights: Some(WeightRules {
        mlp_bias: Bias::MlpBias,
        checkpoint_names: Some(&[]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Cohere (cohere/modeling_cohere.py): a parallel block — attention and MLP both
// read the one `input_layernorm` (a LayerNorm with a weight and no bias, 294) and
// both add into the residual (325, 338) — Llama's widths otherwise; per-head q/k
// LayerNorms where `use_qk_norm` (228–235); tied embeddings by default
// (configuration_cohere.py: 81). The context is `model_max_length` where the file
// has it: vLLM serves it for Cohere (`model_arch_config_convertor.py`: 403–406).
pub(super) const COHERE: FamilyRules = FamilyRules {
    model_type: "cohere",
    reference: reference!("cohere", "CohereConfig", "CohereForCausalLM"),
    context_keys: &["model_max_length", "max_position_embeddings"],
    tied_embeddings: true,
    // CohereAttention: `attention_bias` on all four, per-head q/k LayerNorms over every head
    // (`[heads, head_dim]` weights: the rank's heads) where `use_qk_norm`; one norm a layer (the
    // parallel block's `input_layernorm`).
    weights: Some(WeightRules {
        qk_norm: QkNorm::Whole,
        qk_norm_switched: true,
        norms_per_layer: 1,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

pub(super) const MISTRAL: FamilyRules = FamilyRules {
    model_type: "mistral",
    reference: reference!("mistral", "MistralConfig", "MistralForCausalLM"),
    kv_layers: KvLayers {
        all_slide: true,
        ..KvLayers::AS_LISTED
    },
    // MistralAttention: `bias=config.attention_bias` on q, k, v and o (no key: false).
    weights: Some(WeightRules {
        checkpoint_names: Some(&[]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Ministral 3 (ministral3/modeling_ministral3.py): Mistral's attention and MLP; a q
// width set by `head_dim`, not by hidden / heads; Llama-4's query scaling after RoPE
// (`llama_4_scaling_beta`) changes no width.
pub(super) const MINISTRAL3: FamilyRules = FamilyRules {
    model_type: "ministral3",
    reference: reference!("ministral3", "Ministral3Config", "Ministral3ForCausalLM"),
    defaults: MINISTRAL3_DEFAULTS,
    // Ministral3's attention (Mistral's): as Llama's.
    weights: Some(WeightRules {
        // Llama's names.
        checkpoint_names: Some(&[]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Mistral 3 (mistral3/modeling_mistral3.py): a `ministral3` text config under
// `text_config`, which `Mistral3Model` builds with `AutoModel` (186); the vision
// tower and projector are not the text arena's.
pub(super) const MISTRAL3: FamilyRules = FamilyRules {
    model_type: "mistral3",
    text_model_type: Some("ministral3"),
    reference: reference!(
        "ministral3",
        "Ministral3Config",
        "Mistral3ForConditionalGeneration"
    ),
    defaults: MINISTRAL3_DEFAULTS,
    // Mistral 3's text model (Ministral 3's): as Llama's.
    weights: Some(WeightRules {
        // Its text model's names, under the prefix its checkpoints use.
        checkpoint_names: Some(&[]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

pub(super) const QWEN2: FamilyRules = FamilyRules {
    model_type: "qwen2",
    reference: reference!("qwen2", "Qwen2Config", "Qwen2ForCausalLM"),
    // Qwen2Attention: q, k, v always biased, o never.
    weights: Some(WeightRules {
        qkv_bias: Bias::Always,
        o_bias: Bias::Never,
        checkpoint_names: Some(&[]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

pub(super) const QWEN3: FamilyRules = FamilyRules {
    model_type: "qwen3",
    reference: reference!("qwen3", "Qwen3Config", "Qwen3ForCausalLM"),
    // Qwen3Config.head_dim.
    defaults: &[("head_dim", 128)],
    // Qwen3Attention: `attention_bias` on all four, q_norm and k_norm of `head_dim`.
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        checkpoint_names: Some(&[]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Qwen3-VL's text model (`Qwen3VLTextConfig` under `text_config`): Qwen3's attention
// with q/k norm and the MLP; its rotary embedding always takes three position streams
// (modeling_qwen3_vl.py: `Qwen3VLTextRotaryEmbedding`, expand(3) at 401); deepstack adds
// vision features into the hidden states in place (after layers 0–2, 827–832).
pub(super) const QWEN3_VL: FamilyRules = FamilyRules {
    model_type: "qwen3_vl",
    text_model_type: Some("qwen3_vl_text"),
    reference: reference!(
        "qwen3_vl",
        "Qwen3VLTextConfig",
        "Qwen3VLForConditionalGeneration",
    ),
    mrope: Mrope::Always,
    // Qwen3VLTextConfig.head_dim (configuration: 85–100): 128, not hidden / heads.
    defaults: &[("head_dim", 128)],
    // Qwen3-VL's text attention: Qwen3's.
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        checkpoint_names: Some(&[]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

pub(super) const PHI3: FamilyRules = FamilyRules {
    model_type: "phi3",
    reference: reference!("phi3", "Phi3Config", "Phi3ForCausalLM"),
    kv_layers: KvLayers {
        all_slide: true,
        ..KvLayers::AS_LISTED
    },
    // Phi3Attention: as Llama's. Its checkpoints keep q, k and v as one `qkv_proj` and the
    // MLP's gate and up as one `gate_up_proj` (`Phi3Attention.qkv_proj`, `Phi3MLP.gate_up_proj`;
    // vLLM's `Phi3ForCausalLM` loads them as `QKVParallelLinear` and
    // `MergedColumnParallelLinear` shards).
    weights: Some(WeightRules {
        checkpoint_names: Some(&[]),
        checkpoint_fused: &[
            (
                ".self_attn.qkv_proj.",
                &[
                    ".self_attn.q_proj.",
                    ".self_attn.k_proj.",
                    ".self_attn.v_proj.",
                ],
            ),
            (".mlp.gate_up_proj.", &[".mlp.gate_proj.", ".mlp.up_proj."]),
        ],
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

/// A post-norm layer's two norms (after the attention, after the MLP) under their names,
/// renamed in this order so that neither rename takes the other's.
const POST_NORM_NAMES: &[(&str, &str)] = &[
    (".post_attention_layernorm.", ".post_feedforward_layernorm."),
    (".input_layernorm.", ".post_attention_layernorm."),
];

// OLMo 3 (olmo3/modeling_olmo3.py): q/k RMSNorm over the whole projection (162–163),
// post-norms, 3 sliding : 1 full layers; `head_dim` is read with `getattr`, else
// hidden / heads (144).
pub(super) const OLMO3: FamilyRules = FamilyRules {
    model_type: "olmo3",
    reference: reference!("olmo3", "Olmo3Config", "Olmo3ForCausalLM"),
    // Olmo3Attention: q and k normed over all their heads, whole on every rank (vLLM's
    // `Olmo2Attention`, which Olmo 3 runs: `RMSNorm(total_num_heads · head_dim)`, the heads
    // gathered across tp before the norm).
    weights: Some(WeightRules {
        qkv_bias: Bias::Never,
        o_bias: Bias::Never,
        qk_norm: QkNorm::WholeUnsplit,
        // `Olmo3DecoderLayer`'s two norms follow the attention and the MLP.
        checkpoint_names: Some(POST_NORM_NAMES),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// EXAONE 4 (exaone4/modeling_exaone4.py): q/k RMSNorm per head (209–210), post-norms,
// sliding and global layers (no RoPE on global ones); `head_dim` as OLMo 3's (194).
pub(super) const EXAONE4: FamilyRules = FamilyRules {
    model_type: "exaone4",
    reference: reference!("exaone4", "Exaone4Config", "Exaone4ForCausalLM"),
    // Exaone4Config (configuration: 83): 32 kv heads, not derived from the heads.
    defaults: &[("num_key_value_heads", 32)],
    // Exaone4Attention: Qwen3's.
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        // `Exaone4DecoderLayer`'s two norms follow the attention and the MLP.
        checkpoint_names: Some(POST_NORM_NAMES),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// GLM-4 dense (glm4/modeling_glm4.py, GLM-4-0414): Llama's widths with a fused
// `gate_up_proj` (2 · I, 54), the head size of `head_dim` (205; class default 128,
// configuration: 61), and four norms a layer (`Glm4DecoderLayer`, 74–77). A partial rotary
// factor changes no width.
pub(super) const GLM4: FamilyRules = FamilyRules {
    model_type: "glm4",
    reference: reference!("glm4", "Glm4Config", "Glm4ForCausalLM"),
    // Glm4Config: head_dim 128, `attention_bias` true (configuration: 73; a flag, 1 here).
    defaults: &[("head_dim", 128), ("attention_bias", 1)],
    // Glm4Attention: `attention_bias` on q, k and v, o unbiased (220).
    weights: Some(WeightRules {
        o_bias: Bias::Never,
        norms_per_layer: 4,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Granite (granite/modeling_granite.py): Llama's attention (115–137) and MLP (204–212);
// its multipliers (`embedding_multiplier`, `residual_multiplier`, `attention_multiplier`,
// `logits_scaling`: configuration 82–85) scale activations and change no width.
pub(super) const GRANITE: FamilyRules = FamilyRules {
    model_type: "granite",
    reference: reference!("granite", "GraniteConfig", "GraniteForCausalLM"),
    // GraniteAttention: `attention_bias` on q, k, v and o; GraniteMLP: `mlp_bias` on its
    // three projections.
    weights: Some(WeightRules {
        mlp_bias: Bias::MlpBias,
        // Llama's names.
        checkpoint_names: Some(&[]),
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Granite 4 Vision (granite4_vision/modular_granite4_vision.py): its text model is Granite's
// (`Granite4VisionTextConfig(GraniteConfig)`, `Granite4VisionTextDecoderLayer(GraniteDecoderLayer)`,
// 102–103, 346–356) under `text_config`; the deepstack features it adds into the hidden
// states before chosen layers (`Granite4VisionTextModel.forward`) change no width. The vision
// tower and its window Q-Former are not the text arena's.
pub(super) const GRANITE4_VISION: FamilyRules = FamilyRules {
    model_type: "granite4_vision",
    text_model_type: Some("granite4_vision_text"),
    reference: reference!(
        "granite4_vision",
        "Granite4VisionTextConfig",
        "Granite4VisionForConditionalGeneration",
    ),
    ..GRANITE
};

// HyperCLOVA X (hyperclovax/modeling_hyperclovax.py): Granite's attention (181–205, the head
// size of `head_dim`, else hidden / heads: configuration 113–114) and MLP (`mlp_bias`, 249–257),
// and where `use_post_norm` is true (class default, configuration: 107) a norm after each of
// them (`post_norm1`, `post_norm2`: peri-layer normalization, 275–281). Its multipliers change
// no width.
pub(super) const HYPERCLOVAX: FamilyRules = FamilyRules {
    model_type: "hyperclovax",
    reference: reference!("hyperclovax", "HyperCLOVAXConfig", "HyperCLOVAXForCausalLM"),
    defaults: &[("use_post_norm", 1)],
    weights: Some(WeightRules {
        mlp_bias: Bias::MlpBias,
        post_norms_switched: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Nemotron-4 (nemotron/modeling_nemotron.py): Llama's attention at `head_dim` (`attention_bias`
// on all four, 244–247), an MLP without a gate (`NemotronMLP`: up and down through ReLU²,
// `mlp_bias` on both, 172–179), which the arena's gated-MLP buffers hold (wider than it
// needs), and LayerNorms with a bias (`NemotronLayerNorm1P`, 62; two a layer, 299–300, and the
// final one, 380); RoPE on half of each head by default changes no width.
pub(super) const NEMOTRON: FamilyRules = FamilyRules {
    model_type: "nemotron",
    reference: reference!("nemotron", "NemotronConfig", "NemotronForCausalLM"),
    weights: Some(WeightRules {
        mlp_bias: Bias::MlpBias,
        gated_ffn: false,
        norm_bias: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Muse Glimmer's text model (`MuseGlimmerTextConfig` under `text_config`;
// muse_glimmer/modeling_muse_glimmer.py): attention at `head_dim` (read with `getattr`, 275)
// with a weightless q/k norm (298) and an output gate of its own (`gate_proj`, hidden →
// heads · head_dim, 297: held as a doubled q), four centered norms a layer (357–360), a gated
// MLP (129–141); without `layer_types` each fourth layer counted back from the last is full
// (configuration: 147–151). Its embedding norm has no weight (420).
pub(super) const MUSE_GLIMMER: FamilyRules = FamilyRules {
    model_type: "muse_glimmer",
    text_model_type: Some("muse_glimmer_text"),
    reference: reference!(
        "muse_glimmer",
        "MuseGlimmerTextConfig",
        "MuseGlimmerForConditionalGeneration",
    ),
    output_gate: Some(true),
    kv_layers: KvLayers {
        window_pattern: Some(("", 4)),
        full_at: FullAt::FromLast,
        ..KvLayers::AS_LISTED
    },
    weights: Some(WeightRules {
        norms_per_layer: 4,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// StableLM (stablelm/modeling_stablelm.py): Llama's attention at hd = H / nH (226) without
// biases where `use_qkv_bias` is false (239–242) and its MLP (140–148), LayerNorms with a bias
// for the two norms a layer and the final one (327–331, `StableLmModel.norm`); RoPE on a part
// of each head (`partial_rotary_factor`) changes no width. The keys that change the weights
// otherwise are refused, each naming itself: `use_qkv_bias` (q, k and v biased),
// `qk_layernorm` (a LayerNorm a head, 244–249) and `use_parallel_residual` (one norm a layer).
pub(super) const STABLELM: FamilyRules = FamilyRules {
    model_type: "stablelm",
    reference: reference!("stablelm", "StableLmConfig", "StableLmForCausalLM"),
    refusals: &[
        Refusal {
            key: "use_qkv_bias",
            scope: RefusalScope::AnyModel,
            reason: "biases on q, k and v (use_qkv_bias) are not counted here",
        },
        Refusal {
            key: "qk_layernorm",
            scope: RefusalScope::AnyModel,
            reason: "a LayerNorm a head on q and k (qk_layernorm) is not counted here",
        },
        Refusal {
            key: "use_parallel_residual",
            scope: RefusalScope::AnyModel,
            reason:
                "the parallel block's one norm a layer (use_parallel_residual) is not counted here",
        },
    ],
    weights: Some(WeightRules {
        qkv_bias: Bias::Never,
        o_bias: Bias::Never,
        norm_bias: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Granite with sliding windows (granite_swa/modeling_granite_swa.py): Granite's attention
// (`GraniteSWAAttention`: q, k, v and o of `head_dim`, read with `getattr`, else H / nH,
// 131–148) with a learned sink a head (`sinks`, 153) on every layer, and `layer_types`;
// without it each fourth layer, the first of its four, attends to the whole sequence
// (`GraniteSWAConfig.__post_init__`, configuration: 104–107). Granite's MLP and multipliers.
pub(super) const GRANITE_SWA: FamilyRules = FamilyRules {
    model_type: "granite_swa",
    reference: reference!("granite_swa", "GraniteSWAConfig", "GraniteSWAForCausalLM"),
    kv_layers: KvLayers {
        // No key names the period: 4, fixed by the class.
        window_pattern: Some(("", 4)),
        full_at: FullAt::PeriodStart,
        ..KvLayers::AS_LISTED
    },
    weights: Some(WeightRules {
        mlp_bias: Bias::MlpBias,
        sinks: true,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Qwen2-VL's and Qwen2.5-VL's text models (`Qwen2VLTextConfig`, `Qwen2_5_VLTextConfig` under
// `text_config`): Qwen2's attention (q, k and v biased, o not; hd = H / nH:
// modeling_qwen2_vl.py 491–507, modeling_qwen2_5_vl.py 593–628) and MLP, M-RoPE's three
// position streams always (`get_rope_index`).
pub(super) const QWEN2_VL: FamilyRules = FamilyRules {
    model_type: "qwen2_vl",
    text_model_type: Some("qwen2_vl_text"),
    reference: reference!(
        "qwen2_vl",
        "Qwen2VLTextConfig",
        "Qwen2VLForConditionalGeneration"
    ),
    mrope: Mrope::Always,
    // Qwen2VLAttention: Qwen2's.
    weights: Some(WeightRules {
        qkv_bias: Bias::Always,
        o_bias: Bias::Never,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

pub(super) const QWEN2_5_VL: FamilyRules = FamilyRules {
    model_type: "qwen2_5_vl",
    text_model_type: Some("qwen2_5_vl_text"),
    reference: reference!(
        "qwen2_5_vl",
        "Qwen2_5_VLTextConfig",
        "Qwen2_5_VLForConditionalGeneration",
    ),
    ..QWEN2_VL
};

// Cohere 2 (cohere2/modeling_cohere2.py; Command R7B, Command A): Cohere's parallel block
// (one `input_layernorm`, 271) without its q/k norms, hd = H / nH whatever `head_dim` says
// (`Cohere2Config.__post_init__`, configuration: 92), tied embeddings by default (80), and
// every fourth layer full, the others sliding (95–100: `sliding_window_pattern`, default 4).
pub(super) const COHERE2: FamilyRules = FamilyRules {
    model_type: "cohere2",
    reference: reference!("cohere2", "Cohere2Config", "Cohere2ForCausalLM"),
    tied_embeddings: true,
    kv_layers: KvLayers {
        window_pattern: Some(("sliding_window_pattern", 4)),
        ..KvLayers::AS_LISTED
    },
    // Cohere2Attention: `attention_bias` on all four; one norm a layer.
    weights: Some(WeightRules {
        norms_per_layer: 1,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// Cohere Compass's text model (`CohereCompassTextConfig` under `text_config`;
// cohere_compass/modeling_cohere_compass.py): Cohere 2's layer (one `input_layernorm`, 323–329;
// q, k, v and o biased by `attention_bias`, 266–276; hd = H / nH whatever `head_dim` says,
// configuration: 119), but every layer full where the file lists no `layer_types`
// (configuration: 113–114: its `sliding_window_pattern` fallback is never reached). Its
// `rope_parameters` are per layer type, M-RoPE's sections inside them.
pub(super) const COHERE_COMPASS: FamilyRules = FamilyRules {
    model_type: "cohere_compass",
    text_model_type: Some("cohere_compass_text"),
    reference: reference!(
        "cohere_compass",
        "CohereCompassTextConfig",
        "CohereCompassForCausalLM",
    ),
    kv_layers: KvLayers::AS_LISTED,
    ..COHERE2
};

// Molmo2's text model (`Molmo2TextConfig` under `text_config`; molmo2/modeling_molmo2.py):
// Llama's layer (`Molmo2DecoderLayer`, 330–340: two norms, after rather than before the
// attention and MLP where `norm_after`, the same count) with OLMo 2's attention, q, k and v
// biased by `attention_bias` and o never (238–247), q and k normed a head where `qk_norm_type`
// is "qwen3" (the class default) and across the whole projection where "olmo" (248–256). The
// embedding holds `additional_vocab_size` rows beyond the vocabulary, which the untied head
// does not predict (`Molmo2TextModel`, 629–637; the head: 911).
pub(super) const MOLMO2: FamilyRules = FamilyRules {
    model_type: "molmo2",
    text_model_type: Some("molmo2_text"),
    reference: reference!(
        "molmo2",
        "Molmo2TextConfig",
        "Molmo2ForConditionalGeneration",
    ),
    // Molmo2TextConfig (configuration_molmo2.py: 137, 139).
    defaults: &[("head_dim", 128), ("additional_vocab_size", 128)],
    embedding_extra_rows: Some("additional_vocab_size"),
    weights: Some(WeightRules {
        o_bias: Bias::Never,
        qk_norm: QkNorm::PerHead,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// GLM-4.1V's text model (`Glm4vTextConfig` under `text_config`; glm4v/modeling_glm4v.py):
// q, k and v always biased, o not, hd = H / nH (`Glm4vTextAttention`, 536–560), GLM-4's
// fused MLP (612–613) and four norms a layer (631–634), M-RoPE's three position streams.
pub(super) const GLM4V: FamilyRules = FamilyRules {
    model_type: "glm4v",
    text_model_type: Some("glm4v_text"),
    reference: reference!("glm4v", "Glm4vTextConfig", "Glm4vForConditionalGeneration"),
    mrope: Mrope::Always,
    weights: Some(WeightRules {
        qkv_bias: Bias::Always,
        o_bias: Bias::Never,
        norms_per_layer: 4,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// GLM-OCR's text model (`GlmOcrTextConfig` under `text_config`; glm_ocr/modeling_glm_ocr.py):
// GLM-4.1V's layers (four norms, a fused gate/up MLP: `GlmOcrTextMLP`, 243–249; M-RoPE) with
// no bias on q, k, v or o whatever the file says (`GlmOcrTextAttention`, 193–196) and the
// head size of `head_dim`, read with `getattr`, else hidden / heads (186).
pub(super) const GLM_OCR: FamilyRules = FamilyRules {
    model_type: "glm_ocr",
    text_model_type: Some("glm_ocr_text"),
    reference: reference!(
        "glm_ocr",
        "GlmOcrTextConfig",
        "GlmOcrForConditionalGeneration"
    ),
    weights: Some(WeightRules {
        qkv_bias: Bias::Never,
        o_bias: Bias::Never,
        norms_per_layer: 4,
        ..WeightRules::LLAMA
    }),
    ..GLM4V
};

// Cosmos 3 Edge's text model (`Cosmos3EdgeTextConfig` under `text_config`;
// cosmos3_edge/modeling_cosmos3_edge.py): Llama's attention (`Cosmos3EdgeTextAttention`,
// 191–214, `attention_bias` on all four) at `head_dim` (class default 128, configuration: 78)
// and an MLP without a gate (`Cosmos3EdgeTextMLP`: `fc1` hidden → I and `fc2` back through
// ReLU², `mlp_bias` on both, 259–268), which the arena's gated-MLP buffers hold (wider than
// it needs); M-RoPE where the file's `rope_parameters` has `mrope_section` (its class sets
// one, 84–89).
pub(super) const COSMOS3_EDGE: FamilyRules = FamilyRules {
    model_type: "cosmos3_edge",
    text_model_type: Some("cosmos3_edge_text"),
    reference: reference!(
        "cosmos3_edge",
        "Cosmos3EdgeTextConfig",
        "Cosmos3EdgeForConditionalGeneration",
    ),
    defaults: &[("head_dim", 128)],
    weights: Some(WeightRules {
        mlp_bias: Bias::MlpBias,
        gated_ffn: false,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};

// ERNIE 4.5 dense (ernie4_5/modeling_ernie4_5.py): Llama's attention (185–202) and MLP (90–99),
// the head size of `head_dim` (class default 128, configuration: 80–86), tied embeddings by
// default (77).
pub(super) const ERNIE4_5: FamilyRules = FamilyRules {
    model_type: "ernie4_5",
    reference: reference!("ernie4_5", "Ernie4_5Config", "Ernie4_5ForCausalLM"),
    defaults: &[("head_dim", 128)],
    // `use_bias` puts a bias on every projection, the MLP's too, which the weights do not
    // declare: refused rather than counted short (its default is false).
    refusals: &[Refusal {
        key: "use_bias",
        scope: RefusalScope::AnyModel,
        reason: "biases on the MLP's projections (use_bias) are not declared in the weights",
    }],
    tied_embeddings: true,
    weights: Some(WeightRules::LLAMA),
    ..DECODER
};

// PaddleOCR-VL's text model (`PaddleOCRTextConfig` under `text_config`;
// paddleocr_vl/modeling_paddleocr_vl.py): ERNIE 4.5's layers (`PaddleOCRAttention`, 312–342,
// `PaddleOCRMLP`, 224–233: `use_bias` on every projection, refused as ERNIE's is; two norms a
// layer, 423–424), `head_dim` 128 by default (configuration: 130), tied embeddings (127) and
// M-RoPE's three position streams always (`mrope_section`, default [16, 24, 24]: 182).
pub(super) const PADDLEOCR_VL: FamilyRules = FamilyRules {
    model_type: "paddleocr_vl",
    text_model_type: Some("paddleocr_vl_text"),
    reference: reference!(
        "paddleocr_vl",
        "PaddleOCRTextConfig",
        "PaddleOCRVLForConditionalGeneration",
    ),
    mrope: Mrope::Always,
    ..ERNIE4_5
};

// Apertus (apertus/modeling_apertus.py): Llama's attention with q/k norms of `head_dim`
// (197–223) and an MLP without a gate (`ApertusMLP`: up and down through xIELU, whose
// `alpha_p` and `alpha_n` are learned a layer, 43–50); the arena's gated-MLP buffers hold it
// (wider than it needs).
pub(super) const APERTUS: FamilyRules = FamilyRules {
    model_type: "apertus",
    reference: reference!("apertus", "ApertusConfig", "ApertusForCausalLM"),
    weights: Some(WeightRules {
        qk_norm: QkNorm::PerHead,
        gated_ffn: false,
        activation_params: 2,
        ..WeightRules::LLAMA
    }),
    ..DECODER
};
