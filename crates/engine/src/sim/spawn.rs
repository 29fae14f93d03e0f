//! Agent tool calls — the one spawn path. Every Agent call (a step's, a load arrival's or
//! its retry, a fork, a teammate) is `spawn`: `spawn_requested`, the call's plan — Q-11's
//! checks up to the cap, answered by `rules::plan::plan` and kept per kind of call — then
//! the cap at this moment, then the start.
//!
//! Rules of the plan cache: a plan is a pure function of its `PlanKey` (the call's fields,
//! who calls, the caller's depth class and whether it has `Agent`) and of what never
//! changes during a run (definitions, settings, main's pool), but for its launch's depth,
//! which `Launch::child_depth` answers for each caller (`plan::DepthClass`: a chain of
//! subagents shares one plan, not one per depth). A kept plan is used only for a call with
//! an equal key, and in debug builds every use replays `rules::plan::plan` and asserts the
//! same answer. When a run starts, the kernel numbers the kinds of call of its copy of
//! the spec by value (`number_calls`: equal `PlanKey` fields, but for the name and the
//! caller, get one `SpawnSpec::call_kind`). The last plan is kept with its key, number and
//! caller, and a call is first compared with it — by number (a call not numbered, field
//! by field) — then looked up by key: a plan is never chosen by the address of the spec
//! that asked for it.
//!
//! Every run that starts, starts in `launch`, with a launch the rules planned: an Agent
//! call's (a subagent, a fork, or a teammate — SPAWN-11: depth 0, no slot, CAP-8), or the
//! person's `/subtask` fork, which is not an Agent call (no request, no plan kept, no cap
//! check: CAP-6, FORK-9) and whose launch `rules::plan::Subtask::launch` gives
//! (`start_subtask`).

use subsim_rules::plan::{self, Launched, PlanTools, SpawnPlan};
use subsim_rules::{context, spawn};

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
        let plan_caller = self.plan_caller(caller_slot);
        let planned = self.spawn_plan(plan_caller, spec, name.is_some());
        // Names never change, so the caller's reference is the one it had at the call.
        let caller_ref = self.agents.get(caller_slot).reference();
        // One text per name, shared by every run that takes it (a name spawned again and
        // again held a copy per run).
        let name: Option<Rc<str>> = name.map(|n| self.agents.shared_name(&n));
        // SPAWN-13 / FORK-3: fork mode removes `run_in_background` from the Agent tool.
        let background =
            spawn::run_in_background_param(spec.background, self.session.config.fork_mode);
        emit_hot!(self, requested, None, |kind| {
            if let EventKind::SpawnRequested {
                caller: kept_caller,
                agent_type,
                name: kept_name,
                background: kept_background,
                fork,
                arrival,
                stream,
            } = kind
            {
                kept_caller.id = caller_ref.id;
                kept_caller.name.clone_from(&caller_ref.name);
                if !Rc::ptr_eq(agent_type, &planned.requested) {
                    agent_type.clone_from(&planned.requested);
                }
                kept_name.clone_from(&name);
                *kept_background = background;
                *fork = spec.fork;
                *arrival = self.load.arrival;
                // Written only when it changes (a load run's calls all carry one).
                let current = self.load.streams.current();
                if stream.as_ref().map(Rc::as_ptr) != current.map(Rc::as_ptr) {
                    *stream = current.cloned();
                }
            }
        });
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
            depth: if plan_caller.depth == planned.caller_depth {
                launch.depth
            } else {
                launch.child_depth(&self.rules_caller(plan_caller.class), plan_caller.depth)
            },
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
            // SPAWN-11 / Q-44: the plan's depth whoever calls (`Launch::child_depth`).
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
        let planned = CachedPlan {
            requested: self.caches.fork_arc.clone(),
            caller_depth: 0,
            plan: SpawnPlan::Launch(launch),
            type_index: None,
            tools: Rc::from(Vec::new()),
            message: Rc::from(""),
            profile: std::cell::OnceCell::new(),
        };
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
            RefusalText::Limit => &self.caches.limit_message,
        };
        emit_hot!(self, rejected, Some(rule), |kind| {
            if let EventKind::SpawnRejected {
                caller: kept_caller,
                agent_type,
                name: kept_name,
                reason: kept_reason,
                message: kept_message,
                hint,
                running,
            } = kind
            {
                kept_caller.id = caller.id;
                kept_caller.name = caller.name;
                if !Rc::ptr_eq(agent_type, &planned.requested) {
                    agent_type.clone_from(&planned.requested);
                }
                *kept_name = name;
                *kept_reason = reason;
                if !Rc::ptr_eq(kept_message, message) {
                    kept_message.clone_from(message);
                }
                *hint = cap::hint(reason);
                *running = self.agents.running;
            }
        });
        Err(Some(reason))
    }

    /// The plan of an Agent call of this kind from `caller`: the last one if the call is of
    /// the same kind from a caller at the same depth, else the cached one, else a new one
    /// from `rules::plan`. A plan is kept per depth class (`plan::DepthClass`), not per
    /// depth: its launch's depth is the one of the caller it was made for, and `spawn` asks
    /// `Launch::child_depth` for the caller at hand. In debug builds a kept plan, moved to
    /// this caller's depth (`SpawnPlan::at_depth`), is checked against a fresh resolution,
    /// so the cache can never drift from the rules unseen. The kind of call is compared by
    /// value (`PlanKey`'s fields), never by the spec's address.
    ///
    /// A call the kernel numbered (`SpawnSpec::call_kind`, `number_calls`) is of the last
    /// call's kind when the two numbers are equal: the numbers were given by the same
    /// fields' values. A call not numbered is compared field by field.
    #[inline(always)]
    fn spawn_plan(&mut self, caller: PlanCaller, spec: &SpawnSpec, named: bool) -> Rc<CachedPlan> {
        if let Some(last) = &self.caches.last_plan {
            if last.caller == caller
                && last.key.named == named
                && if spec.call_kind.is_numbered() {
                    last.kind == spec.call_kind
                } else {
                    last.key.is_of(spec, named, self.classifier_blocks(spec))
                }
            {
                debug_assert!(
                    last.key.is_of(spec, named, self.classifier_blocks(spec)),
                    "calls numbered alike are of one kind"
                );
                let plan = last.plan.clone();
                self.debug_replay(&plan, caller, spec, named, self.classifier_blocks(spec));
                return plan;
            }
        }
        self.spawn_plan_by_key(caller, spec, named, self.classifier_blocks(spec))
    }

    /// HANDBACK-7: whether the classifier blocks this call's launch (its own verdicts, else
    /// the session's).
    #[inline(always)]
    fn classifier_blocks(&self, spec: &SpawnSpec) -> bool {
        spec.classifier
            .map_or(self.session.classifier.launch_blocks, |c| c.launch_blocks)
    }

    /// [`Kernel::spawn_plan`] when the call is not of the last call's kind: looked up by
    /// its key, else made. Kept out of line so that the last plan's check stays small.
    #[inline(never)]
    fn spawn_plan_by_key(
        &mut self,
        caller: PlanCaller,
        spec: &SpawnSpec,
        named: bool,
        classifier_blocks: bool,
    ) -> Rc<CachedPlan> {
        let key = self.plan_key(spec, named, self.caller_key(caller));
        let kind = spec.call_kind;
        if let Some(plan) = self.caches.plans.get(&key).cloned() {
            self.caches.last_plan = Some(LastPlan {
                key,
                kind,
                caller,
                plan: plan.clone(),
            });
            self.debug_replay(&plan, caller, spec, named, classifier_blocks);
            return plan;
        }
        let plan = Rc::new(self.compute_plan(caller, spec, named, classifier_blocks));
        self.caches.plans.insert(key.clone(), plan.clone());
        self.caches.last_plan = Some(LastPlan {
            key,
            kind,
            caller,
            plan: plan.clone(),
        });
        plan
    }

    /// Debug builds: a kept plan, moved to this caller's depth, must equal the full
    /// resolution by `rules::plan` (issue #7: a cache can never diverge unseen).
    #[inline(always)]
    fn debug_replay(
        &self,
        plan: &CachedPlan,
        caller: PlanCaller,
        spec: &SpawnSpec,
        named: bool,
        classifier_blocks: bool,
    ) {
        debug_assert_eq!(
            plan.plan
                .at_depth(&self.rules_caller(caller.class), caller.depth),
            self.rules_plan(caller, spec, named, classifier_blocks),
            "a kept spawn plan differs from the rules' resolution"
        );
        let _ = (plan, caller, spec, named, classifier_blocks);
    }

    /// The kind of call `spec` makes, named or not, from a caller kept as `caller`.
    fn plan_key(&self, spec: &SpawnSpec, named: bool, caller: CallerKey) -> PlanKey {
        PlanKey {
            agent: spec.agent.clone(),
            fork: spec.fork,
            named,
            isolation: spec.isolation.clone(),
            background: spec.background,
            needs_result: spec.needs_result,
            classifier_blocks: self.classifier_blocks(spec),
            caller,
        }
    }

    /// What a plan reads of its caller.
    #[inline]
    fn plan_caller(&self, caller_slot: u32) -> PlanCaller {
        let agent = self.agents.get(caller_slot);
        let class = if agent.id == MAIN {
            if self.session.main_agent.is_some() {
                CallerClass::MainAgent
            } else {
                CallerClass::Main
            }
        } else if agent.fork {
            CallerClass::Fork
        } else if agent.teammate {
            CallerClass::Teammate
        } else {
            CallerClass::Subagent
        };
        PlanCaller {
            class,
            depth: agent.depth,
            // DEPTH-5: a subagent needs `Agent` in its own tools; main always has it.
            has_agent_tool: subsim_rules::depth::has_agent_tool(
                agent.id == MAIN,
                agent.profile.tools.iter().map(|tool| &**tool),
            )
            .0,
        }
    }

    /// The caller as its plan is kept: DEPTH-1…4 through `plan::depth_class`.
    fn caller_key(&self, caller: PlanCaller) -> CallerKey {
        CallerKey {
            class: caller.class,
            depth_class: plan::depth_class(
                &self.rules_caller(caller.class),
                caller.depth,
                self.session.config.depth_limit,
            ),
            has_agent_tool: caller.has_agent_tool,
        }
    }

    /// The caller as `rules::spawn` sees it.
    #[inline]
    fn rules_caller(&self, class: CallerClass) -> spawn::Caller<'_> {
        match class {
            CallerClass::Main => spawn::Caller::Main,
            CallerClass::MainAgent => {
                let def = self
                    .session
                    .main_agent
                    .map(|index| &self.session.types[index].def);
                spawn::Caller::MainAgent {
                    tools: def.and_then(|def| def.tools.as_deref()),
                    disallowed: def.map_or(&[], |def| def.disallowed_tools.as_slice()),
                }
            }
            CallerClass::Fork => spawn::Caller::Fork,
            CallerClass::Teammate => spawn::Caller::Teammate,
            CallerClass::Subagent => spawn::Caller::Subagent,
        }
    }

    /// `rules::plan` for one kind of call, and what the kernel derives from the answer.
    fn compute_plan(
        &self,
        caller: PlanCaller,
        spec: &SpawnSpec,
        named: bool,
        classifier_blocks: bool,
    ) -> CachedPlan {
        let answer = self.rules_plan(caller, spec, named, classifier_blocks);
        // SPAWN-3 / FORK-3: `fork`, the named type, or general-purpose.
        let requested: Rc<str> = Rc::from(spawn::requested_type(spec.agent.as_deref(), spec.fork));
        let (type_index, tools, message) = match &answer {
            SpawnPlan::Launch(launch) => {
                let type_index = match &launch.launched {
                    Launched::Subagent(name) | Launched::Teammate(name) => {
                        self.session.type_index.get(name.as_str()).copied()
                    }
                    Launched::Fork => None,
                };
                let tools: ToolList = match &launch.tools {
                    PlanTools::Resolved { tools, .. } => {
                        tools.iter().map(|tool| Rc::from(tool.as_str())).collect()
                    }
                    PlanTools::Main => Rc::from(Vec::new()),
                };
                (type_index, tools, Rc::from(""))
            }
            SpawnPlan::Reject { message, .. } => {
                (None, Rc::from(Vec::new()), Rc::from(message.as_str()))
            }
        };
        CachedPlan {
            requested,
            caller_depth: caller.depth,
            plan: answer,
            type_index,
            tools,
            message,
            profile: std::cell::OnceCell::new(),
        }
    }

    /// `rules::plan::plan` for one kind of call from `caller`.
    fn rules_plan(
        &self,
        caller: PlanCaller,
        spec: &SpawnSpec,
        named: bool,
        classifier_blocks: bool,
    ) -> SpawnPlan {
        let definitions: Vec<spawn::Definition<'_>> = self
            .session
            .types
            .iter()
            .filter(|type_def| type_def.def.scope != Scope::BuiltIn)
            .map(|type_def| rules_definition(&type_def.def.name, type_def.def.scope))
            .collect();
        let caller_kind = self.rules_caller(caller.class);
        let input = plan::PlanInput {
            request: spawn::SpawnRequest {
                subagent_type: spawn::call_type(spec.agent.as_deref(), spec.fork),
                fork: spec.fork,
                name: named.then_some("named"),
                isolation: spec.isolation.as_deref(),
                caller: caller_kind,
                definitions: &definitions,
                env: spawn::BuiltinEnv {
                    disable_explore_plan: self.session.config.disable_explore_plan,
                    sdk_disable_builtins: self.session.config.disable_builtins,
                },
                deny: &self.session.permissions.deny,
                session: self.session.config.kind,
                agent_teams: self.session.config.agent_teams,
                fork_mode: self.session.config.fork_mode,
                gates: self.session.config.gates,
            },
            caller_depth: caller.depth,
            caller_has_agent_tool: caller.has_agent_tool,
            run_in_background: spec.background,
            needs_result: spec.needs_result,
            classifier_blocks_launch: classifier_blocks,
            pool: &self.session.pool,
            auto_memory: self.session.auto_memory,
            config: &self.session.config,
        };
        let facts = |name: &str| {
            let def = &self.session.types[*self.session.type_index.get(name)?].def;
            Some(plan::DefinitionFacts {
                background: def.background,
                fields: Fields {
                    tools: def.tools.as_deref(),
                    disallowed: &def.disallowed_tools,
                },
                memory: def.memory.is_some(),
                permission_mode: def.permission_mode,
                plugin: def.scope == Scope::Plugin,
            })
        };
        plan::plan(&input, &facts)
    }

    /// The tools a launch of `planned` runs with (asked only when its run's profile is
    /// made, not for every start that reuses one).
    fn plan_tools(&self, planned: &CachedPlan) -> ToolList {
        match &planned.plan {
            // FORK-5 / TOOLS-2: a fork runs with main's own tools.
            SpawnPlan::Launch(launch) if matches!(launch.tools, PlanTools::Main) => {
                self.agents.get(0).profile.tools.clone()
            }
            _ => planned.tools.clone(),
        }
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
                    subsim_rules::resume::returns_no_id(type_def.one_shot, teammate).0,
                    type_def.def.max_turns,
                )
            }
            // A fork without its own behaviour runs the default program, built once.
            None => (&self.caches.default_program, false, None),
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
        let AgentRef {
            id: parent_id,
            name: parent_name,
        } = caller;
        let running = self.agents.running;
        self.emit_started(
            placement_rule,
            id,
            name,
            parent_id,
            parent_name,
            depth,
            mode,
            spec.fork,
            running,
            cap_checked,
            profile,
        );
        self.observe_start(slot, subsim_rules::hooks::RunTransition::Start);
        self.clock
            .schedule(self.clock.now, Wake::Step { slot, gen });
        Ok((slot, mode))
    }

    /// `agent_started`, written into its kept event (`emit_hot!`). Inlined into `launch`:
    /// out of line (as it was while events were built anew, to keep their copies in a frame
    /// of their own) the call cost ~30 instructions a start.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn emit_started(
        &mut self,
        rule: RuleId,
        id: AgentId,
        name: Option<Rc<str>>,
        parent_id: AgentId,
        parent_name: Option<Rc<str>>,
        depth: u32,
        mode: Mode,
        fork: bool,
        running: u32,
        cap_checked: bool,
        profile: &Rc<RunProfile>,
    ) {
        emit_hot!(self, started, Some(rule), |kind| {
            if let EventKind::AgentStarted {
                agent,
                parent,
                depth: kept_depth,
                mode: kept_mode,
                fork: kept_fork,
                running: kept_running,
                cap_checked: kept_cap_checked,
                profile: kept_profile,
            } = kind
            {
                agent.id = id;
                agent.name = name;
                parent.id = parent_id;
                parent.name = parent_name;
                *kept_depth = depth;
                *kept_mode = mode;
                *kept_fork = fork;
                *kept_running = running;
                *kept_cap_checked = cap_checked;
                // The run's profile: load runs share one, kept from the last start.
                if !Rc::ptr_eq(kept_profile, profile) {
                    kept_profile.clone_from(profile);
                }
            }
        });
    }

    /// MODEL-1…14: the model of a run of `type_index` (None: a fork), and its rule.
    pub(super) fn run_model(
        &self,
        type_index: Option<usize>,
        invocation: Option<&str>,
        fork: bool,
        resumed: bool,
    ) -> (Rc<str>, RuleId) {
        if let (Some(index), None, false, false) = (type_index, invocation, fork, resumed) {
            let type_def = &self.session.types[index];
            return (type_def.model.clone(), type_def.model_rule);
        }
        let fork_def;
        let def = match type_index {
            Some(index) => &self.session.types[index].def,
            None => {
                fork_def = AgentDef {
                    name: spawn::FORK_TYPE.into(),
                    ..AgentDef::default()
                };
                &fork_def
            }
        };
        let choice =
            self.session
                .models
                .choose(&self.session.config, def, invocation, fork, resumed);
        (Rc::from(choice.model.as_str()), choice.rule)
    }

    /// MODEL-14: env > per-invocation (v2.1.292+, non-fork) > frontmatter > session.
    pub(super) fn run_effort(
        &self,
        type_index: Option<usize>,
        invocation: Option<&str>,
        fork: bool,
    ) -> Option<Rc<str>> {
        let frontmatter =
            type_index.and_then(|index| self.session.types[index].def.effort.as_deref());
        let (effort, _) = model::resolve_effort(
            self.session.effort_env.as_deref(),
            invocation,
            frontmatter,
            self.session.effort.as_deref(),
            fork,
            &self.session.config.gates,
        );
        effort.map(|effort| Rc::from(effort.as_str()))
    }

    /// CTX-1…8, MEM-1…6, MCP-1…6 through `rules::context`: the context pieces a run starts
    /// with, its MCP servers, and the tools its inline servers bring.
    pub(super) fn startup(
        &self,
        type_index: Option<usize>,
        fork: bool,
        tools: &ToolList,
    ) -> (ToolList, ToolList, Vec<Rc<str>>) {
        if fork || type_index.is_none() {
            // FORK-5 / FORK-13: a fork inherits main's whole conversation.
            let input = context::StartupInput {
                session: self.session.config.kind,
                ..context::StartupInput::new(
                    context::AgentKind::Fork,
                    spawn::FORK_TYPE,
                    self.session.config.gates,
                )
            };
            let pieces: ToolList = context::startup_context(&input)
                .pieces
                .iter()
                .filter(|piece| piece.included)
                .map(|piece| Rc::from(piece.label))
                .collect();
            return (pieces, self.session.mcp.clone(), Vec::new());
        }
        let def = &self.session.types[type_index.unwrap_or(0)].def;
        let kind = match (model::BuiltIn::from_name(&def.name), def.scope) {
            (Some(built_in), Scope::BuiltIn) => context::AgentKind::BuiltIn(built_in),
            (_, scope) => context::AgentKind::Custom(scope),
        };
        let tool_names: Vec<String> = tools.iter().map(|tool| tool.to_string()).collect();
        let named: Vec<String> = self
            .agents
            .names
            .keys()
            .map(|name| name.to_string())
            .collect();
        let skills: Vec<context::Skill<'_>> = def
            .skills
            .iter()
            .map(|name| context::Skill {
                name,
                state: context::SkillState::Available,
            })
            .collect();
        let servers: Vec<context::McpServer<'_>> = def
            .mcp_servers
            .iter()
            .map(|server| context::McpServer {
                name: &server.name,
                inline: server.inline,
            })
            .collect();
        let configured: Vec<String> = self
            .session
            .mcp
            .iter()
            .map(|name| name.to_string())
            .collect();
        let source_dir = self.trust_folder(def);
        let memory = def.memory.as_deref().and_then(context::MemoryScope::parse);
        let input = context::StartupInput {
            omit_claude_md: def.omit_claude_md,
            skills: &skills,
            tools: &tool_names,
            named_agents: &named,
            memory,
            auto_memory: self.session.auto_memory,
            mcp: context::McpInput {
                servers: &servers,
                scope: def.scope,
                source_dir: Some(&source_dir),
                trusted_dirs: &self.session.trusted_dirs,
                configured: &configured,
                ..context::McpInput::default()
            },
            session: self.session.config.kind,
            ..context::StartupInput::new(kind, &def.name, self.session.config.gates)
        };
        let started = context::startup_context(&input);
        let pieces: ToolList = started
            .pieces
            .iter()
            .filter(|piece| piece.included)
            // CTX-3: omitClaudeMd's managed-only CLAUDE.md has its own label.
            .map(|piece| Rc::from(piece.label))
            .collect();
        let mut servers_list: Vec<Rc<str>> = self.session.mcp.iter().cloned().collect();
        let mut inline_tools = Vec::new();
        for outcome in &started.mcp {
            if !outcome.status.available() {
                continue;
            }
            if !servers_list.iter().any(|name| **name == *outcome.name) {
                servers_list.push(Rc::from(outcome.name.as_str()));
            }
            if outcome.status == context::McpStatus::Connected {
                if let Some(server) = def
                    .mcp_servers
                    .iter()
                    .find(|server| server.name == outcome.name)
                {
                    for tool in &server.tools {
                        inline_tools
                            .push(Rc::from(tools::mcp_tool_name(&server.name, tool).as_str()));
                    }
                }
            }
        }
        (pieces, servers_list.into(), inline_tools)
    }

    /// The profile of a new run; cached per (type, placement, mode, teammate or not) when
    /// the call passes no per-invocation model or effort, so load runs share one. The key
    /// stands for the tools, which the plan resolved from the same facts (a teammate's
    /// differ from a background subagent's of its type: TOOLS-9).
    #[allow(clippy::too_many_arguments)]
    fn run_profile(
        &mut self,
        type_index: Option<usize>,
        spec: &SpawnSpec,
        mode: Mode,
        depth: u32,
        permission_mode: PermissionMode,
        teammate: bool,
        tools: ToolList,
    ) -> Rc<RunProfile> {
        // The sibling roster (CTX-6) is a snapshot of the names in use, but a profile keeps
        // only whether the roster piece is included, which depends only on whether any
        // agent has a name: that is part of the key. (Rebuilding the profile, roster
        // included, at every named start made named arrivals cost O(n) each.)
        let cacheable = spec.model.is_none() && spec.effort.is_none();
        let at_limit = depth >= self.session.config.depth_limit;
        let key = (
            type_index.map_or(usize::MAX, |index| index),
            u8::from(mode == Mode::Background)
                | (u8::from(at_limit) << 1)
                | (u8::from(spec.fork) << 2)
                | (u8::from(!self.agents.names.is_empty()) << 3)
                | (u8::from(teammate) << 4),
            permission_mode,
        );
        if cacheable {
            if let Some((last_key, profile)) = &self.caches.last_profile {
                if *last_key == key {
                    return profile.clone();
                }
            }
            if let Some(profile) = self.caches.profiles.get(&key) {
                let profile = profile.clone();
                self.caches.last_profile = Some((key, profile.clone()));
                return profile;
            }
        }
        let (model, model_rule) =
            self.run_model(type_index, spec.model.as_deref(), spec.fork, false);
        let agent_type = match type_index {
            Some(index) if !spec.fork => self.session.types[index].name.clone(),
            _ => self.caches.fork_arc.clone(),
        };
        let (context, mcp_servers, inline_tools) = self.startup(type_index, spec.fork, &tools);
        let tools = if inline_tools.is_empty() {
            tools
        } else {
            // MCP-1: an inline server connects for this subagent and brings its tools.
            let mut list: Vec<Rc<str>> = tools.iter().cloned().collect();
            list.extend(inline_tools);
            list.into()
        };
        let profile = Rc::new(RunProfile {
            agent_type,
            model,
            model_rule,
            effort: self.run_effort(type_index, spec.effort.as_deref(), spec.fork),
            permission_mode,
            tools,
            context,
            mcp_servers,
            teammate,
        });
        if cacheable {
            self.caches.profiles.insert(key, profile.clone());
        }
        profile
    }
}

/// A spawn plan as the kernel keeps it: the rules' plan, and what the kernel derives from
/// it once — the type's index, the tools as shared strings, the requested type as the
/// trace names it, a refusal's message.
pub(super) struct CachedPlan {
    /// The type as `spawn_requested` and `spawn_rejected` name it.
    requested: Rc<str>,
    /// The depth of the caller the plan was made for: a launch's depth is that caller's
    /// child's (`Launch::child_depth` answers for other callers of the depth class).
    caller_depth: u32,
    /// `rules::plan::plan`'s answer.
    plan: SpawnPlan,
    /// The definition that runs (a subagent's or a teammate's type; `None` for a fork).
    type_index: Option<usize>,
    /// `PlanTools::Resolved`'s tools (empty otherwise).
    tools: ToolList,
    /// A refusal's message (empty for a launch).
    message: Rc<str>,
    /// The profile its runs share, once one was handed out while profiles are shared.
    profile: std::cell::OnceCell<Rc<RunProfile>>,
}

/// Who calls, as a plan reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum CallerClass {
    Main,
    MainAgent,
    Subagent,
    Fork,
    Teammate,
}

/// What a plan reads of its caller: who it is, its depth, whether it has `Agent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PlanCaller {
    class: CallerClass,
    depth: u32,
    has_agent_tool: bool,
}

/// A caller as a plan is kept for it: its depth class, not its depth (a plan holds for
/// every depth of one class but for its launch's depth, `plan::DepthClass`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct CallerKey {
    class: CallerClass,
    depth_class: plan::DepthClass,
    has_agent_tool: bool,
}

/// A kind of Agent call: every input of `rules::plan::plan` that may differ between two
/// calls of one session (the rest — definitions, settings, main's pool — never changes
/// during a run).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct PlanKey {
    agent: Option<String>,
    fork: bool,
    named: bool,
    isolation: Option<String>,
    background: Option<bool>,
    needs_result: bool,
    classifier_blocks: bool,
    caller: CallerKey,
}

impl PlanKey {
    /// Is `spec`, named or not, with these classifier verdicts, a call of this kind (the
    /// caller aside)? Compared by value: cheap fields first, the type's name last (a load
    /// run's calls all match).
    #[inline(always)]
    fn is_of(&self, spec: &SpawnSpec, named: bool, classifier_blocks: bool) -> bool {
        self.fork == spec.fork
            && self.named == named
            && self.background == spec.background
            && self.needs_result == spec.needs_result
            && self.classifier_blocks == classifier_blocks
            && self.isolation.as_deref() == spec.isolation.as_deref()
            && self.agent.as_deref() == spec.agent.as_deref()
    }
}

/// The last kind of Agent call, its number, its caller and its plan, compared in place
/// before `Caches::plans` is asked.
pub(super) struct LastPlan {
    key: PlanKey,
    /// The call's `SpawnSpec::call_kind` (not numbered when the call was not).
    kind: CallKind,
    caller: PlanCaller,
    plan: Rc<CachedPlan>,
}

/// What numbers the kinds of Agent call of one run (`SpawnSpec::call_kind`): every
/// `PlanKey` field a spec sets, by value, to its number (from 1).
struct CallKinds {
    numbers: BTreeMap<CallFields, u32>,
    /// The session's classifier verdict before launch (a call without its own).
    session_blocks: bool,
}

/// A call's own `PlanKey` fields (the name and the caller are the call's, not the spec's).
type CallFields = (
    Option<String>,
    bool,
    Option<String>,
    Option<bool>,
    bool,
    bool,
);

/// Numbers every Agent call the kernel's copy of `spec` can make — main's program, the
/// definitions' behaviours, the load's calls, the person's `/subtask` and resume steps,
/// and every program nested in them — by the values of its `PlanKey` fields: calls with
/// equal fields get one number, calls that differ in any get different ones. Whatever
/// number a spec held before is replaced. Programs are rebuilt with the numbered specs.
pub(super) fn number_calls(spec: &mut SimSpec) {
    let mut kinds = CallKinds {
        numbers: BTreeMap::new(),
        session_blocks: spec.session.classifier.launch_blocks,
    };
    spec.main = kinds.program(&spec.main);
    for def in spec.agents.values_mut() {
        if let Some(behavior) = &mut def.behavior {
            *behavior = kinds.program(behavior);
        }
    }
    if let Some(load) = &mut spec.load {
        for stream in &mut load.streams {
            kinds.number(&mut stream.spawn);
        }
    }
    for action in &mut spec.user.actions {
        match &mut action.kind {
            ActionKind::Subtask { behavior, .. } | ActionKind::TypeTo { behavior, .. } => {
                if let Some(behavior) = behavior {
                    *behavior = kinds.program(behavior);
                }
            }
            ActionKind::Stop(_)
            | ActionKind::CtrlB
            | ActionKind::Clear
            | ActionKind::Dismiss(_) => {}
        }
    }
}

impl CallKinds {
    /// `program` with its calls numbered, nested programs included.
    fn program(&mut self, program: &Program) -> Program {
        program.iter().map(|step| self.step(step)).collect()
    }

    fn step(&mut self, step: &Step) -> Step {
        match step {
            Step::Spawn(spec) => {
                let mut spec = spec.clone();
                self.number(&mut spec);
                Step::Spawn(spec)
            }
            Step::SpawnTogether(specs) => Step::SpawnTogether(
                specs
                    .iter()
                    .map(|spec| {
                        let mut spec = spec.clone();
                        self.number(&mut spec);
                        spec
                    })
                    .collect(),
            ),
            Step::Send(send) => Step::Send(SendSpec {
                behavior: send
                    .behavior
                    .as_ref()
                    .map(|behavior| self.program(behavior)),
                ..send.clone()
            }),
            Step::Repeat { times, steps } => Step::Repeat {
                times: *times,
                steps: self.program(steps),
            },
            other => other.clone(),
        }
    }

    /// Numbers `spec` and the calls of its behaviour.
    fn number(&mut self, spec: &mut SpawnSpec) {
        if let Some(behavior) = &spec.behavior {
            spec.behavior = Some(self.program(behavior));
        }
        let fields = (
            spec.agent.clone(),
            spec.fork,
            spec.isolation.clone(),
            spec.background,
            spec.needs_result,
            spec.classifier
                .map_or(self.session_blocks, |c| c.launch_blocks),
        );
        let next = self.numbers.len() as u32 + 1;
        spec.call_kind = CallKind(*self.numbers.entry(fields).or_insert(next));
    }
}

/// Which text a refused Agent call carries (`spawn_rejected.message`).
#[derive(Clone, Copy)]
enum RefusalText {
    /// The plan's refusal (`CachedPlan::message`).
    Plan,
    /// CAP-2's message at the cap (`Caches::limit_message`).
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

/// A definition as `rules::spawn` sees it, from its name (for a plugin, its scoped id) and
/// scope. DEF-5: a plugin's scoped id is `{plugin and folders}:{name}`.
pub(super) fn rules_definition(name: &str, scope: Scope) -> spawn::Definition<'_> {
    match (scope, name.rsplit_once(':')) {
        (Scope::Plugin, Some((plugin, bare))) => spawn::Definition {
            name: bare,
            scope,
            plugin: Some(plugin),
        },
        _ => spawn::Definition {
            name,
            scope,
            plugin: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::ClassifierSpec;

    /// The numbers `number_calls` gives the calls of `program`, in step order (a
    /// `spawn: [...]` step's calls in list order, nested programs after their step).
    fn numbers(program: &Program, out: &mut Vec<u32>) {
        for step in program.iter() {
            match step {
                Step::Spawn(spec) => {
                    out.push(spec.call_kind.0);
                    if let Some(behavior) = &spec.behavior {
                        numbers(behavior, out);
                    }
                }
                Step::SpawnTogether(specs) => {
                    out.extend(specs.iter().map(|spec| spec.call_kind.0));
                }
                Step::Repeat { steps, .. } => numbers(steps, out),
                Step::Send(send) => numbers(send.behavior.as_ref().expect("a behaviour"), out),
                _ => {}
            }
        }
    }

    /// Calls whose `PlanKey` fields are equal share a number; a difference in any one of
    /// them (the type, fork, isolation, background, the need for the result, the
    /// classifier's verdict, the session's verdict standing in for a call without one)
    /// gives another; the name, the count and the behaviour do not count; calls nested in
    /// a behaviour, a `repeat`, a `send` and a load stream are numbered too, and a number a
    /// spec held before is replaced.
    #[test]
    fn calls_are_numbered_by_the_values_of_their_key_fields() {
        let worker = || SpawnSpec {
            agent: Some("worker".into()),
            count: 1,
            ..SpawnSpec::default()
        };
        let blocking = ClassifierSpec {
            launch_blocks: true,
            ..ClassifierSpec::default()
        };
        let variants = [
            SpawnSpec {
                agent: Some("other".into()),
                ..worker()
            },
            SpawnSpec {
                fork: true,
                ..worker()
            },
            SpawnSpec {
                isolation: Some("worktree".into()),
                ..worker()
            },
            SpawnSpec {
                background: Some(true),
                ..worker()
            },
            SpawnSpec {
                background: Some(false),
                ..worker()
            },
            SpawnSpec {
                needs_result: true,
                ..worker()
            },
            SpawnSpec {
                classifier: Some(blocking),
                ..worker()
            },
        ];
        let same = [
            SpawnSpec {
                name: Some("named".into()),
                count: 3,
                model: Some("haiku".into()),
                call_kind: CallKind(99),
                ..worker()
            },
            SpawnSpec {
                // The session's verdict (false) written out is the same call.
                classifier: Some(ClassifierSpec::default()),
                behavior: Some(Rc::from(vec![Step::Spawn(worker())])),
                ..worker()
            },
        ];
        let mut main: Vec<Step> = vec![Step::Spawn(worker())];
        main.extend(variants.iter().cloned().map(Step::Spawn));
        main.extend(same.iter().cloned().map(Step::Spawn));
        main.push(Step::Repeat {
            times: 2,
            steps: Rc::from(vec![Step::SpawnTogether(Rc::from(vec![
                worker(),
                variants[0].clone(),
            ]))]),
        });
        main.push(Step::Send(SendSpec {
            to: "a1".into(),
            behavior: Some(Rc::from(vec![Step::Spawn(variants[1].clone())])),
            ..SendSpec::default()
        }));
        let mut spec = SimSpec::poisson_load("numbered", 20.0, SimTime::from_secs(1), 10);
        spec.main = Rc::from(main);
        number_calls(&mut spec);
        let mut got = Vec::new();
        numbers(&spec.main, &mut got);
        let w = got[0];
        assert!(w != 0, "numbered");
        let distinct: Vec<u32> = got[1..=variants.len()].to_vec();
        let mut sorted = distinct.clone();
        sorted.push(w);
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), variants.len() + 1, "{got:?}");
        let rest = &got[variants.len() + 1..];
        // `same`'s two calls, the call nested in the second one's behaviour, the repeat's
        // two, the send's one.
        assert_eq!(rest, [w, w, w, w, distinct[0], distinct[1]], "{got:?}");
        let load = spec.load.as_ref().expect("a load");
        assert_eq!(load.streams[0].spawn.call_kind.0, w);
    }

    /// With the session's classifier blocking launches, a call that says it does not is
    /// another kind than one that says nothing.
    #[test]
    fn a_call_without_a_verdict_takes_the_sessions() {
        let mut spec = SimSpec::minimal("verdicts");
        spec.session.classifier.launch_blocks = true;
        let plain = SpawnSpec {
            count: 1,
            ..SpawnSpec::default()
        };
        let allowing = SpawnSpec {
            classifier: Some(ClassifierSpec::default()),
            ..plain.clone()
        };
        let blocking = SpawnSpec {
            classifier: Some(spec.session.classifier),
            ..plain.clone()
        };
        spec.main = Rc::from(vec![
            Step::Spawn(plain),
            Step::Spawn(allowing),
            Step::Spawn(blocking),
        ]);
        number_calls(&mut spec);
        let mut got = Vec::new();
        numbers(&spec.main, &mut got);
        assert_eq!(got[0], got[2]);
        assert_ne!(got[0], got[1]);
    }
}
