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
#[regions(const, inputs(rows: usize), align = 64)]
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

/// A phased arena: `a` and `b` are never live together, `c` spans both phases, `w` is the
/// whole step.
#[derive(Arena)]
#[arena(sizes = PhasedSizes, inputs(m: usize), phases(first, second))]
pub struct Phased {
    #[buffer(shape = [m], phase = first)]
    pub a: DevicePtr<u32>,
    #[buffer(shape = [m], phase = second)]
    pub b: DevicePtr<u32>,
    #[buffer(shape = [m], phase = first..=second)]
    pub c: DevicePtr<u32>,
    #[buffer(shape = [m])]
    pub w: DevicePtr<u32>,
    #[buffer(bytes = Split::bytes(m), phase = second)]
    pub split: DevicePtr<u8>,
}

#[test]
fn a_reuse_arena_shares_only_between_disjoint_phases_and_poisons_a_phase() {
    use arena_runtime::{AllocMode, Device, Live, POISON_PATTERN};
    assert_eq!(<Phased as Arena>::PHASES, ["first", "second"]);
    assert_eq!(
        <Phased as Arena>::phase("second"),
        Some(PhasedPhase::Second)
    );
    assert_eq!(<Phased as Arena>::phase("third"), None);
    assert_eq!(
        <PhasedPhase as arena_runtime::Phase>::ALL,
        [PhasedPhase::First, PhasedPhase::Second]
    );
    assert_eq!(arena_runtime::Phase::index(PhasedPhase::Second), 1);
    assert_eq!(arena_runtime::Phase::name(PhasedPhase::Second), "second");
    assert_eq!(
        <Phased as Arena>::BUFFERS[2].live,
        Live::Phases { first: 0, last: 1 }
    );
    let sizes = PhasedSizes::from_config(100);
    assert_eq!(sizes.split, Split::layout(100).unwrap().total_bytes);
    let plan = Phased::reuse_plan(&sizes).unwrap();
    assert!(plan.footprint < plan.slab);
    assert_eq!(plan.footprint, plan.lower_bound);

    let device = CountingDevice::new(HostDevice::new());
    let arena = Phased::allocate_with(&device, &sizes, AllocOptions::reuse()).unwrap();
    assert_eq!(arena.mode(), AllocMode::Reuse);
    assert_eq!(arena.allocated_bytes(), plan.footprint);
    assert_eq!(arena.check_placement(), Ok(()));
    assert_eq!(arena.a.as_raw(), arena.b.as_raw(), "a and b share bytes");
    let distinct = [arena.a.as_raw(), arena.c.as_raw(), arena.w.as_raw()];
    assert!(distinct[0] != distinct[1] && distinct[1] != distinct[2] && distinct[0] != distinct[2]);

    // Phase 0 writes a, c, w; phase 1 begins: poisoning fills b and split (they begin
    // there), leaving c and w (live across) untouched.
    for (p, v) in [(&arena.a, 1u8), (&arena.c, 2), (&arena.w, 3)] {
        // SAFETY: a live buffer of this arena.
        unsafe { device.fill(p.as_raw(), p.byte_len(), v) }.unwrap();
    }
    arena.poison_phase(PhasedPhase::Second).unwrap();
    let read = |addr: u64, len: usize| {
        let mut out = vec![0u8; len];
        // SAFETY: a live buffer of this arena.
        unsafe { device.read(addr, &mut out) }.unwrap();
        out
    };
    assert!(read(arena.b.as_raw(), arena.b.byte_len())
        .iter()
        .all(|&x| x == POISON_PATTERN));
    assert!(read(arena.split.as_raw(), arena.split.byte_len())
        .iter()
        .all(|&x| x == POISON_PATTERN));
    assert!(
        read(arena.a.as_raw(), arena.a.byte_len())
            .iter()
            .all(|&x| x == POISON_PATTERN),
        "a's bytes were reused by b"
    );
    assert!(read(arena.c.as_raw(), arena.c.byte_len())
        .iter()
        .all(|&x| x == 2));
    assert!(read(arena.w.as_raw(), arena.w.byte_len())
        .iter()
        .all(|&x| x == 3));
    // Nor does the first phase's poison fill the whole-step buffer: it holds the step's inputs.
    arena.poison_phase(PhasedPhase::First).unwrap();
    assert!(read(arena.w.as_raw(), arena.w.byte_len())
        .iter()
        .all(|&x| x == 3));
    assert!(read(arena.a.as_raw(), arena.a.byte_len())
        .iter()
        .all(|&x| x == POISON_PATTERN));
    arena.release().unwrap();
    assert_eq!(device.live_allocations(), 0);

    // Plain, the same arena keeps every buffer apart.
    let apart = Phased::allocate_with(&device, &sizes, AllocOptions::default()).unwrap();
    assert_eq!(apart.allocated_bytes(), plan.slab);
    assert_ne!(apart.a.as_raw(), apart.b.as_raw());
    apart.release().unwrap();
}

/// A host device with a broken `fill`: `skip` does nothing (poison mode silently off);
/// otherwise it covers its last allocation whole, past the range asked, as a memset with a
/// wrong length would.
struct BadFill {
    host: HostDevice,
    skip: bool,
    last: std::cell::Cell<(u64, usize)>,
}

impl BadFill {
    fn new(skip: bool) -> Self {
        BadFill {
            host: HostDevice::new(),
            skip,
            last: std::cell::Cell::new((0, 0)),
        }
    }
}

impl arena_runtime::Device for BadFill {
    fn name(&self) -> String {
        "host with a broken fill".into()
    }
    fn alloc(&self, bytes: usize) -> Result<u64, arena_runtime::DeviceError> {
        let addr = self.host.alloc(bytes)?;
        self.last.set((addr, bytes));
        Ok(addr)
    }
    unsafe fn free(&self, addr: u64, bytes: usize) -> Result<(), arena_runtime::DeviceError> {
        // SAFETY: forwarded with the caller's promise unchanged.
        unsafe { self.host.free(addr, bytes) }
    }
    unsafe fn write(&self, addr: u64, data: &[u8]) -> Result<(), arena_runtime::DeviceError> {
        // SAFETY: forwarded with the caller's promise unchanged.
        unsafe { self.host.write(addr, data) }
    }
    unsafe fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), arena_runtime::DeviceError> {
        // SAFETY: forwarded with the caller's promise unchanged.
        unsafe { self.host.read(addr, out) }
    }
    unsafe fn fill(&self, _: u64, _: usize, value: u8) -> Result<(), arena_runtime::DeviceError> {
        if self.skip {
            return Ok(());
        }
        let (addr, bytes) = self.last.get();
        // SAFETY: the last allocation, which the arena being poisoned still holds.
        unsafe { self.host.write(addr, &vec![value; bytes]) }
    }
}

/// `check_step` passes a sound reuse arena, and is not vacuous: where poisoning does not
/// happen it names the first buffer that should have been poisoned and the phase, and where
/// poisoning overruns it names the live buffer it overwrote.
#[test]
fn check_step_passes_a_reuse_arena_and_names_a_missing_poison() {
    let sizes = PhasedSizes::from_config(100);
    let arena = Phased::allocate_with(HostDevice::new(), &sizes, AllocOptions::reuse()).unwrap();
    assert_eq!(arena.check_step(), Ok(()));
    arena.release().unwrap();

    let arena = Phased::allocate_with(BadFill::new(true), &sizes, AllocOptions::reuse()).unwrap();
    assert_eq!(
        arena.check_step(),
        Err("`a` is not poisoned as phase `first` begins".into())
    );
    arena.release().unwrap();

    let arena = Phased::allocate_with(BadFill::new(false), &sizes, AllocOptions::reuse()).unwrap();
    assert_eq!(
        arena.check_step(),
        Err("`c` was overwritten in phase `second`".into())
    );
    arena.release().unwrap();
}

#[test]
fn a_default_fill_covers_every_byte_across_its_chunks() {
    use arena_runtime::Device;
    let device = HostDevice::new();
    let n = (2 << 20) + 5;
    let addr = device.alloc(n).unwrap();
    // SAFETY: `addr .. addr + n` is this allocation.
    unsafe { device.fill(addr, n, 7) }.unwrap();
    unsafe { device.fill(addr, 3, 9) }.unwrap();
    let mut out = vec![0u8; n];
    unsafe { device.read(addr, &mut out) }.unwrap();
    assert_eq!(&out[..4], &[9, 9, 9, 7]);
    assert!(out[3..].iter().all(|&b| b == 7));
    unsafe { device.free(addr, n) }.unwrap();
}

#[test]
fn a_reuse_slab_refuses_guard_bands() {
    let sizes = PhasedSizes::from_config(100);
    let err = Phased::allocate_with(
        HostDevice::new(),
        &sizes,
        AllocOptions::reuse().with_guard_bytes(64),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            arena_runtime::ArenaError::ReuseGuards { arena: "Phased" }
        ),
        "{err}"
    );
}

/// `slab_bytes` is what `allocate_with` takes, untracked buffers, padding and guard bands
/// included, in every mode: more than `total_bytes` when a buffer is untracked.
#[test]
fn slab_bytes_is_what_allocation_takes_in_every_mode() {
    let dims = Dims {
        width: 5,
        experts: 3,
    };
    let sizes = SmallSizes::from_config(&dims, 7);
    for options in [
        AllocOptions::default(),
        AllocOptions::per_buffer(),
        AllocOptions::default().with_guard_bytes(32),
        AllocOptions::per_buffer().with_guard_bytes(16),
        AllocOptions::reuse(),
    ] {
        let arena = Small::allocate_with(HostDevice::new(), &sizes, options).unwrap();
        assert_eq!(
            Small::slab_bytes(&sizes, options),
            Ok(arena.allocated_bytes()),
            "{options:?}"
        );
        arena.release().unwrap();
    }
    assert!(Small::slab_bytes(&sizes, AllocOptions::default()).unwrap() > sizes.total_bytes());
    let phased = PhasedSizes::from_config(100);
    let reuse = Phased::allocate_with(HostDevice::new(), &phased, AllocOptions::reuse()).unwrap();
    assert_eq!(
        Phased::slab_bytes(&phased, AllocOptions::reuse()),
        Ok(reuse.allocated_bytes())
    );
    reuse.release().unwrap();
}

/// Byte views treat every buffer alike yet keep each one's shape, its last dimension in bytes,
/// so one row of any buffer (a state slot, a KV block) is `row_range`; a byte-formula buffer
/// is its bytes in one dimension.
#[test]
fn byte_views_keep_each_buffer_s_rows() {
    let dims = Dims {
        width: 5,
        experts: 3,
    };
    let mut arena = Small::allocate(HostDevice::new(), &SmallSizes::from_config(&dims, 7)).unwrap();
    let shapes: Vec<(&str, Vec<usize>)> = arena
        .byte_views()
        .iter()
        .map(|v| (v.name(), v.shape().to_vec()))
        .collect();
    let split = arena.byte_views()[3].byte_len();
    assert_eq!(
        shapes,
        [
            ("hidden", vec![7, 5 * 2]),
            ("logits", vec![7, 3 * 4]),
            ("routed", vec![7, 3]),
            ("split", vec![split]),
            ("unit", vec![6]),
        ]
    );
    // Row 4 of `hidden` written through a writable byte view lands at its byte offset.
    let mut views = arena.byte_views_mut().unwrap();
    views[0]
        .row_range(4..5)
        .unwrap()
        .write_bytes(&[9u8; 10])
        .unwrap();
    drop(views);
    let mut all = vec![0u8; 7 * 10];
    arena.byte_views()[0].read_bytes(&mut all).unwrap();
    assert!(all[40..50].iter().all(|&b| b == 9) && all[..40].iter().all(|&b| b != 9));
    let bytes = arena.byte_views()[3].row_range(0..1).unwrap().byte_len();
    assert_eq!(bytes, 1, "a byte-formula buffer's rows are its bytes");
    // `logits` holds its 256-byte floor: the view's bytes are the buffer's, its rows the shape's.
    assert_eq!(arena.byte_views()[1].byte_len(), 256);
}

/// Safe host copies through views reach exactly their bytes: every buffer written through its
/// writable byte view and read back through its read-only one, a narrowed typed view of the
/// first rows only, and a host slice of the wrong length refused (under Miri too).
#[test]
fn views_copy_exactly_their_bytes_on_real_host_memory() {
    let sizes = SmallSizes::from_config(
        &Dims {
            width: 5,
            experts: 3,
        },
        7,
    );
    let mut arena = Small::allocate(HostDevice::new(), &sizes).unwrap();
    let patterns: Vec<Vec<u8>> = arena
        .byte_views_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
        .map(|(i, v)| {
            let data = vec![i as u8 + 1; v.byte_len()];
            v.write_bytes(&data).unwrap();
            data
        })
        .collect();
    for (v, want) in arena.byte_views().iter().zip(&patterns) {
        let mut back = vec![0u8; v.byte_len()];
        v.read_bytes(&mut back).unwrap();
        assert_eq!(&back, want, "{}", v.name());
    }
    let views = SmallViews::of(&arena);
    let rows = views.hidden.rows(2).unwrap();
    let mut two = vec![0u8; rows.byte_len()];
    rows.read_bytes(&mut two).unwrap();
    assert_eq!(two.len(), 2 * 5 * 2);
    assert!(two.iter().all(|&b| b == 1));
    assert!(rows.read_bytes(&mut [0u8; 3]).is_err());
    arena.release().unwrap();
}
