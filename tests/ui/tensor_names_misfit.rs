// `tensor` names checkpoint tensors: string literals whose `{placeholder}`s are identifiers,
// at most one layer group a name, and only on a `per_layer` buffer.
use arena_runtime::{Arena, DevicePtr};

#[derive(Arena)]
#[arena(sizes = WeightsSizes, inputs(layers: usize))]
pub struct Weights {
    #[buffer(shape = [8], tensor = 7)]
    pub not_a_string: DevicePtr<u8>,
    #[buffer(shape = [8], tensor = "model.layers.{layer}.norm.weight")]
    pub a_layer_without_per_layer: DevicePtr<u8>,
    #[buffer(per_layer = layers, shape = [8], tensor = "model.layers.{layer}.{moe_layer}.w")]
    pub two_groups: DevicePtr<u8>,
    #[buffer(per_layer = layers, shape = [8], tensor = "model.layers.{layer.w")]
    pub unclosed: DevicePtr<u8>,
}

fn main() {}
