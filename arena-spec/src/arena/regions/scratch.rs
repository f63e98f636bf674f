use super::decode_meta::DecodeMeta;
use crate::arena::constants::{Q12_SIZING_STREAMS, VERIFY_ROW_CAP};
use crate::arena::sizing::{q12_batched_scratch_bytes_varlen, router_top_k};
use crate::config::ModelConfig;
use arena_runtime::{DevicePtr, Regions};

/// The step's metadata regions: positions, slots, block tables, sequence lengths, the
/// decode-metadata block, the router's top-K and the kernel-batched prefill staging. The
/// seeds list what `scratch` holds (the block-table rule, decode rows, the batched-prefill
/// staging); these regions, their order and element types are chosen here.
#[derive(Regions)]
#[regions(
    const,
    layout = ScratchLayout,
    inputs(config: &ModelConfig, max_batch_tokens: usize, blocks_per_seq: usize, decode_rows: usize),
    derived(top_k = router_top_k(config))
)]
pub struct Scratch {
    /// Position of each token; three streams under MRoPE.
    #[region(shape = [config.position_streams(), max_batch_tokens])]
    pub positions: DevicePtr<i32>,
    /// KV-cache slot of each token.
    #[region(shape = [max_batch_tokens])]
    pub slot_mapping: DevicePtr<i64>,
    /// Block table, one row per decode sequence.
    #[region(shape = [decode_rows, blocks_per_seq])]
    pub block_table: DevicePtr<i32>,
    /// Block table of a batched MTP verify, one row per verified row.
    #[region(shape = [VERIFY_ROW_CAP, blocks_per_seq])]
    pub verify_block_table: DevicePtr<i32>,
    /// Sequence length of each decode row.
    #[region(shape = [decode_rows])]
    pub seq_lens: DevicePtr<i32>,
    /// Prefix sums of the query lengths.
    #[region(shape = [decode_rows + 1])]
    pub cu_seqlens: DevicePtr<i32>,
    /// The fixed-stride decode-metadata block (`decode_meta`).
    #[region(bytes = DecodeMeta::bytes(decode_rows))]
    pub decode_meta: DevicePtr<u8>,
    /// Expert ids of each token's top-K (empty for a dense model).
    #[region(shape = [max_batch_tokens, top_k])]
    pub moe_topk_ids: DevicePtr<i32>,
    /// Router weights of each token's top-K.
    #[region(shape = [max_batch_tokens, top_k])]
    pub moe_topk_weights: DevicePtr<f32>,
    /// Kernel-batched prefill staging for `Q12_SIZING_STREAMS` streams over the step's tokens.
    #[region(bytes = q12_batched_scratch_bytes_varlen(config, Q12_SIZING_STREAMS, max_batch_tokens, max_batch_tokens))]
    pub q12_staging: DevicePtr<u8>,
}
