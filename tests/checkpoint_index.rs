//! The weight declarations against real checkpoints' index files (`../shared/checkpoints`:
//! each `model.safetensors.index.json` as its repository commits it, with its `config.json`;
//! sources in its SOURCES.md). Read where they are, never copied here; ignored, with the
//! reason, where the folder is absent (`build.rs`).
//!
//! For every file: each name of its `weight_map` is claimed by exactly one place of the name
//! table or skipped with its reason, every place is in the `weight_map`, and the plan's
//! weight bytes at the file's own format (the reference's vocabulary) equal its
//! `metadata.total_size`; a format the project does not price is refused by name, and a
//! family whose names are not declared is refused by name.

use arena_spec::weights::checkpoint::{
    read_index, skip_reason, tensor_table, with_stored_names, CheckpointError,
};
use arena_spec::weights::{WeightLayers, WeightsError, WeightsSizes};
use arena_spec::ModelConfig;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[cfg(shared_checkpoints)]
fn folder() -> PathBuf {
    PathBuf::from(env!("ARENA_SHARED_CHECKPOINTS"))
}

#[cfg(not(shared_checkpoints))]
fn folder() -> PathBuf {
    unreachable!("the tests that read the folder are ignored without it")
}

/// What each checkpoint is expected to give.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// Every name placed or skipped; total_size = the plan's bytes + the skipped bytes
    /// given here (known where the skipped tensors are: RoPE's `inv_freq`, F32 `[head_dim /
    /// 2]` a layer) times `stored_per_planned_byte` (2 for a checkpoint stored in FP32,
    /// which the engine holds in 16 bits as the plan does).
    Exact {
        skipped_bytes: u64,
        stored_per_planned_byte: u64,
    },
    /// The weight format is refused by name (the message holds this).
    FormatRefused(&'static str),
    /// The family's checkpoint names are not declared.
    NamesNotDeclared,
}

fn expected(id: &str) -> Outcome {
    use Outcome::*;
    let exact = Exact {
        skipped_bytes: 0,
        stored_per_planned_byte: 1,
    };
    match id {
        "cognitivecomputations-dolphin3.0-r1-mistral-24b"
        | "mistralai-devstral-small-2507"
        | "meta-llama-llama-3.2-3b.copy"
        | "yourilalain-1parammyl-8b-modelstock"
        | "yourilalain-2prymmal-yi1.5-6b-slerp"
        | "sakurallm-sakura-14b-qwen2.5-v1.0"
        | "qwen-qwen3-1.7b.copy"
        | "radhikabhrara-llama-2-7b-chat-merged"
        | "microsoft-wizardlm-2-8x22b"
        // Qwen3.5-MoE with experts pruned: Gated DeltaNet layers under their split names, per
        // expert tensors (22,213 and 15,973 of them), FP16.
        | "bryce-hoehn-qwen3.5-18b-reap-a3b-coding"
        | "bryce-hoehn-qwen3.5-25b-reap-a3b-coding"
        // Phi-3: q, k and v in one stored `qkv_proj`, gate and up in one `gate_up_proj`.
        | "yourilalain-3prymmal-phi3-3b-slerp" => exact,
        "mattshumer-reflection-llama-3.1-70b" => Exact {
            skipped_bytes: 0,
            stored_per_planned_byte: 2,
        },
        // 32 layers' `inv_freq`, 64 F32 each.
        "thebloke-llama-2-7b-fp16.fp32-copy" => Exact {
            skipped_bytes: 32 * 64 * 4,
            stored_per_planned_byte: 2,
        },
        "irfanuruchi-llama-3.1-8b-bnb" | "jeevanchaps-llama-3.1-8b-instruct-bnb8" => {
            FormatRefused("bitsandbytes")
        }
        "qwen-qwen3-14b-mlx-4bit" => FormatRefused("MLX"),
        // Its SigLIP tower and projector (439 tensors, skipped): 423,060,336 parameters in
        // BF16, as transformers 5.24 builds Gemma3ForConditionalGeneration from this config
        // on the meta device.
        "google-medgemma-27b-it" => Exact {
            skipped_bytes: 423_060_336 * 2,
            stored_per_planned_byte: 1,
        },
        "qwen-qwen3-vl-30b-a3b-thinking" => NamesNotDeclared,
        other => panic!("{other}: a checkpoint this test does not know; add what it should give"),
    }
}

fn outcome(id: &str) -> Outcome {
    let dir = folder();
    let config = ModelConfig::load(dir.join(format!("{id}.config.json"))).unwrap();
    if let Err(WeightsError::FormatNotPlanned { why, .. }) =
        WeightsSizes::new(&config, &config.weight_formats)
    {
        return match expected(id) {
            Outcome::FormatRefused(word) if why.contains(word) => Outcome::FormatRefused(word),
            _ => panic!("{id}: refused: {why}"),
        };
    }
    // At the reference's own vocabulary: what the checkpoint stores.
    let w = WeightLayers::of(&config, false).unwrap();
    let sizes = WeightsSizes::with_layers(&config, &w, &config.weight_formats).unwrap();
    let table = match tensor_table(&config, &sizes) {
        Err(CheckpointError::NamesNotDeclared { .. }) => return Outcome::NamesNotDeclared,
        other => other.unwrap(),
    };
    let index: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{id}.index.json"))).unwrap(),
    )
    .unwrap();
    let map = read_index(&dir.join(format!("{id}.index.json"))).unwrap();
    let mut table = table;
    with_stored_names(&mut table, |n| map.contains_key(n));
    let mut claims: BTreeMap<&str, usize> = map.keys().map(|n| (n.as_str(), 0)).collect();
    // A tensor the family stores fused is claimed once, by its first block's place.
    for slot in table
        .iter()
        .filter(|s| !matches!(s.part, Some((k, _)) if k > 0))
    {
        match claims.get_mut(slot.name.as_str()) {
            Some(n) => *n += 1,
            None => panic!(
                "{id}: `{}` ({}) is not in the index",
                slot.name,
                slot.place()
            ),
        }
    }
    for (name, n) in &claims {
        match n {
            1 => {}
            0 => assert!(
                skip_reason(name, &config).is_some(),
                "{id}: `{name}` is neither placed nor skipped"
            ),
            _ => panic!("{id}: `{name}` is claimed by {n} places"),
        }
    }
    let total = index["metadata"]["total_size"].as_u64().unwrap();
    let planned = sizes.total_bytes();
    let per_byte = total / planned;
    Outcome::Exact {
        skipped_bytes: total - planned * per_byte,
        stored_per_planned_byte: per_byte,
    }
}

fn ids() -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(folder())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".index.json").map(str::to_string)
        })
        .collect();
    ids.sort();
    ids
}

#[test]
#[cfg_attr(
    not(shared_checkpoints),
    ignore = "../shared/checkpoints is absent (set ARENA_SHARED to the folder holding it)"
)]
fn every_index_file_is_placed_or_skipped_and_its_bytes_are_the_plan_s() {
    let ids = ids();
    assert_eq!(ids.len(), 19, "{ids:?}");
    let mut exact = 0;
    for id in &ids {
        let got = outcome(id);
        assert_eq!(got, expected(id), "{id}");
        exact += usize::from(matches!(got, Outcome::Exact { .. }));
    }
    assert_eq!(exact, 15);
}

/// Qwen3-VL-30B-A3B's FP8 copy has no index: the repository keeps a log of every tensor's
/// name, shape and dtype. Its family's names are not declared (its experts are stored as
/// per-expert FP8 matrices beside `model.language_model.` names), so it is refused by name.
#[test]
#[cfg_attr(
    not(shared_checkpoints),
    ignore = "../shared/checkpoints is absent (set ARENA_SHARED to the folder holding it)"
)]
fn the_fp8_vision_language_checkpoint_is_refused_by_name() {
    let dir = folder();
    let config =
        ModelConfig::load(dir.join("qwen-qwen3-vl-30b-a3b-thinking-fp8.config.json")).unwrap();
    let sizes = WeightsSizes::new(&config, &config.weight_formats).unwrap();
    let err = tensor_table(&config, &sizes).unwrap_err().to_string();
    assert!(
        err.contains("checkpoint tensor names of a Qwen3VlMoe model are not declared"),
        "{err}"
    );
}
