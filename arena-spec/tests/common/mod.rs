//! What the CLI tests share: the binary with a clean environment, and its output.

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
