//! SVG charts with plotters. Each function returns the SVG text; nothing is measured here.

use plotters::prelude::*;

pub use super::bars::{costs, log_bars, Bar};
use super::palette::SERIES;
use crate::fmt::{duration_label, pct_label, thousands};

/// The smallest gain the sweep chart shows (0.1%): its y axis is logarithmic, so a setting that
/// buys nothing sits on the floor instead of off the chart.
const GAIN_FLOOR_PCT: f64 = 0.1;

/// A white drawing area of `size` pixels writing into `svg`: the set-up every chart shares.
pub(crate) fn white_root(
    svg: &mut String,
    size: (u32, u32),
) -> crate::error::Result<DrawingArea<SVGBackend<'_>, plotters::coord::Shift>> {
    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| crate::failure!("{e:?}"))?;
    Ok(root)
}

/// The series' legend at `position` on a white box (`opacity` of white) with a black border,
/// then the chart written out: the ending every chart shares.
pub(crate) fn legend_and_present<'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    root: &DrawingArea<SVGBackend<'a>, plotters::coord::Shift>,
    position: SeriesLabelPosition,
    opacity: f64,
) -> crate::error::Result<()> {
    let err = |e: &dyn std::fmt::Debug| crate::failure!("{e:?}");
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(opacity))
        .border_style(BLACK)
        .position(position)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

/// One line of the sweep chart: its legend, and its (cost, gain %) points.
type Curve = (String, Vec<(f64, f64)>);

/// The sweep chart's plotting area: the cost of a precise read against the gain, both on log
/// axes.
type SweepChart<'a> = ChartContext<'a, SVGBackend<'a>, Cartesian2d<LogCoord<f64>, LogCoord<f64>>>;

/// A plotters error as ours.
fn plot_err(e: &dyn std::fmt::Debug) -> crate::error::Error {
    crate::failure!("{e:?}")
}

/// Speedup of each model's best knob setting against the cost of a precise read: gain in % on
/// a log axis (1–10% gets a decade of its own), one line per OS model, the break-even gain
/// drawn and labelled, and this machine's measured cost marked once.
pub fn sweep(reports: &[crate::sim::result::SweepReport]) -> crate::error::Result<String> {
    let series = best_curves(reports);
    let here = reports.first().map(|r| r.costs.precise_read_ns);
    let break_even_pct = reports
        .first()
        .map_or(5.0, |r| (r.break_even_speedup - 1.0) * 100.0);
    let xs = || series.iter().flat_map(|s| s.1.iter().map(|p| p.0));
    let (x_lo, x_hi) = (xs().fold(f64::INFINITY, f64::min), xs().fold(0.0, f64::max));
    let (x_lo, x_hi) = if x_lo.is_finite() && x_hi > x_lo {
        (x_lo, x_hi)
    } else {
        (1.0, 10.0)
    };
    let y_hi = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.1))
        .fold(break_even_pct * 2.0, f64::max)
        * 2.0;
    let mut svg = String::new();
    {
        let root = white_root(&mut svg, (960, 560))?;
        let title = reports.first().map_or(String::new(), |r| {
            format!(
                "{}: what the best knob setting buys, against the cost of a precise read",
                r.scenario
            )
        });
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin_top(10)
            .margin_left(10)
            .margin_right(40)
            .margin_bottom(10)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d((x_lo..x_hi).log_scale(), (GAIN_FLOOR_PCT..y_hi).log_scale())
            .map_err(|e| plot_err(&e))?;
        chart
            .configure_mesh()
            .x_desc("cost of one precise read (clocksource / counter)")
            .y_desc("gain over the stock setting")
            .x_label_formatter(&|v| duration_label(*v))
            .y_label_formatter(&|v| pct_label(*v))
            .draw()
            .map_err(|e| plot_err(&e))?;
        draw_curves(&mut chart, &series)?;
        draw_break_even(&mut chart, (x_lo, x_hi), break_even_pct)?;
        if let Some(h) = here.filter(|h| *h >= x_lo && *h <= x_hi) {
            draw_here(&mut chart, h, y_hi)?;
        }
        legend_and_present(&mut chart, &root, SeriesLabelPosition::UpperLeft, 0.85)?;
    }
    Ok(svg)
}

/// For each model: the non-stock policy with the largest speedup at the end of the range, its
/// gain at every point (floored at [`GAIN_FLOOR_PCT`]); a model with no points or no such
/// policy has no curve.
fn best_curves(reports: &[crate::sim::result::SweepReport]) -> Vec<Curve> {
    let gain = |speedup: f64| ((speedup - 1.0) * 100.0).max(GAIN_FLOOR_PCT);
    let mut series: Vec<Curve> = Vec::new();
    for r in reports {
        let Some(last) = r.points.last() else {
            continue;
        };
        let best = last
            .estimates
            .iter()
            .filter(|e| e.policy != r.stock_policy)
            .max_by(|a, b| a.speedup.total_cmp(&b.speedup));
        let Some(best) = best else { continue };
        let pts: Vec<(f64, f64)> = r
            .points
            .iter()
            .filter_map(|p| {
                p.estimates
                    .iter()
                    .find(|e| e.policy == best.policy)
                    .map(|e| (p.value, gain(e.speedup)))
            })
            .collect();
        let never = pts.iter().all(|p| p.1 <= GAIN_FLOOR_PCT);
        let label = format!(
            "{}: {} vs {}{}",
            r.model,
            best.policy,
            r.stock_policy,
            if never {
                " (never gains: on the floor)"
            } else {
                ""
            }
        );
        series.push((label, pts));
    }
    series
}

/// One line per curve, with its legend entry; past the palette's colours, the lines take a
/// second and a third colour in turn.
fn draw_curves(chart: &mut SweepChart, series: &[Curve]) -> crate::error::Result<()> {
    for (i, (label, pts)) in series.iter().enumerate() {
        let color = SERIES[i % SERIES.len()];
        let palette = [color, RGBColor(214, 39, 40), RGBColor(140, 86, 75)];
        let color = palette[(i / SERIES.len()) % palette.len()];
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(|e| plot_err(&e))?
            .label(label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 15, y)], color.stroke_width(2))
            });
    }
    Ok(())
}

/// The break-even gain, drawn across from `x_lo` to `x_hi` and labelled at its left end.
fn draw_break_even(
    chart: &mut SweepChart,
    (x_lo, x_hi): (f64, f64),
    break_even_pct: f64,
) -> crate::error::Result<()> {
    let grey = RGBColor(90, 90, 90);
    chart
        .draw_series(DashedLineSeries::new(
            [(x_lo, break_even_pct), (x_hi, break_even_pct)],
            6,
            4,
            grey.stroke_width(1),
        ))
        .map_err(|e| plot_err(&e))?;
    chart
        .draw_series(std::iter::once(Text::new(
            format!("{break_even_pct:.0}% break-even"),
            (x_lo * 1.1, break_even_pct * 1.15),
            ("sans-serif", 13).into_font().color(&grey),
        )))
        .map_err(|e| plot_err(&e))?;
    Ok(())
}

/// This machine's cost `h`, once, as a vertical line up to `y_hi` with its label.
fn draw_here(chart: &mut SweepChart, h: f64, y_hi: f64) -> crate::error::Result<()> {
    let red = RGBColor(200, 30, 30);
    chart
        .draw_series(DashedLineSeries::new(
            [(h, GAIN_FLOOR_PCT), (h, y_hi)],
            4,
            3,
            red.stroke_width(1),
        ))
        .map_err(|e| plot_err(&e))?;
    chart
        .draw_series(std::iter::once(Text::new(
            format!("this machine: {}", crate::fmt::duration(h)),
            (h * 1.08, GAIN_FLOOR_PCT * 1.6),
            ("sans-serif", 13).into_font().color(&red),
        )))
        .map_err(|e| plot_err(&e))?;
    Ok(())
}

/// Total ops/s in each sample interval of each run of one workload.
pub fn workload(r: &crate::workload::RunReport) -> crate::error::Result<String> {
    let err = |e: &dyn std::fmt::Debug| crate::failure!("{e:?}");
    let dt = r.interval_s.max(1e-3);
    let n = r
        .runs
        .iter()
        .map(|x| x.samples.len())
        .max()
        .unwrap_or(0)
        .max(2);
    let y_hi = r
        .runs
        .iter()
        .flat_map(|x| x.samples.iter().copied())
        .fold(1.0, f64::max)
        * 1.15;
    let mut svg = String::new();
    {
        let root = white_root(&mut svg, (900, 420))?;
        let title = format!(
            "{}: ops/s in each {:.2} s interval",
            r.workload.as_str(),
            dt
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(0f64..(n as f64 * dt), 0f64..y_hi)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("seconds after warm-up")
            .y_desc("ops/s (all tasks)")
            .y_label_formatter(&|v| thousands(v.max(0.0).round() as u64))
            .draw()
            .map_err(|e| err(&e))?;
        for (i, run) in r.runs.iter().enumerate() {
            let color = SERIES[i % SERIES.len()];
            let pts: Vec<(f64, f64)> = run
                .samples
                .iter()
                .enumerate()
                .map(|(k, &y)| ((k as f64 + 1.0) * dt, y))
                .collect();
            let label = format!("{} task(s), {}", run.tasks, run.mode.as_str());
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 15, y)], color.stroke_width(2))
                });
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| err(&e))?;
        }
        legend_and_present(&mut chart, &root, SeriesLabelPosition::LowerRight, 0.8)?;
    }
    Ok(svg)
}
