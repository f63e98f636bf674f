//! Typed phases: `#[arena(phases(attention, ffn, lm_head))]` generates an enum per arena
//! (`<Arena>Phase { Attention, Ffn, LmHead }`) implementing [`Phase`], so a misspelled phase or
//! one of another arena is a compile error, not a `None` far from the typo.

/// A phase of one arena's step, as `#[derive(Arena)]` generates it from `phases(...)`: the
/// enum [`Arena::Phase`](crate::Arena::Phase) names. [`Allocated::poison_phase`](crate::Allocated::poison_phase)
/// and the reports take it.
pub trait Phase: Copy + Eq + core::fmt::Debug + Send + Sync + 'static {
    /// Every phase, in step order.
    const ALL: &'static [Self];

    /// The phase's position in the step (0 for the first), as [`crate::Live`] counts.
    fn index(self) -> usize;

    /// The name written in `phases(...)`.
    fn name(self) -> &'static str;
}

/// The phase type of an arena that declares no phases: it has no values, so nothing that
/// takes a phase (`poison_phase`) can be called on such an arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoPhases {}

impl Phase for NoPhases {
    const ALL: &'static [Self] = &[];

    fn index(self) -> usize {
        match self {}
    }

    fn name(self) -> &'static str {
        match self {}
    }
}
