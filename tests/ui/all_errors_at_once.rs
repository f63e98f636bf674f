use arena_runtime::{dtype::bf16, Arena, DevicePtr};

pub struct Config {
    pub hidden_size: usize,
    pub adapter_max_rank: usize,
}

#[derive(Arena)]
#[arena(sizes = Sizes, inputs(config: &Config, max_batch_tokens: usize))]
pub struct BufferArena {
    #[buffer(shpe = [max_batch_tokens])]
    pub hidden: DevicePtr<bf16>,
    #[buffer(shape = [max_batch_tokns], gate = if true { true } else { false })]
    pub residual: DevicePtr<bf16>,
    #[buffer(shape = [max_batch_tokens])]
    pub norm: Box<u8>,
}

fn main() {}
