//! `arena`: size, allocate, fit, sweep and compare the engine's buffer arena for a model.

mod cli;
mod common;
mod const_config;
mod device;
mod diff;
mod fit;
mod gpu_plan;
mod gpu_plan_figures;
mod gpu_plan_plot;
mod models;
mod plan;
mod sweep;
mod weights;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    restore_sigpipe();
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) if !e.use_stderr() => {
            // --help and --version
            print!("{e}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("{}", one_line(&e.to_string()));
            return ExitCode::from(2);
        }
    };
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

/// clap's message without the usage block, on one line.
fn one_line(message: &str) -> String {
    message
        .lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `arena plan … | head` should end quietly, as Unix tools do, not panic on a closed pipe: Rust
/// ignores SIGPIPE by default, so put the default action back.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
