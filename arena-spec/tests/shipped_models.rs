//! The engine's arena on every shipped model: loading, gates, floors, totals, linearity,
//! and the golden size table (allocation on the host: `host_allocation.rs`).

use arena_runtime::Arena;
use arena_spec::models::SHIPPED;
use arena_spec::report::SizeReport;
use arena_spec::{BufferArena, BufferArenaInputs, BufferSizes, Family, Levers, ModelConfig};

const M: usize = 8192;
const SEQ: usize = 131072;
pub(crate) const BLOCK: usize = 16;
const BATCH: usize = 128;

pub(crate) fn load(name: &str) -> ModelConfig {
    arena_spec::models::find(name)
        .unwrap()
        .config_with_levers(Default::default())
        .unwrap()
}

/// Mamba-Codestral-7B's config as transcribed before shipped configs had to be verbatim: no
/// verbatim copy was found, so it is a test fixture of the `mamba2` family, not a shipped
/// model.
fn mamba_fixture() -> ModelConfig {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/mamba-codestral-7b.transcribed.json"
    );
    ModelConfig::load_with_levers(path, Levers::default()).unwrap()
}

fn sizes(config: &ModelConfig, m: usize) -> BufferSizes {
    BufferSizes::from_config(config, m, SEQ, BLOCK, BATCH)
}

fn bytes_of(s: &BufferSizes, name: &str) -> usize {
    s.buffers()
        .iter()
        .find(|b| b.decl.name == name)
        .unwrap_or_else(|| panic!("no buffer {name}"))
        .bytes
}

#[test]
fn every_shipped_model_loads_with_its_family() {
    let expected = [
        ("llama-3.1-8b", Family::Llama),
        ("qwen3-0.6b", Family::Qwen3),
        ("qwen3-30b-a3b", Family::Qwen3Moe),
        ("qwen3-next-80b-a3b", Family::Qwen3Next),
        ("qwen3.5-27b", Family::Qwen35),
        ("qwen3.5-35b-a3b", Family::Qwen35Moe),
        ("deepseek-v3", Family::DeepseekV3),
        ("deepseek-v3.2", Family::DeepseekV32),
        ("nemotron-h-56b-base-8k", Family::NemotronH),
        ("nemotron-3-nano-30b-a3b", Family::NemotronH),
        ("mistral-7b-v0.1", Family::Mistral),
        ("mixtral-8x7b", Family::Mixtral),
        ("qwen2.5-7b", Family::Qwen2),
        ("kimi-k2", Family::KimiK2),
        ("glm-4.5-air", Family::Glm4Moe),
        ("glm-5", Family::GlmMoeDsa),
        ("gpt-oss-20b", Family::GptOss),
        ("llama-4-scout-17b-16e-instruct", Family::Llama4),
        ("gemma-3-4b-it", Family::Gemma3),
        ("gemma-3-1b-it", Family::Gemma3),
        ("phi-4", Family::Phi3),
    ];
    for (name, family) in expected {
        assert_eq!(load(name).family, family, "{name}");
    }
    for m in SHIPPED {
        m.config_with_levers(Default::default())
            .unwrap_or_else(|e| panic!("{}: {e}", m.name));
    }
}

#[test]
fn derived_quantities_match_the_published_shapes() {
    let llama = load("llama-3.1-8b");
    assert_eq!(llama.head_dim_field, None);
    assert_eq!(llama.head_dim(), 128, "hidden / heads without head_dim");
    let qwen3 = load("qwen3-0.6b");
    assert_eq!(qwen3.head_dim(), 128, "explicit head_dim, not 1024 / 16");
    let next = load("qwen3-next-80b-a3b");
    assert_eq!(
        (next.num_attention_layers(), next.num_gdn_layers()),
        (12, 36)
    );
    assert_eq!(next.ssm_qkvz_size(), 2 * 16 * 128 + 2 * 32 * 128);
    assert_eq!(next.q_proj_width(), 16 * 256 * 2, "gated attention output");
    let q35 = load("qwen3.5-27b");
    assert!(q35.mrope);
    assert_eq!(
        (
            q35.hidden_size,
            q35.num_gdn_layers(),
            q35.num_attention_layers()
        ),
        (5120, 48, 16)
    );
    let nemo = load("nemotron-h-56b-base-8k");
    assert_eq!(
        (nemo.num_mamba_layers(), nemo.num_attention_layers()),
        (54, 10)
    );
    assert_eq!(nemo.mamba_d_inner(), 256 * 64);
    assert_eq!(nemo.head_dim(), 128);
    let mamba = mamba_fixture();
    assert_eq!(mamba.num_mamba_layers(), 64);
    assert_eq!(mamba.mamba_in_proj_width(), 2 * 8192 + 2 * 8 * 128 + 128);
    assert_eq!(mamba.num_attention_layers(), 0);
    let v3 = load("deepseek-v3");
    assert!(v3.is_mla() && !v3.has_indexer());
    assert_eq!(v3.head_dim(), 192);
    assert_eq!(v3.expert_fanout(), 8);
    let v32 = load("deepseek-v3.2");
    assert!(v32.has_indexer());
    assert_eq!(
        (v32.index_n_heads, v32.index_head_dim, v32.index_topk),
        (64, 128, 2048)
    );
    assert_eq!(llama.widest_k(), 4096);
    assert_eq!(q35.widest_k(), 48 * 128);
}

#[test]
fn the_seeds_rowwise_figure() {
    let mut c = load("qwen3.5-27b");
    assert_eq!(
        (
            c.hidden_size,
            c.linear_num_key_heads,
            c.linear_num_value_heads
        ),
        (5120, 16, 48)
    );
    assert_eq!(
        arena_spec::ssm_rowwise_w_bf16_layer_bytes(&c).unwrap(),
        167772160 + 62914560
    );
    assert_eq!(
        arena_spec::ssm_rowwise_w_bf16_bytes(&c).unwrap(),
        0,
        "lever off"
    );
    assert_eq!(
        arena_spec::ssm_rowwise_w_bf16_bytes_for(&c, true).unwrap(),
        48 * (167772160 + 62914560)
    );
    c.levers.fp8_rowwise = true;
    assert_eq!(sizes(&c, M).ssm_rowwise_w_bf16, 48 * (167772160 + 62914560));
}

/// The seeds' gated buffers, `logits`, gated here for pipeline stages without the LM head
/// (open for every whole model), and `fp8_act` with its scales, gated here by the
/// `scratch_by_format` lever (open unless it is on for a 16-bit checkpoint).
#[test]
fn the_gated_set_is_exactly_the_seeds() {
    let gated: Vec<&str> = BufferArena::BUFFERS
        .iter()
        .filter(|b| b.gated())
        .map(|b| b.name)
        .collect();
    assert_eq!(
        gated,
        [
            "logits",
            "gdn_fla_scratch",
            "ssd_scratch",
            "ffn_act_q8",
            "ffn_act_a",
            "ffn_act_scale",
            "ffn_act_scale_kmajor",
            "ffn_gate_up_fused",
            "fp8_act",
            "moe_fp8_scratch",
            "fp8_act_scale",
            "fp8_act_scale_kmajor",
            "lora_xa",
            "lora_delta",
            "lora_hact",
            "lora_seq_slot",
            "q2_dequant_scratch",
            "q2_act_q8",
            "ssm_rowwise_w_bf16",
            // Beyond the seeds, each gated on its layer kind.
            "moe_latent_in",
            "moe_latent_out",
            "short_conv_bcx",
            "short_conv_bx",
            "short_conv_out",
            "lightning_qkv",
            "lightning_gate",
            "lightning_out",
            "lightning_block_states",
            "kda_qkv",
            "kda_qkv_conv",
            "kda_lowrank",
            "kda_decay_f32",
            "kda_beta_f32",
            "kda_out_gate",
            "kda_out",
            "kda_chunk_scratch",
            "per_layer_inputs",
            "per_layer_inputs_proj",
            "per_layer_gate",
            "per_layer_out",
            "hc_pre",
        ]
    );
    let untracked: Vec<&str> = BufferArena::BUFFERS
        .iter()
        .filter(|b| !b.tracked)
        .map(|b| b.name)
        .collect();
    assert_eq!(untracked, ["o_latent", "norm_unit_w"]);
}

/// The seeds' 46 buffers (`BufferSizes` in the seeds' `buffer-sizes.txt`), in their order,
/// are the arena's first 46 fields; every field after them is beyond the seeds and closed
/// (0 bytes) for every model without its layer kind, so no seeds' model gains a byte.
#[test]
fn the_first_46_fields_are_the_seeds_and_the_rest_are_closed_for_the_seeds_models() {
    const SEEDS: [&str; 46] = [
        "hidden_states",
        "residual",
        "norm_output",
        "qkv_output",
        "attn_output",
        "gate_logits",
        "gate_logits_f32",
        "moe_router_in_f32",
        "moe_output",
        "logits",
        "ssm_qkvz",
        "ssm_ba",
        "ssm_deinterleaved",
        "ssm_gates",
        "ssm_conv_out_f32",
        "scratch",
        "expert_gate_out",
        "expert_up_out",
        "expert_down_out",
        "splitk_workspace",
        "gdn_fla_scratch",
        "ssd_scratch",
        "o_latent",
        "norm_unit_w",
        "hc_streams",
        "hc_post",
        "hc_comb",
        "hc_lowrank_scratch",
        "qsa_select_scratch",
        "token_ids",
        "ffn_act_q8",
        "ffn_act_a",
        "ffn_act_scale",
        "ffn_act_scale_kmajor",
        "ffn_gate_up_fused",
        "fp8_act",
        "moe_fp8_scratch",
        "fp8_act_scale",
        "fp8_act_scale_kmajor",
        "lora_xa",
        "lora_delta",
        "lora_hact",
        "lora_seq_slot",
        "q2_dequant_scratch",
        "q2_act_q8",
        "ssm_rowwise_w_bf16",
    ];
    assert_eq!(arena_spec::arena::SEEDS_BUFFERS, SEEDS.len());
    let names: Vec<&str> = BufferArena::BUFFERS.iter().map(|b| b.name).collect();
    assert_eq!(names[..SEEDS.len()], SEEDS);
    let beyond = &BufferArena::BUFFERS[SEEDS.len()..];
    assert!(
        beyond.iter().all(|b| b.gated()),
        "every buffer beyond the seeds is gated"
    );
    // Every shipped model without a kind beyond the seeds' (the synthetic files exercise
    // every one of the seeds' kinds) opens none of these buffers, levers off and on: its
    // figures are the seeds' formulas alone.
    for m in SHIPPED {
        let mut c = m.config_with_levers(Default::default()).unwrap();
        let beyond_kind = c.moe_latent_size > 0
            || c.has_short_conv()
            || c.has_lightning()
            || c.has_kda()
            || c.has_per_layer_inputs()
            || c.hc_mult > 0;
        for levers in [Levers::default(), Levers::ALL_ON] {
            c.levers = levers;
            let all = BufferArena::byte_sizes(&sizes(&c, M));
            let opened = all[SEEDS.len()..].iter().any(|&b| b > 0);
            assert_eq!(opened, beyond_kind, "{}", m.name);
        }
    }
}

#[test]
fn gates_per_family() {
    let dense = sizes(&load("llama-3.1-8b"), M);
    assert_eq!(dense.moe_fp8_scratch, 0);
    assert!(dense.ffn_act_a > 0 && dense.ffn_gate_up_fused > 0);
    let moe = sizes(&load("qwen3-30b-a3b"), M);
    for b in [
        "ffn_act_q8",
        "ffn_act_a",
        "ffn_act_scale",
        "ffn_act_scale_kmajor",
        "ffn_gate_up_fused",
    ] {
        assert_eq!(bytes_of(&moe, b), 0, "{b} on a MoE model");
    }
    assert!(moe.moe_fp8_scratch > 0);
    assert_eq!(dense.gdn_fla_scratch, 0, "no GDN");
    assert!(sizes(&load("qwen3-next-80b-a3b"), M).gdn_fla_scratch > 0);
    assert_eq!(dense.ssd_scratch, 0, "no Mamba-2");
    assert!(sizes(&load("nemotron-h-56b-base-8k"), M).ssd_scratch > 0);
    for b in ["q2_dequant_scratch", "q2_act_q8", "ssm_rowwise_w_bf16"] {
        assert_eq!(
            bytes_of(&sizes(&load("qwen3.5-27b"), M), b),
            0,
            "{b} with levers off"
        );
    }
    for b in ["lora_xa", "lora_delta", "lora_hact", "lora_seq_slot"] {
        assert_eq!(bytes_of(&dense, b), 0, "{b} at rank 0");
    }
    let mut on = load("qwen3.5-27b");
    on.levers = Levers::ALL_ON;
    on.adapter_max_rank = 16;
    let on = sizes(&on, M);
    for b in [
        "q2_dequant_scratch",
        "q2_act_q8",
        "ssm_rowwise_w_bf16",
        "lora_xa",
        "lora_delta",
        "lora_hact",
        "lora_seq_slot",
    ] {
        assert!(bytes_of(&on, b) > 0, "{b} with its lever or rank on");
    }
}

#[test]
fn floors_hold_where_the_feature_is_absent() {
    let s = sizes(&load("llama-3.1-8b"), M);
    for b in [
        "gate_logits_f32",
        "moe_router_in_f32",
        "hc_streams",
        "hc_post",
        "hc_comb",
        "hc_lowrank_scratch",
        "qsa_select_scratch",
        "o_latent",
    ] {
        assert_eq!(bytes_of(&s, b), 256, "{b}");
    }
    assert_eq!(
        sizes(&load("llama-3.1-8b"), 16).token_ids,
        256,
        "token_ids floors at 256 bytes"
    );
    let mamba = sizes(&mamba_fixture(), M);
    assert_eq!(
        (mamba.qkv_output, mamba.attn_output),
        (256, 256),
        "no attention layers"
    );
}

#[test]
fn the_report_marks_every_buffer_held_at_its_floor_shape_or_byte_formula() {
    let config = load("llama-3.1-8b");
    let (report, _) = SizeReport::new(&config, BufferArenaInputs::defaults_for(&config)).unwrap();
    let at_floor: Vec<&str> = report
        .buffers
        .iter()
        .filter(|b| b.at_floor)
        .map(|b| b.name)
        .collect();
    assert_eq!(
        at_floor,
        [
            "gate_logits",
            "gate_logits_f32",
            "moe_router_in_f32",
            "ssm_qkvz",
            "ssm_ba",
            "ssm_deinterleaved",
            "ssm_gates",
            "ssm_conv_out_f32",
            "o_latent",
            "hc_streams",
            "hc_post",
            "hc_comb",
            "hc_lowrank_scratch",
            "qsa_select_scratch",
        ],
        "llama has attention but no experts, SSM, hyper-connections or indexer; \
         hc_lowrank_scratch and qsa_select_scratch are byte formulas"
    );
    let synthetic = load("synthetic-all-features-moe");
    let (report, _) =
        SizeReport::new(&synthetic, BufferArenaInputs::defaults_for(&synthetic)).unwrap();
    assert!(report.buffers.iter().all(|b| !b.at_floor || b.bytes == 256));
}

#[test]
fn total_is_the_sum_of_all_but_o_latent_and_norm_unit_w() {
    for m in SHIPPED {
        let mut c = m.config_with_levers(Default::default()).unwrap();
        c.levers = Levers::ALL_ON;
        let s = sizes(&c, M);
        let all: usize = s.buffers().iter().map(|b| b.bytes).sum();
        assert_eq!(
            s.total_bytes(),
            all - s.o_latent - s.norm_unit_w,
            "{}",
            m.name
        );
    }
}

#[test]
fn token_buffers_scale_linearly_in_m() {
    let linear = [
        "hidden_states",
        "residual",
        "norm_output",
        "qkv_output",
        "attn_output",
        "moe_output",
        "expert_down_out",
        "fp8_act",
        "token_ids",
    ];
    for m in SHIPPED {
        let c = m.config_with_levers(Default::default()).unwrap();
        let (a, b) = (sizes(&c, 4096), sizes(&c, 8192));
        for name in linear {
            let (x, y) = (bytes_of(&a, name), bytes_of(&b, name));
            if x > 256 {
                assert_eq!(y, 2 * x, "{} {name}", m.name);
            }
        }
    }
}

#[test]
fn the_synthetic_configs_run_every_formula_above_its_floor() {
    let mut above = std::collections::BTreeMap::new();
    for m in SHIPPED.iter().filter(|m| m.is_synthetic()) {
        let mut c = m.config_with_levers(Default::default()).unwrap();
        // Every lever that opens a buffer (`scratch_by_format` only closes some).
        c.levers = Levers {
            scratch_by_format: false,
            ..Levers::ALL_ON
        };
        // The seeds' buffers: those beyond them are for layer kinds the seeds' engine (and
        // so the synthetic family) does not have, each exercised by its own vendor files.
        let buffers = sizes(&c, M).buffers();
        for b in &buffers[..arena_spec::arena::SEEDS_BUFFERS] {
            let floor = if b.decl.min_bytes.is_some() { 256 } else { 0 };
            *above.entry(b.decl.name).or_insert(false) |= b.bytes > floor;
        }
    }
    let below: Vec<_> = above
        .iter()
        .filter(|(_, &ok)| !ok)
        .map(|(n, _)| *n)
        .collect();
    assert!(below.is_empty(), "never above the floor: {below:?}");
}

#[test]
fn lora_hact_is_the_seeds_m_by_intermediate_size() {
    // The seeds: "LoRA hidden-activation scratch [M, intermediate_size] BF16".
    for name in ["synthetic-all-features-moe", "synthetic-all-features-dense"] {
        let c = load(name);
        assert!(c.adapter_max_rank > 0);
        assert_eq!(
            sizes(&c, M).lora_hact,
            M * c.intermediate_size * 2,
            "{name}"
        );
    }
}

/// The split-K partials have one row per token, so a MoE model's dense layers count at their
/// full gate+up width there (DeepSeek-V3: 2 × 18432, wider than q|k|v's 26688), not spread
/// over `top_k` rows as in the expert buffers.
#[test]
fn split_k_partials_hold_a_dense_layer_of_a_moe_model() {
    let c = load("deepseek-v3");
    assert_eq!(c.widest_ffn_n(), 18432);
    let s = sizes(&c, M);
    assert_eq!(s.splitk_workspace, 8 * 64 * (2 * 18432) * 4);
    // Without dense layers the widest is an expert's.
    let next = load("qwen3-next-80b-a3b");
    assert_eq!(next.widest_ffn_n(), next.expert_width());
}
