//! Phase sharing on the engine's arena: the planned shared slab of every shipped model
//! against the lower bound and the unshared slab, and the benchmark table.
//! Re-write the table with `ARENA_BLESS=1 cargo test -p arena-spec --release --test phases`.

use arena_runtime::Arena;
use arena_spec::models::SHIPPED;
use arena_spec::{ArenaInputs, BufferArena, Levers};

const INPUTS: ArenaInputs = ArenaInputs {
    max_batch_tokens: 8192,
    max_seq_len: 131072,
    kv_block_size: 16,
    max_batch_size: 128,
};

#[test]
fn every_shipped_model_shares_close_to_the_lower_bound() {
    for m in SHIPPED {
        let config = m.config_with_levers(Levers::default()).unwrap();
        let sizes = INPUTS.sizes(&config).unwrap();
        let plan = BufferArena::shared_plan(&sizes).unwrap();
        let ratio = plan.footprint as f64 / plan.lower_bound as f64;
        let saving = 1.0 - plan.footprint as f64 / plan.unshared as f64;
        println!(
            "{:<30} unshared {:>12} shared {:>12} bound {:>12} {:.4}x saving {:.1}%",
            m.name,
            plan.unshared,
            plan.footprint,
            plan.lower_bound,
            ratio,
            saving * 100.0
        );
        assert!(ratio <= 1.02, "{}: {ratio}", m.name);
    }
}
