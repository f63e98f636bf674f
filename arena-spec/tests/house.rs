//! ARCHITECTURE.md's size rule, kept by a test rather than by hand: no hand-written Rust file
//! of the workspace over 600 lines. Generated files are excepted: `consts.rs` (written by
//! `arena-config`'s `consts` test) and the expansion snapshots (`*.expanded.rs`).

use std::path::{Path, PathBuf};

const LIMIT: usize = 600;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !(name == "target" || name.starts_with('.')) {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") && !name.ends_with(".expanded.rs") && name != "consts.rs" {
            out.push(path);
        }
    }
}

#[test]
fn no_hand_written_file_is_over_600_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    rust_files(root, &mut files);
    assert!(
        files.len() > 100,
        "the walk found {} files under {}",
        files.len(),
        root.display()
    );
    let mut over: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).unwrap().lines().count();
            (lines > LIMIT).then(|| {
                format!(
                    "{} ({lines} lines)",
                    f.strip_prefix(root).unwrap().display()
                )
            })
        })
        .collect();
    over.sort();
    assert!(
        over.is_empty(),
        "over {LIMIT} lines, split by what the parts do: {over:?}"
    );
}
