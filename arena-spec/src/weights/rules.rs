//! What each counted family's layers hold beyond their widths: which projections carry a bias,
//! the q/k norms, the norms a layer, the FFN's shape, sinks and router biases — the attention,
//! MoE and decoder-layer classes of the reference, a family at a time.

use crate::config::{Family, ModelConfig};

/// The families counted, by name, for messages.
pub const COUNTED: &str = "llama, cohere, llama4, mistral, ministral3, mistral3, mixtral, qwen2, qwen3, \
                           qwen3_moe, qwen3_vl, qwen3_vl_moe, qwen3_next, qwen3_5, qwen3_5_moe, \
                           exaone4, olmo3, minimax_m1, minimax_m2, phi3, gemma3, gemma4, laguna, \
                           lfm2, lfm2_vl, nemotron_h, mamba2, kimi_linear, deepseek_v3, deepseek_v32, deepseek_v4, \
                           kimi_k2, kimi_k25, glm4_moe, glm_moe_dsa, gpt_oss, mimo_v2_flash, \
                           nemotron-nas";

/// Which projections carry a bias and what else a family's layers add (the attention, MoE
/// and decoder-layer classes of transformers 5.24).
pub(super) struct Rules {
    pub(super) qkv_bias: bool,
    pub(super) o_bias: bool,
    pub(super) qk_norm: QkNorm,
    /// Norm weights a layer: input and post-attention (2); Gemma's pre- and post-FFN too
    /// (4); Nemotron-H's one a block (1).
    pub(super) norms_per_layer: usize,
    /// The FFN has a gate projection (SwiGLU); false for Nemotron-H's squared-ReLU up/down.
    pub(super) gated_ffn: bool,
    /// Every layer has an FFN after its mixer; false for Nemotron-H, whose FFNs are layers
    /// of their own (`-` dense, `E` MoE).
    pub(super) ffn_every_layer: bool,
    /// The MoE block runs beside a dense MLP in the same layer (Gemma 4's
    /// `enable_moe_block`, the MLP held as its shared expert), with Gemma 4's router.
    pub(super) moe_beside_dense: bool,
    /// `shared_expert_gate` (Qwen3-Next, Qwen3.5-MoE).
    pub(super) shared_expert_gate: bool,
    /// A sink a head (`GptOssAttention.sinks`).
    pub(super) sinks: bool,
    /// Sinks on the sliding-window layers only (`MiMoV2FlashAttention`: `is_swa`).
    pub(super) sinks_sliding_only: bool,
    /// Biases on the experts' projections and the router (`GptOssExperts`,
    /// `GptOssTopKRouter`).
    pub(super) expert_bias: bool,
    /// `e_score_correction_bias` is a parameter (`LagunaTopKRouter`).
    pub(super) router_bias: bool,
    /// `e_score_correction_bias` is a buffer (`register_buffer`: DeepSeek-V3's
    /// `DeepseekV3TopkRouter` and the classes built on it, `Glm4MoeTopkRouter`,
    /// `KimiLinear`'s, `MiniMaxM2SparseMoeBlock`, `NemotronHTopkRouter`).
    pub(super) router_bias_buffer: bool,
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
pub(super) enum QkNorm {
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

pub(super) fn rules(c: &ModelConfig) -> Option<Rules> {
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
        // DeciLM (vLLM's `DeciLMDecoderLayer`, `nemotron_nas.py`; transformers has no such
        // model): a `LlamaAttention` and a `LlamaMLP` a block, `attention_bias` on q, k, v and
        // o; its norms and FFN widths go by block (`WeightLayers::block_norms`,
        // `WeightLayers::ffn_blocks`).
        Family::NemotronNas => Rules {
            qkv_bias: b,
            o_bias: b,
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
