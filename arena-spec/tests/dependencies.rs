//! An engine that depends on `arena-spec` (or on `arena-config` alone) builds the library, not
//! the CLI: none of the CLI's dependencies (`arena-cli`'s) is in its tree.

#[test]
fn no_cli_dependency_is_in_the_librarys_tree() {
    for library in ["arena-spec", "arena-config"] {
        let tree = normal_dependencies(library);
        // (libc is the library's too, under memmap2, which maps checkpoints.)
        for cli_only in ["clap", "plotters", "indicatif", "assert_cmd", "arena-cli"] {
            assert!(
                !tree.iter().any(|c| c == cli_only),
                "{cli_only} in {library}'s tree: {tree:?}"
            );
        }
    }
    assert!(normal_dependencies("arena-spec")
        .iter()
        .any(|c| c == "arena-runtime"));
    // The configs hold no GPU code: no runtime, no cudarc.
    let config = normal_dependencies("arena-config");
    assert!(
        !config.iter().any(|c| c == "arena-runtime" || c == "cudarc"),
        "{config:?}"
    );
}

/// The crates `cargo tree` lists for `package`'s normal dependencies, all features off.
fn normal_dependencies(package: &str) -> Vec<String> {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            package,
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
    tree.lines()
        .filter_map(|l| l.split(' ').next())
        .map(str::to_string)
        .collect()
}
