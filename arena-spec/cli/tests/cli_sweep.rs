//! `arena sweep` and `arena diff`: the table and the plot a sweep draws, and what a diff and
//! the reuse slab report.

mod common;

use common::stdout;

/// The `<text>` elements of an SVG as (x, text), in order.
fn svg_texts(svg: &str) -> Vec<(f64, String)> {
    svg.split("<text ")
        .skip(1)
        .map(|t| {
            let x = t.split("x=\"").nth(1).unwrap().split('"').next().unwrap();
            let body = t.split('>').nth(1).unwrap().split("</text").next().unwrap();
            (x.parse().unwrap(), body.trim().to_string())
        })
        .collect()
}

#[test]
fn sweep_prints_a_row_per_m_and_draws_svg() {
    let svg = std::env::temp_dir().join(format!("arena-sweep-{}.svg", std::process::id()));
    let out = stdout(&[
        "sweep",
        "nemotron-3-nano-30b-a3b",
        "--max-batch-tokens",
        "256..4096",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    for m in ["256", "512", "1024", "2048", "4096"] {
        assert!(
            out.lines().any(|l| l.trim_start().starts_with(m)),
            "no row for {m}: {out}"
        );
    }
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<svg") && text.contains("total_bytes"));
    std::fs::remove_file(svg).unwrap();
}

/// The plot an operator puts in a design doc: a log2 axis (the doubling values equally
/// spaced), byte ticks in one binary unit, a marker at every point of each line, the reuse
/// slab beside total_bytes with `--reuse`, the budget line, a title naming layout and
/// levers, the legend outside the plot; and a one-point sweep still draws its point.
#[test]
fn the_sweep_plot_has_a_log_axis_markers_the_reuse_slab_and_the_budget() {
    let dir = std::env::temp_dir().join(format!("arena-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("sweep.svg");
    stdout(&[
        "sweep",
        "qwen3-next-80b-a3b",
        "--max-batch-tokens",
        "256..65536",
        "--reuse",
        "--budget",
        "6GiB",
        "--lever",
        "fp32_gate=1",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&svg).unwrap();
    let texts = svg_texts(&text);
    let has = |s: &str| texts.iter().any(|(_, t)| t == s);
    assert!(
        has("qwen3-next-80b-a3b — tp=1 ep=1 pp=1 — levers: fp32_gate — reuse slab"),
        "{texts:?}"
    );
    for label in [
        "total_bytes",
        "reuse slab",
        "budget 6.00 GiB",
        "the rest",
        "18 GiB",
    ] {
        assert!(has(label), "no `{label}` in {texts:?}");
    }
    let x_of = |label: &str| texts.iter().find(|(_, t)| t == label).unwrap().0;
    let ticks: Vec<f64> = [
        "256", "512", "1024", "2048", "4096", "8192", "16384", "32768", "65536",
    ]
    .iter()
    .map(|l| x_of(l))
    .collect();
    let steps: Vec<f64> = ticks.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        steps.iter().all(|s| (s - steps[0]).abs() <= 1.5),
        "doubling values equally spaced on a log2 axis: {ticks:?}"
    );
    // Markers: one per point on total_bytes and on the reuse slab.
    assert_eq!(text.matches("<circle").count(), 2 * 9);
    // The legend is right of every tick of the plot.
    assert!(x_of("total_bytes") > ticks[8]);

    stdout(&[
        "sweep",
        "qwen3-0.6b",
        "--max-batch-tokens",
        "512..512",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    let one = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(
        one.matches("<circle").count(),
        1,
        "a one-point sweep draws its point"
    );
    assert!(one.matches("<polygon").count() >= 2, "and its stacked bar");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Sweeps writing one SVG path at once each write a whole plot under a temporary name and
/// rename it over the path, so the file is always one whole plot and no temporary is left.
#[test]
fn concurrent_sweeps_to_one_svg_leave_one_whole_plot() {
    let dir = std::env::temp_dir().join(format!("arena-sweeps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("plot.svg");
    for _ in 0..3 {
        let children: Vec<_> = ["qwen3-0.6b", "llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v3"]
            .iter()
            .map(|model| {
                let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("arena"));
                for (_, var) in arena_spec::Levers::NAMES {
                    c.env_remove(var);
                }
                c.args(["sweep", model, "--max-batch-tokens", "256..65536", "--svg"])
                    .arg(&svg)
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(
            text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
            "{text}"
        );
        assert_eq!(
            text.matches("<svg").count(),
            1,
            "one plot, not two interleaved"
        );
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from("plot.svg")],
            "temporaries left: {left:?}"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn diff_two_models_and_two_lever_sets() {
    let out = stdout(&[
        "diff",
        "qwen3-0.6b",
        "qwen3-30b-a3b",
        "--max-batch-tokens",
        "256",
    ]);
    assert!(
        out.lines()
            .any(|l| l.starts_with("moe_fp8_scratch") && l.contains('+')),
        "{out}"
    );
    let out = stdout(&[
        "diff",
        "qwen3.5-27b",
        "--lever-b",
        "fp8_rowwise=1",
        "--max-batch-tokens",
        "256",
    ]);
    let row = out
        .lines()
        .find(|l| l.starts_with("ssm_rowwise_w_bf16"))
        .unwrap();
    assert!(row.contains("+10.31 GiB"), "{row}");
}

#[test]
fn plan_fit_sweep_and_diff_report_the_reuse_slab() {
    let doc: serde_json::Value = serde_json::from_str(&stdout(&[
        "plan",
        "qwen3-next-80b-a3b",
        "--json",
        "--reuse",
        "--max-batch-tokens",
        "1024",
    ]))
    .unwrap();
    assert_eq!(
        doc["phases"],
        serde_json::json!([
            "embed",
            "attention",
            "gdn",
            "mamba2",
            "short_conv",
            "lightning",
            "kda",
            "router",
            "ffn_gate_up",
            "ffn_down",
            "per_layer_input",
            "lm_head"
        ])
    );
    let reuse = doc["reuse_bytes"].as_u64().unwrap();
    let bound = doc["reuse_lower_bound"].as_u64().unwrap();
    let slab = doc["slab_bytes"].as_u64().unwrap();
    assert!(bound <= reuse && reuse < slab, "{bound} {reuse} {slab}");
    assert_eq!(
        doc["allocation"][0]["allocated_bytes"].as_u64(),
        Some(reuse)
    );
    assert_eq!(doc["allocation"][0]["reuse"], true);
    let phase_of = |name: &str| {
        doc["buffers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["name"] == name)
            .unwrap()["phase"]
            .clone()
    };
    assert_eq!(phase_of("qkv_output"), "attention");
    assert_eq!(phase_of("ssm_qkvz"), "gdn..=mamba2");
    assert_eq!(phase_of("hidden_states"), "whole step");

    let table = stdout(&["plan", "llama-3.1-8b", "--max-batch-tokens", "1024"]);
    assert!(table.contains("reuse       "), "{table}");
    let fit = stdout(&["fit", "qwen3-next-80b-a3b", "--budget", "2GiB", "--reuse"]);
    let whole = stdout(&["fit", "qwen3-next-80b-a3b", "--budget", "2GiB"]);
    let m = |out: &str| -> usize {
        let rest = out.split("max_batch_tokens = ").nth(1).unwrap();
        rest.split(' ').next().unwrap().parse().unwrap()
    };
    assert!(fit.contains("reuse slab"), "{fit}");
    assert!(
        m(&fit) > m(&whole),
        "reuse fits more tokens: {fit} / {whole}"
    );
    let sweep = stdout(&[
        "sweep",
        "qwen3-0.6b",
        "--max-batch-tokens",
        "256..512",
        "--reuse",
    ]);
    assert!(sweep.contains("reuse slab"), "{sweep}");
    let diff = stdout(&[
        "diff",
        "llama-3.1-8b",
        "qwen3-next-80b-a3b",
        "--max-batch-tokens",
        "1024",
    ]);
    assert!(diff.contains("reuse saves"), "{diff}");
}
