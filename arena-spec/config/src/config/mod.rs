//! `ModelConfig`: the shapes the arena is sized from, loaded from a Hugging Face
//! `config.json`. Every derived quantity (head_dim, layer counts, widths) is a method here,
//! computed in one place.
//!
//! The rest of the folder, in the order a file goes through it: `json.rs` reads and
//! parses the text, `load.rs` turns the JSON into a `ModelConfig` through the
//! family's row of rules (`family.rs`, its table in `family/table.rs` and `family/table/`), reading keys through
//! `keys.rs` / `fields.rs`, the layer layout from `layers.rs`, the MoE shape from `moe.rs` and
//! the Mamba-2 sizes from `mamba.rs`; `error.rs` holds what it can fail with. `levers.rs`
//! holds the engine's levers, `shard.rs` one GPU's config of a parallel layout,
//! `const_item.rs` writes a config as a `const` item.

mod blocks;
mod compressed;
mod const_item;
mod error;
pub mod family;
mod fields;
mod files;
mod indexer_layers;
mod json;
mod keys;
mod kv_layers;
mod layer_widths;
mod layers;
pub mod levers;
mod linear_mixers;
mod load;
mod mamba;
mod moe;
mod mtp;
mod quant_recipe;
mod quantization;
mod shard;
mod state_dtype;
mod towers;
mod weight_bytes;

pub use blocks::Block;
pub use const_item::const_name;
pub use error::{ConfigError, MAX_CONFIG_BYTES, MAX_DIM, MAX_EXTENT};
pub use family::{Family, FamilyRules};
use levers::Levers;
#[doc(hidden)]
pub use load::keys_asked;
pub use quantization::{FormatSource, Mxfp4Backend, WeightFormat, WeightFormats, WeightPart};
pub use state_dtype::{RecurrentStateDtype, StateDtype, StateDtypeSource};
use std::borrow::Cow;
pub use towers::{Tower, TowerKind, Towers};

/// What a layer's token mixer (or, for Nemotron-H's FFN-only layers, its FFN) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    /// Softmax attention (GQA or MLA).
    Attention,
    /// Gated DeltaNet linear attention (Qwen3-Next's and Qwen3.5's `linear_attention` layers).
    GatedDeltaNet,
    /// A Mamba-2 mixer.
    Mamba2,
    /// A layer that is only a dense MLP: Nemotron-H's `-`, a DeciLM block whose attention is a
    /// no-op.
    Mlp,
    /// A Nemotron-H layer that is only a MoE (`E`).
    Moe,
    /// Beyond the seeds: LFM2's gated short convolution (`Lfm2ShortConv`).
    ShortConv,
    /// Beyond the seeds: MiniMax's lightning (linear) attention
    /// (`MiniMaxLightningAttention`).
    Lightning,
    /// Beyond the seeds: Kimi delta attention (`KimiLinearDeltaAttention`), a gated delta
    /// rule with a per-channel decay.
    Kda,
}

/// What keys and values an attention layer keeps between steps: the KV pool's layer kinds
/// (`arena_spec::KvPool`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvLayer {
    /// None: not an attention layer (a recurrent mixer keeps its state in the
    /// `arena_spec::StateCache`; an FFN-only layer keeps nothing).
    None,
    /// Every token's keys and values, for the whole sequence.
    Full,
    /// The last `sliding_window` tokens' keys and values only.
    Sliding,
    /// The keys and values of the chunk of `attention_chunk_size` tokens the sequence is in
    /// (Llama 4's chunked local attention; vLLM's `ChunkedLocalAttentionSpec`).
    Chunked,
    /// None of its own: it reads an earlier layer's (Gemma 4's KV-shared layers); a
    /// sliding-attention layer by type.
    Shared,
    /// The same, a full-attention layer by type (its projections at the full layers' widths).
    SharedFull,
    /// DeepSeek-V4's compressed sparse attention: a sliding window of its one K=V vector, and
    /// one compressed entry a `index_compress_ratio` tokens with the indexer's key of each.
    Csa,
    /// DeepSeek-V4's heavily compressed attention: a sliding window of its one K=V vector,
    /// and one compressed entry a `hca_compress_ratio` tokens.
    Hca,
}

impl KvLayer {
    /// It keeps none of its own, reading an earlier layer's.
    pub const fn is_shared(self) -> bool {
        matches!(self, KvLayer::Shared | KvLayer::SharedFull)
    }
}

/// The model shapes the arena is sized from. Raw fields hold the file's values (0 where a
/// feature is absent); methods derive everything else.
///
/// One type for run time and `const`: the text and per-layer fields are `Cow<'static, _>`,
/// so a loaded config owns them and a `const` config (a shipped model's in
/// [`crate::models::consts`], or a model author's own) borrows `'static` data; every method
/// a formula calls is a `const fn`.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    /// Where it came from (a shipped model's name or a file path).
    pub source: Cow<'static, str>,
    pub model_type: Cow<'static, str>,
    pub family: Family,

    pub hidden_size: usize,
    /// The dense FFN width (0 for a model without dense FFN layers).
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub vocab_size: usize,
    pub max_position_embeddings: usize,
    pub num_attention_heads: usize,
    pub num_key_value_heads: usize,
    /// `head_dim` as written in the file, if it is.
    pub head_dim_field: Option<usize>,
    /// The attention output is gated by a second half of the q projection (Qwen3-Next/3.5).
    pub attn_output_gate: bool,
    /// Multimodal RoPE: positions have three streams.
    pub mrope: bool,
    /// One entry per layer.
    pub layers: Cow<'static, [LayerKind]>,

    /// Routed experts (`num_experts` or `n_routed_experts`), 0 for a dense model.
    pub num_experts: usize,
    pub num_experts_per_tok: usize,
    pub moe_intermediate_size: usize,
    /// The width of the shared expert path of a MoE layer, resolved by the family's rule:
    /// Qwen's `shared_expert_intermediate_size`, DeepSeek's and GLM's `n_shared_experts ·
    /// moe_intermediate_size`, Nemotron-H's `moe_shared_expert_intermediate_size`, Llama 4's
    /// expert width, Gemma 4's MLP beside its MoE block (`intermediate_size`, run on every
    /// token as a shared expert is); 0 without a shared expert.
    pub shared_expert_intermediate_size: usize,
    /// The width the routed experts read and write when it is not `hidden_size` (latent MoE,
    /// Nemotron-3's `moe_latent_size`: `fc1_latent_proj` hidden → latent before the experts,
    /// `fc2_latent_proj` back after them; `NemotronHMoE`); 0: the experts run at the hidden
    /// size.
    pub moe_latent_size: usize,
    /// DeepSeek's shared expert count as the file has it, already folded into
    /// `shared_expert_intermediate_size`; no formula reads it (kept for callers and the
    /// `const` items).
    pub n_shared_experts: usize,
    /// DeepSeek's leading dense layer count as the file has it, already folded into
    /// `dense_ffn_layers` (which a `mlp_layer_types` list may set instead); no formula reads
    /// it (kept for callers and the `const` items).
    pub first_k_dense_replace: usize,
    /// Layers of a MoE model whose FFN is dense (DeepSeek's first `first_k_dense_replace`,
    /// Qwen's `mlp_only_layers`, Llama 4's non-MoE layers, Nemotron-H's `-` layers).
    pub moe_dense_layers: usize,
    /// One entry per layer of a MoE model: its FFN is dense (`moe_dense_layers` counts
    /// them; all false for a dense model). Kept per layer so a pipeline stage counts its own.
    pub dense_ffn_layers: Cow<'static, [bool]>,
    /// Zero (identity) experts the router also scores; synthetic.
    pub zero_expert_num: usize,
    /// Layers routed by token-id hash (DeepSeek-V4 style); synthetic. Read by nothing: the
    /// `token_ids` buffer hash routing reads is sized for every model, not gated on it.
    pub hash_moe_layers: usize,

    /// MLA (`kv_lora_rank` > 0).
    pub q_lora_rank: usize,
    pub kv_lora_rank: usize,
    pub qk_nope_head_dim: usize,
    pub qk_rope_head_dim: usize,
    pub v_head_dim: usize,

    /// The QSA indexer (DeepSeek-V3.2).
    pub index_n_heads: usize,
    pub index_head_dim: usize,
    pub index_topk: usize,
    /// Compressed indexer ratio; 0 (absent) means 1.
    pub index_compress_ratio: usize,
    /// One entry per layer: an MLA layer that builds the indexer (its weights and its key
    /// cache; `config/indexer_layers.rs`: vLLM's `index_topk_freq`,
    /// `index_skip_topk_offset`, `index_topk_pattern`). Every MLA layer of DeepSeek-V3.2
    /// and GLM-5; 21 of GLM-5.2's 78. All false without an MLA indexer (DeepSeek-V4's is its
    /// CSA layers'). It sizes no activation buffer (the step's indexer buffers serve the
    /// layer in flight): the KV pool's indexer keys and the weights.
    pub indexer_layers: Cow<'static, [bool]>,

    /// Gated DeltaNet.
    pub linear_num_key_heads: usize,
    pub linear_key_head_dim: usize,
    pub linear_num_value_heads: usize,
    pub linear_value_head_dim: usize,
    /// The GDN causal conv kernel width. It sizes no activation buffer: it sizes the
    /// sequence-state cache's conv state, `[kernel - 1, conv channels]` per layer per slot
    /// (`StateCache`).
    pub linear_conv_kernel_dim: usize,

    /// Mamba-2.
    pub mamba_num_heads: usize,
    pub mamba_head_dim: usize,
    pub ssm_state_size: usize,
    pub mamba_n_groups: usize,
    /// The Mamba-2 causal conv kernel width. It sizes no activation buffer: it sizes the
    /// sequence-state cache's conv state, `[kernel - 1, conv channels]` per layer per slot
    /// (`StateCache`).
    pub mamba_conv_kernel: usize,
    pub mamba_chunk_size: usize,
    /// The GDN / Mamba-2 temporal state's dtype as the reference engine allocates it for
    /// this file, and where that was read (`config/state_dtype.rs`: the file's
    /// `mamba_ssm_cache_dtype` or `mamba_ssm_dtype`, else the family's default). It sizes no
    /// activation buffer: the state cache's recurrent states.
    pub recurrent_state_dtype: RecurrentStateDtype,

    /// Short convolution (LFM2's `Lfm2ShortConv`), beyond the seeds: its channels (the hidden
    /// size, split by tp on a rank; 0 without short-conv layers) and its conv taps
    /// (`conv_L_cache`). The taps size no activation buffer: they size the sequence-state
    /// cache's conv state, `[taps - 1, channels]` per layer per slot (`StateCache`).
    pub short_conv_dim: usize,
    pub short_conv_kernel: usize,
    /// Lightning attention (MiniMax), beyond the seeds: its heads (split by tp on a rank) and
    /// head size; 0 without lightning layers.
    pub lightning_heads: usize,
    pub lightning_head_dim: usize,
    /// Kimi delta attention (Kimi-Linear), beyond the seeds: its heads (split by tp on a
    /// rank), head size, and short-conv taps. The taps size no activation buffer: they size
    /// the sequence-state cache's conv state, `[taps - 1, 3 · heads · head_dim]` per layer per
    /// slot (`StateCache`). 0 without KDA layers.
    pub kda_heads: usize,
    pub kda_head_dim: usize,
    pub kda_conv_kernel: usize,
    /// Per-layer input embeddings (Gemma 4 E-models), beyond the seeds: P, each layer's slice
    /// (`hidden_size_per_layer_input`), and the whole per-token embedding of all the model's
    /// layers, `num_hidden_layers · P` (`embed_tokens_per_layer`, `per_layer_model_projection`
    /// out). The whole width stays on every rank and stage (vLLM gathers the projection and
    /// passes the embedding between pipeline stages). 0 without them.
    pub per_layer_input_dim: usize,
    pub per_layer_inputs_width: usize,

    /// The checkpoint's weight format a part of the model, and where it was read (its
    /// `quantization_config`, or ModelOpt's `hf_quant_config.json` beside it; none: 16 bits;
    /// `config/quant_recipe.rs`). Read by the weight bytes only (`crate::weights`).
    pub weight_formats: WeightFormats,
    /// The output head reuses the input embedding's matrix (`tie_word_embeddings`; absent:
    /// false). Read by the weights only (`crate::weights`).
    pub tie_word_embeddings: bool,
    /// The file's `attention_bias` (absent: false): which projections it adds a bias to is
    /// the family's (`crate::weights`). Read by the weights only.
    pub attention_bias: bool,
    /// The file's `use_qk_norm` (absent: false), for families where it switches the q and k
    /// norms. Read by the weights only (`crate::weights`).
    pub use_qk_norm: bool,

    /// The tokens a sliding-window layer attends to (`sliding_window`; 0 where no layer
    /// slides). It sizes no activation buffer: it caps the KV pool's sliding layers.
    pub sliding_window: usize,
    /// The chunk a chunked-local-attention layer attends within (`attention_chunk_size`; 0
    /// where no layer is chunked). It sizes no activation buffer: it caps the KV pool's
    /// chunked layers, kept in its sliding buffer.
    pub attention_chunk_size: usize,
    /// DeepSeek-V4's HCA compression rate (`compress_rates`), 0 without HCA layers. It sizes
    /// no activation buffer: the KV pool's compressed entries. (The CSA rate is
    /// `index_compress_ratio`.)
    pub hca_compress_ratio: usize,
    /// One entry per layer: the keys and values it keeps (the KV pool's layer kinds).
    pub kv_layers: Cow<'static, [KvLayer]>,

    /// Grouped O-projection (DeepSeek-V4's `o_a_proj`, `DeepseekV4GroupedLinear`).
    pub o_groups: usize,
    pub o_lora_rank: usize,
    /// Per token, the widest layer's projections of the attention input beyond q, k, v and a
    /// low-rank q, which this arena holds in `qkv_output` beside them (chosen here: the same
    /// input, the same phase): DeepSeek-V4's compressor and indexer projections
    /// (`config/compressed.rs`), Laguna's output gate (`g_proj`). 0 for every other model.
    pub extra_qkv_width: usize,
    /// The full-attention layers' widths where they differ from the sliding ones': their head
    /// size (Gemma 4's `global_head_dim`; 0: no layer has its own), their kv heads (Gemma 4's
    /// keys-are-values layers' `num_global_key_value_heads`, MiMo-V2-Flash's
    /// `num_key_value_heads` where its sliding layers hold twice as many; 0: the model's
    /// `num_key_value_heads`, which is the widest), and whether their keys are their values
    /// (no v projection). The widths take the wider of the two kinds of layer.
    pub global_head_dim: usize,
    pub global_kv_heads: usize,
    pub global_k_eq_v: bool,
    /// The q heads of the full-attention layers where a per-layer list gives them fewer than
    /// the sliding layers (Laguna's `num_attention_heads_per_layer`: 48 against 64); 0 where
    /// every layer has `num_attention_heads`. Read by the weights only (`crate::weights`; the
    /// widths above take the widest layer).
    pub full_attention_heads: usize,
    /// The per-layer list of q heads varies within a type of layer: the parameter count,
    /// which keeps one width a type, refuses the model (the widths above take the widest).
    pub heads_vary_within_type: bool,
    /// DeciLM's blocks (`block_configs`), one a layer in layer order: each block's kv heads
    /// and FFN width, 0 where that part is a no-op. Empty for every other family. The widths
    /// above are the widest block's (what the arena is sized for); the weights read each
    /// block's own (`crate::weights`, vLLM's `DeciLMDecoderLayer`).
    pub blocks: Cow<'static, [Block]>,
    /// Elements of the attention's output gate a head (Laguna's `g_proj`: 1 where `gating`
    /// is per head, `head_dim` where per element; 0 without the gate). Read by the
    /// weights only.
    pub attention_gate_per_head: usize,
    /// Gemma 4's KV-shared layers run an MLP twice as wide as the others
    /// (`use_double_wide_mlp`): `intermediate_size` is theirs, the other layers' is half
    /// (`shard` splits the half by tp). Read by the weights and `shard`.
    pub shared_ffn_doubled: bool,
    /// Hyper-connections (DeepSeek-V4's `DeepseekV4HyperConnection`: `hc_mult` residual
    /// streams).
    pub hc_mult: usize,
    pub hc_lowrank_rank: usize,
    /// Multi-token-prediction layers the checkpoint carries beside its decoder layers
    /// (`num_nextn_predict_layers`, Qwen's `mtp_num_hidden_layers`, MiniMax's
    /// `num_mtp_modules`; 0 without). Read by the whole-GPU plan only, where an engine
    /// loads them to speculate with (`config/mtp.rs`).
    pub mtp_layers: usize,
    /// The vision and audio towers a multimodal file carries beside its text model, with
    /// their projectors (`config/towers.rs`). They size no buffer of the arena, which is the
    /// text model's: the whole-GPU plan loads their weights unless asked for the text model
    /// alone.
    pub towers: Towers,
    /// LoRA: the widest adapter rank served (0: no adapters).
    pub adapter_max_rank: usize,

    /// The levers the arena is sized under.
    pub levers: Levers,
    /// The rank of a parallel layout this config is one shard of (`ModelConfig::shard`);
    /// `None`: the whole model on one GPU.
    pub shard: Option<crate::parallel::RankShard>,
}

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

    /// Gated DeltaNet layers: what the seeds call `num_ssm_layers` (the row-wise FP8 slab
    /// `ssm_rowwise_w_bf16` has one pair of weights per such layer). The `ssm_*` buffers are
    /// shared by GDN and Mamba-2 layers; Mamba-2 layers are [`Self::num_mamba_layers`].
    pub const fn num_gdn_layers(&self) -> usize {
        self.count(LayerKind::GatedDeltaNet)
    }

    /// Mamba-2 layers.
    pub const fn num_mamba_layers(&self) -> usize {
        self.count(LayerKind::Mamba2)
    }

    /// Short-convolution layers (LFM2), beyond the seeds.
    pub const fn num_short_conv_layers(&self) -> usize {
        self.count(LayerKind::ShortConv)
    }

    /// This config (or this rank's stage) has short-convolution layers of some width: what
    /// opens the `short_conv_*` buffers.
    pub const fn has_short_conv(&self) -> bool {
        self.num_short_conv_layers() > 0 && self.short_conv_dim > 0
    }

    /// Lightning-attention layers (MiniMax), beyond the seeds.
    pub const fn num_lightning_layers(&self) -> usize {
        self.count(LayerKind::Lightning)
    }

    /// This config (or this rank's stage) has lightning layers: what opens the `lightning_*`
    /// buffers.
    pub const fn has_lightning(&self) -> bool {
        self.num_lightning_layers() > 0 && self.lightning_heads > 0
    }

    /// Lightning attention's inner width `heads · head_dim`: q, k, v, the gate and the output
    /// are each this wide per token (0 without lightning layers).
    pub const fn lightning_width(&self) -> usize {
        if self.has_lightning() {
            self.lightning_heads * self.lightning_head_dim
        } else {
            0
        }
    }

    /// Per-layer input embeddings (Gemma 4 E-models), beyond the seeds: what opens the
    /// `per_layer_*` buffers.
    pub const fn has_per_layer_inputs(&self) -> bool {
        self.per_layer_input_dim > 0
    }

    /// This config runs the embedding prologue: the whole model, or the first pipeline
    /// stage's rank (the stages after it receive the hidden states and per-layer inputs).
    pub const fn runs_embedding(&self) -> bool {
        match &self.shard {
            Some(shard) => shard.layers.start == 0,
            None => true,
        }
    }

    /// Kimi-delta-attention layers (Kimi-Linear), beyond the seeds.
    pub const fn num_kda_layers(&self) -> usize {
        self.count(LayerKind::Kda)
    }

    /// This config (or this rank's stage) has KDA layers: what opens the `kda_*` buffers.
    pub const fn has_kda(&self) -> bool {
        self.num_kda_layers() > 0 && self.kda_heads > 0
    }

    /// KDA's `heads · head_dim`: q, k and v are each this wide, as are the per-channel decay,
    /// the output gate and the output (0 without KDA layers).
    pub const fn kda_width(&self) -> usize {
        if self.has_kda() {
            self.kda_heads * self.kda_head_dim
        } else {
            0
        }
    }

    /// The short convolution's `in_proj` output per token, B | C | x: `3 · short_conv_dim`
    /// (0 without short-conv layers).
    pub const fn short_conv_in_width(&self) -> usize {
        if self.has_short_conv() {
            3 * self.short_conv_dim
        } else {
            0
        }
    }

    // ---- MoE ----

    pub const fn is_moe(&self) -> bool {
        self.num_experts > 0
    }

    /// Columns the router scores: routed plus zero experts (0 without experts).
    pub const fn router_width(&self) -> usize {
        if self.is_moe() {
            self.num_experts + self.zero_expert_num
        } else {
            0
        }
    }

    /// Width of the FP32 router input (`hidden` for a MoE model, else 0).
    pub const fn router_input_width(&self) -> usize {
        if self.is_moe() {
            self.hidden_size
        } else {
            0
        }
    }

    /// The routed experts this GPU holds: all of them, or `num_experts / ep` on a rank of
    /// an expert-parallel layout. The router still scores all `num_experts`.
    pub const fn local_experts(&self) -> usize {
        match &self.shard {
            Some(shard) => shard.local_experts,
            None => self.num_experts,
        }
    }

    /// Rows of the expert buffers per token: `top_k` for a MoE model, 1 for a dense one. On
    /// an expert-parallel rank, at most its local experts: a token's `top_k` experts are
    /// distinct, so no more than `min(top_k, local experts)` of them are on one rank.
    pub const fn expert_fanout(&self) -> usize {
        if self.is_moe() {
            min(
                max(self.num_experts_per_tok, 1),
                max(self.local_experts(), 1),
            )
        } else {
            1
        }
    }

    /// Width of the expert gate/up outputs. Dense: `intermediate_size`. MoE: the widest of
    /// a routed expert, the shared expert(s), and a first dense layer spread over `top_k`
    /// rows per token, so one buffer of `M · top_k` rows serves every FFN layer.
    pub const fn expert_width(&self) -> usize {
        if !self.is_moe() {
            return self.intermediate_size;
        }
        let shared = self.shared_expert_intermediate_size;
        let dense = if self.moe_dense_layers > 0 {
            self.intermediate_size.div_ceil(self.expert_fanout())
        } else {
            0
        };
        max(max(self.moe_intermediate_size, shared), dense)
    }

    /// The widest gate (or up) projection output a decode-band GEMM writes per token row: the
    /// dense FFN width, a routed or shared expert's width, and in a MoE model with dense layers
    /// their full `intermediate_size` (which [`Self::expert_width`] spreads over `top_k` rows;
    /// a split-K partial has one row per token, so it cannot be spread).
    pub const fn widest_ffn_n(&self) -> usize {
        if !self.is_moe() {
            return self.intermediate_size;
        }
        let dense = if self.moe_dense_layers > 0 {
            self.intermediate_size
        } else {
            0
        };
        max(
            max(
                self.moe_intermediate_size,
                self.shared_expert_intermediate_size,
            ),
            dense,
        )
    }

    /// A dense-FFN model: the `ffn_*` buffers exist.
    pub const fn has_dense_ffn(&self) -> bool {
        !self.is_moe() && self.intermediate_size > 0
    }

    /// K of the dense-FFN activation quantization: `max(hidden, intermediate)`.
    pub const fn ffn_k(&self) -> usize {
        max(self.hidden_size, self.intermediate_size)
    }

    // ---- Gated DeltaNet ----

    pub const fn has_gdn(&self) -> bool {
        self.num_gdn_layers() > 0 && self.linear_num_value_heads > 0
    }

    /// `linear_num_key_heads · linear_key_head_dim` (0 without GDN layers, as the
    /// `mamba_*` widths are 0 without Mamba-2 layers).
    pub const fn gdn_key_dim(&self) -> usize {
        if self.has_gdn() {
            self.linear_num_key_heads * self.linear_key_head_dim
        } else {
            0
        }
    }

    /// `linear_num_value_heads · linear_value_head_dim` (0 without GDN layers).
    pub const fn gdn_value_dim(&self) -> usize {
        if self.has_gdn() {
            self.linear_num_value_heads * self.linear_value_head_dim
        } else {
            0
        }
    }

    /// `2·Hk·Dk + 2·Hv·Dv`: the width of `in_proj_qkvz` (0 without GDN layers).
    pub const fn ssm_qkvz_size(&self) -> usize {
        2 * self.gdn_key_dim() + 2 * self.gdn_value_dim()
    }

    /// Channels of the GDN causal conv: q, k and v (0 without GDN layers).
    pub const fn gdn_conv_dim(&self) -> usize {
        2 * self.gdn_key_dim() + self.gdn_value_dim()
    }

    /// The FLA chunked-prefill kernels run only at key and value head dims of 128.
    pub const fn gdn_fla_supported(&self) -> bool {
        self.has_gdn() && self.linear_key_head_dim == 128 && self.linear_value_head_dim == 128
    }

    // ---- Mamba-2 ----

    pub const fn has_mamba(&self) -> bool {
        self.num_mamba_layers() > 0 && self.mamba_num_heads > 0 && self.ssm_state_size > 0
    }

    /// Mamba-2 `d_inner = heads · head_dim` (0 without Mamba-2 layers): what
    /// `NemotronHMamba2Mixer` sizes its projections with. `Mamba2Mixer` uses `expand ·
    /// hidden`, which `Mamba2Config` requires to be the same number (checked at load).
    pub const fn mamba_d_inner(&self) -> usize {
        if self.has_mamba() {
            self.mamba_num_heads * self.mamba_head_dim
        } else {
            0
        }
    }

    /// Mamba-2 `in_proj` width: z, x, B, C and dt.
    pub const fn mamba_in_proj_width(&self) -> usize {
        if !self.has_mamba() {
            return 0;
        }
        2 * self.mamba_d_inner()
            + 2 * self.mamba_n_groups * self.ssm_state_size
            + self.mamba_num_heads
    }

    /// Channels of the Mamba-2 causal conv: x, B and C.
    pub const fn mamba_conv_dim(&self) -> usize {
        if !self.has_mamba() {
            return 0;
        }
        self.mamba_d_inner() + 2 * self.mamba_n_groups * self.ssm_state_size
    }

    /// Mamba-2 SSD chunk length.
    pub const fn mamba_chunk(&self) -> usize {
        max(self.mamba_chunk_size, 1)
    }

    // ---- shared by several buffers ----

    /// Width of the SSM input projection output, GDN or Mamba-2.
    pub const fn ssm_in_width(&self) -> usize {
        max(self.ssm_qkvz_size(), self.mamba_in_proj_width())
    }

    /// Per-token SSM gate columns: GDN's g and beta per value head, or Mamba-2's dt per head.
    pub const fn ssm_gate_width(&self) -> usize {
        let gdn = if self.has_gdn() {
            2 * self.linear_num_value_heads
        } else {
            0
        };
        let mamba = if self.has_mamba() {
            self.mamba_num_heads
        } else {
            0
        };
        max(gdn, mamba)
    }

    /// Channels of the SSM causal conv, GDN or Mamba-2.
    pub const fn ssm_conv_dim(&self) -> usize {
        max(self.gdn_conv_dim(), self.mamba_conv_dim())
    }

    /// The widest K of the FP8 prefill projections: hidden, `q_heads · head_dim`, Mamba-2
    /// `d_inner` and the GDN value dim (the seeds' list), and the O projection's input
    /// `q_heads · v_head_dim`, which under MLA can exceed `q_heads · head_dim`; beyond the
    /// seeds, the output projections' inputs of lightning attention and Kimi delta attention
    /// (0 for every model without them).
    pub const fn widest_k(&self) -> usize {
        let gdn = self.gdn_value_dim();
        max(
            max(
                max(
                    max(self.hidden_size, self.num_attention_heads * self.head_dim()),
                    max(self.attn_output_width(), self.mamba_d_inner()),
                ),
                gdn,
            ),
            max(self.lightning_width(), self.kda_width()),
        )
    }

    /// The widest output a LoRA adapter targets: hidden, intermediate, the q projection.
    pub const fn lora_widest_n(&self) -> usize {
        max(
            max(self.hidden_size, self.intermediate_size),
            self.q_proj_width(),
        )
    }

    // ---- synthetic features ----

    pub const fn o_latent_width(&self) -> usize {
        self.o_groups * self.o_lora_rank
    }

    pub const fn has_indexer(&self) -> bool {
        self.index_n_heads > 0 && self.index_head_dim > 0 && self.index_topk > 0
    }

    /// The quantized paths' FP8 / NVFP4 / int8 activation scratch is written: always, as the
    /// seeds size it, unless the `scratch_by_format` lever is on and the checkpoint is 16-bit
    /// (`quantization_config` absent), whose projections read BF16 activations directly.
    /// Gates `ffn_act_a`, `ffn_act_scale(_kmajor)`, `fp8_act`, `fp8_act_scale(_kmajor)`,
    /// `moe_fp8_scratch`.
    /// The quantized-path levers (`fp8_rowwise`, `gguf_native_q2`, `gguf_native_q2_mmq`) run
    /// such paths whatever the file says, and keep the scratch open.
    pub const fn fp8_activation_scratch(&self) -> bool {
        let l = &self.levers;
        let quantized_path = l.fp8_rowwise || l.gguf_native_q2 || l.gguf_native_q2_mmq;
        !(l.scratch_by_format && self.weight_formats.is_16_bit()) || quantized_path
    }

    /// The Q4_K MMQ path's `q8_1` activation scratch (`ffn_act_q8`) is written: always, as
    /// the seeds size it, unless the `scratch_by_format` lever is on (a GGUF format, which no
    /// `config.json` names) and no GGUF lever runs one.
    pub const fn q8_mmq_scratch(&self) -> bool {
        let l = &self.levers;
        !l.scratch_by_format || l.gguf_native_q2 || l.gguf_native_q2_mmq
    }

    /// The width the routed experts read and write: `moe_latent_size` where the model runs
    /// them in a latent space (Nemotron-3's `fc1_latent_proj` / `fc2_latent_proj`,
    /// `NemotronHMoE`), else `hidden_size`.
    pub const fn expert_io_width(&self) -> usize {
        if self.moe_latent_size > 0 {
            self.moe_latent_size
        } else {
            self.hidden_size
        }
    }

    /// MLA layers that build the indexer, and keep its keys ([`Self::indexer_layers`]).
    pub const fn num_indexer_layers(&self) -> usize {
        let list: &[bool] = match &self.indexer_layers {
            Cow::Borrowed(list) => list,
            Cow::Owned(list) => list.as_slice(),
        };
        let (mut n, mut i) = (0, 0);
        while i < list.len() {
            n += list[i] as usize;
            i += 1;
        }
        n
    }

    /// The indexer's compression ratio (1 when absent).
    pub const fn index_ratio(&self) -> usize {
        max(self.index_compress_ratio, 1)
    }

    /// Position streams: three under MRoPE.
    pub const fn position_streams(&self) -> usize {
        if self.mrope {
            3
        } else {
            1
        }
    }

    /// Columns of the logits buffer: the vocabulary, or 0 on a pipeline stage without the
    /// LM head (every stage but the last).
    pub const fn lm_head_vocab(&self) -> usize {
        match &self.shard {
            Some(shard) if !shard.holds_lm_head => 0,
            _ => self.vocab_size,
        }
    }

    /// The context length the config allows.
    pub const fn max_context(&self) -> usize {
        self.max_position_embeddings
    }
}

/// `max` for the `const fn` methods here and in `sizing` (`Ord::max` is not `const`).
pub(crate) const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

/// `min` for the `const fn` methods.
const fn min(a: usize, b: usize) -> usize {
    if a < b {
        a
    } else {
        b
    }
}
