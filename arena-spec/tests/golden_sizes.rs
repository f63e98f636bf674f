//! Golden per-buffer size tables of every shipped model at fixed inputs, checked in under
//! `tests/golden/`, so a formula change shows up as a reviewable diff.
//! Re-bless with `ARENA_BLESS=1 cargo test -p arena-spec --test host golden_sizes::`.

use arena_spec::models::SHIPPED;
use arena_spec::report::SizeReport;
use arena_spec::{BufferArenaInputs, Levers};
use std::path::Path;

const INPUTS: BufferArenaInputs = BufferArenaInputs {
    max_batch_tokens: 8192,
    max_seq_len: 32768,
    kv_block_size: 16,
    max_batch_size: 128,
};

fn golden_text(name: &str) -> String {
    let mut out = format!(
        "# {name}: M={} max_seq_len={} kv_block_size={} max_batch_size={}\n",
        INPUTS.max_batch_tokens, INPUTS.max_seq_len, INPUTS.kv_block_size, INPUTS.max_batch_size
    );
    let mut config = arena_spec::models::find(name)
        .unwrap()
        .config_with_levers(Default::default())
        .unwrap();
    for (label, levers) in [
        ("levers off", Levers::default()),
        ("levers on", Levers::ALL_ON),
    ] {
        config.levers = levers;
        let (report, _) = SizeReport::new(&config, INPUTS).unwrap();
        out.push_str(&format!("\n## {label}\n"));
        out.push_str(&report.golden_lines());
    }
    out
}

#[test]
fn golden_size_tables() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var_os("ARENA_BLESS").is_some();
    let mut stale = Vec::new();
    for m in SHIPPED {
        let path = dir.join(format!("{}.txt", m.name));
        let actual = golden_text(m.name);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, actual).unwrap();
        } else if std::fs::read_to_string(&path).unwrap_or_default() != actual {
            stale.push(m.name);
        }
    }
    assert!(
        stale.is_empty(),
        "sizes changed for {stale:?}: review and re-bless with ARENA_BLESS=1"
    );
}
