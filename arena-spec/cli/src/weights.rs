//! `arena weights check DIR` and `arena weights load DIR`: a checkpoint's tensors matched to
//! the weight declarations (headers only, no weight byte read), and loaded into the six
//! weight arenas on a device with a progress bar.

use crate::common::{CliError, LayoutArgs};
use crate::device::DeviceChoice;
use arena_runtime::Device;
use arena_spec::weights::checkpoint::{
    load, tensor_table, verify, Checkpoint, CheckpointError, LoadPlan, Loaded,
};
use arena_spec::weights::{AllocatedWeights, WeightsSizes};
use arena_spec::ModelConfig;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct WeightsArgs {
    #[command(subcommand)]
    command: WeightsCommand,
}

#[derive(Debug, clap::Subcommand)]
enum WeightsCommand {
    /// Match a checkpoint's tensors to the weight declarations (config.json, the index and
    /// the safetensors headers only): every tensor with its place, what is skipped and why,
    /// the checkpoint's bytes against the plan's. Exits non-zero on a mismatch.
    Check(CheckArgs),
    /// Load a checkpoint into the six weight arenas on a device, every tensor checked first,
    /// and print the rate.
    Load(LoadArgs),
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// A checkpoint directory (config.json with model.safetensors.index.json or model.safetensors)
    dir: PathBuf,
    /// Print one JSON document instead of the table: `schema_version`, `config`, `files`,
    /// and the match (`arena_spec::weights::checkpoint::LoadPlan`: placed, skipped,
    /// problems, stored_bytes, planned_bytes)
    #[arg(long)]
    json: bool,
    /// The rank whose share is matched (`--rank` defaults to 0 here)
    #[command(flatten)]
    layout: LayoutArgs,
}

#[derive(Debug, clap::Args)]
struct LoadArgs {
    /// A checkpoint directory (config.json with model.safetensors.index.json or model.safetensors)
    dir: PathBuf,
    /// Where the weights are allocated: host or cuda:N
    #[arg(long, default_value = "host")]
    device: DeviceChoice,
    /// Read every place back after loading and compare it with the checkpoint
    #[arg(long)]
    verify: bool,
    /// The rank whose share is loaded (`--rank` defaults to 0 here)
    #[command(flatten)]
    layout: LayoutArgs,
}

pub fn run(args: WeightsArgs) -> Result<(), CliError> {
    match args.command {
        WeightsCommand::Check(a) => check(a),
        WeightsCommand::Load(a) => load_on(a),
    }
}

/// The rank's config, the sizes an engine allocates (the vocabulary padded), the checkpoint
/// opened and matched.
fn matched(
    dir: &Path,
    layout: &LayoutArgs,
) -> Result<(ModelConfig, WeightsSizes, Checkpoint, LoadPlan), CliError> {
    let whole = ModelConfig::load(dir.join("config.json"))?;
    let parallel = layout.layout()?;
    let config = match parallel.tp * parallel.pp {
        1 => whole,
        _ => whole.shard(&parallel.rank(layout.rank.unwrap_or(0))?)?,
    };
    let sizes = WeightsSizes::new(&config, &config.weight_formats)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let table = tensor_table(&config, &sizes).map_err(checkpoint)?;
    let ckpt = Checkpoint::open(dir).map_err(checkpoint)?;
    let plan = LoadPlan::new(
        &config,
        &table,
        ckpt.tensors(),
        ckpt.files(),
        &config.weight_formats,
    );
    Ok((config, sizes, ckpt, plan))
}

fn checkpoint(e: CheckpointError) -> CliError {
    CliError::Checkpoint(e.to_string())
}

fn check(args: CheckArgs) -> Result<(), CliError> {
    let (config, sizes, ckpt, plan) = matched(&args.dir, &args.layout)?;
    if args.json {
        #[derive(serde::Serialize)]
        struct CheckReport<'a> {
            schema_version: u32,
            config: String,
            files: Vec<String>,
            #[serde(flatten)]
            plan: &'a LoadPlan,
        }
        crate::common::print_json(&CheckReport {
            schema_version: arena_spec::report::SCHEMA_VERSION,
            config: config.source.to_string(),
            files: ckpt
                .files()
                .iter()
                .map(|f| f.display().to_string())
                .collect(),
            plan: &plan,
        })?;
    } else {
        print_table(&config, &sizes, &ckpt, &plan);
    }
    match plan.problems.len() {
        0 => Ok(()),
        n => Err(CliError::Checkpoint(format!(
            "{}: {n} tensor{} do not match the weight declarations",
            args.dir.display(),
            if n == 1 { "" } else { "s" }
        ))),
    }
}

fn print_table(config: &ModelConfig, sizes: &WeightsSizes, ckpt: &Checkpoint, plan: &LoadPlan) {
    println!(
        "{} ({:?}, {} layers): {} file{}, {} tensors",
        config.source,
        config.family,
        config.num_hidden_layers,
        ckpt.files().len(),
        if ckpt.files().len() == 1 { "" } else { "s" },
        ckpt.tensors().len()
    );
    if let Some(rank) = crate::common::rank_line(config) {
        println!("{rank}");
    }
    println!("\n{:<64} {:<8} {:<18} place", "tensor", "dtype", "shape");
    for placed in &plan.placed {
        for part in &placed.parts {
            let t = &ckpt.tensors()[&part.tensor];
            println!(
                "{:<64} {:<8} {:<18} {} +{}",
                part.tensor,
                t.dtype,
                format!("{:?}", t.shape),
                placed.slot.place(),
                placed.slot.offset + part.offset
            );
        }
    }
    if !plan.skipped.is_empty() {
        println!("\nskipped ({}):", plan.skipped.len());
        for s in &plan.skipped {
            println!("  {:<62} {}", s.tensor, s.reason);
        }
    }
    if !plan.problems.is_empty() {
        println!("\nproblems ({}):", plan.problems.len());
        for p in &plan.problems {
            println!("  {p}");
        }
    }
    let zeroed: u64 = plan.placed.iter().map(|p| p.zero_fill as u64).sum();
    let skipped: u64 = plan.skipped.iter().map(|s| s.bytes as u64).sum();
    println!(
        "\nbytes: checkpoint {} placed + {} skipped; plan {} ({} the vocabulary's padding rows, zeroed)",
        plan.stored_bytes,
        skipped,
        sizes.total_bytes(),
        zeroed
    );
}

fn load_on(args: LoadArgs) -> Result<(), CliError> {
    match args.device {
        DeviceChoice::Host => load_into(arena_runtime::HostDevice::new(), &args),
        #[cfg(feature = "cuda")]
        DeviceChoice::Cuda(ref gpus) if gpus.len() == 1 => {
            let device = arena_runtime::CudaDevice::new(gpus[0])
                .map_err(|e| CliError::Device(format!("cuda:{}: {e}", gpus[0])))?;
            load_into(device, &args)
        }
        #[cfg(feature = "cuda")]
        _ => Err(CliError::Usage(
            "weights load takes one device: host or cuda:N".into(),
        )),
        #[cfg(not(feature = "cuda"))]
        _ => Err(CliError::Usage(
            "this arena was built without the `cuda` feature: weights load runs on host".into(),
        )),
    }
}

fn load_into<D: Device + Clone>(device: D, args: &LoadArgs) -> Result<(), CliError> {
    let (config, sizes, ckpt, plan) = matched(&args.dir, &args.layout)?;
    if !plan.problems.is_empty() {
        for p in &plan.problems {
            eprintln!("  {p}");
        }
        return Err(checkpoint(CheckpointError::Mismatch {
            problems: plan.problems,
        }));
    }
    let name = device.name();
    let mut weights = AllocatedWeights::allocate(device, &sizes)?;
    let bar = indicatif::ProgressBar::new(plan.stored_bytes).with_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {eta}",
        )
        .expect("a valid template"),
    );
    let start = Instant::now();
    let loaded = load(&ckpt, &plan, &mut weights, &mut |done, _| {
        bar.set_position(done)
    });
    let seconds = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let Loaded {
        tensors,
        bytes,
        zeroed,
    } = loaded.map_err(checkpoint)?;
    let verified = match args.verify {
        true => Some(verify(&ckpt, &plan, &weights).map_err(checkpoint)?),
        false => None,
    };
    weights.release()?;
    println!(
        "{}: {tensors} tensors, {bytes} bytes into {} bytes of weight arenas on {name} ({zeroed} padding bytes zeroed) in {seconds:.3} s: {:.2} GB/s",
        config.source,
        sizes.total_bytes(),
        bytes as f64 / seconds.max(1e-9) / 1e9
    );
    if let Some(n) = verified {
        println!("verified: {n} bytes read back, each place equal to the checkpoint's");
    }
    Ok(())
}
