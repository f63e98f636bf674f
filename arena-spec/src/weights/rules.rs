//! A family's weight rules ([`WeightRules`], the `weights` answer of its row in the family
//! table) resolved for one config: the file's `attention_bias` and `use_qk_norm`, its
//! per-layer inputs and experts, turned into what the layers hold.

use crate::config::family::{Bias, QkNorm, WeightRules};
use crate::config::{Family, ModelConfig};

/// The model types whose weights are counted (their row has [`WeightRules`]), each row's
/// own and its text model's, once each in the table's order: what
/// [`super::WeightsError::FamilyNotCounted`] lists. A file's family is found by more than its
/// `model_type` (`config::Resolution`); this names the rows.
pub fn counted_model_types() -> Vec<&'static str> {
    Family::model_types_of(
        Family::ALL
            .into_iter()
            .filter(|f| f.rules().weights.is_some()),
    )
}

/// A row's [`WeightRules`] for one config.
pub(super) struct Rules {
    pub(super) qkv_bias: bool,
    pub(super) o_bias: bool,
    pub(super) mlp_bias: bool,
    pub(super) qk_norm: QkNorm,
    pub(super) norms_per_layer: usize,
    pub(super) gated_ffn: bool,
    pub(super) activation_params: usize,
    pub(super) ffn_every_layer: bool,
    pub(super) moe_beside_dense: bool,
    pub(super) shared_expert_gate: bool,
    pub(super) sinks: bool,
    pub(super) sinks_sliding_only: bool,
    pub(super) expert_bias: bool,
    pub(super) router_bias: bool,
    pub(super) router_bias_buffer: bool,
    pub(super) moe_post_norm: bool,
    pub(super) norm_bias: bool,
    pub(super) output_gate_bias: bool,
    /// Rows of the learned position embedding (0: none).
    pub(super) position_rows: usize,
    pub(super) head_bias: bool,
    pub(super) embedding_norm: bool,
}

/// `None` where the family's row does not count its weights.
pub(super) fn rules(c: &ModelConfig) -> Option<Rules> {
    let w: WeightRules = c.family.rules().weights?;
    let bias = |b: Bias| match b {
        Bias::Never => false,
        Bias::Always => true,
        Bias::AttentionBias => c.attention_bias,
        Bias::MlpBias => c.mlp_bias,
    };
    Some(Rules {
        qkv_bias: bias(w.qkv_bias),
        o_bias: bias(w.o_bias),
        mlp_bias: bias(w.mlp_bias),
        qk_norm: match w.qk_norm {
            _ if w.qk_norm_switched && !c.use_qk_norm => QkNorm::None,
            // Molmo2's `qk_norm_type: "olmo"`: the norms span the whole projection.
            QkNorm::PerHead if c.qk_norm_whole => QkNorm::Whole,
            norm => norm,
        },
        norms_per_layer: c.layer_norms.unwrap_or(w.norms_per_layer)
            + usize::from(w.per_layer_input_norm && c.per_layer_input_dim > 0)
            + if c.is_moe() { w.moe_norms } else { 0 }
            + if w.post_norms_switched && c.post_norms {
                2
            } else {
                0
            },
        gated_ffn: w.gated_ffn,
        activation_params: w.activation_params,
        ffn_every_layer: w.ffn_every_layer,
        moe_beside_dense: w.moe_beside_dense,
        shared_expert_gate: w.shared_expert_gate,
        sinks: w.sinks,
        sinks_sliding_only: w.sinks_sliding_only,
        expert_bias: w.expert_bias,
        router_bias: w.router_bias,
        router_bias_buffer: w.router_bias_buffer,
        moe_post_norm: w.moe_post_norm,
        norm_bias: w.norm_bias,
        output_gate_bias: w.output_gate_bias,
        position_rows: w
            .position_rows_beyond_context
            .map_or(0, |beyond| c.max_position_embeddings.saturating_add(beyond)),
        head_bias: w.head_bias,
        embedding_norm: w.embedding_norm,
    })
}
