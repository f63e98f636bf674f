//! Expansion snapshots: every arena and region layout the workspace declares, expanded by the
//! derive (called as a function through `arena-macros-impl`), formatted with prettyplease and
//! compared with its `.expanded.rs` under `tests/expand/`, one test per input, failing with a
//! unified diff. `ARENA_BLESS=1 cargo test -p arena-tests --test snapshot` writes them anew.
//!
//! The inputs are one list, [`INPUTS`]: the test arenas of `tests/expand/` and the engine
//! arena's declarations where they live in `arena-spec/src`; a test fails when a file under
//! either declares a derive and is not listed, so a moved or new declaration cannot go
//! unchecked.

#[path = "snapshot/hand.rs"]
mod hand;

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::path::{Path, PathBuf};

/// Each input (from the workspace root) and its snapshot.
const INPUTS: &[(&str, &str)] = &[
    (
        "tests/expand/example.rs",
        "tests/expand/example.expanded.rs",
    ),
    ("tests/expand/phased.rs", "tests/expand/phased.expanded.rs"),
    (
        "tests/expand/scratch.rs",
        "tests/expand/scratch.expanded.rs",
    ),
    (
        "tests/expand/per_layer.rs",
        "tests/expand/per_layer.expanded.rs",
    ),
    (
        "arena-spec/src/arena/mod.rs",
        "tests/expand/spec_arena.expanded.rs",
    ),
    (
        "arena-spec/src/state/mod.rs",
        "tests/expand/spec_state_cache.expanded.rs",
    ),
    (
        "arena-spec/src/kv/mod.rs",
        "tests/expand/spec_kv_pool.expanded.rs",
    ),
    (
        "arena-spec/src/arena/regions/decode_meta.rs",
        "tests/expand/spec_decode_meta.expanded.rs",
    ),
    (
        "arena-spec/src/arena/regions/kda_chunk.rs",
        "tests/expand/spec_kda_chunk.expanded.rs",
    ),
    (
        "arena-spec/src/arena/regions/gdn_fla.rs",
        "tests/expand/spec_gdn_fla.expanded.rs",
    ),
    (
        "arena-spec/src/arena/regions/moe_fp8.rs",
        "tests/expand/spec_moe_fp8.expanded.rs",
    ),
    (
        "arena-spec/src/arena/regions/qsa_select.rs",
        "tests/expand/spec_qsa_select.expanded.rs",
    ),
    (
        "arena-spec/src/arena/regions/scratch.rs",
        "tests/expand/spec_scratch.expanded.rs",
    ),
    (
        "arena-spec/src/arena/regions/ssd.rs",
        "tests/expand/spec_ssd.expanded.rs",
    ),
    (
        "arena-spec/src/weights/model.rs",
        "tests/expand/spec_weights_model.expanded.rs",
    ),
    (
        "arena-spec/src/weights/attention.rs",
        "tests/expand/spec_weights_attention.expanded.rs",
    ),
    (
        "arena-spec/src/weights/latent.rs",
        "tests/expand/spec_weights_latent.expanded.rs",
    ),
    (
        "arena-spec/src/weights/compressed.rs",
        "tests/expand/spec_weights_compressed.expanded.rs",
    ),
    (
        "arena-spec/src/weights/mixers.rs",
        "tests/expand/spec_weights_mixers.expanded.rs",
    ),
    (
        "arena-spec/src/weights/ffn.rs",
        "tests/expand/spec_weights_ffn.expanded.rs",
    ),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("derive") && a.to_token_stream().to_string().contains(name))
}

/// The derive's output for every derived struct of a source file, formatted.
fn expand_source(src: &str) -> String {
    let file = syn::parse_file(src).expect("snapshot input parses");
    let mut out = TokenStream::new();
    for item in file.items {
        let syn::Item::Struct(s) = item else { continue };
        if derives(&s.attrs, "Arena") {
            out.extend(arena_macros_impl::derive_arena(s.to_token_stream()));
        }
        if derives(&s.attrs, "Regions") {
            out.extend(arena_macros_impl::derive_regions(s.to_token_stream()));
        }
    }
    let file: syn::File = syn::parse2(out).expect("the expansion is valid Rust");
    prettyplease::unparse(&file)
}

/// Compares one input's expansion with its snapshot, failing with a unified diff; with
/// `ARENA_BLESS=1` writes the snapshot instead.
fn check_snapshot(input: &str, expected: &str) {
    let (input, expected_path) = (root().join(input), root().join(expected));
    let actual = expand_source(&std::fs::read_to_string(&input).unwrap());
    if std::env::var_os("ARENA_BLESS").is_some() {
        std::fs::write(&expected_path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    if expected != actual {
        let diff = similar::TextDiff::from_lines(&expected, &actual)
            .unified_diff()
            .context_radius(3)
            .header(&expected_path.display().to_string(), "the expansion now")
            .to_string();
        panic!(
            "the expansion of {} changed; review the diff and re-bless with \
             ARENA_BLESS=1 cargo test -p arena-tests --test snapshot:\n{diff}",
            input.display()
        );
    }
}

macro_rules! snapshot_tests {
    ($($test:ident: $index:literal,)*) => {
        $(
            #[test]
            fn $test() {
                let (input, expected) = INPUTS[$index];
                check_snapshot(input, expected);
            }
        )*

        #[test]
        fn each_input_has_its_test() {
            let indices: Vec<usize> = vec![$($index),*];
            assert_eq!(indices, (0..INPUTS.len()).collect::<Vec<_>>());
        }
    };
}

snapshot_tests! {
    snapshot_example: 0,
    snapshot_phased: 1,
    snapshot_scratch: 2,
    snapshot_per_layer: 3,
    snapshot_spec_arena: 4,
    snapshot_spec_state_cache: 5,
    snapshot_spec_kv_pool: 6,
    snapshot_spec_decode_meta: 7,
    snapshot_spec_kda_chunk: 8,
    snapshot_spec_gdn_fla: 9,
    snapshot_spec_moe_fp8: 10,
    snapshot_spec_qsa_select: 11,
    snapshot_spec_scratch: 12,
    snapshot_spec_ssd: 13,
    snapshot_spec_weights_model: 14,
    snapshot_spec_weights_attention: 15,
    snapshot_spec_weights_latent: 16,
    snapshot_spec_weights_compressed: 17,
    snapshot_spec_weights_mixers: 18,
    snapshot_spec_weights_ffn: 19,
}

/// Every `.rs` file under `dir`, recursively, as a path from the workspace root.
fn rust_files(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root()).expect("under the workspace root");
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// Every file of `tests/expand/` and `arena-spec/src` that declares a derived arena or
/// region layout is in [`INPUTS`].
#[test]
fn every_declaration_is_a_snapshot_input() {
    let mut files = Vec::new();
    rust_files(&root().join("tests/expand"), &mut files);
    rust_files(&root().join("arena-spec/src"), &mut files);
    let mut declaring = 0;
    for file in files {
        if file.ends_with(".expanded.rs") {
            continue;
        }
        let src = std::fs::read_to_string(root().join(&file)).unwrap();
        let Ok(parsed) = syn::parse_file(&src) else {
            continue;
        };
        let declares = parsed.items.iter().any(|item| {
            matches!(item, syn::Item::Struct(s) if derives(&s.attrs, "Arena") || derives(&s.attrs, "Regions"))
        });
        if declares {
            declaring += 1;
            assert!(
                INPUTS.iter().any(|(input, _)| *input == file),
                "{file} declares a derived arena or region layout but has no snapshot"
            );
        }
    }
    assert_eq!(
        declaring,
        INPUTS.len(),
        "an input of INPUTS declares nothing"
    );
}
