//! The runtime half of the declarative buffer arena.
//!
//! A model author declares each buffer once with `#[derive(Arena)]`; the generated code
//! calls what this crate provides:
//!
//! - [`DevicePtr<T>`] and the element types of [`dtype`], so a buffer's dtype is its type;
//! - [`CheckedArith`], the checked arithmetic every size formula is rewritten into;
//! - the [`Arena`](trait@Arena) trait the derive of the same name implements, and
//!   [`Allocated`], the handle of an allocated arena (placement and release);
//! - the [`Device`] trait with [`HostDevice`] (real host memory, the default without a GPU),
//!   [`AddressDevice`] (addresses without memory: a placement checked without the bytes it
//!   plans), [`CountingDevice`] (leak tests and fault injection) and, with the `cuda` feature,
//!   `CudaDevice` on cudarc.
//!
//! A buffer's life: its field declaration (the derive) → its size (`Sizes::try_from_config`,
//! through [`CheckedArith`]) → its offset ([`SlabPlan`]) → its pointer
//! ([`Arena::from_addresses`](trait@Arena), in [`Allocated::allocate`]) → its release
//! ([`Allocated::release`] or drop).
//!
//! What only generated code calls lives in a hidden `__private` module: it is not API.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

// Every module is private behind the one re-export list below (as cudarc's `driver::safe`
// does): each item has one public path, at the root. `dtype` stays a module, its element
// types named as `dtype::bf16`, and `report` (the report type and its text helpers);
// `__private` is what only generated code calls.
mod address;
mod allocated;
mod arena;
mod checked;
mod const_eval;
mod counting;
mod device;
pub mod dtype;
mod error;
mod host;
mod phase;
mod ptr;
mod regions;
mod report;
mod reuse;
mod slab;
mod view;

#[cfg(feature = "cuda")]
mod cuda;
#[cfg(feature = "cuda")]
mod cuda_graph;
#[cfg(feature = "cuda")]
mod cuda_linear;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use address::AddressDevice;
pub use allocated::{
    AllocMode, AllocOptions, Allocated, Allocation, Placement, GUARD_PATTERN, POISON_PATTERN,
};
pub use arena::{Arena, BufferDecl, BufferInfo};
// The derives' reference is here, on their re-exports (rustdoc shows it on `Arena` and
// `Regions` and runs its examples as this crate's doctests), so the examples compile against
// the runtime without a dependency cycle between the two crates.
#[cfg(feature = "derive")]
pub use arena_macros::size;
#[cfg(feature = "derive")]
#[doc(inline)]
#[doc = include_str!("docs/arena.md")]
pub use arena_macros::Arena;
#[cfg(feature = "derive")]
#[doc(inline)]
#[doc = include_str!("docs/regions.md")]
pub use arena_macros::Regions;
pub use checked::{checked_total, saturating_sum, CheckedArith, IntoSize};
pub use counting::CountingDevice;
pub use device::{Device, MemInfo, Upload};
pub use error::{
    ArenaError, CarveError, DeviceError, GuardError, ImpossibleSize, PlacementError, SizeError,
};
pub use host::HostDevice;
pub use phase::{NoPhases, Phase};
pub use ptr::DevicePtr;
pub use regions::Region;
pub use report::{human_bytes, phase_text, shape_text, ArenaReport, BufferRow};
pub use reuse::{Live, ReuseBytes, ReusePlan};
pub use slab::SlabPlan;
pub use view::{Shape, SplitRows, View, ViewError, ViewMut, MAX_RANK};

#[cfg(feature = "cuda")]
#[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
pub use cuda::CudaDevice;
#[cfg(feature = "cuda")]
#[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
pub use cuda_graph::{ArenaGraph, GraphError};
#[cfg(feature = "cuda")]
#[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
pub use cuda_linear::{linear, LinearError};
/// The cudarc this crate's `CudaDevice` is built on, so kernels launch with the same version.
#[cfg(feature = "cuda")]
#[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
pub use cudarc;

// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
