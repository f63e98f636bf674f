//! The decoder the example runs: Qwen3 (dense) or Qwen3-MoE, as transformers builds them
//! (`models/qwen3/modeling_qwen3.py`, `models/qwen3_moe/modeling_qwen3_moe.py`), from a shipped
//! config truncated to a few layers. The arena is sized from the same truncated file.

use arena_spec::ModelConfig;
use serde_json::Value;

/// The widths and constants the kernels need, read from `config.json`.
pub struct Decoder {
    /// The arena's view of the same file.
    pub config: ModelConfig,
    /// The cut file itself: the checkpoint's `config.json`.
    pub json: String,
    pub layers: usize,
    pub hidden: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    /// The logits' rows this decoder computes: the vocabulary, or a tensor-parallel rank's
    /// share of it (its rows of the padded vocabulary, from `vocab_start`).
    pub vocab: usize,
    pub vocab_start: usize,
    pub eps: f32,
    pub rope_theta: f64,
    pub tied: bool,
    /// 0 for a dense model.
    pub experts: usize,
    pub top_k: usize,
    pub expert_width: usize,
    pub norm_topk_prob: bool,
}

impl Decoder {
    /// The shipped model `name` (`arena-spec/config/models/<name>.json`) cut to its first `layers`
    /// layers, the way `reference.py` cuts it.
    pub fn shipped(name: &str, layers: usize) -> Result<Decoder, String> {
        let shipped = arena_spec::models::find(name).ok_or(format!("no shipped model {name}"))?;
        let mut raw: Value = serde_json::from_str(shipped.json).map_err(|e| e.to_string())?;
        raw["num_hidden_layers"] = layers.into();
        for key in ["layer_types", "mlp_only_layers"] {
            if let Some(list) = raw.get_mut(key).and_then(Value::as_array_mut) {
                list.truncate(layers);
            }
        }
        let file = format!("arena-spec/config/models/{name}.json (first {layers} layers)");
        let config =
            ModelConfig::from_json_str(&raw.to_string(), &file).map_err(|e| e.to_string())?;
        let get = |key: &str| raw.get(key).and_then(Value::as_f64);
        let experts = config.num_experts;
        if raw
            .get("mlp_only_layers")
            .and_then(Value::as_array)
            .is_some_and(|l| !l.is_empty())
            || get("decoder_sparse_step").is_some_and(|s| s != 1.0)
        {
            return Err("every layer of the example's MoE model is sparse".into());
        }
        Ok(Decoder {
            layers,
            hidden: config.hidden_size,
            heads: config.num_attention_heads,
            kv_heads: config.num_key_value_heads,
            head_dim: config.head_dim(),
            vocab: config.vocab_size,
            vocab_start: 0,
            eps: get("rms_norm_eps").ok_or("no rms_norm_eps")? as f32,
            rope_theta: get("rope_theta").ok_or("no rope_theta")?,
            tied: raw["tie_word_embeddings"].as_bool().unwrap_or(false),
            experts,
            top_k: if experts > 0 {
                config.num_experts_per_tok
            } else {
                0
            },
            expert_width: if experts > 0 {
                config.moe_intermediate_size
            } else {
                config.intermediate_size
            },
            norm_topk_prob: raw["norm_topk_prob"].as_bool().unwrap_or(false),
            config,
            json: raw.to_string(),
        })
    }

    /// Rank `index` of `tp` tensor-parallel ranks: its config (`ModelConfig::shard`: heads,
    /// kv heads and FFN widths split), and its share of the vocabulary's rows as vLLM's
    /// `VocabParallelEmbedding` cuts it (`WeightLayers::vocab_rows`, the weights' own rule: the
    /// vocabulary padded to a multiple of 64, then in
    /// `tp` equal parts), which its embedding and LM head hold.
    pub fn rank(&self, tp: usize, index: usize) -> Result<Decoder, String> {
        let layout = arena_spec::ParallelLayout::new(tp, 1, 1).map_err(|e| e.to_string())?;
        let rank = layout.rank(index).map_err(|e| e.to_string())?;
        let config = self.config.shard(&rank).map_err(|e| e.to_string())?;
        let rows = arena_spec::weights::WeightLayers::of(&config, true)
            .map_err(|e| e.to_string())?
            .vocab_rows;
        Ok(Decoder {
            heads: config.num_attention_heads,
            kv_heads: config.num_key_value_heads,
            expert_width: if self.experts > 0 {
                config.moe_intermediate_size
            } else {
                config.intermediate_size
            },
            vocab: rows,
            vocab_start: index * rows,
            config,
            json: self.json.clone(),
            ..*self
        })
    }

    /// Every parameter, in transformers' `state_dict` names and shapes (the tied LM head
    /// left out: it is the embedding).
    pub fn parameters(&self) -> Vec<(String, Vec<usize>)> {
        let (h, d) = (self.hidden, self.head_dim);
        let mut out = vec![("model.embed_tokens.weight".to_string(), vec![self.vocab, h])];
        for l in 0..self.layers {
            let p = |s: &str| format!("model.layers.{l}.{s}");
            out.push((p("input_layernorm.weight"), vec![h]));
            out.push((p("post_attention_layernorm.weight"), vec![h]));
            out.push((p("self_attn.q_proj.weight"), vec![self.heads * d, h]));
            out.push((p("self_attn.k_proj.weight"), vec![self.kv_heads * d, h]));
            out.push((p("self_attn.v_proj.weight"), vec![self.kv_heads * d, h]));
            out.push((p("self_attn.o_proj.weight"), vec![h, self.heads * d]));
            out.push((p("self_attn.q_norm.weight"), vec![d]));
            out.push((p("self_attn.k_norm.weight"), vec![d]));
            let w = self.expert_width;
            if self.experts > 0 {
                out.push((p("mlp.gate.weight"), vec![self.experts, h]));
                out.push((p("mlp.experts.gate_up_proj"), vec![self.experts, 2 * w, h]));
                out.push((p("mlp.experts.down_proj"), vec![self.experts, h, w]));
            } else {
                out.push((p("mlp.gate_proj.weight"), vec![w, h]));
                out.push((p("mlp.up_proj.weight"), vec![w, h]));
                out.push((p("mlp.down_proj.weight"), vec![h, w]));
            }
        }
        out.push(("model.norm.weight".to_string(), vec![h]));
        if !self.tied {
            out.push(("lm_head.weight".to_string(), vec![self.vocab, h]));
        }
        out
    }
}
