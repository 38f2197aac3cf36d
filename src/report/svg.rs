//! SVG charts with plotters. Each function returns the SVG text; nothing is measured here.

use plotters::prelude::*;

use crate::probe::Profile;

/// One bar: a label and a value (ns) with an optional interval.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub series: usize,
    pub value: f64,
    pub lower: f64,
    pub upper: f64,
}

const SERIES: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];

/// Horizontal bars on a log axis, one row per label; `series` picks the colour and
/// `series_names` the legend.
pub fn log_bars(
    title: &str,
    x_label: &str,
    bars: &[Bar],
    series_names: &[&str],
) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let height = 80 + 18 * bars.len() as u32;
        let root = SVGBackend::with_string(&mut svg, (900, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e:?}"))?;
        let lo = bars
            .iter()
            .map(|b| b.lower.max(0.1))
            .fold(f64::INFINITY, f64::min)
            .min(1.0);
        let hi = bars.iter().map(|b| b.upper).fold(1.0, f64::max) * 2.0;
        let n = bars.len() as f64;
        let labels: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(190)
            .build_cartesian_2d((lo..hi).log_scale(), 0f64..n)
            .map_err(|e| anyhow::anyhow!("{e:?}"))?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_labels(bars.len() * 2 + 1)
            .y_label_formatter(&|v| {
                let i = (n - v - 0.5).round();
                if (n - v - 0.5 - i).abs() < 0.01 && i >= 0.0 {
                    labels.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .disable_y_mesh()
            .draw()
            .map_err(|e| anyhow::anyhow!("{e:?}"))?;
        for (s, name) in series_names.iter().enumerate() {
            let color = SERIES[s % SERIES.len()];
            let rows: Vec<(usize, &Bar)> = bars
                .iter()
                .enumerate()
                .filter(|(_, b)| b.series == s)
                .collect();
            chart
                .draw_series(rows.iter().map(|(i, b)| {
                    let y = n - *i as f64;
                    Rectangle::new(
                        [(lo, y - 0.85), (b.value.max(lo), y - 0.15)],
                        color.filled(),
                    )
                }))
                .map_err(|e| anyhow::anyhow!("{e:?}"))?
                .label(*name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled())
                });
            chart
                .draw_series(rows.iter().map(|(i, b)| {
                    let y = n - *i as f64 - 0.5;
                    PathElement::new(
                        vec![(b.lower.max(lo), y), (b.upper.max(lo), y)],
                        BLACK.stroke_width(1),
                    )
                }))
                .map_err(|e| anyhow::anyhow!("{e:?}"))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| anyhow::anyhow!("{e:?}"))?;
        root.present().map_err(|e| anyhow::anyhow!("{e:?}"))?;
    }
    Ok(svg)
}

/// Cost per source on a log axis, the vDSO and syscall paths of each clock paired.
pub fn costs(p: &Profile) -> anyhow::Result<String> {
    let mut bars = Vec::new();
    let mut push = |label: String, series: usize, id: &str| {
        if let Some(c) = p.cost_ns(id) {
            bars.push(Bar {
                label,
                series,
                value: c.point,
                lower: c.lower,
                upper: c.upper,
            });
        }
    };
    for id in [
        "rdtsc",
        "lfence_rdtsc",
        "rdtscp",
        "rdpid",
        "quanta:now",
        "std:instant",
    ] {
        push(id.to_string(), 2, id);
    }
    for c in crate::probe::Clock::ALL {
        push(
            format!("vdso:{}", c.name()),
            0,
            &format!("vdso:{}", c.name()),
        );
        push(
            format!("syscall:{}", c.name()),
            1,
            &format!("syscall:{}", c.name()),
        );
    }
    push("vdso:gettimeofday".into(), 0, "vdso:gettimeofday");
    push("syscall:gettimeofday".into(), 1, "syscall:gettimeofday");
    push("cpuid".into(), 3, "cpuid");
    push("syscall:getppid".into(), 3, "syscall:getppid");
    log_bars(
        "Cost per call (ns, log scale; whiskers: 95% interval)",
        "ns per call",
        &bars,
        &[
            "vDSO (libc)",
            "raw syscall",
            "counter / library",
            "reference",
        ],
    )
}
