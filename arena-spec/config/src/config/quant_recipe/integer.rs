//! Integer-group and compressed-tensors recipes: compressed-tensors
//! (`quant_method: "compressed-tensors"`: one config group over `Linear` modules, its
//! `ignore` list), AWQ and GPTQ, as vLLM v0.33.0 reads and allocates them.

use super::patterns::{Match, Pattern};
use super::{excluding, invalid, patterns, unplanned};
use crate::config::error::{ConfigError, MAX_DIM};
use crate::config::{ModelConfig, WeightFormat, WeightFormats};
use serde_json::{Map, Value};

/// A group size as the recipes write it: a positive count, or -1 for one group a row
/// (per-channel scales), taken here as a group wider than any row.
fn group(v: Option<&Value>) -> Option<usize> {
    match v.and_then(Value::as_i64) {
        Some(-1) => Some(usize::MAX),
        Some(g) if g > 0 && g <= MAX_DIM as i64 => Some(g as usize),
        _ => None,
    }
}

/// An AWQ or GPTQ recipe's bits (4 or 8: `bits`, AutoAWQ's `w_bit`) and group size
/// (`group_size`, AutoAWQ's `q_group_size`); without them, why the `method` is refused,
/// naming `key`.
fn bits_and_group(
    q: &Map<String, Value>,
    key: &str,
    method: &str,
) -> Result<(usize, usize), String> {
    let bits = q
        .get("bits")
        .or_else(|| q.get("w_bit"))
        .and_then(Value::as_u64);
    let group = group(q.get("group_size").or_else(|| q.get("q_group_size")));
    match (bits, group) {
        (Some(bits @ (4 | 8)), Some(group)) => Ok((bits as usize, group)),
        _ => Err(format!(
            "{key}: {method} without 4 or 8 bits and a group size: not planned here"
        )),
    }
}

/// compressed-tensors: the weights' scheme of its one config group, which must target
/// `Linear` modules (vLLM's `CompressedTensorsConfig.get_scheme`): integer groups with 16-bit
/// activations (`pack-quantized`, `CompressedTensorsWNA16`), FP8 in blocks or per tensor
/// or a channel (`float-quantized`, `CompressedTensorsW8A8Fp8`), W8A8 INT8
/// (`int-quantized`, `CompressedTensorsW8A8Int8`), NVFP4 (`CompressedTensorsW4A4Fp4`); the
/// `ignore` list's modules in 16 bits (exact names, or `re:` expressions).
pub(super) fn compressed_tensors(
    q: &Map<String, Value>,
    key: &str,
    c: &ModelConfig,
) -> Result<WeightFormats, ConfigError> {
    let refuse = |why: &str| {
        Ok(unplanned(format!(
            "{key}: compressed-tensors {why}: not planned here"
        )))
    };
    let groups: Vec<&Value> = match q.get("config_groups") {
        Some(Value::Object(g)) => g.values().collect(),
        _ => return refuse("without config_groups"),
    };
    let [group_config] = groups[..] else {
        return refuse("with more than one config group");
    };
    let targets = group_config.get("targets").and_then(Value::as_array);
    if !targets.is_some_and(|t| t.iter().all(|t| t.as_str() == Some("Linear"))) {
        return refuse("with targets other than Linear");
    }
    let Some(w) = group_config.get("weights").filter(|w| w.is_object()) else {
        return refuse("without a weights scheme");
    };
    let activations = group_config
        .get("input_activations")
        .is_some_and(|a| !a.is_null());
    let bits = w.get("num_bits").and_then(Value::as_u64).unwrap_or(0);
    let kind = w.get("type").and_then(Value::as_str).unwrap_or("");
    let strategy = w.get("strategy").and_then(Value::as_str).unwrap_or("");
    let format = match (kind, bits, strategy, activations) {
        // W4A16 / W8A16 integer groups (or one group a row).
        ("int", 4 | 8, "group" | "channel", false) => {
            let Some(group) = (match strategy {
                "channel" => Some(usize::MAX),
                _ => group(w.get("group_size")),
            }) else {
                return refuse("with a group_size that is not a positive count");
            };
            WeightFormat::IntGroup {
                bits: bits as usize,
                group,
                zeros: w.get("symmetric") == Some(&Value::Bool(false)),
                // `actorder: "group"` keeps a `weight_g_idx` an input column.
                row_index: w.get("actorder").and_then(Value::as_str) == Some("group"),
            }
        }
        ("float", 8, "block", _) => {
            let block: Vec<usize> = w
                .get("block_structure")
                .and_then(Value::as_array)
                .map(|b| b.iter().filter_map(|x| group(Some(x))).collect())
                .unwrap_or_default();
            match block[..] {
                [rows, cols] if rows <= MAX_DIM && cols <= MAX_DIM => {
                    WeightFormat::Fp8Block { rows, cols }
                }
                _ => return refuse("FP8 blocks without a two-number block_structure"),
            }
        }
        ("float", 8, "tensor", _) => WeightFormat::Fp8Tensor,
        ("float", 8, "channel", _) => WeightFormat::Fp8Channel,
        // W8A8 INT8: integer weights with 8-bit integer activations (vLLM's
        // `_is_static_tensor_w8a8` / `_is_dynamic_token_w8a8`, `compressed_tensors.py`).
        ("int", 8, "channel" | "tensor", true)
            if group_config
                .get("input_activations")
                .and_then(|a| a.get("num_bits"))
                .and_then(Value::as_u64)
                == Some(8) =>
        {
            WeightFormat::Int8 {
                per_channel: strategy == "channel",
            }
        }
        ("float", 4, "tensor_group", _) if group(w.get("group_size")) == Some(16) => {
            WeightFormat::Nvfp4 { group: 16 }
        }
        _ => {
            return refuse(&format!(
                "weights of type {kind:?}, {bits} bits, strategy {strategy:?}{}",
                if activations {
                    ", quantized activations"
                } else {
                    ""
                }
            ))
        }
    };
    let ignored = patterns(q, "ignore", Match::CompressedTensors, key, c)?;
    Ok(excluding(WeightFormats::uniform(format), &ignored, c))
}

/// AWQ (`qweight` packed 8 a word, `qzeros`, 16-bit `scales` a group; vLLM's
/// `AWQMarlinConfig`, `quantization/awq_marlin.py`, and `auto_awq.py`), its
/// `modules_to_not_convert` matched as substrings of a module's name (`auto_awq.py`:
/// 289–298).
pub(super) fn awq(
    q: &Map<String, Value>,
    key: &str,
    c: &ModelConfig,
) -> Result<WeightFormats, ConfigError> {
    let (bits, group) = match bits_and_group(q, key, "AWQ") {
        Ok(bg) => bg,
        Err(why) => return Ok(unplanned(why)),
    };
    let format = WeightFormat::IntGroup {
        bits,
        group,
        zeros: q.get("zero_point") != Some(&Value::Bool(false)),
        row_index: false,
    };
    let skipped = patterns(q, "modules_to_not_convert", Match::Substring, key, c)?;
    Ok(excluding(WeightFormats::uniform(format), &skipped, c))
}

/// GPTQ (`qweight`, `qzeros`, 16-bit `scales` a group and the `g_idx` a column its
/// checkpoints always carry; vLLM's `GPTQMarlinLinearMethod.create_weights`). GPTQModel's
/// `dynamic` rules as vLLM reads them (`quantization/utils/gptq_utils.py`: 85–103,
/// 172–201): a `-:` rule's regular expression, matched at a module's start, leaves the
/// modules it names in 16 bits; a positive rule (`+:` or none) that changes `bits` or
/// `group_size` is not planned here, one that changes neither is the base recipe. A module
/// that a positive rule names before a `-:` rule does is taken as 16-bit here, where vLLM
/// would quantize it: a plan never holds less.
pub(super) fn gptq(
    q: &Map<String, Value>,
    key: &str,
    c: &ModelConfig,
) -> Result<WeightFormats, ConfigError> {
    let (bits, group) = match bits_and_group(q, key, "GPTQ") {
        Ok(bg) => bg,
        Err(why) => return Ok(unplanned(why)),
    };
    let mut skipped = Vec::new();
    match q.get("dynamic") {
        None | Some(Value::Null) => {}
        Some(Value::Object(rules)) => {
            for (rule, overrides) in rules {
                if let Some(re) = rule.strip_prefix("-:") {
                    let pattern = Pattern::new(&format!("re:{re}"), Match::CompressedTensors)
                        .map_err(|e| {
                            invalid(c, &format!("{key}.dynamic.{rule}"), &e.to_string())
                        })?;
                    skipped.push(pattern);
                    continue;
                }
                let changes = |name: &str, base: usize| {
                    overrides
                        .get(name)
                        .and_then(Value::as_i64)
                        .is_some_and(|v| group_or_bits(v) != Some(base))
                };
                if changes("bits", bits) || changes("group_size", group) {
                    return Ok(unplanned(format!(
                        "{key}.dynamic.{rule}: a GPTQ rule giving some modules other bits or \
                         groups is not planned here"
                    )));
                }
            }
        }
        Some(_) => return Err(invalid(c, &format!("{key}.dynamic"), "must be an object")),
    }
    let format = WeightFormat::IntGroup {
        bits,
        group,
        zeros: true,
        row_index: true,
    };
    Ok(excluding(WeightFormats::uniform(format), &skipped, c))
}

/// A rule's `bits` or `group_size` as [`group`] reads a group size (-1: one group a row).
fn group_or_bits(v: i64) -> Option<usize> {
    group(Some(&Value::from(v)))
}
