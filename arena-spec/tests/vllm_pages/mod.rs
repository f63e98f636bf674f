//! vLLM's KV page sizes by the names it gives their arguments (`vllm/v1/kv_cache_interface.py`:
//! `FullAttentionSpec`, `MLAAttentionSpec`, `SlidingWindowSpec`; the DeepSeek-V3.2 indexer's
//! cache spec), and the raw keys they read: shared by the KV tests.
#![allow(dead_code)] // each test binary uses its own part

use super::shipped::{config, n};
use arena_spec::{ModelConfig, ParallelLayout};
use serde_json::Value;

/// `AttentionSpec.page_size_bytes` (full and sliding alike): K and V.
pub fn attention_page(
    block_size: usize,
    num_kv_heads: usize,
    head_size: usize,
    dtype: usize,
) -> usize {
    2 * block_size * num_kv_heads * head_size * dtype
}

/// `MLAAttentionSpec`: one latent "head", no V.
pub fn mla_page(block_size: usize, head_size: usize, dtype: usize) -> usize {
    block_size * head_size * dtype
}

/// The indexer's cache: FP8 keys with an FP32 scale a `quant_block_size` (128) elements.
pub fn indexer_page(block_size: usize, index_head_dim: usize) -> usize {
    block_size * (index_head_dim + index_head_dim / 128 * 4)
}

/// A rank's kv heads, as vLLM's attention layers take them: `max(1, total // tp)`.
pub fn kv_heads_on_rank(total: usize, tp: usize) -> usize {
    (total / tp).max(1)
}

/// Rank 0 of tp where the layout shards the model (tp 1 always does); `None` where the
/// engine would refuse the layout too (heads not divisible).
pub fn sharded(name: &str, tp: usize) -> Option<ModelConfig> {
    let layout = ParallelLayout::new(tp, 1, 1).unwrap();
    match config(name).shard(&layout.rank(0).unwrap()) {
        Ok(c) => Some(c),
        Err(e) if tp > 1 => {
            eprintln!("{name} tp {tp}: {e}");
            None
        }
        Err(e) => panic!("{name}: {e}"),
    }
}

pub fn head_size(v: &Value) -> usize {
    v.get("head_dim")
        .and_then(Value::as_u64)
        .map_or(n(v, "hidden_size") / n(v, "num_attention_heads"), |d| {
            d as usize
        })
}
