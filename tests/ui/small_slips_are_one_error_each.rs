// Slips a first arena makes, each one error saying what to write: a missing comma between
// container keys (the keys after it are still read, so their uses add nothing) or between
// field keys, a built-in helper with the wrong number of arguments, a derived value no
// formula reads, buffers naming phases in an arena that lists none (one error for all), and
// a shape of more dimensions than a view keeps.
use arena_runtime::{dtype::bf16, Arena, DevicePtr};

pub struct Config {
    pub hidden_size: usize,
}

#[derive(Arena)]
#[arena(sizes = CommaSizes, inputs(config: &Config, m: usize) derived(m16 = ceil16(m)))]
pub struct MissingComma {
    #[buffer(shape = [m16, config.hidden_size])]
    pub hidden: DevicePtr<bf16>,
}

#[derive(Arena)]
#[arena(sizes = FieldSizes, inputs(config: &Config, m: usize))]
pub struct MissingFieldComma {
    #[buffer(shape = [m, config.hidden_size] min_bytes = 256)]
    pub hidden: DevicePtr<bf16>,
}

#[derive(Arena)]
#[arena(sizes = AritySizes, inputs(config: &Config, m: usize))]
pub struct HelperArity {
    #[buffer(shape = [max(m), config.hidden_size])]
    pub hidden: DevicePtr<bf16>,
    #[buffer(shape = [ceil16(m, 2), config.hidden_size])]
    pub padded: DevicePtr<bf16>,
    #[buffer(shape = [round_up(m), config.hidden_size])]
    pub rounded: DevicePtr<bf16>,
    #[buffer(shape = [ceil_div(m), config.hidden_size])]
    pub blocks: DevicePtr<bf16>,
    #[buffer(shape = [min(m, 2, 3), config.hidden_size])]
    pub least: DevicePtr<bf16>,
}

#[derive(Arena)]
#[arena(sizes = UnreadSizes, inputs(config: &Config, m: usize), derived(m16 = ceil16(m)))]
pub struct UnreadDerived {
    #[buffer(shape = [m, config.hidden_size])]
    pub hidden: DevicePtr<bf16>,
}

#[derive(Arena)]
#[arena(sizes = NoListSizes, inputs(config: &Config, m: usize))]
pub struct NoPhaseList {
    #[buffer(shape = [m, config.hidden_size], phase = attention)]
    pub qkv: DevicePtr<bf16>,
    #[buffer(shape = [m, config.hidden_size], phase = ffn)]
    pub act: DevicePtr<bf16>,
    #[buffer(shape = [m, config.hidden_size], phase = ffn)]
    pub out: DevicePtr<bf16>,
}

#[derive(Arena)]
#[arena(sizes = RankSizes, inputs(m: usize))]
pub struct TooManyDims {
    #[buffer(shape = [m, 2, 2, 2, 2, 2, 2, 2, 2])]
    pub deep: DevicePtr<bf16>,
    // Eight: as many as a view keeps, no error.
    #[buffer(shape = [m, 2, 2, 2, 2, 2, 2, 2])]
    pub eight: DevicePtr<bf16>,
}

fn main() {
    let config = Config { hidden_size: 8 };
    let _ = CommaSizes::from_config(&config, 4).total_bytes();
}
