//! Runs on a CUDA device (feature `cuda`): the decode step captured once as a CUDA graph and
//! replayed, and the step's timing in the arena's slab against one allocation per buffer.

use crate::gpu::GpuOps;
use crate::ops::Result;
use crate::params::Params;
use crate::run::{Held, Run};
use crate::step::Engine;
use arena_runtime::cudarc::driver::{sys, CudaStream};
use arena_runtime::{AllocOptions, ArenaGraph, CudaDevice};
use arena_spec::BufferArena;
use std::sync::Arc;

/// The weight arenas (loaded), a KV pool, an arena and an engine over them, on `stream`.
pub struct GpuSetup<'r> {
    pub held: Held<CudaDevice>,
    pub engine: Engine<'r, GpuOps<'r>>,
}

impl<'r> GpuSetup<'r> {
    pub fn new(
        run: &'r Run,
        stream: &Arc<CudaStream>,
        options: AllocOptions,
        poison: bool,
    ) -> Result<Self> {
        let inputs = run.inputs();
        let ops = GpuOps::new(stream, &run.decoder, run.reference.tokens.len())?;
        let device = CudaDevice::from_stream(stream);
        let held = run.hold(device, &inputs, run.kv_blocks(), options)?;
        let mut engine = Engine::new(&run.decoder, ops, &inputs, run.kv_blocks())?;
        engine.poison = poison;
        Ok(GpuSetup { held, engine })
    }

    /// `forward(m)` captured on `stream` into a graph over the arena (the inputs are placed
    /// before each replay, at the addresses the graph recorded; `replay` takes the arena).
    /// A hybrid model's delta-net ops take each sequence's rows and state slot as launch
    /// arguments (`Engine::put_batch`'s), so its graph replays the batch it captured: the
    /// same sequences in the same slots, as the one-sequence decode here does (a real engine's
    /// kernels read the slots from the step's metadata and replay any batch).
    pub fn capture(
        &mut self,
        stream: &Arc<CudaStream>,
        m: usize,
    ) -> Result<ArenaGraph<BufferArena>> {
        let h = &mut self.held;
        let params = Params::of(&h.weights, self.engine.decoder.tied);
        let (engine, kv, states) = (&mut self.engine, &mut h.kv, &mut h.states);
        Ok(ArenaGraph::capture(stream, &mut h.arena, |arena| {
            engine.forward(arena, &params, kv, states, m)
        })?)
    }

    pub fn release(self) -> Result<()> {
        self.held.release()
    }
}

/// The prefill run eagerly, then the first decode step captured as a graph and replayed
/// for every decode token: the logits of every position, as `Run::steps` gives them.
pub fn outputs_with_graph(
    run: &Run,
    stream: &Arc<CudaStream>,
    options: AllocOptions,
    poison: bool,
) -> Result<Vec<Vec<f32>>> {
    let mut s = GpuSetup::new(run, stream, options, poison)?;
    let result = (|| -> Result<Vec<Vec<f32>>> {
        let (tokens, prefill) = (&run.reference.tokens, run.reference.prefill);
        let params = Params::of(&s.held.weights, run.decoder.tied);
        let mut out: Vec<Vec<f32>> = s
            .engine
            .step(
                &mut s.held.arena,
                &params,
                &mut s.held.kv,
                &mut s.held.states,
                &tokens[..prefill],
            )?
            .chunks_exact(run.decoder.vocab)
            .map(<[f32]>::to_vec)
            .collect();
        let mut graph = None;
        for &t in &tokens[prefill..] {
            s.engine.put_inputs(&mut s.held.arena, &[t])?;
            if graph.is_none() {
                graph = Some(s.capture(stream, 1)?);
            }
            graph.as_ref().unwrap().replay(&mut s.held.arena)?;
            out.push(s.engine.read_logits(&mut s.held.arena, 1)?);
        }
        Ok(out)
    })();
    s.release()?;
    result
}

/// Median of `xs`.
fn median(mut xs: Vec<f32>) -> f32 {
    xs.sort_by(f32::total_cmp);
    xs[xs.len() / 2]
}

/// Times `f` on `stream` with CUDA events, in milliseconds.
fn timed(stream: &Arc<CudaStream>, f: impl FnOnce() -> Result<()>) -> Result<f32> {
    let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let start = stream.record_event(flags)?;
    f()?;
    let end = stream.record_event(flags)?;
    end.synchronize()?;
    Ok(start.elapsed_ms(&end)?)
}

/// Prefill and decode step times (CUDA events, no poison) in the arena's slab and with one
/// allocation per buffer (`AllocOptions::per_buffer`: each buffer its own `cuMemAlloc`, as
/// separately allocated cudarc buffers are), the same kernels through the same views, in
/// `rounds` interleaved rounds. Prints the medians and the ratio.
pub fn time(run: &Run, stream: &Arc<CudaStream>, rounds: usize) -> Result<()> {
    let modes = [
        ("slab", AllocOptions::default()),
        ("per-buffer", AllocOptions::per_buffer()),
    ];
    let mut setups = Vec::new();
    for (_, options) in &modes {
        setups.push(GpuSetup::new(run, stream, *options, false)?);
    }
    let result = (|| -> Result<()> {
        let (tokens, prefill) = (&run.reference.tokens, run.reference.prefill);
        let mut graphs = Vec::new();
        for s in setups.iter_mut() {
            let params = Params::of(&s.held.weights, run.decoder.tied);
            s.engine.step(
                &mut s.held.arena,
                &params,
                &mut s.held.kv,
                &mut s.held.states,
                &tokens[..prefill],
            )?; // warm
            s.engine
                .put_inputs(&mut s.held.arena, &tokens[prefill..prefill + 1])?;
            graphs.push(s.capture(stream, 1)?);
        }
        let mut times = vec![[Vec::new(), Vec::new(), Vec::new()]; modes.len()];
        for _ in 0..rounds {
            for (i, s) in setups.iter_mut().enumerate() {
                let params = Params::of(&s.held.weights, run.decoder.tied);
                s.engine.cached = 0;
                s.engine.put_inputs(&mut s.held.arena, &tokens[..prefill])?;
                let h = (&mut s.held.arena, &mut s.held.kv, &mut s.held.states);
                times[i][0].push(timed(stream, || {
                    s.engine.forward(h.0, &params, h.1, h.2, prefill)
                })?);
                s.engine
                    .put_inputs(&mut s.held.arena, &tokens[prefill..prefill + 1])?;
                let h = (&mut s.held.arena, &mut s.held.kv, &mut s.held.states);
                times[i][1].push(timed(stream, || {
                    s.engine.forward(h.0, &params, h.1, h.2, 1)
                })?);
                s.engine.cached = prefill;
                s.engine
                    .put_inputs(&mut s.held.arena, &tokens[prefill..prefill + 1])?;
                let arena = &mut s.held.arena;
                times[i][2].push(timed(stream, || Ok(graphs[i].replay(arena)?))?);
            }
        }
        println!(
            "{} on {}: {rounds} interleaved rounds, median µs (CUDA events)",
            run.reference.model,
            device_name(stream)
        );
        println!(
            "{:>11}  {:>12}  {:>13}  {:>13}",
            "arena", "prefill (16)", "decode eager", "decode graph"
        );
        let med: Vec<[f32; 3]> = times
            .into_iter()
            .map(|t| t.map(|x| median(x) * 1000.0))
            .collect();
        for ((name, _), m) in modes.iter().zip(&med) {
            println!("{name:>11}  {:>12.1}  {:>13.1}  {:>13.1}", m[0], m[1], m[2]);
        }
        println!(
            "{:>11}  {:>11.3}×  {:>12.3}×  {:>12.3}×",
            "slab / per",
            med[0][0] / med[1][0],
            med[0][1] / med[1][1],
            med[0][2] / med[1][2]
        );
        Ok(())
    })();
    for s in setups {
        s.release()?;
    }
    result
}

pub fn device_name(stream: &Arc<CudaStream>) -> String {
    stream
        .context()
        .name()
        .unwrap_or_else(|_| "a CUDA device".into())
}

/// What capturing the decode step as a CUDA graph costs on the device, for each batch size
/// of `sizes` (an engine captures one graph a size and keeps them all): free memory
/// (`cuMemGetInfo`, whose unit is the 2 MiB page) before the capture, after the capture and
/// instantiation (`end_capture`), after the upload, after the first replay and after 1000
/// more, with the graph's node count; then after every graph is destroyed. Each size's step
/// runs once eagerly first, so cuBLAS has loaded its kernels for that shape outside the
/// capture. The arena, KV pool and weights are allocated before any of it.
pub fn graph_memory(run: &Run, stream: &Arc<CudaStream>, sizes: &[usize]) -> Result<()> {
    use arena_spec::serving::{BlockPool, BlockTable, StepMetadata};
    let widest = sizes.iter().copied().max().ok_or("no batch sizes")?;
    let tokens = &run.reference.tokens;
    if widest > tokens.len() {
        return Err(format!(
            "at most {} sequences (one reference token each)",
            tokens.len()
        )
        .into());
    }
    let inputs = arena_spec::BufferArenaInputs {
        max_batch_tokens: widest.max(run.reference.prefill),
        max_seq_len: tokens.len(),
        kv_block_size: 16,
        max_batch_size: widest,
    };
    let ops = GpuOps::new(stream, &run.decoder, tokens.len())?;
    let device = CudaDevice::from_stream(stream);
    let Held {
        weights,
        mut kv,
        mut states,
        mut arena,
    } = run.hold(device, &inputs, widest, AllocOptions::default())?;
    let mut engine = Engine::new(&run.decoder, ops, &inputs, 0)?;
    engine.poison = false;
    let params = Params::of(&weights, run.decoder.tied);
    let free = || -> Result<i64> { Ok(stream.context().mem_get_info()?.0 as i64) };
    let mib = |bytes: i64| bytes as f64 / (1 << 20) as f64;
    println!(
        "CUDA-graph memory on {} (MiB of device memory taken; cuMemGetInfo, 2 MiB pages)",
        device_name(stream)
    );
    println!(
        "{:>5}  {:>6}  {:>8}  {:>8}  {:>8}  {:>10}  {:>10}  {:>10}",
        "batch", "nodes", "capture", "upload", "launch", "1000 more", "held", "planned"
    );
    let start = free()?;
    let mut graphs = Vec::new();
    // What the whole-GPU plan keeps for the graphs so far (`gpu_plan::graph_bytes`: bytes a
    // kernel node, in pages).
    let (mut all_nodes, mut planned) = (0usize, 0i64);
    for &b in sizes {
        // `b` sequences of one token each, at position 0, each in a block of its own.
        let mut blocks = BlockPool::new(b);
        let mut meta = StepMetadata::default();
        for _ in 0..b {
            let mut table = BlockTable::default();
            table.grow(1, inputs.kv_block_size, &mut blocks);
            meta.push_sequence(&table, 0, 1, inputs.kv_block_size, engine.width)
                .ok_or("a block table wider than the arena's")?;
        }
        engine.put_batch(&mut arena, &tokens[..b], &meta, &(0..b).collect::<Vec<_>>())?;
        engine.forward(&mut arena, &params, &mut kv, &mut states, b)?;
        stream.synchronize()?;
        let before = free()?;
        let graph = ArenaGraph::capture(stream, &mut arena, |arena| {
            engine.forward(arena, &params, &mut kv, &mut states, b)
        })?;
        stream.synchronize()?;
        let after_capture = free()?;
        graph.upload()?;
        stream.synchronize()?;
        let after_upload = free()?;
        graph.replay(&mut arena)?;
        stream.synchronize()?;
        let after_launch = free()?;
        for _ in 0..1000 {
            graph.replay(&mut arena)?;
        }
        stream.synchronize()?;
        let after_replays = free()?;
        let nodes = graph.nodes()?;
        all_nodes += nodes;
        planned = arena_spec::gpu_plan::graph_bytes(1, all_nodes) as i64;
        println!(
            "{b:>5}  {nodes:>6}  {:>8.1}  {:>8.1}  {:>8.1}  {:>10.1}  {:>10.1}  {:>10.1}",
            mib(before - after_capture),
            mib(after_capture - after_upload),
            mib(after_upload - after_launch),
            mib(after_launch - after_replays),
            mib(start - after_replays),
            mib(planned),
        );
        graphs.push(graph);
    }
    let held = free()?;
    drop(graphs);
    stream.synchronize()?;
    println!(
        "all {} graphs held {:.1} MiB; destroyed, {:.1} MiB came back",
        sizes.len(),
        mib(start - held),
        mib(free()? - held)
    );
    Held {
        weights,
        kv,
        states,
        arena,
    }
    .release()?;
    let page = arena_spec::gpu_plan::DEVICE_PAGE as i64;
    match (start - held - planned).abs() <= page {
        true => {
            println!("the plan kept {:.1} MiB: within a page", mib(planned));
            Ok(())
        }
        false => Err(format!(
            "the graphs took {:.1} MiB, the plan keeps {:.1} MiB: more than a page apart",
            mib(start - held),
            mib(planned)
        )
        .into()),
    }
}

/// The step split over `tp` tensor-parallel ranks, rank `r` on CUDA device `r`, each on a
/// thread of its own with its share of the weights, its arena and KV pool, and an NCCL
/// communicator (`Comm::from_rank`, one `Id` for the group) on its stream: the all-reduces
/// after the embedding, the O and the down projections go through it. With `tp` 1 the one
/// rank's communicator reduces nothing, and the logits must be the plain step's, bit for bit.
pub fn outputs_tp(
    run: &Run,
    tp: usize,
    options: AllocOptions,
    poison: bool,
) -> Result<crate::run::Outputs> {
    use arena_runtime::cudarc::driver::CudaContext;
    use cudarc::nccl::{Comm, Id};
    let id = Id::new().map_err(|e| format!("NCCL: {e:?}"))?;
    run.on_ranks(tp, vec![(); tp], |r, rank, ()| {
        let stream = CudaContext::new(r)?.new_stream()?;
        let comm =
            Comm::from_rank(stream.clone(), r, tp, id).map_err(|e| format!("NCCL: {e:?}"))?;
        let ops = GpuOps::new(&stream, &rank.decoder, run.reference.tokens.len())?.with_comm(comm);
        rank.outputs_on(CudaDevice::from_stream(&stream), ops, options, poison)
    })
}
