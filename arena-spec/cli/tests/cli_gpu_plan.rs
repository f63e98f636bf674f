//! `arena gpu-plan`'s figures, through the binary: each rank's KV layer kinds (bytes a
//! token and a block, exact), its states (bytes a slot, dtype and where it was read), the
//! exact bytes beside the page-rounded ones, what binds, the state dtype override, and the
//! plot. The expected figures are transcribed from the raw config (vLLM's page and state
//! shapes), not read through `ModelConfig`.

mod common;

use common::{error, json, stdout, u};
use serde_json::Value;

/// The shipped file as its raw JSON (`Infinity` read as Python's `json` reads it), not through
/// `ModelConfig`.
fn raw(name: &str) -> Value {
    let text = arena_spec::models::find(name).unwrap().json;
    serde_json::from_str(&text.replace("Infinity", "1e308")).unwrap()
}

/// A whole-number key of a raw config.
fn n(v: &Value, key: &str) -> usize {
    v[key].as_u64().unwrap_or_else(|| panic!("{key}")) as usize
}

const PAGE: u64 = 2 << 20;

const NEMOTRON: [&str; 7] = [
    "gpu-plan",
    "nemotron-h-56b-base-8k",
    "--gpu-memory",
    "141GiB",
    "--tp",
    "2",
    "--json",
];

#[test]
fn a_hybrid_ranks_figures_are_the_files() {
    let doc = json(&NEMOTRON);
    let v = raw("nemotron-h-56b-base-8k");
    let pattern = v["hybrid_override_pattern"].as_str().unwrap();
    let (attention, mamba) = (pattern.matches('*').count(), pattern.matches('M').count());
    let kv_heads = n(&v, "num_key_value_heads") / 2;
    // NVIDIA's older files name the head size `attention_head_dim`.
    let head = v
        .get("head_dim")
        .map_or(n(&v, "attention_head_dim"), |_| n(&v, "head_dim")) as u64;
    for r in doc["ranks"].as_array().unwrap() {
        // Keys and values: K and V of the rank's kv heads, BF16, every attention layer.
        let kv = &r["kv_layers"].as_array().unwrap()[0];
        assert_eq!(kv["buffer"], "full");
        assert_eq!(u(&kv["layers"]) as usize, attention);
        let per_token = attention as u64 * 2 * kv_heads as u64 * head * 2;
        assert_eq!(u(&kv["bytes_per_token"]), per_token);
        assert_eq!(u(&kv["bytes_per_block"]), 16 * per_token);
        assert_eq!(u(&kv["blocks_per_sequence"]), 8192 / 16);
        // The SSM state: [heads / tp, head_dim, state] FP32 a layer, read from the family's
        // default (the file has no `mamba_ssm_cache_dtype`).
        let states = r["states"].as_array().unwrap();
        let ssm = states
            .iter()
            .find(|s| s["buffer"] == "mamba_ssm_f32")
            .unwrap();
        let slot = (mamba * n(&v, "mamba_num_heads") / 2
            * n(&v, "mamba_head_dim")
            * n(&v, "ssm_state_size")
            * 4) as u64;
        assert_eq!(u(&ssm["bytes_per_slot"]), slot);
        assert_eq!(ssm["dtype"], "f32");
        assert_eq!(ssm["dtype_source"]["from"], "family_default");
        let conv = states.iter().find(|s| s["buffer"] == "mamba_conv").unwrap();
        assert!(conv["dtype_source"].is_null());
        // Exact beside page-rounded: the slab as the device takes it is the exact bytes
        // rounded up to the page.
        for part in ["weights", "arena", "state", "pool"] {
            let (exact, device) = (
                u(&r[format!("{part}_exact_bytes")]),
                u(&r[format!("{part}_bytes")]),
            );
            assert!(exact <= device && device - exact < PAGE, "{part}");
        }
        let slots = u(&doc["inputs"]["arena"]["max_batch_size"]);
        let states_total: u64 = states.iter().map(|s| u(&s["bytes_per_slot"])).sum();
        assert!(u(&r["state_exact_bytes"]) >= slots * states_total);
    }
    // 128 slots bind. NCCL's 484 MiB a GPU at tp 2 cost 24,784 tokens: without it
    // (`--nccl-reserve 0`) the figure vLLM's rules give on the plain reserve, 1,618,320.
    assert_eq!(doc["binds"], "state_slots");
    assert_eq!(u(&doc["tokens"]), 1_593_536);
    assert_eq!(u(&doc["ranks"][0]["nccl_bytes"]), 484 << 20);
    let mut no_nccl = NEMOTRON.to_vec();
    no_nccl.extend(["--nccl-reserve", "0"]);
    assert_eq!(u(&json(&no_nccl)["tokens"]), 1_618_320);
}

#[test]
fn the_state_dtype_is_overridden_in_either_direction() {
    let f32_doc = json(&NEMOTRON);
    let mut args = NEMOTRON.to_vec();
    args.extend(["--state-dtype", "bf16"]);
    let bf16_doc = json(&args);
    let ssm = |doc: &Value, name: &str| -> Value {
        doc["ranks"][0]["states"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["buffer"] == name)
            .unwrap()
            .clone()
    };
    let (f, b) = (
        ssm(&f32_doc, "mamba_ssm_f32"),
        ssm(&bf16_doc, "mamba_ssm_bf16"),
    );
    assert_eq!(u(&f["bytes_per_slot"]), 2 * u(&b["bytes_per_slot"]));
    assert_eq!(b["dtype_source"]["from"], "override");
    assert!(u(&bf16_doc["tokens"]) > u(&f32_doc["tokens"]));
    assert_eq!(bf16_doc["inputs"]["state_dtype"], "bf16");
    assert!(f32_doc["inputs"]["state_dtype"].is_null());
    // Qwen3-Next keeps the model's dtype (vLLM has no hook for it); f32 on request.
    let qn = [
        "gpu-plan",
        "qwen3-next-80b-a3b",
        "--gpu-memory",
        "141GiB",
        "--tp",
        "2",
        "--json",
    ];
    let doc = json(&qn);
    assert_eq!(
        ssm(&doc, "gdn_recurrent_bf16")["dtype_source"]["from"],
        "model_dtype"
    );
    let mut f32_args = qn.to_vec();
    f32_args.extend(["--state-dtype", "f32"]);
    assert!(ssm(&json(&f32_args), "gdn_recurrent_f32")["bytes_per_slot"].is_u64());
}

#[test]
fn the_text_shows_the_figures_and_what_binds() {
    let out = stdout(&NEMOTRON[..6]);
    for line in [
        "| ranks | KV layers | layers | keeps | bytes a token | bytes a block (16 tokens) | blocks a sequence |",
        "| 0–1 | full | 10 | every token | 20480 | 327680 | 512 |",
        "| 0–1 | mamba_ssm_f32 | 54 | f32 | the family's default in vLLM | 452984832 |",
        "bound by the state cache's slots",
    ] {
        assert!(out.contains(line), "no {line:?} in\n{out}");
    }
    // A window: Mistral-7B-v0.1's every layer slides by 4096.
    let out = stdout(&["gpu-plan", "mistral-7b-v0.1", "--gpu-memory", "80GiB"]);
    assert!(out.contains("| 0 | sliding | 32 | window 4096 |"), "{out}");
    assert!(out.contains("bound by the KV pool, a sequence"), "{out}");
    // Llama 4's chunks beside its full layers.
    let out = stdout(&[
        "gpu-plan",
        "llama-4-scout-17b-16e-instruct",
        "--gpu-memory",
        "141GiB",
        "--tp",
        "2",
    ]);
    assert!(out.contains("| 0–1 | sliding | 36 | chunk 8192 |"), "{out}");
    assert!(out.contains("| 0–1 | full | 12 | every token |"), "{out}");
}

/// The `<text>` elements of an SVG, in order.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text ")
        .skip(1)
        .map(|t| {
            let body = t.split('>').nth(1).unwrap().split("</text").next().unwrap();
            body.trim().to_string()
        })
        .collect()
}

#[test]
fn the_plot_stacks_each_ranks_parts_up_to_the_gpu() {
    let dir = std::env::temp_dir().join(format!("arena-gpu-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("plan.svg");
    let out = stdout(&[
        "gpu-plan",
        "llama-3.1-70b",
        "--gpu-memory",
        "80GiB",
        "--pp",
        "2",
        "--max-seq-len",
        "8192",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(out.contains("plot written to"), "{out}");
    let text = std::fs::read_to_string(&svg).unwrap();
    let texts = svg_texts(&text);
    let has = |s: &str| texts.iter().any(|t| t == s);
    for label in ["GPU 80.00 GiB", "rank (* binds)"] {
        assert!(has(label), "no `{label}` in {texts:?}");
    }
    // Each rank's bar is labelled, the binding one marked.
    assert!(has("rank 0") || has("rank 0*"), "{texts:?}");
    assert!(has("rank 1") || has("rank 1*"), "{texts:?}");
    // The legend gives the binding rank's bytes of each part, as the table does.
    let doc = json(&[
        "gpu-plan",
        "llama-3.1-70b",
        "--gpu-memory",
        "80GiB",
        "--pp",
        "2",
        "--max-seq-len",
        "8192",
        "--json",
    ]);
    let b = &doc["ranks"][u(&doc["binding_rank"]) as usize];
    let weights = arena_spec::report::human_bytes(u(&b["weights_bytes"]) as usize);
    assert!(has(&format!("weights {weights}")), "{texts:?}");
    assert!(has(&format!("rank {}*", doc["binding_rank"])), "{texts:?}");
    // Two ranks, five parts each (no state cache for a dense model), and the legend's six.
    assert!(text.matches("<rect").count() >= 2 * 5 + 6, "{text}");
    // --plot draws a whole-GPU plan only.
    let e = common::error(
        &[
            "fit",
            "llama-3.1-8b",
            "--budget",
            "4GiB",
            "--plot",
            svg.to_str().unwrap(),
        ],
        &[],
    );
    assert!(e.contains("--plot"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// The README's whole-GPU sample is the binary's output: every line of it but the `...`
/// elisions appears in the command's output, in order.
#[test]
fn the_readme_fit_sample_is_what_fit_prints() {
    let readme = common::workspace_doc("README.md");
    let start = readme
        .find("$ arena gpu-plan nemotron-3-nano-30b-a3b")
        .expect("the README has the sample");
    let block = &readme[start..];
    let close = block.find("```").expect("its end");
    let mut lines = block[..close].lines();
    let command = lines.next().unwrap().trim_start_matches("$ arena ");
    let dir = std::env::temp_dir().join(format!("arena-readme-fit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("plan.svg");
    let args: Vec<&str> = command
        .split(' ')
        .map(|a| {
            if a == "plan.svg" {
                svg.to_str().unwrap()
            } else {
                a
            }
        })
        .collect();
    common::assert_sample_lines_in_order(lines, &stdout(&args));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_multimodal_files_towers_are_in_the_weights_unless_text_only() {
    let args = [
        "gpu-plan",
        "gemma-4-26b-a4b",
        "--gpu-memory",
        "141GiB",
        "--pp",
        "2",
    ];
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let doc = json(&with_json);
    let (vision, audio) = (&doc["towers"]["vision"], &doc["towers"]["audio"]);
    assert_eq!(vision["kind"].as_str(), Some("gemma4_vision"));
    assert!(audio.is_null());
    let bytes = 2 * u(&vision["params"]);
    // On the first stage only.
    assert_eq!(u(&doc["ranks"][0]["towers_bytes"]), bytes);
    assert_eq!(u(&doc["ranks"][1]["towers_bytes"]), 0);
    with_json.push("--text-only");
    let text = json(&with_json);
    assert_eq!(u(&text["ranks"][0]["towers_bytes"]), 0);
    assert_eq!(
        u(&doc["ranks"][0]["weights_exact_bytes"]) - u(&text["ranks"][0]["weights_exact_bytes"]),
        bytes
    );
    let out = stdout(&args);
    assert!(
        out.contains("towers: vision (") && out.contains("--text-only leaves them out"),
        "{out}"
    );
    let mut text_args = args.to_vec();
    text_args.push("--text-only");
    assert!(stdout(&text_args).contains("left out (--text-only)"));
    // A text file says nothing of towers.
    assert!(!stdout(&["gpu-plan", "qwen3-0.6b", "--gpu-memory", "141GiB"]).contains("towers:"));
}

#[test]
fn the_weights_formats_and_where_they_were_read_are_printed() {
    let args = [
        "gpu-plan",
        "deepseek-v3",
        "--gpu-memory",
        "141GiB",
        "--tp",
        "8",
    ];
    let out = stdout(&args);
    assert!(
        out.contains("weights: attention, attention output, dense FFN, routed experts, shared experts FP8 (128x128 blocks)")
            && out.contains("(read from quantization_config)"),
        "{out}"
    );
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let doc = json(&with_json);
    assert_eq!(doc["weight_formats"]["source"], "quantization_config");
    assert_eq!(doc["weight_formats"]["experts"]["Fp8Block"]["rows"], 128);
    // A checkpoint directory with ModelOpt's side file.
    let dir = std::env::temp_dir().join(format!("arena-fit-recipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = arena_spec::models::find("qwen3-30b-a3b").unwrap().json;
    std::fs::write(dir.join("config.json"), config).unwrap();
    std::fs::write(
        dir.join("hf_quant_config.json"),
        r#"{"quantization": {"quant_algo": "NVFP4", "group_size": 16,
            "exclude_modules": ["lm_head", "model.layers.*.self_attn*"]}}"#,
    )
    .unwrap();
    let out = stdout(&["gpu-plan", dir.to_str().unwrap(), "--gpu-memory", "141GiB"]);
    assert!(
        out.contains(
            "weights: attention, attention output 16-bit; routed experts NVFP4 (groups of 16)"
        ) && out.contains("(read from hf_quant_config.json)"),
        "{out}"
    );
    // A 16-bit checkpoint says nothing of formats.
    assert!(!stdout(&["gpu-plan", "qwen3-0.6b", "--gpu-memory", "141GiB"]).contains("weights:"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gpu_plan_plans_a_whole_gpu_and_says_what_binds() {
    let out = stdout(&[
        "gpu-plan",
        "gpt-oss-20b",
        "--gpu-memory",
        "80GiB",
        "--max-seq-len",
        "32768",
    ]);
    assert!(out.contains("| rank | weights | arena |"), "{out}");
    assert!(out.contains("window (sliding or chunked) blocks"), "{out}");
    assert!(out.contains("sequences of 32768 tokens"), "{out}");
    assert!(out.contains("reserve: 640.00 MiB kept a GPU"), "{out}");
    // FP8 keys and values: more tokens.
    let tokens = |out: &str| -> usize {
        let after = out.split(" tokens = ").nth(1).unwrap();
        after.split(' ').next().unwrap().parse().unwrap()
    };
    let fp8 = stdout(&[
        "gpu-plan",
        "gpt-oss-20b",
        "--gpu-memory",
        "80GiB",
        "--max-seq-len",
        "32768",
        "--kv-dtype",
        "fp8",
    ]);
    assert!(tokens(&fp8) > tokens(&out), "{fp8}");
    // A pipeline layout: one row a rank, the binding one marked.
    let pp = stdout(&[
        "gpu-plan",
        "llama-3.1-70b",
        "--gpu-memory",
        "80GiB",
        "--pp",
        "2",
        "--max-seq-len",
        "8192",
    ]);
    assert!(pp.contains("| 1") && pp.contains("*"), "{pp}");
}

#[test]
fn gpu_flags_belong_to_gpu_plan_which_refuses_a_gpu_too_small() {
    let e = error(
        &[
            "fit",
            "llama-3.1-8b",
            "--budget",
            "4GiB",
            "--reserve",
            "1GiB",
        ],
        &[],
    );
    // The whole-GPU flags are gpu-plan's: fit does not take them.
    assert!(e.contains("--reserve"), "{e}");
    let e = error(&["fit", "llama-3.1-8b"], &[]);
    assert!(e.contains("--budget"), "{e}");
    let e = error(&["gpu-plan", "llama-3.1-8b"], &[]);
    assert!(e.contains("--gpu-memory"), "{e}");
    let e = error(
        &[
            "gpu-plan",
            "llama-3.1-8b",
            "--gpu-memory",
            "141GiB",
            "--rank",
            "0",
        ],
        &[],
    );
    assert!(
        e.contains("--rank: a whole-GPU plan covers every rank"),
        "{e}"
    );
    let e = error(&["gpu-plan", "llama-3.1-70b", "--gpu-memory", "80GiB"], &[]);
    assert!(e.contains("already exceed the GPU"), "{e}");
    // A recipe without a formula is refused naming the override.
    let dir = std::env::temp_dir().join(format!("arena-bnb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut file: serde_json::Value =
        serde_json::from_str(arena_spec::models::find("qwen3-0.6b").unwrap().json).unwrap();
    file["quantization_config"] = serde_json::json!({"quant_method": "bitsandbytes"});
    std::fs::write(dir.join("config.json"), file.to_string()).unwrap();
    let e = error(
        &["gpu-plan", dir.to_str().unwrap(), "--gpu-memory", "141GiB"],
        &[],
    );
    assert!(
        e.contains("bitsandbytes") && e.contains("--weights-bytes"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let ok = stdout(&[
        "gpu-plan",
        "deepseek-v4-flash",
        "--gpu-memory",
        "141GiB",
        "--weights-bytes",
        "98GB",
    ]);
    assert!(ok.contains("fits:"), "{ok}");
    // Without a CUDA build, --device says how to get one.
    if !cfg!(feature = "cuda") {
        let e = error(&["gpu-plan", "llama-3.1-8b", "--device", "cuda:0"], &[]);
        assert!(
            e.contains("--features cuda") || e.contains("--gpu-memory"),
            "{e}"
        );
    }
}

/// `--graphs` with `--graph-nodes`: one graph a batch size, kept beside the reserve; sizes the
/// step cannot hold, or given twice, are refused by name, and neither flag goes without the
/// other.
#[test]
fn graphs_are_kept_beside_the_reserve_and_bad_sizes_refused() {
    let base = ["gpu-plan", "qwen3-0.6b", "--gpu-memory", "80GiB", "--json"];
    let eager = json(&base);
    let mut args = base.to_vec();
    args.extend(["--graphs", "1,2,4,8", "--graph-nodes", "536"]);
    let graphs = json(&args);
    let r = &graphs["ranks"][0];
    // 4 × 536 × 3,200 B = 6.5 MiB: 4 pages.
    assert_eq!(u(&r["graph_bytes"]), 8 << 20);
    assert_eq!(
        u(&r["reserve_bytes"]),
        u(&eager["ranks"][0]["reserve_bytes"]) + (8 << 20)
    );
    assert_eq!(graphs["inputs"]["graphs"], 4);
    assert_eq!(graphs["inputs"]["graph_nodes"], 536);
    let plan = ["gpu-plan", "qwen3-0.6b", "--gpu-memory", "80GiB"];
    for (more, says) in [
        (
            &["--graphs", "1,512", "--graph-nodes", "9"][..],
            "a graph of 512 sequences; the step holds 1 to 128",
        ),
        (
            &["--graphs", "0", "--graph-nodes", "9"],
            "a graph of 0 sequences",
        ),
        (
            &["--graphs", "2,2", "--graph-nodes", "9"],
            "2 is given twice",
        ),
        (&["--graphs", "2"], "--graph-nodes"),
        (&["--graph-nodes", "9"], "--graphs"),
    ] {
        let args: Vec<&str> = plan.iter().chain(more).copied().collect();
        let err = error(&args, &[]);
        assert!(err.contains(says), "{more:?}: {err}");
    }
}
