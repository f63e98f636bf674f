//! The family table: one [`FamilyRules`] row per [`Family`], each citing the transformers
//! folder and classes it follows (transformers 5.24.0). FAMILIES.md has one section per row.
//! The rows are `const`s in `table/` by the kind of their layers (`attention.rs`: softmax
//! attention only; `latent.rs`: MLA and DeepSeek-V4's compressed attention; `hybrid.rs`: other
//! mixers beside it), each written as its differences from [`DECODER`].

use super::shared_keys::{
    DEEPSEEK_V3_DEFAULTS, DEEPSEEK_V3_MOE, DSA_MOE, LFM2_DEFAULTS, LFM2_FFN, MINISTRAL3_DEFAULTS,
    MIXTRAL_MOE, NEMOTRON_MAMBA, QWEN2_MOE,
};
use super::{
    reference, Bias, ChunkedLayers, CompressedAttention, DenseLayers, Family, FamilyRules,
    GlobalLayers, HeadDim, KvLayers, LayerWidths, LinearMixer, MambaKeys, Mixers, MoeKeys, Mrope,
    QkNorm, Reference, Refusal, RefusalScope, SharedExpert, WeightRules,
};

/// What a row does not say: a decoder of softmax attention and a dense MLP, its head size from
/// `head_dim` (else hidden / heads), no output gate, no MoE, Mamba-2, MLA or linear mixer, the
/// context in `max_position_embeddings`, untied embeddings, every attention layer keeping its
/// own keys unless `layer_types` says otherwise, and no key refused. Each row states its
/// `model_type` and reference and where it differs (`..DECODER` last); `model_type` here is
/// empty so that a row without one fails the family table's tests.
const DECODER: FamilyRules = FamilyRules {
    model_type: "",
    text_model_type: None,
    reference: None,
    mixers: Mixers::Attention,
    mla: false,
    moe: None,
    mamba: None,
    head_dim: HeadDim::Key,
    output_gate: Some(false),
    heads_divide_hidden: false,
    mrope: Mrope::FromFile,
    dense_width_key: "intermediate_size",
    mixer_only: false,
    defaults: &[],
    refusals: &[],
    per_layer_inputs: None,
    context_keys: &["max_position_embeddings"],
    linear_mixer: None,
    ffn_auto_adjust: None,
    tied_embeddings: false,
    kv_layers: KvLayers::AS_LISTED,
    compressed: None,
    layer_widths: None,
    weights: None,
};

mod attention;
mod hybrid;
mod latent;

impl Family {
    /// The family's row: every per-family answer the loader reads.
    pub const fn rules(self) -> &'static FamilyRules {
        match self {
            Family::Llama => &attention::LLAMA,
            Family::Cohere => &attention::COHERE,
            Family::Mistral => &attention::MISTRAL,
            Family::Ministral3 => &attention::MINISTRAL3,
            Family::Mistral3 => &attention::MISTRAL3,
            Family::Mixtral => &attention::MIXTRAL,
            Family::Qwen2 => &attention::QWEN2,
            Family::Qwen2Moe => &attention::QWEN2_MOE,
            Family::Qwen3 => &attention::QWEN3,
            Family::Qwen3Moe => &attention::QWEN3_MOE,
            Family::Qwen3Next => &hybrid::QWEN3_NEXT,
            Family::Qwen35 => &hybrid::QWEN35,
            Family::Qwen35Moe => &hybrid::QWEN35_MOE,
            Family::Qwen3Vl => &attention::QWEN3_VL,
            Family::Qwen3VlMoe => &attention::QWEN3_VL_MOE,
            Family::DeepseekV3 => &latent::DEEPSEEK_V3,
            Family::DeepseekV32 => &latent::DEEPSEEK_V32,
            Family::DeepseekV4 => &latent::DEEPSEEK_V4,
            Family::KimiK2 => &latent::KIMI_K2,
            Family::KimiK25 => &latent::KIMI_K25,
            Family::Glm4Moe => &attention::GLM4_MOE,
            Family::GlmMoeDsa => &latent::GLM_MOE_DSA,
            Family::GptOss => &attention::GPT_OSS,
            Family::Llama4 => &attention::LLAMA4,
            Family::Gemma3 => &attention::GEMMA3,
            Family::Phi3 => &attention::PHI3,
            Family::Gemma4 => &attention::GEMMA4,
            Family::MimoV2Flash => &attention::MIMO_V2_FLASH,
            Family::Laguna => &attention::LAGUNA,
            Family::Olmo3 => &attention::OLMO3,
            Family::Exaone4 => &attention::EXAONE4,
            Family::MinimaxM2 => &attention::MINIMAX_M2,
            Family::MinimaxM1 => &hybrid::MINIMAX_M1,
            Family::KimiLinear => &hybrid::KIMI_LINEAR,
            Family::Lfm2 => &hybrid::LFM2,
            Family::NemotronH => &hybrid::NEMOTRON_H,
            Family::NemotronNas => &hybrid::NEMOTRON_NAS,
            Family::Mamba2 => &hybrid::MAMBA2,
            Family::Synthetic => &hybrid::SYNTHETIC,
        }
    }
}
