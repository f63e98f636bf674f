//! Phase sharing on the engine's arena: the planned shared slab of every shipped model
//! against the lower bound and the unshared slab, and the benchmark table.
//! Re-write the table with `ARENA_BLESS=1 cargo test -p arena-spec --release --test phases`.

use arena_runtime::Arena;
use arena_spec::models::SHIPPED;
use arena_spec::{ArenaInputs, BufferArena, Levers};

const INPUTS: ArenaInputs = ArenaInputs {
    max_batch_tokens: 8192,
    max_seq_len: 131072,
    kv_block_size: 16,
    max_batch_size: 128,
};

#[test]
fn every_shipped_model_shares_close_to_the_lower_bound() {
    for m in SHIPPED {
        let config = m.config_with_levers(Levers::default()).unwrap();
        let sizes = INPUTS.sizes(&config).unwrap();
        let plan = BufferArena::shared_plan(&sizes).unwrap();
        let ratio = plan.footprint as f64 / plan.lower_bound as f64;
        let saving = 1.0 - plan.footprint as f64 / plan.unshared as f64;
        println!(
            "{:<30} unshared {:>12} shared {:>12} bound {:>12} {:.4}x saving {:.1}%",
            m.name,
            plan.unshared,
            plan.footprint,
            plan.lower_bound,
            ratio,
            saving * 100.0
        );
        assert!(ratio <= 1.02, "{}: {ratio}", m.name);
    }
}

/// The step's phases in order on a shared host slab: as each phase begins, every buffer that
/// becomes live is written with its own byte (whole-step buffers at the first phase), and
/// every buffer live in the phase must still hold its byte: no byte of a live buffer was
/// reused. Then poison mode: a phase's poisoning fills exactly its new buffers.
#[test]
fn a_step_on_the_shared_slab_never_clobbers_a_live_buffer() {
    use arena_runtime::{AllocOptions, Device, HostDevice, POISON_PATTERN};
    let phases = <BufferArena as Arena>::PHASES.len();
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
        let sizes = ArenaInputs {
            max_batch_tokens: 64,
            max_seq_len: 4096,
            ..INPUTS
        }
        .sizes(&config)
        .unwrap();
        let arena =
            BufferArena::allocate_with(HostDevice::new(), &sizes, AllocOptions::shared()).unwrap();
        arena.check_placement().unwrap();
        let plan = BufferArena::shared_plan(&sizes).unwrap();
        assert_eq!(arena.allocated_bytes(), plan.footprint, "{name}");
        let device = arena.device();
        let live: Vec<_> = arena
            .placements()
            .iter()
            .enumerate()
            .filter(|(_, p)| p.bytes > 0)
            .collect();
        for p in 0..phases {
            for &(i, b) in &live {
                if b.decl.live.starts_at(p) {
                    // SAFETY: `b` is a live buffer of `arena`, `b.bytes` long.
                    unsafe { device.write(b.addr, &vec![(i % 250 + 1) as u8; b.bytes]) }.unwrap();
                }
            }
            for &(i, b) in &live {
                if b.decl.live.contains(p) {
                    let mut back = vec![0u8; b.bytes];
                    // SAFETY: as above.
                    unsafe { device.read(b.addr, &mut back) }.unwrap();
                    assert!(
                        back.iter().all(|&x| x == (i % 250 + 1) as u8),
                        "{name}: `{}` clobbered in phase {p}",
                        b.decl.name
                    );
                }
            }
        }
        let ffn = <BufferArena as Arena>::PHASES
            .iter()
            .position(|&n| n == "ffn")
            .unwrap();
        arena.poison_phase(ffn).unwrap();
        for &(_, b) in &live {
            let mut back = vec![0u8; b.bytes];
            // SAFETY: as above.
            unsafe { device.read(b.addr, &mut back) }.unwrap();
            let poisoned = back.iter().all(|&x| x == POISON_PATTERN);
            if b.decl.live.starts_at(ffn) {
                assert!(poisoned, "{name}: `{}` begins in ffn", b.decl.name);
            }
            if b.decl.live.contains(ffn) && !b.decl.live.starts_at(ffn) {
                assert!(!poisoned, "{name}: `{}` is live across ffn", b.decl.name);
            }
        }
        assert!(arena.poison_phase(phases).is_err());
        arena.release().unwrap();
    }
}
