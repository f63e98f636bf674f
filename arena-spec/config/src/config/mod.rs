//! `ModelConfig`: the shapes the arena is sized from, loaded from a Hugging Face
//! `config.json`. Every derived quantity (head_dim, layer counts, widths) is a method,
//! computed in one place: `attention_widths.rs` (heads, projections, layer counts, the KV
//! pool's layer kinds) and `mixer_widths.rs` (the other mixers, MoE, FFN and shared widths).
//!
//! The rest of the folder, in the order a file goes through it: `json.rs` reads and
//! parses the text, `load.rs` turns the JSON into a `ModelConfig` through the
//! family's row of rules (`family.rs`, its table in `family/table.rs` and `family/table/`), reading keys through
//! `keys.rs` / `fields.rs`, the layer layout from `layers.rs`, the MoE shape from `moe.rs` and
//! the Mamba-2 sizes from `mamba.rs`; `error.rs` holds what it can fail with. `levers.rs`
//! holds the engine's levers, `shard.rs` one GPU's config of a parallel layout,
//! `const_item.rs` writes a config as a `const` item.

mod aliases;
mod attention_widths;
mod blocks;
mod closest;
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
mod layout_keys;
pub mod levers;
mod linear_mixers;
mod load;
mod mamba;
mod mixer_widths;
mod moe;
mod mtp;
mod quant_recipe;
mod quantization;
mod resolve;
mod shard;
mod state_dtype;
mod towers;
mod weight_bytes;

pub use blocks::Block;
pub use closest::{closest_family, Closest, ClosestBy, MIN_PREFIX};
pub use const_item::const_name;
pub use error::{ConfigError, MAX_CONFIG_BYTES, MAX_DIM, MAX_EXTENT};
pub use family::{Family, FamilyRules};
use levers::Levers;
#[doc(hidden)]
pub use load::keys_asked;
pub use quantization::{FormatSource, Mxfp4Backend, WeightFormat, WeightFormats, WeightPart};
pub use resolve::{
    architecture, Architecture, Resolution, TextModel, ARCHITECTURES, TEXT_MODEL_KEYS,
};
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
    /// The file's `mlp_bias` (absent: false), for families whose MLP reads it (Llama's
    /// `LlamaMLP`: `bias=config.mlp_bias`). Read by the weights only (`crate::weights`).
    pub mlp_bias: bool,
    /// The file's `use_qk_norm` (absent: false), for families where it switches the q and k
    /// norms. Read by the weights only (`crate::weights`).
    pub use_qk_norm: bool,
    /// The file's `qk_norm_type` is `"olmo"`: q and k are normed across the whole projection
    /// rather than a head (Molmo2's `Molmo2Attention`); false for every other value and
    /// family. Read by the weights only (`crate::weights`).
    pub qk_norm_whole: bool,
    /// Rows the input embedding holds beyond `vocab_size` (Molmo2's `additional_vocab_size`:
    /// tokens the model reads but never predicts, so the output head keeps `vocab_size`);
    /// 0 for every other family. Read by the weights only (`crate::weights`).
    pub embedding_extra_rows: usize,
    /// The file's `use_post_norm` (absent: the row's default, else false), for families where
    /// it adds a norm after the attention and one after the MLP (HyperCLOVA X's `post_norm1`
    /// and `post_norm2`). Read by the weights only (`crate::weights`).
    pub post_norms: bool,
    /// The norms a layer holds where the file's switches decide it (Falcon's one or two
    /// LayerNorms: `FalconDecoderLayer`); `None`: the family's rule. Read by the weights only
    /// (`crate::weights`).
    pub layer_norms: Option<usize>,

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
    /// How the file was read: its family found by `model_type`, by its class, or as a
    /// wrapper's text model, and what of the file is not sized (`config/resolve.rs`).
    pub text_model: TextModel,
    /// LoRA: the widest adapter rank served (0: no adapters).
    pub adapter_max_rank: usize,

    /// The levers the arena is sized under.
    pub levers: Levers,
    /// The rank of a parallel layout this config is one shard of (`ModelConfig::shard`);
    /// `None`: the whole model on one GPU.
    pub shard: Option<crate::parallel::RankShard>,
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
pub(crate) const fn min(a: usize, b: usize) -> usize {
    if a < b {
        a
    } else {
        b
    }
}
