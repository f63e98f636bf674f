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
    /// biases included, in 16 bits (the file's `modules_to_not_convert`).
    Mxfp4Experts,
    /// A quantization whose bytes are not planned here (its `quant_method` is another, FP8
    /// without blocks or with `modules_to_not_convert` or `ignored_layers`, DeepSeek-V4's
    /// FP4 experts): the
    /// caller gives the weight bytes.
    Unplanned,
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
            if ["modules_to_not_convert", "ignored_layers"].iter().any(|key| {
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
        "mxfp4" => WeightFormat::Mxfp4Experts,
        _ => WeightFormat::Unplanned,
    })
}
