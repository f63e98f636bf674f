//! The token mixers' weights beyond attention, by kind: gated DeltaNet
//! (`Qwen3NextGatedDeltaNet`), Mamba-2 (`NemotronHMamba2Mixer`), the short convolution
//! (`Lfm2ShortConv`), lightning attention (`MiniMaxLightningAttention`) and Kimi delta
//! attention (`KimiLinearDeltaAttention`). Layer counts and widths are the config's
//! (`num_gdn_layers`, `gdn_conv_dim`, ...), a rank's as `ModelConfig::shard` splits them.

use super::{WeightFormats, WeightLayers};
use crate::config::ModelConfig;
use arena_runtime::dtype::bf16;
use arena_runtime::{Arena, DevicePtr};

/// The recurrent and convolutional mixers' tensors, one buffer a tensor, every layer's copy
/// back to back; matrices `u8` in the checkpoint's format, the rest (conv kernels, decay
/// logs, norms) 16-bit.
#[derive(Arena, Debug, Clone, Copy)]
#[arena(
    sizes = MixerWeightsSizes,
    inputs(config: &ModelConfig, w: &WeightLayers, formats: &WeightFormats),
    docs(
        sizes = "Byte size of each mixer tensor, every layer's copy together.",
        from_config = "Each mixer tensor's size, in bytes.",
        total_bytes = "The sum: the mixer weights."
    )
)]
pub struct MixerWeights {
    /// GDN's `linear_attn.in_proj_qkvz.weight`: q, k, v and z, `[conv channels + v heads · v
    /// dim, hidden]` (Qwen3.5 splits the same rows over `in_proj_qkv` and `in_proj_z`): the
    /// two parts priced apart, each with its own block scales, as Qwen3.5's checkpoints keep
    /// them (for Qwen3-Next's one tensor, at most a row of scales more).
    #[buffer(
        per_layer = config.num_gdn_layers(),
        shape = [formats.mixers.linear_bytes(config.gdn_conv_dim(), config.hidden_size) + formats.mixers.linear_bytes(config.linear_num_value_heads * config.linear_value_head_dim, config.hidden_size)],
        gate = config.num_gdn_layers() > 0,
        tensor = ["model.layers.{gdn_layer}.linear_attn.in_proj_qkv.weight", "model.layers.{gdn_layer}.linear_attn.in_proj_z.weight"]
    )]
    pub gdn_in_proj_qkvz: DevicePtr<u8>,
    /// `linear_attn.in_proj_ba.weight`, b and a a value head, `[2 · v heads, hidden]`
    /// (Qwen3.5's `in_proj_b` and `in_proj_a`: priced apart, as above).
    #[buffer(
        per_layer = config.num_gdn_layers(),
        shape = [2, formats.mixers.linear_bytes(config.linear_num_value_heads, config.hidden_size)],
        gate = config.num_gdn_layers() > 0,
        tensor = ["model.layers.{gdn_layer}.linear_attn.in_proj_b.weight", "model.layers.{gdn_layer}.linear_attn.in_proj_a.weight"]
    )]
    pub gdn_in_proj_ba: DevicePtr<u8>,
    /// `linear_attn.conv1d.weight`, depthwise over q, k, v, no bias, `[conv channels, 1, kernel]`.
    #[buffer(per_layer = config.num_gdn_layers(), shape = [config.gdn_conv_dim(), 1, config.linear_conv_kernel_dim], gate = config.num_gdn_layers() > 0, tensor = "model.layers.{gdn_layer}.linear_attn.conv1d.weight")]
    pub gdn_conv1d: DevicePtr<bf16>,
    /// `linear_attn.dt_bias` and `A_log`, a value head each, `[2, v heads]`.
    #[buffer(per_layer = config.num_gdn_layers(), shape = [2, config.linear_num_value_heads], gate = config.num_gdn_layers() > 0, tensor = ["model.layers.{gdn_layer}.linear_attn.dt_bias", "model.layers.{gdn_layer}.linear_attn.A_log"])]
    pub gdn_dt_bias_a_log: DevicePtr<bf16>,
    /// `linear_attn.norm.weight`, the gated norm, `[v dim]`.
    #[buffer(per_layer = config.num_gdn_layers(), shape = [config.linear_value_head_dim], gate = config.num_gdn_layers() > 0, tensor = "model.layers.{gdn_layer}.linear_attn.norm.weight")]
    pub gdn_norm: DevicePtr<bf16>,
    /// `linear_attn.out_proj.weight`, `[hidden, v heads · v dim]`.
    #[buffer(
        per_layer = config.num_gdn_layers(),
        shape = [formats.mixers.linear_bytes(config.hidden_size, config.linear_num_value_heads * config.linear_value_head_dim)],
        gate = config.num_gdn_layers() > 0,
        tensor = "model.layers.{gdn_layer}.linear_attn.out_proj.weight"
    )]
    pub gdn_out_proj: DevicePtr<u8>,
    /// Mamba-2's `mixer.in_proj.weight`: z, x, B, C and dt, `[in_proj width, hidden]`.
    #[buffer(
        per_layer = config.num_mamba_layers(),
        shape = [formats.mixers.linear_bytes(config.mamba_in_proj_width(), config.hidden_size)],
        gate = config.num_mamba_layers() > 0
    )]
    pub mamba_in_proj: DevicePtr<u8>,
    /// `mixer.conv1d.weight` over x, B, C, `[conv channels, 1, kernel]`.
    #[buffer(per_layer = config.num_mamba_layers(), shape = [config.mamba_conv_dim(), 1, config.mamba_conv_kernel], gate = config.num_mamba_layers() > 0)]
    pub mamba_conv1d: DevicePtr<bf16>,
    /// `mixer.conv1d.bias`, `[conv channels]`.
    #[buffer(per_layer = config.num_mamba_layers(), shape = [config.mamba_conv_dim()], gate = config.num_mamba_layers() > 0)]
    pub mamba_conv1d_bias: DevicePtr<bf16>,
    /// `mixer.dt_bias`, `A_log` and `D`, a head each, `[3, heads]`.
    #[buffer(per_layer = config.num_mamba_layers(), shape = [3, config.mamba_num_heads], gate = config.num_mamba_layers() > 0)]
    pub mamba_dt_bias_a_log_d: DevicePtr<bf16>,
    /// `mixer.norm.weight`, the gated norm over `d_inner`.
    #[buffer(per_layer = config.num_mamba_layers(), shape = [config.mamba_d_inner()], gate = config.num_mamba_layers() > 0)]
    pub mamba_norm: DevicePtr<bf16>,
    /// `mixer.out_proj.weight`, `[hidden, d_inner]`.
    #[buffer(
        per_layer = config.num_mamba_layers(),
        shape = [formats.mixers.linear_bytes(config.hidden_size, config.mamba_d_inner())],
        gate = config.num_mamba_layers() > 0
    )]
    pub mamba_out_proj: DevicePtr<u8>,
    /// LFM2's `conv.in_proj.weight`, B, C and x, `[3 · channels, hidden]`.
    #[buffer(
        per_layer = config.num_short_conv_layers(),
        shape = [formats.mixers.linear_bytes(3 * config.short_conv_dim, config.hidden_size)],
        gate = config.num_short_conv_layers() > 0
    )]
    pub short_conv_in_proj: DevicePtr<u8>,
    /// `conv.conv.weight`, depthwise, no bias, `[channels, 1, kernel]`.
    #[buffer(per_layer = config.num_short_conv_layers(), shape = [config.short_conv_dim, 1, config.short_conv_kernel], gate = config.num_short_conv_layers() > 0)]
    pub short_conv_conv: DevicePtr<bf16>,
    /// `conv.out_proj.weight`, `[hidden, channels]`.
    #[buffer(
        per_layer = config.num_short_conv_layers(),
        shape = [formats.mixers.linear_bytes(config.hidden_size, config.short_conv_dim)],
        gate = config.num_short_conv_layers() > 0
    )]
    pub short_conv_out_proj: DevicePtr<u8>,
    /// Lightning attention's `self_attn.qkv_proj.weight`, `[3 · heads · head_dim, hidden]`.
    #[buffer(
        per_layer = config.num_lightning_layers(),
        shape = [formats.mixers.linear_bytes(3 * config.lightning_width(), config.hidden_size)],
        gate = config.num_lightning_layers() > 0
    )]
    pub lightning_qkv_proj: DevicePtr<u8>,
    /// `self_attn.output_gate.weight`, `[heads · head_dim, hidden]`.
    #[buffer(
        per_layer = config.num_lightning_layers(),
        shape = [formats.mixers.linear_bytes(config.lightning_width(), config.hidden_size)],
        gate = config.num_lightning_layers() > 0
    )]
    pub lightning_output_gate: DevicePtr<u8>,
    /// `self_attn.out_proj.weight`, `[hidden, heads · head_dim]`.
    #[buffer(
        per_layer = config.num_lightning_layers(),
        shape = [formats.mixers.linear_bytes(config.hidden_size, config.lightning_width())],
        gate = config.num_lightning_layers() > 0
    )]
    pub lightning_out_proj: DevicePtr<u8>,
    /// `self_attn.norm.weight`, over the heads' output.
    #[buffer(per_layer = config.num_lightning_layers(), shape = [config.lightning_width()], gate = config.num_lightning_layers() > 0)]
    pub lightning_norm: DevicePtr<bf16>,
    /// KDA's `self_attn.q_proj.weight`, `[heads · head_dim, hidden]`.
    #[buffer(
        per_layer = config.num_kda_layers(),
        shape = [formats.mixers.linear_bytes(config.kda_width(), config.hidden_size)],
        gate = config.num_kda_layers() > 0
    )]
    pub kda_q_proj: DevicePtr<u8>,
    /// KDA's `self_attn.k_proj.weight`, `[heads · head_dim, hidden]`.
    #[buffer(
        per_layer = config.num_kda_layers(),
        shape = [formats.mixers.linear_bytes(config.kda_width(), config.hidden_size)],
        gate = config.num_kda_layers() > 0
    )]
    pub kda_k_proj: DevicePtr<u8>,
    /// KDA's `self_attn.v_proj.weight`, `[heads · head_dim, hidden]`.
    #[buffer(
        per_layer = config.num_kda_layers(),
        shape = [formats.mixers.linear_bytes(config.kda_width(), config.hidden_size)],
        gate = config.num_kda_layers() > 0
    )]
    pub kda_v_proj: DevicePtr<u8>,
    /// `self_attn.o_proj.weight`, `[hidden, heads · head_dim]`.
    #[buffer(
        per_layer = config.num_kda_layers(),
        shape = [formats.mixers.linear_bytes(config.hidden_size, config.kda_width())],
        gate = config.num_kda_layers() > 0
    )]
    pub kda_o_proj: DevicePtr<u8>,
    /// `self_attn.b_proj.weight`, `[heads, hidden]`.
    #[buffer(
        per_layer = config.num_kda_layers(),
        shape = [formats.mixers.linear_bytes(config.kda_heads, config.hidden_size)],
        gate = config.num_kda_layers() > 0
    )]
    pub kda_b_proj: DevicePtr<u8>,
    /// `self_attn.q_conv1d`, `k_conv1d` and `v_conv1d` weights, no bias, `[3 · heads · head_dim, 1, kernel]`.
    #[buffer(per_layer = config.num_kda_layers(), shape = [3 * config.kda_width(), 1, config.kda_conv_kernel], gate = config.num_kda_layers() > 0)]
    pub kda_conv1d: DevicePtr<bf16>,
    /// The forget gate's `self_attn.f_a_proj.weight`, `[head_dim, hidden]`.
    #[buffer(
        per_layer = config.num_kda_layers(),
        shape = [formats.mixers.linear_bytes(config.kda_head_dim, config.hidden_size)],
        gate = config.num_kda_layers() > 0
    )]
    pub kda_f_a_proj: DevicePtr<u8>,
    /// `self_attn.f_b_proj.weight`, `[heads · head_dim, head_dim]`.
    #[buffer(
        per_layer = config.num_kda_layers(),
        shape = [formats.mixers.linear_bytes(config.kda_width(), config.kda_head_dim)],
        gate = config.num_kda_layers() > 0
    )]
    pub kda_f_b_proj: DevicePtr<u8>,
    /// `self_attn.A_log`, a head.
    #[buffer(per_layer = config.num_kda_layers(), shape = [config.kda_heads], gate = config.num_kda_layers() > 0)]
    pub kda_a_log: DevicePtr<bf16>,
    /// `self_attn.dt_bias`, a channel.
    #[buffer(per_layer = config.num_kda_layers(), shape = [config.kda_width()], gate = config.num_kda_layers() > 0)]
    pub kda_dt_bias: DevicePtr<bf16>,
    /// The output gate's `self_attn.g_a_proj.weight`, `[head_dim, hidden]`.
    #[buffer(
        per_layer = config.num_kda_layers(),
        shape = [formats.mixers.linear_bytes(config.kda_head_dim, config.hidden_size)],
        gate = config.num_kda_layers() > 0
    )]
    pub kda_g_a_proj: DevicePtr<u8>,
    /// `self_attn.g_b_proj.weight`, `[heads · head_dim, head_dim]`.
    #[buffer(
        per_layer = config.num_kda_layers(),
        shape = [formats.mixers.linear_bytes(config.kda_width(), config.kda_head_dim)],
        gate = config.num_kda_layers() > 0
    )]
    pub kda_g_b_proj: DevicePtr<u8>,
    /// `self_attn.o_norm.weight`, `[head_dim]`.
    #[buffer(per_layer = config.num_kda_layers(), shape = [config.kda_head_dim], gate = config.num_kda_layers() > 0)]
    pub kda_o_norm: DevicePtr<bf16>,
}
