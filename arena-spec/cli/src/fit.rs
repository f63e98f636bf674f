//! `arena fit`: the largest max_batch_tokens (or max_batch_size) that fits a budget. The
//! whole GPU's plan is `arena gpu-plan` (`gpu_plan.rs`).

use crate::common::{
    bold, print_inputs, print_json, resolve_whole, size_error, CliError, SizingArgs,
};
use arena_spec::fit::{footprint, largest_fitting, Footprint, SEARCH_LIMIT};
use arena_spec::report::{human_bytes, parse_bytes, FitReport, SizeReport, SCHEMA_VERSION};
use arena_spec::{BufferArenaInputs, ModelConfig};

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
    /// The bytes the arena may take, e.g. 20GiB, 512MiB, 1.5GB (a whole GPU is `arena gpu-plan`)
    #[arg(long, value_parser = parse_bytes)]
    pub budget: usize,
    /// Which input to search
    #[arg(long, value_enum, default_value = "tokens")]
    pub vary: Vary,
    #[command(flatten)]
    pub sizing: SizingArgs,
    /// Print one JSON document (`arena_spec::report::FitReport`) instead of the text
    #[arg(long)]
    pub json: bool,
}

/// The multiple of 16 `fit` answers in tokens. Chosen here: engines schedule token batches in
/// multiples of 16 (CUDA-graph buckets, tile widths), and the arena rounds `M` up to 16 for
/// its `ceil16(M)` buffers, so an unaligned answer buys nothing those buffers do not already
/// hold. A batch of sequences is answered exactly (alignment 1).
pub const TOKEN_ALIGN: usize = 16;

pub fn run(args: FitArgs) -> Result<(), CliError> {
    let budget = args.budget;
    // The input searched is not also an input given: say so instead of ignoring the flag.
    match args.vary {
        Vary::Tokens if args.sizing.max_batch_tokens.is_some() => {
            return Err(CliError::Usage(
                "fit searches max_batch_tokens, so --max-batch-tokens has no effect: leave it out, or search the batch with --vary batch".into(),
            ))
        }
        Vary::Batch if args.sizing.fixed.max_batch_size.is_some() => {
            return Err(CliError::Usage(
                "fit --vary batch searches max_batch_size, so --max-batch-size has no effect: leave it out".into(),
            ))
        }
        _ => {}
    }
    let (whole, inputs) = resolve_whole(&args.model, &args.sizing)?;
    let with = |v: usize| match args.vary {
        Vary::Tokens => BufferArenaInputs {
            max_batch_tokens: v,
            ..inputs
        },
        Vary::Batch => BufferArenaInputs {
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
    let reuse = args.sizing.fixed.reuse;
    let what_fits = if reuse {
        Footprint::ReuseSlab
    } else {
        Footprint::TotalBytes
    };
    let mut binding: Option<(Option<usize>, ModelConfig)> = None;
    for config in args.sizing.fixed.layout.rank_configs(&whole)? {
        let best =
            largest_fitting(&config, budget, what_fits, with).map_err(size_error(&config))?;
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
        let need = footprint(&config, with(1), what_fits)
            .map_err(size_error(&config))?
            .unwrap_or(usize::MAX);
        return Err(CliError::NothingFits {
            what,
            need: human_bytes(need),
            budget: human_bytes(budget),
        });
    };
    let align = match args.vary {
        Vary::Tokens => TOKEN_ALIGN,
        Vary::Batch => 1,
    };
    // Aligned down (the footprint never decreases as the input grows, so it still fits); an
    // answer below one alignment step stays as found.
    let aligned = if best >= align {
        best / align * align
    } else {
        best
    };
    let inputs = with(aligned);
    let (report, _) = SizeReport::new(&config, inputs).map_err(size_error(&config))?;
    let used = if reuse {
        report.reuse_bytes
    } else {
        report.total_bytes
    };
    if args.json {
        return print_json(&FitReport {
            schema_version: SCHEMA_VERSION,
            model: report.model.clone(),
            model_type: config.model_type.to_string(),
            searched: what,
            alignment: align,
            largest_fitting: best,
            answer: aligned,
            search_limit_reached: best == SEARCH_LIMIT,
            footprint: if reuse { "reuse_slab" } else { "total_bytes" },
            budget_bytes: budget,
            used_bytes: used,
            slack_bytes: budget - used,
            binding_rank: config.shard.clone(),
            inputs,
            levers: report.levers,
            buffers: report.buffers,
        });
    }
    let alignment = if align == 1 {
        String::new()
    } else if best < align {
        format!(", less than one step of {align}")
    } else if aligned == best {
        format!(", a multiple of {align}")
    } else {
        format!(", the largest multiple of {align}; {best} is the largest that fits")
    };
    println!(
        "{} {what} = {aligned} (the input searched{alignment}): {} {} B ({}){} of the budget {} B ({}), slack {} B ({}){}",
        bold("fits:"),
        if reuse { "reuse slab" } else { "total_bytes" },
        used,
        human_bytes(used),
        if config.shard.is_some() {
            " per GPU (the rank that binds)"
        } else {
            ""
        },
        budget,
        human_bytes(budget),
        budget - used,
        human_bytes(budget - used),
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
