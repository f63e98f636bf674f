//! Checkpoints written here in transformers' names (tiny Qwen3, Qwen3-MoE and Mixtral
//! configs) loaded into the six weight arenas on the host: every byte lands in its declared
//! place, and each way a checkpoint can be wrong is an error naming the tensor, its file and
//! its place, found before any byte is copied.

use arena_runtime::{Arena, HostDevice};
use arena_spec::weights::checkpoint::{
    load, tensor_table, Checkpoint, CheckpointError, LoadPlan, Problem,
};
use arena_spec::weights::{AllocatedWeights, WeightLayers, WeightsSizes};
use arena_spec::ModelConfig;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A tiny Qwen3 (2 layers, hidden 64, 4 heads of 16, 2 kv heads), `extra` merged in.
fn qwen3(extra: Value) -> ModelConfig {
    let mut c = json!({
        "model_type": "qwen3", "hidden_size": 64, "intermediate_size": 96,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "num_hidden_layers": 2, "vocab_size": 250, "max_position_embeddings": 128,
        "tie_word_embeddings": false, "torch_dtype": "bfloat16"
    });
    for (k, v) in extra.as_object().unwrap() {
        c[k] = v.clone();
    }
    ModelConfig::from_json_str(&c.to_string(), "tiny.json").unwrap()
}

/// A tiny Mixtral (hidden 64, 4 experts of 32, 4 heads of 16, 2 kv heads) of `layers` layers.
fn mixtral(layers: usize) -> ModelConfig {
    let c = json!({
        "model_type": "mixtral", "hidden_size": 64, "intermediate_size": 32,
        "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": layers,
        "vocab_size": 256, "num_local_experts": 4, "num_experts_per_tok": 2,
        "max_position_embeddings": 128
    });
    ModelConfig::from_json_str(&c.to_string(), "tiny-mixtral.json").unwrap()
}

/// A tensor to write: dtype, shape, bytes.
struct T {
    dtype: &'static str,
    shape: Vec<usize>,
    data: Vec<u8>,
}

/// Distinct bytes for each tensor, so a misplaced one is seen.
fn filled(seed: usize, n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + seed * 17 + 1) as u8).collect()
}

/// Writes a safetensors file (its 8-byte length, the JSON header, the data in name order).
fn write(path: &Path, tensors: &BTreeMap<String, T>) {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, t) in tensors {
        let start = data.len();
        data.extend_from_slice(&t.data);
        header.insert(
            name.clone(),
            json!({"dtype": t.dtype, "shape": t.shape, "data_offsets": [start, data.len()]}),
        );
    }
    let header = Value::Object(header).to_string();
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&data);
    std::fs::write(path, out).unwrap();
}

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("arena-ckpt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The reference's own vocabulary (no padding rows).
fn sizes(c: &ModelConfig) -> WeightsSizes {
    WeightsSizes::with_layers(c, &WeightLayers::of(c, false).unwrap(), &c.weight_formats).unwrap()
}

/// Every tensor the table names, in BF16; a matrix `[out, in]` as transformers stores it: o
/// and the down projections read a width and write the hidden size, the others read it.
fn bf16_checkpoint(c: &ModelConfig, s: &WeightsSizes) -> BTreeMap<String, T> {
    let mut out = BTreeMap::new();
    for (k, slot) in tensor_table(c, s).unwrap().into_iter().enumerate() {
        let shape = slot.shape.clone().unwrap_or_else(|| {
            let (h, n) = (c.hidden_size, slot.bytes / 2);
            match slot.buffer {
                "q_b_proj" | "indexer_wq_b" => vec![n / c.q_lora_rank, c.q_lora_rank],
                "kv_b_proj" => vec![n / c.kv_lora_rank, c.kv_lora_rank],
                b if b.contains("down") || b == "o_proj" => vec![h, n / h],
                _ => vec![n / h, h],
            }
        });
        out.insert(
            slot.name,
            T {
                dtype: if slot.dtype == "f32" { "F32" } else { "BF16" },
                shape,
                data: filled(k, slot.bytes),
            },
        );
    }
    out
}

fn open_plan(c: &ModelConfig, s: &WeightsSizes, path: &Path) -> (Checkpoint, LoadPlan) {
    let ckpt = Checkpoint::open(path).unwrap();
    let table = tensor_table(c, s).unwrap();
    let plan = LoadPlan::new(c, &table, ckpt.tensors(), ckpt.files(), &c.weight_formats);
    (ckpt, plan)
}

/// Loads `path` into freshly allocated host weights and checks every place holds its
/// tensors' bytes.
fn load_and_compare(c: &ModelConfig, s: &WeightsSizes, path: &Path) -> usize {
    let (ckpt, plan) = open_plan(c, s, path);
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    let mut weights = AllocatedWeights::allocate(HostDevice::new(), s).unwrap();
    let mut calls = 0;
    let loaded = load(&ckpt, &plan, &mut weights, &mut |done, total| {
        assert!(done <= total);
        calls += 1;
    })
    .unwrap();
    assert_eq!(loaded.bytes, plan.stored_bytes);
    assert!(calls >= loaded.tensors);
    for placed in &plan.placed {
        let buffer = buffer_bytes(&weights, placed.slot.arena, placed.slot.buffer);
        for part in &placed.parts {
            let at = placed.slot.offset + part.offset;
            let stored = &ckpt.tensors()[&part.tensor];
            assert_eq!(
                &buffer[at..at + part.bytes],
                ckpt.bytes(stored),
                "{} at {}",
                part.tensor,
                placed.slot.place()
            );
        }
        let end = placed.slot.offset + placed.slot.bytes;
        assert!(buffer[end - placed.zero_fill..end].iter().all(|&b| b == 0));
    }
    weights.release().unwrap();
    plan.placed.len()
}

/// Buffer `buffer` of weight arena `arena`, read back from the host.
fn buffer_bytes(w: &AllocatedWeights<HostDevice>, arena: &str, buffer: &str) -> Vec<u8> {
    fn read<A: Arena>(a: &arena_runtime::Allocated<A, HostDevice>, buffer: &str) -> Vec<u8> {
        let i = A::BUFFERS.iter().position(|d| d.name == buffer).unwrap();
        let view = a.byte_views().swap_remove(i);
        let mut out = vec![0u8; view.len()];
        view.read_bytes(&mut out).unwrap();
        out
    }
    match arena {
        "ModelWeights" => read(&w.model, buffer),
        "AttentionWeights" => read(&w.attention, buffer),
        "LatentAttentionWeights" => read(&w.latent, buffer),
        "CompressedAttentionWeights" => read(&w.compressed, buffer),
        "MixerWeights" => read(&w.mixers, buffer),
        _ => read(&w.ffn, buffer),
    }
}

#[test]
fn a_single_file_loads_every_tensor_into_its_declared_place() {
    let c = qwen3(json!({}));
    let s = sizes(&c);
    let d = dir("single");
    write(&d.join("model.safetensors"), &bf16_checkpoint(&c, &s));
    // Embedding, head, final norm; a layer's 2 norms, q, k, v, o, q and k norms, 3 MLPs.
    assert_eq!(load_and_compare(&c, &s, &d), 3 + 2 * (2 + 4 + 2 + 3));
}

#[test]
fn a_sharded_checkpoint_loads_through_its_index() {
    let c = qwen3(json!({}));
    let s = sizes(&c);
    let d = dir("sharded");
    let all = bf16_checkpoint(&c, &s);
    let (mut a, mut b) = (BTreeMap::new(), BTreeMap::new());
    let mut map = serde_json::Map::new();
    for (i, (name, t)) in all.into_iter().enumerate() {
        let shard = if i % 2 == 0 {
            "model-00001-of-00002.safetensors"
        } else {
            "model-00002-of-00002.safetensors"
        };
        map.insert(name.clone(), json!(shard));
        if i % 2 == 0 {
            a.insert(name, t)
        } else {
            b.insert(name, t)
        };
    }
    write(&d.join("model-00001-of-00002.safetensors"), &a);
    write(&d.join("model-00002-of-00002.safetensors"), &b);
    std::fs::write(
        d.join("model.safetensors.index.json"),
        json!({"metadata": {"total_size": 0}, "weight_map": map}).to_string(),
    )
    .unwrap();
    assert_eq!(load_and_compare(&c, &s, &d), 25);
}

/// Mixtral's checkpoints keep `block_sparse_moe` and `w1`/`w3`/`w2` (transformers'
/// `conversion_mapping.py`): each expert lands at its index in the gate/up and down rows.
#[test]
fn experts_load_by_index_under_the_family_s_own_names() {
    let c = mixtral(2);
    let s = sizes(&c);
    let table = tensor_table(&c, &s).unwrap();
    let w3 = table
        .iter()
        .find(|t| t.name == "model.layers.1.block_sparse_moe.experts.2.w3.weight")
        .unwrap();
    // Row 1 (up) of layer 1, expert 2: each expert 32 × 64 × 2 bytes.
    let expert = 32 * 64 * 2;
    assert_eq!(
        (w3.buffer, w3.layer, w3.expert),
        ("experts_gate_up", Some(1), Some(2))
    );
    assert_eq!(w3.offset, 2 * 4 * expert + 4 * expert + 2 * expert);
    assert!(table
        .iter()
        .any(|t| t.name == "model.layers.0.block_sparse_moe.gate.weight"));
    let d = dir("mixtral");
    write(&d.join("model.safetensors"), &bf16_checkpoint(&c, &s));
    load_and_compare(&c, &s, &d);
}

/// Block FP8 (`weight_block_size` 128 × 128): a matrix's E4M3 elements, then its
/// `weight_scale_inv` blocks, fill its place; norms and the embedding stay 16-bit.
#[test]
fn block_fp8_matrices_load_with_their_scales_after_their_elements() {
    let c = qwen3(json!({
        "hidden_size": 256, "intermediate_size": 384, "num_attention_heads": 4, "head_dim": 64,
        "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}
    }));
    let s = sizes(&c);
    let mut file = BTreeMap::new();
    for (k, slot) in tensor_table(&c, &s).unwrap().into_iter().enumerate() {
        match slot.shape {
            Some(shape) => {
                file.insert(
                    slot.name,
                    T {
                        dtype: "BF16",
                        shape,
                        data: filled(k, slot.bytes),
                    },
                );
            }
            None => {
                // [out, 256] elements, then ceil(out / 128) × 2 F32 scales.
                // o reads the 4 heads of 64; down the MLP's 384; the rest the hidden 256.
                let inner: usize = if slot.buffer == "down_proj" { 384 } else { 256 };
                let out = (1..4096usize)
                    .find(|o| o * inner + o.div_ceil(128) * inner.div_ceil(128) * 4 == slot.bytes)
                    .unwrap();
                let stem = slot.name.strip_suffix(".weight").unwrap().to_string();
                file.insert(
                    slot.name,
                    T {
                        dtype: "F8_E4M3",
                        shape: vec![out, inner],
                        data: filled(k, out * inner),
                    },
                );
                let scales = vec![out.div_ceil(128), inner.div_ceil(128)];
                let n = scales[0] * scales[1] * 4;
                file.insert(
                    format!("{stem}.weight_scale_inv"),
                    T {
                        dtype: "F32",
                        shape: scales,
                        data: filled(k + 1000, n),
                    },
                );
            }
        }
    }
    let d = dir("fp8");
    write(&d.join("model.safetensors"), &file);
    load_and_compare(&c, &s, &d);
}

/// Sized as an engine allocates them (the vocabulary padded to 64 rows, `WeightsSizes::new`),
/// the embedding's and head's padding rows are set to zero.
#[test]
fn the_vocabulary_s_padding_rows_are_zeroed() {
    let c = qwen3(json!({}));
    let padded = WeightsSizes::new(&c, &c.weight_formats).unwrap();
    let d = dir("padded");
    write(
        &d.join("model.safetensors"),
        &bf16_checkpoint(&c, &sizes(&c)),
    );
    let (_, plan) = open_plan(&c, &padded, &d);
    let embed = plan
        .placed
        .iter()
        .find(|p| p.slot.buffer == "embed_tokens")
        .unwrap();
    assert_eq!(embed.zero_fill, (256 - 250) * 64 * 2);
    assert_eq!(load_and_compare(&c, &padded, &d), 25);
}

/// A tower's tensors, a layer past `num_hidden_layers` and RoPE's stored `inv_freq` are
/// listed with their reason, never loaded and never an error.
#[test]
fn what_a_text_engine_does_not_hold_is_skipped_by_name() {
    let c = qwen3(json!({}));
    let s = sizes(&c);
    let mut file = bf16_checkpoint(&c, &s);
    for name in [
        "model.visual.blocks.0.attn.qkv.weight",
        "model.layers.2.mlp.gate_proj.weight",
        "model.layers.0.self_attn.rotary_emb.inv_freq",
    ] {
        file.insert(
            name.into(),
            T {
                dtype: "BF16",
                shape: vec![4],
                data: vec![0; 8],
            },
        );
    }
    let d = dir("skipped");
    write(&d.join("model.safetensors"), &file);
    let (_, plan) = open_plan(&c, &s, &d);
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    let reasons: Vec<(&str, &str)> = plan
        .skipped
        .iter()
        .map(|k| (k.tensor.as_str(), k.reason))
        .collect();
    assert_eq!(reasons.len(), 3);
    assert!(reasons
        .iter()
        .any(|(t, r)| t.starts_with("model.visual") && r.contains("tower")));
    assert!(reasons
        .iter()
        .any(|(t, r)| t.starts_with("model.layers.2") && r.contains("num_hidden_layers")));
    assert!(reasons
        .iter()
        .any(|(t, r)| t.ends_with("inv_freq") && r.contains("RoPE")));
}

/// Writes the Qwen3 checkpoint changed by `change` and returns the plan's problems, and the
/// error `load` gives (nothing copied).
fn problems(name: &str, change: impl FnOnce(&mut BTreeMap<String, T>)) -> (Vec<String>, String) {
    let c = qwen3(json!({}));
    let s = sizes(&c);
    let mut file = bf16_checkpoint(&c, &s);
    change(&mut file);
    let d = dir(name);
    write(&d.join("model.safetensors"), &file);
    let (ckpt, plan) = open_plan(&c, &s, &d);
    let mut weights = AllocatedWeights::allocate(HostDevice::new(), &s).unwrap();
    let err = load(&ckpt, &plan, &mut weights, &mut |_, _| {
        panic!("nothing is copied")
    })
    .unwrap_err();
    assert!(matches!(err, CheckpointError::Mismatch { .. }));
    (
        plan.problems.iter().map(ToString::to_string).collect(),
        err.to_string(),
    )
}

#[test]
fn a_missing_tensor_names_its_place() {
    let (p, err) = problems("missing", |f| {
        f.remove("model.layers.1.self_attn.k_norm.weight");
    });
    assert_eq!(p, ["`model.layers.1.self_attn.k_norm.weight` is missing (it fills AttentionWeights.k_norm layer 1)"]);
    assert!(err.contains("(1 problem)"), "{err}");
}

#[test]
fn an_unexpected_tensor_names_its_file() {
    let (p, _) = problems("extra", |f| {
        f.insert(
            "model.layers.0.mlp.experts.0.up_proj.weight".into(),
            T {
                dtype: "BF16",
                shape: vec![2],
                data: vec![0; 4],
            },
        );
    });
    assert_eq!(p, ["`model.layers.0.mlp.experts.0.up_proj.weight` (model.safetensors) is no tensor of the declared weights and no rule skips it"]);
}

#[test]
fn a_wrong_shape_names_both_shapes() {
    let (p, _) = problems("shape", |f| {
        let t = f.get_mut("model.norm.weight").unwrap();
        t.shape = vec![32, 2];
    });
    assert_eq!(p, ["`model.norm.weight` (model.safetensors) has shape [32, 2]; ModelWeights.norm holds [64]"]);
}

#[test]
fn a_wrong_dtype_names_what_the_place_holds() {
    let (p, _) = problems("dtype", |f| {
        let t = f.get_mut("model.layers.0.self_attn.o_proj.weight").unwrap();
        t.dtype = "F32";
        t.shape = vec![64, 32];
    });
    assert_eq!(p, ["`model.layers.0.self_attn.o_proj.weight` (model.safetensors) is F32; AttentionWeights.o_proj layer 0 holds BF16 or F16 alone, or a quantized format's elements with their scales"]);
}

#[test]
fn a_matrix_of_the_wrong_width_names_its_bytes() {
    let (p, _) = problems("bytes", |f| {
        let t = f.get_mut("model.layers.1.mlp.up_proj.weight").unwrap();
        t.shape = vec![95, 64];
        t.data.truncate(95 * 64 * 2);
    });
    assert_eq!(p, ["`model.layers.1.mlp.up_proj.weight` (model.safetensors) is 12160 bytes with its scales; FfnWeights.up_proj layer 1 holds 12288"]);
}

#[test]
fn a_truncated_file_is_refused_when_opened() {
    let c = qwen3(json!({}));
    let d = dir("truncated");
    let path = d.join("model.safetensors");
    write(&path, &bf16_checkpoint(&c, &sizes(&c)));
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
    let err = Checkpoint::open(&d).unwrap_err().to_string();
    assert!(err.starts_with(&path.display().to_string()), "{err}");
    assert!(err.contains("incomplete"), "{err}");
}

#[test]
fn an_index_naming_a_missing_shard_is_refused() {
    let d = dir("noshard");
    std::fs::write(
        d.join("model.safetensors.index.json"),
        json!({"weight_map": {"model.norm.weight": "model-00001-of-00002.safetensors"}})
            .to_string(),
    )
    .unwrap();
    let err = Checkpoint::open(&d).unwrap_err().to_string();
    assert!(err.contains("model-00001-of-00002.safetensors"), "{err}");
    assert!(err.contains("No such file"), "{err}");
}

#[test]
fn an_index_and_a_shard_that_disagree_are_refused() {
    let c = qwen3(json!({}));
    let d = dir("disagree");
    write(&d.join("a.safetensors"), &bf16_checkpoint(&c, &sizes(&c)));
    std::fs::write(
        d.join("model.safetensors.index.json"),
        json!({"weight_map": {"model.norm.weight": "a.safetensors"}}).to_string(),
    )
    .unwrap();
    let err = Checkpoint::open(&d).unwrap_err().to_string();
    assert!(err.contains("which the index does not list"), "{err}");
}

/// Phi-3 stores q, k and v as one `qkv_proj`, which no place holds: its names are not
/// declared, and it is refused by its family's name.
#[test]
fn a_family_without_declared_names_is_refused_by_name() {
    let c = crate::shipped::config("phi-3-mini-4k-instruct");
    let err = tensor_table(&c, &sizes(&c)).unwrap_err().to_string();
    assert!(
        err.contains("the checkpoint tensor names of a Phi3"),
        "{err}"
    );
}

#[test]
fn problems_serialise_with_their_kind() {
    let p = Problem::Missing {
        tensor: "a".into(),
        place: "b".into(),
    };
    assert_eq!(
        serde_json::to_value(&p).unwrap(),
        json!({"problem": "missing", "tensor": "a", "place": "b"})
    );
}

/// A rank's place, read back from host weights loaded at that rank's sizes.
fn rank_places(c: &ModelConfig, path: &Path) -> BTreeMap<String, Vec<u8>> {
    let s = WeightsSizes::new(c, &c.weight_formats).unwrap();
    let (ckpt, plan) = open_plan(c, &s, path);
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    let mut weights = AllocatedWeights::allocate(HostDevice::new(), &s).unwrap();
    load(&ckpt, &plan, &mut weights, &mut |_, _| {}).unwrap();
    let mut out = BTreeMap::new();
    for placed in &plan.placed {
        let buffer = buffer_bytes(&weights, placed.slot.arena, placed.slot.buffer);
        let at = placed.slot.offset;
        out.insert(
            placed.slot.name.clone(),
            buffer[at..at + placed.slot.bytes].to_vec(),
        );
    }
    weights.release().unwrap();
    out
}

/// Rows `rows` of a row-major `[_, cols]` BF16 tensor's bytes, columns `from..to`.
fn block(t: &T, rows: std::ops::Range<usize>, from: usize, to: usize) -> Vec<u8> {
    let cols = t.shape[1];
    rows.flat_map(|r| t.data[(r * cols + from) * 2..(r * cols + to) * 2].to_vec())
        .collect()
}

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

/// A multimodal class's checkpoint stores its text model under `model.language_model.`
/// (transformers 5) or `language_model.model.` with the head under `language_model.` (4.x):
/// the declared `model.` names are read under the prefix the checkpoint uses.
#[test]
fn a_text_model_under_a_multimodal_prefix_loads() {
    let c = qwen3(json!({}));
    let s = sizes(&c);
    for (prefix, head) in [
        ("model.language_model.", "lm_head.weight"),
        ("language_model.model.", "language_model.lm_head.weight"),
    ] {
        let file: BTreeMap<String, T> = bf16_checkpoint(&c, &s)
            .into_iter()
            .map(|(n, t)| match n.strip_prefix("model.") {
                Some(rest) => (format!("{prefix}{rest}"), t),
                None => (head.to_string(), t),
            })
            .collect();
        let d = dir(&format!("prefix-{}", prefix.len() + head.len()));
        write(&d.join("model.safetensors"), &file);
        assert_eq!(load_and_compare(&c, &s, &d), 25, "{prefix}");
    }
}

/// Every shipped model of a family whose names are declared: its table names every byte of
/// its weights, once, on one GPU and on each rank of tp 2 where the model splits so.
#[test]
fn every_shipped_model_of_a_declared_family_names_every_byte() {
    let mut named = Vec::new();
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
            let table = tensor_table(&c, &s).unwrap_or_else(|e| panic!("{}: {e}", m.name));
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
            let mut names: Vec<&str> = table.iter().map(|t| t.name.as_str()).collect();
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
            "mixtral-8x7b",
            "gemma-3-1b-it",
            "gemma-3-4b-it",
            "qwen2.5-7b",
            "qwen3-0.6b",
            "qwen3-30b-a3b",
            "qwen3-vl-4b-instruct",
            "qwen3-vl-32b-instruct",
            "deepseek-v3",
            "kimi-k2",
            "kimi-k2.5"
        ]
    );
}

/// Writes every tensor of `c`'s table as `quantized` says a matrix is stored (its elements'
/// dtype and shape, then its scale tensors), 16-bit tensors as they are.
fn quantized_checkpoint(
    c: &ModelConfig,
    s: &WeightsSizes,
    matrix: impl Fn(&str, usize, usize) -> Vec<(String, T)>,
) -> BTreeMap<String, T> {
    let mut out = BTreeMap::new();
    for (k, slot) in tensor_table(c, s).unwrap().into_iter().enumerate() {
        match slot.shape {
            Some(shape) => {
                out.insert(
                    slot.name,
                    T {
                        dtype: "BF16",
                        shape,
                        data: filled(k, slot.bytes),
                    },
                );
            }
            None => {
                let h = c.hidden_size;
                let (o, i) = match slot.buffer {
                    "o_proj" => (h, c.num_attention_heads * c.head_dim()),
                    "down_proj" => (h, c.intermediate_size),
                    "gate_proj" | "up_proj" => (c.intermediate_size, h),
                    "q_proj" => (c.num_attention_heads * c.head_dim(), h),
                    _ => (c.num_key_value_heads * c.head_dim(), h),
                };
                let stem = slot.name.strip_suffix(".weight").unwrap().to_string();
                for (j, (suffix, t)) in matrix(&slot.name, o, i).into_iter().enumerate() {
                    let t = T {
                        data: filled(k * 7 + j, t.data.len()),
                        ..t
                    };
                    out.insert(format!("{stem}{suffix}"), t);
                }
            }
        }
    }
    out
}

/// ModelOpt FP8 (`quant_algo: FP8`, `ModelOptFp8LinearMethod`): a matrix's E4M3 elements,
/// its F32 `weight_scale`, its `input_scale`, and zeros to the plan's 24-byte bound.
#[test]
fn a_modelopt_fp8_matrix_loads_with_its_scalar_scales() {
    let c =
        qwen3(json!({"quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8"}}));
    let s = sizes(&c);
    let file = quantized_checkpoint(&c, &s, |_, o, i| {
        vec![
            (
                ".weight".into(),
                T {
                    dtype: "F8_E4M3",
                    shape: vec![o, i],
                    data: vec![0; o * i],
                },
            ),
            (
                ".weight_scale".into(),
                T {
                    dtype: "F32",
                    shape: vec![],
                    data: vec![0; 4],
                },
            ),
            (
                ".input_scale".into(),
                T {
                    dtype: "F32",
                    shape: vec![],
                    data: vec![0; 4],
                },
            ),
        ]
    });
    let d = dir("modelopt-fp8");
    write(&d.join("model.safetensors"), &file);
    load_and_compare(&c, &s, &d);
    let (_, plan) = open_plan(&c, &s, &d);
    let q = plan
        .placed
        .iter()
        .find(|p| p.slot.name == "model.layers.0.self_attn.q_proj.weight")
        .unwrap();
    let parts: Vec<(&str, usize, usize)> = q
        .parts
        .iter()
        .map(|p| (p.tensor.rsplit('.').next().unwrap(), p.offset, p.bytes))
        .collect();
    assert_eq!(
        parts,
        [
            ("weight", 0, 4096),
            ("weight_scale", 4096, 4),
            ("input_scale", 4100, 4)
        ]
    );
    assert_eq!(q.zero_fill, 16);
}

/// NVFP4 (`quant_algo: NVFP4`, groups of 16, `ModelOptNvFp4LinearMethod`): the packed
/// elements, an E4M3 scale a group, then `weight_scale_2` and `input_scale`; at tp 2 the
/// row-parallel o projection's elements and group scales are cut along the input together.
#[test]
fn an_nvfp4_matrix_loads_with_its_group_and_global_scales() {
    let c = qwen3(
        json!({"quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16}}),
    );
    let s = sizes(&c);
    let nvfp4 = |_: &str, o: usize, i: usize| {
        vec![
            (
                ".weight".into(),
                T {
                    dtype: "U8",
                    shape: vec![o, i / 2],
                    data: vec![0; o * i / 2],
                },
            ),
            (
                ".weight_scale".into(),
                T {
                    dtype: "F8_E4M3",
                    shape: vec![o, i / 16],
                    data: vec![0; o * i / 16],
                },
            ),
            (
                ".weight_scale_2".into(),
                T {
                    dtype: "F32",
                    shape: vec![],
                    data: vec![0; 4],
                },
            ),
            (
                ".input_scale".into(),
                T {
                    dtype: "F32",
                    shape: vec![],
                    data: vec![0; 4],
                },
            ),
        ]
    };
    let file = quantized_checkpoint(&c, &s, nvfp4);
    let d = dir("nvfp4");
    write(&d.join("model.safetensors"), &file);
    load_and_compare(&c, &s, &d);

    let layout = arena_spec::ParallelLayout::new(2, 1, 1).unwrap();
    let r1 = rank_places(&c.shard(&layout.rank(1).unwrap()).unwrap(), &d);
    let o = "model.layers.1.self_attn.o_proj";
    let (w, sc) = (
        &file[&format!("{o}.weight")],
        &file[&format!("{o}.weight_scale")],
    );
    // [64, 32] packed bytes: columns 16..32; [64, 4] group scales: columns 2..4; the scalars.
    let mut expected = block1(w, 16, 32);
    expected.extend(block1(sc, 2, 4));
    expected.extend(&file[&format!("{o}.weight_scale_2")].data);
    expected.extend(&file[&format!("{o}.input_scale")].data);
    expected.resize(r1[&format!("{o}.weight")].len(), 0);
    assert_eq!(r1[&format!("{o}.weight")], expected);
}

/// Columns `from..to` of a one-byte `[rows, cols]` tensor.
fn block1(t: &T, from: usize, to: usize) -> Vec<u8> {
    let cols = t.shape[1];
    (0..t.shape[0])
        .flat_map(|r| t.data[r * cols + from..r * cols + to].to_vec())
        .collect()
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
        file.insert(
            name.into(),
            T {
                dtype: "BF16",
                shape: vec![4],
                data: vec![0; 8],
            },
        );
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
