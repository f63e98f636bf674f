//! Multi-token-prediction layers: the draft layers a checkpoint carries beside its decoder
//! layers (`num_nextn_predict_layers`), which an engine loads only to speculate with. The
//! DeepSeek-style module (DeepSeek-V3/V3.2, Kimi-K2, GLM-4.5, GLM-5) is one decoder layer of
//! the model's last kind (MLA or GQA attention, a routed FFN; DeepSeek-V3.2's indexer on every
//! MTP layer) with `enorm` and `hnorm` (RMSNorm, hidden), `eh_proj` (`[hidden, 2 · hidden]`,
//! 16 bits, replicated on every rank), and `shared_head` (a norm and a vocabulary head), with
//! an embedding of its own: vLLM v0.33.0's `deepseek_mtp.py` (`DeepSeekMultiTokenPredictor`,
//! `DeepSeekMultiTokenPredictorLayer`; `glm4_moe_mtp.py` the same), whose embedding and heads
//! are allocated a copy each as the checkpoint stores them.

use super::{KvLayer, LayerKind, ModelConfig};
use crate::parallel::RankShard;
use std::borrow::Cow;

/// The families whose MTP module is the DeepSeek-style one above, by `model_type`.
const DEEPSEEK_STYLE: &[&str] = &[
    "deepseek_v3",
    "deepseek_v32",
    "kimi_k2",
    "kimi_k25",
    "glm4_moe",
    "glm_moe_dsa",
];

impl ModelConfig {
    /// The MTP module as a config of its own on this rank: `mtp_layers` decoder layers of
    /// the model's attention with routed FFNs, an embedding, a final norm and an untied
    /// vocabulary head (its `shared_head`), on the rank's tp share. `None` where the file has
    /// no MTP layers or the rank's stage is not the last (the draft runs after the last
    /// layer); `Err` naming the family where its MTP module is not the DeepSeek-style one
    /// (Qwen3-Next/3.5's `mtp_num_hidden_layers`, MiniMax's `num_mtp_modules`,
    /// DeepSeek-V4's).
    pub fn mtp_module(&self) -> Result<Option<ModelConfig>, &'static str> {
        if self.mtp_layers == 0 || self.lm_head_vocab() == 0 {
            return Ok(None);
        }
        if !DEEPSEEK_STYLE.contains(&self.family.model_type()) || self.kv_is_one_vector() {
            return Err(
                "its multi-token-prediction layers are not the DeepSeek-style module \
                        counted here",
            );
        }
        let n = self.mtp_layers;
        let mut m = self.clone();
        m.layers = Cow::Owned(vec![LayerKind::Attention; n]);
        m.kv_layers = Cow::Owned(vec![KvLayer::Full; n]);
        m.dense_ffn_layers = Cow::Owned(vec![false; n]);
        m.moe_dense_layers = 0;
        m.indexer_layers = Cow::Owned(vec![self.has_indexer() && self.is_mla(); n]);
        m.num_hidden_layers = n;
        m.tie_word_embeddings = false;
        m.weight_formats = self.weight_formats.for_mtp();
        m.shard = self.shard.as_ref().map(|s| RankShard {
            layers: 0..n,
            holds_lm_head: true,
            ..s.clone()
        });
        Ok(Some(m))
    }

    /// This rank's config with the MTP module's layers after its own, for what the draft
    /// layers keep between steps: their keys and values (vLLM allocates the drafter's
    /// attention layers in the same KV cache) and, on DSA models, their indexer keys.
    pub fn with_mtp_layers(&self, mtp: &ModelConfig) -> ModelConfig {
        let mut c = self.clone();
        c.layers = Cow::Owned([self.layer_kinds(), mtp.layer_kinds()].concat());
        c.kv_layers = Cow::Owned([self.kv_layer_kinds(), mtp.kv_layer_kinds()].concat());
        c.dense_ffn_layers =
            Cow::Owned([&self.dense_ffn_layers[..], &mtp.dense_ffn_layers].concat());
        c.indexer_layers = Cow::Owned([&self.indexer_layers[..], &mtp.indexer_layers].concat());
        c.num_hidden_layers = c.layers.len();
        c
    }

    /// Bytes of the MTP module's own tensors beyond a decoder layer, embedding and head, on
    /// every rank: `enorm`, `hnorm` (`[hidden]` each) and `eh_proj` (`[hidden, 2 · hidden]`,
    /// an unquantized `nn.Linear` in vLLM, replicated), 16 bits, a layer.
    pub const fn mtp_extra_bytes(&self) -> usize {
        let h = self.hidden_size;
        self.mtp_layers
            .saturating_mul(2 * h + 2 * h * h)
            .saturating_mul(2)
    }
}
