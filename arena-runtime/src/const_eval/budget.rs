//! Budgets that fail the build: `assert_fits!` and the checks it calls, whose panic under
//! const evaluation is the compile error naming the overshoot and the largest buffers.

use super::Message;

/// The check behind `assert_fits!`: a compile error naming `what`, the budget, the total,
/// the overshoot and the three largest buffers the total counts when `total > budget`. Each
/// buffer is `(name, bytes, tracked)`; an untracked buffer is allocated but not in the total,
/// so it is never blamed: the untracked bytes are said apart.
pub const fn fits(
    what: &str,
    buffers: &[(&'static str, usize, bool)],
    total: usize,
    budget: usize,
) {
    if total <= budget {
        return;
    }
    let mut m = Message::new()
        .text(what)
        .text(" does not fit its budget: total_bytes ")
        .bytes(total)
        .text(" > budget ")
        .bytes(budget)
        .text(", ")
        .bytes(total - budget)
        .text(" over; largest buffers:");
    // The three largest tracked ones, by a selection that skips those already listed.
    let mut shown = [usize::MAX; 3];
    let mut rank = 0;
    while rank < 3 {
        let mut best = usize::MAX;
        let mut i = 0;
        while i < buffers.len() {
            let taken = shown[0] == i || shown[1] == i || shown[2] == i;
            if buffers[i].2 && !taken && (best == usize::MAX || buffers[i].1 > buffers[best].1) {
                best = i;
            }
            i += 1;
        }
        if best == usize::MAX {
            break;
        }
        shown[rank] = best;
        m = m
            .text(if rank == 0 { " " } else { ", " })
            .text("`")
            .text(buffers[best].0)
            .text("` ")
            .bytes(buffers[best].1);
        rank += 1;
    }
    let mut untracked = 0usize;
    let mut i = 0;
    while i < buffers.len() {
        if !buffers[i].2 {
            untracked = untracked.saturating_add(buffers[i].1);
        }
        i += 1;
    }
    if untracked > 0 {
        m = m
            .text("; untracked buffers (allocated, not in the total): ")
            .bytes(untracked);
    }
    m.panic()
}

/// The check behind `assert_fits!(.., reuse_budget = ..)`: a compile error naming `what`,
/// the budget, the reuse slab, the overshoot, the lower bound and the phase that sets it when
/// the reuse slab does not fit.
pub const fn fits_reuse(what: &str, reuse: crate::ReuseBytes, budget: usize) {
    if reuse.footprint <= budget {
        return;
    }
    let mut m = Message::new()
        .text(what)
        .text(" does not fit its reuse budget: reuse slab ")
        .bytes(reuse.footprint)
        .text(" > budget ")
        .bytes(budget)
        .text(", ")
        .bytes(reuse.footprint - budget)
        .text(" over; lower bound ")
        .bytes(reuse.lower_bound)
        .text(" (no placement needs less)");
    if let Some(phase) = reuse.fullest_phase {
        m = m
            .text(", set by the buffers live in phase `")
            .text(phase)
            .text("`");
    }
    m.panic()
}

/// Asserts at compile time that a const-sized arena fits byte budgets: `budget` for
/// `total_bytes` (the tracked buffers, what a preflight reserves), `reuse_budget` for the
/// reuse slab (`AllocOptions::reuse()`: buffers of disjoint phases reuse bytes, every
/// buffer counted, tracked or not), or both. On failure the build stops with an error naming
/// the label, the budget, the figure, how far over it is and who is to blame: the three
/// largest tracked buffers (and the untracked bytes apart), or the reuse slab's lower bound
/// and the phase that sets it. `sizes` is a value of an arena's sizes struct computed by the
/// const path (`#[arena(const)]`: `Sizes::const_from_config` / `const_from_inputs`).
///
/// The reuse slab is planned in const evaluation by the run-time planner's own code
/// (`ReusePlan::new`), so the figure checked is the bytes `allocate` takes, not a bound.
///
/// ```
/// use arena_runtime::{dtype::bf16, Arena, DevicePtr};
///
/// pub struct Dims {
///     pub hidden: usize,
///     pub vocab: usize,
/// }
/// pub const DIMS: Dims = Dims { hidden: 4096, vocab: 128_256 };
///
/// #[derive(Arena)]
/// #[arena(const, inputs(dims: &Dims, m: usize), phases(layers, lm_head))]
/// pub struct Step {
///     #[buffer(shape = [m, dims.hidden])]
///     pub hidden: DevicePtr<bf16>,
///     #[buffer(shape = [m, 3 * dims.hidden], phase = layers)]
///     pub qkv: DevicePtr<bf16>,
///     #[buffer(shape = [m, dims.vocab], phase = lm_head)]
///     pub logits: DevicePtr<f32>,
/// }
///
/// const AT_8K: StepSizes = StepSizes::const_from_config(&DIMS, 8192);
/// arena_runtime::assert_fits!("step at M = 8192", AT_8K, budget = 4300 << 20);
/// arena_runtime::assert_fits!("step at M = 8192", AT_8K, reuse_budget = 4100 << 20);
/// // qkv and logits never live together: the reuse slab is hidden + logits.
/// assert_eq!(AT_8K.reuse_bytes().footprint, AT_8K.hidden + AT_8K.logits);
/// assert_eq!(AT_8K.reuse_bytes().fullest_phase, Some("lm_head"));
/// ```
#[macro_export]
macro_rules! assert_fits {
    ($what:expr, $sizes:expr, budget = $budget:expr $(,)?) => {
        // `allow(dead_code)` makes the item a root of rustc's dead-code pass, so a constant
        // used only in a budget counts as used (Rust 1.88, the minimum, does not visit `const _`
        // bodies otherwise and reports such a constant as never used; 1.95 does).
        #[allow(dead_code)]
        const _: () = {
            let sizes = $sizes;
            $crate::__private::konst::fits(
                $what,
                &sizes.sizes_with_tracking(),
                sizes.total_bytes(),
                $budget,
            )
        };
    };
    ($what:expr, $sizes:expr, reuse_budget = $budget:expr $(,)?) => {
        #[allow(dead_code)]
        const _: () = {
            let sizes = $sizes;
            $crate::__private::konst::fits_reuse($what, sizes.reuse_bytes(), $budget)
        };
    };
    ($what:expr, $sizes:expr, budget = $budget:expr, reuse_budget = $reuse:expr $(,)?) => {
        $crate::assert_fits!($what, $sizes, budget = $budget);
        $crate::assert_fits!($what, $sizes, reuse_budget = $reuse);
    };
}
