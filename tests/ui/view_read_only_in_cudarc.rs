// A read-only view where cudarc writes does not compile: cuBLAS's output and a copy's
// destination take `DevicePtrMut`, which only a writable view (`ViewMut`) is.
use arena_runtime::cudarc::driver::CudaStream;
use arena_runtime::{Allocated, CudaDevice};
use arena_spec::{BufferArena, BufferArenaViews};
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use std::sync::Arc;

fn step(
    stream: &Arc<CudaStream>,
    blas: &CudaBlas,
    cfg: GemmConfig<half::bf16>,
    arena: &Allocated<BufferArena, CudaDevice>,
) {
    let views = BufferArenaViews::of(arena).unwrap();
    let (a, b) = (views.hidden_states, views.residual);
    let mut c = views.qkv_output;
    unsafe { blas.gemm(cfg, &b, &a, &mut c) }.unwrap();
    let host = vec![half::bf16::ZERO; 16];
    stream.memcpy_htod(&host, &mut c).unwrap();
}

fn main() {}
