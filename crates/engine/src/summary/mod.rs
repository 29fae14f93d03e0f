//! Run statistics: a [`Summary`] that aggregates the trace as it streams by, and renders
//! the result as an aligned text table or as JSON. It is a [`Sink`]; the kernel can also
//! keep one itself (`Simulation::run_summarized`), calling its typed entries
//! (`Summary::agent_started_at` …) for the frequent kinds instead of building their
//! events: the entries are what `Sink::event` runs for those kinds, so both ways count
//! the same (`tests/integration/summary_paths.rs`).
//!
//! Its `#[inline(…)]` and `#[cold]` attributes are measured: docs/PERFORMANCE.md, "Choices
//! that need a benchmark".
//!
//! Memory is constant per event, except that the waits of answered permission prompts are
//! kept (one `u64` each) for the 95th percentile. It measures what the trace says; it
//! makes no decisions and knows no rules.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::rc::Rc;

use subsim_rules::notify::Notice;
use subsim_rules::prompt::RoutedTo;
use subsim_rules::RejectReason;

use crate::event::{Event, EventKind, Limit, Outcome};
use crate::render::jsonl::write_string;
use crate::sink::Sink;
use crate::spec::{Retry, SimSpec};
use crate::stats::{Estimate, Quantiles};
use crate::time::{human_duration, SimTime};

mod json;
mod load;
#[cfg(test)]
mod tests;
mod text;

use load::*;
pub use load::{LoadReport, SecondsDistribution, TypeReport, WaitStats};

/// The outcomes in the order tables list them.
const OUTCOMES: [Outcome; 5] = [
    Outcome::Completed,
    Outcome::Partial,
    Outcome::Failed,
    Outcome::Stopped,
    Outcome::Cancelled,
];

/// Where a prompt can be shown, as tables and JSON name it, in their (alphabetical)
/// order: counted by index, not looked up by name per prompt.
const ROUTES: [&str; 3] = ["main", "terminal", "unrouted"];

/// Where a prompt was shown, as [`ROUTES`]'s index (an enum, so that a waiting prompt's
/// entry in `Summary::pending` takes 8 bytes).
#[derive(Clone, Copy, Debug)]
enum Shown {
    Main = 0,
    Terminal = 1,
    Unrouted = 2,
}

/// Where a prompt was shown.
#[inline]
fn route_index(routed_to: Option<RoutedTo>) -> Shown {
    match routed_to {
        Some(RoutedTo::Main) => Shown::Main,
        Some(RoutedTo::Terminal) => Shown::Terminal,
        None => Shown::Unrouted,
    }
}

/// Aggregate statistics of one run.
///
/// ```
/// use subsim_engine::summary::Summary;
/// use subsim_engine::{AgentRef, Event, EventKind, Outcome, SimTime, Sink};
/// let mut summary = Summary::default();
/// summary.event(&Event { t: SimTime::from_secs(10), seq: 0, rule: None,
///     kind: EventKind::AgentFinished { agent: AgentRef { id: 1, name: None },
///         outcome: Outcome::Completed, running: 0, detail: None } });
/// assert_eq!(summary.makespan(), SimTime::from_secs(10));
/// assert!(summary.render_json().contains("\"completed\":1"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Summary {
    events: u64,
    cap: Option<u32>,
    spawns_requested: u64,
    started: u64,
    rejected: [u64; RejectReason::ALL.len()],
    resumes: u64,
    resumes_past_cap: u64,
    running: u32,
    peak_running: u32,
    /// ∫ running dt, in running·µs, up to `area_to` (µs): the count is constant between
    /// its changes, so the area grows only when it changes ([`Summary::set_running`]), and
    /// [`Summary::running_area`] adds the part since.
    running_area: u128,
    area_to: u64,
    last_t: SimTime,
    /// Prompts shown, by where ([`ROUTES`]'s index; a route none was shown at has 0).
    prompts_by_route: [u64; ROUTES.len()],
    auto_denied: u64,
    withdrawn: u64,
    /// Prompt number → where it was shown and its type's index in `prompt_types`, while
    /// it waits for an answer (one window for both: one insert and one remove a prompt).
    pending: crate::ids::Window<(Shown, u32)>,
    /// Where a prompt was shown ([`ROUTES`]'s index) → the waits of its answered prompts,
    /// µs (empty: none answered there).
    waits: [Vec<u64>; ROUTES.len()],
    finished: [u64; OUTCOMES.len()],
    /// Notifications by `what`, at [`Notice::ALL`]'s index.
    notifications: [u64; Notice::ALL.len()],
    limit: Option<(Limit, u64)>,
    /// The load generator's arrivals.
    load: LoadStats,
    /// Waits of answered prompts, every route (from the warm-up on).
    prompt_waits: Quantiles,
    /// Prompts shown and not yet answered, over time.
    prompt_queue: TimeAverage,
    /// Per type of the asking agent, in order of first prompt: waits and queue length.
    prompt_types: Vec<(Rc<str>, PromptStats)>,
    /// The type of the last prompt, with its index in `prompt_types`: the kernel hands
    /// out the same `Rc` again and again, so a pointer compare finds it.
    prompt_type_cache: Option<(Rc<str>, usize)>,
    /// Whether `prompt_types` keep their statistics apart from the totals. Until then
    /// there is at most one type, every prompt shown was of it and every answer and
    /// withdrawal found its prompt, so its waits and queue are `prompt_waits` and
    /// `prompt_queue` exactly: they are recorded once, and copied to the type when that
    /// stops being true ([`Summary::prompt_types_apart`]).
    types_apart: bool,
}

/// One agent type's prompts: waits of the answered ones (shown at or after the warm-up),
/// and how many of its prompts are shown and not yet answered, over time.
#[derive(Clone, Debug, Default)]
struct PromptStats {
    waits: Quantiles,
    queue: TimeAverage,
}

/// Prompt statistics of one agent type ([`Summary::prompt_report_by_type`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PromptTypeReport {
    /// The asking agents' type (`main` for the main session).
    pub agent_type: String,
    /// Waits of its answered prompts, shown → answered, s.
    pub waits: SecondsDistribution,
    /// Time-weighted mean number of its prompts shown and not yet answered.
    pub queue: Estimate,
    /// The most of its prompts shown and not yet answered at once.
    pub queue_peak: u32,
}

impl Sink for Summary {
    /// Every kind: the ones every run has many of (a load run: a request, a start, an end
    /// and a notification per arrival) through the typed entries the kernel calls
    /// directly (`Summary::agent_started_at` …), every other kind through
    /// `Summary::other_event`, out of line, so that this function stays a bare dispatch.
    fn event(&mut self, event: &Event) {
        let t = event.t;
        match &event.kind {
            EventKind::SpawnRequested {
                arrival,
                agent_type,
                stream,
                ..
            } => self.spawn_requested_at(t, agent_type, *arrival, stream.as_ref()),
            EventKind::SpawnRejected {
                reason, running, ..
            } => self.spawn_rejected_at(t, *reason, *running),
            EventKind::AgentStarted {
                agent,
                profile,
                running,
                ..
            } => self.agent_started_at(t, agent.id, &profile.agent_type, *running),
            EventKind::AgentFinished {
                outcome,
                agent,
                running,
                ..
            } => self.agent_finished_at(t, agent.id, *outcome, *running),
            EventKind::Notification { what, .. } => self.notification_at(t, *what),
            EventKind::ReportDelivered { .. } => self.report_delivered_at(t),
            EventKind::PermissionRequested {
                agent_type,
                routed_to,
                auto_denied: false,
                prompt,
                ..
            } => self.prompt_shown_at(t, agent_type, *routed_to, *prompt),
            EventKind::PermissionAnswered {
                waited_us, prompt, ..
            } => self.prompt_answered_at(t, *waited_us, *prompt),
            EventKind::ToolCalled { .. } => self.tool_called_at(t),
            // The panel's bookkeeping after the last decision is not in the makespan
            // (EventKind::moves_the_end); a panel change carries no running count.
            EventKind::PanelChanged { .. } => {
                self.events += 1;
                self.other_event(event);
            }
            // A draw is not a decision: counted, not in the makespan (issue #32).
            EventKind::DurationDrawn { .. } => self.duration_drawn_at(),
            EventKind::SessionStarted { .. }
            | EventKind::PermissionRequested { .. }
            | EventKind::PermissionWithdrawn { .. }
            | EventKind::AgentWaiting { .. }
            | EventKind::AgentBackgrounded { .. }
            | EventKind::AgentResumed { .. }
            | EventKind::MessageDelivered { .. }
            | EventKind::MessageRejected { .. }
            | EventKind::StopRequested { .. }
            | EventKind::ConversationCleared
            | EventKind::DefinitionNoted { .. }
            | EventKind::HookFired { .. }
            | EventKind::HookSkipped { .. }
            | EventKind::ContinuationRequested { .. }
            | EventKind::ModelSwitched { .. }
            | EventKind::Worktree { .. }
            | EventKind::ActionIgnored { .. }
            | EventKind::LimitReached { .. } => {
                self.count(t);
                self.other_event(event);
            }
        }
    }
}

/// The typed entries: what [`Sink::event`] does with an event of each frequent kind, given
/// the fields it reads. The kernel's trace writer (`sim/trace.rs`) calls them directly
/// when it keeps a summary, without building the event: the two paths are one code.
impl Summary {
    /// A `spawn_requested` at `t` (`arrival`: the load generator's, if it is one).
    #[inline(never)]
    pub(crate) fn spawn_requested_at(
        &mut self,
        t: SimTime,
        agent_type: &Rc<str>,
        arrival: Option<u64>,
        stream: Option<&Rc<str>>,
    ) {
        self.count(t);
        self.spawns_requested += 1;
        self.load.pending = None;
        if let Some(arrival) = arrival {
            self.load.requested(arrival, agent_type, stream);
        }
    }

    /// A `spawn_rejected` at `t` for `reason`, `running` running.
    #[inline(never)]
    pub(crate) fn spawn_rejected_at(&mut self, t: SimTime, reason: RejectReason, running: u32) {
        self.count(t);
        let t = t.as_micros();
        self.set_running(t, running);
        self.rejected[reject_index(reason)] += 1;
        if self.load.pending.is_some() {
            self.load
                .rejected(t, reason == RejectReason::ConcurrentLimit);
        }
    }

    /// An `agent_started` at `t` of run `id`, of `agent_type`, `running` running.
    #[inline(never)]
    pub(crate) fn agent_started_at(
        &mut self,
        t: SimTime,
        id: u32,
        agent_type: &Rc<str>,
        running: u32,
    ) {
        self.count(t);
        self.on_agent_started(t.as_micros(), id, agent_type, running);
    }

    /// An `agent_finished` at `t` of run `id`, `running` running after it.
    #[inline(never)]
    pub(crate) fn agent_finished_at(
        &mut self,
        t: SimTime,
        id: u32,
        outcome: Outcome,
        running: u32,
    ) {
        self.count(t);
        self.on_agent_finished(t.as_micros(), id, outcome, running);
    }

    /// A `notification` of `what` at `t`.
    #[inline(never)]
    pub(crate) fn notification_at(&mut self, t: SimTime, what: Notice) {
        self.count(t);
        self.notifications[notice_index(what)] += 1;
    }

    /// A `report_delivered` at `t`: it carries no running count and no statistic of its
    /// own, so it is only counted.
    #[inline]
    pub(crate) fn report_delivered_at(&mut self, t: SimTime) {
        self.count(t);
    }

    /// A `duration_drawn`: only counted; a draw is no decision, so it is not in the
    /// makespan (`EventKind::moves_the_end`).
    #[inline]
    pub(crate) fn duration_drawn_at(&mut self) {
        self.events += 1;
    }

    /// A `permission_requested` at `t` shown to the person (not auto-denied): prompt
    /// `prompt` of an agent of `agent_type`, shown where `routed_to` says.
    #[inline(never)]
    pub(crate) fn prompt_shown_at(
        &mut self,
        t: SimTime,
        agent_type: &Rc<str>,
        routed_to: Option<RoutedTo>,
        prompt: u64,
    ) {
        self.count(t);
        let route = route_index(routed_to);
        self.prompts_by_route[route as usize] += 1;
        let index = self.prompt_type(agent_type);
        let entry = (route, index as u32);
        let replaced = self.pending.insert(prompt, entry).is_some();
        if replaced && !self.types_apart {
            // The queue keeps its length, the type's count grows.
            self.prompt_types_apart();
        }
        self.prompt_queue_changed(t);
        if self.types_apart {
            self.prompt_type_queue(index, t, 1);
        }
    }

    /// A `permission_answered` at `t` of prompt `prompt`, `waited_us` after it was shown.
    #[inline(never)]
    pub(crate) fn prompt_answered_at(&mut self, t: SimTime, waited_us: u64, prompt: u64) {
        self.count(t);
        let pending = self.pending.remove(prompt);
        if pending.is_none() && !self.types_apart {
            self.prompt_types_apart();
        }
        let route = pending.map_or(route_index(None), |(route, _)| route);
        self.waits[route as usize].push(waited_us);
        let shown_at = t.as_micros().saturating_sub(waited_us);
        let counted = shown_at >= self.load.warmup;
        if counted {
            self.prompt_waits.record(waited_us);
        }
        self.prompt_queue_changed(t);
        if let Some((_, index)) = pending.filter(|_| self.types_apart) {
            let index = index as usize;
            if counted {
                self.prompt_types[index].1.waits.record(waited_us);
            }
            self.prompt_type_queue(index, t, -1);
        }
    }

    /// A `tool_called` at `t`: it carries no running count and no statistic of its own,
    /// so it is only counted.
    #[inline]
    pub(crate) fn tool_called_at(&mut self, t: SimTime) {
        self.count(t);
    }

    /// Not an event: the run of agent `id` will soon take a step (and may end). Reads its
    /// per-type entry, changes nothing (`sim/ahead.rs` loads it ahead).
    #[inline]
    pub(crate) fn preload(&self, id: u32) -> u64 {
        self.load.running_types.preload(id)
    }
}

/// `outcome`'s index in [`OUTCOMES`] (the declaration order; a unit test checks it).
#[inline]
fn outcome_index(outcome: Outcome) -> usize {
    outcome as usize
}

/// `reason`'s index in [`RejectReason::ALL`] (the declaration order; the rules crate's test
/// holds `ALL` to every reason in that order).
#[inline]
fn reject_index(reason: RejectReason) -> usize {
    reason as usize
}

/// `what`'s index in [`Notice::ALL`] (the declaration order; a unit test checks it).
#[inline]
fn notice_index(what: Notice) -> usize {
    what as usize
}

impl Summary {
    /// Every event (at `t`): counted, and the makespan.
    #[inline]
    fn count(&mut self, t: SimTime) {
        self.events += 1;
        self.last_t = self.last_t.max(t);
    }

    /// An `agent_started` (counted).
    #[inline]
    fn on_agent_started(&mut self, t: u64, id: u32, agent_type: &Rc<str>, running: u32) {
        self.started += 1;
        let load = &mut self.load;
        if !load.off {
            // The usual start: of type 0 (the type last started), one type only so far,
            // and not a retry: [`LoadStats::started`] counts at most a first start then,
            // and touches nothing `set_running` does, so the order does not matter.
            let usual = !load.split
                && !matches!(load.pending, Some((_, _, _, false)))
                && matches!(&load.start_cache, Some((known, 0)) if Rc::ptr_eq(known, agent_type));
            if !usual {
                return self.agent_started_slow(t, id, agent_type, running);
            }
            if let Some((_, index, stream, _)) = load.pending.take() {
                if t >= load.warmup {
                    load.first_start(index, stream);
                }
            }
        }
        self.set_running(t, running);
    }

    /// [`Summary::agent_started`], every case.
    #[inline(never)]
    fn agent_started_slow(&mut self, t: u64, id: u32, agent_type: &Rc<str>, running: u32) {
        // (The total's running count first: the split of the per-type counts copies it.)
        let previous = self.set_running(t, running);
        self.load.started(t, id, agent_type, previous);
    }

    /// An `agent_finished` (counted).
    #[inline]
    fn on_agent_finished(&mut self, t: u64, id: u32, outcome: Outcome, running: u32) {
        self.finished[outcome_index(outcome)] += 1;
        if self.load.split {
            return self.agent_finished_by_type(t, id, running);
        }
        self.load.finished(t, id);
        // (Last: `load.finished` reads only the per-type counts.)
        self.set_running(t, running);
    }

    /// [`Summary::agent_finished`] once the running counts are kept per type.
    #[inline(never)]
    fn agent_finished_by_type(&mut self, t: u64, id: u32, running: u32) {
        self.load.finished(t, id);
        self.set_running(t, running);
    }

    /// The running count an event carries is `running` from `t` on; returns the count
    /// before it. `last_t` already counts the event.
    #[inline]
    fn set_running(&mut self, t: u64, running: u32) -> u32 {
        let previous = self.running;
        self.running = running;
        self.peak_running = self.peak_running.max(running);
        if running != previous {
            // The count was `previous` from `area_to` to this event (the time-weighted
            // area, one multiply per change instead of one per event).
            let now = self.last_t.as_micros();
            self.running_area += u128::from(previous) * u128::from(now - self.area_to);
            self.area_to = now;
            let warmup = self.load.warmup;
            self.load.all.running.set(t, running, warmup);
        }
        previous
    }

    /// [`Sink::event`] for the kinds without a method of their own (`count` is done).
    #[inline(never)]
    fn other_event(&mut self, event: &Event) {
        let previous_running = match event.kind.running() {
            Some(running) => self.set_running(event.t.as_micros(), running),
            None => self.running,
        };
        match &event.kind {
            EventKind::SessionStarted { cap, .. } => self.cap = *cap,
            EventKind::AgentResumed { running, agent, .. } => {
                if !self.load.off {
                    self.load
                        .resumed(event.t.as_micros(), agent.id, previous_running);
                }
                self.resumes += 1;
                if self.cap.is_some_and(|cap| *running > cap) {
                    self.resumes_past_cap += 1;
                }
            }
            // A shown prompt's request is a typed entry's (`Sink::event`).
            EventKind::PermissionRequested { .. } => self.auto_denied += 1,
            EventKind::PermissionWithdrawn { prompt, .. } => {
                let pending = self.pending.remove(*prompt);
                if pending.is_none() && !self.types_apart {
                    self.prompt_types_apart();
                }
                self.withdrawn += 1;
                self.prompt_queue_changed(event.t);
                if let Some((_, index)) = pending.filter(|_| self.types_apart) {
                    let index = index as usize;
                    self.prompt_type_queue(index, event.t, -1);
                }
            }
            EventKind::LimitReached { limit, value } => {
                self.limit = Some((*limit, *value));
            }
            // Requests, refusals, starts, ends, notifications, deliveries, shown prompts,
            // answers and tool calls: the typed entries (`Sink::event` never hands them
            // here).
            EventKind::SpawnRequested { .. }
            | EventKind::SpawnRejected { .. }
            | EventKind::AgentStarted { .. }
            | EventKind::ToolCalled { .. }
            | EventKind::PermissionAnswered { .. }
            | EventKind::AgentWaiting { .. }
            | EventKind::AgentBackgrounded { .. }
            | EventKind::AgentFinished { .. }
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
            | EventKind::DurationDrawn { .. } => {}
        }
    }
}

impl Summary {
    /// A summary that has seen nothing.
    pub fn new() -> Summary {
        Summary::default()
    }

    /// A summary for a run of `spec`: it knows the load's warm-up and whether its retry
    /// policy tries rejected arrivals again (what makes an arrival *delayed*).
    pub fn for_spec(spec: &SimSpec) -> Summary {
        let mut summary = Summary::default();
        summary.load.off = spec.load.is_none();
        if let Some(load) = &spec.load {
            summary.load.warmup = load.warmup.as_micros();
            let retries = |stream: &crate::spec::LoadStream| stream.retry != Retry::None;
            summary.load.retries = load.streams.iter().any(retries);
            summary.load.mixed = summary.load.retries && !load.streams.iter().all(retries);
            if load
                .streams
                .iter()
                .all(|stream| stream.retry == Retry::Queue)
            {
                summary.load.queued_load = spec.offered_load();
            }
            summary.load.streams = load
                .streams
                .iter()
                .filter_map(|stream| {
                    let name = stream.name.clone()?;
                    Some((name, retries(stream), TypeLoad::default()))
                })
                .collect();
        }
        summary
    }

    /// The index of `agent_type` in `prompt_types`, added if new.
    fn prompt_type(&mut self, agent_type: &Rc<str>) -> usize {
        if let Some((known, index)) = &self.prompt_type_cache {
            if Rc::ptr_eq(known, agent_type) {
                return *index;
            }
        }
        let index = self.prompt_type_slow(agent_type);
        self.prompt_type_cache = Some((agent_type.clone(), index));
        index
    }

    /// [`Summary::prompt_type`] by name.
    #[cold]
    fn prompt_type_slow(&mut self, agent_type: &Rc<str>) -> usize {
        match self
            .prompt_types
            .iter()
            .position(|(known, _)| **known == **agent_type)
        {
            Some(index) => index,
            None => {
                if !self.prompt_types.is_empty() && !self.types_apart {
                    // A second type: the first keeps its own statistics from now on.
                    self.prompt_types_apart();
                }
                self.prompt_types
                    .push((agent_type.clone(), PromptStats::default()));
                self.prompt_types.len() - 1
            }
        }
    }

    /// The prompt types' statistics are kept apart from the totals from now on: the only
    /// type so far (if any) starts from the totals, which were its statistics until now.
    #[cold]
    #[inline(never)]
    fn prompt_types_apart(&mut self) {
        self.types_apart = true;
        if let Some((_, stats)) = self.prompt_types.first_mut() {
            stats.waits = self.prompt_waits.clone();
            stats.queue = self.prompt_queue.clone();
        }
    }

    /// Type `index` has `change` (±1) prompts more waiting for an answer from `t` on.
    fn prompt_type_queue(&mut self, index: usize, t: SimTime, change: i32) {
        let warmup = self.load.warmup;
        let queue = &mut self.prompt_types[index].1.queue;
        let value = queue.value.saturating_add_signed(change);
        queue.set(t.as_micros(), value, warmup);
    }

    /// Prompt waits and queue length per type of the asking agent, in order of the type's
    /// first prompt (see [`Summary::prompt_report`]).
    pub fn prompt_report_by_type(&self) -> Vec<PromptTypeReport> {
        let end = self.last_t.as_micros();
        self.prompt_types
            .iter()
            .map(|(agent_type, stats)| {
                // The only type, of every prompt: its statistics are the totals.
                let (waits, queue) = if self.types_apart {
                    (&stats.waits, &stats.queue)
                } else {
                    (&self.prompt_waits, &self.prompt_queue)
                };
                PromptTypeReport {
                    agent_type: agent_type.to_string(),
                    waits: seconds(waits.distribution()),
                    queue: queue
                        .estimate(end, self.load.warmup)
                        .clamped(0.0, f64::INFINITY),
                    queue_peak: queue.peak,
                }
            })
            .collect()
    }

    fn prompt_queue_changed(&mut self, t: SimTime) {
        let length = self.pending.len() as u32;
        self.prompt_queue
            .set(t.as_micros(), length, self.load.warmup);
    }

    /// The load statistics (`None` when the run had no load arrivals after the warm-up).
    pub fn load_report(&self) -> Option<LoadReport> {
        if self.load.all.arrivals == 0 && self.load.all.first_starts == 0 {
            return None;
        }
        let end = self.last_t.as_micros();
        let warmup = self.load.warmup;
        let window = end.saturating_sub(warmup) as f64 / 1e6;
        let report = |stats: &TypeLoad, cap: Option<u32>| {
            let stats = &stats.settled(self.load.mixed);
            let running = stats
                .running
                .estimate(end, warmup)
                .clamped(0.0, f64::INFINITY);
            TypeReport {
                arrivals: stats.arrivals,
                attempts: stats.attempts,
                blocking: stats.blocked.estimate().clamped(0.0, 1.0),
                blocking_attempts: if stats.attempts == 0 {
                    0.0
                } else {
                    stats.rejected_attempts as f64 / stats.attempts as f64
                },
                // A delayed arrival is one whose first attempt the cap rejected, when the
                // policy retries: the same observations as blocking, or none (or, when
                // some streams retry and others do not, observations of their own).
                delayed: if self.load.mixed {
                    stats.delayed.estimate().clamped(0.0, 1.0)
                } else if self.load.retries {
                    stats.blocked.estimate().clamped(0.0, 1.0)
                } else {
                    Estimate::default()
                },
                wait: seconds(stats.wait.distribution()),
                delayed_wait: seconds(stats.delayed_wait.distribution()),
                running,
                utilisation: cap.map(|cap| running.scaled(1.0 / f64::from(cap.max(1)))),
            }
        };
        Some(LoadReport {
            saturated: match (self.load.queued_load, self.cap) {
                (Some(offered), Some(cap)) if offered >= f64::from(cap) => Some(offered),
                _ => None,
            },
            retries: self.load.retries,
            warmup: warmup as f64 / 1e6,
            window,
            throughput: if window > 0.0 {
                self.load.finished as f64 / window
            } else {
                0.0
            },
            all: report(&self.load.all, self.cap),
            by_type: (0..self.load.types.len())
                .map(|index| {
                    let stats = self.load.type_stats(index);
                    (self.load.types[index].0.to_string(), report(&stats, None))
                })
                .collect(),
            by_stream: self
                .load
                .streams
                .iter()
                .map(|(name, retries, stats)| {
                    let blocking = stats
                        .settled(self.load.mixed)
                        .blocked
                        .estimate()
                        .clamped(0.0, 1.0);
                    let stream = TypeReport {
                        delayed: if *retries {
                            blocking
                        } else {
                            Estimate::default()
                        },
                        running: Estimate::default(),
                        ..report(stats, None)
                    };
                    (name.to_string(), *retries, stream)
                })
                .collect(),
        })
    }

    /// Waits of answered prompts (shown → answered), every route, in seconds; and the
    /// prompt queue's time-weighted mean length and peak.
    pub fn prompt_report(&self) -> (SecondsDistribution, Estimate, u32) {
        let end = self.last_t.as_micros();
        (
            seconds(self.prompt_waits.distribution()),
            // A queue length is never negative: its interval stops at 0, as every count's.
            self.prompt_queue
                .estimate(end, self.load.warmup)
                .clamped(0.0, f64::INFINITY),
            self.prompt_queue.peak,
        )
    }

    /// Time of the last event.
    pub fn makespan(&self) -> SimTime {
        self.last_t
    }

    /// The session's cap (`None` without one, or before `session_started`).
    pub fn cap(&self) -> Option<u32> {
        self.cap
    }

    /// Events seen.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Agent tool calls made.
    pub fn spawns_requested(&self) -> u64 {
        self.spawns_requested
    }

    /// Runs started (spawned agents and `/subtask` forks).
    pub fn started(&self) -> u64 {
        self.started
    }

    /// Spawns refused for `reason`.
    pub fn rejected(&self, reason: RejectReason) -> u64 {
        RejectReason::ALL
            .iter()
            .position(|known| *known == reason)
            .map_or(0, |index| self.rejected[index])
    }

    /// Spawns refused for any reason.
    pub fn rejected_total(&self) -> u64 {
        self.rejected.iter().sum::<u64>()
    }

    /// Resumes of finished agents, and how many of them left the running count above the cap.
    pub fn resumes(&self) -> (u64, u64) {
        (self.resumes, self.resumes_past_cap)
    }

    /// Peak of the running-subagent count.
    pub fn peak_running(&self) -> u32 {
        self.peak_running
    }

    /// Mean running-subagent count, weighted by time over the makespan (0 for an empty run).
    pub fn mean_running(&self) -> f64 {
        if self.last_t.as_micros() == 0 {
            return 0.0;
        }
        self.running_area() as f64 / self.last_t.as_micros() as f64
    }

    /// ∫ running dt up to the last event, in running·µs: the same sum as adding
    /// `running × (t − last t)` at every event, as the count holds from one event to the
    /// next.
    fn running_area(&self) -> u128 {
        let since = self.last_t.as_micros() - self.area_to;
        self.running_area + u128::from(self.running) * u128::from(since)
    }

    /// Cap rejections / spawn requests (0 when nothing was requested).
    pub fn blocking(&self) -> f64 {
        if self.spawns_requested == 0 {
            return 0.0;
        }
        self.rejected(RejectReason::ConcurrentLimit) as f64 / self.spawns_requested as f64
    }

    /// Prompts shown, by where they were shown (`main`, `terminal`).
    pub fn prompts_by_route(&self) -> BTreeMap<&'static str, u64> {
        self.routes_shown().collect()
    }

    /// [`Summary::prompts_by_route`] in order, without the routes no prompt was shown at.
    fn routes_shown(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        ROUTES
            .into_iter()
            .zip(self.prompts_by_route)
            .filter(|(_, count)| *count > 0)
    }

    /// The answered prompts' waits by route in order, without the routes none was
    /// answered at.
    fn routes_waited(&self) -> impl Iterator<Item = (&'static str, &[u64])> + '_ {
        ROUTES
            .into_iter()
            .zip(&self.waits)
            .filter(|(_, waits)| !waits.is_empty())
            .map(|(route, waits)| (route, &waits[..]))
    }

    /// Prompts auto-denied without being shown (PERM-5).
    pub fn auto_denied(&self) -> u64 {
        self.auto_denied
    }

    /// Wait statistics of the answered prompts that were shown at `route` (`main`: in the
    /// main session).
    pub fn waits(&self, route: &str) -> WaitStats {
        let waits = ROUTES
            .iter()
            .position(|known| *known == route)
            .map_or(&[][..], |index| &self.waits[index][..]);
        WaitStats::of(waits)
    }

    /// Runs that ended with `outcome`.
    pub fn finished(&self, outcome: Outcome) -> u64 {
        OUTCOMES
            .iter()
            .position(|known| *known == outcome)
            .map_or(0, |index| self.finished[index])
    }

    /// Notifications by `what`.
    pub fn notifications(&self) -> BTreeMap<&'static str, u64> {
        Notice::ALL
            .iter()
            .zip(self.notifications)
            .filter(|(_, count)| *count > 0)
            .map(|(what, count)| (what.as_str(), count))
            .collect()
    }

    /// The safety limit that ended the run, if one did.
    pub fn limit(&self) -> Option<(&'static str, u64)> {
        self.limit.map(|(limit, value)| (limit.as_str(), value))
    }
}
