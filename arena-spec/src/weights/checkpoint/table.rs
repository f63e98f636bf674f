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
use crate::LayerKind;
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
    /// A 16-bit tensor's shape (`None` for a matrix, whose buffer is bytes in its format:
    /// its stored elements and scales must fill `bytes` exactly).
    pub shape: Option<Vec<usize>>,
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
    let renames = config
        .family
        .rules()
        .weights
        .and_then(|w| w.checkpoint_names)
        .ok_or_else(|| CheckpointError::NamesNotDeclared {
            model: model.clone(),
            family: config.family,
        })?;
    if let Some(shard) = &config.shard {
        let layout = &shard.rank.layout;
        if layout.tp > 1 || layout.ep > 1 {
            return Err(CheckpointError::RankSplit {
                model,
                tp: layout.tp,
                ep: layout.ep,
            });
        }
    }
    let groups = LayerGroups::of(config);
    let mut table = Vec::new();
    let mut cx = Expand {
        config,
        renames,
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

/// The model layers of each group a declared name may place (`{layer}`,
/// `{attention_layer}`, `{dense_layer}`, `{moe_layer}`), as the config's indices.
struct LayerGroups {
    layer: Vec<usize>,
    attention_layer: Vec<usize>,
    dense_layer: Vec<usize>,
    moe_layer: Vec<usize>,
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
    renames: &'static [(&'static str, &'static str)],
    groups: &'a LayerGroups,
    table: &'a mut Vec<TensorSlot>,
}

impl Expand<'_> {
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
        let rows = decl.tensors.len();
        let row_dims = match rows {
            1 => slot_dims,
            _ if slot_dims.first() == Some(&rows) => &slot_dims[1..],
            _ => {
                return Err(misfit(format!(
                "it names {rows} tensors a layer, one a row, but holds {} rows (shape {dims:?})",
                slot_dims.first().copied().unwrap_or(1)
            )))
            }
        };
        let slot_bytes = total / slots.max(1);
        let row_bytes = slot_bytes / rows;
        let experts = self.config.local_experts();
        for (row, declared) in decl.tensors.iter().enumerate() {
            let layers: Vec<Option<usize>> = match group_of(declared) {
                Some(group) => {
                    let ids = self.groups.get(group).ok_or_else(|| {
                        misfit(format!("`{declared}` names `{{{group}}}`, no layer group of the weights (layer, attention_layer, dense_layer, moe_layer)"))
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
                true if experts > 0 && row_bytes % experts == 0 => (experts, row_bytes / experts),
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
            let shape = (decl.dtype != "u8").then(|| match by_expert {
                true => row_dims.get(1..).unwrap_or(&[]).to_vec(),
                false => row_dims.to_vec(),
            });
            for (slot, layer) in layers.iter().enumerate() {
                for e in 0..count {
                    let mut name = renamed.replace("{expert}", &e.to_string());
                    if let (Some(group), Some(l)) = (group_of(declared), layer) {
                        name = name.replace(&format!("{{{group}}}"), &l.to_string());
                    }
                    self.table.push(TensorSlot {
                        name,
                        arena: A::NAME,
                        buffer: decl.name,
                        layer: *layer,
                        expert: by_expert.then_some(e),
                        offset: slot * slot_bytes + row * row_bytes + e * each,
                        bytes: each,
                        shape: shape.clone(),
                    });
                }
            }
        }
        Ok(())
    }
}
