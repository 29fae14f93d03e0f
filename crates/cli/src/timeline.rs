//! Timelines of a run: the model (one row per agent, its running and waiting spans,
//! rejections, the running count) read from the trace, and two renderings of it:
//! `--format gantt` (text for a terminal or an issue) and `--format chrome` (Chrome Trace
//! Event JSON for ui.perfetto.dev and chrome://tracing). `report.rs` draws the same model
//! as SVG.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use subsim_engine::{Event, EventKind, Sink};
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
        self.running.iter().map(|(_, n)| *n).max().unwrap_or(0)
    }
}

/// Builds a [`Timeline`] from events as they come (a [`Sink`]), so a view of a run never
/// holds the run's events: memory is bounded by a row budget, whatever the run's size.
/// Runs past `max_rows` are counted ([`Timeline::more_runs`]), marks past it too, and the
/// running count is thinned, keeping its peaks, when it passes twice as many points.
pub struct Builder {
    timeline: Timeline,
    /// Agent id → its row, for the rows kept.
    index: BTreeMap<u32, usize>,
    /// Load arrivals: when each first asked (while rows are still kept).
    first_asked: BTreeMap<u64, u64>,
    /// The arrival the latest request was for.
    asking: Option<u64>,
    max_rows: usize,
    marks: usize,
}

impl Builder {
    /// A builder that keeps at most `max_rows` rows (main's included) and as many marks.
    pub fn new(max_rows: u64) -> Builder {
        let mut timeline = Timeline::default();
        timeline.rows.push(Row {
            id: "main".into(),
            label: "main".into(),
            parent: "main".into(),
            depth: 0,
            mode: "main",
            spans: vec![Span {
                from: 0,
                to: 0,
                state: State::Running,
                rule: None,
            }],
            marks: Vec::new(),
        });
        Builder {
            timeline,
            index: BTreeMap::from([(0, 0)]),
            first_asked: BTreeMap::new(),
            asking: None,
            max_rows: usize::try_from(max_rows.max(1)).unwrap_or(usize::MAX),
            marks: 0,
        }
    }

    /// The row of agent `id`, if it is kept.
    fn row(&mut self, id: u32) -> Option<&mut Row> {
        let index = *self.index.get(&id)?;
        self.timeline.rows.get_mut(index)
    }

    /// A mark on agent `id`'s row, within the budget.
    fn mark(&mut self, id: u32, mark: Mark) {
        if self.marks >= self.max_rows {
            self.timeline.more_marks += 1;
            return;
        }
        if let Some(row) = self.row(id) {
            row.marks.push(mark);
            self.marks += 1;
        }
    }

    /// The running count changed to `running` at `at`.
    fn change(&mut self, at: u64, running: u32) {
        let series = &mut self.timeline.running;
        if series.last().map(|(_, n)| *n) == Some(running) {
            return;
        }
        series.push((at, running));
        if series.len() >= self.max_rows.saturating_mul(2).max(64) {
            // Pairs become one point, at the first's time with the higher count.
            let thinned: Vec<(u64, u32)> = series
                .chunks(2)
                .map(|pair| (pair[0].0, pair.iter().map(|(_, n)| *n).max().unwrap_or(0)))
                .collect();
            *series = thinned;
        }
    }

    /// Reads one event.
    pub fn add(&mut self, event: &Event) {
        let at = event.t.as_micros();
        // The timeline ends with the session (EventKind::moves_the_end), not with the
        // panel's rows lingering after it (PANEL-2).
        if event.kind.moves_the_end() {
            self.timeline.end = self.timeline.end.max(at);
        }
        match &event.kind {
            EventKind::SessionStarted { cap, version, .. } => {
                self.timeline.cap = *cap;
                self.timeline.version = version.to_string();
                self.change(at, 0);
            }
            EventKind::SpawnRequested { arrival, .. } => {
                self.asking = *arrival;
                let keeping = self.timeline.rows.len() < self.max_rows
                    && self.first_asked.len() < self.max_rows;
                if let (Some(arrival), true) = (arrival, keeping) {
                    self.first_asked.entry(*arrival).or_insert(at);
                }
            }
            EventKind::AgentStarted {
                agent,
                parent,
                depth,
                mode,
                running,
                ..
            } => {
                self.started(event, agent, parent, *depth, mode.as_str());
                self.change(at, *running);
            }
            EventKind::AgentResumed { agent, running, .. } => {
                if let Some(row) = self.row(agent.id) {
                    row.spans.push(Span {
                        from: at,
                        to: OPEN,
                        state: State::Running,
                        rule: event.rule,
                    });
                }
                self.change(at, *running);
            }
            EventKind::AgentFinished { agent, running, .. } => {
                if let Some(last) = self.row(agent.id).and_then(|row| row.spans.last_mut()) {
                    last.to = at;
                }
                self.change(at, *running);
            }
            EventKind::AgentBackgrounded { agent, running } => {
                if let Some(row) = self.row(agent.id) {
                    row.mode = "background";
                }
                self.change(at, *running);
            }
            EventKind::SpawnRejected { .. }
            | EventKind::ToolCalled { .. }
            | EventKind::PermissionRequested { .. }
            | EventKind::PermissionAnswered { .. }
            | EventKind::PermissionWithdrawn { .. }
            | EventKind::AgentWaiting { .. }
            | EventKind::Notification { .. }
            | EventKind::MessageDelivered { .. }
            | EventKind::MessageRejected { .. }
            | EventKind::StopRequested { .. }
            | EventKind::ConversationCleared
            | EventKind::DefinitionNoted { .. }
            | EventKind::PanelChanged { .. }
            | EventKind::HookFired { .. }
            | EventKind::HookSkipped { .. }
            | EventKind::ReportDelivered { .. }
            | EventKind::ContinuationRequested { .. }
            | EventKind::ModelSwitched { .. }
            | EventKind::ActionIgnored { .. }
            | EventKind::LimitReached { .. } => self.add_other(event, at),
        }
    }

    /// A run started: its row, while the budget lasts.
    fn started(
        &mut self,
        event: &Event,
        agent: &subsim_engine::AgentRef,
        parent: &subsim_engine::AgentRef,
        depth: u32,
        mode: &'static str,
    ) {
        let at = event.t.as_micros();
        // A load arrival that asked earlier waited (queued) until now.
        let waited_from = self
            .asking
            .take()
            .and_then(|arrival| self.first_asked.remove(&arrival))
            .filter(|asked| *asked < at);
        if self.timeline.rows.len() >= self.max_rows {
            self.timeline.more_runs += 1;
            return;
        }
        self.index.insert(agent.id, self.timeline.rows.len());
        self.timeline.rows.push(Row {
            id: agent.id_string(),
            label: agent.label(),
            parent: parent.id_string(),
            depth,
            mode,
            spans: waited_from
                .map(|asked| Span {
                    from: asked,
                    to: at,
                    state: State::Queued,
                    rule: None,
                })
                .into_iter()
                .chain(std::iter::once(Span {
                    from: at,
                    to: OPEN,
                    state: State::Running,
                    rule: event.rule,
                }))
                .collect(),
            marks: Vec::new(),
        });
    }

    /// Prompts, waits, rejections and notifications.
    fn add_other(&mut self, event: &Event, at: u64) {
        match &event.kind {
            EventKind::PermissionRequested {
                agent,
                tool,
                prompt,
                routed_to,
                ..
            } => {
                if let Some(row) = self.row(agent.id) {
                    open(row, at, State::Prompt, event.rule);
                }
                let place = routed_to.map_or("nowhere (auto-denied)", |route| route.as_str());
                let text = format!("prompt #{prompt} for {tool}, shown in {place}");
                self.mark(agent.id, mark(at, "prompt", text, event.rule));
            }
            EventKind::PermissionAnswered { agent, .. }
            | EventKind::PermissionWithdrawn { agent, .. } => {
                if let Some(row) = self.row(agent.id) {
                    open(row, at, State::Running, event.rule);
                }
            }
            EventKind::AgentWaiting { agent, .. } => {
                if let Some(row) = self.row(agent.id) {
                    open(row, at, State::Waiting, event.rule);
                }
            }
            EventKind::SpawnRejected {
                caller,
                name,
                agent_type,
                reason,
                ..
            } => {
                let what = name.as_deref().unwrap_or(agent_type);
                let text = format!(
                    "spawn of {what} rejected: {}",
                    reason.as_str().replace('_', " ")
                );
                self.mark(caller.id, mark(at, "rejected", text, event.rule));
            }
            EventKind::Notification { to, from, what } => {
                let text = format!(
                    "{} notification from {}",
                    what.as_str().replace('_', " "),
                    from.label()
                );
                self.mark(to.id, mark(at, "notification", text, event.rule));
            }
            EventKind::SessionStarted { .. }
            | EventKind::SpawnRequested { .. }
            | EventKind::AgentStarted { .. }
            | EventKind::ToolCalled { .. }
            | EventKind::AgentBackgrounded { .. }
            | EventKind::AgentFinished { .. }
            | EventKind::AgentResumed { .. }
            | EventKind::MessageDelivered { .. }
            | EventKind::MessageRejected { .. }
            | EventKind::StopRequested { .. }
            | EventKind::ConversationCleared
            | EventKind::DefinitionNoted { .. }
            | EventKind::PanelChanged { .. }
            | EventKind::HookFired { .. }
            | EventKind::HookSkipped { .. }
            | EventKind::ReportDelivered { .. }
            | EventKind::ContinuationRequested { .. }
            | EventKind::ModelSwitched { .. }
            | EventKind::ActionIgnored { .. }
            | EventKind::LimitReached { .. } => {}
        }
    }

    /// The timeline: main runs from start to end; any span left open ends with the run.
    pub fn finish(mut self) -> Timeline {
        let end = self.timeline.end;
        if let Some(span) = self.timeline.rows[0].spans.first_mut() {
            span.to = end;
        }
        for row in &mut self.timeline.rows {
            if let Some(last) = row.spans.last_mut() {
                if last.to == OPEN {
                    last.to = end;
                }
            }
        }
        self.timeline
    }
}

impl Sink for Builder {
    fn event(&mut self, event: &Event) {
        self.add(event);
    }
}

fn mark(at: u64, kind: &'static str, text: String, rule: Option<&'static str>) -> Mark {
    Mark {
        at,
        kind,
        text,
        rule,
    }
}

/// Closes the row's current span at `at` and opens one in `state`.
fn open(row: &mut Row, at: u64, state: State, rule: Option<&'static str>) {
    if let Some(last) = row.spans.last_mut() {
        last.to = at;
    }
    row.spans.push(Span {
        from: at,
        to: OPEN,
        state,
        rule,
    });
}

/// The end of a span whose run has not ended yet; `Builder::finish` closes what stays open.
const OPEN: u64 = u64::MAX;

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

    #[test]
    fn json_strings_escape_what_json_and_html_need() {
        assert_eq!(json_string("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert_eq!(json_string("<script>"), r#""\u003cscript\u003e""#);
    }
}
