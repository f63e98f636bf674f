//! Families read from their census files (`tests/census/configs/`): each one's own key
//! names, nested configs and switches, its refusals in one line naming the key, and its
//! parameter count against transformers' (on the meta device) where a test changes the file.

use crate::any_config::{census_file, census_text, load};
use arena_spec::weights::parameters;
use arena_spec::{Family, KvLayer, LayerKind, ModelConfig};
use serde_json::{json, Value};

/// ERNIE 4.5 MoE's routed layers: every `moe_layer_interval`-th from `moe_layer_start_index`
/// to `moe_layer_end_index`, -1 (what its class and files write) the last layer
/// (`Ernie4_5_MoeDecoderLayer`: `(i + 1) % interval == 0 and start <= i <= end`).
#[test]
fn ernie_moe_routes_its_start_end_and_interval() {
    let mut file = census_file("ernie4_5_moe");
    file["num_hidden_layers"] = json!(8);
    file["moe_layer_start_index"] = json!(2);
    file["moe_layer_end_index"] = json!(-1);
    file["moe_layer_interval"] = json!(2);
    let c = load(&file).unwrap();
    assert_eq!(c.family, Family::Ernie45Moe);
    let routed: Vec<usize> = (0..8).filter(|&i| !c.dense_ffn_layers[i]).collect();
    assert_eq!(routed, [3, 5, 7]);
    file["moe_layer_end_index"] = json!(5);
    let c = load(&file).unwrap();
    let routed: Vec<usize> = (0..8).filter(|&i| !c.dense_ffn_layers[i]).collect();
    assert_eq!(routed, [3, 5]);
    file["moe_layer_interval"] = json!(0);
    let e = load(&file).unwrap_err().to_string();
    assert!(e.contains("moe_layer_interval"), "{e}");
}

/// StableLM's defaults are sized (LayerNorm biases counted); the three keys that change its
/// weights beyond what is declared are refused, each naming itself.
#[test]
fn stablelm_refuses_each_key_it_cannot_count() {
    let file = census_file("stablelm");
    assert_eq!(load(&file).unwrap().family, Family::StableLm);
    for key in ["use_qkv_bias", "qk_layernorm", "use_parallel_residual"] {
        let mut f = file.clone();
        f[key] = json!(true);
        let e = load(&f).unwrap_err().to_string();
        assert!(e.contains(&format!("`{key}` is true")), "{key}: {e}");
    }
}

/// GPT-2's files spell the common keys the class's own way (`attribute_map`): read under the
/// common names, an FFN of 4 · hidden where `n_inner` is null and of `n_inner` where set, a
/// common name the file writes itself winning over the class's key, cross-attention refused.
#[test]
fn gpt2_reads_its_own_key_names() {
    let file = census_file("gpt2");
    assert!(file.get("hidden_size").is_none() && file["n_inner"].is_null());
    let c = load(&file).unwrap();
    assert_eq!(c.family, Family::Gpt2);
    assert_eq!(
        (c.hidden_size, c.num_attention_heads, c.num_hidden_layers),
        (768, 12, 12)
    );
    assert_eq!((c.num_key_value_heads, c.head_dim()), (12, 64));
    assert_eq!(
        (c.intermediate_size, c.max_position_embeddings),
        (3072, 1024)
    );
    assert!(c.tie_word_embeddings);
    // 124,439,808 in transformers: the learned position embedding's 1024 · 768 among them.
    assert_eq!(parameters(&c).unwrap(), 124_439_808);

    let mut f = file.clone();
    f["n_inner"] = json!(1024);
    f["n_positions"] = json!(2048);
    let wider = load(&f).unwrap();
    assert_eq!(
        (wider.intermediate_size, wider.max_position_embeddings),
        (1024, 2048)
    );
    assert_eq!(
        parameters(&wider).unwrap(),
        124_439_808 - 12 * 2 * (3072 - 1024) * 768 - 12 * (3072 - 1024) + 1024 * 768
    );

    let mut f = file.clone();
    f["hidden_size"] = json!(1024);
    f["n_head"] = json!(16);
    assert_eq!(load(&f).unwrap().hidden_size, 1024);

    let mut f = file;
    f["add_cross_attention"] = json!(true);
    let e = load(&f).unwrap_err().to_string();
    assert!(e.contains("`add_cross_attention` is true"), "{e}");
}

/// OPT: `enable_bias` (class default true) is the biases of q, k, v, `out_proj`, `fc1` and
/// `fc2`; the position table holds 2 rows beyond the context; each layout the arena does not
/// size is refused naming its key.
#[test]
fn opt_reads_enable_bias_and_refuses_the_layouts_it_does_not_size() {
    let file = census_file("opt");
    let c = load(&file).unwrap();
    assert_eq!(c.family, Family::Opt);
    assert_eq!(
        (c.intermediate_size, c.max_position_embeddings),
        (3072, 2048)
    );
    // 125,239,296 in transformers, with 2050 · 768 of positions.
    assert_eq!(parameters(&c).unwrap(), 125_239_296);
    let mut f = file.clone();
    f.as_object_mut().unwrap().remove("enable_bias");
    assert_eq!(parameters(&load(&f).unwrap()).unwrap(), 125_239_296);
    f["enable_bias"] = json!(false);
    let biases = 12 * (4 * 768 + 3072 + 768);
    assert_eq!(
        parameters(&load(&f).unwrap()).unwrap(),
        125_239_296 - biases
    );
    for (key, value, says) in [
        (
            "word_embed_proj_dim",
            json!(512),
            "`word_embed_proj_dim` is 512",
        ),
        ("layer_norm_elementwise_affine", json!(false), "is false"),
        ("do_layer_norm_before", json!(false), "is false"),
        ("_remove_final_layer_norm", json!(true), "is true"),
    ] {
        let mut f = file.clone();
        f[key] = value;
        let e = load(&f).unwrap_err().to_string();
        assert!(e.contains(key) && e.contains(says), "{key}: {e}");
    }
}

/// BLOOM: `n_layer` and `n_head` (and `n_embed`, older files' `hidden_size`) read under the
/// common names, an MLP of 4 · hidden, the embedding's LayerNorm among the parameters.
#[test]
fn bloom_reads_its_own_key_names() {
    let file = census_file("bloom");
    let c = load(&file).unwrap();
    assert_eq!(c.family, Family::Bloom);
    assert_eq!(
        (
            c.hidden_size,
            c.num_attention_heads,
            c.num_hidden_layers,
            c.intermediate_size
        ),
        (64, 8, 2, 256)
    );
    // 16,156,544 in transformers.
    assert_eq!(parameters(&c).unwrap(), 16_156_544);
    let mut f = file;
    let obj = f.as_object_mut().unwrap();
    obj.remove("hidden_size");
    obj.insert("n_embed".into(), json!(128));
    let wider = load(&f).unwrap();
    assert_eq!((wider.hidden_size, wider.intermediate_size), (128, 512));
}

/// Gemma 4 Unified: the full layers' widths from `per_layer_config` (or, without one, from
/// `global_head_dim` as its class builds one), and a file whose overrides the arena cannot
/// hold refused naming the layer.
#[test]
fn gemma4_unified_reads_its_full_layers_from_per_layer_config() {
    let file = census_file("gemma4_unified");
    let c = load(&file).unwrap();
    assert_eq!(c.family, Family::Gemma4Unified);
    assert_eq!(
        (c.head_dim(), c.global_head_dim, c.global_kv_heads),
        (256, 512, 0)
    );
    // 3,010,758,400 in transformers.
    assert_eq!(parameters(&c).unwrap(), 3_010_758_400);
    let full = ["05", "11", "17", "23", "29"];
    let with = |overrides: Value| {
        let mut f = file.clone();
        f["text_config"]["per_layer_config"] = overrides;
        load(&f)
    };
    // No `per_layer_config`: the class writes one from `global_head_dim` (512 by default).
    let mut f = file.clone();
    f["text_config"]
        .as_object_mut()
        .unwrap()
        .remove("per_layer_config");
    assert_eq!(parameters(&load(&f).unwrap()).unwrap(), 3_010_758_400);
    let each = |v: Value| Value::Object(full.iter().map(|i| (i.to_string(), v.clone())).collect());
    let narrow = with(each(json!({"head_dim": 256}))).unwrap();
    assert_eq!(narrow.global_head_dim, 256);
    assert!(parameters(&narrow).unwrap() < 3_010_758_400);
    let kv = with(each(json!({"head_dim": 512, "num_key_value_heads": 2}))).unwrap();
    assert_eq!((kv.global_head_dim, kv.global_kv_heads), (512, 2));
    for (overrides, says) in [
        (json!({"00": {"head_dim": 512}}), "layer 0 has"),
        (
            json!({"05": {"head_dim": 256}, "11": {"head_dim": 512}}),
            "layer 11 has",
        ),
        (
            json!({"05": {"intermediate_size": 1}}),
            "`intermediate_size`",
        ),
        (json!({"30": {"head_dim": 512}}), "not one of 0..30"),
        (json!({"05": {"head_dim": 0}}), "positive integer"),
    ] {
        let e = with(overrides).unwrap_err().to_string();
        assert!(
            e.contains("text_config.per_layer_config") && e.contains(says),
            "{says}: {e}"
        );
    }
}

/// Cohere Compass: Cohere 2's layers, all full without `layer_types`, and M-RoPE's three
/// position streams where a layer type's `rope_parameters` hold `mrope_section`.
#[test]
fn cohere_compass_reads_its_rope_per_layer_type() {
    let file = census_file("cohere_compass.rope");
    let c = load(&file).unwrap();
    assert_eq!(c.family, Family::CohereCompass);
    assert!(!c.mrope);
    // 34,980,831,232 in transformers (its text model, tied as the text config says).
    assert_eq!(parameters(&c).unwrap(), 34_980_831_232);
    let mut f = file.clone();
    f["text_config"]["rope_parameters"]["full_attention"]["mrope_section"] = json!([16, 24, 24]);
    assert!(load(&f).unwrap().mrope);
    let mut f = file;
    f["text_config"]
        .as_object_mut()
        .unwrap()
        .remove("layer_types");
    f["text_config"]["sliding_window"] = json!(4096);
    let c = load(&f).unwrap();
    assert!(
        c.kv_layers.iter().all(|&l| l == KvLayer::Full),
        "every layer full: {:?}",
        c.kv_layers
    );
}

/// DBRX: its widths under its own names, two of them inside `attn_config` and `ffn_config`
/// (read through dotted aliases), the class's defaults where a nested config is absent, and
/// tied embeddings refused as its class refuses them.
#[test]
fn dbrx_reads_its_nested_configs() {
    let file = census_file("dbrx.rope_theta");
    let c = load(&file).unwrap();
    assert_eq!(c.family, Family::Dbrx);
    assert_eq!(
        (c.hidden_size, c.num_attention_heads, c.num_key_value_heads),
        (2048, 16, 1)
    );
    assert_eq!(
        (
            c.num_experts,
            c.num_experts_per_tok,
            c.moe_intermediate_size
        ),
        (4, 1, 3584)
    );
    // 2,459,207,680 in transformers.
    assert_eq!(parameters(&c).unwrap(), 2_459_207_680);
    // A real file has no top-level `num_key_value_heads` (the class writes one on saving,
    // from `attn_config`, which wins where the two disagree).
    let mut f = file.clone();
    f["attn_config"]["kv_n_heads"] = json!(8);
    assert_eq!(load(&f).unwrap().num_key_value_heads, 8);
    f.as_object_mut().unwrap().remove("num_key_value_heads");
    f["ffn_config"]["moe_num_experts"] = json!(16);
    f["ffn_config"]["moe_top_k"] = json!(4);
    let c = load(&f).unwrap();
    assert_eq!(
        (c.num_key_value_heads, c.num_experts, c.num_experts_per_tok),
        (8, 16, 4)
    );
    let obj = f.as_object_mut().unwrap();
    obj.remove("attn_config");
    obj.remove("ffn_config");
    let c = load(&f).unwrap();
    assert_eq!((c.num_key_value_heads, c.num_experts), (1, 4));
    let mut f = file;
    f["tie_word_embeddings"] = json!(true);
    let e = load(&f).unwrap_err().to_string();
    assert!(
        e.contains("tie_word_embeddings") && e.contains("refuses tied"),
        "{e}"
    );
}

/// Molmo2: the embedding's `additional_vocab_size` rows beyond the head's vocabulary, and q
/// and k normed a head (`qk_norm_type` "qwen3") or across the projection ("olmo").
#[test]
fn molmo2_counts_its_extra_embedding_rows_and_its_qk_norm_type() {
    let file = census_file("molmo2");
    let c = load(&file).unwrap();
    assert_eq!(c.family, Family::Molmo2);
    assert_eq!((c.vocab_size, c.embedding_extra_rows), (151_936, 128));
    // 8,191,259,648 in transformers.
    assert_eq!(parameters(&c).unwrap(), 8_191_259_648);
    let mut f = file;
    f["text_config"]["qk_norm_type"] = json!("olmo");
    f["text_config"]["additional_vocab_size"] = json!(0);
    // 8,190,910,464 in transformers (its meta-device build of this file): 36 layers of
    // q and k norms 4096 + 1024 wide, not 128 + 128, and 128 · 4096 embedding rows fewer.
    assert_eq!(parameters(&load(&f).unwrap()).unwrap(), 8_190_910_464);
}

/// OLMo Hybrid: Gated DeltaNet layers and full attention every fourth layer where the file
/// lists no `layer_types` (its class's rule), the same model either way.
#[test]
fn olmo_hybrid_puts_every_fourth_layer_full_without_layer_types() {
    let file = census_file("olmo_hybrid");
    let c = load(&file).unwrap();
    assert_eq!(c.family, Family::OlmoHybrid);
    // 7,430,870,688 in transformers.
    assert_eq!(parameters(&c).unwrap(), 7_430_870_688);
    let mut f = file;
    f.as_object_mut().unwrap().remove("layer_types");
    let without = load(&f).unwrap();
    assert_eq!(without.layers, c.layers);
    assert_eq!(
        c.layers
            .iter()
            .filter(|&&l| l == LayerKind::Attention)
            .count(),
        8
    );
    assert_eq!(c.layers[3], LayerKind::Attention);
}

/// Granite 4.0-H: Mamba-2 or attention in each layer (`layers_block_type`, the alias older
/// files use), the FFN after either; without experts the shared MLP is the layer's FFN. (Its
/// files write Mamba-2's `time_step_limit` as `Infinity`, which the loader reads and
/// `serde_json` does not: they are edited as text.)
#[test]
fn granitemoehybrid_reads_its_layers_and_its_dense_form() {
    let from = |t: &str| ModelConfig::from_json_str(t, "built.json");
    let file = census_text("granitemoehybrid.attention");
    let c = from(&file).unwrap();
    assert_eq!(c.family, Family::GraniteMoeHybrid);
    assert_eq!(
        c.layers
            .iter()
            .filter(|&&l| l == LayerKind::Attention)
            .count(),
        3
    );
    // 38,416,883,072 in transformers.
    assert_eq!(parameters(&c).unwrap(), 38_416_883_072);
    let aliased = file.replace("\"layer_types\"", "\"layers_block_type\"");
    assert_eq!(from(&aliased).unwrap().layers, c.layers);
    // Granite 4.0-H's own files spell the kinds `"mamba"` and `"attention"`.
    let legacy = file
        .replace("\"linear_attention\"", "\"mamba\"")
        .replace("\"full_attention\"", "\"attention\"");
    assert!(legacy.contains("\"mamba\"") && legacy.contains("\"attention\""));
    assert_eq!(from(&legacy).unwrap().layers, c.layers);
    let dense = from(&census_text("granitemoehybrid.dense")).unwrap();
    assert_eq!((dense.num_experts, dense.intermediate_size), (0, 8192));
    // 6,681,730,432 in transformers.
    assert_eq!(parameters(&dense).unwrap(), 6_681_730_432);
    for (from_text, to_text, says) in [
        (
            "\"mamba_proj_bias\": false",
            "\"mamba_proj_bias\": true",
            "is true",
        ),
        (
            "\"mamba_conv_bias\": true",
            "\"mamba_conv_bias\": false",
            "is false",
        ),
        ("\"mamba_expand\": 2", "\"mamba_expand\": 3", "mamba_expand"),
    ] {
        assert!(file.contains(from_text), "{from_text}");
        let e = from(&file.replace(from_text, to_text))
            .unwrap_err()
            .to_string();
        let key = from_text.split('"').nth(1).unwrap();
        assert!(e.contains(key) && e.contains(says), "{key}: {e}");
    }
}

/// MiniMax-M3's text model: dense layers by `mlp_layer_types` or, in its vendor files'
/// spelling, `moe_layer_freq`; its sparse-attention layers refused by name, in either spelling.
#[test]
fn minimax_m3_reads_its_dense_layers_and_refuses_sparse_attention() {
    let file = census_file("minimax_m3_vl.dense_first");
    let c = load(&file).unwrap();
    assert_eq!(c.family, Family::MinimaxM3Vl);
    // 425,950,417,920 in transformers.
    assert_eq!(parameters(&c).unwrap(), 425_950_417_920);
    let mut f = file.clone();
    let text = f["text_config"].as_object_mut().unwrap();
    text.remove("mlp_layer_types");
    let freq: Vec<u32> = (0..60).map(|i| u32::from(i >= 3)).collect();
    text.insert("moe_layer_freq".into(), json!(freq));
    assert_eq!(load(&f).unwrap().dense_ffn_layers, c.dense_ffn_layers);
    let mut f = file.clone();
    f["text_config"]["layer_types"][10] = json!("minimax_m3_sparse");
    let e = load(&f).unwrap_err().to_string();
    assert!(
        e.contains("minimax_m3_sparse") && e.contains("does not size"),
        "{e}"
    );
    let mut f = file;
    f["text_config"]["sparse_attention_config"] = json!({"sparse_attention_freq": [0, 1]});
    let e = load(&f).unwrap_err().to_string();
    assert!(
        e.contains("sparse_attention_config") && e.contains("is set"),
        "{e}"
    );
}

/// Step-3.7's text model: its experts under any of its class's names, dense layers first, and
/// what it does not size refused naming the key.
#[test]
fn step3p7_reads_its_aliases_and_refuses_what_it_does_not_size() {
    let file = census_file("step3p7");
    let c = load(&file).unwrap();
    assert_eq!(c.family, Family::Step3p7);
    assert_eq!(
        (c.num_experts, c.shared_expert_intermediate_size),
        (288, 1280)
    );
    assert_eq!(c.dense_ffn_layers.iter().filter(|&&d| d).count(), 3);
    // 195,843,833,088 in transformers.
    assert_eq!(parameters(&c).unwrap(), 195_843_833_088);
    let mut f = file.clone();
    let text = f["text_config"].as_object_mut().unwrap();
    text.remove("n_routed_experts");
    text.insert("moe_num_experts".into(), json!(64));
    assert_eq!(load(&f).unwrap().num_experts, 64);
    for (key, value, says) in [
        ("num_sliding_attention_heads", json!(32), "is 32"),
        (
            "attention_other_setting",
            json!({"num_attention_heads": 32}),
            "is set",
        ),
        ("moe_layers_enum", json!("3,4,5"), "is set"),
        ("sparse_attention_config", json!({}), "is set"),
    ] {
        let mut f = file.clone();
        f["text_config"][key] = value;
        let e = load(&f).unwrap_err().to_string();
        assert!(e.contains(key) && e.contains(says), "{key}: {e}");
    }
}

/// Falcon: the kv heads and LayerNorms a layer by its switches, one census file a layout.
#[test]
fn falcon_reads_its_three_layouts() {
    for (name, kv, norms, params) in [
        // 6,921,720,704 / 41,303,293,952 / 1,311,625,216 in transformers.
        ("falcon", 1, 1, 6_921_720_704u64),
        ("falcon.new_decoder", 8, 2, 41_303_293_952),
        ("falcon.rw", 32, 2, 1_311_625_216),
    ] {
        let c = load(&census_file(name)).unwrap();
        assert_eq!(c.family, Family::Falcon, "{name}");
        assert_eq!(
            (c.num_key_value_heads, c.layer_norms),
            (kv, Some(norms)),
            "{name}"
        );
        assert_eq!(parameters(&c).unwrap(), params, "{name}");
    }
    // Falcon-7B's own file writes no `num_ln_in_parallel_attn`, and `num_kv_heads` as the q
    // heads: multi-query still wins.
    let mut f = census_file("falcon");
    f.as_object_mut().unwrap().remove("num_ln_in_parallel_attn");
    assert_eq!(load(&f).unwrap().num_key_value_heads, 1);
    f["num_ln_in_parallel_attn"] = json!(3);
    let e = load(&f).unwrap_err().to_string();
    assert!(
        e.contains("num_ln_in_parallel_attn") && e.contains("is 3"),
        "{e}"
    );
}
