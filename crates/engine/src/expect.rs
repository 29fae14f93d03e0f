//! `expect:` assertions over a finished run, checked while the run streams its events.
//!
//! [`Checker`] is a [`Sink`]: it keeps counters, not the trace, so a
//! million-event load run can be checked in constant memory. It remembers a few matching
//! events per assertion to show on failure.

use std::collections::BTreeMap;

use crate::event::{Event, EventKind, Field};
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
    /// Does `event` have every field of the filter with the wanted value?
    pub fn matches(&self, event: &Event) -> bool {
        let mut matched = vec![false; self.fields.len()];
        event.visit_fields(&mut |name, value| {
            for (index, (wanted_name, wanted)) in self.fields.iter().enumerate() {
                if wanted_name == name && field_equals(value, wanted, PREFIX_FIELDS.contains(&name))
                {
                    matched[index] = true;
                }
            }
        });
        matched.iter().all(|ok| *ok)
    }
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
    /// `blocking: {approx, tolerance}`: rejected / attempted spawns.
    Blocking {
        /// Expected fraction.
        approx: f64,
        /// Allowed absolute difference.
        tolerance: f64,
    },
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
}

const KEEP: usize = 5;

#[derive(Default)]
struct State {
    count: u64,
    kept: Vec<String>,
    order_next: usize,
    order_seqs: Vec<u64>,
}

/// Checks a list of assertions while events stream by.
pub struct Checker {
    expectations: Vec<Located>,
    states: Vec<State>,
    max_running: u64,
    running: u64,
    // (time of the "at", running after the last event at or before it)
    running_at: Vec<Option<u64>>,
    finals: BTreeMap<String, (String, u64)>,
    wanted_finals: Vec<String>,
    spawns_attempted: u64,
    spawns_rejected_cap: u64,
    agent_names: BTreeMap<u32, String>,
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

impl Checker {
    /// A checker for these assertions.
    pub fn new(expectations: Vec<Located>) -> Checker {
        let states = expectations.iter().map(|_| State::default()).collect();
        let running_at = expectations.iter().map(|_| None).collect();
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
            running: 0,
            running_at,
            finals: BTreeMap::new(),
            wanted_finals,
            spawns_attempted: 0,
            spawns_rejected_cap: 0,
            agent_names: BTreeMap::new(),
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
            let fail = |expected: String, got: String, events: Vec<String>| Failure {
                index,
                location: located.location.clone(),
                expected,
                got,
                events,
            };
            match &located.expectation {
                Expectation::Count { filter, compare } => {
                    if !compare.holds(state.count) {
                        failures.push(fail(
                            format!("{compare} events matching {filter}"),
                            format!("{} matching events", state.count),
                            state.kept.clone(),
                        ));
                    }
                }
                Expectation::MaxRunning(compare) => {
                    if !compare.holds(self.max_running) {
                        failures.push(fail(
                            format!("peak running count {compare}"),
                            format!("peak running count {}", self.max_running),
                            state.kept.clone(),
                        ));
                    }
                }
                Expectation::RunningAt { at, running } => {
                    let got = self.running_at[index].unwrap_or(self.running);
                    if got != *running {
                        failures.push(fail(
                            format!("{running} running at {at}"),
                            format!("{got} running at {at}"),
                            state.kept.clone(),
                        ));
                    }
                }
                Expectation::Final { agent, outcome } => {
                    let got = self
                        .finals
                        .get(agent)
                        .map(|(outcome, _)| outcome.clone())
                        .unwrap_or_else(|| "no such agent started".to_string());
                    if &got != outcome {
                        failures.push(fail(
                            format!("{agent} ends {outcome}"),
                            format!("{agent}: {got}"),
                            state.kept.clone(),
                        ));
                    }
                }
                Expectation::Order(filters) => {
                    if state.order_next < filters.len() {
                        let missing = &filters[state.order_next];
                        failures.push(fail(
                            format!(
                                "events in order: {}",
                                filters.iter().map(|f| f.to_string()).collect::<Vec<_>>().join(" → ")
                            ),
                            format!(
                                "matched {} of {}; no event matching {missing} came after the previous match",
                                state.order_next,
                                filters.len()
                            ),
                            state.kept.clone(),
                        ));
                    }
                }
                Expectation::Exists(filter) => {
                    if state.count == 0 {
                        failures.push(fail(
                            format!("an event matching {filter}"),
                            "no matching event".to_string(),
                            vec![],
                        ));
                    }
                }
                Expectation::Blocking { approx, tolerance } => {
                    let fraction = if self.spawns_attempted == 0 {
                        0.0
                    } else {
                        self.spawns_rejected_cap as f64 / self.spawns_attempted as f64
                    };
                    if (fraction - approx).abs() > *tolerance {
                        failures.push(fail(
                            format!("blocking {approx} ± {tolerance}"),
                            format!(
                                "blocking {fraction:.4} ({} of {} spawns rejected by the cap)",
                                self.spawns_rejected_cap, self.spawns_attempted
                            ),
                            vec![],
                        ));
                    }
                }
            }
        }
        failures
    }
}

impl Sink for Checker {
    fn event(&mut self, event: &Event) {
        // Running count bookkeeping, for `at` (value just before this event's time is
        // final once time moves past `at`).
        for (index, located) in self.expectations.iter().enumerate() {
            if let Expectation::RunningAt { at, .. } = located.expectation {
                if event.t > at && self.running_at[index].is_none() {
                    self.running_at[index] = Some(self.running);
                }
            }
        }
        if let Some(running) = event.kind.running() {
            self.running = u64::from(running);
            if self.running > self.max_running {
                self.max_running = self.running;
            }
        }
        match &event.kind {
            EventKind::SpawnRequested { .. } => self.spawns_attempted += 1,
            EventKind::SpawnRejected {
                reason: subsim_rules::RejectReason::ConcurrentLimit,
                ..
            } => {
                self.spawns_rejected_cap += 1;
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
            _ => {}
        }
        for (located, state) in self.expectations.iter().zip(self.states.iter_mut()) {
            match &located.expectation {
                Expectation::Count { filter, .. } | Expectation::Exists(filter)
                    if filter.matches(event) =>
                {
                    state.count += 1;
                    if state.kept.len() < KEEP {
                        state.kept.push(short(event));
                    }
                }
                Expectation::Order(filters) => {
                    if let Some(next) = filters.get(state.order_next) {
                        if next.matches(event) {
                            state.order_next += 1;
                            state.order_seqs.push(event.seq);
                            state.kept.push(short(event));
                        }
                    }
                }
                Expectation::MaxRunning(_) => {
                    if let Some(running) = event.kind.running() {
                        if u64::from(running) == self.max_running && state.kept.is_empty() {
                            state.kept.push(short(event));
                        }
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
