//! `arena plan`: size, allocate, check, release, report.

use super::common::{bold, print_inputs, resolve, size_error, CliError, SizingArgs};
use super::device::{allocate_and_check, DeviceChoice};
use arena_spec::report::{human_bytes, SizeReport};

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// A shipped model's name (see `arena models`) or a path to a config.json
    pub model: String,
    #[command(flatten)]
    pub sizing: SizingArgs,
    /// Where to allocate: host, or cuda:N in a build with the `cuda` feature
    #[arg(long, default_value = "host", value_name = "DEVICE")]
    pub device: DeviceChoice,
    /// Print one JSON document instead of the table
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: PlanArgs) -> Result<(), CliError> {
    let (config, inputs) = resolve(&args.model, &args.sizing)?;
    let (report, sizes) = SizeReport::new(&config, inputs).map_err(size_error(&config))?;
    let alloc = allocate_and_check(args.device, &sizes)?;
    if args.json {
        let doc = serde_json::json!({
            "model": report.model,
            "model_type": config.model_type,
            "inputs": report.inputs,
            "levers": report.levers,
            "buffers": report.buffers,
            "total_bytes": report.total_bytes,
            "untracked_bytes": report.untracked_bytes,
            "allocation": alloc,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("plain data serializes")
        );
        return Ok(());
    }
    print_inputs(&config, &inputs);
    println!();
    print!("{}", report.table());
    println!();
    println!(
        "{} {} ({} B)",
        bold("total_bytes"),
        human_bytes(report.total_bytes),
        report.total_bytes
    );
    println!(
        "untracked   {} (o_latent, norm_unit_w)",
        human_bytes(report.untracked_bytes)
    );
    let drop = alloc
        .free_memory_drop
        .map(|d| format!(", free memory dropped {}", human_bytes(d)))
        .unwrap_or_default();
    println!(
        "allocated   {} on {} in one slab; every buffer checked at its size, aligned, disjoint, gated ones NULL; released{drop}",
        human_bytes(alloc.allocated_bytes),
        alloc.device
    );
    Ok(())
}
