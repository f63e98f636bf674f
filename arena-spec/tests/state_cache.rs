//! The sequence-state cache against its reference: vLLM's `MambaStateShapeCalculator` and
//! `MambaStateDtypeCalculator` (`vllm/model_executor/layers/mamba/mamba_utils.py`, vLLM at
//! `02d71083`), transcribed below as functions of the raw config keys and evaluated on each
//! shipped hybrid model's own `config.json` (read here with `serde_json`, not through
//! `ModelConfig`), whole and per rank of a tensor-parallel layout. `num_spec` is 0.

use arena_runtime::HostDevice;
use arena_spec::{ModelConfig, ParallelLayout, StateCache, StateCacheSizes, StateDtype};
use serde_json::Value;

use crate::shipped;
use shipped::{at_tp, config, n, raw};

const SLOTS: usize = 128;

fn sizes(c: &ModelConfig, recurrent_f32: bool) -> StateCacheSizes {
    let dtype = if recurrent_f32 {
        StateDtype::F32
    } else {
        StateDtype::Bf16
    };
    StateCacheSizes::from_config(c, SLOTS, dtype)
}

// ---- vLLM's calculators (shapes), by the names it gives their arguments ----

/// `gated_delta_net_state_shape`: (conv, temporal).
fn gdn_shapes(
    tp: usize,
    k_heads: usize,
    v_heads: usize,
    k_dim: usize,
    v_dim: usize,
    conv: usize,
) -> ([usize; 2], [usize; 3]) {
    let conv_dim = k_dim * k_heads * 2 + v_dim * v_heads;
    ([conv - 1, conv_dim / tp], [v_heads / tp, v_dim, k_dim])
}

/// `mamba2_state_shape` with `extra_groups_for_head_shards`.
fn mamba2_shapes(
    tp: usize,
    intermediate: usize,
    groups: usize,
    heads: usize,
    head_dim: usize,
    state: usize,
    conv: usize,
) -> ([usize; 2], [usize; 3]) {
    let groups = groups
        + if groups.is_multiple_of(tp) {
            0
        } else {
            tp - groups
        };
    let conv_dim = intermediate + 2 * groups * state;
    ([conv - 1, conv_dim / tp], [heads / tp, head_dim, state])
}

/// `short_conv_state_shape`.
fn short_conv_shape(tp: usize, intermediate: usize, conv: usize) -> [usize; 2] {
    [conv - 1, intermediate / tp]
}

/// `linear_attention_state_shape`.
fn linear_attention_shape(heads: usize, tp: usize, head_dim: usize) -> [usize; 3] {
    [heads / tp, head_dim, head_dim]
}

/// `kda_state_shape` (k heads and dims default to the heads and head dim).
fn kda_shapes(tp: usize, heads: usize, head_dim: usize, conv: usize) -> ([usize; 2], [usize; 3]) {
    let conv_dim = heads * head_dim + 2 * heads * head_dim;
    ([conv - 1, conv_dim / tp], [heads / tp, head_dim, head_dim])
}

fn bytes(shape: &[usize], dtype_bytes: usize) -> usize {
    shape.iter().product::<usize>() * dtype_bytes
}

#[test]
fn gated_deltanet_states_are_vllms() {
    for name in [
        "qwen3-next-80b-a3b",
        "qwen3-next-80b-a3b-thinking",
        "qwen3.5-27b",
        "qwen3.5-35b-a3b",
    ] {
        let v = raw(name);
        let layers = match v.get("layer_types").and_then(Value::as_array) {
            Some(types) => types.iter().filter(|t| *t == "linear_attention").count(),
            None => {
                let interval = n(&v, "full_attention_interval");
                (0..n(&v, "num_hidden_layers"))
                    .filter(|i| (i + 1) % interval != 0)
                    .count()
            }
        };
        for tp in [1, 2, 8] {
            let (conv, temporal) = gdn_shapes(
                tp,
                n(&v, "linear_num_key_heads"),
                n(&v, "linear_num_value_heads"),
                n(&v, "linear_key_head_dim"),
                n(&v, "linear_value_head_dim"),
                n(&v, "linear_conv_kernel_dim"),
            );
            let c = at_tp(name, tp);
            // Model dtype (mamba_ssm_cache_dtype "auto") and FP32.
            for (f32_state, temporal_bytes) in [(false, 2), (true, 4)] {
                let s = sizes(&c, f32_state);
                assert_eq!(
                    s.gdn_conv,
                    layers * SLOTS * bytes(&conv, 2),
                    "{name} tp {tp}"
                );
                let recurrent = s.gdn_recurrent_f32 + s.gdn_recurrent_bf16;
                assert_eq!(
                    recurrent,
                    layers * SLOTS * bytes(&temporal, temporal_bytes),
                    "{name} tp {tp}"
                );
                assert_eq!(
                    (s.gdn_recurrent_f32 > 0, s.gdn_recurrent_bf16 > 0),
                    (f32_state, !f32_state)
                );
            }
        }
    }
    // One Qwen3-Next GDN layer at tp 1 (conv BF16, state FP32) holds 3 · 8192 · 2 + 32 · 128 ·
    // 128 · 4 bytes a sequence; the README's figure: 36 GDN layers, 128 slots, nothing else.
    let s = sizes(&config("qwen3-next-80b-a3b"), true);
    assert_eq!(
        s.total_bytes(),
        36 * SLOTS * (3 * 8192 * 2 + 32 * 128 * 128 * 4)
    );
}

#[test]
fn mamba2_states_are_vllms() {
    for name in ["nemotron-h-56b-base-8k", "nemotron-3-nano-30b-a3b"] {
        let v = raw(name);
        let layers = v["hybrid_override_pattern"]
            .as_str()
            .unwrap()
            .chars()
            .filter(|&ch| ch == 'M')
            .count();
        let (heads, head_dim) = (n(&v, "mamba_num_heads"), n(&v, "mamba_head_dim"));
        for tp in [1, 2, 8] {
            let (conv, temporal) = mamba2_shapes(
                tp,
                heads * head_dim,
                n(&v, "n_groups"),
                heads,
                head_dim,
                n(&v, "ssm_state_size"),
                n(&v, "conv_kernel"),
            );
            let s = sizes(&at_tp(name, tp), true);
            assert_eq!(
                s.mamba_conv,
                layers * SLOTS * bytes(&conv, 2),
                "{name} tp {tp}"
            );
            assert_eq!(
                s.mamba_ssm_f32,
                layers * SLOTS * bytes(&temporal, 4),
                "{name} tp {tp}"
            );
            assert_eq!(s.mamba_ssm_bf16, 0);
        }
    }
}

#[test]
fn short_conv_lightning_and_kda_states_are_vllms() {
    // LFM2: `conv_dim` is the hidden size in its files and in transformers' module.
    for name in ["lfm2-1.2b", "lfm2.5-1.2b-base"] {
        let v = raw(name);
        let layers = match v.get("layer_types").and_then(Value::as_array) {
            Some(types) => types.iter().filter(|t| *t == "conv").count(),
            None => n(&v, "num_hidden_layers") - v["full_attn_idxs"].as_array().unwrap().len(),
        };
        for tp in [1, 2, 8] {
            let shape = short_conv_shape(tp, n(&v, "conv_dim"), n(&v, "conv_L_cache"));
            let s = sizes(&at_tp(name, tp), false);
            assert_eq!(
                s.short_conv,
                layers * SLOTS * bytes(&shape, 2),
                "{name} tp {tp}"
            );
        }
    }
    // MiniMax-M1: a lightning layer where `attn_type_list` is 0.
    let v = raw("minimax-m1");
    let layers = v["attn_type_list"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t.as_u64() == Some(0))
        .count();
    for tp in [1, 2, 8] {
        let shape = linear_attention_shape(n(&v, "num_attention_heads"), tp, n(&v, "head_dim"));
        let s = sizes(&at_tp("minimax-m1", tp), true);
        assert_eq!(s.lightning, layers * SLOTS * bytes(&shape, 2), "tp {tp}");
    }
    // Kimi-Linear: its `linear_attn_config`, conv state in the model dtype, recurrent FP32.
    let v = raw("kimi-linear-48b-a3b-instruct");
    let lac = &v["linear_attn_config"];
    let layers = lac["kda_layers"].as_array().unwrap().len();
    for tp in [1, 2, 8] {
        let (conv, recurrent) = kda_shapes(
            tp,
            n(lac, "num_heads"),
            n(lac, "head_dim"),
            n(lac, "short_conv_kernel_size"),
        );
        // Whatever the lever, KDA's recurrent state is FP32.
        for lever in [false, true] {
            let s = sizes(&at_tp("kimi-linear-48b-a3b-instruct", tp), lever);
            assert_eq!(s.kda_conv, layers * SLOTS * bytes(&conv, 2), "tp {tp}");
            assert_eq!(
                s.kda_recurrent,
                layers * SLOTS * bytes(&recurrent, 4),
                "tp {tp}"
            );
        }
    }
}

#[test]
fn a_model_without_recurrent_layers_keeps_no_state_and_a_stage_only_its_own() {
    let s = sizes(&config("llama-3.1-8b"), true);
    assert_eq!(s.total_bytes(), 0);
    let cache = StateCache::allocate(HostDevice::new(), &s).unwrap();
    assert!(cache.gdn_conv.is_null() && cache.kda_recurrent.is_null());
    cache.release().unwrap();
    // Pipeline stages: the stages' states add up to the whole model's.
    let whole = sizes(&config("qwen3-next-80b-a3b"), true).total_bytes();
    let layout = ParallelLayout::new(1, 1, 4).unwrap();
    let staged: usize = (0..4)
        .map(|i| {
            let c = config("qwen3-next-80b-a3b")
                .shard(&layout.rank(i).unwrap())
                .unwrap();
            sizes(&c, true).total_bytes()
        })
        .sum();
    assert_eq!(staged, whole);
}

#[test]
fn each_layers_state_is_its_own_view() {
    let c = config("kimi-linear-48b-a3b-instruct");
    let s = StateCacheSizes::from_config(&c, 2, StateDtype::Bf16);
    let cache = StateCache::allocate(HostDevice::new(), &s).unwrap();
    let views = arena_spec::state::StateCacheViews::of(&cache);
    let layers = c.num_kda_layers();
    let last = views.kda_recurrent.layer(layers - 1).unwrap();
    assert_eq!(last.shape(), [2, 32, 128, 128]);
    assert_eq!(
        last.as_raw(),
        cache.kda_recurrent.as_raw() + ((layers - 1) * 2 * 32 * 128 * 128 * 4) as u64
    );
    assert!(views.kda_recurrent.layer(layers).is_err());
    cache.release().unwrap();
}

// ---- the temporal state's dtype: vLLM's hooks, transcribed over the raw file ----

/// The `mamba_ssm_cache_dtype` vLLM v0.33.0 (`4ba787ec9`) resolves for a file before it builds
/// the cache, as bytes an element of the temporal state (`"auto"`: the model's 16 bits):
/// `vllm/model_executor/models/config.py`, `NemotronHForCausalLMConfig` (812–839: the
/// top-level `mamba_ssm_cache_dtype`, default `"float32"`) and
/// `Qwen3_5ForConditionalGenerationConfig` (953–977: `hf_text_config.mamba_ssm_dtype`, no
/// default); every other family keeps `"auto"` (`mamba_utils.py`: 98–110).
fn vllm_temporal_state_bytes(file: &Value) -> usize {
    let text = file.get("text_config").unwrap_or(file);
    let key = match file["model_type"].as_str().unwrap_or("") {
        "nemotron_h" => Some(
            file.get("mamba_ssm_cache_dtype")
                .map_or("float32", |v| v.as_str().unwrap()),
        ),
        "qwen3_5" | "qwen3_5_moe" | "qwen3_5_text" | "qwen3_5_moe_text" => {
            text.get("mamba_ssm_dtype").and_then(Value::as_str)
        }
        _ => None,
    };
    match key {
        Some("float32") => 4,
        Some("bfloat16" | "float16" | "auto") | None => 2,
        Some(other) => panic!("a dtype vLLM does not take: {other}"),
    }
}

/// Every shipped hybrid model and every test fixture with GDN or Mamba-2 layers, whole and at
/// tp 2 and 8 where the layout splits it: the plan's default state cache (no override) is the
/// one vLLM allocates for the file — its temporal states at vLLM's dtype, never below it.
#[test]
fn the_default_state_dtype_is_vllms_for_every_hybrid_file() {
    use arena_spec::gpu_plan::{on_device, plan_gpu, GpuPlanInputs, DEVICE_PAGE};
    use arena_spec::BufferArenaInputs;
    let fixtures = [
        "mamba-codestral-7b.transcribed",
        "nemotron-3-super-120b-a12b-fp8.rewritten",
        "nemotron-3-ultra-550b-a55b.rewritten",
    ];
    let mut files: Vec<(String, String)> = arena_spec::models::SHIPPED
        .iter()
        .map(|m| (m.name.to_string(), m.json.to_string()))
        .collect();
    for name in fixtures {
        let path = format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
        files.push((path.clone(), std::fs::read_to_string(&path).unwrap()));
    }
    let mut checked = Vec::new();
    for (name, text) in &files {
        let whole = ModelConfig::from_json_str(text, name).unwrap();
        if !(whole.has_gdn() || whole.has_mamba()) {
            continue;
        }
        let file: Value = serde_json::from_str(&text.replace("Infinity", "1e308")).unwrap();
        let vllm = vllm_temporal_state_bytes(&file);
        assert_eq!(
            whole.recurrent_state_dtype.dtype.bytes(),
            vllm,
            "{name}: {:?}",
            whole.recurrent_state_dtype
        );
        let vllm_dtype = if vllm == 4 {
            StateDtype::F32
        } else {
            StateDtype::Bf16
        };
        for tp in [1, 2, 8] {
            let Ok(layout) = ParallelLayout::new(tp, 1, 1) else {
                continue;
            };
            let Ok(rank) = whole.shard(&layout.rank(0).unwrap()) else {
                continue; // a split the model's heads refuse
            };
            let inputs = GpuPlanInputs {
                weights_bytes_per_rank: Some(1 << 30),
                ..GpuPlanInputs::new(1 << 50, BufferArenaInputs::defaults_for(&whole))
            };
            let plan = plan_gpu(&whole, &layout, inputs).unwrap();
            let slots = inputs.arena.max_batch_size;
            let vllm_cache = StateCacheSizes::from_config(&rank, slots, vllm_dtype);
            assert_eq!(
                plan.ranks[0].state_bytes,
                on_device(vllm_cache.total_bytes() as u64),
                "{name} tp {tp}"
            );
            assert!(vllm_cache.total_bytes() as u64 > DEVICE_PAGE, "{name}");
            checked.push((name.clone(), tp, vllm));
        }
    }
    // Nemotron-H 56B (no key: the family's FP32), Nemotron-3 Nano and the fixtures (the key),
    // Qwen3.5 (`text_config.mamba_ssm_dtype`) at FP32; Qwen3-Next and Mamba-2 in BF16.
    let f32_files: std::collections::BTreeSet<_> = checked
        .iter()
        .filter(|c| c.2 == 4)
        .map(|c| c.0.rsplit('/').next().unwrap().to_string())
        .collect();
    for expected in [
        "nemotron-h-56b-base-8k",
        "nemotron-3-nano-30b-a3b",
        "qwen3.5-27b",
        "qwen3.5-35b-a3b",
        "nemotron-3-ultra-550b-a55b.rewritten.json",
    ] {
        assert!(f32_files.contains(expected), "{expected}: {f32_files:?}");
    }
    assert!(!f32_files.iter().any(|f| f.starts_with("qwen3-next")));
}

/// Where each dtype was read, as the report names it.
#[test]
fn the_state_dtype_says_where_it_came_from() {
    use arena_spec::{RecurrentStateDtype, StateDtypeSource};
    let source = |name: &str| config(name).recurrent_state_dtype.source;
    assert_eq!(
        source("nemotron-h-56b-base-8k"),
        StateDtypeSource::FamilyDefault
    );
    assert_eq!(
        source("nemotron-3-nano-30b-a3b"),
        StateDtypeSource::Key("mamba_ssm_cache_dtype")
    );
    assert_eq!(
        source("qwen3.5-27b"),
        StateDtypeSource::Key("text_config.mamba_ssm_dtype")
    );
    assert_eq!(source("qwen3-next-80b-a3b"), StateDtypeSource::ModelDtype);
    assert_eq!(source("llama-3.1-8b"), StateDtypeSource::ModelDtype);
    // An override in either direction, and a dtype the engines do not take refused by key.
    let nemotron = config("nemotron-h-56b-base-8k").recurrent_state_dtype;
    assert_eq!(
        nemotron.or_override(Some(StateDtype::Bf16)),
        RecurrentStateDtype {
            dtype: StateDtype::Bf16,
            source: StateDtypeSource::Override
        }
    );
    let text = arena_spec::models::find("qwen3.5-27b")
        .unwrap()
        .json
        .replace(
            "\"mamba_ssm_dtype\": \"float32\"",
            "\"mamba_ssm_dtype\": \"int8\"",
        );
    let e = ModelConfig::from_json_str(&text, "q.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("text_config.mamba_ssm_dtype") && e.contains("int8"),
        "{e}"
    );
    let auto = text.replace("\"int8\"", "\"auto\"");
    let c = ModelConfig::from_json_str(&auto, "q.json").unwrap();
    assert_eq!(c.recurrent_state_dtype, RecurrentStateDtype::MODEL_DTYPE);
}

/// FAMILIES.md's figure for vLLM's state page padding (`platforms/interface.py`:
/// 1057–1128): Nemotron-3-Nano at tp 1, one layer's states of one sequence padded to a whole
/// number of the attention's pages at the raised block size.
#[test]
fn vllms_state_padding_is_the_figure_families_md_gives() {
    let c = config("nemotron-3-nano-30b-a3b");
    let slot = StateCacheSizes::from_config(&c, 1, c.recurrent_state_dtype.dtype);
    let mamba_page = (slot.total_bytes() / c.num_mamba_layers()) as u64;
    let per_token = (c.full_kv_token_width() * 2) as u64; // one attention layer, BF16
    let align = 16u64;
    let block = align * mamba_page.div_ceil(align * per_token);
    assert_eq!((mamba_page, per_token, block), (2_134_016, 1_024, 2_096));
    assert_eq!(block * per_token - mamba_page, 12_288);
}
