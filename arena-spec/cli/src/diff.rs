//! `arena diff`: two models, one model under two lever sets, or one model under two
//! parallel layouts, side by side.

use crate::common::{
    print_inputs, print_json, resolve, size_error, CliError, LayoutArgs, SizingArgs,
};
use arena_spec::report::{human_bytes, DiffReport, SizeReport};

#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The first model (a shipped name or a config.json path)
    pub model_a: String,
    /// The second model; omit it to compare the first under `--lever-b`
    pub model_b: Option<String>,
    /// Levers of the second side, over those of the first (repeatable)
    #[arg(long = "lever-b", value_name = "NAME=0|1")]
    pub levers_b: Vec<String>,
    /// Tensor-parallel degree of the second side [default: --tp]
    #[arg(long = "tp-b", value_name = "N")]
    pub tp_b: Option<usize>,
    /// Expert-parallel degree of the second side [default: --ep]
    #[arg(long = "ep-b", value_name = "N")]
    pub ep_b: Option<usize>,
    /// Pipeline stages of the second side [default: --pp]
    #[arg(long = "pp-b", value_name = "N")]
    pub pp_b: Option<usize>,
    /// The rank of the second side [default: --rank, else its largest]
    #[arg(long = "rank-b", value_name = "R")]
    pub rank_b: Option<usize>,
    /// Inputs and levers of both sides
    #[command(flatten)]
    pub sizing: SizingArgs,
    /// Print one JSON document (`arena_spec::report::DiffReport`) instead of the table
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: DiffArgs) -> Result<(), CliError> {
    let (config_a, inputs) = resolve(&args.model_a, &args.sizing)?;
    let a_layout = &args.sizing.fixed.layout;
    let mut sizing_b = args.sizing.clone();
    sizing_b.fixed.layout = LayoutArgs {
        tp: args.tp_b.unwrap_or(a_layout.tp),
        ep: args.ep_b.unwrap_or(a_layout.ep),
        pp: args.pp_b.unwrap_or(a_layout.pp),
        rank: args.rank_b.or(a_layout.rank),
    };
    let other_layout = [args.tp_b, args.ep_b, args.pp_b, args.rank_b]
        .iter()
        .any(Option::is_some);
    let (mut config_b, _) = resolve(args.model_b.as_deref().unwrap_or(&args.model_a), &sizing_b)?;
    if args.model_b.is_none() && args.levers_b.is_empty() && !other_layout {
        return Err(CliError::Usage(
            "give a second model, `--lever-b NAME=0|1` to compare lever sets, or \
             `--tp-b/--ep-b/--pp-b N` to compare layouts"
                .into(),
        ));
    }
    for assignment in &args.levers_b {
        config_b.levers.apply(assignment)?;
    }
    let (a, _) = SizeReport::new(&config_a, inputs).map_err(size_error(&config_a))?;
    let (b, _) = SizeReport::new(&config_b, inputs).map_err(size_error(&config_b))?;
    if args.json {
        return print_json(&DiffReport::new((&config_a, &a), (&config_b, &b), inputs));
    }
    print_inputs(&config_a, &inputs);
    print_inputs(&config_b, &inputs);
    println!();
    println!("{:<22} {:>12} {:>12} {:>13}", "buffer", "A", "B", "B - A");
    for (ra, rb) in a.buffers.iter().zip(&b.buffers) {
        let marker = if ra.bytes != rb.bytes { " *" } else { "" };
        println!(
            "{:<22} {:>12} {:>12} {:>13}{marker}",
            ra.name,
            human_bytes(ra.bytes),
            human_bytes(rb.bytes),
            signed(rb.bytes as i128 - ra.bytes as i128)
        );
    }
    println!(
        "{:<22} {:>12} {:>12} {:>13}",
        "total_bytes",
        human_bytes(a.total_bytes),
        human_bytes(b.total_bytes),
        signed(b.total_bytes as i128 - a.total_bytes as i128)
    );
    println!(
        "{:<22} {:>12} {:>12} {:>13}",
        "reuse slab",
        human_bytes(a.reuse_bytes),
        human_bytes(b.reuse_bytes),
        signed(b.reuse_bytes as i128 - a.reuse_bytes as i128)
    );
    println!(
        "{:<22} {:>12} {:>12}",
        "reuse saves",
        saving(a.slab_bytes, a.reuse_bytes),
        saving(b.slab_bytes, b.reuse_bytes),
    );
    Ok(())
}

/// `-45.6%`: how much smaller the reuse slab is than the plain one.
pub fn saving(slab: usize, reuse: usize) -> String {
    if slab == 0 {
        return "0%".into();
    }
    format!("-{:.1}%", 100.0 * (1.0 - reuse as f64 / slab as f64))
}

fn signed(delta: i128) -> String {
    match delta {
        0 => "0".into(),
        d if d > 0 => format!("+{}", human_bytes(d as usize)),
        d => format!("-{}", human_bytes(d.unsigned_abs() as usize)),
    }
}
