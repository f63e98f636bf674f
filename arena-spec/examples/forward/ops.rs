//! What the step asks of its kernels: one method per op, each reading and writing arena
//! views and nothing else of the step's. The schedule (`step.rs`) is written once against this
//! trait; `kernels.rs` implements it on the host (loops over views' safe copies), `gpu.rs` on
//! a CUDA device (NVRTC kernels and cuBLAS over the same views). An op gets the model's
//! weights by their transformers name and keeps them itself, with the KV cache: neither is an
//! arena buffer (a later declaration gives caches to the derive).
//!
//! Every op is asynchronous where its backend is: nothing in `forward` reads a result back on
//! the host, so a GPU step can be captured in a CUDA graph. `routes` and `logits` read back.

use arena_runtime::dtype::bf16;
use arena_runtime::{Device, View, ViewMut};

/// A view out of range, a device copy that failed, a poison fill that failed.
pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The kernels of a Qwen3 / Qwen3-MoE decoder step over arena views on device `D`. `m` is
/// the step's tokens; widths are the backend's decoder's. Where a module rounds to bf16, the
/// op rounds there too (see each implementation).
pub trait Ops<D: Device> {
    /// `out[r] = embed_tokens[ids[r]]`, `m` rows.
    fn embed(
        &mut self,
        ids: &View<'_, u32, D>,
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
        weight: &str,
        m: usize,
    ) -> Result<()>;
    /// `out = x · Wᵀ` in bf16, `x` `[m, k]`, `W` (the tensor `weight`) `[n, k]`.
    fn linear(
        &mut self,
        x: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, bf16, D>,
        weight: &str,
        m: usize,
    ) -> Result<()>;
    /// `out = x · Wᵀ` in f32: the LM head into `logits`.
    fn logits(
        &mut self,
        x: &View<'_, bf16, D>,
        out: &mut ViewMut<'_, f32, D>,
        weight: &str,
        m: usize,
    ) -> Result<()>;
    /// Per head of q and k in `qkv` (`[m, q | k | v]`): q/k RMSNorm, then RoPE at each row's
    /// position, in place.
    fn qk_norm_rope(
        &mut self,
        qkv: &mut ViewMut<'_, bf16, D>,
        positions: &View<'_, i32, D>,
        layer: usize,
        m: usize,
    ) -> Result<()>;
    /// Appends the rows' k and v to `layer`'s cache at their positions, then causal GQA
    /// attention of their q over the cache into `out` (`[m, heads · head_dim]`).
    fn attention(
        &mut self,
        qkv: &View<'_, bf16, D>,
        positions: &View<'_, i32, D>,
        out: &mut ViewMut<'_, bf16, D>,
        layer: usize,
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
    /// up projections (`m · K` rows).
    fn experts_gate_up(
        &mut self,
        x: &View<'_, bf16, D>,
        ids: &View<'_, i32, D>,
        gate: &mut ViewMut<'_, bf16, D>,
        up: &mut ViewMut<'_, bf16, D>,
        layer: usize,
        m: usize,
    ) -> Result<()>;
    /// `gate ← bf16(bf16(silu(gate)) · up)` over the first `n` values.
    fn swiglu(
        &mut self,
        up: &View<'_, bf16, D>,
        gate: &mut ViewMut<'_, bf16, D>,
        n: usize,
    ) -> Result<()>;
    /// Row `r` of `out` is row `r` of `act` through expert `ids[r]`'s down projection.
    fn experts_down(
        &mut self,
        act: &View<'_, bf16, D>,
        ids: &View<'_, i32, D>,
        out: &mut ViewMut<'_, bf16, D>,
        layer: usize,
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
    /// The top-K ids of `m` rows, on the host (the routes a comparison reads), or `None` where
    /// the backend cannot read back now (a stream being captured).
    fn routes(&mut self, ids: &View<'_, i32, D>, m: usize) -> Result<Option<Vec<u32>>>;
    /// The first `n` logits, on the host.
    fn read_logits(&mut self, logits: &View<'_, f32, D>, n: usize) -> Result<Vec<f32>>;
}
