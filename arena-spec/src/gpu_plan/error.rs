//! Why the whole-GPU plan could not be made, with the figures that say so.

use crate::weights::WeightsError;
use crate::ShardError;
use arena_runtime::SizeError;

/// Why no plan.
#[derive(Debug, thiserror::Error)]
pub enum GpuPlanError {
    #[error("{0}")]
    Weights(#[from] WeightsError),
    #[error("{0}")]
    Shard(#[from] ShardError),
    #[error("sizing {model}: {source}")]
    Size { model: String, source: SizeError },
    /// The fixed parts alone do not fit.
    #[error(
        "rank {rank}: weights {weights} + arena {arena} + state cache {state} + reserve {reserve} \
         bytes already exceed the GPU's {gpu} bytes"
    )]
    FixedPartsExceedGpu {
        rank: usize,
        weights: u64,
        arena: u64,
        state: u64,
        reserve: u64,
        gpu: u64,
    },
    /// A tower the file carries is of a kind not counted here.
    #[error(
        "{model}: its {which} tower is of a kind whose parameters are not counted here \
         ({which}_config); plan the text model alone (arena gpu-plan: --text-only)"
    )]
    Towers { model: String, which: &'static str },
    /// A wrapper's objects beside the text model it was read as (`TextModel::left_out`).
    #[error(
        "{model}: read as the text model of a wrapper whose other parts ({left_out}) are not \
         counted here; plan the text model alone (arena gpu-plan: --text-only)"
    )]
    LeftOut { model: String, left_out: String },
    /// The multi-token-prediction layers were asked for and are not counted here.
    #[error("{model}: {why}; plan without them (arena fit: without --mtp)")]
    Mtp { model: String, why: &'static str },
    /// An input the plan cannot be made at.
    #[error("{0}")]
    Inputs(&'static str),
    /// A pipeline stage holds layers that read keys and values another stage keeps.
    #[error(
        "rank {rank}: its stage holds KV-shared layers whose source layer is on another stage \
         (Gemma 4's last `num_kv_shared_layers` read the last earlier layer of their kind): \
         choose a pp split that keeps them together"
    )]
    SharedKvAcrossStages { rank: usize },
    /// Not one sequence at the context fits.
    #[error(
        "rank {rank}: {budget} bytes are left for keys and values, less than one sequence of \
         {context} tokens needs ({need} bytes)"
    )]
    NoSequenceFits {
        rank: usize,
        budget: u64,
        context: usize,
        need: u64,
    },
}
