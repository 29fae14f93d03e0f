//! From transcripts to a scenario: finds the subagent files, turns each conversation into
//! steps (Agent calls as `spawn`, a subagent's tool calls as `tool` steps with their
//! measured durations, gaps as `work`, then `report`), collects the observed facts, and
//! renders the YAML.
//!
//! Times: the scenario's zero is the main file's first line. A conversation's script keeps
//! a cursor — where the simulated conversation will be — and writes the gap up to its next
//! action as `work`; after foreground Agent calls the cursor moves to their result, since
//! the simulated caller waits for its children as the real one did.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;
use subsim_rules::model::BuiltIn;
use subsim_rules::spawn::FORK_TYPE;
use subsim_rules::tools::{self, Placement};
use subsim_rules::version::{Gates, Version};
use subsim_rules::{prompt, Mode, PermissionMode};

use super::privacy::scrub;
use super::read::{read_entries, Strictness, MAX_TOTAL_BYTES};
use super::transcript::{prompt_key, Collector, Conversation, Notice, ToolResult, ToolUse};
use super::wire::{Num, Text};
use super::{ImportError, ImportOptions, Imported};

/// A call that reads a background run's output (`TaskOutput`, formerly `AgentOutputTool`):
/// a blocking one is replayed as `wait_for`, any other folded into the `work` around it.
fn reads_output(call: &ToolUse) -> bool {
    matches!(call.name.as_str(), "TaskOutput" | "AgentOutputTool")
}

/// How deep subagent transcripts are followed (a guard against a malformed file naming
/// itself as its own child).
const MAX_NESTING: usize = 8;
/// The most subagent files looked at beside one session.
const MAX_SUBAGENT_FILES: usize = 10_000;
/// What an interrupted or stopped run would have gone on doing after its transcript ends:
/// a margin long enough that the person's stop, replayed at its measured clock time,
/// finds it running despite small drifts of the replay; short enough that in a what-if
/// where the stop comes too early (the run started later) the run simply finishes.
const UNFINISHED_MS: u64 = 60_000;
/// How much longer than the time between an Agent call and its result its
/// `totalDurationMs` may be and still be taken as measured (timestamps are written to the
/// millisecond, but lines of one moment can be a few seconds apart).
const TOTAL_SLACK_MS: u64 = 5_000;
/// The most characters of one prompt, report or command `--keep-text` copies.
const MAX_KEPT_TEXT: usize = 16 * 1024;
/// The longest agent type name kept: a definition's `name` is at most this long (DEF-10),
/// so a longer `subagent_type` names no agent (and as a YAML key it would pass the
/// 1,024 characters a key may have).
const MAX_TYPE_CHARS: usize = 256;
/// A session longer than this (less a margin) is past the simulator's default `max_time`
/// of 30 days: the scenario raises it.
const LONG_SESSION_MS: u64 = 29 * 24 * 3_600 * 1_000;
/// The permission modes the scenario format knows (`session.permission_mode`).
const PERMISSION_MODES: [&str; 6] = [
    "default",
    "acceptEdits",
    "auto",
    "dontAsk",
    "bypassPermissions",
    "plan",
];

/// A subagent transcript found beside the session.
struct SubFile {
    path: PathBuf,
    conv: Conversation,
    claimed: bool,
    /// `agentType` and `description` of `agent-<id>.meta.json` (2.1.x), when present.
    meta: Option<(Option<String>, Option<String>)>,
}

/// One emitted step.
enum Out {
    Work(u64),
    Tool {
        name: String,
        duration_ms: Option<u64>,
        prompt: bool,
        input: Option<String>,
    },
    Spawns(Vec<SpawnOut>),
    WaitFor(String),
    Report(String),
    Fail,
    Comment(String),
}

struct SpawnOut {
    comment: String,
    agent: Option<String>,
    name: String,
    background: bool,
    model: Option<String>,
    isolation: Option<String>,
    prompt: Option<String>,
    behavior: Vec<Out>,
}

/// How an Agent call came back.
enum Outcome {
    /// Ran in the foreground and completed (`totalDurationMs` when given).
    Completed(Option<u64>),
    /// Launched in the background (`async_launched`).
    Launched,
    /// Refused: the type does not exist.
    UnknownType,
    /// The person interrupted it.
    Interrupted,
    /// Another error text.
    Refused(String),
    /// No result in the transcript (the session ended first).
    NoResult,
}

/// One Agent call as [`Builder::spawn`] has read it, for the facts its outcome states.
struct Spawned<'a> {
    call: &'a ToolUse,
    result: Option<&'a ToolResult>,
    outcome: &'a Outcome,
    notice: Option<&'a Notice>,
    name: &'a str,
    /// "<tool> call <name> (<type>)", how the facts name the call.
    who: String,
    /// Until when the behaviour replays what the transcripts show (real time).
    covered_until: i64,
}

fn outcome(result: Option<&ToolResult>) -> Outcome {
    let Some(result) = result else {
        return Outcome::NoResult;
    };
    let status = result.status();
    if status == Some("async_launched") || result.is_async() {
        return Outcome::Launched;
    }
    let total = total_ms(result);
    if status == Some("completed") {
        return Outcome::Completed(total);
    }
    let text = result.text.trim();
    if text.contains("Request interrupted by user") {
        return Outcome::Interrupted;
    }
    if text.contains("Agent type '") && text.contains("not found") {
        return Outcome::UnknownType;
    }
    if result.is_error || text.starts_with("Error") || text.starts_with("<tool_use_error>") {
        return Outcome::Refused(text.to_string());
    }
    Outcome::Completed(total)
}

struct Builder {
    options: ImportOptions,
    warnings: Vec<String>,
    subs: BTreeMap<String, SubFile>,
    t0: i64,
    session_end: i64,
    names: BTreeSet<String>,
    /// For each base name `unique_name` was asked for, the next suffix to try: every
    /// smaller one is taken (names are never given back), so the search goes on from
    /// there instead of from 2 (from 2, n calls of one name took n² steps: 20,000 took
    /// over 30 s).
    next_suffix: HashMap<String, u64>,
    agent_names: HashMap<String, String>,
    facts: Vec<(String, String)>,
    stops: Vec<(u64, String)>,
    /// `(agent name, tool, prompt number)` of each prompt the person denied.
    denials: Vec<(String, String, u32)>,
    custom_types: BTreeSet<String>,
    refused_types: BTreeSet<String>,
    spawn_calls: usize,
    /// `session.kind` when the transcript says it was not an interactive session.
    kind: Option<&'static str>,
    /// The main file's `entrypoint`, when its lines carry one.
    entrypoint: Option<String>,
    /// The main file's first `permissionMode`.
    permission_mode: Option<String>,
    /// The version gates the scenario will run under: the transcript's version, else the
    /// simulator's default (as `session.version` is written).
    gates: Gates,
    /// How long the person took to answer each prompt they denied (ms), in order.
    answer_times: Vec<u64>,
    /// What the Agent calls show about fork mode (FORK-1/FORK-3).
    fork_evidence: ForkEvidence,
    /// Where each response of main's began: where the replay can be cut to fit.
    marks: Vec<Mark>,
    main_notices: Notices,
    /// Unclaimed subagent files by [`prompt_key`] of their task prompt, in id order.
    by_prompt: HashMap<u64, VecDeque<String>>,
    /// Unclaimed subagent files by the `description` of their `.meta.json`, in id order.
    by_meta: HashMap<String, VecDeque<String>>,
}

/// The state of the import before one response of main's: cutting the replay there
/// drops that response and everything after it, facts and person actions included.
#[derive(Clone, Copy, Debug)]
struct Mark {
    steps: usize,
    facts: usize,
    denials: usize,
    stops: usize,
    answers: usize,
    spawn_calls: usize,
    line: usize,
}

/// What a scenario file may hold, with room for the header and the session block: bytes
/// (the loader reads 4 MiB) and an over-estimate of YAML values (the loader reads
/// 100,000).
const FIT_BYTES: usize = 3_500_000;
const FIT_VALUES: usize = 90_000;

/// An over-estimate of the YAML values (scalars, lists, maps) a rendered text holds:
/// every key is two, every list item and flow map one more.
fn values_in(text: &str) -> usize {
    text.matches(": ").count() * 2
        + text.matches(":\n").count() * 2
        + text.matches("- ").count()
        + text.matches('{').count()
        + 1
}

/// What a transcript's Agent calls show about fork mode.
#[derive(Clone, Copy, Debug, Default)]
struct ForkEvidence {
    /// Line of a call of main's that ran in the foreground: with fork mode on every call
    /// of Claude's runs in the background unless background tasks are disabled (FGBG-1).
    foreground: Option<usize>,
    /// Line of a call of main's launched in the background.
    background: Option<usize>,
    /// Line of a call that passes `run_in_background`, which fork mode removes (FORK-3).
    run_in_background: Option<usize>,
    /// Line of a call asking for a `fork` (only while fork mode is on, FORK-3).
    fork: Option<usize>,
}

/// A conversation's completion notifications, found by agent id or by call id.
#[derive(Default)]
struct Notices {
    list: Vec<Notice>,
    by_agent: HashMap<String, usize>,
    by_call: HashMap<String, usize>,
}

impl Notices {
    fn new(list: Vec<Notice>) -> Notices {
        let mut by_agent = HashMap::new();
        let mut by_call = HashMap::new();
        for (index, notice) in list.iter().enumerate() {
            if let Some(id) = &notice.agent_id {
                by_agent.entry(id.clone()).or_insert(index);
            }
            if let Some(id) = &notice.tool_use_id {
                by_call.entry(id.clone()).or_insert(index);
            }
        }
        Notices {
            list,
            by_agent,
            by_call,
        }
    }

    /// The first notification of the agent `agent_id` or of the call `call_id`.
    fn find(&self, agent_id: Option<&str>, call_id: &str) -> Option<&Notice> {
        let by_agent = agent_id.and_then(|id| self.by_agent.get(id));
        let by_call = self.by_call.get(call_id);
        let index = match (by_agent, by_call) {
            (Some(a), Some(c)) => *a.min(c),
            (Some(a), None) => *a,
            (None, Some(c)) => *c,
            (None, None) => return None,
        };
        self.list.get(index)
    }
}

pub(super) fn import(path: &Path, options: ImportOptions) -> Result<Imported, ImportError> {
    let mut warnings = Vec::new();
    let mut budget = MAX_TOTAL_BYTES;
    let main = read_conversation(path, Strictness::Main, &mut budget, &mut warnings)?;
    if !main.unknown_types.is_empty() {
        let listed: Vec<String> = main
            .unknown_types
            .iter()
            .map(|(kind, count)| format!("`{kind}` ({count})"))
            .collect();
        warnings.push(format!(
            "skipped line types the importer does not know: {}",
            listed.join(", ")
        ));
    }
    let stem = path
        .file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or("session")
        .to_string();
    let session_id = main.session_id.clone().unwrap_or_else(|| stem.clone());
    let subs = find_subagents(path, &stem, &session_id, &mut budget, &mut warnings);
    let t0 = main.start_ms.unwrap_or(0);
    // Read first, for the gates the replayed runs' tools depend on; its warnings keep their
    // place after the replay's.
    let mut version_warnings = Vec::new();
    let session_version = session_version(&main.versions, &mut version_warnings);
    let mut builder = Builder {
        options,
        warnings,
        session_end: main.end_ms.unwrap_or(t0),
        subs,
        t0,
        names: BTreeSet::new(),
        next_suffix: HashMap::new(),
        agent_names: HashMap::new(),
        facts: Vec::new(),
        stops: Vec::new(),
        denials: Vec::new(),
        custom_types: BTreeSet::new(),
        refused_types: BTreeSet::new(),
        spawn_calls: 0,
        kind: None,
        answer_times: Vec::new(),
        entrypoint: main.entrypoint.clone(),
        permission_mode: main.permission_mode.clone(),
        gates: Gates::for_version(session_version.unwrap_or_default()),
        fork_evidence: ForkEvidence::default(),
        marks: Vec::new(),
        main_notices: Notices::new(main.notices.clone()),
        by_prompt: HashMap::new(),
        by_meta: HashMap::new(),
    };
    builder.index_subs();
    let main_steps = builder.script(&main, t0, None, 0);
    if builder.spawn_calls == 0 {
        builder.warnings.push(
            "the transcript holds no Agent calls (Task/Agent): the scenario replays no \
             subagent, only its single fact that none was asked for"
                .to_string(),
        );
    }
    for sub in builder.subs.values() {
        if !sub.claimed {
            builder.warnings.push(format!(
                "{}: no Agent call of the session launched this subagent; it is not replayed",
                sub.path.display()
            ));
        }
    }
    builder.warnings.append(&mut version_warnings);
    let version = session_version.map(|v| v.to_string());
    // `claude -p` writes `sdk-cli`, the Agent SDKs `sdk-ts` / `sdk-py`; the terminal `cli`.
    let kind = match main.entrypoint.as_deref() {
        Some("sdk-cli") => Some("headless"),
        Some(entry) if entry.starts_with("sdk") => Some("sdk"),
        _ => None,
    };
    builder.kind = kind;
    let mut main_steps = main_steps;
    builder.fit(&mut main_steps);
    let yaml = builder.render(
        path,
        &session_id,
        version.as_deref(),
        main.model.as_deref(),
        &main_steps,
    );
    let subagent_files = builder
        .subs
        .values()
        .filter(|sub| sub.claimed)
        .map(|sub| sub.path.clone())
        .collect();
    Ok(Imported {
        yaml,
        warnings: builder.warnings,
        facts: builder.facts.into_iter().map(|(what, _)| what).collect(),
        spawn_calls: builder.spawn_calls,
        subagent_files,
    })
}

/// The agent id of a subagent file name (`agent-<id>.jsonl`), or `None` for other files
/// and for compaction runs (`agent-acompact-*`).
fn agent_file_id(name: &str) -> Option<&str> {
    let id = name.strip_prefix("agent-")?.strip_suffix(".jsonl")?;
    if id.is_empty() || id.starts_with("acompact") {
        return None;
    }
    Some(id)
}

/// The subagent transcripts of the session: `<session-id>/subagents/agent-<id>.jsonl`
/// (2.1.x) and `agent-<id>.jsonl` beside the main file whose `sessionId` is the session's
/// (2.0.x; that folder holds every session's files). Warm-up sidechains are left out.
fn find_subagents(
    main: &Path,
    stem: &str,
    session_id: &str,
    budget: &mut u64,
    warnings: &mut Vec<String>,
) -> BTreeMap<String, SubFile> {
    let dir = main.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut candidates: Vec<(PathBuf, String)> = Vec::new();
    for folder in [dir.join(stem).join("subagents"), dir.to_path_buf()] {
        let Ok(listing) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut found: Vec<(PathBuf, String)> = listing
            .filter_map(Result::ok)
            .take(MAX_SUBAGENT_FILES)
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let id = agent_file_id(&name)?.to_string();
                entry
                    .file_type()
                    .ok()?
                    .is_file()
                    .then(|| (entry.path(), id))
            })
            .collect();
        found.sort();
        candidates.extend(found);
    }
    let mut subs = BTreeMap::new();
    for (path, id) in candidates {
        if subs.contains_key(&id) {
            continue;
        }
        // The 2.0.x folder holds every session's agent files: look at the first line's
        // `sessionId` before reading (and spending the byte budget on) a whole file.
        if peek_session_id(&path).is_some_and(|sid| sid != session_id) {
            continue;
        }
        let mut file_warnings = Vec::new();
        let conv = match read_conversation(&path, Strictness::Subagent, budget, &mut file_warnings)
        {
            Ok(conv) => conv,
            Err(error) => {
                warnings.push(format!(
                    "{error}; this subagent is replayed from its result only"
                ));
                continue;
            }
        };
        if conv
            .session_id
            .as_deref()
            .is_some_and(|sid| sid != session_id)
        {
            continue; // another session's subagent (2.0.x keeps them all in one folder)
        }
        if conv.warmup {
            continue; // 2.0.x warm-up sidechain, not a spawn
        }
        warnings.extend(file_warnings);
        subs.insert(
            id,
            SubFile {
                meta: read_meta(&path),
                path,
                conv,
                claimed: false,
            },
        );
    }
    subs
}

/// `agentType` and `description` of the `agent-<id>.meta.json` beside a subagent file
/// (read from at most 64 KiB; anything unreadable is no metadata).
fn read_meta(path: &Path) -> Option<(Option<String>, Option<String>)> {
    use std::io::Read as _;
    let meta_path = path.with_extension("meta.json");
    let mut bytes = Vec::new();
    std::fs::File::open(meta_path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut bytes)
        .ok()?;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    Some((text("agentType"), text("description")))
}

/// The `sessionId` of a file's first line, read from at most its first 64 KiB; `None` when
/// that line cannot tell (the whole file is then read and checked).
fn peek_session_id(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let first = text.lines().find(|line| !line.trim().is_empty())?;
    let value: Value = serde_json::Deserializer::from_str(first)
        .into_iter::<Value>()
        .next()?
        .ok()?;
    value.get("sessionId")?.as_str().map(str::to_string)
}

/// A name usable in the scenario: lower-case words of `text` joined by `-`.
/// The longest base an imported run's name keeps, in characters: room is left for a
/// `-N` suffix within [`crate::check::MAX_RUN_NAME`].
const MAX_BASE_NAME: usize = crate::check::MAX_RUN_NAME - 21;

/// `main` and `a<digits>` are how `expect:` and `user:` name runs by id: a run named so
/// would be mistaken for another (a call named `a1` and the first subagent, `a1`).
fn looks_like_agent_id(name: &str) -> bool {
    name == "main"
        || name
            .strip_prefix('a')
            .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

fn slug(text: &str, words: usize) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .take(words)
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join("-")
}

fn ms_text(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{}.{:03}s", ms / 1000, ms % 1000)
    }
}

/// The session's version: the first `version` of the main file that is one (a value
/// that is not `major.minor.patch` is said and skipped); a warning names any later change
/// (a session resumed with another CLI) and a file without one.
fn session_version(versions: &[(usize, String)], warnings: &mut Vec<String>) -> Option<Version> {
    let mut found: Option<(usize, Version)> = None;
    for (line, text) in versions {
        match text.parse::<Version>() {
            Ok(version) if found.is_none() => found = Some((*line, version)),
            Ok(version) => {
                if found.is_some_and(|(_, first)| first != version) {
                    warnings.push(format!(
                        "the session was resumed with another version ({version} at line \
                         {line}); the scenario uses {}",
                        found.map_or(String::new(), |(_, first)| first.to_string())
                    ));
                }
            }
            Err(_) => warnings.push(format!(
                "line {line}: `version` {} is not a version (major.minor.patch); ignored",
                quote(&one_line(text, 40))
            )),
        }
    }
    if found.is_none() {
        warnings.push(
            "the transcript names no version; the scenario runs under the simulator's default \
             (set session.version to the session's)"
                .to_string(),
        );
    }
    found.map(|(_, version)| version)
}

/// Reads one transcript file into its conversation, a line at a time.
fn read_conversation(
    path: &Path,
    strictness: Strictness,
    budget: &mut u64,
    warnings: &mut Vec<String>,
) -> Result<Conversation, ImportError> {
    let mut collector = Collector::default();
    read_entries(path, strictness, budget, warnings, &mut |line, raw| {
        collector.push(line, raw);
    })?;
    Ok(collector.finish())
}

/// The longest measured duration taken as written (a year): beyond it a figure is not a
/// measurement, and in microseconds it would overflow the scenario's durations.
const MAX_MEASURED_MS: u64 = 365 * 24 * 3_600 * 1_000;

/// A measured duration as JSON wrote it, in whole milliseconds, or why it is not one
/// (negative, not finite, over [`MAX_MEASURED_MS`], not a number).
fn duration_ms(value: Num) -> Result<Option<u64>, String> {
    let ms = match value {
        Num::Missing => return Ok(None),
        Num::Int(ms) => ms as f64,
        Num::Float(ms) => ms,
        Num::Other => return Err("is not a number".to_string()),
    };
    // 1e308 is shown as written, not as its 309 digits.
    let shown = if ms.abs() >= 1e15 {
        format!("{ms:e}")
    } else {
        format!("{ms}")
    };
    if !ms.is_finite() || ms < 0.0 {
        return Err(format!("is {shown}, not a duration"));
    }
    if ms > MAX_MEASURED_MS as f64 {
        return Err(format!("is {shown} ms, more than a year"));
    }
    Ok(Some(ms.round() as u64))
}

/// `totalDurationMs` of a result, when it is a usable duration.
fn total_ms(result: &ToolResult) -> Option<u64> {
    duration_ms(result.total_duration()).ok().flatten()
}

/// `duration_ms` of a notification's `<usage>`, read as a JSON number.
fn notice_duration(notice: &Notice) -> Result<Option<u64>, String> {
    let Some(token) = &notice.duration_ms else {
        return Ok(None);
    };
    match serde_json::from_str::<serde_json::Value>(token) {
        Ok(serde_json::Value::Number(number)) => match number.as_u64() {
            Some(ms) => duration_ms(Num::Int(i128::from(ms))),
            None => duration_ms(number.as_f64().map_or(Num::Other, Num::Float)),
        },
        _ => Err(format!("`{}` is not a number", one_line(token, 40))),
    }
}

/// When a call started: for a foreground call that completed, its result's time less its
/// `totalDurationMs` (never before the call was written); otherwise when it was written.
fn measured_start(call: &ToolUse, result: Option<&ToolResult>) -> i64 {
    let Some(result) = result.filter(|_| call.is_spawn()) else {
        return call.t_ms;
    };
    let completed = result.status() == Some("completed");
    match total_ms(result).and_then(|total| i64::try_from(total).ok()) {
        Some(total) if completed => result.t_ms.saturating_sub(total).max(call.t_ms),
        _ => call.t_ms,
    }
}

/// The `work` that keeps a run going until a stop at `stop_at` (real time) finds it
/// running: from where its transcript ends to the stop, plus [`UNFINISHED_MS`].
fn unfinished(covered_until: i64, stop_at: i64) -> u64 {
    u64::try_from(stop_at.saturating_sub(covered_until))
        .unwrap_or(0)
        .saturating_add(UNFINISHED_MS)
}

/// `text` as a double-quoted YAML scalar with YAML's own escapes (U+2028, controls and
/// overrides as `\uXXXX`), which subsim and other YAML readers load back as the same text.
fn quote(text: &str) -> String {
    subsim_escape::yaml::quoted(text)
}

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        // A comment is one line for YAML readers and terminals alike (some readers break
        // lines at U+2028/U+2029).
        .map(|c| {
            if c.is_control() || subsim_escape::terminal::is_hostile(c) {
                ' '
            } else {
                c
            }
        })
        .collect();
    let flat = flat.trim();
    if flat.chars().count() > max {
        let cut: String = flat.chars().take(max).collect();
        format!("{cut}…")
    } else {
        flat.to_string()
    }
}

impl Builder {
    fn text(&self, text: &str) -> String {
        if self.options.keep_text {
            text.to_string()
        } else {
            scrub(text)
        }
    }

    /// A text `--keep-text` copies, cut to [`MAX_KEPT_TEXT`] characters (with a warning
    /// naming the call's line) so that the scenario stays within what a scenario file may
    /// hold (4 MiB).
    fn kept_text(&mut self, text: &str, what: &str, line: usize) -> String {
        let Some((cut, _)) = text.char_indices().nth(MAX_KEPT_TEXT) else {
            return text.to_string();
        };
        self.warnings.push(format!(
            "the {what} of the call at line {line} is {} characters; the first {MAX_KEPT_TEXT} \
             are kept (a scenario file holds at most 4 MiB)",
            text.chars().count()
        ));
        format!("{}…", &text[..cut])
    }

    fn fact(&mut self, what: String, yaml: String) {
        self.facts.push((what, yaml));
    }

    fn unique_name(&mut self, wanted: &str) -> String {
        let base = if wanted.is_empty() {
            "agent".to_string()
        } else if wanted.chars().count() > MAX_BASE_NAME {
            // A scenario's names are at most `MAX_RUN_NAME` characters, suffix included.
            let cut: String = wanted.chars().take(MAX_BASE_NAME).collect();
            cut.trim_end_matches('-').to_string()
        } else {
            wanted.to_string()
        };
        let mut name = base.clone();
        let next = self.next_suffix.entry(base.clone()).or_insert(2);
        if *next > 2 {
            name = format!("{base}-{next}");
            *next += 1;
        }
        while self.names.contains(&name) || looks_like_agent_id(&name) {
            name = format!("{base}-{next}");
            *next += 1;
        }
        self.names.insert(name.clone());
        name
    }

    fn rel(&self, t_ms: i64) -> u64 {
        u64::try_from(t_ms.saturating_sub(self.t0)).unwrap_or(0)
    }

    /// The steps of one conversation. `owner` is the name of the subagent it belongs to
    /// (`None` for main) and the tools its replayed run will have ([`Builder::run_tools`]):
    /// a call of any other tool is folded into the surrounding `work`, so that the replay
    /// does not lose its time to a refusal the real session did not have.
    fn script(
        &mut self,
        conv: &Conversation,
        start: i64,
        owner: Option<(&str, &[String])>,
        depth: usize,
    ) -> Vec<Out> {
        let mut steps = Vec::new();
        let mut cursor = start;
        // Prompts of this run so far (the trace numbers them 1, 2, …).
        let mut prompts = 0u32;
        let notices = Notices::new(conv.notices.clone());
        // Calls of one response share a message id; keep the order of first appearance.
        let mut groups: Vec<Vec<&ToolUse>> = Vec::new();
        let mut group_of: HashMap<&str, usize> = HashMap::new();
        for call in &conv.calls {
            match group_of.get(call.message_id.as_str()) {
                Some(&index) => groups[index].push(call),
                None => {
                    group_of.insert(&call.message_id, groups.len());
                    groups.push(vec![call]);
                }
            }
        }
        for group in groups {
            if owner.is_none() {
                self.mark(steps.len(), group.first().map_or(0, |call| call.line));
            }
            // A foreground call that completed started at (result − totalDurationMs), the
            // measured start; other calls at the time they were written.
            let group_time = group
                .iter()
                .map(|call| measured_start(call, conv.results.get(&call.id)))
                .min()
                .unwrap_or(cursor);
            let spawns: Vec<&ToolUse> = group
                .iter()
                .copied()
                .filter(|call| call.is_spawn())
                .collect();
            let waits: Vec<&ToolUse> = group
                .iter()
                .copied()
                .filter(|call| reads_output(call) && call.input().block.0 != Some(false))
                .collect();
            let tools: Vec<&ToolUse> = match owner {
                None => Vec::new(), // main's own tool calls are folded into its work
                // Spawns and output reads are replayed as `spawn` and `wait_for` (or
                // folded), never as `tool` steps.
                Some((_, kept)) => group
                    .iter()
                    .copied()
                    .filter(|call| {
                        !call.is_spawn() && !reads_output(call) && kept.contains(&call.name)
                    })
                    .collect(),
            };
            if spawns.is_empty() && tools.is_empty() && waits.is_empty() {
                continue;
            }
            if group_time > cursor {
                steps.push(Out::Work((group_time - cursor) as u64));
                cursor = group_time;
            }
            if !spawns.is_empty() {
                let mut calls = Vec::new();
                let mut resume = cursor;
                for call in spawns {
                    if let Some((spawn, back)) =
                        self.spawn(conv, &notices, call, owner.map(|(name, _)| name), depth)
                    {
                        if let Some(back) = back {
                            resume = resume.max(back);
                        }
                        calls.push(spawn);
                    }
                }
                if !calls.is_empty() {
                    steps.push(Out::Spawns(calls));
                }
                cursor = resume;
            }
            for call in waits {
                let id = call
                    .text("task_id")
                    .or_else(|| call.text("agentId"))
                    .or_else(|| call.text("agent_id"));
                let Some(name) = id.and_then(|id| self.agent_names.get(id)).cloned() else {
                    continue; // a shell's output, or an agent this import does not know
                };
                steps.push(Out::WaitFor(name));
                if let Some(result) = conv.results.get(&call.id) {
                    cursor = cursor.max(result.t_ms);
                }
            }
            if !tools.is_empty() {
                // Calls of one response run together: ordered by when each came back,
                // each step lasts from the previous return to its own, so the total and
                // every return time are kept.
                let mut timed: Vec<(&ToolUse, Option<&ToolResult>)> = tools
                    .iter()
                    .map(|call| (*call, conv.results.get(&call.id)))
                    .collect();
                timed.sort_by_key(|(call, result)| result.map_or(call.t_ms, |r| r.t_ms));
                for (call, result) in timed {
                    let auto_denied = result.is_some_and(|result| {
                        result.text.contains("auto-denied")
                            || result.text.contains("prompts unavailable")
                    });
                    let person_denied = result.is_some_and(|result| {
                        result
                            .text
                            .contains("doesn't want to proceed with this tool use")
                            || result.text.contains("tool use was rejected")
                    });
                    let input = if self.options.keep_text && call.name == "Bash" {
                        call.text("command")
                            .map(|text| self.kept_text(text, "Bash command", call.line))
                    } else {
                        None
                    };
                    if person_denied && !auto_denied {
                        // The person said no: the step prompts, and `user.answers` denies
                        // exactly that prompt (the others keep the default answer).
                        prompts += 1;
                        if let Some((name, _)) = owner {
                            self.denials
                                .push((name.to_string(), call.name.clone(), prompts));
                            self.fact(
                                format!("the person denied {name}'s {} call", call.name),
                                format!(
                                    "event: {{kind: permission_answered, agent: {}, tool: {}, answer: deny}}",
                                    quote(name),
                                    quote(&call.name)
                                ),
                            );
                        }
                        steps.push(Out::Tool {
                            name: call.name.clone(),
                            duration_ms: None,
                            prompt: true,
                            input,
                        });
                        // The time up to the answer is the person's: the scenario's think
                        // time stands for it (not the next `work`).
                        if let Some(result) = result {
                            let answered = u64::try_from(result.t_ms.saturating_sub(cursor));
                            self.answer_times.push(answered.unwrap_or(0));
                            cursor = cursor.max(result.t_ms);
                        }
                        continue;
                    }
                    if auto_denied {
                        prompts += 1;
                        if let Some((name, _)) = owner {
                            self.fact(
                                format!("{name}'s {} call was auto-denied (no one to ask)", call.name),
                                format!(
                                    "event: {{kind: permission_requested, agent: {}, tool: {}, auto_denied: true}}",
                                    quote(name),
                                    quote(&call.name)
                                ),
                            );
                        }
                        steps.push(Out::Tool {
                            name: call.name.clone(),
                            duration_ms: None,
                            prompt: true,
                            input,
                        });
                        continue;
                    }
                    let end = result.map_or(call.t_ms, |result| result.t_ms);
                    let duration = end.saturating_sub(cursor).max(0) as u64;
                    cursor = cursor.max(end);
                    steps.push(Out::Tool {
                        name: call.name.clone(),
                        duration_ms: Some(duration),
                        prompt: false,
                        input,
                    });
                }
            }
        }
        if owner.is_some() {
            let end = conv.end_ms.unwrap_or(cursor);
            if end > cursor {
                steps.push(Out::Work((end - cursor) as u64));
            }
        }
        steps
    }

    /// Marks the start of one response of main's (see [`Mark`]).
    fn mark(&mut self, steps: usize, line: usize) {
        self.marks.push(Mark {
            steps,
            facts: self.facts.len(),
            denials: self.denials.len(),
            stops: self.stops.len(),
            answers: self.answer_times.len(),
            spawn_calls: self.spawn_calls,
            line,
        });
    }

    /// Cuts the replay before the first response of main's that would take it past what
    /// a scenario file may hold, and says what was dropped: how many Agent calls, from
    /// which line, and the lines of the first of them.
    fn fit(&mut self, main: &mut Vec<Out>) {
        let (mut bytes, mut values) = (0usize, 0usize);
        let step_cost = |steps: &[Out]| {
            let mut text = String::new();
            render_steps(&mut text, steps, 2);
            (text.len(), values_in(&text))
        };
        let marks = std::mem::take(&mut self.marks);
        for (index, mark) in marks.iter().enumerate() {
            let next = marks.get(index + 1);
            let end = next.map_or(main.len(), |next| next.steps);
            let facts_end = next.map_or(self.facts.len(), |next| next.facts);
            let (step_bytes, step_values) = step_cost(&main[mark.steps..end]);
            let fact_text: String = self.facts[mark.facts..facts_end]
                .iter()
                .map(|(what, yaml)| format!("  # {what}\n  - {yaml}\n"))
                .collect();
            bytes += step_bytes + fact_text.len();
            values += step_values + values_in(&fact_text);
            if bytes <= FIT_BYTES && values <= FIT_VALUES {
                continue;
            }
            if index == 0 {
                return; // nothing fits: the import says so (TooManyCalls)
            }
            let dropped = self.spawn_calls - mark.spawn_calls;
            let lines: Vec<String> = marks[index..]
                .iter()
                .take(20)
                .map(|mark| mark.line.to_string())
                .collect();
            self.warnings.push(format!(
                "the replay stops before line {}: with the responses from there on it would \
                 pass what one scenario file holds (4 MiB, 100,000 values); dropped: {dropped} \
                 of {} Agent calls, in the responses at lines {}{}",
                mark.line,
                self.spawn_calls,
                lines.join(", "),
                if marks.len() - index > 20 {
                    format!(" and {} more", marks.len() - index - 20)
                } else {
                    String::new()
                }
            ));
            main.truncate(mark.steps);
            self.facts.truncate(mark.facts);
            self.denials.truncate(mark.denials);
            self.stops.truncate(mark.stops);
            self.answer_times.truncate(mark.answers);
            self.spawn_calls = mark.spawn_calls;
            return;
        }
    }

    /// Notes what one Agent call shows about fork mode (see [`ForkEvidence`]).
    fn note_fork_evidence(
        &mut self,
        call: &ToolUse,
        agent_type: &str,
        outcome: &Outcome,
        background: bool,
        by_main: bool,
    ) {
        let evidence = &mut self.fork_evidence;
        let line = Some(call.line);
        if agent_type == "fork" {
            evidence.fork = evidence.fork.or(line);
        }
        if call.input().run_in_background.0.is_some() {
            evidence.run_in_background = evidence.run_in_background.or(line);
        }
        if by_main {
            match outcome {
                Outcome::Completed(_) | Outcome::Interrupted if !background => {
                    evidence.foreground = evidence.foreground.or(line);
                }
                Outcome::Launched => evidence.background = evidence.background.or(line),
                Outcome::Completed(..)
                | Outcome::UnknownType
                | Outcome::Interrupted
                | Outcome::Refused(..)
                | Outcome::NoResult => {}
            }
        }
    }

    /// The `subagent_type` of an Agent call, trimmed; empty (general-purpose, SPAWN-3)
    /// when the call gives none, with a warning when it gives something that is not text.
    fn agent_type(&mut self, call: &ToolUse) -> String {
        match &call.input().subagent_type {
            Text::Str(text) => text.trim().to_string(),
            Text::Missing => String::new(),
            Text::Other => {
                self.warnings.push(format!(
                    "{} call at line {}: its subagent_type is not text; replayed as \
                     general-purpose",
                    call.name, call.line
                ));
                String::new()
            }
        }
    }

    /// Indexes the subagent files by task prompt and by `.meta.json` description, so that
    /// each Agent call finds its file in one look-up.
    fn index_subs(&mut self) {
        for (id, sub) in &self.subs {
            if let Some(key) = sub.conv.first_prompt {
                self.by_prompt.entry(key).or_default().push_back(id.clone());
            }
            if let Some((_, Some(description))) = &sub.meta {
                self.by_meta
                    .entry(description.clone())
                    .or_default()
                    .push_back(id.clone());
            }
        }
    }

    /// The subagent file of an Agent call: by the agent id of its result, else by its
    /// task prompt, else by the type and description of its `.meta.json`. Claimed files
    /// are dropped from the front of each queue as they are met, so every look-up is
    /// amortised constant time.
    fn find_sub(
        &mut self,
        call: &ToolUse,
        agent_id: Option<&str>,
        agent_type: &str,
    ) -> Option<String> {
        let unclaimed = |subs: &BTreeMap<String, SubFile>, id: &str| {
            subs.get(id).is_some_and(|sub| !sub.claimed)
        };
        if let Some(id) = agent_id.filter(|id| unclaimed(&self.subs, id)) {
            return Some(id.to_string());
        }
        if let Some(queue) = call
            .text("prompt")
            .and_then(|p| self.by_prompt.get_mut(&prompt_key(p)))
        {
            while let Some(id) = queue.front() {
                if unclaimed(&self.subs, id) {
                    return Some(id.clone());
                }
                queue.pop_front();
            }
        }
        let queue = self.by_meta.get_mut(call.text("description")?)?;
        while queue.front().is_some_and(|id| !unclaimed(&self.subs, id)) {
            queue.pop_front();
        }
        let subs = &self.subs;
        queue
            .iter()
            .find(|id| {
                subs.get(id.as_str()).is_some_and(|sub| {
                    !sub.claimed
                        && sub.meta.as_ref().is_some_and(|(kind, _)| {
                            kind.as_deref().is_none_or(|kind| kind == agent_type)
                        })
                })
            })
            .cloned()
    }

    /// How long a subagent without a transcript ran, from what its call's result and its
    /// notification measured; a measured figure that is not a duration, or that is longer
    /// than the transcript's own times allow, is said and replaced by those times.
    fn measured(
        &mut self,
        name: &str,
        call: &ToolUse,
        result: Option<&ToolResult>,
        outcome: &Outcome,
        notice: Option<&Notice>,
    ) -> Option<u64> {
        let between = |from: i64, to: i64| u64::try_from(to.saturating_sub(from)).unwrap_or(0);
        match outcome {
            Outcome::Completed(total) => {
                let result = result?;
                let span = between(call.t_ms, result.t_ms);
                match total {
                    Some(total) if *total > span.saturating_add(TOTAL_SLACK_MS) => {
                        self.warnings.push(format!(
                            "{name} (line {}): totalDurationMs says {} but its result came {} \
                             after the call; the transcript's times are replayed",
                            call.line,
                            ms_text(*total),
                            ms_text(span)
                        ));
                        Some(span)
                    }
                    Some(total) => Some(*total),
                    None => Some(span),
                }
            }
            Outcome::Launched => {
                let notice = notice?;
                let launch = result.map_or(call.t_ms, |result| result.t_ms);
                let span = between(launch, notice.t_ms);
                match notice_duration(notice) {
                    Ok(Some(ms)) => Some(ms),
                    Ok(None) => Some(span),
                    Err(why) => {
                        self.warnings.push(format!(
                            "{name} (line {}): its notification's duration_ms {why}; the time \
                             up to the notification ({}) is replayed",
                            call.line,
                            ms_text(span)
                        ));
                        Some(span)
                    }
                }
            }
            Outcome::Interrupted => result.map(|result| between(call.t_ms, result.t_ms)),
            Outcome::UnknownType | Outcome::Refused(_) | Outcome::NoResult => None,
        }
    }

    /// One Agent call: its `spawn` item, and when the caller gets going again (the
    /// result's time for a foreground call).
    fn spawn(
        &mut self,
        conv: &Conversation,
        notices: &Notices,
        call: &ToolUse,
        caller: Option<&str>,
        depth: usize,
    ) -> Option<(SpawnOut, Option<i64>)> {
        self.spawn_calls += 1;
        let agent_type = self.agent_type(call);
        let description = self.text(call.text("description").unwrap_or(""));
        let result = conv.results.get(&call.id);
        let outcome = outcome(result);
        if let Some(Err(why)) = result.map(|result| duration_ms(result.total_duration())) {
            self.warnings.push(format!(
                "{} call at line {}: its result's totalDurationMs {why}; ignored (the \
                 transcript's times are replayed)",
                call.name, call.line
            ));
        }
        let agent_type = self.replayed_type(call, agent_type, &outcome);
        let agent_id = result.and_then(ToolResult::agent_id).map(str::to_string);
        let name = self.spawn_name(call, &description, &agent_type, agent_id.as_deref());
        let background =
            matches!(outcome, Outcome::Launched) || call.input().run_in_background.0 == Some(true);
        self.note_fork_evidence(call, &agent_type, &outcome, background, caller.is_none());
        let shown_type = if agent_type.is_empty() {
            "general-purpose"
        } else {
            agent_type.as_str()
        };
        let comment = format!(
            "{} call {:?} ({}, {}){}",
            call.name,
            one_line(&description, 80),
            shown_type,
            if background {
                "background"
            } else {
                "foreground"
            },
            caller
                .map(|caller| format!(", made by {caller}"))
                .unwrap_or_default()
        );
        let sub_key = self.find_sub(call, agent_id.as_deref(), &agent_type);
        let notice = notices
            .find(agent_id.as_deref(), &call.id)
            .or_else(|| self.main_notices.find(agent_id.as_deref(), &call.id))
            .cloned();
        let (mut behavior, report, covered_until) = if matches!(outcome, Outcome::UnknownType) {
            // Refused before it ran: no behaviour, no definition.
            (Vec::new(), None, call.t_ms)
        } else if let Some(key) = sub_key.filter(|_| depth < MAX_NESTING) {
            let tools = self.run_tools(&agent_type, background, depth + 1);
            self.replay_transcript(key, call, &outcome, &name, &tools, depth)?
        } else {
            let (behavior, covered_until) =
                self.replay_measured(&name, call, result, &outcome, notice.as_ref());
            if let Some(id) = &agent_id {
                self.warnings.push(format!(
                    "subagent {id} ({name}): its transcript was not found; replayed as one \
                     `work` of its measured time"
                ));
            }
            (behavior, None, covered_until)
        };
        let spawned = Spawned {
            call,
            result,
            outcome: &outcome,
            notice: notice.as_ref(),
            name: &name,
            who: format!("{} call {name} ({shown_type})", call.name),
            covered_until,
        };
        self.outcome_facts(&spawned, &agent_type, &mut behavior);
        if !matches!(outcome, Outcome::UnknownType | Outcome::Refused(_)) {
            self.reported(call, report.as_deref(), &agent_type, &mut behavior);
        }
        let model = call
            .text("model")
            .filter(|model| !model.trim().is_empty())
            .map(str::to_string);
        let isolation = self.isolation(call, &name);
        let prompt = match call.text("prompt") {
            Some(text) if self.options.keep_text => Some(self.kept_text(text, "prompt", call.line)),
            _ => None,
        };
        let resume = match outcome {
            Outcome::Completed(_) | Outcome::Interrupted if !background => {
                Some(result.map_or(call.t_ms, |result| result.t_ms))
            }
            Outcome::Completed(..)
            | Outcome::Launched
            | Outcome::UnknownType
            | Outcome::Interrupted
            | Outcome::Refused(..)
            | Outcome::NoResult => None,
        };
        Some((
            SpawnOut {
                comment,
                agent: (!agent_type.is_empty()).then_some(agent_type),
                name,
                background,
                model,
                isolation,
                prompt,
                behavior,
            },
            resume,
        ))
    }

    /// The tools the replayed run of an Agent call will have, as the simulator resolves
    /// them for the scenario this import writes ([`tools::default_pool_tools`]): its pool
    /// is the default one (no `tools`, no MCP servers), a `fork` call is a fork (TOOLS-2),
    /// a built-in type denies what its definition does (SPAWN-9; the custom types written
    /// under `agents:` set no fields), and the run inherits the main mode (PERM-2, PERM-10,
    /// PERM-11), which decides `ExitPlanMode`. `depth` is the run's own.
    fn run_tools(&self, agent_type: &str, background: bool, depth: usize) -> Vec<String> {
        let gates = self.gates;
        // The mode `session.permission_mode` is written with, else the default.
        let main_mode = self
            .permission_mode
            .as_deref()
            .filter(|mode| PERMISSION_MODES.contains(mode))
            .and_then(|mode| mode.parse::<PermissionMode>().ok())
            .unwrap_or_default();
        let (permission_mode, _) = prompt::effective_mode(main_mode, None, false, true, &gates);
        let placement = Placement {
            mode: if background {
                Mode::Background
            } else {
                Mode::Foreground
            },
            fork: agent_type == FORK_TYPE,
            permission_mode,
            ..Placement::at(
                u32::try_from(depth).unwrap_or(u32::MAX),
                gates.default_depth,
            )
        };
        let disallowed: Vec<String> = BuiltIn::from_name(agent_type)
            .map(|built_in| {
                built_in
                    .disallowed_tools()
                    .iter()
                    .map(|tool| tool.to_string())
                    .collect()
            })
            .unwrap_or_default();
        tools::default_pool_tools(placement, gates, &disallowed)
    }

    /// The type a call is replayed with: `agent_type`, or general-purpose (empty) when it
    /// is longer than any agent name and the call was not refused for it.
    fn replayed_type(&mut self, call: &ToolUse, agent_type: String, outcome: &Outcome) -> String {
        if agent_type.chars().count() > MAX_TYPE_CHARS && !matches!(outcome, Outcome::UnknownType) {
            self.warnings.push(format!(
                "{} call at line {}: its subagent_type is {} characters, longer than any \
                 agent name ({MAX_TYPE_CHARS}); replayed as general-purpose",
                call.name,
                call.line,
                agent_type.chars().count()
            ));
            String::new()
        } else {
            agent_type
        }
    }

    /// The spawned run's name, unique in the scenario: from the call's `name`, else its
    /// description, else its type; kept for the run's `agent_id`.
    fn spawn_name(
        &mut self,
        call: &ToolUse,
        description: &str,
        agent_type: &str,
        agent_id: Option<&str>,
    ) -> String {
        let wanted = match call.text("name").filter(|name| !name.trim().is_empty()) {
            Some(name) => slug(&self.text(name), 6),
            None => {
                let from_description = slug(description, 4);
                if from_description.is_empty() {
                    slug(agent_type, 4)
                } else {
                    from_description
                }
            }
        };
        let name = self.unique_name(&wanted);
        if let Some(id) = agent_id {
            self.agent_names.insert(id.to_string(), name.clone());
        }
        name
    }

    /// The behaviour of a call whose subagent transcript was found (`key`): that
    /// transcript, replayed; with the run's last text and until when it covers (real time).
    fn replay_transcript(
        &mut self,
        key: String,
        call: &ToolUse,
        outcome: &Outcome,
        name: &str,
        tools: &[String],
        depth: usize,
    ) -> Option<(Vec<Out>, Option<String>, i64)> {
        let sub_conv = {
            let sub = self.subs.get_mut(&key)?;
            sub.claimed = true;
            std::mem::take(&mut sub.conv)
        };
        if let Some(id) = &sub_conv.agent_id {
            self.agent_names
                .entry(id.clone())
                .or_insert_with(|| name.to_string());
        }
        self.agent_names
            .entry(key)
            .or_insert_with(|| name.to_string());
        let start = sub_conv.start_ms.unwrap_or(call.t_ms);
        if let (Outcome::Completed(Some(total)), Some(end)) = (outcome, sub_conv.end_ms) {
            // Measured on real files: a subagent transcript spans its totalDurationMs
            // within 0.15 s; far off, the file is probably not this call's.
            let span = end.saturating_sub(start);
            if span.abs_diff(i64::try_from(*total).unwrap_or(i64::MAX)) > 5_000 {
                self.warnings.push(format!(
                    "{name}: its transcript spans {} but the call took {} \
                     (totalDurationMs); the transcript's times are replayed",
                    ms_text(u64::try_from(span).unwrap_or(0)),
                    ms_text(*total)
                ));
            }
        }
        let behavior = self.script(&sub_conv, start, Some((name, tools)), depth + 1);
        let report = sub_conv.last_text.clone();
        Some((behavior, report, sub_conv.end_ms.unwrap_or(start)))
    }

    /// The behaviour of a call without a transcript: one `work` of its measured time (up
    /// to the session's end when nothing measures it); with until when it covers.
    fn replay_measured(
        &mut self,
        name: &str,
        call: &ToolUse,
        result: Option<&ToolResult>,
        outcome: &Outcome,
        notice: Option<&Notice>,
    ) -> (Vec<Out>, i64) {
        let measured = self.measured(name, call, result, outcome, notice);
        let measured =
            measured.unwrap_or_else(|| self.session_end.saturating_sub(call.t_ms).max(0) as u64);
        let behavior = if measured > 0 {
            vec![Out::Work(measured)]
        } else {
            Vec::new()
        };
        let covered_until = call
            .t_ms
            .saturating_add(i64::try_from(measured).unwrap_or(0));
        (behavior, covered_until)
    }

    /// The facts the call's outcome states (the expectations of the scenario), and how
    /// its behaviour ends when it was interrupted, failed or stopped.
    fn outcome_facts(&mut self, spawned: &Spawned<'_>, agent_type: &str, behavior: &mut Vec<Out>) {
        let Spawned {
            call,
            result,
            outcome,
            notice,
            name,
            ref who,
            covered_until,
        } = *spawned;
        let final_is =
            |outcome: &str| format!("final: {{agent: {}, outcome: {outcome}}}", quote(name));
        match outcome {
            Outcome::UnknownType => {
                if !agent_type.is_empty() {
                    self.refused_types.insert(agent_type.to_string());
                }
                self.fact(
                    format!("{who} was refused: no such agent type"),
                    format!(
                        "event: {{kind: spawn_rejected, name: {}, reason: unknown_type}}",
                        quote(name)
                    ),
                );
            }
            Outcome::Refused(text) => {
                let shown = one_line(&self.text(text), 100);
                self.fact(
                    format!("{who} was refused: {shown}"),
                    format!("event: {{kind: spawn_rejected, name: {}}}", quote(name)),
                );
            }
            Outcome::Completed(_) => {
                self.fact(
                    format!("{who} ran in the foreground"),
                    format!(
                        "event: {{kind: agent_started, name: {}, mode: foreground}}",
                        quote(name)
                    ),
                );
                self.fact(format!("{who} completed"), final_is("completed"));
            }
            Outcome::Interrupted => {
                behavior.push(Out::Comment(
                    "interrupted here; what it would have done next is unknown".into(),
                ));
                let at = result.map_or(call.t_ms, |result| result.t_ms);
                behavior.push(Out::Work(unfinished(covered_until, at)));
                self.stops.push((self.rel(at), name.to_string()));
                self.fact(
                    format!("{who} was interrupted by the person"),
                    final_is("cancelled"),
                );
            }
            Outcome::Launched => {
                self.fact(
                    format!("{who} was launched in the background"),
                    format!(
                        "event: {{kind: agent_started, name: {}, mode: background}}",
                        quote(name)
                    ),
                );
                match notice.map(|notice| notice.status.as_str()) {
                    Some("completed") => self.fact(
                        format!("{who} completed in the background"),
                        final_is("completed"),
                    ),
                    Some("failed") => {
                        behavior.push(Out::Fail);
                        self.fact(
                            format!("{who} failed in the background"),
                            final_is("failed"),
                        );
                    }
                    Some("killed" | "stopped" | "cancelled") => {
                        let at = notice.map_or(call.t_ms, |notice| notice.t_ms);
                        behavior.push(Out::Work(unfinished(covered_until, at)));
                        self.stops.push((self.rel(at), name.to_string()));
                        self.fact(format!("{who} was stopped"), final_is("cancelled"));
                    }
                    _ => {}
                }
            }
            Outcome::NoResult => {}
        }
    }

    /// A run that ran: its report (the transcript's last text with `--keep-text`) unless
    /// it failed, and its type among the custom types to define.
    fn reported(
        &mut self,
        call: &ToolUse,
        report: Option<&str>,
        agent_type: &str,
        behavior: &mut Vec<Out>,
    ) {
        let text = match (report, self.options.keep_text) {
            (Some(text), true) => self.kept_text(text, "report", call.line),
            _ => "(report not copied; import with --keep-text to keep it)".to_string(),
        };
        if !matches!(behavior.last(), Some(Out::Fail)) {
            behavior.push(Out::Report(text));
        }
        if !agent_type.is_empty() && !BuiltIn::REGISTRATION.iter().any(|b| b.name() == agent_type) {
            self.custom_types.insert(agent_type.to_string());
        }
    }

    /// The call's `isolation`: `worktree`, or left out with a warning when it is another
    /// value.
    fn isolation(&mut self, call: &ToolUse, name: &str) -> Option<String> {
        match call.text("isolation") {
            Some("worktree") => Some("worktree".to_string()),
            Some(other) if !other.is_empty() => {
                self.warnings.push(format!(
                    "{name}: isolation `{other}` is not modelled; left out"
                ));
                None
            }
            _ => None,
        }
    }

    fn render(
        &mut self,
        path: &Path,
        session_id: &str,
        version: Option<&str>,
        model: Option<&str>,
        main: &[Out],
    ) -> String {
        let file_name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut y = String::new();
        let _ = writeln!(y, "# Imported by `subsim import` from {file_name}.");
        if self.options.keep_text {
            let _ = writeln!(
                y,
                "# --keep-text: prompts, reports and Bash commands are copied as written."
            );
        } else {
            let _ = writeln!(
                y,
                "# Prompts, results and file contents are not copied, and e-mail addresses and secrets are masked (--keep-text keeps them)."
            );
        }
        let short_id: String = session_id.chars().take(8).collect();
        let _ = writeln!(
            y,
            "name: {}",
            quote(&format!(
                "Imported session {short_id} (Claude Code {})",
                version.unwrap_or("version unknown")
            ))
        );
        let _ = writeln!(y, "description: |");
        let _ = writeln!(
            y,
            "  Replays session {} as measured: Agent calls {}, subagent transcripts {}.",
            quote(&self.text(session_id)),
            self.spawn_calls,
            self.subs.values().filter(|sub| sub.claimed).count()
        );
        let _ = writeln!(
            y,
            "  The expect: block is what the session showed; `subsim check` says whether the model reproduces it."
        );
        self.render_session(&mut y, version, model);
        let defined: Vec<String> = self.custom_types.iter().cloned().collect();
        if !defined.is_empty() {
            let _ = writeln!(y, "agents:");
            for agent in &defined {
                let _ = writeln!(y, "  {}:", quote(agent));
                let _ = writeln!(
                    y,
                    "    description: {}",
                    quote("a custom agent type the session used (its definition file was not imported)")
                );
            }
        }
        if main.is_empty() {
            let _ = writeln!(y, "main: []");
        } else {
            let _ = writeln!(y, "main:");
            render_steps(&mut y, main, 2);
        }
        if !self.stops.is_empty() || !self.denials.is_empty() {
            let _ = writeln!(y, "user:");
        }
        if !self.answer_times.is_empty() {
            // One think time for every prompt (the format has no per-prompt time): the
            // mean of what the person took, each listed.
            let total: u64 = self.answer_times.iter().sum();
            let mean = total / self.answer_times.len() as u64;
            let listed: Vec<String> = self
                .answer_times
                .iter()
                .take(10)
                .map(|ms| ms_text(*ms))
                .collect();
            let more = self.answer_times.len().saturating_sub(10);
            let _ = writeln!(
                y,
                "  think: {}   # the person's measured answer times: {}{} (their mean)",
                ms_text(mean),
                listed.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            );
        }
        if !self.denials.is_empty() {
            let _ = writeln!(y, "  answers:");
            for (name, tool, prompt) in &self.denials {
                let _ = writeln!(
                    y,
                    "    - {{agent: {}, tool: {}, prompt: {prompt}, answer: deny}}",
                    quote(name),
                    quote(tool)
                );
            }
        }
        if !self.stops.is_empty() {
            self.stops.sort();
            let _ = writeln!(y, "  actions:");
            for (at, name) in &self.stops {
                let _ = writeln!(y, "    - {{at: {}, stop: {}}}", ms_text(*at), quote(name));
            }
        }
        // The first fact: every Agent call of the transcript is one spawn_requested.
        self.facts.insert(
            0,
            (
                format!(
                    "the transcript holds {} Agent tool calls (Task/Agent)",
                    self.spawn_calls
                ),
                format!(
                    "count: {{kind: spawn_requested}}\n    equals: {}",
                    self.spawn_calls
                ),
            ),
        );
        let _ = writeln!(y, "expect:");
        for (index, (what, fact)) in self.facts.iter().enumerate() {
            let _ = writeln!(y, "  # {}: {}", index + 1, one_line(what, 160));
            let _ = writeln!(y, "  - {fact}");
        }
        y
    }
}

impl Builder {
    /// The `session:` block: what the transcript shows (version, kind, model, permission
    /// mode, fork mode, the session's length), each with where it came from, and what it
    /// could not show.
    fn render_session(&mut self, y: &mut String, version: Option<&str>, model: Option<&str>) {
        let _ = writeln!(y, "session:");
        match (self.kind, self.entrypoint.as_deref()) {
            (Some(kind), _) => {
                let _ = writeln!(y, "  kind: {kind}   # from the transcript's `entrypoint`");
            }
            (None, Some(entry)) => {
                let _ = writeln!(
                    y,
                    "  kind: interactive   # the transcript's `entrypoint` is {}",
                    quote(&one_line(entry, 40))
                );
            }
            (None, None) => {
                let _ = writeln!(
                    y,
                    "  # kind: the transcript has no `entrypoint`; interactive is assumed"
                );
            }
        }
        match version {
            Some(version) => {
                let _ = writeln!(y, "  version: {}", quote(version));
            }
            None => {
                let _ = writeln!(
                    y,
                    "  # the transcript names no version: the simulator's default applies"
                );
            }
        }
        if let Some(model) = model {
            let _ = writeln!(y, "  model: {}", quote(model));
        }
        match self.permission_mode.as_deref() {
            Some(mode) if PERMISSION_MODES.contains(&mode) => {
                let _ = writeln!(
                    y,
                    "  permission_mode: {}   # the transcript's `permissionMode`",
                    quote(mode)
                );
            }
            Some(other) => {
                self.warnings.push(format!(
                    "the transcript's permissionMode {} is not one the simulator knows; the \
                     default mode applies",
                    quote(&one_line(other, 40))
                ));
            }
            None => {}
        }
        let version = version
            .and_then(|text| text.parse::<Version>().ok())
            .unwrap_or_default();
        if let Some((value, why)) = self.fork_mode(version) {
            let _ = writeln!(
                y,
                "  env: {{CLAUDE_CODE_FORK_SUBAGENT: \"{value}\"}}   # {why}"
            );
        }
        let span = u64::try_from(self.session_end.saturating_sub(self.t0)).unwrap_or(0);
        if span.saturating_add(2 * UNFINISHED_MS) > LONG_SESSION_MS {
            let hours = span / 3_600_000 + 48;
            self.warnings.push(format!(
                "the session spans {}, past the simulator's 30-day `max_time`; the scenario \
                 sets `limits: {{max_time: {hours}h}}`",
                ms_text(span)
            ));
            let _ = writeln!(
                y,
                "  limits: {{max_time: {hours}h}}   # the session spans {}",
                ms_text(span)
            );
        }
        let _ = writeln!(
            y,
            "  # not in a transcript, so not imported: settings (permissions, hooks, env), \
             agent definition files, MCP servers"
        );
    }

    /// `CLAUDE_CODE_FORK_SUBAGENT` when what the Agent calls show disagrees with the
    /// default fork mode of the session's kind and version (FORK-1, FORK-2): a call of
    /// main's that ran in the foreground, or one that passes `run_in_background`, shows
    /// fork mode off (FGBG-1 case 3, FORK-3); a `fork` call shows it on.
    fn fork_mode(&mut self, version: Version) -> Option<(&'static str, String)> {
        let default_on = self.kind.is_none()
            && subsim_rules::version::Gates::for_version(version).fork_mode_interactive_default;
        let evidence = self.fork_evidence;
        let off = evidence
            .foreground
            .map(|line| format!("the Agent call at line {line} ran in the foreground"))
            .or_else(|| {
                evidence
                    .run_in_background
                    .map(|line| format!("the Agent call at line {line} passes run_in_background"))
            });
        let on = evidence
            .fork
            .map(|line| format!("the Agent call at line {line} asks for a fork"));
        match (default_on, off, on) {
            (_, Some(off), Some(on)) => {
                self.warnings.push(format!(
                    "fork mode: {off} (fork mode off) but {on} (fork mode on); the default \
                     of {version} applies"
                ));
                None
            }
            (true, Some(off), None) => {
                self.warnings.push(format!(
                    "fork mode is on by default in an interactive {version} session, but \
                     {off}: the scenario turns it off (CLAUDE_CODE_FORK_SUBAGENT=0)"
                ));
                Some(("0", format!("fork mode off: {off} (FORK-2)")))
            }
            (false, None, Some(on)) => {
                self.warnings.push(format!(
                    "fork mode is off by default in this session, but {on}: the scenario \
                     turns it on (CLAUDE_CODE_FORK_SUBAGENT=1)"
                ));
                Some(("1", format!("fork mode on: {on} (FORK-2)")))
            }
            _ => None,
        }
    }
}

fn pad(y: &mut String, indent: usize) {
    y.extend(std::iter::repeat_n(' ', indent));
}

/// Writes a block list of steps at `indent`.
fn render_steps(y: &mut String, steps: &[Out], indent: usize) {
    for step in steps {
        match step {
            Out::Comment(text) => {
                pad(y, indent);
                let _ = writeln!(y, "# {}", one_line(text, 160));
            }
            Out::Work(ms) => {
                pad(y, indent);
                let _ = writeln!(y, "- work: {}", ms_text(*ms));
            }
            Out::Tool {
                name,
                duration_ms,
                prompt,
                input,
            } => {
                pad(y, indent);
                let mut fields = vec![format!("name: {}", quote(name))];
                if let Some(input) = input {
                    fields.push(format!("input: {}", quote(input)));
                }
                if let Some(ms) = duration_ms {
                    fields.push(format!("duration: {}", ms_text(*ms)));
                }
                fields.push(format!("prompt: {prompt}"));
                let _ = writeln!(y, "- tool: {{{}}}", fields.join(", "));
            }
            Out::WaitFor(name) => {
                pad(y, indent);
                let _ = writeln!(y, "- wait: {{for: {}}}", quote(name));
            }
            Out::Report(text) => {
                pad(y, indent);
                let _ = writeln!(y, "- report: {}", quote(text));
            }
            Out::Fail => {
                pad(y, indent);
                let _ = writeln!(
                    y,
                    "# the notification said `failed`; the cause is not in the transcript"
                );
                pad(y, indent);
                let _ = writeln!(y, "- fail: {{api_error: server}}");
            }
            Out::Spawns(calls) => {
                if let [call] = calls.as_slice() {
                    pad(y, indent);
                    let _ = writeln!(y, "# {}", one_line(&call.comment, 200));
                    pad(y, indent);
                    let _ = writeln!(y, "- spawn:");
                    render_spawn(y, call, indent + 4, false);
                } else {
                    pad(y, indent);
                    let _ = writeln!(y, "# {} Agent calls in one response", calls.len());
                    pad(y, indent);
                    let _ = writeln!(y, "- spawn:");
                    for call in calls {
                        pad(y, indent + 4);
                        let _ = writeln!(y, "# {}", one_line(&call.comment, 200));
                        render_spawn(y, call, indent + 4, true);
                    }
                }
            }
        }
    }
}

fn render_spawn(y: &mut String, call: &SpawnOut, indent: usize, item: bool) {
    let mut first = item;
    let mut field = |y: &mut String, text: String| {
        if first {
            pad(y, indent);
            y.push_str("- ");
            first = false;
        } else {
            pad(y, indent + if item { 2 } else { 0 });
        }
        y.push_str(&text);
        y.push('\n');
    };
    if let Some(agent) = &call.agent {
        field(y, format!("agent: {}", quote(agent)));
    }
    field(y, format!("name: {}", quote(&call.name)));
    field(y, format!("background: {}", call.background));
    if let Some(model) = &call.model {
        field(y, format!("model: {}", quote(model)));
    }
    if let Some(isolation) = &call.isolation {
        field(y, format!("isolation: {}", quote(isolation)));
    }
    if let Some(prompt) = &call.prompt {
        field(y, format!("prompt: {}", quote(prompt)));
    }
    if call.behavior.is_empty() {
        field(y, "behavior: []".to_string());
    } else {
        field(y, "behavior:".to_string());
        render_steps(y, &call.behavior, indent + if item { 4 } else { 2 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compaction_runs_are_not_subagents() {
        assert_eq!(agent_file_id("agent-a1b2c3.jsonl"), Some("a1b2c3"));
        assert_eq!(agent_file_id("agent-acompact-e1f845.jsonl"), None);
        assert_eq!(agent_file_id("agent-a1.meta.json"), None);
        assert_eq!(agent_file_id("session.jsonl"), None);
    }

    #[test]
    fn durations_are_written_in_seconds() {
        assert_eq!(ms_text(0), "0s");
        assert_eq!(ms_text(1_500), "1.500s");
        assert_eq!(ms_text(60_000), "60s");
        assert_eq!(
            slug("Explore the parser: find bugs!", 4),
            "explore-the-parser-find"
        );
    }

    /// One imported subagent: how it was called and the tools it called, one a second.
    struct Session<'a> {
        version: &'a str,
        permission_mode: &'a str,
        agent_type: &'a str,
        background: bool,
        calls: &'a [&'a str],
    }

    const SID: &str = "5e55a1d0-0000-4000-8000-000000000001";

    fn line(fields: &str, at_s: u32, sidechain: bool, version: &str) -> String {
        format!(
            "{{\"sessionId\":\"{SID}\",\"version\":\"{version}\",\"isSidechain\":{sidechain},\
             {fields},\"timestamp\":\"2026-11-02T10:{:02}:{:02}.000Z\"}}\n",
            at_s / 60,
            at_s % 60
        )
    }

    fn tool_use(id: &str, name: &str, input: &str) -> String {
        format!(
            "\"type\":\"assistant\",\"message\":{{\"id\":\"msg_{id}\",\"role\":\"assistant\",\
             \"content\":[{{\"type\":\"tool_use\",\"id\":\"toolu_{id}\",\"name\":\"{name}\",\
             \"input\":{input}}}]}}"
        )
    }

    fn tool_result(id: &str, text: &str) -> String {
        format!(
            "\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\
             \"tool_use_id\":\"toolu_{id}\",\"type\":\"tool_result\",\"content\":\"{text}\"}}]}}"
        )
    }

    /// Imports `session` and runs the scenario: the YAML, and each `tool_called` as
    /// `(tool, allowed)`.
    fn replay(test: &str, session: &Session<'_>) -> (String, Vec<(String, bool)>) {
        let dir = std::env::temp_dir().join(format!("subsim-import-{test}-{}", std::process::id()));
        let subagents = dir.join(SID).join("subagents");
        std::fs::create_dir_all(&subagents).unwrap();
        let version = session.version;
        let calls = u32::try_from(session.calls.len()).unwrap();
        let mut main = format!(
            "{{\"type\":\"permission-mode\",\"permissionMode\":\"{}\",\"sessionId\":\"{SID}\"}}\n",
            session.permission_mode
        );
        main += &line(
            "\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"go\"}",
            0,
            false,
            version,
        );
        let input = format!(
            "{{\"description\":\"look around\",\"prompt\":\"look around\",\
             \"subagent_type\":\"{}\",\"run_in_background\":{}}}",
            session.agent_type, session.background
        );
        main += &line(&tool_use("A1", "Agent", &input), 1, false, version);
        let result = if session.background {
            "\"toolUseResult\":{\"isAsync\":true,\"status\":\"async_launched\",\"agentId\":\"0a0a0a0a\"}"
                .to_string()
        } else {
            format!(
                "\"toolUseResult\":{{\"status\":\"completed\",\"agentId\":\"0a0a0a0a\",\
                 \"totalDurationMs\":{}}}",
                (calls + 2) * 1_000
            )
        };
        let at = if session.background { 1 } else { calls + 3 };
        main += &line(
            &format!("{},{result}", tool_result("A1", "done")),
            at,
            false,
            version,
        );
        let mut sub = line(
            "\"agentId\":\"0a0a0a0a\",\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"look around\"}",
            1,
            true,
            version,
        );
        for (index, tool) in (2..).zip(session.calls) {
            let id = format!("S{index}");
            sub += &line(&tool_use(&id, tool, "{}"), index, true, version);
            sub += &line(&tool_result(&id, "ok"), index + 1, true, version);
        }
        sub += &line(
            "\"type\":\"assistant\",\"message\":{\"id\":\"msg_end\",\"role\":\"assistant\",\
             \"content\":[{\"type\":\"text\",\"text\":\"done\"}]}",
            calls + 2,
            true,
            version,
        );
        let path = dir.join(format!("{SID}.jsonl"));
        std::fs::write(&path, main).unwrap();
        std::fs::write(subagents.join("agent-0a0a0a0a.jsonl"), sub).unwrap();
        let imported = super::super::import_session(&path, ImportOptions::default());
        std::fs::remove_dir_all(&dir).unwrap();
        let yaml = imported.unwrap().yaml;
        let loaded = crate::parse_scenario(&yaml, "imported.yaml", Path::new(".")).unwrap();
        let mut events = subsim_engine::sink::Collect::default();
        subsim_engine::Simulation::new(loaded.spec).run(&mut events);
        let called = events
            .events
            .iter()
            .filter_map(|event| match &event.kind {
                subsim_engine::EventKind::ToolCalled { tool, allowed, .. } => {
                    Some((tool.to_string(), *allowed))
                }
                _ => None,
            })
            .collect();
        (yaml, called)
    }

    fn allowed(tools: &[&str]) -> Vec<(String, bool)> {
        tools.iter().map(|tool| (tool.to_string(), true)).collect()
    }

    const FOREGROUND: Session<'static> = Session {
        version: "2.1.292",
        permission_mode: "default",
        agent_type: "general-purpose",
        background: false,
        calls: &[],
    };

    #[test]
    fn a_foreground_subagents_cron_create_and_delete_were_folded_into_work() {
        // TOOLS-1 / TOOLS-3: a foreground subagent keeps every cron tool main has; only
        // filter 2 (TOOLS-5) removes them.
        let session = Session {
            calls: &["CronCreate", "CronList", "CronDelete", "Read"],
            ..FOREGROUND
        };
        let (yaml, called) = replay("cron", &session);
        assert!(yaml.contains("tool: {name: \"CronCreate\""), "{yaml}");
        assert_eq!(
            called,
            allowed(&["CronCreate", "CronList", "CronDelete", "Read"])
        );
    }

    #[test]
    fn lsp_in_a_background_subagent_was_folded_from_2_1_280() {
        // TOOLS-5 / D-2: `LSP` is on the background allow-list from v2.1.280.
        for (version, replayed) in [("2.1.280", &["LSP", "Read"][..]), ("2.1.279", &["Read"])] {
            let session = Session {
                version,
                background: true,
                calls: &["LSP", "Read"],
                ..FOREGROUND
            };
            assert_eq!(replay("lsp", &session).1, allowed(replayed), "{version}");
        }
    }

    #[test]
    fn a_background_subagents_powershell_call_was_refused_in_the_replay() {
        // TOOLS-1: the scenario's pool is the default one, without `PowerShell` (a Windows
        // tool): the call is folded into `work` rather than refused, in either mode.
        for background in [true, false] {
            let session = Session {
                background,
                calls: &["PowerShell", "Read"],
                ..FOREGROUND
            };
            let (yaml, called) = replay("powershell", &session);
            assert!(!yaml.contains("PowerShell"), "{yaml}");
            assert_eq!(called, allowed(&["Read"]), "background: {background}");
        }
    }

    #[test]
    fn exit_plan_mode_in_a_plan_mode_session_was_folded_into_work() {
        // Q-18 / PERM-16: a subagent whose effective mode is `plan` keeps `ExitPlanMode`,
        // in the foreground and in the background (TOOLS-5); otherwise filter 1 takes it.
        for background in [false, true] {
            let plan = Session {
                permission_mode: "plan",
                background,
                calls: &["ExitPlanMode", "Read"],
                ..FOREGROUND
            };
            assert_eq!(replay("plan", &plan).1, allowed(&["ExitPlanMode", "Read"]));
            let default = Session {
                permission_mode: "default",
                ..plan
            };
            assert_eq!(replay("plan", &default).1, allowed(&["Read"]));
        }
    }

    #[test]
    fn explores_write_and_edit_calls_were_refused_in_the_replay() {
        // SPAWN-9: Explore's definition disallows Write and Edit (TOOLS-11).
        let session = Session {
            agent_type: "Explore",
            calls: &["Write", "Edit", "Read"],
            ..FOREGROUND
        };
        assert_eq!(replay("explore", &session).1, allowed(&["Read"]));
    }

    #[test]
    fn a_forks_tools_were_cut_to_the_background_allow_list() {
        // TOOLS-2: a fork skips both filters and keeps the whole main pool.
        let session = Session {
            agent_type: FORK_TYPE,
            background: true,
            calls: &["AskUserQuestion", "TaskCreate", "Read"],
            ..FOREGROUND
        };
        assert_eq!(
            replay("fork", &session).1,
            allowed(&["AskUserQuestion", "TaskCreate", "Read"])
        );
    }

    #[test]
    fn output_reads_and_spawns_stay_out_of_tool_steps() {
        // TaskOutput is kept by filter 1 from v2.1.272, but the importer replays a
        // blocking read as `wait_for` and folds any other; a handback is the `report`.
        let session = Session {
            calls: &["TaskOutput", "SubagentHandback", "Read"],
            ..FOREGROUND
        };
        assert_eq!(replay("output", &session).1, allowed(&["Read"]));
    }
}
