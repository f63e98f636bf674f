//! `--at-limits MODEL`: a shipped model at its full depth on the whole GPU, as the whole-GPU
//! plan sizes it, then run there. The plan (`gpu_plan::plan_gpu`, the measured reserve) gives
//! the weight arenas, the activation arena (one plain slab) and the largest KV pool that fits;
//! each is allocated in turn and free memory (`cuMemGetInfo`) is read after it. The weights
//! are generated on the device straight into their arenas (no checkpoint: the numbers are
//! not compared with a reference here, only with each other), then the step runs at the
//! plan's limits: a prefill of `max_batch_tokens` tokens, and a decode step of
//! `max_batch_size` sequences whose block tables together hold every block of the pool. It
//! runs twice in the plain slab, then once more in a reuse slab allocated in its place; the
//! logits of all three must be bit-identical, and free memory after every stage must equal
//! what the plan left, to the 2 MiB page. Prints the table.

use crate::gpu::GpuOps;
use crate::model::Decoder;
use crate::ops::Result;
use crate::params::Params;
use crate::run::Held;
use crate::step::Engine;
use arena_runtime::cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use arena_runtime::{AllocOptions, Allocated, Arena, CudaDevice, ViewMut};
use arena_spec::gpu_plan::{on_device, plan_gpu, GpuPlanInputs, DEVICE_PAGE};
use arena_spec::serving::{BlockPool, BlockTable, StepMetadata};
use arena_spec::weights::{
    AllocatedWeights, AttentionWeightsViewsMut, ModelWeightsViewsMut, WeightsSizes,
};
use arena_spec::{BufferArena, BufferArenaInputs, KvDtype, KvPool, KvPoolSizes, ParallelLayout};
use std::sync::Arc;
use std::time::Instant;

/// The context a sequence is planned at. Chosen here: within what `gpu.cu`'s attention holds
/// (12,288 positions), and long enough that the pool's blocks spread over `max_batch_size`
/// sequences fit each one's block table.
const CONTEXT: usize = 12_288;

/// Fills `n` BF16 values at `p`: `base + scale × u`, `u` uniform in [-1, 1) from a hash of
/// the index and `seed` (the same values on every run).
const FILL: &str = r#"
extern "C" __global__ void fill_bf16(unsigned short* p, unsigned long long n,
                                     unsigned int seed, float scale, float base) {
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < n; i += step) {
        unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull + seed;
        x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 27;
        float u = (float)(x >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
        p[i] = (unsigned short)(__float_as_uint(base + scale * u) >> 16);
    }
}
"#;

/// Free memory after each stage against what the plan left.
struct Stages {
    stream: Arc<CudaStream>,
    /// Free memory the plan starts from (after the engine started), and the plan's bytes
    /// taken since.
    start: i64,
    planned: i64,
    rows: Vec<(String, i64, i64)>,
}

impl Stages {
    fn free(&self) -> Result<i64> {
        self.stream.synchronize()?;
        Ok(self.stream.context().mem_get_info()?.0 as i64)
    }

    /// Records `stage`, which the plan says takes `planned` bytes (negative: gives back).
    fn record(&mut self, stage: impl Into<String>, planned: i64) -> Result<()> {
        self.planned += planned;
        let free = self.free()?;
        self.rows
            .push((stage.into(), free, self.start - self.planned));
        Ok(())
    }

    /// The table; an error where a stage is more than a page from the plan.
    fn finish(&self) -> Result<()> {
        let mib = |b: i64| b as f64 / (1 << 20) as f64;
        println!("\n| stage | free measured, MiB | free planned, MiB | difference, MiB |");
        println!("|---|---:|---:|---:|");
        for (stage, free, planned) in &self.rows {
            println!(
                "| {stage} | {:.1} | {:.1} | {:+.1} |",
                mib(*free),
                mib(*planned),
                mib(free - planned)
            );
        }
        match self
            .rows
            .iter()
            .find(|(_, free, planned)| (free - planned).abs() > DEVICE_PAGE as i64)
        {
            Some((stage, free, planned)) => Err(format!(
                "{stage}: free memory {:+.1} MiB from the plan's",
                mib(free - planned)
            )
            .into()),
            None => Ok(()),
        }
    }
}

/// `--at-limits`: the module's run on CUDA device 0.
pub fn at_limits(name: &str) -> Result<()> {
    let device = CudaDevice::new(0)?;
    let stream = device.context().new_stream()?;
    let ctx = stream.context().clone();
    let shipped = arena_spec::models::find(name).ok_or(format!("no shipped model {name}"))?;
    let decoder = Decoder::shipped(name, shipped.config()?.num_hidden_layers)?;
    if decoder.config.has_gdn() {
        // Its passes would put every sequence in state slot 0, which `put_batch` refuses.
        return Err(format!(
            "{name}: --at-limits runs attention-only models (its decode gives each of \
             its sequences no state slot of its own)"
        )
        .into());
    }
    let config = &decoder.config;
    let inputs = BufferArenaInputs {
        max_seq_len: CONTEXT,
        ..BufferArenaInputs::defaults_for(config)
    };
    let (_, total) = ctx.mem_get_info()?;
    // The engine's start, which the plan's reserve covers: the context, the step's kernels,
    // cuBLAS with its workspace, this run's fill kernel.
    let ops = GpuOps::new(&stream, &decoder, CONTEXT)?;
    let fill = ctx
        .load_module(arena_runtime::cudarc::nvrtc::compile_ptx(FILL)?)?
        .load_function("fill_bf16")?;
    let plan = plan_gpu(
        config,
        &ParallelLayout::new(1, 1, 1)?,
        GpuPlanInputs::new(total as u64, inputs),
    )?;
    let rank = &plan.ranks[0];
    if rank.state_bytes > 0 {
        return Err("the example's models keep no sequence state".into());
    }
    let device = CudaDevice::from_stream(&stream);
    let started = ctx.mem_get_info()?.0 as i64;
    println!(
        "{name} ({} layers) on {}: {} MiB; the engine's start took {} MiB of the plan's {} MiB \
         reserve; the plan: weights {} MiB, arena {} MiB, KV pool {} blocks of {} tokens ({} \
         MiB), {} sequences at {CONTEXT}",
        decoder.layers,
        crate::gpu_run::device_name(&stream),
        total >> 20,
        (total as i64 - started) >> 20,
        rank.reserve_bytes >> 20,
        rank.weights_bytes >> 20,
        rank.arena_bytes >> 20,
        rank.pool.full,
        inputs.kv_block_size,
        rank.pool_bytes >> 20,
        plan.sequences,
    );
    let mut stages = Stages {
        stream: stream.clone(),
        start: started,
        planned: 0,
        rows: Vec::new(),
    };
    let sizes = WeightsSizes::new(config, &config.weight_formats)?;
    let mut weights = AllocatedWeights::allocate(device.clone(), &sizes)?;
    stages.record("the six weight arenas allocated", rank.weights_bytes as i64)?;
    let arena_sizes = inputs.sizes(config)?;
    let mut arena =
        BufferArena::allocate_with(device.clone(), &arena_sizes, AllocOptions::default())?;
    stages.record("the activation arena (plain slab)", rank.arena_bytes as i64)?;
    let block = inputs.kv_block_size;
    let pool_sizes = KvPoolSizes::from_inputs(config, &rank.pool.inputs(block, KvDtype::Bf16));
    let mut kv = KvPool::allocate(device.clone(), &pool_sizes)?;
    stages.record("the KV pool", rank.pool_bytes as i64)?;
    // The state cache: every buffer 0 bytes for the models this runs (no recurrent layers).
    let mut states = crate::run::state_cache(device.clone(), &decoder, inputs.max_batch_size)?;

    generate(&stream, &fill, &mut weights)?;
    stages.record("weights generated on the device", 0)?;
    let params = Params::of(&weights, decoder.tied);
    let mut engine = Engine::new(&decoder, ops, &inputs, rank.pool.full)?;
    engine.poison = false;
    let mut passes = Vec::new();
    for pass in ["plain slab", "plain slab again", "reuse slab"] {
        if pass == "reuse slab" {
            arena.release()?;
            stages.record("the plain slab released", -(rank.arena_bytes as i64))?;
            arena =
                BufferArena::allocate_with(device.clone(), &arena_sizes, AllocOptions::reuse())?;
            let reuse = BufferArena::slab_bytes(&arena_sizes, AllocOptions::reuse())? as u64;
            stages.record(
                "the reuse slab allocated in its place",
                on_device(reuse) as i64,
            )?;
        }
        zero(&stream, &fill, &mut kv)?;
        passes.push(limits_pass(
            &mut engine,
            &mut arena,
            &params,
            (&mut kv, &mut states),
            &inputs,
            rank.pool.full,
            pass,
            &mut stages,
        )?);
    }
    let same = passes.windows(2).all(|w| w[0] == w[1]);
    println!(
        "logits of the three passes (the prefill's last {} rows, the decode's {}): {}",
        passes[0].0.len() / decoder.vocab,
        passes[0].1.len() / decoder.vocab,
        if same { "bit-identical" } else { "DIFFER" }
    );
    Held {
        weights,
        kv,
        states,
        arena,
    }
    .release()?;
    stages.finish()?;
    match same {
        true => Ok(()),
        false => Err("the passes' logits differ".into()),
    }
}

/// One pass: a prefill of `max_batch_tokens` tokens of one sequence, then a decode step of
/// `max_batch_size` sequences whose tables hold every one of the pool's `blocks`, each
/// decoding the last position of its last block. Returns both steps' logit bits.
#[allow(clippy::too_many_arguments)]
fn limits_pass(
    engine: &mut Engine<'_, GpuOps<'_>>,
    arena: &mut Allocated<BufferArena, CudaDevice>,
    params: &Params<'_, CudaDevice>,
    (kv, states): (
        &mut Allocated<KvPool, CudaDevice>,
        &mut Allocated<arena_spec::StateCache, CudaDevice>,
    ),
    inputs: &BufferArenaInputs,
    blocks: usize,
    pass: &str,
    stages: &mut Stages,
) -> Result<(Vec<u32>, Vec<u32>)> {
    let (m, b, block) = (
        inputs.max_batch_tokens,
        inputs.max_batch_size,
        inputs.kv_block_size,
    );
    let (vocab, width) = (engine.decoder.vocab as u64, engine.width);
    let token = |i: usize| ((i as u64 * 2_654_435_761) % vocab) as u32;
    let bits = |l: Vec<f32>| l.into_iter().map(f32::to_bits).collect::<Vec<_>>();
    let stream = stages.stream.clone();
    let mut run = |tokens: &[u32], meta: &StepMetadata| -> Result<(Vec<u32>, f64)> {
        // Slot 0 for each sequence: the state cache is empty (no recurrent layers).
        engine.put_batch(arena, tokens, meta, &vec![0; meta.kv_lens.len()])?;
        let start = Instant::now();
        engine.forward(arena, params, kv, states, tokens.len())?;
        stream.synchronize()?;
        let seconds = start.elapsed().as_secs_f64();
        Ok((bits(engine.read_logits(arena, tokens.len())?), seconds))
    };
    // The prefill: one sequence of `m` tokens from position 0.
    let mut pool = BlockPool::new(blocks);
    let mut table = BlockTable::default();
    if !table.grow(m, block, &mut pool) {
        return Err(format!("{m} tokens need more than the pool's {blocks} blocks").into());
    }
    let mut meta = StepMetadata::default();
    meta.push_sequence(&table, 0, m, block, width)
        .ok_or("the prefill's table is wider than the arena's")?;
    let tokens: Vec<u32> = (0..m).map(token).collect();
    let (prefill, seconds) = run(&tokens, &meta)?;
    stages.record(
        format!(
            "{pass}: prefill of {m} tokens ({:.0} tokens/s)",
            m as f64 / seconds
        ),
        0,
    )?;
    // The decode: `b` sequences over every block of a fresh pool.
    let mut pool = BlockPool::new(blocks);
    let mut meta = StepMetadata::default();
    for s in 0..b {
        let mine = blocks / b + usize::from(s < blocks % b);
        let mut table = BlockTable::default();
        if mine == 0 || !table.grow(mine * block, block, &mut pool) {
            return Err(format!("{blocks} blocks do not spread over {b} sequences").into());
        }
        meta.push_sequence(&table, mine * block - 1, 1, block, width)
            .ok_or(format!(
                "a sequence of {mine} blocks is wider than the arena's table"
            ))?;
    }
    if pool.free() != 0 {
        return Err("the decode's tables do not hold every block".into());
    }
    let tokens: Vec<u32> = (0..b).map(|s| token(m + s)).collect();
    let (decode, seconds) = run(&tokens, &meta)?;
    stages.record(
        format!(
            "{pass}: decode of {b} sequences holding all {blocks} blocks ({:.0} tokens/s)",
            b as f64 / seconds
        ),
        0,
    )?;
    Ok((prefill, decode))
}

/// Launches `fill` over `view`'s `n` 16-bit values.
fn fill_view<T>(
    stream: &Arc<CudaStream>,
    fill: &CudaFunction,
    view: &mut ViewMut<'_, T, CudaDevice>,
    n: u64,
    (seed, scale, base): (u32, f32, f32),
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let mut launch = stream.launch_builder(fill);
    launch.arg(view).arg(&n).arg(&seed).arg(&scale).arg(&base);
    let cfg = LaunchConfig {
        grid_dim: (1024, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: `fill_bf16(unsigned short*, unsigned long long, unsigned int, float, float)`
    // writes `n` 16-bit values from the view's start, which holds at least `n` of them.
    unsafe { launch.launch(cfg) }?;
    Ok(())
}

/// Every weight arena's bytes as BF16 values in ±0.05, then the norms' weights 1 (as
/// transformers initialises them), so activations stay finite through every layer.
fn generate(
    stream: &Arc<CudaStream>,
    fill: &CudaFunction,
    weights: &mut AllocatedWeights<CudaDevice>,
) -> Result<()> {
    let mut seed = 0u32;
    let mut random = |views: Vec<ViewMut<'_, u8, CudaDevice>>| -> Result<()> {
        for mut v in views {
            seed += 1;
            let n = (v.len() / 2) as u64;
            fill_view(stream, fill, &mut v, n, (seed, 0.05, 0.0))?;
        }
        Ok(())
    };
    random(weights.model.byte_views_mut()?)?;
    random(weights.attention.byte_views_mut()?)?;
    random(weights.latent.byte_views_mut()?)?;
    random(weights.compressed.byte_views_mut()?)?;
    random(weights.mixers.byte_views_mut()?)?;
    random(weights.ffn.byte_views_mut()?)?;
    let one = (0, 0.0, 1.0);
    let mut m = ModelWeightsViewsMut::of(&mut weights.model)?;
    for v in [&mut m.layer_norms, &mut m.norm] {
        let n = v.len() as u64;
        fill_view(stream, fill, v, n, one)?;
    }
    let mut a = AttentionWeightsViewsMut::of(&mut weights.attention)?;
    for v in [&mut a.q_norm, &mut a.k_norm] {
        let n = v.len() as u64;
        fill_view(stream, fill, v, n, one)?;
    }
    Ok(())
}

/// The KV pool's bytes set to zero, so every pass reads the same keys and values.
fn zero(
    stream: &Arc<CudaStream>,
    fill: &CudaFunction,
    kv: &mut Allocated<KvPool, CudaDevice>,
) -> Result<()> {
    for mut v in kv.byte_views_mut()? {
        let n = (v.len() / 2) as u64;
        fill_view(stream, fill, &mut v, n, (0, 0.0, 0.0))?;
    }
    Ok(())
}
