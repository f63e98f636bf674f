use crate::arena::sizing::qsa_slab_rows;
use crate::config::ModelConfig;
use arena_runtime::dtype::bf16;
use arena_runtime::{DevicePtr, Regions};

/// QSA prefill-selection scratch for 2048-row slabs, shared by the indexer layers; every
/// region is empty without an indexer.
#[derive(Regions)]
#[regions(
    const,
    layout = QsaSelectLayout,
    inputs(config: &ModelConfig, max_seq_len: usize),
    derived(rows = qsa_slab_rows(config), ratio = config.index_ratio())
)]
pub struct QsaSelectScratch {
    /// `qk [2048, (index_n_heads + 1) · index_head_dim]` BF16: the indexer queries and key.
    #[region(shape = [rows, (config.index_n_heads + 1) * config.index_head_dim])]
    pub qk: DevicePtr<bf16>,
    /// `q_post [2048, index_n_heads, index_head_dim]` FP32.
    #[region(shape = [rows, config.index_n_heads, config.index_head_dim])]
    pub q_post: DevicePtr<f32>,
    /// `scores [2048, ceil(max_seq_len / index_compress_ratio)]` FP32.
    #[region(shape = [rows, ceil_div(max_seq_len, ratio)])]
    pub scores: DevicePtr<f32>,
    /// `lists [2048, index_topk / index_compress_ratio]` i32: the selected positions.
    #[region(shape = [rows, config.index_topk / ratio])]
    pub lists: DevicePtr<i32>,
}
