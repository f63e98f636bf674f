//! The reference outputs `reference.py` commits, and how a run's logits compare with them.

use std::path::Path;

/// What transformers produced for one model: the tokens and, per position, the argmax, the
/// largest logit and the logits at the probe ids (fields `reference.py` writes and this
/// reads; the others are for people).
#[derive(Clone, serde::Deserialize)]
pub struct Reference {
    pub model: String,
    pub device: String,
    pub tokens: Vec<u32>,
    pub prefill: usize,
    pub probe_ids: Vec<usize>,
    /// The prefill's positions, then one per decode step.
    pub positions: Vec<Position>,
}

/// One position of the reference.
#[derive(Clone, serde::Deserialize)]
pub struct Position {
    pub argmax: usize,
    pub max: f32,
    /// The logits at `Reference::probe_ids`.
    pub probes: Vec<f32>,
    /// A MoE model's chosen experts per layer, sorted (absent for a dense one).
    #[serde(default)]
    pub experts: Vec<Vec<u32>>,
    /// The reference's own rounding noise here: the largest distance, over the probes and the
    /// maximum, between these bf16 logits and the same model's one f32 pass over the tokens,
    /// each in units of `max(|logit|, 2)` (the scale of `run::tolerance`); absent in
    /// references written before it was recorded.
    #[serde(default)]
    pub noise: Option<f32>,
}

impl Reference {
    pub fn read(path: &Path) -> Result<Reference, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The layers at which our routing of position `i` chose other experts than the
    /// reference's.
    pub fn routing_differs(&self, i: usize, ours: &[Vec<Vec<u32>>]) -> Vec<usize> {
        let theirs = &self.positions[i].experts;
        (0..theirs.len())
            .filter(|&l| ours.get(i).and_then(|p| p.get(l)) != Some(&theirs[l]))
            .collect()
    }
}

/// One position's agreement: the reference's and our argmax, and the largest and mean
/// absolute differences over the probed logits and the maximum.
pub struct PositionError {
    pub argmax: (usize, usize),
    /// Our logit at the reference's argmax is within `tolerance` of our maximum: a near tie
    /// that bf16 rounding may order either way.
    pub argmax_tie: bool,
    pub max_abs: f32,
    pub mean_abs: f32,
}

/// `logits` (`[vocab]`, one position) against the reference's position `i`.
pub fn compare(reference: &Reference, i: usize, logits: &[f32], tolerance: f32) -> PositionError {
    let Position {
        argmax,
        max,
        probes,
        ..
    } = &reference.positions[i];
    let ours = logits
        .iter()
        .enumerate()
        .fold((0, f32::NEG_INFINITY), |best, (j, &x)| {
            if x > best.1 {
                (j, x)
            } else {
                best
            }
        });
    let mut errors: Vec<f32> = reference
        .probe_ids
        .iter()
        .zip(probes)
        .map(|(&id, want)| (logits[id] - want).abs())
        .collect();
    errors.push((ours.1 - max).abs());
    PositionError {
        argmax: (*argmax, ours.0),
        argmax_tie: (ours.1 - logits[*argmax]).abs() <= tolerance,
        max_abs: errors.iter().cloned().fold(0.0, f32::max),
        mean_abs: errors.iter().sum::<f32>() / errors.len() as f32,
    }
}
