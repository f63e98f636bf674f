//! A real decoder forward pass in the engine's `BufferArena` (`examples/forward`), on the
//! host, against transformers' outputs on the same weights (committed by
//! `examples/forward/reference.py`): Qwen3-0.6B's shapes (dense, q/k norm, tied embeddings)
//! and Qwen3-30B-A3B's (128 experts, top 8), each cut to 2 layers, a prefill of 16 tokens and
//! 4 decode steps. Each runs twice, in a plain slab and in a reuse one (phases sharing
//! bytes), with every phase poisoned as it begins: the logits must be bit-identical, which is
//! what proves the phase declarations right for this schedule.

#[allow(dead_code)]
#[path = "../examples/forward/compare.rs"]
mod compare;
#[allow(dead_code)]
#[path = "../examples/forward/kernels.rs"]
mod kernels;
#[allow(dead_code)]
#[path = "../examples/forward/model.rs"]
mod model;
#[allow(dead_code)]
#[path = "../examples/forward/ops.rs"]
mod ops;
#[allow(dead_code)]
#[path = "../examples/forward/params.rs"]
mod params;
#[allow(dead_code)]
#[path = "../examples/forward/run.rs"]
mod run;
#[allow(dead_code)]
#[path = "../examples/forward/step.rs"]
mod step;
#[allow(dead_code)]
#[path = "../examples/forward/weights.rs"]
mod weights;

use arena_runtime::{AllocOptions, HostDevice, Live};
use arena_spec::BufferArena;
use std::path::Path;

fn reference(model: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("examples/forward/reference/{model}.cpu.json"))
}

/// Bytes that buffers of disjoint phases reuse in the reuse slab at these inputs.
fn reuse_bytes(run: &run::Run) -> usize {
    let sizes = run.inputs().sizes(&run.decoder.config).unwrap();
    let arena =
        BufferArena::allocate_with(HostDevice::new(), &sizes, AllocOptions::reuse()).unwrap();
    let p = arena.placements();
    let mut reuse = 0;
    for (i, a) in p.iter().enumerate() {
        for b in &p[i + 1..] {
            if let (Live::Phases { .. }, Live::Phases { .. }) = (a.decl.live, b.decl.live) {
                let (start, end) = (
                    a.addr.max(b.addr),
                    (a.addr + a.bytes as u64).min(b.addr + b.bytes as u64),
                );
                if a.bytes > 0 && b.bytes > 0 && start < end {
                    reuse += (end - start) as usize;
                }
            }
        }
    }
    arena.release().unwrap();
    reuse
}

/// Runs `model` plain and reuse, poisoned; checks the two bit-identical, the reuse slab
/// reusing bytes, and the logits held to the reference (`Run::check`: the argmax everywhere,
/// every probed logit within the tolerance except at up to `routing_flips` positions routed
/// differently).
fn check(model: &str, routing_flips: usize) {
    let run = run::Run::new(model, None, &reference(model)).unwrap();
    let slab = run.outputs(AllocOptions::default(), true).unwrap();
    let reuse = run.outputs(AllocOptions::reuse(), true).unwrap();
    let bits = |o: &run::Outputs| {
        o.logits
            .iter()
            .flatten()
            .map(|x| x.to_bits())
            .collect::<Vec<_>>()
    };
    assert!(
        bits(&slab) == bits(&reuse),
        "{model}: reuse and plain logits differ"
    );
    assert_eq!(slab.routes, reuse.routes);
    let reused = reuse_bytes(&run);
    assert!(
        reused > 0,
        "{model}: the reuse slab reuses no bytes: the comparison proves nothing"
    );
    let agreement = run.check(&slab, routing_flips).unwrap();
    println!("{model}: {agreement:?}");
}

#[test]
fn a_dense_qwen3_step_in_the_arena_matches_transformers_and_shares_bytes_safely() {
    check("qwen3-0.6b-2l", 0);
}

#[test]
fn a_moe_qwen3_step_in_the_arena_matches_transformers_and_shares_bytes_safely() {
    check("qwen3-30b-a3b-2l", 2);
}

#[test]
fn the_scratch_layout_is_the_one_the_arena_was_sized_with() {
    let run = run::Run::new("qwen3-0.6b-2l", None, &reference("qwen3-0.6b-2l")).unwrap();
    let inputs = run.inputs();
    let layout = inputs.scratch_layout(&run.decoder.config).unwrap();
    assert_eq!(
        layout.total_bytes,
        inputs.sizes(&run.decoder.config).unwrap().scratch
    );
}
