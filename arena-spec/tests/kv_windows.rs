//! A sequence's keys and values in the layers that keep only a window of it — every layer of
//! Mistral-7B-v0.1 and Phi-3-mini (`sliding_window` with no `layer_types`), Llama 4's chunked
//! layers, MiMo-V2-Flash's sliding layers at their own kv heads — against what vLLM v0.33.0
//! (`4ba787ec9`) keeps for it: each layer's spec and `max_memory_usage_bytes`, transcribed
//! below over the raw config keys (read with `serde_json`, not through `ModelConfig`), whole
//! and per rank at tp 1, 2 and 8.

use arena_spec::gpu_plan::PoolBlocks;
use arena_spec::{KvDtype, KvPoolSizes, ModelConfig, ParallelLayout};
use serde_json::Value;

const BLOCK: usize = 16;

/// One layer's cache as vLLM specs it.
enum Spec {
    /// `FullAttentionSpec`: every token.
    Full { page: usize },
    /// `SlidingWindowSpec` (`kv_cache_interface.py`: 918–955):
    /// `(cdiv(min(W - 1 + in_flight, max_model_len), B) + 1) · page`.
    Sliding { page: usize, window: usize },
    /// `ChunkedLocalAttentionSpec` (864–888): `cdiv(min(chunk + in_flight, max_model_len), B)
    /// · page`.
    Chunked { page: usize, chunk: usize },
}

impl Spec {
    fn max_memory_usage_bytes(&self, max_model_len: usize, in_flight: usize) -> usize {
        match *self {
            Spec::Full { page } => max_model_len.div_ceil(BLOCK) * page,
            Spec::Sliding { page, window } => {
                let tokens = (window - 1 + in_flight).min(max_model_len);
                (tokens.div_ceil(BLOCK) + 1) * page
            }
            Spec::Chunked { page, chunk } => {
                (chunk + in_flight).min(max_model_len).div_ceil(BLOCK) * page
            }
        }
    }
}

/// `AttentionSpec.real_page_size_bytes` with a value head of its own (`FullAttentionSpec`):
/// `B · kv_heads · (head_size + head_size_v) · 2` bytes at BF16, kv heads `max(1, total //
/// tp)` on a rank.
fn page(kv_heads: usize, tp: usize, head: usize, head_v: usize) -> usize {
    BLOCK * (kv_heads / tp).max(1) * (head + head_v) * 2
}

fn n(v: &Value, key: &str) -> usize {
    v[key].as_u64().unwrap_or_else(|| panic!("{key}")) as usize
}

/// Every layer's spec on a rank of tp, from the raw file.
fn vllm_specs(v: &Value, tp: usize) -> Vec<Spec> {
    let layers = n(v, "num_hidden_layers");
    let head = v
        .get("head_dim")
        .and_then(Value::as_u64)
        .map_or(n(v, "hidden_size") / n(v, "num_attention_heads"), |d| {
            d as usize
        });
    let kv = n(v, "num_key_value_heads");
    match v["model_type"].as_str().unwrap() {
        // No `layer_types`: `cache_config.sliding_window` is the file's window, every layer's
        // (`engine/arg_utils.py`: 2288–2294; `attention.py`: 266–271).
        "mistral" | "phi3" => (0..layers)
            .map(|_| Spec::Sliding {
                page: page(kv, tp, head, head),
                window: n(v, "sliding_window"),
            })
            .collect(),
        // `llama4.py`: 185, 251–252: a RoPE layer (`no_rope_layers[i] != 0`, by default all
        // but every fourth) attends within chunks.
        "llama4_text" | "llama4" => {
            let t = v.get("text_config").unwrap_or(v);
            let chunk = n(t, "attention_chunk_size");
            (0..layers)
                .map(|i| {
                    let p = page(kv, tp, head, head);
                    if (i + 1) % 4 != 0 {
                        Spec::Chunked { page: p, chunk }
                    } else {
                        Spec::Full { page: p }
                    }
                })
                .collect()
        }
        // `mimo_v2.py`: 403–436: `hybrid_layer_pattern[i] == 1` slides, with the swa_* widths
        // and `sliding_window_size`; the others at the full widths.
        "mimo_v2_flash" => v["hybrid_layer_pattern"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                if t.as_u64() == Some(1) {
                    Spec::Sliding {
                        page: page(
                            n(v, "swa_num_key_value_heads"),
                            tp,
                            n(v, "swa_head_dim"),
                            n(v, "swa_v_head_dim"),
                        ),
                        window: n(v, "sliding_window_size"),
                    }
                } else {
                    Spec::Full {
                        page: page(kv, tp, head, n(v, "v_head_dim")),
                    }
                }
            })
            .collect(),
        other => panic!("no transcription for {other}"),
    }
}

fn file(name: &str) -> (ModelConfig, Value) {
    let text = match arena_spec::models::find(name) {
        Some(m) => m.json.to_string(),
        None => std::fs::read_to_string(format!(
            "{}/tests/fixtures/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap(),
    };
    let config = ModelConfig::from_json_str(&text, name).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let v = match v.get("text_config") {
        Some(t) => {
            let mut t = t.clone();
            t["model_type"] = v["model_type"].clone();
            t
        }
        None => v,
    };
    (config, v)
}

#[test]
fn a_sequence_in_window_layers_is_what_vllm_keeps() {
    let mut checked = 0;
    for name in [
        "mistral-7b-v0.1",
        "phi-3-mini-4k-instruct",
        "llama-4-scout-17b-16e-instruct",
        "mimo-v2-flash.rewritten",
    ] {
        let (whole, v) = file(name);
        for tp in [1, 2, 8] {
            let layout = ParallelLayout::new(tp, 1, 1).unwrap();
            let Ok(rank) = whole.shard(&layout.rank(0).unwrap()) else {
                continue; // a split the heads refuse
            };
            let specs = vllm_specs(&v, tp);
            for (context, in_flight) in [(4096, 8192), (32_768, 8192), (131_072, 2048), (100, 16)] {
                let blocks = PoolBlocks::per_sequence(&rank, context, BLOCK, in_flight);
                let ours = KvPoolSizes::from_inputs(&rank, &blocks.inputs(BLOCK, KvDtype::Bf16));
                let vllm: usize = specs
                    .iter()
                    .map(|s| s.max_memory_usage_bytes(context, in_flight))
                    .sum();
                assert_eq!(
                    ours.total_bytes(),
                    vllm,
                    "{name} tp {tp}, {context} tokens, {in_flight} in flight: {blocks:?}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 40, "{checked}");
}

/// MiMo-V2-Flash's layers are the ones transformers resolves from `hybrid_layer_pattern`
/// (`tests/oracle/widths.json`), its full layers at the file's 4 kv heads, its sliding ones
/// at 8: 6.9 times fewer bytes a sequence at 128K than every layer full at 8.
#[test]
fn mimo_v2_flash_keeps_each_layer_kind_at_its_own_heads() {
    let (c, v) = file("mimo-v2-flash.rewritten");
    let oracle: Value = serde_json::from_str(include_str!("oracle/widths.json")).unwrap();
    let types = oracle["models"]["mimo-v2-flash.rewritten"]["config_echo"]["layer_types"]
        .as_array()
        .unwrap();
    let sliding = types.iter().filter(|t| *t == "sliding_attention").count();
    assert_eq!(c.num_sliding_kv_layers(), sliding);
    assert_eq!(c.num_full_kv_layers(), types.len() - sliding);
    // At tp 1, 2 and 8: vLLM's heads on a rank, `max(1, kv // tp)`, each of K at 192 and V at
    // 128 (`v_head_dim`).
    for tp in [1, 2, 8] {
        let layout = arena_spec::ParallelLayout::new(tp, 1, 1).unwrap();
        let r = c.shard(&layout.rank(0).unwrap()).unwrap();
        let on_rank = |key: &str| (n(&v, key) / tp).max(1) * (192 + 128);
        assert_eq!(
            r.full_kv_token_width(),
            on_rank("num_key_value_heads"),
            "tp {tp}"
        );
        assert_eq!(
            r.sliding_kv_token_width(),
            on_rank("swa_num_key_value_heads"),
            "tp {tp}"
        );
    }
}

/// Llama 4: an explicit `"attention_chunk_size": null` is no chunk (transformers keeps `None`,
/// vLLM then runs every layer at full length); an empty `no_rope_layers` list is none
/// (`Llama4TextConfig`: the interval's list), not a list of the wrong length.
#[test]
fn llama4_without_a_chunk_is_full_and_an_empty_rope_list_is_the_intervals() {
    let text = arena_spec::models::find("llama-4-scout-17b-16e-instruct")
        .unwrap()
        .json;
    let v: Value = serde_json::from_str(text).unwrap();
    let with = |key: &str, value: Value| {
        let mut v = v.clone();
        v["text_config"][key] = value;
        ModelConfig::from_json_str(&v.to_string(), "scout.json").unwrap()
    };
    let none = with("attention_chunk_size", Value::Null);
    assert_eq!(none.num_chunked_kv_layers(), 0);
    assert_eq!(none.num_full_kv_layers(), 48);
    let empty = with("no_rope_layers", serde_json::json!([]));
    assert_eq!(
        (empty.num_chunked_kv_layers(), empty.num_full_kv_layers()),
        (36, 12)
    );
    let listed = with("no_rope_layers", serde_json::json!(vec![1; 48]));
    assert_eq!(listed.num_chunked_kv_layers(), 48);
}

/// A census file as its class wrote it (`layer_types` listed) and the same with `layer_types`
/// removed from `text` (the top level, or a wrapper's `text_config`) and `edit` applied, both
/// loaded: the loader must write the list the class writes.
fn listed_and_unlisted(
    file: &str,
    text: Option<&str>,
    edit: impl FnOnce(&mut serde_json::Map<String, Value>),
) -> (ModelConfig, ModelConfig) {
    let path = format!("{}/tests/census/configs/{file}", env!("CARGO_MANIFEST_DIR"));
    let listed: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut unlisted = listed.clone();
    let obj = match text {
        Some(key) => unlisted[key].as_object_mut().unwrap(),
        None => unlisted.as_object_mut().unwrap(),
    };
    obj.remove("layer_types");
    edit(obj);
    let load = |v: &Value| ModelConfig::from_json_str(&v.to_string(), file).unwrap();
    (load(&listed), load(&unlisted))
}

/// Granite-SWA without `layer_types`: the first of every four layers attends to the whole
/// sequence, the other three slide (`GraniteSWAConfig.__post_init__`: full where `i % 4 ==
/// 0`), as the class writes the list its census file carries; with the list, the list.
#[test]
fn granite_swa_without_layer_types_opens_each_four_with_a_full_layer() {
    use arena_spec::KvLayer;
    let (with, without) = listed_and_unlisted("granite_swa.json", None, |_| {});
    assert_eq!(with.kv_layers, without.kv_layers);
    let kinds = &without.kv_layers;
    assert_eq!(kinds.len(), 24);
    for (i, kind) in kinds.iter().enumerate() {
        let want = if i % 4 == 0 {
            KvLayer::Full
        } else {
            KvLayer::Sliding
        };
        assert_eq!(*kind, want, "layer {i}");
    }
}

/// Cohere 2 MoE without `layer_types`: the first `first_k_dense_replace` layers follow
/// `prefix_dense_sliding_window_pattern` (default 1: every one full) and the window pattern
/// starts again after them (`Cohere2MoeConfig.__post_init__`), as its class writes the list.
#[test]
fn cohere2_moe_without_layer_types_restarts_its_pattern_after_the_dense_prefix() {
    use arena_spec::KvLayer::{Full, Sliding};
    let (with, without) = listed_and_unlisted("cohere2_moe.shared_dense.json", None, |obj| {
        obj.insert("first_k_dense_replace".into(), serde_json::json!(2));
    });
    assert_eq!(with.kv_layers, without.kv_layers);
    assert_eq!(
        without.kv_layers[..7],
        [Full, Full, Sliding, Sliding, Sliding, Full, Sliding]
    );
}

/// Muse Glimmer's text model without `layer_types`: each fourth layer counted back from the
/// last is full (`MuseGlimmerTextConfig.__post_init__`: `(layers - 1 - i) % 4 == 0`), as its
/// class writes the list its census file carries.
#[test]
fn muse_glimmer_without_layer_types_counts_its_full_layers_from_the_last() {
    let (with, without) = listed_and_unlisted("muse_glimmer.json", Some("text_config"), |_| {});
    assert_eq!(with.kv_layers, without.kv_layers);
    let n = without.kv_layers.len();
    assert_eq!(without.kv_layers[n - 1], arena_spec::KvLayer::Full);
    assert_eq!(without.num_full_kv_layers(), n.div_ceil(4));
}

/// Beam without `layer_types`: every sixth layer and the last are full
/// (`BeamConfig.__post_init__`), as its class writes the list its census file carries.
#[test]
fn beam_without_layer_types_keeps_every_sixth_and_the_last_layer_whole() {
    let (with, without) = listed_and_unlisted("beam.json", None, |_| {});
    assert_eq!(with.kv_layers, without.kv_layers);
    // 52 layers: 5, 11, …, 47 and 51.
    assert_eq!(without.num_full_kv_layers(), 9);
}

/// Flint without `layer_types` or `mlp_only_layers`: the first two layers, each `i % 4 == 1`
/// and the last are full, and layers 0 and 1 run the dense MLP (`FlintConfig.__post_init__`),
/// as its class writes the lists its census file carries.
#[test]
fn flint_without_its_lists_keeps_its_classs_full_and_dense_layers() {
    use arena_spec::KvLayer;
    let (with, without) = listed_and_unlisted("flint.json", None, |obj| {
        obj.remove("mlp_only_layers");
    });
    assert_eq!(with.kv_layers, without.kv_layers);
    assert_eq!(with.dense_ffn_layers, without.dense_ffn_layers);
    let n = without.kv_layers.len();
    assert_eq!(n, 49);
    for (i, kind) in without.kv_layers.iter().enumerate() {
        let full = i < 2 || i % 4 == 1 || i == n - 1;
        let want = if full {
            KvLayer::Full
        } else {
            KvLayer::Sliding
        };
        assert_eq!(*kind, want, "layer {i}");
        assert_eq!(without.dense_ffn_layers[i], i < 2, "layer {i}");
    }
}
