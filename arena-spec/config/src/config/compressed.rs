//! A family's compressed attention ([`CompressedAttention`], DeepSeek-V4): each layer's kind
//! as `DeepseekV4Config.__post_init__` resolves it (configuration_deepseek_v4.py: 250–282), and
//! the figures the arena sizes from the kinds.
//!
//! What each kind builds per token of the attention input (`modeling_deepseek_v4.py`):
//!
//! | kind | compressor (`kv_proj`, `gate_proj`) | indexer (`kv_proj`, `gate_proj`, `weights_proj`) |
//! |---|---|---|
//! | sliding (ratio 0) | none | none |
//! | CSA | `2 · head_dim` each (`DeepseekV4CSACompressor`: overlapping windows) | `2 · index_head_dim` each, `index_n_heads` (`DeepseekV4Indexer`, `DeepseekV4IndexerScorer`) |
//! | HCA | `head_dim` each (`DeepseekV4HCACompressor`) | none |
//!
//! The indexer's query (`q_b_proj`, `index_n_heads · index_head_dim`) and its scores and
//! top-k lists are `qsa_select_scratch`'s regions; the projections above have no buffer of
//! their own in the seeds' arena, so this arena holds them in `qkv_output` beside q and kv
//! (chosen here: they read the same normed input in the same phase, so one GEMM can write
//! them all).

use super::error::{ConfigError, MAX_DIM};
use super::family::CompressedAttention;
use super::keys::Keys;
use super::KvLayer;
use serde_json::Value;

/// What a compressed-attention config resolves to.
pub(super) struct Compressed {
    /// The CSA rate where any layer has the indexer, else 0.
    pub(super) index_ratio: usize,
    /// Per token, the widest layer's compressor and indexer projections.
    pub(super) compressor_width: usize,
    /// Layers routed by token-id hash (`mlp_layer_types` `"hash_moe"`, else the first
    /// `num_hash_layers`).
    pub(super) hash_layers: usize,
    /// The HCA rate where any layer is HCA, else 0.
    pub(super) hca_ratio: usize,
    /// Each layer's cache kind: every layer keeps a sliding window of its one K=V vector;
    /// CSA and HCA layers keep their compressed entries too.
    pub(super) kv_kinds: Vec<KvLayer>,
}

/// A layer's attention kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sliding,
    Csa,
    Hca,
}

const NAMES: [(&str, Kind); 3] = [
    ("sliding_attention", Kind::Sliding),
    ("compressed_sparse_attention", Kind::Csa),
    ("heavily_compressed_attention", Kind::Hca),
];

/// The `n` layers' kinds: `layer_types`, else `compress_ratios` (0, 4, 128: the literal
/// values the reference maps), else the reference's default (two HCA layers, then HCA and
/// CSA alternating), cut to `n` as the reference cuts it; a list shorter than `n` is refused
/// as the reference's `validate_layer_type` refuses it.
fn kinds(k: &Keys, n: usize) -> Result<Vec<Kind>, ConfigError> {
    let f = &k.f;
    let listed: Option<(&str, Vec<Kind>)> = if let Some(types) = k.strings("layer_types")? {
        let kinds = types
            .iter()
            .map(|t| {
                NAMES
                    .iter()
                    .find(|(name, _)| name == t)
                    .map(|&(_, kind)| kind)
                    .ok_or_else(|| {
                        f.invalid(
                            "layer_types",
                            format!(
                                "has `{t}`: DeepSeek-V4's layers are sliding_attention, \
                             compressed_sparse_attention or heavily_compressed_attention"
                            ),
                        )
                    })
            })
            .collect::<Result<_, _>>()?;
        Some(("layer_types", kinds))
    } else if let Some(ratios) = k.indices("compress_ratios")? {
        let kinds = ratios
            .iter()
            .map(|&r| match r {
                0 => Ok(Kind::Sliding),
                4 => Ok(Kind::Csa),
                128 => Ok(Kind::Hca),
                other => Err(f.invalid(
                    "compress_ratios",
                    format!("has {other}: DeepSeek-V4 maps only 0, 4 and 128 to a layer kind"),
                )),
            })
            .collect::<Result<_, _>>()?;
        Some(("compress_ratios", kinds))
    } else {
        None
    };
    match listed {
        Some((key, kinds)) if kinds.len() < n => Err(f.invalid(
            key,
            format!(
                "lists {} layers, fewer than num_hidden_layers {n}",
                kinds.len()
            ),
        )),
        Some((_, mut kinds)) => {
            kinds.truncate(n);
            Ok(kinds)
        }
        None => Ok((0..n)
            .map(|i| match i {
                0 | 1 => Kind::Hca,
                i if (i - 2) % 2 == 1 => Kind::Csa,
                _ => Kind::Hca,
            })
            .collect()),
    }
}

/// A rate of `compress_rates` (or its legacy scalar key), else the row's default.
fn rate(k: &Keys, name: &str, legacy: &'static str, default: usize) -> Result<usize, ConfigError> {
    if let Some(v) = k.f.opt_dim(legacy, MAX_DIM)? {
        return Ok(v);
    }
    match k.f.obj.get("compress_rates") {
        Some(Value::Object(rates)) => match rates.get(name) {
            Some(Value::Number(n)) => n
                .as_u64()
                .filter(|&v| v > 0)
                .map(|v| v as usize)
                .ok_or_else(|| {
                    k.f.invalid(
                        "compress_rates",
                        format!("`{name}` must be a whole number above 0"),
                    )
                }),
            Some(_) => Err(k
                .f
                .invalid("compress_rates", format!("`{name}` must be a number"))),
            None => Ok(default),
        },
        None | Some(Value::Null) => Ok(default),
        Some(_) => Err(k
            .f
            .invalid("compress_rates", "must be an object of rates by layer kind")),
    }
}

/// The compressed attention of a config with `n` layers and attention heads of `head_dim`.
pub(super) fn compressed_attention(
    k: &Keys,
    rules: CompressedAttention,
    n: usize,
    head_dim: usize,
) -> Result<Compressed, ConfigError> {
    let kinds = kinds(k, n)?;
    let csa = kinds.contains(&Kind::Csa);
    let (index_heads, index_dim) = (
        k.dim_or("index_n_heads", 0)?,
        k.dim_or("index_head_dim", 0)?,
    );
    let width = |kind: Kind| match kind {
        Kind::Sliding => 0,
        Kind::Csa => 4 * head_dim + 4 * index_dim + index_heads,
        Kind::Hca => 2 * head_dim,
    };
    let csa_rate = rate(
        k,
        "compressed_sparse_attention",
        "compress_rate_csa",
        rules.csa_rate,
    )?;
    // The HCA rate sizes no activation buffer: the KV pool's compressed entries.
    let hca_rate = rate(
        k,
        "heavily_compressed_attention",
        "compress_rate_hca",
        rules.hca_rate,
    )?;
    let hash_layers = match k.strings("mlp_layer_types")? {
        Some(types) => {
            if let Some(bad) = types.iter().find(|t| !matches!(**t, "hash_moe" | "moe")) {
                return Err(k.f.invalid(
                    "mlp_layer_types",
                    format!("has `{bad}`: DeepSeek-V4's MLP layers are hash_moe or moe"),
                ));
            }
            types.iter().take(n).filter(|t| **t == "hash_moe").count()
        }
        None => k.dim_or("num_hash_layers", 0)?.min(n),
    };
    let hca = kinds.contains(&Kind::Hca);
    Ok(Compressed {
        kv_kinds: kinds
            .iter()
            .map(|kind| match kind {
                Kind::Sliding => KvLayer::Sliding,
                Kind::Csa => KvLayer::Csa,
                Kind::Hca => KvLayer::Hca,
            })
            .collect(),
        hca_ratio: if hca { hca_rate } else { 0 },
        index_ratio: if csa { csa_rate } else { 0 },
        compressor_width: kinds.iter().map(|&kind| width(kind)).max().unwrap_or(0),
        hash_layers,
    })
}
