//! The step's ops on a CUDA device ([`GpuOps`], feature `cuda`): the dense projections are
//! cuBLAS bf16 GEMMs whose operands and outputs are arena views (the weights too: views of the
//! weight arenas), everything else the NVRTC kernels of `gpu.cu`, launched with views as
//! arguments. Every op is an asynchronous launch on the arena's stream: nothing waits
//! but `routes` and `read_logits` (and `routes` answers `None` while the stream is captured),
//! so a whole `Engine::forward` can be captured into a CUDA graph and replayed.

use crate::gpu_launch::{elementwise, need, warps};
use crate::gpu_setup::Kernels;
use crate::model::Decoder;
use crate::ops::{Gemm, KvMeta, Ops, Result};
use arena_runtime::cudarc::driver::{
    sys, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig, PushKernelArg,
};
use arena_runtime::dtype::bf16;
use arena_runtime::{CudaDevice, CudaDevice as Cu, View, ViewMut};
use cudarc::cublas::{result as blas_result, sys as blas_sys, CudaBlas, Gemm as _, GemmConfig};
use cudarc::nccl::{Comm, ReduceOp};
use std::sync::Arc;

/// The GPU backend: cuBLAS and the kernels, on the arena's stream (the weights, keys and
/// values are the arenas').
pub struct GpuOps<'d> {
    pub(crate) decoder: &'d Decoder,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) blas: CudaBlas,
    /// cuBLAS's workspace, set once so no GEMM allocates (inside a captured graph either).
    pub(crate) _workspace: CudaSlice<u8>,
    pub(crate) k: Kernels,
    /// The longest sequence attention runs over: its shared memory holds a score a position.
    pub(crate) max_seq: usize,
    /// A tensor-parallel rank's NCCL communicator (`with_comm`), on the same stream.
    pub(crate) comm: Option<Comm>,
}

/// Launches `gpu.cu`'s kernel `$f` (`gpu_delta.cu`'s: `delta.$f`) of `$ops` with `$cfg` and
/// the arguments, in order.
macro_rules! launch {
    ($ops:expr, $($f:ident).+, $cfg:expr, $($arg:expr),+ $(,)?) => {{
        let mut b = $ops.stream.launch_builder(&$ops.k.$($f).+);
        $( b.arg($arg); )+
        // SAFETY: each call site passes the arguments its kernel in `gpu.cu` declares, views
        // and slices checked (`need`) to hold what its loops index.
        unsafe { b.launch($cfg) }?;
        Ok(())
    }};
}
pub(crate) use launch;

impl<'d> GpuOps<'d> {
    /// A tensor-parallel rank's ops (`decoder` the rank's, `Decoder::rank`): its all-reduces
    /// go through `comm` (NCCL, loaded at run time as the driver is), on the comm's stream,
    /// which must be the one the ops were made on, so they are ordered with the kernels and
    /// captured with them in a graph.
    pub fn with_comm(mut self, comm: Comm) -> Self {
        self.comm = Some(comm);
        self
    }

    /// Row-major `y[m, n] = x[m, k] · W[n, k]ᵀ` is column-major `yᵀ = W · xᵀ`: cuBLAS's
    /// first operand is `W` transposed from its `[k, n]` column-major storage; `y`'s rows are
    /// `ldc` apart.
    fn gemm_config(m: usize, n: usize, k: usize, ldc: usize) -> GemmConfig<half::bf16> {
        GemmConfig {
            transa: blas_sys::cublasOperation_t::CUBLAS_OP_T,
            transb: blas_sys::cublasOperation_t::CUBLAS_OP_N,
            m: n as i32,
            n: m as i32,
            k: k as i32,
            alpha: half::bf16::ONE,
            lda: k as i32,
            ldb: k as i32,
            beta: half::bf16::ZERO,
            ldc: ldc as i32,
        }
    }
}

impl Ops<CudaDevice> for GpuOps<'_> {
    fn embed(
        &mut self,
        ids: &View<'_, u32, CudaDevice>,
        table: &View<'_, bf16, CudaDevice>,
        out: &mut ViewMut<'_, bf16, CudaDevice>,
        m: usize,
    ) -> Result<()> {
        let h = self.decoder.hidden;
        need(ids, m, "embed")?;
        need(table, self.decoder.vocab * h, "embed")?;
        need(&out.as_view(), m * h, "embed")?;
        let (m32, h32) = (m as i32, h as i32);
        let (start, rows) = (self.decoder.vocab_start as i64, self.decoder.vocab as i64);
        launch!(
            self,
            embed,
            elementwise(m * h),
            ids,
            table,
            out,
            &m32,
            &h32,
            &start,
            &rows
        )
    }

    fn copy(
        &mut self,
        src: &View<'_, bf16, CudaDevice>,
        dst: &mut ViewMut<'_, bf16, CudaDevice>,
        n: usize,
    ) -> Result<()> {
        need(src, n, "copy")?;
        need(&dst.as_view(), n, "copy")?;
        let n64 = n as i64;
        launch!(self, copy, elementwise(n), src, dst, &n64)
    }

    fn add(
        &mut self,
        y: &View<'_, bf16, CudaDevice>,
        x: &mut ViewMut<'_, bf16, CudaDevice>,
        n: usize,
    ) -> Result<()> {
        need(y, n, "add")?;
        need(&x.as_view(), n, "add")?;
        let n64 = n as i64;
        launch!(self, add, elementwise(n), y, x, &n64)
    }

    fn rms_norm(
        &mut self,
        x: &View<'_, bf16, CudaDevice>,
        out: &mut ViewMut<'_, bf16, CudaDevice>,
        w: &View<'_, bf16, CudaDevice>,
        m: usize,
    ) -> Result<()> {
        let h = self.decoder.hidden;
        need(x, m * h, "rms_norm")?;
        need(w, h, "rms_norm")?;
        need(&out.as_view(), m * h, "rms_norm")?;
        let (h32, eps) = (h as i32, self.decoder.eps);
        let centred = self.decoder.centred_norm as i32;
        let cfg = LaunchConfig {
            grid_dim: (m as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        launch!(self, rms_norm, cfg, x, w, out, &h32, &eps, &centred)
    }

    fn linear(
        &mut self,
        x: &View<'_, bf16, CudaDevice>,
        out: &mut ViewMut<'_, bf16, CudaDevice>,
        weight: &View<'_, bf16, CudaDevice>,
        gemm: Gemm,
        m: usize,
    ) -> Result<()> {
        if m == 0 {
            return Ok(());
        }
        let Gemm { n, k, col, ld } = gemm;
        let x = x.range(0..m * k)?;
        let w = weight.range(0..n * k)?;
        // From column `col` of the first row to column `col + n` of the last.
        let mut y = out.range(col..gemm.out_len(m))?;
        // SAFETY: `w` holds n·k values, `x` m·k and `y` the (m − 1)·ld + n the product
        // writes, rows `ld` apart (the ranges above).
        unsafe {
            self.blas
                .gemm(Self::gemm_config(m, n, k, ld), &w, &x, &mut y)
        }?;
        Ok(())
    }

    fn logits(
        &mut self,
        x: &View<'_, bf16, CudaDevice>,
        out: &mut ViewMut<'_, f32, CudaDevice>,
        weight: &View<'_, bf16, CudaDevice>,
        m: usize,
    ) -> Result<()> {
        let (n, k) = (self.decoder.vocab, self.decoder.hidden);
        let x = x.range(0..m * k)?;
        let mut y = out.range(0..m * n)?;
        let w = weight.range(0..n * k)?;
        let cfg = Self::gemm_config(m, n, k, n);
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (w_ptr, _w) = DevicePtr::<half::bf16>::device_ptr(&w, &self.stream);
        let (x_ptr, _x) = DevicePtr::<half::bf16>::device_ptr(&x, &self.stream);
        let (y_ptr, _y) = DevicePtrMut::<f32>::device_ptr_mut(&mut y, &self.stream);
        // SAFETY: as `linear`, with an f32 output of m·n values: cuBLAS's GemmEx with bf16
        // inputs, f32 output and f32 compute (what cudarc's typed `gemm` cannot express).
        unsafe {
            blas_result::gemm_ex(
                *self.blas.handle(),
                cfg.transa,
                cfg.transb,
                cfg.m,
                cfg.n,
                cfg.k,
                (&alpha) as *const f32 as *const _,
                w_ptr as *const _,
                blas_sys::cudaDataType_t::CUDA_R_16BF,
                cfg.lda,
                x_ptr as *const _,
                blas_sys::cudaDataType_t::CUDA_R_16BF,
                cfg.ldb,
                (&beta) as *const f32 as *const _,
                y_ptr as *mut _,
                blas_sys::cudaDataType_t::CUDA_R_32F,
                cfg.ldc,
                blas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                blas_sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }?;
        Ok(())
    }

    fn qk_norm_rope(
        &mut self,
        qkv: &mut ViewMut<'_, bf16, CudaDevice>,
        positions: &View<'_, i32, CudaDevice>,
        qn: &View<'_, bf16, CudaDevice>,
        kn: &View<'_, bf16, CudaDevice>,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let width = d.qkv_width();
        need(&qkv.as_view(), m * width, "qk_norm_rope")?;
        need(positions, m, "qk_norm_rope")?;
        need(qn, d.head_dim, "qk_norm_rope")?;
        need(kn, d.head_dim, "qk_norm_rope")?;
        let (rot, centred) = (d.rotary_dim as i32, d.centred_norm as i32);
        let (heads, dim, w, eps, theta) = (
            d.heads as i32,
            d.head_dim as i32,
            width as i32,
            d.eps,
            d.rope_theta as f32,
        );
        let cfg = LaunchConfig {
            grid_dim: (m as u32, (d.heads + d.kv_heads) as u32, 1),
            block_dim: (d.head_dim as u32, 1, 1),
            shared_mem_bytes: (d.head_dim * 4) as u32,
        };
        launch!(
            self,
            qk_norm_rope,
            cfg,
            qkv,
            positions,
            qn,
            kn,
            &heads,
            &dim,
            &w,
            &eps,
            &theta,
            &rot,
            &centred
        )
    }

    fn attention(
        &mut self,
        qkv: &View<'_, bf16, CudaDevice>,
        meta: &KvMeta<'_, CudaDevice>,
        kv: &mut ViewMut<'_, bf16, CudaDevice>,
        out: &mut ViewMut<'_, bf16, CudaDevice>,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let (qw, kvw) = (d.heads * d.head_dim, d.kv_heads * d.head_dim);
        let width = d.qkv_width();
        need(qkv, m * width, "attention")?;
        need(&meta.positions, m, "attention")?;
        need(&meta.slots, m, "attention")?;
        need(&meta.block_table, meta.seqs * meta.width, "attention")?;
        need(&meta.cu_seqlens, meta.seqs + 1, "attention")?;
        need(&out.as_view(), m * qw, "attention")?;
        let (m32, qw32, kvw32, w32) = (m as i32, qw as i32, kvw as i32, width as i32);
        // SAFETY: `gpu.cu`'s kv_append. The slots and block tables are the scheduler's, drawn
        // from a block pool of exactly the KV pool's blocks, so every slot is inside `kv`
        // (blocks · block tokens rows of 2 · kv width).
        let appended: Result<()> = launch!(
            self,
            kv_append,
            elementwise(m * 2 * kvw),
            qkv,
            &meta.slots,
            &mut *kv,
            &m32,
            &qw32,
            &kvw32,
            &w32
        );
        appended?;
        let (heads, kv_heads, dim) = (d.heads as i32, d.kv_heads as i32, d.head_dim as i32);
        let (seqs, table_width, block) = (
            meta.seqs as i32,
            meta.width as i32,
            meta.block_tokens as i32,
        );
        let cfg = LaunchConfig {
            grid_dim: (m as u32, d.heads as u32, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: (self.max_seq * 4) as u32,
        };
        let cached = kv.as_view();
        launch!(
            self,
            attention,
            cfg,
            qkv,
            &meta.positions,
            &meta.block_table,
            &meta.cu_seqlens,
            &cached,
            out,
            &heads,
            &kv_heads,
            &dim,
            &w32,
            &seqs,
            &table_width,
            &block
        )
    }

    fn output_gate(
        &mut self,
        qkv: &View<'_, bf16, Cu>,
        out: &mut ViewMut<'_, bf16, Cu>,
        m: usize,
    ) -> Result<()> {
        self.launch_output_gate(qkv, out, m)
    }

    fn gdn_gates(
        &mut self,
        ba: &View<'_, bf16, Cu>,
        dt_a: &View<'_, bf16, Cu>,
        gates: &mut ViewMut<'_, f32, Cu>,
        m: usize,
    ) -> Result<()> {
        self.launch_gdn_gates(ba, dt_a, gates, m)
    }

    fn gdn_conv(
        &mut self,
        qkvz: &View<'_, bf16, Cu>,
        w: &View<'_, bf16, Cu>,
        state: &mut ViewMut<'_, bf16, Cu>,
        out: &mut ViewMut<'_, f32, Cu>,
        t: usize,
        fresh: bool,
    ) -> Result<()> {
        self.launch_gdn_conv(qkvz, w, state, out, t, fresh)
    }

    fn gdn_delta_rule(
        &mut self,
        conv: &View<'_, f32, Cu>,
        gates: &View<'_, f32, Cu>,
        state: &mut ViewMut<'_, f32, Cu>,
        out: &mut ViewMut<'_, bf16, Cu>,
        t: usize,
        fresh: bool,
    ) -> Result<()> {
        self.launch_gdn_delta_rule(conv, gates, state, out, t, fresh)
    }

    fn gdn_gated_norm(
        &mut self,
        qkvz: &View<'_, bf16, Cu>,
        w: &View<'_, bf16, Cu>,
        out: &mut ViewMut<'_, bf16, Cu>,
        m: usize,
    ) -> Result<()> {
        self.launch_gdn_gated_norm(qkvz, w, out, m)
    }

    fn top_k_ids(
        &mut self,
        logits: &View<'_, bf16, CudaDevice>,
        ids: &mut ViewMut<'_, i32, CudaDevice>,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        need(logits, m * d.experts, "top_k_ids")?;
        need(&ids.as_view(), m * d.top_k, "top_k_ids")?;
        let (m32, e, k) = (m as i32, d.experts as i32, d.top_k as i32);
        let cfg = LaunchConfig::for_num_elems(m as u32);
        launch!(self, top_k_ids, cfg, logits, ids, &m32, &e, &k)
    }

    fn top_k_weights(
        &mut self,
        logits: &View<'_, bf16, CudaDevice>,
        weights: &mut ViewMut<'_, f32, CudaDevice>,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        need(logits, m * d.experts, "top_k_weights")?;
        need(&weights.as_view(), m * d.top_k, "top_k_weights")?;
        let (m32, e, k, norm) = (
            m as i32,
            d.experts as i32,
            d.top_k as i32,
            d.norm_topk_prob as i32,
        );
        let cfg = LaunchConfig::for_num_elems(m as u32);
        launch!(
            self,
            top_k_weights,
            cfg,
            logits,
            weights,
            &m32,
            &e,
            &k,
            &norm
        )
    }

    fn experts_gate_up(
        &mut self,
        x: &View<'_, bf16, CudaDevice>,
        ids: &View<'_, i32, CudaDevice>,
        gate_w: &View<'_, bf16, CudaDevice>,
        up_w: &View<'_, bf16, CudaDevice>,
        gate: &mut ViewMut<'_, bf16, CudaDevice>,
        up: &mut ViewMut<'_, bf16, CudaDevice>,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let (h, w, rows) = (d.hidden, d.expert_width, m * d.top_k);
        need(x, m * h, "experts_gate_up")?;
        need(ids, rows, "experts_gate_up")?;
        need(gate_w, d.experts * w * h, "experts_gate_up")?;
        need(up_w, d.experts * w * h, "experts_gate_up")?;
        need(&gate.as_view(), rows * w, "experts_gate_up")?;
        need(&up.as_view(), rows * w, "experts_gate_up")?;
        let (r32, k, h32, w32) = (rows as i32, d.top_k as i32, h as i32, w as i32);
        launch!(
            self,
            experts_gate_up,
            warps(rows * 2 * w),
            x,
            ids,
            gate_w,
            up_w,
            gate,
            up,
            &r32,
            &k,
            &h32,
            &w32,
        )
    }

    fn swiglu(
        &mut self,
        up: &View<'_, bf16, CudaDevice>,
        gate: &mut ViewMut<'_, bf16, CudaDevice>,
        n: usize,
    ) -> Result<()> {
        need(up, n, "swiglu")?;
        need(&gate.as_view(), n, "swiglu")?;
        let n64 = n as i64;
        launch!(self, swiglu, elementwise(n), up, gate, &n64)
    }

    fn experts_down(
        &mut self,
        act: &View<'_, bf16, CudaDevice>,
        ids: &View<'_, i32, CudaDevice>,
        experts: &View<'_, bf16, CudaDevice>,
        out: &mut ViewMut<'_, bf16, CudaDevice>,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let (h, w, rows) = (d.hidden, d.expert_width, m * d.top_k);
        need(act, rows * w, "experts_down")?;
        need(ids, rows, "experts_down")?;
        need(experts, d.experts * h * w, "experts_down")?;
        need(&out.as_view(), rows * h, "experts_down")?;
        let (r32, h32, w32) = (rows as i32, h as i32, w as i32);
        launch!(
            self,
            experts_down,
            warps(rows * h),
            act,
            ids,
            experts,
            out,
            &r32,
            &h32,
            &w32
        )
    }

    fn combine(
        &mut self,
        down: &View<'_, bf16, CudaDevice>,
        ids: &View<'_, i32, CudaDevice>,
        weights: &View<'_, f32, CudaDevice>,
        out: &mut ViewMut<'_, bf16, CudaDevice>,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let (h, k) = (d.hidden, d.top_k);
        need(down, m * k * h, "combine")?;
        need(ids, m * k, "combine")?;
        need(weights, m * k, "combine")?;
        need(&out.as_view(), m * h, "combine")?;
        let (m32, k32, h32) = (m as i32, k as i32, h as i32);
        launch!(
            self,
            combine,
            elementwise(m * h),
            down,
            ids,
            weights,
            out,
            &m32,
            &k32,
            &h32
        )
    }

    fn all_reduce(&mut self, x: &mut ViewMut<'_, bf16, CudaDevice>, n: usize) -> Result<()> {
        let Some(comm) = &self.comm else {
            return Ok(());
        };
        let mut part = x.range(0..n)?;
        comm.all_reduce_in_place::<_, half::bf16>(&mut part, &ReduceOp::Sum)
            .map_err(|e| format!("all-reduce of `{}`: {e:?}", part.name()))?;
        Ok(())
    }

    fn routes(&mut self, ids: &View<'_, i32, CudaDevice>, m: usize) -> Result<Option<Vec<u32>>> {
        if self.stream.capture_status()?
            != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
        {
            return Ok(None);
        }
        let mut host = vec![0i32; m * self.decoder.top_k];
        self.stream
            .memcpy_dtoh(&ids.range(0..host.len())?, &mut host)?;
        Ok(Some(host.into_iter().map(|i| i as u32).collect()))
    }

    fn read_logits(&mut self, logits: &View<'_, f32, CudaDevice>, n: usize) -> Result<Vec<f32>> {
        let mut host = vec![0f32; n];
        self.stream.memcpy_dtoh(&logits.range(0..n)?, &mut host)?;
        Ok(host)
    }
}
