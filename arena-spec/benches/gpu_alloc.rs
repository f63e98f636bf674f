//! Arena construction and release on a GPU: slab mode vs per-buffer mode vs one raw driver
//! allocation of the same total (the floor), and the device memory each takes (free-memory
//! delta), for a dense, a MoE and a hybrid model at M ∈ {512, 8192, 32768}.
//!
//! `cargo bench -p arena-spec --features cuda --bench gpu_alloc` (prints a Markdown table;
//! results are committed in `measurements/gpu_alloc.md`). Without a GPU it says so and exits.

use arena_runtime::{AllocOptions, Allocated, CudaDevice, Device};
use arena_spec::{BufferArena, BufferArenaInputs};
use std::time::Instant;

const MODELS: [&str; 3] = ["llama-3.1-8b", "qwen3-30b-a3b", "qwen3-next-80b-a3b"];
const MS: [usize; 3] = [512, 8192, 32768];
const WARMUP: usize = 5;
const REPS: usize = 61;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

#[derive(Default)]
struct Measured {
    alloc_us: Vec<f64>,
    free_us: Vec<f64>,
    mem_bytes: usize,
}

/// One way of taking the arena's memory: construct, then release.
trait Way {
    fn run(&self, device: &CudaDevice, out: &mut Measured, record_memory: bool);
}

impl<T, M: Fn() -> T, R: Fn(T)> Way for (M, R) {
    fn run(&self, device: &CudaDevice, out: &mut Measured, record_memory: bool) {
        let before = if record_memory {
            device.mem_info().unwrap().free
        } else {
            0
        };
        let t0 = Instant::now();
        let held = (self.0)();
        out.alloc_us.push(t0.elapsed().as_secs_f64() * 1e6);
        if record_memory {
            out.mem_bytes = before - device.mem_info().unwrap().free;
        }
        let t1 = Instant::now();
        (self.1)(held);
        out.free_us.push(t1.elapsed().as_secs_f64() * 1e6);
    }
}

/// Runs every way in turn, rotating which goes first, so drift in the driver's state
/// (its page cache, the VA allocator) falls on all of them alike.
fn measure_interleaved(device: &CudaDevice, ways: &[&dyn Way]) -> Vec<Measured> {
    let mut out: Vec<Measured> = ways.iter().map(|_| Measured::default()).collect();
    let mut scratch = Measured::default();
    for _ in 0..WARMUP {
        for w in ways {
            w.run(device, &mut scratch, false);
        }
    }
    for rep in 0..REPS {
        for k in 0..ways.len() {
            let i = (rep + k) % ways.len();
            ways[i].run(device, &mut out[i], rep == 0);
        }
    }
    out
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Hands out addresses without touching a driver: what the slab costs on top of the one
/// driver call (planning, pointers, bookkeeping).
struct NoDriver;
impl Device for NoDriver {
    fn name(&self) -> String {
        "no-driver".into()
    }
    fn alloc(&self, _bytes: usize) -> Result<u64, arena_runtime::DeviceError> {
        Ok(1 << 40)
    }
    unsafe fn free(&self, _addr: u64, _bytes: usize) -> Result<(), arena_runtime::DeviceError> {
        Ok(())
    }
}

fn host_overhead_us(sizes: &arena_spec::BufferSizes) -> f64 {
    let reps = 2000;
    let t = Instant::now();
    for _ in 0..reps {
        BufferArena::allocate(NoDriver, sizes)
            .unwrap()
            .release()
            .unwrap();
    }
    t.elapsed().as_secs_f64() * 1e6 / reps as f64
}

fn mib(b: usize) -> f64 {
    b as f64 / (1 << 20) as f64
}

fn main() {
    if !CudaDevice::available() {
        println!("no CUDA device: nothing measured");
        return;
    }
    let device = CudaDevice::new(0).unwrap();
    println!("| model | M | allocated (MiB) | raw alloc µs median (min) | slab alloc µs median (min) | slab/raw median (min) | slab host overhead µs | per-buffer alloc µs | per-buffer/raw | raw free µs | slab free µs | per-buffer free µs | raw mem MiB | slab mem MiB | slab mem − allocated (MiB) | per-buffer mem MiB | buffers |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for model in MODELS {
        let config = arena_spec::models::find(model).unwrap().config().unwrap();
        for m in MS {
            let inputs = BufferArenaInputs {
                max_batch_tokens: m,
                ..BufferArenaInputs::defaults_for(&config)
            };
            let sizes = inputs.sizes(&config).unwrap();
            let slab_bytes = BufferArena::allocate(device.clone(), &sizes)
                .map(|a| {
                    let b = a.allocated_bytes();
                    a.release().unwrap();
                    b
                })
                .unwrap();
            let raw = (
                || device.alloc(slab_bytes).unwrap(),
                |addr| unsafe { device.free(addr, slab_bytes).unwrap() },
            );
            let slab = (
                || BufferArena::allocate(device.clone(), &sizes).unwrap(),
                |a: Allocated<BufferArena, CudaDevice>| a.release().unwrap(),
            );
            let per = (
                || {
                    BufferArena::allocate_with(device.clone(), &sizes, AllocOptions::per_buffer())
                        .unwrap()
                },
                |a: Allocated<BufferArena, CudaDevice>| a.release().unwrap(),
            );
            let [raw, slab, per]: [Measured; 3] =
                measure_interleaved(&device, &[&raw, &slab, &per])
                    .try_into()
                    .ok()
                    .unwrap();
            let (raw_a, slab_a, per_a) = (
                median(raw.alloc_us.clone()),
                median(slab.alloc_us.clone()),
                median(per.alloc_us.clone()),
            );
            let buffers = sizes.buffers().iter().filter(|b| b.bytes > 0).count();
            // Every allocated byte: the tracked total plus the untracked o_latent and norm_unit_w.
            let total = sizes.total_bytes() + sizes.o_latent + sizes.norm_unit_w;
            println!(
                "| {model} | {m} | {:.1} | {:.1} ({:.1}) | {:.1} ({:.1}) | {:.2} ({:.2}) | {:.2} | {:.1} | {:.2} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {:.1} | {buffers} |",
                mib(total),
                raw_a,
                min(&raw.alloc_us),
                slab_a,
                min(&slab.alloc_us),
                slab_a / raw_a,
                min(&slab.alloc_us) / min(&raw.alloc_us),
                host_overhead_us(&sizes),
                per_a,
                per_a / raw_a,
                median(raw.free_us),
                median(slab.free_us),
                median(per.free_us),
                mib(raw.mem_bytes),
                mib(slab.mem_bytes),
                mib(slab.mem_bytes) - mib(total),
                mib(per.mem_bytes),
            );
        }
    }
}
