//! The host kernels' arithmetic over plain slices, f32 in and out, rounding to bf16 where
//! transformers' bf16 modules round: what `kernels.rs`'s `HostOps` runs on the values it reads
//! out of the arena's views (Qwen3.5's own ops are `delta_net.rs`).

use arena_runtime::dtype::bf16;

pub fn round(x: f32) -> f32 {
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
/// with the product rounded to bf16; `centred`, as `Qwen3_5RMSNorm`: `x · rsqrt(…) · (1 + w)`
/// in f32, rounded once.
pub fn rms_norm(x: &[f32], width: usize, w: &[bf16], eps: f32, centred: bool) -> Vec<f32> {
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks_exact(width) {
        let var = row.iter().map(|v| v * v).sum::<f32>() / width as f32;
        let inv = 1.0 / (var + eps).sqrt();
        out.extend(row.iter().zip(w).map(|(v, g)| match centred {
            true => round(v * inv * (1.0 + g.to_f32())),
            false => round(g.to_f32() * round(v * inv)),
        }));
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

/// RoPE (the "default" type, rotate-half) in place over the first `rot` lanes of `heads`
/// heads of `dim` at each row's position, the rest passed through, as transformers'
/// `apply_rotary_pos_emb` (Qwen3.5's keeps `dim − rot` lanes): cos and sin computed in f32
/// and rounded to bf16, each product and the sum rounded to bf16.
#[allow(clippy::too_many_arguments)]
pub fn rope(
    x: &mut [f32],
    row_width: usize,
    offset: usize,
    heads: usize,
    dim: usize,
    rot: usize,
    positions: &[u32],
    theta: f64,
) {
    let half = rot / 2;
    let inv_freq: Vec<f32> = (0..half)
        .map(|i| 1.0 / (theta as f32).powf((2 * i) as f32 / rot as f32))
        .collect();
    for (row, &pos) in x.chunks_exact_mut(row_width).zip(positions) {
        for h in 0..heads {
            let head = &mut row[offset + h * dim..offset + (h + 1) * dim];
            let old = head.to_vec();
            for i in 0..rot {
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
