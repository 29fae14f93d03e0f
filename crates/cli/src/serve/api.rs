//! The routes: the page and its two files, and the API (`docs/playground.md`).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Map, Value};
use subsim_scenario::{Diagnostics, Loaded, Override};

use super::{log, page, policy, stream, Shared};

/// Every route, behind the host and origin policy (`policy.rs`), which sees every
/// request first.
pub fn router(shared: Arc<Shared>, policy: policy::Policy) -> Router {
    Router::new()
        .route("/", get(page::index))
        .route("/app.js", get(page::script))
        .route("/app.css", get(page::style))
        .route("/api/scenarios", get(scenarios))
        .route("/api/scenario/{*path}", get(scenario))
        .route("/api/explain/{id}", get(explain))
        .route("/api/check", post(check))
        .route("/api/run", post(stream::run))
        .route("/api/panel", post(panel))
        .route("/api/compare", post(compare))
        .fallback(not_found)
        .method_not_allowed_fallback(wrong_method)
        .layer(axum::middleware::from_fn(soft_problems))
        .layer(axum::middleware::from_fn_with_state(policy, policy::check))
        .layer(axum::middleware::from_fn(log::request))
        .with_state(shared)
}

/// `?problems=200`: a 422 (problems in the scenario) or a 404 (no such rule) answered as
/// 200 with the same body and `X-Subsim-Status` giving the real status. The page asks this
/// way because browsers log every 4xx answer as a console error, and a scenario being
/// edited is often broken for a moment.
async fn soft_problems(request: Request<Body>, next: axum::middleware::Next) -> Response {
    let soft = request
        .uri()
        .query()
        .is_some_and(|query| query.split('&').any(|pair| pair == "problems=200"));
    let mut response = next.run(request).await;
    let status = response.status();
    if soft && (status == StatusCode::UNPROCESSABLE_ENTITY || status == StatusCode::NOT_FOUND) {
        *response.status_mut() = StatusCode::OK;
        response
            .headers_mut()
            .insert("x-subsim-status", HeaderValue::from(status.as_u16()));
    }
    response
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such page or API route")
}

async fn wrong_method() -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        "this route does not take that method: the pages are GET, the API's \
         /api/check, /api/run, /api/panel and /api/compare are POST",
    )
}

/// `{"error": message}` with `status`.
pub fn error(status: StatusCode, message: &str) -> Response {
    super::json::response(status, &json!({ "error": message }))
}

/// `GET /api/scenarios`: every shipped scenario, the demo first, then by family (folder).
async fn scenarios() -> Response {
    super::json::ok(page::scenario_list())
}

/// `GET /api/scenario/PATH`: a shipped scenario's text.
async fn scenario(Path(path): Path<String>) -> Response {
    match page::scenario_source(&path) {
        Some(source) => {
            ([(header::CONTENT_TYPE, "text/yaml; charset=utf-8")], source).into_response()
        }
        None => error(StatusCode::NOT_FOUND, "no shipped scenario has that path"),
    }
}

/// `GET /api/explain/ID`: what `subsim explain ID` says of a rule or open question.
async fn explain(Path(id): Path<String>) -> Response {
    match crate::explain::describe_id(&id) {
        Some(text) => super::json::ok(&json!({ "id": id.to_ascii_uppercase(), "text": text })),
        None => error(
            StatusCode::NOT_FOUND,
            "no rule ID or open question (Q-N) has that name",
        ),
    }
}

/// A request body as the API takes it: the scenario, its overrides, the seed.
pub struct Posted {
    pub scenario: String,
    /// What diagnostics and the trace call the file (`"name"`; default `scenario.yaml`).
    pub name: String,
    pub set: Vec<Override>,
    pub seed: Option<u64>,
    pub fields: Map<String, Value>,
}

/// Reads and parses a JSON body within the body budget and the client timeout: 413 past
/// the budget (told by `Content-Length` before anything is read, or found while reading),
/// 408 when the client stops sending, 400 for broken framing (a bad chunk size, a body
/// shorter than its `Content-Length`) and for anything that is not the API's JSON, 503
/// when the bodies being read already hold the server's body memory (`--body-memory`).
pub async fn read_body(shared: &Shared, request: Request<Body>) -> Result<Posted, Response> {
    let budget = shared.budgets.body_bytes;
    let too_large = |count: Option<u64>| {
        error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "{} (send a smaller scenario: the API takes at most 1 MiB)",
                budget.over("the request body", count)
            ),
        )
    };
    let announced = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if let Some(length) = announced {
        if budget.check("the request body", length).is_err() {
            return Err(too_large(Some(length)));
        }
    }
    let limit = usize::try_from(budget.limit).unwrap_or(usize::MAX);
    let reading = collect(shared, request.into_body(), announced, limit);
    let (bytes, held) = match tokio::time::timeout(shared.budgets.client_timeout, reading).await {
        Ok(Err(Unread::NoMemory)) => return Err(no_body_memory()),
        Err(_) => {
            return Err(error(
                StatusCode::REQUEST_TIMEOUT,
                &format!(
                    "the body did not arrive within {} (`--client-timeout`): send the whole \
                     request at once",
                    super::stream::words(shared.budgets.client_timeout)
                ),
            ))
        }
        Ok(Err(Unread::TooLarge)) => return Err(too_large(None)),
        Ok(Err(Unread::Framing(why))) => {
            return Err(error(
                StatusCode::BAD_REQUEST,
                &format!(
                    "the body is malformed ({why}): a bad chunk size, or fewer bytes than its \
                     Content-Length; send it again whole"
                ),
            ))
        }
        Ok(Ok(read)) => read,
    };
    let posted = parse_body(&bytes).map_err(|message| error(StatusCode::BAD_REQUEST, &message));
    drop(bytes);
    drop(held);
    posted
}

/// Why a body was not read.
enum Unread {
    /// No room in the body memory within [`MEMORY_WAIT`].
    NoMemory,
    TooLarge,
    Framing(String),
}

/// How long a body waits for room in the body memory before it is refused (503 with
/// `Retry-After: 1`): a flood of unfinished bodies holds the memory for up to the client
/// timeout, and an honest client is better told at once to come back.
const MEMORY_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The body's bytes, and the share of the body memory (`Shared::bodies`) they hold: a
/// body with a `Content-Length` reserves all of it before it is read, a chunked one each
/// chunk as it comes.
async fn collect(
    shared: &Shared,
    body: Body,
    announced: Option<u64>,
    limit: usize,
) -> Result<(Vec<u8>, Option<tokio::sync::OwnedSemaphorePermit>), Unread> {
    use futures_util::StreamExt as _;
    let reserve = |bytes: usize| {
        let permits = u32::try_from(bytes).unwrap_or(u32::MAX);
        let acquired = shared.bodies.clone().acquire_many_owned(permits);
        let free = shared.bodies.available_permits();
        async move {
            match tokio::time::timeout(MEMORY_WAIT, acquired).await {
                Ok(Ok(permit)) => Ok(permit),
                Ok(Err(_)) | Err(_) => {
                    tracing::warn!(bytes, free, "refused a body: the body memory is full");
                    Err(Unread::NoMemory)
                }
            }
        }
    };
    let mut held = match announced {
        Some(length) => {
            let length = usize::try_from(length).unwrap_or(usize::MAX).min(limit);
            Some(reserve(length).await?)
        }
        None => None,
    };
    let mut bytes = Vec::with_capacity(announced.map_or(0, |length| length as usize).min(limit));
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|why| Unread::Framing(why.to_string()))?;
        if bytes.len() + chunk.len() > limit {
            return Err(Unread::TooLarge);
        }
        if announced.is_none() && !chunk.is_empty() {
            let more = reserve(chunk.len()).await?;
            match &mut held {
                Some(held) => held.merge(more),
                None => held = Some(more),
            }
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((bytes, held))
}

/// 503: the bodies being read hold all of `--body-memory`.
fn no_body_memory() -> Response {
    let mut response = error(
        StatusCode::SERVICE_UNAVAILABLE,
        "the server is reading as many request bodies as its memory for them allows \
         (`subsim serve --body-memory`); try again in a second",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// The API's JSON body: `{"scenario": TEXT, "set": {PATH: VALUE}, "seed": N, …}`.
fn parse_body(bytes: &[u8]) -> Result<Posted, String> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|error| format!("the body is not JSON: {error}"))?;
    let Value::Object(fields) = value else {
        return Err("the body must be a JSON object: {\"scenario\": \"…YAML…\"}".to_string());
    };
    let scenario = match fields.get("scenario") {
        Some(Value::String(text)) => text.clone(),
        _ => return Err("`scenario` must be the scenario's YAML text, as a string".to_string()),
    };
    let set = match fields.get("set") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(set)) => overrides(set)?,
        Some(_) => {
            return Err("`set` must be an object of PATH: VALUE, as `--set PATH=VALUE`".into())
        }
    };
    let name = match fields.get("name") {
        None | Some(Value::Null) => "scenario.yaml".to_string(),
        Some(Value::String(name)) if file_name(name) => name.clone(),
        Some(_) => {
            return Err(
                "`name` must be a file name (no folder, at most 255 bytes), \
                        such as \"demo.yaml\""
                    .into(),
            )
        }
    };
    let seed = match fields.get("seed") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_u64()
                .ok_or("`seed` must be a whole number from 0 to 18446744073709551615")?,
        ),
    };
    Ok(Posted {
        scenario,
        name,
        set,
        seed,
        fields,
    })
}

/// A plain file name: no folder, no control characters, not `.` or `..`.
fn file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\'])
        && !name.chars().any(char::is_control)
}

/// `set` as `--set` overrides, in key order.
fn overrides(set: &Map<String, Value>) -> Result<Vec<Override>, String> {
    set.iter()
        .map(|(path, value)| {
            let value = match value {
                Value::String(text) => text.clone(),
                Value::Number(_) | Value::Bool(_) => value.to_string(),
                _ => {
                    return Err(format!(
                        "`set.{path}` must be a string, number or true/false (a YAML value)"
                    ))
                }
            };
            Override::parse(&format!("{path}={value}"))
        })
        .collect()
}

/// Loads posted scenario text as `subsim run FILE --set …` loads a file: the same parser,
/// its `file:` and `agent_dirs` paths resolved in the server's empty folder (and confined
/// to it), then clamped to the server's safety limits.
pub fn load(shared: &Shared, posted: &Posted) -> Result<Loaded, Diagnostics> {
    let mut loaded = subsim_scenario::parse_scenario_under(
        &posted.scenario,
        &posted.name,
        &shared.empty_dir,
        &posted.set,
        &subsim_scenario::Options::default(),
    )?;
    clamp(&mut loaded.spec.session.limits, &shared.budgets.limits);
    Ok(loaded)
}

/// Each of `limits` no higher than the server's.
fn clamp(limits: &mut subsim_engine::spec::Limits, server: &subsim_engine::spec::Limits) {
    limits.max_events = limits.max_events.min(server.max_events);
    limits.max_time = limits.max_time.min(server.max_time);
    limits.max_agents = limits.max_agents.min(server.max_agents);
    limits.max_steps = Some(limits.steps().min(server.steps()));
    limits.max_running = limits.max_running.min(server.max_running);
    limits.max_held = limits.max_held.min(server.max_held);
    limits.max_instant_steps = limits.max_instant_steps.min(server.max_instant_steps);
    limits.max_silent_steps = limits.max_silent_steps.min(server.max_silent_steps);
    limits.max_explore_steps = limits.max_explore_steps.min(server.max_explore_steps);
}

/// 422 with every problem: message, line, column and help, as `check` prints them.
pub fn diagnostics(problems: &Diagnostics) -> Response {
    let list: Vec<Value> = problems
        .problems
        .iter()
        .map(|problem| {
            json!({
                "message": problem.message,
                "line": problem.line,
                "column": problem.column,
                "help": problem.help,
                "file": problem.file,
            })
        })
        .collect();
    super::json::response(
        StatusCode::UNPROCESSABLE_ENTITY,
        &json!({ "diagnostics": list }),
    )
}

/// Runs `work` on a thread of its own (loading and running are synchronous), holding a run
/// slot ([`admit`]).
pub async fn blocking<T: Send + 'static>(
    shared: &Arc<Shared>,
    work: impl FnOnce(&Shared) -> T + Send + 'static,
) -> Result<T, Response> {
    let permit = admit(shared).await?;
    let shared = shared.clone();
    let (answer_tx, answer_rx) = tokio::sync::oneshot::channel();
    spawn_run(move || {
        let answer = work(&shared);
        drop(permit);
        let _ = answer_tx.send(answer);
    })
    .map_err(|problem| thread_refused(&problem))?;
    answer_rx
        .await
        .map_err(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "the run failed"))
}

/// Starts `work` on a thread of its own (tokio's blocking pool panics on a thread it
/// cannot start; this answers the error, for [`thread_refused`]).
pub fn spawn_run(work: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("subsim-run".into())
        .spawn(work)
        .map(drop)
}

/// 503: the run's thread could not start (memory or threads exhausted, e.g. under
/// `ulimit -v`): the request is refused, the server goes on.
pub fn thread_refused(problem: &std::io::Error) -> Response {
    let mut response = error(
        StatusCode::SERVICE_UNAVAILABLE,
        &format!("the server cannot start a thread for the run ({problem}); try again later"),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// A run slot: at once when one is free; else a place in the queue (first come, first
/// served) for at most the client timeout; 503 when the queue is full or the wait too long.
pub async fn admit(shared: &Shared) -> Result<tokio::sync::OwnedSemaphorePermit, Response> {
    if let Ok(permit) = shared.runs.clone().try_acquire_owned() {
        return Ok(permit);
    }
    let waiting = &shared.waiting;
    if waiting.fetch_add(1, Ordering::SeqCst) >= shared.budgets.queue {
        waiting.fetch_sub(1, Ordering::SeqCst);
        return Err(busy());
    }
    let waited = tokio::time::timeout(
        shared.budgets.client_timeout,
        shared.runs.clone().acquire_owned(),
    )
    .await;
    waiting.fetch_sub(1, Ordering::SeqCst);
    match waited {
        Ok(Ok(permit)) => Ok(permit),
        Ok(Err(_)) | Err(_) => Err(busy()),
    }
}

/// 503: every run slot is taken and the queue is full.
pub fn busy() -> Response {
    let mut response = error(
        StatusCode::SERVICE_UNAVAILABLE,
        "the server is running as many scenarios as it allows (--max-runs); try again in a second",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// `POST /api/check`: 200 `{"ok": true, "warnings", "name", "description"}`, or 422 with
/// the problems.
async fn check(State(shared): State<Arc<Shared>>, request: Request<Body>) -> Response {
    let posted = match read_body(&shared, request).await {
        Ok(posted) => posted,
        Err(response) => return response,
    };
    let checked = blocking(&shared, move |shared| {
        load(shared, &posted).map(|loaded| {
            let description = loaded.spec.description.clone().unwrap_or_default();
            (warnings(&loaded), loaded.spec.name, description)
        })
    })
    .await;
    match checked {
        // The scenario's own name and description, so the page's picker and description
        // follow an edit or a shared link.
        Ok(Ok((warnings, name, description))) => super::json::ok(&json!({
            "ok": true,
            "warnings": warnings,
            "name": name,
            "description": description.trim_end(),
        })),
        Ok(Err(problems)) => diagnostics(&problems),
        Err(response) => response,
    }
}

fn warnings(loaded: &Loaded) -> Vec<Value> {
    loaded
        .warnings
        .iter()
        .map(|problem| {
            json!({
                "message": problem.message,
                "line": problem.line,
                "column": problem.column,
                "help": problem.help,
            })
        })
        .collect()
}

/// `POST /api/panel` with `"at_us"`: the panel and `/tasks` then, as `subsim panel` shows
/// them.
async fn panel(State(shared): State<Arc<Shared>>, request: Request<Body>) -> Response {
    let posted = match read_body(&shared, request).await {
        Ok(posted) => posted,
        Err(response) => return response,
    };
    let Some(at) = posted.fields.get("at_us").and_then(Value::as_u64) else {
        return error(
            StatusCode::BAD_REQUEST,
            "`at_us` must be the instant, in microseconds",
        );
    };
    let answer = blocking(&shared, move |shared| match load(shared, &posted) {
        Err(problems) => diagnostics(&problems),
        Ok(loaded) => match crate::panel::at_instant(
            loaded.spec,
            posted.seed,
            subsim_engine::SimTime(at),
            "the scenario",
        ) {
            Ok(text) => super::json::ok(&json!({ "text": text })),
            Err(why) => error(StatusCode::UNPROCESSABLE_ENTITY, &format!("{why:#}")),
        },
    })
    .await;
    match answer {
        Ok(response) | Err(response) => response,
    }
}

/// `POST /api/compare` with `"other": {PATH: VALUE}`: the scenario under `set` (left) and
/// under `other` (right), and where their traces part, as `subsim diff` tells it.
async fn compare(State(shared): State<Arc<Shared>>, request: Request<Body>) -> Response {
    let posted = match read_body(&shared, request).await {
        Ok(posted) => posted,
        Err(response) => return response,
    };
    let other = match posted.fields.get("other") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(set)) => match overrides(set) {
            Ok(other) => other,
            Err(message) => return error(StatusCode::BAD_REQUEST, &message),
        },
        Some(_) => return error(StatusCode::BAD_REQUEST, "`other` must be an object"),
    };
    let answer = blocking(&shared, move |shared| {
        let seed = posted.seed;
        let left = load(shared, &posted)?;
        let right = load(
            shared,
            &Posted {
                set: other,
                ..posted
            },
        )?;
        Ok::<_, Diagnostics>(compare_runs(left, right, seed))
    })
    .await;
    match answer {
        Ok(Ok(text)) => super::json::ok(&json!({ "text": text })),
        Ok(Err(problems)) => diagnostics(&problems),
        Err(response) => response,
    }
}

/// Both runs, and where they part.
fn compare_runs(left: Loaded, right: Loaded, seed: Option<u64>) -> String {
    let run = |loaded: Loaded| {
        let mut trace = subsim_engine::sink::Collect::default();
        let report = crate::run::simulation(loaded.spec, seed).run(&mut trace);
        (trace.events, report)
    };
    let (left, left_report) = run(left);
    let (right, right_report) = run(right);
    let (from, to) = ("as written", "with the controls");
    let mut text = crate::diff::parting(&left, &right, from, to, "the controls");
    for (side, report) in [(from, &left_report), (to, &right_report)] {
        if let Some(limit) = &report.limit {
            text.push_str(&format!("note: the run {side} stopped early: {limit}\n"));
        }
    }
    text
}
