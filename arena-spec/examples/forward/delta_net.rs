//! Qwen3.5's own ops on the host: the gated delta-net layer's gates, causal conv, delta rule
//! and gated RMSNorm, and the attention output gate (`models/qwen3_5/modeling_qwen3_5.py`:
//! `Qwen3_5GatedDeltaNet`, `causal_conv1d_fn` / `causal_conv1d_update`,
//! `torch_recurrent_gated_delta_rule`, `Qwen3_5RMSNormGated`, `Qwen3_5Attention`). Each
//! computes in f32 and rounds to bf16 where the module's bf16 tensors do; `kernels.rs`'s
//! `HostOps` reads the views, calls these, and writes the results back. Plain loops, as the
//! other host kernels: a real engine runs the chunked delta rule (FLA's kernels, what
//! `gdn_fla_scratch` is sized for) over every sequence of a step in one launch, reading each
//! one's slot index from the step's metadata.

use crate::host_math::round;
use crate::model::Gdn;
use arena_runtime::dtype::bf16;

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// torch's `F.softplus` (β 1, threshold 20: the input itself above it).
fn softplus(x: f32) -> f32 {
    if x > 20.0 {
        x
    } else {
        x.exp().ln_1p()
    }
}

/// `out · bf16(sigmoid(gate))`, rounded: the attention output gate, elementwise.
pub fn output_gate(out: &[f32], gate: &[f32]) -> Vec<f32> {
    out.iter()
        .zip(gate)
        .map(|(o, g)| round(o * round(sigmoid(*g))))
        .collect()
}

/// `[β | g]` a row from `[b | a]` rows (`hv` value heads) and `dt_a` (`[dt_bias | A_log]`).
pub fn gates(ba: &[f32], dt_a: &[f32], hv: usize) -> Vec<f32> {
    let (dt_bias, a_log) = dt_a.split_at(hv);
    let mut out = Vec::with_capacity(ba.len());
    for row in ba.chunks_exact(2 * hv) {
        let (b, a) = row.split_at(hv);
        out.extend(b.iter().map(|&b| round(sigmoid(b))));
        out.extend((0..hv).map(|j| -a_log[j].exp() * softplus(a[j] + dt_bias[j])));
    }
    out
}

/// The causal conv of one sequence's `t` rows: `x` its `[t, width]` rows (the conv's `c`
/// channels first), `w` the `[c, kernel]` weights, `state` the `[kernel − 1, c]` inputs
/// before the first row. Returns the `[t, c]` outputs (`bf16(silu(bf16(Σ)))`) and the state
/// after the last row.
pub fn conv(
    x: &[f32],
    width: usize,
    w: &[f32],
    state: &[f32],
    c: usize,
    kernel: usize,
) -> (Vec<f32>, Vec<f32>) {
    let t = x.len() / width;
    let back = kernel - 1;
    // Input `i` of the history, `i` counted from the state's oldest row.
    let input = |i: usize, ch: usize| {
        if i < back {
            state[i * c + ch]
        } else {
            x[(i - back) * width + ch]
        }
    };
    let mut out = Vec::with_capacity(t * c);
    for r in 0..t {
        for ch in 0..c {
            let sum: f32 = (0..kernel)
                .map(|j| w[ch * kernel + j] * input(r + j, ch))
                .sum();
            let y = round(sum);
            out.push(round(y * sigmoid(y)));
        }
    }
    let next = (t..t + back)
        .flat_map(|i| (0..c).map(move |ch| (i, ch)))
        .map(|(i, ch)| input(i, ch))
        .collect();
    (out, next)
}

/// `x / √(Σx² + 1e-6)`: transformers' (and FLA's) `l2norm`.
fn l2norm(x: &[f32]) -> Vec<f32> {
    let inv = 1.0 / (x.iter().map(|v| v * v).sum::<f32>() + 1e-6).sqrt();
    x.iter().map(|v| v * inv).collect()
}

/// The gated delta rule over one sequence's rows: `conv` `[t, q | k | v]`, `gates` `[t, β |
/// g]`, `state` `[Hv, Dv, Dk]` updated in place. Returns the `[t, Hv·Dv]` outputs, unrounded.
pub fn delta_rule(conv: &[f32], gates: &[f32], state: &mut [f32], g: &Gdn) -> Vec<f32> {
    let (dk, dv, hv) = (g.k_dim, g.v_dim, g.v_heads);
    let (c, key) = (g.conv_dim(), g.k_heads * g.k_dim);
    let group = hv / g.k_heads;
    let scale = 1.0 / (dk as f32).sqrt();
    let mut out = Vec::with_capacity(conv.len() / c * hv * dv);
    for (row, gate) in conv.chunks_exact(c).zip(gates.chunks_exact(2 * hv)) {
        for j in 0..hv {
            let kh = j / group;
            let q: Vec<f32> = l2norm(&row[kh * dk..(kh + 1) * dk])
                .iter()
                .map(|x| x * scale)
                .collect();
            let k = l2norm(&row[key + kh * dk..key + (kh + 1) * dk]);
            let v = &row[2 * key + j * dv..2 * key + (j + 1) * dv];
            let (beta, decay) = (gate[j], gate[hv + j].exp());
            let s = &mut state[j * dv * dk..(j + 1) * dv * dk];
            for (vi, srow) in s.chunks_exact_mut(dk).enumerate() {
                srow.iter_mut().for_each(|x| *x *= decay);
                let kv: f32 = srow.iter().zip(&k).map(|(a, b)| a * b).sum();
                let delta = (v[vi] - kv) * beta;
                srow.iter_mut().zip(&k).for_each(|(x, kk)| *x += kk * delta);
                out.push(srow.iter().zip(&q).map(|(a, b)| a * b).sum());
            }
        }
    }
    out
}

/// The gated RMSNorm of `o` (`[rows, Hv·Dv]`, bf16 values) by `z` (the same shape), a value
/// head at a time: `bf16(bf16(w · bf16(o · rsqrt(mean(o²) + eps))) · silu(z))`.
pub fn gated_norm(o: &[f32], z: &[f32], w: &[bf16], dv: usize, eps: f32) -> Vec<f32> {
    let mut out = Vec::with_capacity(o.len());
    for (head, zh) in o.chunks_exact(dv).zip(z.chunks_exact(dv)) {
        let var = head.iter().map(|v| v * v).sum::<f32>() / dv as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((x, gz), wi) in head.iter().zip(zh).zip(w) {
            let y = round(wi.to_f32() * round(x * inv));
            out.push(round(y * (gz * sigmoid(*gz))));
        }
    }
    out
}
