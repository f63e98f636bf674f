//! The checkpoint's weight format, from its `quantization_config` ([`WeightFormat`]).

use super::error::{ConfigError, MAX_DIM};
use super::fields::Fields;
use crate::weights::WeightFormat;
use serde_json::Value;

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
        "fp8"
            if q.get("modules_to_not_convert")
                .and_then(Value::as_array)
                .is_some_and(|m| !m.is_empty()) =>
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
