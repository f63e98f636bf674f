//! The engine's buffer arena: every intermediate tensor of a forward pass, declared once.
//! The contract is on [`BufferArena`], [`BufferSizes`], `BufferSizes::from_config` and
//! `BufferSizes::total_bytes`, where rustdoc shows it.
//!
//! Beside it: `sizing.rs` (the byte formulas too long for a field), `constants.rs` (the
//! seeds' named values and the ones chosen here), `regions/` (buffers carved into regions,
//! each a `#[derive(Regions)]` layout), `inputs.rs` (the arena's inputs by name, their
//! defaults, each buffer's shape for reports) and `budgets.rs` (compile-time budgets).

pub mod budgets;
pub mod constants;
pub mod inputs;
pub mod ranks;
pub mod regions;
pub mod sizing;

use crate::config::ModelConfig;
use arena_runtime::dtype::{bf16, F8E4M3};
use arena_runtime::{Arena, DevicePtr};
use constants::{
    GATEUP_FUSED_MAX_M, LIGHTNING_BLOCK, SPLITK_MAX_M, SPLITK_MAX_SPLITS, VERIFY_ROW_CAP,
};
use regions::{
    decode_meta_rows, GdnFlaScratch, KdaChunkScratch, MoeFp8Scratch, QsaSelectScratch, Scratch,
    SsdScratch,
};
use sizing::{
    block_table_width, hc_lowrank_scratch_bytes, q2_dequant_scratch_bytes, q8_1_mmq_bytes,
    ssm_rowwise_w_bf16_bytes,
};

/// How many of [`BufferArena`]'s fields are the seeds' buffers: the first 46, in the seeds'
/// order. The fields after them (the section "Beyond the seeds") are this crate's, each for a
/// layer kind the seeds' engine does not run (or, `hc_pre`, a tensor the seeds give no
/// buffer), and 0 bytes for every model without that kind.
pub const SEEDS_BUFFERS: usize = 46;

/// The GPU buffers of one forward pass, `M = max_batch_tokens`. `BufferSizes::from_config`
/// holds each buffer's size formula.
///
/// Invariants (what `#[derive(Arena)]` and `arena_runtime::Arena` guarantee):
/// - every buffer is allocated at its [`BufferSizes`] size; the gated ones (`ssd_scratch`,
///   `gdn_fla_scratch`, `ffn_*`, `moe_fp8_scratch`, `q2_*`, `lora_*`, `ssm_rowwise_w_bf16`,
///   `fp8_act*` under the `scratch_by_format` lever, `logits` on a pipeline stage without the
///   LM head, and every buffer beyond the seeds: `moe_latent_*`, `short_conv_*`,
///   `lightning_*`, `kda_*`, `per_layer_*`, `hc_pre`)
///   are `DevicePtr::NULL` when that size is 0;
/// - the first [`SEEDS_BUFFERS`] fields are the seeds' buffers in the seeds' order; those
///   after them are this crate's (`sizes.named_sizes()[SEEDS_BUFFERS..]` lists them);
/// - no device memory is allocated after construction, and `release` frees every pointer
///   field.
#[derive(Arena, Debug, Clone, Copy)]
#[arena(
    const,
    sizes = BufferSizes,
    // The step's phases in order: before the first layer, beyond the seeds, the embedding
    // prologue (`embed`: Gemma 4's per-layer inputs); per layer, one mixer (attention, GDN or
    // Mamba-2, or beyond the seeds a short convolution, lightning attention or Kimi delta
    // attention), then the MoE router, then the FFN/MoE experts in two halves (the gate and
    // up projections with the activation, then the down projection and the combine), then,
    // beyond the seeds, the layer's per-layer input (`per_layer_input`); the LM head after
    // the last layer. Buffers of disjoint phases may share bytes in a reuse slab
    // (`AllocOptions::reuse()`). The FFN's split is this crate's kernel contract, not the
    // seeds' (they have one FFN phase): the activation `silu(gate) · up` is written over
    // `expert_gate_out`, so `expert_up_out` dies before the down projection writes;
    // `examples/forward` runs that schedule and proves it (reuse and plain slabs give
    // bit-identical logits with every phase poisoned as it begins).
    phases(embed, attention, gdn, mamba2, short_conv, lightning, kda, router, ffn_gate_up, ffn_down, per_layer_input, lm_head),
    inputs_struct(BufferArenaInputs, derive(serde::Serialize)),
    docs(
        sizes = "Byte size of each arena buffer. `M` is `max_batch_tokens` and `ceil16(M)` is M
                 rounded up to a multiple of 16.",
        from_config = "Every buffer size, in bytes. `max_seq_len` and `kv_block_size` set the
                       block-table width in `scratch` (`max_seq_len / kv_block_size + 1` blocks,
                       256 when `kv_block_size` is 0) and the QSA score width; `max_batch_size`
                       sets the decode-metadata rows.",
        total_bytes = "The sum of the sizes, which preflight reserves for the arena. `o_latent`
                       and `norm_unit_w` are not in it."
    ),
    inputs(
        config: &ModelConfig,
        max_batch_tokens: usize,
        max_seq_len: usize,
        kv_block_size: usize,
        max_batch_size: usize
    ),
    derived(
        m16 = ceil16(max_batch_tokens),
        expert_rows = max_batch_tokens * config.expert_fanout(),
        widest_k = config.widest_k(),
        ffn_k = config.ffn_k(),
        logit_rows = max(max_batch_size, VERIFY_ROW_CAP),
        blocks_per_seq = block_table_width(max_seq_len, kv_block_size),
        decode_rows = decode_meta_rows(max_batch_size)
    )
)]
pub struct BufferArena {
    /// Hidden states of the current pass, `[M, hidden]` BF16.
    /// The whole step: the stream every sublayer reads and writes.
    #[buffer(shape = [max_batch_tokens, config.hidden_size])]
    pub hidden_states: DevicePtr<bf16>,
    /// The residual stream, `[M, hidden]` BF16.
    /// The whole step: the residual stream.
    #[buffer(shape = [max_batch_tokens, config.hidden_size])]
    pub residual: DevicePtr<bf16>,
    /// RMSNorm output feeding each projection, `[M, hidden]` BF16.
    /// The whole step: every mixer, FFN and the LM head read a norm output.
    #[buffer(shape = [max_batch_tokens, config.hidden_size])]
    pub norm_output: DevicePtr<bf16>,
    /// Fused q | k | v projection output (MLA: also the compressed q), `[M, qkv width]` BF16;
    /// 256 bytes for a model without attention layers. Beyond the seeds' wording, chosen here:
    /// the other projections of the same input (`ModelConfig::extra_qkv_width`: DeepSeek-V4's
    /// compressor and indexer, Laguna's output gate), which the seeds' arena has no other
    /// buffer for.
    /// Live in the attention mixer only: the O projection consumes it.
    #[buffer(shape = [max_batch_tokens, config.qkv_width()], min_bytes = 256, phase = attention)]
    pub qkv_output: DevicePtr<bf16>,
    /// Attention output before the O projection, `[M, q_heads · v_head_dim]` BF16 (the value
    /// head size: `head_dim`, or MLA's `v_head_dim`); 256 bytes without attention layers.
    /// Live in the attention mixer only: the O projection consumes it.
    #[buffer(shape = [max_batch_tokens, config.attn_output_width()], min_bytes = 256, phase = attention)]
    pub attn_output: DevicePtr<bf16>,
    /// BF16 router logits `[M, num_experts + zero_expert_num]`; 256 bytes without experts.
    /// Live in the router phase: the top-K reads it and writes the experts' ids and weights into `scratch` before the experts run.
    #[buffer(shape = [max_batch_tokens, config.router_width()], min_bytes = 256, phase = router)]
    pub gate_logits: DevicePtr<bf16>,
    /// FP32 router logits `[M, num_experts + zero_expert_num]` for the `METRALE_FP32_GATE`
    /// and `METRALE_FP32_ROUTING` paths, which run the top-K on unrounded logits. 256 bytes
    /// for a model without experts.
    /// Live in the router phase (as `gate_logits`).
    #[buffer(shape = [max_batch_tokens, config.router_width()], min_bytes = 256, phase = router)]
    pub gate_logits_f32: DevicePtr<f32>,
    /// FP32 MoE-input norm output `[M, hidden]` that the router GEMM reads under
    /// `METRALE_FP32_ROUTING`. 256 bytes for a model without experts.
    /// Live in the router phase: only the router GEMM reads it.
    #[buffer(shape = [max_batch_tokens, config.router_input_width()], min_bytes = 256, phase = router)]
    pub moe_router_in_f32: DevicePtr<f32>,
    /// The MoE (or dense FFN) layer output, `[M, hidden]` BF16.
    /// Live in the FFN's down half: the combine writes it after the down projection, and it is added into the residual stream within that half (before the per-layer-input tail beyond the seeds, which reads the sum, and the next mixer).
    #[buffer(shape = [max_batch_tokens, config.hidden_size], phase = ffn_down)]
    pub moe_output: DevicePtr<bf16>,
    /// Logits `[max(max_batch_size, VERIFY_ROW_CAP), vocab]` FP32: one row per sampled
    /// sequence, at least the rows of a batched MTP verify. Chosen here: the rows follow
    /// `max_batch_size` without the decode-metadata clamp, so a serve wider than
    /// `DECODE_META_MAX_ROWS` still has a row per sequence. On a rank of a parallel layout
    /// these are the gathered logits (full vocabulary) on the last pipeline stage and 0
    /// bytes on the others, which have no LM head (`ModelConfig::lm_head_vocab`).
    /// Live in the LM head phase only, after the last layer.
    #[buffer(shape = [logit_rows, config.lm_head_vocab()], gate = config.lm_head_vocab() > 0, phase = lm_head)]
    pub logits: DevicePtr<f32>,
    /// SSM input projection output, `[M, ssm in width]` BF16: GDN `in_proj_qkvz`
    /// (`2·Hk·Dk + 2·Hv·Dv`) or Mamba-2 `in_proj`; 256 bytes without SSM layers.
    /// Live in the GDN and Mamba-2 mixers, which share it.
    #[buffer(shape = [max_batch_tokens, config.ssm_in_width()], min_bytes = 256, phase = gdn..=mamba2)]
    pub ssm_qkvz: DevicePtr<bf16>,
    /// GDN `in_proj_ba` output (β and a per value head), `[M, 2·Hv]` BF16, or Mamba-2's dt.
    /// Live in the GDN and Mamba-2 mixers.
    #[buffer(shape = [max_batch_tokens, config.ssm_gate_width()], min_bytes = 256, phase = gdn..=mamba2)]
    pub ssm_ba: DevicePtr<bf16>,
    /// q | k | v | z de-interleaved from the head-grouped projection, `[M, ssm in width]` BF16.
    /// Live in the GDN and Mamba-2 mixers.
    #[buffer(shape = [max_batch_tokens, config.ssm_in_width()], min_bytes = 256, phase = gdn..=mamba2)]
    pub ssm_deinterleaved: DevicePtr<bf16>,
    /// FP32 gates (g and β per value head, or Mamba-2 dt), `[M, gate width]`.
    /// Live in the GDN and Mamba-2 mixers.
    #[buffer(shape = [max_batch_tokens, config.ssm_gate_width()], min_bytes = 256, phase = gdn..=mamba2)]
    pub ssm_gates: DevicePtr<f32>,
    /// FP32 causal-conv output, `[M, conv channels]` (GDN q|k|v or Mamba-2 x|B|C).
    /// Live in the GDN and Mamba-2 mixers.
    #[buffer(shape = [max_batch_tokens, config.ssm_conv_dim()], min_bytes = 256, phase = gdn..=mamba2)]
    pub ssm_conv_out_f32: DevicePtr<f32>,
    /// The step's metadata regions (`regions::Scratch`): positions, slots, block tables
    /// (`max_seq_len / kv_block_size + 1` blocks, 256 when `kv_block_size` is 0), decode
    /// metadata for `max_batch_size` rows, router top-K and the batched-prefill staging.
    /// The whole step: step metadata every layer reads.
    #[buffer(bytes = Scratch::bytes(config, max_batch_tokens, blocks_per_seq, decode_rows))]
    pub scratch: DevicePtr<u8>,
    /// Expert (or dense FFN) gate projection output, `[M · top_k, expert width]` BF16 (`M`
    /// rows for a dense model).
    /// Live in both FFN halves: the gate projection writes it, then the activation `silu(gate) · up` is written over it in place, and the down projection reads that.
    #[buffer(shape = [expert_rows, config.expert_width()], min_bytes = 256, phase = ffn_gate_up..=ffn_down)]
    pub expert_gate_out: DevicePtr<bf16>,
    /// Expert (or dense FFN) up projection output, `[M · top_k, expert width]` BF16.
    /// Live in the FFN's gate/up half only: the activation consumes it before the down projection writes.
    #[buffer(shape = [expert_rows, config.expert_width()], min_bytes = 256, phase = ffn_gate_up)]
    pub expert_up_out: DevicePtr<bf16>,
    /// Expert (or dense FFN) down projection output, `[M · top_k, hidden]` BF16.
    /// Live in the FFN's down half: the down projection writes it, the combine (MoE) or the residual add (dense) reads it.
    #[buffer(shape = [expert_rows, config.hidden_size], phase = ffn_down)]
    pub expert_down_out: DevicePtr<bf16>,
    /// FP32 split-K partial sums of the decode-band GEMMs:
    /// `[SPLITK_MAX_SPLITS, ceil16(min(M, SPLITK_MAX_M)), widest N]`, N the widest of the
    /// qkv, SSM-in, FFN gate+up and hidden outputs; the gate+up width is
    /// `ModelConfig::widest_ffn_n`, so a MoE model's dense layers count at their full width.
    /// Beyond the seeds, N also covers the short convolution's `in_proj` (3 · its channels)
    /// lightning attention's `qkv_proj`, Kimi delta attention's q, k, v (3 · heads · head_dim
    /// each) and Gemma 4's `per_layer_model_projection` (L · P), 0 for every model without them.
    /// The whole step: every decode-band GEMM, in every phase.
    #[buffer(shape = [
        SPLITK_MAX_SPLITS,
        ceil16(min(max_batch_tokens, SPLITK_MAX_M)),
        max(
            max(max(config.qkv_width(), config.ssm_in_width()), max(2 * config.widest_ffn_n(), config.hidden_size)),
            max(
                max(config.short_conv_in_width(), config.per_layer_inputs_width),
                3 * max(config.lightning_width(), config.kda_width())
            )
        )
    ])]
    pub splitk_workspace: DevicePtr<f32>,
    /// GDN FLA chunked-prefill scratch, W | U | S | uc | gc back to back
    /// (`regions::GdnFlaScratch`). 0 unless the linear-attention key and value head dims are
    /// both 128, the only shape the FLA prefill kernels run.
    /// Live in the GDN mixer only.
    #[buffer(bytes = GdnFlaScratch::bytes(config, max_batch_tokens), gate = config.gdn_fla_supported(), phase = gdn)]
    pub gdn_fla_scratch: DevicePtr<u8>,
    /// Mamba-2 SSD chunked-scan scratch, dt | dA_cumsum | CB (`regions::SsdScratch`). 0
    /// unless the model has Mamba-2 heads and a state size.
    /// Live in the Mamba-2 mixer only.
    #[buffer(bytes = SsdScratch::bytes(config, max_batch_tokens), gate = config.has_mamba(), phase = mamba2)]
    pub ssd_scratch: DevicePtr<u8>,
    /// Grouped O-projection latent `[M, o_groups · o_lora_rank]` BF16, at least 256 bytes.
    /// Live in the attention mixer (the grouped O projection).
    #[buffer(shape = [max_batch_tokens, config.o_latent_width()], min_bytes = 256, untracked, phase = attention)]
    pub o_latent: DevicePtr<bf16>,
    /// The zero weight `norm_unit_w`, `max(hidden, Mamba-2 d_inner)` BF16 values.
    /// The whole step: a weight, written once.
    #[buffer(shape = [max(config.hidden_size, config.mamba_d_inner())], untracked)]
    pub norm_unit_w: DevicePtr<bf16>,
    /// Hyper-connection residual streams `[M, hc_mult, hidden]` FP32. 256 bytes when
    /// `hc_mult == 0`.
    /// The whole step: hyper-connections wrap every sublayer.
    #[buffer(shape = [max_batch_tokens, config.hc_mult, config.hidden_size], min_bytes = 256)]
    pub hc_streams: DevicePtr<f32>,
    /// Hyper-connection post weights `[M, hc_mult]` FP32. At least 256 bytes (chosen here:
    /// the seeds give this buffer no floor; 256 bytes keeps its pointer non-NULL and aligned
    /// like `hc_streams`).
    /// The whole step (hyper-connections).
    #[buffer(shape = [max_batch_tokens, config.hc_mult], min_bytes = 256)]
    pub hc_post: DevicePtr<f32>,
    /// Hyper-connection comb matrix `[M, hc_mult, hc_mult]` FP32. At least 256 bytes (chosen
    /// here, as `hc_post`).
    /// The whole step (hyper-connections).
    #[buffer(shape = [max_batch_tokens, config.hc_mult, config.hc_mult], min_bytes = 256)]
    pub hc_comb: DevicePtr<f32>,
    /// Low-rank hyper-connection scratch: the larger of the decode split layout (T ≤ 64,
    /// FP32) and the prefill GEMM layout (slabs of at most 2048 tokens, BF16); see
    /// `sizing::hc_lowrank_scratch_bytes`. 256 bytes without a low-rank hyper-connection.
    /// The whole step (hyper-connections).
    #[buffer(bytes = hc_lowrank_scratch_bytes(config, max_batch_tokens), min_bytes = 256)]
    pub hc_lowrank_scratch: DevicePtr<u8>,
    /// QSA prefill-selection scratch for 2048-row slabs, reuse by the indexer layers:
    /// qk `[2048, (index_n_heads + 1) · index_head_dim]` BF16, q_post `[2048,
    /// index_n_heads, index_head_dim]` F32, scores `[2048, ceil(max_seq_len /
    /// index_compress_ratio)]` F32, lists `[2048, index_topk / index_compress_ratio]` i32
    /// (`regions::QsaSelectScratch`). 256 bytes without an indexer. The selection layer
    /// carves the same layout.
    /// Live in the attention mixer: the indexer selects before the sparse attention.
    #[buffer(bytes = QsaSelectScratch::bytes(config, max_seq_len), min_bytes = 256, phase = attention)]
    pub qsa_select_scratch: DevicePtr<u8>,
    /// Token ids `[M]` u32 of the current pass, read by the DeepSeek-V4 hash-routed MoE
    /// layers (`tid2eid[token_id]`). At least 256 bytes.
    /// The whole step: step input.
    #[buffer(shape = [max_batch_tokens], min_bytes = 256)]
    pub token_ids: DevicePtr<u32>,
    /// Dense-FFN activation-quant scratch reuse by every layer's prefill, sized for
    /// `K = max(hidden, intermediate)`; all `ffn_*` are 0 for a MoE model (and, chosen here,
    /// for a model without a dense FFN at all, such as a pure Mamba-2 model). This one:
    /// `q8_1_mmq` activations `[ceil16(M), K]` for the Q4_K MMQ path.
    /// Live in both FFN halves: the gate/up input is quantized here, then the activation (the down projection's input).
    #[buffer(bytes = q8_1_mmq_bytes(m16, ffn_k), gate = config.has_dense_ffn() && config.q8_mmq_scratch(), phase = ffn_gate_up..=ffn_down)]
    pub ffn_act_q8: DevicePtr<u8>,
    /// int8 `[ceil16(M), K]`, also the NVFP4-packed and FP8 activations.
    /// Live in both FFN halves (as `ffn_act_q8`).
    #[buffer(shape = [m16, ffn_k], gate = config.has_dense_ffn() && config.fp8_activation_scratch(), phase = ffn_gate_up..=ffn_down)]
    pub ffn_act_a: DevicePtr<i8>,
    /// `[ceil16(M), K/32]` 4-byte int8 scales, also the NVFP4 and FP8 scales.
    /// Live in both FFN halves (as `ffn_act_q8`).
    #[buffer(shape = [m16, ceil_div(ffn_k, 32)], gate = config.has_dense_ffn() && config.fp8_activation_scratch(), phase = ffn_gate_up..=ffn_down)]
    pub ffn_act_scale: DevicePtr<f32>,
    /// `[K/128, ceil16(M)]` f32 copy of the FP8 activation scales, token index contiguous,
    /// for the cuBLASLt block-scaled FFN GEMM; the quantizer writes `[M, K/128]` into
    /// `ffn_act_scale`. 0 for a MoE model.
    /// Live in both FFN halves (as `ffn_act_q8`).
    #[buffer(shape = [ceil_div(ffn_k, 128), m16], gate = config.has_dense_ffn() && config.fp8_activation_scratch(), phase = ffn_gate_up..=ffn_down)]
    pub ffn_act_scale_kmajor: DevicePtr<f32>,
    /// `[ceil16(GATEUP_FUSED_MAX_M), 2 · intermediate]` BF16 output of the fused dense-FFN
    /// gate+up decode GEMM; a row is `[gate | up]`. A buffer of its own because the fused arm
    /// serves only the decode band, and a widened `expert_gate_out` would carry
    /// `max_batch_tokens` rows. Sized for every dense model, whatever the lever says: the
    /// levers are resolved above this crate. 0 for a MoE model (chosen here: a MoE model
    /// has no dense-FFN decode GEMM of its own; its dense layers run on the expert buffers).
    /// Live in the FFN's gate/up half only: the activation, written into `expert_gate_out`, consumes it.
    #[buffer(shape = [ceil16(GATEUP_FUSED_MAX_M), 2 * config.intermediate_size], gate = config.has_dense_ffn(), phase = ffn_gate_up)]
    pub ffn_gate_up_fused: DevicePtr<bf16>,
    /// FP8 activation scratch for the prefill projections, 1 byte per element,
    /// `[ceil16(M), K]` for the widest K among hidden, `q_heads · head_dim`, Mamba-2
    /// `d_inner` and the GDN value dim (and, chosen here, the O projection's input
    /// `q_heads · v_head_dim`, which MLA can make wider than `q_heads · head_dim`).
    /// The whole step: every prefill projection of every phase quantizes into it.
    #[buffer(shape = [m16, widest_k], gate = config.fp8_activation_scratch())]
    pub fp8_act: DevicePtr<F8E4M3>,
    /// The grouped FP8 MoE scratch slab (`MoeFp8Scratch`); 0 for a dense model.
    /// Live in both FFN halves (the seeds already reuse it across the shared, gate, up and down GEMMs).
    #[buffer(bytes = MoeFp8Scratch::bytes(config, max_batch_tokens), gate = config.is_moe() && config.fp8_activation_scratch(), phase = ffn_gate_up..=ffn_down)]
    pub moe_fp8_scratch: DevicePtr<u8>,
    /// One f32 scale per 128 elements of `fp8_act`.
    /// The whole step (every projection).
    #[buffer(shape = [m16, ceil_div(widest_k, 128)], gate = config.fp8_activation_scratch())]
    pub fp8_act_scale: DevicePtr<f32>,
    /// `[K/128, ceil16(M)]` f32 transpose of `fp8_act_scale`, token index contiguous, for
    /// the cuBLASLt block-scaled projections. Sized for every model, the SSM `in_proj_qkvz`
    /// arm included.
    /// The whole step (every projection).
    #[buffer(shape = [ceil_div(widest_k, 128), m16], gate = config.fp8_activation_scratch())]
    pub fp8_act_scale_kmajor: DevicePtr<f32>,
    /// LoRA shrink output `xa = x @ Aᵀ`, `[M, adapter_max_rank]` BF16. This and the other
    /// `lora_*` entries are 0 when `adapter_max_rank == 0`.
    /// The whole step: adapters sit on projections of every phase.
    #[buffer(shape = [max_batch_tokens, config.adapter_max_rank], gate = config.adapter_max_rank > 0)]
    pub lora_xa: DevicePtr<bf16>,
    /// LoRA expand output `delta = xa @ Bᵀ`, `[M, n]` BF16 with n the widest target:
    /// `max(hidden, intermediate, the q projection width)`.
    /// The whole step (adapters).
    #[buffer(shape = [max_batch_tokens, config.lora_widest_n()], gate = config.adapter_max_rank > 0)]
    pub lora_delta: DevicePtr<bf16>,
    /// LoRA hidden-activation scratch `[M, intermediate_size]` BF16, as the seeds size it
    /// (the file's `intermediate_size`; `ModelConfig::intermediate_size` says which width
    /// that is for a MoE family).
    /// The whole step (adapters).
    #[buffer(shape = [max_batch_tokens, config.intermediate_size], gate = config.adapter_max_rank > 0)]
    pub lora_hact: DevicePtr<bf16>,
    /// LoRA adapter slot per prefill token, `[M]` i32. A buffer of its own, so it cannot
    /// overlap the metadata regions of `scratch`.
    /// The whole step (adapters).
    #[buffer(shape = [max_batch_tokens], gate = config.adapter_max_rank > 0)]
    pub lora_seq_slot: DevicePtr<i32>,
    /// Keep-packed Q2_0 prefill dequant scratch (`METRALE_GGUF_NATIVE_Q2=1`): one BF16 buffer
    /// for the largest keep-packed projection, reused by each projection's dequant. Sized by
    /// `q2_dequant_scratch_bytes`; 0 unless the lever is 1.
    /// The whole step: keep-packed projections of every phase.
    #[buffer(bytes = q2_dequant_scratch_bytes(config), gate = config.levers.gguf_native_q2)]
    pub q2_dequant_scratch: DevicePtr<bf16>,
    /// Keep-packed Q2_0 MMQ prefill `q8_1` activation scratch
    /// (`METRALE_GGUF_NATIVE_Q2_MMQ=1`), shared by every keep-packed projection: each
    /// quantizes its BF16 activation here and runs the packed MMQ GEMM. 0 unless the lever
    /// is 1. Chosen here (the seeds give no shape): `ceil16(M)` rows in the `q8_1_mmq`
    /// layout at the widest K any projection quantizes, the prefill projections' and the
    /// dense FFN's, so no keep-packed projection's activation is wider than the scratch.
    /// The whole step (keep-packed projections).
    #[buffer(bytes = q8_1_mmq_bytes(m16, max(widest_k, ffn_k)), gate = config.levers.gguf_native_q2_mmq)]
    pub q2_act_q8: DevicePtr<u8>,
    /// Row-wise FP8 GDN prefill BF16-weight slab (`METRALE_FP8_ROWWISE=1`): every GDN layer's
    /// BF16 `in_proj_qkvz` and `out_proj`, one slice pair per layer carved on its first
    /// prefill and kept for the arena's life. Sized by `ssm_rowwise_w_bf16_bytes`; 0 unless
    /// the lever is 1.
    /// The whole step, and beyond: weights kept for the arena's life, never reuse.
    #[buffer(bytes = ssm_rowwise_w_bf16_bytes(config), gate = config.levers.fp8_rowwise)]
    pub ssm_rowwise_w_bf16: DevicePtr<bf16>,

    // ---- Beyond the seeds ----
    //
    // The seeds' 46 buffers end above; every field below is this crate's, for a layer kind
    // the seeds' engine does not run. Each one cites the reference class it is sized from,
    // is gated on that kind (0 bytes and NULL for every model without it, so the seeds'
    // models size exactly as before), and names the phase it lives in.
    /// Beyond the seeds: latent MoE's routed input `[M, moe_latent_size]` BF16, the
    /// `fc1_latent_proj` output (hidden → latent) that every routed expert reads instead of
    /// the hidden state (transformers `nemotron_h/modeling_nemotron_h.py`: `NemotronHMoE`,
    /// `NemotronHExperts` built at `input_dim = moe_latent_size`). M rows: the projection runs
    /// once per token, before the experts gather their rows. Whole on every rank (vLLM and
    /// SGLang build both latent projections as `ReplicatedLinear`). 0 without a latent.
    /// Live in the FFN's gate/up half: the experts' up projections are its last readers.
    #[buffer(shape = [max_batch_tokens, config.moe_latent_size], gate = config.moe_latent_size > 0, phase = ffn_gate_up)]
    pub moe_latent_in: DevicePtr<bf16>,
    /// Beyond the seeds: latent MoE's combined expert output `[M, moe_latent_size]` BF16:
    /// the experts' down projections write latent-wide rows (into `expert_down_out`, which
    /// is hidden wide), the combine sums each token's top-k of them here, and
    /// `fc2_latent_proj` (latent → hidden) reads it into `moe_output`, where the shared
    /// expert's output is added (`NemotronHMoE.forward`). A buffer of its own: the combine
    /// cannot write `moe_output` in place of a projection that reads it. 0 without a latent.
    /// Live in the FFN's down half.
    #[buffer(shape = [max_batch_tokens, config.moe_latent_size], gate = config.moe_latent_size > 0, phase = ffn_down)]
    pub moe_latent_out: DevicePtr<bf16>,
    /// Beyond the seeds: the short convolution's `in_proj` output B | C | x, `[M, 3 ·
    /// short_conv_dim]` BF16 (LFM2, `lfm2/modeling_lfm2.py`: `Lfm2ShortConv`, `in_proj`
    /// hidden → 3 · hidden; a rank holds `hidden / tp` of each third, as vLLM's `ShortConv`
    /// shards it). 0 without short-conv layers.
    /// Live in the short-conv mixer: C is read last, by the gate after the conv.
    #[buffer(shape = [max_batch_tokens, config.short_conv_in_width()], gate = config.has_short_conv(), phase = short_conv)]
    pub short_conv_bcx: DevicePtr<bf16>,
    /// Beyond the seeds: B · x, the causal conv's input, `[M, short_conv_dim]` BF16
    /// (`Lfm2ShortConv.forward`'s `Bx`). A buffer of its own (chosen here): each conv output
    /// reads `conv_L_cache` input rows, so the conv cannot write over its input.
    /// Live in the short-conv mixer.
    #[buffer(shape = [max_batch_tokens, config.short_conv_dim], gate = config.has_short_conv(), phase = short_conv)]
    pub short_conv_bx: DevicePtr<bf16>,
    /// Beyond the seeds: the conv output gated by C, `out_proj`'s input, `[M,
    /// short_conv_dim]` BF16 (`y = C * conv_out`; chosen here: the gate is applied in place
    /// over the conv's output).
    /// Live in the short-conv mixer: `out_proj` is its last reader.
    #[buffer(shape = [max_batch_tokens, config.short_conv_dim], gate = config.has_short_conv(), phase = short_conv)]
    pub short_conv_out: DevicePtr<bf16>,
    /// Beyond the seeds: lightning attention's q | k | v, `[M, 3 · heads · head_dim]` BF16,
    /// the `qkv_proj` output with its SiLU applied in place (MiniMax,
    /// `minimax/modeling_minimax.py`: `MiniMaxLightningAttention`; a rank holds heads / tp,
    /// as vLLM's `MiniMaxText01LinearAttention` shards them). 0 without lightning layers.
    /// Live in the lightning mixer.
    #[buffer(shape = [max_batch_tokens, 3 * config.lightning_width()], gate = config.has_lightning(), phase = lightning)]
    pub lightning_qkv: DevicePtr<bf16>,
    /// Beyond the seeds: the `output_gate` projection of the layer input, `[M, heads ·
    /// head_dim]` BF16, read (through a sigmoid) after the attention and its norm.
    /// Live in the lightning mixer.
    #[buffer(shape = [max_batch_tokens, config.lightning_width()], gate = config.has_lightning(), phase = lightning)]
    pub lightning_gate: DevicePtr<bf16>,
    /// Beyond the seeds: the linear attention's output, `[M, heads · head_dim]` BF16; its
    /// RMSNorm and the sigmoid gate are applied in place (chosen here) and `out_proj` reads
    /// it. The kernel contract (chosen here): the lightning kernels read q, k, v token-major in
    /// BF16 from `lightning_qkv` and write this BF16 output, accumulating in FP32 registers;
    /// vLLM's Triton path, which first makes head-major FP32 copies of q, k and v, would need
    /// those copies too.
    /// Live in the lightning mixer.
    #[buffer(shape = [max_batch_tokens, config.lightning_width()], gate = config.has_lightning(), phase = lightning)]
    pub lightning_out: DevicePtr<bf16>,
    /// Beyond the seeds: the FP32 `[head_dim, head_dim]` state of every head at every block
    /// boundary of one prefill sequence, `[ceil(M / LIGHTNING_BLOCK) + 1, heads, head_dim,
    /// head_dim]` F32, so a chunked prefill runs its blocks in parallel: vLLM's
    /// `lightning_attention` allocates `kv [h, NUM_BLOCK, d, e]` FP32 per sequence and
    /// appends the carried-in state (`layers/lightning_attn.py`). Chosen here, as vLLM does:
    /// prefill sequences run one at a time, so one sequence of at most M tokens bounds it.
    /// The recurrent state a sequence keeps between steps is not here: it belongs to the
    /// sequence-state cache. 0 without lightning layers.
    /// Live in the lightning mixer.
    #[buffer(shape = [ceil_div(max_batch_tokens, LIGHTNING_BLOCK) + 1, config.lightning_heads, config.lightning_head_dim, config.lightning_head_dim], gate = config.has_lightning(), phase = lightning)]
    pub lightning_block_states: DevicePtr<f32>,
    /// Beyond the seeds: Kimi delta attention's q | k | v projections, `[M, 3 · heads ·
    /// head_dim]` BF16, the short conv's input (Kimi-Linear, `kimi_linear/modeling_kimi_linear.py`:
    /// `KimiLinearDeltaAttention`, `q_proj`, `k_proj`, `v_proj`; a rank holds heads / tp, as
    /// vLLM's `KimiDeltaAttention` shards them). 0 without KDA layers.
    /// Live in the KDA mixer.
    #[buffer(shape = [max_batch_tokens, 3 * config.kda_width()], gate = config.has_kda(), phase = kda)]
    pub kda_qkv: DevicePtr<bf16>,
    /// Beyond the seeds: the depthwise causal conv's output with its SiLU, `[M, 3 · heads ·
    /// head_dim]` BF16 (one conv over the three, `conv1d`): q, k and v as the delta rule
    /// reads them. A buffer of its own: each output reads `short_conv_kernel_size` input
    /// rows, so the conv cannot write over its input.
    /// Live in the KDA mixer.
    #[buffer(shape = [max_batch_tokens, 3 * config.kda_width()], gate = config.has_kda(), phase = kda)]
    pub kda_qkv_conv: DevicePtr<bf16>,
    /// Beyond the seeds: the two low-rank projections of the layer input, `f_a_proj` (the
    /// forget gate's) and `g_a_proj` (the output gate's), `[M, 2 · head_dim]` BF16. Whole on
    /// every rank (vLLM replicates both).
    /// Live in the KDA mixer.
    #[buffer(shape = [max_batch_tokens, 2 * config.kda_head_dim], gate = config.has_kda(), phase = kda)]
    pub kda_lowrank: DevicePtr<bf16>,
    /// Beyond the seeds: the per-channel decay `g = -exp(A_log) · softplus(f_b_proj(·) +
    /// dt_bias)`, `[M, heads · head_dim]` F32, as `KimiLinearForgetGate` computes it in FP32
    /// (vLLM's `fused_kda_gate` writes it FP32 too).
    /// Live in the KDA mixer.
    #[buffer(shape = [max_batch_tokens, config.kda_width()], gate = config.has_kda(), phase = kda)]
    pub kda_decay_f32: DevicePtr<f32>,
    /// Beyond the seeds: β, `sigmoid(b_proj(x))`, `[M, heads]` F32 (vLLM keeps it FP32).
    /// Live in the KDA mixer.
    #[buffer(shape = [max_batch_tokens, config.kda_heads], gate = config.has_kda(), phase = kda)]
    pub kda_beta_f32: DevicePtr<f32>,
    /// Beyond the seeds: the output gate `g_b_proj(g_a_proj(x))`, `[M, heads · head_dim]` BF16,
    /// read by the gated RMSNorm after the delta rule.
    /// Live in the KDA mixer.
    #[buffer(shape = [max_batch_tokens, config.kda_width()], gate = config.has_kda(), phase = kda)]
    pub kda_out_gate: DevicePtr<bf16>,
    /// Beyond the seeds: the delta rule's output, `[M, heads · head_dim]` BF16; its gated
    /// per-head RMSNorm (`o_norm`) is applied in place (chosen here) and `o_proj` reads it.
    /// Live in the KDA mixer.
    #[buffer(shape = [max_batch_tokens, config.kda_width()], gate = config.has_kda(), phase = kda)]
    pub kda_out: DevicePtr<bf16>,
    /// Beyond the seeds: the chunked-prefill scratch of the delta rule
    /// (`regions::KdaChunkScratch`: what FLA's `chunk_kda` keeps between its stages, the
    /// chunk states for a varlen batch of up to `min(max_batch_size, M)` sequences). 0 without
    /// KDA layers.
    /// Live in the KDA mixer.
    #[buffer(bytes = KdaChunkScratch::bytes(config, max_batch_tokens, min(max_batch_size, max_batch_tokens)), gate = config.has_kda(), phase = kda)]
    pub kda_chunk_scratch: DevicePtr<u8>,
    /// Beyond the seeds: every layer's per-layer input, `[M, num_hidden_layers · P]` BF16
    /// (Gemma 4 E-models, `gemma4/modeling_gemma4.py`: `Gemma4TextModel.get_per_layer_inputs`
    /// and `project_per_layer_inputs`): the `embed_tokens_per_layer` lookup, to which the
    /// normed `per_layer_model_projection` of the embeddings is added in place; layer i reads
    /// its P-wide slice. All the model's layers on every rank and stage (vLLM gathers the
    /// projection and passes this tensor between pipeline stages). 0 without per-layer
    /// inputs.
    /// The whole step: written before the first layer, read by the last.
    #[buffer(shape = [max_batch_tokens, config.per_layer_inputs_width], gate = config.has_per_layer_inputs())]
    pub per_layer_inputs: DevicePtr<bf16>,
    /// Beyond the seeds: `per_layer_model_projection(embeddings)`, `[M, num_hidden_layers ·
    /// P]` BF16, before it is normed and added into `per_layer_inputs`. A buffer of its own
    /// (chosen here): the lookup and the projection are both whole before they combine. Whole
    /// on every rank (chosen here: each rank projects with the whole weight, `hidden × L·P`,
    /// rather than a column shard and an all-gather, which would need a staging buffer). Only
    /// on the first pipeline stage, which runs the prologue (`ModelConfig::runs_embedding`).
    /// Live in the embedding prologue only.
    #[buffer(shape = [max_batch_tokens, config.per_layer_inputs_width], gate = config.has_per_layer_inputs() && config.runs_embedding(), phase = embed)]
    pub per_layer_inputs_proj: DevicePtr<bf16>,
    /// Beyond the seeds: a layer's `per_layer_input_gate` output, `[M, P]` BF16; its GELU and
    /// the product with the layer's slice of `per_layer_inputs` are applied in place
    /// (`Gemma4TextDecoderLayer.forward`, 1408–1412). Whole on every rank (vLLM replicates the
    /// gate).
    /// Live in the layer's per-layer-input tail.
    #[buffer(shape = [max_batch_tokens, config.per_layer_input_dim], gate = config.has_per_layer_inputs(), phase = per_layer_input)]
    pub per_layer_gate: DevicePtr<bf16>,
    /// Beyond the seeds: `per_layer_projection` of the gated slice, `[M, hidden]` BF16,
    /// normed in place (`post_per_layer_input_norm`) and added into the residual stream.
    /// Live in the layer's per-layer-input tail.
    #[buffer(shape = [max_batch_tokens, config.hidden_size], gate = config.has_per_layer_inputs(), phase = per_layer_input)]
    pub per_layer_out: DevicePtr<bf16>,
    /// Beyond the seeds: the hyper-connections' pre weights, `[M, hc_mult]` FP32 — the first
    /// `hc_mult` of the `fn` projection's `(2 + hc_mult) · hc_mult` outputs a token, which
    /// collapse the streams into a sublayer's input (`DeepseekV4HyperConnection.forward`,
    /// transformers 5.24 `modeling_deepseek_v4.py`: 972–995; the head's own, 1013–1014).
    /// The seeds give post and comb their buffers (`hc_post`, `hc_comb`) and pre none:
    /// vLLM's fused kernel keeps it in registers (`mhc_pre_tilelang`); an engine whose
    /// kernels do not fuse the collapse writes it here (chosen here: a buffer of its own,
    /// 0 bytes and NULL without hyper-connections).
    /// The whole step (hyper-connections wrap every sublayer).
    #[buffer(shape = [max_batch_tokens, config.hc_mult], gate = config.hc_mult > 0)]
    pub hc_pre: DevicePtr<f32>,
}
