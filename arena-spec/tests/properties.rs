//! Property tests over random configs of every family and random inputs: totals, floors,
//! gates, NULL pointers, slab placement, and checked overflow for any input.

use arena_runtime::{Arena, Device, DeviceError, SizeError};
use arena_spec::arena::regions::decode_meta_rows;
use arena_spec::arena::regions::{
    GdnFlaScratch, MoeFp8Scratch, QsaSelectScratch, Scratch, SsdScratch,
};
use arena_spec::arena::sizing::block_table_width;
use arena_spec::{BufferArena, BufferSizes, Levers, ModelConfig};
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::cell::Cell;

/// A device that hands out address ranges without memory, so any arena size can be placed.
struct AddressSpace {
    next: Cell<u64>,
}

impl AddressSpace {
    fn new() -> Self {
        Self {
            next: Cell::new(1 << 20),
        }
    }
}

impl Device for AddressSpace {
    fn name(&self) -> String {
        "address-space".into()
    }
    fn alloc(&self, bytes: usize) -> Result<u64, DeviceError> {
        let addr = self.next.get();
        let end = addr
            .checked_add(bytes as u64)
            .and_then(|e| e.checked_add(255))
            .ok_or(DeviceError::OutOfMemory { bytes })?;
        self.next.set(end & !255);
        Ok(addr)
    }
    unsafe fn free(&self, _addr: u64, _bytes: usize) -> Result<(), DeviceError> {
        Ok(())
    }
}

fn dim(lo: usize, hi: usize) -> impl Strategy<Value = usize> {
    lo..=hi
}

/// Features any family may carry (the synthetic ones and LoRA), often absent.
fn extras() -> impl Strategy<Value = Map<String, Value>> {
    (
        prop::option::of((dim(1, 8), dim(1, 512))),
        prop::option::of((dim(1, 8), prop::option::of(dim(1, 128)))),
        prop::option::of(dim(1, 256)),
        prop::option::of(dim(1, 16)),
    )
        .prop_map(|(o, hc, rank, zero)| {
            let mut m = Map::new();
            if let Some((g, r)) = o {
                m.insert("o_groups".into(), json!(g));
                m.insert("o_lora_rank".into(), json!(r));
            }
            if let Some((mult, low)) = hc {
                m.insert("hc_mult".into(), json!(mult));
                if let Some(low) = low {
                    m.insert("hc_lowrank_rank".into(), json!(low));
                }
            }
            if let Some(rank) = rank {
                m.insert("adapter_max_rank".into(), json!(rank));
            }
            if let Some(z) = zero {
                m.insert("zero_expert_num".into(), json!(z));
            }
            m
        })
}

fn attention() -> impl Strategy<Value = (usize, usize, usize)> {
    (
        dim(1, 64),
        dim(1, 16),
        prop::sample::select(vec![32usize, 64, 128, 256]),
    )
}

fn moe() -> impl Strategy<Value = (usize, usize, usize)> {
    (dim(1, 512), dim(1, 16), dim(1, 4096)).prop_map(|(e, k, w)| (e, k.min(e), w))
}

fn gdn() -> impl Strategy<Value = Value> {
    (dim(1, 32), prop::sample::select(vec![64usize, 128]), dim(1, 64), prop::sample::select(vec![64usize, 128]), dim(1, 8))
        .prop_map(|(hk, dk, hv, dv, interval)| {
            json!({"linear_num_key_heads": hk, "linear_key_head_dim": dk, "linear_num_value_heads": hv,
                   "linear_value_head_dim": dv, "linear_conv_kernel_dim": 4, "full_attention_interval": interval})
        })
}

fn merge(mut a: Value, b: &Value) -> Value {
    if let (Value::Object(a), Value::Object(b)) = (&mut a, b) {
        for (k, v) in b {
            a.insert(k.clone(), v.clone());
        }
    }
    a
}

/// A random but valid `config.json` of one of the published families.
fn config_json() -> impl Strategy<Value = Value> {
    let base = (dim(1, 128), dim(1, 65536), dim(1, 300_000), dim(1, 1 << 20));
    let family = 0usize..38;
    (family, base, attention(), moe(), gdn(), dim(1, 8192), extras(), dim(1, 4096)).prop_map(
        |(family, (layers, inter, vocab, ctx), (heads, kv, hd), (experts, top_k, moe_w), gdn, mamba_w, extras, mla)| {
            let hidden = heads * hd;
            let mut c = json!({"hidden_size": hidden, "num_hidden_layers": layers, "vocab_size": vocab,
                               "max_position_embeddings": ctx, "num_attention_heads": heads,
                               "num_key_value_heads": kv, "intermediate_size": inter});
            let moe_keys = json!({"num_experts": experts, "num_experts_per_tok": top_k, "moe_intermediate_size": moe_w,
                                  "shared_expert_intermediate_size": moe_w});
            let c = match family {
                0 => merge(c, &json!({"model_type": "llama"})),
                1 => merge(c, &json!({"model_type": "qwen3", "head_dim": hd})),
                2 => merge(merge(c, &moe_keys), &json!({"model_type": "qwen3_moe", "head_dim": hd})),
                3 => merge(merge(merge(c, &moe_keys), &gdn), &json!({"model_type": "qwen3_next", "head_dim": hd})),
                4 | 5 => {
                    c = merge(merge(c, &gdn), &json!({"head_dim": hd, "rope_parameters": {"mrope_section": [11, 11, 10]}}));
                    if family == 5 {
                        c = merge(c, &moe_keys);
                    }
                    json!({"model_type": if family == 4 { "qwen3_5" } else { "qwen3_5_moe" }, "text_config": c})
                }
                6 | 7 => {
                    let mut d = merge(c, &json!({"model_type": if family == 6 { "deepseek_v3" } else { "deepseek_v32" },
                        "n_routed_experts": experts, "num_experts_per_tok": top_k, "moe_intermediate_size": moe_w,
                        "n_shared_experts": 1, "first_k_dense_replace": layers.min(3), "q_lora_rank": mla,
                        "kv_lora_rank": mla.min(1024), "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}));
                    if family == 7 {
                        d = merge(d, &json!({"index_n_heads": heads, "index_head_dim": 128, "index_topk": 2048, "index_compress_ratio": kv}));
                    }
                    d
                }
                8 => {
                    // Every fourth layer a MoE, half the time a latent MoE (Nemotron-3).
                    let pattern: String = (0..layers).map(|i| ['M', '*', '-', 'E'][i % 4]).collect();
                    let latent = if kv % 2 == 0 { json!(null) } else { json!((hidden / 4).max(1)) };
                    merge(c, &json!({"model_type": "nemotron_h", "hybrid_override_pattern": pattern, "head_dim": hd,
                        "mamba_num_heads": mamba_w.div_ceil(64), "mamba_head_dim": 64, "ssm_state_size": 128,
                        "n_groups": 8, "expand": 2, "chunk_size": 128, "n_routed_experts": experts,
                        "num_experts_per_tok": top_k, "moe_intermediate_size": moe_w,
                        "moe_shared_expert_intermediate_size": moe_w, "moe_latent_size": latent}))
                }
                9 => json!({"model_type": "mamba2", "hidden_size": hidden, "num_hidden_layers": layers, "vocab_size": vocab,
                    "num_heads": hidden * 2 / 64, "head_dim": 64, "state_size": 128, "n_groups": 1, "expand": 2,
                    "chunk_size": 256}),
                10 => merge(c, &json!({"model_type": "mistral", "head_dim": hd})),
                11 => merge(c, &json!({"model_type": "mixtral", "num_local_experts": experts, "num_experts_per_tok": top_k})),
                12 => merge(c, &json!({"model_type": "qwen2"})),
                13 => merge(merge(c, &moe_keys), &json!({"model_type": "qwen2_moe", "decoder_sparse_step": kv.min(4),
                    "mlp_only_layers": [0]})),
                14 | 15 => merge(c, &json!({"model_type": if family == 14 { "kimi_k2" } else { "glm_moe_dsa" },
                    "n_routed_experts": experts, "num_experts_per_tok": top_k, "moe_intermediate_size": moe_w,
                    "n_shared_experts": 1, "first_k_dense_replace": layers.min(3), "q_lora_rank": mla,
                    "kv_lora_rank": mla.min(1024), "qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "v_head_dim": 256,
                    "index_n_heads": heads, "index_head_dim": 128, "index_topk": 2048})),
                16 => merge(c, &json!({"model_type": "glm4_moe", "head_dim": hd, "n_routed_experts": experts,
                    "num_experts_per_tok": top_k, "moe_intermediate_size": moe_w, "n_shared_experts": 1,
                    "first_k_dense_replace": 1})),
                17 => merge(c, &json!({"model_type": "gpt_oss", "head_dim": hd, "num_local_experts": experts,
                    "num_experts_per_tok": top_k})),
                18 => json!({"model_type": "llama4", "text_config": merge(c, &json!({"head_dim": hd,
                    "num_local_experts": experts, "num_experts_per_tok": top_k, "intermediate_size": moe_w,
                    "intermediate_size_mlp": inter, "interleave_moe_layer_step": kv.min(4)}))}),
                19 => json!({"model_type": "gemma3", "text_config": merge(c, &json!({"head_dim": hd}))}),
                21 | 22 => {
                    // Qwen3-VL's text model under `text_config`, dense or MoE.
                    let mut t = merge(c, &json!({"head_dim": hd, "rope_scaling": {"mrope_section": [24, 20, 20]}}));
                    if family == 22 {
                        t = merge(t, &moe_keys);
                    }
                    json!({"model_type": if family == 21 { "qwen3_vl" } else { "qwen3_vl_moe" }, "text_config": t})
                }
                29 => {
                    // DeciLM: per-block attention (some no-ops) and FFN multipliers.
                    let blocks: Vec<Value> = (0..layers)
                        .map(|i| {
                            let mult = [0.5, 1.3125, 5.25][i % 3];
                            json!({"attention": {"no_op": i % 3 == 1, "n_heads_in_group": 1},
                                   "ffn": {"ffn_mult": mult}})
                        })
                        .collect();
                    json!({"model_type": "nemotron-nas", "hidden_size": hidden, "num_hidden_layers": layers,
                        "vocab_size": vocab, "max_position_embeddings": ctx, "num_attention_heads": heads,
                        "num_key_value_heads": null, "intermediate_size": null, "block_configs": blocks})
                }
                30 => merge(c, &json!({"model_type": "mimo_v2_flash", "head_dim": hd, "v_head_dim": hd.div_ceil(2),
                    "n_routed_experts": experts, "num_experts_per_tok": top_k, "moe_intermediate_size": moe_w})),
                31 => {
                    let per_layer: Vec<usize> = (0..layers).map(|i| if i % 4 == 3 { heads } else { heads * 2 }).collect();
                    merge(merge(c, &moe_keys), &json!({"model_type": "laguna", "head_dim": hd,
                        "num_attention_heads_per_layer": per_layer, "gating": if kv % 2 == 0 { json!(true) } else { json!("per-element") }}))
                }
                32 => json!({"model_type": "gemma4", "text_config": merge(c, &json!({"head_dim": hd,
                    "global_head_dim": hd * 2, "attention_k_eq_v": kv % 2 == 0, "num_global_key_value_heads": kv.div_ceil(2),
                    "hidden_size_per_layer_input": if kv % 3 == 0 { 256 } else { 0 },
                    "num_kv_shared_layers": layers / 2, "use_double_wide_mlp": kv % 2 == 1, "enable_moe_block": experts % 2 == 0,
                    "num_experts": experts, "top_k_experts": top_k, "moe_intermediate_size": moe_w}))}),
                24 => merge(c, &json!({"model_type": "olmo3"})),
                25 => merge(c, &json!({"model_type": "exaone4", "head_dim": hd})),
                26 => merge(c, &json!({"model_type": "minimax_m2", "head_dim": hd, "num_local_experts": experts,
                    "num_experts_per_tok": top_k, "intermediate_size": moe_w})),
                27 => merge(c, &json!({"model_type": "ministral3", "head_dim": hd})),
                28 => json!({"model_type": "mistral3", "text_config": merge(c, &json!({"model_type": "ministral3",
                    "head_dim": hd}))}),
                23 => json!({"model_type": "kimi_k25", "text_config": merge(c, &json!({"model_type": "kimi_k2",
                    "n_routed_experts": experts, "num_experts_per_tok": top_k, "moe_intermediate_size": moe_w,
                    "n_shared_experts": 1, "first_k_dense_replace": layers.min(3), "q_lora_rank": mla,
                    "kv_lora_rank": mla.min(1024), "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}))}),
                20 => {
                    // DeepSeek-V4: per-layer compress ratios (0 sliding, 4 CSA, 128 HCA), one
                    // K=V head whatever the file says, the grouped O projection, the
                    // hyper-connections and the hash-routed layers.
                    let ratios: Vec<usize> = (0..layers + 1).map(|i| [0, 4, 128][(i + kv) % 3]).collect();
                    merge(c, &json!({"model_type": "deepseek_v4", "head_dim": hd, "q_lora_rank": mla,
                        "n_routed_experts": experts, "num_experts_per_tok": top_k, "moe_intermediate_size": moe_w,
                        "o_groups": kv, "o_lora_rank": mla.min(1024), "hc_mult": kv.min(4),
                        "index_n_heads": heads, "index_head_dim": 128, "index_topk": 512,
                        "compress_ratios": ratios, "num_hash_layers": layers.min(3)}))
                }
                33 => {
                    // LFM2: short convolutions beside attention, by `layer_types` or by the
                    // attention layers' 0-based indices; the MLP width derived from
                    // `block_ff_dim`.
                    let layout = if kv % 2 == 0 {
                        let types: Vec<&str> = (0..layers).map(|i| if i % 3 == 2 { "full_attention" } else { "conv" }).collect();
                        json!({"layer_types": types})
                    } else {
                        json!({"full_attn_idxs": (0..layers).filter(|i| i % 3 == 2).collect::<Vec<_>>()})
                    };
                    merge(merge(c, &layout), &json!({"model_type": "lfm2", "block_ff_dim": inter, "conv_L_cache": 3,
                        "block_auto_adjust_ff_dim": kv % 3 != 0, "block_ffn_dim_multiplier": 1.0, "block_multiple_of": 256}))
                }
                34 => {
                    // MiniMax-M1: lightning layers with a softmax layer every fourth, every
                    // layer routing; a shared MLP half the time.
                    let types: Vec<usize> = (0..layers).map(|i| usize::from(i % 4 == 3)).collect();
                    merge(c, &json!({"model_type": "minimax_m1", "head_dim": hd, "attn_type_list": types,
                        "num_local_experts": experts, "num_experts_per_tok": top_k, "intermediate_size": moe_w,
                        "shared_intermediate_size": kv % 2}))
                }
                35 => {
                    // Kimi-Linear: KDA beside MLA, by 1-based lists or by the default
                    // pattern; experts with a shared one and leading dense layers.
                    let mut d = merge(c, &json!({"model_type": "kimi_linear", "num_experts": experts,
                        "num_experts_per_token": top_k, "moe_intermediate_size": moe_w, "num_shared_experts": 1,
                        "first_k_dense_replace": layers.min(2), "q_lora_rank": null, "kv_lora_rank": mla.min(1024),
                        "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}));
                    if kv % 2 == 0 {
                        let full: Vec<usize> = (1..=layers).filter(|i| i % 4 == 0).collect();
                        let kda: Vec<usize> = (1..=layers).filter(|i| i % 4 != 0).collect();
                        d = merge(d, &json!({"linear_attn_config": {"full_attn_layers": full, "kda_layers": kda,
                            "num_heads": heads, "head_dim": hd, "short_conv_kernel_size": 4}}));
                    }
                    d
                }
                36 => merge(c, &json!({"model_type": "cohere", "use_qk_norm": kv % 2 == 0,
                    "model_max_length": 1 << 20})),
                _ => merge(c, &json!({"model_type": "phi3"})),
            };
            if let Value::Object(obj) = &c {
                if obj.contains_key("text_config") {
                    let mut c = c.clone();
                    let text = merge(c["text_config"].take(), &Value::Object(extras));
                    c["text_config"] = text;
                    return c;
                }
            }
            merge(c, &Value::Object(extras))
        },
    )
}

fn levers() -> impl Strategy<Value = Levers> {
    prop::array::uniform6(any::<bool>()).prop_map(|b| Levers {
        fp32_gate: b[0],
        fp32_routing: b[1],
        fp8_rowwise: b[2],
        gguf_native_q2: b[3],
        gguf_native_q2_mmq: b[4],
        scratch_by_format: b[5],
    })
}

fn load(json: &Value, levers: Levers) -> ModelConfig {
    let mut c =
        ModelConfig::from_json_str_with_levers(&json.to_string(), "random.json", Levers::default())
            .unwrap_or_else(|e| panic!("a generated config failed to load: {e}\n{json}"));
    c.levers = levers;
    c
}

/// The quantized paths' FP8 / int8 activation scratch is sized: unless `scratch_by_format`
/// is on and the checkpoint is 16-bit with no quantized-path lever on.
fn quantized_scratch(c: &ModelConfig) -> bool {
    let l = c.levers;
    let path_lever = l.fp8_rowwise || l.gguf_native_q2 || l.gguf_native_q2_mmq;
    !(l.scratch_by_format && c.weight_formats.is_16_bit()) || path_lever
}

/// The seeds' gate of each gated buffer, from the config.
fn gate_open(c: &ModelConfig, name: &str) -> Option<bool> {
    Some(match name {
        "gdn_fla_scratch" => c.gdn_fla_supported(),
        "ssd_scratch" => c.has_mamba(),
        // `scratch_by_format`: a 16-bit checkpoint writes none of the quantized paths'
        // activations, and no config.json names the Q4_K MMQ path.
        "ffn_act_q8" => {
            let gguf = c.levers.gguf_native_q2 || c.levers.gguf_native_q2_mmq;
            c.has_dense_ffn() && (!c.levers.scratch_by_format || gguf)
        }
        "ffn_act_a" | "ffn_act_scale" | "ffn_act_scale_kmajor" => {
            c.has_dense_ffn() && quantized_scratch(c)
        }
        n if n.starts_with("ffn_") => c.has_dense_ffn(),
        "moe_fp8_scratch" => c.is_moe() && quantized_scratch(c),
        "fp8_act" | "fp8_act_scale" | "fp8_act_scale_kmajor" => quantized_scratch(c),
        n if n.starts_with("lora_") => c.adapter_max_rank > 0,
        "q2_dequant_scratch" => c.levers.gguf_native_q2,
        "q2_act_q8" => c.levers.gguf_native_q2_mmq,
        "ssm_rowwise_w_bf16" => c.levers.fp8_rowwise,
        // Beyond the seeds: latent MoE, short convolution, lightning and Kimi delta attention,
        // per-layer inputs.
        "moe_latent_in" | "moe_latent_out" => c.moe_latent_size > 0,
        n if n.starts_with("short_conv_") => c.has_short_conv(),
        n if n.starts_with("lightning_") => c.has_lightning(),
        n if n.starts_with("kda_") => c.has_kda(),
        "per_layer_inputs_proj" => c.has_per_layer_inputs() && c.runs_embedding(),
        n if n.starts_with("per_layer_") => c.has_per_layer_inputs(),
        // Closed only on a pipeline stage without the LM head.
        "logits" => c.lm_head_vocab() > 0,
        "hc_pre" => c.hc_mult > 0,
        _ => return None,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn sizes_totals_floors_gates_and_placement(
        json in config_json(),
        levers in levers(),
        m in 1usize..=1 << 20,
        seq in 1usize..=1 << 22,
        block in 0usize..=64,
        batch in 1usize..=1024,
    ) {
        let c = load(&json, levers);
        let sizes = BufferSizes::try_from_config(&c, m, seq, block, batch).unwrap();
        // The const sizing path, evaluated at run time here, sizes every family alike.
        prop_assert_eq!(BufferSizes::const_from_config(&c, m, seq, block, batch), sizes);
        let infos = sizes.buffers();

        let tracked: usize = infos.iter().filter(|b| b.decl.tracked).map(|b| b.bytes).sum();
        prop_assert_eq!(sizes.total_bytes(), tracked);

        for (i, b) in infos.iter().enumerate() {
            if b.decl.min_bytes.is_some() {
                prop_assert!(b.bytes >= 256, "{} below its floor", b.decl.name);
            }
            let d = BufferArena::shape(&sizes, i);
            let raw = BufferArena::raw_bytes(&sizes, i);
            let shape_bytes = (!d.is_empty()).then(|| d.iter().product::<usize>() * b.decl.elem_size);
            if let Some(s) = shape_bytes {
                prop_assert_eq!(raw, s, "{}'s bytes before the floor are its shape's", b.decl.name);
            }
            prop_assert_eq!(b.bytes, raw.max(if b.decl.min_bytes.is_some() && b.bytes > 0 { 256 } else { 0 }));
            match gate_open(&c, b.decl.name) {
                Some(false) => prop_assert_eq!(b.bytes, 0, "{} with its gate closed", b.decl.name),
                Some(true) => {
                    prop_assert!(b.decl.gated());
                    if let Some(s) = shape_bytes {
                        prop_assert_eq!(b.bytes, s, "{} is its formula", b.decl.name);
                    }
                }
                None => {
                    prop_assert!(!b.decl.gated(), "{} is gated but has no gate here", b.decl.name);
                    prop_assert!(b.bytes > 0, "{} is always allocated", b.decl.name);
                    if let Some(s) = shape_bytes {
                        prop_assert_eq!(b.bytes, s.max(if b.decl.min_bytes.is_some() { 256 } else { 0 }));
                    }
                }
            }
        }
        // The const region sizes the arena reads are the layouts the kernels carve.
        prop_assert_eq!(GdnFlaScratch::bytes(&c, m).unwrap(), GdnFlaScratch::layout(&c, m).unwrap().total_bytes);
        prop_assert_eq!(SsdScratch::bytes(&c, m).unwrap(), SsdScratch::layout(&c, m).unwrap().total_bytes);
        prop_assert_eq!(MoeFp8Scratch::bytes(&c, m).unwrap(), MoeFp8Scratch::layout(&c, m).unwrap().total_bytes);
        prop_assert_eq!(QsaSelectScratch::bytes(&c, seq).unwrap(), QsaSelectScratch::layout(&c, seq).unwrap().total_bytes);
        let (blocks, rows) = (block_table_width(seq, block).unwrap(), decode_meta_rows(batch));
        prop_assert_eq!(Scratch::bytes(&c, m, blocks, rows).unwrap(), Scratch::layout(&c, m, blocks, rows).unwrap().total_bytes);
        if c.gdn_fla_supported() {
            prop_assert_eq!(sizes.gdn_fla_scratch, GdnFlaScratch::layout(&c, m).unwrap().total_bytes);
        }
        if c.has_mamba() {
            prop_assert_eq!(sizes.ssd_scratch, SsdScratch::layout(&c, m).unwrap().total_bytes);
        }
        if c.is_moe() && quantized_scratch(&c) {
            prop_assert_eq!(sizes.moe_fp8_scratch, MoeFp8Scratch::layout(&c, m).unwrap().total_bytes);
        }

        let arena = BufferArena::allocate(AddressSpace::new(), &sizes).unwrap();
        prop_assert_eq!(arena.check_placement(), Ok(()));
        prop_assert_eq!(arena.lora_xa.is_null(), sizes.lora_xa == 0);
        prop_assert_eq!(arena.ssd_scratch.is_null(), sizes.ssd_scratch == 0);
    }

    #[test]
    fn any_input_sizes_or_names_the_buffer_or_derived_value_that_overflows(
        json in config_json(),
        levers in levers(),
        m in prop_oneof![1usize..=1 << 20, any::<usize>()],
        seq in prop_oneof![1usize..=1 << 22, any::<usize>()],
        block in any::<usize>(),
        batch in prop_oneof![1usize..=1024, any::<usize>()],
    ) {
        let c = load(&json, levers);
        match BufferSizes::try_from_config(&c, m, seq, block, batch) {
            Ok(sizes) => {
                let all: Vec<usize> = BufferArena::byte_sizes(&sizes);
                prop_assert_eq!(all.len(), BufferArena::BUFFERS.len());
            }
            Err(e) => {
                let is_buffer = |name: &str| BufferArena::BUFFERS.iter().any(|b| b.name == name);
                match &e {
                    SizeError::Derived { name, used_by, source } => {
                        prop_assert!(!is_buffer(name), "{e}");
                        prop_assert!(!used_by.is_empty() && used_by.iter().all(|b| is_buffer(b)), "{e}");
                        prop_assert!(e.to_string().starts_with(&format!("derived value `{name}` (read by `")), "{e}");
                        prop_assert!(matches!(**source, SizeError::Overflow { .. } | SizeError::Nested { .. }), "{e:?}");
                    }
                    _ => {
                        prop_assert!(is_buffer(e.buffer()), "{e} names no buffer");
                        prop_assert!(matches!(e, SizeError::Overflow { .. } | SizeError::Nested { .. } | SizeError::TotalOverflow { .. }), "{e:?}");
                    }
                }
            }
        }
    }

    /// The seeds' varlen rule: a uniform batch is the varlen form with `n · L` tokens of at
    /// most `L`, and a ragged batch (fewer tokens than `n` streams of its longest) costs no
    /// more, and less once the gap spans a 256-byte area.
    #[test]
    fn varlen_staging_charges_the_packed_total(
        json in config_json(),
        n in 1usize..=16,
        longest in 1usize..=8192,
        short_by in prop::collection::vec(0usize..=8192, 16),
    ) {
        use arena_spec::{q12_batched_scratch_bytes, q12_batched_scratch_bytes_varlen};
        let c = load(&json, Levers::default());
        let uniform = q12_batched_scratch_bytes(&c, n, longest).unwrap();
        prop_assert_eq!(q12_batched_scratch_bytes_varlen(&c, n, n * longest, longest).unwrap(), uniform);
        // Stream 0 is the longest; the others are shorter by up to `longest - 1`.
        let total: usize = longest + short_by[1..n].iter().map(|s| longest - s % longest).sum::<usize>();
        let ragged = q12_batched_scratch_bytes_varlen(&c, n, total, longest).unwrap();
        prop_assert!(ragged <= uniform, "{ragged} > {uniform}");
        // Positions alone (4 bytes per token) drop a whole 256-byte area once 64 tokens are gone.
        if n * longest - total >= 64 {
            prop_assert!(ragged < uniform, "ragged {ragged} == uniform {uniform}");
        }
    }
}
