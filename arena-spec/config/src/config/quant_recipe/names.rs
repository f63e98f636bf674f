//! The module names each part of a model has in the checkpoints and in vLLM, layer by layer:
//! what a recipe's module lists are matched against.

use super::super::{Family, LayerKind, ModelConfig, WeightPart};

/// The parts a recipe decides.
pub(super) const PARTS: [WeightPart; 6] = [
    WeightPart::Attention,
    WeightPart::AttentionOut,
    WeightPart::Mixers,
    WeightPart::DenseFfn,
    WeightPart::Experts,
    WeightPart::SharedExperts,
];

impl ModelConfig {
    /// The parts of the model its layers hold (each with a format in
    /// [`ModelConfig::weight_formats`]), in [`WeightFormats::parts`](crate::WeightFormats::parts)' order.
    pub fn weight_parts(&self) -> Vec<WeightPart> {
        let mut held: Vec<WeightPart> = PARTS
            .into_iter()
            .filter(|p| layers_with(self, *p).next().is_some())
            .collect();
        if self.per_layer_input_dim > 0 || self.hc_mult > 0 {
            held.push(WeightPart::Other);
        }
        held
    }
}

/// The layers of the model that hold `part`.
pub(super) fn layers_with(c: &ModelConfig, part: WeightPart) -> impl Iterator<Item = usize> + '_ {
    (0..c.num_hidden_layers).filter(move |&i| layer_parts(c, i).contains(&part))
}

/// The parts layer `i` holds.
fn layer_parts(c: &ModelConfig, i: usize) -> Vec<WeightPart> {
    let kind = c
        .layer_kinds()
        .get(i)
        .copied()
        .unwrap_or(LayerKind::Attention);
    // Nemotron-H and Mamba-2 layers are one block each: a mixer, an MLP or a MoE.
    let one_block = matches!(c.family, Family::NemotronH | Family::Mamba2);
    let mut parts = match kind {
        LayerKind::Attention => vec![WeightPart::Attention, WeightPart::AttentionOut],
        LayerKind::Mlp => return vec![WeightPart::DenseFfn],
        LayerKind::Moe => vec![],
        _ => vec![WeightPart::Mixers],
    };
    if one_block && kind != LayerKind::Moe {
        return parts;
    }
    let dense = c.num_experts == 0 || c.dense_ffn_layers.get(i).copied().unwrap_or(false);
    if dense {
        parts.push(WeightPart::DenseFfn);
    } else {
        parts.push(WeightPart::Experts);
        if c.shared_expert_intermediate_size > 0 || c.n_shared_experts > 0 {
            parts.push(WeightPart::SharedExperts);
        }
    }
    parts
}

/// The prefixes a layer's modules have in the families' checkpoints and in vLLM.
const LAYER_PREFIXES: [&str; 6] = [
    "model.layers",
    "model.language_model.layers",
    "language_model.model.layers",
    "model.language_model.model.layers",
    "backbone.layers",
    "layers",
];

/// The names of `part`'s modules in layer `i`: the checkpoint's (transformers' modules, the
/// vendors' for DeepSeek-V4) and vLLM's fused ones, under every prefix.
pub(super) fn module_names(c: &ModelConfig, part: WeightPart, i: usize) -> Vec<String> {
    let gemma4 = c.family == Family::Gemma4;
    let suffixes: &[&str] = match part {
        WeightPart::Attention => &[
            "self_attn.q_proj",
            "self_attn.k_proj",
            "self_attn.v_proj",
            "self_attn.qkv_proj",
            "self_attn.q_a_proj",
            "self_attn.q_b_proj",
            "self_attn.kv_a_proj_with_mqa",
            "self_attn.fused_qkv_a_proj",
            "self_attn.kv_b_proj",
            "self_attn.indexer.wq_b",
            "self_attn.indexer.wk",
            "self_attn.index_q_proj",
            "self_attn.index_k_proj",
            "attn.wq_a",
            "attn.wq_b",
            "attn.wkv",
            "mixer.q_proj",
            "mixer.k_proj",
            "mixer.v_proj",
            "mixer.qkv_proj",
        ],
        WeightPart::AttentionOut => &["self_attn.o_proj", "attn.wo_a", "attn.wo_b", "mixer.o_proj"],
        WeightPart::Mixers => &[
            "linear_attn.in_proj_qkvz",
            "linear_attn.in_proj_qkv",
            "linear_attn.in_proj_z",
            "linear_attn.in_proj_ba",
            "linear_attn.out_proj",
            "mixer.in_proj",
            "mixer.out_proj",
            "conv.in_proj",
            "conv.out_proj",
            "self_attn.q_proj",
            "self_attn.qkv_proj",
            "self_attn.o_proj",
        ],
        WeightPart::DenseFfn => &[
            "mlp.gate_up_proj",
            "mlp.gate_proj",
            "mlp.up_proj",
            "mlp.down_proj",
            "mlp.fc1",
            "mlp.fc2",
            "mixer.up_proj",
            "mixer.down_proj",
            "feed_forward.w1",
            "feed_forward.w2",
            "ffn.w1",
            "ffn.w2",
        ],
        // Gemma 4's experts sit beside its MLP, not under it (`gemma4.py`: 646–653).
        WeightPart::Experts if gemma4 => &["experts", "experts.gate_up_proj", "experts.down_proj"],
        WeightPart::Experts => &[
            "mlp.experts",
            "mlp.experts.0.gate_proj",
            "mlp.experts.0.up_proj",
            "mlp.experts.0.down_proj",
            "mlp.experts.0.w1",
            "experts",
            "experts.gate_up_proj",
            "experts.down_proj",
            "block_sparse_moe.experts",
            "block_sparse_moe.experts.0.w1",
            "mixer.experts",
            "mixer.experts.0.up_proj",
            "mixer.fc1_latent_proj",
            "mixer.fc2_latent_proj",
            "ffn.experts",
            "ffn.experts.0.w1",
            "feed_forward.experts",
        ],
        WeightPart::SharedExperts if gemma4 => &["mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"],
        WeightPart::SharedExperts => &[
            "mlp.shared_experts.gate_up_proj",
            "mlp.shared_experts.gate_proj",
            "mlp.shared_experts.down_proj",
            "mlp.shared_expert.gate_up_proj",
            "mlp.shared_expert.gate_proj",
            "mlp.shared_expert.down_proj",
            "block_sparse_moe.shared_experts.gate_proj",
            "block_sparse_moe.shared_experts.down_proj",
            "mixer.shared_experts.up_proj",
            "mixer.shared_experts.down_proj",
            "ffn.shared_experts.w1",
            "ffn.shared_experts.w2",
            "feed_forward.shared_expert.gate_proj",
        ],
        WeightPart::Other => &[],
    };
    let mut names = Vec::with_capacity(suffixes.len() * LAYER_PREFIXES.len());
    for prefix in LAYER_PREFIXES {
        for s in suffixes {
            names.push(format!("{prefix}.{i}.{s}"));
        }
    }
    names
}

/// The names of the multi-token-prediction layers' modules: the DeepSeek-style layers after
/// the last (`model.layers.{L}`), and the `mtp.` modules of Qwen3.5's, MiniMax's and
/// DeepSeek-V4's files. Empty without MTP layers.
pub(super) fn mtp_names(c: &ModelConfig) -> Vec<String> {
    if c.mtp_layers == 0 {
        return Vec::new();
    }
    let l = c.num_hidden_layers;
    let mut names = vec![
        "mtp.fc".to_string(),
        "mtp.layers.0.self_attn.q_proj".to_string(),
        "mtp.layers.0.mlp.experts".to_string(),
        "mtp.0.attn.wq_a".to_string(),
        "mtp.0.ffn.experts".to_string(),
    ];
    for prefix in LAYER_PREFIXES {
        for s in [
            "self_attn.q_a_proj",
            "self_attn.q_proj",
            "mlp.experts",
            "eh_proj",
        ] {
            names.push(format!("{prefix}.{l}.{s}"));
        }
    }
    names
}
