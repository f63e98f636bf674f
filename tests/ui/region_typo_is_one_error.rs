// One typo in a region layout is one error: the layout's items still exist (with bodies that
// never run), so the arena that sizes a buffer with it and the code that carves it do not
// add errors of their own.
use arena_runtime::{dtype::bf16, Arena, DevicePtr, Regions};

#[derive(Regions)]
#[regions(inputs(rows: usize))]
pub struct Split {
    #[region(shape = [rowz])]
    pub ids: DevicePtr<i32>,
}

#[derive(Arena)]
#[arena(inputs(rows: usize))]
pub struct Small {
    #[buffer(bytes = Split::layout(rows))]
    pub split: DevicePtr<u8>,
    #[buffer(shape = [rows])]
    pub hidden: DevicePtr<bf16>,
}

fn main() {
    let layout = Split::layout(4).unwrap();
    let _ = layout.ids.bytes + layout.total_bytes;
    let _ = Split::carve(DevicePtr::NULL, &layout);
}
