//! Quantized matrices loaded with the scales stored beside them: block FP8, ModelOpt FP8 and
//! NVFP4 (whole and cut for a rank).

use crate::checkpoint_fixtures::*;
use serde_json::json;

/// Block FP8 (`weight_block_size` 128 × 128): a matrix's E4M3 elements, then its
/// `weight_scale_inv` blocks, fill its place; norms and the embedding stay 16-bit.
#[test]
fn block_fp8_matrices_load_with_their_scales_after_their_elements() {
    let c = qwen3(json!({
        "hidden_size": 256, "intermediate_size": 384, "num_attention_heads": 4, "head_dim": 64,
        "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}
    }));
    let s = sizes(&c);
    // `[out, in]` E4M3 elements, then `[ceil(out / 128), ceil(in / 128)]` F32 scales.
    let file = quantized_checkpoint(&c, &s, |_, o, i| {
        let scales = vec![o.div_ceil(128), i.div_ceil(128)];
        vec![
            (".weight".into(), zeros("F8_E4M3", vec![o, i], 1)),
            (".weight_scale_inv".into(), zeros("F32", scales, 4)),
        ]
    });
    let d = dir("fp8");
    write(&d.join("model.safetensors"), &file);
    load_and_compare(&c, &s, &d);
}

/// ModelOpt FP8 (`quant_algo: FP8`, `ModelOptFp8LinearMethod`): a matrix's E4M3 elements,
/// its F32 `weight_scale`, its `input_scale`, and zeros to the plan's 24-byte bound.
#[test]
fn a_modelopt_fp8_matrix_loads_with_its_scalar_scales() {
    let c =
        qwen3(json!({"quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8"}}));
    let s = sizes(&c);
    let file = quantized_checkpoint(&c, &s, |_, o, i| {
        vec![
            (".weight".into(), zeros("F8_E4M3", vec![o, i], 1)),
            (".weight_scale".into(), scalar()),
            (".input_scale".into(), scalar()),
        ]
    });
    let d = dir("modelopt-fp8");
    write(&d.join("model.safetensors"), &file);
    load_and_compare(&c, &s, &d);
    let (_, plan) = open_plan(&c, &s, &d);
    let q = plan
        .placed
        .iter()
        .find(|p| p.slot.name == "model.layers.0.self_attn.q_proj.weight")
        .unwrap();
    let parts: Vec<(&str, usize, usize)> = q
        .parts
        .iter()
        .map(|p| (p.tensor.rsplit('.').next().unwrap(), p.offset, p.bytes))
        .collect();
    assert_eq!(
        parts,
        [
            ("weight", 0, 4096),
            ("weight_scale", 4096, 4),
            ("input_scale", 4100, 4)
        ]
    );
    assert_eq!(q.zero_fill, 16);
}

/// NVFP4 (`quant_algo: NVFP4`, groups of 16, `ModelOptNvFp4LinearMethod`): the packed
/// elements, an E4M3 scale a group, then `weight_scale_2` and `input_scale`; at tp 2 the
/// row-parallel o projection's elements and group scales are cut along the input together.
#[test]
fn an_nvfp4_matrix_loads_with_its_group_and_global_scales() {
    let c = qwen3(
        json!({"quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16}}),
    );
    let s = sizes(&c);
    let nvfp4 = |_: &str, o: usize, i: usize| {
        vec![
            (".weight".into(), zeros("U8", vec![o, i / 2], 1)),
            (".weight_scale".into(), zeros("F8_E4M3", vec![o, i / 16], 1)),
            (".weight_scale_2".into(), scalar()),
            (".input_scale".into(), scalar()),
        ]
    };
    let file = quantized_checkpoint(&c, &s, nvfp4);
    let d = dir("nvfp4");
    write(&d.join("model.safetensors"), &file);
    load_and_compare(&c, &s, &d);

    let layout = arena_spec::ParallelLayout::new(2, 1, 1).unwrap();
    let r1 = rank_places(&c.shard(&layout.rank(1).unwrap()).unwrap(), &d);
    let o = "model.layers.1.self_attn.o_proj";
    let (w, sc) = (
        &file[&format!("{o}.weight")],
        &file[&format!("{o}.weight_scale")],
    );
    // [64, 32] packed bytes: columns 16..32; [64, 4] group scales: columns 2..4; the scalars.
    let mut expected = block1(w, 16, 32);
    expected.extend(block1(sc, 2, 4));
    expected.extend(&file[&format!("{o}.weight_scale_2")].data);
    expected.extend(&file[&format!("{o}.input_scale")].data);
    expected.resize(r1[&format!("{o}.weight")].len(), 0);
    assert_eq!(r1[&format!("{o}.weight")], expected);
}
