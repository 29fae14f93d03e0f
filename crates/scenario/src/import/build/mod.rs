//! From transcripts to a scenario: finds the subagent files, turns each conversation into
//! steps (Agent calls as `spawn`, a subagent's tool calls as `tool` steps with their
//! measured durations, gaps as `work`, then `report`), collects the observed facts, and
//! renders the YAML.
//!
//! Times: the scenario's zero is the main file's first line. A conversation's script keeps
//! a cursor — where the simulated conversation will be — and writes the gap up to its next
//! action as `work`; after foreground Agent calls the cursor moves to their result, since
//! the simulated caller waits for its children as the real one did.

//!
//! The parts, one job each:
//! - `files.rs`: finding the subagent files beside the session (both layouts) and reading
//!   each into its conversation, the session's version;
//! - `steps.rs`: a conversation → steps (`spawn`, `tool`, `work`, `wait`), with the
//!   measured durations and which subagent file each Agent call replays;
//! - `facts.rs`: what an Agent call's outcome states (the `expect:` entries);
//! - `render.rs`: the scenario's YAML, and cutting a replay to what one scenario file holds.

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
use super::{FactSource, ImportError, ImportOptions, Imported};

mod facts;
mod files;
mod render;
mod steps;

use files::{find_subagents, read_conversation, session_version};

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
        /// `prompt:` forced yes or no; `None` leaves it to the mode and rules (PERM-9).
        prompt: Option<bool>,
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
    /// The caller's conversation (where its result or notification is written).
    caller_conv: &'a Conversation,
    /// The caller's name in the scenario (`main` for main).
    caller: &'a str,
    /// When the run's own transcript shows its work done (its report written), if it does.
    done_at: Option<i64>,
    /// Its notification, found in another conversation than the caller's (its file).
    stray: Option<(&'a str, &'a Notice)>,
}

/// One `expect:` entry: what it says in words, its YAML, and where its fact is.
type Fact = (String, String, Option<FactSource>);

/// The oldest layout whose transcripts are known to record background completion
/// notifications (`<agent-notification>` enqueues, tests/fixtures/import/v2.0.76-flat):
/// before it, a missing notification is not expected.
const NOTICES_RECORDED_FROM: Version = Version::new(2, 0, 76);

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
    facts: Vec<Fact>,
    /// The session's version, when the transcript names one.
    version: Option<Version>,
    /// Completion notifications written in a subagent's file, by agent id and by call id:
    /// `(that file, the notification)`, for a notification that reached another agent than
    /// its launcher.
    stray_notices: HashMap<String, (String, Notice)>,
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
    let unreadable_lines = main.skipped_count
        + subs
            .values()
            .map(|sub| sub.conv.skipped_count)
            .sum::<usize>();
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
        version: session_version,
        stray_notices: HashMap::new(),
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
        sources: builder
            .facts
            .iter()
            .map(|(_, _, source)| source.clone())
            .collect(),
        facts: builder.facts.into_iter().map(|(what, ..)| what).collect(),
        unreadable_lines,
        spawn_calls: builder.spawn_calls,
        subagent_files,
    })
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

/// `file:line` or `file:first-last`.
pub(crate) fn line_range(file: &str, (first, last): (usize, usize)) -> String {
    if first == last {
        format!("{}:{first}", one_line(file, 200))
    } else {
        format!("{}:{first}-{last}", one_line(file, 200))
    }
}

fn ms_text(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{}.{:03}s", ms / 1000, ms % 1000)
    }
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

    /// A fact with where it is (or should have been) in the transcript.
    fn fact_from(&mut self, what: String, yaml: String, source: FactSource) {
        self.facts.push((what, yaml, Some(source)));
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
}

#[cfg(test)]
mod tests {
    use super::files::agent_file_id;
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
