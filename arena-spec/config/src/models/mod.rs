//! The model configs shipped in `arena-spec/config/models/`, embedded so the CLI finds them from
//! any directory.

use crate::config::levers::Levers;
use crate::config::{ConfigError, ModelConfig};
use std::path::Path;

/// Every shipped model as a `const ModelConfig` (levers off), for the const sizing path:
/// `BufferSizes::const_from_inputs(&consts::LLAMA_3_1_8B, &inputs)` in a `const` item.
#[rustfmt::skip] // generated; the test that blesses it compares its exact text
pub mod consts;

/// A shipped config: its name (the file stem, as `arena models` lists them and
/// [`find`] takes them: `"qwen2.5-7b"`) and the file's text (`json`, byte for byte the
/// vendor's), which [`ShippedModel::config`] loads.
#[derive(Debug, Clone, Copy)]
pub struct ShippedModel {
    pub name: &'static str,
    pub json: &'static str,
}

macro_rules! shipped {
    ($($name:literal),* $(,)?) => {
        &[$(ShippedModel { name: $name, json: include_str!(concat!("../../models/", $name, ".json")) }),*]
    };
}

/// Every shipped config, in a stable order.
pub const SHIPPED: &[ShippedModel] = shipped![
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-4-scout-17b-16e-instruct",
    "mistral-7b-v0.1",
    "mistral-nemo-instruct-2407",
    "devstral-2-123b-instruct",
    "devstral-small-2-24b-instruct",
    "mixtral-8x7b",
    "phi-3-mini-4k-instruct",
    "phi-4",
    "olmo-3.1-32b-instruct",
    "exaone-4.0-32b",
    "minimax-m2.7",
    "minimax-m1",
    "command-r-v01",
    "lfm2-1.2b",
    "lfm2.5-1.2b-base",
    "laguna-xs.2-fp8",
    "gemma-3-1b-it",
    "gemma-3-4b-it",
    "gemma-4-31b-it",
    "gemma-4-26b-a4b",
    "gemma-4-e2b-it",
    "gemma-4-e4b-it",
    "qwen2.5-7b",
    "qwen3-0.6b",
    "qwen3-30b-a3b",
    "qwen3-next-80b-a3b",
    "qwen3-next-80b-a3b-thinking",
    "qwen3.5-27b",
    "qwen3.5-35b-a3b",
    "qwen3-vl-4b-instruct",
    "qwen3-vl-32b-instruct",
    "qwen3-vl-30b-a3b-thinking",
    "deepseek-v3",
    "deepseek-v3.2",
    "deepseek-v4-flash",
    "deepseek-v4-pro",
    "kimi-k2",
    "kimi-k2.5",
    "kimi-linear-48b-a3b-instruct",
    "glm-4.5",
    "glm-4.5-air",
    "glm-5",
    "gpt-oss-20b",
    "gpt-oss-120b",
    "nemotron-h-56b-base-8k",
    "nemotron-3-nano-30b-a3b",
    "llama-3.3-nemotron-super-49b-v1",
    "synthetic-all-features-moe",
    "synthetic-all-features-dense",
];

impl ShippedModel {
    /// The parsed config with the levers of the process environment (as
    /// [`ModelConfig::load`]); `source` is the shipped name.
    pub fn config(&self) -> Result<ModelConfig, ConfigError> {
        self.config_with_levers(Levers::from_env()?)
    }

    /// The parsed config with the levers given; the environment is not read.
    pub fn config_with_levers(&self, levers: Levers) -> Result<ModelConfig, ConfigError> {
        let path = format!("arena-spec/config/models/{}.json", self.name);
        let mut config =
            ModelConfig::from_json_str_with_levers(self.json, Path::new(&path), levers)?;
        config.source = self.name.into();
        Ok(config)
    }

    /// True for configs that describe no published model.
    pub fn is_synthetic(&self) -> bool {
        self.name.starts_with("synthetic")
    }
}

/// The shipped model called `name`.
pub fn find(name: &str) -> Option<&'static ShippedModel> {
    SHIPPED.iter().find(|m| m.name == name)
}

/// The shipped names, for error messages.
pub fn names() -> Vec<&'static str> {
    SHIPPED.iter().map(|m| m.name).collect()
}
