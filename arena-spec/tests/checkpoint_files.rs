//! Checkpoints written here in transformers' names (tiny Qwen3 and Mixtral configs) loaded into
//! the six weight arenas on the host: every byte lands in its declared place, and each way a
//! checkpoint can be wrong is an error naming the tensor, its file and its place, found before
//! any byte is copied.

use crate::checkpoint_fixtures::*;
use arena_runtime::HostDevice;
use arena_spec::weights::checkpoint::{load, tensor_table, Checkpoint, CheckpointError, Problem};
use arena_spec::weights::{AllocatedWeights, WeightsSizes};
use serde_json::json;
use std::collections::BTreeMap;

#[test]
fn a_single_file_loads_every_tensor_into_its_declared_place() {
    let c = qwen3(json!({}));
    let s = sizes(&c);
    let d = dir("single");
    write(&d.join("model.safetensors"), &bf16_checkpoint(&c, &s));
    // Embedding, head, final norm; a layer's 2 norms, q, k, v, o, q and k norms, 3 MLPs.
    assert_eq!(load_and_compare(&c, &s, &d), 3 + 2 * (2 + 4 + 2 + 3));
}

#[test]
fn a_sharded_checkpoint_loads_through_its_index() {
    let c = qwen3(json!({}));
    let s = sizes(&c);
    let d = dir("sharded");
    let all = bf16_checkpoint(&c, &s);
    let (mut a, mut b) = (BTreeMap::new(), BTreeMap::new());
    let mut map = serde_json::Map::new();
    for (i, (name, t)) in all.into_iter().enumerate() {
        let shard = if i % 2 == 0 {
            "model-00001-of-00002.safetensors"
        } else {
            "model-00002-of-00002.safetensors"
        };
        map.insert(name.clone(), json!(shard));
        if i % 2 == 0 {
            a.insert(name, t)
        } else {
            b.insert(name, t)
        };
    }
    write(&d.join("model-00001-of-00002.safetensors"), &a);
    write(&d.join("model-00002-of-00002.safetensors"), &b);
    std::fs::write(
        d.join("model.safetensors.index.json"),
        json!({"metadata": {"total_size": 0}, "weight_map": map}).to_string(),
    )
    .unwrap();
    assert_eq!(load_and_compare(&c, &s, &d), 25);
}

/// Mixtral's checkpoints keep `block_sparse_moe` and `w1`/`w3`/`w2` (transformers'
/// `conversion_mapping.py`): each expert lands at its index in the gate/up and down rows.
#[test]
fn experts_load_by_index_under_the_family_s_own_names() {
    let c = mixtral(2);
    let s = sizes(&c);
    let table = tensor_table(&c, &s).unwrap();
    let w3 = table
        .iter()
        .find(|t| t.name == "model.layers.1.block_sparse_moe.experts.2.w3.weight")
        .unwrap();
    // Row 1 (up) of layer 1, expert 2: each expert 32 × 64 × 2 bytes.
    let expert = 32 * 64 * 2;
    assert_eq!(
        (w3.buffer, w3.layer, w3.expert),
        ("experts_gate_up", Some(1), Some(2))
    );
    assert_eq!(w3.offset, 2 * 4 * expert + 4 * expert + 2 * expert);
    assert!(table
        .iter()
        .any(|t| t.name == "model.layers.0.block_sparse_moe.gate.weight"));
    let d = dir("mixtral");
    write(&d.join("model.safetensors"), &bf16_checkpoint(&c, &s));
    load_and_compare(&c, &s, &d);
}

/// Sized as an engine allocates them (the vocabulary padded to 64 rows, `WeightsSizes::new`),
/// the embedding's and head's padding rows are set to zero.
#[test]
fn the_vocabulary_s_padding_rows_are_zeroed() {
    let c = qwen3(json!({}));
    let padded = WeightsSizes::new(&c, &c.weight_formats).unwrap();
    let d = dir("padded");
    write(
        &d.join("model.safetensors"),
        &bf16_checkpoint(&c, &sizes(&c)),
    );
    let (_, plan) = open_plan(&c, &padded, &d);
    let embed = plan
        .placed
        .iter()
        .find(|p| p.slot.buffer == "embed_tokens")
        .unwrap();
    assert_eq!(embed.zero_fill, (256 - 250) * 64 * 2);
    assert_eq!(load_and_compare(&c, &padded, &d), 25);
}

/// A tower's tensors, a layer past `num_hidden_layers` and RoPE's stored `inv_freq` are
/// listed with their reason, never loaded and never an error.
#[test]
fn what_a_text_engine_does_not_hold_is_skipped_by_name() {
    let c = qwen3(json!({}));
    let s = sizes(&c);
    let mut file = bf16_checkpoint(&c, &s);
    for name in [
        "model.visual.blocks.0.attn.qkv.weight",
        "model.layers.2.mlp.gate_proj.weight",
        "model.layers.0.self_attn.rotary_emb.inv_freq",
    ] {
        file.insert(name.into(), stub());
    }
    let d = dir("skipped");
    write(&d.join("model.safetensors"), &file);
    let (_, plan) = open_plan(&c, &s, &d);
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    let reasons: Vec<(&str, &str)> = plan
        .skipped
        .iter()
        .map(|k| (k.tensor.as_str(), k.reason))
        .collect();
    assert_eq!(reasons.len(), 3);
    assert!(reasons
        .iter()
        .any(|(t, r)| t.starts_with("model.visual") && r.contains("tower")));
    assert!(reasons
        .iter()
        .any(|(t, r)| t.starts_with("model.layers.2") && r.contains("num_hidden_layers")));
    assert!(reasons
        .iter()
        .any(|(t, r)| t.ends_with("inv_freq") && r.contains("RoPE")));
}

/// Writes the Qwen3 checkpoint changed by `change` and returns the plan's problems, and the
/// error `load` gives (nothing copied).
fn problems(name: &str, change: impl FnOnce(&mut BTreeMap<String, T>)) -> (Vec<String>, String) {
    let c = qwen3(json!({}));
    let s = sizes(&c);
    let mut file = bf16_checkpoint(&c, &s);
    change(&mut file);
    let d = dir(name);
    write(&d.join("model.safetensors"), &file);
    let (ckpt, plan) = open_plan(&c, &s, &d);
    let mut weights = AllocatedWeights::allocate(HostDevice::new(), &s).unwrap();
    let err = load(&ckpt, &plan, &mut weights, &mut |_, _| {
        panic!("nothing is copied")
    })
    .unwrap_err();
    assert!(matches!(err, CheckpointError::Mismatch { .. }));
    (
        plan.problems.iter().map(ToString::to_string).collect(),
        err.to_string(),
    )
}

#[test]
fn a_missing_tensor_names_its_place() {
    let (p, err) = problems("missing", |f| {
        f.remove("model.layers.1.self_attn.k_norm.weight");
    });
    assert_eq!(p, ["`model.layers.1.self_attn.k_norm.weight` is missing (it fills AttentionWeights.k_norm layer 1)"]);
    assert!(err.contains("(1 problem)"), "{err}");
}

#[test]
fn an_unexpected_tensor_names_its_file() {
    let (p, _) = problems("extra", |f| {
        f.insert(
            "model.layers.0.mlp.experts.0.up_proj.weight".into(),
            zeros("BF16", vec![2], 2),
        );
    });
    assert_eq!(p, ["`model.layers.0.mlp.experts.0.up_proj.weight` (model.safetensors) is no tensor of the declared weights and no rule skips it"]);
}

#[test]
fn a_wrong_shape_names_both_shapes() {
    let (p, _) = problems("shape", |f| {
        let t = f.get_mut("model.norm.weight").unwrap();
        t.shape = vec![32, 2];
    });
    assert_eq!(p, ["`model.norm.weight` (model.safetensors) has shape [32, 2]; ModelWeights.norm holds [64]"]);
}

#[test]
fn a_wrong_dtype_names_what_the_place_holds() {
    let (p, _) = problems("dtype", |f| {
        let t = f.get_mut("model.layers.0.self_attn.o_proj.weight").unwrap();
        t.dtype = "F32";
        t.shape = vec![64, 32];
    });
    assert_eq!(p, ["`model.layers.0.self_attn.o_proj.weight` (model.safetensors) is F32; AttentionWeights.o_proj layer 0 holds BF16 or F16 alone, or a quantized format's elements with their scales"]);
}

#[test]
fn a_matrix_of_the_wrong_width_names_its_bytes() {
    let (p, _) = problems("bytes", |f| {
        let t = f.get_mut("model.layers.1.mlp.up_proj.weight").unwrap();
        t.shape = vec![95, 64];
        t.data.truncate(95 * 64 * 2);
    });
    assert_eq!(p, ["`model.layers.1.mlp.up_proj.weight` (model.safetensors) is 12160 bytes with its scales; FfnWeights.up_proj layer 1 holds 12288"]);
}

#[test]
fn a_truncated_file_is_refused_when_opened() {
    let c = qwen3(json!({}));
    let d = dir("truncated");
    let path = d.join("model.safetensors");
    write(&path, &bf16_checkpoint(&c, &sizes(&c)));
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
    let err = Checkpoint::open(&d).unwrap_err().to_string();
    assert!(err.starts_with(&path.display().to_string()), "{err}");
    assert!(err.contains("incomplete"), "{err}");
}

#[test]
fn an_index_naming_a_missing_shard_is_refused() {
    let d = dir("noshard");
    std::fs::write(
        d.join("model.safetensors.index.json"),
        json!({"weight_map": {"model.norm.weight": "model-00001-of-00002.safetensors"}})
            .to_string(),
    )
    .unwrap();
    let err = Checkpoint::open(&d).unwrap_err().to_string();
    assert!(err.contains("model-00001-of-00002.safetensors"), "{err}");
    assert!(err.contains("No such file"), "{err}");
}

#[test]
fn an_index_and_a_shard_that_disagree_are_refused() {
    let c = qwen3(json!({}));
    let d = dir("disagree");
    write(&d.join("a.safetensors"), &bf16_checkpoint(&c, &sizes(&c)));
    std::fs::write(
        d.join("model.safetensors.index.json"),
        json!({"weight_map": {"model.norm.weight": "a.safetensors"}}).to_string(),
    )
    .unwrap();
    let err = Checkpoint::open(&d).unwrap_err().to_string();
    assert!(err.contains("which the index does not list"), "{err}");
}

/// gpt-oss's names are not declared (its MXFP4 expert blocks are not placed yet): refused by
/// its family's name.
#[test]
fn a_family_without_declared_names_is_refused_by_name() {
    let c = crate::shipped::config("gpt-oss-20b");
    let err = tensor_table(&c, &sizes(&c)).unwrap_err().to_string();
    assert!(
        err.contains("the checkpoint tensor names of a GptOss"),
        "{err}"
    );
}

#[test]
fn problems_serialise_with_their_kind() {
    let p = Problem::Missing {
        tensor: "a".into(),
        place: "b".into(),
    };
    assert_eq!(
        serde_json::to_value(&p).unwrap(),
        json!({"problem": "missing", "tensor": "a", "place": "b"})
    );
}

/// A multimodal class's checkpoint stores its text model under `model.language_model.`
/// (transformers 5) or `language_model.model.` with the head under `language_model.` (4.x):
/// the declared `model.` names are read under the prefix the checkpoint uses.
#[test]
fn a_text_model_under_a_multimodal_prefix_loads() {
    let c = qwen3(json!({}));
    let s = sizes(&c);
    for (prefix, head) in [
        ("model.language_model.", "lm_head.weight"),
        ("language_model.model.", "language_model.lm_head.weight"),
    ] {
        let file: BTreeMap<String, T> = bf16_checkpoint(&c, &s)
            .into_iter()
            .map(|(n, t)| match n.strip_prefix("model.") {
                Some(rest) => (format!("{prefix}{rest}"), t),
                None => (head.to_string(), t),
            })
            .collect();
        let d = dir(&format!("prefix-{}", prefix.len() + head.len()));
        write(&d.join("model.safetensors"), &file);
        assert_eq!(load_and_compare(&c, &s, &d), 25, "{prefix}");
    }
}

/// Qwen3.5-MoE, cut to two Gated DeltaNet layers and an attention layer at small widths: each
/// DeltaNet's `in_proj_qkv` and `in_proj_z` (and `in_proj_b`, `in_proj_a`) lie back to back
/// in its layer's place, in that order, each as long as it is stored (the second layer's
/// too: the table lists every layer's first part before any second one); a tensor-parallel
/// rank is refused by name (its parts would be cut apart).
#[test]
fn a_gated_deltanet_s_split_projections_lie_back_to_back() {
    let shipped = arena_spec::models::find("qwen3.5-35b-a3b").unwrap();
    let mut raw: serde_json::Value = serde_json::from_str(shipped.json).unwrap();
    let t = &mut raw["text_config"];
    for (key, value) in [
        ("hidden_size", 64),
        ("head_dim", 16),
        ("num_attention_heads", 4),
        ("linear_key_head_dim", 16),
        ("linear_value_head_dim", 16),
        ("linear_num_key_heads", 2),
        ("linear_num_value_heads", 4),
        ("num_experts", 4),
        ("num_experts_per_tok", 2),
        ("moe_intermediate_size", 32),
        ("shared_expert_intermediate_size", 32),
        ("vocab_size", 256),
        ("num_hidden_layers", 3),
    ] {
        t[key] = value.into();
    }
    t["layer_types"] = json!(["linear_attention", "linear_attention", "full_attention"]);
    let c =
        arena_spec::ModelConfig::from_json_str(&raw.to_string(), "tiny-qwen3.5-moe.json").unwrap();
    let s = sizes(&c);
    let mut file = bf16_checkpoint(&c, &s);
    // The table's shapes for the two parts are its guesses; store them as Qwen3.5 does:
    // q, k (2 heads of 16 each) and v (4 of 16) over the hidden size, then z (4 of 16); each
    // layer's parts filled with values of their own.
    let mut renamed = BTreeMap::new();
    for (n, t) in std::mem::take(&mut file) {
        let n = n.replacen("model.", "model.language_model.", 1);
        renamed.insert(n, t);
    }
    file = renamed;
    for layer in 0..2 {
        let p = format!("model.language_model.layers.{layer}.linear_attn.");
        for (part, rows, fill) in [("qkv", 128, 5), ("z", 64, 3), ("b", 4, 4), ("a", 4, 6)] {
            let data = filled(fill + 10 * layer, rows * 64 * 2);
            let shape = vec![rows, 64];
            let name = format!("{p}in_proj_{part}.weight");
            file.insert(
                name,
                T {
                    dtype: "BF16",
                    shape,
                    data,
                },
            );
        }
    }
    let d = dir("qwen3.5");
    write(&d.join("model.safetensors"), &file);
    load_and_compare(&c, &s, &d);
    let (_, plan) = open_plan(&c, &s, &d);
    let at = |n: &str| {
        let p = plan
            .placed
            .iter()
            .find(|p| p.slot.name.ends_with(n))
            .unwrap();
        (p.slot.buffer, p.slot.offset, p.slot.bytes)
    };
    let (qkvz, ba) = (192 * 128, 8 * 128);
    for (l, layer) in ["layers.0.", "layers.1."].into_iter().enumerate() {
        let at = |part: &str| at(&format!("{layer}linear_attn.in_proj_{part}.weight"));
        assert_eq!(at("qkv"), ("gdn_in_proj_qkvz", l * qkvz, 128 * 128));
        assert_eq!(
            at("z"),
            ("gdn_in_proj_qkvz", l * qkvz + 128 * 128, 64 * 128)
        );
        assert_eq!(at("a"), ("gdn_in_proj_ba", l * ba + 4 * 128, 4 * 128));
    }
    let layout = arena_spec::ParallelLayout::new(2, 1, 1).unwrap();
    let rank = c.shard(&layout.rank(0).unwrap()).unwrap();
    let err = tensor_table(
        &rank,
        &WeightsSizes::new(&rank, &rank.weight_formats).unwrap(),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("MixerWeights.gdn_in_proj_qkvz")
            && err
                .to_string()
                .contains("not cut for a tensor-parallel rank yet"),
        "{err}"
    );
}

/// `verify` reads every place back: after a load it compares every byte; a byte changed on
/// the device afterwards is named by its tensor, place and offset.
#[test]
fn verify_reads_every_place_back_and_names_a_difference() {
    use arena_spec::weights::checkpoint::verify;
    let c = qwen3(json!({}));
    let s = WeightsSizes::new(&c, &c.weight_formats).unwrap();
    let d = dir("verify");
    write(
        &d.join("model.safetensors"),
        &bf16_checkpoint(&c, &sizes(&c)),
    );
    let (ckpt, plan) = open_plan(&c, &s, &d);
    let mut weights = AllocatedWeights::allocate(HostDevice::new(), &s).unwrap();
    load(&ckpt, &plan, &mut weights, &mut |_, _| {}).unwrap();
    assert_eq!(verify(&ckpt, &plan, &weights).unwrap(), s.total_bytes());
    {
        let mut views =
            arena_spec::weights::AttentionWeightsViewsMut::of(&mut weights.attention).unwrap();
        let mut k = views.k_proj.layer(1).unwrap();
        let mut bytes = vec![0u8; k.byte_len()];
        k.read_bytes(&mut bytes).unwrap();
        bytes[100] ^= 1;
        k.write_bytes(&bytes).unwrap();
    }
    let err = verify(&ckpt, &plan, &weights).unwrap_err().to_string();
    assert_eq!(err, "`model.layers.1.self_attn.k_proj.weight` in AttentionWeights.k_proj layer 1 differs from the checkpoint at byte 100 of its place");
    weights.release().unwrap();
}
