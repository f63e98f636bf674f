//! Every `arena` command's `--json` document, through the binary: versioned, one parseable
//! document, and its figures the ones the other commands and the library give.

mod common;

use common::{json, stdout, u};

/// `plan --json`'s bytes of `buffer` (or a total) for `model` at `m` tokens.
fn plan_bytes(model: &str, m: usize, key: &str) -> u64 {
    let doc = json(&[
        "plan",
        model,
        "--json",
        "--max-batch-tokens",
        &m.to_string(),
    ]);
    match doc.get(key) {
        Some(v) => u(v),
        None => u(&doc["buffers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["name"] == key)
            .unwrap()["bytes"]),
    }
}

#[test]
fn fit_json_answers_aligned_with_exact_bytes_and_slack() {
    let doc = json(&["fit", "qwen3-30b-a3b", "--budget", "20GiB", "--json"]);
    assert_eq!(doc["searched"], "max_batch_tokens");
    assert_eq!(doc["alignment"], 16);
    let (answer, largest) = (u(&doc["answer"]), u(&doc["largest_fitting"]));
    assert_eq!(answer % 16, 0);
    assert!(answer <= largest && largest - answer < 16);
    assert_eq!(u(&doc["budget_bytes"]), 20 << 30);
    assert_eq!(u(&doc["used_bytes"]) + u(&doc["slack_bytes"]), 20 << 30);
    assert_eq!(u(&doc["inputs"]["max_batch_tokens"]), answer);
    let tracked: u64 = doc["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["tracked"] == true)
        .map(|b| u(&b["bytes"]))
        .sum();
    assert_eq!(tracked, u(&doc["used_bytes"]));
    assert_eq!(
        u(&doc["used_bytes"]),
        plan_bytes("qwen3-30b-a3b", answer as usize, "total_bytes")
    );
    let text = stdout(&["fit", "qwen3-30b-a3b", "--budget", "20GiB"]);
    assert!(
        text.contains(&format!("max_batch_tokens = {answer} ")),
        "{text}"
    );
    let batch = json(&[
        "fit",
        "qwen3-30b-a3b",
        "--budget",
        "2GiB",
        "--vary",
        "batch",
        "--reuse",
        "--json",
    ]);
    assert_eq!(batch["searched"], "max_batch_size");
    assert_eq!(batch["alignment"], 1);
    assert_eq!(batch["footprint"], "reuse_slab");
    assert_eq!(batch["answer"], batch["largest_fitting"]);
}

#[test]
fn sweep_json_points_are_the_plans_at_each_m() {
    let doc = json(&[
        "sweep",
        "qwen3-next-80b-a3b",
        "--max-batch-tokens",
        "256..1000",
        "--top",
        "3",
        "--json",
    ]);
    let followed: Vec<&str> = doc["followed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(followed.len(), 3);
    let points = doc["points"].as_array().unwrap();
    let ms: Vec<u64> = points.iter().map(|p| u(&p["max_batch_tokens"])).collect();
    assert_eq!(ms, [256, 512, 1000]);
    for p in points {
        let m = u(&p["max_batch_tokens"]) as usize;
        for key in ["total_bytes", "reuse_bytes", "slab_bytes"] {
            assert_eq!(
                u(&p[key]),
                plan_bytes("qwen3-next-80b-a3b", m, key),
                "{key} at {m}"
            );
        }
        for (name, bytes) in followed.iter().zip(p["followed_bytes"].as_array().unwrap()) {
            assert_eq!(
                u(bytes),
                plan_bytes("qwen3-next-80b-a3b", m, name),
                "{name} at {m}"
            );
        }
    }
}

#[test]
fn diff_json_rows_are_b_minus_a_and_the_sides_are_the_plans() {
    let doc = json(&[
        "diff",
        "qwen3-0.6b",
        "qwen3-30b-a3b",
        "--json",
        "--max-batch-tokens",
        "512",
    ]);
    assert_eq!(doc["a"]["model"], "qwen3-0.6b");
    assert_eq!(doc["b"]["model"], "qwen3-30b-a3b");
    let rows = doc["buffers"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        <arena_spec::BufferArena as arena_runtime::Arena>::BUFFERS.len()
    );
    for r in rows {
        assert_eq!(
            r["delta_bytes"].as_i64().unwrap(),
            u(&r["b_bytes"]) as i64 - u(&r["a_bytes"]) as i64
        );
    }
    for (side, model) in [("a", "qwen3-0.6b"), ("b", "qwen3-30b-a3b")] {
        for key in ["total_bytes", "reuse_bytes"] {
            assert_eq!(
                u(&doc[side][key]),
                plan_bytes(model, 512, key),
                "{side} {key}"
            );
        }
    }
    let levers = json(&[
        "diff",
        "qwen3.5-27b",
        "--lever-b",
        "fp8_rowwise=1",
        "--json",
    ]);
    assert_eq!(levers["b"]["levers"]["fp8_rowwise"], true);
    assert_eq!(levers["a"]["levers"]["fp8_rowwise"], false);
}

#[test]
fn models_json_lists_every_shipped_config_as_the_library_loads_it() {
    let doc = json(&["models", "--json"]);
    let rows = doc["models"].as_array().unwrap();
    assert_eq!(rows.len(), arena_spec::models::SHIPPED.len());
    for (row, m) in rows.iter().zip(arena_spec::models::SHIPPED) {
        let c = m.config().unwrap();
        assert_eq!(row["name"], m.name);
        assert_eq!(row["model_type"], c.model_type.to_string());
        assert_eq!(row["synthetic"], m.is_synthetic());
        assert_eq!(u(&row["hidden_size"]) as usize, c.hidden_size);
        assert_eq!(u(&row["gdn_layers"]) as usize, c.num_gdn_layers());
        let experts = if c.is_moe() { c.num_experts } else { 0 };
        assert_eq!(u(&row["experts"]) as usize, experts);
    }
}

#[test]
fn gpu_plan_json_is_the_librarys_plan() {
    let doc = json(&[
        "gpu-plan",
        "deepseek-v3",
        "--gpu-memory",
        "143155MiB",
        "--tp",
        "8",
        "--max-seq-len",
        "32768",
        "--reuse",
        "--json",
    ]);
    let ranks = doc["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 8);
    let binding = &ranks[u(&doc["binding_rank"]) as usize];
    assert_eq!(doc["blocks"], binding["pool"]);
    assert_eq!(u(&doc["tokens"]), u(&doc["blocks"]["full"]) * 16);
    assert_eq!(doc["inputs"]["arena"]["max_seq_len"], 32768);
    assert_eq!(doc["inputs"]["reserve_bytes"], 640 << 20);
    assert!(doc["reserve_source"].as_str().unwrap().contains("measured"));
    // Every rank's parts add up to its GPU.
    for r in ranks {
        let sum = [
            "weights_bytes",
            "arena_bytes",
            "state_bytes",
            "reserve_bytes",
            "kv_budget_bytes",
        ]
        .iter()
        .map(|k| u(&r[k]))
        .sum::<u64>();
        assert_eq!(sum, 143_155 << 20);
    }
    // The library's plan, the same figures.
    let c = arena_spec::models::find("deepseek-v3")
        .unwrap()
        .config()
        .unwrap();
    let arena = arena_spec::BufferArenaInputs {
        max_seq_len: 32_768,
        ..arena_spec::BufferArenaInputs::defaults_for(&c)
    };
    let i = arena_spec::gpu_plan::GpuPlanInputs {
        reuse_arena: true,
        ..arena_spec::gpu_plan::GpuPlanInputs::new(143_155 << 20, arena)
    };
    let layout = arena_spec::ParallelLayout::new(8, 1, 1).unwrap();
    let plan = arena_spec::gpu_plan::plan_gpu(&c, &layout, i).unwrap();
    assert_eq!(u(&doc["blocks"]["full"]), plan.blocks.full as u64);
    assert_eq!(u(&doc["sequences"]), plan.sequences as u64);
    assert_eq!(u(&ranks[0]["weights_bytes"]), plan.ranks[0].weights_bytes);
}
