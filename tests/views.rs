//! Views of an author's allocated arena (`expand/phased.rs`) on the host: each knows its
//! buffer's shape at these sizes, narrows to a step's rows within the buffer and says which
//! buffer, how many rows and what capacity when asked for more; writable views of every
//! buffer are refused on a reuse slab, and a phase's view set holds exactly the buffers live
//! in that phase (reaching another is a compile error: `tests/ui/view_misuse.rs`).

use arena_runtime::{AllocOptions, Arena, HostDevice, ViewError};
use arena_tests::phased::{
    sizes, StepArena, StepArenaAttentionViews, StepArenaFfnViews, StepArenaLmHeadViews,
    StepArenaViews, StepArenaViewsMut,
};

#[test]
fn every_view_has_its_buffer_shape_address_and_length() {
    let sizes = sizes();
    let arena = StepArena::allocate(HostDevice::new(), &sizes).unwrap();
    let v = StepArenaViews::of(&arena).unwrap();
    assert_eq!(v.hidden_states.shape(), [16, 64]);
    assert_eq!(v.qkv.shape(), [16, 192]);
    assert_eq!(v.expert_ids.shape(), [16]);
    assert_eq!(v.gate_up.shape(), [16, 320]);
    assert_eq!(v.logits.shape(), [4, 1000]);
    assert_eq!(v.qkv.as_raw(), arena.qkv.as_raw());
    assert_eq!(v.qkv.len(), arena.qkv.len());
    assert_eq!(v.qkv.name(), "qkv");
    // `expert_ids` is 16 u32 = 64 bytes, floored to 256: the view holds the buffer's 64
    // elements, its shape stays the declared [16].
    assert_eq!(v.expert_ids.len(), 64);
    for (i, d) in StepArena::BUFFERS.iter().enumerate() {
        assert_eq!(StepArena::shape(&sizes, i).len(), d.rank, "{}", d.name);
    }
}

#[test]
fn rows_narrow_for_a_step_and_name_the_buffer_past_the_capacity() {
    let mut arena = StepArena::allocate(HostDevice::new(), &sizes()).unwrap();
    let v = StepArenaViews::of(&arena).unwrap();
    let step = v.qkv.rows(5).unwrap();
    assert_eq!(step.shape(), [5, 192]);
    assert_eq!(step.len(), 5 * 192);
    assert_eq!(step.as_raw(), v.qkv.as_raw());
    assert!(v.qkv.rows(0).unwrap().is_empty());
    let err = v.logits.rows(5).unwrap_err();
    assert_eq!(
        err,
        ViewError::Rows {
            buffer: "logits",
            rows: 5,
            capacity: 4
        }
    );
    assert_eq!(
        err.to_string(),
        "buffer `logits`: 5 rows asked, its capacity is 4 rows"
    );

    // Writable: write the first rows of `act` through the view, read them back through the
    // read-only set; a host slice of another length is refused.
    let mut w = StepArenaViewsMut::of(&mut arena).unwrap();
    let mut act = w.act.rows(2).unwrap();
    assert_eq!(act.byte_len(), 2 * 160 * 2);
    let bytes: Vec<u8> = (0..act.byte_len()).map(|i| i as u8).collect();
    act.write_bytes(&bytes).unwrap();
    assert_eq!(
        act.write_bytes(&bytes[1..]).unwrap_err(),
        ViewError::HostLength {
            buffer: "act",
            host: bytes.len() - 1,
            view: bytes.len()
        }
    );
    let read = StepArenaViews::of(&arena).unwrap();
    let mut back = vec![0u8; bytes.len()];
    read.act.rows(2).unwrap().read_bytes(&mut back).unwrap();
    assert_eq!(back, bytes);
    arena.release().unwrap();
}

/// On a reuse slab the sets of every buffer are refused, the writable one and the read-only
/// one alike (a buffer whose phase has ended holds the bytes of the one that reuses them, so
/// reading it would read another buffer's); a phase's set is not.
#[test]
fn views_of_every_buffer_are_refused_on_a_reuse_slab_and_phase_sets_are_not() {
    let mut arena =
        StepArena::allocate_with(HostDevice::new(), &sizes(), AllocOptions::reuse()).unwrap();
    assert_eq!(
        StepArenaViewsMut::of(&mut arena).map(|_| ()).unwrap_err(),
        ViewError::Reused { arena: "StepArena" }
    );
    assert_eq!(
        StepArenaViews::of(&arena).map(|_| ()).unwrap_err(),
        ViewError::Reused { arena: "StepArena" }
    );
    let attention = StepArenaAttentionViews::of(&mut arena);
    let ids = attention.expert_ids.as_raw();
    assert_eq!(attention.qkv.shape(), [16, 192]);
    assert_eq!(
        attention.hidden_states.shape(),
        [16, 64],
        "whole-step buffers are in every phase"
    );
    let ffn = StepArenaFfnViews::of(&mut arena);
    assert_eq!(ffn.expert_ids.as_raw(), ids, "live across attention..=ffn");
    assert_eq!(ffn.gate_up.shape(), [16, 320]);
    let lm_head = StepArenaLmHeadViews::of(&mut arena);
    // The phase's buffers are apart from each other, whatever other phases' buffers they
    // share bytes with.
    let (logits, hidden) = (&lm_head.logits, &lm_head.hidden_states);
    let apart = |a: u64, al: usize, b: u64, bl: usize| a + al as u64 <= b || b + bl as u64 <= a;
    assert!(apart(
        logits.as_raw(),
        logits.byte_len(),
        hidden.as_raw(),
        hidden.byte_len()
    ));
    arena.check_placement().unwrap();
    arena.release().unwrap();
}

/// A gated-off buffer's view is empty and has no shape, as its report row has none: narrowing
/// it by rows is `NoShape`, by a range only `0..0`.
#[test]
fn a_gated_off_buffer_has_an_empty_view_without_a_shape() {
    use arena_tests::example::{BufferArena, BufferArenaViews, BufferSizes, ModelConfig};
    let config = ModelConfig {
        hidden_size: 64,
        num_experts: 0,
        adapter_max_rank: 0,
    };
    let sizes = BufferSizes::from_config(&config, 16, 100);
    let arena = BufferArena::allocate(HostDevice::new(), &sizes).unwrap();
    let v = BufferArenaViews::of(&arena);
    assert!(v.lora_xa.is_empty() && v.lora_xa.shape().is_empty());
    assert_eq!(
        v.lora_xa.rows(1).unwrap_err(),
        ViewError::NoShape { buffer: "lora_xa" }
    );
    assert!(v.lora_xa.range(0..0).unwrap().is_empty());
    // Held at its floor: [16, 0] is 0 bytes, the buffer 256; the shape stays the declared one.
    assert_eq!(v.gate_logits_f32.shape(), [16, 0]);
    assert_eq!(v.gate_logits_f32.len(), 64);
    let report = arena_runtime::ArenaReport::new::<BufferArena>(&sizes).unwrap();
    assert!(report.buffers[2].shape.is_empty() && report.buffers[2].off);
    // The sizes say the same through the trait: no shape for the closed gate, the declared one
    // for the buffer held at its floor, whose bytes before the floor are 0.
    let index = |name| {
        BufferArena::BUFFERS
            .iter()
            .position(|d| d.name == name)
            .unwrap()
    };
    assert!(BufferArena::shape(&sizes, index("lora_xa")).is_empty());
    assert_eq!(
        BufferArena::shape(&sizes, index("gate_logits_f32")),
        [16, 0]
    );
    assert_eq!(BufferArena::raw_bytes(&sizes, index("gate_logits_f32")), 0);
    assert_eq!(sizes.gate_logits_f32, 256);
    arena.release().unwrap();
}
