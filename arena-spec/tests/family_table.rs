//! The family table (`src/config/family/table.rs`) against what reads it and what documents
//! it: each row's defaults are keys the loader asks for, each row has its FAMILIES.md
//! section citing the reference class it follows, and `Family::ALL` holds every family once.

use arena_spec::config::keys_asked;
use arena_spec::models::SHIPPED;
use arena_spec::{Family, Levers, ModelConfig};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

use arena_spec::config::family::FAMILIES_MD;

fn parse(text: &str) -> Value {
    serde_json::from_str(&text.replace("Infinity", "1e308")).unwrap()
}

/// Every file the tests have of each family: the shipped configs, the Mamba-2 fixture, and a
/// Qwen2-MoE file made from the Qwen3-MoE one (no verbatim Qwen2-MoE file is shipped;
/// `models/SOURCES.md`), and for a family none of these is of, its census default config.
fn files_by_family() -> BTreeMap<&'static str, Vec<(String, String)>> {
    let mut files: Vec<(String, String)> = SHIPPED
        .iter()
        .map(|m| (m.name.to_string(), m.json.to_string()))
        .collect();
    // The fixtures of families without a shipped file.
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    for entry in std::fs::read_dir(fixtures).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        files.push((path.display().to_string(), text));
    }
    let qwen3_moe = SHIPPED.iter().find(|m| m.name == "qwen3-30b-a3b").unwrap();
    let mut qwen2_moe = parse(qwen3_moe.json);
    qwen2_moe["model_type"] = json!("qwen2_moe");
    files.push(("qwen3-30b-a3b as qwen2_moe".into(), qwen2_moe.to_string()));

    let mut by_family: BTreeMap<&'static str, Vec<(String, String)>> = BTreeMap::new();
    for (name, text) in files {
        let c = ModelConfig::from_json_str_with_levers(&text, &name, Levers::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        by_family
            .entry(c.family.model_type())
            .or_default()
            .push((name, text));
    }
    // The census's default config of a family no file above is of (Gemma, GLM-4, ...): what
    // its configuration class writes.
    let census = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/census/configs");
    for entry in std::fs::read_dir(census).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.display().to_string();
        let Ok(c) = ModelConfig::from_json_str_with_levers(&text, &name, Levers::default()) else {
            continue;
        };
        let own = c.text_model.found_by == arena_spec::Resolution::ModelType;
        if own && !by_family.contains_key(c.family.model_type()) {
            by_family.insert(c.family.model_type(), vec![(name, text)]);
        }
    }
    by_family
}

/// The file with the row's default keys removed, where the family reads its text model.
fn without_defaults(text: &str, family: Family) -> String {
    let mut v = parse(text);
    let nested = v.get("text_config").is_some_and(Value::is_object)
        && family.text_model_type().is_some()
        && v["model_type"] == json!(family.model_type());
    let obj = if nested {
        v["text_config"].as_object_mut().unwrap()
    } else {
        v.as_object_mut().unwrap()
    };
    for (key, _) in family.rules().defaults {
        obj.remove(*key);
    }
    v.to_string()
}

/// The file without its `layer_types` list, where the family has another way to lay out its
/// layers (Qwen3.5's `full_attention_interval`): the fallback's keys are asked for too.
fn without_layer_list(text: &str) -> String {
    let mut v = parse(text);
    if let Some(text_config) = v.get_mut("text_config").and_then(Value::as_object_mut) {
        text_config.remove("layer_types");
    }
    if let Some(top) = v.as_object_mut() {
        top.remove("layer_types");
    }
    v.to_string()
}

/// A default no reader asks for would never apply: a key misspelt in the row, or read past
/// the key reader (`Fields` directly) where the row's default cannot reach it. Each file of
/// the family is loaded as it is, with the row's default keys removed (so the defaults are
/// what it loads with), and without its layer list (so a fallback layout's keys are read);
/// the loader must ask for every default key.
#[test]
fn every_default_is_a_key_the_loader_asks_for() {
    let by_family = files_by_family();
    for family in Family::ALL {
        let files = by_family
            .get(family.model_type())
            .unwrap_or_else(|| panic!("{family:?}: no file of this family to load"));
        let mut asked = BTreeSet::new();
        for (name, text) in files {
            asked.extend(keys_asked(text).unwrap_or_else(|e| panic!("{name}: {e}")));
            let stripped = without_defaults(text, family);
            match keys_asked(&stripped) {
                Ok(keys) => asked.extend(keys),
                // A default that stands for a feature the row refuses (Gemma 4's
                // `hidden_size_per_layer_input`: absent, the class's 256 applies) refuses the
                // file without it: the key was asked for on the way.
                Err(e)
                    if family
                        .rules()
                        .refusals
                        .iter()
                        .any(|r| e.to_string().contains(&format!("{}` is", r.key))) => {}
                Err(e) => panic!("{name} without its defaults: {e}"),
            }
            // A family that needs its layer list refuses the file without it: nothing asked.
            if let Ok(keys) = keys_asked(&without_layer_list(text)) {
                asked.extend(keys);
            }
        }
        for (key, _) in family.rules().defaults {
            assert!(
                asked.contains(*key),
                "{family:?}: the default for `{key}` is never asked for (asked: {asked:?})"
            );
        }
    }
}

/// The family names of FAMILIES.md's `##` headings: `qwen3_5 / qwen3_5_moe (text_config)`
/// names two, `Notation and the width methods` none.
fn sections() -> BTreeMap<&'static str, &'static str> {
    let mut sections = BTreeMap::new();
    let parts: Vec<&str> = FAMILIES_MD.split("\n## ").skip(1).collect();
    for part in parts {
        let (heading, body) = part.split_once('\n').unwrap_or((part, ""));
        let names = heading.split(" (").next().unwrap();
        if names.contains(' ') && !names.contains(" / ") {
            continue;
        }
        for name in names.split(" / ") {
            assert!(
                !sections.contains_key(name),
                "FAMILIES.md has two sections for {name}"
            );
            sections.insert(name, body);
        }
    }
    sections
}

/// Each row has its FAMILIES.md section, and the section names the modeling class the row
/// follows; each family section is a row's.
#[test]
fn every_row_has_its_families_md_section() {
    let sections = sections();
    for family in Family::ALL {
        let rules = family.rules();
        let section = sections.get(rules.model_type).unwrap_or_else(|| {
            panic!(
                "FAMILIES.md has no `## {}` section (headings: {:?})",
                rules.model_type,
                sections.keys().collect::<Vec<_>>()
            )
        });
        if let Some(reference) = rules.reference {
            assert!(
                section.contains(reference.modeling_class),
                "the {} section of FAMILIES.md does not name `{}`, the class its row follows",
                rules.model_type,
                reference.modeling_class
            );
        }
    }
    for name in sections.keys() {
        assert!(
            Family::ALL
                .iter()
                .any(|f| f.model_type() == *name || f.text_model_type() == Some(name)),
            "FAMILIES.md has a section for {name}, which no row has"
        );
    }
}

/// `Family::ALL` is written from the same list as the enum (so it cannot leave a variant
/// out); each entry is one family, in declaration order, with its own `model_type`s. A row's
/// text model type may be another row's own model type (Kimi-K2.5 nests a `kimi_k2` config,
/// which the `kimi_k2` row reads alone), never another row's text model type.
#[test]
fn all_lists_every_family_once() {
    let mut types = BTreeSet::new();
    let mut text_types = BTreeSet::new();
    for (i, family) in Family::ALL.into_iter().enumerate() {
        assert_eq!(family as usize, i, "{family:?} out of declaration order");
        let rules = family.rules();
        assert_eq!(rules.model_type, family.model_type());
        assert!(
            types.insert(rules.model_type),
            "two rows have model_type {}",
            rules.model_type
        );
        if let Some(t) = rules.text_model_type {
            assert!(text_types.insert(t), "two rows nest text model type {t}");
        }
    }
    for t in &text_types {
        let owner = Family::ALL.into_iter().find(|f| f.model_type() == *t);
        assert!(
            owner.is_none_or(|f| f.text_model_type().is_none()),
            "{t}: a nested text model type that is itself a wrapper"
        );
    }
}

/// A model type refused as not sized is no row's (a row's file would never reach the refusal),
/// and its file is refused naming `model_type` and the reason.
#[test]
fn unsized_model_types_are_no_rows_and_refuse_with_their_reason() {
    use arena_spec::config::family::UNSIZED_MODEL_TYPES;
    for (model_type, reason) in UNSIZED_MODEL_TYPES {
        assert!(
            Family::ALL
                .iter()
                .all(|f| f.model_type() != *model_type && f.text_model_type() != Some(model_type)),
            "{model_type} is a row"
        );
        let dir = std::env::temp_dir().join(format!("arena-unsized-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{model_type}.json"));
        std::fs::write(&path, format!("{{\"model_type\": \"{model_type}\"}}")).unwrap();
        let err = arena_spec::ModelConfig::load_with_levers(&path, Default::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("field `model_type`") && err.contains(reason),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// The counts the documentation states in prose are the code's: the families (`model_type`s)
/// the shipped files cover, the shipped vendor files, and the engine
/// arena's buffers, the seeds' and its own. A page that states one wrongly fails here, naming
/// the page and the words.
#[test]
fn the_readme_and_docs_counts_are_the_codes() {
    use arena_runtime::Arena;
    let read = |page: &str| {
        let path = format!("{}/../{page}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let vendor: Vec<_> = SHIPPED
        .iter()
        .filter(|m| !m.name.starts_with("synthetic"))
        .collect();
    // A family is a `model_type` (Gemma 3's `gemma3_text` and `gemma3` two, as the list in
    // docs/models.md names them).
    let families: BTreeSet<String> = vendor
        .iter()
        .map(|m| parse(m.json)["model_type"].as_str().unwrap().to_string())
        .collect();
    let buffers = arena_spec::BufferArena::BUFFERS.len();
    let seeds = arena_spec::SEEDS_BUFFERS;
    let claims = [
        (
            "README.md",
            format!("files of {} model\nfamilies", families.len()),
        ),
        ("README.md", format!("{seeds} buffers with their formulas")),
        (
            "README.md",
            format!(
                "after the seeds' {seeds} it holds {} buffers",
                buffers - seeds
            ),
        ),
        ("README.md", format!("`BufferArena` has {buffers} and")),
        (
            "README.md",
            format!("// {buffers} buffers, by their formulas"),
        ),
        (
            "arena-spec/README.md",
            format!("of {} model families", families.len()),
        ),
        (
            "docs/models.md",
            format!("{} files of {} families", vendor.len(), families.len()),
        ),
    ];
    // The census's counts, as `census.rs` holds FAMILIES.md to the loader.
    let families_md = read("arena-spec/config/FAMILIES.md");
    let census = families_md
        .lines()
        .find(|l| l.contains(" architectures are sized "))
        .expect("FAMILIES.md has its census");
    let n = |i: usize| {
        census
            .split_whitespace()
            .nth(i)
            .unwrap()
            .trim_end_matches(',')
    };
    let (sized, all) = (n(0), n(3));
    let exact = census
        .split("), ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let claims = claims.into_iter().chain([(
        "README.md",
        format!(
            "Of the {all} architectures that transformers 5.24.0 and vLLM 0.33.0 both serve, it \
             sizes {sized} ({exact} exactly"
        ),
    )]);
    for (page, words) in claims {
        let text = read(page).replace("\r\n", "\n");
        // Prose wraps anywhere: compare with every run of whitespace as one space.
        let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            squash(&text).contains(&squash(&words)),
            "{page} does not say {words:?}: the code's count"
        );
    }
}
