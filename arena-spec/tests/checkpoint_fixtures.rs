//! What the checkpoint tests share: tiny configs, a safetensors writer, checkpoints of every
//! tensor a table names, and loading one into host weights to read each place back.
#![allow(dead_code)] // each test file uses its own part

use arena_runtime::{Arena, HostDevice};
use arena_spec::weights::checkpoint::{load, tensor_table, Checkpoint, LoadPlan};
use arena_spec::weights::{AllocatedWeights, WeightLayers, WeightsSizes};
use arena_spec::ModelConfig;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A tiny Qwen3 (2 layers, hidden 64, 4 heads of 16, 2 kv heads), `extra` merged in.
pub fn qwen3(extra: Value) -> ModelConfig {
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
pub fn mixtral(layers: usize) -> ModelConfig {
    let c = json!({
        "model_type": "mixtral", "hidden_size": 64, "intermediate_size": 32,
        "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": layers,
        "vocab_size": 256, "num_local_experts": 4, "num_experts_per_tok": 2,
        "max_position_embeddings": 128
    });
    ModelConfig::from_json_str(&c.to_string(), "tiny-mixtral.json").unwrap()
}

/// A tensor to write: dtype, shape, bytes.
pub struct T {
    pub dtype: &'static str,
    pub shape: Vec<usize>,
    pub data: Vec<u8>,
}

/// Distinct bytes for each tensor, so a misplaced one is seen.
pub fn filled(seed: usize, n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + seed * 17 + 1) as u8).collect()
}

/// Writes a safetensors file (its 8-byte length, the JSON header, the data in name order).
pub fn write(path: &Path, tensors: &BTreeMap<String, T>) {
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
pub fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("arena-ckpt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The reference's own vocabulary (no padding rows).
pub fn sizes(c: &ModelConfig) -> WeightsSizes {
    WeightsSizes::with_layers(c, &WeightLayers::of(c, false).unwrap(), &c.weight_formats).unwrap()
}

/// Every tensor the table names, in BF16; a matrix `[out, in]` as transformers stores it: o
/// and the down projections read a width and write the hidden size, the others read it.
pub fn bf16_checkpoint(c: &ModelConfig, s: &WeightsSizes) -> BTreeMap<String, T> {
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

pub fn open_plan(c: &ModelConfig, s: &WeightsSizes, path: &Path) -> (Checkpoint, LoadPlan) {
    let ckpt = Checkpoint::open(path).unwrap();
    let table = tensor_table(c, s).unwrap();
    let plan = LoadPlan::new(c, &table, ckpt.tensors(), ckpt.files(), &c.weight_formats);
    (ckpt, plan)
}

/// Loads `path` into freshly allocated host weights and checks every place holds its
/// tensors' bytes.
pub fn load_and_compare(c: &ModelConfig, s: &WeightsSizes, path: &Path) -> usize {
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
pub fn buffer_bytes(w: &AllocatedWeights<HostDevice>, arena: &str, buffer: &str) -> Vec<u8> {
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

/// Each place's bytes, by stored name and buffer (a fused stored tensor fills several
/// places), read back from host weights loaded at `c`'s sizes (a rank's, for a rank).
pub fn places(c: &ModelConfig, path: &Path) -> BTreeMap<(String, &'static str), Vec<u8>> {
    let s = WeightsSizes::new(c, &c.weight_formats).unwrap();
    let (ckpt, plan) = open_plan(c, &s, path);
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    let mut weights = AllocatedWeights::allocate(HostDevice::new(), &s).unwrap();
    load(&ckpt, &plan, &mut weights, &mut |_, _| {}).unwrap();
    let mut out = BTreeMap::new();
    for placed in &plan.placed {
        let buffer = buffer_bytes(&weights, placed.slot.arena, placed.slot.buffer);
        let at = placed.slot.offset;
        let key = (placed.slot.name.clone(), placed.slot.buffer);
        out.insert(key, buffer[at..at + placed.slot.bytes].to_vec());
    }
    weights.release().unwrap();
    out
}

/// [`places`] by stored name alone (no stored tensor filling two places).
pub fn rank_places(c: &ModelConfig, path: &Path) -> BTreeMap<String, Vec<u8>> {
    places(c, path)
        .into_iter()
        .map(|((n, _), v)| (n, v))
        .collect()
}

/// A small BF16 tensor of no place's (what a rule skips or a test adds).
pub fn stub() -> T {
    zeros("BF16", vec![4], 2)
}

/// A per-tensor FP32 scale, `[]`.
pub fn scalar() -> T {
    zeros("F32", vec![], 4)
}

/// A tensor of `dtype` and `shape`, `bytes` an element, all zeros.
pub fn zeros(dtype: &'static str, shape: Vec<usize>, bytes: usize) -> T {
    let n: usize = shape.iter().product();
    T {
        dtype,
        shape,
        data: vec![0; n * bytes],
    }
}

/// Rows `rows` of a row-major `[_, cols]` BF16 tensor's bytes, columns `from..to`.
pub fn block(t: &T, rows: std::ops::Range<usize>, from: usize, to: usize) -> Vec<u8> {
    let cols = t.shape[1];
    rows.flat_map(|r| t.data[(r * cols + from) * 2..(r * cols + to) * 2].to_vec())
        .collect()
}

/// Writes every tensor of `c`'s table as `quantized` says a matrix is stored (its elements'
/// dtype and shape, then its scale tensors), 16-bit tensors as they are.
pub fn quantized_checkpoint(
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

/// Columns `from..to` of a one-byte `[rows, cols]` tensor.
pub fn block1(t: &T, from: usize, to: usize) -> Vec<u8> {
    let cols = t.shape[1];
    (0..t.shape[0])
        .flat_map(|r| t.data[r * cols + from..r * cols + to].to_vec())
        .collect()
}
