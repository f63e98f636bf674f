//! What the plan keeps on every GPU beside its slabs — the measured reserve, the tail no
//! allocation can take, NCCL's buffers — and the page the device allocates in.

use crate::parallel::ParallelLayout;

/// The reserve the CLI keeps on every GPU by default: what an engine's process holds before
/// its first allocation of the plan, measured on the H200 (driver 580.159.04, cudarc 0.19;
/// `tests/gpu_plan.rs` prints it, `measurements/gpu_plan.md` holds the run): the CUDA context
/// with the driver's own reservations (526 MiB of the 143,155 MiB `cuMemGetInfo` reports), a
/// cuBLAS handle with its workspace (68 MiB), and the free memory no allocation can take
/// ([`UNALLOCATABLE_TAIL`]) — 598 MiB, rounded up to 640 MiB (a multiple of 64 MiB, chosen
/// here). Not in it: the engine's own kernels (modules it loads), which differ by engine —
/// add them with `--reserve`; and no CUDA-graph pool: an engine whose every step buffer is an
/// arena buffer captures graphs that allocate nothing of their own.
pub const RESERVE_BYTES: u64 = 640 << 20;

/// The free memory no allocation can take: on the H200 the largest single allocation is
/// 3.1 MiB short of the free memory `cuMemGetInfo` reports, whatever is already allocated
/// (measured: `tests/gpu_plan.rs`, `what_one_allocation_costs_beyond_its_pages`), two pages.
pub const UNALLOCATABLE_TAIL: u64 = 2 * DEVICE_PAGE;

/// Where [`RESERVE_BYTES`] comes from, in words the CLI prints.
pub const RESERVE_SOURCE: &str = "the CUDA context and a cuBLAS handle with its workspace, \
     as measured on an H200 (arena-spec/measurements/gpu_plan.md); --reserve to change";

/// What NCCL keeps on each GPU of a communicator of `ranks` GPUs (its channels' buffers for
/// each protocol and peer), as NVIDIA's AIConfigurator sizes it for an H200 SXM with NCCL
/// 2.26.2 (`aiconfigurator-core` 0.12.0, `systems/h200_sxm.yaml`, `misc.nccl_mem`: 342 MiB at
/// 2 ranks, 392 MiB at 4 and 8, which it calls a correction from observations): the figure
/// the plan keeps until a two-GPU run measures the NCCL version the engine loads. 0 for one
/// rank; more than 8 ranks are taken at the 8-rank figure.
pub const fn nccl_bytes(ranks: usize) -> u64 {
    match ranks {
        0 | 1 => 0,
        2 => 358_612_992,
        _ => 411_041_792,
    }
}

/// NCCL's memory on every rank of `layout`: its tensor-parallel group's communicator (expert
/// parallelism runs inside it here), and where `pp > 1` the pipeline's, whose neighbours
/// exchange activations point to point — taken as a two-rank communicator's figure, chosen
/// here. Where it came from, in words the CLI prints, is [`NCCL_SOURCE`].
pub fn nccl_reserve(layout: &ParallelLayout) -> u64 {
    nccl_bytes(layout.tp) + if layout.pp > 1 { nccl_bytes(2) } else { 0 }
}

/// Where [`nccl_reserve`] comes from.
pub const NCCL_SOURCE: &str = "NCCL's buffers as aiconfigurator-core 0.12.0 sizes them for an \
     H200 with NCCL 2.26.2 (systems/h200_sxm.yaml: 342 MiB at tp 2, 392 MiB at 4-8; a pp \
     neighbour taken as a 2-rank communicator); --nccl-reserve to change";

/// The page the device allocates large allocations in: 2 MiB.
pub const DEVICE_PAGE: u64 = 2 << 20;

/// `bytes` as the device takes them: rounded up to [`DEVICE_PAGE`], 0 for nothing.
pub const fn on_device(bytes: u64) -> u64 {
    bytes.div_ceil(DEVICE_PAGE).saturating_mul(DEVICE_PAGE)
}
