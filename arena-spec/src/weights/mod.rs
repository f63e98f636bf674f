//! The model's weights, declared like the activation arena: one annotated field a tensor of
//! the reference's model (every layer's copy back to back, `per_layer`), sized from the
//! config and the checkpoint's format, in six declarations by part of the model —
//! [`ModelWeights`] (embedding, head, norms, per-layer inputs, hyper-connections),
//! [`AttentionWeights`], [`LatentAttentionWeights`] (MLA), [`CompressedAttentionWeights`]
//! (DeepSeek-V4), [`MixerWeights`] (GDN, Mamba-2, short conv, lightning, KDA) and
//! [`FfnWeights`] — gathered in [`WeightsSizes`].
//!
//! What each family's layers hold is [`WeightLayers`] (`layers.rs`): layer counts and widths
//! by group, from transformers' modules for the family, read through the `weights` answer of
//! the family's row (`config::family::WeightRules`: biases, q/k norms, norms a layer, the
//! FFN's shape). At [`WeightFormat::Bf16`] and the
//! reference's vocabulary every buffer is two bytes an element, so [`parameters`] is the
//! reference's `model.parameters()` count, a tied matrix once: checked exactly against the
//! oracle's count for every shipped file of a counted family (`tests/weights.rs`;
//! `param_count` in `tests/oracle/widths.json`, built by `tests/oracle/widths.py` on
//! PyTorch's meta device). Buffers are not parameters (DeepSeek's `e_score_correction_bias`
//! is a buffer in transformers; a checkpoint may carry it, a few thousand elements). A family
//! whose row has no weight rules is refused by name ([`WeightsError::FamilyNotCounted`],
//! listing [`counted_model_types`]), never estimated.
//!
//! On a rank, the sizes are of the rank's config (`ModelConfig::shard`): heads, kv heads, FFN
//! and expert widths and local experts as the rank sizing splits them, the layers of its
//! stage; the embedding and the output head split by tp over the vocabulary as vLLM's
//! `VocabParallelEmbedding` splits them (the vocabulary padded to a multiple of 64 first,
//! `DEFAULT_VOCAB_PADDING_SIZE`), the embedding on the first stage, the head on the last;
//! norms, MLA's latent projections and other vectors whole on every rank (replicated).
//!
//! The bytes of a matrix follow its format's definition ([`WeightFormat::linear_bytes`],
//! [`WeightFormat::experts_bytes`]); embeddings, the head, routers, norms and biases are
//! 16-bit in every format.
//!
//! Not counted, as the reference does not build them: multi-token-prediction layers
//! (DeepSeek's `num_nextn_predict_layers`; an engine loads them only to draft with them, and
//! then adds their bytes), and vision towers of multimodal files (the text model alone).

mod allocated;
mod attention;
pub mod checkpoint;
mod compressed;
mod ffn;
mod latent;
mod layers;
mod mixers;
mod model;
mod rules;

pub use crate::config::{WeightFormat, WeightFormats, WeightPart};
pub use allocated::AllocatedWeights;
pub use attention::{
    AttentionWeights, AttentionWeightsSizes, AttentionWeightsViews, AttentionWeightsViewsMut,
};
pub use compressed::{
    CompressedAttentionWeights, CompressedAttentionWeightsSizes, CompressedAttentionWeightsViews,
    CompressedAttentionWeightsViewsMut,
};
pub use ffn::{FfnWeights, FfnWeightsSizes, FfnWeightsViews, FfnWeightsViewsMut};
pub use latent::{
    LatentAttentionWeights, LatentAttentionWeightsSizes, LatentAttentionWeightsViews,
    LatentAttentionWeightsViewsMut,
};
pub use layers::{AttentionGroup, FfnBlocks, FfnGroup, WeightLayers};
pub use mixers::{MixerWeights, MixerWeightsSizes, MixerWeightsViews, MixerWeightsViewsMut};
pub use model::{ModelWeights, ModelWeightsSizes, ModelWeightsViews, ModelWeightsViewsMut};
pub use rules::counted_model_types;

use crate::config::{Family, ModelConfig};
use arena_runtime::{AllocOptions, Arena, SizeError};

/// Why weights were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WeightsError {
    /// The family's modules are not listed here yet.
    #[error(
        "{model}: the parameters of a {family:?} model are not counted yet (counted: {counted}); \
         give its weight bytes instead (arena gpu-plan: --weights-bytes)"
    )]
    FamilyNotCounted {
        model: String,
        family: Family,
        counted: String,
    },
    /// The checkpoint's quantization has no byte formula here.
    #[error("{model}: {why}; give its weight bytes instead (arena gpu-plan: --weights-bytes)")]
    FormatNotPlanned { model: String, why: String },
    /// Its attention widths differ by layer in a way the declarations, one width for each
    /// type of layer, do not hold.
    #[error("{model}: {why}; give its weight bytes instead (arena gpu-plan: --weights-bytes)")]
    PerLayerWidths { model: String, why: &'static str },
    /// A size overflowed.
    #[error("{model}: weights: {source}")]
    Size { model: String, source: SizeError },
}

/// The six weight declarations' sizes for one config (a model, or a rank's config), in
/// bytes, a field a tensor (every layer's copy together). [`AllocatedWeights::allocate`]
/// allocates them (each part also allocates alone: `ModelWeights::allocate(device,
/// &sizes.model)`), [`Self::device_bytes`] is what that takes.
///
/// A tensor's bytes are in its format: a matrix's buffer is `u8`, a layer's copy one row of
/// [`WeightFormat::linear_bytes`] (its FP8 scales after its elements); so a layer's view
/// (`AttentionWeightsViews::of(&w.attention).q_proj.layer(i)`) is that layer's bytes,
/// `[bytes]`, which the engine's kernels read at their own types. Norms, biases, embeddings
/// and routers are `bf16` of their shape. A buffer's layers follow one another without
/// padding (layer `i` at `i` times a layer's bytes, the buffer itself 256-byte aligned): a
/// layer of a matrix whose widths are multiples of 16 starts 16-byte aligned, a small
/// vector's layer may not (DeepSeek-V4's `hc_scale` is 12 bytes a layer).
///
/// Formats planned: BF16; FP8 in blocks, per channel and per tensor; INT8 (W8A8); NVFP4;
/// MXFP8; integer groups (AWQ, GPTQ, compressed-tensors' W4A16/W8A16); MXFP4 experts, and
/// DeepSeek-V4's FP4 experts — one a part of the model ([`WeightFormats`]). A recipe with no
/// formula here makes a part [`WeightFormat::Unplanned`], and [`Self::new`] refuses it
/// rather than size it as 16 bits.
///
/// Which buffer holds what: the fields' docs give the reference's tensor names. Two groups
/// of attention layers where the full-attention layers have widths of their own (Gemma 4,
/// Laguna): `q_proj` and the others hold the layers at the model's widths (the sliding
/// ones), `full_q_proj` and the others the full ones; Gemma 4's MLP beside its MoE block is
/// held by the shared-expert buffers (`shared_gate_proj`, ...), which it is in shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeightsSizes {
    pub model: ModelWeightsSizes,
    pub attention: AttentionWeightsSizes,
    pub latent: LatentAttentionWeightsSizes,
    pub compressed: CompressedAttentionWeightsSizes,
    pub mixers: MixerWeightsSizes,
    pub ffn: FfnWeightsSizes,
}

impl WeightsSizes {
    /// Every weight of `config` in `formats` (one [`WeightFormat`] for the whole model, or
    /// one a part: [`WeightFormats`]), the vocabulary padded to 64 rows as an engine
    /// allocates it (vLLM's `VocabParallelEmbedding` pads it on one GPU too), so a plan never
    /// holds less. The formats need not be the file's ([`ModelConfig::weight_formats`]):
    /// sizing a model at another format is how an engine plans a quantized copy. A part in
    /// [`WeightFormat::Unplanned`] is refused ([`WeightsError::FormatNotPlanned`], saying
    /// why), never sized as 16 bits.
    pub fn new(
        config: &ModelConfig,
        formats: impl Into<WeightFormats>,
    ) -> Result<Self, WeightsError> {
        let formats = formats.into();
        if formats.is_unplanned() {
            return Err(WeightsError::FormatNotPlanned {
                model: config.source.to_string(),
                why: formats
                    .unplanned
                    .as_deref()
                    .unwrap_or("its weight format is not planned here")
                    .to_string(),
            });
        }
        Self::with_layers(config, &WeightLayers::of(config, true)?, &formats)
    }

    /// The same from groups built by the caller ([`WeightLayers::of`]), at any format
    /// (`Unplanned` is sized as 16 bits here: the parameter count's path).
    pub fn with_layers(
        config: &ModelConfig,
        w: &WeightLayers,
        formats: &WeightFormats,
    ) -> Result<Self, WeightsError> {
        let err = |source| WeightsError::Size {
            model: config.source.to_string(),
            source,
        };
        Ok(WeightsSizes {
            model: ModelWeightsSizes::try_from_config(config, w, formats).map_err(err)?,
            attention: AttentionWeightsSizes::try_from_config(config, w, formats).map_err(err)?,
            latent: LatentAttentionWeightsSizes::try_from_config(config, w, formats)
                .map_err(err)?,
            compressed: CompressedAttentionWeightsSizes::try_from_config(config, w, formats)
                .map_err(err)?,
            mixers: MixerWeightsSizes::try_from_config(config, w, formats).map_err(err)?,
            ffn: FfnWeightsSizes::try_from_config(config, w, formats).map_err(err)?,
        })
    }

    /// Every tensor's bytes (saturating: a sum past `u64` fits no GPU), the untracked
    /// FP32 router biases aside (they are buffers of the reference, not parameters; the
    /// slabs hold them: [`Self::device_bytes`]).
    pub fn total_bytes(&self) -> u64 {
        [
            self.model.total_bytes(),
            self.attention.total_bytes(),
            self.latent.total_bytes(),
            self.compressed.total_bytes(),
            self.mixers.total_bytes(),
            self.ffn.total_bytes(),
        ]
        .into_iter()
        .fold(0u64, |sum, b| sum.saturating_add(b as u64))
    }

    /// Device bytes the six arenas take, each one slab (its buffers at their alignment)
    /// rounded up to `page` bytes (the allocator's granularity, e.g.
    /// `gpu_plan::DEVICE_PAGE`; 1 for the slabs' own bytes): what [`AllocatedWeights`]
    /// takes. An arena the model has no tensor of takes nothing.
    pub fn device_bytes(&self, page: u64) -> Result<u64, SizeError> {
        let o = AllocOptions::default();
        let slabs = [
            ModelWeights::slab_bytes(&self.model, o)?,
            AttentionWeights::slab_bytes(&self.attention, o)?,
            LatentAttentionWeights::slab_bytes(&self.latent, o)?,
            CompressedAttentionWeights::slab_bytes(&self.compressed, o)?,
            MixerWeights::slab_bytes(&self.mixers, o)?,
            FfnWeights::slab_bytes(&self.ffn, o)?,
        ];
        let page = page.max(1);
        Ok(slabs.into_iter().fold(0u64, |sum, slab| {
            sum.saturating_add((slab as u64).div_ceil(page).saturating_mul(page))
        }))
    }
}

/// The parameter count of `config`: the six declarations at 16 bits and the reference's own
/// vocabulary, halved (every buffer then two bytes an element). On a rank of a tp layout,
/// its share with the vocabulary padded as vLLM pads it.
pub fn parameters(config: &ModelConfig) -> Result<u64, WeightsError> {
    let w = WeightLayers::of(config, false)?;
    Ok(WeightsSizes::with_layers(config, &w, &WeightFormats::BF16)?.total_bytes() / 2)
}

/// The bytes of `config`'s weights in its checkpoint's formats ([`ModelConfig::weight_formats`]),
/// as an engine allocates them ([`WeightsSizes::new`]); refused where the format has no byte
/// formula here.
pub fn weight_bytes(config: &ModelConfig) -> Result<u64, WeightsError> {
    Ok(file_format_sizes(config)?.total_bytes())
}

/// [`WeightsSizes::new`] at the file's own formats ([`ModelConfig::weight_formats`]), refused
/// where the format has no byte formula here ([`WeightsError::FormatNotPlanned`]) rather
/// than sized as 16 bits.
pub fn file_format_sizes(config: &ModelConfig) -> Result<WeightsSizes, WeightsError> {
    WeightsSizes::new(config, &config.weight_formats)
}
