//! `costs.svg`: what each timestamp source costs, as horizontal bars on a log axis. Costs span
//! decades (a TSC read in ns, a trapped one or a syscall in µs), so the axis is logarithmic
//! with SI labels (`10 ns`, `1 µs`), each bar carries its value at its end, and the legend sits
//! in its own strip above the plot, where no bar can run under it.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::palette::SERIES;
use crate::fmt::duration_label;
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

/// The chart's width in pixels.
const WIDTH: u32 = 960;
/// The strip above the plot: the caption, then the legend.
const HEADER: u32 = 64;

/// A sans-serif font of `size` px whose text starts at its point, centred vertically.
fn left_middle(size: u32) -> TextStyle<'static> {
    TextStyle::from(("sans-serif", size).into_font()).pos(Pos::new(HPos::Left, VPos::Center))
}

/// The decade at or below `v` (and at or above it, `up`): the log axis starts and ends on one.
fn decade(v: f64, up: bool) -> f64 {
    let e = v.log10();
    10f64.powf(if up { e.ceil() } else { e.floor() })
}

/// Horizontal bars on a log axis, one row per label; `series` picks the colour and
/// `series_names` the legend (drawn above the plot).
pub fn log_bars(
    title: &str,
    x_label: &str,
    bars: &[Bar],
    series_names: &[&str],
) -> crate::error::Result<String> {
    let err = |e: &dyn std::fmt::Debug| crate::failure!("{e:?}");
    let positive = |v: f64| v.is_finite() && v > 0.0;
    let lo = bars
        .iter()
        .flat_map(|b| [b.lower, b.value])
        .filter(|v| positive(*v))
        .fold(f64::INFINITY, f64::min);
    let lo = if lo.is_finite() {
        decade(lo, false)
    } else {
        1.0
    };
    // Room right of the longest bar for its value label: at least 4× (0.6 of a decade).
    let top = bars
        .iter()
        .flat_map(|b| [b.upper, b.value])
        .filter(|v| positive(*v))
        .fold(lo * 10.0, f64::max);
    let hi = decade(top * 4.0, true);
    let n = bars.len() as f64;
    let height = HEADER + 70 + 20 * bars.len() as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (head, body) = root.split_vertically(HEADER);
        head.draw(&Text::new(
            title.to_string(),
            (10, 10),
            ("sans-serif", 18).into_font(),
        ))
        .map_err(|e| err(&e))?;
        let mut x = 10i32;
        for (s, name) in series_names.iter().enumerate() {
            let color = SERIES[s % SERIES.len()];
            head.draw(&Rectangle::new([(x, 40), (x + 12, 52)], color.filled()))
                .map_err(|e| err(&e))?;
            head.draw(&Text::new(name.to_string(), (x + 18, 46), left_middle(14)))
                .map_err(|e| err(&e))?;
            x += 18 + 8 * name.chars().count() as i32 + 28;
        }
        let labels: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
        let mut chart = ChartBuilder::on(&body)
            .margin_left(10)
            .margin_right(30)
            .margin_bottom(10)
            .x_label_area_size(45)
            .y_label_area_size(200)
            .build_cartesian_2d((lo..hi).log_scale(), 0f64..n)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .x_label_formatter(&|v| duration_label(*v))
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
            .map_err(|e| err(&e))?;
        let clamp = |v: f64| v.clamp(lo, hi);
        for (s, _) in series_names.iter().enumerate() {
            let color = SERIES[s % SERIES.len()];
            let rows: Vec<(usize, &Bar)> = bars
                .iter()
                .enumerate()
                .filter(|(_, b)| b.series == s)
                .collect();
            chart
                .draw_series(rows.iter().map(|(i, b)| {
                    let y = n - *i as f64;
                    Rectangle::new([(lo, y - 0.85), (clamp(b.value), y - 0.15)], color.filled())
                }))
                .map_err(|e| err(&e))?;
            chart
                .draw_series(rows.iter().map(|(i, b)| {
                    let y = n - *i as f64 - 0.5;
                    PathElement::new(
                        vec![(clamp(b.lower), y), (clamp(b.upper), y)],
                        BLACK.stroke_width(1),
                    )
                }))
                .map_err(|e| err(&e))?;
            chart
                .draw_series(rows.iter().map(|(i, b)| {
                    let y = n - *i as f64 - 0.5;
                    Text::new(
                        duration_label(b.value),
                        (clamp(b.upper.max(b.value) * 1.12), y),
                        left_middle(11),
                    )
                }))
                .map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

/// Cost per source on a log axis, the vDSO and syscall paths of each clock paired.
pub fn costs(p: &Profile) -> crate::error::Result<String> {
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
    let title = if p.emulate_trap {
        "Cost per call (log scale; whiskers: 95% interval; RDTSC trapped by --emulate-trap)"
    } else {
        "Cost per call (log scale; whiskers: 95% interval)"
    };
    log_bars(
        title,
        "time per call",
        &bars,
        &[
            "vDSO (libc)",
            "raw syscall",
            "counter / library",
            "reference",
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every text element of `svg` with its position and anchor.
    fn texts(svg: &str) -> Vec<(String, f64, f64, String, f64)> {
        let doc = roxmltree::Document::parse(svg).expect("SVG is XML");
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| {
                let num = |a: &str| n.attribute(a).and_then(|v| v.parse().ok()).unwrap_or(0.0);
                (
                    n.text().unwrap_or("").trim().to_string(),
                    num("x"),
                    num("y"),
                    n.attribute("text-anchor").unwrap_or("start").to_string(),
                    num("font-size"),
                )
            })
            .collect()
    }

    #[test]
    fn costs_chart_is_readable_and_nothing_is_clipped() {
        let text = include_str!("../../tests/data/profile-kvm-xeon.json");
        let mut p: Profile = serde_json::from_str(text).expect("the test profile parses");
        for trapped in [false, true] {
            if trapped {
                // A trapped RDTSC: three decades above the rest, as under --emulate-trap.
                p.emulate_trap = true;
                for s in p.sources.iter_mut().filter(|s| s.id.starts_with("rdtsc")) {
                    if let Some(c) = s.cost_ns.as_mut() {
                        (c.point, c.lower, c.upper) = (10_865.0, 10_500.0, 11_200.0);
                    }
                }
            }
            let svg = costs(&p).unwrap();
            let t = texts(&svg);
            let has = |s: &str| t.iter().any(|x| x.0 == s);
            for legend in [
                "vDSO (libc)",
                "raw syscall",
                "counter / library",
                "reference",
            ] {
                assert!(has(legend), "legend {legend}: {t:?}");
            }
            assert!(has("vdso:monotonic") && has("syscall:getppid"), "{t:?}");
            assert!(has("time per call"), "axis title: {t:?}");
            assert!(
                t.iter().any(|x| x.0.ends_with(" ns")) && t.iter().any(|x| x.0.ends_with(" µs")),
                "SI axis and value labels: {t:?}"
            );
            assert!(!t
                .iter()
                .any(|x| x.0.contains('e') && x.0.parse::<f64>().is_ok()));
            // Nothing drawn past the canvas: a left-anchored label fits in the width at ~0.6 em
            // per character, a right-anchored one starts inside it.
            let doc_h: f64 = {
                let d = roxmltree::Document::parse(&svg).unwrap();
                d.root_element()
                    .attribute("height")
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            for (s, x, y, anchor, size) in &t {
                let w = 0.6 * size * s.chars().count() as f64;
                let (left, right) = match anchor.as_str() {
                    "end" => (x - w, *x),
                    "middle" => (x - w / 2.0, x + w / 2.0),
                    _ => (*x, x + w),
                };
                assert!(
                    left >= -1.0 && right <= f64::from(WIDTH) + 1.0,
                    "'{s}' at x={x} ({anchor}) runs off the {WIDTH}-px width (trapped: {trapped})"
                );
                assert!(*y >= 0.0 && *y <= doc_h, "'{s}' at y={y} is off the canvas");
            }
            if trapped {
                assert!(t.iter().any(|x| x.0.contains("--emulate-trap")), "{t:?}");
                assert!(has("10.9 µs"), "the trapped read's value: {t:?}");
            }
            render_is_not_blank(&svg);
        }
    }

    /// With rsvg-convert installed: the SVG renders to a PNG with more than one colour.
    fn render_is_not_blank(svg: &str) {
        let ok = std::process::Command::new("rsvg-convert")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            eprintln!("skipped: rsvg-convert is not installed");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let (svg_path, png_path) = (dir.path().join("c.svg"), dir.path().join("c.png"));
        std::fs::write(&svg_path, svg).unwrap();
        let st = std::process::Command::new("rsvg-convert")
            .arg("-o")
            .arg(&png_path)
            .arg(&svg_path)
            .status()
            .unwrap();
        assert!(st.success());
        let decoder = png::Decoder::new(std::fs::File::open(&png_path).unwrap());
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        let px = &buf[..info.buffer_size()];
        let step = info.color_type.samples();
        let first = &px[..step];
        assert!(
            px.chunks(step).any(|c| c != first),
            "costs.svg renders blank"
        );
    }
}
