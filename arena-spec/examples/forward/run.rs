//! One model's run: the reference, the decoder and its weights, the steps in an arena, the
//! comparison. `main.rs` and the forward test share it.

use crate::{compare, model, step, weights};
use arena_runtime::{AllocOptions, HostDevice};
use arena_spec::{ArenaInputs, BufferArena};
use std::path::Path;

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

/// What a run produced: every position's logits (`[vocab]` each) and, for a MoE model, the
/// experts it chose per layer.
pub struct Outputs {
    pub logits: Vec<Vec<f32>>,
    pub routes: Vec<Vec<Vec<u32>>>,
}

/// Everything one model's run needs.
pub struct Run {
    pub reference: compare::Reference,
    pub decoder: model::Decoder,
    pub weights: weights::Weights,
}

impl Run {
    /// Reads the reference, builds the decoder, computes (or reads) the weights and checks
    /// them against `reference.py`'s fingerprints (`<model>.weights.json` beside the
    /// reference): the two sides ran on the same weights, bit for bit.
    pub fn new(
        model: &str,
        weights_dir: Option<&Path>,
        reference_path: &Path,
    ) -> Result<Run, Box<dyn std::error::Error>> {
        let reference = compare::Reference::read(reference_path)?;
        let (base, layers) = model.rsplit_once('-').ok_or("a model is <shipped>-<N>l")?;
        let layers: usize = layers.trim_end_matches('l').parse()?;
        let decoder = model::Decoder::shipped(base, layers)?;
        let weights = match weights_dir {
            Some(dir) => {
                weights::Weights::read_safetensors(&dir.join(format!("{model}.safetensors")))?
            }
            None => weights::Weights::generate(&decoder.parameters()),
        };
        let prints = reference_path.with_file_name(format!("{model}.weights.json"));
        weights.check(&prints)?;
        Ok(Run {
            reference,
            decoder,
            weights,
        })
    }

    /// The arena's inputs: the prefill's tokens, one sequence.
    pub fn inputs(&self) -> ArenaInputs {
        ArenaInputs {
            max_batch_tokens: self.reference.prefill,
            max_seq_len: self.reference.tokens.len(),
            kv_block_size: 16,
            max_batch_size: 1,
        }
    }

    /// The prefill, then one decode step per remaining token, each in the arena.
    pub fn outputs(
        &self,
        options: AllocOptions,
        poison: bool,
    ) -> Result<Outputs, Box<dyn std::error::Error>> {
        let inputs = self.inputs();
        let config = &self.decoder.config;
        let sizes = inputs.sizes(config)?;
        let mut arena = BufferArena::allocate_with(HostDevice::new(), &sizes, options)?;
        let mut engine =
            step::Engine::new(&self.decoder, &self.weights, inputs.scratch_layout(config)?);
        engine.poison = poison;
        let vocab = self.decoder.vocab;
        let tokens = &self.reference.tokens;
        let mut out: Vec<Vec<f32>> = engine
            .step(&mut arena, &tokens[..self.reference.prefill])?
            .chunks_exact(vocab)
            .map(<[f32]>::to_vec)
            .collect();
        for &t in &tokens[self.reference.prefill..] {
            out.push(engine.step(&mut arena, &[t])?);
        }
        arena.release()?;
        Ok(Outputs {
            logits: out,
            routes: engine.routes,
        })
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
            let e = compare::compare(r, i, l, tolerance(r.positions[i].max));
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
