//! The reuse-slab planner's work as `const fn`s over scratch the caller provides, so the
//! run-time [`ReusePlan::new`](super::ReusePlan::new) and the const path's `reuse_bytes`
//! (`#[arena(const)]`, `assert_fits!(.., reuse_budget = ..)`) run one algorithm and cannot
//! disagree.
//!
//! Greedy placement is order-sensitive, so it runs in four orders (TFLite's by size;
//! longest-lived first, then by size; earliest phase first, then by size; field order, which
//! is never worse than the plain slab) and keeps the smallest footprint. In each, a buffer
//! goes into the smallest gap between the already-placed buffers it shares a phase with, else
//! after the last of them. O(n²) per order: microseconds for an arena's few dozen buffers, and
//! well inside const evaluation's budget.

use super::Live;
use crate::error::SizeError;

/// An offset slot holding no buffer (one of 0 bytes).
pub(crate) const NONE: usize = usize::MAX;

/// Scratch for planning `n` buffers: every slice `n` long.
pub(crate) struct Scratch<'a> {
    /// Each buffer's reserved extent: bytes and guard, rounded up to the alignment.
    pub reserved: &'a mut [usize],
    pub order: &'a mut [usize],
    /// Placed buffers sorted by (offset, end): their offsets, ends and indices.
    pub placed_offset: &'a mut [usize],
    pub placed_end: &'a mut [usize],
    pub placed_index: &'a mut [usize],
    /// The order being tried: each buffer's offset, [`NONE`] for an empty one.
    pub current: &'a mut [usize],
    /// The best order's offsets: the plan.
    pub best: &'a mut [usize],
}

impl<'a> Scratch<'a> {
    /// Seven vectors of `n` zeros: the run-time planner's storage for [`Scratch::over`] (the
    /// const path borrows arrays instead).
    pub(crate) fn vectors(n: usize) -> [Vec<usize>; 7] {
        core::array::from_fn(|_| vec![0; n])
    }

    /// Scratch borrowing [`Scratch::vectors`].
    pub(crate) fn over(v: &'a mut [Vec<usize>; 7]) -> Self {
        let [reserved, order, placed_offset, placed_end, placed_index, current, best] = v;
        Scratch {
            reserved,
            order,
            placed_offset,
            placed_end,
            placed_index,
            current,
            best,
        }
    }
}

/// What a plan needs and could need at best.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounds {
    pub footprint: usize,
    pub lower_bound: usize,
    /// The phase whose live buffers set the lower bound (`None` without phases).
    pub fullest_phase: Option<usize>,
}

/// Plans `sizes` (live over `phases` phases) at `align` (a power of two) with `guard` bytes
/// after each buffer: the offsets land in `s.best`.
pub(crate) const fn plan(
    names: &[&'static str],
    sizes: &[usize],
    live: &[Live],
    phases: usize,
    align: usize,
    guard: usize,
    s: &mut Scratch,
) -> Result<Bounds, SizeError> {
    let n = sizes.len();
    let mut i = 0;
    while i < n {
        s.reserved[i] = if sizes[i] == 0 {
            0
        } else {
            match sizes[i].checked_add(guard) {
                Some(b) => match b.checked_next_multiple_of(align) {
                    Some(r) => r,
                    None => return Err(SizeError::TotalOverflow { buffer: names[i] }),
                },
                None => return Err(SizeError::TotalOverflow { buffer: names[i] }),
            }
        };
        s.best[i] = NONE;
        i += 1;
    }
    let mut best_footprint = 0;
    let mut kind = 0;
    while kind < 4 {
        let m = sort_order(kind, sizes, live, phases, s);
        let footprint = match place(m, sizes, live, guard, s) {
            Ok(f) => f,
            Err(i) => return Err(SizeError::TotalOverflow { buffer: names[i] }),
        };
        if kind == 0 || footprint < best_footprint {
            best_footprint = footprint;
            let mut k = 0;
            while k < n {
                s.best[k] = s.current[k];
                k += 1;
            }
        }
        kind += 1;
    }
    let (lower_bound, fullest_phase) = lower_bound(sizes, live, phases, guard, s.reserved);
    Ok(Bounds {
        footprint: best_footprint,
        lower_bound,
        fullest_phase,
    })
}

/// Fills `s.order` with the non-empty buffers in order `kind` (a stable insertion sort on a
/// total order, so the same as sorting); returns how many.
const fn sort_order(
    kind: usize,
    sizes: &[usize],
    live: &[Live],
    phases: usize,
    s: &mut Scratch,
) -> usize {
    let mut m = 0;
    let mut i = 0;
    while i < sizes.len() {
        if sizes[i] > 0 {
            s.order[m] = i;
            m += 1;
        }
        i += 1;
    }
    let mut i = 1;
    while i < m {
        let mut j = i;
        while j > 0 && before(kind, s.order[j], s.order[j - 1], live, phases, s.reserved) {
            let t = s.order[j];
            s.order[j] = s.order[j - 1];
            s.order[j - 1] = t;
            j -= 1;
        }
        i += 1;
    }
    m
}

/// Whether buffer `a` comes before `b` in order `kind`.
const fn before(
    kind: usize,
    a: usize,
    b: usize,
    live: &[Live],
    phases: usize,
    reserved: &[usize],
) -> bool {
    let by_size = reserved[a] > reserved[b] || (reserved[a] == reserved[b] && a < b);
    let (sa, la) = span(live[a], phases);
    let (sb, lb) = span(live[b], phases);
    match kind {
        0 => by_size,
        1 => la > lb || (la == lb && by_size),
        2 => sa < sb || (sa == sb && by_size),
        _ => a < b,
    }
}

/// A live range as (first phase, number of phases).
const fn span(live: Live, phases: usize) -> (usize, usize) {
    match live {
        Live::WholeStep => (0, if phases > 1 { phases } else { 1 }),
        Live::Phases { first, last } => (first, last.saturating_sub(first) + 1),
    }
}

/// Places the first `m` buffers of `s.order`: offsets into `s.current`, the footprint (the
/// end of the last guard band) returned, or the index of the buffer whose end overflows (a
/// plain number: a `SizeError` dropped here would need a destructor const evaluation lacks).
pub(crate) const fn place(
    m: usize,
    sizes: &[usize],
    live: &[Live],
    guard: usize,
    s: &mut Scratch,
) -> Result<usize, usize> {
    let mut k = 0;
    while k < sizes.len() {
        s.current[k] = NONE;
        k += 1;
    }
    let mut placed = 0;
    let mut footprint = 0usize;
    let mut t = 0;
    while t < m {
        let i = s.order[t];
        let need = s.reserved[i];
        // The conflicts in (offset, end) order: the smallest gap that fits, else the end.
        let mut best_gap = NONE;
        let mut best_at = 0;
        let mut end = 0usize;
        let mut k = 0;
        while k < placed {
            if live[i].overlaps(live[s.placed_index[k]]) {
                let (o, e) = (s.placed_offset[k], s.placed_end[k]);
                if o >= end && o - end >= need && (best_gap == NONE || o - end < best_gap) {
                    best_gap = o - end;
                    best_at = end;
                }
                if e > end {
                    end = e;
                }
            }
            k += 1;
        }
        let offset = if best_gap == NONE { end } else { best_at };
        let stop = match offset.checked_add(need) {
            Some(stop) => stop,
            None => return Err(i),
        };
        // Insert (offset, stop) keeping the placed list sorted.
        let mut at = placed;
        while at > 0
            && (s.placed_offset[at - 1] > offset
                || (s.placed_offset[at - 1] == offset && s.placed_end[at - 1] > stop))
        {
            s.placed_offset[at] = s.placed_offset[at - 1];
            s.placed_end[at] = s.placed_end[at - 1];
            s.placed_index[at] = s.placed_index[at - 1];
            at -= 1;
        }
        s.placed_offset[at] = offset;
        s.placed_end[at] = stop;
        s.placed_index[at] = i;
        placed += 1;
        s.current[i] = offset;
        // The slab ends where a buffer's guard band ends, not at its rounded extent
        // (within `stop`, which did not overflow).
        let last = offset + sizes[i] + guard;
        if last > footprint {
            footprint = last;
        }
        t += 1;
    }
    Ok(footprint)
}

/// XLA's heap-simulator bound: the buffers live in one phase must all fit side by side, each
/// at an aligned offset: at least their reserved extents, less the padding of the one placed
/// last (the largest padding, at best). Without phases every buffer is live together. With
/// the phase that sets it.
const fn lower_bound(
    sizes: &[usize],
    live: &[Live],
    phases: usize,
    guard: usize,
    reserved: &[usize],
) -> (usize, Option<usize>) {
    let mut bound = 0;
    let mut fullest = None;
    let rounds = if phases == 0 { 1 } else { phases };
    let mut p = 0;
    while p < rounds {
        let (mut sum, mut pad) = (0usize, 0usize);
        let mut i = 0;
        while i < sizes.len() {
            if sizes[i] > 0 && (phases == 0 || live[i].contains(p)) {
                sum = sum.saturating_add(reserved[i]);
                let padding = reserved[i] - (sizes[i] + guard);
                if padding > pad {
                    pad = padding;
                }
            }
            i += 1;
        }
        if p == 0 || sum - pad > bound {
            bound = sum - pad;
            fullest = if phases == 0 { None } else { Some(p) };
        }
        p += 1;
    }
    (bound, fullest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cmp::Ordering;

    /// The four orders the planner tries, each pinned on buffers that tell them apart: by
    /// size (ties by field order), by live length, by first phase (ties by size), by field
    /// order; and a live range's span.
    #[test]
    fn each_order_sorts_as_documented() {
        let reserved = [256, 512, 512, 1024];
        let live = [
            Live::WholeStep,
            Live::Phases { first: 1, last: 1 },
            Live::Phases { first: 0, last: 1 },
            Live::Phases { first: 2, last: 2 },
        ];
        let order = |kind: usize| {
            // From the reverse of every expected order, so a tie left unbroken shows.
            let mut v = vec![3, 2, 1, 0];
            v.sort_by(|&a, &b| {
                if before(kind, a, b, &live, 3, &reserved) {
                    Ordering::Less
                } else if before(kind, b, a, &live, 3, &reserved) {
                    Ordering::Greater
                } else {
                    Ordering::Equal
                }
            });
            v
        };
        assert_eq!(order(0), [3, 1, 2, 0]);
        assert_eq!(order(1), [0, 2, 3, 1]);
        assert_eq!(order(2), [2, 0, 1, 3]);
        assert_eq!(order(3), [0, 1, 2, 3]);
        assert_eq!(span(Live::WholeStep, 3), (0, 3));
        assert_eq!(span(Live::Phases { first: 1, last: 2 }, 3), (1, 2));
    }

    /// Runs `plan` and returns (offsets, reserved extents, bounds).
    fn run(
        sizes: &[usize],
        live: &[Live],
        phases: usize,
        align: usize,
        guard: usize,
    ) -> (Vec<usize>, Vec<usize>, Bounds) {
        let n = sizes.len();
        let names = vec!["b"; n];
        let mut v = Scratch::vectors(n);
        let mut s = Scratch::over(&mut v);
        let bounds = plan(&names, sizes, live, phases, align, guard, &mut s).unwrap();
        (s.best.to_vec(), s.reserved.to_vec(), bounds)
    }

    /// Many small arenas (a fixed pseudo-random sequence: sizes with ties and zeros, ranges
    /// over up to five phases, whole-step buffers): every plan keeps buffers live in a common
    /// phase apart, aligned, inside its footprint, at or above the lower bound and never above
    /// the plain slab. The four orders share the scratch, so an order that read a slot the
    /// one before it left would place a buffer over another here.
    #[test]
    fn every_plan_keeps_live_buffers_apart() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % m) as usize
        };
        for _ in 0..20000 {
            let n = 1 + next(16);
            let phases = next(6);
            let (align, guard) = ([1, 64, 256][next(3)], [0, 8, 256][next(3)]);
            let sizes: Vec<usize> = (0..n)
                .map(|_| [0, 1, 100, 256, 512, 700, 4096][next(7)])
                .collect();
            let live: Vec<Live> = (0..n)
                .map(|_| {
                    if phases == 0 || next(4) == 0 {
                        Live::WholeStep
                    } else {
                        let first = next(phases as u64);
                        Live::Phases {
                            first,
                            last: first + next((phases - first) as u64),
                        }
                    }
                })
                .collect();
            let (at, reserved, bounds) = run(&sizes, &live, phases, align, guard);
            let mut footprint = 0;
            for i in 0..n {
                if sizes[i] == 0 {
                    assert_eq!(at[i], NONE, "{sizes:?} {live:?}");
                    continue;
                }
                assert_eq!(at[i] % align, 0);
                footprint = footprint.max(at[i] + sizes[i] + guard);
                for j in 0..i {
                    if sizes[j] > 0 && live[i].overlaps(live[j]) {
                        let apart = at[i] + reserved[i] <= at[j] || at[j] + reserved[j] <= at[i];
                        assert!(
                            apart,
                            "buffers {j} and {i} overlap: {sizes:?} {live:?} at {at:?}"
                        );
                    }
                }
            }
            assert_eq!(bounds.footprint, footprint, "{sizes:?} {live:?}");
            assert!(bounds.footprint >= bounds.lower_bound, "{sizes:?} {live:?}");
            let plain: usize = reserved.iter().sum();
            assert!(bounds.footprint <= plain, "{sizes:?} {live:?}");
        }
    }

    /// Of two gaps that fit equally well, a buffer takes the first (the lowest offset).
    #[test]
    fn equal_gaps_go_to_the_lowest() {
        let p = |first, last| Live::Phases { first, last };
        // Whole-step buffers at 0, 512 and 1024 with phase-0 buffers between them leave two
        // 256-byte gaps to a phase-1 buffer.
        let sizes = [256; 6];
        let live = [
            Live::WholeStep,
            p(0, 0),
            Live::WholeStep,
            p(0, 0),
            Live::WholeStep,
            p(1, 1),
        ];
        let mut v = Scratch::vectors(6);
        let mut s = Scratch::over(&mut v);
        s.reserved.fill(256);
        s.order.copy_from_slice(&[0, 1, 2, 3, 4, 5]);
        assert_eq!(place(6, &sizes, &live, 0, &mut s), Ok(1280));
        assert_eq!(s.current, &[0, 256, 512, 768, 1024, 256]);
    }

    /// The lower bound is the phase whose live buffers need the most, less the largest padding
    /// among them, and names the first such phase: a phase of more reserved bytes but more
    /// padding does not win, and a tie keeps the earlier phase.
    #[test]
    fn the_lower_bound_is_the_fullest_phase_less_its_padding() {
        let p = |first, last| Live::Phases { first, last };
        // Phase 0: 1024 bytes, no padding. Phase 1: 1024 reserved, 24 of them padding.
        let (sizes, live, reserved) = ([1024, 1000], [p(0, 0), p(1, 1)], [1024, 1024]);
        assert_eq!(lower_bound(&sizes, &live, 2, 0, &reserved), (1024, Some(0)));
        let live = [p(1, 1), p(0, 0)];
        assert_eq!(lower_bound(&sizes, &live, 2, 0, &reserved), (1024, Some(1)));
        // Equal phases: the first is named.
        let (sizes, live, reserved) = ([512, 512], [p(0, 0), p(1, 1)], [512, 512]);
        assert_eq!(lower_bound(&sizes, &live, 2, 0, &reserved), (512, Some(0)));
        assert_eq!(lower_bound(&sizes, &live, 0, 0, &reserved), (1024, None));
    }
}
