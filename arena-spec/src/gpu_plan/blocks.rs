//! The KV pool's block counts by kind of layer, what one sequence needs of each, and the
//! pool's sizes and device bytes at a count.

use super::{on_device, GpuPlanInputs};
use crate::config::ModelConfig;
use crate::kv::{
    chunked_blocks_per_sequence, compressed_blocks_per_sequence, full_blocks_per_sequence,
    sliding_blocks_per_sequence, KvDtype, KvPool, KvPoolInputs, KvPoolSizes,
};
use arena_runtime::{AllocOptions, Arena, SizeError};

/// The KV pool's block counts, by kind of layer ([`KvPool`]'s inputs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct PoolBlocks {
    /// Blocks a full-length layer holds: every layer that keeps every token, MLA's included
    /// (the pool's `full` and `mla_latent` buffers both count by it).
    pub full: usize,
    /// Blocks a sliding-window layer holds.
    pub sliding: usize,
    /// Blocks of DeepSeek-V4's CSA and HCA entries a layer holds.
    pub csa: usize,
    pub hca: usize,
}

impl PoolBlocks {
    /// What one sequence of `tokens` tokens needs on the rank of `config`, while steps of up
    /// to `max_batch_tokens` run: every kind its model has.
    pub fn per_sequence(
        config: &ModelConfig,
        tokens: usize,
        block_tokens: usize,
        max_batch_tokens: usize,
    ) -> PoolBlocks {
        let has = |layers: usize, n: usize| if layers > 0 { n } else { 0 };
        PoolBlocks {
            full: has(
                config.num_full_kv_layers(),
                full_blocks_per_sequence(tokens, block_tokens),
            ),
            // The pool's sliding buffer holds the sliding layers and the chunked ones; a
            // model with both would take the larger share of a sequence (none has both).
            sliding: has(
                config.num_sliding_kv_layers() - config.num_chunked_kv_layers(),
                sliding_blocks_per_sequence(
                    tokens,
                    config.sliding_window,
                    block_tokens,
                    max_batch_tokens,
                ),
            )
            .max(has(
                config.num_chunked_kv_layers(),
                chunked_blocks_per_sequence(
                    tokens,
                    config.attention_chunk_size,
                    block_tokens,
                    max_batch_tokens,
                ),
            )),
            csa: has(
                config.num_csa_kv_layers(),
                compressed_blocks_per_sequence(tokens, config.index_ratio(), block_tokens),
            ),
            hca: has(
                config.num_hca_kv_layers(),
                compressed_blocks_per_sequence(tokens, config.hca_compress_ratio, block_tokens),
            ),
        }
    }

    /// `n` times each count.
    pub const fn times(self, n: usize) -> PoolBlocks {
        PoolBlocks {
            full: self.full * n,
            sliding: self.sliding * n,
            csa: self.csa * n,
            hca: self.hca * n,
        }
    }

    /// The pool's inputs at these counts: named, so no two can be swapped.
    pub const fn inputs(self, block_tokens: usize, kv_dtype: KvDtype) -> KvPoolInputs {
        KvPoolInputs {
            block_tokens,
            blocks: self.full,
            sliding_blocks: self.sliding,
            csa_blocks: self.csa,
            hca_blocks: self.hca,
            kv_dtype,
        }
    }

    /// No blocks of any kind: what a rank without keys and values (a stage of recurrent
    /// layers only) needs.
    pub const fn is_none(self) -> bool {
        self.full == 0 && self.full_only()
    }

    /// Whether only full-length layers hold blocks (the pool can then grow a block at a time).
    pub const fn full_only(self) -> bool {
        self.sliding == 0 && self.csa == 0 && self.hca == 0
    }
}

/// The KV pool's sizes on the rank of `config` at `blocks`.
pub fn pool_sizes(
    config: &ModelConfig,
    inputs: &GpuPlanInputs,
    blocks: PoolBlocks,
) -> Result<KvPoolSizes, SizeError> {
    KvPoolSizes::try_from_inputs(
        config,
        &blocks.inputs(inputs.arena.kv_block_size, inputs.kv_dtype),
    )
}

/// The KV pool's device bytes on the rank of `config` at `blocks`.
pub fn kv_pool_bytes(
    config: &ModelConfig,
    inputs: &GpuPlanInputs,
    blocks: PoolBlocks,
) -> Result<u64, SizeError> {
    let sizes = pool_sizes(config, inputs, blocks)?;
    Ok(on_device(
        KvPool::slab_bytes(&sizes, AllocOptions::default())? as u64,
    ))
}
