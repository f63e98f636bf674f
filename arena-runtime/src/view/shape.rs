//! A view's shape: its first dimension, narrowed by `rows`, and the rest borrowed from the
//! sizes the arena was allocated at.

/// The most dimensions a view keeps (the derive refuses a shape of more).
pub const MAX_RANK: usize = 8;

/// A view's shape as it keeps it: the first dimension (narrowed by `rows`) and the rest,
/// borrowed from the sizes the arena was allocated at, so making a view copies no array.
#[derive(Clone, Copy)]
pub(super) struct Dims<'a> {
    pub(super) lead: usize,
    pub(super) rest: &'a [usize],
    /// False for a buffer without a shape (a byte formula or a closed gate).
    pub(super) shaped: bool,
}

impl<'a> Dims<'a> {
    #[inline]
    pub(super) fn of(dims: &'a [usize]) -> Self {
        match dims.split_first() {
            Some((&lead, rest)) => Dims {
                lead,
                rest,
                shaped: true,
            },
            None => Dims {
                lead: 0,
                rest: &[],
                shaped: false,
            },
        }
    }

    /// One dimension of `n`.
    #[inline]
    pub(super) fn flat(n: usize) -> Self {
        Dims {
            lead: n,
            rest: &[],
            shaped: true,
        }
    }

    pub(super) fn shape(&self) -> Shape {
        let mut dims = [0; MAX_RANK];
        if !self.shaped {
            return Shape { dims, rank: 0 };
        }
        let rank = (1 + self.rest.len()).min(MAX_RANK);
        dims[0] = self.lead;
        dims[1..rank].copy_from_slice(&self.rest[..rank - 1]);
        Shape {
            dims,
            rank: rank as u8,
        }
    }
}

/// A view's dimensions (`view.shape()`): a slice of up to [`MAX_RANK`] numbers, compared with
/// arrays and slices as one (`assert_eq!(view.shape(), [16, 64])`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape {
    dims: [usize; MAX_RANK],
    rank: u8,
}

impl core::ops::Deref for Shape {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        &self.dims[..self.rank as usize]
    }
}

impl core::fmt::Debug for Shape {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:?}", &**self)
    }
}

impl<const N: usize> PartialEq<[usize; N]> for Shape {
    fn eq(&self, other: &[usize; N]) -> bool {
        **self == other[..]
    }
}

impl PartialEq<[usize]> for Shape {
    fn eq(&self, other: &[usize]) -> bool {
        **self == *other
    }
}

impl PartialEq<&[usize]> for Shape {
    fn eq(&self, other: &&[usize]) -> bool {
        **self == **other
    }
}
