//! `--device host|cuda:N|cuda:0,1|cuda:all`: allocate each rank's arena on the chosen
//! device(s) and check it; without `--device`, check each rank's placement on addresses
//! alone (`AddressDevice`), so planning never needs the memory it plans.

use crate::common::CliError;
use arena_runtime::{AllocOptions, Device};
use arena_spec::gpu_plan::on_device;
use arena_spec::report::AllocSummary;
use arena_spec::{BufferArena, BufferSizes};

/// Where `plan` allocates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceChoice {
    Host,
    /// These GPU ordinals, in order: rank `r` goes to the `r mod n`-th.
    Cuda(Vec<usize>),
    /// Every GPU the driver reports.
    CudaAll,
}

impl std::str::FromStr for DeviceChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not a device: use host, cuda:N, cuda:0,1 or cuda:all");
        if s == "host" {
            return Ok(DeviceChoice::Host);
        }
        let list = s.strip_prefix("cuda:").ok_or_else(bad)?;
        if list == "all" {
            return Ok(DeviceChoice::CudaAll);
        }
        let ordinals: Vec<usize> = list
            .split(',')
            .map(|n| n.trim().parse().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        let mut seen = ordinals.clone();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != ordinals.len() {
            return Err(format!("`{s}` lists a GPU twice"));
        }
        Ok(DeviceChoice::Cuda(ordinals))
    }
}

/// Allocates, checks and releases each rank's arena: `(rank, sizes)` in order. On GPUs,
/// rank `r` runs on the `r mod n`-th listed GPU; the GPUs of one round work concurrently
/// (one thread and one `CudaDevice` per GPU), and ranks beyond the GPU count run in later
/// rounds, in turn. The host runs every rank in turn.
pub fn allocate_ranks(
    choice: Option<&DeviceChoice>,
    ranks: &[(usize, BufferSizes)],
    reuse: bool,
) -> Result<Vec<AllocSummary>, CliError> {
    let options = if reuse {
        AllocOptions::reuse()
    } else {
        AllocOptions::default()
    };
    let Some(choice) = choice else {
        return ranks
            .iter()
            .map(|(rank, sizes)| {
                check_on(*rank, arena_runtime::AddressDevice::new(), sizes, options)
            })
            .collect();
    };
    match choice {
        DeviceChoice::Host => ranks
            .iter()
            .map(|(rank, sizes)| {
                fits_in_host_memory(sizes, options)?;
                check_on(*rank, arena_runtime::HostDevice::new(), sizes, options)
            })
            .collect(),
        #[cfg(feature = "cuda")]
        DeviceChoice::Cuda(ordinals) => on_gpus(ordinals, ranks, options),
        #[cfg(feature = "cuda")]
        DeviceChoice::CudaAll => {
            let n = arena_runtime::CudaDevice::count()
                .map_err(|e| CliError::Device(format!("cannot count CUDA devices: {e}")))?;
            if n == 0 {
                return Err(CliError::Device("cuda:all: no CUDA device found".into()));
            }
            on_gpus(&(0..n).collect::<Vec<_>>(), ranks, options)
        }
        #[cfg(not(feature = "cuda"))]
        DeviceChoice::Cuda(_) | DeviceChoice::CudaAll => Err(CliError::Device(
            "this build has no CUDA support: rebuild with `--features cuda` to use --device cuda:N"
                .into(),
        )),
    }
}

#[cfg(feature = "cuda")]
fn on_gpus(
    ordinals: &[usize],
    ranks: &[(usize, BufferSizes)],
    options: AllocOptions,
) -> Result<Vec<AllocSummary>, CliError> {
    let mut out = Vec::with_capacity(ranks.len());
    for round in ranks.chunks(ordinals.len()) {
        let results: Vec<Result<AllocSummary, CliError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = round
                .iter()
                .zip(ordinals)
                .map(|((rank, sizes), &n)| {
                    scope.spawn(move || {
                        let device = arena_runtime::CudaDevice::new(n)
                            .map_err(|e| CliError::Device(format!("cannot open cuda:{n}: {e}")))?;
                        check_on(*rank, device, sizes, options)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a rank's allocation thread does not panic"))
                .collect()
        });
        for result in results {
            out.push(result?);
        }
    }
    Ok(out)
}

/// Refuses a host slab larger than the memory the machine has available (`MemAvailable` in
/// `/proc/meminfo`, where there is one), before touching it.
fn fits_in_host_memory(sizes: &BufferSizes, options: AllocOptions) -> Result<(), CliError> {
    use arena_runtime::Arena;
    let slab = BufferArena::slab_bytes(sizes, options)
        .map_err(|e| CliError::Device(format!("the slab's size: {e}")))?;
    if let Some(available) = host_available_bytes() {
        if slab > available {
            return Err(CliError::Device(format!(
                "refusing to allocate {} on the host: the machine has {} available (MemAvailable); without --device the placement is checked with no memory",
                arena_spec::report::human_bytes(slab),
                arena_spec::report::human_bytes(available)
            )));
        }
    }
    Ok(())
}

/// `MemAvailable` from `/proc/meminfo`, in bytes; `ARENA_HOST_AVAILABLE` (bytes) stands in
/// for it, so tests can state the machine they mean.
fn host_available_bytes() -> Option<usize> {
    if let Some(v) = std::env::var_os("ARENA_HOST_AVAILABLE") {
        return v.to_str()?.parse().ok();
    }
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

fn check_on<D: Device>(
    rank: usize,
    device: D,
    sizes: &BufferSizes,
    options: AllocOptions,
) -> Result<AllocSummary, CliError> {
    let name = device.name();
    let before = device.mem_info();
    let arena = BufferArena::allocate_with(device, sizes, options)?;
    let after = arena.device().mem_info();
    arena.check_placement()?;
    let allocated_bytes = arena.allocated_bytes();
    arena.release()?;
    let free_memory_drop = before
        .zip(after)
        .map(|(b, a)| b.free.saturating_sub(a.free));
    Ok(AllocSummary {
        rank,
        device: name,
        allocated_bytes,
        free_memory_drop,
        drop_matches_plan: free_memory_drop
            // The driver maps device memory in 2 MiB pages: a slab's free-memory drop is its
            // size rounded up to one (measured on the H200: `measurements/gpu_alloc.md`).
            .map(|drop| drop as u64 == on_device(allocated_bytes as u64)),
        reuse: options.mode == arena_runtime::AllocMode::Reuse,
    })
}
