// With `#[arena(const)]`, every function a formula calls must be a `const fn`: rustc says
// which call is not, on the formula's own tokens.
use arena_runtime::{dtype::bf16, Arena, DevicePtr};

pub struct Config {
    pub hidden_size: usize,
}

impl Config {
    pub fn width(&self) -> usize {
        self.hidden_size * 2
    }
}

#[derive(Arena)]
#[arena(const, sizes = Sizes, inputs(config: &Config, max_batch_tokens: usize))]
pub struct BufferArena {
    #[buffer(shape = [max_batch_tokens, config.width()])]
    pub wide: DevicePtr<bf16>,
}

fn main() {}
