//! A decoder forward pass run entirely in the engine's `BufferArena`, checked against
//! transformers on the same weights.
//!
//! ```sh
//! cargo run -p arena-spec --release --example forward -- qwen3-0.6b-2l [--shared] [--weights DIR]
//! ```
//!
//! The model is a shipped config cut to 2 layers (`qwen3-0.6b-2l`, `qwen3-30b-a3b-2l`); the
//! weights are computed (`weights.rs`) unless `--weights DIR` names where `reference.py` wrote
//! them as safetensors; the outputs are compared with the committed reference
//! (`reference/<model>.<device>.json`, `--reference FILE` for another). `--shared` runs in a
//! shared slab (phases sharing bytes); every phase is poisoned as it begins unless
//! `--no-poison`. The step is `step.rs`, its kernels `kernels.rs`.

mod compare;
mod kernels;
mod model;
mod run;
mod step;
mod weights;

use arena_runtime::AllocOptions;
use run::Run;
use std::path::{Path, PathBuf};

fn main() {
    if let Err(e) = run() {
        eprintln!("forward: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut model, mut weights_dir, mut reference, mut shared, mut poison) =
        (None, None, None, false, true);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--shared" => shared = true,
            "--no-poison" => poison = false,
            "--weights" => weights_dir = Some(PathBuf::from(args.next().ok_or("--weights DIR")?)),
            "--reference" => {
                reference = Some(PathBuf::from(args.next().ok_or("--reference FILE")?))
            }
            name if !name.starts_with('-') => model = Some(name.to_string()),
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let model = model.ok_or(
        "usage: forward MODEL [--shared] [--no-poison] [--weights DIR] [--reference FILE]",
    )?;
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/forward/reference");
    let reference = reference.unwrap_or_else(|| here.join(format!("{model}.cpu.json")));
    let run = Run::new(&model, weights_dir.as_deref(), &reference)?;
    let options = if shared {
        AllocOptions::shared()
    } else {
        AllocOptions::default()
    };
    let outputs = run.outputs(options, poison)?;
    run.report(&outputs);
    Ok(())
}
