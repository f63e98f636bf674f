use arena_runtime::{dtype::bf16, Arena, DevicePtr};

pub struct Config {
    pub hidden_size: usize,
    pub adapter_max_rank: usize,
}

#[derive(Arena)]
#[arena(sizes = Sizes, inputs(config: &Config, max_batch_tokens: usize))]
pub struct BufferArena {
    #[buffer(shape = [max_batch_tokens], min_bytes = config.hidden_size += 1)]
    pub hidden: DevicePtr<bf16>,
}

fn main() {}
