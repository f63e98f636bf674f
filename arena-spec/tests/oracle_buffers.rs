//! The oracle's second kind of check (`oracle.rs`): every buffer holding a module's output is
//! at least that output's width.

use crate::oracle::{dsv4_indexer_projections, Built, KDA};
use arena_spec::ModelConfig;
use std::collections::BTreeMap;

/// Every buffer holding a module's output is at least as wide as that output.
pub(crate) fn buffer_checks(
    c: &ModelConfig,
    b: &Built,
    dims: &BTreeMap<&str, Vec<usize>>,
) -> Vec<String> {
    let mut failures = Vec::new();
    let mut streams_short = None;
    let mut at_least = |buffer: &str, col: usize, need: Option<usize>, what: &str| {
        let Some(need) = need else { return };
        let have = dims[buffer].get(col).copied().unwrap_or(0);
        if have < need {
            failures.push(format!("{buffer} dim {col} = {have} < {what} = {need}"));
        }
    };
    let not_attention = &["indexer", "compressor", "linear_attn", KDA][..];
    let qkv = [
        b.out("q_a_proj", not_attention),
        b.out("q_b_proj", not_attention),
        b.out("q_proj", not_attention),
        b.out("k_proj", not_attention),
        b.out("v_proj", not_attention),
        b.out("kv_a_proj_with_mqa", not_attention),
        b.out("qkv_proj", not_attention).filter(|_| !c.has_lightning()),
    ]
    .into_iter()
    .flatten()
    .sum::<usize>()
        + b.out("kv_proj", not_attention).unwrap_or(0)
        // DeepSeek-V4's compressor (kv and gate, its widest layer) and indexer projections,
        // which this arena holds in qkv_output.
        + 2 * b.widest_out("self_attn.compressor.kv_proj").unwrap_or(0)
        + dsv4_indexer_projections(b)
        + b.out("g_proj", not_attention).unwrap_or(0);
    at_least(
        "qkv_output",
        1,
        (qkv > 0).then_some(qkv),
        "q + k + v outputs",
    );
    if let Some(o_a) = b.linear("o_a_proj", not_attention).first() {
        at_least(
            "attn_output",
            1,
            Some(c.o_groups * o_a.0),
            "o_a_proj in, every group",
        );
        at_least("o_latent", 1, Some(o_a.1), "o_a_proj out");
    }
    if let Some(fn_shape) = b.param("attn_hc.fn") {
        let streams = dims["hc_streams"].get(1).copied().unwrap_or(0)
            * dims["hc_streams"].get(2).copied().unwrap_or(0);
        at_least("hc_post", 1, Some(c.hc_mult), "post weights");
        at_least("hc_comb", 2, Some(c.hc_mult), "comb matrix");
        at_least("hc_pre", 1, Some(c.hc_mult), "pre weights");
        // Pre, post and comb together hold the fn projection's whole output a token.
        let held = dims["hc_pre"][1] + dims["hc_post"][1] + dims["hc_comb"][1] * dims["hc_comb"][2];
        assert_eq!(
            held, fn_shape[0],
            "hc_pre + hc_post + hc_comb against fn's rows"
        );
        if streams < fn_shape[1] {
            streams_short = Some(format!(
                "hc_streams holds {streams} per token < hc_mult · hidden = {}",
                fn_shape[1]
            ));
        }
    }
    at_least(
        "attn_output",
        1,
        b.input("o_proj", not_attention),
        "o_proj in",
    );
    at_least("logits", 1, b.out("lm_head", &[]), "lm_head out");
    // (LFM2's short conv also has an `in_proj`, checked against its own buffer below.)
    let ssm_in = b
        .out("in_proj_qkvz", &[])
        .or(b.out("in_proj", &["conv.in_proj"]));
    at_least("ssm_qkvz", 1, ssm_in, "SSM in_proj out");
    at_least("ssm_deinterleaved", 1, ssm_in, "SSM in_proj out");
    at_least(
        "ssm_conv_out_f32",
        1,
        b.out("conv1d", &[KDA]),
        "conv channels",
    );
    // The expert buffers hold M · top_k rows of the widest FFN intermediate.
    let widest_expert = [
        b.param("experts.gate_up_proj")
            .map(|s| (if s[1] == c.hidden_size { s[2] } else { s[1] }) / 2),
        b.param("experts.up_proj").map(|s| s[1]),
    ]
    .into_iter()
    .flatten()
    .max();
    at_least("expert_gate_out", 1, widest_expert, "routed expert width");
    at_least("expert_up_out", 1, widest_expert, "routed expert width");
    at_least("expert_down_out", 1, Some(c.hidden_size), "hidden");
    // Short convolution: B | C | x, then B · x and the gated conv output, H channels each.
    at_least(
        "short_conv_bcx",
        1,
        b.widest_out("conv.in_proj"),
        "conv.in_proj out",
    );
    at_least(
        "short_conv_bx",
        1,
        b.widest_out("conv.conv"),
        "conv channels",
    );
    at_least(
        "short_conv_out",
        1,
        b.widest_in("conv.out_proj"),
        "conv.out_proj in",
    );
    at_least(
        "fp8_act",
        1,
        b.widest_in("conv.out_proj"),
        "a projection's K",
    );
    // Per-layer input embeddings.
    at_least(
        "per_layer_inputs",
        1,
        b.out("embed_tokens_per_layer", &[]),
        "embed_tokens_per_layer out",
    );
    at_least(
        "per_layer_inputs_proj",
        1,
        b.out("per_layer_model_projection", &[]),
        "per_layer_model_projection out",
    );
    at_least(
        "per_layer_gate",
        1,
        b.out("per_layer_input_gate", &[]),
        "per_layer_input_gate out",
    );
    at_least(
        "per_layer_out",
        1,
        b.out("per_layer_projection", &[]),
        "per_layer_projection out",
    );
    // Kimi delta attention: every per-token tensor of the mixer.
    if c.has_kda() {
        let kda = |suffix: &str| b.widest_out(&format!("{KDA}].{suffix}"));
        let qkv = ["q_proj", "k_proj", "v_proj"]
            .map(kda)
            .into_iter()
            .flatten()
            .sum();
        at_least("kda_qkv", 1, Some(qkv), "q + k + v outputs");
        at_least("kda_qkv_conv", 1, kda("conv1d"), "conv1d out");
        let lowrank = [kda("forget_gate.f_a_proj"), kda("g_a_proj")]
            .into_iter()
            .flatten()
            .sum();
        at_least(
            "kda_lowrank",
            1,
            Some(lowrank),
            "f_a_proj + g_a_proj outputs",
        );
        at_least(
            "kda_decay_f32",
            1,
            kda("forget_gate.f_b_proj"),
            "f_b_proj out",
        );
        at_least("kda_beta_f32", 1, kda("b_proj"), "b_proj out");
        at_least("kda_out_gate", 1, kda("g_b_proj"), "g_b_proj out");
        let o_in = b.widest_in(&format!("{KDA}].o_proj"));
        at_least("kda_out", 1, o_in, "o_proj in");
        at_least("fp8_act", 1, o_in, "a projection's K");
    }
    // Lightning attention: q | k | v, the gate and the output.
    if c.has_lightning() {
        at_least(
            "lightning_qkv",
            1,
            b.widest_out("self_attn.qkv_proj"),
            "qkv_proj out",
        );
        at_least(
            "lightning_gate",
            1,
            b.widest_out("self_attn.output_gate"),
            "output_gate out",
        );
        at_least(
            "lightning_out",
            1,
            b.widest_in("self_attn.out_proj"),
            "out_proj in",
        );
        at_least(
            "fp8_act",
            1,
            b.widest_in("self_attn.out_proj"),
            "a projection's K",
        );
    }
    // Latent MoE: the experts' output rows are latent wide (`NemotronHExperts.down_proj` is
    // `[E, latent, I]`; other families lay their experts out otherwise).
    let down_out = b
        .out("fc1_latent_proj", &[])
        .and(b.param("experts.down_proj"))
        .map(|s| s[1]);
    at_least("expert_down_out", 1, down_out, "experts' down_proj out");
    at_least(
        "moe_latent_in",
        1,
        b.out("fc1_latent_proj", &[]),
        "fc1_latent_proj out",
    );
    at_least(
        "moe_latent_out",
        1,
        b.input("fc2_latent_proj", &[]),
        "fc2_latent_proj in",
    );
    // Every K the FP8 prefill projections quantize: hidden (q/k/v, in_proj, experts' input),
    // the attention output, the SSM value / inner width.
    let ks = [
        b.input("o_proj", not_attention),
        b.input("out_proj", &[]),
        b.input("q_proj", not_attention),
        b.input("in_proj", &[]),
    ];
    for k in ks.into_iter().flatten() {
        at_least("fp8_act", 1, Some(k), "a projection's K");
    }
    failures.extend(streams_short);
    failures
}
