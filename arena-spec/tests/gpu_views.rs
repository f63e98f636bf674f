//! Arena views in cudarc's hands, on a real GPU (feature `cuda`): copies, cuBLAS and a CUDA
//! graph over views, as an engine uses them. Every test returns early, saying so, without a
//! CUDA driver or device, so CI without a GPU skips them cleanly.
//!
//! Run on a GPU: `cargo test -p arena-spec --features cuda --release --test gpu_views`. What
//! views cost is measured by `benches/views.rs`.
#![cfg(feature = "cuda")]

use arena_runtime::cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use arena_runtime::{AllocOptions, Allocated, CudaDevice, View, ViewMut};
use arena_spec::models::SHIPPED;
use arena_spec::{
    BufferArena, BufferArenaInputs, BufferArenaViews, BufferArenaViewsMut, BufferSizes,
};
use cudarc::cublas::{sys as blas_sys, CudaBlas, Gemm, GemmConfig};
use half::bf16;
use std::sync::Arc;

const REALISTIC: BufferArenaInputs = BufferArenaInputs::AT_128K;

fn gpu_stream() -> Option<Arc<CudaStream>> {
    if !CudaDevice::available() {
        panic!("no CUDA driver or device: this test needs one");
    }
    let device = CudaDevice::new(0).expect("device 0 opens");
    Some(device.context().new_stream().unwrap())
}

/// A shipped model's sizes at `m` tokens, the rest realistic.
fn sizes_at(model: &str, m: usize) -> BufferSizes {
    let config = arena_spec::models::find(model).unwrap().config().unwrap();
    BufferArenaInputs {
        max_batch_tokens: m,
        ..REALISTIC
    }
    .sizes(&config)
    .unwrap()
}

/// A byte pattern of its own per buffer and model, never constant.
fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Every non-empty buffer of every shipped model's arena, at M = 512: a distinct pattern
/// copied in through its writable byte view (`memcpy_htod`), read back through its read-only
/// view (`memcpy_dtoh`), byte-exact; then the typed views of the derive agree with the byte
/// views on address and size.
#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn copies_through_views_reach_every_buffer_of_every_shipped_model_byte_exact() {
    let Some(stream) = gpu_stream() else { return };
    let mut buffers = 0;
    let mut bytes = 0usize;
    for (n, m) in SHIPPED.iter().enumerate() {
        let sizes = sizes_at(m.name, 512);
        let mut arena = BufferArena::allocate(CudaDevice::from_stream(&stream), &sizes).unwrap();
        let patterns: Vec<Vec<u8>> = {
            let mut views = arena.byte_views_mut().unwrap();
            views
                .iter_mut()
                .enumerate()
                .map(|(i, v)| {
                    let data = pattern((n * 1000 + i) as u64, v.byte_len());
                    if !data.is_empty() {
                        stream.memcpy_htod(&data, v).unwrap();
                    }
                    data
                })
                .collect()
        };
        for (v, want) in arena.byte_views().iter().zip(&patterns) {
            if want.is_empty() {
                assert!(v.is_empty());
                continue;
            }
            let mut back = vec![0u8; v.byte_len()];
            stream.memcpy_dtoh(v, &mut back).unwrap();
            assert!(
                back == *want,
                "{}: `{}` read back differs",
                m.name,
                v.name()
            );
            buffers += 1;
            bytes += want.len();
        }
        let typed = BufferArenaViews::of(&arena).unwrap();
        assert_eq!(typed.hidden_states.as_raw(), arena.hidden_states.as_raw());
        assert_eq!(typed.qkv_output.byte_len(), sizes.qkv_output);
        arena.release().unwrap();
    }
    println!(
        "views: {buffers} buffers of {} models, {:.1} MiB copied each way, byte-exact",
        SHIPPED.len(),
        bytes as f64 / (1u64 << 20) as f64
    );
}

/// Host `C = A · B` (row-major, `A` `[m, k]`, `B` `[k, n]`) in f32 from bf16 inputs.
fn host_gemm(a: &[bf16], b: &[bf16], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for p in 0..k {
            let x = a[i * k + p].to_f32();
            for j in 0..n {
                c[i * n + j] += x * b[p * n + j].to_f32();
            }
        }
    }
    c
}

/// Row-major `C[m, n] = A[m, k] · B[k, n]` by cuBLAS, column-major: `Cᵀ = Bᵀ · Aᵀ`.
fn gemm_config(m: usize, k: usize, n: usize) -> GemmConfig<bf16> {
    GemmConfig {
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
    }
}

/// The largest error of a GPU product against the host's, relative to the value (or to 1
/// below it), held under 2e-2: bf16 outputs of f32 accumulations.
fn largest_relative_error(got: &[bf16], want: &[f32]) -> f32 {
    let worst = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g.to_f32() - w).abs() / w.abs().max(1.0))
        .fold(0f32, f32::max);
    assert!(worst < 2e-2, "largest relative error {worst}");
    worst
}

fn random_bf16(seed: u64, len: usize) -> Vec<bf16> {
    pattern(seed, len)
        .iter()
        .map(|&b| bf16::from_f32((b as f32 - 127.5) / 128.0))
        .collect()
}

/// A cuBLAS bf16 GEMM whose operands and output are arena views: `A` is the first `m` rows
/// of `hidden_states`, `B` a `[k, n]` range of `residual`, `C` the first `m·n` elements of
/// `qkv_output`; the result matches a host reference within bf16 rounding, and the bytes of
/// `C`'s buffer past the `m·n` elements asked for are untouched. Then `memcpy_dtod` and
/// `memset_zeros` on views.
#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn a_cublas_gemm_takes_arena_views_as_operands_and_output() {
    let Some(stream) = gpu_stream() else { return };
    let (m, k, n) = (64, 4096, 256);
    let sizes = sizes_at("llama-3.1-8b", 512);
    let mut arena = BufferArena::allocate(CudaDevice::from_stream(&stream), &sizes).unwrap();
    let a_host = random_bf16(1, m * k);
    let b_host = random_bf16(2, k * n);
    let sentinel = vec![bf16::from_f32(-7.0); 16];
    {
        let mut w = BufferArenaViewsMut::of(&mut arena).unwrap();
        let mut a = w.hidden_states.rows(m).unwrap();
        stream.memcpy_htod(&a_host, &mut a).unwrap();
        let mut b = w.residual.range(0..k * n).unwrap();
        stream.memcpy_htod(&b_host, &mut b).unwrap();
        let mut past = w.qkv_output.range(m * n..m * n + 16).unwrap();
        stream.memcpy_htod(&sentinel, &mut past).unwrap();
    }
    let blas = CudaBlas::new(stream.clone()).unwrap();
    let mut w = BufferArenaViewsMut::of(&mut arena).unwrap();
    let a: View<'_, arena_runtime::dtype::bf16, CudaDevice> =
        w.hidden_states.as_view().rows(m).unwrap();
    let b = w.residual.as_view().range(0..k * n).unwrap();
    // Views borrow `w`'s fields; copy the read-only ones out before taking the writable one.
    let (a_raw, b_raw) = (a.as_raw(), b.as_raw());
    assert_ne!(a_raw, b_raw);
    let mut c: ViewMut<'_, arena_runtime::dtype::bf16, CudaDevice> =
        w.qkv_output.range(0..m * n).unwrap();
    // Column-major cuBLAS computes Cᵀ = Bᵀ·Aᵀ: its first operand is `B`.
    // SAFETY: the operands hold k·n, m·k and m·n bf16 elements, as the config says.
    unsafe { blas.gemm(gemm_config(m, k, n), &b, &a, &mut c) }.unwrap();
    let mut got = vec![bf16::ZERO; m * n];
    stream.memcpy_dtoh(&c, &mut got).unwrap();
    let want = host_gemm(&a_host, &b_host, m, k, n);
    let worst = largest_relative_error(&got, &want);
    let view = BufferArenaViews::of(&arena).unwrap();
    let mut past = vec![bf16::ZERO; 16];
    stream
        .memcpy_dtoh(
            &view.qkv_output.range(m * n..m * n + 16).unwrap(),
            &mut past,
        )
        .unwrap();
    assert_eq!(past, sentinel, "nothing past the view was written");
    // The rest of cudarc's copies take views too: `memcpy_dtod` from the output into
    // `attn_output`, then `memset_zeros` of the output, each checked on the host.
    let mut w = BufferArenaViewsMut::of(&mut arena).unwrap();
    let c = w.qkv_output.as_view().range(0..m * n).unwrap();
    let mut copy = w.attn_output.range(0..m * n).unwrap();
    // A `bf16` view is a cudarc slice of the arena's `bf16` and of `half::bf16`: where
    // nothing else fixes the element type, name it.
    stream.memcpy_dtod::<bf16, _, _>(&c, &mut copy).unwrap();
    let mut copied = vec![bf16::ZERO; m * n];
    stream.memcpy_dtoh(&copy, &mut copied).unwrap();
    assert_eq!(copied, got, "memcpy_dtod between views");
    let mut c = w.qkv_output.range(0..m * n).unwrap();
    stream.memset_zeros::<bf16, _>(&mut c).unwrap();
    let mut zeros = vec![bf16::ONE; m * n];
    stream.memcpy_dtoh(&c, &mut zeros).unwrap();
    assert!(
        zeros.iter().all(|z| *z == bf16::ZERO),
        "memset_zeros of a view"
    );
    println!(
        "cuBLAS bf16 GEMM [{m}x{k}]·[{k}x{n}] over arena views: largest relative error {worst:.2e}"
    );
    arena.release().unwrap();
}

/// `arena_runtime::linear` takes its dimensions from the views: `x` the first 64 rows of
/// `hidden_states` `[64, 4096]`, `w` a flat `[4096 · 4096]` range of `residual` (as a weight
/// place read with `cast` is flat), `y` the first 64 rows of `attn_output`; `y = x · wᵀ`
/// matches the host within bf16 rounding. Views that do not make one product are refused,
/// naming each buffer and its shape.
#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn linear_takes_its_dimensions_from_the_views_shapes() {
    let Some(stream) = gpu_stream() else { return };
    let (m, k, n) = (64, 4096, 4096);
    let sizes = sizes_at("llama-3.1-8b", 4096);
    let mut arena = BufferArena::allocate(CudaDevice::from_stream(&stream), &sizes).unwrap();
    let x_host = random_bf16(3, m * k);
    let w_host = random_bf16(4, n * k);
    {
        let mut v = BufferArenaViewsMut::of(&mut arena).unwrap();
        stream
            .memcpy_htod(&x_host, &mut v.hidden_states.rows(m).unwrap())
            .unwrap();
        stream
            .memcpy_htod(&w_host, &mut v.residual.range(0..n * k).unwrap())
            .unwrap();
    }
    let blas = CudaBlas::new(stream.clone()).unwrap();
    let mut v = BufferArenaViewsMut::of(&mut arena).unwrap();
    let x = v.hidden_states.as_view().rows(m).unwrap();
    let w = v.residual.as_view().range(0..n * k).unwrap();
    assert!(x.shape() == [m, k] && w.shape() == [n * k]);
    let mut y = v.attn_output.rows(m).unwrap();
    arena_runtime::linear(&blas, &x, &w, &mut y).unwrap();
    let mut got = vec![bf16::ZERO; m * n];
    stream.memcpy_dtoh(&y, &mut got).unwrap();
    // y = x · wᵀ: the host product of x and w transposed.
    let mut w_t = vec![bf16::ZERO; n * k];
    for r in 0..n {
        for c in 0..k {
            w_t[c * n + r] = w_host[r * k + c];
        }
    }
    let want = host_gemm(&x_host, &w_t, m, k, n);
    let worst = largest_relative_error(&got, &want);
    // `qkv_output`'s rows are 6144 wide: w would need 6144 × 4096 values.
    let mut wide = v.qkv_output.rows(m).unwrap();
    let err = arena_runtime::linear(&blas, &x, &w, &mut wide)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`qkv_output` [64, 6144]") && err.contains("not 6144 × 4096"),
        "{err}"
    );
    let mut fewer = v.attn_output.rows(m / 2).unwrap();
    let err = arena_runtime::linear(&blas, &x, &w, &mut fewer)
        .unwrap_err()
        .to_string();
    assert!(err.contains("64 rows in, 32 out"), "{err}");
    println!("linear [{m}x{k}]·[{n}x{k}]ᵀ over arena views: largest relative error {worst:.2e}");
    arena.release().unwrap();
}

const STEP_KERNELS: &str = r#"
#define EACH(n) for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; \
                     i < (n); i += (unsigned long long)gridDim.x * blockDim.x)
extern "C" __global__ void scale(const unsigned char* x, unsigned char* y, unsigned long long n) {
    EACH(n) y[i] = (unsigned char)(x[i] * 3 + 1);
}
extern "C" __global__ void flip(const unsigned char* y, unsigned char* h, unsigned long long n) {
    EACH(n) h[i] = y[i] ^ 0x5a;
}
extern "C" __global__ void mix(const unsigned char* h, const unsigned char* x, unsigned char* z,
                               unsigned long long n) {
    EACH(n) z[i] = h[i] ^ x[(i * 7) % n];
}
"#;

/// What the step computes, on the host.
fn step_on_host(x: &[u8]) -> Vec<u8> {
    let n = x.len();
    let h: Vec<u8> = x
        .iter()
        .map(|&v| v.wrapping_mul(3).wrapping_add(1) ^ 0x5a)
        .collect();
    (0..n).map(|i| h[i] ^ x[(i * 7) % n]).collect()
}

struct Step {
    scale: arena_runtime::cudarc::driver::CudaFunction,
    flip: arena_runtime::cudarc::driver::CudaFunction,
    mix: arena_runtime::cudarc::driver::CudaFunction,
    n: usize,
}

impl Step {
    /// The step's kernels on `stream`, through the views of each phase: in `attention`,
    /// `y = 3x + 1` into `qkv_output` and `h = y ^ 0x5a` into `residual` (the whole step);
    /// in `ffn_down`, `z = h ^ x[7i mod n]` into `moe_output`, which a reuse slab may place over
    /// `qkv_output` (dead by then). `x` is `hidden_states`. Nothing is allocated or copied:
    /// legal inside a stream capture.
    fn launch(&self, stream: &Arc<CudaStream>, arena: &mut Allocated<BufferArena, CudaDevice>) {
        let n = self.n as u64;
        let cfg = LaunchConfig::for_num_elems(self.n as u32);
        let mut attention = arena_spec::arena::BufferArenaAttentionViews::of(arena);
        let x = attention.hidden_states.bytes().into_rows(self.n).unwrap();
        let mut y = attention.qkv_output.bytes().into_rows(self.n).unwrap();
        let mut h = attention.residual.bytes().into_rows(self.n).unwrap();
        let mut b = stream.launch_builder(&self.scale);
        b.arg(&x).arg(&mut y).arg(&n);
        unsafe { b.launch(cfg) }.unwrap();
        let mut b = stream.launch_builder(&self.flip);
        b.arg(&y).arg(&mut h).arg(&n);
        unsafe { b.launch(cfg) }.unwrap();
        let mut ffn = arena_spec::arena::BufferArenaFfnDownViews::of(arena);
        let x = ffn.hidden_states.bytes().into_rows(self.n).unwrap();
        let h = ffn.residual.bytes().into_rows(self.n).unwrap();
        let mut z = ffn.moe_output.bytes().into_rows(self.n).unwrap();
        let mut b = stream.launch_builder(&self.mix);
        b.arg(&h).arg(&x).arg(&mut z).arg(&n);
        unsafe { b.launch(cfg) }.unwrap();
    }

    fn put_input(
        &self,
        stream: &Arc<CudaStream>,
        arena: &mut Allocated<BufferArena, CudaDevice>,
        x: &[u8],
    ) {
        let mut attention = arena_spec::arena::BufferArenaAttentionViews::of(arena);
        let mut dst = attention.hidden_states.bytes().into_rows(self.n).unwrap();
        stream.memcpy_htod(x, &mut dst).unwrap();
    }

    /// `moe_output`, read through its phase's views: on a reuse slab the read-only set of
    /// every buffer is refused (a buffer whose phase has ended holds another's bytes there).
    fn output(
        &self,
        stream: &Arc<CudaStream>,
        arena: &mut Allocated<BufferArena, CudaDevice>,
    ) -> Vec<u8> {
        let views = arena_spec::arena::BufferArenaFfnDownViews::of(arena);
        let z = views.moe_output.as_view().bytes().range(0..self.n).unwrap();
        let mut out = vec![0u8; self.n];
        stream.memcpy_dtoh(&z, &mut out).unwrap();
        out
    }
}

/// One step captured into a CUDA graph over arena views, replayed many times: the input
/// copied into an arena buffer before each replay, three kernels through the views of two
/// phases, the output equal to the host's and to eager execution, in slab and reuse modes.
/// Fixed addresses are why the arena is one allocation: the graph recorded them once.
#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn a_step_captured_in_a_graph_over_views_replays_as_it_runs_eagerly() {
    let Some(stream) = gpu_stream() else { return };
    let ptx = arena_runtime::cudarc::nvrtc::compile_ptx(STEP_KERNELS).unwrap();
    let module = stream.context().load_module(ptx).unwrap();
    let sizes = sizes_at("qwen3-next-80b-a3b", 512);
    let step = Step {
        scale: module.load_function("scale").unwrap(),
        flip: module.load_function("flip").unwrap(),
        mix: module.load_function("mix").unwrap(),
        // The first 64 rows of `hidden_states`, as bytes.
        n: 64 * 2048 * 2,
    };
    for options in [AllocOptions::default(), AllocOptions::reuse()] {
        let mut arena =
            BufferArena::allocate_with(CudaDevice::from_stream(&stream), &sizes, options).unwrap();
        let first = pattern(7, step.n);
        step.put_input(&stream, &mut arena, &first);
        step.launch(&stream, &mut arena);
        let eager = step.output(&stream, &mut arena);
        assert!(eager == step_on_host(&first), "{options:?}: eager step");
        assert_eq!(
            BufferArenaViews::of(&arena).is_err(),
            options.mode == arena_runtime::AllocMode::Reuse,
            "the read-only set of every buffer is refused on a reuse slab only"
        );

        stream.synchronize().unwrap();
        let graph = arena_runtime::ArenaGraph::capture(&stream, &mut arena, |arena| {
            step.launch(&stream, arena);
            Ok::<(), std::convert::Infallible>(())
        })
        .unwrap();
        assert_eq!(graph.nodes().unwrap(), 3, "the step's three kernels");
        step.put_input(&stream, &mut arena, &first);
        graph.replay(&mut arena).unwrap();
        assert!(
            step.output(&stream, &mut arena) == eager,
            "{options:?}: replay = eager"
        );
        for round in 0..20 {
            let x = pattern(100 + round, step.n);
            step.put_input(&stream, &mut arena, &x);
            graph.replay(&mut arena).unwrap();
            assert!(
                step.output(&stream, &mut arena) == step_on_host(&x),
                "{options:?}: replay {round}"
            );
        }
        drop(graph);
        arena.release().unwrap();
    }
    println!("graph over views: 21 replays equal to eager and host, slab and reuse");
}
