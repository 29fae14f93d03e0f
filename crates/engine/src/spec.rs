//! The engine's input: a validated scenario as plain data.
//!
//! The scenario crate builds a [`SimSpec`] from a YAML file; tests and benches build one in
//! code. Nothing here parses text (except the tiny helpers the builders share).

use std::collections::BTreeMap;
use std::rc::Rc;

use subsim_rules::prompt::PermissionRules;
use subsim_rules::{PermissionMode, SessionKind, Version};

use crate::dist::Dist;
use crate::time::SimTime;

/// A step program, shared between every run that executes it.
pub type Program = Rc<[Step]>;

/// Everything a run needs.
#[derive(Clone, Debug)]
pub struct SimSpec {
    /// The scenario's `name`.
    pub name: String,
    /// The scenario's `description`.
    pub description: Option<String>,
    /// Session settings.
    pub session: SessionSpec,
    /// Agent definitions beyond (or overriding) the built-ins, by name.
    pub agents: BTreeMap<String, AgentDef>,
    /// The main conversation's script.
    pub main: Program,
    /// The person at the terminal.
    pub user: UserSpec,
    /// A generator of Agent calls, for load tests.
    pub load: Option<LoadSpec>,
    /// What loading the definition files found (DEF): the kernel reports each at time 0.
    pub definitions: Vec<DefinitionNote>,
}

/// What happened to one definition file or one defined name while loading (DEF-1…16).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefinitionNote {
    /// The agent name (or scoped plugin id) when one is known.
    pub name: Option<String>,
    /// The file, relative to the scenario's folder where possible.
    pub path: String,
    /// Its scope.
    pub scope: Scope,
    /// What happened.
    pub outcome: DefinitionOutcome,
    /// Why, in words (the documented reason for a skip).
    pub reason: Option<String>,
    /// The rule that decided (`DEF-10`, `DEF-1`, …).
    pub rule: &'static str,
}

subsim_rules::vocabulary! {
    /// The fate of a definition.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum DefinitionOutcome {
        /// Loaded and in effect.
        Loaded => "loaded",
        /// Skipped (DEF-10): the reason says why.
        Skipped => "skipped",
        /// Loaded, but a same-named definition of higher priority wins (DEF-1, DEF-2, DEF-4).
        Shadowed => "shadowed",
        /// A warning that does not stop loading (e.g. SPAWN-15's description budget).
        Warning => "warning",
        /// Edited during the session and picked up by the watcher (DEF-9): the next
        /// delegation uses the new definition; a resumed run keeps its own (RESUME-7).
        Edited => "edited",
    }
}

/// The `session` block.
#[derive(Clone, Debug)]
pub struct SessionSpec {
    /// Session kind.
    pub kind: SessionKind,
    /// Claude Code version whose rules apply.
    pub version: Version,
    /// Seed of every random stream.
    pub seed: u64,
    /// The main conversation's model.
    pub model: String,
    /// Documented env vars by real name.
    pub env: BTreeMap<String, String>,
    /// `permissions.allow` / `permissions.deny`.
    pub permissions: PermissionRules,
    /// Agent teams on.
    pub agent_teams: bool,
    /// The settings the moment-time admission reads (CAP-4's `ultracode`, …), carried as
    /// the scenario crate filled them into `SessionConfig::admission`.
    pub admission: subsim_rules::cap::Settings,
    /// The main session's permission mode.
    pub permission_mode: PermissionMode,
    /// The main conversation's built-in tools; `None` = the documented default list.
    pub tools: Option<Vec<String>>,
    /// MCP servers and their tools.
    pub mcp: BTreeMap<String, Vec<String>>,
    /// `--agent`: main runs as this agent.
    pub agent: Option<String>,
    /// Safety bounds.
    pub limits: Limits,
    /// Session-level hooks (settings files, managed policy, plugins: HOOK-1).
    pub hooks: Vec<HookSpec>,
    /// ERR-5: the fallback model chain, first to last.
    pub fallback_models: Vec<String>,
    /// ERR-1 / Q-15: how many continuation requests a mid-stream cut gets.
    pub continuations: u32,
    /// MODEL-7: the organization's `availableModels` allowlist, if any.
    pub available_models: Option<Vec<String>>,
    /// MODEL-4 / MODEL-12: the provider (`anthropic`, `subscription`, `console`, `gateway`,
    /// `bedrock`, `vertex`, `foundry`, `aws`, `apps_gateway`).
    pub provider: String,
    /// The session's effort level (MODEL-14), if set.
    pub effort: Option<String>,
    /// Folders whose workspace trust dialog was accepted (HOOK-6, MCP-3).
    pub trusted_dirs: Vec<String>,
    /// MEM-2: auto memory on (default) or off.
    pub auto_memory: bool,
    /// TOOLS-8: cross-session messaging enabled (main has `ListAgents`).
    pub cross_session_messaging: bool,
    /// PANEL-2: screen-reader mode (no footer hint).
    pub screen_reader: bool,
    /// HANDBACK-7/8: the auto-mode classifier's verdicts, unless a spawn overrides them.
    pub classifier: ClassifierSpec,
    /// PERM-12: a settings file sets `disableAutoMode` (auto mode is available to no
    /// subagent, and main does not start in it).
    pub disable_auto_mode: bool,
    /// CTX-8: `--append-subagent-system-prompt` (`Text`) or its `-file` form (`File`) was
    /// passed; the text itself is not observable (DEF-15).
    pub appended_prompt: Option<subsim_rules::context::Appended>,
    /// MCP-5: the main session's MCP restrictions.
    pub mcp_policy: McpPolicySpec,
    /// PERM-9: MCP tools marked `requiresUserInteraction` (full names, `mcp__s__t`): they
    /// prompt even when allowed, and `dontAsk` denies them even if allowed.
    pub requires_user_interaction: Vec<String>,
    /// MEM-5: the session's skills by name, when the scenario declares them
    /// (`session.skills`): a listed skill not declared is then missing. `None` takes every
    /// skill a definition lists to exist (the bundled `/verify` aside).
    pub skills: Option<BTreeMap<String, subsim_rules::context::SkillState>>,
    /// ISO-5: the main conversation itself runs isolated in a worktree (`isolation:
    /// worktree`): the isolation checks apply to the session and every subagent.
    pub main_isolated: bool,
}

/// MCP-5: the main session's MCP restrictions, which also cover the servers a definition
/// declares in `mcpServers`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpPolicySpec {
    /// `--strict-mcp-config`.
    pub strict_mcp_config: bool,
    /// The managed `allowedMcpServers` list, if set.
    pub allowed: Option<Vec<String>>,
    /// The managed `deniedMcpServers` list.
    pub denied: Vec<String>,
}

impl McpPolicySpec {
    /// The restrictions as the rules read them.
    pub fn policy(&self) -> subsim_rules::context::McpPolicy<'_> {
        subsim_rules::context::McpPolicy {
            strict_mcp_config: self.strict_mcp_config,
            allowed: self.allowed.as_deref(),
            denied: &self.denied,
            ..subsim_rules::context::McpPolicy::default()
        }
    }
}

/// A hook: an event name, an optional matcher, and the command (recorded, never run).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookSpec {
    /// `SubagentStart`, `SubagentStop`, `Stop`, `PreToolUse`, `PostToolUse`, …
    pub event: String,
    /// The matcher (agent type for Subagent* events, tool name for tool events).
    pub matcher: Option<String>,
    /// The command; subsim records it and never executes it.
    pub command: String,
    /// The simulator's stand-in for what the command would exit with: `2` makes a
    /// `PreToolUse` hook block the call (HOOK-7). `None`: it succeeds.
    pub exit_code: Option<u32>,
}

/// The auto-mode classifier's verdicts at its three checkpoints (HANDBACK-7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassifierSpec {
    /// Before launch: `false` blocks the delegation.
    pub launch_blocks: bool,
    /// At finish: the review outcome (HANDBACK-8).
    pub review: subsim_rules::handback::ReviewOutcome,
}

impl Default for SessionSpec {
    /// SET-6 (a setting of the project): the newest version, `opus`, the Anthropic API, an
    /// interactive session, seed 0; every other key as the scenario reference says.
    fn default() -> SessionSpec {
        SessionSpec {
            kind: SessionKind::Interactive,
            version: Version::NEWEST,
            seed: 0,
            model: "opus".to_string(),
            env: BTreeMap::new(),
            permissions: PermissionRules::default(),
            agent_teams: false,
            admission: subsim_rules::cap::Settings::default(),
            permission_mode: PermissionMode::Default,
            tools: None,
            mcp: BTreeMap::new(),
            agent: None,
            limits: Limits::default(),
            hooks: Vec::new(),
            fallback_models: Vec::new(),
            continuations: 3,
            available_models: None,
            provider: "anthropic".to_string(),
            effort: None,
            trusted_dirs: Vec::new(),
            auto_memory: true,
            cross_session_messaging: false,
            screen_reader: false,
            classifier: ClassifierSpec::default(),
            disable_auto_mode: false,
            appended_prompt: None,
            mcp_policy: McpPolicySpec::default(),
            requires_user_interaction: Vec::new(),
            skills: None,
            main_isolated: false,
        }
    }
}

/// Safety bounds: hitting one ends the run with a clear error, keeping the trace so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most trace events.
    pub max_events: u64,
    /// Latest virtual time.
    pub max_time: SimTime,
    /// Most agents created.
    pub max_agents: u64,
    /// Most steps run: every step of every behavior, each round of a `repeat` counted by
    /// its steps. Steps that take no time and write nothing (`work: 0s`) can loop without
    /// ever reaching `max_events` or `max_time`; this stops them. `None`: 10 × `max_events`
    /// ([`Limits::steps`]).
    pub max_steps: Option<u64>,
    /// Most subagents running at once (slots held, whatever the cap says). Memory grows
    /// with what is running, so this bounds it when the cap does not (`ultracode`, a raised
    /// cap): about 0.3 KB per running agent.
    pub max_running: u64,
    /// Most agent records and waiting calls the kernel holds at once: every agent record
    /// it has had to make room for (running, waiting, or finished and kept for a resume, as
    /// a named agent or a teammate is; a record an anonymous load run leaves is reused),
    /// plus every rejected load call waiting to be retried. What the kernel keeps grows
    /// with these whatever the cap and `max_running` say (teammates take no slot, a
    /// finished named agent stays resumable, a queued retry holds no slot), so this bounds
    /// its memory: a few hundred bytes each.
    pub max_held: u64,
    /// Most steps taken at one instant of virtual time. A zero-time loop (a `repeat` of
    /// `work: 0s`) never lets the clock advance; this stops it long before `max_steps`.
    /// Counted in blocks (of this many steps, or of `max_silent_steps` when that is
    /// smaller): a run stops once whole blocks in a row, at least this many steps, were
    /// taken without the clock moving, so after at most twice this many steps at one
    /// instant.
    pub max_instant_steps: u64,
    /// Most steps taken in a row without an event written. A loop of steps that take a
    /// little time and write nothing (a `repeat` of `wait: 1us` or `work: 1ms`) lets the
    /// clock move, so `max_instant_steps` does not stop it, and `max_time` (30 days) is
    /// billions of such steps away; this stops it long before `max_steps`. Counted in the
    /// same blocks as `max_instant_steps` (of the smaller of the two), so a run stops
    /// after between one and two times this many silent steps.
    pub max_silent_steps: u64,
    /// Most steps `subsim explore` runs over all its orderings together (each ordering is
    /// a whole run, bounded by the limits above; this bounds their sum, so that a scenario
    /// whose runs are long and whose orderings are many stops in bounded time). Plain runs
    /// ignore it.
    pub max_explore_steps: u64,
}

impl Limits {
    /// The bound on steps: `max_steps`, or 10 × `max_events` when it is not set.
    pub fn steps(&self) -> u64 {
        self.max_steps
            .unwrap_or_else(|| self.max_events.saturating_mul(10))
    }
}

impl Default for Limits {
    /// Generous defaults: 100 million events, 30 days of virtual time, 20 million agents,
    /// a billion steps (10 × the events), a million subagents running at once, 1.5 million
    /// agent records and waiting calls held, 50 million steps at one instant, 50 million
    /// steps in a row without an event, 10 million steps over all of `explore`'s orderings
    /// (SET-5, a setting of the project).
    fn default() -> Limits {
        Limits {
            max_events: 100_000_000,
            max_time: SimTime::from_secs(30 * 24 * 3_600),
            max_agents: 20_000_000,
            max_steps: None,
            max_running: 1_000_000,
            max_held: 1_500_000,
            max_instant_steps: 50_000_000,
            max_silent_steps: 50_000_000,
            max_explore_steps: 10_000_000,
        }
    }
}

/// Where a definition came from (DEF-1), or a built-in type: the rules crate's one
/// `Scope` (`subsim_rules::scope`), which spawn resolution and hooks read too.
pub use subsim_rules::scope::Scope;

/// One agent definition (frontmatter fields plus the simulator's `behavior`).
#[derive(Clone, Debug, Default)]
pub struct AgentDef {
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: String,
    /// `tools`, when set.
    pub tools: Option<Vec<String>>,
    /// `disallowedTools`.
    pub disallowed_tools: Vec<String>,
    /// `model`.
    pub model: Option<String>,
    /// `permissionMode`.
    pub permission_mode: Option<PermissionMode>,
    /// `maxTurns`.
    pub max_turns: Option<u32>,
    /// `background: true`.
    pub background: bool,
    /// `isolation`.
    pub isolation: Option<String>,
    /// `effort`.
    pub effort: Option<String>,
    /// `memory`.
    pub memory: Option<String>,
    /// `skills`.
    pub skills: Vec<String>,
    /// `omitClaudeMd`.
    pub omit_claude_md: bool,
    /// `color`.
    pub color: Option<String>,
    /// `mcpServers`: server references and inline servers (MCP-1).
    pub mcp_servers: Vec<McpServerRef>,
    /// `hooks` in the frontmatter (HOOK-4).
    pub hooks: Vec<HookSpec>,
    /// `initialPrompt` (MAIN-5).
    pub initial_prompt: Option<String>,
    /// The system prompt (the Markdown body, or `prompt` of `--agents` JSON).
    pub prompt: Option<String>,
    /// The file the definition was loaded from, if any.
    pub source: Option<String>,
    /// For plugin definitions: the plugin's name.
    pub plugin: Option<String>,
    /// Where the definition came from.
    pub scope: Scope,
    /// The steps an instance runs; `None` = [`default_behavior`].
    pub behavior: Option<Program>,
}

impl AgentDef {
    /// A built-in type as a session registers it (SPAWN-9: its `disallowedTools` and model
    /// come from `rules::model::BuiltIn`, the one list of built-in types).
    pub fn built_in(built_in: subsim_rules::model::BuiltIn) -> AgentDef {
        let name = built_in.name();
        AgentDef {
            name: name.to_string(),
            description: format!("built-in {name}"),
            scope: Scope::BuiltIn,
            disallowed_tools: built_in
                .disallowed_tools()
                .iter()
                .map(|tool| tool.to_string())
                .collect(),
            model: built_in.definition_model().map(str::to_string),
            ..AgentDef::default()
        }
    }
}

/// One `mcpServers` entry (MCP-1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServerRef {
    /// The server's name.
    pub name: String,
    /// Inline (connects when the subagent starts) rather than a reference.
    pub inline: bool,
    /// The tools an inline server offers (the simulator's stand-in for connecting).
    pub tools: Vec<String>,
}

/// The steps a run takes when neither the spawn nor the definition gives `behavior`:
/// one 10-second turn, then a report (SET-1, a setting of the project).
pub fn default_behavior() -> Program {
    Rc::from(vec![
        Step::Work(Dist::fixed(10_000_000)),
        Step::Report("done".into()),
    ])
}

/// The steps a resumed run takes when the `send` gives no `behavior`: one 5-second turn,
/// then a report (SET-2, a setting of the project).
pub fn default_resume_behavior() -> Program {
    Rc::from(vec![
        Step::Work(Dist::fixed(5_000_000)),
        Step::Report("done".into()),
    ])
}

/// One step of a script.
///
/// `repr(u8)`: the kind is a byte in front, so the step interpreter tells the kinds apart
/// with one compare (left to the compiler, the kind was encoded in a spare value of a
/// `spawn` step's field and decoded with half a dozen instructions per step).
#[derive(Clone, Debug)]
#[repr(u8)]
pub enum Step {
    /// `work`: one agentic turn of that duration (counts toward `maxTurns`).
    Work(Dist),
    /// `tool`: a tool call.
    Tool(ToolCall),
    /// `spawn`: Agent tool calls (`count` of them, issued together).
    Spawn(SpawnSpec),
    /// `spawn: [...]`: several different Agent calls issued together in one response
    /// (each with its own `count`); foreground ones run concurrently and the caller
    /// waits for all of them (FGBG-4).
    SpawnTogether(Rc<[SpawnSpec]>),
    /// `send`: a SendMessage call.
    Send(SendSpec),
    /// `stop`: a TaskStop call.
    Stop(String),
    /// `wait: <duration>`.
    Sleep(Dist),
    /// `wait: {for: ...}`.
    WaitFor(WaitTarget),
    /// `bash_background`: a shell command that runs on past the turn.
    BashBackground(Dist),
    /// `report`: the final report text (shared: a run keeps it without copying).
    Report(Rc<str>),
    /// `fail`: the run ends in an API error.
    Fail(FailSpec),
    /// `ask_progress`: the person asks how an agent is doing (main only).
    AskProgress(String),
    /// `repeat`.
    Repeat {
        /// How many times.
        times: u32,
        /// The body.
        steps: Program,
    },
}

/// A `tool` step.
#[derive(Clone, Debug, Default)]
pub struct ToolCall {
    /// Tool name (shared: every call of the step hands out the same text, no copy).
    pub name: Rc<str>,
    /// The call's input (e.g. the Bash command), matched by permission rules.
    pub input: Option<Rc<str>>,
    /// Forces the permission prompt on (`true`) or off (`false`).
    pub prompt: Option<bool>,
    /// How long the call runs once allowed; `None` = instantaneous.
    pub duration: Option<Dist>,
    /// ISO-2/3: where a Bash, PowerShell or Monitor command's working directory resolves
    /// (`cwd:`); read only in an isolated run.
    pub cwd: subsim_rules::isolation::Cwd,
    /// ISO-4: what a Bash or Monitor command's text does to git (`git:`); read only in an
    /// isolated run.
    pub git: subsim_rules::isolation::Git,
}

/// A `spawn` (or `fork`) step: one or more Agent tool calls.
#[derive(Clone, Debug, Default)]
pub struct SpawnSpec {
    /// `subagent_type`; `None` leaves it out.
    pub agent: Option<String>,
    /// `name`; with `count > 1`, runs are named `NAME-1..N`.
    pub name: Option<String>,
    /// How many calls.
    pub count: u32,
    /// `run_in_background`, if passed.
    pub background: Option<bool>,
    /// the caller needs the result before going on.
    pub needs_result: bool,
    /// Per-invocation `model`.
    pub model: Option<String>,
    /// Per-invocation `effort`.
    pub effort: Option<String>,
    /// `isolation`.
    pub isolation: Option<String>,
    /// Steps overriding the definition's `behavior`.
    pub behavior: Option<Program>,
    /// The call is a fork (`fork:` step, or `agent: fork`).
    pub fork: bool,
    /// The delegation prompt Claude writes (the auto-mode classifier reads it).
    pub prompt: Option<String>,
    /// HANDBACK-7/8: classifier verdicts for these runs, overriding `session.classifier`.
    pub classifier: Option<ClassifierSpec>,
}

/// A `send` step.
#[derive(Clone, Debug, Default)]
pub struct SendSpec {
    /// Agent id (`a3`) or name.
    pub to: String,
    /// The message.
    pub message: String,
    /// Steps the resumed run executes; `None` = [`default_resume_behavior`].
    pub behavior: Option<Program>,
}

/// What a `wait: {for: ...}` waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitTarget {
    /// An agent (id or name) to finish.
    Agent(String),
    /// Every child the waiter launched to finish.
    Children,
    /// The next notification addressed to the waiter.
    Notification,
}

/// The API errors of `fail` steps (ERR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiError {
    /// A rate or usage limit.
    RateLimit,
    /// Overloaded.
    Overloaded,
    /// A server error.
    Server,
    /// The model is unavailable (covered by a fallback chain, ERR-5).
    ModelUnavailable,
}

impl ApiError {
    /// The scenario spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiError::RateLimit => "rate_limit",
            ApiError::Overloaded => "overloaded",
            ApiError::Server => "server",
            ApiError::ModelUnavailable => "model_unavailable",
        }
    }
}

/// A `fail` step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailSpec {
    /// Which error.
    pub api_error: ApiError,
    /// Whether the run had produced text before the cut (ERR-3).
    pub after_output: bool,
    /// ERR-1: the response was cut mid-stream with text and no tool calls.
    pub mid_stream: bool,
    /// ERR-1: how many continuation requests it takes to recover; `None` = never.
    pub recovers_after: Option<u32>,
    /// Whether the cut response had made tool calls (ERR-1/3).
    pub tool_calls: bool,
}

/// How the person answers permission prompts: the rules crate's one type (PERM-3/4/6).
pub use subsim_rules::prompt::Answer;

/// The `user` block.
#[derive(Clone, Debug)]
pub struct UserSpec {
    /// How prompts are answered.
    pub answer: Answer,
    /// Time to answer each prompt (default `const(2s)`).
    pub think: Dist,
    /// Timed actions, in file order.
    pub actions: Vec<UserAction>,
    /// `answers`: per-prompt answers; the first that matches a prompt answers it, and a
    /// prompt none matches gets `answer`.
    pub answers: Vec<AnswerRule>,
}

impl Default for UserSpec {
    /// SET-3 (a setting of the project): the person approves, after 2 s per prompt.
    fn default() -> UserSpec {
        UserSpec {
            answer: Answer::Approve,
            think: Dist::fixed(2_000_000),
            actions: Vec::new(),
            answers: Vec::new(),
        }
    }
}

/// One entry of `user.answers`: which prompts it answers (every given key must match) and
/// how.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnswerRule {
    /// The asking agent, by id or name (`main` for the main conversation).
    pub agent: Option<String>,
    /// The tool the prompt is for.
    pub tool: Option<String>,
    /// The prompt's number in the run (1, 2, …: the trace's `prompt`).
    pub prompt: Option<u64>,
    /// The answer.
    pub answer: Answer,
}

/// One timed action of the person.
#[derive(Clone, Debug)]
pub struct UserAction {
    /// When.
    pub at: SimTime,
    /// What.
    pub kind: ActionKind,
}

/// What the person does.
#[derive(Clone, Debug)]
pub enum ActionKind {
    /// `x` in the tasks panel on a running agent (id or name).
    Stop(String),
    /// `/subtask <task>`: a fork the person starts.
    Subtask {
        /// The task text; the fork is named from its first words.
        task: String,
        /// `name`: the fork's name instead of one made from the task.
        name: Option<String>,
        /// The fork's steps.
        behavior: Option<Program>,
    },
    /// Ctrl+B: background the running foreground task.
    CtrlB,
    /// `/clear`.
    Clear,
    /// `x` on a finished row in the panel: dismiss it before its 30 s are up (PANEL-3).
    Dismiss(String),
    /// A definition file edited on disk during the session (DEF-9's watcher).
    Edit {
        /// The definition's name.
        agent: String,
        /// Its new `model`.
        model: String,
    },
    /// Typing into an agent's transcript.
    TypeTo {
        /// Agent id or name.
        to: String,
        /// The message.
        message: String,
        /// Steps of the resumed run, when it resumes one.
        behavior: Option<Program>,
    },
}

/// The `load` block: one stream of arrivals (`load: {arrivals: …}`) or several
/// (`load: [{name: a, arrivals: …}, …]`), and the warm-up of their statistics.
#[derive(Clone, Debug)]
pub struct LoadSpec {
    /// The streams, in the order the file lists them (one for the single form). At one
    /// instant, the arrivals of an earlier stream are made first.
    pub streams: Vec<LoadStream>,
    /// `warmup`: arrivals first requested before this time are left out of the load
    /// statistics, and time averages start here. It changes nothing in the run.
    pub warmup: SimTime,
}

/// One stream of load arrivals: its arrival process, when it stops, its Agent call and
/// what its rejected arrivals do.
#[derive(Clone, Debug)]
pub struct LoadStream {
    /// `name` of a stream of the list form (`None` for the single form); its arrivals'
    /// `spawn_requested` carry it as `stream`, and it seeds the stream's arrival times.
    pub name: Option<Rc<str>>,
    /// The arrival process.
    pub arrivals: Arrivals,
    /// When arrivals stop.
    pub until: LoadUntil,
    /// What each arrival does: one Agent call from main.
    pub spawn: SpawnSpec,
    /// What a rejected arrival does.
    pub retry: Retry,
}

impl LoadSpec {
    /// A load of one stream (the single `load:` form).
    pub fn single(arrivals: Arrivals, until: LoadUntil, spawn: SpawnSpec, retry: Retry) -> Self {
        LoadSpec {
            streams: vec![LoadStream {
                name: None,
                arrivals,
                until,
                spawn,
                retry,
            }],
            warmup: SimTime::ZERO,
        }
    }
}

impl SimSpec {
    /// The load's offered load, Erlangs (mean arrival rate × mean run time, summed over
    /// the streams), when every stream arrives at a steady rate (`poisson`, `every`) and
    /// each of its runs is one `work` step; `None` otherwise, or without a load.
    pub fn offered_load(&self) -> Option<f64> {
        let load = self.load.as_ref()?;
        let mut offered = 0.0;
        for stream in &load.streams {
            let behavior = stream.spawn.behavior.clone().or_else(|| {
                let agent = stream.spawn.agent.as_deref()?;
                self.agents.get(agent)?.behavior.clone()
            });
            let mean_run = match behavior.as_deref() {
                Some([Step::Work(dist)]) => dist.mean_micros() / 1e6,
                _ => return None,
            };
            let rate = match stream.arrivals {
                Arrivals::Poisson(rate) => rate,
                Arrivals::Every(spacing) if spacing > 0 => 1e6 / spacing as f64,
                Arrivals::Every(..)
                | Arrivals::Burst(..)
                | Arrivals::Schedule(..)
                | Arrivals::OnOff { .. }
                | Arrivals::Times(..) => return None,
            };
            offered += rate * mean_run;
        }
        Some(offered)
    }
}

/// Arrival processes.
#[derive(Clone, Debug, PartialEq)]
pub enum Arrivals {
    /// `poisson(20/s)`: rate per second.
    Poisson(f64),
    /// `every(50ms)`: fixed spacing in µs.
    Every(u64),
    /// `burst(25)`: that many at time 0.
    Burst(u32),
    /// `schedule: [{for: 8h, rate: 2/s}, …]`: Poisson arrivals whose rate is constant
    /// within each phase; after the last phase the schedule starts again (a day that
    /// repeats). At least one phase has a rate above zero.
    Schedule(Rc<[RatePhase]>),
    /// `on_off: {rate: 30/s, on: exp(10s), off: exp(50s)}`: bursty arrivals. Poisson at
    /// `rate` during an on period, none during an off period; periods alternate, starting
    /// with an on period, their lengths drawn from `on` and `off`.
    OnOff {
        /// Arrivals per second while on.
        rate: f64,
        /// Length of an on period.
        on: Dist,
        /// Length of an off period.
        off: Dist,
    },
    /// `{file: times.csv}`: recorded arrival times replayed exactly, µs from the start,
    /// in order (equal times arrive one after another, in file order).
    Times(Rc<[u64]>),
}

/// One phase of a rate schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatePhase {
    /// How long the phase lasts, µs (above zero).
    pub length: u64,
    /// Arrivals per second in the phase (zero or more).
    pub rate: f64,
}

/// When the load generator stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadUntil {
    /// After this many arrivals.
    Count(u64),
    /// After this much virtual time.
    Duration(SimTime),
}

/// What a rejected load arrival does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Retry {
    /// CAP-2: the documented behaviour: no retry.
    None,
    /// Try again when a running subagent finishes.
    AfterCompletion,
    /// `queue`: wait in a FIFO queue for the next free slot (an M/M/c queue for Poisson
    /// arrivals and exponential runs, Erlang C). As `AfterCompletion`, except that a queued
    /// call that loses its freed slot to a call of the same instant keeps its place at the
    /// head instead of going to the back.
    Queue,
    /// Try again after a sampled delay.
    Backoff(Dist),
}

impl SimSpec {
    /// An empty scenario with default session settings, no agents and no steps.
    pub fn minimal(name: &str) -> SimSpec {
        SimSpec {
            name: name.to_string(),
            description: None,
            session: SessionSpec::default(),
            agents: BTreeMap::new(),
            main: Rc::from(Vec::new()),
            user: UserSpec::default(),
            load: None,
            definitions: Vec::new(),
        }
    }

    /// A loss system (M/M/c/c with c = the cap): `arrivals` Poisson spawns at `rate` per
    /// second of one `worker` type whose run is `work: exp(mean)`, `retry: none`. The
    /// reference workload W1 is `poisson_load("W1", 20.0, 1 s, 1_000_000)`; its blocking
    /// fraction is Erlang B.
    pub fn poisson_load(name: &str, rate: f64, mean: SimTime, arrivals: u64) -> SimSpec {
        let mut spec = SimSpec::minimal(name);
        spec.agents.insert(
            "worker".into(),
            AgentDef {
                name: "worker".into(),
                description: "does one piece of work".into(),
                behavior: Some(Rc::from(vec![Step::Work(Dist::Exp {
                    mean: mean.as_micros() as f64,
                })])),
                ..AgentDef::default()
            },
        );
        spec.load = Some(LoadSpec::single(
            Arrivals::Poisson(rate),
            LoadUntil::Count(arrivals),
            SpawnSpec {
                agent: Some("worker".into()),
                count: 1,
                ..SpawnSpec::default()
            },
            Retry::None,
        ));
        spec
    }
}
