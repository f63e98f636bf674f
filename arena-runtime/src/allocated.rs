//! `Allocated<A, D>`: the owning handle of an allocated arena.
//!
//! Construction is the only place that allocates; `release` (or drop) frees each device
//! allocation exactly once. A failed construction frees what it had allocated before
//! returning the error.

use crate::arena::{Arena, BufferDecl};
use crate::device::Device;
use crate::error::{ArenaError, DeviceError, GuardError};
use crate::slab::SlabPlan;
use core::ops::Deref;

mod phase_check;
mod placement_check;

/// The byte every guard band is filled with.
pub const GUARD_PATTERN: u8 = 0xA5;

/// The byte [`Allocated::poison_phase`] fills a phase's buffers with: `0xFFFF…` is a NaN in
/// every floating-point dtype the arena holds, so a stale read shows.
pub const POISON_PATTERN: u8 = 0xFF;

/// How the buffers are backed by device allocations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AllocMode {
    /// One allocation for the whole arena, buffers at aligned offsets (the default).
    #[default]
    Slab,
    /// One allocation per non-empty buffer: slower, but tools such as compute-sanitizer
    /// then see each buffer's bounds. Cannot reuse bytes between phases.
    PerBuffer,
    /// One slab in which buffers whose phases never overlap reuse bytes
    /// ([`crate::ReusePlan`]): the caller promises its step honours the phases it declared.
    Reuse,
}

/// Options of [`Allocated::allocate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocOptions {
    pub mode: AllocMode,
    /// Alignment of each buffer inside a slab (a power of two, at least 256 is enforced).
    pub align: usize,
    /// Bytes of guard band after each buffer (0: none, the default).
    pub guard_bytes: usize,
}

impl Default for AllocOptions {
    fn default() -> Self {
        Self {
            mode: AllocMode::Slab,
            align: 256,
            guard_bytes: 0,
        }
    }
}

impl AllocOptions {
    /// One slab in which buffers of disjoint phases reuse bytes ([`AllocMode::Reuse`]).
    /// A mode of its own, so it cannot be combined with [`Self::per_buffer`]: separate
    /// allocations reuse nothing. Guard bands are refused with it (`ReuseGuards`): a buffer
    /// of another phase may lie over a guard band.
    pub fn reuse() -> Self {
        Self {
            mode: AllocMode::Reuse,
            ..Self::default()
        }
    }

    /// One allocation per non-empty buffer ([`AllocMode::PerBuffer`]), for tools that check
    /// each allocation's bounds.
    pub fn per_buffer() -> Self {
        Self {
            mode: AllocMode::PerBuffer,
            ..Self::default()
        }
    }

    /// The same options with `guard_bytes` of guard band after each buffer, which
    /// [`Allocated::check_guards`] reads back.
    pub fn with_guard_bytes(self, guard_bytes: usize) -> Self {
        Self {
            guard_bytes,
            ..self
        }
    }
}

/// One device allocation the arena owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    pub addr: u64,
    pub bytes: usize,
}

/// Where one buffer landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub decl: &'static BufferDecl,
    /// Device address, 0 for an empty buffer.
    pub addr: u64,
    pub bytes: usize,
}

/// An allocated arena: derefs to the arena struct of pointers, owns the memory.
///
/// Keep the handle for as long as kernels use the arena: dropping it releases the memory, so
/// a handle left unbound (`Step::allocate(device, &sizes)?;`) allocates and frees on one line
/// (a `must_use` warning). A `DevicePtr` copied out of it is a plain address that stays
/// valid only until then.
#[must_use = "dropping the handle releases the arena at once: bind it for as long as kernels use the arena"]
pub struct Allocated<A: Arena, D: Device> {
    buffers: A,
    sizes: A::Sizes,
    placements: Vec<Placement>,
    /// Each buffer's shape with its last dimension in bytes (empty where it has none): the
    /// byte views' dimensions.
    byte_dims: Vec<Vec<usize>>,
    allocations: Vec<Allocation>,
    guard_bytes: usize,
    mode: AllocMode,
    align: usize,
    device: D,
}

impl<A: Arena, D: Device> Allocated<A, D> {
    /// Allocates every non-empty buffer of `sizes` on `device`.
    pub fn allocate(
        device: D,
        sizes: &A::Sizes,
        options: AllocOptions,
    ) -> Result<Self, ArenaError> {
        let bytes = A::byte_sizes(sizes);
        crate::arena::check_byte_sizes::<A>(sizes, &bytes).map_err(|source| ArenaError::Sizes {
            arena: A::NAME,
            source,
        })?;
        debug_assert_eq!(bytes.len(), A::BUFFERS.len());
        let align = options
            .align
            .max(device.alignment())
            .max(256)
            .next_power_of_two();
        let guard = options.guard_bytes;
        if guard > 0 && options.mode == AllocMode::Reuse {
            return Err(ArenaError::ReuseGuards { arena: A::NAME });
        }
        let mut allocations = Vec::new();
        let mut addrs = vec![0u64; bytes.len()];

        match options.mode {
            AllocMode::Slab | AllocMode::Reuse => {
                let plan = if options.mode == AllocMode::Reuse {
                    let reuse = A::reuse_plan_with(sizes, align, guard)?;
                    SlabPlan {
                        offsets: reuse.offsets,
                        total: reuse.footprint,
                    }
                } else {
                    let names: Vec<&'static str> = A::BUFFERS.iter().map(|d| d.name).collect();
                    SlabPlan::new(&names, &bytes, align, guard)?
                };
                if plan.total > 0 {
                    let base = device
                        .alloc(plan.total)
                        .map_err(|source| ArenaError::Alloc {
                            what: format!("the {}-buffer slab of {}", bytes.len(), A::NAME),
                            bytes: plan.total,
                            device: device.name(),
                            source,
                        })?;
                    allocations.push(Allocation {
                        addr: base,
                        bytes: plan.total,
                    });
                    for (addr, offset) in addrs.iter_mut().zip(&plan.offsets) {
                        if let Some(offset) = offset {
                            *addr = base + *offset as u64;
                        }
                    }
                }
            }
            AllocMode::PerBuffer => {
                for (i, &b) in bytes.iter().enumerate() {
                    if b == 0 {
                        continue;
                    }
                    let total = b.checked_add(guard).ok_or(crate::SizeError::TotalOverflow {
                        buffer: A::BUFFERS[i].name,
                    });
                    let result = total.map_err(ArenaError::from).and_then(|total| {
                        let addr = device.alloc(total).map_err(|source| ArenaError::Alloc {
                            what: format!("buffer `{}`", A::BUFFERS[i].name),
                            bytes: total,
                            device: device.name(),
                            source,
                        })?;
                        Ok(Allocation { addr, bytes: total })
                    });
                    match result {
                        Ok(a) => {
                            allocations.push(a);
                            addrs[i] = a.addr;
                        }
                        Err(e) => {
                            free_all(&device, &mut allocations);
                            return Err(e);
                        }
                    }
                }
            }
        }

        let placements: Vec<Placement> = A::BUFFERS
            .iter()
            .zip(&addrs)
            .zip(&bytes)
            .map(|((decl, &addr), &bytes)| Placement { decl, addr, bytes })
            .collect();
        let byte_dims = (0..A::BUFFERS.len())
            .map(|i| {
                let (raw, shape) = (A::raw_bytes(sizes, i), A::shape(sizes, i));
                let elements: usize = shape.iter().product();
                let mut dims = shape.to_vec();
                match dims.last_mut() {
                    Some(last) if elements > 0 && raw % elements == 0 => {
                        *last *= raw / elements;
                        dims
                    }
                    _ => Vec::new(),
                }
            })
            .collect();
        let arena = Self {
            buffers: A::from_addresses(&addrs, &bytes),
            sizes: *sizes,
            placements,
            byte_dims,
            allocations,
            guard_bytes: guard,
            mode: options.mode,
            align,
            device,
        };
        if guard > 0 {
            // On failure `arena` drops here, which frees every allocation.
            arena.write_guards()?;
        }
        Ok(arena)
    }

    fn write_guards(&self) -> Result<(), ArenaError> {
        let pattern = vec![GUARD_PATTERN; self.guard_bytes];
        for p in self.placements.iter().filter(|p| p.bytes > 0) {
            // SAFETY: the guard band lies inside this arena's allocation (planned above).
            unsafe { self.device.write(p.addr + p.bytes as u64, &pattern) }.map_err(|source| {
                ArenaError::Guard {
                    buffer: p.decl.name,
                    device: self.device.name(),
                    source,
                }
            })?;
        }
        Ok(())
    }

    /// Poison mode, for an engine checking its phase contract: fills the bytes of every
    /// buffer whose live range begins at `phase` with [`POISON_PATTERN`] (`0xFF`: NaN in
    /// `f32`, `bf16` and `f16`), one device fill per buffer. Call it as each phase begins; a
    /// kernel that still reads a buffer whose phase has ended then reads NaNs where that
    /// buffer's bytes were reused. Only a reuse arena reuses bytes; on the others this fills
    /// nothing reuse but is still allowed. A whole-step buffer (no `phase`: live through every
    /// phase, as the step's inputs and the residual stream are) is never filled, not even as
    /// the first phase begins: it holds what the engine placed before the step.
    ///
    /// The fills are ordered as the device orders its work: on the host at once; on a GPU,
    /// asynchronous memsets on the `CudaDevice`'s stream (the engine's stream when it was made
    /// with `CudaDevice::from_stream`), so they land between that stream's kernels and may be
    /// recorded in a stream capture. `poison_phase_on` takes another stream.
    pub fn poison_phase(&self, phase: A::Phase) -> Result<(), ArenaError> {
        self.poison_with(&self.device, phase)
    }

    /// [`Self::poison_phase`] through `device`: the arena's own, or the same memory on
    /// another stream.
    pub(crate) fn poison_with(
        &self,
        device: &impl Device,
        phase: A::Phase,
    ) -> Result<(), ArenaError> {
        use crate::Phase as _;
        let phase = phase.index();
        for p in self.placements.iter().filter(|p| p.bytes > 0) {
            if matches!(p.decl.live, crate::Live::Phases { first, .. } if first == phase) {
                // SAFETY: `p` is a live buffer of this arena, `p.bytes` long, and `device`
                // addresses this arena's memory.
                unsafe { device.fill(p.addr, p.bytes, POISON_PATTERN) }.map_err(|source| {
                    ArenaError::Poison {
                        buffer: p.decl.name,
                        device: device.name(),
                        source,
                    }
                })?;
            }
        }
        Ok(())
    }

    /// Reads every guard band back and names each buffer whose end was overrun.
    pub fn check_guards(&self) -> Result<(), GuardError> {
        if self.guard_bytes == 0 {
            return Err(GuardError::Disabled);
        }
        let mut band = vec![0u8; self.guard_bytes];
        let mut overrun = Vec::new();
        for p in self.placements.iter().filter(|p| p.bytes > 0) {
            // SAFETY: as in `write_guards`; the arena is not released while `self` lives.
            unsafe { self.device.read(p.addr + p.bytes as u64, &mut band) }.map_err(|source| {
                GuardError::Read {
                    buffer: p.decl.name,
                    source,
                }
            })?;
            if band.iter().any(|&b| b != GUARD_PATTERN) {
                overrun.push(p.decl.name);
            }
        }
        if overrun.is_empty() {
            Ok(())
        } else {
            Err(GuardError::Overrun { buffers: overrun })
        }
    }

    /// The sizes this arena was allocated at.
    pub fn sizes(&self) -> &A::Sizes {
        &self.sizes
    }

    /// Where each buffer landed, in field order.
    pub fn placements(&self) -> &[Placement] {
        &self.placements
    }

    /// The device allocations this arena owns.
    pub fn allocations(&self) -> &[Allocation] {
        &self.allocations
    }

    /// The alignment every non-empty buffer's address has (at least 256 bytes).
    pub fn alignment(&self) -> usize {
        self.align
    }

    /// A read-only byte view of every buffer, in field order (empty for a buffer of 0
    /// bytes), borrowing the arena: for code that treats every buffer alike (dumps, checks,
    /// copies of any dtype, every state of a cache), each named as its field
    /// ([`crate::View::name`]). A buffer with a shape keeps it, its last dimension in bytes,
    /// so the narrowings of a typed view work on any buffer: `layer(l)?.row_range(s..s + 1)`
    /// is one sequence's slot of a per-layer state, `row_range(b..b + 1)` one KV block of a
    /// layer's place. One without a shape is its bytes in one dimension. Typed views of each
    /// field are the derive's `<Arena>Views`.
    pub fn byte_views(&self) -> Vec<crate::View<'_, u8, D>> {
        self.placements
            .iter()
            .zip(&self.byte_dims)
            .map(|(p, dims)| {
                let ptr = crate::DevicePtr::<u8>::from_raw_parts(p.addr, p.bytes);
                match dims.is_empty() {
                    true => crate::View::from_parts(p.decl.name, ptr, &[], &self.device).bytes(),
                    false => crate::View::from_parts(p.decl.name, ptr, dims, &self.device),
                }
            })
            .collect()
    }

    /// A writable byte view of every buffer, in field order, borrowing the arena mutably,
    /// shaped as [`Self::byte_views`]'s. Refused on a reuse slab (`ViewError::Reused`), where
    /// buffers of disjoint phases reuse bytes and the views would alias.
    pub fn byte_views_mut(&mut self) -> Result<Vec<crate::ViewMut<'_, u8, D>>, crate::ViewError> {
        if self.mode == AllocMode::Reuse {
            return Err(crate::ViewError::Reused { arena: A::NAME });
        }
        let device = &self.device;
        Ok(self
            .placements
            .iter()
            .zip(&self.byte_dims)
            .map(|(p, dims)| {
                let ptr = crate::DevicePtr::<u8>::from_raw_parts(p.addr, p.bytes);
                match dims.is_empty() {
                    true => crate::ViewMut::from_parts(p.decl.name, ptr, &[], device).into_bytes(),
                    false => crate::ViewMut::from_parts(p.decl.name, ptr, dims, device),
                }
            })
            .collect())
    }

    /// Bytes actually allocated on the device (slab padding and guard bands included).
    pub fn allocated_bytes(&self) -> usize {
        self.allocations.iter().map(|a| a.bytes).sum()
    }

    /// How the buffers were placed: one slab, one allocation each, or a reuse slab.
    pub fn mode(&self) -> AllocMode {
        self.mode
    }

    /// The device the arena's memory lives on.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// Frees every allocation exactly once. Every allocation is attempted even if one fails;
    /// the first failure is returned.
    pub fn release(mut self) -> Result<(), ArenaError> {
        match free_all(&self.device, &mut self.allocations) {
            None => Ok(()),
            Some((a, source)) => Err(ArenaError::Free {
                what: format!("an allocation of {}", A::NAME),
                bytes: a.bytes,
                device: self.device.name(),
                source,
            }),
        }
    }
}

/// Frees every allocation, draining the list so none can be freed twice. Every one is
/// attempted even if one fails; the first failure is returned with its allocation.
fn free_all<D: Device>(
    device: &D,
    allocations: &mut Vec<Allocation>,
) -> Option<(Allocation, DeviceError)> {
    let mut first = None;
    for a in allocations.drain(..) {
        // SAFETY: each allocation came from `device.alloc` and is drained, so freed once.
        if let Err(e) = unsafe { device.free(a.addr, a.bytes) } {
            first.get_or_insert((a, e));
        }
    }
    first
}

impl<A: Arena, D: Device> Deref for Allocated<A, D> {
    type Target = A;
    fn deref(&self) -> &A {
        &self.buffers
    }
}

#[cfg(test)]
impl<A: Arena, D: Device> Allocated<A, D> {
    /// Lets the placement check's tests break the contract on purpose.
    pub(crate) fn corrupt(&mut self, f: impl FnOnce(&mut Vec<Placement>, &mut Vec<Allocation>)) {
        f(&mut self.placements, &mut self.allocations)
    }
}

impl<A: Arena, D: Device> Drop for Allocated<A, D> {
    fn drop(&mut self) {
        // After `release` the list is empty and this frees nothing.
        let _ = free_all(&self.device, &mut self.allocations);
    }
}

impl<A: Arena, D: Device> core::fmt::Debug for Allocated<A, D> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Allocated")
            .field("arena", &A::NAME)
            .field("mode", &self.mode)
            .field("allocated_bytes", &self.allocated_bytes())
            .field("sizes", &self.sizes)
            .finish()
    }
}
