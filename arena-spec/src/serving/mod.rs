//! The serving loop's bookkeeping over the planned pools, with no device memory of its own:
//! the KV pool's blocks and the state cache's slots as free lists of exactly the planned
//! counts ([`BlockPool`], [`SlotPool`]), each sequence's [`BlockTable`], and a [`Scheduler`]
//! that packs each step (decode tokens first, then prefill chunks) within
//! `max_batch_tokens` and `max_batch_size`. A sequence that needs a block when none is free
//! waits; a finished one gives its blocks and slot back. There is no preemption: a step with
//! sequences running and none scheduled means the pool cannot hold their next tokens.

mod paging;
mod scheduler;

pub use paging::{BlockId, BlockPool, BlockTable, PagingError, SlotPool};
pub use scheduler::{Batch, Limits, Request, Scheduled, Scheduler, StepMetadata};
