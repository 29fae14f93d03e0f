//! The memo layer: every rules answer the kernel keeps, its key and its debug-build replay
//! (the ground rules below), and the functions that make a kept answer on a miss, which
//! compose several rules calls with the kernel's state (a spawn plan, a run profile, a
//! tool resolution's steps, a report's delivery). Nothing else: a question whose answer
//! is not kept is asked of `subsim-rules` directly where its step is executed — the
//! tool-call gate (`gate.rs`), the spawn path (`spawn.rs`), a run's end (`finish.rs`),
//! SendMessage and TaskStop (`messaging.rs`), hooks (`observe.rs`), the person's actions
//! (`actions.rs`, `person.rs`), the session's start (`mod.rs`) — so that a reader takes
//! one hop from the step to the rule. Code elsewhere never reads a memo itself; it asks
//! the functions here. The few helpers that are not memos say why they are here in their
//! first lines. Nothing here decides when anything happens.
//!
//! `tests/integration/rules_calls.rs` keeps it so: each kernel file calls only the rules
//! modules of the steps it owns (its `OWNERS` table), and no function here is a relay (a
//! body that only forwards one rules call).
//!
//! # Ground rules
//!
//! A memo may hand out a kept answer only for a question whose key is equal to the one
//! the answer was computed for, and the key must hold every input of the rules function
//! that can differ between two questions of one run. What does not change during a run
//! (the definitions, the session's settings and gates, main's tool pool, the permission
//! rules) is not part of any key: no memo is ever invalidated, each lives as long as its
//! kernel. In debug builds every use of a kept answer asks the rules again and asserts the
//! same answer (the *replay*), so a key that misses an input fails the test suite instead
//! of writing a wrong trace. Each memo:
//!
//! * **Spawn plans** (`plans`, `last_plan`; [`Kernel::spawn_plan`]): `rules::plan::plan`'s
//!   answer for an Agent call, up to the cap. Key: [`PlanKey`] — the call's type, `fork`,
//!   whether it is named, `isolation`, `run_in_background`, the need for its result, the
//!   classifier's launch verdict (the call's own, else the session's), and the caller
//!   ([`CallerKey`]: its class, whether it has `Agent`, and its [`DepthClass`]). Complete
//!   because those are every `PlanInput` field that is not the session's, and the
//!   caller's depth is read by the plan only through the depth class but for the
//!   launch's own depth, which is not kept: [`Kernel::launch_depth`] answers it for each
//!   call. The last plan is kept beside the map with its exact caller and compared field
//!   by field first (a run's program makes one kind of call again and again); a plan is
//!   never chosen by the address of the spec that asked.
//! * **A load stream's plan** (`stream_plans`; [`Kernel::spawn_plan`] for a
//!   load stream's arrival): the spawn plan of every arrival of one `load` stream. Key: the
//!   stream's index. Complete because a stream's call never changes during a run: its
//!   spawn spec is fixed, so are whether it is named (a named stream names every arrival)
//!   and its classifier verdict, and its caller is always main (slot 0: class, depth 0 and
//!   `Agent` tool fixed for the run). The plan itself comes from the plan memo above on
//!   the stream's first arrival. Replay: `debug_replay`, as for every kept plan.
//! * **Run profiles** (`profiles`, `last_profile`, and [`CachedPlan::profile`];
//!   [`Kernel::run_profile`]): the model, effort, tools and start-up context of a run.
//!   Key: the type, whether it runs in the background, is at the depth limit, is a fork,
//!   is a teammate, whether any agent has a name (CTX-6's roster piece) and its
//!   permission mode; kept only for a call with no per-invocation model or effort.
//!   Complete because the tools are the plan's, resolved from the same facts, and the
//!   context reads only the definition, the session and the roster's presence. A plan
//!   keeps the profile its first run got while profiles are shared (no per-invocation
//!   model or effort, no name in use). Replay: `run_profile` rebuilds and compares while
//!   at most `REPLAY_NAMES_MAX` names are in use (rebuilding lists them).
//! * **Tool removals** (`removals`; [`Kernel::removal_of`]): the steps of a subagent's
//!   tool resolution, which say why a refused tool call lacks its tool (TOOLS-4). Key:
//!   [`RemovalKey`] — the type, the run's `Agent` tool at its depth (the only depth fact
//!   filter 1 reads), its first run's placement, teammate or not, its permission mode.
//!   Replay: `kept_removal_steps` resolves again and compares.
//! * **The last tool check** (`last_tool_check`; [`has_tool`]): whether a run's tool list
//!   has a tool. Key: the list and the name as shared objects (pointer equality; the memo
//!   holds both alive, so no other object can take their address). Replay: `has_tool`.
//! * **The last delivery** (`last_delivery`; [`Kernel::reuses_delivery`]): the text,
//!   scan note, rule and review verdict of a report delivered (NOTIFY-13, SCAN,
//!   HANDBACK-8/9). Key: the report text as a shared object and [`HandbackKey`] (the
//!   classifier's review verdict, the run's permission mode, fork or not). The delivered
//!   values themselves live in the trace writer's kept `report_delivered`
//!   (`trace.rs`), which only a delivery writes. Replay: `reuses_delivery`.
//!
//! Two caches of the kernel are not answers of the rules and live elsewhere: the
//! behaviour streams being drawn from (`streams.rs`) and the last `exp(…)` sampler
//! (`dist::ExpCache`); both are exact (they hand out what a fresh stream or sampler would).
//!
//! Its `#[inline(…)]` and `#[cold]` attributes are measured: docs/PERFORMANCE.md, "Choices
//! that need a benchmark".

use std::collections::BTreeMap;
use std::rc::Rc;

use subsim_rules::depth::{self, AgentTool};
use subsim_rules::handback::{self, ReviewOutcome};
use subsim_rules::plan::{self, Launch, Launched, PlanTools, SpawnPlan};
use subsim_rules::tools::{self, Fields};
use subsim_rules::version::Gates;
use subsim_rules::{context, model, scan, spawn, Mode, PermissionMode, RuleId};

use crate::event::{RunProfile, SkillsReport, ToolList, ToolRefusal, MAIN};
use crate::spec::{AgentDef, McpServerRef, Scope, SpawnSpec};

use super::Kernel;

/// Every memo of a rules answer the kernel keeps (see the module's ground rules).
#[derive(Default)]
pub(super) struct Memos {
    /// Run profiles by [`ProfileKey`], and the last one handed out.
    profiles: BTreeMap<ProfileKey, Rc<RunProfile>>,
    last_profile: Option<(ProfileKey, Rc<RunProfile>)>,
    /// Spawn plans by [`PlanKey`], and the last one with its exact caller.
    plans: BTreeMap<PlanKey, Rc<CachedPlan>>,
    last_plan: Option<LastPlan>,
    /// Each load stream's plan (by stream index) and its caller (main), once it has one.
    stream_plans: Vec<Option<(Rc<CachedPlan>, PlanCaller)>>,
    /// Tool resolutions' steps by [`RemovalKey`], for refused tool calls.
    removals: BTreeMap<RemovalKey, Rc<[tools::Step]>>,
    /// The last report delivery built.
    last_delivery: Option<Delivered>,
    /// The last tool list and tool name a tool call was checked with, and the answer.
    last_tool_check: Option<(ToolList, Rc<str>, bool)>,
}

impl Memos {
    /// The last delivery kept (once [`Kernel::reuses_delivery`] said the report reuses it).
    #[inline(always)]
    pub(super) fn last_delivery(&self) -> &Delivered {
        let last = self.last_delivery.as_ref();
        last.expect("reuses_delivery found the last delivery")
    }
}

/// The run-profile memo's replay runs while at most this many names are in use.
const REPLAY_NAMES_MAX: usize = 64;

/// A run profile's key (see the ground rules): the type (`usize::MAX` for a fork of no
/// type), a bit set (background, at the depth limit, fork, a name in use, teammate), the
/// permission mode.
type ProfileKey = (usize, u8, PermissionMode);

/// DEPTH-1…4, Q-10, Q-44: what a plan reads of the caller's depth, besides the child's
/// depth itself: the state of the caller's own `Agent` tool (DEPTH-3/4) and of the
/// child's (DEPTH-3: a child at the limit loses it, which changes its tool set). Two
/// calls whose callers differ only in depth, in the same class, get the same plan but for
/// [`Launch::depth`], which [`Kernel::launch_depth`] answers per call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct DepthClass {
    /// The caller's `Agent` tool at its depth (DEPTH-3/4).
    caller: AgentTool,
    /// The child's `Agent` tool at its depth, as the tool filters see it (DEPTH-3).
    child: AgentTool,
}

impl DepthClass {
    /// The class of `caller` at `caller_depth` under `depth_limit`: exactly the depth
    /// facts `rules::plan::plan` reads (through `depth::agent_tool` and
    /// `spawn::child_depth`).
    fn of(caller: &spawn::Caller<'_>, caller_depth: u32, depth_limit: u32) -> DepthClass {
        let fork = *caller == spawn::Caller::Fork;
        let (caller_tool, _) = depth::agent_tool(caller_depth, depth_limit, fork);
        let (child_depth, _) = spawn::child_depth(caller, caller_depth);
        let (child_tool, _) = depth::agent_tool(child_depth, depth_limit, false);
        DepthClass {
            caller: caller_tool,
            child: child_tool,
        }
    }
}

/// DEPTH-1, Q-10, Q-44, SPAWN-11: the depth of the child `launch` starts for `caller` at
/// `caller_depth` — `spawn::child_depth`, or the launch's own depth (0) for a teammate.
/// For a plan kept across callers of one [`DepthClass`] this is the only field of the
/// plan that differs between them.
fn child_depth(launch: &Launch, caller: &spawn::Caller<'_>, caller_depth: u32) -> u32 {
    match launch.launched {
        Launched::Teammate(_) => launch.depth,
        Launched::Subagent(_) | Launched::Fork => spawn::child_depth(caller, caller_depth).0,
    }
}

/// `plan`, made for some caller of `caller`'s [`DepthClass`], for `caller` at
/// `caller_depth` (what the replay compares with a fresh plan).
fn at_depth(plan: &SpawnPlan, caller: &spawn::Caller<'_>, caller_depth: u32) -> SpawnPlan {
    let mut plan = plan.clone();
    if let SpawnPlan::Launch(launch) = &mut plan {
        launch.depth = child_depth(launch, caller, caller_depth);
    }
    plan
}

/// The MCP servers `def` names (its `mcpServers`: configured names and inline ones), as
/// the context rules (MCP-1…6) read them. Not a memo: an input of the profile memo
/// (`startup`) that the session's start (`mod.rs`, the session agent's servers) builds too.
pub(super) fn mcp_servers(def: &AgentDef) -> Vec<context::McpServer<'_>> {
    def.mcp_servers
        .iter()
        .map(|server| context::McpServer {
            name: &server.name,
            inline: server.inline,
        })
        .collect()
}

impl Kernel<'_> {
    // -- spawn plans -------------------------------------------------------------------

    /// The plan of an Agent call `spec`, named or not, from the run in `caller_slot`, and
    /// the caller as the plan reads it (for [`Kernel::launch_depth`]): for an arrival of the
    /// load stream at `stream`, the stream's own
    /// plan for its arrivals, else the last plan if the call is of its kind from the same
    /// caller, else the kept one, else a new one from `rules::plan`.
    #[inline(always)]
    pub(super) fn spawn_plan(
        &mut self,
        caller_slot: u32,
        spec: &SpawnSpec,
        named: bool,
        stream: Option<usize>,
    ) -> (Rc<CachedPlan>, PlanCaller) {
        if let Some(stream) = stream {
            if let Some(Some((plan, caller))) = self.memos.stream_plans.get(stream) {
                let (plan, caller) = (plan.clone(), *caller);
                let blocks = self.classifier_blocks(spec);
                self.debug_replay(&plan, caller, spec, named, blocks);
                return (plan, caller);
            }
            return self.first_stream_plan(stream, spec, named);
        }
        let caller = self.plan_caller(caller_slot);
        let blocks = self.classifier_blocks(spec);
        if let Some(last) = &self.memos.last_plan {
            if last.caller == caller && last.key.is_of(spec, named, blocks) {
                let plan = last.plan.clone();
                self.debug_replay(&plan, caller, spec, named, blocks);
                return (plan, caller);
            }
        }
        (self.spawn_plan_by_key(caller, spec, named, blocks), caller)
    }

    /// A load stream's first plan (main's call, from slot 0), kept for its other
    /// arrivals.
    fn first_stream_plan(
        &mut self,
        stream: usize,
        spec: &SpawnSpec,
        named: bool,
    ) -> (Rc<CachedPlan>, PlanCaller) {
        let caller = self.plan_caller(0);
        let blocks = self.classifier_blocks(spec);
        let plan = self.spawn_plan_by_key(caller, spec, named, blocks);
        let plans = &mut self.memos.stream_plans;
        if plans.len() <= stream {
            plans.resize(stream + 1, None);
        }
        plans[stream] = Some((plan.clone(), caller));
        (plan, caller)
    }

    /// DEPTH-1, Q-10, Q-44: the depth of the child `planned`'s `launch` starts for
    /// `caller` (the plan's own when it was made for a caller at this depth).
    #[inline(always)]
    pub(super) fn launch_depth(
        &self,
        planned: &CachedPlan,
        caller: PlanCaller,
        launch: &Launch,
    ) -> u32 {
        if caller.depth == planned.caller_depth {
            launch.depth
        } else {
            child_depth(launch, &self.rules_caller(caller.class), caller.depth)
        }
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
        let key = PlanKey {
            agent: spec.agent.clone(),
            fork: spec.fork,
            named,
            isolation: spec.isolation.clone(),
            background: spec.background,
            needs_result: spec.needs_result,
            classifier_blocks,
            caller: self.caller_key(caller),
        };
        let plan = match self.memos.plans.get(&key) {
            Some(plan) => {
                let plan = plan.clone();
                self.debug_replay(&plan, caller, spec, named, classifier_blocks);
                plan
            }
            None => {
                let plan = Rc::new(self.compute_plan(caller, spec, named, classifier_blocks));
                self.memos.plans.insert(key.clone(), plan.clone());
                plan
            }
        };
        self.memos.last_plan = Some(LastPlan {
            key,
            caller,
            plan: plan.clone(),
        });
        plan
    }

    /// Debug builds: a kept plan, moved to this caller's depth, must equal the full
    /// resolution by `rules::plan` (the plan memo's replay).
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
            at_depth(&plan.plan, &self.rules_caller(caller.class), caller.depth),
            self.rules_plan(caller, spec, named, classifier_blocks),
            "a kept spawn plan differs from the rules' resolution"
        );
        let _ = (plan, caller, spec, named, classifier_blocks);
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
            has_agent_tool: depth::has_agent_tool(
                agent.id == MAIN,
                agent.profile.tools.iter().map(|tool| &**tool),
            )
            .0,
        }
    }

    /// The caller as its plan is kept: DEPTH-1…4 through [`DepthClass`].
    fn caller_key(&self, caller: PlanCaller) -> CallerKey {
        CallerKey {
            class: caller.class,
            depth_class: DepthClass::of(
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

    /// The tools a run of `launch` starts with: FORK-5 / TOOLS-2, a fork runs with main's
    /// own tools; else the plan's, as the kept plan holds them shared.
    fn launch_tools(&self, launch: &Launch, kept: Option<&CachedPlan>) -> ToolList {
        match (&launch.tools, kept) {
            (PlanTools::Main, _) => self.agents.get(0).profile.tools.clone(),
            (PlanTools::Resolved { .. }, Some(kept)) => kept.tools.clone(),
            (PlanTools::Resolved { tools, .. }, None) => {
                tools.iter().map(|tool| Rc::from(tool.as_str())).collect()
            }
        }
    }

    /// The profile of a new run of `launch` (of `type_index` at `depth`, a teammate or
    /// not), for the call `spec`: `None` when the kept plan's shared profile serves, else
    /// the one [`Kernel::run_profile`] gives. While profiles are shared (no
    /// per-invocation model or effort, no agent has a name: CTX-6's roster) a kept plan
    /// keeps the one its first run got.
    pub(super) fn start_profile(
        &mut self,
        type_index: Option<usize>,
        depth: u32,
        launch: &Launch,
        kept: Option<&CachedPlan>,
        teammate: bool,
        spec: &SpawnSpec,
    ) -> Option<Rc<RunProfile>> {
        let shared = spec.model.is_none() && spec.effort.is_none() && self.agents.names.is_empty();
        if let Some(profile) = kept.and_then(|kept| kept.profile.get()).filter(|_| shared) {
            debug_assert!(Rc::ptr_eq(
                profile,
                &self.run_profile(
                    type_index,
                    spec,
                    launch.mode,
                    depth,
                    launch.permission_mode,
                    teammate,
                    self.launch_tools(launch, kept)
                )
            ));
            return None;
        }
        self.new_start_profile(type_index, depth, launch, kept, shared, teammate, spec)
    }

    /// [`Kernel::start_profile`] when the kept plan has no profile yet, or the run's own is
    /// needed: made, and kept in the plan (returning `None`) when profiles are `shared`. Out of
    /// line, so that the kept profile's check above is small enough to be inlined into every
    /// start (see docs/PERFORMANCE.md, "Choices that need a benchmark").
    #[inline(never)]
    #[allow(clippy::too_many_arguments)] // start_profile's own arguments, and whether profiles are shared
    fn new_start_profile(
        &mut self,
        type_index: Option<usize>,
        depth: u32,
        launch: &Launch,
        kept: Option<&CachedPlan>,
        shared: bool,
        teammate: bool,
        spec: &SpawnSpec,
    ) -> Option<Rc<RunProfile>> {
        let tools = self.launch_tools(launch, kept);
        let made = self.run_profile(
            type_index,
            spec,
            launch.mode,
            depth,
            launch.permission_mode,
            teammate,
            tools,
        );
        match kept.filter(|_| shared) {
            Some(kept) => {
                // Unset here: a plan's profile is set once and kept.
                let _ = kept.profile.set(made);
                None
            }
            None => Some(made),
        }
    }

    // -- run profiles ------------------------------------------------------------------

    /// MODEL-1…14: the model of a run of `type_index` (None: a fork), and its rule: the run
    /// profile's (made on a miss), and the model a resume chooses again (RESUME-14,
    /// `messaging.rs`).
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
    /// with, its MCP servers, the tools its inline servers bring, and its listed skills
    /// when not all of them were preloaded (MEM-4 / MEM-5).
    pub(super) fn startup(
        &self,
        type_index: Option<usize>,
        fork: bool,
        tools: &ToolList,
    ) -> Startup {
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
            return Startup {
                context: pieces,
                mcp_servers: self.session.mcp.clone(),
                inline_tools: Vec::new(),
                skills: None,
            };
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
        // MEM-5: what the session knows about each listed skill.
        let declared = self.session.skills.as_ref();
        let skills: Vec<context::Skill<'_>> = def
            .skills
            .iter()
            .map(|name| context::Skill {
                name,
                state: context::skill_state(
                    name,
                    declared.and_then(|skills| skills.get(name).copied()),
                    declared.is_some(),
                ),
            })
            .collect();
        let servers = mcp_servers(def);
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
                policy: self.session.mcp_policy.policy(),
            },
            appended: self.session.appended_prompt,
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
        let (servers, inline_tools) = self.connected_mcp(def, &started.mcp);
        Startup {
            context: pieces,
            mcp_servers: servers,
            inline_tools,
            skills: skills_report(&started.skills),
        }
    }

    /// MCP-1…6: the servers a run of `def` has (the session's, then its own that are
    /// available, `outcomes`) and the tools its connected inline servers bring.
    fn connected_mcp(
        &self,
        def: &AgentDef,
        outcomes: &[context::McpOutcome],
    ) -> (ToolList, Vec<Rc<str>>) {
        let mut servers_list: Vec<Rc<str>> = self.session.mcp.iter().cloned().collect();
        let mut inline_tools = Vec::new();
        for outcome in outcomes {
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
                    inline_tools.extend(server_tools(server).map(|tool| Rc::from(tool.as_str())));
                }
            }
        }
        (servers_list.into(), inline_tools)
    }

    /// The profile of a new run; cached per (type, placement, mode, teammate or not) when
    /// the call passes no per-invocation model or effort, so load runs share one. The key
    /// stands for the tools, which the plan resolved from the same facts (a teammate's
    /// differ from a background subagent's of its type: TOOLS-9).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_profile(
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
            let kept = match &self.memos.last_profile {
                Some((last_key, profile)) if *last_key == key => Some(profile.clone()),
                _ => self.memos.profiles.get(&key).cloned(),
            };
            if let Some(profile) = kept {
                // The replay lists the names in use (CTX-6's roster): bounded, so that a
                // load of named runs stays linear in debug builds too.
                debug_assert!(
                    self.agents.names.len() > REPLAY_NAMES_MAX
                        || *profile
                            == *self.make_profile(
                                type_index,
                                spec,
                                permission_mode,
                                teammate,
                                tools
                            ),
                    "a kept run profile differs from the rules' answer"
                );
                self.memos.last_profile = Some((key, profile.clone()));
                return profile;
            }
        }
        let profile = self.make_profile(type_index, spec, permission_mode, teammate, tools);
        if cacheable {
            self.memos.profiles.insert(key, profile.clone());
            self.memos.last_profile = Some((key, profile.clone()));
        }
        profile
    }

    /// The profile of a new run, made afresh: MODEL-1…14, MODEL-14's effort, the start-up
    /// context (CTX, MEM, MCP), and `tools` with what its inline servers bring (MCP-1).
    fn make_profile(
        &self,
        type_index: Option<usize>,
        spec: &SpawnSpec,
        permission_mode: PermissionMode,
        teammate: bool,
        tools: ToolList,
    ) -> Rc<RunProfile> {
        let (model, model_rule) =
            self.run_model(type_index, spec.model.as_deref(), spec.fork, false);
        let agent_type = match type_index {
            Some(index) if !spec.fork => self.session.types[index].name.clone(),
            _ => self.session.fork_arc.clone(),
        };
        let Startup {
            context,
            mcp_servers,
            inline_tools,
            skills,
        } = self.startup(type_index, spec.fork, &tools);
        let tools = match type_index {
            Some(index) if !inline_tools.is_empty() => {
                // MCP-1: an inline server connects for this subagent and brings its tools,
                // through its definition's two fields (TOOLS-13, TOOLS-15).
                let def = &self.session.types[index].def;
                let fields = subsim_rules::tools::Fields {
                    tools: def.tools.as_deref(),
                    disallowed: &def.disallowed_tools,
                };
                let inline: Vec<String> =
                    inline_tools.iter().map(|tool| tool.to_string()).collect();
                let (kept, _) = subsim_rules::tools::inline_mcp_tools(&inline, fields);
                let mut list: Vec<Rc<str>> = tools.iter().cloned().collect();
                for tool in &kept {
                    // A session agent's server of the same name is inherited already (MCP-2).
                    if !list.iter().any(|known| **known == **tool) {
                        list.push(Rc::from(tool.as_str()));
                    }
                }
                list.into()
            }
            _ => tools,
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
            skills,
            teammate,
        });
        profile
    }
}

/// What a run starts with beyond its tools ([`Kernel::startup`]).
pub(super) struct Startup {
    /// The context pieces included (CTX-2).
    context: ToolList,
    /// Its MCP servers (MCP-1).
    mcp_servers: ToolList,
    /// The tools its connected inline servers bring (MCP-1).
    inline_tools: Vec<Rc<str>>,
    /// MEM-4 / MEM-5: its listed skills, when not all of them were preloaded.
    skills: Option<Rc<SkillsReport>>,
}

/// MEM-4 / MEM-5: `outcomes` as `agent_started` reports them: `None` when every listed
/// skill was preloaded (nothing to say beyond the `preloaded skills` piece), else the
/// count preloaded and the others' names by why, in listed order.
fn skills_report(outcomes: &[context::SkillOutcome]) -> Option<Rc<SkillsReport>> {
    if outcomes.iter().all(|outcome| outcome.preloaded) {
        return None;
    }
    let named = |why: context::SkillSkip| -> ToolList {
        outcomes
            .iter()
            .filter(|outcome| outcome.skipped == Some(why))
            .map(|outcome| Rc::from(outcome.name.as_str()))
            .collect()
    };
    let preloaded = outcomes.iter().filter(|outcome| outcome.preloaded).count();
    Some(Rc::new(SkillsReport {
        preloaded: u32::try_from(preloaded).unwrap_or(u32::MAX),
        beyond_cap: named(context::SkillSkip::BeyondCap),
        model_invocation_disabled: named(context::SkillSkip::ModelInvocationDisabled),
        missing: named(context::SkillSkip::Missing),
        disabled: named(context::SkillSkip::Disabled),
    }))
}

/// A spawn plan as the kernel keeps it: the rules' plan, and what the kernel derives from
/// it once — the type's index, the tools as shared strings, the requested type as the
/// trace names it, a refusal's message.
pub(super) struct CachedPlan {
    /// The type as `spawn_requested` and `spawn_rejected` name it.
    pub(super) requested: Rc<str>,
    /// The depth of the caller the plan was made for: a launch's depth is that caller's
    /// child's ([`Kernel::launch_depth`] answers for other callers of the depth class).
    caller_depth: u32,
    /// `rules::plan::plan`'s answer.
    pub(super) plan: SpawnPlan,
    /// The definition that runs (a subagent's or a teammate's type; `None` for a fork).
    pub(super) type_index: Option<usize>,
    /// `PlanTools::Resolved`'s tools (empty otherwise).
    tools: ToolList,
    /// A refusal's message (empty for a launch).
    pub(super) message: Rc<str>,
    /// The profile its runs share, once one was handed out while profiles are shared.
    pub(super) profile: std::cell::OnceCell<Rc<RunProfile>>,
}

/// Who calls, as a plan reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CallerClass {
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
/// every depth of one class but for its launch's depth, `DepthClass`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct CallerKey {
    class: CallerClass,
    depth_class: DepthClass,
    has_agent_tool: bool,
}

/// A kind of Agent call: every input of `rules::plan::plan` that may differ between two
/// calls of one session (the rest — definitions, settings, main's pool — never changes
/// during a run).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct PlanKey {
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

/// The last kind of Agent call, its exact caller and its plan, compared in place before
/// `Memos::plans` is asked.
struct LastPlan {
    key: PlanKey,
    caller: PlanCaller,
    plan: Rc<CachedPlan>,
}

/// A definition as `rules::spawn` sees it, from its name (for a plugin, its scoped id) and
/// scope. DEF-5: a plugin's scoped id is `{plugin and folders}:{name}`. Not a memo: an
/// input of the plan memo (`rules_plan`) that the session's start (`mod.rs`, MAIN-4) builds
/// too.
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

/// TOOLS-4: whether the run's `tools` have `tool`. A run makes the same call with the
/// same shared list and name again and again (every run of a load): the last answer is
/// `kept` with the list and the name, and reused while both are the same objects (kept
/// alive by it, so no other object takes their address), without comparing names. In
/// debug builds a kept answer is checked against a fresh one.
#[inline]
fn has_tool(
    kept: &mut Option<(ToolList, Rc<str>, bool)>,
    tools: &ToolList,
    tool: &Rc<str>,
) -> bool {
    if let Some((kept_tools, kept_tool, given)) = kept {
        if Rc::ptr_eq(kept_tools, tools) && Rc::ptr_eq(kept_tool, tool) {
            debug_assert_eq!(*given, tools.iter().any(|t| **t == **tool));
            return *given;
        }
    }
    let given = tools.iter().any(|t| **t == **tool);
    *kept = Some((tools.clone(), tool.clone(), given));
    given
}

impl Kernel<'_> {
    // -- tool removals ----------------------------------------------------------------

    /// TOOLS-4: whether the run in `slot` was given `tool` ([`has_tool`], kept).
    #[inline]
    pub(super) fn run_has_tool(&mut self, slot: u32, tool: &Rc<str>) -> bool {
        let tools = &self.agents.get(slot).profile.tools;
        has_tool(&mut self.memos.last_tool_check, tools, tool)
    }

    /// Why a run lacks `tool` (TOOLS-1, TOOLS-10, MAIN-1: [`tools::missing`]): the step of
    /// its tool resolution that removed it (`filter_one`, `disallowed`, `not_in_tools`,
    /// `filter_two`) and that step's rule, or `not_in_session` when main's pool never had
    /// it. The resolution's steps are kept per kind of run (`RemovalKey`), so repeated
    /// refused calls resolve once; in debug builds a kept answer is checked against a fresh
    /// resolution.
    pub(super) fn removal_of(&mut self, slot: u32, tool: &str) -> (ToolRefusal, RuleId) {
        let agent = self.agents.get(slot);
        let steps;
        let lacking = if agent.id == MAIN && self.session.main_agent.is_some() {
            tools::Lacking::AgentMain
        } else if let Some(index) = agent
            .type_index()
            .filter(|_| !agent.fork && agent.depth > 0)
        {
            steps = self.kept_removal_steps(slot, index);
            tools::Lacking::Subagent(&steps)
        } else {
            tools::Lacking::Other
        };
        let (kind, rule) = tools::missing(tool, lacking);
        let refusal = kind
            .and_then(ToolRefusal::removed_by)
            .unwrap_or(ToolRefusal::NotInSession);
        (refusal, rule)
    }

    /// The steps of the tool resolution of the run in `slot`, a subagent of type `index`
    /// (not a fork), kept per kind of run.
    fn kept_removal_steps(&mut self, slot: u32, index: usize) -> Rc<[tools::Step]> {
        let agent = self.agents.get(slot);
        // The resolution reads the run's depth only through its `Agent` tool (DEPTH-3).
        let (agent_tool, _) =
            depth::agent_tool(agent.depth, self.session.config.depth_limit, false);
        let key = RemovalKey {
            type_index: index,
            agent_tool,
            background: agent.profile_mode_background(),
            teammate: agent.teammate,
            permission_mode: agent.permission_mode,
        };
        match self.memos.removals.get(&key) {
            Some(steps) => {
                let steps = steps.clone();
                debug_assert_eq!(
                    *steps,
                    *self.removal_steps(slot, index),
                    "a kept tool resolution differs from the rules' resolution"
                );
                steps
            }
            None => {
                let steps = self.removal_steps(slot, index);
                self.memos.removals.insert(key, steps.clone());
                steps
            }
        }
    }

    /// The steps of `tools::resolve_with` for the run in `slot`, of type `index`.
    fn removal_steps(&self, slot: u32, index: usize) -> Rc<[tools::Step]> {
        let agent = self.agents.get(slot);
        let def = &self.session.types[index].def;
        let placement = tools::Placement {
            depth: agent.depth,
            depth_limit: self.session.config.depth_limit,
            mode: if agent.profile_mode_background() {
                Mode::Background
            } else {
                Mode::Foreground
            },
            fork: false,
            teammate: agent.teammate,
            first_ran_foreground: false,
            permission_mode: agent.permission_mode,
        };
        let request = tools::ToolRequest {
            fields: tools::Fields {
                tools: def.tools.as_deref(),
                disallowed: &def.disallowed_tools,
            },
            memory: def.memory.is_some() && self.session.auto_memory,
            ..tools::ToolRequest::new(&self.session.pool, placement, self.session.config.gates)
        };
        match tools::resolve_with(&request) {
            Ok(resolved) => resolved.steps.into(),
            Err(_) => Rc::from(Vec::new()),
        }
    }

    // -- report deliveries -------------------------------------------------------------

    /// NOTIFY-13, SCAN, HANDBACK-8/9: what the recipient of `body`, the report of the run
    /// in `slot`, reads ([`build_delivery`]), with the review's inputs it was decided by.
    pub(super) fn delivery_of(
        &self,
        slot: u32,
        body: &str,
    ) -> (
        HandbackKey,
        Rc<str>,
        Option<Rc<str>>,
        RuleId,
        Option<ReviewOutcome>,
    ) {
        let key = self.handback_key(slot);
        let (text, scan_note, rule, review) = build_delivery(body, key, &self.session.config.gates);
        (key, Rc::from(text), scan_note.map(Rc::from), rule, review)
    }

    /// Keeps the delivery of `report` under `key` as the last one (its text, note and
    /// verdict are the trace writer's kept `report_delivered`; debug builds keep copies to
    /// check them against).
    pub(super) fn keep_delivery(
        &mut self,
        report: Rc<str>,
        key: HandbackKey,
        rule: RuleId,
        text: &Rc<str>,
        scan_note: &Option<Rc<str>>,
        review: Option<ReviewOutcome>,
    ) {
        let _ = (text, scan_note, review);
        self.memos.last_delivery = Some(Delivered {
            report,
            key,
            rule,
            #[cfg(debug_assertions)]
            prefix: handback_of(key, &self.session.config.gates).0.prefix,
            #[cfg(debug_assertions)]
            text: text.clone(),
            #[cfg(debug_assertions)]
            scan: scan_note.clone(),
            #[cfg(debug_assertions)]
            review,
        });
    }

    /// HANDBACK-8 / SCAN: whether the delivery of `report` by the run in `slot` is the last
    /// one built (`Memos::last_delivery`): the same text, and the same inputs to the
    /// review (`handback_key`) — everything a delivery writes depends only on those (and
    /// on the session, which does not change). So the review is decided once per distinct
    /// input, not per delivery; debug builds decide it again and compare.
    #[inline(always)]
    pub(super) fn reuses_delivery(&self, slot: u32, report: &Rc<str>) -> bool {
        let Some(last) = self.memos.last_delivery.as_ref() else {
            return false;
        };
        if !Rc::ptr_eq(&last.report, report) || self.handback_key(slot) != last.key {
            return false;
        }
        #[cfg(debug_assertions)]
        {
            // The review decided again (it allocates nothing): the same prefix, verdict and
            // rule as the kept delivery's.
            let (delivery, review) =
                handback_of(self.handback_key(slot), &self.session.config.gates);
            let rule = scan::delivered_rule(
                last.scan.is_some().then_some(last.rule),
                delivery.reviewed.then_some(delivery.rule),
            );
            debug_assert_eq!(
                (delivery.prefix, review, rule),
                (last.prefix, last.review, last.rule),
                "a reused delivery differs from the one its inputs give"
            );
        }
        true
    }

    /// The inputs of `handback::review` for the run in `slot` that are not the session's.
    #[inline]
    fn handback_key(&self, slot: u32) -> HandbackKey {
        let agent = self.agents.get(slot);
        HandbackKey {
            verdict: agent.classifier.unwrap_or(self.session.classifier).review,
            mode: agent.profile.permission_mode,
            fork: agent.fork,
        }
    }
}

/// A kind of run, as its tool resolution reads it (the rest — its definition's fields,
/// main's pool, auto memory, the gates — is fixed by the type and the run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct RemovalKey {
    type_index: usize,
    /// DEPTH-3: the run's `Agent` tool at its depth (the only depth fact filter 1 reads).
    agent_tool: depth::AgentTool,
    background: bool,
    teammate: bool,
    permission_mode: PermissionMode,
}

/// The last report delivery built (see `Kernel::reuses_delivery`), holding its report text
/// so that pointer equality means equal text. What it delivered (the text, the scan's note
/// and the review verdict) is in the kept `report_delivered` event (`HotEvents::delivered`),
/// which nothing else writes: a delivery again writes only who from and who to.
#[derive(Clone)]
pub(super) struct Delivered {
    report: Rc<str>,
    /// The inputs of `handback::review` that vary by run (`Kernel::handback_key`): with
    /// the same report text they decide everything the delivery writes.
    key: HandbackKey,
    pub(super) rule: RuleId,
    /// What the review put in front of the report, the text, the scan's note and the
    /// verdict (checked again in debug builds).
    #[cfg(debug_assertions)]
    prefix: Option<&'static str>,
    #[cfg(debug_assertions)]
    pub(super) text: Rc<str>,
    #[cfg(debug_assertions)]
    pub(super) scan: Option<Rc<str>>,
    #[cfg(debug_assertions)]
    pub(super) review: Option<ReviewOutcome>,
}

/// What `handback::review` is given for a run besides the session's gates, which do not
/// change: the classifier's verdict, the run's permission mode, whether it is a fork.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct HandbackKey {
    verdict: ReviewOutcome,
    mode: PermissionMode,
    fork: bool,
}

/// NOTIFY-13, SCAN, HANDBACK-8/9: what the recipient of `body` reads — the delivered text,
/// the scan's note when it changed the text, the event's rule, and the review verdict the
/// trace names when a review ran — for a run whose review inputs are `key`.
fn build_delivery(
    body: &str,
    key: HandbackKey,
    gates: &Gates,
) -> (String, Option<String>, RuleId, Option<ReviewOutcome>) {
    let scanned = scan::scan(body, gates);
    // SCAN-3 / SCAN-4: the changes in words, each said once.
    let scan_note = scan::note(&scanned.changes);
    let (delivery, review) = handback_of(key, gates);
    let mut text = String::new();
    text.push_str(scan::header());
    text.push('\n');
    if let Some(prefix) = delivery.prefix {
        text.push_str(prefix);
        text.push('\n');
    }
    text.push_str(&scanned.text);
    let rule = scan::delivered_rule(
        (!scanned.changes.is_empty()).then_some(scanned.rule),
        delivery.reviewed.then_some(delivery.rule),
    );
    (text, scan_note, rule, review)
}

/// HANDBACK-8/9: how a report is handed over (`handback::review` with the run's classifier
/// verdict and permission mode), and the verdict the trace names when a review ran.
fn handback_of(key: HandbackKey, gates: &Gates) -> (handback::Delivery, Option<ReviewOutcome>) {
    let delivery = handback::review(key.verdict, key.mode, key.fork, gates);
    (delivery, delivery.reviewed.then_some(key.verdict))
}

// -- Inputs shared with the session's start ------------------------------------------

/// MCP-1: the tools an inline `server` brings, by their names in a tool pool. Not a memo:
/// the profile memo (`connected_mcp`) and the session's pool (`mod.rs`) both read it.
pub(super) fn server_tools(server: &McpServerRef) -> impl Iterator<Item = String> + '_ {
    let name = server.name.as_str();
    server
        .tools
        .iter()
        .map(move |tool| tools::mcp_tool_name(name, tool))
}

#[cfg(test)]
mod tests {
    use super::*;
    use subsim_rules::plan::{DefinitionFacts, PlanInput};
    use subsim_rules::spawn::{Caller, SpawnRequest};
    use subsim_rules::{SessionConfig, SessionKind, Version};

    /// A headless session at the newest version with `depth_limit` as the depth limit.
    fn config(depth_limit: u32) -> SessionConfig {
        let env = [(
            "CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH".to_string(),
            depth_limit.to_string(),
        )]
        .into_iter()
        .collect();
        let (config, _) = SessionConfig::resolve(
            Version::NEWEST,
            SessionKind::Headless,
            &env,
            &subsim_rules::cap::Settings::default(),
            false,
            PermissionMode::Default,
        );
        assert_eq!(config.depth_limit, depth_limit);
        config
    }

    /// `rules::plan::plan` for `caller` at `depth`, calling `general-purpose` (or forking).
    fn plan_at(config: &SessionConfig, caller: Caller<'_>, fork: bool, depth: u32) -> SpawnPlan {
        let pool = tools::default_main_tools();
        let input = PlanInput {
            request: SpawnRequest {
                fork,
                fork_mode: true,
                session: config.kind,
                ..SpawnRequest::new(caller, config.gates)
            },
            caller_depth: depth,
            caller_has_agent_tool: true,
            run_in_background: None,
            needs_result: false,
            classifier_blocks_launch: false,
            pool: &pool,
            auto_memory: false,
            config,
        };
        let known = |name: &str| (name == "general-purpose").then(DefinitionFacts::default);
        plan::plan(&input, &known)
    }

    /// The plan memo's key is complete in depth: two callers of one class and depth class
    /// get the same plan but for the launch's depth, which `child_depth` gives.
    #[test]
    fn a_plan_holds_for_every_caller_depth_of_its_depth_class() {
        let mut classes_seen = 0;
        for limit in [1, 2, 3, 5] {
            let config = config(limit);
            for (caller, fork) in [
                (Caller::Main, false),
                (Caller::Main, true),
                (Caller::Subagent, false),
                (Caller::Fork, false),
                (Caller::Teammate, false),
            ] {
                for first in 0..=limit + 2 {
                    for other in 0..=limit + 2 {
                        let same = DepthClass::of(&caller, first, limit)
                            == DepthClass::of(&caller, other, limit);
                        if same {
                            assert_eq!(
                                at_depth(&plan_at(&config, caller, fork, first), &caller, other),
                                plan_at(&config, caller, fork, other),
                                "{caller:?} fork {fork}, limit {limit}: depth {first} → {other}"
                            );
                        }
                        classes_seen += usize::from(!same);
                    }
                }
            }
        }
        assert!(classes_seen > 0, "some depths fall in different classes");
        // DEPTH-3: a subagent whose child lands on the limit plans a child without `Agent`;
        // one depth higher up the child keeps it: two classes, two tool sets.
        let config = config(3);
        let subagent = Caller::Subagent;
        assert_ne!(
            DepthClass::of(&subagent, 1, 3),
            DepthClass::of(&subagent, 2, 3)
        );
        let has_agent = |depth| match plan_at(&config, subagent, false, depth) {
            SpawnPlan::Launch(Launch {
                tools: PlanTools::Resolved { tools, .. },
                ..
            }) => tools.iter().any(|tool| tool == "Agent"),
            other => panic!("a launch with resolved tools, got {other:?}"),
        };
        assert!(has_agent(1));
        assert!(!has_agent(2));
    }

    /// Q-44 / SPAWN-11: a launch's child depth is the caller's child's, but a teammate's,
    /// which is its own (0) whoever calls.
    #[test]
    fn q44_spawn_11_a_launch_s_child_depth() {
        let config = config(20);
        let SpawnPlan::Launch(launch) = plan_at(&config, Caller::Subagent, false, 2) else {
            panic!("launches");
        };
        assert_eq!(launch.depth, 3);
        assert_eq!(child_depth(&launch, &Caller::Subagent, 4), 5);
        assert_eq!(child_depth(&launch, &Caller::Teammate, 0), 1, "Q-44");
        let teammate = Launch {
            launched: Launched::Teammate("general-purpose".into()),
            depth: 0,
            ..launch
        };
        assert_eq!(child_depth(&teammate, &Caller::Main, 0), 0, "SPAWN-11");
    }

    /// The kept answer is the same as a fresh one for the same list and name, and a list
    /// or a name that is another object (even with the same text) is checked afresh.
    #[test]
    fn has_tool_keeps_the_answer_of_the_same_list_and_name() {
        let tools: ToolList = vec![Rc::from("Agent"), Rc::from("Bash")].into();
        let bash: Rc<str> = Rc::from("Bash");
        let edit: Rc<str> = Rc::from("Edit");
        let mut kept = None;
        assert!(has_tool(&mut kept, &tools, &bash));
        assert!(has_tool(&mut kept, &tools, &bash));
        assert!(!has_tool(&mut kept, &tools, &edit));
        assert!(!has_tool(&mut kept, &tools, &edit));
        let other: ToolList = vec![Rc::from("Edit")].into();
        assert!(has_tool(&mut kept, &other, &edit));
        assert!(!has_tool(&mut kept, &other, &bash));
        assert!(has_tool(&mut kept, &tools, &Rc::from("Bash")));
    }
}
