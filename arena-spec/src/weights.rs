//! The model's weights: every parameter tensor, counted from the config as the reference
//! builds its modules, and their bytes in the checkpoint's format.
//!
//! [`tensors`] lists each parameter of transformers' model for the family (shape, and how
//! many layers have it), so the count is `model.parameters()`'s, a tied matrix once: checked
//! exactly against the oracle's count for every shipped file of a counted family
//! (`tests/weights.rs`; `param_count` in `tests/oracle/widths.json`, built by
//! `tests/oracle/widths.py` on PyTorch's meta device). Buffers are not parameters
//! (DeepSeek's `e_score_correction_bias` is a buffer in transformers; a checkpoint may carry
//! it, a few thousand elements). Families whose modules are not listed here yet are refused by
//! name ([`WeightsError::FamilyNotCounted`]), never estimated.
//!
//! On a rank, the list is of the rank's config (`ModelConfig::shard`): heads, kv heads, FFN
//! and expert widths and local experts as the rank sizing splits them, the layers of its
//! stage; the embedding and the output head split by tp over the vocabulary as vLLM's
//! `VocabParallelEmbedding` splits them (the vocabulary padded to a multiple of 64 first,
//! `DEFAULT_VOCAB_PADDING_SIZE`), the embedding on the first stage, the head on the last;
//! norms, MLA's latent projections and other vectors whole on every rank (replicated).
//!
//! The bytes of a tensor follow its format's definition ([`WeightFormat`]).
//!
//! Not counted, as the reference does not build them: multi-token-prediction layers
//! (DeepSeek's `num_nextn_predict_layers`; an engine loads them only to draft with them, and
//! then adds their bytes), and vision towers of multimodal files (the text model alone).

use crate::config::{Family, LayerKind, ModelConfig};

/// The checkpoint's weight format, from its `quantization_config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum WeightFormat {
    /// No quantization: every tensor in the model's 16-bit dtype.
    Bf16,
    /// Block-scaled FP8 (`quant_method: "fp8"` with `weight_block_size: [rows, cols]`,
    /// transformers' `FineGrainedFP8Config`, DeepSeek-V3's format): every linear and expert
    /// matrix one E4M3 byte an element plus one FP32 `weight_scale_inv` a `rows × cols`
    /// block (`ceil(out / rows) · ceil(in / cols)` a matrix); embeddings, the output head,
    /// routers, norms and biases in 16 bits (`FP8Linear` replaces `nn.Linear` modules only,
    /// and never `lm_head`).
    Fp8Block { rows: usize, cols: usize },
    /// MXFP4 experts (`quant_method: "mxfp4"`, gpt-oss): the routed experts' matrices as
    /// OCP microscaling FP4 — 4 bits an element and one E8M0 scale byte a block of 32
    /// (`*_blocks`, `*_scales`, transformers' `Mxfp4GptOssExperts`); everything else, expert
    /// biases included, in 16 bits (the file's `modules_to_not_convert`).
    Mxfp4Experts,
    /// A quantization whose bytes are not planned here (its `quant_method` is another, FP8
    /// without blocks or with `modules_to_not_convert`, DeepSeek-V4's FP4 experts): the
    /// caller gives the weight bytes.
    Unplanned,
}

/// What a tensor is, for its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Role {
    /// The input embedding.
    Embedding,
    /// The output head.
    LmHead,
    /// A linear layer's weight, `[out, in]`.
    Linear,
    /// The routed experts' stacked matrices, `[experts, out, in]`.
    Experts,
    /// A router's weight, or another small projection engines keep in 16 bits whatever the
    /// checkpoint's format (DeepSeek-V3.2's indexer `weights_proj`: vLLM and SGLang build it
    /// with `quant_config=None`).
    Router,
    /// Norm weights, biases, and other small tensors (convolution kernels, decay logs).
    Vector,
}

/// One parameter tensor of a layer kind (or of the model): its elements are
/// `dims[0] · dims[1] · dims[2]` (leading 1s for fewer dimensions), `count` times.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Tensor {
    /// Its name in the reference's module tree, `*` for the layer index.
    pub name: &'static str,
    pub dims: [u64; 3],
    /// How many of it the model (or rank) holds: the layers of the kind that have it.
    pub count: u64,
    pub role: Role,
}

impl Tensor {
    /// Its elements, every copy (saturating: a count past u64 fits no GPU, and a plan says
    /// so rather than wrapping).
    pub const fn elements(&self) -> u64 {
        self.dims[0]
            .saturating_mul(self.dims[1])
            .saturating_mul(self.dims[2])
            .saturating_mul(self.count)
    }

    /// Its bytes in `format`, every copy.
    pub const fn bytes(&self, format: WeightFormat) -> u64 {
        let [e, out, inp] = self.dims;
        match (format, self.role) {
            (WeightFormat::Fp8Block { rows, cols }, Role::Linear | Role::Experts) => {
                let scales = e
                    .saturating_mul(out.div_ceil(rows as u64))
                    .saturating_mul(inp.div_ceil(cols as u64));
                self.elements()
                    .saturating_add(scales.saturating_mul(4).saturating_mul(self.count))
            }
            (WeightFormat::Mxfp4Experts, Role::Experts) => {
                let n = self.elements();
                n.div_ceil(2).saturating_add(n.div_ceil(32))
            }
            _ => self.elements().saturating_mul(2),
        }
    }
}

/// Why weights were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WeightsError {
    /// The family's modules are not listed here yet.
    #[error(
        "{model}: the parameters of a {family:?} model are not counted yet (counted: {counted}); \
         give its weight bytes instead (arena fit: --weights-bytes)"
    )]
    FamilyNotCounted {
        model: String,
        family: Family,
        counted: &'static str,
    },
    /// The checkpoint's quantization has no byte formula here.
    #[error(
        "{model}: its quantization_config is not a format planned here (block-scaled FP8, \
         MXFP4 experts); give its weight bytes instead (arena fit: --weights-bytes)"
    )]
    FormatNotPlanned { model: String },
}

/// The families counted, by name, for messages.
pub const COUNTED: &str = "llama, llama4, mistral, ministral3, mistral3, mixtral, qwen2, qwen3, \
                           qwen3_moe, qwen3_vl, qwen3_vl_moe, qwen3_next, qwen3_5, qwen3_5_moe, \
                           exaone4, olmo3, minimax_m1, minimax_m2, phi3, gemma3, lfm2, nemotron_h, \
                           kimi_linear, deepseek_v3, deepseek_v32, deepseek_v4, kimi_k2, kimi_k25, \
                           glm4_moe, glm_moe_dsa, gpt_oss";

/// Which projections carry a bias and what else a family's layers add, by family (the
/// attention, MoE and decoder-layer classes of transformers 5.24).
struct Rules {
    qkv_bias: bool,
    o_bias: bool,
    qk_norm: QkNorm,
    /// Norm weights a layer: input and post-attention (2); Gemma's pre- and post-FFN too (4);
    /// Nemotron-H's one a block (1).
    norms_per_layer: u64,
    /// The FFN has a gate projection (SwiGLU); false for Nemotron-H's squared-ReLU up/down.
    gated_ffn: bool,
    /// Every layer has an FFN after its mixer; false for Nemotron-H, whose FFNs are layers of
    /// their own (`-` dense, `E` MoE).
    ffn_every_layer: bool,
    /// The shared expert's output is scaled by a sigmoid gate, `[1, hidden]`
    /// (`shared_expert_gate`: Qwen3-Next, Qwen3.5-MoE).
    shared_expert_gate: bool,
    /// One attention-sink logit a head (`GptOssAttention.sinks`).
    sinks: bool,
    /// Biases on the experts' projections and the router (`GptOssExperts`,
    /// `GptOssTopKRouter`).
    expert_bias: bool,
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
            shared_expert_gate: false,
            sinks: false,
            expert_bias: false,
        }
    }
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
        | Family::Llama4
        | Family::DeepseekV3
        | Family::DeepseekV32
        | Family::GlmMoeDsa
        | Family::KimiK2
        | Family::KimiK25 => Rules {
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
        // Qwen3NextAttention and Qwen3.5's: the same, with the gated q (`q_proj_width`); the
        // MoE's shared expert is gated (`Qwen3NextSparseMoeBlock.shared_expert_gate`); the
        // GDN layers' tensors are listed by kind.
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
        // Lfm2Attention: q/k layernorms of `head_dim`, no bias; `operator_norm` and `ffn_norm`
        // a layer; the short-conv layers' tensors are listed by kind.
        Family::Lfm2 => Rules {
            qk_norm: QkNorm::PerHead,
            ..Rules::default()
        },
        // MiniMaxAttention (transformers' `minimax`, the port of MiniMax-M1's remote code): no
        // bias, no q/k norm; the lightning layers' tensors are listed by kind.
        Family::MinimaxM1 => Rules::default(),
        // KimiLinear's MLA layers (no q LoRA, as DeepSeek-V3's attention) and its KDA layers
        // by kind.
        Family::KimiLinear => Rules::default(),
        // DeepseekV4Attention (one K=V head, grouped output, sinks), its compressors and
        // hyper-connections, listed where they are built.
        Family::DeepseekV4 => Rules::default(),
        // NemotronHAttention (`attention_bias`), one norm a block, squared-ReLU MLPs and
        // experts without a gate, FFNs as layers of their own; Mamba-2 layers by kind.
        Family::NemotronH => Rules {
            qkv_bias: b,
            o_bias: b,
            norms_per_layer: 1,
            gated_ffn: false,
            ffn_every_layer: false,
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

/// The list being built: a tensor named and shaped as one already there adds to its count.
struct List(Vec<Tensor>);

impl List {
    fn add(&mut self, name: &'static str, dims: [u64; 3], role: Role, count: u64) {
        if count == 0 || dims.contains(&0) {
            return;
        }
        match self.0.iter_mut().find(|t| t.name == name && t.dims == dims) {
            Some(t) => t.count = t.count.saturating_add(count),
            None => self.0.push(Tensor {
                name,
                dims,
                count,
                role,
            }),
        }
    }
    fn linear(&mut self, name: &'static str, out: u64, inp: u64, count: u64) {
        self.add(name, [1, out, inp], Role::Linear, count);
    }
    /// A depthwise causal conv's kernel, `[channels, 1, kernel]`.
    fn conv(&mut self, name: &'static str, channels: u64, kernel: usize, count: u64) {
        self.add(name, [channels, 1, kernel as u64], Role::Vector, count);
    }
    fn vector(&mut self, name: &'static str, n: u64, count: u64) {
        self.add(name, [1, 1, n], Role::Vector, count);
    }
}

/// The vocabulary rows one tp rank holds: as the reference has them on one GPU (unless
/// `padded`), else padded to a multiple of 64 and split evenly (vLLM's
/// `VocabParallelEmbedding`, which pads on one GPU too).
fn vocab_rows(vocab: usize, tp: usize, padded: bool) -> u64 {
    if tp == 1 && !padded {
        return vocab as u64;
    }
    (vocab.div_ceil(64) * 64).div_ceil(tp) as u64
}

/// Every parameter tensor of `config` (a whole model, or one rank's config from
/// `ModelConfig::shard`): on one GPU, the reference's own (`model.parameters()`); on a rank
/// of a tp layout, its share, the vocabulary padded as vLLM pads it.
pub fn tensors(config: &ModelConfig) -> Result<Vec<Tensor>, WeightsError> {
    tensors_with(config, false)
}

/// [`tensors`], the embedding and head padded to 64 vocabulary rows even on one GPU when
/// `padded` (what an engine allocates: [`weight_bytes`] counts these).
fn tensors_with(config: &ModelConfig, padded: bool) -> Result<Vec<Tensor>, WeightsError> {
    let c = config;
    let rules = rules(c).ok_or_else(|| WeightsError::FamilyNotCounted {
        model: c.source.to_string(),
        family: c.family,
        counted: COUNTED,
    })?;
    let mut l = List(Vec::new());
    let h = c.hidden_size as u64;
    let (tp, first_stage, last_stage) = match &c.shard {
        Some(s) => (s.rank.layout.tp, s.layers.start == 0, s.holds_lm_head),
        None => (1, true, true),
    };
    let rows = vocab_rows(c.vocab_size, tp, padded);
    if first_stage {
        l.add(
            "model.embed_tokens.weight",
            [1, rows, h],
            Role::Embedding,
            1,
        );
    }
    if last_stage {
        if !(c.tie_word_embeddings && first_stage) {
            l.add("lm_head.weight", [1, rows, h], Role::LmHead, 1);
        }
        l.vector("model.norm.weight", h, 1);
    }

    attention(&mut l, c, &rules);
    mixers(&mut l, c);
    ffn(&mut l, c, &rules);
    // The layers' norms, `norms_per_layer` of `hidden_size` each.
    let layers = c.layer_kinds().len() as u64;
    l.add(
        "layers.*.norms",
        [1, rules.norms_per_layer, h],
        Role::Vector,
        layers,
    );
    // DeepSeek-V4's hyper-connections (`DeepseekV4HyperConnection`): around the attention
    // and the FFN of each layer, the mixing base `(2 + hc) · hc`, its projection from the
    // `hc` streams and three scales; the head's own (`hc` base, projection, one scale).
    let hc = c.hc_mult as u64;
    if hc > 0 {
        let mix = (2 + hc) * hc;
        for [base, proj, scale] in [
            ["attn_hc.base", "attn_hc.fn", "attn_hc.scale"],
            ["ffn_hc.base", "ffn_hc.fn", "ffn_hc.scale"],
        ] {
            l.vector(base, mix, layers);
            l.linear(proj, mix, hc * h, layers);
            l.vector(scale, 3, layers);
        }
        if last_stage {
            l.vector("model.hc_head.hc_base", hc, 1);
            l.linear("model.hc_head.hc_fn", hc, hc * h, 1);
            l.vector("model.hc_head.hc_scale", 1, 1);
        }
    }
    Ok(l.0)
}

/// Every attention layer's projections, norms and biases (MLA's and the indexer's too).
fn attention(l: &mut List, c: &ModelConfig, rules: &Rules) {
    let h = c.hidden_size as u64;
    let attention = c.num_attention_layers() as u64;
    let heads = c.num_attention_heads as u64;
    let kv = c.num_key_value_heads as u64;
    if c.kv_is_one_vector() {
        // DeepSeek-V4 (`DeepseekV4Attention`): a low-rank q (q_a_proj, its norm, q_b_proj),
        // one K=V head (kv_proj, kv_norm), the grouped low-rank output (o_a_proj over each
        // group's heads, o_b_proj back), a sink a head.
        let (ql, hd) = (c.q_lora_rank as u64, c.head_dim() as u64);
        let (groups, o_rank) = (c.o_groups as u64, c.o_lora_rank as u64);
        l.linear("self_attn.q_a_proj.weight", ql, h, attention);
        l.vector("self_attn.q_a_norm.weight", ql, attention);
        l.linear("self_attn.q_b_proj.weight", heads * hd, ql, attention);
        l.linear("self_attn.kv_proj.weight", hd, h, attention);
        l.vector("self_attn.kv_norm.weight", hd, attention);
        l.linear(
            "self_attn.o_a_proj.weight",
            groups * o_rank,
            heads * hd / groups.max(1),
            attention,
        );
        l.linear("self_attn.o_b_proj.weight", h, groups * o_rank, attention);
        l.vector("self_attn.sinks", heads, attention);
        // The compressors: CSA's overlapping windows (kv and gate of 2 · head_dim, a learned
        // position bias a window slot), with the indexer's own (at `index_head_dim`), its q
        // and its scorer; HCA's disjoint windows at head_dim (`DeepseekV4CSACompressor`,
        // `DeepseekV4HCACompressor`, `DeepseekV4Indexer`).
        let (csa, hca) = (c.num_csa_kv_layers() as u64, c.num_hca_kv_layers() as u64);
        let (csa_rate, hca_rate) = (c.index_ratio() as u64, c.hca_compress_ratio as u64);
        l.linear("compressor.csa.kv_proj.weight", 2 * hd, h, csa);
        l.linear("compressor.csa.gate_proj.weight", 2 * hd, h, csa);
        l.vector("compressor.csa.kv_norm.weight", hd, csa);
        l.add(
            "compressor.csa.position_bias",
            [1, csa_rate, 2 * hd],
            Role::Vector,
            csa,
        );
        if c.has_indexer() {
            let (ih, id) = (c.index_n_heads as u64, c.index_head_dim as u64);
            l.linear("compressor.csa.indexer.q_b_proj.weight", ih * id, ql, csa);
            l.linear("compressor.csa.indexer.kv_proj.weight", 2 * id, h, csa);
            l.linear("compressor.csa.indexer.gate_proj.weight", 2 * id, h, csa);
            l.vector("compressor.csa.indexer.kv_norm.weight", id, csa);
            l.add(
                "compressor.csa.indexer.position_bias",
                [1, csa_rate, 2 * id],
                Role::Vector,
                csa,
            );
            l.add(
                "compressor.csa.indexer.weights_proj.weight",
                [1, ih, h],
                Role::Router,
                csa,
            );
        }
        l.linear("compressor.hca.kv_proj.weight", hd, h, hca);
        l.linear("compressor.hca.gate_proj.weight", hd, h, hca);
        l.vector("compressor.hca.kv_norm.weight", hd, hca);
        l.add(
            "compressor.hca.position_bias",
            [1, hca_rate, hd],
            Role::Vector,
            hca,
        );
        return;
    }
    let hd = c.head_dim() as u64;
    if c.is_mla() {
        let (ql, kl) = (c.q_lora_rank as u64, c.kv_lora_rank as u64);
        let (nope, rope, v) = (
            c.qk_nope_head_dim as u64,
            c.qk_rope_head_dim as u64,
            c.v_head_dim as u64,
        );
        if ql > 0 {
            l.linear("self_attn.q_a_proj.weight", ql, h, attention);
            l.vector("self_attn.q_a_layernorm.weight", ql, attention);
            l.linear(
                "self_attn.q_b_proj.weight",
                heads * (nope + rope),
                ql,
                attention,
            );
        } else {
            l.linear(
                "self_attn.q_proj.weight",
                heads * (nope + rope),
                h,
                attention,
            );
        }
        l.linear(
            "self_attn.kv_a_proj_with_mqa.weight",
            kl + rope,
            h,
            attention,
        );
        l.vector("self_attn.kv_a_layernorm.weight", kl, attention);
        l.linear(
            "self_attn.kv_b_proj.weight",
            heads * (nope + v),
            kl,
            attention,
        );
        l.linear("self_attn.o_proj.weight", h, heads * v, attention);
        // DeepSeek-V3.2's indexer (`DeepseekV32Indexer`): wq_b from the q latent, wk, a
        // LayerNorm (weight and bias) of the key, weights_proj.
        if c.has_indexer() {
            let (ih, id) = (c.index_n_heads as u64, c.index_head_dim as u64);
            l.linear("self_attn.indexer.wq_b.weight", ih * id, ql, attention);
            l.linear("self_attn.indexer.wk.weight", id, h, attention);
            l.vector("self_attn.indexer.k_norm.weight", id, attention);
            l.vector("self_attn.indexer.k_norm.bias", id, attention);
            l.add(
                "self_attn.indexer.weights_proj.weight",
                [1, ih, h],
                Role::Router,
                attention,
            );
        }
    } else {
        let (q, k, v) = (heads * hd, kv * hd, kv * c.value_head_dim() as u64);
        // The q projection doubled where the output is gated (`q_proj_width`).
        l.linear(
            "self_attn.q_proj.weight",
            c.q_proj_width() as u64,
            h,
            attention,
        );
        l.linear("self_attn.k_proj.weight", k, h, attention);
        l.linear("self_attn.v_proj.weight", v, h, attention);
        l.linear(
            "self_attn.o_proj.weight",
            h,
            heads * c.value_head_dim() as u64,
            attention,
        );
        if rules.qkv_bias {
            l.vector("self_attn.q_proj.bias", q, attention);
            l.vector("self_attn.k_proj.bias", k, attention);
            l.vector("self_attn.v_proj.bias", v, attention);
        }
        if rules.o_bias {
            l.vector("self_attn.o_proj.bias", h, attention);
        }
        match rules.qk_norm {
            QkNorm::None => {}
            QkNorm::PerHead => {
                l.vector("self_attn.q_norm.weight", hd, attention);
                l.vector("self_attn.k_norm.weight", hd, attention);
            }
            QkNorm::Whole => {
                l.vector("self_attn.q_norm.weight", q, attention);
                l.vector("self_attn.k_norm.weight", k, attention);
            }
        }
        if rules.sinks {
            l.vector("self_attn.sinks", heads, attention);
        }
    }
}

/// The token mixers beyond attention, by kind: gated DeltaNet, Mamba-2, short convolution,
/// lightning attention, Kimi delta attention.
fn mixers(l: &mut List, c: &ModelConfig) {
    let h = c.hidden_size as u64;
    let gdn = c.num_gdn_layers() as u64;
    if gdn > 0 {
        // Qwen3NextGatedDeltaNet (Qwen3.5's splits the same rows over in_proj_qkv, _z, _b,
        // _a): q, k, v, z, then b and a a value head; the conv over q, k and v without a bias;
        // dt_bias and A_log a value head; the gated norm a value-head element; out_proj.
        let (vh, vd) = (
            c.linear_num_value_heads as u64,
            c.linear_value_head_dim as u64,
        );
        let conv = c.gdn_conv_dim() as u64;
        l.linear("linear_attn.in_proj_qkvz.weight", conv + vh * vd, h, gdn);
        l.linear("linear_attn.in_proj_ba.weight", 2 * vh, h, gdn);
        l.conv(
            "linear_attn.conv1d.weight",
            conv,
            c.linear_conv_kernel_dim,
            gdn,
        );
        l.vector("linear_attn.dt_bias", vh, gdn);
        l.vector("linear_attn.A_log", vh, gdn);
        l.vector("linear_attn.norm.weight", vd, gdn);
        l.linear("linear_attn.out_proj.weight", h, vh * vd, gdn);
    }
    let mamba = c.num_mamba_layers() as u64;
    if mamba > 0 {
        // NemotronHMamba2Mixer: in_proj (z, x, B, C, dt), the conv over x, B, C with a bias,
        // dt_bias, A_log and D a head, the gated norm over d_inner, out_proj.
        let (heads, inner, conv) = (
            c.mamba_num_heads as u64,
            c.mamba_d_inner() as u64,
            c.mamba_conv_dim() as u64,
        );
        l.linear(
            "mixer.in_proj.weight",
            c.mamba_in_proj_width() as u64,
            h,
            mamba,
        );
        l.conv("mixer.conv1d.weight", conv, c.mamba_conv_kernel, mamba);
        l.vector("mixer.conv1d.bias", conv, mamba);
        l.vector("mixer.dt_bias", heads, mamba);
        l.vector("mixer.A_log", heads, mamba);
        l.vector("mixer.D", heads, mamba);
        l.vector("mixer.norm.weight", inner, mamba);
        l.linear("mixer.out_proj.weight", h, inner, mamba);
    }
    let short_conv = c.num_short_conv_layers() as u64;
    if short_conv > 0 {
        // Lfm2ShortConv: in_proj to B, C, x; the depthwise conv without a bias; out_proj.
        let d = c.short_conv_dim as u64;
        l.linear("conv.in_proj.weight", 3 * d, h, short_conv);
        l.conv("conv.conv.weight", d, c.short_conv_kernel, short_conv);
        l.linear("conv.out_proj.weight", h, d, short_conv);
    }

    let lightning = c.num_lightning_layers() as u64;
    if lightning > 0 {
        // MiniMaxLightningAttention: qkv_proj, output_gate and out_proj over all heads, the
        // norm of the heads' output; no bias.
        let w = c.lightning_width() as u64;
        l.linear("self_attn.qkv_proj.weight", 3 * w, h, lightning);
        l.linear("self_attn.output_gate.weight", w, h, lightning);
        l.linear("self_attn.out_proj.weight", h, w, lightning);
        l.vector("self_attn.norm.weight", w, lightning);
    }
    let kda = c.num_kda_layers() as u64;
    if kda > 0 {
        // KimiLinearDeltaAttention: q, k, v and o over all heads; b a head; the short convs
        // of q, k and v (`q_conv1d`, `k_conv1d`, `v_conv1d`, no bias); the forget gate's
        // low-rank pair (`f_a_proj` to head_dim, `f_b_proj` back), its `A_log` a head and
        // `dt_bias` a channel; the output gate's low-rank pair (`g_a_proj`, `g_b_proj`); the
        // output norm of `head_dim`.
        let (heads, hd) = (c.kda_heads as u64, c.kda_head_dim as u64);
        let w = heads * hd;
        l.linear("self_attn.q_proj.weight", w, h, kda);
        l.linear("self_attn.k_proj.weight", w, h, kda);
        l.linear("self_attn.v_proj.weight", w, h, kda);
        l.linear("self_attn.o_proj.weight", h, w, kda);
        l.linear("self_attn.b_proj.weight", heads, h, kda);
        l.conv("self_attn.qkv_conv1d.weight", 3 * w, c.kda_conv_kernel, kda);
        l.linear("self_attn.f_a_proj.weight", hd, h, kda);
        l.linear("self_attn.f_b_proj.weight", w, hd, kda);
        l.vector("self_attn.forget_gate.A_log", heads, kda);
        l.vector("self_attn.forget_gate.dt_bias", w, kda);
        l.linear("self_attn.g_a_proj.weight", hd, h, kda);
        l.linear("self_attn.g_b_proj.weight", w, hd, kda);
        l.vector("self_attn.o_norm.weight", hd, kda);
    }
}

/// The FFN of each layer: dense, or routed experts with their router and shared experts
/// (Nemotron-H: the `-` and `E` layers, which are FFNs alone).
fn ffn(l: &mut List, c: &ModelConfig, rules: &Rules) {
    let h = c.hidden_size as u64;
    let layers = c.layer_kinds().len() as u64;
    let (dense_layers, moe_layers) = if rules.ffn_every_layer {
        let moe = if c.is_moe() {
            (0..c.layer_kinds().len())
                .filter(|&i| !c.dense_ffn_layers.get(i).copied().unwrap_or(false))
                .count() as u64
        } else {
            0
        };
        (layers - moe, moe)
    } else {
        let count = |kind| c.layer_kinds().iter().filter(|k| **k == kind).count() as u64;
        (count(LayerKind::Mlp), count(LayerKind::Moe))
    };
    let gate = u64::from(rules.gated_ffn);
    let (dense, expert, shared) = (
        c.intermediate_size as u64,
        c.moe_intermediate_size as u64,
        c.shared_expert_intermediate_size as u64,
    );
    l.linear("mlp.gate_proj.weight", gate * dense, h, dense_layers);
    l.linear("mlp.up_proj.weight", dense, h, dense_layers);
    l.linear("mlp.down_proj.weight", h, dense, dense_layers);
    let experts = c.local_experts() as u64;
    l.add(
        "mlp.experts.gate_up_proj",
        [experts, (1 + gate) * expert, h],
        Role::Experts,
        moe_layers,
    );
    l.add(
        "mlp.experts.down_proj",
        [experts, h, expert],
        Role::Experts,
        moe_layers,
    );
    l.add(
        "mlp.gate.weight",
        [1, c.num_experts as u64, h],
        Role::Router,
        moe_layers,
    );
    if rules.expert_bias {
        l.add(
            "mlp.experts.gate_up_proj_bias",
            [1, experts, 2 * expert],
            Role::Vector,
            moe_layers,
        );
        l.add(
            "mlp.experts.down_proj_bias",
            [1, experts, h],
            Role::Vector,
            moe_layers,
        );
        l.vector("mlp.router.bias", c.num_experts as u64, moe_layers);
    }
    l.linear(
        "mlp.shared_experts.gate_proj.weight",
        gate * shared,
        h,
        moe_layers,
    );
    l.linear("mlp.shared_experts.up_proj.weight", shared, h, moe_layers);
    l.linear("mlp.shared_experts.down_proj.weight", h, shared, moe_layers);
    if rules.shared_expert_gate && shared > 0 {
        l.linear("mlp.shared_expert_gate.weight", 1, h, moe_layers);
    }
}

/// Parameter elements by role.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Parameters {
    pub embedding: u64,
    pub lm_head: u64,
    pub linear: u64,
    pub experts: u64,
    pub routers: u64,
    pub vectors: u64,
}

impl Parameters {
    /// Every element.
    pub const fn total(&self) -> u64 {
        self.embedding
            .saturating_add(self.lm_head)
            .saturating_add(self.linear)
            .saturating_add(self.experts)
            .saturating_add(self.routers)
            .saturating_add(self.vectors)
    }
}

/// The parameter elements of `config` by role.
pub fn parameters(config: &ModelConfig) -> Result<Parameters, WeightsError> {
    let mut p = Parameters::default();
    for t in tensors(config)? {
        let n = t.elements();
        let part = match t.role {
            Role::Embedding => &mut p.embedding,
            Role::LmHead => &mut p.lm_head,
            Role::Linear => &mut p.linear,
            Role::Experts => &mut p.experts,
            Role::Router => &mut p.routers,
            Role::Vector => &mut p.vectors,
        };
        *part = part.saturating_add(n);
    }
    Ok(p)
}

/// The bytes of `config`'s weights in its checkpoint's format ([`ModelConfig::weight_format`]),
/// as an engine allocates them: the vocabulary padded to 64 rows (vLLM's
/// `VocabParallelEmbedding` pads it on one GPU too), so a plan never holds less.
pub fn weight_bytes(config: &ModelConfig) -> Result<u64, WeightsError> {
    let format = config.weight_format;
    if format == WeightFormat::Unplanned {
        return Err(WeightsError::FormatNotPlanned {
            model: config.source.to_string(),
        });
    }
    Ok(tensors_with(config, true)?
        .iter()
        .fold(0u64, |sum, t| sum.saturating_add(t.bytes(format))))
}
