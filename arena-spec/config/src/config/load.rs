//! Turning a parsed `config.json` into a `ModelConfig`: the family's keys, aliases and
//! defaults (`family.rs`), the per-layer layout, and the checks that make the numbers safe
//! to size with. Every width follows the family's reference implementation (transformers'
//! modeling file); where a file's keys disagree in a way the reference would reject, the
//! file is refused naming both keys.

use super::aliases::with_aliases;
use super::blocks::blocks;
use super::compressed::compressed_attention;
use super::error::{ConfigError, MAX_DIM, MAX_EXTENT};
use super::family::{HeadDim, LayoutKeys, Mixers, Mrope, RefusalScope};
use super::fields::{json_kind, Fields};
use super::indexer_layers::indexer_layers;
use super::keys::Keys;
use super::kv_layers::kv_layers;
use super::layer_widths::widest;
use super::layers::layer_layout;
use super::layout_keys::{falcon_kv_heads, falcon_layer_norms};
use super::levers::Levers;
use super::linear_mixers::{dense_ffn_width, linear_mixer_shape};
use super::mamba::mamba_shape;
use super::moe::moe_shape;
use super::quant_recipe::weight_formats;
use super::resolve::{resolve, TextModel};
use super::state_dtype::recurrent_state_dtype;
use super::towers::towers;
use super::{LayerKind, ModelConfig, Towers, WeightFormats};
use serde_json::Value;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::Path;

pub(super) fn from_value(
    value: &Value,
    path: &Path,
    side: Option<(&Value, &Path)>,
    asked: Option<&RefCell<BTreeSet<&'static str>>>,
) -> Result<ModelConfig, ConfigError> {
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
    let resolved = resolve(&outer)?;
    let family = resolved.family;
    // A file read by its class may have no `model_type`: the family's stands in.
    let model_type = outer.opt_str("model_type")?.unwrap_or(family.model_type());
    let outer_tied = outer.opt_bool("tie_word_embeddings")?;
    let f = resolved.text;
    let text_model = TextModel {
        found_by: resolved.resolution,
        not_sized: resolved.adds,
        left_out: resolved
            .left_out
            .into_iter()
            .map(Cow::Owned)
            .collect::<Vec<_>>()
            .into(),
    };
    // The class's `attribute_map`: a file spelling a common key its own way (GPT-2's
    // `n_embd`) is read under the common name.
    let aliased = with_aliases(f.obj, family.rules().aliases);
    let f = match &aliased {
        Some(obj) => Fields { obj, ..f },
        None => f,
    };
    let recurrent_state_dtype = recurrent_state_dtype(family, &f)?;
    let k = Keys::new(f, family, asked);
    let f = &k.f;
    let rules = k.rules;
    // The row's refusals of a feature any of its models may have: `true`, or a value above
    // 0 (the row's default where the file has none).
    for refusal in rules.refusals {
        if refusal.scope == RefusalScope::Present
            && f.obj.get(refusal.key).is_some_and(|v| !v.is_null())
        {
            return Err(f.invalid(refusal.key, format!("is set: {}", refusal.reason)));
        }
        if refusal.scope == RefusalScope::AnyModel {
            match f.obj.get(refusal.key) {
                Some(Value::Bool(true)) => {
                    return Err(f.invalid(refusal.key, format!("is true: {}", refusal.reason)))
                }
                Some(Value::Bool(false)) => {}
                _ => {
                    if let Some(value) = k.dim(refusal.key, MAX_DIM)?.filter(|&v| v > 0) {
                        return Err(f.invalid(refusal.key, refusal.reason_for(value)));
                    }
                }
            }
        }
    }

    let hidden_size = k.positive("hidden_size", MAX_DIM)?;
    for refusal in rules.refusals {
        match refusal.scope {
            RefusalScope::AnyModelWhenFalse if f.opt_bool(refusal.key)? == Some(false) => {
                return Err(f.invalid(refusal.key, format!("is false: {}", refusal.reason)));
            }
            RefusalScope::UnlessHidden => {
                if let Some(value) = k.file_dim(refusal.key)?.filter(|&v| v != hidden_size) {
                    return Err(f.invalid(refusal.key, refusal.reason_for(value)));
                }
            }
            RefusalScope::UnlessSameAs(other) => {
                let same = k.dim(other, MAX_DIM)?;
                if let Some(value) = k.file_dim(refusal.key)?.filter(|&v| Some(v) != same) {
                    return Err(f.invalid(refusal.key, refusal.reason_for(value)));
                }
            }
            _ => {}
        }
    }
    let vocab_size = k.positive("vocab_size", MAX_EXTENT)?;
    // A file with no context length (BLOOM's ALiBi files) gets 4096: chosen here, the
    // context a plan uses unless it is given one (`docs/seeds.md`).
    let max_position_embeddings = k.dim_any(rules.context_keys, MAX_EXTENT)?.unwrap_or(4096);
    let layers = layer_layout(&k)?;
    let num_hidden_layers = layers.len();
    let has_attention = layers.contains(&LayerKind::Attention);

    let (num_attention_heads, num_key_value_heads) = if has_attention {
        let heads = k.positive("num_attention_heads", MAX_DIM)?;
        let kv = match rules.layout_keys {
            LayoutKeys::Falcon => falcon_kv_heads(&k, heads)?,
            LayoutKeys::Common => match k.dim("num_key_value_heads", MAX_DIM)? {
                Some(0) => {
                    return Err(f.invalid("num_key_value_heads", "is 0, but must be at least 1"))
                }
                Some(kv) => kv,
                None => heads,
            },
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
    // DeepSeek-V4: one K=V head whatever the file says (the reference reads no
    // `num_key_value_heads`), the layer kinds' compressors and indexer, the hash layers.
    let compressed = match rules.compressed {
        Some(c) if has_attention => Some(compressed_attention(
            &k,
            c,
            num_hidden_layers,
            head_dim_field.unwrap_or(0),
        )?),
        _ => None,
    };
    let kv_layout = kv_layers(
        &k,
        &layers,
        compressed.as_ref().map(|c| c.kv_kinds.as_slice()),
    )?;
    let num_key_value_heads = if compressed.is_some() {
        1
    } else {
        num_key_value_heads
    };
    // DeciLM: the widest block's kv heads and FFN (its file nulls both keys).
    let blocks = match rules.mixers {
        Mixers::Blocks => Some(blocks(&k, hidden_size, num_attention_heads)?),
        _ => None,
    };
    let num_key_value_heads = blocks.as_ref().map_or(num_key_value_heads, |b| b.kv_heads);
    let dense_width = blocks.as_ref().map_or(moe.dense_width, |b| b.ffn_width);
    // LFM2: the MLP's width is derived from the width key (`Lfm2MLP`).
    let dense_width = dense_ffn_width(&k, dense_width)?;
    // GPT-2: without a width, a multiple of the hidden size.
    let dense_width = match dense_width {
        0 => hidden_size.saturating_mul(rules.ffn_times_hidden),
        w => w,
    };
    let linear_mixer = linear_mixer_shape(
        &k,
        &layers,
        hidden_size,
        (num_attention_heads, head_dim_field.unwrap_or(0)),
    )?;
    // MiMo-V2-Flash, Laguna: the widest layer's heads, kv heads, value head size and gate.
    let widest = match rules.layer_widths {
        Some(w) if has_attention => Some(widest(
            &k,
            w,
            layers.len(),
            (
                num_attention_heads,
                num_key_value_heads,
                head_dim_field.unwrap_or(0),
            ),
        )?),
        _ => None,
    };
    let (num_attention_heads, num_key_value_heads) = widest
        .as_ref()
        .map_or((num_attention_heads, num_key_value_heads), |w| {
            (w.heads, w.kv_heads)
        });
    // Gemma 4: the KV-shared layers' double-wide MLP is the widest.
    let dense_width = dense_width.saturating_mul(widest.as_ref().map_or(1, |w| w.ffn_factor));
    // Gemma 4 E-models: every layer's P-wide slice of one per-token embedding of all layers.
    let per_layer_input_dim = match rules.per_layer_inputs {
        Some(key) => k.dim(key, MAX_DIM)?.unwrap_or(0),
        None => 0,
    };
    // The indexer: its heads and selection where a layer has one (`has_indexer`). The seeds'
    // `index_topk` counts the selection in tokens (`lists [2048, index_topk /
    // index_compress_ratio]`); DeepSeek-V4's `index_topk` counts compressed entries
    // (`DeepseekV4Indexer`: `top_k = min(index_topk, compressed_len)`), so it is the rate
    // times the file's.
    let (index_ratio, index_scale) = match &compressed {
        Some(c) => (c.index_ratio, c.index_ratio),
        None => (k.dim_or("index_compress_ratio", 0)?, 1),
    };
    let indexed = compressed.as_ref().is_none_or(|c| c.index_ratio > 0);
    let kv_lora_rank = k.dim_or("kv_lora_rank", 0)?;
    let index_dim =
        |key| -> Result<usize, ConfigError> { Ok(if indexed { k.dim_or(key, 0)? } else { 0 }) };
    // MLA's indexer (DeepSeek-V3.2, GLM-5) on the layers vLLM builds one; DeepSeek-V4's is
    // its CSA layers'.
    let mla_indexer = compressed.is_none()
        && kv_lora_rank > 0
        && index_dim("index_n_heads")? > 0
        && index_dim("index_head_dim")? > 0
        && index_dim("index_topk")? > 0;
    let indexer_layers = indexer_layers(&k, &layers, mla_indexer)?;

    let mut c = ModelConfig {
        source: path.display().to_string().into(),
        model_type: model_type.to_string().into(),
        family,
        hidden_size,
        intermediate_size: dense_width,
        num_hidden_layers,
        vocab_size,
        max_position_embeddings,
        num_attention_heads,
        num_key_value_heads,
        head_dim_field,
        attn_output_gate: match rules.output_gate {
            Some(gated) => gated,
            None => f.opt_bool("attn_output_gate")?.unwrap_or(false),
        },
        mrope: match rules.mrope {
            Mrope::Always => true,
            Mrope::FromFile => has_mrope(f),
        },
        layers: layers.into(),
        weight_formats: WeightFormats::BF16,
        tie_word_embeddings: match f.opt_bool("tie_word_embeddings")? {
            Some(tied) => tied,
            // LFM2's first files name it `tie_embedding` (`Lfm2Config` reads both).
            None => match f.opt_bool("tie_embedding")? {
                Some(tied) => tied,
                None => outer_tied.unwrap_or(rules.tied_embeddings),
            },
        },
        attention_bias: k.flag("attention_bias")?,
        mlp_bias: k.flag("mlp_bias")?,
        use_qk_norm: f.opt_bool("use_qk_norm")?.unwrap_or(false),
        qk_norm_whole: f.opt_str("qk_norm_type")? == Some("olmo"),
        embedding_extra_rows: match rules.embedding_extra_rows {
            Some(key) => k.dim_or(key, 0)?,
            None => 0,
        },
        post_norms: k.flag("use_post_norm")?,
        layer_norms: match rules.layout_keys {
            LayoutKeys::Falcon => Some(falcon_layer_norms(&k)?),
            LayoutKeys::Common => None,
        },
        sliding_window: kv_layout.window,
        attention_chunk_size: kv_layout.chunk,
        hca_compress_ratio: compressed.as_ref().map_or(0, |c| c.hca_ratio),
        kv_layers: kv_layout.kinds.into(),
        num_experts: moe.experts,
        num_experts_per_tok: moe.top_k,
        moe_intermediate_size: moe.expert_width,
        shared_expert_intermediate_size: moe.shared_width,
        moe_latent_size: moe.latent_width,
        n_shared_experts: k.dim_or("n_shared_experts", 0)?,
        first_k_dense_replace: k.dim_or("first_k_dense_replace", 0)?,
        moe_dense_layers: moe.dense_ffn.iter().filter(|&&d| d).count(),
        dense_ffn_layers: moe.dense_ffn.into(),
        zero_expert_num: k.dim_or("zero_expert_num", 0)?,
        hash_moe_layers: match &compressed {
            Some(c) => c.hash_layers,
            None => k.dim_or("hash_moe_layers", 0)?,
        },
        // Low-rank (MLA) attention keys are read for every family, so a synthetic or future
        // file can turn MLA on; the MLA families' files always carry them.
        q_lora_rank: k.dim_or("q_lora_rank", 0)?,
        kv_lora_rank,
        qk_nope_head_dim: k.dim_or("qk_nope_head_dim", 0)?,
        qk_rope_head_dim: k.dim_or("qk_rope_head_dim", 0)?,
        // A value head size of its own for an MLA attention, or where the family's attention
        // reads one (MiMo-V2-Flash); a stray key elsewhere is not read.
        v_head_dim: match &widest {
            Some(w) if w.value_head_dim > 0 => w.value_head_dim,
            _ if kv_lora_rank > 0 => k.dim_or("v_head_dim", 0)?,
            _ => 0,
        },
        index_n_heads: index_dim("index_n_heads")?,
        index_head_dim: index_dim("index_head_dim")?,
        index_topk: index_dim("index_topk")?.saturating_mul(index_scale),
        index_compress_ratio: index_ratio,
        indexer_layers: indexer_layers.into(),
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
        recurrent_state_dtype,
        short_conv_dim: linear_mixer.short_conv.0,
        short_conv_kernel: linear_mixer.short_conv.1,
        lightning_heads: linear_mixer.lightning.0,
        lightning_head_dim: linear_mixer.lightning.1,
        kda_heads: linear_mixer.kda.0,
        kda_head_dim: linear_mixer.kda.1,
        kda_conv_kernel: linear_mixer.kda.2,
        per_layer_input_dim,
        per_layer_inputs_width: per_layer_input_dim.saturating_mul(num_hidden_layers),
        o_groups: k.dim_or("o_groups", 0)?,
        o_lora_rank: k.dim_or("o_lora_rank", 0)?,
        extra_qkv_width: compressed.as_ref().map_or(0, |c| c.compressor_width)
            + widest.as_ref().map_or(0, |w| w.gate_width),
        global_head_dim: widest.as_ref().map_or(0, |w| w.global.0),
        global_kv_heads: widest.as_ref().map_or(0, |w| w.global.1),
        global_k_eq_v: widest.as_ref().is_some_and(|w| w.global.2),
        full_attention_heads: widest.as_ref().and_then(|w| w.full_heads).unwrap_or(0),
        heads_vary_within_type: widest.as_ref().is_some_and(|w| w.full_heads.is_none()),
        blocks: blocks.map(|b| b.blocks).unwrap_or_default().into(),
        attention_gate_per_head: widest.as_ref().map_or(0, |w| w.gate_width / w.heads.max(1)),
        shared_ffn_doubled: widest.as_ref().is_some_and(|w| w.ffn_factor == 2),
        hc_mult: k.dim_or("hc_mult", 0)?,
        hc_lowrank_rank: k.dim_or("hc_lowrank_rank", 0)?,
        adapter_max_rank: k.dim_or("adapter_max_rank", 0)?,
        mtp_layers: k
            .dim_any(
                &[
                    "num_nextn_predict_layers",
                    "mtp_num_hidden_layers",
                    "num_mtp_modules",
                ],
                MAX_DIM,
            )?
            .unwrap_or(0),
        towers: Towers::default(),
        text_model,
        levers: Levers::default(),
        shard: None,
    };
    if rules.mla && has_attention && c.kv_lora_rank == 0 {
        return Err(f.missing("kv_lora_rank"));
    }
    check(&c, &k)?;
    // The towers after the text model: a file is first refused for what its text model is.
    let top = Fields {
        path,
        obj: top,
        prefix: "",
    };
    c.towers = towers(&top, hidden_size)?;
    // The recipe at the top level (multimodal files keep it there too), else the side file.
    let side = match side {
        Some((Value::Object(obj), side_path)) => Some(Fields {
            path: side_path,
            obj,
            prefix: "",
        }),
        Some((other, side_path)) => {
            return Err(ConfigError::Invalid {
                path: side_path.into(),
                field: "(top level)".into(),
                reason: format!("must be a JSON object, not {}", json_kind(other)),
            })
        }
        None => None,
    };
    c.weight_formats = weight_formats(&top, side.as_ref(), &c)?;
    Ok(c)
}

/// The attention head size as the family's attention module reads it; `None` where it is
/// `hidden / heads` (or the family has no softmax attention of its own head size).
fn attention_head_dim(k: &Keys) -> Result<Option<usize>, ConfigError> {
    let f = &k.f;
    let head_dim = match k.rules.head_dim {
        HeadDim::NotAttention => return Ok(None),
        HeadDim::Key => k.dim("head_dim", MAX_DIM)?,
        // Where the file has both spellings, they must agree; an explicit `null` `head_dim`
        // takes the default too.
        HeadDim::KeyWithLegacy(legacy_key) => {
            let explicit = k.file_dim("head_dim")?;
            let legacy = k.file_dim(legacy_key)?;
            let used = explicit.or(k.default("head_dim"));
            if let (Some(used), Some(legacy)) = (used, legacy) {
                if used != legacy {
                    return Err(f.invalid(
                        legacy_key,
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
    };
    match head_dim {
        Some(0) => Err(f.invalid("head_dim", "is 0, but must be at least 1")),
        other => Ok(other),
    }
}

fn has_mrope(f: &Fields) -> bool {
    let has = |obj: Option<&Value>| {
        obj.and_then(|v| v.get("mrope_section"))
            .is_some_and(|v| !v.is_null())
    };
    // Per layer type (`{"full_attention": {...}}`: Cohere Compass, Gemma 4): any type's.
    let any_type = |obj: Option<&Value>| match obj {
        Some(Value::Object(types)) => types.values().any(|t| has(Some(t))),
        _ => false,
    };
    let rope = f.obj.get("rope_parameters");
    has(rope) || any_type(rope) || has(f.obj.get("rope_scaling"))
}

/// Rules across fields, each naming the field at fault.
fn check(c: &ModelConfig, k: &Keys) -> Result<(), ConfigError> {
    let f = &k.f;
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
        && (c.head_dim_field.is_none() || c.family.rules().heads_divide_hidden)
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
        // Chosen here: the seeds' expert buffers are hidden wide (`expert_down_out`, the
        // grouped FP8 scratch), which holds a latent no wider than that; a latent MoE that
        // widens its experts' input defeats its purpose and is refused rather than sized.
        if c.moe_latent_size > c.hidden_size {
            return Err(f.invalid(
                "moe_latent_size",
                format!(
                    "is {}, wider than hidden_size {}: the experts' buffers are hidden_size wide",
                    c.moe_latent_size, c.hidden_size
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
            k.positive(key, MAX_DIM)?;
        }
    }
    // Only a row with Mamba-2 keys lays out Mamba-2 layers.
    if let Some(keys) = c.family.rules().mamba.filter(|_| c.num_mamba_layers() > 0) {
        for (key, value) in [
            (keys.heads, c.mamba_num_heads),
            (keys.head_dim, c.mamba_head_dim),
            (keys.state, c.ssm_state_size),
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
    let rules = c.family.rules();
    if has_dense_layers && !rules.mixer_only && c.intermediate_size == 0 {
        return Err(f.missing(rules.dense_width_key));
    }
    Ok(())
}

/// The keys a `config.json`'s loading asks for where its family's row could give a default
/// (present in the file or not): what `tests/family_table.rs` checks each row's `defaults`
/// against. Not an interface.
#[doc(hidden)]
pub fn keys_asked(text: &str) -> Result<BTreeSet<String>, ConfigError> {
    let path = Path::new("keys_asked.json");
    let value = super::json::parse(text, path)?;
    let asked = RefCell::new(BTreeSet::new());
    from_value(&value, path, None, Some(&asked))?;
    Ok(asked.into_inner().into_iter().map(String::from).collect())
}
