//! What the reference builds, from the config and the family's modules: how many layers of a
//! rank hold each group of tensors and at what widths ([`WeightLayers`]). The weight
//! declarations size their buffers from it; nothing here is a byte.

use super::rules::{counted_model_types, rules};
use super::WeightsError;
use crate::config::family::QkNorm;
use crate::config::{LayerKind, ModelConfig, WeightFormat};
use std::ops::Range;

/// The layers and widths the weight declarations read: one figure per group of tensors, 0
/// where the model (or the rank) has none. Built by [`WeightLayers::of`] from a config, a
/// rank's config giving the rank's share (heads and widths split by tp as
/// `ModelConfig::shard` splits them, the layers of its stage).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WeightLayers {
    /// Vocabulary rows of the output head on this rank (and of the embedding, but for
    /// `embedding_rows`).
    pub vocab_rows: usize,
    /// Rows of the input embedding on this rank: the vocabulary's, and the rows a family
    /// reads beyond it (Molmo2's `additional_vocab_size`: `ModelConfig::embedding_extra_rows`),
    /// split and padded as the vocabulary is.
    pub embedding_rows: usize,
    /// 1 where this rank holds the input embedding (the first stage), else 0.
    pub embedding: usize,
    /// 1 where this rank holds an output head of its own (the last stage, unless the head is
    /// the embedding's matrix on this rank: `tie_word_embeddings`), else 0.
    pub lm_head: usize,
    /// 1 where this rank holds the output head and the head has a bias (GPT-J), tied or not.
    pub head_bias: usize,
    /// 1 where this rank holds the input embedding and a norm follows it (BLOOM's
    /// `word_embeddings_layernorm`), else 0.
    pub embedding_norm: usize,
    /// Rows of the learned position embedding where this rank holds the input embedding and
    /// the model has one (GPT-2's `wpe`), else 0.
    pub position_rows: usize,
    /// 1 where this rank holds the final norm (the last stage), else 0.
    pub final_norm: usize,
    /// The final norm's bias: 1 where it has one (`WeightRules::norm_bias`) on the last stage.
    pub final_norm_bias: usize,
    /// Decoder layers on this rank.
    pub layers: usize,
    /// Norm weights of `hidden_size` a layer (input and post-attention: 2; Gemma's pre- and
    /// post-FFN: 4; Gemma 4's per-layer-input norm and MoE norms more; Nemotron-H's 1;
    /// DeciLM's differ by block: [`Self::block_norms`]).
    pub norms_per_layer: usize,
    /// 1 where each of those norms has a bias too (`WeightRules::norm_bias`).
    pub layer_norm_bias: usize,
    /// DeciLM's norms, one a block's attention and one its FFN where that part is not a
    /// no-op (`input_layernorm`, `post_attention_layernorm`); 0 elsewhere.
    pub block_norms: usize,
    /// Attention layers at the model's widths: every plain attention layer, or, where the
    /// full-attention layers have widths of their own, the others (the sliding ones).
    pub attention: AttentionGroup,
    /// Full-attention layers at widths of their own (Gemma 4's `global_head_dim`, Laguna's
    /// fewer heads); none elsewhere.
    pub full: AttentionGroup,
    /// MLA layers (DeepSeek-V3 and its kin).
    pub mla: usize,
    /// Of those, with a low-rank q (`q_lora_rank` > 0).
    pub mla_q_lora: usize,
    /// Of those, with a plain q projection (`q_lora_rank` 0, Kimi-Linear).
    pub mla_q_direct: usize,
    /// Of those, with DeepSeek-V3.2's indexer.
    pub mla_indexer: usize,
    /// DeepSeek-V4's attention layers (one K=V head).
    pub one_vector: usize,
    /// Its CSA layers.
    pub csa: usize,
    /// Of those, with the indexer's own compressor (`ModelConfig::has_indexer`).
    pub csa_indexer: usize,
    /// Its HCA layers.
    pub hca: usize,
    /// Gemma 4's layers with a per-layer input (its gate and projection).
    pub per_layer_inputs: usize,
    /// 1 on the first stage of a model with per-layer inputs (the model's per-layer
    /// embedding, projection and norm), else 0.
    pub per_layer_embedding: usize,
    /// DeepSeek-V4's layers with hyper-connections.
    pub hyper: usize,
    /// 1 on the last stage where the head has its hyper-connection, else 0.
    pub hyper_head: usize,
    /// Dense FFN layers at `intermediate_size` (at half of it beside Gemma 4's double-wide
    /// ones). Gemma 4's MLP beside its MoE block is not here: the config holds it as the
    /// block's shared expert.
    pub dense: FfnGroup,
    /// Gemma 4's double-wide MLPs (its KV-shared layers', `use_double_wide_mlp`).
    pub dense_wide: FfnGroup,
    /// 1 where the dense MLPs (`dense`) carry gate, up and down biases (`mlp_bias`, where
    /// the family's MLP reads it), else 0.
    pub dense_bias: usize,
    /// Learned scalars of the dense MLPs' activation a layer (Apertus's xIELU: 2), else 0.
    pub activation_params: usize,
    /// DeciLM's MLPs, each at its block's width.
    pub ffn_blocks: FfnBlocks,
    /// 1 where the FFNs have a gate projection (SwiGLU), 0 for squared-ReLU up/down.
    pub gated_ffn: usize,
    /// Layers with routed experts.
    pub moe: usize,
    /// Of those, with a sigmoid gate on the shared expert (`shared_expert_gate`: Qwen3-Next,
    /// Qwen3.5-MoE).
    pub shared_expert_gate: usize,
    /// Of those, with biased experts and router (gpt-oss).
    pub expert_bias: usize,
    /// Of those, with a learned `e_score_correction_bias` parameter (Laguna; a buffer in
    /// DeepSeek's, not counted).
    pub router_bias: usize,
    /// Of those, with `e_score_correction_bias` as a buffer of the reference (DeepSeek-V3
    /// and its kin, GLM, Kimi, MiniMax-M2, Nemotron-H), kept in FP32 beside the weights.
    pub router_bias_buffer: usize,
    /// Of those, with a norm of the routed block's output (A.X-K1).
    pub moe_post_norm: usize,
    /// Of those, with Gemma 4's router (`router.proj`, `scale`, `per_expert_scale`) in place
    /// of the plain `gate`.
    pub scaled_router: usize,
}

/// One group of attention layers and their widths (0: the group has no such tensor).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct AttentionGroup {
    /// Layers with q and o projections.
    pub layers: usize,
    /// Of those, with k projections (not KV-shared).
    pub kv_layers: usize,
    /// Of those, with v projections (keys not their values).
    pub v_layers: usize,
    /// q's output width (doubled where the output is gated).
    pub q: usize,
    /// k's output width.
    pub k: usize,
    /// v's output width.
    pub v: usize,
    /// o's input width.
    pub o_in: usize,
    /// q's bias width (0: unbiased).
    pub q_bias: usize,
    /// k's bias width (0: unbiased).
    pub k_bias: usize,
    /// v's bias width (0: unbiased).
    pub v_bias: usize,
    /// o's bias width (0: unbiased).
    pub o_bias: usize,
    /// q's norm width (a head's, or all heads'; 0: none).
    pub q_norm: usize,
    /// k's norm width (0: none).
    pub k_norm: usize,
    /// Attention sinks, one a head (gpt-oss; 0: none).
    pub sinks: usize,
    /// Laguna's output gate's width (0: none).
    pub output_gate: usize,
    /// The output gate's bias, one a head (Beam; 0: none).
    pub gate_bias: usize,
}

/// Dense FFN layers of one width.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct FfnGroup {
    pub layers: usize,
    pub width: usize,
}

/// MLPs of a width a layer (DeciLM's blocks): each buffer holds every block's matrix back
/// to back in block order, a block at its own width and bytes, so block `i`'s matrix starts
/// where the earlier blocks' end ([`Self::range`]). A no-op FFN takes nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct FfnBlocks {
    /// Each block's FFN width on this rank, in block order (0: a no-op FFN).
    pub widths: Vec<usize>,
}

impl FfnBlocks {
    /// Blocks with an FFN.
    pub fn layers(&self) -> usize {
        self.widths.iter().filter(|&&w| w > 0).count()
    }

    /// Bytes of every block's `[width, hidden]` matrix (gate or up; `down`: `[hidden,
    /// width]`) in `format`, back to back (saturating: a sum past `usize` fits no GPU, and
    /// the arena's sizing refuses it).
    pub fn bytes(&self, format: WeightFormat, hidden: usize, down: bool) -> usize {
        Self::sum(&self.widths, format, hidden, down)
    }

    /// Where block `i`'s matrix lies in its buffer, in bytes (an empty range for a no-op
    /// FFN); `None` past the last block. `i` counts every block of the rank's stage, no-op
    /// FFNs included (the config's layer index less the stage's first); `hidden` is
    /// `config.hidden_size`, `format` the dense FFN's (`WeightFormats::dense_ffn`). The
    /// buffer's view sliced by it is that block's matrix.
    pub fn range(
        &self,
        i: usize,
        format: WeightFormat,
        hidden: usize,
        down: bool,
    ) -> Option<Range<usize>> {
        let width = *self.widths.get(i)?;
        let start = Self::sum(&self.widths[..i], format, hidden, down);
        Some(start..start.saturating_add(Self::sum(&[width], format, hidden, down)))
    }

    fn sum(widths: &[usize], format: WeightFormat, hidden: usize, down: bool) -> usize {
        let matrix = |w: usize| match (w, down) {
            (0, _) => 0,
            (w, false) => format.linear_bytes(w, hidden),
            (w, true) => format.linear_bytes(hidden, w),
        };
        widths
            .iter()
            .map(|&w| matrix(w))
            .fold(0usize, usize::saturating_add)
    }
}

/// The vocabulary rows one tp rank holds: as the reference has them on one GPU (unless
/// `padded`), else padded to a multiple of 64 and split evenly (vLLM's
/// `VocabParallelEmbedding`, which pads on one GPU too).
fn vocab_rows(vocab: usize, tp: usize, padded: bool) -> usize {
    if tp == 1 && !padded {
        return vocab;
    }
    vocab.div_ceil(64).saturating_mul(64).div_ceil(tp)
}

impl WeightLayers {
    /// The groups of `config` (a whole model, or one rank's config from
    /// `ModelConfig::shard`). The embedding's and head's rows: with `padded`, the vocabulary
    /// padded to a multiple of 64 and split by tp, on one GPU too (what an engine allocates,
    /// vLLM's `VocabParallelEmbedding`); without, the reference's own vocabulary on one GPU
    /// (its parameter count), and on a rank of tp > 1 the padded split all the same.
    pub fn of(config: &ModelConfig, padded: bool) -> Result<WeightLayers, WeightsError> {
        let c = config;
        // DeciLM's attention blocks are one group: its kv heads must be one count.
        let mut block_kv = c.blocks.iter().map(|b| b.kv_heads).filter(|&kv| kv > 0);
        if let Some(kv) = block_kv.next() {
            if block_kv.any(|other| other != kv) {
                return Err(WeightsError::PerLayerWidths {
                    model: c.source.to_string(),
                    why: "its attention blocks differ in kv heads (block_configs' \
                          n_heads_in_group), and the attention's weights are declared at one \
                          width for all its layers",
                });
            }
        }
        let rules = rules(c).ok_or_else(|| WeightsError::FamilyNotCounted {
            model: c.source.to_string(),
            family: c.family,
            counted: counted_model_types().join(", "),
        })?;
        let (tp, first_stage, last_stage) = match &c.shard {
            Some(s) => (s.rank.layout.tp, s.layers.start == 0, s.holds_lm_head),
            None => (1, true, true),
        };
        let layers = c.layer_kinds().len();

        // Attention layers: MLA, DeepSeek-V4's, or the plain kind, split in two groups where
        // the full-attention layers have widths of their own.
        let attention_layers = c.num_attention_layers();
        let (mla, one_vector, plain) = if c.kv_is_one_vector() {
            (0, attention_layers, 0)
        } else if c.is_mla() {
            (attention_layers, 0, 0)
        } else {
            (0, 0, attention_layers)
        };
        let own_full_widths = plain > 0
            && (c.global_head_dim > 0 || c.full_attention_heads > 0 || c.global_kv_heads > 0);
        if c.heads_vary_within_type {
            return Err(WeightsError::PerLayerWidths {
                model: c.source.to_string(),
                why: "its q heads by layer (num_attention_heads_per_layer) are not one count \
                      for the full-attention layers and the widest for the others",
            });
        }
        if rules.moe_beside_dense && c.is_moe() && c.shared_ffn_doubled {
            return Err(WeightsError::PerLayerWidths {
                model: c.source.to_string(),
                why: "a double-wide MLP beside an MoE block (use_double_wide_mlp with \
                      enable_moe_block) is not declared here",
            });
        }
        if own_full_widths && c.sliding_window == 0 {
            // Which layers are full is kept by their KV kind, which needs the window.
            return Err(WeightsError::PerLayerWidths {
                model: c.source.to_string(),
                why: "its full-attention layers have widths of their own, but without a \
                      sliding_window the config does not keep which layers are full",
            });
        }
        let (full_kv, full_shared) = if own_full_widths {
            (c.num_full_kv_layers(), c.num_shared_full_kv_layers())
        } else {
            (0, 0)
        };
        let full_layers = full_kv + full_shared;
        let shared = c.num_shared_kv_layers();
        let hd = c.head_dim();
        let gate_q = if c.attn_output_gate { 2 } else { 1 };
        let group = |layers: usize, kv_layers: usize, heads: usize, kv_heads: usize, hd: usize| {
            let (q, k) = (heads.saturating_mul(hd), kv_heads.saturating_mul(hd));
            let (qn, kn) = match rules.qk_norm {
                QkNorm::None => (0, 0),
                QkNorm::PerHead => (hd, hd),
                QkNorm::Whole => (q, k),
                QkNorm::WholeUnsplit => (q.saturating_mul(tp), k.saturating_mul(tp)),
            };
            let bias = |w: usize| if rules.qkv_bias { w } else { 0 };
            AttentionGroup {
                layers,
                kv_layers,
                v_layers: kv_layers,
                q: q.saturating_mul(gate_q),
                k,
                v: k,
                o_in: q,
                // The gated q's bias is as wide as its projection (`q_proj`'s `bias`).
                q_bias: bias(q.saturating_mul(gate_q)),
                k_bias: bias(k),
                v_bias: bias(k),
                o_bias: if rules.o_bias { c.hidden_size } else { 0 },
                q_norm: qn,
                k_norm: kn,
                sinks: if rules.sinks { heads } else { 0 },
                output_gate: heads.saturating_mul(c.attention_gate_per_head),
                gate_bias: if rules.output_gate_bias { heads } else { 0 },
            }
        };
        let mut attention = group(
            plain.saturating_sub(full_layers),
            plain
                .saturating_sub(full_layers)
                .saturating_sub(shared.saturating_sub(full_shared)),
            c.num_attention_heads,
            c.num_key_value_heads,
            hd,
        );
        // A value head of its own size (`v_head_dim` beside `head_dim`).
        let vd = c.value_head_dim();
        attention.v = c.num_key_value_heads.saturating_mul(vd);
        attention.o_in = c.num_attention_heads.saturating_mul(vd);
        attention.v_bias = if rules.qkv_bias { attention.v } else { 0 };
        let full = if own_full_widths {
            let heads = if c.full_attention_heads > 0 {
                c.full_attention_heads
            } else {
                c.num_attention_heads
            };
            let fhd = if c.global_head_dim > 0 {
                c.global_head_dim
            } else {
                hd
            };
            let kv_heads = if c.global_kv_heads > 0 {
                c.global_kv_heads
            } else {
                c.num_key_value_heads
            };
            let mut g = group(full_layers, full_kv, heads, kv_heads, fhd);
            // Without a head size of their own, their values keep the model's value head size
            // (MiMo-V2-Flash's `v_head_dim`), as the other group's do.
            if c.global_head_dim == 0 {
                g.v = kv_heads.saturating_mul(vd);
                g.o_in = heads.saturating_mul(vd);
                g.v_bias = if rules.qkv_bias { g.v } else { 0 };
            }
            if rules.sinks_sliding_only {
                g.sinks = 0;
            }
            // Gemma 4's keys-are-values layers have no v projection.
            if c.global_k_eq_v {
                (g.v_layers, g.v, g.v_bias) = (0, 0, 0);
            }
            g
        } else {
            AttentionGroup::default()
        };

        // FFNs: dense, routed, both (Gemma 4), layers of their own (Nemotron-H), or a width
        // a block (DeciLM: `ffn_blocks`).
        let blocks = !c.blocks.is_empty();
        let (dense_layers, moe) = if blocks {
            (0, 0)
        } else if !rules.ffn_every_layer {
            (c.count(LayerKind::Mlp), c.count(LayerKind::Moe))
        } else if !c.is_moe() {
            (layers, 0)
        } else if rules.moe_beside_dense {
            // The config keeps Gemma 4's MLP beside the MoE block as the block's shared
            // expert (`shared_expert_intermediate_size`), which it is in shape: the shared
            // expert's buffers hold it.
            (0, layers)
        } else {
            // `moe_dense_layers` counts the stage's dense entries of `dense_ffn_layers`.
            (
                c.moe_dense_layers,
                layers.saturating_sub(c.moe_dense_layers),
            )
        };
        let (dense, dense_wide) = if c.shared_ffn_doubled {
            (
                FfnGroup {
                    layers: dense_layers.saturating_sub(shared),
                    width: c.intermediate_size / 2,
                },
                FfnGroup {
                    layers: shared,
                    width: c.intermediate_size,
                },
            )
        } else {
            (
                FfnGroup {
                    layers: dense_layers,
                    width: c.intermediate_size,
                },
                FfnGroup::default(),
            )
        };
        // DeepSeek-V4's first `hash_moe_layers` route by token id (a `tid2eid` table, not
        // planned: its format's bytes are not either) and keep no router bias: those on
        // this rank.
        let hash_layers = match &c.shard {
            Some(s) => s
                .layers
                .end
                .min(c.hash_moe_layers)
                .saturating_sub(s.layers.start.min(c.hash_moe_layers)),
            None => c.hash_moe_layers,
        };
        let shared_expert = c.shared_expert_intermediate_size > 0;
        let with = |on: bool, n: usize| if on { n } else { 0 };
        let per_layer_inputs = c.per_layer_input_dim > 0;
        Ok(WeightLayers {
            vocab_rows: vocab_rows(c.vocab_size, tp, padded),
            embedding_rows: vocab_rows(
                c.vocab_size.saturating_add(c.embedding_extra_rows),
                tp,
                padded,
            ),
            embedding: usize::from(first_stage),
            lm_head: usize::from(last_stage && !(c.tie_word_embeddings && first_stage)),
            head_bias: usize::from(last_stage && rules.head_bias),
            embedding_norm: usize::from(first_stage && rules.embedding_norm),
            position_rows: with(first_stage, rules.position_rows),
            final_norm: usize::from(last_stage),
            final_norm_bias: usize::from(last_stage && rules.norm_bias),
            layers,
            norms_per_layer: if blocks { 0 } else { rules.norms_per_layer },
            layer_norm_bias: usize::from(rules.norm_bias),
            block_norms: c
                .blocks
                .iter()
                .map(|b| usize::from(b.kv_heads > 0) + usize::from(b.ffn_width > 0))
                .sum(),
            attention,
            full,
            mla,
            mla_q_lora: with(c.q_lora_rank > 0, mla),
            mla_q_direct: with(c.q_lora_rank == 0, mla),
            mla_indexer: with(c.has_indexer() && mla > 0, c.num_indexer_layers()),
            one_vector,
            csa: with(one_vector > 0, c.num_csa_kv_layers()),
            csa_indexer: with(one_vector > 0 && c.has_indexer(), c.num_csa_kv_layers()),
            hca: with(one_vector > 0, c.num_hca_kv_layers()),
            per_layer_inputs: with(per_layer_inputs, layers),
            per_layer_embedding: usize::from(per_layer_inputs && first_stage),
            hyper: with(c.hc_mult > 0, layers),
            hyper_head: usize::from(c.hc_mult > 0 && last_stage),
            dense,
            dense_wide,
            dense_bias: usize::from(rules.mlp_bias),
            activation_params: rules.activation_params,
            ffn_blocks: FfnBlocks {
                widths: c.blocks.iter().map(|b| b.ffn_width).collect(),
            },
            gated_ffn: usize::from(rules.gated_ffn),
            moe,
            shared_expert_gate: with(rules.shared_expert_gate && shared_expert, moe),
            expert_bias: with(rules.expert_bias, moe),
            router_bias: with(rules.router_bias, moe),
            router_bias_buffer: with(rules.router_bias_buffer, moe.saturating_sub(hash_layers)),
            moe_post_norm: with(rules.moe_post_norm, moe),
            scaled_router: with(rules.moe_beside_dense, moe),
        })
    }
}
