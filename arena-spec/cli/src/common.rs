//! What the commands share: resolving `<model>`, the sizing flags, errors, styling.

use arena_runtime::{ArenaError, PlacementError, SizeError};
use arena_spec::arena::inputs::{
    DEFAULT_KV_BLOCK_SIZE, DEFAULT_MAX_BATCH_SIZE, DEFAULT_MAX_BATCH_TOKENS,
};
use arena_spec::arena::ranks::{RankArena, RankSizeError, StageArenas};
use arena_spec::{
    models, BufferArenaInputs, ConfigError, LeverError, ModelConfig, ParallelLayout, Resolution,
    ShardError,
};
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
    Shard(#[from] ShardError),
    #[error("{0}")]
    Ranks(#[from] RankSizeError),
    /// A flag or argument the command cannot use.
    #[error("{0}")]
    Usage(String),
    /// A budget nothing fits.
    #[error("nothing fits: {what}=1 already needs {need} (budget {budget})")]
    NothingFits {
        what: &'static str,
        need: String,
        budget: String,
    },
    /// A device that cannot be opened, counted or used.
    #[error("{0}")]
    Device(String),
    /// An allocated arena that breaks its placement contract.
    #[error("invariant broken: {0}")]
    Placement(#[from] PlacementError),
    /// A checkpoint that could not be read or does not match the weight declarations.
    #[error("{0}")]
    Checkpoint(String),
    /// An output file that could not be written.
    #[error("writing {path}: {reason}")]
    Output { path: String, reason: String },
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
    /// Count (and `plan` allocates) the reuse slab, where buffers of disjoint phases reuse
    /// bytes, instead of total_bytes
    #[arg(long)]
    pub reuse: bool,
    #[command(flatten)]
    pub layout: LayoutArgs,
}

/// The parallel layout: sizes are then per GPU (rank).
#[derive(Debug, Clone, clap::Args)]
pub struct LayoutArgs {
    /// Tensor-parallel GPUs per pipeline stage
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub tp: usize,
    /// Expert-parallel degree, within the tensor-parallel group (divides --tp)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub ep: usize,
    /// Pipeline-parallel stages
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub pp: usize,
    /// The rank to size, `stage · tp + tp_rank` [default: the rank with the largest arena]
    #[arg(long, value_name = "R")]
    pub rank: Option<usize>,
}

impl LayoutArgs {
    pub fn layout(&self) -> Result<ParallelLayout, CliError> {
        Ok(ParallelLayout::new(self.tp, self.ep, self.pp)?)
    }

    /// One config per pipeline stage, or only `--rank`'s ([`ParallelLayout::stage_configs`]).
    pub fn rank_configs(&self, whole: &ModelConfig) -> Result<Vec<ModelConfig>, CliError> {
        Ok(self.layout()?.stage_configs(whole, self.rank)?)
    }

    /// [`Self::rank_configs`], each with its sizes at `inputs`.
    pub fn rank_sizes(
        &self,
        whole: &ModelConfig,
        inputs: &BufferArenaInputs,
    ) -> Result<Vec<RankArena>, CliError> {
        Ok(self.layout()?.stage_arenas(whole, self.rank, inputs)?)
    }

    /// `--rank`'s config, or the rank whose arena is largest at `inputs` (the first such).
    pub fn chosen(
        &self,
        whole: &ModelConfig,
        inputs: &BufferArenaInputs,
    ) -> Result<ModelConfig, CliError> {
        Ok(self
            .layout()?
            .largest_rank(whole, self.rank, inputs)?
            .config)
    }
}

impl SizingArgs {
    /// The inputs for `config`, flags over defaults; 0 where it cannot be is an error.
    pub fn inputs(&self, config: &ModelConfig) -> Result<BufferArenaInputs, CliError> {
        let defaults = BufferArenaInputs::defaults_for(config);
        let inputs = BufferArenaInputs {
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
    } else if Path::new(model).symlink_metadata().is_ok() {
        // Anything at the path, a link that does not resolve included: the loader says what
        // is wrong with it.
        ModelConfig::load(model)?
    } else {
        return Err(CliError::Usage(format!(
            "unknown model `{model}`: not a shipped model and no such file; shipped models: {}",
            models::names().join(", ")
        )));
    };
    Ok(config)
}

/// A model loaded and its levers applied, with its inputs: the whole model's config.
pub fn resolve_whole(
    model: &str,
    sizing: &SizingArgs,
) -> Result<(ModelConfig, BufferArenaInputs), CliError> {
    let mut config = load_model(model)?;
    sizing.apply_levers(&mut config)?;
    let inputs = sizing.inputs(&config)?;
    Ok((config, inputs))
}

/// [`resolve_whole`], then the rank the layout flags choose ([`LayoutArgs::chosen`]).
pub fn resolve(
    model: &str,
    sizing: &SizingArgs,
) -> Result<(ModelConfig, BufferArenaInputs), CliError> {
    let (whole, inputs) = resolve_whole(model, sizing)?;
    let config = sizing.fixed.layout.chosen(&whole, &inputs)?;
    Ok((config, inputs))
}

pub fn size_error(config: &ModelConfig) -> impl Fn(SizeError) -> CliError + '_ {
    move |source| CliError::Size {
        model: config.source.to_string(),
        source,
    }
}

/// Bold on a terminal, plain otherwise.
/// A `--json` document on stdout, pretty-printed.
pub fn print_json<T: serde::Serialize>(doc: &T) -> Result<(), CliError> {
    println!(
        "{}",
        serde_json::to_string_pretty(doc).expect("plain data serializes")
    );
    Ok(())
}

pub fn bold(text: &str) -> String {
    if std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
        format!("\x1b[1m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// The names of the levers set on `config`.
pub fn levers_on(config: &ModelConfig) -> Vec<&'static str> {
    config
        .levers
        .iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| n)
        .collect()
}

pub fn print_inputs(config: &ModelConfig, inputs: &BufferArenaInputs) {
    let levers = levers_on(config);
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
    if let Some(line) = text_model_line(config) {
        println!("{line}");
    }
    if let Some(line) = rank_line(config) {
        println!("{line}");
    }
}

/// How a file not read by its own `model_type` was read, and what of it is not sized; `None`
/// for a file a row reads whole.
pub fn text_model_line(config: &ModelConfig) -> Option<String> {
    let t = &config.text_model;
    let family = config.family.model_type();
    let found = match t.found_by {
        Resolution::ModelType => None,
        Resolution::Architecture { class } => {
            Some(format!("read by its class {class} as {family}"))
        }
        Resolution::Wrapper { key } => Some(format!(
            "read as the {family} text model at `{key}` of the `{}` wrapper",
            config.model_type
        )),
    };
    let left_out = (!t.left_out.is_empty()).then(|| {
        format!(
            "not sized: {} (arena gpu-plan plans without them only with --text-only)",
            t.left_out.join(", ")
        )
    });
    let parts: Vec<String> = [found, left_out, t.not_sized.map(str::to_string)]
        .into_iter()
        .flatten()
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// `per GPU: rank 3 of tp=4 ep=2 pp=2 (stage 0, layers 0..31, 128 of 256 experts)`, for a
/// sharded config.
pub fn rank_line(config: &ModelConfig) -> Option<String> {
    let shard = config.shard.as_ref()?;
    let experts = if config.is_moe() {
        format!(
            ", {} of {} experts",
            shard.local_experts, config.num_experts
        )
    } else {
        String::new()
    };
    Some(format!(
        "per GPU: rank {} of {} ({} ranks; stage {}, layers {}..{}{experts}{})",
        shard.rank.index,
        shard.rank.layout,
        shard.rank.layout.world_size(),
        shard.rank.stage(),
        shard.layers.start,
        shard.layers.end,
        if shard.holds_lm_head {
            ", LM head"
        } else {
            ", no LM head"
        }
    ))
}
