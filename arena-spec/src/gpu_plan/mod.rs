//! The whole-GPU plan: what one model needs on each GPU of a layout, planned from its config
//! alone — weights, the activation arena, the sequence-state cache and the reserve — and the
//! KV block pool in what is left: how many blocks, tokens and sequences at a context length,
//! per rank, and the rank that binds.
//!
//! Every allocation is planned as the device takes it: one slab each (the six weight arenas
//! of [`crate::weights::WeightsSizes`], or one slab of weights the caller sizes; the arena,
//! the state cache, the KV pool), rounded up to the 2 MiB page `cudaMalloc` takes large
//! allocations in (`cuMemGetAllocationGranularity`, measured on the H200: [`DEVICE_PAGE`],
//! `arena-spec/measurements/gpu_plan.md`). What the plan does not size — the CUDA context,
//! the cuBLAS workspace — is the reserve, a number the caller passes
//! ([`GpuPlanInputs::reserve_bytes`]; the CLI's default is measured and cited where it is
//! defined), and beside it NCCL's buffers on a layout of more than one GPU
//! ([`GpuPlanInputs::nccl_bytes`], by default [`nccl_reserve`]) and what the step's CUDA
//! graphs take ([`GpuPlanInputs::graphs`], [`graph_bytes`]).
//!
//! ```
//! use arena_spec::gpu_plan::{plan_gpu, GpuPlanInputs};
//! use arena_spec::{models, BufferArenaInputs, KvDtype, KvPoolSizes, ParallelLayout};
//!
//! let config = models::find("qwen3-0.6b").unwrap().config()?;
//! // The context a sequence is planned at is the arena's `max_seq_len`; the measured
//! // reserve, BF16 keys and values, the weights in the checkpoint's format by default.
//! let arena = BufferArenaInputs { max_seq_len: 32_768, ..BufferArenaInputs::defaults_for(&config) };
//! let inputs = GpuPlanInputs { reuse_arena: true, ..GpuPlanInputs::new(24 << 30, arena) };
//! let plan = plan_gpu(&config, &ParallelLayout::new(1, 1, 1)?, inputs)?;
//! let rank = &plan.ranks[0];
//! assert!(rank.weights_bytes + rank.arena_bytes + rank.reserve_bytes < 24 << 30);
//! assert_eq!(plan.tokens, Some(plan.blocks.full * 16));
//! assert_eq!(plan.sequences, plan.blocks.full / (32_768 / 16));
//!
//! // The pool it plans; `KvPool::allocate(device, &sizes)` allocates it on the engine's GPU.
//! let pool = plan.ranks[0].pool; // each rank's own blocks
//! let sizes = KvPoolSizes::from_inputs(&config, &pool.inputs(16, KvDtype::Bf16));
//! assert_eq!(sizes.total_bytes(), pool.full * 28 * 16 * (2 * 8 * 128 * 2)); // 28 layers, 8 kv heads
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod blocks;
mod error;
mod figures;
mod reserve;
pub use blocks::{kv_pool_bytes, pool_sizes, PoolBlocks};
pub use error::GpuPlanError;
pub use figures::{kv_layer_figures, state_figures, KvLayerFigures, StateFigures};
pub use reserve::{
    graph_bytes, nccl_bytes, nccl_reserve, on_device, DEVICE_PAGE, GRAPH_NODE_BYTES, GRAPH_SOURCE,
    NCCL_PIPELINE_BYTES, NCCL_SOURCE, RESERVE_BYTES, RESERVE_SOURCE, UNALLOCATABLE_TAIL,
};

use crate::arena::{BufferArena, BufferArenaInputs};
use crate::config::KvLayer;
use crate::config::{ModelConfig, Mxfp4Backend, StateDtype, TowerKind};
use crate::kv::{KvDtype, KvPool};
use crate::parallel::{ParallelLayout, Rank};
use crate::state::{StateCache, StateCacheSizes};
use crate::weights::WeightsSizes;
use arena_runtime::{AllocOptions, Arena, SizeError};

/// What the plan is asked for.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct GpuPlanInputs {
    /// The memory of one GPU, in bytes: its total as the driver reports it
    /// (`cuMemGetInfo`'s total, what `arena gpu-plan --device` reads: 143,155 MiB on an H200, which
    /// is sold as 141 GB), not what is free.
    pub gpu_bytes: u64,
    /// Bytes kept on every GPU for what the plan does not size: the CUDA context and the
    /// cuBLAS workspace ([`RESERVE_BYTES`]), the engine's kernels; NCCL's buffers are
    /// [`Self::nccl_bytes`], kept beside it.
    pub reserve_bytes: u64,
    /// NCCL's memory on every rank, beside the reserve; `None`: [`nccl_reserve`] for the
    /// layout planned (0 on one GPU).
    pub nccl_bytes: Option<u64>,
    /// The CUDA graphs of the step the engine captures, one a batch size (vLLM's
    /// `cudagraph_capture_sizes`), each of [`Self::graph_nodes`] kernel nodes: their memory
    /// ([`graph_bytes`]) is kept beside the reserve. A count, not the sizes: what a graph
    /// takes grows with its nodes, not its batch size (measured). 0 by default: an engine
    /// that runs eagerly.
    pub graphs: usize,
    /// The kernel nodes of one captured step: the kernels and copies the engine launches in
    /// one decode step (the forward example's Qwen3 step: 19 a layer and 4 more).
    pub graph_nodes: usize,
    /// The activation arena's inputs, which the rest of the plan reads too: `max_seq_len` is
    /// the context a sequence is planned at (one figure, so the arena's block tables and the
    /// pool cannot disagree), `kv_block_size` the pool's block, `max_batch_size` the state
    /// cache's sequence slots, `max_batch_tokens` the step in flight a sliding window keeps.
    pub arena: BufferArenaInputs,
    /// The activation arena as one reuse slab (buffers of disjoint phases reuse bytes)
    /// rather than one plain slab.
    pub reuse_arena: bool,
    /// The GDN / Mamba-2 recurrent states' dtype where the engine overrides the file's;
    /// `None`: the file's, as the reference engine reads it
    /// ([`ModelConfig::recurrent_state_dtype`]: Nemotron-H and Qwen3.5 in FP32).
    pub state_dtype: Option<StateDtype>,
    /// The element type of the cached keys and values.
    pub kv_dtype: KvDtype,
    /// The MoE backend the engine runs MXFP4 experts on, which pads them
    /// ([`Mxfp4Backend`]; vLLM's default on an H100/H200 is Triton, on an A100 Marlin).
    /// Read for MXFP4 checkpoints only.
    pub mxfp4_backend: Mxfp4Backend,
    /// Load the checkpoint's multi-token-prediction layers, as an engine that speculates
    /// with them does: their weights on the last stage's ranks and their keys and values in
    /// the pool ([`ModelConfig::mtp_module`]; DeepSeek-style modules only, another is
    /// refused). Off: they are left out, as an engine without MTP speculation leaves them.
    /// With [`Self::weights_bytes_per_rank`] the given bytes stand for every weight, the draft
    /// module's included; only its keys and values are added.
    pub mtp: bool,
    /// Plan the text model alone, without the vision and audio towers a multimodal file
    /// carries ([`ModelConfig::towers`]). Off (the default): the towers' weights are loaded
    /// whole on every rank of the first pipeline stage, as an engine serving the file's
    /// images or audio loads them (vLLM builds the whole model; its default
    /// `mm_encoder_tp_mode="weights"` splits the towers' linears over tp, which keeps less
    /// on a rank than this, its `"data"` mode as much). With
    /// [`Self::weights_bytes_per_rank`] the given bytes stand for every weight, the towers'
    /// included.
    pub text_only: bool,
    /// One rank's weight bytes, where the caller knows them (one slab); `None`: the rank's
    /// weights in the checkpoint's format, the six weight arenas a slab each
    /// ([`crate::weights::file_format_sizes`], [`crate::weights::WeightsSizes::device_bytes`]).
    pub weights_bytes_per_rank: Option<u64>,
}

impl GpuPlanInputs {
    /// A GPU of `gpu_bytes` for the arena `arena` sizes (its `max_seq_len` the context),
    /// with the measured reserve ([`RESERVE_BYTES`]), the arena as a plain slab, recurrent
    /// states in the file's dtype, keys and values in the model's, and the weights from the
    /// config; set
    /// the fields to change any of these.
    pub const fn new(gpu_bytes: u64, arena: BufferArenaInputs) -> Self {
        GpuPlanInputs {
            gpu_bytes,
            reserve_bytes: RESERVE_BYTES,
            nccl_bytes: None,
            graphs: 0,
            graph_nodes: 0,
            arena,
            reuse_arena: false,
            state_dtype: None,
            mxfp4_backend: Mxfp4Backend::Triton,
            mtp: false,
            text_only: false,
            kv_dtype: KvDtype::Bf16,
            weights_bytes_per_rank: None,
        }
    }
}

/// One GPU's plan. Every `*_bytes` figure is as the device takes it (each slab rounded up to
/// [`DEVICE_PAGE`]); the `*_exact_bytes` figures are the same slabs before that rounding.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RankPlan {
    /// The rank's index in the layout.
    pub rank: usize,
    /// Device bytes of the weights: the six weight arenas' slabs (or the given bytes' one
    /// slab), each rounded up to the page.
    pub weights_bytes: u64,
    pub weights_exact_bytes: u64,
    /// The vision and audio towers' weights on this rank, a slab of their own within
    /// `weights_bytes` (exact bytes; 0 where they are not loaded: [`GpuPlanInputs::text_only`],
    /// a rank past the first stage, a text-only file, or given weight bytes).
    pub towers_bytes: u64,
    /// Device bytes of the activation arena's slab (reuse or plain), rounded up to the page.
    pub arena_bytes: u64,
    pub arena_exact_bytes: u64,
    /// Device bytes of the sequence-state cache's slab, rounded up to the page.
    pub state_bytes: u64,
    pub state_exact_bytes: u64,
    /// The reserve kept on this GPU, not a slab: [`GpuPlanInputs::reserve_bytes`], NCCL's
    /// `nccl_bytes` and the CUDA graphs' `graph_bytes`.
    pub reserve_bytes: u64,
    /// NCCL's part of `reserve_bytes` ([`GpuPlanInputs::nccl_bytes`], [`nccl_reserve`]).
    pub nccl_bytes: u64,
    /// The CUDA graphs' part of `reserve_bytes` ([`GpuPlanInputs::graphs`], [`graph_bytes`]).
    pub graph_bytes: u64,
    /// What is left for the KV pool.
    pub kv_budget_bytes: u64,
    /// Each kind of KV layer on this rank: layers, window or chunk, bytes a token and a
    /// block (exact), blocks a sequence.
    pub kv_layers: Vec<KvLayerFigures>,
    /// Each sequence state on this rank: layers, dtype and where it came from, bytes a slot.
    pub states: Vec<StateFigures>,
    /// The multi-token-prediction layers loaded on this rank ([`GpuPlanInputs::mtp`]): their
    /// weights are in `weights_bytes`, their keys and values in the KV figures and the pool.
    /// 0 where they are not loaded (the file's count is the config's `mtp_layers`).
    pub mtp_layers: usize,
    /// The blocks one sequence at the context needs, by kind, and their device bytes alone.
    pub sequence_blocks: PoolBlocks,
    pub sequence_bytes: u64,
    /// The most blocks this rank alone could hold, and the sequences at the context they
    /// give (not capped at the state slots: [`GpuPlan::sequences`] is).
    pub most_blocks: PoolBlocks,
    pub most_sequences: usize,
    /// The pool this rank allocates in the plan (every rank holds the plan's sequences), and
    /// its device bytes, as allocated and exact.
    pub pool: PoolBlocks,
    pub pool_bytes: u64,
    pub pool_exact_bytes: u64,
}

/// What limits the plan's sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Binds {
    /// The full-length layers' blocks on the binding rank: the pool grows a block at a time
    /// (only full-length layers hold blocks).
    FullBlocks,
    /// Whole sequences on the binding rank: window or compressed layers hold blocks of their
    /// own, so the pool grows a sequence (every kind's blocks) at a time.
    Sequences,
    /// The state cache's slots (`max_batch_size`): the pool holds more sequences than there
    /// are slots for their recurrent states.
    StateSlots,
    /// No rank keeps keys and values: the state slots are the sequences.
    NoKv,
}

/// The plan of every GPU of the layout.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GpuPlan {
    pub inputs: GpuPlanInputs,
    pub layout: ParallelLayout,
    pub ranks: Vec<RankPlan>,
    /// The rank with keys and values that holds the fewest (ties: the first); 0 where no rank
    /// has any.
    pub binding_rank: usize,
    /// The binding rank's pool: what every rank's pool holds in sequences (each rank's own
    /// blocks are its `pool`).
    pub blocks: PoolBlocks,
    /// Tokens the full-length layers hold: `blocks.full × kv_block_size` (`None` for a model
    /// without full-length KV layers: its sequences are what it is planned by).
    pub tokens: Option<usize>,
    /// Sequences at the context (`arena.max_seq_len`) every rank's pool holds, at most the
    /// state cache's slots (`max_batch_size`) where any rank keeps sequence states.
    pub sequences: usize,
    /// Device bytes of the binding rank's pool.
    pub kv_pool_bytes: u64,
    /// What limits `sequences`.
    pub binds: Binds,
}

/// The largest `n` in `0..=hi` for which `fits(n)` (which must hold at 0 and stay false once
/// false).
fn largest(hi: usize, fits: impl Fn(usize) -> Result<bool, SizeError>) -> Result<usize, SizeError> {
    let (mut lo, mut hi) = (0usize, hi);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid)? {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Ok(lo)
}

/// What turns a size that overflowed into the plan's error, naming the model.
fn size_error(config: &ModelConfig) -> impl Fn(SizeError) -> GpuPlanError + Copy + '_ {
    |source| GpuPlanError::Size {
        model: config.source.to_string(),
        source,
    }
}

/// A rank's fixed parts and the most its budget holds, before the ranks agree on a pool:
/// `config` is the rank's, `mtp` its draft module where loaded, `kv` the config its keys and
/// values are sized from (the rank's, with the draft layers after its own where loaded).
fn plan_rank(
    config: &ModelConfig,
    mtp: Option<&ModelConfig>,
    kv: &ModelConfig,
    rank: usize,
    nccl: u64,
    inputs: &GpuPlanInputs,
) -> Result<RankPlan, GpuPlanError> {
    let graphs = graph_bytes(inputs.graphs, inputs.graph_nodes);
    let reserve = inputs
        .reserve_bytes
        .saturating_add(nccl)
        .saturating_add(graphs);
    let size_err = size_error(config);
    // The towers: one slab, on the first stage's ranks, where the weights are sized here.
    let first_stage = config.shard.as_ref().is_none_or(|s| s.rank.stage() == 0);
    let towers = match inputs.text_only || !first_stage || inputs.weights_bytes_per_rank.is_some() {
        true => 0,
        false => config.towers.bytes(),
    };
    // Given: one slab. From the config: the six weight arenas, a slab each.
    let (weights, weights_exact) = match inputs.weights_bytes_per_rank {
        Some(b) => (on_device(b), b),
        None => {
            let sizes = WeightsSizes::new(
                config,
                config
                    .weight_formats
                    .with_mxfp4_backend(inputs.mxfp4_backend),
            )?;
            let (mut device, mut exact) = (
                sizes.device_bytes(DEVICE_PAGE).map_err(size_err)?,
                sizes.device_bytes(1).map_err(size_err)?,
            );
            // The MTP module: its six arenas and its 16-bit extras, a slab each.
            if let Some(m) = mtp {
                let sizes = WeightsSizes::new(
                    m,
                    m.weight_formats.with_mxfp4_backend(inputs.mxfp4_backend),
                )?;
                let extra = m.mtp_extra_bytes() as u64;
                device = device
                    .saturating_add(sizes.device_bytes(DEVICE_PAGE).map_err(size_err)?)
                    .saturating_add(on_device(extra));
                exact = exact
                    .saturating_add(sizes.device_bytes(1).map_err(size_err)?)
                    .saturating_add(extra);
            }
            (
                device.saturating_add(on_device(towers)),
                exact.saturating_add(towers),
            )
        }
    };
    let arena_sizes = inputs.arena.sizes(config).map_err(size_err)?;
    let arena_options = if inputs.reuse_arena {
        AllocOptions::reuse()
    } else {
        AllocOptions::default()
    };
    let arena_exact =
        BufferArena::slab_bytes(&arena_sizes, arena_options).map_err(size_err)? as u64;
    let arena = on_device(arena_exact);
    let recurrent = config.recurrent_state_dtype.or_override(inputs.state_dtype);
    let recurrent_dtype = recurrent.dtype;
    let state_sizes =
        StateCacheSizes::try_from_config(config, inputs.arena.max_batch_size, recurrent_dtype)
            .map_err(size_err)?;
    let state_exact =
        StateCache::slab_bytes(&state_sizes, AllocOptions::default()).map_err(size_err)? as u64;
    let state = on_device(state_exact);
    // Saturating: a sum past u64 exceeds every GPU, and says so below.
    let fixed = weights
        .saturating_add(arena)
        .saturating_add(state)
        .saturating_add(reserve);
    let Some(budget) = inputs.gpu_bytes.checked_sub(fixed) else {
        return Err(GpuPlanError::FixedPartsExceedGpu {
            rank,
            weights,
            arena,
            state,
            reserve,
            gpu: inputs.gpu_bytes,
        });
    };
    let per_seq = PoolBlocks::per_sequence(
        kv,
        inputs.arena.max_seq_len,
        inputs.arena.kv_block_size,
        inputs.arena.max_batch_tokens,
    );
    let fits =
        |b: PoolBlocks| -> Result<bool, SizeError> { Ok(kv_pool_bytes(kv, inputs, b)? <= budget) };
    // The search's upper bound: the budget over the bytes before any page rounding.
    let raw = |b: PoolBlocks| -> Result<u64, SizeError> {
        Ok(pool_sizes(kv, inputs, b)?.total_bytes() as u64)
    };
    let sequence_bytes = kv_pool_bytes(kv, inputs, per_seq).map_err(size_err)?;
    let (most_blocks, most_sequences) = if per_seq.is_none() {
        // No KV layers on this rank: its sequences are its state slots.
        (PoolBlocks::default(), inputs.arena.max_batch_size)
    } else if per_seq.full_only() {
        // A block at a time: the most blocks in the budget, as many sequences as they hold.
        let block = PoolBlocks {
            full: 1,
            ..PoolBlocks::default()
        };
        let hi = bound(budget, raw(block).map_err(size_err)?);
        let full = largest(hi, |n| fits(block.times(n))).map_err(size_err)?;
        (block.times(full), full / per_seq.full)
    } else {
        // A sequence at a time: every kind's blocks for as many whole sequences as fit.
        let hi = bound(budget, raw(per_seq).map_err(size_err)?);
        let n = largest(hi, |n| fits(per_seq.times(n))).map_err(size_err)?;
        (per_seq.times(n), n)
    };
    if !per_seq.is_none() && most_sequences == 0 {
        return Err(GpuPlanError::NoSequenceFits {
            rank,
            budget,
            context: inputs.arena.max_seq_len,
            need: sequence_bytes,
        });
    }
    let block_tokens = inputs.arena.kv_block_size;
    Ok(RankPlan {
        rank,
        weights_bytes: weights,
        weights_exact_bytes: weights_exact,
        towers_bytes: towers,
        arena_bytes: arena,
        arena_exact_bytes: arena_exact,
        state_bytes: state,
        state_exact_bytes: state_exact,
        kv_layers: kv_layer_figures(kv, block_tokens, inputs.kv_dtype, per_seq)
            .map_err(size_err)?,
        states: state_figures(config, recurrent_dtype, recurrent.source).map_err(size_err)?,
        mtp_layers: mtp.map_or(0, |m| m.mtp_layers),
        reserve_bytes: reserve,
        nccl_bytes: nccl,
        graph_bytes: graphs,
        kv_budget_bytes: budget,
        sequence_blocks: per_seq,
        sequence_bytes,
        most_blocks,
        most_sequences,
        pool: PoolBlocks::default(),
        pool_bytes: 0,
        pool_exact_bytes: 0,
    })
}

/// `budget / bytes + 1`, within what a search can step through.
fn bound(budget: u64, bytes: u64) -> usize {
    (budget / bytes.max(1))
        .saturating_add(1)
        .min(usize::MAX as u64 / 2) as usize
}

/// A stage that holds KV-shared layers must hold their sources: the last layer of each kind
/// before the first shared one (Gemma 4's `kv_sharing_modes`; vLLM's `gemma4.py` gives a
/// reuse layer the last earlier non-reuse layer of its type).
fn check_shared_sources(
    whole: &ModelConfig,
    layout: &ParallelLayout,
    ranks: &[Rank],
) -> Result<(), GpuPlanError> {
    let kinds = whole.kv_layer_kinds();
    let Some(first_shared) = kinds.iter().position(|k| k.is_shared()) else {
        return Ok(());
    };
    let sources = [KvLayer::Full, KvLayer::Sliding]
        .map(|kind| kinds[..first_shared].iter().rposition(|k| *k == kind));
    for rank in ranks {
        let stage = layout.stage_layers(kinds.len(), rank.stage());
        let holds_shared = kinds[stage.clone()].iter().any(|k| k.is_shared());
        let holds_sources = sources.iter().flatten().all(|i| stage.contains(i));
        if holds_shared && !holds_sources {
            return Err(GpuPlanError::SharedKvAcrossStages { rank: rank.index });
        }
    }
    Ok(())
}

/// Plans every GPU of `layout` for the model of `whole` (its whole config): each rank's
/// fixed parts, then one number of sequences every rank with keys and values holds — the
/// fewest any of them can — and each rank's pool for it (where every rank's pool grows a
/// block at a time, the fewest blocks any holds, as vLLM takes the smallest block count of
/// its workers).
pub fn plan_gpu(
    whole: &ModelConfig,
    layout: &ParallelLayout,
    inputs: GpuPlanInputs,
) -> Result<GpuPlan, GpuPlanError> {
    if inputs.arena.kv_block_size == 0 {
        return Err(GpuPlanError::Inputs(
            "kv_block_size is 0: a KV pool needs blocks of at least one token",
        ));
    }
    if inputs.arena.max_seq_len == 0 {
        return Err(GpuPlanError::Inputs(
            "max_seq_len is 0: a plan needs a context of at least one token",
        ));
    }
    if inputs.kv_dtype == KvDtype::Fp8 && whole.has_indexer() {
        return Err(GpuPlanError::Inputs(
            "FP8 keys of a sparse-attention MLA model (DeepSeek-V3.2's, V4's) take vLLM's \
             fp8_ds_mla layout, which is not planned here: plan it in BF16",
        ));
    }
    if !inputs.text_only && inputs.weights_bytes_per_rank.is_none() {
        // A wrapper's whole rest first: it names every tower the check below would name one of.
        if !whole.text_model.left_out.is_empty() {
            return Err(GpuPlanError::LeftOut {
                model: whole.source.to_string(),
                left_out: whole.text_model.left_out.join(", "),
            });
        }
        for (which, tower) in [
            ("vision", whole.towers.vision),
            ("audio", whole.towers.audio),
        ] {
            if tower.is_some_and(|t| t.kind == TowerKind::Unsized) {
                return Err(GpuPlanError::Towers {
                    model: whole.source.to_string(),
                    which,
                });
            }
        }
    }
    let all: Vec<Rank> = layout.ranks().collect();
    check_shared_sources(whole, layout, &all)?;
    let mut ranks = Vec::new();
    let mut configs = Vec::new();
    for rank in &all {
        let config = whole.shard(rank)?;
        let mtp = match inputs.mtp {
            true => config.mtp_module().map_err(|why| GpuPlanError::Mtp {
                model: whole.source.to_string(),
                why,
            })?,
            false => None,
        };
        // The pool is sized with the draft layers' keys and values where they are loaded.
        let with_mtp = mtp.as_ref().map(|m| config.with_mtp_layers(m));
        let kv = with_mtp.as_ref().unwrap_or(&config);
        let nccl = inputs.nccl_bytes.unwrap_or_else(|| nccl_reserve(layout));
        ranks.push(plan_rank(
            &config,
            mtp.as_ref(),
            kv,
            rank.index,
            nccl,
            &inputs,
        )?);
        configs.push(with_mtp.unwrap_or(config));
    }
    let size_err = size_error(whole);
    // The ranks with keys and values agree: the fewest sequences any holds binds them all.
    let with_kv = |r: &&RankPlan| !r.sequence_blocks.is_none();
    let binding = ranks
        .iter()
        .filter(with_kv)
        .min_by_key(|r| (r.most_sequences, r.most_blocks.full))
        .map(|r| r.rank);
    let block_at_a_time = ranks
        .iter()
        .filter(with_kv)
        .all(|r| r.sequence_blocks.full_only());
    let fewest_full = ranks
        .iter()
        .filter(with_kv)
        .map(|r| r.most_blocks.full)
        .min()
        .unwrap_or(0);
    let sequences = match binding {
        Some(b) => ranks[b].most_sequences,
        None => inputs.arena.max_batch_size,
    };
    for (r, config) in ranks.iter_mut().zip(&configs) {
        r.pool = if r.sequence_blocks.is_none() {
            PoolBlocks::default()
        } else if block_at_a_time {
            PoolBlocks {
                full: fewest_full,
                ..PoolBlocks::default()
            }
        } else {
            r.sequence_blocks.times(sequences)
        };
        r.pool_bytes = kv_pool_bytes(config, &inputs, r.pool).map_err(size_err)?;
        r.pool_exact_bytes = KvPool::slab_bytes(
            &pool_sizes(config, &inputs, r.pool).map_err(size_err)?,
            AllocOptions::default(),
        )
        .map_err(size_err)? as u64;
        debug_assert!(r.pool_bytes <= r.kv_budget_bytes);
    }
    let binding = binding.unwrap_or(0);
    let b = &ranks[binding];
    let has_state = ranks.iter().any(|r| r.state_bytes > 0);
    let capped = if has_state || b.sequence_blocks.is_none() {
        sequences.min(inputs.arena.max_batch_size)
    } else {
        sequences
    };
    let binds = if b.sequence_blocks.is_none() {
        Binds::NoKv
    } else if capped < sequences {
        Binds::StateSlots
    } else if block_at_a_time {
        Binds::FullBlocks
    } else {
        Binds::Sequences
    };
    let sequences = capped;
    Ok(GpuPlan {
        inputs,
        layout: *layout,
        blocks: b.pool,
        tokens: (b.pool.full > 0).then(|| b.pool.full * inputs.arena.kv_block_size),
        sequences,
        kv_pool_bytes: b.pool_bytes,
        binds,
        binding_rank: binding,
        ranks,
    })
}
