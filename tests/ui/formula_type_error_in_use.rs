use arena_runtime::{dtype::bf16, Arena, DevicePtr};

pub struct Config {
    pub hidden_size: usize,
    pub adapter_max_rank: usize,
}

#[derive(Arena)]
#[arena(inputs(config: &Config, max_batch_tokens: u32))]
pub struct BufferArena {
    #[buffer(shape = [max_batch_tokens * 2, config.hidden_size])]
    pub hidden: DevicePtr<bf16>,
}

fn main() {
    let _ = BufferArenaSizes::from_config(&Config { hidden_size: 1, adapter_max_rank: 0 }, 4);
}
