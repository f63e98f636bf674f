//! The mixers beyond the seeds' kinds ([`LinearMixer`]) and LFM2's derived FFN width
//! ([`super::family::FfnAutoAdjust`]): the keys a family row names for them, read into the
//! family-independent widths of `ModelConfig`.

use super::error::{ConfigError, MAX_DIM};
use super::family::LinearMixer;
use super::fields::json_kind;
use super::keys::Keys;
use super::LayerKind;
use serde_json::Value;

/// The widths of a beyond-the-seeds mixer, 0 where the config has none.
#[derive(Default)]
pub(super) struct LinearMixerShape {
    /// Short convolution: channels and taps.
    pub(super) short_conv: (usize, usize),
    /// Lightning attention: heads and head size.
    pub(super) lightning: (usize, usize),
    /// Kimi delta attention: heads, head size and conv taps.
    pub(super) kda: (usize, usize, usize),
}

/// `attention` is the softmax attention's heads and head size (the lightning layers' too).
pub(super) fn linear_mixer_shape(
    k: &Keys,
    layers: &[LayerKind],
    hidden_size: usize,
    attention: (usize, usize),
) -> Result<LinearMixerShape, ConfigError> {
    let mut shape = LinearMixerShape::default();
    match k.rules.linear_mixer {
        // `Lfm2ShortConv`: in_proj, conv and out_proj are all `hidden_size` channels (the
        // files' `conv_dim` is not read by the reference).
        Some(LinearMixer::ShortConv { kernel }) if layers.contains(&LayerKind::ShortConv) => {
            shape.short_conv = (hidden_size, k.positive(kernel, MAX_DIM)?);
        }
        // `MiniMaxLightningAttention`: `num_attention_heads` heads of `head_dim` (else hidden
        // / heads), as the softmax layers.
        Some(LinearMixer::Lightning) if layers.contains(&LayerKind::Lightning) => {
            let heads = k.positive("num_attention_heads", MAX_DIM)?;
            let head_dim = match attention.1 {
                0 => hidden_size / heads,
                d => d,
            };
            shape.lightning = (heads, head_dim);
        }
        Some(LinearMixer::Kda {
            nested,
            heads,
            head_dim,
            conv_kernel,
        }) if layers.contains(&LayerKind::Kda) => {
            let inner = k.nested(nested.0, nested.1)?;
            let read = |(inner_key, flat_key): (&'static str, &'static str)| {
                // The class's own field (or its default), which the checkpoint's object
                // replaces where it has the key.
                let flat = k.dim(flat_key, MAX_DIM)?;
                let from_inner = match &inner {
                    Some(inner) => match inner.file_dim(inner_key)? {
                        Some(0) => {
                            return Err(inner.f.invalid(inner_key, "is 0, but must be at least 1"))
                        }
                        v => v,
                    },
                    None => None,
                };
                match from_inner {
                    Some(v) => Ok(v),
                    None => match flat {
                        Some(v) if v > 0 => Ok(v),
                        Some(_) => Err(k.f.invalid(flat_key, "is 0, but must be at least 1")),
                        None => Err(k.f.missing(flat_key)),
                    },
                }
            };
            shape.kda = (read(heads)?, read(head_dim)?, read(conv_kernel)?);
        }
        // No mixer beyond the seeds, or none of its layers in this file.
        _ => {}
    }
    Ok(shape)
}

/// The dense FFN width as the family's MLP builds it from `width` (the width key as read).
pub(super) fn dense_ffn_width(k: &Keys, width: usize) -> Result<usize, ConfigError> {
    let Some(rule) = k.rules.ffn_auto_adjust else {
        return Ok(width);
    };
    let f = &k.f;
    let width = k.dim(rule.width_override, MAX_DIM)?.unwrap_or(width);
    let (switch, on_by_default) = rule.switch;
    if !f.opt_bool(switch)?.unwrap_or(on_by_default) || width == 0 {
        return Ok(width);
    }
    // `Lfm2MLP`: `int(2 * intermediate_size / 3)`, exact in integers for these magnitudes.
    let two_thirds = width * 2 / 3;
    let multiplier = match f.obj.get(rule.multiplier) {
        None => 1.0,
        Some(Value::Null) => return Ok(two_thirds),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(m) if m.is_finite() && m > 0.0 => m,
            _ => return Err(f.invalid(rule.multiplier, "must be a positive finite number")),
        },
        Some(other) => {
            return Err(f.invalid(
                rule.multiplier,
                format!("must be a number, not {}", json_kind(other)),
            ))
        }
    };
    let (key, default) = rule.multiple_of;
    let multiple_of = match k.dim(key, MAX_DIM)? {
        Some(0) => return Err(f.invalid(key, "is 0, but must be at least 1")),
        Some(m) => m,
        None => default,
    };
    // `int(multiplier * width)`, then up to a multiple of `multiple_of`.
    let scaled = multiplier * two_thirds as f64;
    if scaled >= MAX_DIM as f64 {
        return Err(f.invalid(
            rule.multiplier,
            format!(
                "makes the FFN width {scaled}, larger than the largest supported value {MAX_DIM}"
            ),
        ));
    }
    Ok((scaled as usize).div_ceil(multiple_of) * multiple_of)
}
