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

/// The report's text, pinned: each row's share of the tracked total and its marks, the
/// totals, and the reuse line's saving and ratio against the lower bound — the figures the
/// test above works by hand — for this arena of phases; and the largest byte count names its
/// unit.
#[test]
fn the_report_prints_each_buffers_share_and_the_reuse_saving() {
    let report = arena_runtime::ArenaReport::new::<StepArena>(&sizes()).unwrap();
    let text = report.to_string();
    assert_eq!(text, PHASED_REPORT);
    assert_eq!(arena_runtime::human_bytes(1 << 60), "1024.00 PiB");
}

/// 7 buffers of the figures above: shares of 41,856 tracked bytes; the reuse slab at its lower
/// bound, 56.9% under the plain one.
const PHASED_REPORT: &str = "\
buffer                 dtype     shape            bytes   share  phase            marks
hidden_states          bf16      [16, 64]      2.00 KiB    4.9%  whole step
qkv                    bf16      [16, 192]     6.00 KiB   14.7%  attention
attn_out               bf16      [16, 64]      2.00 KiB    4.9%  attention
expert_ids             u32       [16]             256 B    0.6%  attention..=ffn  floor
gate_up                bf16      [16, 320]    10.00 KiB   24.5%  ffn
act                    bf16      [16, 160]     5.00 KiB   12.2%  ffn
logits                 f32       [4, 1000]    15.62 KiB   38.2%  lm_head

total_bytes 40.88 KiB (41856 B)
reuse       17.62 KiB (18048 B) when buffers of disjoint phases reuse bytes: -56.9% against the plain slab 40.88 KiB; lower bound 17.62 KiB (1.000×)
";

/// A report written by hand, for what the arena above lacks: an untracked buffer (no share,
/// named under the totals), a closed gate, a reuse slab above its lower bound (1,536 B against
/// 1,024: 1.500×; against the plain 3,840 B: -60.0%).
#[test]
fn the_report_marks_untracked_and_closed_buffers_and_the_ratio_to_the_bound() {
    use arena_runtime::{ArenaReport, BufferRow};
    let row = |name, bytes, tracked, off| BufferRow {
        name,
        dtype: "u8",
        shape: if off { vec![] } else { vec![bytes] },
        formula: "[n]",
        bytes,
        gated: off,
        tracked,
        off,
        at_floor: false,
        phase: "whole step".to_string(),
    };
    let report = ArenaReport {
        arena: "Hand",
        phases: vec!["a", "b"],
        total_bytes: 3000,
        untracked_bytes: 512,
        slab_bytes: 3840,
        reuse_bytes: 1536,
        reuse_lower_bound: 1024,
        buffers: vec![
            row("x", 1000, true, false),
            row("y", 2000, true, false),
            row("scratch", 512, false, false),
            row("lora", 0, true, true),
        ],
    };
    let totals = report.totals();
    assert_eq!(
        totals,
        "total_bytes 2.93 KiB (3000 B)\n\
         untracked   512 B (scratch)\n\
         reuse       1.50 KiB (1536 B) when buffers of disjoint phases reuse bytes: -60.0% against the plain slab 3.75 KiB; lower bound 1.00 KiB (1.500×)\n"
    );
    // Nothing to divide by: no share, no saving, the ratio 1.
    let empty = ArenaReport {
        total_bytes: 0,
        untracked_bytes: 0,
        slab_bytes: 0,
        reuse_bytes: 0,
        reuse_lower_bound: 0,
        buffers: vec![row("lora", 0, true, true)],
        ..report.clone()
    };
    assert!(
        empty
            .table()
            .lines()
            .nth(1)
            .unwrap()
            .contains("0 B       -"),
        "{}",
        empty.table()
    );
    assert!(
        empty
            .totals()
            .contains("-0.0% against the plain slab 0 B; lower bound 0 B (1.000×)"),
        "{}",
        empty.totals()
    );
    // Shares of the 3,000 tracked bytes; none for the untracked buffer; no shape for the
    // closed gate.
    assert_eq!(
        report.table(),
        "\
buffer                 dtype     shape         bytes   share  phase         marks
x                      u8        [1000]       1000 B   33.3%  whole step
y                      u8        [2000]     1.95 KiB   66.7%  whole step
scratch                u8        [512]         512 B       -  whole step    untracked
lora                   u8        -               0 B    0.0%  whole step    gated off (NULL)
"
    );
}

/// A const arena whose inputs are all by value: `const_from_inputs` takes them by name, in
/// the inputs struct, as `const_from_config` takes them in order. Its floor is arithmetic
/// (checked on the const path as a shape is).
mod by_value_inputs {
    use arena_runtime::{dtype::bf16, Arena, DevicePtr};

    #[derive(Arena)]
    #[arena(const, sizes = GridSizes, inputs(rows: usize, cols: usize))]
    pub struct Grid {
        #[buffer(shape = [rows, cols])]
        pub cells: DevicePtr<bf16>,
        #[buffer(shape = [cols])]
        pub column_sums: DevicePtr<f32>,
        #[buffer(shape = [rows], min_bytes = 64 * cols)]
        pub row_flags: DevicePtr<u8>,
    }

    const BY_NAME: GridSizes = GridSizes::const_from_inputs(&GridInputs { rows: 3, cols: 500 });

    #[test]
    fn const_from_inputs_reads_each_input_by_name() {
        let in_order = GridSizes::const_from_config(3, 500);
        assert_eq!(BY_NAME.cells, in_order.cells);
        assert_eq!(BY_NAME.cells, 3 * 500 * 2);
        assert_eq!(BY_NAME.column_sums, 500 * 4);
        // 3 bytes of flags, raised to the floor of 64 · 500.
        assert_eq!(BY_NAME.row_flags, 32_000);
        assert_eq!(BY_NAME.total_bytes(), in_order.total_bytes());
        // Allocated from the const sizes: each buffer where its size says, the flags at the floor.
        let arena = Grid::allocate(arena_runtime::HostDevice::new(), &BY_NAME).unwrap();
        let cells = arena.cells.as_raw();
        assert!(cells != 0 && arena.column_sums.as_raw() > cells);
        assert!(arena.row_flags.as_raw() >= arena.column_sums.as_raw() + 500 * 4);
        arena.release().unwrap();
    }
}
