//! One forward step of a Qwen3 / Qwen3-MoE decoder in the engine's `BufferArena`: every
//! intermediate tensor in the arena buffer the seeds give it, reached only through the views of
//! the phase that is running, each phase poisoned as it begins (poison mode), so a buffer read
//! after its phase ended reads NaNs on a shared slab. The KV cache is the example's own (a
//! later declaration gives caches to the derive).
//!
//! Per layer: `attention` (norm, fused q|k|v projection into `qkv_output`, q/k norm and RoPE
//! in place, causal GQA attention into `attn_output`, O projection and residual add into
//! `hidden_states`), for a MoE model `router` (norm, router logits into `gate_logits`, the
//! top-K into `scratch`), `ffn_gate_up` (gate and up projections into `expert_gate_out` /
//! `expert_up_out`, one row per token and chosen expert, then the activation over
//! `expert_gate_out`), `ffn_down` (down projection into `expert_down_out`; the weighted
//! combine into `moe_output` for a MoE model; residual add); after the last layer `lm_head`
//! (final norm, logits into `logits`).

use crate::kernels::{self as k, Result};
use crate::model::Decoder;
use crate::weights::Weights;
use arena_runtime::dtype::bf16;
use arena_runtime::{Allocated, Device};
use arena_spec::arena::{
    BufferArenaAttentionViews, BufferArenaFfnDownViews, BufferArenaFfnGateUpViews,
    BufferArenaLmHeadViews, BufferArenaRouterViews,
};
use arena_spec::regions::ScratchLayout;
use arena_spec::{BufferArena, BufferArenaPhase};

/// The weights, the per-layer KV cache and the scratch layout of one sequence.
pub struct Engine<'w> {
    pub decoder: &'w Decoder,
    weights: &'w Weights,
    /// Each layer's q | k | v weights stacked, `[q + 2·kv width, hidden]`: one projection.
    qkv: Vec<Vec<bf16>>,
    scratch: ScratchLayout,
    /// Per layer: keys and values of every position so far, `[position, kv width]`, bf16
    /// values (after k norm and RoPE, as transformers' cache holds them).
    keys: Vec<Vec<f32>>,
    values: Vec<Vec<f32>>,
    /// Poison each phase as it begins.
    pub poison: bool,
    /// The experts each position chose, per layer, sorted (read back from `scratch`): what
    /// tells a routing near-tie from an error when logits are compared.
    pub routes: Vec<Vec<Vec<u32>>>,
}

impl<'w> Engine<'w> {
    pub fn new(decoder: &'w Decoder, weights: &'w Weights, scratch: ScratchLayout) -> Self {
        let qkv = (0..decoder.layers)
            .map(|l| {
                ["q_proj", "k_proj", "v_proj"]
                    .iter()
                    .flat_map(|p| {
                        weights
                            .get(&format!("model.layers.{l}.self_attn.{p}.weight"))
                            .data
                            .iter()
                            .copied()
                    })
                    .collect()
            })
            .collect();
        Engine {
            decoder,
            weights,
            qkv,
            scratch,
            keys: vec![Vec::new(); decoder.layers],
            values: vec![Vec::new(); decoder.layers],
            poison: true,
            routes: Vec::new(),
        }
    }

    /// Cached positions so far.
    pub fn cached(&self) -> usize {
        self.keys[0].len() / (self.decoder.kv_heads * self.decoder.head_dim)
    }

    fn w(&self, name: &str) -> &'w [bf16] {
        &self.weights.get(name).data
    }

    fn begin<D: Device>(
        &self,
        arena: &Allocated<BufferArena, D>,
        phase: BufferArenaPhase,
    ) -> Result<()> {
        if self.poison {
            arena.poison_phase(phase)?;
        }
        Ok(())
    }

    /// Runs `tokens` (the sequence's next tokens, at positions `cached()..`) through the
    /// model and returns their logits, `[tokens.len(), vocab]`, read from `logits`.
    pub fn step<D: Device>(
        &mut self,
        arena: &mut Allocated<BufferArena, D>,
        tokens: &[u32],
    ) -> Result<Vec<f32>> {
        let d = self.decoder;
        let (m, h) = (tokens.len(), d.hidden);
        let start = self.cached() as u32;
        let positions: Vec<u32> = (start..start + m as u32).collect();

        // Step inputs (whole-step buffers, reachable from any phase's views): token ids, each
        // token's position in `scratch`, and the embedding gather into `hidden_states`.
        {
            let mut v = BufferArenaAttentionViews::of(arena);
            k::store_words(&mut v.token_ids, tokens)?;
            k::store_words(
                &mut v.scratch.region::<i32>(self.scratch.positions)?,
                &positions,
            )?;
            let table = self.w("model.embed_tokens.weight");
            let rows: Vec<f32> = tokens
                .iter()
                .flat_map(|&t| {
                    table[t as usize * h..(t as usize + 1) * h]
                        .iter()
                        .map(|x| x.to_f32())
                })
                .collect();
            k::store_bf16(&mut v.hidden_states, &rows)?;
        }
        for layer in 0..d.layers {
            self.attention(arena, layer, m)?;
            if d.experts > 0 {
                self.router(arena, layer, m)?;
            }
            self.ffn(arena, layer, m)?;
        }
        self.lm_head(arena, m)
    }

    fn attention<D: Device>(
        &mut self,
        arena: &mut Allocated<BufferArena, D>,
        layer: usize,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let (h, hd) = (d.hidden, d.head_dim);
        let (qw, kvw) = (d.heads * hd, d.kv_heads * hd);
        let width = qw + 2 * kvw;
        let p = |s: &str| format!("model.layers.{layer}.{s}");
        self.begin(arena, BufferArenaPhase::Attention)?;
        let mut v = BufferArenaAttentionViews::of(arena);
        let x = k::load_bf16(&v.hidden_states.as_view(), m * h)?;
        k::store_bf16(&mut v.residual, &x)?;
        let normed = k::rms_norm(&x, h, self.w(&p("input_layernorm.weight")), d.eps);
        k::store_bf16(&mut v.norm_output, &normed)?;

        let x = k::load_bf16(&v.norm_output.as_view(), m * h)?;
        let qkv = k::linear(&x, m, &self.qkv[layer], width, h);
        k::store_bf16(&mut v.qkv_output, &qkv)?;

        // q/k norm per head, then RoPE, in place in `qkv_output`.
        let mut qkv = k::load_bf16(&v.qkv_output.as_view(), m * width)?;
        let (qn, kn) = (
            self.w(&p("self_attn.q_norm.weight")),
            self.w(&p("self_attn.k_norm.weight")),
        );
        for row in qkv.chunks_exact_mut(width) {
            let q = k::rms_norm(&row[..qw], hd, qn, d.eps);
            let kk = k::rms_norm(&row[qw..qw + kvw], hd, kn, d.eps);
            row[..qw].copy_from_slice(&q);
            row[qw..qw + kvw].copy_from_slice(&kk);
        }
        let positions = k::load_words(
            &v.scratch.region::<i32>(self.scratch.positions)?.as_view(),
            m,
        )?;
        k::rope(&mut qkv, width, 0, d.heads, hd, &positions, d.rope_theta);
        k::rope(
            &mut qkv,
            width,
            qw,
            d.kv_heads,
            hd,
            &positions,
            d.rope_theta,
        );
        k::store_bf16(&mut v.qkv_output, &qkv)?;

        // Append this step's keys and values to the cache, then attend.
        let qkv = k::load_bf16(&v.qkv_output.as_view(), m * width)?;
        for row in qkv.chunks_exact(width) {
            self.keys[layer].extend_from_slice(&row[qw..qw + kvw]);
            self.values[layer].extend_from_slice(&row[qw + kvw..]);
        }
        let q: Vec<f32> = qkv
            .chunks_exact(width)
            .flat_map(|r| r[..qw].iter().copied())
            .collect();
        let out = k::attention(
            &q,
            &positions,
            &self.keys[layer],
            &self.values[layer],
            d.heads,
            d.kv_heads,
            hd,
        );
        k::store_bf16(&mut v.attn_output, &out)?;

        let a = k::load_bf16(&v.attn_output.as_view(), m * qw)?;
        let o = k::linear(&a, m, self.w(&p("self_attn.o_proj.weight")), h, qw);
        k::store_bf16(&mut v.hidden_states, &o)?;
        let (o, r) = (
            k::load_bf16(&v.hidden_states.as_view(), m * h)?,
            k::load_bf16(&v.residual.as_view(), m * h)?,
        );
        k::store_bf16(&mut v.hidden_states, &k::add(&r, &o))
    }

    /// The MoE router: norm, logits, top-K into `scratch`.
    fn router<D: Device>(
        &self,
        arena: &mut Allocated<BufferArena, D>,
        layer: usize,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let h = d.hidden;
        let p = |s: &str| format!("model.layers.{layer}.{s}");
        self.begin(arena, BufferArenaPhase::Router)?;
        let mut v = BufferArenaRouterViews::of(arena);
        self.post_attention_norm(
            &mut v.hidden_states,
            &mut v.residual,
            &mut v.norm_output,
            layer,
            m,
        )?;
        let x = k::load_bf16(&v.norm_output.as_view(), m * h)?;
        let logits = k::linear(&x, m, self.w(&p("mlp.gate.weight")), d.experts, h);
        k::store_bf16(&mut v.gate_logits, &logits)?;
        let logits = k::load_bf16(&v.gate_logits.as_view(), m * d.experts)?;
        let (ids, weights) = k::top_k(&logits, d.experts, d.top_k, d.norm_topk_prob);
        k::store_words(
            &mut v.scratch.region::<i32>(self.scratch.moe_topk_ids)?,
            &ids,
        )?;
        let bits: Vec<u32> = weights.iter().map(|w| w.to_bits()).collect();
        k::store_words(
            &mut v.scratch.region::<f32>(self.scratch.moe_topk_weights)?,
            &bits,
        )
    }

    /// `residual ← hidden_states`, `norm_output ← RMSNorm(hidden_states)`: the FFN's input.
    fn post_attention_norm<D: Device>(
        &self,
        hidden: &mut arena_runtime::ViewMut<'_, bf16, D>,
        residual: &mut arena_runtime::ViewMut<'_, bf16, D>,
        norm: &mut arena_runtime::ViewMut<'_, bf16, D>,
        layer: usize,
        m: usize,
    ) -> Result<()> {
        let h = self.decoder.hidden;
        let x = k::load_bf16(&hidden.as_view(), m * h)?;
        k::store_bf16(residual, &x)?;
        let w = self.w(&format!(
            "model.layers.{layer}.post_attention_layernorm.weight"
        ));
        k::store_bf16(norm, &k::rms_norm(&x, h, w, self.decoder.eps))
    }

    /// The FFN in its two phases: gate/up and the activation, then down and the combine.
    fn ffn<D: Device>(
        &mut self,
        arena: &mut Allocated<BufferArena, D>,
        layer: usize,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let (h, w) = (d.hidden, d.expert_width);
        let p = |s: &str| format!("model.layers.{layer}.{s}");
        // Row r of the expert buffers is (token r / fanout, choice r % fanout); a dense model
        // has one row per token.
        let fanout = d.top_k.max(1);
        let rows = m * fanout;
        let (ids, weights) = if d.experts > 0 {
            let mut v = BufferArenaFfnGateUpViews::of(arena);
            let ids = k::load_words(
                &v.scratch
                    .region::<i32>(self.scratch.moe_topk_ids)?
                    .as_view(),
                rows,
            )?;
            let bits = k::load_words(
                &v.scratch
                    .region::<f32>(self.scratch.moe_topk_weights)?
                    .as_view(),
                rows,
            )?;
            let first = self.cached() - m;
            self.routes.resize(first + m, Vec::new());
            for (t, chosen) in ids.chunks_exact(fanout).enumerate() {
                let mut chosen = chosen.to_vec();
                chosen.sort_unstable();
                self.routes[first + t].push(chosen);
            }
            (
                ids,
                bits.into_iter().map(f32::from_bits).collect::<Vec<_>>(),
            )
        } else {
            (Vec::new(), Vec::new())
        };

        self.begin(arena, BufferArenaPhase::FfnGateUp)?;
        let mut v = BufferArenaFfnGateUpViews::of(arena);
        if d.experts == 0 {
            self.post_attention_norm(
                &mut v.hidden_states,
                &mut v.residual,
                &mut v.norm_output,
                layer,
                m,
            )?;
        }
        let x = k::load_bf16(&v.norm_output.as_view(), m * h)?;
        let (gate, up) = if d.experts == 0 {
            (
                k::linear(&x, m, self.w(&p("mlp.gate_proj.weight")), w, h),
                k::linear(&x, m, self.w(&p("mlp.up_proj.weight")), w, h),
            )
        } else {
            let experts = self.weights.get(&p("mlp.experts.gate_up_proj"));
            let (mut gate, mut up) = (Vec::with_capacity(rows * w), Vec::with_capacity(rows * w));
            for (r, &e) in ids.iter().enumerate() {
                let t = r / fanout;
                let y = k::linear(
                    &x[t * h..(t + 1) * h],
                    1,
                    experts.matrix(e as usize),
                    2 * w,
                    h,
                );
                gate.extend_from_slice(&y[..w]);
                up.extend_from_slice(&y[w..]);
            }
            (gate, up)
        };
        k::store_bf16(&mut v.expert_gate_out, &gate)?;
        k::store_bf16(&mut v.expert_up_out, &up)?;
        let (gate, up) = (
            k::load_bf16(&v.expert_gate_out.as_view(), rows * w)?,
            k::load_bf16(&v.expert_up_out.as_view(), rows * w)?,
        );
        // The activation over the gate output: `expert_up_out` is dead from here on.
        k::store_bf16(&mut v.expert_gate_out, &k::swiglu(&gate, &up))?;

        self.begin(arena, BufferArenaPhase::FfnDown)?;
        let mut v = BufferArenaFfnDownViews::of(arena);
        let act = k::load_bf16(&v.expert_gate_out.as_view(), rows * w)?;
        let down = if d.experts == 0 {
            k::linear(&act, m, self.w(&p("mlp.down_proj.weight")), h, w)
        } else {
            let experts = self.weights.get(&p("mlp.experts.down_proj"));
            let mut down = Vec::with_capacity(rows * h);
            for (r, &e) in ids.iter().enumerate() {
                down.extend(k::linear(
                    &act[r * w..(r + 1) * w],
                    1,
                    experts.matrix(e as usize),
                    h,
                    w,
                ));
            }
            down
        };
        k::store_bf16(&mut v.expert_down_out, &down)?;
        let down = k::load_bf16(&v.expert_down_out.as_view(), rows * h)?;
        let out = if d.experts == 0 {
            down
        } else {
            // As `Qwen3MoeExperts`: each choice's output scaled by its bf16 weight (rounded),
            // added into a bf16 sum in ascending expert order.
            let mut sum = vec![0f32; m * h];
            for t in 0..m {
                let mut choices: Vec<usize> = (0..fanout).collect();
                choices.sort_by_key(|&c| ids[t * fanout + c]);
                for c in choices {
                    let r = t * fanout + c;
                    for (acc, x) in sum[t * h..(t + 1) * h]
                        .iter_mut()
                        .zip(&down[r * h..(r + 1) * h])
                    {
                        *acc =
                            bf16::from_f32(*acc + bf16::from_f32(x * weights[r]).to_f32()).to_f32();
                    }
                }
            }
            k::store_bf16(&mut v.moe_output, &sum)?;
            k::load_bf16(&v.moe_output.as_view(), m * h)?
        };
        let r = k::load_bf16(&v.residual.as_view(), m * h)?;
        k::store_bf16(&mut v.hidden_states, &k::add(&r, &out))
    }

    fn lm_head<D: Device>(
        &self,
        arena: &mut Allocated<BufferArena, D>,
        m: usize,
    ) -> Result<Vec<f32>> {
        let d = self.decoder;
        let h = d.hidden;
        self.begin(arena, BufferArenaPhase::LmHead)?;
        let mut v = BufferArenaLmHeadViews::of(arena);
        let x = k::load_bf16(&v.hidden_states.as_view(), m * h)?;
        k::store_bf16(
            &mut v.norm_output,
            &k::rms_norm(&x, h, self.w("model.norm.weight"), d.eps),
        )?;
        let x = k::load_bf16(&v.norm_output.as_view(), m * h)?;
        let head = if d.tied {
            "model.embed_tokens.weight"
        } else {
            "lm_head.weight"
        };
        let logits = k::linear(&x, m, self.w(head), d.vocab, h);
        let bits: Vec<u32> = logits.iter().map(|l| l.to_bits()).collect();
        k::store_words(&mut v.logits, &bits)?;
        let words = k::load_words(&v.logits.as_view(), m * d.vocab)?;
        Ok(words.into_iter().map(f32::from_bits).collect())
    }
}
