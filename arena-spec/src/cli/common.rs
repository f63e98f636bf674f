//! What the commands share: resolving `<model>`, the sizing flags, errors, styling.

use arena_runtime::{ArenaError, SizeError};
use arena_spec::inputs::{DEFAULT_KV_BLOCK_SIZE, DEFAULT_MAX_BATCH_SIZE, DEFAULT_MAX_BATCH_TOKENS};
use arena_spec::{models, ArenaInputs, ConfigError, LeverError, ModelConfig};
use std::io::IsTerminal;
use std::path::Path;
use thiserror::Error;

/// Everything a command can fail with; printed as one line.
#[derive(Debug, Error)]
pub enum CliError {
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Lever(#[from] LeverError),
    #[error("sizing {model}: {source}")]
    Size { model: String, source: SizeError },
    #[error("{0}")]
    Arena(#[from] ArenaError),
    #[error("{0}")]
    Usage(String),
}

/// The flags that choose the arena's inputs and levers.
#[derive(Debug, Clone, clap::Args)]
pub struct SizingArgs {
    /// Most tokens in one forward pass (M) [default: 8192]
    #[arg(long, value_name = "M")]
    pub max_batch_tokens: Option<usize>,
    #[command(flatten)]
    pub fixed: FixedSizing,
}

/// The inputs other than max_batch_tokens, and the levers (`sweep` varies M itself).
#[derive(Debug, Clone, clap::Args)]
pub struct FixedSizing {
    /// Longest sequence served [default: the model's context, at most 131072]
    #[arg(long, value_name = "S")]
    pub max_seq_len: Option<usize>,
    /// Tokens per KV-cache block (0: no paged cache) [default: 16]
    #[arg(long, value_name = "B")]
    pub kv_block_size: Option<usize>,
    /// Most sequences in one decode batch [default: 128]
    #[arg(long, value_name = "N")]
    pub max_batch_size: Option<usize>,
    /// Set a lever, e.g. `--lever fp8_rowwise=1` or `--lever METRALE_GGUF_NATIVE_Q2=1` (repeatable)
    #[arg(long = "lever", value_name = "NAME=0|1")]
    pub levers: Vec<String>,
}

impl SizingArgs {
    /// The inputs for `config`, flags over defaults; 0 where it cannot be is an error.
    pub fn inputs(&self, config: &ModelConfig) -> Result<ArenaInputs, CliError> {
        let defaults = ArenaInputs::defaults_for(config);
        let inputs = ArenaInputs {
            max_batch_tokens: self.max_batch_tokens.unwrap_or(DEFAULT_MAX_BATCH_TOKENS),
            max_seq_len: self.fixed.max_seq_len.unwrap_or(defaults.max_seq_len),
            kv_block_size: self.fixed.kv_block_size.unwrap_or(DEFAULT_KV_BLOCK_SIZE),
            max_batch_size: self.fixed.max_batch_size.unwrap_or(DEFAULT_MAX_BATCH_SIZE),
        };
        for (flag, value) in [
            ("--max-batch-tokens", inputs.max_batch_tokens),
            ("--max-seq-len", inputs.max_seq_len),
            ("--max-batch-size", inputs.max_batch_size),
        ] {
            if value == 0 {
                return Err(CliError::Usage(format!("{flag} must be at least 1")));
            }
        }
        Ok(inputs)
    }

    /// `config` with this command's levers applied over the environment's.
    pub fn apply_levers(&self, config: &mut ModelConfig) -> Result<(), CliError> {
        for assignment in &self.fixed.levers {
            config.levers.apply(assignment)?;
        }
        Ok(())
    }
}

/// A shipped model's name or a path to a `config.json`, with the environment's levers.
pub fn load_model(model: &str) -> Result<ModelConfig, CliError> {
    let config = if let Some(shipped) = models::find(model) {
        shipped.config()?
    } else if Path::new(model).exists() {
        ModelConfig::load(model)?
    } else {
        return Err(CliError::Usage(format!(
            "unknown model `{model}`: not a shipped model and no such file; shipped models: {}",
            models::names().join(", ")
        )));
    };
    Ok(config)
}

/// A model loaded and its levers applied, with its inputs.
pub fn resolve(model: &str, sizing: &SizingArgs) -> Result<(ModelConfig, ArenaInputs), CliError> {
    let mut config = load_model(model)?;
    sizing.apply_levers(&mut config)?;
    let inputs = sizing.inputs(&config)?;
    Ok((config, inputs))
}

pub fn size_error(config: &ModelConfig) -> impl Fn(SizeError) -> CliError + '_ {
    move |source| CliError::Size {
        model: config.source.clone(),
        source,
    }
}

/// Bold on a terminal, plain otherwise.
pub fn bold(text: &str) -> String {
    if std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
        format!("\x1b[1m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

pub fn print_inputs(config: &ModelConfig, inputs: &ArenaInputs) {
    let levers: Vec<&str> = config
        .levers
        .iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| n)
        .collect();
    println!(
        "{} ({}): max_batch_tokens={} max_seq_len={} kv_block_size={} max_batch_size={} levers=[{}]",
        bold(&config.source),
        config.model_type,
        inputs.max_batch_tokens,
        inputs.max_seq_len,
        inputs.kv_block_size,
        inputs.max_batch_size,
        levers.join(", ")
    );
}
