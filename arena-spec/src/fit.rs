//! The budget search: the largest value of one input whose arena still fits a budget.
//!
//! `arena fit` answers with it; an engine can call it at start-up to choose its
//! `max_batch_tokens` (or `max_batch_size`) for the memory it has.

use crate::arena::{BufferArena, BufferArenaInputs};
use crate::config::ModelConfig;
use arena_runtime::{Arena, SizeError};

/// The largest value searched: past it, the answer is this limit (chosen here: far above
/// any batch an engine runs, small enough that a doubling search ends in 32 steps).
pub const SEARCH_LIMIT: usize = 1 << 32;

/// What must fit the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Footprint {
    /// `total_bytes`: the seeds' preflight figure, the tracked buffers' sum.
    TotalBytes,
    /// The reuse slab, where buffers of disjoint phases reuse bytes (`AllocOptions::reuse()`):
    /// what is allocated, so untracked buffers and the 256-byte alignment padding are in it
    /// (`SizeReport::reuse_bytes`).
    ReuseSlab,
}

/// The footprint of the arena of `config` at `inputs`, or `None` when a size overflows (an
/// arena that cannot be sized never fits). `Err` is any other sizing error
/// ([`SizeError::is_overflow`] false): a mistake in the inputs, such as `max_batch_tokens = 0`
/// making an ungated buffer 0 bytes.
pub fn footprint(
    config: &ModelConfig,
    inputs: BufferArenaInputs,
    what: Footprint,
) -> Result<Option<usize>, SizeError> {
    let sizes = match inputs.sizes(config) {
        Ok(sizes) => sizes,
        Err(e) if e.is_overflow() => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(match what {
        Footprint::TotalBytes => Some(sizes.total_bytes()),
        Footprint::ReuseSlab => BufferArena::reuse_plan(&sizes).ok().map(|p| p.footprint),
    })
}

/// The largest `v` in `1..=SEARCH_LIMIT` whose arena (`with(v)`'s inputs) fits `budget`
/// bytes, or `None` when even `v = 1` does not. The footprint must not decrease as `v`
/// grows (true of every input of [`BufferArena`]): the search doubles, then bisects. `Err`
/// as [`footprint`]: a sizing error that is not an overflow.
///
/// To hold two limits at once (say `total_bytes` and the reuse slab, or every rank of a
/// layout), search each and take the smallest answer.
///
/// ```
/// use arena_spec::fit::{footprint, largest_fitting, Footprint};
/// use arena_spec::{models, BufferArenaInputs};
///
/// let config = models::find("qwen3-0.6b").unwrap().config()?;
/// let with = |m| BufferArenaInputs { max_batch_tokens: m, ..BufferArenaInputs::defaults_for(&config) };
/// let m = largest_fitting(&config, 1 << 30, Footprint::TotalBytes, with)?.unwrap();
/// assert!(footprint(&config, with(m), Footprint::TotalBytes)?.unwrap() <= 1 << 30);
/// assert!(footprint(&config, with(m + 1), Footprint::TotalBytes)?.unwrap() > 1 << 30);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn largest_fitting(
    config: &ModelConfig,
    budget: usize,
    what: Footprint,
    with: impl Fn(usize) -> BufferArenaInputs,
) -> Result<Option<usize>, SizeError> {
    let fits = |v: usize| -> Result<bool, SizeError> {
        Ok(footprint(config, with(v), what)?.is_some_and(|t| t <= budget))
    };
    if !fits(1)? {
        return Ok(None);
    }
    let (mut lo, mut hi) = (1usize, 2usize);
    while hi <= SEARCH_LIMIT && fits(hi)? {
        lo = hi;
        hi *= 2;
    }
    if hi > SEARCH_LIMIT {
        return Ok(Some(lo));
    }
    // fits(lo) and !fits(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(Some(lo))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models;

    #[test]
    fn the_answer_fits_and_one_more_does_not() {
        let config = models::find("qwen3-0.6b").unwrap().config().unwrap();
        let with = |m| BufferArenaInputs {
            max_batch_tokens: m,
            ..BufferArenaInputs::AT_128K
        };
        for what in [Footprint::TotalBytes, Footprint::ReuseSlab] {
            let budget = 300 << 20;
            let best = largest_fitting(&config, budget, what, with)
                .unwrap()
                .unwrap();
            let at = |m| footprint(&config, with(m), what).unwrap().unwrap();
            assert!(
                at(best) <= budget && at(best + 1) > budget,
                "{what:?}: {best}"
            );
        }
        assert_eq!(
            largest_fitting(&config, 1, Footprint::TotalBytes, with).unwrap(),
            None
        );
    }
}
