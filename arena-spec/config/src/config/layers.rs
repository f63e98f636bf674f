//! One `LayerKind` per layer: the family's layout rule (`layer_types`, an attention interval,
//! Nemotron-H's block lists and pattern).

use super::error::{ConfigError, MAX_DIM};
use super::family::{LinearMixer, Mixers};
use super::keys::Keys;
use super::LayerKind;

/// One `LayerKind` per layer, by the family's layout rule.
pub(super) fn layer_layout(k: &Keys) -> Result<Vec<LayerKind>, ConfigError> {
    let f = &k.f;
    let rules = k.rules;
    if rules.mixers == Mixers::NemotronHybrid {
        return nemotron_layers(k);
    }
    if rules.mixers == Mixers::LightningHybrid {
        return lightning_layers(k);
    }
    if rules.mixers == Mixers::Blocks {
        // The kinds alone; `load.rs` reads the blocks' widths (`blocks.rs`).
        let hidden = k.positive("hidden_size", MAX_DIM)?;
        let heads = k.positive("num_attention_heads", MAX_DIM)?;
        return Ok(super::blocks::blocks(k, hidden, heads)?.kinds);
    }
    let layers = k.positive("num_hidden_layers", MAX_DIM)?;
    if let Some(types) = k.strings("layer_types")? {
        k.one_per_layer("layer_types", types.len(), layers)?;
        let gdn = matches!(rules.mixers, Mixers::GatedDeltaNetHybrid | Mixers::AnyKind);
        let mamba = matches!(rules.mixers, Mixers::Mamba2 | Mixers::AnyKind);
        let mamba_hybrid = rules.mixers == Mixers::Mamba2Hybrid;
        let short_conv = rules.mixers == Mixers::ShortConvHybrid;
        let kda = rules.mixers == Mixers::KdaHybrid;
        return types
            .iter()
            .map(|&t| match t {
                "full_attention"
                | "sliding_attention"
                | "chunked_attention"
                | "attention"
                | "indexed_attention"
                | "deepseek_sparse_attention"
                | "compressed_sparse_attention"
                | "heavily_compressed_attention" => Ok(LayerKind::Attention),
                "linear_attention" if gdn => Ok(LayerKind::GatedDeltaNet),
                "linear_attention" if mamba_hybrid => Ok(LayerKind::Mamba2),
                // transformers reads a legacy `"mamba"` as `"linear_attention"`
                // (`configuration_utils.py`: `_LEGACY_LAYER_TYPE_REMAP`), which Granite 4.0-H's
                // files write.
                "mamba" | "mamba2" if mamba || mamba_hybrid => Ok(LayerKind::Mamba2),
                "conv" if short_conv => Ok(LayerKind::ShortConv),
                "linear_attention" if kda => Ok(LayerKind::Kda),
                other => Err(f.invalid(
                    "layer_types",
                    format!(
                        "has layer type {other:?}, which the arena does not size in a {} model",
                        rules.model_type
                    ),
                )),
            })
            .collect();
    }
    match rules.mixers {
        Mixers::Mamba2 | Mixers::Mamba2Hybrid => Ok(vec![LayerKind::Mamba2; layers]),
        Mixers::GatedDeltaNetHybrid => {
            let interval = match k.dim("full_attention_interval", MAX_DIM)? {
                Some(0) => {
                    return Err(f.invalid("full_attention_interval", "is 0, but must be at least 1"))
                }
                Some(i) => i,
                // Every hybrid row gives the class default, so this is a file that nulls it.
                None => return Err(f.missing("full_attention_interval")),
            };
            Ok((0..layers)
                .map(|i| {
                    if (i + 1) % interval == 0 {
                        LayerKind::Attention
                    } else {
                        LayerKind::GatedDeltaNet
                    }
                })
                .collect())
        }
        Mixers::KdaHybrid => kda_layers(k, layers),
        Mixers::ShortConvHybrid => {
            // `Lfm2Config.__post_init__`: attention where the 0-based index is listed, a short
            // convolution elsewhere; no list, every layer attention.
            let attention = k.indices("full_attn_idxs")?;
            Ok((0..layers)
                .map(|i| match &attention {
                    Some(listed) if !listed.contains(&i) => LayerKind::ShortConv,
                    _ => LayerKind::Attention,
                })
                .collect())
        }
        Mixers::Attention
        | Mixers::NemotronHybrid
        | Mixers::LightningHybrid
        | Mixers::AnyKind
        | Mixers::Blocks => Ok(vec![LayerKind::Attention; layers]),
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

/// MiniMax-M1's layers: `attn_type_list`, 0 a lightning layer, 1 a softmax one
/// (`MiniMaxM1Model.__init__`: `attention_type = 0` builds `MiniMaxM1LightningAttention`). The
/// list sets the layer count; one that disagrees with `num_hidden_layers` is refused (the
/// reference indexes the list by layer and would fail on a short one).
fn lightning_layers(k: &Keys) -> Result<Vec<LayerKind>, ConfigError> {
    let f = &k.f;
    let types = k
        .indices("attn_type_list")?
        .ok_or_else(|| f.missing("attn_type_list"))?;
    let layers = k.positive("num_hidden_layers", MAX_DIM)?;
    k.one_per_layer("attn_type_list", types.len(), layers)?;
    types
        .iter()
        .map(|&t| match t {
            0 => Ok(LayerKind::Lightning),
            1 => Ok(LayerKind::Attention),
            other => Err(f.invalid(
                "attn_type_list",
                format!("has {other}, which is neither 0 (lightning) nor 1 (softmax attention)"),
            )),
        })
        .collect()
}

/// Kimi-Linear's layers without `layer_types` (`KimiLinearConfig.__post_init__`): the
/// checkpoint's `linear_attn_config` lists, 1-based, where it has both (`full_attn_layers`
/// MLA, `kda_layers` delta attention; a layer neither lists is refused, as the reference
/// would build no mixer for it), else a full layer at every 0-based index `i > 0` with `i %
/// 4 == 0`.
fn kda_layers(k: &Keys, layers: usize) -> Result<Vec<LayerKind>, ConfigError> {
    let f = &k.f;
    let (key, prefix) = match k.rules.linear_mixer {
        Some(LinearMixer::Kda { nested, .. }) => nested,
        _ => return Err(f.missing("linear_attn_config")),
    };
    let lists = match k.nested(key, prefix)? {
        Some(nested) => match (
            nested.indices("full_attn_layers")?,
            nested.indices("kda_layers")?,
        ) {
            (Some(full), Some(kda)) => Some((full, kda)),
            _ => None,
        },
        None => None,
    };
    let Some((full, kda)) = lists else {
        return Ok((0..layers)
            .map(|i| {
                if i > 0 && i % 4 == 0 {
                    LayerKind::Attention
                } else {
                    LayerKind::Kda
                }
            })
            .collect());
    };
    let mut kinds = vec![None; layers];
    for (list, kind, list_key) in [
        (&full, LayerKind::Attention, "full_attn_layers"),
        (&kda, LayerKind::Kda, "kda_layers"),
    ] {
        for &layer in list {
            if layer == 0 || layer > layers {
                return Err(f.invalid(
                    &format!("{prefix}{list_key}"),
                    format!("names layer {layer}, but the layers are 1 to {layers} (1-based)"),
                ));
            }
            kinds[layer - 1] = Some(kind);
        }
    }
    kinds
        .into_iter()
        .enumerate()
        .map(|(i, kind)| {
            kind.ok_or_else(|| {
                f.invalid(
                    key,
                    format!(
                        "puts layer {} (1-based) in neither full_attn_layers nor kda_layers",
                        i + 1
                    ),
                )
            })
        })
        .collect()
}
