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
use arena_spec::{BufferArenaInputs, ModelConfig};
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
pub(crate) const KDA: &str = "KimiLinearDeltaAttention";

/// One model's modules and parameters by pattern.
pub(crate) struct Built<'a> {
    pub(crate) modules: &'a serde_json::Map<String, Value>,
    pub(crate) params: &'a serde_json::Map<String, Value>,
    /// The family's layers differ in width (`FamilyRules::layer_widths`): a module's width is
    /// its widest layer's, which is what the arena sizes; elsewhere every layer must agree.
    pub(crate) per_layer: bool,
}

impl Built<'_> {
    /// Records of the modules whose last path component is `name`, outside `exclude`.
    pub(crate) fn linear(&self, name: &str, exclude: &[&str]) -> Vec<(usize, usize)> {
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
    pub(crate) fn out(&self, name: &str, exclude: &[&str]) -> Option<usize> {
        self.one(name, exclude, |(_, out)| out)
    }

    /// The one input width of the modules called `name`, if any.
    pub(crate) fn input(&self, name: &str, exclude: &[&str]) -> Option<usize> {
        self.one(name, exclude, |(input, _)| input)
    }

    pub(crate) fn one(
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
    pub(crate) fn each(
        &self,
        suffix: &str,
        field: &'static str,
    ) -> impl Iterator<Item = usize> + '_ {
        let suffix = suffix.to_string();
        self.modules
            .iter()
            .filter(move |(p, _)| ends_with(p, &suffix))
            .flat_map(|(_, records)| records.as_array().unwrap())
            .map(move |r| r[field].as_u64().unwrap() as usize)
    }

    /// The widest output of the modules at paths ending with `suffix` (their layers may
    /// differ: DeepSeek-V4's CSA and HCA compressors), if any.
    pub(crate) fn widest_out(&self, suffix: &str) -> Option<usize> {
        self.each(suffix, "out").max()
    }

    /// The widest input of the modules at paths ending with `suffix`, if any.
    pub(crate) fn widest_in(&self, suffix: &str) -> Option<usize> {
        self.each(suffix, "in").max()
    }

    /// How many modules (over every layer) sit at paths ending with `suffix`.
    pub(crate) fn count(&self, suffix: &str) -> usize {
        self.each(suffix, "count").sum()
    }

    /// Shapes of the parameters whose pattern ends with `suffix`.
    pub(crate) fn param(&self, suffix: &str) -> Option<Vec<usize>> {
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
pub(crate) fn dsv4_indexer_projections(b: &Built) -> usize {
    [
        "compressor.indexer.kv_proj",
        "compressor.indexer.gate_proj",
        "compressor.indexer.scorer.weights_proj",
    ]
    .into_iter()
    .filter_map(|suffix| b.widest_out(suffix))
    .sum()
}

use crate::oracle_buffers::buffer_checks;
use crate::oracle_widths::width_checks;

/// The oracle's verdict on one model beside its record: each derived width that differs from
/// the reference's, DeepSeek-V4's indexer selection, and each buffer narrower than a module
/// output it holds, one line each (empty: exact). Shared by the shipped models' test and
/// the census (`census.rs`).
pub(crate) fn model_failures(
    name: &str,
    config: &ModelConfig,
    entry: &Value,
    built: &Built,
    widths: &[(&'static str, usize, usize)],
) -> Vec<String> {
    let mut failures = Vec::new();
    for (what, arena, reference) in widths {
        if arena != reference {
            failures.push(format!(
                "{name}: {what}: arena {arena}, reference {reference}"
            ));
        }
    }
    let inputs = BufferArenaInputs::defaults_for(config);
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
        if layout.scores.bytes / rows < need_scores || layout.lists.bytes / rows < topk as usize * 4
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
    for f in buffer_checks(config, built, &dims) {
        failures.push(format!("{name}: {f}"));
    }
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
        failures.extend(model_failures(name, config, entry, &built, &widths));
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
        let inputs = BufferArenaInputs::defaults_for(&config);
        let sizes = inputs.sizes(&config).unwrap();
        let m = inputs.max_batch_tokens;
        assert_eq!(sizes.moe_latent_in, m * latent * 2, "{name}");
        assert_eq!(sizes.moe_latent_out, m * latent * 2, "{name}");
    }
    let dense = SHIPPED[0].config_with_levers(Default::default()).unwrap();
    let sizes = BufferArenaInputs::defaults_for(&dense)
        .sizes(&dense)
        .unwrap();
    assert_eq!((sizes.moe_latent_in, sizes.moe_latent_out), (0, 0));
}
