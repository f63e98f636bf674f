//! Model configs as an LLM engine sizes its start-up allocations by them, read from Hugging
//! Face `config.json` files: [`ModelConfig`] (loaded with [`ModelConfig::load`], a file or a
//! checkpoint directory), the family table it is read through ([`Family`]), the checkpoint's
//! weight formats ([`WeightFormats`], from its quantization recipe), parallel layouts and one
//! rank's config ([`ParallelLayout`], [`ModelConfig::shard`]), and the shipped vendor
//! configs ([`models`], also as `const`s).
//!
//! This crate holds no GPU code and no arena: `arena-spec` sizes the engine's buffer arena,
//! weights, KV pool and state cache from these configs, and re-exports them.

pub mod config;
pub mod models;
pub mod parallel;

pub use config::levers::{LeverError, Levers};
pub use config::{const_name, Block, ConfigError, Family, KvLayer, LayerKind, ModelConfig};
pub use config::{FormatSource, Mxfp4Backend, WeightFormat, WeightFormats, WeightPart};
pub use config::{RecurrentStateDtype, StateDtype, StateDtypeSource};
pub use config::{Resolution, TextModel};
pub use config::{Tower, TowerKind, Towers};
pub use parallel::{ParallelLayout, Rank, RankShard, ShardError};

// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
