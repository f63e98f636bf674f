//! Rank sizing (`ModelConfig::shard`): widths against hand-sharded numbers from the cited
//! engines' rules, the splits an engine refuses, per-rank golden tables, and properties over
//! every shipped model and layout.
//! Re-bless the tables with `ARENA_BLESS=1 cargo test -p arena-spec --test host parallel::`.

use arena_spec::models::SHIPPED;
use arena_spec::report::SizeReport;
use arena_spec::{BufferArenaInputs, LayerKind, ModelConfig, ParallelLayout, ShardError};
use std::path::Path;

const INPUTS: BufferArenaInputs = BufferArenaInputs {
    max_batch_tokens: 8192,
    max_seq_len: 32768,
    kv_block_size: 16,
    max_batch_size: 128,
};

fn load(name: &str) -> ModelConfig {
    arena_spec::models::find(name)
        .unwrap()
        .config_with_levers(Default::default())
        .unwrap()
}

fn layout(tp: usize, ep: usize, pp: usize) -> ParallelLayout {
    ParallelLayout::new(tp, ep, pp).unwrap()
}

fn shard(name: &str, tp: usize, ep: usize, pp: usize, rank: usize) -> ModelConfig {
    let l = layout(tp, ep, pp);
    load(name).shard(&l.rank(rank).unwrap()).unwrap()
}

fn shard_err(name: &str, tp: usize, ep: usize, pp: usize) -> ShardError {
    let l = layout(tp, ep, pp);
    load(name).shard(&l.rank(0).unwrap()).unwrap_err()
}

#[test]
fn gqa_heads_split_and_kv_heads_replicate_past_their_count() {
    // Llama-3.1-8B: 32 q heads, 8 kv heads, head_dim 128 (from hidden / heads).
    let c = shard("llama-3.1-8b", 8, 1, 1, 0);
    assert_eq!((c.num_attention_heads, c.num_key_value_heads), (4, 1));
    assert_eq!(c.head_dim(), 128, "the head size is the whole model's");
    assert_eq!(c.qkv_width(), 4 * 128 + 2 * 128);
    assert_eq!(c.intermediate_size, 14336 / 8);
    // tp = 16 > 8 kv heads: one kv head per rank, each replicated on 2 ranks.
    let c = shard("llama-3.1-8b", 16, 1, 1, 0);
    assert_eq!((c.num_attention_heads, c.num_key_value_heads), (2, 1));
    assert_eq!(c.qkv_width(), 2 * 128 + 2 * 128);
}

#[test]
fn mla_splits_heads_and_keeps_its_latent_ranks() {
    // DeepSeek-V3: 128 heads of 128 + 64, v 128; q_lora 1536, kv_lora 512.
    let c = shard("deepseek-v3", 8, 1, 1, 0);
    assert_eq!(c.num_attention_heads, 16);
    assert_eq!((c.q_lora_rank, c.kv_lora_rank), (1536, 512));
    assert_eq!(c.qkv_width(), 16 * 192 + (512 + 64) + 1536);
    assert_eq!(c.attn_output_width(), 16 * 128);
    // Experts: all 256 on every rank without ep, widths / tp.
    assert_eq!(
        (c.local_experts(), c.moe_intermediate_size),
        (256, 2048 / 8)
    );
    assert_eq!(c.shared_expert_intermediate_size, 2048 / 8);
    assert_eq!(
        c.router_width(),
        256,
        "the router scores every expert on every rank"
    );
    // ep = 8 in tp = 8: 32 experts a rank at full width (SGLang's moe_tp = tp / ep = 1).
    let c = shard("deepseek-v3", 8, 8, 1, 0);
    assert_eq!((c.local_experts(), c.moe_intermediate_size), (32, 2048));
    assert_eq!(c.shared_expert_intermediate_size, 2048 / 8);
    assert_eq!(c.expert_fanout(), 8);
    assert_eq!(c.router_width(), 256);
}

#[test]
fn deepseek_v4_splits_its_heads_and_replicates_its_one_kv_head() {
    // DeepSeek-V4-Flash: 64 heads of 512 and one K=V head; q_lora 1024; O latent 8 · 1024;
    // 4 hyper-connection streams; the widest (CSA) layer's compressor and indexer projections
    // 4 · 512 + 4 · 128 + 64 = 2624.
    let whole = load("deepseek-v4-flash");
    assert_eq!(whole.num_key_value_heads, 1);
    assert_eq!(whole.extra_qkv_width, 2624);
    let c = shard("deepseek-v4-flash", 8, 1, 1, 0);
    assert_eq!((c.num_attention_heads, c.num_key_value_heads), (8, 1));
    assert_eq!(c.qkv_width(), 8 * 512 + 2 * 512 + 1024 + 2624);
    assert_eq!(c.attn_output_width(), 8 * 512);
    // Not split: the O latent, the streams, the compressors (never narrower than a share).
    assert_eq!((c.o_latent_width(), c.hc_mult), (8 * 1024, 4));
    assert_eq!(c.extra_qkv_width, 2624);
    // Experts: 256 of 2048, top-6, one shared expert of 2048; ep = 8 holds 32 at full width.
    let c = shard("deepseek-v4-flash", 8, 8, 1, 0);
    assert_eq!((c.local_experts(), c.moe_intermediate_size), (32, 2048));
    assert_eq!(c.shared_expert_intermediate_size, 2048 / 8);
}

#[test]
fn gemma4_sizes_the_wider_kind_of_layer_per_rank() {
    // Gemma-4-31B: 32 heads; sliding layers 16 kv heads of 256 (k and v), full layers 4 kv
    // heads of 512 whose keys are their values (no v projection).
    let whole = load("gemma-4-31b-it");
    assert_eq!(whole.q_proj_width(), 32 * 512);
    // The wider kind for k and v is the sliding one: 2 · 16 · 256 against 4 · 512.
    assert_eq!(whole.global_kv_width(), 4 * 512);
    assert_eq!(whole.kv_proj_width(), 2 * 16 * 256);
    assert_eq!(whole.attn_output_width(), 32 * 512);
    // tp = 8: 4 heads; the sliding kv heads split (2), the full ones replicate below tp (1).
    let c = shard("gemma-4-31b-it", 8, 1, 1, 0);
    assert_eq!((c.num_key_value_heads, c.global_kv_heads), (2, 1));
    assert_eq!(c.q_proj_width(), 4 * 512);
    assert_eq!(c.global_kv_width(), 512);
    assert_eq!(c.kv_proj_width(), 2 * 2 * 256);
}

#[test]
fn an_expert_parallel_rank_holds_fewer_rows_than_top_k_when_it_has_fewer_experts() {
    // Mixtral: 8 experts, top-2. tp = ep = 8: one expert a rank, so at most one of a
    // token's two experts is here.
    let c = shard("mixtral-8x7b", 8, 8, 1, 0);
    assert_eq!((c.local_experts(), c.expert_fanout()), (1, 1));
    let sizes = INPUTS.sizes(&c).unwrap();
    let whole = INPUTS.sizes(&load("mixtral-8x7b")).unwrap();
    assert_eq!(sizes.expert_down_out * 2, whole.expert_down_out);
}

#[test]
fn gated_deltanet_and_mamba_heads_split() {
    // Qwen3-Next: GDN 16 key heads, 32 value heads, dims 128.
    let c = shard("qwen3-next-80b-a3b", 2, 1, 1, 0);
    assert_eq!((c.linear_num_key_heads, c.linear_num_value_heads), (8, 16));
    assert_eq!(c.ssm_qkvz_size(), 2 * 8 * 128 + 2 * 16 * 128);
    assert_eq!(c.ssm_gate_width(), 2 * 16);
    assert!(c.gdn_fla_supported(), "head dims stay 128");
    // Nemotron-3-Nano: Mamba-2 64 heads of 64, 8 groups, state 128.
    let whole = load("nemotron-3-nano-30b-a3b");
    assert_eq!((whole.mamba_num_heads, whole.mamba_n_groups), (64, 8));
    let c = shard("nemotron-3-nano-30b-a3b", 4, 1, 1, 0);
    assert_eq!((c.mamba_num_heads, c.mamba_n_groups), (16, 2));
    assert_eq!(c.mamba_d_inner(), 16 * 64);
    assert_eq!(c.mamba_in_proj_width(), 2 * 16 * 64 + 2 * 2 * 128 + 16);
}

#[test]
fn a_single_mamba_group_is_replicated() {
    let mut whole = load("nemotron-3-nano-30b-a3b");
    whole.mamba_n_groups = 1;
    let c = whole.shard(&layout(4, 1, 1).rank(0).unwrap()).unwrap();
    assert_eq!(c.mamba_n_groups, 1);
}

#[test]
fn pipeline_stages_hold_their_own_layers_and_only_the_last_the_lm_head() {
    // Qwen3-Next: 48 layers, every 4th full attention; 2 stages of 24.
    let first = shard("qwen3-next-80b-a3b", 1, 1, 2, 0);
    let last = shard("qwen3-next-80b-a3b", 1, 1, 2, 1);
    for c in [&first, &last] {
        assert_eq!(c.layers.len(), 24);
        assert_eq!((c.num_attention_layers(), c.num_gdn_layers()), (6, 18));
    }
    assert_eq!(first.lm_head_vocab(), 0);
    assert_eq!(last.lm_head_vocab(), 151936);
    let s = INPUTS.sizes(&first).unwrap();
    assert_eq!(s.logits, 0);
    let arena = arena_spec::BufferArena::allocate(arena_runtime::HostDevice::new(), &s).unwrap();
    assert!(
        arena.logits.is_null(),
        "no LM head: the logits pointer is NULL"
    );
    arena.release().unwrap();
    // DeepSeek-V3: 61 layers, the first 3 dense. vLLM's split for pp = 4: 15, 15, 16, 15.
    let stages: Vec<ModelConfig> = (0..4).map(|s| shard("deepseek-v3", 1, 1, 4, s)).collect();
    let lens: Vec<usize> = stages.iter().map(|c| c.layers.len()).collect();
    assert_eq!(lens, vec![15, 15, 16, 15]);
    let dense: Vec<usize> = stages.iter().map(|c| c.moe_dense_layers).collect();
    assert_eq!(
        dense,
        vec![3, 0, 0, 0],
        "the dense layers are the first stage's"
    );
    assert!(stages[1].expert_width() <= stages[0].expert_width());
    // Nemotron-H: the stage's own layer kinds.
    let whole = load("nemotron-h-56b-base-8k");
    let kinds = |c: &ModelConfig, k| c.layers.iter().filter(|&&l| l == k).count();
    let total: usize = (0..2)
        .map(|s| {
            kinds(
                &shard("nemotron-h-56b-base-8k", 1, 1, 2, s),
                LayerKind::Mamba2,
            )
        })
        .sum();
    assert_eq!(total, kinds(&whole, LayerKind::Mamba2));
}

#[test]
fn splits_an_engine_refuses_are_errors_naming_the_field_and_numbers() {
    let e = shard_err("llama-3.1-8b", 3, 1, 1);
    assert_eq!(
        e.to_string(),
        "llama-3.1-8b: `num_attention_heads` = 32 is not divisible by tp = 3"
    );
    // Qwen2.5-7B: 28 q heads, 4 kv heads. tp = 14 splits q but cannot place 4 kv heads.
    let e = shard_err("qwen2.5-7b", 14, 1, 1);
    assert!(
        matches!(
            &e,
            ShardError::NotReplicable {
                field: "num_key_value_heads",
                value: 4,
                by: 14,
                ..
            }
        ),
        "{e}"
    );
    // Mixtral: 8 experts over ep = 16.
    let e = shard_err("mixtral-8x7b", 16, 16, 1);
    assert_eq!(
        e.to_string(),
        "mixtral-8x7b: `num_experts` = 8 is not divisible by ep = 16"
    );
    let e = shard_err("llama-3.1-8b", 2, 2, 1);
    assert_eq!(
        e.to_string(),
        "llama-3.1-8b: ep = 2, but the model has no routed experts"
    );
    let e = shard_err("qwen3-0.6b", 1, 1, 29);
    assert_eq!(
        e.to_string(),
        "qwen3-0.6b: pp = 29 stages, but the model has only 28 layers"
    );
    assert_eq!(
        ParallelLayout::new(8, 3, 1).unwrap_err().to_string(),
        "ep = 3 does not divide tp = 8: the expert-parallel group lives inside the \
         tensor-parallel group (SGLang's rule)"
    );
    let once = shard("llama-3.1-8b", 2, 1, 1, 0);
    assert!(matches!(
        once.shard(&layout(2, 1, 1).rank(0).unwrap()),
        Err(ShardError::AlreadySharded { index: 0, .. })
    ));
}

/// Every layout of up to 8 GPUs a tensor-parallel size in {1, 2, 4, 8} and `pp` in {1, 2, 4}
/// make, `ep` each divisor of `tp`.
fn layouts() -> Vec<ParallelLayout> {
    let mut out = Vec::new();
    for tp in [1, 2, 4, 8] {
        for ep in (1..=tp).filter(|e| tp % e == 0) {
            for pp in [1, 2, 4] {
                out.push(layout(tp, ep, pp));
            }
        }
    }
    out
}

#[test]
fn a_rank_never_needs_more_than_the_whole_model_and_its_shards_cover_it() {
    let mut sharded = 0;
    for m in SHIPPED {
        let whole = load(m.name);
        let whole_sizes = INPUTS.sizes(&whole).unwrap();
        for l in layouts() {
            let mut layers = 0;
            for rank in l.stage_leaders() {
                let c = match whole.shard(&rank) {
                    Ok(c) => c,
                    // A split the engine refuses is refused for every rank alike.
                    Err(_) => break,
                };
                sharded += 1;
                let what = format!("{} at {l}, rank {}", m.name, rank.index);
                let sizes = INPUTS.sizes(&c).unwrap();
                for (a, b) in sizes.buffers().iter().zip(whole_sizes.buffers()) {
                    assert!(a.bytes <= b.bytes, "{what}: `{}` grew", a.decl.name);
                }
                // The split widths times their degree give the whole width back.
                let tp = l.tp;
                assert_eq!(c.q_proj_width() * tp, whole.q_proj_width(), "{what}");
                assert_eq!(
                    c.attn_output_width() * tp,
                    whole.attn_output_width(),
                    "{what}"
                );
                assert!(c.kv_proj_width() * tp >= whole.kv_proj_width(), "{what}");
                assert_eq!(c.gdn_value_dim() * tp, whole.gdn_value_dim(), "{what}");
                assert_eq!(c.gdn_key_dim() * tp, whole.gdn_key_dim(), "{what}");
                assert_eq!(c.mamba_d_inner() * tp, whole.mamba_d_inner(), "{what}");
                if whole.is_moe() {
                    assert_eq!(c.local_experts() * l.ep, whole.num_experts, "{what}");
                    assert_eq!(
                        c.moe_intermediate_size * l.moe_tp(),
                        whole.moe_intermediate_size,
                        "{what}"
                    );
                    assert_eq!(
                        c.shared_expert_intermediate_size * tp,
                        whole.shared_expert_intermediate_size,
                        "{what}"
                    );
                }
                if !whole.is_moe() || whole.moe_dense_layers > 0 {
                    assert_eq!(c.intermediate_size * tp, whole.intermediate_size, "{what}");
                }
                // The stages' layers are the model's, in order, once each.
                let shard = c.shard.as_ref().unwrap();
                assert_eq!(shard.layers.start, layers, "{what}");
                assert_eq!(c.layers[..], whole.layers[shard.layers.clone()], "{what}");
                layers = shard.layers.end;
                if rank.stage() + 1 == l.pp {
                    assert_eq!(layers, whole.layers.len(), "{what}");
                }
            }
        }
    }
    assert!(sharded > 500, "only {sharded} rank configs were checked");
}

#[test]
fn the_ranks_of_a_stage_have_one_arena() {
    let whole = load("deepseek-v3");
    let l = layout(8, 2, 2);
    for rank in l.ranks() {
        let leader = l.rank(rank.stage() * l.tp).unwrap();
        let a = INPUTS.sizes(&whole.shard(&rank).unwrap()).unwrap();
        let b = INPUTS.sizes(&whole.shard(&leader).unwrap()).unwrap();
        assert_eq!(a, b, "rank {}", rank.index);
    }
}

/// The models and layouts of the per-rank golden tables: DeepSeek-V3 (MLA, 256 experts),
/// Qwen3-Next (GDN hybrid, 512 experts) and a 70B-class dense model, each at tp 1, 2, 8,
/// with an expert-parallel and a pipeline layout.
/// `(tp, ep, pp)`.
type Degrees = (usize, usize, usize);

const GOLDEN: &[(&str, &[Degrees])] = &[
    (
        "deepseek-v3",
        &[(1, 1, 1), (2, 1, 1), (8, 1, 1), (8, 8, 1), (8, 2, 2)],
    ),
    (
        "qwen3-next-80b-a3b",
        &[(1, 1, 1), (2, 1, 1), (8, 1, 1), (2, 2, 1), (4, 4, 2)],
    ),
    (
        "llama-3.1-70b",
        &[(1, 1, 1), (2, 1, 1), (8, 1, 1), (8, 1, 2)],
    ),
];

fn golden_text(name: &str, layouts: &[Degrees]) -> String {
    let whole = load(name);
    let mut out = format!(
        "# {name} per rank: M={} max_seq_len={} kv_block_size={} max_batch_size={}, levers off\n",
        INPUTS.max_batch_tokens, INPUTS.max_seq_len, INPUTS.kv_block_size, INPUTS.max_batch_size
    );
    for &(tp, ep, pp) in layouts {
        let l = layout(tp, ep, pp);
        for rank in l.stage_leaders() {
            let c = whole.shard(&rank).unwrap();
            let s = c.shard.as_ref().unwrap();
            out.push_str(&format!(
                "\n## {l}: ranks {}..={} (stage {}, layers {}..{}, {} experts{})\n",
                rank.index,
                rank.index + tp - 1,
                rank.stage(),
                s.layers.start,
                s.layers.end,
                s.local_experts,
                if s.holds_lm_head { ", LM head" } else { "" }
            ));
            let (report, _) = SizeReport::new(&c, INPUTS).unwrap();
            out.push_str(&report.golden_lines());
        }
    }
    out
}

#[test]
fn golden_per_rank_tables() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/per_rank");
    let bless = std::env::var_os("ARENA_BLESS").is_some();
    let mut stale = Vec::new();
    for (name, layouts) in GOLDEN {
        let path = dir.join(format!("{name}.txt"));
        let actual = golden_text(name, layouts);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, actual).unwrap();
        } else if std::fs::read_to_string(&path).unwrap_or_default() != actual {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "per-rank tables differ (re-bless with ARENA_BLESS=1 after checking): {stale:?}"
    );
}

#[test]
fn hand_built_or_huge_layouts_are_refused_not_panicked_on() {
    use arena_spec::Rank;
    let whole = load("llama-3.1-8b");
    let past = Rank {
        layout: layout(2, 1, 2),
        index: 9,
    };
    assert!(matches!(
        whole.shard(&past),
        Err(ShardError::NoSuchRank { index: 9, .. })
    ));
    let zero = Rank {
        layout: ParallelLayout {
            tp: 0,
            ep: 1,
            pp: 1,
        },
        index: 0,
    };
    assert!(matches!(
        whole.shard(&zero),
        Err(ShardError::ZeroDegree { name: "tp" })
    ));
    assert!(matches!(
        ParallelLayout::new(1 << 40, 1, 1 << 40),
        Err(ShardError::TooManyRanks { .. })
    ));
}

/// The buffers beyond the seeds per rank of tp, as vLLM shards their modules: short-conv
/// channels, lightning heads and KDA heads split by tp; KDA's low-rank projections (replicated),
/// the latent MoE's projections (`ReplicatedLinear`) and Gemma 4's per-layer inputs (gathered,
/// and the gate and projection replicated) stay whole.
#[test]
fn buffers_beyond_the_seeds_split_or_stay_whole_per_rank_as_vllm_shards_them() {
    let rank0 = |c: &ModelConfig, tp: usize| {
        let layout = ParallelLayout::new(tp, 1, 1).unwrap();
        let rank = c.shard(&layout.rank(0).unwrap()).unwrap();
        BufferArenaInputs::defaults_for(c).sizes(&rank).unwrap()
    };
    let whole = |c: &ModelConfig| BufferArenaInputs::defaults_for(c).sizes(c).unwrap();

    let c = load("lfm2-1.2b");
    let (w, r) = (whole(&c), rank0(&c, 2));
    assert_eq!(
        (r.short_conv_bcx, r.short_conv_bx, r.short_conv_out),
        (
            w.short_conv_bcx / 2,
            w.short_conv_bx / 2,
            w.short_conv_out / 2
        )
    );

    let c = load("minimax-m1");
    let (w, r) = (whole(&c), rank0(&c, 8));
    assert_eq!(
        (r.lightning_qkv, r.lightning_gate, r.lightning_out),
        (
            w.lightning_qkv / 8,
            w.lightning_gate / 8,
            w.lightning_out / 8
        )
    );
    // Block states: heads split, the block count is M's.
    assert_eq!(r.lightning_block_states, w.lightning_block_states / 8);

    let c = load("kimi-linear-48b-a3b-instruct");
    let (w, r) = (whole(&c), rank0(&c, 4));
    assert_eq!(
        (
            r.kda_qkv,
            r.kda_qkv_conv,
            r.kda_decay_f32,
            r.kda_beta_f32,
            r.kda_out_gate,
            r.kda_out
        ),
        (
            w.kda_qkv / 4,
            w.kda_qkv_conv / 4,
            w.kda_decay_f32 / 4,
            w.kda_beta_f32 / 4,
            w.kda_out_gate / 4,
            w.kda_out / 4
        )
    );
    assert_eq!(r.kda_lowrank, w.kda_lowrank);

    let c = load("gemma-4-e2b-it");
    let (w, r) = (whole(&c), rank0(&c, 2));
    assert_eq!(
        (
            r.per_layer_inputs,
            r.per_layer_inputs_proj,
            r.per_layer_gate,
            r.per_layer_out
        ),
        (
            w.per_layer_inputs,
            w.per_layer_inputs_proj,
            w.per_layer_gate,
            w.per_layer_out
        )
    );
    // A later pipeline stage receives the per-layer inputs and runs no prologue.
    let layout = ParallelLayout::new(1, 1, 2).unwrap();
    let second = c.shard(&layout.rank(1).unwrap()).unwrap();
    let s = BufferArenaInputs::defaults_for(&c).sizes(&second).unwrap();
    assert_eq!(
        (s.per_layer_inputs, s.per_layer_inputs_proj),
        (w.per_layer_inputs, 0)
    );

    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/nemotron-3-super-120b-a12b-fp8.rewritten.json");
    let c = ModelConfig::load_with_levers(&path, Default::default()).unwrap();
    let (w, r) = (whole(&c), rank0(&c, 4));
    assert_eq!(
        (r.moe_latent_in, r.moe_latent_out),
        (w.moe_latent_in, w.moe_latent_out)
    );
    assert!(w.moe_latent_in > 0);
}
