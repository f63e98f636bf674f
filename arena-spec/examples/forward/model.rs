//! The decoder the example runs: Qwen3 (dense), Qwen3-MoE or the hybrid Qwen3.5 (gated
//! delta-net and gated attention layers), as transformers builds them
//! (`models/qwen3/modeling_qwen3.py`, `models/qwen3_moe/modeling_qwen3_moe.py`,
//! `models/qwen3_5/modeling_qwen3_5.py`), from a shipped config truncated to a few layers.
//! The arena is sized from the same truncated file.

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
    /// Each layer's mixer, in order.
    pub kinds: Vec<Mixer>,
    /// The gated delta-net layers' widths (zeros without them).
    pub gdn: Gdn,
    /// Qwen3.5's attention output gate: `q_proj` gives each head's q and then its gate,
    /// and `sigmoid(gate)` scales the attention output.
    pub output_gate: bool,
    /// The leading lanes of a head RoPE rotates (`head_dim · partial_rotary_factor`); the
    /// rest pass through.
    pub rotary_dim: usize,
    /// Qwen3.5's zero-centred RMSNorm (`Qwen3_5RMSNorm`): `x · rsqrt(mean(x²) + eps) ·
    /// (1 + w)` in f32, rounded once, where Qwen3's multiplies the rounded norm by `w`.
    pub centred_norm: bool,
}

/// A layer's token mixer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mixer {
    Attention,
    /// Gated DeltaNet (`Qwen3_5GatedDeltaNet`): its conv and recurrent states are a
    /// sequence's slot of the `StateCache`.
    DeltaNet,
}

/// A gated delta-net layer's widths, from `config.json`'s `linear_*` fields.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gdn {
    pub k_heads: usize,
    pub v_heads: usize,
    pub k_dim: usize,
    pub v_dim: usize,
    /// The causal conv's kernel (`linear_conv_kernel_dim`).
    pub kernel: usize,
}

impl Gdn {
    /// The conv's channels: q, k and v (`2·Hk·Dk + Hv·Dv`).
    pub fn conv_dim(&self) -> usize {
        2 * self.k_heads * self.k_dim + self.v_heads * self.v_dim
    }
    /// The value width `Hv·Dv`: the delta rule's output and z's width.
    pub fn value_dim(&self) -> usize {
        self.v_heads * self.v_dim
    }
}

impl Decoder {
    /// The shipped model `name` (`arena-spec/config/models/<name>.json`) cut to its first `layers`
    /// layers, the way `reference.py` cuts it.
    pub fn shipped(name: &str, layers: usize) -> Result<Decoder, String> {
        Decoder::narrowed(name, layers, &[])
    }

    /// The same with the text model's fields `narrow` set over the file's (the host test's
    /// narrow hybrid: [`NARROW`]). A multimodal file's `text_config` is the model: the
    /// checkpoint is the text model's (`Qwen3_5ForCausalLM`, `model.layers.*`), as
    /// `reference.py` builds it.
    pub fn narrowed(
        name: &str,
        layers: usize,
        narrow: &[(&str, Value)],
    ) -> Result<Decoder, String> {
        let shipped = arena_spec::models::find(name).ok_or(format!("no shipped model {name}"))?;
        let mut raw: Value = serde_json::from_str(shipped.json).map_err(|e| e.to_string())?;
        if let Some(text) = raw.get("text_config").cloned() {
            let tied = raw.get("tie_word_embeddings").cloned();
            raw = text;
            if let Some(tied) = tied.filter(|_| raw.get("tie_word_embeddings").is_none()) {
                raw["tie_word_embeddings"] = tied;
            }
        }
        for (key, value) in narrow {
            raw[*key] = value.clone();
        }
        // The checkpoint holds no MTP layers: a text engine's step has none.
        if raw.get("mtp_num_hidden_layers").is_some() {
            raw["mtp_num_hidden_layers"] = 0.into();
        }
        raw["num_hidden_layers"] = layers.into();
        for key in ["layer_types", "mlp_only_layers"] {
            if let Some(list) = raw.get_mut(key).and_then(Value::as_array_mut) {
                list.truncate(layers);
            }
        }
        let file = format!("arena-spec/config/models/{name}.json (first {layers} layers)");
        let config =
            ModelConfig::from_json_str(&raw.to_string(), &file).map_err(|e| e.to_string())?;
        let get = |key: &str| {
            raw.get(key)
                .or_else(|| raw.get("rope_parameters").and_then(|r| r.get(key)))
                .and_then(Value::as_f64)
        };
        let kinds: Vec<Mixer> = match raw.get("layer_types").and_then(Value::as_array) {
            Some(types) => types
                .iter()
                .map(|t| match t.as_str() {
                    Some("full_attention") => Ok(Mixer::Attention),
                    Some("linear_attention") => Ok(Mixer::DeltaNet),
                    other => Err(format!("the example runs no {other:?} layer")),
                })
                .collect::<Result<_, _>>()?,
            None => vec![Mixer::Attention; layers],
        };
        let width = |key: &str| raw.get(key).and_then(Value::as_u64).unwrap_or(0) as usize;
        let gdn = Gdn {
            k_heads: width("linear_num_key_heads"),
            v_heads: width("linear_num_value_heads"),
            k_dim: width("linear_key_head_dim"),
            v_dim: width("linear_value_head_dim"),
            kernel: width("linear_conv_kernel_dim"),
        };
        let qwen35 = raw["model_type"].as_str() == Some("qwen3_5_text");
        if config.has_gdn() && !qwen35 {
            return Err("the example's gated delta-net layers are Qwen3.5's".into());
        }
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
            kinds,
            gdn,
            output_gate: config.attn_output_gate,
            rotary_dim: (config.head_dim() as f64 * get("partial_rotary_factor").unwrap_or(1.0))
                as usize,
            centred_norm: qwen35,
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
        if self.config.has_gdn() {
            return Err("the example splits no gated delta-net layer over ranks".into());
        }
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
            kinds: self.kinds.clone(),
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
            if self.kinds[l] == Mixer::DeltaNet {
                let g = &self.gdn;
                let a = "linear_attn.";
                out.push((p(&format!("{a}in_proj_qkv.weight")), vec![g.conv_dim(), h]));
                out.push((p(&format!("{a}in_proj_z.weight")), vec![g.value_dim(), h]));
                out.push((p(&format!("{a}in_proj_b.weight")), vec![g.v_heads, h]));
                out.push((p(&format!("{a}in_proj_a.weight")), vec![g.v_heads, h]));
                out.push((
                    p(&format!("{a}conv1d.weight")),
                    vec![g.conv_dim(), 1, g.kernel],
                ));
                out.push((p(&format!("{a}dt_bias")), vec![g.v_heads]));
                out.push((p(&format!("{a}A_log")), vec![g.v_heads]));
                out.push((p(&format!("{a}norm.weight")), vec![g.v_dim]));
                out.push((p(&format!("{a}out_proj.weight")), vec![h, g.value_dim()]));
                self.ffn_parameters(l, &mut out);
                continue;
            }
            let gated = if self.output_gate { 2 } else { 1 };
            out.push((
                p("self_attn.q_proj.weight"),
                vec![gated * self.heads * d, h],
            ));
            out.push((p("self_attn.k_proj.weight"), vec![self.kv_heads * d, h]));
            out.push((p("self_attn.v_proj.weight"), vec![self.kv_heads * d, h]));
            out.push((p("self_attn.o_proj.weight"), vec![h, self.heads * d]));
            out.push((p("self_attn.q_norm.weight"), vec![d]));
            out.push((p("self_attn.k_norm.weight"), vec![d]));
            self.ffn_parameters(l, &mut out);
        }
        out.push(("model.norm.weight".to_string(), vec![h]));
        if !self.tied {
            out.push(("lm_head.weight".to_string(), vec![self.vocab, h]));
        }
        out
    }

    /// Layer `l`'s FFN parameters, dense or sparse.
    fn ffn_parameters(&self, l: usize, out: &mut Vec<(String, Vec<usize>)>) {
        let p = |s: &str| format!("model.layers.{l}.{s}");
        let (h, w) = (self.hidden, self.expert_width);
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

    /// Layer `l`'s index among the layers of its mixer: its place in the weight arenas'
    /// `{attention_layer}` / `{gdn_layer}` groups, the KV pool's layers and the state cache's.
    pub fn index_in_kind(&self, l: usize) -> usize {
        self.kinds[..l]
            .iter()
            .filter(|k| **k == self.kinds[l])
            .count()
    }

    /// A row of `qkv_output`: q, k, v and, with the output gate, the gate heads after them
    /// (each head's gate moved there from beside its q by the projection: `Engine::attention`).
    pub fn qkv_width(&self) -> usize {
        let (q, kv) = (self.heads * self.head_dim, self.kv_heads * self.head_dim);
        q + 2 * kv + if self.output_gate { q } else { 0 }
    }
}

/// The host test's narrow hybrid: Qwen3.5-27B's text model (its mixers, gates, norms and
/// partial RoPE) at widths a host runs in seconds. Chosen here, not a vendor's: a check of
/// the kernels against transformers, not of Qwen3.5-27B's shapes (the GPU run keeps them).
pub fn narrow() -> Vec<(&'static str, Value)> {
    [
        ("hidden_size", 512),
        ("intermediate_size", 1024),
        ("vocab_size", 4096),
        ("num_attention_heads", 4),
        ("num_key_value_heads", 2),
        ("head_dim", 64),
        ("linear_num_key_heads", 2),
        ("linear_num_value_heads", 6),
        ("linear_key_head_dim", 32),
        ("linear_value_head_dim", 32),
    ]
    .into_iter()
    .map(|(k, v)| (k, Value::from(v)))
    .collect()
}
