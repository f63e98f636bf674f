//! A decoder forward pass run entirely in the engine's `BufferArena`, checked against
//! transformers on the same weights.
//!
//! ```sh
//! cargo run -p arena-spec --release --example forward -- qwen3-0.6b-2l [--reuse] [--weights DIR]
//! cargo run -p arena-spec --release --features cuda --example forward -- qwen3-0.6b-2l --gpu [--graph | --time N]
//! ```
//!
//! The model is a shipped config cut to a few layers (`qwen3-0.6b-2l`, `qwen3-30b-a3b-2l`; the
//! hybrid `qwen3.5-27b-4l` and its narrow-width cut `qwen3.5-27b-narrow-4l`); its
//! weights are loaded into the weight arenas from a checkpoint: the one `reference.py` saved
//! in `DIR/<model>/` with `--weights DIR`, else one written from the weights' formula
//! (`weights.rs`); the outputs are compared with the committed reference
//! (`reference/<model>.<device>.json`: `cpu` on the host, `h200` (else `h100`) with `--gpu`; `--reference
//! FILE` for another). `--reuse` runs in a reuse slab (phases reusing bytes); every phase is
//! poisoned as it begins unless `--no-poison`. `--gpu` runs the step on CUDA device 0 (NVRTC
//! kernels and cuBLAS over the arena's views, `gpu.rs`); `--graph` replays the decode steps
//! from a CUDA graph captured once; `--time N` prints prefill and decode times over N
//! interleaved rounds, slab against one allocation per buffer; `--serve` serves four
//! sequences of different lengths together instead (`serve.rs`); `--graph-memory 1,2,4,8`
//! measures what capturing the decode step as a CUDA graph costs at each batch size; `--tp N`
//! splits the step over N tensor-parallel ranks on the host, reducing between them (with
//! `--gpu`, rank r on CUDA device r, reducing through NCCL); `forward SHIPPED --at-limits`
//! plans a shipped model at its full depth over the whole GPU and runs it at the plan's
//! limits (`limits.rs`). The step is `step.rs` (a delta-net layer's `step_delta.rs`), its ops
//! `ops.rs`, on the host `kernels.rs`.

mod compare;
mod delta_net;
#[cfg(feature = "cuda")]
mod gpu;
#[cfg(feature = "cuda")]
mod gpu_delta;
#[cfg(feature = "cuda")]
mod gpu_launch;
#[cfg(feature = "cuda")]
mod gpu_run;
#[cfg(feature = "cuda")]
mod gpu_setup;
mod host_comm;
mod host_io;
mod host_math;
mod kernels;
#[cfg(feature = "cuda")]
mod limits;
mod model;
mod ops;
mod params;
mod run;
mod serve;
mod step;
mod step_delta;
mod weights;

use arena_runtime::AllocOptions;
use run::Run;
use std::path::{Path, PathBuf};

fn main() {
    if let Err(e) = run() {
        eprintln!("forward: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut model, mut weights_dir, mut reference, mut reuse, mut poison) =
        (None, None, None, false, true);
    let (mut gpu, mut graph, mut time, mut serving) = (false, false, None, false);
    let mut graph_sizes: Option<Vec<usize>> = None;
    let mut tp = 1;
    let mut at_limits = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--reuse" => reuse = true,
            "--gpu" => gpu = true,
            "--graph" => graph = true,
            "--serve" => serving = true,
            "--at-limits" => at_limits = true,
            "--tp" => tp = args.next().ok_or("--tp N")?.parse::<usize>()?,
            "--graph-memory" => {
                let list = args.next().ok_or("--graph-memory 1,2,4,...")?;
                let sizes = list
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<Vec<usize>, _>>()?;
                graph_sizes = Some(sizes);
            }
            "--time" => time = Some(args.next().ok_or("--time ROUNDS")?.parse::<usize>()?),
            "--no-poison" => poison = false,
            "--weights" => weights_dir = Some(PathBuf::from(args.next().ok_or("--weights DIR")?)),
            "--reference" => {
                reference = Some(PathBuf::from(args.next().ok_or("--reference FILE")?))
            }
            name if !name.starts_with('-') => model = Some(name.to_string()),
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let model = model.ok_or(
        "usage: forward MODEL [--reuse] [--no-poison] [--weights DIR] [--reference FILE] \
         [--serve] [--tp N] [--gpu [--graph | --time ROUNDS]] | forward SHIPPED --at-limits",
    )?;
    if at_limits {
        return limits(&model);
    }
    if (graph || time.is_some()) && !gpu {
        return Err("--graph and --time run on the GPU: add --gpu".into());
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/forward/reference");
    let reference = reference.unwrap_or_else(|| match gpu {
        true => run::gpu_reference(&here, &model),
        false => here.join(format!("{model}.cpu.json")),
    });
    let run = Run::new(&model, weights_dir.as_deref(), &reference)?;
    let options = if reuse {
        AllocOptions::reuse()
    } else {
        AllocOptions::default()
    };
    if serving {
        return serve::demo(&run, options, gpu);
    }
    if let Some(sizes) = graph_sizes {
        return graph_memory(&run, &sizes);
    }
    let outputs = if tp > 1 && !gpu {
        Some(run.outputs_tp(tp, options, poison)?)
    } else if gpu && tp > 1 {
        Some(tp_on_gpu(&run, tp, options, poison)?)
    } else if gpu {
        on_gpu(&run, options, poison, graph, time)?
    } else {
        Some(run.outputs(options, poison)?)
    };
    if let Some(outputs) = outputs {
        run.report(&outputs);
        // Every argmax and every logit of a position routed as the reference routed it
        // within the tolerance; the report above names the positions routed otherwise.
        let agreement = run.check(&outputs, usize::MAX)?;
        println!(
            "within the tolerance: {} positions, largest |Δ| {:.5}, largest mean |Δ| {:.5}, \
             {} routed otherwise, {} argmax near ties",
            agreement.positions,
            agreement.max_abs,
            agreement.mean_abs,
            agreement.flips,
            agreement.ties
        );
    }
    Ok(())
}

#[cfg(feature = "cuda")]
fn on_gpu(
    run: &Run,
    options: AllocOptions,
    poison: bool,
    graph: bool,
    time: Option<usize>,
) -> Result<Option<run::Outputs>, Box<dyn std::error::Error>> {
    let device = arena_runtime::CudaDevice::new(0)?;
    let stream = device.context().new_stream()?;
    if let Some(rounds) = time {
        gpu_run::time(run, &stream, rounds)?;
        return Ok(None);
    }
    let ops = gpu::GpuOps::new(&stream, &run.decoder, run.reference.tokens.len())?;
    let device = arena_runtime::CudaDevice::from_stream(&stream);
    let eager = run.outputs_on(device, ops, options, poison)?;
    if graph {
        let replayed = gpu_run::outputs_with_graph(run, &stream, options, poison)?;
        let bits = |l: &[Vec<f32>]| l.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
        let same = bits(&replayed) == bits(&eager.logits);
        println!(
            "{} decode steps replayed from one captured graph: {}",
            run.reference.tokens.len() - run.reference.prefill,
            if same {
                "bit-identical to eager"
            } else {
                "DIFFER from eager"
            }
        );
        if !same {
            return Err("graph replay differs from eager execution".into());
        }
    }
    Ok(Some(eager))
}

#[cfg(feature = "cuda")]
fn limits(model: &str) -> Result<(), Box<dyn std::error::Error>> {
    limits::at_limits(model)
}

#[cfg(not(feature = "cuda"))]
fn limits(_: &str) -> Result<(), Box<dyn std::error::Error>> {
    Err("--at-limits runs on the GPU: it needs the cuda feature".into())
}

#[cfg(feature = "cuda")]
fn graph_memory(run: &Run, sizes: &[usize]) -> Result<(), Box<dyn std::error::Error>> {
    let device = arena_runtime::CudaDevice::new(0)?;
    let stream = device.context().new_stream()?;
    gpu_run::graph_memory(run, &stream, sizes)
}

#[cfg(not(feature = "cuda"))]
fn graph_memory(_: &Run, _: &[usize]) -> Result<(), Box<dyn std::error::Error>> {
    Err("--graph-memory runs on the GPU: it needs the cuda feature".into())
}

#[cfg(feature = "cuda")]
fn tp_on_gpu(
    run: &Run,
    tp: usize,
    options: AllocOptions,
    poison: bool,
) -> Result<run::Outputs, Box<dyn std::error::Error>> {
    gpu_run::outputs_tp(run, tp, options, poison)
}

#[cfg(not(feature = "cuda"))]
fn tp_on_gpu(
    _: &Run,
    _: usize,
    _: AllocOptions,
    _: bool,
) -> Result<run::Outputs, Box<dyn std::error::Error>> {
    Err("--tp with --gpu needs the cuda feature".into())
}

#[cfg(not(feature = "cuda"))]
fn on_gpu(
    _: &Run,
    _: AllocOptions,
    _: bool,
    _: bool,
    _: Option<usize>,
) -> Result<Option<run::Outputs>, Box<dyn std::error::Error>> {
    Err("--gpu needs the cuda feature: cargo run -p arena-spec --release --features cuda --example forward".into())
}
