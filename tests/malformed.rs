//! The derive never panics: 3000 mutations of the declarations under `tests/expand/` (tokens
//! dropped, duplicated, replaced by junk), each expanded by the derive as a function; every
//! one must come back as `compile_error!` or as valid Rust, and most as errors.

use arena_macros_core::rng::Rng;
use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::ToTokens;
use std::path::Path;

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
    let sources: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("expand"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.to_string_lossy().ends_with(".rs")
                    && !p.to_string_lossy().ends_with(".expanded.rs")
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
                arena_macros_impl::derive_arena(mutated)
            } else {
                arena_macros_impl::derive_regions(mutated)
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
