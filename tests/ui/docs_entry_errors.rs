use arena_runtime::{dtype::bf16, Arena, DevicePtr};

pub struct Config {
    pub hidden_size: usize,
}

#[derive(Arena)]
#[arena(
    inputs(config: &Config, max_batch_tokens: usize),
    docs(sizes = "Byte sizes.", from_confg = "Typo.", total_bytes = 3, sizes = "Twice.")
)]
pub struct BufferArena {
    #[buffer(shape = [max_batch_tokens, config.hidden_size])]
    pub hidden: DevicePtr<bf16>,
}

fn main() {}
