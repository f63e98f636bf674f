//! Turning a parsed `config.json` into a `ModelConfig`: the family's keys, aliases and
//! defaults (`family.rs`), the per-layer layout, and the checks that make the numbers safe
//! to size with. Every width follows the family's reference implementation (transformers'
//! modeling file); where a file's keys disagree in a way the reference would reject, the
//! file is refused naming both keys.

use crate::config::{ConfigError, LayerKind, ModelConfig, MAX_DIM, MAX_EXTENT};
use crate::config_fields::{json_kind, Fields};
use crate::family::{DenseLayers, Family, Mixers, SharedExpert};
use crate::levers::Levers;
use serde_json::Value;
use std::path::Path;

/// A family's keys: the file's value, else the family's documented default.
struct Keys<'a> {
    f: Fields<'a>,
    family: Family,
}

impl<'a> Keys<'a> {
    /// The file's value; an absent key takes the family's default, an explicit `null`
    /// stays absent (Python's `None`, as the reference's `int | None` fields read it).
    fn dim(&self, key: &str, max: usize) -> Result<Option<usize>, ConfigError> {
        match self.f.obj.get(key) {
            Some(Value::Null) => Ok(None),
            Some(_) => self.f.opt_dim(key, max),
            None => Ok(self.family.default_of(key)),
        }
    }

    /// The first spelling the file has, else the first spelling's default.
    fn dim_any(&self, keys: &[&str], max: usize) -> Result<Option<usize>, ConfigError> {
        for key in keys {
            if let Some(v) = self.f.opt_dim(key, max)? {
                return Ok(Some(v));
            }
        }
        Ok(keys.iter().find_map(|key| self.family.default_of(key)))
    }

    /// The Mamba-2 key spellings the family's configuration reads, first wins:
    /// NemotronHConfig takes the `mamba_*` forms over the plain ones; Mamba2Config knows
    /// only the plain ones.
    fn mamba_spellings(&self, plain: &'static str, legacy: &'static str) -> Vec<&'static str> {
        match self.family {
            Family::Mamba2 => vec![plain],
            _ => vec![legacy, plain],
        }
    }

    fn dim_or(&self, key: &str, default: usize) -> Result<usize, ConfigError> {
        Ok(self.dim(key, MAX_DIM)?.unwrap_or(default))
    }

    /// A required value that must be > 0; the first spelling the file has is the one
    /// checked, else the family's default.
    fn positive_any(&self, keys: &[&str], max: usize) -> Result<usize, ConfigError> {
        let present = keys
            .iter()
            .find(|k| self.f.obj.get(**k).is_some_and(|v| !v.is_null()));
        let key = present.unwrap_or(&keys[0]);
        match self.dim_any(keys, max)? {
            None => Err(self.f.missing(keys[keys.len() - 1])),
            Some(0) => Err(self.f.invalid(key, "is 0, but must be at least 1")),
            Some(n) => Ok(n),
        }
    }

    fn positive(&self, key: &str, max: usize) -> Result<usize, ConfigError> {
        self.positive_any(&[key], max)
    }

    /// An array of layer indices (`mlp_only_layers`, `moe_layers`).
    fn indices(&self, key: &str) -> Result<Option<Vec<usize>>, ConfigError> {
        let Some(v) = self.f.obj.get(key).filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        let Value::Array(items) = v else {
            return Err(self.f.invalid(
                key,
                format!("must be an array of layer indices, not {}", json_kind(v)),
            ));
        };
        items
            .iter()
            .map(|i| {
                i.as_u64()
                    .and_then(|i| usize::try_from(i).ok())
                    .ok_or_else(|| self.f.invalid(key, "must be an array of layer indices"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// An array of strings (`layer_types`, `layers_block_type`, `mlp_layer_types`).
    fn strings(&self, key: &str) -> Result<Option<Vec<&'a str>>, ConfigError> {
        let Some(v) = self.f.obj.get(key).filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        let not_strings = || {
            self.f.invalid(
                key,
                format!("must be an array of strings, not {}", json_kind(v)),
            )
        };
        let Value::Array(items) = v else {
            return Err(not_strings());
        };
        items
            .iter()
            .map(|i| match i {
                Value::String(s) if crate::config_json::non_finite(i).is_none() => Ok(s.as_str()),
                _ => Err(self.f.invalid(key, "must be an array of strings")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

pub(crate) fn from_value(value: &Value, path: &Path) -> Result<ModelConfig, ConfigError> {
    let Value::Object(top) = value else {
        return Err(ConfigError::Invalid {
            path: path.into(),
            field: "(top level)".into(),
            reason: format!("must be a JSON object, not {}", json_kind(value)),
        });
    };
    let outer = Fields {
        path,
        obj: top,
        prefix: "",
    };
    let model_type = outer
        .opt_str("model_type")?
        .ok_or_else(|| outer.missing("model_type"))?;
    let (family, nested) =
        Family::from_model_type(model_type).ok_or_else(|| ConfigError::UnsupportedModelType {
            path: path.into(),
            model_type: model_type.to_string(),
        })?;

    let f = if nested {
        match top.get("text_config") {
            Some(Value::Object(obj)) => Fields {
                path,
                obj,
                prefix: "text_config.",
            },
            Some(other) => {
                return Err(outer.invalid(
                    "text_config",
                    format!("must be an object, not {}", json_kind(other)),
                ))
            }
            None => return Err(outer.missing("text_config")),
        }
    } else {
        outer
    };
    let k = Keys { f, family };
    let f = &k.f;

    let hidden_size = k.positive("hidden_size", MAX_DIM)?;
    let vocab_size = k.positive("vocab_size", MAX_EXTENT)?;
    let max_position_embeddings = k
        .dim("max_position_embeddings", MAX_EXTENT)?
        .unwrap_or(4096);
    let layers = layer_layout(&k)?;
    let num_hidden_layers = layers.len();
    let has_attention = layers.contains(&LayerKind::Attention);

    let (num_attention_heads, num_key_value_heads) = if has_attention {
        let heads = k.positive("num_attention_heads", MAX_DIM)?;
        let kv = match k.dim("num_key_value_heads", MAX_DIM)? {
            Some(0) => return Err(f.invalid("num_key_value_heads", "is 0, but must be at least 1")),
            Some(kv) => kv,
            None => heads,
        };
        (heads, kv)
    } else {
        (
            k.dim_or("num_attention_heads", 0)?,
            k.dim_or("num_key_value_heads", 0)?,
        )
    };
    let head_dim_field = attention_head_dim(&k)?;

    let moe = moe_shape(&k, &layers)?;
    let mamba = mamba_shape(&k, hidden_size)?;

    let c = ModelConfig {
        source: path.display().to_string().into(),
        model_type: model_type.to_string().into(),
        family,
        hidden_size,
        intermediate_size: moe.dense_width,
        num_hidden_layers,
        vocab_size,
        max_position_embeddings,
        num_attention_heads,
        num_key_value_heads,
        head_dim_field,
        attn_output_gate: match family.gated_attention_output() {
            Some(gated) => gated,
            None => f.opt_bool("attn_output_gate")?.unwrap_or(false),
        },
        mrope: family.always_mrope() || has_mrope(f),
        layers: layers.into(),
        num_experts: moe.experts,
        num_experts_per_tok: moe.top_k,
        moe_intermediate_size: moe.expert_width,
        shared_expert_intermediate_size: moe.shared_width,
        n_shared_experts: k.dim_or("n_shared_experts", 0)?,
        first_k_dense_replace: k.dim_or("first_k_dense_replace", 0)?,
        moe_dense_layers: moe.dense_ffn.iter().filter(|&&d| d).count(),
        dense_ffn_layers: moe.dense_ffn.into(),
        zero_expert_num: k.dim_or("zero_expert_num", 0)?,
        hash_moe_layers: k.dim_or("hash_moe_layers", 0)?,
        // Low-rank (MLA) attention keys are read for every family, so a synthetic or future
        // file can turn MLA on; the MLA families' files always carry them.
        q_lora_rank: k.dim_or("q_lora_rank", 0)?,
        kv_lora_rank: k.dim_or("kv_lora_rank", 0)?,
        qk_nope_head_dim: k.dim_or("qk_nope_head_dim", 0)?,
        qk_rope_head_dim: k.dim_or("qk_rope_head_dim", 0)?,
        v_head_dim: k.dim_or("v_head_dim", 0)?,
        index_n_heads: k.dim_or("index_n_heads", 0)?,
        index_head_dim: k.dim_or("index_head_dim", 0)?,
        index_topk: k.dim_or("index_topk", 0)?,
        index_compress_ratio: k.dim_or("index_compress_ratio", 0)?,
        linear_num_key_heads: k.dim_or("linear_num_key_heads", 0)?,
        linear_key_head_dim: k.dim_or("linear_key_head_dim", 0)?,
        linear_num_value_heads: k.dim_or("linear_num_value_heads", 0)?,
        linear_value_head_dim: k.dim_or("linear_value_head_dim", 0)?,
        linear_conv_kernel_dim: k.dim_or("linear_conv_kernel_dim", 0)?,
        mamba_num_heads: mamba.heads,
        mamba_head_dim: mamba.head_dim,
        ssm_state_size: mamba.state,
        mamba_n_groups: mamba.groups,
        mamba_conv_kernel: mamba.conv_kernel,
        mamba_chunk_size: mamba.chunk,
        o_groups: k.dim_or("o_groups", 0)?,
        o_lora_rank: k.dim_or("o_lora_rank", 0)?,
        hc_mult: k.dim_or("hc_mult", 0)?,
        hc_lowrank_rank: k.dim_or("hc_lowrank_rank", 0)?,
        adapter_max_rank: k.dim_or("adapter_max_rank", 0)?,
        levers: Levers::default(),
        shard: None,
    };
    if family.has_mla() && has_attention && c.kv_lora_rank == 0 {
        return Err(f.missing("kv_lora_rank"));
    }
    check(&c, f)?;
    Ok(c)
}

/// The attention head size as the family's attention module reads it; `None` where it is
/// `hidden / heads` (or the family has no softmax attention of its own head size).
fn attention_head_dim(k: &Keys) -> Result<Option<usize>, ConfigError> {
    let f = &k.f;
    let head_dim = match k.family {
        // A plain Mamba-2 file's `head_dim` is the Mamba head size.
        Family::Mamba2 => return Ok(None),
        // NemotronHAttention reads `config.head_dim` (class default 128); NVIDIA's older
        // files name the same value `attention_head_dim`, which the reference ignores. Where
        // both say something, they must agree.
        Family::NemotronH => {
            let explicit = f.opt_dim("head_dim", MAX_DIM)?;
            let legacy = f.opt_dim("attention_head_dim", MAX_DIM)?;
            let used = explicit.or(k.family.default_of("head_dim"));
            if let (Some(used), Some(legacy)) = (used, legacy) {
                if used != legacy {
                    return Err(f.invalid(
                        "attention_head_dim",
                        format!(
                            "is {legacy}, but the attention uses head_dim {used}{}",
                            if explicit.is_none() {
                                " (its default)"
                            } else {
                                ""
                            }
                        ),
                    ));
                }
            }
            used
        }
        _ => k.dim("head_dim", MAX_DIM)?,
    };
    match head_dim {
        Some(0) => Err(f.invalid("head_dim", "is 0, but must be at least 1")),
        other => Ok(other),
    }
}

/// The MoE widths one config resolves to, in the family-independent terms of `ModelConfig`.
struct MoeShape {
    experts: usize,
    top_k: usize,
    expert_width: usize,
    /// The shared expert path's width (0 without one).
    shared_width: usize,
    /// Per layer of a MoE model: its FFN is dense.
    dense_ffn: Vec<bool>,
    /// The dense FFN width (0 where no layer has one and the file gives none).
    dense_width: usize,
}

fn moe_shape(k: &Keys, layers: &[LayerKind]) -> Result<MoeShape, ConfigError> {
    let f = &k.f;
    let family = k.family;
    let dense = MoeShape {
        experts: 0,
        top_k: 0,
        expert_width: 0,
        shared_width: 0,
        dense_ffn: vec![false; layers.len()],
        dense_width: k.dim_or("intermediate_size", 0)?,
    };
    let Some(keys) = family.moe() else {
        return Ok(dense);
    };
    let routes = match family.mixers() {
        // Nemotron-H routes exactly in its `moe` layers, whatever keys the file carries.
        Mixers::NemotronHybrid => layers.contains(&LayerKind::Moe),
        // A MoE family's file without an expert count is refused rather than sized dense
        // (the reference would build its class default of experts); 0 experts is dense, as
        // the reference's sparse blocks read it.
        _ => match k.dim_any(keys.experts, MAX_DIM)? {
            None => return Err(f.missing(keys.experts_field)),
            Some(n) => n > 0,
        },
    };
    if !routes {
        return Ok(dense);
    }
    if family == Family::NemotronH {
        if let Some(latent) = f.opt_dim("moe_latent_size", MAX_DIM)?.filter(|&l| l > 0) {
            return Err(f.invalid(
                "moe_latent_size",
                format!(
                    "is {latent}: latent MoE (experts running at width {latent} between \
                     fc1_latent_proj and fc2_latent_proj) needs an [M, moe_latent_size] buffer \
                     the arena does not have"
                ),
            ));
        }
    }
    let experts = k.positive_any(keys.experts, MAX_DIM)?;
    let top_k = k.dim_or("num_experts_per_tok", 0)?;
    let expert_width = match k.dim(keys.expert_width, MAX_DIM)? {
        Some(w) if w > 0 => w,
        _ => return Err(f.missing(keys.expert_width)),
    };
    let shared_width = match keys.shared {
        SharedExpert::None => 0,
        SharedExpert::Width(key) => k.dim_or(key, 0)?,
        SharedExpert::CountTimesExpertWidth => k.dim_or("n_shared_experts", 0)? * expert_width,
        SharedExpert::SameAsExpert => expert_width,
    };
    let n = layers.len();
    let first_k = |k: &Keys| -> Result<Vec<bool>, ConfigError> {
        let dense = k.dim_or("first_k_dense_replace", 0)?.min(n);
        Ok((0..n).map(|i| i < dense).collect())
    };
    // Which layers run a dense FFN, layer by layer: a pipeline stage counts its own.
    let dense_ffn: Vec<bool> = match keys.dense_layers {
        DenseLayers::None => vec![false; n],
        DenseLayers::FirstK => first_k(k)?,
        DenseLayers::FirstKOrTypes => match k.strings("mlp_layer_types")? {
            Some(types) if types.len() != n => {
                return Err(f.invalid(
                    "mlp_layer_types",
                    format!("has {} entries but there are {n} layers", types.len()),
                ))
            }
            Some(types) => types.iter().map(|&t| t == "dense").collect(),
            None => first_k(k)?,
        },
        DenseLayers::SparseStep => {
            let step = k.dim_or("decoder_sparse_step", 1)?;
            if step == 0 {
                return Err(f.invalid("decoder_sparse_step", "is 0, but must be at least 1"));
            }
            let mlp_only: std::collections::BTreeSet<usize> = k
                .indices("mlp_only_layers")?
                .unwrap_or_default()
                .into_iter()
                .collect();
            (0..n)
                .map(|i| mlp_only.contains(&i) || (i + 1) % step != 0)
                .collect()
        }
        DenseLayers::Interleaved => {
            let routed: std::collections::BTreeSet<usize> = match k.indices("moe_layers")? {
                Some(list) => list.into_iter().filter(|&i| i < n).collect(),
                None => {
                    let step = k.dim_or("interleave_moe_layer_step", 1)?;
                    if step == 0 {
                        return Err(
                            f.invalid("interleave_moe_layer_step", "is 0, but must be at least 1")
                        );
                    }
                    (step - 1..n).step_by(step).collect()
                }
            };
            (0..n).map(|i| !routed.contains(&i)).collect()
        }
        DenseLayers::PerLayer => layers.iter().map(|&l| l == LayerKind::Mlp).collect(),
    };
    let dense_layers = dense_ffn.iter().filter(|&&d| d).count();
    // The width the dense layers run at; a MoE model without dense layers keeps the file's
    // `intermediate_size` (the FFN width LoRA and the Q2 scratch are sized from).
    let dense_width = if dense_layers > 0 {
        k.dim_or(family.dense_width_key(), 0)?
    } else {
        k.dim_or("intermediate_size", 0)?
    };
    if dense_layers > 0 && dense_width == 0 {
        return Err(f.missing(family.dense_width_key()));
    }
    Ok(MoeShape {
        experts,
        top_k,
        expert_width,
        shared_width,
        dense_ffn,
        dense_width,
    })
}

/// Mamba-2 mixer sizes, as the family's mixer reads them.
struct MambaShape {
    heads: usize,
    head_dim: usize,
    state: usize,
    groups: usize,
    conv_kernel: usize,
    chunk: usize,
}

fn mamba_shape(k: &Keys, hidden_size: usize) -> Result<MambaShape, ConfigError> {
    let f = &k.f;
    let (heads_key, head_dim_key, state_key) = match k.family.mixers() {
        Mixers::Mamba2 => ("num_heads", "head_dim", "state_size"),
        Mixers::NemotronHybrid | Mixers::AnyKind => {
            ("mamba_num_heads", "mamba_head_dim", "ssm_state_size")
        }
        Mixers::Attention | Mixers::GatedDeltaNetHybrid => {
            return Ok(MambaShape {
                heads: 0,
                head_dim: 0,
                state: 0,
                groups: 0,
                conv_kernel: 0,
                chunk: 0,
            })
        }
    };
    let shape = MambaShape {
        heads: k.dim_or(heads_key, 0)?,
        head_dim: k.dim_or(head_dim_key, 0)?,
        state: k.dim_or(state_key, 0)?,
        // NemotronHConfig reads the `mamba_*` spellings over the plain ones.
        groups: k
            .dim_any(&k.mamba_spellings("n_groups", "mamba_n_groups"), MAX_DIM)?
            .unwrap_or(1),
        conv_kernel: k
            .dim_any(&k.mamba_spellings("conv_kernel", "mamba_d_conv"), MAX_DIM)?
            .unwrap_or(4),
        chunk: k
            .dim_any(
                &k.mamba_spellings("chunk_size", "mamba_chunk_size"),
                MAX_DIM,
            )?
            .unwrap_or(256),
    };
    // Mamba2Mixer sizes its inner width as `expand · hidden_size` and Mamba2Config refuses a
    // file where that is not `num_heads · head_dim`; NemotronHMamba2Mixer uses
    // `mamba_num_heads · mamba_head_dim` and never reads `expand` for a width.
    if k.family.mixers() == Mixers::Mamba2 {
        let expand = k.dim_or("expand", 2)?;
        if expand.checked_mul(hidden_size) != shape.heads.checked_mul(shape.head_dim) {
            return Err(f.invalid(
                "expand",
                format!(
                    "is {expand}: expand · hidden_size = {} but num_heads · head_dim = {} · {} \
                     (the reference refuses a file where they differ)",
                    expand.saturating_mul(hidden_size),
                    shape.heads,
                    shape.head_dim
                ),
            ));
        }
    }
    Ok(shape)
}

/// One `LayerKind` per layer, by the family's layout rule.
fn layer_layout(k: &Keys) -> Result<Vec<LayerKind>, ConfigError> {
    let f = &k.f;
    let family = k.family;
    if family.mixers() == Mixers::NemotronHybrid {
        return nemotron_layers(k);
    }
    let layers = k.positive("num_hidden_layers", MAX_DIM)?;
    if let Some(types) = k.strings("layer_types")? {
        if types.len() != layers {
            return Err(f.invalid(
                "layer_types",
                format!(
                    "has {} entries but num_hidden_layers is {layers}",
                    types.len()
                ),
            ));
        }
        let gdn = matches!(
            family.mixers(),
            Mixers::GatedDeltaNetHybrid | Mixers::AnyKind
        );
        let mamba = matches!(family.mixers(), Mixers::Mamba2 | Mixers::AnyKind);
        return types
            .iter()
            .map(|&t| match t {
                "full_attention"
                | "sliding_attention"
                | "chunked_attention"
                | "attention"
                | "indexed_attention"
                | "deepseek_sparse_attention" => Ok(LayerKind::Attention),
                "linear_attention" if gdn => Ok(LayerKind::LinearAttention),
                "mamba" | "mamba2" if mamba => Ok(LayerKind::Mamba2),
                other => Err(f.invalid(
                    "layer_types",
                    format!(
                        "has layer type {other:?}, which a {} model does not have",
                        family.model_type()
                    ),
                )),
            })
            .collect();
    }
    match family.mixers() {
        Mixers::Mamba2 => Ok(vec![LayerKind::Mamba2; layers]),
        Mixers::GatedDeltaNetHybrid => {
            let interval = match f.opt_dim("full_attention_interval", MAX_DIM)? {
                Some(0) => {
                    return Err(f.invalid("full_attention_interval", "is 0, but must be at least 1"))
                }
                Some(i) => i,
                None => 4,
            };
            Ok((0..layers)
                .map(|i| {
                    if (i + 1) % interval == 0 {
                        LayerKind::Attention
                    } else {
                        LayerKind::LinearAttention
                    }
                })
                .collect())
        }
        Mixers::Attention | Mixers::NemotronHybrid | Mixers::AnyKind => {
            Ok(vec![LayerKind::Attention; layers])
        }
    }
}

/// Nemotron-H's layers, as `NemotronHConfig` reads them: `layers_block_type` (or its alias
/// `layer_types`), else `hybrid_override_pattern`. The list sets the layer count; a
/// `num_hidden_layers` that disagrees is ignored, as the reference ignores it.
fn nemotron_layers(k: &Keys) -> Result<Vec<LayerKind>, ConfigError> {
    let f = &k.f;
    // `layer_types` is NemotronHConfig's alias of `layers_block_type` and wins over it.
    for key in ["layer_types", "layers_block_type"] {
        if let Some(types) = k.strings(key)? {
            if types.is_empty() {
                return Err(f.invalid(key, "is empty"));
            }
            return types
                .iter()
                .map(|&t| match t {
                    "mamba" | "linear_attention" => Ok(LayerKind::Mamba2),
                    "attention" | "full_attention" => Ok(LayerKind::Attention),
                    "mlp" => Ok(LayerKind::Mlp),
                    "moe" => Ok(LayerKind::Moe),
                    other => Err(f.invalid(
                        key,
                        format!(
                            "has unknown layer type {other:?} (expected mamba, attention, mlp \
                             or moe)"
                        ),
                    )),
                })
                .collect();
        }
    }
    let pattern = f
        .opt_str("hybrid_override_pattern")?
        .ok_or_else(|| f.missing("layers_block_type` or `hybrid_override_pattern"))?;
    if pattern.is_empty() {
        return Err(f.invalid("hybrid_override_pattern", "is empty"));
    }
    pattern
        .chars()
        .map(|ch| match ch {
            'M' => Ok(LayerKind::Mamba2),
            '*' => Ok(LayerKind::Attention),
            '-' => Ok(LayerKind::Mlp),
            'E' => Ok(LayerKind::Moe),
            other => Err(f.invalid(
                "hybrid_override_pattern",
                format!("has unknown layer {other:?} (expected M, *, - or E)"),
            )),
        })
        .collect()
}

fn has_mrope(f: &Fields) -> bool {
    let has = |obj: Option<&Value>| {
        obj.and_then(|v| v.get("mrope_section"))
            .is_some_and(|v| !v.is_null())
    };
    has(f.obj.get("rope_parameters")) || has(f.obj.get("rope_scaling"))
}

/// Rules across fields, each naming the field at fault.
fn check(c: &ModelConfig, f: &Fields) -> Result<(), ConfigError> {
    if c.num_hidden_layers > MAX_DIM {
        return Err(f.invalid(
            "num_hidden_layers",
            format!(
                "is {}, larger than the largest supported value {MAX_DIM}",
                c.num_hidden_layers
            ),
        ));
    }
    if c.num_attention_layers() > 0
        && (c.head_dim_field.is_none() || c.family.requires_heads_divide_hidden())
        && !c.is_mla()
        && !c.hidden_size.is_multiple_of(c.num_attention_heads)
    {
        if c.head_dim_field.is_some() {
            return Err(f.invalid(
                "num_attention_heads",
                format!(
                    "is {}, which does not divide hidden_size {} (the {} configuration refuses \
                     this even with a head_dim)",
                    c.num_attention_heads,
                    c.hidden_size,
                    c.family.model_type()
                ),
            ));
        }
        return Err(f.invalid(
            "num_attention_heads",
            format!(
                "is {}, which does not divide hidden_size {} and there is no head_dim",
                c.num_attention_heads, c.hidden_size
            ),
        ));
    }
    if c.is_mla() && (c.qk_nope_head_dim + c.qk_rope_head_dim == 0 || c.v_head_dim == 0) {
        let field = if c.v_head_dim == 0 {
            "v_head_dim"
        } else {
            "qk_nope_head_dim"
        };
        return Err(f.invalid(
            field,
            "must be at least 1 for multi-head latent attention (kv_lora_rank > 0)",
        ));
    }
    if c.num_experts > 0 {
        if c.num_experts_per_tok == 0 {
            return Err(f.invalid(
                "num_experts_per_tok",
                "is 0 (or missing), but a MoE model routes each token to at least 1 expert",
            ));
        }
        if c.num_experts_per_tok > c.num_experts {
            return Err(f.invalid(
                "num_experts_per_tok",
                format!(
                    "is {}, more than the {} experts",
                    c.num_experts_per_tok, c.num_experts
                ),
            ));
        }
    }
    if c.num_ssm_layers() > 0 {
        for key in [
            "linear_num_key_heads",
            "linear_key_head_dim",
            "linear_num_value_heads",
            "linear_value_head_dim",
        ] {
            f.positive(key, MAX_DIM)?;
        }
    }
    if c.num_mamba_layers() > 0 {
        let (heads, head_dim, state) = match c.family {
            Family::Mamba2 => ("num_heads", "head_dim", "state_size"),
            _ => ("mamba_num_heads", "mamba_head_dim", "ssm_state_size"),
        };
        for (key, value) in [
            (heads, c.mamba_num_heads),
            (head_dim, c.mamba_head_dim),
            (state, c.ssm_state_size),
        ] {
            if value == 0 {
                return Err(f.missing(key));
            }
        }
        if c.mamba_n_groups == 0 {
            return Err(f.invalid("n_groups", "is 0, but must be at least 1"));
        }
    }
    let has_dense_layers = c.num_experts == 0 || c.moe_dense_layers > 0;
    let has_mixer_only = c.family == Family::Mamba2;
    if has_dense_layers && !has_mixer_only && c.intermediate_size == 0 {
        return Err(f.missing(c.family.dense_width_key()));
    }
    Ok(())
}
