//! The bytes of a matrix in each of the checkpoint's weight formats ([`WeightFormat`], read
//! from its `quantization_config` with the config), from the format's definition: what the
//! weight declarations' shapes call.

use crate::config::WeightFormat;

impl WeightFormat {
    /// Bytes of one linear layer's `[out, in]` weight in this format, its scales included
    /// (in block-scaled FP8 they follow the weight in its buffer: `[out, in]` bytes, then
    /// `[ceil(out / rows), ceil(in / cols)]` FP32; chosen here, one buffer a tensor with its
    /// scales). MXFP4 files keep linear layers in 16 bits. Saturating: a matrix past `usize`
    /// fits no GPU, and the arena's checked sum says so.
    pub const fn linear_bytes(self, out: usize, inp: usize) -> usize {
        self.matrices_bytes(1, out, inp, false)
    }

    /// Bytes of the routed experts' stacked `[experts, out, in]` matrices in this format,
    /// with their scales: block-scaled FP8 as [`Self::linear_bytes`] a matrix; MXFP4 half a
    /// byte an element and a scale byte a 32 (`[experts, out, in / 2]` blocks, then
    /// `[experts, out, in / 32]` scales).
    pub const fn experts_bytes(self, experts: usize, out: usize, inp: usize) -> usize {
        self.matrices_bytes(experts, out, inp, true)
    }

    const fn matrices_bytes(self, experts: usize, out: usize, inp: usize, routed: bool) -> usize {
        let elements = experts.saturating_mul(out).saturating_mul(inp);
        match self {
            WeightFormat::Fp8Block { rows, cols } => {
                let blocks = experts
                    .saturating_mul(ceil_div(out, rows))
                    .saturating_mul(ceil_div(inp, cols));
                elements.saturating_add(blocks.saturating_mul(4))
            }
            WeightFormat::Mxfp4Experts if routed => {
                ceil_div(elements, 2).saturating_add(ceil_div(elements, 32))
            }
            _ => elements.saturating_mul(2),
        }
    }
}

/// `ceil(a / b)`, 0 when `b` is 0 (a file's 0 block is refused when read; this keeps the
/// const fn total).
const fn ceil_div(a: usize, b: usize) -> usize {
    if b == 0 {
        0
    } else {
        a.div_ceil(b)
    }
}
