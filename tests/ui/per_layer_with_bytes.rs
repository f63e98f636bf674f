use arena_runtime::{Arena, DevicePtr};

#[derive(Arena)]
#[arena(sizes = Sizes, inputs(layers: usize, slots: usize))]
pub struct Cache {
    /// A per-layer buffer repeats a shape; a byte formula has none to repeat.
    #[buffer(per_layer = layers, bytes = slots * 64)]
    pub state: DevicePtr<u8>,
}

fn main() {}
