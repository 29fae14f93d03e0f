//! The SVG chart of a sweep (`--format svg`), drawn with plotters' SVG backend: the
//! simulated statistic of each point's `replica = all` row against the first swept value,
//! with its 95 % interval as bars, and the analytic curve (Erlang B or the Erlang C mean
//! wait) where the model applies. Blocking is drawn, or the mean wait when the sweep's
//! runs waited (retry policies).
//!
//! Text is written as SVG `<text>` elements, laid out with plotters' built-in estimate, so
//! no font files or system font libraries are needed.

use plotters::prelude::*;

/// Chart size, px.
const SIZE: (u32, u32) = (800, 500);

/// One line of the chart: its label and its points `(x, mean, lo, hi, theory)`.
type Series = (String, Vec<(f64, f64, f64, f64, Option<f64>)>);

/// Draws the chart of a sweep table.
pub fn render(header: &[String], rows: &[Vec<String>]) -> anyhow::Result<String> {
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
    let (metric, theory, label) = if waits {
        (
            "wait_mean",
            "erlang_wait",
            "mean wait, s (first request → start)",
        )
    } else {
        (
            "blocking",
            "erlang_b",
            "blocking (share of arrivals rejected by the cap)",
        )
    };
    let (mean, lo, hi, analytic) = (
        column(metric),
        column(&format!("{metric}_lo")),
        column(&format!("{metric}_hi")),
        column(theory),
    );
    let mut series: Vec<Series> = Vec::new();
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
        match series.iter_mut().find(|(known, _)| *known == key) {
            Some((_, points)) => points.push(point),
            None => series.push((key, vec![point])),
        }
    }
    if series.is_empty() {
        anyhow::bail!("the sweep has no points to draw");
    }
    for (_, points) in &mut series {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let all = series.iter().flat_map(|(_, points)| points.iter());
    let (mut x_min, mut x_max, mut y_max) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y, _, hi, theory) in all {
        x_min = x_min.min(x);
        x_max = x_max.max(x);
        y_max = y_max.max(y).max(hi).max(theory.unwrap_or(0.0));
    }
    if x_min == x_max {
        x_min -= 1.0;
        x_max += 1.0;
    }
    let y_max = if y_max > 0.0 { y_max * 1.08 } else { 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{label} against {}", header[0]), ("sans-serif", 18))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(x_min..x_max, 0.0..y_max)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_desc(header[0].as_str())
            .y_desc(metric)
            .draw()
            .map_err(draw_error)?;
        for (index, (key, points)) in series.iter().enumerate() {
            let color = Palette99::pick(index).to_rgba();
            let name = if key.is_empty() {
                "simulated, 95 % interval".to_string()
            } else {
                format!("simulated ({key})")
            };
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|&(x, y, ..)| (x, y)),
                    color.stroke_width(2),
                ))
                .map_err(draw_error)?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            chart
                .draw_series(points.iter().map(|&(x, y, lo, hi, _)| {
                    ErrorBar::new_vertical(x, lo, y, hi, color.filled(), 8)
                }))
                .map_err(draw_error)?;
            let theory: Vec<(f64, f64)> = points
                .iter()
                .filter_map(|&(x, _, _, _, theory)| Some((x, theory?)))
                .collect();
            if !theory.is_empty() {
                let dashed = BLACK.mix(0.6);
                chart
                    .draw_series(DashedLineSeries::new(theory, 6, 4, dashed.stroke_width(1)))
                    .map_err(draw_error)?
                    .label(if waits {
                        "Erlang C mean wait"
                    } else {
                        "Erlang B"
                    })
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], dashed));
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

fn draw_error<E: std::fmt::Debug>(error: E) -> anyhow::Error {
    anyhow::anyhow!("cannot draw the chart: {error:?}")
}
