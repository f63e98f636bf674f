//! Which cache each layer keeps ([`KvLayer`]): the KV pool's layer kinds, from the file's
//! `layer_types` and the family's [`KvLayers`](super::family::KvLayers) rules.

use super::error::{ConfigError, MAX_EXTENT};
use super::keys::Keys;
use super::{KvLayer, LayerKind};

/// The sliding window (0 where no layer slides) and one [`KvLayer`] per layer.
pub(super) fn kv_layers(
    k: &Keys,
    layers: &[LayerKind],
    compressed: Option<&[KvLayer]>,
) -> Result<(usize, Vec<KvLayer>), ConfigError> {
    let f = &k.f;
    let rules = k.rules.kv_layers;
    let n = layers.len();
    let window = k.dim("sliding_window", MAX_EXTENT)?.unwrap_or(0);
    let slides: Vec<bool> = match k.strings("layer_types")? {
        // `layer_layout` has checked the list's length.
        Some(types) => types.iter().map(|&t| t == "sliding_attention").collect(),
        None => match rules.window_pattern {
            Some((key, default)) => {
                let every = k.dim_or(key, default)?;
                if every == 0 {
                    return Err(f.invalid(key, "is 0, but must be at least 1"));
                }
                (0..n).map(|i| (i + 1) % every != 0).collect()
            }
            None => vec![false; n],
        },
    };
    let shared = match rules.shared_count {
        Some(key) => k.dim_or(key, 0)?,
        None => 0,
    };
    if shared > n {
        return Err(f.invalid(
            rules.shared_count.unwrap_or_default(),
            format!("is {shared}, more than the model's {n} layers"),
        ));
    }
    // DeepSeek-V4: its layers' kinds as `compressed.rs` resolved them, each with its window.
    if let Some(kinds) = compressed {
        return Ok((window, kinds.to_vec()));
    }
    let window = if slides.contains(&true) { window } else { 0 };
    let kinds = layers
        .iter()
        .zip(&slides)
        .enumerate()
        .map(|(i, (&kind, &slides))| match kind {
            LayerKind::Attention if i >= n - shared && slides => KvLayer::Shared,
            LayerKind::Attention if i >= n - shared => KvLayer::SharedFull,
            // A sliding layer without a window (`sliding_window` null or 0) keeps every token.
            LayerKind::Attention if slides && window > 0 => KvLayer::Sliding,
            LayerKind::Attention => KvLayer::Full,
            _ => KvLayer::None,
        })
        .collect();
    Ok((window, kinds))
}
