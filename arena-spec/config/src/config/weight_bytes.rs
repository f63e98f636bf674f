//! The bytes of a matrix in each of the checkpoint's weight formats ([`WeightFormat`], read
//! from its `quantization_config` with the config), from the format's definition: what the
//! weight declarations' shapes call.

use crate::config::WeightFormat;

impl WeightFormat {
    /// Bytes of one linear layer's `[out, in]` weight in this format, its scales included
    /// (in block-scaled FP8 they follow the weight in its buffer: `[out, in]` bytes, then
    /// `[ceil(out / rows), ceil(in / cols)]` FP32; chosen here, one buffer a tensor with its
    /// scales). Per-tensor FP8 and INT8: `[out, in]` bytes and 24 bytes of scales
    /// (`SCALE_BYTES_A_MATRIX`); per-channel FP8 and INT8: `[out, in]` bytes, `[out]` FP32
    /// scales and 24 bytes of scales; NVFP4:
    /// `[out, ceil(in / 2)]` bytes, `[out, ceil(in / group)]` E4M3 scales and
    /// 24 bytes of scales (`SCALE_BYTES_A_MATRIX`); MXFP8: `[out, in]` bytes and `[out, ceil(in / 32)]` E8M0
    /// scales; integer groups: `[out, ceil(in · bits / 32)]` `int32`, `[out, ceil(in /
    /// group)]` 16-bit scales, `[ceil(out · bits / 32), ceil(in / group)]` `int32` zero
    /// points where asymmetric, `[in]` `int32` where GPTQ's `g_idx`, and
    /// 24 bytes of scales (`SCALE_BYTES_A_MATRIX`) for the rest (compressed-tensors' 16-byte `weight_shape`).
    /// MXFP4 files keep linear layers in 16 bits. Saturating: a matrix past `usize`
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
    /// engine allocates it: MXFP4 pads it to its backend's multiple
    /// ([`crate::config::Mxfp4Backend`]: 64 on vLLM's Triton backend, "to hold non-uniform
    /// sharded tensor"; 128 on Marlin, CUTLASS and FlashInfer); the others keep it.
    pub const fn expert_width(self, width: usize) -> usize {
        match self {
            WeightFormat::Mxfp4Experts { width_multiple, .. } => round_up(width, width_multiple),
            _ => width,
        }
    }

    /// The hidden size the routed experts read and write as the format's engine allocates
    /// them: MXFP4 pads it to its backend's multiple (256 on Marlin and FlashInfer's TRT-LLM
    /// kernels, 128 on CUTLASS, kept on Triton); the others keep it.
    pub const fn expert_hidden(self, hidden: usize) -> usize {
        match self {
            WeightFormat::Mxfp4Experts {
                hidden_multiple, ..
            } => round_up(hidden, hidden_multiple),
            _ => hidden,
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
            WeightFormat::Fp8Tensor => {
                elements.saturating_add(experts.saturating_mul(SCALE_BYTES_A_MATRIX))
            }
            WeightFormat::Fp8Channel | WeightFormat::Int8 { per_channel: true } => elements
                .saturating_add(experts.saturating_mul(out).saturating_mul(4))
                .saturating_add(experts.saturating_mul(SCALE_BYTES_A_MATRIX)),
            WeightFormat::Int8 { per_channel: false } => {
                elements.saturating_add(experts.saturating_mul(SCALE_BYTES_A_MATRIX))
            }
            WeightFormat::Nvfp4 { group } => {
                let rows = experts.saturating_mul(out);
                rows.saturating_mul(ceil_div(inp, 2))
                    .saturating_add(rows.saturating_mul(ceil_div(inp, group)))
                    .saturating_add(experts.saturating_mul(SCALE_BYTES_A_MATRIX))
            }
            WeightFormat::IntGroup {
                bits,
                group,
                zeros,
                row_index,
            } => {
                let rows = experts.saturating_mul(out);
                let groups = rows.saturating_mul(ceil_div(inp, group));
                let packed = rows
                    .saturating_mul(ceil_div(inp.saturating_mul(bits), 32))
                    .saturating_mul(4);
                let zero_points = match zeros {
                    true => experts
                        .saturating_mul(ceil_div(out.saturating_mul(bits), 32))
                        .saturating_mul(ceil_div(inp, group))
                        .saturating_mul(4),
                    false => 0,
                };
                let index = match row_index {
                    true => experts.saturating_mul(inp).saturating_mul(4),
                    false => 0,
                };
                packed
                    .saturating_add(groups.saturating_mul(2))
                    .saturating_add(zero_points)
                    .saturating_add(index)
                    .saturating_add(experts.saturating_mul(SCALE_BYTES_A_MATRIX))
            }
            WeightFormat::Mxfp8 => elements.saturating_add(
                experts
                    .saturating_mul(out)
                    .saturating_mul(ceil_div(inp, 32)),
            ),
            WeightFormat::Mxfp4Experts { .. } if routed => experts
                .saturating_mul(out)
                .saturating_mul(ceil_div(inp, 32))
                .saturating_mul(17),
            _ => elements.saturating_mul(2),
        }
    }
}

/// The FP32 scales a matrix carries beside its elements in the per-tensor-scaled formats
/// ([`WeightFormat::Fp8Tensor`]'s weight and input scales, [`WeightFormat::Nvfp4`]'s global
/// and input scales): vLLM keeps one of each a shard of a fused linear (`num_partitions`:
/// three for q/k/v) and of an expert's fused gate/up, so 2 × 3 × 4 bytes is the most a
/// declared matrix (or expert) holds. Chosen here as that bound: a plan never holds less.
const SCALE_BYTES_A_MATRIX: usize = 24;

/// `a` rounded up to a multiple of `m` (`a` itself for `m` 0 or 1).
const fn round_up(a: usize, m: usize) -> usize {
    if m <= 1 {
        a
    } else {
        a.div_ceil(m).saturating_mul(m)
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
