//! Unit tests of the expansion: golden snapshots of the arenas under the workspace's
//! `tests/expand/`, and the promise that the derive never panics on malformed input.
//!
//! Snapshots: each `tests/expand/NAME.rs` is expanded (every `#[derive(Arena)]` and
//! `#[derive(Regions)]` struct in it), formatted with prettyplease and compared with
//! `tests/expand/NAME.expanded.rs`. Set `ARENA_BLESS=1` to write the expected files anew.

use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::ToTokens;
use std::path::{Path, PathBuf};

fn expand_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/expand")
}

/// The derive's output for every derived struct of a source file, formatted.
fn expand_source(src: &str) -> String {
    let file = syn::parse_file(src).expect("snapshot input parses");
    let mut out = TokenStream::new();
    for item in file.items {
        let syn::Item::Struct(s) = item else { continue };
        let derives = |name: &str| {
            s.attrs.iter().any(|a| {
                a.path().is_ident("derive") && a.to_token_stream().to_string().contains(name)
            })
        };
        if derives("Arena") {
            out.extend(crate::expand::derive(s.to_token_stream()));
        }
        if derives("Regions") {
            out.extend(crate::expand_regions::derive(s.to_token_stream()));
        }
    }
    let file: syn::File = syn::parse2(out).expect("the expansion is valid Rust");
    prettyplease::unparse(&file)
}

/// Snapshot inputs: the test arenas of `tests/expand/`, and the engine's arena and region
/// layouts in `arena-spec` (expected files `tests/expand/spec_*.expanded.rs`).
fn snapshot_inputs() -> Vec<(PathBuf, PathBuf)> {
    let dir = expand_dir();
    let mut pairs: Vec<(PathBuf, PathBuf)> = std::fs::read_dir(&dir)
        .expect("tests/expand exists")
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "rs")
                && !p.to_string_lossy().ends_with(".expanded.rs")
        })
        .map(|p| (p.clone(), p.with_extension("expanded.rs")))
        .collect();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../arena-spec/src");
    let mut spec_files = vec![spec.join("arena.rs"), spec.join("decode_meta.rs")];
    let mut regions: Vec<PathBuf> = std::fs::read_dir(spec.join("regions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    regions.retain(|p| !p.ends_with("mod.rs"));
    spec_files.extend(regions);
    for f in spec_files {
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        pairs.push((f, dir.join(format!("spec_{stem}.expanded.rs"))));
    }
    pairs.sort();
    pairs
}

#[test]
fn expansion_snapshots() {
    let bless = std::env::var_os("ARENA_BLESS").is_some();
    let inputs = snapshot_inputs();
    assert!(inputs.len() > 2, "no snapshot inputs found");
    let mut stale = Vec::new();
    for (input, expected_path) in inputs {
        let actual = expand_source(&std::fs::read_to_string(&input).unwrap());
        if bless {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected != actual {
            stale.push(expected_path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "the expansion changed for {stale:?}; review the diff and re-bless with ARENA_BLESS=1 cargo test -p arena-macros"
    );
}

/// A small deterministic generator, so a failure reproduces from its seed.
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn junk(rng: &mut Rng) -> TokenTree {
    let s = Span::call_site();
    match rng.below(14) {
        0 => Punct::new('=', Spacing::Alone).into(),
        1 => Punct::new(',', Spacing::Alone).into(),
        2 => Punct::new('|', Spacing::Alone).into(),
        3 => Punct::new('?', Spacing::Alone).into(),
        4 => Ident::new("if", s).into(),
        5 => Ident::new("shape", s).into(),
        6 => Ident::new("bytes", s).into(),
        7 => Ident::new("gate", s).into(),
        8 => Ident::new("undeclared_name", s).into(),
        9 => Literal::usize_unsuffixed(0).into(),
        10 => Literal::string("str").into(),
        11 => Group::new(Delimiter::Brace, TokenStream::new()).into(),
        12 => Group::new(Delimiter::Bracket, TokenStream::new()).into(),
        _ => Group::new(Delimiter::Parenthesis, TokenStream::new()).into(),
    }
}

fn mutate(ts: TokenStream, rng: &mut Rng, rate: usize) -> TokenStream {
    let mut out = Vec::new();
    for tt in ts {
        let tt = match tt {
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), mutate(g.stream(), rng, rate));
                ng.set_span(g.span());
                TokenTree::Group(ng)
            }
            other => other,
        };
        if rng.below(rate) != 0 {
            out.push(tt);
            continue;
        }
        match rng.below(4) {
            0 => {}
            1 => {
                out.push(tt.clone());
                out.push(tt);
            }
            2 => out.push(junk(rng)),
            _ => {
                out.push(junk(rng));
                out.push(tt);
            }
        }
    }
    out.into_iter().collect()
}

#[test]
fn derive_never_panics_on_malformed_input() {
    let sources: Vec<String> = std::fs::read_dir(expand_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.to_string_lossy().ends_with(".rs") && !p.to_string_lossy().ends_with(".expanded.rs")
        })
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let structs: Vec<(bool, TokenStream)> = sources
        .iter()
        .flat_map(|src| syn::parse_file(src).unwrap().items)
        .filter_map(|item| match item {
            syn::Item::Struct(s) => {
                let text = s.to_token_stream().to_string();
                let is_arena = text.contains("derive (Arena)");
                (is_arena || text.contains("derive (Regions)"))
                    .then(|| (is_arena, s.to_token_stream()))
            }
            _ => None,
        })
        .collect();
    assert!(!structs.is_empty());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut errors = 0;
    let cases = 3000;
    for case in 0..cases {
        let (is_arena, original) = &structs[case % structs.len()];
        let mutated = mutate(original.clone(), &mut rng, 2 + case % 30);
        let text = mutated.to_string();
        let result = std::panic::catch_unwind(|| {
            if *is_arena {
                crate::expand::derive(mutated)
            } else {
                crate::expand_regions::derive(mutated)
            }
        });
        let out = result.unwrap_or_else(|_| panic!("the derive panicked on case {case}: {text}"));
        if out.to_string().contains("compile_error") {
            errors += 1;
        } else {
            // No error: the output must at least be valid Rust items.
            syn::parse2::<syn::File>(out)
                .unwrap_or_else(|e| panic!("case {case} gave invalid Rust ({e}): {text}"));
        }
    }
    // Most mutations break the declaration; each must come back as compile_error!.
    assert!(
        errors > cases / 2,
        "only {errors} of {cases} mutations were reported as errors"
    );
}
