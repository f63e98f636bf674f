//! Finds the real checkpoints' index files beside the checkout (`../shared/checkpoints`, or
//! `$ARENA_SHARED/checkpoints`): where they are, `cfg(shared_checkpoints)` turns their tests
//! on and `ARENA_SHARED_CHECKPOINTS` names the folder; where they are not, those tests are
//! ignored with the reason, a visible skip.

use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(shared_checkpoints)");
    println!("cargo::rerun-if-env-changed=ARENA_SHARED");
    let shared = match std::env::var_os("ARENA_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap()).join("../../shared"),
    };
    let dir = shared.join("checkpoints");
    println!("cargo::rerun-if-changed={}", dir.display());
    if dir.join("SOURCES.md").exists() {
        println!("cargo::rustc-cfg=shared_checkpoints");
        println!(
            "cargo::rustc-env=ARENA_SHARED_CHECKPOINTS={}",
            dir.display()
        );
    }
}
