//! Budgets the compiler checks: each shipped model below, at the inputs stated, must fit the
//! bytes stated, or this crate does not build. A buffer added to `BufferArena` that pushes
//! one of them over fails the build with the model, the budget, the total and the largest
//! buffers (`arena_runtime::assert_fits!`).
//!
//! Each model has two: `budget` for `total_bytes` (the tracked buffers, what a preflight
//! reserves without reuse) and `reuse_budget` for the reuse slab (`AllocOptions::reuse()`,
//! planned at compile time by the run-time planner), so a new buffer that only grows the
//! phase it is live in is caught too.
//!
//! The budgets are chosen here (the seeds give none): each model's figure at these inputs
//! (`arena plan <model>`: `total_bytes` and `reuse`), rounded up to the next 512 MiB, so a
//! new buffer of a few hundred MiB at `M = 8192` is flagged on the models it would push over.

use crate::arena::{BufferArenaInputs, BufferSizes};
use crate::models::consts::{
    DEEPSEEK_V3, LLAMA_3_1_8B, NEMOTRON_H_56B_BASE_8K, QWEN3_5_27B, QWEN3_NEXT_80B_A3B,
};
use arena_runtime::assert_fits;

/// The inputs the budgets are stated at: `arena plan`'s defaults for a 128K-context model.
pub const BUDGET_INPUTS: BufferArenaInputs = BufferArenaInputs::AT_128K;

const MIB: usize = 1 << 20;

assert_fits!(
    "llama-3.1-8b at M = 8192",
    BufferSizes::const_from_inputs(&LLAMA_3_1_8B, &BUDGET_INPUTS),
    budget = 1536 * MIB,
    reuse_budget = 1536 * MIB,
);
assert_fits!(
    "qwen3-next-80b-a3b at M = 8192",
    BufferSizes::const_from_inputs(&QWEN3_NEXT_80B_A3B, &BUDGET_INPUTS),
    budget = 2560 * MIB,
    reuse_budget = 1536 * MIB,
);
assert_fits!(
    "qwen3.5-27b at M = 8192",
    BufferSizes::const_from_inputs(&QWEN3_5_27B, &BUDGET_INPUTS),
    budget = 3584 * MIB,
    reuse_budget = 2048 * MIB,
);
assert_fits!(
    "deepseek-v3 at M = 8192",
    BufferSizes::const_from_inputs(&DEEPSEEK_V3, &BUDGET_INPUTS),
    budget = 4096 * MIB,
    reuse_budget = 3072 * MIB,
);
assert_fits!(
    "nemotron-h-56b-base-8k at M = 8192",
    BufferSizes::const_from_inputs(&NEMOTRON_H_56B_BASE_8K, &BUDGET_INPUTS),
    budget = 5120 * MIB,
    reuse_budget = 2560 * MIB,
);
