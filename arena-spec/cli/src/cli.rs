//! The command line: the subcommands and their dispatch.

pub use crate::common::CliError;
use crate::{const_config, diff, fit, gpu_plan, models, plan, sweep, weights};
use clap::{Parser, Subcommand};

/// Size, allocate and budget the engine's buffer arena for a model.
#[derive(Debug, Parser)]
#[command(name = "arena", version)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Size the arena, check its placement (allocated on a device with --device), and print every buffer.
    Plan(plan::PlanArgs),
    /// Find the largest max_batch_tokens (or max_batch_size) whose arena fits a budget.
    Fit(fit::FitArgs),
    /// Plan a whole GPU (--gpu-memory, or --device's): weights, arena, state cache and reserve
    /// on each rank, and the KV blocks, tokens and sequences in the rest.
    GpuPlan(gpu_plan::GpuPlanArgs),
    /// Show how total_bytes and the largest buffers grow with max_batch_tokens.
    Sweep(sweep::SweepArgs),
    /// Compare two models, or one model under two lever sets, buffer by buffer.
    Diff(diff::DiffArgs),
    /// List the shipped models with their family and key shapes.
    Models(models::ModelsArgs),
    /// Print a model's config as a Rust `const`, for sizing it at compile time.
    ConstConfig(const_config::ConstConfigArgs),
    /// Check a checkpoint's tensors against the weight declarations, or load it into them.
    Weights(weights::WeightsArgs),
}

pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Plan(a) => plan::run(a),
        Command::Fit(a) => fit::run(a),
        Command::GpuPlan(a) => gpu_plan::run(a),
        Command::Sweep(a) => sweep::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Models(a) => models::run(a),
        Command::ConstConfig(a) => const_config::run(a),
        Command::Weights(a) => weights::run(a),
    }
}
