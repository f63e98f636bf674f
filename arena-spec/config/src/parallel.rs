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

/// A layout's configs, a stage at a time.
impl ParallelLayout {
    /// One config per pipeline stage (the stage's first rank's), or only `rank`'s when
    /// given; the whole model, unsharded, for the single-GPU layout.
    pub fn stage_configs(
        &self,
        whole: &ModelConfig,
        rank: Option<usize>,
    ) -> Result<Vec<ModelConfig>, ShardError> {
        if *self == ParallelLayout::SINGLE && rank.unwrap_or(0) == 0 {
            return Ok(vec![whole.clone()]);
        }
        // The first rank's shard checks the split (more stages than layers, say) before any
        // list of ranks is made; it is the first stage's config too.
        let first = whole.shard(&self.rank(0)?)?;
        match rank {
            Some(0) => Ok(vec![first]),
            Some(r) => Ok(vec![whole.shard(&self.rank(r)?)?]),
            None => std::iter::once(Ok(first))
                .chain(self.stage_leaders().skip(1).map(|r| whole.shard(&r)))
                .collect(),
        }
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
