//! `BufferSizes::from_config` per call, for the shipped models: the derive's generated sizing
//! against the same code spelled out by hand (the compile-time benchmark builds this bench in
//! both variants and compares). `cargo bench -p arena-spec --bench from_config`.

use arena_spec::models::SHIPPED;
use arena_spec::BufferSizes;
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
            black_box(BufferSizes::from_config(
                black_box(c),
                black_box(8192),
                131072,
                16,
                128,
            ));
        }
        per_call.push(t.elapsed().as_secs_f64() * 1e9 / calls as f64);
    }
    per_call.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("FROM_CONFIG_NS {:.1}", per_call[rounds / 2]);
}
