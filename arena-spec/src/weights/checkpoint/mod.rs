//! Weights in from a checkpoint: the six weight arenas filled from safetensors files, every
//! tensor checked against the place its declaration gives it before any byte is copied.
//!
//! Three steps, each usable alone:
//!
//! 1. [`tensor_table`]: every tensor the arenas hold, from the names the fields declare
//!    (`#[buffer(tensor = "model.layers.{attention_layer}.self_attn.q_proj.weight")]`, the
//!    names of transformers' modules in a `save_pretrained` checkpoint), renamed as the
//!    family's checkpoints name them (`WeightRules::checkpoint_names`), each with its arena,
//!    buffer, layer, expert, byte offset and bytes. `{layer}` is every layer of the config,
//!    `{attention_layer}`, `{dense_layer}` and `{moe_layer}` the layers of that kind, in
//!    order (a buffer's slot `i` is its group's `i`-th layer), `{expert}` each local
//!    expert.
//! 2. [`Checkpoint::open`] maps the files and reads their headers; [`LoadPlan::new`] matches
//!    the stored tensors to the table: a missing tensor, one no place claims (and no rule
//!    skips), a wrong dtype, shape or byte count is a [`Problem`] naming the tensor, its file
//!    and its place. Vision and audio towers, multi-token-prediction layers and RoPE's
//!    stored `inv_freq` are skipped and listed with their reason, never silently.
//! 3. [`load`] copies each placed tensor from the mapped file into its place through the
//!    device's upload ([`Device::upload`]: on CUDA, pinned
//!    host buffers of [`STAGING_BYTES`] in all, no device memory beyond the arenas), and
//!    sets the vocabulary's padding rows to zero.
//!
//! What a place holds: a 16-bit tensor (norms, biases, embeddings, routers) at its shape; a
//! matrix (a `u8` buffer, bytes in its format) its elements, then the scales stored beside
//! it (`matrix.rs`: block FP8, ModelOpt FP8 per tensor or channel, NVFP4, MXFP8), then zeros
//! where the plan bounds its scalar scales; an expert's matrices one after another in expert
//! order within their row. MXFP4 experts, integer groups and FP32 checkpoints are
//! [`Problem::Dtype`]: the plan prices them, this loader does not place or convert them yet.
//!
//! A rank's config (`ModelConfig::shard`) gets the rank's share of each tensor, cut as the
//! field's `split` says and vLLM's parallel layers cut theirs ([`Cut`]): q, gate and up by
//! output rows, o and down by input columns, k and v by kv head (replicated where there are
//! fewer heads than ranks), the embedding and head by the padded vocabulary's rows, an
//! expert's matrices over the expert tensor-parallel group and the experts by expert-parallel
//! rank; norms and routers whole. A cut along the input columns is gathered a row at a time
//! into a host buffer of at most [`CHUNK_BYTES`].
//!
//! A family that stores fused what it declares apart (Phi-3's `qkv_proj`, `gate_up_proj`) has
//! each place take its block's rows of the stored tensor (`TensorSlot::part`); a place that
//! holds several stored tensors back to back (Qwen3.5's `in_proj_qkv` and `in_proj_z`) takes
//! each at its stored length (`TensorSlot::concat`).
//!
//! Not yet: families whose checkpoint names are not declared
//! ([`CheckpointError::NamesNotDeclared`]), 3-D expert stacks, and a tensor-parallel rank's
//! share of the recurrent mixers' weights: a place of several stored tensors (Qwen3.5's
//! `in_proj_qkv` and `in_proj_z`) is refused by name for a rank, and the other fields of
//! `MixerWeights` declare no `split` to cut by.

mod files;
mod matrix;
mod plan;
mod table;

pub use files::{read_index, Checkpoint, StoredTensor, INDEX_FILE, SINGLE_FILE};
pub use plan::{skip_reason, LoadPlan, Part, Placed, Problem, Skipped};
pub use table::{tensor_table, with_stored_names, Cut, Share, TensorSlot, TEXT_PREFIXES};

use super::AllocatedWeights;
use crate::config::Family;
use arena_runtime::{Arena, Device, DeviceError, Placement};
use std::path::PathBuf;

/// The most bytes one copy hands the device's upload: a tensor larger than it (an embedding
/// of 1 GB) goes in pieces. Chosen here.
pub const CHUNK_BYTES: usize = 64 << 20;

/// The staging memory the device's upload may hold ([`Device::upload`]:
/// pinned host buffers on CUDA). Chosen here: 64 MiB in four buffers kept the H200's
/// host-to-device copy fed (`measurements/checkpoint_load.md`).
pub const STAGING_BYTES: usize = 64 << 20;

/// Why a checkpoint could not be matched or loaded.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The family's checkpoint names are not declared (`WeightRules::checkpoint_names`).
    #[error("{model}: the checkpoint tensor names of a {family:?} model are not declared yet")]
    NamesNotDeclared { model: String, family: Family },
    /// A buffer with bytes declares no checkpoint tensor.
    #[error("{model}: {buffer} holds {bytes} bytes but declares no checkpoint tensor (`#[buffer(tensor = ...)]`)")]
    BufferUnnamed {
        model: String,
        buffer: String,
        bytes: usize,
    },
    /// A buffer's declared names do not fit its shape or the config's layers.
    #[error("{model}: the names {buffer} declares do not fit it: {why}")]
    NamesMisfit {
        model: String,
        buffer: String,
        why: String,
    },
    #[error("{}: {source}", file.display())]
    Io {
        file: PathBuf,
        source: std::io::Error,
    },
    /// A header (or index) that does not parse, or a file shorter than its header says.
    #[error("{}: {why}", file.display())]
    Header { file: PathBuf, why: String },
    /// The index and the shards disagree.
    #[error("{}: {why}", file.display())]
    IndexMismatch { file: PathBuf, why: String },
    /// The checkpoint does not match the declarations: every problem, the first shown.
    #[error("the checkpoint does not match the weight declarations ({} problem{}): {}", problems.len(), if problems.len() == 1 { "" } else { "s" }, problems.first().map(ToString::to_string).unwrap_or_default())]
    Mismatch { problems: Vec<Problem> },
    /// A place read back after loading differs from the checkpoint's bytes ([`verify`]).
    #[error("`{tensor}` in {place} differs from the checkpoint at byte {offset} of its place")]
    Differs {
        tensor: String,
        place: String,
        offset: usize,
    },
    /// A copy to the device failed.
    #[error("copying `{tensor}` into {place}: {source}")]
    Device {
        tensor: String,
        place: String,
        source: DeviceError,
    },
}

/// What [`load`] copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loaded {
    /// Stored tensors copied (scales counted apart from their matrices).
    pub tensors: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Padding bytes set to zero.
    pub zeroed: u64,
}

/// Copies every tensor `plan` places from `checkpoint` into `weights` (allocated at the sizes
/// the plan's table was built from). Refused, with nothing copied, where the plan has
/// problems. `progress` is called after each piece with the bytes copied and the total.
///
/// The files are read through their memory maps: a checkpoint rewritten while it loads
/// gives whatever bytes it then holds (never memory outside the maps or the arenas).
pub fn load<D: Device>(
    checkpoint: &Checkpoint,
    plan: &LoadPlan,
    weights: &mut AllocatedWeights<D>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Loaded, CheckpointError> {
    if !plan.problems.is_empty() {
        return Err(CheckpointError::Mismatch {
            problems: plan.problems.clone(),
        });
    }
    let arenas = arenas(weights);
    let total = plan.stored_bytes;
    let mut done = Loaded {
        tensors: 0,
        bytes: 0,
        zeroed: 0,
    };
    // One upload a device: the weight arenas share theirs (`AllocatedWeights::allocate`
    // clones one device into all six), so the model arena's stages every copy.
    let device = arenas[0].2;
    let mut upload = device
        .upload(STAGING_BYTES)
        .map_err(|source| CheckpointError::Device {
            tensor: String::new(),
            place: "the staging buffers".into(),
            source,
        })?;
    let mut gather: Vec<u8> = Vec::new();
    for placed in &plan.placed {
        let slot = &placed.slot;
        let place = slot.place();
        let device_error = |tensor: &str, source| CheckpointError::Device {
            tensor: tensor.to_string(),
            place: place.clone(),
            source,
        };
        let placement = place_of(&arenas, slot)?;
        let base = placement.addr + slot.offset as u64;
        for part in &placed.parts {
            let stored = &checkpoint.tensors()[&part.tensor];
            let bytes = checkpoint.bytes(stored);
            let mut at = base + part.offset as u64;
            let mut send = |piece: &[u8], at: &mut u64| -> Result<(), CheckpointError> {
                // SAFETY: a part's pieces fill `part.offset .. part.offset + part.bytes` of
                // its place (`Part::of`), which lies inside its buffer's live allocation
                // (checked above); `weights` is borrowed until the upload finishes.
                unsafe { upload.copy(*at, piece) }.map_err(|e| device_error(&part.tensor, e))?;
                *at += piece.len() as u64;
                done.bytes += piece.len() as u64;
                progress(done.bytes, total);
                Ok(())
            };
            let mut runs = part.runs(bytes).peekable();
            match runs.next() {
                // One run: the share is contiguous in the file.
                Some(run) if runs.peek().is_none() => {
                    for piece in run.chunks(CHUNK_BYTES) {
                        send(piece, &mut at)?;
                    }
                }
                // A cut along dimension 1: each row's run gathered into a bounded buffer.
                first => {
                    gather.clear();
                    for run in first.into_iter().chain(runs) {
                        if !gather.is_empty() && gather.len() + run.len() > CHUNK_BYTES {
                            send(&gather, &mut at)?;
                            gather.clear();
                        }
                        gather.extend_from_slice(run);
                    }
                    if !gather.is_empty() {
                        send(&gather, &mut at)?;
                    }
                }
            }
            done.tensors += 1;
        }
        if placed.zero_fill > 0 {
            let filled: usize = placed.parts.iter().map(|p| p.bytes).sum();
            // SAFETY: the padding ends where the place ends, inside its buffer.
            unsafe { device.fill(base + filled as u64, placed.zero_fill, 0) }
                .map_err(|e| device_error(&slot.name, e))?;
            done.zeroed += placed.zero_fill as u64;
        }
    }
    upload.finish().map_err(|source| CheckpointError::Device {
        tensor: String::new(),
        place: "the last pieces".into(),
        source,
    })?;
    Ok(done)
}

/// Reads every placed tensor back from `weights` and compares it with the checkpoint's bytes
/// (the rank's share), and the padding rows with zeros: the proof that a load landed where
/// the plan says, through whatever staging the device's upload used. The bytes compared, or
/// the first tensor that differs, at its first differing byte.
pub fn verify<D: Device>(
    checkpoint: &Checkpoint,
    plan: &LoadPlan,
    weights: &AllocatedWeights<D>,
) -> Result<u64, CheckpointError> {
    let arenas = arenas(weights);
    let device = arenas[0].2;
    let mut compared = 0u64;
    for placed in &plan.placed {
        let slot = &placed.slot;
        let base = place_of(&arenas, slot)?.addr + slot.offset as u64;
        let mut got = vec![0u8; slot.bytes];
        // SAFETY: the place lies inside its buffer's live allocation (`place_of`).
        unsafe { device.read(base, &mut got) }.map_err(|source| CheckpointError::Device {
            tensor: slot.name.clone(),
            place: slot.place(),
            source,
        })?;
        let mut expected = Vec::with_capacity(slot.bytes);
        for part in &placed.parts {
            let bytes = checkpoint.bytes(&checkpoint.tensors()[&part.tensor]);
            part.runs(bytes)
                .for_each(|run| expected.extend_from_slice(run));
        }
        expected.resize(slot.bytes, 0);
        if let Some(at) = got.iter().zip(&expected).position(|(a, b)| a != b) {
            return Err(CheckpointError::Differs {
                tensor: slot.name.clone(),
                place: slot.place(),
                offset: at,
            });
        }
        compared += slot.bytes as u64;
    }
    Ok(compared)
}

/// The six arenas' names, placements and device.
fn arenas<D: Device>(w: &AllocatedWeights<D>) -> [(&'static str, &[Placement], &D); 6] {
    fn of<A: Arena, D: Device>(
        a: &arena_runtime::Allocated<A, D>,
    ) -> (&'static str, &[Placement], &D) {
        (A::NAME, a.placements(), a.device())
    }
    [
        of(&w.model),
        of(&w.attention),
        of(&w.latent),
        of(&w.compressed),
        of(&w.mixers),
        of(&w.ffn),
    ]
}

/// A place's buffer, which must hold it: weights allocated at other sizes than the table's
/// are refused here, not written past.
fn place_of<'p, D>(
    arenas: &[(&'static str, &'p [Placement], &D); 6],
    slot: &TensorSlot,
) -> Result<&'p Placement, CheckpointError> {
    arenas
        .iter()
        .find(|(name, _, _)| *name == slot.arena)
        .and_then(|(_, placements, _)| placements.iter().find(|p| p.decl.name == slot.buffer))
        .filter(|p| slot.offset + slot.bytes <= p.bytes && p.addr != 0)
        .ok_or_else(|| CheckpointError::Device {
            tensor: slot.name.clone(),
            place: slot.place(),
            source: DeviceError::Unsupported(
                "a place outside its buffer: the weights were allocated at other sizes than the plan's",
            ),
        })
}
