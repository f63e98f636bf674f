//! Every shipped model and test fixture held to vLLM's KV page sizes at tp 1, 2 and 8: the
//! ones no test of their own holds, here; the table names the test holding each other one.

use arena_spec::models::SHIPPED;
use arena_spec::{KvDtype, KvPoolSizes, ModelConfig, ParallelLayout};
use serde_json::Value;

use crate::shipped;
use crate::vllm_pages;
use shipped::{config, n, raw};
use vllm_pages::{attention_page, head_size, kv_heads_on_rank};

const BLOCK: usize = 16;
const BLOCKS: usize = 100;

/// The shipped models and fixtures held to vLLM's page sizes by a test of their own (MLA
/// latents, Gemma 4's per-type heads and shared layers, DeepSeek-V4's compressed entries,
/// MiMo's per-type heads); every other one is held by
/// [`every_other_shipped_model_and_fixture_keeps_vllms_attention_pages`] below.
const HELD_BY_THEIR_OWN_TEST: &[(&str, &str)] = &[
    (
        "deepseek-v3",
        "kv_pool.rs: mla_and_indexer_pages_are_vllms_and_whole_on_every_rank",
    ),
    (
        "deepseek-v3.2",
        "kv_pool.rs: mla_and_indexer_pages_are_vllms_and_whole_on_every_rank",
    ),
    (
        "glm-5",
        "kv_pool.rs: mla_and_indexer_pages_are_vllms_and_whole_on_every_rank",
    ),
    (
        "kimi-k2",
        "kv_pool.rs: mla_and_indexer_pages_are_vllms_and_whole_on_every_rank",
    ),
    (
        "kimi-k2.5",
        "kv_pool.rs: mla_and_indexer_pages_are_vllms_and_whole_on_every_rank",
    ),
    (
        "kimi-linear-48b-a3b-instruct",
        "kv_pool.rs: mla_and_indexer_pages_are_vllms_and_whole_on_every_rank",
    ),
    (
        "deepseek-v4-flash",
        "kv_pool.rs: deepseek_v4_keeps_a_window_and_its_compressed_entries_as_vllm_declares_them",
    ),
    (
        "deepseek-v4-pro",
        "kv_pool.rs: deepseek_v4_keeps_a_window_and_its_compressed_entries_as_vllm_declares_them",
    ),
    (
        "gemma-4-31b-it",
        "kv_pool.rs: gemma4_full_layers_use_their_own_head_size_and_shared_layers_keep_nothing",
    ),
    (
        "gemma-4-26b-a4b",
        "kv_pool.rs: gemma4_full_layers_use_their_own_head_size_and_shared_layers_keep_nothing",
    ),
    (
        "gemma-4-e2b-it",
        "kv_pool.rs: gemma4_full_layers_use_their_own_head_size_and_shared_layers_keep_nothing",
    ),
    (
        "gemma-4-e4b-it",
        "kv_pool.rs: gemma4_full_layers_use_their_own_head_size_and_shared_layers_keep_nothing",
    ),
    (
        "mimo-v2-flash.rewritten",
        "kv_windows.rs: mimo_v2_flash_keeps_each_layer_kind_at_its_own_heads",
    ),
];

/// A fixture's config and its raw text config.
fn fixture(name: &str) -> (ModelConfig, Value) {
    let path = format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("Infinity", "1e308");
    let v: Value = serde_json::from_str(&text).unwrap();
    let text = v.get("text_config").cloned().unwrap_or(v);
    (ModelConfig::load(&path).unwrap(), text)
}

/// Every shipped model and test fixture not held by a test of its own (nor synthetic), at tp
/// 1, 2 and 8
/// (where the layout shards it; tp 1 always): each softmax-attention layer's page is vLLM's
/// `AttentionSpec` page (`vllm/v1/kv_cache_interface.py`) at the rank's kv heads,
/// `max(1, kv // tp)`, and the layers keeping one are the file's attention layers (a
/// Nemotron-NAS file's kv heads are `num_attention_heads / n_heads_in_group` of its blocks
/// that are not `no_op`, as vLLM's `DeciLMForCausalLM` reads them).
#[test]
fn every_other_shipped_model_and_fixture_keeps_vllms_attention_pages() {
    let fixtures = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            p.file_stem().unwrap().to_str().unwrap().to_string()
        });
    let names: Vec<String> = SHIPPED
        .iter()
        .map(|m| m.name.to_string())
        .chain(fixtures)
        .filter(|n| !HELD_BY_THEIR_OWN_TEST.iter().any(|(m, _)| m == n))
        // Invented keys, turned on all at once: no engine runs them.
        .filter(|n| !n.starts_with("synthetic"))
        .collect();
    assert!(names.len() >= 40, "{names:?}");
    for name in &names {
        let (whole, mut v) = match SHIPPED.iter().any(|m| m.name == name) {
            true => (config(name), raw(name)),
            false => fixture(name),
        };
        // The keys Gemma-3-4B's text config leaves to `Gemma3TextConfig`'s defaults
        // (`configuration_gemma3.py`: 77–79).
        if v["model_type"] == "gemma3_text" {
            for (key, default) in [
                ("num_attention_heads", 8),
                ("num_key_value_heads", 4),
                ("head_dim", 256),
            ] {
                v.as_object_mut()
                    .unwrap()
                    .entry(key)
                    .or_insert(default.into());
            }
        }
        if whole.num_attention_layers() == 0 {
            // Mamba-2 alone: nothing to page (its states: state_cache.rs).
            assert_eq!(
                KvPoolSizes::from_config(&whole, BLOCK, BLOCKS, BLOCKS, 0, 0, KvDtype::Bf16)
                    .total_bytes(),
                0,
                "{name}"
            );
            continue;
        }
        let (kv_total, attention_layers) = match v.get("block_configs") {
            Some(Value::Array(blocks)) => {
                let attn: Vec<&Value> = blocks
                    .iter()
                    .map(|b| &b["attention"])
                    .filter(|a| a["no_op"] != true)
                    .collect();
                let groups: Vec<u64> = attn
                    .iter()
                    .map(|a| a["n_heads_in_group"].as_u64().unwrap())
                    .collect();
                assert!(groups.windows(2).all(|w| w[0] == w[1]), "{name}");
                (
                    n(&v, "num_attention_heads") / groups[0] as usize,
                    attn.len(),
                )
            }
            _ => (
                v.get("num_key_value_heads")
                    .and_then(Value::as_u64)
                    .map_or_else(|| n(&v, "num_attention_heads"), |k| k as usize),
                whole.num_attention_layers(),
            ),
        };
        for tp in [1, 2, 8] {
            let layout = ParallelLayout::new(tp, 1, 1).unwrap();
            let c = match whole.shard(&layout.rank(0).unwrap()) {
                Ok(c) => c,
                Err(e) if tp > 1 => {
                    eprintln!("{name} tp {tp}: {e}");
                    continue;
                }
                Err(e) => panic!("{name}: {e}"),
            };
            let page = attention_page(BLOCK, kv_heads_on_rank(kv_total, tp), head_size(&v), 2);
            let s = KvPoolSizes::from_config(&c, BLOCK, BLOCKS, BLOCKS, 0, 0, KvDtype::Bf16);
            assert_eq!(
                s.total_bytes(),
                attention_layers * BLOCKS * page,
                "{name} tp {tp}"
            );
        }
    }
}
