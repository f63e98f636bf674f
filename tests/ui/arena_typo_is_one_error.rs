// One typo in an arena is one error: the fallback keeps the sizes struct, the named inputs,
// `from_config`, `total_bytes` and `allocate`, so the code using them adds no errors.
use arena_runtime::{dtype::bf16, Arena, DevicePtr, HostDevice};

pub struct Config {
    pub hidden_size: usize,
}

#[derive(Arena)]
#[arena(inputs(config: &Config, max_batch_tokens: usize))]
pub struct BufferArena {
    #[buffer(shape = [max_batch_tokens, config.hiden_sizee + 0, max_batch_tokenz])]
    pub hidden: DevicePtr<bf16>,
}

fn main() {
    let config = Config { hidden_size: 8 };
    let sizes = BufferArenaSizes::from_config(&config, 16);
    let named = BufferArenaInputs { max_batch_tokens: 16 };
    let _ = BufferArenaSizes::from_inputs(&config, &named).total_bytes() + sizes.hidden;
    let arena = BufferArena::allocate(HostDevice::new(), &sizes).unwrap();
    let _ = arena.hidden.len();
}
