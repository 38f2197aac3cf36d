//! The SVG of `vm bench`: measured against predicted change per op.

use plotters::prelude::*;

use crate::export::palette::SERIES;

use crate::vm::bench::{BenchComparison, BenchReport};

/// The SVG: each clocksource row's measured Δ ns/op (with its interval) against the model's
/// predicted Δ, one colour per kernel, the line of agreement drawn.
pub fn svg(r: &BenchReport) -> crate::error::Result<String> {
    let err = |e: &dyn std::fmt::Debug| crate::failure!("{e:?}");
    let rows: Vec<&BenchComparison> = r
        .comparisons
        .iter()
        .filter(|c| {
            c.kind == crate::vm::bench::ComparisonKind::Clocksource
                && c.predicted_delta_ns.is_some()
        })
        .collect();
    let vals = rows.iter().flat_map(|c| {
        [
            c.predicted_delta_ns.unwrap_or(0.0),
            c.measured_delta_ns.lower,
            c.measured_delta_ns.upper,
        ]
    });
    let (lo, hi) = vals.fold((0.0f64, 1.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let pad = (hi - lo) * 0.08;
    let (lo, hi) = (lo - pad, hi + pad);
    let kernels = r.kernel_names();
    let mut svg = String::new();
    {
        let root = crate::export::svg::white_root(&mut svg, (900, 640))?;
        let title = format!(
            "Δ ns/op {} : measured (95% interval) against predicted{}",
            super::joined(&r.clocksources, " → "),
            if r.accel.emulation {
                " — TCG, emulated"
            } else {
                ""
            }
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(lo..hi, lo..hi)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("predicted Δ ns/op (model reads × Δ measured read cost)")
            .y_desc("measured Δ ns/op")
            .draw()
            .map_err(|e| err(&e))?;
        let grey = RGBColor(120, 120, 120);
        chart
            .draw_series(DashedLineSeries::new(
                [(lo, lo), (hi, hi)],
                6,
                4,
                grey.stroke_width(1),
            ))
            .map_err(|e| err(&e))?;
        for (i, k) in kernels.iter().enumerate() {
            let color = SERIES[i % SERIES.len()];
            let mine: Vec<&&BenchComparison> = rows
                .iter()
                .filter(|c| c.kernel_release.as_deref() == Some(k.as_str()))
                .collect();
            let pts: Vec<(f64, f64)> = mine
                .iter()
                .map(|c| {
                    (
                        c.predicted_delta_ns.unwrap_or(0.0),
                        c.measured_delta_ns.point,
                    )
                })
                .collect();
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))
                .map_err(|e| err(&e))?
                .label(k.as_str())
                .legend(move |(x, y)| Circle::new((x + 7, y), 4, color.filled()));
            for c in &mine {
                let x = c.predicted_delta_ns.unwrap_or(0.0);
                let m = &c.measured_delta_ns;
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(x, m.lower), (x, m.upper)],
                        color.stroke_width(2),
                    )))
                    .map_err(|e| err(&e))?;
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("{}/{}", c.workload, c.fs),
                        (x, m.point),
                        ("sans-serif", 11).into_font().color(&color),
                    )))
                    .map_err(|e| err(&e))?;
            }
        }
        crate::export::svg::legend_and_present(
            &mut chart,
            &root,
            SeriesLabelPosition::UpperLeft,
            0.85,
        )?;
    }
    Ok(svg)
}
