//! An author's arena with phases (`expand/phased.rs`), planned and allocated from outside the
//! runtime crate: the sizes and the reuse plan against figures worked by hand, every pair of
//! buffers live in a common phase apart, and a step run phase by phase on the host slab that
//! keeps every live buffer intact while the poisoned bytes of ended phases are reused.

use arena_runtime::{AllocMode, AllocOptions, Arena, CountingDevice, HostDevice, Live};
use arena_tests::phased::{sizes, StepArena};

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
fn the_reuse_plan_meets_the_figures_worked_by_hand() {
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
        "total_bytes stays the sum, reuse or not"
    );
    let plan = StepArena::reuse_plan(&s).unwrap();
    // Unshared: each buffer rounded up to 256 bytes but the last (logits, 16000 bytes).
    assert_eq!(plan.slab, 41856);
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
    let arena = StepArena::allocate_with(&device, &s, AllocOptions::reuse()).unwrap();
    assert_eq!(arena.mode(), AllocMode::Reuse);
    assert_eq!(
        arena.allocated_bytes(),
        StepArena::reuse_plan(&s).unwrap().footprint
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

/// The report of an author's arena is the one `arena plan` prints for the engine's: one row
/// per buffer with its dims, bytes, phase and marks, the totals and the reuse slab, as a
/// table and (feature `serde`) as JSON.
#[test]
fn an_authors_arena_reports_what_arena_plan_prints() {
    use arena_runtime::ArenaReport;
    let s = sizes();
    let report = ArenaReport::new::<StepArena>(&s).unwrap();
    assert_eq!(report.arena, "StepArena");
    assert_eq!(report.phases, ["attention", "ffn", "lm_head"]);
    assert_eq!(
        (
            report.total_bytes,
            report.reuse_bytes,
            report.reuse_lower_bound
        ),
        (41856, 18048, 18048)
    );
    let ids = &report.buffers[3];
    assert_eq!(
        (
            ids.name,
            ids.dtype,
            &ids.shape[..],
            ids.bytes,
            ids.phase.as_str()
        ),
        ("expert_ids", "u32", &[16][..], 256, "attention..=ffn")
    );
    assert!(
        ids.at_floor,
        "16 u32 = 64 bytes, held at its 256-byte floor"
    );
    assert_eq!(report.largest(1)[0].name, "logits");
    let text = report.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("buffer") && lines[0].contains("phase"));
    assert!(
        text.contains("expert_ids             u32       [16]             256 B    0.6%  attention..=ffn  floor"),
        "{text}"
    );
    assert!(text.contains("total_bytes 40.88 KiB (41856 B)"), "{text}");
    assert!(text.contains("lower bound 17.62 KiB (1.000×)"), "{text}");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["buffers"][6]["name"], "logits");
    assert_eq!(json["buffers"][6]["shape"], serde_json::json!([4, 1000]));
    assert_eq!(json["reuse_bytes"], 18048);
}
