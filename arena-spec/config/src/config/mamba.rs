//! The Mamba-2 mixer sizes of a config, by the family's Mamba-2 keys (its row's `mamba`).

use super::error::{ConfigError, MAX_DIM};
use super::keys::Keys;

/// Mamba-2 mixer sizes, as the family's mixer reads them (all 0 without Mamba-2 keys).
#[derive(Default)]
pub(super) struct MambaShape {
    pub(super) heads: usize,
    pub(super) head_dim: usize,
    pub(super) state: usize,
    pub(super) groups: usize,
    pub(super) conv_kernel: usize,
    pub(super) chunk: usize,
}

pub(super) fn mamba_shape(k: &Keys, hidden_size: usize) -> Result<MambaShape, ConfigError> {
    let f = &k.f;
    let Some(keys) = k.rules.mamba else {
        return Ok(MambaShape::default());
    };
    // The fallbacks where neither the file nor the row gives a value (the synthetic configs).
    let shape = MambaShape {
        heads: k.dim_or(keys.heads, 0)?,
        head_dim: k.dim_or(keys.head_dim, 0)?,
        state: k.dim_or(keys.state, 0)?,
        groups: k.dim_any(keys.n_groups, MAX_DIM)?.unwrap_or(1),
        conv_kernel: k.dim_any(keys.conv_kernel, MAX_DIM)?.unwrap_or(4),
        chunk: k.dim_any(keys.chunk_size, MAX_DIM)?.unwrap_or(256),
    };
    // Mamba2Mixer sizes its inner width as `expand · hidden_size` and Mamba2Config refuses a
    // file where that is not `num_heads · head_dim`; NemotronHMamba2Mixer uses
    // `mamba_num_heads · mamba_head_dim` and never reads `expand` for a width.
    if let Some(expand_key) = keys.expand {
        // 2: Mamba2Config's `expand`, for an explicit `null`.
        let expand = k.dim_or(expand_key, 2)?;
        if expand.checked_mul(hidden_size) != shape.heads.checked_mul(shape.head_dim) {
            return Err(f.invalid(
                expand_key,
                format!(
                    "is {expand}: {expand_key} · hidden_size = {} but {} · {} = {} · {} \
                     (the reference refuses a file where they differ)",
                    expand.saturating_mul(hidden_size),
                    keys.heads,
                    keys.head_dim,
                    shape.heads,
                    shape.head_dim
                ),
            ));
        }
    }
    Ok(shape)
}
