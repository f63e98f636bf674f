//! The whole-GPU plan drawn as an SVG an operator would rather look at than read: one stacked
//! bar a rank — weights, activation arena, state cache, KV pool, reserve, and what is left —
//! up to the GPU's memory, drawn as a dashed line; each part's bytes in one binary unit, the
//! binding rank marked, the legend beside the plot so it never covers a bar.

use arena_spec::gpu_plan::GpuPlan;
use arena_spec::report::human_bytes;
use plotters::prelude::*;

const WIDTH: u32 = 1000;
const HEIGHT: u32 = 620;
/// Pixels right of the plot for the legend.
const LEGEND: u32 = 300;
const GIB: f64 = (1u64 << 30) as f64;

/// A rank's parts, bottom to top, with the colours the legend names.
fn parts(plan: &GpuPlan, rank: usize) -> [(&'static str, u64, RGBColor); 6] {
    let r = &plan.ranks[rank];
    let used = r.weights_bytes + r.arena_bytes + r.state_bytes + r.pool_bytes + r.reserve_bytes;
    [
        ("weights", r.weights_bytes, RGBColor(70, 110, 180)),
        ("activation arena", r.arena_bytes, RGBColor(230, 150, 40)),
        ("state cache", r.state_bytes, RGBColor(150, 90, 170)),
        ("KV pool", r.pool_bytes, RGBColor(60, 160, 90)),
        ("reserve", r.reserve_bytes, RGBColor(150, 150, 150)),
        (
            "left",
            plan.inputs.gpu_bytes.saturating_sub(used),
            RGBColor(235, 235, 235),
        ),
    ]
}

/// The plan as SVG text, or why plotters could not draw it.
pub fn draw(title: &str, plan: &GpuPlan) -> Result<String, String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let gpu = plan.inputs.gpu_bytes as f64 / GIB;
    let n = plan.ranks.len();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let (area, legend) = root.split_horizontally(WIDTH - LEGEND);
        let mut chart = ChartBuilder::on(&area)
            .caption(title, ("sans-serif", 18))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(84)
            .build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0f64..gpu * 1.06)
            .map_err(|x| e(&x))?;
        let label = |x: &f64| {
            let i = x.round() as usize;
            let star = if i == plan.binding_rank && n > 1 {
                "*"
            } else {
                ""
            };
            format!("rank {i}{star}")
        };
        chart
            .configure_mesh()
            .x_desc("rank (* binds)")
            .y_desc("GiB")
            .x_labels(n.min(16))
            .x_label_formatter(&label)
            .y_label_formatter(&|v: &f64| format!("{v} GiB"))
            .disable_x_mesh()
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(|x| e(&x))?;
        for rank in 0..n {
            let x = rank as f64;
            let mut below = 0u64;
            for (_, bytes, color) in parts(plan, rank) {
                if bytes == 0 {
                    continue;
                }
                let (b, t) = (below as f64 / GIB, (below + bytes) as f64 / GIB);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x - 0.3, b), (x + 0.3, t)],
                        color.filled(),
                    )))
                    .map_err(|x| e(&x))?;
                below += bytes;
            }
        }
        chart
            .draw_series(DashedLineSeries::new(
                vec![(-0.5, gpu), (n as f64 - 0.5, gpu)],
                8,
                5,
                BLACK.stroke_width(2),
            ))
            .map_err(|x| e(&x))?;
        // The legend: the GPU line, then the parts from the top of the stack down, each with
        // the binding rank's bytes.
        let binding = parts(plan, plan.binding_rank);
        let gpu_label = format!("GPU {}", human_bytes(plan.inputs.gpu_bytes as usize));
        legend
            .draw(&PathElement::new(
                vec![(10, 78), (36, 78)],
                BLACK.stroke_width(3),
            ))
            .map_err(|x| e(&x))?;
        legend
            .draw(&Text::new(gpu_label, (44, 71), ("sans-serif", 15)))
            .map_err(|x| e(&x))?;
        let whose = format!("rank {}'s bytes:", plan.binding_rank);
        legend
            .draw(&Text::new(whose, (10, 97), ("sans-serif", 15)))
            .map_err(|x| e(&x))?;
        for (i, (name, bytes, color)) in binding.iter().rev().enumerate() {
            let top = 122 + 26 * i as i32;
            legend
                .draw(&Rectangle::new([(10, top), (36, top + 16)], color.filled()))
                .map_err(|x| e(&x))?;
            let text = format!("{name} {}", human_bytes(*bytes as usize));
            legend
                .draw(&Text::new(text, (44, top + 1), ("sans-serif", 15)))
                .map_err(|x| e(&x))?;
        }
        root.present().map_err(|x| e(&x))?;
    }
    Ok(svg)
}
