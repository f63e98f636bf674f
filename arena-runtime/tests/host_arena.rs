//! The unsafe paths of the host backend and slab carving, end to end on real host memory:
//! every byte of every buffer written and read, guard bands, release, failure cleanup.
//! Small sizes, so `cargo +nightly miri test -p arena-runtime` runs it too.

use arena_runtime::dtype::{bf16, F8E4M3};
use arena_runtime::{
    AllocOptions, Allocated, Arena, CountingDevice, DevicePtr, GuardError, HostDevice, Regions,
};

pub struct Dims {
    pub width: usize,
    pub experts: usize,
}

#[derive(Regions)]
#[regions(inputs(rows: usize), align = 64)]
pub struct Split {
    #[region(shape = [rows])]
    pub ids: DevicePtr<i32>,
    #[region(shape = [rows, 3])]
    pub weights: DevicePtr<f32>,
}

#[derive(Arena)]
#[arena(inputs(dims: &Dims, m: usize))]
pub struct Small {
    #[buffer(shape = [m, dims.width])]
    pub hidden: DevicePtr<bf16>,
    #[buffer(shape = [m, dims.experts], min_bytes = 256)]
    pub logits: DevicePtr<f32>,
    #[buffer(shape = [m, dims.experts], gate = dims.experts > 0)]
    pub routed: DevicePtr<F8E4M3>,
    #[buffer(bytes = Split::layout(m))]
    pub split: DevicePtr<u8>,
    #[buffer(shape = [3], untracked)]
    pub unit: DevicePtr<u16>,
}

fn fill_and_verify(arena: &Allocated<Small, CountingDevice<HostDevice>>) {
    let live: Vec<_> = arena
        .placements()
        .iter()
        .filter(|p| p.bytes > 0)
        .copied()
        .collect();
    for (i, p) in live.iter().enumerate() {
        // SAFETY: a live buffer of this arena, used by nothing else during the test.
        unsafe { HostDevice::slice_mut(p.addr, p.bytes) }.fill(i as u8 + 1);
    }
    for (i, p) in live.iter().enumerate() {
        let bytes = unsafe { HostDevice::slice_mut(p.addr, p.bytes) };
        assert!(
            bytes.iter().all(|&b| b == i as u8 + 1),
            "{} overwritten",
            p.decl.name
        );
    }
}

#[test]
fn both_modes_write_every_byte_and_release_everything() {
    let sizes = SmallSizes::from_config(
        &Dims {
            width: 5,
            experts: 3,
        },
        7,
    );
    for options in [
        AllocOptions::default(),
        AllocOptions::per_buffer(),
        AllocOptions::default().with_guard_bytes(32),
    ] {
        let device = CountingDevice::new(HostDevice::new());
        let arena = Small::allocate_with(device.clone(), &sizes, options).unwrap();
        fill_and_verify(&arena);
        if options.guard_bytes > 0 {
            arena.check_guards().unwrap();
        }
        let split = Split::carve(arena.split, &Split::layout(7).unwrap()).unwrap();
        assert_eq!(split.weights.len(), 21);
        arena.release().unwrap();
        assert_eq!(device.live_allocations(), 0);
    }
}

#[test]
fn gated_buffers_are_null_and_overruns_are_named() {
    let sizes = SmallSizes::from_config(
        &Dims {
            width: 5,
            experts: 0,
        },
        7,
    );
    assert_eq!(sizes.routed, 0);
    let device = CountingDevice::new(HostDevice::new());
    let arena = Small::allocate_with(
        device.clone(),
        &sizes,
        AllocOptions::per_buffer().with_guard_bytes(16),
    )
    .unwrap();
    assert!(arena.routed.is_null());
    let end = arena.hidden.as_raw() + arena.hidden.byte_len() as u64;
    unsafe { HostDevice::slice_mut(end, 2) }.fill(0);
    assert_eq!(
        arena.check_guards(),
        Err(GuardError::Overrun {
            buffers: vec!["hidden"]
        })
    );
    drop(arena);
    assert_eq!(device.live_allocations(), 0, "drop releases");
}

#[test]
fn a_failed_allocation_frees_what_came_before() {
    let sizes = SmallSizes::from_config(
        &Dims {
            width: 5,
            experts: 3,
        },
        7,
    );
    let checked = CountingDevice::check_every_allocation_failure::<Small>(HostDevice::new, &sizes);
    assert_eq!(checked, Ok(5 + 1), "five buffers, then the slab");
}

/// A device that hands out address ranges without memory, breaking one promise on purpose.
struct Faulty {
    next: std::cell::Cell<u64>,
    fault: Fault,
}

#[derive(Clone, Copy)]
enum Fault {
    None,
    /// Every allocation 8 bytes past an aligned address.
    Misaligned,
    /// Every allocation at the same address.
    SameAddress,
}

impl arena_runtime::Device for Faulty {
    fn name(&self) -> String {
        "faulty".into()
    }
    fn alloc(&self, bytes: usize) -> Result<u64, arena_runtime::DeviceError> {
        let addr = self.next.get();
        if !matches!(self.fault, Fault::SameAddress) {
            self.next.set((addr + bytes as u64 + 511) & !255);
        }
        Ok(match self.fault {
            Fault::Misaligned => addr + 8,
            _ => addr,
        })
    }
    unsafe fn free(&self, _addr: u64, _bytes: usize) -> Result<(), arena_runtime::DeviceError> {
        Ok(())
    }
}

#[test]
fn the_placement_check_holds_and_names_every_kind_of_breach() {
    use arena_runtime::PlacementError;
    let dims = Dims {
        width: 64,
        experts: 0,
    };
    let sizes = SmallSizes::from_config(&dims, 16);
    let device = |fault| Faulty {
        next: std::cell::Cell::new(1 << 20),
        fault,
    };
    for options in [AllocOptions::default(), AllocOptions::per_buffer()] {
        let arena = Small::allocate_with(device(Fault::None), &sizes, options).unwrap();
        assert_eq!(arena.check_placement(), Ok(()));
        assert!(arena.routed.is_null(), "gated off");
        arena.release().unwrap();
    }
    let skewed = Small::allocate(device(Fault::Misaligned), &sizes).unwrap();
    assert!(matches!(
        skewed.check_placement(),
        Err(PlacementError::Misaligned {
            buffer: "hidden",
            align: 256,
            ..
        })
    ));
    let stacked = Small::allocate_with(
        device(Fault::SameAddress),
        &sizes,
        AllocOptions::per_buffer(),
    )
    .unwrap();
    let err = stacked.check_placement().unwrap_err();
    assert!(matches!(err, PlacementError::Overlap { .. }), "{err}");
    assert!(err.to_string().contains("overlap"), "{err}");
}
