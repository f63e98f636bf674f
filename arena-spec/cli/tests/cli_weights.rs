//! `arena weights check` and `arena weights load` on checkpoints written here: a tiny Qwen3
//! in transformers' names, sharded, and the same with a tensor gone.

mod common;

use common::{error, json, stdout};
use safetensors::tensor::{Dtype, TensorView};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const CONFIG: &str = r#"{"model_type": "qwen3", "hidden_size": 64, "intermediate_size": 96,
  "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 2,
  "vocab_size": 250, "max_position_embeddings": 128, "tie_word_embeddings": false}"#;

/// Every tensor of the tiny Qwen3 and its shape (the vocabulary's 250 rows, unpadded).
fn tensors() -> BTreeMap<String, Vec<usize>> {
    let mut t = BTreeMap::new();
    t.insert("model.embed_tokens.weight".to_string(), vec![250, 64]);
    t.insert("lm_head.weight".into(), vec![250, 64]);
    t.insert("model.norm.weight".into(), vec![64]);
    for l in 0..2 {
        let p = format!("model.layers.{l}.");
        for (name, shape) in [
            ("input_layernorm.weight", vec![64]),
            ("post_attention_layernorm.weight", vec![64]),
            ("self_attn.q_proj.weight", vec![64, 64]),
            ("self_attn.k_proj.weight", vec![32, 64]),
            ("self_attn.v_proj.weight", vec![32, 64]),
            ("self_attn.o_proj.weight", vec![64, 64]),
            ("self_attn.q_norm.weight", vec![16]),
            ("self_attn.k_norm.weight", vec![16]),
            ("mlp.gate_proj.weight", vec![96, 64]),
            ("mlp.up_proj.weight", vec![96, 64]),
            ("mlp.down_proj.weight", vec![64, 96]),
        ] {
            t.insert(format!("{p}{name}"), shape);
        }
    }
    t
}

/// Writes the checkpoint into a fresh directory: config.json and two shards with their index.
fn checkpoint(name: &str, drop: Option<&str>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("arena-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), CONFIG).unwrap();
    let all: Vec<(String, Vec<usize>)> = tensors()
        .into_iter()
        .filter(|(n, _)| Some(n.as_str()) != drop)
        .collect();
    let data: Vec<Vec<u8>> = all
        .iter()
        .map(|(_, s)| vec![7u8; s.iter().product::<usize>() * 2])
        .collect();
    let mut map = serde_json::Map::new();
    for (k, shard) in ["a.safetensors", "b.safetensors"].into_iter().enumerate() {
        let views: Vec<(String, TensorView)> = all
            .iter()
            .zip(&data)
            .enumerate()
            .filter(|(i, _)| i % 2 == k)
            .map(|(_, ((n, s), d))| {
                (
                    n.clone(),
                    TensorView::new(Dtype::BF16, s.clone(), d).unwrap(),
                )
            })
            .collect();
        for (n, _) in &views {
            map.insert(n.clone(), shard.into());
        }
        std::fs::write(
            dir.join(shard),
            safetensors::serialize(views, None).unwrap(),
        )
        .unwrap();
    }
    let index = serde_json::json!({"metadata": {}, "weight_map": map});
    std::fs::write(dir.join("model.safetensors.index.json"), index.to_string()).unwrap();
    dir
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn check_prints_every_tensor_with_its_place_and_the_bytes() {
    let dir = checkpoint("check", None);
    let out = stdout(&["weights", "check", path(&dir)]);
    assert!(
        out.contains("(Qwen3, 2 layers): 2 files, 25 tensors"),
        "{out}"
    );
    let q = out
        .lines()
        .find(|l| l.starts_with("model.layers.1.self_attn.k_proj.weight"))
        .unwrap();
    assert!(
        q.contains("BF16")
            && q.contains("[32, 64]")
            && q.ends_with("AttentionWeights.k_proj layer 1 +4096"),
        "{q}"
    );
    // The engine's sizes pad the vocabulary to 256 rows: 2 × 6 × 64 × 2 bytes, zeroed.
    assert!(
        out.contains("plan 189184 (1536 the vocabulary's padding rows, zeroed)"),
        "{out}"
    );
    let doc = json(&["weights", "check", path(&dir), "--json"]);
    assert_eq!(doc["placed"].as_array().unwrap().len(), 25);
    assert_eq!(doc["problems"], serde_json::json!([]));
    assert_eq!(doc["files"].as_array().unwrap().len(), 2);
}

#[test]
fn check_exits_non_zero_naming_a_missing_tensor() {
    let dir = checkpoint("missing", Some("model.layers.0.mlp.down_proj.weight"));
    let out = common::arena()
        .args(["weights", "check", path(&dir)])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("problems (1):\n  `model.layers.0.mlp.down_proj.weight` is missing (it fills FfnWeights.down_proj layer 0)"), "{stdout}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.ends_with("1 tensor do not match the weight declarations\n"),
        "{err}"
    );
}

#[test]
fn load_copies_every_byte_on_the_host_and_says_the_rate() {
    let dir = checkpoint("load", None);
    let out = stdout(&["weights", "load", path(&dir), "--verify"]);
    assert!(out.contains("verified: 189184 bytes read back"), "{out}");
    assert!(out.contains(": 25 tensors, 187648 bytes into 189184 bytes of weight arenas on host (1536 padding bytes zeroed)"), "{out}");
    let rate = out.lines().find(|l| l.contains(" tensors, ")).unwrap();
    assert!(rate.ends_with("GB/s"), "{out}");
}

#[test]
fn a_directory_without_a_checkpoint_is_one_line() {
    let dir = std::env::temp_dir().join(format!("arena-cli-{}-empty", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), CONFIG).unwrap();
    let err = error(&["weights", "check", path(&dir)], &[]);
    assert!(
        err.contains("model.safetensors") && err.contains("No such file"),
        "{err}"
    );
}

/// `--tp 2 --rank 1`: the rank's share of each tensor, its places and bytes.
#[test]
fn check_matches_a_rank_s_share() {
    let dir = checkpoint("rank", None);
    let out = stdout(&["weights", "check", path(&dir), "--tp", "2", "--rank", "1"]);
    let o = out
        .lines()
        .find(|l| l.starts_with("model.layers.0.self_attn.o_proj.weight"))
        .unwrap();
    // The whole [64, 64] stored; this rank's 32 input columns, 4096 bytes a layer.
    assert!(
        o.contains("[64, 64]") && o.ends_with("AttentionWeights.o_proj layer 0 +0"),
        "{o}"
    );
    // Half of every split tensor, the norms whole, 128 of the 256 padded vocabulary rows.
    assert!(out.contains("bytes: checkpoint 93440 placed + 0 skipped; plan 94976 (1536 the vocabulary's padding rows, zeroed)"), "{out}");
}
