//! The `arena` binary under parallel layouts: one rank's arena, every command with a layout,
//! and the splits the engine refuses.

mod common;

use common::{error, stdout};

#[test]
fn plan_sizes_one_rank_of_a_parallel_layout() {
    let out = stdout(&[
        "plan",
        "deepseek-v3",
        "--tp",
        "8",
        "--max-batch-tokens",
        "1024",
    ]);
    assert!(
        out.contains("per GPU: rank 0 of tp=8 ep=1 pp=1 (8 ranks; stage 0, layers 0..61, 256 of 256 experts, LM head)"),
        "{out}"
    );
    assert!(out.contains("total_bytes per GPU"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("0..=7 ") && l.contains(" 0..61 ")),
        "one row for the 8 ranks of the one stage: {out}"
    );
    let host = stdout(&[
        "plan",
        "deepseek-v3",
        "--tp",
        "8",
        "--max-batch-tokens",
        "1024",
        "--device",
        "host",
    ]);
    assert_eq!(host.matches("allocated   rank ").count(), 8, "{host}");

    let doc: serde_json::Value = serde_json::from_str(&stdout(&[
        "plan",
        "qwen3-next-80b-a3b",
        "--tp",
        "2",
        "--ep",
        "2",
        "--pp",
        "2",
        "--json",
    ]))
    .unwrap();
    let layout = &doc["layout"];
    assert_eq!(
        (
            layout["tp"].as_u64(),
            layout["ep"].as_u64(),
            layout["pp"].as_u64()
        ),
        (Some(2), Some(2), Some(2))
    );
    assert_eq!(layout["world_size"], 4);
    assert_eq!(layout["per_rank"], true);
    // The last stage is the larger (it has the logits), so it is the one reported.
    assert_eq!(layout["rank"], 2);
    assert_eq!(layout["shard"]["local_experts"], 256);
    assert_eq!(layout["shard"]["holds_lm_head"], true);
    assert_eq!(
        layout["shard"]["layers"],
        serde_json::json!({"start": 24, "end": 48})
    );
    let stages = doc["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2);
    assert_eq!(stages[0]["ranks"], serde_json::json!([0, 1]));
    assert_eq!(stages[1]["layers"], serde_json::json!([24, 48]));
    assert!(stages[1]["total_bytes"].as_u64() > stages[0]["total_bytes"].as_u64());
    assert_eq!(doc["allocation"].as_array().unwrap().len(), 4);
    let qkvz = doc["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "ssm_qkvz")
        .unwrap()
        .clone();
    assert_eq!(
        qkvz["shape"],
        serde_json::json!([8192, (2 * 16 * 128 + 2 * 32 * 128) / 2])
    );

    // --rank picks one; a stage without the LM head has NULL logits.
    let first: serde_json::Value = serde_json::from_str(&stdout(&[
        "plan",
        "qwen3-next-80b-a3b",
        "--pp",
        "2",
        "--rank",
        "0",
        "--json",
    ]))
    .unwrap();
    let logits = first["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "logits")
        .unwrap()
        .clone();
    assert_eq!(
        (logits["bytes"].as_u64(), logits["off"].as_bool()),
        (Some(0), Some(true))
    );
    assert_eq!(first["allocation"].as_array().unwrap().len(), 1);
    // The single-GPU layout is the whole model, as before.
    let single: serde_json::Value =
        serde_json::from_str(&stdout(&["plan", "qwen3-0.6b", "--json"])).unwrap();
    assert_eq!(single["layout"]["per_rank"], false);
    assert_eq!(single["layout"]["world_size"], 1);
}

#[test]
fn fit_sweep_and_diff_take_a_layout() {
    let fit = stdout(&[
        "fit",
        "deepseek-v3",
        "--budget",
        "2GiB",
        "--tp",
        "8",
        "--pp",
        "2",
    ]);
    assert!(fit.contains("per GPU (the rank that binds)"), "{fit}");
    let whole = stdout(&["fit", "deepseek-v3", "--budget", "2GiB"]);
    let m = |out: &str| -> usize {
        let rest = out.split("max_batch_tokens = ").nth(1).unwrap();
        rest.split(' ').next().unwrap().parse().unwrap()
    };
    assert!(
        m(&fit) > m(&whole),
        "a rank fits more tokens than the whole model: {fit}"
    );
    let sweep = stdout(&[
        "sweep",
        "llama-3.1-8b",
        "--max-batch-tokens",
        "256..1024",
        "--tp",
        "4",
    ]);
    assert!(sweep.contains("per GPU: rank 0 of tp=4"), "{sweep}");
    let diff = stdout(&[
        "diff",
        "deepseek-v3",
        "--tp-b",
        "8",
        "--max-batch-tokens",
        "1024",
    ]);
    assert!(diff.contains("per GPU: rank 0 of tp=8"), "{diff}");
    let total = diff.lines().find(|l| l.starts_with("total_bytes")).unwrap();
    assert!(total.contains(" -"), "B is smaller: {total}");
}

#[test]
fn a_split_the_engine_refuses_is_one_line() {
    let e = error(&["plan", "llama-3.1-8b", "--tp", "3"], &[]);
    assert!(
        e.contains("`num_attention_heads` = 32 is not divisible by tp = 3"),
        "{e}"
    );
    let e = error(&["plan", "deepseek-v3", "--tp", "8", "--ep", "3"], &[]);
    assert!(e.contains("ep = 3 does not divide tp = 8"), "{e}");
    let e = error(&["plan", "qwen3-0.6b", "--pp", "40"], &[]);
    assert!(
        e.contains("pp = 40 stages, but the model has only 28 layers"),
        "{e}"
    );
    let e = error(&["plan", "qwen3-0.6b", "--tp", "2", "--rank", "2"], &[]);
    assert!(
        e.contains("rank 2 is not a rank of tp = 2, pp = 1 (2 ranks)"),
        "{e}"
    );
    let e = error(&["plan", "qwen3-0.6b", "--tp", "0"], &[]);
    assert!(e.contains("--tp is 0"), "{e}");
    assert!(
        error(&["plan", "qwen3-0.6b", "--device", "cuda:0,0"], &[]).contains("lists a GPU twice")
    );
}

#[test]
fn an_absurd_layout_is_one_line_not_an_abort() {
    let e = error(&["plan", "qwen3-0.6b", "--pp", "1152921504606846976"], &[]);
    assert!(e.contains("more than 65536 GPUs"), "{e}");
    let e = error(&["plan", "qwen3-0.6b", "--pp", "60000"], &[]);
    assert!(e.contains("only 28 layers"), "{e}");
}
