// A reuse-slab budget (`reuse_budget`): the slab where buffers of disjoint phases reuse
// bytes, planned at compile time by the run-time planner. Blown, the build stops naming the
// slab, the budget, the overshoot, the lower bound and the phase that sets it.
use arena_runtime::{dtype::bf16, Arena, DevicePtr};

pub struct Dims {
    pub hidden: usize,
    pub vocab: usize,
}
pub const DIMS: Dims = Dims { hidden: 4096, vocab: 128_256 };

#[derive(Arena)]
#[arena(const, inputs(dims: &Dims, m: usize), phases(layers, lm_head))]
pub struct Step {
    #[buffer(shape = [m, dims.hidden])]
    pub hidden: DevicePtr<bf16>,
    #[buffer(shape = [m, 3 * dims.hidden], phase = layers)]
    pub qkv: DevicePtr<bf16>,
    #[buffer(shape = [m, dims.vocab], phase = lm_head)]
    pub logits: DevicePtr<f32>,
}

arena_runtime::assert_fits!(
    "step at M = 8192",
    StepSizes::const_from_config(&DIMS, 8192),
    budget = 8 << 30,
    reuse_budget = 2 << 30,
);

fn main() {}
