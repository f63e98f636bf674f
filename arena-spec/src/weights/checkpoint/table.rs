//! The name table: every checkpoint tensor the six weight arenas hold, from the names their
//! fields declare (`#[buffer(tensor = ...)]`), the family's renames and the config's layers
//! and experts — where each goes (arena, buffer, layer, expert, byte offset) and what it must
//! be (bytes, and for a 16-bit tensor its shape). Nothing here reads a file.

use super::CheckpointError;
use crate::config::ModelConfig;
use crate::weights::{
    AttentionWeights, CompressedAttentionWeights, FfnWeights, LatentAttentionWeights, MixerWeights,
    ModelWeights, WeightsSizes,
};
use crate::{LayerKind, Rank};
use arena_runtime::{Arena, BufferDecl};

/// One checkpoint tensor's place in the weight arenas.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TensorSlot {
    /// Its name in the checkpoint (the declared name, renamed as the family's checkpoints
    /// name it, its placeholders filled).
    pub name: String,
    /// The weight arena (`AttentionWeights`, ...) and its buffer (`q_proj`).
    pub arena: &'static str,
    pub buffer: &'static str,
    /// The model's layer (the config's index, the checkpoint's), for a per-layer buffer.
    pub layer: Option<usize>,
    /// The expert, for a tensor of one expert.
    pub expert: Option<usize>,
    /// Where it starts in its buffer, in bytes.
    pub offset: usize,
    /// The bytes its place holds: a matrix's elements and then its scales
    /// (`weight_scale_inv`) in its format, or a 16-bit tensor's elements.
    pub bytes: usize,
    /// The buffer's element type (`bf16`, `f32`; `u8` for a matrix in its format).
    pub dtype: &'static str,
    /// A 16-bit (or FP32) tensor's shape in its place: this rank's share (`None` for a matrix, whose
    /// buffer is bytes in its format: its share of the stored elements and scales must fill
    /// `bytes` exactly).
    pub shape: Option<Vec<usize>>,
    /// This rank's share of the stored tensor (`None`: all of it).
    pub cut: Option<Cut>,
    /// `(k, n)`: the place holds the `k`-th of `n` row blocks of a stored tensor the family
    /// fuses (`WeightRules::checkpoint_fused`: Phi-3's `qkv_proj`), `name` the fused one's.
    pub part: Option<(usize, usize)>,
    /// `(k, n)`: the `k`-th of `n` stored tensors laid back to back in one place, each as
    /// long as it is stored; until matched, `offset` is the place's, and `bytes` the whole
    /// place's on the first and 0 on the others.
    pub concat: Option<(usize, usize)>,
}

/// How a parallel rank's share of a stored tensor is cut (the field's `split`), as vLLM's
/// parallel layers cut theirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "cut", rename_all = "snake_case")]
pub enum Cut {
    /// `parts` equal shares along `dim`, this rank's the `index`-th: dim 0 for a
    /// column-parallel layer's output rows (`ColumnParallelLinear`: q, gate, up), dim 1 for a
    /// row-parallel layer's input columns (`RowParallelLinear`: o, down). An expert's share
    /// is of the expert tensor-parallel group (`tp / ep`).
    Even {
        dim: usize,
        parts: usize,
        index: usize,
    },
    /// k or v (`QKVParallelLinear`): `head_dim` rows a head, the heads split over `tp`
    /// ranks, or, with fewer heads than ranks, head `index / (tp / heads)` on rank `index`.
    KvHeads {
        head_dim: usize,
        tp: usize,
        index: usize,
    },
    /// The vocabulary (`VocabParallelEmbedding`): `rows` rows from `start`, the padded
    /// vocabulary's share; rows past the stored ones are zeros.
    Vocab { start: usize, rows: usize },
}

/// A stored tensor's share: `len` of its extent along `dim` from `start`, then `zero_rows`
/// rows of zeros (the vocabulary's padding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Share {
    pub dim: usize,
    pub start: usize,
    pub len: usize,
    pub zero_rows: usize,
}

impl Cut {
    /// This rank's share of a tensor stored at `shape`, or why there is none.
    pub fn share(cut: Option<&Cut>, shape: &[usize]) -> Result<Share, String> {
        let extent = |dim: usize| {
            shape
                .get(dim)
                .copied()
                .ok_or_else(|| format!("shape {shape:?} has no dimension {dim} to cut"))
        };
        match cut {
            None => Ok(Share {
                dim: 0,
                start: 0,
                len: shape.first().copied().unwrap_or(1),
                zero_rows: 0,
            }),
            Some(&Cut::Even { dim, parts, index }) => {
                let n = extent(dim)?;
                if !n.is_multiple_of(parts) {
                    return Err(format!(
                        "dimension {dim} of {shape:?} does not split into {parts}"
                    ));
                }
                Ok(Share {
                    dim,
                    start: index * n / parts,
                    len: n / parts,
                    zero_rows: 0,
                })
            }
            Some(&Cut::KvHeads {
                head_dim,
                tp,
                index,
            }) => {
                let n = extent(0)?;
                let heads = n / head_dim.max(1);
                if heads == 0 || !n.is_multiple_of(head_dim) {
                    return Err(format!("{n} rows are not heads of {head_dim}"));
                }
                let (start, len) = if heads >= tp {
                    if !heads.is_multiple_of(tp) {
                        return Err(format!("{heads} kv heads do not split over tp {tp}"));
                    }
                    (index * n / tp, n / tp)
                } else {
                    if !tp.is_multiple_of(heads) {
                        return Err(format!("{heads} kv heads do not replicate over tp {tp}"));
                    }
                    (index / (tp / heads) * head_dim, head_dim)
                };
                Ok(Share {
                    dim: 0,
                    start,
                    len,
                    zero_rows: 0,
                })
            }
            Some(&Cut::Vocab { start, rows }) => {
                let n = extent(0)?;
                let len = n.saturating_sub(start).min(rows);
                Ok(Share {
                    dim: 0,
                    start,
                    len,
                    zero_rows: rows - len,
                })
            }
        }
    }
}

impl TensorSlot {
    /// `AttentionWeights.q_proj[layer 3]`: how errors name the place.
    pub fn place(&self) -> String {
        let mut out = format!("{}.{}", self.arena, self.buffer);
        if let Some(l) = self.layer {
            out.push_str(&format!(" layer {l}"));
        }
        if let Some(e) = self.expert {
            out.push_str(&format!(" expert {e}"));
        }
        out
    }
}

/// Every tensor `sizes` holds for `config` (a whole model; a pipeline stage's config holds
/// its own layers), by the names the fields declare. Refused where the family's names are
/// not declared (`WeightRules::checkpoint_names`), for a tensor-parallel or expert-parallel
/// rank (each rank's share is not split here yet), or where a buffer with bytes declares
/// no name, or names that do not fit its shape.
pub fn tensor_table(
    config: &ModelConfig,
    sizes: &WeightsSizes,
) -> Result<Vec<TensorSlot>, CheckpointError> {
    let model = config.source.to_string();
    let rules = config.family.rules().weights;
    let renames = rules.and_then(|w| w.checkpoint_names).ok_or_else(|| {
        CheckpointError::NamesNotDeclared {
            model: model.clone(),
            family: config.family,
        }
    })?;
    let fused = rules.map_or(&[][..], |w| w.checkpoint_fused);
    let groups = LayerGroups::of(config);
    let mut table = Vec::new();
    let mut cx = Expand {
        config,
        rank: config.shard.as_ref().map(|s| &s.rank),
        renames,
        fused,
        groups: &groups,
        table: &mut table,
    };
    cx.arena::<ModelWeights>(&sizes.model)?;
    cx.arena::<AttentionWeights>(&sizes.attention)?;
    cx.arena::<LatentAttentionWeights>(&sizes.latent)?;
    cx.arena::<CompressedAttentionWeights>(&sizes.compressed)?;
    cx.arena::<MixerWeights>(&sizes.mixers)?;
    cx.arena::<FfnWeights>(&sizes.ffn)?;
    Ok(table)
}

/// The prefixes a checkpoint's text model has, for the declared names' `model.`: a text
/// model's own, transformers 5's multimodal classes' `model.language_model.`, and the 4.x
/// classes' `language_model.model.` (vLLM's per-model `WeightsMapper`s map the same ones).
pub const TEXT_PREFIXES: [&str; 3] = ["model.", "model.language_model.", "language_model.model."];

/// The table's names as a checkpoint that stores names `stored` writes them: `model.` replaced
/// by the first of [`TEXT_PREFIXES`] under which it stores its text model's embedding or final
/// norm, and the head under `language_model.` where it stores it there (a 4.x multimodal
/// class's). The names are kept where none is found (the missing tensors are then named as
/// declared).
pub fn with_stored_names(table: &mut [TensorSlot], stored: impl Fn(&str) -> bool) {
    let prefix = TEXT_PREFIXES
        .into_iter()
        .find(|p| stored(&format!("{p}embed_tokens.weight")) || stored(&format!("{p}norm.weight")))
        .unwrap_or("model.");
    let head = match stored("lm_head.weight") || !stored("language_model.lm_head.weight") {
        true => "lm_head.",
        false => "language_model.lm_head.",
    };
    for slot in table {
        if let Some(rest) = slot.name.strip_prefix("model.") {
            slot.name = format!("{prefix}{rest}");
        } else if let Some(rest) = slot.name.strip_prefix("lm_head.") {
            slot.name = format!("{head}{rest}");
        }
    }
}

/// The model layers of each group a declared name may place (`{layer}`,
/// `{attention_layer}`, `{dense_layer}`, `{moe_layer}`, `{gdn_layer}`), as the config's
/// indices.
struct LayerGroups {
    layer: Vec<usize>,
    attention_layer: Vec<usize>,
    dense_layer: Vec<usize>,
    moe_layer: Vec<usize>,
    gdn_layer: Vec<usize>,
}

impl LayerGroups {
    fn of(c: &ModelConfig) -> Self {
        let first = c.shard.as_ref().map_or(0, |s| s.layers.start);
        let kinds = c.layer_kinds();
        let ffn_every_layer = c.family.rules().weights.is_none_or(|w| w.ffn_every_layer);
        let pick = |keep: &dyn Fn(usize, LayerKind) -> bool| -> Vec<usize> {
            kinds
                .iter()
                .enumerate()
                .filter(|&(i, &k)| keep(i, k))
                .map(|(i, _)| first + i)
                .collect()
        };
        let dense_ffn = |i: usize| c.num_experts == 0 || c.dense_ffn_layers.get(i) == Some(&true);
        LayerGroups {
            layer: pick(&|_, _| true),
            attention_layer: pick(&|_, k| k == LayerKind::Attention),
            gdn_layer: pick(&|_, k| k == LayerKind::GatedDeltaNet),
            dense_layer: pick(&|i, k| match ffn_every_layer {
                true => dense_ffn(i),
                false => k == LayerKind::Mlp,
            }),
            moe_layer: pick(&|i, k| match ffn_every_layer {
                true => !dense_ffn(i),
                false => k == LayerKind::Moe,
            }),
        }
    }

    fn get(&self, name: &str) -> Option<&[usize]> {
        match name {
            "layer" => Some(&self.layer),
            "attention_layer" => Some(&self.attention_layer),
            "dense_layer" => Some(&self.dense_layer),
            "moe_layer" => Some(&self.moe_layer),
            "gdn_layer" => Some(&self.gdn_layer),
            _ => None,
        }
    }
}

/// The one layer group a declared name places (`None` for a name of no layer), or the
/// placeholder that names none.
pub(super) fn group_of(name: &str) -> Option<&str> {
    placeholders(name).find(|p| *p != "expert")
}

fn placeholders(name: &str) -> impl Iterator<Item = &str> {
    name.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(inner, _)| inner))
}

struct Expand<'a> {
    config: &'a ModelConfig,
    /// The rank, for a config of one (`ModelConfig::shard`).
    rank: Option<&'a Rank>,
    renames: &'static [(&'static str, &'static str)],
    fused: &'static [(&'static str, &'static [&'static str])],
    groups: &'a LayerGroups,
    table: &'a mut Vec<TensorSlot>,
}

impl Expand<'_> {
    /// The cut of a buffer's tensors on this rank (`None`: whole; a single GPU, or a
    /// replicated tensor).
    fn cut(
        &self,
        decl: &BufferDecl,
        by_expert: bool,
        shape: Option<&[usize]>,
    ) -> Result<Option<Cut>, String> {
        let Some(rank) = self.rank else {
            return Ok(match (decl.split, shape) {
                // One GPU holds the whole vocabulary, its padding rows as they are sized.
                (Some("vocab"), Some(&[rows, ..])) => Some(Cut::Vocab { start: 0, rows }),
                _ => None,
            });
        };
        let tp = rank.layout.tp;
        let (parts, index) = match by_expert {
            true => (rank.layout.moe_tp(), rank.tp_rank() % rank.layout.moe_tp()),
            false => (tp, rank.tp_rank()),
        };
        Ok(match decl.split {
            None => None,
            Some(_) if parts == 1 && decl.split != Some("vocab") => None,
            Some("out") => Some(Cut::Even {
                dim: 0,
                parts,
                index,
            }),
            Some("in") => Some(Cut::Even {
                dim: 1,
                parts,
                index,
            }),
            Some("kv_out") => Some(Cut::KvHeads {
                head_dim: self.config.head_dim(),
                tp,
                index,
            }),
            Some("vocab") => match shape {
                Some(&[rows, ..]) => Some(Cut::Vocab {
                    start: index * rows,
                    rows,
                }),
                _ => return Err("a vocabulary split needs a shape of rows".into()),
            },
            Some(other) => {
                return Err(format!(
                    "`split = {other}` is no cut the loader knows (out, in, kv_out, vocab)"
                ))
            }
        })
    }

    fn arena<A: Arena>(&mut self, sizes: &A::Sizes) -> Result<(), CheckpointError> {
        let bytes = A::byte_sizes(sizes);
        for (i, decl) in A::BUFFERS.iter().enumerate() {
            let total = bytes.get(i).copied().unwrap_or(0);
            if total == 0 {
                continue;
            }
            self.buffer::<A>(decl, total, A::shape(sizes, i))?;
        }
        Ok(())
    }

    fn buffer<A: Arena>(
        &mut self,
        decl: &'static BufferDecl,
        total: usize,
        dims: &[usize],
    ) -> Result<(), CheckpointError> {
        let misfit = |why: String| CheckpointError::NamesMisfit {
            model: self.config.source.to_string(),
            buffer: format!("{}.{}", A::NAME, decl.name),
            why,
        };
        if decl.tensors.is_empty() {
            return Err(CheckpointError::BufferUnnamed {
                model: self.config.source.to_string(),
                buffer: format!("{}.{}", A::NAME, decl.name),
                bytes: total,
            });
        }
        let (slots, slot_dims) = match decl.per_layer {
            true => (
                dims.first().copied().unwrap_or(0),
                dims.get(1..).unwrap_or(&[]),
            ),
            false => (1, dims),
        };
        // One name a row: a buffer of fewer rows than names holds the first names'.
        // Several names: one a row where the place has rows (a layer's norms, an expert
        // block's gate and up; a buffer of fewer rows holds the first names'), else back to
        // back in a flat place (a matrix of two stored parts: Qwen3.5's `in_proj_qkv` and
        // `in_proj_z`), each as long as its stored tensor, laid out when matched.
        let named = decl.tensors.len();
        let concat = named > 1 && slot_dims.len() <= 1;
        let (names, row_dims) = match (named, slot_dims.first()) {
            (1, _) => (decl.tensors, slot_dims),
            _ if concat => (decl.tensors, slot_dims),
            (_, Some(&rows)) if rows <= named => (&decl.tensors[..rows], &slot_dims[1..]),
            _ => {
                return Err(misfit(format!(
                "it names {named} tensors a layer, one a row, but holds {} rows (shape {dims:?})",
                slot_dims.first().copied().unwrap_or(1)
            )))
            }
        };
        if concat && self.rank.is_some_and(|r| r.layout.tp > 1) {
            return Err(misfit(
                "its tensors lie back to back in one place, which is not cut for a \
                 tensor-parallel rank yet"
                    .into(),
            ));
        }
        let rows = if concat { 1 } else { names.len() };
        let slot_bytes = total / slots.max(1);
        let row_bytes = slot_bytes / rows;
        let experts = self.config.local_experts();
        for (row, declared) in names.iter().enumerate() {
            let layers: Vec<Option<usize>> = match group_of(declared) {
                Some(group) => {
                    let ids = self.groups.get(group).ok_or_else(|| {
                        misfit(format!("`{declared}` names `{{{group}}}`, no layer group of the weights (layer, attention_layer, dense_layer, moe_layer, gdn_layer)"))
                    })?;
                    if ids.len() != slots {
                        return Err(misfit(format!(
                            "it holds {slots} layers and `{{{group}}}` is {} layers of this config",
                            ids.len()
                        )));
                    }
                    ids.iter().copied().map(Some).collect()
                }
                None if slots == 1 => vec![None],
                None => {
                    return Err(misfit(format!(
                        "it holds {slots} layers and `{declared}` names no layer"
                    )))
                }
            };
            let by_expert = declared.contains("{expert}");
            let (count, each) = match by_expert {
                true if experts > 0 && row_bytes.is_multiple_of(experts) => {
                    (experts, row_bytes / experts)
                }
                true => {
                    return Err(misfit(format!(
                        "a row of {row_bytes} bytes does not split into {experts} experts"
                    )))
                }
                false => (1, row_bytes),
            };
            let renamed = self
                .renames
                .iter()
                .fold(declared.to_string(), |n, (from, to)| n.replace(from, to));
            // A tensor the family stores fused: the fused name, and which block is this one.
            let (renamed, part) = self
                .fused
                .iter()
                .find_map(|(stored, parts)| {
                    let k = parts.iter().position(|p| renamed.contains(p))?;
                    Some((renamed.replace(parts[k], stored), Some((k, parts.len()))))
                })
                .unwrap_or((renamed, None));
            let shape = (decl.dtype != "u8").then(|| match by_expert {
                true => row_dims.get(1..).unwrap_or(&[]).to_vec(),
                false => row_dims.to_vec(),
            });
            let cut = self
                .cut(decl, by_expert, shape.as_deref())
                .map_err(misfit)?;
            let first_expert = self.rank.map_or(0, |r| r.ep_rank() * experts);
            for (slot, layer) in layers.iter().enumerate() {
                for e in 0..count {
                    let mut name = renamed.replace("{expert}", &(first_expert + e).to_string());
                    if let (Some(group), Some(l)) = (group_of(declared), layer) {
                        name = name.replace(&format!("{{{group}}}"), &l.to_string());
                    }
                    self.table.push(TensorSlot {
                        name,
                        arena: A::NAME,
                        buffer: decl.name,
                        dtype: decl.dtype,
                        layer: *layer,
                        expert: by_expert.then_some(first_expert + e),
                        offset: slot * slot_bytes + (row % rows) * row_bytes + e * each,
                        // A place of several stored tensors: all of it on the first until
                        // matched (`TensorSlot::concat`).
                        bytes: if concat && row > 0 { 0 } else { each },
                        shape: shape.clone(),
                        cut,
                        concat: concat.then_some((row, names.len())),
                        part,
                    });
                }
            }
        }
        Ok(())
    }
}
