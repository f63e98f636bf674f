//! The checkpoint's weight format, from its `quantization_config` ([`WeightFormat`]); its
//! bytes a matrix are `crate::weights`' (`weights/format.rs`).

use super::error::{ConfigError, MAX_DIM};
use super::fields::Fields;
use serde_json::Value;

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
    /// A quantization whose bytes are not planned here (its `quant_method` is another, FP8
    /// without blocks or with `modules_to_not_convert` or `ignored_layers`, DeepSeek-V4's
    /// FP4 experts): the
    /// caller gives the weight bytes.
    Unplanned,
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

/// The format of `quantization_config` (at the top level, or in `text_config` where a
/// multimodal file keeps it there); none: the model's 16-bit dtype.
pub(super) fn weight_format(outer: &Fields) -> Result<WeightFormat, ConfigError> {
    let nested = outer
        .obj
        .get("text_config")
        .and_then(|t| t.get("quantization_config"));
    let Some(q) = outer.obj.get("quantization_config").or(nested) else {
        return Ok(WeightFormat::Bf16);
    };
    // DeepSeek-V4's files keep their experts in another format than the rest
    // (`expert_dtype: "fp4"`), which no byte formula here covers.
    if let Some(Value::String(d)) = outer.obj.get("expert_dtype") {
        if !matches!(d.as_str(), "fp8" | "bf16" | "bfloat16") {
            return Ok(WeightFormat::Unplanned);
        }
    }
    let Value::Object(q) = q else {
        return Ok(WeightFormat::Bf16);
    };
    let method = q.get("quant_method").and_then(Value::as_str).unwrap_or("");
    Ok(match method {
        // transformers' FineGrainedFP8 (`quant_method: fp8`, `weight_block_size`): an
        // E4M3 byte an element and an FP32 scale a block; without blocks, one scale a tensor.
        // A list of modules left unquantized other than what the format already leaves
        // (embeddings, the head, routers) would change the bytes: not planned.
        // Files name those modules under either key (transformers' `modules_to_not_convert`,
        // vLLM's and compressed-tensors' `ignored_layers`): both are read.
        "fp8"
            if ["modules_to_not_convert", "ignored_layers"]
                .iter()
                .any(|key| {
                    q.get(*key)
                        .and_then(Value::as_array)
                        .is_some_and(|m| !m.is_empty())
                }) =>
        {
            WeightFormat::Unplanned
        }
        "fp8" => match q.get("weight_block_size") {
            Some(Value::Array(b)) if b.len() == 2 => {
                let dim = |v: &Value| {
                    v.as_u64()
                        .filter(|&d| d > 0 && d <= MAX_DIM as u64)
                        .map(|d| d as usize)
                        .ok_or_else(|| {
                            outer.invalid(
                                "quantization_config.weight_block_size",
                                "must be two positive integers",
                            )
                        })
                };
                WeightFormat::Fp8Block {
                    rows: dim(&b[0])?,
                    cols: dim(&b[1])?,
                }
            }
            _ => WeightFormat::Unplanned,
        },
        // gpt-oss's MXFP4 experts (`quant_method: mxfp4`).
        "mxfp4" => Mxfp4Backend::Triton.format(),
        _ => WeightFormat::Unplanned,
    })
}
