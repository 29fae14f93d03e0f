//! The trace writer: every event the kernel writes goes through [`Trace`], which numbers
//! it, hands it to the sink and the summary and stops the trace at a safety limit.
//!
//! # Where the trace goes
//!
//! A run writes into a sink, a [`Summary`] kept by the kernel, or both
//! (`Simulation::run`, `Simulation::run_summarized`). The sink is given every event. The
//! summary is given every kind this module keeps an event for through its typed entries
//! ([`Summary::agent_started_at`] …: the code its own `Sink::event` runs for those
//! kinds) with the fields the caller passed, and every other kind as an event. With no
//! sink, the frequent events are not built at all: a load run's summary costs its counts,
//! not a trace.
//!
//! # Ground rules of the kept events
//!
//! The kinds a load run writes for nearly every arrival (a request, a refusal, a start, an
//! end, a notification, a report delivered; and a prompt's request, answer and tool call)
//! each have a method of their own here, and each such method writes its event into one
//! [`Event`] kept for that kind ([`Kept`]), in place, and hands that to the sink: an event
//! built anew is written into a temporary and copied whole, which stalls on store
//! forwarding, and is dropped through the generic drop of `EventKind` afterwards (see
//! docs/PERFORMANCE.md, "Choices that need a benchmark"). So:
//!
//! * Each kept event's variant is set once, by [`Kept::new`], and never changes: nothing
//!   outside this module can reach a kept event, and each method here matches only its
//!   own kept event, with an `unreachable!` arm that [`Kept::new`] rules out (a unit test
//!   writes every kind once).
//! * A method writes every field of its event, or leaves one as it is only when it holds
//!   the value the method would write (a shared string or profile compared by address,
//!   [`keep`]). `report_delivered_again` is the one exception, with its own rule: it
//!   writes who from and who to and leaves the text, scan note and verdict of the last
//!   [`Trace::report_delivered`] call that kept them, which the delivery memo
//!   (`decide.rs`) vouches for; debug builds compare.
//! * Every other event is built by the caller and handed to [`Trace::event`].
//! * With no sink, the kept events are not written (nobody reads them), except
//!   `report_delivered`'s, which `report_delivered_again` and the debug check of the
//!   delivery memo read.
//!
//! Nothing is written once a safety limit has ended the trace: the `limit_reached` event
//! is the last one.
//!
//! Its `#[inline(…)]` and `#[cold]` attributes are measured: docs/PERFORMANCE.md, "Choices
//! that need a benchmark".

use std::rc::Rc;

use subsim_rules::handback::ReviewOutcome;
use subsim_rules::isolation::Cwd;
use subsim_rules::notify::Notice;
use subsim_rules::prompt::RoutedTo;
use subsim_rules::toolcall::ToolStep;
use subsim_rules::{Mode, RejectReason, RuleId};

use crate::event::{
    AgentId, AgentRef, DrawnFor, DrawnOn, Event, EventKind, Limit, Outcome, RunProfile, ToolRefusal,
};
use crate::sink::Sink;
use crate::spec::{Answer, Limits};
use crate::summary::Summary;
use crate::time::SimTime;

use super::LimitHit;

/// The trace being written, and the safety limits that can end it.
pub(super) struct Trace<'s> {
    /// Given every event, if there is one.
    sink: Option<&'s mut dyn Sink>,
    /// Kept through its typed entries, if there is one (see "Where the trace goes").
    summary: Option<&'s mut Summary>,
    /// The next event's seq (= events written so far).
    pub(super) seq: u64,
    /// Virtual time of the last event.
    pub(super) last_time: SimTime,
    /// The safety limit that stopped the run, once one has.
    pub(super) limit: Option<LimitHit>,
    pub(super) limits: Limits,
    /// Steps left in the current block (`Kernel::next_step_block`): at most the smaller
    /// of `max_instant_steps` and `max_silent_steps`, and together with `steps_after`
    /// what `max_steps` (`Limits::steps`) leaves. Only this is counted per step.
    pub(super) steps_left: u64,
    /// Steps `max_steps` leaves after the current block.
    pub(super) steps_after: u64,
    /// When the current block began, the events written by then, and its length.
    pub(super) block_start: SimTime,
    pub(super) block_seq: u64,
    pub(super) block_len: u64,
    /// Steps of the whole blocks just before this one taken at one instant, and taken
    /// without an event written (`max_instant_steps`, `max_silent_steps`).
    pub(super) instant_run: u64,
    pub(super) silent_run: u64,
    /// The events of the frequent kinds, kept built (see the module's ground rules).
    kept: Kept,
}

/// A `spawn_requested`'s fields.
pub(super) struct Requested<'a> {
    pub(super) caller: &'a AgentRef,
    pub(super) agent_type: &'a Rc<str>,
    pub(super) name: &'a Option<Rc<str>>,
    pub(super) background: Option<bool>,
    pub(super) fork: bool,
    pub(super) arrival: Option<u64>,
    pub(super) stream: Option<&'a Rc<str>>,
}

/// A `spawn_rejected`'s fields (its `hint` is `cap::hint` of the reason).
pub(super) struct Rejected<'a> {
    pub(super) caller: AgentRef,
    pub(super) agent_type: &'a Rc<str>,
    pub(super) name: Option<Rc<str>>,
    pub(super) reason: RejectReason,
    pub(super) message: &'a Rc<str>,
    pub(super) running: u32,
}

/// An `agent_started`'s fields.
pub(super) struct Started<'a> {
    pub(super) agent: AgentRef,
    pub(super) parent: AgentRef,
    pub(super) depth: u32,
    pub(super) mode: Mode,
    pub(super) fork: bool,
    pub(super) running: u32,
    pub(super) cap_checked: bool,
    pub(super) profile: &'a Rc<RunProfile>,
}

/// A `report_delivered`'s fields.
pub(super) struct Delivery {
    pub(super) agent: AgentRef,
    pub(super) to: AgentRef,
    pub(super) text: Rc<str>,
    pub(super) scan: Option<Rc<str>>,
    pub(super) review: Option<ReviewOutcome>,
}

/// A prompt's `permission_requested` (shown to the person, not auto-denied).
pub(super) struct Prompted<'a> {
    pub(super) agent: AgentRef,
    pub(super) agent_type: &'a Rc<str>,
    pub(super) tool: &'a Rc<str>,
    pub(super) routed_to: Option<RoutedTo>,
    pub(super) prompt: u64,
}

/// A `duration_drawn`'s fields (issue #32).
pub(super) struct Drawn<'a> {
    /// The run it is for, by id and name; `None` for a load retry.
    pub(super) agent: Option<(AgentId, &'a Option<Rc<str>>)>,
    pub(super) arrival: Option<u64>,
    pub(super) what: DrawnFor,
    pub(super) drawn_us: u64,
    /// The distribution as a scenario writes it: `None` when no event is built
    /// ([`Trace::builds_events`]), which is the only time it is not read.
    pub(super) drawn_from: Option<&'a Rc<str>>,
    pub(super) drawn_on: DrawnOn,
}

/// Which kept event a method wrote.
#[derive(Clone, Copy)]
enum Hot {
    Requested,
    Rejected,
    Started,
    Finished,
    Notification,
    Delivered,
    Prompted,
    Answered,
    ToolCalled,
    Drawn,
}

impl<'s> Trace<'s> {
    /// A trace written to `sink` and `summary` (either may be absent) under `limits`,
    /// nothing written yet.
    pub(super) fn new(
        sink: Option<&'s mut dyn Sink>,
        summary: Option<&'s mut Summary>,
        limits: Limits,
    ) -> Trace<'s> {
        Trace {
            sink,
            summary,
            seq: 0,
            last_time: SimTime::ZERO,
            limit: None,
            limits,
            steps_left: 0,
            steps_after: limits.steps(),
            block_start: SimTime::ZERO,
            block_seq: 0,
            block_len: 0,
            instant_run: 0,
            silent_run: 0,
            kept: Kept::new(),
        }
    }

    /// Writes `kind` at `now` under `rule` (any kind; the frequent ones have their own
    /// methods below).
    pub(super) fn event(&mut self, now: SimTime, rule: Option<RuleId>, kind: EventKind) {
        if self.limit.is_some() {
            return;
        }
        let event = Event {
            t: now,
            seq: self.seq,
            rule,
            kind,
        };
        self.hand_over(&event);
        self.counted(now);
    }

    /// `event` to the summary and the sink.
    #[inline(always)]
    fn hand_over(&mut self, event: &Event) {
        if let Some(summary) = self.summary.as_deref_mut() {
            summary.event(event);
        }
        if let Some(sink) = self.sink.as_deref_mut() {
            sink.event(event);
        }
    }

    /// One event more was written at `now`: the next seq, and the `max_events` limit.
    #[inline(always)]
    fn counted(&mut self, now: SimTime) {
        self.seq += 1;
        self.last_time = now;
        if self.seq >= self.limits.max_events {
            self.limit_reached(now, Limit::MaxEvents, self.limits.max_events);
        }
    }

    /// Whether the kept events are written: only for a sink (see the module's ground
    /// rules).
    #[inline(always)]
    pub(super) fn builds_events(&self) -> bool {
        self.sink.is_some()
    }

    /// The summary, if the trace keeps one (to call its typed entry).
    #[inline(always)]
    fn summary(&mut self) -> Option<&mut Summary> {
        self.summary.as_deref_mut()
    }

    /// Not an event: the run of agent `id` will soon take a step; the summary's state of
    /// it is read now (`sim/ahead.rs`). What is read is returned, to be discarded.
    #[inline]
    pub(super) fn preload(&self, id: u32) -> u64 {
        self.summary
            .as_deref()
            .map_or(0, |summary| summary.preload(id))
    }

    /// The safety limit `limit` (its bound `value`) ends the trace at `now`: the
    /// `limit_reached` event is the last one written (it is not counted as an event of the
    /// run, `RunReport::events`). Only the first limit reached is written.
    #[cold]
    #[inline(never)]
    pub(super) fn limit_reached(&mut self, now: SimTime, limit: Limit, value: u64) {
        if self.limit.is_some() {
            return;
        }
        self.last_time = now;
        let event = Event {
            t: now,
            seq: self.seq,
            rule: None,
            kind: EventKind::LimitReached { limit, value },
        };
        self.seq += 1;
        self.hand_over(&event);
        self.limit = Some(LimitHit { limit, value });
    }

    /// Stamps the kept event `hot` (its fields just written) with `now`, the next seq and
    /// `rule`, and hands it to the sink (the summary had it through its typed entry).
    #[inline(always)]
    fn send_kept(&mut self, now: SimTime, rule: Option<RuleId>, hot: Hot) {
        let kept = &mut self.kept;
        let event = match hot {
            Hot::Requested => &mut kept.requested,
            Hot::Rejected => &mut kept.rejected,
            Hot::Started => &mut kept.started,
            Hot::Finished => &mut kept.finished,
            Hot::Notification => &mut kept.notification,
            Hot::Delivered => &mut kept.delivered,
            Hot::Prompted => &mut kept.prompt.prompted,
            Hot::Answered => &mut kept.prompt.answered,
            Hot::ToolCalled => &mut kept.prompt.tool_called,
            Hot::Drawn => &mut kept.drawn,
        };
        event.t = now;
        event.seq = self.seq;
        event.rule = rule;
        if let Some(sink) = self.sink.as_deref_mut() {
            sink.event(event);
        }
        self.counted(now);
    }

    /// A `spawn_requested` (no rule: the request itself).
    #[inline(always)]
    pub(super) fn spawn_requested(&mut self, now: SimTime, call: Requested<'_>) {
        if self.limit.is_some() {
            return;
        }
        if let Some(summary) = self.summary() {
            summary.spawn_requested_at(now, call.agent_type, call.arrival, call.stream);
        }
        if !self.builds_events() {
            return self.counted(now);
        }
        let EventKind::SpawnRequested {
            caller,
            agent_type,
            name,
            background,
            fork,
            arrival,
            stream,
        } = &mut self.kept.requested.kind
        else {
            unreachable!("the kept spawn_requested is one (`Kept::new`)")
        };
        caller.id = call.caller.id;
        caller.name.clone_from(&call.caller.name);
        keep(agent_type, call.agent_type);
        name.clone_from(call.name);
        *background = call.background;
        *fork = call.fork;
        *arrival = call.arrival;
        // Written only when it changes (a load run's calls all carry one).
        if stream.as_ref().map(Rc::as_ptr) != call.stream.map(Rc::as_ptr) {
            *stream = call.stream.cloned();
        }
        self.send_kept(now, None, Hot::Requested);
    }

    /// A `spawn_rejected` under `rule`.
    #[inline(always)]
    pub(super) fn spawn_rejected(&mut self, now: SimTime, rule: RuleId, refusal: Rejected<'_>) {
        if self.limit.is_some() {
            return;
        }
        if let Some(summary) = self.summary() {
            summary.spawn_rejected_at(now, refusal.reason, refusal.running);
        }
        if !self.builds_events() {
            return self.counted(now);
        }
        let EventKind::SpawnRejected {
            caller,
            agent_type,
            name,
            reason,
            message,
            hint,
            running,
        } = &mut self.kept.rejected.kind
        else {
            unreachable!("the kept spawn_rejected is one (`Kept::new`)")
        };
        caller.id = refusal.caller.id;
        caller.name = refusal.caller.name;
        keep(agent_type, refusal.agent_type);
        *name = refusal.name;
        *reason = refusal.reason;
        keep(message, refusal.message);
        // CAP-2: what else a refused spawn's error tells Claude.
        *hint = subsim_rules::cap::hint(refusal.reason);
        *running = refusal.running;
        self.send_kept(now, Some(rule), Hot::Rejected);
    }

    /// An `agent_started` under `rule` (the placement's, or SPAWN-11 / RESUME-6 / CAP-6).
    #[inline(always)]
    pub(super) fn agent_started(&mut self, now: SimTime, rule: RuleId, start: Started<'_>) {
        if self.limit.is_some() {
            return;
        }
        if let Some(summary) = self.summary() {
            let agent_type = &start.profile.agent_type;
            summary.agent_started_at(now, start.agent.id, agent_type, start.running);
        }
        if !self.builds_events() {
            return self.counted(now);
        }
        let EventKind::AgentStarted {
            agent,
            parent,
            depth,
            mode,
            fork,
            running,
            cap_checked,
            profile,
        } = &mut self.kept.started.kind
        else {
            unreachable!("the kept agent_started is one (`Kept::new`)")
        };
        *agent = start.agent;
        *parent = start.parent;
        *depth = start.depth;
        *mode = start.mode;
        *fork = start.fork;
        *running = start.running;
        *cap_checked = start.cap_checked;
        // The run's profile: load runs share one, kept from the last start.
        if !Rc::ptr_eq(profile, start.profile) {
            profile.clone_from(start.profile);
        }
        self.send_kept(now, Some(rule), Hot::Started);
    }

    /// An `agent_finished` of `id` (named `name`) under `rule`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn agent_finished(
        &mut self,
        now: SimTime,
        rule: Option<RuleId>,
        id: AgentId,
        name: &Option<Rc<str>>,
        outcome: Outcome,
        running: u32,
        detail: Option<&str>,
    ) {
        if self.limit.is_some() {
            return;
        }
        if let Some(summary) = self.summary() {
            summary.agent_finished_at(now, id, outcome, running);
        }
        if !self.builds_events() {
            return self.counted(now);
        }
        let EventKind::AgentFinished {
            agent,
            outcome: kept_outcome,
            running: kept_running,
            detail: kept_detail,
        } = &mut self.kept.finished.kind
        else {
            unreachable!("the kept agent_finished is one (`Kept::new`)")
        };
        agent.id = id;
        agent.name.clone_from(name);
        *kept_outcome = outcome;
        *kept_running = running;
        *kept_detail = detail.map(Rc::from);
        self.send_kept(now, rule, Hot::Finished);
    }

    /// A `notification` of `what` from `from` to `to`, under `rule`.
    #[inline(always)]
    pub(super) fn notification(
        &mut self,
        now: SimTime,
        rule: RuleId,
        to: AgentRef,
        from: AgentRef,
        what: Notice,
    ) {
        if self.limit.is_some() {
            return;
        }
        if let Some(summary) = self.summary() {
            summary.notification_at(now, what);
        }
        if !self.builds_events() {
            return self.counted(now);
        }
        let EventKind::Notification {
            to: kept_to,
            from: kept_from,
            what: kept_what,
        } = &mut self.kept.notification.kind
        else {
            unreachable!("the kept notification is one (`Kept::new`)")
        };
        *kept_to = to;
        *kept_from = from;
        *kept_what = what;
        self.send_kept(now, Some(rule), Hot::Notification);
    }

    /// A `report_delivered` under `rule`, kept whole: [`Trace::report_delivered_again`]
    /// may write the same delivery again for other runs.
    pub(super) fn report_delivered(&mut self, now: SimTime, rule: RuleId, delivery: Delivery) {
        if self.limit.is_some() {
            return;
        }
        if let Some(summary) = self.summary() {
            summary.report_delivered_at(now);
        }
        // Written even with no sink: `report_delivered_again` and the delivery memo's
        // debug check read it.
        let EventKind::ReportDelivered {
            agent,
            to,
            text,
            scan,
            review,
        } = &mut self.kept.delivered.kind
        else {
            unreachable!("the kept report_delivered is one (`Kept::new`)")
        };
        *agent = delivery.agent;
        *to = delivery.to;
        *text = delivery.text;
        *scan = delivery.scan;
        *review = delivery.review;
        self.send_kept(now, Some(rule), Hot::Delivered);
    }

    /// The last [`Trace::report_delivered`]'s delivery again, from `from` to `to`, under
    /// `rule`: only who from and who to are written (see the module's ground rules).
    #[inline(always)]
    pub(super) fn report_delivered_again(
        &mut self,
        now: SimTime,
        rule: RuleId,
        from: (AgentId, &Option<Rc<str>>),
        to: (AgentId, &Option<Rc<str>>),
    ) {
        if self.limit.is_some() {
            return;
        }
        if let Some(summary) = self.summary() {
            summary.report_delivered_at(now);
        }
        if !self.builds_events() {
            return self.counted(now);
        }
        let EventKind::ReportDelivered {
            agent, to: kept_to, ..
        } = &mut self.kept.delivered.kind
        else {
            unreachable!("the kept report_delivered is one (`Kept::new`)")
        };
        agent.id = from.0;
        share(&mut agent.name, from.1);
        kept_to.id = to.0;
        share(&mut kept_to.name, to.1);
        self.send_kept(now, Some(rule), Hot::Delivered);
    }

    /// Debug builds: whether the kept `report_delivered` holds this text (the same
    /// object), scan note and verdict (what the delivery memo says it holds).
    #[cfg(debug_assertions)]
    pub(super) fn holds_delivery(
        &self,
        text: &Rc<str>,
        scan: Option<&str>,
        review: Option<ReviewOutcome>,
    ) -> bool {
        let EventKind::ReportDelivered {
            text: kept_text,
            scan: kept_scan,
            review: kept_review,
            ..
        } = &self.kept.delivered.kind
        else {
            unreachable!("the kept report_delivered is one (`Kept::new`)")
        };
        Rc::ptr_eq(kept_text, text) && kept_scan.as_deref() == scan && *kept_review == review
    }

    /// A `permission_requested` shown to the person (not auto-denied), under `rule`.
    #[inline(always)]
    pub(super) fn permission_requested(&mut self, now: SimTime, rule: RuleId, shown: Prompted<'_>) {
        if self.limit.is_some() {
            return;
        }
        if let Some(summary) = self.summary() {
            summary.prompt_shown_at(now, shown.agent_type, shown.routed_to, shown.prompt);
        }
        if !self.builds_events() {
            return self.counted(now);
        }
        let EventKind::PermissionRequested {
            agent,
            agent_type,
            tool,
            routed_to,
            auto_denied,
            prompt,
        } = &mut self.kept.prompt.prompted.kind
        else {
            unreachable!("the kept permission_requested is one (`Kept::new`)")
        };
        *agent = shown.agent;
        keep(agent_type, shown.agent_type);
        keep(tool, shown.tool);
        *routed_to = shown.routed_to;
        *auto_denied = false;
        *prompt = shown.prompt;
        self.send_kept(now, Some(rule), Hot::Prompted);
    }

    /// A `permission_answered` of prompt `prompt` about `tool`, under `rule`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn permission_answered(
        &mut self,
        now: SimTime,
        rule: RuleId,
        agent: &AgentRef,
        tool: &Rc<str>,
        answer: Answer,
        waited_us: u64,
        prompt: u64,
        think: Option<(u64, &Rc<str>)>,
    ) {
        if self.limit.is_some() {
            return;
        }
        if let Some(summary) = self.summary() {
            summary.prompt_answered_at(now, waited_us, prompt);
        }
        if !self.builds_events() {
            return self.counted(now);
        }
        let EventKind::PermissionAnswered {
            agent: kept_agent,
            tool: kept_tool,
            answer: kept_answer,
            waited_us: kept_waited,
            prompt: kept_prompt,
            think_us: kept_think,
            think_from: kept_from,
        } = &mut self.kept.prompt.answered.kind
        else {
            unreachable!("the kept permission_answered is one (`Kept::new`)")
        };
        kept_agent.id = agent.id;
        kept_agent.name.clone_from(&agent.name);
        keep(kept_tool, tool);
        *kept_answer = answer;
        *kept_waited = waited_us;
        *kept_prompt = prompt;
        *kept_think = think.map(|(us, _)| us);
        match (think, kept_from.as_mut()) {
            (Some((_, from)), Some(kept)) => keep(kept, from),
            (Some((_, from)), None) => *kept_from = Some(from.clone()),
            (None, _) => *kept_from = None,
        }
        self.send_kept(now, Some(rule), Hot::Answered);
    }

    /// The `tool_called` of a call the person answered (`reason` when refused), under
    /// `rule`; no permission rule decided it.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tool_called_answered(
        &mut self,
        now: SimTime,
        rule: RuleId,
        agent: AgentRef,
        tool: &Rc<str>,
        input: &Option<Rc<str>>,
        allowed: bool,
        reason: Option<ToolRefusal>,
        cwd: Option<Cwd>,
    ) {
        if self.limit.is_some() {
            return;
        }
        if let Some(summary) = self.summary() {
            summary.tool_called_at(now);
        }
        if !self.builds_events() {
            return self.counted(now);
        }
        let EventKind::ToolCalled {
            agent: kept_agent,
            tool: kept_tool,
            // Always a `tool` step's: only a `tool` step waits for a prompt's answer.
            step: _,
            allowed: kept_allowed,
            reason: kept_reason,
            input: kept_input,
            permission_rule,
            cwd: kept_cwd,
        } = &mut self.kept.prompt.tool_called.kind
        else {
            unreachable!("the kept tool_called is one (`Kept::new`)")
        };
        *kept_agent = agent;
        keep(kept_tool, tool);
        *kept_allowed = allowed;
        *kept_reason = reason;
        keep_option(kept_input, input);
        *permission_rule = None;
        *kept_cwd = cwd;
        self.send_kept(now, Some(rule), Hot::ToolCalled);
    }

    /// A `duration_drawn` with no sink: counted (the summary's `events`, the seq and
    /// `max_events`), not built.
    #[inline(always)]
    pub(super) fn draw_counted(&mut self, now: SimTime) {
        if self.limit.is_some() {
            return;
        }
        if let Some(summary) = self.summary() {
            summary.duration_drawn_at();
        }
        self.counted(now);
    }

    /// A `duration_drawn` (no rule: a draw is not a decision). Counted whether or not
    /// it is built, so the summary's event count and `max_events` are the same for every
    /// output; written only for a sink.
    #[inline(always)]
    pub(super) fn duration_drawn(&mut self, now: SimTime, drawn: Drawn<'_>) {
        if self.limit.is_some() {
            return;
        }
        if let Some(summary) = self.summary() {
            summary.duration_drawn_at();
        }
        let (true, Some(drawn_from)) = (self.builds_events(), drawn.drawn_from) else {
            return self.counted(now);
        };
        let EventKind::DurationDrawn {
            agent,
            arrival,
            what,
            drawn_us,
            drawn_from: kept_from,
            drawn_on,
        } = &mut self.kept.drawn.kind
        else {
            unreachable!("the kept duration_drawn is one (`Kept::new`)")
        };
        match (drawn.agent, agent.as_mut()) {
            (Some((id, name)), Some(kept)) => {
                kept.id = id;
                share(&mut kept.name, name);
            }
            (Some((id, name)), None) => {
                *agent = Some(AgentRef {
                    id,
                    name: name.clone(),
                })
            }
            (None, _) => *agent = None,
        }
        *arrival = drawn.arrival;
        *what = drawn.what;
        *drawn_us = drawn.drawn_us;
        keep(kept_from, drawn_from);
        *drawn_on = drawn.drawn_on;
        self.send_kept(now, None, Hot::Drawn);
    }
}

/// Sets a kept event's shared string to `value`: nothing to do when it holds the same
/// one already (the usual case: a load run's calls share their tool's name and input).
#[inline]
fn keep(kept: &mut Rc<str>, value: &Rc<str>) {
    if !Rc::ptr_eq(kept, value) {
        *kept = value.clone();
    }
}

/// [`keep`] for an optional shared string.
#[inline]
fn keep_option(kept: &mut Option<Rc<str>>, value: &Option<Rc<str>>) {
    match (kept.as_mut(), value) {
        (Some(kept), Some(value)) => keep(kept, value),
        (None, None) => {}
        _ => *kept = value.clone(),
    }
}

/// `*kept = shared.clone()`, skipped when `kept` already holds the same text (both `None`,
/// or the same `Rc`).
#[inline]
fn share(kept: &mut Option<Rc<str>>, shared: &Option<Rc<str>>) {
    let same = match (&*kept, shared) {
        (None, None) => true,
        (Some(kept), Some(shared)) => Rc::ptr_eq(kept, shared),
        _ => false,
    };
    if !same {
        kept.clone_from(shared);
    }
}

/// One kept [`Event`] for each frequent kind (see the module's ground rules). A kept event
/// holds its last values (a few shared strings and a profile) until the next event of its
/// kind overwrites them.
struct Kept {
    requested: Event,
    rejected: Event,
    started: Event,
    finished: Event,
    notification: Event,
    /// The last report delivered (`report_delivered_again` writes it again).
    delivered: Event,
    /// A duration drawn (a load run's `work: exp(…)`: one per run).
    drawn: Event,
    /// A prompt's events, kept apart (boxed): a run without prompts carries one pointer
    /// more, not three more events.
    prompt: Box<PromptEvents>,
}

/// The kept events of a prompt shown and answered.
struct PromptEvents {
    prompted: Event,
    answered: Event,
    tool_called: Event,
}

impl Kept {
    /// The kept events, each of its kind, with placeholder values (a method writes every
    /// field before the event is sent). The one place a kept event's variant is set.
    fn new() -> Kept {
        let event = |kind| Event {
            t: SimTime::ZERO,
            seq: 0,
            rule: None,
            kind,
        };
        let nobody = || AgentRef { id: 0, name: None };
        let empty: Rc<str> = Rc::from("");
        Kept {
            requested: event(EventKind::SpawnRequested {
                caller: nobody(),
                agent_type: empty.clone(),
                name: None,
                background: None,
                fork: false,
                arrival: None,
                stream: None,
            }),
            rejected: event(EventKind::SpawnRejected {
                caller: nobody(),
                agent_type: empty.clone(),
                name: None,
                reason: RejectReason::ConcurrentLimit,
                message: empty.clone(),
                hint: None,
                running: 0,
            }),
            started: event(EventKind::AgentStarted {
                agent: nobody(),
                parent: nobody(),
                depth: 0,
                mode: Mode::Foreground,
                fork: false,
                running: 0,
                cap_checked: false,
                profile: Rc::new(RunProfile::new("", "", &[])),
            }),
            finished: event(EventKind::AgentFinished {
                agent: nobody(),
                outcome: Outcome::Completed,
                running: 0,
                detail: None,
            }),
            notification: event(EventKind::Notification {
                to: nobody(),
                from: nobody(),
                what: Notice::Result,
            }),
            delivered: event(EventKind::ReportDelivered {
                agent: nobody(),
                to: nobody(),
                text: empty.clone(),
                scan: None,
                review: None,
            }),
            drawn: event(EventKind::DurationDrawn {
                agent: None,
                arrival: None,
                what: DrawnFor::Work,
                drawn_us: 0,
                drawn_from: empty.clone(),
                drawn_on: DrawnOn::Run,
            }),
            prompt: Box::new(PromptEvents {
                prompted: event(EventKind::PermissionRequested {
                    agent: nobody(),
                    agent_type: empty.clone(),
                    tool: empty.clone(),
                    routed_to: None,
                    auto_denied: false,
                    prompt: 0,
                }),
                answered: event(EventKind::PermissionAnswered {
                    agent: nobody(),
                    tool: empty.clone(),
                    answer: Answer::Approve,
                    waited_us: 0,
                    prompt: 0,
                    think_us: None,
                    think_from: None,
                }),
                tool_called: event(EventKind::ToolCalled {
                    agent: nobody(),
                    tool: empty,
                    step: ToolStep::Tool,
                    allowed: false,
                    reason: None,
                    input: None,
                    permission_rule: None,
                    cwd: None,
                }),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::Collect;

    /// Every typed method writes an event of its own kind with the fields it was given,
    /// numbered in order, and a kept event written twice carries the second values.
    #[test]
    fn every_kept_kind_is_written_with_its_fields() {
        let mut sink = Collect::default();
        let mut trace = Trace::new(Some(&mut sink), None, Limits::default());
        let a1 = AgentRef {
            id: 1,
            name: Some(Rc::from("w")),
        };
        let worker: Rc<str> = Rc::from("worker");
        let bash: Rc<str> = Rc::from("Bash");
        let profile = Rc::new(RunProfile::new("worker", "sonnet", &[]));
        let t = SimTime::from_secs(1);
        for running in [1, 2] {
            trace.spawn_requested(
                t,
                Requested {
                    caller: &AgentRef::MAIN,
                    agent_type: &worker,
                    name: &None,
                    background: Some(true),
                    fork: false,
                    arrival: Some(running.into()),
                    stream: None,
                },
            );
            trace.spawn_rejected(
                t,
                "CAP-1",
                Rejected {
                    caller: AgentRef::MAIN,
                    agent_type: &worker,
                    name: None,
                    reason: RejectReason::ConcurrentLimit,
                    message: &worker,
                    running,
                },
            );
            let started = Started {
                agent: a1.clone(),
                parent: AgentRef::MAIN,
                depth: 1,
                mode: Mode::Background,
                fork: false,
                running,
                cap_checked: true,
                profile: &profile,
            };
            trace.agent_started(t, "FGBG-1", started);
            trace.agent_finished(t, None, 1, &a1.name, Outcome::Completed, running, None);
            trace.notification(t, "NOTIFY-1", AgentRef::MAIN, a1.clone(), Notice::Result);
            let delivery = Delivery {
                agent: a1.clone(),
                to: AgentRef::MAIN,
                text: worker.clone(),
                scan: None,
                review: None,
            };
            trace.report_delivered(t, "NOTIFY-13", delivery);
            assert!(trace.holds_delivery(&worker, None, None));
            trace.report_delivered_again(t, "NOTIFY-13", (1, &a1.name), (0, &None));
            let shown = Prompted {
                agent: a1.clone(),
                agent_type: &worker,
                tool: &bash,
                routed_to: None,
                prompt: running.into(),
            };
            trace.permission_requested(t, "PERM-1", shown);
            trace.permission_answered(t, "PERM-3", &a1, &bash, Answer::Approve, 5, 1, None);
            trace.tool_called_answered(t, "PERM-3", a1.clone(), &bash, &None, true, None, None);
        }
        drop(trace);
        let kinds: Vec<&str> = sink.events.iter().map(|e| e.kind.name()).collect();
        let once = [
            "spawn_requested",
            "spawn_rejected",
            "agent_started",
            "agent_finished",
            "notification",
            "report_delivered",
            "report_delivered",
            "permission_requested",
            "permission_answered",
            "tool_called",
        ];
        assert_eq!(kinds, [once, once].concat());
        assert!(sink
            .events
            .iter()
            .enumerate()
            .all(|(i, e)| e.seq == i as u64));
        let second = &sink.events[once.len() + 2];
        assert!(matches!(
            second.kind,
            EventKind::AgentStarted { running: 2, .. }
        ));
        assert_eq!(second.rule, Some("FGBG-1"));
    }

    /// At `max_events` the trace ends with `limit_reached`, and nothing is written after.
    #[test]
    fn nothing_is_written_after_a_limit() {
        let mut sink = Collect::default();
        let limits = Limits {
            max_events: 2,
            ..Limits::default()
        };
        let mut trace = Trace::new(Some(&mut sink), None, limits);
        for _ in 0..4 {
            trace.notification(
                SimTime::ZERO,
                "NOTIFY-1",
                AgentRef::MAIN,
                AgentRef::MAIN,
                Notice::Result,
            );
        }
        assert_eq!(
            trace.limit.as_ref().map(|hit| hit.limit),
            Some(Limit::MaxEvents)
        );
        drop(trace);
        let kinds: Vec<&str> = sink.events.iter().map(|e| e.kind.name()).collect();
        assert_eq!(kinds, ["notification", "notification", "limit_reached"]);
    }
}
