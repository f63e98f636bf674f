//! Which family a `config.json` is, and where its text model's keys are.
//!
//! In order: the file's `model_type` where it is a row's (or a row's text model's); else its
//! `architectures[0]` where the class is sized here, as vLLM picks an implementation by that
//! class (`vllm/model_executor/models/registry.py` of v0.33.0, `_TEXT_GENERATION_MODELS`: 73
//! and `_MULTIMODAL_MODELS`: 352, class → module and class); else, for a wrapper no row knows, the
//! first object among [`TEXT_MODEL_KEYS`] whose own `model_type` or class is a sized
//! family's. `model_type` goes first, ours to choose: one class serves several rows
//! (`DeepseekV3ForCausalLM` is both `deepseek_v3`'s and `kimi_k2`'s), and the row named by
//! `model_type` is the more specific. A file whose `model_type` is listed in
//! [`super::family::UNSIZED_MODEL_TYPES`] is refused with its reason.

use super::error::ConfigError;
use super::family::{Family, UNSIZED_MODEL_TYPES};
use super::fields::{json_kind, Fields};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// How a file's family and text model were found: what `arena plan` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "by")]
pub enum Resolution {
    /// The file's `model_type` is the family's (or its text model's).
    ModelType,
    /// `architectures[0]` is a class sized as the family ([`architecture`]); the file's
    /// `model_type` is no row's (a serving stack's own) or absent.
    Architecture {
        /// The class.
        class: &'static str,
    },
    /// A wrapper no row knows: its text model is the object at `key` (a path of keys
    /// joined by `.`), of a sized family; the rest of the file is not sized
    /// ([`TextModel::left_out`], in `ModelConfig::text_model`).
    Wrapper {
        /// Where the text model is.
        key: &'static str,
    },
}

/// A class of `architectures` sized as a family beyond the rows' own text classes
/// (`Reference::modeling_class`), each a class vLLM's registry maps to that family's
/// implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Architecture {
    /// The class as `architectures` names it.
    pub class: &'static str,
    /// The family it is sized as.
    pub family: Family,
    /// The text model is under `text_config` (a multimodal class), else the top level.
    pub nested: bool,
    /// What the class adds that is not sized here, said where it is resolved; `None`:
    /// nothing.
    pub adds: Option<&'static str>,
}

const fn class(class: &'static str, family: Family, nested: bool) -> Architecture {
    Architecture {
        class,
        family,
        nested,
        adds: None,
    }
}

/// The classes sized beyond the rows' reference classes: the multimodal classes of the rows
/// whose reference is their text class and whose files nest it (vLLM's
/// `_MULTIMODAL_MODELS`, the same names), the vendors' own class names, and aliases vLLM's
/// registry maps to a sized implementation. A row whose reference is its multimodal class
/// (Qwen2-VL, Qwen2.5-VL, Qwen3-VL and -MoE, GLM-4.1V, GLM-4.5V) needs no entry:
/// [`architecture`] reads it as nested.
pub const ARCHITECTURES: &[Architecture] = &[
    class("Gemma3ForConditionalGeneration", Family::Gemma3, true),
    class("Gemma4ForConditionalGeneration", Family::Gemma4, true),
    class("Llama4ForConditionalGeneration", Family::Llama4, true),
    class("Mistral3ForConditionalGeneration", Family::Mistral3, true),
    class("Qwen3_5ForConditionalGeneration", Family::Qwen35, true),
    class(
        "Qwen3_5MoeForConditionalGeneration",
        Family::Qwen35Moe,
        true,
    ),
    class("Lfm2VlForConditionalGeneration", Family::Lfm2, true),
    class("KimiK25ForConditionalGeneration", Family::KimiK25, true),
    // The vendors' class names: NVIDIA's DeciLM (registry.py: 91), MiniMax's M1 (served by
    // vLLM until 0.23.0: registry.py: 863, the previously supported models; transformers'
    // `minimax` builds it as `MiniMaxForCausalLM`).
    class("DeciLMForCausalLM", Family::NemotronNas, false),
    class("MiniMaxM1ForCausalLM", Family::MinimaxM1, false),
    // registry.py: 158, `"LLaMAForCausalLM": ("llama", "LlamaForCausalLM")`, an early name.
    class("LLaMAForCausalLM", Family::Llama, false),
    // registry.py: 182, `"MiMoForCausalLM": ("mimo", "MiMoForCausalLM")`; `mimo.py`'s `MiMoModel`
    // is `Qwen2Model` (its layers `Qwen2DecoderLayer`), and the checkpoint's MTP layers are
    // `mimo_mtp.py`'s drafter, loaded only to draft.
    Architecture {
        class: "MiMoForCausalLM",
        family: Family::Qwen2,
        nested: false,
        adds: Some(
            "MiMo's multi-token-prediction layers (num_nextn_predict_layers; vLLM's \
             MiMoMTP drafter) are not sized",
        ),
    },
];

/// The class `name` sized here: [`ARCHITECTURES`] (which says where the text model is),
/// else a row's reference class, read as the text model at the top level unless the row's
/// files nest it (a row whose reference is its multimodal class).
pub fn architecture(name: &str) -> Option<Architecture> {
    ARCHITECTURES
        .iter()
        .copied()
        .find(|a| a.class == name)
        .or_else(|| {
            Family::ALL
                .into_iter()
                .find(|f| {
                    f.rules()
                        .reference
                        .is_some_and(|r| r.modeling_class == name)
                })
                .map(|family| Architecture {
                    class: family.rules().reference.map_or("", |r| r.modeling_class),
                    family,
                    nested: family.text_model_type().is_some()
                        && name.ends_with("ForConditionalGeneration"),
                    adds: None,
                })
        })
}

/// Where a wrapper keeps its text model, in the order tried, with the prefix errors name
/// its keys by: vLLM's `get_hf_text_config` (`vllm/transformers_utils/config.py`: 1258,
/// v0.33.0) takes transformers' `get_text_config()` (`text_config`), maps `llm_config` to
/// it (`_CONFIG_ATTRS_MAPPING`: 195, InternVL), and reads an omni model's
/// `thinker_config.text_config` (744–748); DeepSeek-VL2's model reads `language_config`.
pub const TEXT_MODEL_KEYS: &[(&str, &str)] = &[
    ("text_config", "text_config."),
    ("thinker_config.text_config", "thinker_config.text_config."),
    ("llm_config", "llm_config."),
    ("language_config", "language_config."),
];

/// A file resolved: its family, the fields of its text model, how it was found, and for a
/// wrapper the keys of the rest.
pub(super) struct Resolved<'a> {
    pub(super) family: Family,
    pub(super) text: Fields<'a>,
    pub(super) resolution: Resolution,
    pub(super) adds: Option<&'static str>,
    pub(super) left_out: Vec<String>,
}

/// `architectures[0]`, if the file lists any.
fn first_class<'a>(f: &Fields<'a>) -> Result<Option<&'a str>, ConfigError> {
    match f.obj.get("architectures") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(list)) => match list.first() {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(f.invalid(
                "architectures",
                format!("must list class names, not {}", json_kind(other)),
            )),
        },
        Some(other) => Err(f.invalid(
            "architectures",
            format!("must be a list of class names, not {}", json_kind(other)),
        )),
    }
}

/// The object at a dotted `key` path, if every step is an object.
fn at_path<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Map<String, Value>> {
    key.split('.').try_fold(obj, |o, k| match o.get(k) {
        Some(Value::Object(inner)) => Some(inner),
        _ => None,
    })
}

/// The keys of a wrapper's objects other than its text model (its towers, talkers,
/// projectors), which a generic read leaves out: the top level's object-valued `*_config`
/// keys and the text model's parent's, `quantization_config` and the text model's own
/// path aside.
fn left_out(top: &Map<String, Value>, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut scan = |obj: &Map<String, Value>, prefix: &str| {
        for (k, v) in obj {
            let path = format!("{prefix}{k}");
            if v.is_object()
                && k.ends_with("_config")
                && k != "quantization_config"
                && !key.starts_with(path.as_str())
            {
                out.push(path);
            }
        }
    };
    scan(top, "");
    if let Some((parent, _)) = key.rsplit_once('.') {
        if let Some(obj) = at_path(top, parent) {
            scan(obj, &format!("{parent}."));
        }
    }
    out
}

/// The file's family and its text model's fields (see the module doc).
pub(super) fn resolve<'a>(outer: &Fields<'a>) -> Result<Resolved<'a>, ConfigError> {
    let model_type = outer.opt_str("model_type")?;
    let by_class = first_class(outer)?;
    let text_config = |family: Family, resolution, adds| -> Result<Resolved<'a>, ConfigError> {
        let text = match outer.obj.get("text_config") {
            Some(Value::Object(obj)) => Fields {
                path: outer.path,
                obj,
                prefix: "text_config.",
            },
            Some(other) => {
                return Err(outer.invalid(
                    "text_config",
                    format!("must be an object, not {}", json_kind(other)),
                ))
            }
            None => return Err(outer.missing("text_config")),
        };
        Ok(Resolved {
            family,
            text,
            resolution,
            adds,
            left_out: Vec::new(),
        })
    };
    let top = |family: Family, resolution, adds| Resolved {
        family,
        text: Fields { ..*outer },
        resolution,
        adds,
        left_out: Vec::new(),
    };

    if let Some(t) = model_type {
        if let Some((family, nested)) = Family::from_model_type(t) {
            return match nested {
                true => text_config(family, Resolution::ModelType, None),
                false => Ok(top(family, Resolution::ModelType, None)),
            };
        }
        if let Some((_, reason)) = UNSIZED_MODEL_TYPES.iter().find(|(u, _)| *u == t) {
            return Err(outer.invalid("model_type", format!("is {t:?}: {reason}")));
        }
    }
    if let Some(a) = by_class.and_then(architecture) {
        let resolution = Resolution::Architecture { class: a.class };
        return match a.nested {
            true => text_config(a.family, resolution, a.adds),
            false => Ok(top(a.family, resolution, a.adds)),
        };
    }
    for &(key, prefix) in TEXT_MODEL_KEYS {
        let Some(obj) = at_path(outer.obj, key) else {
            continue;
        };
        let inner = Fields {
            path: outer.path,
            obj,
            prefix,
        };
        let by_type = inner
            .opt_str("model_type")?
            .and_then(Family::from_model_type)
            .filter(|&(_, nested)| !nested)
            .map(|(family, _)| (family, None));
        let by_inner_class = || {
            first_class(&inner).map(|c| {
                c.and_then(architecture)
                    .filter(|a| !a.nested)
                    .map(|a| (a.family, a.adds))
            })
        };
        let found = match by_type {
            Some(found) => Some(found),
            None => by_inner_class()?,
        };
        if let Some((family, adds)) = found {
            return Ok(Resolved {
                family,
                text: inner,
                resolution: Resolution::Wrapper { key },
                adds,
                left_out: left_out(outer.obj, key),
            });
        }
    }
    match (model_type, by_class) {
        (None, None) => Err(outer.missing("model_type")),
        (model_type, class) => Err(ConfigError::UnsupportedModelType {
            path: outer.path.into(),
            model_type: model_type.unwrap_or("(none)").to_string(),
            architecture: class.map(str::to_string),
            remote_code: outer.obj.contains_key("auto_map"),
            closest: super::closest::closest_family(model_type, outer.obj),
        }),
    }
}

/// Which text model a file was sized as and what of the file was not: what `arena plan`
/// reports beside the family.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TextModel {
    /// How the family was found.
    pub found_by: Resolution,
    /// What the file's class adds that is not sized ([`Architecture::adds`]).
    pub not_sized: Option<&'static str>,
    /// A wrapper's objects beside its text model (`vision_config`, `audio_config`, an omni
    /// model's `talker_config`, ...): not sized, and the whole-GPU plan refuses to leave
    /// them out unless asked for the text model alone. Empty for every file a row reads.
    pub left_out: Cow<'static, [Cow<'static, str>]>,
}

impl TextModel {
    /// A file whose `model_type` is its row's, nothing left out.
    pub const BY_MODEL_TYPE: TextModel = TextModel {
        found_by: Resolution::ModelType,
        not_sized: None,
        left_out: Cow::Borrowed(&[]),
    };
}
