//! What the tests of a shipped model share: its config (levers off), its raw text config as
//! the file has it, a raw key, and rank 0 of a tensor-parallel layout.
#![allow(dead_code)] // each test binary uses its own part

use arena_spec::models::SHIPPED;
use arena_spec::{ModelConfig, ParallelLayout};
use serde_json::Value;

/// The shipped model's config, levers off.
pub fn config(name: &str) -> ModelConfig {
    SHIPPED
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("{name} is not shipped"))
        .config_with_levers(Default::default())
        .unwrap()
}

/// The shipped file's text config as raw JSON (its `text_config` where it nests one), read
/// with `serde_json` alone, not through `ModelConfig`: the references' transcriptions read it.
pub fn raw(name: &str) -> Value {
    let m = SHIPPED.iter().find(|m| m.name == name).unwrap();
    let v: Value = serde_json::from_str(&m.json.replace("Infinity", "1e308")).unwrap();
    match v.get("text_config") {
        Some(t) => t.clone(),
        None => v,
    }
}

/// A whole-number key of a raw config.
pub fn n(v: &Value, key: &str) -> usize {
    v[key].as_u64().unwrap_or_else(|| panic!("{key}")) as usize
}

/// Rank 0 of tp (pp = 1): its stage is the whole model.
pub fn at_tp(name: &str, tp: usize) -> ModelConfig {
    let layout = ParallelLayout::new(tp, 1, 1).unwrap();
    config(name).shard(&layout.rank(0).unwrap()).unwrap()
}
