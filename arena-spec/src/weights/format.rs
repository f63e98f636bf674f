//! The checkpoint's weight formats and the bytes of a matrix in each, from the format's
//! definition: what the weight declarations' `bytes` formulas call.

/// The checkpoint's weight format, from its `quantization_config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum WeightFormat {
    /// No quantization: every tensor in the model's 16-bit dtype.
    Bf16,
    /// Block-scaled FP8 (`quant_method: "fp8"` with `weight_block_size: [rows, cols]`,
    /// transformers' `FineGrainedFP8Config`, DeepSeek-V3's format): every linear and expert
    /// matrix one E4M3 byte an element plus one FP32 `weight_scale_inv` a `rows × cols`
    /// block (`ceil(out / rows) · ceil(in / cols)` a matrix); embeddings, the output head,
    /// routers, norms and biases in 16 bits (`FP8Linear` replaces `nn.Linear` modules only,
    /// and never `lm_head`).
    Fp8Block { rows: usize, cols: usize },
    /// MXFP4 experts (`quant_method: "mxfp4"`, gpt-oss): the routed experts' matrices as
    /// OCP microscaling FP4 — 4 bits an element and one E8M0 scale byte a block of 32
    /// (`*_blocks`, `*_scales`, transformers' `Mxfp4GptOssExperts`); everything else, expert
    /// biases included, in 16 bits (the file's `modules_to_not_convert`).
    Mxfp4Experts,
    /// A quantization whose bytes are not planned here (its `quant_method` is another, FP8
    /// without blocks or with `modules_to_not_convert`, DeepSeek-V4's FP4 experts): the
    /// caller gives the weight bytes.
    Unplanned,
}

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
