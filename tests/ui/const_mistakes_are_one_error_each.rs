// In a const arena, one mistake is still one error: the fallback's `const fn`s evaluate (to
// zero sizes) instead of panicking, so the `const` items and the `assert_fits!` budgets that
// use a broken arena add nothing; `phase(...)`, a near miss of `phases(...)`, is read as
// `phases` for the rest of the checks; a derived value whose formula does not parse is still
// declared, so its uses are not errors of their own.
use arena_runtime::{dtype::bf16, Arena, DevicePtr};

pub struct Config {
    pub hidden_size: usize,
}

const CONFIG: Config = Config { hidden_size: 64 };

#[derive(Arena)]
#[arena(const, sizes = TypoSizes, inputs(config: &Config, max_batch_tokens: usize))]
pub struct Typo {
    #[buffer(shape = [max_batch_tokenz, config.hidden_size])]
    pub hidden: DevicePtr<bf16>,
}

const TYPO: TypoSizes = TypoSizes::const_from_config(&CONFIG, 16);
arena_runtime::assert_fits!("typo", TypoSizes::const_from_config(&CONFIG, 16), budget = 1 << 20);
arena_runtime::assert_fits!("typo again", TYPO, budget = 1 << 30);

#[derive(Arena)]
#[arena(const, sizes = PhaseSizes, inputs(config: &Config, m: usize), phase(attention, ffn))]
pub struct NearMiss {
    #[buffer(shape = [m, config.hidden_size], phase = attention)]
    pub qkv: DevicePtr<bf16>,
    #[buffer(shape = [m, config.hidden_size], phase = ffn)]
    pub act: DevicePtr<bf16>,
    #[buffer(shape = [m, 3 * config.hidden_size], phase = attention..=ffn)]
    pub residual: DevicePtr<bf16>,
}

arena_runtime::assert_fits!("near miss", PhaseSizes::const_from_config(&CONFIG, 16), budget = 1 << 20);

#[derive(Arena)]
#[arena(const, sizes = DerivedSizes, inputs(config: &Config, m: usize), derived(width = config.hidden_size +* 2))]
pub struct Unparsed {
    #[buffer(shape = [m, width])]
    pub wide: DevicePtr<bf16>,
    #[buffer(shape = [m, width, 2])]
    pub wider: DevicePtr<bf16>,
}

arena_runtime::assert_fits!("unparsed", DerivedSizes::const_from_config(&CONFIG, 16), budget = 1 << 20);

fn main() {
    let _ = TYPO.total_bytes();
}
