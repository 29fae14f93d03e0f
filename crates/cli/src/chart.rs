//! The SVG chart of a sweep (`--format svg`), drawn with plotters' SVG backend: the
//! simulated statistic of each point's `replica = all` row against the first swept value,
//! with its 95 % interval as bars, and the analytic curve (Erlang B or the Erlang C mean
//! wait) where the model applies. Blocking is drawn, or the mean wait when the sweep's
//! runs waited (retry policies). The curve is drawn first and the simulated points as dots
//! on it, so where they agree both stay visible; a swept value of whole numbers (a cap) is
//! labelled as whole numbers.
//!
//! On a cap axis, with the offered load known (the `offered_load` column), the analytic
//! curve is drawn at every whole cap across the axis, not only through the swept points. A
//! chart of waits also draws p95 and p99 with their intervals across replicas, and the
//! pick of `--target` (or `subsim capacity`) is marked, settled or not.
//!
//! Text is written as SVG `<text>` elements, laid out with plotters' built-in estimate, so
//! no font files or system font libraries are needed.

use plotters::prelude::*;
use subsim_engine::erlang;

/// Chart size, px.
const SIZE: (u32, u32) = (800, 500);

/// One simulated point: `(x, mean, lo, hi, theory)`.
type Point = (f64, f64, f64, f64, Option<f64>);

/// One line of the chart: its label, its points, the p95 and p99 points of waits, and the
/// offered load and mean run time (s) that the analytic curve is drawn from.
struct Series {
    key: String,
    points: Vec<Point>,
    tails: [Vec<Point>; 2],
    load: Option<f64>,
    mean_run: Option<f64>,
}

/// The axis title of a swept path: the cap's environment variable in words.
fn axis_title(path: &str) -> String {
    if path == subsim_scenario::CAP_PATH {
        "cap (concurrent subagents, CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS)".to_string()
    } else {
        path.to_string()
    }
}

/// What the chart draws: the statistic, its analytic column, the caption's and the y
/// axis's words. A `--target` statistic is drawn (with its bound); otherwise blocking, or
/// the mean wait when the runs waited.
fn pick_metric(target: Option<&str>, waits: bool) -> (&str, Option<&'static str>, &str, String) {
    let default = if waits { "wait_mean" } else { "blocking" };
    match target.unwrap_or(default) {
        "blocking" => (
            "blocking",
            Some("erlang_b"),
            "blocking",
            "blocking: share of arrivals rejected by the cap".to_string(),
        ),
        "wait_mean" => (
            "wait_mean",
            Some("erlang_wait"),
            "mean wait",
            "mean wait, s (first request → start)".to_string(),
        ),
        metric => (metric, None, metric, metric.replace('_', " ")),
    }
}

/// Draws the chart of a sweep table; `target` (a statistic and its bound, from `sweep
/// --target`) is drawn as a dashed line across the chart.
pub fn render(
    header: &[String],
    rows: &[Vec<String>],
    target: Option<(&str, f64)>,
    pick: Option<(f64, bool)>,
) -> anyhow::Result<String> {
    let column = |name: &str| header.iter().position(|known| known == name);
    let replica = column("replica").ok_or_else(|| anyhow::anyhow!("not a sweep table"))?;
    if replica == 0 {
        anyhow::bail!("a chart needs a swept value: give --set PATH=VALUES");
    }
    let number = |row: &Vec<String>, index: Option<usize>| {
        index.and_then(|index| row.get(index)?.parse::<f64>().ok())
    };
    let aggregated: Vec<&Vec<String>> = rows.iter().filter(|row| row[replica] == "all").collect();
    let waits = aggregated
        .iter()
        .any(|row| number(row, column("delayed")).is_some_and(|delayed| delayed > 0.0));
    let (metric, theory, title, label) = pick_metric(target.map(|(metric, _)| metric), waits);
    let (mean, lo, hi, analytic) = (
        column(metric),
        column(&format!("{metric}_lo")),
        column(&format!("{metric}_hi")),
        theory.and_then(column),
    );
    let mut series: Vec<Series> = Vec::new();
    let wait_chart = metric == "wait_mean";
    let point_of = |row: &Vec<String>, x: f64, name: &str, theory: Option<f64>| {
        let y = number(row, column(name));
        y.map(|y| {
            (
                x,
                y,
                number(row, column(&format!("{name}_lo"))).unwrap_or(y),
                number(row, column(&format!("{name}_hi"))).unwrap_or(y),
                theory,
            )
        })
    };
    for row in &aggregated {
        let Some(x) = number(row, Some(0)) else {
            anyhow::bail!(
                "the chart's x axis is the first --set ({}), whose value `{}` is not a number; \
                 put a numeric --set first",
                header[0],
                row[0]
            );
        };
        let key: Vec<String> = (1..replica)
            .map(|index| format!("{}={}", header[index], row[index]))
            .collect();
        let key = key.join(", ");
        let y = number(row, mean).unwrap_or(0.0);
        let point = (
            x,
            y,
            number(row, lo).unwrap_or(y),
            number(row, hi).unwrap_or(y),
            number(row, analytic),
        );
        let index = match series.iter().position(|known| known.key == key) {
            Some(index) => index,
            None => {
                series.push(Series {
                    key,
                    points: Vec::new(),
                    tails: [Vec::new(), Vec::new()],
                    load: None,
                    mean_run: None,
                });
                series.len() - 1
            }
        };
        let line = &mut series[index];
        line.points.push(point);
        if wait_chart {
            for (tail, name) in line.tails.iter_mut().zip(["wait_p95", "wait_p99"]) {
                tail.extend(point_of(row, x, name, None));
            }
        }
        let load = number(row, column("offered_load"));
        line.load = line.load.or(load);
        // The mean run time, back from the Erlang C mean wait: W = C(c, A) / (c − A) · run.
        if let (Some(load), Some(wait), Some(c)) = (
            load,
            number(row, column("erlang_wait")),
            number(row, column("erlang_c")),
        ) {
            if c > 0.0 && x > load {
                line.mean_run = line.mean_run.or(Some(wait * (x - load) / c));
            }
        }
    }
    if series.is_empty() {
        anyhow::bail!("the sweep has no points to draw");
    }
    for line in &mut series {
        line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        for tail in &mut line.tails {
            tail.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
    let all = series
        .iter()
        .flat_map(|line| line.points.iter().chain(line.tails.iter().flatten()));
    let (mut x_min, mut x_max, mut y_max) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y, _, hi, theory) in all {
        x_min = x_min.min(x);
        x_max = x_max.max(x);
        y_max = y_max.max(y).max(hi).max(theory.unwrap_or(0.0));
    }
    // The end points (dots and interval bars) are drawn whole: half a step of room (or 4 %
    // of the range) either side, not on the frame.
    let whole = series
        .iter()
        .flat_map(|line| line.points.iter())
        .all(|&(x, ..)| x.fract() == 0.0);
    let steps = (x_max - x_min).round() as usize + 1;
    let pad = if x_min == x_max {
        1.0
    } else if whole && steps <= 21 {
        0.5
    } else {
        (x_max - x_min) * 0.04
    };
    // On a cap axis the curve is drawn at every whole cap from the first swept one to the
    // last (at most 10,000 of them), from the offered load.
    let cap_axis = header[0] == subsim_scenario::CAP_PATH && whole;
    let curves: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|line| {
            let every_cap = match (cap_axis, line.load, theory) {
                (true, Some(load), Some("erlang_b")) if x_max - x_min <= 10_000.0 => Some(
                    whole_caps(x_min, x_max)
                        .map(|cap| (f64::from(cap), erlang::erlang_b(cap, load)))
                        .collect(),
                ),
                (true, Some(load), Some("erlang_wait")) if x_max - x_min <= 10_000.0 => {
                    line.mean_run.map(|run| {
                        whole_caps(x_min, x_max)
                            .filter(|cap| f64::from(*cap) > load)
                            .map(|cap| {
                                (
                                    f64::from(cap),
                                    erlang::mean_wait_holding_times(cap, load) * run,
                                )
                            })
                            .collect()
                    })
                }
                _ => None,
            };
            every_cap.unwrap_or_else(|| {
                line.points
                    .iter()
                    .filter_map(|&(x, _, _, _, theory)| Some((x, theory?)))
                    .collect()
            })
        })
        .collect();
    for curve in &curves {
        for &(_, y) in curve {
            if y.is_finite() {
                y_max = y_max.max(y);
            }
        }
    }
    let (x_min, x_max) = (x_min - pad, x_max + pad);
    if let Some((_, bound)) = target {
        y_max = y_max.max(bound);
    }
    let y_max = if y_max > 0.0 { y_max * 1.08 } else { 1.0 };
    let x_title = axis_title(&header[0]);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{title} against {x_title}"), ("sans-serif", 16))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(x_min..x_max, 0.0..y_max)
            .map_err(draw_error)?;
        // A swept cap (or count) is labelled 20, 21, … rather than 20.0, 21.0, …, and only
        // at the swept values (not at the padding).
        let whole_label = |x: &f64| {
            if x.fract() == 0.0 {
                format!("{x:.0}")
            } else {
                String::new()
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(x_title.as_str()).y_desc(label.as_str());
        if whole && steps <= 21 {
            mesh.x_labels(steps + 2).x_label_formatter(&whole_label);
        }
        mesh.draw().map_err(draw_error)?;
        if let Some((metric, bound)) = target {
            let line = RED.mix(0.8);
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x_min, bound), (x_max, bound)],
                    8,
                    5,
                    line.stroke_width(2),
                ))
                .map_err(draw_error)?
                .label(format!("target: {metric} < {bound}"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], line.stroke_width(2))
                });
        }
        if let Some((x, settled)) = pick {
            let line = BLUE.mix(0.7);
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x, 0.0), (x, y_max)],
                    4,
                    4,
                    line.stroke_width(2),
                ))
                .map_err(draw_error)?
                .label(format!(
                    "{} {}",
                    if settled {
                        "settled pick:"
                    } else {
                        "pick, not settled:"
                    },
                    short_number(x)
                ))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], line.stroke_width(2))
                });
        }
        for (index, (line, curve)) in series.iter().zip(curves).enumerate() {
            let color = Palette99::pick(index).to_rgba();
            if !curve.is_empty() {
                let pen = BLACK.mix(0.45);
                chart
                    .draw_series(LineSeries::new(
                        curve.into_iter().filter(|(_, y)| y.is_finite()),
                        pen.stroke_width(3),
                    ))
                    .map_err(draw_error)?
                    .label(if waits {
                        "Erlang C mean wait"
                    } else {
                        "Erlang B"
                    })
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], pen.stroke_width(3))
                    });
            }
            let name = if line.key.is_empty() {
                format!("simulated {title}, 95 % interval")
            } else {
                format!("simulated {title} ({})", line.key)
            };
            chart
                .draw_series(line.points.iter().map(|&(x, y, lo, hi, _)| {
                    ErrorBar::new_vertical(x, lo, y, hi, color.stroke_width(2), 10)
                }))
                .map_err(draw_error)?;
            chart
                .draw_series(
                    line.points
                        .iter()
                        .map(|&(x, y, ..)| Circle::new((x, y), 4, color.filled())),
                )
                .map_err(draw_error)?
                .label(name)
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, color.filled()));
            for (tail, (label, shade)) in line
                .tails
                .iter()
                .zip([("wait p95", 0.75), ("wait p99", 0.5)])
            {
                if tail.is_empty() {
                    continue;
                }
                let tint = color.mix(shade);
                chart
                    .draw_series(tail.iter().map(|&(x, y, lo, hi, _)| {
                        ErrorBar::new_vertical(x, lo, y, hi, tint.stroke_width(1), 8)
                    }))
                    .map_err(draw_error)?;
                chart
                    .draw_series(LineSeries::new(
                        tail.iter().map(|&(x, y, ..)| (x, y)),
                        tint.stroke_width(1),
                    ))
                    .map_err(draw_error)?;
                let key = if line.key.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", line.key)
                };
                chart
                    .draw_series(
                        tail.iter()
                            .map(|&(x, y, ..)| TriangleMarker::new((x, y), 5, tint.filled())),
                    )
                    .map_err(draw_error)?
                    .label(format!("simulated {label}{key}, 95 % interval"))
                    .legend(move |(x, y)| TriangleMarker::new((x + 10, y), 5, tint.filled()));
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    svg.push('\n');
    Ok(svg)
}

/// The whole caps (at least 1) from `from` to `to`.
fn whole_caps(from: f64, to: f64) -> impl Iterator<Item = u32> {
    let first = from.ceil().max(1.0) as u32;
    let last = to.floor().max(0.0) as u32;
    first..=last
}

/// A number for a label: whole numbers without decimals.
fn short_number(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

fn draw_error<E: std::fmt::Debug>(error: E) -> anyhow::Error {
    anyhow::anyhow!("cannot draw the chart: {error:?}")
}
