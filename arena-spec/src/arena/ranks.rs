//! Every rank of a parallel layout sized: one config and one arena per pipeline stage (the
//! ranks of a stage have identical arenas), and the rank whose arena is largest, which is
//! the one a per-GPU budget binds on.

use crate::arena::{BufferArenaInputs, BufferSizes};
use crate::config::ModelConfig;
use crate::parallel::{ParallelLayout, ShardError};
use arena_runtime::SizeError;
use thiserror::Error;

/// One rank's config (sharded, or the whole model on one GPU) and its arena's sizes. The
/// rank itself is `config.shard` (`None` for the whole model on one GPU): its index, stage
/// and layers; `report::StageSummary::of(&layout, &arena)` gives the stage's row of
/// `arena plan`.
#[derive(Debug, Clone, PartialEq)]
pub struct RankArena {
    pub config: ModelConfig,
    pub sizes: BufferSizes,
}

/// A layout whose ranks cannot be sized: a split the engine refuses, or a size that
/// overflows on one rank (named).
#[derive(Debug, Error)]
pub enum RankSizeError {
    #[error(transparent)]
    Shard(#[from] ShardError),
    #[error("sizing {model}: {source}")]
    Size { model: String, source: SizeError },
}

/// Every rank of a parallel layout sized: its stages' arenas and the largest of them.
/// Implemented for [`ParallelLayout`] (the layout is `arena-config`'s, the arena this
/// crate's); `use arena_spec::StageArenas` to call it.
pub trait StageArenas {
    /// [`ParallelLayout::stage_configs`], each with its arena sized at `inputs`.
    fn stage_arenas(
        &self,
        whole: &ModelConfig,
        rank: Option<usize>,
        inputs: &BufferArenaInputs,
    ) -> Result<Vec<RankArena>, RankSizeError>;

    /// The rank (of `rank` alone, when given) whose arena's `total_bytes` is largest at
    /// `inputs`; the first of equals. Its index is `config.shard`'s `rank.index`.
    ///
    /// ```
    /// use arena_spec::{models, BufferArenaInputs, ParallelLayout, StageArenas};
    ///
    /// let whole = models::find("deepseek-v3").unwrap().config()?;
    /// let layout = ParallelLayout::new(8, 8, 2)?; // tp 8, ep 8, pp 2: 16 GPUs
    /// let largest = layout.largest_rank(&whole, None, &BufferArenaInputs::defaults_for(&whole))?;
    /// let rank = largest.config.shard.as_ref().unwrap().rank;
    /// println!("rank {} needs {} B", rank.index, largest.sizes.total_bytes());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn largest_rank(
        &self,
        whole: &ModelConfig,
        rank: Option<usize>,
        inputs: &BufferArenaInputs,
    ) -> Result<RankArena, RankSizeError>;
}

impl StageArenas for ParallelLayout {
    fn stage_arenas(
        &self,
        whole: &ModelConfig,
        rank: Option<usize>,
        inputs: &BufferArenaInputs,
    ) -> Result<Vec<RankArena>, RankSizeError> {
        self.stage_configs(whole, rank)?
            .into_iter()
            .map(|config| match inputs.sizes(&config) {
                Ok(sizes) => Ok(RankArena { config, sizes }),
                Err(source) => Err(RankSizeError::Size {
                    model: config.source.to_string(),
                    source,
                }),
            })
            .collect()
    }

    fn largest_rank(
        &self,
        whole: &ModelConfig,
        rank: Option<usize>,
        inputs: &BufferArenaInputs,
    ) -> Result<RankArena, RankSizeError> {
        let arenas = self.stage_arenas(whole, rank, inputs)?;
        Ok(RankArena::largest(&arenas).clone())
    }
}

impl RankArena {
    /// The arena with the largest `total_bytes` of `arenas` (the first of equals).
    ///
    /// # Panics
    /// On an empty slice: a layout always has a rank.
    pub fn largest(arenas: &[RankArena]) -> &RankArena {
        let mut best = &arenas[0];
        for a in &arenas[1..] {
            if a.sizes.total_bytes() > best.sizes.total_bytes() {
                best = a;
            }
        }
        best
    }
}
