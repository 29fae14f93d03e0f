//! `expect:` assertions over a finished run, checked while the run streams its events.
//!
//! [`Checker`] is a [`Sink`]: it keeps counters, not the trace, so a
//! million-event load run can be checked in constant memory. It remembers a few matching
//! events per assertion to show on failure.

use std::collections::BTreeMap;

use crate::event::{Event, EventKind, Field, OPTIONAL_FLAGS};
use crate::sink::Sink;
use crate::time::SimTime;

/// A value in an event filter.
#[derive(Clone, Debug, PartialEq)]
pub enum FilterValue {
    /// A string (matches strings; for agent fields, the id or the name).
    Str(String),
    /// An integer.
    Int(u64),
    /// A boolean.
    Bool(bool),
}

impl std::fmt::Display for FilterValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FilterValue::Str(text) => write!(f, "{text:?}"),
            FilterValue::Int(value) => write!(f, "{value}"),
            FilterValue::Bool(value) => write!(f, "{value}"),
        }
    }
}

/// Matches events on any subset of their fields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventFilter {
    /// Field name → wanted value, in file order.
    pub fields: Vec<(String, FilterValue)>,
}

impl EventFilter {
    /// Does `event` have every field of the filter with the wanted value? A wanted `false`
    /// also matches an optional flag (`OPTIONAL_FLAGS`) the event leaves out.
    pub fn matches(&self, event: &Event) -> bool {
        let mut matched = vec![false; self.fields.len()];
        let mut carried = vec![false; self.fields.len()];
        event.visit_fields(&mut |name, value| {
            for (index, (wanted_name, wanted)) in self.fields.iter().enumerate() {
                if wanted_name == name {
                    carried[index] = true;
                    if field_equals(value, wanted, PREFIX_FIELDS.contains(&name)) {
                        matched[index] = true;
                    }
                }
            }
        });
        let kind = event.kind.name();
        self.fields
            .iter()
            .enumerate()
            .all(|(index, (name, wanted))| {
                matched[index]
                    || (!carried[index]
                        && *wanted == FilterValue::Bool(false)
                        && OPTIONAL_FLAGS.contains(&(kind, name.as_str())))
            })
    }

    /// The `kind` the filter asks for, if it names one.
    pub fn kind(&self) -> Option<&str> {
        self.fields.iter().find_map(|(name, value)| match value {
            FilterValue::Str(kind) if name == "kind" => Some(kind.as_str()),
            _ => None,
        })
    }

    /// How close `event` comes to matching, for "nearest events" evidence: `None` when it
    /// is of another kind than the filter names; otherwise 100 per field that matches
    /// plus, per text field that does not, the length of the common beginning.
    fn closeness(&self, event: &Event) -> Option<usize> {
        if self.kind().is_some_and(|kind| kind != event.kind.name()) {
            return None;
        }
        let mut score = 0;
        event.visit_fields(&mut |name, value| {
            for (wanted_name, wanted) in &self.fields {
                if wanted_name != name || name == "kind" {
                    continue;
                }
                if field_equals(value, wanted, PREFIX_FIELDS.contains(&name)) {
                    score += 100;
                } else if let FilterValue::Str(want) = wanted {
                    let near = match value {
                        Field::Str(text) => common_prefix(text, want),
                        Field::Agent(agent) => common_prefix(&agent.id_string(), want).max(
                            agent
                                .name
                                .as_deref()
                                .map_or(0, |name| common_prefix(name, want)),
                        ),
                        Field::U64(..) | Field::Bool(..) | Field::List(..) => 0,
                    };
                    score += near.min(99);
                }
            }
        });
        Some(score)
    }

    /// The agent name or id the filter is about (`agent:` or `name:`), if any.
    fn subject(&self) -> Option<&str> {
        self.fields.iter().find_map(|(name, value)| match value {
            FilterValue::Str(text) if name == "agent" || name == "name" => Some(text.as_str()),
            FilterValue::Str(..) | FilterValue::Int(..) | FilterValue::Bool(..) => None,
        })
    }
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

impl std::fmt::Display for EventFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("{")?;
        for (index, (name, value)) in self.fields.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{name}: {value}")?;
        }
        f.write_str("}")
    }
}

/// Free-text fields: a filter value matches the whole text or its beginning, so the
/// documented part of a message (e.g. `Agent would be spawned with zero tools`) matches a
/// message that goes on to name details.
const PREFIX_FIELDS: [&str; 3] = ["message", "detail", "why"];

/// Agent-naming fields (`AGENT_FIELDS`) arrive as `Field::Agent` and match id or name.
fn field_equals(value: Field<'_>, wanted: &FilterValue, prefix: bool) -> bool {
    match (value, wanted) {
        (Field::Str(text), FilterValue::Str(want)) if prefix => text.starts_with(want.as_str()),
        (Field::Str(text), FilterValue::Str(want)) => text == want,
        (Field::U64(number), FilterValue::Int(want)) => number == *want,
        (Field::U64(number), FilterValue::Str(want)) => want.parse::<u64>().ok() == Some(number),
        (Field::Bool(flag), FilterValue::Bool(want)) => flag == *want,
        (Field::Agent(agent), FilterValue::Str(want)) => agent.is(want),
        (Field::List(items), FilterValue::Str(want)) => items.iter().any(|item| &**item == want),
        _ => false,
    }
}

/// A numeric comparison.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Compare {
    /// `equals: n`.
    Equals(u64),
    /// `at_least: n`.
    AtLeast(u64),
    /// `at_most: n`.
    AtMost(u64),
    /// `between: [a, b]`, inclusive.
    Between(u64, u64),
}

impl Compare {
    /// Does `value` satisfy the comparison?
    pub fn holds(self, value: u64) -> bool {
        match self {
            Compare::Equals(want) => value == want,
            Compare::AtLeast(low) => value >= low,
            Compare::AtMost(high) => value <= high,
            Compare::Between(low, high) => low <= value && value <= high,
        }
    }
}

impl std::fmt::Display for Compare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Compare::Equals(want) => write!(f, "exactly {want}"),
            Compare::AtLeast(low) => write!(f, "at least {low}"),
            Compare::AtMost(high) => write!(f, "at most {high}"),
            Compare::Between(low, high) => write!(f, "between {low} and {high}"),
        }
    }
}

/// One assertion.
#[derive(Clone, Debug, PartialEq)]
pub enum Expectation {
    /// `count: FILTER` with a comparison.
    Count {
        /// Which events.
        filter: EventFilter,
        /// How many.
        compare: Compare,
    },
    /// `max_running`: the peak of the running count.
    MaxRunning(Compare),
    /// `at: T, running: N`: the running count right after the last event at or before T.
    RunningAt {
        /// When.
        at: SimTime,
        /// Expected count.
        running: u64,
    },
    /// `final: {agent, outcome}`: the agent's last run ended this way.
    Final {
        /// Agent id or name.
        agent: String,
        /// Expected outcome (`completed`, …) or `running` for a run that never ended.
        outcome: String,
    },
    /// `order: [F1, F2, …]`: the first match of each filter comes after the previous one's.
    Order(Vec<EventFilter>),
    /// `event: FILTER`: at least one event matches.
    Exists(EventFilter),
    /// `none: FILTER`: no event matches.
    NoEvent(EventFilter),
    /// `after: A` + `then: B` (+ `within: D`, `same: [FIELD…]`): at least one event
    /// matches A, and every event matching A is followed by a later event matching B
    /// (with the same values of the `same` fields), at most D of virtual time later, or
    /// before the run ends when there is no `within`.
    Follows {
        /// The trigger.
        after: EventFilter,
        /// What must follow each trigger.
        then: EventFilter,
        /// The most virtual time allowed between the two, in µs.
        within: Option<u64>,
        /// Fields whose values the two events must share (e.g. `agent`, `prompt`).
        same: Vec<String>,
    },
    /// `blocking: {approx, tolerance}`: rejected / attempted spawns.
    Blocking {
        /// Expected fraction.
        approx: f64,
        /// Allowed absolute difference.
        tolerance: f64,
    },
}

impl Expectation {
    /// The event filters the assertion names, in file order.
    pub fn filters(&self) -> Vec<&EventFilter> {
        match self {
            Expectation::Count { filter, .. }
            | Expectation::Exists(filter)
            | Expectation::NoEvent(filter) => vec![filter],
            Expectation::Order(filters) => filters.iter().collect(),
            Expectation::Follows { after, then, .. } => vec![after, then],
            _ => Vec::new(),
        }
    }
}

/// An assertion with where it was written, for messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    /// The assertion.
    pub expectation: Expectation,
    /// `file:line:col`, when known.
    pub location: Option<String>,
}

/// One failed assertion.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// Index of the assertion in the `expect:` list.
    pub index: usize,
    /// Where it was written.
    pub location: Option<String>,
    /// What was expected.
    pub expected: String,
    /// What happened.
    pub got: String,
    /// Events involved (a few), as `seq` + short text.
    pub events: Vec<String>,
    /// What points at the cause when nothing matched: the nearest events (same kind,
    /// closest values) and, for an agent that never started, its rejection.
    pub hints: Vec<String>,
}

const KEEP: usize = 5;
/// Nearest events kept per filter.
const NEAREST: usize = 3;

/// Events that came closest to a filter that may end up matching nothing.
#[derive(Default)]
struct Nearest {
    /// (closeness, seq, short text), best first.
    best: Vec<(usize, u64, String)>,
    /// The first `spawn_rejected` whose name is the filter's subject.
    rejected: Option<String>,
}

impl Nearest {
    fn offer(&mut self, filter: &EventFilter, event: &Event) {
        if let EventKind::SpawnRejected {
            name: Some(name), ..
        } = &event.kind
        {
            if self.rejected.is_none()
                && filter.kind() != Some("spawn_rejected")
                && filter.subject() == Some(&**name)
            {
                self.rejected = Some(short(event));
            }
        }
        let Some(score) = filter.closeness(event) else {
            return;
        };
        let worst = self.best.last().map(|(score, ..)| *score);
        if self.best.len() == NEAREST && worst.is_some_and(|worst| worst >= score) {
            return;
        }
        let at = self
            .best
            .iter()
            .position(|(other, ..)| *other < score)
            .unwrap_or(self.best.len());
        self.best.insert(at, (score, event.seq, short(event)));
        self.best.truncate(NEAREST);
    }

    fn hints(&self, filter: &EventFilter) -> Vec<String> {
        let mut hints = Vec::new();
        if let (Some(rejected), Some(subject)) = (&self.rejected, filter.subject()) {
            hints.push(format!(
                "`{subject}` was rejected instead of started: {rejected}"
            ));
        }
        match filter.kind() {
            Some(kind) if self.best.is_empty() => {
                hints.push(format!("no `{kind}` event at all in this run"));
            }
            _ => {
                for (index, (.., text)) in self.best.iter().enumerate() {
                    let label = if index == 0 { "nearest:" } else { "        " };
                    hints.push(format!("{label} {text}"));
                }
            }
        }
        hints
    }
}

/// A trigger of a `Follows` assertion still waiting for its follower.
struct Trigger {
    t: SimTime,
    key: Vec<String>,
    text: String,
}

#[derive(Default)]
struct State {
    count: u64,
    kept: Vec<String>,
    order_next: usize,
    order_seqs: Vec<u64>,
    /// Per filter of the assertion (see [`Expectation::filters`]).
    nearest: Vec<Nearest>,
    /// `Follows`: triggers not yet followed, oldest first.
    pending: std::collections::VecDeque<Trigger>,
    /// `Follows`: triggers seen, and those never followed in time.
    triggers: u64,
    violations: u64,
}

/// Checks a list of assertions while events stream by.
pub struct Checker {
    expectations: Vec<Located>,
    states: Vec<State>,
    max_running: u64,
    /// The event where the peak running count was first reached (written out only if an
    /// expectation fails on it: formatting it each time the count rose was most of the
    /// checker's cost in a wide fan-out, run once per ordering by `explore`).
    peak_event: Option<Event>,
    running: u64,
    // (time of the "at", running after the last event at or before it)
    running_at: Vec<Option<u64>>,
    /// Per `at` assertion: the last event at or before its time that carried a count.
    running_at_event: Vec<Option<Event>>,
    finals: BTreeMap<String, (String, u64)>,
    wanted_finals: Vec<String>,
    spawns_attempted: u64,
    spawns_rejected_cap: u64,
    agent_names: BTreeMap<u32, String>,
    last_t: SimTime,
    /// `final` agents whose spawn was rejected: the first rejection naming each.
    final_rejections: BTreeMap<String, String>,
}

fn short(event: &Event) -> String {
    let mut text = format!("#{} t={} {}", event.seq, event.t, event.kind.name());
    event.visit_fields(&mut |name, value| {
        if matches!(name, "t_us" | "seq" | "kind" | "tools") {
            return;
        }
        let rendered = match value {
            Field::Str(s) => s.to_string(),
            Field::U64(n) => n.to_string(),
            Field::Bool(b) => b.to_string(),
            Field::List(items) => format!("[{} items]", items.len()),
            Field::Agent(agent) => agent.id_string(),
        };
        text.push_str(&format!(" {name}={rendered}"));
    });
    text
}

/// The values of `fields` in `event`, as text (`""` for a field it does not carry).
fn key_of(event: &Event, fields: &[String]) -> Vec<String> {
    let mut key = vec![String::new(); fields.len()];
    event.visit_fields(&mut |name, value| {
        if let Some(index) = fields.iter().position(|field| field == name) {
            key[index] = match value {
                Field::Str(s) => s.to_string(),
                Field::U64(n) => n.to_string(),
                Field::Bool(b) => b.to_string(),
                Field::List(items) => items.join(","),
                Field::Agent(agent) => agent.id_string(),
            };
        }
    });
    key
}

impl Checker {
    /// A checker for these assertions.
    pub fn new(expectations: Vec<Located>) -> Checker {
        let states = expectations
            .iter()
            .map(|located| State {
                nearest: located
                    .expectation
                    .filters()
                    .iter()
                    .map(|_| Nearest::default())
                    .collect(),
                ..State::default()
            })
            .collect();
        let running_at = expectations.iter().map(|_| None).collect();
        let running_at_event = expectations.iter().map(|_| None).collect();
        let wanted_finals = expectations
            .iter()
            .filter_map(|located| match &located.expectation {
                Expectation::Final { agent, .. } => Some(agent.clone()),
                _ => None,
            })
            .collect();
        Checker {
            expectations,
            states,
            max_running: 0,
            peak_event: None,
            running: 0,
            running_at,
            running_at_event,
            finals: BTreeMap::new(),
            wanted_finals,
            spawns_attempted: 0,
            spawns_rejected_cap: 0,
            agent_names: BTreeMap::new(),
            last_t: SimTime::ZERO,
            final_rejections: BTreeMap::new(),
        }
    }

    /// True if there is nothing to check.
    pub fn is_empty(&self) -> bool {
        self.expectations.is_empty()
    }

    /// Every failure, in assertion order.
    pub fn finish(self) -> Vec<Failure> {
        let mut failures = Vec::new();
        for (index, (located, state)) in self.expectations.iter().zip(&self.states).enumerate() {
            if let Some(miss) = self.missed(index, &located.expectation, state) {
                failures.push(Failure {
                    index,
                    location: located.location.clone(),
                    expected: miss.expected,
                    got: miss.got,
                    events: miss.events,
                    hints: miss.hints,
                });
            }
        }
        failures
    }

    /// How the assertion at `index` failed, if it did (`state`: what was seen for it).
    fn missed(&self, index: usize, expectation: &Expectation, state: &State) -> Option<Miss> {
        match expectation {
            Expectation::Count { filter, compare } => (!compare.holds(state.count)).then(|| Miss {
                expected: format!("{compare} events matching {filter}"),
                got: format!("{} matching events", state.count),
                events: state.kept.clone(),
                hints: if state.count == 0 {
                    state.nearest_hints(0, filter)
                } else {
                    Vec::new()
                },
            }),
            Expectation::MaxRunning(compare) => (!compare.holds(self.max_running)).then(|| Miss {
                expected: format!("peak running count {compare}"),
                got: format!("peak running count {}", self.max_running),
                events: self
                    .peak_event
                    .iter()
                    .map(|event| format!("{}  (the peak, first reached here)", short(event)))
                    .collect(),
                hints: Vec::new(),
            }),
            Expectation::RunningAt { at, running } => self.running_at_missed(index, *at, *running),
            Expectation::Final { agent, outcome } => self.final_missed(agent, outcome, state),
            Expectation::Order(filters) => order_missed(filters, state),
            Expectation::Exists(filter) => (state.count == 0).then(|| Miss {
                expected: format!("an event matching {filter}"),
                got: "no matching event".to_string(),
                events: vec![],
                hints: state.nearest_hints(0, filter),
            }),
            Expectation::NoEvent(filter) => (state.count > 0).then(|| Miss {
                expected: format!("no event matching {filter}"),
                got: format!("{} matching events", state.count),
                events: state.kept.clone(),
                hints: Vec::new(),
            }),
            Expectation::Follows {
                after,
                then,
                within,
                same,
            } => follows_missed(after, then, *within, same, state),
            Expectation::Blocking { approx, tolerance } => {
                let fraction = if self.spawns_attempted == 0 {
                    0.0
                } else {
                    self.spawns_rejected_cap as f64 / self.spawns_attempted as f64
                };
                ((fraction - approx).abs() > *tolerance).then(|| Miss {
                    expected: format!("blocking {approx} ± {tolerance}"),
                    got: format!(
                        "blocking {fraction:.4} (rejected by the cap: {} of {} attempted)",
                        self.spawns_rejected_cap, self.spawns_attempted
                    ),
                    events: vec![],
                    hints: Vec::new(),
                })
            }
        }
    }

    /// `at: T, running: N` (the assertion at `index`), if the count differs.
    fn running_at_missed(&self, index: usize, at: SimTime, running: u64) -> Option<Miss> {
        let got = self.running_at[index].unwrap_or(self.running);
        if got == running {
            return None;
        }
        let events = match &self.running_at_event[index] {
            Some(event) => vec![format!(
                "{}  (the last count at or before {at})",
                short(event)
            )],
            None => vec![format!("no event carried a running count by {at}")],
        };
        Some(Miss {
            expected: format!("{running} running at {at}"),
            got: format!("{got} running at {at}"),
            events,
            hints: Vec::new(),
        })
    }

    /// `final: {agent, outcome}`, if the agent ended otherwise (or never started: then
    /// its rejection, if it had one, is the hint).
    fn final_missed(&self, agent: &str, outcome: &str, state: &State) -> Option<Miss> {
        let got = self
            .finals
            .get(agent)
            .map(|(outcome, _)| outcome.clone())
            .unwrap_or_else(|| "no such agent started".to_string());
        if got == outcome {
            return None;
        }
        let hints = match self.final_rejections.get(agent) {
            Some(rejected) if !self.finals.contains_key(agent) => vec![format!(
                "`{agent}` was rejected instead of started: {rejected}"
            )],
            _ => Vec::new(),
        };
        Some(Miss {
            expected: format!("{agent} ends {outcome}"),
            got: format!("{agent}: {got}"),
            events: state.kept.clone(),
            hints,
        })
    }
}

/// What a failed assertion reports (a [`Failure`] without where it was written).
struct Miss {
    expected: String,
    got: String,
    events: Vec<String>,
    hints: Vec<String>,
}

impl State {
    /// Evidence for the assertion's filter number `which` when it matched nothing.
    fn nearest_hints(&self, which: usize, filter: &EventFilter) -> Vec<String> {
        self.nearest
            .get(which)
            .map(|near| near.hints(filter))
            .unwrap_or_default()
    }
}

/// `order: [F1, F2, …]`, if a filter's match did not come after the previous one's.
fn order_missed(filters: &[EventFilter], state: &State) -> Option<Miss> {
    let missing = filters.get(state.order_next)?;
    Some(Miss {
        expected: format!(
            "events in order: {}",
            filters
                .iter()
                .map(|f| f.to_string())
                .collect::<Vec<_>>()
                .join(" → ")
        ),
        got: format!(
            "matched {} of {}; no event matching {missing} came after the previous match",
            state.order_next,
            filters.len()
        ),
        events: state.kept.clone(),
        hints: state.nearest_hints(state.order_next, missing),
    })
}

/// `after: A` + `then: B`, if nothing matched A or some A was not followed by a B in time.
fn follows_missed(
    after: &EventFilter,
    then: &EventFilter,
    within: Option<u64>,
    same: &[String],
    state: &State,
) -> Option<Miss> {
    let unfollowed = state.violations + state.pending.len() as u64;
    let within_text = match within {
        Some(micros) => format!(" within {}", crate::time::human_duration(micros)),
        None => " before the run ends".to_string(),
    };
    let same_text = if same.is_empty() {
        String::new()
    } else {
        format!(" with the same {}", same.join(", "))
    };
    let expected = format!(
        "every event matching {after} followed by one matching {then}{within_text}{same_text}"
    );
    if state.triggers == 0 {
        return Some(Miss {
            expected,
            got: format!("no event matched `after` {after}"),
            events: Vec::new(),
            hints: state.nearest_hints(0, after),
        });
    }
    if unfollowed == 0 {
        return None;
    }
    let mut events = state.kept.clone();
    for trigger in state.pending.iter() {
        if events.len() >= KEEP {
            break;
        }
        events.push(format!(
            "{}  (nothing followed before the run ended)",
            trigger.text
        ));
    }
    Some(Miss {
        expected,
        got: format!(
            "{unfollowed} of {} matching events were not followed{within_text}",
            state.triggers
        ),
        events,
        hints: if state.count == 0 {
            state.nearest_hints(1, then)
        } else {
            Vec::new()
        },
    })
}

impl Sink for Checker {
    fn event(&mut self, event: &Event) {
        self.last_t = event.t;
        // Running count bookkeeping, for `at` (value just before this event's time is
        // final once time moves past `at`).
        for (index, located) in self.expectations.iter().enumerate() {
            if let Expectation::RunningAt { at, .. } = located.expectation {
                if event.t > at && self.running_at[index].is_none() {
                    self.running_at[index] = Some(self.running);
                }
                if event.t <= at && event.kind.running().is_some() {
                    self.running_at_event[index] = Some(event.clone());
                }
            }
        }
        if let Some(running) = event.kind.running() {
            self.running = u64::from(running);
            if self.running > self.max_running {
                self.max_running = self.running;
                self.peak_event = Some(event.clone());
            }
        }
        match &event.kind {
            EventKind::SpawnRequested { .. } => self.spawns_attempted += 1,
            EventKind::SpawnRejected { reason, name, .. } => {
                if *reason == subsim_rules::RejectReason::ConcurrentLimit {
                    self.spawns_rejected_cap += 1;
                }
                if let Some(name) = name {
                    if self.wanted_finals.iter().any(|wanted| wanted == &**name)
                        && !self.final_rejections.contains_key(&**name)
                    {
                        self.final_rejections.insert(name.to_string(), short(event));
                    }
                }
            }
            EventKind::AgentStarted { agent, .. } => {
                if let Some(name) = &agent.name {
                    self.agent_names.insert(agent.id, name.to_string());
                }
                self.record_final(agent, "running", event.seq);
            }
            EventKind::AgentResumed { agent, .. } => self.record_final(agent, "running", event.seq),
            EventKind::AgentFinished { agent, outcome, .. } => {
                self.record_final(agent, outcome.as_str(), event.seq)
            }
            EventKind::SessionStarted { .. }
            | EventKind::ToolCalled { .. }
            | EventKind::PermissionRequested { .. }
            | EventKind::PermissionAnswered { .. }
            | EventKind::PermissionWithdrawn { .. }
            | EventKind::AgentWaiting { .. }
            | EventKind::AgentBackgrounded { .. }
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
            | EventKind::LimitReached { .. } => {}
        }
        for (located, state) in self.expectations.iter().zip(self.states.iter_mut()) {
            match &located.expectation {
                Expectation::Count { filter, .. }
                | Expectation::Exists(filter)
                | Expectation::NoEvent(filter) => {
                    if filter.matches(event) {
                        state.count += 1;
                        if state.kept.len() < KEEP {
                            state.kept.push(short(event));
                        }
                    } else if state.count == 0
                        && !matches!(located.expectation, Expectation::NoEvent(_))
                    {
                        state.nearest[0].offer(filter, event);
                    }
                }
                Expectation::Order(filters) => {
                    if let Some(next) = filters.get(state.order_next) {
                        if next.matches(event) {
                            state.order_next += 1;
                            state.order_seqs.push(event.seq);
                            state.kept.push(short(event));
                        } else {
                            state.nearest[state.order_next].offer(next, event);
                        }
                    }
                }
                Expectation::Follows {
                    after,
                    then,
                    within,
                    same,
                } => {
                    if let Some(within) = within {
                        while let Some(front) = state.pending.front() {
                            if front.t.as_micros().saturating_add(*within) >= event.t.as_micros() {
                                break;
                            }
                            let expired = state.pending.pop_front().expect("a front");
                            state.violations += 1;
                            if state.kept.len() < KEEP {
                                state.kept.push(format!(
                                    "{}  (nothing followed within {})",
                                    expired.text,
                                    crate::time::human_duration(*within)
                                ));
                            }
                        }
                    }
                    if then.matches(event) {
                        state.count += 1;
                        if same.is_empty() {
                            state.pending.clear();
                        } else if !state.pending.is_empty() {
                            let key = key_of(event, same);
                            state.pending.retain(|trigger| trigger.key != key);
                        }
                    } else if state.count == 0 {
                        state.nearest[1].offer(then, event);
                    }
                    if after.matches(event) {
                        state.triggers += 1;
                        state.pending.push_back(Trigger {
                            t: event.t,
                            key: if same.is_empty() {
                                Vec::new()
                            } else {
                                key_of(event, same)
                            },
                            text: short(event),
                        });
                    } else if state.triggers == 0 {
                        state.nearest[0].offer(after, event);
                    }
                }
                _ => {}
            }
        }
    }
}

impl Checker {
    fn record_final(&mut self, agent: &crate::event::AgentRef, outcome: &str, seq: u64) {
        for wanted in &self.wanted_finals {
            if agent.is(wanted) {
                self.finals
                    .insert(wanted.clone(), (outcome.to_string(), seq));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;
    use crate::event::{AgentRef, Outcome};
    use crate::spec::Answer;

    fn agent(id: u32, name: &str) -> AgentRef {
        AgentRef {
            id,
            name: Some(Rc::from(name)),
        }
    }

    fn at(seconds: u64, seq: u64, kind: EventKind) -> Event {
        Event {
            t: SimTime::from_secs(seconds),
            seq,
            rule: None,
            kind,
        }
    }

    fn asked(seconds: u64, seq: u64, id: u32, name: &str, prompt: u64) -> Event {
        at(
            seconds,
            seq,
            EventKind::PermissionRequested {
                agent: agent(id, name),
                agent_type: Rc::from("worker"),
                tool: Rc::from("Bash"),
                routed_to: Some(subsim_rules::prompt::RoutedTo::Terminal),
                auto_denied: false,
                prompt,
            },
        )
    }

    fn answered(seconds: u64, seq: u64, id: u32, name: &str, prompt: u64) -> Event {
        at(
            seconds,
            seq,
            EventKind::PermissionAnswered {
                agent: agent(id, name),
                tool: Rc::from("Bash"),
                answer: Answer::Approve,
                waited_us: 0,
                prompt,
                think_us: None,
                think_from: None,
            },
        )
    }

    fn finished(seconds: u64, seq: u64, id: u32, name: &str, running: u32) -> Event {
        at(
            seconds,
            seq,
            EventKind::AgentFinished {
                agent: agent(id, name),
                outcome: Outcome::Completed,
                running,
                detail: None,
            },
        )
    }

    fn filter(fields: &[(&str, FilterValue)]) -> EventFilter {
        EventFilter {
            fields: fields
                .iter()
                .map(|(name, value)| (name.to_string(), value.clone()))
                .collect(),
        }
    }

    fn text(value: &str) -> FilterValue {
        FilterValue::Str(value.to_string())
    }

    /// The failures of `expectation` over `events`.
    fn check(expectation: Expectation, events: &[Event]) -> Vec<Failure> {
        let mut checker = Checker::new(vec![Located {
            expectation,
            location: None,
        }]);
        for event in events {
            checker.event(event);
        }
        checker.finish()
    }

    fn follows(within: Option<u64>, same: &[&str]) -> Expectation {
        Expectation::Follows {
            after: filter(&[("kind", text("permission_requested"))]),
            then: filter(&[("kind", text("permission_answered"))]),
            within,
            same: same.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn none_holds_only_when_nothing_matches() {
        let none = Expectation::NoEvent(filter(&[("kind", text("agent_finished"))]));
        assert!(check(none.clone(), &[asked(0, 0, 1, "r", 1)]).is_empty());
        let failures = check(none, &[finished(1, 0, 1, "r", 0)]);
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].got, "1 matching events");
        assert_eq!(failures[0].events.len(), 1);
    }

    #[test]
    fn false_matches_a_flag_written_only_when_true() {
        let started = at(
            0,
            0,
            EventKind::AgentStarted {
                agent: agent(1, "r"),
                parent: agent(0, "main"),
                depth: 1,
                mode: subsim_rules::Mode::Background,
                fork: false,
                running: 1,
                cap_checked: true,
                profile: Rc::new(crate::event::RunProfile::new("general-purpose", "m", &[])),
            },
        );
        let not_teammate = filter(&[
            ("kind", text("agent_started")),
            ("teammate", FilterValue::Bool(false)),
        ]);
        let teammate = filter(&[
            ("kind", text("agent_started")),
            ("teammate", FilterValue::Bool(true)),
        ]);
        assert!(not_teammate.matches(&started));
        assert!(!teammate.matches(&started));
        // A flag the kind does not have still never matches, `false` or not.
        let fork_mode = filter(&[
            ("kind", text("agent_started")),
            ("fork_mode", FilterValue::Bool(false)),
        ]);
        assert!(!fork_mode.matches(&started));
    }

    #[test]
    fn follows_within_counts_the_window_inclusively() {
        // Answered exactly 3 s after: holds within 3 s, fails within 2 s.
        let events = [asked(1, 0, 1, "r", 1), answered(4, 1, 1, "r", 1)];
        assert!(check(follows(Some(3_000_000), &[]), &events).is_empty());
        let failures = check(follows(Some(2_000_000), &[]), &events);
        assert_eq!(failures.len(), 1);
        assert_eq!(
            failures[0].got,
            "1 of 1 matching events were not followed within 2s"
        );
        assert!(failures[0].events[0].contains("nothing followed within 2s"));
    }

    #[test]
    fn follows_without_within_needs_a_follower_before_the_end() {
        let events = [asked(1, 0, 1, "r", 1)];
        let failures = check(follows(None, &[]), &events);
        assert_eq!(failures.len(), 1);
        assert!(failures[0].got.contains("before the run ends"));
        assert!(failures[0].events[0].contains("nothing followed before the run ended"));
    }

    #[test]
    fn follows_with_same_pairs_events_by_field() {
        // Prompt 2 is answered, prompt 1 never: only `same: [prompt]` notices.
        let events = [
            asked(1, 0, 1, "r", 1),
            asked(1, 1, 2, "s", 2),
            answered(2, 2, 2, "s", 2),
        ];
        assert!(check(follows(None, &[]), &events).is_empty());
        let failures = check(follows(None, &["prompt"]), &events);
        assert_eq!(failures.len(), 1);
        assert!(
            failures[0].events[0].contains("prompt=1"),
            "{:?}",
            failures[0]
        );
    }

    #[test]
    fn follows_needs_a_trigger_and_never_pairs_an_event_with_itself() {
        let failures = check(follows(None, &[]), &[answered(1, 0, 1, "r", 1)]);
        assert_eq!(failures.len(), 1);
        assert!(failures[0].got.starts_with("no event matched `after`"));
        // An event matching both filters is a trigger, not its own follower.
        let both = Expectation::Follows {
            after: filter(&[("kind", text("agent_finished"))]),
            then: filter(&[("kind", text("agent_finished"))]),
            within: None,
            same: Vec::new(),
        };
        assert_eq!(check(both.clone(), &[finished(1, 0, 1, "r", 0)]).len(), 1);
        assert!(
            check(
                both,
                &[finished(1, 0, 1, "r", 1), finished(2, 1, 2, "s", 0)]
            )
            .len()
                == 1
        );
    }

    #[test]
    fn max_running_evidence_is_the_event_of_the_peak() {
        let events = [
            finished(1, 0, 1, "a", 1),
            finished(2, 1, 2, "b", 3),
            finished(3, 2, 3, "c", 2),
            finished(4, 3, 4, "d", 3),
        ];
        let failures = check(Expectation::MaxRunning(Compare::AtMost(2)), &events);
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].events.len(), 1);
        assert!(
            failures[0].events[0].starts_with("#1 "),
            "{:?}",
            failures[0].events
        );
    }

    #[test]
    fn a_failed_at_shows_the_last_count_before_its_time() {
        let events = [
            finished(1, 0, 1, "a", 2),
            finished(2, 1, 2, "b", 1),
            finished(5, 2, 3, "c", 0),
        ];
        let at = |seconds, running| Expectation::RunningAt {
            at: SimTime::from_secs(seconds),
            running,
        };
        assert!(check(at(3, 1), &events).is_empty());
        let failures = check(at(3, 2), &events);
        assert_eq!(failures[0].got, "1 running at 00:00:03.000");
        assert!(
            failures[0].events[0].starts_with("#1 "),
            "{:?}",
            failures[0].events
        );
        let failures = check(at(0, 1), &events);
        assert_eq!(
            failures[0].events,
            vec!["no event carried a running count by 00:00:00.000".to_string()]
        );
    }

    #[test]
    fn a_final_for_an_agent_that_was_rejected_says_so() {
        let rejected = at(
            0,
            0,
            EventKind::SpawnRejected {
                caller: agent(0, "main"),
                agent_type: Rc::from("general-purpose"),
                name: Some(Rc::from("w-3")),
                reason: subsim_rules::RejectReason::ConcurrentLimit,
                message: Rc::from("Concurrent subagent limit reached"),
                hint: None,
                running: 2,
            },
        );
        let failures = check(
            Expectation::Final {
                agent: "w-3".to_string(),
                outcome: "completed".to_string(),
            },
            &[rejected],
        );
        assert_eq!(failures[0].got, "w-3: no such agent started");
        assert!(
            failures[0].hints[0].starts_with("`w-3` was rejected instead of started: #0 "),
            "{:?}",
            failures[0].hints
        );
    }

    #[test]
    fn an_unmatched_filter_points_at_the_nearest_events() {
        let events = [
            finished(1, 0, 1, "x-1", 0),
            asked(1, 1, 2, "x", 1),
            finished(2, 2, 3, "y", 0),
            finished(3, 3, 4, "x-2", 0),
        ];
        let exists = Expectation::Exists(filter(&[
            ("kind", text("agent_finished")),
            ("agent", text("x")),
        ]));
        let failures = check(exists, &events);
        let hints = &failures[0].hints;
        assert_eq!(hints.len(), 3, "{hints:?}");
        assert!(hints[0].starts_with("nearest: #0 ") && hints[0].contains("name=x-1"));
        assert!(hints[1].contains("#3 ") && hints[1].contains("name=x-2"));
        assert!(hints[2].contains("name=y"));
        // A kind that never happened says so.
        let missing = Expectation::Exists(filter(&[("kind", text("limit_reached"))]));
        assert_eq!(
            check(missing, &events)[0].hints,
            vec!["no `limit_reached` event at all in this run".to_string()]
        );
    }
}
