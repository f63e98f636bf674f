//! `arena const-config`: a model's config written as a Rust `const`, for the const sizing
//! path (`BufferSizes::const_from_inputs` in a `const` item, `assert_fits!`).

use crate::common::{load_model, CliError};

#[derive(Debug, clap::Args)]
pub struct ConstConfigArgs {
    /// A shipped model's name (see `arena models`) or a path to a config.json
    pub model: String,
    /// The const's name [default: the model's name in upper case, e.g. LLAMA_3_1_8B]
    #[arg(long)]
    pub name: Option<String>,
}

pub fn run(args: ConstConfigArgs) -> Result<(), CliError> {
    let mut config = load_model(&args.model)?;
    // A const carries no environment: levers off, as the shipped consts.
    config.levers = Default::default();
    // A shipped name as it is (`qwen3-0.6b` has no extension); a path by its file's stem.
    let stem = match arena_spec::models::find(&args.model) {
        Some(_) => args.model.clone(),
        None => std::path::Path::new(&args.model)
            .file_stem()
            .map_or(args.model.clone(), |s| s.to_string_lossy().into_owned()),
    };
    let name = args.name.unwrap_or_else(|| arena_spec::const_name(&stem));
    check_identifier(&name)?;
    let item = config
        .const_item(&name)
        .expect("a loaded config is the whole model's");
    println!(
        "use arena_spec::{{Block, Family, KvLayer, Resolution, TextModel, LayerKind, Levers, ModelConfig, RecurrentStateDtype, StateDtype, StateDtypeSource, Tower, TowerKind, Towers, FormatSource, WeightFormat, WeightFormats}};\nuse std::borrow::Cow;\n"
    );
    print!("{item}");
    Ok(())
}

/// Rust's keywords (strict, reserved and edition 2024's `gen`): not a `const`'s name.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "gen", "macro",
    "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Refuses a name that would not compile as the `const`'s: an ASCII letter or `_` first,
/// then letters, digits and `_`, not `_` alone, not a keyword.
fn check_identifier(name: &str) -> Result<(), CliError> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !first_ok || !rest_ok || name == "_" || KEYWORDS.contains(&name) {
        return Err(CliError::Usage(format!(
            "`{name}` is not a Rust identifier for the const: use a letter or `_` first, then letters, digits and `_` (--name NAME)"
        )));
    }
    Ok(())
}
