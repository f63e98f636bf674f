// An arena with derived values and a buffer carved into regions by `#[derive(Regions)]`.
use arena_runtime::{dtype::F8E4M3, Arena, DevicePtr, Regions};

/// Shapes of a small attention block.
#[derive(Debug, Clone)]
pub struct Shapes {
    pub hidden: usize,
    pub heads: usize,
    pub head_dim: usize,
}

/// Attention scratch: scores | probabilities | row maxima, back to back.
#[derive(Regions)]
#[regions(layout = AttnScratchLayout, inputs(shapes: &Shapes, rows: usize), align = 128)]
pub struct AttnScratch {
    /// Raw scores.
    #[region(shape = [rows, shapes.heads, rows])]
    pub scores: DevicePtr<f32>,
    /// Softmax output.
    #[region(shape = [rows, shapes.heads, rows])]
    pub probs: DevicePtr<u16>,
    /// One running maximum per row and head.
    #[region(shape = [rows, shapes.heads])]
    pub row_max: DevicePtr<f32>,
}

/// Buffers of one block, rows padded to the GEMM tile.
#[derive(Arena)]
#[arena(
    sizes = BlockSizes,
    inputs(shapes: &Shapes, max_batch_tokens: usize),
    derived(m16 = ceil16(max_batch_tokens), width = max(shapes.hidden, shapes.heads * shapes.head_dim))
)]
pub struct BlockArena {
    /// FP8 activations, `[ceil16(M), widest K]`.
    #[buffer(shape = [m16, width])]
    pub act_fp8: DevicePtr<F8E4M3>,
    /// One f32 scale per 128 activations.
    #[buffer(shape = [m16, ceil_div(width, 128)])]
    pub act_scale: DevicePtr<f32>,
    /// Attention scratch, carved by `AttnScratch::carve`.
    #[buffer(bytes = AttnScratch::layout(shapes, max_batch_tokens), gate = shapes.heads > 0)]
    pub attn_scratch: DevicePtr<u8>,
    /// Token ids, at least 256 bytes.
    #[buffer(shape = [max_batch_tokens], min_bytes = 256)]
    pub token_ids: DevicePtr<u32>,
}
