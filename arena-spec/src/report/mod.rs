//! Reports of a sized arena: one row per buffer, the totals, and their text and JSON forms.
//! The CLI prints these; the golden size tables are these; [`PlanReport`], [`FitReport`],
//! [`SweepReport`], [`DiffReport`] and [`ModelsReport`] are the `--json` documents of `arena
//! plan`, `fit`, `sweep`, `diff` and `models`, each versioned by [`SCHEMA_VERSION`].

mod documents;
mod plan;

pub use documents::{
    DiffReport, DiffRow, DiffSide, FitReport, GpuPlanReport, ModelRow, ModelsReport, SweepPoint,
    SweepReport, SCHEMA_VERSION,
};
pub use plan::{AllocSummary, LayoutReport, PlanReport, StageSummary};

use crate::arena::{BufferArena, BufferArenaInputs, BufferSizes};
use crate::config::levers::Levers;
use crate::config::ModelConfig;
use arena_runtime::{Arena, ArenaReport, SizeError};
use serde::Serialize;

/// One buffer of a report: the runtime's, which any arena's report has.
pub use arena_runtime::BufferRow;
/// Bytes in binary units and a row's shape as text: the runtime's report functions.
pub use arena_runtime::{human_bytes, shape_text};

/// A sized arena.
#[derive(Debug, Clone, Serialize)]
pub struct SizeReport {
    pub model: String,
    pub inputs: BufferArenaInputs,
    pub levers: Levers,
    pub buffers: Vec<BufferRow>,
    pub total_bytes: usize,
    /// Bytes of the untracked buffers (`o_latent`, `norm_unit_w`), allocated but not in the total.
    pub untracked_bytes: usize,
    /// The slab when buffers of disjoint phases reuse bytes (`AllocOptions::reuse()`),
    /// untracked buffers included, as allocated.
    pub reuse_bytes: usize,
    /// No reuse can need less: the largest sum of live bytes over the phases.
    pub reuse_lower_bound: usize,
    /// The plain slab (every buffer apart, 256-byte aligned), as allocated.
    pub slab_bytes: usize,
}

impl SizeReport {
    /// Sizes the arena of `config` at `inputs` and reports it: one row per buffer, the
    /// totals, the reuse slab's plan. Returns the sizes too, for callers that go on to
    /// allocate them.
    pub fn new(
        config: &ModelConfig,
        inputs: BufferArenaInputs,
    ) -> Result<(SizeReport, BufferSizes), SizeError> {
        let sizes = inputs.sizes(config)?;
        let arena = ArenaReport::new::<BufferArena>(&sizes)?;
        let report = SizeReport {
            model: config.source.to_string(),
            inputs,
            levers: config.levers,
            total_bytes: arena.total_bytes,
            untracked_bytes: arena.untracked_bytes,
            reuse_bytes: arena.reuse_bytes,
            reuse_lower_bound: arena.reuse_lower_bound,
            slab_bytes: arena.slab_bytes,
            buffers: arena.buffers,
        };
        Ok((report, sizes))
    }

    /// The runtime's report of the same rows and totals (what any arena's report is).
    pub fn arena_report(&self) -> ArenaReport {
        ArenaReport {
            arena: <BufferArena as Arena>::NAME,
            phases: <BufferArena as Arena>::PHASES.to_vec(),
            buffers: self.buffers.clone(),
            total_bytes: self.total_bytes,
            untracked_bytes: self.untracked_bytes,
            slab_bytes: self.slab_bytes,
            reuse_bytes: self.reuse_bytes,
            reuse_lower_bound: self.reuse_lower_bound,
        }
    }

    /// The buffers sorted by size, largest first.
    pub fn largest(&self, n: usize) -> Vec<&BufferRow> {
        let mut rows: Vec<&BufferRow> = self.buffers.iter().collect();
        rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.name.cmp(b.name)));
        rows.truncate(n);
        rows
    }

    /// The golden-table form: one line per buffer (name, bytes, shape) and the total, exact
    /// numbers only, so a formula change is a one-line diff in `tests/golden/`.
    pub fn golden_lines(&self) -> String {
        let mut out = String::new();
        for b in &self.buffers {
            out.push_str(&format!(
                "{:<22} {:>14}  {}\n",
                b.name,
                b.bytes,
                shape_text(b)
            ));
        }
        out.push_str(&format!("{:<22} {:>14}\n", "total_bytes", self.total_bytes));
        out
    }

    /// The per-buffer table: buffer, dtype, shape, bytes, share of the total, phase, marks:
    /// the runtime's `ArenaReport::table`, which an author's arena prints the same way.
    pub fn table(&self) -> String {
        self.arena_report().table()
    }
}

/// `whole step`, `ffn` or `gdn..=mamba2`, by the engine arena's phase names.
pub fn phase_text(live: arena_runtime::Live) -> String {
    arena_runtime::phase_text(live, <BufferArena as Arena>::PHASES)
}

/// Parses a byte count: `20GiB`, `1.5 GB`, `512MiB`, `4096`.
pub fn parse_bytes(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = (&t[..split], t[split..].trim());
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a byte count (try 20GiB, 512MiB or 4096)"))?;
    let scale: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024f64.powi(2),
        "gib" => 1024f64.powi(3),
        "tib" => 1024f64.powi(4),
        _ => {
            return Err(format!(
                "`{text}`: unknown unit `{unit}` (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)"
            ))
        }
    };
    let bytes = value * scale;
    if !bytes.is_finite() || bytes < 1.0 || bytes >= usize::MAX as f64 {
        return Err(format!("`{text}` is not a usable byte count"));
    }
    Ok(bytes as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(human_bytes(256), "256 B");
        assert_eq!(human_bytes(1536), "1.50 KiB");
        assert_eq!(human_bytes(3 << 30), "3.00 GiB");
    }

    #[test]
    fn budgets() {
        assert_eq!(parse_bytes("20GiB"), Ok(20 << 30));
        assert_eq!(parse_bytes("1.5 GB"), Ok(1_500_000_000));
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert!(parse_bytes("20 parsecs").is_err());
        assert!(parse_bytes("GiB").is_err());
        assert!(parse_bytes("0").is_err());
    }
}
