//! `arena gpu-plan <model> --gpu-memory 141GiB` (or `--device cuda:N`): the whole GPU's plan — weights,
//! activation arena, state cache and reserve on each rank, the KV pool in what is left, and
//! how many blocks, tokens and sequences at the context that gives (`arena_spec::gpu_plan`).

use crate::common::{bold, print_inputs, print_json, resolve_whole, CliError, SizingArgs};
use crate::device::DeviceChoice;
use arena_spec::gpu_plan::{
    plan_gpu, Binds, GpuPlan, GpuPlanInputs, PoolBlocks, GRAPH_SOURCE, NCCL_SOURCE, RESERVE_BYTES,
    RESERVE_SOURCE,
};
use arena_spec::report::{human_bytes, parse_bytes, GpuPlanReport, SCHEMA_VERSION};
use arena_spec::{
    FormatSource, KvDtype, ModelConfig, Mxfp4Backend, StateDtype, Tower, Towers, WeightFormat,
    WeightPart,
};

/// `arena gpu-plan`'s arguments.
#[derive(Debug, clap::Args)]
pub struct GpuPlanArgs {
    /// A shipped model's name (see `arena models`) or a path to a config.json (or a
    /// checkpoint directory holding one)
    pub model: String,
    #[command(flatten)]
    pub gpu: GpuArgs,
    #[command(flatten)]
    pub sizing: SizingArgs,
    /// Print one JSON document (`arena_spec::report::GpuPlanReport`) instead of the text
    #[arg(long)]
    pub json: bool,
}

/// The whole-GPU flags.
#[derive(Debug, clap::Args)]
pub struct GpuArgs {
    /// The memory of one GPU (e.g. 141GiB, 80GB): weights + arena + state cache + reserve,
    /// the KV pool in the rest
    #[arg(long, value_parser = parse_bytes, conflicts_with = "device", required_unless_present = "device")]
    pub gpu_memory: Option<usize>,
    /// Plan a whole GPU of the memory this device reports (cuda:N; a build with the `cuda`
    /// feature)
    #[arg(long, value_name = "cuda:N")]
    pub device: Option<DeviceChoice>,
    /// Bytes kept on every GPU for what the plan does not size [default: the CUDA context
    /// and cuBLAS workspace measured on an H200, see `arena_spec::gpu_plan::RESERVE_BYTES`]
    #[arg(long, value_parser = parse_bytes)]
    pub reserve: Option<usize>,
    /// The cached keys' and values' element type
    #[arg(long, value_enum, default_value = "bf16")]
    pub kv_dtype: KvDtypeArg,
    /// One rank's weight bytes, where you know them better than the weights sized at the
    /// checkpoint's format (required where its format or family is not planned)
    #[arg(long, value_parser = parse_bytes)]
    pub weights_bytes: Option<usize>,
    /// The GDN / Mamba-2 recurrent states' dtype: the file's as vLLM reads it
    /// (mamba_ssm_cache_dtype, mamba_ssm_dtype, the family's default), or an override
    #[arg(long, value_enum, default_value = "config")]
    pub state_dtype: StateDtypeArg,
    /// The MoE backend MXFP4 experts run on, which pads them (vLLM picks triton on
    /// H100/H200, marlin on A100, flashinfer-trtllm on B200)
    #[arg(long, value_enum, default_value = "triton")]
    pub mxfp4_backend: Mxfp4BackendArg,
    /// NCCL's memory kept on every GPU of a layout of more than one (default: its tp group's
    /// communicator and, under pp, a pipeline neighbour's, as NCCL 2.26's source sizes them on
    /// an H200 node); 0 to keep none
    #[arg(long, value_parser = bytes_or_none)]
    pub nccl_reserve: Option<usize>,
    /// The batch sizes the engine captures the decode step at as CUDA graphs, one graph each
    /// (e.g. 1,2,4,8,16; each at most --max-batch-size): what they take is kept beside the
    /// reserve
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "SIZES",
        requires = "graph_nodes"
    )]
    pub graphs: Vec<usize>,
    /// The kernel nodes of one captured decode step: the kernels and copies your engine
    /// launches in one step (with --graphs)
    #[arg(long, value_name = "N", requires = "graphs")]
    pub graph_nodes: Option<usize>,
    /// Load the checkpoint's multi-token-prediction layers (weights and KV), as an engine
    /// speculating with them does
    #[arg(long)]
    pub mtp: bool,
    /// Plan the text model alone: leave out the vision and audio towers of a multimodal
    /// file (loaded by default, as an engine serving its images or audio loads them)
    #[arg(long)]
    pub text_only: bool,
    /// Also draw each rank's memory as a stacked bar into FILE (SVG): weights, arena, state
    /// cache, KV pool, reserve, what is left
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<std::path::PathBuf>,
}

/// `--mxfp4-backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mxfp4BackendArg {
    /// Width to 64, hidden kept (vLLM's default on H100/H200)
    Triton,
    /// Width to 128, hidden to 256 (A100, or no Triton kernels)
    Marlin,
    /// Width to 128, hidden to 256 (B200)
    FlashinferTrtllm,
    /// Width and hidden to 128
    Cutlass,
}

impl Mxfp4BackendArg {
    fn backend(self) -> Mxfp4Backend {
        match self {
            Mxfp4BackendArg::Triton => Mxfp4Backend::Triton,
            Mxfp4BackendArg::Marlin => Mxfp4Backend::Marlin,
            Mxfp4BackendArg::FlashinferTrtllm => Mxfp4Backend::FlashinferTrtllm,
            Mxfp4BackendArg::Cutlass => Mxfp4Backend::Cutlass,
        }
    }
}

/// `--state-dtype`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StateDtypeArg {
    /// The config's (its key, else the family's default in vLLM)
    Config,
    /// FP32, whatever the config says
    F32,
    /// The model's 16-bit dtype, whatever the config says
    Bf16,
}

impl StateDtypeArg {
    /// The plan's override: none for `config`.
    pub fn override_dtype(self) -> Option<StateDtype> {
        match self {
            StateDtypeArg::Config => None,
            StateDtypeArg::F32 => Some(StateDtype::F32),
            StateDtypeArg::Bf16 => Some(StateDtype::Bf16),
        }
    }
}

/// `--kv-dtype`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KvDtypeArg {
    /// The model's 16-bit dtype
    Bf16,
    /// FP8 (scales kept outside the pool)
    Fp8,
}

/// The memory of one GPU: `--gpu-memory`, or `--device cuda:N`'s total.
fn gpu_bytes(args: &GpuArgs) -> Result<u64, CliError> {
    if let Some(b) = args.gpu_memory {
        return Ok(b as u64);
    }
    match &args.device {
        Some(DeviceChoice::Cuda(ordinals)) if ordinals.len() == 1 => device_total(ordinals[0]),
        _ => Err(CliError::Usage(
            "--device plans with one GPU's memory: give cuda:N (or --gpu-memory)".into(),
        )),
    }
}

#[cfg(feature = "cuda")]
fn device_total(ordinal: usize) -> Result<u64, CliError> {
    use arena_runtime::{CudaDevice, Device};
    if !CudaDevice::available() {
        return Err(CliError::Device("no CUDA driver or device".into()));
    }
    let device = CudaDevice::new(ordinal)
        .map_err(|e| CliError::Device(format!("cannot open cuda:{ordinal}: {e}")))?;
    let info = device
        .mem_info()
        .ok_or_else(|| CliError::Device(format!("cuda:{ordinal} reports no memory")))?;
    Ok(info.total as u64)
}

#[cfg(not(feature = "cuda"))]
fn device_total(_ordinal: usize) -> Result<u64, CliError> {
    Err(CliError::Device(
        "this build has no CUDA support: rebuild with `--features cuda`, or give --gpu-memory"
            .into(),
    ))
}

/// The plan of `args.model` on the GPU its flags describe.
pub fn run(args: GpuPlanArgs) -> Result<(), CliError> {
    let (model, sizing, g, json) = (args.model.as_str(), &args.sizing, &args.gpu, args.json);
    if sizing.fixed.layout.rank.is_some() {
        return Err(CliError::Usage(
            "--rank: a whole-GPU plan covers every rank of the layout (each has its row)".into(),
        ));
    }
    let (whole, arena) = resolve_whole(model, sizing)?;
    let inputs = GpuPlanInputs {
        reserve_bytes: g.reserve.map_or(RESERVE_BYTES, |b| b as u64),
        nccl_bytes: g.nccl_reserve.map(|b| b as u64),
        graphs: graph_count(&g.graphs, arena.max_batch_size)?,
        graph_nodes: g.graph_nodes.unwrap_or(0),
        reuse_arena: sizing.fixed.reuse,
        state_dtype: g.state_dtype.override_dtype(),
        mxfp4_backend: g.mxfp4_backend.backend(),
        mtp: g.mtp,
        text_only: g.text_only,
        kv_dtype: match g.kv_dtype {
            KvDtypeArg::Bf16 => KvDtype::Bf16,
            KvDtypeArg::Fp8 => KvDtype::Fp8,
        },
        weights_bytes_per_rank: g.weights_bytes.map(|b| b as u64),
        ..GpuPlanInputs::new(gpu_bytes(g)?, arena)
    };
    let layout = sizing.fixed.layout.layout()?;
    let plan = plan_gpu(&whole, &layout, inputs).map_err(|e| CliError::Usage(e.to_string()))?;
    let reserve_source = if g.reserve.is_some() {
        "--reserve"
    } else {
        RESERVE_SOURCE
    };
    if let Some(path) = &g.plot {
        let title = format!("{} — {layout} — {}", whole.source, whole.model_type);
        let svg = crate::gpu_plan_plot::draw(&title, &plan).map_err(|reason| CliError::Output {
            path: path.display().to_string(),
            reason,
        })?;
        crate::sweep::write_whole(path, svg.as_bytes()).map_err(|e| CliError::Output {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
    }
    if json {
        return print_json(&GpuPlanReport {
            schema_version: SCHEMA_VERSION,
            model: whole.source.to_string(),
            model_type: whole.model_type.to_string(),
            reserve_source,
            towers: whole.towers,
            weight_formats: whole.weight_formats.clone(),
            plan,
        });
    }
    print_inputs(&whole, &arena);
    println!(
        "{} GPU {} ({}) each, {layout}, KV {:?}, arena {}",
        bold("plan:"),
        inputs.gpu_bytes,
        human_bytes(inputs.gpu_bytes as usize),
        inputs.kv_dtype,
        if inputs.reuse_arena {
            "as its reuse slab"
        } else {
            "as one plain slab (--reuse lets phases reuse its bytes)"
        }
    );
    println!();
    println!(
        "| rank | weights | arena | state cache | reserve | KV budget | a sequence: blocks (full/sliding/csa/hca), bytes | its pool's blocks | sequences it could hold |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let h = |b: u64| human_bytes(b as usize);
    let counts = |b: &PoolBlocks| format!("{}/{}/{}/{}", b.full, b.sliding, b.csa, b.hca);
    for r in &plan.ranks {
        println!(
            "| {}{} | {} | {} | {} | {} | {} | {}, {} | {} | {} |",
            r.rank,
            if r.rank == plan.binding_rank { "*" } else { "" },
            h(r.weights_bytes),
            h(r.arena_bytes),
            h(r.state_bytes),
            h(r.reserve_bytes),
            h(r.kv_budget_bytes),
            counts(&r.sequence_blocks),
            h(r.sequence_bytes),
            counts(&r.pool),
            r.most_sequences,
        );
    }
    crate::gpu_plan_figures::print(&plan, arena.kv_block_size);
    println!();
    let b = &plan.blocks;
    let tokens = match plan.tokens {
        Some(t) => format!(
            "{} blocks of {} tokens = {t} tokens",
            b.full, arena.kv_block_size
        ),
        None => "no full-length KV layers".to_string(),
    };
    let others: Vec<String> = [
        (b.sliding, "window (sliding or chunked)"),
        (b.csa, "CSA-entry"),
        (b.hca, "HCA-entry"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what} blocks"))
    .collect();
    let others = if others.is_empty() {
        String::new()
    } else {
        format!(" (+ {})", others.join(", "))
    };
    let binds = match plan.binds {
        Binds::FullBlocks => "the KV pool's full-layer blocks",
        Binds::Sequences => "the KV pool, a sequence of every kind's blocks at a time",
        Binds::StateSlots => "the state cache's slots (--max-batch-size)",
        Binds::NoKv => "the state cache's slots: no layer keeps keys and values",
    };
    let exact = plan.ranks[plan.binding_rank].pool_exact_bytes;
    println!(
        "{} {tokens}{others}; {} sequences of {} tokens, bound by {binds}; KV pool {} ({exact} B before page rounding) a GPU (rank {} binds{})",
        bold("fits:"),
        plan.sequences,
        inputs.arena.max_seq_len,
        h(plan.kv_pool_bytes),
        plan.binding_rank,
        if plan.ranks.len() > 1 {
            ", marked *"
        } else {
            ""
        },
    );
    println!(
        "{} {} kept a GPU: {}",
        bold("reserve:"),
        h(inputs.reserve_bytes),
        reserve_source
    );
    let nccl = plan.ranks.iter().map(|r| r.nccl_bytes).max().unwrap_or(0);
    if nccl > 0 || g.nccl_reserve.is_some() {
        let source = match g.nccl_reserve {
            Some(_) => "--nccl-reserve",
            None => NCCL_SOURCE,
        };
        println!("{} {} a GPU besides: {source}", bold("nccl:"), h(nccl));
    }
    if !g.graphs.is_empty() {
        let graphs = plan.ranks.iter().map(|r| r.graph_bytes).max().unwrap_or(0);
        println!(
            "{} {} graphs ({}) of {} nodes, {} a GPU besides: {GRAPH_SOURCE}",
            bold("cuda graphs:"),
            g.graphs.len(),
            g.graphs
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            inputs.graph_nodes,
            h(graphs)
        );
    }
    let loaded: usize = plan.ranks.iter().map(|r| r.mtp_layers).max().unwrap_or(0);
    match (whole.mtp_layers, loaded) {
        (0, _) => {}
        (n, 0) => println!(
            "{} the file's {n} multi-token-prediction layer(s) are left out (--mtp loads them)",
            bold("mtp:")
        ),
        (_, n) => println!(
            "{} {n} multi-token-prediction layer(s) loaded: their weights on the last stage, \
             their keys and values in the pool",
            bold("mtp:")
        ),
    }
    if let Some(line) = formats_line(&whole, &plan) {
        println!("{} {line}", bold("weights:"));
    }
    if let Some(line) = towers_line(&whole.towers, &plan) {
        println!("{} {line}", bold("towers:"));
    }
    if let Some(path) = &g.plot {
        println!("\nplot written to {}", path.display());
    }
    Ok(())
}

/// What the plan did with the file's vision and audio towers, in one line; `None` for a
/// text-only file.
fn towers_line(towers: &Towers, plan: &GpuPlan) -> Option<String> {
    let named =
        |which: &str, t: Option<Tower>| t.map(|t| format!("{which} ({} parameters)", t.params));
    let names: Vec<String> = [named("vision", towers.vision), named("audio", towers.audio)]
        .into_iter()
        .flatten()
        .collect();
    if names.is_empty() {
        return None;
    }
    let names = names.join(" and ");
    let loaded = plan.ranks.iter().map(|r| r.towers_bytes).max().unwrap_or(0);
    Some(if plan.inputs.weights_bytes_per_rank.is_some() {
        format!("{names}: within the given --weights-bytes")
    } else if plan.inputs.text_only {
        format!("{names}: left out (--text-only)")
    } else {
        format!(
            "{names}: {} in the weights of each first-stage rank (--text-only leaves them out)",
            human_bytes(loaded as usize)
        )
    })
}

/// The checkpoint's formats, a part at a time, and where they were read; `None` for a 16-bit
/// checkpoint or given weight bytes.
fn formats_line(whole: &ModelConfig, plan: &GpuPlan) -> Option<String> {
    let formats = &whole.weight_formats;
    let held = whole.weight_parts();
    if plan.inputs.weights_bytes_per_rank.is_some() || formats.source == FormatSource::None {
        return None;
    }
    // Parts of one format together: "attention, experts: NVFP4 (16); the rest: 16 bits".
    let mut groups: Vec<(WeightFormat, Vec<&str>)> = Vec::new();
    for (part, format) in formats.parts() {
        if !held.contains(&part) {
            continue;
        }
        let name = match part {
            WeightPart::Attention => "attention",
            WeightPart::AttentionOut => "attention output",
            WeightPart::Mixers => "mixers",
            WeightPart::DenseFfn => "dense FFN",
            WeightPart::Experts => "routed experts",
            WeightPart::SharedExperts => "shared experts",
            WeightPart::Other => "other linears",
        };
        match groups.iter_mut().find(|(f, _)| *f == format) {
            Some((_, names)) => names.push(name),
            None => groups.push((format, vec![name])),
        }
    }
    let spoken: Vec<String> = groups
        .iter()
        .map(|(f, names)| format!("{} {}", names.join(", "), format_name(*f)))
        .collect();
    let source = match formats.source {
        FormatSource::HfQuantConfig => "hf_quant_config.json",
        FormatSource::Given => "given",
        _ => "quantization_config",
    };
    let mtp = if formats.mtp_16_bit {
        "; MTP layers 16-bit"
    } else {
        ""
    };
    Some(format!(
        "{}{mtp}; embeddings, head, norms and routers 16-bit (read from {source})",
        spoken.join("; ")
    ))
}

/// A format as the text names it.
fn format_name(f: WeightFormat) -> String {
    match f {
        WeightFormat::Bf16 => "16-bit".into(),
        WeightFormat::Fp8Block { rows, cols } => format!("FP8 ({rows}x{cols} blocks)"),
        WeightFormat::Fp8Tensor => "FP8 (per-tensor scales)".into(),
        WeightFormat::Fp8Channel => "FP8 (per-channel scales)".into(),
        WeightFormat::Int8 { per_channel: true } => "INT8 (per-channel scales)".into(),
        WeightFormat::Int8 { per_channel: false } => "INT8 (per-tensor scales)".into(),
        WeightFormat::Nvfp4 { group } => format!("NVFP4 (groups of {group})"),
        WeightFormat::Mxfp8 => "MXFP8".into(),
        WeightFormat::IntGroup { bits, group, .. } => format!("INT{bits} (groups of {group})"),
        WeightFormat::Mxfp4Experts { .. } => "MXFP4".into(),
        WeightFormat::Unplanned => "not planned".into(),
    }
}

/// `--graphs`: one graph a batch size, each size from 1 to the step's sequences, none twice.
fn graph_count(sizes: &[usize], max_batch_size: usize) -> Result<usize, CliError> {
    let mut seen = std::collections::BTreeSet::new();
    for &size in sizes {
        if size == 0 || size > max_batch_size {
            return Err(CliError::Usage(format!(
                "--graphs: a graph of {size} sequences; the step holds 1 to {max_batch_size} \
                 (--max-batch-size)"
            )));
        }
        if !seen.insert(size) {
            return Err(CliError::Usage(format!(
                "--graphs: {size} is given twice; an engine captures one graph a batch size"
            )));
        }
    }
    Ok(sizes.len())
}

/// A byte count, or `0` for none (`--nccl-reserve 0`: a layout whose engine keeps NCCL's
/// buffers elsewhere, or the single-GPU figure).
fn bytes_or_none(s: &str) -> Result<usize, String> {
    match s.trim() {
        "0" => Ok(0),
        _ => parse_bytes(s),
    }
}
