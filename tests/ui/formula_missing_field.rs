// A `.` with no field after it: the error points at what follows the dot.
use arena_runtime::{dtype::bf16, Arena, DevicePtr};

pub struct Config {
    pub hidden_size: usize,
}

#[derive(Arena)]
#[arena(inputs(config: &Config, m: usize))]
pub struct BufferArena {
    #[buffer(shape = [m, config. + 1])]
    pub hidden: DevicePtr<bf16>,
}

fn main() {}
