//! The reference outputs `reference.py` commits, and how a run's logits compare with them.

use serde_json::Value;
use std::path::Path;

/// What transformers produced for one model: the tokens and, per position, the argmax, the
/// largest logit and the logits at the probe ids.
pub struct Reference {
    pub model: String,
    pub device: String,
    pub tokens: Vec<u32>,
    pub prefill: usize,
    pub probe_ids: Vec<usize>,
    /// (argmax, max, probes) per position: the prefill's, then one per decode step.
    pub positions: Vec<(usize, f32, Vec<f32>)>,
    /// A MoE model's chosen experts per position and layer, sorted (empty for a dense one).
    pub routes: Vec<Vec<Vec<u32>>>,
}

impl Reference {
    pub fn read(path: &Path) -> Result<Reference, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let doc: Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let list = |v: &Value| -> Vec<f64> {
            v.as_array()
                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default()
        };
        Ok(Reference {
            model: doc["model"].as_str().unwrap_or_default().to_string(),
            device: doc["device"].as_str().unwrap_or_default().to_string(),
            tokens: list(&doc["tokens"]).into_iter().map(|t| t as u32).collect(),
            prefill: doc["prefill"].as_u64().ok_or("no prefill")? as usize,
            probe_ids: list(&doc["probe_ids"])
                .into_iter()
                .map(|t| t as usize)
                .collect(),
            positions: doc["positions"]
                .as_array()
                .ok_or("no positions")?
                .iter()
                .map(|p| {
                    (
                        p["argmax"].as_u64().unwrap_or(u64::MAX) as usize,
                        p["max"].as_f64().unwrap_or(f64::NAN) as f32,
                        list(&p["probes"]).into_iter().map(|x| x as f32).collect(),
                    )
                })
                .collect(),
            routes: doc["positions"]
                .as_array()
                .ok_or("no positions")?
                .iter()
                .map(|p| {
                    p["experts"]
                        .as_array()
                        .map(|layers| {
                            layers
                                .iter()
                                .map(|l| list(l).into_iter().map(|e| e as u32).collect())
                                .collect()
                        })
                        .unwrap_or_default()
                })
                .collect(),
        })
    }

    /// The layers at which our routing of position `i` chose other experts than the
    /// reference's.
    pub fn routing_differs(&self, i: usize, ours: &[Vec<Vec<u32>>]) -> Vec<usize> {
        let theirs = &self.routes[i];
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
    let (argmax, max, probes) = &reference.positions[i];
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
