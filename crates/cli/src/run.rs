//! `subsim run`: load a scenario (or the built-in demo), simulate it, and write the
//! narration, the JSON Lines trace or the statistics; optionally replayed against the
//! wall clock (`--realtime`).

use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use subsim_engine::explore::Replay;
use subsim_engine::render::{Detail, JsonlWriter, NarrationOptions, TextWriter};
use subsim_engine::sink::Collect;
use subsim_engine::summary::Summary;
use subsim_engine::{Event, RunReport, Simulation, Sink};
use subsim_scenario::Loaded;

use crate::args::{DetailArg, Format, RunArgs};
pub use crate::load::{load, load_demo, read, report, DEMO, DEMO_NAME};
use crate::output;
use crate::Status;

pub fn run(args: RunArgs) -> anyhow::Result<Status> {
    if args.realtime.is_some() && !matches!(args.format, Format::Text | Format::Jsonl) {
        anyhow::bail!("--realtime plays events as they happen: use it with --format text or jsonl");
    }
    if args.compact && args.format != Format::Jsonl {
        anyhow::bail!("--compact shortens the JSON Lines trace: use it with --format jsonl");
    }
    let overrides = args.overrides();
    let loaded = match &args.file {
        Some(path) => report(subsim_scenario::load_scenario_under(
            path,
            &overrides,
            &args.access.options(),
        ))?,
        None => report(subsim_scenario::parse_scenario_with(
            DEMO,
            DEMO_NAME,
            Path::new("."),
            &overrides,
        ))?,
    };
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
        width: Some(crate::timeline::terminal_width()),
    };
    let seed = args.seed.unwrap_or(loaded.spec.session.seed);
    let simulation = simulation(loaded.spec, args.seed);
    if args.format == Format::Text {
        if let Some(name) = &args.follow {
            follow_touches(&simulation, args.seed, name, &narration, args.order.clone())?;
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
            let description = output::escape_controls(&description);
            if let Err(error) = out.write_all(description.as_bytes()) {
                return finish_with(Err(error), None, &args);
            }
        } else {
            eprint!("{}", output::escape_controls(&description));
        }
    }
    tracing::debug!(format = ?args.format, seed = ?args.seed, "running");
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
        eprintln!(
            "subsim: note: {} [{}]",
            output::escape_controls(&note.text),
            note.rule
        );
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
            eprintln!(
                "subsim: {}. The output up to that point is kept {kept}.",
                crate::output::limit_message(limit, report.end)
            );
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
                eprintln!(
                    "subsim: note: nothing in this run touches `{}`: no agent of that name or \
                     id ran (names are the `name:` of spawn steps, ids are a1, a2, …)",
                    crate::output::escape_controls(name)
                );
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
                _ => max_rows,
            };
            let mut builder = crate::timeline::Builder::new(rows);
            let report = simulate(simulation, &mut builder, ties);
            let timeline = builder.finish();
            let text = if format == Format::Gantt {
                crate::timeline::gantt(&timeline, crate::timeline::terminal_width())
            } else {
                if timeline.more_runs > 0 {
                    eprintln!(
                        "subsim: note: {} past the first {max_rows} {} counted, not drawn \
                         (runs_not_drawn in the metadata); raise the view rows budget with \
                         --max-rows N",
                        crate::output::counted(timeline.more_runs, "run", "runs"),
                        if timeline.more_runs == 1 { "is" } else { "are" }
                    );
                }
                crate::timeline::chrome(&timeline, seed, env!("CARGO_PKG_VERSION"))
            };
            (report, write_all(out, text.as_bytes()))
        }
        Format::Csv => {
            let mut table = subsim_engine::runs::RunTable::new(out);
            let report = simulate(simulation, &mut table, ties);
            (report, table.finish().map(drop))
        }
        Format::Summary | Format::Json => {
            let report = simulate(simulation, &mut summary, ties);
            let text = if format == Format::Json {
                summary.render_json()
            } else {
                summary.render_text()
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

/// Computes the whole run first (it is deterministic), then plays its events against the
/// wall clock, `speed` times faster than virtual time, flushing after each one.
fn realtime(
    simulation: Simulation,
    out: Box<dyn Write>,
    format: Format,
    speed: f64,
    ties: Option<&mut Replay>,
    narration: NarrationOptions,
    compact: bool,
) -> anyhow::Result<(RunReport, io::Result<()>)> {
    let mut trace = Collect::default();
    let report = simulate(simulation, &mut trace, ties);
    if let Some(warning) = playback_warning(report.end, speed) {
        eprintln!("subsim: warning: {warning}");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .context("cannot start the timer for --realtime")?;
    let written = runtime.block_on(async {
        match format {
            Format::Jsonl => {
                let mut writer = jsonl_writer(out, compact);
                play(&trace.events, speed, &mut writer, |writer| writer.flush()).await?;
                writer.finish().map(drop)
            }
            _ => {
                let mut writer = TextWriter::with_options(out, narration);
                play(&trace.events, speed, &mut writer, |writer| writer.flush()).await?;
                writer.finish().map(drop)
            }
        }
    });
    Ok((report, written))
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

async fn play<S: Sink>(
    events: &[Event],
    speed: f64,
    sink: &mut S,
    flush: impl Fn(&mut S) -> io::Result<()>,
) -> io::Result<()> {
    let start = tokio::time::Instant::now();
    // What follows the session's end (the panel's bookkeeping, EventKind::moves_the_end)
    // is written at once with it: nothing is left to watch, so nothing to wait for.
    let end = subsim_engine::event::session_end(events);
    for (index, event) in events.iter().enumerate() {
        let event_t = event.t.min(end);
        let offset =
            Duration::try_from_secs_f64(event_t.as_secs_f64() / speed).unwrap_or(Duration::MAX);
        // A wall-clock instant too far away to represent is as good as never.
        match start.checked_add(offset) {
            Some(due) => tokio::time::sleep_until(due).await,
            None => std::future::pending::<()>().await,
        }
        sink.event(event);
        // Flush when the instant ends: the next event is later (or there is none), so the
        // narration can group the instant's identical lines before they are shown.
        if events
            .get(index + 1)
            .is_none_or(|next| next.t.min(end) != event_t)
        {
            flush(sink)?;
        }
    }
    Ok(())
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
