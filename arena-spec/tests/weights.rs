//! The parameter count against the reference: transformers' own modules, built on PyTorch's
//! meta device from each shipped file (`tests/oracle/widths.json`, `param_count`: every
//! parameter tensor's elements, a tied matrix once). Every shipped file of a counted family
//! must match exactly; every other family is refused by name, never estimated.

use arena_spec::models::SHIPPED;
use arena_spec::weights::{parameters, tensors, weight_bytes, Role, WeightFormat, WeightsError};
use arena_spec::ParallelLayout;
use serde_json::Value;

mod shipped;
use shipped::config;

fn oracle() -> Value {
    serde_json::from_str(include_str!("oracle/widths.json")).unwrap()
}

#[test]
fn counted_families_match_the_reference_exactly_and_others_are_refused() {
    let oracle = oracle();
    let (mut matched, mut refused) = (Vec::new(), Vec::new());
    for m in SHIPPED {
        let Some(record) = oracle["models"].get(m.name) else {
            continue;
        };
        let c = m.config_with_levers(Default::default()).unwrap();
        match parameters(&c) {
            Ok(p) => {
                let want = record["param_count"].as_u64().unwrap();
                assert_eq!(p.total(), want, "{}: {p:?}", m.name);
                assert_eq!(
                    p.lm_head == 0,
                    record["tied_embeddings"].as_bool().unwrap(),
                    "{}: tied",
                    m.name
                );
                matched.push(m.name);
            }
            Err(e) => {
                assert!(matches!(e, WeightsError::FamilyNotCounted { .. }), "{e}");
                assert!(e.to_string().contains(m.name), "{e}");
                refused.push(m.name)
            }
        }
    }
    assert!(matched.len() >= 42, "{matched:?}");
    eprintln!(
        "matched {}: {matched:?}\nrefused {}: {refused:?}",
        matched.len(),
        refused.len()
    );
}

#[test]
fn ranks_hold_their_share() {
    let c = config("llama-3.1-8b");
    let whole = parameters(&c).unwrap();
    // tp 2: every matrix halves (the vocabulary 128,256 is a multiple of 64); norms whole.
    let layout = ParallelLayout::new(2, 1, 1).unwrap();
    let rank = parameters(&c.shard(&layout.rank(0).unwrap()).unwrap()).unwrap();
    assert_eq!(rank.linear * 2, whole.linear);
    assert_eq!(rank.embedding * 2, whole.embedding);
    assert_eq!(rank.lm_head * 2, whole.lm_head);
    assert_eq!(rank.vectors, whole.vectors);
    // The vocabulary padded to 64 before the split (vLLM's VocabParallelEmbedding).
    let qwen = config("qwen3-0.6b");
    let rank = parameters(&qwen.shard(&layout.rank(1).unwrap()).unwrap()).unwrap();
    assert_eq!(
        rank.embedding,
        151_936usize.div_ceil(64) as u64 * 64 / 2 * 1024
    );
    // pp 2: the stages' counts add up to the whole model's.
    let layout = ParallelLayout::new(1, 1, 2).unwrap();
    let staged: u64 = (0..2)
        .map(|i| {
            parameters(&c.shard(&layout.rank(i).unwrap()).unwrap())
                .unwrap()
                .total()
        })
        .sum();
    assert_eq!(staged, whole.total());
}

#[test]
fn bytes_follow_each_formats_definition() {
    // Unquantized: two bytes an element (Llama 3.1's 128,256 rows are a multiple of 64).
    let llama = config("llama-3.1-8b");
    assert_eq!(llama.weight_format, WeightFormat::Bf16);
    assert_eq!(weight_bytes(&llama).unwrap(), 2 * 8_030_261_248);
    // The vocabulary padded to 64 rows as an engine allocates it, even on one GPU: OLMo 3's
    // 100,278 rows are 100,288, its embedding and head 10 rows more each than counted.
    let olmo = config("olmo-3.1-32b-instruct");
    let counted = parameters(&olmo).unwrap().total();
    assert_eq!(weight_bytes(&olmo).unwrap(), 2 * (counted + 2 * 10 * 5120));

    // DeepSeek-V3's block-scaled FP8: a byte an element of every linear and expert matrix and
    // a 4-byte scale a 128 × 128 block of it; the rest in 16 bits. Transcribed here from the
    // tensor list by shape, against the format's definition.
    let ds = config("deepseek-v3");
    assert_eq!(
        ds.weight_format,
        WeightFormat::Fp8Block {
            rows: 128,
            cols: 128
        }
    );
    let mut want = 0u64;
    for t in tensors(&ds).unwrap() {
        let [e, out, inp] = t.dims;
        want += t.count
            * match t.role {
                Role::Linear | Role::Experts => {
                    e * out * inp + 4 * e * out.div_ceil(128) * inp.div_ceil(128)
                }
                _ => 2 * e * out * inp,
            };
    }
    assert_eq!(weight_bytes(&ds).unwrap(), want);
    // One of its matrices by hand: kv_a_proj_with_mqa [576, 7168], 61 layers: 5 × 56 blocks.
    let kv_a = tensors(&ds)
        .unwrap()
        .into_iter()
        .find(|t| t.name == "self_attn.kv_a_proj_with_mqa.weight")
        .unwrap();
    assert_eq!(kv_a.bytes(ds.weight_format), 61 * (576 * 7168 + 4 * 5 * 56));

    // gpt-oss's MXFP4 experts: half a byte an element and a scale byte a 32; the rest,
    // expert biases included, in 16 bits.
    let oss = config("gpt-oss-20b");
    assert_eq!(oss.weight_format, WeightFormat::Mxfp4Experts);
    let p = parameters(&oss).unwrap();
    let experts = p.experts;
    assert_eq!(experts % 32, 0);
    assert_eq!(
        weight_bytes(&oss).unwrap(),
        experts / 2 + experts / 32 + 2 * (p.total() - experts)
    );

    // A quantization without a formula here is refused, not guessed.
    let kimi = SHIPPED
        .iter()
        .find(|m| m.name == "kimi-k2.5")
        .unwrap()
        .config()
        .unwrap();
    assert_eq!(kimi.weight_format, WeightFormat::Unplanned);
    // DeepSeek-V4: FP8 with its experts in FP4 (`expert_dtype`): counted, its bytes not.
    let v4 = config("deepseek-v4-flash");
    assert_eq!(v4.weight_format, WeightFormat::Unplanned);
    assert!(parameters(&v4).is_ok());
    assert!(matches!(
        weight_bytes(&v4),
        Err(WeightsError::FormatNotPlanned { .. })
    ));
}
