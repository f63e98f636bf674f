//! The MoE shape of a config: routed experts, their width, the shared expert and which
//! layers run a dense FFN instead, by the family's MoE keys.

use super::error::{ConfigError, MAX_DIM};
use super::family::{DenseLayers, Mixers, RefusalScope, SharedExpert};
use super::keys::Keys;
use super::LayerKind;

/// The MoE widths one config resolves to, in the family-independent terms of `ModelConfig`.
pub(super) struct MoeShape {
    pub(super) experts: usize,
    pub(super) top_k: usize,
    pub(super) expert_width: usize,
    /// The shared expert path's width (0 without one).
    pub(super) shared_width: usize,
    /// The routed experts' latent width (0: they run at the hidden size).
    pub(super) latent_width: usize,
    /// Per layer of a MoE model: its FFN is dense.
    pub(super) dense_ffn: Vec<bool>,
    /// The dense FFN width (0 where no layer has one and the file gives none).
    pub(super) dense_width: usize,
}

pub(super) fn moe_shape(k: &Keys, layers: &[LayerKind]) -> Result<MoeShape, ConfigError> {
    let f = &k.f;
    let rules = k.rules;
    let dense = MoeShape {
        experts: 0,
        top_k: 0,
        expert_width: 0,
        shared_width: 0,
        latent_width: 0,
        dense_ffn: vec![false; layers.len()],
        // The row's dense width key: GraniteMoeHybrid's shared MLP is its FFN without experts.
        dense_width: k.dim_or(rules.dense_width_key, 0)?,
    };
    let Some(keys) = rules.moe else {
        return Ok(dense);
    };
    // A switch the experts exist by: off, the model is dense (its keys are not read).
    if let Some(switch) = keys.enabled_by {
        if !f.opt_bool(switch)?.unwrap_or(false) {
            return Ok(dense);
        }
    }
    let routes = match rules.mixers {
        // Nemotron-H routes exactly in its `moe` layers, whatever keys the file carries.
        Mixers::NemotronHybrid => layers.contains(&LayerKind::Moe),
        // A MoE family's file without an expert count is refused rather than sized dense
        // (the reference would build its class default of experts); 0 experts is dense, as
        // the reference's sparse blocks read it.
        _ => match k.dim_any(keys.experts, MAX_DIM)? {
            None => return Err(f.missing(keys.experts_field)),
            Some(n) => n > 0,
        },
    };
    if !routes {
        return Ok(dense);
    }
    // The row's refusals of a feature of the experts the arena does not size.
    for refusal in rules.refusals {
        match refusal.scope {
            RefusalScope::RoutedExperts => {
                if let Some(value) = k.dim(refusal.key, MAX_DIM)?.filter(|&v| v > 0) {
                    return Err(f.invalid(refusal.key, refusal.reason_for(value)));
                }
            }
            // Checked for every file as it loads (`load.rs`).
            RefusalScope::AnyModel
            | RefusalScope::AnyModelWhenFalse
            | RefusalScope::UnlessHidden
            | RefusalScope::UnlessSameAs(_)
            | RefusalScope::Present => {}
        }
    }
    let experts = k.positive_any(keys.experts, MAX_DIM)?;
    let top_k = k.dim_any(keys.top_k, MAX_DIM)?.unwrap_or(0);
    let expert_width = match k.dim(keys.expert_width, MAX_DIM)? {
        Some(w) if w > 0 => w,
        _ => return Err(f.missing(keys.expert_width)),
    };
    let shared_width = match keys.shared {
        SharedExpert::None => 0,
        SharedExpert::Width(key) => k.dim_or(key, 0)?,
        SharedExpert::CountTimesExpertWidth => k.dim_or("n_shared_experts", 0)? * expert_width,
        SharedExpert::CountOfTimesExpertWidth(keys) => {
            k.dim_any(keys, MAX_DIM)?.unwrap_or(0) * expert_width
        }
        SharedExpert::SameAsExpert => expert_width,
        SharedExpert::SameAsExpertIf(key) => {
            if k.dim_or(key, 0)? > 0 {
                expert_width
            } else {
                0
            }
        }
    };
    // Latent MoE: the experts' input and output are `latent` wide, between two projections
    // of the hidden size; an absent or null key is the hidden size (the reference's
    // `nn.Identity` projections).
    let latent_width = match keys.latent {
        Some(key) => k.dim_or(key, 0)?,
        None => 0,
    };
    let n = layers.len();
    let first_k_of = |k: &Keys, key: &'static str| -> Result<Vec<bool>, ConfigError> {
        let dense = k.dim_or(key, 0)?.min(n);
        Ok((0..n).map(|i| i < dense).collect())
    };
    let first_k = |k: &Keys| first_k_of(k, "first_k_dense_replace");
    // Which layers run a dense FFN, layer by layer: a pipeline stage counts its own.
    let dense_ffn: Vec<bool> = match keys.dense_layers {
        DenseLayers::None => vec![false; n],
        DenseLayers::FirstK => first_k(k)?,
        DenseLayers::FirstKOf(key) => first_k_of(k, key)?,
        DenseLayers::FirstKOrTypes => match k.strings("mlp_layer_types")? {
            Some(types) => {
                k.one_per_layer("mlp_layer_types", types.len(), n)?;
                types.iter().map(|&t| t == "dense").collect()
            }
            None => first_k(k)?,
        },
        DenseLayers::SparseStep(default) => {
            let step = k.dim_or("decoder_sparse_step", 1)?;
            if step == 0 {
                return Err(f.invalid("decoder_sparse_step", "is 0, but must be at least 1"));
            }
            let mlp_only: std::collections::BTreeSet<usize> = k
                .indices("mlp_only_layers")?
                .unwrap_or_else(|| default.to_vec())
                .into_iter()
                .collect();
            (0..n)
                .map(|i| mlp_only.contains(&i) || (i + 1) % step != 0)
                .collect()
        }
        DenseLayers::Interleaved => {
            let routed: std::collections::BTreeSet<usize> = match k.indices("moe_layers")? {
                Some(list) => list.into_iter().filter(|&i| i < n).collect(),
                None => {
                    let step = k.dim_or("interleave_moe_layer_step", 1)?;
                    if step == 0 {
                        return Err(
                            f.invalid("interleave_moe_layer_step", "is 0, but must be at least 1")
                        );
                    }
                    (step - 1..n).step_by(step).collect()
                }
            };
            (0..n).map(|i| !routed.contains(&i)).collect()
        }
        DenseLayers::PerLayer => layers.iter().map(|&l| l == LayerKind::Mlp).collect(),
        DenseLayers::TypesOrFrequency => {
            match (k.strings("mlp_layer_types")?, k.indices("moe_layer_freq")?) {
                (Some(types), _) => {
                    k.one_per_layer("mlp_layer_types", types.len(), n)?;
                    types.iter().map(|&t| t == "dense").collect()
                }
                (None, Some(freq)) => {
                    k.one_per_layer("moe_layer_freq", freq.len(), n)?;
                    freq.iter().map(|&routes| routes == 0).collect()
                }
                (None, None) => vec![false; n],
            }
        }
        DenseLayers::StartEndInterval => {
            let start = k.dim_or("moe_layer_start_index", 0)?;
            let interval = k.dim_or("moe_layer_interval", 1)?;
            if interval == 0 {
                return Err(f.invalid("moe_layer_interval", "is 0, but must be at least 1"));
            }
            // -1 (the class default, and what files write) is the last layer.
            let end = match f.obj.get("moe_layer_end_index").and_then(|v| v.as_i64()) {
                Some(-1) | None => n.saturating_sub(1),
                Some(_) => k.dim_or("moe_layer_end_index", 0)?,
            };
            (0..n)
                .map(|i| !((i + 1) % interval == 0 && start <= i && i <= end))
                .collect()
        }
    };
    let dense_layers = dense_ffn.iter().filter(|&&d| d).count();
    // The width the dense layers run at; a MoE model without dense layers keeps the file's
    // `intermediate_size` (the FFN width LoRA and the Q2 scratch are sized from).
    let dense_width = if dense_layers > 0 {
        k.dim_or(rules.dense_width_key, 0)?
    } else {
        k.dim_or("intermediate_size", 0)?
    };
    if dense_layers > 0 && dense_width == 0 {
        return Err(f.missing(rules.dense_width_key));
    }
    Ok(MoeShape {
        experts,
        top_k,
        expert_width,
        shared_width,
        latent_width,
        dense_ffn,
        dense_width,
    })
}
