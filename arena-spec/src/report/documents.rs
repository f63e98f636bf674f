//! The `--json` documents of `arena fit`, `sweep`, `diff` and `models`, as types: each schema
//! is its struct's fields, in order, and each starts with [`SCHEMA_VERSION`]. The CLI prints
//! its tables from the same values, so the text and the JSON cannot disagree.

use super::{BufferRow, SizeReport};
use crate::arena::BufferArenaInputs;
use crate::config::levers::Levers;
use crate::config::ModelConfig;
use crate::models::SHIPPED;
use crate::parallel::RankShard;
use arena_runtime::SizeError;
use serde::Serialize;

/// The version of every `arena … --json` document's schema (`plan`, `fit`, `sweep`, `diff`,
/// `models`). Raised when a field changes meaning or goes away; adding a field keeps it.
///
/// 2: `gpu-plan`'s inputs take `state_dtype` for `recurrent_f32`; each rank adds its
/// KV layer kinds' and states' figures and its exact bytes, the plan what binds it.
pub const SCHEMA_VERSION: u32 = 2;

/// `arena gpu-plan … --json`: the whole GPU's plan.
#[derive(Debug, Clone, Serialize)]
pub struct GpuPlanReport {
    pub schema_version: u32,
    pub model: String,
    pub model_type: String,
    /// Where the reserve comes from: the measured default's source, or `--reserve`.
    pub reserve_source: &'static str,
    /// The file's vision and audio towers (kind and parameters; both `null` for a text
    /// file), whose weights each rank's `towers_bytes` holds where they are loaded.
    pub towers: crate::config::Towers,
    /// The checkpoint's weight format a part of the model and where it was read
    /// (`quantization_config`, `hf_quant_config.json`, none): what `weights_bytes` prices.
    pub weight_formats: crate::config::WeightFormats,
    #[serde(flatten)]
    pub plan: crate::gpu_plan::GpuPlan,
}

/// `arena fit --json`: the largest value of one input whose arena fits a budget.
#[derive(Debug, Clone, Serialize)]
pub struct FitReport {
    pub schema_version: u32,
    pub model: String,
    pub model_type: String,
    /// The input searched: `max_batch_tokens` or `max_batch_size`.
    pub searched: &'static str,
    /// The answer is a multiple of this (16 for tokens, 1 for a batch).
    pub alignment: usize,
    /// The largest value that fits, before alignment.
    pub largest_fitting: usize,
    /// The answer: `largest_fitting` aligned down (as found, if below one step).
    pub answer: usize,
    /// The search stopped at its limit (`fit::SEARCH_LIMIT`), not at the budget.
    pub search_limit_reached: bool,
    /// What is held to the budget: `total_bytes` or `reuse_slab`.
    pub footprint: &'static str,
    pub budget_bytes: usize,
    /// The footprint at the answer.
    pub used_bytes: usize,
    pub slack_bytes: usize,
    /// The rank that binds under a parallel layout (`None` on one GPU).
    pub binding_rank: Option<RankShard>,
    /// Every input at the answer.
    pub inputs: BufferArenaInputs,
    pub levers: Levers,
    /// The arena at the answer, in declaration order.
    pub buffers: Vec<BufferRow>,
}

/// `arena sweep --json`: the arena across doubling values of `max_batch_tokens`.
#[derive(Debug, Clone, Serialize)]
pub struct SweepReport {
    pub schema_version: u32,
    pub model: String,
    pub model_type: String,
    pub levers: Levers,
    /// The inputs held fixed (`max_batch_tokens` is the sweep's first value).
    pub inputs: BufferArenaInputs,
    /// The buffers followed: the largest at the last point, largest first.
    pub followed: Vec<&'static str>,
    pub points: Vec<SweepPoint>,
}

/// One value of the sweep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SweepPoint {
    pub max_batch_tokens: usize,
    pub total_bytes: usize,
    pub slab_bytes: usize,
    pub reuse_bytes: usize,
    /// Bytes of each followed buffer, in `followed`'s order.
    pub followed_bytes: Vec<usize>,
}

impl SweepReport {
    /// `config` at `inputs` with `max_batch_tokens` each of `values`, following the `top`
    /// buffers largest at the last value.
    pub fn new(
        config: &ModelConfig,
        inputs: BufferArenaInputs,
        values: &[usize],
        top: usize,
    ) -> Result<SweepReport, SizeError> {
        let at = |m: usize| {
            SizeReport::new(
                config,
                BufferArenaInputs {
                    max_batch_tokens: m,
                    ..inputs
                },
            )
            .map(|(r, _)| r)
        };
        let last = at(*values.last().unwrap_or(&inputs.max_batch_tokens))?;
        let followed: Vec<&'static str> = last.largest(top).iter().map(|b| b.name).collect();
        let points = values
            .iter()
            .map(|&m| {
                let r = at(m)?;
                let bytes = |name: &str| {
                    r.buffers
                        .iter()
                        .find(|b| b.name == name)
                        .map_or(0, |b| b.bytes)
                };
                Ok(SweepPoint {
                    max_batch_tokens: m,
                    total_bytes: r.total_bytes,
                    slab_bytes: r.slab_bytes,
                    reuse_bytes: r.reuse_bytes,
                    followed_bytes: followed.iter().map(|n| bytes(n)).collect(),
                })
            })
            .collect::<Result<Vec<_>, SizeError>>()?;
        Ok(SweepReport {
            schema_version: SCHEMA_VERSION,
            model: config.source.to_string(),
            model_type: config.model_type.to_string(),
            levers: config.levers,
            inputs,
            followed,
            points,
        })
    }
}

/// `arena diff --json`: two arenas side by side, buffer by buffer.
#[derive(Debug, Clone, Serialize)]
pub struct DiffReport {
    pub schema_version: u32,
    pub inputs: BufferArenaInputs,
    pub a: DiffSide,
    pub b: DiffSide,
    /// Every buffer, in declaration order.
    pub buffers: Vec<DiffRow>,
}

/// One side of a diff.
#[derive(Debug, Clone, Serialize)]
pub struct DiffSide {
    pub model: String,
    pub model_type: String,
    pub levers: Levers,
    /// The rank the side is sized for (`None` on one GPU).
    pub shard: Option<RankShard>,
    pub total_bytes: usize,
    pub slab_bytes: usize,
    pub reuse_bytes: usize,
}

/// One buffer's bytes on each side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffRow {
    pub name: &'static str,
    pub a_bytes: usize,
    pub b_bytes: usize,
    /// `b_bytes - a_bytes`.
    pub delta_bytes: i128,
}

impl DiffReport {
    /// `a` and `b` (sized at the same `inputs`) side by side.
    pub fn new(
        a: (&ModelConfig, &SizeReport),
        b: (&ModelConfig, &SizeReport),
        inputs: BufferArenaInputs,
    ) -> DiffReport {
        let side = |(c, r): (&ModelConfig, &SizeReport)| DiffSide {
            model: r.model.clone(),
            model_type: c.model_type.to_string(),
            levers: r.levers,
            shard: c.shard.clone(),
            total_bytes: r.total_bytes,
            slab_bytes: r.slab_bytes,
            reuse_bytes: r.reuse_bytes,
        };
        DiffReport {
            schema_version: SCHEMA_VERSION,
            inputs,
            buffers: a
                .1
                .buffers
                .iter()
                .zip(&b.1.buffers)
                .map(|(x, y)| DiffRow {
                    name: x.name,
                    a_bytes: x.bytes,
                    b_bytes: y.bytes,
                    delta_bytes: y.bytes as i128 - x.bytes as i128,
                })
                .collect(),
            a: side(a),
            b: side(b),
        }
    }
}

/// `arena models --json`: the shipped configs.
#[derive(Debug, Clone, Serialize)]
pub struct ModelsReport {
    pub schema_version: u32,
    pub models: Vec<ModelRow>,
}

/// One shipped config's key shapes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelRow {
    /// The name `arena` takes for it.
    pub name: &'static str,
    pub model_type: String,
    /// No published model: a config of this project's that turns on every feature.
    pub synthetic: bool,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub attention_layers: usize,
    pub gdn_layers: usize,
    pub mamba_layers: usize,
    /// Routed experts (0 for a dense model) and how many each token takes.
    pub experts: usize,
    pub experts_per_token: usize,
    pub vocab_size: usize,
}

impl ModelsReport {
    /// Every shipped config; an error names the one that did not load.
    pub fn shipped() -> Result<ModelsReport, crate::ConfigError> {
        let models = SHIPPED
            .iter()
            .map(|m| {
                let c = m.config()?;
                Ok(ModelRow {
                    name: m.name,
                    model_type: c.model_type.to_string(),
                    synthetic: m.is_synthetic(),
                    hidden_size: c.hidden_size,
                    num_hidden_layers: c.num_hidden_layers,
                    attention_layers: c.num_attention_layers(),
                    gdn_layers: c.num_gdn_layers(),
                    mamba_layers: c.num_mamba_layers(),
                    experts: if c.is_moe() { c.num_experts } else { 0 },
                    experts_per_token: if c.is_moe() { c.num_experts_per_tok } else { 0 },
                    vocab_size: c.vocab_size,
                })
            })
            .collect::<Result<_, crate::ConfigError>>()?;
        Ok(ModelsReport {
            schema_version: SCHEMA_VERSION,
            models,
        })
    }
}
