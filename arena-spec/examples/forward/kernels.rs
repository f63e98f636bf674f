//! The step's kernels on the host ([`HostOps`]): each op reads its operands out of arena
//! views, computes in f32 and writes its result back through a view, rounding to bf16 where
//! transformers' bf16 modules round (every module's output), so the schedule in `step.rs` is
//! the one a GPU engine runs (`gpu.rs` runs it on a CUDA device) and no intermediate lives
//! anywhere but in the arena. They are plain loops: correct, not fast. A view's
//! `read_bytes`/`write_bytes` work on any device, so these run over a `CudaDevice` arena too
//! (slowly, through copies). The weights are read the same way, through their views of the
//! weight arenas, each time an op uses them: only the rows it reads (an embedding's chosen
//! rows, an expert's matrix), no copy kept beside the arenas.

use crate::delta_net;
pub use crate::host_comm::HostComm;
use crate::host_io::{
    load_all, load_bf16, load_f32, load_i64, load_weight, load_words, store_bf16, store_f32,
    store_words,
};
use crate::host_math::{add, attention, linear, rms_norm, rope, round, swiglu, top_k};
use crate::model::Decoder;
use crate::ops::{Gemm, KvMeta, Ops, Result};
use arena_runtime::dtype::bf16;
use arena_runtime::{Device, View, ViewMut};

/// The host backend: nothing of its own (the weights, the keys and values are the arenas'),
/// and, for a tensor-parallel rank, its communicator.
pub struct HostOps<'w> {
    decoder: &'w Decoder,
    comm: Option<HostComm>,
}

impl<'w> HostOps<'w> {
    pub fn new(decoder: &'w Decoder) -> Self {
        HostOps {
            decoder,
            comm: None,
        }
    }

    /// A tensor-parallel rank's ops (`decoder` the rank's, `Decoder::rank`), reducing through
    /// `comm`.
    pub fn with_comm(decoder: &'w Decoder, comm: HostComm) -> Self {
        HostOps {
            decoder,
            comm: Some(comm),
        }
    }

    fn load_ids<D: Device>(&self, ids: &View<'_, i32, D>, m: usize) -> Result<Vec<u32>> {
        load_words(ids, m * self.decoder.top_k.max(1))
    }
}

impl<D: Device> Ops<D> for HostOps<'_> {
    fn embed(
        &mut self,
        ids: &View<'_, u32, D>,
        table: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        m: usize,
    ) -> Result<()> {
        let (h, start, rows_held) = (
            self.decoder.hidden,
            self.decoder.vocab_start,
            self.decoder.vocab,
        );
        let mut rows = Vec::with_capacity(m * h);
        for t in load_words(ids, m)? {
            // A tensor-parallel rank holds its rows of the vocabulary; another rank's token
            // is zeros here, which the all-reduce after the embedding fills in.
            match (t as usize).checked_sub(start).filter(|&r| r < rows_held) {
                Some(r) => {
                    let row = load_weight(table, r * h..(r + 1) * h)?;
                    rows.extend(row.iter().map(|x| x.to_f32()));
                }
                None => rows.extend(std::iter::repeat_n(0.0, h)),
            }
        }
        store_bf16(out, &rows)
    }

    fn copy(
        &mut self,
        src: &View<'_, bf16, D>,
        dst: &mut ViewMut<'_, bf16, D>,
        n: usize,
    ) -> Result<()> {
        store_bf16(dst, &load_bf16(src, n)?)
    }

    fn add(&mut self, y: &View<'_, bf16, D>, x: &mut ViewMut<'_, bf16, D>, n: usize) -> Result<()> {
        let sum = add(&load_bf16(&x.as_view(), n)?, &load_bf16(y, n)?);
        store_bf16(x, &sum)
    }

    fn rms_norm(
        &mut self,
        x: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        weight: &View<'_, bf16, D>,
        m: usize,
    ) -> Result<()> {
        let h = self.decoder.hidden;
        let y = rms_norm(
            &load_bf16(x, m * h)?,
            h,
            &load_all(weight)?,
            self.decoder.eps,
            self.decoder.centred_norm,
        );
        store_bf16(out, &y)
    }

    fn linear(
        &mut self,
        x: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        weight: &View<'_, bf16, D>,
        gemm: Gemm,
        m: usize,
    ) -> Result<()> {
        let Gemm { n, k, col, ld } = gemm;
        let y = linear(
            &load_bf16(x, m * k)?,
            m,
            &load_weight(weight, 0..n * k)?,
            n,
            k,
        );
        if col == 0 && ld == n {
            return store_bf16(out, &y);
        }
        // Columns `col .. col + n` of `ld`-wide rows: the rows read, their columns replaced.
        let mut rows = load_bf16(&out.as_view(), m * ld)?;
        for (row, part) in rows.chunks_exact_mut(ld).zip(y.chunks_exact(n)) {
            row[col..col + n].copy_from_slice(part);
        }
        store_bf16(out, &rows)
    }

    fn logits(
        &mut self,
        x: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, f32, D>,
        weight: &View<'_, bf16, D>,
        m: usize,
    ) -> Result<()> {
        let (n, k) = (self.decoder.vocab, self.decoder.hidden);
        let y = linear(
            &load_bf16(x, m * k)?,
            m,
            &load_weight(weight, 0..n * k)?,
            n,
            k,
        );
        store_f32(out, &y)
    }

    fn qk_norm_rope(
        &mut self,
        qkv: &mut ViewMut<'_, bf16, D>,
        positions: &View<'_, i32, D>,
        q_norm: &View<'_, bf16, D>,
        k_norm: &View<'_, bf16, D>,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let (hd, qw, kvw) = (d.head_dim, d.heads * d.head_dim, d.kv_heads * d.head_dim);
        let width = d.qkv_width();
        let (qn, kn) = (&load_all(q_norm)?, &load_all(k_norm)?);
        let mut rows = load_bf16(&qkv.as_view(), m * width)?;
        for row in rows.chunks_exact_mut(width) {
            let q = rms_norm(&row[..qw], hd, qn, d.eps, d.centred_norm);
            let k = rms_norm(&row[qw..qw + kvw], hd, kn, d.eps, d.centred_norm);
            row[..qw].copy_from_slice(&q);
            row[qw..qw + kvw].copy_from_slice(&k);
        }
        let positions = load_words(positions, m)?;
        let rot = d.rotary_dim;
        rope(
            &mut rows,
            width,
            0,
            d.heads,
            hd,
            rot,
            &positions,
            d.rope_theta,
        );
        rope(
            &mut rows,
            width,
            qw,
            d.kv_heads,
            hd,
            rot,
            &positions,
            d.rope_theta,
        );
        store_bf16(qkv, &rows)
    }

    fn attention(
        &mut self,
        qkv: &View<'_, bf16, D>,
        meta: &KvMeta<'_, D>,
        kv: &mut ViewMut<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let (qw, kvw) = (d.heads * d.head_dim, d.kv_heads * d.head_dim);
        let width = d.qkv_width();
        let rows = load_bf16(qkv, m * width)?;
        // Each row's k | v into its slot of the layer's pool.
        for (row, slot) in rows.chunks_exact(width).zip(load_i64(&meta.slots, m)?) {
            let at = slot as usize * 2 * kvw;
            store_bf16(&mut kv.range(at..at + 2 * kvw)?, &row[qw..qw + 2 * kvw])?;
        }
        let positions = load_words(&meta.positions, m)?;
        let tables = load_words(&meta.block_table, meta.seqs * meta.width)?;
        let cu = load_words(&meta.cu_seqlens, meta.seqs + 1)?;
        let mut y = Vec::with_capacity(m * qw);
        for s in 0..meta.seqs {
            let (a, b) = (cu[s] as usize, cu[s + 1] as usize);
            let seen = positions[a..b].iter().max().map_or(0, |&p| p as usize + 1);
            // The sequence's cached tokens in order, each through its block table.
            let (mut keys, mut values) = (Vec::new(), Vec::new());
            for t in 0..seen {
                let block = *tables
                    .get(s * meta.width + t / meta.block_tokens)
                    .ok_or("a position past the block table")? as usize;
                let slot = block * meta.block_tokens + t % meta.block_tokens;
                let cached = load_bf16(
                    &kv.as_view().range(slot * 2 * kvw..(slot + 1) * 2 * kvw)?,
                    2 * kvw,
                )?;
                keys.extend_from_slice(&cached[..kvw]);
                values.extend_from_slice(&cached[kvw..]);
            }
            let q: Vec<f32> = rows[a * width..b * width]
                .chunks_exact(width)
                .flat_map(|r| r[..qw].iter().copied())
                .collect();
            y.extend(attention(
                &q,
                &positions[a..b],
                &keys,
                &values,
                d.heads,
                d.kv_heads,
                d.head_dim,
            ));
        }
        store_bf16(out, &y)
    }

    fn output_gate(
        &mut self,
        qkv: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        m: usize,
    ) -> Result<()> {
        let (d, qw) = (self.decoder, self.decoder.heads * self.decoder.head_dim);
        let (width, rows) = (d.qkv_width(), load_bf16(qkv, m * d.qkv_width())?);
        let gate: Vec<f32> = rows
            .chunks_exact(width)
            .flat_map(|r| r[width - qw..].to_vec())
            .collect();
        let gated = delta_net::output_gate(&load_bf16(&out.as_view(), m * qw)?, &gate);
        store_bf16(out, &gated)
    }

    fn gdn_gates(
        &mut self,
        ba: &View<'_, bf16, D>,
        dt_a: &View<'_, bf16, D>,
        gates: &mut ViewMut<'_, f32, D>,
        m: usize,
    ) -> Result<()> {
        let hv = self.decoder.gdn.v_heads;
        let ba = load_bf16(ba, m * 2 * hv)?;
        store_f32(gates, &delta_net::gates(&ba, &load_bf16(dt_a, 2 * hv)?, hv))
    }

    fn gdn_conv(
        &mut self,
        qkvz: &View<'_, bf16, D>,
        weight: &View<'_, bf16, D>,
        state: &mut ViewMut<'_, bf16, D>,
        out: &mut ViewMut<'_, f32, D>,
        t: usize,
        fresh: bool,
    ) -> Result<()> {
        let g = &self.decoder.gdn;
        let (c, width) = (g.conv_dim(), g.conv_dim() + g.value_dim());
        let held = (g.kernel - 1) * c;
        let before = match fresh {
            true => vec![0.0; held],
            false => load_bf16(&state.as_view(), held)?,
        };
        let x = load_bf16(qkvz, t * width)?;
        let w = load_bf16(weight, c * g.kernel)?;
        let (y, next) = delta_net::conv(&x, width, &w, &before, c, g.kernel);
        store_f32(out, &y)?;
        store_bf16(state, &next)
    }

    fn gdn_delta_rule(
        &mut self,
        conv: &View<'_, f32, D>,
        gates: &View<'_, f32, D>,
        state: &mut ViewMut<'_, f32, D>,
        out: &mut ViewMut<'_, bf16, D>,
        t: usize,
        fresh: bool,
    ) -> Result<()> {
        let g = &self.decoder.gdn;
        let held = g.v_heads * g.v_dim * g.k_dim;
        let mut s = match fresh {
            true => vec![0.0; held],
            false => load_f32(&state.as_view(), held)?,
        };
        let (x, gt) = (
            load_f32(conv, t * g.conv_dim())?,
            load_f32(gates, t * 2 * g.v_heads)?,
        );
        let o = delta_net::delta_rule(&x, &gt, &mut s, g);
        store_f32(state, &s)?;
        store_bf16(out, &o)
    }

    fn gdn_gated_norm(
        &mut self,
        qkvz: &View<'_, bf16, D>,
        weight: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        m: usize,
    ) -> Result<()> {
        let (g, eps) = (&self.decoder.gdn, self.decoder.eps);
        let (v, width) = (g.value_dim(), g.conv_dim() + g.value_dim());
        let rows = load_bf16(qkvz, m * width)?;
        let z: Vec<f32> = rows
            .chunks_exact(width)
            .flat_map(|r| r[width - v..].to_vec())
            .collect();
        let o = load_bf16(&out.as_view(), m * v)?;
        store_bf16(
            out,
            &delta_net::gated_norm(&o, &z, &load_all(weight)?, g.v_dim, eps),
        )
    }

    fn top_k_ids(
        &mut self,
        logits: &View<'_, bf16, D>,
        ids: &mut ViewMut<'_, i32, D>,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let (chosen, _) = top_k(
            &load_bf16(logits, m * d.experts)?,
            d.experts,
            d.top_k,
            d.norm_topk_prob,
        );
        store_words(ids, &chosen)
    }

    fn top_k_weights(
        &mut self,
        logits: &View<'_, bf16, D>,
        weights: &mut ViewMut<'_, f32, D>,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let (_, w) = top_k(
            &load_bf16(logits, m * d.experts)?,
            d.experts,
            d.top_k,
            d.norm_topk_prob,
        );
        store_f32(weights, &w)
    }

    fn experts_gate_up(
        &mut self,
        x: &View<'_, bf16, D>,
        ids: &View<'_, i32, D>,
        gate_w: &View<'_, bf16, D>,
        up_w: &View<'_, bf16, D>,
        gate: &mut ViewMut<'_, bf16, D>,
        up: &mut ViewMut<'_, bf16, D>,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let (h, w, fanout) = (d.hidden, d.expert_width, d.top_k);
        let x = load_bf16(x, m * h)?;
        let (mut g, mut u) = (Vec::new(), Vec::new());
        for (r, &e) in self.load_ids(ids, m)?.iter().enumerate() {
            let (t, matrix) = (r / fanout, e as usize * w * h..(e as usize + 1) * w * h);
            let x = &x[t * h..(t + 1) * h];
            g.extend(linear(x, 1, &load_weight(gate_w, matrix.clone())?, w, h));
            u.extend(linear(x, 1, &load_weight(up_w, matrix)?, w, h));
        }
        store_bf16(gate, &g)?;
        store_bf16(up, &u)
    }

    fn swiglu(
        &mut self,
        up: &View<'_, bf16, D>,
        gate: &mut ViewMut<'_, bf16, D>,
        n: usize,
    ) -> Result<()> {
        let act = swiglu(&load_bf16(&gate.as_view(), n)?, &load_bf16(up, n)?);
        store_bf16(gate, &act)
    }

    fn experts_down(
        &mut self,
        act: &View<'_, bf16, D>,
        ids: &View<'_, i32, D>,
        down_w: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let (h, w) = (d.hidden, d.expert_width);
        let ids = self.load_ids(ids, m)?;
        let act = load_bf16(act, ids.len() * w)?;
        let mut y = Vec::with_capacity(ids.len() * h);
        for (r, &e) in ids.iter().enumerate() {
            let matrix = load_weight(down_w, e as usize * h * w..(e as usize + 1) * h * w)?;
            y.extend(linear(&act[r * w..(r + 1) * w], 1, &matrix, h, w));
        }
        store_bf16(out, &y)
    }

    fn combine(
        &mut self,
        down: &View<'_, bf16, D>,
        ids: &View<'_, i32, D>,
        weights: &View<'_, f32, D>,
        out: &mut ViewMut<'_, bf16, D>,
        m: usize,
    ) -> Result<()> {
        let (h, fanout) = (self.decoder.hidden, self.decoder.top_k);
        let ids = self.load_ids(ids, m)?;
        let weights = load_f32(weights, m * fanout)?;
        let down = load_bf16(down, m * fanout * h)?;
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
                    *acc = round(*acc + round(x * weights[r]));
                }
            }
        }
        store_bf16(out, &sum)
    }

    fn all_reduce(&mut self, x: &mut ViewMut<'_, bf16, D>, n: usize) -> Result<()> {
        let Some(comm) = &self.comm else {
            return Ok(());
        };
        let sum = comm.all_reduce(load_bf16(&x.as_view(), n)?);
        store_bf16(x, &sum)
    }

    fn routes(&mut self, ids: &View<'_, i32, D>, m: usize) -> Result<Option<Vec<u32>>> {
        self.load_ids(ids, m).map(Some)
    }

    fn read_logits(&mut self, logits: &View<'_, f32, D>, n: usize) -> Result<Vec<f32>> {
        load_f32(logits, n)
    }
}
