// Phases: an unknown phase (with a suggestion, or the list of phases when none is close), a
// range that runs backwards, ranges spelled otherwise than `..=`, a phase no buffer is live in, a phase named where the arena
// declares none, and a phase listed twice.
use arena_runtime::{dtype::bf16, Arena, DevicePtr};

pub struct Config {
    pub hidden_size: usize,
}

#[derive(Arena)]
#[arena(sizes = Sizes, inputs(config: &Config, m: usize), phases(attention, ffn, lm_head))]
pub struct WithPhases {
    #[buffer(shape = [m, config.hidden_size], phase = atention)]
    pub qkv: DevicePtr<bf16>,
    #[buffer(shape = [m, config.hidden_size], phase = ffn..=attention)]
    pub act: DevicePtr<bf16>,
    #[buffer(shape = [m, config.hidden_size], phase = attention..ffn)]
    pub half_open: DevicePtr<bf16>,
    #[buffer(shape = [m, config.hidden_size], phase = decode)]
    pub far_off: DevicePtr<bf16>,
    #[buffer(shape = [m, config.hidden_size], phase = attention -> ffn)]
    pub arrow: DevicePtr<bf16>,
    #[buffer(shape = [m, config.hidden_size], phase = attention <== ffn)]
    pub not_a_range: DevicePtr<bf16>,
}

#[derive(Arena)]
#[arena(sizes = UnusedSizes, inputs(config: &Config, m: usize), phases(attention, ffn))]
pub struct Unused {
    #[buffer(shape = [m, config.hidden_size], phase = attention)]
    pub qkv: DevicePtr<bf16>,
}

#[derive(Arena)]
#[arena(sizes = NoneSizes, inputs(config: &Config, m: usize))]
pub struct NoPhases {
    #[buffer(shape = [m, config.hidden_size], phase = ffn)]
    pub act: DevicePtr<bf16>,
}

#[derive(Arena)]
#[arena(sizes = TwiceSizes, inputs(config: &Config, m: usize), phases(attention, ffn, attention))]
pub struct Twice {
    #[buffer(shape = [m, config.hidden_size], phase = attention)]
    pub qkv: DevicePtr<bf16>,
    #[buffer(shape = [m, config.hidden_size], phase = ffn)]
    pub act: DevicePtr<bf16>,
}

fn main() {}
