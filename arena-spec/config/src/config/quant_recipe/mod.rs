//! Reading a checkpoint's quantization recipe into [`WeightFormats`], as the reference engine
//! reads it (vLLM v0.33.0, `4ba787ec9`): `config.json`'s `quantization_config` (or its
//! `text_config`'s), else ModelOpt's `hf_quant_config.json` beside it
//! (`transformers_utils/config.py`: 951–961).
//!
//! The recipes read: transformers' FP8 (`quant_method: "fp8"`, block-scaled with
//! `weight_block_size`, per-tensor without), gpt-oss's MXFP4 experts, and ModelOpt's
//! (`quant_method: "modelopt"` inline, or the side file's `quantization`): `quant_algo` FP8,
//! NVFP4 (and `W4A16_NVFP4`) or MXFP8 for every quantized linear, or `MIXED_PRECISION` with an
//! algorithm a module (`quantized_layers`). A module the recipe leaves in 16 bits
//! (`exclude_modules`, ModelOpt's inline `ignore`, transformers' `modules_to_not_convert`,
//! `ignored_layers`) is matched as vLLM matches it (`ModelOptQuantConfigBase.
//! is_layer_excluded`, `modelopt.py`: 191–226: the name itself, a substring of the module's
//! name, or an `fnmatch` wildcard) against the module names each part of the model has in the
//! checkpoints and in vLLM (its fused `qkv_proj`, `gate_up_proj`) under every prefix the
//! families use. A part is in the recipe's format where no layer of it is excluded and in 16
//! bits where any is: a part excluded in some layers only (GLM-5's first dense layer of
//! three) is priced in 16 bits in all, never below what the engine loads. Any other
//! `quant_method` or algorithm is [`WeightFormat::Unplanned`], with the key and the format
//! named in [`WeightFormats::unplanned`], never priced as 16 bits.

use super::error::{ConfigError, MAX_DIM};
use super::fields::Fields;
use super::Mxfp4Backend;
use super::{Family, FormatSource, ModelConfig, WeightFormat, WeightFormats};
use serde_json::{Map, Value};
use std::borrow::Cow;

mod integer;
mod names;
mod patterns;

use names::{layers_with, module_names, mtp_names, PARTS};
use patterns::{Match, Pattern};

/// The formats of the checkpoint whose `config.json` is `top` (already read into `c`), with
/// its `hf_quant_config.json` where one was found beside it.
pub(super) fn weight_formats(
    top: &Fields,
    side: Option<&Fields>,
    c: &ModelConfig,
) -> Result<WeightFormats, ConfigError> {
    // At the top level (multimodal files keep it there too), else in the text config.
    let (inline, key) = match top.obj.get("quantization_config") {
        Some(q) => (Some(q), "quantization_config"),
        None => (
            top.obj
                .get("text_config")
                .and_then(|t| t.get("quantization_config")),
            "text_config.quantization_config",
        ),
    };
    let mut formats = match (inline, side) {
        (Some(Value::Object(q)), _) => {
            let mut f = from_quantization_config(q, key, c)?;
            f.source = FormatSource::QuantizationConfig;
            f
        }
        (Some(Value::Null) | None, Some(side)) => {
            let mut f = match side.obj.get("quantization") {
                Some(Value::Object(q)) => modelopt(q, "hf_quant_config.json: quantization", c)?,
                _ => return Err(side.missing("quantization")),
            };
            f.source = FormatSource::HfQuantConfig;
            f
        }
        (Some(Value::Null) | None, None) => WeightFormats::BF16,
        (Some(_), _) => return Err(top.invalid(key, "must be an object")),
    };
    if c.family == Family::DeepseekV4 && formats.source == FormatSource::QuantizationConfig {
        formats = deepseek_v4(top, inline, c);
    }
    Ok(formats)
}

/// DeepSeek-V4's recipe as vLLM's `DeepseekV4FP8Config` runs it (`models/deepseek_v4/
/// quant_config.py`): FP8 in 128 × 128 blocks for every linear (60–66), and the routed
/// experts by the file's `expert_dtype` (absent: `"fp4"`, 67–87): MXFP4
/// (`Mxfp4MoEMethod`, padded as the MoE backend pads it), NVFP4 in groups of 16 where the
/// recipe's `moe_quant_algo` is `NVFP4` (`ModelOptNvFp4FusedMoE`, 217–227), or FP8 blocks.
fn deepseek_v4(top: &Fields, recipe: Option<&Value>, c: &ModelConfig) -> WeightFormats {
    let block = WeightFormat::Fp8Block {
        rows: 128,
        cols: 128,
    };
    let expert_dtype = top
        .obj
        .get("expert_dtype")
        .and_then(Value::as_str)
        .unwrap_or("fp4");
    let moe_algo = recipe
        .and_then(|q| q.get("moe_quant_algo"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let experts = match expert_dtype {
        "fp4" if moe_algo.eq_ignore_ascii_case("NVFP4") => WeightFormat::Nvfp4 { group: 16 },
        "fp4" => Mxfp4Backend::Triton.format(),
        "fp8" => block,
        other => {
            return unplanned(format!(
                "{}: expert_dtype is {other:?}, which vLLM's DeepSeek-V4 does not load",
                c.source
            ))
        }
    };
    WeightFormats {
        experts,
        source: FormatSource::QuantizationConfig,
        ..WeightFormats::uniform(block)
    }
}

/// An unplanned recipe, naming its key and format.
fn unplanned(why: String) -> WeightFormats {
    WeightFormats {
        unplanned: Some(Cow::Owned(why)),
        ..WeightFormats::uniform(WeightFormat::Unplanned)
    }
}

fn from_quantization_config(
    q: &Map<String, Value>,
    key: &str,
    c: &ModelConfig,
) -> Result<WeightFormats, ConfigError> {
    let method = q.get("quant_method").and_then(Value::as_str).unwrap_or("");
    match method {
        "fp8" => {
            let format = match q.get("weight_block_size") {
                Some(Value::Array(b)) if b.len() == 2 => {
                    let dim = |v: &Value| {
                        v.as_u64()
                            .filter(|&d| d > 0 && d <= MAX_DIM as u64)
                            .map(|d| d as usize)
                    };
                    match (dim(&b[0]), dim(&b[1])) {
                        (Some(rows), Some(cols)) => WeightFormat::Fp8Block { rows, cols },
                        _ => {
                            return Err(invalid(
                                c,
                                &format!("{key}.weight_block_size"),
                                "must be two positive integers",
                            ))
                        }
                    }
                }
                None | Some(Value::Null) => WeightFormat::Fp8Tensor,
                Some(_) => {
                    return Err(invalid(
                        c,
                        &format!("{key}.weight_block_size"),
                        "must be two positive integers",
                    ))
                }
            };
            // Files name their 16-bit modules under either key: vLLM's `Fp8Config` reads
            // `ignored_layers`, else transformers' `modules_to_not_convert`, and matches a
            // module by its exact name (`fp8.py`: 117–120, 158–172).
            let mut excluded = patterns(q, "ignored_layers", Match::Exact, key, c)?;
            if excluded.is_empty() {
                excluded = patterns(q, "modules_to_not_convert", Match::Exact, key, c)?;
            }
            Ok(excluding(WeightFormats::uniform(format), &excluded, c))
        }
        // gpt-oss's MXFP4 experts; every other matrix in 16 bits.
        "mxfp4" => Ok(WeightFormats {
            experts: Mxfp4Backend::Triton.format(),
            ..WeightFormats::uniform(WeightFormat::Bf16)
        }),
        "modelopt" => modelopt(q, key, c),
        "compressed-tensors" => integer::compressed_tensors(q, key, c),
        "awq" => integer::awq(q, key, c),
        "gptq" => integer::gptq(q, key, c),
        _ if q.contains_key("quant_algo") => modelopt(q, key, c),
        // MLX's `quantization` block (`bits`, `group_size`, no `quant_method`), which its
        // converter also writes as `quantization_config`.
        "" if q.contains_key("bits") => Ok(unplanned(format!(
            "{key} has `bits` and no quant_method (MLX's quantization): its bytes are not \
             planned here (planned: fp8, mxfp4, modelopt, compressed-tensors, awq, gptq)"
        ))),
        other => Ok(unplanned(format!(
            "{key}.quant_method is {other:?}: its bytes are not planned here (planned: fp8, \
             mxfp4, modelopt, compressed-tensors, awq, gptq)"
        ))),
    }
}

/// A ModelOpt recipe: the side file's `quantization`, or an inline `quant_method: modelopt`.
fn modelopt(
    q: &Map<String, Value>,
    key: &str,
    c: &ModelConfig,
) -> Result<WeightFormats, ConfigError> {
    let group = match q.get("group_size") {
        None | Some(Value::Null) => 16,
        Some(v) => v
            .as_u64()
            .filter(|&g| g > 0 && g <= 1024)
            .map(|g| g as usize)
            .ok_or_else(|| {
                invalid(
                    c,
                    &format!("{key}.group_size"),
                    "must be a positive integer",
                )
            })?,
    };
    let algo = q.get("quant_algo").and_then(Value::as_str).unwrap_or("");
    // vLLM's inline spelling (`ignore`) before the side file's (`exclude_modules`),
    // `modelopt.py`: 359.
    let excluded = match q.get("ignore") {
        Some(_) => patterns(q, "ignore", Match::ModelOpt, key, c)?,
        None => patterns(q, "exclude_modules", Match::ModelOpt, key, c)?,
    };
    if algo.eq_ignore_ascii_case("MIXED_PRECISION") {
        let Some(Value::Object(layers)) = q.get("quantized_layers") else {
            return Err(ConfigError::Missing {
                path: c.source.to_string().into(),
                field: format!("{key}.quantized_layers"),
            });
        };
        return mixed(layers, key, group, c);
    }
    match algorithm(algo, group) {
        Some(format) => Ok(excluding(WeightFormats::uniform(format), &excluded, c)),
        None => Ok(unplanned(format!(
            "{key}.quant_algo is {algo:?}: its bytes are not planned here (planned: FP8, \
             FP8_PER_CHANNEL_PER_TOKEN, FP8_PB_WO, NVFP4, W4A16_NVFP4, MXFP8, MIXED_PRECISION \
             of them)"
        ))),
    }
}

/// A ModelOpt algorithm's format.
fn algorithm(algo: &str, group: usize) -> Option<WeightFormat> {
    match algo.to_ascii_uppercase().as_str() {
        "FP8" => Some(WeightFormat::Fp8Tensor),
        "FP8_PER_CHANNEL_PER_TOKEN" => Some(WeightFormat::Fp8Channel),
        // `KFp8Block128`, `modelopt.py`: 2251–2290 (ModelOpt may write it lowercase).
        "FP8_PB_WO" => Some(WeightFormat::Fp8Block {
            rows: 128,
            cols: 128,
        }),
        "NVFP4" | "W4A16_NVFP4" => Some(WeightFormat::Nvfp4 { group }),
        "MXFP8" => Some(WeightFormat::Mxfp8),
        _ => None,
    }
}

/// `MIXED_PRECISION`: each part in the algorithm of its listed modules; a part with a layer
/// none of whose modules is listed is in 16 bits (vLLM leaves an unlisted module
/// unquantized); a part listed under two algorithms in the one of more bytes.
fn mixed(
    layers: &Map<String, Value>,
    key: &str,
    default_group: usize,
    c: &ModelConfig,
) -> Result<WeightFormats, ConfigError> {
    let mut formats = WeightFormats::uniform(WeightFormat::Bf16);
    let mut listed: Vec<(Pattern, WeightFormat)> = Vec::with_capacity(layers.len());
    for (name, spec) in layers {
        let algo = spec.get("quant_algo").and_then(Value::as_str).unwrap_or("");
        let group = spec
            .get("group_size")
            .and_then(Value::as_u64)
            .filter(|&g| g > 0 && g <= 1024)
            .map_or(default_group, |g| g as usize);
        match algorithm(algo, group) {
            Some(f) => listed.push((Pattern::ModelOpt(name.clone()), f)),
            None => {
                return Ok(unplanned(format!(
                    "{key}.quantized_layers.{name}.quant_algo is {algo:?}: its bytes are not \
                     planned here"
                )))
            }
        }
    }
    for part in PARTS {
        let mut format: Option<WeightFormat> = None;
        let mut unlisted = false;
        for i in layers_with(c, part) {
            let names = module_names(c, part, i);
            let found = listed
                .iter()
                .filter(|(pattern, _)| names.iter().any(|n| pattern.names(n)))
                .map(|(_, f)| *f)
                .max_by_key(|f| bytes_rank(*f));
            match found {
                Some(f) => format = Some(format.map_or(f, |g| wider(f, g))),
                None => unlisted = true,
            }
        }
        if let (Some(f), false) = (format, unlisted) {
            formats.set(part, f);
        }
    }
    formats.other = WeightFormat::Bf16;
    formats.mtp_16_bit = c.mtp_layers > 0
        && !mtp_names(c)
            .iter()
            .any(|n| listed.iter().any(|(p, _)| p.names(n)));
    Ok(formats)
}

/// `formats` with every part that has an excluded module in some layer in 16 bits, and the
/// MTP layers in 16 bits where any of their modules is excluded.
fn excluding(mut formats: WeightFormats, excluded: &[Pattern], c: &ModelConfig) -> WeightFormats {
    if excluded.is_empty() {
        return formats;
    }
    let hit = |names: &[String]| names.iter().any(|n| excluded.iter().any(|p| p.names(n)));
    for part in PARTS {
        if layers_with(c, part).any(|i| hit(&module_names(c, part, i))) {
            formats.set(part, WeightFormat::Bf16);
        }
    }
    formats.mtp_16_bit = hit(&mtp_names(c));
    formats
}

/// The module list under `name` in a recipe object, each entry read as `how` reads it.
fn patterns(
    q: &Map<String, Value>,
    name: &str,
    how: Match,
    key: &str,
    c: &ModelConfig,
) -> Result<Vec<Pattern>, ConfigError> {
    let field = || format!("{key}.{name}");
    match q.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                let entry = v
                    .as_str()
                    .ok_or_else(|| invalid(c, &field(), "must be a list of strings"))?;
                Pattern::new(entry, how).map_err(|e| {
                    let why = format!("holds {entry:?}, not a regular expression: {e}");
                    invalid(c, &field(), &why)
                })
            })
            .collect(),
        Some(_) => Err(invalid(c, &field(), "must be a list of strings")),
    }
}

fn invalid(c: &ModelConfig, field: &str, reason: &str) -> ConfigError {
    ConfigError::Invalid {
        path: c.source.to_string().into(),
        field: field.to_string(),
        reason: reason.to_string(),
    }
}

/// Formats ordered by bytes an element: 16 bits, then 8, then 4 (MXFP4's 4.25).
const fn bytes_rank(f: WeightFormat) -> u8 {
    match f {
        WeightFormat::Bf16 | WeightFormat::Unplanned => 3,
        WeightFormat::Fp8Block { .. }
        | WeightFormat::Fp8Tensor
        | WeightFormat::Fp8Channel
        | WeightFormat::Int8 { .. }
        | WeightFormat::Mxfp8 => 2,
        WeightFormat::IntGroup { bits, .. } if bits > 4 => 2,
        WeightFormat::Nvfp4 { .. }
        | WeightFormat::Mxfp4Experts { .. }
        | WeightFormat::IntGroup { .. } => 1,
    }
}

/// Of two formats, the one of more bytes.
fn wider(a: WeightFormat, b: WeightFormat) -> WeightFormat {
    if bytes_rank(a) >= bytes_rank(b) {
        a
    } else {
        b
    }
}
