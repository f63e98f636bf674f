//! The `arena plan --json` document as a type: its schema is these structs' fields, in order.

use super::{BufferRow, SizeReport};
use crate::arena::ranks::RankArena;
use crate::arena::{BufferArena, BufferArenaInputs};
use crate::config::levers::Levers;
use crate::config::{ModelConfig, TextModel};
use crate::parallel::{ParallelLayout, RankShard};
use arena_runtime::{Arena, SizeError};
use serde::Serialize;

/// What `arena plan` reports for a model under a layout: the sized rank (the largest, or the
/// one asked for), every stage's total, each buffer, the totals and the allocations made.
#[derive(Debug, Clone, Serialize)]
pub struct PlanReport {
    /// [`super::SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Where the config came from (a shipped model's name or a file path).
    pub model: String,
    pub model_type: String,
    /// The family the file was sized as (its row's `model_type`).
    pub family: &'static str,
    /// How the file was read and what of it is not sized (`ModelConfig::text_model`).
    pub text_model: TextModel,
    pub inputs: BufferArenaInputs,
    pub levers: Levers,
    pub layout: LayoutReport,
    /// One row per pipeline stage (or only the asked rank's stage).
    pub stages: Vec<StageSummary>,
    /// The reported rank's buffers, in declaration order.
    pub buffers: Vec<BufferRow>,
    /// The arena's phases, in step order.
    pub phases: &'static [&'static str],
    pub total_bytes: usize,
    pub untracked_bytes: usize,
    pub slab_bytes: usize,
    pub reuse_bytes: usize,
    pub reuse_lower_bound: usize,
    /// What allocating each rank showed (empty when nothing was allocated).
    pub allocation: Vec<AllocSummary>,
}

/// The layout the figures are per GPU of.
#[derive(Debug, Clone, Serialize)]
pub struct LayoutReport {
    pub tp: usize,
    pub ep: usize,
    pub pp: usize,
    pub world_size: usize,
    /// The reported rank (0 for a single GPU).
    pub rank: usize,
    /// The figures are one GPU's of several.
    pub per_rank: bool,
    /// What the reported rank's config remembers of its rank.
    pub shard: Option<RankShard>,
}

/// One pipeline stage's arena: the ranks that allocate it (every rank of a stage has one
/// size) and its figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StageSummary {
    pub stage: usize,
    /// The ranks of the stage, first and last.
    pub ranks: [usize; 2],
    /// The model's layers the stage runs, start and end.
    pub layers: [usize; 2],
    /// Routed experts each of its ranks holds (`None` for a dense model).
    pub local_experts: Option<usize>,
    pub total_bytes: usize,
    /// The plain slab, and with buffers of disjoint phases reusing bytes.
    pub slab_bytes: usize,
    pub reuse_bytes: usize,
}

/// What allocating one rank's arena showed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AllocSummary {
    /// The rank of the parallel layout (0 for a single GPU).
    pub rank: usize,
    /// `host`, `cuda:N`, or `addresses only (no memory)` for a placement checked without
    /// memory (`plan` without `--device`).
    pub device: String,
    /// Bytes of the device allocations (the slab, padding included).
    pub allocated_bytes: usize,
    /// How much the device's free memory dropped, where the device can tell.
    pub free_memory_drop: Option<usize>,
    /// Whether that drop is the slab rounded up to the driver's 2 MiB page (a GPU only;
    /// another process allocating on the same GPU at the same time makes it false).
    pub drop_matches_plan: Option<bool>,
    /// Allocated as a reuse slab (buffers of disjoint phases reuse bytes).
    pub reuse: bool,
}

impl StageSummary {
    /// The stage a rank's config belongs to under `layout` (stage 0, every layer, for an
    /// unsharded config).
    ///
    /// An error is the reuse plan's (a slab whose size overflows).
    pub fn of(layout: &ParallelLayout, arena: &RankArena) -> Result<StageSummary, SizeError> {
        let c = &arena.config;
        let (stage, layers) = c.shard.as_ref().map_or((0, 0..c.layers.len()), |s| {
            (s.rank.stage(), s.layers.clone())
        });
        let plan = BufferArena::reuse_plan(&arena.sizes)?;
        Ok(StageSummary {
            stage,
            ranks: [stage * layout.tp, stage * layout.tp + layout.tp - 1],
            layers: [layers.start, layers.end],
            local_experts: c
                .is_moe()
                .then(|| c.shard.as_ref().map_or(c.num_experts, |s| s.local_experts)),
            total_bytes: arena.sizes.total_bytes(),
            slab_bytes: plan.slab,
            reuse_bytes: plan.footprint,
        })
    }
}

impl PlanReport {
    /// The document for `config` (the reported rank) and its `report`, the layout's stages
    /// and the allocations made (none: an empty `Vec`). `stages` should be the layout's
    /// (`StageArenas::stage_arenas` of the layout, each through [`StageSummary::of`]).
    ///
    /// ```
    /// use arena_spec::report::{PlanReport, SizeReport, StageSummary};
    /// use arena_spec::{models, BufferArenaInputs, ParallelLayout, StageArenas};
    ///
    /// let config = models::find("qwen3-0.6b").unwrap().config()?;
    /// let inputs = BufferArenaInputs::defaults_for(&config);
    /// let layout = ParallelLayout::SINGLE;
    /// let stages = layout.stage_arenas(&config, None, &inputs)?;
    /// let rows = stages
    ///     .iter()
    ///     .map(|a| StageSummary::of(&layout, a))
    ///     .collect::<Result<_, _>>()?;
    /// let (report, _) = SizeReport::new(&config, inputs)?;
    /// let doc = PlanReport::new(&config, report, &layout, rows, Vec::new());
    /// println!("{}", serde_json::to_string_pretty(&doc)?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(
        config: &ModelConfig,
        report: SizeReport,
        layout: &ParallelLayout,
        stages: Vec<StageSummary>,
        allocation: Vec<AllocSummary>,
    ) -> PlanReport {
        PlanReport {
            schema_version: super::SCHEMA_VERSION,
            model: report.model,
            model_type: config.model_type.to_string(),
            family: config.family.model_type(),
            text_model: config.text_model.clone(),
            inputs: report.inputs,
            levers: report.levers,
            layout: LayoutReport {
                tp: layout.tp,
                ep: layout.ep,
                pp: layout.pp,
                world_size: layout.world_size(),
                rank: config.shard.as_ref().map_or(0, |s| s.rank.index),
                per_rank: config.shard.is_some(),
                shard: config.shard.clone(),
            },
            stages,
            buffers: report.buffers,
            phases: <BufferArena as Arena>::PHASES,
            total_bytes: report.total_bytes,
            untracked_bytes: report.untracked_bytes,
            slab_bytes: report.slab_bytes,
            reuse_bytes: report.reuse_bytes,
            reuse_lower_bound: report.reuse_lower_bound,
            allocation,
        }
    }
}
