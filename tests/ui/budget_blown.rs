// A shipped model at the stated inputs no longer fits its budget: the build fails naming the
// model, the budget, the total, the overshoot and the largest buffers.
use arena_spec::models::consts::QWEN3_NEXT_80B_A3B;
use arena_spec::{BufferArenaInputs, BufferSizes};

const AT_8K: BufferArenaInputs = BufferArenaInputs {
    max_batch_tokens: 8192,
    max_seq_len: 131072,
    kv_block_size: 16,
    max_batch_size: 128,
};

arena_runtime::assert_fits!(
    "qwen3-next-80b-a3b at M = 8192",
    BufferSizes::const_from_inputs(&QWEN3_NEXT_80B_A3B, &AT_8K),
    budget = 2 << 30,
);

fn main() {}
