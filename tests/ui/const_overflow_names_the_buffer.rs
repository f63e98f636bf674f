// An overflow during const evaluation is a compile error naming the buffer and its formula.
use arena_runtime::{dtype::bf16, Arena, DevicePtr};

pub struct Config {
    pub hidden_size: usize,
}

#[derive(Arena)]
#[arena(const, sizes = Sizes, inputs(config: &Config, max_batch_tokens: usize))]
pub struct BufferArena {
    #[buffer(shape = [max_batch_tokens, config.hidden_size])]
    pub hidden: DevicePtr<bf16>,
}

const HUGE: Sizes = Sizes::const_from_config(&Config { hidden_size: 1 << 40 }, 1 << 30);

fn main() {
    let _ = HUGE;
}
