//! The parameter count against the reference: transformers' own modules, built on PyTorch's
//! meta device from each shipped file (`tests/oracle/widths.json`, `param_count`: every
//! parameter tensor's elements, a tied matrix once). Every shipped file of a counted family
//! must match exactly; every other family is refused by name, never estimated.

use arena_spec::models::SHIPPED;
use arena_spec::weights::{
    counted_model_types, parameters, weight_bytes, WeightFormat, WeightFormats, WeightLayers,
    WeightsError, WeightsSizes,
};
use arena_spec::ModelConfig;
use arena_spec::ParallelLayout;
use serde_json::Value;

use crate::shipped;
use shipped::config;

fn oracle() -> Value {
    serde_json::from_str(include_str!("oracle/widths.json")).unwrap()
}

/// Every shipped model the oracle builds is counted to its parameter; the one it cannot build
/// (DeciLM's: transformers has no such model) is held to vLLM's module
/// (`nemotron_nas::decilm_parameters`).
#[test]
fn every_shipped_model_is_counted_exactly_against_its_reference() {
    let oracle = oracle();
    let (mut matched, mut by_vllm) = (Vec::new(), Vec::new());
    // The synthetic files turn on features no family has together: no reference builds them.
    for m in SHIPPED.iter().filter(|m| !m.is_synthetic()) {
        let c = m.config_with_levers(Default::default()).unwrap();
        let p = parameters(&c).unwrap_or_else(|e| panic!("{e}"));
        let Some(record) = oracle["models"].get(m.name) else {
            let file: Value = serde_json::from_str(m.json).unwrap();
            assert_eq!(
                p,
                crate::nemotron_nas::decilm_parameters(&file),
                "{}",
                m.name
            );
            by_vllm.push(m.name);
            continue;
        };
        let want = record["param_count"].as_u64().unwrap();
        assert_eq!(p, want, "{}: {}", m.name, p as i64 - want as i64);
        assert_eq!(
            WeightLayers::of(&c, false).unwrap().lm_head == 0,
            record["tied_embeddings"].as_bool().unwrap(),
            "{}: tied",
            m.name
        );
        matched.push(m.name);
    }
    assert!(matched.len() >= 47, "{matched:?}");
    assert_eq!(by_vllm, ["llama-3.3-nemotron-super-49b-v1"]);
}

/// The reference's sizes at 16 bits (two bytes an element), the vocabulary unpadded.
fn sizes(c: &ModelConfig) -> WeightsSizes {
    WeightsSizes::with_layers(
        c,
        &WeightLayers::of(c, false).unwrap(),
        &WeightFormats::BF16,
    )
    .unwrap()
}

#[test]
fn ranks_hold_their_share() {
    let c = config("llama-3.1-8b");
    let whole = sizes(&c);
    // tp 2: every matrix halves (the vocabulary 128,256 is a multiple of 64); norms whole.
    let layout = ParallelLayout::new(2, 1, 1).unwrap();
    let rank = sizes(&c.shard(&layout.rank(0).unwrap()).unwrap());
    for (r, w) in [
        (rank.attention.q_proj, whole.attention.q_proj),
        (rank.attention.k_proj, whole.attention.k_proj),
        (rank.attention.o_proj, whole.attention.o_proj),
        (rank.ffn.gate_proj, whole.ffn.gate_proj),
        (rank.ffn.down_proj, whole.ffn.down_proj),
        (rank.model.embed_tokens, whole.model.embed_tokens),
        (rank.model.lm_head, whole.model.lm_head),
    ] {
        assert_eq!(r * 2, w);
    }
    assert_eq!(rank.model.layer_norms, whole.model.layer_norms);
    assert_eq!(rank.model.norm, whole.model.norm);
    // The vocabulary padded to 64 before the split (vLLM's VocabParallelEmbedding).
    let qwen = config("qwen3-0.6b");
    let rank = sizes(&qwen.shard(&layout.rank(1).unwrap()).unwrap());
    assert_eq!(
        rank.model.embed_tokens,
        2 * 151_936usize.div_ceil(64) * 64 / 2 * 1024
    );
    // pp 2: the stages' counts add up to the whole model's.
    let layout = ParallelLayout::new(1, 1, 2).unwrap();
    let staged: u64 = (0..2)
        .map(|i| parameters(&c.shard(&layout.rank(i).unwrap()).unwrap()).unwrap())
        .sum();
    assert_eq!(staged, parameters(&c).unwrap());
    // Laguna at tp 2: its full layers' 48 heads and its sliding layers' 64 split apart.
    let laguna = config("laguna-xs.2-fp8");
    let layout = ParallelLayout::new(2, 1, 1).unwrap();
    let rank = sizes(&laguna.shard(&layout.rank(0).unwrap()).unwrap());
    let whole = sizes(&laguna);
    assert_eq!(rank.attention.q_proj * 2, whole.attention.q_proj);
    assert_eq!(rank.attention.full_q_proj * 2, whole.attention.full_q_proj);
    assert_eq!(whole.attention.full_q_proj, 2 * 10 * 48 * 128 * 2048);
}

#[test]
fn bytes_follow_each_formats_definition() {
    // Unquantized: two bytes an element (Llama 3.1's 128,256 rows are a multiple of 64).
    let llama = config("llama-3.1-8b");
    assert_eq!(llama.weight_formats, WeightFormats::BF16);
    assert_eq!(weight_bytes(&llama).unwrap(), 2 * 8_030_261_248);
    // The vocabulary padded to 64 rows as an engine allocates it, even on one GPU: OLMo 3's
    // 100,278 rows are 100,288, its embedding and head 10 rows more each than counted.
    let olmo = config("olmo-3.1-32b-instruct");
    let counted = parameters(&olmo).unwrap();
    assert_eq!(weight_bytes(&olmo).unwrap(), 2 * (counted + 2 * 10 * 5120));

    // DeepSeek-V3's block-scaled FP8: a byte an element of every linear and expert matrix and
    // a 4-byte scale a 128 × 128 block of it; the rest in 16 bits. Transcribed here from the
    // tensor list by shape, against the format's definition.
    let ds = config("deepseek-v3");
    assert_eq!(
        ds.weight_formats,
        WeightFormats {
            source: arena_spec::FormatSource::QuantizationConfig,
            ..WeightFormats::uniform(WeightFormat::Fp8Block {
                rows: 128,
                cols: 128
            })
        }
    );
    // Transcribed from DeepSeek-V3's modules (61 layers, the first 3 dense; hidden 7168;
    // q_lora 1536, kv_lora 512, rope 64, nope 128, v 128, 128 heads; dense 18432, 256
    // experts and one shared of 2048; vocabulary 129,280 = 2020 × 64).
    let fp8 = |out: u64, inp: u64| out * inp + 4 * out.div_ceil(128) * inp.div_ceil(128);
    let (h, layers, moe) = (7168u64, 61u64, 58u64);
    let attention = fp8(1536, h)
        + fp8(128 * 192, 1536)
        + fp8(576, h)
        + fp8(128 * 256, 512)
        + fp8(h, 128 * 128)
        + 2 * (1536 + 512);
    let dense = 2 * fp8(18432, h) + fp8(h, 18432);
    let experts = 256 * (2 * fp8(2048, h) + fp8(h, 2048)) + 2 * 256 * h;
    let shared = 2 * fp8(2048, h) + fp8(h, 2048);
    let want = 2 * 2 * 129_280 * h
        + 2 * h
        + layers * (attention + 2 * 2 * h)
        + 3 * dense
        + moe * (experts + shared);
    assert_eq!(weight_bytes(&ds).unwrap(), want);
    // One of its matrices by hand: kv_a_proj_with_mqa [576, 7168], 61 layers: 5 × 56 blocks.
    let ds_sizes = WeightsSizes::new(&ds, &ds.weight_formats).unwrap();
    assert_eq!(
        ds_sizes.latent.kv_a_proj_with_mqa,
        61 * (576 * 7168 + 4 * 5 * 56)
    );

    // gpt-oss's MXFP4 experts: half a byte an element and a scale byte a 32; the rest,
    // expert biases included, in 16 bits.
    let oss = config("gpt-oss-20b");
    assert_eq!(
        oss.weight_formats.experts,
        arena_spec::Mxfp4Backend::Triton.format()
    );
    assert_eq!(oss.weight_formats.attention, WeightFormat::Bf16);
    let p = parameters(&oss).unwrap();
    let s = sizes(&oss);
    let experts = (s.ffn.experts_gate_up + s.ffn.experts_down) as u64 / 2;
    assert_eq!(experts % 32, 0);
    assert_eq!(
        weight_bytes(&oss).unwrap(),
        experts / 2 + experts / 32 + 2 * (p - experts)
    );

    // A quantization without a formula here is refused, not guessed.
    let mut bnb: serde_json::Value = serde_json::from_str(
        SHIPPED
            .iter()
            .find(|m| m.name == "qwen3-0.6b")
            .unwrap()
            .json,
    )
    .unwrap();
    bnb["quantization_config"] = serde_json::json!({"quant_method": "bitsandbytes"});
    let bnb = arena_spec::ModelConfig::from_json_str(&bnb.to_string(), "bnb.json").unwrap();
    assert!(bnb.weight_formats.is_unplanned());
    let e = weight_bytes(&bnb).unwrap_err().to_string();
    assert!(e.contains("quant_method is \"bitsandbytes\""), "{e}");
    // Block FP8 that keeps some linears in 16 bits, named under either key as vLLM's
    // `Fp8Config` names them (exact module names), has those parts in 16 bits.
    let text = SHIPPED
        .iter()
        .find(|m| m.name == "deepseek-v3")
        .unwrap()
        .json;
    let fp8 = weight_bytes(&ds).unwrap();
    for key in ["modules_to_not_convert", "ignored_layers"] {
        let listed = text.replacen(
            "\"quant_method\": \"fp8\",",
            &format!(
                "\"quant_method\": \"fp8\", \"{key}\": [\"model.layers.0.mlp.gate_proj\", \
                 \"model.layers.0.mlp.up_proj\", \"model.layers.0.mlp.down_proj\"],"
            ),
            1,
        );
        assert_ne!(listed, text, "{key}");
        let c = arena_spec::ModelConfig::from_json_str(&listed, "listed.json").unwrap();
        assert_eq!(c.weight_formats.dense_ffn, WeightFormat::Bf16, "{key}");
        assert_eq!(c.weight_formats.experts, ds.weight_formats.experts, "{key}");
        // The three dense layers' FFNs in 16 bits (a part is one format): 2 bytes an element
        // where they were one and a scale a block.
        let dense = 3 * (2 * (18432 * 7168) + 18432 * 7168);
        let scales = 3 * 4 * (2 * 144 * 56 + 56 * 144);
        assert_eq!(weight_bytes(&c).unwrap(), fp8 + dense - scales, "{key}");
        // A name no module has changes nothing, as in vLLM's exact match.
        let loose = text.replacen(
            "\"quant_method\": \"fp8\",",
            &format!("\"quant_method\": \"fp8\", \"{key}\": [\"gate\", \"model.layers.0.mlp\"],"),
            1,
        );
        let c = arena_spec::ModelConfig::from_json_str(&loose, "loose.json").unwrap();
        assert_eq!(weight_bytes(&c).unwrap(), fp8, "{key}");
    }
    // DeepSeek-V4: FP8 blocks with its experts in MXFP4 (`expert_dtype: "fp4"`), as vLLM's
    // `DeepseekV4FP8Config` loads them: 17 bytes a block of 32 of each expert row.
    let v4 = config("deepseek-v4-flash");
    assert_eq!(
        v4.weight_formats.experts,
        arena_spec::Mxfp4Backend::Triton.format()
    );
    assert!(matches!(
        v4.weight_formats.attention,
        WeightFormat::Fp8Block { .. }
    ));
    let s = WeightsSizes::new(&v4, &v4.weight_formats).unwrap();
    let (e, h, i) = (256usize, 4096usize, 2048usize);
    assert_eq!(s.ffn.experts_down, 43 * e * h * (i / 32) * 17);
    // NVIDIA's NVFP4 recipe for it (`moe_quant_algo: NVFP4`): the experts in NVFP4.
    let mut file: serde_json::Value = serde_json::from_str(
        SHIPPED
            .iter()
            .find(|m| m.name == "deepseek-v4-flash")
            .unwrap()
            .json,
    )
    .unwrap();
    file["quantization_config"]["moe_quant_algo"] = "NVFP4".into();
    let c = arena_spec::ModelConfig::from_json_str(&file.to_string(), "v4.json").unwrap();
    assert_eq!(c.weight_formats.experts, WeightFormat::Nvfp4 { group: 16 });
    assert!(weight_bytes(&c).unwrap() > weight_bytes(&v4).unwrap());
    // An expert dtype vLLM does not load is refused by name.
    file["expert_dtype"] = "int2".into();
    let c = arena_spec::ModelConfig::from_json_str(&file.to_string(), "v4.json").unwrap();
    assert!(matches!(
        weight_bytes(&c),
        Err(WeightsError::FormatNotPlanned { .. })
    ));
}

#[test]
fn the_declarations_allocate_with_a_view_a_layer() {
    use arena_runtime::HostDevice;
    use arena_spec::weights::{AllocatedWeights, AttentionWeightsViews};
    // Qwen3-0.6B's rank 0 of tp 8 (28 layers; 2 of its 16 heads, 1 of its 8 kv heads).
    let layout = ParallelLayout::new(8, 1, 1).unwrap();
    let c = config("qwen3-0.6b")
        .shard(&layout.rank(0).unwrap())
        .unwrap();
    let s = WeightsSizes::new(&c, &c.weight_formats).unwrap();
    let w = AllocatedWeights::allocate(HostDevice::new(), &s).unwrap();
    // The slabs hold every tensor, each buffer at its 256-byte alignment.
    assert!(w.allocated_bytes() as u64 >= s.total_bytes());
    assert_eq!(w.allocated_bytes() as u64, s.device_bytes(1).unwrap());
    let views = AttentionWeightsViews::of(&w.attention);
    // Layer 27's q projection: [2 heads · 128, 1024] at 2 bytes, the last of 28 back to back.
    let q = 2 * 128 * 1024 * 2;
    assert_eq!(s.attention.q_proj, 28 * q);
    let last = views.q_proj.layer(27).unwrap();
    assert_eq!(last.shape(), [q]);
    assert_eq!(last.as_raw(), w.attention.q_proj.as_raw() + (27 * q) as u64);
    assert!(views.q_proj.layer(28).is_err());
    // No v bias, no full-layer widths: 0 bytes and NULL.
    assert!(w.attention.v_bias.is_null() && w.attention.full_q_proj.is_null());
    // A part the model does not have is an empty arena, allocated as nothing.
    assert_eq!(s.compressed.total_bytes(), 0);
    assert_eq!(w.compressed.allocated_bytes(), 0);
    assert!(w.compressed.kv_proj.is_null());
    // Tied: the head is the embedding's matrix; its 151,936 rows (a multiple of 64), an
    // eighth a rank.
    assert!(w.model.lm_head.is_null());
    assert_eq!(s.model.embed_tokens, 151_936 / 8 * 1024 * 2);
    assert!(w.ffn.experts_gate_up.is_null() && !w.ffn.gate_proj.is_null());
    w.release().unwrap();
}

#[test]
fn mxfp4_experts_on_a_rank_are_vllms_padded_tensors() {
    // gpt-oss-120b at tp 4: its expert width 2880 splits to 720, which vLLM's
    // `Mxfp4MoEMethod.create_weights` pads to 768 (a multiple of 64) and allocates as
    // `w13_weight [E, 2·768, 2880/2]`, `w13_weight_scale [E, 2·768, 2880/32]`, `w2_weight
    // [E, 2880, 768/2]`, `w2_weight_scale [E, 2880, 768/32]` (u8), `w13_bias [E, 2·768]`,
    // `w2_bias [E, 2880]` (bf16), for its 128 experts on every rank (no ep).
    let oss = config("gpt-oss-120b");
    let layout = ParallelLayout::new(4, 1, 1).unwrap();
    let rank = oss.shard(&layout.rank(0).unwrap()).unwrap();
    let s = WeightsSizes::new(&rank, &rank.weight_formats).unwrap();
    let (e, h, i) = (128usize, 2880usize, 768usize);
    let layers = 36;
    assert_eq!(
        s.ffn.experts_gate_up,
        layers * (e * 2 * i * h / 2 + e * 2 * i * h / 32)
    );
    assert_eq!(
        s.ffn.experts_down,
        layers * (e * h * i / 2 + e * h * i / 32)
    );
    assert_eq!(s.ffn.experts_gate_up_bias, layers * 2 * e * 2 * i);
    assert_eq!(s.ffn.experts_down_bias, layers * 2 * e * h);
}

#[test]
fn router_bias_buffers_are_the_references_in_fp32() {
    // Where transformers keeps `e_score_correction_bias` as a buffer, the FFN arena holds it
    // in FP32 (untracked: out of the parameter count), its elements the oracle's.
    let oracle = oracle();
    let mut checked = 0;
    for m in SHIPPED {
        let Some(record) = oracle["models"].get(m.name) else {
            continue;
        };
        let c = m.config_with_levers(Default::default()).unwrap();
        let Ok(s) = WeightsSizes::new(&c, WeightFormat::Bf16) else {
            continue;
        };
        let want: u64 = record["buffers_numel"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| k.ends_with("e_score_correction_bias"))
            .map(|(_, v)| v.as_u64().unwrap())
            .sum();
        assert_eq!(
            s.ffn.e_score_correction_bias_f32 as u64,
            4 * want,
            "{}",
            m.name
        );
        checked += u64::from(want > 0) as usize;
    }
    assert!(checked >= 12, "{checked}");
}

#[test]
fn widths_kept_whole_or_split_on_a_rank_as_engines_keep_them() {
    // OLMo 3's q and k norms span every head and stay whole on every rank (vLLM's
    // `Olmo2Attention`); its projections split.
    let olmo = config("olmo-3.1-32b-instruct");
    let whole = sizes(&olmo);
    for tp in [2, 8] {
        let layout = ParallelLayout::new(tp, 1, 1).unwrap();
        let rank = sizes(&olmo.shard(&layout.rank(0).unwrap()).unwrap());
        assert_eq!(rank.attention.q_norm, whole.attention.q_norm);
        assert_eq!(rank.attention.k_norm, whole.attention.k_norm);
        assert_eq!(rank.attention.q_proj * tp, whole.attention.q_proj);
    }
    // Gemma 4 E2B at tp 2: its 6144-wide MLPs and its KV-shared layers' 12,288-wide ones
    // each halve.
    let e2b = config("gemma-4-e2b-it");
    let whole = sizes(&e2b);
    let layout = ParallelLayout::new(2, 1, 1).unwrap();
    let rank = sizes(&e2b.shard(&layout.rank(0).unwrap()).unwrap());
    assert_eq!(whole.ffn.up_proj, 15 * 6144 * 1536 * 2);
    assert_eq!(whole.ffn.wide_up_proj, 20 * 12288 * 1536 * 2);
    assert_eq!(rank.ffn.up_proj * 2, whole.ffn.up_proj);
    assert_eq!(rank.ffn.wide_up_proj * 2, whole.ffn.wide_up_proj);
}

#[test]
fn the_stages_of_every_counted_model_add_up_to_it() {
    // Every counted shipped model cut into 2 and 3 pipeline stages: the stages' parameters
    // add up to the model's (each layer's tensors on one stage, the embedding on the first,
    // the head and final norm on the last), and a tied head once more: the last stage holds
    // its own copy of the embedding's matrix.
    let mut checked = 0;
    for m in SHIPPED {
        let c = m.config_with_levers(Default::default()).unwrap();
        let Ok(whole) = parameters(&c) else { continue };
        for pp in [2, 3] {
            let layout = ParallelLayout::new(1, 1, pp).unwrap();
            let Ok(stages) = (0..pp)
                .map(|i| c.shard(&layout.rank(i).unwrap()))
                .collect::<Result<Vec<_>, _>>()
            else {
                continue;
            };
            let sum: u64 = stages.iter().map(|s| parameters(s).unwrap()).sum();
            let w = WeightLayers::of(&c, false).unwrap();
            let head_copy = if c.tie_word_embeddings {
                (w.vocab_rows * c.hidden_size) as u64
            } else {
                0
            };
            assert_eq!(sum, whole + head_copy, "{} at pp {pp}", m.name);
            checked += 1;
        }
    }
    assert!(checked >= 80, "{checked}");
}

/// gpt-oss's MXFP4 experts on each of vLLM's MoE backends (v0.33.0,
/// `fused_moe/oracle/mxfp4.py`: 837–917): a rank's expert width and the hidden size padded
/// to the backend's multiples before `create_weights` — blocks of 32 along each row's input,
/// 16 bytes and a scale byte a block; the biases at the padded widths. gpt-oss-120b at tp 1,
/// 2 and 4.
#[test]
fn mxfp4_experts_are_padded_as_each_backend_pads_them() {
    use arena_spec::Mxfp4Backend;
    let v = shipped::raw("gpt-oss-120b");
    let n = |k: &str| shipped::n(&v, k);
    let (experts, layers) = (n("num_local_experts"), n("num_hidden_layers"));
    let round = |x: usize, m: usize| x.div_ceil(m) * m;
    for (backend, width_m, hidden_m) in [
        (Mxfp4Backend::Triton, 64, 1),
        (Mxfp4Backend::Marlin, 128, 256),
        (Mxfp4Backend::FlashinferTrtllm, 128, 256),
        (Mxfp4Backend::Cutlass, 128, 128),
    ] {
        for tp in [1, 2, 4] {
            let c = shipped::at_tp("gpt-oss-120b", tp);
            let s = WeightsSizes::new(&c, c.weight_formats.with_mxfp4_backend(backend)).unwrap();
            let i = round(n("intermediate_size") / tp, width_m);
            let h = round(n("hidden_size"), hidden_m);
            let blocks = |out: usize, inp: usize| experts * out * inp.div_ceil(32) * 17;
            assert_eq!(
                s.ffn.experts_gate_up,
                layers * blocks(2 * i, h),
                "{backend:?} tp {tp}"
            );
            assert_eq!(
                s.ffn.experts_down,
                layers * blocks(h, i),
                "{backend:?} tp {tp}"
            );
            assert_eq!(s.ffn.experts_gate_up_bias, layers * experts * 2 * i * 2);
            assert_eq!(s.ffn.experts_down_bias, layers * experts * h * 2);
        }
    }
    // Marlin's padding costs gpt-oss-120b 5.1 GiB a GPU at tp 1 over Triton's, within what
    // vLLM's logs of it show (3.6–5.2 GiB).
    let c = config("gpt-oss-120b");
    let bytes = |b: Mxfp4Backend| {
        WeightsSizes::new(&c, c.weight_formats.with_mxfp4_backend(b))
            .unwrap()
            .total_bytes()
    };
    let extra = bytes(Mxfp4Backend::Marlin) - bytes(Mxfp4Backend::Triton);
    assert!(
        (5 << 30..(5 << 30) + (300 << 20)).contains(&extra),
        "{extra}"
    );
}

/// Latent MoE (Nemotron-3 Super and Ultra, `moe_latent_size`): the routed experts run at the
/// latent width between `fc1_latent_proj` and `fc2_latent_proj` (`NemotronHMoE`), so their
/// parameters are the reference's, transformers' meta-device count of each fixture
/// (`tests/oracle/widths.json`); Ultra's 549 billion are about 1,024 GiB at 16 bits.
#[test]
fn latent_moe_experts_are_counted_at_the_latent_width() {
    let oracle = oracle();
    for name in [
        "nemotron-3-super-120b-a12b-fp8.rewritten",
        "nemotron-3-ultra-550b-a55b.rewritten",
    ] {
        let path = format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
        let c = ModelConfig::load_with_levers(&path, Default::default()).unwrap();
        assert!(c.moe_latent_size > 0 && c.expert_io_width() < c.hidden_size);
        let want = oracle["models"][name]["param_count"].as_u64().unwrap();
        assert_eq!(parameters(&c).unwrap(), want, "{name}");
        let s = WeightsSizes::new(&c, WeightFormat::Bf16).unwrap();
        let latent = (c.moe_latent_size * c.hidden_size * 2) as u64;
        let moe_layers = WeightLayers::of(&c, true).unwrap().moe as u64;
        assert_eq!(s.ffn.latent_in_proj as u64, latent * moe_layers);
        assert_eq!(s.ffn.latent_out_proj, s.ffn.latent_in_proj);
    }
    let ultra = ModelConfig::load_with_levers(
        format!(
            "{}/tests/fixtures/nemotron-3-ultra-550b-a55b.rewritten.json",
            env!("CARGO_MANIFEST_DIR")
        ),
        Default::default(),
    )
    .unwrap();
    let bytes = WeightsSizes::new(&ultra, WeightFormat::Bf16)
        .unwrap()
        .total_bytes();
    assert!((1_000u64 << 30..1_050u64 << 30).contains(&bytes), "{bytes}");
}

/// Every test fixture whose family is counted holds the reference's parameters (the oracle's
/// meta-device count of the fixture itself), and the others are refused by name.
#[test]
fn every_counted_fixture_is_the_references_count() {
    let oracle = oracle();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let mut counted = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let c = ModelConfig::load_with_levers(&path, Default::default()).unwrap();
        match parameters(&c) {
            Ok(p) => {
                let want = oracle["models"][&name]["param_count"].as_u64().unwrap();
                assert_eq!(p, want, "{name}");
                counted.push(name);
            }
            Err(e) => assert!(matches!(e, WeightsError::FamilyNotCounted { .. }), "{e}"),
        }
    }
    // The Nemotron-3 latent-MoE fixtures and Mamba-Codestral's pure Mamba-2.
    assert!(counted.len() >= 3, "{counted:?}");
}

/// The counted families are the rows with weight rules: every shipped family but the ones
/// without a reference count (Qwen2-MoE's row has no oracle record; the synthetic rows no
/// reference), and a file of an uncounted family is refused naming them.
#[test]
fn the_counted_families_are_the_rows_with_weight_rules() {
    let counted = counted_model_types();
    for t in [
        "llama",
        "deepseek_v3",
        "gemma4",
        "nemotron_h",
        "nemotron-nas",
    ] {
        assert!(counted.contains(&t), "{t}: {counted:?}");
    }
    for t in ["qwen2_moe", "arena_synthetic"] {
        assert!(!counted.contains(&t), "{t}: {counted:?}");
    }
    let mut c = config("llama-3.1-8b");
    c.family = arena_spec::Family::Qwen2Moe;
    let e = parameters(&c).unwrap_err();
    assert!(matches!(e, WeightsError::FamilyNotCounted { .. }), "{e}");
    assert!(e.to_string().contains("deepseek_v3, ") || e.to_string().contains(", deepseek_v3"));
}
