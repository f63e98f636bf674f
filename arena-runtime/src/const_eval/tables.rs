//! The const path's tables, read from the arena's declarations (`Arena::BUFFERS`) and one
//! listing of the sizes (`byte_sizes_const`): generic `const fn`s, so the derive writes a
//! table as one call rather than a line a buffer.

use crate::BufferDecl;

/// Whether each buffer counts in `total_bytes`, in field order.
pub const fn tracked<const N: usize>(decls: &[BufferDecl]) -> [bool; N] {
    let mut out = [false; N];
    let mut i = 0;
    while i < N && i < decls.len() {
        out[i] = decls[i].tracked;
        i += 1;
    }
    out
}

/// Each buffer's name and bytes, in field order.
pub const fn named<const N: usize>(
    decls: &[BufferDecl],
    bytes: [usize; N],
) -> [(&'static str, usize); N] {
    let mut out = [("", 0); N];
    let mut i = 0;
    while i < N && i < decls.len() {
        out[i] = (decls[i].name, bytes[i]);
        i += 1;
    }
    out
}

/// Each buffer's name, bytes and whether `total_bytes` counts it, in field order.
pub const fn with_tracking<const N: usize>(
    decls: &[BufferDecl],
    bytes: [usize; N],
) -> [(&'static str, usize, bool); N] {
    let mut out = [("", 0, false); N];
    let mut i = 0;
    while i < N && i < decls.len() {
        out[i] = (decls[i].name, bytes[i], decls[i].tracked);
        i += 1;
    }
    out
}

/// The sum of the tracked buffers' bytes, saturating (as the run-time `total_bytes`).
pub const fn tracked_total<const N: usize>(decls: &[BufferDecl], bytes: [usize; N]) -> usize {
    let mut total = 0usize;
    let mut i = 0;
    while i < N && i < decls.len() {
        if decls[i].tracked {
            total = total.saturating_add(bytes[i]);
        }
        i += 1;
    }
    total
}
