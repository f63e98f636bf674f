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
use super::{
    Family, FormatSource, LayerKind, ModelConfig, WeightFormat, WeightFormats, WeightPart,
};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The formats of the checkpoint whose `config.json` is `top` (already read into `c`), with
/// its `hf_quant_config.json` where one was found beside it.
pub(super) fn weight_formats(
    top: &Fields,
    side: Option<&Fields>,
    c: &ModelConfig,
) -> Result<WeightFormats, ConfigError> {
    let nested = top
        .obj
        .get("text_config")
        .and_then(|t| t.get("quantization_config"));
    let inline = top.obj.get("quantization_config").or(nested);
    let key = match top.obj.get("quantization_config") {
        Some(_) => "quantization_config",
        None => "text_config.quantization_config",
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
    // DeepSeek-V4's files keep their experts in FP4 (`expert_dtype: "fp4"`), a format no byte
    // formula here covers.
    if let Some(Value::String(d)) = top.obj.get("expert_dtype") {
        if !matches!(d.as_str(), "fp8" | "bf16" | "bfloat16") {
            formats.experts = WeightFormat::Unplanned;
            formats.unplanned = Some(Cow::Owned(format!(
                "expert_dtype is {d:?}: DeepSeek-V4's FP4 experts are not priced here"
            )));
        }
    }
    Ok(formats)
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
            let mut excluded = patterns(q, "ignored_layers", key, c)?;
            if excluded.is_empty() {
                excluded = patterns(q, "modules_to_not_convert", key, c)?;
            }
            Ok(excluding(
                WeightFormats::uniform(format),
                &excluded,
                Match::Exact,
                c,
            ))
        }
        // gpt-oss's MXFP4 experts; every other matrix in 16 bits.
        "mxfp4" => Ok(WeightFormats {
            experts: Mxfp4Backend::Triton.format(),
            ..WeightFormats::uniform(WeightFormat::Bf16)
        }),
        "modelopt" => modelopt(q, key, c),
        _ if q.contains_key("quant_algo") => modelopt(q, key, c),
        other => Ok(unplanned(format!(
            "{key}.quant_method is {other:?}: its bytes are not planned here (planned: fp8, \
             mxfp4, modelopt FP8 / NVFP4 / MXFP8)"
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
        Some(_) => patterns(q, "ignore", key, c)?,
        None => patterns(q, "exclude_modules", key, c)?,
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
        Some(format) => Ok(excluding(
            WeightFormats::uniform(format),
            &excluded,
            Match::ModelOpt,
            c,
        )),
        None => Ok(unplanned(format!(
            "{key}.quant_algo is {algo:?}: its bytes are not planned here (planned: FP8, \
             NVFP4, W4A16_NVFP4, MXFP8, MIXED_PRECISION of them)"
        ))),
    }
}

/// A ModelOpt algorithm's format.
fn algorithm(algo: &str, group: usize) -> Option<WeightFormat> {
    match algo.to_ascii_uppercase().as_str() {
        "FP8" => Some(WeightFormat::Fp8Tensor),
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
    let mut listed: Vec<(String, WeightFormat)> = Vec::with_capacity(layers.len());
    for (name, spec) in layers {
        let algo = spec.get("quant_algo").and_then(Value::as_str).unwrap_or("");
        let group = spec
            .get("group_size")
            .and_then(Value::as_u64)
            .filter(|&g| g > 0 && g <= 1024)
            .map_or(default_group, |g| g as usize);
        match algorithm(algo, group) {
            Some(f) => listed.push((name.clone(), f)),
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
                .filter(|(pattern, _)| names.iter().any(|n| Match::ModelOpt.names(pattern, n)))
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
            .any(|n| listed.iter().any(|(p, _)| Match::ModelOpt.names(p, n)));
    Ok(formats)
}

/// `formats` with every part that has an excluded module in some layer in 16 bits, and the
/// MTP layers in 16 bits where any of their modules is excluded.
fn excluding(
    mut formats: WeightFormats,
    excluded: &[String],
    how: Match,
    c: &ModelConfig,
) -> WeightFormats {
    if excluded.is_empty() {
        return formats;
    }
    let hit = |names: &[String]| {
        names
            .iter()
            .any(|n| excluded.iter().any(|p| how.names(p, n)))
    };
    for part in PARTS {
        if layers_with(c, part).any(|i| hit(&module_names(c, part, i))) {
            formats.set(part, WeightFormat::Bf16);
        }
    }
    formats.mtp_16_bit = hit(&mtp_names(c));
    formats
}

/// The list of module names under `name` in a recipe object.
fn patterns(
    q: &Map<String, Value>,
    name: &str,
    key: &str,
    c: &ModelConfig,
) -> Result<Vec<String>, ConfigError> {
    match q.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    invalid(c, &format!("{key}.{name}"), "must be a list of strings")
                })
            })
            .collect(),
        Some(_) => Err(invalid(
            c,
            &format!("{key}.{name}"),
            "must be a list of strings",
        )),
    }
}

fn invalid(c: &ModelConfig, field: &str, reason: &str) -> ConfigError {
    ConfigError::Invalid {
        path: c.source.to_string().into(),
        field: field.to_string(),
        reason: reason.to_string(),
    }
}

/// The parts a recipe decides.
const PARTS: [WeightPart; 6] = [
    WeightPart::Attention,
    WeightPart::AttentionOut,
    WeightPart::Mixers,
    WeightPart::DenseFfn,
    WeightPart::Experts,
    WeightPart::SharedExperts,
];

/// How a recipe's module list names a module, as vLLM reads each recipe.
#[derive(Clone, Copy)]
enum Match {
    /// The module's exact name (vLLM's `Fp8Config`: `is_layer_skipped`, `match_mode`
    /// "exact", `quantization/utils/quant_utils.py`: 619–648), its checkpoint's unfused name
    /// or vLLM's fused one.
    Exact,
    /// ModelOpt's: equal, a substring of the name, or an `fnmatch` wildcard (`*` any run of
    /// characters, `?` one): `ModelOptQuantConfigBase.is_layer_excluded`, `modelopt.py`:
    /// 191–226.
    ModelOpt,
}

impl Match {
    fn names(self, pattern: &str, name: &str) -> bool {
        match self {
            Match::Exact => pattern == name,
            Match::ModelOpt => {
                pattern == name
                    || name.contains(pattern)
                    || wildcard(pattern.as_bytes(), name.as_bytes())
            }
        }
    }
}

/// `fnmatch` without character classes (no recipe uses them): iterative, with one backtrack
/// point, so a hostile pattern costs at most `pattern × name` steps.
fn wildcard(p: &[u8], n: &[u8]) -> bool {
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == b'?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == b'*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&b| b == b'*')
}

impl ModelConfig {
    /// The parts of the model its layers hold (each with a format in
    /// [`ModelConfig::weight_formats`]), in [`WeightFormats::parts`]' order.
    pub fn weight_parts(&self) -> Vec<WeightPart> {
        let mut held: Vec<WeightPart> = PARTS
            .into_iter()
            .filter(|p| layers_with(self, *p).next().is_some())
            .collect();
        if self.per_layer_input_dim > 0 || self.hc_mult > 0 {
            held.push(WeightPart::Other);
        }
        held
    }
}

/// The layers of the model that hold `part`.
fn layers_with(c: &ModelConfig, part: WeightPart) -> impl Iterator<Item = usize> + '_ {
    (0..c.num_hidden_layers).filter(move |&i| layer_parts(c, i).contains(&part))
}

/// The parts layer `i` holds.
fn layer_parts(c: &ModelConfig, i: usize) -> Vec<WeightPart> {
    let kind = c
        .layer_kinds()
        .get(i)
        .copied()
        .unwrap_or(LayerKind::Attention);
    // Nemotron-H and Mamba-2 layers are one block each: a mixer, an MLP or a MoE.
    let one_block = matches!(c.family, Family::NemotronH | Family::Mamba2);
    let mut parts = match kind {
        LayerKind::Attention => vec![WeightPart::Attention, WeightPart::AttentionOut],
        LayerKind::Mlp => return vec![WeightPart::DenseFfn],
        LayerKind::Moe => vec![],
        _ => vec![WeightPart::Mixers],
    };
    if one_block && kind != LayerKind::Moe {
        return parts;
    }
    let dense = c.num_experts == 0 || c.dense_ffn_layers.get(i).copied().unwrap_or(false);
    if dense {
        parts.push(WeightPart::DenseFfn);
    } else {
        parts.push(WeightPart::Experts);
        if c.shared_expert_intermediate_size > 0 || c.n_shared_experts > 0 {
            parts.push(WeightPart::SharedExperts);
        }
    }
    parts
}

/// The prefixes a layer's modules have in the families' checkpoints and in vLLM.
const LAYER_PREFIXES: [&str; 6] = [
    "model.layers",
    "model.language_model.layers",
    "language_model.model.layers",
    "model.language_model.model.layers",
    "backbone.layers",
    "layers",
];

/// The names of `part`'s modules in layer `i`: the checkpoint's (transformers' modules, the
/// vendors' for DeepSeek-V4) and vLLM's fused ones, under every prefix.
fn module_names(c: &ModelConfig, part: WeightPart, i: usize) -> Vec<String> {
    let gemma4 = c.family == Family::Gemma4;
    let suffixes: &[&str] = match part {
        WeightPart::Attention => &[
            "self_attn.q_proj",
            "self_attn.k_proj",
            "self_attn.v_proj",
            "self_attn.qkv_proj",
            "self_attn.q_a_proj",
            "self_attn.q_b_proj",
            "self_attn.kv_a_proj_with_mqa",
            "self_attn.fused_qkv_a_proj",
            "self_attn.kv_b_proj",
            "self_attn.indexer.wq_b",
            "self_attn.indexer.wk",
            "self_attn.index_q_proj",
            "self_attn.index_k_proj",
            "attn.wq_a",
            "attn.wq_b",
            "attn.wkv",
            "mixer.q_proj",
            "mixer.k_proj",
            "mixer.v_proj",
            "mixer.qkv_proj",
        ],
        WeightPart::AttentionOut => &["self_attn.o_proj", "attn.wo_a", "attn.wo_b", "mixer.o_proj"],
        WeightPart::Mixers => &[
            "linear_attn.in_proj_qkvz",
            "linear_attn.in_proj_qkv",
            "linear_attn.in_proj_z",
            "linear_attn.in_proj_ba",
            "linear_attn.out_proj",
            "mixer.in_proj",
            "mixer.out_proj",
            "conv.in_proj",
            "conv.out_proj",
            "self_attn.q_proj",
            "self_attn.qkv_proj",
            "self_attn.o_proj",
        ],
        WeightPart::DenseFfn => &[
            "mlp.gate_up_proj",
            "mlp.gate_proj",
            "mlp.up_proj",
            "mlp.down_proj",
            "mlp.fc1",
            "mlp.fc2",
            "mixer.up_proj",
            "mixer.down_proj",
            "feed_forward.w1",
            "feed_forward.w2",
            "ffn.w1",
            "ffn.w2",
        ],
        // Gemma 4's experts sit beside its MLP, not under it (`gemma4.py`: 646–653).
        WeightPart::Experts if gemma4 => &["experts", "experts.gate_up_proj", "experts.down_proj"],
        WeightPart::Experts => &[
            "mlp.experts",
            "mlp.experts.0.gate_proj",
            "mlp.experts.0.up_proj",
            "mlp.experts.0.down_proj",
            "mlp.experts.0.w1",
            "experts",
            "experts.gate_up_proj",
            "experts.down_proj",
            "block_sparse_moe.experts",
            "block_sparse_moe.experts.0.w1",
            "mixer.experts",
            "mixer.experts.0.up_proj",
            "mixer.fc1_latent_proj",
            "mixer.fc2_latent_proj",
            "ffn.experts",
            "ffn.experts.0.w1",
            "feed_forward.experts",
        ],
        WeightPart::SharedExperts if gemma4 => &["mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"],
        WeightPart::SharedExperts => &[
            "mlp.shared_experts.gate_up_proj",
            "mlp.shared_experts.gate_proj",
            "mlp.shared_experts.down_proj",
            "mlp.shared_expert.gate_up_proj",
            "mlp.shared_expert.gate_proj",
            "mlp.shared_expert.down_proj",
            "block_sparse_moe.shared_experts.gate_proj",
            "block_sparse_moe.shared_experts.down_proj",
            "mixer.shared_experts.up_proj",
            "mixer.shared_experts.down_proj",
            "ffn.shared_experts.w1",
            "ffn.shared_experts.w2",
            "feed_forward.shared_expert.gate_proj",
        ],
        WeightPart::Other => &[],
    };
    let mut names = Vec::with_capacity(suffixes.len() * LAYER_PREFIXES.len());
    for prefix in LAYER_PREFIXES {
        for s in suffixes {
            names.push(format!("{prefix}.{i}.{s}"));
        }
    }
    names
}

/// The names of the multi-token-prediction layers' modules: the DeepSeek-style layers after
/// the last (`model.layers.{L}`), and the `mtp.` modules of Qwen3.5's, MiniMax's and
/// DeepSeek-V4's files. Empty without MTP layers.
fn mtp_names(c: &ModelConfig) -> Vec<String> {
    if c.mtp_layers == 0 {
        return Vec::new();
    }
    let l = c.num_hidden_layers;
    let mut names = vec![
        "mtp.fc".to_string(),
        "mtp.layers.0.self_attn.q_proj".to_string(),
        "mtp.layers.0.mlp.experts".to_string(),
        "mtp.0.attn.wq_a".to_string(),
        "mtp.0.ffn.experts".to_string(),
    ];
    for prefix in LAYER_PREFIXES {
        for s in [
            "self_attn.q_a_proj",
            "self_attn.q_proj",
            "mlp.experts",
            "eh_proj",
        ] {
            names.push(format!("{prefix}.{l}.{s}"));
        }
    }
    names
}

/// Formats ordered by bytes an element: 16 bits, then 8, then 4 (MXFP4's 4.25).
const fn bytes_rank(f: WeightFormat) -> u8 {
    match f {
        WeightFormat::Bf16 | WeightFormat::Unplanned => 3,
        WeightFormat::Fp8Block { .. } | WeightFormat::Fp8Tensor | WeightFormat::Mxfp8 => 2,
        WeightFormat::Nvfp4 { .. } | WeightFormat::Mxfp4Experts { .. } => 1,
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

#[cfg(test)]
mod tests {
    use super::{wildcard, Match};

    #[test]
    fn names_match_as_vllm_matches_them() {
        let w = |p: &str, n: &str| wildcard(p.as_bytes(), n.as_bytes());
        assert!(w(
            "model.layers.*.self_attn*",
            "model.layers.12.self_attn.q_proj"
        ));
        assert!(w("model.layers.0*", "model.layers.0.mlp.gate_up_proj"));
        assert!(!w("model.layers.0*", "model.layers.10.mlp.gate_up_proj"));
        assert!(w("*.attn.*", "layers.3.attn.wq_a"));
        assert!(!w("*.attn.*", "model.layers.3.self_attn.q_proj"));
        assert!(w("mtp.layers.?.*", "mtp.layers.0.mlp"));
        // A hostile pattern ends in pattern × name steps.
        let stars = "*a".repeat(200);
        assert!(!w(&stars, &"b".repeat(2000)));
        // Exact for FP8's lists; ModelOpt's also by substring.
        assert!(!Match::Exact.names("gate", "model.layers.0.mlp.gate_proj"));
        assert!(Match::ModelOpt.names("model.layers.1.mlp.gate", "model.layers.1.mlp.gate_proj"));
        assert!(!Match::ModelOpt.names("model.layers.1.mlp.gate", "model.layers.10.mlp.gate_proj"));
    }
}
