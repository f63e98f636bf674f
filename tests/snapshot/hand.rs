//! The derive's expansion spelled out as source: for the compile-time benchmark, which builds
//! `arena-spec` once with the derive and once with this hand-written-looking equivalent.
//!
//! `ARENA_HAND_OUT=DIR cargo test -p arena-tests --test snapshot write_hand_expanded -- --ignored` writes each
//! `arena-spec/src` file that uses a derive or `size!` to `DIR/<same path>`, with the derive
//! attributes removed, the generated items appended and every `size!` call expanded.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::path::Path;
use syn::visit_mut::VisitMut;

const DERIVES: [&str; 2] = ["Arena", "Regions"];
const HELPER_ATTRS: [&str; 4] = ["arena", "buffer", "regions", "region"];

struct ExpandSize;

impl VisitMut for ExpandSize {
    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        if let syn::Expr::Macro(m) = e {
            if m.mac
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "size")
            {
                *e = syn::parse2(arena_macros_impl::size(m.mac.tokens.clone()))
                    .expect("size! expands to an expression");
                return;
            }
            // Another macro whose argument is one expression (`const_try!(size!(...))`):
            // expand inside it.
            if let Ok(mut inner) = syn::parse2::<syn::Expr>(m.mac.tokens.clone()) {
                self.visit_expr_mut(&mut inner);
                m.mac.tokens = inner.into_token_stream();
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

/// Drops the derive macros and `size` from `use` trees; returns false for an empty tree.
/// `Arena` also names the runtime's handle type: it stays when `keep_arena`.
fn prune_use(tree: &mut syn::UseTree, keep_arena: bool) -> bool {
    match tree {
        syn::UseTree::Name(n) => {
            n.ident != "Regions" && n.ident != "size" && (keep_arena || n.ident != "Arena")
        }
        syn::UseTree::Path(p) => prune_use(&mut p.tree, keep_arena),
        syn::UseTree::Group(g) => {
            let items: Vec<syn::UseTree> = std::mem::take(&mut g.items)
                .into_iter()
                .filter_map(|mut t| prune_use(&mut t, keep_arena).then_some(t))
                .collect();
            g.items = items.into_iter().collect();
            !g.items.is_empty()
        }
        _ => true,
    }
}

/// Removes `Arena`/`Regions` from a derive list; the attribute goes when nothing is left.
fn strip_derive(attrs: &mut Vec<syn::Attribute>) {
    let old = std::mem::take(attrs);
    for a in old {
        if HELPER_ATTRS.iter().any(|h| a.path().is_ident(h)) {
            continue;
        }
        if !a.path().is_ident("derive") {
            attrs.push(a);
            continue;
        }
        let paths: syn::punctuated::Punctuated<syn::Path, syn::Token![,]> = a
            .parse_args_with(syn::punctuated::Punctuated::parse_terminated)
            .expect("derive list");
        let kept: Vec<&syn::Path> = paths
            .iter()
            .filter(|p| !DERIVES.iter().any(|d| p.is_ident(d)))
            .collect();
        if !kept.is_empty() {
            attrs.push(syn::parse_quote!(#[derive(#(#kept),*)]));
        }
    }
}

/// True when `name` appears as an identifier anywhere in `tokens`.
fn mentions(tokens: TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(id) => id == name,
        proc_macro2::TokenTree::Group(g) => mentions(g.stream(), name),
        _ => false,
    })
}

pub fn hand_expanded(src: &str) -> String {
    let mut file = syn::parse_file(src).expect("source parses");
    // Whether the file names the `Arena` handle type, not counting `use` and derive lists.
    let keep_arena = file.items.iter().any(|item| match item {
        syn::Item::Use(_) => false,
        syn::Item::Struct(s) => {
            let mut s = s.clone();
            strip_derive(&mut s.attrs);
            mentions(s.to_token_stream(), "Arena")
        }
        other => mentions(other.to_token_stream(), "Arena"),
    });
    let mut items = Vec::new();
    for mut item in std::mem::take(&mut file.items) {
        let mut generated = TokenStream::new();
        if let syn::Item::Struct(s) = &mut item {
            let text = s.to_token_stream().to_string();
            if text.contains("derive (")
                && text.contains("Arena")
                && s.attrs.iter().any(|a| a.path().is_ident("arena"))
            {
                generated = arena_macros_impl::derive_arena(s.to_token_stream());
            } else if s.attrs.iter().any(|a| a.path().is_ident("regions")) {
                generated = arena_macros_impl::derive_regions(s.to_token_stream());
            }
            strip_derive(&mut s.attrs);
            for f in s.fields.iter_mut() {
                f.attrs
                    .retain(|a| !HELPER_ATTRS.iter().any(|h| a.path().is_ident(h)));
            }
        }
        if let syn::Item::Use(u) = &mut item {
            if !prune_use(&mut u.tree, keep_arena) {
                continue;
            }
        }
        ExpandSize.visit_item_mut(&mut item);
        items.push(item);
        if !generated.is_empty() {
            let extra: syn::File = syn::parse2(generated).expect("the expansion parses");
            items.extend(extra.items);
        }
    }
    file.items = items;
    prettyplease::unparse(&file)
}

#[test]
#[ignore = "writes files; run by the compile-time benchmark"]
fn write_hand_expanded() {
    let out = std::env::var("ARENA_HAND_OUT").expect("set ARENA_HAND_OUT to a directory");
    // Every file of arena-spec's library that uses a derive or `size!` on a code line, found
    // by reading them, so a moved or new one is expanded too.
    let mut all = Vec::new();
    super::rust_files(&super::root().join("arena-spec/src"), &mut all);
    let files: Vec<String> = all
        .into_iter()
        .filter(|rel| {
            let text = std::fs::read_to_string(super::root().join(rel)).unwrap();
            text.lines().map(str::trim).any(|l| {
                !l.starts_with("//")
                    && ((l.starts_with("#[derive(") && DERIVES.iter().any(|d| l.contains(d)))
                        || l.contains("size!("))
            })
        })
        .collect();
    assert!(
        files.iter().any(|f| f.ends_with("arena/mod.rs")),
        "the engine arena is among them"
    );
    for rel in files {
        let src = std::fs::read_to_string(super::root().join(&rel)).unwrap();
        let dest = Path::new(&out).join(rel.strip_prefix("arena-spec/src/").unwrap());
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::write(dest, hand_expanded(&src)).unwrap();
    }
}

/// Times the derive on the declarations in `ARENA_EXPAND_FILES` (colon-separated paths).
#[test]
#[ignore = "prints timings; run by the compile-time benchmark"]
fn time_expansion() {
    let files = std::env::var("ARENA_EXPAND_FILES").expect("set ARENA_EXPAND_FILES");
    for path in files.split(':') {
        let src = std::fs::read_to_string(path).unwrap();
        let file = syn::parse_file(&src).unwrap();
        let input = file
            .items
            .iter()
            .find_map(|i| match i {
                syn::Item::Struct(s) if s.attrs.iter().any(|a| a.path().is_ident("arena")) => {
                    Some(s.to_token_stream())
                }
                _ => None,
            })
            .expect("an arena struct");
        let runs = 5;
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let t = std::time::Instant::now();
                let out = arena_macros_impl::derive_arena(input.clone());
                assert!(!out.to_string().contains("compile_error"));
                t.elapsed().as_secs_f64()
            })
            .collect();
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!("EXPAND {path} {:.4}", times[runs / 2]);
    }
}
