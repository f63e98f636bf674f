//! The independent oracle: the widths of the modules the reference implementation
//! (transformers, on PyTorch's `meta` device) builds for every shipped config, written to
//! `tests/oracle/widths.json` by `tests/oracle/widths.py` (run by hand), checked against the
//! arena's widths and buffer dims. Our formulas are not consulted for the expected values:
//! each check reads a module shape from the oracle and compares it with what the arena sizes.
//!
//! Two kinds of check: the config's derived widths equal the reference's (q/k/v/o, MLA
//! ranks, indexer, dense and expert widths, experts, router, GDN and Mamba-2 projections and
//! convs); and every buffer that holds a module's output is at least that output's width
//! (no kernel writes past its buffer).

use arena_spec::models::SHIPPED;
use arena_spec::report::SizeReport;
use arena_spec::{ArenaInputs, ModelConfig};
use serde_json::Value;
use std::collections::BTreeMap;

fn oracle() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracle/widths.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A module pattern without the owner classes the oracle names where two classes of mixer
/// share a path (`self_attn[KimiLinearDeltaAttention].q_proj` → `self_attn.q_proj`).
fn plain(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut depth = 0;
    for ch in pattern.chars() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ if depth == 0 => out.push(ch),
            _ => {}
        }
    }
    out
}

/// Whether a module pattern ends with `suffix`, as written (owner classes included) or
/// without its owner classes.
fn ends_with(pattern: &str, suffix: &str) -> bool {
    pattern.ends_with(suffix) || plain(pattern).ends_with(suffix)
}

/// The owner class the oracle names on Kimi-Linear's delta-attention modules.
const KDA: &str = "KimiLinearDeltaAttention";

/// One model's modules and parameters by pattern.
struct Built<'a> {
    modules: &'a serde_json::Map<String, Value>,
    params: &'a serde_json::Map<String, Value>,
    /// The family's layers differ in width (`FamilyRules::layer_widths`): a module's width is
    /// its widest layer's, which is what the arena sizes; elsewhere every layer must agree.
    per_layer: bool,
}

impl Built<'_> {
    /// Records of the modules whose last path component is `name`, outside `exclude`.
    fn linear(&self, name: &str, exclude: &[&str]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (pattern, records) in self.modules {
            let last = pattern.rsplit('.').next().unwrap();
            let plain = plain(pattern);
            let excluded = exclude
                .iter()
                .any(|x| pattern.contains(x) || plain.contains(x));
            if last != name || excluded {
                continue;
            }
            for r in records.as_array().unwrap() {
                out.push((
                    r["in"].as_u64().unwrap() as usize,
                    r["out"].as_u64().unwrap() as usize,
                ));
            }
        }
        out
    }

    /// The one output width of the modules called `name` (all layers agree), if any.
    fn out(&self, name: &str, exclude: &[&str]) -> Option<usize> {
        self.one(name, exclude, |(_, out)| out)
    }

    /// The one input width of the modules called `name`, if any.
    fn input(&self, name: &str, exclude: &[&str]) -> Option<usize> {
        self.one(name, exclude, |(input, _)| input)
    }

    fn one(
        &self,
        name: &str,
        exclude: &[&str],
        pick: impl Fn((usize, usize)) -> usize,
    ) -> Option<usize> {
        let widths: Vec<usize> = self.linear(name, exclude).into_iter().map(pick).collect();
        if self.per_layer {
            return widths.into_iter().max();
        }
        assert!(
            widths.windows(2).all(|w| w[0] == w[1]),
            "{name}: layers disagree: {widths:?}"
        );
        widths.first().copied()
    }

    /// One number (`"in"`, `"out"` or `"count"`) of every record of the modules at paths
    /// ending with `suffix`.
    fn each(&self, suffix: &str, field: &'static str) -> impl Iterator<Item = usize> + '_ {
        let suffix = suffix.to_string();
        self.modules
            .iter()
            .filter(move |(p, _)| ends_with(p, &suffix))
            .flat_map(|(_, records)| records.as_array().unwrap())
            .map(move |r| r[field].as_u64().unwrap() as usize)
    }

    /// The widest output of the modules at paths ending with `suffix` (their layers may
    /// differ: DeepSeek-V4's CSA and HCA compressors), if any.
    fn widest_out(&self, suffix: &str) -> Option<usize> {
        self.each(suffix, "out").max()
    }

    /// The widest input of the modules at paths ending with `suffix`, if any.
    fn widest_in(&self, suffix: &str) -> Option<usize> {
        self.each(suffix, "in").max()
    }

    /// How many modules (over every layer) sit at paths ending with `suffix`.
    fn count(&self, suffix: &str) -> usize {
        self.each(suffix, "count").sum()
    }

    /// Shapes of the parameters whose pattern ends with `suffix`.
    fn param(&self, suffix: &str) -> Option<Vec<usize>> {
        self.params
            .iter()
            .find(|(p, _)| p.ends_with(suffix))
            .map(|(_, records)| {
                records[0]["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_u64().unwrap() as usize)
                    .collect()
            })
    }
}

/// DeepSeek-V4's indexer projections of the attention input per token: its compressor's kv
/// and gate, and the scorer's head weights (0 for any other model).
fn dsv4_indexer_projections(b: &Built) -> usize {
    [
        "compressor.indexer.kv_proj",
        "compressor.indexer.gate_proj",
        "compressor.indexer.scorer.weights_proj",
    ]
    .into_iter()
    .filter_map(|suffix| b.widest_out(suffix))
    .sum()
}

/// Checks for one model: (what, arena, reference), equal widths.
fn width_checks(c: &ModelConfig, b: &Built) -> Vec<(&'static str, usize, usize)> {
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
    check(
        "q projection (q_proj out)",
        c.q_proj_width(),
        b.out("q_proj", not_attention),
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
    // (MiniMax's lightning layers also have a `qkv_proj`, checked with their kind below.)
    if let Some(qkv) = b
        .out("qkv_proj", not_attention)
        .filter(|_| !c.has_lightning())
    {
        check(
            "fused qkv_proj out",
            c.q_proj_width() + c.kv_proj_width(),
            Some(qkv),
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

    // Dense FFN (not experts, not shared experts, not the Mamba mixer's own projections).
    let not_dense = &[
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
        .or(b.out("up_proj", not_dense));
    check("dense FFN width", c.intermediate_size, dense_up);

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
        .or(b.out("router", &[]));
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

/// Every buffer holding a module's output is at least as wide as that output.
fn buffer_checks(c: &ModelConfig, b: &Built, dims: &BTreeMap<&str, Vec<usize>>) -> Vec<String> {
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

#[test]
fn every_shipped_config_matches_the_reference_modules() {
    let oracle = oracle();
    let models = oracle["models"].as_object().unwrap();
    // Every shipped vendor file, and the test fixtures of families without one.
    // Every family transformers builds: the synthetic files follow no reference, and
    // nemotron-nas's is NVIDIA's remote code (hand-checked in `tests/nemotron_nas.rs`).
    let mut configs: Vec<(String, ModelConfig)> = SHIPPED
        .iter()
        .filter(|m| {
            !m.is_synthetic()
                && m.config_with_levers(Default::default())
                    .is_ok_and(|c| c.family.rules().reference.is_some())
        })
        .map(|m| {
            let config = m.config_with_levers(Default::default()).unwrap();
            (m.name.to_string(), config)
        })
        .collect();
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    for entry in std::fs::read_dir(fixtures).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let config = ModelConfig::load_with_levers(&path, Default::default()).unwrap();
        configs.push((name, config));
    }
    let mut failures = Vec::new();
    for (name, config) in &configs {
        let entry = models
            .get(name.as_str())
            .unwrap_or_else(|| panic!("{name}: no oracle entry; re-run tests/oracle/widths.py"));
        assert!(entry["error"].is_null(), "{name}: {}", entry["error"]);
        let built = Built {
            modules: entry["modules"].as_object().unwrap(),
            params: entry["params"].as_object().unwrap(),
            per_layer: config.family.rules().layer_widths.is_some(),
        };
        let widths = width_checks(config, &built);
        assert!(
            widths.len() >= 5,
            "{name}: only {} widths could be compared",
            widths.len()
        );
        // The per-layer families' widest widths are compared, not skipped.
        let must: &[&str] = match config.model_type.as_ref() {
            "mimo_v2_flash" => &[
                "q projection (q_proj out)",
                "k + v projections",
                "attention output (o_proj in)",
            ],
            "laguna" => &[
                "q projection (q_proj out)",
                "k + v projections",
                "output gate (g_proj out)",
            ],
            "gemma4" => &[
                "q projection (q_proj out)",
                "k + v projections",
                "attention output (o_proj in)",
            ],
            _ => &[],
        };
        for must in must {
            assert!(
                widths.iter().any(|(what, _, _)| what == must),
                "{name}: `{must}` was not compared"
            );
        }
        // DeepSeek-V4's own modules are compared, not skipped for a name that moved.
        if config.model_type == "deepseek_v4" {
            for must in [
                "one K=V head (kv_proj out)",
                "attention output (o_groups · o_a_proj in)",
                "O latent (o_a_proj out)",
                "hyper-connection streams (fn in)",
                "hyper-connection pre, post and comb (fn out)",
                "indexer q (indexer q_b_proj out)",
                "indexer heads (weights_proj out)",
                "indexer compress rate",
                "compressor and indexer projections (widest layer)",
                "routed expert width",
                "shared expert width",
            ] {
                assert!(
                    widths.iter().any(|(what, _, _)| *what == must),
                    "{name}: `{must}` was not compared"
                );
            }
        }
        for (what, arena, reference) in &widths {
            if arena != reference {
                failures.push(format!(
                    "{name}: {what}: arena {arena}, reference {reference}"
                ));
            }
        }
        let inputs = ArenaInputs::defaults_for(config);
        // The indexer's selection (DeepSeek-V4): `qsa_select_scratch` holds, per row of a
        // slab, the scores over every compressed position of the context and the top-k list
        // the reference keeps (`DeepseekV4Indexer`: `index_scores [T, floor(L / rate)]`,
        // `top_k = min(index_topk, compressed_len)` entries).
        if let (Some(bias), Some(topk)) = (
            built.param("indexer.position_bias"),
            entry["config_echo"]["index_topk"].as_u64(),
        ) {
            let layout =
                arena_spec::arena::regions::QsaSelectScratch::layout(config, inputs.max_seq_len)
                    .unwrap();
            let rows = arena_spec::arena::constants::QSA_SLAB_ROWS;
            let need_scores = inputs.max_seq_len / bias[0] * 4;
            if layout.scores.bytes / rows < need_scores
                || layout.lists.bytes / rows < topk as usize * 4
            {
                failures.push(format!(
                    "{name}: qsa_select_scratch per row holds {} B of scores and {} B of lists, \
                     the indexer writes {need_scores} and {}",
                    layout.scores.bytes / rows,
                    layout.lists.bytes / rows,
                    topk * 4
                ));
            }
        }
        let (report, _) = SizeReport::new(config, inputs).unwrap();
        let dims: BTreeMap<&str, Vec<usize>> = report
            .buffers
            .iter()
            .map(|b| (b.name, b.shape.clone()))
            .collect();
        for f in buffer_checks(config, &built, &dims) {
            failures.push(format!("{name}: {f}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        configs.len() >= 25,
        "only {} models were checked",
        configs.len()
    );
}

/// The latent MoE files (Nemotron-3 Super and Ultra, test fixtures: the copies found are
/// rewrites): the reference builds the latent projections at the file's `moe_latent_size`,
/// and the arena's two latent buffers are M rows of exactly that width (BF16), open only for
/// them.
#[test]
fn latent_moe_files_size_their_latent_buffers_at_the_reference_width() {
    let oracle = oracle();
    for name in [
        "nemotron-3-super-120b-a12b-fp8.rewritten",
        "nemotron-3-ultra-550b-a55b.rewritten",
    ] {
        let entry = &oracle["models"][name];
        let built = Built {
            modules: entry["modules"].as_object().unwrap(),
            params: entry["params"].as_object().unwrap(),
            per_layer: false,
        };
        let latent = built.out("fc1_latent_proj", &[]).unwrap();
        let path = format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
        let config = ModelConfig::load_with_levers(&path, Default::default()).unwrap();
        assert_eq!(config.moe_latent_size, latent, "{name}");
        let inputs = ArenaInputs::defaults_for(&config);
        let sizes = inputs.sizes(&config).unwrap();
        let m = inputs.max_batch_tokens;
        assert_eq!(sizes.moe_latent_in, m * latent * 2, "{name}");
        assert_eq!(sizes.moe_latent_out, m * latent * 2, "{name}");
    }
    let dense = SHIPPED[0].config_with_levers(Default::default()).unwrap();
    let sizes = ArenaInputs::defaults_for(&dense).sizes(&dense).unwrap();
    assert_eq!((sizes.moe_latent_in, sizes.moe_latent_out), (0, 0));
}
