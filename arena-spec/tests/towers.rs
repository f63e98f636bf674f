//! The vision and audio towers of multimodal files against the reference: every shipped
//! file's tower parameters equal what transformers builds on the meta device
//! (`tests/oracle/towers.py` → `towers.json`: every parameter outside the language model and
//! its head); the whole-GPU plan loads them on the first stage unless asked for the text
//! model alone, and a tower of a kind not counted is refused, never planned as nothing.

use arena_spec::gpu_plan::{on_device, plan_gpu, GpuPlanError, GpuPlanInputs};
use arena_spec::models::SHIPPED;
use arena_spec::{BufferArenaInputs, ModelConfig, ParallelLayout, TowerKind};
use serde_json::Value;

use crate::shipped;
use shipped::config;

fn oracle() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracle/towers.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn plan(
    c: &ModelConfig,
    tp: usize,
    pp: usize,
    text_only: bool,
) -> Result<arena_spec::gpu_plan::GpuPlan, GpuPlanError> {
    let arena = BufferArenaInputs {
        max_seq_len: 4096,
        ..BufferArenaInputs::defaults_for(c)
    };
    let inputs = GpuPlanInputs {
        text_only,
        ..GpuPlanInputs::new(1 << 50, arena)
    };
    plan_gpu(c, &ParallelLayout::new(tp, 1, pp).unwrap(), inputs)
}

#[test]
fn every_multimodal_file_counts_its_towers_as_transformers_builds_them() {
    let oracle = oracle();
    let mut checked = 0;
    for m in SHIPPED {
        let file: Value = serde_json::from_str(&m.json.replace("Infinity", "1e308")).unwrap();
        let has = |key: &str| file.get(key).is_some_and(|v| !v.is_null());
        let c = config(m.name);
        assert_eq!(
            (c.towers.vision.is_some(), c.towers.audio.is_some()),
            (has("vision_config"), has("audio_config")),
            "{}",
            m.name
        );
        if c.towers.is_none() {
            continue;
        }
        assert!(
            [c.towers.vision, c.towers.audio]
                .iter()
                .flatten()
                .all(|t| t.kind != TowerKind::Unsized),
            "{}: {:?}",
            m.name,
            c.towers
        );
        let record = &oracle["models"][m.name];
        assert!(record["error"].is_null(), "{}: {record}", m.name);
        assert_eq!(
            c.towers.params(),
            record["tower_params"].as_u64().unwrap(),
            "{}",
            m.name
        );
        checked += 1;
    }
    // Gemma 3 and 4 (vision and audio), Pixtral, Qwen3-VL and Qwen3.5, Llama 4, MoonViT.
    assert_eq!(checked, 13);
}

/// Qwen/Qwen3-VL-30B-A3B-Thinking's BF16 checkpoint holds 62,141,508,064 bytes of tensors
/// (`metadata.total_size` of its `model.safetensors.index.json`, as the InJuly7/Qwen3-VL-MoE
/// repository keeps it at ffbb191fb2bcf4a70dd1d7810ce1638e5e2e27c9): the text model's
/// weights and the vision tower's, every byte.
#[test]
fn the_plan_loads_the_towers_a_checkpoint_holds_on_the_first_stage() {
    let c = config("qwen3-vl-30b-a3b-thinking");
    let towers = c.towers.bytes();
    let (with, without) = (
        plan(&c, 1, 1, false).unwrap(),
        plan(&c, 1, 1, true).unwrap(),
    );
    let (a, b) = (&with.ranks[0], &without.ranks[0]);
    assert_eq!((a.towers_bytes, b.towers_bytes), (towers, 0));
    assert_eq!(a.weights_exact_bytes - b.weights_exact_bytes, towers);
    assert_eq!(a.weights_bytes - b.weights_bytes, on_device(towers));
    assert_eq!(a.weights_exact_bytes, 62_141_508_064);
    // Under pp the first stage's ranks hold them; under tp each rank whole.
    let staged = plan(&c, 2, 2, false).unwrap();
    for r in &staged.ranks {
        let first = r.rank < 2;
        assert_eq!(
            r.towers_bytes,
            if first { towers } else { 0 },
            "rank {}",
            r.rank
        );
    }
}

#[test]
fn a_tower_not_counted_here_is_refused_unless_the_text_model_is_asked_for() {
    let m = SHIPPED
        .iter()
        .find(|m| m.name == "qwen3-vl-4b-instruct")
        .unwrap();
    let mut file: Value = serde_json::from_str(m.json).unwrap();
    file["vision_config"]["model_type"] = "a_new_vit".into();
    let c = ModelConfig::from_json_str(&file.to_string(), "new-vit.json").unwrap();
    assert_eq!(c.towers.vision.unwrap().kind, TowerKind::Unsized);
    let e = plan(&c, 1, 1, false).unwrap_err().to_string();
    assert!(
        e.contains("vision tower") && e.contains("--text-only"),
        "{e}"
    );
    assert_eq!(plan(&c, 1, 1, true).unwrap().ranks[0].towers_bytes, 0);
    // A key missing or out of range is the file's error, naming it.
    file["vision_config"]["model_type"] = "qwen3_vl".into();
    file["vision_config"]
        .as_object_mut()
        .unwrap()
        .remove("depth");
    let e = ModelConfig::from_json_str(&file.to_string(), "x.json").unwrap_err();
    assert!(e.to_string().contains("vision_config.depth"), "{e}");
    file["vision_config"]["depth"] = (1u64 << 40).into();
    let e = ModelConfig::from_json_str(&file.to_string(), "x.json").unwrap_err();
    assert!(e.to_string().contains("vision_config.depth"), "{e}");
    file["vision_config"] = Value::from(3);
    let e = ModelConfig::from_json_str(&file.to_string(), "x.json").unwrap_err();
    assert!(e.to_string().contains("vision_config"), "{e}");
}

#[test]
fn a_text_file_has_no_towers_and_plans_the_same_either_way() {
    let c = config("qwen3-0.6b");
    assert!(c.towers.is_none());
    let (a, b) = (
        plan(&c, 1, 1, false).unwrap(),
        plan(&c, 1, 1, true).unwrap(),
    );
    assert_eq!(a.ranks[0].weights_bytes, b.ranks[0].weights_bytes);
    assert_eq!(a.ranks[0].towers_bytes, 0);
}
