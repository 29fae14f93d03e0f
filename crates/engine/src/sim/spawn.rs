//! Agent tool calls — the one spawn path. Every Agent call (a step's, a load arrival's or
//! its retry, a fork, a teammate) is `spawn`: `spawn_requested`, the call's plan — Q-11's
//! checks up to the cap, answered by `rules::plan::plan` and kept per kind of call — then
//! the cap at this moment, then the start.
//!
//! The plan comes from the plan memo (`decide.rs`, `Kernel::spawn_plan`), which
//! keeps it per kind of call under the ground rules written there.
//!
//! Every run that starts, starts in `launch`, with a launch the rules planned: an Agent
//! call's (a subagent, a fork, or a teammate — SPAWN-11: depth 0, no slot, CAP-8), or the
//! person's `/subtask` fork, which is not an Agent call (no request, no plan kept, no cap
//! check: CAP-6, FORK-9) and whose launch `rules::plan::Subtask::launch` gives
//! (`start_subtask`).
//!
//! Its `#[inline(…)]` and `#[cold]` attributes are measured: docs/PERFORMANCE.md, "Choices
//! that need a benchmark".

use std::rc::Rc;

use subsim_rules::hooks::RunTransition;
use subsim_rules::plan::{self, Launch, Launched, SpawnPlan};
use subsim_rules::toolcall::ToolStep;
use subsim_rules::{Mode, RejectReason, RuleId};

use crate::event::{AgentRef, Limit, RunProfile};
use crate::spec::{Program, SpawnSpec};

use super::agents::{Block, Made, Start};
use super::clock::Wake;
use super::decide::CachedPlan;
use super::gate::{GateCall, Gated};
use super::{trace, Flow, Kernel, Session};

impl Kernel<'_> {
    // -- spawning ----------------------------------------------------------------------

    /// A `spawn` step: the Agent calls of one response, in order (`count` of each spec).
    /// `Flow::Stop` if the caller blocked on foreground children.
    pub(super) fn spawn_step(&mut self, slot: u32, specs: &[SpawnSpec]) -> Flow {
        let mut foreground = 0;
        for spec in specs {
            for index in 0..spec.count.max(1) {
                let name = match (&spec.name, spec.count) {
                    (Some(name), count) if count > 1 => Some(format!("{name}-{}", index + 1)),
                    (name, _) => name.clone(),
                };
                if let Ok((child_slot, Mode::Foreground)) = self.spawn(slot, spec, name, Call::Step)
                {
                    self.agents.get_mut(child_slot).awaited = true;
                    foreground += 1;
                }
                if self.trace.limit.is_some() {
                    return Flow::Stop;
                }
            }
        }
        if foreground > 0 {
            // FGBG-4: a foreground subagent blocks the conversation that launched it.
            let agent = self.agents.get_mut(slot);
            agent.foreground_pending += foreground;
            agent.block = Block::Foreground;
            return Flow::Stop;
        }
        Flow::Continue
    }

    /// One Agent tool call: `spawn_requested`, then the call's plan (Q-11's checks up to
    /// the cap, `rules::plan`), then the cap at this moment, then the start. Every Agent
    /// call goes through here — steps, load arrivals and their retries, forks, teammates.
    /// Inlined into its two callers (`load_spawn`, `spawn_step`): a load arrival's call
    /// costs one frame, not two. `caller_slot` is the caller's slot (main's is 0), which
    /// both have: the caller is not looked up by id. `call` says where the call comes from
    /// (a step, or a load stream's arrival: main's call).
    #[inline(always)]
    pub(super) fn spawn(
        &mut self,
        caller_slot: u32,
        spec: &SpawnSpec,
        name: Option<String>,
        call: Call,
    ) -> Result<(u32, Mode), Option<RejectReason>> {
        let from_load = matches!(call, Call::Load { .. });
        let (planned, plan_caller) =
            self.spawn_plan(caller_slot, spec, name.is_some(), call.stream());
        // The tool-call gate (`gate.rs`): check 1 is the plan's (the caller's own `Agent`
        // tool, DEPTH-3/4/5); without hooks, checks 2 and 3 pass an Agent call (its
        // permission is its plan's), so only a session with hooks asks.
        if self.session.hooks_present && self.agent_call_blocked(caller_slot, &planned) {
            return Err(None);
        }
        // Names never change, so the caller's reference is the one it had at the call.
        let caller_ref = self.agents.get(caller_slot).reference();
        // One text per name, shared by every run that takes it (a name spawned again and
        // again held a copy per run).
        let name: Option<Rc<str>> = name.map(|n| self.agents.shared_name(&n));
        // SPAWN-13 / FORK-3: fork mode removes `run_in_background` from the Agent tool.
        let background = subsim_rules::spawn::run_in_background_param(
            spec.background,
            self.session.config.fork_mode,
        );
        let requested = trace::Requested {
            caller: &caller_ref,
            agent_type: &planned.requested,
            name: &name,
            background,
            fork: spec.fork,
            arrival: call.arrival(),
            stream: self.load.stream_name(call),
        };
        self.trace.spawn_requested(self.clock.now, requested);
        let launch = match &planned.plan {
            SpawnPlan::Launch(launch) => launch,
            SpawnPlan::Reject { reason, rule, .. } => {
                return self.reject_spawn(
                    &planned,
                    caller_ref,
                    name,
                    *reason,
                    rule,
                    RefusalText::Plan,
                );
            }
        };
        if let Launched::Teammate(_) = launch.launched {
            // SPAWN-11: an agent-team teammate instead of a subagent. Not checked against
            // the cap (CAP-8: `Launch::admit` would admit it).
            let started =
                self.launch_teammate(caller_slot, caller_ref, name, &planned, spec, from_load);
            return self.agent_call_made(caller_slot, started);
        }
        // CAP-1/3/4, CAP-5, CAP-10 (`cap::admit`): the one check that depends on the moment.
        let occupancy = &self.agents.occupancy;
        let admission = launch.admit(planned.type_index, occupancy, &self.session.config);
        if let Err((reason, rule)) = admission {
            // The message is the reason's fixed text exactly (CAP-1's is the documented
            // one); the count is the event's `running` and the cap is `session_started.cap`.
            // CAP-2: nothing re-issues the call.
            return self.reject_spawn(&planned, caller_ref, name, reason, rule, RefusalText::Fixed);
        }
        let start = Start {
            caller: caller_ref,
            caller_slot,
            name,
            type_index: planned.type_index,
            // DEPTH-1, Q-10, Q-44: the plan is kept per depth class; the depth is this
            // caller's (the plan's own when it was made for a caller at this depth).
            depth: self.launch_depth(&planned, plan_caller, launch),
            mode: launch.mode,
            permission_mode: launch.permission_mode,
            fork: spec.fork,
            invocation_model: spec.model.as_deref().map(Rc::from),
            classifier: spec.classifier,
            teammate: false,
            agent_call: true,
            from_load,
        };
        let started = self.launch(start, launch, Some(&planned), spec);
        self.agent_call_made(caller_slot, started)
    }

    /// The tool-call gate's checks 2 and 3 for an Agent call whose plan did not refuse it
    /// for the caller's tool set (check 1, DEPTH-3/4/5, answered by the plan and written
    /// as its `spawn_rejected`): `PreToolUse` hooks matched on `Agent`, before
    /// `spawn_requested`, the plan's other refusals and the cap (HOOK-1, HOOK-7). True if
    /// the call was refused (its `tool_called` written): no request, no child, no slot.
    #[cold]
    #[inline(never)]
    fn agent_call_blocked(&mut self, caller_slot: u32, planned: &CachedPlan) -> bool {
        if let SpawnPlan::Reject { reason, rule, .. } = &planned.plan {
            // The gate's check 1 for an Agent call (DEPTH-3/5): the plan refused it under
            // `rule` because the caller has no `Agent` tool, before any hook fires.
            if subsim_rules::toolcall::tool_set_refusal(*reason, rule) {
                return false;
            }
        }
        let tool = self.step_tool(ToolStep::Spawn);
        let call = GateCall {
            step: ToolStep::Spawn,
            tool: &tool,
            input: None,
            forced: None,
        };
        match self.gate(caller_slot, &call) {
            Gated::Refused => true,
            Gated::Run(_) => false,
            Gated::Prompt => unreachable!("an Agent call's permission is its plan's"),
        }
    }

    /// The tool-call gate's check 5 for an Agent call: `PostToolUse` once its run started
    /// (HOOK-1); none for a refused call.
    #[inline(always)]
    fn agent_call_made(
        &mut self,
        caller_slot: u32,
        started: Result<(u32, Mode), Option<RejectReason>>,
    ) -> Result<(u32, Mode), Option<RejectReason>> {
        if self.session.hooks_present && started.is_ok() {
            let tool = self.step_tool(ToolStep::Spawn);
            self.post_tool_use(caller_slot, &tool);
        }
        started
    }

    /// SPAWN-11 / CAP-8 / TOOLS-9 / Q-44: `launch` for a teammate, with the plan's launch:
    /// its rule, mode and depth (0), no slot, its own tools. Out of line, so that a
    /// subagent's start (every load arrival's) is `launch` with `teammate` known to be
    /// false.
    #[inline(never)]
    fn launch_teammate(
        &mut self,
        caller_slot: u32,
        caller: AgentRef,
        name: Option<Rc<str>>,
        planned: &CachedPlan,
        spec: &SpawnSpec,
        from_load: bool,
    ) -> Result<(u32, Mode), Option<RejectReason>> {
        let SpawnPlan::Launch(launch) = &planned.plan else {
            unreachable!("a teammate is a launch");
        };
        let start = Start {
            caller,
            caller_slot,
            name,
            type_index: planned.type_index,
            // SPAWN-11 / Q-44: the plan's depth whoever calls (`Kernel::launch_depth`).
            depth: launch.depth,
            mode: launch.mode,
            permission_mode: launch.permission_mode,
            fork: spec.fork,
            invocation_model: spec.model.as_deref().map(Rc::from),
            classifier: spec.classifier,
            teammate: true,
            agent_call: true,
            from_load,
        };
        self.launch(start, launch, Some(planned), spec)
    }

    /// FORK-9 / FORK-10 / CAP-6 / Q-39: the person's `/subtask` fork, started by `launch`
    /// with the `Launch` `rules::plan::Subtask::launch` gives: a fork of main at the
    /// depth, in the mode and under the rule the rules give, with the tools they name
    /// (`PlanTools::Main`: main's own), not checked against the cap. It is not an Agent
    /// call: no `spawn_requested`, no plan kept (`launch` is given none). Out of line:
    /// `launch`, inlined here, must not grow the person's actions into the loop's dispatch.
    #[cold]
    #[inline(never)]
    pub(super) fn start_subtask(&mut self, fork: &plan::Subtask, behavior: Option<Program>) {
        // FORK-9 / CAP-6: main's permission mode, not checked against the cap.
        let launch = fork.launch(&self.session.config);
        debug_assert!(launch
            .admit(None, &self.agents.occupancy, &self.session.config)
            .is_ok());
        let spec = SpawnSpec {
            fork: true,
            count: 1,
            behavior,
            ..SpawnSpec::default()
        };
        let start = Start {
            caller: AgentRef::MAIN,
            caller_slot: 0,
            name: Some(Rc::from(fork.name.as_str())),
            type_index: None,
            depth: launch.depth,
            mode: launch.mode,
            permission_mode: launch.permission_mode,
            fork: spec.fork,
            invocation_model: None,
            classifier: None,
            teammate: false,
            agent_call: false,
            from_load: false,
        };
        // A refusal here is a safety limit, already written (`limit_reached`).
        let _ = self.launch(start, &launch, None, &spec);
    }

    /// A refused Agent call: `spawn_rejected` with the caller's running count.
    fn reject_spawn(
        &mut self,
        planned: &CachedPlan,
        caller: AgentRef,
        name: Option<Rc<str>>,
        reason: RejectReason,
        rule: RuleId,
        text: RefusalText,
    ) -> Result<(u32, Mode), Option<RejectReason>> {
        // The shared text, taken only when the kept event does not hold it already.
        let message = match text {
            RefusalText::Plan => &planned.message,
            RefusalText::Fixed => {
                let text = &self.session.refusal_texts[reason as usize];
                debug_assert!(
                    !text.is_empty(),
                    "kernel invariant: a refusal at the moment of the call has its reason's text"
                );
                text
            }
        };
        let refusal = trace::Rejected {
            caller,
            agent_type: &planned.requested,
            name,
            reason,
            message,
            running: self.running(),
        };
        self.trace.spawn_rejected(self.clock.now, rule, refusal);
        Err(Some(reason))
    }

    /// Every new run starts here, whichever door it came through (see [`Start`]), with the
    /// launch the rules planned, the kept plan it came from (`None` for `/subtask`, which
    /// is not kept: its tools as shared strings and the profile its runs share) and the
    /// call: the safety limits on agents, the run's profile and program, its record, then
    /// the tail every start shares ([`Kernel::take_slot`], its `agent_started`,
    /// [`Kernel::run_started`]).
    #[inline(always)]
    fn launch(
        &mut self,
        start: Start,
        launch: &Launch,
        kept: Option<&CachedPlan>,
        spec: &SpawnSpec,
    ) -> Result<(u32, Mode), Option<RejectReason>> {
        if self.start_refused(start.teammate) {
            return Err(None);
        }
        let (type_index, depth, mode, teammate) =
            (start.type_index, start.depth, start.mode, start.teammate);
        // Borrowed from the kept plan when it keeps the profile (no reference count
        // changes hands unless the record takes a profile it does not hold already).
        let made = self.start_profile(type_index, depth, launch, kept, teammate, spec);
        let profile: &Rc<RunProfile> = match (&made, kept) {
            (Some(made), _) => made,
            (None, Some(kept)) => kept.profile.get().expect("the kept plan keeps the profile"),
            (None, None) => unreachable!("a start without a kept plan makes its profile"),
        };
        let (program, one_shot, max_turns) = self.session.start_program(type_index, teammate, spec);
        let id = self.agents.next_id;
        self.agents.next_id += 1;
        // DEPTH-3: a caller below the limit spawns; main always may, so the bound is at
        // least 1 (a kernel invariant).
        debug_assert!(
            depth <= self.session.config.depth_limit.max(1),
            "kernel invariant: depth {depth} is past the limit {}",
            self.session.config.depth_limit
        );
        let (slot, gen) = self.agents.add(
            &start,
            Made {
                id,
                profile,
                program,
                one_shot,
                max_turns,
            },
        );
        let Start {
            caller,
            caller_slot,
            name,
            fork,
            agent_call,
            ..
        } = start;
        if let Some(name) = &name {
            self.agents.names.insert(name.clone(), id);
            if agent_call {
                // RESUME-12: the conversation knows which agent this name reached first
                // (a `/subtask` fork's name, the person's, counts once Claude sends to it).
                self.agents.reached.entry(name.clone()).or_insert(id);
            }
        }
        let running = self.take_slot(Some(caller_slot), !teammate, type_index);
        // A kernel invariant: a start the cap checked never takes `running` past the cap
        // (only unchecked starts — resumes, `/subtask`, CAP-6/7 — may).
        debug_assert!(
            !launch.cap_checked.0
                || self.session.config.admission.ultracode
                || self.session.config.cap.is_none_or(|cap| running <= cap),
            "kernel invariant: running {running} exceeds the cap after a checked start"
        );
        let started = trace::Started {
            agent: AgentRef { id, name },
            parent: caller,
            depth,
            mode,
            fork,
            running,
            cap_checked: launch.cap_checked.0,
            profile,
        };
        self.trace
            .agent_started(self.clock.now, launch.rule, started);
        // ISO-1 / FORK-8: the call's or the definition's `isolation` gives the run its own
        // worktree (`sim/worktree`).
        if spec.isolation.is_some()
            || type_index.is_some_and(|index| self.session.types[index].def.isolation.is_some())
        {
            self.worktree_start(slot, spec.isolation.as_deref(), teammate);
        }
        self.run_started(slot, gen, RunTransition::Start);
        Ok((slot, mode))
    }

    /// `max_agents`, `max_running` (CAP-8: a teammate takes no slot, so it does not count;
    /// its record does count toward `max_held`) and `max_held`: whether one more run would
    /// pass a limit; if so the run stops there (`limit_reached`) and this answers `true`.
    #[inline(always)]
    fn start_refused(&mut self, teammate: bool) -> bool {
        let limits = self.trace.limits;
        if self.agents.next_id as u64 > limits.max_agents {
            self.hit_limit(Limit::MaxAgents, limits.max_agents);
            return true;
        }
        if !teammate && u64::from(self.running()) >= limits.max_running {
            self.hit_limit(Limit::MaxRunning, limits.max_running);
            return true;
        }
        self.agents.free.is_empty() && self.held_full()
    }

    /// The tail every start shares — a new run's ([`Kernel::launch`]) and a resumed run's
    /// (`Kernel::resume`), in two halves around the start's own event, which each door
    /// writes itself (`agent_started`, `agent_resumed`) with the running count this half
    /// answers: the run takes a slot (`takes_slot`; a teammate takes none, CAP-8) and
    /// counts as a running child of the run it reports to (in `recipient_slot`). The
    /// moment-time admission's counts are told of it with its type (`type_key`).
    #[inline(always)]
    pub(super) fn take_slot(
        &mut self,
        recipient_slot: Option<u32>,
        takes_slot: bool,
        type_key: Option<usize>,
    ) -> u32 {
        if takes_slot {
            self.count_start(type_key);
        }
        if let Some(recipient_slot) = recipient_slot {
            self.agents.get_mut(recipient_slot).children_running += 1;
        }
        self.running()
    }

    /// The second half of the tail every start shares, after its event: the observers
    /// (hooks, the panel) see the run start (`transition`), and its first step is due
    /// now.
    #[inline(always)]
    pub(super) fn run_started(&mut self, slot: u32, gen: u32, transition: RunTransition) {
        self.observe_start(slot, transition);
        self.clock
            .schedule(self.clock.now, Wake::Step { slot, gen });
    }
}

impl Session {
    /// The program a new run of `type_index` runs (the call's own behaviour, else its
    /// type's, else the default one, built once), whether it is one-shot (RESUME-3: a
    /// teammate of a one-shot type is still addressed by its name, SPAWN-11) and its
    /// `maxTurns`.
    #[inline(always)]
    fn start_program<'a>(
        &'a self,
        type_index: Option<usize>,
        teammate: bool,
        spec: &'a SpawnSpec,
    ) -> (&'a Program, bool, Option<u32>) {
        let (type_behavior, one_shot, max_turns) = match type_index {
            Some(index) => {
                let type_def = &self.types[index];
                (
                    &type_def.behavior,
                    // RESUME-3 / SPAWN-11: a one-shot type's run returns no agent ID (a
                    // teammate is still addressed by its name).
                    subsim_rules::resume::returns_no_id(type_def.one_shot, teammate).0,
                    type_def.def.max_turns,
                )
            }
            None => (&self.default_program, false, None),
        };
        (
            spec.behavior.as_ref().unwrap_or(type_behavior),
            one_shot,
            max_turns,
        )
    }
}

/// Which text a refused Agent call carries (`spawn_rejected.message`).
#[derive(Clone, Copy)]
enum RefusalText {
    /// The plan's refusal (`CachedPlan::message`).
    Plan,
    /// The reason's fixed message, for a refusal at the moment of the call (CAP-1's at the
    /// cap, …: `Session::refusal_texts`, `RejectFacts::message`).
    Fixed,
}

/// Where an Agent call comes from.
#[derive(Clone, Copy, Debug)]
pub(super) enum Call {
    /// A `spawn` step of the calling run's program.
    Step,
    /// Arrival number `arrival` of the load stream at `stream` (`load.streams`): main's
    /// call, the stream's spawn.
    Load { stream: usize, arrival: u64 },
}

impl Call {
    /// The load stream whose arrival this call is, if it is one (its plan is the stream's,
    /// `Kernel::spawn_plan`).
    #[inline(always)]
    pub(super) fn stream(self) -> Option<usize> {
        match self {
            Call::Step => None,
            Call::Load { stream, .. } => Some(stream),
        }
    }

    /// The load arrival this call is (`spawn_requested.arrival`).
    #[inline(always)]
    pub(super) fn arrival(self) -> Option<u64> {
        match self {
            Call::Step => None,
            Call::Load { arrival, .. } => Some(arrival),
        }
    }
}

/// Each reason's fixed message (`RejectFacts::message`), by the reason's index; empty for
/// a reason without one (no refusal at the moment of the call has such a reason: `cap.rs`'s
/// tests, and `Kernel::reject_spawn` checks it in debug builds).
pub(super) type RefusalTexts = [Rc<str>; RejectReason::ALL.len()];

/// The fixed message of each reason (`RejectFacts::message`: CAP-1's at the cap, …), made
/// once per session and shared by every refusal at the moment of the call.
pub(super) fn refusal_texts() -> RefusalTexts {
    RejectReason::ALL.map(|reason| Rc::from(reason.facts().message.unwrap_or_default()))
}
