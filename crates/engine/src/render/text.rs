//! The narration: one plain-English line per event, for people watching a run.
//!
//! Each line reads `virtual time  who  what happened [RULE]`, e.g.
//!
//! ```text
//! 00:00:12.000  main            spawn researcher-21 rejected: Concurrent subagent limit reached (20/20 running) [CAP-1]
//! 00:00:14.500  researcher-3    permission prompt #2: asks to use Bash — shown in the main session [PERM-4]
//! 00:00:17.700  person          approved researcher-3's Bash after 3.2s (prompt #2)
//! ```
//!
//! The narration is for reading, not parsing: its wording may change between releases.
//! Programs should read the JSON Lines trace ([`super::jsonl`]) instead.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::rc::Rc;

use subsim_rules::RejectReason;

use crate::event::{id_string, AgentRef, Event, EventKind, Field};
use crate::sink::Sink;
use crate::spec::Answer;
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
    /// Names by agent id, learned from any event that carries one.
    names: Vec<Option<Rc<str>>>,
    who_width: usize,
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
            names: Vec::new(),
            who_width: MIN_WHO_WIDTH,
        }
    }

    /// Appends the line for `event` to `out`, without a newline.
    pub fn line(&mut self, event: &Event, out: &mut String) {
        self.learn(event);
        let mut what = String::new();
        let who = self.describe(event, &mut what);
        self.widen(&who);
        let _ = write!(out, "{}  ", event.t);
        out.push_str(&who);
        let pad = self.who_width.saturating_sub(who.chars().count());
        out.extend(std::iter::repeat_n(' ', pad));
        out.push_str("  ");
        out.push_str(&what);
        if let Some(rule) = event.rule {
            out.push_str(" [");
            out.push_str(rule);
            out.push(']');
        }
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
        if let EventKind::SessionStarted { cap, .. } = &event.kind {
            self.cap = *cap;
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
            } => {
                let _ = write!(what, "Claude Code {version}, {session_kind} session: ");
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
                    let _ = write!(what, ": {detail}");
                } else if message.contains(&detail) {
                    // The kernel's cap message already says `(20/20 running)`.
                    let _ = write!(what, ": {message}");
                } else {
                    let _ = write!(what, ": {message} ({detail})");
                }
                if let Some(hint) = hint {
                    let _ = write!(what, "; {hint}");
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
                what.push_str("started");
                if label != agent.id_string() {
                    let _ = write!(what, " as {}", agent.id_string());
                }
                if *fork {
                    let _ = write!(what, " (a fork of {}, {model})", self.label(parent));
                } else {
                    let _ = write!(what, " ({agent_type}, {model}");
                    if let Some(effort) = effort {
                        let _ = write!(what, ", effort {effort}");
                    }
                    what.push(')');
                }
                let _ = write!(what, " in the {} at depth {depth}", mode.as_str());
                if !*fork {
                    let _ = write!(what, ", launched by {}", self.label(parent));
                }
                let _ = write!(what, " {}", self.running(*running));
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
            } => {
                if *allowed {
                    let _ = write!(what, "uses {tool}");
                } else {
                    let _ = match reason {
                        Some("not_in_tools") => {
                            write!(what, "tries {tool}, which is not among its tools")
                        }
                        Some("denied") => write!(what, "tries {tool}: denied"),
                        Some("auto_denied") => write!(what, "tries {tool}: auto-denied"),
                        Some("depth_limit") => {
                            write!(what, "tries {tool}: refused at the depth limit")
                        }
                        Some(other) => {
                            write!(what, "tries {tool}: refused ({})", other.replace('_', " "))
                        }
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
            } => {
                let _ = write!(what, "permission prompt #{prompt}: asks to use {tool}");
                if *auto_denied {
                    what.push_str(" — auto-denied silently, nobody is asked");
                } else {
                    let _ = match routed_to {
                        Some("main") => write!(what, " — shown in the main session"),
                        Some("terminal") => write!(what, " — shown in the terminal"),
                        Some(other) => write!(what, " — shown in {other}"),
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
                    "children" => write!(
                        what,
                        "{count} {} it launched",
                        plural(*count, "subagent", "subagents")
                    ),
                    "bash" => write!(
                        what,
                        "{count} background shell {}",
                        plural(*count, "command", "commands")
                    ),
                    other => write!(what, "{count} {}", other.replace('_', " ")),
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
                    "completion" => what.push_str("completion notification"),
                    "result" => what.push_str("result returned"),
                    "failed" => what.push_str("failure notification"),
                    other => {
                        let _ = write!(what, "{} notification", other.replace('_', " "));
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
                let reason = reason.replace('_', " ");
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
                    "user" => {
                        let _ = write!(what, "stops {target} from the tasks panel");
                        "person".to_string()
                    }
                    "task_stop" => {
                        let _ = write!(what, "stops {target} (TaskStop)");
                        self.label(by)
                    }
                    other => {
                        let _ = write!(what, "stops {target} ({})", other.replace('_', " "));
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
                    "row_added" => write!(what, "row for {row_label} appears"),
                    "row_removed" => write!(
                        what,
                        "row for {row_label} leaves ({})",
                        reason.unwrap_or("gone").replace('_', " ")
                    ),
                    "row_status_changed" => write!(
                        what,
                        "row for {row_label} now reads {}",
                        status.unwrap_or("?")
                    ),
                    "footer_hint_shown" => write!(what, "footer shows \"/tasks to see subagents\""),
                    "footer_hint_cleared" => write!(what, "footer hint goes away"),
                    other => write!(what, "{}", other.replace('_', " ")),
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
                let _ = write!(what, "{} had no effect: {why}", action.replace('_', " "));
                "person".to_string()
            }
            EventKind::LimitReached { limit, value } => {
                let bound = if *limit == "max_time" {
                    human_duration(*value)
                } else {
                    value.to_string()
                };
                let _ = write!(
                    what,
                    "safety limit reached: {limit} = {bound}; the run stops here"
                );
                "session".to_string()
            }
        }
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

/// Writes the narration into any [`Write`], one line per event.
///
/// Output is buffered internally. The first I/O error is remembered (later events are
/// dropped) and returned by [`TextWriter::finish`].
pub struct TextWriter<W: Write> {
    out: Buffered<W>,
    narrator: Narrator,
    line: String,
}

impl<W: Write> TextWriter<W> {
    /// A writer into `out`.
    pub fn new(out: W) -> TextWriter<W> {
        TextWriter {
            out: Buffered::new(out, 1024),
            narrator: Narrator::new(),
            line: String::with_capacity(256),
        }
    }

    /// Hands everything buffered to the underlying writer and flushes it; returns the
    /// remembered error, if a write has failed.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Writes out what is left and returns the underlying writer, or the first I/O error.
    pub fn finish(self) -> io::Result<W> {
        self.out.finish()
    }
}

impl<W: Write> Sink for TextWriter<W> {
    fn event(&mut self, event: &Event) {
        let Some(buffer) = self.out.buffer() else {
            return;
        };
        self.line.clear();
        self.narrator.line(event, &mut self.line);
        buffer.extend_from_slice(self.line.as_bytes());
        buffer.push(b'\n');
        self.out.written();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Outcome;
    use crate::event::RunProfile;
    use crate::time::SimTime;
    use subsim_rules::Mode;

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
                session_kind: "interactive",
                cap,
                depth_limit: 3,
                fork_mode: true,
                background_disabled: false,
                main_agent: None,
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
                    what: "x",
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
            "00:00:12.000  main            spawn researcher-21 rejected: Concurrent subagent limit reached \
             (20/20 running) [CAP-1]",
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
            "00:00:12.000  main            spawn researcher-22 rejected: Concurrent subagent limit reached \
             (20/20 running); do not retry [CAP-1]",
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
            "00:00:12.000  researcher-3    spawn of a general-purpose subagent rejected: depth limit [DEPTH-3]",
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
            "00:00:12.000  researcher-2    started as a3 (general-purpose, sonnet) in the background at depth 1, \
             launched by main (14 running) [FGBG-1]",
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
            "00:00:12.000  a7              started (a fork of main, opus) in the background at depth 1 \
             (21 running, over the cap of 20), without a cap check [CAP-6]",
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
            },
            None,
            "00:00:12.000  researcher-3    uses Bash",
        );
        check(
            EventKind::ToolCalled {
                agent: anonymous(3),
                tool: "Write".into(),
                allowed: false,
                reason: Some("not_in_tools"),
            },
            Some("TOOLS-6"),
            "00:00:12.000  researcher-3    tries Write, which is not among its tools [TOOLS-6]",
        );
    }

    #[test]
    fn permission_requested() {
        check(
            EventKind::PermissionRequested {
                agent: agent(3, "researcher-3"),
                tool: "Bash".into(),
                routed_to: Some("main"),
                auto_denied: false,
                prompt: 2,
            },
            Some("PERM-4"),
            "00:00:12.000  researcher-3    permission prompt #2: asks to use Bash — shown in the main session [PERM-4]",
        );
        check(
            EventKind::PermissionRequested {
                agent: agent(3, "researcher-3"),
                tool: "Bash".into(),
                routed_to: None,
                auto_denied: true,
                prompt: 1,
            },
            Some("PERM-5"),
            "00:00:12.000  researcher-3    permission prompt #1: asks to use Bash — auto-denied silently, \
             nobody is asked [PERM-5]",
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
            "00:00:12.000  person          denied researcher-3's Bash (Esc) after 500ms (prompt #3) [PERM-4]",
        );
    }

    #[test]
    fn permission_withdrawn() {
        check(
            EventKind::PermissionWithdrawn { agent: anonymous(3), tool: "Bash".into(), prompt: 4 },
            Some("Q-38"),
            "00:00:12.000  researcher-3    permission prompt #4 for Bash withdrawn: the run ended before it was \
             answered [Q-38]",
        );
    }

    #[test]
    fn agent_waiting() {
        check(
            EventKind::AgentWaiting { agent: anonymous(3), waiting_for: "children", count: 2 },
            Some("NOTIFY-6"),
            "00:00:12.000  researcher-3    done with its steps; waits for 2 subagents it launched [NOTIFY-6]",
        );
        check(
            EventKind::AgentWaiting { agent: anonymous(3), waiting_for: "bash", count: 1 },
            Some("NOTIFY-5"),
            "00:00:12.000  researcher-3    done with its steps; waits for 1 background shell command [NOTIFY-5]",
        );
    }

    #[test]
    fn agent_backgrounded() {
        check(
            EventKind::AgentBackgrounded { agent: anonymous(3), running: 5 },
            Some("FGBG-5"),
            "00:00:12.000  researcher-3    moved to the background with Ctrl+B (5 running) [FGBG-5]",
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
            "00:00:12.000  researcher-3    finished: failed — API error: rate_limit (0 running) [ERR-4]",
        );
    }

    #[test]
    fn notification() {
        check(
            EventKind::Notification {
                to: AgentRef::MAIN,
                from: anonymous(3),
                what: "completion",
            },
            Some("NOTIFY-3"),
            "00:00:12.000  main            ← researcher-3: completion notification [NOTIFY-3]",
        );
        check(
            EventKind::Notification {
                to: anonymous(3),
                from: anonymous(3),
                what: "bash_done",
            },
            Some("NOTIFY-5"),
            "00:00:12.000  researcher-3    ← researcher-3: bash done notification [NOTIFY-5]",
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
            "00:00:12.000  researcher-3    resumed by main in the background on opus (21 running, over the cap of 20), \
             without a cap check [CAP-7]",
        );
    }

    #[test]
    fn messages() {
        check(
            EventKind::MessageDelivered { to: anonymous(3), from: AgentRef::MAIN },
            Some("RESUME-17"),
            "00:00:12.000  main            → researcher-3: message delivered while it runs [RESUME-17]",
        );
        check(
            EventKind::MessageRejected {
                to: "ghost".into(),
                by: AgentRef::MAIN,
                reason: "unknown_agent",
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
                source: "task_stop",
            },
            Some("RESUME-9"),
            "00:00:12.000  main            stops researcher-3 (TaskStop) [RESUME-9]",
        );
        check(
            EventKind::StopRequested {
                agent: anonymous(3),
                by: AgentRef::MAIN,
                source: "user",
            },
            Some("RESUME-10"),
            "00:00:12.000  person          stops researcher-3 from the tasks panel [RESUME-10]",
        );
        check(
            EventKind::ActionIgnored {
                action: "ctrl_b",
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
                limit: "max_time",
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

    #[test]
    fn writer_writes_lines() {
        let mut writer = TextWriter::new(Vec::new());
        writer.event(&session(Some(20)));
        writer.event(&Event {
            t: SimTime::from_secs(1),
            seq: 1,
            rule: None,
            kind: EventKind::LimitReached {
                limit: "max_events",
                value: 2,
            },
        });
        let text = String::from_utf8(writer.finish().unwrap()).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.ends_with("max_events = 2; the run stops here\n"));
    }
}
