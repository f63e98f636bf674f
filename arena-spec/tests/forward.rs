//! A real decoder forward pass in the engine's `BufferArena` (`examples/forward`), on the
//! host, against transformers' outputs on the same weights (committed by
//! `examples/forward/reference.py`): Qwen3-0.6B's shapes (dense, q/k norm, tied embeddings)
//! and Qwen3-30B-A3B's (128 experts, top 8), each cut to 2 layers, Qwen3.5-27B's first 4
//! layers at narrow widths (gated delta-net and gated attention, the delta-net's states in
//! `StateCache` slots) and Qwen3-0.6B at all 28 layers; a prefill of 16 tokens and 4 decode
//! steps. Each but the last runs twice, in a plain slab and in a reuse one (phases sharing
//! bytes), with every phase poisoned as it begins: the logits must be bit-identical, which is
//! what proves the phase declarations right for this schedule. Then sequences of different
//! lengths are served together through the scheduler (`examples/forward/serve.rs`), paged in a
//! KV pool too small to hold them all at once: each position equals the one run's.

#[allow(dead_code)]
#[path = "../examples/forward/compare.rs"]
mod compare;
#[allow(dead_code)]
#[path = "../examples/forward/delta_net.rs"]
mod delta_net;
// `serve.rs` reaches the GPU backend where the feature is on.
#[cfg(feature = "cuda")]
#[allow(dead_code)]
#[path = "../examples/forward/gpu.rs"]
mod gpu;
#[cfg(feature = "cuda")]
#[allow(dead_code)]
#[path = "../examples/forward/gpu_delta.rs"]
mod gpu_delta;
#[cfg(feature = "cuda")]
#[allow(dead_code)]
#[path = "../examples/forward/gpu_launch.rs"]
mod gpu_launch;
#[cfg(feature = "cuda")]
#[allow(dead_code)]
#[path = "../examples/forward/gpu_setup.rs"]
mod gpu_setup;
#[allow(dead_code)]
#[path = "../examples/forward/host_comm.rs"]
mod host_comm;
#[allow(dead_code)]
#[path = "../examples/forward/host_io.rs"]
mod host_io;
#[allow(dead_code)]
#[path = "../examples/forward/host_math.rs"]
mod host_math;
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
#[path = "../examples/forward/serve.rs"]
mod serve;
#[allow(dead_code)]
#[path = "../examples/forward/step.rs"]
mod step;
#[allow(dead_code)]
#[path = "../examples/forward/step_delta.rs"]
mod step_delta;
#[allow(dead_code)]
#[path = "../examples/forward/weights.rs"]
mod weights;

use arena_runtime::{AllocOptions, HostDevice, Live};
use arena_spec::serving::Limits;
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
/// differently). `serve`: sequences served together within those limits (`served`); `tp`: the step over two
/// tensor-parallel ranks too (`split`).
fn check(model: &str, routing_flips: usize, serve: Option<(Limits, &[(usize, usize)])>, tp: bool) {
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
    if let Some((limits, seqs)) = serve {
        served(&run, &slab, limits, seqs);
    }
    if tp {
        split(&run, &slab);
    }
}

/// The step over two tensor-parallel ranks on the host (`Run::outputs_tp`: each rank's share
/// of every weight loaded from the checkpoint as the loader cuts it, its own arena and KV
/// pool, the partial sums of the O and down projections and the embedding all-reduced between
/// the ranks' threads): every position's argmax is the whole step's. Not bit-identical: each
/// rank rounds its partial sum to bf16 before the two are added, as an engine's bf16
/// all-reduce does, where the whole step rounds the full sum once — bf16 noise of the size
/// the whole step shows against transformers (mean |Δ| 0.010–0.012 a position over all
/// 151,936 logits, against 0.013 over the reference's probes). Over every logit rather than
/// 256 probes its tail reaches further (measured: at most 3 logits a position beyond
/// `run::tolerance`, the largest 0.073), so the bound is every logit within twice that
/// tolerance and a position's mean within half of it at 0 (1/32).
fn split(run: &run::Run, whole: &run::Outputs) {
    let model = &run.reference.model;
    let tp = run.outputs_tp(2, AllocOptions::reuse(), true).unwrap();
    let (mut worst, mut worst_mean) = (0f32, 0f32);
    for (p, (a, b)) in tp.logits.iter().zip(&whole.logits).enumerate() {
        assert_eq!(a.len(), b.len(), "{model} position {p}: the ranks' logits");
        let argmax = |l: &[f32]| (0..l.len()).max_by(|&i, &j| l[i].total_cmp(&l[j]));
        assert_eq!(argmax(a), argmax(b), "{model} position {p}: argmax at tp 2");
        for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x - y).abs() <= 2.0 * run::tolerance(y),
                "{model} position {p}: logit {i} is {x} at tp 2, {y} whole"
            );
            worst = worst.max((x - y).abs());
        }
        let mean = a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f32>() / a.len() as f32;
        assert!(
            mean <= run::tolerance(0.0) / 2.0,
            "{model} position {p}: mean |Δ| {mean}"
        );
        worst_mean = worst_mean.max(mean);
    }
    println!(
        "{model} at tp 2 against the whole step, over every logit: largest |Δ| {worst}, \
         largest mean |Δ| a position {worst_mean}"
    );
}

/// `seqs` (`(prompt, len)`: prefixes of the reference's tokens) served together in a reuse
/// slab, every phase poisoned, a KV pool of `limits.blocks` blocks: each sequence's logits
/// at each position bit-identical to the one sequence's run at that position (the host's
/// kernels compute each row alone, so chunking, packing and paging change no bit; what a
/// wrong slot, block table or sequence bound would change).
fn served(run: &run::Run, alone: &run::Outputs, limits: Limits, seqs: &[(usize, usize)]) {
    let model = &run.reference.model;
    let ops = kernels::HostOps::new(&run.decoder);
    let served = run
        .serve_on(
            HostDevice::new(),
            ops,
            AllocOptions::reuse(),
            limits,
            seqs,
            false,
        )
        .unwrap();
    for (i, (logits, &(_, len))) in served.logits.iter().zip(seqs).enumerate() {
        assert_eq!(logits.len(), len, "{model}: sequence {i}'s positions");
        for (p, row) in logits.iter().enumerate() {
            let same = row
                .iter()
                .zip(&alone.logits[p])
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(
                same,
                "{model}: sequence {i} position {p} differs from the run alone"
            );
        }
    }
    // More sequences than run at once, so some waited for a slot or a block and reused the
    // blocks of one that finished.
    let blocks: usize = seqs
        .iter()
        .map(|&(_, len)| len.div_ceil(limits.block_tokens))
        .sum();
    assert!(blocks > limits.blocks && served.widest > 1 && served.widest <= limits.max_batch_size);
    println!(
        "{model}: {} sequences served in {} steps, at most {} a step, {} blocks reused from {}",
        seqs.len(),
        served.steps,
        served.widest,
        blocks,
        limits.blocks
    );
}

#[test]
fn a_dense_qwen3_step_in_the_arena_matches_transformers_and_shares_bytes_safely() {
    // Blocks of 4 tokens: tables of several blocks, 9 blocks wanted from a pool of 5.
    let limits = Limits {
        max_batch_tokens: 16,
        max_batch_size: 3,
        block_tokens: 4,
        blocks: 5,
        state_slots: false,
    };
    let seqs = [(6, 9), (5, 8), (3, 6), (4, 7)];
    check("qwen3-0.6b-2l", 0, Some((limits, &seqs)), true);
}

// The binary's longest test (a 2.4 GB checkpoint written and loaded twice), named to sort
// first: libtest starts tests in name order, so the others run beside it, not after it.
#[test]
fn a_128_expert_moe_qwen3_step_in_the_arena_matches_transformers_and_shares_bytes_safely() {
    // Served together only in the dense test: the paging and the step metadata are the
    // model's kind's to nothing, and a MoE model's rows of several sequences take the path
    // a prefill's rows take (this test's runs).
    check("qwen3-30b-a3b-2l", 2, None, false);
}

#[test]
fn a_hybrid_qwen3_5_step_carries_its_states_in_state_cache_slots_and_matches_transformers() {
    // Qwen3.5-27B's first 4 layers (3 gated delta-net, 1 gated attention) at narrow widths
    // (`model::narrow`): the conv and recurrent states in the `StateCache`, a slot a
    // sequence. Served together: prefills chunked over steps (the state carried between
    // chunks), 4 sequences in 3 slots (a slot reused after its sequence finished, its state
    // started afresh), blocks of 4 tokens from a pool of 6.
    let limits = Limits {
        max_batch_tokens: 8,
        max_batch_size: 3,
        block_tokens: 4,
        blocks: 6,
        state_slots: true,
    };
    let seqs = [(7, 11), (5, 8), (3, 6), (4, 9)];
    check("qwen3.5-27b-narrow-4l", 0, Some((limits, &seqs)), false);
    // Served without slots, the sequences' states would overwrite one another: refused.
    let model = "qwen3.5-27b-narrow-4l";
    let run = run::Run::new(model, None, &reference(model)).unwrap();
    let ops = kernels::HostOps::new(&run.decoder);
    let no_slots = Limits {
        state_slots: false,
        ..limits
    };
    let refused = run
        .serve_on(
            HostDevice::new(),
            ops,
            AllocOptions::default(),
            no_slots,
            &seqs,
            false,
        )
        .err()
        .map(|e| e.to_string());
    assert!(
        refused
            .as_deref()
            .is_some_and(|e| e.contains("holds no state slot")),
        "{refused:?}"
    );
}

/// All 28 layers of Qwen3-0.6B, in a reuse slab: held to transformers within twice the
/// reference's own bf16 noise where that is more than the 2-layer tolerance
/// (`run::position_tolerance`; the reference records it a position), which this depth needs:
/// the same outputs fail against the reference without its noise.
#[test]
fn a_full_depth_qwen3_step_matches_transformers_within_its_own_rounding_noise() {
    let model = "qwen3-0.6b-28l";
    let run = run::Run::new(model, None, &reference(model)).unwrap();
    let alone = run.outputs(AllocOptions::reuse(), true).unwrap();
    let agreement = run.check(&alone, 0).unwrap();
    println!("{model}: {agreement:?}");
    let mut plain = run.reference.clone();
    for p in &mut plain.positions {
        assert!(
            p.noise.take().is_some(),
            "{model}: the reference records its noise"
        );
    }
    assert!(
        run::check(&plain, &alone, 0).is_err(),
        "{model}: within the 2-layer tolerance alone, the noise rule is not exercised"
    );
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
