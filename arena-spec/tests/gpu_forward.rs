//! The forward-pass example (`examples/forward`) on a real GPU (feature `cuda`): the Qwen3
//! decoder step in the engine's `BufferArena` with NVRTC kernels and cuBLAS GEMMs over arena
//! views, against transformers' outputs on the H200 (`reference/<model>.h200.json`, committed
//! by `examples/forward/reference.py`). Every test returns early, saying so, without a CUDA
//! driver or device, so CI without a GPU skips them cleanly.
//!
//! Run on a GPU: `cargo test -p arena-spec --features cuda --release --test gpu_forward --
//! --test-threads=1 --nocapture`.
#![cfg(feature = "cuda")]

#[allow(dead_code)]
#[path = "../examples/forward/compare.rs"]
mod compare;
#[allow(dead_code)]
#[path = "../examples/forward/delta_net.rs"]
mod delta_net;
#[allow(dead_code)]
#[path = "../examples/forward/gpu.rs"]
mod gpu;
#[allow(dead_code)]
#[path = "../examples/forward/gpu_delta.rs"]
mod gpu_delta;
#[allow(dead_code)]
#[path = "../examples/forward/gpu_launch.rs"]
mod gpu_launch;
#[allow(dead_code)]
#[path = "../examples/forward/gpu_run.rs"]
mod gpu_run;
#[allow(dead_code)]
#[path = "../examples/forward/gpu_setup.rs"]
mod gpu_setup;
#[allow(dead_code)]
#[path = "../examples/forward/host_comm.rs"]
mod host_comm;
#[allow(dead_code)]
#[path = "../examples/forward/host_io.rs"]
mod host_io;
#[allow(dead_code)]
#[path = "../examples/forward/host_math.rs"]
mod host_math;
#[allow(dead_code)]
#[path = "../examples/forward/kernels.rs"]
mod kernels;
#[allow(dead_code)]
#[path = "../examples/forward/model.rs"]
mod model;
#[allow(dead_code)]
#[path = "../examples/forward/ops.rs"]
mod ops;
#[allow(dead_code)]
#[path = "../examples/forward/params.rs"]
mod params;
#[allow(dead_code)]
#[path = "../examples/forward/run.rs"]
mod run;
#[allow(dead_code)]
#[path = "../examples/forward/serve.rs"]
mod serve;
#[allow(dead_code)]
#[path = "../examples/forward/step.rs"]
mod step;
#[allow(dead_code)]
#[path = "../examples/forward/step_delta.rs"]
mod step_delta;
#[allow(dead_code)]
#[path = "../examples/forward/weights.rs"]
mod weights;

use arena_runtime::cudarc::driver::CudaStream;
use arena_runtime::{AllocOptions, CudaDevice};
use std::path::Path;
use std::sync::Arc;

fn gpu_stream() -> Option<Arc<CudaStream>> {
    if !CudaDevice::available() {
        panic!("no CUDA driver or device: this test needs one");
    }
    let device = CudaDevice::new(0).expect("device 0 opens");
    Some(device.context().new_stream().unwrap())
}

fn run_of(model: &str) -> run::Run {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/forward/reference");
    run::Run::new(model, None, &run::gpu_reference(&dir, model)).unwrap()
}

fn bits(logits: &[Vec<f32>]) -> Vec<u32> {
    logits.iter().flatten().map(|x| x.to_bits()).collect()
}

/// The step on the GPU, poisoned, in `options`.
fn on_gpu(run: &run::Run, stream: &Arc<CudaStream>, options: AllocOptions) -> run::Outputs {
    let ops = gpu::GpuOps::new(stream, &run.decoder, run.reference.tokens.len()).unwrap();
    run.outputs_on(CudaDevice::from_stream(stream), ops, options, true)
        .unwrap()
}

/// `model` on the GPU in a plain and a reuse slab, every phase poisoned: bit-identical
/// logits and routes, held to transformers' H200 outputs (`Run::check`); then the decode
/// steps replayed from a CUDA graph captured once, in both modes, bit-identical to eager.
fn check(model: &str, routing_flips: usize) {
    let Some(stream) = gpu_stream() else { return };
    let run = run_of(model);
    let slab = on_gpu(&run, &stream, AllocOptions::default());
    let reuse = on_gpu(&run, &stream, AllocOptions::reuse());
    assert!(
        bits(&slab.logits) == bits(&reuse.logits),
        "{model}: reuse and plain logits differ on the GPU"
    );
    assert_eq!(slab.routes, reuse.routes);
    let agreement = run.check(&slab, routing_flips).unwrap();
    let on = &run.reference.device;
    println!("{model} on the GPU against transformers on the {on}: {agreement:?}");
    for options in [AllocOptions::default(), AllocOptions::reuse()] {
        let replayed = gpu_run::outputs_with_graph(&run, &stream, options, true).unwrap();
        assert!(
            bits(&replayed) == bits(&slab.logits),
            "{model} {options:?}: graph replay differs from eager execution"
        );
    }
    let decode = run.reference.tokens.len() - run.reference.prefill;
    println!("{model}: {decode} decode steps replayed from a graph equal eager, slab and reuse");
}

#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn a_dense_qwen3_step_on_the_gpu_matches_transformers_shares_bytes_and_replays_as_a_graph() {
    check("qwen3-0.6b-2l", 0);
}

/// Sequences of different lengths served together on the GPU (`serve::DEMO` within
/// `serve::DEMO_LIMITS`, `examples/forward/serve.rs`), paged in a KV pool too small to hold
/// them all at once: every position of every sequence has the reference's argmax and every
/// probed logit within the tolerance (`Run::tolerance`; cuBLAS may pick another kernel for
/// another number of rows, so bits are not compared with the run alone).
#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn dense_qwen3_sequences_served_together_on_the_gpu_each_match_transformers() {
    if gpu_stream().is_none() {
        return;
    }
    let run = run_of("qwen3-0.6b-2l");
    serve::demo(&run, AllocOptions::reuse(), true).unwrap();
}

/// The step through `gpu_run::outputs_tp` with one rank: an NCCL communicator of one
/// (`Comm::from_rank`, NCCL loaded at run time: `libnccl.so.2` on the library path) whose
/// all-reduces after the embedding, the O and the down projections reduce nothing, so the
/// logits are the plain step's, bit for bit. The two-rank run needs two GPUs
/// (`forward --gpu --tp 2`).
#[test]
#[ignore = "needs a CUDA device and NCCL: run with `-- --include-ignored` on a machine with them"]
fn a_one_rank_nccl_communicator_on_the_gpu_leaves_the_step_unchanged() {
    let Some(stream) = gpu_stream() else { return };
    let run = run_of("qwen3-0.6b-2l");
    let plain = on_gpu(&run, &stream, AllocOptions::default());
    let one = gpu_run::outputs_tp(&run, 1, AllocOptions::default(), true).unwrap();
    assert!(
        bits(&plain.logits) == bits(&one.logits),
        "a one-rank all-reduce changed the logits"
    );
}

#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn a_moe_qwen3_step_on_the_gpu_matches_transformers_shares_bytes_and_replays_as_a_graph() {
    check("qwen3-30b-a3b-2l", 2);
}

/// Qwen3.5-27B's first 4 layers (3 gated delta-net, 1 gated attention) at their full widths:
/// the conv and recurrent states in `StateCache` slot 0, read and written by `gpu_delta.cu`'s
/// kernels across the prefill and the decode steps (the graph's replays too), held to
/// transformers' `Qwen3_5ForCausalLM` on the GPU.
#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn a_hybrid_qwen3_5_step_on_the_gpu_carries_its_states_in_slots_and_matches_transformers() {
    check("qwen3.5-27b-4l", 0);
}

/// The narrow hybrid's sequences served together on the GPU (`serve::DEMO`): prefills chunked
/// over steps, 4 sequences in 3 state slots, each position held to transformers.
#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn hybrid_qwen3_5_sequences_served_together_on_the_gpu_each_match_transformers() {
    if gpu_stream().is_none() {
        return;
    }
    let run = run_of("qwen3.5-27b-narrow-4l");
    serve::demo(&run, AllocOptions::reuse(), true).unwrap();
}
