// An arena allocated and dropped on one line, and sizes computed for nothing: both are
// `must_use`, so a crate that denies the lint does not compile.
#![deny(unused_must_use)]

use arena_runtime::{dtype::bf16, Arena, DevicePtr, HostDevice};

pub struct Config {
    pub hidden: usize,
}

#[derive(Arena)]
#[arena(sizes = StepSizes, inputs(config: &Config, m: usize))]
pub struct Step {
    /// Hidden states.
    #[buffer(shape = [m, config.hidden])]
    pub hidden: DevicePtr<bf16>,
}

fn main() -> Result<(), arena_runtime::ArenaError> {
    let config = Config { hidden: 64 };
    StepSizes::from_config(&config, 8);
    let sizes = StepSizes::from_config(&config, 8);
    Step::allocate(HostDevice::new(), &sizes)?;
    Ok(())
}
