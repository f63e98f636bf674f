//! An author's arena with phases (`expand/phased.rs`), planned and allocated from outside the
//! runtime crate: the sizes and the shared plan against figures worked by hand, every pair of
//! buffers live in a common phase apart, and a step run phase by phase on the host slab that
//! keeps every live buffer intact while the poisoned bytes of ended phases are reused.

use arena_runtime::{AllocMode, AllocOptions, Arena, CountingDevice, HostDevice, Live};
use arena_tests::phased::{StepArena, StepConfig, StepSizes};

const CONFIG: StepConfig = StepConfig {
    hidden: 64,
    intermediate: 160,
    vocab: 1000,
};

fn sizes() -> StepSizes {
    StepSizes::from_config(&CONFIG, 16, 4)
}

#[test]
fn phases_and_live_ranges_are_the_declared_ones() {
    assert_eq!(StepArena::PHASES, ["attention", "ffn", "lm_head"]);
    let live: Vec<(&str, Live)> = StepArena::BUFFERS
        .iter()
        .map(|d| (d.name, d.live))
        .collect();
    let one = |p| Live::Phases { first: p, last: p };
    assert_eq!(
        live,
        [
            ("hidden_states", Live::WholeStep),
            ("qkv", one(0)),
            ("attn_out", one(0)),
            ("expert_ids", Live::Phases { first: 0, last: 1 }),
            ("gate_up", one(1)),
            ("act", one(1)),
            ("logits", one(2)),
        ]
    );
}

#[test]
fn the_shared_plan_meets_the_figures_worked_by_hand() {
    let s = sizes();
    // M = 16 rows, BF16 unless said.
    assert_eq!(
        [
            s.hidden_states,
            s.qkv,
            s.attn_out,
            s.expert_ids,
            s.gate_up,
            s.act,
            s.logits
        ],
        [2048, 6144, 2048, 256, 10240, 5120, 16000]
    );
    assert_eq!(
        s.total_bytes(),
        41856,
        "total_bytes stays the sum, sharing or not"
    );
    let plan = StepArena::shared_plan(&s).unwrap();
    // Unshared: each buffer rounded up to 256 bytes but the last (logits, 16000 bytes).
    assert_eq!(plan.unshared, 41856);
    // Live per phase: attention 2048 + 6144 + 2048 + 256 = 10496; FFN 2048 + 256 + 10240 +
    // 5120 = 17664; LM head 2048 + 16000 = 18048, the largest.
    assert_eq!(plan.lower_bound, 18048);
    assert_eq!(plan.footprint, plan.lower_bound);

    let placed: Vec<_> = StepArena::BUFFERS
        .iter()
        .zip(&plan.offsets)
        .zip(StepArena::byte_sizes(&s))
        .map(|((d, off), bytes)| (d, off.unwrap(), bytes))
        .collect();
    for &(d, off, bytes) in &placed {
        assert_eq!(off % 256, 0, "{} is 256-byte aligned", d.name);
        assert!(off + bytes <= plan.footprint, "{} inside the slab", d.name);
    }
    for (i, &(a, oa, ba)) in placed.iter().enumerate() {
        for &(b, ob, bb) in &placed[i + 1..] {
            if a.live.overlaps(b.live) {
                assert!(
                    oa + ba <= ob || ob + bb <= oa,
                    "{} and {} are live together but share bytes",
                    a.name,
                    b.name
                );
            }
        }
    }
}

#[test]
fn a_step_on_the_shared_host_slab_keeps_every_live_buffer_intact() {
    let s = sizes();
    let device = CountingDevice::new(HostDevice::new());
    let arena = StepArena::allocate_with(&device, &s, AllocOptions::shared()).unwrap();
    assert_eq!(arena.mode(), AllocMode::Shared);
    assert_eq!(
        arena.allocated_bytes(),
        StepArena::shared_plan(&s).unwrap().footprint
    );
    assert_eq!(arena.check_placement(), Ok(()));
    // The LM head's logits reuse bytes the attention and FFN buffers had.
    let logits = arena.logits.as_raw()..arena.logits.as_raw() + s.logits as u64;
    assert!(arena
        .placements()
        .iter()
        .any(|p| p.decl.name != "hidden_states"
            && p.decl.name != "logits"
            && logits.contains(&p.addr)));

    // The phases in order: each poisoned as it begins, its new buffers written, every live
    // buffer still intact.
    assert_eq!(arena.check_step(), Ok(()));
    arena.release().unwrap();
    assert_eq!(device.live_allocations(), 0);
}
