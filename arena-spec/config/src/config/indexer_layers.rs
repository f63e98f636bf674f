//! Which MLA layers build DeepSeek-V3.2's sparse-attention indexer (GLM-5's too): vLLM builds
//! one, with its key cache (`DeepseekV32IndexerCache`) and its weights (`wq_b`, `wk`,
//! `k_norm`, `weights_proj`), only on the layers `index_topk_freq`,
//! `index_skip_topk_offset` and `index_topk_pattern` select; a layer without one reuses the
//! top-k the last layer with one chose (vLLM v0.33.0, `4ba787ec9`:
//! `vllm/models/deepseek_v32/attention.py`: 166–191, the same rule in
//! `model_executor/models/deepseek_v2.py`: 1138–1168; transformers' `GlmMoeDsaConfig`
//! derives its `indexer_types` from the same formula).

use super::error::{ConfigError, MAX_DIM};
use super::keys::Keys;
use super::LayerKind;

/// One entry a layer: it builds an indexer. All false where `indexed` is false (no indexer, or
/// DeepSeek-V4's, which its CSA layers hold).
pub(super) fn indexer_layers(
    k: &Keys,
    layers: &[LayerKind],
    indexed: bool,
) -> Result<Vec<bool>, ConfigError> {
    let f = &k.f;
    if !indexed {
        return Ok(vec![false; layers.len()]);
    }
    // `getattr(config, "index_topk_freq", 1)`, `getattr(config, "index_skip_topk_offset", 2)`.
    let freq = k.dim_or("index_topk_freq", 1)?;
    if freq == 0 {
        return Err(f.invalid("index_topk_freq", "is 0, but must be at least 1"));
    }
    let offset = k.dim("index_skip_topk_offset", MAX_DIM)?.unwrap_or(2);
    let pattern = f.opt_str("index_topk_pattern")?.map(str::as_bytes);
    Ok(layers
        .iter()
        .enumerate()
        .map(|(i, &kind)| {
            // `skip_topk`: a pattern's "S", else `max(i - offset + 1, 0) % freq != 0`; a
            // layer past the pattern's end keeps its indexer.
            let builds = match pattern {
                Some(p) => p.get(i) != Some(&b'S'),
                None => (i + 1).saturating_sub(offset).is_multiple_of(freq),
            };
            kind == LayerKind::Attention && builds
        })
        .collect())
}
