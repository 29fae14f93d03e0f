//! Timelines of a run: the model (one row per agent, its running and waiting spans,
//! rejections, the running count) read from the trace, and two renderings of it:
//! `--format gantt` (text for a terminal or an issue) and `--format chrome` (Chrome Trace
//! Event JSON for ui.perfetto.dev and chrome://tracing). `report.rs` draws the same model
//! as SVG.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use subsim_engine::runmodel::{self, RunModel};
use subsim_engine::{Event, Sink};
use subsim_escape::terminal;

/// What a stretch of a row shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// A load arrival waiting for its first start: rejected and retried (`load.retry`), or
    /// in the `retry: queue` line.
    Queued,
    /// Running its steps.
    Running,
    /// Blocked on a permission prompt.
    Prompt,
    /// Done with its steps, waiting for its children or shells.
    Waiting,
}

impl State {
    /// The word used in legends, SVG classes and Chrome event names.
    pub fn word(self) -> &'static str {
        match self {
            State::Queued => "queued",
            State::Running => "running",
            State::Prompt => "waiting on a prompt",
            State::Waiting => "waiting for children",
        }
    }
}

/// One stretch of one row, `[from, to)` in µs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// Start.
    pub from: u64,
    /// End (the end of the run for a span still open then).
    pub to: u64,
    /// What the run was doing.
    pub state: State,
    /// The rule that cited the change into this state, if any.
    pub rule: Option<&'static str>,
}

/// A mark on a row at one instant: a rejection, a prompt, a notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// When.
    pub at: u64,
    /// `rejected`, `prompt` or `notification`.
    pub kind: &'static str,
    /// In words.
    pub text: String,
    /// The rule that decided.
    pub rule: Option<&'static str>,
}

/// One agent's row (main is row 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The trace id (`main`, `a3`).
    pub id: String,
    /// Name or id.
    pub label: String,
    /// The launcher's trace id (`main` for main itself).
    pub parent: String,
    /// Depth (main = 0).
    pub depth: u32,
    /// `foreground` or `background` (main: `main`).
    pub mode: &'static str,
    /// Its stretches, in time order.
    pub spans: Vec<Span>,
    /// Its marks, in time order.
    pub marks: Vec<Mark>,
}

/// The whole timeline.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// Rows in order of first start (main first).
    pub rows: Vec<Row>,
    /// `(at, running)` after every change of the running count.
    pub running: Vec<(u64, u32)>,
    /// The cap, if the session has one.
    pub cap: Option<u32>,
    /// The last event's time.
    pub end: u64,
    /// Claude Code's version the run simulated.
    pub version: String,
    /// Runs past the row budget: counted, not drawn ([`Builder`]).
    pub more_runs: u64,
    /// Marks past the budget: counted, not drawn.
    pub more_marks: u64,
    /// The `expect:` entries the run broke (an imported session's departures from the
    /// documented behaviour), where they happened; filled by `report`.
    pub departures: Vec<Departure>,
    /// Runs started in all (the model's count, whatever the budget kept).
    pub started: u64,
    /// The highest running count (the model's, exact whatever the thinning).
    pub peak_running: u32,
    /// "It ended at … because …" (the model's chain).
    pub because: String,
    /// Every duration drawn from a distribution, with its words (the model's, under its
    /// budget), for the report's decision panel.
    pub draws: Vec<runmodel::Draw>,
    /// Draws past the model's budget: counted, not kept.
    pub more_draws: u64,
}

/// A failed `expect:` entry, placed on the timeline.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Departure {
    /// When the event that broke it happened (µs); `None`: nothing in the run shows it.
    pub at: Option<u64>,
    /// The trace id of the run it is about, when the event names one.
    pub agent: Option<String>,
    /// The rule that decided the event.
    pub rule: Option<&'static str>,
    /// What was expected and what happened.
    pub text: String,
}

impl Timeline {
    /// The running count at `at`.
    pub fn running_at(&self, at: u64) -> u32 {
        self.running
            .iter()
            .take_while(|(when, _)| *when <= at)
            .last()
            .map_or(0, |(_, n)| *n)
    }

    /// The highest running count.
    pub fn peak(&self) -> u32 {
        self.peak_running
            .max(self.running.iter().map(|(_, n)| *n).max().unwrap_or(0))
    }
}

/// Builds a [`Timeline`] from events as they come (a [`Sink`]): the engine's run model
/// ([`subsim_engine::runmodel::Builder`]) under a row budget, drawn as rows. Memory is
/// bounded by the budget whatever the run's size; runs past it are counted
/// ([`Timeline::more_runs`]), marks too, and the running count is thinned, keeping peaks.
pub struct Builder {
    model: runmodel::Builder,
}

impl Builder {
    /// A builder that keeps at most `max_rows` rows (main's included).
    pub fn new(max_rows: u64) -> Builder {
        Builder {
            model: runmodel::Builder::new(max_rows),
        }
    }

    /// Reads one event.
    pub fn add(&mut self, event: &Event) {
        self.model.add(event);
    }

    /// The timeline, drawn from the finished model.
    pub fn finish(self) -> Timeline {
        Timeline::of(&self.model.finish())
    }
}

impl Timeline {
    /// The rows of `model`: every view's end, counts and stretches come from it.
    pub fn of(model: &RunModel) -> Timeline {
        let row = |run: &runmodel::Run| Row {
            id: subsim_engine::event::id_string(run.id),
            label: run.label.clone(),
            parent: subsim_engine::event::id_string(run.parent),
            depth: run.depth,
            mode: run.mode,
            spans: run
                .spans
                .iter()
                .map(|span| Span {
                    from: span.from,
                    to: span.to,
                    state: match span.state {
                        runmodel::State::Queued => State::Queued,
                        runmodel::State::Running | runmodel::State::Backgrounded => State::Running,
                        runmodel::State::Prompt => State::Prompt,
                        runmodel::State::Children | runmodel::State::Shell => State::Waiting,
                    },
                    rule: span.rule,
                })
                .collect(),
            marks: run
                .marks
                .iter()
                .map(|m| Mark {
                    at: m.at,
                    kind: m.kind,
                    text: m.text.clone(),
                    rule: m.rule,
                })
                .collect(),
        };
        Timeline {
            rows: model.runs.iter().map(row).collect(),
            running: model.running.clone(),
            cap: model.cap,
            end: model.end.at,
            version: model.version.clone(),
            more_runs: model.more_runs,
            more_marks: model.more_marks,
            started: model.counts.all.started,
            peak_running: model.counts.peak_running,
            because: model.because(),
            departures: Vec::new(),
            draws: model.draws.clone(),
            more_draws: model.more_draws,
        }
    }
}

impl Sink for Builder {
    fn event(&mut self, event: &Event) {
        self.add(event);
    }
}

/// Where each failed `expect:` entry is marked, for the report's timeline and the
/// playground's `event: expect` alike: the event that broke a `none:` entry, else the
/// first event about the entry's run (its rejection, start or end; its rejection or end for
/// `final:`), with the rule that decided it. A [`Sink`] fed the run's events as they come:
/// it keeps one placement per entry, so a run of millions of events is placed in bounded
/// memory. An entry about nothing the run shows has no time.
pub struct Placer {
    targets: Vec<Target>,
    found: Vec<Option<Departure>>,
}

/// What places one entry.
enum Target {
    /// `none:`: the first event its filter matches.
    Breaking(subsim_engine::expect::EventFilter),
    /// `final:`: the run's rejection or end.
    Ended(String),
    /// Any other entry about a run (named by its filter's `agent`, `name` or `from`): the
    /// run's rejection or start.
    Started(String),
    /// An entry about no run: nothing places it.
    Nowhere,
}

impl Placer {
    /// A placer of the entries of `expect`, in their order.
    pub fn new(expect: &[subsim_engine::expect::Located]) -> Placer {
        use subsim_engine::expect::{Expectation, FilterValue};
        let targets: Vec<Target> = expect
            .iter()
            .map(|located| match &located.expectation {
                Expectation::NoEvent(filter) => Target::Breaking(filter.clone()),
                Expectation::Final { agent, .. } => Target::Ended(agent.clone()),
                other => other
                    .filters()
                    .first()
                    .and_then(|filter| {
                        filter.fields.iter().find_map(|(name, value)| match value {
                            FilterValue::Str(text)
                                if name == "agent" || name == "name" || name == "from" =>
                            {
                                Some(Target::Started(text.clone()))
                            }
                            _ => None,
                        })
                    })
                    .unwrap_or(Target::Nowhere),
            })
            .collect();
        Placer {
            found: vec![None; targets.len()],
            targets,
        }
    }

    /// The failures, each placed: `text` is "expected …; got …"; `at`, `agent` and `rule`
    /// come from the event that places its entry (none: `at` is `None`).
    pub fn departures(&self, failures: &[subsim_engine::expect::Failure]) -> Vec<Departure> {
        failures
            .iter()
            .map(|failure| {
                let placed = self.found.get(failure.index).cloned().flatten();
                Departure {
                    text: format!("expected {}; got {}", failure.expected, failure.got),
                    ..placed.unwrap_or_default()
                }
            })
            .collect()
    }
}

/// Whether `event` is about the run `who` (its id or name) by its `agent`, `name` or
/// `from` field.
fn about(event: &Event, who: &str) -> bool {
    let mut found = false;
    event.visit_fields(&mut |name, value| {
        if matches!(name, "agent" | "name" | "from") {
            found |= match value {
                subsim_engine::event::Field::Str(text) => text == who,
                subsim_engine::event::Field::Agent(agent) => {
                    subsim_engine::event::id_matches(agent.id, who)
                        || agent.name.as_deref() == Some(who)
                }
                subsim_engine::event::Field::U64(_)
                | subsim_engine::event::Field::Bool(_)
                | subsim_engine::event::Field::List(_) => false,
            };
        }
    });
    found
}

/// `event` as a mark: its time, the first run it names (`agent` or `from`) by its trace id
/// (`a1`, the timeline's row id: it was the bare number, and every mark fell on main's
/// row), its rule (a start without one is a placement: FGBG-1's).
fn placed(event: &Event) -> Departure {
    let mut agent = None;
    event.visit_fields(&mut |name, value| {
        let id = match (name, value) {
            ("agent" | "from", subsim_engine::event::Field::Agent(who)) => Some(who.id_string()),
            ("agent" | "from", subsim_engine::event::Field::Str(id)) => Some(id.to_string()),
            _ => None,
        };
        if let Some(id) = id {
            agent.get_or_insert(id);
        }
    });
    let rule = event
        .rule
        .or(
            (event.kind.name() == "agent_started").then_some(subsim_rules::observed::rule(
                subsim_rules::observed::Observed::Placement,
            )),
        );
    Departure {
        at: Some(event.t.0),
        agent,
        rule,
        text: String::new(),
    }
}

impl Sink for Placer {
    fn event(&mut self, event: &Event) {
        for (target, found) in self.targets.iter().zip(self.found.iter_mut()) {
            if found.is_some() {
                continue;
            }
            let places = match target {
                Target::Breaking(filter) => filter.matches(event),
                Target::Ended(who) => {
                    matches!(event.kind.name(), "spawn_rejected" | "agent_finished")
                        && about(event, who)
                }
                Target::Started(who) => {
                    matches!(event.kind.name(), "spawn_rejected" | "agent_started")
                        && about(event, who)
                }
                Target::Nowhere => false,
            };
            if places {
                *found = Some(placed(event));
            }
        }
    }
}

/// Most rows a text Gantt shows; the rest are counted.
pub const MAX_ROWS: usize = 60;

/// The widest text Gantt drawn, in columns: a wider `width` is taken as this. `COLUMNS`
/// is whatever the environment says, and a format width past 65,535 panics (`COLUMNS=
/// 100000000` did), while every row is a buffer of that many cells.
pub const MAX_WIDTH: usize = 4096;

/// `--format gantt`: one row per run fitted to `width` columns, then the running-count
/// strip with the cap line, then a legend.
pub fn gantt(timeline: &Timeline, width: usize) -> String {
    let width = width.min(MAX_WIDTH);
    let label_width = timeline
        .rows
        .iter()
        .map(|row| terminal::line(&row.label).chars().count() + row.depth as usize)
        .max()
        .unwrap_or(4)
        .clamp(7, 22)
        // A narrow terminal shortens the names before the time axis: keep 10 columns.
        .min(width.saturating_sub(13).max(4));
    let columns = width.saturating_sub(label_width + 3).max(10);
    let span = timeline.end.max(1);
    // Column c covers [c·span/columns, (c+1)·span/columns).
    let column_of = |at: u64| -> usize {
        ((u128::from(at) * columns as u128 / u128::from(span)) as usize).min(columns - 1)
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:label_width$} | 0{:>width$}",
        "",
        subsim_engine::time::human_duration(timeline.end),
        width = columns - 1
    );
    for row in timeline.rows.iter().take(MAX_ROWS) {
        let mut cells = vec![' '; columns];
        for span in &row.spans {
            let (from, to) = (column_of(span.from), column_of(span.to.max(span.from)));
            let glyph = match (span.state, row.mode) {
                (State::Queued, _) => '·',
                (State::Prompt, _) => '?',
                (State::Waiting, _) => '░',
                (State::Running, "main") => '─',
                (State::Running, "foreground") => '▓',
                (State::Running, _) => '█',
            };
            for cell in &mut cells[from..=to] {
                // A prompt or a wait drawn in the same column as running work wins.
                if *cell == ' ' || *cell == '─' || glyph == '?' {
                    *cell = glyph;
                }
            }
        }
        for mark in &row.marks {
            if mark.kind == "rejected" {
                cells[column_of(mark.at)] = '×';
            }
        }
        let indent = " ".repeat(row.depth as usize);
        // Escaped first, then cut by what is shown: a name's ESC sequence, OSC-8 link or
        // U+202E is shown as `\u{1b}`, and the cut never splits such an escape.
        let label = terminal::cut(&format!("{indent}{}", row.label), label_width);
        let cells: String = cells.into_iter().collect();
        let _ = writeln!(out, "{label:label_width$} |{}", cells.trim_end());
    }
    let more = (timeline.rows.len().saturating_sub(MAX_ROWS) as u64) + timeline.more_runs;
    if more > 0 {
        let _ = writeln!(out, "{:label_width$} | … {more} more runs", "");
    }
    // The running strip: the highest count in each column, as a bar scaled to the cap.
    let top = timeline.cap.unwrap_or(0).max(timeline.peak()).max(1);
    let mut strip = String::new();
    let mut over = String::new();
    for column in 0..columns {
        let from = (column as u128 * u128::from(span) / columns as u128) as u64;
        let to = ((column as u128 + 1) * u128::from(span) / columns as u128) as u64;
        let mut highest = timeline.running_at(from);
        for (at, n) in &timeline.running {
            if *at >= from && *at < to {
                highest = highest.max(*n);
            }
        }
        const LEVELS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
        let level = (highest as usize * 8).div_ceil(top as usize).min(8);
        strip.push(LEVELS[level]);
        over.push(match timeline.cap {
            Some(cap) if highest > cap => '▲',
            Some(cap) if highest == cap => '─',
            _ => ' ',
        });
    }
    let _ = writeln!(out, "{:label_width$} |{}", "running", strip.trim_end());
    if let Some(cap) = timeline.cap {
        let _ = writeln!(
            out,
            "{:label_width$} |{}",
            format!("cap {cap}"),
            over.trim_end()
        );
    }
    // The peak and the legend, under the time axis, wrapped to the width; an item wider
    // than the room there starts at the left edge instead.
    let indent = label_width + 3;
    let legend_line = |out: &mut String, line: &str| {
        let pad = if indent + line.chars().count() <= width {
            indent
        } else {
            0
        };
        let _ = writeln!(out, "{:pad$}{line}", "");
    };
    let mut peak = vec![format!("peak {} running", timeline.peak())];
    if let Some(cap) = timeline.cap {
        peak.extend([
            format!("(cap {cap}):"),
            "─ at the cap,".to_string(),
            "▲ over it".to_string(),
        ]);
    }
    let room = if width >= indent + 20 {
        width - indent
    } else {
        width
    };
    let mut line = String::new();
    for word in &peak {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > room {
            legend_line(&mut out, &line);
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    legend_line(&mut out, &line);
    line.clear();
    for item in [
        "█ background",
        "▓ foreground",
        "· queued",
        "? waiting on a prompt",
        "░ waiting for children",
        "× spawn rejected",
    ] {
        if !line.is_empty() && indent + line.chars().count() + 2 + item.chars().count() > width {
            legend_line(&mut out, &line);
            line.clear();
        }
        if !line.is_empty() {
            line.push_str("  ");
        }
        line.push_str(item);
    }
    legend_line(&mut out, &line);
    out
}

/// A JSON string literal that can also sit inside an HTML `<script>` element (the report
/// page embeds it): the workspace's one JSON escaper, [`subsim_escape::json::string_html`].
pub fn json_string(text: &str) -> String {
    subsim_escape::json::string_html(text)
}

/// `--format chrome`: Chrome Trace Event JSON. Each launcher is a process whose threads
/// are the runs it launched (so a run is nested under its launcher); a counter track
/// shows running against the cap; rejections, prompts and notifications are instant
/// events with the rule in their args; the seed and the versions are in `metadata`.
pub fn chrome(timeline: &Timeline, seed: u64, subsim_version: &str) -> String {
    let mut items: Vec<String> = Vec::new();
    // pid of a launcher = its row index + 1; main's own track is in process 1 as tid 0.
    let pid_of: BTreeMap<&str, usize> = timeline
        .rows
        .iter()
        .enumerate()
        .map(|(index, row)| (row.id.as_str(), index + 1))
        .collect();
    let mut launchers: Vec<usize> = Vec::new();
    for (index, row) in timeline.rows.iter().enumerate() {
        let pid = if index == 0 {
            1
        } else {
            pid_of[row.parent.as_str()]
        };
        if !launchers.contains(&pid) {
            launchers.push(pid);
            let launcher = &timeline.rows[pid - 1];
            let name = if pid == 1 {
                "main and what it launched".to_string()
            } else {
                format!("launched by {}", launcher.label)
            };
            items.push(format!(
                r#"{{"ph":"M","name":"process_name","pid":{pid},"tid":0,"args":{{"name":{}}}}}"#,
                json_string(&name)
            ));
            items.push(format!(
                r#"{{"ph":"M","name":"process_sort_index","pid":{pid},"tid":0,"args":{{"sort_index":{pid}}}}}"#
            ));
        }
        let tid = index;
        items.push(format!(
            r#"{{"ph":"M","name":"thread_name","pid":{pid},"tid":{tid},"args":{{"name":{}}}}}"#,
            json_string(&format!("{} ({})", row.label, row.id))
        ));
        for span in &row.spans {
            let name = match span.state {
                State::Running if index == 0 => "main".to_string(),
                State::Running => format!("{} {}", row.label, row.mode),
                other => other.word().to_string(),
            };
            let mut args = format!(
                r#""agent":{},"mode":{},"depth":{}"#,
                json_string(&row.id),
                json_string(row.mode),
                row.depth
            );
            if let Some(rule) = span.rule {
                let _ = write!(args, r#","rule":{}"#, json_string(rule));
            }
            items.push(format!(
                r#"{{"ph":"X","name":{},"cat":{},"pid":{pid},"tid":{tid},"ts":{},"dur":{},"args":{{{args}}}}}"#,
                json_string(&name),
                json_string(span.state.word()),
                span.from,
                span.to.saturating_sub(span.from)
            ));
        }
        for mark in &row.marks {
            let mut args = format!(r#""agent":{}"#, json_string(&row.id));
            if let Some(rule) = mark.rule {
                let _ = write!(args, r#","rule":{}"#, json_string(rule));
            }
            items.push(format!(
                r#"{{"ph":"i","s":"t","name":{},"cat":{},"pid":{pid},"tid":{tid},"ts":{},"args":{{{args}}}}}"#,
                json_string(&mark.text),
                json_string(mark.kind),
                mark.at
            ));
        }
    }
    items.push(
        r#"{"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"running subagents"}}"#
            .to_string(),
    );
    for (at, running) in &timeline.running {
        let cap = timeline
            .cap
            .map_or(String::new(), |cap| format!(r#","cap":{cap}"#));
        items.push(format!(
            r#"{{"ph":"C","name":"running","pid":0,"tid":0,"ts":{at},"args":{{"running":{running}{cap}}}}}"#
        ));
    }
    let mut out = String::from("{\"traceEvents\":[\n");
    out.push_str(&items.join(",\n"));
    let _ = write!(
        out,
        "\n],\"displayTimeUnit\":\"ms\",\"metadata\":{{\"seed\":{seed},\"subsim_version\":{},\"claude_code_version\":{},\"cap\":{},\"runs_not_drawn\":{},\"marks_not_drawn\":{}}}}}\n",
        json_string(subsim_version),
        json_string(&timeline.version),
        timeline.cap.map_or("null".to_string(), |cap| cap.to_string()),
        timeline.more_runs,
        timeline.more_marks
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #34 item 4: each failed entry is placed where the run shows it, with its rule
    /// and run (the report and the playground both ask [`Placer`]); an entry about nothing
    /// the run shows has no time; a held entry is no departure.
    #[test]
    fn the_placer_marks_each_failure_where_the_run_shows_it() {
        let yaml = "name: placed\n\
            session: {env: {CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: \"1\"}}\n\
            main:\n\
            \x20 - spawn: {agent: general-purpose, name: first, background: true, behavior: [{work: 10s}]}\n\
            \x20 - wait: 2s\n\
            \x20 - spawn: {agent: general-purpose, name: second, background: true, behavior: [{work: 5s}]}\n\
            expect:\n\
            \x20 - none: {kind: spawn_rejected}\n\
            \x20 - max_running: 1\n\
            \x20 - final: {agent: a1, outcome: failed}\n\
            \x20 - max_running: 0\n\
            \x20 - event: {kind: agent_started, name: second}\n";
        let loaded =
            subsim_scenario::parse_scenario(yaml, "placed.yaml", std::path::Path::new("."))
                .expect("the scenario loads");
        let mut checker = subsim_engine::expect::Checker::new(loaded.expect.clone());
        let mut placer = Placer::new(&loaded.expect);
        subsim_engine::Simulation::new(loaded.spec).run(&mut subsim_engine::sink::Tee {
            first: &mut checker,
            second: &mut placer,
        });
        let failures = checker.finish();
        let indexes: Vec<usize> = failures.iter().map(|failure| failure.index).collect();
        assert_eq!(indexes, [0, 2, 3, 4], "{failures:?}");
        let departures = placer.departures(&failures);
        let placed: Vec<(Option<u64>, Option<&str>, Option<&str>)> = departures
            .iter()
            .map(|d| (d.at, d.agent.as_deref(), d.rule))
            .collect();
        assert_eq!(
            placed[0],
            (Some(2_000_000), None, Some("CAP-1")),
            "the rejection that broke `none:`"
        );
        assert_eq!(
            placed[1].0,
            Some(10_000_000),
            "a1's end (named by its id): {placed:?}"
        );
        assert_eq!(placed[1].1, Some("a1"), "first's row: {placed:?}");
        assert_eq!(placed[2], (None, None, None), "max_running is about no run");
        assert_eq!(
            placed[3],
            (Some(2_000_000), None, Some("CAP-1")),
            "second never started: its rejection places it"
        );
        for (departure, failure) in departures.iter().zip(&failures) {
            assert_eq!(
                departure.text,
                format!("expected {}; got {}", failure.expected, failure.got)
            );
        }
    }

    #[test]
    fn json_strings_escape_what_json_and_html_need() {
        assert_eq!(json_string("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert_eq!(json_string("<script>"), r#""\u003cscript\u003e""#);
    }

    /// Every shipped scenario under this many events is drawn here (the three load
    /// scenarios of tens of thousands of arrivals are not: `tests/integration/agreement.rs`
    /// lists them).
    const TOO_BIG: u64 = 50_000;

    /// Each shipped scenario's path and its model, built as `run --format gantt` builds it.
    fn shipped() -> Vec<(std::path::PathBuf, RunModel)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let mut files = Vec::new();
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("scenarios/").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|ext| ext == "yaml") {
                    files.push(path);
                }
            }
        }
        files.sort();
        files
            .into_iter()
            .filter_map(|path| {
                let loaded = subsim_scenario::load_scenario(&path).expect("every scenario loads");
                let mut builder = runmodel::Builder::new(1_000_000);
                subsim_engine::Simulation::new(loaded.spec).run(&mut builder);
                let model = builder.finish();
                (model.counts.events <= TOO_BIG).then_some((path, model))
            })
            .collect()
    }

    /// Gantt and Chrome say what the model says (which `tests/integration/agreement.rs`
    /// holds to the trace) on every shipped scenario: the end, the runs, the rejections,
    /// the peak running count.
    #[test]
    fn every_shipped_scenario_s_gantt_and_chrome_agree_with_the_model() {
        let scenarios = shipped();
        assert!(scenarios.len() >= 300, "{}", scenarios.len());
        let mut problems = Vec::new();
        for (path, model) in &scenarios {
            let timeline = Timeline::of(model);
            let name = path.display();
            let end = subsim_engine::time::human_duration(model.end.at);
            let runs = 1 + usize::try_from(model.counts.all.started).expect("usize");
            // Gantt: the axis ends at the end, one row per run, the peak in the legend.
            let text = gantt(&timeline, 100);
            if !text.lines().next().is_some_and(|axis| axis.ends_with(&end)) {
                problems.push(format!("{name}: gantt axis does not end at {end}"));
            }
            let peak = format!("peak {} running", model.counts.peak_running);
            if !text.contains(&peak) {
                problems.push(format!("{name}: gantt lacks {peak:?}"));
            }
            let rows = text
                .lines()
                .skip(1)
                .take_while(|line| !line.starts_with("running "))
                .count();
            let more = runs.saturating_sub(MAX_ROWS);
            if rows != runs.min(MAX_ROWS) + usize::from(more > 0) {
                problems.push(format!("{name}: gantt draws {rows} rows for {runs} runs"));
            }
            // Chrome: a track per run, the running counter's peak, the rejections, the end.
            let json: serde_json::Value =
                serde_json::from_str(&chrome(&timeline, 0, "test")).expect("chrome is JSON");
            let items = json["traceEvents"].as_array().expect("traceEvents");
            let threads = items
                .iter()
                .filter(|item| item["name"] == "thread_name")
                .count();
            let peak = items
                .iter()
                .filter_map(|item| item["args"]["running"].as_u64())
                .max()
                .unwrap_or(0);
            let rejected = items
                .iter()
                .filter(|item| item["cat"] == "rejected")
                .count() as u64;
            let last = items
                .iter()
                .filter(|item| item["ph"] == "X")
                .filter_map(|item| Some(item["ts"].as_u64()? + item["dur"].as_u64()?))
                .max()
                .unwrap_or(0);
            let want = (
                runs,
                u64::from(model.counts.peak_running),
                model.counts.all.rejected,
                model.end.at,
            );
            if (threads, peak, rejected, last) != want {
                problems.push(format!(
                    "{name}: chrome (tracks, peak, rejected, end) {:?}, model {want:?}",
                    (threads, peak, rejected, last)
                ));
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
