//! Unit tests of the derive on declarations written here: each malformed attribute is one
//! error saying what was expected. The expansion snapshots and the mutation test (never a
//! panic) are in the workspace's `arena-tests` (`tests/snapshot.rs`, `tests/malformed.rs`):
//! their inputs live in other crates, and a package's tests read only its own files.

use proc_macro2::TokenStream;

/// The error messages of a declaration, in order (empty when it expands).
fn errors_of(declaration: TokenStream) -> Vec<String> {
    let out = crate::derive_arena(declaration).to_string();
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
    let out = crate::derive_regions(layout(quote::quote!(64))).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(
        out.contains("RegionCursor :: new (\"R\" , 64usize)"),
        "{out}"
    );
    for bad in [quote::quote!(100), quote::quote!(0)] {
        let out = crate::derive_regions(layout(bad.clone())).to_string();
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
            "expected `shape = ...` or `shape(...)` after `shape`",
        ),
        (
            ok_container.clone(),
            quote::quote!(shape[m]),
            "expected `shape = ...` or `shape(...)` after `shape`",
        ),
        // A list is one parenthesised group, nothing after it.
        (
            quote::quote!(inputs[m: usize]),
            ok_buffer.clone(),
            "expected `inputs = ...` or `inputs(...)` after `inputs`",
        ),
        (
            quote::quote!(inputs(m: usize) (n: usize)),
            ok_buffer.clone(),
            "expected `inputs = ...` or `inputs(...)` after `inputs`",
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
        // `key =` with nothing after it.
        (
            ok_container.clone(),
            quote::quote!(shape = [m, k], gate =),
            "`gate` needs a value: `gate = condition`",
        ),
        // A phase range is `first..=last`: dots then `=`, nothing else between the names.
        (
            quote::quote!(inputs(m: usize), phases(a, b)),
            quote::quote!(shape = [m], phase = a .<= b),
            "is a phase name or an inclusive range of them",
        ),
        (
            quote::quote!(inputs(m: usize), phases(a, b)),
            quote::quote!(shape = [m], phase = a .> b),
            "is a phase name or an inclusive range of them",
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
        crate::derive_arena(quote::quote! {
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
    let none = crate::derive_arena(quote::quote! {
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

/// A buffer without a shape whose other key is misspelt gets one error, the misspelling's,
/// not a second one saying it has no shape; without the misspelling it gets that one.
#[test]
fn a_misspelt_key_is_one_error() {
    let arena = |buffer: TokenStream| {
        quote::quote! {
            #[derive(Arena)]
            #[arena(inputs(m: usize))]
            pub struct A {
                #[buffer(#buffer)]
                pub x: DevicePtr<u8>,
            }
        }
    };
    let errors = errors_of(arena(quote::quote!(gat = m > 0)));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("unknown key `gat`"), "{errors:?}");
    let errors = errors_of(arena(quote::quote!(gate = m > 0)));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("needs exactly one of"), "{errors:?}");
}
