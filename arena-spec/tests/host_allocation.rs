//! The engine's arena on the host backend for every shipped model: allocated and released to
//! zero, carved into regions, and a failure at any allocation named by buffer with nothing
//! leaked.

use arena_runtime::{Arena, CountingDevice, HostDevice};
use arena_spec::models::SHIPPED;
use arena_spec::{BufferArena, BufferSizes, Levers};

use crate::shipped_models::{load, BLOCK};

#[test]
fn every_shipped_model_allocates_on_the_host_and_releases_to_zero() {
    for m in SHIPPED {
        let c = m.config_with_levers(Default::default()).unwrap();
        // A small M keeps host memory modest; the layout logic is the same at any M.
        let s = BufferSizes::from_config(&c, 64, 4096, BLOCK, 8);
        let device = CountingDevice::new(HostDevice::new());
        let arena = BufferArena::allocate(device.clone(), &s).unwrap();
        for p in arena.placements() {
            assert_eq!(p.addr == 0, p.bytes == 0, "{} {}", m.name, p.decl.name);
            if p.decl.gated() && p.bytes == 0 {
                assert_eq!(p.addr, 0);
            }
        }
        assert_eq!(arena.hidden_states.byte_len(), s.hidden_states);
        arena.release().unwrap();
        assert_eq!(device.live_allocations(), 0, "{}", m.name);
    }
}

#[test]
fn regions_carve_the_arena_buffers_they_size() {
    let c = load("synthetic-all-features-moe");
    let s = BufferSizes::from_config(&c, 64, 4096, BLOCK, 8);
    let arena = BufferArena::allocate(HostDevice::new(), &s).unwrap();
    let layout = arena_spec::arena::regions::GdnFlaScratch::layout(&c, 64).unwrap();
    assert_eq!(layout.total_bytes, s.gdn_fla_scratch);
    let carved =
        arena_spec::arena::regions::GdnFlaScratch::carve(arena.gdn_fla_scratch, &layout).unwrap();
    assert_eq!(carved.w.as_raw(), arena.gdn_fla_scratch.as_raw());
    assert!(
        carved.gc.as_raw() + carved.gc.byte_len() as u64
            <= arena.gdn_fla_scratch.as_raw() + s.gdn_fla_scratch as u64
    );
    let moe = arena_spec::MoeFp8Scratch::layout(&c, 64).unwrap();
    assert_eq!(moe.total_bytes, s.moe_fp8_scratch);
    let scratch = arena_spec::arena::regions::Scratch::layout(&c, 64, 4096 / BLOCK + 1, 8).unwrap();
    assert_eq!(scratch.total_bytes, s.scratch);
}

#[test]
fn a_failure_at_any_allocation_names_the_buffer_and_leaks_nothing() {
    use arena_runtime::{AllocOptions, ArenaError};
    for name in [
        "synthetic-all-features-moe",
        "synthetic-all-features-dense",
        "deepseek-v3.2",
    ] {
        let mut c = load(name);
        c.levers = Levers::ALL_ON;
        let s = BufferSizes::from_config(&c, 64, 4096, BLOCK, 8);
        let checked =
            CountingDevice::check_every_allocation_failure::<BufferArena>(HostDevice::new, &s);
        let non_empty = BufferArena::byte_sizes(&s)
            .iter()
            .filter(|&&b| b > 0)
            .count();
        assert_eq!(checked, Ok(non_empty + 1), "{name}");
        let device = CountingDevice::new(HostDevice::new());
        device.fail_at(1);
        let err = BufferArena::allocate(device.clone(), &s).unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "the {}-buffer slab of BufferArena",
                BufferArena::BUFFERS.len()
            )),
            "{err}"
        );
        // A guard write failing after the slab was allocated frees the slab too.
        let err = BufferArena::allocate_with(
            NoWrite(CountingDevice::new(HostDevice::new())),
            &s,
            AllocOptions::default().with_guard_bytes(64),
        );
        assert!(matches!(err, Err(ArenaError::Guard { .. })), "{err:?}");
    }
}

/// A device whose memory cannot be written: guard bands fail after the allocation succeeded.
struct NoWrite(CountingDevice<HostDevice>);

impl Drop for NoWrite {
    fn drop(&mut self) {
        assert_eq!(
            self.0.live_allocations(),
            0,
            "the failed construction freed its slab"
        );
    }
}

impl arena_runtime::Device for NoWrite {
    fn name(&self) -> String {
        "no-write".into()
    }
    fn alloc(&self, bytes: usize) -> Result<u64, arena_runtime::DeviceError> {
        self.0.alloc(bytes)
    }
    unsafe fn free(&self, addr: u64, bytes: usize) -> Result<(), arena_runtime::DeviceError> {
        self.0.free(addr, bytes)
    }
}
