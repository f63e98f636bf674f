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
    /// with their scales: block-scaled FP8 as [`Self::linear_bytes`] a matrix; MXFP4 16
    /// bytes of elements and a scale byte a block of 32 along each row's input (`[experts,
    /// out, ceil(in / 32), 16]` blocks, then `[experts, out, ceil(in / 32)]` scales: vLLM's
    /// `Mxfp4MoEMethod.create_weights`, `w13_weight` and `w13_weight_scale`). A rank's
    /// expert width is padded first ([`Self::expert_width`]).
    pub const fn experts_bytes(self, experts: usize, out: usize, inp: usize) -> usize {
        self.matrices_bytes(experts, out, inp, true)
    }

    /// The routed experts' width (`moe_intermediate_size`, a rank's share) as the format's
    /// engine allocates it: MXFP4 pads it to a multiple of 64 (vLLM's
    /// `Mxfp4MoEMethod.create_weights`, CUDA path: `round_up(intermediate_size_per_partition,
    /// 64)`, "to hold non-uniform sharded tensor"; its ROCm and FlashInfer paths pad to 128
    /// and 256, which an engine on them adds); the others keep it.
    pub const fn expert_width(self, width: usize) -> usize {
        match self {
            WeightFormat::Mxfp4Experts => width.div_ceil(64).saturating_mul(64),
            _ => width,
        }
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
            WeightFormat::Mxfp4Experts if routed => experts
                .saturating_mul(out)
                .saturating_mul(ceil_div(inp, 32))
                .saturating_mul(17),
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
