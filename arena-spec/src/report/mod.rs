//! Reports of a sized arena: one row per buffer, the totals, and their text and JSON forms.
//! The CLI prints these; the golden size tables are these; [`PlanReport`] is `arena plan
//! --json`'s document.

mod plan;

pub use plan::{AllocSummary, LayoutReport, PlanReport, StageSummary};

use crate::arena::{ArenaInputs, BufferArena, BufferSizes};
use crate::config::levers::Levers;
use crate::config::ModelConfig;
use arena_runtime::{Arena, SizeError};
use serde::Serialize;

/// One buffer of a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BufferRow {
    pub name: &'static str,
    pub dtype: &'static str,
    /// The dims as numbers (empty for a byte formula or a closed gate).
    pub shape: Vec<usize>,
    /// The formula as declared.
    pub formula: &'static str,
    pub bytes: usize,
    /// Declared with a gate.
    pub gated: bool,
    /// Counted in `total_bytes`.
    pub tracked: bool,
    /// Gated and 0 bytes: its pointer is NULL.
    pub off: bool,
    /// Its shape or byte formula gives fewer bytes than its `min_bytes` floor (the model
    /// lacks the feature).
    pub at_floor: bool,
    /// The phases it is live in: `whole step`, a phase, or `first..=last`.
    pub phase: String,
}

/// A sized arena.
#[derive(Debug, Clone, Serialize)]
pub struct SizeReport {
    pub model: String,
    pub inputs: ArenaInputs,
    pub levers: Levers,
    pub buffers: Vec<BufferRow>,
    pub total_bytes: usize,
    /// Bytes of the untracked buffers (`o_latent`, `norm_unit_w`), allocated but not in the total.
    pub untracked_bytes: usize,
    /// The slab when buffers of disjoint phases share bytes (`AllocOptions::shared()`),
    /// untracked buffers included, as allocated.
    pub shared_bytes: usize,
    /// No sharing can need less: the largest sum of live bytes over the phases.
    pub shared_lower_bound: usize,
    /// The slab without sharing (every buffer apart, 256-byte aligned), as allocated.
    pub unshared_slab_bytes: usize,
}

impl SizeReport {
    /// Sizes the arena of `config` at `inputs` and reports it: one row per buffer, the
    /// totals, the shared slab's plan. Returns the sizes too, for callers that go on to
    /// allocate them.
    pub fn new(
        config: &ModelConfig,
        inputs: ArenaInputs,
    ) -> Result<(SizeReport, BufferSizes), SizeError> {
        let (sizes, shapes) = inputs.sizes_and_shapes(config)?;
        let buffers: Vec<BufferRow> = BufferArena::buffer_infos(&sizes)
            .into_iter()
            .zip(shapes)
            .map(|(info, shape)| BufferRow {
                name: info.decl.name,
                dtype: info.decl.dtype,
                formula: info.decl.formula,
                bytes: info.bytes,
                gated: info.decl.gated(),
                tracked: info.decl.tracked,
                off: info.decl.gated() && info.bytes == 0,
                at_floor: info.decl.min_bytes.is_some() && shape.raw_bytes < info.bytes,
                shape: shape.dims,
                phase: phase_text(info.decl.live),
            })
            .collect();
        let plan = BufferArena::shared_plan(&sizes)?;
        let untracked_bytes = buffers.iter().filter(|b| !b.tracked).map(|b| b.bytes).sum();
        let report = SizeReport {
            model: config.source.to_string(),
            inputs,
            levers: config.levers,
            total_bytes: sizes.total_bytes(),
            untracked_bytes,
            shared_bytes: plan.footprint,
            shared_lower_bound: plan.lower_bound,
            unshared_slab_bytes: plan.unshared,
            buffers,
        };
        Ok((report, sizes))
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

    /// The per-buffer table: buffer, dtype, shape, bytes, share of the total, marks.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let shape_w = self
            .buffers
            .iter()
            .map(|b| shape_text(b).len())
            .max()
            .unwrap_or(5)
            .max(5);
        out.push_str(&format!(
            "{:<22} {:<9} {:<shape_w$} {:>12} {:>7}  {:<12}  {}\n",
            "buffer", "dtype", "shape", "bytes", "share", "phase", "marks"
        ));
        for b in &self.buffers {
            let share = if self.total_bytes > 0 && b.tracked {
                format!("{:.1}%", 100.0 * b.bytes as f64 / self.total_bytes as f64)
            } else {
                "-".to_string()
            };
            let marks = [
                (b.off, "gated off (NULL)"),
                (b.at_floor, "floor"),
                (!b.tracked, "untracked"),
            ]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, m)| *m)
            .collect::<Vec<_>>()
            .join(", ");
            let line = format!(
                "{:<22} {:<9} {:<shape_w$} {:>12} {:>7}  {:<12}  {}",
                b.name,
                b.dtype,
                shape_text(b),
                human_bytes(b.bytes),
                share,
                b.phase,
                marks
            );
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// `whole step`, `ffn` or `gdn..=mamba2`, by the engine arena's phase names.
pub fn phase_text(live: arena_runtime::Live) -> String {
    let names = <BufferArena as Arena>::PHASES;
    match live {
        arena_runtime::Live::WholeStep => "whole step".to_string(),
        arena_runtime::Live::Phases { first, last } if first == last => names[first].to_string(),
        arena_runtime::Live::Phases { first, last } => {
            format!("{}..={}", names[first], names[last])
        }
    }
}

/// `[8192, 4096]`, or `bytes` for a byte formula, or `-` for a closed gate.
pub fn shape_text(b: &BufferRow) -> String {
    if b.off {
        "-".to_string()
    } else if b.shape.is_empty() {
        "(bytes)".to_string()
    } else {
        format!(
            "[{}]",
            b.shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// Bytes in binary units: `256 B`, `1.50 KiB`, `3.25 GiB`.
pub fn human_bytes(bytes: usize) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
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
