use arena_runtime::{dtype::bf16, Arena, DevicePtr};

#[derive(Arena)]
#[arena(inputs(__sizes: usize))]
pub struct BufferArena {
    #[buffer(shape = [__sizes])]
    pub hidden: DevicePtr<bf16>,
}

fn main() {}
