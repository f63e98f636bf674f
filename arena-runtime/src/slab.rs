//! Slab planning: where each buffer sits inside one allocation.

use crate::error::SizeError;

/// The placement of every buffer in one slab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlabPlan {
    /// Byte offset of each buffer, `None` for a buffer of 0 bytes.
    pub offsets: Vec<Option<usize>>,
    /// Bytes the slab needs: the end of the last buffer (and its guard band).
    pub total: usize,
}

impl SlabPlan {
    /// Places `sizes` back to back, each at an offset aligned to `align` (a power of two),
    /// each followed by `guard` bytes of guard band. Zero-size buffers take no space.
    pub fn new(
        names: &[&'static str],
        sizes: &[usize],
        align: usize,
        guard: usize,
    ) -> Result<Self, SizeError> {
        debug_assert!(align.is_power_of_two());
        debug_assert_eq!(names.len(), sizes.len());
        let mut offsets = Vec::with_capacity(sizes.len());
        let mut end = 0usize;
        for (&name, &bytes) in names.iter().zip(sizes) {
            if bytes == 0 {
                offsets.push(None);
                continue;
            }
            let overflow = || SizeError::TotalOverflow { buffer: name };
            let offset = end.checked_add(align - 1).ok_or_else(overflow)? & !(align - 1);
            end = offset
                .checked_add(bytes)
                .and_then(|e| e.checked_add(guard))
                .ok_or_else(overflow)?;
            offsets.push(Some(offset));
        }
        Ok(Self {
            offsets,
            total: end,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_disjoint_and_skipping_zeros() {
        let plan = SlabPlan::new(&["a", "b", "c", "d"], &[10, 0, 256, 1], 256, 0).unwrap();
        assert_eq!(plan.offsets, vec![Some(0), None, Some(256), Some(512)]);
        assert_eq!(plan.total, 513);
        let guarded = SlabPlan::new(&["a", "b"], &[256, 8], 256, 16).unwrap();
        assert_eq!(guarded.offsets, vec![Some(0), Some(512)]);
        assert_eq!(guarded.total, 536);
    }

    #[test]
    fn overflow_names_the_buffer() {
        let err = SlabPlan::new(&["a", "b"], &[usize::MAX - 10, 20], 256, 0).unwrap_err();
        assert_eq!(err, SizeError::TotalOverflow { buffer: "b" });
    }
}
