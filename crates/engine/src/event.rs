//! The trace: everything that can happen is one closed [`EventKind`].
//!
//! Field names follow the contract in `spec/scenario-format.md`; [`Event::visit_fields`]
//! is the one place that lists them, used by the JSONL writer and by `expect:` filters.

use std::rc::Rc;

use subsim_rules::cap::Hint;
use subsim_rules::handback::ReviewOutcome;
use subsim_rules::id;
use subsim_rules::isolation::{Cwd, WorktreeAction};
use subsim_rules::notify::Notice;
use subsim_rules::panel::{ChangeKind, RemovalReason, Status as RowStatus};
use subsim_rules::prompt::RoutedTo;
pub use subsim_rules::resume::MessageRejection;
use subsim_rules::toolcall::ToolStep;
use subsim_rules::tools::StepKind;
use subsim_rules::{Mode, PermissionMode, RejectReason, RuleId, SessionKind};

use crate::spec::{Answer, DefinitionOutcome, Scope};
use crate::time::SimTime;

/// An agent's stable id: `0` is the main conversation, `n` is `a{n}`.
pub type AgentId = u32;

/// The main conversation's id.
pub const MAIN: AgentId = 0;

/// An agent as events name it: its id and, when it has one, its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentRef {
    /// Stable id.
    pub id: AgentId,
    /// Name given at spawn (or the `/subtask` name).
    pub name: Option<Rc<str>>,
}

impl AgentRef {
    /// The main conversation.
    pub const MAIN: AgentRef = AgentRef {
        id: MAIN,
        name: None,
    };

    /// The id as the trace writes it: `main`, `a1`, `a2`, …
    pub fn id_string(&self) -> String {
        id_string(self.id)
    }

    /// Name if it has one, else the id.
    pub fn label(&self) -> String {
        match &self.name {
            Some(name) => name.to_string(),
            None => self.id_string(),
        }
    }

    /// True if `text` is this agent's id or name.
    pub fn is(&self, text: &str) -> bool {
        self.name.as_deref() == Some(text) || id_matches(self.id, text)
    }
}

/// `main` or `a{n}`.
pub fn id_string(id: AgentId) -> String {
    if id == MAIN {
        "main".to_string()
    } else {
        format!("a{id}")
    }
}

/// Does `text` spell agent `id` (`main`, `a12`)?
pub fn id_matches(id: AgentId, text: &str) -> bool {
    if id == MAIN {
        return text == "main";
    }
    text.strip_prefix('a')
        .and_then(|digits| digits.parse::<AgentId>().ok())
        == Some(id)
}

/// How a run ended (`agent_finished.outcome`): the rules crate's one vocabulary of run
/// endings, which the notification, panel and hook rules read through `Outcome::ending`.
pub use subsim_rules::Outcome;

subsim_rules::vocabulary! {
    /// What a run whose steps are done waits for (`agent_waiting.waiting_for`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum WaitingFor {
        /// Its background children (NOTIFY-6).
        Children => "children",
        /// Its background shell commands (NOTIFY-5).
        Bash => "bash",
    }
}

subsim_rules::vocabulary! {
    /// Who stopped a run (`stop_requested.source`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum StopSource {
        /// Claude, with TaskStop (RESUME-6).
        TaskStop => "task_stop",
        /// The person, `x` in the panel (RESUME-10).
        User => "user",
    }
}

subsim_rules::vocabulary! {
    /// Where a hook was configured (`hook_fired.source`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum HookSource {
        /// The session's settings (HOOK-1).
        Session => "session",
        /// A definition's frontmatter (HOOK-4).
        Frontmatter => "frontmatter",
    }
}

subsim_rules::vocabulary! {
    /// A person's action, or a step, that had no effect (`action_ignored.action`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum IgnoredAction {
        /// `x` on a panel row.
        Dismiss => "dismiss",
        /// Ctrl+B.
        CtrlB => "ctrl_b",
        /// `/subtask`.
        Subtask => "subtask",
        /// Typing to an agent.
        TypeTo => "type_to",
        /// `ask_progress`.
        AskProgress => "ask_progress",
        /// A `fail` step.
        Fail => "fail",
        /// TaskStop (a `stop` step).
        Stop => "stop",
        /// The person's stop (`x` on a running row).
        UserStop => "user_stop",
    }
}

subsim_rules::vocabulary! {
    /// What a drawn duration is for (`duration_drawn.what`): the step whose duration was
    /// drawn, or a load call's retry delay.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum DrawnFor {
        /// A `work` step's time.
        Work => "work",
        /// A `wait: DURATION` step's time (a sleep).
        Wait => "wait",
        /// A `tool` step's `duration`.
        Tool => "tool",
        /// A `bash_background` step's shell running time.
        BashBackground => "bash_background",
        /// A refused load call's wait before it is made again (`retry: backoff(…)`).
        Retry => "retry",
    }
}

impl DrawnFor {
    /// The word the views put before the drawn time: `work 4.491s, drawn from …`.
    pub fn words(self) -> &'static str {
        match self {
            DrawnFor::Work => "work",
            DrawnFor::Wait => "wait",
            DrawnFor::Tool => "tool call",
            DrawnFor::BashBackground => "background shell",
            DrawnFor::Retry => "retry in",
        }
    }
}

subsim_rules::vocabulary! {
    /// Which random stream a duration was drawn from (`duration_drawn.drawn_on`). Every
    /// stream is ChaCha8 seeded from `(seed, owner, purpose)`, so a draw on one never moves
    /// another.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum DrawnOn {
        /// The run's own behaviour stream, seeded by its agent id.
        Run => "run",
        /// The behaviour stream every load run shares.
        Load => "load",
        /// The load generator's retry stream.
        Retry => "retry",
    }
}

/// "work 4.491s, drawn from exp(3s), a3's own stream": where a drawn number came from, in
/// the words every view uses (narration, the report's and the playground's decision
/// panels, through the run model). `what` is the word before the time (`think`, `work`, …);
/// `stream` the stream in words ([`DrawnOn::words`], [`PERSON_STREAM`]).
pub fn drawn_words(what: &str, drawn_us: u64, drawn_from: &str, stream: &str) -> String {
    format!(
        "{what} {}, drawn from {drawn_from}, {stream}",
        crate::time::human_duration(drawn_us)
    )
}

impl DrawnOn {
    /// The stream in words: `a3's own stream` (`label`: the run's name or id), `the load
    /// runs' stream`, `the retry stream`.
    pub fn words(self, label: &str) -> String {
        match self {
            DrawnOn::Run => format!("{label}'s own stream"),
            DrawnOn::Load => "the load runs' shared stream".to_string(),
            DrawnOn::Retry => "the load's retry stream".to_string(),
        }
    }
}

/// The person's stream in words (a `permission_answered`'s `think_us`).
pub const PERSON_STREAM: &str = "the person's stream";

subsim_rules::vocabulary! {
    /// Why a tool call did not run (`tool_called.reason`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum ToolRefusal {
        /// Filter 1 removed the tool (TOOLS-3, DEPTH-3).
        FilterOne => "filter_one",
        /// The definition's `disallowedTools` removed it (TOOLS-11).
        Disallowed => "disallowed",
        /// The definition's `tools` list left it out (TOOLS-11, MAIN-1).
        NotInTools => "not_in_tools",
        /// Filter 2 removed it from a background run (TOOLS-5).
        FilterTwo => "filter_two",
        /// Main's own pool never had it (TOOLS-1, TOOLS-10).
        NotInSession => "not_in_session",
        /// A permission rule or the person denied it (PERM).
        Denied => "denied",
        /// A background run's prompt was denied automatically (PERM-5).
        AutoDenied => "auto_denied",
        /// A `PreToolUse` hook exited with code 2 (HOOK-7).
        HookBlocked => "hook_blocked",
        /// An isolated run's command: its working directory resolved outside its worktree,
        /// where the check covers; it failed with an error (ISO-2, ISO-3, ISO-5).
        OutsideWorktree => "outside_worktree",
        /// An isolated run's Bash or Monitor command redirects git to the main checkout:
        /// blocked (ISO-4, ISO-5).
        GitRedirected => "git_redirected",
        /// An isolated run's Bash or Monitor command whose text cannot show that its git
        /// stays in the worktree (a command name computed at run time): refused (ISO-4,
        /// ISO-5).
        GitUnverifiable => "git_unverifiable",
    }
}

impl ToolRefusal {
    /// The refusal for a tool that step `kind` of the tool resolution removed, `None` for
    /// a step that removes nothing (the base pool, additions, the zero-tools check).
    pub fn removed_by(kind: StepKind) -> Option<ToolRefusal> {
        match kind {
            StepKind::FilterOne => Some(ToolRefusal::FilterOne),
            StepKind::Disallowed => Some(ToolRefusal::Disallowed),
            StepKind::NotInTools => Some(ToolRefusal::NotInTools),
            StepKind::FilterTwo => Some(ToolRefusal::FilterTwo),
            StepKind::BasePool | StepKind::ZeroTools | StepKind::Added => None,
        }
    }
}

subsim_rules::vocabulary! {
    /// A safety limit (`limit_reached.limit`; `session.limits`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Limit {
        /// The number of events.
        MaxEvents => "max_events",
        /// Virtual time.
        MaxTime => "max_time",
        /// The number of agents started.
        MaxAgents => "max_agents",
        /// Steps run in all.
        MaxSteps => "max_steps",
        /// Runs running at once.
        MaxRunning => "max_running",
        /// Agent records and waiting calls held at once.
        MaxHeld => "max_held",
        /// Steps taken at one instant.
        MaxInstantSteps => "max_instant_steps",
        /// Steps taken without an event written.
        MaxSilentSteps => "max_silent_steps",
    }
}

impl Limit {
    /// The bound `value` of this limit as a person writes it in `session.limits`: a
    /// duration for `max_time` (whose trace value is in µs), a number for the others.
    pub fn bound_text(self, value: u64) -> String {
        match self {
            Limit::MaxTime => crate::time::human_duration(value),
            Limit::MaxEvents
            | Limit::MaxAgents
            | Limit::MaxSteps
            | Limit::MaxRunning
            | Limit::MaxHeld
            | Limit::MaxInstantSteps
            | Limit::MaxSilentSteps => value.to_string(),
        }
    }
}

/// Every closed trace vocabulary: `(kind, field, every value's spelling)`, for the tests that
/// hold `docs/scenario-format.md` to the code (each spelling is named in its kind's section).
pub fn vocabularies() -> Vec<(&'static str, &'static str, Vec<&'static str>)> {
    fn spell<T: Copy>(all: &[T], as_str: fn(T) -> &'static str) -> Vec<&'static str> {
        all.iter().map(|value| as_str(*value)).collect()
    }
    vec![
        (
            "session_started",
            "session_kind",
            spell(&SessionKind::ALL, SessionKind::as_str),
        ),
        (
            "session_started",
            "permission_mode",
            spell(&PermissionMode::ALL, PermissionMode::as_str),
        ),
        (
            "spawn_rejected",
            "reason",
            spell(&RejectReason::ALL, RejectReason::as_str),
        ),
        ("spawn_rejected", "hint", spell(&Hint::ALL, Hint::as_str)),
        (
            "agent_started",
            "mode",
            spell(&[Mode::Foreground, Mode::Background], Mode::as_str),
        ),
        (
            "agent_started",
            "permission_mode",
            spell(&PermissionMode::ALL, PermissionMode::as_str),
        ),
        (
            "tool_called",
            "reason",
            spell(&ToolRefusal::ALL, ToolRefusal::as_str),
        ),
        (
            "tool_called",
            "step",
            spell(&ToolStep::ALL, ToolStep::as_str),
        ),
        (
            "permission_requested",
            "routed_to",
            spell(&RoutedTo::ALL, RoutedTo::as_str),
        ),
        (
            "permission_answered",
            "answer",
            spell(&Answer::ALL, Answer::as_str),
        ),
        (
            "agent_waiting",
            "waiting_for",
            spell(&WaitingFor::ALL, WaitingFor::as_str),
        ),
        (
            "agent_finished",
            "outcome",
            spell(&Outcome::ALL, Outcome::as_str),
        ),
        ("notification", "what", spell(&Notice::ALL, Notice::as_str)),
        (
            "agent_resumed",
            "mode",
            spell(&[Mode::Foreground, Mode::Background], Mode::as_str),
        ),
        (
            "message_rejected",
            "reason",
            spell(&MessageRejection::ALL, MessageRejection::as_str),
        ),
        (
            "stop_requested",
            "source",
            spell(&StopSource::ALL, StopSource::as_str),
        ),
        (
            "definition_noted",
            "scope",
            spell(&Scope::NOTED, Scope::as_str),
        ),
        (
            "definition_noted",
            "outcome",
            spell(&DefinitionOutcome::ALL, DefinitionOutcome::as_str),
        ),
        (
            "panel_changed",
            "change",
            spell(&ChangeKind::ALL, ChangeKind::as_str),
        ),
        (
            "panel_changed",
            "reason",
            spell(&RemovalReason::ALL, RemovalReason::as_str),
        ),
        (
            "panel_changed",
            "status",
            spell(&RowStatus::ALL, RowStatus::as_str),
        ),
        (
            "hook_fired",
            "source",
            spell(&HookSource::ALL, HookSource::as_str),
        ),
        (
            "report_delivered",
            "review",
            spell(&ReviewOutcome::ALL, ReviewOutcome::as_str),
        ),
        (
            "action_ignored",
            "action",
            spell(&IgnoredAction::ALL, IgnoredAction::as_str),
        ),
        (
            "duration_drawn",
            "what",
            spell(&DrawnFor::ALL, DrawnFor::as_str),
        ),
        (
            "duration_drawn",
            "drawn_on",
            spell(&DrawnOn::ALL, DrawnOn::as_str),
        ),
        ("limit_reached", "limit", spell(&Limit::ALL, Limit::as_str)),
    ]
}

/// The end of a session whose events are `events` ([`EventKind::moves_the_end`]): the
/// time of its last event that is not the panel's bookkeeping; 0 for none.
pub fn session_end(events: &[Event]) -> SimTime {
    events
        .iter()
        .rev()
        .find(|event| event.kind.moves_the_end())
        .map_or(SimTime::ZERO, |event| event.t)
}

/// A resolved tool list, shared by every run that resolved to the same set.
pub type ToolList = Rc<[Rc<str>]>;

/// One thing that happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Virtual time.
    pub t: SimTime,
    /// 0, 1, 2, … in the order the simulator decided.
    pub seq: u64,
    /// The documented rule that decided, where one did.
    pub rule: Option<RuleId>,
    /// What happened.
    pub kind: EventKind,
}

/// Everything that can happen.
///
/// `repr(u8)` keeps the kind's tag a plain byte: left to the compiler, the tag is stored in
/// a spare value of a one-byte vocabulary field and every `match` on the kind decodes it
/// (measured: docs/PERFORMANCE.md, "Choices that need a benchmark").
#[derive(Clone, Debug, PartialEq)]
#[repr(u8)]
pub enum EventKind {
    /// The session's resolved settings, at time 0.
    SessionStarted {
        /// Version whose rules apply.
        version: Rc<str>,
        /// Session kind.
        session_kind: SessionKind,
        /// The cap, if the version has one.
        cap: Option<u32>,
        /// The depth limit.
        depth_limit: u32,
        /// Fork mode.
        fork_mode: bool,
        /// Background tasks disabled.
        background_disabled: bool,
        /// MAIN-1: the agent main runs as (`--agent`), if any.
        main_agent: Option<Rc<str>>,
        /// The main conversation's permission mode (PERM-9).
        permission_mode: PermissionMode,
        /// ISO-5: the main conversation runs isolated in a worktree (`isolation:
        /// worktree`, written only then).
        main_isolated: bool,
    },
    /// An Agent tool call was made.
    SpawnRequested {
        /// Who called.
        caller: AgentRef,
        /// Requested type (`general-purpose` when left out and resolved, `fork` for forks).
        agent_type: Rc<str>,
        /// Requested name.
        name: Option<Rc<str>>,
        /// The `run_in_background` parameter, if given.
        background: Option<bool>,
        /// The call is a fork.
        fork: bool,
        /// For a call of the load generator: its arrival's number (1, 2, …), the same on
        /// every retry of that arrival.
        arrival: Option<u64>,
        /// For a call of a named load stream (the list form of `load`): the stream's name.
        stream: Option<Rc<str>>,
    },
    /// An Agent tool call was refused.
    SpawnRejected {
        /// Who called.
        caller: AgentRef,
        /// Requested type.
        agent_type: Rc<str>,
        /// Requested name.
        name: Option<Rc<str>>,
        /// Why.
        reason: RejectReason,
        /// What the caller is told: the documented text where there is one.
        message: Rc<str>,
        /// What else the error tells Claude (CAP-2: not to retry), where the seeds say so.
        hint: Option<Hint>,
        /// Running subagents at the time.
        running: u32,
    },
    /// A run started (a new agent, a `/subtask` fork).
    AgentStarted {
        /// The agent.
        agent: AgentRef,
        /// Who launched it.
        parent: AgentRef,
        /// Its depth (main = 0).
        depth: u32,
        /// Foreground or background.
        mode: Mode,
        /// A fork.
        fork: bool,
        /// Running subagents after the start.
        running: u32,
        /// Whether the cap was checked for this slot.
        cap_checked: bool,
        /// Its type, model, tools and the rest of what it runs with.
        profile: Rc<RunProfile>,
    },
    /// A tool call happened (or was refused).
    ToolCalled {
        /// The caller.
        agent: AgentRef,
        /// The tool.
        tool: Rc<str>,
        /// The step that made the call (issue #30: `spawn`, `send`, `stop` and
        /// `bash_background` are tool calls too); written for every step but `tool`.
        step: ToolStep,
        /// Whether it ran.
        allowed: bool,
        /// Why it did not run.
        reason: Option<ToolRefusal>,
        /// The call's input (the Bash command, the file path, the pattern), when the
        /// scenario gives one.
        input: Option<Rc<str>>,
        /// The `permissions.allow`/`permissions.deny` rule that decided (PERM-14), e.g.
        /// `Bash(git push *)`.
        permission_rule: Option<Rc<str>>,
        /// An isolated run's Bash, PowerShell or Monitor call: where its working directory
        /// resolved (ISO-2…5); `None` for a call the isolation checks did not see.
        cwd: Option<Cwd>,
    },
    /// A permission prompt was raised (or auto-denied before v2.1.186).
    PermissionRequested {
        /// The asking agent.
        agent: AgentRef,
        /// The asking agent's type (`main` for the main session): per-type prompt
        /// statistics read it.
        agent_type: Rc<str>,
        /// The tool.
        tool: Rc<str>,
        /// Where the prompt surfaces; `None` when auto-denied.
        routed_to: Option<RoutedTo>,
        /// Silently auto-denied (PERM-5).
        auto_denied: bool,
        /// Prompt number, 1, 2, …
        prompt: u64,
    },
    /// The person answered a prompt.
    PermissionAnswered {
        /// The asking agent.
        agent: AgentRef,
        /// The tool.
        tool: Rc<str>,
        /// The answer.
        answer: Answer,
        /// Time from request to answer, µs.
        waited_us: u64,
        /// Prompt number.
        prompt: u64,
        /// The person's think time for this answer, µs, as drawn from `user.think` on the
        /// person's stream (the wait is longer when other prompts were answered first).
        think_us: Option<u64>,
        /// The distribution `think_us` was drawn from, spelt as a scenario writes it.
        think_from: Option<Rc<str>>,
    },
    /// A pending prompt was withdrawn because its run ended (Q-38).
    PermissionWithdrawn {
        /// The asking agent.
        agent: AgentRef,
        /// The tool.
        tool: Rc<str>,
        /// Prompt number.
        prompt: u64,
    },
    /// A run's steps are done but it waits (for children, NOTIFY-6; for a shell, NOTIFY-5).
    AgentWaiting {
        /// The agent.
        agent: AgentRef,
        /// Children or shells.
        waiting_for: WaitingFor,
        /// How many it waits for.
        count: u32,
    },
    /// Ctrl+B moved a foreground run to the background (FGBG-5).
    AgentBackgrounded {
        /// The agent.
        agent: AgentRef,
        /// Running subagents.
        running: u32,
    },
    /// A run ended.
    AgentFinished {
        /// The agent.
        agent: AgentRef,
        /// How.
        outcome: Outcome,
        /// Running subagents after it ended.
        running: u32,
        /// Extra words, e.g. the API error.
        detail: Option<Rc<str>>,
    },
    /// Something was delivered to an agent (main included).
    Notification {
        /// Recipient.
        to: AgentRef,
        /// Sender.
        from: AgentRef,
        /// What it delivers (`completion`, `result`, `bash_done`, …).
        what: Notice,
    },
    /// SendMessage (or the person) resumed a finished agent.
    AgentResumed {
        /// The agent.
        agent: AgentRef,
        /// Who resumed it.
        by: AgentRef,
        /// Always false where the rules bypass the cap.
        cap_checked: bool,
        /// Running subagents after the resume.
        running: u32,
        /// The resumed run's mode.
        mode: Mode,
        /// The resumed run's model (RESUME-14: the per-invocation model persists from
        /// v2.1.211; before, a resume dropped it).
        model: Rc<str>,
        /// The resumed run's effort level, when it has one: the one it started with
        /// (RESUME-15: a per-invocation `effort` persists across resume).
        effort: Option<Rc<str>>,
    },
    /// A message reached a running agent as direction (RESUME-17, Q-8).
    MessageDelivered {
        /// Recipient.
        to: AgentRef,
        /// Sender.
        from: AgentRef,
    },
    /// A SendMessage was refused.
    MessageRejected {
        /// The `to` value as written.
        to: Rc<str>,
        /// Sender.
        by: AgentRef,
        /// Why.
        reason: MessageRejection,
        /// What the sender is told.
        message: Rc<str>,
    },
    /// TaskStop was called on an agent.
    StopRequested {
        /// The agent.
        agent: AgentRef,
        /// Who stopped it (main for TaskStop and the person).
        by: AgentRef,
        /// TaskStop or the person.
        source: StopSource,
    },
    /// `/clear`: the conversation starts over; name bindings are forgotten (RESUME-13).
    ConversationCleared,
    /// What loading the definition files did with one file or name (DEF), at time 0.
    DefinitionNoted {
        /// The agent name or scoped id, when known.
        name: Option<Rc<str>>,
        /// The file.
        path: Rc<str>,
        /// Its scope.
        scope: Scope,
        /// `loaded`, `skipped`, `shadowed` or `warning`.
        outcome: DefinitionOutcome,
        /// Why (the documented reason for a skip).
        reason: Option<Rc<str>>,
    },
    /// The subagent panel or `/tasks` changed (PANEL).
    PanelChanged {
        /// `row_added`, `row_removed`, `row_status_changed`, `footer_hint_shown`,
        /// `footer_hint_cleared`.
        change: ChangeKind,
        /// The row's agent (`main` for the main-session row and the footer).
        row: AgentRef,
        /// Why a row left: `succeeded`, `expired`, `dismissed`, `no_forks`.
        reason: Option<RemovalReason>,
        /// The row's status word after the change.
        status: Option<RowStatus>,
    },
    /// A hook fired (HOOK); its command is recorded, never run.
    HookFired {
        /// The agent the hook fired for.
        agent: AgentRef,
        /// The hook event (`SubagentStart`, `SubagentStop`, `PreToolUse`, …).
        hook: Rc<str>,
        /// The matcher, if the hook has one.
        matcher: Option<Rc<str>>,
        /// The command (not executed).
        command: Rc<str>,
        /// The session or a definition's frontmatter.
        source: HookSource,
    },
    /// A hook that would have fired was skipped (HOOK-6: untrusted folder; DEF-6: plugin).
    HookSkipped {
        /// The agent.
        agent: AgentRef,
        /// The hook event.
        hook: Rc<str>,
        /// Why (the debug-log text).
        why: Rc<str>,
    },
    /// A finished run's report, as the recipient reads it: after scanning (SCAN) and the
    /// auto-mode review (HANDBACK), under the subagent-output header (NOTIFY-13).
    ReportDelivered {
        /// The reporting agent.
        agent: AgentRef,
        /// The recipient.
        to: AgentRef,
        /// The text delivered.
        text: Rc<str>,
        /// What the scan changed (SCAN-3/4), if anything.
        scan: Option<Rc<str>>,
        /// The auto-mode finish review's outcome (HANDBACK-8), where one ran.
        review: Option<ReviewOutcome>,
    },
    /// ERR-1: a mid-stream cut with text and no tool calls; the subagent is asked to go on.
    ContinuationRequested {
        /// The agent.
        agent: AgentRef,
        /// 1, 2, … up to the budget.
        attempt: u32,
    },
    /// ERR-5: a fallback model chain switched the run's model instead of failing it.
    ModelSwitched {
        /// The agent.
        agent: AgentRef,
        /// The model it was on.
        from_model: Rc<str>,
        /// The model it runs on now.
        model: Rc<str>,
    },
    /// ISO-1: a run's own temporary worktree was made (branched from the repository's
    /// default branch), or, when the run ended, removed (no changes) or kept.
    Worktree {
        /// The run.
        agent: AgentRef,
        /// `created`, `removed` or `kept`.
        action: WorktreeAction,
        /// The changes the run made in it over its life (at `removed` and `kept`).
        changes: Option<u32>,
    },
    /// A person's action had no target or no effect.
    ActionIgnored {
        /// The action.
        action: IgnoredAction,
        /// Why.
        why: Rc<str>,
    },
    /// A duration was drawn from a distribution (issue #32, "where a number came from"):
    /// written only where a draw happened, never for a fixed duration, right after the
    /// draw. Not a decision (no rule): `--detail full` shows it, and the views show it
    /// beside the decision it leads to.
    DurationDrawn {
        /// The run the duration is for; absent for a load retry (its arrival has no run
        /// yet).
        agent: Option<AgentRef>,
        /// For a load retry: the arrival waiting.
        arrival: Option<u64>,
        /// What it is for.
        what: DrawnFor,
        /// The duration drawn, µs.
        drawn_us: u64,
        /// The distribution, spelt as a scenario writes it (`exp(3s)`).
        drawn_from: Rc<str>,
        /// The random stream it was drawn from.
        drawn_on: DrawnOn,
    },
    /// A safety limit ended the run.
    LimitReached {
        /// Which limit.
        limit: Limit,
        /// The bound.
        value: u64,
    },
}

/// What a run runs with: its type, model, tools, permission mode and startup context.
///
/// Runs of the same definition in the same situation share one profile (a load run of a
/// million workers has a handful), so starting a run copies one pointer.
#[derive(Clone, Debug, PartialEq)]
pub struct RunProfile {
    /// Its type (`general-purpose`, a definition's name, `fork`).
    pub agent_type: Rc<str>,
    /// Its model.
    pub model: Rc<str>,
    /// The rule that chose the model (MODEL-2, MODEL-12, FORK-5, …).
    pub model_rule: RuleId,
    /// Its effort level, if one is set (MODEL-14).
    pub effort: Option<Rc<str>>,
    /// Its effective permission mode (PERM-10/11/12).
    pub permission_mode: PermissionMode,
    /// Its tools.
    pub tools: ToolList,
    /// What it starts with (CTX-2): `system_prompt`, `task`, `claude_md`, `git_status`, …
    pub context: ToolList,
    /// Its MCP servers (MCP-1).
    pub mcp_servers: ToolList,
    /// MEM-4 / MEM-5: its listed skills, when not all of them were preloaded.
    pub skills: Option<Rc<SkillsReport>>,
    /// An agent-team teammate rather than a subagent (SPAWN-11).
    pub teammate: bool,
}

/// MEM-4 / MEM-5: how many of a run's listed skills were preloaded, and the names of the
/// others by why (`agent_started`'s `skills_*` fields): kept only when a listed skill was
/// not preloaded, so a run whose skills all load writes none of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillsReport {
    /// How many were preloaded (CTX-5).
    pub preloaded: u32,
    /// MEM-4: past the first 32 distinct names.
    pub beyond_cap: ToolList,
    /// MEM-5: `disable-model-invocation: true` (the bundled `/verify` among them).
    pub model_invocation_disabled: ToolList,
    /// MEM-5: no such skill (a warning in the debug log).
    pub missing: ToolList,
    /// MEM-5: disabled, e.g. by policy (a warning in the debug log).
    pub disabled: ToolList,
}

impl RunProfile {
    /// A profile with the given type, model and tools; model rule MODEL-2, no effort,
    /// `default` permission mode, no context pieces and no MCP servers.
    pub fn new(agent_type: &str, model: &str, tools: &[&str]) -> RunProfile {
        RunProfile {
            agent_type: Rc::from(agent_type),
            model: Rc::from(model),
            model_rule: id::MODEL_2,
            effort: None,
            permission_mode: PermissionMode::Default,
            tools: tools.iter().map(|tool| Rc::from(*tool)).collect(),
            context: Rc::from(Vec::new()),
            mcp_servers: Rc::from(Vec::new()),
            skills: None,
            teammate: false,
        }
    }
}

impl EventKind {
    /// The trace spelling of the kind.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::SessionStarted { .. } => "session_started",
            EventKind::SpawnRequested { .. } => "spawn_requested",
            EventKind::SpawnRejected { .. } => "spawn_rejected",
            EventKind::AgentStarted { .. } => "agent_started",
            EventKind::ToolCalled { .. } => "tool_called",
            EventKind::PermissionRequested { .. } => "permission_requested",
            EventKind::PermissionAnswered { .. } => "permission_answered",
            EventKind::PermissionWithdrawn { .. } => "permission_withdrawn",
            EventKind::AgentWaiting { .. } => "agent_waiting",
            EventKind::AgentBackgrounded { .. } => "agent_backgrounded",
            EventKind::AgentFinished { .. } => "agent_finished",
            EventKind::Notification { .. } => "notification",
            EventKind::AgentResumed { .. } => "agent_resumed",
            EventKind::MessageDelivered { .. } => "message_delivered",
            EventKind::MessageRejected { .. } => "message_rejected",
            EventKind::StopRequested { .. } => "stop_requested",
            EventKind::ConversationCleared => "conversation_cleared",
            EventKind::DefinitionNoted { .. } => "definition_noted",
            EventKind::PanelChanged { .. } => "panel_changed",
            EventKind::HookFired { .. } => "hook_fired",
            EventKind::HookSkipped { .. } => "hook_skipped",
            EventKind::ReportDelivered { .. } => "report_delivered",
            EventKind::ContinuationRequested { .. } => "continuation_requested",
            EventKind::ModelSwitched { .. } => "model_switched",
            EventKind::Worktree { .. } => "worktree",
            EventKind::ActionIgnored { .. } => "action_ignored",
            EventKind::DurationDrawn { .. } => "duration_drawn",
            EventKind::LimitReached { .. } => "limit_reached",
        }
    }

    /// Every kind name, for validation of `expect:` filters: [`KINDS`]' names.
    pub const NAMES: [&'static str; 28] = {
        let mut names = [""; 28];
        let mut index = 0;
        while index < KINDS.len() {
            names[index] = KINDS[index].0;
            index += 1;
        }
        names
    };

    /// Does this event move the end of the session? Every event but a `panel_changed` and
    /// a `duration_drawn`: the session ends at its last decision, and the panel's own
    /// bookkeeping after it (a finished row leaving 30 s later, PANEL-2; the footer hint
    /// clearing) is in the trace but not in the session's length; nor is a draw, which
    /// only says where the time of what follows came from. Every view's end uses this one test: the summary's
    /// makespan and mean running, the narration's closing line, `--realtime` (which plays
    /// what follows the end without waiting for it), the gantt chart and the report
    /// (docs/decisions.md, "The end of a session").
    pub fn moves_the_end(&self) -> bool {
        !matches!(
            self,
            EventKind::PanelChanged { .. } | EventKind::DurationDrawn { .. }
        )
    }

    /// The running count carried by the event, if it carries one.
    pub fn running(&self) -> Option<u32> {
        match self {
            EventKind::SpawnRejected { running, .. }
            | EventKind::AgentStarted { running, .. }
            | EventKind::AgentBackgrounded { running, .. }
            | EventKind::AgentFinished { running, .. }
            | EventKind::AgentResumed { running, .. } => Some(*running),
            EventKind::SessionStarted { .. }
            | EventKind::SpawnRequested { .. }
            | EventKind::ToolCalled { .. }
            | EventKind::PermissionRequested { .. }
            | EventKind::PermissionAnswered { .. }
            | EventKind::PermissionWithdrawn { .. }
            | EventKind::AgentWaiting { .. }
            | EventKind::Notification { .. }
            | EventKind::MessageDelivered { .. }
            | EventKind::MessageRejected { .. }
            | EventKind::StopRequested { .. }
            | EventKind::ConversationCleared
            | EventKind::DefinitionNoted { .. }
            | EventKind::PanelChanged { .. }
            | EventKind::HookFired { .. }
            | EventKind::HookSkipped { .. }
            | EventKind::ReportDelivered { .. }
            | EventKind::ContinuationRequested { .. }
            | EventKind::ModelSwitched { .. }
            | EventKind::Worktree { .. }
            | EventKind::ActionIgnored { .. }
            | EventKind::DurationDrawn { .. }
            | EventKind::LimitReached { .. } => None,
        }
    }
}

/// One field's value, borrowed from an event.
#[derive(Clone, Copy, Debug)]
pub enum Field<'a> {
    /// A string.
    Str(&'a str),
    /// An unsigned integer.
    U64(u64),
    /// A boolean.
    Bool(bool),
    /// A list of strings.
    List(&'a [Rc<str>]),
    /// An agent: written as its id; filters match its id or its name.
    Agent(&'a AgentRef),
}

/// Every field name an event may carry, for validation of `expect:` filters: `t_us`,
/// `seq`, `kind` and `rule`, then every field of [`KINDS`] in the order it first appears.
pub const FIELD_NAMES: [&str; field_count()] = field_names();

/// Are `a` and `b` the same text? (`==` on `str` is not `const`.)
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if a[index] != b[index] {
            return false;
        }
        index += 1;
    }
    true
}

/// Is `field` of the kind at `kind` the first mention of its name in [`KINDS`]?
const fn first_mention(kind: usize, field: usize) -> bool {
    let name = KINDS[kind].1[field];
    let mut common = 0;
    while common < COMMON_FIELDS.len() {
        if same(COMMON_FIELDS[common], name) {
            return false;
        }
        common += 1;
    }
    let mut before = 0;
    while before <= kind {
        let fields = KINDS[before].1;
        let end = if before == kind { field } else { fields.len() };
        let mut index = 0;
        while index < end {
            if same(fields[index], name) {
                return false;
            }
            index += 1;
        }
        before += 1;
    }
    true
}

/// The fields every event carries.
const COMMON_FIELDS: [&str; 4] = ["t_us", "seq", "kind", "rule"];

/// How many names [`FIELD_NAMES`] holds.
const fn field_count() -> usize {
    let mut count = COMMON_FIELDS.len();
    let mut kind = 0;
    while kind < KINDS.len() {
        let mut field = 0;
        while field < KINDS[kind].1.len() {
            if first_mention(kind, field) {
                count += 1;
            }
            field += 1;
        }
        kind += 1;
    }
    count
}

const fn field_names<const N: usize>() -> [&'static str; N] {
    let mut names = [""; N];
    let mut at = 0;
    while at < COMMON_FIELDS.len() {
        names[at] = COMMON_FIELDS[at];
        at += 1;
    }
    let mut kind = 0;
    while kind < KINDS.len() {
        let mut field = 0;
        while field < KINDS[kind].1.len() {
            if first_mention(kind, field) {
                names[at] = KINDS[kind].1[field];
                at += 1;
            }
            field += 1;
        }
        kind += 1;
    }
    names
}

/// Every kind and the fields an event of it may carry besides `t_us`, `seq`, `kind` and
/// `rule`, in trace order: **the one list of the trace's vocabulary** (issue #32).
/// [`EventKind::NAMES`], [`fields_of_kind`] and [`FIELD_NAMES`] are read from it, so a new
/// field is one entry here beside its arm in [`Event::visit_fields`] (this module's tests
/// hold the two to each other, writing a sample of every kind with every optional field),
/// and a new kind one row here beside its arms in [`EventKind::name`] and
/// [`Event::visit_fields`] (exhaustive matches: the compiler points there).
pub const KINDS: [(&str, &[&str]); 28] = [
    (
        "session_started",
        &[
            "version",
            "session_kind",
            "cap",
            "depth_limit",
            "fork_mode",
            "background_disabled",
            "main_agent",
            "permission_mode",
            "isolation",
        ],
    ),
    (
        "spawn_requested",
        &[
            "caller",
            "caller_name",
            "agent_type",
            "name",
            "background",
            "fork",
            "arrival",
            "stream",
        ],
    ),
    (
        "spawn_rejected",
        &[
            "caller",
            "caller_name",
            "agent_type",
            "name",
            "reason",
            "message",
            "hint",
            "running",
        ],
    ),
    (
        "agent_started",
        &[
            "agent",
            "name",
            "agent_type",
            "parent",
            "parent_name",
            "depth",
            "mode",
            "fork",
            "model",
            "tools",
            "running",
            "cap_checked",
            "model_rule",
            "effort",
            "permission_mode",
            "context",
            "mcp_servers",
            "skills_preloaded",
            "skills_beyond_cap",
            "skills_model_invocation_disabled",
            "skills_missing",
            "skills_disabled",
            "teammate",
        ],
    ),
    (
        "tool_called",
        &[
            "agent",
            "name",
            "tool",
            "step",
            "input",
            "allowed",
            "reason",
            "permission_rule",
            "cwd",
        ],
    ),
    (
        "permission_requested",
        &[
            "agent",
            "name",
            "agent_type",
            "tool",
            "routed_to",
            "auto_denied",
            "prompt",
        ],
    ),
    (
        "permission_answered",
        &[
            "agent",
            "name",
            "tool",
            "answer",
            "waited_us",
            "prompt",
            "think_us",
            "think_from",
        ],
    ),
    ("permission_withdrawn", &["agent", "name", "tool", "prompt"]),
    ("agent_waiting", &["agent", "name", "waiting_for", "count"]),
    ("agent_backgrounded", &["agent", "name", "mode", "running"]),
    (
        "agent_finished",
        &["agent", "name", "outcome", "running", "detail"],
    ),
    (
        "notification",
        &["to", "to_name", "from", "from_name", "what"],
    ),
    (
        "agent_resumed",
        &[
            "agent",
            "name",
            "by",
            "by_name",
            "cap_checked",
            "running",
            "mode",
            "model",
            "effort",
        ],
    ),
    ("message_delivered", &["to", "to_name", "from", "from_name"]),
    (
        "message_rejected",
        &["to", "by", "by_name", "reason", "message"],
    ),
    (
        "stop_requested",
        &["agent", "name", "by", "by_name", "source"],
    ),
    ("conversation_cleared", &[]),
    (
        "definition_noted",
        &["name", "path", "scope", "outcome", "reason"],
    ),
    (
        "panel_changed",
        &["change", "row", "row_name", "reason", "status"],
    ),
    (
        "hook_fired",
        &["agent", "name", "hook", "matcher", "command", "source"],
    ),
    ("hook_skipped", &["agent", "name", "hook", "why"]),
    (
        "report_delivered",
        &["agent", "name", "to", "to_name", "text", "scan", "review"],
    ),
    ("continuation_requested", &["agent", "name", "attempt"]),
    ("model_switched", &["agent", "name", "from_model", "model"]),
    (
        "worktree",
        &["agent", "name", "action", "branched_from", "changes"],
    ),
    ("action_ignored", &["action", "why"]),
    (
        "duration_drawn",
        &[
            "agent",
            "name",
            "arrival",
            "what",
            "drawn_us",
            "drawn_from",
            "drawn_on",
        ],
    ),
    ("limit_reached", &["limit", "value"]),
];

/// The fields an event of `kind` may carry besides `t_us`, `seq`, `kind` and `rule`, in
/// trace order ([`KINDS`]); `None` for an unknown kind. `expect:` validation warns about a
/// filter key that no event of its kind has, and a filter value `false` matches an optional
/// flag the event leaves out. A test of `subsim-tests` runs every scenario and checks every
/// field written is listed.
pub fn fields_of_kind(kind: &str) -> Option<&'static [&'static str]> {
    KINDS
        .iter()
        .find(|(name, _)| *name == kind)
        .map(|(_, fields)| *fields)
}

/// Boolean fields written only when true: a filter value `false` also matches an event of
/// that kind that leaves them out. (`spawn_requested.background` is not one: it is written
/// `true` or `false` when the call passed it, and left out when it did not.)
pub const OPTIONAL_FLAGS: [(&str, &str); 2] = [
    ("agent_started", "teammate"),
    ("permission_requested", "auto_denied"),
];

/// The fields that name agents (matched by id or name).
pub const AGENT_FIELDS: [&str; 7] = ["agent", "parent", "caller", "from", "to", "by", "row"];

impl Event {
    /// Calls `visit` with every field, in the order the JSONL trace writes them
    /// (`t_us`, `seq`, `kind` first, `rule` last).
    ///
    /// One table, one arm per event kind (a long function on purpose): it is the single
    /// list of trace field names and their order, exhaustive over `EventKind`, that the
    /// writers and `docs/scenario-format.md`'s tests are held to.
    pub fn visit_fields(&self, visit: &mut dyn FnMut(&'static str, Field<'_>)) {
        visit("t_us", Field::U64(self.t.as_micros()));
        visit("seq", Field::U64(self.seq));
        visit("kind", Field::Str(self.kind.name()));
        fn subject(visit: &mut dyn FnMut(&'static str, Field<'_>), agent: &AgentRef) {
            visit("agent", Field::Agent(agent));
            if let Some(name) = &agent.name {
                visit("name", Field::Str(name));
            }
        }
        // Another agent the event names: its id, then `<field>_name` when it has a name.
        fn other(
            visit: &mut dyn FnMut(&'static str, Field<'_>),
            field: &'static str,
            name_field: &'static str,
            agent: &AgentRef,
        ) {
            visit(field, Field::Agent(agent));
            if let Some(name) = &agent.name {
                visit(name_field, Field::Str(name));
            }
        }
        match &self.kind {
            EventKind::SessionStarted {
                version,
                session_kind,
                cap,
                depth_limit,
                fork_mode,
                background_disabled,
                main_agent,
                permission_mode,
                main_isolated,
            } => {
                visit("version", Field::Str(version));
                visit("session_kind", Field::Str(session_kind.as_str()));
                if let Some(cap) = cap {
                    visit("cap", Field::U64(u64::from(*cap)));
                }
                visit("depth_limit", Field::U64(u64::from(*depth_limit)));
                visit("fork_mode", Field::Bool(*fork_mode));
                visit("background_disabled", Field::Bool(*background_disabled));
                if let Some(main_agent) = main_agent {
                    visit("main_agent", Field::Str(main_agent));
                }
                visit("permission_mode", Field::Str(permission_mode.as_str()));
                if *main_isolated {
                    visit("isolation", Field::Str("worktree"));
                }
            }
            EventKind::SpawnRequested {
                caller,
                agent_type,
                name,
                background,
                fork,
                arrival,
                stream,
            } => {
                other(visit, "caller", "caller_name", caller);
                visit("agent_type", Field::Str(agent_type));
                if let Some(name) = name {
                    visit("name", Field::Str(name));
                }
                if let Some(background) = background {
                    visit("background", Field::Bool(*background));
                }
                visit("fork", Field::Bool(*fork));
                if let Some(arrival) = arrival {
                    visit("arrival", Field::U64(*arrival));
                }
                if let Some(stream) = stream {
                    visit("stream", Field::Str(stream));
                }
            }
            EventKind::SpawnRejected {
                caller,
                agent_type,
                name,
                reason,
                message,
                hint,
                running,
            } => {
                other(visit, "caller", "caller_name", caller);
                visit("agent_type", Field::Str(agent_type));
                if let Some(name) = name {
                    visit("name", Field::Str(name));
                }
                visit("reason", Field::Str(reason.as_str()));
                visit("message", Field::Str(message));
                if let Some(hint) = hint {
                    visit("hint", Field::Str(hint.as_str()));
                }
                visit("running", Field::U64(u64::from(*running)));
            }
            EventKind::AgentStarted {
                agent,
                parent,
                depth,
                mode,
                fork,
                running,
                cap_checked,
                profile,
            } => {
                subject(visit, agent);
                visit("agent_type", Field::Str(&profile.agent_type));
                other(visit, "parent", "parent_name", parent);
                visit("depth", Field::U64(u64::from(*depth)));
                visit("mode", Field::Str(mode.as_str()));
                visit("fork", Field::Bool(*fork));
                visit("model", Field::Str(&profile.model));
                visit("tools", Field::List(&profile.tools));
                visit("running", Field::U64(u64::from(*running)));
                visit("cap_checked", Field::Bool(*cap_checked));
                visit("model_rule", Field::Str(profile.model_rule));
                if let Some(effort) = &profile.effort {
                    visit("effort", Field::Str(effort));
                }
                visit(
                    "permission_mode",
                    Field::Str(profile.permission_mode.as_str()),
                );
                visit("context", Field::List(&profile.context));
                visit("mcp_servers", Field::List(&profile.mcp_servers));
                if let Some(skills) = &profile.skills {
                    visit("skills_preloaded", Field::U64(u64::from(skills.preloaded)));
                    for (name, list) in [
                        ("skills_beyond_cap", &skills.beyond_cap),
                        (
                            "skills_model_invocation_disabled",
                            &skills.model_invocation_disabled,
                        ),
                        ("skills_missing", &skills.missing),
                        ("skills_disabled", &skills.disabled),
                    ] {
                        if !list.is_empty() {
                            visit(name, Field::List(list));
                        }
                    }
                }
                if profile.teammate {
                    visit("teammate", Field::Bool(true));
                }
            }
            EventKind::ToolCalled {
                agent,
                tool,
                step,
                allowed,
                reason,
                input,
                permission_rule,
                cwd,
            } => {
                subject(visit, agent);
                visit("tool", Field::Str(tool));
                if *step != ToolStep::Tool {
                    visit("step", Field::Str(step.as_str()));
                }
                if let Some(input) = input {
                    visit("input", Field::Str(input));
                }
                visit("allowed", Field::Bool(*allowed));
                if let Some(reason) = reason {
                    visit("reason", Field::Str(reason.as_str()));
                }
                if let Some(rule) = permission_rule {
                    visit("permission_rule", Field::Str(rule));
                }
                if let Some(cwd) = cwd {
                    visit("cwd", Field::Str(cwd.as_str()));
                }
            }
            EventKind::PermissionRequested {
                agent,
                agent_type,
                tool,
                routed_to,
                auto_denied,
                prompt,
            } => {
                subject(visit, agent);
                visit("agent_type", Field::Str(agent_type));
                visit("tool", Field::Str(tool));
                if let Some(routed_to) = routed_to {
                    visit("routed_to", Field::Str(routed_to.as_str()));
                }
                if *auto_denied {
                    visit("auto_denied", Field::Bool(true));
                }
                visit("prompt", Field::U64(*prompt));
            }
            EventKind::PermissionAnswered {
                agent,
                tool,
                answer,
                waited_us,
                prompt,
                think_us,
                think_from,
            } => {
                subject(visit, agent);
                visit("tool", Field::Str(tool));
                visit("answer", Field::Str(answer.as_str()));
                visit("waited_us", Field::U64(*waited_us));
                visit("prompt", Field::U64(*prompt));
                if let Some(think_us) = think_us {
                    visit("think_us", Field::U64(*think_us));
                }
                if let Some(think_from) = think_from {
                    visit("think_from", Field::Str(think_from));
                }
            }
            EventKind::PermissionWithdrawn {
                agent,
                tool,
                prompt,
            } => {
                subject(visit, agent);
                visit("tool", Field::Str(tool));
                visit("prompt", Field::U64(*prompt));
            }
            EventKind::AgentWaiting {
                agent,
                waiting_for,
                count,
            } => {
                subject(visit, agent);
                visit("waiting_for", Field::Str(waiting_for.as_str()));
                visit("count", Field::U64(u64::from(*count)));
            }
            EventKind::AgentBackgrounded { agent, running } => {
                subject(visit, agent);
                visit("mode", Field::Str(Mode::Background.as_str()));
                visit("running", Field::U64(u64::from(*running)));
            }
            EventKind::AgentFinished {
                agent,
                outcome,
                running,
                detail,
            } => {
                subject(visit, agent);
                visit("outcome", Field::Str(outcome.as_str()));
                visit("running", Field::U64(u64::from(*running)));
                if let Some(detail) = detail {
                    visit("detail", Field::Str(detail));
                }
            }
            EventKind::Notification { to, from, what } => {
                other(visit, "to", "to_name", to);
                other(visit, "from", "from_name", from);
                visit("what", Field::Str(what.as_str()));
            }
            EventKind::AgentResumed {
                agent,
                by,
                cap_checked,
                running,
                mode,
                model,
                effort,
            } => {
                subject(visit, agent);
                other(visit, "by", "by_name", by);
                visit("cap_checked", Field::Bool(*cap_checked));
                visit("running", Field::U64(u64::from(*running)));
                visit("mode", Field::Str(mode.as_str()));
                visit("model", Field::Str(model));
                if let Some(effort) = effort {
                    visit("effort", Field::Str(effort));
                }
            }
            EventKind::MessageDelivered { to, from } => {
                other(visit, "to", "to_name", to);
                other(visit, "from", "from_name", from);
            }
            EventKind::MessageRejected {
                to,
                by,
                reason,
                message,
            } => {
                visit("to", Field::Str(to));
                other(visit, "by", "by_name", by);
                visit("reason", Field::Str(reason.as_str()));
                visit("message", Field::Str(message));
            }
            EventKind::StopRequested { agent, by, source } => {
                subject(visit, agent);
                other(visit, "by", "by_name", by);
                visit("source", Field::Str(source.as_str()));
            }
            EventKind::ConversationCleared => {}
            EventKind::DefinitionNoted {
                name,
                path,
                scope,
                outcome,
                reason,
            } => {
                if let Some(name) = name {
                    visit("name", Field::Str(name));
                }
                visit("path", Field::Str(path));
                visit("scope", Field::Str(scope.as_str()));
                visit("outcome", Field::Str(outcome.as_str()));
                if let Some(reason) = reason {
                    visit("reason", Field::Str(reason));
                }
            }
            EventKind::PanelChanged {
                change,
                row,
                reason,
                status,
            } => {
                visit("change", Field::Str(change.as_str()));
                other(visit, "row", "row_name", row);
                if let Some(reason) = reason {
                    visit("reason", Field::Str(reason.as_str()));
                }
                if let Some(status) = status {
                    visit("status", Field::Str(status.as_str()));
                }
            }
            EventKind::HookFired {
                agent,
                hook,
                matcher,
                command,
                source,
            } => {
                subject(visit, agent);
                visit("hook", Field::Str(hook));
                if let Some(matcher) = matcher {
                    visit("matcher", Field::Str(matcher));
                }
                visit("command", Field::Str(command));
                visit("source", Field::Str(source.as_str()));
            }
            EventKind::HookSkipped { agent, hook, why } => {
                subject(visit, agent);
                visit("hook", Field::Str(hook));
                visit("why", Field::Str(why));
            }
            EventKind::ReportDelivered {
                agent,
                to,
                text,
                scan,
                review,
            } => {
                subject(visit, agent);
                other(visit, "to", "to_name", to);
                visit("text", Field::Str(text));
                if let Some(scan) = scan {
                    visit("scan", Field::Str(scan));
                }
                if let Some(review) = review {
                    visit("review", Field::Str(review.as_str()));
                }
            }
            EventKind::ContinuationRequested { agent, attempt } => {
                subject(visit, agent);
                visit("attempt", Field::U64(u64::from(*attempt)));
            }
            EventKind::ModelSwitched {
                agent,
                from_model,
                model,
            } => {
                subject(visit, agent);
                visit("from_model", Field::Str(from_model));
                visit("model", Field::Str(model));
            }
            EventKind::Worktree {
                agent,
                action,
                changes,
            } => {
                subject(visit, agent);
                visit("action", Field::Str(action.as_str()));
                if *action == WorktreeAction::Created {
                    visit(
                        "branched_from",
                        Field::Str(subsim_rules::isolation::BRANCHED_FROM),
                    );
                }
                if let Some(changes) = changes {
                    visit("changes", Field::U64(u64::from(*changes)));
                }
            }
            EventKind::ActionIgnored { action, why } => {
                visit("action", Field::Str(action.as_str()));
                visit("why", Field::Str(why));
            }
            EventKind::DurationDrawn {
                agent,
                arrival,
                what,
                drawn_us,
                drawn_from,
                drawn_on,
            } => {
                if let Some(agent) = agent {
                    subject(visit, agent);
                }
                if let Some(arrival) = arrival {
                    visit("arrival", Field::U64(*arrival));
                }
                visit("what", Field::Str(what.as_str()));
                visit("drawn_us", Field::U64(*drawn_us));
                visit("drawn_from", Field::Str(drawn_from));
                visit("drawn_on", Field::Str(drawn_on.as_str()));
            }
            EventKind::LimitReached { limit, value } => {
                visit("limit", Field::Str(limit.as_str()));
                visit("value", Field::U64(*value));
            }
        }
        if let Some(rule) = self.rule {
            visit("rule", Field::Str(rule));
        }
    }
}

#[cfg(test)]
mod limit_tests {
    use super::Limit;

    /// Regression: the summary's "stopped by" row printed `max_time` in µs
    /// (`2592000000000`) where `session.limits` and the narration write a duration.
    #[test]
    fn a_bound_is_written_as_session_limits_writes_it() {
        assert_eq!(Limit::MaxTime.bound_text(20_000_000), "20s");
        assert_eq!(Limit::MaxTime.bound_text(3_600_000_000), "1h");
        assert_eq!(Limit::MaxEvents.bound_text(20_000_000), "20000000");
        assert_eq!(Limit::MaxHeld.bound_text(1_500_000), "1500000");
    }
}

#[cfg(test)]
mod table_tests {
    //! The event-name and field-name tables ([`EventKind::NAMES`], [`FIELD_NAMES`],
    //! [`fields_of_kind`]) agree with what [`Event::visit_fields`] writes.

    use super::*;

    fn text(value: &str) -> Rc<str> {
        Rc::from(value)
    }

    fn named(id: AgentId) -> AgentRef {
        AgentRef {
            id,
            name: Some(text("n")),
        }
    }

    /// One event of every kind, twice: every optional field present (`full`), then every
    /// optional field absent.
    fn samples(full: bool) -> Vec<EventKind> {
        let some = |value: &str| full.then(|| text(value));
        let agent = if full { named(1) } else { AgentRef::MAIN };
        let list = |value: &str| -> ToolList { Rc::from(vec![text(value)]) };
        let profile = Rc::new(RunProfile {
            effort: some("high"),
            skills: full.then(|| {
                Rc::new(SkillsReport {
                    preloaded: 32,
                    beyond_cap: list("s33"),
                    model_invocation_disabled: list("verify"),
                    missing: list("ghost"),
                    disabled: list("legacy"),
                })
            }),
            teammate: full,
            ..RunProfile::new("general-purpose", "m", &["Read"])
        });
        vec![
            EventKind::SessionStarted {
                version: text("2.1.292"),
                session_kind: SessionKind::Interactive,
                cap: full.then_some(20),
                depth_limit: 3,
                fork_mode: false,
                background_disabled: false,
                main_agent: some("lead"),
                permission_mode: PermissionMode::Default,
                main_isolated: full,
            },
            EventKind::SpawnRequested {
                caller: agent.clone(),
                agent_type: text("general-purpose"),
                name: some("w"),
                background: full.then_some(false),
                fork: false,
                arrival: full.then_some(1),
                stream: some("s"),
            },
            EventKind::SpawnRejected {
                caller: agent.clone(),
                agent_type: text("general-purpose"),
                name: some("w"),
                reason: RejectReason::ConcurrentLimit,
                message: text("m"),
                hint: full.then_some(Hint::NoRetry),
                running: 1,
            },
            EventKind::AgentStarted {
                agent: agent.clone(),
                parent: agent.clone(),
                depth: 1,
                mode: Mode::Foreground,
                fork: false,
                running: 1,
                cap_checked: true,
                profile,
            },
            EventKind::ToolCalled {
                agent: agent.clone(),
                tool: text("Bash"),
                step: if full {
                    ToolStep::BashBackground
                } else {
                    ToolStep::Tool
                },
                allowed: !full,
                reason: full.then_some(ToolRefusal::Denied),
                input: some("ls"),
                permission_rule: some("Bash(ls)"),
                cwd: full.then_some(Cwd::MainCheckout),
            },
            EventKind::PermissionRequested {
                agent: agent.clone(),
                agent_type: text("general-purpose"),
                tool: text("Bash"),
                routed_to: full.then_some(RoutedTo::Main),
                auto_denied: full,
                prompt: 1,
            },
            EventKind::PermissionAnswered {
                agent: agent.clone(),
                tool: text("Bash"),
                answer: Answer::Approve,
                waited_us: 1,
                prompt: 1,
                think_us: full.then_some(1),
                think_from: full.then(|| text("exp(3s)")),
            },
            EventKind::PermissionWithdrawn {
                agent: agent.clone(),
                tool: text("Bash"),
                prompt: 1,
            },
            EventKind::AgentWaiting {
                agent: agent.clone(),
                waiting_for: WaitingFor::Children,
                count: 1,
            },
            EventKind::AgentBackgrounded {
                agent: agent.clone(),
                running: 1,
            },
            EventKind::AgentFinished {
                agent: agent.clone(),
                outcome: Outcome::Completed,
                running: 0,
                detail: some("d"),
            },
            EventKind::Notification {
                to: agent.clone(),
                from: agent.clone(),
                what: Notice::Completion,
            },
            EventKind::AgentResumed {
                agent: agent.clone(),
                by: agent.clone(),
                cap_checked: false,
                running: 1,
                mode: Mode::Background,
                model: text("m"),
                effort: some("high"),
            },
            EventKind::MessageDelivered {
                to: agent.clone(),
                from: agent.clone(),
            },
            EventKind::MessageRejected {
                to: text("x"),
                by: agent.clone(),
                reason: MessageRejection::UnknownAgent,
                message: text("m"),
            },
            EventKind::StopRequested {
                agent: agent.clone(),
                by: agent.clone(),
                source: StopSource::User,
            },
            EventKind::ConversationCleared,
            EventKind::DefinitionNoted {
                name: some("w"),
                path: text("p"),
                scope: Scope::Project,
                outcome: DefinitionOutcome::Loaded,
                reason: some("r"),
            },
            EventKind::PanelChanged {
                change: ChangeKind::RowRemoved,
                row: agent.clone(),
                reason: full.then_some(RemovalReason::Expired),
                status: full.then_some(RowStatus::Done),
            },
            EventKind::HookFired {
                agent: agent.clone(),
                hook: text("SubagentStart"),
                matcher: some("w"),
                command: text("c"),
                source: HookSource::Session,
            },
            EventKind::HookSkipped {
                agent: agent.clone(),
                hook: text("SubagentStart"),
                why: text("w"),
            },
            EventKind::ReportDelivered {
                agent: agent.clone(),
                to: agent.clone(),
                text: text("t"),
                scan: some("s"),
                review: full.then_some(ReviewOutcome::Clean),
            },
            EventKind::ContinuationRequested {
                agent: agent.clone(),
                attempt: 1,
            },
            EventKind::ModelSwitched {
                agent: agent.clone(),
                from_model: text("a"),
                model: text("b"),
            },
            EventKind::Worktree {
                agent,
                action: if full {
                    WorktreeAction::Created
                } else {
                    WorktreeAction::Kept
                },
                changes: full.then_some(1),
            },
            EventKind::ActionIgnored {
                action: IgnoredAction::Dismiss,
                why: text("w"),
            },
            EventKind::DurationDrawn {
                agent: full.then(|| named(1)),
                arrival: full.then_some(1),
                what: DrawnFor::Work,
                drawn_us: 1,
                drawn_from: text("exp(3s)"),
                drawn_on: DrawnOn::Run,
            },
            EventKind::LimitReached {
                limit: Limit::MaxEvents,
                value: 1,
            },
        ]
    }

    /// The fields `visit_fields` writes for `kind`, without the four every event has.
    fn written(kind: EventKind) -> (&'static str, Vec<&'static str>) {
        let event = Event {
            t: SimTime::ZERO,
            seq: 0,
            rule: Some("CAP-1"),
            kind,
        };
        let mut fields = Vec::new();
        event.visit_fields(&mut |field, _| fields.push(field));
        assert_eq!(fields[..3], ["t_us", "seq", "kind"]);
        assert_eq!(fields.last(), Some(&"rule"));
        fields.truncate(fields.len() - 1);
        (event.kind.name(), fields.split_off(3))
    }

    #[test]
    fn every_kind_is_named_in_names_once() {
        let names: Vec<&str> = samples(true)
            .into_iter()
            .map(|kind| written(kind).0)
            .collect();
        let mut listed = EventKind::NAMES.to_vec();
        let mut seen = names.clone();
        listed.sort_unstable();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(
            seen.len(),
            names.len(),
            "a kind name is used twice: {names:?}"
        );
        assert_eq!(
            seen, listed,
            "EventKind::NAMES and EventKind::name disagree"
        );
    }

    #[test]
    fn fields_of_kind_lists_exactly_the_fields_written() {
        for kind in samples(true) {
            let (name, fields) = written(kind);
            let listed = fields_of_kind(name).unwrap_or_else(|| panic!("{name} has no fields"));
            assert_eq!(
                fields, listed,
                "{name}: written (every optional field present) vs fields_of_kind"
            );
        }
        for kind in samples(false) {
            let (name, fields) = written(kind);
            let listed = fields_of_kind(name).expect("listed above");
            let mut rest = listed.iter();
            for field in &fields {
                assert!(
                    rest.any(|known| known == field),
                    "{name}: `{field}` written out of the order of fields_of_kind {listed:?}"
                );
            }
        }
        assert_eq!(fields_of_kind("no_such_kind"), None);
    }

    #[test]
    fn every_vocabulary_is_a_field_of_its_kind_with_distinct_spellings() {
        for (kind, field, words) in vocabularies() {
            let fields = fields_of_kind(kind).unwrap_or_else(|| panic!("{kind} is no kind"));
            assert!(fields.contains(&field), "{kind} has no field `{field}`");
            assert!(!words.is_empty(), "{kind}.{field} has no values");
            for (index, word) in words.iter().enumerate() {
                assert!(!word.is_empty(), "{kind}.{field}: an empty spelling");
                assert!(
                    !words[..index].contains(word),
                    "{kind}.{field}: `{word}` twice"
                );
            }
        }
    }

    #[test]
    fn field_names_is_every_field_of_every_kind() {
        let mut every: Vec<&str> = vec!["t_us", "seq", "kind", "rule"];
        for name in EventKind::NAMES {
            every.extend(fields_of_kind(name).expect("a listed kind"));
        }
        for field in &every {
            assert!(
                FIELD_NAMES.contains(field),
                "`{field}` is missing from FIELD_NAMES"
            );
        }
        for field in FIELD_NAMES {
            assert!(
                every.contains(&field),
                "FIELD_NAMES has `{field}`, which no kind writes"
            );
        }
        for (kind, flag) in OPTIONAL_FLAGS {
            assert!(fields_of_kind(kind).is_some_and(|fields| fields.contains(&flag)));
        }
    }
}
