//! `arena models`: the shipped configs and their key shapes.

use crate::common::CliError;
use arena_spec::models::SHIPPED;

pub fn run() -> Result<(), CliError> {
    println!(
        "{:<30} {:<13} {:>6} {:>6} {:>14} {:>16} {:>8}",
        "model", "model_type", "hidden", "layers", "attn/gdn/mamba", "experts (top-k)", "vocab"
    );
    for m in SHIPPED {
        let c = m.config()?;
        let experts = if c.is_moe() {
            format!("{} ({})", c.num_experts, c.num_experts_per_tok)
        } else {
            "dense".into()
        };
        let name = if m.is_synthetic() {
            format!("{} *", m.name)
        } else {
            m.name.to_string()
        };
        println!(
            "{:<30} {:<13} {:>6} {:>6} {:>14} {:>16} {:>8}",
            name,
            c.model_type,
            c.hidden_size,
            c.num_hidden_layers,
            format!(
                "{}/{}/{}",
                c.num_attention_layers(),
                c.num_gdn_layers(),
                c.num_mamba_layers()
            ),
            experts,
            c.vocab_size
        );
    }
    println!("\n* synthetic: no published model; turns on every feature the arena sizes.");
    Ok(())
}
