//! The KV block pool against its references: which layers slide or keep nothing, against the
//! layer types transformers resolves for each shipped file (`tests/oracle/widths.json`,
//! `config_echo.layer_types`); the bytes of a block a layer, against vLLM's page sizes
//! (`vllm/v1/kv_cache_interface.py`: `FullAttentionSpec`, `MLAAttentionSpec`,
//! `SlidingWindowSpec`; the DeepSeek-V3.2 indexer's cache spec), transcribed below as
//! functions of the raw config keys and evaluated on each model's own `config.json` (read here
//! with `serde_json`, not through `ModelConfig`), whole and per rank of a tensor-parallel
//! layout.

use arena_runtime::HostDevice;
use arena_spec::kv::{
    compressed_blocks_per_sequence, full_blocks_per_sequence, sliding_blocks_per_sequence,
};
use arena_spec::models::SHIPPED;
use arena_spec::{KvDtype, KvLayer, KvPool, KvPoolSizes, ModelConfig, ParallelLayout};
use serde_json::Value;

use crate::shipped;
use shipped::{at_tp, config, n, raw};

const BLOCK: usize = 16;
const BLOCKS: usize = 100;
const SLIDING_BLOCKS: usize = 30;
const CSA_BLOCKS: usize = 20;
const HCA_BLOCKS: usize = 3;

fn sizes(c: &ModelConfig, dtype: KvDtype) -> KvPoolSizes {
    KvPoolSizes::from_config(
        c,
        BLOCK,
        BLOCKS,
        SLIDING_BLOCKS,
        CSA_BLOCKS,
        HCA_BLOCKS,
        dtype,
    )
}

use crate::vllm_pages;
use vllm_pages::{attention_page, head_size, indexer_page, kv_heads_on_rank, mla_page, sharded};

#[test]
fn the_layers_that_slide_are_those_transformers_resolves() {
    let oracle: Value = serde_json::from_str(include_str!("oracle/widths.json")).unwrap();
    let mut checked = 0;
    for m in SHIPPED {
        let Some(record) = oracle["models"].get(m.name) else {
            continue;
        };
        // DeepSeek-V4's compressed layers are their own kinds (checked below).
        if m.name.starts_with("deepseek-v4") || m.name.starts_with("synthetic") {
            continue;
        }
        let c = m.config_with_levers(Default::default()).unwrap();
        let kinds = c.kv_layer_kinds();
        let types = record["config_echo"]["layer_types"].as_array();
        // Without resolved layer types, Mistral's, Mixtral's and Phi-3's attention modules
        // pass `config.sliding_window` on every layer (`MistralAttention.forward`,
        // `MixtralAttention.forward`, `Phi3Attention.forward`), as vLLM slides every layer.
        let file = raw(m.name);
        let every_layer_slides = matches!(
            file["model_type"].as_str(),
            Some("mistral" | "mixtral" | "phi3")
        ) && file["sliding_window"].as_u64().is_some_and(|w| w > 0);
        for (i, kind) in kinds.iter().enumerate() {
            let slides = match types {
                Some(t) => t[i] == "sliding_attention",
                None => every_layer_slides,
            };
            let chunked = types.is_some_and(|t| t[i] == "chunked_attention");
            assert_eq!(*kind == KvLayer::Chunked, chunked, "{}: layer {i}", m.name);
            assert_eq!(
                matches!(kind, KvLayer::Sliding | KvLayer::Shared),
                slides,
                "{}: layer {i} is {kind:?}, transformers says {:?}",
                m.name,
                types.map(|t| &t[i])
            );
        }
        checked += 1;
    }
    assert!(checked >= 40, "{checked}");
    // Mistral-7B-v0.1 and Phi-3-mini slide every layer; Llama 4 Scout's RoPE layers attend
    // within chunks of 8192, every fourth (NoPE) layer to the whole sequence.
    assert_eq!(config("mistral-7b-v0.1").num_sliding_kv_layers(), 32);
    assert_eq!(config("phi-3-mini-4k-instruct").num_full_kv_layers(), 0);
    let scout = config("llama-4-scout-17b-16e-instruct");
    assert_eq!(
        (scout.num_chunked_kv_layers(), scout.num_full_kv_layers()),
        (36, 12)
    );
    assert_eq!(scout.attention_chunk_size, 8192);
    // Gemma 3's 4B file lists no layer types: the class pattern (every sixth full) resolves
    // them, as transformers does.
    assert_eq!(config("gemma-3-4b-it").num_sliding_kv_layers(), 29);
    // Gemma 4 E2B: its last `num_kv_shared_layers` keep nothing.
    let e2b = config("gemma-4-e2b-it");
    let shared = n(&raw("gemma-4-e2b-it"), "num_kv_shared_layers");
    let kinds = e2b.kv_layer_kinds();
    assert!(kinds[kinds.len() - shared..].iter().all(|k| k.is_shared()));
    assert!(!kinds[..kinds.len() - shared].iter().any(|k| k.is_shared()));
    // Of those, the full-attention ones by type (their q at the full layers' widths).
    assert_eq!(
        kinds.iter().filter(|k| **k == KvLayer::SharedFull).count(),
        4
    );
}

#[test]
fn full_and_sliding_pages_are_vllms() {
    for name in [
        "llama-3.1-8b",
        "qwen3-0.6b",
        "mixtral-8x7b",
        "gemma-3-1b-it",
        "gpt-oss-20b",
        "olmo-3.1-32b-instruct",
        "exaone-4.0-32b",
        "qwen3-next-80b-a3b",
        "nemotron-h-56b-base-8k",
        "lfm2-1.2b",
    ] {
        let v = raw(name);
        for tp in [1, 2, 4, 8] {
            if !n(&v, "num_attention_heads").is_multiple_of(tp) {
                continue;
            }
            let c = at_tp(name, tp);
            let page = attention_page(
                BLOCK,
                kv_heads_on_rank(n(&v, "num_key_value_heads"), tp),
                head_size(&v),
                2,
            );
            let s = sizes(&c, KvDtype::Bf16);
            let (full, sliding) = (c.num_full_kv_layers(), c.num_sliding_kv_layers());
            assert_eq!(s.full, full * BLOCKS * page, "{name} tp {tp}");
            assert_eq!(s.sliding, sliding * SLIDING_BLOCKS * page, "{name} tp {tp}");
            assert_eq!(s.mla_latent + s.indexer_keys, 0, "{name}");
            assert_eq!(
                sizes(&c, KvDtype::Fp8).total_bytes() * 2,
                s.total_bytes(),
                "{name}"
            );
            // Every attention layer keeps one kind of cache; other layers none.
            assert_eq!(full + sliding, c.num_attention_layers(), "{name}");
        }
    }
}

#[test]
fn gemma4_full_layers_use_their_own_head_size_and_shared_layers_keep_nothing() {
    for name in [
        "gemma-4-31b-it",
        "gemma-4-26b-a4b",
        "gemma-4-e2b-it",
        "gemma-4-e4b-it",
    ] {
        let v = raw(name);
        let shared = v
            .get("num_kv_shared_layers")
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize;
        let types: Vec<&str> = v["layer_types"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        let own = &types[..types.len() - shared];
        let full_layers = own.iter().filter(|t| **t == "full_attention").count();
        let sliding_layers = own.iter().filter(|t| **t == "sliding_attention").count();
        let k_eq_v = v["attention_k_eq_v"].as_bool().unwrap_or(false);
        let global_kv = match v.get("num_global_key_value_heads").and_then(Value::as_u64) {
            Some(kv) if k_eq_v => kv as usize,
            _ => n(&v, "num_key_value_heads"),
        };
        let global_head = v
            .get("global_head_dim")
            .and_then(Value::as_u64)
            .map_or(head_size(&v), |d| d as usize);
        for tp in [1, 2, 8] {
            let Some(c) = sharded(name, tp) else {
                continue;
            };
            let s = sizes(&c, KvDtype::Bf16);
            let full_page = attention_page(BLOCK, kv_heads_on_rank(global_kv, tp), global_head, 2);
            let sliding_kv = kv_heads_on_rank(n(&v, "num_key_value_heads"), tp);
            let sliding_page = attention_page(BLOCK, sliding_kv, head_size(&v), 2);
            assert_eq!(s.full, full_layers * BLOCKS * full_page, "{name} tp {tp}");
            assert_eq!(
                s.sliding,
                sliding_layers * SLIDING_BLOCKS * sliding_page,
                "{name} tp {tp}"
            );
        }
    }
}

#[test]
fn mla_and_indexer_pages_are_vllms_and_whole_on_every_rank() {
    for name in [
        "deepseek-v3",
        "deepseek-v3.2",
        "glm-5",
        "kimi-k2",
        "kimi-k2.5",
        "kimi-linear-48b-a3b-instruct",
    ] {
        let v = raw(name);
        let latent = n(&v, "kv_lora_rank") + n(&v, "qk_rope_head_dim");
        let indexer = v
            .get("index_head_dim")
            .and_then(Value::as_u64)
            .map_or(0, |d| indexer_page(BLOCK, d as usize));
        for tp in [1, 2, 4, 8] {
            let c = at_tp(name, tp);
            let layers = c.num_attention_layers();
            let s = sizes(&c, KvDtype::Bf16);
            assert_eq!(
                s.mla_latent,
                layers * BLOCKS * mla_page(BLOCK, latent, 2),
                "{name}"
            );
            assert_eq!(s.indexer_keys, layers * BLOCKS * indexer, "{name}");
            assert_eq!(s.full + s.sliding, 0, "{name}");
            // FP8 halves the latent, not the indexer (FP8 already).
            let fp8 = sizes(&c, KvDtype::Fp8);
            assert_eq!(fp8.mla_latent * 2, s.mla_latent, "{name}");
            assert_eq!(fp8.indexer_keys, s.indexer_keys, "{name}");
        }
    }
}

#[test]
fn a_sequence_needs_its_blocks_and_a_sliding_layer_no_more_than_its_window() {
    assert_eq!(full_blocks_per_sequence(1, 16), 1);
    assert_eq!(full_blocks_per_sequence(16, 16), 1);
    assert_eq!(full_blocks_per_sequence(17, 16), 2);
    // vLLM: cdiv(min(sliding_window - 1 + max_num_batched_tokens, max_model_len), block) + 1.
    assert_eq!(sliding_blocks_per_sequence(100_000, 128, 16, 1), 9);
    assert_eq!(sliding_blocks_per_sequence(100_000, 128, 16, 2048), 9 + 128);
    assert_eq!(sliding_blocks_per_sequence(100_000, 4096, 16, 1), 257);
    assert_eq!(sliding_blocks_per_sequence(100, 4096, 16, 8192), 8);
    // DeepSeek-V4's entries: one a `ratio` tokens, a partial group with its entry.
    assert_eq!(compressed_blocks_per_sequence(131_072, 4, 16), 2048);
    assert_eq!(compressed_blocks_per_sequence(131_073, 128, 16), 65);
    assert_eq!(compressed_blocks_per_sequence(100, 0, 16), 0);
}

#[test]
fn a_stage_keeps_its_own_layers_and_the_pool_is_views_per_layer() {
    let whole = sizes(&config("gemma-3-1b-it"), KvDtype::Bf16).total_bytes();
    let layout = ParallelLayout::new(1, 1, 2).unwrap();
    let staged: usize = (0..2)
        .map(|i| {
            let c = config("gemma-3-1b-it")
                .shard(&layout.rank(i).unwrap())
                .unwrap();
            sizes(&c, KvDtype::Bf16).total_bytes()
        })
        .sum();
    assert_eq!(staged, whole);

    let c = config("qwen3-0.6b");
    let s = KvPoolSizes::from_config(&c, BLOCK, 4, 0, 0, 0, KvDtype::Bf16);
    assert_eq!(s.sliding, 0);
    let pool = KvPool::allocate(HostDevice::new(), &s).unwrap();
    assert!(pool.sliding.is_null() && pool.mla_latent.is_null());
    let views = arena_spec::kv::KvPoolViews::of(&pool);
    let layers = c.num_full_kv_layers();
    let last = views.full.layer(layers - 1).unwrap();
    let token = 2 * 8 * 128 * 2;
    assert_eq!(last.shape(), [4, BLOCK, token]);
    assert_eq!(
        last.as_raw(),
        pool.full.as_raw() + ((layers - 1) * 4 * BLOCK * token) as u64
    );
    pool.release().unwrap();
}

#[test]
fn deepseek_v4_keeps_a_window_and_its_compressed_entries_as_vllm_declares_them() {
    for name in ["deepseek-v4-flash", "deepseek-v4-pro"] {
        let v = raw(name);
        let oracle: Value = serde_json::from_str(include_str!("oracle/widths.json")).unwrap();
        let types: Vec<String> = oracle["models"][name]["config_echo"]["layer_types"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect();
        let count = |t: &str| types.iter().filter(|x| *x == t).count();
        let (csa, hca) = (
            count("compressed_sparse_attention"),
            count("heavily_compressed_attention"),
        );
        let head = n(&v, "head_dim");
        let index = n(&v, "index_head_dim");
        for tp in [1, 2, 4, 8] {
            let c = at_tp(name, tp);
            assert_eq!(
                (c.num_csa_kv_layers(), c.num_hca_kv_layers()),
                (csa, hca),
                "{name}"
            );
            assert_eq!(c.num_full_kv_layers(), 0, "{name}");
            let s = sizes(&c, KvDtype::Bf16);
            // `DeepseekV4SWACache`: every layer, one head of head_dim (no V), whole on a rank.
            assert_eq!(
                s.sliding,
                types.len() * SLIDING_BLOCKS * mla_page(BLOCK, head, 2)
            );
            // The compressed entries: an MLA spec of one head_dim head a state.
            assert_eq!(s.csa_entries, csa * CSA_BLOCKS * mla_page(BLOCK, head, 2));
            assert_eq!(s.hca_entries, hca * HCA_BLOCKS * mla_page(BLOCK, head, 2));
            // `DeepseekV4IndexerCache`: 132 bytes a CSA entry.
            assert_eq!(
                s.csa_indexer_keys,
                csa * CSA_BLOCKS * indexer_page(BLOCK, index)
            );
            assert_eq!(s.full + s.mla_latent + s.indexer_keys, 0);
        }
        // The compressor states (`CompressorStateCache`: `state_dim = 2 · coff · head_dim`,
        // a window of `coff · ratio` tokens, FP32; the CSA indexer's at `index_head_dim`).
        let c = config(name);
        let st = arena_spec::StateCacheSizes::from_config(&c, 2, arena_spec::StateDtype::Bf16);
        // `compress_rates`, else `DeepseekV4Config`'s defaults (neither shipped file sets it).
        let rates = &v["compress_rates"];
        let (csa_rate, hca_rate) = (
            rates["compressed_sparse_attention"].as_u64().unwrap_or(4) as usize,
            rates["heavily_compressed_attention"]
                .as_u64()
                .unwrap_or(128) as usize,
        );
        assert_eq!(
            st.csa_compressor,
            csa * 2 * (2 * csa_rate) * (2 * 2 * head) * 4
        );
        assert_eq!(
            st.csa_indexer_compressor,
            csa * 2 * (2 * csa_rate) * (2 * 2 * index) * 4
        );
        assert_eq!(st.hca_compressor, hca * 2 * hca_rate * (2 * head) * 4);
    }
}

/// GLM-5.2 builds its indexer on 21 of its 78 layers (`index_topk_freq` 4,
/// `index_skip_topk_offset` 3: vLLM v0.33.0 `deepseek_v32/attention.py`, 166–191, `skip_topk
/// = max(i - offset + 1, 0) % freq != 0`); the shipped GLM-5 file, without the keys, on every
/// layer (freq 1). The keys, the pool and the weights follow: a layer without an indexer keeps
/// no indexer keys and holds no indexer weights (`wq_b`, `wk`, `k_norm`, `weights_proj`).
#[test]
fn indexer_keys_and_weights_are_on_the_layers_vllm_builds_an_indexer() {
    let glm5 = config("glm-5");
    assert_eq!(glm5.num_indexer_layers(), glm5.num_hidden_layers);
    let text = arena_spec::models::find("glm-5").unwrap().json.replace(
        "\"index_topk\": 2048,",
        "\"index_topk\": 2048, \"index_topk_freq\": 4, \"index_skip_topk_offset\": 3,",
    );
    let glm52 = ModelConfig::from_json_str(&text, "glm-5.2-like.json").unwrap();
    let (freq, offset) = (4, 3);
    let expected: Vec<bool> = (0..78)
        .map(|i: usize| (i + 1).saturating_sub(offset) % freq == 0)
        .collect();
    assert_eq!(&glm52.indexer_layers[..], &expected[..]);
    assert_eq!(glm52.num_indexer_layers(), 21);
    for tp in [1, 2, 8] {
        let rank = glm52
            .shard(&ParallelLayout::new(tp, 1, 1).unwrap().rank(0).unwrap())
            .unwrap();
        let s = sizes(&rank, KvDtype::Bf16);
        let page = indexer_page(BLOCK, n(&raw("glm-5"), "index_head_dim"));
        assert_eq!(s.indexer_keys, 21 * BLOCKS * page, "tp {tp}");
    }
    // Pipeline stages hold the indexers of their own layers.
    let layout = ParallelLayout::new(1, 1, 2).unwrap();
    let stages: usize = layout
        .ranks()
        .map(|r| glm52.shard(&r).unwrap().num_indexer_layers())
        .sum();
    assert_eq!(stages, 21);
    // The weights: 57 layers' indexers fewer.
    let v = raw("glm-5");
    let (h, d, q, hidden) = (
        n(&v, "index_n_heads"),
        n(&v, "index_head_dim"),
        n(&v, "q_lora_rank"),
        n(&v, "hidden_size"),
    );
    let indexer = (q * h * d + hidden * d + 2 * d + h * hidden) as u64;
    let all = arena_spec::weights::parameters(&glm5).unwrap();
    let some = arena_spec::weights::parameters(&glm52).unwrap();
    assert_eq!(all - some, 57 * indexer);
    // transformers 5.17.0's meta-device build of the same file (`GlmMoeDsaConfig` derives
    // its `indexer_types` from the two keys), run by `tests/oracle/widths.py` on it.
    assert_eq!(some, 743_377_000_704);
    // A pattern's "S" skips a layer; past its end a layer keeps its indexer.
    let patterned = text.replace(
        "\"index_topk_freq\": 4,",
        "\"index_topk_freq\": 4, \"index_topk_pattern\": \"FSSF\",",
    );
    let c = ModelConfig::from_json_str(&patterned, "p.json").unwrap();
    assert_eq!(c.num_indexer_layers(), 76);
    let zero = text.replace("\"index_topk_freq\": 4", "\"index_topk_freq\": 0");
    let e = ModelConfig::from_json_str(&zero, "z.json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("index_topk_freq"), "{e}");
}
