//! Several sequences served together in the same arenas: `arena_spec::serving`'s `Scheduler`
//! packs each step (a decode token of every running sequence, then prefill chunks, within
//! `max_batch_tokens` and `max_batch_size`), draws each sequence's KV blocks from a
//! `BlockPool` of exactly the `KvPool`'s blocks (a sequence that needs one when none is free
//! waits), and gives them back when it finishes, for the next to reuse; the step's metadata
//! goes into `scratch` ([`Engine::put_batch`]) and the model runs once over the packed rows.
//!
//! Sequence `i` is `(prompt, len)`: the reference's first `len` tokens, its first `prompt`
//! the prompt and the rest fed one a step (the reference's next token, not the argmax, so
//! every position has the reference's logits to be held to). Causal attention makes a
//! position's logits depend only on the tokens up to it, so each position of each sequence
//! is the reference's position, however the sequences were chunked, packed and paged.

use crate::ops::{Ops, Result};
use crate::params::Params;
use crate::run::Run;
use crate::step::Engine;
use arena_runtime::{AllocOptions, Allocated, Device, HostDevice};
use arena_spec::serving::{Limits, Request, Scheduler};
use arena_spec::{BufferArena, KvPool, StateCache};

/// What a serve produced: each sequence's logits, one `[vocab]` a position, and the steps.
pub struct Served {
    pub logits: Vec<Vec<Vec<f32>>>,
    /// Each sequence's routes, as `Outputs::routes` (a MoE model's experts a position and
    /// layer; empty for a dense one).
    pub routes: Vec<Vec<Vec<Vec<u32>>>>,
    pub steps: usize,
    /// The most sequences one step ran.
    pub widest: usize,
    /// The device's free memory before the first step and after each, where the device can
    /// tell (`Device::mem_info`: a GPU's `cuMemGetInfo`): every step runs in memory
    /// allocated before it, so all are equal.
    pub free: Vec<usize>,
    /// The same for a first, warm-up pass over the same sequences, where one ran
    /// (`Run::serve_on`'s `warm`): on a GPU the driver loads a kernel's code into device
    /// memory the first time a launch needs it (CUDA's lazy module loading, the default
    /// since CUDA 12.2), so a step whose GEMMs meet a new shape may take a page there, which
    /// an engine's warm-up takes before it serves.
    pub cold_free: Vec<usize>,
}

impl Served {
    /// The first step after which the device had less free memory than before the first,
    /// with the bytes it lost: `None` where no step took device memory.
    pub fn allocated(&self) -> Option<(usize, usize)> {
        first_drop(&self.free)
    }

    /// [`Self::allocated`] of the warm-up pass.
    pub fn cold_allocated(&self) -> Option<(usize, usize)> {
        first_drop(&self.cold_free)
    }
}

/// The first entry of `free` below the first, and the bytes it lost.
fn first_drop(free: &[usize]) -> Option<(usize, usize)> {
    let first = *free.first()?;
    let (step, &f) = free.iter().enumerate().find(|(_, &f)| f < first)?;
    Some((step, first - f))
}

/// Serves `seqs` (`(prompt, len)` each) to completion within `limits`.
pub fn serve<D: Device, O: Ops<D>>(
    run: &Run,
    engine: &mut Engine<'_, O>,
    arena: &mut Allocated<BufferArena, D>,
    w: &Params<'_, D>,
    (kv, states): (&mut Allocated<KvPool, D>, &mut Allocated<StateCache, D>),
    limits: Limits,
    seqs: &[(usize, usize)],
) -> Result<Served> {
    let tokens = &run.reference.tokens;
    let vocab = run.decoder.vocab;
    let mut scheduler = Scheduler::new(limits);
    for (i, &(prompt, len)) in seqs.iter().enumerate() {
        if prompt == 0 || len < prompt || len > tokens.len() {
            return Err(format!(
                "sequence {i}: ({prompt}, {len}) is not a prefix of the reference"
            )
            .into());
        }
        // The prefill's last row gives the first generated token; each decode step one more.
        let max_new_tokens = len - prompt + 1;
        scheduler.add(Request {
            id: i as u64,
            prompt,
            max_new_tokens,
        });
    }
    let mut served = Served {
        logits: vec![Vec::new(); seqs.len()],
        routes: vec![Vec::new(); seqs.len()],
        steps: 0,
        widest: 0,
        free: Vec::new(),
        cold_free: Vec::new(),
    };
    let free = |arena: &Allocated<BufferArena, D>| arena.device().mem_info().map(|m| m.free);
    served.free.extend(free(arena));
    while !scheduler.is_idle() {
        let batch = scheduler.schedule();
        if batch.scheduled.is_empty() {
            return Err("no sequence could be scheduled: every one waits on a block".into());
        }
        let meta = scheduler
            .metadata(&batch, engine.width)
            .ok_or("a block table wider than the arena's")?;
        let ids: Vec<u32> = batch
            .scheduled
            .iter()
            .flat_map(|s| tokens[s.start..s.start + s.tokens].iter().copied())
            .collect();
        // A hybrid model's sequences each hold a state slot; another's states are 0 bytes.
        let recurrent = run.decoder.config.has_gdn();
        let slots = batch
            .scheduled
            .iter()
            .map(|s| match (s.slot, recurrent) {
                (Some(slot), _) => Ok(slot),
                (None, false) => Ok(0),
                (None, true) => Err(format!(
                    "sequence {} holds no state slot: a hybrid model is served with \
                     `state_slots: true`",
                    s.id
                )),
            })
            .collect::<std::result::Result<Vec<usize>, String>>()?;
        engine.put_batch(arena, &ids, &meta, &slots)?;
        engine.forward(arena, w, kv, states, ids.len())?;
        let logits = engine.read_logits(arena, ids.len())?;
        let mut rows = logits.chunks_exact(vocab);
        let mut routes = std::mem::take(&mut engine.step_routes).into_iter();
        for s in &batch.scheduled {
            let out = &mut served.logits[s.id as usize];
            if out.len() != s.start {
                return Err(format!("sequence {}: position {} out of order", s.id, s.start).into());
            }
            out.extend(rows.by_ref().take(s.tokens).map(<[f32]>::to_vec));
            served.routes[s.id as usize].extend(routes.by_ref().take(s.tokens));
        }
        served.free.extend(free(arena));
        served.steps += 1;
        served.widest = served.widest.max(batch.scheduled.len());
        scheduler.complete(&batch)?;
    }
    Ok(served)
}

/// The sequences `--serve` runs: `(prompt, len)` prefixes of the reference's 20 tokens.
pub const DEMO: [(usize, usize); 4] = [(16, 20), (5, 12), (9, 17), (3, 20)];

/// `--serve`'s limits: 16 tokens a step, 3 sequences at once, a pool of 4 blocks of 16
/// tokens (the four sequences take 7 blocks in all, so they wait for one another's).
pub const DEMO_LIMITS: Limits = Limits {
    max_batch_tokens: 16,
    max_batch_size: 3,
    block_tokens: 16,
    blocks: 4,
    state_slots: false,
};

/// `--serve`'s limits for `run`'s model: [`DEMO_LIMITS`], a state slot a running sequence
/// where the model has recurrent layers.
pub fn demo_limits(run: &Run) -> Limits {
    Limits {
        state_slots: run.decoder.config.has_gdn(),
        ..DEMO_LIMITS
    }
}

/// `--serve`: [`DEMO`] served within [`demo_limits`] on the host or GPU 0, each sequence's
/// positions held to the reference (argmax and tolerance) and reported.
pub fn demo(run: &Run, options: AllocOptions, gpu: bool) -> Result<()> {
    let served = if gpu {
        on_gpu(run, options)?
    } else {
        let ops = crate::kernels::HostOps::new(&run.decoder);
        run.serve_on(
            HostDevice::new(),
            ops,
            options,
            demo_limits(run),
            &DEMO,
            false,
        )?
    };
    let r = &run.reference;
    println!(
        "{} sequences served together in {} steps (at most {} a step) against transformers on {}",
        DEMO.len(),
        served.steps,
        served.widest,
        r.device
    );
    if let Some((step, bytes)) = served.cold_allocated() {
        println!(
            "  warm-up pass: step {step} took {bytes} bytes of device memory (kernel code loaded \
             at a GEMM shape's first launch)"
        );
    }
    if let Some(&free) = served.free.first() {
        let same = served.free.iter().filter(|&&f| f == free).count() - 1;
        println!(
            "  device memory free before the first step: {free} bytes; the same after {same} of \
             the {} steps",
            served.steps
        );
    }
    if let Some((step, bytes)) = served.allocated() {
        return Err(format!("step {step} took {bytes} bytes of device memory").into());
    }
    for (i, (logits, routes)) in served.logits.iter().zip(&served.routes).enumerate() {
        let outputs = crate::run::Outputs {
            logits: logits.clone(),
            routes: routes.clone(),
        };
        let a = run
            .check(&outputs, 0)
            .map_err(|e| format!("sequence {i}: {e}"))?;
        let (prompt, len) = DEMO[i];
        if a.positions != len {
            return Err(format!("sequence {i}: {} positions of {len}", a.positions).into());
        }
        println!(
            "  sequence {i}: prompt {prompt}, {len} positions, each with the reference's argmax \
             ({} in a near tie) and within the tolerance: largest |Δ| {:.5}, largest mean |Δ| \
             {:.5}",
            a.ties, a.max_abs, a.mean_abs
        );
    }
    Ok(())
}

#[cfg(feature = "cuda")]
fn on_gpu(run: &Run, options: AllocOptions) -> Result<Served> {
    let device = arena_runtime::CudaDevice::new(0)?;
    let stream = device.context().new_stream()?;
    let ops = crate::gpu::GpuOps::new(&stream, &run.decoder, run.reference.tokens.len())?;
    let device = arena_runtime::CudaDevice::from_stream(&stream);
    run.serve_on(device, ops, options, demo_limits(run), &DEMO, true)
}

#[cfg(not(feature = "cuda"))]
fn on_gpu(_: &Run, _: AllocOptions) -> Result<Served> {
    Err("--gpu needs the cuda feature".into())
}
