//! Agent tool calls: the spawn-time checks in Q-11's order, placement, tools, the cap, and starting a run.

use subsim_rules::{context, handback, spawn};

use super::*;

impl Kernel<'_> {
    // -- spawning ----------------------------------------------------------------------

    /// A `spawn` step: the Agent calls of one response, in order (`count` of each spec).
    /// Returns true if the caller blocked on foreground children.
    pub(super) fn spawn_step(&mut self, slot: u32, specs: &[SpawnSpec]) -> bool {
        let caller = self.agent(slot).id;
        let mut foreground = 0;
        for spec in specs {
            for index in 0..spec.count.max(1) {
                let name = match (&spec.name, spec.count) {
                    (Some(name), count) if count > 1 => Some(format!("{name}-{}", index + 1)),
                    (name, _) => name.clone(),
                };
                if let Ok((child_slot, Mode::Foreground)) = self.spawn(caller, spec, name, false) {
                    self.agent_mut(child_slot).awaited = true;
                    foreground += 1;
                }
                if self.limit.is_some() {
                    return true;
                }
            }
        }
        if foreground > 0 {
            // FGBG-4: a foreground subagent blocks the conversation that launched it.
            let agent = self.agent_mut(slot);
            agent.foreground_pending += foreground;
            agent.block = Block::Foreground;
            return true;
        }
        false
    }

    /// One Agent tool call. Checks run in the order Q-11 adopts: deny / allowlist → type →
    /// depth (the caller's Agent tool) → tools (zero tools) → placement → cap.
    pub(super) fn spawn(
        &mut self,
        caller: AgentId,
        spec: &SpawnSpec,
        name: Option<String>,
        from_load: bool,
    ) -> Result<(u32, Mode), Option<RejectReason>> {
        // A load arrival's call from main: everything up to the cap check depends only on
        // the session, the definitions and main (whose depth, fork and teammate flags never
        // change), so it is resolved once and then replayed (the same events follow).
        let plannable = from_load
            && caller == MAIN
            && name.is_none()
            && !spec.fork
            && std::ptr::eq(spec, &*self.load_spawn_spec);
        if plannable {
            if let Some(plan) = &self.load_plan {
                let plan = plan.clone();
                return self.spawn_planned(plan, spec);
            }
        }
        let caller_slot = self.slot_of(caller).ok_or(None)?;
        let caller_ref = self.agent(caller_slot).reference();
        // One lookup of the named type serves the event and the resolution below.
        let named_type: Option<usize> = match (&spec.agent, spec.fork) {
            (Some(agent), false) => self.find_type(agent),
            _ => None,
        };
        let requested: Rc<str> = if spec.fork {
            self.fork_arc.clone()
        } else {
            match (&spec.agent, named_type) {
                (Some(_), Some(index)) => self.types[index].name.clone(),
                (Some(agent), None) => Rc::from(agent.as_str()),
                (None, _) => self.general_purpose_arc.clone(),
            }
        };
        let name: Option<Rc<str>> = name.map(|n| Rc::from(n.as_str()));
        self.emit(
            None,
            EventKind::SpawnRequested {
                caller: caller_ref.clone(),
                agent_type: requested.clone(),
                name: name.clone(),
                background: if self.config.fork_mode {
                    None
                } else {
                    spec.background
                },
                fork: spec.fork,
                arrival: self.load_arrival,
            },
        );
        let reject =
            |kernel: &mut Kernel<'_>, reason: RejectReason, rule: RuleId, message: String| {
                let running = kernel.running;
                kernel.emit(
                    Some(rule),
                    EventKind::SpawnRejected {
                        caller: caller_ref.clone(),
                        agent_type: requested.clone(),
                        name: name.clone(),
                        reason,
                        message: Rc::from(message.as_str()),
                        // CAP-2: the cap error tells Claude not to retry.
                        hint: (reason == RejectReason::ConcurrentLimit)
                            .then_some(messages::CONCURRENT_LIMIT_NO_RETRY),
                        running,
                    },
                );
                Err(Some(reason))
            };
        let caller_agent = self.agent(caller_slot);
        let caller_depth = caller_agent.depth;
        let caller_is_fork = caller_agent.fork;
        let caller_is_teammate = caller_agent.teammate;
        // SPAWN-3…11, FORK-3/4/7, Q-29, Q-32, SPAWN-5: what the call resolves to.
        let (type_index, teammate) = match self.resolve_type(
            caller,
            caller_is_fork,
            caller_is_teammate,
            spec,
            name.is_some(),
        ) {
            Ok(ResolvedType::Type(index)) => (Some(index), false),
            Ok(ResolvedType::Fork) => (None, false),
            Ok(ResolvedType::Teammate(index)) => (Some(index), true),
            Err((reason, rule, message)) => return reject(self, reason, rule, message),
        };
        if teammate {
            // SPAWN-11: launched as an agent-team teammate instead of a subagent.
            let index = type_index.expect("a teammate reuses a type");
            if self.next_id as u64 > self.limits.max_agents {
                self.hit_limit("max_agents", self.limits.max_agents);
                return Err(None);
            }
            return Ok(self.start_teammate(caller_slot, caller_ref, index, name, spec));
        }
        // DEPTH-3/4/5: the caller's own Agent tool.
        let (state, depth_rule) = agent_tool(caller_depth, self.config.depth_limit, caller_is_fork);
        match state {
            AgentTool::Removed => {
                return reject(
                    self,
                    RejectReason::DepthLimit,
                    depth_rule,
                    messages::NO_AGENT_TOOL.into(),
                )
            }
            AgentTool::Errors => {
                return reject(
                    self,
                    RejectReason::DepthLimit,
                    depth_rule,
                    messages::FORK_DEPTH.into(),
                )
            }
            AgentTool::Available => {}
        }
        if caller != MAIN
            && !self
                .agent(caller_slot)
                .profile
                .tools
                .iter()
                .any(|t| &**t == "Agent")
        {
            return reject(
                self,
                RejectReason::NoAgentTool,
                "DEPTH-5",
                messages::NO_AGENT_TOOL_DEFINED.into(),
            );
        }
        // FGBG-1: where it would run.
        let definition_background = type_index.is_some_and(|i| self.types[i].def.background);
        let placement = placement::place(
            PlacementInput {
                by_teammate: caller_is_teammate,
                definition_background,
                run_in_background: spec.background,
                needs_result: spec.needs_result,
            },
            &self.config,
        );
        let depth = caller_depth + 1;
        // TOOLS: the child's tool set for that placement.
        let mode_for_tools = match placement {
            Placement::Run(mode, _) => mode,
            Placement::Reject(..) => Mode::Foreground,
        };
        let permission_mode = self.effective_permission_mode(type_index);
        let resolved = if spec.fork {
            Ok((
                self.agent(0).profile.tools.clone(),
                agent_tool(depth, self.config.depth_limit, true).0 == AgentTool::Errors,
            ))
        } else {
            self.child_tools(
                type_index.unwrap_or(0),
                mode_for_tools,
                depth,
                permission_mode,
            )
        };
        let (tool_list, _agent_errors) = match resolved {
            Ok(found) => found,
            Err(unresolved) => {
                let message = format!(
                    "{}: no entry in tools resolves to a usable tool ({})",
                    messages::ZERO_TOOLS,
                    unresolved.join(", ")
                );
                return reject(self, RejectReason::ZeroTools, "TOOLS-12", message);
            }
        };
        let (mode, placement_rule) = match placement {
            Placement::Run(mode, rule) => (mode, rule),
            Placement::Reject(reason, rule, message) => {
                return reject(self, reason, rule, message.into())
            }
        };
        // HANDBACK-7: in auto mode the classifier reviews the delegation prompt before
        // launch; it is the only checkpoint that stops a subagent.
        let classifier = spec.classifier.unwrap_or(self.classifier);
        if let handback::LaunchVerdict::Blocked { message, rule, .. } = handback::launch_check(
            classifier.launch_blocks,
            permission_mode,
            spec.fork,
            &self.config.gates,
        ) {
            return reject(
                self,
                RejectReason::ClassifierBlocked,
                rule,
                message.to_string(),
            );
        }
        if plannable {
            self.load_plan = Some(LoadPlan {
                requested: requested.clone(),
                type_index,
                depth,
                mode,
                placement_rule,
                permission_mode,
                tools: tool_list.clone(),
                profile: None,
                limit_message: Rc::from(messages::CONCURRENT_LIMIT),
            });
        }
        // CAP-1/3/4, CAP-5: only Agent-tool spawns are checked; CAP-10: forks too.
        let admission = cap::admit(self.running, &self.config);
        if !admission.admitted {
            // The message is the documented text exactly; the count is the event's `running`
            // and the cap is `session_started.cap`. CAP-2: nothing re-issues the call.
            let rule = if spec.fork { "CAP-10" } else { admission.rule };
            let message = messages::CONCURRENT_LIMIT.to_string();
            return reject(self, RejectReason::ConcurrentLimit, rule, message);
        }
        self.launch(
            Launch {
                caller,
                caller_slot,
                name,
                type_index,
                depth,
                mode,
                placement_rule,
                permission_mode,
                tools: tool_list,
                profile: None,
                plannable,
                from_load,
            },
            spec,
        )
    }

    /// A planned load arrival (see `spawn`): the request, the cap check, the start.
    fn spawn_planned(
        &mut self,
        plan: LoadPlan,
        spec: &SpawnSpec,
    ) -> Result<(u32, Mode), Option<RejectReason>> {
        let main_name = self.agent(0).name.clone();
        let background = if self.config.fork_mode {
            None
        } else {
            spec.background
        };
        let (caller_name, agent_type) = (main_name.clone(), plan.requested.clone());
        let arrival = self.load_arrival;
        self.emit_with(None, move || EventKind::SpawnRequested {
            caller: AgentRef {
                id: MAIN,
                name: caller_name,
            },
            agent_type,
            name: None,
            background,
            fork: false,
            arrival,
        });
        // CAP-1/3/4, CAP-5, as in `spawn`.
        let admission = cap::admit(self.running, &self.config);
        if !admission.admitted {
            let running = self.running;
            self.emit_with(Some(admission.rule), move || EventKind::SpawnRejected {
                caller: AgentRef {
                    id: MAIN,
                    name: main_name,
                },
                agent_type: plan.requested,
                name: None,
                reason: RejectReason::ConcurrentLimit,
                message: plan.limit_message,
                hint: Some(messages::CONCURRENT_LIMIT_NO_RETRY),
                running,
            });
            return Err(Some(RejectReason::ConcurrentLimit));
        }
        self.launch(
            Launch {
                caller: MAIN,
                caller_slot: 0,
                name: None,
                type_index: plan.type_index,
                depth: plan.depth,
                mode: plan.mode,
                placement_rule: plan.placement_rule,
                permission_mode: plan.permission_mode,
                tools: plan.tools,
                profile: plan.profile,
                plannable: true,
                from_load: true,
            },
            spec,
        )
    }

    /// An admitted Agent call: the agent limit, the run's profile, the record, the start.
    #[inline(always)]
    fn launch(
        &mut self,
        launch: Launch,
        spec: &SpawnSpec,
    ) -> Result<(u32, Mode), Option<RejectReason>> {
        let Launch {
            caller,
            caller_slot,
            name,
            type_index,
            depth,
            mode,
            placement_rule,
            permission_mode,
            tools: tool_list,
            profile,
            plannable,
            from_load,
        } = launch;
        if self.next_id as u64 > self.limits.max_agents {
            self.hit_limit("max_agents", self.limits.max_agents);
            return Err(None);
        }
        if u64::from(self.running) >= self.limits.max_running {
            self.hit_limit("max_running", self.limits.max_running);
            return Err(None);
        }
        // Started. The run's profile (type, model, effort, tools, context) is shared by
        // every run of the same definition in the same situation; a planned call keeps the
        // shared one while it stays shared (no agent has a name: CTX-6's roster).
        let profile = match profile {
            Some(profile) if self.names.is_empty() => profile,
            _ => {
                let cacheable =
                    spec.model.is_none() && spec.effort.is_none() && self.names.is_empty();
                let profile =
                    self.run_profile(type_index, spec, mode, depth, permission_mode, tool_list);
                if plannable && cacheable {
                    if let Some(plan) = self.load_plan.as_mut() {
                        plan.profile = Some(profile.clone());
                    }
                }
                profile
            }
        };
        let (behavior, one_shot, max_turns) = match type_index {
            Some(index) => {
                let type_def = &self.types[index];
                (
                    type_def.behavior.clone(),
                    type_def.one_shot,
                    type_def.def.max_turns,
                )
            }
            None => (default_behavior(), false, None),
        };
        let behavior = spec.behavior.clone().unwrap_or(behavior);
        let id = self.next_id;
        self.next_id += 1;
        self.running += 1;
        let agent_profile = profile.clone();
        let unindexed = from_load && name.is_none();
        // The record is written straight into its slot (built elsewhere and moved in, it
        // would be copied whole).
        let (slot, gen) = self.vacant_slot();
        self.slots[slot as usize] = Some(Agent {
            id,
            type_index,
            invocation_model: spec.model.as_deref().map(Rc::from),
            report: None,
            continuations: 0,
            classifier: spec.classifier,
            profile: agent_profile,
            name: name.clone(),
            depth,
            mode,
            fork: spec.fork,
            teammate: false,
            profile_background: mode == Mode::Background,
            permission_mode,
            one_shot,
            max_turns,
            from_load,
            status: Status::Running,
            user_cancelled: false,
            program: behavior,
            pc: 0,
            stack: Vec::new(),
            block: Block::Ready,
            gen,
            foreground_pending: 0,
            run: 0,
            awaited: false,
            children_running: 0,
            bash_running: 0,
            inbox: 0,
            waiters: Vec::new(),
            report_to: caller,
            resumed: false,
            turns: 0,
            rng: None,
            finished_at: SimTime::ZERO,
        });
        self.index_slot(slot, id, unindexed);
        self.agent_mut(caller_slot).children_running += 1;
        if let Some(name) = &name {
            self.names.insert(name.clone(), id);
            // RESUME-12: the conversation knows which agent this name reached first.
            self.reached.entry(name.clone()).or_insert(id);
        }
        let running = self.running;
        let fork = spec.fork;
        // Names never change, so the caller's reference is the one it had at the call.
        let parent_name = self.agent(caller_slot).name.clone();
        self.emit_with(Some(placement_rule), move || EventKind::AgentStarted {
            agent: AgentRef { id, name },
            parent: AgentRef {
                id: caller,
                name: parent_name,
            },
            depth,
            mode,
            fork,
            running,
            cap_checked: true,
            profile,
        });
        self.observe_start(slot, subsim_rules::hooks::RunTransition::Start);
        self.schedule(self.now, Wake::Step { slot, gen });
        Ok((slot, mode))
    }

    /// The index of a named agent type. Load runs ask for the same type a million times,
    /// so the last answer is kept.
    pub(super) fn find_type(&mut self, name: &str) -> Option<usize> {
        if let Some((last, index)) = &self.last_type {
            if **last == *name {
                return Some(*index);
            }
        }
        let index = *self.type_index.get(name)?;
        self.last_type = Some((self.types[index].name.clone(), index));
        Some(index)
    }

    /// A free slot (the slot's next generation), or a new empty one at the end.
    fn vacant_slot(&mut self) -> (u32, u32) {
        match self.free.pop() {
            Some(found) => found,
            None => {
                self.slots.push(None);
                ((self.slots.len() - 1) as u32, 0)
            }
        }
    }

    /// Records where the agent `id` that was just written into `slot` lives.
    fn index_slot(&mut self, slot: u32, id: AgentId, unindexed: bool) {
        if unindexed {
            self.unindexed += 1;
        } else {
            self.by_id.insert(id, slot);
        }
    }

    pub(super) fn insert(&mut self, mut agent: Agent) -> u32 {
        let id = agent.id;
        let slot = match self.free.pop() {
            Some((slot, gen)) => {
                // A reused slot continues the generation count, so stale wakes of the
                // previous occupant can never match the new one.
                agent.gen = gen;
                self.slots[slot as usize] = Some(agent);
                slot
            }
            None => {
                self.slots.push(Some(agent));
                (self.slots.len() - 1) as u32
            }
        };
        if self.slots[slot as usize]
            .as_ref()
            .is_some_and(Agent::unindexed)
        {
            self.unindexed += 1;
        } else {
            self.by_id.insert(id, slot);
        }
        slot
    }

    /// PERM-10/11/12: a subagent's effective permission mode.
    pub(super) fn effective_permission_mode(&self, type_index: Option<usize>) -> PermissionMode {
        let main = self.config.permission_mode;
        let Some(index) = type_index else { return main };
        let def = &self.types[index].def;
        // PERM-10/11/12, D-9, DEF-6: inheritance, the overriding main modes, the
        // bypassPermissions exception (v2.1.267+) and plugin definitions.
        let (mode, _) = prompt::effective_mode(
            main,
            def.permission_mode,
            def.scope == Scope::Plugin,
            true,
            &self.config.gates,
        );
        mode
    }

    /// TOOLS-1…16 for a non-fork child, cached per (type, placement, mode).
    pub(super) fn child_tools(
        &mut self,
        type_index: usize,
        mode: Mode,
        depth: u32,
        permission_mode: PermissionMode,
    ) -> Result<(ToolList, bool), Vec<String>> {
        let at_limit = depth >= self.config.depth_limit;
        let flags = u8::from(mode == Mode::Background) | (u8::from(at_limit) << 1);
        let key = (type_index, flags, permission_mode);
        if let Some(found) = self.tool_cache.get(&key) {
            return found.clone();
        }
        let def = &self.types[type_index].def;
        let handback = tools::handback_attached(permission_mode, false, &self.config.gates);
        let placement = tools::Placement {
            depth,
            depth_limit: self.config.depth_limit,
            mode,
            fork: false,
            teammate: false,
            first_ran_foreground: false,
            permission_mode,
        };
        let fields = Fields {
            tools: def.tools.as_deref(),
            disallowed: &def.disallowed_tools,
        };
        // TOOLS-17 / MEM-2: persistent memory adds Read, Write and Edit when auto memory is on.
        let request = tools::ToolRequest {
            fields,
            handback,
            memory: def.memory.is_some() && self.auto_memory,
            ..tools::ToolRequest::new(&self.pool, placement, self.config.gates)
        };
        let result = match tools::resolve_with(&request) {
            Ok(resolved) => {
                let list: ToolList = resolved
                    .tools
                    .iter()
                    .map(|t| Rc::from(t.as_str()))
                    .collect();
                Ok((list, resolved.agent_errors))
            }
            Err(zero) => Err(zero.unresolved),
        };
        self.tool_cache.insert(key, result.clone());
        result
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
            let type_def = &self.types[index];
            return (type_def.model.clone(), type_def.model_rule);
        }
        let fork_def;
        let def = match type_index {
            Some(index) => &self.types[index].def,
            None => {
                fork_def = AgentDef {
                    name: "fork".into(),
                    ..AgentDef::default()
                };
                &fork_def
            }
        };
        let choice = self
            .models
            .choose(&self.config, def, invocation, fork, resumed);
        (Rc::from(choice.model.as_str()), choice.rule)
    }

    /// MODEL-14: env > per-invocation (v2.1.292+, non-fork) > frontmatter > session.
    pub(super) fn run_effort(
        &self,
        type_index: Option<usize>,
        invocation: Option<&str>,
        fork: bool,
    ) -> Option<Rc<str>> {
        let frontmatter = type_index.and_then(|index| self.types[index].def.effort.as_deref());
        let (effort, _) = model::resolve_effort(
            self.effort_env.as_deref(),
            invocation,
            frontmatter,
            self.session_effort.as_deref(),
            fork,
            &self.config.gates,
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
                session: self.config.kind,
                ..context::StartupInput::new(context::AgentKind::Fork, "fork", self.config.gates)
            };
            let pieces: ToolList = context::startup_context(&input)
                .pieces
                .iter()
                .filter(|piece| piece.included)
                .map(|piece| Rc::from(piece.name))
                .collect();
            return (pieces, self.session_mcp.clone(), Vec::new());
        }
        let def = &self.types[type_index.unwrap_or(0)].def;
        let kind = match (model::BuiltIn::from_name(&def.name), def.scope) {
            (Some(built_in), Scope::BuiltIn) => context::AgentKind::BuiltIn(built_in),
            (_, scope) => context::AgentKind::Custom(match scope {
                Scope::Managed => spawn::Scope::Managed,
                Scope::Cli => spawn::Scope::Cli,
                Scope::User => spawn::Scope::User,
                Scope::Plugin => spawn::Scope::Plugin,
                Scope::Project | Scope::BuiltIn => spawn::Scope::Project,
            }),
        };
        let tool_names: Vec<String> = tools.iter().map(|tool| tool.to_string()).collect();
        let named: Vec<String> = self.names.keys().map(|name| name.to_string()).collect();
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
            .session_mcp
            .iter()
            .map(|name| name.to_string())
            .collect();
        let source_dir = self.trust_folder(def);
        let memory = match def.memory.as_deref() {
            Some("user") => Some(context::MemoryScope::User),
            Some("project") => Some(context::MemoryScope::Project),
            Some("local") => Some(context::MemoryScope::Local),
            _ => None,
        };
        let input = context::StartupInput {
            omit_claude_md: def.omit_claude_md,
            skills: &skills,
            tools: &tool_names,
            named_agents: &named,
            memory,
            auto_memory: self.auto_memory,
            mcp: context::McpInput {
                servers: &servers,
                scope: match def.scope {
                    Scope::Managed => spawn::Scope::Managed,
                    Scope::Cli => spawn::Scope::Cli,
                    Scope::User => spawn::Scope::User,
                    Scope::Plugin => spawn::Scope::Plugin,
                    Scope::Project | Scope::BuiltIn => spawn::Scope::Project,
                },
                source_dir: Some(&source_dir),
                trusted_dirs: &self.trusted_dirs,
                configured: &configured,
                ..context::McpInput::default()
            },
            session: self.config.kind,
            ..context::StartupInput::new(kind, &def.name, self.config.gates)
        };
        let started = context::startup_context(&input);
        let pieces: ToolList = started
            .pieces
            .iter()
            .filter(|piece| piece.included)
            .map(|piece| {
                // CTX-3: omitClaudeMd keeps only the managed policy files.
                if piece.name == "CLAUDE.md"
                    && def.omit_claude_md
                    && self.config.gates.omit_claude_md
                {
                    Rc::from("CLAUDE.md (managed policy files only)")
                } else {
                    Rc::from(piece.name)
                }
            })
            .collect();
        let mut servers_list: Vec<Rc<str>> = self.session_mcp.iter().cloned().collect();
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
                            .push(Rc::from(format!("mcp__{}__{tool}", server.name).as_str()));
                    }
                }
            }
        }
        (pieces, servers_list.into(), inline_tools)
    }

    /// The profile of a new run; cached per (type, placement, mode) when the call passes no
    /// per-invocation model or effort, so load runs share one.
    pub(super) fn run_profile(
        &mut self,
        type_index: Option<usize>,
        spec: &SpawnSpec,
        mode: Mode,
        depth: u32,
        permission_mode: PermissionMode,
        tools: ToolList,
    ) -> Rc<RunProfile> {
        // The sibling roster (CTX-6) is a snapshot of the names in use, but a profile keeps
        // only whether the roster piece is included, which depends only on whether any
        // agent has a name: that is part of the key. (Rebuilding the profile, roster
        // included, at every named start made named arrivals cost O(n) each.)
        let cacheable = spec.model.is_none() && spec.effort.is_none();
        let at_limit = depth >= self.config.depth_limit;
        let key = (
            type_index.map_or(usize::MAX, |index| index),
            u8::from(mode == Mode::Background)
                | (u8::from(at_limit) << 1)
                | (u8::from(spec.fork) << 2)
                | (u8::from(!self.names.is_empty()) << 3),
            permission_mode,
        );
        if cacheable {
            if let Some((last_key, profile)) = &self.last_profile {
                if *last_key == key {
                    return profile.clone();
                }
            }
            if let Some(profile) = self.profile_cache.get(&key) {
                let profile = profile.clone();
                self.last_profile = Some((key, profile.clone()));
                return profile;
            }
        }
        let (model, model_rule) =
            self.run_model(type_index, spec.model.as_deref(), spec.fork, false);
        let agent_type = match type_index {
            Some(index) if !spec.fork => self.types[index].name.clone(),
            _ => self.fork_arc.clone(),
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
            permission_mode: permission_mode.as_str(),
            tools,
            context,
            mcp_servers,
            teammate: false,
        });
        if cacheable {
            self.profile_cache.insert(key, profile.clone());
        }
        profile
    }

    /// SPAWN-3…11 through `rules::spawn::resolve`, cached per kind of call: a load run asks
    /// the same question for every arrival.
    fn resolve_type(
        &mut self,
        caller: AgentId,
        caller_is_fork: bool,
        caller_is_teammate: bool,
        spec: &SpawnSpec,
        named: bool,
    ) -> Result<ResolvedType, (RejectReason, RuleId, String)> {
        let caller_class: u8 = if caller == MAIN {
            u8::from(self.main_agent.is_some())
        } else if caller_is_fork {
            3
        } else if caller_is_teammate {
            4
        } else {
            2
        };
        // The last question, compared in place: a load run asks it for every arrival.
        if let Some((last, answer)) = &self.last_spawn {
            if last.agent.as_deref() == spec.agent.as_deref()
                && last.fork == spec.fork
                && last.named == named
                && last.isolation == spec.isolation.is_some()
                && last.caller == caller_class
            {
                return answer.clone();
            }
        }
        let key = SpawnKey {
            agent: spec.agent.clone(),
            fork: spec.fork,
            named,
            isolation: spec.isolation.is_some(),
            caller: caller_class,
        };
        if let Some(found) = self.spawn_cache.get(&key) {
            let found = found.clone();
            self.last_spawn = Some((key, found.clone()));
            return found;
        }
        let definitions: Vec<spawn::Definition<'_>> = self
            .types
            .iter()
            .filter(|type_def| type_def.def.scope != Scope::BuiltIn)
            .map(|type_def| spawn::Definition {
                // DEF-5: a plugin's scoped id is `{plugin and folders}:{name}`.
                name: match type_def.def.scope {
                    Scope::Plugin => type_def
                        .def
                        .name
                        .rsplit(':')
                        .next()
                        .unwrap_or(&type_def.def.name),
                    _ => &type_def.def.name,
                },
                scope: match type_def.def.scope {
                    Scope::Managed => spawn::Scope::Managed,
                    Scope::Cli => spawn::Scope::Cli,
                    Scope::User => spawn::Scope::User,
                    Scope::Plugin => spawn::Scope::Plugin,
                    Scope::Project | Scope::BuiltIn => spawn::Scope::Project,
                },
                plugin: match type_def.def.scope {
                    Scope::Plugin => type_def.def.name.rsplit_once(':').map(|(plugin, _)| plugin),
                    _ => None,
                },
            })
            .collect();
        let main_agent_def = self.main_agent.map(|index| &self.types[index].def);
        let caller_kind = match caller_class {
            0 => spawn::Caller::Main,
            1 => spawn::Caller::MainAgent {
                tools: main_agent_def.and_then(|def| def.tools.as_deref()),
                disallowed: main_agent_def.map_or(&[], |def| def.disallowed_tools.as_slice()),
            },
            3 => spawn::Caller::Fork,
            4 => spawn::Caller::Teammate,
            _ => spawn::Caller::Subagent,
        };
        let request = spawn::SpawnRequest {
            subagent_type: if spec.fork {
                Some("fork")
            } else {
                spec.agent.as_deref()
            },
            fork: spec.fork,
            name: named.then_some("named"),
            isolation: spec.isolation.as_deref(),
            caller: caller_kind,
            definitions: &definitions,
            env: spawn::BuiltinEnv {
                disable_explore_plan: self.config.disable_explore_plan,
                sdk_disable_builtins: self.config.disable_builtins,
            },
            deny: &self.permissions.deny,
            session: self.config.kind,
            agent_teams: self.config.agent_teams,
            fork_mode: self.config.fork_mode,
            gates: self.config.gates,
        };
        let find = |kernel: &Kernel<'_>, name: &str| kernel.type_index.get(name).copied();
        let answer = match spawn::resolve(&request) {
            spawn::Resolution::Type { name, .. } => match find(self, &name) {
                Some(index) => Ok(ResolvedType::Type(index)),
                None => Err((
                    RejectReason::UnknownType,
                    "SPAWN-3",
                    format!("Agent type '{name}' not found"),
                )),
            },
            spawn::Resolution::Fork { .. } => Ok(ResolvedType::Fork),
            spawn::Resolution::Teammate { agent_type, .. } => match find(self, &agent_type) {
                Some(index) => Ok(ResolvedType::Teammate(index)),
                None => Err((
                    RejectReason::UnknownType,
                    "SPAWN-3",
                    format!("Agent type '{agent_type}' not found"),
                )),
            },
            spawn::Resolution::Reject {
                reason,
                rule,
                message,
            } => Err((reason, rule, message)),
        };
        drop(definitions);
        self.spawn_cache.insert(key.clone(), answer.clone());
        self.last_spawn = Some((key, answer.clone()));
        answer
    }

    /// SPAWN-11 / CAP-8 / TOOLS-9 / NOTIFY-11: an agent-team teammate. It follows its own
    /// limits (no cap check, no slot), keeps the task and cron tools, reports through team
    /// messages, and is depth 0 for the subagents it spawns.
    fn start_teammate(
        &mut self,
        caller_slot: u32,
        caller_ref: AgentRef,
        type_index: usize,
        name: Option<Rc<str>>,
        spec: &SpawnSpec,
    ) -> (u32, Mode) {
        let permission_mode = self.effective_permission_mode(Some(type_index));
        let def = &self.types[type_index].def;
        let placement = tools::Placement {
            depth: 0,
            depth_limit: self.config.depth_limit,
            mode: Mode::Background,
            fork: false,
            teammate: true,
            first_ran_foreground: false,
            permission_mode,
        };
        let request = tools::ToolRequest {
            fields: Fields {
                tools: def.tools.as_deref(),
                disallowed: &def.disallowed_tools,
            },
            ..tools::ToolRequest::new(&self.pool, placement, self.config.gates)
        };
        let tool_list: ToolList = match tools::resolve_with(&request) {
            Ok(resolved) => resolved
                .tools
                .iter()
                .map(|tool| Rc::from(tool.as_str()))
                .collect(),
            Err(_) => Rc::from(Vec::new()),
        };
        let mut profile = (*self.run_profile(
            Some(type_index),
            spec,
            Mode::Background,
            1,
            permission_mode,
            tool_list,
        ))
        .clone();
        profile.teammate = true;
        let profile = Rc::new(profile);
        let behavior = spec
            .behavior
            .clone()
            .unwrap_or_else(|| self.types[type_index].behavior.clone());
        let id = self.next_id;
        self.next_id += 1;
        let child = Agent {
            id,
            type_index: Some(type_index),
            invocation_model: spec.model.as_deref().map(Rc::from),
            report: None,
            continuations: 0,
            classifier: spec.classifier,
            profile: profile.clone(),
            name: name.clone(),
            depth: 0,
            mode: Mode::Background,
            fork: false,
            teammate: true,
            profile_background: true,
            permission_mode,
            one_shot: false,
            max_turns: self.types[type_index].def.max_turns,
            from_load: false,
            status: Status::Running,
            user_cancelled: false,
            program: behavior,
            pc: 0,
            stack: Vec::new(),
            block: Block::Ready,
            gen: 0,
            foreground_pending: 0,
            run: 0,
            awaited: false,
            children_running: 0,
            bash_running: 0,
            inbox: 0,
            waiters: Vec::new(),
            report_to: caller_ref.id,
            resumed: false,
            turns: 0,
            rng: None,
            finished_at: SimTime::ZERO,
        };
        let slot = self.insert(child);
        let gen = self.agent(slot).gen;
        self.agent_mut(caller_slot).children_running += 1;
        if let Some(name) = &name {
            self.names.insert(name.clone(), id);
            self.reached.entry(name.clone()).or_insert(id);
        }
        let running = self.running;
        self.emit(
            Some("SPAWN-11"),
            EventKind::AgentStarted {
                agent: AgentRef { id, name },
                parent: caller_ref,
                depth: 0,
                mode: Mode::Background,
                fork: false,
                running,
                cap_checked: false,
                profile,
            },
        );
        self.observe_start(slot, subsim_rules::hooks::RunTransition::Start);
        self.schedule(self.now, Wake::Step { slot, gen });
        (slot, Mode::Background)
    }
}

/// What the load block's Agent call from main resolves to up to the cap check.
#[derive(Clone)]
pub(super) struct LoadPlan {
    requested: Rc<str>,
    type_index: Option<usize>,
    depth: u32,
    mode: Mode,
    placement_rule: RuleId,
    permission_mode: PermissionMode,
    tools: ToolList,
    /// The shared profile of its runs, once one was handed out while profiles are shared.
    profile: Option<Rc<RunProfile>>,
    /// CAP-2's message.
    limit_message: Rc<str>,
}

/// An admitted Agent call, as `launch` starts it.
struct Launch {
    caller: AgentId,
    caller_slot: u32,
    name: Option<Rc<str>>,
    type_index: Option<usize>,
    depth: u32,
    mode: Mode,
    placement_rule: RuleId,
    permission_mode: PermissionMode,
    tools: ToolList,
    profile: Option<Rc<RunProfile>>,
    plannable: bool,
    from_load: bool,
}

/// A spawn question, as the resolution cache keys it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct SpawnKey {
    agent: Option<String>,
    fork: bool,
    named: bool,
    isolation: bool,
    caller: u8,
}

/// What a call resolved to, as the kernel keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum ResolvedType {
    /// A subagent of this type.
    Type(usize),
    /// A fork.
    Fork,
    /// An agent-team teammate of this type (SPAWN-11).
    Teammate(usize),
}
