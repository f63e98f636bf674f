//! `arena models`: the shipped configs and their key shapes.

use crate::common::{print_json, CliError};
use arena_spec::report::ModelsReport;

#[derive(Debug, clap::Args)]
pub struct ModelsArgs {
    /// Print one JSON document (`arena_spec::report::ModelsReport`) instead of the table
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ModelsArgs) -> Result<(), CliError> {
    let doc = ModelsReport::shipped()?;
    if args.json {
        return print_json(&doc);
    }
    println!(
        "{:<30} {:<13} {:>6} {:>6} {:>14} {:>16} {:>8}",
        "model", "model_type", "hidden", "layers", "attn/gdn/mamba", "experts (top-k)", "vocab"
    );
    for m in &doc.models {
        let experts = if m.experts > 0 {
            format!("{} ({})", m.experts, m.experts_per_token)
        } else {
            "dense".into()
        };
        let name = if m.synthetic {
            format!("{} *", m.name)
        } else {
            m.name.to_string()
        };
        println!(
            "{:<30} {:<13} {:>6} {:>6} {:>14} {:>16} {:>8}",
            name,
            m.model_type,
            m.hidden_size,
            m.num_hidden_layers,
            format!("{}/{}/{}", m.attention_layers, m.gdn_layers, m.mamba_layers),
            experts,
            m.vocab_size
        );
    }
    println!("\n* synthetic: no published model; turns on every feature the arena sizes.");
    Ok(())
}
