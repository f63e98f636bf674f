//! The `scratch_by_format` lever (chosen here): off, the seeds' arena as the seeds size it;
//! on, the quantized paths' activation scratch only where the checkpoint's format writes it
//! (its `quantization_config`), and the whole-GPU plan gains what it frees.

use arena_spec::gpu_plan::{plan_gpu, GpuPlanInputs};
use arena_spec::{BufferArenaInputs, BufferSizes, Levers, ModelConfig, ParallelLayout};

use crate::shipped;
use shipped::config;

fn with_lever(name: &str) -> ModelConfig {
    let mut c = config(name);
    c.levers.scratch_by_format = true;
    c
}

fn sizes(c: &ModelConfig) -> BufferSizes {
    BufferSizes::from_inputs(c, &BufferArenaInputs::defaults_for(c))
}

#[test]
fn a_16_bit_checkpoint_keeps_no_quantized_scratch_and_an_fp8_one_keeps_its_own() {
    // qwen3-0.6b: no quantization_config.
    let (off, on) = (
        sizes(&config("qwen3-0.6b")),
        sizes(&with_lever("qwen3-0.6b")),
    );
    for (name, was, is) in [
        ("ffn_act_q8", off.ffn_act_q8, on.ffn_act_q8),
        ("ffn_act_a", off.ffn_act_a, on.ffn_act_a),
        ("ffn_act_scale", off.ffn_act_scale, on.ffn_act_scale),
        ("fp8_act", off.fp8_act, on.fp8_act),
        ("fp8_act_scale", off.fp8_act_scale, on.fp8_act_scale),
        (
            "fp8_act_scale_kmajor",
            off.fp8_act_scale_kmajor,
            on.fp8_act_scale_kmajor,
        ),
    ] {
        assert!(was > 0 && is == 0, "{name}: {was} → {is}");
    }
    assert_eq!(off.ffn_gate_up_fused, on.ffn_gate_up_fused);
    // deepseek-v3: block-FP8 weights read FP8 activations; only the Q4_K MMQ scratch goes.
    let (off, on) = (
        sizes(&config("deepseek-v3")),
        sizes(&with_lever("deepseek-v3")),
    );
    assert_eq!(
        (off.fp8_act, off.moe_fp8_scratch),
        (on.fp8_act, on.moe_fp8_scratch)
    );
    assert!(on.fp8_act > 0 && on.moe_fp8_scratch > 0);
    assert_eq!(on.ffn_act_q8, 0);
    // The lever's default is the seeds'.
    assert!(!Levers::default().scratch_by_format);
}

#[test]
fn the_whole_gpu_plan_gives_what_the_lever_frees_to_the_pool() {
    let plan = |c: &ModelConfig| {
        let arena = BufferArenaInputs {
            max_seq_len: 8192,
            ..BufferArenaInputs::defaults_for(c)
        };
        let inputs = GpuPlanInputs::new(24 << 30, arena);
        plan_gpu(c, &ParallelLayout::new(1, 1, 1).unwrap(), inputs).unwrap()
    };
    let (off, on) = (
        plan(&config("llama-3.1-8b")),
        plan(&with_lever("llama-3.1-8b")),
    );
    let freed = off.ranks[0].arena_bytes - on.ranks[0].arena_bytes;
    assert!(freed > 250 << 20, "{freed}");
    assert_eq!(
        on.ranks[0].kv_budget_bytes - off.ranks[0].kv_budget_bytes,
        freed
    );
    assert!(on.blocks.full > off.blocks.full);
}
