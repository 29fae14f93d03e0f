//! `subsim run`: load a scenario (or the built-in demo), simulate it, and write the
//! narration, the JSON Lines trace or the statistics; optionally replayed against the
//! wall clock (`--realtime`).

use std::io::{self, Write};
use std::time::Duration;

use anyhow::Context as _;
use subsim_engine::explore::Replay;
use subsim_engine::render::{Detail, JsonlWriter, NarrationOptions, TextWriter};
use subsim_engine::sink::Discard;
use subsim_engine::summary::Summary;
use subsim_engine::{Event, RunReport, Simulation, Sink};
use subsim_scenario::Loaded;

use crate::args::{DetailArg, Format, RunArgs};
pub use crate::load::{load, read, report};
use crate::output;
use crate::Status;

pub fn run(args: RunArgs) -> anyhow::Result<Status> {
    if args.realtime.is_some() && !matches!(args.format, Format::Text | Format::Jsonl) {
        anyhow::bail!("--realtime plays events as they happen: use it with --format text or jsonl");
    }
    if args.compact && args.format != Format::Jsonl {
        anyhow::bail!("--compact shortens the JSON Lines trace: use it with --format jsonl");
    }
    let loaded = crate::load::load_source(args.file.as_deref(), &args.source)?;
    // The scenario and every file it named: no output may overwrite one.
    let mut inputs: Vec<std::path::PathBuf> = args.file.iter().cloned().collect();
    inputs.extend(loaded.read_files.iter().cloned());
    let description = describe(&loaded);
    let summary = Summary::for_spec(&loaded.spec);
    let narration = NarrationOptions {
        detail: match args.detail {
            DetailArg::Brief => Detail::Brief,
            DetailArg::Full => Detail::Full,
        },
        color: args.out.is_none() && output::stdout_color(),
        follow: args.follow.clone(),
        chapters: loaded.narration.chapters.clone(),
        next: loaded.narration.next.clone(),
        summary: args.detail == DetailArg::Brief && args.follow.is_none(),
        width: Some(crate::words::width()),
    };
    let seed = args.source.seed.unwrap_or(loaded.spec.session.seed);
    let simulation = simulation(loaded.spec, args.source.seed);
    if args.format == Format::Text {
        if let Some(name) = &args.follow {
            follow_touches(
                &simulation,
                args.source.seed,
                name,
                &narration,
                args.order.clone(),
            )?;
        }
    }
    let (mut out, commit) = output::open(args.out.as_deref(), &inputs)?;
    let coloured = args.format == Format::Text && narration.color;
    if matches!(args.format, Format::Text | Format::Summary) && !coloured {
        // Names come from the scenario: no escape sequence reaches the terminal raw. (The
        // coloured narration makes the scenario's text visible itself, keeping its colours.)
        out = Box::new(output::Escaping::new(out));
    }
    if args.explain {
        if args.format == Format::Text {
            // Into the narration itself, so that `--out` keeps it too.
            let description = crate::words::fit(&output::escape_controls(&description));
            if let Err(error) = out.write_all(description.as_bytes()) {
                return finish_with(Err(error), None, &args);
            }
        } else {
            eprint!(
                "{}",
                crate::words::fit(&output::escape_controls(&description))
            );
        }
    }
    tracing::debug!(format = ?args.format, seed = ?args.source.seed, "running");
    // `--order` (ties replayed as `explore` printed them) and `--check-determinism`.
    let order = args.order.clone().map(|order| order.0);
    let mut ties = order.clone().map(Replay::new);
    let determinism = args
        .check_determinism
        .then(|| (simulation.spec().clone(), order));
    let (report, written) = match args.realtime {
        Some(speed) => realtime(
            simulation,
            out,
            args.format,
            speed,
            ties.as_mut(),
            narration,
            args.compact,
        )?,
        None => batch(
            simulation,
            out,
            args.format,
            summary,
            ties.as_mut(),
            narration,
            seed,
            (args.compact, args.max_rows),
        ),
    };
    let status = finish_with(written, Some(report), &args)?;
    // Written whole, or up to a safety limit (exit 3 keeps the trace so far): put in place.
    // On a write error the temporary file is removed and `--out` keeps what it held.
    commit.commit()?;
    if let Some(replay) = &ties {
        crate::explore::check_replay(replay)?;
    }
    match determinism {
        Some((spec, order)) => crate::explore::check_determinism(spec, order, status),
        None => Ok(status),
    }
}

/// `--follow NAME` of a name no event touches is refused before anything is printed (it
/// printed chapter headings with nothing under them and exited 0): a quiet run first, into
/// nowhere, finds out.
fn follow_touches(
    simulation: &Simulation,
    seed: Option<u64>,
    name: &str,
    narration: &NarrationOptions,
    order: Option<crate::args::Order>,
) -> anyhow::Result<()> {
    let quiet = NarrationOptions {
        color: false,
        ..narration.clone()
    };
    let mut writer = TextWriter::with_options(io::sink(), quiet);
    let rerun = self::simulation(simulation.spec().clone(), seed);
    let mut ties = order.map(|order| Replay::new(order.0));
    simulate(rerun, &mut writer, ties.as_mut());
    if writer.follow_missed().is_some() {
        anyhow::bail!(
            "--follow {}: nothing in this run touches it: no agent of that name or id ran \
             (names are the `name:` of spawn steps, ids are a1, a2, …; `--format jsonl` lists \
             them in `agent_started` events)",
            crate::output::escape_controls(name)
        );
    }
    Ok(())
}

/// The simulation of `spec`, under `seed` when one is given (else the scenario's own
/// `session.seed`). `subsim serve` starts its runs here too.
pub fn simulation(spec: subsim_engine::SimSpec, seed: Option<u64>) -> Simulation {
    match seed {
        Some(seed) => Simulation::new(spec).with_seed(seed),
        None => Simulation::new(spec),
    }
}

/// Runs `simulation` into `sink`, with `ties` choosing at same-instant ties if given.
fn simulate(simulation: Simulation, sink: &mut dyn Sink, ties: Option<&mut Replay>) -> RunReport {
    match ties {
        Some(ties) => simulation.run_with_ties(sink, ties),
        None => simulation.run(sink),
    }
}

/// Reports the end of a run: an output error, the engine's notes, a safety limit.
fn finish_with(
    written: io::Result<()>,
    report: Option<RunReport>,
    args: &RunArgs,
) -> anyhow::Result<Status> {
    match written {
        Ok(()) => {}
        // The reader went away (`subsim run | head`): not an error.
        Err(error) if output::is_broken_pipe(&error) => {}
        Err(error) => {
            let target = match &args.out {
                Some(path) => path.display().to_string(),
                None => "stdout".to_string(),
            };
            return Err(anyhow::Error::new(error).context(format!("cannot write to {target}")));
        }
    }
    let Some(report) = report else {
        return Ok(Status::Ok);
    };
    for note in &report.notes {
        crate::output::note(&format!(
            "subsim: note: {} [{}]",
            output::escape_controls(&note.text),
            note.rule
        ));
    }
    match &report.limit {
        Some(limit) => {
            let kept = match &args.out {
                Some(path) => format!(
                    "in {}",
                    output::escape_controls(&path.display().to_string())
                ),
                None => "above".to_string(),
            };
            crate::output::note(&format!(
                "subsim: {}. The output up to that point is kept {kept}.",
                crate::output::limit_message(limit, report.end)
            ));
            Ok(Status::LimitHit)
        }
        None => Ok(Status::Ok),
    }
}

/// Runs at full speed, streaming into the chosen writer.
#[allow(clippy::too_many_arguments)] // each is one choice of the command line
fn batch(
    simulation: Simulation,
    out: Box<dyn Write>,
    format: Format,
    mut summary: Summary,
    ties: Option<&mut Replay>,
    narration: NarrationOptions,
    seed: u64,
    (compact, max_rows): (bool, u64),
) -> (RunReport, io::Result<()>) {
    match format {
        Format::Text => {
            let mut writer = TextWriter::with_options(out, narration);
            let report = simulate(simulation, &mut writer, ties);
            if let Some(name) = writer.follow_missed() {
                crate::output::note(&format!(
                    "subsim: note: nothing in this run touches `{}`: no agent of that name or \
                     id ran (names are the `name:` of spawn steps, ids are a1, a2, …)",
                    crate::output::escape_controls(name)
                ));
            }
            (report, writer.finish().map(drop))
        }
        Format::Jsonl => {
            let mut writer = jsonl_writer(out, compact);
            let report = simulate(simulation, &mut writer, ties);
            (report, writer.finish().map(drop))
        }
        Format::Gantt | Format::Chrome => {
            // The view is built as the events come, under its row budget: a run of
            // millions of arrivals is drawn, never held (it aborted).
            let rows = match format {
                Format::Gantt => crate::timeline::MAX_ROWS as u64,
                Format::Text
                | Format::Jsonl
                | Format::Summary
                | Format::Json
                | Format::Chrome
                | Format::Csv
                | Format::Model => max_rows,
            };
            let mut builder = crate::timeline::Builder::new(rows);
            let report = simulate(simulation, &mut builder, ties);
            let timeline = builder.finish();
            let text = if format == Format::Gantt {
                crate::timeline::gantt(&timeline, crate::words::width())
            } else {
                if timeline.more_runs > 0 {
                    crate::output::note(&format!(
                        "subsim: note: {} past the first {max_rows} {} counted, not drawn \
                         (runs_not_drawn in the metadata); raise the view rows budget with \
                         --max-rows N",
                        crate::output::counted(timeline.more_runs, "run", "runs"),
                        if timeline.more_runs == 1 { "is" } else { "are" }
                    ));
                }
                crate::timeline::chrome(&timeline, seed, env!("CARGO_PKG_VERSION"))
            };
            (report, write_all(out, text.as_bytes()))
        }
        Format::Model => {
            let mut builder = subsim_engine::runmodel::Builder::new(max_rows);
            let report = simulate(simulation, &mut builder, ties);
            let text = builder.finish().to_json();
            (report, write_all(out, text.as_bytes()))
        }
        Format::Csv => {
            let mut table = subsim_engine::runs::RunTable::new(out);
            let report = simulate(simulation, &mut table, ties);
            (report, table.finish().map(drop))
        }
        Format::Summary | Format::Json => {
            // Kept by the kernel itself: no event of the frequent kinds is built.
            let ties = ties.map(|ties| ties as &mut dyn subsim_engine::TieBreak);
            let report = simulation.run_summarized(&mut summary, None, ties);
            let text = if format == Format::Json {
                summary.render_json()
            } else {
                crate::words::fit(&summary.render_text())
            };
            (report, write_all(out, text.as_bytes()))
        }
    }
}

/// The JSON Lines writer: the contract's full form, or the compact one (`--compact`).
/// `subsim serve` streams its trace through this same writer.
pub fn jsonl_writer(out: Box<dyn Write>, compact: bool) -> JsonlWriter<Box<dyn Write>> {
    if compact {
        JsonlWriter::compact(out)
    } else {
        JsonlWriter::new(out)
    }
}

fn write_all(mut out: Box<dyn Write>, bytes: &[u8]) -> io::Result<()> {
    out.write_all(bytes)?;
    out.flush()
}

/// Plays the run against the wall clock, `speed` times faster than virtual time, flushing
/// when an instant ends. The events are written as the simulation makes them (it waits
/// while an event is not due yet), so memory holds what a plain run holds, not the whole
/// trace: only the panel's bookkeeping after the last event that moves the end is held
/// back, since it is written at once with the end. A quiet run first finds the end, for
/// the warning when playback would outlast a day (the run is deterministic).
fn realtime(
    simulation: Simulation,
    out: Box<dyn Write>,
    format: Format,
    speed: f64,
    ties: Option<&mut Replay>,
    narration: NarrationOptions,
    compact: bool,
) -> anyhow::Result<(RunReport, io::Result<()>)> {
    let quiet = Simulation::new(simulation.spec().clone());
    let mut quiet_ties = ties.as_ref().map(|replay| Replay::clone(replay));
    let end = simulate(quiet, &mut Discard, quiet_ties.as_mut()).end;
    if let Some(warning) = playback_warning(end, speed) {
        crate::output::note(&format!("subsim: warning: {warning}"));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .context("cannot start the timer for --realtime")?;
    let (report, written) = match format {
        Format::Jsonl => {
            let mut player = Player::new(&runtime, speed, jsonl_writer(out, compact));
            let report = simulate(simulation, &mut player, ties);
            let written = player.finish().and_then(|writer| writer.finish().map(drop));
            (report, written)
        }
        Format::Text
        | Format::Summary
        | Format::Json
        | Format::Gantt
        | Format::Chrome
        | Format::Csv
        | Format::Model => {
            let mut player = Player::new(&runtime, speed, TextWriter::with_options(out, narration));
            let report = simulate(simulation, &mut player, ties);
            let written = player.finish().and_then(|writer| writer.finish().map(drop));
            (report, written)
        }
    };
    Ok((report, written))
}

/// A writer that can be flushed when an instant ends.
trait Flush {
    fn flush_now(&mut self) -> io::Result<()>;
}

impl<W: Write> Flush for JsonlWriter<W> {
    fn flush_now(&mut self) -> io::Result<()> {
        self.flush()
    }
}

impl<W: Write> Flush for TextWriter<W> {
    fn flush_now(&mut self) -> io::Result<()> {
        self.flush()
    }
}

/// The sink of `--realtime`: writes each event to `sink` when it is due on the wall clock.
struct Player<'r, S> {
    runtime: &'r tokio::runtime::Runtime,
    start: tokio::time::Instant,
    speed: f64,
    sink: S,
    /// Panel bookkeeping since the last event that moves the end
    /// ([`subsim_engine::event::EventKind::moves_the_end`]): played in time if such an
    /// event follows, written at once with the end if none does.
    held: Vec<Event>,
    /// The most events `held` ever held (what the memory test reads).
    most_held: usize,
    /// The time of the last event written, and whether it is flushed.
    last: Option<subsim_engine::SimTime>,
    unflushed: bool,
    /// The first write error: nothing more is written or waited for.
    error: Option<io::Error>,
}

impl<'r, S: Sink + Flush> Player<'r, S> {
    fn new(runtime: &'r tokio::runtime::Runtime, speed: f64, sink: S) -> Player<'r, S> {
        Player {
            start: runtime.block_on(async { tokio::time::Instant::now() }),
            runtime,
            speed,
            sink,
            held: Vec::new(),
            most_held: 0,
            last: None,
            unflushed: false,
            error: None,
        }
    }

    /// Flushes when the instant of the last event written has ended (`t` is later).
    fn end_instant(&mut self, t: subsim_engine::SimTime) {
        if self.unflushed && self.last != Some(t) && self.error.is_none() {
            self.unflushed = false;
            if let Err(error) = self.sink.flush_now() {
                self.error = Some(error);
            }
        }
    }

    /// Waits until `event` is due (unless `wait` is false), then writes it.
    fn play(&mut self, event: &Event, wait: bool) {
        self.end_instant(event.t);
        if self.error.is_some() {
            return;
        }
        if wait {
            let offset = Duration::try_from_secs_f64(event.t.as_secs_f64() / self.speed)
                .unwrap_or(Duration::MAX);
            // A wall-clock instant too far away to represent is as good as never.
            match self.start.checked_add(offset) {
                Some(due) => self
                    .runtime
                    .block_on(async move { tokio::time::sleep_until(due).await }),
                None => self.runtime.block_on(std::future::pending::<()>()),
            }
        }
        self.sink.event(event);
        self.last = Some(event.t);
        self.unflushed = true;
    }

    /// Writes what is held (with the end, at once) and flushes: the writer, or the first
    /// write error.
    fn finish(mut self) -> io::Result<S> {
        for event in std::mem::take(&mut self.held) {
            if self.error.is_some() {
                break;
            }
            self.sink.event(&event);
            self.unflushed = true;
        }
        if let Some(error) = self.error {
            return Err(error);
        }
        self.sink.flush_now()?;
        Ok(self.sink)
    }
}

impl<S: Sink + Flush> Sink for Player<'_, S> {
    fn event(&mut self, event: &Event) {
        if !event.kind.moves_the_end() {
            self.end_instant(event.t);
            self.held.push(event.clone());
            self.most_held = self.most_held.max(self.held.len());
            return;
        }
        for held in std::mem::take(&mut self.held) {
            self.play(&held, true);
        }
        self.play(event, true);
    }
}

/// Seconds in a long human lifetime (120 years).
const LIFETIME_SECS: f64 = 120.0 * 365.25 * 24.0 * 3600.0;

/// A warning when playing a run that ends at `end` at `speed` would take more than a day of
/// wall-clock time; one longer than a human lifetime says so.
fn playback_warning(end: subsim_engine::SimTime, speed: f64) -> Option<String> {
    let seconds = end.as_secs_f64() / speed;
    if seconds <= 24.0 * 3600.0 {
        return None;
    }
    let years = seconds / (365.25 * 24.0 * 3600.0);
    let length = if years >= 1e6 {
        format!("{years:.1e} years")
    } else if years >= 1.0 {
        format!("{years:.0} years")
    } else {
        format!("{:.1} days", seconds / (24.0 * 3600.0))
    };
    let lifetime = if seconds > LIFETIME_SECS {
        " — longer than a human lifetime"
    } else {
        ""
    };
    Some(format!(
        "at --realtime {speed}, playing this run (it ends at {end} of virtual time) takes \
         {length} of wall-clock time{lifetime}; a larger SPEED plays faster (1 = real time)"
    ))
}

/// `name` and `description`, for `--explain`.
fn describe(loaded: &Loaded) -> String {
    let mut text = format!("{}\n", loaded.spec.name);
    if let Some(description) = &loaded.spec.description {
        text.push('\n');
        text.push_str(description.trim_end());
        text.push('\n');
    }
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use subsim_engine::SimTime;

    #[test]
    fn realtime_no_longer_holds_the_whole_trace_before_playing() {
        // `--realtime` computed the whole run into a list of events, then played it: memory
        // grew with the trace. Now an event is written as the simulation makes it; only
        // panel bookkeeping waiting for the next event that moves the end is held.
        let yaml = "name: wide\nsession: {env: {CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: 5000}}\n\
                    main:\n  - spawn: {agent: Explore, count: 5000, background: true}\n  \
                    - wait: {for: children}\n";
        let loaded = subsim_scenario::parse_scenario(yaml, "wide.yaml", std::path::Path::new("."))
            .unwrap_or_else(|problems| panic!("{problems}"));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap_or_else(|error| panic!("{error}"));
        let mut lines = 0usize;
        let mut player = Player::new(&runtime, 1e12, JsonlWriter::new(Vec::new()));
        let report = simulate(Simulation::new(loaded.spec), &mut player, None);
        assert!(report.events >= 20_000, "{} events", report.events);
        assert!(
            player.most_held <= 4,
            "{} events held at once",
            player.most_held
        );
        if let Ok(writer) = player.finish() {
            if let Ok(bytes) = writer.finish() {
                lines = bytes.iter().filter(|byte| **byte == b'\n').count();
            }
        }
        assert_eq!(lines as u64, report.events, "every event is written");
    }

    #[test]
    fn realtime_1e_9_warns_that_playback_outlasts_a_human_lifetime() {
        let warning = playback_warning(SimTime(10_000_000), 1e-9).unwrap_or_default();
        assert!(warning.contains("317 years"), "{warning}");
        assert!(
            warning.contains("longer than a human lifetime"),
            "{warning}"
        );
        let days = playback_warning(SimTime(10_000_000), 1e-4).unwrap_or_default();
        assert!(days.contains("1.2 days"), "{days}");
        assert!(!days.contains("lifetime"), "{days}");
        assert_eq!(playback_warning(SimTime(10_000_000), 1.0), None);
    }
}
