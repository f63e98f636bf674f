//! The engine's arena on a real GPU (feature `cuda`). Every test returns early, saying so,
//! when no CUDA driver or device is present, so CI without a GPU skips them cleanly.
//!
//! Run on a GPU: `cargo test -p arena-spec --features cuda --release --test gpu`.
#![cfg(feature = "cuda")]

use arena_runtime::cudarc::driver::{sys, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use arena_runtime::{AllocOptions, Allocated, CudaDevice, Device, DevicePtr, GuardError};
use arena_spec::models::SHIPPED;
use arena_spec::{BufferArena, BufferArenaInputs, BufferSizes, ModelConfig, ParallelLayout, Rank};
use std::sync::Arc;

const REALISTIC: BufferArenaInputs = BufferArenaInputs::AT_128K;
const PAGE: usize = 2 << 20;

const KERNELS: &str = r#"
extern "C" __global__ void fill(unsigned char* p, unsigned long long n, unsigned char v) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) p[i] = v;
}
extern "C" __global__ void check(const unsigned char* p, unsigned long long n, unsigned char v,
                                 unsigned long long* bad) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) if (p[i] != v) atomicAdd(bad, 1ULL);
}
extern "C" __global__ void poke_past_end(float* p, unsigned long long len) {
    p[len] = 0.0f;
}
extern "C" __global__ void spin_then_fill(unsigned char* p, unsigned long long n, unsigned char v,
                                          long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) p[i] = v;
}
extern "C" __global__ void fill_through_table(float* const* table, unsigned int n, float v) {
    if (threadIdx.x < n) table[threadIdx.x][0] = v + threadIdx.x;
}
"#;

fn gpu() -> Option<CudaDevice> {
    if !CudaDevice::available() {
        panic!("no CUDA driver or device: this test needs one");
    }
    Some(CudaDevice::new(0).expect("device 0 opens"))
}

struct Kernels {
    stream: Arc<CudaStream>,
    fill: CudaFunction,
    check: CudaFunction,
    poke: CudaFunction,
    through_table: CudaFunction,
    spin_then_fill: CudaFunction,
}

impl Kernels {
    fn new(device: &CudaDevice) -> Kernels {
        Self::on(device, device.context().default_stream())
    }

    /// The kernels, launched on `stream`.
    fn on(device: &CudaDevice, stream: Arc<CudaStream>) -> Kernels {
        let ptx = arena_runtime::cudarc::nvrtc::compile_ptx(KERNELS)
            .expect("NVRTC compiles the test kernels");
        let module = device.context().load_module(ptx).unwrap();
        Kernels {
            stream,
            fill: module.load_function("fill").unwrap(),
            check: module.load_function("check").unwrap(),
            poke: module.load_function("poke_past_end").unwrap(),
            through_table: module.load_function("fill_through_table").unwrap(),
            spin_then_fill: module.load_function("spin_then_fill").unwrap(),
        }
    }

    fn grid(n: usize) -> LaunchConfig {
        let blocks = n.div_ceil(256).clamp(1, 4096) as u32;
        LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    fn fill(&self, p: DevicePtr<u8>, v: u8) {
        let n = p.byte_len() as u64;
        let mut b = self.stream.launch_builder(&self.fill);
        b.arg(&p).arg(&n).arg(&v);
        unsafe { b.launch(Self::grid(p.byte_len())) }.unwrap();
    }

    fn mismatches(&self, p: DevicePtr<u8>, v: u8) -> u64 {
        let bad = self.stream.alloc_zeros::<u64>(1).unwrap();
        let n = p.byte_len() as u64;
        let mut b = self.stream.launch_builder(&self.check);
        b.arg(&p).arg(&n).arg(&v).arg(&bad);
        unsafe { b.launch(Self::grid(p.byte_len())) }.unwrap();
        self.stream.clone_dtoh(&bad).unwrap()[0]
    }

    /// Waits about `cycles` GPU clocks, then fills: a kernel still running when the host
    /// issues what comes next on the stream.
    fn spin_then_fill(&self, p: DevicePtr<u8>, v: u8, cycles: i64) {
        let n = p.byte_len() as u64;
        let mut b = self.stream.launch_builder(&self.spin_then_fill);
        b.arg(&p).arg(&n).arg(&v).arg(&cycles);
        unsafe { b.launch(Self::grid(p.byte_len())) }.unwrap();
    }

    /// The check kernel's count of bytes of `p` that are not `v`, added to the `u64` at
    /// `bad`, launched with nothing allocated or copied and no cudarc slice (whose event
    /// tracking would tie the capture to work outside it): legal inside a stream capture.
    fn count_mismatches_into(&self, p: DevicePtr<u8>, v: u8, bad: DevicePtr<u8>) {
        let n = p.byte_len() as u64;
        let mut b = self.stream.launch_builder(&self.check);
        b.arg(&p).arg(&n).arg(&v).arg(&bad);
        unsafe { b.launch(Self::grid(p.byte_len())) }.unwrap();
    }

    fn poke_past_end(&self, p: DevicePtr<f32>) {
        let len = p.len() as u64;
        let mut b = self.stream.launch_builder(&self.poke);
        b.arg(&p).arg(&len);
        unsafe { b.launch(one_block(1)) }.unwrap();
        self.stream.synchronize().unwrap();
    }
}

/// A shipped model's sizes at M = 512, the rest realistic: enough for a single-kernel test.
fn small_sizes(model: &str) -> arena_spec::BufferSizes {
    let config = arena_spec::models::find(model).unwrap().config().unwrap();
    BufferArenaInputs {
        max_batch_tokens: 512,
        ..REALISTIC
    }
    .sizes(&config)
    .unwrap()
}

/// One block of `threads` threads.
fn one_block(threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn configs() -> Vec<ModelConfig> {
    SHIPPED.iter().map(|m| m.config().unwrap()).collect()
}

fn byte_view(p: &arena_runtime::Placement) -> DevicePtr<u8> {
    DevicePtr::from_raw_parts(p.addr, p.bytes)
}

/// Writes a distinct byte over every buffer's full extent, then reads every buffer back.
fn write_then_verify<D: Device>(k: &Kernels, arena: &Allocated<BufferArena, D>, model: &str) {
    let live: Vec<_> = arena.placements().iter().filter(|p| p.bytes > 0).collect();
    for (i, p) in live.iter().enumerate() {
        k.fill(byte_view(p), (i % 251 + 1) as u8);
    }
    for (i, p) in live.iter().enumerate() {
        assert_eq!(
            k.mismatches(byte_view(p), (i % 251 + 1) as u8),
            0,
            "{model}: `{}` was overwritten or is short",
            p.decl.name
        );
    }
}

#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn every_shipped_model_allocates_its_planned_footprint_and_gives_it_back() {
    let Some(device) = gpu() else { return };
    let k = Kernels::new(&device);
    for config in configs() {
        let sizes = REALISTIC.sizes(&config).unwrap();
        let before = device.mem_info().unwrap().free;
        let arena = BufferArena::allocate(device.clone(), &sizes).unwrap();
        let during = device.mem_info().unwrap().free;
        let planned = arena.allocated_bytes();
        let drop = before - during;
        println!(
            "{:<30} planned {planned:>12} B, free memory dropped {drop:>12} B",
            config.source
        );
        assert_eq!(
            drop,
            planned.div_ceil(PAGE) * PAGE,
            "{}: free memory dropped by the footprint in 2 MiB pages",
            config.source
        );

        arena.check_placement().unwrap();
        assert!(arena.moe_fp8_scratch.is_null() == (sizes.moe_fp8_scratch == 0));
        write_then_verify(&k, &arena, &config.source);
        k.stream.synchronize().unwrap();
        arena.release().unwrap();
        let after = device.mem_info().unwrap().free;
        assert_eq!(
            after, before,
            "{}: free memory rises back after release",
            config.source
        );
    }
}

#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn per_buffer_mode_writes_every_buffer_without_overlap() {
    let Some(device) = gpu() else { return };
    let k = Kernels::new(&device);
    for config in configs() {
        let sizes = REALISTIC.sizes(&config).unwrap();
        let before = device.mem_info().unwrap().free;
        let arena =
            BufferArena::allocate_with(device.clone(), &sizes, AllocOptions::per_buffer()).unwrap();
        write_then_verify(&k, &arena, &config.source);
        k.stream.synchronize().unwrap();
        arena.release().unwrap();
        assert_eq!(device.mem_info().unwrap().free, before, "{}", config.source);
    }
}

#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn a_kernel_writing_past_a_buffer_is_caught_by_the_guards() {
    let Some(device) = gpu() else { return };
    let k = Kernels::new(&device);
    let config = arena_spec::models::find("qwen3-30b-a3b")
        .unwrap()
        .config()
        .unwrap();
    let sizes = REALISTIC.sizes(&config).unwrap();
    for options in [AllocOptions::default(), AllocOptions::per_buffer()] {
        let arena =
            BufferArena::allocate_with(device.clone(), &sizes, options.with_guard_bytes(256))
                .unwrap();
        arena.check_guards().unwrap();
        k.poke_past_end(arena.gate_logits_f32);
        assert_eq!(
            arena.check_guards(),
            Err(GuardError::Overrun {
                buffers: vec!["gate_logits_f32"]
            })
        );
        arena.release().unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn an_engine_owned_stream_allocates_in_its_context() {
    let Some(device) = gpu() else { return };
    let stream = device.context().new_stream().unwrap();
    let from_stream = CudaDevice::from_stream(&stream);
    let sizes = small_sizes("llama-3.1-8b");
    let arena = BufferArena::allocate(from_stream, &sizes).unwrap();
    assert!(!arena.hidden_states.is_null());
    arena.release().unwrap();
}

/// A pointer table built with `DevicePtr::address_table` is what a `T**` kernel reads: each
/// entry reaches its own buffer (a slice of `DevicePtr` cannot be uploaded at all; see the
/// compile-fail case `tests/ui/pointer_table_upload.rs`).
#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn a_pointer_table_reaches_every_buffer_it_lists() {
    let Some(device) = gpu() else { return };
    let k = Kernels::new(&device);
    let sizes = small_sizes("qwen3-30b-a3b");
    let arena = BufferArena::allocate(device.clone(), &sizes).unwrap();
    let targets: Vec<DevicePtr<f32>> = vec![
        arena.gate_logits_f32,
        arena.moe_router_in_f32,
        arena.ssm_gates,
        arena.logits,
    ];
    let table = k
        .stream
        .clone_htod(&DevicePtr::address_table(&targets))
        .unwrap();
    let n = targets.len() as u32;
    let v = 40.0f32;
    let mut b = k.stream.launch_builder(&k.through_table);
    b.arg(&table).arg(&n).arg(&v);
    unsafe { b.launch(one_block(32)) }.unwrap();
    k.stream.synchronize().unwrap();
    for (i, p) in targets.iter().enumerate() {
        let mut first = [0u8; 4];
        // SAFETY: `p` is a live buffer of this arena, at least 4 bytes long.
        unsafe { device.read(p.as_raw(), &mut first) }.unwrap();
        assert_eq!(f32::from_le_bytes(first), v + i as f32, "entry {i}");
    }
    arena.release().unwrap();
}

/// What one rank's arena showed on its GPU.
struct RankRow {
    gpu: usize,
    planned: usize,
    drop: usize,
}

/// Allocates one rank's arena on GPU `gpu` in `options`' mode, checks the free-memory drop
/// (slab: the footprint in 2 MiB pages; per buffer: between the footprint less a page and
/// every allocation rounded up to a page, the driver's packing rules measured in
/// `arena-spec/measurements/gpu_alloc.md`), writes and reads back every buffer with a kernel on that GPU,
/// releases, and checks the memory came back.
fn one_rank_on(gpu: usize, what: &str, sizes: &BufferSizes, options: AllocOptions) -> RankRow {
    let device = CudaDevice::new(gpu).expect("the GPU opens");
    let k = Kernels::new(&device);
    let before = device.mem_info().unwrap().free;
    let arena = BufferArena::allocate_with(device.clone(), sizes, options).unwrap();
    let drop = before - device.mem_info().unwrap().free;
    let planned = arena.allocated_bytes();
    if options == AllocOptions::per_buffer() {
        let ceiling: usize = arena
            .placements()
            .iter()
            .filter(|p| p.bytes > 0)
            .map(|p| p.bytes.div_ceil(PAGE) * PAGE)
            .sum();
        assert!(
            drop + PAGE >= planned && drop <= ceiling,
            "{what} on cuda:{gpu}: per-buffer drop {drop} outside [{planned} - 2 MiB, {ceiling}]"
        );
    } else {
        assert_eq!(
            drop,
            planned.div_ceil(PAGE) * PAGE,
            "{what} on cuda:{gpu}: free memory dropped by the footprint in 2 MiB pages"
        );
    }
    arena.check_placement().unwrap();
    write_then_verify(&k, &arena, what);
    k.stream.synchronize().unwrap();
    arena.release().unwrap();
    assert_eq!(
        device.mem_info().unwrap().free,
        before,
        "{what} on cuda:{gpu}: free memory rises back after release"
    );
    RankRow { gpu, planned, drop }
}

/// The rank arenas of a tensor-parallel layout of Qwen3-Next and an expert-parallel one of
/// DeepSeek-V3 in one allocation mode: rank `r` on GPU `r mod n`, the GPUs of a round
/// concurrently (one thread and one context each), so on one GPU every rank runs in turn.
/// Prints a row per rank.
fn rank_arenas_on_every_gpu(mode: &str, options: AllocOptions) {
    if gpu().is_none() {
        return;
    }
    let gpus = CudaDevice::count().unwrap();
    let layouts = [
        ("qwen3-next-80b-a3b", ParallelLayout::new(2, 1, 1).unwrap()),
        ("deepseek-v3", ParallelLayout::new(2, 2, 1).unwrap()),
    ];
    println!("{gpus} GPU(s), {mode}");
    println!(
        "{:<20} {:<16} {:>4} {:>4} {:<10} {:>14} {:>14}",
        "model", "layout", "rank", "gpu", "mode", "planned B", "drop B"
    );
    for (model, layout) in layouts {
        let whole = arena_spec::models::find(model).unwrap().config().unwrap();
        let ranks: Vec<(Rank, BufferSizes)> = layout
            .ranks()
            .map(|r| (r, REALISTIC.sizes(&whole.shard(&r).unwrap()).unwrap()))
            .collect();
        for round in ranks.chunks(gpus) {
            let rows: Vec<RankRow> = std::thread::scope(|scope| {
                let handles: Vec<_> = round
                    .iter()
                    .enumerate()
                    .map(|(gpu, (rank, sizes))| {
                        let what = format!("{model} {layout} rank {}", rank.index);
                        scope.spawn(move || one_rank_on(gpu, &what, sizes, options))
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for ((rank, _), row) in round.iter().zip(rows) {
                println!(
                    "{model:<20} {:<16} {:>4} {:>4} {mode:<10} {:>14} {:>14}",
                    layout.to_string(),
                    rank.index,
                    row.gpu,
                    row.planned,
                    row.drop
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn rank_arenas_of_a_layout_allocate_on_every_gpu_in_one_slab() {
    rank_arenas_on_every_gpu("slab", AllocOptions::default());
}

#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn rank_arenas_of_a_layout_allocate_on_every_gpu_per_buffer() {
    rank_arenas_on_every_gpu("per-buffer", AllocOptions::per_buffer());
}

/// Every shipped model's step on its reuse slab (`AllocOptions::reuse()`, the realistic
/// inputs): free memory drops by the planned footprint to the 2 MiB page; as each phase
/// begins a kernel fills every buffer that becomes live with its own byte (whole-step buffers
/// at the first phase), and a kernel checks that every buffer live in the phase still holds
/// its byte; free memory comes back on release. Prints one row per model of the committed
/// table (`arena-spec/measurements/phase_reuse.md`), with the planning and allocation times.
#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn a_step_on_the_reuse_slab_keeps_every_live_buffer_intact() {
    use arena_runtime::Arena;
    let Some(device) = gpu() else { return };
    let k = Kernels::new(&device);
    let phases = <BufferArena as Arena>::PHASES.len();
    println!("| model | plain slab | reuse slab | lower bound | reuse / bound | saving | free-memory drop | plan | allocation |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for config in configs() {
        let sizes = REALISTIC.sizes(&config).unwrap();
        let t = std::time::Instant::now();
        let plan = BufferArena::reuse_plan(&sizes).unwrap();
        let plan_us = t.elapsed().as_secs_f64() * 1e6;
        let before = device.mem_info().unwrap().free;
        let t = std::time::Instant::now();
        let arena =
            BufferArena::allocate_with(device.clone(), &sizes, AllocOptions::reuse()).unwrap();
        let alloc_us = t.elapsed().as_secs_f64() * 1e6;
        let drop = before - device.mem_info().unwrap().free;
        assert_eq!(arena.allocated_bytes(), plan.footprint, "{}", config.source);
        assert_eq!(
            drop,
            plan.footprint.div_ceil(PAGE) * PAGE,
            "{}: free memory dropped by the reuse footprint in 2 MiB pages",
            config.source
        );
        arena.check_placement().unwrap();
        let live: Vec<_> = arena
            .placements()
            .iter()
            .enumerate()
            .filter(|(_, p)| p.bytes > 0)
            .collect();
        for p in 0..phases {
            for &(i, b) in &live {
                if b.decl.live.starts_at(p) {
                    k.fill(byte_view(b), (i % 251 + 1) as u8);
                }
            }
            for &(i, b) in &live {
                if b.decl.live.contains(p) {
                    assert_eq!(
                        k.mismatches(byte_view(b), (i % 251 + 1) as u8),
                        0,
                        "{}: `{}` clobbered in phase {}",
                        config.source,
                        b.decl.name,
                        <BufferArena as Arena>::PHASES[p]
                    );
                }
            }
        }
        k.stream.synchronize().unwrap();
        arena.release().unwrap();
        assert_eq!(device.mem_info().unwrap().free, before, "{}", config.source);
        let mib = |b: usize| format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64);
        println!(
            "| {} | {} | {} | {} | {:.3}× | {:.1}% | {} | {:.0} µs | {:.0} µs |",
            config.source,
            mib(plan.slab),
            mib(plan.footprint),
            mib(plan.lower_bound),
            plan.footprint as f64 / plan.lower_bound as f64,
            100.0 * (1.0 - plan.footprint as f64 / plan.slab as f64),
            mib(drop),
            plan_us,
            alloc_us
        );
    }
}

/// The first buffer of a phase's own (live from that phase, not the whole step) in a reuse
/// arena of `model` at small sizes, with the phase.
fn a_buffer_beginning_at_a_phase(
    arena: &Allocated<BufferArena, CudaDevice>,
) -> (arena_spec::BufferArenaPhase, DevicePtr<u8>) {
    use arena_runtime::{Arena, Live, Phase};
    let p = arena
        .placements()
        .iter()
        .find(|p| p.bytes > 0 && matches!(p.decl.live, Live::Phases { first, .. } if first > 0))
        .expect("a buffer that begins after the first phase");
    let Live::Phases { first, .. } = p.decl.live else {
        unreachable!()
    };
    let phase = <BufferArena as Arena>::Phase::ALL[first];
    (phase, byte_view(p))
}

/// Poison mode on an engine's own (non-blocking) stream: a slow kernel writes a buffer, the
/// phase that buffer begins at is poisoned, a second kernel checks the buffer. The poison is
/// an asynchronous memset on that stream, so it lands after the first kernel and before the
/// second (a memset on the legacy default stream would not wait for the spinning kernel, which
/// would then overwrite it); the same three steps recorded in a stream capture replay the
/// same way, so poison mode works inside a CUDA graph.
#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn poison_on_an_engine_stream_lands_between_its_kernels_and_in_a_graph() {
    use arena_runtime::POISON_PATTERN;
    let Some(gpu) = gpu() else { return };
    let stream = gpu.context().new_stream().unwrap();
    let device = CudaDevice::from_stream(&stream);
    let k = Kernels::on(&device, stream.clone());
    let sizes = small_sizes("qwen3-next-80b-a3b");
    let arena = BufferArena::allocate_with(device.clone(), &sizes, AllocOptions::reuse()).unwrap();
    let (phase, buffer) = a_buffer_beginning_at_a_phase(&arena);
    // About 20 ms at the H200's ~2 GHz: far longer than the host takes to issue the memset.
    let cycles = 40_000_000;

    k.spin_then_fill(buffer, 0x11, cycles);
    arena.poison_phase(phase).unwrap();
    assert_eq!(
        k.mismatches(buffer, POISON_PATTERN),
        0,
        "the poison landed between the two kernels of the device's stream"
    );

    // Another stream of the engine's, through `poison_phase_on`.
    let other = gpu.context().new_stream().unwrap();
    let k2 = Kernels::on(&device, other.clone());
    k2.spin_then_fill(buffer, 0x22, cycles);
    arena.poison_phase_on(phase, &other).unwrap();
    assert_eq!(
        k2.mismatches(buffer, POISON_PATTERN),
        0,
        "poison_phase_on orders on its stream"
    );

    // The same step captured into a graph and replayed; the mismatch count lives in a
    // whole-step buffer of the arena (a `CudaSlice`'s event tracking would tie the capture to
    // work outside it).
    let counter = arena
        .placements()
        .iter()
        .find(|p| p.bytes >= 8 && p.decl.live == arena_runtime::Live::WholeStep)
        .map(byte_view)
        .expect("a whole-step buffer for the count");
    stream.synchronize().unwrap();
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .unwrap();
    k.fill(counter, 0);
    k.spin_then_fill(buffer, 0x33, cycles / 4);
    arena.poison_phase(phase).unwrap();
    k.count_mismatches_into(buffer, POISON_PATTERN, counter);
    let graph = stream
        .end_capture(sys::CUgraphInstantiate_flags(0))
        .unwrap()
        .expect("the capture recorded the step");
    for _ in 0..5 {
        k.fill(buffer, 0x44);
        graph.launch().unwrap();
        let mut count = [0u8; 8];
        // SAFETY: the counter's first 8 bytes, a live buffer of this arena; `read` waits for
        // the stream, so the replay is done.
        unsafe { device.read(counter.as_raw(), &mut count) }.unwrap();
        assert_eq!(
            u64::from_ne_bytes(count),
            0,
            "the replay poisoned the buffer between the graph's kernels"
        );
    }
    assert_eq!(k.mismatches(buffer, POISON_PATTERN), 0);
    drop(graph);
    arena.release().unwrap();
}
