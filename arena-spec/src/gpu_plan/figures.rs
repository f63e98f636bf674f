//! The figures that decide a rank's plan, exact and before any page rounding: each kind of
//! KV layer's bytes a token and a block, its window, its blocks a sequence; each sequence
//! state's bytes a slot with its dtype and where that dtype was read. What an operator (or an
//! orchestrator that needs the block count before the engine starts) checks the plan by.

use super::PoolBlocks;
use crate::config::{ModelConfig, StateDtype, StateDtypeSource};
use crate::kv::{KvDtype, KvPoolSizes};
use crate::state::StateCacheSizes;
use arena_runtime::SizeError;

/// One kind of KV layer on a rank: one buffer of the [`crate::KvPool`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KvLayerFigures {
    /// The pool's buffer (`full`, `mla_latent`, `indexer_keys`, `sliding`, `csa_entries`,
    /// `csa_indexer_keys`, `hca_entries`).
    pub buffer: &'static str,
    /// The block count it draws on ([`PoolBlocks`]' field: `full`, `sliding`, `csa`, `hca`).
    pub blocks: &'static str,
    /// The rank's layers of this kind.
    pub layers: usize,
    /// The tokens a sliding layer keeps (`sliding_window`); `None` for other kinds.
    pub window: Option<usize>,
    /// The chunk a chunked layer keeps (`attention_chunk_size`); `None` for other kinds. The
    /// pool's `sliding` buffer holds both kinds: a model with both (none shipped has) has
    /// one row with both set, its layers together, its blocks the larger share.
    pub chunk: Option<usize>,
    /// Tokens an entry stands for: the compression ratio of DeepSeek-V4's CSA and HCA entries,
    /// 1 for every other kind.
    pub tokens_per_entry: usize,
    /// Bytes one entry (one token, for every kind but the compressed ones) takes in all the
    /// rank's layers of this kind together.
    pub bytes_per_token: u64,
    /// Bytes one block of `kv_block_size` entries takes in all those layers.
    pub bytes_per_block: u64,
    /// Blocks a sequence at the context needs in each such layer.
    pub blocks_per_sequence: usize,
}

/// One sequence state on a rank: one buffer of the [`crate::StateCache`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StateFigures {
    /// The cache's buffer (`gdn_conv`, `gdn_recurrent_f32`, `mamba_ssm_bf16`, …).
    pub buffer: &'static str,
    /// The rank's layers that keep it.
    pub layers: usize,
    /// Its element type (`bf16`, `f32`).
    pub dtype: &'static str,
    /// Where the dtype of a GDN or Mamba-2 recurrent state came from (the file's key, the
    /// family's default, the model's dtype, an override); `None` for a state whose dtype is
    /// the engine's fixed rule (conv states in the model's dtype, KDA's and the compressors'
    /// in FP32).
    pub dtype_source: Option<StateDtypeSource>,
    /// Bytes one sequence slot takes in all those layers.
    pub bytes_per_slot: u64,
}

/// The rank's layers of the kind a pool buffer holds.
fn layers_of(config: &ModelConfig, buffer: &str) -> usize {
    match buffer {
        "full" | "mla_latent" => config.num_full_kv_layers(),
        "indexer_keys" => config.num_indexer_layers(),
        "sliding" => config.num_sliding_kv_layers(),
        "csa_entries" | "csa_indexer_keys" => config.num_csa_kv_layers(),
        "hca_entries" => config.num_hca_kv_layers(),
        _ => 0,
    }
}

/// Each kind of KV layer of the rank of `config`, for blocks of `block_tokens` at `kv_dtype`,
/// a sequence needing `per_sequence` blocks.
pub fn kv_layer_figures(
    config: &ModelConfig,
    block_tokens: usize,
    kv_dtype: KvDtype,
    per_sequence: PoolBlocks,
) -> Result<Vec<KvLayerFigures>, SizeError> {
    let one = PoolBlocks::default();
    let kinds = [
        ("full", PoolBlocks { full: 1, ..one }, per_sequence.full, 1),
        (
            "sliding",
            PoolBlocks { sliding: 1, ..one },
            per_sequence.sliding,
            1,
        ),
        (
            "csa",
            PoolBlocks { csa: 1, ..one },
            per_sequence.csa,
            config.index_ratio(),
        ),
        (
            "hca",
            PoolBlocks { hca: 1, ..one },
            per_sequence.hca,
            config.hca_compress_ratio,
        ),
    ];
    let mut out = Vec::new();
    for (blocks, one_block, per_seq, ratio) in kinds {
        let sizes =
            KvPoolSizes::try_from_inputs(config, &one_block.inputs(block_tokens, kv_dtype))?;
        for b in sizes.buffers().into_iter().filter(|b| b.bytes > 0) {
            let sliding = blocks == "sliding";
            let chunked = sliding && config.num_chunked_kv_layers() > 0;
            let windowed =
                sliding && config.num_chunked_kv_layers() < config.num_sliding_kv_layers();
            out.push(KvLayerFigures {
                buffer: b.decl.name,
                blocks,
                layers: layers_of(config, b.decl.name),
                window: windowed.then_some(config.sliding_window),
                chunk: chunked.then_some(config.attention_chunk_size),
                tokens_per_entry: ratio.max(1),
                bytes_per_token: (b.bytes / block_tokens.max(1)) as u64,
                bytes_per_block: b.bytes as u64,
                blocks_per_sequence: per_seq,
            });
        }
    }
    Ok(out)
}

/// The rank's layers that keep a state buffer.
fn state_layers(config: &ModelConfig, buffer: &str) -> usize {
    match buffer {
        b if b.starts_with("gdn_") => config.num_gdn_layers(),
        b if b.starts_with("mamba_") => config.num_mamba_layers(),
        "short_conv" => config.num_short_conv_layers(),
        "lightning" => config.num_lightning_layers(),
        b if b.starts_with("kda_") => config.num_kda_layers(),
        b if b.starts_with("csa_") => config.num_csa_kv_layers(),
        "hca_compressor" => config.num_hca_kv_layers(),
        _ => 0,
    }
}

/// Each sequence state of the rank of `config`, its GDN / Mamba-2 recurrent state at
/// `recurrent` (read from `source`).
pub fn state_figures(
    config: &ModelConfig,
    recurrent: StateDtype,
    source: StateDtypeSource,
) -> Result<Vec<StateFigures>, SizeError> {
    let sizes = StateCacheSizes::try_from_config(config, 1, recurrent)?;
    Ok(sizes
        .buffers()
        .into_iter()
        .filter(|b| b.bytes > 0)
        .map(|b| {
            let name = b.decl.name;
            let chosen = name.starts_with("gdn_recurrent") || name.starts_with("mamba_ssm");
            StateFigures {
                buffer: name,
                layers: state_layers(config, name),
                dtype: b.decl.dtype,
                dtype_source: chosen.then_some(source),
                bytes_per_slot: b.bytes as u64,
            }
        })
        .collect())
}
