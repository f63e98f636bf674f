// Views borrow the allocated arena: one used after `release` does not compile, and two
// writable view sets of one arena cannot be held at once.
use arena_runtime::HostDevice;
use arena_tests::phased::{StepArena, StepArenaFfnViews, StepArenaViews, StepConfig, StepSizes};

fn main() {
    let config = StepConfig { hidden: 64, intermediate: 160, vocab: 1000 };
    let sizes = StepSizes::from_config(&config, 16, 4);

    let arena = StepArena::allocate(HostDevice::new(), &sizes).unwrap();
    let views = StepArenaViews::of(&arena).unwrap();
    arena.release().unwrap();
    let _ = views.qkv.len();

    let mut arena = StepArena::allocate(HostDevice::new(), &sizes).unwrap();
    let first = StepArenaFfnViews::of(&mut arena);
    let second = StepArenaFfnViews::of(&mut arena);
    let _ = (first.act.len(), second.act.len());
}
