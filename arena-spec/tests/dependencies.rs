//! An engine that depends on `arena-spec` without default features builds the arena, not the
//! CLI: none of the CLI's dependencies is in its tree.

#[test]
fn without_default_features_no_cli_dependency_is_built() {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            "arena-spec",
            "--no-default-features",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).unwrap();
    let crates: Vec<&str> = tree.lines().filter_map(|l| l.split(' ').next()).collect();
    assert!(crates.contains(&"arena-runtime"), "{tree}");
    for cli_only in ["clap", "plotters", "libc", "assert_cmd"] {
        assert!(
            !crates.contains(&cli_only),
            "{cli_only} in the library's tree:\n{tree}"
        );
    }
}
