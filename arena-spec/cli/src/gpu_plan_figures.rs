//! The figures under `arena gpu-plan`'s rank table: each kind of KV layer and each
//! sequence state, per rank, exact (before any page rounding). Ranks whose figures are the
//! same share a row (`0–7`), so a tp 8 plan stays one row a kind.

use arena_spec::gpu_plan::{GpuPlan, KvLayerFigures, RankPlan, StateFigures};
use arena_spec::StateDtypeSource;

/// `0`, `0–7`, `0, 2, 5`: the ranks of a group.
fn rank_list(ranks: &[usize]) -> String {
    let contiguous = ranks.windows(2).all(|w| w[1] == w[0] + 1);
    match ranks {
        [one] => one.to_string(),
        [first, .., last] if contiguous => format!("{first}–{last}"),
        _ => ranks
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The ranks grouped by equal figures, in rank order of each group's first rank.
fn groups<'a, T: PartialEq>(
    plan: &'a GpuPlan,
    figures: impl Fn(&'a RankPlan) -> &'a [T],
) -> Vec<(String, &'a [T])> {
    let mut out: Vec<(Vec<usize>, &[T])> = Vec::new();
    for r in &plan.ranks {
        let f = figures(r);
        match out.iter_mut().find(|(_, g)| *g == f) {
            Some((ranks, _)) => ranks.push(r.rank),
            None => out.push((vec![r.rank], f)),
        }
    }
    out.into_iter()
        .map(|(ranks, f)| (rank_list(&ranks), f))
        .collect()
}

/// A state's dtype source in words.
fn source(s: &StateFigures) -> String {
    match s.dtype_source {
        Some(StateDtypeSource::Key(key)) => format!("the file's `{key}`"),
        Some(StateDtypeSource::FamilyDefault) => "the family's default in vLLM".into(),
        Some(StateDtypeSource::ModelDtype) => "the model's dtype (no key)".into(),
        Some(StateDtypeSource::Override) => "--state-dtype".into(),
        // Conv states in the model's dtype (`mamba_cache_dtype` "auto"); KDA's recurrent state
        // and DeepSeek-V4's compressor windows in FP32 whatever the keys.
        None if s.dtype == "f32" => "FP32 always (the engine's rule)".into(),
        None => "the model's dtype (mamba_cache_dtype)".into(),
    }
}

fn window(k: &KvLayerFigures) -> String {
    match (k.window, k.chunk, k.tokens_per_entry) {
        (Some(w), _, _) => format!("window {w}"),
        (_, Some(c), _) => format!("chunk {c}"),
        (_, _, r) if r > 1 => format!("1 entry / {r} tokens"),
        _ => "every token".into(),
    }
}

/// Prints the KV layer kinds and the states, each rank group's rows.
pub fn print(plan: &GpuPlan, block_tokens: usize) {
    let kv = groups(plan, |r| r.kv_layers.as_slice());
    if kv.iter().any(|(_, f)| !f.is_empty()) {
        println!();
        println!(
            "| ranks | KV layers | layers | keeps | bytes a token | bytes a block ({block_tokens} tokens) | blocks a sequence |"
        );
        println!("|---|---|---:|---|---:|---:|---:|");
        for (ranks, figures) in &kv {
            for k in figures.iter() {
                println!(
                    "| {ranks} | {} | {} | {} | {} | {} | {} |",
                    k.buffer,
                    k.layers,
                    window(k),
                    k.bytes_per_token,
                    k.bytes_per_block,
                    k.blocks_per_sequence
                );
            }
        }
    }
    let states = groups(plan, |r| r.states.as_slice());
    if states.iter().any(|(_, f)| !f.is_empty()) {
        println!();
        println!("| ranks | state | layers | dtype | dtype from | bytes a slot |");
        println!("|---|---|---:|---|---|---:|");
        for (ranks, figures) in &states {
            for s in figures.iter() {
                println!(
                    "| {ranks} | {} | {} | {} | {} | {} |",
                    s.buffer,
                    s.layers,
                    s.dtype,
                    source(s),
                    s.bytes_per_slot
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rank_list;

    #[test]
    fn rank_groups_read_as_ranges_or_lists() {
        assert_eq!(rank_list(&[3]), "3");
        assert_eq!(rank_list(&[0, 1, 2, 3]), "0–3");
        assert_eq!(rank_list(&[0, 2, 5]), "0, 2, 5");
    }
}
