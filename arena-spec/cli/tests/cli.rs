//! The `arena` binary on shipped models and on every error path.

mod common;

use common::{arena, error, stdout};

#[test]
fn plan_prints_every_buffer_and_the_totals() {
    for model in ["llama-3.1-8b", "qwen3-30b-a3b", "nemotron-3-nano-30b-a3b"] {
        let out = stdout(&["plan", model, "--max-batch-tokens", "1024"]);
        assert!(out.contains("max_batch_tokens=1024 max_seq_len="), "{out}");
        assert_eq!(
            out.lines()
                .filter(|l| l.starts_with("ssm_rowwise_w_bf16 "))
                .count(),
            1
        );
        assert!(out.contains("total_bytes"));
        assert!(out.contains("gated off (NULL)"));
        assert!(out.contains("no memory allocated"), "{out}");
        let host = stdout(&[
            "plan",
            model,
            "--max-batch-tokens",
            "1024",
            "--device",
            "host",
        ]);
        assert!(
            host.contains("on host in one slab") && host.contains("released"),
            "{host}"
        );
    }
}

/// Planning does not need the memory it plans: without `--device` every rank's placement is
/// checked on addresses alone, so the 64 ranks of a DeepSeek-V3 layout (2.7 GiB each) cost
/// no more memory than one small process (the binary's peak is in
/// `arena-spec/measurements/planning.md`); `--device host` is refused in one line, before
/// allocating, when the slab is more than the machine has available.
#[test]
fn plan_places_without_memory_and_refuses_a_host_slab_the_machine_cannot_hold() {
    let out = stdout(&["plan", "deepseek-v3", "--tp", "8", "--ep", "8", "--pp", "8"]);
    // Every rank in one table, a row per stage: ranks, stage, layers, experts per rank,
    // total_bytes, reuse slab, the slab placed.
    let row = |ranks: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{ranks} ")))
            .unwrap_or_else(|| panic!("no row for ranks {ranks}: {out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(row("0..=7"), "0..=7 0 0..7 32 2.70 GiB 2.11 GiB 2.70 GiB");
    assert_eq!(
        row("48..=55"),
        "48..=55 6 46..54 32 2.70 GiB 2.11 GiB 2.70 GiB"
    );
    assert_eq!(
        row("56..=63"),
        "56..=63 7 54..61 32 2.76 GiB 2.11 GiB 2.76 GiB"
    );
    assert!(
        out.contains("every rank's buffers (64 ranks) checked"),
        "{out}"
    );
    assert!(!out.contains("allocated   "), "{out}");
    let doc: serde_json::Value = serde_json::from_str(&stdout(&[
        "plan",
        "deepseek-v3",
        "--tp",
        "8",
        "--ep",
        "8",
        "--pp",
        "8",
        "--json",
    ]))
    .unwrap();
    let alloc = doc["allocation"].as_array().unwrap();
    assert_eq!(alloc.len(), 64, "every rank is placed");
    assert!(alloc
        .iter()
        .all(|a| a["device"] == "addresses only (no memory)"));
    let refused = arena()
        .args(["plan", "llama-3.1-8b", "--device", "host"])
        .env("ARENA_HOST_AVAILABLE", "1000000")
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let err = String::from_utf8(refused.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "refusing to allocate 1.31 GiB on the host: the machine has 976.56 KiB available"
        ),
        "{err}"
    );
}

#[test]
fn plan_json_is_one_document_with_stable_fields() {
    let out = stdout(&[
        "plan",
        "qwen3.5-27b",
        "--json",
        "--lever",
        "fp8_rowwise=1",
        "--max-batch-tokens",
        "512",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["model"], "qwen3.5-27b");
    assert_eq!(doc["inputs"]["max_batch_tokens"], 512);
    assert_eq!(doc["levers"]["fp8_rowwise"], true);
    let buffers = doc["buffers"].as_array().unwrap();
    assert_eq!(
        buffers.len(),
        <arena_spec::BufferArena as arena_runtime::Arena>::BUFFERS.len()
    );
    for b in buffers {
        for key in ["name", "dtype", "shape", "bytes", "gated", "tracked"] {
            assert!(b.get(key).is_some(), "{key} missing from {b}");
        }
    }
    let tracked: u64 = buffers
        .iter()
        .filter(|b| b["tracked"] == true)
        .map(|b| b["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(doc["total_bytes"].as_u64().unwrap(), tracked);
    let rowwise = buffers
        .iter()
        .find(|b| b["name"] == "ssm_rowwise_w_bf16")
        .unwrap();
    assert_eq!(rowwise["bytes"], 48 * (167772160u64 + 62914560));
}

#[test]
fn plan_reads_a_config_path() {
    // The shipped file written where a user keeps theirs.
    let dir = std::env::temp_dir().join(format!("arena-plan-path-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("qwen3-0.6b.json");
    let shipped = arena_spec::models::find("qwen3-0.6b").unwrap();
    std::fs::write(&path, shipped.json).unwrap();
    let out = stdout(&["plan", path.to_str().unwrap(), "--max-batch-tokens", "64"]);
    assert!(out.contains("qwen3-0.6b.json (qwen3)"), "{out}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn models_lists_the_shipped_configs() {
    let out = stdout(&["models"]);
    for m in arena_spec::models::SHIPPED {
        assert!(out.contains(m.name), "{} missing", m.name);
    }
}

#[test]
fn fit_finds_the_largest_m_under_the_budget() {
    let out = stdout(&["fit", "qwen3-30b-a3b", "--budget", "4GiB"]);
    let m: usize = out
        .split("max_batch_tokens = ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let config = arena_spec::models::find("qwen3-30b-a3b")
        .unwrap()
        .config()
        .unwrap();
    let total = |m| arena_spec::BufferSizes::from_config(&config, m, 40960, 16, 128).total_bytes();
    // Aligned to 16 tokens: the largest multiple of 16 that fits, with the exact slack.
    assert!(
        m.is_multiple_of(16) && total(m) <= 4 << 30 && total(m + 16) > 4 << 30,
        "M = {m}"
    );
    let slack = (4usize << 30) - total(m);
    assert!(
        out.contains(&format!("total_bytes {} B", total(m))),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "of the budget {} B (4.00 GiB), slack {slack} B",
            4usize << 30
        )),
        "{out}"
    );
    assert!(out.contains("(the input searched, "), "{out}");
    // The flag of the input searched is refused, not ignored.
    let e = error(
        &[
            "fit",
            "qwen3-30b-a3b",
            "--budget",
            "4GiB",
            "--max-batch-tokens",
            "4096",
        ],
        &[],
    );
    assert!(
        e.contains("fit searches max_batch_tokens, so --max-batch-tokens has no effect"),
        "{e}"
    );
    let e = error(
        &[
            "fit",
            "qwen3-30b-a3b",
            "--budget",
            "4GiB",
            "--vary",
            "batch",
            "--max-batch-size",
            "8",
        ],
        &[],
    );
    assert!(e.contains("--max-batch-size has no effect"), "{e}");
    let out = stdout(&[
        "fit",
        "llama-3.1-8b",
        "--budget",
        "3GiB",
        "--vary",
        "batch",
        "--max-batch-tokens",
        "1024",
    ]);
    assert!(out.contains("max_batch_size = "), "{out}");
}

#[test]
fn errors_are_one_clear_line() {
    let shipped = error(&["plan", "llama-9"], &[]);
    assert!(
        shipped.contains("unknown model `llama-9`") && shipped.contains("llama-3.1-8b"),
        "{shipped}"
    );
    assert!(
        error(&["plan", "llama-3.1-8b", "--max-batch-tokens", "0"], &[])
            .contains("--max-batch-tokens must be at least 1")
    );
    let overflow = error(
        &[
            "plan",
            "llama-3.1-8b",
            "--max-batch-tokens",
            "9223372036854775807",
        ],
        &[],
    );
    assert!(
        overflow.contains("sizing llama-3.1-8b: buffer `") && overflow.contains("overflows usize"),
        "{overflow}"
    );
    assert!(
        error(&["fit", "llama-3.1-8b", "--budget", "20 parsecs"], &[])
            .contains("unknown unit `parsecs`")
    );
    assert!(error(&["fit", "llama-3.1-8b", "--budget", "1KiB"], &[]).contains("nothing fits"));
    assert!(
        error(&["plan", "llama-3.1-8b", "--lever", "nope=1"], &[]).contains("unknown lever `nope`")
    );
    assert!(
        error(&["plan", "llama-3.1-8b", "--lever", "fp8_rowwise=yes"], &[])
            .contains("not a lever value")
    );
    let env = error(&["plan", "llama-3.1-8b"], &[("METRALE_FP8_ROWWISE", "2")]);
    assert!(env.contains("METRALE_FP8_ROWWISE=\"2\""), "{env}");
    assert!(error(&["plan", "llama-3.1-8b", "--device", "tpu"], &[]).contains("not a device"));
    assert!(error(
        &["sweep", "llama-3.1-8b", "--max-batch-tokens", "100..10"],
        &[]
    )
    .contains("range"));
    assert!(error(&["diff", "llama-3.1-8b"], &[]).contains("--lever-b"));
    if cfg!(not(feature = "cuda")) {
        assert!(
            error(&["plan", "llama-3.1-8b", "--device", "cuda:0"], &[]).contains("--features cuda")
        );
    }
}

#[test]
fn the_environment_sets_levers() {
    let out = arena()
        .args(["plan", "qwen3.5-27b", "--json", "--max-batch-tokens", "64"])
        .env("METRALE_GGUF_NATIVE_Q2", "1")
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["levers"]["gguf_native_q2"], true);
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::process::{Command as Std, Stdio};
    let mut child = Std::new(assert_cmd::cargo::cargo_bin("arena"))
        .args(["models"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end before the CLI gets to print: its first write meets a closed pipe.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Inputs a script or a typo produces: a device that never ends, a pipe nobody writes to, a
/// directory, a file far larger than any config. Each is one error line, read no further
/// than the bound (the command returns: a pipe would block a reader forever).
#[cfg(unix)]
/// As Python's `json` reads configs (and transformers through it): a number beyond a
/// double in a key the arena never reads loads (Python: infinity), and is refused only where
/// it is read; a byte-order mark, a symbolic-link loop and 2^64 are each named for what they
/// are.
#[test]
fn odd_values_and_files_are_named_for_what_they_are() {
    let dir = std::env::temp_dir().join(format!("arena-odd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = arena_spec::models::find("qwen3-0.6b").unwrap().json;
    let write = |name: &str, body: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        path.to_str().unwrap().to_string()
    };
    let unread = write(
        "unread.json",
        text.replacen('{', "{\n  \"a_key_nothing_reads\": 1e400,", 1)
            .as_bytes(),
    );
    let plan = stdout(&["plan", &unread, "--max-batch-tokens", "64"]);
    assert!(plan.contains("total_bytes"), "{plan}");
    let read = write(
        "read.json",
        text.replace("\"hidden_size\": 1024", "\"hidden_size\": 1e400")
            .as_bytes(),
    );
    let e = error(&["plan", &read], &[]);
    assert!(
        e.contains("field `hidden_size` is 1e400 (infinity, as Python reads it), but must be a finite whole number"),
        "{e}"
    );
    let bom = write(
        "bom.json",
        &[b"\xEF\xBB\xBF".as_slice(), text.as_bytes()].concat(),
    );
    let e = error(&["plan", &bom], &[]);
    assert!(e.contains("starts with a UTF-8 byte-order mark"), "{e}");
    let big = write(
        "big.json",
        text.replace(
            "\"hidden_size\": 1024",
            "\"hidden_size\": 18446744073709551616",
        )
        .as_bytes(),
    );
    let e = error(&["plan", &big], &[]);
    assert!(
        e.contains(
            "`hidden_size` is 1.8446744073709552e+19, larger than the largest supported value"
        ),
        "{e}"
    );
    #[cfg(unix)]
    {
        let (a, b) = (dir.join("loop-a.json"), dir.join("loop-b.json"));
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        let e = error(&["plan", a.to_str().unwrap()], &[]);
        assert!(
            e.contains("a symbolic link that does not resolve to a file"),
            "{e}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hostile_paths_are_refused_without_reading_them() {
    let dev_zero = error(&["plan", "/dev/zero"], &[]);
    assert!(
        dev_zero.contains("/dev/zero: is a character device, not a config file"),
        "{dev_zero}"
    );
    let dir = std::env::temp_dir().join(format!("arena-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("config.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let pipe = error(&["plan", fifo.to_str().unwrap()], &[]);
        assert!(
            pipe.contains("is a named pipe, not a config file"),
            "{pipe}"
        );
        std::fs::remove_file(&fifo).unwrap();
    }
    let as_dir = error(&["plan", dir.to_str().unwrap()], &[]);
    assert!(
        as_dir.contains("is a directory without a config.json, not a config file"),
        "{as_dir}"
    );
    // A sparse 64 MiB file: no disk used, and the loader must not read it.
    let big = dir.join("model-00001-of-00004.safetensors");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let shard = error(&["plan", big.to_str().unwrap()], &[]);
    assert!(shard.contains("larger than 16 MiB"), "{shard}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_overflowing_derived_value_is_named_as_one() {
    let msg = error(
        &[
            "plan",
            "qwen3-0.6b",
            "--max-batch-tokens",
            "18446744073709551615",
        ],
        &[],
    );
    assert!(
        msg.contains("derived value `m16` (read by `ffn_act_q8`"),
        "{msg}"
    );
    assert!(!msg.contains("buffer `m16`"), "{msg}");
}

#[test]
fn const_config_prints_a_const_the_compiler_sizes() {
    let out = stdout(&["const-config", "qwen3-0.6b"]);
    assert!(
        out.contains("pub const QWEN3_0_6B: ModelConfig = ModelConfig {"),
        "{out}"
    );
    assert!(out.contains("    hidden_size: 1024,"), "{out}");
    let config = arena_spec::models::find("qwen3-0.6b")
        .unwrap()
        .config_with_levers(Default::default())
        .unwrap();
    // The same text the shipped consts are made of.
    assert!(out.ends_with(&config.const_item("QWEN3_0_6B").unwrap()));
    // Every type the item names is in scope by the printed `use` lines.
    let uses: String = out.lines().filter(|l| l.starts_with("use ")).collect();
    for ty in [
        "Family",
        "KvLayer",
        "LayerKind",
        "Levers",
        "ModelConfig",
        "RecurrentStateDtype",
        "StateDtype",
        "StateDtypeSource",
        "Tower",
        "TowerKind",
        "Towers",
        "WeightFormat",
        "WeightFormats",
        "FormatSource",
        "Cow",
    ] {
        let named = out.contains(&format!("{ty}::")) || out.contains(&format!("{ty} {{"));
        assert!(
            !named || uses.contains(ty),
            "{ty} used but not imported: {uses}"
        );
    }
    let named = stdout(&["const-config", "qwen3-0.6b", "--name", "MINE"]);
    assert!(named.contains("pub const MINE: ModelConfig"), "{named}");
    // A name that would not compile is refused in one line, not printed.
    for bad in ["bad name", "3B", "fn", "_", "QWEN-3", ""] {
        let e = error(&["const-config", "qwen3-0.6b", "--name", bad], &[]);
        assert!(e.contains("is not a Rust identifier"), "{bad:?}: {e}");
    }
}

#[test]
fn help_goes_to_stdout_and_a_usage_error_is_one_line() {
    let help = arena().arg("--help").output().unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8(help.stdout)
        .unwrap()
        .contains("Usage: arena"));
    let missing = error(&["plan"], &[]);
    assert!(missing.contains("required"), "{missing}");
    assert!(!missing.contains("Usage:"), "{missing}");
}

/// The CLI page's `plan llama-3.1-8b` sample (`docs/cli.md`) is the binary's output: every
/// line of it but the `...` elisions appears in `arena plan llama-3.1-8b`, in the same order.
#[test]
fn the_readme_sample_is_what_plan_prints() {
    let readme = common::workspace_doc("docs/cli.md");
    let start = readme
        .find("Sample (`plan llama-3.1-8b`")
        .expect("the README has the sample");
    let block = &readme[start..];
    let open = block.find("```text\n").expect("the sample's code block") + 8;
    let close = open + block[open..].find("```").expect("its end");
    let out = stdout(&["plan", "llama-3.1-8b"]);
    common::assert_sample_lines_in_order(block[open..close].lines(), &out);
}
