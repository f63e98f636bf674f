//! The one check of where an allocated arena's buffers landed: what the CLI runs after
//! every allocation and what the tests assert, so the contract is stated once.

use crate::allocated::Allocated;
use crate::arena::Arena;
use crate::device::Device;
use crate::error::PlacementError;

impl<A: Arena, D: Device> Allocated<A, D> {
    /// Checks the placement contract: sizes its declaration allows ([`Arena::check_sizes`]),
    /// every buffer at exactly its sized bytes, NULL exactly
    /// when empty, aligned to [`Self::alignment`], inside one of the arena's allocations,
    /// and disjoint from every other buffer. The first breach is the error.
    pub fn check_placement(&self) -> Result<(), PlacementError> {
        A::check_sizes(self.sizes())?;
        let sized = A::byte_sizes(self.sizes());
        let mut spans = Vec::new();
        for (p, &bytes) in self.placements().iter().zip(&sized) {
            let buffer = p.decl.name;
            if p.bytes != bytes {
                return Err(PlacementError::WrongSize {
                    buffer,
                    placed: p.bytes,
                    sized: bytes,
                });
            }
            if (p.addr == 0) != (bytes == 0) {
                return Err(PlacementError::NullMismatch { buffer, bytes });
            }
            if bytes == 0 {
                continue;
            }
            if p.addr % self.alignment() as u64 != 0 {
                return Err(PlacementError::Misaligned {
                    buffer,
                    addr: p.addr,
                    align: self.alignment(),
                });
            }
            let end = p.addr.checked_add(bytes as u64);
            let inside = self
                .allocations()
                .iter()
                .any(|a| p.addr >= a.addr && end.is_some_and(|e| e <= a.addr + a.bytes as u64));
            if !inside {
                return Err(PlacementError::Outside {
                    buffer,
                    addr: p.addr,
                    bytes,
                });
            }
            spans.push((p.addr, p.addr + bytes as u64, buffer, p.decl.live));
        }
        spans.sort_unstable_by_key(|s| (s.0, s.1));
        if self.mode() == crate::AllocMode::Reuse {
            // Reuse: only buffers live in a common phase must be disjoint.
            for (i, a) in spans.iter().enumerate() {
                for b in &spans[i + 1..] {
                    if b.0 >= a.1 {
                        break;
                    }
                    if a.3.overlaps(b.3) {
                        return Err(PlacementError::Overlap {
                            first: a.2,
                            second: b.2,
                        });
                    }
                }
            }
            return Ok(());
        }
        for w in spans.windows(2) {
            if w[0].1 > w[1].0 {
                return Err(PlacementError::Overlap {
                    first: w[0].2,
                    second: w[1].2,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::allocated::{AllocOptions, Allocated};
    use crate::arena::{Arena, BufferDecl};
    use crate::error::PlacementError;
    use crate::host::HostDevice;

    /// Three buffers of 300, 0 and 700 bytes, the middle one empty (gated off).
    struct Three;
    const DECLS: [BufferDecl; 3] = [decl("a", None), decl("empty", Some("off")), decl("b", None)];
    const fn decl(name: &'static str, gate: Option<&'static str>) -> BufferDecl {
        BufferDecl {
            name,
            dtype: "u8",
            elem_size: 1,
            formula: "",
            is_shape: false,
            rank: 0,
            gate,
            min_bytes: None,
            tracked: true,
            doc: "",
            live: crate::Live::WholeStep,
            tensors: &[],
            per_layer: false,
            split: None,
        }
    }
    impl Arena for Three {
        type Sizes = [usize; 3];
        type Phase = crate::NoPhases;
        const NAME: &'static str = "Three";
        const BUFFERS: &'static [BufferDecl] = &DECLS;
        fn byte_sizes(sizes: &[usize; 3]) -> Vec<usize> {
            sizes.to_vec()
        }
        fn from_addresses(_: &[u64], _: &[usize]) -> Self {
            Three
        }
    }

    fn arena() -> Allocated<Three, HostDevice> {
        let a = Allocated::<Three, _>::allocate(
            HostDevice::new(),
            &[300, 0, 700],
            AllocOptions::default(),
        )
        .unwrap();
        assert_eq!(a.check_placement(), Ok(()));
        a
    }

    /// What an arena written by hand gets from the trait's defaults and the runtime: no
    /// shapes, its bytes as the bytes before any floor, a byte view a buffer (empty for the
    /// empty one), and per-buffer allocations that guard only the buffers they allocate.
    #[test]
    fn a_hand_written_arena_gets_the_defaults() {
        let sizes = [300, 0, 700];
        assert!((0..3).all(|i| Three::shape(&sizes, i).is_empty()));
        assert_eq!([0, 1, 2].map(|i| Three::raw_bytes(&sizes, i)), sizes);
        let a = arena();
        let lens: Vec<usize> = a.byte_views().iter().map(|v| v.len()).collect();
        assert_eq!(lens, sizes);
        a.release().unwrap();
        let guarded = AllocOptions {
            mode: crate::AllocMode::PerBuffer,
            guard_bytes: 64,
            ..AllocOptions::default()
        };
        assert_eq!(Three::slab_bytes(&sizes, guarded), Ok(300 + 64 + 700 + 64));
    }

    /// A gated buffer with a numeric floor: 0 bytes is its closed gate, not a breach of the
    /// floor; open, it is held to the floor.
    #[test]
    fn a_closed_gate_is_not_below_its_floor() {
        struct Floored;
        const FLOORED: [BufferDecl; 1] = [BufferDecl::new(
            "f",
            crate::dtype::Dtype {
                name: "u8",
                size: 1,
            },
            "[n]",
            0,
            "",
        )
        .gated_by("n > 0")
        .floored_at("256")];
        impl Arena for Floored {
            type Sizes = [usize; 1];
            type Phase = crate::NoPhases;
            const NAME: &'static str = "Floored";
            const BUFFERS: &'static [BufferDecl] = &FLOORED;
            fn byte_sizes(sizes: &[usize; 1]) -> Vec<usize> {
                sizes.to_vec()
            }
            fn from_addresses(_: &[u64], _: &[usize]) -> Self {
                Floored
            }
        }
        assert_eq!(Floored::check_sizes(&[0]), Ok(()));
        assert_eq!(Floored::check_sizes(&[256]), Ok(()));
        let below = Floored::check_sizes(&[100]).unwrap_err();
        assert_eq!((below.buffer, below.bytes), ("f", 100));
    }

    #[test]
    fn every_breach_is_named() {
        let mut a = arena();
        a.corrupt(|p, _| p[0].bytes = 299);
        assert!(matches!(
            a.check_placement(),
            Err(PlacementError::WrongSize {
                buffer: "a",
                placed: 299,
                sized: 300
            })
        ));

        let mut a = arena();
        a.corrupt(|p, _| p[1].addr = p[0].addr);
        assert!(matches!(
            a.check_placement(),
            Err(PlacementError::NullMismatch {
                buffer: "empty",
                bytes: 0
            })
        ));

        let mut a = arena();
        a.corrupt(|p, _| p[2].addr = 0);
        assert!(matches!(
            a.check_placement(),
            Err(PlacementError::NullMismatch {
                buffer: "b",
                bytes: 700
            })
        ));

        // One byte past its allocation's end, though it starts inside it.
        let mut a = arena();
        a.corrupt(|p, allocs| p[2].addr = ((allocs[0].addr + allocs[0].bytes as u64) & !255) - 256);
        assert!(
            matches!(
                a.check_placement(),
                Err(PlacementError::Outside { buffer: "b", .. })
            ),
            "{:?}",
            a.check_placement()
        );

        // Before every allocation's start.
        let mut a = arena();
        a.corrupt(|p, allocs| p[0].addr = allocs[0].addr - 256);
        assert!(matches!(
            a.check_placement(),
            Err(PlacementError::Outside { buffer: "a", .. })
        ));

        let mut a = arena();
        a.corrupt(|p, _| p[2].addr = p[0].addr + 256);
        assert!(matches!(
            a.check_placement(),
            Err(PlacementError::Overlap {
                first: "a",
                second: "b"
            })
        ));
    }

    /// `a` in phase 0, `b` in phase 1, `c` the whole step.
    struct Phased;
    const PHASED: [BufferDecl; 3] = [
        BufferDecl {
            live: crate::Live::Phases { first: 0, last: 0 },
            ..decl("a", None)
        },
        BufferDecl {
            live: crate::Live::Phases { first: 1, last: 1 },
            ..decl("b", None)
        },
        decl("c", None),
    ];
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum PhasedPhase {
        P0,
        P1,
    }
    impl crate::Phase for PhasedPhase {
        const ALL: &'static [Self] = &[PhasedPhase::P0, PhasedPhase::P1];
        fn index(self) -> usize {
            self as usize
        }
        fn name(self) -> &'static str {
            ["p0", "p1"][self as usize]
        }
    }
    impl Arena for Phased {
        type Sizes = [usize; 3];
        type Phase = PhasedPhase;
        const NAME: &'static str = "Phased";
        const BUFFERS: &'static [BufferDecl] = &PHASED;
        const PHASES: &'static [&'static str] = &["p0", "p1"];
        fn byte_sizes(sizes: &[usize; 3]) -> Vec<usize> {
            sizes.to_vec()
        }
        fn from_addresses(_: &[u64], _: &[usize]) -> Self {
            Phased
        }
    }

    #[test]
    fn a_reuse_arena_may_overlap_only_buffers_of_disjoint_phases() {
        let reuse = || {
            Allocated::<Phased, _>::allocate(
                HostDevice::new(),
                &[512, 512, 256],
                AllocOptions::reuse(),
            )
            .unwrap()
        };
        let a = reuse();
        assert_eq!(a.check_placement(), Ok(()));
        assert_eq!(
            a.placements()[0].addr,
            a.placements()[1].addr,
            "a and b share"
        );
        assert_eq!(a.allocated_bytes(), 768);

        // The whole-step buffer moved onto `a`: live together, so an overlap.
        let mut a = reuse();
        a.corrupt(|p, _| p[2].addr = p[0].addr + 256);
        assert!(
            matches!(
                a.check_placement(),
                Err(PlacementError::Overlap {
                    first: "a",
                    second: "c"
                }) | Err(PlacementError::Overlap {
                    first: "b",
                    second: "c"
                })
            ),
            "{:?}",
            a.check_placement()
        );

        // Plain, `a` and `b` on the same bytes are an overlap.
        let mut a = Allocated::<Phased, _>::allocate(
            HostDevice::new(),
            &[512, 512, 256],
            AllocOptions::default(),
        )
        .unwrap();
        assert_eq!(a.allocated_bytes(), 512 + 512 + 256);
        a.corrupt(|p, _| p[1].addr = p[0].addr);
        assert!(matches!(
            a.check_placement(),
            Err(PlacementError::Overlap { .. })
        ));
    }
}
