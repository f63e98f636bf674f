//! The serve-time inputs an arena is sized for, with the defaults a model author starts from.

use crate::arena::BufferSizes;
use crate::config::ModelConfig;
use arena_runtime::SizeError;
use serde::Serialize;

/// The default `max_batch_tokens`.
pub const DEFAULT_MAX_BATCH_TOKENS: usize = 8192;
/// `max_seq_len` defaults to the config's context, capped here.
pub const DEFAULT_MAX_SEQ_LEN_CAP: usize = 131072;
pub const DEFAULT_KV_BLOCK_SIZE: usize = 16;
pub const DEFAULT_MAX_BATCH_SIZE: usize = 128;

/// A buffer's dims (empty for a byte formula or a closed gate) and its bytes before the
/// floor.
pub type BufferShape = (Vec<usize>, usize);

/// The arguments of `BufferSizes::from_config` after the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ArenaInputs {
    pub max_batch_tokens: usize,
    pub max_seq_len: usize,
    pub kv_block_size: usize,
    pub max_batch_size: usize,
}

impl ArenaInputs {
    /// Realistic defaults for `config`: M 8192, its context capped at 131072, block 16,
    /// batch 128.
    pub fn defaults_for(config: &ModelConfig) -> Self {
        Self {
            max_batch_tokens: DEFAULT_MAX_BATCH_TOKENS,
            max_seq_len: config.max_context().min(DEFAULT_MAX_SEQ_LEN_CAP),
            kv_block_size: DEFAULT_KV_BLOCK_SIZE,
            max_batch_size: DEFAULT_MAX_BATCH_SIZE,
        }
    }

    pub fn sizes(&self, config: &ModelConfig) -> Result<BufferSizes, SizeError> {
        BufferSizes::try_from_config(
            config,
            self.max_batch_tokens,
            self.max_seq_len,
            self.kv_block_size,
            self.max_batch_size,
        )
    }

    /// Each buffer's shape as numbers (see `BufferSizes::dims`).
    pub fn dims(&self, config: &ModelConfig) -> Result<Vec<Vec<usize>>, SizeError> {
        BufferSizes::dims(
            config,
            self.max_batch_tokens,
            self.max_seq_len,
            self.kv_block_size,
            self.max_batch_size,
        )
    }

    /// The sizes, and each buffer's shape with its bytes before the floor, in one pass.
    pub fn sizes_and_shapes(
        &self,
        config: &ModelConfig,
    ) -> Result<(BufferSizes, Vec<BufferShape>), SizeError> {
        let mut shapes = Vec::new();
        let sizes = BufferSizes::try_from_config_with(
            config,
            self.max_batch_tokens,
            self.max_seq_len,
            self.kv_block_size,
            self.max_batch_size,
            &mut |dims, raw| shapes.push((dims.to_vec(), raw)),
        )?;
        Ok((sizes, shapes))
    }
}
