//! What each event says: the narration's words, one line per event.

use super::*;
use crate::runmodel::group::Subject;
use subsim_escape::terminal;
use subsim_rules::id;

mod describe;

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
    modes: Vec<Option<subsim_rules::PermissionMode>>,
    pub(super) who_width: usize,
    /// Leave out what only the full detail shows (agent ids on start lines).
    brief: bool,
    /// The "who" column keeps its width ([`Narrator::with_name_column`]).
    fixed_width: bool,
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
            fixed_width: false,
        }
    }

    /// A narrator whose "who" column is `width` wide from the first line to the last
    /// (a longer name overflows it): for excerpts set side by side, such as `diff`'s.
    pub fn with_name_column(width: usize) -> Narrator {
        Narrator {
            who_width: width,
            fixed_width: true,
            ..Narrator::new()
        }
    }

    /// The width of the "who" column now.
    pub fn name_column(&self) -> usize {
        self.who_width
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
            EventKind::Worktree { action, .. } => case = action.to_string(),
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
                ..
            } => {
                let mode = self.mode(agent.id);
                // The trace cites one rule for a call its mode runs and for one a step's
                // `prompt: false` forced: credit the mode only when it does run it.
                let call = subsim_rules::prompt::Call {
                    input: input.as_deref(),
                    subagent: agent.id != crate::event::MAIN,
                    ..subsim_rules::prompt::Call::new(tool, mode)
                };
                let forced = if *allowed {
                    subsim_rules::prompt::step_forced_run(rule, &call)
                } else {
                    None
                };
                case = if let Some(would) = forced {
                    use subsim_rules::prompt::CallDecision;
                    let would = match would {
                        CallDecision::Deny(_) => "deny it",
                        CallDecision::Prompt(_) | CallDecision::Run(_) => "ask",
                    };
                    fill.push(("{would}", would.to_string()));
                    "allowed_by_step".to_string()
                } else if *allowed {
                    "allowed".to_string()
                } else if *reason == Some(ToolRefusal::Denied) && rule == id::PERM_9 {
                    format!("denied_{}", mode.as_str())
                } else {
                    reason.unwrap_or(ToolRefusal::Denied).to_string()
                };
                fill.push(("{mode}", mode.as_str().to_string()));
                fill.push(("{tool}", tool.to_string()));
                fill.push(("{input}", input.as_deref().unwrap_or(tool).to_string()));
                if let Some(pattern) = permission_rule {
                    fill.push(("{pattern}", pattern.to_string()));
                }
            }
            EventKind::SessionStarted { .. }
            | EventKind::SpawnRequested { .. }
            | EventKind::SpawnRejected { .. }
            | EventKind::PermissionRequested { .. }
            | EventKind::PermissionAnswered { .. }
            | EventKind::PermissionWithdrawn { .. }
            | EventKind::AgentWaiting { .. }
            | EventKind::AgentBackgrounded { .. }
            | EventKind::AgentFinished { .. }
            | EventKind::AgentResumed { .. }
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
            | EventKind::ActionIgnored { .. }
            | EventKind::DurationDrawn { .. }
            | EventKind::LimitReached { .. } => {}
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

    fn mode(&self, id: u32) -> subsim_rules::PermissionMode {
        self.modes
            .get(id as usize)
            .copied()
            .flatten()
            .unwrap_or_default()
    }

    /// The agent a line is about, for grouping same-instant lines (which events have one:
    /// `runmodel::group::subject_of`, the model's own list).
    fn subject(&self, event: &Event, who: &str) -> Option<String> {
        crate::runmodel::group::subject_of(event).map(|subject| match subject {
            Subject::Name(name) => name.to_string(),
            Subject::From(from) => self.label(from),
            Subject::Run(_) => who.to_string(),
        })
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
                self.set_mode(crate::event::MAIN, *permission_mode);
            }
            EventKind::AgentStarted { agent, profile, .. } => {
                self.set_mode(agent.id, profile.permission_mode);
            }
            EventKind::SpawnRequested { .. }
            | EventKind::SpawnRejected { .. }
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
            | EventKind::LimitReached { .. } => {}
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

    fn set_mode(&mut self, id: u32, mode: subsim_rules::PermissionMode) {
        let index = id as usize;
        if self.modes.len() <= index {
            self.modes.resize(index + 1, None);
        }
        self.modes[index] = Some(mode);
    }

    fn widen(&mut self, who: &str) {
        let width = who.chars().count();
        if width > self.who_width && !self.fixed_width {
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
}

/// How a line is coloured.
fn tone(event: &Event) -> Tone {
    match &event.kind {
        EventKind::SpawnRejected { .. } | EventKind::MessageRejected { .. } => Tone::Refusal,
        EventKind::ToolCalled { allowed: false, .. } => Tone::Refusal,
        EventKind::PermissionRequested { .. }
        | EventKind::PermissionAnswered { .. }
        | EventKind::PermissionWithdrawn { .. } => Tone::Prompt,
        EventKind::SessionStarted { .. }
        | EventKind::SpawnRequested { .. }
        | EventKind::AgentStarted { .. }
        | EventKind::ToolCalled { .. }
        | EventKind::AgentWaiting { .. }
        | EventKind::AgentBackgrounded { .. }
        | EventKind::AgentFinished { .. }
        | EventKind::Notification { .. }
        | EventKind::AgentResumed { .. }
        | EventKind::MessageDelivered { .. }
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
        | EventKind::LimitReached { .. } => Tone::Plain,
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
