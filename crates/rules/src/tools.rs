//! TOOLS — a subagent's tool set: the base pool, filter 1, `tools` / `disallowedTools`,
//! filter 2 for background runs, and the tools attached whatever the fields say.
//!
//! [`resolve_with`] takes a [`ToolRequest`] and returns the final set *and* the steps that
//! produced it, each with its rule, in the order the seeds describe: base pool → filter 1
//! removed → `disallowedTools` removed → not in `tools` → filter 2 removed → added
//! ([`StepKind`]). The same function serves the engine and the teaching output.
//! [`resolve`] is the older entry point the engine calls; it is a thin wrapper.
//! [`main_tools`] builds the main conversation's pool for a session.
//!
//! This module does not decide permissions ([`crate::prompt`]) or which types the `Agent`
//! tool may spawn ([`crate::spawn`]).
//!
//! # Decisions where the catalog is silent
//! - **Q-18**: `ExitPlanMode` survives filter 1 when the *effective* permission mode is
//!   `plan` ([`Placement::permission_mode`] is the effective mode, PERM-10/11/12).
//! - **Q-20 / D-1**: `TaskOutput` is removed by filter 1 up to v2.1.271 (the last version
//!   DE documents) and kept after ([`Gates::task_output_filtered`]).
//! - **Q-19 / D-18**: from v2.1.208 the spawn is refused whenever the explicit `tools` list
//!   resolves to nothing — an empty list included — judged *before* the tools attached
//!   whatever the fields say (`SubagentHandback`, memory's `Read`/`Write`/`Edit`); so those
//!   never rescue a spawn. Before v2.1.208 the run launches with only the attached tools, if
//!   any. A resumed run keeps its first tool set and is never re-checked (RESUME-7).
//! - **TOOLS-17**: memory's `Read`, `Write` and `Edit` are added even when `tools` leaves
//!   them out, but not against `disallowedTools`: `SubagentHandback` is the single
//!   exception to `disallowedTools` (HANDBACK-3).
//! - **TOOLS-10**: "the Task tools" are [`TASK_TOOLS`] (`TaskCreate`, `TaskGet`,
//!   `TaskList`, `TaskUpdate`). A non-split-pane run takes them from the pool exactly as
//!   the main conversation has them; a split-pane teammate gets them iff its own model does.
//! - **TOOLS-19**: a `--agent` main thread goes through neither filter (it is not a
//!   subagent), only its `tools` / `disallowedTools`, and is never refused for zero tools.
//! - **TOOLS-20**: `Task` and `Task(…)` are read as `Agent` at every version; the v2.1.63
//!   rename changes only the tool's name, which a scheduling simulation cannot observe.

use crate::depth::{agent_tool, AgentTool};
use crate::{gates_table, messages, Gates, Mode, PermissionMode, RejectReason, RuleId};
use std::sync::LazyLock;

/// The main conversation's built-in tools when a scenario does not list them: every
/// built-in the catalog names, less `ListAgents` (cross-session messaging is off by
/// default, TOOLS-8), `PowerShell` (Windows only) and `SubagentHandback` (never main's).
pub const DEFAULT_MAIN_TOOLS: [&str; 35] = [
    "Agent",
    "AskUserQuestion",
    "Bash",
    "Edit",
    "EndConversation",
    "EnterPlanMode",
    "ExitPlanMode",
    "Glob",
    "Grep",
    "LSP",
    "Monitor",
    "NotebookEdit",
    "Read",
    "ScheduleWakeup",
    "SendMessage",
    "Skill",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskOutput",
    "TaskStop",
    "TaskUpdate",
    "TodoWrite",
    "ToolSearch",
    "WebFetch",
    "WebSearch",
    "Write",
    "EnterWorktree",
    "ExitWorktree",
    "Workflow",
    "WaitForMcpServers",
    "Artifact",
    "CronCreate",
    "CronDelete",
    "CronList",
];

/// TOOLS-3: what filter 1 always removes, even when listed in `tools` (`Agent` and
/// `ExitPlanMode` are conditional, and `TaskOutput` is version-gated, Q-20).
pub const FILTER_ONE: [&str; 6] = [
    "AskUserQuestion",
    "EndConversation",
    "EnterPlanMode",
    "ScheduleWakeup",
    "WaitForMcpServers",
    "Workflow",
];

/// TOOLS-5: the built-ins a background subagent keeps (`LSP` only from v2.1.280; see
/// [`background_allow_list`]).
pub const BACKGROUND_ALLOW: [&str; 20] = [
    "Read",
    "Grep",
    "Glob",
    "LSP",
    "Bash",
    "PowerShell",
    "Edit",
    "Write",
    "NotebookEdit",
    "WebFetch",
    "WebSearch",
    "TodoWrite",
    "Skill",
    "ToolSearch",
    "EnterWorktree",
    "ExitWorktree",
    "Monitor",
    "TaskStop",
    "SendMessage",
    "Artifact",
];

/// TOOLS-9: what agent-team teammates keep on top of the background allow-list.
pub const TEAMMATE_EXTRA: [&str; 7] = [
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
    "CronCreate",
    "CronDelete",
    "CronList",
];

/// TOOLS-10: the Task tools a session may lack.
pub const TASK_TOOLS: [&str; 4] = ["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"];

/// TOOLS-17 / MEM-3: the tools persistent memory enables.
pub const MEMORY_TOOLS: [&str; 3] = ["Read", "Write", "Edit"];

/// The tool that carries a subagent's report in auto mode (HANDBACK-1).
pub const HANDBACK: &str = "SubagentHandback";

/// The tool that spawns subagents (DEPTH-5: a caller needs it to spawn), named where its
/// depth rules are (`depth` takes nothing from this module).
pub use crate::depth::AGENT;

/// The tool that messages and resumes agents (the `send` step, RESUME-5).
pub const SEND_MESSAGE: &str = "SendMessage";

/// The tool that stops a running agent (the `stop` step, RESUME-10).
pub const TASK_STOP: &str = "TaskStop";

/// The shell tool (the `bash_background` step, NOTIFY-5).
pub const BASH: &str = "Bash";

/// TOOLS-5 / D-2: the background allow-list in force: 19 built-ins before v2.1.280, 20
/// from it (`LSP`). `SubagentHandback` is kept on top of it for a run that reports
/// through it (TOOLS-16).
pub fn background_allow_list(gates: &Gates) -> Vec<&'static str> {
    BACKGROUND_ALLOW
        .into_iter()
        .filter(|tool| *tool != "LSP" || gates.lsp_in_background)
        .collect()
}

/// The tools a run has in a session whose pool is the default one ([`default_main_tools`]:
/// no `tools` list, no MCP servers, no cross-session messaging, Linux) when its definition
/// sets no `tools` and disallows `disallowed` (a built-in's SPAWN-9 list, or nothing), with
/// nothing attached (no `SubagentHandback`, no memory): [`resolve_with`] on those inputs,
/// so TOOLS-2 (a fork keeps the pool), TOOLS-3 / Q-18 / Q-20 (filter 1), TOOLS-5 / D-2
/// (filter 2, `LSP` from v2.1.280) and TOOLS-11 decide, as they do for the engine. A
/// transcript importer asks this which of a subagent's calls the replay can make.
pub fn default_pool_tools(
    placement: Placement,
    gates: Gates,
    disallowed: &[String],
) -> Vec<String> {
    let pool = default_main_tools();
    let request = ToolRequest {
        fields: Fields {
            tools: None,
            disallowed,
        },
        ..ToolRequest::new(&pool, placement, gates)
    };
    match resolve_with(&request) {
        Ok(resolved) => resolved.tools,
        // TOOLS-12 refuses only an explicit `tools` list that resolves to nothing, and
        // there is none here.
        Err(_) => Vec::new(),
    }
}

/// The operating system Claude Code runs on (TOOLS-1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Platform {
    /// Linux (the default).
    #[default]
    Linux,
    /// macOS.
    MacOs,
    /// Windows Subsystem for Linux.
    Wsl,
    /// Native Windows.
    Windows,
}

impl Platform {
    /// TOOLS-1: on macOS, Linux and WSL a subagent may receive `Glob` and `Grep` even when
    /// the main conversation lacks them.
    pub fn adds_glob_grep(self) -> bool {
        self != Platform::Windows
    }
}

/// What the session's main conversation has, for [`main_tools`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionTools {
    /// TOOLS-8: cross-session messaging is enabled, so main has `ListAgents`.
    pub cross_session_messaging: bool,
    /// TOOLS-10: the session has the Task tools.
    pub task_tools: bool,
    /// The platform (`PowerShell` is a Windows tool).
    pub platform: Platform,
}

impl Default for SessionTools {
    fn default() -> SessionTools {
        SessionTools {
            cross_session_messaging: false,
            task_tools: true,
            platform: Platform::Linux,
        }
    }
}

/// MCP-1 / TOOLS-13: the name an MCP server's tool has in a tool pool,
/// `mcp__<server>__<tool>` (the form TOOLS-13's patterns match).
pub fn mcp_tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// TOOLS-1 / TOOLS-8 / TOOLS-10: the session's tool pool, the one every run's tools are
/// filtered from: the scenario's own list when it gives one (`listed`), else the
/// documented built-ins ([`main_tools`]: `ListAgents` only with cross-session messaging),
/// then every MCP server's tools ([`mcp_tool_name`]), servers in the order given.
pub fn session_pool<'a, Tools>(
    listed: Option<&[String]>,
    cross_session_messaging: bool,
    mcp: impl IntoIterator<Item = (&'a String, Tools)>,
) -> Vec<String>
where
    Tools: IntoIterator<Item = &'a String>,
{
    let mut pool = listed.map(<[String]>::to_vec).unwrap_or_else(|| {
        main_tools(SessionTools {
            cross_session_messaging,
            ..SessionTools::default()
        })
    });
    for (server, server_tools) in mcp {
        pool.extend(
            server_tools
                .into_iter()
                .map(|tool| mcp_tool_name(server, tool)),
        );
    }
    pool
}

/// The main conversation's built-in tools for `session`: [`DEFAULT_MAIN_TOOLS`], with
/// `ListAgents` when cross-session messaging is on (TOOLS-8), without the Task tools when
/// the session has none (TOOLS-10), and with `PowerShell` on Windows.
pub fn main_tools(session: SessionTools) -> Vec<String> {
    let mut tools: Vec<String> = DEFAULT_MAIN_TOOLS
        .into_iter()
        .filter(|tool| session.task_tools || !TASK_TOOLS.contains(tool))
        .map(String::from)
        .collect();
    if session.cross_session_messaging {
        tools.push("ListAgents".to_string());
    }
    if session.platform == Platform::Windows {
        tools.push("PowerShell".to_string());
    }
    tools
}

/// The default main pool as owned strings ([`main_tools`] of the default session).
pub fn default_main_tools() -> Vec<String> {
    main_tools(SessionTools::default())
}

/// The subagent's situation, as the filters see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Depth of the subagent (main = 0).
    pub depth: u32,
    /// The session's depth limit.
    pub depth_limit: u32,
    /// Foreground or background.
    pub mode: Mode,
    /// A fork skips both filters (TOOLS-2).
    pub fork: bool,
    /// A teammate keeps the task and cron tools (TOOLS-9).
    pub teammate: bool,
    /// A resumed run that first ran in the foreground keeps that set (TOOLS-6).
    pub first_ran_foreground: bool,
    /// The subagent's effective permission mode (Q-18: it decides `ExitPlanMode`).
    pub permission_mode: PermissionMode,
}

impl Placement {
    /// A foreground, non-fork, non-teammate subagent at `depth` under `depth_limit`, in
    /// `default` mode.
    pub fn at(depth: u32, depth_limit: u32) -> Placement {
        Placement {
            depth,
            depth_limit,
            mode: Mode::Foreground,
            fork: false,
            teammate: false,
            first_ran_foreground: false,
            permission_mode: PermissionMode::Default,
        }
    }
}

/// How a teammate runs (TOOLS-10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TeammateProcess {
    /// Inside the session's process: it follows the session's Task tools.
    #[default]
    InProcess,
    /// In its own split pane, a separate Claude Code process: its own model decides.
    SplitPane {
        /// Whether the teammate's own model has the Task tools.
        model_has_task_tools: bool,
    },
}

/// A definition's `tools` / `disallowedTools` fields.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fields<'a> {
    /// The allowlist, if set.
    pub tools: Option<&'a [String]>,
    /// The denylist.
    pub disallowed: &'a [String],
}

/// Everything tool resolution reads, as plain values. Build one with [`ToolRequest::new`]
/// and struct-update syntax.
#[derive(Clone, Copy, Debug)]
pub struct ToolRequest<'a> {
    /// The main conversation's tools: built-ins, then MCP tools (TOOLS-1).
    pub pool: &'a [String],
    /// The definition's `tools` / `disallowedTools`.
    pub fields: Fields<'a>,
    /// Depth, mode, fork, teammate, resume and effective permission mode.
    pub placement: Placement,
    /// The version gates in force.
    pub gates: Gates,
    /// `SubagentHandback` is attached ([`handback_attached`], HANDBACK-1).
    pub handback: bool,
    /// TOOLS-1: the platform.
    pub platform: Platform,
    /// TOOLS-17: persistent memory is active (the definition sets `memory` and auto
    /// memory is on, MEM-2).
    pub memory: bool,
    /// TOOLS-19 / MAIN-1: the set is for a `--agent` main thread, not a subagent.
    pub main_thread: bool,
    /// TOOLS-10: how a teammate runs (read only when [`Placement::teammate`]).
    pub teammate_process: TeammateProcess,
}

impl<'a> ToolRequest<'a> {
    /// A request with no fields set, no handback, no memory, on Linux.
    pub fn new(pool: &'a [String], placement: Placement, gates: Gates) -> ToolRequest<'a> {
        ToolRequest {
            pool,
            fields: Fields::default(),
            placement,
            gates,
            handback: false,
            platform: Platform::Linux,
            memory: false,
            main_thread: false,
            teammate_process: TeammateProcess::InProcess,
        }
    }
}

/// Which stage of the resolution a [`Step`] belongs to, in the seeds' order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StepKind {
    /// What the run starts from (TOOLS-1, TOOLS-2, TOOLS-10, TOOLS-19).
    BasePool,
    /// Filter 1 (TOOLS-3, DEPTH-3, Q-20, PERM-16).
    FilterOne,
    /// `disallowedTools` (TOOLS-11, TOOLS-13, TOOLS-14).
    Disallowed,
    /// The `tools` allowlist (TOOLS-11, TOOLS-15).
    NotInTools,
    /// Filter 2, background only (TOOLS-5, TOOLS-6, TOOLS-8, TOOLS-9).
    FilterTwo,
    /// The zero-tools check (TOOLS-12).
    ZeroTools,
    /// Attached whatever the fields say (TOOLS-16, TOOLS-17).
    Added,
}

impl StepKind {
    /// The trace spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::BasePool => "base_pool",
            StepKind::FilterOne => "filter_one",
            StepKind::Disallowed => "disallowed",
            StepKind::NotInTools => "not_in_tools",
            StepKind::FilterTwo => "filter_two",
            StepKind::ZeroTools => "zero_tools",
            StepKind::Added => "added",
        }
    }
}

impl StepKind {
    /// A step of this kind takes tools away (filter 1, `disallowedTools`, the `tools`
    /// allowlist, filter 2); the others start from, explain or add.
    pub fn removes(self) -> bool {
        matches!(
            self,
            StepKind::FilterOne | StepKind::Disallowed | StepKind::NotInTools | StepKind::FilterTwo
        )
    }
}

/// The run that called a tool it lacks, as [`missing`] reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lacking<'a> {
    /// The main conversation running as an agent (`--agent`, MAIN-1).
    AgentMain,
    /// A subagent of a defined or built-in type, with the steps of its tool resolution
    /// ([`resolve_with`]).
    Subagent(&'a [Step]),
    /// Any other run: plain main, a fork (it has its caller's tools, FORK-4), a run at
    /// depth 0.
    Other,
}

/// TOOLS-1 / TOOLS-10 / MAIN-1: why a run lacks `tool` it called, and the rule. The step
/// of a subagent's resolution that removed it, with that step's rule; for `--agent` main,
/// its agent's `tools` / `disallowedTools` (MAIN-1, the `not_in_tools` kind); otherwise
/// main's pool never had it (`None`): TOOLS-10 for a Task tool the session lacks, TOOLS-1
/// for any other.
pub fn missing(tool: &str, lacking: Lacking<'_>) -> (Option<StepKind>, RuleId) {
    let not_in_session = if TASK_TOOLS.contains(&tool) {
        (None, "TOOLS-10")
    } else {
        (None, "TOOLS-1")
    };
    match lacking {
        Lacking::AgentMain => (Some(StepKind::NotInTools), "MAIN-1"),
        Lacking::Subagent(steps) => steps
            .iter()
            .filter(|step| step.kind.removes() && step.tools.iter().any(|t| t == tool))
            .map(|step| (Some(step.kind), step.rule))
            .next()
            .unwrap_or(not_in_session),
        Lacking::Other => not_in_session,
    }
}

/// TOOLS-12 before its gate: the step's words, with the version read from the gate table
/// once rather than written here.
static LAUNCHED_WITH_NO_TOOLS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "launched with no tools (before v{})",
        gates_table::since("zero_tools_refused")
    )
});

/// One step of the resolution, for the trace and `subsim tools`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The stage.
    pub kind: StepKind,
    /// What the step did, in words.
    pub what: &'static str,
    /// The tools it concerns: the pool for the first step, the removed tools for removals,
    /// the added ones for additions; empty for a step that only explains.
    pub tools: Vec<String>,
    /// The rule behind it.
    pub rule: RuleId,
}

/// Why a `tools` entry resolved to nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Why {
    /// No tool in the pool has that name (misspelt, or the session lacks it).
    Unknown,
    /// Filter 1 removed it: not available to subagents (TOOLS-4).
    NotForSubagents,
    /// `disallowedTools` removed it (TOOLS-11: deny wins).
    Disallowed,
    /// Filter 2 removed it: not on the background allow-list (TOOLS-5).
    Background,
    /// `mcp__*` grants nothing: it is only a `disallowedTools` pattern (TOOLS-13).
    McpStarOnlyDisallowed,
}

impl Why {
    /// The words the zero-tools message uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Why::Unknown => "no such tool",
            Why::NotForSubagents => "not available to subagents",
            Why::Disallowed => "removed by disallowedTools",
            Why::Background => "not available to background subagents",
            Why::McpStarOnlyDisallowed => "mcp__* only works in disallowedTools",
        }
    }

    /// The rule that explains it.
    pub fn rule(self) -> RuleId {
        match self {
            Why::Unknown => "TOOLS-12",
            Why::NotForSubagents => "TOOLS-4",
            Why::Disallowed => "TOOLS-11",
            Why::Background => "TOOLS-5",
            Why::McpStarOnlyDisallowed => "TOOLS-13",
        }
    }
}

/// A `tools` entry that matched nothing usable, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unresolved {
    /// The entry as written.
    pub entry: String,
    /// Why it resolved to nothing.
    pub why: Why,
}

/// The resolved tool set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The tools the run has, in pool order, attached tools last.
    pub tools: Vec<String>,
    /// How it got there.
    pub steps: Vec<Step>,
    /// `tools` entries that matched nothing usable.
    pub unresolved: Vec<String>,
    /// The same entries, each with why.
    pub reasons: Vec<Unresolved>,
    /// `Agent` is present but errors when called (DEPTH-4).
    pub agent_errors: bool,
}

impl Resolved {
    /// Whether the set has `tool` (e.g. TOOLS-18: without `Skill` no skill can be invoked).
    pub fn has(&self, tool: &str) -> bool {
        self.tools.iter().any(|known| known == tool)
    }
}

/// Why a spawn cannot get a tool set (TOOLS-12).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZeroTools {
    /// Entries that resolved to nothing.
    pub unresolved: Vec<String>,
    /// The same entries, each with why.
    pub reasons: Vec<Unresolved>,
    /// The reason code.
    pub reason: RejectReason,
    /// The steps up to the refusal.
    pub steps: Vec<Step>,
}

impl ZeroTools {
    /// TOOLS-12: the error the Agent tool returns, naming every unresolved entry and why.
    pub fn message(&self) -> String {
        let entries = if self.reasons.is_empty() {
            "the list is empty".to_string()
        } else {
            self.reasons
                .iter()
                .map(|entry| format!("{}: {}", entry.entry, entry.why.as_str()))
                .collect::<Vec<_>>()
                .join("; ")
        };
        format!(
            "{}: {} ({entries})",
            messages::ZERO_TOOLS,
            messages::ZERO_TOOLS_DETAIL
        )
    }
}

/// Every built-in tool name the catalog mentions, sorted: what a definition's `tools` or
/// `disallowedTools` entry is checked against before the run (an unknown entry is not an
/// error: at spawn time it resolves to nothing, TOOLS-11).
pub fn known_builtins() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = DEFAULT_MAIN_TOOLS
        .iter()
        .chain(FILTER_ONE.iter())
        .chain(BACKGROUND_ALLOW.iter())
        .chain(TEAMMATE_EXTRA.iter())
        .copied()
        .chain([HANDBACK, "ListAgents", "PowerShell", "TaskOutput", "Task"])
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The tool name a `tools`/`disallowedTools` entry names, without its `(…)` specifier:
/// `Bash` for `Bash(git push *)`, `Agent` for `Agent(worker)`. MCP patterns come back as
/// written.
pub fn entry_base(entry: &str) -> &str {
    let entry = entry.trim();
    entry.split('(').next().unwrap_or(entry).trim()
}

fn is_mcp(tool: &str) -> bool {
    tool.starts_with("mcp__")
}

/// Does a `tools`/`disallowedTools` entry name `tool`? Handles `Agent(x)`, the `Task`
/// alias (TOOLS-20), `Bash(spec)` (TOOLS-14), `mcp__server`, `mcp__server__*` and, when
/// `allow_mcp_star`, `mcp__*` (TOOLS-13).
pub fn entry_matches(entry: &str, tool: &str, allow_mcp_star: bool) -> bool {
    let entry = entry.trim();
    let base = entry.split('(').next().unwrap_or(entry).trim();
    let base = if base == "Task" { "Agent" } else { base };
    if base == tool {
        return true;
    }
    if let Some(rest) = base.strip_prefix("mcp__") {
        if !is_mcp(tool) {
            return false;
        }
        if rest == "*" {
            return allow_mcp_star;
        }
        let server = rest.strip_suffix("__*").unwrap_or(rest);
        if !server.contains("__") {
            return tool.starts_with(&format!("mcp__{server}__"));
        }
    }
    false
}

/// The rule a matching `disallowedTools` entry removes under.
fn disallowed_rule(entry: &str) -> RuleId {
    let entry = entry.trim();
    if entry.starts_with("mcp__") {
        "TOOLS-13"
    } else if entry.contains('(') {
        "TOOLS-14"
    } else {
        "TOOLS-11"
    }
}

/// Pushes one step per rule, keeping the first-seen order of rules.
fn push_grouped(
    steps: &mut Vec<Step>,
    kind: StepKind,
    what: &'static str,
    removed: Vec<(String, RuleId)>,
) {
    let mut rules: Vec<RuleId> = Vec::new();
    for (_, rule) in &removed {
        if !rules.contains(rule) {
            rules.push(rule);
        }
    }
    for rule in rules {
        steps.push(Step {
            kind,
            what,
            tools: removed
                .iter()
                .filter(|(_, r)| *r == rule)
                .map(|(tool, _)| tool.clone())
                .collect(),
            rule,
        });
    }
}

/// Resolves a subagent's tools from the main pool (TOOLS-1…20, DEPTH-3/4, HANDBACK-3/4).
///
/// `pool` is the main conversation's tools (built-ins then MCP tools). `handback` says
/// whether `SubagentHandback` is attached (HANDBACK-1), computed by the caller. A thin
/// wrapper over [`resolve_with`] for the inputs the engine has always passed.
pub fn resolve(
    pool: &[String],
    fields: Fields<'_>,
    placement: Placement,
    gates: &Gates,
    handback: bool,
) -> Result<Resolved, ZeroTools> {
    resolve_with(&ToolRequest {
        fields,
        handback,
        ..ToolRequest::new(pool, placement, *gates)
    })
}

/// Resolves a tool set from `request`: the whole TOOLS area (see the module docs), one
/// step after another in the seeds' order ([`StepKind`]).
pub fn resolve_with(request: &ToolRequest<'_>) -> Result<Resolved, ZeroTools> {
    if request.placement.fork && !request.main_thread {
        return Ok(fork_pool(request));
    }
    let fields = request.fields;
    let mut steps = Vec::new();
    let mut available = base_pool(request, &mut steps);
    let mut filter_one = Vec::new();
    if !request.main_thread {
        available = task_tools(request, available, &mut steps);
        (available, filter_one) = remove_by_filter_one(request, available, &mut steps);
    }
    let (mut available, disallowed_removed) =
        remove_disallowed(fields.disallowed, available, &mut steps);
    let mut reasons: Vec<Unresolved> = Vec::new();
    if let Some(list) = fields.tools {
        let removed = Removed {
            filter_one: &filter_one,
            disallowed: &disallowed_removed,
        };
        available = keep_listed(list, available, removed, &mut reasons, &mut steps);
    }
    available = filter_two(request, available, &mut reasons, &mut steps);
    // Keep the entries in the order they were written.
    if let Some(list) = fields.tools {
        reasons.sort_by_key(|unresolved| list.iter().position(|entry| *entry == unresolved.entry));
    }
    let unresolved: Vec<String> = reasons.iter().map(|entry| entry.entry.clone()).collect();
    if fields.tools.is_some() && available.is_empty() && !request.main_thread {
        if let Some(refusal) = zero_tools(&request.gates, &mut steps) {
            return Err(ZeroTools {
                unresolved,
                reasons,
                reason: refusal,
                steps,
            });
        }
    }
    added(request, &mut available, &mut steps);
    Ok(Resolved {
        tools: available,
        steps,
        unresolved,
        reasons,
        agent_errors: false,
    })
}

/// TOOLS-2: a fork gets exactly the main pool; DEPTH-4: Agent errors at the limit;
/// FORK-12: no SubagentHandback.
fn fork_pool(request: &ToolRequest<'_>) -> Resolved {
    let placement = request.placement;
    let (agent_state, _) = agent_tool(placement.depth, placement.depth_limit, true);
    Resolved {
        tools: request.pool.to_vec(),
        steps: vec![Step {
            kind: StepKind::BasePool,
            what: "fork: the main pool exactly, both filters skipped",
            tools: request.pool.to_vec(),
            rule: "TOOLS-2",
        }],
        unresolved: vec![],
        reasons: vec![],
        agent_errors: agent_state == AgentTool::Errors,
    }
}

/// `candidates` that `available` lacks and `admit` lets in, appended to `available` in
/// the candidates' order; answers them.
fn add_missing(
    available: &mut Vec<String>,
    candidates: &[&str],
    admit: impl Fn(&str) -> bool,
) -> Vec<String> {
    let added: Vec<String> = candidates
        .iter()
        .filter(|tool| !available.iter().any(|known| known == *tool) && admit(tool))
        .map(|tool| String::from(*tool))
        .collect();
    available.extend(added.iter().cloned());
    added
}

/// The base pool (TOOLS-1; MAIN-1 for a `--agent` main thread): the main pool without
/// `SubagentHandback`, and Glob and Grep on macOS, Linux and WSL even when main lacks them.
fn base_pool(request: &ToolRequest<'_>, steps: &mut Vec<Step>) -> Vec<String> {
    let mut available: Vec<String> = Vec::new();
    for tool in request.pool {
        if tool != HANDBACK && !available.contains(tool) {
            available.push(tool.clone());
        }
    }
    let (what, rule) = if request.main_thread {
        ("the main pool (a --agent main thread)", "MAIN-1")
    } else {
        ("the main conversation's built-in and MCP tools", "TOOLS-1")
    };
    steps.push(Step {
        kind: StepKind::BasePool,
        what,
        tools: available.clone(),
        rule,
    });
    if !request.main_thread && request.platform.adds_glob_grep() {
        let added = add_missing(&mut available, &["Glob", "Grep"], |_| true);
        if !added.is_empty() {
            steps.push(Step {
                kind: StepKind::BasePool,
                what: "added on macOS, Linux and WSL",
                tools: added,
                rule: "TOOLS-1",
            });
        }
    }
    available
}

/// TOOLS-10: the Task tools follow the session, except in a split-pane teammate, which
/// has them iff its own model does.
fn task_tools(
    request: &ToolRequest<'_>,
    mut available: Vec<String>,
    steps: &mut Vec<Step>,
) -> Vec<String> {
    let step = |what, tools| Step {
        kind: StepKind::BasePool,
        what,
        tools,
        rule: "TOOLS-10",
    };
    match request.teammate_process {
        TeammateProcess::SplitPane {
            model_has_task_tools: true,
        } if request.placement.teammate => {
            let added = add_missing(&mut available, &TASK_TOOLS, |_| true);
            if !added.is_empty() {
                steps.push(step(
                    "added: a split-pane teammate's own model has the Task tools",
                    added,
                ));
            }
        }
        TeammateProcess::SplitPane {
            model_has_task_tools: false,
        } if request.placement.teammate => {
            let (removed, kept): (Vec<String>, Vec<String>) = available
                .into_iter()
                .partition(|tool| TASK_TOOLS.contains(&tool.as_str()));
            available = kept;
            if !removed.is_empty() {
                steps.push(step(
                    "removed: a split-pane teammate's own model lacks the Task tools",
                    removed,
                ));
            }
        }
        _ => {
            if !TASK_TOOLS
                .iter()
                .any(|task| available.iter().any(|tool| tool == task))
            {
                steps.push(step(
                    "the session has no Task tools, so the run has none either",
                    vec![],
                ));
            }
        }
    }
    available
}

/// The rule under which filter 1 (TOOLS-3) removes `tool`, if it does.
fn filter_one_rule(tool: &str, placement: Placement, gates: &Gates) -> Option<RuleId> {
    let (agent_state, agent_rule) = agent_tool(placement.depth, placement.depth_limit, false);
    match tool {
        // DEPTH-3: only at the depth limit.
        "Agent" if agent_state != AgentTool::Available => Some(agent_rule),
        name if FILTER_ONE.contains(&name) => Some("TOOLS-3"),
        // the effective mode decides.
        "ExitPlanMode" if placement.permission_mode != PermissionMode::Plan => Some("TOOLS-3"),
        // Q-20 / D-1: DE's and BLOG's list, up to v2.1.271.
        "TaskOutput" if gates.task_output_filtered => Some("Q-20"),
        _ => None,
    }
}

/// Filter 1 (TOOLS-3), not for a main thread (TOOLS-19): answers what is kept and what
/// was removed, each with its rule.
fn remove_by_filter_one(
    request: &ToolRequest<'_>,
    available: Vec<String>,
    steps: &mut Vec<Step>,
) -> (Vec<String>, Vec<(String, RuleId)>) {
    let placement = request.placement;
    let mut removed: Vec<(String, RuleId)> = Vec::new();
    let mut kept = Vec::new();
    for tool in available {
        match filter_one_rule(&tool, placement, &request.gates) {
            Some(rule) => removed.push((tool, rule)),
            None => kept.push(tool),
        }
    }
    push_grouped(
        steps,
        StepKind::FilterOne,
        "filter 1 removed",
        removed.clone(),
    );
    if placement.permission_mode == PermissionMode::Plan
        && kept.iter().any(|tool| tool == "ExitPlanMode")
    {
        steps.push(Step {
            kind: StepKind::FilterOne,
            what: "kept: the effective permission mode is plan",
            tools: vec!["ExitPlanMode".into()],
            rule: "PERM-16",
        });
    }
    (kept, removed)
}

/// TOOLS-11 / TOOLS-13 / TOOLS-14: `disallowedTools` first (`mcp__*` allowed here):
/// answers what is kept and what was removed, each with its rule.
fn remove_disallowed(
    disallowed: &[String],
    available: Vec<String>,
    steps: &mut Vec<Step>,
) -> (Vec<String>, Vec<(String, RuleId)>) {
    let mut removed: Vec<(String, RuleId)> = Vec::new();
    if disallowed.is_empty() {
        return (available, removed);
    }
    let mut kept = Vec::new();
    for tool in available {
        match disallowed
            .iter()
            .find(|entry| entry_matches(entry, &tool, true))
        {
            Some(entry) => removed.push((tool, disallowed_rule(entry))),
            None => kept.push(tool),
        }
    }
    push_grouped(
        steps,
        StepKind::Disallowed,
        "disallowedTools removed",
        removed.clone(),
    );
    (kept, removed)
}

/// What the two earlier removals took, for saying why a `tools` entry matched nothing.
#[derive(Clone, Copy)]
struct Removed<'a> {
    filter_one: &'a [(String, RuleId)],
    disallowed: &'a [(String, RuleId)],
}

/// Why `entry` of `tools` matched nothing left (TOOLS-11 / TOOLS-13).
fn why_unresolved(entry: &str, removed: Removed<'_>) -> Why {
    let took =
        |by: &[(String, RuleId)]| by.iter().any(|(tool, _)| entry_matches(entry, tool, false));
    if entry.trim() == "mcp__*" {
        Why::McpStarOnlyDisallowed
    } else if took(removed.disallowed) {
        Why::Disallowed
    } else if took(removed.filter_one) {
        Why::NotForSubagents
    } else {
        Why::Unknown
    }
}

/// TOOLS-11 / TOOLS-15: the allowlist `list`, resolved against what is left; answers what
/// it keeps, in pool order, and adds the entries that matched nothing to `reasons`.
fn keep_listed(
    list: &[String],
    mut available: Vec<String>,
    removed: Removed<'_>,
    reasons: &mut Vec<Unresolved>,
    steps: &mut Vec<Step>,
) -> Vec<String> {
    let mut kept: Vec<&String> = Vec::new();
    for entry in list {
        let matched: Vec<&String> = available
            .iter()
            .filter(|tool| entry_matches(entry, tool, false))
            .collect();
        if matched.is_empty() {
            reasons.push(Unresolved {
                entry: entry.clone(),
                why: why_unresolved(entry, removed),
            });
        }
        for tool in matched {
            if !kept.contains(&tool) {
                kept.push(tool);
            }
        }
    }
    let dropped: Vec<(String, RuleId)> = available
        .iter()
        .filter(|tool| !kept.contains(tool))
        .map(|tool| {
            let rule = if is_mcp(tool) { "TOOLS-15" } else { "TOOLS-11" };
            (tool.clone(), rule)
        })
        .collect();
    let kept: Vec<String> = kept.into_iter().cloned().collect();
    // Keep pool order.
    available.retain(|tool| kept.contains(tool));
    push_grouped(steps, StepKind::NotInTools, "not in tools", dropped);
    available
}

/// Filter 2 (TOOLS-5), background only; never for forks (before this), resumed foreground
/// runs (TOOLS-6) or a --agent main thread (TOOLS-19).
fn filter_two(
    request: &ToolRequest<'_>,
    available: Vec<String>,
    reasons: &mut Vec<Unresolved>,
    steps: &mut Vec<Step>,
) -> Vec<String> {
    let placement = request.placement;
    let skipped = |what, rule| Step {
        kind: StepKind::FilterTwo,
        what,
        tools: vec![],
        rule,
    };
    if request.main_thread {
        steps.push(skipped(
            "skipped: a --agent session is the main thread, with no background filter",
            "TOOLS-19",
        ));
        available
    } else if placement.mode == Mode::Background && placement.first_ran_foreground {
        steps.push(skipped(
            "skipped: a resumed run keeps the set of its first, foreground run",
            "TOOLS-6",
        ));
        available
    } else if placement.mode == Mode::Background {
        let available = remove_by_filter_two(request, available, steps);
        if let Some(list) = request.fields.tools {
            unresolved_in_background(list, &available, reasons);
        }
        available
    } else {
        available
    }
}

/// The rule under which filter 2 removes `tool` from a background run, if it does.
fn filter_two_rule(tool: &str, allow: &[&str], teammate: bool) -> Option<RuleId> {
    let keep = is_mcp(tool)
        || allow.contains(&tool)
        // Agent and ExitPlanMode follow filter 1's conditions wherever the run is.
        || tool == "Agent"
        || tool == "ExitPlanMode"
        || (teammate && TEAMMATE_EXTRA.contains(&tool));
    match tool {
        _ if keep => None,
        // TOOLS-8: ListAgents is an ordinary built-in, lost in the background.
        "ListAgents" => Some("TOOLS-8"),
        _ => Some("TOOLS-5"),
    }
}

/// Filter 2's removals (silently, TOOLS-7), and what a teammate keeps on top of the
/// allow-list (TOOLS-9); answers what is kept.
fn remove_by_filter_two(
    request: &ToolRequest<'_>,
    available: Vec<String>,
    steps: &mut Vec<Step>,
) -> Vec<String> {
    let teammate = request.placement.teammate;
    let allow = background_allow_list(&request.gates);
    let mut removed: Vec<(String, RuleId)> = Vec::new();
    let mut kept = Vec::new();
    for tool in available {
        match filter_two_rule(&tool, &allow, teammate) {
            Some(rule) => removed.push((tool, rule)),
            None => kept.push(tool),
        }
    }
    push_grouped(
        steps,
        StepKind::FilterTwo,
        "filter 2 (background) removed, silently",
        removed,
    );
    if teammate {
        let extras: Vec<String> = kept
            .iter()
            .filter(|tool| TEAMMATE_EXTRA.contains(&tool.as_str()))
            .cloned()
            .collect();
        if !extras.is_empty() {
            steps.push(Step {
                kind: StepKind::FilterTwo,
                what: "kept by a teammate on top of the allow-list",
                tools: extras,
                rule: "TOOLS-9",
            });
        }
    }
    kept
}

/// TOOLS-12: entries of `tools` whose every match fell to filter 2 now resolve to nothing.
fn unresolved_in_background(list: &[String], available: &[String], reasons: &mut Vec<Unresolved>) {
    for entry in list {
        if !reasons.iter().any(|known| &known.entry == entry)
            && !available
                .iter()
                .any(|tool| entry_matches(entry, tool, false))
        {
            reasons.push(Unresolved {
                entry: entry.clone(),
                why: Why::Background,
            });
        }
    }
}

/// TOOLS-12 / Q-19 / D-18: the explicit list resolved to nothing, judged before the
/// attached tools. Answers the refusal when the gates refuse it; else the run launches.
fn zero_tools(gates: &Gates, steps: &mut Vec<Step>) -> Option<RejectReason> {
    let (what, refusal) = if gates.zero_tools_refused {
        (
            "refused: no entry in tools resolves to a usable tool",
            Some(RejectReason::ZeroTools),
        )
    } else {
        (LAUNCHED_WITH_NO_TOOLS.as_str(), None)
    };
    steps.push(Step {
        kind: StepKind::ZeroTools,
        what,
        tools: vec![],
        rule: "TOOLS-12",
    });
    refusal
}

/// The tools attached whatever the filters say: memory's Read, Write and Edit (TOOLS-17 /
/// MEM-3, not against `disallowedTools`), then `SubagentHandback` (TOOLS-16 /
/// HANDBACK-3/4, against nothing).
fn added(request: &ToolRequest<'_>, available: &mut Vec<String>, steps: &mut Vec<Step>) {
    if request.memory {
        let disallowed = |tool: &str| {
            request
                .fields
                .disallowed
                .iter()
                .any(|entry| entry_matches(entry, tool, true))
        };
        let added = add_missing(available, &MEMORY_TOOLS, |tool| !disallowed(tool));
        if !added.is_empty() {
            steps.push(Step {
                kind: StepKind::Added,
                what: "enabled for persistent memory",
                tools: added,
                rule: "TOOLS-17",
            });
        }
    }
    if request.handback && !request.main_thread && !available.iter().any(|tool| tool == HANDBACK) {
        available.push(HANDBACK.to_string());
        steps.push(Step {
            kind: StepKind::Added,
            what: "attached whatever tools and disallowedTools say",
            tools: vec![HANDBACK.into()],
            rule: "TOOLS-16",
        });
    }
}

/// TOOLS-13 / TOOLS-15 / MCP-1: the tools of a definition's inline `mcpServers` that its own
/// fields let through. An inline server connects for the subagent and brings its tools
/// (MCP-1), and they go through the same two fields as the inherited MCP tools:
/// `disallowedTools` first (`mcp__*` removes every MCP tool, `mcp__<server>` or
/// `mcp__<server>__*` that server's, TOOLS-13), then the `tools` allowlist, which keeps an
/// MCP tool only if an entry lists it (`mcp__<server>`, `mcp__<server>__*` or the tool's
/// own name, TOOLS-15) — issue #23, docs/decisions.md. Returns the kept tools, in order,
/// and one step per rule that removed any.
pub fn inline_mcp_tools(inline: &[String], fields: Fields<'_>) -> (Vec<String>, Vec<Step>) {
    let mut kept = Vec::new();
    let mut disallowed: Vec<(String, RuleId)> = Vec::new();
    let mut not_listed: Vec<(String, RuleId)> = Vec::new();
    for tool in inline {
        if let Some(entry) = fields
            .disallowed
            .iter()
            .find(|entry| entry_matches(entry, tool, true))
        {
            disallowed.push((tool.clone(), disallowed_rule(entry)));
        } else if fields
            .tools
            .is_some_and(|list| !list.iter().any(|entry| entry_matches(entry, tool, false)))
        {
            not_listed.push((tool.clone(), "TOOLS-15"));
        } else {
            kept.push(tool.clone());
        }
    }
    let mut steps = Vec::new();
    push_grouped(
        &mut steps,
        StepKind::Disallowed,
        "disallowedTools removed an inline server's tools",
        disallowed,
    );
    push_grouped(
        &mut steps,
        StepKind::NotInTools,
        "not in tools: an inline server's tools",
        not_listed,
    );
    (kept, steps)
}

/// HANDBACK-1: `SubagentHandback` is attached iff the run is in auto mode, is not a fork,
/// and the version has it.
pub fn handback_attached(mode: PermissionMode, fork: bool, gates: &Gates) -> bool {
    mode == PermissionMode::Auto && !fork && gates.handback
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_kinds_spell_as_the_trace_reasons() {
        // scenario-format.md: a refused call's `reason` names the step that removed the tool.
        let kinds = [
            (StepKind::BasePool, "base_pool"),
            (StepKind::FilterOne, "filter_one"),
            (StepKind::Disallowed, "disallowed"),
            (StepKind::NotInTools, "not_in_tools"),
            (StepKind::FilterTwo, "filter_two"),
            (StepKind::ZeroTools, "zero_tools"),
            (StepKind::Added, "added"),
        ];
        for (kind, spelling) in kinds {
            assert_eq!(kind.as_str(), spelling);
        }
    }

    #[test]
    fn tools_1_the_base_pool_has_each_tool_once_and_never_the_handback_tool() {
        // TOOLS-1: the base pool is the main conversation's tools; HANDBACK-1 attaches
        // SubagentHandback by its own rule, so a pool that lists it (or lists a tool twice)
        // does not pass it on.
        let mut pool = pool();
        pool.push("Read".into());
        pool.push(HANDBACK.into());
        let request = ToolRequest::new(&pool, placement(Mode::Foreground, 1), gates(292));
        let resolved = resolve_with(&request).expect("tools left");
        assert_eq!(
            resolved.tools.iter().filter(|tool| *tool == "Read").count(),
            1,
            "{:?}",
            resolved.tools
        );
        assert!(!resolved.tools.iter().any(|tool| tool == HANDBACK));
        // HANDBACK-1: `resolve` attaches it when its caller says so, and only then.
        for attached in [true, false] {
            let resolved = resolve(
                &pool,
                Fields::default(),
                placement(Mode::Foreground, 1),
                &gates(292),
                attached,
            )
            .expect("tools left");
            assert_eq!(resolved.tools.iter().any(|tool| tool == HANDBACK), attached);
        }
    }

    #[test]
    fn each_unresolved_entry_cites_its_rule() {
        // TOOLS-12's message explains each entry that resolved to nothing, by rule.
        let rows = [
            (Why::Unknown, "TOOLS-12"),
            (Why::NotForSubagents, "TOOLS-4"),
            (Why::Disallowed, "TOOLS-11"),
            (Why::Background, "TOOLS-5"),
            (Why::McpStarOnlyDisallowed, "TOOLS-13"),
        ];
        for (why, rule) in rows {
            assert_eq!(why.rule(), rule, "{why:?}");
        }
    }

    #[test]
    fn known_builtins_cover_every_list_once() {
        let known = known_builtins();
        for tool in DEFAULT_MAIN_TOOLS.iter().chain(BACKGROUND_ALLOW.iter()) {
            assert!(known.contains(tool), "{tool}");
        }
        assert!(known.contains(&"SubagentHandback"));
        assert!(known.contains(&"Task"), "the legacy alias (TOOLS-20)");
        assert!(!known.contains(&"Reed"));
        let mut sorted = known.clone();
        sorted.dedup();
        assert_eq!(sorted, known, "sorted, no duplicates");
    }

    #[test]
    fn entry_base_drops_the_specifier() {
        assert_eq!(entry_base(" Bash(git push *) "), "Bash");
        assert_eq!(entry_base("Agent(worker, researcher)"), "Agent");
        assert_eq!(entry_base("mcp__github__*"), "mcp__github__*");
    }
    use crate::Version;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// `(tools, disallowedTools, must have, must lack)`.
    type FieldsRow<'a> = (
        Option<&'a [String]>,
        &'a [String],
        &'a [&'a str],
        &'a [&'a str],
    );

    fn pool() -> Vec<String> {
        let mut pool = default_main_tools();
        pool.push("mcp__github__create_issue".into());
        pool.push("mcp__github__list_prs".into());
        pool.push("mcp__slack__post".into());
        pool
    }

    fn placement(mode: Mode, depth: u32) -> Placement {
        Placement {
            mode,
            ..Placement::at(depth, 3)
        }
    }

    fn gates(patch: u32) -> Gates {
        Gates::for_version(Version::v2_1(patch))
    }

    /// Expected outcome of one resolution: the tools it must have and must lack.
    struct Expect<'e> {
        has: &'e [&'e str],
        lacks: &'e [&'e str],
    }

    fn check(request: ToolRequest<'_>, expected: Expect<'_>) -> Resolved {
        let resolved = resolve_with(&request).unwrap_or_else(|zero| {
            panic!("{request:?} refused: {}", zero.message());
        });
        for tool in expected.has {
            assert!(resolved.has(tool), "{tool} missing: {:#?}", resolved);
        }
        for tool in expected.lacks {
            assert!(!resolved.has(tool), "{tool} present: {:#?}", resolved);
        }
        resolved
    }

    fn with_fields<'a>(
        request: ToolRequest<'a>,
        tools: Option<&'a [String]>,
        disallowed: &'a [String],
    ) -> ToolRequest<'a> {
        ToolRequest {
            fields: Fields { tools, disallowed },
            ..request
        }
    }

    #[test]
    fn tools_1_glob_grep_added_except_on_windows() {
        let no_search: Vec<String> = default_main_tools()
            .into_iter()
            .filter(|tool| tool != "Glob" && tool != "Grep")
            .collect();
        for (platform, added) in [
            (Platform::Linux, true),
            (Platform::MacOs, true),
            (Platform::Wsl, true),
            (Platform::Windows, false),
        ] {
            let request = ToolRequest {
                platform,
                ..ToolRequest::new(&no_search, placement(Mode::Foreground, 1), gates(292))
            };
            let resolved = resolve_with(&request).unwrap();
            assert_eq!(resolved.has("Glob"), added, "{platform:?}");
            assert_eq!(resolved.has("Grep"), added, "{platform:?}");
            assert_eq!(
                resolved
                    .steps
                    .iter()
                    .any(|s| s.what == "added on macOS, Linux and WSL"),
                added
            );
        }
    }

    #[test]
    fn tools_2_forks_get_the_pool() {
        let pool = pool();
        let mut at_limit = placement(Mode::Background, 3);
        at_limit.fork = true;
        let resolved = resolve(&pool, Fields::default(), at_limit, &gates(292), true).unwrap();
        assert_eq!(resolved.tools, pool);
        assert!(resolved.agent_errors);
        assert_eq!(resolved.steps[0].rule, "TOOLS-2");
    }

    #[test]
    fn tools_3_filter_one_by_version_and_mode() {
        let pool = pool();
        // (version, effective mode, depth, tool, kept)
        let rows = [
            (292, PermissionMode::Default, 1, "AskUserQuestion", false),
            (292, PermissionMode::Default, 1, "EndConversation", false),
            (292, PermissionMode::Default, 1, "EnterPlanMode", false),
            (292, PermissionMode::Default, 1, "ScheduleWakeup", false),
            (292, PermissionMode::Default, 1, "WaitForMcpServers", false),
            (292, PermissionMode::Default, 1, "Workflow", false),
            (292, PermissionMode::Default, 1, "ExitPlanMode", false),
            // PERM-16 / Q-18: the effective mode plan keeps ExitPlanMode.
            (292, PermissionMode::Plan, 1, "ExitPlanMode", true),
            // DEPTH-3: Agent only at the limit.
            (292, PermissionMode::Default, 2, "Agent", true),
            (292, PermissionMode::Default, 3, "Agent", false),
            // Q-20 / D-1: TaskOutput up to v2.1.271.
            (271, PermissionMode::Default, 1, "TaskOutput", false),
            (272, PermissionMode::Default, 1, "TaskOutput", true),
            (292, PermissionMode::Default, 1, "Read", true),
        ];
        for (version, mode, depth, tool, kept) in rows {
            let mut at = placement(Mode::Foreground, depth);
            at.permission_mode = mode;
            let resolved = resolve_with(&ToolRequest::new(&pool, at, gates(version))).unwrap();
            assert_eq!(
                resolved.has(tool),
                kept,
                "{tool} at 2.1.{version} {mode} d{depth}"
            );
        }
        let at_limit = resolve_with(&ToolRequest::new(
            &pool,
            placement(Mode::Foreground, 3),
            gates(271),
        ))
        .unwrap();
        let rules: Vec<(StepKind, RuleId)> = at_limit
            .steps
            .iter()
            .map(|step| (step.kind, step.rule))
            .collect();
        assert_eq!(
            rules,
            [
                (StepKind::BasePool, "TOOLS-1"),
                (StepKind::FilterOne, "DEPTH-3"),
                (StepKind::FilterOne, "TOOLS-3"),
                (StepKind::FilterOne, "Q-20"),
            ]
        );
    }

    #[test]
    fn tools_4_never_granted_even_if_listed() {
        let pool = pool();
        let listed = strings(&["AskUserQuestion", "Read"]);
        let request = with_fields(
            ToolRequest::new(&pool, placement(Mode::Foreground, 1), gates(292)),
            Some(&listed),
            &[],
        );
        let resolved = check(
            request,
            Expect {
                has: &["Read"],
                lacks: &["AskUserQuestion"],
            },
        );
        assert_eq!(resolved.tools, strings(&["Read"]));
        assert_eq!(
            resolved.reasons,
            [Unresolved {
                entry: "AskUserQuestion".into(),
                why: Why::NotForSubagents
            }]
        );
    }

    #[test]
    fn tools_5_background_allow_list_19_or_20() {
        assert_eq!(background_allow_list(&gates(279)).len(), 19);
        assert!(!background_allow_list(&gates(279)).contains(&"LSP"));
        assert_eq!(background_allow_list(&gates(280)).len(), 20);
        let pool = pool();
        // (version, tool, kept in the background)
        let rows = [
            (292, "LSP", true),
            (279, "LSP", false),
            (292, "mcp__github__create_issue", true),
            (292, "TaskCreate", false),
            (292, "CronList", false),
            (292, "Agent", true),
            (292, "Bash", true),
            (292, "SendMessage", true),
            (292, "TaskStop", true),
        ];
        for (version, tool, kept) in rows {
            let resolved = resolve_with(&ToolRequest::new(
                &pool,
                placement(Mode::Background, 1),
                gates(version),
            ))
            .unwrap();
            assert_eq!(resolved.has(tool), kept, "{tool} at 2.1.{version}");
        }
        // ExitPlanMode follows filter 1 in the background too.
        let mut plan = placement(Mode::Background, 1);
        plan.permission_mode = PermissionMode::Plan;
        check(
            ToolRequest::new(&pool, plan, gates(292)),
            Expect {
                has: &["ExitPlanMode"],
                lacks: &[],
            },
        );
        // SubagentHandback survives filter 2 from v2.1.271 (HANDBACK-4).
        let request = ToolRequest {
            handback: handback_attached(PermissionMode::Auto, false, &gates(271)),
            ..ToolRequest::new(&pool, placement(Mode::Background, 1), gates(271))
        };
        check(
            request,
            Expect {
                has: &[HANDBACK],
                lacks: &[],
            },
        );
        assert!(!handback_attached(PermissionMode::Auto, false, &gates(270)));
        assert!(!handback_attached(PermissionMode::Auto, true, &gates(292)));
        assert!(!handback_attached(
            PermissionMode::AcceptEdits,
            false,
            &gates(292)
        ));
    }

    #[test]
    fn tools_6_resumed_foreground_runs_keep_their_set() {
        let pool = pool();
        let mut resumed = placement(Mode::Background, 1);
        resumed.first_ran_foreground = true;
        let resolved = check(
            ToolRequest::new(&pool, resumed, gates(292)),
            Expect {
                has: &["TaskCreate", "CronList"],
                lacks: &[],
            },
        );
        assert!(resolved.steps.iter().any(|step| step.rule == "TOOLS-6"));
    }

    #[test]
    fn tools_7_filter_two_is_silent_unless_nothing_is_left() {
        let pool = pool();
        let listed = strings(&["Read", "TaskCreate"]);
        let request = with_fields(
            ToolRequest::new(&pool, placement(Mode::Background, 1), gates(292)),
            Some(&listed),
            &[],
        );
        let resolved = check(
            request,
            Expect {
                has: &["Read"],
                lacks: &["TaskCreate"],
            },
        );
        assert_eq!(
            resolved.reasons,
            [Unresolved {
                entry: "TaskCreate".into(),
                why: Why::Background
            }]
        );
        let only_background_removed = strings(&["TaskCreate"]);
        let refused = resolve_with(&with_fields(
            ToolRequest::new(&pool, placement(Mode::Background, 1), gates(292)),
            Some(&only_background_removed),
            &[],
        ))
        .unwrap_err();
        assert!(refused
            .message()
            .contains("TaskCreate: not available to background"));
    }

    #[test]
    fn tools_12_unresolved_entries_keep_their_written_order() {
        // TaskCreate resolves, then filter 2 drops it (its reason is found last); Bogus
        // never resolves (found first). The error lists them as the tools field wrote them.
        let pool = pool();
        let listed = strings(&["TaskCreate", "Bogus", "Read"]);
        let resolved = check(
            with_fields(
                ToolRequest::new(&pool, placement(Mode::Background, 1), gates(292)),
                Some(&listed),
                &[],
            ),
            Expect {
                has: &["Read"],
                lacks: &["TaskCreate", "Bogus"],
            },
        );
        assert_eq!(
            resolved.reasons,
            [
                Unresolved {
                    entry: "TaskCreate".into(),
                    why: Why::Background
                },
                Unresolved {
                    entry: "Bogus".into(),
                    why: Why::Unknown
                },
            ]
        );
        assert_eq!(resolved.unresolved, strings(&["TaskCreate", "Bogus"]));
    }

    #[test]
    fn perm_16_a_plan_mode_run_names_the_kept_exit_plan_mode() {
        let perm_16 = |resolved: &Resolved| -> Vec<Step> {
            resolved
                .steps
                .iter()
                .filter(|step| step.rule == "PERM-16")
                .cloned()
                .collect()
        };
        let pool = pool();
        let mut plan = placement(Mode::Foreground, 1);
        plan.permission_mode = PermissionMode::Plan;
        let kept = resolve_with(&ToolRequest::new(&pool, plan, gates(292))).unwrap();
        assert_eq!(
            perm_16(&kept),
            [Step {
                kind: StepKind::FilterOne,
                what: "kept: the effective permission mode is plan",
                tools: strings(&["ExitPlanMode"]),
                rule: "PERM-16",
            }]
        );
        // Plan mode, but the session has no ExitPlanMode: nothing was kept, no step.
        let without: Vec<String> = pool
            .iter()
            .filter(|tool| *tool != "ExitPlanMode")
            .cloned()
            .collect();
        let none = resolve_with(&ToolRequest::new(&without, plan, gates(292))).unwrap();
        assert!(!none.has("ExitPlanMode"));
        assert_eq!(perm_16(&none), []);
        // Not plan mode: filter 1 removes it (TOOLS-3), no step either.
        let default = resolve_with(&ToolRequest::new(
            &pool,
            placement(Mode::Foreground, 1),
            gates(292),
        ))
        .unwrap();
        assert!(!default.has("ExitPlanMode"));
        assert_eq!(perm_16(&default), []);
    }

    #[test]
    fn tools_8_list_agents() {
        let with_messaging = main_tools(SessionTools {
            cross_session_messaging: true,
            ..SessionTools::default()
        });
        let fg = check(
            ToolRequest::new(&with_messaging, placement(Mode::Foreground, 1), gates(292)),
            Expect {
                has: &["ListAgents", "SendMessage"],
                lacks: &[],
            },
        );
        assert!(fg.has("ListAgents"));
        let bg = check(
            ToolRequest::new(&with_messaging, placement(Mode::Background, 1), gates(292)),
            Expect {
                has: &["SendMessage"],
                lacks: &["ListAgents"],
            },
        );
        assert!(bg
            .steps
            .iter()
            .any(|step| step.rule == "TOOLS-8" && step.tools == ["ListAgents"]));
        // Without cross-session messaging main has no ListAgents, so nobody does.
        check(
            ToolRequest::new(
                &default_main_tools(),
                placement(Mode::Foreground, 1),
                gates(292),
            ),
            Expect {
                has: &[],
                lacks: &["ListAgents"],
            },
        );
    }

    #[test]
    fn tools_9_teammates_keep_task_and_cron_tools() {
        let pool = pool();
        let mut teammate = placement(Mode::Background, 1);
        teammate.teammate = true;
        let resolved = check(
            ToolRequest::new(&pool, teammate, gates(292)),
            Expect {
                has: &TEAMMATE_EXTRA,
                lacks: &["TaskOutput", "Monitor2"],
            },
        );
        assert!(resolved.steps.iter().any(|step| step.rule == "TOOLS-9"));
    }

    #[test]
    fn tools_10_task_tools_follow_the_session() {
        let no_tasks = main_tools(SessionTools {
            task_tools: false,
            ..SessionTools::default()
        });
        let mut teammate = placement(Mode::Background, 1);
        teammate.teammate = true;
        // (placement, process, has TaskCreate)
        let rows = [
            (
                placement(Mode::Foreground, 1),
                TeammateProcess::InProcess,
                false,
            ),
            (teammate, TeammateProcess::InProcess, false),
            (
                teammate,
                TeammateProcess::SplitPane {
                    model_has_task_tools: true,
                },
                true,
            ),
        ];
        for (at, process, has) in rows {
            let request = ToolRequest {
                teammate_process: process,
                ..ToolRequest::new(&no_tasks, at, gates(292))
            };
            let resolved = resolve_with(&request).unwrap();
            assert_eq!(resolved.has("TaskCreate"), has, "{at:?} {process:?}");
            assert!(resolved.steps.iter().any(|step| step.rule == "TOOLS-10"));
            // Each tool once, however many steps added it.
            for tool in &resolved.tools {
                let times = resolved.tools.iter().filter(|t| *t == tool).count();
                assert_eq!(times, 1, "{tool} in {:?}", resolved.tools);
            }
        }
        // How a teammate runs is read only for a teammate: a subagent in a session that has
        // the Task tools keeps what the session gives it.
        let with_tasks = default_main_tools();
        for model_has_task_tools in [true, false] {
            let process = TeammateProcess::SplitPane {
                model_has_task_tools,
            };
            let plain = ToolRequest::new(&with_tasks, placement(Mode::Foreground, 1), gates(292));
            let told = ToolRequest {
                teammate_process: process,
                ..plain
            };
            assert_eq!(
                resolve_with(&told).unwrap().tools,
                resolve_with(&plain).unwrap().tools,
                "{process:?}"
            );
        }
        // A split-pane teammate whose model lacks them loses them even in a session that has them.
        let with_tasks = default_main_tools();
        let request = ToolRequest {
            teammate_process: TeammateProcess::SplitPane {
                model_has_task_tools: false,
            },
            ..ToolRequest::new(&with_tasks, teammate, gates(292))
        };
        let resolved = check(
            request,
            Expect {
                has: &["CronList"],
                lacks: &["TaskCreate", "TaskList"],
            },
        );
        // The step says what it removed, so `subsim tools` can show it.
        assert!(
            resolved.steps.iter().any(|step| step.rule == "TOOLS-10"
                && step.tools.iter().any(|tool| tool == "TaskCreate")),
            "{:?}",
            resolved.steps
        );
    }

    #[test]
    fn tools_11_resolution_table() {
        let pool = pool();
        let allow = strings(&["Read", "Bash", "Write"]);
        let deny = strings(&["Write", "Edit"]);
        let fg = ToolRequest::new(&pool, placement(Mode::Foreground, 1), gates(292));
        // (tools, disallowedTools, has, lacks)
        let rows: [FieldsRow<'_>; 4] = [
            // neither: every tool available to subagents
            (
                None,
                &[],
                &["Read", "Write", "Edit", "Bash", "mcp__slack__post"],
                &["AskUserQuestion"],
            ),
            // tools only: the allowlist
            (
                Some(&allow),
                &[],
                &["Read", "Bash", "Write"],
                &["Edit", "mcp__slack__post"],
            ),
            // disallowedTools only: the pool minus the list
            (
                None,
                &deny,
                &["Read", "Bash", "mcp__slack__post"],
                &["Write", "Edit"],
            ),
            // both: deny first, then tools; Write (in both) is removed
            (Some(&allow), &deny, &["Read", "Bash"], &["Write", "Edit"]),
        ];
        for (tools, disallowed, has, lacks) in rows {
            check(with_fields(fg, tools, disallowed), Expect { has, lacks });
        }
        let both = resolve_with(&with_fields(fg, Some(&allow), &deny)).unwrap();
        let kinds: Vec<StepKind> = both.steps.iter().map(|step| step.kind).collect();
        assert!(kinds.windows(2).all(|pair| pair[0] <= pair[1]), "{kinds:?}");
        assert_eq!(
            both.reasons,
            [Unresolved {
                entry: "Write".into(),
                why: Why::Disallowed
            }]
        );
    }

    #[test]
    fn tools_12_zero_tools_by_version() {
        let pool = pool();
        let misspelt = strings(&["Raed", "Serch"]);
        let empty: Vec<String> = vec![];
        let auto_only = strings(&["EnterPlanMode"]);
        for (version, list, refused) in [
            (292, &misspelt, true),
            (208, &misspelt, true),
            (207, &misspelt, false),
            (292, &empty, true),
            (207, &empty, false),
            (292, &auto_only, true),
        ] {
            let request = with_fields(
                ToolRequest::new(&pool, placement(Mode::Foreground, 1), gates(version)),
                Some(list),
                &[],
            );
            let result = resolve_with(&request);
            assert_eq!(result.is_err(), refused, "2.1.{version} {list:?}");
            if let Ok(resolved) = result {
                assert!(resolved.tools.is_empty());
                assert!(resolved
                    .steps
                    .iter()
                    .any(|step| step.kind == StepKind::ZeroTools));
            }
        }
        let zero = resolve_with(&with_fields(
            ToolRequest::new(&pool, placement(Mode::Foreground, 1), gates(292)),
            Some(&misspelt),
            &[],
        ))
        .unwrap_err();
        assert_eq!(zero.unresolved, misspelt);
        assert_eq!(zero.reason, RejectReason::ZeroTools);
        assert_eq!(
            zero.message(),
            "Agent would be spawned with zero tools: no entry in tools resolves to a usable \
             tool (Raed: no such tool; Serch: no such tool)"
        );
    }

    #[test]
    fn q19_attached_tools_do_not_rescue_a_zero_list() {
        let pool = pool();
        let misspelt = strings(&["Raed"]);
        let mut auto = placement(Mode::Background, 1);
        auto.permission_mode = PermissionMode::Auto;
        let request = ToolRequest {
            handback: true,
            memory: true,
            ..with_fields(
                ToolRequest::new(&pool, auto, gates(292)),
                Some(&misspelt),
                &[],
            )
        };
        assert!(resolve_with(&request).is_err());
        // Before v2.1.208 the run launches with only what is attached.
        let old = ToolRequest {
            gates: gates(207),
            handback: false,
            ..request
        };
        let resolved = resolve_with(&old).unwrap();
        assert_eq!(resolved.tools, strings(&["Read", "Write", "Edit"]));
    }

    #[test]
    fn tools_13_mcp_patterns() {
        let pool = pool();
        let fg = ToolRequest::new(&pool, placement(Mode::Foreground, 1), gates(292));
        let server = strings(&["mcp__github"]);
        let server_star = strings(&["mcp__github__*"]);
        let one = strings(&["mcp__github__list_prs"]);
        let all = strings(&["mcp__*"]);
        let github = ["mcp__github__create_issue", "mcp__github__list_prs"];
        check(
            with_fields(fg, Some(&server), &[]),
            Expect {
                has: &github,
                lacks: &["mcp__slack__post", "Read"],
            },
        );
        check(
            with_fields(fg, Some(&server_star), &[]),
            Expect {
                has: &github,
                lacks: &["mcp__slack__post"],
            },
        );
        check(
            with_fields(fg, Some(&one), &[]),
            Expect {
                has: &["mcp__github__list_prs"],
                lacks: &["mcp__github__create_issue"],
            },
        );
        check(
            with_fields(fg, None, &server),
            Expect {
                has: &["mcp__slack__post", "Read"],
                lacks: &github,
            },
        );
        let resolved = check(
            with_fields(fg, None, &all),
            Expect {
                has: &["Read"],
                lacks: &["mcp__slack__post", "mcp__github__list_prs"],
            },
        );
        assert!(resolved.steps.iter().any(|step| step.rule == "TOOLS-13"));
        // mcp__* is only a disallowedTools pattern: in tools it grants nothing.
        let with_read = strings(&["mcp__*", "Read"]);
        let resolved = check(
            with_fields(fg, Some(&with_read), &[]),
            Expect {
                has: &["Read"],
                lacks: &["mcp__slack__post"],
            },
        );
        assert_eq!(resolved.reasons[0].why, Why::McpStarOnlyDisallowed);
    }

    #[test]
    fn tools_14_specifier_removes_the_whole_tool() {
        let pool = pool();
        let tools = strings(&["Read", "Bash"]);
        let disallowed = strings(&["Bash(git push *)"]);
        let resolved = resolve(
            &pool,
            Fields {
                tools: Some(&tools),
                disallowed: &disallowed,
            },
            placement(Mode::Foreground, 1),
            &gates(292),
            false,
        )
        .unwrap();
        assert_eq!(resolved.tools, strings(&["Read"]));
        assert!(resolved
            .steps
            .iter()
            .any(|step| step.rule == "TOOLS-14" && step.tools == ["Bash"]));
    }

    #[test]
    fn tools_15_allowlist_drops_unlisted_mcp_tools() {
        let pool = pool();
        let safe_researcher = strings(&["Read", "Grep", "Glob", "Bash"]);
        let resolved = check(
            with_fields(
                ToolRequest::new(&pool, placement(Mode::Foreground, 1), gates(292)),
                Some(&safe_researcher),
                &[],
            ),
            Expect {
                has: &["Read", "Grep", "Glob", "Bash"],
                lacks: &["Edit", "Write", "mcp__github__list_prs"],
            },
        );
        assert!(resolved.steps.iter().any(|step| step.rule == "TOOLS-15"
            && step.tools.iter().all(|tool| tool.starts_with("mcp__"))));
    }

    #[test]
    fn tools_16_handback_survives_everything() {
        let pool = pool();
        let disallowed = strings(&[HANDBACK]);
        let listed = strings(&["Read"]);
        let request = ToolRequest {
            handback: true,
            ..with_fields(
                ToolRequest::new(&pool, placement(Mode::Background, 1), gates(292)),
                Some(&listed),
                &disallowed,
            )
        };
        let resolved = check(
            request,
            Expect {
                has: &[HANDBACK, "Read"],
                lacks: &[],
            },
        );
        assert_eq!(
            resolved.steps.last().map(|step| step.rule),
            Some("TOOLS-16")
        );
    }

    #[test]
    fn tools_17_memory_enables_read_write_edit() {
        let pool = pool();
        let bash_only = strings(&["Bash"]);
        let no_edit = strings(&["Edit"]);
        let fg = ToolRequest {
            memory: true,
            ..ToolRequest::new(&pool, placement(Mode::Foreground, 1), gates(292))
        };
        // (tools, disallowedTools, has, lacks)
        let rows: [FieldsRow<'_>; 2] = [
            (
                Some(&bash_only),
                &[],
                &["Bash", "Read", "Write", "Edit"],
                &["Grep"],
            ),
            // disallowedTools still wins: only SubagentHandback overrides it.
            (
                Some(&bash_only),
                &no_edit,
                &["Bash", "Read", "Write"],
                &["Edit"],
            ),
        ];
        for (tools, disallowed, has, lacks) in rows {
            let resolved = check(with_fields(fg, tools, disallowed), Expect { has, lacks });
            assert!(resolved.steps.iter().any(|step| step.rule == "TOOLS-17"));
        }
        // Memory off (MEM-2): nothing is added.
        let off = ToolRequest {
            memory: false,
            ..with_fields(fg, Some(&bash_only), &[])
        };
        check(
            off,
            Expect {
                has: &["Bash"],
                lacks: &["Read", "Write", "Edit"],
            },
        );
    }

    #[test]
    fn tools_18_without_skill_no_skills() {
        let pool = pool();
        let fg = ToolRequest::new(&pool, placement(Mode::Foreground, 1), gates(292));
        let listed = strings(&["Read"]);
        let denied = strings(&["Skill"]);
        check(
            with_fields(fg, Some(&listed), &[]),
            Expect {
                has: &[],
                lacks: &["Skill"],
            },
        );
        check(
            with_fields(fg, None, &denied),
            Expect {
                has: &["Read"],
                lacks: &["Skill"],
            },
        );
        check(
            fg,
            Expect {
                has: &["Skill"],
                lacks: &[],
            },
        );
    }

    #[test]
    fn tools_19_main_thread_has_no_filters() {
        let pool = pool();
        let mut at = placement(Mode::Background, 3);
        at.depth = 0;
        let request = ToolRequest {
            main_thread: true,
            ..ToolRequest::new(&pool, at, gates(292))
        };
        let resolved = check(
            request,
            Expect {
                has: &[
                    "AskUserQuestion",
                    "TaskCreate",
                    "Agent",
                    "ExitPlanMode",
                    "TaskOutput",
                ],
                lacks: &[],
            },
        );
        assert!(resolved.steps.iter().any(|step| step.rule == "TOOLS-19"));
        // Its fields still apply, and an empty result is not refused.
        let coordinator = strings(&["Agent(worker, researcher)", "Read", "Bash"]);
        check(
            with_fields(request, Some(&coordinator), &[]),
            Expect {
                has: &["Agent", "Read", "Bash"],
                lacks: &["Edit", "AskUserQuestion"],
            },
        );
        let nothing = strings(&["Raed"]);
        assert!(resolve_with(&with_fields(request, Some(&nothing), &[])).is_ok());
    }

    #[test]
    fn tools_20_agent_entries_and_task_alias() {
        let pool = pool();
        let fg = ToolRequest::new(&pool, placement(Mode::Foreground, 1), gates(292));
        for entry in ["Agent", "Agent(worker)", "Task", "Task(worker, researcher)"] {
            let listed = strings(&[entry]);
            check(
                with_fields(fg, Some(&listed), &[]),
                Expect {
                    has: &["Agent"],
                    lacks: &["Read"],
                },
            );
            check(
                with_fields(fg, None, &listed),
                Expect {
                    has: &["Read"],
                    lacks: &["Agent"],
                },
            );
        }
        assert!(!entry_matches("TaskCreate", "Agent", false));
        assert!(!entry_matches("Task", "TaskCreate", false));
    }

    #[test]
    fn default_pool_tools_follow_both_filters() {
        let none: Vec<String> = Vec::new();
        let at = |mode, patch, permission_mode| {
            let placement = Placement {
                mode,
                permission_mode,
                ..Placement::at(1, 3)
            };
            default_pool_tools(placement, gates(patch), &none)
        };
        let default = PermissionMode::Default;
        // Foreground: the default pool less filter 1 (TOOLS-3), nothing else; the cron
        // tools stay (only filter 2 removes them, TOOLS-5; TOOLS-9 is about background).
        let fg = at(Mode::Foreground, 292, default);
        let expected: Vec<String> = DEFAULT_MAIN_TOOLS
            .into_iter()
            .filter(|tool| !FILTER_ONE.contains(tool) && *tool != "ExitPlanMode")
            .map(String::from)
            .collect();
        assert_eq!(fg, expected);
        for tool in [
            "CronCreate",
            "CronDelete",
            "CronList",
            "TaskOutput",
            "Agent",
        ] {
            assert!(fg.iter().any(|kept| kept == tool), "{tool}");
        }
        // TaskOutput is filtered up to v2.1.271.
        assert!(!at(Mode::Foreground, 271, default).contains(&"TaskOutput".to_string()));
        // Background: the allow-list as far as the pool has it (no PowerShell off
        // Windows, TOOLS-1), with Agent below the depth limit; LSP from v2.1.280 (TOOLS-5).
        let bg = at(Mode::Background, 292, default);
        let mut expected: Vec<String> = DEFAULT_MAIN_TOOLS
            .into_iter()
            .filter(|tool| *tool == "Agent" || BACKGROUND_ALLOW.contains(tool))
            .map(String::from)
            .collect();
        assert_eq!(bg, expected);
        assert!(!bg.contains(&"PowerShell".to_string()));
        assert!(!bg.contains(&"CronList".to_string()));
        expected.retain(|tool| tool != "LSP");
        assert_eq!(at(Mode::Background, 279, default), expected);
        // Q-18 / PERM-16: ExitPlanMode stays in plan mode, wherever the run is.
        for mode in [Mode::Foreground, Mode::Background] {
            assert!(at(mode, 292, PermissionMode::Plan).contains(&"ExitPlanMode".to_string()));
        }
        // TOOLS-2: a fork keeps the whole pool.
        let fork = Placement {
            fork: true,
            mode: Mode::Background,
            ..Placement::at(1, 3)
        };
        assert_eq!(
            default_pool_tools(fork, gates(292), &none),
            default_main_tools()
        );
        // TOOLS-11 / SPAWN-9: a built-in's disallowedTools.
        let read_only = strings(&["Write", "Edit"]);
        let explore = default_pool_tools(Placement::at(1, 3), gates(292), &read_only);
        assert!(!explore.contains(&"Edit".to_string()) && !explore.contains(&"Write".to_string()));
        assert!(explore.contains(&"Read".to_string()));
    }

    #[test]
    fn main_tools_by_session() {
        assert_eq!(default_main_tools().len(), DEFAULT_MAIN_TOOLS.len());
        let windows = main_tools(SessionTools {
            platform: Platform::Windows,
            ..SessionTools::default()
        });
        assert!(windows.contains(&"PowerShell".to_string()));
        assert!(!default_main_tools().contains(&"PowerShell".to_string()));
        assert!(!default_main_tools().contains(&HANDBACK.to_string()));
    }

    #[test]
    fn why_a_run_lacks_a_tool() {
        let step = |kind, tools: &[&str], rule| Step {
            kind,
            what: "",
            tools: tools.iter().map(|tool| tool.to_string()).collect(),
            rule,
        };
        let steps = [
            step(StepKind::BasePool, &["Bash", "Edit", "Agent"], "TOOLS-1"),
            step(StepKind::FilterOne, &["Agent"], "DEPTH-3"),
            step(StepKind::Disallowed, &["Edit"], "TOOLS-11"),
            step(StepKind::Added, &["Bash"], "TOOLS-17"),
            step(StepKind::FilterTwo, &["Bash"], "TOOLS-5"),
        ];
        let subagent = Lacking::Subagent(&steps);
        // The step that removed it, with its rule; a step that only adds does not count.
        assert_eq!(
            missing("Agent", subagent),
            (Some(StepKind::FilterOne), "DEPTH-3")
        );
        assert_eq!(
            missing("Edit", subagent),
            (Some(StepKind::Disallowed), "TOOLS-11")
        );
        assert_eq!(
            missing("Bash", subagent),
            (Some(StepKind::FilterTwo), "TOOLS-5")
        );
        // TOOLS-1 / TOOLS-10: main's pool never had it.
        assert_eq!(missing("Grep", subagent), (None, "TOOLS-1"));
        assert_eq!(missing("TaskList", subagent), (None, "TOOLS-10"));
        assert_eq!(missing("TaskCreate", Lacking::Other), (None, "TOOLS-10"));
        assert_eq!(missing("WebFetch", Lacking::Other), (None, "TOOLS-1"));
        // MAIN-1: `--agent` main runs with its agent's restrictions.
        assert_eq!(
            missing("TaskCreate", Lacking::AgentMain),
            (Some(StepKind::NotInTools), "MAIN-1")
        );
        assert!(!StepKind::BasePool.removes() && !StepKind::Added.removes());
        assert!(!StepKind::ZeroTools.removes() && StepKind::NotInTools.removes());
    }

    #[test]
    fn the_session_pool_is_the_listed_or_default_tools_then_mcp_tools() {
        let mcp: std::collections::BTreeMap<String, Vec<String>> =
            [("db".to_string(), vec!["query".to_string()])].into();
        let listed = vec!["Read".to_string()];
        assert_eq!(
            session_pool(Some(&listed), false, &mcp),
            ["Read", "mcp__db__query"]
        );
        let pool = session_pool(None, false, &mcp);
        assert_eq!(pool.len(), DEFAULT_MAIN_TOOLS.len() + 1);
        assert_eq!(mcp_tool_name("db", "query"), "mcp__db__query");
    }

    #[test]
    fn inline_mcp_tools_go_through_both_fields_tools_13_15() {
        let inline = strings(&["mcp__db__query", "mcp__db__write", "mcp__web__fetch"]);
        let none: Vec<String> = Vec::new();
        let run = |tools: Option<&[String]>, disallowed: &[String]| {
            inline_mcp_tools(&inline, Fields { tools, disallowed })
        };
        // No field: every inline tool.
        assert_eq!(run(None, &none).0, inline);
        // disallowedTools: mcp__* removes every MCP tool (TOOLS-13).
        let (kept, steps) = run(None, &strings(&["mcp__*"]));
        assert!(kept.is_empty());
        assert_eq!(steps.len(), 1);
        assert_eq!(
            (steps[0].kind, steps[0].rule),
            (StepKind::Disallowed, "TOOLS-13")
        );
        // mcp__db and mcp__db__* remove that server's tools only.
        for entry in ["mcp__db", "mcp__db__*"] {
            assert_eq!(
                run(None, &strings(&[entry])).0,
                strings(&["mcp__web__fetch"]),
                "{entry}"
            );
        }
        // An allowlist keeps MCP tools only if listed (TOOLS-15).
        let read = strings(&["Read"]);
        let (kept, steps) = run(Some(&read), &none);
        assert!(kept.is_empty());
        assert_eq!(
            (steps[0].kind, steps[0].rule),
            (StepKind::NotInTools, "TOOLS-15")
        );
        let listed = strings(&["Read", "mcp__db", "mcp__web__fetch"]);
        assert_eq!(run(Some(&listed), &none).0, inline);
        // mcp__* grants nothing in tools; disallowedTools wins over tools.
        assert!(run(Some(&strings(&["mcp__*"])), &none).0.is_empty());
        assert_eq!(
            run(Some(&listed), &strings(&["mcp__db__write"])).0,
            strings(&["mcp__db__query", "mcp__web__fetch"])
        );
    }
}
