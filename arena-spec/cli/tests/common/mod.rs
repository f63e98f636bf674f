//! What the CLI tests share: the binary with a clean environment, its output, its JSON
//! documents, and a README sample held to the output.

#![allow(dead_code)] // each test binary uses its own part of these

use assert_cmd::Command;

pub fn arena() -> Command {
    let mut c = Command::cargo_bin("arena").unwrap();
    for (_, var) in arena_spec::Levers::NAMES {
        c.env_remove(var);
    }
    c.env("NO_COLOR", "1");
    c
}

pub fn stdout(args: &[&str]) -> String {
    let out = arena().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a failing command; returns its one stderr line.
pub fn error(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut c = arena();
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(!out.status.success(), "{args:?} succeeded");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    stderr
}

/// One `--json` document of the binary, checked to carry the current schema version.
pub fn json(args: &[&str]) -> serde_json::Value {
    let doc: serde_json::Value = serde_json::from_str(&stdout(args)).unwrap();
    assert_eq!(
        doc["schema_version"],
        arena_spec::report::SCHEMA_VERSION,
        "{args:?}"
    );
    doc
}

/// A whole number of a JSON document.
pub fn u(v: &serde_json::Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{v} is not a whole number"))
}

/// A page of the workspace's documentation (`README.md`, `docs/cli.md`), read at run time. A
/// packaged arena-spec has none: its tests that read one fail there rather than pass having
/// compared nothing, and `.ci/package` skips them by name (`--skip the_readme_`), saying so.
pub fn workspace_doc(page: &str) -> String {
    let path = format!("{}/../../{page}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("{path}: {e}; the documentation's samples are checked from the repository only")
    })
}

/// Every line of a README sample but its `...` elisions appears in `out`, in order.
pub fn assert_sample_lines_in_order<'a>(sample: impl Iterator<Item = &'a str>, out: &str) {
    let mut rest = out;
    for line in sample.filter(|l| *l != "...") {
        let at = rest.find(line).unwrap_or_else(|| {
            panic!("README sample line not in the output (in order): {line:?}\n{out}")
        });
        rest = &rest[at + line.len()..];
    }
}
