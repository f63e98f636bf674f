//! Llama-3.3-Nemotron-Super-49B (`nemotron-nas`, DeciLM) checked by hand: transformers cannot
//! build it (its modeling file is NVIDIA's remote code), so the oracle has no entry, and each
//! width here is worked from NVIDIA's `modeling_decilm.py` (`DeciLMAttention`: kv heads =
//! heads / `n_heads_in_group`, head_dim = hidden / heads; `_ffn_mult_to_intermediate_size`:
//! `int(2 · ffn_mult · hidden / 3)` rounded up to 256) over the vendor file's 80 blocks.

use arena_spec::weights::{parameters, WeightFormat, WeightFormats, WeightLayers, WeightsSizes};
use arena_spec::{models, BufferArenaInputs, LayerKind, ParallelLayout};
use serde_json::Value;

#[test]
fn the_widest_block_of_each_kind_sizes_the_arena() {
    let c = models::find("llama-3.3-nemotron-super-49b-v1")
        .unwrap()
        .config_with_levers(Default::default())
        .unwrap();
    // hidden 8192, 64 heads of 8192 / 64 = 128; every attention block has n_heads_in_group
    // 8, so 8 kv heads; 31 blocks' attention is a no-op (an FFN-only layer).
    assert_eq!(
        (c.hidden_size, c.num_attention_heads, c.head_dim()),
        (8192, 64, 128)
    );
    assert_eq!(c.num_key_value_heads, 8);
    let attention = c
        .layer_kinds()
        .iter()
        .filter(|&&k| k == LayerKind::Attention)
        .count();
    assert_eq!((c.layer_kinds().len(), attention), (80, 49));
    // The widest FFN: ffn_mult 5.25 (48 blocks, block 46 among the no-op ones), 2 · 5.25 ·
    // 8192 / 3 = 28672 exactly. The narrowest, 0.5, is 2730 → 2816.
    assert_eq!(c.intermediate_size, 28672);
    // The buffers: q | k | v = 8192 + 2 · 8 · 128; the gate/up outputs 28672 wide.
    let sizes = BufferArenaInputs {
        max_batch_tokens: 1024,
        ..BufferArenaInputs::AT_128K
    }
    .sizes(&c)
    .unwrap();
    assert_eq!(sizes.qkv_output, 1024 * (8192 + 2 * 8 * 128) * 2);
    assert_eq!(sizes.expert_gate_out, 1024 * 28672 * 2);
    assert_eq!(sizes.attn_output, 1024 * 8192 * 2);
}

#[test]
fn a_block_the_arena_does_not_size_is_refused_in_one_line() {
    let text = models::find("llama-3.3-nemotron-super-49b-v1")
        .unwrap()
        .json;
    let linear = text.replacen(
        "\"replace_with_linear\": false",
        "\"replace_with_linear\": true",
        1,
    );
    let err = arena_spec::ModelConfig::from_json_str_with_levers(
        &linear,
        std::path::Path::new("nas.json"),
        Default::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("block 0: attention.replace_with_linear") && !err.contains('\n'),
        "{err}"
    );
    let group = text.replacen("\"n_heads_in_group\": 8", "\"n_heads_in_group\": 7", 1);
    let err = arena_spec::ModelConfig::from_json_str_with_levers(
        &group,
        std::path::Path::new("nas.json"),
        Default::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("n_heads_in_group must divide num_attention_heads 64"),
        "{err}"
    );
}

/// A DeciLM file's parameters as vLLM's `DeciLMForCausalLM` builds them
/// (`vllm/model_executor/models/nemotron_nas.py`), read from the file's JSON here rather than
/// through `ModelConfig`: the embedding and an untied head, the final norm, and a block at a
/// time a `LlamaAttention` (q and o `[hidden, hidden]`, k and v `[kv · head, hidden]`, kv =
/// heads / `n_heads_in_group`) with its `input_layernorm` unless its attention is a no-op,
/// and a `LlamaMLP` (gate, up, down at `_ffn_mult_to_intermediate_size`: `int(2 · ffn_mult ·
/// hidden / 3)` rounded up to 256) with its `post_attention_layernorm` unless its FFN is.
pub(crate) fn decilm_parameters(file: &Value) -> u64 {
    let n = |key: &str| file[key].as_u64().unwrap();
    let (hidden, heads, vocab) = (n("hidden_size"), n("num_attention_heads"), n("vocab_size"));
    let head = hidden / heads;
    let heads_tied = if file["tie_word_embeddings"].as_bool().unwrap() {
        1
    } else {
        2
    };
    let mut total = heads_tied * vocab * hidden + hidden;
    for block in file["block_configs"].as_array().unwrap() {
        let (attention, ffn) = (&block["attention"], &block["ffn"]);
        if !attention["no_op"].as_bool().unwrap() {
            let kv = heads / attention["n_heads_in_group"].as_u64().unwrap();
            total += 2 * hidden * hidden + 2 * kv * head * hidden + hidden;
        }
        if !ffn["no_op"].as_bool().unwrap() {
            let width = (2.0 * ffn["ffn_mult"].as_f64().unwrap() * hidden as f64 / 3.0) as u64;
            total += 3 * hidden * width.div_ceil(256) * 256 + hidden;
        }
    }
    total
}

/// DeciLM's blocks at their own widths: Llama-3.3-Nemotron-Super-49B's 49 attention blocks
/// at 8 kv heads, 80 FFNs at six widths (28,672 down to 2,816), each matrix where
/// `FfnBlocks::range` says; on a tp 2 rank, each block's half.
#[test]
fn decilm_blocks_are_weighed_at_their_own_widths() {
    let c = crate::shipped::config("llama-3.3-nemotron-super-49b-v1");
    let w = WeightLayers::of(&c, false).unwrap();
    assert_eq!((w.attention.layers, w.attention.k), (49, 8 * 128));
    assert_eq!((w.ffn_blocks.layers(), w.dense.layers), (80, 0));
    assert_eq!((w.block_norms, w.norms_per_layer), (49 + 80, 0));
    let mut widths = w.ffn_blocks.widths.clone();
    widths.sort_unstable();
    widths.dedup();
    assert_eq!(widths, [2816, 5632, 7168, 14336, 17920, 28672]);
    // 49,867,145,216 parameters: the published "49B" of the model card.
    assert_eq!(parameters(&c).unwrap(), 49_867_145_216);

    let s = WeightsSizes::with_layers(&c, &w, &WeightFormats::BF16).unwrap();
    let bf16 = WeightFormat::Bf16;
    let total: usize = w.ffn_blocks.widths.iter().map(|&x| 2 * x * 8192).sum();
    assert_eq!(s.ffn.block_up_proj, total);
    assert_eq!(w.ffn_blocks.bytes(bf16, 8192, true), total);
    // Block 1 starts where block 0's matrix ends; the last ends at the buffer's end.
    let first = w.ffn_blocks.range(0, bf16, 8192, false).unwrap();
    assert_eq!(first, 0..2 * w.ffn_blocks.widths[0] * 8192);
    assert_eq!(
        w.ffn_blocks.range(1, bf16, 8192, false).unwrap().start,
        first.end
    );
    assert_eq!(w.ffn_blocks.range(79, bf16, 8192, true).unwrap().end, total);
    assert_eq!(w.ffn_blocks.range(80, bf16, 8192, true), None);

    let layout = ParallelLayout::new(2, 1, 2).unwrap();
    let rank = c.shard(&layout.rank(0).unwrap()).unwrap();
    let r = WeightLayers::of(&rank, true).unwrap();
    let stage: Vec<usize> = w.ffn_blocks.widths[..40].iter().map(|x| x / 2).collect();
    assert_eq!(r.ffn_blocks.widths, stage);
    assert_eq!(r.attention.k, 4 * 128);
}
