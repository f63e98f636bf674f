//! What a matrix's place holds after its elements: the scale tensors stored beside it, by the
//! format its elements and scales show, in one order for every format — the block or channel
//! scales first, then the per-tensor scalars (`weight_scale`, `weight_scale_2`, `input_scale`),
//! then zeros up to the place's bytes where the format's planned bytes bound those scalars
//! (`WeightFormat`'s 24 bytes a matrix). The names are those vLLM's quantization methods
//! register and load: `weight_scale_inv` (block FP8, `Fp8LinearMethod`), `weight_scale` and
//! `input_scale` (ModelOpt FP8, `ModelOptFp8LinearMethod`; per channel,
//! `ModelOptFp8PcPtLinearMethod`), `weight_scale`, `weight_scale_2` and `input_scale`
//! (NVFP4, `ModelOptNvFp4LinearMethod`), and MXFP8's E8M0 `weight_scale`.

use super::files::StoredTensor;
use super::table::Share;
use crate::config::{WeightFormat, WeightFormats};
use std::collections::BTreeMap;

/// Most bytes of per-tensor scalars a place may hold beyond its stored scales (the plan's
/// bound for a matrix's scalar scales, `SCALE_BYTES_A_MATRIX` in arena-config).
pub const SCALAR_BOUND: usize = 24;

/// Why a matrix cannot be placed.
pub enum Issue {
    /// Its elements' dtype, or the dtype and scales together, are no format loaded here.
    Dtype { stored: String, expected: String },
    /// A scale tensor at the wrong shape or dtype.
    Scale {
        tensor: String,
        stored: Vec<usize>,
        expected: Vec<usize>,
    },
    /// A share its scales cannot follow.
    Cut(String),
}

/// The tensors after a matrix's elements, each with its share, and the zeros its place may
/// hold after them (0: its bytes are exact).
pub struct Scales<'a> {
    pub parts: Vec<(String, &'a StoredTensor, Share)>,
    pub tail: usize,
}

/// The 16-bit dtypes a 16-bit place (or a matrix of 16-bit elements) takes.
pub(super) fn sixteen_bit(dtype: &str) -> bool {
    dtype == "BF16" || dtype == "F16"
}

/// A block or channel scale tensor: its name, its entry and the shape its matrix asks of it.
type Block<'a> = (String, &'a StoredTensor, Vec<usize>);

/// The scales stored beside `name` (`<stem>.weight`) whose share is `share`.
pub fn scales<'a>(
    name: &str,
    t: &StoredTensor,
    share: Share,
    stored: &'a BTreeMap<String, StoredTensor>,
    formats: &WeightFormats,
) -> Result<Scales<'a>, Issue> {
    let stem = name.strip_suffix(".weight").unwrap_or(name);
    let get = |suffix: &str| {
        let n = format!("{stem}.{suffix}");
        stored.get_key_value(&n).map(|(k, v)| (k.clone(), v))
    };
    let all = [
        formats.attention,
        formats.attention_out,
        formats.dense_ffn,
        formats.experts,
        formats.shared_experts,
        formats.other,
    ];
    let scalar =
        |(n, s): (String, &'a StoredTensor)| -> Result<(String, &'a StoredTensor, Share), Issue> {
            if s.dtype != "F32" || s.elements() > 3 {
                return Err(Issue::Scale {
                    tensor: n,
                    stored: s.shape.clone(),
                    expected: vec![1],
                });
            }
            Ok((n, s, whole(s)))
        };
    let d = t.dtype.as_str();
    let (block, scalars): (Option<Block>, Vec<&str>) =
        match (get("weight_scale_inv"), get("weight_scale")) {
            (None, None) if sixteen_bit(d) => {
                return Ok(Scales {
                    parts: Vec::new(),
                    tail: 0,
                })
            }
            // Block FP8: F32 scales a `rows × cols` block.
            (Some((n, s)), None) if d == "F8_E4M3" => {
                let (r, c) = all
                    .iter()
                    .find_map(|f| match *f {
                        WeightFormat::Fp8Block { rows, cols } => Some((rows, cols)),
                        _ => None,
                    })
                    .ok_or_else(|| {
                        expected(d, "a block-FP8 format in the config (weight_block_size)")
                    })?;
                let e = match t.shape.as_slice() {
                    [o, i] => vec![o.div_ceil(r), i.div_ceil(c)],
                    _ => vec![],
                };
                (Some((n, s, e)), vec![])
            }
            (None, Some((n, s))) => match (d, s.dtype.as_str(), t.shape.as_slice()) {
                // NVFP4: two elements a byte, an E4M3 scale a group, then the global and input
                // scales.
                ("U8", "F8_E4M3", &[o, half]) => {
                    let g = all
                        .iter()
                        .find_map(|f| match *f {
                            WeightFormat::Nvfp4 { group } => Some(group),
                            _ => None,
                        })
                        .ok_or_else(|| expected(d, "an NVFP4 format in the config"))?;
                    (
                        Some((n, s, vec![o, (2 * half).div_ceil(g)])),
                        vec!["weight_scale_2", "input_scale"],
                    )
                }
                // FP8 per tensor (ModelOpt FP8): the weight's scalar, then the input's.
                ("F8_E4M3", "F32", _) if s.elements() <= 3 => {
                    return Ok(Scales {
                        parts: [Some((n, s)), get("input_scale")]
                            .into_iter()
                            .flatten()
                            .map(scalar)
                            .collect::<Result<_, _>>()?,
                        tail: SCALAR_BOUND,
                    });
                }
                // FP8 per channel: one F32 an output row, `[out]` or `[out, 1]`.
                ("F8_E4M3", "F32", &[o, _]) => {
                    let e = if s.shape.len() == 2 {
                        vec![o, 1]
                    } else {
                        vec![o]
                    };
                    (Some((n, s, e)), vec!["input_scale"])
                }
                // MXFP8: an E8M0 scale a block of 32 along the input.
                ("F8_E4M3", "U8" | "F8_E8M0", &[o, i]) => {
                    (Some((n, s, vec![o, i.div_ceil(32)])), vec![])
                }
                (d, sd, _) => {
                    return Err(expected(
                        &format!("{d} with a {sd} weight_scale"),
                        "BF16, F16, block FP8, FP8 per tensor or channel, NVFP4 or MXFP8",
                    ))
                }
            },
            _ => {
                return Err(expected(
                    d,
                    "BF16 or F16 alone, or a quantized format's elements with their scales",
                ))
            }
        };
    let mut parts = Vec::new();
    let mut tail = 0;
    if let Some((n, s, e)) = block {
        if s.shape != e {
            return Err(Issue::Scale {
                tensor: n,
                stored: s.shape.clone(),
                expected: e,
            });
        }
        let cut = scale_share(share, &t.shape, &s.shape).map_err(Issue::Cut)?;
        parts.push((n, s, cut));
    }
    for suffix in scalars {
        if let Some(found) = get(suffix) {
            parts.push(scalar(found)?);
        }
        tail = SCALAR_BOUND;
    }
    Ok(Scales { parts, tail })
}

fn expected(stored: &str, expected: &str) -> Issue {
    Issue::Dtype {
        stored: stored.to_string(),
        expected: expected.to_string(),
    }
}

/// All of a tensor.
fn whole(s: &StoredTensor) -> Share {
    Share {
        dim: 0,
        start: 0,
        len: s.shape.first().copied().unwrap_or(1),
        zero_rows: 0,
    }
}

/// A scale tensor's share where its matrix's is `share`: along the same dimension, in whole
/// blocks (a dimension the scales do not divide is theirs whole: a channel scale's columns).
fn scale_share(share: Share, weight: &[usize], scale: &[usize]) -> Result<Share, String> {
    let (we, se) = (
        weight[share.dim],
        scale.get(share.dim).copied().unwrap_or(1),
    );
    if se <= 1 && we > 1 {
        return Ok(Share {
            dim: 0,
            start: 0,
            len: scale.first().copied().unwrap_or(1),
            zero_rows: 0,
        });
    }
    let block = we.div_ceil(se);
    let to_end = share.start + share.len == we;
    if !share.start.is_multiple_of(block) || !(to_end || share.len.is_multiple_of(block)) {
        return Err(format!(
            "its share {}..{} of dimension {} is not in whole {block}-blocks of its scales",
            share.start,
            share.start + share.len,
            share.dim
        ));
    }
    Ok(Share {
        dim: share.dim,
        start: share.start / block,
        len: share.len.div_ceil(block),
        zero_rows: 0,
    })
}
