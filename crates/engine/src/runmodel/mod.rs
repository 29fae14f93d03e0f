//! The run model: every fact the views draw about a run, derived once from the trace.
//!
//! [`Builder`] is a [`crate::Sink`]: it reads the events as they come and keeps, under a
//! row budget, each run's intervals and states ([`Run`], [`Span`], [`State`]), the marks on
//! its row, the running count, the [`Counts`], the decision order with the groups the
//! narration may merge ([`Group`]: same-instant neighbours only, never across another
//! decision) and, once the run is over, the session's end (its last decision) and the
//! chain of decisions and waits that set it ([`Link`]), and every duration drawn from a
//! distribution with its stream ([`Draw`]). Narration, the gantt and Chrome
//! views, the HTML report, `explain --end` and the playground all draw from it, so they
//! agree; `run --format model` prints it as JSON ([`RunModel::to_json`]).
//!
//! It is built only for the views that draw it: `run --format summary/json` and `sweep`
//! count through the kernel's typed entries instead, and never pay for it.

use std::collections::BTreeMap;
use std::rc::Rc;

use subsim_rules::{RejectReason, RuleId};

use crate::event::{AgentId, Event, EventKind};
use crate::spec::DefinitionOutcome;
use crate::time::SimTime;

mod builder;
mod end;
pub mod group;
mod json;

pub use builder::Builder;

/// What a stretch of a run's row shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// A load arrival waiting for its first start: rejected and retried, or queued.
    Queued,
    /// Running its steps.
    Running,
    /// Running after Ctrl+B moved it to the background (FGBG-5).
    Backgrounded,
    /// Blocked on a permission prompt.
    Prompt,
    /// Done with its steps, waiting for its children (NOTIFY-6).
    Children,
    /// Done with its steps, waiting for its background shells (NOTIFY-5).
    Shell,
}

impl State {
    /// Every state, in legend order.
    pub const ALL: [State; 6] = [
        State::Queued,
        State::Running,
        State::Backgrounded,
        State::Prompt,
        State::Children,
        State::Shell,
    ];

    /// The state in words, for legends and sentences.
    pub fn words(self) -> &'static str {
        match self {
            State::Queued => "queued",
            State::Running => "running",
            State::Backgrounded => "backgrounded",
            State::Prompt => "waiting on a prompt",
            State::Children => "waiting for children",
            State::Shell => "waiting for a shell",
        }
    }

    /// The state's key in the model's JSON.
    pub fn key(self) -> &'static str {
        match self {
            State::Queued => "queued",
            State::Running => "running",
            State::Backgrounded => "backgrounded",
            State::Prompt => "prompt",
            State::Children => "children",
            State::Shell => "shell",
        }
    }
}

/// One stretch of one run, `[from, to)` in µs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// Start.
    pub from: u64,
    /// End (the end of the session for a span still open then).
    pub to: u64,
    /// What the run was doing.
    pub state: State,
    /// The rule of the event that opened the stretch, if any.
    pub rule: Option<RuleId>,
}

/// A mark on a row at one instant: a rejection, a prompt, a notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// When, µs.
    pub at: u64,
    /// `rejected`, `prompt` or `notification`.
    pub kind: &'static str,
    /// In words.
    pub text: String,
    /// The rule that decided.
    pub rule: Option<RuleId>,
}

/// One run (main is the first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// The agent's id.
    pub id: AgentId,
    /// Its name, or its id when it has none (`a7`): how every view shows it.
    pub label: String,
    /// Its type (`main` for main).
    pub agent_type: Rc<str>,
    /// The launcher's id (main's is main).
    pub parent: AgentId,
    /// Depth (main = 0).
    pub depth: u32,
    /// `main`, `foreground` or `background` (after Ctrl+B: `background`).
    pub mode: &'static str,
    /// Its stretches in time order.
    pub spans: Vec<Span>,
    /// Its marks in time order.
    pub marks: Vec<Mark>,
    /// When and under which rule it started, and the start's `seq`.
    pub started: (u64, Option<RuleId>, u64),
    /// When it last finished, if it did.
    pub finished: Option<u64>,
    /// The load arrival it serves, if any.
    pub arrival: Option<u64>,
    /// Resumes: when, by whom, under which rule.
    pub resumes: Vec<(u64, AgentId, Option<RuleId>)>,
    /// What it heard: when, from whom, what (`result`, `completion`, …), the rule.
    pub heard: Vec<(u64, AgentId, &'static str, Option<RuleId>)>,
    /// When its background shells started (`bash_background` tool calls).
    pub shells: Vec<u64>,
}

/// Runs started, resumed, finished and rejected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// `agent_started`.
    pub started: u64,
    /// `agent_resumed`.
    pub resumed: u64,
    /// `agent_finished` (a resumed run finishes again).
    pub finished: u64,
    /// `spawn_rejected`.
    pub rejected: u64,
}

/// The run's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// In all.
    pub all: Tally,
    /// Per agent (its type: the definition's name, `general-purpose`, `fork`), in name order.
    pub by_agent: BTreeMap<Rc<str>, Tally>,
    /// Rejections per reason and rule.
    pub rejected_by: BTreeMap<(RejectReason, RuleId), u64>,
    /// The highest running count.
    pub peak_running: u32,
    /// Permission prompts answered, and the time they waited in all (µs).
    pub prompts: u64,
    /// The time answered prompts waited in all, µs.
    pub prompt_wait_us: u64,
    /// Tool calls that did not run.
    pub refused: u64,
    /// Notifications and results delivered.
    pub notifications: u64,
    /// Events in all.
    pub events: u64,
}

/// One decision shown in the order, or a group of same-instant neighbours that the
/// narration may show as one line per position of its pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The instant, µs.
    pub at: u64,
    /// The `seq` of each event, in order.
    pub seqs: Vec<u64>,
    /// The pattern's length: 1 (`a … z started`) or 2 (`a finished`, `main ← a`), repeated
    /// `seqs.len() / period` times.
    pub period: usize,
    /// The kind of each event of the pattern.
    pub kinds: Vec<&'static str>,
    /// The subject of each repetition (the agent each line is about), by name or id.
    pub subjects: Vec<String>,
}

/// One link of the chain that set the session's end, latest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// When the link starts, µs.
    pub from: u64,
    /// When it ends, µs.
    pub to: u64,
    /// Whose link (name or id).
    pub agent: String,
    /// What happened, in words.
    pub text: String,
    /// The rule that decided, if one did.
    pub rule: Option<RuleId>,
}

/// The session's last decision.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct End {
    /// When, µs: the session's end (`EventKind::moves_the_end`).
    pub at: u64,
    /// Its `seq`.
    pub seq: u64,
    /// Its kind.
    pub kind: &'static str,
    /// Its rule.
    pub rule: Option<RuleId>,
    /// The agent it is about (a notification's recipient), if any.
    pub agent: Option<AgentId>,
    /// A notification's sender and notice (`completion`, `bash_done`, …).
    pub from: Option<(AgentId, &'static str)>,
    /// The limit that stopped the run there, if one did.
    pub limit: Option<&'static str>,
}

/// A duration drawn from a distribution (issue #32, "where a number came from"): a run's
/// `work`, `sleep`, tool or shell time (`duration_drawn`), the person's think time before
/// an answer (`permission_answered`'s `think_us`), a load call's retry delay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Draw {
    /// When it was drawn, µs (a think time: when the person took the prompt up).
    pub at: u64,
    /// The `seq` of the event that carries it.
    pub seq: u64,
    /// The run it is for (a think time: the run whose prompt was answered); `None` for a
    /// load retry, whose arrival has no run yet.
    pub agent: Option<AgentId>,
    /// That run's name, else its id (how every view shows it).
    pub label: Option<String>,
    /// For a load retry: its arrival.
    pub arrival: Option<u64>,
    /// `think`, or `duration_drawn`'s `what` (`work`, `sleep`, `tool`, `bash_background`,
    /// `retry`).
    pub what: &'static str,
    /// The duration drawn, µs: what it is for ends at `at + drawn_us`.
    pub drawn_us: u64,
    /// The distribution, spelt as a scenario writes it.
    pub drawn_from: Rc<str>,
    /// The stream: `person`, or `duration_drawn`'s `drawn_on` (`run`, `load`, `retry`).
    pub drawn_on: &'static str,
    /// In words: `work 4.491s, drawn from exp(3s), a3's own stream`.
    pub text: String,
}

impl Draw {
    /// When what was drawn for ends, µs.
    pub fn until(&self) -> u64 {
        self.at.saturating_add(self.drawn_us)
    }
}

/// Everything the views draw about one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunModel {
    /// Claude Code's version the run simulated.
    pub version: String,
    /// The cap, if the session has one.
    pub cap: Option<u32>,
    /// The session's end.
    pub end: End,
    /// The runs kept (main first), in order of first start.
    pub runs: Vec<Run>,
    /// Runs past the row budget: counted, not kept.
    pub more_runs: u64,
    /// Marks past the budget: counted, not kept.
    pub more_marks: u64,
    /// `(at, running)` after every change of the running count (thinned past the budget,
    /// keeping peaks).
    pub running: Vec<(u64, u32)>,
    /// The counts.
    pub counts: Counts,
    /// The decision order, grouped.
    pub order: Vec<Group>,
    /// Decisions past the budget: counted, not kept in the order.
    pub more_decisions: u64,
    /// The chain that set the end, latest first.
    pub chain: Vec<Link>,
    /// The durations drawn from distributions, in trace order (fixed durations are not
    /// drawn, so not here).
    pub draws: Vec<Draw>,
    /// Draws past the budget: counted, not kept.
    pub more_draws: u64,
    /// A safety limit stopped the run: its name.
    pub limit: Option<&'static str>,
}

impl RunModel {
    /// The model of `events` (for tests and small runs), under `max_rows`.
    pub fn of(events: &[Event], max_rows: u64) -> RunModel {
        let mut builder = Builder::new(max_rows);
        for event in events {
            crate::Sink::event(&mut builder, event);
        }
        builder.finish()
    }

    /// The session's end as a time.
    pub fn end_time(&self) -> SimTime {
        SimTime::ZERO.plus(self.end.at)
    }

    /// The run of agent `id`, if it is kept.
    pub fn run(&self, id: AgentId) -> Option<&Run> {
        self.runs.iter().find(|run| run.id == id)
    }

    /// The running count at `at`.
    pub fn running_at(&self, at: u64) -> u32 {
        self.running
            .iter()
            .take_while(|(when, _)| *when <= at)
            .last()
            .map_or(0, |(_, n)| *n)
    }

    /// "It ended at 56s because …": the whole chain in one sentence.
    pub fn because(&self) -> String {
        end::because(self, usize::MAX)
    }

    /// The chain's first links in one sentence, up to the run whose own steps set the end
    /// (the narration's closing summary); `explain --end` gives the rest.
    pub fn because_brief(&self) -> String {
        let upto = self
            .chain
            .iter()
            .position(|link| link.text.contains(" ran its own steps"))
            .map_or(self.chain.len(), |at| at + 1);
        end::because(self, upto)
    }
}

/// Is `event` a decision the views show (the brief narration's lines), rather than
/// bookkeeping shown with `--detail full` only (panel rows, the Agent call before its start
/// or rejection, plain report headers, loaded definitions)?
pub fn decision(event: &Event) -> bool {
    match &event.kind {
        EventKind::PanelChanged { .. } | EventKind::SpawnRequested { .. } => false,
        EventKind::ReportDelivered { scan, review, .. } => scan.is_some() || review.is_some(),
        EventKind::DefinitionNoted { outcome, .. } => *outcome != DefinitionOutcome::Loaded,
        EventKind::SessionStarted { .. }
        | EventKind::SpawnRejected { .. }
        | EventKind::AgentStarted { .. }
        | EventKind::ToolCalled { .. }
        | EventKind::PermissionRequested { .. }
        | EventKind::PermissionAnswered { .. }
        | EventKind::PermissionWithdrawn { .. }
        | EventKind::AgentWaiting { .. }
        | EventKind::AgentBackgrounded { .. }
        | EventKind::AgentFinished { .. }
        | EventKind::Notification { .. }
        | EventKind::AgentResumed { .. }
        | EventKind::MessageDelivered { .. }
        | EventKind::MessageRejected { .. }
        | EventKind::StopRequested { .. }
        | EventKind::ConversationCleared
        | EventKind::HookFired { .. }
        | EventKind::HookSkipped { .. }
        | EventKind::ContinuationRequested { .. }
        | EventKind::ModelSwitched { .. }
        | EventKind::Worktree { .. }
        | EventKind::ActionIgnored { .. }
        | EventKind::LimitReached { .. } => true,
        // Where a number came from, shown beside the decision it leads to.
        EventKind::DurationDrawn { .. } => false,
    }
}

#[cfg(test)]
mod tests;
