use arena_runtime::{dtype::bf16, Arena, DevicePtr};

pub struct Config {
    pub hidden_size: usize,
    pub adapter_max_rank: usize,
}

#[derive(Arena)]
#[arena(sizes = Sizes, inputs(config: &Config, max_batch_tokens: usize), derived(rows = width + max_batch_tokens, width = config.hidden_size))]
pub struct BufferArena {
    #[buffer(shape = [rows, width])]
    pub hidden: DevicePtr<bf16>,
}

fn main() {}
