//! Files a row does not read by their own `model_type` (`config/resolve.rs`): read by their
//! class (an alias, a serving stack's own `model_type`, no `model_type` at all) or as a
//! wrapper's text model. Each is built here from a shipped file, and must size exactly as
//! that file: the same arena, the same weights; the rest of a wrapper is named, and the
//! whole-GPU plan refuses to leave it out unless asked for the text model alone.

use arena_spec::gpu_plan::{plan_gpu, GpuPlanError, GpuPlanInputs};
use arena_spec::weights::parameters;
use arena_spec::{
    models, BufferArenaInputs, BufferSizes, ConfigError, Family, ModelConfig, ParallelLayout,
    Resolution,
};
use serde_json::{json, Value};

fn shipped(name: &str) -> Value {
    serde_json::from_str(models::find(name).unwrap().json).unwrap()
}

pub(crate) fn load(v: &Value) -> Result<ModelConfig, ConfigError> {
    ModelConfig::from_json_str(&v.to_string(), "built.json")
}

fn sizes(c: &ModelConfig) -> BufferSizes {
    BufferSizes::from_config(c, 8192, 131072, 16, 128)
}

/// A census config's text (`tests/census/configs/<name>.json`), as its class wrote it.
pub(crate) fn census_text(name: &str) -> String {
    let path = format!(
        "{}/tests/census/configs/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).unwrap()
}

/// A census config, parsed (a file with a non-finite value needs `census_text`).
pub(crate) fn census_file(name: &str) -> Value {
    serde_json::from_str(&census_text(name)).unwrap()
}

/// `c` sizes as the shipped `name` does: its family, arena and parameters.
fn same_as_shipped(c: &ModelConfig, name: &str) {
    let base = load(&shipped(name)).unwrap();
    assert_eq!(c.family, base.family, "{name}");
    assert_eq!(sizes(c), sizes(&base), "{name}");
    assert_eq!(parameters(c).unwrap(), parameters(&base).unwrap(), "{name}");
}

/// Wrappers no row knows, with Qwen2.5-7B's file as their text model under each key a
/// wrapper keeps one: InternVL's `llm_config`, DeepSeek-VL2's `language_config`, an omni
/// model's `thinker_config.text_config`, a LLaVA-style `text_config`.
#[test]
fn a_wrappers_text_model_is_sized_as_its_family_and_the_rest_is_named() {
    let text = shipped("qwen2.5-7b");
    let cases: [(&str, Value, &[&str]); 4] = [
        (
            "llm_config",
            json!({"model_type": "internvl_chat", "architectures": ["InternVLChatModel"],
                   "vision_config": {"hidden_size": 1024}, "llm_config": text}),
            &["vision_config"],
        ),
        (
            "language_config",
            json!({"model_type": "deepseek_vl_v2", "vision_config": {"width": 1152},
                   "projector_config": {"n_embed": 3584}, "language_config": text}),
            &["projector_config", "vision_config"],
        ),
        (
            "thinker_config.text_config",
            json!({"model_type": "qwen2_5_omni",
                   "architectures": ["Qwen2_5OmniModel"],
                   "talker_config": {"hidden_size": 896},
                   "thinker_config": {"text_config": text,
                                      "audio_config": {"d_model": 1280},
                                      "vision_config": {"hidden_size": 1280}}}),
            &[
                "talker_config",
                "thinker_config.audio_config",
                "thinker_config.vision_config",
            ],
        ),
        (
            "text_config",
            json!({"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
                   "vision_config": {"hidden_size": 1024}, "text_config": text}),
            &["vision_config"],
        ),
    ];
    for (key, file, left_out) in cases {
        let c = load(&file).unwrap_or_else(|e| panic!("{key}: {e}"));
        same_as_shipped(&c, "qwen2.5-7b");
        assert_eq!(c.text_model.found_by, Resolution::Wrapper { key }, "{key}");
        let mut named: Vec<&str> = c.text_model.left_out.iter().map(|k| k.as_ref()).collect();
        named.sort_unstable();
        assert_eq!(named, left_out, "{key}");

        // The whole-GPU plan names what it would leave out, and plans the text model alone.
        let layout = ParallelLayout::new(1, 1, 1).unwrap();
        let arena = BufferArenaInputs {
            max_seq_len: 8192,
            ..BufferArenaInputs::AT_128K
        };
        let mut inputs = GpuPlanInputs::new(141 << 30, arena);
        let e = plan_gpu(&c, &layout, inputs).unwrap_err();
        assert!(matches!(e, GpuPlanError::LeftOut { .. }), "{key}: {e}");
        assert!(e.to_string().contains(left_out[0]), "{e}");
        inputs.text_only = true;
        plan_gpu(&c, &layout, inputs).unwrap_or_else(|e| panic!("{key}: {e}"));
    }
}

/// A class vLLM maps to a sized implementation, whatever the file's `model_type` says or
/// whether it has one.
#[test]
fn a_file_is_read_by_its_class_where_its_model_type_is_no_rows() {
    // MiMo-7B: vLLM's `MiMoForCausalLM` is Qwen2's model; its MTP layer is not sized.
    let mut mimo = shipped("qwen2.5-7b");
    mimo["model_type"] = json!("mimo");
    mimo["architectures"] = json!(["MiMoForCausalLM"]);
    mimo["num_nextn_predict_layers"] = json!(1);
    let c = load(&mimo).unwrap();
    same_as_shipped(&c, "qwen2.5-7b");
    assert_eq!(
        c.text_model.found_by,
        Resolution::Architecture {
            class: "MiMoForCausalLM"
        }
    );
    assert!(c
        .text_model
        .not_sized
        .unwrap()
        .contains("num_nextn_predict_layers"));

    // A serving stack's own `model_type` (SGLang's DeepSeek-V4 files say `deepseek_ref`).
    let mut v4 = shipped("deepseek-v4-flash");
    v4["model_type"] = json!("deepseek_ref");
    let c = load(&v4).unwrap();
    same_as_shipped(&c, "deepseek-v4-flash");
    assert_eq!(c.family, Family::DeepseekV4);

    // No `model_type` at all: the class alone, a text class or a multimodal one.
    for (name, class) in [
        ("llama-3.1-8b", "LlamaForCausalLM"),
        ("gemma-3-4b-it", "Gemma3ForConditionalGeneration"),
        ("qwen3-vl-4b-instruct", "Qwen3VLForConditionalGeneration"),
    ] {
        let mut file = shipped(name);
        file.as_object_mut().unwrap().remove("model_type");
        let c = load(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        same_as_shipped(&c, name);
        assert_eq!(c.text_model.found_by, Resolution::Architecture { class });
    }
}

/// A file nothing here sizes is refused in one line naming its `model_type`, its class, that
/// its modeling code is the vendor's own where it says so (`auto_map`), and the sized family
/// closest to it.
#[test]
fn a_file_of_no_sized_class_is_refused_naming_its_class() {
    let mut dots = shipped("qwen2.5-7b");
    dots["model_type"] = json!("dots3_note");
    dots["architectures"] = json!(["Dots3NoteForCausalLM"]);
    dots["auto_map"] = json!({"AutoModelForCausalLM": "modeling_dots.Dots3NoteForCausalLM"});
    let e = load(&dots).unwrap_err();
    assert!(
        matches!(
            &e,
            ConfigError::UnsupportedModelType {
                remote_code: true,
                ..
            }
        ),
        "{e}"
    );
    let msg = e.to_string();
    for part in [
        "\"dots3_note\"",
        "Dots3NoteForCausalLM",
        "remote code",
        // Qwen2.5's keys are a dense decoder's; no row's name shares four letters.
        "closest sized family: llama (by layer shape)",
        "supported: llama",
    ] {
        assert!(msg.contains(part), "{part}: {msg}");
    }
    // A wrapper whose text model is no sized family's either.
    let wrapper = json!({"model_type": "some_vlm", "text_config": {"model_type": "gpt_neox"}});
    let e = load(&wrapper).unwrap_err();
    assert!(matches!(e, ConfigError::UnsupportedModelType { .. }), "{e}");
    // A remote-code successor of a sized family is sent to the sized row nearest by name (here
    // MiniMax-M3's own text model, under its VL wrapper), its experts agreeing.
    let mut m3 = shipped("minimax-m2.7");
    m3["model_type"] = json!("minimax_m3");
    m3["architectures"] = json!(["MiniMaxM3ForCausalLM"]);
    m3["auto_map"] = json!({"AutoModelForCausalLM": "modeling_minimax_m3.MiniMaxM3ForCausalLM"});
    let e = load(&m3).unwrap_err();
    let closest = match &e {
        ConfigError::UnsupportedModelType { closest, .. } => *closest,
        _ => panic!("{e}"),
    };
    assert_eq!(
        closest.map(|c| (c.model_type, c.by)),
        Some((
            "minimax_m3_vl",
            arena_spec::config::ClosestBy::Name { prefix: 10 }
        ))
    );
}

/// A feature a row cannot count is refused in one line naming its key: ERNIE 4.5's
/// `use_bias` (biases on every projection, which the weights do not declare). Its class
/// default, false, is sized (the census).
#[test]
fn a_row_refuses_a_key_it_cannot_count() {
    let mut file = census_file("ernie4_5");
    assert_eq!(load(&file).unwrap().family, Family::Ernie45);
    file["use_bias"] = json!(true);
    let e = load(&file).unwrap_err().to_string();
    assert!(
        e.contains("`use_bias` is true") && e.contains("not declared"),
        "{e}"
    );
}
