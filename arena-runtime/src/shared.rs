//! Phase sharing: buffers whose live phases never overlap share bytes of one slab.
//!
//! An arena lists its step's phases in order (`#[arena(phases(...))]`); each buffer is live
//! in one phase, a contiguous range of them, or the whole step ([`Live`]). Two buffers may
//! share a byte only when no phase has both live. [`SharedPlan::new`] places them with the
//! greedy-by-size rule of TFLite's arena planner (largest first, each into the smallest gap
//! between already-placed buffers it conflicts with, else after the last of them), and
//! reports the lower bound of XLA's heap simulator: no placement can take less than the
//! largest sum of live bytes over the phases.

use crate::error::SizeError;

/// When a buffer is live during a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Live {
    /// Every phase: the buffer's bytes are never shared (the default).
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
    /// first phase): when a step writes it first.
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

/// Where each buffer sits in a shared slab, and what that saves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedPlan {
    /// Byte offset of each buffer, `None` for a buffer of 0 bytes.
    pub offsets: Vec<Option<usize>>,
    /// Bytes the shared slab needs.
    pub footprint: usize,
    /// No placement can need less: over the phases, the largest sum of the live buffers'
    /// extents (each rounded up to the alignment, but for the padding of the last).
    pub lower_bound: usize,
    /// The slab without sharing, every buffer apart (`SlabPlan`'s total).
    pub unshared: usize,
}

impl SharedPlan {
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
    ) -> Result<SharedPlan, SizeError> {
        debug_assert!(align.is_power_of_two());
        debug_assert!(names.len() == sizes.len() && sizes.len() == live.len());
        let unshared = crate::slab::SlabPlan::new(names, sizes, align, guard)?.total;
        // Each buffer's reserved extent: its bytes and guard, rounded up to the alignment, so
        // every offset built from these ends stays aligned.
        let mut reserved = Vec::with_capacity(sizes.len());
        for (i, &bytes) in sizes.iter().enumerate() {
            let overflow = SizeError::TotalOverflow { buffer: names[i] };
            let r = if bytes == 0 {
                0
            } else {
                bytes
                    .checked_add(guard)
                    .and_then(|b| b.checked_next_multiple_of(align))
                    .ok_or(overflow)?
            };
            reserved.push(r);
        }

        // Greedy placement is order-sensitive: four orders (TFLite's by size; longest-lived
        // first, then by size; earliest phase first, then by size; field order, which is never
        // worse than the unshared slab), keeping the smallest footprint. Each is O(n²) in the
        // buffers: microseconds for an arena's few dozen.
        let span = |i: usize| match live[i] {
            Live::WholeStep => (0, phases.max(1)),
            Live::Phases { first, last } => (first, last.saturating_sub(first) + 1),
        };
        let by_size = |a: &usize, b: &usize| reserved[*b].cmp(&reserved[*a]).then(a.cmp(b));
        let mut orders: Vec<Vec<usize>> = Vec::new();
        let live_ones: Vec<usize> = (0..sizes.len()).filter(|&i| sizes[i] > 0).collect();
        let mut o = live_ones.clone();
        o.sort_by(by_size);
        orders.push(o);
        let mut o = live_ones.clone();
        o.sort_by(|a, b| span(*b).1.cmp(&span(*a).1).then(by_size(a, b)));
        orders.push(o);
        let mut o = live_ones.clone();
        o.sort_by(|a, b| span(*a).0.cmp(&span(*b).0).then(by_size(a, b)));
        orders.push(o);
        orders.push(live_ones);
        let mut best: Option<(usize, Vec<Option<usize>>)> = None;
        for order in &orders {
            let (footprint, offsets) = place(order, names, sizes, &reserved, live, guard)?;
            if best.as_ref().is_none_or(|(f, _)| footprint < *f) {
                best = Some((footprint, offsets));
            }
        }
        let (footprint, offsets) = best.unwrap_or((0, vec![None; sizes.len()]));

        // The buffers live in one phase must all fit side by side, each at an aligned
        // offset: at least their reserved extents, less the padding of the one placed last
        // (the largest padding, at best). Without phases, every buffer is live together.
        let live_in = |p: Option<usize>| -> usize {
            let ids =
                (0..sizes.len()).filter(|&i| sizes[i] > 0 && p.is_none_or(|p| live[i].contains(p)));
            let (sum, pad) = ids.fold((0usize, 0usize), |(sum, pad), i| {
                (sum + reserved[i], pad.max(reserved[i] - (sizes[i] + guard)))
            });
            sum - pad
        };
        let lower_bound = if phases == 0 {
            live_in(None)
        } else {
            (0..phases).map(|p| live_in(Some(p))).max().unwrap_or(0)
        };
        Ok(SharedPlan {
            offsets,
            footprint,
            lower_bound,
            unshared,
        })
    }
}

/// Places the buffers in `order`, each in the smallest gap between the already-placed
/// buffers it shares a phase with, else after the last of them: the footprint (the end of
/// the last guard band) and each buffer's offset.
fn place(
    order: &[usize],
    names: &[&'static str],
    sizes: &[usize],
    reserved: &[usize],
    live: &[Live],
    guard: usize,
) -> Result<(usize, Vec<Option<usize>>), SizeError> {
    let mut offsets = vec![None; sizes.len()];
    // Placed buffers as (offset, reserved end, index).
    let mut placed: Vec<(usize, usize, usize)> = Vec::with_capacity(order.len());
    let mut footprint = 0usize;
    for &i in order {
        let need = reserved[i];
        let mut conflicts: Vec<(usize, usize)> = placed
            .iter()
            .filter(|&&(_, _, j)| live[i].overlaps(live[j]))
            .map(|&(o, e, _)| (o, e))
            .collect();
        conflicts.sort_unstable();
        let mut best: Option<(usize, usize)> = None; // (gap, offset)
        let mut end = 0usize;
        for &(o, e) in &conflicts {
            if o >= end && o - end >= need && best.is_none_or(|(gap, _)| o - end < gap) {
                best = Some((o - end, end));
            }
            end = end.max(e);
        }
        let offset = best.map_or(end, |(_, at)| at);
        let stop = offset
            .checked_add(need)
            .ok_or(SizeError::TotalOverflow { buffer: names[i] })?;
        placed.push((offset, stop, i));
        offsets[i] = Some(offset);
        // The slab ends where a buffer's guard band ends, not at its rounded extent.
        footprint = footprint.max(offset + sizes[i] + guard);
    }
    Ok((footprint, offsets))
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
        let plan = SharedPlan::new(&["a", "b"], &[256, 256], &[back, p(1, 2)], 3, 256, 0).unwrap();
        assert_eq!(plan.offsets, vec![Some(0), Some(0)]);
    }

    #[test]
    fn disjoint_phases_share_and_overlapping_ones_do_not() {
        // a whole step; b in phase 0; c in phase 1; d in phases 0..=1.
        let names = ["a", "b", "c", "d"];
        let plan = SharedPlan::new(
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
        assert_eq!(plan.unshared, 256 + 1024 + 1024 + 512);
    }

    #[test]
    fn a_smaller_buffer_fills_the_smallest_gap_that_fits() {
        // x (ph 0) and y (ph 1) share; z (ph 1) goes above y... and w (ph 0) into x's room
        // left beside nothing: the plan stays at the lower bound.
        let names = ["x", "y", "z", "w"];
        let plan = SharedPlan::new(
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
        let names = ["x", "c1", "y", "c2", "z", "c3", "n"];
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
        let (footprint, offsets) =
            place(&[0, 1, 2, 3, 4, 5, 6], &names, &sizes, &sizes, &live, 0).unwrap();
        let at: Vec<usize> = offsets.iter().map(|o| o.unwrap()).collect();
        assert_eq!(at, [0, 1024, 1280, 1536, 1792, 2304, 1280]);
        assert_eq!(footprint, 2560);
    }

    #[test]
    fn empty_buffers_take_no_space_and_overflow_is_named() {
        let plan = SharedPlan::new(&["a", "b"], &[0, 10], &[W, W], 0, 256, 0).unwrap();
        assert_eq!(plan.offsets, vec![None, Some(0)]);
        assert_eq!(
            (plan.footprint, plan.lower_bound, plan.unshared),
            (10, 10, 10)
        );
        let err =
            SharedPlan::new(&["a", "b"], &[usize::MAX - 10, 20], &[W, W], 0, 256, 0).unwrap_err();
        assert!(matches!(err, SizeError::TotalOverflow { .. }));
    }
}
