//! Agent tool calls — the one spawn path. Every Agent call (a step's, a load arrival's or
//! its retry, a fork, a teammate) is `spawn`: `spawn_requested`, the call's plan — Q-11's
//! checks up to the cap, answered by `rules::plan::plan` and kept per kind of call — then
//! the cap at this moment, then the start.
//!
//! The plan comes from the decisions layer (`decide.rs`, `Kernel::spawn_plan`), which
//! keeps it per kind of call under the ground rules written there.
//!
//! Every run that starts, starts in `launch`, with a launch the rules planned: an Agent
//! call's (a subagent, a fork, or a teammate — SPAWN-11: depth 0, no slot, CAP-8), or the
//! person's `/subtask` fork, which is not an Agent call (no request, no plan kept, no cap
//! check: CAP-6, FORK-9) and whose launch `rules::plan::Subtask::launch` gives
//! (`start_subtask`).

use subsim_rules::plan::{self, Launched, SpawnPlan};
use subsim_rules::spawn;

use super::decide::CachedPlan;
use super::trace;
use super::*;

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
                if let Ok((child_slot, Mode::Foreground)) = self.spawn(slot, spec, name, false) {
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
    /// both have: the caller is not looked up by id.
    #[inline(always)]
    pub(super) fn spawn(
        &mut self,
        caller_slot: u32,
        spec: &SpawnSpec,
        name: Option<String>,
        from_load: bool,
    ) -> Result<(u32, Mode), Option<RejectReason>> {
        let (planned, plan_caller) = self.spawn_plan(caller_slot, spec, name.is_some());
        // Names never change, so the caller's reference is the one it had at the call.
        let caller_ref = self.agents.get(caller_slot).reference();
        // One text per name, shared by every run that takes it (a name spawned again and
        // again held a copy per run).
        let name: Option<Rc<str>> = name.map(|n| self.agents.shared_name(&n));
        // SPAWN-13 / FORK-3: fork mode removes `run_in_background` from the Agent tool.
        let background =
            spawn::run_in_background_param(spec.background, self.session.config.fork_mode);
        let requested = trace::Requested {
            caller: &caller_ref,
            agent_type: &planned.requested,
            name: &name,
            background,
            fork: spec.fork,
            arrival: self.load.arrival,
            stream: self.load.streams.current(),
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
            return self.launch_teammate(caller_slot, caller_ref, name, &planned, spec, from_load);
        }
        // CAP-1/3/4, CAP-5, CAP-10: the one check that depends on the moment.
        let admission = launch.admit(self.agents.running, &self.session.config);
        if !admission.admitted {
            // The message is the documented text exactly; the count is the event's `running`
            // and the cap is `session_started.cap`. CAP-2: nothing re-issues the call.
            return self.reject_spawn(
                &planned,
                caller_ref,
                name,
                RejectReason::ConcurrentLimit,
                admission.rule,
                RefusalText::Limit,
            );
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
            placement_rule: launch.rule,
            permission_mode: launch.permission_mode,
            cap_checked: launch.cap_checked.0,
            teammate: false,
            agent_call: true,
            from_load,
        };
        self.launch(start, &planned, spec)
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
            placement_rule: launch.rule,
            permission_mode: launch.permission_mode,
            cap_checked: launch.cap_checked.0,
            teammate: true,
            agent_call: true,
            from_load,
        };
        self.launch(start, planned, spec)
    }

    /// FORK-9 / FORK-10 / CAP-6 / Q-39: the person's `/subtask` fork, started by `launch`
    /// with the launch `rules::plan::Subtask::launch` plans for it: a fork of main at the
    /// depth, in the mode and under the rule the rules give, with the tools they name
    /// (`PlanTools::Main`: main's own), not checked against the cap. It is not an Agent
    /// call: no `spawn_requested`, no plan kept. Out of line: `launch`, inlined here, must
    /// not grow the person's actions into the loop's dispatch.
    #[cold]
    #[inline(never)]
    pub(super) fn start_subtask(&mut self, fork: &plan::Subtask, behavior: Option<Program>) {
        let launch = fork.launch(&self.session.config);
        debug_assert!(
            launch
                .admit(self.agents.running, &self.session.config)
                .admitted
        );
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
            placement_rule: launch.rule,
            permission_mode: launch.permission_mode,
            cap_checked: launch.cap_checked.0,
            teammate: false,
            agent_call: false,
            from_load: false,
        };
        let planned = CachedPlan::subtask(self.session.fork_arc.clone(), launch);
        // A refusal here is a safety limit, already written (`limit_reached`).
        let _ = self.launch(start, &planned, &spec);
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
            RefusalText::Limit => &self.session.limit_message,
        };
        let refusal = trace::Rejected {
            caller,
            agent_type: &planned.requested,
            name,
            reason,
            message,
            running: self.agents.running,
        };
        self.trace.spawn_rejected(self.clock.now, rule, refusal);
        Err(Some(reason))
    }

    /// An admitted Agent call: the agent limit, the run's profile, the record, the start.
    #[inline(always)]
    fn launch(
        &mut self,
        start: Start,
        planned: &CachedPlan,
        spec: &SpawnSpec,
    ) -> Result<(u32, Mode), Option<RejectReason>> {
        let Start {
            caller,
            caller_slot,
            name,
            type_index,
            depth,
            mode,
            placement_rule,
            permission_mode,
            cap_checked,
            teammate,
            agent_call,
            from_load,
        } = start;
        if self.agents.next_id as u64 > self.trace.limits.max_agents {
            self.hit_limit(Limit::MaxAgents, self.trace.limits.max_agents);
            return Err(None);
        }
        // CAP-8: a teammate takes no slot, so `max_running` does not count it; its record
        // does count toward `max_held`.
        if !teammate && u64::from(self.agents.running) >= self.trace.limits.max_running {
            self.hit_limit(Limit::MaxRunning, self.trace.limits.max_running);
            return Err(None);
        }
        if self.agents.free.is_empty() && self.held_full() {
            return Err(None);
        }
        // Started. The run's profile (type, model, effort, tools, context) is shared by
        // every run of the same definition in the same situation (`run_profile`). While
        // profiles are shared (no per-invocation model or effort, no agent has a name:
        // CTX-6's roster), a plan keeps the one `run_profile` gave its first run.
        let shared = spec.model.is_none() && spec.effort.is_none() && self.agents.names.is_empty();
        // Borrowed from the plan when it keeps one (no reference count changes hands unless
        // the record takes a profile it does not hold already: `Agent::init`).
        let made;
        let profile: &Rc<RunProfile> = match planned.profile.get() {
            Some(profile) if shared => {
                debug_assert!(Rc::ptr_eq(
                    profile,
                    &self.run_profile(
                        type_index,
                        spec,
                        mode,
                        depth,
                        permission_mode,
                        teammate,
                        self.plan_tools(planned)
                    )
                ));
                profile
            }
            _ => {
                let tools = self.plan_tools(planned);
                made = self.run_profile(
                    type_index,
                    spec,
                    mode,
                    depth,
                    permission_mode,
                    teammate,
                    tools,
                );
                if shared {
                    // Unset here: a plan's profile is set once and kept.
                    let _ = planned.profile.set(made.clone());
                }
                &made
            }
        };
        let (type_behavior, one_shot, max_turns) = match type_index {
            Some(index) => {
                let type_def = &self.session.types[index];
                (
                    &type_def.behavior,
                    // RESUME-3 is about subagents returning no agent ID: a teammate of a
                    // one-shot type is still addressed by its name (SPAWN-11).
                    type_def.one_shot && !teammate,
                    type_def.def.max_turns,
                )
            }
            // A fork without its own behaviour runs the default program, built once.
            None => (&self.session.default_program, false, None),
        };
        let behavior = spec.behavior.as_ref().unwrap_or(type_behavior);
        let id = self.agents.next_id;
        self.agents.next_id += 1;
        // CAP-8: a teammate takes no slot.
        self.agents.running += u32::from(!teammate);
        // Kernel invariants: a start the cap checked never takes `running` past the cap
        // (only unchecked starts — resumes, `/subtask`, CAP-6/7 — may), and no run is
        // deeper than the limit allows (DEPTH-3: a caller below the limit spawns; main
        // always may, so the bound is at least 1).
        debug_assert!(
            !cap_checked
                || self.session.config.ultracode
                || self
                    .session
                    .config
                    .cap
                    .is_none_or(|cap| self.agents.running <= cap),
            "kernel invariant: running {} exceeds the cap after a checked start",
            self.agents.running
        );
        debug_assert!(
            depth <= self.session.config.depth_limit.max(1),
            "kernel invariant: depth {depth} is past the limit {}",
            self.session.config.depth_limit
        );
        let (slot, gen) = self.agents.add(|| AgentStart {
            id,
            type_index,
            invocation_model: spec.model.as_deref().map(Rc::from),
            classifier: spec.classifier,
            profile,
            name: name.clone(),
            depth,
            mode,
            fork: spec.fork,
            teammate,
            profile_background: mode == Mode::Background,
            permission_mode,
            one_shot,
            max_turns,
            from_load,
            program: behavior,
            report_to: caller.id,
        });
        self.agents.get_mut(caller_slot).children_running += 1;
        if let Some(name) = &name {
            self.agents.names.insert(name.clone(), id);
            if agent_call {
                // RESUME-12: the conversation knows which agent this name reached first
                // (a `/subtask` fork's name, the person's, counts once Claude sends to it).
                self.agents.reached.entry(name.clone()).or_insert(id);
            }
        }
        let started = trace::Started {
            agent: AgentRef { id, name },
            parent: caller,
            depth,
            mode,
            fork: spec.fork,
            running: self.agents.running,
            cap_checked,
            profile,
        };
        self.trace
            .agent_started(self.clock.now, placement_rule, started);
        self.observe_start(slot, subsim_rules::hooks::RunTransition::Start);
        self.clock
            .schedule(self.clock.now, Wake::Step { slot, gen });
        Ok((slot, mode))
    }
}

/// Which text a refused Agent call carries (`spawn_rejected.message`).
#[derive(Clone, Copy)]
enum RefusalText {
    /// The plan's refusal (`CachedPlan::message`).
    Plan,
    /// CAP-2's message at the cap (`Session::limit_message`).
    Limit,
}

/// An admitted Agent call, as `launch` starts it.
struct Start {
    /// The caller's id and name (names never change: the one it had at the call).
    caller: AgentRef,
    caller_slot: u32,
    name: Option<Rc<str>>,
    type_index: Option<usize>,
    depth: u32,
    mode: Mode,
    placement_rule: RuleId,
    permission_mode: PermissionMode,
    /// CAP-5 / CAP-10 / Q-44: the plan checked the start against the cap.
    cap_checked: bool,
    /// SPAWN-11 / CAP-8: an agent-team teammate: no slot, its own tools (TOOLS-9).
    teammate: bool,
    /// An Agent tool call (not the person's `/subtask`): its name is one the conversation
    /// used (RESUME-12).
    agent_call: bool,
    from_load: bool,
}
