//! `arena sweep`: total_bytes and the largest buffers across a range of max_batch_tokens.

#[path = "sweep_plot.rs"]
mod plot;

use crate::common::{
    print_inputs, print_json, resolve, size_error, CliError, FixedSizing, SizingArgs,
};
use arena_spec::report::{human_bytes, parse_bytes, SweepReport};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// A shipped model's name (see `arena models`) or a path to a config.json
    pub model: String,
    /// The range of M, doubling from the first to the last: e.g. 256..65536
    #[arg(long = "max-batch-tokens", value_name = "FROM..TO", value_parser = parse_range)]
    pub range: (usize, usize),
    /// How many of the largest buffers to follow
    #[arg(long, default_value_t = 4)]
    pub top: usize,
    /// Also draw the sweep as an SVG plot into FILE
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// A budget to draw on the plot as a line, e.g. 20GiB
    #[arg(long, value_parser = parse_bytes, requires = "svg")]
    pub budget: Option<usize>,
    /// Print one JSON document (`arena_spec::report::SweepReport`) instead of the table
    #[arg(long, conflicts_with = "svg")]
    pub json: bool,
    /// Fixed inputs and levers (--max-batch-tokens here is the range above)
    #[command(flatten)]
    pub fixed: FixedSizing,
}

fn parse_range(s: &str) -> Result<(usize, usize), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("`{s}` is not a range: write FROM..TO, e.g. 256..65536"))?;
    let parse = |t: &str| {
        t.trim()
            .parse::<usize>()
            .map_err(|_| format!("`{t}` in `{s}` is not a whole number"))
    };
    let (a, b) = (parse(a)?, parse(b.trim_start_matches('='))?);
    if a == 0 || a > b {
        return Err(format!(
            "`{s}`: the range must start at 1 or more and not end before it starts"
        ));
    }
    Ok((a, b))
}

/// The values of M: doubling from `from`, with `to` last.
fn steps((from, to): (usize, usize)) -> Vec<usize> {
    let mut out = Vec::new();
    let mut m = from;
    while m < to {
        out.push(m);
        m = m.saturating_mul(2);
    }
    out.push(to);
    out
}

pub fn run(args: SweepArgs) -> Result<(), CliError> {
    let sizing = SizingArgs {
        max_batch_tokens: Some(args.range.0),
        fixed: args.fixed.clone(),
    };
    let (config, base) = resolve(&args.model, &sizing)?;
    let doc = SweepReport::new(&config, base, &steps(args.range), args.top)
        .map_err(size_error(&config))?;
    if args.json {
        return print_json(&doc);
    }
    let reuse = args.fixed.reuse;
    print_inputs(&config, &base);
    println!();
    print!("{:>8} {:>12}", "M", "total_bytes");
    if reuse {
        print!(" {:>12}", "reuse slab");
    }
    for n in &doc.followed {
        print!(" {n:>20}");
    }
    println!();
    for p in &doc.points {
        print!(
            "{:>8} {:>12}",
            p.max_batch_tokens,
            human_bytes(p.total_bytes)
        );
        if reuse {
            print!(" {:>12}", human_bytes(p.reuse_bytes));
        }
        for b in &p.followed_bytes {
            print!(" {:>20}", human_bytes(*b));
        }
        println!();
    }
    if let Some(path) = &args.svg {
        let title = plot::title(&config, &args.fixed.layout, reuse);
        let svg =
            plot::draw(&title, &doc, reuse, args.budget).map_err(|reason| CliError::Output {
                path: path.display().to_string(),
                reason,
            })?;
        write_whole(path, svg.as_bytes()).map_err(|e| CliError::Output {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        println!("\nplot written to {}", path.display());
    }
    Ok(())
}

/// Writes `bytes` to a temporary file beside `path` (named by this process), then renames it
/// over `path`, which is atomic on one file system.
pub fn write_whole(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map_or("plot".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}
