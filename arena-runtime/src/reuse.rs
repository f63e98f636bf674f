//! Phase reuse: buffers whose live phases never overlap share bytes of one slab.
//!
//! An arena lists its step's phases in order (`#[arena(phases(...))]`); each buffer is live
//! in one phase, a contiguous range of them, or the whole step ([`Live`]). Two buffers may
//! share a byte only when no phase has both live. [`ReusePlan::new`] places them with the
//! greedy-by-size rule of TFLite's arena planner (largest first, each into the smallest gap
//! between already-placed buffers it conflicts with, else after the last of them), and
//! reports the lower bound of XLA's heap simulator: no placement can take less than the
//! largest sum of live bytes over the phases.

use crate::error::SizeError;

mod greedy;

/// When a buffer is live during a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Live {
    /// Every phase: the buffer's bytes are never reused (the default).
    WholeStep,
    /// Phases `first..=last` of the arena's list.
    Phases { first: usize, last: usize },
}

impl Live {
    /// Whether the two are live in a common phase.
    pub const fn overlaps(self, other: Live) -> bool {
        match (self, other) {
            (Live::WholeStep, _) | (_, Live::WholeStep) => true,
            // A backwards range (only a hand-written `BufferDecl` can hold one) is live nowhere.
            (Live::Phases { first: a, last: b }, Live::Phases { first: c, last: d }) => {
                a <= b && c <= d && a <= d && c <= b
            }
        }
    }

    /// Whether the buffer becomes live as phase `phase` begins (a whole-step buffer at the
    /// first phase): when a step writes it first. (Poison mode fills only the buffers of
    /// phases, never a whole-step one: `Allocated::poison_phase`.)
    pub const fn starts_at(self, phase: usize) -> bool {
        match self {
            Live::WholeStep => phase == 0,
            Live::Phases { first, .. } => first == phase,
        }
    }

    /// Whether the buffer is live in phase `phase`.
    pub const fn contains(self, phase: usize) -> bool {
        match self {
            Live::WholeStep => true,
            Live::Phases { first, last } => first <= phase && phase <= last,
        }
    }
}

/// The reuse slab of an arena's sizes as the const sizing path plans it
/// (`Sizes::reuse_bytes()` under `#[arena(const)]`): the run-time planner's own code
/// ([`ReusePlan::new`]), at `AllocOptions::reuse()`'s 256-byte alignment without guard bands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReuseBytes {
    /// Bytes the reuse slab needs: `ReusePlan::footprint`.
    pub footprint: usize,
    /// No placement can need less: `ReusePlan::lower_bound`.
    pub lower_bound: usize,
    /// The phase whose live buffers set the lower bound (`None` without phases).
    pub fullest_phase: Option<&'static str>,
}

impl ReuseBytes {
    /// Plans `sizes` (one per declaration of `decls`, whose `live` ranges count over
    /// `phases`) in const evaluation, panicking with a message naming `arena` and the buffer
    /// where an offset overflows: what the generated `reuse_bytes` calls.
    #[doc(hidden)]
    pub const fn plan<const N: usize>(
        arena: &'static str,
        decls: &[crate::BufferDecl],
        phases: &[&'static str],
        sizes: &[usize; N],
    ) -> ReuseBytes {
        let mut names = [""; N];
        let mut live = [Live::WholeStep; N];
        let mut i = 0;
        while i < N && i < decls.len() {
            names[i] = decls[i].name;
            live[i] = decls[i].live;
            i += 1;
        }
        let [mut reserved, mut order, mut po, mut pe, mut pi, mut current, mut best] = [[0; N]; 7];
        let result = greedy::plan(
            &names,
            sizes,
            &live,
            phases.len(),
            256,
            0,
            &mut greedy::Scratch {
                reserved: &mut reserved,
                order: &mut order,
                placed_offset: &mut po,
                placed_end: &mut pe,
                placed_index: &mut pi,
                current: &mut current,
                best: &mut best,
            },
        );
        let bounds = match &result {
            Ok(b) => *b,
            Err(_) => crate::const_eval::Message::new()
                .text("arena `")
                .text(arena)
                .text("`, const sizing: the reuse slab's offsets overflow usize")
                .panic(),
        };
        // Moved on every path: a `const fn` cannot run `SizeError`'s destructor.
        core::mem::forget(result);
        ReuseBytes {
            footprint: bounds.footprint,
            lower_bound: bounds.lower_bound,
            fullest_phase: match bounds.fullest_phase {
                Some(p) if p < phases.len() => Some(phases[p]),
                _ => None,
            },
        }
    }
}

/// Where each buffer sits in a reuse slab, and what that saves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReusePlan {
    /// Byte offset of each buffer, `None` for a buffer of 0 bytes.
    pub offsets: Vec<Option<usize>>,
    /// Bytes the reuse slab needs.
    pub footprint: usize,
    /// No placement can need less: over the phases, the largest sum of the live buffers'
    /// extents (each rounded up to the alignment, but for the padding of the last).
    pub lower_bound: usize,
    /// The plain slab, every buffer apart (`SlabPlan`'s total): what reuse is measured
    /// against.
    pub slab: usize,
}

impl ReusePlan {
    /// Plans `sizes` (with their `live` ranges over `phases` phases), every buffer at an
    /// offset aligned to `align` (a power of two) and followed by `guard` bytes of guard band,
    /// which are as private as the buffer.
    pub fn new(
        names: &[&'static str],
        sizes: &[usize],
        live: &[Live],
        phases: usize,
        align: usize,
        guard: usize,
    ) -> Result<ReusePlan, SizeError> {
        debug_assert!(align.is_power_of_two());
        debug_assert!(names.len() == sizes.len() && sizes.len() == live.len());
        let slab = crate::slab::SlabPlan::new(names, sizes, align, guard)?.total;
        let n = sizes.len();
        let mut scratch = greedy::Scratch::vectors(n);
        let mut s = greedy::Scratch::over(&mut scratch);
        let bounds = greedy::plan(names, sizes, live, phases, align, guard, &mut s)?;
        let offsets = s
            .best
            .iter()
            .map(|&o| (o != greedy::NONE).then_some(o))
            .collect();
        Ok(ReusePlan {
            offsets,
            footprint: bounds.footprint,
            lower_bound: bounds.lower_bound,
            slab,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Live = Live::WholeStep;
    const fn p(first: usize, last: usize) -> Live {
        Live::Phases { first, last }
    }

    #[test]
    fn live_ranges_begin_overlap_and_contain() {
        assert!(W.starts_at(0) && !W.starts_at(1));
        assert!(p(1, 2).starts_at(1) && !p(1, 2).starts_at(2) && !p(1, 2).starts_at(0));
        assert!(p(1, 2).contains(2) && !p(1, 2).contains(3) && !p(1, 2).contains(0));
        assert!(p(0, 1).overlaps(p(1, 2)) && !p(0, 0).overlaps(p(1, 2)) && W.overlaps(p(3, 3)));
    }

    #[test]
    fn a_backwards_range_is_live_nowhere_and_plans_without_panicking() {
        let back = Live::Phases { first: 2, last: 1 };
        assert!(!back.contains(1) && !back.contains(2) && !back.overlaps(p(0, 3)));
        let plan = ReusePlan::new(&["a", "b"], &[256, 256], &[back, p(1, 2)], 3, 256, 0).unwrap();
        assert_eq!(plan.offsets, vec![Some(0), Some(0)]);
    }

    #[test]
    fn disjoint_phases_share_and_overlapping_ones_do_not() {
        // a whole step; b in phase 0; c in phase 1; d in phases 0..=1.
        let names = ["a", "b", "c", "d"];
        let plan = ReusePlan::new(
            &names,
            &[256, 1024, 1024, 512],
            &[W, p(0, 0), p(1, 1), p(0, 1)],
            2,
            256,
            0,
        )
        .unwrap();
        let [a, b, c, d] = [0, 1, 2, 3].map(|i| plan.offsets[i].unwrap());
        assert_eq!(b, c, "b and c are never live together");
        for (x, y) in [(a, b), (a, d), (b, d), (c, d)] {
            assert!(x != y);
        }
        assert_eq!(plan.footprint, 1024 + 512 + 256);
        assert_eq!(plan.lower_bound, 256 + 1024 + 512);
        assert_eq!(plan.slab, 256 + 1024 + 1024 + 512);
    }

    #[test]
    fn a_smaller_buffer_fills_the_smallest_gap_that_fits() {
        // x (ph 0) and y (ph 1) share; z (ph 1) goes above y... and w (ph 0) into x's room
        // left beside nothing: the plan stays at the lower bound.
        let names = ["x", "y", "z", "w"];
        let plan = ReusePlan::new(
            &names,
            &[4096, 2048, 2048, 1024],
            &[p(0, 0), p(1, 1), p(1, 1), p(0, 0)],
            2,
            256,
            0,
        )
        .unwrap();
        assert_eq!(plan.lower_bound, 5120);
        assert_eq!(plan.footprint, 5120);
    }

    /// Placed in this order: `x`, `y`, `z` (phase 2 only) make room between `c1`, `c2`, `c3`
    /// (every phase); `n` (phases 0..=1) conflicts only with the `c`s, whose gaps are 1024,
    /// 256 and 512 bytes: it takes the smallest that fits.
    #[test]
    fn a_buffer_takes_the_smallest_gap_that_fits() {
        let sizes = [1024, 256, 256, 256, 512, 256, 256];
        let live = [
            p(2, 2),
            p(0, 2),
            p(2, 2),
            p(0, 2),
            p(2, 2),
            p(0, 2),
            p(0, 1),
        ];
        let mut order = [0, 1, 2, 3, 4, 5, 6];
        let mut reserved = sizes;
        let [mut po, mut pe, mut pi, mut current, mut best] = [[0usize; 7]; 5];
        let mut s = greedy::Scratch {
            reserved: &mut reserved,
            order: &mut order,
            placed_offset: &mut po,
            placed_end: &mut pe,
            placed_index: &mut pi,
            current: &mut current,
            best: &mut best,
        };
        let footprint = greedy::place(7, &sizes, &live, 0, &mut s).unwrap();
        let at = current;
        assert_eq!(at, [0, 1024, 1280, 1536, 1792, 2304, 1280]);
        assert_eq!(footprint, 2560);
    }

    #[test]
    fn empty_buffers_take_no_space_and_overflow_is_named() {
        let plan = ReusePlan::new(&["a", "b"], &[0, 10], &[W, W], 0, 256, 0).unwrap();
        assert_eq!(plan.offsets, vec![None, Some(0)]);
        assert_eq!((plan.footprint, plan.lower_bound, plan.slab), (10, 10, 10));
        let err =
            ReusePlan::new(&["a", "b"], &[usize::MAX - 10, 20], &[W, W], 0, 256, 0).unwrap_err();
        assert!(matches!(err, SizeError::TotalOverflow { .. }));
    }
}
