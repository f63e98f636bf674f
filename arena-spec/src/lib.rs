//! The engine's per-model buffer arena, declared once with `#[derive(Arena)]`, sized from
//! real Hugging Face `config.json` files.
//!
//! Start at [`BufferArena`] (the declaration), [`BufferSizes::from_config`] (the sizes),
//! [`ModelConfig::load`] (the config), [`models`] (the shipped configs) and
//! [`ModelConfig::shard`] (one GPU's config of a parallel layout).
//!
//! The wings: [`arena`] (the arena, its sizing functions, constants, region layouts and
//! budgets), [`config`] (`ModelConfig`, its loading, the family rules, levers, sharding),
//! [`models`] (the shipped configs, also as `const`s); the other start-up allocations, each
//! read from a config: [`state`] (the sequence-state cache of the recurrent mixers), [`kv`]
//! (the KV block pool) and [`weights`] (every parameter tensor, in six arenas); and what reads
//! them all: [`parallel`] (layouts and ranks), [`fit`] (the budget search), [`gpu_plan`] (the
//! whole GPU planned: weights, arena, state cache, reserve, the KV pool in the rest) and
//! [`report`] (per-buffer tables and the documents the CLI prints). The configs ([`config`],
//! [`models`], [`parallel`]) are the `arena-config` crate's, re-exported; the `arena` CLI is
//! the `arena-cli` crate.
//!
//! Features: `cuda` makes the GPU tests run (and `arena-cli`'s `cuda` lets the CLI allocate
//! on a GPU, `--device cuda:N`).

pub mod arena;
pub mod fit;
pub mod gpu_plan;
pub mod kv;
pub mod report;
pub mod serving;
pub mod state;
pub mod weights;

pub use arena::constants::{GATEUP_FUSED_MAX_M, Q12_SIZING_STREAMS, VERIFY_ROW_CAP};
pub use arena::regions::{
    DecodeMetaLayout, MoeFp8Scratch, MoeFp8ScratchLayout, DECODE_META_MAX_ROWS,
    DECODE_META_MIN_ROWS,
};
pub use arena::sizing::{
    q12_batched_scratch_bytes, q12_batched_scratch_bytes_varlen, q2_dequant_scratch_bytes,
    ssm_rowwise_w_bf16_bytes, ssm_rowwise_w_bf16_bytes_for, ssm_rowwise_w_bf16_layer_bytes,
};
pub use arena::{
    BufferArena, BufferArenaInputs, BufferArenaPhase, BufferArenaViews, BufferArenaViewsMut,
    BufferSizes, SEEDS_BUFFERS,
};
// The configs everything here is sized from, from their own crate (`arena-config`), at the
// paths they have always had here.
pub use arena::ranks::StageArenas;
pub use arena_config::{config, models, parallel};
pub use arena_config::{const_name, Block, ConfigError, Family, KvLayer, LayerKind, ModelConfig};
pub use arena_config::{FormatSource, Mxfp4Backend, WeightFormat, WeightFormats, WeightPart};
pub use arena_config::{LeverError, Levers};
pub use arena_config::{ParallelLayout, Rank, RankShard, ShardError};
pub use arena_config::{RecurrentStateDtype, StateDtype, StateDtypeSource};
pub use arena_config::{Resolution, TextModel};
pub use arena_config::{Tower, TowerKind, Towers};
pub use kv::{KvDtype, KvPool, KvPoolInputs, KvPoolSizes, KvPoolViews};
pub use state::{StateCache, StateCacheInputs, StateCacheSizes, StateCacheViews};

// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
