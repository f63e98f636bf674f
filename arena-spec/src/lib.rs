//! The engine's per-model buffer arena, declared once with `#[derive(Arena)]`, sized from
//! real Hugging Face `config.json` files.
//!
//! Start at [`BufferArena`] (the declaration), [`BufferSizes::from_config`] (the sizes),
//! [`ModelConfig::load`] (the config), [`models`] (the shipped configs) and
//! [`ModelConfig::shard`] (one GPU's config of a parallel layout).

mod arena;
pub mod budgets;
pub mod config;
mod config_fields;
mod config_json;
mod config_load;
mod const_config;
pub mod constants;
pub mod decode_meta;
pub mod family;
pub mod inputs;
pub mod levers;
pub mod models;
pub mod parallel;
pub mod regions;
pub mod report;
pub mod sizing;

pub use arena::{ArenaInputs, BufferArena, BufferSizes};
pub use config::{ConfigError, Family, LayerKind, ModelConfig};
pub use const_config::const_name;
pub use constants::{GATEUP_FUSED_MAX_M, Q12_SIZING_STREAMS, VERIFY_ROW_CAP};
pub use decode_meta::{DecodeMetaLayout, DECODE_META_MAX_ROWS, DECODE_META_MIN_ROWS};
pub use levers::{LeverError, Levers};
pub use parallel::{ParallelLayout, Rank, RankShard, ShardError};
pub use regions::{MoeFp8Scratch, MoeFp8ScratchLayout};
pub use sizing::{
    q12_batched_scratch_bytes, q12_batched_scratch_bytes_varlen, q2_dequant_scratch_bytes,
    ssm_rowwise_w_bf16_bytes, ssm_rowwise_w_bf16_bytes_for, ssm_rowwise_w_bf16_layer_bytes,
};
