//! Fixed-stride batched-decode metadata layout, derived from the serve `max_batch_size`.
//!
//! One block of per-row arrays, each `rows` long, with `rows` the serve's batch clamped to
//! `DECODE_META_MIN_ROWS..=DECODE_META_MAX_ROWS`. Host and device agree on the strides
//! because both use `DecodeMeta::layout`.

use arena_runtime::{DevicePtr, Regions};

/// The widest decode batch the metadata block serves (the serve's widest batch).
pub const DECODE_META_MAX_ROWS: usize = 128;
/// The fewest rows it is laid out for, so small serves keep the same kernels' strides. The
/// seeds name the constant, not its value: 8 is chosen here.
pub const DECODE_META_MIN_ROWS: usize = 8;

/// Rows of the decode-metadata block for a serve of `max_batch_size` sequences.
pub const fn decode_meta_rows(max_batch_size: usize) -> usize {
    if max_batch_size < DECODE_META_MIN_ROWS {
        DECODE_META_MIN_ROWS
    } else if max_batch_size > DECODE_META_MAX_ROWS {
        DECODE_META_MAX_ROWS
    } else {
        max_batch_size
    }
}

/// The per-row arrays of one decode step. The seeds name `DecodeMetaLayout`, not its
/// regions: these arrays, their order and the 128-byte alignment are chosen here.
#[derive(Regions)]
#[regions(const, layout = DecodeMetaLayout, inputs(rows: usize), align = 128)]
pub struct DecodeMeta {
    /// Sequence length per row.
    #[region(shape = [rows])]
    pub seq_lens: DevicePtr<i32>,
    /// Query start per row, plus the end.
    #[region(shape = [rows + 1])]
    pub query_start_loc: DevicePtr<i32>,
    /// KV slot of each row's new token.
    #[region(shape = [rows])]
    pub slot_mapping: DevicePtr<i64>,
    /// Position of each row's new token.
    #[region(shape = [rows])]
    pub positions: DevicePtr<i32>,
    /// Sampled token per row.
    #[region(shape = [rows])]
    pub sampled_ids: DevicePtr<i32>,
    /// Block-table row pointer per row.
    #[region(shape = [rows])]
    pub block_table_ptrs: DevicePtr<u64>,
}

impl DecodeMetaLayout {
    /// The layout for a serve of `max_batch_size` sequences.
    pub fn for_batch(max_batch_size: usize) -> Result<DecodeMetaLayout, arena_runtime::SizeError> {
        DecodeMeta::layout(decode_meta_rows(max_batch_size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_clamped_and_strides_fixed() {
        assert_eq!(decode_meta_rows(1), DECODE_META_MIN_ROWS);
        assert_eq!(decode_meta_rows(64), 64);
        assert_eq!(decode_meta_rows(4096), DECODE_META_MAX_ROWS);
        let layout = DecodeMetaLayout::for_batch(128).unwrap();
        assert_eq!(layout.seq_lens.offset, 0);
        assert_eq!(layout.query_start_loc.offset, 512);
        assert_eq!(layout.slot_mapping.bytes, 128 * 8);
        assert!(layout.regions().iter().all(|(_, r)| r.offset % 128 == 0));
    }
}
