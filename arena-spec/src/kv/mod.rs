//! The KV block pool: the keys and values every attention layer keeps for the tokens of the
//! sequences in flight, in blocks of `block_tokens` tokens, declared like the activation arena
//! (one annotated field per kind of layer, each repeated once per layer of its kind).
//!
//! A block's bytes a layer are vLLM's page size for the layer's spec
//! (`vllm/v1/kv_cache_interface.py`, vllm-project/vllm v0.19.1, the same formulas at
//! `001cabc1`; the lines are cited on each field):
//! `block_tokens` × the elements one token keeps × the element's bytes, K and V together.
//! Which layers slide, share or keep nothing is [`ModelConfig::kv_layers`]
//! ([`crate::KvLayer`]); a rank's pool is this one sized from its config
//! (`ModelConfig::shard`): kv heads split by tp (replicated where fewer than tp, as the rank
//! sizing already does), MLA's latent whole on every rank, the layers of its pipeline stage.
//!
//! Full-length layers and sliding layers draw on two block counts: a sliding layer never holds
//! more than its window of a sequence and the step in flight
//! ([`sliding_blocks_per_sequence`]), so
//! a plan gives it `sliding_blocks` of its own rather than a block for every block a full
//! layer holds (chosen here: two pools sized apart, the static form of what vLLM's hybrid
//! allocator does by freeing a sliding layer's blocks as its window moves on).

use crate::config::ModelConfig;
use arena_runtime::{Arena, DevicePtr};

/// The element type of the cached keys and values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KvDtype {
    /// The model's dtype (vLLM's `kv_cache_dtype="auto"` for a BF16 model): 2 bytes.
    Bf16,
    /// FP8 (vLLM's `kv_cache_dtype="fp8"`, per-tensor scales kept outside the pool): 1 byte.
    Fp8,
}

impl KvDtype {
    /// Bytes of one cached element.
    pub const fn bytes(self) -> usize {
        match self {
            KvDtype::Bf16 => 2,
            KvDtype::Fp8 => 1,
        }
    }
}

/// Every attention layer's keys and values, in blocks of `block_tokens` tokens: `blocks`
/// blocks a full-length layer, `sliding_blocks` a sliding-window layer; DeepSeek-V4's
/// compressed entries in blocks of `block_tokens` entries, `csa_blocks` a CSA layer and
/// `hca_blocks` an HCA layer. Each buffer holds its layers back to back (`per_layer`), a
/// layer's blocks as `[blocks, block_tokens, bytes a token]` `u8`: the last dimension is the
/// cached elements' bytes at `kv_dtype` (the fields' docs give the elements), since one
/// declaration serves every `kv_dtype`; `KvPoolViews::of(&pool).full.layer(i)` is layer
/// `i`'s blocks, and an attention kernel reads them at its own element type. A model without
/// a kind of layer has that buffer 0 bytes and NULL. Prefer `KvPoolSizes::from_inputs` with
/// a [`KvPoolInputs`] to `from_config`: the counts are named, so two cannot be swapped.
#[derive(Arena, Debug, Clone, Copy)]
#[arena(
    sizes = KvPoolSizes,
    inputs_struct(KvPoolInputs, derive(serde::Serialize)),
    inputs(
        config: &ModelConfig,
        block_tokens: usize,
        blocks: usize,
        sliding_blocks: usize,
        csa_blocks: usize,
        hca_blocks: usize,
        kv_dtype: KvDtype
    ),
    docs(
        sizes = "Byte size of each kind of layer's blocks, every layer of the kind together.",
        from_config = "Every layer kind's blocks, in bytes.",
        total_bytes = "The pool: what the engine reserves for keys and values."
    )
)]
pub struct KvPool {
    /// K and V of a full-length attention layer: `[blocks, block_tokens, 2 · kv_heads ·
    /// head_dim]` elements a layer (vLLM `AttentionSpec.real_page_size_bytes`, 79–87: `2 ·
    /// block_size · num_kv_heads · head_size · dtype_size`; `FullAttentionSpec`, 180–187: a
    /// value head of its own size, `head_size + head_size_v`; Gemma 4's full layers at
    /// `global_head_dim`, vLLM's `gemma4.py`, 452–470).
    #[buffer(
        per_layer = config.num_full_kv_layers(),
        shape = [blocks, block_tokens, config.full_kv_token_width() * kv_dtype.bytes()],
        gate = config.num_full_kv_layers() > 0 && !config.is_mla()
    )]
    pub full: DevicePtr<u8>,
    /// MLA's cache, one latent a token shared by every head: `[blocks, block_tokens,
    /// kv_lora_rank + qk_rope_head_dim]` elements a layer (vLLM `MLAAttentionSpec`, 191–206:
    /// one kv head of `head_size = kv_lora_rank + qk_rope_head_dim`, `mla_attention.py`: 316,
    /// no separate V; the `fp8_ds_mla` layout's 656 bytes a token is not planned).
    #[buffer(
        per_layer = config.num_full_kv_layers(),
        shape = [blocks, block_tokens, config.full_kv_token_width() * kv_dtype.bytes()],
        gate = config.num_full_kv_layers() > 0 && config.is_mla()
    )]
    pub mla_latent: DevicePtr<u8>,
    /// DeepSeek-V3.2's indexer keys: `[blocks, block_tokens, index_head_dim + 4 ·
    /// index_head_dim / 128]` bytes a layer, the FP8 key and an FP32 scale a 128 elements
    /// whatever `kv_dtype` (vLLM `deepseek_v2.py`, 584–610 and 660–669:
    /// `DeepseekV32IndexerCache`, `head_dim + head_dim // quant_block_size * 4`, uint8), on
    /// the layers that build an indexer ([`ModelConfig::indexer_layers`]).
    #[buffer(
        per_layer = config.num_indexer_layers(),
        shape = [blocks, block_tokens, config.indexer_key_token_bytes()],
        gate = config.num_indexer_layers() > 0
    )]
    pub indexer_keys: DevicePtr<u8>,
    /// K and V of a sliding-window layer: `[sliding_blocks, block_tokens, 2 · kv_heads ·
    /// head_dim]` elements a layer (vLLM `SlidingWindowSpec`: the page of a full layer), or
    /// of a chunked-local-attention layer (Llama 4's; `ChunkedLocalAttentionSpec`, the same
    /// page).
    /// DeepSeek-V4's window (every one of its layers keeps one, of its one K=V vector of
    /// `head_dim`: vLLM v0.34 `DeepseekV4SWACache`, a `SlidingWindowMLASpec` of one head,
    /// `sparse_swa.py`: 76–148).
    #[buffer(
        per_layer = config.num_sliding_kv_layers(),
        shape = [sliding_blocks, block_tokens, config.sliding_kv_token_width() * kv_dtype.bytes()],
        gate = config.num_sliding_kv_layers() > 0
    )]
    pub sliding: DevicePtr<u8>,
    /// DeepSeek-V4's CSA entries, one a `index_compress_ratio` tokens of a sequence:
    /// `[csa_blocks, block_tokens, head_dim]` elements a layer (vLLM v0.34
    /// `DeepseekV4Attention.get_kv_cache_spec`, `deepseek_v4/attention.py`: 817–840: an MLA
    /// spec of one `head_dim` head, `tokens_per_state = compress_ratio`).
    #[buffer(
        per_layer = config.num_csa_kv_layers(),
        shape = [csa_blocks, block_tokens, config.head_dim() * kv_dtype.bytes()],
        gate = config.num_csa_kv_layers() > 0
    )]
    pub csa_entries: DevicePtr<u8>,
    /// The indexer's keys of the CSA entries: `[csa_blocks, block_tokens, index_head_dim +
    /// 4 · index_head_dim / 128]` bytes a layer, FP8 with an FP32 scale a 128 (vLLM v0.34
    /// `DeepseekV4IndexerCache`, `attention.py`: 843–880 and 983–986).
    #[buffer(
        per_layer = config.num_csa_kv_layers(),
        shape = [csa_blocks, block_tokens, config.indexer_key_token_bytes()],
        gate = config.num_csa_kv_layers() > 0 && config.has_indexer()
    )]
    pub csa_indexer_keys: DevicePtr<u8>,
    /// DeepSeek-V4's HCA entries, one a `hca_compress_ratio` tokens: `[hca_blocks,
    /// block_tokens, head_dim]` elements a layer (as the CSA entries).
    #[buffer(
        per_layer = config.num_hca_kv_layers(),
        shape = [hca_blocks, block_tokens, config.head_dim() * kv_dtype.bytes()],
        gate = config.num_hca_kv_layers() > 0
    )]
    pub hca_entries: DevicePtr<u8>,
}

/// Blocks one sequence of `tokens` tokens needs for DeepSeek-V4's compressed entries at
/// `ratio`: one entry a `ratio` tokens (a partial group already has its entry, vLLM's
/// `cdiv`), `block_tokens` entries a block; 0 at ratio 0 (no such layers).
pub const fn compressed_blocks_per_sequence(
    tokens: usize,
    ratio: usize,
    block_tokens: usize,
) -> usize {
    if ratio == 0 {
        return 0;
    }
    tokens.div_ceil(ratio).div_ceil(block_tokens)
}

/// Blocks one sequence of `tokens` tokens needs in a full-length layer: `ceil(tokens /
/// block_tokens)`.
pub const fn full_blocks_per_sequence(tokens: usize, block_tokens: usize) -> usize {
    tokens.div_ceil(block_tokens)
}

/// Blocks one sequence of `tokens` tokens needs in a chunked-local-attention layer of
/// `chunk` tokens, while a step of up to `max_batch_tokens` tokens is in flight: vLLM's
/// `ChunkedLocalAttentionSpec.max_memory_usage_bytes` (`kv_cache_interface.py`, v0.33.0:
/// 864–888), `cdiv(min(chunk + max_batch_tokens, tokens), block_tokens)` — the current chunk
/// and the step's new tokens; the blocks of earlier chunks are freed
/// (`ChunkedLocalAttentionManager`, `single_type_kv_cache_manager.py`: 1422–1424).
pub const fn chunked_blocks_per_sequence(
    tokens: usize,
    chunk: usize,
    block_tokens: usize,
    max_batch_tokens: usize,
) -> usize {
    let held = chunk.saturating_add(max_batch_tokens);
    let held = if held < tokens { held } else { tokens };
    held.div_ceil(block_tokens)
}

/// Blocks one sequence of `tokens` tokens needs in a sliding layer of `window` tokens, while
/// a step of up to `max_batch_tokens` tokens is in flight: vLLM's
/// `SlidingWindowSpec.max_memory_usage_bytes` (`kv_cache_interface.py`, v0.19.1: 251–270),
/// `cdiv(min(window - 1 + max_batch_tokens, tokens), block_tokens) + 1` — the window and the
/// step's new tokens, and one block more because the window need not start at a block's
/// start.
pub const fn sliding_blocks_per_sequence(
    tokens: usize,
    window: usize,
    block_tokens: usize,
    max_batch_tokens: usize,
) -> usize {
    let held = window.saturating_sub(1).saturating_add(max_batch_tokens);
    let held = if held < tokens { held } else { tokens };
    held.div_ceil(block_tokens) + 1
}
