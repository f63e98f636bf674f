//! The whole-GPU plan (`gpu_plan::plan_gpu`) on the host: each rank's slabs add up to its GPU,
//! the pool is the largest that fits (one block, or one sequence where sliding layers are
//! planned by sequence, more does not), the binding rank is the tightest, and a hybrid
//! model's sequences stop at its state slots. `tests/gpu_plan.rs` allocates the same plans on
//! a GPU.

use arena_spec::gpu_plan::{
    kv_pool_bytes, on_device, plan_gpu, GpuPlan, GpuPlanError, GpuPlanInputs, PoolBlocks,
    DEVICE_PAGE,
};
use arena_spec::weights::{file_format_sizes, weight_bytes};
use arena_spec::{BufferArenaInputs, KvDtype, ModelConfig, ParallelLayout};

use crate::shipped;
use shipped::config;

const GIB: u64 = 1 << 30;

fn inputs(c: &ModelConfig, gpu: u64, context: usize) -> GpuPlanInputs {
    let arena = BufferArenaInputs {
        max_seq_len: context,
        ..BufferArenaInputs::defaults_for(c)
    };
    GpuPlanInputs {
        reserve_bytes: GIB,
        reuse_arena: true,
        ..GpuPlanInputs::new(gpu, arena)
    }
}

#[test]
fn the_pool_is_the_largest_that_fits_beside_the_rest() {
    for (name, tp, pp) in [
        ("llama-3.1-8b", 1, 1),
        ("qwen3-30b-a3b", 2, 1),
        ("deepseek-v3", 8, 2),
        ("gemma-3-1b-it", 1, 1),
        ("gpt-oss-20b", 1, 1),
        ("qwen3-next-80b-a3b", 4, 1),
        ("deepseek-v4-flash", 4, 1),
    ] {
        let c = config(name);
        let layout = ParallelLayout::new(tp, 1, pp).unwrap();
        let mut i = inputs(&c, 143_155 << 20, 32_768);
        if name.starts_with("deepseek-v4") {
            // Its FP4 experts' bytes are not planned: a stand-in for its weights.
            i.weights_bytes_per_rank = Some(80 * GIB);
        }
        let plan = plan_gpu(&c, &layout, i).unwrap();
        assert_eq!(plan.ranks.len(), tp * pp);
        every_rank_holds_the_plan(&c, &layout, &i, &plan, name);
    }
}

/// What a plan promises, rank by rank: its parts add up to the GPU, its own pool fits its
/// budget and holds the plan's sequences, the most it could hold is the most (one block, or
/// one sequence, more does not fit), and the plan's figures are the binding rank's.
fn every_rank_holds_the_plan(
    c: &ModelConfig,
    layout: &ParallelLayout,
    i: &GpuPlanInputs,
    plan: &GpuPlan,
    name: &str,
) {
    for (r, rank) in plan.ranks.iter().enumerate() {
        let rc = c.shard(&layout.rank(r).unwrap()).unwrap();
        match i.weights_bytes_per_rank {
            // Given: one slab.
            Some(b) => assert_eq!(rank.weights_bytes, on_device(b), "{name}"),
            // From the config: the six weight arenas a slab each, which hold every tensor's
            // bytes and take at most a page and an alignment a buffer more.
            None => {
                let sizes = file_format_sizes(&rc).unwrap();
                let want = sizes.device_bytes(DEVICE_PAGE).unwrap();
                assert_eq!(rank.weights_bytes, want, "{name}");
                // The six slabs hold every tensor's bytes and take at most a page and an
                // alignment (256 bytes) a buffer more.
                let tensors = weight_bytes(&rc).unwrap();
                assert!(sizes.device_bytes(1).unwrap() >= tensors, "{name}");
                let buffers: u64 = [
                    sizes.model.buffers().len(),
                    sizes.attention.buffers().len(),
                    sizes.latent.buffers().len(),
                    sizes.compressed.buffers().len(),
                    sizes.mixers.buffers().len(),
                    sizes.ffn.buffers().len(),
                ]
                .iter()
                .sum::<usize>() as u64;
                assert!(want <= tensors + 6 * DEVICE_PAGE + 256 * buffers, "{name}");
            }
        }
        let fixed = rank.weights_bytes + rank.arena_bytes + rank.state_bytes + rank.reserve_bytes;
        assert_eq!(fixed + rank.kv_budget_bytes, i.gpu_bytes, "{name} rank {r}");
        // Its pool fits and holds the plan's sequences at the context.
        assert_eq!(rank.pool_bytes, kv_pool_bytes(&rc, i, rank.pool).unwrap());
        assert!(rank.pool_bytes <= rank.kv_budget_bytes, "{name} rank {r}");
        let per = rank.sequence_blocks;
        for (held, need) in [
            (rank.pool.full, per.full),
            (rank.pool.sliding, per.sliding),
            (rank.pool.csa, per.csa),
            (rank.pool.hca, per.hca),
        ] {
            assert!(
                held >= plan.sequences * need,
                "{name} rank {r}: {held} < {need}"
            );
        }
        // The most it could hold alone is the most.
        if per != PoolBlocks::default() {
            let more = if per.full_only() {
                PoolBlocks {
                    full: rank.most_blocks.full + 1,
                    ..rank.most_blocks
                }
            } else {
                per.times(rank.most_sequences + 1)
            };
            let more = kv_pool_bytes(&rc, i, more).unwrap();
            assert!(
                more > rank.kv_budget_bytes,
                "{name} rank {r}: one more fits"
            );
            assert_eq!(rank.sequence_bytes, kv_pool_bytes(&rc, i, per).unwrap());
        }
    }
    let binding = &plan.ranks[plan.binding_rank];
    assert_eq!(plan.blocks, binding.pool);
    if plan.blocks.full > 0 {
        assert_eq!(plan.tokens, Some(plan.blocks.full * 16));
    }
    if plan.ranks.iter().any(|r| r.state_bytes > 0) {
        assert!(plan.sequences <= i.arena.max_batch_size, "{name}");
    }
}

#[test]
fn stages_without_keys_and_values_do_not_bind_and_each_stage_has_its_own_pool() {
    // Nemotron-3 Nano at pp 8: some stages hold no attention layer; Gemma 3 1B at pp 13: some
    // hold sliding layers alone. Neither may leave the others without a pool.
    for (name, pp, gpu, context) in [
        ("nemotron-3-nano-30b-a3b", 8, 141 * GIB, 131_072),
        ("gemma-3-1b-it", 13, 4 * GIB, 512),
        ("llama-3.1-70b", 4, 80 * GIB, 32_768),
    ] {
        let c = config(name);
        let layout = ParallelLayout::new(1, 1, pp).unwrap();
        let i = inputs(&c, gpu, context);
        let plan = plan_gpu(&c, &layout, i).unwrap();
        assert!(plan.sequences > 0, "{name}");
        let with_kv: Vec<_> = plan
            .ranks
            .iter()
            .filter(|r| r.sequence_blocks != PoolBlocks::default())
            .collect();
        // The layouts hold the stages this test is about.
        let no_kv = plan.ranks.len() - with_kv.len();
        let no_full = with_kv
            .iter()
            .filter(|r| r.sequence_blocks.full == 0)
            .count();
        match name {
            "nemotron-3-nano-30b-a3b" => assert!(no_kv > 0, "{name}"),
            "gemma-3-1b-it" => assert!(no_full > 0, "{name}"),
            _ => assert_eq!(no_kv + no_full, 0, "{name}"),
        }
        assert_ne!(plan.blocks, PoolBlocks::default(), "{name}");
        assert!(
            with_kv.iter().all(|r| r.pool != PoolBlocks::default()),
            "{name}"
        );
        assert!(
            with_kv.iter().any(|r| r.rank == plan.binding_rank),
            "{name}"
        );
        every_rank_holds_the_plan(&c, &layout, &i, &plan, name);
    }
}

#[test]
fn kv_shared_layers_stay_with_their_source_and_bad_inputs_are_errors() {
    // Gemma 4 E2B: its last 20 layers read layers 13 and 14's keys and values.
    let c = config("gemma-4-e2b-it");
    let mut i = inputs(&c, 141 * GIB, 8192);
    i.weights_bytes_per_rank = Some(10 * GIB);
    let e = plan_gpu(&c, &ParallelLayout::new(1, 1, 2).unwrap(), i).unwrap_err();
    assert!(
        matches!(e, GpuPlanError::SharedKvAcrossStages { .. }),
        "{e}"
    );
    assert!(plan_gpu(&c, &ParallelLayout::new(1, 1, 1).unwrap(), i).is_ok());
    // Inputs the plan cannot be made at are errors, not panics.
    let c = config("llama-3.1-8b");
    let layout = ParallelLayout::new(1, 1, 1).unwrap();
    let mut i = inputs(&c, 141 * GIB, 8192);
    i.arena.kv_block_size = 0;
    assert!(matches!(
        plan_gpu(&c, &layout, i),
        Err(GpuPlanError::Inputs(_))
    ));
    let mut i = inputs(&c, 141 * GIB, 8192);
    i.reserve_bytes = u64::MAX - 1;
    assert!(matches!(
        plan_gpu(&c, &layout, i),
        Err(GpuPlanError::FixedPartsExceedGpu { .. })
    ));
    let mut i = inputs(&c, 141 * GIB, 8192);
    i.weights_bytes_per_rank = Some(u64::MAX);
    assert!(matches!(
        plan_gpu(&c, &layout, i),
        Err(GpuPlanError::FixedPartsExceedGpu { .. })
    ));
    // FP8 keys of a sparse-attention MLA model take a layout not planned here.
    let c = config("deepseek-v3.2");
    let mut i = inputs(&c, 141 * GIB, 8192);
    i.kv_dtype = KvDtype::Fp8;
    let e = plan_gpu(&c, &ParallelLayout::new(8, 1, 1).unwrap(), i).unwrap_err();
    assert!(e.to_string().contains("fp8_ds_mla"), "{e}");
}

#[test]
fn what_does_not_fit_is_an_error_with_its_figures() {
    let c = config("llama-3.1-70b");
    let layout = ParallelLayout::new(1, 1, 1).unwrap();
    let e = plan_gpu(&c, &layout, inputs(&c, 80 * GIB, 8192)).unwrap_err();
    assert!(matches!(e, GpuPlanError::FixedPartsExceedGpu { .. }), "{e}");
    assert!(e.to_string().contains("weights"), "{e}");
    // The weights fit, not one sequence of the context.
    let c = config("llama-3.1-8b");
    let weights = file_format_sizes(&c)
        .unwrap()
        .device_bytes(DEVICE_PAGE)
        .unwrap();
    let gpu = weights + 3 * GIB;
    let e = plan_gpu(&c, &layout, inputs(&c, gpu, 131_072)).unwrap_err();
    assert!(matches!(e, GpuPlanError::NoSequenceFits { .. }), "{e}");
    // A format whose bytes are not planned (bitsandbytes) asks for its weight bytes; given
    // them, the plan is made.
    let mut file: serde_json::Value =
        serde_json::from_str(arena_spec::models::find("qwen3-0.6b").unwrap().json).unwrap();
    file["quantization_config"] = serde_json::json!({"quant_method": "bitsandbytes"});
    let c = ModelConfig::from_json_str(&file.to_string(), "bnb.json").unwrap();
    let e = plan_gpu(&c, &layout, inputs(&c, 143 * GIB, 8192)).unwrap_err();
    assert!(e.to_string().contains("--weights-bytes"), "{e}");
    let mut given = inputs(&c, 143 * GIB, 8192);
    given.weights_bytes_per_rank = Some(97 * GIB);
    assert!(plan_gpu(&c, &layout, given).is_ok());
}

#[test]
fn fp8_keys_and_values_hold_twice_the_tokens() {
    let c = config("qwen3-0.6b");
    let layout = ParallelLayout::new(1, 1, 1).unwrap();
    let bf16 = plan_gpu(&c, &layout, inputs(&c, 16 * GIB, 8192)).unwrap();
    let mut i = inputs(&c, 16 * GIB, 8192);
    i.kv_dtype = KvDtype::Fp8;
    let fp8 = plan_gpu(&c, &layout, i).unwrap();
    // Within a page of rounding: twice the blocks.
    let (a, b) = (fp8.blocks.full, bf16.blocks.full);
    assert!(a.abs_diff(2 * b) <= 2, "{a} {b}");
}

/// DeepSeek-V3's multi-token-prediction layer, loaded as an engine speculating with it loads
/// it (`--mtp`): its decoder layer, embedding and head copies, `enorm`, `hnorm` and a 16-bit
/// `eh_proj` (vLLM's `deepseek_mtp.py`) take the plan's weights to the published
/// checkpoint's: its 163 files total 688,586,727,753 bytes, headers (about 91k tensor
/// entries) included, 15.4 GB more than the model without the layer. Its keys and values are
/// one full layer more in the pool; left out by default, and refused where the module is
/// not the DeepSeek-style one.
#[test]
fn mtp_layers_are_an_input_and_bring_the_weights_to_the_checkpoints() {
    use arena_spec::gpu_plan::GpuPlanError;
    let c = arena_spec::models::find("deepseek-v3")
        .unwrap()
        .config()
        .unwrap();
    assert_eq!(c.mtp_layers, 1);
    let plan = |mtp: bool| {
        let arena = BufferArenaInputs {
            max_seq_len: 4096,
            ..BufferArenaInputs::defaults_for(&c)
        };
        let inputs = GpuPlanInputs {
            mtp,
            ..GpuPlanInputs::new(1 << 50, arena)
        };
        plan_gpu(&c, &ParallelLayout::new(1, 1, 1).unwrap(), inputs).unwrap()
    };
    let (without, with) = (plan(false), plan(true));
    let (a, b) = (&without.ranks[0], &with.ranks[0]);
    assert_eq!((a.mtp_layers, b.mtp_layers), (0, 1));
    let checkpoint: u64 = 688_586_727_753;
    assert!(b.weights_exact_bytes < checkpoint);
    assert!(
        checkpoint - b.weights_exact_bytes < checkpoint / 50_000,
        "{b:?}"
    );
    assert!(checkpoint - a.weights_exact_bytes > 15_000_000_000);
    // One full (MLA) layer's keys more a token.
    let (ka, kb) = (&a.kv_layers[0], &b.kv_layers[0]);
    assert_eq!((ka.layers, kb.layers), (61, 62));
    assert_eq!(kb.bytes_per_token * 61, ka.bytes_per_token * 62);
    // Under pp only the last stage loads it.
    let inputs = GpuPlanInputs {
        mtp: true,
        ..GpuPlanInputs::new(1 << 50, BufferArenaInputs::defaults_for(&c))
    };
    let pp = plan_gpu(&c, &ParallelLayout::new(1, 1, 2).unwrap(), inputs).unwrap();
    assert_eq!(
        pp.ranks.iter().map(|r| r.mtp_layers).collect::<Vec<_>>(),
        [0, 1]
    );
    // Qwen3.5's MTP module is another: refused, not guessed.
    let q = arena_spec::models::find("qwen3.5-27b")
        .unwrap()
        .config()
        .unwrap();
    let e = plan_gpu(
        &q,
        &ParallelLayout::new(1, 1, 1).unwrap(),
        GpuPlanInputs {
            mtp: true,
            ..GpuPlanInputs::new(1 << 50, BufferArenaInputs::defaults_for(&q))
        },
    )
    .unwrap_err();
    assert!(matches!(e, GpuPlanError::Mtp { .. }), "{e}");
}

#[test]
fn a_layout_of_more_than_one_gpu_keeps_nccls_memory_beside_the_reserve() {
    use arena_spec::gpu_plan::{nccl_bytes, nccl_reserve, RESERVE_BYTES};
    let c = config("llama-3.1-8b");
    let plan = |tp: usize, pp: usize, nccl: Option<u64>| {
        let arena = BufferArenaInputs {
            max_seq_len: 8192,
            ..BufferArenaInputs::defaults_for(&c)
        };
        let inputs = GpuPlanInputs {
            nccl_bytes: nccl,
            ..GpuPlanInputs::new(141 * GIB, arena)
        };
        plan_gpu(&c, &ParallelLayout::new(tp, 1, pp).unwrap(), inputs).unwrap()
    };
    // Worked by hand from NCCL 2.26.2's source (`gpu_plan/reserve.rs` cites each line): 24
    // ring channels of a 10 MiB receiving and a 2 MiB sending buffer, 98 small allocations of
    // 2 MiB, and above two ranks NVLS's 25 set-up allocations of 2 MiB and 16 channels × 2 ×
    // 1 MiB a rank; a pipeline's 32 send/receive channels a peer.
    let mib = 1u64 << 20;
    let (ring, small) = (24 * 12 * mib, 98 * 2 * mib);
    let nvls = |n: u64| 50 * mib + n * 32 * mib;
    let pipeline = small + 32 * 12 * mib;
    for (tp, pp, want) in [
        (1, 1, 0),
        (2, 1, ring + small),
        (4, 1, ring + small + nvls(4)),
        (8, 1, ring + small + nvls(8)),
        (16, 1, ring + small + nvls(8)),
        (1, 2, pipeline),
        (2, 2, ring + small + pipeline),
    ] {
        let layout = ParallelLayout::new(tp, 1, pp).unwrap();
        assert_eq!(nccl_reserve(&layout), want, "tp {tp} pp {pp}");
        let p = plan(tp, pp, None);
        for r in &p.ranks {
            assert_eq!(r.nccl_bytes, want, "tp {tp} pp {pp}");
            assert_eq!(r.reserve_bytes, RESERVE_BYTES + want);
        }
    }
    // The tp 2 plan holds fewer blocks by NCCL's bytes; given none, as many as without it.
    let (with, without) = (plan(2, 1, None), plan(2, 1, Some(0)));
    assert!(with.blocks.full < without.blocks.full);
    let block = (without.kv_pool_bytes as f64 / without.blocks.full as f64) as u64;
    let fewer = (without.blocks.full - with.blocks.full) as u64;
    assert!(fewer * block <= nccl_bytes(2) + block && fewer * block + 2 * block >= nccl_bytes(2));
    // 484, 662 and 790 MiB, as the docs say.
    assert_eq!(
        [2, 4, 8].map(|n| nccl_bytes(n) / mib),
        [484, 662, 790],
        "the figures the docs quote"
    );
}

/// The step's CUDA graphs are kept beside the reserve: 3,200 bytes a kernel node of every
/// graph, in 2 MiB pages (`gpu_plan::graph_bytes`, measured); the pool holds what is left.
#[test]
fn cuda_graphs_keep_their_memory_beside_the_reserve() {
    use arena_spec::gpu_plan::{graph_bytes, DEVICE_PAGE, RESERVE_BYTES};
    let c = config("qwen3-0.6b");
    let plan = |graphs: usize, graph_nodes: usize| {
        let arena = BufferArenaInputs {
            max_seq_len: 8192,
            ..BufferArenaInputs::defaults_for(&c)
        };
        let inputs = GpuPlanInputs {
            graphs,
            graph_nodes,
            ..GpuPlanInputs::new(80 * GIB, arena)
        };
        plan_gpu(&c, &ParallelLayout::new(1, 1, 1).unwrap(), inputs).unwrap()
    };
    // The measured cases (`measurements/graph_memory.md`): predicted within a page of the
    // 26, 8 and 2 MiB measured.
    let mib = 1 << 20;
    assert_eq!(graph_bytes(16, 536), 28 * mib);
    assert_eq!(graph_bytes(5, 536), 10 * mib);
    assert_eq!(
        [graph_bytes(16, 42), graph_bytes(16, 48)],
        [4 * mib, 4 * mib]
    );
    assert_eq!([graph_bytes(1, 42), graph_bytes(0, 536)], [DEVICE_PAGE, 0]);
    let (eager, graphs) = (plan(0, 536), plan(16, 536));
    let (e, g) = (&eager.ranks[0], &graphs.ranks[0]);
    assert_eq!((e.graph_bytes, g.graph_bytes), (0, 28 * mib));
    assert_eq!(e.reserve_bytes, RESERVE_BYTES);
    assert_eq!(g.reserve_bytes, RESERVE_BYTES + 28 * mib);
    assert_eq!(e.kv_budget_bytes - g.kv_budget_bytes, 28 * mib);
    assert!(g.pool.full < e.pool.full);
}
