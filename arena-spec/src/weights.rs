//! The model's parameters, counted from its config as the reference builds its modules, and
//! their bytes at a format's width.
//!
//! A count is the number of elements of every parameter of transformers' model for the family
//! (`model.parameters()`, a tied matrix once), checked exactly against the oracle's count for
//! every shipped file of a counted family (`tests/weights.rs`; `tests/oracle/params.json`,
//! built by `tests/oracle/widths.py` on PyTorch's meta device). Buffers are not parameters
//! (DeepSeek's `e_score_correction_bias` is a buffer in transformers; a checkpoint may carry
//! it, a few thousand elements). Families whose modules are not counted here yet are refused
//! by name ([`WeightsError::FamilyNotCounted`]), never estimated.
//!
//! On a rank, the count is of the rank's config (`ModelConfig::shard`): heads, kv heads, FFN
//! and expert widths and local experts as the rank sizing splits them, the layers of its
//! stage; the embedding and the output head are split by tp over the vocabulary as vLLM's
//! `VocabParallelEmbedding` splits them (the vocabulary padded to a multiple of 64 first,
//! `DEFAULT_VOCAB_PADDING_SIZE`), the embedding on the first stage, the head on the last;
//! norms and other vectors are kept whole on every rank (replicated).

use crate::config::{Family, ModelConfig};

/// Parameter elements by part of the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Parameters {
    /// The input embedding (`embed_tokens`).
    pub embedding: u64,
    /// The output head (`lm_head`), 0 where it is the embedding (tied) or on a stage without
    /// it.
    pub lm_head: u64,
    /// Attention projections, their biases and their q/k norms.
    pub attention: u64,
    /// Dense FFN layers and the shared experts.
    pub dense_ffn: u64,
    /// Routed experts and their router.
    pub experts: u64,
    /// The layers' norms and the final norm.
    pub norms: u64,
}

impl Parameters {
    /// Every element.
    pub const fn total(&self) -> u64 {
        self.embedding + self.lm_head + self.attention + self.dense_ffn + self.experts + self.norms
    }
}

/// Why a count was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WeightsError {
    /// The family's modules are not counted here yet.
    #[error(
        "{model}: the parameters of a {family:?} model are not counted yet (counted: {counted}); \
         give its weight bytes instead"
    )]
    FamilyNotCounted {
        model: String,
        family: Family,
        counted: &'static str,
    },
}

/// The families counted, by name, for messages.
pub const COUNTED: &str = "llama, mistral, ministral3, mixtral, qwen2, qwen3, qwen3_moe, \
                           exaone4, olmo3, minimax_m2, phi3, deepseek_v3, deepseek_v32, kimi_k2, \
                           glm4_moe, glm_moe_dsa, gpt_oss";

/// Which projections carry a bias and what else a family's layers add, by family (the
/// attention, MoE and decoder-layer classes of transformers 5.24).
#[derive(Default)]
struct Rules {
    qkv_bias: bool,
    o_bias: bool,
    qk_norm: QkNorm,
    /// One attention-sink logit a head (`GptOssAttention.sinks`).
    sinks: bool,
    /// Biases on the experts' projections and the router (`GptOssExperts`,
    /// `GptOssTopKRouter`).
    expert_bias: bool,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum QkNorm {
    #[default]
    None,
    /// q and k normed a head (`head_dim` each).
    PerHead,
    /// q and k normed whole (`heads · head_dim`, `kv_heads · head_dim`).
    Whole,
}

fn rules(c: &ModelConfig) -> Option<Rules> {
    let b = c.attention_bias;
    Some(match c.family {
        // LlamaAttention, MistralAttention and Ministral3's (no key: false), MixtralAttention,
        // Phi3Attention, DeepseekV3Attention, DeepseekV32's: `bias=config.attention_bias` on
        // q, k, v and o. DeepSeek-V3.2 and GLM-5 add the indexer (counted in `parameters`).
        Family::Llama
        | Family::Mistral
        | Family::Ministral3
        | Family::Mixtral
        | Family::Phi3
        | Family::DeepseekV3
        | Family::DeepseekV32
        | Family::GlmMoeDsa
        | Family::KimiK2 => Rules {
            qkv_bias: b,
            o_bias: b,
            ..Rules::default()
        },
        // Qwen2Attention: q, k, v always biased, o never.
        Family::Qwen2 => Rules {
            qkv_bias: true,
            ..Rules::default()
        },
        // Qwen3Attention, Qwen3MoeAttention, Exaone4Attention: `attention_bias` on all four,
        // q_norm and k_norm of `head_dim`.
        Family::Qwen3 | Family::Qwen3Moe | Family::Exaone4 => Rules {
            qkv_bias: b,
            o_bias: b,
            qk_norm: QkNorm::PerHead,
            ..Rules::default()
        },
        // Olmo3Attention, MiniMaxM2Attention: q and k normed over all their heads.
        Family::Olmo3 | Family::MinimaxM2 => Rules {
            qk_norm: QkNorm::Whole,
            ..Rules::default()
        },
        // Glm4MoeAttention: `attention_bias` on q, k, v; o unbiased; q/k norms where
        // `use_qk_norm`.
        Family::Glm4Moe => Rules {
            qkv_bias: b,
            qk_norm: if c.use_qk_norm {
                QkNorm::PerHead
            } else {
                QkNorm::None
            },
            ..Rules::default()
        },
        // GptOssAttention: `attention_bias` on all four and a sink a head; biased experts and
        // router.
        Family::GptOss => Rules {
            qkv_bias: b,
            o_bias: b,
            sinks: true,
            expert_bias: true,
            ..Rules::default()
        },
        _ => return None,
    })
}

/// The vocabulary rows one tp rank holds: padded to a multiple of 64, split evenly.
fn vocab_rows(vocab: usize, tp: usize) -> u64 {
    (vocab.div_ceil(64) * 64 / tp) as u64
}

/// The parameter elements of `config` (a whole model, or one rank's config from
/// `ModelConfig::shard`).
pub fn parameters(config: &ModelConfig) -> Result<Parameters, WeightsError> {
    let c = config;
    let rules = rules(c).ok_or_else(|| WeightsError::FamilyNotCounted {
        model: c.source.to_string(),
        family: c.family,
        counted: COUNTED,
    })?;
    let h = c.hidden_size as u64;
    let (tp, first_stage, last_stage) = match &c.shard {
        Some(s) => (
            s.rank.layout.tp,
            s.layers.start == 0,
            s.holds_lm_head,
        ),
        None => (1, true, true),
    };
    let rows = if tp == 1 {
        c.vocab_size as u64
    } else {
        vocab_rows(c.vocab_size, tp)
    };
    let embedding = if first_stage { rows * h } else { 0 };
    let lm_head = if last_stage && !(c.tie_word_embeddings && first_stage) {
        rows * h
    } else {
        0
    };

    let heads = c.num_attention_heads as u64;
    let kv = c.num_key_value_heads as u64;
    let hd = c.head_dim() as u64;
    let attention_layer = if c.is_mla() {
        let (ql, kl) = (c.q_lora_rank as u64, c.kv_lora_rank as u64);
        let (nope, rope, v) = (
            c.qk_nope_head_dim as u64,
            c.qk_rope_head_dim as u64,
            c.v_head_dim as u64,
        );
        let q = if ql > 0 {
            h * ql + ql + ql * heads * (nope + rope)
        } else {
            h * heads * (nope + rope)
        };
        let mla = q + h * (kl + rope) + kl + kl * heads * (nope + v) + heads * v * h;
        // DeepSeek-V3.2's indexer (`DeepseekV32Indexer`): wq_b from the q latent, wk, a
        // LayerNorm (weight and bias) of the key, weights_proj.
        let indexer = if c.has_indexer() {
            let (ih, id) = (c.index_n_heads as u64, c.index_head_dim as u64);
            ql * ih * id + h * id + 2 * id + h * ih
        } else {
            0
        };
        mla + indexer
    } else {
        let q = heads * hd;
        let k = kv * hd;
        let v = kv * c.value_head_dim() as u64;
        let mut n = h * (q + k + v) + q * h;
        if rules.qkv_bias {
            n += q + k + v;
        }
        if rules.o_bias {
            n += h;
        }
        n += match rules.qk_norm {
            QkNorm::None => 0,
            QkNorm::PerHead => 2 * hd,
            QkNorm::Whole => q + k,
        };
        if rules.sinks {
            n += heads;
        }
        n
    };

    let mut p = Parameters {
        embedding,
        lm_head,
        norms: if last_stage { h } else { 0 },
        ..Parameters::default()
    };
    let dense = c.intermediate_size as u64;
    let expert = c.moe_intermediate_size as u64;
    let shared = c.shared_expert_intermediate_size as u64;
    let experts = c.local_experts() as u64;
    let router = c.num_experts as u64 * h;
    for (i, _) in c.layer_kinds().iter().enumerate() {
        p.attention += attention_layer;
        p.norms += 2 * h;
        let dense_layer = !c.is_moe() || c.dense_ffn_layers.get(i).copied().unwrap_or(false);
        if dense_layer {
            p.dense_ffn += 3 * h * dense;
        } else {
            p.experts += experts * 3 * h * expert + router;
            if rules.expert_bias {
                p.experts += experts * (2 * expert + h) + c.num_experts as u64;
            }
            p.dense_ffn += 3 * h * shared;
        }
    }
    Ok(p)
}

/// Bytes of `params` elements at `bits` bits each (16 for BF16, 8 for FP8, 4 for FP4),
/// rounded up to a whole byte.
pub const fn bytes_at(params: u64, bits: u64) -> u64 {
    (params * bits).div_ceil(8)
}
