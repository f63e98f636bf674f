//! Why a view could not be given: the buffer, what was asked and what there is.

/// A narrowing a view could not give: the buffer, what was asked and what there is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ViewError {
    /// More rows than the buffer's first dimension holds.
    #[error("buffer `{buffer}`: {rows} rows asked, its capacity is {capacity} rows{}", gated_note(*.capacity))]
    Rows {
        buffer: &'static str,
        rows: usize,
        capacity: usize,
    },
    /// Rows `start..end` of a buffer of `rows` rows, not within it (or a buffer without a
    /// shape).
    #[error("buffer `{buffer}`: rows {start}..{end} asked, it holds {rows} rows")]
    RowRange {
        buffer: &'static str,
        start: usize,
        end: usize,
        rows: usize,
    },
    /// A layer past a per-layer buffer's count (its first dimension), or a per-layer view of a
    /// buffer of one dimension.
    #[error("buffer `{buffer}`: layer {layer} asked, it holds {layers} layers{}", gated_note(*.layers))]
    Layer {
        buffer: &'static str,
        layer: usize,
        layers: usize,
    },
    /// Rows of a buffer sized by bytes (or of a closed gate), which has no shape.
    #[error(
        "buffer `{buffer}` has no shape (a byte formula or a closed gate): narrow it with `range`"
    )]
    NoShape { buffer: &'static str },
    /// Elements past the buffer's end.
    #[error("buffer `{buffer}`: elements {start}..{end} asked, it holds {len}")]
    Range {
        buffer: &'static str,
        start: usize,
        end: usize,
        len: usize,
    },
    /// A region outside the buffer, or not whole elements of the region's type.
    #[error("buffer `{buffer}`: region at {offset}, {bytes} bytes, does not fit its {capacity} bytes as whole `{dtype}` elements")]
    Region {
        buffer: &'static str,
        offset: usize,
        bytes: usize,
        capacity: usize,
        dtype: &'static str,
    },
    /// A view read as another element type whose bytes are not whole elements of it, or
    /// start at an address not aligned for it.
    #[error(
        "buffer `{buffer}`: {bytes} bytes at {addr:#x} are not whole, aligned `{dtype}` elements"
    )]
    Cast {
        buffer: &'static str,
        addr: u64,
        bytes: usize,
        dtype: &'static str,
    },
    /// A host slice of another length than the view's bytes.
    #[error("buffer `{buffer}`: a host slice of {host} bytes for a view of {view} bytes")]
    HostLength {
        buffer: &'static str,
        host: usize,
        view: usize,
    },
    /// The device refused a copy.
    #[error("buffer `{buffer}`: {source}")]
    Device {
        buffer: &'static str,
        source: crate::DeviceError,
    },
    /// Writable views of every buffer at once, asked of a reuse slab.
    #[error("{arena} is a reuse slab: buffers of disjoint phases reuse bytes, so writable views of all of them at once would alias; take a phase's views (`<Arena><Phase>Views::of`)")]
    Reused { arena: &'static str },
}

fn gated_note(capacity: usize) -> &'static str {
    if capacity == 0 {
        " (empty: gated off or 0 rows)"
    } else {
        ""
    }
}
