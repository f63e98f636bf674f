//! The step's weights: views of the six weight arenas (`arena_spec::weights`), which the
//! checkpoint loader filled from a safetensors file in transformers' names. Each method hands
//! one layer's tensor at the type the kernels read it: a matrix's place is `u8` (its bytes in
//! the checkpoint's format, BF16 here) cast to `bf16`; norms and embeddings are `bf16` already.
//! Every layer of the example's models is either every one dense or every one sparse, so a
//! layer's index in its FFN group (`{dense_layer}`, `{moe_layer}`) is its index in the model;
//! a mixer's (`{attention_layer}`, `{gdn_layer}`) is its index among the layers of its kind
//! (`Decoder::index_in_kind`), which the attention and delta-net accessors take.

use crate::ops::Result;
use arena_runtime::dtype::bf16;
use arena_runtime::{Device, Region, View};
use arena_spec::weights::{
    AllocatedWeights, AttentionWeightsViews, FfnWeightsViews, MixerWeightsViews, ModelWeightsViews,
};

/// The views the step reads its weights through, borrowed from the loaded arenas.
pub struct Params<'a, D: Device> {
    model: ModelWeightsViews<'a, D>,
    attention: AttentionWeightsViews<'a, D>,
    ffn: FfnWeightsViews<'a, D>,
    mixers: MixerWeightsViews<'a, D>,
    /// The LM head is the embedding (`tie_word_embeddings`): `lm_head` holds nothing.
    tied: bool,
}

/// A matrix's place, `u8` in its format, read as the BF16 it holds.
fn matrix<'a, D: Device>(place: View<'a, u8, D>) -> Result<View<'a, bf16, D>> {
    Ok(place.cast::<bf16>()?)
}

impl<'a, D: Device> Params<'a, D> {
    pub fn of(weights: &'a AllocatedWeights<D>, tied: bool) -> Self {
        Params {
            model: ModelWeightsViews::of(&weights.model),
            attention: AttentionWeightsViews::of(&weights.attention),
            ffn: FfnWeightsViews::of(&weights.ffn),
            mixers: MixerWeightsViews::of(&weights.mixers),
            tied,
        }
    }

    /// `model.embed_tokens.weight`, `[vocab, hidden]`.
    pub fn embed(&self) -> View<'a, bf16, D> {
        self.model.embed_tokens
    }

    /// The LM head, `[vocab, hidden]`: `lm_head.weight`, or the embedding where tied.
    pub fn head(&self) -> View<'a, bf16, D> {
        if self.tied {
            self.model.embed_tokens
        } else {
            self.model.lm_head
        }
    }

    /// `model.norm.weight`.
    pub fn final_norm(&self) -> Result<View<'a, bf16, D>> {
        Ok(self.model.norm.layer(0)?)
    }

    /// Norm `which` of `layer` (`layer_norms` holds `input_layernorm` then
    /// `post_attention_layernorm`, a row each).
    fn layer_norm(&self, layer: usize, which: usize) -> Result<View<'a, bf16, D>> {
        let norms = self.model.layer_norms.layer(layer)?;
        Ok(norms.row_range(which..which + 1)?)
    }

    /// `model.layers.{layer}.input_layernorm.weight`.
    pub fn input_norm(&self, layer: usize) -> Result<View<'a, bf16, D>> {
        self.layer_norm(layer, 0)
    }

    /// `model.layers.{layer}.post_attention_layernorm.weight`.
    pub fn post_attention_norm(&self, layer: usize) -> Result<View<'a, bf16, D>> {
        self.layer_norm(layer, 1)
    }

    /// `self_attn.q_proj`, `k_proj`, `v_proj`, `o_proj` of `layer`, `[out, in]` each.
    pub fn q(&self, layer: usize) -> Result<View<'a, bf16, D>> {
        matrix(self.attention.q_proj.layer(layer)?)
    }
    pub fn k(&self, layer: usize) -> Result<View<'a, bf16, D>> {
        matrix(self.attention.k_proj.layer(layer)?)
    }
    pub fn v(&self, layer: usize) -> Result<View<'a, bf16, D>> {
        matrix(self.attention.v_proj.layer(layer)?)
    }
    pub fn o(&self, layer: usize) -> Result<View<'a, bf16, D>> {
        matrix(self.attention.o_proj.layer(layer)?)
    }

    /// `self_attn.q_norm` and `k_norm` of `layer`, a head's width each.
    pub fn q_norm(&self, layer: usize) -> Result<View<'a, bf16, D>> {
        Ok(self.attention.q_norm.layer(layer)?)
    }
    pub fn k_norm(&self, layer: usize) -> Result<View<'a, bf16, D>> {
        Ok(self.attention.k_norm.layer(layer)?)
    }

    /// A dense layer's `mlp.gate_proj`, `up_proj` and `down_proj`.
    pub fn gate(&self, layer: usize) -> Result<View<'a, bf16, D>> {
        matrix(self.ffn.gate_proj.layer(layer)?)
    }
    pub fn up(&self, layer: usize) -> Result<View<'a, bf16, D>> {
        matrix(self.ffn.up_proj.layer(layer)?)
    }
    pub fn down(&self, layer: usize) -> Result<View<'a, bf16, D>> {
        matrix(self.ffn.down_proj.layer(layer)?)
    }

    /// A sparse layer's router, `mlp.gate.weight`, `[experts, hidden]`.
    pub fn router(&self, layer: usize) -> Result<View<'a, bf16, D>> {
        Ok(self.ffn.router.layer(layer)?)
    }

    /// A sparse layer's experts' gate and up projections, `[experts, width, hidden]` each:
    /// the two rows of its `experts_gate_up` place (every expert's gate, then every one's up).
    pub fn experts_gate_up(&self, layer: usize) -> Result<(View<'a, bf16, D>, View<'a, bf16, D>)> {
        let place = self.ffn.experts_gate_up.layer(layer)?;
        let half = place.byte_len() / 2;
        let gate = place.region::<u8>(Region {
            offset: 0,
            bytes: half,
        })?;
        let up = place.region::<u8>(Region {
            offset: half,
            bytes: half,
        })?;
        Ok((matrix(gate)?, matrix(up)?))
    }

    /// A sparse layer's experts' down projections, `[experts, hidden, width]`.
    pub fn experts_down(&self, layer: usize) -> Result<View<'a, bf16, D>> {
        matrix(self.ffn.experts_down.layer(layer)?)
    }

    /// Delta-net layer `g`'s (its index among them) `linear_attn.in_proj_qkv` and
    /// `in_proj_z`, one place: `[conv channels + Hv·Dv, hidden]`, q | k | v | z rows.
    pub fn gdn_in_qkvz(&self, g: usize) -> Result<View<'a, bf16, D>> {
        matrix(self.mixers.gdn_in_proj_qkvz.layer(g)?)
    }
    /// `in_proj_b` and `in_proj_a`, one place: `[2·Hv, hidden]`, b rows then a rows.
    pub fn gdn_in_ba(&self, g: usize) -> Result<View<'a, bf16, D>> {
        matrix(self.mixers.gdn_in_proj_ba.layer(g)?)
    }
    /// `conv1d.weight`, `[conv channels, 1, kernel]`.
    pub fn gdn_conv(&self, g: usize) -> Result<View<'a, bf16, D>> {
        Ok(self.mixers.gdn_conv1d.layer(g)?)
    }
    /// `dt_bias` then `A_log`, `[2, Hv]`.
    pub fn gdn_dt_bias_a_log(&self, g: usize) -> Result<View<'a, bf16, D>> {
        Ok(self.mixers.gdn_dt_bias_a_log.layer(g)?)
    }
    /// `norm.weight`, the gated RMSNorm's, `[Dv]`.
    pub fn gdn_norm(&self, g: usize) -> Result<View<'a, bf16, D>> {
        Ok(self.mixers.gdn_norm.layer(g)?)
    }
    /// `out_proj.weight`, `[hidden, Hv·Dv]`.
    pub fn gdn_out(&self, g: usize) -> Result<View<'a, bf16, D>> {
        matrix(self.mixers.gdn_out_proj.layer(g)?)
    }
}
