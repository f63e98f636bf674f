//! Phase reuse on the engine's arena: the planned reuse slab of every shipped model
//! against the lower bound and the plain slab. The committed table of the same figures
//! (`arena-spec/measurements/phase_reuse.md`) is written by the GPU test
//! `a_step_on_the_reuse_slab` (`tests/gpu.rs`), which also measures each slab on a device.

use arena_runtime::Arena;
use arena_spec::models::SHIPPED;
use arena_spec::{BufferArena, BufferArenaInputs, Levers};

const INPUTS: BufferArenaInputs = BufferArenaInputs::AT_128K;

#[test]
fn every_shipped_model_shares_close_to_the_lower_bound() {
    for m in SHIPPED {
        let config = m.config_with_levers(Levers::default()).unwrap();
        let sizes = INPUTS.sizes(&config).unwrap();
        let plan = BufferArena::reuse_plan(&sizes).unwrap();
        let ratio = plan.footprint as f64 / plan.lower_bound as f64;
        let saving = 1.0 - plan.footprint as f64 / plan.slab as f64;
        println!(
            "{:<30} plain {:>12} reuse {:>12} bound {:>12} {:.4}x saving {:.1}%",
            m.name,
            plan.slab,
            plan.footprint,
            plan.lower_bound,
            ratio,
            saving * 100.0
        );
        assert!(ratio <= 1.02, "{}: {ratio}", m.name);
    }
}

/// The step's phases in order on a reuse host slab (`Allocated::check_step`): as each phase
/// begins it is poisoned, every buffer that becomes live must hold the poison and is written
/// with its own byte (whole-step buffers at the first phase), and every buffer live in the
/// phase must still hold its byte: no byte of a live buffer was reused, and poisoning fills
/// exactly a phase's new buffers.
#[test]
fn a_step_on_the_reuse_slab_never_clobbers_a_live_buffer() {
    use arena_runtime::{AllocOptions, HostDevice};
    for name in [
        "qwen3-next-80b-a3b",
        "nemotron-3-nano-30b-a3b",
        "deepseek-v3.2",
        "synthetic-all-features-moe",
    ] {
        let config = arena_spec::models::find(name)
            .unwrap()
            .config_with_levers(Levers::default())
            .unwrap();
        let sizes = BufferArenaInputs {
            max_batch_tokens: 64,
            max_seq_len: 4096,
            ..INPUTS
        }
        .sizes(&config)
        .unwrap();
        let arena =
            BufferArena::allocate_with(HostDevice::new(), &sizes, AllocOptions::reuse()).unwrap();
        arena.check_placement().unwrap();
        let plan = BufferArena::reuse_plan(&sizes).unwrap();
        assert_eq!(arena.allocated_bytes(), plan.footprint, "{name}");
        arena
            .check_step()
            .map_err(|e| format!("{name}: {e}"))
            .unwrap();
        arena.release().unwrap();
    }
}
