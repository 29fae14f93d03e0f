//! `POST /api/run`: a run streamed as server-sent events.
//!
//! The simulation is synchronous, so it runs on the blocking pool and hands its frames to a
//! bounded channel (it waits when the channel is full: backpressure, so memory does not
//! grow with the run). A pacer task plays the frames at the asked speed (virtual time
//! divided by it, or at once for `"instant"`) into a second small channel that the
//! response body reads. When the client goes away the body is dropped, the pacer's send
//! fails, the pacer drops its end, and the simulation's next send fails: the run stops
//! there. A client that stops reading fills the second channel; after the client timeout
//! the pacer gives up the same way, so a stalled client never holds a run.
//!
//! Bounded lives (issue #31): an idle stream sends `event: keep-alive` every second
//! (`keep_alive`), whose write fails once the client has hung up, and the pacer waits for
//! a frame's time or the client's going, whichever comes first (`wait_for`); a paced run
//! plays at most `--max-run-time` (`due`, `run_time_limit`); and a stream always ends
//! with `end`, `limit` or `error` (`stopped_early`).
//!
//! Every unnamed event's `data:` is one line `subsim run --format jsonl` writes (the same
//! [`crate::run::jsonl_writer`], fed the same run), in order; then `event: end` carries the
//! `--format json` summary. Named events the page uses besides: `limit` (a safety limit
//! stopped the run), `model` (the run model, `run --format model`'s JSON: the page draws
//! the end, the counts and the runs' stretches from it), `expect` (the scenario's `expect:` checked by `check`'s checker), both sent
//! just before `end`, and with `"narration": true` in the body, `narration` (the brief
//! narration's lines of each instant, as `subsim run` prints them). `"narration": N` (a
//! whole number) stops the narration after the instant that reaches N lines, and says so
//! with a last `narration` whose `cut` is true: the page lists 2,000 lines, and a long run
//! is not narrated past them for nothing.
//!
//! The panel's bookkeeping after the last decision (a finished row leaving 30 s later;
//! `EventKind::moves_the_end`) is held back and sent with the end, without waiting for it,
//! as `run --realtime` does: at ×N the stream ends at the session's end, not 30 s later.

use std::cell::RefCell;
use std::convert::Infallible;
use std::io::{self, Write};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{Request, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use subsim_engine::expect::{Checker, Failure};
use subsim_engine::render::{Detail, JsonlWriter, NarrationOptions, TextWriter};
use subsim_engine::runmodel;
use subsim_engine::summary::Summary;
use subsim_engine::{Event, SimTime, Sink};
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument as _;

use super::api::{self, Posted};
use super::Shared;
use crate::timeline::{Departure, Placer};

/// Frames the simulation may be ahead of the pacer.
const AHEAD: usize = 256;
/// Frames the pacer may be ahead of the client.
const UNREAD: usize = 16;
/// Runs the model sent to the page keeps: as many as `run --format model` keeps, so that
/// the end and what set it are the same (the page draws the first 400).
const MODEL_ROWS: u64 = crate::budgets::VIEW_ROWS.limit;

/// One thing to send, at virtual time `t_us`.
struct Frame {
    t_us: u64,
    kind: FrameKind,
}

enum FrameKind {
    /// A JSONL trace line (no newline).
    Line(String),
    /// The narration's lines of an instant (its time in µs: the frame's own `t_us` is
    /// when it is due, which differs for what is held back to the end).
    Narration(u64, String),
    /// The narration stops here (its line budget is spent).
    NarrationCut(u64),
    /// The `expect:` verdict, as JSON.
    Expect(String),
    /// The run model, as JSON.
    Model(String),
    /// A safety limit stopped the run.
    Limit(String),
    /// The `--format json` summary.
    End(String),
}

/// The client went away: the run is abandoned (unwound out of the engine, quietly).
struct Cancelled;

/// How fast to play: `None` is at once. Bounded below so that a second of the scenario
/// plays within `max_run_time` (`--max-run-time`, issue #31): a slower speed would hold a
/// run slot for longer than the server allows, or make the pace overflow (`1e-300`).
fn speed(posted: &Posted, max_run_time: Duration) -> Result<Option<f64>, String> {
    let slowest = 1.0 / max_run_time.as_secs_f64();
    match posted.fields.get("speed") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text == "instant" => Ok(None),
        Some(value) => match value.as_f64() {
            Some(speed) if speed.is_finite() && speed >= slowest => Ok(Some(speed)),
            Some(speed) if speed.is_finite() && speed > 0.0 => Err(format!(
                "`speed` {speed:?} is too slow: at it, one second of the scenario would take \
                 longer than this server plays a run ({}, `subsim serve --max-run-time`); \
                 the slowest speed it plays is {slowest:.6}, or use \"instant\"",
                words(max_run_time)
            )),
            _ => Err("`speed` must be a number above 0 (1 = real time) or \"instant\"".into()),
        },
    }
}

/// `d` for people: `10 minutes`, `1 hour`, `90 seconds`.
pub fn words(d: Duration) -> String {
    let seconds = d.as_secs();
    let (count, unit) = if seconds.is_multiple_of(3600) && seconds >= 3600 {
        (seconds / 3600, "hour")
    } else if seconds.is_multiple_of(60) && seconds >= 60 {
        (seconds / 60, "minute")
    } else {
        (seconds, "second")
    };
    crate::output::counted(count, unit, &format!("{unit}s"))
}

pub async fn run(State(shared): State<Arc<Shared>>, request: Request<Body>) -> Response {
    let posted = match api::read_body(&shared, request).await {
        Ok(posted) => posted,
        Err(response) => return response,
    };
    let speed = match speed(&posted, shared.budgets.max_run_time) {
        Ok(speed) => speed,
        Err(message) => return api::error(StatusCode::BAD_REQUEST, &message),
    };
    // At most this many narration lines (`true`: all of them; anything else: none).
    let narration = match posted.fields.get("narration") {
        Some(Value::Bool(true)) => Some(u64::MAX),
        Some(value) => value.as_u64().filter(|lines| *lines > 0),
        None => None,
    };
    // Held by the simulation and by the pacer: the run's slot is free once both are done.
    let permit = match api::admit(&shared).await {
        Ok(permit) => permit,
        Err(response) => return response,
    };
    let permit = Arc::new(permit);
    let pacer_permit = permit.clone();
    let (frames, from_run) = mpsc::channel::<Frame>(AHEAD);
    let (loaded_tx, loaded_rx) = oneshot::channel();
    let worker = shared.clone();
    let started = api::spawn_run(move || {
        let loaded = match api::load(&worker, &posted) {
            Ok(loaded) => loaded,
            Err(problems) => {
                let _ = loaded_tx.send(Err(problems));
                return;
            }
        };
        if loaded_tx.send(Ok(loaded.spec.name.clone())).is_err() {
            return;
        }
        let seed = posted.seed;
        // The engine is left by unwinding when the client is gone (`Cancelled`); nothing
        // of the run is used after that.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            simulate(loaded, seed, narration, &frames, &worker.budgets.limits)
        }));
        drop(permit);
    });
    if let Err(problem) = started {
        return api::thread_refused(&problem);
    }
    let scenario = match loaded_rx.await {
        Ok(Ok(name)) => name,
        Ok(Err(problems)) => return api::diagnostics(&problems),
        Err(_) => return api::error(StatusCode::INTERNAL_SERVER_ERROR, "the run failed"),
    };
    let (to_client, body) = mpsc::channel::<SseEvent>(UNREAD);
    let lives = Lives {
        stall: shared.budgets.client_timeout,
        max_run_time: shared.budgets.max_run_time,
    };
    let span = tracing::info_span!("run", scenario = %scenario, speed = ?speed);
    tokio::spawn(async move {
        let played = pace(from_run, to_client, speed, lives)
            .instrument(span.clone())
            .await;
        tracing::info!(
            parent: &span,
            scenario = %scenario,
            events = played.events,
            outcome = played.outcome.as_str(),
            why = played.outcome.why(),
            "run ended"
        );
        drop(pacer_permit);
    });
    let stream = futures_util::stream::unfold(body, |mut body| async move {
        body.recv()
            .await
            .map(|event| (Ok::<_, Infallible>(event), body))
    });
    Sse::new(stream).keep_alive(keep_alive()).into_response()
}

/// How often an idle stream sends `event: keep-alive` (no data; readers skip it). Each is
/// a write to the socket, which fails once the client has gone, so a paced run whose
/// client hung up is cancelled within a few of these, not at its next frame (which can be
/// days of scenario time away).
const KEEP_ALIVE: Duration = Duration::from_secs(1);

fn keep_alive() -> KeepAlive {
    KeepAlive::new()
        .interval(KEEP_ALIVE)
        .event(SseEvent::default().event("keep-alive"))
}

/// How long a run's stream may live: how long its client may leave it unread, and how far
/// into wall time a paced run may play (`--client-timeout`, `--max-run-time`).
#[derive(Clone, Copy, Debug)]
struct Lives {
    stall: Duration,
    max_run_time: Duration,
}

/// When the frame at `t_us` is due at `speed`, counted from `start`: `None` past
/// `max_run_time` (or beyond what a clock can hold).
fn due(
    start: tokio::time::Instant,
    t_us: u64,
    speed: f64,
    max_run_time: Duration,
) -> Option<tokio::time::Instant> {
    let offset = t_us as f64 / 1e6 / speed;
    if !offset.is_finite() || offset > max_run_time.as_secs_f64() {
        return None;
    }
    start.checked_add(Duration::try_from_secs_f64(offset).ok()?)
}

/// Waits until `due`, or until the client is gone (false).
async fn wait_for(due: tokio::time::Instant, to_client: &mpsc::Sender<SseEvent>) -> bool {
    tokio::select! {
        () = tokio::time::sleep_until(due) => true,
        () = to_client.closed() => false,
    }
}

/// Sends `event`, giving up (false) when the client is gone or has not read for `stall`.
async fn deliver(to_client: &mpsc::Sender<SseEvent>, event: SseEvent, stall: Duration) -> bool {
    matches!(
        tokio::time::timeout(stall, to_client.send(event)).await,
        Ok(Ok(()))
    )
}

/// The `limit` event of a paced run stopped by `--max-run-time` at the frame at `t_us`.
fn run_time_limit(t_us: u64, speed: f64, max_run_time: Duration) -> SseEvent {
    let message = format!(
        "the run stopped before its event at {} of scenario time: at speed {speed:?}, \
         that event would play later than this server plays a run ({}, \
         `subsim serve --max-run-time`). A faster speed, or \"instant\", plays it all.",
        subsim_engine::time::human_duration(t_us),
        words(max_run_time)
    );
    SseEvent::default()
        .event("limit")
        .data(super::json::text(&json!({ "message": message })))
}

/// The `error` event of a run that stopped without its `end` (a failure of the server's).
fn stopped_early() -> SseEvent {
    SseEvent::default()
        .event("error")
        .data(super::json::text(&json!({
            "message": "the run stopped before its end (the server failed); run it again, \
                        and if it happens again, run it with `subsim run` to see why"
        })))
}

/// How a run's stream ended, for the run's log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Played to its `end`.
    End,
    /// A safety limit stopped the run (`limit`, then `end`).
    Limit,
    /// `--max-run-time` stopped it (`limit`).
    RunTime,
    /// The client went away.
    Gone,
    /// The client stopped reading for the client timeout.
    Stalled,
    /// The run stopped without `end` (`error`).
    Failed,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::End => "end",
            Outcome::Limit => "limit",
            Outcome::RunTime => "max-run-time",
            Outcome::Gone => "client gone",
            Outcome::Stalled => "client stalled",
            Outcome::Failed => "failed",
        }
    }

    fn why(self) -> &'static str {
        match self {
            Outcome::End => "the scenario ended",
            Outcome::Limit => "a safety limit stopped the run",
            Outcome::RunTime => "the next event would play past --max-run-time",
            Outcome::Gone => "the client hung up",
            Outcome::Stalled => "the client read nothing for --client-timeout",
            Outcome::Failed => "the run stopped before its end",
        }
    }
}

/// What a stream played: trace events sent, and how it ended.
struct Played {
    events: u64,
    outcome: Outcome,
}

/// Plays the run's frames at `speed` into the client's channel; gives up when the client
/// is gone (noticed while waiting for a frame's time too) or has not read for `stall`.
/// The stream always ends with `end`, `limit` or `error`, unless the client is gone.
async fn pace(
    mut from_run: mpsc::Receiver<Frame>,
    to_client: mpsc::Sender<SseEvent>,
    speed: Option<f64>,
    lives: Lives,
) -> Played {
    let start = tokio::time::Instant::now();
    let mut played = Played {
        events: 0,
        outcome: Outcome::Gone,
    };
    let mut limited = false;
    loop {
        let frame = tokio::select! {
            frame = from_run.recv() => frame,
            () = to_client.closed() => return played,
        };
        let Some(frame) = frame else {
            // The run's channel closed without `end`: say so rather than just stop.
            deliver(&to_client, stopped_early(), lives.stall).await;
            played.outcome = Outcome::Failed;
            return played;
        };
        if let Some(speed) = speed {
            match due(start, frame.t_us, speed, lives.max_run_time) {
                Some(due) => {
                    if !wait_for(due, &to_client).await {
                        return played;
                    }
                }
                None => {
                    let limit = run_time_limit(frame.t_us, speed, lives.max_run_time);
                    deliver(&to_client, limit, lives.stall).await;
                    played.outcome = Outcome::RunTime;
                    return played;
                }
            }
        }
        let last = matches!(frame.kind, FrameKind::End(_));
        limited |= matches!(frame.kind, FrameKind::Limit(_));
        let event = matches!(frame.kind, FrameKind::Line(_));
        // Gone, or not reading: drop the run's channel, which stops the run.
        if !deliver(&to_client, sse(frame), lives.stall).await {
            if !to_client.is_closed() {
                played.outcome = Outcome::Stalled;
            }
            return played;
        }
        played.events += u64::from(event);
        if last {
            played.outcome = if limited {
                Outcome::Limit
            } else {
                Outcome::End
            };
            return played;
        }
    }
}

fn sse(frame: Frame) -> SseEvent {
    match frame.kind {
        // A JSONL line never holds a raw CR or LF (JSON escapes them), which SSE could
        // not carry; say so loudly rather than send a broken frame.
        FrameKind::Line(line) => SseEvent::default().data(line.replace(['\r', '\n'], " ")),
        FrameKind::Narration(instant, text) => SseEvent::default()
            .event("narration")
            .data(super::json::text(&json!({ "t_us": instant, "text": text }))),
        FrameKind::NarrationCut(instant) => {
            SseEvent::default()
                .event("narration")
                .data(super::json::text(
                    &json!({ "t_us": instant, "text": "", "cut": true }),
                ))
        }
        FrameKind::Expect(verdict) => SseEvent::default().event("expect").data(verdict),
        FrameKind::Model(model) => SseEvent::default()
            .event("model")
            .data(model.replace(['\r', '\n'], " ")),
        FrameKind::Limit(text) => SseEvent::default()
            .event("limit")
            .data(super::json::text(&json!({ "message": text }))),
        FrameKind::End(summary) => SseEvent::default()
            .event("end")
            .data(summary.trim_end().replace('\r', " ")),
    }
}

/// Text a writer wrote, shared with whoever takes it out.
#[derive(Clone, Default)]
struct Written(Rc<RefCell<Vec<u8>>>);

impl Written {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

impl Write for Written {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The sink of a streamed run: the JSONL writer `run` uses, the summary, and optionally
/// the brief narration; every line goes out as a frame as soon as it is written.
struct Streamed<'a> {
    jsonl: JsonlWriter<Box<dyn Write>>,
    lines: Written,
    narration: Option<(TextWriter<Written>, Written)>,
    /// Narration lines still to send; the narration stops once they are spent.
    narration_left: u64,
    /// The instant of the latest event: narration is flushed when the instant ends.
    instant: Option<SimTime>,
    summary: Summary,
    /// `check`'s checker of the scenario's `expect:`.
    checker: Checker,
    /// Where each failure is marked (the report's own placement).
    placer: Placer,
    /// The run model the page draws.
    model: runmodel::Builder,
    /// The time of the last event that moves the end (`EventKind::moves_the_end`).
    end_us: u64,
    /// Frames past `end_us`: sent when an event moves the end, or with the end.
    held: Vec<Frame>,
    frames: &'a mpsc::Sender<Frame>,
}

impl Streamed<'_> {
    /// Sends `frame`, or holds it while it lies past the session's end so far.
    fn send(&mut self, frame: Frame) {
        if frame.t_us > self.end_us {
            self.held.push(frame);
        } else {
            self.deliver(frame);
        }
    }

    fn deliver(&self, frame: Frame) {
        if self.frames.blocking_send(frame).is_err() {
            std::panic::resume_unwind(Box::new(Cancelled));
        }
    }

    /// Sends what was held: due at its own time when the end has moved past it, else
    /// now (the run ended first).
    fn release(&mut self) {
        for mut frame in std::mem::take(&mut self.held) {
            frame.t_us = frame.t_us.min(self.end_us);
            self.deliver(frame);
        }
    }

    /// Sends the narration of the instant that just ended.
    fn tell(&mut self) {
        let (Some((writer, text)), Some(instant)) = (&mut self.narration, self.instant) else {
            return;
        };
        let _ = writer.flush();
        let told = text.take();
        if !told.is_empty() {
            let lines = told.iter().filter(|byte| **byte == b'\n').count() as u64;
            self.send(Frame {
                t_us: instant.as_micros(),
                kind: FrameKind::Narration(
                    instant.as_micros(),
                    String::from_utf8_lossy(&told).into_owned(),
                ),
            });
            self.narration_left = self.narration_left.saturating_sub(lines.max(1));
            if self.narration_left == 0 {
                self.narration = None;
                self.send(Frame {
                    t_us: instant.as_micros(),
                    kind: FrameKind::NarrationCut(instant.as_micros()),
                });
            }
        }
    }

    /// Writes `event` as JSONL (and narration) and sends its line.
    fn write(&mut self, event: &Event) {
        if self.instant.is_some_and(|instant| instant != event.t) {
            self.tell();
        }
        self.instant = Some(event.t);
        if event.kind.moves_the_end() {
            self.end_us = self.end_us.max(event.t.as_micros());
            self.release();
        }
        if let Some((writer, _)) = &mut self.narration {
            writer.event(event);
        }
        self.jsonl.event(event);
        let _ = self.jsonl.flush();
        let written = self.lines.take();
        for line in written
            .split(|byte| *byte == b'\n')
            .filter(|l| !l.is_empty())
        {
            self.send(Frame {
                t_us: event.t.as_micros(),
                kind: FrameKind::Line(String::from_utf8_lossy(line).into_owned()),
            });
        }
    }
}

impl Sink for Streamed<'_> {
    fn event(&mut self, event: &Event) {
        self.write(event);
        self.summary.event(event);
        self.checker.event(event);
        self.placer.event(event);
        self.model.event(event);
    }
}

/// Runs `loaded` into frames; unwinds with [`Cancelled`] when the client is gone.
fn simulate(
    loaded: subsim_scenario::Loaded,
    seed: Option<u64>,
    narration: Option<u64>,
    frames: &mpsc::Sender<Frame>,
    server: &subsim_engine::spec::Limits,
) {
    let lines = Written::default();
    let narration_left = narration.unwrap_or(0);
    let narration = narration.map(|_| {
        let text = Written::default();
        let options = NarrationOptions {
            detail: Detail::Brief,
            chapters: loaded.narration.chapters.clone(),
            summary: false,
            ..NarrationOptions::default()
        };
        (TextWriter::with_options(text.clone(), options), text)
    });
    let limit_expected = crate::load::expects_limit(&loaded.expect);
    let expectations = loaded.expect.len();
    let mut sink = Streamed {
        jsonl: crate::run::jsonl_writer(Box::new(lines.clone()), false),
        lines,
        narration,
        narration_left,
        instant: None,
        summary: Summary::for_spec(&loaded.spec),
        placer: Placer::new(&loaded.expect),
        checker: Checker::new(loaded.expect),
        model: runmodel::Builder::new(MODEL_ROWS),
        end_us: 0,
        held: Vec::new(),
        frames,
    };
    let report = crate::run::simulation(loaded.spec, seed).run(&mut sink);
    sink.tell();
    sink.release();
    let end = sink.end_us;
    if let Some(limit) = &report.limit {
        let message = format!(
            "{}. This server runs at most {} events, {} agents and {} steps per run \
             (`subsim serve --max-events N --max-agents N --max-steps N` raises them).",
            crate::output::limit_message(limit, report.end),
            server.max_events,
            server.max_agents,
            server.steps()
        );
        sink.send(Frame {
            t_us: end,
            kind: FrameKind::Limit(message),
        });
    }
    let model = std::mem::replace(&mut sink.model, runmodel::Builder::new(1)).finish();
    sink.send(Frame {
        t_us: end,
        kind: FrameKind::Model(model.to_json()),
    });
    let failures = std::mem::replace(&mut sink.checker, Checker::new(Vec::new())).finish();
    let departures = sink.placer.departures(&failures);
    let unexpected_limit = report
        .limit
        .as_ref()
        .filter(|_| !limit_expected)
        .map(|limit| crate::output::limit_message(limit, report.end));
    let verdict = expect_verdict(expectations, &failures, &departures, unexpected_limit);
    sink.send(Frame {
        t_us: end,
        kind: FrameKind::Expect(verdict),
    });
    let summary = sink.summary.render_json();
    sink.send(Frame {
        t_us: end,
        kind: FrameKind::End(summary),
    });
}

/// `event: expect`'s data: what `subsim check` decides of one run, as JSON: `passed`
/// (every assertion held and no safety limit cut the run short unless one was expected),
/// the count of assertions, the unexpected limit's message, and each failure with its
/// location, what was expected and what happened (`check --format json`'s fields), and
/// where the timeline marks it ([`Placer`], as the report does): `at_us` (null: nothing in
/// the run shows it), `agent` (the run's trace id, or null) and `rule` (or null).
fn expect_verdict(
    expectations: usize,
    failures: &[Failure],
    departures: &[Departure],
    limit: Option<String>,
) -> String {
    let failures: Vec<Value> = failures
        .iter()
        .zip(departures)
        .map(|(failure, departure)| {
            json!({
                "expect": failure.index + 1,
                "location": failure.location,
                "expected": failure.expected,
                "got": failure.got,
                "events": failure.events,
                "hints": failure.hints,
                "at_us": departure.at,
                "agent": departure.agent,
                "rule": departure.rule,
            })
        })
        .collect();
    super::json::text(&json!({
        "expectations": expectations,
        "passed": failures.is_empty() && limit.is_none(),
        "limit": limit,
        "failures": failures,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frames of the demo's stream, as the pacer would get them.
    fn demo_frames() -> Vec<Frame> {
        let path = "scenarios/demo.yaml";
        let source = crate::catalog::scenario(path).expect("the demo");
        let loaded =
            subsim_scenario::parse_scenario(source, path, &crate::catalog::scenario_base_dir(path))
                .expect("the demo loads");
        frames_of(loaded)
    }

    /// The frames of `loaded`'s stream, as the pacer would get them.
    fn frames_of(loaded: subsim_scenario::Loaded) -> Vec<Frame> {
        let (frames, mut received) = mpsc::channel(100_000);
        simulate(
            loaded,
            None,
            Some(2000),
            &frames,
            &subsim_engine::spec::Limits::default(),
        );
        drop(frames);
        let mut all = Vec::new();
        while let Ok(frame) = received.try_recv() {
            all.push(frame);
        }
        all
    }

    /// Was: at ×10 the page sat idle 3 s after the demo's last decision (56 s), because the
    /// panel's bookkeeping 30 s later (86 s) was paced like a decision.
    #[test]
    fn at_times_n_the_stream_ends_at_the_last_decision_not_30_s_later() {
        let frames = demo_frames();
        let lines: Vec<&str> = frames
            .iter()
            .filter_map(|frame| match &frame.kind {
                FrameKind::Line(line) => Some(line.as_str()),
                _ => None,
            })
            .collect();
        // The trace keeps the late bookkeeping …
        assert!(
            lines
                .last()
                .is_some_and(|line| line.starts_with("{\"t_us\":86000000,")),
            "{:?}",
            lines.last()
        );
        // … but nothing is due after the end, and what is due is in order.
        let due: Vec<u64> = frames.iter().map(|frame| frame.t_us).collect();
        assert_eq!(due.iter().max(), Some(&56_000_000));
        assert!(due.windows(2).all(|pair| pair[0] <= pair[1]), "{due:?}");
        // The last three frames: the model, the expect verdict, the end.
        let tail: Vec<&str> = frames[frames.len() - 3..]
            .iter()
            .map(|frame| match &frame.kind {
                FrameKind::Model(_) => "model",
                FrameKind::Expect(_) => "expect",
                FrameKind::End(_) => "end",
                FrameKind::Line(_)
                | FrameKind::Narration(..)
                | FrameKind::NarrationCut(_)
                | FrameKind::Limit(_) => "other",
            })
            .collect();
        assert_eq!(tail, ["model", "expect", "end"]);
    }

    /// `event: expect` says what `subsim check` says of the demo: its 9 assertions hold.
    #[test]
    fn the_expect_event_is_check_s_verdict() {
        let frames = demo_frames();
        let verdict = frames
            .iter()
            .find_map(|frame| match &frame.kind {
                FrameKind::Expect(verdict) => Some(verdict.clone()),
                _ => None,
            })
            .expect("an expect frame");
        let verdict: Value = serde_json::from_str(&verdict).expect("JSON");
        assert_eq!(
            verdict,
            json!({"expectations": 9, "passed": true, "limit": null, "failures": []})
        );
    }

    /// Issue #34 item 4: each failure says where the timeline marks it (`at_us`, `agent`,
    /// `rule`: the report's own placement, `timeline::Placer`), null when the run shows
    /// nothing of it.
    #[test]
    fn the_expect_event_places_each_failure() {
        let yaml = "name: placed\n\
            session: {env: {CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: \"1\"}}\n\
            main:\n\
            \x20 - spawn: {agent: general-purpose, name: first, background: true, behavior: [{work: 10s}]}\n\
            \x20 - wait: 2s\n\
            \x20 - spawn: {agent: general-purpose, name: second, background: true, behavior: [{work: 5s}]}\n\
            expect:\n\
            \x20 - none: {kind: spawn_rejected}\n\
            \x20 - final: {agent: first, outcome: failed}\n\
            \x20 - max_running: 0\n";
        let loaded =
            subsim_scenario::parse_scenario(yaml, "placed.yaml", std::path::Path::new("."))
                .expect("the scenario loads");
        let verdict = frames_of(loaded)
            .into_iter()
            .find_map(|frame| match frame.kind {
                FrameKind::Expect(verdict) => Some(verdict),
                _ => None,
            })
            .expect("an expect frame");
        let verdict: Value = serde_json::from_str(&verdict).expect("JSON");
        let placed: Vec<Value> = verdict["failures"]
            .as_array()
            .expect("failures")
            .iter()
            .map(|failure| {
                json!([
                    failure["expect"],
                    failure["at_us"],
                    failure["agent"],
                    failure["rule"]
                ])
            })
            .collect();
        assert_eq!(
            placed,
            [
                json!([1, 2_000_000, null, "CAP-1"]),
                json!([2, 10_000_000, "a1", verdict["failures"][1]["rule"]]),
                json!([3, null, null, null]),
            ],
            "{verdict}"
        );
    }
}
