//! Buffers carved into regions. Each layout is declared once with `#[derive(Regions)]`: the
//! arena sizes the buffer with `Layout::total_bytes` and the kernels carve it with `carve`,
//! so the sizing and the carving cannot disagree.

mod decode_meta;
mod gdn_fla;
mod kda_chunk;
mod moe_fp8;
mod qsa_select;
mod scratch;
mod ssd;

pub use decode_meta::{
    decode_meta_rows, DecodeMeta, DecodeMetaLayout, DECODE_META_MAX_ROWS, DECODE_META_MIN_ROWS,
};
pub use gdn_fla::{GdnFlaLayout, GdnFlaScratch};
pub use kda_chunk::{KdaChunkLayout, KdaChunkScratch};
pub use moe_fp8::{MoeFp8Scratch, MoeFp8ScratchLayout};
pub use qsa_select::{QsaSelectLayout, QsaSelectScratch};
pub use scratch::{Scratch, ScratchLayout};
pub use ssd::{SsdLayout, SsdScratch};
