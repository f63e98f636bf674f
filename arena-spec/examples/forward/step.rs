//! One forward step of a Qwen3 / Qwen3-MoE decoder in the engine's `BufferArena`: every
//! intermediate tensor in the arena buffer the seeds give it, reached only through the views of
//! the phase that is running, each phase poisoned as it begins (poison mode), so a buffer read
//! after its phase ended reads NaNs on a reuse slab. The schedule is written once, over the
//! [`Ops`] trait: the host backend (`kernels.rs`) and the GPU one (`gpu.rs`) run the same
//! ops on the same buffers. The weights are views of the weight arenas ([`Params`]); the keys
//! and values are the declared `KvPool`'s, each sequence's in the blocks its block table
//! lists; a step's positions, KV slots, block tables and sequence bounds are placed in
//! `scratch`'s regions before it runs ([`Engine::put_batch`]), where the kernels read them.
//!
//! Per layer: `attention` (norm, the q, k and v projections into their columns of `qkv_output`, q/k norm and RoPE
//! in place, causal GQA attention into `attn_output`, O projection and residual add into
//! `hidden_states`), for a MoE model `router` (norm, router logits into `gate_logits`, the
//! top-K into `scratch`), `ffn_gate_up` (gate and up projections into `expert_gate_out` /
//! `expert_up_out`, one row per token and chosen expert, then the activation over
//! `expert_gate_out`), `ffn_down` (down projection into `expert_down_out`; the weighted
//! combine into `moe_output` for a MoE model; residual add); after the last layer `lm_head`
//! (final norm, logits into `logits`).

use crate::host_io::{store_i64, store_words};
use crate::model::Decoder;
use crate::model::Mixer;
use crate::ops::{Gemm, KvMeta, Ops, Result, SeqState};
use crate::params::Params;
use arena_runtime::dtype::bf16;
use arena_runtime::{Allocated, Device};
use arena_spec::arena::regions::ScratchLayout;
use arena_spec::arena::sizing::block_table_width;
use arena_spec::arena::{
    BufferArenaAttentionViews, BufferArenaFfnDownViews, BufferArenaFfnGateUpViews,
    BufferArenaLmHeadViews, BufferArenaRouterViews,
};
use arena_spec::kv::{KvPool, KvPoolViewsMut};
use arena_spec::serving::{BlockPool, BlockTable, StepMetadata};
use arena_spec::BufferArenaInputs;
use arena_spec::{BufferArena, BufferArenaPhase, StateCache};

/// The schedule over a backend's ops: of a batch of sequences placed by [`Self::put_batch`],
/// or of one sequence by [`Self::step`] (its own block table, drawn from the KV pool's blocks).
pub struct Engine<'d, O> {
    pub decoder: &'d Decoder,
    pub ops: O,
    pub(crate) scratch: ScratchLayout,
    /// Tokens a KV block holds, and blocks a block table holds (the arena's `kv_block_size`
    /// and `block_table_width`).
    pub block_tokens: usize,
    pub width: usize,
    /// [`Self::step`]'s sequence: its block table and the pool it draws on.
    table: BlockTable,
    blocks: BlockPool,
    /// Positions of [`Self::step`]'s sequence cached so far: its next step's first position.
    pub cached: usize,
    /// Poison each phase as it begins.
    pub poison: bool,
    /// Sequences of the batch placed last.
    seqs: usize,
    /// Their rows and state-cache slots (the delta-net layers' ops run a sequence at a time).
    pub(crate) seq_states: Vec<SeqState>,
    /// The experts each row of the last step chose, per layer, sorted (read back from
    /// `scratch`): what tells a routing near-tie from an error when logits are compared. Not
    /// recorded where the backend cannot read back (a step being captured).
    pub step_routes: Vec<Vec<Vec<u32>>>,
    /// The same for each position of [`Self::step`]'s sequence.
    pub routes: Vec<Vec<Vec<u32>>>,
}

impl<'d, O> Engine<'d, O> {
    /// An engine over an arena of `inputs` and a KV pool of `blocks` blocks.
    pub fn new(
        decoder: &'d Decoder,
        ops: O,
        inputs: &BufferArenaInputs,
        blocks: usize,
    ) -> Result<Self> {
        Ok(Engine {
            decoder,
            ops,
            scratch: inputs.scratch_layout(&decoder.config)?,
            block_tokens: inputs.kv_block_size,
            width: block_table_width(inputs.max_seq_len, inputs.kv_block_size)?,
            table: BlockTable::default(),
            blocks: BlockPool::new(blocks),
            cached: 0,
            poison: true,
            seqs: 0,
            seq_states: Vec::new(),
            step_routes: Vec::new(),
            routes: Vec::new(),
        })
    }

    pub(crate) fn begin<D: Device>(
        &self,
        arena: &Allocated<BufferArena, D>,
        phase: BufferArenaPhase,
    ) -> Result<()> {
        if self.poison {
            arena.poison_phase(phase)?;
        }
        Ok(())
    }

    /// Runs `tokens` (the one sequence's next tokens, at positions `cached..`) through the
    /// model and returns their logits, `[tokens.len(), vocab]`, read from `logits`. The
    /// sequence's states are slot 0 of `states`.
    pub fn step<D: Device>(
        &mut self,
        arena: &mut Allocated<BufferArena, D>,
        w: &Params<'_, D>,
        kv: &mut Allocated<KvPool, D>,
        states: &mut Allocated<StateCache, D>,
        tokens: &[u32],
    ) -> Result<Vec<f32>>
    where
        O: Ops<D>,
    {
        let first = self.cached;
        self.put_inputs(arena, tokens)?;
        self.forward(arena, w, kv, states, tokens.len())?;
        let routes = std::mem::take(&mut self.step_routes);
        for (t, r) in routes.into_iter().enumerate() {
            self.routes
                .resize(self.routes.len().max(first + t + 1), Vec::new());
            self.routes[first + t] = r;
        }
        self.read_logits(arena, tokens.len())
    }

    /// The one sequence's next `tokens`, at positions `cached..`, placed as a batch of one
    /// ([`Self::put_batch`]): its block table grown to hold them (a position placed again,
    /// as a replayed decode step does, keeps its slot); then `cached` moves past them.
    pub fn put_inputs<D: Device>(
        &mut self,
        arena: &mut Allocated<BufferArena, D>,
        tokens: &[u32],
    ) -> Result<()> {
        let (start, end) = (self.cached, self.cached + tokens.len());
        if end > self.table.tokens()
            && !self.table.grow(
                end - self.table.tokens(),
                self.block_tokens,
                &mut self.blocks,
            )
        {
            return Err(format!("the KV pool has no block for position {}", end - 1).into());
        }
        let mut meta = StepMetadata::default();
        meta.push_sequence(
            &self.table,
            start,
            tokens.len(),
            self.block_tokens,
            self.width,
        )
        .ok_or("the sequence's block table is wider than the arena's")?;
        self.put_batch(arena, tokens, &meta, &[0])?;
        self.cached = end;
        Ok(())
    }

    /// A step's inputs into their whole-step buffers: token ids into `token_ids`; into
    /// `scratch`'s regions each token's position and KV slot, each sequence's block table
    /// (`width` blocks), its cached length after the step and where its rows start
    /// (`cu_seqlens`). Copies from the host, outside any captured graph: a graph reads them
    /// where it recorded them. `slots` are the sequences' state-cache slots, in order.
    pub fn put_batch<D: Device>(
        &mut self,
        arena: &mut Allocated<BufferArena, D>,
        tokens: &[u32],
        meta: &StepMetadata,
        slots: &[usize],
    ) -> Result<()> {
        let seqs = meta.kv_lens.len();
        if meta.block_tables.len() != seqs * self.width
            || meta.positions.len() != tokens.len()
            || slots.len() != seqs
        {
            return Err("step metadata of another batch or block-table width".into());
        }
        let recurrent = self.decoder.config.has_gdn();
        if recurrent && (1..seqs).any(|s| slots[..s].contains(&slots[s])) {
            return Err(format!("two sequences of the step in one state slot: {slots:?}").into());
        }
        let cu = &meta.cu_seqlens;
        self.seq_states = (0..seqs)
            .map(|s| SeqState {
                rows: cu[s] as usize..cu[s + 1] as usize,
                slot: slots[s],
                fresh: cu[s] < cu[s + 1] && meta.positions.get(cu[s] as usize) == Some(&0),
            })
            .collect();
        let words = |v: &[i32]| v.iter().map(|&x| x as u32).collect::<Vec<_>>();
        let mut v = BufferArenaAttentionViews::of(arena);
        store_words(&mut v.token_ids, tokens)?;
        let l = &self.scratch;
        let s = &mut v.scratch;
        store_words(&mut s.region::<i32>(l.positions)?, &words(&meta.positions))?;
        store_i64(&mut s.region::<i64>(l.slot_mapping)?, &meta.slots)?;
        store_words(
            &mut s.region::<i32>(l.block_table)?,
            &words(&meta.block_tables),
        )?;
        store_words(&mut s.region::<i32>(l.seq_lens)?, &words(&meta.kv_lens))?;
        store_words(
            &mut s.region::<i32>(l.cu_seqlens)?,
            &words(&meta.cu_seqlens),
        )?;
        self.seqs = seqs;
        self.step_routes.clear();
        Ok(())
    }

    /// The whole model over the `m` tokens `put_inputs` placed, kernels only: nothing here
    /// waits for the device, so a backend on a stream can capture it as a graph.
    pub fn forward<D: Device>(
        &mut self,
        arena: &mut Allocated<BufferArena, D>,
        w: &Params<'_, D>,
        kv: &mut Allocated<KvPool, D>,
        states: &mut Allocated<StateCache, D>,
        m: usize,
    ) -> Result<()>
    where
        O: Ops<D>,
    {
        {
            let mut v = BufferArenaAttentionViews::of(arena);
            self.ops
                .embed(&v.token_ids.as_view(), &w.embed(), &mut v.hidden_states, m)?;
            let h = self.decoder.hidden;
            self.ops.all_reduce(&mut v.hidden_states, m * h)?;
        }
        for layer in 0..self.decoder.layers {
            match self.decoder.kinds[layer] {
                Mixer::Attention => self.attention(arena, w, kv, layer, m)?,
                Mixer::DeltaNet => self.delta_net(arena, w, states, layer, m)?,
            }
            if self.decoder.experts > 0 {
                self.router(arena, w, layer, m)?;
            }
            self.ffn(arena, w, layer, m)?;
        }
        self.lm_head(arena, w, m)
    }

    /// The last step's `[m, vocab]` logits, from `logits` (its last rows where `m` is more
    /// than `logits` holds: [`Self::lm_head`]).
    pub fn read_logits<D: Device>(
        &mut self,
        arena: &mut Allocated<BufferArena, D>,
        m: usize,
    ) -> Result<Vec<f32>>
    where
        O: Ops<D>,
    {
        let v = BufferArenaLmHeadViews::of(arena);
        let rows = m.min(v.logits.shape()[0]);
        self.ops
            .read_logits(&v.logits.as_view(), rows * self.decoder.vocab)
    }

    fn attention<D: Device>(
        &mut self,
        arena: &mut Allocated<BufferArena, D>,
        w: &Params<'_, D>,
        kv: &mut Allocated<KvPool, D>,
        layer: usize,
        m: usize,
    ) -> Result<()>
    where
        O: Ops<D>,
    {
        let d = self.decoder;
        let (h, a) = (d.hidden, d.index_in_kind(layer));
        let (qw, kvw) = (d.heads * d.head_dim, d.kv_heads * d.head_dim);
        let width = d.qkv_width();
        self.begin(arena, BufferArenaPhase::Attention)?;
        let mut v = BufferArenaAttentionViews::of(arena);
        let norm = w.input_norm(layer)?;
        self.sublayer_input(
            &mut v.hidden_states,
            &mut v.residual,
            &mut v.norm_output,
            &norm,
            m,
        )?;
        let ops = &mut self.ops;
        // q, k and v, each into its columns of `qkv_output`'s `[m, q | k | v]` rows; with
        // the output gate, `q_proj`'s rows are each head's q then its gate (`torch.chunk` of
        // a head's `2 · head_dim`), projected a half-head at a time into q's columns and
        // the gate's after v.
        let x = v.norm_output.as_view();
        let (hd, gated) = (d.head_dim, d.output_gate);
        let q = w.q(a)?;
        let mut parts = Vec::new();
        match gated {
            false => parts.push((q, qw, 0)),
            true => {
                for (half, head) in (0..2 * d.heads).map(|i| (i % 2, i / 2)) {
                    let rows =
                        q.range((2 * head + half) * hd * h..(2 * head + half + 1) * hd * h)?;
                    let col = head * hd + half * (qw + 2 * kvw);
                    parts.push((rows, hd, col));
                }
            }
        }
        parts.extend([(w.k(a)?, kvw, qw), (w.v(a)?, kvw, qw + kvw)]);
        for (weight, n, col) in parts {
            let gemm = Gemm {
                n,
                k: h,
                col,
                ld: width,
            };
            ops.linear(&x, &mut v.qkv_output, &weight, gemm, m)?;
        }
        let positions = v.scratch.as_view().region::<i32>(self.scratch.positions)?;
        ops.qk_norm_rope(
            &mut v.qkv_output,
            &positions,
            &w.q_norm(a)?,
            &w.k_norm(a)?,
            m,
        )?;
        let scratch = v.scratch.as_view();
        let meta = KvMeta {
            positions,
            slots: scratch.region::<i64>(self.scratch.slot_mapping)?,
            block_table: scratch.region::<i32>(self.scratch.block_table)?,
            cu_seqlens: scratch.region::<i32>(self.scratch.cu_seqlens)?,
            seqs: self.seqs,
            width: self.width,
            block_tokens: self.block_tokens,
        };
        let mut layer_kv = KvPoolViewsMut::of(kv)?
            .full
            .into_layer(a)?
            .into_cast::<bf16>()?;
        ops.attention(
            &v.qkv_output.as_view(),
            &meta,
            &mut layer_kv,
            &mut v.attn_output,
            m,
        )?;
        if gated {
            ops.output_gate(&v.qkv_output.as_view(), &mut v.attn_output, m)?;
        }
        // The O projection into `hidden_states` (its input is in `residual`), then the add.
        ops.linear(
            &v.attn_output.as_view(),
            &mut v.hidden_states,
            &w.o(a)?,
            Gemm::rows(h, qw),
            m,
        )?;
        // A tensor-parallel rank's O projection is a partial sum over its heads.
        ops.all_reduce(&mut v.hidden_states, m * h)?;
        ops.add(&v.residual.as_view(), &mut v.hidden_states, m * h)
    }

    /// The MoE router: the FFN's input norm, logits into `gate_logits`, the top-K into
    /// `scratch` (ids, then their weights).
    fn router<D: Device>(
        &mut self,
        arena: &mut Allocated<BufferArena, D>,
        w: &Params<'_, D>,
        layer: usize,
        m: usize,
    ) -> Result<()>
    where
        O: Ops<D>,
    {
        self.begin(arena, BufferArenaPhase::Router)?;
        let mut v = BufferArenaRouterViews::of(arena);
        self.sublayer_input(
            &mut v.hidden_states,
            &mut v.residual,
            &mut v.norm_output,
            &w.post_attention_norm(layer)?,
            m,
        )?;
        let gemm = Gemm::rows(self.decoder.experts, self.decoder.hidden);
        self.ops.linear(
            &v.norm_output.as_view(),
            &mut v.gate_logits,
            &w.router(layer)?,
            gemm,
            m,
        )?;
        let logits = v.gate_logits.as_view();
        self.ops.top_k_ids(
            &logits,
            &mut v.scratch.region::<i32>(self.scratch.moe_topk_ids)?,
            m,
        )?;
        let weights = self.scratch.moe_topk_weights;
        self.ops
            .top_k_weights(&logits, &mut v.scratch.region::<f32>(weights)?, m)?;
        let ids = v
            .scratch
            .as_view()
            .region::<i32>(self.scratch.moe_topk_ids)?;
        if let Some(chosen) = self.ops.routes(&ids, m)? {
            self.step_routes.resize(m, Vec::new());
            for (t, c) in chosen.chunks_exact(self.decoder.top_k).enumerate() {
                let mut c = c.to_vec();
                c.sort_unstable();
                self.step_routes[t].push(c);
            }
        }
        Ok(())
    }

    /// `residual ← hidden_states`, `norm_output ← RMSNorm(hidden_states)`: a sublayer's input
    /// (a mixer's with the layer's input norm, the FFN's with its post-attention norm).
    pub(crate) fn sublayer_input<D: Device>(
        &mut self,
        hidden: &mut arena_runtime::ViewMut<'_, arena_runtime::dtype::bf16, D>,
        residual: &mut arena_runtime::ViewMut<'_, arena_runtime::dtype::bf16, D>,
        norm: &mut arena_runtime::ViewMut<'_, arena_runtime::dtype::bf16, D>,
        weight: &arena_runtime::View<'_, arena_runtime::dtype::bf16, D>,
        m: usize,
    ) -> Result<()>
    where
        O: Ops<D>,
    {
        let h = self.decoder.hidden;
        self.ops.copy(&hidden.as_view(), residual, m * h)?;
        self.ops.rms_norm(&hidden.as_view(), norm, weight, m)
    }

    /// The FFN in its two phases: gate/up and the activation, then down and the combine. Row
    /// `r` of the expert buffers is (token `r / K`, choice `r % K`); a dense model has one row
    /// per token.
    fn ffn<D: Device>(
        &mut self,
        arena: &mut Allocated<BufferArena, D>,
        wt: &Params<'_, D>,
        layer: usize,
        m: usize,
    ) -> Result<()>
    where
        O: Ops<D>,
    {
        let d = self.decoder;
        let (h, w) = (d.hidden, d.expert_width);
        let rows = m * d.top_k.max(1);
        let moe = d.experts > 0;

        self.begin(arena, BufferArenaPhase::FfnGateUp)?;
        let mut v = BufferArenaFfnGateUpViews::of(arena);
        if !moe {
            self.sublayer_input(
                &mut v.hidden_states,
                &mut v.residual,
                &mut v.norm_output,
                &wt.post_attention_norm(layer)?,
                m,
            )?;
        }
        let x = v.norm_output.as_view();
        if moe {
            let ids = v
                .scratch
                .as_view()
                .region::<i32>(self.scratch.moe_topk_ids)?;
            let (gate_w, up_w) = wt.experts_gate_up(layer)?;
            self.ops.experts_gate_up(
                &x,
                &ids,
                &gate_w,
                &up_w,
                &mut v.expert_gate_out,
                &mut v.expert_up_out,
                m,
            )?;
        } else {
            let gemm = Gemm::rows(w, h);
            self.ops
                .linear(&x, &mut v.expert_gate_out, &wt.gate(layer)?, gemm, m)?;
            self.ops
                .linear(&x, &mut v.expert_up_out, &wt.up(layer)?, gemm, m)?;
        }
        // The activation over the gate output: `expert_up_out` is dead from here on.
        self.ops
            .swiglu(&v.expert_up_out.as_view(), &mut v.expert_gate_out, rows * w)?;

        self.begin(arena, BufferArenaPhase::FfnDown)?;
        let mut v = BufferArenaFfnDownViews::of(arena);
        let act = v.expert_gate_out.as_view();
        if moe {
            let ids = v
                .scratch
                .as_view()
                .region::<i32>(self.scratch.moe_topk_ids)?;
            let weights = v
                .scratch
                .as_view()
                .region::<f32>(self.scratch.moe_topk_weights)?;
            self.ops.experts_down(
                &act,
                &ids,
                &wt.experts_down(layer)?,
                &mut v.expert_down_out,
                m,
            )?;
            self.ops.combine(
                &v.expert_down_out.as_view(),
                &ids,
                &weights,
                &mut v.moe_output,
                m,
            )?;
            self.ops
                .copy(&v.moe_output.as_view(), &mut v.hidden_states, m * h)?;
        } else {
            let gemm = Gemm::rows(h, w);
            self.ops
                .linear(&act, &mut v.expert_down_out, &wt.down(layer)?, gemm, m)?;
            self.ops
                .copy(&v.expert_down_out.as_view(), &mut v.hidden_states, m * h)?;
        }
        // A tensor-parallel rank's down projection (or combine) is a partial sum over its
        // share of the FFN's width.
        self.ops.all_reduce(&mut v.hidden_states, m * h)?;
        self.ops
            .add(&v.residual.as_view(), &mut v.hidden_states, m * h)
    }

    /// The final norm into `norm_output`, the LM head into `logits` (f32).
    fn lm_head<D: Device>(
        &mut self,
        arena: &mut Allocated<BufferArena, D>,
        w: &Params<'_, D>,
        m: usize,
    ) -> Result<()>
    where
        O: Ops<D>,
    {
        self.begin(arena, BufferArenaPhase::LmHead)?;
        let mut v = BufferArenaLmHeadViews::of(arena);
        self.ops.rms_norm(
            &v.hidden_states.as_view(),
            &mut v.norm_output,
            &w.final_norm()?,
            m,
        )?;
        // `logits` holds a row a sampled sequence: a step of more rows (a long prefill)
        // takes the LM head of its last rows, which hold a one-sequence prefill's sampled
        // token (an engine batching several prefills gathers each one's last row).
        let rows = m.min(v.logits.shape()[0]);
        let x = v.norm_output.as_view().row_range(m - rows..m)?;
        self.ops.logits(&x, &mut v.logits, &w.head(), rows)
    }
}
