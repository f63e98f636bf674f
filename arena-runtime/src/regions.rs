//! Region layouts: one buffer carved into several regions back to back.
//!
//! `#[derive(Regions)]` declares the regions once; the generated `layout` function places
//! them with a `RegionCursor`, the layout's total sizes the arena buffer, and `carve`
//! turns the buffer's pointer into one pointer per region with the same offsets.

use crate::dtype::Element;
use crate::error::{CarveError, SizeError};
use crate::ptr::DevicePtr;

/// One region of a layout: its offset from the buffer's start and its length, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Region {
    pub offset: usize,
    pub bytes: usize,
}

impl Region {
    /// One past the region's last byte.
    pub const fn end(&self) -> usize {
        self.offset + self.bytes
    }

    /// This region of `base` as a pointer to `T` (NULL for a region of 0 bytes).
    pub fn of<T: Element>(&self, base: DevicePtr<u8>) -> DevicePtr<T> {
        if self.bytes == 0 || base.is_null() {
            return DevicePtr::NULL;
        }
        DevicePtr::from_raw_parts(base.as_raw() + self.offset as u64, self.bytes / T::SIZE)
    }
}

/// Places regions one after another, each at an offset aligned to `align`.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct RegionCursor {
    layout: &'static str,
    align: usize,
    end: usize,
}

impl RegionCursor {
    pub const fn new(layout: &'static str, align: usize) -> Self {
        Self {
            layout,
            align,
            end: 0,
        }
    }

    /// The next region, `bytes` long.
    pub const fn place(&mut self, bytes: usize) -> Result<Region, SizeError> {
        let start = self.end;
        match self.next_end(bytes) {
            Some((offset, end)) => {
                self.end = end;
                Ok(Region { offset, bytes })
            }
            None => Err(self.overflow(start, bytes)),
        }
    }

    /// [`Self::place`] for a `const fn` that needs only the total: the new end.
    pub const fn advance(&mut self, bytes: usize) -> Result<usize, SizeError> {
        let start = self.end;
        match self.next_end(bytes) {
            Some((_, end)) => {
                self.end = end;
                Ok(end)
            }
            None => Err(self.overflow(start, bytes)),
        }
    }

    /// The next region's offset (the end aligned up) and end, if neither overflows.
    const fn next_end(&self, bytes: usize) -> Option<(usize, usize)> {
        let Some(offset) = self.end.checked_next_multiple_of(self.align) else {
            return None;
        };
        match offset.checked_add(bytes) {
            Some(end) => Some((offset, end)),
            None => None,
        }
    }

    const fn overflow(&self, start: usize, bytes: usize) -> SizeError {
        SizeError::Overflow {
            buffer: self.layout,
            op: "+",
            lhs: start,
            rhs: bytes,
        }
    }

    /// Bytes the layout needs.
    pub const fn total(&self) -> usize {
        self.end
    }
}

/// Checks a buffer is long enough for a layout before carving it.
#[doc(hidden)]
pub fn check_carve(
    layout: &'static str,
    base: DevicePtr<u8>,
    need: usize,
) -> Result<(), CarveError> {
    if base.byte_len() < need {
        return Err(CarveError::TooSmall {
            layout,
            have: base.byte_len(),
            need,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_is_place_without_the_region() {
        let (mut placed, mut advanced) = (RegionCursor::new("l", 256), RegionCursor::new("l", 256));
        for bytes in [10, 0, 300, 1] {
            let region = placed.place(bytes).unwrap();
            assert_eq!(advanced.advance(bytes), Ok(region.offset + bytes));
            assert_eq!(advanced.total(), placed.total());
        }
        let mut full = RegionCursor::new("l", 256);
        full.advance(usize::MAX - 10).unwrap();
        assert_eq!(
            full.advance(1),
            Err(SizeError::Overflow {
                buffer: "l",
                op: "+",
                lhs: usize::MAX - 10,
                rhs: 1
            })
        );
        assert_eq!(
            full.total(),
            usize::MAX - 10,
            "a failed advance moves nothing"
        );
        let mut near = RegionCursor::new("l", 256);
        near.advance(1).unwrap();
        assert!(near.advance(usize::MAX - 100).is_err());
    }

    #[test]
    fn cursor_aligns_and_totals() {
        let mut c = RegionCursor::new("l", 256);
        let a = c.place(10).unwrap();
        let b = c.place(0).unwrap();
        let d = c.place(300).unwrap();
        assert_eq!((a.offset, b.offset, d.offset), (0, 256, 256));
        assert_eq!(c.total(), 556);
        let base = DevicePtr::<u8>::from_raw_parts(0x10000, 556);
        assert_eq!(d.of::<f32>(base).as_raw(), 0x10100);
        assert_eq!(d.of::<f32>(base).len(), 75);
        assert!(b.of::<f32>(base).is_null());
        assert!(check_carve("l", base, 557).is_err());
    }
}
