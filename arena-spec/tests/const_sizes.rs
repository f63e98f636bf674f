//! The const sizing path (`#[arena(const)]`) against the run-time one.

use arena_spec::models::SHIPPED;
use arena_spec::{ArenaInputs, BufferSizes, Levers};

const INPUTS: ArenaInputs = ArenaInputs {
    max_batch_tokens: 8192,
    max_seq_len: 131072,
    kv_block_size: 16,
    max_batch_size: 128,
};

#[test]
fn both_paths_give_identical_sizes_for_every_shipped_model() {
    for m in SHIPPED {
        let mut config = m.config_with_levers(Levers::default()).unwrap();
        for levers in [Levers::default(), Levers::ALL_ON] {
            config.levers = levers;
            let run_time = BufferSizes::try_from_inputs(&config, &INPUTS).unwrap();
            let konst = BufferSizes::const_from_inputs(&config, &INPUTS);
            assert_eq!(konst, run_time, "{}", m.name);
            assert_eq!(konst.total_bytes(), run_time.total_bytes());
        }
    }
}
