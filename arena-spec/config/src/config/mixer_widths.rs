//! What `ModelConfig` derives for the other mixers and the FFN: Gated DeltaNet, Mamba-2, short
//! conv, lightning and Kimi delta attention widths, the MoE's routing and expert widths, the
//! widths several buffers share, and the synthetic features' switches.

use super::{max, min, LayerKind, ModelConfig};
use std::borrow::Cow;

impl ModelConfig {
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
