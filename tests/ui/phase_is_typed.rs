// Phases are typed: `poison_phase` takes the arena's generated phase enum, so a misspelled
// phase, a phase index, or a phase of another arena is a compile error where it is written;
// an arena without phases has no phase to give.
use arena_runtime::{Arena, DevicePtr, HostDevice};

#[derive(Arena)]
#[arena(sizes = StepSizes, inputs(m: usize), phases(attention, ffn, lm_head))]
pub struct Step {
    #[buffer(shape = [m], phase = attention)]
    pub qkv: DevicePtr<f32>,
    #[buffer(shape = [m], phase = ffn..=lm_head)]
    pub act: DevicePtr<f32>,
}

#[derive(Arena)]
#[arena(sizes = OtherSizes, inputs(m: usize), phases(prefill, decode))]
pub struct Other {
    #[buffer(shape = [m], phase = prefill)]
    pub scratch: DevicePtr<f32>,
    #[buffer(shape = [m], phase = decode)]
    pub out: DevicePtr<f32>,
}

#[derive(Arena)]
#[arena(sizes = FlatSizes, inputs(m: usize))]
pub struct Flat {
    #[buffer(shape = [m])]
    pub out: DevicePtr<f32>,
}

fn main() {
    let arena = Step::allocate(HostDevice::new(), &StepSizes::from_config(8)).unwrap();
    arena.poison_phase(StepPhase::LmHead).unwrap();
    arena.poison_phase(StepPhase::Fnn).unwrap();
    arena.poison_phase(1).unwrap();
    arena.poison_phase(OtherPhase::Decode).unwrap();
    let flat = Flat::allocate(HostDevice::new(), &FlatSizes::from_config(8)).unwrap();
    flat.poison_phase(StepPhase::Ffn).unwrap();
}
