//! The kv head count and the norms a layer holds where a family's switches decide them
//! ([`LayoutKeys`](super::family::LayoutKeys)): Falcon's.

use super::error::{ConfigError, MAX_DIM};
use super::keys::Keys;

/// Falcon's kv heads (`FalconAttention`, 230–241): `num_kv_heads` (absent: the q heads) under
/// `new_decoder_architecture`, else one where `multi_query` (absent: true), else the q heads.
pub(super) fn falcon_kv_heads(k: &Keys, heads: usize) -> Result<usize, ConfigError> {
    let f = &k.f;
    if f.opt_bool("new_decoder_architecture")?.unwrap_or(false) {
        return match k.dim("num_kv_heads", MAX_DIM)? {
            Some(0) => Err(f.invalid("num_kv_heads", "is 0, but must be at least 1")),
            Some(kv) => Ok(kv),
            None => Ok(heads),
        };
    }
    Ok(if f.opt_bool("multi_query")?.unwrap_or(true) {
        1
    } else {
        heads
    })
}

/// Falcon's LayerNorms a layer (`FalconDecoderLayer`, 552–565): two where `parallel_attn` is
/// false (absent: true) or `num_ln_in_parallel_attn` is 2 (absent: 2 under
/// `new_decoder_architecture`, else 1), else one.
pub(super) fn falcon_layer_norms(k: &Keys) -> Result<usize, ConfigError> {
    let f = &k.f;
    if !f.opt_bool("parallel_attn")?.unwrap_or(true) {
        return Ok(2);
    }
    let new_decoder = f.opt_bool("new_decoder_architecture")?.unwrap_or(false);
    match k.dim("num_ln_in_parallel_attn", MAX_DIM)? {
        Some(n @ (1 | 2)) => Ok(n),
        Some(n) => Err(f.invalid(
            "num_ln_in_parallel_attn",
            format!("is {n}: Falcon's layers hold one LayerNorm or two"),
        )),
        None => Ok(if new_decoder { 2 } else { 1 }),
    }
}
