//! The sequence-state cache: what every recurrent mixer keeps per sequence between steps,
//! declared like the activation arena, one annotated field per state, each repeated once per
//! layer of its kind (`per_layer`) and sized by the number of sequence slots
//! (`max_batch_size`).
//!
//! Shapes follow vLLM's `MambaStateShapeCalculator` and dtypes its `MambaStateDtypeCalculator`
//! (`vllm/model_executor/layers/mamba/mamba_utils.py`, vllm-project/vllm at `02d71083`), in its
//! default conv layout `SD` (`(state_len, dim)`, the channels contiguous), with no speculative
//! slots (`num_spec = 0`). Where transformers' caches differ, vLLM is followed, since this is
//! an engine's cache: transformers keeps the conv's whole kernel (`K` columns:
//! `cache_utils.py`, `LinearAttentionLayer.lazy_initialization`), vLLM the `K - 1` a causal conv
//! reads back (the oldest column is never read again).
//!
//! A rank's cache is this one sized from its config (`ModelConfig::shard`): heads and channels
//! split by tp as vLLM's calculators `divide` them, layers those of its pipeline stage.

use crate::config::{ModelConfig, StateDtype};
use arena_runtime::dtype::bf16;
use arena_runtime::{Arena, DevicePtr};

/// Every recurrent state of one model, for `max_batch_size` sequence slots. A model without
/// recurrent layers (or a pipeline stage without any) has every buffer 0 bytes and NULL.
///
/// The recurrent (temporal) state of GDN and Mamba-2 layers is kept in `recurrent_dtype`:
/// the file's as the reference engine reads it, [`ModelConfig::recurrent_state_dtype`]
/// (vLLM's `mamba_ssm_cache_dtype`, which Nemotron-H and Qwen3.5 files set to `float32`),
/// or an engine's own choice. Conv states and lightning-attention states are in the model's
/// dtype (`mamba_cache_dtype` `"auto"`), KDA's recurrent state always in FP32
/// (`kda_state_dtype`).
///
/// ```
/// use arena_spec::{models, StateCacheSizes};
///
/// let config = models::find("nemotron-h-56b-base-8k").unwrap().config()?;
/// // The file has no `mamba_ssm_cache_dtype`: vLLM's NemotronH default, FP32.
/// let dtype = config.recurrent_state_dtype.dtype;
/// let sizes = StateCacheSizes::from_config(&config, 64, dtype);
/// assert!(sizes.mamba_ssm_f32 > 0 && sizes.mamba_ssm_bf16 == 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Arena, Debug, Clone, Copy)]
#[arena(
    sizes = StateCacheSizes,
    inputs_struct(StateCacheInputs, derive(serde::Serialize)),
    inputs(config: &ModelConfig, max_batch_size: usize, recurrent_dtype: StateDtype),
    docs(
        sizes = "Byte size of each sequence state, for `max_batch_size` slots.",
        from_config = "Every state's size, in bytes: per layer of its kind, per slot.",
        total_bytes = "The sum of the states: what the engine reserves for its sequence slots."
    )
)]
pub struct StateCache {
    /// Gated DeltaNet's conv state: the last `linear_conv_kernel_dim - 1` inputs of the conv's
    /// `2·Hk·Dk + Hv·Dv` channels, `[slots, K - 1, conv channels]` BF16 a GDN layer
    /// (`gated_delta_net_state_shape`: `conv_state_shape`).
    #[buffer(
        per_layer = config.num_gdn_layers(),
        shape = [max_batch_size, config.linear_conv_kernel_dim - 1, config.gdn_conv_dim()],
        gate = config.has_gdn()
    )]
    pub gdn_conv: DevicePtr<bf16>,
    /// Gated DeltaNet's recurrent state, `[slots, Hv, Dv, Dk]` FP32 a GDN layer
    /// (`gated_delta_net_state_shape`: `temporal_state_shape`), when `recurrent_dtype` is FP32.
    #[buffer(
        per_layer = config.num_gdn_layers(),
        shape = [max_batch_size, config.linear_num_value_heads, config.linear_value_head_dim, config.linear_key_head_dim],
        gate = config.has_gdn() && recurrent_dtype.is_f32()
    )]
    pub gdn_recurrent_f32: DevicePtr<f32>,
    /// The same in the model's dtype (BF16), when `recurrent_dtype` is not FP32.
    #[buffer(
        per_layer = config.num_gdn_layers(),
        shape = [max_batch_size, config.linear_num_value_heads, config.linear_value_head_dim, config.linear_key_head_dim],
        gate = config.has_gdn() && !recurrent_dtype.is_f32()
    )]
    pub gdn_recurrent_bf16: DevicePtr<bf16>,
    /// Mamba-2's conv state: the last `conv_kernel - 1` inputs of its `d_inner + 2·g·N`
    /// channels (x, B, C), `[slots, K - 1, conv channels]` BF16 a Mamba-2 layer
    /// (`mamba2_state_shape`: `conv_state_shape`; a rank's groups as `ModelConfig::shard`
    /// splits them, or one group replicated, where vLLM's `extra_groups_for_head_shards` agrees;
    /// vLLM also runs `1 < n_groups < tp` by replicating groups, which `shard` refuses).
    #[buffer(
        per_layer = config.num_mamba_layers(),
        shape = [max_batch_size, config.mamba_conv_kernel - 1, config.mamba_conv_dim()],
        gate = config.has_mamba()
    )]
    pub mamba_conv: DevicePtr<bf16>,
    /// Mamba-2's SSM state, `[slots, heads, head_dim, state]` FP32 a Mamba-2 layer
    /// (`mamba2_state_shape`: `temporal_state_shape`), when `recurrent_dtype` is FP32.
    #[buffer(
        per_layer = config.num_mamba_layers(),
        shape = [max_batch_size, config.mamba_num_heads, config.mamba_head_dim, config.ssm_state_size],
        gate = config.has_mamba() && recurrent_dtype.is_f32()
    )]
    pub mamba_ssm_f32: DevicePtr<f32>,
    /// The same in the model's dtype (BF16), when `recurrent_dtype` is not FP32.
    #[buffer(
        per_layer = config.num_mamba_layers(),
        shape = [max_batch_size, config.mamba_num_heads, config.mamba_head_dim, config.ssm_state_size],
        gate = config.has_mamba() && !recurrent_dtype.is_f32()
    )]
    pub mamba_ssm_bf16: DevicePtr<bf16>,
    /// LFM2's short-conv state: the last `conv_L_cache - 1` inputs of its channels,
    /// `[slots, K - 1, channels]` BF16 a short-conv layer (`short_conv_state_shape`).
    #[buffer(
        per_layer = config.num_short_conv_layers(),
        shape = [max_batch_size, config.short_conv_kernel - 1, config.short_conv_dim],
        gate = config.has_short_conv()
    )]
    pub short_conv: DevicePtr<bf16>,
    /// Lightning attention's state, one `[head_dim, head_dim]` matrix a head,
    /// `[slots, heads, head_dim, head_dim]` BF16 a lightning layer
    /// (`linear_attention_state_shape`, `linear_attention_state_dtype`).
    #[buffer(
        per_layer = config.num_lightning_layers(),
        shape = [max_batch_size, config.lightning_heads, config.lightning_head_dim, config.lightning_head_dim],
        gate = config.has_lightning()
    )]
    pub lightning: DevicePtr<bf16>,
    /// Kimi delta attention's conv state: the last `short_conv_kernel_size - 1` inputs of q, k
    /// and v, `[slots, K - 1, 3 · heads · head_dim]` BF16 a KDA layer (`kda_state_shape`:
    /// `conv_dim = proj_size + 2 · proj_k_size`).
    #[buffer(
        per_layer = config.num_kda_layers(),
        shape = [max_batch_size, config.kda_conv_kernel - 1, 3 * config.kda_width()],
        gate = config.has_kda()
    )]
    pub kda_conv: DevicePtr<bf16>,
    /// Kimi delta attention's recurrent state, `[slots, heads, head_dim, head_dim]` FP32 a KDA
    /// layer (`kda_state_shape`; `kda_state_dtype` keeps it FP32 whatever the cache dtype).
    #[buffer(
        per_layer = config.num_kda_layers(),
        shape = [max_batch_size, config.kda_heads, config.kda_head_dim, config.kda_head_dim],
        gate = config.has_kda()
    )]
    pub kda_recurrent: DevicePtr<f32>,
    /// DeepSeek-V4's CSA compressor state: the kv and score rows of the last `2 · ratio`
    /// tokens (overlapping windows, `coff = 2`), `[slots, 2 · ratio, 2 · 2 · head_dim]` FP32 a
    /// CSA layer (vLLM v0.34 `CompressorStateCache`, `deepseek_v4/compressor.py`: 139–192 and
    /// 297–298: `state_dim = 2 · coff · head_dim`, a window of `coff · compress_ratio` tokens,
    /// FP32). vLLM keeps it in its KV pool as a sliding-window spec; this plan keeps the window
    /// a sequence slot, as the other per-sequence states (chosen here).
    #[buffer(
        per_layer = config.num_csa_kv_layers(),
        shape = [max_batch_size, 2 * config.index_ratio(), 4 * config.head_dim()],
        gate = config.num_csa_kv_layers() > 0
    )]
    pub csa_compressor: DevicePtr<f32>,
    /// The CSA indexer's own compressor state, `[slots, 2 · ratio, 2 · 2 · index_head_dim]`
    /// FP32 a CSA layer (the indexer's `DeepseekCompressor` at `index_head_dim`).
    #[buffer(
        per_layer = config.num_csa_kv_layers(),
        shape = [max_batch_size, 2 * config.index_ratio(), 4 * config.index_head_dim],
        gate = config.num_csa_kv_layers() > 0 && config.has_indexer()
    )]
    pub csa_indexer_compressor: DevicePtr<f32>,
    /// DeepSeek-V4's HCA compressor state: the last `ratio` tokens' kv and score rows
    /// (disjoint windows, `coff = 1`), `[slots, ratio, 2 · head_dim]` FP32 an HCA layer.
    #[buffer(
        per_layer = config.num_hca_kv_layers(),
        shape = [max_batch_size, config.hca_compress_ratio, 2 * config.head_dim()],
        gate = config.num_hca_kv_layers() > 0
    )]
    pub hca_compressor: DevicePtr<f32>,
}
