//! Checked arithmetic for size formulas.
//!
//! The derive rewrites each `+ - * / %` of a formula into a call on a [`CheckedArith`], so an
//! overflow becomes a [`SizeError`] naming the buffer instead of a wrapped number. The
//! helpers a formula may call by bare name (`ceil16`, `round_up`, `ceil_div`, `max`, `min`)
//! are methods here too.

use crate::error::SizeError;

/// The checked-arithmetic context of one named formula.
#[derive(Clone, Copy, Debug)]
pub struct CheckedArith {
    name: &'static str,
}

impl CheckedArith {
    /// The context for the buffer (or intermediate, or sizing function) `name`.
    pub const fn new(name: &'static str) -> Self {
        Self { name }
    }

    /// The name errors carry.
    pub const fn name(self) -> &'static str {
        self.name
    }

    const fn overflow(self, op: &'static str, lhs: usize, rhs: usize) -> SizeError {
        SizeError::Overflow {
            buffer: self.name,
            op,
            lhs,
            rhs,
        }
    }

    // Every operation is a `const fn` (matches rather than `Option` combinators), so the same
    // checked arithmetic runs in `const` evaluation: the derive's const sizing path and
    // `size!` in a `const fn`.

    pub const fn add(self, lhs: usize, rhs: usize) -> Result<usize, SizeError> {
        match lhs.checked_add(rhs) {
            Some(v) => Ok(v),
            None => Err(self.overflow("+", lhs, rhs)),
        }
    }

    /// Subtraction; going below 0 is an error, never a wrap.
    pub const fn sub(self, lhs: usize, rhs: usize) -> Result<usize, SizeError> {
        match lhs.checked_sub(rhs) {
            Some(v) => Ok(v),
            None => Err(self.overflow("-", lhs, rhs)),
        }
    }

    pub const fn mul(self, lhs: usize, rhs: usize) -> Result<usize, SizeError> {
        match lhs.checked_mul(rhs) {
            Some(v) => Ok(v),
            None => Err(self.overflow("*", lhs, rhs)),
        }
    }

    pub const fn div(self, lhs: usize, rhs: usize) -> Result<usize, SizeError> {
        match lhs.checked_div(rhs) {
            Some(v) => Ok(v),
            None => Err(SizeError::DivideByZero {
                buffer: self.name,
                op: "/",
                lhs,
            }),
        }
    }

    pub const fn rem(self, lhs: usize, rhs: usize) -> Result<usize, SizeError> {
        match lhs.checked_rem(rhs) {
            Some(v) => Ok(v),
            None => Err(SizeError::DivideByZero {
                buffer: self.name,
                op: "%",
                lhs,
            }),
        }
    }

    /// `x` rounded up to a multiple of 16 (the GEMM tile height).
    pub const fn ceil16(self, x: usize) -> Result<usize, SizeError> {
        self.round_up(x, 16)
    }

    /// `x` rounded up to a multiple of `to`.
    pub const fn round_up(self, x: usize, to: usize) -> Result<usize, SizeError> {
        let blocks = crate::const_try!(self.ceil_div(x, to));
        match blocks.checked_mul(to) {
            Some(v) => Ok(v),
            None => Err(self.overflow("round_up", x, to)),
        }
    }

    /// `a / b` rounded up.
    pub const fn ceil_div(self, a: usize, b: usize) -> Result<usize, SizeError> {
        if b == 0 {
            return Err(SizeError::DivideByZero {
                buffer: self.name,
                op: "ceil_div",
                lhs: a,
            });
        }
        Ok(a / b + !a.is_multiple_of(b) as usize)
    }

    pub const fn max(self, a: usize, b: usize) -> Result<usize, SizeError> {
        Ok(if a > b { a } else { b })
    }

    pub const fn min(self, a: usize, b: usize) -> Result<usize, SizeError> {
        Ok(if a < b { a } else { b })
    }

    pub fn value<V: IntoSize>(self, v: V) -> Result<usize, SizeError> {
        v.into_size(self.name)
    }

    /// Bytes of a shape: the product of the dims times the element size.
    pub const fn shape(self, dims: &[usize], elem_size: usize) -> Result<usize, SizeError> {
        let mut bytes = elem_size;
        let mut i = 0;
        while i < dims.len() {
            bytes = crate::const_try!(self.mul(bytes, dims[i]));
            i += 1;
        }
        Ok(bytes)
    }
}

/// What a formula accepts from a function call: a size, or a checked result.
pub trait IntoSize {
    /// The size in bytes or elements; `context` names the formula for errors.
    fn into_size(self, context: &'static str) -> Result<usize, SizeError>;
}

impl IntoSize for usize {
    fn into_size(self, _: &'static str) -> Result<usize, SizeError> {
        Ok(self)
    }
}

impl IntoSize for u64 {
    fn into_size(self, context: &'static str) -> Result<usize, SizeError> {
        usize::try_from(self).map_err(|_| SizeError::TooLarge {
            buffer: context,
            value: self.into(),
        })
    }
}

impl IntoSize for u32 {
    fn into_size(self, _: &'static str) -> Result<usize, SizeError> {
        Ok(self as usize)
    }
}

impl<V: IntoSize> IntoSize for Result<V, SizeError> {
    fn into_size(self, context: &'static str) -> Result<usize, SizeError> {
        match self {
            Ok(v) => v.into_size(context),
            Err(e) if e.buffer() == context => Err(e),
            Err(e) => Err(SizeError::Nested {
                buffer: context,
                source: Box::new(e),
            }),
        }
    }
}

/// Sum of sizes, saturating: for totals of sizes that were each checked already.
pub fn saturating_sum(sizes: impl IntoIterator<Item = usize>) -> usize {
    sizes.into_iter().fold(0usize, usize::saturating_add)
}

/// Checked sum of named sizes; the error names the buffer at which it overflowed.
pub fn checked_total(
    sizes: impl IntoIterator<Item = (&'static str, usize)>,
) -> Result<usize, SizeError> {
    sizes.into_iter().try_fold(0usize, |acc, (name, s)| {
        acc.checked_add(s)
            .ok_or(SizeError::TotalOverflow { buffer: name })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: CheckedArith = CheckedArith::new("buf");

    #[test]
    fn arithmetic_is_checked() {
        assert_eq!(F.mul(3, 4), Ok(12));
        assert_eq!(
            F.mul(usize::MAX, 2),
            Err(SizeError::Overflow {
                buffer: "buf",
                op: "*",
                lhs: usize::MAX,
                rhs: 2
            })
        );
        assert!(F.sub(1, 2).is_err());
        assert!(F.add(usize::MAX, 1).is_err());
        assert_eq!(
            F.div(1, 0),
            Err(SizeError::DivideByZero {
                buffer: "buf",
                op: "/",
                lhs: 1
            })
        );
        assert!(F.rem(1, 0).is_err());
    }

    #[test]
    fn rounding_helpers() {
        assert_eq!(F.ceil16(0), Ok(0));
        assert_eq!(F.ceil16(1), Ok(16));
        assert_eq!(F.ceil16(16), Ok(16));
        assert_eq!(F.ceil16(17), Ok(32));
        assert_eq!(F.ceil_div(7, 2), Ok(4));
        assert!(F.ceil_div(7, 0).is_err());
        assert_eq!(F.round_up(257, 256), Ok(512));
        assert!(F.ceil16(usize::MAX).is_err());
        assert_eq!(F.max(3, 9), Ok(9));
        assert_eq!(F.min(3, 9), Ok(3));
    }

    #[test]
    fn shapes() {
        assert_eq!(F.shape(&[4, 8], 2), Ok(64));
        assert!(F.shape(&[usize::MAX, 2], 1).is_err());
    }

    #[test]
    fn values_of_every_integer_kind_convert_exactly() {
        assert_eq!(F.value(5usize), Ok(5));
        assert_eq!(F.value(6u64), Ok(6));
        assert_eq!(F.value(7u32), Ok(7));
        assert_eq!(F.value(Ok::<u32, SizeError>(8)), Ok(8));
        // An error of this same formula passes through as it is, not nested in itself.
        let own: Result<usize, SizeError> = F.mul(usize::MAX, 2);
        assert_eq!(F.value(own.clone()), own);
    }

    #[test]
    fn nested_errors_keep_their_origin() {
        let inner: Result<usize, SizeError> = CheckedArith::new("inner").mul(usize::MAX, 3);
        let err = F.value(inner).unwrap_err();
        assert_eq!(err.buffer(), "buf");
        assert!(err.to_string().contains("inner"), "{err}");
        assert_eq!(F.value(u64::MAX).is_ok(), usize::BITS >= 64);
    }

    #[test]
    fn totals() {
        assert_eq!(checked_total([("a", 1), ("b", 2)]), Ok(3));
        assert_eq!(
            checked_total([("a", usize::MAX), ("b", 2)]),
            Err(SizeError::TotalOverflow { buffer: "b" })
        );
        assert_eq!(saturating_sum([usize::MAX, 1]), usize::MAX);
    }
}
