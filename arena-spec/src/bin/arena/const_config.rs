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
    let item = config
        .const_item(&name)
        .expect("a loaded config is the whole model's");
    println!(
        "use arena_spec::{{Family, LayerKind, Levers, ModelConfig}};\nuse std::borrow::Cow;\n"
    );
    print!("{item}");
    Ok(())
}
