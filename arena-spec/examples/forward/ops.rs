//! What the step asks of its kernels: one method per op, each reading and writing arena
//! views and nothing else of the step's. The schedule (`step.rs`) is written once against this
//! trait; `kernels.rs` implements it on the host (loops over views' safe copies), `gpu.rs` on
//! a CUDA device (NVRTC kernels and cuBLAS over the same views). An op's weights are views of
//! the weight arenas (`params.rs`), loaded from a checkpoint; the keys and values are views of
//! the declared `KvPool`, reached through each sequence's block table ([`KvMeta`]).
//!
//! Every op is asynchronous where its backend is: nothing in `forward` reads a result back on
//! the host, so a GPU step can be captured in a CUDA graph. `routes` and `logits` read back.

use arena_runtime::dtype::bf16;
use arena_runtime::{Device, View, ViewMut};

/// The widths of one `y = x · Wᵀ`: `W` is `[n, k]` (a weight view of `n · k` values); `y`'s
/// rows are `ld` values apart and the product lands in columns `col .. col + n` of each, so
/// the q, k and v projections each fill their part of `qkv_output`'s `[m, q | k | v]` rows.
#[derive(Debug, Clone, Copy)]
pub struct Gemm {
    pub n: usize,
    pub k: usize,
    pub col: usize,
    pub ld: usize,
}

/// Where a step's rows are cached and which cached tokens each attends to: views of the
/// arena's `scratch` regions the step's metadata was placed in (`Engine::put_batch`). A
/// sequence's token `t` is in block `block_table[s][t / block_tokens]`, row
/// `t % block_tokens` of it.
pub struct KvMeta<'a, D> {
    /// Each row's position in its sequence, `[m]`.
    pub positions: View<'a, i32, D>,
    /// Each row's KV slot (its block × `block_tokens` + its row in the block), `[m]`.
    pub slots: View<'a, i64, D>,
    /// Each sequence's block table, `[seqs, width]` (padded with block 0).
    pub block_table: View<'a, i32, D>,
    /// Where each sequence's rows start, and the end, `[seqs + 1]`.
    pub cu_seqlens: View<'a, i32, D>,
    pub seqs: usize,
    pub width: usize,
    pub block_tokens: usize,
}

impl Gemm {
    /// `[m, n]` rows of their own.
    pub fn rows(n: usize, k: usize) -> Gemm {
        Gemm {
            n,
            k,
            col: 0,
            ld: n,
        }
    }

    /// The output's values the product touches: up to the last row's column `col + n`.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub fn out_len(&self, m: usize) -> usize {
        if m == 0 {
            0
        } else {
            (m - 1) * self.ld + self.col + self.n
        }
    }
}

/// A view out of range, a device copy that failed, a poison fill that failed.
pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// One sequence's rows of a step and its state-cache slot, for the delta-net layers' ops,
/// which run a sequence at a time over its slot's views (a real engine's kernels take every
/// sequence's slot index at once, as vLLM's `state_indices_tensor`, in one launch).
#[derive(Debug, Clone)]
pub struct SeqState {
    /// The sequence's rows of the step.
    pub rows: std::ops::Range<usize>,
    /// Its slot of the `StateCache`.
    pub slot: usize,
    /// Its first step (its first row at position 0): no earlier state to read, zeros instead.
    pub fresh: bool,
}

/// The kernels of a Qwen3 / Qwen3-MoE / Qwen3.5 decoder step over arena views on device `D`. `m` is
/// the step's tokens; widths are the backend's decoder's. Where a module rounds to bf16, the
/// op rounds there too (see each implementation).
pub trait Ops<D: Device> {
    /// `out[r] = table[ids[r]]`, `m` rows.
    fn embed(
        &mut self,
        ids: &View<'_, u32, D>,
        table: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        m: usize,
    ) -> Result<()>;
    /// `dst ← src`, the first `n` values.
    fn copy(
        &mut self,
        src: &View<'_, bf16, D>,
        dst: &mut ViewMut<'_, bf16, D>,
        n: usize,
    ) -> Result<()>;
    /// `x ← bf16(x + y)` over the first `n` values: the residual add.
    fn add(&mut self, y: &View<'_, bf16, D>, x: &mut ViewMut<'_, bf16, D>, n: usize) -> Result<()>;
    /// `out = RMSNorm(x) · weight`, `m` rows of the hidden width.
    fn rms_norm(
        &mut self,
        x: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        weight: &View<'_, bf16, D>,
        m: usize,
    ) -> Result<()>;
    /// `out = x · Wᵀ` in bf16, `x` `[m, k]`, `W` `[n, k]`, into `out` as `gemm` places it.
    fn linear(
        &mut self,
        x: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        weight: &View<'_, bf16, D>,
        gemm: Gemm,
        m: usize,
    ) -> Result<()>;
    /// `out = x · Wᵀ` in f32: the LM head (`[vocab, hidden]`) into `logits`.
    fn logits(
        &mut self,
        x: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, f32, D>,
        weight: &View<'_, bf16, D>,
        m: usize,
    ) -> Result<()>;
    /// Per head of q and k in `qkv` (`[m, q | k | v]`): q/k RMSNorm, then RoPE at each row's
    /// position, in place; `q_norm` and `k_norm` are a head's width.
    fn qk_norm_rope(
        &mut self,
        qkv: &mut ViewMut<'_, bf16, D>,
        positions: &View<'_, i32, D>,
        q_norm: &View<'_, bf16, D>,
        k_norm: &View<'_, bf16, D>,
        m: usize,
    ) -> Result<()>;
    /// Writes each row's k and v (normed and rotated, in `qkv`) into the layer's KV pool `kv`
    /// (`[blocks · block_tokens, k | v]`) at its slot, then causal GQA attention of each
    /// row's q over its sequence's tokens `0..=position`, read through the sequence's block
    /// table, into `out` (`[m, heads · head_dim]`).
    fn attention(
        &mut self,
        qkv: &View<'_, bf16, D>,
        meta: &KvMeta<'_, D>,
        kv: &mut ViewMut<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        m: usize,
    ) -> Result<()>;
    /// `out ← bf16(out · bf16(sigmoid(gate)))` over `m` rows of `out` (`[m, heads · head_dim]`),
    /// the gate the last `heads · head_dim` columns of each `qkv` row: Qwen3.5's
    /// `attn_output * torch.sigmoid(gate)`.
    fn output_gate(
        &mut self,
        qkv: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        m: usize,
    ) -> Result<()>;
    /// A delta-net layer's gates of `m` rows: from `ba` (`[m, b | a]`, a value head each) and
    /// `dt_a` (the layer's `[dt_bias | A_log]`), `gates` `[m, β | g]` in f32: `β =
    /// bf16(sigmoid(b))`, `g = −exp(A_log) · softplus(a + dt_bias)` in f32, as
    /// `Qwen3_5GatedDeltaNet.forward`.
    fn gdn_gates(
        &mut self,
        ba: &View<'_, bf16, D>,
        dt_a: &View<'_, bf16, D>,
        gates: &mut ViewMut<'_, f32, D>,
        m: usize,
    ) -> Result<()>;
    /// One sequence's `t` rows of a delta-net layer's depthwise causal conv with its SiLU:
    /// `qkvz` the rows' `[t, q | k | v | z]`, the conv over the q, k and v channels, the
    /// earlier inputs from `state` (the slot's `[K − 1, channels]`, zeros when `fresh`),
    /// into `out` (`[t, channels]`, bf16 values in f32); then `state` ← the last `K − 1`
    /// inputs. As `causal_conv1d_fn` / `causal_conv1d_update` (bf16 in and out).
    #[allow(clippy::too_many_arguments)]
    fn gdn_conv(
        &mut self,
        qkvz: &View<'_, bf16, D>,
        weight: &View<'_, bf16, D>,
        state: &mut ViewMut<'_, bf16, D>,
        out: &mut ViewMut<'_, f32, D>,
        t: usize,
        fresh: bool,
    ) -> Result<()>;
    /// One sequence's `t` rows of the gated delta rule, in f32: q and k L2-normed, q scaled by
    /// `1/√Dk`, per row `S ← S·exp(g)`, `S += k ⊗ β(v − S·k)`, `o = S·q`, with `S` the
    /// slot's `state` (`[Hv, Dv, Dk]`, zeros when `fresh`) and written back; `o` into `out`
    /// (`[t, Hv·Dv]`) in bf16. As `torch_recurrent_gated_delta_rule` (transformers' chunked
    /// prefill computes the same sums in another order).
    #[allow(clippy::too_many_arguments)]
    fn gdn_delta_rule(
        &mut self,
        conv: &View<'_, f32, D>,
        gates: &View<'_, f32, D>,
        state: &mut ViewMut<'_, f32, D>,
        out: &mut ViewMut<'_, bf16, D>,
        t: usize,
        fresh: bool,
    ) -> Result<()>;
    /// The gated RMSNorm in place over `m` rows of `out` (`[m, Hv·Dv]`), per value head:
    /// `bf16(bf16(w · bf16(o · rsqrt(mean(o²) + eps))) · silu(z))`, z the last `Hv·Dv`
    /// columns of each `qkvz` row (`Qwen3_5RMSNormGated`).
    fn gdn_gated_norm(
        &mut self,
        qkvz: &View<'_, bf16, D>,
        weight: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        m: usize,
    ) -> Result<()>;
    /// The router's top-K expert ids of each row of `logits` (`[m, experts]`), `[m, K]`.
    fn top_k_ids(
        &mut self,
        logits: &View<'_, bf16, D>,
        ids: &mut ViewMut<'_, i32, D>,
        m: usize,
    ) -> Result<()>;
    /// The same choice's weights (softmax, renormalised when the config says, rounded to
    /// bf16), `[m, K]`: the choice made again from `logits`, not read from `ids`, so the two
    /// regions of `scratch` are never borrowed at once.
    fn top_k_weights(
        &mut self,
        logits: &View<'_, bf16, D>,
        weights: &mut ViewMut<'_, f32, D>,
        m: usize,
    ) -> Result<()>;
    /// Row `r` of `gate` / `up` is token `r / K`'s input through expert `ids[r]`'s gate and
    /// up projections (`m · K` rows); `gate_w` and `up_w` are the layer's experts' matrices,
    /// `[experts, width, hidden]` each.
    #[allow(clippy::too_many_arguments)]
    fn experts_gate_up(
        &mut self,
        x: &View<'_, bf16, D>,
        ids: &View<'_, i32, D>,
        gate_w: &View<'_, bf16, D>,
        up_w: &View<'_, bf16, D>,
        gate: &mut ViewMut<'_, bf16, D>,
        up: &mut ViewMut<'_, bf16, D>,
        m: usize,
    ) -> Result<()>;
    /// `gate ← bf16(bf16(silu(gate)) · up)` over the first `n` values.
    fn swiglu(
        &mut self,
        up: &View<'_, bf16, D>,
        gate: &mut ViewMut<'_, bf16, D>,
        n: usize,
    ) -> Result<()>;
    /// Row `r` of `out` is row `r` of `act` through expert `ids[r]`'s down projection
    /// (`down_w`: the layer's `[experts, hidden, width]`).
    fn experts_down(
        &mut self,
        act: &View<'_, bf16, D>,
        ids: &View<'_, i32, D>,
        down_w: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        m: usize,
    ) -> Result<()>;
    /// Each token's K expert outputs scaled by their weights and summed into `out`, as
    /// `Qwen3MoeExperts` sums them (ascending expert id, in bf16).
    fn combine(
        &mut self,
        down: &View<'_, bf16, D>,
        ids: &View<'_, i32, D>,
        weights: &View<'_, f32, D>,
        out: &mut ViewMut<'_, bf16, D>,
        m: usize,
    ) -> Result<()>;
    /// `x ← bf16(Σ over the tensor-parallel ranks of x)`, the first `n` values, every rank
    /// holding the same sum: the all-reduce after a row-parallel layer (the O and down
    /// projections, the MoE combine) and after the vocabulary-parallel embedding. One rank
    /// has nothing to add.
    fn all_reduce(&mut self, x: &mut ViewMut<'_, bf16, D>, n: usize) -> Result<()> {
        let _ = (x, n);
        Ok(())
    }
    /// The top-K ids of `m` rows, on the host (the routes a comparison reads), or `None` where
    /// the backend cannot read back now (a stream being captured).
    fn routes(&mut self, ids: &View<'_, i32, D>, m: usize) -> Result<Option<Vec<u32>>>;
    /// The first `n` logits, on the host.
    fn read_logits(&mut self, logits: &View<'_, f32, D>, n: usize) -> Result<Vec<f32>>;
}
