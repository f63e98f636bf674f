//! Turning a parsed `config.json` into a `ModelConfig`: the family's keys, aliases and
//! defaults (`family.rs`), the per-layer layout, and the checks that make the numbers safe
//! to size with. Every width follows the family's reference implementation (transformers'
//! modeling file); where a file's keys disagree in a way the reference would reject, the
//! file is refused naming both keys.

use super::error::{ConfigError, MAX_CONFIG_BYTES, MAX_DIM, MAX_EXTENT};
use super::family::{Family, Mixers};
use super::fields::{json_kind, Fields};
use super::keys::Keys;
use super::layers::layer_layout;
use super::levers::Levers;
use super::moe::moe_shape;
use super::{LayerKind, ModelConfig};
use serde_json::Value;
use std::path::Path;

fn from_value(value: &Value, path: &Path) -> Result<ModelConfig, ConfigError> {
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
    if c.num_gdn_layers() > 0 {
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

impl ModelConfig {
    /// Reads a `config.json`, with the levers the process environment sets (`METRALE_*`,
    /// read once, here): the path an engine takes, so the arena agrees with a loader that
    /// installs lever-dependent weights (`ssm_rowwise_w_bf16`, the Q2 scratch). An invalid
    /// lever value is an error naming the variable. [`Self::load_with_levers`] takes them
    /// explicitly instead (tests, callers that decide the levers themselves).
    ///
    /// The file must be a regular file of at most [`MAX_CONFIG_BYTES`]; anything else (a
    /// directory, a pipe, a device, a checkpoint shard given by mistake) is refused before
    /// a byte is read past that bound.
    pub fn load(path: impl AsRef<Path>) -> Result<ModelConfig, ConfigError> {
        Self::load_with_levers(path, Levers::from_env()?)
    }

    /// [`Self::load`] with the levers given: the process environment is not read.
    pub fn load_with_levers(
        path: impl AsRef<Path>,
        levers: Levers,
    ) -> Result<ModelConfig, ConfigError> {
        let path = path.as_ref();
        let text = super::json::read_bounded(path)?;
        Self::from_json_str_with_levers(&text, path, levers)
    }

    /// Parses the text of a `config.json`, with the levers of the process environment (as
    /// [`Self::load`]); `path` names it in errors.
    pub fn from_json_str(text: &str, path: impl AsRef<Path>) -> Result<ModelConfig, ConfigError> {
        Self::from_json_str_with_levers(text, path, Levers::from_env()?)
    }

    /// [`Self::from_json_str`] with the levers given.
    pub fn from_json_str_with_levers(
        text: &str,
        path: impl AsRef<Path>,
        levers: Levers,
    ) -> Result<ModelConfig, ConfigError> {
        let path = path.as_ref();
        if text.len() > MAX_CONFIG_BYTES {
            return Err(ConfigError::TooLarge { path: path.into() });
        }
        let value = super::json::parse(text, path)?;
        let mut config = from_value(&value, path)?;
        config.levers = levers;
        Ok(config)
    }
}
