//! The sweep drawn as an SVG an operator can put in a design doc: the bytes stacked by where
//! they go (the largest buffers at the last point, then the rest), the total and (with
//! `--reuse`) the reuse slab as lines with a marker at every point, a budget line if one is
//! given, max_batch_tokens on a log2 axis, bytes in one binary unit, the legend beside the
//! plot so it never covers the data.

use crate::common::LayoutArgs;
use arena_spec::report::SweepReport;
use arena_spec::ModelConfig;
use plotters::prelude::*;

const WIDTH: u32 = 1100;
const HEIGHT: u32 = 620;
/// Pixels right of the plot for the legend.
const LEGEND: u32 = 260;

/// `qwen3-0.6b — tp=1 ep=1 pp=1 — levers: none — reuse slab`.
pub fn title(config: &ModelConfig, layout: &LayoutArgs, reuse: bool) -> String {
    let levers = crate::common::levers_on(config);
    let rank = config
        .shard
        .as_ref()
        .map_or(String::new(), |s| format!(" (rank {})", s.rank.index));
    format!(
        "{} — tp={} ep={} pp={}{rank} — levers: {}{}",
        config.source,
        layout.tp,
        layout.ep,
        layout.pp,
        if levers.is_empty() {
            "none".to_string()
        } else {
            levers.join(", ")
        },
        if reuse { " — reuse slab" } else { "" }
    )
}

/// The binary unit whose values on this axis stay between 1 and 1024 at the top.
fn unit(max: usize) -> (f64, &'static str) {
    match max {
        m if m >= 1 << 30 => ((1u64 << 30) as f64, "GiB"),
        m if m >= 1 << 20 => ((1u64 << 20) as f64, "MiB"),
        m if m >= 1 << 10 => (1024.0, "KiB"),
        _ => (1.0, "B"),
    }
}

/// The plot of `doc` as SVG text, or why plotters could not draw it.
pub fn draw(
    title: &str,
    doc: &SweepReport,
    reuse: bool,
    budget: Option<usize>,
) -> Result<String, String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let points = &doc.points;
    let xs: Vec<f64> = points
        .iter()
        .map(|p| (p.max_batch_tokens as f64).log2())
        .collect();
    let (x_lo, x_hi) = (xs[0] - 0.25, xs[xs.len() - 1] + 0.25);
    let top_bytes = points
        .iter()
        .map(|p| p.total_bytes.max(p.slab_bytes))
        .chain(budget)
        .max()
        .unwrap_or(1)
        .max(1);
    let (scale, unit_name) = unit(top_bytes);
    let y = |bytes: usize| bytes as f64 / scale;
    let y_hi = y(top_bytes) * 1.08;

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let (plot, legend) = root.split_horizontally(WIDTH - LEGEND);
        let x_fmt = |x: &f64| format!("{}", 2f64.powf(*x).round());
        let y_fmt = |v: &f64| format!("{v} {unit_name}");
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, ("sans-serif", 18))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(84)
            .build_cartesian_2d(x_lo..x_hi, 0f64..y_hi)
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .x_desc("max_batch_tokens (M), log2 axis")
            .y_desc(format!("bytes ({unit_name})"))
            .x_labels(((x_hi - x_lo).ceil() as usize + 1).min(24))
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(|x| e(&x))?;

        // Stacked bands: each followed buffer, then the rest up to total_bytes.
        let mut entries: Vec<(String, RGBAColor, bool)> = Vec::new();
        let mut below = vec![0usize; points.len()];
        let bands = doc.followed.len() + 1;
        for band in 0..bands {
            let above: Vec<usize> = points
                .iter()
                .zip(&below)
                .map(|(p, b)| match p.followed_bytes.get(band) {
                    Some(bytes) => b + bytes,
                    None => p.total_bytes,
                })
                .collect();
            let color = Palette99::pick(band + 2).mix(0.45);
            let mut outline: Vec<(f64, f64)> =
                xs.iter().zip(&above).map(|(x, a)| (*x, y(*a))).collect();
            outline.extend(xs.iter().zip(&below).rev().map(|(x, b)| (*x, y(*b))));
            if xs.len() == 1 {
                // One point: a bar a quarter octave wide each side, so the band shows.
                let (x, a, b) = (xs[0], y(above[0]), y(below[0]));
                outline = vec![(x - 0.12, b), (x - 0.12, a), (x + 0.12, a), (x + 0.12, b)];
            }
            chart
                .draw_series(std::iter::once(Polygon::new(outline, color.filled())))
                .map_err(|x| e(&x))?;
            let name = doc.followed.get(band).map_or("the rest", |n| n);
            entries.push((name.to_string(), color, false));
            below = above;
        }

        // Lines with markers: total_bytes, and the reuse slab when asked.
        let mut lines = vec![(
            "total_bytes",
            BLACK.to_rgba(),
            points.iter().map(|p| p.total_bytes).collect::<Vec<_>>(),
        )];
        if reuse {
            lines.push((
                "reuse slab",
                RGBColor(200, 30, 30).to_rgba(),
                points.iter().map(|p| p.reuse_bytes).collect(),
            ));
        }
        for (name, color, values) in lines {
            let pts: Vec<(f64, f64)> = xs.iter().zip(&values).map(|(x, v)| (*x, y(*v))).collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(|x| e(&x))?;
            chart
                .draw_series(pts.iter().map(|p| Circle::new(*p, 4, color.filled())))
                .map_err(|x| e(&x))?;
            entries.push((name.to_string(), color, true));
        }
        if let Some(b) = budget {
            let color = RGBColor(20, 110, 200).to_rgba();
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x_lo, y(b)), (x_hi, y(b))],
                    8,
                    5,
                    color.stroke_width(2),
                ))
                .map_err(|x| e(&x))?;
            entries.push((
                format!("budget {}", arena_spec::report::human_bytes(b)),
                color,
                true,
            ));
        }

        // The legend, beside the plot: lines first (drawn over the bands), then the bands
        // from the top of the stack down.
        let order: Vec<&(String, RGBAColor, bool)> = entries
            .iter()
            .filter(|e| e.2)
            .chain(entries.iter().filter(|e| !e.2).rev())
            .collect();
        for (i, (name, color, line)) in order.into_iter().enumerate() {
            let top = 70 + 26 * i as i32;
            if *line {
                legend
                    .draw(&PathElement::new(
                        vec![(10, top + 8), (36, top + 8)],
                        color.stroke_width(3),
                    ))
                    .map_err(|x| e(&x))?;
            } else {
                legend
                    .draw(&Rectangle::new([(10, top), (36, top + 16)], color.filled()))
                    .map_err(|x| e(&x))?;
            }
            legend
                .draw(&Text::new(name.clone(), (44, top + 1), ("sans-serif", 15)))
                .map_err(|x| e(&x))?;
        }
        root.present().map_err(|x| e(&x))?;
    }
    Ok(svg)
}
