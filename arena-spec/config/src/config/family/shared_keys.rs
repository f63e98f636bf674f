//! Key sets several rows of the family table share, each named by the configuration
//! classes that read them.

use super::{DenseLayers, FfnAutoAdjust, MambaKeys, MoeKeys, SharedExpert};

/// The Mamba-2 keys of NemotronHConfig, which the synthetic configs share: the `mamba_*`
/// spellings win over the plain ones (`configuration_nemotron_h.py`: 156, 157, 166).
pub(super) const NEMOTRON_MAMBA: MambaKeys = MambaKeys {
    heads: "mamba_num_heads",
    head_dim: "mamba_head_dim",
    state: "ssm_state_size",
    n_groups: &["mamba_n_groups", "n_groups"],
    conv_kernel: &["mamba_d_conv", "conv_kernel"],
    chunk_size: &["mamba_chunk_size", "chunk_size"],
    expand: None,
};

/// DeepseekV3Config (Kimi K2 is built as DeepSeek-V3): the MLA ranks and head dims, the
/// shared expert count and the leading dense layers.
pub(super) const DEEPSEEK_V3_DEFAULTS: &[(&str, usize)] = &[
    ("q_lora_rank", 1536),
    ("kv_lora_rank", 512),
    ("qk_nope_head_dim", 128),
    ("qk_rope_head_dim", 64),
    ("v_head_dim", 128),
    ("n_shared_experts", 1),
    ("first_k_dense_replace", 3),
];

/// Ministral3Config (configuration_ministral3.py: 78–79), which Mistral 3 files nest: 8 kv
/// heads and head_dim 128.
pub(super) const MINISTRAL3_DEFAULTS: &[(&str, usize)] =
    &[("num_key_value_heads", 8), ("head_dim", 128)];

/// DeepSeek's (and GLM-4.5's) experts: `n_routed_experts`, whose `attribute_map` alias `num_local_experts`
/// wins over it; one shared MLP of `n_shared_experts` routed widths; the first
/// `first_k_dense_replace` layers dense.
pub(super) const DEEPSEEK_V3_MOE: MoeKeys = MoeKeys {
    experts: &["num_local_experts", "n_routed_experts"],
    experts_field: "n_routed_experts",
    expert_width: "moe_intermediate_size",
    shared: SharedExpert::CountTimesExpertWidth,
    dense_layers: DenseLayers::FirstK,
    top_k: &["num_experts_per_tok"],
    enabled_by: None,
    latent: None,
};

/// The spelling of most MoE classes without an alias (Qwen3.5-MoE, LFM2-MoE, Laguna, AFMoE,
/// Beam, Cohere 2 MoE): `num_experts` routed experts of `moe_intermediate_size`,
/// `num_experts_per_tok` a token; every layer routes and no expert is shared unless the row
/// says otherwise.
pub(super) const NUM_EXPERTS_MOE: MoeKeys = MoeKeys {
    experts: &["num_experts"],
    experts_field: "num_experts",
    expert_width: "moe_intermediate_size",
    shared: SharedExpert::None,
    dense_layers: DenseLayers::None,
    top_k: &["num_experts_per_tok"],
    enabled_by: None,
    latent: None,
};

/// MixtralConfig, GptOssConfig and MiniMaxM2Config map `num_experts` onto
/// `num_local_experts`; the alias wins when a file has both. Every layer routes, with no
/// shared expert, each expert `intermediate_size` wide.
pub(super) const MIXTRAL_MOE: MoeKeys = MoeKeys {
    experts: &["num_experts", "num_local_experts"],
    experts_field: "num_local_experts",
    expert_width: "intermediate_size",
    shared: SharedExpert::None,
    dense_layers: DenseLayers::None,
    top_k: &["num_experts_per_tok"],
    enabled_by: None,
    latent: None,
};

/// Qwen2MoeConfig and Qwen3NextConfig: `num_experts` (no `num_local_experts` alias), a
/// shared expert of its own width, dense layers by `decoder_sparse_step` / `mlp_only_layers`.
pub(super) const QWEN2_MOE: MoeKeys = MoeKeys {
    experts: &["num_experts"],
    experts_field: "num_experts",
    expert_width: "moe_intermediate_size",
    shared: SharedExpert::Width("shared_expert_intermediate_size"),
    dense_layers: DenseLayers::SparseStep(&[]),
    top_k: &["num_experts_per_tok"],
    enabled_by: None,
    latent: None,
};

/// DeepseekV32Config and GlmMoeDsaConfig: DeepSeek's experts, a `num_experts` key re-routed to
/// `n_routed_experts` (after the `num_local_experts` alias), and `mlp_layer_types`, which
/// their decoder layers read, before `first_k_dense_replace`.
pub(super) const DSA_MOE: MoeKeys = MoeKeys {
    experts: &["num_local_experts", "num_experts", "n_routed_experts"],
    experts_field: "n_routed_experts",
    expert_width: "moe_intermediate_size",
    shared: SharedExpert::CountTimesExpertWidth,
    dense_layers: DenseLayers::FirstKOrTypes,
    top_k: &["num_experts_per_tok"],
    enabled_by: None,
    latent: None,
};

/// Lfm2Config (configuration_lfm2.py: 63, 74): 8 kv heads and a conv of 3 taps where a file
/// leaves them out.
pub(super) const LFM2_DEFAULTS: &[(&str, usize)] =
    &[("num_key_value_heads", 8), ("conv_L_cache", 3)];

/// `Lfm2MLP`'s width (modeling_lfm2.py: 111–124): `block_ff_dim` replaces
/// `intermediate_size` (`Lfm2Config.__post_init__`), then, with `block_auto_adjust_ff_dim`
/// (default true), two thirds of it times `block_ffn_dim_multiplier` (default 1.0), rounded
/// up to `block_multiple_of` (default 256).
pub(super) const LFM2_FFN: FfnAutoAdjust = FfnAutoAdjust {
    width_override: "block_ff_dim",
    switch: ("block_auto_adjust_ff_dim", true),
    multiplier: "block_ffn_dim_multiplier",
    multiple_of: ("block_multiple_of", 256),
};
