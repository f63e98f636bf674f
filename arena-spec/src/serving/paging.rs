//! The KV pool's blocks and the state cache's slots handed to sequences: free lists of
//! exactly the planned counts, so a sequence that needs a block when none is free waits
//! rather than allocates, and a finished one gives its blocks and slot back.

/// A block of the KV pool, by its index in a layer's `[blocks, block_tokens, ...]`.
pub type BlockId = u32;

/// The pool's blocks not held by a sequence: every id of `0..total` once, handed out in
/// order and reused in the order they come back (first in, first out, as vLLM's
/// `FreeKVCacheBlockQueue` reuses the least recently freed block first).
#[derive(Debug, Clone)]
pub struct BlockPool {
    free: std::collections::VecDeque<BlockId>,
    total: usize,
}

impl BlockPool {
    /// A pool of `total` blocks, all free: `KvPoolInputs::blocks` of the plan.
    pub fn new(total: usize) -> Self {
        Self {
            free: (0..total as u64).map(|b| b as BlockId).collect(),
            total,
        }
    }

    /// The blocks the pool holds.
    pub fn total(&self) -> usize {
        self.total
    }

    /// The blocks free now.
    pub fn free(&self) -> usize {
        self.free.len()
    }

    /// `n` blocks, or none (and `None`) where fewer are free: a sequence gets all it needs
    /// for a step or waits.
    pub fn take(&mut self, n: usize) -> Option<Vec<BlockId>> {
        (n <= self.free.len()).then(|| self.free.drain(..n).collect())
    }

    /// Blocks given back (a finished sequence's). A block that is not the pool's or is free
    /// already is a caller's error: refused, with nothing given back.
    pub fn give_back(&mut self, blocks: &[BlockId]) -> Result<(), PagingError> {
        for (i, &b) in blocks.iter().enumerate() {
            if b as usize >= self.total || self.free.contains(&b) || blocks[..i].contains(&b) {
                return Err(PagingError::NotHeld { block: b });
            }
        }
        self.free.extend(blocks);
        Ok(())
    }
}

/// A sequence's blocks in token order: token `t` lies in block `blocks[t / block_tokens]`
/// at row `t % block_tokens` (the paged cache's block table, vLLM's `block_table`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockTable {
    blocks: Vec<BlockId>,
    tokens: usize,
}

impl BlockTable {
    /// The blocks, in token order.
    pub fn blocks(&self) -> &[BlockId] {
        &self.blocks
    }

    /// Tokens whose keys and values the blocks hold.
    pub fn tokens(&self) -> usize {
        self.tokens
    }

    /// Blocks `n` more tokens need beyond those held, at `block_tokens` a block.
    pub fn blocks_needed(&self, n: usize, block_tokens: usize) -> usize {
        (self.tokens + n)
            .div_ceil(block_tokens)
            .saturating_sub(self.blocks.len())
    }

    /// Room for `n` more tokens, taking the blocks it needs from `pool`; where the pool has
    /// too few, nothing is taken and the table is unchanged (`false`).
    pub fn grow(&mut self, n: usize, block_tokens: usize, pool: &mut BlockPool) -> bool {
        match pool.take(self.blocks_needed(n, block_tokens)) {
            Some(blocks) => {
                self.blocks.extend(blocks);
                self.tokens += n;
                true
            }
            None => false,
        }
    }

    /// Where token `t`'s keys and values go: its block and its row there, as the step's
    /// slot mapping writes them (`block · block_tokens + row`).
    pub fn slot_of(&self, t: usize, block_tokens: usize) -> Option<usize> {
        let block = *self.blocks.get(t / block_tokens)? as usize;
        (t < self.tokens).then_some(block * block_tokens + t % block_tokens)
    }

    /// Every block back to `pool`; the table is empty after.
    pub fn release(&mut self, pool: &mut BlockPool) -> Result<(), PagingError> {
        pool.give_back(&self.blocks)?;
        self.blocks.clear();
        self.tokens = 0;
        Ok(())
    }
}

/// The state cache's sequence slots (`StateCacheInputs::max_batch_size` of them): a running
/// sequence of a hybrid model holds one for its conv and recurrent states. Slots come back
/// to the end of the queue, so a freed slot is reused only after every other free one
/// (the wrap-around the tests walk).
#[derive(Debug, Clone)]
pub struct SlotPool {
    free: std::collections::VecDeque<usize>,
    total: usize,
}

impl SlotPool {
    pub fn new(total: usize) -> Self {
        Self {
            free: (0..total).collect(),
            total,
        }
    }

    pub fn free(&self) -> usize {
        self.free.len()
    }

    pub fn take(&mut self) -> Option<usize> {
        self.free.pop_front()
    }

    /// A slot given back; one not the pool's, or free already, is refused.
    pub fn give_back(&mut self, slot: usize) -> Result<(), PagingError> {
        if slot >= self.total || self.free.contains(&slot) {
            return Err(PagingError::SlotNotHeld { slot });
        }
        self.free.push_back(slot);
        Ok(())
    }
}

/// A block or slot given back that was not held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PagingError {
    #[error("block {block} is not held: it is past the pool, free already, or given twice")]
    NotHeld { block: BlockId },
    #[error("state slot {slot} is not held: it is past the cache or free already")]
    SlotNotHeld { slot: usize },
}
