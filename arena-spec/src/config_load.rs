//! Turning a parsed `config.json` into a `ModelConfig`: per-family keys, aliases, the
//! per-layer layout, and the checks that make the numbers safe to size with.

use crate::config::{
    json_kind, ConfigError, Family, Fields, LayerKind, ModelConfig, MAX_DIM, MAX_EXTENT,
};
use crate::levers::Levers;
use serde_json::Value;
use std::path::Path;

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
    let family =
        Family::from_model_type(model_type).ok_or_else(|| ConfigError::UnsupportedModelType {
            path: path.into(),
            model_type: model_type.to_string(),
        })?;

    let f = if family.nests_text_config() {
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

    let hidden_size = f.positive("hidden_size", MAX_DIM)?;
    let num_hidden_layers = f.positive("num_hidden_layers", MAX_DIM)?;
    let vocab_size = f.positive("vocab_size", MAX_EXTENT)?;
    let max_position_embeddings = f
        .opt_dim("max_position_embeddings", MAX_EXTENT)?
        .unwrap_or(4096);
    let layers = layer_layout(&f, family, num_hidden_layers)?;
    let has_attention = layers.contains(&LayerKind::Attention);

    let (num_attention_heads, num_key_value_heads) = if has_attention {
        let heads = f.positive("num_attention_heads", MAX_DIM)?;
        let kv = match f.opt_dim("num_key_value_heads", MAX_DIM)? {
            Some(0) => return Err(f.invalid("num_key_value_heads", "is 0, but must be at least 1")),
            Some(kv) => kv,
            None => heads,
        };
        (heads, kv)
    } else {
        (
            f.dim_or("num_attention_heads", 0)?,
            f.dim_or("num_key_value_heads", 0)?,
        )
    };
    let head_dim_field = match f.opt_dim_any(&["head_dim", "attention_head_dim"], MAX_DIM)? {
        Some(0) => return Err(f.invalid("head_dim", "is 0, but must be at least 1")),
        other => other,
    };

    let mut c = ModelConfig {
        source: path.display().to_string(),
        model_type: model_type.to_string(),
        family,
        hidden_size,
        intermediate_size: f.dim_or("intermediate_size", 0)?,
        num_hidden_layers,
        vocab_size,
        max_position_embeddings,
        num_attention_heads,
        num_key_value_heads,
        head_dim_field,
        attn_output_gate: f
            .opt_bool("attn_output_gate")?
            .unwrap_or(family == Family::Qwen3Next),
        mrope: has_mrope(&f),
        layers,
        num_experts: f
            .opt_dim_any(&["num_experts", "n_routed_experts"], MAX_DIM)?
            .unwrap_or(0),
        num_experts_per_tok: f.dim_or("num_experts_per_tok", 0)?,
        moe_intermediate_size: f.dim_or("moe_intermediate_size", 0)?,
        shared_expert_intermediate_size: f.dim_or("shared_expert_intermediate_size", 0)?,
        n_shared_experts: f.dim_or("n_shared_experts", 0)?,
        first_k_dense_replace: f.dim_or("first_k_dense_replace", 0)?,
        zero_expert_num: f.dim_or("zero_expert_num", 0)?,
        hash_moe_layers: f.dim_or("hash_moe_layers", 0)?,
        q_lora_rank: f.dim_or("q_lora_rank", 0)?,
        kv_lora_rank: f.dim_or("kv_lora_rank", 0)?,
        qk_nope_head_dim: f.dim_or("qk_nope_head_dim", 0)?,
        qk_rope_head_dim: f.dim_or("qk_rope_head_dim", 0)?,
        v_head_dim: f.dim_or("v_head_dim", 0)?,
        index_n_heads: f.dim_or("index_n_heads", 0)?,
        index_head_dim: f.dim_or("index_head_dim", 0)?,
        index_topk: f.dim_or("index_topk", 0)?,
        index_compress_ratio: f.dim_or("index_compress_ratio", 0)?,
        linear_num_key_heads: f.dim_or("linear_num_key_heads", 0)?,
        linear_key_head_dim: f.dim_or("linear_key_head_dim", 0)?,
        linear_num_value_heads: f.dim_or("linear_num_value_heads", 0)?,
        linear_value_head_dim: f.dim_or("linear_value_head_dim", 0)?,
        linear_conv_kernel_dim: f.dim_or("linear_conv_kernel_dim", 0)?,
        mamba_num_heads: f
            .opt_dim_any(&["mamba_num_heads", "num_heads"], MAX_DIM)?
            .unwrap_or(0),
        mamba_head_dim: f
            .opt_dim_any(&["mamba_head_dim", "head_dim"], MAX_DIM)?
            .unwrap_or(0),
        ssm_state_size: f
            .opt_dim_any(&["ssm_state_size", "state_size"], MAX_DIM)?
            .unwrap_or(0),
        mamba_n_groups: f
            .opt_dim_any(&["n_groups", "mamba_n_groups"], MAX_DIM)?
            .unwrap_or(1),
        mamba_expand: f
            .opt_dim_any(&["expand", "mamba_expand"], MAX_DIM)?
            .unwrap_or(2),
        mamba_conv_kernel: f
            .opt_dim_any(&["conv_kernel", "mamba_d_conv"], MAX_DIM)?
            .unwrap_or(4),
        mamba_chunk_size: f
            .opt_dim_any(&["chunk_size", "mamba_chunk_size"], MAX_DIM)?
            .unwrap_or(256),
        o_groups: f.dim_or("o_groups", 0)?,
        o_lora_rank: f.dim_or("o_lora_rank", 0)?,
        hc_mult: f.dim_or("hc_mult", 0)?,
        hc_lowrank_rank: f.dim_or("hc_lowrank_rank", 0)?,
        adapter_max_rank: f.dim_or("adapter_max_rank", 0)?,
        levers: Levers::default(),
    };
    if family == Family::Mamba2 {
        // A plain Mamba-2 file's `head_dim` is the Mamba head size, not attention's.
        c.head_dim_field = None;
    } else if !matches!(family, Family::NemotronH) {
        c.mamba_head_dim = f.dim_or("mamba_head_dim", 0)?;
    }
    check(&c, &f)?;
    Ok(c)
}

/// One `LayerKind` per layer, from `layer_types`, `hybrid_override_pattern`,
/// `full_attention_interval` or the family's default.
fn layer_layout(f: &Fields, family: Family, layers: usize) -> Result<Vec<LayerKind>, ConfigError> {
    if let Some(v) = f.obj.get("layer_types").filter(|v| !v.is_null()) {
        let Value::Array(items) = v else {
            return Err(f.invalid(
                "layer_types",
                format!("must be an array of strings, not {}", json_kind(v)),
            ));
        };
        if items.len() != layers {
            return Err(f.invalid(
                "layer_types",
                format!(
                    "has {} entries but num_hidden_layers is {layers}",
                    items.len()
                ),
            ));
        }
        return items
            .iter()
            .map(|item| match item.as_str() {
                Some("full_attention" | "sliding_attention" | "attention") => {
                    Ok(LayerKind::Attention)
                }
                Some("linear_attention") => Ok(LayerKind::LinearAttention),
                Some("mamba" | "mamba2") => Ok(LayerKind::Mamba2),
                Some(other) => {
                    Err(f.invalid("layer_types", format!("has unknown layer type {other:?}")))
                }
                None => Err(f.invalid("layer_types", "must be an array of strings")),
            })
            .collect();
    }
    if family == Family::NemotronH {
        let pattern = f
            .opt_str("hybrid_override_pattern")?
            .ok_or_else(|| f.missing("hybrid_override_pattern"))?;
        if pattern.chars().count() != layers {
            return Err(f.invalid(
                "hybrid_override_pattern",
                format!(
                    "has {} layers but num_hidden_layers is {layers}",
                    pattern.chars().count()
                ),
            ));
        }
        return pattern
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
            .collect();
    }
    if family == Family::Mamba2 {
        return Ok(vec![LayerKind::Mamba2; layers]);
    }
    if family.is_gdn_hybrid() {
        let interval = match f.opt_dim("full_attention_interval", MAX_DIM)? {
            Some(0) => {
                return Err(f.invalid("full_attention_interval", "is 0, but must be at least 1"))
            }
            Some(i) => i,
            None => 4,
        };
        return Ok((0..layers)
            .map(|i| {
                if (i + 1) % interval == 0 {
                    LayerKind::Attention
                } else {
                    LayerKind::LinearAttention
                }
            })
            .collect());
    }
    Ok(vec![LayerKind::Attention; layers])
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
    if c.num_attention_layers() > 0
        && c.head_dim_field.is_none()
        && !c.is_mla()
        && !c.hidden_size.is_multiple_of(c.num_attention_heads)
    {
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
        if c.moe_intermediate_size == 0 {
            return Err(f.missing("moe_intermediate_size"));
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
        for key in [
            ["mamba_num_heads", "num_heads"],
            ["ssm_state_size", "state_size"],
        ] {
            if f.opt_dim_any(&key, MAX_DIM)?.unwrap_or(0) == 0 {
                return Err(f.missing(key[0]));
            }
        }
        if c.mamba_n_groups == 0 || c.mamba_expand == 0 {
            let key = if c.mamba_n_groups == 0 {
                "n_groups"
            } else {
                "expand"
            };
            return Err(f.invalid(key, "is 0, but must be at least 1"));
        }
    }
    let has_dense_layers =
        c.num_experts == 0 || c.first_k_dense_replace > 0 || c.layers.contains(&LayerKind::Mlp);
    let has_mixer_only = c.family == Family::Mamba2;
    if has_dense_layers && !has_mixer_only && c.intermediate_size == 0 {
        return Err(f.missing("intermediate_size"));
    }
    Ok(())
}
