//! The answers a family's row gives, one type a question: how its layers are laid out, its
//! MoE, Mamba-2 and linear mixers' keys, its head size, M-RoPE, KV layers, per-layer widths and
//! what it refuses. [`super::FamilyRules`] holds one of each.

/// A token mixer beyond the seeds' kinds, and the keys its widths come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinearMixer {
    /// LFM2's gated short convolution (`lfm2/modeling_lfm2.py`: `Lfm2ShortConv`): `in_proj`
    /// hidden → 3 · hidden (B, C, x), B · x through a depthwise causal conv of `kernel` taps
    /// over the hidden channels, gated by C, then `out_proj`. Its layers are the `"conv"`
    /// entries of `layer_types`, else the layers not in `full_attn_idxs` (0-based), as
    /// `Lfm2Config.__post_init__` builds the list.
    ShortConv {
        /// The conv's taps (`conv_L_cache`): sizes the conv state of the sequence-state
        /// cache, no activation buffer.
        kernel: &'static str,
    },
    /// MiniMax's lightning attention (`minimax/modeling_minimax.py`:
    /// `MiniMaxLightningAttention`; the vendor's `MiniMaxM1LightningAttention`): `qkv_proj`
    /// hidden → 3 · heads · head_dim (SiLU), a linear attention with a per-head `[head_dim,
    /// head_dim]` decayed state, an RMSNorm over heads · head_dim, a sigmoid gate from
    /// `output_gate` (hidden → heads · head_dim), `out_proj`. Its heads and head size are the
    /// softmax attention's (`num_attention_heads`, `head_dim` or hidden / heads).
    Lightning,
    /// Kimi delta attention (`kimi_linear/modeling_kimi_linear.py`:
    /// `KimiLinearDeltaAttention`): `q_proj`, `k_proj`, `v_proj` hidden → heads · head_dim
    /// each, one depthwise causal conv (SiLU) over the three, a per-channel forget gate
    /// through a low-rank pair (`f_a_proj` hidden → head_dim, `f_b_proj` back up), β per head
    /// (`b_proj`), a low-rank output gate (`g_a_proj`, `g_b_proj`), a gated per-head RMSNorm
    /// and `o_proj`. Each width is the `nested` object's key where present, else the flat key
    /// (`KimiLinearConfig.__post_init__` reads the checkpoint's `linear_attn_config` over its
    /// own fields).
    Kda {
        /// The object the checkpoint keeps them (and its layer lists) in, and the prefix
        /// errors name its fields with: (`linear_attn_config`, `linear_attn_config.`).
        nested: (&'static str, &'static str),
        /// Heads: (nested key, flat key).
        heads: (&'static str, &'static str),
        /// Head size: (nested key, flat key).
        head_dim: (&'static str, &'static str),
        /// The short conv's taps: (nested key, flat key).
        conv_kernel: (&'static str, &'static str),
    },
}

/// A dense FFN width derived the LLaMA way from the width key (`Lfm2MLP`): when `switch` is
/// true (its default), `int(2 · width / 3)`, then, unless `multiplier` is null,
/// `int(multiplier · that)` rounded up to a multiple of `multiple_of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FfnAutoAdjust {
    /// A key that, when present, replaces the dense width key (`block_ff_dim`, which
    /// `Lfm2Config.__post_init__` pops into `intermediate_size`).
    pub width_override: &'static str,
    /// The switch (`block_auto_adjust_ff_dim`) and its class default.
    pub switch: (&'static str, bool),
    /// The multiplier (`block_ffn_dim_multiplier`, a float); absent, it is 1.0 (the
    /// identity, and `Lfm2Config`'s default), and an explicit null skips the rounding too.
    pub multiplier: &'static str,
    /// The rounding (`block_multiple_of`; class default 256).
    pub multiple_of: (&'static str, usize),
}

/// Attention widths a family sets per layer or beside q, k and v; the arena takes the widest
/// layer of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerWidths {
    /// The value head size, apart from the q/k head size (MiMo-V2-Flash's `v_head_dim`: v and
    /// the O projection's input per head).
    pub value_head_dim: Option<&'static str>,
    /// Sliding-window layers hold this many times `num_key_value_heads` (MiMo-V2-Flash: 2,
    /// hard-coded in `MiMoV2FlashAttention`); where the file has no `layer_types`, every layer
    /// but the first and each sixth slides (its configuration class's rule). 1: no difference.
    pub sliding_kv_factor: usize,
    /// A per-layer list of q head counts (Laguna's `num_attention_heads_per_layer`).
    pub heads_per_layer: Option<&'static str>,
    /// The key of an output-gate projection of the attention input (Laguna's `gating`:
    /// `true` or `"per-head"` one value a head, else one a head element; absent: `true`).
    pub gate: Option<&'static str>,
    /// Full-attention layers with a head size and kv heads of their own (Gemma 4).
    pub global: Option<GlobalLayers>,
    /// The dense FFN is twice `intermediate_size` in the layers that reuse an earlier
    /// layer's keys and values, where a switch is on (Gemma 4's `use_double_wide_mlp` with
    /// `num_kv_shared_layers` above 0, `Gemma4TextMLP`): (switch key, shared-layer count key).
    pub double_wide_ffn: Option<(&'static str, &'static str)>,
}

/// Which attention layers keep keys and values for a window only, or none of their own
/// (`ModelConfig::kv_layers`). A file that lists `layer_types` says which layers slide
/// (`"sliding_attention"`, by `sliding_window` tokens) or attend within chunks
/// (`"chunked_attention"`); these rules cover files that do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvLayers {
    /// Where the file has no `layer_types`: every layer slides but each `n`-th, `n` the key's
    /// value or its class default (Gemma 3's `sliding_window_pattern`, 6:
    /// `Gemma3TextConfig.__post_init__`); an empty key: the default, which no key changes.
    pub window_pattern: Option<(&'static str, usize)>,
    /// With `window_pattern`: where in each period the full layer sits.
    pub full_at: FullAt,
    /// With `window_pattern`: the first `first_k_dense_replace` layers follow this period
    /// (key, class default) and the pattern starts again after them (Cohere 2 MoE's
    /// `prefix_dense_sliding_window_pattern`, `Cohere2MoeConfig.__post_init__`).
    pub dense_prefix_pattern: Option<(&'static str, usize)>,
    /// Where the file has no `layer_types`: every attention layer slides by `sliding_window`
    /// when the file sets one (Mistral, Mixtral, Phi-3: their attention modules pass
    /// `config.sliding_window` on every layer, and vLLM gives every layer a
    /// `SlidingWindowSpec` when a file lists no layer types, `engine/arg_utils.py`: 2288–2294,
    /// v0.33.0).
    pub all_slide: bool,
    /// Where the file has no `layer_types`: a per-layer list whose 1s are the sliding layers,
    /// and the key of their window (MiMo-V2-Flash's `hybrid_layer_pattern` and
    /// `sliding_window_size`, as vLLM's `mimo_v2.py`: 403–436 reads them; transformers'
    /// `MiMoV2FlashConfig` resolves the same list into `layer_types`).
    pub listed_by: Option<(&'static str, &'static str)>,
    /// Chunked local attention (Llama 4): which layers attend within chunks and the chunk.
    pub chunked: Option<ChunkedLayers>,
    /// The key of the count of last layers that read an earlier layer's keys and values and
    /// keep none (Gemma 4's `num_kv_shared_layers`).
    pub shared_count: Option<&'static str>,
}

impl KvLayers {
    /// The file's `layer_types` alone says which layers slide; every attention layer keeps
    /// its own cache.
    pub const AS_LISTED: KvLayers = KvLayers {
        window_pattern: None,
        full_at: FullAt::PeriodEnd,
        dense_prefix_pattern: None,
        all_slide: false,
        listed_by: None,
        chunked: None,
        shared_count: None,
    };
}

/// Where a `window_pattern`'s full layer sits in each period of `n` layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FullAt {
    /// Closing it: layer `i` is full where `(i + 1) % n == 0` (Gemma 3's
    /// `Gemma3TextConfig.__post_init__`).
    PeriodEnd,
    /// Opening it: `i % n == 0` (`GraniteSWAConfig.__post_init__`).
    PeriodStart,
    /// Counted back from the last layer: `(layers - 1 - i) % n == 0` (Muse Glimmer's
    /// `MuseGlimmerTextConfig.__post_init__`).
    FromLast,
    /// Closing it, and the last layer full too (`BeamConfig.__post_init__`).
    PeriodEndAndLast,
    /// The first two layers, the second of each period (`i % n == 1`) and the last
    /// (`FlintConfig.__post_init__`).
    FirstTwoSecondOfPeriodAndLast,
}

impl FullAt {
    /// Whether layer `i` of `n` is full, in periods of `every` layers.
    pub fn is_full(self, i: usize, n: usize, every: usize) -> bool {
        match self {
            FullAt::PeriodEnd => (i + 1).is_multiple_of(every),
            FullAt::PeriodStart => i.is_multiple_of(every),
            FullAt::FromLast => (n - 1 - i).is_multiple_of(every),
            FullAt::PeriodEndAndLast => (i + 1).is_multiple_of(every) || i + 1 == n,
            FullAt::FirstTwoSecondOfPeriodAndLast => i < 2 || i % every == 1 || i + 1 == n,
        }
    }
}

/// Llama 4's chunked local attention: every layer with RoPE attends within chunks of
/// `attention_chunk_size` tokens, each NoPE layer to the whole sequence (transformers'
/// `Llama4TextConfig`: `no_rope_layers`, one a layer, 0 for NoPE, else every
/// `no_rope_layer_interval`-th layer NoPE; vLLM `llama4.py`: 185, 251–252).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkedLayers {
    /// The chunk's key and its class default (`attention_chunk_size`, 8192).
    pub chunk: (&'static str, usize),
    /// The per-layer list (`no_rope_layers`: 0 a full layer).
    pub rope_list: &'static str,
    /// The interval's key and its class default (`no_rope_layer_interval`, 4).
    pub interval: (&'static str, usize),
}

/// The keys of full-attention layers whose widths differ from the sliding ones' (Gemma 4:
/// `Gemma4TextConfig` turns them into per-layer overrides of the full layers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobalLayers {
    /// Their head size (`global_head_dim`, the row's default where absent).
    pub head_dim: &'static str,
    /// Their kv heads, which apply where `k_eq_v` is set (`num_global_key_value_heads`).
    pub kv_heads: &'static str,
    /// Their keys are also their values: no v projection (`attention_k_eq_v`).
    pub k_eq_v: &'static str,
    /// A file's `per_layer_config` (transformers' per-layer overrides, `PreTrainedConfig`'s
    /// `HeterogeneousConfigMixin`) gives the full layers' `head_dim` and `num_key_value_heads`
    /// where it is present, instead of the two keys above, whatever `k_eq_v` says
    /// (`Gemma4UnifiedTextConfig`, which writes one; the keys above are what its
    /// `__post_init__` builds one from where a file has none).
    pub per_layer_config: bool,
}

/// A family whose attention layers each compress their keys by a per-layer ratio
/// (DeepSeek-V4: `DeepseekV4Config`, `modeling_deepseek_v4.py`). Its files list the layer
/// kinds (`layer_types`) or their ratios (`compress_ratios`: 0 a sliding-window layer, the
/// CSA rate a compressed-sparse layer with an indexer, the HCA rate a heavily compressed one),
/// its hash-routed layers (`num_hash_layers`, or `mlp_layer_types`), and its attention has one
/// K=V head whatever `num_key_value_heads` says (`DeepseekV4Attention`:
/// `num_key_value_groups = num_attention_heads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressedAttention {
    /// `compress_rates["compressed_sparse_attention"]`'s default: the ratio of the layers
    /// with a compressor of overlapping windows and an indexer.
    pub csa_rate: usize,
    /// `compress_rates["heavily_compressed_attention"]`'s default: the ratio of the layers
    /// with a compressor of disjoint windows and no indexer.
    pub hca_rate: usize,
}

/// How a family's layers are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mixers {
    /// Every layer is softmax attention (GQA or MLA); `layer_types`, when present, only
    /// says which window each uses.
    Attention,
    /// Gated DeltaNet and attention: `layer_types` or `full_attention_interval`.
    GatedDeltaNetHybrid,
    /// Nemotron-H: `layers_block_type` (alias `layer_types`) or `hybrid_override_pattern`.
    NemotronHybrid,
    /// Every layer a Mamba-2 mixer.
    Mamba2,
    /// Mamba-2 and attention layers, each followed by the FFN (GraniteMoeHybrid):
    /// `layer_types` (its `attribute_map` alias `layers_block_type`), `"linear_attention"` (or
    /// the legacy `"mamba"` its files write) a Mamba-2 layer and any attention type
    /// attention; no list, every layer Mamba-2
    /// (`GraniteMoeHybridConfig.__post_init__`).
    Mamba2Hybrid,
    /// Synthetic: `layer_types` may name attention, linear attention and Mamba-2 layers.
    AnyKind,
    /// DeciLM (Llama-Nemotron NAS): one `block_configs` entry per layer, each with its own
    /// attention (or none) and FFN width (`config/blocks.rs`).
    Blocks,
    /// Short convolution and attention (LFM2): `layer_types` (`"conv"`), else the layers not
    /// in `full_attn_idxs`, else every layer attention (`Lfm2Config.__post_init__`).
    ShortConvHybrid,
    /// Lightning and softmax attention (MiniMax-M1): `attn_type_list`, one entry per layer, 0
    /// a lightning layer and 1 a softmax one (`MiniMaxM1Model.__init__`); required.
    LightningHybrid,
    /// Kimi delta attention and MLA (Kimi-Linear): `layer_types` (`"linear_attention"`), else
    /// `linear_attn_config`'s 1-based `kda_layers` and `full_attn_layers`, else a full layer at
    /// every fourth 0-based index from 4 (`KimiLinearConfig.__post_init__`).
    KdaHybrid,
}

/// Where a MoE family's layers get a dense FFN instead of experts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenseLayers {
    /// Every FFN layer routes (Mixtral, gpt-oss).
    None,
    /// The first `first_k_dense_replace` layers (DeepSeek, Kimi, GLM-4.5).
    FirstK,
    /// The first layers, as many as this key says (LFM2-MoE's `num_dense_layers`).
    FirstKOf(&'static str),
    /// DeepSeek-V3.2, GLM-MoE-DSA: `mlp_layer_types` (`"dense"` / `"sparse"` per layer)
    /// when present, else the first `first_k_dense_replace` layers.
    FirstKOrTypes,
    /// Qwen: layer `i` routes unless it is in `mlp_only_layers` or `(i + 1) %
    /// decoder_sparse_step != 0`; where the file has no `mlp_only_layers`, this list (Qwen's
    /// classes: none; Flint's `[0, 1]`, `FlintConfig.__post_init__`).
    SparseStep(&'static [usize]),
    /// Llama 4: the layers not in `moe_layers` (default: every `interleave_moe_layer_step`-th
    /// layer routes).
    Interleaved,
    /// Nemotron-H: the `mlp` (`-`) layers.
    PerLayer,
    /// MiniMax-M3: `mlp_layer_types` (`"dense"` / `"sparse"` per layer), else `moe_layer_freq`
    /// (0 a dense layer, 1 a routed one), else every layer routes
    /// (`MiniMaxM3VLTextConfig.__post_init__`).
    TypesOrFrequency,
    /// ERNIE 4.5 MoE: layer `i` routes where `(i + 1) % moe_layer_interval == 0` and
    /// `moe_layer_start_index <= i <= moe_layer_end_index` (-1: the last layer;
    /// `Ernie4_5_MoeDecoderLayer`, `Ernie4_5_MoeConfig.__post_init__`).
    StartEndInterval,
}

/// How a MoE family names its experts, their widths and its shared expert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoeKeys {
    /// The routed expert count, first spelling present wins (the `attribute_map` alias
    /// before the field it maps onto, as the reference reads them).
    pub experts: &'static [&'static str],
    /// The configuration class's own field for it, named when the file has none.
    pub experts_field: &'static str,
    /// The routed expert width.
    pub expert_width: &'static str,
    /// The shared expert.
    pub shared: SharedExpert,
    /// Which layers run a dense FFN instead.
    pub dense_layers: DenseLayers,
    /// The experts each token takes, first spelling present wins (`num_experts_per_tok`;
    /// Gemma 4's `top_k_experts`).
    pub top_k: &'static [&'static str],
    /// A switch the experts exist by (Gemma 4's `enable_moe_block`): false or absent, the model
    /// is dense whatever its expert keys say. `None`: the expert count alone decides.
    pub enabled_by: Option<&'static str>,
    /// The key of the width the routed experts run at when it is not the hidden size (latent
    /// MoE: Nemotron-3's `moe_latent_size`, with `fc1_latent_proj` hidden → latent before the
    /// experts and `fc2_latent_proj` back after them). `None`, or the key absent or null: the
    /// experts read and write the hidden size.
    pub latent: Option<&'static str>,
}

/// The shared expert of a MoE layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedExpert {
    None,
    /// One MLP of this key's width (Qwen `shared_expert_intermediate_size`, Nemotron-H
    /// `moe_shared_expert_intermediate_size`).
    Width(&'static str),
    /// One MLP of `n_shared_experts · moe_intermediate_size` (DeepSeek, Kimi, GLM).
    CountTimesExpertWidth,
    /// The same, with the count under the first of these spellings the file has
    /// (Kimi-Linear: `num_shared_experts`, the field `n_shared_experts` maps onto).
    CountOfTimesExpertWidth(&'static [&'static str]),
    /// One MLP as wide as a routed expert (Llama 4's `shared_expert`).
    SameAsExpert,
    /// One MLP as wide as a routed expert where this key is above 0, none otherwise
    /// (MiniMax-M1's `shared_intermediate_size`, a switch: `MiniMaxM1MLP` is
    /// `intermediate_size` wide whatever its value).
    SameAsExpertIf(&'static str),
}

/// The keys of a family's Mamba-2 mixer. The spelling lists are read first present wins,
/// and a default is taken only when the file has none of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MambaKeys {
    /// The head count nh.
    pub heads: &'static str,
    /// The head size p (`d_inner = nh · p`).
    pub head_dim: &'static str,
    /// The state size N.
    pub state: &'static str,
    /// The group count g (fallback 1 where neither file nor row gives one).
    pub n_groups: &'static [&'static str],
    /// The causal conv kernel width (fallback 4).
    pub conv_kernel: &'static [&'static str],
    /// The SSD chunk length (fallback 256).
    pub chunk_size: &'static [&'static str],
    /// `Some(key)`: the mixer builds `d_inner = key · hidden_size` and the configuration
    /// class refuses a file where that is not `nh · p` (Mamba2Config's `expand`); `None`:
    /// `d_inner` is `nh · p` whatever `expand` says (NemotronHMamba2Mixer).
    pub expand: Option<&'static str>,
}

/// Where a family's attention head size comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadDim {
    /// `head_dim` (the file's, else the row's default; an explicit `null` stays absent),
    /// else `hidden_size / num_attention_heads`.
    Key,
    /// The file's `head_dim` is not an attention head size (Mamba-2's is the Mamba head
    /// size) and the family has no attention of its own: none.
    NotAttention,
    /// `head_dim` (the file's, else the row's default, `null` included), with an older
    /// spelling the reference ignores checked against it where the file has both
    /// (Nemotron-H's `attention_head_dim`).
    KeyWithLegacy(&'static str),
}

/// Whether a family's positions carry three streams (multimodal RoPE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mrope {
    /// Always, with or without `mrope_section` (Qwen3.5's rotary embedding always takes
    /// three).
    Always,
    /// Where the file has an `mrope_section` (under `rope_parameters` or `rope_scaling`).
    FromFile,
}

/// A key the reference reads for a feature the arena does not size: a file that gives it a
/// value above 0 is refused, where its scope says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// The key.
    pub key: &'static str,
    /// Where the key changes the model.
    pub scope: RefusalScope,
    /// Why, after "is {value}: "; `{value}` in it stands for the file's value.
    pub reason: &'static str,
}

/// Where a [`Refusal`]'s key changes the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalScope {
    /// A model that routes to experts (a Nemotron-H layout without `moe` layers builds no
    /// experts, whatever the key says).
    RoutedExperts,
    /// Any model of the family: a value above 0, or `true`, refuses the file (the row's default
    /// counts where the file has no value).
    AnyModel,
    /// Any model of the family whose file sets the key `false` (absent: the class's default,
    /// true; OPT's `do_layer_norm_before`).
    AnyModelWhenFalse,
    /// Any model of the family whose file sets the key to a value other than `hidden_size`
    /// (absent or null: the same; OPT's `word_embed_proj_dim`).
    UnlessHidden,
    /// Any model of the family whose file sets the key to a value other than that of the
    /// key named here (absent or null: the same; Step-3.7's `num_sliding_attention_heads`
    /// against `num_attention_heads`).
    UnlessSameAs(&'static str),
    /// Any model of the family whose file has the key at all, whatever its value (null:
    /// absent): a nested config of a feature the arena does not size (MiniMax-M3's
    /// `sparse_attention_config`).
    Present,
}

impl Refusal {
    /// The refusal's reason for the file's value.
    pub(crate) fn reason_for(&self, value: usize) -> String {
        format!(
            "is {value}: {}",
            self.reason.replace("{value}", &value.to_string())
        )
    }
}

/// Where a family's kv head count and norms a layer come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutKeys {
    /// `num_key_value_heads` (absent: the q heads); the norms are the row's
    /// ([`WeightRules::norms_per_layer`](super::WeightRules)).
    Common,
    /// Falcon's switches (`FalconAttention`, 230–241; `FalconDecoderLayer`, 552–565): kv heads
    /// `num_kv_heads` under `new_decoder_architecture`, else one where `multi_query` (class
    /// default true), else the q heads; two LayerNorms a layer where `parallel_attn` is false
    /// or `num_ln_in_parallel_attn` is 2 (its default under `new_decoder_architecture`), else
    /// one.
    Falcon,
}
