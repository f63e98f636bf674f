//! Views of a range of rows anywhere in a buffer, keeping the row's shape: one KV block of a
//! layer's `[blocks, block_tokens, ...]` (`layer(l)?.row_range(b..b + 1)`), a layer's range of
//! blocks, one state slot of `[slots, ...]`, a step's rows past the first; and a writable view
//! split in two at a row, two disjoint writable views (as `split_at_mut`).

use super::shape::Dims;
use super::{View, ViewError, ViewMut};
use crate::device::Device;
use crate::dtype::Element;
use crate::ptr::DevicePtr;
use core::marker::PhantomData;
use core::ops::Range;

/// The two writable views [`ViewMut::split_rows`] gives: the rows before a row, and the rest.
pub type SplitRows<'a, T, D> = (ViewMut<'a, T, D>, ViewMut<'a, T, D>);

/// Rows `range` of a view's `ptr` and `dims`: the address and shape of the narrowing.
fn narrow<'a, T: Element>(
    name: &'static str,
    ptr: DevicePtr<T>,
    dims: Dims<'a>,
    range: Range<usize>,
) -> Result<(DevicePtr<T>, Dims<'a>), ViewError> {
    if !dims.shaped || range.start > range.end || range.end > dims.lead {
        return Err(ViewError::RowRange {
            buffer: name,
            start: range.start,
            end: range.end,
            rows: if dims.shaped { dims.lead } else { 0 },
        });
    }
    let row: usize = dims.rest.iter().product();
    let (start, n) = (range.start * row, range.len() * row);
    // Within `len`: `range.end · row ≤ lead · row`, the view's elements.
    let n = n.min(ptr.len().saturating_sub(start));
    let addr = if n == 0 {
        0
    } else {
        ptr.as_raw() + (start * T::SIZE) as u64
    };
    let dims = Dims {
        lead: range.len(),
        ..dims
    };
    Ok((DevicePtr::from_raw_parts(addr, n), dims))
}

impl<'a, T: Element, D: Device> View<'a, T, D> {
    /// Rows `range` of a `[rows, ...]` view, each row as it is: `[range.len(), ...]`. An
    /// error names the buffer, the rows asked for and the rows it holds.
    #[inline]
    pub fn row_range(&self, range: Range<usize>) -> Result<View<'a, T, D>, ViewError> {
        let (ptr, dims) = narrow(self.name, self.ptr, self.dims, range)?;
        Ok(View { ptr, dims, ..*self })
    }
}

impl<'a, T: Element, D: Device> ViewMut<'a, T, D> {
    /// Rows `range`, writable, borrowing this view (see [`View::row_range`]).
    #[inline]
    pub fn row_range(&mut self, range: Range<usize>) -> Result<ViewMut<'_, T, D>, ViewError> {
        let (ptr, dims) = narrow(self.name, self.ptr, self.dims, range)?;
        Ok(self.narrowed(ptr, dims))
    }

    /// Rows `range`, consuming the view (keeps its lifetime).
    #[inline]
    pub fn into_row_range(self, range: Range<usize>) -> Result<ViewMut<'a, T, D>, ViewError> {
        let (ptr, dims) = narrow(self.name, self.ptr, self.dims, range)?;
        Ok(ViewMut { ptr, dims, ..self })
    }

    /// The rows before `at` and the rows from it: two writable views of disjoint bytes, each
    /// with the whole view's lifetime (a kernel writing one while another writes the other).
    /// An error where `at` is past the rows.
    pub fn split_rows(self, at: usize) -> Result<SplitRows<'a, T, D>, ViewError> {
        let rows = if self.dims.shaped { self.dims.lead } else { 0 };
        let (a, da) = narrow(self.name, self.ptr, self.dims, 0..at)?;
        let (b, db) = narrow(self.name, self.ptr, self.dims, at..rows.max(at))?;
        let part = |ptr, dims| ViewMut {
            ptr,
            dims,
            name: self.name,
            device: self.device,
            _exclusive: PhantomData,
        };
        // Disjoint: rows `..at` and `at..` of one view, which this one owned exclusively.
        Ok((part(a, da), part(b, db)))
    }
}
