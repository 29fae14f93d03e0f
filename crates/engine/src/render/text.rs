//! The narration: plain-English lines for people watching a run.
//!
//! Each line reads `virtual time  who  what happened: why (RULE)`, the reason in words
//! coming from [`subsim_rules::why`], e.g.
//!
//! ```text
//! 00:00:00.000  main            spawn researcher-21 rejected with "Concurrent subagent limit reached" (20/20 running): the cap of 20 running subagents is full, and a rejected call is not queued (CAP-1)
//! 00:00:14.500  planner         permission prompt #2: asks to use Bash — shown in the main session: a background subagent has no terminal of its own, so its prompt goes to the main session, naming it (PERM-4)
//! 00:00:17.700  planner         Bash `git push origin main` denied: the deny rule `Bash(git push *)` covers it, and deny rules apply to main and every subagent (PERM-14)
//! ```
//!
//! [`TextWriter`] shows every event with [`Detail::Full`]; by default ([`Detail::Brief`]) it
//! hides bookkeeping (panel rows, footer hints, report headers, the Agent call before its
//! start or rejection) and groups same-instant runs of identical lines
//! (`researcher-1 … researcher-19 (19)  started in the background …`). It can follow one
//! agent, colour its output, show chapter headings and close with a summary.
//!
//! The narration is for reading, not parsing: its wording may change between releases.
//! Programs should read the JSON Lines trace ([`super::jsonl`]) instead.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::rc::Rc;

use subsim_escape::terminal;
use subsim_rules::notify::Notice;
use subsim_rules::panel::{ChangeKind, Status as RowStatus};
use subsim_rules::prompt::RoutedTo;
use subsim_rules::RejectReason;

use crate::event::{
    id_string, AgentRef, Event, EventKind, Field, StopSource, ToolRefusal, WaitingFor,
};
use crate::sink::Sink;
use crate::spec::{Answer, DefinitionOutcome};
use crate::time::human_duration;

use super::Buffered;

/// The "who" column starts this wide and grows (up to [`MAX_WHO_WIDTH`]) as longer names
/// appear, so that most runs stay aligned from the first line.
const MIN_WHO_WIDTH: usize = 14;
/// Names longer than this overflow the column rather than push every line far right.
const MAX_WHO_WIDTH: usize = 24;

/// Turns events into narration lines; remembers what later lines need (the cap, names).
///
/// ```
/// use subsim_engine::render::Narrator;
/// use subsim_engine::{AgentRef, Event, EventKind, Outcome, SimTime};
/// let mut narrator = Narrator::new();
/// let mut line = String::new();
/// narrator.line(&Event { t: SimTime::from_secs(30), seq: 9, rule: None,
///     kind: EventKind::AgentFinished { agent: AgentRef { id: 3, name: Some("researcher-3".into()) },
///         outcome: Outcome::Completed, running: 13, detail: None } }, &mut line);
/// assert_eq!(line, "00:00:30.000  researcher-3    finished: completed (13 running)");
/// ```
#[derive(Debug)]
pub struct Narrator {
    /// The session's cap, learned from `session_started`.
    cap: Option<u32>,
    /// The session's depth limit and whether background tasks are disabled.
    depth_limit: u32,
    background_disabled: bool,
    /// Names by agent id, learned from any event that carries one.
    names: Vec<Option<Rc<str>>>,
    /// Permission modes by agent id (main's from `session_started`), for the reasons.
    modes: Vec<Option<&'static str>>,
    who_width: usize,
    /// Leave out what only the full detail shows (agent ids on start lines).
    brief: bool,
}

/// One narrated event, in parts: who, what happened, why, and the rule.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Told {
    /// The "who" column.
    pub who: String,
    /// What happened.
    pub what: String,
    /// Why, in words (from [`subsim_rules::why`]), when the event decided something.
    pub why: Option<String>,
    /// The rule as cited (`FGBG-1 case 3, FORK-3`).
    pub cite: Option<String>,
    /// The agent this line is about, which same-instant lines may differ in only.
    pub subject: Option<String>,
    /// How the line is coloured.
    pub tone: Tone,
}

/// What kind of line, for colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tone {
    /// Anything else.
    #[default]
    Plain,
    /// A refusal: a rejected spawn or message, a denied tool call.
    Refusal,
    /// A permission prompt or its answer.
    Prompt,
}

impl Default for Narrator {
    fn default() -> Narrator {
        Narrator::new()
    }
}

impl Narrator {
    /// A narrator that has seen nothing yet.
    pub fn new() -> Narrator {
        Narrator {
            cap: None,
            depth_limit: 0,
            background_disabled: false,
            names: Vec::new(),
            modes: Vec::new(),
            who_width: MIN_WHO_WIDTH,
            brief: false,
        }
    }

    /// A narrator that leaves out what only `--detail full` shows.
    pub fn brief() -> Narrator {
        Narrator {
            brief: true,
            ..Narrator::new()
        }
    }

    /// Learns from `event` and tells it in parts.
    pub fn tell(&mut self, event: &Event) -> Told {
        self.learn(event);
        let mut what = String::new();
        let who = self.describe(event, &mut what);
        self.widen(&who);
        let mut told = Told {
            subject: self.subject(event, &who),
            tone: tone(event),
            who,
            what,
            ..Told::default()
        };
        if let Some(rule) = event.rule {
            match self.why(event, rule) {
                Some((why, cite)) => {
                    told.why = Some(why);
                    told.cite = Some(cite.to_string());
                }
                None => told.cite = Some(rule.to_string()),
            }
        }
        told
    }

    /// Writes a told line: `time  who  what: why (RULE)`. Each part is one field of one
    /// line for a terminal ([`terminal::line`]): a name's newline or escape sequence is
    /// shown, never obeyed, and cannot forge a line.
    pub fn write(&self, t: crate::time::SimTime, told: &Told, out: &mut String) {
        let _ = write!(out, "{t}  ");
        let who = terminal::line(&told.who);
        out.push_str(&who);
        let pad = self.who_width.saturating_sub(who.chars().count());
        out.extend(std::iter::repeat_n(' ', pad));
        out.push_str("  ");
        out.push_str(&terminal::line(&told.what));
        if let Some(why) = &told.why {
            out.push_str(": ");
            out.push_str(&terminal::line(why));
        }
        if let Some(cite) = &told.cite {
            out.push_str(" (");
            out.push_str(&terminal::line(cite));
            out.push(')');
        }
    }

    /// The reason for `event`'s decision in words, with placeholders filled, and how to
    /// cite the rule.
    fn why(&self, event: &Event, rule: &str) -> Option<(String, &'static str)> {
        let kind = event.kind.name();
        let mut case = String::from("*");
        let mut fill: Vec<(&str, String)> = Vec::new();
        if let Some(cap) = self.cap {
            fill.push(("{cap}", cap.to_string()));
        }
        fill.push(("{depth_limit}", self.depth_limit.to_string()));
        match &event.kind {
            EventKind::Notification { what, .. } => case = what.to_string(),
            EventKind::AgentStarted { mode, .. } => {
                case = mode.as_str().to_string();
                if *mode == subsim_rules::Mode::Foreground && self.background_disabled {
                    case.push_str("_background_disabled");
                }
            }
            EventKind::ToolCalled {
                agent,
                tool,
                allowed,
                reason,
                input,
                permission_rule,
            } => {
                let mode = self.mode(agent.id);
                case = if *allowed {
                    "allowed".to_string()
                } else if *reason == Some(ToolRefusal::Denied) && rule == "PERM-9" {
                    format!("denied_{mode}")
                } else {
                    reason.unwrap_or(ToolRefusal::Denied).to_string()
                };
                fill.push(("{mode}", mode.to_string()));
                fill.push(("{tool}", tool.to_string()));
                fill.push(("{input}", input.as_deref().unwrap_or(tool).to_string()));
                if let Some(pattern) = permission_rule {
                    fill.push(("{pattern}", pattern.to_string()));
                }
            }
            _ => {}
        }
        let found = subsim_rules::why::reason(kind, rule, &case)?;
        let mut text = found.text.to_string();
        for (placeholder, value) in &fill {
            text = text.replace(placeholder, value);
        }
        // A placeholder the trace could not fill: say nothing rather than something wrong.
        if text.contains('{') {
            return None;
        }
        Some((text, found.citation()))
    }

    fn mode(&self, id: u32) -> &'static str {
        self.modes
            .get(id as usize)
            .copied()
            .flatten()
            .unwrap_or("default")
    }

    /// The agent a line is about, for grouping same-instant lines.
    fn subject(&self, event: &Event, who: &str) -> Option<String> {
        match &event.kind {
            EventKind::SpawnRejected { name, .. } => name.as_deref().map(str::to_string),
            EventKind::Notification { from, .. } => Some(self.label(from)),
            EventKind::AgentStarted { .. }
            | EventKind::AgentFinished { .. }
            | EventKind::AgentResumed { .. }
            | EventKind::AgentWaiting { .. }
            | EventKind::ToolCalled { .. }
            | EventKind::PermissionRequested { .. }
            | EventKind::ReportDelivered { .. } => Some(who.to_string()),
            _ => None,
        }
    }

    /// Appends the line for `event` to `out`, without a newline.
    pub fn line(&mut self, event: &Event, out: &mut String) {
        let told = self.tell(event);
        self.write(event.t, &told, out);
    }

    /// The agent's name if it has one (on this event or an earlier one), else its id.
    pub fn label(&self, agent: &AgentRef) -> String {
        if let Some(name) = &agent.name {
            return name.to_string();
        }
        match self.names.get(agent.id as usize) {
            Some(Some(name)) => name.to_string(),
            _ => id_string(agent.id),
        }
    }

    fn learn(&mut self, event: &Event) {
        match &event.kind {
            EventKind::SessionStarted {
                cap,
                depth_limit,
                background_disabled,
                permission_mode,
                ..
            } => {
                self.cap = *cap;
                self.depth_limit = *depth_limit;
                self.background_disabled = *background_disabled;
                self.set_mode(crate::event::MAIN, permission_mode.as_str());
            }
            EventKind::AgentStarted { agent, profile, .. } => {
                self.set_mode(agent.id, profile.permission_mode.as_str());
            }
            _ => {}
        }
        let names = &mut self.names;
        event.visit_fields(&mut |_, value| {
            if let Field::Agent(AgentRef {
                id,
                name: Some(name),
            }) = value
            {
                let index = *id as usize;
                if names.len() <= index {
                    names.resize(index + 1, None);
                }
                names[index] = Some(name.clone());
            }
        });
        // A requested name will soon stand in the who column: make room before it does.
        if let EventKind::SpawnRequested {
            name: Some(name), ..
        } = &event.kind
        {
            self.widen(name);
        }
    }

    fn set_mode(&mut self, id: u32, mode: &'static str) {
        let index = id as usize;
        if self.modes.len() <= index {
            self.modes.resize(index + 1, None);
        }
        self.modes[index] = Some(mode);
    }

    fn widen(&mut self, who: &str) {
        let width = who.chars().count();
        if width > self.who_width {
            self.who_width = width.min(MAX_WHO_WIDTH);
        }
    }

    /// `(14 running)`, or `(21 running, over the cap of 20)`.
    fn running(&self, running: u32) -> String {
        match self.cap {
            Some(cap) if running > cap => format!("({running} running, over the cap of {cap})"),
            _ => format!("({running} running)"),
        }
    }

    /// Writes what happened into `what`; returns who it happened to (or who did it).
    fn describe(&self, event: &Event, what: &mut String) -> String {
        match &event.kind {
            EventKind::SessionStarted {
                version,
                session_kind,
                cap,
                depth_limit,
                fork_mode,
                background_disabled,
                main_agent,
                permission_mode,
            } => {
                let _ = write!(
                    what,
                    "Claude Code {version}, {} session: ",
                    session_kind.as_str()
                );
                if let Some(main_agent) = main_agent {
                    // PANEL-12: the startup header shows @<name>.
                    let _ = write!(what, "main runs as @{main_agent}; ");
                }
                match cap {
                    Some(cap) => {
                        let _ = write!(what, "at most {cap} subagents running at once");
                    }
                    None => what.push_str("no cap on running subagents"),
                }
                let _ = write!(
                    what,
                    ", nesting down to depth {depth_limit}, fork mode {}",
                    if *fork_mode { "on" } else { "off" }
                );
                if *background_disabled {
                    what.push_str(", background tasks disabled");
                }
                if *permission_mode != subsim_rules::PermissionMode::Default {
                    let _ = write!(what, ", permission mode {permission_mode}");
                }
                "session".to_string()
            }
            EventKind::SpawnRequested {
                caller,
                agent_type,
                name,
                background,
                fork,
                ..
            } => {
                if *fork {
                    what.push_str("forks itself");
                    if let Some(name) = name {
                        let _ = write!(what, " as {name}");
                    }
                } else {
                    let _ = write!(
                        what,
                        "asks for {} {agent_type} subagent",
                        article(agent_type)
                    );
                    if let Some(name) = name {
                        let _ = write!(what, " named {name}");
                    }
                }
                match background {
                    Some(true) => what.push_str(" in the background"),
                    Some(false) => what.push_str(" in the foreground"),
                    None => {}
                }
                self.label(caller)
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
                match name {
                    Some(name) => {
                        let _ = write!(what, "spawn {name} rejected");
                    }
                    None => {
                        let _ = write!(
                            what,
                            "spawn of {} {agent_type} subagent rejected",
                            article(agent_type)
                        );
                    }
                }
                let detail = match (reason, self.cap) {
                    (RejectReason::ConcurrentLimit, Some(cap)) => {
                        format!("{running}/{cap} running")
                    }
                    (RejectReason::ConcurrentLimit, None) => format!("{running} running"),
                    _ => reason_words(*reason).to_string(),
                };
                if message.is_empty() {
                    let _ = write!(what, " ({detail})");
                } else if message.contains(&detail) {
                    // The kernel's cap message already says `(20/20 running)`.
                    let _ = write!(what, " with \"{message}\"");
                } else {
                    let _ = write!(what, " with \"{message}\" ({detail})");
                }
                if let (Some(hint), false) = (hint, self.brief) {
                    let _ = write!(what, "; Claude is also told: {hint}");
                }
                self.label(caller)
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
                let (agent_type, model, effort) =
                    (&profile.agent_type, &profile.model, &profile.effort);
                let label = self.label(agent);
                let _ = write!(what, "started in the {} at depth {depth}", mode.as_str());
                if label != agent.id_string() && !self.brief {
                    let _ = write!(what, " as {}", agent.id_string());
                }
                if *fork {
                    let _ = write!(what, " (a fork of {} on {model}", self.label(parent));
                } else {
                    let _ = write!(what, " ({agent_type} on {model}");
                    if let Some(effort) = effort {
                        let _ = write!(what, ", effort {effort}");
                    }
                    let _ = write!(what, ", launched by {}", self.label(parent));
                }
                let running = self.running(*running);
                let _ = write!(what, "; {})", &running[1..running.len() - 1]);
                if !*cap_checked && self.cap.is_some() {
                    what.push_str(", without a cap check");
                }
                label
            }
            EventKind::ToolCalled {
                agent,
                tool,
                allowed,
                reason,
                input,
                ..
            } => {
                if *allowed {
                    let _ = write!(what, "uses {tool}");
                    if let Some(input) = input {
                        let _ = write!(what, " `{input}`");
                    }
                } else if *reason == Some(ToolRefusal::Denied) {
                    let _ = match input {
                        Some(input) => write!(what, "{tool} `{input}` denied"),
                        None => write!(what, "{tool} denied"),
                    };
                } else {
                    let _ = match reason {
                        Some(ToolRefusal::NotInTools) => {
                            write!(what, "tries {tool}, which is not among its tools")
                        }
                        Some(ToolRefusal::Denied) => write!(what, "tries {tool}: denied"),
                        Some(ToolRefusal::AutoDenied) => {
                            write!(what, "tries {tool}: auto-denied")
                        }
                        Some(other) => write!(
                            what,
                            "tries {tool}: refused ({})",
                            other.as_str().replace('_', " ")
                        ),
                        None => write!(what, "tries {tool}: refused"),
                    };
                }
                self.label(agent)
            }
            EventKind::PermissionRequested {
                agent,
                tool,
                routed_to,
                auto_denied,
                prompt,
                ..
            } => {
                let _ = write!(what, "permission prompt #{prompt}: asks to use {tool}");
                if *auto_denied {
                    what.push_str(" — auto-denied silently, nobody is asked");
                } else {
                    let _ = match routed_to {
                        Some(RoutedTo::Main) => write!(what, " — shown in the main session"),
                        Some(RoutedTo::Terminal) => write!(what, " — shown in the terminal"),
                        None => Ok(()),
                    };
                }
                self.label(agent)
            }
            EventKind::PermissionAnswered {
                agent,
                tool,
                answer,
                waited_us,
                prompt,
            } => {
                let asker = self.label(agent);
                let waited = human_duration(*waited_us);
                let _ = match answer {
                    Answer::Approve => write!(what, "approved {asker}'s {tool} after {waited}"),
                    Answer::Deny => write!(what, "denied {asker}'s {tool} (Esc) after {waited}"),
                    Answer::ApproveSession => {
                        write!(
                            what,
                            "approved {asker}'s {tool} for the rest of the session after {waited}"
                        )
                    }
                };
                let _ = write!(what, " (prompt #{prompt})");
                "person".to_string()
            }
            EventKind::PermissionWithdrawn {
                agent,
                tool,
                prompt,
            } => {
                let _ = write!(
                    what,
                    "permission prompt #{prompt} for {tool} withdrawn: the run ended before it was answered"
                );
                self.label(agent)
            }
            EventKind::AgentWaiting {
                agent,
                waiting_for,
                count,
            } => {
                what.push_str("done with its steps; waits for ");
                let _ = match *waiting_for {
                    WaitingFor::Children => write!(
                        what,
                        "{count} {} it launched",
                        plural(*count, "subagent", "subagents")
                    ),
                    WaitingFor::Bash => write!(
                        what,
                        "{count} background shell {}",
                        plural(*count, "command", "commands")
                    ),
                };
                self.label(agent)
            }
            EventKind::AgentBackgrounded { agent, running } => {
                let _ = write!(
                    what,
                    "moved to the background with Ctrl+B {}",
                    self.running(*running)
                );
                self.label(agent)
            }
            EventKind::AgentFinished {
                agent,
                outcome,
                running,
                detail,
            } => {
                let _ = write!(what, "finished: {}", outcome.as_str());
                if let Some(detail) = detail {
                    let _ = write!(what, " — {detail}");
                }
                let _ = write!(what, " {}", self.running(*running));
                self.label(agent)
            }
            EventKind::Notification {
                to,
                from,
                what: kind,
            } => {
                let _ = write!(what, "← {}: ", self.label(from));
                match *kind {
                    Notice::Completion => what.push_str("completion notification"),
                    Notice::Result => what.push_str("result returned"),
                    Notice::Failed => what.push_str("failure notification"),
                    other => {
                        let _ = write!(what, "{} notification", other.as_str().replace('_', " "));
                    }
                }
                self.label(to)
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
                let _ = write!(
                    what,
                    "resumed by {} in the {} on {model}",
                    self.label(by),
                    mode.as_str()
                );
                if let Some(effort) = effort {
                    let _ = write!(what, " with effort {effort}");
                }
                let _ = write!(what, " {}", self.running(*running));
                if !*cap_checked && self.cap.is_some() {
                    what.push_str(", without a cap check");
                }
                self.label(agent)
            }
            EventKind::MessageDelivered { to, from } => {
                let _ = write!(
                    what,
                    "→ {}: message delivered while it runs",
                    self.label(to)
                );
                self.label(from)
            }
            EventKind::MessageRejected {
                to,
                by,
                reason,
                message,
            } => {
                let reason = reason.as_str().replace('_', " ");
                if message.is_empty() {
                    let _ = write!(what, "message to {to} rejected: {reason}");
                } else {
                    let _ = write!(what, "message to {to} rejected: {message} ({reason})");
                }
                self.label(by)
            }
            EventKind::StopRequested { agent, by, source } => {
                let target = self.label(agent);
                match *source {
                    StopSource::User => {
                        let _ = write!(what, "stops {target} from the tasks panel");
                        "person".to_string()
                    }
                    StopSource::TaskStop => {
                        let _ = write!(what, "stops {target} (TaskStop)");
                        self.label(by)
                    }
                }
            }
            EventKind::DefinitionNoted {
                name,
                path,
                scope,
                outcome,
                reason,
            } => {
                let subject = name.as_deref().unwrap_or(path);
                let _ = write!(what, "definition {subject} ({scope}, {path}): {outcome}");
                if let Some(reason) = reason {
                    let _ = write!(what, " — {reason}");
                }
                "definitions".to_string()
            }
            EventKind::PanelChanged {
                change,
                row,
                reason,
                status,
            } => {
                let row_label = if row.id == crate::event::MAIN {
                    "the main session".to_string()
                } else {
                    self.label(row)
                };
                let _ = match *change {
                    ChangeKind::RowAdded => write!(what, "row for {row_label} appears"),
                    ChangeKind::RowRemoved => write!(
                        what,
                        "row for {row_label} leaves ({})",
                        reason
                            .map_or("gone", |reason| reason.as_str())
                            .replace('_', " ")
                    ),
                    ChangeKind::RowStatusChanged => write!(
                        what,
                        "row for {row_label} now reads {}",
                        status.map_or("?", RowStatus::as_str)
                    ),
                    ChangeKind::FooterHintShown => {
                        write!(what, "footer shows \"/tasks to see subagents\"")
                    }
                    ChangeKind::FooterHintCleared => write!(what, "footer hint goes away"),
                };
                "panel".to_string()
            }
            EventKind::HookFired {
                agent,
                hook,
                matcher,
                command,
                source,
            } => {
                let _ = write!(what, "{source} hook {hook}");
                if let Some(matcher) = matcher {
                    let _ = write!(what, " [{matcher}]");
                }
                let _ = write!(
                    what,
                    " fires for {}: `{command}` (recorded, not run)",
                    self.label(agent)
                );
                "hooks".to_string()
            }
            EventKind::HookSkipped { agent, hook, why } => {
                let _ = write!(what, "hook {hook} for {} skipped: {why}", self.label(agent));
                "hooks".to_string()
            }
            EventKind::ReportDelivered {
                agent,
                to,
                text,
                scan,
                review,
            } => {
                // The first line is the subagent-output header (NOTIFY-13); show what follows.
                let mut lines = text.lines().skip(1);
                let first_line = lines.next().unwrap_or("");
                let _ = write!(
                    what,
                    "report to {} under the subagent-output header: \"{first_line}\"",
                    self.label(to)
                );
                if lines.next().is_some() {
                    what.push_str(" …");
                }
                if let Some(scan) = scan {
                    let _ = write!(what, "; scan: {scan}");
                }
                if let Some(review) = review {
                    let _ = write!(what, "; review: {review}");
                }
                self.label(agent)
            }
            EventKind::ContinuationRequested { agent, attempt } => {
                let _ = write!(
                    what,
                    "response cut mid-stream; asked to continue (#{attempt})"
                );
                self.label(agent)
            }
            EventKind::ModelSwitched {
                agent,
                from_model,
                model,
            } => {
                let _ = write!(
                    what,
                    "switches from {from_model} to the fallback model {model}"
                );
                self.label(agent)
            }
            EventKind::ConversationCleared => {
                what.push_str(
                    "cleared the conversation (/clear): names no longer bind to earlier agents",
                );
                "person".to_string()
            }
            EventKind::ActionIgnored { action, why } => {
                let _ = write!(
                    what,
                    "{} had no effect: {why}",
                    action.as_str().replace('_', " ")
                );
                "person".to_string()
            }
            EventKind::LimitReached { limit, value } => {
                let bound = limit.bound_text(*value);
                let _ = write!(
                    what,
                    "safety limit reached: {limit} = {bound}; the run stops here"
                );
                "session".to_string()
            }
        }
    }
}

/// How a line is coloured.
fn tone(event: &Event) -> Tone {
    match &event.kind {
        EventKind::SpawnRejected { .. } | EventKind::MessageRejected { .. } => Tone::Refusal,
        EventKind::ToolCalled { allowed: false, .. } => Tone::Refusal,
        EventKind::PermissionRequested { .. }
        | EventKind::PermissionAnswered { .. }
        | EventKind::PermissionWithdrawn { .. } => Tone::Prompt,
        _ => Tone::Plain,
    }
}

/// `a` or `an`, by the first letter (good enough for agent type names).
fn article(word: &str) -> &'static str {
    match word.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

fn plural(count: u32, one: &'static str, many: &'static str) -> &'static str {
    if count == 1 {
        one
    } else {
        many
    }
}

/// Why a spawn was refused, in words.
fn reason_words(reason: RejectReason) -> &'static str {
    match reason {
        RejectReason::ConcurrentLimit => "concurrency cap",
        RejectReason::DepthLimit => "depth limit",
        RejectReason::Denied => "type denied",
        RejectReason::UnknownType => "unknown agent type",
        RejectReason::TypeRequired => "no agent type given",
        RejectReason::ZeroTools => "no tools left",
        RejectReason::ForkInFork => "a fork cannot fork",
        RejectReason::TeammateBackground => "teammates cannot run in the background",
        RejectReason::ForkUnavailable => "forking unavailable",
        RejectReason::ForkFromSubagent => "only the main conversation can fork",
        RejectReason::NoAgentTool => "the caller has no Agent tool",
        other => other.as_str(),
    }
}

/// How much the narration shows (`--detail`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Detail {
    /// Decisions and what people see; bookkeeping hidden, same-instant runs of identical
    /// lines grouped.
    #[default]
    Brief,
    /// Every event, one line each.
    Full,
}

/// What a narration shows and how ([`TextWriter::with_options`]).
#[derive(Clone, Debug, Default)]
pub struct NarrationOptions {
    /// How much to show.
    pub detail: Detail,
    /// ANSI colours (agents, refusals, prompts, headings).
    pub color: bool,
    /// Narrate only this agent (name or id) and what touches it.
    pub follow: Option<String>,
    /// One-line headings, each shown before the first event at or after its instant.
    pub chapters: Vec<(crate::time::SimTime, String)>,
    /// Commands to try next, shown after the closing summary.
    pub next: Vec<String>,
    /// Close with a summary of what happened.
    pub summary: bool,
}

/// A line waiting for the end of its instant, so that identical lines can be grouped.
struct Held {
    key: String,
    told: Told,
    subjects: Vec<String>,
}

/// What the closing summary counts.
#[derive(Default)]
struct Tally {
    started: u64,
    rejected: std::collections::BTreeMap<(RejectReason, &'static str), u64>,
    peak: u32,
    cap: Option<u32>,
    prompts: u64,
    waited_us: u64,
    resumed: u64,
    notifications: u64,
    denied: u64,
    end: crate::time::SimTime,
}

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const CYAN: &str = "\x1b[36m";

/// Writes the narration into any [`Write`]: with [`Detail::Brief`] (the default), decisions
/// and what people see, same-instant runs of identical lines grouped; with
/// [`Detail::Full`], one line per event.
///
/// Output is buffered internally. The first I/O error is remembered (later events are
/// dropped) and returned by [`TextWriter::finish`].
pub struct TextWriter<W: Write> {
    out: Buffered<W>,
    narrator: Narrator,
    options: NarrationOptions,
    line: String,
    /// The instant whose lines are held, and the lines.
    held_at: crate::time::SimTime,
    held: Vec<Held>,
    chapter: usize,
    tally: Tally,
    /// Events that touched the followed agent (with `follow`).
    followed: u64,
}

impl<W: Write> TextWriter<W> {
    /// A writer into `out`, brief, without colours.
    pub fn new(out: W) -> TextWriter<W> {
        TextWriter::with_options(out, NarrationOptions::default())
    }

    /// A writer into `out` with `options`.
    pub fn with_options(out: W, options: NarrationOptions) -> TextWriter<W> {
        let narrator = match options.detail {
            Detail::Brief => Narrator::brief(),
            Detail::Full => Narrator::new(),
        };
        TextWriter {
            out: Buffered::new(out, 1024),
            narrator,
            options,
            line: String::with_capacity(256),
            held_at: crate::time::SimTime::ZERO,
            held: Vec::new(),
            chapter: 0,
            tally: Tally::default(),
            followed: 0,
        }
    }

    /// Ends the current instant (its held lines are grouped and written), hands everything
    /// buffered to the underlying writer and flushes it; returns the remembered error, if a
    /// write has failed. Call it between instants (`--realtime` does before each wait), not
    /// in the middle of one, or that instant's identical lines are not grouped.
    pub fn flush(&mut self) -> io::Result<()> {
        self.release();
        self.out.flush()
    }

    /// The followed name (`NarrationOptions::follow`) when no event so far touched it: a
    /// misspelt name, or an agent that never ran.
    pub fn follow_missed(&self) -> Option<&str> {
        match &self.options.follow {
            Some(name) if self.followed == 0 => Some(name),
            _ => None,
        }
    }

    /// Writes out what is left (and the closing summary) and returns the underlying
    /// writer, or the first I/O error.
    pub fn finish(mut self) -> io::Result<W> {
        self.release();
        if self.options.summary {
            let text = self.closing();
            self.emit_raw(&text);
        }
        self.out.finish()
    }

    fn emit_raw(&mut self, text: &str) {
        if let Some(buffer) = self.out.buffer() {
            buffer.extend_from_slice(text.as_bytes());
            self.out.written();
        }
    }

    /// Headings of the chapters that begin at or before `t`.
    fn chapters_until(&mut self, t: crate::time::SimTime) {
        while let Some((at, title)) = self.options.chapters.get(self.chapter) {
            if *at > t {
                break;
            }
            let text = if self.options.color {
                format!("{BOLD}── {} ──{RESET}\n", visible(title))
            } else {
                format!("── {} ──\n", visible(title))
            };
            self.chapter += 1;
            self.emit_raw(&text);
        }
    }

    /// Writes the held lines of the instant that is over.
    fn release(&mut self) {
        let held = std::mem::take(&mut self.held);
        for mut group in held {
            if group.subjects.len() > 1 {
                let joined = join_subjects(&group.subjects);
                let last = group.subjects.last().map(String::as_str).unwrap_or("");
                if group.told.who == last {
                    group.told.who = joined;
                } else if let Some(at) = group.told.what.find(last) {
                    group.told.what.replace_range(at..at + last.len(), &joined);
                }
            }
            self.put(self.held_at, &group.told);
        }
    }

    /// Writes one line, coloured if asked.
    fn put(&mut self, t: crate::time::SimTime, told: &Told) {
        self.chapters_until(t);
        self.line.clear();
        if self.options.color {
            // The colours are the only escape sequences: the scenario's own text is made
            // visible first (a name must not drive the terminal).
            let told = &Told {
                who: visible(&told.who),
                what: visible(&told.what),
                why: told.why.as_deref().map(visible),
                cite: told.cite.as_deref().map(visible),
                subject: None,
                tone: told.tone,
            };
            let mut plain = told.clone();
            plain.who = format!("{CYAN}{}{RESET}", told.who);
            let colour = match told.tone {
                Tone::Refusal => Some(RED),
                Tone::Prompt => Some(YELLOW),
                Tone::Plain => None,
            };
            if let Some(colour) = colour {
                plain.what = format!("{colour}{}{RESET}", told.what);
            }
            plain.cite = None;
            // The escape codes take no room on screen: pad by the plain name's width.
            let pad = self
                .narrator
                .who_width
                .saturating_sub(told.who.chars().count());
            let _ = write!(self.line, "{t}  {}", plain.who);
            self.line.extend(std::iter::repeat_n(' ', pad));
            self.line.push_str("  ");
            self.line.push_str(&plain.what);
            if let Some(why) = &plain.why {
                self.line.push_str(": ");
                self.line.push_str(why);
            }
            if let Some(cite) = &told.cite {
                let _ = write!(self.line, " {DIM}({cite}){RESET}");
            }
        } else {
            self.narrator.write(t, told, &mut self.line);
        }
        self.line.push('\n');
        let line = std::mem::take(&mut self.line);
        self.emit_raw(&line);
        self.line = line;
    }

    fn count(&mut self, event: &Event) {
        let tally = &mut self.tally;
        if !matches!(event.kind, EventKind::PanelChanged { .. }) {
            tally.end = event.t;
        }
        match &event.kind {
            EventKind::SessionStarted { cap, .. } => tally.cap = *cap,
            EventKind::AgentStarted { running, .. } => {
                tally.started += 1;
                tally.peak = tally.peak.max(*running);
            }
            EventKind::AgentResumed { running, .. } => {
                tally.resumed += 1;
                tally.peak = tally.peak.max(*running);
            }
            EventKind::SpawnRejected { reason, .. } => {
                *tally
                    .rejected
                    .entry((*reason, event.rule.unwrap_or("")))
                    .or_default() += 1;
            }
            EventKind::PermissionAnswered { waited_us, .. } => {
                tally.prompts += 1;
                tally.waited_us += waited_us;
            }
            EventKind::ToolCalled { allowed: false, .. } => tally.denied += 1,
            EventKind::Notification { .. } => tally.notifications += 1,
            _ => {}
        }
    }

    /// The closing summary and the commands to try next.
    fn closing(&self) -> String {
        let tally = &self.tally;
        let mut text = String::from("── Summary ──\n");
        let took = match tally.end.as_micros() {
            0 => "0s".to_string(),
            micros => human_duration(micros),
        };
        let _ = write!(
            text,
            "In {took} of virtual time: {} {} started",
            tally.started,
            if tally.started == 1 { "run" } else { "runs" },
        );
        if tally.resumed > 0 {
            let _ = write!(text, " and {} resumed", tally.resumed);
        }
        let _ = write!(text, "; at most {} running at once", tally.peak);
        if let Some(cap) = tally.cap {
            let _ = write!(text, " (the cap is {cap})");
        }
        text.push_str(".\n");
        let rejected: u64 = tally.rejected.values().sum();
        if rejected > 0 {
            let parts: Vec<String> = tally
                .rejected
                .iter()
                .map(|((reason, rule), count)| {
                    format!("{} ×{count} ({rule})", reason_words(*reason))
                })
                .collect();
            let _ = writeln!(text, "{rejected} spawns rejected: {}.", parts.join(", "));
        }
        if tally.prompts > 0 {
            let _ = writeln!(
                text,
                "{} permission {} answered, after {} of waiting in all.",
                tally.prompts,
                if tally.prompts == 1 {
                    "prompt"
                } else {
                    "prompts"
                },
                human_duration(tally.waited_us)
            );
        }
        if tally.denied > 0 {
            let _ = writeln!(
                text,
                "{} tool {} refused.",
                tally.denied,
                if tally.denied == 1 { "call" } else { "calls" }
            );
        }
        let _ = writeln!(
            text,
            "{} {} delivered.",
            tally.notifications,
            if tally.notifications == 1 {
                "notification or result"
            } else {
                "notifications and results"
            }
        );
        if !self.options.next.is_empty() {
            text.push_str("Try next:\n");
            for command in &self.options.next {
                let _ = writeln!(text, "  {}", visible(command));
            }
        }
        text
    }

    /// Does `event` touch the followed agent?
    fn followed(&self, event: &Event) -> bool {
        let Some(name) = &self.options.follow else {
            return true;
        };
        if matches!(event.kind, EventKind::SessionStarted { .. }) {
            return true;
        }
        let mut touches = false;
        let names = &self.narrator;
        event.visit_fields(&mut |field, value| {
            let hit = match value {
                Field::Agent(agent) => agent.is(name) || names.label(agent) == *name,
                Field::Str(text) => matches!(field, "name" | "to") && text == name,
                _ => false,
            };
            touches |= hit;
        });
        touches
    }
}

/// `text` as one field of a terminal line ([`terminal::line`]): what coloured output does to
/// the scenario's own strings before it adds its colours.
fn visible(text: &str) -> String {
    terminal::line(text).into_owned()
}

/// Is `event` bookkeeping, shown with `--detail full` only?
fn bookkeeping(event: &Event) -> bool {
    match &event.kind {
        EventKind::PanelChanged { .. } | EventKind::SpawnRequested { .. } => true,
        EventKind::ReportDelivered { scan, review, .. } => scan.is_none() && review.is_none(),
        EventKind::DefinitionNoted { outcome, .. } => *outcome == DefinitionOutcome::Loaded,
        _ => false,
    }
}

/// `a`, `a and b`, or `a … z (n)`.
fn join_subjects(subjects: &[String]) -> String {
    match subjects {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [first, .., last] => format!("{first} … {last} ({})", subjects.len()),
    }
}

/// What a line looks like with its subject and numbers left out: lines with the same
/// shape at the same instant are grouped.
fn shape(told: &Told) -> Option<String> {
    let subject = told.subject.as_deref()?;
    let mut key = String::new();
    for part in [&told.who, &told.what] {
        key.push_str(&part.replacen(subject, "\u{0}", 1));
        key.push('\u{1}');
    }
    if let Some(why) = &told.why {
        key.push_str(why);
    }
    if let Some(cite) = &told.cite {
        key.push_str(cite);
    }
    // Counts (`(20 running)`) and ids differ between otherwise identical lines.
    let mut shape = String::with_capacity(key.len());
    for c in key.chars() {
        if c.is_ascii_digit() {
            if !shape.ends_with('#') {
                shape.push('#');
            }
        } else {
            shape.push(c);
        }
    }
    Some(shape)
}

impl<W: Write> Sink for TextWriter<W> {
    fn event(&mut self, event: &Event) {
        if self.out.buffer().is_none() {
            return;
        }
        self.count(event);
        let followed = self.followed(event);
        let told = self.narrator.tell(event);
        if !followed {
            return;
        }
        if self.options.follow.is_some() && !matches!(event.kind, EventKind::SessionStarted { .. })
        {
            self.followed += 1;
        }
        if self.options.detail == Detail::Full {
            self.put(event.t, &told);
            return;
        }
        if bookkeeping(event) {
            return;
        }
        if event.t != self.held_at {
            self.release();
            self.held_at = event.t;
        }
        let key = shape(&told);
        if let Some(key) = key {
            let found = self.held.iter().position(|held| held.key == key);
            // A line joins an earlier group unless something in between happened to its
            // subject (a notification it received): then the order matters.
            let joins = found.filter(|&at| {
                let subject = told.subject.as_deref();
                !self.held[at + 1..].iter().any(|between| {
                    Some(between.told.who.as_str()) == subject
                        && between.subjects.last().map(String::as_str) != subject
                })
            });
            if let Some(at) = joins {
                let group = &mut self.held[at];
                if let Some(subject) = told.subject.clone() {
                    group.subjects.push(subject);
                }
                group.told = told;
                return;
            }
            let subjects = told.subject.iter().cloned().collect();
            self.held.push(Held {
                key,
                told,
                subjects,
            });
        } else {
            // Lines without a subject are never grouped: a unique key keeps their place.
            let key = format!("\u{2}{}", self.held.len());
            self.held.push(Held {
                key,
                told,
                subjects: Vec::new(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::RunProfile;
    use crate::event::{IgnoredAction, Outcome};
    use crate::time::SimTime;
    use subsim_rules::{Mode, SessionKind};

    fn agent(id: u32, name: &str) -> AgentRef {
        AgentRef {
            id,
            name: Some(name.into()),
        }
    }

    fn anonymous(id: u32) -> AgentRef {
        AgentRef { id, name: None }
    }

    fn session(cap: Option<u32>) -> Event {
        Event {
            t: SimTime::ZERO,
            seq: 0,
            rule: None,
            kind: EventKind::SessionStarted {
                version: "2.1.230".into(),
                session_kind: SessionKind::Interactive,
                cap,
                depth_limit: 3,
                fork_mode: true,
                background_disabled: false,
                main_agent: None,
                permission_mode: subsim_rules::PermissionMode::Default,
            },
        }
    }

    /// Narrates `kind` at 12 s after a session with a cap of 20 and a1 named researcher-3.
    fn check(kind: EventKind, rule: Option<&'static str>, expected: &str) {
        let mut narrator = Narrator::new();
        let mut line = String::new();
        narrator.line(&session(Some(20)), &mut line);
        line.clear();
        narrator.line(
            &Event {
                t: SimTime::ZERO,
                seq: 1,
                rule: None,
                kind: EventKind::Notification {
                    to: agent(3, "researcher-3"),
                    from: AgentRef::MAIN,
                    what: subsim_rules::notify::Notice::Completion,
                },
            },
            &mut line,
        );
        line.clear();
        narrator.line(
            &Event {
                t: SimTime::from_millis(12_000),
                seq: 2,
                rule,
                kind,
            },
            &mut line,
        );
        assert_eq!(line, expected);
    }

    #[test]
    fn session_started() {
        let mut narrator = Narrator::new();
        let mut line = String::new();
        narrator.line(&session(Some(20)), &mut line);
        assert_eq!(
            line,
            "00:00:00.000  session         Claude Code 2.1.230, interactive session: at most 20 subagents \
             running at once, nesting down to depth 3, fork mode on"
        );
        line.clear();
        let mut narrator = Narrator::new();
        narrator.line(&session(None), &mut line);
        assert!(line.contains("no cap on running subagents"), "{line}");
    }

    #[test]
    fn spawn_requested() {
        check(
            EventKind::SpawnRequested {
                caller: AgentRef::MAIN,
                agent_type: "general-purpose".into(),
                name: Some("researcher-21".into()),
                background: Some(true),
                fork: false,
                arrival: None,
                stream: None,
            },
            None,
            "00:00:12.000  main            asks for a general-purpose subagent named researcher-21 in the background",
        );
        check(
            EventKind::SpawnRequested {
                caller: anonymous(3),
                agent_type: "Explore".into(),
                name: None,
                background: None,
                fork: false,
                arrival: None,
                stream: None,
            },
            None,
            "00:00:12.000  researcher-3    asks for an Explore subagent",
        );
        check(
            EventKind::SpawnRequested {
                caller: AgentRef::MAIN,
                agent_type: "fork".into(),
                name: Some("draft".into()),
                background: None,
                fork: true,
                arrival: None,
                stream: None,
            },
            None,
            "00:00:12.000  main            forks itself as draft",
        );
    }

    #[test]
    fn spawn_rejected() {
        check(
            EventKind::SpawnRejected {
                caller: AgentRef::MAIN,
                agent_type: "general-purpose".into(),
                name: Some("researcher-21".into()),
                reason: RejectReason::ConcurrentLimit,
                message: "Concurrent subagent limit reached".into(),
                hint: None,
                running: 20,
            },
            Some("CAP-1"),
            "00:00:12.000  main            spawn researcher-21 rejected with \"Concurrent subagent limit reached\" (20/20 running): the cap of 20 running subagents is full, and a rejected call is not queued (CAP-1)",
        );
        check(
            EventKind::SpawnRejected {
                caller: AgentRef::MAIN,
                agent_type: "general-purpose".into(),
                name: Some("researcher-22".into()),
                reason: RejectReason::ConcurrentLimit,
                message: "Concurrent subagent limit reached (20/20 running); do not retry".into(),
                hint: None,
                running: 20,
            },
            Some("CAP-1"),
            "00:00:12.000  main            spawn researcher-22 rejected with \"Concurrent subagent limit reached (20/20 running); do not retry\": the cap of 20 running subagents is full, and a rejected call is not queued (CAP-1)",
        );
        check(
            EventKind::SpawnRejected {
                caller: agent(3, "researcher-3"),
                agent_type: "general-purpose".into(),
                name: None,
                reason: RejectReason::DepthLimit,
                message: "".into(),
                hint: None,
                running: 4,
            },
            Some("DEPTH-3"),
            "00:00:12.000  researcher-3    spawn of a general-purpose subagent rejected (depth limit): the caller sits at the depth limit (3), where filter 1 takes `Agent` away (DEPTH-3)",
        );
    }

    #[test]
    fn agent_started() {
        check(
            EventKind::AgentStarted {
                agent: agent(3, "researcher-2"),
                parent: AgentRef::MAIN,
                depth: 1,
                mode: Mode::Background,
                fork: false,
                running: 14,
                cap_checked: true,
                profile: Rc::new(RunProfile::new("general-purpose", "sonnet", &[])),
            },
            Some("FGBG-1"),
            "00:00:12.000  researcher-2    started in the background at depth 1 as a3 (general-purpose on sonnet, launched by main; 14 running): fork mode is off and Claude did not need the result first, so it runs in the background (FGBG-1 case 4)",
        );
        check(
            EventKind::AgentStarted {
                agent: anonymous(7),
                parent: AgentRef::MAIN,
                depth: 1,
                mode: Mode::Background,
                fork: true,
                running: 21,
                cap_checked: false,
                profile: Rc::new(RunProfile::new("fork", "opus", &[])),
            },
            Some("CAP-6"),
            "00:00:12.000  a7              started in the background at depth 1 (a fork of main on opus; 21 running, over the cap of 20), without a cap check: a `/subtask` fork takes a slot but is never checked against the cap (CAP-6)",
        );
    }

    #[test]
    fn tool_called() {
        check(
            EventKind::ToolCalled {
                agent: anonymous(3),
                tool: "Bash".into(),
                allowed: true,
                reason: None,
                input: None,
                permission_rule: None,
            },
            None,
            "00:00:12.000  researcher-3    uses Bash",
        );
        check(
            EventKind::ToolCalled {
                agent: anonymous(3),
                tool: "Write".into(),
                allowed: false,
                reason: Some(crate::event::ToolRefusal::NotInTools),
                input: None,
                permission_rule: None,
            },
            Some("TOOLS-6"),
            "00:00:12.000  researcher-3    tries Write, which is not among its tools: filter 1 removes it from every subagent (TOOLS-6)",
        );
    }

    #[test]
    fn permission_requested() {
        check(
            EventKind::PermissionRequested {
                agent: agent(3, "researcher-3"),
                agent_type: Rc::from("worker"),
                tool: "Bash".into(),
                routed_to: Some(subsim_rules::prompt::RoutedTo::Main),
                auto_denied: false,
                prompt: 2,
            },
            Some("PERM-4"),
            "00:00:12.000  researcher-3    permission prompt #2: asks to use Bash — shown in the main session: a background subagent has no terminal of its own, so its prompt goes to the main session, naming it (PERM-4)",
        );
        check(
            EventKind::PermissionRequested {
                agent: agent(3, "researcher-3"),
                agent_type: Rc::from("worker"),
                tool: "Bash".into(),
                routed_to: None,
                auto_denied: true,
                prompt: 1,
            },
            Some("PERM-5"),
            "00:00:12.000  researcher-3    permission prompt #1: asks to use Bash — auto-denied silently, nobody is asked: before v2.1.186 a background subagent could not ask, so the call is denied silently (PERM-5)",
        );
    }

    #[test]
    fn permission_answered() {
        check(
            EventKind::PermissionAnswered {
                agent: anonymous(3),
                tool: "Bash".into(),
                answer: Answer::Approve,
                waited_us: 3_200_000,
                prompt: 2,
            },
            None,
            "00:00:12.000  person          approved researcher-3's Bash after 3.2s (prompt #2)",
        );
        check(
            EventKind::PermissionAnswered {
                agent: anonymous(3),
                tool: "Bash".into(),
                answer: Answer::Deny,
                waited_us: 500_000,
                prompt: 3,
            },
            Some("PERM-4"),
            "00:00:12.000  person          denied researcher-3's Bash (Esc) after 500ms (prompt #3): Esc denies only this call (PERM-4)",
        );
    }

    #[test]
    fn permission_withdrawn() {
        check(
            EventKind::PermissionWithdrawn { agent: anonymous(3), tool: "Bash".into(), prompt: 4 },
            Some("Q-38"),
            "00:00:12.000  researcher-3    permission prompt #4 for Bash withdrawn: the run ended before it was answered (Q-38)",
        );
    }

    #[test]
    fn agent_waiting() {
        check(
            EventKind::AgentWaiting { agent: anonymous(3), waiting_for: WaitingFor::Children, count: 2 },
            Some("NOTIFY-6"),
            "00:00:12.000  researcher-3    done with its steps; waits for 2 subagents it launched: in an interactive session a launcher waits for its background children before it reports (NOTIFY-6)",
        );
        check(
            EventKind::AgentWaiting { agent: anonymous(3), waiting_for: WaitingFor::Bash, count: 1 },
            Some("NOTIFY-5"),
            "00:00:12.000  researcher-3    done with its steps; waits for 1 background shell command: a background shell command it started is still running (NOTIFY-5)",
        );
    }

    #[test]
    fn agent_backgrounded() {
        check(
            EventKind::AgentBackgrounded { agent: anonymous(3), running: 5 },
            Some("FGBG-5"),
            "00:00:12.000  researcher-3    moved to the background with Ctrl+B (5 running): Ctrl+B sends the running foreground task to the background (FGBG-5)",
        );
    }

    #[test]
    fn agent_finished() {
        check(
            EventKind::AgentFinished {
                agent: anonymous(3),
                outcome: Outcome::Completed,
                running: 13,
                detail: None,
            },
            None,
            "00:00:12.000  researcher-3    finished: completed (13 running)",
        );
        check(
            EventKind::AgentFinished {
                agent: anonymous(3),
                outcome: Outcome::Failed,
                running: 0,
                detail: Some("API error: rate_limit".into()),
            },
            Some("ERR-4"),
            "00:00:12.000  researcher-3    finished: failed — API error: rate_limit (0 running): a background run cut by an API error is marked failed (ERR-4)",
        );
    }

    #[test]
    fn notification() {
        check(
            EventKind::Notification {
                to: AgentRef::MAIN,
                from: anonymous(3),
                what: subsim_rules::notify::Notice::Completion,
            },
            Some("NOTIFY-3"),
            "00:00:12.000  main            ← researcher-3: completion notification: a background run reports to its launcher by a notification when it ends (NOTIFY-3)",
        );
        check(
            EventKind::Notification {
                to: anonymous(3),
                from: anonymous(3),
                what: subsim_rules::notify::Notice::BashDone,
            },
            Some("NOTIFY-5"),
            "00:00:12.000  researcher-3    ← researcher-3: bash done notification: a background shell command that outlived the turn notifies the subagent when it ends (NOTIFY-5)",
        );
    }

    #[test]
    fn agent_resumed() {
        check(
            EventKind::AgentResumed {
                agent: anonymous(3),
                by: AgentRef::MAIN,
                cap_checked: false,
                running: 21,
                mode: Mode::Background,
                model: Rc::from("opus"),
                effort: None,
            },
            Some("CAP-7"),
            "00:00:12.000  researcher-3    resumed by main in the background on opus (21 running, over the cap of 20), without a cap check: a resume takes a slot without a cap check, so it can push the count past the cap (CAP-7)",
        );
    }

    #[test]
    fn messages() {
        check(
            EventKind::MessageDelivered { to: anonymous(3), from: AgentRef::MAIN },
            Some("RESUME-17"),
            "00:00:12.000  main            → researcher-3: message delivered while it runs (RESUME-17)",
        );
        check(
            EventKind::MessageRejected {
                to: "ghost".into(),
                by: AgentRef::MAIN,
                reason: crate::event::MessageRejection::UnknownAgent,
                message: "No agent named ghost".into(),
            },
            None,
            "00:00:12.000  main            message to ghost rejected: No agent named ghost (unknown agent)",
        );
    }

    #[test]
    fn stops_and_actions() {
        check(
            EventKind::StopRequested {
                agent: anonymous(3),
                by: AgentRef::MAIN,
                source: StopSource::TaskStop,
            },
            Some("RESUME-9"),
            "00:00:12.000  main            stops researcher-3 (TaskStop) (RESUME-9)",
        );
        check(
            EventKind::StopRequested {
                agent: anonymous(3),
                by: AgentRef::MAIN,
                source: StopSource::User,
            },
            Some("RESUME-10"),
            "00:00:12.000  person          stops researcher-3 from the tasks panel (RESUME-10)",
        );
        check(
            EventKind::ActionIgnored {
                action: IgnoredAction::CtrlB,
                why: "no foreground task is running".into(),
            },
            None,
            "00:00:12.000  person          ctrl b had no effect: no foreground task is running",
        );
    }

    #[test]
    fn limit_reached() {
        check(
            EventKind::LimitReached {
                limit: crate::event::Limit::MaxTime,
                value: 3_600_000_000,
            },
            None,
            "00:00:12.000  session         safety limit reached: max_time = 1h; the run stops here",
        );
    }

    #[test]
    fn who_column_grows_for_long_names() {
        let mut narrator = Narrator::new();
        let mut line = String::new();
        narrator.line(
            &Event {
                t: SimTime::ZERO,
                seq: 0,
                rule: None,
                kind: EventKind::SpawnRequested {
                    caller: AgentRef::MAIN,
                    agent_type: "general-purpose".into(),
                    name: Some("a-rather-long-name".into()),
                    background: None,
                    fork: false,
                    arrival: None,
                    stream: None,
                },
            },
            &mut line,
        );
        // The name (18 characters) widened the column before it was ever the subject.
        assert!(
            line.starts_with("00:00:00.000  main                asks"),
            "{line}"
        );
    }

    fn started(id: u32, name: &str, running: u32) -> EventKind {
        EventKind::AgentStarted {
            agent: agent(id, name),
            parent: AgentRef::MAIN,
            depth: 1,
            mode: Mode::Background,
            fork: false,
            running,
            cap_checked: true,
            profile: Rc::new(RunProfile::new("researcher", "haiku", &[])),
        }
    }

    fn narrate(
        options: NarrationOptions,
        events: &[(u64, Option<&'static str>, EventKind)],
    ) -> String {
        let mut writer = TextWriter::with_options(Vec::new(), options);
        writer.event(&session(Some(20)));
        for (seq, (secs, rule, kind)) in events.iter().enumerate() {
            writer.event(&Event {
                t: SimTime::from_secs(*secs),
                seq: seq as u64 + 1,
                rule: *rule,
                kind: kind.clone(),
            });
        }
        String::from_utf8(writer.finish().unwrap()).unwrap()
    }

    fn panel_row(id: u32) -> EventKind {
        EventKind::PanelChanged {
            change: subsim_rules::panel::ChangeKind::RowAdded,
            row: anonymous(id),
            reason: None,
            status: Some(subsim_rules::panel::Status::Running),
        }
    }

    #[test]
    fn brief_groups_same_instant_lines_and_hides_bookkeeping() {
        let mut events = Vec::new();
        for id in 1..=3 {
            events.push((
                0,
                Some("FORK-3"),
                started(id, &format!("researcher-{id}"), id),
            ));
            events.push((0, Some("PANEL-1"), panel_row(id)));
        }
        events.push((5, Some("FORK-3"), started(4, "researcher-4", 4)));
        let brief = narrate(NarrationOptions::default(), &events);
        let lines: Vec<&str> = brief.lines().collect();
        assert_eq!(lines.len(), 3, "{brief}");
        assert!(
            lines[1].starts_with("00:00:00.000  researcher-1 … researcher-3 (3)  started in the background at depth 1 (researcher on haiku, launched by main; 3 running): fork mode is on"),
            "{brief}"
        );
        assert!(lines[2].contains("researcher-4"), "{brief}");
        let full = narrate(
            NarrationOptions {
                detail: Detail::Full,
                ..NarrationOptions::default()
            },
            &events,
        );
        // Every event: the session, three starts, three panel rows and the late start.
        assert_eq!(full.lines().count(), 8, "{full}");
        assert!(
            full.contains("row for researcher-2 appears (PANEL-1)"),
            "{full}"
        );
    }

    #[test]
    fn follow_keeps_only_what_touches_the_agent() {
        let events = vec![
            (0, Some("FORK-3"), started(1, "scout", 1)),
            (0, Some("FORK-3"), started(2, "bystander", 2)),
            (
                3,
                Some("NOTIFY-3"),
                EventKind::Notification {
                    to: AgentRef::MAIN,
                    from: anonymous(1),
                    what: subsim_rules::notify::Notice::Completion,
                },
            ),
        ];
        let text = narrate(
            NarrationOptions {
                follow: Some("scout".into()),
                ..NarrationOptions::default()
            },
            &events,
        );
        assert!(!text.contains("bystander"), "{text}");
        let mut writer = TextWriter::with_options(
            Vec::new(),
            NarrationOptions {
                follow: Some("nobody".into()),
                ..NarrationOptions::default()
            },
        );
        writer.event(&session(Some(20)));
        assert_eq!(writer.follow_missed(), Some("nobody"));
        assert!(text.contains("← scout: completion notification"), "{text}");
    }

    #[test]
    fn a_deny_rule_is_named_with_the_command() {
        check(
            EventKind::ToolCalled {
                agent: agent(3, "researcher-3"),
                tool: "Bash".into(),
                allowed: false,
                reason: Some(crate::event::ToolRefusal::Denied),
                input: Some("git push origin main".into()),
                permission_rule: Some("Bash(git push *)".into()),
            },
            Some("PERM-14"),
            "00:00:12.000  researcher-3    Bash `git push origin main` denied: the deny rule `Bash(git push *)` covers it, and deny rules apply to main and every subagent (PERM-14)",
        );
    }

    #[test]
    fn colour_only_when_asked() {
        let events = vec![(0, Some("FORK-3"), started(1, "scout", 1))];
        let plain = narrate(NarrationOptions::default(), &events);
        assert!(!plain.contains('\x1b'), "{plain}");
        let coloured = narrate(
            NarrationOptions {
                color: true,
                ..NarrationOptions::default()
            },
            &events,
        );
        assert!(coloured.contains("\x1b[36mscout\x1b[0m"), "{coloured}");
        // The scenario's own escape sequences are shown, not obeyed.
        let hostile = vec![(0, Some("FORK-3"), started(1, "evil\x1b[2J", 1))];
        let coloured = narrate(
            NarrationOptions {
                color: true,
                ..NarrationOptions::default()
            },
            &hostile,
        );
        assert!(coloured.contains("evil\\u{1b}[2J"), "{coloured}");
        assert!(!coloured.contains("evil\x1b"), "{coloured}");
    }

    #[test]
    fn chapters_and_summary() {
        let events = vec![
            (0, Some("FORK-3"), started(1, "scout", 1)),
            (9, Some("FORK-3"), started(2, "second", 2)),
        ];
        let text = narrate(
            NarrationOptions {
                chapters: vec![
                    (SimTime::ZERO, "1. First".into()),
                    (SimTime::from_secs(5), "2. Second".into()),
                ],
                next: vec!["subsim explain CAP-1".into()],
                summary: true,
                ..NarrationOptions::default()
            },
            &events,
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "── 1. First ──", "{text}");
        assert!(
            lines[3] == "── 2. Second ──" && lines[4].contains("second"),
            "{text}"
        );
        assert!(
            text.contains("2 runs started; at most 2 running at once (the cap is 20)."),
            "{text}"
        );
        assert!(
            text.ends_with("Try next:\n  subsim explain CAP-1\n"),
            "{text}"
        );
    }

    #[test]
    fn writer_writes_lines() {
        let mut writer = TextWriter::new(Vec::new());
        writer.event(&session(Some(20)));
        writer.event(&Event {
            t: SimTime::from_secs(1),
            seq: 1,
            rule: None,
            kind: EventKind::LimitReached {
                limit: crate::event::Limit::MaxEvents,
                value: 2,
            },
        });
        let text = String::from_utf8(writer.finish().unwrap()).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.ends_with("max_events = 2; the run stops here\n"));
    }
}
