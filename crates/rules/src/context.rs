//! CTX / MEM / MCP / MAIN — what a run starts with: the pieces of a subagent's first
//! context ([`startup_context`]), the MCP servers it gets ([`mcp_servers`]), and what the
//! main thread becomes when the session runs as an agent ([`main_agent`]).
//!
//! Every piece comes back with whether it is included and the rule that decided, so the
//! engine can trace it and `subsim` can teach it. Nothing here reads files: the caller
//! passes what the files would say (`MEMORY.md`'s text, which skills exist, which folders
//! are trusted).
//!
//! # Decisions where the catalog is silent
//! - Only the **built-in** Explore and Plan skip CLAUDE.md and git status; a custom
//!   definition named `Explore` (SPAWN-10) is a custom agent and loads both.
//! - **D-5**: the git-status snapshot is read when the subagent starts (ES); a worktree
//!   subagent sees its worktree.
//! - **MEM-4 / MEM-5**: the 32-name cap counts the first 32 *distinct* names of the
//!   `skills` list; skipped skills within them still use a place. A listed `verify` is
//!   the bundled `/verify` unless the session declares a skill of that name
//!   ([`skill_state`]).
//! - **MEM-3**: 25 KB is 25,600 bytes; the first 200 lines are taken, then cut to
//!   25,600 bytes (at a character boundary) if longer.
//! - **CTX-6**: the roster lists `main` first, then the other named agents in the order
//!   given (the snapshot the caller took at start).
//! - **CTX-8**: "-p mode" is read as every non-interactive session (`-p` and the SDK).
//! - **MCP-5**: allow/deny policies and the managed MCP config cover references and inline
//!   servers; `--strict-mcp-config` and `--bare` cover inline servers only (a reference
//!   names a server the main session already configured), and `--strict-mcp-config`
//!   spares inline servers from `--agents` / the SDK. Before v2.1.153 (DE) frontmatter
//!   servers are not filtered.
//! - **Forks** start from the main conversation (FORK-5): the pieces a non-fork subagent
//!   gets from its definition (skills, roster, agent memory, `mcpServers`, the appended
//!   prompt) do not apply to them.
//! - **MAIN-3** is documented for resume only; a fresh `--agent` naming a missing agent is
//!   treated the same way (default tools and a warning).

use crate::model::BuiltIn;
use crate::spawn::{spawnable, Scope, Spawnable};
use crate::tools::{self, Fields, Placement, Resolved, ToolRequest};
use crate::{gates_table, messages, Gates, RuleId, SessionKind};

/// MEM-4: how many distinct skill names `skills` may preload.
pub const MAX_PRELOADED_SKILLS: usize = 32;
/// MEM-3: how many lines of `MEMORY.md` the system prompt takes at most.
pub const MEMORY_MAX_LINES: usize = 200;
/// MEM-3: how many bytes of `MEMORY.md` the system prompt takes at most (25 KB).
pub const MEMORY_MAX_BYTES: usize = 25 * 1024;

/// The names of the pieces, as the trace spells them.
pub mod piece {
    /// CTX-2 (1), DEF-15, FORK-5, MAIN-2.
    pub const SYSTEM_PROMPT: &str = "system prompt";
    /// CTX-2 (2).
    pub const TASK: &str = "task message";
    /// CTX-1, FORK-5.
    pub const HISTORY: &str = "conversation history";
    /// CTX-3.
    pub const CLAUDE_MD: &str = "CLAUDE.md";
    /// CTX-4.
    pub const GIT_STATUS: &str = "git status";
    /// CTX-5, MEM-4, MEM-5.
    pub const SKILLS: &str = "preloaded skills";
    /// CTX-6.
    pub const ROSTER: &str = "sibling roster";
    /// MEM-1/2/3.
    pub const MEMORY: &str = "agent memory";
    /// CTX-7.
    pub const AUTO_MEMORY: &str = "main's auto memory";
    /// MCP-1…6.
    pub const MCP: &str = "MCP servers";
    /// CTX-7, FORK-13.
    pub const OUTPUT_STYLE: &str = "output style";
    /// CTX-8, FORK-12.
    pub const APPENDED_PROMPT: &str = "appended system prompt";
    /// CTX-7.
    pub const CONTEXT_WINDOW: &str = "parent's context-window size";
    /// MAIN-5.
    pub const INITIAL_PROMPT: &str = "initialPrompt";
    /// CTX-3: how the trace names [`CLAUDE_MD`] when `omitClaudeMd` keeps only the managed
    /// policy files.
    pub const CLAUDE_MD_MANAGED_ONLY: &str = "CLAUDE.md (managed policy files only)";

    /// Every label a piece can have ([`super::Piece::label`]): docs/scenario-format.md's
    /// "Context pieces" names each of them (a test in tests/integration/docs.rs checks it).
    pub const ALL: [&str; 15] = [
        SYSTEM_PROMPT,
        TASK,
        HISTORY,
        CLAUDE_MD,
        CLAUDE_MD_MANAGED_ONLY,
        GIT_STATUS,
        SKILLS,
        ROSTER,
        MEMORY,
        AUTO_MEMORY,
        MCP,
        OUTPUT_STYLE,
        APPENDED_PROMPT,
        CONTEXT_WINDOW,
        INITIAL_PROMPT,
    ];
}

/// One piece of a starting context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The piece ([`piece`]).
    pub name: &'static str,
    /// How the trace names it (`agent_started.context`): its name, except CTX-3's
    /// managed-only CLAUDE.md ([`piece::CLAUDE_MD_MANAGED_ONLY`]).
    pub label: &'static str,
    /// Whether the run starts with it.
    pub included: bool,
    /// The rule that decided.
    pub rule: RuleId,
    /// What exactly, or why not, in words.
    pub detail: String,
}

fn piece(name: &'static str, included: bool, rule: RuleId, detail: impl Into<String>) -> Piece {
    Piece {
        name,
        label: name,
        included,
        rule,
        detail: detail.into(),
    }
}

/// A line for the debug log or a visible warning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The rule behind it.
    pub rule: RuleId,
    /// The text.
    pub text: String,
    /// Written to the debug log (`--debug`) rather than shown in the session.
    pub debug_log: bool,
}

/// What kind of agent starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentKind {
    /// A fork of the main conversation (FORK-5).
    Fork,
    /// A built-in type (SPAWN-9).
    BuiltIn(BuiltIn),
    /// A custom definition from `scope`.
    Custom(Scope),
}

impl AgentKind {
    fn explore_or_plan(self) -> bool {
        matches!(self, AgentKind::BuiltIn(BuiltIn::Explore | BuiltIn::Plan))
    }
}

/// CTX-4: the repository the session runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Git {
    /// The working directory is inside a git repository.
    pub in_repo: bool,
    /// The `includeGitInstructions` setting (on by default).
    pub include_git_instructions: bool,
    /// The subagent runs in its own worktree (`isolation: worktree`).
    pub worktree: bool,
}

impl Default for Git {
    fn default() -> Git {
        Git {
            in_repo: true,
            include_git_instructions: true,
            worktree: false,
        }
    }
}

/// What the session knows about one skill named in `skills` (MEM-5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SkillState {
    /// It exists and Claude may invoke it.
    #[default]
    Available,
    /// It sets `disable-model-invocation: true` (like the bundled `/verify`).
    ModelInvocationDisabled,
    /// No skill has that name.
    Missing,
    /// It is disabled, e.g. by the organization's policy.
    Disabled,
}

/// One `skills` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skill<'a> {
    /// The name as listed.
    pub name: &'a str,
    /// What the session knows about it.
    pub state: SkillState,
}

/// MEM-5: the bundled skill that sets `disable-model-invocation: true` (`/verify`).
pub const BUNDLED_VERIFY: &str = "verify";

/// MEM-5: what the session knows about the skill `name`. `declared` is the scenario's
/// word for it, when the scenario declares the session's skills (`skills_declared`).
/// Otherwise the bundled `/verify` cannot be preloaded; and in a session that declares its
/// skills a name it does not declare is missing, while a session that declares none is
/// taken to have every skill a definition lists.
pub fn skill_state(name: &str, declared: Option<SkillState>, skills_declared: bool) -> SkillState {
    match declared {
        Some(state) => state,
        None if name == BUNDLED_VERIFY => SkillState::ModelInvocationDisabled,
        None if skills_declared => SkillState::Missing,
        None => SkillState::Available,
    }
}

/// Why a listed skill was not preloaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SkillSkip {
    /// MEM-4: past the first 32 distinct names.
    BeyondCap,
    /// MEM-5: it sets `disable-model-invocation: true`.
    ModelInvocationDisabled,
    /// MEM-5: no skill has that name (a warning in the debug log).
    Missing,
    /// MEM-5: it is disabled, e.g. by policy (a warning in the debug log).
    Disabled,
}

/// Whether one listed skill is preloaded, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillOutcome {
    /// The name.
    pub name: String,
    /// Its full content is injected at start.
    pub preloaded: bool,
    /// Why it was not preloaded (`None` when it was).
    pub skipped: Option<SkillSkip>,
    /// The rule that decided (CTX-5, MEM-4 or MEM-5).
    pub rule: RuleId,
}

/// MEM-4 / MEM-5 / CTX-5: which of `skills` are preloaded, plus the debug-log warnings.
pub fn preload_skills(skills: &[Skill<'_>]) -> (Vec<SkillOutcome>, Vec<Note>) {
    let mut outcomes: Vec<SkillOutcome> = Vec::new();
    let mut notes = Vec::new();
    for skill in skills {
        if outcomes.iter().any(|known| known.name == skill.name) {
            continue;
        }
        let (skipped, rule) = if outcomes.len() >= MAX_PRELOADED_SKILLS {
            // MEM-4: only the first 32 distinct names.
            (Some(SkillSkip::BeyondCap), "MEM-4")
        } else {
            match skill.state {
                SkillState::Available => (None, "CTX-5"),
                // MEM-5: preloading draws from the skills Claude may invoke.
                SkillState::ModelInvocationDisabled => {
                    (Some(SkillSkip::ModelInvocationDisabled), "MEM-5")
                }
                SkillState::Missing | SkillState::Disabled => {
                    let (why, skip) = if skill.state == SkillState::Missing {
                        ("missing", SkillSkip::Missing)
                    } else {
                        ("disabled", SkillSkip::Disabled)
                    };
                    notes.push(Note {
                        rule: "MEM-5",
                        text: format!("{} {} ({why})", messages::SKILL_NOT_PRELOADED, skill.name),
                        debug_log: true,
                    });
                    (Some(skip), "MEM-5")
                }
            }
        };
        outcomes.push(SkillOutcome {
            name: skill.name.to_string(),
            preloaded: skipped.is_none(),
            skipped,
            rule,
        });
    }
    (outcomes, notes)
}

/// A `memory` scope (MEM-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryScope {
    /// `~/.claude/agent-memory/<name>/`.
    User,
    /// `.claude/agent-memory/<name>/` (the recommended default).
    Project,
    /// `.claude/agent-memory-local/<name>/`.
    Local,
}

impl MemoryScope {
    /// MEM-1: the memory directory of agent `name`.
    pub fn directory(self, name: &str) -> String {
        match self {
            MemoryScope::User => format!("~/.claude/agent-memory/{name}/"),
            MemoryScope::Project => format!(".claude/agent-memory/{name}/"),
            MemoryScope::Local => format!(".claude/agent-memory-local/{name}/"),
        }
    }

    /// Reads `user`, `project` or `local`.
    pub fn parse(text: &str) -> Option<MemoryScope> {
        match text.trim() {
            "user" => Some(MemoryScope::User),
            "project" => Some(MemoryScope::Project),
            "local" => Some(MemoryScope::Local),
            _ => None,
        }
    }
}

/// What persistent memory puts in the system prompt (MEM-3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryLoad {
    /// The memory directory (MEM-1).
    pub directory: String,
    /// Lines of `MEMORY.md` in the prompt.
    pub lines: usize,
    /// Bytes of `MEMORY.md` in the prompt.
    pub bytes: usize,
    /// The file was longer, so curation instructions are added.
    pub truncated: bool,
}

/// MEM-3: how much of `MEMORY.md` (`text`) the prompt takes — the first 200 lines or
/// 25 KB, whichever is smaller — and whether it was cut.
pub fn memory_excerpt(text: &str) -> (usize, usize, bool) {
    let mut end = 0;
    let mut lines = 0;
    for line in text.split_inclusive('\n') {
        if lines == MEMORY_MAX_LINES {
            break;
        }
        end += line.len();
        lines += 1;
    }
    if end > MEMORY_MAX_BYTES {
        end = MEMORY_MAX_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        lines = text[..end].split_inclusive('\n').count();
    }
    (lines, end, end < text.len())
}

/// One `mcpServers` entry (MCP-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct McpServer<'a> {
    /// The server's name.
    pub name: &'a str,
    /// An inline definition (connects for this agent) rather than a reference to a server
    /// the session already configured.
    pub inline: bool,
}

/// The main session's MCP restrictions (MCP-5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct McpPolicy<'a> {
    /// `--strict-mcp-config`.
    pub strict_mcp_config: bool,
    /// `--bare`.
    pub bare: bool,
    /// An enterprise managed MCP config takes exclusive control.
    pub managed_config: bool,
    /// `allowedMcpServers`, if set.
    pub allowed: Option<&'a [String]>,
    /// `deniedMcpServers`.
    pub denied: &'a [String],
}

impl McpPolicy<'_> {
    /// MCP-5: whether the managed `allowedMcpServers` / `deniedMcpServers` lists let the
    /// server `name` through: not denied, and allowed when an allowlist is set. These
    /// lists are the main session's restrictions, so they also decide which of the
    /// session's own configured servers it keeps ([`session_servers`]).
    pub fn lists_allow(&self, name: &str) -> bool {
        !self.denied.iter().any(|denied| denied == name)
            && self
                .allowed
                .is_none_or(|allowed| allowed.iter().any(|a| a == name))
    }
}

/// MCP-5: which of the session's own configured servers (`names`, in order) the managed
/// allow/deny lists keep, and a warning naming each one they block ("Claude Code lo omite
/// y muestra una advertencia que nombra los servidores bloqueados"). `--strict-mcp-config`
/// does not remove them: they are the configuration it keeps.
pub fn session_servers<'n>(
    names: impl IntoIterator<Item = &'n str>,
    policy: &McpPolicy<'_>,
) -> (Vec<&'n str>, Vec<Note>) {
    let mut kept = Vec::new();
    let mut notes = Vec::new();
    for name in names {
        if policy.lists_allow(name) {
            kept.push(name);
        } else {
            notes.push(Note {
                rule: "MCP-5",
                text: format!("{}: {name}", messages::MCP_BLOCKED),
                debug_log: false,
            });
        }
    }
    (kept, notes)
}

/// Everything the MCP rules read for one agent's `mcpServers`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct McpInput<'a> {
    /// The definition's entries.
    pub servers: &'a [McpServer<'a>],
    /// Where the definition came from (MCP-3, MCP-4, MCP-6).
    pub scope: Scope,
    /// The folder the agent file came from (for project and `--add-dir` files).
    pub source_dir: Option<&'a str>,
    /// Folders whose trust dialog was accepted (exactly; a parent's trust does not count).
    pub trusted_dirs: &'a [String],
    /// The servers the main session has configured (what references can name).
    pub configured: &'a [String],
    /// The main session's restrictions.
    pub policy: McpPolicy<'a>,
}

/// What happened to one `mcpServers` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum McpStatus {
    /// MCP-1: a reference; it shares the parent session's connection.
    Shared,
    /// MCP-1: inline; it connects when the agent starts and disconnects when it ends.
    Connected,
    /// A reference to a server the session has not configured.
    Unknown,
    /// MCP-6: the definition comes from a plugin, so `mcpServers` is ignored.
    Ignored,
    /// MCP-5: a main-session restriction blocks it (with a warning naming it).
    Blocked,
    /// MCP-3: the agent file's folder is not trusted (a debug-log line gives the key).
    Untrusted,
}

impl McpStatus {
    /// Whether the agent gets the server's tools.
    pub fn available(self) -> bool {
        matches!(self, McpStatus::Shared | McpStatus::Connected)
    }
}

/// The outcome for one entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpOutcome {
    /// The server.
    pub name: String,
    /// What happened.
    pub status: McpStatus,
    /// The rule that decided.
    pub rule: RuleId,
}

/// MCP-1…6: what becomes of each `mcpServers` entry, plus the warnings and debug-log lines.
pub fn mcp_servers(input: &McpInput<'_>, gates: &Gates) -> (Vec<McpOutcome>, Vec<Note>) {
    let mut outcomes = Vec::new();
    let mut notes = Vec::new();
    let policy = input.policy;
    // MCP-3: project and --add-dir files need their own folder's trust (v2.1.238+); the
    // others load without a check (MCP-4).
    let trusted = match input.scope {
        Scope::Project if gates.inline_mcp_trust => input
            .source_dir
            .is_some_and(|dir| input.trusted_dirs.iter().any(|trusted| trusted == dir)),
        Scope::Managed
        | Scope::Cli
        | Scope::Project
        | Scope::User
        | Scope::Plugin
        | Scope::BuiltIn => true,
    };
    let mut trust_logged = false;
    for server in input.servers {
        let name = server.name;
        let listed_out = !policy.lists_allow(name);
        let flag_blocks = server.inline
            && (policy.bare
                || policy.managed_config
                || (policy.strict_mcp_config && input.scope != Scope::Cli));
        let (status, rule) = if input.scope == Scope::Plugin {
            (McpStatus::Ignored, "MCP-6")
        } else if gates.mcp_restrictions_cover_frontmatter && (listed_out || flag_blocks) {
            notes.push(Note {
                rule: "MCP-5",
                text: format!("{}: {name}", messages::MCP_BLOCKED),
                debug_log: false,
            });
            (McpStatus::Blocked, "MCP-5")
        } else if !server.inline {
            if input.configured.iter().any(|known| known == name) {
                (McpStatus::Shared, "MCP-4")
            } else {
                (McpStatus::Unknown, "MCP-1")
            }
        } else if !trusted {
            if !trust_logged {
                trust_logged = true;
                let key =
                    messages::MCP_TRUST_KEY.replace("<path>", input.source_dir.unwrap_or("<path>"));
                notes.push(Note {
                    rule: "MCP-3",
                    text: format!("{} {key}", messages::MCP_TRUST_SKIPPED),
                    debug_log: true,
                });
            }
            (McpStatus::Untrusted, "MCP-3")
        } else {
            let rule = match input.scope {
                Scope::Project if gates.inline_mcp_trust => "MCP-3",
                Scope::Project => "MCP-1",
                Scope::Managed | Scope::Cli | Scope::User | Scope::Plugin | Scope::BuiltIn => {
                    "MCP-4"
                }
            };
            (McpStatus::Connected, rule)
        };
        outcomes.push(McpOutcome {
            name: name.to_string(),
            status,
            rule,
        });
    }
    (outcomes, notes)
}

/// MCP-2 / MCP-3 / TOOLS-1: the inline servers of the agent the main session runs as
/// (`--agent` or the `agent` setting) that connect at start, and the notes about the others.
///
/// ES §MCP scope: "when the agent is the main session, inline server definitions connect at
/// startup alongside servers from `.mcp.json` and settings files, under the same trust rule
/// for the agent file's folder". They are then servers of the main conversation, so its
/// subagents inherit their tools like any other (TOOLS-1: subagents inherit "the MCP tools
/// available in the main conversation") and a subagent's reference by name shares them
/// (MCP-1). "Scoped to this subagent only" concerns the agent spawned as a subagent, whose
/// parent conversation does not get them (MCP-1) — issue #23, docs/decisions.md.
/// Returns the names of the servers that connect (in the definition's order) and
/// [`mcp_servers`]' notes (trust, restrictions).
pub fn session_agent_servers<'a>(
    input: &McpInput<'a>,
    gates: &Gates,
) -> (Vec<&'a str>, Vec<Note>, RuleId) {
    let (outcomes, notes) = mcp_servers(input, gates);
    let connected = input
        .servers
        .iter()
        .zip(&outcomes)
        .filter(|(server, outcome)| server.inline && outcome.status == McpStatus::Connected)
        .map(|(server, _)| server.name)
        .collect();
    (connected, notes, "MCP-2")
}

/// CTX-8: the `--append-subagent-system-prompt` flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Appended {
    /// `--append-subagent-system-prompt <text>` (v2.1.205+).
    Text,
    /// `--append-subagent-system-prompt-file <path>` (v2.1.261+).
    File,
}

/// Everything [`startup_context`] reads. Build one with [`StartupInput::new`] and
/// struct-update syntax.
#[derive(Clone, Copy, Debug)]
pub struct StartupInput<'a> {
    /// What kind of agent starts.
    pub kind: AgentKind,
    /// Its name (MEM-1 directories).
    pub name: &'a str,
    /// `omitClaudeMd: true` (CTX-3).
    pub omit_claude_md: bool,
    /// The repository (CTX-4).
    pub git: Git,
    /// The `skills` entries (CTX-5).
    pub skills: &'a [Skill<'a>],
    /// The run's resolved tools (CTX-6 looks for `SendMessage`).
    pub tools: &'a [String],
    /// The other named agents at start: named at spawn, or teammates (CTX-6).
    pub named_agents: &'a [String],
    /// The `memory` field (MEM-1).
    pub memory: Option<MemoryScope>,
    /// Auto memory is on (MEM-2).
    pub auto_memory: bool,
    /// The text of `MEMORY.md`, when the file exists (MEM-3).
    pub memory_md: Option<&'a str>,
    /// The `mcpServers` field and the session's MCP facts.
    pub mcp: McpInput<'a>,
    /// The main conversation has an output style (FORK-13).
    pub output_style: bool,
    /// The session passed `--append-subagent-system-prompt(-file)` (CTX-8).
    pub appended: Option<Appended>,
    /// The session kind (CTX-8).
    pub session: SessionKind,
    /// The version gates in force.
    pub gates: Gates,
}

impl<'a> StartupInput<'a> {
    /// A custom project agent named `name` in an interactive session inside a git repo:
    /// nothing listed, no memory, auto memory on.
    pub fn new(kind: AgentKind, name: &'a str, gates: Gates) -> StartupInput<'a> {
        StartupInput {
            kind,
            name,
            omit_claude_md: false,
            git: Git::default(),
            skills: &[],
            tools: &[],
            named_agents: &[],
            memory: None,
            auto_memory: true,
            memory_md: None,
            mcp: McpInput::default(),
            output_style: false,
            appended: None,
            session: SessionKind::Interactive,
            gates,
        }
    }
}

/// What a run starts with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartupContext {
    /// Every piece, included or not, each with its rule.
    pub pieces: Vec<Piece>,
    /// CTX-5 / MEM-4 / MEM-5: each listed skill.
    pub skills: Vec<SkillOutcome>,
    /// CTX-6: the roster (`main` first), when it is included.
    pub roster: Vec<String>,
    /// MEM-3: the memory in the prompt, when memory is active.
    pub memory: Option<MemoryLoad>,
    /// MCP-1…6: each `mcpServers` entry.
    pub mcp: Vec<McpOutcome>,
    /// Warnings and debug-log lines.
    pub notes: Vec<Note>,
}

impl StartupContext {
    /// The piece called `name`.
    pub fn piece(&self, name: &str) -> Option<&Piece> {
        self.pieces.iter().find(|piece| piece.name == name)
    }
}

/// CTX-1…8, MEM-1…5, MCP-1…6, FORK-5/12/13, DEF-15: what a subagent (or fork) starts
/// with: one piece after another, each decided by the function named after it.
pub fn startup_context(input: &StartupInput<'_>) -> StartupContext {
    if input.kind == AgentKind::Fork {
        return fork_context(input);
    }
    let mut notes = Vec::new();
    let memory = memory_load(input);
    // CTX-5 / MEM-4 / MEM-5: preloaded skills; built-ins preload none.
    let (skills, skill_notes) = match input.kind {
        AgentKind::BuiltIn(_) => (Vec::new(), Vec::new()),
        AgentKind::Fork | AgentKind::Custom(..) => preload_skills(input.skills),
    };
    notes.extend(skill_notes);
    if memory.as_ref().is_some_and(|load| load.truncated) {
        notes.push(Note {
            rule: "MEM-3",
            text: messages::MEMORY_CURATE.to_string(),
            debug_log: false,
        });
    }
    let (mcp, mcp_notes) = mcp_servers(&input.mcp, &input.gates);
    notes.extend(mcp_notes);
    let (roster, roster_piece) = roster(input);
    let pieces = vec![
        system_prompt_piece(input.kind, memory.is_some()),
        piece(
            piece::TASK,
            true,
            "CTX-2",
            "the delegation prompt Claude writes",
        ),
        piece(
            piece::HISTORY,
            false,
            "CTX-1",
            "a fresh context: no history, invoked skills or files Claude has read",
        ),
        claude_md_piece(input),
        git_status_piece(input),
        skills_piece(input.kind, &skills),
        roster_piece,
        memory_piece(memory.as_ref(), input.memory),
        piece(
            piece::AUTO_MEMORY,
            false,
            "CTX-7",
            "main's auto memory is never passed",
        ),
        mcp_piece(&input.mcp, &mcp),
        // CTX-7 / FORK-13: the output style stays with main.
        piece(
            piece::OUTPUT_STYLE,
            false,
            "CTX-7",
            "a non-fork subagent runs its own system prompt",
        ),
        appended_piece(input),
        piece(
            piece::CONTEXT_WINDOW,
            false,
            "CTX-7",
            "sized by the subagent's own model",
        ),
    ];
    StartupContext {
        pieces,
        skills,
        roster,
        memory,
        mcp,
        notes,
    }
}

/// MEM-1/2/3: the memory loaded into the prompt, when the definition sets `memory` and
/// auto memory is on.
fn memory_load(input: &StartupInput<'_>) -> Option<MemoryLoad> {
    match (input.memory, input.auto_memory) {
        (Some(scope), true) => {
            let (lines, bytes, truncated) = memory_excerpt(input.memory_md.unwrap_or(""));
            Some(MemoryLoad {
                directory: scope.directory(input.name),
                lines,
                bytes,
                truncated,
            })
        }
        _ => None,
    }
}

/// DEF-15 / CTX-2 (1): the agent's own prompt plus environment details.
fn system_prompt_piece(kind: AgentKind, memory: bool) -> Piece {
    let own = match kind {
        AgentKind::BuiltIn(_) => "the built-in's predefined prompt",
        AgentKind::Fork | AgentKind::Custom(..) => "the agent's own prompt",
    };
    let mut detail = format!(
        "{own} plus environment details such as the working directory, \
         not Claude Code's system prompt"
    );
    if memory {
        detail.push_str("; with memory instructions and MEMORY.md (MEM-3)");
    }
    piece(piece::SYSTEM_PROMPT, true, "DEF-15", detail)
}

/// CTX-3: CLAUDE.md (D-15: `omitClaudeMd` before its version is ignored).
fn claude_md_piece(input: &StartupInput<'_>) -> Piece {
    if input.kind.explore_or_plan() {
        piece(
            piece::CLAUDE_MD,
            false,
            "CTX-3",
            "Explore and Plan skip CLAUDE.md",
        )
    } else if input.omit_claude_md && input.gates.omit_claude_md {
        if input.kind == AgentKind::Custom(Scope::Managed) {
            piece(
                piece::CLAUDE_MD,
                false,
                "CTX-3",
                "omitClaudeMd on a managed definition: none at all",
            )
        } else {
            Piece {
                label: piece::CLAUDE_MD_MANAGED_ONLY,
                ..piece(
                    piece::CLAUDE_MD,
                    true,
                    "CTX-3",
                    "omitClaudeMd: only the managed policy files",
                )
            }
        }
    } else if input.omit_claude_md {
        piece(
            piece::CLAUDE_MD,
            true,
            "D-15",
            format!(
                "the whole hierarchy: omitClaudeMd exists only from v{}",
                gates_table::since("omit_claude_md")
            ),
        )
    } else {
        piece(
            piece::CLAUDE_MD,
            true,
            "CTX-3",
            "every level main loads: ~/.claude/CLAUDE.md, project rules, CLAUDE.local.md, \
             managed policy files, AGENTS.md",
        )
    }
}

/// CTX-4: git status (D-5: read when the subagent starts).
fn git_status_piece(input: &StartupInput<'_>) -> Piece {
    let git = input.git;
    if input.kind.explore_or_plan() {
        piece(
            piece::GIT_STATUS,
            false,
            "CTX-4",
            "Explore and Plan skip git status",
        )
    } else if !git.in_repo {
        piece(
            piece::GIT_STATUS,
            false,
            "CTX-4",
            "outside a git repository",
        )
    } else if !git.include_git_instructions {
        piece(
            piece::GIT_STATUS,
            false,
            "CTX-4",
            "includeGitInstructions is false",
        )
    } else if git.worktree {
        piece(
            piece::GIT_STATUS,
            true,
            "D-5",
            "read when the subagent starts: its worktree's branch, status and commits",
        )
    } else {
        piece(
            piece::GIT_STATUS,
            true,
            "D-5",
            "read when the subagent starts",
        )
    }
}

/// CTX-5 / MEM-4: the skills preloaded into the context.
fn skills_piece(kind: AgentKind, skills: &[SkillOutcome]) -> Piece {
    let preloaded: Vec<&str> = skills
        .iter()
        .filter(|skill| skill.preloaded)
        .map(|skill| skill.name.as_str())
        .collect();
    match kind {
        AgentKind::BuiltIn(_) => piece(piece::SKILLS, false, "CTX-5", "built-ins preload none"),
        _ if preloaded.is_empty() => piece(piece::SKILLS, false, "CTX-5", "none preloaded"),
        AgentKind::Fork | AgentKind::Custom(..) => {
            piece(piece::SKILLS, true, "MEM-4", preloaded.join(", "))
        }
    }
}

/// CTX-6: the sibling roster, a snapshot at start (v2.1.206+): the names (`main` first),
/// when it is included, and its piece.
fn roster(input: &StartupInput<'_>) -> (Vec<String>, Piece) {
    let has_send = input.tools.iter().any(|tool| tool == "SendMessage");
    if !input.gates.sibling_roster {
        let since = gates_table::since("sibling_roster");
        let decided = piece(piece::ROSTER, false, "CTX-6", format!("before v{since}"));
        (Vec::new(), decided)
    } else if !has_send {
        let decided = piece(
            piece::ROSTER,
            false,
            "CTX-6",
            "the tools do not include SendMessage",
        );
        (Vec::new(), decided)
    } else if input.named_agents.is_empty() {
        let decided = piece(piece::ROSTER, false, "CTX-6", "no other agent has a name");
        (Vec::new(), decided)
    } else {
        let mut roster = vec!["main".to_string()];
        roster.extend(input.named_agents.iter().cloned());
        let decided = piece(piece::ROSTER, true, "CTX-6", roster.join(", "));
        (roster, decided)
    }
}

/// MEM-1/2/3: agent memory (`scope`: the `memory` field).
fn memory_piece(memory: Option<&MemoryLoad>, scope: Option<MemoryScope>) -> Piece {
    match (memory, scope) {
        (Some(load), _) => {
            let detail = if load.truncated {
                format!(
                    "{}: the first {} lines ({} bytes) of MEMORY.md, plus curation instructions",
                    load.directory, load.lines, load.bytes
                )
            } else {
                format!("{}: MEMORY.md ({} lines)", load.directory, load.lines)
            };
            piece(piece::MEMORY, true, "MEM-3", detail)
        }
        (None, Some(_)) => piece(piece::MEMORY, false, "MEM-2", "auto memory is off"),
        (None, None) => piece(piece::MEMORY, false, "MEM-1", "no memory field"),
    }
}

/// MCP-1 / MCP-6: the `mcpServers` available to the run (`mcp`: each entry's outcome).
fn mcp_piece(input: &McpInput<'_>, mcp: &[McpOutcome]) -> Piece {
    let available: Vec<&str> = mcp
        .iter()
        .filter(|outcome| outcome.status.available())
        .map(|outcome| outcome.name.as_str())
        .collect();
    if input.servers.is_empty() {
        piece(piece::MCP, false, "MCP-1", "no mcpServers")
    } else if input.scope == Scope::Plugin {
        piece(piece::MCP, false, "MCP-6", "ignored for plugin subagents")
    } else if available.is_empty() {
        piece(
            piece::MCP,
            false,
            "MCP-1",
            "none of its servers is available",
        )
    } else {
        piece(piece::MCP, true, "MCP-1", available.join(", "))
    }
}

/// CTX-8: --append-subagent-system-prompt, -p only, every subagent but forks.
fn appended_piece(input: &StartupInput<'_>) -> Piece {
    let gates = &input.gates;
    match input.appended {
        None => piece(piece::APPENDED_PROMPT, false, "CTX-8", "no flag"),
        Some(_) if input.session.is_interactive() => piece(
            piece::APPENDED_PROMPT,
            false,
            "CTX-8",
            "only in non-interactive sessions",
        ),
        Some(Appended::Text) if !gates.append_subagent_prompt => {
            let since = gates_table::since("append_subagent_prompt");
            piece(
                piece::APPENDED_PROMPT,
                false,
                "CTX-8",
                format!("before v{since}"),
            )
        }
        Some(Appended::File) if !gates.append_subagent_prompt_file => piece(
            piece::APPENDED_PROMPT,
            false,
            "CTX-8",
            format!(
                "the file flag needs v{}",
                gates_table::since("append_subagent_prompt_file")
            ),
        ),
        Some(_) => piece(
            piece::APPENDED_PROMPT,
            true,
            "CTX-8",
            "appended to the end of the system prompt, nested subagents included",
        ),
    }
}

/// FORK-5 / FORK-12 / FORK-13: a fork starts from the whole main conversation.
fn fork_context(input: &StartupInput<'_>) -> StartupContext {
    let from_main = |name, detail: &str| piece(name, true, "FORK-5", detail);
    let not_for_forks = |name| piece(name, false, "FORK-5", "a fork has no definition of its own");
    let pieces = vec![
        from_main(piece::SYSTEM_PROMPT, "main's system prompt"),
        from_main(piece::TASK, "the task, after the whole conversation"),
        from_main(piece::HISTORY, "the whole conversation so far"),
        from_main(piece::CLAUDE_MD, "as main loaded it"),
        from_main(piece::GIT_STATUS, "as main has it"),
        not_for_forks(piece::SKILLS),
        not_for_forks(piece::ROSTER),
        not_for_forks(piece::MEMORY),
        from_main(piece::AUTO_MEMORY, "as main has it"),
        from_main(piece::MCP, "main's MCP tools (TOOLS-2)"),
        if input.output_style {
            piece(
                piece::OUTPUT_STYLE,
                true,
                "FORK-13",
                "main's output style applies",
            )
        } else {
            piece(piece::OUTPUT_STYLE, false, "FORK-13", "main has none")
        },
        piece(
            piece::APPENDED_PROMPT,
            false,
            "FORK-12",
            "forks reuse the conversation's system prompt",
        ),
        from_main(piece::CONTEXT_WINDOW, "the same model as main"),
    ];
    StartupContext {
        pieces,
        skills: Vec::new(),
        roster: Vec::new(),
        memory: None,
        mcp: Vec::new(),
        notes: Vec::new(),
    }
}

/// MAIN-1: the agent the main thread runs as — `--agent` overrides the `agent` setting.
pub fn main_agent_name<'a>(
    flag: Option<&'a str>,
    setting: Option<&'a str>,
) -> Option<(&'a str, RuleId)> {
    match (flag, setting) {
        (Some(flag), _) => Some((flag, "MAIN-1")),
        (None, Some(setting)) => Some((setting, "MAIN-1")),
        (None, None) => None,
    }
}

/// The definition a `--agent` session runs as (after [`crate::spawn::lookup`], MAIN-4 /
/// Q-32, found it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MainDefinition<'a> {
    /// Its name or scoped id.
    pub name: &'a str,
    /// Where it came from (`None` for a built-in).
    pub scope: Option<Scope>,
    /// The system prompt (the Markdown body or `prompt`); `Some("")` when empty.
    pub prompt: Option<&'a str>,
    /// `memory` is set.
    pub memory: bool,
    /// `tools`, if set.
    pub tools: Option<&'a [String]>,
    /// `disallowedTools`.
    pub disallowed: &'a [String],
    /// `model`, if set.
    pub model: Option<&'a str>,
    /// `initialPrompt`, if set.
    pub initial_prompt: Option<&'a str>,
    /// `omitClaudeMd` (ignored here, MAIN-2).
    pub omit_claude_md: bool,
}

/// Everything [`main_agent`] reads.
#[derive(Clone, Copy, Debug)]
pub struct MainAgentInput<'a> {
    /// `--agent <name>`, if passed.
    pub flag: Option<&'a str>,
    /// The `agent` setting, if set.
    pub setting: Option<&'a str>,
    /// What the chosen name resolved to; `None` when no such agent exists.
    pub definition: Option<MainDefinition<'a>>,
    /// The prompt the person supplied, if any (MAIN-5).
    pub user_prompt: Option<&'a str>,
    /// The main conversation's default tools ([`crate::tools::main_tools`]).
    pub pool: &'a [String],
    /// Auto memory is on (MEM-2, TOOLS-17).
    pub auto_memory: bool,
    /// The version gates in force.
    pub gates: Gates,
}

/// What the main thread becomes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MainAgent {
    /// The agent and the rule that chose it (`None`: a plain session).
    pub agent: Option<(String, RuleId)>,
    /// System prompt, CLAUDE.md, initialPrompt — each with its rule.
    pub pieces: Vec<Piece>,
    /// The main thread's tools: the definition's restrictions, no filters (TOOLS-19).
    pub tools: Resolved,
    /// MAIN-1: the definition's model, when it sets one (the session's model otherwise).
    pub model: Option<(String, RuleId)>,
    /// MAIN-5: the first user turn (initialPrompt, then the person's prompt).
    pub first_turn: Option<String>,
    /// MAIN-6 / SPAWN-5: which types its Agent tool may spawn.
    pub spawnable: (Spawnable, RuleId),
    /// MAIN-3: the warning naming an agent that no longer exists.
    pub warning: Option<String>,
}

/// MAIN-1…6 (with DEF-6, DEF-8, TOOLS-19, SPAWN-5): the main thread of a session run as
/// an agent.
pub fn main_agent(input: &MainAgentInput<'_>) -> MainAgent {
    let gates = input.gates;
    let placement = Placement::at(0, 0);
    let plain_tools = || {
        tools::resolve_with(&ToolRequest {
            main_thread: true,
            ..ToolRequest::new(input.pool, placement, gates)
        })
        .expect("a main thread is never refused for zero tools")
    };
    let Some((name, rule)) = main_agent_name(input.flag, input.setting) else {
        return MainAgent {
            agent: None,
            pieces: Vec::new(),
            tools: plain_tools(),
            model: None,
            first_turn: input.user_prompt.map(str::to_string),
            spawnable: (Spawnable::Everything, "TOOLS-11"),
            warning: None,
        };
    };
    let Some(definition) = input.definition else {
        // MAIN-3: continue with the default tools and a warning naming the agent.
        return MainAgent {
            agent: None,
            pieces: Vec::new(),
            tools: plain_tools(),
            model: None,
            first_turn: input.user_prompt.map(str::to_string),
            spawnable: (Spawnable::Everything, "MAIN-3"),
            warning: Some(format!("{} ({name})", messages::SESSION_AGENT_GONE)),
        };
    };
    let plugin = definition.scope == Some(Scope::Plugin);
    let mut pieces = Vec::new();
    // MAIN-2 / DEF-8: the prompt replaces the default, unless empty with no memory.
    let empty = definition
        .prompt
        .is_none_or(|prompt| prompt.trim().is_empty());
    pieces.push(if empty && !definition.memory && gates.empty_agent_prompt {
        piece(
            piece::SYSTEM_PROMPT,
            false,
            "DEF-8",
            "an empty prompt with no memory leaves the session's system prompt unchanged",
        )
    } else {
        piece(
            piece::SYSTEM_PROMPT,
            true,
            "MAIN-2",
            "the agent's prompt replaces Claude Code's default, like --system-prompt",
        )
    });
    pieces.push(piece(
        piece::CLAUDE_MD,
        true,
        "MAIN-2",
        if definition.omit_claude_md {
            "loads through the normal message flow; omitClaudeMd is ignored for a main agent"
        } else {
            "loads through the normal message flow, with project memory"
        },
    ));
    // MAIN-5: initialPrompt is the first user turn, prepended; ignored for plugins (DEF-6).
    let initial = match definition.initial_prompt {
        Some(_) if plugin => {
            pieces.push(piece(
                piece::INITIAL_PROMPT,
                false,
                "DEF-6",
                "ignored for plugin agents",
            ));
            None
        }
        Some(text) => {
            pieces.push(piece(
                piece::INITIAL_PROMPT,
                true,
                "MAIN-5",
                "auto-submitted as the first user turn, before the person's prompt",
            ));
            Some(text)
        }
        None => None,
    };
    let first_turn = match (initial, input.user_prompt) {
        (Some(initial), Some(user)) => Some(format!("{initial}\n\n{user}")),
        (Some(initial), None) => Some(initial.to_string()),
        (None, user) => user.map(str::to_string),
    };
    // MAIN-1 / TOOLS-19: the definition's tool restrictions, no background filter.
    let tools = tools::resolve_with(&ToolRequest {
        fields: Fields {
            tools: definition.tools,
            disallowed: definition.disallowed,
        },
        memory: definition.memory && input.auto_memory,
        main_thread: true,
        ..ToolRequest::new(input.pool, placement, gates)
    })
    .expect("a main thread is never refused for zero tools");
    MainAgent {
        agent: Some((name.to_string(), rule)),
        pieces,
        tools,
        // `inherit` (MODEL-2) names no model: main keeps the session's.
        model: definition
            .model
            .filter(|model| *model != "inherit")
            .map(|model| (model.to_string(), "MAIN-1")),
        first_turn,
        // MAIN-6: the Agent(type, …) allowlist applies in this mode only.
        spawnable: spawnable(definition.tools, definition.disallowed),
        warning: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;

    fn gates(patch: u32) -> Gates {
        Gates::for_version(Version::v2_1(patch))
    }

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// Checks piece `name`: included or not, and its rule.
    fn check(input: StartupInput<'_>, name: &str, included: bool, rule: RuleId) -> StartupContext {
        let context = startup_context(&input);
        let found = context
            .piece(name)
            .unwrap_or_else(|| panic!("no piece {name}: {context:#?}"));
        assert_eq!(
            (found.included, found.rule),
            (included, rule),
            "{name} for {input:?}: {found:?}"
        );
        context
    }

    fn custom(gates: Gates) -> StartupInput<'static> {
        StartupInput::new(AgentKind::Custom(Scope::Project), "reviewer", gates)
    }

    #[test]
    fn ctx_2_every_piece_once_in_order() {
        let context = startup_context(&custom(gates(292)));
        let names: Vec<&str> = context.pieces.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                piece::SYSTEM_PROMPT,
                piece::TASK,
                piece::HISTORY,
                piece::CLAUDE_MD,
                piece::GIT_STATUS,
                piece::SKILLS,
                piece::ROSTER,
                piece::MEMORY,
                piece::AUTO_MEMORY,
                piece::MCP,
                piece::OUTPUT_STYLE,
                piece::APPENDED_PROMPT,
                piece::CONTEXT_WINDOW,
            ]
        );
        let fork = startup_context(&StartupInput::new(AgentKind::Fork, "fork", gates(292)));
        let fork_names: Vec<&str> = fork.pieces.iter().map(|p| p.name).collect();
        assert_eq!(fork_names, names);
        let own = check(custom(gates(292)), piece::SYSTEM_PROMPT, true, "DEF-15");
        let prompt =
            |context: &StartupContext| context.piece(piece::SYSTEM_PROMPT).unwrap().detail.clone();
        assert!(prompt(&own).starts_with("the agent's own prompt plus environment details"));
        let built_in = startup_context(&StartupInput::new(
            AgentKind::BuiltIn(BuiltIn::GeneralPurpose),
            "general-purpose",
            gates(292),
        ));
        assert!(prompt(&built_in).starts_with("the built-in's predefined prompt plus"));
        check(custom(gates(292)), piece::TASK, true, "CTX-2");
        check(custom(gates(292)), piece::HISTORY, false, "CTX-1");
        check(custom(gates(292)), piece::AUTO_MEMORY, false, "CTX-7");
        check(custom(gates(292)), piece::CONTEXT_WINDOW, false, "CTX-7");
    }

    #[test]
    fn ctx_3_claude_md() {
        let explore =
            StartupInput::new(AgentKind::BuiltIn(BuiltIn::Explore), "Explore", gates(292));
        let plan = StartupInput::new(AgentKind::BuiltIn(BuiltIn::Plan), "Plan", gates(292));
        let gp = StartupInput::new(
            AgentKind::BuiltIn(BuiltIn::GeneralPurpose),
            "general-purpose",
            gates(292),
        );
        let omit = StartupInput {
            omit_claude_md: true,
            ..custom(gates(292))
        };
        let managed_omit = StartupInput {
            kind: AgentKind::Custom(Scope::Managed),
            ..omit
        };
        // (input, included, rule, detail contains)
        let rows = [
            (explore, false, "CTX-3", "skip"),
            (plan, false, "CTX-3", "skip"),
            (gp, true, "CTX-3", "every level"),
            (custom(gates(292)), true, "CTX-3", "every level"),
            (omit, true, "CTX-3", "only the managed policy files"),
            (managed_omit, false, "CTX-3", "none at all"),
            (
                StartupInput {
                    gates: gates(270),
                    ..omit
                },
                true,
                "D-15",
                "from v2.1.271",
            ),
            (
                StartupInput {
                    gates: gates(271),
                    ..omit
                },
                true,
                "CTX-3",
                "managed policy",
            ),
            // SPAWN-10: a custom Explore is a custom agent.
            (
                StartupInput {
                    name: "Explore",
                    ..custom(gates(292))
                },
                true,
                "CTX-3",
                "every level",
            ),
        ];
        for (input, included, rule, detail) in rows {
            let context = check(input, piece::CLAUDE_MD, included, rule);
            assert!(context
                .piece(piece::CLAUDE_MD)
                .unwrap()
                .detail
                .contains(detail));
        }
        // The trace names the managed-only CLAUDE.md apart; every other piece by its name.
        let label = |input: StartupInput<'_>| {
            startup_context(&input)
                .piece(piece::CLAUDE_MD)
                .unwrap()
                .label
        };
        assert_eq!(label(omit), piece::CLAUDE_MD_MANAGED_ONLY);
        assert_eq!(label(managed_omit), piece::CLAUDE_MD);
        assert_eq!(label(custom(gates(292))), piece::CLAUDE_MD);
    }

    #[test]
    fn ctx_4_git_status() {
        let base = custom(gates(292));
        let git = |in_repo, include_git_instructions, worktree| StartupInput {
            git: Git {
                in_repo,
                include_git_instructions,
                worktree,
            },
            ..base
        };
        let explore =
            StartupInput::new(AgentKind::BuiltIn(BuiltIn::Explore), "Explore", gates(292));
        // (input, included, rule)
        let rows = [
            (git(true, true, false), true, "D-5"),
            (git(true, true, true), true, "D-5"),
            (git(false, true, false), false, "CTX-4"),
            (git(true, false, false), false, "CTX-4"),
            (explore, false, "CTX-4"),
        ];
        for (input, included, rule) in rows {
            check(input, piece::GIT_STATUS, included, rule);
        }
        let worktree = startup_context(&git(true, true, true));
        assert!(worktree
            .piece(piece::GIT_STATUS)
            .unwrap()
            .detail
            .contains("worktree"));
    }

    #[test]
    fn ctx_5_mem_4_mem_5_skills() {
        let many: Vec<String> = (0..40).map(|i| format!("skill-{i}")).collect();
        let mut listed: Vec<Skill<'_>> = vec![
            Skill {
                name: "api-conventions",
                state: SkillState::Available,
            },
            Skill {
                name: "api-conventions",
                state: SkillState::Available,
            },
            Skill {
                name: "verify",
                state: SkillState::ModelInvocationDisabled,
            },
            Skill {
                name: "gone",
                state: SkillState::Missing,
            },
            Skill {
                name: "policy-off",
                state: SkillState::Disabled,
            },
        ];
        listed.extend(many.iter().map(|name| Skill {
            name,
            state: SkillState::Available,
        }));
        let (outcomes, notes) = preload_skills(&listed);
        // 4 distinct listed first, then 28 of the 40 fit under the cap of 32.
        assert_eq!(outcomes.len(), 44);
        let preloaded: Vec<&str> = outcomes
            .iter()
            .filter(|o| o.preloaded)
            .map(|o| o.name.as_str())
            .collect();
        assert_eq!(preloaded.len(), 1 + 28);
        assert_eq!(preloaded[0], "api-conventions");
        assert_eq!(outcomes[1].rule, "MEM-5");
        assert_eq!(outcomes[31].rule, "CTX-5");
        assert_eq!(outcomes[32].rule, "MEM-4");
        // Each skipped one says why; a preloaded one says nothing.
        let why: Vec<Option<SkillSkip>> = outcomes[..4].iter().map(|o| o.skipped).collect();
        assert_eq!(
            why,
            [
                None,
                Some(SkillSkip::ModelInvocationDisabled),
                Some(SkillSkip::Missing),
                Some(SkillSkip::Disabled)
            ]
        );
        assert_eq!(outcomes[32].skipped, Some(SkillSkip::BeyondCap));
        assert!(outcomes.iter().all(|o| o.preloaded == o.skipped.is_none()));
        // Only missing or disabled skills are logged.
        assert_eq!(notes.len(), 2);
        assert!(notes
            .iter()
            .all(|note| note.debug_log && note.rule == "MEM-5"));
        // Each note says why the skill was not preloaded.
        assert!(notes[0].text.ends_with("gone (missing)"), "{notes:?}");
        assert!(
            notes[1].text.ends_with("policy-off (disabled)"),
            "{notes:?}"
        );
        let input = StartupInput {
            skills: &listed,
            ..custom(gates(292))
        };
        check(input, piece::SKILLS, true, "MEM-4");
        check(custom(gates(292)), piece::SKILLS, false, "CTX-5");
        let builtin = StartupInput {
            kind: AgentKind::BuiltIn(BuiltIn::GeneralPurpose),
            ..input
        };
        let context = check(builtin, piece::SKILLS, false, "CTX-5");
        assert!(context.skills.is_empty());
        // The piece says why: a built-in preloads none, whatever it lists.
        assert_eq!(
            context.piece(piece::SKILLS).unwrap().detail,
            "built-ins preload none"
        );
    }

    /// MEM-5: the scenario's word decides; else the bundled `/verify` cannot be preloaded;
    /// else an undeclared name is missing only where the session declares its skills.
    #[test]
    fn mem_5_skill_state() {
        let cases = [
            (
                "changelog",
                Some(SkillState::Disabled),
                true,
                SkillState::Disabled,
            ),
            (
                "verify",
                Some(SkillState::Available),
                true,
                SkillState::Available,
            ),
            ("verify", None, false, SkillState::ModelInvocationDisabled),
            ("verify", None, true, SkillState::ModelInvocationDisabled),
            ("changelog", None, true, SkillState::Missing),
            ("changelog", None, false, SkillState::Available),
        ];
        for (name, declared, skills_declared, want) in cases {
            assert_eq!(skill_state(name, declared, skills_declared), want, "{name}");
        }
    }

    #[test]
    fn ctx_6_sibling_roster() {
        let with_send = strings(&["Read", "SendMessage"]);
        let without = strings(&["Read"]);
        let named = strings(&["researcher", "ana"]);
        let base = StartupInput {
            tools: &with_send,
            named_agents: &named,
            ..custom(gates(292))
        };
        // (input, included)
        let rows = [
            (base, true),
            (
                StartupInput {
                    gates: gates(205),
                    ..base
                },
                false,
            ),
            (
                StartupInput {
                    gates: gates(206),
                    ..base
                },
                true,
            ),
            (
                StartupInput {
                    tools: &without,
                    ..base
                },
                false,
            ),
            (
                StartupInput {
                    named_agents: &[],
                    ..base
                },
                false,
            ),
        ];
        for (input, included) in rows {
            check(input, piece::ROSTER, included, "CTX-6");
        }
        assert_eq!(startup_context(&base).roster, ["main", "researcher", "ana"]);
    }

    #[test]
    fn mem_1_2_3_memory() {
        assert_eq!(
            MemoryScope::User.directory("rev"),
            "~/.claude/agent-memory/rev/"
        );
        assert_eq!(
            MemoryScope::Project.directory("rev"),
            ".claude/agent-memory/rev/"
        );
        assert_eq!(
            MemoryScope::Local.directory("rev"),
            ".claude/agent-memory-local/rev/"
        );
        assert_eq!(MemoryScope::parse("local"), Some(MemoryScope::Local));
        assert_eq!(MemoryScope::parse(" user "), Some(MemoryScope::User));
        assert_eq!(MemoryScope::parse("project"), Some(MemoryScope::Project));
        assert_eq!(MemoryScope::parse("team"), None);
        let short = "a\nb\n";
        let long_lines = "x\n".repeat(300);
        let long_bytes = format!("{}\n", "y".repeat(30_000));
        let ten_kb = format!("{}\n", "z".repeat(99)).repeat(100);
        let straddling = format!("{}é\n", "y".repeat(25_599));
        // (text, lines, bytes, truncated)
        let rows = [
            (short, 2, 4, false),
            (long_lines.as_str(), 200, 400, true),
            // MEM-3's 25 KB is 25,600 bytes (written out: the constant is what is tested).
            (long_bytes.as_str(), 1, 25_600, true),
            (ten_kb.as_str(), 100, 10_000, false),
            // A cut never splits a character: `é` straddles byte 25,600, so the cut is
            // before it.
            (straddling.as_str(), 1, 25_599, true),
            ("", 0, 0, false),
        ];
        for (text, lines, bytes, truncated) in rows {
            assert_eq!(memory_excerpt(text), (lines, bytes, truncated));
        }
        let with_memory = StartupInput {
            memory: Some(MemoryScope::Project),
            memory_md: Some(&long_lines),
            ..custom(gates(292))
        };
        let context = check(with_memory, piece::MEMORY, true, "MEM-3");
        assert!(context.notes.iter().any(|note| note.rule == "MEM-3"));
        assert!(context
            .piece(piece::SYSTEM_PROMPT)
            .unwrap()
            .detail
            .contains("MEM-3"));
        assert_eq!(
            context.memory.unwrap().directory,
            ".claude/agent-memory/reviewer/"
        );
        check(
            StartupInput {
                auto_memory: false,
                ..with_memory
            },
            piece::MEMORY,
            false,
            "MEM-2",
        );
        check(custom(gates(292)), piece::MEMORY, false, "MEM-1");
    }

    #[test]
    fn mcp_1_only_shared_and_connected_servers_give_tools() {
        use McpStatus::*;
        for (status, available) in [
            (Shared, true),
            (Connected, true),
            (Unknown, false),
            (Ignored, false),
            (Blocked, false),
            (Untrusted, false),
        ] {
            assert_eq!(status.available(), available, "{status:?}");
        }
    }

    #[test]
    fn every_label_is_in_piece_all() {
        let omit = StartupInput {
            omit_claude_md: true,
            ..custom(gates(292))
        };
        let inputs = [
            StartupInput::new(AgentKind::Fork, "fork", gates(292)),
            custom(gates(292)),
            omit,
        ];
        for input in inputs {
            for piece in startup_context(&input).pieces {
                assert!(piece::ALL.contains(&piece.label), "{}", piece.label);
                assert!(piece::ALL.contains(&piece.name), "{}", piece.name);
            }
        }
    }

    #[test]
    fn mcp_2_session_agent_inline_servers_join_main_s() {
        let servers = [
            McpServer {
                name: "github",
                inline: false,
            },
            McpServer {
                name: "db",
                inline: true,
            },
        ];
        let trusted = strings(&["/repo"]);
        let configured = strings(&["github"]);
        let input = McpInput {
            servers: &servers,
            scope: Scope::Project,
            source_dir: Some("/repo"),
            trusted_dirs: &trusted,
            configured: &configured,
            policy: McpPolicy::default(),
        };
        // Only inline servers that connect join: the reference is main's already.
        let (connected, notes, rule) = session_agent_servers(&input, &gates(292));
        assert_eq!((connected, notes.len(), rule), (vec!["db"], 0, "MCP-2"));
        // MCP-3: the same trust rule as for a subagent.
        let untrusted = McpInput {
            trusted_dirs: &[],
            ..input
        };
        let (connected, notes, _) = session_agent_servers(&untrusted, &gates(292));
        assert!(connected.is_empty());
        assert!(notes
            .iter()
            .any(|note| note.rule == "MCP-3" && note.debug_log));
        // A plugin agent's mcpServers are ignored (MCP-6).
        let plugin = McpInput {
            scope: Scope::Plugin,
            ..input
        };
        assert!(session_agent_servers(&plugin, &gates(292)).0.is_empty());
    }

    /// Runs `test` on MCP-1…6's fixture: a project definition from the trusted folder
    /// `/repo` with two entries, `github` (a reference to a server main has) and
    /// `playwright` (inline).
    fn with_project_mcp(test: impl FnOnce(McpInput<'_>)) {
        let servers = [
            McpServer {
                name: "github",
                inline: false,
            },
            McpServer {
                name: "playwright",
                inline: true,
            },
        ];
        let trusted = strings(&["/repo"]);
        let configured = strings(&["github"]);
        test(McpInput {
            servers: &servers,
            scope: Scope::Project,
            source_dir: Some("/repo"),
            trusted_dirs: &trusted,
            configured: &configured,
            policy: McpPolicy::default(),
        });
    }

    #[test]
    fn mcp_5_managed_lists_decide_the_session_s_own_servers() {
        let allowed = vec!["github".to_string(), "jira".to_string()];
        let denied = vec!["jira".to_string()];
        let policy = McpPolicy {
            allowed: Some(&allowed),
            denied: &denied,
            ..McpPolicy::default()
        };
        let (kept, notes) = session_servers(["github", "jira", "scratch"], &policy);
        assert_eq!(kept, ["github"]);
        assert_eq!(notes.len(), 2);
        assert!(notes.iter().all(|note| note.rule == "MCP-5"));
        assert!(notes[1].text.ends_with(": scratch"), "{:?}", notes[1]);
        // The strict flag alone keeps every configured server.
        let strict = McpPolicy {
            strict_mcp_config: true,
            ..McpPolicy::default()
        };
        let (kept, notes) = session_servers(["github", "jira"], &strict);
        assert_eq!(kept, ["github", "jira"]);
        assert!(notes.is_empty());
    }

    #[test]
    fn mcp_1_to_6_servers() {
        with_project_mcp(mcp_1_to_6_rows);
    }

    /// One row per case: the input, the version, and what becomes of each server.
    fn mcp_1_to_6_rows(project: McpInput<'_>) {
        let denied = strings(&["playwright"]);
        let allowed = strings(&["playwright"]);
        let status = |input: McpInput<'_>, gates: Gates| -> Vec<(McpStatus, RuleId)> {
            mcp_servers(&input, &gates)
                .0
                .iter()
                .map(|o| (o.status, o.rule))
                .collect()
        };
        use McpStatus::*;
        // (input, version, [github, playwright])
        let rows = [
            (project, 292, [(Shared, "MCP-4"), (Connected, "MCP-3")]),
            // MCP-3: an untrusted folder (a parent's trust does not count).
            (
                McpInput {
                    source_dir: Some("/repo/sub"),
                    ..project
                },
                292,
                [(Shared, "MCP-4"), (Untrusted, "MCP-3")],
            ),
            (
                McpInput {
                    source_dir: Some("/repo/sub"),
                    ..project
                },
                237,
                [(Shared, "MCP-4"), (Connected, "MCP-1")],
            ),
            // MCP-4: user, --agents and managed files need no trust.
            (
                McpInput {
                    scope: Scope::User,
                    trusted_dirs: &[],
                    ..project
                },
                292,
                [(Shared, "MCP-4"), (Connected, "MCP-4")],
            ),
            (
                McpInput {
                    scope: Scope::Managed,
                    trusted_dirs: &[],
                    ..project
                },
                292,
                [(Shared, "MCP-4"), (Connected, "MCP-4")],
            ),
            // MCP-6: ignored for plugins.
            (
                McpInput {
                    scope: Scope::Plugin,
                    ..project
                },
                292,
                [(Ignored, "MCP-6"), (Ignored, "MCP-6")],
            ),
            // MCP-5: restrictions, from v2.1.153.
            (
                McpInput {
                    policy: McpPolicy {
                        denied: &denied,
                        ..McpPolicy::default()
                    },
                    ..project
                },
                292,
                [(Shared, "MCP-4"), (Blocked, "MCP-5")],
            ),
            (
                McpInput {
                    policy: McpPolicy {
                        allowed: Some(&allowed),
                        ..McpPolicy::default()
                    },
                    ..project
                },
                292,
                [(Blocked, "MCP-5"), (Connected, "MCP-3")],
            ),
            (
                McpInput {
                    policy: McpPolicy {
                        strict_mcp_config: true,
                        ..McpPolicy::default()
                    },
                    ..project
                },
                292,
                [(Shared, "MCP-4"), (Blocked, "MCP-5")],
            ),
            (
                McpInput {
                    scope: Scope::Cli,
                    policy: McpPolicy {
                        strict_mcp_config: true,
                        ..McpPolicy::default()
                    },
                    ..project
                },
                292,
                [(Shared, "MCP-4"), (Connected, "MCP-4")],
            ),
            (
                McpInput {
                    scope: Scope::Cli,
                    policy: McpPolicy {
                        bare: true,
                        ..McpPolicy::default()
                    },
                    ..project
                },
                292,
                [(Shared, "MCP-4"), (Blocked, "MCP-5")],
            ),
            (
                McpInput {
                    policy: McpPolicy {
                        managed_config: true,
                        ..McpPolicy::default()
                    },
                    ..project
                },
                292,
                [(Shared, "MCP-4"), (Blocked, "MCP-5")],
            ),
            (
                McpInput {
                    policy: McpPolicy {
                        denied: &denied,
                        ..McpPolicy::default()
                    },
                    ..project
                },
                152,
                [(Shared, "MCP-4"), (Connected, "MCP-1")],
            ),
            // A reference to a server main does not have.
            (
                McpInput {
                    configured: &[],
                    ..project
                },
                292,
                [(Unknown, "MCP-1"), (Connected, "MCP-3")],
            ),
        ];
        for (input, version, expected) in rows {
            assert_eq!(
                status(input, gates(version)),
                expected,
                "{input:?} at 2.1.{version}"
            );
        }
    }

    #[test]
    fn mcp_3_debug_key_and_mcp_5_warning() {
        with_project_mcp(|project| {
            let denied = strings(&["playwright"]);
            // The exact debug key (MCP-3) and the warning naming a blocked server (MCP-5).
            let (_, notes) = mcp_servers(
                &McpInput {
                    source_dir: Some("/repo/sub"),
                    ..project
                },
                &gates(292),
            );
            assert_eq!(notes.len(), 1);
            assert!(notes[0].debug_log);
            assert!(notes[0]
                .text
                .ends_with("projects[\"/repo/sub\"].hasTrustDialogAccepted"));
            let (_, notes) = mcp_servers(
                &McpInput {
                    policy: McpPolicy {
                        denied: &denied,
                        ..McpPolicy::default()
                    },
                    ..project
                },
                &gates(292),
            );
            assert_eq!(
                notes[0].text,
                format!("{}: playwright", messages::MCP_BLOCKED)
            );
            assert!(!notes[0].debug_log);
        });
    }

    #[test]
    fn mcp_1_and_mcp_6_as_a_startup_piece() {
        with_project_mcp(|project| {
            // As a piece of the startup context.
            check(
                StartupInput {
                    mcp: project,
                    ..custom(gates(292))
                },
                piece::MCP,
                true,
                "MCP-1",
            );
            check(
                StartupInput {
                    mcp: McpInput {
                        scope: Scope::Plugin,
                        ..project
                    },
                    ..custom(gates(292))
                },
                piece::MCP,
                false,
                "MCP-6",
            );
            check(custom(gates(292)), piece::MCP, false, "MCP-1");
        });
    }

    #[test]
    fn ctx_7_ctx_8_fork_13_output_style_and_appended_prompt() {
        let headless = StartupInput {
            session: SessionKind::Headless,
            appended: Some(Appended::Text),
            output_style: true,
            ..custom(gates(292))
        };
        let fork = StartupInput {
            kind: AgentKind::Fork,
            ..headless
        };
        // (input, piece, included, rule)
        let rows = [
            (headless, piece::OUTPUT_STYLE, false, "CTX-7"),
            (fork, piece::OUTPUT_STYLE, true, "FORK-13"),
            (
                StartupInput {
                    output_style: false,
                    ..fork
                },
                piece::OUTPUT_STYLE,
                false,
                "FORK-13",
            ),
            (headless, piece::APPENDED_PROMPT, true, "CTX-8"),
            (
                StartupInput {
                    session: SessionKind::Sdk,
                    ..headless
                },
                piece::APPENDED_PROMPT,
                true,
                "CTX-8",
            ),
            (
                StartupInput {
                    session: SessionKind::Interactive,
                    ..headless
                },
                piece::APPENDED_PROMPT,
                false,
                "CTX-8",
            ),
            (
                StartupInput {
                    gates: gates(204),
                    ..headless
                },
                piece::APPENDED_PROMPT,
                false,
                "CTX-8",
            ),
            (
                StartupInput {
                    gates: gates(205),
                    ..headless
                },
                piece::APPENDED_PROMPT,
                true,
                "CTX-8",
            ),
            (
                StartupInput {
                    appended: Some(Appended::File),
                    gates: gates(260),
                    ..headless
                },
                piece::APPENDED_PROMPT,
                false,
                "CTX-8",
            ),
            (
                StartupInput {
                    appended: Some(Appended::File),
                    gates: gates(261),
                    ..headless
                },
                piece::APPENDED_PROMPT,
                true,
                "CTX-8",
            ),
            (
                StartupInput {
                    appended: None,
                    ..headless
                },
                piece::APPENDED_PROMPT,
                false,
                "CTX-8",
            ),
            (fork, piece::APPENDED_PROMPT, false, "FORK-12"),
        ];
        for (input, name, included, rule) in rows {
            check(input, name, included, rule);
        }
    }

    #[test]
    fn fork_5_forks_start_from_main() {
        let fork = StartupInput::new(AgentKind::Fork, "fork", gates(292));
        // (piece, included, rule)
        let rows = [
            (piece::SYSTEM_PROMPT, true, "FORK-5"),
            (piece::HISTORY, true, "FORK-5"),
            (piece::CLAUDE_MD, true, "FORK-5"),
            (piece::GIT_STATUS, true, "FORK-5"),
            (piece::SKILLS, false, "FORK-5"),
            (piece::ROSTER, false, "FORK-5"),
            (piece::MEMORY, false, "FORK-5"),
            (piece::AUTO_MEMORY, true, "FORK-5"),
            (piece::MCP, true, "FORK-5"),
        ];
        for (name, included, rule) in rows {
            check(fork, name, included, rule);
        }
    }

    fn main_input<'a>(
        pool: &'a [String],
        definition: Option<MainDefinition<'a>>,
    ) -> MainAgentInput<'a> {
        MainAgentInput {
            flag: Some("coordinator"),
            setting: None,
            definition,
            user_prompt: Some("review the PR"),
            pool,
            auto_memory: true,
            gates: gates(292),
        }
    }

    #[test]
    fn main_1_to_6_main_agent() {
        let pool = tools::default_main_tools();
        let coordinator_tools = strings(&["Agent(worker, researcher)", "Read", "Bash"]);
        let coordinator = MainDefinition {
            name: "coordinator",
            scope: Some(Scope::Project),
            prompt: Some("You coordinate."),
            tools: Some(&coordinator_tools),
            model: Some("sonnet"),
            initial_prompt: Some("/review"),
            omit_claude_md: true,
            ..MainDefinition::default()
        };
        let main = main_agent(&main_input(&pool, Some(coordinator)));
        // MAIN-1: the flag names the agent; its tools and model.
        assert_eq!(main.agent, Some(("coordinator".into(), "MAIN-1")));
        assert_eq!(main.model, Some(("sonnet".into(), "MAIN-1")));
        assert_eq!(main.tools.tools, strings(&["Agent", "Bash", "Read"]));
        assert!(main.tools.steps.iter().any(|step| step.rule == "TOOLS-19"));
        // MAIN-2: the prompt replaces the default; CLAUDE.md still loads.
        let system = &main.pieces[0];
        assert_eq!(
            (system.name, system.included, system.rule),
            (piece::SYSTEM_PROMPT, true, "MAIN-2")
        );
        let claude_md = main
            .pieces
            .iter()
            .find(|p| p.name == piece::CLAUDE_MD)
            .unwrap();
        assert!(claude_md.included && claude_md.detail.contains("omitClaudeMd is ignored"));
        // MAIN-5: initialPrompt first.
        assert_eq!(main.first_turn.as_deref(), Some("/review\n\nreview the PR"));
        // MAIN-6: the allowlist.
        assert_eq!(
            main.spawnable,
            (
                Spawnable::Only(strings(&["worker", "researcher"])),
                "SPAWN-5"
            )
        );

        // DEF-8: an empty prompt without memory leaves the system prompt (v2.1.281+).
        let empty = MainDefinition {
            prompt: Some(""),
            ..coordinator
        };
        let rows = [
            (empty, 292, false, "DEF-8"),
            (empty, 280, true, "MAIN-2"),
            (
                MainDefinition {
                    memory: true,
                    ..empty
                },
                292,
                true,
                "MAIN-2",
            ),
        ];
        for (definition, version, included, rule) in rows {
            let input = MainAgentInput {
                gates: gates(version),
                ..main_input(&pool, Some(definition))
            };
            let system = main_agent(&input).pieces[0].clone();
            assert_eq!(
                (system.included, system.rule),
                (included, rule),
                "{definition:?} 2.1.{version}"
            );
        }
        // DEF-6: a plugin agent's initialPrompt is ignored.
        let plugin = MainDefinition {
            scope: Some(Scope::Plugin),
            ..coordinator
        };
        let main = main_agent(&main_input(&pool, Some(plugin)));
        assert_eq!(main.first_turn.as_deref(), Some("review the PR"));
        assert!(main.pieces.iter().any(|p| p.rule == "DEF-6"));

        // MAIN-3: the agent is gone on resume: default tools and a warning naming it.
        let gone = main_agent(&main_input(&pool, None));
        assert_eq!(gone.tools.tools, pool);
        assert!(gone.warning.unwrap().ends_with("(coordinator)"));
        // TOOLS-17: memory on a main agent enables Read/Write/Edit.
        let with_memory = MainDefinition {
            memory: true,
            ..coordinator
        };
        assert!(main_agent(&main_input(&pool, Some(with_memory)))
            .tools
            .has("Edit"));
    }

    #[test]
    fn main_1_flag_overrides_setting() {
        assert_eq!(main_agent_name(Some("a"), Some("b")), Some(("a", "MAIN-1")));
        assert_eq!(main_agent_name(None, Some("b")), Some(("b", "MAIN-1")));
        assert_eq!(main_agent_name(None, None), None);
        let pool = tools::default_main_tools();
        let plain = main_agent(&MainAgentInput {
            flag: None,
            ..main_input(&pool, None)
        });
        assert_eq!(plain.agent, None);
        assert!(plain.warning.is_none());
    }

    /// Regression: `model: inherit` on the session agent came back as the model `inherit`;
    /// it names no model, so main keeps the session's (the engine used to filter it itself).
    #[test]
    fn main_1_inherit_is_no_model() {
        let pool = tools::default_main_tools();
        let inherit = MainDefinition {
            name: "helper",
            scope: Some(Scope::Project),
            model: Some("inherit"),
            ..MainDefinition::default()
        };
        assert_eq!(main_agent(&main_input(&pool, Some(inherit))).model, None);
    }
}
