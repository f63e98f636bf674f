//! Constants the arena is sized with, shared with the kernels and schedulers that rely on them.

/// The widest `M` the fused dense-FFN gate+up decode GEMM serves, and so the row extent of
/// `ffn_gate_up_fused`. Declared here because the arena is sized in this crate; the
/// dispatch reads it for its `5..=GATEUP_FUSED_MAX_M` band, so the band and the buffer
/// cannot disagree. The seeds name the constant, not its value: 16 is chosen here, one
/// GEMM tile of rows.
pub const GATEUP_FUSED_MAX_M: usize = 16;

/// Streams `scratch` is provisioned for in the kernel-batched prefill staging. A batch whose
/// footprint does not fit is refused by the eligibility check and runs per stream, so this
/// sets how often the batched path is available, not safety. The seeds name the constant,
/// not its value: 4 is chosen here.
pub const Q12_SIZING_STREAMS: usize = 4;

/// Most rows (`R = Σ ks`) one batched MTP verify scores: 128 sequences at one draft (the
/// serve's widest batch, `DECODE_META_MAX_ROWS`). It sizes the verify block-table rows of
/// `scratch` and the logits floor; the engine's verify cap and the scheduler's verify
/// budget are this value. Was 160 (32 sequences at up to five rows).
pub const VERIFY_ROW_CAP: usize = 128;

/// Token chunk of the GDN FLA chunked prefill: 64, the chunk of the FLA (flash-linear-
/// attention) chunked gated-delta-rule kernels. Chosen here; the seeds do not give it.
pub const FLA_CHUNK: usize = 64;

/// Rows of one QSA prefill-selection slab (the seeds' 2048).
pub const QSA_SLAB_ROWS: usize = 2048;

/// Widest token count of the low-rank hyper-connection decode split layout (the seeds'
/// `T <= 64`).
pub const HC_DECODE_MAX_TOKENS: usize = 64;

/// Tokens per slab of the low-rank hyper-connection prefill GEMM layout (the seeds' 2048).
pub const HC_PREFILL_SLAB_TOKENS: usize = 2048;

/// Split-K GEMMs serve the decode band up to this `M`...
pub const SPLITK_MAX_M: usize = 64;
/// ...with at most this many K slices of FP32 partial sums. Both split-K values are chosen
/// here: the seeds list `splitk_workspace` without its shape.
pub const SPLITK_MAX_SPLITS: usize = 8;

/// Values per `block_q8_1_mmq` (the MMQ activation block) and its bytes: 128 int8 values
/// plus four half2 (scale, sum) pairs, ggml's `block_q8_1_mmq` layout.
pub const Q8_1_MMQ_VALUES: usize = 128;
pub const Q8_1_MMQ_BYTES: usize = 144;

/// Block-table width when `kv_block_size` is 0 (no paged KV cache): the seeds' 256.
pub const DEFAULT_BLOCK_TABLE_WIDTH: usize = 256;

/// Tokens per block of lightning attention's chunked prefill: 256, the `BLOCK` of the
/// vendor's `MiniMaxM1LightningAttention.inference` and of vLLM's `lightning_attention`
/// kernels (`vllm/model_executor/layers/lightning_attn.py`), MiniMaxConfig's `block_size`
/// default. Beyond the seeds; sizes `lightning_block_states`.
pub const LIGHTNING_BLOCK: usize = 256;
