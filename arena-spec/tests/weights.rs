//! The parameter count against the reference: transformers' own modules, built on PyTorch's
//! meta device from each shipped file (`tests/oracle/widths.json`, `param_count`: every
//! parameter tensor's elements, a tied matrix once). Every shipped file of a counted family
//! must match exactly; every other family is refused by name, never estimated.

use arena_spec::models::SHIPPED;
use arena_spec::weights::{parameters, WeightsError};
use arena_spec::ParallelLayout;
use serde_json::Value;

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
            Err(e @ WeightsError::FamilyNotCounted { .. }) => {
                assert!(e.to_string().contains(m.name), "{e}");
                refused.push(m.name)
            }
        }
    }
    assert!(matched.len() >= 14, "{matched:?}");
    eprintln!("matched {}: {matched:?}\nrefused {}: {refused:?}", matched.len(), refused.len());
}

#[test]
fn ranks_hold_their_share() {
    let c = SHIPPED
        .iter()
        .find(|m| m.name == "llama-3.1-8b")
        .unwrap()
        .config()
        .unwrap();
    let whole = parameters(&c).unwrap();
    // tp 2: every matrix halves (the vocabulary 128,256 is a multiple of 64); norms whole.
    let layout = ParallelLayout::new(2, 1, 1).unwrap();
    let rank = parameters(&c.shard(&layout.rank(0).unwrap()).unwrap()).unwrap();
    assert_eq!(rank.attention * 2, whole.attention);
    assert_eq!(rank.dense_ffn * 2, whole.dense_ffn);
    assert_eq!(rank.embedding * 2, whole.embedding);
    assert_eq!(rank.norms, whole.norms);
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
