//! Each family rule of `family.rs` on a file that exercises it: the shipped vendor files
//! with one key changed, as the reference (transformers 5.24.0) reads them. The expected
//! numbers are the reference's, quoted from its configuration and modeling files.

use arena_spec::models::find;
use arena_spec::{ConfigError, Levers, ModelConfig};
use serde_json::{json, Value};

fn shipped_json(name: &str) -> Value {
    let text = find(name).unwrap().json.replace("Infinity", "1e308");
    serde_json::from_str(&text).unwrap()
}

fn load(v: &Value) -> Result<ModelConfig, ConfigError> {
    ModelConfig::from_json_str_with_levers(&v.to_string(), "edited.json", Levers::default())
}

#[test]
fn qwen3_5_gates_its_attention_output_whatever_the_file_says() {
    // Qwen3_5Attention: q_proj is heads · head_dim · 2 (query and gate); there is no key.
    let mut v = shipped_json("qwen3.5-27b");
    v["text_config"]
        .as_object_mut()
        .unwrap()
        .remove("attn_output_gate");
    let c = load(&v).unwrap();
    assert_eq!(c.q_proj_width(), 24 * 256 * 2);
    assert_eq!(
        c.position_streams(),
        3,
        "Qwen3.5's rotary embedding always takes three"
    );
}

#[test]
fn nemotron_h_reads_the_mamba_spellings_over_the_plain_ones() {
    // NemotronHConfig.__post_init__: `mamba_n_groups` replaces `n_groups`.
    let mut v = shipped_json("nemotron-3-nano-30b-a3b");
    v["mamba_n_groups"] = json!(4);
    let c = load(&v).unwrap();
    assert_eq!(c.mamba_n_groups, 4);
    assert_eq!(c.mamba_conv_dim(), 64 * 64 + 2 * 4 * 128);
    // Without either, the class default 8; the chunk defaults to 128.
    v.as_object_mut().unwrap().remove("mamba_n_groups");
    v.as_object_mut().unwrap().remove("n_groups");
    v.as_object_mut().unwrap().remove("chunk_size");
    let c = load(&v).unwrap();
    assert_eq!((c.mamba_n_groups, c.mamba_chunk()), (8, 128));
}

#[test]
fn nemotron_h_takes_its_layer_count_from_the_layer_list() {
    // NemotronHConfig.num_hidden_layers is len(layers_block_type); the file's is ignored.
    let mut v = shipped_json("nemotron-h-56b-base-8k");
    v["num_hidden_layers"] = json!(7);
    let c = load(&v).unwrap();
    assert_eq!(c.num_hidden_layers, 118);
    let pattern = v["hybrid_override_pattern"].as_str().unwrap().to_string();
    v.as_object_mut().unwrap().remove("hybrid_override_pattern");
    v.as_object_mut().unwrap().remove("num_hidden_layers");
    let names: Vec<&str> = pattern
        .chars()
        .map(|ch| match ch {
            'M' => "mamba",
            '*' => "attention",
            '-' => "mlp",
            _ => "moe",
        })
        .collect();
    v["layers_block_type"] = json!(names);
    assert_eq!(
        load(&v).unwrap().layers,
        c.layers,
        "the list and the pattern agree"
    );
}

#[test]
fn a_moe_family_file_without_an_expert_count_is_refused_not_sized_dense() {
    for (name, key) in [
        ("qwen3-30b-a3b", "num_experts"),
        ("mixtral-8x7b", "num_local_experts"),
        ("deepseek-v3", "n_routed_experts"),
    ] {
        let mut v = shipped_json(name);
        v.as_object_mut().unwrap().remove(key);
        let err = load(&v).unwrap_err().to_string();
        assert!(
            err.contains(&format!("missing field `{key}`")),
            "{name}: {err}"
        );
    }
}

#[test]
fn expert_count_aliases_win_as_in_the_reference() {
    // MixtralConfig maps `num_experts` onto `num_local_experts`; DeepseekV3Config maps
    // `num_local_experts` onto `n_routed_experts`.
    let mut v = shipped_json("mixtral-8x7b");
    v["num_experts"] = json!(4);
    assert_eq!(load(&v).unwrap().num_experts, 4);
    let mut v = shipped_json("deepseek-v3");
    v["num_local_experts"] = json!(64);
    assert_eq!(load(&v).unwrap().num_experts, 64);
}

#[test]
fn dense_layers_of_moe_families() {
    // Qwen2MoeDecoderLayer: dense where `layer_idx in mlp_only_layers` or
    // `(layer_idx + 1) % decoder_sparse_step != 0`.
    let mut v = shipped_json("qwen3-30b-a3b");
    v["mlp_only_layers"] = json!([0, 1]);
    let c = load(&v).unwrap();
    assert_eq!(c.moe_dense_layers, 2);
    assert_eq!(
        c.expert_width(),
        768.max(6144usize.div_ceil(8)),
        "a dense layer spread over top_k rows"
    );
    v["decoder_sparse_step"] = json!(2);
    assert_eq!(load(&v).unwrap().moe_dense_layers, 24 + 1);
    // Llama 4: `moe_layers` default every `interleave_moe_layer_step`-th layer; dense
    // layers run at `intermediate_size_mlp`.
    let mut v = shipped_json("llama-4-scout-17b-16e-instruct");
    assert_eq!(load(&v).unwrap().moe_dense_layers, 0);
    v["text_config"]["interleave_moe_layer_step"] = json!(2);
    let c = load(&v).unwrap();
    assert_eq!((c.moe_dense_layers, c.intermediate_size), (24, 16384));
    // GLM-MoE-DSA: `mlp_layer_types` when present.
    let mut v = shipped_json("glm-5");
    assert_eq!(load(&v).unwrap().moe_dense_layers, 3);
    let mut types = vec!["sparse"; 78];
    types[10] = "dense";
    v["mlp_layer_types"] = json!(types);
    assert_eq!(load(&v).unwrap().moe_dense_layers, 1);
}

#[test]
fn gemma3_files_rely_on_the_text_config_defaults() {
    // Google's gemma-3 multimodal files list only a few text keys; Gemma3TextConfig gives
    // the rest: vocab 262208, 8 heads, 4 kv heads, head_dim 256.
    let v = json!({"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
        "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
                        "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                        "sliding_window": 1024},
        "vision_config": {"hidden_size": 1152, "model_type": "siglip_vision_model"}});
    let c = load(&v).unwrap();
    assert_eq!(
        (c.vocab_size, c.num_attention_heads, c.num_key_value_heads),
        (262_208, 8, 4)
    );
    assert_eq!(
        (c.q_proj_width(), c.kv_proj_width()),
        (8 * 256, 2 * 4 * 256)
    );
    // Gemma3TextConfig refuses hidden % heads != 0 even with a head_dim.
    let mut bad = v.clone();
    bad["text_config"]["num_attention_heads"] = json!(7);
    let err = load(&bad).unwrap_err().to_string();
    assert!(
        err.contains("`text_config.num_attention_heads` is 7"),
        "{err}"
    );
    // A text-only file (`gemma3_text`) is read at the top level.
    let mut text = v["text_config"].clone();
    text["vocab_size"] = json!(262_144);
    assert_eq!(load(&text).unwrap().vocab_size, 262_144);
}

#[test]
fn the_fp8_scratch_covers_an_mla_output_wider_than_the_query_head() {
    // DeepseekV3Attention's o_proj reads heads · v_head_dim, which a file may make wider
    // than heads · (qk_nope + qk_rope).
    let mut v = shipped_json("deepseek-v3");
    v["v_head_dim"] = json!(512);
    let c = load(&v).unwrap();
    assert_eq!(c.attn_output_width(), 128 * 512);
    assert!(c.widest_k() >= c.attn_output_width());
}

#[test]
fn an_absent_key_takes_the_class_default_an_explicit_null_does_not() {
    // DeepseekV3Config: `q_lora_rank: int | None = 1536`.
    let mut v = shipped_json("deepseek-v3");
    v.as_object_mut().unwrap().remove("q_lora_rank");
    assert_eq!(load(&v).unwrap().q_lora_rank, 1536);
    v["q_lora_rank"] = Value::Null;
    let c = load(&v).unwrap();
    assert_eq!(
        c.q_lora_rank, 0,
        "null: no q compression, q_proj reads hidden"
    );
    // Without it, DeepSeek-V3's first three layers are dense (class default 3).
    let mut v = shipped_json("deepseek-v3");
    v.as_object_mut().unwrap().remove("first_k_dense_replace");
    assert_eq!(load(&v).unwrap().moe_dense_layers, 3);
}

#[test]
fn deepseek_v3_2_reads_its_dense_layers_from_mlp_layer_types() {
    // DeepseekV32DecoderLayer: `DeepseekV32MoE if mlp_layer_types[i] == "sparse"`.
    let mut v = shipped_json("deepseek-v3.2");
    let mut types = vec!["sparse"; 61];
    types[..5].fill("dense");
    v["mlp_layer_types"] = json!(types);
    v["first_k_dense_replace"] = json!(0);
    assert_eq!(load(&v).unwrap().moe_dense_layers, 5);
}

#[test]
fn nemotron_h_layer_types_alias_wins_and_mamba2_ignores_nemotron_spellings() {
    let mut v = shipped_json("nemotron-3-nano-30b-a3b");
    v["layers_block_type"] = json!(vec!["mamba"; 52]);
    let mut types = vec!["mamba"; 52];
    types[1] = "moe";
    v["layer_types"] = json!(types);
    let c = load(&v).unwrap();
    assert!(c.is_moe(), "`layer_types` is the one NemotronHConfig keeps");
    // Mamba2Config has no `mamba_n_groups`.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/mamba-codestral-7b.transcribed.json"
    );
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["mamba_n_groups"] = json!(1);
    assert_eq!(load(&v).unwrap().mamba_n_groups, 8);
}

/// A MoE model without dense layers sizes its expert buffers by the experts alone: the file's
/// `intermediate_size` (which Qwen3-MoE's reference builds no layer with) does not widen them.
#[test]
fn a_moe_model_without_dense_layers_ignores_intermediate_size_in_its_expert_width() {
    let mut v = shipped_json("qwen3-30b-a3b");
    v["intermediate_size"] = json!(65536);
    let c = load(&v).unwrap();
    assert_eq!(c.moe_dense_layers, 0);
    assert_eq!(c.expert_width(), 768);
    assert_eq!(c.widest_ffn_n(), 768);
}

/// Linear-attention keys on a model without linear-attention layers size nothing (a Qwen3
/// file carrying Qwen3-Next's `linear_*` keys, say): no GDN buffers.
#[test]
fn linear_attention_keys_without_such_layers_size_nothing() {
    let mut v = shipped_json("qwen3-0.6b");
    for (k, n) in [
        ("linear_num_key_heads", 16),
        ("linear_num_value_heads", 32),
        ("linear_key_head_dim", 128),
        ("linear_value_head_dim", 128),
        ("linear_conv_kernel_dim", 4),
    ] {
        v[k] = json!(n);
    }
    let c = load(&v).unwrap();
    assert_eq!(c.num_gdn_layers(), 0);
    assert!(!c.has_gdn());
    assert_eq!(
        (c.ssm_qkvz_size(), c.gdn_conv_dim(), c.ssm_gate_width()),
        (0, 0, 0)
    );
}

/// A model whose layers are all mixers (a plain Mamba-2 model) has no dense FFN: the `ffn_*`
/// buffers are off, as for a MoE model.
#[test]
fn a_model_without_an_ffn_width_has_no_dense_ffn_buffers() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/mamba-codestral-7b.transcribed.json"
    );
    let c = ModelConfig::load_with_levers(path, Levers::default()).unwrap();
    assert_eq!(c.intermediate_size, 0);
    assert!(!c.has_dense_ffn());
    let s = arena_spec::BufferSizes::from_config(&c, 256, 4096, 16, 8);
    assert_eq!((s.ffn_act_a, s.ffn_act_q8, s.ffn_gate_up_fused), (0, 0, 0));
}

/// DeepSeek-V4's layer kinds read as its configuration class reads them: `layer_types` names
/// give the same arena as the `compress_ratios` they stand for; a ratio the class does not map
/// and a list shorter than the layers are refused in one line naming the key.
#[test]
fn deepseek_v4_layer_kinds_read_from_names_or_ratios() {
    let text = arena_spec::models::find("deepseek-v4-flash").unwrap().json;
    let load = |json: &str| {
        arena_spec::ModelConfig::from_json_str_with_levers(
            json,
            std::path::Path::new("v4.json"),
            Default::default(),
        )
    };
    let mut raw: serde_json::Value = serde_json::from_str(text).unwrap();
    let names: Vec<&str> = raw["compress_ratios"]
        .as_array()
        .unwrap()
        .iter()
        .take(43)
        .map(|r| match r.as_u64().unwrap() {
            0 => "sliding_attention",
            4 => "compressed_sparse_attention",
            _ => "heavily_compressed_attention",
        })
        .collect();
    let by_ratio = load(text).unwrap();
    raw["layer_types"] = serde_json::json!(names);
    let by_name = load(&raw.to_string()).unwrap();
    let inputs = arena_spec::BufferArenaInputs::defaults_for(&by_ratio);
    assert_eq!(
        inputs.sizes(&by_ratio).unwrap(),
        inputs.sizes(&by_name).unwrap()
    );
    assert_eq!(by_name.extra_qkv_width, 2624);

    let odd = text.replacen("[0, 0, 4,", "[0, 0, 8,", 1);
    let err = load(&odd).unwrap_err().to_string();
    assert!(
        err.contains("compress_ratios") && err.contains("has 8") && !err.contains('\n'),
        "{err}"
    );
    let short = text.replacen("[0, 0, 4, 128, 4, 128,", "[", 1);
    let err = load(&short).unwrap_err().to_string();
    assert!(err.contains("fewer than num_hidden_layers 43"), "{err}");
}

/// An LFM2-VL file nests its `lfm2` text model under `text_config`, read as the flat file is
/// (`Lfm2VlModel.language_model = AutoModel(text_config)`): the same arena, parameters and
/// layers; its vision tower is not sized. The top level's `tie_word_embeddings` stands where
/// the text config has none.
#[test]
fn an_lfm2_vl_file_is_its_lfm2_text_model() {
    let flat_text = arena_spec::models::find("lfm2.5-1.2b-base").unwrap().json;
    let flat = ModelConfig::from_json_str(flat_text, "flat.json").unwrap();
    let text: serde_json::Value = serde_json::from_str(flat_text).unwrap();
    let wrapper = serde_json::json!({
        "architectures": ["Lfm2VlForConditionalGeneration"],
        "model_type": "lfm2_vl",
        "text_config": text,
        "vision_config": {"model_type": "siglip2_vision_model", "hidden_size": 1152,
                          "num_hidden_layers": 27},
        "projector_hidden_size": 2048,
    });
    let vl = ModelConfig::from_json_str(&wrapper.to_string(), "vl.json").unwrap();
    assert_eq!(vl.family, flat.family);
    assert_eq!(vl.layer_kinds(), flat.layer_kinds());
    let inputs = arena_spec::BufferArenaInputs::defaults_for(&flat);
    assert_eq!(
        arena_spec::BufferSizes::from_inputs(&vl, &inputs),
        arena_spec::BufferSizes::from_inputs(&flat, &inputs)
    );
    assert_eq!(
        arena_spec::weights::parameters(&vl).unwrap(),
        arena_spec::weights::parameters(&flat).unwrap()
    );
    // The text model alone is still an `lfm2` file.
    assert_eq!(flat.model_type, "lfm2");
    assert_eq!(vl.model_type, "lfm2_vl");
}
