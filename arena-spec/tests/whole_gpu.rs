//! The whole-GPU plan (`gpu_plan::plan_gpu`) on the host: each rank's slabs add up to its GPU,
//! the pool is the largest that fits (one block, or one sequence where sliding layers are
//! planned by sequence, more does not), the binding rank is the tightest, and a hybrid
//! model's sequences stop at its state slots. `tests/gpu_plan.rs` allocates the same plans on
//! a GPU.

use arena_spec::gpu_plan::{
    kv_pool_bytes, on_device, plan_gpu, GpuPlanError, GpuPlanInputs, PoolBlocks,
};
use arena_spec::weights::weight_bytes;
use arena_spec::{ArenaInputs, KvDtype, ModelConfig, ParallelLayout};

mod shipped;
use shipped::config;

const GIB: u64 = 1 << 30;

fn inputs(c: &ModelConfig, gpu: u64, context: usize) -> GpuPlanInputs {
    GpuPlanInputs {
        gpu_bytes: gpu,
        reserve_bytes: GIB,
        arena: ArenaInputs {
            max_seq_len: context,
            ..ArenaInputs::defaults_for(c)
        },
        shared_arena: true,
        recurrent_f32: false,
        kv_dtype: KvDtype::Bf16,
        weights_bytes_per_rank: None,
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
            // Its parameters are not counted: a stand-in for its weights.
            i.weights_bytes_per_rank = Some(80 * GIB);
        }
        let plan = plan_gpu(&c, &layout, i).unwrap();
        assert_eq!(plan.ranks.len(), tp * pp);
        for (r, rank) in plan.ranks.iter().enumerate() {
            let rc = c.shard(&layout.rank(r).unwrap()).unwrap();
            let weights = i
                .weights_bytes_per_rank
                .unwrap_or_else(|| weight_bytes(&rc).unwrap());
            assert_eq!(rank.weights_bytes, on_device(weights), "{name}");
            let fixed =
                rank.weights_bytes + rank.arena_bytes + rank.state_bytes + rank.reserve_bytes;
            assert_eq!(fixed + rank.kv_budget_bytes, i.gpu_bytes, "{name} rank {r}");
            let pool = kv_pool_bytes(&rc, &i, rank.blocks).unwrap();
            assert!(pool <= rank.kv_budget_bytes, "{name} rank {r}");
            let per = rank.sequence_blocks;
            let more = if per.full_only() {
                PoolBlocks {
                    full: rank.blocks.full + 1,
                    ..rank.blocks
                }
            } else {
                per.times(rank.sequences + 1)
            };
            let more = kv_pool_bytes(&rc, &i, more).unwrap();
            assert!(
                more > rank.kv_budget_bytes,
                "{name} rank {r}: one more fits"
            );
            assert!(rank.blocks.full >= rank.sequences * per.full, "{name}");
            assert_eq!(rank.sequence_bytes, kv_pool_bytes(&rc, &i, per).unwrap());
        }
        // The pool every rank allocates is the binding rank's, the tightest.
        let binding = &plan.ranks[plan.binding_rank];
        assert!(plan.ranks.iter().all(|r| r.sequences >= binding.sequences));
        assert_eq!(plan.blocks, binding.blocks);
        if plan.blocks.full > 0 {
            assert_eq!(plan.tokens, Some(plan.blocks.full * 16));
        }
        if binding.state_bytes > 0 {
            assert!(plan.sequences <= i.arena.max_batch_size, "{name}");
        } else {
            assert_eq!(plan.sequences, binding.sequences, "{name}");
        }
    }
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
    let weights = on_device(weight_bytes(&c).unwrap());
    let gpu = weights + 3 * GIB;
    let e = plan_gpu(&c, &layout, inputs(&c, gpu, 131_072)).unwrap_err();
    assert!(matches!(e, GpuPlanError::NoSequenceFits { .. }), "{e}");
    // A family whose parameters are not counted asks for its weight bytes.
    let c = config("deepseek-v4-flash");
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
