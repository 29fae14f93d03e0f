//! [`Builder`]: the run model read from the events as they come.

use std::collections::BTreeMap;
use std::rc::Rc;

use subsim_rules::toolcall::ToolStep;

use super::{group, Draw, End, Group, Mark, Run, RunModel, Span, State, Tally};
use crate::event::{drawn_words, AgentId, AgentRef, Event, EventKind, WaitingFor, MAIN};
use crate::sink::Sink;

/// The end of a span whose run has not ended yet; [`Builder::finish`] closes what stays open.
const OPEN: u64 = u64::MAX;

/// One decision of the instant being read, waiting for the instant's end to be grouped.
struct Pending {
    seq: u64,
    kind: &'static str,
    key: group::Key,
    subject: Option<String>,
}

/// Builds a [`RunModel`] from events as they come (a [`Sink`]), so a view of a run never
/// holds the run's events: memory is bounded by a row budget, whatever the run's size.
/// Runs past `max_rows` are counted ([`RunModel::more_runs`]), marks and decisions past
/// it too, and the running count is thinned, keeping its peaks.
pub struct Builder {
    model: RunModel,
    /// Agent id → its run, for the runs kept.
    index: BTreeMap<AgentId, usize>,
    /// Agent id → its type, for the runs not finished (and the finished ones kept), so a
    /// finish counts under its agent.
    types: BTreeMap<AgentId, Rc<str>>,
    /// Load arrivals: when each first asked (while runs are still kept).
    first_asked: BTreeMap<u64, u64>,
    /// The arrival the latest request was for.
    asking: Option<u64>,
    max_rows: usize,
    marks: usize,
    /// The current instant's decisions.
    instant: u64,
    pending: Vec<Pending>,
    decisions: usize,
}

impl Builder {
    /// A builder that keeps at most `max_rows` runs (main's included), as many marks and
    /// ten times as many decisions in the order.
    pub fn new(max_rows: u64) -> Builder {
        let mut model = RunModel::default();
        model.runs.push(Run {
            id: MAIN,
            label: "main".into(),
            agent_type: Rc::from("main"),
            parent: MAIN,
            depth: 0,
            mode: "main",
            spans: vec![Span {
                from: 0,
                to: OPEN,
                state: State::Running,
                rule: None,
            }],
            marks: Vec::new(),
            started: (0, None, 0),
            finished: None,
            arrival: None,
            resumes: Vec::new(),
            heard: Vec::new(),
            shells: Vec::new(),
        });
        Builder {
            model,
            index: BTreeMap::from([(MAIN, 0)]),
            types: BTreeMap::new(),
            first_asked: BTreeMap::new(),
            asking: None,
            max_rows: usize::try_from(max_rows.max(1)).unwrap_or(usize::MAX),
            marks: 0,
            instant: 0,
            pending: Vec::new(),
            decisions: 0,
        }
    }

    /// The model so far (its order lacks the current instant; its chain is empty).
    pub fn model(&self) -> &RunModel {
        &self.model
    }

    /// The run of agent `id`, if it is kept.
    fn run(&mut self, id: AgentId) -> Option<&mut Run> {
        let index = *self.index.get(&id)?;
        self.model.runs.get_mut(index)
    }

    /// Room for one more kept thing (a mark, a heard notice, a shell, a resume)?
    fn room(&mut self) -> bool {
        if self.marks >= self.max_rows.saturating_mul(4) {
            self.model.more_marks += 1;
            return false;
        }
        self.marks += 1;
        true
    }

    /// A mark on agent `id`'s row, within the budget.
    fn mark(&mut self, id: AgentId, mark: Mark) {
        if !self.index.contains_key(&id) || !self.room() {
            return;
        }
        if let Some(run) = self.run(id) {
            run.marks.push(mark);
        }
    }

    /// A draw, within its budget (as many as marks).
    fn draw(&mut self, draw: Draw) {
        if self.model.draws.len() >= self.max_rows.saturating_mul(4) {
            self.model.more_draws += 1;
            return;
        }
        self.model.draws.push(draw);
    }

    /// How the views show agent `agent` in a draw's words: its run's label when the run
    /// is kept, else its name or id.
    fn label_of(&self, agent: &AgentRef) -> String {
        match self.index.get(&agent.id) {
            Some(index) => self.model.runs[*index].label.clone(),
            None => agent.label(),
        }
    }

    /// The running count changed to `running` at `at`.
    fn change(&mut self, at: u64, running: u32) {
        let counts = &mut self.model.counts;
        counts.peak_running = counts.peak_running.max(running);
        let series = &mut self.model.running;
        if series.last().map(|(_, n)| *n) == Some(running) {
            return;
        }
        series.push((at, running));
        if series.len() >= self.max_rows.saturating_mul(2).max(64) {
            // Pairs become one point, at the first's time with the higher count.
            let thinned: Vec<(u64, u32)> = series
                .chunks(2)
                .map(|pair| (pair[0].0, pair.iter().map(|(_, n)| *n).max().unwrap_or(0)))
                .collect();
            *series = thinned;
        }
    }

    /// The tally of agent type `agent_type`.
    fn tally(&mut self, agent_type: &Rc<str>) -> &mut Tally {
        if !self.model.counts.by_agent.contains_key(agent_type) {
            self.model
                .counts
                .by_agent
                .insert(agent_type.clone(), Tally::default());
        }
        self.model
            .counts
            .by_agent
            .get_mut(agent_type)
            .expect("inserted above")
    }

    /// The decisions of the instant that ended, grouped into the order.
    fn close_instant(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        let keys: Vec<&group::Key> = pending.iter().map(|p| &p.key).collect();
        let subjects: Vec<Option<&String>> = pending.iter().map(|p| p.subject.as_ref()).collect();
        for (start, len, period) in group::split(&keys, &subjects) {
            if self.decisions >= self.max_rows.saturating_mul(10) {
                self.model.more_decisions += len as u64;
                continue;
            }
            self.decisions += len;
            let members = &pending[start..start + len];
            self.model.order.push(Group {
                at: self.instant,
                seqs: members.iter().map(|p| p.seq).collect(),
                period,
                kinds: members[..period].iter().map(|p| p.kind).collect(),
                subjects: members
                    .iter()
                    .step_by(period)
                    .map(|p| p.subject.clone().unwrap_or_default())
                    .collect(),
            });
        }
    }

    /// Reads one event.
    pub fn add(&mut self, event: &Event) {
        let at = event.t.as_micros();
        self.model.counts.events += 1;
        if event.kind.moves_the_end() {
            self.model.end = End {
                at: self.model.end.at.max(at),
                seq: event.seq,
                kind: event.kind.name(),
                rule: event.rule,
                agent: about(event),
                from: if let EventKind::Notification { from, what, .. } = &event.kind {
                    Some((from.id, what.as_str()))
                } else {
                    None
                },
                limit: if let EventKind::LimitReached { limit, .. } = &event.kind {
                    Some(limit.as_str())
                } else {
                    None
                },
            };
        }
        if super::decision(event) {
            if at != self.instant || self.pending.len() >= self.max_rows {
                self.close_instant();
                self.instant = at;
            }
            self.pending.push(Pending {
                seq: event.seq,
                kind: event.kind.name(),
                key: group::key(event),
                subject: group::subject(event),
            });
        }
        match &event.kind {
            EventKind::SessionStarted { cap, version, .. } => {
                self.model.cap = *cap;
                self.model.version = version.to_string();
                self.change(at, 0);
            }
            EventKind::SpawnRequested { arrival, .. } => {
                self.asking = *arrival;
                let keeping =
                    self.model.runs.len() < self.max_rows && self.first_asked.len() < self.max_rows;
                if let (Some(arrival), true) = (arrival, keeping) {
                    self.first_asked.entry(*arrival).or_insert(at);
                }
            }
            EventKind::AgentStarted {
                agent,
                parent,
                depth,
                mode,
                running,
                profile,
                ..
            } => {
                self.model.counts.all.started += 1;
                self.tally(&profile.agent_type).started += 1;
                self.types.insert(agent.id, profile.agent_type.clone());
                self.started(event, agent, parent, *depth, mode.as_str());
                self.change(at, *running);
            }
            EventKind::AgentResumed {
                agent, by, running, ..
            } => {
                self.model.counts.all.resumed += 1;
                if let Some(agent_type) = self.types.get(&agent.id).cloned() {
                    self.tally(&agent_type).resumed += 1;
                }
                if self.index.contains_key(&agent.id) && self.room() {
                    if let Some(run) = self.run(agent.id) {
                        run.resumes.push((at, by.id, event.rule));
                    }
                }
                if let Some(run) = self.run(agent.id) {
                    run.finished = None;
                    run.spans.push(Span {
                        from: at,
                        to: OPEN,
                        state: State::Running,
                        rule: event.rule,
                    });
                }
                self.change(at, *running);
            }
            EventKind::AgentFinished { agent, running, .. } => {
                self.model.counts.all.finished += 1;
                let kept = self.index.contains_key(&agent.id);
                let agent_type = if kept {
                    self.types.get(&agent.id).cloned()
                } else {
                    self.types.remove(&agent.id)
                };
                if let Some(agent_type) = agent_type {
                    self.tally(&agent_type).finished += 1;
                }
                if let Some(run) = self.run(agent.id) {
                    if let Some(last) = run.spans.last_mut() {
                        last.to = at;
                    }
                    run.finished = Some(at);
                }
                self.change(at, *running);
            }
            EventKind::AgentBackgrounded { agent, running } => {
                if let Some(run) = self.run(agent.id) {
                    run.mode = "background";
                    open(run, at, State::Backgrounded, event.rule);
                }
                self.change(at, *running);
            }
            EventKind::SpawnRejected { running, .. } => {
                self.model.counts.peak_running = self.model.counts.peak_running.max(*running);
                self.add_other(event, at);
            }
            EventKind::ToolCalled { .. }
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
            | EventKind::LimitReached { .. } => self.add_other(event, at),
        }
    }

    /// A run started: its row, while the budget lasts.
    fn started(
        &mut self,
        event: &Event,
        agent: &AgentRef,
        parent: &AgentRef,
        depth: u32,
        mode: &'static str,
    ) {
        let at = event.t.as_micros();
        let arrival = self.asking.take();
        // A load arrival that asked earlier waited (queued) until now.
        let waited_from = arrival
            .and_then(|arrival| self.first_asked.remove(&arrival))
            .filter(|asked| *asked < at);
        if self.model.runs.len() >= self.max_rows {
            self.model.more_runs += 1;
            return;
        }
        let agent_type = self
            .types
            .get(&agent.id)
            .cloned()
            .unwrap_or_else(|| Rc::from(""));
        self.index.insert(agent.id, self.model.runs.len());
        self.model.runs.push(Run {
            id: agent.id,
            label: agent.label(),
            agent_type,
            parent: parent.id,
            depth,
            mode,
            spans: waited_from
                .map(|asked| Span {
                    from: asked,
                    to: at,
                    state: State::Queued,
                    rule: None,
                })
                .into_iter()
                .chain(std::iter::once(Span {
                    from: at,
                    to: OPEN,
                    state: State::Running,
                    rule: event.rule,
                }))
                .collect(),
            marks: Vec::new(),
            started: (at, event.rule, event.seq),
            finished: None,
            arrival,
            resumes: Vec::new(),
            heard: Vec::new(),
            shells: Vec::new(),
        });
    }

    /// Prompts, waits, rejections, notifications and the counts they carry.
    fn add_other(&mut self, event: &Event, at: u64) {
        match &event.kind {
            EventKind::PermissionRequested {
                agent,
                tool,
                prompt,
                routed_to,
                ..
            } => {
                if let Some(run) = self.run(agent.id) {
                    open(run, at, State::Prompt, event.rule);
                }
                let place = routed_to.map_or("nowhere (auto-denied)", |route| route.as_str());
                let text = format!("prompt #{prompt} for {tool}, shown in {place}");
                self.mark(agent.id, mark(at, "prompt", text, event.rule));
            }
            EventKind::PermissionAnswered {
                agent,
                waited_us,
                think_us,
                think_from,
                ..
            } => {
                self.model.counts.prompts += 1;
                self.model.counts.prompt_wait_us += waited_us;
                self.resume_running(agent.id, at, event);
                if let (Some(think), Some(from)) = (think_us, think_from) {
                    let label = self.label_of(agent);
                    self.draw(Draw {
                        at: at.saturating_sub(*think),
                        seq: event.seq,
                        agent: Some(agent.id),
                        label: Some(label),
                        arrival: None,
                        what: "think",
                        drawn_us: *think,
                        drawn_from: from.clone(),
                        drawn_on: "person",
                        text: drawn_words("think", *think, from, crate::event::PERSON_STREAM),
                    });
                }
            }
            EventKind::DurationDrawn {
                agent,
                arrival,
                what,
                drawn_us,
                drawn_from,
                drawn_on,
            } => {
                let label = agent.as_ref().map(|agent| self.label_of(agent));
                let stream = drawn_on.words(label.as_deref().unwrap_or("main"));
                let mut text = arrival
                    .map(|arrival| format!("arrival #{arrival}: "))
                    .unwrap_or_default();
                text.push_str(&drawn_words(what.words(), *drawn_us, drawn_from, &stream));
                self.draw(Draw {
                    at,
                    seq: event.seq,
                    agent: agent.as_ref().map(|agent| agent.id),
                    label,
                    arrival: *arrival,
                    what: what.as_str(),
                    drawn_us: *drawn_us,
                    drawn_from: drawn_from.clone(),
                    drawn_on: drawn_on.as_str(),
                    text,
                });
            }
            EventKind::PermissionWithdrawn { agent, .. } => {
                self.resume_running(agent.id, at, event);
            }
            EventKind::AgentWaiting {
                agent, waiting_for, ..
            } => {
                let state = match waiting_for {
                    WaitingFor::Children => State::Children,
                    WaitingFor::Bash => State::Shell,
                };
                if let Some(run) = self.run(agent.id) {
                    open(run, at, state, event.rule);
                }
            }
            EventKind::SpawnRejected {
                caller,
                name,
                agent_type,
                reason,
                ..
            } => {
                let counts = &mut self.model.counts;
                counts.all.rejected += 1;
                *counts
                    .rejected_by
                    .entry((*reason, event.rule.unwrap_or("")))
                    .or_default() += 1;
                self.tally(agent_type).rejected += 1;
                let what = name.as_deref().unwrap_or(agent_type);
                let text = format!(
                    "spawn of {what} rejected: {}",
                    reason.as_str().replace('_', " ")
                );
                self.mark(caller.id, mark(at, "rejected", text, event.rule));
            }
            EventKind::Notification { to, from, what } => {
                self.model.counts.notifications += 1;
                if self.index.contains_key(&to.id) && self.room() {
                    if let Some(run) = self.run(to.id) {
                        run.heard.push((at, from.id, what.as_str(), event.rule));
                    }
                }
                let text = format!(
                    "{} notification from {}",
                    what.as_str().replace('_', " "),
                    from.label()
                );
                self.mark(to.id, mark(at, "notification", text, event.rule));
            }
            EventKind::ToolCalled {
                agent,
                allowed,
                step,
                ..
            } => {
                if !allowed {
                    self.model.counts.refused += 1;
                }
                if *allowed
                    && *step == ToolStep::BashBackground
                    && self.index.contains_key(&agent.id)
                    && self.room()
                {
                    if let Some(run) = self.run(agent.id) {
                        run.shells.push(at);
                    }
                }
            }
            EventKind::LimitReached { limit, .. } => self.model.limit = Some(limit.as_str()),
            EventKind::SessionStarted { .. }
            | EventKind::SpawnRequested { .. }
            | EventKind::AgentStarted { .. }
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
            | EventKind::Worktree { .. }
            | EventKind::ActionIgnored { .. } => {}
        }
    }

    /// A prompt of agent `id` ended: it runs again (in the mode it had).
    fn resume_running(&mut self, id: AgentId, at: u64, event: &Event) {
        if let Some(run) = self.run(id) {
            let state = run
                .spans
                .iter()
                .rev()
                .map(|span| span.state)
                .find(|state| matches!(state, State::Running | State::Backgrounded))
                .unwrap_or(State::Running);
            open(run, at, state, event.rule);
        }
    }

    /// The model: main runs from start to end; any span left open ends with the session;
    /// the chain that set the end is worked out.
    pub fn finish(mut self) -> RunModel {
        self.close_instant();
        let end = self.model.end.at;
        for run in &mut self.model.runs {
            for span in &mut run.spans {
                if span.to == OPEN {
                    span.to = end.max(span.from);
                }
            }
        }
        self.model.chain = super::end::chain(&self.model);
        self.model
    }
}

impl Sink for Builder {
    fn event(&mut self, event: &Event) {
        self.add(event);
    }
}

fn mark(at: u64, kind: &'static str, text: String, rule: Option<&'static str>) -> Mark {
    Mark {
        at,
        kind,
        text,
        rule,
    }
}

/// Closes the run's current span at `at` and opens one in `state`.
fn open(run: &mut Run, at: u64, state: State, rule: Option<&'static str>) {
    if let Some(last) = run.spans.last_mut() {
        if last.to == OPEN || last.to > at {
            last.to = at;
        }
    }
    run.spans.push(Span {
        from: at,
        to: OPEN,
        state,
        rule,
    });
}

/// The agent `event` is about: its `agent`, a notification's recipient, a rejected
/// spawn's caller; `None` for the session's own events.
fn about(event: &Event) -> Option<AgentId> {
    match &event.kind {
        EventKind::Notification { to, .. } | EventKind::MessageDelivered { to, .. } => Some(to.id),
        EventKind::SpawnRequested { caller, .. } | EventKind::SpawnRejected { caller, .. } => {
            Some(caller.id)
        }
        EventKind::MessageRejected { by, .. } => Some(by.id),
        EventKind::AgentStarted { agent, .. }
        | EventKind::ToolCalled { agent, .. }
        | EventKind::PermissionRequested { agent, .. }
        | EventKind::PermissionAnswered { agent, .. }
        | EventKind::PermissionWithdrawn { agent, .. }
        | EventKind::AgentWaiting { agent, .. }
        | EventKind::AgentBackgrounded { agent, .. }
        | EventKind::AgentFinished { agent, .. }
        | EventKind::AgentResumed { agent, .. }
        | EventKind::StopRequested { agent, .. }
        | EventKind::HookFired { agent, .. }
        | EventKind::HookSkipped { agent, .. }
        | EventKind::ReportDelivered { agent, .. }
        | EventKind::ContinuationRequested { agent, .. }
        | EventKind::ModelSwitched { agent, .. }
        | EventKind::Worktree { agent, .. } => Some(agent.id),
        EventKind::PanelChanged { row, .. } => Some(row.id),
        EventKind::DurationDrawn { agent, .. } => agent.as_ref().map(|agent| agent.id),
        EventKind::SessionStarted { .. }
        | EventKind::ConversationCleared
        | EventKind::DefinitionNoted { .. }
        | EventKind::ActionIgnored { .. }
        | EventKind::LimitReached { .. } => None,
    }
}
