//! The oracle's first kind of check (`oracle.rs`): the config's derived widths equal the
//! widths of the modules the reference builds.

use crate::oracle::{dsv4_indexer_projections, Built, KDA};
use arena_spec::ModelConfig;

/// Checks for one model: (what, arena, reference), equal widths.
pub(crate) fn width_checks(c: &ModelConfig, b: &Built) -> Vec<(&'static str, usize, usize)> {
    let mut eq = Vec::new();
    let mut check = |what, arena: usize, reference: Option<usize>| {
        if let Some(r) = reference {
            eq.push((what, arena, r));
        }
    };
    // (Kimi-Linear's delta attention sits at `self_attn` beside its MLA: the oracle names
    // its modules' owner class.)
    let not_attention = &[
        "indexer",
        "compressor",
        "linear_attn",
        "vision",
        "visual",
        KDA,
    ][..];
    check("vocab (lm_head out)", c.vocab_size, b.out("lm_head", &[]));
    let embed = b.out("embed_tokens", &[]).or(b.out("embeddings", &[]));
    check("hidden (embedding width)", c.hidden_size, embed);

    // Attention.
    if let Some(q_b) = b.out("q_b_proj", not_attention) {
        check(
            "q_lora_rank (q_a_proj out)",
            c.q_lora_rank,
            b.out("q_a_proj", not_attention),
        );
        check("q projection (q_b_proj out)", c.q_proj_width(), Some(q_b));
    }
    // An output gate of its own (AFMoE's `self_attn.gate_proj`, hidden → heads · head_dim)
    // is what a doubled q holds (Qwen3-Next's): the arena's q width is the two together.
    let own_gate = b.widest_out("self_attn.gate_proj").unwrap_or(0);
    check(
        "q projection (q_proj out)",
        c.q_proj_width(),
        b.out("q_proj", not_attention).map(|q| q + own_gate),
    );
    if let Some(kv_a) = b.out("kv_a_proj_with_mqa", not_attention) {
        check(
            "MLA kv (kv_a_proj_with_mqa out)",
            c.kv_proj_width(),
            Some(kv_a),
        );
    }
    if let (Some(k), Some(v)) = (
        b.out("k_proj", not_attention),
        b.out("v_proj", not_attention),
    ) {
        check("k + v projections", c.kv_proj_width(), Some(k + v));
    }
    // (MiniMax's lightning layers also have a `qkv_proj`, checked with their kind below;
    // BLOOM calls it `query_key_value`, DBRX `Wqkv`.)
    if let Some(qkv) = b
        .out("qkv_proj", not_attention)
        .or(b.out("query_key_value", not_attention))
        .or(b.out("Wqkv", not_attention))
        .filter(|_| !c.has_lightning())
    {
        check(
            "fused qkv_proj out",
            c.q_proj_width() + c.kv_proj_width(),
            Some(qkv),
        );
    }
    // GPT-2's fused, biased `attn.c_attn` and its output `attn.c_proj` (transformers'
    // `Conv1D`, recorded as linear layers).
    if let Some(qkv) = b.out("c_attn", not_attention) {
        check(
            "fused c_attn out",
            c.q_proj_width() + c.kv_proj_width(),
            Some(qkv),
        );
        check(
            "attention output (attn.c_proj in)",
            c.attn_output_width(),
            b.input("c_proj", &["mlp"]),
        );
    }
    // `out_proj` where there is no `o_proj` (GPT-J's `attn.out_proj`, OPT's
    // `self_attn.out_proj`).
    check(
        "attention output (self_attention.dense in)",
        c.attn_output_width(),
        b.widest_in("self_attention.dense"),
    );
    if b.input("o_proj", not_attention).is_none() {
        check(
            "attention output (attn.out_proj in)",
            c.attn_output_width(),
            b.widest_in("attn.out_proj"),
        );
    }
    check(
        "attention output (o_proj in)",
        c.attn_output_width(),
        b.input("o_proj", not_attention),
    );
    // LFM2 names its attention's output projection `out_proj`.
    if c.has_short_conv() {
        check(
            "attention output (self_attn.out_proj in)",
            c.attn_output_width(),
            b.widest_in("self_attn.out_proj"),
        );
    }
    check(
        "indexer q (wq_b out)",
        c.index_n_heads * c.index_head_dim,
        b.out("wq_b", &[]),
    );
    check("indexer k (wk out)", c.index_head_dim, b.out("wk", &[]));

    // Laguna's output gate of the attention input, held in qkv_output.
    check(
        "output gate (g_proj out)",
        c.extra_qkv_width,
        b.out("g_proj", not_attention),
    );

    // DeepSeek-V4: one K=V head, the grouped O projection, the hyper-connections, the
    // compressors and the indexer (modeling_deepseek_v4.py).
    if let Some(kv) = b.out("kv_proj", not_attention) {
        check(
            "one K=V head (kv_proj out)",
            c.num_key_value_heads * c.head_dim(),
            Some(kv),
        );
    }
    if let Some(o_a) = b.linear("o_a_proj", not_attention).first() {
        // DeepseekV4GroupedLinear: each of the o_groups groups maps heads · head_dim /
        // o_groups inputs to o_lora_rank outputs.
        check(
            "attention output (o_groups · o_a_proj in)",
            c.attn_output_width(),
            Some(c.o_groups * o_a.0),
        );
        check("O latent (o_a_proj out)", c.o_latent_width(), Some(o_a.1));
        check(
            "O latent (o_b_proj in)",
            c.o_latent_width(),
            b.input("o_b_proj", not_attention),
        );
    }
    if let Some(fn_shape) = b.param("attn_hc.fn") {
        // DeepseekV4HyperConnection: fn is [(2 + hc_mult) · hc_mult, hc_mult · hidden].
        check(
            "hyper-connection streams (fn in)",
            c.hc_mult * c.hidden_size,
            Some(fn_shape[1]),
        );
        check(
            "hyper-connection pre, post and comb (fn out)",
            (2 + c.hc_mult) * c.hc_mult,
            Some(fn_shape[0]),
        );
    }
    check(
        "indexer q (indexer q_b_proj out)",
        c.index_n_heads * c.index_head_dim,
        b.widest_out("compressor.indexer.q_b_proj"),
    );
    check(
        "indexer heads (weights_proj out)",
        c.index_n_heads,
        b.out("weights_proj", &[]),
    );
    if let Some(bias) = b.param("indexer.position_bias") {
        // DeepseekV4Indexer: position_bias is [compress_rate, 2 · index_head_dim].
        check(
            "indexer compress rate",
            c.index_compress_ratio,
            Some(bias[0]),
        );
        check(
            "indexer kv (2 · index_head_dim)",
            2 * c.index_head_dim,
            Some(bias[1]),
        );
    }
    if let Some(compressor) = b.widest_out("self_attn.compressor.kv_proj") {
        let widest = 2 * compressor + dsv4_indexer_projections(b);
        check(
            "compressor and indexer projections (widest layer)",
            c.extra_qkv_width,
            Some(widest),
        );
    }

    // Dense FFN (not experts, not shared experts, not the Mamba mixer's own projections, not
    // an attention's output gate: AFMoE's `self_attn.gate_proj`).
    let not_dense = &[
        "self_attn",
        "experts",
        "shared_expert",
        "compressor",
        "linear_attn",
        "vision",
        "visual",
    ][..];
    let dense_up = b
        .out("gate_proj", not_dense)
        .or(b.out("w1", not_dense))
        .or(b.out("gate_up_proj", not_dense).map(|w| w / 2))
        .or(b.out("up_proj", not_dense))
        .or(b.out("c_fc", not_dense))
        .or(b.out("fc_in", not_dense))
        .or(b.out("fc1", not_dense))
        .or(b.out("dense_h_to_4h", not_dense));
    check("dense FFN width", c.intermediate_size, dense_up);
    check(
        "dense FFN width (mlp.c_proj in)",
        c.intermediate_size,
        b.input("c_proj", &["attn"]),
    );

    // Experts: fused [E, 2I, H] / [E, H, 2I] (or Nemotron-H's up-only [E, I, H]).
    if let Some(shape) = b.param("experts.gate_up_proj") {
        check("routed experts", c.num_experts, Some(shape[0]));
        let two_i = if shape[1] == c.hidden_size {
            shape[2]
        } else {
            shape[1]
        };
        check(
            "routed expert width",
            c.moe_intermediate_size,
            Some(two_i / 2),
        );
    } else if let Some(shape) = b.param("experts.up_proj") {
        check("routed experts", c.num_experts, Some(shape[0]));
        check(
            "routed expert width",
            c.moe_intermediate_size,
            Some(shape[1]),
        );
    }
    // DBRX's `DbrxExpertGLU`: w1, v1 and w2 each [experts · width, hidden].
    if let Some(shape) = b.param("experts.mlp.w1") {
        check(
            "routed experts · width (w1 rows)",
            c.num_experts * c.moe_intermediate_size,
            Some(shape[0]),
        );
    }
    // Latent MoE (Nemotron-3, `NemotronHMoE`): the routed experts read and write
    // `moe_latent_size` between fc1_latent_proj and fc2_latent_proj; a config with a latent
    // must find those projections in the reference.
    let fc1 = b.out("fc1_latent_proj", &[]);
    if c.moe_latent_size > 0 || fc1.is_some() {
        check(
            "expert latent (fc1_latent_proj out)",
            c.moe_latent_size,
            Some(fc1.unwrap_or(0)),
        );
        check(
            "expert latent (fc2_latent_proj in)",
            c.moe_latent_size,
            b.input("fc2_latent_proj", &[]),
        );
        let up = b.param("experts.up_proj");
        check(
            "expert input (up_proj [E, I, latent])",
            c.moe_latent_size,
            up.map(|s| s[2]),
        );
        let down = b.param("experts.down_proj");
        check(
            "expert output (down_proj [E, latent, I])",
            c.moe_latent_size,
            down.map(|s| s[1]),
        );
    }
    let router = b
        .param("gate.weight")
        .or(b.param("router.weight"))
        .map(|s| s[0])
        .or(b.out("router", &[]))
        .or(b.widest_out("ffn.router.layer"));
    check("router columns", c.num_experts, router);
    let shared = b
        .modules
        .iter()
        .filter(|(p, _)| p.contains("shared_expert") && p.ends_with(".up_proj"))
        .map(|(_, r)| r[0]["out"].as_u64().unwrap() as usize)
        .next();
    check(
        "shared expert width",
        c.shared_expert_intermediate_size,
        shared,
    );

    // Gated DeltaNet: fused qkvz + ba (Qwen3-Next) or split qkv / z / b / a (Qwen3.5).
    let qkvz = b
        .out("in_proj_qkvz", &[])
        .or_else(|| Some(b.out("in_proj_qkv", &[])? + b.out("in_proj_z", &[])?));
    check("GDN in_proj_qkvz", c.ssm_qkvz_size(), qkvz);
    let ba = b
        .out("in_proj_ba", &[])
        .or_else(|| Some(b.out("in_proj_b", &[])? + b.out("in_proj_a", &[])?));
    check("GDN in_proj_ba", 2 * c.linear_num_value_heads, ba);
    if c.has_gdn() {
        check("GDN conv channels", c.gdn_conv_dim(), b.out("conv1d", &[]));
        check(
            "GDN value dim (out_proj in)",
            c.gdn_value_dim(),
            b.input("out_proj", &[]),
        );
    }

    // Short convolution (LFM2, `Lfm2ShortConv`): in_proj H → 3H, a depthwise conv over H
    // channels, out_proj; one conv per short-conv layer.
    if c.has_short_conv() || b.count("conv.conv") > 0 {
        check(
            "short-conv layers (conv.conv modules)",
            c.num_short_conv_layers(),
            Some(b.count("conv.conv")),
        );
        check(
            "short-conv B | C | x (conv.in_proj out)",
            c.short_conv_in_width(),
            b.widest_out("conv.in_proj"),
        );
        check(
            "short-conv channels (conv.conv out)",
            c.short_conv_dim,
            b.widest_out("conv.conv"),
        );
        check(
            "short-conv channels (conv.out_proj in)",
            c.short_conv_dim,
            b.widest_in("conv.out_proj"),
        );
    }

    // Lightning attention (MiniMax, `MiniMaxLightningAttention`): qkv_proj H → 3 · heads ·
    // head_dim, output_gate H → heads · head_dim, out_proj back; one output gate per layer.
    if c.has_lightning() || b.count("self_attn.output_gate") > 0 {
        check(
            "lightning layers (output_gate modules)",
            c.num_lightning_layers(),
            Some(b.count("self_attn.output_gate")),
        );
        check(
            "lightning q | k | v (qkv_proj out)",
            3 * c.lightning_width(),
            b.widest_out("self_attn.qkv_proj"),
        );
        check(
            "lightning gate (output_gate out)",
            c.lightning_width(),
            b.widest_out("self_attn.output_gate"),
        );
        check(
            "lightning output (out_proj in)",
            c.lightning_width(),
            b.widest_in("self_attn.out_proj"),
        );
    }

    // Kimi delta attention (Kimi-Linear, `KimiLinearDeltaAttention`): q, k, v each heads ·
    // head_dim, one conv over the three, the low-rank forget and output gates, β per head,
    // o_proj; one conv per KDA layer.
    let kda = |suffix: &str| b.widest_out(&format!("{KDA}].{suffix}"));
    if c.has_kda() || b.count(&format!("{KDA}].conv1d")) > 0 {
        check(
            "KDA layers (conv1d modules)",
            c.num_kda_layers(),
            Some(b.count(&format!("{KDA}].conv1d"))),
        );
        for proj in ["q_proj", "k_proj", "v_proj"] {
            check(
                "KDA heads · head_dim (q/k/v_proj out)",
                c.kda_width(),
                kda(proj),
            );
        }
        check(
            "KDA conv channels (conv1d out)",
            3 * c.kda_width(),
            kda("conv1d"),
        );
        check(
            "KDA low rank (f_a_proj out)",
            c.kda_head_dim,
            kda("forget_gate.f_a_proj"),
        );
        check(
            "KDA decay (f_b_proj out)",
            c.kda_width(),
            kda("forget_gate.f_b_proj"),
        );
        check(
            "KDA low rank (g_a_proj out)",
            c.kda_head_dim,
            kda("g_a_proj"),
        );
        check(
            "KDA output gate (g_b_proj out)",
            c.kda_width(),
            kda("g_b_proj"),
        );
        check("KDA β (b_proj out)", c.kda_heads, kda("b_proj"));
        check(
            "KDA output (o_proj in)",
            c.kda_width(),
            b.widest_in(&format!("{KDA}].o_proj")),
        );
        if let Some(a_log) = b.param("forget_gate.A_log") {
            check("KDA heads (A_log)", c.kda_heads, Some(a_log[2]));
        }
    }

    // Per-layer input embeddings (Gemma 4 E-models): one L · P embedding of every token, its
    // projection from the embeddings, and each layer's P-wide gate and projection back.
    let ple = b.out("embed_tokens_per_layer", &[]);
    if c.has_per_layer_inputs() || ple.is_some() {
        check(
            "per-layer inputs (embed_tokens_per_layer out)",
            c.per_layer_inputs_width,
            Some(ple.unwrap_or(0)),
        );
        check(
            "per-layer inputs (per_layer_model_projection out)",
            c.per_layer_inputs_width,
            b.out("per_layer_model_projection", &[]),
        );
        check(
            "per-layer input width (per_layer_input_gate out)",
            c.per_layer_input_dim,
            b.out("per_layer_input_gate", &[]),
        );
        check(
            "per-layer input width (per_layer_projection in)",
            c.per_layer_input_dim,
            b.input("per_layer_projection", &[]),
        );
        check(
            "layers with a per-layer input",
            c.num_hidden_layers,
            Some(b.count("per_layer_input_gate")),
        );
    }

    // Mamba-2.
    if c.has_mamba() {
        check(
            "Mamba-2 in_proj",
            c.mamba_in_proj_width(),
            b.out("in_proj", &[]),
        );
        check(
            "Mamba-2 conv channels",
            c.mamba_conv_dim(),
            b.out("conv1d", &[]),
        );
        check(
            "Mamba-2 d_inner (out_proj in)",
            c.mamba_d_inner(),
            b.input("out_proj", &[]),
        );
    }
    eq
}
