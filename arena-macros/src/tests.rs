//! Unit tests of the expansion: golden snapshots of the arenas under the workspace's
//! `tests/expand/`, and the promise that the derive never panics on malformed input.
//!
//! Snapshots: each input (`tests/expand/NAME.rs`, or a declaration of the engine arena) is
//! expanded (every `#[derive(Arena)]` and `#[derive(Regions)]` struct in it), formatted with
//! prettyplease and compared with its `.expanded.rs`, one test per input, failing with a
//! unified diff. Set `ARENA_BLESS=1` to write the expected files anew.

use arena_macros_core::rng::Rng;
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
            out.extend(crate::arena(s.to_token_stream()));
        }
        if derives("Regions") {
            out.extend(crate::regions(s.to_token_stream()));
        }
    }
    let file: syn::File = syn::parse2(out).expect("the expansion is valid Rust");
    prettyplease::unparse(&file)
}

/// Compares one input's expansion with its snapshot, failing with a unified diff; with
/// `ARENA_BLESS=1` writes the snapshot instead.
fn check_snapshot(input: &Path, expected_path: &Path) {
    let actual = expand_source(&std::fs::read_to_string(input).unwrap());
    if std::env::var_os("ARENA_BLESS").is_some() {
        std::fs::write(expected_path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(expected_path).unwrap_or_default();
    if expected != actual {
        let diff = similar::TextDiff::from_lines(&expected, &actual)
            .unified_diff()
            .context_radius(3)
            .header(&expected_path.display().to_string(), "the expansion now")
            .to_string();
        panic!(
            "the expansion of {} changed; review the diff and re-bless with \
             ARENA_BLESS=1 cargo test -p arena-macros:\n{diff}",
            input.display()
        );
    }
}

/// One test per snapshot input: a test arena of `tests/expand/`, or a declaration of the
/// engine's arena in `arena-spec` (the single source of its fields, read where it lives;
/// its snapshot is `tests/expand/spec_<file>.expanded.rs`).
macro_rules! snapshots {
    ($($test:ident: $input:literal => $expected:literal;)*) => {
        $(
            #[test]
            fn $test() {
                let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
                check_snapshot(&root.join($input), &root.join($expected));
            }
        )*

        /// Every input file has its test above, so a new one cannot go unchecked.
        #[test]
        fn every_snapshot_input_has_a_test() {
            let listed: Vec<&str> = vec![$($input),*];
            let mut inputs: Vec<String> = std::fs::read_dir(expand_dir())
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "rs") && !p.to_string_lossy().ends_with(".expanded.rs"))
                .map(|p| format!("tests/expand/{}", p.file_name().unwrap().to_string_lossy()))
                .collect();
            let regions = Path::new(env!("CARGO_MANIFEST_DIR")).join("../arena-spec/src/arena/regions");
            inputs.extend(
                std::fs::read_dir(regions)
                    .unwrap()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .filter(|n| n != "mod.rs")
                    .map(|n| format!("arena-spec/src/arena/regions/{n}")),
            );
            for input in inputs {
                assert!(listed.contains(&input.as_str()), "{input} has no snapshot test");
            }
        }
    };
}

snapshots! {
    snapshot_example: "tests/expand/example.rs" => "tests/expand/example.expanded.rs";
    snapshot_phased: "tests/expand/phased.rs" => "tests/expand/phased.expanded.rs";
    snapshot_scratch: "tests/expand/scratch.rs" => "tests/expand/scratch.expanded.rs";
    snapshot_spec_arena: "arena-spec/src/arena/mod.rs" => "tests/expand/spec_arena.expanded.rs";
    snapshot_spec_decode_meta: "arena-spec/src/arena/regions/decode_meta.rs" => "tests/expand/spec_decode_meta.expanded.rs";
    snapshot_spec_gdn_fla: "arena-spec/src/arena/regions/gdn_fla.rs" => "tests/expand/spec_gdn_fla.expanded.rs";
    snapshot_spec_moe_fp8: "arena-spec/src/arena/regions/moe_fp8.rs" => "tests/expand/spec_moe_fp8.expanded.rs";
    snapshot_spec_qsa_select: "arena-spec/src/arena/regions/qsa_select.rs" => "tests/expand/spec_qsa_select.expanded.rs";
    snapshot_spec_scratch: "arena-spec/src/arena/regions/scratch.rs" => "tests/expand/spec_scratch.expanded.rs";
    snapshot_spec_ssd: "arena-spec/src/arena/regions/ssd.rs" => "tests/expand/spec_ssd.expanded.rs";
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
                crate::arena(mutated)
            } else {
                crate::regions(mutated)
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

/// The error messages of a declaration, in order (empty when it expands).
fn errors_of(declaration: TokenStream) -> Vec<String> {
    let out = crate::arena(declaration).to_string();
    out.split("compile_error !")
        .skip(1)
        .map(|e| e.split('"').nth(1).unwrap_or_default().to_string())
        .collect()
}

#[test]
fn container_entries_take_only_their_documented_forms() {
    let arena = |container: TokenStream| {
        quote::quote! {
            #[derive(Arena)]
            #[arena(inputs(m: usize), #container)]
            pub struct A {
                #[buffer(shape = [m])]
                pub x: DevicePtr<u8>,
            }
        }
    };
    assert!(errors_of(arena(quote::quote!(inputs_struct(N, derive(Clone))))).is_empty());
    assert!(errors_of(arena(quote::quote!(docs(sizes = "s")))).is_empty());
    for (bad, says) in [
        (
            quote::quote!(inputs_struct(N, derive[Clone])),
            "expected `inputs_struct(Name)",
        ),
        (
            quote::quote!(inputs_struct(N, serde(Clone))),
            "expected `inputs_struct(Name)",
        ),
        (
            quote::quote!(inputs_struct(N, derive(Clone) x)),
            "expected `inputs_struct(Name)",
        ),
        (quote::quote!(inputs_struct(3)), "expected a struct name"),
        (quote::quote!(docs(sizes = 3)), "expected a string literal"),
        (
            quote::quote!(docs(sizes = "a", sizes = "b")),
            "`sizes` is documented twice",
        ),
        (
            quote::quote!(docs(totl_bytes = "a")),
            "did you mean `total_bytes`?",
        ),
        (
            quote::quote!(docs(other = "a")),
            "the entries are `sizes`, `from_config` and `total_bytes`",
        ),
    ] {
        let errors = errors_of(arena(bad.clone()));
        assert_eq!(errors.len(), 1, "{bad}: {errors:?}");
        assert!(errors[0].contains(says), "{bad}: {errors:?}");
    }
}

#[test]
fn a_region_alignment_must_be_a_power_of_two() {
    let layout = |align: TokenStream| {
        quote::quote! {
            #[derive(Regions)]
            #[regions(inputs(m: usize), align = #align)]
            pub struct R {
                #[region(shape = [m])]
                pub x: DevicePtr<u8>,
            }
        }
    };
    let out = crate::regions(layout(quote::quote!(64))).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(
        out.contains("RegionCursor :: new (\"R\" , 64usize)"),
        "{out}"
    );
    for bad in [quote::quote!(100), quote::quote!(0)] {
        let out = crate::regions(layout(bad.clone())).to_string();
        assert!(
            out.contains("`align` must be a power of two"),
            "{bad}: {out}"
        );
    }
}

#[test]
fn malformed_attribute_syntax_is_one_error_saying_what_was_expected() {
    let arena = |container: TokenStream, buffer: TokenStream| {
        quote::quote! {
            #[derive(Arena)]
            #[arena(#container)]
            pub struct A {
                #[buffer(#buffer)]
                pub x: DevicePtr<u8>,
            }
        }
    };
    let ok_container = quote::quote!(inputs(m: usize), derived(k = m + 1));
    let ok_buffer = quote::quote!(shape = [m, k]);
    assert!(errors_of(arena(ok_container.clone(), ok_buffer.clone())).is_empty());
    for (container, buffer, says) in [
        // `=` must be a lone `=`: `==` is a comparison, not an assignment.
        (
            ok_container.clone(),
            quote::quote!(shape == [m]),
            "expected `shape = ...` after `shape`",
        ),
        (
            ok_container.clone(),
            quote::quote!(shape[m]),
            "expected `shape = ...` after `shape`",
        ),
        // A list is one parenthesised group, nothing after it.
        (
            quote::quote!(inputs[m: usize]),
            ok_buffer.clone(),
            "expected `inputs = ...` after `inputs`",
        ),
        (
            quote::quote!(inputs(m: usize) (n: usize)),
            ok_buffer.clone(),
            "expected `inputs = ...` after `inputs`",
        ),
        (
            quote::quote!(inputs(m: usize), 3),
            ok_buffer.clone(),
            "expected a key of `#[arena(...)]`: sizes, inputs, derived, docs, inputs_struct",
        ),
        // A named entry is `name = formula`, with a formula.
        (
            quote::quote!(inputs(m: usize), derived(k == m)),
            ok_buffer.clone(),
            "each derived value is `name = formula`",
        ),
        (
            quote::quote!(inputs(m: usize), derived(k =)),
            ok_buffer.clone(),
            "each derived value is `name = formula`",
        ),
        // A shape is bracketed.
        (
            ok_container.clone(),
            quote::quote!(shape = (m)),
            "`shape = [d0, d1, ...]`",
        ),
    ] {
        let errors = errors_of(arena(container.clone(), buffer.clone()));
        assert!(
            errors.iter().any(|e| e.contains(says)),
            "#[arena({container})] #[buffer({buffer})]: {errors:?} does not say `{says}`"
        );
    }
}

#[test]
fn the_inputs_struct_is_copy_only_when_every_input_is_a_plain_number() {
    let expand = |inputs: TokenStream| {
        crate::arena(quote::quote! {
            #[derive(Arena)]
            #[arena(inputs(#inputs))]
            pub struct A {
                #[buffer(shape = [m])]
                pub x: DevicePtr<u8>,
            }
        })
        .to_string()
    };
    let derives_of_inputs = |out: &str| {
        let at = out.find("pub struct AInputs").expect("the inputs struct");
        let derive = out[..at].rfind("# [derive").unwrap();
        out[derive..at].to_string()
    };
    let scalar = expand(quote::quote!(m: usize, on: bool));
    assert!(
        derives_of_inputs(&scalar).contains(":: core :: marker :: Copy"),
        "{scalar}"
    );
    let owned = expand(quote::quote!(m: usize, label: String));
    let derives = derives_of_inputs(&owned);
    assert!(
        !derives.contains("Copy") && !derives.contains("Hash"),
        "{derives}"
    );
    assert!(
        derives.contains("Clone") && derives.contains("PartialEq"),
        "{derives}"
    );
    // Only references: no inputs struct at all.
    let none = crate::arena(quote::quote! {
        #[derive(Arena)]
        #[arena(inputs(c: &C))]
        pub struct A {
            #[buffer(shape = [c.m])]
            pub x: DevicePtr<u8>,
        }
    })
    .to_string();
    assert!(
        !none.contains("AInputs") && !none.contains("from_inputs"),
        "{none}"
    );
}
