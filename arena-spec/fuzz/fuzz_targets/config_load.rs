//! Any bytes through `ModelConfig` loading and sizing: each input either loads and sizes
//! (or names the buffer that overflows), or is one error line naming the file; never a
//! panic, a hang or unbounded memory.
#![no_main]

use arena_spec::{BufferSizes, Levers, ModelConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match ModelConfig::from_json_str_with_levers(text, "fuzz.json", Levers::ALL_ON) {
        Ok(config) => {
            for (m, seq) in [(1, 1), (8192, 131072), (1 << 20, 1 << 22)] {
                if let Err(e) = BufferSizes::try_from_config(&config, m, seq, 16, 128) {
                    assert!(!e.to_string().is_empty());
                }
            }
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.starts_with("fuzz.json: "), "{msg}");
            assert!(!msg.contains('\n'), "{msg}");
        }
    }
});
