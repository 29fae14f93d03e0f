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
//! [`crate::run::jsonl_writer`], fed the same run), in order; then `event: model` carries the
//! run model (`run --format model`: the end and what set it, the counts, the runs) and
//! `event: end` the `--format json` summary. Named events the page uses besides: `limit` (a safety limit
//! stopped the run), and with `"narration": true` in the body, `narration` (the brief
//! narration's lines of each instant, as `subsim run` prints them).

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
use subsim_engine::render::{Detail, JsonlWriter, NarrationOptions, TextWriter};
use subsim_engine::summary::Summary;
use subsim_engine::{Event, SimTime, Sink};
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument as _;

use super::api::{self, Posted};
use super::Shared;

/// Frames the simulation may be ahead of the pacer.
const AHEAD: usize = 256;
/// Frames the pacer may be ahead of the client.
const UNREAD: usize = 16;

/// One thing to send, at virtual time `t_us`.
struct Frame {
    t_us: u64,
    kind: FrameKind,
}

enum FrameKind {
    /// A JSONL trace line (no newline).
    Line(String),
    /// The narration's lines of the instant `t_us`.
    Narration(String),
    /// A safety limit stopped the run.
    Limit(String),
    /// The `--format json` summary.
    End(String),
    /// The run model (`run --format model`), sent just before `End`.
    Model(String),
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
    let narration = posted.fields.get("narration") == Some(&Value::Bool(true));
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
    let t_us = frame.t_us;
    match frame.kind {
        // A JSONL line never holds a raw CR or LF (JSON escapes them), which SSE could
        // not carry; say so loudly rather than send a broken frame.
        FrameKind::Line(line) => SseEvent::default().data(line.replace(['\r', '\n'], " ")),
        FrameKind::Narration(text) => SseEvent::default()
            .event("narration")
            .data(super::json::text(&json!({ "t_us": t_us, "text": text }))),
        FrameKind::Limit(text) => SseEvent::default()
            .event("limit")
            .data(super::json::text(&json!({ "message": text }))),
        FrameKind::Model(model) => SseEvent::default().event("model").data(model.trim_end()),
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
    /// The instant of the latest event: narration is flushed when the instant ends.
    instant: Option<SimTime>,
    summary: Summary,
    /// The run model, sent as `event: model` before `end`.
    model: subsim_engine::runmodel::Builder,
    frames: &'a mpsc::Sender<Frame>,
}

impl Streamed<'_> {
    fn send(&self, frame: Frame) {
        if self.frames.blocking_send(frame).is_err() {
            std::panic::resume_unwind(Box::new(Cancelled));
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
            self.send(Frame {
                t_us: instant.as_micros(),
                kind: FrameKind::Narration(String::from_utf8_lossy(&told).into_owned()),
            });
        }
    }

    /// Writes `event` as JSONL (and narration) and sends its line.
    fn write(&mut self, event: &Event) {
        if self.instant.is_some_and(|instant| instant != event.t) {
            self.tell();
        }
        self.instant = Some(event.t);
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
        self.model.add(event);
    }
}

/// Runs `loaded` into frames; unwinds with [`Cancelled`] when the client is gone.
fn simulate(
    loaded: subsim_scenario::Loaded,
    seed: Option<u64>,
    narration: bool,
    frames: &mpsc::Sender<Frame>,
    server: &subsim_engine::spec::Limits,
) {
    let lines = Written::default();
    let narration = narration.then(|| {
        let text = Written::default();
        let options = NarrationOptions {
            detail: Detail::Brief,
            chapters: loaded.narration.chapters.clone(),
            summary: false,
            ..NarrationOptions::default()
        };
        (TextWriter::with_options(text.clone(), options), text)
    });
    let mut sink = Streamed {
        jsonl: crate::run::jsonl_writer(Box::new(lines.clone()), false),
        lines,
        narration,
        instant: None,
        summary: Summary::for_spec(&loaded.spec),
        model: subsim_engine::runmodel::Builder::new(5_000),
        frames,
    };
    let report = crate::run::simulation(loaded.spec, seed).run(&mut sink);
    sink.tell();
    let end = report.end.as_micros();
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
    let model = std::mem::replace(&mut sink.model, subsim_engine::runmodel::Builder::new(1));
    sink.send(Frame {
        t_us: end,
        kind: FrameKind::Model(model.finish().to_json()),
    });
    let summary = sink.summary.render_json();
    sink.send(Frame {
        t_us: end,
        kind: FrameKind::End(summary),
    });
}
