//! The step's kernels on the host ([`HostOps`]): each op reads its operands out of arena
//! views, computes in f32 and writes its result back through a view, rounding to bf16 where
//! transformers' bf16 modules round (every module's output), so the schedule in `step.rs` is
//! the one a GPU engine runs (`gpu.rs` runs it on a CUDA device) and no intermediate lives
//! anywhere but in the arena. They are plain loops: correct, not fast. A view's
//! `read_bytes`/`write_bytes` work on any device, so these run over a `CudaDevice` arena too
//! (slowly, through copies). The weights are read the same way, through their views of the
//! weight arenas, each time an op uses them: only the rows it reads (an embedding's chosen
//! rows, an expert's matrix), no copy kept beside the arenas.

use crate::host_io::{
    load_all, load_bf16, load_i64, load_weight, load_words, store_bf16, store_words,
};
use crate::model::Decoder;
use crate::ops::{Gemm, KvMeta, Ops, Result};
use arena_runtime::dtype::bf16;
use arena_runtime::{Device, View, ViewMut};

fn round(x: f32) -> f32 {
    bf16::from_f32(x).to_f32()
}

/// `y[r] = x[r] · Wᵀ` for `rows` rows: `x` is `[rows, k]`, `w` is `[n, k]` bf16, `y` is
/// `[rows, n]` in f32 (the caller rounds where the module does). Eight partial sums per dot
/// product, then summed: a reduction order of its own, as every GEMM has.
pub fn linear(x: &[f32], rows: usize, w: &[bf16], n: usize, k: usize) -> Vec<f32> {
    assert_eq!(x.len(), rows * k);
    assert_eq!(w.len(), n * k);
    let mut y = vec![0f32; rows * n];
    let mut wrow = vec![0f32; k];
    for j in 0..n {
        for (dst, src) in wrow.iter_mut().zip(&w[j * k..(j + 1) * k]) {
            *dst = src.to_f32();
        }
        for r in 0..rows {
            y[r * n + j] = dot(&x[r * k..(r + 1) * k], &wrow);
        }
    }
    y
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// RMSNorm over each `width`-wide row, as `Qwen3RMSNorm`: `w · bf16(x · rsqrt(mean(x²) + eps))`
/// with the product rounded to bf16.
pub fn rms_norm(x: &[f32], width: usize, w: &[bf16], eps: f32) -> Vec<f32> {
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks_exact(width) {
        let var = row.iter().map(|v| v * v).sum::<f32>() / width as f32;
        let inv = 1.0 / (var + eps).sqrt();
        out.extend(
            row.iter()
                .zip(w)
                .map(|(v, g)| round(g.to_f32() * round(v * inv))),
        );
    }
    out
}

/// `bf16(a + b)` elementwise: the residual add.
pub fn add(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| round(x + y)).collect()
}

/// `bf16(bf16(silu(gate)) · up)`: the SwiGLU activation as torch computes it in bf16.
pub fn swiglu(gate: &[f32], up: &[f32]) -> Vec<f32> {
    gate.iter()
        .zip(up)
        .map(|(g, u)| round(round(g / (1.0 + (-g).exp())) * u))
        .collect()
}

/// RoPE (the "default" type, rotate-half) in place over `heads` heads of `dim` at each
/// row's position, as transformers' `apply_rotary_pos_emb`: cos and sin computed in f32 and
/// rounded to bf16, each product and the sum rounded to bf16.
pub fn rope(
    x: &mut [f32],
    row_width: usize,
    offset: usize,
    heads: usize,
    dim: usize,
    positions: &[u32],
    theta: f64,
) {
    let half = dim / 2;
    let inv_freq: Vec<f32> = (0..half)
        .map(|i| 1.0 / (theta as f32).powf((2 * i) as f32 / dim as f32))
        .collect();
    for (row, &pos) in x.chunks_exact_mut(row_width).zip(positions) {
        for h in 0..heads {
            let head = &mut row[offset + h * dim..offset + (h + 1) * dim];
            let old = head.to_vec();
            for i in 0..dim {
                let f = inv_freq[i % half] * pos as f32;
                let (cos, sin) = (round(f.cos()), round(f.sin()));
                let rotated = if i < half {
                    -old[i + half]
                } else {
                    old[i - half]
                };
                head[i] = round(round(old[i] * cos) + round(rotated * sin));
            }
        }
    }
}

/// Causal grouped-query attention for one sequence: query row `r` (at `positions[r]`) attends
/// to cached positions `0..=positions[r]`; `q` is `[rows, heads · dim]`, the caches are
/// `[positions, kv_heads · dim]`. Scores, softmax and the weighted sum in f32; the output
/// `[rows, heads · dim]` rounded to bf16 by the caller's store.
pub fn attention(
    q: &[f32],
    positions: &[u32],
    keys: &[f32],
    values: &[f32],
    heads: usize,
    kv_heads: usize,
    dim: usize,
) -> Vec<f32> {
    let (qw, kvw) = (heads * dim, kv_heads * dim);
    let scale = 1.0 / (dim as f32).sqrt();
    let mut out = vec![0f32; positions.len() * qw];
    for (r, &pos) in positions.iter().enumerate() {
        let seen = pos as usize + 1;
        for h in 0..heads {
            let g = h / (heads / kv_heads);
            let qh = &q[r * qw + h * dim..r * qw + (h + 1) * dim];
            let scores: Vec<f32> = (0..seen)
                .map(|t| dot(qh, &keys[t * kvw + g * dim..t * kvw + (g + 1) * dim]) * scale)
                .collect();
            let top = scores.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
            let e: Vec<f32> = scores.iter().map(|s| (s - top).exp()).collect();
            let total: f32 = e.iter().sum();
            let o = &mut out[r * qw + h * dim..r * qw + (h + 1) * dim];
            for (t, p) in e.iter().enumerate() {
                let v = &values[t * kvw + g * dim..t * kvw + (g + 1) * dim];
                for (acc, x) in o.iter_mut().zip(v) {
                    *acc += p / total * x;
                }
            }
        }
    }
    out
}

/// The router's top-K of each row of bf16 logits, as `Qwen3MoeTopKRouter`: softmax in f32,
/// the K largest (lowest id first among equals), renormalised when `normalize`, each weight
/// rounded to bf16. Returns (ids, weights), `[rows, k]` each.
pub fn top_k(logits: &[f32], experts: usize, k: usize, normalize: bool) -> (Vec<u32>, Vec<f32>) {
    let (mut ids, mut weights) = (Vec::new(), Vec::new());
    for row in logits.chunks_exact(experts) {
        let top = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = row.iter().map(|l| (l - top).exp()).collect();
        let total: f32 = e.iter().sum();
        let probs: Vec<f32> = e.iter().map(|x| x / total).collect();
        let mut order: Vec<usize> = (0..experts).collect();
        order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]).then(a.cmp(&b)));
        let chosen = &order[..k];
        let sum: f32 = chosen.iter().map(|&i| probs[i]).sum();
        for &i in chosen {
            ids.push(i as u32);
            weights.push(round(if normalize { probs[i] / sum } else { probs[i] }));
        }
    }
    (ids, weights)
}

/// The host's stand-in for an all-reduce between tensor-parallel ranks, each rank's step on
/// a thread of its own: every rank puts its partial sums in, waits for the others, and takes
/// their sum in rank order, so every rank holds the same bits (as NCCL's all-reduce gives).
pub struct HostComm {
    rank: usize,
    shared: std::sync::Arc<(std::sync::Barrier, std::sync::Mutex<Vec<Vec<f32>>>)>,
}

impl HostComm {
    /// One communicator a rank, for `ranks` ranks.
    pub fn group(ranks: usize) -> Vec<HostComm> {
        let shared = std::sync::Arc::new((
            std::sync::Barrier::new(ranks),
            std::sync::Mutex::new(vec![Vec::new(); ranks]),
        ));
        (0..ranks)
            .map(|rank| HostComm {
                rank,
                shared: shared.clone(),
            })
            .collect()
    }

    /// The sum over the ranks of each one's `part`, in rank order.
    fn all_reduce(&self, part: Vec<f32>) -> Vec<f32> {
        let (barrier, slots) = &*self.shared;
        slots.lock().unwrap_or_else(|e| e.into_inner())[self.rank] = part;
        barrier.wait();
        let sum = {
            let parts = slots.lock().unwrap_or_else(|e| e.into_inner());
            let mut sum = vec![0f32; parts[0].len()];
            for part in parts.iter() {
                for (acc, x) in sum.iter_mut().zip(part) {
                    *acc += x;
                }
            }
            sum
        };
        // No rank puts its next part in before every rank has read this one's.
        barrier.wait();
        sum
    }
}

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
        store_words(out, &y.iter().map(|l| l.to_bits()).collect::<Vec<_>>())
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
        let width = qw + 2 * kvw;
        let (qn, kn) = (&load_all(q_norm)?, &load_all(k_norm)?);
        let mut rows = load_bf16(&qkv.as_view(), m * width)?;
        for row in rows.chunks_exact_mut(width) {
            let q = rms_norm(&row[..qw], hd, qn, d.eps);
            let k = rms_norm(&row[qw..qw + kvw], hd, kn, d.eps);
            row[..qw].copy_from_slice(&q);
            row[qw..qw + kvw].copy_from_slice(&k);
        }
        let positions = load_words(positions, m)?;
        rope(&mut rows, width, 0, d.heads, hd, &positions, d.rope_theta);
        rope(
            &mut rows,
            width,
            qw,
            d.kv_heads,
            hd,
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
        let width = qw + 2 * kvw;
        let rows = load_bf16(qkv, m * width)?;
        // Each row's k | v into its slot of the layer's pool.
        for (row, slot) in rows.chunks_exact(width).zip(load_i64(&meta.slots, m)?) {
            let at = slot as usize * 2 * kvw;
            store_bf16(&mut kv.range(at..at + 2 * kvw)?, &row[qw..])?;
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
        store_words(weights, &w.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
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
        let weights: Vec<f32> = load_words(weights, m * fanout)?
            .into_iter()
            .map(f32::from_bits)
            .collect();
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
        Ok(load_words(logits, n)?
            .into_iter()
            .map(f32::from_bits)
            .collect())
    }
}
