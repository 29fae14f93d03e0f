//! `subsim report [FILE] --out FILE.html`: one self-contained HTML page of a run (no
//! network, no CDN): the timeline as SVG (each run's bar a `<g data-agent="ID">`), the
//! running count with the cap line, a time scrubber (`<input type="range" id="scrubber">`)
//! that shows the subagent panel (`id="panel"`) and `/tasks` as a person would see them at
//! that instant, and the narration beside it, linked both ways (a line sets the scrubber;
//! the scrubber marks the line).
//!
//! A scenario is untrusted input: every string from it is escaped — HTML-escaped where it
//! is written into the page, and `<`, `>`, `&` written as `\u003c`… inside the embedded
//! JSON — and the page's script only ever sets `textContent`.

use std::fmt::Write as _;
use subsim_engine::expect::Checker;
use subsim_engine::render::{Detail, NarrationOptions, TextWriter};
use subsim_engine::sink::{Discard, Tee};
use subsim_engine::{Event, SimTime, Simulation};
use subsim_rules::panel::{render_panel, render_tasks};

use crate::args::ReportArgs;
use crate::timeline::{json_string, Builder, Placer, State, Timeline};
use crate::{output, Status};

/// Most scrubber positions: each is one run of the scenario up to that instant.
const MAX_SAMPLES: usize = 240;
/// Most rows drawn; a load run's millions of runs are summarised instead.
const MAX_ROWS: usize = 400;
/// Most narration lines in the page; the rest are counted (`subsim run` prints them all).
const MAX_LINES: usize = 3_000;
/// Most events kept for the narration: every line is at least one event, so the first
/// [`MAX_LINES`] lines are among them whatever the detail groups.
const MAX_EVENTS: usize = 20 * MAX_LINES;

/// The first [`MAX_EVENTS`] events; the rest are counted.
#[derive(Default)]
struct Kept {
    events: Vec<Event>,
    more: u64,
}

impl subsim_engine::Sink for Kept {
    fn event(&mut self, event: &Event) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(event.clone());
        } else {
            self.more += 1;
        }
    }
}

pub fn report(args: ReportArgs) -> anyhow::Result<Status> {
    let loaded = crate::load::load_source(args.file.as_deref(), &args.source)?;
    let mut inputs: Vec<std::path::PathBuf> = args.file.iter().cloned().collect();
    inputs.extend(loaded.read_files.iter().cloned());
    output::refuse_inputs(&args.out, &inputs)?;
    let spec = loaded.spec;
    let seed = args.source.seed.unwrap_or(spec.session.seed);
    let simulation = |spec| Simulation::new(spec).with_seed(seed);
    // The timeline is built as the events come, and only the first events are kept for
    // the narration (of which the page shows MAX_LINES lines): a run of millions of
    // arrivals is drawn in bounded memory (it aborted).
    let mut builder = Builder::new(MAX_ROWS as u64);
    let mut kept = Kept::default();
    // The `expect:` block, checked on the same run: each failed entry is marked where it
    // happened (an imported session's departures from the documented behaviour).
    let mut checker = Checker::new(loaded.expect.clone());
    let mut placer = Placer::new(&loaded.expect);
    let report = simulation(spec.clone()).run(&mut Tee {
        first: &mut builder,
        second: &mut Tee {
            first: &mut kept,
            second: &mut Tee {
                first: &mut checker,
                second: &mut placer,
            },
        },
    });
    let mut timeline = builder.finish();
    let events = std::mem::take(&mut kept.events);
    timeline.departures = placer.departures(&checker.finish());
    if args.out.extension().is_some_and(|ext| ext == "svg") {
        // Only the picture: the timeline and the running strip, for docs and issues.
        let path = &args.out;
        output::write_file(path, &inputs, picture(&timeline).as_bytes())?;
        output::print(&format!("wrote {}\n", path.display()))?;
        return Ok(match report.limit {
            Some(_) => Status::LimitHit,
            None => Status::Ok,
        });
    }
    // The narration, brief, with the scenario's chapter headings.
    // Each line keeps its instant in whole µs (the clock shows ms): a click lands on the
    // exact instant, the scrubber's own.
    let written = Written::default();
    let mut writer = TextWriter::with_options(
        written.clone(),
        NarrationOptions {
            detail: Detail::Brief,
            chapters: loaded.narration.chapters.clone(),
            summary: false,
            ..NarrationOptions::default()
        },
    );
    let mut narration: Vec<(Option<u64>, String)> = Vec::new();
    let told = |at: Option<SimTime>, narration: &mut Vec<(Option<u64>, String)>| {
        for line in String::from_utf8_lossy(&written.take()).lines() {
            let at = clock_micros(line).and(at).map(SimTime::as_micros);
            narration.push((at, line.to_string()));
        }
    };
    let mut instant = None;
    for event in &events {
        if instant.is_some_and(|at| at != event.t) {
            writer.flush()?;
            told(instant, &mut narration);
        }
        instant = Some(event.t);
        subsim_engine::Sink::event(&mut writer, event);
    }
    writer.finish()?;
    told(instant, &mut narration);
    // The panel at each sample instant, from the engine's own panel (rules::panel).
    let samples = sample_times(&events, timeline.end);
    let mut views = Vec::with_capacity(samples.len());
    // A load run keeps no panel (and would be run again for every position): say so once.
    let keeps_panel = spec.load.is_none();
    for at in samples.iter().filter(|_| keeps_panel) {
        let (_, view) = simulation(spec.clone()).run_until(&mut Discard, SimTime(*at));
        views.push(match view {
            Some(view) => (render_panel(&view), render_tasks(&view)),
            None => (
                "(no panel: only interactive sessions without a load block keep one)\n".to_string(),
                "/tasks\n  (no panel in this session)\n".to_string(),
            ),
        });
    }
    if !keeps_panel {
        views.resize(
            samples.len(),
            (
                "(no panel: load runs keep none)\n".to_string(),
                "/tasks\n  (no panel in a load run)\n".to_string(),
            ),
        );
    }
    let page = page(&Page {
        name: &spec.name,
        description: spec.description.as_deref(),
        seed,
        timeline: &timeline,
        more_events: kept.more,
        narration: &narration,
        samples: &samples,
        views: &views,
    });
    let path = args.out.clone();
    output::write_file(&path, &inputs, page.as_bytes())?;
    output::print(&format!(
        "wrote {} ({}, {})\n",
        path.display(),
        output::counted(timeline.started, "run", "runs"),
        output::counted(
            samples.len() as u64,
            "scrubber position",
            "scrubber positions"
        )
    ))?;
    if let Some(limit) = &report.limit {
        crate::output::note(&format!("subsim: {limit}"));
        return Ok(Status::LimitHit);
    }
    Ok(Status::Ok)
}

/// The instants the scrubber offers: every instant something happened among the kept
/// events (evenly thinned to [`MAX_SAMPLES`]), in order, and 60 evenly spaced up to `end`,
/// the session's end (`EventKind::moves_the_end`, like the running chart): the panel's
/// bookkeeping after it is no instant of the session.
fn sample_times(events: &[Event], end: u64) -> Vec<u64> {
    let mut times: Vec<u64> = events
        .iter()
        .map(|event| event.t.as_micros())
        .filter(|at| *at <= end)
        .collect();
    // And 60 evenly spaced instants, so that the scrubber also moves through quiet times.
    times.extend((0..=60).map(|step| end * step / 60));
    times.sort_unstable();
    times.dedup();
    if times.len() <= MAX_SAMPLES {
        return times;
    }
    let last = times.len() - 1;
    (0..MAX_SAMPLES)
        .map(|index| times[index * last / (MAX_SAMPLES - 1)])
        .collect()
}

/// `text` for element content and quoted attributes of the page and the SVG: the
/// workspace's one XML/HTML escaper, [`subsim_escape::xml::text`] (markup escaped; U+0001,
/// U+000B, U+FFFE and the other characters XML 1.0 forbids shown as `\u{…}`, so the SVG stays
/// well-formed).
pub fn escape(text: &str) -> String {
    subsim_escape::xml::text(text).into_owned()
}

struct Page<'a> {
    name: &'a str,
    description: Option<&'a str>,
    seed: u64,
    timeline: &'a Timeline,
    more_events: u64,
    narration: &'a [(Option<u64>, String)],
    samples: &'a [u64],
    views: &'a [(String, String)],
}

/// The colours of the timeline, in words (the same colours as `pictures` draws).
const LEGEND: &str = concat!(
    r##"<div class="legend" id="legend">"##,
    r##"<span><i style="background:#2b7bb9"></i>running in the background</span>"##,
    r##"<span><i style="background:#6f42c1"></i>running in the foreground</span>"##,
    r##"<span><i style="background:#999"></i>main</span>"##,
    r##"<span><i style="background:#e0a800"></i>waiting on a prompt</span>"##,
    r##"<span><i style="background:#b8c7d9"></i>waiting for children or a shell</span>"##,
    r##"<span><i style="background:#e8e8e8"></i>queued (a load arrival rejected and retried)</span>"##,
    r##"<span style="color:#c0392b">× rejected spawn</span>"##,
    r##"<span style="color:#b8860b">? permission prompt</span>"##,
    r##"<span style="color:#2e8b57">• notification</span>"##,
    "</div>"
);

/// The narration's clock (`00:01:30.000`) in µs, for a narrated line.
fn clock_micros(line: &str) -> Option<u64> {
    let clock = line.get(..12)?;
    let bytes = clock.as_bytes();
    if bytes[2] != b':' || bytes[5] != b':' || bytes[8] != b'.' {
        return None;
    }
    let number = |range: std::ops::Range<usize>| clock.get(range)?.parse::<u64>().ok();
    Some(
        ((number(0..2)? * 60 + number(3..5)?) * 60 + number(6..8)?) * 1_000_000
            + number(9..12)? * 1_000,
    )
}

/// The timeline as SVG and the running strip as SVG, each with its height. `cursor`: the
/// scrubber's line, which only the interactive page moves (a static picture has none).
fn pictures(timeline: &Timeline, cursor: bool) -> (String, f64, String, f64) {
    let end = timeline.end.max(1);
    let rows: Vec<_> = timeline.rows.iter().take(MAX_ROWS).collect();
    let label_width = 150.0;
    let chart_width = 760.0;
    let row_height = 14.0;
    let x = |at: u64| label_width + chart_width * at as f64 / end as f64;
    let chart_height = rows.len() as f64 * row_height + 24.0;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg id="gantt" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="timeline: one row per run">"#,
        w = label_width + chart_width + 10.0,
        h = chart_height
    );
    // Time ticks.
    for tick in 0..=4 {
        let at = end * tick / 4;
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" y1="0" x2="{x:.1}" y2="{y}" stroke="#ddd"/><text x="{x:.1}" y="{ty}" font-size="10" text-anchor="middle" fill="#666">{t}</text>"##,
            x = x(at),
            y = chart_height - 14.0,
            ty = chart_height - 3.0,
            t = if at == 0 {
                "0s".to_string()
            } else {
                escape(&subsim_engine::time::human_duration(at))
            }
        );
    }
    for (index, row) in rows.iter().enumerate() {
        let y = index as f64 * row_height;
        let label = format!("{}{}", "\u{a0}\u{a0}".repeat(row.depth as usize), row.label);
        let _ = write!(
            svg,
            r##"<text x="4" y="{ty:.1}" font-size="11" fill="#222">{}</text>"##,
            escape(&label),
            ty = y + 11.0
        );
        let group = if index == 0 {
            r#"<g class="main">"#.to_string()
        } else {
            format!(
                r#"<g class="bar {mode}" data-agent="{id}" data-start="{start}">"#,
                mode = row.mode,
                id = escape(&row.id),
                start = row.spans.first().map_or(0, |span| span.from)
            )
        };
        svg.push_str(&group);
        let _ = write!(
            svg,
            "<title>{}</title>",
            escape(&format!(
                "{} ({}), {}, depth {}",
                row.label, row.id, row.mode, row.depth
            ))
        );
        for span in &row.spans {
            let colour = match (span.state, row.mode) {
                (State::Queued, _) => "#e8e8e8",
                (State::Prompt, _) => "#e0a800",
                (State::Waiting, _) => "#b8c7d9",
                (State::Running, "main") => "#999",
                (State::Running, "foreground") => "#6f42c1",
                (State::Running, _) => "#2b7bb9",
            };
            let height = if index == 0 { 3.0 } else { row_height - 4.0 };
            let _ = write!(
                svg,
                r#"<rect x="{:.2}" y="{:.1}" width="{:.2}" height="{height}" fill="{colour}" data-state="{}"/>"#,
                x(span.from),
                y + (row_height - height) / 2.0,
                (x(span.to) - x(span.from)).max(1.0),
                span.state.word()
            );
        }
        svg.push_str("</g>");
        for mark in &row.marks {
            let (shape, colour) = match mark.kind {
                "rejected" => ("×", "#c0392b"),
                "prompt" => ("?", "#b8860b"),
                _ => ("•", "#2e8b57"),
            };
            let _ = write!(
                svg,
                r#"<text class="mark {kind}" x="{:.2}" y="{:.1}" font-size="12" text-anchor="middle" fill="{colour}"><title>{}</title>{shape}</text>"#,
                x(mark.at),
                y + 11.0,
                escape(&format!(
                    "{} {}{}",
                    subsim_engine::time::human_duration(mark.at),
                    mark.text,
                    mark.rule
                        .map(|rule| format!(" ({rule})"))
                        .unwrap_or_default()
                )),
                kind = mark.kind
            );
        }
    }
    if timeline.rows.len() > MAX_ROWS || timeline.more_runs > 0 {
        let _ = write!(
            svg,
            r##"<text x="4" y="{:.1}" font-size="11" fill="#666">… {} more runs</text>"##,
            rows.len() as f64 * row_height + 11.0,
            (timeline.rows.len().saturating_sub(MAX_ROWS) as u64) + timeline.more_runs
        );
    }
    // Each departure where it happened, on its run's row (main's when the event names no
    // run), with its rule.
    for departure in &timeline.departures {
        let row = departure
            .agent
            .as_ref()
            .and_then(|id| rows.iter().position(|row| &row.id == id))
            .unwrap_or(0);
        let y = row as f64 * row_height;
        let at = x(departure.at.unwrap_or(end));
        let rule = departure.rule.unwrap_or("");
        let _ = write!(
            svg,
            r##"<g class="departure" data-rule="{rule}"><title>{}</title><line x1="{at:.2}" y1="{y:.1}" x2="{at:.2}" y2="{y2:.1}" stroke="#c0392b" stroke-width="2"/><text x="{tx:.2}" y="{ty:.1}" font-size="9" fill="#c0392b">⚑ {rule}</text></g>"##,
            escape(&format!(
                "departed from the documented behaviour{}{}: {}",
                departure
                    .at
                    .map(|at| format!(" at {}", SimTime(at)))
                    .unwrap_or_default(),
                if rule.is_empty() {
                    String::new()
                } else {
                    format!(" ({rule})")
                },
                departure.text
            )),
            y2 = y + row_height,
            tx = at + 2.0,
            ty = y + 9.0,
            rule = escape(rule),
        );
    }
    if cursor {
        let _ = write!(
            svg,
            r##"<line id="cursor" x1="{x:.1}" y1="0" x2="{x:.1}" y2="{h:.1}" stroke="#c0392b" stroke-width="1.5"/>"##,
            x = label_width,
            h = chart_height - 14.0
        );
    }
    svg.push_str("</svg>");
    // The running strip with the cap line.
    let strip_height = 80.0;
    let top = f64::from(timeline.cap.unwrap_or(0).max(timeline.peak()).max(1)) * 1.15;
    let y_of = |running: u32| strip_height - 4.0 - (strip_height - 8.0) * f64::from(running) / top;
    let mut points = format!("{:.2},{:.2}", x(0), y_of(0));
    let mut last = 0;
    for (at, running) in &timeline.running {
        let _ = write!(
            points,
            " {:.2},{:.2} {:.2},{:.2}",
            x(*at),
            y_of(last),
            x(*at),
            y_of(*running)
        );
        last = *running;
    }
    let _ = write!(points, " {:.2},{:.2}", x(end), y_of(last));
    let mut strip = format!(
        r##"<svg id="running" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{strip_height}" viewBox="0 0 {w} {strip_height}" role="img" aria-label="running subagents and the cap"><text x="4" y="{ry:.1}" font-size="11" fill="#222">running</text><text x="4" y="{py:.1}" font-size="10" fill="#666">peak {}</text><polyline fill="none" stroke="#2b7bb9" stroke-width="1.5" points="{points}"/>"##,
        timeline.peak(),
        w = label_width + chart_width + 10.0,
        ry = strip_height - 22.0,
        py = strip_height - 8.0,
    );
    if let Some(cap) = timeline.cap {
        let _ = write!(
            strip,
            r##"<line class="cap" x1="{:.1}" y1="{y:.2}" x2="{:.1}" y2="{y:.2}" stroke="#c0392b" stroke-dasharray="4 3"/><text x="{tx:.1}" y="{ty:.2}" font-size="10" text-anchor="end" fill="#c0392b">cap {cap}</text>"##,
            x(0),
            x(end),
            y = y_of(cap),
            tx = label_width - 4.0,
            ty = y_of(cap) + 4.0
        );
    }
    strip.push_str("</svg>");
    (svg, chart_height, strip, strip_height)
}

/// The timeline and the running strip as one standalone SVG picture (for docs).
pub fn picture(timeline: &Timeline) -> String {
    let (svg, chart_height, strip, strip_height) = pictures(timeline, false);
    let width = 150.0 + 760.0 + 10.0;
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h}" viewBox="0 0 {width} {h}" font-family="sans-serif"><rect width="100%" height="100%" fill="#fff"/>{gantt}<g transform="translate(0 {chart_height})">{strip}</g></svg>
"##,
        h = chart_height + strip_height,
        gantt = svg,
    )
}

fn page(page: &Page<'_>) -> String {
    let timeline = page.timeline;
    let end = timeline.end.max(1);
    let label_width = 150.0;
    let chart_width = 760.0;
    let (svg, _, strip, _) = pictures(timeline, true);
    // The narration, one item per line, each with its instant.
    let mut lines = String::new();
    let total = page.narration.len();
    for (index, (at, line)) in page.narration.iter().take(MAX_LINES).enumerate() {
        match at {
            Some(at) => {
                let _ = write!(
                    lines,
                    r#"<li id="line-{index}" data-t="{at}">{}</li>"#,
                    escape(line)
                );
            }
            None => {
                let _ = write!(lines, r#"<li class="heading">{}</li>"#, escape(line));
            }
        }
    }
    if page.more_events > 0 && total <= MAX_LINES {
        let _ = write!(
            lines,
            r#"<li class="heading">… the narration stops after the first {MAX_EVENTS} events ({} more): `subsim run` prints them all</li>"#,
            page.more_events
        );
    } else if total > MAX_LINES {
        let _ = write!(
            lines,
            r#"<li class="heading">… {} more lines: `subsim run` prints them all</li>"#,
            total - MAX_LINES
        );
    }
    // The data the script needs, as JSON (strings escaped for a <script> element).
    let mut data = String::from("{\"samples\":[");
    for (index, (at, (panel, tasks))) in page.samples.iter().zip(page.views).enumerate() {
        if index > 0 {
            data.push(',');
        }
        let _ = write!(
            data,
            "{{\"t\":{at},\"clock\":{},\"panel\":{},\"tasks\":{},\"running\":{}}}",
            json_string(&SimTime(*at).to_string()),
            json_string(if panel.is_empty() {
                "(no rows)\n"
            } else {
                panel
            }),
            json_string(tasks),
            timeline.running_at(*at)
        );
    }
    // Each duration drawn from a distribution, in the model's words (issue #32), for the
    // decision panel: what a clicked line or bar shows of where its numbers came from.
    data.push_str("],\"draws\":[");
    for (index, draw) in timeline.draws.iter().enumerate() {
        if index > 0 {
            data.push(',');
        }
        let _ = write!(
            data,
            "{{\"t\":{},\"until\":{},\"agent\":{},\"label\":{},\"from\":{},\"to\":{},\"text\":{}}}",
            draw.at,
            draw.until(),
            draw.agent.map_or("null".to_string(), |id| json_string(
                &subsim_engine::event::id_string(id)
            )),
            draw.label
                .as_deref()
                .map_or("null".to_string(), json_string),
            json_string(&SimTime(draw.at).to_string()),
            json_string(&SimTime(draw.until()).to_string()),
            json_string(&draw.text)
        );
    }
    let _ = write!(
        data,
        "],\"more_draws\":{},\"end\":{end},\"x0\":{label_width},\"width\":{chart_width}}}",
        timeline.more_draws
    );
    let description = page
        .description
        .map(|text| format!("<p class=\"description\">{}</p>", escape(text.trim())))
        .unwrap_or_default();
    format!(
        r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>subsim report: {title}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 16px; color: #222; }}
h1 {{ font-size: 18px; margin: 0 0 4px; }}
svg {{ display: block; }}
.meta, .description {{ color: #555; white-space: pre-wrap; margin: 4px 0; }}
.layout {{ display: flex; gap: 16px; align-items: flex-start; flex-wrap: wrap; }}
.left {{ flex: 1 1 560px; max-width: 920px; min-width: 0; }}
.right {{ flex: 1 1 300px; min-width: 0; }}
.left svg {{ width: 100%; height: auto; }}
.legend {{ display: flex; flex-wrap: wrap; gap: 4px 12px; margin: 4px 0; font-size: 12px; color: #444; }}
.legend i {{ display: inline-block; width: 12px; height: 10px; margin-right: 4px; vertical-align: -1px; }}
.because {{ color: #333; margin: 6px 0; }}
#narration {{ font: 12px/1.35 ui-monospace, monospace; max-height: 85vh; overflow: auto; margin: 0; padding-left: 0; list-style: none; border: 1px solid #ddd; }}
#narration li {{ padding: 1px 6px; cursor: pointer; white-space: pre-wrap; }}
#narration li.heading {{ font-weight: bold; cursor: default; background: #f4f4f4; }}
#narration li.past {{ color: #222; }}
#narration li.future {{ color: #aaa; }}
#narration li.current {{ background: #fff3cd; }}
pre {{ background: #f7f7f7; border: 1px solid #ddd; padding: 6px; margin: 4px 0; font-size: 12px; overflow: auto; }}
g.bar {{ cursor: pointer; }}
.hint {{ color: #666; font-size: 12px; margin: 4px 0; }}
#decision ul {{ margin: 4px 0; padding-left: 18px; font-size: 12px; }}
.scrub {{ display: flex; gap: 8px; align-items: center; margin: 6px 0; }}
#scrubber {{ width: 82.6%; margin-left: 16.3%; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p class="meta">seed {seed} · subsim {version} · Claude Code {claude} · {runs} · peak {peak} running{cap}</p>
{description}
<p class="because">{because}</p>
<div class="layout">
<div class="left">
{svg}
{legend}
{strip}
<div class="scrub"><input type="range" id="scrubber" min="0" max="{max}" value="0" step="1" aria-label="time"></div>
<p>At <span id="clock">00:00:00.000</span>, <span id="count">0</span> running</p>
<h2 style="font-size:14px;margin:8px 0 0">Decision</h2>
<div id="decision"><p class="hint">Click a narration line or a bar: what was decided, and each duration drawn from a distribution behind it.</p></div>
<h2 style="font-size:14px;margin:8px 0 0">Subagent panel</h2>
<pre id="panel"></pre>
<pre id="tasks"></pre>
</div>
<div class="right">
<h2 style="font-size:14px;margin:0 0 4px">Narration</h2>
<ol id="narration">{lines}</ol>
</div>
</div>
<script type="application/json" id="data">{data}</script>
<script>
"use strict";
const data = JSON.parse(document.getElementById("data").textContent);
const scrubber = document.getElementById("scrubber");
const items = Array.from(document.querySelectorAll("#narration li[data-t]"));
function sampleAt(t) {{
  let best = 0;
  for (let i = 0; i < data.samples.length; i++) {{ if (data.samples[i].t <= t) best = i; }}
  return best;
}}
function show(index) {{
  const sample = data.samples[index];
  if (!sample) return;
  document.getElementById("panel").textContent = sample.panel;
  document.getElementById("tasks").textContent = sample.tasks;
  document.getElementById("clock").textContent = sample.clock;
  document.getElementById("count").textContent = String(sample.running);
  const x = data.x0 + data.width * Math.min(sample.t, data.end) / data.end;
  const cursor = document.getElementById("cursor");
  cursor.setAttribute("x1", x.toFixed(1));
  cursor.setAttribute("x2", x.toFixed(1));
  let current = null;
  for (const item of items) {{
    const t = Number(item.dataset.t);
    item.classList.toggle("past", t <= sample.t);
    item.classList.toggle("future", t > sample.t);
    item.classList.remove("current");
    if (t <= sample.t) current = item;
  }}
  if (current) {{
    current.classList.add("current");
    const list = document.getElementById("narration");
    const top = current.offsetTop - list.offsetTop;
    if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - 20) list.scrollTop = top - 40;
  }}
}}
function jump(t) {{
  scrubber.value = String(sampleAt(t));
  show(Number(scrubber.value));
}}
// Does a narration line name the draw's run? (a name as a whole word; `main` for a retry)
function names(text, draw) {{
  const who = draw.label === null ? "main" : draw.label;
  const words = " " + text.replace(/[^\w.-]+/g, " ") + " ";
  return words.includes(" " + who + " ") || text.includes("…");
}}
// The decision panel: `head`, then each draw in the model's words, with when it ran.
function decide(head, draws, none) {{
  const box = document.getElementById("decision");
  box.replaceChildren();
  const line = document.createElement("p");
  line.textContent = head;
  box.appendChild(line);
  const note = document.createElement("p");
  note.className = "hint";
  if (!draws.length) {{
    note.textContent = data.draws.length ? none
      : "Nothing in this run was drawn from a distribution: every duration in it is fixed by the scenario.";
    box.appendChild(note);
    return;
  }}
  note.textContent = "Where its numbers came from:";
  box.appendChild(note);
  const list = document.createElement("ul");
  list.id = "draws";
  for (const draw of draws) {{
    const li = document.createElement("li");
    li.textContent = draw.text + " (" + draw.from + " → " + draw.to + ")";
    list.appendChild(li);
  }}
  box.appendChild(list);
  if (data.more_draws) {{
    const more = document.createElement("p");
    more.className = "hint";
    more.textContent = "… and " + data.more_draws + " later draws not kept in this page: `subsim run --detail full` says them all";
    box.appendChild(more);
  }}
}}
scrubber.addEventListener("input", () => show(Number(scrubber.value)));
for (const item of items) item.addEventListener("click", () => {{
  const t = Number(item.dataset.t);
  jump(t);
  // A draw leads to a line when what it timed starts or ends at the line's instant.
  decide(item.textContent, data.draws.filter((d) => (d.t === t || d.until === t) && names(item.textContent, d)),
    "No duration drawn from a distribution starts or ends here: the times of this decision are fixed by the scenario.");
}});
for (const bar of document.querySelectorAll("g.bar")) bar.addEventListener("click", () => {{
  jump(Number(bar.dataset.start));
  const title = bar.querySelector("title");
  decide(title ? title.textContent : bar.dataset.agent, data.draws.filter((d) => d.agent === bar.dataset.agent),
    "No duration of this run was drawn from a distribution: its times are fixed by the scenario.");
}});
show(0);
</script>
</body>
</html>
"##,
        title = escape(page.name),
        seed = page.seed,
        version = env!("CARGO_PKG_VERSION"),
        claude = escape(&timeline.version),
        runs = crate::output::counted(timeline.started, "run", "runs"),
        peak = timeline.peak(),
        cap = timeline
            .cap
            .map(|cap| format!(" (cap {cap})"))
            .unwrap_or_default(),
        max = page.samples.len().saturating_sub(1),
        because = escape(&timeline.because),
        legend = LEGEND,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
    }

    #[test]
    fn reads_the_narration_clock() {
        assert_eq!(clock_micros("00:01:30.250  main  x"), Some(90_250_000));
        assert_eq!(clock_micros("── 1. The cap ──"), None);
    }
}

/// Text a writer wrote, shared with whoever takes it out.
#[derive(Clone, Default)]
struct Written(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl Written {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

impl std::io::Write for Written {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
