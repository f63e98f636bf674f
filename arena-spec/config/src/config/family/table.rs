//! The family table: one [`FamilyRules`] row per [`Family`], each citing the transformers
//! folder and classes it follows (transformers 5.24.0). FAMILIES.md has one section per row.
//! The rows are `const`s in `table/` by the kind of their layers (`dense.rs` and `moe.rs`:
//! softmax attention with a dense MLP or routed experts; `latent.rs`: MLA and DeepSeek-V4's
//! compressed attention; `hybrid.rs`: other mixers beside it), each written as its
//! differences from [`DECODER`].

use super::shared_keys::{
    DEEPSEEK_V3_DEFAULTS, DEEPSEEK_V3_MOE, DSA_MOE, LFM2_DEFAULTS, LFM2_FFN, MINISTRAL3_DEFAULTS,
    MIXTRAL_MOE, NEMOTRON_MAMBA, NUM_EXPERTS_MOE, QWEN2_MOE,
};
use super::{
    reference, Bias, ChunkedLayers, CompressedAttention, DenseLayers, Family, FamilyRules, FullAt,
    GlobalLayers, HeadDim, KvLayers, LayerWidths, LayoutKeys, LinearMixer, MambaKeys, Mixers,
    MoeKeys, Mrope, QkNorm, Reference, Refusal, RefusalScope, SharedExpert, WeightRules,
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
    layout_keys: LayoutKeys::Common,
    mrope: Mrope::FromFile,
    dense_width_key: "intermediate_size",
    mixer_only: false,
    defaults: &[],
    refusals: &[],
    per_layer_inputs: None,
    aliases: &[],
    ffn_times_hidden: 0,
    embedding_extra_rows: None,
    context_keys: &["max_position_embeddings"],
    linear_mixer: None,
    ffn_auto_adjust: None,
    tied_embeddings: false,
    kv_layers: KvLayers::AS_LISTED,
    compressed: None,
    layer_widths: None,
    weights: None,
};

mod classic;
mod dense;
mod gemma;
mod hybrid;
mod latent;
mod moe;
mod moe_windowed;

impl Family {
    /// The family's row: every per-family answer the loader reads.
    pub const fn rules(self) -> &'static FamilyRules {
        match self {
            Family::Llama => &dense::LLAMA,
            Family::Cohere => &dense::COHERE,
            Family::Mistral => &dense::MISTRAL,
            Family::Ministral3 => &dense::MINISTRAL3,
            Family::Mistral3 => &dense::MISTRAL3,
            Family::Mixtral => &moe::MIXTRAL,
            Family::Dbrx => &moe::DBRX,
            Family::Qwen2 => &dense::QWEN2,
            Family::Qwen2Moe => &moe::QWEN2_MOE,
            Family::Qwen3 => &dense::QWEN3,
            Family::Qwen3Moe => &moe::QWEN3_MOE,
            Family::Qwen3Next => &hybrid::QWEN3_NEXT,
            Family::Qwen35 => &hybrid::QWEN35,
            Family::OlmoHybrid => &hybrid::OLMO_HYBRID,
            Family::GraniteMoeHybrid => &hybrid::GRANITEMOEHYBRID,
            Family::Qwen35Moe => &hybrid::QWEN35_MOE,
            Family::Qwen3Vl => &dense::QWEN3_VL,
            Family::Qwen3VlMoe => &moe::QWEN3_VL_MOE,
            Family::DeepseekV3 => &latent::DEEPSEEK_V3,
            Family::DeepseekV32 => &latent::DEEPSEEK_V32,
            Family::DeepseekV4 => &latent::DEEPSEEK_V4,
            Family::KimiK2 => &latent::KIMI_K2,
            Family::KimiK25 => &latent::KIMI_K25,
            Family::Glm4Moe => &moe::GLM4_MOE,
            Family::GlmMoeDsa => &latent::GLM_MOE_DSA,
            Family::GptOss => &moe::GPT_OSS,
            Family::Llama4 => &moe_windowed::LLAMA4,
            Family::Gemma3 => &gemma::GEMMA3,
            Family::Phi3 => &dense::PHI3,
            Family::Gemma4 => &gemma::GEMMA4,
            Family::Gemma4Unified => &gemma::GEMMA4_UNIFIED,
            Family::MimoV2Flash => &moe_windowed::MIMO_V2_FLASH,
            Family::Laguna => &moe::LAGUNA,
            Family::Olmo3 => &dense::OLMO3,
            Family::Exaone4 => &dense::EXAONE4,
            Family::MinimaxM2 => &moe::MINIMAX_M2,
            Family::MinimaxM3Vl => &moe::MINIMAX_M3_VL,
            Family::Step3p7 => &moe::STEP3P7,
            Family::MinimaxM1 => &hybrid::MINIMAX_M1,
            Family::KimiLinear => &hybrid::KIMI_LINEAR,
            Family::Lfm2 => &hybrid::LFM2,
            Family::NemotronH => &hybrid::NEMOTRON_H,
            Family::NemotronNas => &hybrid::NEMOTRON_NAS,
            Family::Mamba2 => &hybrid::MAMBA2,
            Family::Gemma => &gemma::GEMMA,
            Family::Gemma2 => &gemma::GEMMA2,
            Family::Glm4 => &dense::GLM4,
            Family::Granite => &dense::GRANITE,
            Family::Qwen2Vl => &dense::QWEN2_VL,
            Family::Qwen25Vl => &dense::QWEN2_5_VL,
            Family::Olmoe => &moe::OLMOE,
            Family::GraniteMoe => &moe::GRANITEMOE,
            Family::GraniteMoeShared => &moe::GRANITEMOESHARED,
            Family::GraniteSwa => &dense::GRANITE_SWA,
            Family::GraniteMoeSwa => &moe_windowed::GRANITEMOE_SWA,
            Family::GlmOcr => &dense::GLM_OCR,
            Family::Cosmos3Edge => &dense::COSMOS3_EDGE,
            Family::HyperClovaX => &dense::HYPERCLOVAX,
            Family::Axk1 => &latent::AXK1,
            Family::Ernie45Moe => &moe::ERNIE4_5_MOE,
            Family::Cohere2Moe => &moe_windowed::COHERE2_MOE,
            Family::StableLm => &dense::STABLELM,
            Family::Nemotron => &dense::NEMOTRON,
            Family::Afmoe => &moe_windowed::AFMOE,
            Family::MuseGlimmer => &dense::MUSE_GLIMMER,
            Family::Beam => &moe_windowed::BEAM,
            Family::Flint => &moe_windowed::FLINT,
            Family::Gpt2 => &classic::GPT2,
            Family::Gptj => &classic::GPTJ,
            Family::Falcon => &classic::FALCON,
            Family::Opt => &classic::OPT,
            Family::Bloom => &classic::BLOOM,
            Family::Granite4Vision => &dense::GRANITE4_VISION,
            Family::PaddleOcrVl => &dense::PADDLEOCR_VL,
            Family::Aria => &moe::ARIA,
            Family::DeepseekV2 => &latent::DEEPSEEK_V2,
            Family::Glm4MoeLite => &latent::GLM4_MOE_LITE,
            Family::Cohere2 => &dense::COHERE2,
            Family::CohereCompass => &dense::COHERE_COMPASS,
            Family::Molmo2 => &dense::MOLMO2,
            Family::Glm4v => &dense::GLM4V,
            Family::Glm4vMoe => &moe::GLM4V_MOE,
            Family::Ernie45 => &dense::ERNIE4_5,
            Family::ExaoneMoe => &moe::EXAONE_MOE,
            Family::HyV3 => &moe::HY_V3,
            Family::MiniCpm3 => &latent::MINICPM3,
            Family::Apertus => &dense::APERTUS,
            Family::Lfm2Moe => &hybrid::LFM2_MOE,
            Family::Synthetic => &hybrid::SYNTHETIC,
        }
    }
}
