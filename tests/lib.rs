//! Arenas the integration tests share. Each is also an expansion-snapshot input
//! (`expand/*.rs`), so the snapshot's source is code that compiles.

pub mod example {
    include!("expand/example.rs");
}

pub mod scratch {
    include!("expand/scratch.rs");
}

pub mod per_layer {
    include!("expand/per_layer.rs");
}

pub mod phased {
    include!("expand/phased.rs");

    /// The shapes the phased arena's tests size it with: hidden 64, intermediate 160, a vocab
    /// of 1000.
    pub const CONFIG: StepConfig = StepConfig {
        hidden: 64,
        intermediate: 160,
        vocab: 1000,
    };

    /// Its sizes at M = 16 tokens, 4 logit rows.
    pub fn sizes() -> StepSizes {
        StepSizes::from_config(&CONFIG, 16, 4)
    }
}

/// The workspace README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;

/// The documentation pages' Rust examples, compiled and run as doctests (a GPU's `no_run`).
#[cfg(doctest)]
pub mod docs {
    #[doc = include_str!("../docs/views.md")]
    pub struct Views;
    #[doc = include_str!("../docs/gpu-plan.md")]
    pub struct GpuPlan;
    #[doc = include_str!("../docs/const.md")]
    pub struct Const;
    #[doc = include_str!("../docs/cli.md")]
    pub struct Cli;
    #[doc = include_str!("../docs/models.md")]
    pub struct Models;
    #[doc = include_str!("../docs/parallel.md")]
    pub struct Parallel;
    #[doc = include_str!("../docs/reuse.md")]
    pub struct Reuse;
    #[doc = include_str!("../docs/gpu.md")]
    pub struct Gpu;
    #[doc = include_str!("../docs/checkpoints.md")]
    pub struct Checkpoints;
}
