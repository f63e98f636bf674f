//! The GPU backend's set-up (feature `cuda`): `gpu.cu`'s and `gpu_delta.cu`'s kernels compiled
//! by NVRTC and loaded once, cuBLAS on the arena's stream with a workspace of its own.

use crate::gpu::GpuOps;
use crate::model::Decoder;
use crate::ops::Result;
use arena_runtime::cudarc::driver::{CudaFunction, CudaStream, DevicePtrMut};
use cudarc::cublas::{sys as blas_sys, CudaBlas};
use std::sync::Arc;

/// The kernels of `gpu.cu`, loaded once.
pub(crate) struct Kernels {
    pub(crate) embed: CudaFunction,
    pub(crate) copy: CudaFunction,
    pub(crate) add: CudaFunction,
    pub(crate) rms_norm: CudaFunction,
    pub(crate) qk_norm_rope: CudaFunction,
    pub(crate) kv_append: CudaFunction,
    pub(crate) attention: CudaFunction,
    pub(crate) top_k_ids: CudaFunction,
    pub(crate) top_k_weights: CudaFunction,
    pub(crate) experts_gate_up: CudaFunction,
    pub(crate) experts_down: CudaFunction,
    pub(crate) swiglu: CudaFunction,
    pub(crate) combine: CudaFunction,
    /// `gpu_delta.cu`'s: Qwen3.5's ops (`gpu_delta.rs`).
    pub(crate) delta: crate::gpu_delta::DeltaKernels,
}

impl<'d> GpuOps<'d> {
    /// Compiles the kernels and sets up cuBLAS on `stream` (the arena's), for sequences of
    /// at most `max_seq` tokens.
    pub fn new(
        stream: &Arc<CudaStream>,
        decoder: &'d Decoder,
        max_seq: usize,
    ) -> Result<GpuOps<'d>> {
        // A `CudaSlice` records an event at each use and waits on it at the next where a
        // context has several streams; a wait on an event recorded before a capture began
        // invalidates the capture. This backend allocates, uses and frees every slice on
        // `stream` alone, so the stream's order is all the synchronisation they need. (The
        // arena's views record nothing: the arena is one allocation the engine orders.)
        // SAFETY: no slice of this context is used on another stream (see above).
        unsafe { stream.context().disable_event_tracking() };
        let source = concat!(include_str!("gpu.cu"), include_str!("gpu_delta.cu"));
        let ptx = arena_runtime::cudarc::nvrtc::compile_ptx(source)?;
        let module = stream.context().load_module(ptx)?;
        let f = |name: &str| module.load_function(name);
        let k = Kernels {
            embed: f("embed")?,
            copy: f("copy")?,
            add: f("add")?,
            rms_norm: f("rms_norm")?,
            qk_norm_rope: f("qk_norm_rope")?,
            kv_append: f("kv_append")?,
            attention: f("attention")?,
            top_k_ids: f("top_k_ids")?,
            top_k_weights: f("top_k_weights")?,
            experts_gate_up: f("experts_gate_up")?,
            experts_down: f("experts_down")?,
            swiglu: f("swiglu")?,
            combine: f("combine")?,
            delta: crate::gpu_delta::DeltaKernels::load(&module)?,
        };
        if decoder.experts > 256 || decoder.top_k > 32 {
            return Err("gpu.cu's router takes at most 256 experts and 32 chosen".into());
        }
        // `attention` keeps one f32 score per cached position in shared memory, within the
        // 48 KiB a launch gets without opting in; `qk_norm_rope` one block thread per head lane.
        if max_seq * 4 > 48 << 10 || decoder.head_dim > 1024 {
            return Err(format!(
                "gpu.cu's attention holds at most 12288 positions and heads of at most 1024 \
                 (asked: {max_seq} positions, head_dim {})",
                decoder.head_dim
            )
            .into());
        }
        let blas = CudaBlas::new(stream.clone())?;
        // 32 MiB, what cuBLAS's documentation recommends for Hopper.
        let mut workspace = stream.alloc_zeros::<u8>(32 << 20)?;
        {
            let (ptr, _record) = workspace.device_ptr_mut(stream);
            // SAFETY: the workspace outlives the handle (fields drop in order: `blas` first).
            unsafe { blas_sys::cublasSetWorkspace_v2(*blas.handle(), ptr as *mut _, 32 << 20) }
                .result()?;
        }
        Ok(GpuOps {
            decoder,
            stream: stream.clone(),
            blas,
            _workspace: workspace,
            k,
            max_seq,
            comm: None,
        })
    }
}
