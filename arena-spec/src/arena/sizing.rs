//! Sizing functions the arena's formulas call, and that engine code calls too, so both sides
//! agree. Each returns `Result<usize, SizeError>` with every operation checked (`size!`).

use crate::arena::constants::{
    DEFAULT_BLOCK_TABLE_WIDTH, HC_DECODE_MAX_TOKENS, HC_PREFILL_SLAB_TOKENS, Q8_1_MMQ_BYTES,
    Q8_1_MMQ_VALUES, QSA_SLAB_ROWS,
};
use crate::config::ModelConfig;
use arena_runtime::{const_try, size, SizeError};

/// The larger of two sizes, in a `const fn`.
const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

/// Bytes of the keep-packed Q2_0 dequant scratch (the seeds' rule): `hidden_size` times the widest of
/// intermediate, QKVZ, Mamba-2 in_proj, the q projection and 2 · kv_heads · head_dim, in
/// BF16. This covers a weight `[N, K]` with `hidden_size` as one dimension and the other at
/// most that width; the dequant callers debug-assert `N * K * 2` against the allocated
/// size. It does not depend on the batch.
pub const fn q2_dequant_scratch_bytes(config: &ModelConfig) -> Result<usize, SizeError> {
    let gdn = config.ssm_qkvz_size();
    let kv = 2 * config.num_key_value_heads * config.head_dim();
    let widest = max(
        max(
            max(config.intermediate_size, gdn),
            config.mamba_in_proj_width(),
        ),
        max(config.q_proj_width(), kv),
    );
    let hidden = config.hidden_size;
    size!(hidden * widest * 2)
}

/// Scratch bytes of the kernel-batched prefill staging for `n` streams of `chunk_len`
/// tokens each. Both the arena's `scratch` and the batched-prefill eligibility check call it
/// (or the varlen form), so they agree on whether a batch fits. It is
/// [`q12_batched_scratch_bytes_varlen`] with `n · chunk_len` tokens, none longer than
/// `chunk_len`.
pub const fn q12_batched_scratch_bytes(
    config: &ModelConfig,
    n: usize,
    chunk_len: usize,
) -> Result<usize, SizeError> {
    let total = const_try!(size!(n * chunk_len));
    q12_batched_scratch_bytes_varlen(config, n, total, chunk_len)
}

/// [`q12_batched_scratch_bytes`] for a ragged batch: `total_tokens` is the packed total and
/// `max_chunk_len` sizes the per-stream metadata slots, so a varlen batch is not charged the
/// longest stream's length for every stream.
///
/// The terms, each a 256-byte-aligned area, follow the seeds' list:
/// - `batch_kernel.rs`: the MoE top-K area (`i32` id and `f32` weight per token and
///   choice) over the packed tokens, and `n` per-stream metadata blocks of `max_chunk_len`
///   slots (chosen here: one `i32` per slot, the stream's token-to-packed-row index; the
///   seeds name the blocks but not their element);
/// - `stage_batched.rs`: positions (`i32`, three streams under MRoPE) and slots (`i64`)
///   over the packed tokens, the block-table and seq_len pointer arrays (one `u64` per
///   stream each), `cu_seqlens` (`n + 1` `i32`) and `kv_lens` (`n` `i32`);
/// - the `h_state_ptrs` table: one `u64` per stream and GDN layer.
pub const fn q12_batched_scratch_bytes_varlen(
    config: &ModelConfig,
    n: usize,
    total_tokens: usize,
    max_chunk_len: usize,
) -> Result<usize, SizeError> {
    let top_k = router_top_k(config);
    let streams = config.position_streams();
    let ssm_layers = config.num_gdn_layers();
    size!(
        round_up(total_tokens * top_k * 8, 256)
            + n * round_up(max_chunk_len * 4, 256)
            + round_up(total_tokens * 4 * streams, 256)
            + round_up(total_tokens * 8, 256)
            + 2 * round_up(n * 8, 256)
            + round_up((n + 1) * 4, 256)
            + round_up(n * 4, 256)
            + round_up(n * ssm_layers * 8, 256)
    )
}

/// Slab bytes: the per-layer pair times the GDN layers (the seeds' `num_ssm_layers`), or 0 unless `METRALE_FP8_ROWWISE=1`
/// (`config.levers.fp8_rowwise`). The predicate is the loader's: it installs the row-wise
/// weights on the same lever and the GDN arms then need this slab, so the two must agree.
pub const fn ssm_rowwise_w_bf16_bytes(config: &ModelConfig) -> Result<usize, SizeError> {
    ssm_rowwise_w_bf16_bytes_for(config, config.levers.fp8_rowwise)
}

/// [`ssm_rowwise_w_bf16_bytes`] with the lever passed in, for tests that must not set the
/// process environment (and callers that decide the lever themselves).
pub const fn ssm_rowwise_w_bf16_bytes_for(
    config: &ModelConfig,
    enabled: bool,
) -> Result<usize, SizeError> {
    if !enabled || !config.has_gdn() {
        return Ok(0);
    }
    let layer = const_try!(ssm_rowwise_w_bf16_layer_bytes(config));
    let layers = config.num_gdn_layers();
    size!(layer * layers)
}

/// BF16 bytes of one GDN layer's row-wise copies: `in_proj_qkvz [ssm_qkvz_size, hidden]` and
/// `out_proj [hidden, value_dim]`, the two weights the row-wise FP8 prefill installs, with
/// `value_dim = linear_num_value_heads * linear_value_head_dim`. At hidden 5120, 16×128 key
/// heads and 48×128 value heads that is `167772160 + 62914560` B.
pub const fn ssm_rowwise_w_bf16_layer_bytes(config: &ModelConfig) -> Result<usize, SizeError> {
    let (qkvz, hidden, value_dim) = (
        config.ssm_qkvz_size(),
        config.hidden_size,
        config.gdn_value_dim(),
    );
    size!(qkvz * hidden * 2 + hidden * value_dim * 2)
}

/// Block-table width per sequence: `max_seq_len / kv_block_size + 1` blocks, 256 when
/// `kv_block_size` is 0.
pub const fn block_table_width(
    max_seq_len: usize,
    kv_block_size: usize,
) -> Result<usize, SizeError> {
    if kv_block_size == 0 {
        return Ok(DEFAULT_BLOCK_TABLE_WIDTH);
    }
    size!(max_seq_len / kv_block_size + 1)
}

/// Bytes of `rows × k` activations in the `q8_1_mmq` layout (144 bytes per 128 values).
pub const fn q8_1_mmq_bytes(rows: usize, k: usize) -> Result<usize, SizeError> {
    size!(rows * ceil_div(k, Q8_1_MMQ_VALUES) * Q8_1_MMQ_BYTES)
}

/// Low-rank hyper-connection scratch: the larger of the decode split layout (at most 64
/// tokens, FP32) and the prefill GEMM layout (slabs of at most 2048 tokens, BF16), as the
/// seeds have it. The row width is chosen here (the seeds do not give it):
/// `[hc_mult, hidden + hc_lowrank_rank]` per token, the full stream and its low-rank
/// projection side by side. 0 without a low-rank hyper-connection.
pub const fn hc_lowrank_scratch_bytes(
    config: &ModelConfig,
    max_batch_tokens: usize,
) -> Result<usize, SizeError> {
    if config.hc_mult == 0 || config.hc_lowrank_rank == 0 {
        return Ok(0);
    }
    let (hc, width) = (config.hc_mult, config.hidden_size + config.hc_lowrank_rank);
    let decode = const_try!(size!(
        min(max_batch_tokens, HC_DECODE_MAX_TOKENS) * hc * width * 4
    ));
    let prefill = const_try!(size!(
        min(max_batch_tokens, HC_PREFILL_SLAB_TOKENS) * hc * width * 2
    ));
    Ok(max(decode, prefill))
}

/// Rows of a QSA selection slab: 2048 with an indexer, 0 without one.
pub const fn qsa_slab_rows(config: &ModelConfig) -> usize {
    if config.has_indexer() {
        QSA_SLAB_ROWS
    } else {
        0
    }
}

/// Top-K columns the router writes per token (0 for a dense model).
pub const fn router_top_k(config: &ModelConfig) -> usize {
    if config.is_moe() {
        config.num_experts_per_tok
    } else {
        0
    }
}
