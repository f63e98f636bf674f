//! The per-buffer report of any arena at its sizes: what `arena plan` prints for the engine's
//! arena, for an author's arena too. One row per buffer (name, dtype, shape, bytes, phase,
//! gate, floor, tracking), the totals, and the reuse slab's footprint and lower bound; a text
//! table (`Display`), and with the `serde` feature a `Serialize` document.

use crate::arena::Arena;
use crate::error::SizeError;
use crate::reuse::Live;

/// One buffer of a report.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BufferRow {
    pub name: &'static str,
    pub dtype: &'static str,
    /// The shape as numbers (empty for a byte formula or a closed gate).
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
    /// Its formula gives fewer bytes than its `min_bytes` floor, so the floor is its size
    /// (known from the shape for a shape buffer; a caller that knows a byte formula's raw
    /// bytes may set it for those too).
    pub at_floor: bool,
    /// The phases it is live in: `whole step`, a phase, or `first..=last`.
    pub phase: String,
}

/// An arena at its sizes, buffer by buffer, with its totals and reuse slab.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ArenaReport {
    /// The arena's name (`Arena::NAME`).
    pub arena: &'static str,
    /// The step's phases in order.
    pub phases: Vec<&'static str>,
    pub buffers: Vec<BufferRow>,
    /// The sum of the tracked buffers: what a preflight reserves without reuse.
    pub total_bytes: usize,
    /// Bytes of the untracked buffers: allocated, not in the total.
    pub untracked_bytes: usize,
    /// The plain slab (every buffer apart, 256-byte aligned), as allocated.
    pub slab_bytes: usize,
    /// The slab when buffers of disjoint phases reuse bytes (`AllocOptions::reuse()`), as
    /// allocated.
    pub reuse_bytes: usize,
    /// No reuse can need less: the largest sum of live bytes over the phases.
    pub reuse_lower_bound: usize,
}

impl ArenaReport {
    /// The report of `A` at `sizes`.
    pub fn new<A: Arena>(sizes: &A::Sizes) -> Result<ArenaReport, SizeError> {
        let buffers: Vec<BufferRow> = A::buffer_infos(sizes)
            .into_iter()
            .enumerate()
            .map(|(i, info)| {
                let shape = A::shape(sizes, i);
                let decl = info.decl;
                let off = decl.gated() && info.bytes == 0;
                BufferRow {
                    name: decl.name,
                    dtype: decl.dtype,
                    shape: if off { Vec::new() } else { shape.to_vec() },
                    formula: decl.formula,
                    bytes: info.bytes,
                    gated: decl.gated(),
                    tracked: decl.tracked,
                    off,
                    at_floor: decl.min_bytes.is_some()
                        && !off
                        && A::raw_bytes(sizes, i) < info.bytes,
                    phase: phase_text(decl.live, A::PHASES),
                }
            })
            .collect();
        let plan = A::reuse_plan(sizes)?;
        Ok(ArenaReport {
            arena: A::NAME,
            phases: A::PHASES.to_vec(),
            total_bytes: A::checked_tracked_total(sizes)?,
            untracked_bytes: buffers.iter().filter(|b| !b.tracked).map(|b| b.bytes).sum(),
            slab_bytes: plan.slab,
            reuse_bytes: plan.footprint,
            reuse_lower_bound: plan.lower_bound,
            buffers,
        })
    }

    /// The buffers sorted by size, largest first (ties by name).
    pub fn largest(&self, n: usize) -> Vec<&BufferRow> {
        let mut rows: Vec<&BufferRow> = self.buffers.iter().collect();
        rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.name.cmp(b.name)));
        rows.truncate(n);
        rows
    }

    /// The per-buffer table: buffer, dtype, shape, bytes, share of the total, phase, marks
    /// (`gated off (NULL)`, `floor`, `untracked`). What `arena plan` prints.
    pub fn table(&self) -> String {
        let mut out = String::new();
        // Each text column as wide as its widest entry, at least its usual width.
        let width = |text: &dyn Fn(&BufferRow) -> usize, least: usize| {
            self.buffers.iter().map(text).max().unwrap_or(0).max(least)
        };
        let name_w = width(&|b| b.name.len(), 22);
        let shape_w = width(&|b| shape_text(b).len(), 5);
        let phase_w = width(&|b| b.phase.len(), 12);
        out.push_str(&format!(
            "{:<name_w$} {:<9} {:<shape_w$} {:>12} {:>7}  {:<phase_w$}  {}\n",
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
                "{:<name_w$} {:<9} {:<shape_w$} {:>12} {:>7}  {:<phase_w$}  {}",
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

    /// The totals under the table: `total_bytes`, the untracked bytes, the reuse slab
    /// against the plain one and the lower bound.
    pub fn totals(&self) -> String {
        let mut out = format!(
            "total_bytes {} ({} B)\n",
            human_bytes(self.total_bytes),
            self.total_bytes
        );
        if self.untracked_bytes > 0 {
            let names: Vec<&str> = self
                .buffers
                .iter()
                .filter(|b| !b.tracked)
                .map(|b| b.name)
                .collect();
            out.push_str(&format!(
                "untracked   {} ({})\n",
                human_bytes(self.untracked_bytes),
                names.join(", ")
            ));
        }
        if !self.phases.is_empty() {
            let saving = if self.slab_bytes > 0 {
                100.0 * (1.0 - self.reuse_bytes as f64 / self.slab_bytes as f64)
            } else {
                0.0
            };
            let ratio = if self.reuse_lower_bound > 0 {
                self.reuse_bytes as f64 / self.reuse_lower_bound as f64
            } else {
                1.0
            };
            out.push_str(&format!(
                "reuse       {} ({} B) when buffers of disjoint phases reuse bytes: -{saving:.1}% against the plain slab {}; lower bound {} ({ratio:.3}×)\n",
                human_bytes(self.reuse_bytes),
                self.reuse_bytes,
                human_bytes(self.slab_bytes),
                human_bytes(self.reuse_lower_bound),
            ));
        }
        out
    }
}

impl core::fmt::Display for ArenaReport {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}\n{}", self.table(), self.totals())
    }
}

/// `whole step`, `ffn` or `gdn..=mamba2`, by the arena's phase names.
pub fn phase_text(live: Live, phases: &[&str]) -> String {
    let name = |p: usize| phases.get(p).copied().unwrap_or("?");
    match live {
        Live::WholeStep => "whole step".to_string(),
        Live::Phases { first, last } if first == last => name(first).to_string(),
        Live::Phases { first, last } => format!("{}..={}", name(first), name(last)),
    }
}

/// `[8192, 4096]`, or `(bytes)` for a byte formula, or `-` for a closed gate.
pub fn shape_text(b: &BufferRow) -> String {
    if b.off {
        "-".to_string()
    } else if b.shape.is_empty() {
        "(bytes)".to_string()
    } else {
        let dims: Vec<String> = b.shape.iter().map(usize::to_string).collect();
        format!("[{}]", dims.join(", "))
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
