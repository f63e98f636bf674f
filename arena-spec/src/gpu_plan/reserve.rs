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
/// add them with `--reserve`; and the CUDA graphs, kept beside it ([`graph_bytes`]).
pub const RESERVE_BYTES: u64 = 640 << 20;

/// The free memory no allocation can take: on the H200 the largest single allocation is
/// 3.1 MiB short of the free memory `cuMemGetInfo` reports, whatever is already allocated
/// (measured: `tests/gpu_plan.rs`, `what_one_allocation_costs_beyond_its_pages`), two pages.
pub const UNALLOCATABLE_TAIL: u64 = 2 * DEVICE_PAGE;

/// Where [`RESERVE_BYTES`] comes from, in words the CLI prints.
pub const RESERVE_SOURCE: &str = "the CUDA context and a cuBLAS handle with its workspace, \
     as measured on an H200 (arena-spec/measurements/gpu_plan.md); --reserve to change";

/// NCCL's device memory on each GPU of a communicator of `ranks` GPUs of one NVSwitch node
/// (H100/H200), derived from NCCL 2.26.2's source (`v2.26.2-1`, the version NVIDIA's
/// AIConfigurator names for the H200) with its default environment (cuMem on, connections
/// made on first use), in the steady state of a tensor-parallel server whose all-reduces have
/// run both small messages (ring) and large ones (NVLS):
///
/// - **ring buffers**, 288 MiB: 24 channels (the topology search's 6 at 60 GB/s, doubled by
///   `ncclTopoDupChannels` and again by `ncclTopoPostset`: `src/graph/search.cc`:898–911 and
///   1096, `src/graph/connect.cc`:452), each with one send and one receive connection. On
///   Hopper every protocol's buffer is the receiver's (P2P read is for sm_80 only,
///   `src/graph/paths.cc`:353–354): LL 512 KiB, LL128 4,915,200 B and Simple 4 MiB
///   (`src/init.cc`:606–611) with 4 KiB of header (`src/transport/p2p.cc`:444–447), rounded to
///   2 MiB (`CUDA_IPC_MIN`, `src/include/comm.h`:34), 10 MiB; the sender's 4 KiB rounded the
///   same, 2 MiB (`p2p.cc`:376–379): 24 × 12 MiB;
/// - **small allocations**, 196 MiB: each rounded to cuMem's 2 MiB granule
///   (`src/include/alloc.h`:207–241), three a channel for 32 channels (`src/channel.cc`:42–56)
///   and two for the device communicator (`src/init.cc`:436–438);
/// - **NVLS** (NVLink SHARP, on by default where the switch multicasts; only above two ranks
///   in 2.26, `src/transport/nvls.cc`:147 and 157): its set-up, 25 allocations of 2 MiB
///   (`nvls.cc`:380–409), and its buffer, 16 channels × 2 × 1 MiB for each rank
///   (`nvls.cc`:149, 288–291).
///
/// 484 MiB at 2 ranks, 662 at 4, 790 at 8. Not in it: NCCL's kernel images (modules CUDA
/// loads, no NCCL allocation), and what an engine that connects eagerly adds
/// (`NCCL_RUNTIME_CONNECT=0` or `NCCL_CUMEM_ENABLE=0`: the tree's connections, up to 288 MiB,
/// and a 256 MiB network-proxy buffer, `src/transport/net.cc`:545–555): give those with
/// `--nccl-reserve`. NCCL 2.30 differs by little (NVLS from two ranks, a 34 MiB set-up: 582,
/// 646 and 774 MiB). Derived, not measured: the figure the plan keeps until a run on two GPUs
/// measures it. Beyond one node (more than 8 ranks) the 8-rank figure, chosen here; 0 for
/// one rank.
pub const fn nccl_bytes(ranks: usize) -> u64 {
    let heads = match ranks {
        0 | 1 => return 0,
        2 => return NCCL_RING + NCCL_SMALL,
        n if n > 8 => 8,
        n => n as u64,
    };
    NCCL_RING + NCCL_SMALL + NCCL_NVLS_SETUP + heads * NCCL_NVLS_A_RANK
}

/// NCCL's memory on each GPU of a pipeline's communicator, whose neighbours exchange
/// activations by send and receive: its small allocations (as [`nccl_bytes`]) and the
/// point-to-point connections to the previous stage and the next, 32 channels a peer
/// (`p2pnChannelsPerPeer`, `src/graph/paths.cc`:799–835) of a 10 MiB receiving and a 2 MiB
/// sending buffer: 196 + 32 × 12 = 580 MiB. Derived from NCCL 2.26.2's source as
/// [`nccl_bytes`] is.
pub const NCCL_PIPELINE_BYTES: u64 = NCCL_SMALL + 32 * NCCL_CONNECTION;

const MIB: u64 = 1 << 20;
/// A channel's receiving (10 MiB) and sending (2 MiB) buffers of one connection on Hopper.
const NCCL_CONNECTION: u64 = 12 * MIB;
const NCCL_RING: u64 = 24 * NCCL_CONNECTION;
const NCCL_SMALL: u64 = (3 * 32 + 2) * 2 * MIB;
const NCCL_NVLS_SETUP: u64 = 25 * 2 * MIB;
const NCCL_NVLS_A_RANK: u64 = 16 * 2 * MIB;

/// NCCL's memory on every rank of `layout`: its tensor-parallel group's communicator (expert
/// parallelism runs inside it here), and where `pp > 1` the pipeline's
/// ([`NCCL_PIPELINE_BYTES`]). Where it came from, in words the CLI prints, is
/// [`NCCL_SOURCE`].
pub fn nccl_reserve(layout: &ParallelLayout) -> u64 {
    nccl_bytes(layout.tp)
        + if layout.pp > 1 {
            NCCL_PIPELINE_BYTES
        } else {
            0
        }
}

/// Where [`nccl_reserve`] comes from.
pub const NCCL_SOURCE: &str = "NCCL's buffers as NCCL 2.26.2's source sizes them on an \
     NVSwitch node with its default environment (ring 288 MiB + 196 MiB of small allocations, \
     NVLS above 2 ranks 50 MiB + 32 MiB a rank; a pipeline's send/receive 580 MiB); derived, \
     not measured; --nccl-reserve to change";

/// What `graphs` CUDA graphs of `nodes` kernel nodes each take on the device, for a step
/// whose every buffer is an arena buffer and whose cuBLAS workspace is set before the capture
/// (nothing in a captured step allocates): [`GRAPH_NODE_BYTES`] a node, in the driver's pool
/// of 2 MiB pages, which grows at instantiation and gives nothing back when the graphs are
/// destroyed. Measured (`measurements/graph_memory.md`: `cuMemGetInfo` around capture,
/// instantiation, upload, the first launch and 1000 more; the forward example's
/// `--graph-memory`) on an H100, driver 580.159.04: 16 graphs of the 28-layer Qwen3 step
/// (536 nodes each) took 26 MiB, 5 took 8 MiB; 16 graphs of 42 or 48 nodes (2 layers)
/// 2 MiB. An engine whose captured kernels allocate (PyTorch's graph pool, vLLM's) is not
/// this case: give its pool with the reserve.
pub const fn graph_bytes(graphs: usize, nodes: usize) -> u64 {
    on_device(
        (graphs as u64)
            .saturating_mul(nodes as u64)
            .saturating_mul(GRAPH_NODE_BYTES),
    )
}

/// The device bytes a kernel node of an instantiated graph takes: 3,200, the 28-layer
/// measurement's 26 MiB over 16 × 536 nodes (3,179 B) rounded up (the rounding chosen here).
pub const GRAPH_NODE_BYTES: u64 = 3_200;

/// Where [`graph_bytes`] comes from, in words the CLI prints.
pub const GRAPH_SOURCE: &str = "3,200 B a kernel node, for a step that allocates nothing, \
     as measured on an H100 (arena-spec/measurements/graph_memory.md)";

/// The page the device allocates large allocations in: 2 MiB.
pub const DEVICE_PAGE: u64 = 2 << 20;

/// `bytes` as the device takes them: rounded up to [`DEVICE_PAGE`], 0 for nothing.
pub const fn on_device(bytes: u64) -> u64 {
    bytes.div_ceil(DEVICE_PAGE).saturating_mul(DEVICE_PAGE)
}
