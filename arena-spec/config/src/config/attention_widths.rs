//! What `ModelConfig` derives for attention: head sizes and projection widths, layer counts
//! by kind, the KV pool's layer kinds and each token's KV widths.

use super::{max, KvLayer, LayerKind, ModelConfig};
use std::borrow::Cow;

impl ModelConfig {
    // ---- attention ----

    /// Multi-head latent attention (DeepSeek).
    pub const fn is_mla(&self) -> bool {
        self.kv_lora_rank > 0
    }

    /// The q/k head size: `head_dim` as written, MLA's nope + rope, or `hidden / heads`.
    pub const fn head_dim(&self) -> usize {
        if self.is_mla() {
            return self.qk_nope_head_dim + self.qk_rope_head_dim;
        }
        match self.head_dim_field {
            Some(d) => d,
            None if self.num_attention_heads > 0 => self.hidden_size / self.num_attention_heads,
            None => 0,
        }
    }

    /// The attention value head size: MLA's `v_head_dim`; a family's own `v_head_dim`
    /// (MiMo-V2-Flash, where it is set); else `head_dim`.
    pub const fn value_head_dim(&self) -> usize {
        if self.is_mla() || self.v_head_dim > 0 {
            self.v_head_dim
        } else {
            self.head_dim()
        }
    }

    /// Output width of the q projection (doubled when the attention output is gated).
    pub const fn q_proj_width(&self) -> usize {
        let gate = if self.attn_output_gate { 2 } else { 1 };
        self.num_attention_heads * max(self.head_dim(), self.global_head_dim) * gate
    }

    /// The k and v outputs of Gemma 4's full-attention layers (0 where none has its own
    /// widths): kv heads of the global head size, k alone where keys are values.
    pub const fn global_kv_width(&self) -> usize {
        let kv = if self.global_kv_heads > 0 {
            self.global_kv_heads
        } else {
            self.num_key_value_heads
        };
        let parts = if self.global_k_eq_v { 1 } else { 2 };
        kv * self.global_head_dim * parts
    }

    /// Output width of the k and v projections (MLA: the compressed kv and the rope key).
    pub const fn kv_proj_width(&self) -> usize {
        if self.is_mla() {
            self.kv_lora_rank + self.qk_rope_head_dim
        } else {
            max(
                self.num_key_value_heads * (self.head_dim() + self.value_head_dim()),
                self.global_kv_width(),
            )
        }
    }

    /// Width of the fused qkv output: q, k and v, the compressed q of a low-rank q
    /// projection, and the other projections of the attention input
    /// ([`Self::extra_qkv_width`]).
    pub const fn qkv_width(&self) -> usize {
        if self.num_attention_layers() == 0 {
            return 0;
        }
        self.q_proj_width() + self.kv_proj_width() + self.q_lora_rank + self.extra_qkv_width
    }

    /// Width of the attention output before the O projection: `q_heads · value head dim`.
    pub const fn attn_output_width(&self) -> usize {
        if self.num_attention_layers() == 0 {
            return 0;
        }
        self.num_attention_heads * max(self.value_head_dim(), self.global_head_dim)
    }

    // ---- layers ----

    pub const fn count(&self, kind: LayerKind) -> usize {
        let layers = self.layer_kinds();
        let (mut n, mut i) = (0, 0);
        while i < layers.len() {
            n += (layers[i] as u8 == kind as u8) as usize;
            i += 1;
        }
        n
    }

    /// The layers, whether owned (loaded) or borrowed (a `const` config).
    pub const fn layer_kinds(&self) -> &[LayerKind] {
        match &self.layers {
            Cow::Borrowed(layers) => layers,
            Cow::Owned(layers) => layers.as_slice(),
        }
    }

    pub const fn num_attention_layers(&self) -> usize {
        self.count(LayerKind::Attention)
    }

    // ---- the KV pool's layer kinds ----

    /// Each layer's kind of KV cache, whether owned (loaded) or borrowed (a `const` config).
    pub const fn kv_layer_kinds(&self) -> &[KvLayer] {
        match &self.kv_layers {
            Cow::Borrowed(kinds) => kinds,
            Cow::Owned(kinds) => kinds.as_slice(),
        }
    }

    const fn count_kv(&self, kind: KvLayer) -> usize {
        let kinds = self.kv_layer_kinds();
        let (mut n, mut i) = (0, 0);
        while i < kinds.len() {
            n += (kinds[i] as u8 == kind as u8) as usize;
            i += 1;
        }
        n
    }

    /// Attention layers that keep no keys and values of their own (Gemma 4's KV-shared
    /// layers), of either type.
    pub const fn num_shared_kv_layers(&self) -> usize {
        self.count_kv(KvLayer::Shared) + self.count_kv(KvLayer::SharedFull)
    }

    /// Of those, the full-attention ones by type.
    pub const fn num_shared_full_kv_layers(&self) -> usize {
        self.count_kv(KvLayer::SharedFull)
    }

    /// Attention layers that keep every token's keys and values.
    pub const fn num_full_kv_layers(&self) -> usize {
        self.count_kv(KvLayer::Full)
    }

    /// Attention layers that keep a window of a sequence's keys and values, not the whole
    /// sequence: the last `sliding_window` tokens (DeepSeek-V4: every layer, its CSA and HCA
    /// layers beside their compressed entries) or the current chunk of
    /// `attention_chunk_size` (Llama 4's chunked layers). The pool keeps them in its
    /// `sliding` buffer.
    pub const fn num_sliding_kv_layers(&self) -> usize {
        self.count_kv(KvLayer::Sliding)
            + self.count_kv(KvLayer::Csa)
            + self.count_kv(KvLayer::Hca)
            + self.count_kv(KvLayer::Chunked)
    }

    /// Of those, the chunked ones.
    pub const fn num_chunked_kv_layers(&self) -> usize {
        self.count_kv(KvLayer::Chunked)
    }

    /// DeepSeek-V4's CSA layers (compressed entries with indexer keys).
    pub const fn num_csa_kv_layers(&self) -> usize {
        self.count_kv(KvLayer::Csa)
    }

    /// DeepSeek-V4's HCA layers.
    pub const fn num_hca_kv_layers(&self) -> usize {
        self.count_kv(KvLayer::Hca)
    }

    /// The attention keeps one vector a token, its key and its value (DeepSeek-V4's K=V
    /// head: `DeepseekV4Attention`; vLLM's `SlidingWindowMLASpec`, one head, no V).
    pub const fn kv_is_one_vector(&self) -> bool {
        self.family.rules().compressed.is_some()
    }

    /// Elements one token keeps in a full-length layer, one rank's share: MLA's compressed
    /// latent and rope key (`kv_lora_rank + qk_rope_head_dim`, one latent shared by every
    /// head, so every tp rank keeps it whole); else K and V of the rank's kv heads, at the full
    /// layers' own head size where they have one (Gemma 4's `global_head_dim`; keys that are
    /// values are still kept twice, as transformers' cache and vLLM's attention store both).
    pub const fn full_kv_token_width(&self) -> usize {
        if self.is_mla() {
            return self.kv_lora_rank + self.qk_rope_head_dim;
        }
        let kv = if self.global_kv_heads > 0 {
            self.global_kv_heads
        } else {
            self.num_key_value_heads
        };
        if self.global_head_dim > 0 {
            return kv * self.global_head_dim * 2;
        }
        kv * (self.head_dim() + self.value_head_dim())
    }

    /// Elements one token keeps in a sliding-window layer, one rank's share: K and V of the
    /// rank's kv heads (DeepSeek-V4: its one K=V vector of `head_dim`, whole on every rank).
    pub const fn sliding_kv_token_width(&self) -> usize {
        if self.kv_is_one_vector() {
            return self.head_dim();
        }
        self.num_key_value_heads * (self.head_dim() + self.value_head_dim())
    }

    /// Bytes one token keeps in DeepSeek-V3.2's indexer key cache, a layer: the FP8 key and
    /// one FP32 scale a 128 elements (vLLM's indexer cache; 0 without an indexer).
    pub const fn indexer_key_token_bytes(&self) -> usize {
        if !self.has_indexer() {
            return 0;
        }
        self.index_head_dim + self.index_head_dim.div_ceil(128) * 4
    }
}
