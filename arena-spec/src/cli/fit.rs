//! `arena fit`: the largest max_batch_tokens (or max_batch_size) that fits a budget.

use super::common::{bold, print_inputs, resolve_whole, size_error, CliError, SizingArgs};
use arena_spec::report::{human_bytes, parse_bytes, SizeReport};
use arena_spec::{ArenaInputs, ModelConfig};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Vary {
    /// Search max_batch_tokens, the other inputs fixed
    Tokens,
    /// Search max_batch_size, the other inputs fixed
    Batch,
}

#[derive(Debug, clap::Args)]
pub struct FitArgs {
    /// A shipped model's name (see `arena models`) or a path to a config.json
    pub model: String,
    /// The bytes the arena may take, e.g. 20GiB, 512MiB, 1.5GB
    #[arg(long, value_parser = parse_bytes)]
    pub budget: usize,
    /// Which input to search
    #[arg(long, value_enum, default_value = "tokens")]
    pub vary: Vary,
    #[command(flatten)]
    pub sizing: SizingArgs,
}

/// Largest value searched.
const SEARCH_LIMIT: usize = 1 << 32;

pub fn run(args: FitArgs) -> Result<(), CliError> {
    let (whole, inputs) = resolve_whole(&args.model, &args.sizing)?;
    let with = |v: usize| match args.vary {
        Vary::Tokens => ArenaInputs {
            max_batch_tokens: v,
            ..inputs
        },
        Vary::Batch => ArenaInputs {
            max_batch_size: v,
            ..inputs
        },
    };
    let what = match args.vary {
        Vary::Tokens => "max_batch_tokens",
        Vary::Batch => "max_batch_size",
    };
    // Under a parallel layout every rank must fit: the answer is the smallest of the
    // stages' answers, and the table is the rank that binds.
    let shared = args.sizing.fixed.shared;
    let mut binding: Option<(Option<usize>, ModelConfig)> = None;
    for config in args.sizing.fixed.layout.rank_configs(&whole)? {
        let best =
            largest_fitting(&config, args.budget, shared, with).map_err(size_error(&config))?;
        let tighter = match &binding {
            None => true,
            Some((b, _)) => best.unwrap_or(0) < b.unwrap_or(0),
        };
        if tighter {
            binding = Some((best, config));
        }
    }
    let (best, config) = binding.expect("a layout has at least one rank");
    let Some(best) = best else {
        let need = total(&config, with(1), shared)
            .map_err(size_error(&config))?
            .unwrap_or(usize::MAX);
        return Err(CliError::Usage(format!(
            "nothing fits: {what}=1 already needs {} (budget {})",
            human_bytes(need),
            human_bytes(args.budget)
        )));
    };
    let inputs = with(best);
    let (report, _) = SizeReport::new(&config, inputs).map_err(size_error(&config))?;
    println!(
        "{} {what} = {best}: {} {}{} of the budget {}{}",
        bold("fits:"),
        if shared { "shared slab" } else { "total_bytes" },
        human_bytes(if shared {
            report.shared_bytes
        } else {
            report.total_bytes
        }),
        if config.shard.is_some() {
            " per GPU (the rank that binds)"
        } else {
            ""
        },
        human_bytes(args.budget),
        if best == SEARCH_LIMIT {
            " (the search limit)"
        } else {
            ""
        }
    );
    println!();
    print_inputs(&config, &inputs);
    println!();
    print!("{}", report.table());
    Ok(())
}

/// The total at `inputs` (or the shared slab's footprint), or `None` when a size overflows
/// (never fits).
fn total(
    config: &ModelConfig,
    inputs: ArenaInputs,
    shared: bool,
) -> Result<Option<usize>, arena_runtime::SizeError> {
    match inputs.sizes(config) {
        Ok(s) if shared => match <arena_spec::BufferArena as arena_runtime::Arena>::shared_plan(&s)
        {
            Ok(plan) => Ok(Some(plan.footprint)),
            Err(_) => Ok(None),
        },
        Ok(s) => Ok(Some(s.total_bytes())),
        Err(
            arena_runtime::SizeError::Overflow { .. }
            | arena_runtime::SizeError::TotalOverflow { .. },
        ) => Ok(None),
        Err(arena_runtime::SizeError::Nested { source, .. })
            if matches!(*source, arena_runtime::SizeError::Overflow { .. }) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Binary search over a total that does not decrease as the value grows.
fn largest_fitting(
    config: &ModelConfig,
    budget: usize,
    shared: bool,
    with: impl Fn(usize) -> ArenaInputs,
) -> Result<Option<usize>, arena_runtime::SizeError> {
    let fits = |v: usize| -> Result<bool, arena_runtime::SizeError> {
        Ok(total(config, with(v), shared)?.is_some_and(|t| t <= budget))
    };
    if !fits(1)? {
        return Ok(None);
    }
    let (mut lo, mut hi) = (1usize, 2usize);
    while hi <= SEARCH_LIMIT && fits(hi)? {
        lo = hi;
        hi *= 2;
    }
    if hi > SEARCH_LIMIT {
        return Ok(Some(lo));
    }
    // fits(lo) and !fits(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(Some(lo))
}
