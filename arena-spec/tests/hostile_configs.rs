//! The space between the broken-file corpus and the valid configs: every shipped vendor file
//! mutated (keys dropped, duplicated, retyped, scaled, made non-finite, grown into huge
//! arrays, the text model nested or un-nested). Each input either loads and sizes (or names
//! the buffer or derived value that overflows), or is one error line naming the file and,
//! where a key is at fault, the key; never a panic, a hang or unbounded memory.

use arena_spec::models::SHIPPED;
use arena_spec::{BufferSizes, ConfigError, Levers, ModelConfig};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// One mutation of a config's JSON text.
#[derive(Debug, Clone)]
enum Mutation {
    Drop(usize),
    Retype(usize, usize),
    Scale(usize, u32),
    NonFinite(usize, usize),
    HugeArray(usize),
    Duplicate(usize),
    NestTextConfig,
    UnnestTextConfig,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Drop),
        (any::<usize>(), 0usize..9).prop_map(|(k, t)| Mutation::Retype(k, t)),
        (any::<usize>(), 0u32..64).prop_map(|(k, s)| Mutation::Scale(k, s)),
        (any::<usize>(), 0usize..3).prop_map(|(k, n)| Mutation::NonFinite(k, n)),
        any::<usize>().prop_map(Mutation::HugeArray),
        any::<usize>().prop_map(Mutation::Duplicate),
        Just(Mutation::NestTextConfig),
        Just(Mutation::UnnestTextConfig),
    ]
}

/// The object whose keys a mutation picks from: `text_config` where there is one.
fn target(v: &mut Value) -> &mut Map<String, Value> {
    let has_text = v.get("text_config").is_some_and(Value::is_object);
    let obj = if has_text { &mut v["text_config"] } else { v };
    obj.as_object_mut().unwrap()
}

fn nth_key(obj: &Map<String, Value>, i: usize) -> Option<String> {
    (!obj.is_empty()).then(|| obj.keys().nth(i % obj.len()).unwrap().clone())
}

/// Applies the mutations; returns the JSON text (non-finite literals and duplicate keys
/// only exist as text).
fn apply(mut v: Value, mutations: &[Mutation]) -> String {
    let mut literals = Vec::new();
    let mut duplicates = Vec::new();
    for m in mutations {
        match m {
            Mutation::NestTextConfig => {
                if v.get("text_config").is_none() {
                    let model_type = v["model_type"].clone();
                    v = json!({"model_type": model_type, "text_config": v});
                }
                continue;
            }
            Mutation::UnnestTextConfig => {
                if let Some(text) = v.get("text_config").cloned().filter(Value::is_object) {
                    let model_type = v["model_type"].clone();
                    v = text;
                    v["model_type"] = model_type;
                }
                continue;
            }
            _ => {}
        }
        let obj = target(&mut v);
        let (Mutation::Drop(i)
        | Mutation::Retype(i, _)
        | Mutation::Scale(i, _)
        | Mutation::NonFinite(i, _)
        | Mutation::HugeArray(i)
        | Mutation::Duplicate(i)) = m
        else {
            unreachable!()
        };
        let Some(key) = nth_key(obj, *i) else {
            continue;
        };
        match m {
            Mutation::Drop(_) => {
                obj.remove(&key);
            }
            Mutation::Retype(_, t) => {
                obj[&key] = [
                    json!("4096"),
                    json!(true),
                    Value::Null,
                    json!([1, 2, 3]),
                    json!({"a": 1}),
                    json!(-1),
                    json!(4096.5),
                    json!(u64::MAX),
                    json!(1e300),
                ][*t]
                    .clone();
            }
            Mutation::Scale(_, s) => {
                if let Some(n) = obj[&key].as_u64() {
                    obj[&key] = json!(n
                        .saturating_mul(1u64 << s)
                        .saturating_add(u64::from(*s % 2)));
                } else if *s == 0 {
                    obj[&key] = json!(0);
                }
            }
            Mutation::NonFinite(_, n) => {
                let marker = format!("@@nonfinite{}@@", literals.len());
                literals.push((marker.clone(), ["NaN", "Infinity", "-Infinity"][*n]));
                obj[&key] = json!(marker);
            }
            Mutation::HugeArray(_) => {
                obj[&key] = Value::Array(vec![json!(0); 200_000]);
            }
            Mutation::Duplicate(_) => duplicates.push(key),
            Mutation::NestTextConfig | Mutation::UnnestTextConfig => unreachable!(),
        }
    }
    let mut text = serde_json::to_string_pretty(&v).unwrap();
    for (marker, literal) in literals {
        text = text.replace(&format!("\"{marker}\""), literal);
    }
    for key in duplicates {
        // A second entry for the key, before the first: Python's json keeps the last.
        text = text.replacen(
            &format!("\"{key}\":"),
            &format!("\"{key}\": 7,\n  \"{key}\":"),
            1,
        );
    }
    text
}

fn vendor_files() -> Vec<&'static str> {
    SHIPPED
        .iter()
        .filter(|m| !m.is_synthetic())
        .map(|m| m.json)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn a_mutated_vendor_file_loads_and_sizes_or_is_one_error_naming_the_key(
        file in prop::sample::select(vendor_files()),
        mutations in prop::collection::vec(mutation(), 1..5),
    ) {
        let original: Value =
            serde_json::from_str(&file.replace("Infinity", "1e308")).unwrap();
        let text = apply(original, &mutations);
        match ModelConfig::from_json_str_with_levers(&text, "mutated.json", Levers::ALL_ON) {
            Ok(config) => {
                for m in [1, 8192, 1 << 20] {
                    if let Err(e) = BufferSizes::try_from_config(&config, m, 131072, 16, 128) {
                        prop_assert!(!e.buffer().is_empty(), "{e}");
                    }
                }
                // The whole-GPU plan (weights, state cache, KV pool) answers or errs; it never
                // panics or wraps on what the file says.
                let inputs = arena_spec::gpu_plan::GpuPlanInputs {
                    state_dtype: Some(arena_spec::StateDtype::F32),
                    weights_bytes_per_rank: Some(1 << 30),
                    ..arena_spec::gpu_plan::GpuPlanInputs::new(
                        143_155 << 20,
                        arena_spec::BufferArenaInputs::defaults_for(&config),
                    )
                };
                let layout = arena_spec::ParallelLayout::new(1, 1, 1).unwrap();
                if let Ok(plan) = arena_spec::gpu_plan::plan_gpu(&config, &layout, inputs) {
                    prop_assert!(plan.ranks[0].pool_bytes <= plan.ranks[0].kv_budget_bytes);
                }
                let _ = arena_spec::weights::weight_bytes(&config);
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("mutated.json: "), "{msg}");
                prop_assert!(!msg.contains('\n'), "{msg}");
                match &e {
                    ConfigError::Invalid { field, .. } | ConfigError::Missing { field, .. } => {
                        prop_assert!(!field.is_empty(), "{msg}");
                        prop_assert!(msg.contains(&format!("`{field}`")), "{msg}");
                    }
                    ConfigError::Json { .. } | ConfigError::UnsupportedModelType { .. } => {}
                    other => prop_assert!(false, "unexpected error kind: {other:?}"),
                }
            }
        }
    }
}
