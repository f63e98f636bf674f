//! DeciLM's per-block layers ([`Mixers::Blocks`]: NVIDIA's Llama-Nemotron "NAS" models,
//! `model_type` `nemotron-nas`). transformers has no such model: the reference is NVIDIA's
//! published `modeling_decilm.py` (`DeciLMDecoderLayer`, `DeciLMAttention`, `DeciLMMLP`,
//! `_ffn_mult_to_intermediate_size`), which vLLM's `nemotron_nas.py` follows too.
//!
//! Each entry of `block_configs` is one layer: `attention` (`no_op`: no attention and no
//! KV cache in that layer; else `num_attention_heads / n_heads_in_group` kv heads) and `ffn`
//! (`no_op`, or an FFN of `ffn_mult`: `int(2 · ffn_mult · hidden / 3)` rounded up to a multiple
//! of 256, or the block's own `intermediate_size`). The arena is sized for the widest block of
//! each kind; the weights a block at its own widths ([`Block`], `ModelConfig::blocks`). `replace_with_linear` (a hidden → hidden linear layer in place of the attention or
//! the FFN) is refused: no shipped file has it and the arena does not size that layer kind.

use super::error::{ConfigError, MAX_DIM};
use super::fields::json_kind;
use super::keys::Keys;
use super::LayerKind;
use serde_json::Value;

/// One DeciLM block's widths, as vLLM's `DeciLMDecoderLayer` builds it
/// (`vllm/model_executor/models/nemotron_nas.py`): 0 where that part of the block is a
/// no-op (no projection and no norm for it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Block {
    /// The attention's kv heads (`num_attention_heads / n_heads_in_group`; on a rank, its
    /// share); 0: no attention.
    pub kv_heads: usize,
    /// The FFN's width (`_ffn_mult_to_intermediate_size`, or the block's
    /// `intermediate_size`; on a rank, its share); 0: no FFN.
    pub ffn_width: usize,
}

/// What the blocks resolve to.
pub(super) struct Blocks {
    /// One kind per block: `Attention`, or `Mlp` where the attention is a no-op.
    pub(super) kinds: Vec<LayerKind>,
    /// Each block's widths.
    pub(super) blocks: Vec<Block>,
    /// The most kv heads of an attention block (0 without one).
    pub(super) kv_heads: usize,
    /// The widest FFN (0 where every FFN is a no-op).
    pub(super) ffn_width: usize,
}

/// DeciLM's FFN width for `ffn_mult` (`_ffn_mult_to_intermediate_size`): `int(2 · ffn_mult ·
/// hidden / 3)`, rounded up to a multiple of 256.
pub(super) fn ffn_mult_width(ffn_mult: f64, hidden: usize) -> usize {
    // `as` saturates a width past `usize` (a huge `ffn_mult`), which the caller refuses.
    let width = (2.0 * ffn_mult * hidden as f64 / 3.0) as usize;
    width.div_ceil(256).saturating_mul(256)
}

/// The blocks of `block_configs`, with `heads` attention heads of a `hidden`-wide model.
pub(super) fn blocks(k: &Keys, hidden: usize, heads: usize) -> Result<Blocks, ConfigError> {
    let f = &k.f;
    let key = "block_configs";
    let list = match f.obj.get(key) {
        Some(Value::Array(list)) if !list.is_empty() => list,
        Some(Value::Array(_)) => return Err(f.invalid(key, "is empty")),
        Some(other) => {
            return Err(f.invalid(
                key,
                format!("must be an array of blocks, not {}", json_kind(other)),
            ))
        }
        None => return Err(f.missing(key)),
    };
    if let Some(n) = k.dim("num_hidden_layers", MAX_DIM)? {
        if n != list.len() {
            return Err(f.invalid(
                key,
                format!("has {} blocks but num_hidden_layers is {n}", list.len()),
            ));
        }
    }
    let bad = |i: usize, what: String| f.invalid(key, format!("block {i}: {what}"));
    let flag = |part: &serde_json::Map<String, Value>, name: &str| {
        part.get(name).and_then(Value::as_bool).unwrap_or(false)
    };
    let (mut kinds, mut widths, mut kv_heads, mut ffn_width) = (Vec::new(), Vec::new(), 0, 0);
    for (i, block) in list.iter().enumerate() {
        let part = |name: &str| match block.get(name) {
            Some(Value::Object(part)) => Ok(part),
            _ => Err(bad(i, format!("has no `{name}` object"))),
        };
        let (attention, ffn) = (part("attention")?, part("ffn")?);
        for (name, p) in [("attention", attention), ("ffn", ffn)] {
            if flag(p, "replace_with_linear") {
                return Err(bad(
                    i,
                    format!("{name}.replace_with_linear: a linear layer in place of the {name} is a layer kind the arena does not size"),
                ));
            }
        }
        let mut block = Block::default();
        if flag(attention, "no_op") {
            kinds.push(LayerKind::Mlp);
        } else {
            let group = attention
                .get("n_heads_in_group")
                .and_then(Value::as_u64)
                .filter(|&g| g > 0 && heads.is_multiple_of(g as usize))
                .ok_or_else(|| {
                    bad(
                        i,
                        format!(
                            "attention.n_heads_in_group must divide num_attention_heads {heads}"
                        ),
                    )
                })?;
            block.kv_heads = heads / group as usize;
            kv_heads = kv_heads.max(block.kv_heads);
            kinds.push(LayerKind::Attention);
        }
        if !flag(ffn, "no_op") {
            let width = match (
                ffn.get("ffn_mult").and_then(Value::as_f64),
                ffn.get("intermediate_size").and_then(Value::as_u64),
            ) {
                (Some(mult), _) if mult > 0.0 && mult.is_finite() => ffn_mult_width(mult, hidden),
                (_, Some(width)) if width > 0 => width as usize,
                _ => {
                    return Err(bad(
                        i,
                        "ffn has neither a positive ffn_mult nor an intermediate_size".into(),
                    ))
                }
            };
            if width > MAX_DIM {
                return Err(bad(i, format!("an FFN of width {width} is past {MAX_DIM}")));
            }
            block.ffn_width = width;
            ffn_width = ffn_width.max(width);
        }
        widths.push(block);
    }
    Ok(Blocks {
        kinds,
        blocks: widths,
        kv_heads,
        ffn_width,
    })
}

#[cfg(test)]
mod tests {
    use super::ffn_mult_width;

    /// NVIDIA's formula on Llama-3.3-Nemotron-Super-49B's hidden size, worked by hand:
    /// 2 · 5.25 · 8192 / 3 = 28672 exactly; 2 · 0.5 · 8192 / 3 = 2730.67 → 2730 → 2816.
    #[test]
    fn ffn_widths_are_truncated_then_rounded_up_to_256() {
        assert_eq!(ffn_mult_width(5.25, 8192), 28672);
        assert_eq!(ffn_mult_width(2.625, 8192), 14336);
        assert_eq!(ffn_mult_width(3.28125, 8192), 17920);
        assert_eq!(ffn_mult_width(1.3125, 8192), 7168);
        assert_eq!(ffn_mult_width(1.0, 8192), 5632);
        assert_eq!(ffn_mult_width(0.5, 8192), 2816);
    }
}
