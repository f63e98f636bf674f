//! The serving loop's bookkeeping on the host: block tables over a free list of exactly the
//! planned blocks, state slots reused in turn, and a scheduler that keeps every step within
//! `max_batch_tokens` and `max_batch_size`, makes a sequence wait for blocks rather than
//! allocate, and gives every block and slot back when the sequences finish.

use arena_spec::serving::{
    BlockPool, BlockTable, Limits, PagingError, Request, Scheduler, SlotPool,
};
use proptest::prelude::*;
use std::collections::BTreeSet;

#[test]
fn a_block_table_takes_blocks_as_its_tokens_need_them() {
    let mut pool = BlockPool::new(4);
    let mut table = BlockTable::default();
    assert!(table.grow(17, 16, &mut pool));
    assert_eq!((table.blocks(), pool.free()), (&[0, 1][..], 2));
    assert!(
        table.grow(15, 16, &mut pool),
        "32 tokens still fit two blocks"
    );
    assert_eq!(table.blocks().len(), 2);
    // Token 17 is block 1's row 1: slot 1 · 16 + 1.
    assert_eq!(table.slot_of(17, 16), Some(17));
    assert_eq!(table.slot_of(32, 16), None);
    // 40 more tokens need 3 blocks; 2 are free: nothing is taken.
    assert!(!table.grow(40, 16, &mut pool));
    assert_eq!((table.tokens(), pool.free()), (32, 2));
    table.release(&mut pool).unwrap();
    assert_eq!((table.tokens(), pool.free()), (0, 4));
}

#[test]
fn a_block_not_held_is_refused_back() {
    let mut pool = BlockPool::new(2);
    let taken = pool.take(1).unwrap();
    assert_eq!(pool.give_back(&[1]), Err(PagingError::NotHeld { block: 1 }));
    assert_eq!(pool.give_back(&[7]), Err(PagingError::NotHeld { block: 7 }));
    assert_eq!(
        pool.give_back(&[taken[0], taken[0]]),
        Err(PagingError::NotHeld { block: 0 })
    );
    pool.give_back(&taken).unwrap();
    assert_eq!(pool.free(), 2);
}

/// A freed slot goes to the back of the queue: the slots are used in turn, wrapping around.
#[test]
fn state_slots_are_reused_in_turn() {
    let mut slots = SlotPool::new(3);
    let (a, b) = (slots.take().unwrap(), slots.take().unwrap());
    slots.give_back(a).unwrap();
    assert_eq!(slots.take(), Some(2));
    assert_eq!(slots.take(), Some(a));
    assert_eq!(slots.take(), None);
    assert_eq!(
        slots.give_back(9),
        Err(PagingError::SlotNotHeld { slot: 9 })
    );
    slots.give_back(b).unwrap();
    assert_eq!(
        slots.give_back(b),
        Err(PagingError::SlotNotHeld { slot: b })
    );
}

fn limits(tokens: usize, sequences: usize, blocks: usize) -> Limits {
    Limits {
        max_batch_tokens: tokens,
        max_batch_size: sequences,
        block_tokens: 16,
        blocks,
        state_slots: true,
    }
}

/// Two running sequences decode while a third's prompt is prefilled in chunks of what the
/// step has left; every step's packed positions and `cu_seqlens` follow the batch.
#[test]
fn decode_tokens_go_first_then_prefill_chunks_fill_the_step() {
    let mut s = Scheduler::new(limits(64, 4, 64));
    s.add(Request {
        id: 1,
        prompt: 40,
        max_new_tokens: 3,
    });
    s.add(Request {
        id: 2,
        prompt: 20,
        max_new_tokens: 3,
    });
    let first = s.schedule();
    // 40 of the first prompt, then 20 of the second's within 64.
    assert_eq!(first.tokens(), 60);
    assert_eq!(first.cu_seqlens(), [0, 40, 60]);
    s.complete(&first).unwrap();
    s.add(Request {
        id: 3,
        prompt: 100,
        max_new_tokens: 1,
    });
    let second = s.schedule();
    let parts: Vec<(u64, usize, usize, bool)> = second
        .scheduled
        .iter()
        .map(|x| (x.id, x.start, x.tokens, x.prefill))
        .collect();
    assert_eq!(
        parts,
        [(1, 40, 1, false), (2, 20, 1, false), (3, 0, 62, true)]
    );
    assert_eq!(second.positions()[..3], [40, 20, 0]);
    s.complete(&second).unwrap();
    let third = s.schedule();
    assert_eq!(
        third.scheduled.last().map(|x| (x.id, x.start, x.tokens)),
        Some((3, 62, 38))
    );
}

/// With the pool's blocks all held, a sequence that needs one waits; when the others finish
/// and give theirs back, it runs; at the end every block and slot is free again.
#[test]
fn a_sequence_waits_for_blocks_and_never_allocates() {
    // 4 blocks of 16: two sequences of 32-token prompts hold all of them.
    let mut s = Scheduler::new(limits(128, 4, 4));
    s.add(Request {
        id: 1,
        prompt: 32,
        max_new_tokens: 1,
    });
    s.add(Request {
        id: 2,
        prompt: 32,
        max_new_tokens: 1,
    });
    s.add(Request {
        id: 3,
        prompt: 16,
        max_new_tokens: 2,
    });
    let first = s.schedule();
    assert_eq!(
        first.scheduled.iter().map(|x| x.id).collect::<Vec<_>>(),
        [1, 2]
    );
    assert_eq!(s.free_blocks(), 0);
    assert_eq!(s.complete(&first).unwrap(), [1, 2]);
    assert_eq!(s.free_blocks(), 4);
    let second = s.schedule();
    assert_eq!(
        second.scheduled.iter().map(|x| x.id).collect::<Vec<_>>(),
        [3]
    );
    s.complete(&second).unwrap();
    // Its decode token opens its second block.
    let third = s.schedule();
    assert_eq!((third.tokens(), s.free_blocks()), (1, 2));
    assert_eq!(s.complete(&third).unwrap(), [3]);
    assert!(s.is_idle());
    assert_eq!(s.free_blocks(), 4);
}

/// The step's metadata in the arena's element types: positions, KV slots (block · 16 + row),
/// `cu_seqlens`, the cached lengths after the step, and block tables padded to the width.
#[test]
fn a_step_s_metadata_follows_its_block_tables() {
    let mut s = Scheduler::new(limits(64, 4, 8));
    s.add(Request {
        id: 1,
        prompt: 17,
        max_new_tokens: 3,
    });
    let first = s.schedule();
    s.complete(&first).unwrap();
    s.add(Request {
        id: 2,
        prompt: 3,
        max_new_tokens: 1,
    });
    let step = s.schedule();
    let m = s.metadata(&step, 4).unwrap();
    // Sequence 1 decodes position 17 (block 1, row 1); sequence 2 prefills 3 tokens in block 2.
    assert_eq!(m.positions, [17, 0, 1, 2]);
    assert_eq!(m.slots, [17, 32, 33, 34]);
    assert_eq!(m.cu_seqlens, [0, 1, 4]);
    assert_eq!(m.kv_lens, [18, 3]);
    assert_eq!(m.block_tables, [0, 1, 0, 0, 2, 0, 0, 0]);
    assert!(
        s.metadata(&step, 1).is_none(),
        "sequence 1's two blocks do not fit a width of 1"
    );
}

proptest! {
    /// Any mix of requests served to the end, the pool large enough for every sequence that
    /// may run at once (at most 6 blocks each): no step over its token or sequence limit, no
    /// block held by two running sequences, never more blocks held than the pool has, every
    /// request finished, and every block free at the end.
    #[test]
    fn every_step_keeps_to_the_plan_and_every_block_comes_back(
        requests in prop::collection::vec((1usize..80, 1usize..6), 1..12),
        tokens in 16usize..96,
        sequences in 1usize..5,
        spare in 0usize..16,
    ) {
        let blocks = sequences * 6 + spare;
        let mut s = Scheduler::new(limits(tokens, sequences, blocks));
        for (i, &(prompt, new)) in requests.iter().enumerate() {
            s.add(Request { id: i as u64, prompt, max_new_tokens: new });
        }
        let mut done = BTreeSet::new();
        for _ in 0..10_000 {
            if s.is_idle() {
                break;
            }
            let batch = s.schedule();
            prop_assert!(batch.tokens() <= tokens);
            prop_assert!(batch.scheduled.len() <= sequences);
            let mut held = BTreeSet::new();
            for x in &batch.scheduled {
                let table = s.block_table(x.id).unwrap();
                for &b in table.blocks() {
                    prop_assert!(held.insert(b), "block {} held twice", b);
                }
            }
            prop_assert!(held.len() + s.free_blocks() <= blocks);
            let m = s.metadata(&batch, 8).unwrap();
            let slots: BTreeSet<i64> = m.slots.iter().copied().collect();
            prop_assert_eq!(slots.len(), batch.tokens(), "a KV slot written twice in a step");
            prop_assert!(m.slots.iter().all(|&x| held.contains(&((x / 16) as u32))));
            prop_assert!(!batch.scheduled.is_empty(), "a step with nothing to run");
            done.extend(s.complete(&batch).unwrap());
        }
        prop_assert_eq!(done.len(), requests.len());
        prop_assert_eq!(s.free_blocks(), blocks);
    }
}

/// No preemption: two sequences whose next tokens each need a block the full pool does not
/// have stall (an empty step), and say so by running nothing rather than by allocating.
#[test]
fn sequences_that_outgrow_the_pool_stall_without_allocating() {
    let mut s = Scheduler::new(limits(64, 2, 2));
    s.add(Request {
        id: 1,
        prompt: 16,
        max_new_tokens: 4,
    });
    s.add(Request {
        id: 2,
        prompt: 16,
        max_new_tokens: 4,
    });
    let first = s.schedule();
    assert_eq!((first.tokens(), s.free_blocks()), (32, 0));
    s.complete(&first).unwrap();
    let stalled = s.schedule();
    assert!(stalled.scheduled.is_empty() && !s.is_idle());
    assert_eq!(s.free_blocks(), 0);
}
