//! Attention widths that differ by layer ([`LayerWidths`]: MiMo-V2-Flash, Laguna), resolved
//! to the widest layer of each, as the family's attention module builds them.

use super::error::{ConfigError, MAX_DIM};
use super::family::LayerWidths;
use super::keys::Keys;
use serde_json::Value;

/// The widest layer's attention widths.
pub(super) struct Widest {
    pub(super) heads: usize,
    pub(super) kv_heads: usize,
    /// The value head size where it is the family's own (0: the q/k head size).
    pub(super) value_head_dim: usize,
    /// The output gate's width (`extra_qkv_width`).
    pub(super) gate_width: usize,
    /// The full-attention layers' own head size (0: the model's), kv heads (0: the model's)
    /// and whether their keys are their values; (0, 0, false) where no layer has widths of
    /// its own.
    pub(super) global: (usize, usize, bool),
    /// The widest layer's dense FFN as a multiple of `intermediate_size` (2 where the
    /// KV-shared layers run a double-wide MLP, else 1).
    pub(super) ffn_factor: usize,
    /// The full-attention layers' q heads where fewer than `heads` (0: the same; `None`:
    /// the per-layer list varies within a type of layer).
    pub(super) full_heads: Option<usize>,
}

/// `heads` and `kv_heads` as the file gives them for a model of `layers` layers with heads of
/// `head_dim`, widened by the family's per-layer rules.
pub(super) fn widest(
    k: &Keys,
    rules: LayerWidths,
    layers: usize,
    (heads, kv_heads, head_dim): (usize, usize, usize),
) -> Result<Widest, ConfigError> {
    let f = &k.f;
    let model_kv_heads = kv_heads;
    let types = k.strings("layer_types")?;
    let (heads, full_heads) = match rules.heads_per_layer {
        Some(key) => match k.indices(key)? {
            Some(list) => {
                k.one_per_layer(key, list.len(), layers)?;
                if list.contains(&0) {
                    return Err(f.invalid(key, "has a layer of 0 heads"));
                }
                let widest = list.iter().copied().max().unwrap_or(heads);
                (widest, full_layer_heads(&list, types.as_deref(), widest))
            }
            None => (heads, Some(0)),
        },
        None => (heads, Some(0)),
    };
    // Sliding layers' kv heads: where the file lists the layer types, whether any slides;
    // else the configuration class's rule, every layer but the first and each sixth.
    let slides = match &types {
        Some(types) => types.contains(&"sliding_attention"),
        None => layers > 1,
    };
    let (kv_heads, full_kv_heads) = if slides && rules.sliding_kv_factor > 1 {
        // The full layers keep the file's kv heads (MiMo-V2-Flash: vLLM's `mimo_v2.py`,
        // 431–436, against `swa_num_key_value_heads` on the sliding ones).
        (kv_heads * rules.sliding_kv_factor, kv_heads)
    } else {
        (kv_heads, 0)
    };
    let value_head_dim = match rules.value_head_dim {
        Some(key) => k.dim(key, MAX_DIM)?.unwrap_or(head_dim),
        None => 0,
    };
    let gate_width = match rules.gate {
        None => 0,
        Some(key) => match f.obj.get(key) {
            None | Some(Value::Bool(true)) => heads,
            Some(Value::String(s)) if s == "per-head" => heads,
            // LagunaAttention: anything else gates each head element.
            Some(_) => heads * head_dim,
        },
    };
    // Full-attention layers of their own widths: where the file lists the layer types,
    // whether any is full; else Gemma 4's rule, whose last layer is always full
    // (configuration_gemma4.py: 188–199).
    let global = match rules.global {
        Some(g) => {
            let any_full = match &types {
                Some(types) => types.contains(&"full_attention"),
                None => layers > 0,
            };
            let k_eq_v = f.opt_bool(g.k_eq_v)?.unwrap_or(false);
            let overrides = if g.per_layer_config {
                per_layer_config(k, types.as_deref(), layers, (model_kv_heads, head_dim))?
            } else {
                None
            };
            match (any_full, overrides, k.dim(g.head_dim, MAX_DIM)?) {
                (true, Some((dim, kv)), _) => {
                    (dim, if kv == model_kv_heads { 0 } else { kv }, k_eq_v)
                }
                (true, None, Some(dim)) if dim > 0 => {
                    // The full layers' kv heads are their own only where their keys are values
                    // (configuration_gemma4.py: 214–219).
                    let kv = if k_eq_v {
                        k.dim(g.kv_heads, MAX_DIM)?.unwrap_or(0)
                    } else {
                        0
                    };
                    (dim, kv, k_eq_v)
                }
                _ => (0, 0, false),
            }
        }
        None => (0, full_kv_heads, false),
    };
    // Gemma 4: `Gemma4TextMLP` doubles `intermediate_size` in every "reuse" layer where
    // `use_double_wide_mlp` is set; there is such a layer whenever `num_kv_shared_layers` > 0
    // (`Gemma4TextConfig.kv_sharing_modes`).
    let ffn_factor = match rules.double_wide_ffn {
        Some((switch, shared))
            if f.opt_bool(switch)?.unwrap_or(false) && k.dim_or(shared, 0)? > 0 =>
        {
            2
        }
        _ => 1,
    };
    Ok(Widest {
        heads,
        kv_heads,
        value_head_dim,
        gate_width,
        global,
        ffn_factor,
        full_heads,
    })
}

/// The full-attention layers' head size and kv heads from a file's `per_layer_config`
/// (transformers' per-layer overrides: a layer index, written as a string, to the config
/// keys that differ in that layer), or `None` where the file has none. Sized where every
/// full-attention layer ends with the same two values and every other layer with the model's
/// (`base`: kv heads, head size), which is what `Gemma4UnifiedTextConfig` writes; any other
/// key, or layers of one kind that differ, is refused naming the layer.
fn per_layer_config(
    k: &Keys,
    types: Option<&[&str]>,
    layers: usize,
    base: (usize, usize),
) -> Result<Option<(usize, usize)>, ConfigError> {
    const KEY: &str = "per_layer_config";
    let f = &k.f;
    let entries = match f.obj.get(KEY) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(entries)) => entries,
        Some(_) => return Err(f.invalid(KEY, "must be an object of layer indices")),
    };
    let Some(types) = types else {
        return Err(f.invalid(
            KEY,
            "is given without `layer_types`: which layers are full is unknown",
        ));
    };
    let mut each = vec![base; layers];
    for (index, overrides) in entries {
        let layer = index
            .parse::<usize>()
            .ok()
            .filter(|&i| i < layers)
            .ok_or_else(|| {
                f.invalid(
                    KEY,
                    format!("names layer {index:?}, not one of 0..{layers}"),
                )
            })?;
        let Value::Object(overrides) = overrides else {
            return Err(f.invalid(KEY, format!("layer {index}: must be an object of keys")));
        };
        for (key, value) in overrides {
            let slot = match key.as_str() {
                "num_key_value_heads" => &mut each[layer].0,
                "head_dim" => &mut each[layer].1,
                _ => {
                    return Err(f.invalid(
                        KEY,
                        format!("layer {index} sets `{key}`: only `head_dim` and `num_key_value_heads` may differ by layer here"),
                    ))
                }
            };
            *slot = value
                .as_u64()
                .and_then(|v| usize::try_from(v).ok())
                .filter(|&v| (1..=MAX_DIM).contains(&v))
                .ok_or_else(|| {
                    f.invalid(
                        KEY,
                        format!("layer {index}: `{key}` must be a positive integer"),
                    )
                })?;
        }
    }
    let is_full = |i: usize| types.get(i) == Some(&"full_attention");
    let full = (0..layers).find(|&i| is_full(i)).map(|i| each[i]);
    for (i, &widths) in each.iter().enumerate() {
        let want = if is_full(i) {
            full.unwrap_or(base)
        } else {
            base
        };
        if widths != want {
            return Err(f.invalid(
                KEY,
                format!(
                    "layer {i} has {} kv heads of {} (its kind's other layers: {} of {}): sized only where the layers of one kind agree",
                    widths.0, widths.1, want.0, want.1
                ),
            ));
        }
    }
    Ok(full.map(|(kv, dim)| (dim, kv)))
}

/// The full-attention layers' heads where a per-layer list gives them fewer than the widest
/// (0: none fewer), or `None` where the list varies within a type of layer (the parameter
/// count keeps one width for each type, and refuses such a model; the arena takes the
/// widest either way).
fn full_layer_heads(list: &[usize], types: Option<&[&str]>, widest: usize) -> Option<usize> {
    let is_full = |i: usize| types.is_none_or(|t| t.get(i) == Some(&"full_attention"));
    let full: Vec<usize> = (0..list.len())
        .filter(|&i| is_full(i))
        .map(|i| list[i])
        .collect();
    let others_widest = (0..list.len())
        .filter(|&i| !is_full(i))
        .all(|i| list[i] == widest);
    match full.first() {
        Some(&first) if others_widest && full.iter().all(|&h| h == first) => {
            Some(if first == widest { 0 } else { first })
        }
        None if others_widest => Some(0),
        _ => None,
    }
}
