//! Errors as values: each names the buffer, the numbers and the device involved.

use thiserror::Error;

/// A buffer's size could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SizeError {
    /// Checked arithmetic in a formula overflowed (or a subtraction went below 0).
    #[error("buffer `{buffer}`: {lhs} {op} {rhs} overflows usize")]
    Overflow {
        buffer: &'static str,
        op: &'static str,
        lhs: usize,
        rhs: usize,
    },
    /// A formula divided by 0.
    #[error("buffer `{buffer}`: {lhs} {op} 0 divides by zero")]
    DivideByZero {
        buffer: &'static str,
        op: &'static str,
        lhs: usize,
    },
    /// A buffer without a gate came out 0 bytes.
    #[error("buffer `{buffer}` is not gated but its formula gives 0 bytes")]
    Zero { buffer: &'static str },
    /// A sizing function a formula called failed.
    #[error("buffer `{buffer}`: {source}")]
    Nested {
        buffer: &'static str,
        source: Box<SizeError>,
    },
    /// A value did not fit in `usize` (a `u64` or `u128` sizing result, say).
    #[error("buffer `{buffer}`: {value} does not fit in usize")]
    TooLarge { buffer: &'static str, value: u128 },
    /// A derived value (`#[arena(derived(...))]`) failed; `used_by` are the buffers whose
    /// formulas read it.
    #[error("derived value `{name}` (read by {}): {}", used_by_text(used_by), source.detail())]
    Derived {
        name: &'static str,
        used_by: &'static [&'static str],
        source: Box<SizeError>,
    },
    /// The sum of the tracked buffers overflowed.
    #[error("the arena's total overflows usize when adding buffer `{buffer}`")]
    TotalOverflow { buffer: &'static str },
}

impl SizeError {
    /// The size could not be represented: a formula's arithmetic, a sizing function's value
    /// or the total overflowed `usize`, here or in the error it wraps. A caller searching
    /// for the largest input that fits a budget reads this as "does not fit"; every other
    /// error (a division by 0, an ungated 0) is a mistake in the declaration or the config.
    pub fn is_overflow(&self) -> bool {
        match self {
            SizeError::Overflow { .. }
            | SizeError::TooLarge { .. }
            | SizeError::TotalOverflow { .. } => true,
            SizeError::Nested { source, .. } | SizeError::Derived { source, .. } => {
                source.is_overflow()
            }
            SizeError::DivideByZero { .. } | SizeError::Zero { .. } => false,
        }
    }

    /// The buffer (or derived value, or sizing formula) the error is about, outermost first.
    pub fn buffer(&self) -> &'static str {
        match self {
            SizeError::Overflow { buffer, .. }
            | SizeError::DivideByZero { buffer, .. }
            | SizeError::Zero { buffer }
            | SizeError::Nested { buffer, .. }
            | SizeError::TooLarge { buffer, .. }
            | SizeError::TotalOverflow { buffer } => buffer,
            SizeError::Derived { name, .. } => name,
        }
    }

    /// What went wrong, without the name of what it went wrong in.
    fn detail(&self) -> String {
        let full = self.to_string();
        match self {
            SizeError::Overflow { buffer, .. }
            | SizeError::DivideByZero { buffer, .. }
            | SizeError::Nested { buffer, .. }
            | SizeError::TooLarge { buffer, .. } => full
                .strip_prefix(&format!("buffer `{buffer}`: "))
                .map(str::to_string)
                .unwrap_or(full),
            _ => full,
        }
    }
}

fn used_by_text(used_by: &[&str]) -> String {
    match used_by {
        [] => "no buffer".to_string(),
        names => names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// A device refused an operation.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DeviceError {
    #[error("out of memory")]
    OutOfMemory { bytes: usize },
    #[error("invalid allocation size {bytes}")]
    InvalidSize { bytes: usize },
    #[error("allocation {index} was made to fail (fault injection)")]
    Injected { index: usize },
    #[error("address {addr:#x} is not a live allocation of this device")]
    UnknownAddress { addr: u64 },
    #[error("this device does not support {0}")]
    Unsupported(&'static str),
    #[error("driver error: {0}")]
    Driver(String),
}

/// Allocating, checking or releasing an arena failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ArenaError {
    /// A device allocation failed; everything allocated before it has been freed.
    #[error("allocating {what} ({bytes} bytes) on {device}: {source}")]
    Alloc {
        what: String,
        bytes: usize,
        device: String,
        source: DeviceError,
    },
    /// The slab's layout could not be planned (its total overflows).
    #[error("planning the slab: {0}")]
    Plan(#[from] SizeError),
    /// Writing the guard pattern failed; the arena was freed.
    #[error("writing the guard band of `{buffer}` on {device}: {source}")]
    Guard {
        buffer: &'static str,
        device: String,
        source: DeviceError,
    },
    /// Poisoning a phase's buffers failed.
    #[error("poisoning `{buffer}` on {device}: {source}")]
    Poison {
        buffer: &'static str,
        device: String,
        source: DeviceError,
    },
    /// Guard bands were asked of a reuse slab: a buffer of another phase may lie over a guard
    /// band there, so a write to it would read back as an overrun.
    #[error("{arena}: guard bands need a layout without reuse (another phase's buffer may lie over a guard band); allocate the reuse slab without guard_bytes")]
    ReuseGuards { arena: &'static str },
    /// A size the declaration's formulas could not have given (a hand-edited sizes
    /// struct); nothing was allocated.
    #[error("{arena}: {source}")]
    Sizes {
        arena: &'static str,
        source: ImpossibleSize,
    },
    /// Freeing failed; the other allocations were still freed.
    #[error("freeing {what} ({bytes} bytes) on {device}: {source}")]
    Free {
        what: String,
        bytes: usize,
        device: String,
        source: DeviceError,
    },
}

/// `check_guards` found overwritten guard bands (or could not read them).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GuardError {
    #[error("guard bands were overrun after: {}", .buffers.join(", "))]
    Overrun { buffers: Vec<&'static str> },
    #[error("this arena has no guard bands (allocate with `guard_bytes` > 0)")]
    Disabled,
    #[error("reading the guard band of `{buffer}`: {source}")]
    Read {
        buffer: &'static str,
        source: DeviceError,
    },
}

/// [`Allocated::check_placement`](crate::Allocated::check_placement) found a buffer out of
/// place: the arena's contract is broken (a bug in this crate or in a `Device`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlacementError {
    #[error("buffer `{buffer}` has {placed} bytes but was sized {sized}")]
    WrongSize {
        buffer: &'static str,
        placed: usize,
        sized: usize,
    },
    #[error("buffer `{buffer}` ({bytes} bytes) is {}", if *.bytes == 0 { "empty but not NULL" } else { "NULL but not empty" })]
    NullMismatch { buffer: &'static str, bytes: usize },
    #[error("buffer `{buffer}` at {addr:#x} is not {align}-byte aligned")]
    Misaligned {
        buffer: &'static str,
        addr: u64,
        align: usize,
    },
    #[error(
        "buffer `{buffer}` ({bytes} bytes at {addr:#x}) is not inside one allocation of the arena"
    )]
    Outside {
        buffer: &'static str,
        addr: u64,
        bytes: usize,
    },
    #[error("buffers `{first}` and `{second}` overlap")]
    Overlap {
        first: &'static str,
        second: &'static str,
    },
    /// The sizes themselves break a rule of the declaration (a hand-edited sizes struct).
    #[error(transparent)]
    Sizes(#[from] ImpossibleSize),
}

/// A buffer's size that its declaration's formulas could not have given: an ungated buffer
/// of 0 bytes, a size that is not a whole number of elements, or one below a numeric floor.
/// Sizes come from `Sizes::try_from_config`; these come from editing the struct by hand.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("buffer `{buffer}` has {bytes} bytes, but {rule}: sizes its formulas could not give (was the sizes struct edited by hand?)")]
pub struct ImpossibleSize {
    pub buffer: &'static str,
    pub bytes: usize,
    /// The rule the size breaks, as a sentence (`it is not gated, so it is never 0 bytes`).
    pub rule: String,
}

/// A region layout could not be carved from a buffer.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CarveError {
    #[error("carving `{layout}`: the buffer holds {have} bytes but the layout needs {need}")]
    TooSmall {
        layout: &'static str,
        have: usize,
        need: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::SizeError;

    #[test]
    fn overflow_is_told_apart_from_other_size_errors_at_any_depth() {
        let overflow = SizeError::Overflow {
            buffer: "a",
            op: "*",
            lhs: usize::MAX,
            rhs: 2,
        };
        let nested = |source| SizeError::Nested {
            buffer: "b",
            source: Box::new(source),
        };
        assert!(overflow.is_overflow());
        assert!(SizeError::TooLarge {
            buffer: "a",
            value: u128::MAX
        }
        .is_overflow());
        assert!(SizeError::TotalOverflow { buffer: "a" }.is_overflow());
        assert!(nested(nested(overflow.clone())).is_overflow());
        assert!(SizeError::Derived {
            name: "m16",
            used_by: &["a"],
            source: Box::new(overflow),
        }
        .is_overflow());
        assert!(!SizeError::Zero { buffer: "a" }.is_overflow());
        assert!(!nested(SizeError::DivideByZero {
            buffer: "a",
            op: "/",
            lhs: 1
        })
        .is_overflow());
    }
}
