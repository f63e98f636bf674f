//! The runtime half of the declarative buffer arena.
//!
//! A model author declares each buffer once with `#[derive(Arena)]`; the generated code
//! calls what this crate provides:
//!
//! - [`DevicePtr<T>`] and the element types of [`dtype`], so a buffer's dtype is its type;
//! - [`Formula`], the checked arithmetic every size formula is rewritten into;
//! - [`ArenaLayout`] and [`Arena`](struct@Arena), the generic allocation, placement and release;
//! - the [`Device`] trait with [`HostDevice`] (real host memory, the default without a GPU),
//!   [`CountingDevice`] (leak tests and fault injection) and, with the `cuda` feature,
//!   `CudaDevice` on cudarc.
//!
//! A buffer's life: its field declaration (the derive) → its size (`Sizes::try_from_config`,
//! through [`Formula`]) → its offset ([`SlabPlan`]) → its pointer ([`ArenaLayout::from_addresses`],
//! in [`Arena::allocate`]) → its release ([`Arena::release`] or drop).

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod arena;
pub mod checked;
pub mod counting;
pub mod device;
pub mod dtype;
pub mod error;
pub mod host;
pub mod layout;
pub mod ptr;
pub mod regions;
pub mod slab;

#[cfg(feature = "cuda")]
pub mod cuda;

pub use arena::{AllocMode, AllocOptions, Allocation, Arena, Placement, GUARD_PATTERN};
#[cfg(feature = "derive")]
pub use arena_macros::{size, Arena, Regions};
pub use checked::{Formula, IntoSize};
pub use counting::CountingDevice;
pub use device::{Device, MemInfo};
pub use error::{ArenaError, CarveError, DeviceError, GuardError, SizeError};
pub use host::HostDevice;
pub use layout::{ArenaLayout, BufferDecl, BufferInfo, Pointers};
pub use ptr::DevicePtr;
pub use regions::{Region, RegionCursor};
pub use slab::SlabPlan;

#[cfg(feature = "cuda")]
pub use cuda::CudaDevice;
/// The cudarc this crate's `CudaDevice` is built on, so kernels launch with the same version.
#[cfg(feature = "cuda")]
pub use cudarc;
