//! Views of an author's allocated arena (`expand/phased.rs`) on the host: each knows its
//! buffer's shape at these sizes, narrows to a step's rows within the buffer and says which
//! buffer, how many rows and what capacity when asked for more; writable views of every
//! buffer are refused on a shared slab, and a phase's view set holds exactly the buffers live
//! in that phase (reaching another is a compile error: `tests/ui/view_misuse.rs`).

use arena_runtime::{AllocOptions, Arena, Device, HostDevice, ViewError};
use arena_tests::phased::{
    StepArena, StepArenaAttentionViews, StepArenaFfnViews, StepArenaLmHeadViews, StepArenaViews,
    StepArenaViewsMut, StepConfig, StepSizes,
};

const CONFIG: StepConfig = StepConfig {
    hidden: 64,
    intermediate: 160,
    vocab: 1000,
};

fn sizes() -> StepSizes {
    StepSizes::from_config(&CONFIG, 16, 4)
}

#[test]
fn every_view_has_its_buffer_shape_address_and_length() {
    let sizes = sizes();
    let arena = StepArena::allocate(HostDevice::new(), &sizes).unwrap();
    let v = StepArenaViews::of(&arena);
    assert_eq!(v.hidden_states.dims(), [16, 64]);
    assert_eq!(v.qkv.dims(), [16, 192]);
    assert_eq!(v.expert_ids.dims(), [16]);
    assert_eq!(v.gate_up.dims(), [16, 320]);
    assert_eq!(v.logits.dims(), [4, 1000]);
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
    let v = StepArenaViews::of(&arena);
    let step = v.qkv.rows(5).unwrap();
    assert_eq!(step.dims(), [5, 192]);
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

    // Writable: write the first rows of `act` through the view, read them back.
    let mut w = StepArenaViewsMut::of(&mut arena).unwrap();
    let act = w.act.rows(2).unwrap();
    let bytes = vec![7u8; act.byte_len()];
    // SAFETY: the view's bytes, inside a live buffer of this arena.
    unsafe { act.device().write(act.as_raw(), &bytes) }.unwrap();
    let mut back = vec![0u8; act.byte_len()];
    // SAFETY: as above.
    unsafe { act.device().read(act.as_raw(), &mut back) }.unwrap();
    assert_eq!(back, bytes);
    assert_eq!(act.byte_len(), 2 * 160 * 2);
    arena.release().unwrap();
}

#[test]
fn writable_views_of_every_buffer_are_refused_on_a_shared_slab_and_phase_sets_are_not() {
    let mut arena =
        StepArena::allocate_with(HostDevice::new(), &sizes(), AllocOptions::shared()).unwrap();
    assert_eq!(
        StepArenaViewsMut::of(&mut arena).map(|_| ()).unwrap_err(),
        ViewError::Shared { arena: "StepArena" }
    );
    let attention = StepArenaAttentionViews::of(&mut arena);
    let ids = attention.expert_ids.as_raw();
    assert_eq!(attention.qkv.dims(), [16, 192]);
    assert_eq!(
        attention.hidden_states.dims(),
        [16, 64],
        "whole-step buffers are in every phase"
    );
    let ffn = StepArenaFfnViews::of(&mut arena);
    assert_eq!(ffn.expert_ids.as_raw(), ids, "live across attention..=ffn");
    assert_eq!(ffn.gate_up.dims(), [16, 320]);
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
