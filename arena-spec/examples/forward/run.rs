//! One model's run: the reference, the decoder and its weights, the steps in an arena, the
//! comparison. `main.rs` and the forward test share it.

use crate::kernels::HostOps;
use crate::ops::Ops;
use crate::params::Params;
use crate::{compare, model, serve, step, weights};
use arena_runtime::{AllocOptions, Allocated, Device, HostDevice};
use arena_spec::serving::Limits;
use arena_spec::weights::checkpoint::{load, tensor_table, Checkpoint, LoadPlan};
use arena_spec::weights::{AllocatedWeights, WeightsSizes};
use arena_spec::{
    BufferArena, BufferArenaInputs, KvDtype, KvPool, KvPoolInputs, KvPoolSizes, StateCache,
    StateCacheInputs, StateCacheSizes,
};
use std::path::{Path, PathBuf};

/// A logit is right within 2^-5 of its magnitude, four bf16 steps at its size, and a logit
/// below 2 (the probed logits' typical size in these models) within the four steps at 2,
/// 1/16. Why: the reference's logits are bf16 (half a step); every bf16 module output on the
/// way differs by a step wherever two reduction orders (ours, torch's) round to neighbours;
/// and a small logit carries the error of the hidden state it is a dot product of, which does
/// not shrink with the logit. Chosen here from those causes, then checked: the largest error
/// measured is below it on every position whose routing agrees.
pub fn tolerance(reference: f32) -> f32 {
    reference.abs().max(2.0) / 32.0
}

/// [`tolerance`] at position `p`, or twice the reference's own rounding noise there where
/// that is more (`Position::noise`: its bf16 logits' largest distance from an f32 pass, in
/// units of `max(|logit|, 2)`, so it scales with the logit as the tolerance does). Why twice:
/// ours and the reference's are two bf16 computations of the same f32 result, each as far
/// from it as bf16 rounding takes a model this deep, on either side. Chosen here.
pub fn position_tolerance(p: &compare::Position, value: f32) -> f32 {
    tolerance(value).max(2.0 * p.noise.unwrap_or(0.0) * value.abs().max(2.0))
}

/// A state cache of `slots` sequence slots for `decoder`, in the file's recurrent-state dtype
/// (`ModelConfig::recurrent_state_dtype`: Qwen3.5's `mamba_ssm_dtype`, FP32), allocated on
/// `device`: every buffer 0 bytes for a model without recurrent layers.
pub fn state_cache<D: Device>(
    device: D,
    decoder: &model::Decoder,
    slots: usize,
) -> Result<Allocated<StateCache, D>, Box<dyn std::error::Error>> {
    let config = &decoder.config;
    let inputs = StateCacheInputs {
        max_batch_size: slots,
        recurrent_dtype: config.recurrent_state_dtype.dtype,
    };
    if config.has_gdn() && !inputs.recurrent_dtype.is_f32() {
        return Err("the example's delta rule keeps its state in FP32".into());
    }
    let sizes = StateCacheSizes::try_from_inputs(config, &inputs)?;
    Ok(StateCache::allocate(device, &sizes)?)
}

/// The GPU reference of `model` in `dir`: transformers on the H200 (`<model>.h200.json`), or
/// on an H100 where only that one was made (`<model>.h100.json`).
pub fn gpu_reference(dir: &Path, model: &str) -> PathBuf {
    let at = |tag: &str| dir.join(format!("{model}.{tag}.json"));
    match at("h200").exists() {
        true => at("h200"),
        false => at("h100"),
    }
}

/// What a run produced: every position's logits (`[vocab]` each) and, for a MoE model, the
/// experts it chose per layer.
pub struct Outputs {
    pub logits: Vec<Vec<f32>>,
    pub routes: Vec<Vec<Vec<u32>>>,
}

/// How a run agreed with the reference, over the positions routed as the reference routed.
#[derive(Debug)]
pub struct Agreement {
    /// Positions compared (every one's argmax agrees).
    pub positions: usize,
    /// The largest absolute error of a probed logit or the maximum.
    pub max_abs: f32,
    /// The largest per-position mean absolute error.
    pub mean_abs: f32,
    /// Positions where a layer chose other experts than the reference (not held to the
    /// tolerance).
    pub flips: usize,
    /// Positions whose argmax differs from the reference's in a near tie: our logit at the
    /// reference's argmax within the tolerance of our maximum (`compare::PositionError`'s
    /// `argmax_tie`), every probed logit still held to the tolerance.
    pub ties: usize,
}

/// What a step runs in on one device, allocated up front ([`Run::hold`]): the weight arenas
/// loaded from the checkpoint, the KV pool, the state cache (every buffer 0 bytes for a model
/// without recurrent layers) and the activation arena.
pub struct Held<D: Device> {
    pub weights: AllocatedWeights<D>,
    pub kv: Allocated<KvPool, D>,
    pub states: Allocated<StateCache, D>,
    pub arena: Allocated<BufferArena, D>,
}

impl<D: Device> Held<D> {
    /// Frees all four, each exactly once: every one is attempted, the first failure returned.
    pub fn release(self) -> Result<(), Box<dyn std::error::Error>> {
        let arena = self.arena.release();
        let states = self.states.release();
        let kv = self.kv.release();
        self.weights.release()?;
        kv?;
        states?;
        Ok(arena?)
    }
}

/// A checkpoint directory this run wrote, removed with it.
struct Written(PathBuf);

impl Drop for Written {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Everything one model's run needs.
pub struct Run {
    pub reference: compare::Reference,
    pub decoder: model::Decoder,
    /// The checkpoint the weight arenas are loaded from: `config.json` and the safetensors
    /// file, in the names `save_pretrained` writes.
    pub checkpoint: PathBuf,
    _written: Option<Written>,
}

impl Run {
    /// Reads the reference and builds the decoder. The weights: with `weights_dir`, the
    /// checkpoint `reference.py` saved there (`<dir>/<model>/`); without, computed here,
    /// checked against `reference.py`'s fingerprints (`<model>.weights.json` beside the
    /// reference: the two sides hold the same weights, bit for bit) and written as a
    /// checkpoint in a temporary directory, removed with the run.
    pub fn new(
        model: &str,
        weights_dir: Option<&Path>,
        reference_path: &Path,
    ) -> Result<Run, Box<dyn std::error::Error>> {
        let reference = compare::Reference::read(reference_path)?;
        let (base, layers) = model.rsplit_once('-').ok_or("a model is <shipped>-<N>l")?;
        let layers: usize = layers.trim_end_matches('l').parse()?;
        // `<shipped>-narrow-<N>l`: the file at the host test's narrow widths (`model::narrow`).
        let decoder = match base.strip_suffix("-narrow") {
            Some(base) => model::Decoder::narrowed(base, layers, &model::narrow())?,
            None => model::Decoder::shipped(base, layers)?,
        };
        if let Some(dir) = weights_dir {
            return Ok(Run {
                reference,
                decoder,
                checkpoint: dir.join(model),
                _written: None,
            });
        }
        let weights = weights::Weights::generate(&decoder.parameters(), decoder.centred_norm);
        weights.check(&reference_path.with_file_name(format!("{model}.weights.json")))?;
        let dir = std::env::temp_dir().join(format!(
            "arena-forward-{model}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let written = Written(dir.clone());
        weights.write_checkpoint(&dir, &decoder.json)?;
        Ok(Run {
            reference,
            decoder,
            checkpoint: dir,
            _written: Some(written),
        })
    }

    /// Tensor-parallel rank `index` of `tp`: the same reference and checkpoint, the rank's
    /// decoder (`Decoder::rank`), so its weights load as the rank's share and its arena, KV
    /// pool and logits are the rank's. Lives no longer than `self`, which owns the
    /// checkpoint it reads.
    pub fn rank(&self, tp: usize, index: usize) -> Result<Run, Box<dyn std::error::Error>> {
        Ok(Run {
            reference: self.reference.clone(),
            decoder: self.decoder.rank(tp, index)?,
            checkpoint: self.checkpoint.clone(),
            _written: None,
        })
    }

    /// The six weight arenas on `device`, filled from the checkpoint by the library's loader:
    /// every tensor matched to its place (name, dtype, shape, bytes) before a byte is copied,
    /// nothing skipped. On an error, what was allocated is released.
    pub fn load_weights<D: Device + Clone>(
        &self,
        device: D,
    ) -> Result<AllocatedWeights<D>, Box<dyn std::error::Error>> {
        let config = &self.decoder.config;
        let sizes = WeightsSizes::new(config, &config.weight_formats)?;
        let table = tensor_table(config, &sizes)?;
        let checkpoint = Checkpoint::open(&self.checkpoint)?;
        let plan = LoadPlan::new(
            config,
            &table,
            checkpoint.tensors(),
            checkpoint.files(),
            &config.weight_formats,
        );
        if let Some(skipped) = plan.skipped.first() {
            let (tensor, why) = (&skipped.tensor, skipped.reason);
            return Err(
                format!("the checkpoint holds `{tensor}`, which the step skips: {why}").into(),
            );
        }
        let mut weights = AllocatedWeights::allocate(device, &sizes)?;
        match load(&checkpoint, &plan, &mut weights, &mut |_, _| {}) {
            Ok(_) => Ok(weights),
            Err(e) => {
                weights.release()?;
                Err(e.into())
            }
        }
    }

    /// The arena's inputs: the prefill's tokens, one sequence.
    pub fn inputs(&self) -> BufferArenaInputs {
        BufferArenaInputs {
            max_batch_tokens: self.reference.prefill,
            max_seq_len: self.reference.tokens.len(),
            kv_block_size: 16,
            max_batch_size: 1,
        }
    }

    /// What a step runs in on `device`: the weights loaded ([`Self::load_weights`]), a KV pool
    /// of `blocks` blocks of the arena's block size ([`Self::kv_pool`]), a state cache of
    /// `inputs.max_batch_size` slots ([`Self::state_cache`]) and the arena of `inputs`,
    /// allocated in `options`. An early error drops (so frees) what was allocated.
    pub fn hold<D: Device + Clone>(
        &self,
        device: D,
        inputs: &BufferArenaInputs,
        blocks: usize,
        options: AllocOptions,
    ) -> Result<Held<D>, Box<dyn std::error::Error>> {
        let sizes = inputs.sizes(&self.decoder.config)?;
        Ok(Held {
            weights: self.load_weights(device.clone())?,
            kv: self.kv_pool(device.clone(), inputs.kv_block_size, blocks)?,
            states: state_cache(device.clone(), &self.decoder, inputs.max_batch_size)?,
            arena: BufferArena::allocate_with(device, &sizes, options)?,
        })
    }

    /// A KV pool of `blocks` blocks of `block_tokens` tokens (full-attention layers only,
    /// bf16), allocated on `device`.
    pub fn kv_pool<D: Device>(
        &self,
        device: D,
        block_tokens: usize,
        blocks: usize,
    ) -> Result<Allocated<KvPool, D>, Box<dyn std::error::Error>> {
        let inputs = KvPoolInputs {
            block_tokens,
            blocks,
            sliding_blocks: 0,
            csa_blocks: 0,
            hca_blocks: 0,
            kv_dtype: KvDtype::Bf16,
        };
        let sizes = KvPoolSizes::try_from_inputs(&self.decoder.config, &inputs)?;
        Ok(KvPool::allocate(device, &sizes)?)
    }

    /// Blocks the one sequence's tokens take.
    pub fn kv_blocks(&self) -> usize {
        self.reference
            .tokens
            .len()
            .div_ceil(self.inputs().kv_block_size)
    }

    /// The prefill, then one decode step per remaining token, each in a host arena.
    pub fn outputs(
        &self,
        options: AllocOptions,
        poison: bool,
    ) -> Result<Outputs, Box<dyn std::error::Error>> {
        let ops = HostOps::new(&self.decoder);
        self.outputs_on(HostDevice::new(), ops, options, poison)
    }

    /// The same run split over `tp` tensor-parallel ranks on the host, each on a thread of
    /// its own with its share of every weight (loaded from the checkpoint as the loader cuts
    /// it), its own arena and KV pool; the row-parallel outputs all-reduced between them
    /// (`HostComm`). A position's logits are the ranks' vocabulary shares side by side.
    pub fn outputs_tp(
        &self,
        tp: usize,
        options: AllocOptions,
        poison: bool,
    ) -> Result<Outputs, Box<dyn std::error::Error>> {
        let comms = crate::kernels::HostComm::group(tp);
        self.on_ranks(tp, comms, |_, rank, comm| {
            let ops = HostOps::with_comm(&rank.decoder, comm);
            rank.outputs_on(HostDevice::new(), ops, options, poison)
        })
    }

    /// `each` on every one of `tp` tensor-parallel ranks at once, rank `r` on a thread of its
    /// own with its run ([`Self::rank`]) and `with[r]` (its communicator), the outputs gathered
    /// ([`Self::gather`]). An error names the rank it came from.
    pub fn on_ranks<T: Send>(
        &self,
        tp: usize,
        with: Vec<T>,
        each: impl Fn(usize, &Run, T) -> Result<Outputs, Box<dyn std::error::Error>> + Sync,
    ) -> Result<Outputs, Box<dyn std::error::Error>> {
        let ranks = (0..tp)
            .map(|r| self.rank(tp, r))
            .collect::<Result<Vec<_>, _>>()?;
        let each = &each;
        let outputs: Vec<Result<Outputs, String>> = std::thread::scope(|scope| {
            let running: Vec<_> = ranks
                .iter()
                .zip(with)
                .enumerate()
                .map(|(r, (rank, with))| {
                    scope.spawn(move || each(r, rank, with).map_err(|e| format!("rank {r}: {e}")))
                })
                .collect();
            running
                .into_iter()
                .map(|r| r.join().unwrap_or_else(|_| Err("a rank panicked".into())))
                .collect()
        });
        let outputs = outputs.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok(self.gather(outputs))
    }

    /// The tensor-parallel ranks' outputs as one: a position's logits the ranks' vocabulary
    /// shares side by side (the padding rows past the vocabulary dropped), the first rank's
    /// routes (every rank routes alike: the router is whole on each).
    pub fn gather(&self, outputs: Vec<Outputs>) -> Outputs {
        let positions = outputs.first().map_or(0, |o| o.logits.len());
        let logits = (0..positions)
            .map(|p| {
                let mut row: Vec<f32> = outputs.iter().flat_map(|o| o.logits[p].clone()).collect();
                row.truncate(self.decoder.vocab);
                row
            })
            .collect();
        let routes = outputs
            .into_iter()
            .next()
            .map(|o| o.routes)
            .unwrap_or_default();
        Outputs { logits, routes }
    }

    /// The same run in an arena on `device`, the step's ops by `ops` (a GPU's through
    /// `gpu.rs`), the weights loaded into their arenas and the keys and values in a `KvPool`
    /// on the same device. Each arena is released whether or not the steps succeed (dropped
    /// on an early error, which frees it too).
    pub fn outputs_on<D: Device + Clone, O: Ops<D>>(
        &self,
        device: D,
        ops: O,
        options: AllocOptions,
        poison: bool,
    ) -> Result<Outputs, Box<dyn std::error::Error>> {
        let inputs = self.inputs();
        let mut h = self.hold(device, &inputs, self.kv_blocks(), options)?;
        let mut engine = step::Engine::new(&self.decoder, ops, &inputs, self.kv_blocks())?;
        engine.poison = poison;
        let params = Params::of(&h.weights, self.decoder.tied);
        let logits = self.steps(&mut engine, &mut h.arena, &params, &mut h.kv, &mut h.states);
        h.release()?;
        Ok(Outputs {
            logits: logits?,
            routes: engine.routes,
        })
    }

    /// `seqs` (`(prompt, len)` each, prefixes of the reference's tokens) served together
    /// (`serve.rs`) in arenas on `device`: the arena sized for `limits` (its
    /// `max_batch_tokens`, `max_batch_size` and block size), a KV pool of `limits.blocks`
    /// blocks, the weights loaded as for one sequence. With `warm`, the sequences are served
    /// twice and the second pass returned, the first's free memory in `cold_free` (an
    /// engine's warm-up: see `Served::cold_free`).
    pub fn serve_on<D: Device + Clone, O: Ops<D>>(
        &self,
        device: D,
        ops: O,
        options: AllocOptions,
        limits: Limits,
        seqs: &[(usize, usize)],
        warm: bool,
    ) -> Result<serve::Served, Box<dyn std::error::Error>> {
        let inputs = BufferArenaInputs {
            max_batch_tokens: limits.max_batch_tokens,
            max_seq_len: self.reference.tokens.len(),
            kv_block_size: limits.block_tokens,
            max_batch_size: limits.max_batch_size,
        };
        let mut h = self.hold(device, &inputs, limits.blocks, options)?;
        // The scheduler draws the blocks; the engine's own pool (for `step`) is left empty.
        let mut engine = step::Engine::new(&self.decoder, ops, &inputs, 0)?;
        let params = Params::of(&h.weights, self.decoder.tied);
        let (arena, kv, states) = (&mut h.arena, &mut h.kv, &mut h.states);
        let mut serve = || {
            serve::serve(
                self,
                &mut engine,
                arena,
                &params,
                (kv, states),
                limits,
                seqs,
            )
        };
        let served = match warm {
            true => serve().and_then(|cold| {
                let mut served = serve()?;
                served.cold_free = cold.free;
                Ok(served)
            }),
            false => serve(),
        };
        h.release()?;
        served
    }

    /// The prefill's logits then each decode step's, one `[vocab]` per position.
    pub fn steps<D: Device, O: Ops<D>>(
        &self,
        engine: &mut step::Engine<'_, O>,
        arena: &mut Allocated<BufferArena, D>,
        w: &Params<'_, D>,
        kv: &mut Allocated<KvPool, D>,
        states: &mut Allocated<StateCache, D>,
    ) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error>> {
        let tokens = &self.reference.tokens;
        let prefill = self.reference.prefill;
        let mut out: Vec<Vec<f32>> = engine
            .step(arena, w, kv, states, &tokens[..prefill])?
            .chunks_exact(self.decoder.vocab)
            .map(<[f32]>::to_vec)
            .collect();
        for &t in &tokens[prefill..] {
            out.push(engine.step(arena, w, kv, states, &[t])?);
        }
        Ok(out)
    }

    /// `outputs` held to the reference: the argmax agrees at every position but in near ties
    /// (two logits within the tolerance, which bf16 rounding may order either way), and every
    /// probed logit and the maximum are within [`position_tolerance`] except at positions whose routing
    /// differs from the reference's (at most `routing_flips` of them). `outputs` holds the
    /// reference's positions from the first, all of them or fewer (a served sequence, a prefix
    /// of the reference's tokens). The figures, or what failed.
    pub fn check(&self, outputs: &Outputs, routing_flips: usize) -> Result<Agreement, String> {
        check(&self.reference, outputs, routing_flips)
    }

    /// Per position: argmax agreement, largest and mean absolute error.
    pub fn report(&self, outputs: &Outputs) {
        let r = &self.reference;
        println!(
            "{} against transformers on {} ({} prefill positions, then decode)",
            r.model, r.device, r.prefill
        );
        println!(
            "{:>4}  {:>7}  {:>7}  {:>9}  {:>9}",
            "pos", "ref", "ours", "max |Δ|", "mean |Δ|"
        );
        for (i, l) in outputs.logits.iter().enumerate() {
            let p = &r.positions[i];
            let e = compare::compare(r, i, l, position_tolerance(p, p.max));
            let mut mark = if e.argmax.0 == e.argmax.1 {
                String::new()
            } else if e.argmax_tie {
                " argmax: a near tie".into()
            } else {
                " argmax DIFFERS".into()
            };
            let layers = r.routing_differs(i, &outputs.routes);
            if !layers.is_empty() {
                mark += &format!(" routing differs at layer {layers:?}: not held to the tolerance");
            }
            println!(
                "{i:>4}  {:>7}  {:>7}  {:>9.5}  {:>9.5}{mark}",
                e.argmax.0, e.argmax.1, e.max_abs, e.mean_abs
            );
        }
    }
}

/// [`Run::check`] against `r`, any reference of the run's model.
pub fn check(
    r: &compare::Reference,
    outputs: &Outputs,
    routing_flips: usize,
) -> Result<Agreement, String> {
    let model = &r.model;

    if outputs.logits.len() > r.positions.len() {
        return Err(format!(
            "{model}: {} positions, the reference has {}",
            outputs.logits.len(),
            r.positions.len()
        ));
    }
    let mut a = Agreement {
        positions: outputs.logits.len(),
        max_abs: 0.0,
        mean_abs: 0.0,
        flips: 0,
        ties: 0,
    };
    for (i, logits) in outputs.logits.iter().enumerate() {
        let p = &r.positions[i];
        let e = compare::compare(r, i, logits, position_tolerance(p, p.max));
        a.ties += usize::from(e.argmax.0 != e.argmax.1 && e.argmax_tie);
        if e.argmax.0 != e.argmax.1 && !e.argmax_tie {
            return Err(format!(
                "{model} position {i}: argmax {} here, {} in the reference",
                e.argmax.1, e.argmax.0
            ));
        }
        if !r.routing_differs(i, &outputs.routes).is_empty() {
            a.flips += 1;
            continue;
        }
        for (&id, &want) in r
            .probe_ids
            .iter()
            .zip(&p.probes)
            .chain([(&p.argmax, &p.max)])
        {
            let got = logits[id];
            if (got - want).abs() > position_tolerance(p, want) {
                return Err(format!(
                    "{model} position {i}: logit {id} is {got}, the reference {want}"
                ));
            }
        }
        a.max_abs = a.max_abs.max(e.max_abs);
        a.mean_abs = a.mean_abs.max(e.mean_abs);
    }
    if a.flips > routing_flips {
        return Err(format!("{model}: routing differs at {} positions", a.flips));
    }
    Ok(a)
}
