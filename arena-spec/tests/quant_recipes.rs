//! Quantization recipes read as vLLM reads them: ModelOpt's `hf_quant_config.json` beside a
//! `config.json` with none (and ignored beside one that has its own), inline ModelOpt recipes,
//! mixed precision, modules left in 16 bits, and the bytes of each format transcribed from
//! vLLM's `create_weights` shapes (`quantization/modelopt.py`). The recipes here are written
//! as NVIDIA's files spell them (`quantization.quant_algo`, `exclude_modules` patterns with
//! layer wildcards), over the shipped models' configs.

use arena_spec::models::SHIPPED;
use arena_spec::weights::{weight_bytes, WeightsSizes};
use arena_spec::{FormatSource, Levers, ModelConfig, WeightFormat, WeightFormats};
use std::path::Path;

fn text(name: &str) -> String {
    SHIPPED
        .iter()
        .find(|m| m.name == name)
        .unwrap()
        .json
        .to_string()
}

/// A shipped config with the side file `side` beside it.
fn with_side(config: &str, side: &str) -> ModelConfig {
    ModelConfig::from_json_strs_with_levers(
        config,
        Some((side, Path::new("hf_quant_config.json"))),
        "config.json",
        Levers::default(),
    )
    .unwrap()
}

/// 24 bytes of FP32 scales a declared matrix in the per-tensor formats (`weights/format.rs`).
const SCALES: u64 = 24;

#[test]
fn a_modelopt_fp8_side_file_prices_every_linear_at_a_byte() {
    // nvidia/Llama-3.1-70B-Instruct-FP8's recipe, over Llama-3.1-70B's config.
    let side = r#"{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8",
        "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}}"#;
    let c = with_side(&text("llama-3.1-70b"), side);
    assert_eq!(
        c.weight_formats,
        WeightFormats {
            source: FormatSource::HfQuantConfig,
            ..WeightFormats::uniform(WeightFormat::Fp8Tensor)
        }
    );
    // Transcribed: `[out, in]` FP8 bytes and the scales of each of a layer's seven matrices
    // (q, k, v, o, gate, up, down); embedding, head and norms in 16 bits.
    let (h, i, kv, layers, vocab) = (8192u64, 28672u64, 1024u64, 80u64, 128_256u64);
    let linears = 2 * h * h + 2 * kv * h + 3 * i * h + 7 * SCALES;
    let want = 2 * 2 * vocab * h + 2 * h + layers * (linears + 2 * 2 * h);
    assert_eq!(weight_bytes(&c).unwrap(), want);
    // Below its 16-bit twin, about half.
    let bf16 = weight_bytes(&ModelConfig::from_json_str(&text("llama-3.1-70b"), "x").unwrap());
    assert!(want < bf16.unwrap() * 11 / 20);
}

#[test]
fn the_side_file_is_read_only_where_config_json_has_no_recipe_and_from_a_directory() {
    let side = r#"{"quantization": {"quant_algo": "NVFP4", "group_size": 16}}"#;
    // DeepSeek-V3's own block-FP8 recipe stands: vLLM reads the side file only without one.
    let ds = with_side(&text("deepseek-v3"), side);
    assert!(matches!(
        ds.weight_formats.experts,
        WeightFormat::Fp8Block { .. }
    ));
    assert_eq!(ds.weight_formats.source, FormatSource::QuantizationConfig);
    // A checkpoint directory: its config.json and the side file beside it.
    let dir = std::env::temp_dir().join(format!("arena-recipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), text("qwen3-30b-a3b")).unwrap();
    std::fs::write(dir.join("hf_quant_config.json"), side).unwrap();
    for path in [dir.clone(), dir.join("config.json")] {
        let c = ModelConfig::load_with_levers(&path, Levers::default()).unwrap();
        assert_eq!(c.weight_formats.experts, WeightFormat::Nvfp4 { group: 16 });
        assert_eq!(c.weight_formats.source, FormatSource::HfQuantConfig);
    }
    // A side file that is not a recipe is the file's error, naming it.
    std::fs::write(dir.join("hf_quant_config.json"), "{\"producer\": {}}").unwrap();
    let e = ModelConfig::load_with_levers(&dir, Levers::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("hf_quant_config.json: missing field `quantization`"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn nvfp4_with_attention_excluded_prices_each_part_its_way() {
    // nvidia/DeepSeek-V3.1-NVFP4's recipe: attention's input projections and the MTP layer in
    // 16 bits, the output projection and every FFN in NVFP4.
    let mut file: serde_json::Value = serde_json::from_str(&text("deepseek-v3")).unwrap();
    file.as_object_mut().unwrap().remove("quantization_config");
    let side = r#"{"quantization": {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": [
        "lm_head", "model.layers.*.self_attn.q_a_proj", "model.layers.*.self_attn.q_b_proj",
        "model.layers.*.self_attn.kv_a_proj_with_mqa", "model.layers.*.self_attn.kv_b_proj",
        "model.layers.61*"]}}"#;
    let c = with_side(&file.to_string(), side);
    let f = &c.weight_formats;
    let nvfp4 = WeightFormat::Nvfp4 { group: 16 };
    assert_eq!(
        (
            f.attention,
            f.attention_out,
            f.dense_ffn,
            f.experts,
            f.shared_experts
        ),
        (WeightFormat::Bf16, nvfp4, nvfp4, nvfp4, nvfp4)
    );
    assert!(f.mtp_16_bit);
    // vLLM's `ModelOptNvFp4FusedMoE.create_weights`: `w2_weight` `[E, hidden, I / 2]` bytes,
    // `w2_weight_scale` `[E, hidden, I / 16]` E4M3, and the FP32 scales; 58 MoE layers.
    let s = WeightsSizes::new(&c, &c.weight_formats).unwrap();
    let (e, h, i) = (256usize, 7168usize, 2048usize);
    assert_eq!(
        s.ffn.experts_down,
        58 * (e * h * i / 2 + e * h * i / 16 + e * 24)
    );
    // The output projection `[hidden, heads · v]`, NVFP4; q_a in 16 bits.
    assert_eq!(s.latent.o_proj, 61 * (h * 16384 / 2 + h * 16384 / 16 + 24));
    assert_eq!(s.latent.q_a_proj, 61 * 2 * 1536 * h);
    // The MTP module is priced in 16 bits where loaded.
    let m = c.mtp_module().unwrap().unwrap();
    assert!(m.weight_formats.is_16_bit());
    // Below the FP8 checkpoint, above a fully NVFP4 one.
    let fp8 = weight_bytes(&ModelConfig::from_json_str(&text("deepseek-v3"), "x").unwrap());
    let all = WeightsSizes::new(&c, WeightFormats::uniform(nvfp4)).unwrap();
    let priced = weight_bytes(&c).unwrap();
    assert!(priced < fp8.unwrap() && priced > all.total_bytes());
}

#[test]
fn mixed_precision_gives_each_part_its_listed_algorithm() {
    // NVIDIA's Qwen3.6-35B-A3B recipe, inline: attention and the GDN mixers in FP8, the
    // experts in NVFP4, every layer listed; the MTP layer not listed stays 16-bit.
    let mut file: serde_json::Value = serde_json::from_str(&text("qwen3.5-35b-a3b")).unwrap();
    let mut layers = serde_json::Map::new();
    let fp8 = serde_json::json!({"quant_algo": "FP8"});
    let fp4 = serde_json::json!({"quant_algo": "W4A16_NVFP4", "group_size": 16});
    let p = "model.language_model.layers";
    for l in 0..40 {
        if l % 4 == 3 {
            for m in ["q_proj", "k_proj", "v_proj", "o_proj"] {
                layers.insert(format!("{p}.{l}.self_attn.{m}"), fp8.clone());
            }
        } else {
            for m in ["in_proj_qkv", "in_proj_z", "out_proj"] {
                layers.insert(format!("{p}.{l}.linear_attn.{m}"), fp8.clone());
            }
        }
        layers.insert(format!("{p}.{l}.mlp.experts"), fp4.clone());
        for m in ["gate_proj", "up_proj", "down_proj"] {
            layers.insert(format!("{p}.{l}.mlp.shared_expert.{m}"), fp4.clone());
        }
    }
    file["quantization_config"] = serde_json::json!({
        "quant_method": "modelopt", "quant_algo": "MIXED_PRECISION",
        "quantized_layers": layers, "ignore": ["lm_head", "mtp*"]});
    let c = ModelConfig::from_json_str(&file.to_string(), "qwen36.json").unwrap();
    let f = &c.weight_formats;
    let nvfp4 = WeightFormat::Nvfp4 { group: 16 };
    assert_eq!(
        (
            f.attention,
            f.attention_out,
            f.mixers,
            f.experts,
            f.shared_experts
        ),
        (
            WeightFormat::Fp8Tensor,
            WeightFormat::Fp8Tensor,
            WeightFormat::Fp8Tensor,
            nvfp4,
            nvfp4
        )
    );
    assert_eq!(f.source, FormatSource::QuantizationConfig);
    // One layer's experts unlisted: vLLM leaves that layer's experts unquantized, and the
    // part is priced in 16 bits (never below).
    let experts = format!("{p}.7.mlp.experts");
    file["quantization_config"]["quantized_layers"]
        .as_object_mut()
        .unwrap()
        .remove(&experts);
    let c = ModelConfig::from_json_str(&file.to_string(), "qwen36.json").unwrap();
    assert_eq!(c.weight_formats.experts, WeightFormat::Bf16);
}

#[test]
fn a_recipe_without_a_formula_is_refused_naming_its_key_and_format() {
    let cases = [
        (
            r#"{"quant_method": "bitsandbytes", "load_in_4bit": true}"#,
            "quantization_config.quant_method is \"bitsandbytes\"",
        ),
        (
            r#"{"group_size": 64, "bits": 4}"#,
            "has `bits` and no quant_method (MLX's quantization)",
        ),
        (
            r#"{"quant_method": "gptq", "bits": 3, "group_size": 128}"#,
            "GPTQ without 4 or 8 bits",
        ),
        (
            r#"{"quant_method": "compressed-tensors", "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128}, "input_activations": {"num_bits": 8, "type": "int"}}}}"#,
            "weights of type \"int\", 4 bits, strategy \"group\", quantized activations",
        ),
        (
            r#"{"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"}"#,
            "quantization_config.quant_algo is \"W4A8_AWQ\"",
        ),
        (
            r#"{"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "quantized_layers": {"model.layers.0.mlp.down_proj": {"quant_algo": "INT4_AWQ"}}}"#,
            "quantized_layers.model.layers.0.mlp.down_proj.quant_algo is \"INT4_AWQ\"",
        ),
    ];
    for (recipe, said) in cases {
        let mut file: serde_json::Value = serde_json::from_str(&text("qwen3-0.6b")).unwrap();
        file["quantization_config"] = serde_json::from_str(recipe).unwrap();
        let c = ModelConfig::from_json_str(&file.to_string(), "q.json").unwrap();
        assert!(c.weight_formats.is_unplanned(), "{recipe}");
        let e = weight_bytes(&c).unwrap_err().to_string();
        assert!(e.contains(said) && e.contains("--weights-bytes"), "{e}");
    }
    // A recipe that is not an object, or a module list that is not strings, is the file's error.
    let mut file: serde_json::Value = serde_json::from_str(&text("qwen3-0.6b")).unwrap();
    file["quantization_config"] = serde_json::json!({"quant_method": "fp8", "ignored_layers": [3]});
    let e = ModelConfig::from_json_str(&file.to_string(), "q.json").unwrap_err();
    assert!(
        e.to_string().contains("quantization_config.ignored_layers"),
        "{e}"
    );
}

#[test]
fn every_shipped_recipe_is_priced_below_its_16_bit_twin() {
    let mut priced = 0;
    for m in SHIPPED {
        let c = m.config().unwrap();
        if c.weight_formats.source == FormatSource::None || c.weight_formats.is_unplanned() {
            continue;
        }
        let Ok(bytes) = weight_bytes(&c) else {
            continue; // a family whose parameters are not counted: refused by name elsewhere
        };
        let bf16 = WeightsSizes::new(&c, WeightFormat::Bf16)
            .unwrap()
            .total_bytes();
        assert!(bytes < bf16, "{}: {bytes} >= {bf16}", m.name);
        priced += 1;
    }
    assert!(priced >= 8, "{priced}");
}

/// Qwen/Qwen3-VL-30B-A3B-Thinking-FP8: its `config.json` is the shipped BF16 file with a
/// block-FP8 `quantization_config` whose `ignored_layers` name the head, the vision tower's
/// modules and every layer's router (`model.language_model.layers.{i}.mlp.gate`), written out
/// here; its four shards hold 32,251,808,224 bytes of tensors (the per-tensor log the
/// InJuly7/Qwen3-VL-MoE repository keeps at ffbb191fb2bcf4a70dd1d7810ce1638e5e2e27c9,
/// `config/qwen3-VL-30B-A3B-thinking-fp8_log`, 1,170 tensors, summed).
#[test]
fn a_published_block_fp8_checkpoint_is_its_tensors_to_the_byte() {
    let mut file: serde_json::Value =
        serde_json::from_str(&text("qwen3-vl-30b-a3b-thinking")).unwrap();
    let mut ignored: Vec<String> = vec!["lm_head".into(), "model.visual.merger.linear_fc1".into()];
    ignored.extend((0..48).map(|i| format!("model.language_model.layers.{i}.mlp.gate")));
    file["quantization_config"] = serde_json::json!({
        "activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
        "weight_block_size": [128, 128], "ignored_layers": ignored});
    let c = ModelConfig::from_json_str(&file.to_string(), "qwen3-vl-fp8.json").unwrap();
    assert_eq!(
        c.weight_formats.experts,
        WeightFormat::Fp8Block {
            rows: 128,
            cols: 128
        }
    );
    let arena = arena_spec::BufferArenaInputs {
        max_seq_len: 4096,
        ..arena_spec::BufferArenaInputs::defaults_for(&c)
    };
    let plan = arena_spec::gpu_plan::plan_gpu(
        &c,
        &arena_spec::ParallelLayout::new(1, 1, 1).unwrap(),
        arena_spec::gpu_plan::GpuPlanInputs::new(1 << 50, arena),
    )
    .unwrap();
    // The text model in block FP8 and the vision tower in 16 bits.
    assert_eq!(plan.ranks[0].weights_exact_bytes, 32_251_808_224);
}

/// The 16-bit scales, packed words and zero points of integer groups, transcribed from vLLM's
/// `create_weights` for Qwen3-0.6B's `q_proj` `[2048, 1024]` (16 heads of 128 from 1024).
/// Qwen3-0.6B with `recipe` as its `quantization_config`, and one layer's `q_proj` bytes
/// (`[2048, 1024]`; 28 layers).
fn q_proj_priced(recipe: &str) -> (ModelConfig, usize) {
    let mut file: serde_json::Value = serde_json::from_str(&text("qwen3-0.6b")).unwrap();
    file["quantization_config"] = serde_json::from_str(recipe).unwrap();
    let c = ModelConfig::from_json_str(&file.to_string(), "q.json").unwrap();
    let s = WeightsSizes::new(&c, &c.weight_formats).unwrap();
    let q = s.attention.q_proj / 28;
    (c, q)
}

#[test]
fn awq_gptq_and_compressed_tensors_groups_cost_what_vllm_allocates() {
    let (out, inp) = (2048usize, 1024usize);
    let priced = |recipe: &str| q_proj_priced(recipe);
    // AWQ: `qweight` `[in, out / 8]` int32, `qzeros` `[in / 128, out / 8]` int32, `scales`
    // `[in / 128, out]` 16-bit; 24 bytes of the format's bound beside them.
    let (c, q) = priced(
        r#"{"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true,
        "modules_to_not_convert": ["self_attn.o_proj"]}"#,
    );
    assert_eq!(
        q,
        inp * out / 8 * 4 + inp / 128 * out / 8 * 4 + inp / 128 * out * 2 + 24
    );
    // Matched as a substring, as vLLM's AWQ matches it: every layer's o_proj is 16-bit.
    assert_eq!(c.weight_formats.attention_out, WeightFormat::Bf16);
    // GPTQ: the same and `g_idx` `[in]` int32.
    let (_, q) = priced(
        r#"{"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": false, "sym": true}"#,
    );
    assert_eq!(
        q,
        inp * out / 8 * 4 + inp / 128 * out / 8 * 4 + inp / 128 * out * 2 + 4 * inp + 24
    );
    // compressed-tensors W4A16, symmetric: no zero points; its `ignore` regexes.
    let (c, q) = priced(
        r#"{"quant_method": "compressed-tensors", "format": "pack-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": null,
        "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 32, "symmetric": true}}},
        "ignore": ["lm_head", "re:.*mlp\\.down_proj.*"]}"#,
    );
    assert_eq!(q, out * inp / 8 * 4 + out * inp / 32 * 2 + 24);
    assert_eq!(c.weight_formats.dense_ffn, WeightFormat::Bf16);
}

/// GPTQModel's `dynamic` rules as vLLM reads them: `-:` rules leave the modules they name in
/// 16 bits; a rule changing bits or groups is refused naming itself; one restating the base
/// recipe changes nothing.
#[test]
fn gptq_dynamic_rules_skip_modules_and_refuse_other_bits() {
    let formats = |dynamic: &str| {
        let mut file: serde_json::Value = serde_json::from_str(&text("qwen3-0.6b")).unwrap();
        file["quantization_config"] = serde_json::from_str(&format!(
            r#"{{"quant_method": "gptq", "bits": 4, "group_size": 128, "dynamic": {dynamic}}}"#
        ))
        .unwrap();
        ModelConfig::from_json_str(&file.to_string(), "q.json").map(|c| c.weight_formats)
    };
    let int4 = WeightFormat::IntGroup {
        bits: 4,
        group: 128,
        zeros: true,
        row_index: true,
    };
    let f = formats(r#"{"-:.*mlp\\.down_proj": {}, "+:.*self_attn.*": {"bits": 4}}"#).unwrap();
    assert_eq!(
        f.dense_ffn,
        WeightFormat::Bf16,
        "every layer's down_proj is 16-bit"
    );
    assert_eq!((f.attention, f.attention_out), (int4, int4));
    let f = formats(r#"{"+:.*self_attn.*": {"bits": 8, "group_size": 128}}"#).unwrap();
    assert!(f.is_unplanned());
    assert!(f.unplanned.unwrap().contains("dynamic.+:.*self_attn.*"));
    assert!(
        formats(r#"{"-:(": {}}"#).is_err(),
        "not a regular expression"
    );
    assert!(formats("[1]").is_err(), "not an object");
}

/// RedHatAI's `FP8-dynamic` and `quantized.w8a8` recipes (compressed-tensors, one group over
/// `Linear`, the head ignored), and ModelOpt's per-channel FP8: one byte an element and an
/// FP32 scale an output row, or a shard's scales only.
#[test]
fn per_channel_fp8_and_w8a8_int8_cost_a_byte_an_element_and_their_scales() {
    let (out, inp) = (2048usize, 1024usize);
    let priced = |recipe: &str| {
        let (c, q) = q_proj_priced(recipe);
        (c.weight_formats.dense_ffn, q)
    };
    let group = |weights: &str, activations: &str| {
        format!(
            r#"{{"quant_method": "compressed-tensors", "format": "float-quantized",
            "config_groups": {{"group_0": {{"targets": ["Linear"],
            "weights": {weights}, "input_activations": {activations}}}}}, "ignore": ["lm_head"]}}"#
        )
    };
    let fp8_dynamic = group(
        r#"{"num_bits": 8, "type": "float", "strategy": "channel", "dynamic": false, "symmetric": true}"#,
        r#"{"num_bits": 8, "type": "float", "strategy": "token", "dynamic": true, "symmetric": true}"#,
    );
    assert_eq!(
        priced(&fp8_dynamic),
        (WeightFormat::Fp8Channel, out * inp + 4 * out + 24)
    );
    let w8a8 = group(
        r#"{"num_bits": 8, "type": "int", "strategy": "channel", "dynamic": false, "symmetric": true}"#,
        r#"{"num_bits": 8, "type": "int", "strategy": "token", "dynamic": true, "symmetric": true}"#,
    );
    let per_channel = WeightFormat::Int8 { per_channel: true };
    assert_eq!(priced(&w8a8), (per_channel, out * inp + 4 * out + 24));
    let w8a8_tensor = group(
        r#"{"num_bits": 8, "type": "int", "strategy": "tensor", "dynamic": false, "symmetric": true}"#,
        r#"{"num_bits": 8, "type": "int", "strategy": "tensor", "dynamic": false, "symmetric": true}"#,
    );
    let per_tensor = WeightFormat::Int8 { per_channel: false };
    assert_eq!(priced(&w8a8_tensor), (per_tensor, out * inp + 24));
    // INT8 weights with 16-bit activations are W8A16 groups, not W8A8.
    let w8a16 = group(
        r#"{"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": true}"#,
        "null",
    );
    assert!(matches!(
        priced(&w8a16).0,
        WeightFormat::IntGroup { bits: 8, .. }
    ));
    let modelopt = r#"{"quant_method": "modelopt", "quant_algo": "FP8_PER_CHANNEL_PER_TOKEN",
        "ignore": ["lm_head"]}"#;
    assert_eq!(
        priced(modelopt),
        (WeightFormat::Fp8Channel, out * inp + 4 * out + 24)
    );
    let pb_wo = r#"{"quant_method": "modelopt", "quant_algo": "FP8_PB_WO"}"#;
    let blocks = (out / 128) * (inp / 128) * 4;
    let block = WeightFormat::Fp8Block {
        rows: 128,
        cols: 128,
    };
    assert_eq!(priced(pb_wo), (block, out * inp + blocks));
}

/// Kimi-K2.5's INT4 recipe as shipped: its routed experts in groups of 32, attention,
/// shared experts and the dense layer in 16 bits (`ignore`: `re:.*self_attn.*`,
/// `re:.*shared_experts.*`, `re:.*mlp\.(gate|up|gate_up|down)_proj.*`).
#[test]
fn kimi_k2_5s_int4_experts_are_priced_and_the_rest_is_16_bit() {
    let c = SHIPPED
        .iter()
        .find(|m| m.name == "kimi-k2.5")
        .unwrap()
        .config()
        .unwrap();
    let f = &c.weight_formats;
    let int4 = WeightFormat::IntGroup {
        bits: 4,
        group: 32,
        zeros: false,
        row_index: false,
    };
    assert_eq!(
        (
            f.attention,
            f.attention_out,
            f.dense_ffn,
            f.experts,
            f.shared_experts
        ),
        (
            WeightFormat::Bf16,
            WeightFormat::Bf16,
            WeightFormat::Bf16,
            int4,
            WeightFormat::Bf16
        )
    );
    // `w2_weight_packed` `[E, hidden, I / 8]` int32, `w2_weight_scale` `[E, hidden, I / 32]`
    // 16-bit: 60 MoE layers of 384 experts, hidden 7168, width 2048.
    let s = WeightsSizes::new(&c, &c.weight_formats).unwrap();
    let (e, h, i) = (384usize, 7168usize, 2048usize);
    assert_eq!(
        s.ffn.experts_down,
        60 * e * (h * i / 2 + h * i / 32 * 2 + 24)
    );
    let bf16 = WeightsSizes::new(&c, WeightFormat::Bf16)
        .unwrap()
        .total_bytes();
    assert!(s.total_bytes() < bf16 * 3 / 10);
}
