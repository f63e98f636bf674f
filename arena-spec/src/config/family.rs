#![doc = include_str!("../../FAMILIES.md")]
//!
//! Each question whose answer differs between families (where the text model sits, how
//! the layers are laid out, which keys hold the expert count and widths, which defaults a
//! file may rely on) is one exhaustive `match` here, so a new family does not compile until
//! each is answered.

/// The model families the arena knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    Llama,
    Mistral,
    Mixtral,
    Qwen2,
    Qwen2Moe,
    Qwen3,
    Qwen3Moe,
    Qwen3Next,
    Qwen35,
    Qwen35Moe,
    DeepseekV3,
    DeepseekV32,
    KimiK2,
    Glm4Moe,
    GlmMoeDsa,
    GptOss,
    Llama4,
    Gemma3,
    Phi3,
    NemotronH,
    Mamba2,
    /// Not a published family: the shipped `synthetic-*` configs, which turn on every
    /// feature the arena sizes at once (MLA, experts, Gated DeltaNet, Mamba-2, the
    /// synthetic hyper-connection and grouped-O features) so each formula runs above its
    /// floor. Its keys follow DeepSeek (attention, experts) and Nemotron-H (Mamba-2).
    Synthetic,
}

/// How a family's layers are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mixers {
    /// Every layer is softmax attention (GQA or MLA); `layer_types`, when present, only
    /// says which window each uses.
    Attention,
    /// Gated DeltaNet and attention: `layer_types` or `full_attention_interval`.
    GatedDeltaNetHybrid,
    /// Nemotron-H: `layers_block_type` (alias `layer_types`) or `hybrid_override_pattern`.
    NemotronHybrid,
    /// Every layer a Mamba-2 mixer.
    Mamba2,
    /// Synthetic: `layer_types` may name attention, linear attention and Mamba-2 layers.
    AnyKind,
}

/// Where a MoE family's layers get a dense FFN instead of experts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DenseLayers {
    /// Every FFN layer routes (Mixtral, gpt-oss).
    None,
    /// The first `first_k_dense_replace` layers (DeepSeek, Kimi, GLM-4.5).
    FirstK,
    /// DeepSeek-V3.2, GLM-MoE-DSA: `mlp_layer_types` (`"dense"` / `"sparse"` per layer)
    /// when present, else the first `first_k_dense_replace` layers.
    FirstKOrTypes,
    /// Qwen: layer `i` routes unless it is in `mlp_only_layers` or `(i + 1) %
    /// decoder_sparse_step != 0`.
    SparseStep,
    /// Llama 4: the layers not in `moe_layers` (default: every `interleave_moe_layer_step`-th
    /// layer routes).
    Interleaved,
    /// Nemotron-H: the `mlp` (`-`) layers.
    PerLayer,
}

/// How a MoE family names its experts, their widths and its shared expert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MoeKeys {
    /// The routed expert count, first spelling present wins.
    pub experts: &'static [&'static str],
    /// The configuration class's own field for it, named when the file has none.
    pub experts_field: &'static str,
    /// The routed expert width.
    pub expert_width: &'static str,
    pub shared: SharedExpert,
    pub dense_layers: DenseLayers,
}

/// The shared expert of a MoE layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SharedExpert {
    None,
    /// One MLP of this key's width (Qwen `shared_expert_intermediate_size`, Nemotron-H
    /// `moe_shared_expert_intermediate_size`).
    Width(&'static str),
    /// One MLP of `n_shared_experts · moe_intermediate_size` (DeepSeek, Kimi, GLM).
    CountTimesExpertWidth,
    /// One MLP as wide as a routed expert (Llama 4's `shared_expert`).
    SameAsExpert,
}

impl Family {
    pub const ALL: [Family; 22] = [
        Family::Llama,
        Family::Mistral,
        Family::Mixtral,
        Family::Qwen2,
        Family::Qwen2Moe,
        Family::Qwen3,
        Family::Qwen3Moe,
        Family::Qwen3Next,
        Family::Qwen35,
        Family::Qwen35Moe,
        Family::DeepseekV3,
        Family::DeepseekV32,
        Family::KimiK2,
        Family::Glm4Moe,
        Family::GlmMoeDsa,
        Family::GptOss,
        Family::Llama4,
        Family::Gemma3,
        Family::Phi3,
        Family::NemotronH,
        Family::Mamba2,
        Family::Synthetic,
    ];

    /// The `model_type` of the family's (multimodal, where it has one) config files.
    pub fn model_type(self) -> &'static str {
        match self {
            Family::Llama => "llama",
            Family::Mistral => "mistral",
            Family::Mixtral => "mixtral",
            Family::Qwen2 => "qwen2",
            Family::Qwen2Moe => "qwen2_moe",
            Family::Qwen3 => "qwen3",
            Family::Qwen3Moe => "qwen3_moe",
            Family::Qwen3Next => "qwen3_next",
            Family::Qwen35 => "qwen3_5",
            Family::Qwen35Moe => "qwen3_5_moe",
            Family::DeepseekV3 => "deepseek_v3",
            Family::DeepseekV32 => "deepseek_v32",
            Family::KimiK2 => "kimi_k2",
            Family::Glm4Moe => "glm4_moe",
            Family::GlmMoeDsa => "glm_moe_dsa",
            Family::GptOss => "gpt_oss",
            Family::Llama4 => "llama4",
            Family::Gemma3 => "gemma3",
            Family::Phi3 => "phi3",
            Family::NemotronH => "nemotron_h",
            Family::Mamba2 => "mamba2",
            Family::Synthetic => "arena_synthetic",
        }
    }

    /// The `model_type` of a file holding the text model alone, for families whose main
    /// files nest it under `text_config`.
    pub fn text_model_type(self) -> Option<&'static str> {
        match self {
            Family::Qwen35 => Some("qwen3_5_text"),
            Family::Qwen35Moe => Some("qwen3_5_moe_text"),
            Family::Llama4 => Some("llama4_text"),
            Family::Gemma3 => Some("gemma3_text"),
            Family::Llama
            | Family::Mistral
            | Family::Mixtral
            | Family::Qwen2
            | Family::Qwen2Moe
            | Family::Qwen3
            | Family::Qwen3Moe
            | Family::Qwen3Next
            | Family::DeepseekV3
            | Family::DeepseekV32
            | Family::KimiK2
            | Family::Glm4Moe
            | Family::GlmMoeDsa
            | Family::GptOss
            | Family::Phi3
            | Family::NemotronH
            | Family::Mamba2
            | Family::Synthetic => None,
        }
    }

    /// The family of a `model_type`, and whether that file nests its text model under
    /// `text_config`.
    pub(crate) fn from_model_type(s: &str) -> Option<(Family, bool)> {
        Family::ALL.into_iter().find_map(|f| {
            if f.model_type() == s {
                Some((f, f.text_model_type().is_some()))
            } else if f.text_model_type() == Some(s) {
                Some((f, false))
            } else {
                None
            }
        })
    }

    /// The transformers model folder whose configuration and modeling files this family
    /// follows (`kimi_k2` files declare the DeepSeek-V3 architecture).
    pub fn reference(self) -> &'static str {
        match self {
            Family::KimiK2 => "deepseek_v3",
            other => other.model_type(),
        }
    }

    pub(crate) fn mixers(self) -> Mixers {
        match self {
            Family::Qwen3Next | Family::Qwen35 | Family::Qwen35Moe => Mixers::GatedDeltaNetHybrid,
            Family::NemotronH => Mixers::NemotronHybrid,
            Family::Mamba2 => Mixers::Mamba2,
            Family::Synthetic => Mixers::AnyKind,
            Family::Llama
            | Family::Mistral
            | Family::Mixtral
            | Family::Qwen2
            | Family::Qwen2Moe
            | Family::Qwen3
            | Family::Qwen3Moe
            | Family::DeepseekV3
            | Family::DeepseekV32
            | Family::KimiK2
            | Family::Glm4Moe
            | Family::GlmMoeDsa
            | Family::GptOss
            | Family::Llama4
            | Family::Gemma3
            | Family::Phi3 => Mixers::Attention,
        }
    }

    /// Multi-head latent attention: q/kv low-rank projections (`q_lora_rank`,
    /// `kv_lora_rank`, nope/rope/v head dims).
    pub(crate) fn has_mla(self) -> bool {
        match self {
            Family::DeepseekV3
            | Family::DeepseekV32
            | Family::KimiK2
            | Family::GlmMoeDsa
            | Family::Synthetic => true,
            Family::Llama
            | Family::Mistral
            | Family::Mixtral
            | Family::Qwen2
            | Family::Qwen2Moe
            | Family::Qwen3
            | Family::Qwen3Moe
            | Family::Qwen3Next
            | Family::Qwen35
            | Family::Qwen35Moe
            | Family::Glm4Moe
            | Family::GptOss
            | Family::Llama4
            | Family::Gemma3
            | Family::Phi3
            | Family::NemotronH
            | Family::Mamba2 => false,
        }
    }

    /// How the family names its experts; `None` for a dense family. A MoE family's file
    /// may still have no routed experts (Qwen3.5's dense models share the MoE keys' absence).
    pub(crate) fn moe(self) -> Option<MoeKeys> {
        use DenseLayers as D;
        use SharedExpert as S;
        let keys = |experts: &'static [&'static str], expert_width, shared, dense_layers| {
            Some(MoeKeys {
                experts,
                experts_field: experts[experts.len() - 1],
                expert_width,
                shared,
                dense_layers,
            })
        };
        match self {
            // MixtralConfig / GptOssConfig map `num_experts` onto `num_local_experts`; the
            // alias is read last when a file has both, so it wins.
            Family::Mixtral | Family::GptOss => keys(
                &["num_experts", "num_local_experts"],
                "intermediate_size",
                S::None,
                D::None,
            ),
            // Qwen3MoeSparseMoeBlock has no shared expert.
            Family::Qwen3Moe => keys(
                &["num_local_experts", "num_experts"],
                "moe_intermediate_size",
                S::None,
                D::SparseStep,
            ),
            Family::Qwen2Moe | Family::Qwen3Next => keys(
                &["num_experts"],
                "moe_intermediate_size",
                S::Width("shared_expert_intermediate_size"),
                D::SparseStep,
            ),
            // Qwen3_5MoeDecoderLayer routes in every layer.
            Family::Qwen35Moe => keys(
                &["num_experts"],
                "moe_intermediate_size",
                S::Width("shared_expert_intermediate_size"),
                D::None,
            ),
            // `num_local_experts` is an alias of `n_routed_experts` and wins over it.
            Family::DeepseekV3 | Family::KimiK2 | Family::Glm4Moe => keys(
                &["num_local_experts", "n_routed_experts"],
                "moe_intermediate_size",
                S::CountTimesExpertWidth,
                D::FirstK,
            ),
            // These configs also re-route a `num_experts` key to `n_routed_experts`.
            Family::DeepseekV32 => keys(
                &["num_local_experts", "num_experts", "n_routed_experts"],
                "moe_intermediate_size",
                S::CountTimesExpertWidth,
                D::FirstKOrTypes,
            ),
            Family::GlmMoeDsa => keys(
                &["num_local_experts", "num_experts", "n_routed_experts"],
                "moe_intermediate_size",
                S::CountTimesExpertWidth,
                D::FirstKOrTypes,
            ),
            Family::Synthetic => keys(
                &["n_routed_experts"],
                "moe_intermediate_size",
                S::CountTimesExpertWidth,
                D::FirstK,
            ),
            Family::Llama4 => keys(
                &["num_local_experts"],
                "intermediate_size",
                S::SameAsExpert,
                D::Interleaved,
            ),
            Family::NemotronH => keys(
                &["num_local_experts", "n_routed_experts"],
                "moe_intermediate_size",
                S::Width("moe_shared_expert_intermediate_size"),
                D::PerLayer,
            ),
            Family::Llama
            | Family::Mistral
            | Family::Qwen2
            | Family::Qwen3
            | Family::Qwen35
            | Family::Phi3
            | Family::Gemma3
            | Family::Mamba2 => None,
        }
    }

    /// The attention output is gated by a second half of the q projection: the reference's
    /// `q_proj` is `heads · head_dim · 2` wide whatever the file says (Qwen3-Next, Qwen3.5).
    /// `None`: the file's `attn_output_gate` decides (synthetic configs).
    pub(crate) fn gated_attention_output(self) -> Option<bool> {
        match self {
            Family::Qwen3Next | Family::Qwen35 | Family::Qwen35Moe => Some(true),
            Family::Synthetic => None,
            Family::Llama
            | Family::Mistral
            | Family::Mixtral
            | Family::Qwen2
            | Family::Qwen2Moe
            | Family::Qwen3
            | Family::Qwen3Moe
            | Family::DeepseekV3
            | Family::DeepseekV32
            | Family::KimiK2
            | Family::Glm4Moe
            | Family::GlmMoeDsa
            | Family::GptOss
            | Family::Llama4
            | Family::Gemma3
            | Family::Phi3
            | Family::NemotronH
            | Family::Mamba2 => Some(false),
        }
    }

    /// The configuration class refuses a file whose `hidden_size` is not a multiple of
    /// `num_attention_heads`, even with an explicit `head_dim` (LlamaConfig and
    /// Gemma3TextConfig `validate_architecture`).
    pub(crate) fn requires_heads_divide_hidden(self) -> bool {
        matches!(self, Family::Llama | Family::Gemma3)
    }

    /// Positions carry three streams (multimodal RoPE) whatever the file says (Qwen3.5's
    /// rotary embedding always takes three); other families only where the file has an
    /// `mrope_section`.
    pub(crate) fn always_mrope(self) -> bool {
        matches!(self, Family::Qwen35 | Family::Qwen35Moe)
    }

    /// The key of the dense FFN width, where it is not `intermediate_size`.
    pub(crate) fn dense_width_key(self) -> &'static str {
        match self {
            Family::Llama4 => "intermediate_size_mlp",
            Family::Llama
            | Family::Mistral
            | Family::Mixtral
            | Family::Qwen2
            | Family::Qwen2Moe
            | Family::Qwen3
            | Family::Qwen3Moe
            | Family::Qwen3Next
            | Family::Qwen35
            | Family::Qwen35Moe
            | Family::DeepseekV3
            | Family::DeepseekV32
            | Family::KimiK2
            | Family::Glm4Moe
            | Family::GlmMoeDsa
            | Family::GptOss
            | Family::Gemma3
            | Family::Phi3
            | Family::NemotronH
            | Family::Mamba2
            | Family::Synthetic => "intermediate_size",
        }
    }

    /// The value the family's configuration class gives `key` when a file leaves it out,
    /// for the keys vendor files are known to leave out. Other keys a file lacks are
    /// refused as missing rather than guessed.
    pub(crate) fn default_of(self, key: &str) -> Option<usize> {
        match (self, key) {
            // Gemma3TextConfig (configuration_gemma3.py): Google's multimodal files list only
            // a few text keys.
            (Family::Gemma3, "vocab_size") => Some(262_208),
            (Family::Gemma3, "hidden_size") => Some(2304),
            (Family::Gemma3, "intermediate_size") => Some(9216),
            (Family::Gemma3, "num_hidden_layers") => Some(26),
            (Family::Gemma3, "num_attention_heads") => Some(8),
            (Family::Gemma3, "num_key_value_heads") => Some(4),
            (Family::Gemma3, "head_dim") => Some(256),
            (Family::Gemma3, "max_position_embeddings") => Some(131_072),
            // GptOssConfig: head_dim 64 (not hidden / heads = 45).
            (Family::GptOss, "head_dim") => Some(64),
            // Llama4TextConfig.
            (Family::Llama4, "head_dim") => Some(128),
            (Family::Llama4, "interleave_moe_layer_step") => Some(1),
            // NemotronHConfig: the attention reads `head_dim` (class default 128); older
            // files spell it `attention_head_dim`, checked against it at load.
            (Family::NemotronH, "head_dim") => Some(128),
            (Family::NemotronH, "mamba_head_dim") => Some(64),
            (Family::NemotronH, "n_groups") => Some(8),
            (Family::NemotronH, "num_experts_per_tok") => Some(2),
            // Mamba2Config.
            (Family::Mamba2, "head_dim") => Some(64),
            (Family::Mamba2, "n_groups") => Some(8),
            (Family::Mamba2, "expand") => Some(2),
            // Qwen3Config: head_dim 128; Qwen3NextConfig, Qwen3_5(Moe)TextConfig: 256.
            (Family::Qwen3, "head_dim") => Some(128),
            (Family::Qwen3Next | Family::Qwen35 | Family::Qwen35Moe, "head_dim") => Some(256),
            // NemotronHConfig chunk 128, Mamba2Config chunk 256; both conv kernel 4.
            (Family::NemotronH, "chunk_size") => Some(128),
            (Family::Mamba2, "chunk_size") => Some(256),
            (Family::NemotronH | Family::Mamba2, "conv_kernel") => Some(4),
            // DeepseekV3Config / DeepseekV32Config (Kimi K2 is built as DeepSeek-V3) and
            // GlmMoeDsaConfig: the MLA ranks and head dims, the shared expert count, the
            // leading dense layers and the indexer. An explicit `null` is not replaced
            // (`q_lora_rank: null` means no q compression).
            (Family::DeepseekV3 | Family::DeepseekV32 | Family::KimiK2, "q_lora_rank") => {
                Some(1536)
            }
            (Family::GlmMoeDsa, "q_lora_rank") => Some(2048),
            (
                Family::DeepseekV3 | Family::DeepseekV32 | Family::KimiK2 | Family::GlmMoeDsa,
                "kv_lora_rank",
            ) => Some(512),
            (
                Family::DeepseekV3 | Family::DeepseekV32 | Family::KimiK2 | Family::GlmMoeDsa,
                "qk_rope_head_dim",
            ) => Some(64),
            (
                Family::DeepseekV3 | Family::DeepseekV32 | Family::KimiK2 | Family::GlmMoeDsa,
                "n_shared_experts",
            ) => Some(1),
            (
                Family::DeepseekV3 | Family::DeepseekV32 | Family::KimiK2 | Family::GlmMoeDsa,
                "first_k_dense_replace",
            ) => Some(3),
            (Family::DeepseekV32 | Family::GlmMoeDsa, "index_head_dim") => Some(128),
            (Family::DeepseekV32 | Family::GlmMoeDsa, "index_topk") => Some(2048),
            (Family::DeepseekV3 | Family::DeepseekV32 | Family::KimiK2, "qk_nope_head_dim") => {
                Some(128)
            }
            (Family::DeepseekV3 | Family::DeepseekV32 | Family::KimiK2, "v_head_dim") => Some(128),
            (Family::GlmMoeDsa, "qk_nope_head_dim") => Some(192),
            (Family::GlmMoeDsa, "v_head_dim") => Some(256),
            (Family::DeepseekV32, "index_n_heads") => Some(64),
            (Family::GlmMoeDsa, "index_n_heads") => Some(32),
            // Glm4MoeConfig.
            (Family::Glm4Moe, "n_shared_experts" | "first_k_dense_replace") => Some(1),
            // The shared expert widths of Qwen2MoeConfig (5632), Qwen3NextConfig and
            // Qwen3_5MoeTextConfig (512), NemotronHConfig (7688).
            (Family::Qwen2Moe, "shared_expert_intermediate_size") => Some(5632),
            (Family::Qwen3Next | Family::Qwen35Moe, "shared_expert_intermediate_size") => Some(512),
            (Family::NemotronH, "moe_shared_expert_intermediate_size") => Some(7688),
            // Qwen MoE configs: every layer routes unless told otherwise.
            (Family::Qwen2Moe | Family::Qwen3Moe | Family::Qwen3Next, "decoder_sparse_step") => {
                Some(1)
            }
            _ => None,
        }
    }
}
