//! Rank sizing: the config one GPU of a tensor-, expert- and pipeline-parallel deployment
//! sees, so that `BufferSizes::from_config` sizes that GPU's arena unchanged.
//!
//! The rules are vLLM's, file by file (and SGLang's where vLLM has no such split):
//!
//! | what | per rank | reference |
//! |---|---|---|
//! | attention q heads | `heads / tp` (must divide) | vLLM `layers/linear.py` `QKVParallelLinear` |
//! | kv heads | `kv / tp`; when `tp ≥ kv`, one head replicated (`tp` must be a multiple of `kv`) | same class: `num_kv_heads = 1`, `num_kv_head_replicas = tp / kv` |
//! | MLA | q heads `/ tp`; `q_lora_rank`, `kv_lora_rank`, rope dim unsharded | vLLM `models/deepseek_v2.py` (`num_local_heads`; `q_a_proj`, `kv_a_proj_with_mqa` replicated) |
//! | dense FFN width | `intermediate / tp` | `MergedColumnParallelLinear` / `RowParallelLinear` |
//! | shared expert width | `/ tp` (a dense MLP of the MoE block) | vLLM `deepseek_v2.py`, `qwen2_moe.py` shared experts |
//! | routed experts | `experts / ep` (must divide) | SGLang `server_args.py` (`moe_ep_size`) |
//! | expert width | `moe_intermediate / (tp / ep)`; `ep` must divide `tp` | SGLang `moe_tp_size = tp_size // ep_size`; vLLM's two cases are `ep = 1` and `ep = tp` (`FusedMoEParallelConfig`) |
//! | router | unsharded: every rank scores every expert | vLLM `ReplicatedLinear` gate |
//! | GDN heads | key and value heads `/ tp` | vLLM `models/qwen3_next.py` `Qwen3NextGatedDeltaNet` |
//! | Mamba-2 | heads `/ tp`; groups `/ tp`, or 1 replicated when `n_groups == 1` | vLLM `layers/mamba/mamba_mixer2.py` (`extra_groups_for_head_shards`) |
//! | pipeline stage | its own layers: `layers / pp`, the remainder on the stages before the last, from the second-to-last backwards | vLLM `distributed/utils.py` `get_pp_indices` |
//! | logits | the full vocabulary on the last stage (gathered), none elsewhere | vLLM `ParallelLMHead` + `LogitsProcessor._gather_logits` (all-gather); `PPMissingLayer` before the last stage |
//!
//! Kept whole on every rank, chosen here where the engines give no rule for this arena:
//! `hidden_size` (row-parallel outputs are all-reduced to full width), the QSA indexer
//! (replicated), the synthetic grouped O-projection, hyper-connections and LoRA ranks. Whole
//! is never smaller than a shard, so these can only over-reserve.
//!
//! Ranks are numbered as vLLM numbers them: `rank = stage · tp + tp_rank`. The expert-parallel
//! group lives inside the tensor-parallel group (no attention data parallelism), so the ranks
//! of one stage see the same `M` tokens; ranks of one stage have identical arenas.

use crate::config::ModelConfig;
use std::ops::Range;
use thiserror::Error;

/// How a deployment splits a model over GPUs: `tp · pp` GPUs in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ParallelLayout {
    /// Tensor-parallel degree: the GPUs of one pipeline stage.
    pub tp: usize,
    /// Expert-parallel degree, within the tensor-parallel group (divides `tp`).
    pub ep: usize,
    /// Pipeline-parallel degree: the stages.
    pub pp: usize,
}

/// One GPU of a [`ParallelLayout`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Rank {
    pub layout: ParallelLayout,
    /// `stage · tp + tp_rank`, from 0 to `world_size - 1`.
    pub index: usize,
}

/// What a sharded `ModelConfig` remembers of its rank.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RankShard {
    pub rank: Rank,
    /// The model's layers this rank's stage runs.
    pub layers: Range<usize>,
    /// Routed experts held here (`num_experts / ep`).
    pub local_experts: usize,
    /// Whether this stage computes the logits (the last stage).
    pub holds_lm_head: bool,
}

/// A layout or a split the engine would reject.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ShardError {
    #[error("--{name} is 0, but must be at least 1")]
    ZeroDegree { name: &'static str },
    #[error("ep = {ep} does not divide tp = {tp}: the expert-parallel group lives inside the tensor-parallel group (SGLang's rule)")]
    EpNotInTp { tp: usize, ep: usize },
    #[error("rank {index} is not a rank of tp = {tp}, pp = {pp} ({} ranks)", tp.saturating_mul(*pp))]
    NoSuchRank { index: usize, tp: usize, pp: usize },
    #[error("tp = {tp} × pp = {pp} is more than {max} GPUs")]
    TooManyRanks { tp: usize, pp: usize, max: usize },
    #[error("{model}: `{field}` = {value} is not divisible by {by_name} = {by}")]
    Indivisible {
        model: String,
        field: &'static str,
        value: usize,
        by_name: &'static str,
        by: usize,
    },
    #[error("{model}: `{field}` = {value} and {by_name} = {by}: neither divides the other, so the heads can be neither split nor replicated")]
    NotReplicable {
        model: String,
        field: &'static str,
        value: usize,
        by_name: &'static str,
        by: usize,
    },
    #[error("{model}: ep = {ep}, but the model has no routed experts")]
    NoExperts { model: String, ep: usize },
    #[error("{model}: pp = {pp} stages, but the model has only {layers} layers")]
    MoreStagesThanLayers {
        model: String,
        pp: usize,
        layers: usize,
    },
    #[error("{model}: already the config of rank {index}; shard the whole model's config")]
    AlreadySharded { model: String, index: usize },
}

impl ParallelLayout {
    /// The whole model on one GPU.
    pub const SINGLE: ParallelLayout = ParallelLayout {
        tp: 1,
        ep: 1,
        pp: 1,
    };

    /// The most GPUs a layout may have: far beyond any deployment, small enough that every
    /// rank can be listed. Chosen here.
    pub const MAX_WORLD_SIZE: usize = 1 << 16;

    /// A layout, checked: every degree at least 1, `ep` dividing `tp`, at most
    /// [`Self::MAX_WORLD_SIZE`] GPUs.
    pub fn new(tp: usize, ep: usize, pp: usize) -> Result<ParallelLayout, ShardError> {
        for (name, value) in [("tp", tp), ("ep", ep), ("pp", pp)] {
            if value == 0 {
                return Err(ShardError::ZeroDegree { name });
            }
        }
        if tp.checked_mul(pp).is_none_or(|n| n > Self::MAX_WORLD_SIZE) {
            return Err(ShardError::TooManyRanks {
                tp,
                pp,
                max: Self::MAX_WORLD_SIZE,
            });
        }
        if !tp.is_multiple_of(ep) {
            return Err(ShardError::EpNotInTp { tp, ep });
        }
        Ok(ParallelLayout { tp, ep, pp })
    }

    /// GPUs in all: `tp · pp`.
    pub fn world_size(&self) -> usize {
        self.tp * self.pp
    }

    /// The tensor-parallel degree of the expert widths: `tp / ep`.
    pub fn moe_tp(&self) -> usize {
        self.tp / self.ep
    }

    /// Rank `index`, if the layout has it.
    pub fn rank(&self, index: usize) -> Result<Rank, ShardError> {
        if index >= self.world_size() {
            return Err(ShardError::NoSuchRank {
                index,
                tp: self.tp,
                pp: self.pp,
            });
        }
        Ok(Rank {
            layout: *self,
            index,
        })
    }

    /// Every rank, in order.
    pub fn ranks(&self) -> impl Iterator<Item = Rank> + '_ {
        (0..self.world_size()).map(|index| Rank {
            layout: *self,
            index,
        })
    }

    /// The first rank of each pipeline stage: ranks of one stage have identical arenas.
    pub fn stage_leaders(&self) -> impl Iterator<Item = Rank> + '_ {
        (0..self.pp).map(|stage| Rank {
            layout: *self,
            index: stage * self.tp,
        })
    }

    /// The layers stage `stage` runs, as vLLM's `get_pp_indices` splits `layers`: `layers /
    /// pp` each, the remainder one each on the stages before the last, from the
    /// second-to-last backwards (the last also runs the final norm and the LM head).
    pub fn stage_layers(&self, layers: usize, stage: usize) -> Range<usize> {
        let pp = self.pp;
        let mut counts = vec![layers / pp; pp];
        for i in 2..layers % pp + 2 {
            counts[pp - i] += 1;
        }
        let start: usize = counts[..stage].iter().sum();
        start..start + counts[stage]
    }
}

impl Default for ParallelLayout {
    fn default() -> Self {
        Self::SINGLE
    }
}

impl std::fmt::Display for ParallelLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tp={} ep={} pp={}", self.tp, self.ep, self.pp)
    }
}

impl Rank {
    /// The pipeline stage, from 0.
    pub fn stage(&self) -> usize {
        self.index / self.layout.tp
    }

    /// The position in the stage's tensor-parallel group.
    pub fn tp_rank(&self) -> usize {
        self.index % self.layout.tp
    }

    /// The expert-parallel rank: which `1/ep` of the experts this rank holds.
    pub fn ep_rank(&self) -> usize {
        self.tp_rank() / self.layout.moe_tp()
    }
}

/// `value / by`, or the engine's refusal naming the field.
fn split(
    model: &str,
    field: &'static str,
    value: usize,
    by_name: &'static str,
    by: usize,
) -> Result<usize, ShardError> {
    if !value.is_multiple_of(by) {
        return Err(ShardError::Indivisible {
            model: model.to_string(),
            field,
            value,
            by_name,
            by,
        });
    }
    Ok(value / by)
}

/// Heads split over `tp`, or one replicated on every rank when there are no more heads than
/// ranks (vLLM's kv heads, and Mamba-2's single group).
fn split_or_replicate(
    model: &str,
    field: &'static str,
    heads: usize,
    tp: usize,
) -> Result<usize, ShardError> {
    if heads >= tp {
        return split(model, field, heads, "tp", tp);
    }
    if !tp.is_multiple_of(heads) {
        return Err(ShardError::NotReplicable {
            model: model.to_string(),
            field,
            value: heads,
            by_name: "tp",
            by: tp,
        });
    }
    Ok(1)
}

impl ModelConfig {
    /// The config rank `rank` sees: its heads, widths, experts and layers. Size its arena
    /// with the unchanged `BufferSizes::from_config`. A split the engine would refuse (heads
    /// not divisible by `tp`, experts not divisible by `ep`, more stages than layers) is an
    /// error naming the field and the numbers.
    pub fn shard(&self, rank: &Rank) -> Result<ModelConfig, ShardError> {
        let model: &str = &self.source;
        if let Some(shard) = &self.shard {
            return Err(ShardError::AlreadySharded {
                model: model.to_string(),
                index: shard.rank.index,
            });
        }
        // `Rank`'s fields are public: re-check what `ParallelLayout::new` and `rank` check.
        let layout = ParallelLayout::new(rank.layout.tp, rank.layout.ep, rank.layout.pp)?;
        layout.rank(rank.index)?;
        let (tp, ep) = (layout.tp, layout.ep);
        let mut c = self.clone();

        if self.num_attention_layers() > 0 && self.num_attention_heads > 0 {
            // The head size stays what the whole model's is (it may have come from
            // `hidden / heads`, which the split heads would change).
            c.num_attention_heads = split(
                model,
                "num_attention_heads",
                self.num_attention_heads,
                "tp",
                tp,
            )?;
            if !self.is_mla() {
                c.head_dim_field = Some(self.head_dim());
                c.num_key_value_heads =
                    split_or_replicate(model, "num_key_value_heads", self.num_key_value_heads, tp)?;
            }
        }

        let has_dense_ffn = !self.is_moe() || self.moe_dense_layers > 0;
        c.intermediate_size = if has_dense_ffn {
            split(
                model,
                self.family.dense_width_key(),
                self.intermediate_size,
                "tp",
                tp,
            )?
        } else {
            // Only LoRA and the Q2 scratch read it on a model without dense layers:
            // rounded up, never smaller than the shard the engine would make.
            self.intermediate_size.div_ceil(tp)
        };

        let local_experts = if self.is_moe() {
            c.moe_intermediate_size = split(
                model,
                "moe_intermediate_size",
                self.moe_intermediate_size,
                "tp / ep",
                layout.moe_tp(),
            )?;
            c.shared_expert_intermediate_size = split(
                model,
                "shared_expert_intermediate_size",
                self.shared_expert_intermediate_size,
                "tp",
                tp,
            )?;
            split(model, "num_experts", self.num_experts, "ep", ep)?
        } else if ep > 1 {
            return Err(ShardError::NoExperts {
                model: model.to_string(),
                ep,
            });
        } else {
            0
        };

        if self.has_gdn() {
            c.linear_num_key_heads = split(
                model,
                "linear_num_key_heads",
                self.linear_num_key_heads,
                "tp",
                tp,
            )?;
            c.linear_num_value_heads = split(
                model,
                "linear_num_value_heads",
                self.linear_num_value_heads,
                "tp",
                tp,
            )?;
        }
        if self.has_mamba() {
            c.mamba_num_heads = split(model, "mamba_num_heads", self.mamba_num_heads, "tp", tp)?;
            c.mamba_n_groups = if self.mamba_n_groups == 1 {
                1
            } else {
                split(model, "n_groups", self.mamba_n_groups, "tp", tp)?
            };
        }

        let n = self.layers.len();
        if layout.pp > n {
            return Err(ShardError::MoreStagesThanLayers {
                model: model.to_string(),
                pp: layout.pp,
                layers: n,
            });
        }
        let layers = layout.stage_layers(n, rank.stage());
        c.layers = self.layers[layers.clone()].to_vec().into();
        c.dense_ffn_layers = self.dense_ffn_layers[layers.clone()].to_vec().into();
        c.num_hidden_layers = c.layers.len();
        c.moe_dense_layers = c.dense_ffn_layers.iter().filter(|&&d| d).count();
        let holds_lm_head = rank.stage() + 1 == layout.pp;
        c.shard = Some(RankShard {
            rank: *rank,
            layers,
            local_experts,
            holds_lm_head,
        });
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_split_layers_as_vllm_does() {
        // vLLM's tests/distributed/test_pipeline_partition.py cases of the default split.
        let split = |layers, pp| -> Vec<Range<usize>> {
            let l = ParallelLayout::new(1, 1, pp).unwrap();
            (0..pp).map(|s| l.stage_layers(layers, s)).collect()
        };
        assert_eq!(split(20, 4), vec![0..5, 5..10, 10..15, 15..20]);
        assert_eq!(split(22, 4), vec![0..5, 5..11, 11..17, 17..22]);
        assert_eq!(split(5, 3), vec![0..2, 2..4, 4..5]);
        assert_eq!(split(3, 2), vec![0..2, 2..3]);
        assert_eq!(split(61, 4), vec![0..15, 15..30, 30..46, 46..61]);
    }

    #[test]
    fn layouts_are_checked() {
        assert_eq!(
            ParallelLayout::new(0, 1, 1),
            Err(ShardError::ZeroDegree { name: "tp" })
        );
        assert_eq!(
            ParallelLayout::new(4, 3, 1),
            Err(ShardError::EpNotInTp { tp: 4, ep: 3 })
        );
        let l = ParallelLayout::new(4, 2, 2).unwrap();
        assert_eq!(l.world_size(), 8);
        assert!(l.rank(8).is_err());
        let r = l.rank(6).unwrap();
        assert_eq!((r.stage(), r.tp_rank(), r.ep_rank()), (1, 2, 1));
        assert_eq!(
            l.stage_leaders().map(|r| r.index).collect::<Vec<_>>(),
            vec![0, 4]
        );
    }
}
