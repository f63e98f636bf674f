// A phase's view set holds only the buffers live in that phase, so reaching another phase's
// buffer does not compile; a read-only view is not a writable one.
use arena_runtime::{HostDevice, View, ViewMut};
use arena_tests::phased::{StepArena, StepArenaFfnViews, StepArenaViews, StepConfig, StepSizes};

fn write_into(_out: &mut ViewMut<'_, f32, HostDevice>) {}

fn main() {
    let config = StepConfig { hidden: 64, intermediate: 160, vocab: 1000 };
    let sizes = StepSizes::from_config(&config, 16, 4);
    let mut arena = StepArena::allocate(HostDevice::new(), &sizes).unwrap();
    let ffn = StepArenaFfnViews::of(&mut arena);
    let _ = ffn.qkv;

    let mut read: View<'_, f32, HostDevice> = StepArenaViews::of(&arena).unwrap().logits;
    write_into(&mut read);
}
