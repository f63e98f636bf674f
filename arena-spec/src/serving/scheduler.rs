//! Which tokens of which sequences a step runs, within the plan's limits: one decode token of
//! every running sequence first, then prefill chunks of the others in arrival order
//! (chunked prefill, as vLLM's scheduler packs a step), up to `max_batch_tokens` tokens and
//! `max_batch_size` sequences. A sequence gets the KV blocks its tokens need before it is
//! scheduled, or waits for a later step; nothing is allocated beyond the pools.

use super::paging::{BlockPool, BlockTable, PagingError, SlotPool};
use std::collections::VecDeque;

/// A sequence to serve: its prompt's tokens and how many to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub id: u64,
    pub prompt: usize,
    pub max_new_tokens: usize,
}

/// The plan's limits a step keeps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Tokens a step runs at most (the arena's `max_batch_tokens`).
    pub max_batch_tokens: usize,
    /// Sequences running at once (the arena's and the state cache's `max_batch_size`).
    pub max_batch_size: usize,
    /// Tokens a KV block holds (`KvPoolInputs::block_tokens`).
    pub block_tokens: usize,
    /// Blocks the pool holds (`KvPoolInputs::blocks`).
    pub blocks: usize,
    /// Whether a sequence holds a state-cache slot (a hybrid model's conv and recurrent
    /// states); the slots are `max_batch_size`.
    pub state_slots: bool,
}

/// One sequence's part of a step: `tokens` tokens from position `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scheduled {
    pub id: u64,
    /// Its state-cache slot, where the model has one.
    pub slot: Option<usize>,
    pub start: usize,
    pub tokens: usize,
    /// A chunk of its prompt (else one decode token).
    pub prefill: bool,
}

/// A step's sequences, decode tokens first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    pub scheduled: Vec<Scheduled>,
}

impl Batch {
    /// Tokens of the step.
    pub fn tokens(&self) -> usize {
        self.scheduled.iter().map(|s| s.tokens).sum()
    }

    /// Each sequence's first row in the step's packed tokens, and the end: the varlen
    /// attention's `cu_seqlens`.
    pub fn cu_seqlens(&self) -> Vec<u32> {
        let mut out = vec![0u32];
        for s in &self.scheduled {
            out.push(out[out.len() - 1] + s.tokens as u32);
        }
        out
    }

    /// Each packed token's position in its sequence.
    pub fn positions(&self) -> Vec<u32> {
        self.scheduled
            .iter()
            .flat_map(|s| (s.start..s.start + s.tokens).map(|p| p as u32))
            .collect()
    }
}

#[derive(Debug)]
struct Sequence {
    request: Request,
    table: BlockTable,
    slot: Option<usize>,
    /// Tokens whose keys and values are cached.
    computed: usize,
    generated: usize,
}

impl Sequence {
    /// Tokens known: the prompt and what was generated.
    fn known(&self) -> usize {
        self.request.prompt + self.generated
    }
}

/// What a step's kernels read beside the tokens, in the element types the arena's scratch
/// holds them (`q12_batched_scratch_bytes_varlen`'s list, the seeds' `stage_batched.rs`):
/// each packed token's position (`i32`) and KV slot (`i64`: its block times the block's
/// tokens, plus its row), `cu_seqlens` (`n + 1` `i32`), each sequence's cached length after
/// the step (`kv_lens`, `i32`), and each sequence's block table padded to `width` blocks
/// (`i32`, `n × width`, padded with block 0 as vLLM's `BlockTable` pads: `kv_lens` says how
/// many are real).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepMetadata {
    pub positions: Vec<i32>,
    pub slots: Vec<i64>,
    pub cu_seqlens: Vec<i32>,
    pub kv_lens: Vec<i32>,
    pub block_tables: Vec<i32>,
}

impl StepMetadata {
    /// One more sequence of the step: its `tokens` tokens from position `start`, cached in
    /// `table`'s blocks of `block_tokens` tokens, its table padded to `width` blocks; its
    /// rows follow the sequences pushed before (`cu_seqlens`). `None`, and the metadata left
    /// unusable, where the table is wider than `width` or does not hold the tokens. What
    /// [`Scheduler::metadata`] builds a batch from, and an engine that keeps a sequence's
    /// table itself.
    pub fn push_sequence(
        &mut self,
        table: &BlockTable,
        start: usize,
        tokens: usize,
        block_tokens: usize,
        width: usize,
    ) -> Option<()> {
        if table.blocks().len() > width {
            return None;
        }
        for p in start..start + tokens {
            self.positions.push(p as i32);
            self.slots.push(table.slot_of(p, block_tokens)? as i64);
        }
        let rows = self.cu_seqlens.last().copied().unwrap_or(0);
        if self.cu_seqlens.is_empty() {
            self.cu_seqlens.push(0);
        }
        self.cu_seqlens.push(rows + tokens as i32);
        self.kv_lens.push((start + tokens) as i32);
        let first = self.block_tables.len();
        self.block_tables
            .extend(table.blocks().iter().map(|&b| b as i32));
        self.block_tables.resize(first + width, 0);
        Some(())
    }
}

/// Sequences from arrival to finish, each step's batch, and the pools they draw on.
#[derive(Debug)]
pub struct Scheduler {
    limits: Limits,
    blocks: BlockPool,
    slots: SlotPool,
    waiting: VecDeque<Request>,
    running: Vec<Sequence>,
}

impl Scheduler {
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            blocks: BlockPool::new(limits.blocks),
            slots: SlotPool::new(limits.max_batch_size),
            waiting: VecDeque::new(),
            running: Vec::new(),
        }
    }

    /// A request joins the queue.
    pub fn add(&mut self, request: Request) {
        self.waiting.push_back(request);
    }

    /// Nothing waiting or running.
    pub fn is_idle(&self) -> bool {
        self.waiting.is_empty() && self.running.is_empty()
    }

    /// Blocks free now.
    pub fn free_blocks(&self) -> usize {
        self.blocks.free()
    }

    /// A running sequence's block table.
    pub fn block_table(&self, id: u64) -> Option<&BlockTable> {
        self.running
            .iter()
            .find(|s| s.request.id == id)
            .map(|s| &s.table)
    }

    /// The next step: a decode token of each running sequence whose prompt is cached, then
    /// the next chunk of each running sequence still in its prompt, then new sequences in
    /// arrival order while a slot and the budget last. A sequence whose tokens need a block
    /// the pool does not have waits this step.
    pub fn schedule(&mut self) -> Batch {
        let (limits, mut budget) = (self.limits, self.limits.max_batch_tokens);
        let mut batch = Batch::default();
        let decoding = |s: &Sequence| s.computed >= s.request.prompt;
        for pass_decode in [true, false] {
            for s in self
                .running
                .iter_mut()
                .filter(|s| decoding(s) == pass_decode)
            {
                let want = match pass_decode {
                    true => 1,
                    false => (s.request.prompt - s.computed).min(budget),
                };
                if want == 0 || budget < want {
                    continue;
                }
                if s.table.grow(want, limits.block_tokens, &mut self.blocks) {
                    budget -= want;
                    batch.scheduled.push(Scheduled {
                        id: s.request.id,
                        slot: s.slot,
                        start: s.computed,
                        tokens: want,
                        prefill: !pass_decode,
                    });
                }
            }
        }
        while budget > 0 && self.running.len() < limits.max_batch_size {
            let Some(&request) = self.waiting.front() else {
                break;
            };
            let want = request.prompt.min(budget);
            let mut table = BlockTable::default();
            if want == 0 || !table.grow(want, limits.block_tokens, &mut self.blocks) {
                break;
            }
            let slot = match limits.state_slots {
                true => self.slots.take(),
                false => None,
            };
            self.waiting.pop_front();
            budget -= want;
            batch.scheduled.push(Scheduled {
                id: request.id,
                slot,
                start: 0,
                tokens: want,
                prefill: true,
            });
            self.running.push(Sequence {
                request,
                table,
                slot,
                computed: 0,
                generated: 0,
            });
        }
        batch
    }

    /// The metadata of `batch` (scheduled, not yet completed) with block tables of `width`
    /// blocks (`arena::sizing::block_table_width` of the arena's `max_seq_len`); `None` where
    /// a scheduled sequence's table is wider.
    pub fn metadata(&self, batch: &Batch, width: usize) -> Option<StepMetadata> {
        let mut m = StepMetadata {
            cu_seqlens: vec![0],
            ..StepMetadata::default()
        };
        for s in &batch.scheduled {
            let table = self.block_table(s.id)?;
            m.push_sequence(table, s.start, s.tokens, self.limits.block_tokens, width)?;
        }
        Some(m)
    }

    /// After the step ran `batch`: its tokens are cached; a sequence whose prompt is now
    /// cached, or that decoded, has one more token; one with all its tokens finishes and
    /// gives its blocks and slot back. The finished sequences' ids.
    pub fn complete(&mut self, batch: &Batch) -> Result<Vec<u64>, PagingError> {
        let mut finished = Vec::new();
        for b in &batch.scheduled {
            let Some(s) = self.running.iter_mut().find(|s| s.request.id == b.id) else {
                continue;
            };
            s.computed = b.start + b.tokens;
            if s.computed >= s.known() {
                s.generated += 1;
            }
            if s.generated >= s.request.max_new_tokens {
                finished.push(b.id);
            }
        }
        for id in &finished {
            let i = self
                .running
                .iter()
                .position(|s| s.request.id == *id)
                .expect("a finished sequence runs");
            let mut s = self.running.remove(i);
            s.table.release(&mut self.blocks)?;
            if let Some(slot) = s.slot {
                self.slots.give_back(slot)?;
            }
        }
        Ok(finished)
    }
}
