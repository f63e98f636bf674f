//! `BufferSizes::from_inputs` (the named form of `from_config`) per call, for the shipped models: the derive's generated sizing
//! against the same code spelled out by hand (the compile-time benchmark builds this bench in
//! both variants and compares). `cargo bench -p arena-spec --bench from_config`.

use arena_spec::models::SHIPPED;
use arena_spec::{BufferArenaInputs, BufferSizes};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let configs: Vec<_> = SHIPPED.iter().map(|m| m.config().unwrap()).collect();
    let rounds = 15;
    let calls = 20_000;
    let mut per_call = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        for i in 0..calls {
            let c = &configs[i % configs.len()];
            let inputs = BufferArenaInputs {
                max_batch_tokens: black_box(8192),
                max_seq_len: 131072,
                kv_block_size: 16,
                max_batch_size: 128,
            };
            let _sizes = black_box(BufferSizes::from_inputs(black_box(c), &inputs));
        }
        per_call.push(t.elapsed().as_secs_f64() * 1e9 / calls as f64);
    }
    per_call.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("FROM_CONFIG_NS {:.1}", per_call[rounds / 2]);
}
