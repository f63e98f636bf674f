//! The whole-GPU plan on a real GPU (feature `cuda`): for several shipped models and layouts,
//! allocate one rank's plan — its six weight arenas (or, where their bytes are not planned,
//! a slab of the given bytes standing in for them), the activation arena (reuse slab), the sequence-state cache and the KV pool at the planned
//! blocks — and show it fits beside the measured reserve, while the pool at one block (one
//! sequence, where sliding layers are planned by sequence) more does not. Returns early,
//! saying so, without a CUDA device.
//!
//! Run on a GPU: `cargo test -p arena-spec --features cuda --release --test gpu_plan -- --nocapture`.
#![cfg(feature = "cuda")]

use arena_runtime::cudarc::cublas::CudaBlas;
use arena_runtime::{AllocOptions, CudaDevice, Device};
use arena_spec::gpu_plan::{plan_gpu, GpuPlanInputs, PoolBlocks, DEVICE_PAGE, UNALLOCATABLE_TAIL};
use arena_spec::models::SHIPPED;
use arena_spec::weights::{file_format_sizes, AllocatedWeights};
use arena_spec::{
    BufferArena, BufferArenaInputs, KvDtype, KvPool, KvPoolSizes, ParallelLayout, StateCache,
    StateCacheSizes,
};

const MIB: u64 = 1 << 20;

/// A model, its tp and pp, and one rank's weight bytes where they are given (with why).
type Case = (&'static str, usize, usize, Option<(u64, &'static str)>);

/// The largest single allocation the device grants now (`CudaDevice::largest_allocation`).
fn largest_allocation(device: &CudaDevice) -> u64 {
    device.largest_allocation().unwrap() as u64
}

#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn the_plan_fits_the_gpu_and_one_block_more_does_not() {
    assert!(
        CudaDevice::available(),
        "no CUDA driver or device: this test needs one"
    );
    let device = CudaDevice::new(0).expect("device 0 opens");
    let context = device.mem_info().unwrap();
    // The engine's cuBLAS handle and its workspace: part of what the plan does not size.
    let blas = CudaBlas::new(device.stream().clone()).unwrap();
    let with_blas = device.mem_info().unwrap();
    let total = with_blas.total as u64;
    println!(
        "device: total {} MiB; context and driver {} MiB; cuBLAS handle {} MiB; reserve measured {} MiB",
        total / MIB,
        (total - context.free as u64) / MIB,
        (context.free - with_blas.free) as u64 / MIB,
        (total - with_blas.free as u64) / MIB,
    );
    // (model, tp, pp, one rank's weights where their bytes are not planned here: the
    // parameter count at one byte, an even share a rank, stated in the row).
    let cases: [Case; 14] = [
        ("llama-3.1-8b", 1, 1, None),
        // Every layer slides (sliding_window, no layer_types): a sequence keeps its window.
        ("mistral-7b-v0.1", 1, 1, None),
        // Chunked local attention on the RoPE layers, full on every fourth.
        ("llama-4-scout-17b-16e-instruct", 2, 1, None),
        // Hybrid with the file's FP32 recurrent state (Qwen3.5's text_config.mamba_ssm_dtype).
        ("qwen3.5-27b", 1, 1, None),
        // MXFP4 experts split by tp 4 (vLLM pads the rank's expert width to 64).
        ("gpt-oss-120b", 4, 1, None),
        // Per-type attention widths, KV-shared layers, per-layer inputs, an MoE block beside
        // the MLP.
        ("gemma-4-e2b-it", 1, 1, None),
        ("gemma-4-26b-a4b", 1, 1, None),
        ("qwen3-30b-a3b", 1, 1, None),
        ("gpt-oss-20b", 1, 1, None),
        ("gemma-3-4b-it", 1, 1, None),
        // Block-scaled FP8 weights, MLA.
        ("deepseek-v3", 8, 1, None),
        // Hybrids: gated DeltaNet, Mamba-2.
        ("qwen3-next-80b-a3b", 2, 1, None),
        ("nemotron-3-nano-30b-a3b", 1, 1, None),
        // DeepSeek-V4 (FP4 experts: bytes not planned here): 284,332,230,231 params at a byte, tp 4.
        (
            "deepseek-v4-flash",
            4,
            1,
            Some((284_332_230_231 / 4, "stand-in: params at 1 B")),
        ),
    ];
    println!(
        "\n| model | layout | weights MiB | arena MiB | state MiB | reserve MiB | full blocks | other blocks | tokens | sequences the pool holds @32K | pool MiB | free after, MiB | pool at one block (sequence) more |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, tp, pp, weights) in cases {
        let m = SHIPPED.iter().find(|m| m.name == name).unwrap();
        let whole = m.config().unwrap();
        let layout = ParallelLayout::new(tp, 1, pp).unwrap();
        let free = device.mem_info().unwrap().free as u64;
        let largest = largest_allocation(&device);
        assert!(
            free - largest <= UNALLOCATABLE_TAIL,
            "{free} free, {largest} allocatable"
        );
        let arena = BufferArenaInputs {
            max_seq_len: 32_768,
            ..BufferArenaInputs::defaults_for(&whole)
        };
        let inputs = GpuPlanInputs {
            // What is already taken on this GPU (context, driver, cuBLAS) and the tail no
            // allocation can take are the reserve: everything but the largest allocation.
            reserve_bytes: total - largest,
            // One process, no communicator: nothing of NCCL's is on this GPU.
            nccl_bytes: Some(0),
            reuse_arena: true,
            weights_bytes_per_rank: weights.map(|(b, _)| b),
            ..GpuPlanInputs::new(total, arena)
        };
        let plan = plan_gpu(&whole, &layout, inputs).unwrap();
        let rank = &plan.ranks[0];
        let config = whole.shard(&layout.rank(0).unwrap()).unwrap();

        // The weights: the six arenas as declared, or the given bytes in one slab.
        let (weights_addr, weight_arenas) = match weights {
            Some(_) => (
                Some(device.alloc(rank.weights_bytes as usize).unwrap()),
                None,
            ),
            None => {
                let sizes = file_format_sizes(&config).unwrap();
                let w = AllocatedWeights::allocate(device.clone(), &sizes).unwrap();
                (None, Some(w))
            }
        };
        // A multimodal file's towers: the slab of their own the plan puts beside the arenas.
        let towers =
            (rank.towers_bytes > 0).then(|| device.alloc(rank.towers_bytes as usize).unwrap());
        let arena_sizes = inputs.arena.sizes(&config).unwrap();
        let arena = BufferArena::allocate_with(device.clone(), &arena_sizes, AllocOptions::reuse())
            .unwrap();
        let recurrent = config.recurrent_state_dtype.or_override(inputs.state_dtype);
        let state_sizes =
            StateCacheSizes::from_config(&config, inputs.arena.max_batch_size, recurrent.dtype);
        let state = StateCache::allocate(device.clone(), &state_sizes).unwrap();
        // The rank's own pool in the plan (for a layout of like ranks, the most it holds).
        let b = rank.pool;
        assert_eq!(
            b, rank.most_blocks,
            "{name}: rank 0 binds a layout of like ranks"
        );
        let block = inputs.arena.kv_block_size;
        let pool_sizes = KvPoolSizes::from_inputs(&config, &b.inputs(block, KvDtype::Bf16));
        let before_pool = device.mem_info().unwrap().free as u64;
        let pool = match KvPool::allocate(device.clone(), &pool_sizes) {
            Ok(p) => p,
            Err(e) => {
                let largest = largest_allocation(&device);
                panic!(
                    "{name}: pool {} MiB planned in a budget of {} MiB; free before it {} MiB, \
                     largest single allocation {} MiB; weights {} arena {} state {}: {e}",
                    plan.kv_pool_bytes / MIB,
                    rank.kv_budget_bytes / MIB,
                    before_pool / MIB,
                    largest / MIB,
                    rank.weights_bytes / MIB,
                    rank.arena_bytes / MIB,
                    rank.state_bytes / MIB
                )
            }
        };
        let left = device.mem_info().unwrap().free as u64;
        // One block more (a sequence more where other kinds are planned by sequence).
        let more = if rank.sequence_blocks.full_only() {
            PoolBlocks {
                full: b.full + 1,
                ..b
            }
        } else {
            rank.sequence_blocks.times(rank.most_sequences + 1)
        };
        let bigger = KvPoolSizes::from_inputs(&config, &more.inputs(block, KvDtype::Bf16));
        pool.release().unwrap();
        let one_more = match KvPool::allocate(device.clone(), &bigger) {
            Ok(p) => {
                p.release().unwrap();
                "FITS"
            }
            Err(_) => "out of memory",
        };
        state.release().unwrap();
        arena.release().unwrap();
        if let Some(addr) = weights_addr {
            // SAFETY: allocated above on this device, `weights_bytes` long, freed once.
            unsafe { device.free(addr, rank.weights_bytes as usize) }.unwrap();
        }
        if let Some(w) = weight_arenas {
            w.release().unwrap();
        }
        if let Some(addr) = towers {
            // SAFETY: allocated above on this device, `towers_bytes` long, freed once.
            unsafe { device.free(addr, rank.towers_bytes as usize) }.unwrap();
        }
        println!(
            "| {name} | tp={tp} pp={pp} | {}{} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {:.1} | {one_more} |",
            rank.weights_bytes / MIB,
            weights.map_or(String::new(), |(_, why)| format!(" ({why})")),
            rank.arena_bytes / MIB,
            rank.state_bytes / MIB,
            rank.reserve_bytes / MIB,
            b.full,
            b.sliding + b.csa + b.hca,
            b.full * block,
            rank.most_sequences,
            plan.kv_pool_bytes as f64 / MIB as f64,
            left as f64 / MIB as f64,
        );
        assert_eq!(one_more, "out of memory", "{name}");
    }
    drop(blas);
}

/// What the device takes for one allocation beyond its bytes: for each size, the drop in free
/// memory minus the size rounded up to the page, and the largest single allocation against the
/// free memory. Prints a table, and holds the device to what the plan assumes of it: an
/// allocation of whole pages takes those pages and nothing more ([`DEVICE_PAGE`]), and no more
/// than [`UNALLOCATABLE_TAIL`] of the free memory is out of any allocation's reach.
#[test]
#[ignore = "needs a CUDA device: run with `-- --include-ignored` on a machine with one"]
fn what_one_allocation_costs_beyond_its_pages() {
    assert!(
        CudaDevice::available(),
        "no CUDA driver or device: this test needs one"
    );
    let device = CudaDevice::new(0).expect("device 0 opens");
    println!("\n| size GiB | free drop − size (MiB) |");
    println!("|---:|---:|");
    for gib in [1u64, 4, 16, 32, 64, 100, 120] {
        let bytes = gib << 30;
        let before = device.mem_info().unwrap().free as u64;
        if bytes + (64 << 20) > before {
            continue;
        }
        let addr = device.alloc(bytes as usize).unwrap();
        let after = device.mem_info().unwrap().free as u64;
        unsafe { device.free(addr, bytes as usize) }.unwrap();
        println!(
            "| {gib} | {:.1} |",
            (before - after - bytes) as f64 / MIB as f64
        );
        assert_eq!(
            before - after,
            bytes,
            "{gib} GiB: whole pages take themselves"
        );
    }
    let free = device.mem_info().unwrap().free as u64;
    let largest = largest_allocation(&device);
    println!(
        "free {} MiB; largest single allocation {} MiB (free − largest = {:.3} MiB)",
        free / MIB,
        largest / MIB,
        (free - largest) as f64 / MIB as f64
    );
    // Two allocations splitting the free memory: what they can take together.
    let half = (free / 2) / DEVICE_PAGE * DEVICE_PAGE;
    let a = device.alloc(half as usize).unwrap();
    let rest = device.mem_info().unwrap().free as u64;
    let second = largest_allocation(&device);
    unsafe { device.free(a, half as usize) }.unwrap();
    println!(
        "after one of {} MiB: free {} MiB, largest second {} MiB (free − largest = {:.3} MiB)",
        half / MIB,
        rest / MIB,
        second / MIB,
        (rest - second) as f64 / MIB as f64
    );
    assert!(free - largest <= UNALLOCATABLE_TAIL && rest - second <= UNALLOCATABLE_TAIL);
}
