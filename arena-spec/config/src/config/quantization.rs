//! The checkpoint's weight formats ([`WeightFormats`]: a [`WeightFormat`] for each part of
//! the model), read from its quantization recipe by `quant_recipe.rs`; their bytes a matrix
//! are `crate::weights`' (`weights/format.rs`).

use std::borrow::Cow;

/// The checkpoint's weight format, from its `quantization_config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum WeightFormat {
    /// No quantization: every tensor in the model's 16-bit dtype.
    Bf16,
    /// Block-scaled FP8 (`quant_method: "fp8"` with `weight_block_size: [rows, cols]`,
    /// transformers' `FineGrainedFP8Config`, DeepSeek-V3's format): every linear and expert
    /// matrix one E4M3 byte an element plus one FP32 `weight_scale_inv` a `rows × cols`
    /// block (`ceil(out / rows) · ceil(in / cols)` a matrix); embeddings, the output head,
    /// routers, norms and biases in 16 bits (`FP8Linear` replaces `nn.Linear` modules only,
    /// and never `lm_head`).
    Fp8Block { rows: usize, cols: usize },
    /// MXFP4 experts (`quant_method: "mxfp4"`, gpt-oss): the routed experts' matrices as
    /// OCP microscaling FP4 — 4 bits an element and one E8M0 scale byte a block of 32
    /// (`*_blocks`, `*_scales`, transformers' `Mxfp4GptOssExperts`); everything else, expert
    /// biases included, in 16 bits (the file's `modules_to_not_convert`). The engine pads a
    /// rank's expert width and the hidden size its experts read to multiples that depend on
    /// its MoE backend ([`Mxfp4Backend`]); a file reads as vLLM's default on an H100/H200,
    /// [`Mxfp4Backend::Triton`].
    Mxfp4Experts {
        width_multiple: usize,
        hidden_multiple: usize,
    },
    /// FP8 with per-tensor scales: every matrix one E4M3 byte an element, and FP32 scales a
    /// shard of it (a weight scale, an input scale where the activations are static): ModelOpt
    /// FP8 (`quant_algo: "FP8"`, vLLM's `KFp8StaticTensor`, `modelopt.py`: 2136–2210, and
    /// `ModelOptFp8MoEMethod.create_weights`), and transformers' FP8 without
    /// `weight_block_size`.
    Fp8Tensor,
    /// FP8 with one FP32 scale an output row, activations scaled a token at run time:
    /// compressed-tensors' `strategy: "channel"` (the `FP8-dynamic` checkpoints; vLLM's
    /// `CompressedTensorsW8A8Fp8`, `compressed_tensors_w8a8_fp8.py`: 114–131, its
    /// `ChannelQuantScaleParameter` `[out, 1]`) and ModelOpt's `FP8_PER_CHANNEL_PER_TOKEN`
    /// (`KFp8StaticChannel`, `modelopt.py`: 2211–2240).
    Fp8Channel,
    /// INT8 weights with INT8 activations (W8A8): one byte an element and FP32 weight
    /// scales, one an output row (`per_channel`) or one a shard, and a static input scale
    /// where the activations are static (compressed-tensors' `CompressedTensorsW8A8Int8`,
    /// `compressed_tensors_w8a8_int8.py`: 59–99).
    Int8 { per_channel: bool },
    /// NVFP4 (`quant_algo: "NVFP4"`, `"W4A16_NVFP4"`): two FP4 elements a byte, one FP8 E4M3
    /// scale a `group` elements along the input (16), and FP32 global and input scales a
    /// shard (vLLM's `KNvfp4Static` / `KNvfp4Dynamic`, `modelopt.py`: 2018–2134;
    /// `ModelOptNvFp4FusedMoE.create_weights`, 912–1026).
    Nvfp4 { group: usize },
    /// MXFP8 (`quant_algo: "MXFP8"`): one E4M3 byte an element and one E8M0 scale byte a
    /// block of 32 along the input (vLLM's `KMxfp8Static`, `modelopt.py`: 2309–2380).
    Mxfp8,
    /// Integer weights in groups along the input, activations in 16 bits (W4A16 / W8A16):
    /// `bits` a element packed in `int32` words, a 16-bit scale a `group` elements, a packed
    /// zero point a group where the weights are asymmetric (`zeros`), and GPTQ's `int32`
    /// group index an input column (`row_index`). compressed-tensors' `pack-quantized`
    /// (vLLM's `CompressedTensorsWNA16.create_weights`,
    /// `compressed_tensors/schemes/compressed_tensors_wNa16.py`: 177–240), AWQ (`qweight`,
    /// `qzeros`, `scales`) and GPTQ (and `g_idx`); vLLM's Marlin kernels repack them on
    /// Hopper into as many bytes.
    IntGroup {
        bits: usize,
        group: usize,
        zeros: bool,
        row_index: bool,
    },
    /// A quantization whose bytes are not planned here: the caller gives the weight bytes.
    /// Why (the key and the format) is [`WeightFormats::unplanned`].
    Unplanned,
}

impl WeightFormat {
    /// Whether a matrix in this format is its 16-bit self.
    pub const fn is_16_bit(self) -> bool {
        matches!(self, WeightFormat::Bf16)
    }
}

/// The parts of a model a quantization recipe treats apart: each holds its own
/// [`WeightFormat`] in [`WeightFormats`]. Embeddings, norms, routers and biases are 16-bit in
/// every recipe and belong to no part; so is the output head (a recipe that quantizes it,
/// as Qwen3.6's NVFP4 files do, is priced at 16 bits there: the head's declaration is
/// `bf16`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WeightPart {
    /// Softmax, MLA and compressed attention's input projections (indexers included).
    Attention,
    /// Attention's output projection (`o_proj`; DeepSeek-V4's `wo_a`, `wo_b`), which some
    /// recipes quantize where they keep the rest of attention in 16 bits (DeepSeek-V3.1's
    /// NVFP4 files).
    AttentionOut,
    /// GDN, Mamba-2, short-conv, lightning and KDA mixers' projections.
    Mixers,
    /// Dense FFN layers (an MoE model's dense layers included).
    DenseFfn,
    /// Routed experts (with a latent MoE's projections into and out of the latent width).
    Experts,
    /// Shared experts (and Gemma 4's MLP beside its experts, which their buffers hold).
    SharedExperts,
    /// The linears outside the layers' attention and FFN: Gemma 4's per-layer-input
    /// projections, DeepSeek-V4's hyper-connection mixes.
    Other,
}

/// Where a checkpoint's weight formats were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatSource {
    /// No recipe: the model's 16-bit dtype.
    None,
    /// `config.json`'s `quantization_config` (or its `text_config`'s).
    QuantizationConfig,
    /// `hf_quant_config.json` beside `config.json` (ModelOpt before 0.31), read where
    /// `config.json` has no `quantization_config`, as vLLM reads it
    /// (`transformers_utils/config.py`: 951–961).
    HfQuantConfig,
    /// Given by the caller ([`WeightFormats::uniform`]).
    Given,
}

/// The checkpoint's weight format for each part of the model, and where it was read. A
/// recipe that quantizes the model but leaves some parts in 16 bits (ModelOpt's
/// `exclude_modules`, transformers' `modules_to_not_convert`, `ignored_layers`) gives those
/// parts [`WeightFormat::Bf16`]; a mixed-precision recipe gives each part its algorithm.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WeightFormats {
    pub attention: WeightFormat,
    pub attention_out: WeightFormat,
    pub mixers: WeightFormat,
    pub dense_ffn: WeightFormat,
    pub experts: WeightFormat,
    pub shared_experts: WeightFormat,
    pub other: WeightFormat,
    /// The multi-token-prediction layers are kept in 16 bits (the recipe excludes them);
    /// otherwise they are in the formats of the layers they copy.
    pub mtp_16_bit: bool,
    pub source: FormatSource,
    /// Why the recipe is not planned, naming its key and format, where some part is
    /// [`WeightFormat::Unplanned`].
    pub unplanned: Option<Cow<'static, str>>,
}

impl WeightFormats {
    /// Every part in `format`, given by the caller: how a model is planned at a format of
    /// the planner's choosing (a quantized copy of a 16-bit checkpoint).
    pub const fn uniform(format: WeightFormat) -> Self {
        WeightFormats {
            attention: format,
            attention_out: format,
            mixers: format,
            dense_ffn: format,
            experts: format,
            shared_experts: format,
            other: format,
            mtp_16_bit: false,
            source: FormatSource::Given,
            unplanned: None,
        }
    }

    /// The 16-bit checkpoint: no recipe.
    pub const BF16: WeightFormats = WeightFormats {
        attention: WeightFormat::Bf16,
        attention_out: WeightFormat::Bf16,
        mixers: WeightFormat::Bf16,
        dense_ffn: WeightFormat::Bf16,
        experts: WeightFormat::Bf16,
        shared_experts: WeightFormat::Bf16,
        other: WeightFormat::Bf16,
        mtp_16_bit: false,
        source: FormatSource::None,
        unplanned: None,
    };

    /// Each part and its format.
    pub const fn parts(&self) -> [(WeightPart, WeightFormat); 7] {
        [
            (WeightPart::Attention, self.attention),
            (WeightPart::AttentionOut, self.attention_out),
            (WeightPart::Mixers, self.mixers),
            (WeightPart::DenseFfn, self.dense_ffn),
            (WeightPart::Experts, self.experts),
            (WeightPart::SharedExperts, self.shared_experts),
            (WeightPart::Other, self.other),
        ]
    }

    /// Sets one part's format (the recipe readers).
    pub(crate) fn set(&mut self, part: WeightPart, format: WeightFormat) {
        match part {
            WeightPart::Attention => self.attention = format,
            WeightPart::AttentionOut => self.attention_out = format,
            WeightPart::Mixers => self.mixers = format,
            WeightPart::DenseFfn => self.dense_ffn = format,
            WeightPart::Experts => self.experts = format,
            WeightPart::SharedExperts => self.shared_experts = format,
            WeightPart::Other => self.other = format,
        }
    }

    /// Every part 16-bit (no recipe, or one that excludes everything).
    pub const fn is_16_bit(&self) -> bool {
        let parts = self.parts();
        let mut i = 0;
        while i < parts.len() {
            if !parts[i].1.is_16_bit() {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Whether a part has no byte formula here.
    pub const fn is_unplanned(&self) -> bool {
        let parts = self.parts();
        let mut i = 0;
        while i < parts.len() {
            if matches!(parts[i].1, WeightFormat::Unplanned) {
                return true;
            }
            i += 1;
        }
        false
    }

    /// The formats of the multi-token-prediction layers: these, or 16 bits where the
    /// recipe excludes them.
    pub fn for_mtp(&self) -> WeightFormats {
        match self.mtp_16_bit {
            true => WeightFormats {
                source: self.source,
                ..WeightFormats::uniform(WeightFormat::Bf16)
            },
            false => self.clone(),
        }
    }

    /// These formats as the MoE backend `backend` loads them (MXFP4 experts padded its way).
    pub fn with_mxfp4_backend(&self, backend: Mxfp4Backend) -> WeightFormats {
        let mut f = self.clone();
        f.experts = backend.applied_to(f.experts);
        f
    }
}

impl From<WeightFormat> for WeightFormats {
    fn from(format: WeightFormat) -> Self {
        WeightFormats::uniform(format)
    }
}

impl From<&WeightFormats> for WeightFormats {
    fn from(formats: &WeightFormats) -> Self {
        formats.clone()
    }
}

/// The MoE backend an engine runs MXFP4 experts on, which decides how it pads them: vLLM
/// v0.33.0 (`4ba787ec9`) pads a rank's expert width and the hidden size before
/// `create_weights` (`GptOssMxfp4MoEMethod.maybe_roundup_sizes`, `quantization/mxfp4.py`:
/// 183–198, calling `mxfp4_round_up_hidden_size_and_intermediate_size`,
/// `fused_moe/oracle/mxfp4.py`: 837–917), by backend. Which one it picks
/// (`oracle/mxfp4.py`: 402–435): Triton on SM90 (H100, H200) with its bundled
/// `triton_kernels`; Marlin on SM80 (A100) and where Triton is not available; FlashInfer's
/// TRT-LLM kernels on SM100 (B200).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mxfp4Backend {
    /// `TRITON` (`OAITritonMxfp4Experts`): the width to a multiple of 64, the hidden size
    /// kept (916). vLLM's default on H100 and H200.
    #[default]
    Triton,
    /// `MARLIN` / `BATCHED_MARLIN`: the width to 128, the hidden size to 256 (865–870).
    Marlin,
    /// FlashInfer's TRT-LLM backends (SM100): the width to 128, the hidden size to 256 (871–872).
    FlashinferTrtllm,
    /// FlashInfer's and vLLM's CUTLASS backends, DeepGEMM: both to 128 (857–878).
    Cutlass,
}

impl Mxfp4Backend {
    /// The MXFP4 format as this backend pads it.
    pub const fn format(self) -> WeightFormat {
        let (width_multiple, hidden_multiple) = match self {
            Mxfp4Backend::Triton => (64, 1),
            Mxfp4Backend::Marlin | Mxfp4Backend::FlashinferTrtllm => (128, 256),
            Mxfp4Backend::Cutlass => (128, 128),
        };
        WeightFormat::Mxfp4Experts {
            width_multiple,
            hidden_multiple,
        }
    }

    /// `format` as this backend loads it: MXFP4 experts at its padding, any other format as
    /// it is.
    pub const fn applied_to(self, format: WeightFormat) -> WeightFormat {
        match format {
            WeightFormat::Mxfp4Experts { .. } => self.format(),
            other => other,
        }
    }
}
