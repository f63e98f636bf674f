// A const arena sizing a buffer from a `Regions` layout: `layout` is not const (it returns the
// layout, a run-time value), so the const path takes `bytes`; and `bytes` exists as a
// `const fn` only under `#[regions(const)]`. `.min(..)`, `.max(..)` and `.clamp(..)`
// are `Ord`'s, not const: the built-in `min(a, b)` and `max(a, b)` are.
use arena_runtime::{dtype::bf16, Arena, DevicePtr, Regions};

#[derive(Regions)]
#[regions(const, inputs(rows: usize))]
pub struct ConstScratch {
    #[region(shape = [rows])]
    pub ids: DevicePtr<i32>,
}

#[derive(Regions)]
#[regions(inputs(rows: usize))]
pub struct RunTimeScratch {
    #[region(shape = [rows])]
    pub ids: DevicePtr<i32>,
}

#[derive(Arena)]
#[arena(const, sizes = LayoutSizes, inputs(m: usize))]
pub struct UsesLayout {
    #[buffer(bytes = ConstScratch::layout(m))]
    pub scratch: DevicePtr<u8>,
}

#[derive(Arena)]
#[arena(const, sizes = BytesSizes, inputs(m: usize))]
pub struct UsesRunTimeBytes {
    #[buffer(bytes = RunTimeScratch::bytes(m))]
    pub scratch: DevicePtr<u8>,
}

#[derive(Arena)]
#[arena(const, sizes = MinSizes, inputs(m: usize, cap: usize))]
pub struct UsesMethodMin {
    #[buffer(shape = [m.min(cap), 16])]
    pub rows: DevicePtr<bf16>,
    #[buffer(shape = [m.max(cap), 16])]
    pub wide: DevicePtr<bf16>,
    #[buffer(shape = [m.clamp(1, cap), 16])]
    pub held: DevicePtr<bf16>,
}

fn main() {}
