//! What a view costs. On the host: making the engine arena's view set and narrowing a view to
//! a step's rows, per call, against reading the same field's `DevicePtr` (target:
//! indistinguishable). On a GPU (feature `cuda`, skipped without one): one bf16 cuBLAS GEMM
//! whose operands and output are arena views against the same GEMM on cudarc `CudaSlice`s, in
//! interleaved rounds (target ≤ 1.01×). Prints the rows of `measurements/views.md`.
//! `cargo bench -p arena-spec --bench views [--features cuda]`.

use arena_runtime::HostDevice;
use arena_spec::{BufferArena, BufferArenaInputs, BufferArenaViews};
use std::hint::black_box;
use std::time::Instant;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs[xs.len() / 2]
}

/// Nanoseconds per call of three ways to get `qkv_output`'s first `m` rows, in interleaved
/// rounds: the field's pointer, the view set then the field's view, and that view narrowed.
fn host_costs() {
    let config = arena_spec::models::find("llama-3.1-8b")
        .unwrap()
        .config()
        .unwrap();
    let sizes = BufferArenaInputs {
        max_batch_tokens: 512,
        ..BufferArenaInputs::AT_128K
    }
    .sizes(&config)
    .unwrap();
    let arena = BufferArena::allocate(HostDevice::new(), &sizes).unwrap();
    let (rounds, calls) = (21, 200_000);
    let (mut field, mut view, mut rows) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..calls {
            let p = black_box(&arena).qkv_output;
            black_box(p.as_raw() + p.len() as u64);
        }
        field.push(t.elapsed().as_secs_f64() * 1e9 / calls as f64);
        let t = Instant::now();
        for _ in 0..calls {
            let v = BufferArenaViews::of(black_box(&arena)).unwrap().qkv_output;
            black_box(v.as_raw() + v.len() as u64);
        }
        view.push(t.elapsed().as_secs_f64() * 1e9 / calls as f64);
        let t = Instant::now();
        for _ in 0..calls {
            let v = BufferArenaViews::of(black_box(&arena)).unwrap().qkv_output;
            let r = v.rows(black_box(64)).unwrap();
            black_box(r.as_raw() + r.len() as u64);
        }
        rows.push(t.elapsed().as_secs_f64() * 1e9 / calls as f64);
    }
    let (f, v, r) = (median(field), median(view), median(rows));
    println!("| host: the field's `DevicePtr` | {f:.2} ns |");
    println!("| host: `BufferArenaViews::of(&arena)?` (all {} buffers) then the field's view | {v:.2} ns |", sizes_count());
    println!("| host: the same, narrowed with `.rows(64)?` | {r:.2} ns |");
    arena.release().unwrap();
}

fn sizes_count() -> usize {
    <BufferArena as arena_runtime::Arena>::BUFFERS.len()
}

#[cfg(feature = "cuda")]
fn gemm_costs() {
    use arena_runtime::cudarc::driver::CudaSlice;
    use arena_runtime::CudaDevice;
    use cudarc::cublas::{sys as blas_sys, CudaBlas, Gemm, GemmConfig};
    use half::bf16;
    if !CudaDevice::available() {
        println!("| GPU GEMM | skipped: no CUDA device |");
        return;
    }
    let device = CudaDevice::new(0).unwrap();
    let stream = device.context().new_stream().unwrap();
    let (m, k, n) = (4096usize, 4096usize, 4096usize);
    let config = arena_spec::models::find("llama-3.1-8b")
        .unwrap()
        .config()
        .unwrap();
    let sizes = BufferArenaInputs {
        max_batch_tokens: 4096,
        ..BufferArenaInputs::AT_128K
    }
    .sizes(&config)
    .unwrap();
    let mut arena = BufferArena::allocate(CudaDevice::from_stream(&stream), &sizes).unwrap();
    let blas = CudaBlas::new(stream.clone()).unwrap();
    let cfg = GemmConfig {
        transa: blas_sys::cublasOperation_t::CUBLAS_OP_N,
        transb: blas_sys::cublasOperation_t::CUBLAS_OP_N,
        m: n as i32,
        n: m as i32,
        k: k as i32,
        alpha: bf16::ONE,
        lda: n as i32,
        ldb: k as i32,
        beta: bf16::ZERO,
        ldc: n as i32,
    };
    // The same values in both: a GEMM's power draw, and so the GPU's clock, follows its data.
    let value = |i: usize| bf16::from_f32(((i * 7919) % 255) as f32 / 255.0 - 0.5);
    let a_host: Vec<bf16> = (0..m * k).map(value).collect();
    let b_host: Vec<bf16> = (0..k * n).map(|i| value(i + 1)).collect();
    let a_s = stream.clone_htod(&a_host).unwrap();
    let b_s = stream.clone_htod(&b_host).unwrap();
    let mut c_s = stream.alloc_zeros::<bf16>(m * n).unwrap();
    {
        let mut w = arena_spec::BufferArenaViewsMut::of(&mut arena).unwrap();
        stream
            .memcpy_htod(&a_host, &mut w.hidden_states.rows(m).unwrap())
            .unwrap();
        stream
            .memcpy_htod(&b_host, &mut w.residual.range(0..k * n).unwrap())
            .unwrap();
    }
    let (rounds, reps) = (31, 20);
    let mut ratios = Vec::new();
    let (mut t_views, mut t_slices) = (Vec::new(), Vec::new());
    let through_slices = |c_s: &mut CudaSlice<bf16>| {
        let t = Instant::now();
        for _ in 0..reps {
            // Column-major cuBLAS computes Cᵀ = Bᵀ·Aᵀ: its first operand is `B`.
            // SAFETY: the slices hold k·n, m·k and m·n elements.
            unsafe { blas.gemm(cfg, &b_s, &a_s, c_s) }.unwrap();
        }
        stream.synchronize().unwrap();
        t.elapsed().as_secs_f64() * 1e6 / reps as f64
    };
    let through_views = |arena: &mut arena_runtime::Allocated<BufferArena, CudaDevice>| {
        let t = Instant::now();
        for _ in 0..reps {
            // The views are made in the loop: their cost is part of what is measured.
            let mut w = arena_spec::BufferArenaViewsMut::of(arena).unwrap();
            let a = w.hidden_states.as_view().rows(m).unwrap();
            let b = w.residual.as_view().range(0..k * n).unwrap();
            let mut c = w.qkv_output.range(0..m * n).unwrap();
            // SAFETY: the views hold k·n, m·k and m·n elements.
            unsafe { blas.gemm(cfg, &b, &a, &mut c) }.unwrap();
        }
        stream.synchronize().unwrap();
        t.elapsed().as_secs_f64() * 1e6 / reps as f64
    };
    // A warm-up round, then rounds alternating which goes first.
    through_slices(&mut c_s);
    through_views(&mut arena);
    for round in 0..rounds {
        let (views, slices) = if round % 2 == 0 {
            let s = through_slices(&mut c_s);
            (through_views(&mut arena), s)
        } else {
            let v = through_views(&mut arena);
            (v, through_slices(&mut c_s))
        };
        t_views.push(views);
        t_slices.push(slices);
        ratios.push(views / slices);
    }
    // The noise floor: the slices against themselves, in the same interleaving.
    let mut same = Vec::new();
    for _ in 0..rounds {
        let first = through_slices(&mut c_s);
        same.push(through_slices(&mut c_s) / first);
    }
    let spread = |mut r: Vec<f64>| {
        r.sort_by(|a, b| a.partial_cmp(b).unwrap());
        (r[r.len() / 4], r[r.len() * 3 / 4])
    };
    let (q1, q3) = spread(ratios.clone());
    let (s1, s3) = spread(same.clone());
    println!(
        "| GPU: bf16 GEMM [{m}x{k}]·[{k}x{n}], views / CudaSlices (median of {rounds} interleaved rounds of {reps}; quartiles) | {:.1} µs / {:.1} µs = **{:.4}×** ({q1:.4}–{q3:.4}) |",
        median(t_views),
        median(t_slices),
        median(ratios)
    );
    println!(
        "| GPU: the same GEMM on CudaSlices against itself (noise floor) | **{:.4}×** ({s1:.4}–{s3:.4}) |",
        median(same)
    );
    arena.release().unwrap();
}

fn main() {
    host_costs();
    #[cfg(feature = "cuda")]
    gemm_costs();
}
