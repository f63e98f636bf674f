//! The derive's promises on the README's example arena and on an arena with derived values
//! and regions: formulas, floors, gates, tracking, checked arithmetic, placement, release.

use arena_runtime::{
    AllocMode, AllocOptions, Arena, ArenaError, CountingDevice, DeviceError, GuardError,
    HostDevice, SizeError,
};
use arena_tests::example::{BufferArena, BufferSizes, ModelConfig};
use arena_tests::scratch::{AttnScratch, BlockArena, BlockSizes, Shapes};

fn config(experts: usize, rank: usize) -> ModelConfig {
    ModelConfig {
        hidden_size: 64,
        num_experts: experts,
        adapter_max_rank: rank,
    }
}

#[test]
fn formulas_give_the_declared_bytes() {
    let s = BufferSizes::from_config(&config(8, 4), 10, 100);
    assert_eq!(s.hidden_states, 10 * 64 * 2);
    assert_eq!(s.gate_logits_f32, 10 * 8 * 4);
    assert_eq!(s.lora_xa, 10 * 4 * 2);
    assert_eq!(s.side_scratch, 64 * 4 + 100);
}

#[test]
fn floors_gates_and_untracked() {
    let s = BufferSizes::from_config(&config(0, 0), 10, 100);
    assert_eq!(s.gate_logits_f32, 256, "the floor holds without experts");
    assert_eq!(s.lora_xa, 0, "gated off");
    assert_eq!(
        s.total_bytes(),
        s.hidden_states + s.gate_logits_f32 + s.lora_xa
    );
    let tracked: usize = s
        .buffers()
        .iter()
        .filter(|b| b.decl.tracked)
        .map(|b| b.bytes)
        .sum();
    assert_eq!(s.total_bytes(), tracked);
    assert!(
        !s.buffers()
            .iter()
            .find(|b| b.decl.name == "side_scratch")
            .unwrap()
            .decl
            .tracked
    );
}

#[test]
fn descriptors_carry_the_declaration() {
    let s = BufferSizes::from_config(&config(8, 4), 10, 100);
    let infos = s.buffers();
    let names: Vec<_> = infos.iter().map(|b| b.decl.name).collect();
    assert_eq!(
        names,
        [
            "hidden_states",
            "gate_logits_f32",
            "lora_xa",
            "side_scratch"
        ]
    );
    let lora = &infos[2];
    assert!(
        lora.decl.gated() && !infos[0].decl.gated(),
        "gated exactly when declared with a gate"
    );
    assert_eq!(lora.decl.dtype, "bf16");
    assert_eq!(
        lora.decl.formula,
        "[max_batch_tokens, config.adapter_max_rank]"
    );
    assert_eq!(lora.decl.gate, Some("config.adapter_max_rank > 0"));
    assert_eq!(
        lora.decl.doc,
        "LoRA shrink output; 0 when the model serves no adapters."
    );
    assert_eq!(infos[1].decl.min_bytes, Some("256"));
    // Doc lines arrive as the compiler gives them: quotes, non-ASCII and backslashes intact.
    assert_eq!(
        infos[0].decl.doc,
        "Hidden states of the current pass, \"[M, hidden]\" · BF16."
    );
    assert_eq!(
        infos[3].decl.doc,
        "Scratch with its own byte formula (C:\\scratch), left out of the preflight total."
    );
    assert_eq!(lora.elements(), 40);
}

#[test]
fn overflow_is_an_error_naming_the_buffer() {
    let err = BufferSizes::try_from_config(&config(8, 4), usize::MAX / 2, 1).unwrap_err();
    assert_eq!(err.buffer(), "hidden_states");
    assert!(
        matches!(err, SizeError::Overflow { op: "*", .. }),
        "{err:?}"
    );
    let panic =
        std::panic::catch_unwind(|| BufferSizes::from_config(&config(8, 4), usize::MAX / 2, 1));
    let message = panic.unwrap_err().downcast::<String>().unwrap();
    assert_eq!(
        *message,
        err.to_string(),
        "from_config panics with try_from_config's message"
    );
}

#[test]
fn an_ungated_buffer_of_zero_bytes_is_an_error() {
    let err = BufferSizes::try_from_config(&config(8, 4), 0, 1).unwrap_err();
    assert_eq!(
        err,
        SizeError::Zero {
            buffer: "hidden_states"
        }
    );
}

#[test]
fn derived_values_and_helpers() {
    let shapes = Shapes {
        hidden: 100,
        heads: 4,
        head_dim: 32,
    };
    let s = BlockSizes::from_config(&shapes, 17);
    assert_eq!(s.act_fp8, 32 * 128, "ceil16(17) rows of max(100, 4 * 32)");
    assert_eq!(s.act_scale, 32 * 4);
    assert_eq!(
        s.attn_scratch,
        AttnScratch::layout(&shapes, 17).unwrap().total_bytes
    );
    assert_eq!(s.token_ids, 256);
    let off = BlockSizes::from_config(&Shapes { heads: 0, ..shapes }, 17);
    assert_eq!(off.attn_scratch, 0);
}

#[test]
fn a_region_layout_overflow_names_the_region() {
    let shapes = Shapes {
        hidden: 1,
        heads: 1 << 20,
        head_dim: 1,
    };
    let err = AttnScratch::layout(&shapes, 1 << 30).unwrap_err();
    assert_eq!(err.buffer(), "AttnScratch.scores");
    // Through the arena, the same error is nested under the buffer that asked for the layout.
    let err = BlockSizes::try_from_config(
        &Shapes {
            hidden: 1,
            heads: 1 << 40,
            head_dim: 0,
        },
        1 << 20,
    )
    .unwrap_err();
    assert_eq!(err.buffer(), "attn_scratch");
    assert!(matches!(err, SizeError::Nested { .. }), "{err:?}");
}

#[test]
fn regions_are_disjoint_aligned_and_carved_from_the_buffer() {
    let shapes = Shapes {
        hidden: 100,
        heads: 3,
        head_dim: 32,
    };
    let layout = AttnScratch::layout(&shapes, 5).unwrap();
    let regions = layout.regions();
    for w in regions.windows(2) {
        assert!(w[0].1.end() <= w[1].1.offset);
    }
    for (_, r) in &regions {
        assert_eq!(r.offset % 128, 0);
    }
    assert_eq!(layout.total_bytes, regions.last().unwrap().1.end());
    let s = BlockSizes::from_config(&shapes, 5);
    let arena = BlockArena::allocate(HostDevice::new(), &s).unwrap();
    let carved = AttnScratch::carve(arena.attn_scratch, &layout).unwrap();
    assert_eq!(carved.scores.as_raw(), arena.attn_scratch.as_raw());
    assert_eq!(
        carved.probs.as_raw(),
        arena.attn_scratch.as_raw() + layout.probs.offset as u64
    );
    assert_eq!(carved.row_max.len(), 5 * 3);
    let short = arena_runtime::DevicePtr::<u8>::from_raw_parts(
        arena.attn_scratch.as_raw(),
        layout.total_bytes - 1,
    );
    assert!(AttnScratch::carve(short, &layout).is_err());
}

fn assert_placed(
    arena: &arena_runtime::Allocated<BufferArena, impl arena_runtime::Device>,
    sizes: &BufferSizes,
) {
    arena.check_placement().unwrap();
    assert_eq!(arena.hidden_states.byte_len(), sizes.hidden_states);
    assert_eq!(arena.gate_logits_f32.byte_len(), sizes.gate_logits_f32);
    assert_eq!(arena.side_scratch.byte_len(), sizes.side_scratch);
}

#[test]
fn slab_offsets_aligned_disjoint_inside_and_gated_null() {
    let sizes = BufferSizes::from_config(&config(3, 0), 7, 33);
    let device = CountingDevice::new(HostDevice::new());
    let arena = BufferArena::allocate(device.clone(), &sizes).unwrap();
    assert_eq!(device.live_allocations(), 1, "one slab");
    assert!(arena.lora_xa.is_null());
    assert_placed(&arena, &sizes);
    assert!(arena.allocated_bytes() >= sizes.total_bytes() + sizes.side_scratch);
    arena.release().unwrap();
    assert_eq!(device.live_allocations(), 0);
    assert_eq!(device.frees(), 1);
}

#[test]
fn per_buffer_mode_allocates_each_non_empty_buffer() {
    let sizes = BufferSizes::from_config(&config(3, 2), 7, 33);
    let device = CountingDevice::new(HostDevice::new());
    let arena =
        BufferArena::allocate_with(device.clone(), &sizes, AllocOptions::per_buffer()).unwrap();
    assert_eq!(arena.mode(), AllocMode::PerBuffer);
    assert_eq!(device.live_allocations(), 4);
    assert_placed(&arena, &sizes);
    drop(arena);
    assert_eq!(device.live_allocations(), 0, "drop releases");
}

#[test]
fn every_byte_of_every_buffer_is_writable_and_private() {
    let sizes = BufferSizes::from_config(&config(3, 2), 7, 33);
    let arena = BufferArena::allocate(HostDevice::new(), &sizes).unwrap();
    let placements = arena.placements().to_vec();
    for (i, p) in placements.iter().enumerate() {
        // SAFETY: the buffer is live and this test is its only user.
        unsafe { HostDevice::slice_mut(p.addr, p.bytes) }.fill(i as u8 + 1);
    }
    for (i, p) in placements.iter().enumerate() {
        let bytes = unsafe { HostDevice::slice_mut(p.addr, p.bytes) };
        assert!(
            bytes.iter().all(|&b| b == i as u8 + 1),
            "{} was overwritten",
            p.decl.name
        );
    }
}

#[test]
fn failure_at_every_allocation_leaves_nothing_allocated() {
    let sizes = BufferSizes::from_config(&config(3, 2), 7, 33);
    let non_empty = BufferArena::byte_sizes(&sizes)
        .iter()
        .filter(|&&b| b > 0)
        .count();
    assert_eq!(
        CountingDevice::check_every_allocation_failure::<BufferArena>(HostDevice::new, &sizes),
        Ok(non_empty + 1)
    );
    // With a gated-off buffer: empty buffers are never allocated, so never failed.
    let gated_off = BufferSizes::from_config(&config(3, 0), 7, 33);
    assert_eq!(gated_off.lora_xa, 0);
    assert_eq!(
        CountingDevice::check_every_allocation_failure::<BufferArena>(HostDevice::new, &gated_off),
        Ok(3 + 1)
    );
    let device = CountingDevice::new(HostDevice::new());
    device.fail_at(1);
    let err = BufferArena::allocate(device.clone(), &sizes).unwrap_err();
    assert!(
        err.to_string().contains("the 4-buffer slab of BufferArena"),
        "{err}"
    );
    assert_eq!(device.live_allocations(), 0);
}

#[test]
fn release_is_exactly_once_and_drop_after_release_is_harmless() {
    let sizes = BufferSizes::from_config(&config(3, 2), 7, 33);
    let device = CountingDevice::new(HostDevice::new());
    let arena =
        BufferArena::allocate_with(device.clone(), &sizes, AllocOptions::per_buffer()).unwrap();
    let allocated = device.allocations();
    arena.release().unwrap(); // consumes the handle: a second release does not compile
    assert_eq!(device.frees(), allocated);
    assert_eq!(device.live_allocations(), 0);
    assert_eq!(device.live_bytes(), 0);
}

#[test]
fn guard_bands_catch_an_overrun_and_name_the_buffer() {
    let sizes = BufferSizes::from_config(&config(3, 2), 7, 33);
    for options in [AllocOptions::default(), AllocOptions::per_buffer()] {
        let device = CountingDevice::new(HostDevice::new());
        let arena =
            BufferArena::allocate_with(device.clone(), &sizes, options.with_guard_bytes(64))
                .unwrap();
        arena.check_guards().unwrap();
        let p = arena.gate_logits_f32;
        // One element past the end.
        unsafe { HostDevice::slice_mut(p.as_raw() + p.byte_len() as u64, 4) }.fill(0);
        assert_eq!(
            arena.check_guards(),
            Err(GuardError::Overrun {
                buffers: vec!["gate_logits_f32"]
            })
        );
        arena.release().unwrap();
        assert_eq!(device.live_allocations(), 0);
    }
    let arena = BufferArena::allocate(HostDevice::new(), &sizes).unwrap();
    assert_eq!(arena.check_guards(), Err(GuardError::Disabled));
}

#[test]
fn size_macro_checks_like_a_formula() {
    let a = 3usize;
    assert_eq!(arena_runtime::size!(a * 4 + ceil16(a)), Ok(28));
    let big = usize::MAX;
    assert!(arena_runtime::size!(big * 2).is_err());
}

#[test]
fn the_named_inputs_size_exactly_as_the_positional_ones() {
    use arena_tests::example::BufferArenaInputs;
    for (m, seq) in [(1, 1), (8192, 131072), (12345, 7)] {
        let c = config(8, 16);
        let named = BufferArenaInputs {
            max_batch_tokens: m,
            max_seq_len: seq,
        };
        assert_eq!(
            BufferSizes::from_inputs(&c, &named),
            BufferSizes::from_config(&c, m, seq)
        );
        assert_eq!(
            BufferSizes::try_from_inputs(
                &c,
                &BufferArenaInputs {
                    max_batch_tokens: usize::MAX,
                    ..named
                }
            ),
            BufferSizes::try_from_config(&c, usize::MAX, seq)
        );
    }
}

#[test]
fn a_total_that_overflows_is_an_error_naming_the_buffer_where_it_does() {
    let mut sizes = BufferSizes::from_config(&config(3, 2), 7, 33);
    sizes.hidden_states = usize::MAX - 8;
    assert_eq!(
        BufferArena::checked_tracked_total(&sizes),
        Err(SizeError::TotalOverflow {
            buffer: "gate_logits_f32"
        }),
        "the first tracked buffer after hidden_states tips the sum over"
    );
    assert_eq!(
        sizes.total_bytes(),
        usize::MAX,
        "the report total saturates"
    );
    let fits = BufferSizes::from_config(&config(3, 2), 7, 33);
    assert_eq!(
        BufferArena::checked_tracked_total(&fits),
        Ok(fits.total_bytes())
    );
    assert!(fits.total_bytes() > 0);
}

/// A device whose frees fail: what an engine sees when its driver refuses a free.
struct FreeFails(HostDevice);

impl arena_runtime::Device for FreeFails {
    fn name(&self) -> String {
        "free-fails".into()
    }
    fn alloc(&self, bytes: usize) -> Result<u64, DeviceError> {
        self.0.alloc(bytes)
    }
    unsafe fn free(&self, _addr: u64, _bytes: usize) -> Result<(), DeviceError> {
        Err(DeviceError::Unsupported("free"))
    }
}

#[test]
fn release_reports_a_failed_free_instead_of_losing_it() {
    let sizes = BufferSizes::from_config(&config(3, 2), 7, 33);
    let arena = BufferArena::allocate(FreeFails(HostDevice::new()), &sizes).unwrap();
    let shown = format!("{arena:?}");
    assert!(
        shown.contains("Allocated") && shown.contains("BufferArena") && shown.contains("Slab"),
        "{shown}"
    );
    let err = arena.release().unwrap_err();
    assert!(
        matches!(&err, ArenaError::Free { device, .. } if device == "free-fails"),
        "{err:?}"
    );
    assert!(err.to_string().contains("BufferArena"), "{err}");
}

#[test]
fn the_fault_injection_check_reports_a_leak() {
    let sizes = BufferSizes::from_config(&config(3, 2), 7, 33);
    let report = CountingDevice::check_every_allocation_failure::<BufferArena>(
        || FreeFails(HostDevice::new()),
        &sizes,
    );
    let err = report.unwrap_err();
    assert!(err.contains("leaked"), "{err}");
}

/// An arena whose every buffer is gated, for a config that closes every gate.
mod all_gated {
    use arena_runtime::{dtype::bf16, Arena, DevicePtr};

    pub struct Cfg {
        pub on: bool,
        pub n: usize,
    }

    #[derive(Arena)]
    #[arena(sizes = GatedSizes, inputs(c: &Cfg))]
    pub struct Gated {
        /// Elements, on when the config says so.
        #[buffer(shape = [c.n], gate = c.on)]
        pub a: DevicePtr<bf16>,
        /// Bytes, on when the config says so.
        #[buffer(bytes = c.n, gate = c.on)]
        pub b: DevicePtr<u8>,
    }
}

#[test]
fn an_arena_whose_every_buffer_is_off_allocates_nothing() {
    use all_gated::{Cfg, Gated, GatedSizes};
    let sizes = GatedSizes::from_config(&Cfg { on: false, n: 64 });
    assert_eq!((sizes.a, sizes.b), (0, 0));
    let device = CountingDevice::new(HostDevice::new());
    let arena = Gated::allocate(device.clone(), &sizes).unwrap();
    assert_eq!(device.allocations(), 0, "no zero-byte slab is asked for");
    assert!(arena.a.is_null() && arena.b.is_null() && arena.allocations().is_empty());
    arena.release().unwrap();
}

#[test]
fn a_pointer_copy_is_the_same_pointer() {
    let sizes = BufferSizes::from_config(&config(3, 2), 7, 33);
    let arena = BufferArena::allocate(HostDevice::new(), &sizes).unwrap();
    #[allow(clippy::clone_on_copy)]
    let copy = arena.hidden_states.clone();
    assert_eq!(copy, arena.hidden_states);
    assert!(!copy.is_null());
    arena.release().unwrap();
}

/// Sizes edited by hand into ones the formulas could not give are refused before anything is
/// allocated, naming the buffer and the rule: an ungated buffer at 0 (it would be NULL), a
/// size that is not whole elements, a size under its shape, a size under a numeric floor. A
/// closed gate's 0 is fine.
#[test]
fn sizes_the_formulas_could_not_give_are_refused() {
    let good = BufferSizes::from_config(&config(8, 4), 10, 100);
    let refused = |edit: fn(&mut BufferSizes)| {
        let mut s = good;
        edit(&mut s);
        let device = CountingDevice::new(HostDevice::new());
        let err = BufferArena::allocate(device.clone(), &s)
            .map(|_| ())
            .unwrap_err();
        assert_eq!(device.allocations(), 0, "nothing was allocated");
        let ArenaError::Sizes { arena, source } = err else {
            panic!("not a sizes error: {err}")
        };
        assert_eq!(arena, "BufferArena");
        assert_eq!(BufferArena::check_sizes(&s), Err(source.clone()));
        source
    };
    let e = refused(|s| s.hidden_states = 0);
    assert_eq!((e.buffer, e.bytes), ("hidden_states", 0));
    assert!(e.to_string().contains("not gated"), "{e}");
    let e = refused(|s| s.gate_logits_f32 = 3);
    assert_eq!((e.buffer, e.bytes), ("gate_logits_f32", 3));
    assert!(e.to_string().contains("`f32` elements of 4 bytes"), "{e}");
    let e = refused(|s| s.gate_logits_f32 = 128);
    assert!(
        e.to_string()
            .contains("its shape [10, 8] of `f32` needs 320 bytes"),
        "{e}"
    );
    // Without experts the shape is [10, 0], 0 bytes: the floor of 256 is what the buffer holds.
    let mut no_experts = BufferSizes::from_config(&config(0, 4), 10, 100);
    assert_eq!(no_experts.gate_logits_f32, 256);
    no_experts.gate_logits_f32 = 128;
    let e = BufferArena::check_sizes(&no_experts).unwrap_err();
    assert!(e.to_string().contains("floor is 256 bytes"), "{e}");

    let mut closed = good;
    closed.lora_xa = 0;
    assert_eq!(BufferArena::check_sizes(&closed), Ok(()));
    let arena = BufferArena::allocate(HostDevice::new(), &closed).unwrap();
    assert!(arena.lora_xa.is_null());
    assert_eq!(arena.check_placement(), Ok(()));
    arena.release().unwrap();
}
