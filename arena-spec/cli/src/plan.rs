//! `arena plan`: size, allocate, check, release, report; per GPU under a parallel layout.

use crate::common::{
    bold, print_inputs, print_json, resolve_whole, size_error, CliError, SizingArgs,
};
use crate::device::{allocate_ranks, DeviceChoice};
use arena_spec::arena::ranks::RankArena;
use arena_spec::report::{human_bytes, AllocSummary, PlanReport, SizeReport, StageSummary};
use arena_spec::BufferSizes;

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// A shipped model's name (see `arena models`) or a path to a config.json
    pub model: String,
    #[command(flatten)]
    pub sizing: SizingArgs,
    /// Allocate on a device and check it there: host (real memory, refused when more than
    /// the machine has available), or (in a build with the `cuda` feature) cuda:N, a list
    /// cuda:0,1 (rank r on the (r mod n)-th GPU, concurrently) or cuda:all. Without it the
    /// placement is checked on addresses alone, with no memory behind them
    #[arg(long, value_name = "DEVICE")]
    pub device: Option<DeviceChoice>,
    /// Print one JSON document (`arena_spec::report::PlanReport`) instead of the table
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: PlanArgs) -> Result<(), CliError> {
    let (whole, inputs) = resolve_whole(&args.model, &args.sizing)?;
    let layout_args = &args.sizing.fixed.layout;
    let layout = layout_args.layout()?;
    // Every stage's config and sizes (or only --rank's): a stage's ranks share one size.
    let stages = layout_args.rank_sizes(&whole, &inputs)?;
    let config = RankArena::largest(&stages).config.clone();
    let (report, _) = SizeReport::new(&config, inputs).map_err(size_error(&config))?;
    let ranks: Vec<(usize, BufferSizes)> = match layout_args.rank {
        Some(r) => vec![(r, stages[0].sizes)],
        None => layout
            .ranks()
            .map(|r| (r.index, stages[r.stage()].sizes))
            .collect(),
    };
    let reuse = args.sizing.fixed.reuse;
    let alloc = allocate_ranks(args.device.as_ref(), &ranks, reuse)?;
    let stage_rows: Vec<StageSummary> = stages
        .iter()
        .map(|arena| StageSummary::of(&layout, arena).map_err(size_error(&arena.config)))
        .collect::<Result<_, _>>()?;

    if args.json {
        return print_json(&PlanReport::new(
            &config, report, &layout, stage_rows, alloc,
        ));
    }
    print_inputs(&config, &inputs);
    println!();
    print!("{}", report.table());
    println!();
    let per = if config.shard.is_some() {
        " per GPU"
    } else {
        ""
    };
    println!(
        "{}{per} {} ({} B)",
        bold("total_bytes"),
        human_bytes(report.total_bytes),
        report.total_bytes
    );
    println!(
        "untracked   {} (o_latent, norm_unit_w)",
        human_bytes(report.untracked_bytes)
    );
    println!(
        "reuse       {} ({} B) when buffers of disjoint phases reuse bytes: {} against the plain slab {}; lower bound {} ({:.3}×)",
        human_bytes(report.reuse_bytes),
        report.reuse_bytes,
        crate::diff::saving(report.slab_bytes, report.reuse_bytes),
        human_bytes(report.slab_bytes),
        human_bytes(report.reuse_lower_bound),
        report.reuse_bytes as f64 / report.reuse_lower_bound.max(1) as f64
    );
    if alloc
        .iter()
        .all(|a| a.device == arena_runtime::AddressDevice::NAME)
        && alloc.len() > 1
    {
        print_rank_table(&stage_rows, &alloc, reuse);
    } else {
        for a in &alloc {
            print_allocation(a, ranks.len() > 1);
        }
    }
    Ok(())
}

/// Every rank of a layout, placed without memory, in one table: a row per pipeline stage
/// (its ranks share one size), so a 512-rank layout is a few rows.
fn print_rank_table(stages: &[StageSummary], alloc: &[AllocSummary], reuse: bool) {
    println!();
    println!(
        "{:<14} {:>5} {:>9} {:>13} {:>12} {:>12} {:>15}",
        "ranks",
        "stage",
        "layers",
        "experts/rank",
        "total_bytes",
        "reuse slab",
        if reuse { "placed (reuse)" } else { "placed" }
    );
    for s in stages {
        let placed: Vec<usize> = alloc
            .iter()
            .filter(|a| (s.ranks[0]..=s.ranks[1]).contains(&a.rank))
            .map(|a| a.allocated_bytes)
            .collect();
        let each = match placed.as_slice() {
            [] => "-".to_string(),
            [first, rest @ ..] if rest.iter().all(|b| b == first) => human_bytes(*first),
            _ => "differ".to_string(),
        };
        println!(
            "{:<14} {:>5} {:>9} {:>13} {:>12} {:>12} {:>15}",
            format!("{}..={}", s.ranks[0], s.ranks[1]),
            s.stage,
            format!("{}..{}", s.layers[0], s.layers[1]),
            s.local_experts.map_or("-".to_string(), |e| e.to_string()),
            human_bytes(s.total_bytes),
            human_bytes(s.reuse_bytes),
            each
        );
    }
    println!(
        "placed      every rank's buffers ({} ranks) checked at their sizes, aligned, disjoint{}, gated ones NULL; no memory allocated (--device host or cuda:N allocates)",
        alloc.len(),
        if reuse { " where live together" } else { "" }
    );
}

fn print_allocation(a: &AllocSummary, several: bool) {
    let drop = match (a.free_memory_drop, a.drop_matches_plan) {
        (Some(d), Some(true)) => format!(
            ", free memory dropped {} (the slab in 2 MiB pages)",
            human_bytes(d)
        ),
        (Some(d), _) => format!(
            ", free memory dropped {}, NOT the slab in 2 MiB pages (another process allocating?)",
            human_bytes(d)
        ),
        (None, _) => String::new(),
    };
    let who = if several {
        format!("rank {}: ", a.rank)
    } else {
        String::new()
    };
    let how = if a.reuse {
        "in one reuse slab; every buffer checked at its size, aligned, disjoint from every buffer live in a common phase"
    } else {
        "in one slab; every buffer checked at its size, aligned, disjoint"
    };
    if a.device == arena_runtime::AddressDevice::NAME {
        println!(
            "placed      {who}{} {how}, gated ones NULL; no memory allocated (--device host or cuda:N allocates)",
            human_bytes(a.allocated_bytes)
        );
        return;
    }
    println!(
        "allocated   {who}{} on {} {how}, gated ones NULL; released{drop}",
        human_bytes(a.allocated_bytes),
        a.device
    );
}
