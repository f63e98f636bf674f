//! What the reference builds, from the config and the family's modules: how many layers of a
//! rank hold each group of tensors and at what widths ([`WeightLayers`]). The weight
//! declarations size their buffers from it; nothing here is a byte.

use super::WeightsError;
use crate::config::{Family, LayerKind, ModelConfig};

/// The layers and widths the weight declarations read: one figure per group of tensors, 0
/// where the model (or the rank) has none. Built by [`WeightLayers::of`] from a config, a
/// rank's config giving the rank's share (heads and widths split by tp as
/// `ModelConfig::shard` splits them, the layers of its stage).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WeightLayers {
    /// Vocabulary rows of the embedding and output head on this rank.
    pub vocab_rows: usize,
    /// 1 where this rank holds the input embedding (the first stage), else 0.
    pub embedding: usize,
    /// 1 where this rank holds an output head of its own (the last stage, unless the head is
    /// the embedding's matrix on this rank: `tie_word_embeddings`), else 0.
    pub lm_head: usize,
    /// 1 where this rank holds the final norm (the last stage), else 0.
    pub final_norm: usize,
    /// Decoder layers on this rank.
    pub layers: usize,
    /// Norm weights of `hidden_size` a layer (input and post-attention: 2; Gemma's pre- and
    /// post-FFN: 4; Gemma 4's per-layer-input norm and MoE norms more; Nemotron-H's 1).
    pub norms_per_layer: usize,
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
}

/// Dense FFN layers of one width.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct FfnGroup {
    pub layers: usize,
    pub width: usize,
}

/// The families counted, by name, for messages.
pub const COUNTED: &str = "llama, cohere, llama4, mistral, ministral3, mistral3, mixtral, qwen2, qwen3, \
                           qwen3_moe, qwen3_vl, qwen3_vl_moe, qwen3_next, qwen3_5, qwen3_5_moe, \
                           exaone4, olmo3, minimax_m1, minimax_m2, phi3, gemma3, gemma4, laguna, \
                           lfm2, lfm2_vl, nemotron_h, mamba2, kimi_linear, deepseek_v3, deepseek_v32, deepseek_v4, \
                           kimi_k2, kimi_k25, glm4_moe, glm_moe_dsa, gpt_oss, mimo_v2_flash";

/// Which projections carry a bias and what else a family's layers add (the attention, MoE
/// and decoder-layer classes of transformers 5.24).
struct Rules {
    qkv_bias: bool,
    o_bias: bool,
    qk_norm: QkNorm,
    /// Norm weights a layer: input and post-attention (2); Gemma's pre- and post-FFN too
    /// (4); Nemotron-H's one a block (1).
    norms_per_layer: usize,
    /// The FFN has a gate projection (SwiGLU); false for Nemotron-H's squared-ReLU up/down.
    gated_ffn: bool,
    /// Every layer has an FFN after its mixer; false for Nemotron-H, whose FFNs are layers
    /// of their own (`-` dense, `E` MoE).
    ffn_every_layer: bool,
    /// The MoE block runs beside a dense MLP in the same layer (Gemma 4's
    /// `enable_moe_block`, the MLP held as its shared expert), with Gemma 4's router.
    moe_beside_dense: bool,
    /// `shared_expert_gate` (Qwen3-Next, Qwen3.5-MoE).
    shared_expert_gate: bool,
    /// A sink a head (`GptOssAttention.sinks`).
    sinks: bool,
    /// Sinks on the sliding-window layers only (`MiMoV2FlashAttention`: `is_swa`).
    sinks_sliding_only: bool,
    /// Biases on the experts' projections and the router (`GptOssExperts`,
    /// `GptOssTopKRouter`).
    expert_bias: bool,
    /// `e_score_correction_bias` is a parameter (`LagunaTopKRouter`).
    router_bias: bool,
    /// `e_score_correction_bias` is a buffer (`register_buffer`: DeepSeek-V3's
    /// `DeepseekV3TopkRouter` and the classes built on it, `Glm4MoeTopkRouter`,
    /// `KimiLinear`'s, `MiniMaxM2SparseMoeBlock`, `NemotronHTopkRouter`).
    router_bias_buffer: bool,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            qkv_bias: false,
            o_bias: false,
            qk_norm: QkNorm::None,
            norms_per_layer: 2,
            gated_ffn: true,
            ffn_every_layer: true,
            moe_beside_dense: false,
            shared_expert_gate: false,
            sinks: false,
            sinks_sliding_only: false,
            expert_bias: false,
            router_bias: false,
            router_bias_buffer: false,
        }
    }
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum QkNorm {
    #[default]
    None,
    /// q and k normed a head (`head_dim` each).
    PerHead,
    /// q and k normed whole (`heads · head_dim`, `kv_heads · head_dim`), the rank's heads.
    Whole,
    /// The same over the whole model's heads, on every rank: the rank's heads times tp (for
    /// kv heads replicated rather than split, at least the model's).
    WholeUnsplit,
}

fn rules(c: &ModelConfig) -> Option<Rules> {
    let b = c.attention_bias;
    Some(match c.family {
        // LlamaAttention, MistralAttention and Ministral3's (no key: false; Mistral3's text
        // model), MixtralAttention, Phi3Attention, Llama4TextAttention (its q/k norm has no
        // weight), DeepseekV3Attention (Kimi-K2 and K2.5's text model), DeepseekV32's:
        // `bias=config.attention_bias` on q, k, v and o. DeepSeek-V3.2 and GLM-5 add the
        // indexer.
        Family::Llama
        | Family::Mistral
        | Family::Ministral3
        | Family::Mistral3
        | Family::Mixtral
        | Family::Phi3
        | Family::Llama4 => Rules {
            qkv_bias: b,
            o_bias: b,
            ..Rules::default()
        },
        Family::DeepseekV3
        | Family::DeepseekV32
        | Family::GlmMoeDsa
        | Family::KimiK2
        | Family::KimiK25 => Rules {
            qkv_bias: b,
            o_bias: b,
            router_bias_buffer: true,
            ..Rules::default()
        },
        // Qwen2Attention: q, k, v always biased, o never.
        Family::Qwen2 => Rules {
            qkv_bias: true,
            ..Rules::default()
        },
        // Qwen3Attention, Qwen3MoeAttention (and Qwen3-VL's text models), Exaone4Attention:
        // `attention_bias` on all four, q_norm and k_norm of `head_dim`.
        Family::Qwen3
        | Family::Qwen3Moe
        | Family::Qwen3Vl
        | Family::Qwen3VlMoe
        | Family::Exaone4 => Rules {
            qkv_bias: b,
            o_bias: b,
            qk_norm: QkNorm::PerHead,
            ..Rules::default()
        },
        // Qwen3NextAttention and Qwen3.5's: the same, with the gated q; the MoE's shared
        // expert is gated (`Qwen3NextSparseMoeBlock.shared_expert_gate`).
        Family::Qwen3Next | Family::Qwen35 | Family::Qwen35Moe => Rules {
            qkv_bias: b,
            o_bias: b,
            qk_norm: QkNorm::PerHead,
            shared_expert_gate: true,
            ..Rules::default()
        },
        // Gemma3Attention: q/k norms of `head_dim`, `attention_bias`; four norms a layer
        // (`Gemma3DecoderLayer`).
        Family::Gemma3 => Rules {
            qkv_bias: b,
            o_bias: b,
            qk_norm: QkNorm::PerHead,
            norms_per_layer: 4,
            ..Rules::default()
        },
        // Gemma4TextAttention: q/k norms of the layer's head size (its v norm has no
        // weight), `attention_bias`; `Gemma4TextDecoderLayer`'s four norms, with
        // `post_per_layer_input_norm` where the model has per-layer inputs and
        // `pre_feedforward_layernorm_2`, `post_feedforward_layernorm_1` and `_2` where the
        // MoE block runs beside the MLP (`enable_moe_block`).
        Family::Gemma4 => Rules {
            qkv_bias: b,
            o_bias: b,
            qk_norm: QkNorm::PerHead,
            norms_per_layer: 4
                + usize::from(c.per_layer_input_dim > 0)
                + 3 * usize::from(c.is_moe()),
            moe_beside_dense: true,
            ..Rules::default()
        },
        // LagunaAttention: q/k norms of `head_dim`, no bias, the per-head output gate
        // (`g_proj`); `LagunaTopKRouter` learns `e_score_correction_bias`.
        Family::Laguna => Rules {
            qkv_bias: b,
            o_bias: b,
            qk_norm: QkNorm::PerHead,
            router_bias: true,
            ..Rules::default()
        },
        // Lfm2Attention: q/k layernorms of `head_dim`, no bias; `operator_norm` and
        // `ffn_norm` a layer.
        Family::Lfm2 => Rules {
            qk_norm: QkNorm::PerHead,
            ..Rules::default()
        },
        // MiniMaxAttention (transformers' `minimax`, MiniMax-M1's port): no bias, no q/k
        // norm.
        Family::MinimaxM1 => Rules::default(),
        // KimiLinear's MLA layers (no q LoRA), DeepseekV4Attention: no bias, no q/k norm; a
        // router with a bias buffer.
        Family::KimiLinear | Family::DeepseekV4 => Rules {
            router_bias_buffer: true,
            ..Rules::default()
        },
        // NemotronHAttention (`attention_bias`), one norm a block, squared-ReLU MLPs and
        // experts without a gate, FFNs as layers of their own.
        // Mamba2ForCausalLM: a Mamba-2 mixer and one norm a layer, no FFN (the mixer's weights
        // are Nemotron-H's: `MambaMixer2`).
        Family::Mamba2 => Rules {
            norms_per_layer: 1,
            ffn_every_layer: false,
            ..Rules::default()
        },
        Family::NemotronH => Rules {
            qkv_bias: b,
            o_bias: b,
            norms_per_layer: 1,
            gated_ffn: false,
            ffn_every_layer: false,
            router_bias_buffer: true,
            ..Rules::default()
        },
        // Olmo3Attention: q and k normed over all their heads, whole on every rank (vLLM's
        // `Olmo2Attention`, which Olmo 3 runs: `RMSNorm(total_num_heads · head_dim)`, the
        // heads gathered across tp before the norm).
        Family::Olmo3 => Rules {
            qk_norm: QkNorm::WholeUnsplit,
            ..Rules::default()
        },
        // MiniMaxM2Attention: q and k normed over all the rank's heads (vLLM shards its norm
        // weight by tp); a router bias buffer.
        Family::MinimaxM2 => Rules {
            qk_norm: QkNorm::Whole,
            router_bias_buffer: true,
            ..Rules::default()
        },
        // Glm4MoeAttention: `attention_bias` on q, k, v; o unbiased; q/k norms where
        // `use_qk_norm`; a router bias buffer.
        // CohereAttention: `attention_bias` on all four, per-head q/k LayerNorms over every
        // head (`[heads, head_dim]` weights: the rank's heads) where `use_qk_norm`; one
        // norm a layer (the parallel block's `input_layernorm`).
        Family::Cohere => Rules {
            qkv_bias: b,
            o_bias: b,
            qk_norm: if c.use_qk_norm {
                QkNorm::Whole
            } else {
                QkNorm::None
            },
            norms_per_layer: 1,
            ..Rules::default()
        },
        Family::Glm4Moe => Rules {
            router_bias_buffer: true,
            qkv_bias: b,
            qk_norm: if c.use_qk_norm {
                QkNorm::PerHead
            } else {
                QkNorm::None
            },
            ..Rules::default()
        },
        // GptOssAttention: `attention_bias` on all four and a sink a head; biased experts
        // and router.
        Family::GptOss => Rules {
            qkv_bias: b,
            o_bias: b,
            sinks: true,
            expert_bias: true,
            ..Rules::default()
        },
        // MiMoV2FlashAttention: no bias, no q/k norm, a sink a head on its sliding layers
        // (the full ones at their own kv heads: the full group); `MiMoV2FlashTopKRouter`'s
        // `e_score_correction_bias` is a buffer.
        Family::MimoV2Flash => Rules {
            qkv_bias: b,
            sinks: true,
            sinks_sliding_only: true,
            router_bias_buffer: true,
            ..Rules::default()
        },
        _ => return None,
    })
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
        let rules = rules(c).ok_or_else(|| WeightsError::FamilyNotCounted {
            model: c.source.to_string(),
            family: c.family,
            counted: COUNTED,
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

        // FFNs: dense, routed, both (Gemma 4), or layers of their own (Nemotron-H).
        let (dense_layers, moe) = if !rules.ffn_every_layer {
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
            embedding: usize::from(first_stage),
            lm_head: usize::from(last_stage && !(c.tie_word_embeddings && first_stage)),
            final_norm: usize::from(last_stage),
            layers,
            norms_per_layer: rules.norms_per_layer,
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
            gated_ffn: usize::from(rules.gated_ffn),
            moe,
            shared_expert_gate: with(rules.shared_expert_gate && shared_expert, moe),
            expert_bias: with(rules.expert_bias, moe),
            router_bias: with(rules.router_bias, moe),
            router_bias_buffer: with(rules.router_bias_buffer, moe.saturating_sub(hash_layers)),
            scaled_router: with(rules.moe_beside_dense, moe),
        })
    }
}
