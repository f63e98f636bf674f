//! Llama-3.3-Nemotron-Super-49B (`nemotron-nas`, DeciLM) checked by hand: transformers cannot
//! build it (its modeling file is NVIDIA's remote code), so the oracle has no entry, and each
//! width here is worked from NVIDIA's `modeling_decilm.py` (`DeciLMAttention`: kv heads =
//! heads / `n_heads_in_group`, head_dim = hidden / heads; `_ffn_mult_to_intermediate_size`:
//! `int(2 · ffn_mult · hidden / 3)` rounded up to 256) over the vendor file's 80 blocks.

use arena_spec::{models, ArenaInputs, LayerKind};

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
    let sizes = ArenaInputs {
        max_batch_tokens: 1024,
        ..ArenaInputs::AT_128K
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
