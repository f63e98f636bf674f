//! The sized family closest to a file that none sizes, named in its refusal so that a user
//! with a vendor's remote-code file, or a family not sized here, knows where to start (an
//! override, a row of its own). Our heuristic, not a reference's: what it names is a starting
//! point, never a size.
//!
//! First by name: the row whose `model_type` shares the longest prefix with the file's (at
//! least [`MIN_PREFIX`] characters: `minimax_m3` → `minimax_m2`), provided the row is of the
//! file's [`Shape`]. Else by shape alone, the keys the file holds deciding it: MLA
//! (`kv_lora_rank`) → `deepseek_v3` with routed experts, `deepseek_v2`'s lighter cousin
//! `minicpm3` without; recurrent mixers → `qwen3_next` (Gated DeltaNet keys), `mamba2` (no
//! attention heads) or `nemotron_h` (Mamba keys beside attention); routed experts →
//! `qwen3_moe`; else `llama`.

use super::family::{Family, Mixers};
use serde_json::{Map, Value};

/// A name prefix shorter than this says nothing (`gpt_` is shared by `gpt_oss` and
/// `gpt_neox`, which have nothing else in common). Our choice.
pub const MIN_PREFIX: usize = 4;

/// The layer shape that decides which family is close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Multi-head latent attention (with or without experts).
    Mla,
    /// Linear-attention, Mamba or other recurrent mixers beside attention.
    Recurrent,
    /// Softmax attention with routed experts.
    Moe,
    /// Softmax attention with a dense MLP.
    Dense,
}

/// The sized family closest to a refused file, and how it was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closest {
    /// The row's `model_type`.
    pub model_type: &'static str,
    pub by: ClosestBy,
}

impl std::fmt::Display for Closest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let by = match self.by {
            ClosestBy::Name { .. } => "by name and layer shape",
            ClosestBy::Shape => "by layer shape",
        };
        write!(f, "{} ({by})", self.model_type)
    }
}

/// How the closest family was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClosestBy {
    /// Its `model_type` shares `prefix` characters with the file's, and its layers are of the
    /// file's shape.
    Name { prefix: usize },
    /// Its layers are of the shape the file's keys describe.
    Shape,
}

/// The sized family closest to the file `obj` whose `model_type` is `model_type`, or `None`
/// where nothing is sized at all.
pub fn closest_family(model_type: Option<&str>, obj: &Map<String, Value>) -> Option<Closest> {
    let text = obj
        .get("text_config")
        .and_then(Value::as_object)
        .unwrap_or(obj);
    let shape = file_shape(text);
    let by_name = model_type.and_then(|mine| {
        Family::ALL
            .iter()
            .filter(|f| family_shape(**f) == shape)
            .flat_map(|f| Family::model_types_of([*f]))
            .map(|theirs| (common_prefix(mine, theirs), theirs))
            .filter(|(n, _)| *n >= MIN_PREFIX)
            // The longest prefix; of equals, the row first in the table.
            .fold(None, |best: Option<(usize, &'static str)>, c| match best {
                Some(b) if b.0 >= c.0 => Some(b),
                _ => Some(c),
            })
    });
    if let Some((prefix, theirs)) = by_name {
        return Some(Closest {
            model_type: theirs,
            by: ClosestBy::Name { prefix },
        });
    }
    let representative = match shape {
        Shape::Mla if has_experts(text) => "deepseek_v3",
        Shape::Mla => "minicpm3",
        Shape::Recurrent if has_any(text, &["linear_num_value_heads", "linear_key_head_dim"]) => {
            "qwen3_next"
        }
        // Mamba's own files (`MambaConfig`, `FalconMambaConfig`) have no attention heads.
        Shape::Recurrent if !has(text, "num_attention_heads") => "mamba2",
        Shape::Recurrent => "nemotron_h",
        Shape::Moe => "qwen3_moe",
        Shape::Dense => "llama",
    };
    Family::model_types_of(Family::ALL)
        .contains(&representative)
        .then_some(Closest {
            model_type: representative,
            by: ClosestBy::Shape,
        })
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// A key present with a value other than `null`, `0` or `false`.
fn has(obj: &Map<String, Value>, key: &str) -> bool {
    match obj.get(key) {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(_) => true,
    }
}

fn has_any(obj: &Map<String, Value>, keys: &[&str]) -> bool {
    keys.iter().any(|k| has(obj, k))
}

fn has_experts(obj: &Map<String, Value>) -> bool {
    has_any(
        obj,
        &[
            "n_routed_experts",
            "num_experts",
            "num_local_experts",
            "moe_num_experts",
        ],
    )
}

fn file_shape(obj: &Map<String, Value>) -> Shape {
    let recurrent = obj
        .keys()
        .any(|k| k.starts_with("mamba_") || k.starts_with("ssm_") || k.starts_with("linear_"))
        || has_any(
            obj,
            &[
                "hybrid_override_pattern",
                "layers_block_type",
                "conv_kernel",
                "state_size",
            ],
        );
    if has(obj, "kv_lora_rank") {
        Shape::Mla
    } else if recurrent {
        Shape::Recurrent
    } else if has_experts(obj) {
        Shape::Moe
    } else {
        Shape::Dense
    }
}

fn family_shape(family: Family) -> Shape {
    let rules = family.rules();
    if rules.mla {
        Shape::Mla
    } else if !matches!(rules.mixers, Mixers::Attention | Mixers::Blocks) {
        Shape::Recurrent
    } else if rules.moe.is_some() {
        Shape::Moe
    } else {
        Shape::Dense
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn closest(v: Value) -> Option<(&'static str, ClosestBy)> {
        let obj = v.as_object().unwrap().clone();
        let model_type = obj
            .get("model_type")
            .and_then(Value::as_str)
            .map(str::to_string);
        closest_family(model_type.as_deref(), &obj).map(|c| (c.model_type, c.by))
    }

    #[test]
    fn a_family_of_the_same_name_and_shape_is_closest() {
        // `minimax_m` is shared with two rows (`minimax_m2`, `minimax_m3_vl`): the first.
        let m4 = json!({"model_type": "minimax_m4", "num_local_experts": 256});
        assert_eq!(
            closest(m4),
            Some(("minimax_m2", ClosestBy::Name { prefix: 9 }))
        );
        let v4 = json!({"model_type": "deepseek_v5", "kv_lora_rank": 512, "n_routed_experts": 8});
        assert_eq!(
            closest(v4).map(|c| c.0),
            Some("deepseek_v3"),
            "the first of equal prefixes"
        );
    }

    #[test]
    fn a_shared_prefix_of_another_shape_yields_to_the_shape() {
        // gpt_oss is routed experts; gpt_neox a dense MLP.
        let neox = json!({"model_type": "gpt_neox", "hidden_size": 64});
        assert_eq!(closest(neox), Some(("llama", ClosestBy::Shape)));
        let hybrid =
            json!({"model_type": "zamba2", "mamba_d_state": 64, "num_attention_heads": 32});
        assert_eq!(closest(hybrid), Some(("nemotron_h", ClosestBy::Shape)));
        let mamba = json!({"model_type": "falcon_mamba", "state_size": 16, "conv_kernel": 4});
        assert_eq!(closest(mamba), Some(("mamba2", ClosestBy::Shape)));
        let gdn = json!({"model_type": "x", "linear_num_value_heads": 32});
        assert_eq!(closest(gdn), Some(("qwen3_next", ClosestBy::Shape)));
        let moe = json!({"model_type": "arctic", "num_experts": 0, "moe_num_experts": 16});
        assert_eq!(closest(moe), Some(("qwen3_moe", ClosestBy::Shape)));
        let mla = json!({"model_type": "x", "kv_lora_rank": 256});
        assert_eq!(closest(mla), Some(("minicpm3", ClosestBy::Shape)));
    }

    #[test]
    fn a_wrapper_is_judged_by_its_text_model() {
        let wrapped = json!({"model_type": "vlm_x", "text_config": {"num_experts": 64}});
        assert_eq!(closest(wrapped), Some(("qwen3_moe", ClosestBy::Shape)));
    }
}
