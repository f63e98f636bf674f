//! `arena sweep`: total_bytes and the largest buffers across a range of max_batch_tokens.

use crate::common::{print_inputs, resolve, size_error, CliError, FixedSizing, SizingArgs};
use arena_spec::report::{human_bytes, SizeReport};
use arena_spec::ArenaInputs;
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
    let ms = steps(args.range);
    let last = SizeReport::new(
        &config,
        ArenaInputs {
            max_batch_tokens: *ms.last().unwrap(),
            ..base
        },
    )
    .map_err(size_error(&config))?
    .0;
    let top: Vec<&'static str> = last.largest(args.top).iter().map(|b| b.name).collect();

    let mut rows: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    for &m in &ms {
        let (report, _) = SizeReport::new(
            &config,
            ArenaInputs {
                max_batch_tokens: m,
                ..base
            },
        )
        .map_err(size_error(&config))?;
        let per: Vec<usize> = top
            .iter()
            .map(|n| {
                report
                    .buffers
                    .iter()
                    .find(|b| b.name == *n)
                    .map_or(0, |b| b.bytes)
            })
            .collect();
        let total = if args.fixed.shared {
            report.shared_bytes
        } else {
            report.total_bytes
        };
        rows.push((m, total, per));
    }

    print_inputs(
        &config,
        &ArenaInputs {
            max_batch_tokens: args.range.0,
            ..base
        },
    );
    println!();
    let total_name = if args.fixed.shared {
        "shared slab"
    } else {
        "total_bytes"
    };
    print!("{:>8} {:>12}", "M", total_name);
    for n in &top {
        print!(" {n:>20}");
    }
    println!();
    for (m, total, per) in &rows {
        print!("{m:>8} {:>12}", human_bytes(*total));
        for b in per {
            print!(" {:>20}", human_bytes(*b));
        }
        println!();
    }
    if let Some(path) = &args.svg {
        draw_svg(path, &config.source, &top, &rows)?;
        println!("\nplot written to {}", path.display());
    }
    Ok(())
}

fn draw_svg(
    path: &std::path::Path,
    model: &str,
    top: &[&str],
    rows: &[(usize, usize, Vec<usize>)],
) -> Result<(), CliError> {
    use plotters::prelude::*;
    let err = |reason: String| CliError::Output {
        path: path.display().to_string(),
        reason,
    };
    let gib = |b: usize| b as f64 / (1u64 << 30) as f64;
    let x_max = rows.last().map_or(1, |r| r.0) as f64;
    let y_max = rows.iter().map(|r| gib(r.1)).fold(0.0, f64::max).max(1e-6) * 1.05;
    // Drawn into memory, then written whole under a temporary name and renamed over `path`:
    // a reader (or another sweep writing the same path) never sees half a plot.
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{model}: arena bytes vs max_batch_tokens"),
                ("sans-serif", 22),
            )
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)
            .map_err(|e| err(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("max_batch_tokens (M)")
            .y_desc("GiB")
            .draw()
            .map_err(|e| err(e.to_string()))?;
        let series = std::iter::once((
            "total_bytes",
            rows.iter()
                .map(|r| (r.0 as f64, gib(r.1)))
                .collect::<Vec<_>>(),
        ))
        .chain(
            top.iter()
                .enumerate()
                .map(|(i, n)| (*n, rows.iter().map(|r| (r.0 as f64, gib(r.2[i]))).collect())),
        );
        for (i, (name, points)) in series.enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(2)))
                .map_err(|e| err(e.to_string()))?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(|e| err(e.to_string()))?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    write_whole(path, svg.as_bytes()).map_err(|e| err(e.to_string()))
}

/// Writes `bytes` to a temporary file beside `path` (named by this process), then renames it
/// over `path`, which is atomic on one file system.
fn write_whole(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
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
