//! A parallel rank's share of each tensor, cut as vLLM's parallel layers cut theirs, loaded
//! from checkpoints written here; every shipped model of a declared family names every byte.

use crate::checkpoint_fixtures::*;
use arena_spec::weights::checkpoint::tensor_table;
use arena_spec::weights::WeightsSizes;
use arena_spec::ModelConfig;
use serde_json::json;
use std::collections::BTreeMap;

/// tp 2 and tp 4 of the tiny Qwen3 (4 heads, 2 kv heads): q and the MLP's gate and up by output
/// rows, o and down by input columns, k and v by kv head (at tp 4 each kv head on two ranks),
/// the embedding and head by the padded vocabulary's rows (256 of them: rank 1 of 2 holds
/// 128..250 and six rows of zeros), norms whole — vLLM's column-, row- and vocab-parallel
/// layers' cuts.
#[test]
fn a_tensor_parallel_rank_loads_its_share_of_each_tensor() {
    let c = qwen3(json!({}));
    let file = bf16_checkpoint(&c, &sizes(&c));
    let d = dir("tp");
    write(&d.join("model.safetensors"), &file);
    let t = |n: &str| &file[n];
    let layout = arena_spec::ParallelLayout::new(2, 1, 1).unwrap();
    let r1 = rank_places(&c.shard(&layout.rank(1).unwrap()).unwrap(), &d);
    let q = "model.layers.1.self_attn.q_proj.weight";
    assert_eq!(r1[q], block(t(q), 32..64, 0, 64));
    let o = "model.layers.0.self_attn.o_proj.weight";
    assert_eq!(r1[o], block(t(o), 0..64, 32, 64));
    let k = "model.layers.0.self_attn.k_proj.weight";
    assert_eq!(r1[k], block(t(k), 16..32, 0, 64));
    let down = "model.layers.1.mlp.down_proj.weight";
    assert_eq!(r1[down], block(t(down), 0..64, 48, 96));
    let up = "model.layers.1.mlp.up_proj.weight";
    assert_eq!(r1[up], block(t(up), 48..96, 0, 64));
    let mut embed = block(t("model.embed_tokens.weight"), 128..250, 0, 64);
    embed.resize(128 * 64 * 2, 0);
    assert_eq!(r1["model.embed_tokens.weight"], embed);
    let norm = "model.layers.0.input_layernorm.weight";
    assert_eq!(r1[norm], t(norm).data);
    let qn = "model.layers.0.self_attn.q_norm.weight";
    assert_eq!(r1[qn], t(qn).data);

    let layout = arena_spec::ParallelLayout::new(4, 1, 1).unwrap();
    for (rank, head) in [(0, 0), (1, 0), (2, 1), (3, 1)] {
        let places = rank_places(&c.shard(&layout.rank(rank).unwrap()).unwrap(), &d);
        let v = "model.layers.1.self_attn.v_proj.weight";
        assert_eq!(
            places[v],
            block(t(v), head * 16..head * 16 + 16, 0, 64),
            "rank {rank}"
        );
        assert_eq!(
            places[q],
            block(t(q), rank * 16..rank * 16 + 16, 0, 64),
            "rank {rank}"
        );
    }
}

/// Mixtral at tp 2, ep 2: rank 1 holds experts 2 and 3 whole (the expert tensor-parallel group
/// is one rank), and the other rank's experts are skipped by name.
#[test]
fn an_expert_parallel_rank_loads_its_experts_and_skips_the_others() {
    let c = mixtral(1);
    let file = bf16_checkpoint(&c, &sizes(&c));
    let d = dir("ep");
    write(&d.join("model.safetensors"), &file);
    let layout = arena_spec::ParallelLayout::new(2, 2, 1).unwrap();
    let rank = c.shard(&layout.rank(1).unwrap()).unwrap();
    let places = rank_places(&rank, &d);
    let w1 = "model.layers.0.block_sparse_moe.experts.3.w1.weight";
    assert_eq!(places[w1], file[w1].data);
    assert!(!places.contains_key("model.layers.0.block_sparse_moe.experts.1.w1.weight"));
    let s = WeightsSizes::new(&rank, &rank.weight_formats).unwrap();
    let (_, plan) = open_plan(&rank, &s, &d);
    let skipped: Vec<&str> = plan.skipped.iter().map(|k| k.tensor.as_str()).collect();
    assert_eq!(skipped.len(), 2 * 3, "{skipped:?}");
    assert!(plan
        .skipped
        .iter()
        .all(|k| k.reason == "another expert-parallel rank's expert"));
}

/// Every shipped model of a family whose names are declared: its table names every byte of
/// its weights, once, on one GPU and on each rank of tp 2 where the model splits so — but
/// Qwen3.5's, whose Gated DeltaNet projections are two stored tensors back to back in one
/// place, refused for a rank by name (listed here).
#[test]
fn every_shipped_model_of_a_declared_family_names_every_byte() {
    let (mut named, mut unsplit) = (Vec::new(), Vec::new());
    for m in arena_spec::models::SHIPPED
        .iter()
        .filter(|m| !m.is_synthetic())
    {
        let whole = m.config_with_levers(Default::default()).unwrap();
        if whole
            .family
            .rules()
            .weights
            .and_then(|w| w.checkpoint_names)
            .is_none()
        {
            continue;
        }
        let layout = arena_spec::ParallelLayout::new(2, 1, 1).unwrap();
        let ranks = (0..2).filter_map(|r| whole.shard(&layout.rank(r).unwrap()).ok());
        for c in std::iter::once(whole.clone()).chain(ranks) {
            let s = WeightsSizes::new(&c, &c.weight_formats).unwrap();
            let table = match tensor_table(&c, &s) {
                Err(e)
                    if c.shard.is_some()
                        && e.to_string().contains("not cut for a tensor-parallel rank") =>
                {
                    unsplit.push(m.name);
                    continue;
                }
                other => other.unwrap_or_else(|e| panic!("{}: {e}", m.name)),
            };
            let bytes: usize = table.iter().map(|t| t.bytes).sum();
            // Every buffer's bytes, the untracked FP32 router biases included.
            let buffers = [
                s.model.buffers(),
                s.attention.buffers(),
                s.latent.buffers(),
                s.compressed.buffers(),
                s.mixers.buffers(),
                s.ffn.buffers(),
            ];
            let all: usize = buffers.iter().flatten().map(|b| b.bytes).sum();
            assert_eq!(bytes, all, "{}", m.name);
            let mut names: Vec<(&str, _)> =
                table.iter().map(|t| (t.name.as_str(), t.part)).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), table.len(), "{}: a name placed twice", m.name);
        }
        named.push(m.name);
    }
    assert_eq!(
        named,
        [
            "llama-3.1-8b",
            "llama-3.1-70b",
            "mistral-7b-v0.1",
            "mistral-nemo-instruct-2407",
            "devstral-2-123b-instruct",
            "devstral-small-2-24b-instruct",
            "mixtral-8x7b",
            "phi-3-mini-4k-instruct",
            "phi-4",
            "olmo-3.1-32b-instruct",
            "exaone-4.0-32b",
            "gemma-3-1b-it",
            "gemma-3-4b-it",
            "qwen2.5-7b",
            "qwen3-0.6b",
            "qwen3-30b-a3b",
            "qwen3.5-27b",
            "qwen3.5-35b-a3b",
            "qwen3-vl-4b-instruct",
            "qwen3-vl-32b-instruct",
            "deepseek-v3",
            "kimi-k2",
            "kimi-k2.5",
            "glm-4.5",
            "glm-4.5-air"
        ]
    );
    unsplit.dedup();
    assert_eq!(unsplit, ["qwen3.5-27b", "qwen3.5-35b-a3b"]);
}

/// A tiny DeepSeek-V3 (MLA, one dense layer then MoE with a shared expert, the router's FP32
/// `e_score_correction_bias`, an MTP layer): every tensor placed, the MTP layer's skipped by
/// name, on one GPU and on each rank of tp 2 (q_b, kv_b by output rows, o by input columns,
/// the low-rank projections and their norms whole, as vLLM's `DeepseekV2MLAAttention` builds
/// them).
#[test]
fn a_deepseek_v3_checkpoint_loads_whole_and_by_rank() {
    let c = ModelConfig::from_json_str(
        &json!({
            "model_type": "deepseek_v3", "hidden_size": 256, "intermediate_size": 384,
            "moe_intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 4,
            "q_lora_rank": 128, "kv_lora_rank": 128, "qk_nope_head_dim": 32,
            "qk_rope_head_dim": 32, "v_head_dim": 32, "n_routed_experts": 4,
            "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1,
            "num_hidden_layers": 2, "num_nextn_predict_layers": 1, "vocab_size": 256,
            "max_position_embeddings": 128, "tie_word_embeddings": false
        })
        .to_string(),
        "tiny-deepseek-v3.json",
    )
    .unwrap();
    let s = sizes(&c);
    let mut file = bf16_checkpoint(&c, &s);
    assert_eq!(
        file["model.layers.1.mlp.gate.e_score_correction_bias"].dtype,
        "F32"
    );
    assert!(file.contains_key("model.layers.1.mlp.shared_experts.down_proj.weight"));
    for name in [
        "model.layers.2.eh_proj.weight",
        "model.layers.2.enorm.weight",
    ] {
        file.insert(name.into(), stub());
    }
    let d = dir("deepseek");
    write(&d.join("model.safetensors"), &file);
    load_and_compare(&c, &s, &d);
    let (_, plan) = open_plan(&c, &s, &d);
    assert_eq!(plan.skipped.len(), 2);
    let layout = arena_spec::ParallelLayout::new(2, 1, 1).unwrap();
    let r1 = rank_places(&c.shard(&layout.rank(1).unwrap()).unwrap(), &d);
    let kv_b = "model.layers.0.self_attn.kv_b_proj.weight";
    let half = file[kv_b].data.len() / 2;
    assert_eq!(r1[kv_b], file[kv_b].data[half..]);
    let kv_a = "model.layers.1.self_attn.kv_a_proj_with_mqa.weight";
    assert_eq!(r1[kv_a], file[kv_a].data);
}

/// Phi-3 stores q, k and v as one `qkv_proj` `[q + k + v, hidden]` and gate and up as one
/// `gate_up_proj`: each place takes its block's rows, and a rank of tp 2 its share of each
/// block, as vLLM's `QKVParallelLinear` and `MergedColumnParallelLinear` load them.
#[test]
fn a_fused_stored_tensor_fills_each_block_s_place() {
    let c = ModelConfig::from_json_str(
        &json!({
            "model_type": "phi3", "hidden_size": 64, "intermediate_size": 96,
            "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 1,
            "vocab_size": 256, "max_position_embeddings": 128, "tie_word_embeddings": false
        })
        .to_string(),
        "tiny-phi3.json",
    )
    .unwrap();
    let s = sizes(&c);
    let mut file = BTreeMap::new();
    for (k, slot) in tensor_table(&c, &s).unwrap().into_iter().enumerate() {
        let shape = match (slot.shape, slot.name.as_str()) {
            (Some(shape), _) => shape,
            (None, n) if n.ends_with("qkv_proj.weight") => vec![128, 64],
            (None, n) if n.ends_with("gate_up_proj.weight") => vec![192, 64],
            (None, n) if n.ends_with("down_proj.weight") => vec![64, 96],
            (None, _) => vec![64, 64],
        };
        let n = shape.iter().product::<usize>() * 2;
        file.insert(
            slot.name,
            T {
                dtype: "BF16",
                shape,
                data: filled(k, n),
            },
        );
    }
    assert_eq!(file.len(), 3 + 6, "{:?}", file.keys());
    let d = dir("phi3");
    write(&d.join("model.safetensors"), &file);
    let whole = places(&c, &d);
    let (qkv, gate_up) = (
        "model.layers.0.self_attn.qkv_proj.weight",
        "model.layers.0.mlp.gate_up_proj.weight",
    );
    let layout = arena_spec::ParallelLayout::new(2, 1, 1).unwrap();
    let r1 = places(&c.shard(&layout.rank(1).unwrap()).unwrap(), &d);
    let rows = |name: &str, r: std::ops::Range<usize>| block(&file[name], r, 0, 64);
    for (place, one, rank1) in [
        ("q_proj", 0..64, 32..64),
        ("k_proj", 64..96, 80..96),
        ("v_proj", 96..128, 112..128),
    ] {
        let key = (qkv.to_string(), place);
        assert_eq!(whole[&key], rows(qkv, one), "{place}");
        assert_eq!(r1[&key], rows(qkv, rank1), "{place}");
    }
    assert_eq!(
        r1[&(gate_up.to_string(), "gate_proj")],
        rows(gate_up, 48..96)
    );
    assert_eq!(
        r1[&(gate_up.to_string(), "up_proj")],
        rows(gate_up, 144..192)
    );
}

/// OLMo 3 and EXAONE 4 norm after the attention and after the MLP: a layer's two norm rows are
/// `post_attention_layernorm` then `post_feedforward_layernorm`, each renamed once.
#[test]
fn post_norm_families_name_their_two_norms_in_order() {
    for model in ["olmo-3.1-32b-instruct", "exaone-4.0-32b"] {
        let c = crate::shipped::config(model);
        let table = tensor_table(&c, &WeightsSizes::new(&c, &c.weight_formats).unwrap()).unwrap();
        let norms: Vec<&str> = table
            .iter()
            .filter(|t| t.buffer == "layer_norms" && t.layer == Some(3))
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(
            norms,
            [
                "model.layers.3.post_attention_layernorm.weight",
                "model.layers.3.post_feedforward_layernorm.weight"
            ],
            "{model}"
        );
    }
}
