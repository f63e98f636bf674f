use arena_runtime::{dtype::bf16, Arena, DevicePtr};

pub struct Config {
    pub hidden_size: usize,
    pub adapter_max_rank: usize,
}

#[derive(Arena)]
#[arena(sizes = Sizes, inputs(config: &Config, max_batch_tokens: usize))]
pub struct BufferArena {
    #[buffer(bytes = (|m: usize| m * 2)(max_batch_tokens))]
    pub hidden: DevicePtr<bf16>,
    // A closure of no arguments starts with `||`, which is also the logical or.
    #[buffer(bytes = (|| max_batch_tokens * 2)())]
    pub residual: DevicePtr<bf16>,
}

fn main() {}
