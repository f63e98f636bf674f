//! Matching a checkpoint's tensors to the name table, before any byte is copied: every
//! declared tensor found with its dtype, shape and bytes, every stored tensor claimed by one
//! place or skipped with its reason, and every problem named with its tensor, file and place.

use super::files::StoredTensor;
use super::matrix::{self, sixteen_bit, Issue};
use super::table::{Cut, Share, TensorSlot};
use crate::config::{ModelConfig, WeightFormats};
use std::collections::{BTreeMap, BTreeSet};

/// One stored tensor's share copied into a place: at `offset` bytes into the place, `bytes`
/// long, from `share` of the stored tensor (`rows` rows of `row_bytes` each in the file,
/// of which each copies `take` bytes from `skip` into it: all of each row but for a cut
/// along dimension 1).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Part {
    pub tensor: String,
    pub offset: usize,
    pub bytes: usize,
    pub share: Share,
    /// Where its share's bytes lie in the stored tensor's: `rows` runs of `take` bytes, the
    /// first `skip` bytes in, one every `stride` bytes.
    pub rows: usize,
    pub skip: usize,
    pub take: usize,
    pub stride: usize,
}

impl Part {
    /// The share `share` of stored tensor `t`, at `offset` in its place.
    fn of(name: &str, t: &StoredTensor, share: Share, offset: usize) -> Part {
        let outer: usize = t.shape.get(..share.dim).unwrap_or(&[]).iter().product();
        let along = t.shape.get(share.dim).copied().unwrap_or(1).max(1);
        let stride = t.bytes() / outer.max(1);
        let unit = stride / along;
        let (skip, take) = (share.start * unit, share.len * unit);
        Part {
            tensor: name.to_string(),
            offset,
            bytes: outer * take,
            share,
            rows: outer,
            skip,
            take,
            stride,
        }
    }

    /// Its share's bytes in `stored` (the stored tensor's bytes), in the order they fill its
    /// place: one run where the share is contiguous, else one run a row.
    pub fn runs<'b>(&self, stored: &'b [u8]) -> impl Iterator<Item = &'b [u8]> {
        let (stride, skip) = (self.stride, self.skip);
        let (count, len) = match self.rows <= 1 || self.take == stride {
            true => (1, self.bytes),
            false => (self.rows, self.take),
        };
        (0..count).map(move |r| &stored[r * stride + skip..][..len])
    }
}

/// A place of the name table with the stored tensors that fill it (a matrix and its scales;
/// a 16-bit tensor alone), and the bytes after them the loader sets to zero (the
/// vocabulary's padding rows).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Placed {
    pub slot: TensorSlot,
    pub parts: Vec<Part>,
    pub zero_fill: usize,
}

/// A stored tensor the weight arenas do not hold, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    pub tensor: String,
    pub bytes: usize,
    pub reason: &'static str,
}

/// What stops a checkpoint from loading.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, thiserror::Error)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum Problem {
    /// A declared tensor the checkpoint lacks.
    #[error("`{tensor}` is missing (it fills {place})")]
    Missing { tensor: String, place: String },
    /// A stored tensor no place claims and no rule skips.
    #[error("`{tensor}` ({file}) is no tensor of the declared weights and no rule skips it")]
    Unexpected { tensor: String, file: String },
    /// Stored in another dtype than its place holds.
    #[error("`{tensor}` ({file}) is {stored}; {place} holds {expected}")]
    Dtype {
        tensor: String,
        file: String,
        stored: String,
        expected: String,
        place: String,
    },
    /// Stored at another shape than its place holds.
    #[error("`{tensor}` ({file}) has shape {stored:?}; {place} holds {expected:?}")]
    Shape {
        tensor: String,
        file: String,
        stored: Vec<usize>,
        expected: Vec<usize>,
        place: String,
    },
    /// A share this rank cannot cut from the stored tensor.
    #[error("`{tensor}` ({file}) cannot be cut for {place}: {why}")]
    Cut {
        tensor: String,
        file: String,
        why: String,
        place: String,
    },
    /// A matrix whose stored bytes (with its scales) are not its place's.
    #[error("`{tensor}` ({file}) is {stored} bytes with its scales; {place} holds {expected}")]
    Bytes {
        tensor: String,
        file: String,
        stored: usize,
        expected: usize,
        place: String,
    },
}

/// A checkpoint matched to the weight arenas: what [`super::load`] copies, and what
/// `arena weights check` prints.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LoadPlan {
    pub placed: Vec<Placed>,
    pub skipped: Vec<Skipped>,
    pub problems: Vec<Problem>,
    /// Bytes of the stored tensors placed.
    pub stored_bytes: u64,
    /// Bytes of the places (`WeightsSizes::total_bytes` where every place is named).
    pub planned_bytes: u64,
}

/// Why a stored tensor is not one the weight arenas hold, by its name alone (`None`: it
/// should be one): a vision or audio tower's, a multi-token-prediction layer's, RoPE's
/// stored `inv_freq`, another pipeline stage's layer. The reasons are [`Skipped::reason`].
pub fn skip_reason(name: &str, c: &ModelConfig) -> Option<&'static str> {
    const TOWERS: [&str; 10] = [
        "visual.",
        "model.visual.",
        "vision_tower.",
        "model.vision_tower.",
        "vision_model.",
        "model.vision_model.",
        "multi_modal_projector.",
        "model.multi_modal_projector.",
        "audio_tower.",
        "model.audio_tower.",
    ];
    if TOWERS.iter().any(|p| name.starts_with(p)) {
        return Some("a vision or audio tower's (the text model's weights are declared)");
    }
    if name.starts_with("mtp.") || name.starts_with("model.mtp.") {
        return Some("a multi-token-prediction layer's (loaded only to draft)");
    }
    if name.ends_with(".rotary_emb.inv_freq") {
        return Some("RoPE's inverse frequencies, a buffer the model recomputes from its config");
    }
    let layer = super::table::TEXT_PREFIXES
        .iter()
        .find_map(|p| name.strip_prefix(p)?.strip_prefix("layers."))
        .and_then(|rest| rest.split('.').next())
        .and_then(|i| i.parse::<usize>().ok());
    if let (Some(shard), Some(e)) = (&c.shard, expert_of(name)) {
        let first = shard.rank.ep_rank() * shard.local_experts;
        if shard.rank.layout.ep > 1 && !(first..first + shard.local_experts).contains(&e) {
            return Some("another expert-parallel rank's expert");
        }
    }
    if let Some(i) = layer {
        if i >= c.num_hidden_layers {
            return Some("a layer past num_hidden_layers (a multi-token-prediction layer)");
        }
        if let Some(s) = &c.shard {
            if !s.layers.contains(&i) {
                return Some("another pipeline stage's layer");
            }
        }
    }
    None
}

/// The tensors laid back to back in one place (`TensorSlot::concat`) each at its offset and
/// length there: its stored bytes with its scales, the last taking what the others leave, so
/// a part stored at another length shows as the last one's bytes problem. A place's parts
/// are found by the place (its buffer and offset, which they share until laid out), not by
/// their order in the table, which lists a per-layer buffer's parts name by name, every
/// layer's first part before any second one.
fn lay_out_back_to_back(
    table: &mut [TensorSlot],
    stored: &BTreeMap<String, StoredTensor>,
    formats: &WeightFormats,
) {
    // Each place (arena, buffer, offset) with its parts' (k, index in the table).
    type Place = (&'static str, &'static str, usize);
    let mut places: BTreeMap<Place, Vec<(usize, usize)>> = BTreeMap::new();
    for (i, slot) in table.iter().enumerate() {
        if let Some((k, _)) = slot.concat {
            let place = (slot.arena, slot.buffer, slot.offset);
            places.entry(place).or_default().push((k, i));
        }
    }
    for mut parts in places.into_values() {
        parts.sort_unstable();
        let first = parts[0].1;
        let (start, region) = (table[first].offset, table[first].bytes);
        let mut at = 0;
        for (n, &(_, i)) in parts.iter().enumerate() {
            let slot = &mut table[i];
            let bytes = match n + 1 == parts.len() {
                true => region.saturating_sub(at),
                false => stored.get(&slot.name).map_or(0, |t| {
                    let whole = Cut::share(None, &t.shape).ok();
                    let scales =
                        whole.and_then(|w| matrix::scales(&slot.name, t, w, stored, formats).ok());
                    t.bytes()
                        + scales.map_or(0, |s| s.parts.iter().map(|(_, s, _)| s.bytes()).sum())
                }),
            };
            slot.offset = start + at;
            slot.bytes = bytes;
            at += bytes;
        }
    }
}

/// The share of block `k` of `n` of a fused stored tensor `t` (`[rows, cols]`, 16-bit) whose
/// place is `slot`: the first block as many rows as its place holds (all ranks' together),
/// the others the rest in equal parts; then this rank's share of the block.
fn fused_share(
    slot: &TensorSlot,
    (k, n): (usize, usize),
    t: &StoredTensor,
    first: Option<&TensorSlot>,
) -> Result<Share, String> {
    let (&[rows, cols], true) = (t.shape.as_slice(), sixteen_bit(&t.dtype)) else {
        return Err(format!(
            "a fused {} tensor of shape {:?} is split into its blocks only as a 16-bit matrix",
            t.dtype, t.shape
        ));
    };
    let first = first.ok_or("its first block has no place")?;
    let ranks = match first.cut {
        Some(Cut::Even { dim: 0, parts, .. }) => parts,
        _ => 1,
    };
    let first_rows = first.bytes / (cols * 2).max(1) * ranks;
    let rest = rows
        .checked_sub(first_rows)
        .filter(|r| n > 1 && r.is_multiple_of(n - 1));
    let Some(rest) = rest.map(|r| r / (n - 1)) else {
        return Err(format!(
            "its {rows} rows do not leave its first block's {first_rows} and {} equal others",
            n - 1
        ));
    };
    let (start, len) = match k {
        0 => (0, first_rows),
        k => (first_rows + (k - 1) * rest, rest),
    };
    let share = Cut::share(slot.cut.as_ref(), &[len, cols])?;
    Ok(Share {
        start: start + share.start,
        ..share
    })
}

/// The expert a name's `.experts.<e>.` names.
fn expert_of(name: &str) -> Option<usize> {
    let (_, rest) = name.split_once(".experts.")?;
    rest.split('.').next()?.parse().ok()
}

impl LoadPlan {
    /// Matches `stored` (a checkpoint's tensors by name, with the file each lies in) to
    /// `table` at `formats` (the block size of FP8 scales).
    pub fn new(
        config: &ModelConfig,
        table: &[TensorSlot],
        stored: &BTreeMap<String, StoredTensor>,
        files: &[std::path::PathBuf],
        formats: &WeightFormats,
    ) -> LoadPlan {
        let file_of = |t: &StoredTensor| {
            files
                .get(t.file)
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let stored_file = |n: &str| stored.get(n).map(file_of).unwrap_or_default();
        let mut claimed: BTreeSet<String> = BTreeSet::new();
        let mut plan = LoadPlan {
            placed: Vec::new(),
            skipped: Vec::new(),
            problems: Vec::new(),
            stored_bytes: 0,
            planned_bytes: 0,
        };
        let mut table = table.to_vec();
        super::table::with_stored_names(&mut table, |n| stored.contains_key(n));
        lay_out_back_to_back(&mut table, stored, formats);
        // The first block's place of each fused stored tensor: its rows fix the others'.
        let firsts: BTreeMap<&str, &TensorSlot> = table
            .iter()
            .filter(|s| matches!(s.part, Some((0, _))))
            .map(|s| (s.name.as_str(), s))
            .collect();
        for slot in &table {
            plan.planned_bytes += slot.bytes as u64;
            let place = slot.place();
            let Some(t) = stored.get(&slot.name) else {
                plan.problems.push(Problem::Missing {
                    tensor: slot.name.clone(),
                    place,
                });
                continue;
            };
            claimed.insert(slot.name.clone());
            let file = file_of(t);
            let shape_problem = |stored: Vec<usize>, expected: Vec<usize>| Problem::Shape {
                tensor: slot.name.clone(),
                file: file.clone(),
                stored,
                expected,
                place: place.clone(),
            };
            let share = match slot.part {
                None => Cut::share(slot.cut.as_ref(), &t.shape),
                Some(part) => fused_share(slot, part, t, firsts.get(slot.name.as_str()).copied()),
            };
            let share = match share {
                Ok(share) => share,
                Err(why) => {
                    plan.problems.push(Problem::Cut {
                        tensor: slot.name.clone(),
                        file: file.clone(),
                        why,
                        place,
                    });
                    continue;
                }
            };
            let mut parts = vec![Part::of(&slot.name, t, share, 0)];
            let problem = match &slot.shape {
                // A 16-bit or FP32 tensor: its dtype, and its share's shape the place's.
                Some(shape) => {
                    let mut cut = t.shape.clone();
                    if let Some(d) = cut.get_mut(share.dim) {
                        *d = share.len + share.zero_rows;
                    }
                    let (fits, expected) = match slot.dtype {
                        "f32" => (t.dtype == "F32", "F32"),
                        _ => (sixteen_bit(&t.dtype), "BF16 or F16"),
                    };
                    if !fits {
                        Some(Problem::Dtype {
                            tensor: slot.name.clone(),
                            file: file.clone(),
                            stored: t.dtype.clone(),
                            expected: expected.into(),
                            place: place.clone(),
                        })
                    } else if &cut != shape {
                        Some(shape_problem(t.shape.clone(), shape.clone()))
                    } else {
                        None
                    }
                }
                // A matrix: its elements, then the scales its format stores beside it.
                None => match matrix::scales(&slot.name, t, share, stored, formats) {
                    Err(issue) => Some(match issue {
                        Issue::Dtype { stored, expected } => Problem::Dtype {
                            tensor: slot.name.clone(),
                            file: file.clone(),
                            stored,
                            expected,
                            place: place.clone(),
                        },
                        Issue::Scale {
                            tensor,
                            stored,
                            expected,
                        } => Problem::Shape {
                            file: stored_file(&tensor),
                            tensor,
                            stored,
                            expected,
                            place: place.clone(),
                        },
                        Issue::Cut(why) => Problem::Cut {
                            tensor: slot.name.clone(),
                            file: file.clone(),
                            why,
                            place: place.clone(),
                        },
                    }),
                    Ok(scales) => {
                        for (n, s, cut) in scales.parts {
                            claimed.insert(n.clone());
                            let at: usize = parts.iter().map(|p| p.bytes).sum();
                            parts.push(Part::of(&n, s, cut, at));
                        }
                        let total: usize = parts.iter().map(|p| p.bytes).sum();
                        let fits = total <= slot.bytes && slot.bytes - total <= scales.tail;
                        (!fits).then(|| Problem::Bytes {
                            tensor: slot.name.clone(),
                            file: file.clone(),
                            stored: total,
                            expected: slot.bytes,
                            place: place.clone(),
                        })
                    }
                },
            };
            match problem {
                Some(p) => plan.problems.push(p),
                None => {
                    let copied: usize = parts.iter().map(|p| p.bytes).sum();
                    plan.stored_bytes += copied as u64;
                    plan.placed.push(Placed {
                        slot: slot.clone(),
                        parts,
                        zero_fill: slot.bytes.saturating_sub(copied),
                    });
                }
            }
        }
        for (name, t) in stored {
            if claimed.contains(name) {
                continue;
            }
            match skip_reason(name, config) {
                Some(reason) => plan.skipped.push(Skipped {
                    tensor: name.clone(),
                    bytes: t.bytes(),
                    reason,
                }),
                None => plan.problems.push(Problem::Unexpected {
                    tensor: name.clone(),
                    file: file_of(t),
                }),
            }
        }
        plan
    }
}
