//! The const sizing path (`#[arena(const)]`) against the run-time one.

use arena_spec::models::SHIPPED;
use arena_spec::{BufferArenaInputs, BufferSizes, Levers};

const INPUTS: BufferArenaInputs = BufferArenaInputs::AT_128K;

#[test]
fn both_paths_give_identical_sizes_for_every_shipped_model() {
    for m in SHIPPED {
        let mut config = m.config_with_levers(Levers::default()).unwrap();
        for levers in [Levers::default(), Levers::ALL_ON] {
            config.levers = levers;
            let run_time = BufferSizes::try_from_inputs(&config, &INPUTS).unwrap();
            let konst = BufferSizes::const_from_inputs(&config, &INPUTS);
            assert_eq!(konst, run_time, "{}", m.name);
            assert_eq!(konst.total_bytes(), run_time.total_bytes());
        }
    }
}

// Sized at compile time: a shipped model's const config through the const path.
const NEXT_AT_8K: BufferSizes =
    BufferSizes::const_from_inputs(&arena_spec::models::consts::QWEN3_NEXT_80B_A3B, &INPUTS);
arena_runtime::assert_fits!(
    "qwen3-next-80b-a3b at M = 8192",
    NEXT_AT_8K,
    budget = 3 << 30
);

#[test]
fn a_const_sizes_what_the_run_time_path_sizes() {
    let config = arena_spec::models::find("qwen3-next-80b-a3b")
        .unwrap()
        .config_with_levers(Levers::default())
        .unwrap();
    assert_eq!(
        NEXT_AT_8K,
        BufferSizes::try_from_inputs(&config, &INPUTS).unwrap()
    );
    let named: Vec<(&str, usize)> = NEXT_AT_8K
        .buffers()
        .iter()
        .map(|b| (b.decl.name, b.bytes))
        .collect();
    assert_eq!(NEXT_AT_8K.named_sizes().to_vec(), named);
    let with_tracking: Vec<(&str, usize, bool)> = NEXT_AT_8K
        .buffers()
        .iter()
        .map(|b| (b.decl.name, b.bytes, b.decl.tracked))
        .collect();
    assert_eq!(NEXT_AT_8K.sizes_with_tracking().to_vec(), with_tracking);
    assert!(
        with_tracking.iter().any(|b| !b.2),
        "the engine arena has untracked buffers"
    );
}

/// `const_bytes` is a layout's bytes as a plain `usize` in one call: the same number as the
/// run-time layout and as the `Result` of the const `bytes`.
#[test]
fn a_regions_const_bytes_is_its_layout_total() {
    use arena_spec::arena::regions::{DecodeMeta, DECODE_META_MAX_ROWS};
    const META: usize = DecodeMeta::const_bytes(DECODE_META_MAX_ROWS);
    let layout = DecodeMeta::layout(DECODE_META_MAX_ROWS).unwrap();
    assert_eq!(META, layout.total_bytes);
    assert_eq!(DecodeMeta::bytes(DECODE_META_MAX_ROWS), Ok(META));
}

/// The const path's reuse slab is the run-time plan's: the same footprint and lower bound
/// on every shipped model, levers off and on, at the budget inputs and at M = 64.
#[test]
fn the_const_reuse_slab_is_the_run_time_plan() {
    use arena_runtime::Arena;
    for m in SHIPPED {
        let mut config = m.config_with_levers(Levers::default()).unwrap();
        for levers in [Levers::default(), Levers::ALL_ON] {
            config.levers = levers;
            for inputs in [
                INPUTS,
                BufferArenaInputs {
                    max_batch_tokens: 64,
                    ..INPUTS
                },
            ] {
                let sizes = BufferSizes::try_from_inputs(&config, &inputs).unwrap();
                let plan = arena_spec::BufferArena::reuse_plan(&sizes).unwrap();
                let konst = BufferSizes::const_from_inputs(&config, &inputs).reuse_bytes();
                assert_eq!(
                    (konst.footprint, konst.lower_bound),
                    (plan.footprint, plan.lower_bound),
                    "{}",
                    m.name
                );
                let fullest = konst.fullest_phase.expect("the engine arena has phases");
                assert!(<arena_spec::BufferArena as Arena>::PHASES.contains(&fullest));
            }
        }
    }
}
