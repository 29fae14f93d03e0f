//! The kernel: an explicit discrete-event queue and the agent runs it drives.
//!
//! Each run (the main conversation included) is a small state machine that interprets its
//! step program; it advances until it blocks (a timer, a permission prompt, foreground
//! children, a wait) and is woken by a queued wake. The queue is keyed by
//! `(time, seq)`, so same-instant wakes run in the order they were scheduled.
//!
//! This module decides *when*; every *whether* is asked of `subsim-rules`, and the rule it
//! names goes into the event. Every Agent call takes the one spawn path of `spawn.rs`
//! (a `rules::plan::SpawnPlan`, then the cap). The kernel's invariants (see
//! ARCHITECTURE.md) are `debug_assert!`ed where they could break.
//!
//! Memory grows with what is running, not with what ran: agent records live in a slab, and
//! records of load-generated agents are released when their run ends (they are anonymous
//! and cannot be addressed again).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use subsim_rules::cap::Unchecked;
use subsim_rules::model;
use subsim_rules::notify::{self, Delivery, Finishing, Recipient};
use subsim_rules::placement;
use subsim_rules::prompt::{self, Asker, CallDecision, Route};
use subsim_rules::session::{env, ConfigNote};
use subsim_rules::tools::{self, Fields};
use subsim_rules::{messages, Mode, PermissionMode, RejectReason, RuleId, SessionConfig};

use crate::dist::Dist;
use crate::event::{AgentId, AgentRef, Event, EventKind, Outcome, RunProfile, ToolList, MAIN};
use crate::sink::Sink;
use crate::spec::{
    default_behavior, default_resume_behavior, ActionKind, AgentDef, Answer, ApiError, Arrivals,
    LoadSpec, LoadUntil, Program, Retry, Scope, SimSpec, SpawnSpec, Step, ToolCall, WaitTarget,
};
use crate::time::SimTime;

mod actions;
mod finish;
mod load;
mod messaging;
mod observe;
mod person;
mod queue;
mod spawn;
mod steps;
mod ties;

pub use ties::TieBreak;

/// A safety limit that ended a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitHit {
    /// `max_events`, `max_time`, `max_agents`, `max_steps` or `max_running`.
    pub limit: &'static str,
    /// The bound that was hit.
    pub value: u64,
}

impl std::fmt::Display for LimitHit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.limit {
            "max_time" => write!(
                f,
                "the run reached session.limits.max_time ({}); raise it in the scenario's \
                 `session.limits` if the run is meant to be longer",
                crate::time::human_duration(self.value)
            ),
            "max_steps" => write!(
                f,
                "the run reached session.limits.max_steps ({} steps run; by default 10 × \
                 max_events): steps that take no time, such as a `repeat` of `work: 0s`, never \
                 let time pass; raise it in the scenario's `session.limits` if the run is meant \
                 to be longer",
                self.value
            ),
            "max_running" => write!(
                f,
                "the run reached session.limits.max_running ({} subagents running at once, \
                 which bounds memory when the cap does not); raise it in the scenario's \
                 `session.limits` if the run is meant to be that wide",
                self.value
            ),
            limit => write!(
                f,
                "the run reached session.limits.{limit} ({}); raise it in the scenario's \
                 `session.limits` if the run is meant to be longer",
                self.value
            ),
        }
    }
}

/// What a finished run reports besides its events.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// Virtual time of the last event.
    pub end: SimTime,
    /// Events emitted.
    pub events: u64,
    /// The safety limit that stopped the run, if one did.
    pub limit: Option<LimitHit>,
    /// Notes about how settings were read (e.g. an invalid env value).
    pub notes: Vec<ConfigNote>,
}

/// A simulation ready to run.
pub struct Simulation {
    spec: SimSpec,
}

impl Simulation {
    /// A simulation of `spec` with the spec's own seed.
    pub fn new(spec: SimSpec) -> Simulation {
        Simulation { spec }
    }

    /// Overrides the seed (the CLI's `--seed`).
    pub fn with_seed(mut self, seed: u64) -> Simulation {
        self.spec.session.seed = seed;
        self
    }

    /// The spec this simulation runs.
    pub fn spec(&self) -> &SimSpec {
        &self.spec
    }

    /// Runs to the end (or to a safety limit), handing every event to `sink`.
    pub fn run(self, sink: &mut dyn Sink) -> RunReport {
        let mut kernel = Kernel::new(self.spec, sink);
        kernel.run();
        kernel.report()
    }

    /// [`Simulation::run`], with `ties` choosing which of the same-instant wakes that could
    /// affect each other runs next (see [`TieBreak`]). A `ties` that always answers 0 gives
    /// exactly the trace of `run`.
    pub fn run_with_ties(self, sink: &mut dyn Sink, ties: &mut dyn TieBreak) -> RunReport {
        let mut kernel = Kernel::new(self.spec, sink);
        kernel.ties = Some(ties);
        kernel.run();
        kernel.report()
    }

    /// Runs every event up to and including virtual time `at`, then stops and returns
    /// what the subagent panel and `/tasks` show at that instant (PANEL), as a person
    /// would see them. `None` for load runs and for `-p` and SDK sessions, which keep no panel (PANEL-1).
    pub fn run_until(
        self,
        sink: &mut dyn Sink,
        at: SimTime,
    ) -> (RunReport, Option<subsim_rules::panel::PanelView>) {
        let mut kernel = Kernel::new(self.spec, sink);
        kernel.stop_at = Some(at);
        kernel.run();
        let gates = kernel.config.gates;
        let view = kernel.panel.as_ref().map(|state| {
            state
                .panel
                .view(at.as_micros(), &gates, state.screen_reader)
        });
        (kernel.report(), view)
    }
}

// ---------------------------------------------------------------------------------------
// Internals
// ---------------------------------------------------------------------------------------

/// A fast, deterministic hasher for the id → slot map (never iterated).
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 =
                (self.0.rotate_left(5) ^ u64::from(*byte)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u32(&mut self, value: u32) {
        self.0 = u64::from(value).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type IdMap = HashMap<AgentId, u32, BuildHasherDefault<IdHasher>>;

/// Purposes of the random streams (part of each stream's seed).
mod purpose {
    pub const BEHAVIOR: u64 = 1;
    pub const ARRIVALS: u64 = 2;
    pub const USER: u64 = 3;
    pub const LOAD_BEHAVIOR: u64 = 4;
    pub const RETRY: u64 = 5;
}

/// SplitMix64 finaliser, used to derive stream seeds.
fn mix(mut value: u64) -> u64 {
    value = value.wrapping_add(0x9e37_79b9_7f4a_7c15);
    value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    value ^ (value >> 31)
}

/// A ChaCha8 stream for (seed, agent, purpose).
fn stream(seed: u64, agent: u64, purpose: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    let mut state = mix(seed) ^ mix(agent.wrapping_add(0x1000)) ^ mix(purpose.wrapping_mul(31));
    for chunk in key.chunks_mut(8) {
        state = mix(state);
        chunk.copy_from_slice(&state.to_le_bytes());
    }
    ChaCha8Rng::from_seed(key)
}

/// Something queued for a moment in virtual time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Wake {
    /// Continue a run's program (guarded by the run's generation).
    Step { slot: u32, gen: u32 },
    /// The load generator's next arrival.
    Arrival,
    /// A rejected load arrival (its index) tries again.
    Retry(u64),
    /// The person's timed action `index`.
    Action(u32),
    /// The person finished thinking about prompt `id`.
    Answer(u64),
    /// A panel window (30 s after a finish, PANEL-2/3/5) ends.
    PanelTick,
    /// A background shell command of `agent` finished.
    BashDone { agent: AgentId, run: u32 },
}

/// What a step did to its run's program: the run takes its next step now, or it does
/// not — it blocked (a timer, a prompt, foreground children, a wait: a queued wake
/// resumes it) or it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flow {
    /// Go on to the next step.
    Continue,
    /// Blocked or ended: take no further step now.
    Stop,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Running,
    Finished(Outcome),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    /// Ready to take its next step.
    Ready,
    /// A timer is pending.
    Timer,
    /// Waiting for its foreground children (FGBG-4).
    Foreground,
    /// Waiting for an answer to a prompt.
    Prompt(u64),
    /// `wait: {for: agent}`.
    Agent,
    /// `wait: {for: children}`.
    Children,
    /// `wait: {for: notification}`.
    Notification,
    /// Steps done; waiting for background children (NOTIFY-6).
    EndChildren,
    /// Steps done; waiting for background shell commands (NOTIFY-5, Q-5).
    EndBash,
    /// The main conversation's script is done.
    Idle,
}

struct Frame {
    program: Program,
    pc: usize,
    remaining: u32,
}

/// A resolved agent type.
struct TypeDef {
    name: Rc<str>,
    def: AgentDef,
    /// The model when no per-invocation value is given, and the rule that chose it.
    model: Rc<str>,
    model_rule: RuleId,
    /// RESUME-3: Explore and Plan return no agent id.
    one_shot: bool,
    behavior: Program,
}

struct Agent {
    id: AgentId,
    /// The definition it runs (None for forks and main).
    type_index: Option<usize>,
    /// NOTIFY-1: the run's last report text.
    report: Option<Rc<str>>,
    /// ERR-1: continuation requests made for this run.
    continuations: u32,
    /// HANDBACK-7/8: the classifier's verdicts for this run, if the spawn set them.
    classifier: Option<crate::spec::ClassifierSpec>,
    /// RESUME-14: the per-invocation model of the spawn.
    invocation_model: Option<Rc<str>>,
    /// An agent-team teammate (SPAWN-11): its own limits, no slot (CAP-8).
    teammate: bool,
    /// Its tool set was resolved for the background (filter 2 applied).
    profile_background: bool,
    /// What the run runs with: type, model, effort, tools, context (RESUME-7: kept on
    /// resume, except the model where RESUME-14 says otherwise).
    profile: Rc<RunProfile>,
    name: Option<Rc<str>>,
    depth: u32,
    mode: Mode,
    fork: bool,
    permission_mode: PermissionMode,
    one_shot: bool,
    max_turns: Option<u32>,
    from_load: bool,
    status: Status,
    user_cancelled: bool,
    /// The run's own program and position; `stack` holds `repeat` bodies.
    program: Program,
    pc: usize,
    stack: Vec<Frame>,
    block: Block,
    gen: u32,
    foreground_pending: u32,
    /// Which run of this agent is current (0 for the first, +1 per resume).
    run: u32,
    /// Whether the caller is blocked on this run (foreground, not backgrounded).
    awaited: bool,
    children_running: u32,
    bash_running: u32,
    inbox: u32,
    waiters: Vec<AgentId>,
    report_to: AgentId,
    resumed: bool,
    turns: u32,
    rng: Option<Box<ChaCha8Rng>>,
    finished_at: SimTime,
}

impl Agent {
    /// Whether its tool set was resolved for the background (TOOLS-6: a resumed run keeps
    /// the set of its first run, so this is the first run's placement).
    fn profile_mode_background(&self) -> bool {
        self.profile_background
    }

    /// An anonymous load agent: kept out of the id map, released when it ends.
    fn unindexed(&self) -> bool {
        self.from_load && self.name.is_none()
    }

    fn reference(&self) -> AgentRef {
        AgentRef {
            id: self.id,
            name: self.name.clone(),
        }
    }
}

struct PendingPrompt {
    slot: u32,
    tool: Rc<str>,
    input: Option<Rc<str>>,
    asked_at: SimTime,
    duration: Option<Dist>,
}

struct Kernel<'s> {
    sink: &'s mut dyn Sink,
    config: SessionConfig,
    notes: Vec<ConfigNote>,
    seed: u64,
    pool: Vec<String>,
    permissions: subsim_rules::prompt::PermissionRules,
    session_grants: Vec<String>,
    types: Vec<TypeDef>,
    type_index: BTreeMap<String, usize>,
    user_answer: Answer,
    /// `user.answers`: per-prompt answers, first match wins.
    user_answers: Vec<crate::spec::AnswerRule>,
    user_think: Dist,
    actions: Vec<crate::spec::UserAction>,
    load: Option<LoadSpec>,
    limits: crate::spec::Limits,
    /// Steps left before `max_steps` (`Limits::steps`) stops the run.
    steps_left: u64,
    /// The last report delivery built, reused for the same text delivered the same way.
    last_delivery: Option<finish::Delivered>,
    // Time and queue.
    now: SimTime,
    last_time: SimTime,
    queue_seq: u64,
    queue: queue::TimeQueue<Wake>,
    /// Wakes scheduled for the current instant, in seq order. Together with `queue` they
    /// form one (time, seq)-ordered queue: `pop_next` takes the smaller head of the two.
    now_queue: VecDeque<(u64, Wake)>,
    /// `run_until`: stop before the first wake after this instant.
    stop_at: Option<SimTime>,
    /// `run_with_ties`: who picks among same-instant wakes (`None`: scheduling order).
    ties: Option<&'s mut dyn TieBreak>,
    /// The load generator's pending arrival `(time, seq)`.
    next_arrival: Option<(SimTime, u64)>,
    trace_seq: u64,
    limit: Option<LimitHit>,
    // Agents.
    slots: Vec<Option<Agent>>,
    free: Vec<(u32, u32)>,
    by_id: IdMap,
    /// Running anonymous load agents, which `by_id` does not index (nothing can name them
    /// but their id, and they are released when they end).
    unindexed: u32,
    next_id: AgentId,
    running: u32,
    names: BTreeMap<Rc<str>, AgentId>,
    /// RESUME-12: the agent each name first reached in this conversation.
    reached: BTreeMap<Rc<str>, AgentId>,
    profile_cache: BTreeMap<(usize, u8, PermissionMode), Rc<RunProfile>>,
    /// Spawn plans (`rules::plan`) by kind of call: a load run makes the same call for
    /// every arrival. See `spawn::spawn_plan` for the rules of this cache.
    plans: BTreeMap<spawn::PlanKey, Rc<spawn::CachedPlan>>,
    /// The last kind of call and its plan, compared in place before the map is asked.
    last_plan: Option<(spawn::PlanKey, Rc<spawn::CachedPlan>)>,
    /// CAP-2's message, shared by every refusal at the cap.
    limit_message: Rc<str>,
    /// `--agent`: the definition main runs as (MAIN-1).
    main_agent: Option<usize>,
    /// The last profile handed out, with its key (load runs ask for the same one).
    last_profile: Option<((usize, u8, PermissionMode), Rc<RunProfile>)>,
    // The person.
    prompts: BTreeMap<u64, PendingPrompt>,
    prompt_queue: VecDeque<u64>,
    person_busy: Option<u64>,
    next_prompt: u64,
    // Load.
    arrivals: u64,
    /// Rejected load calls waiting for a slot to free (`retry: after_completion`), oldest
    /// first, by arrival index (so a named call keeps its `NAME-i`).
    retry_waiting: VecDeque<u64>,
    /// The arrival whose call is being made (its `spawn_requested` carries it).
    load_arrival: Option<u64>,
    arrival_rng: ChaCha8Rng,
    load_rng: ChaCha8Rng,
    retry_rng: ChaCha8Rng,
    user_rng: ChaCha8Rng,
    /// What the MODEL rules read.
    models: ModelSettings,
    /// The panel (PANEL); `None` for load runs (whose million rows nobody reads) and for `-p` and SDK sessions (PANEL-1: the panel is a terminal's).
    panel: Option<observe::PanelState>,
    /// Session-level hooks (HOOK-1).
    session_hooks: Vec<crate::spec::HookSpec>,
    /// ERR-5: the fallback model chain.
    fallback_models: Vec<String>,
    /// ERR-1 / Q-15: the continuation budget.
    continuation_budget: u32,
    /// HANDBACK-7/8: the session's classifier verdicts.
    classifier: crate::spec::ClassifierSpec,
    /// MEM-2: auto memory on.
    auto_memory: bool,
    /// Trusted folders (HOOK-6, MCP-3).
    trusted_dirs: Vec<String>,
    /// What loading the definitions did (DEF), reported at time 0.
    definitions: Vec<crate::spec::DefinitionNote>,
    /// The session's MCP servers (MCP-1: shared with subagents).
    session_mcp: ToolList,
    /// `CLAUDE_CODE_EFFORT_LEVEL` and the session's effort (MODEL-14).
    effort_env: Option<String>,
    session_effort: Option<String>,
    /// The load block's Agent call, shared (it is issued once per arrival).
    load_spawn_spec: Rc<SpawnSpec>,
    fork_arc: Rc<str>,
    /// Whether the session or any definition has hooks (neither changes during a run).
    hooks_present: bool,
}

/// The session settings the MODEL rules read, kept for per-spawn resolutions.
pub(crate) struct ModelSettings {
    main: String,
    provider: model::Provider,
    subagent_model: Option<String>,
    force: Option<String>,
    default_opus: Option<String>,
    available: Option<Vec<String>>,
    interactive: bool,
}

impl ModelSettings {
    fn from_session(session: &crate::spec::SessionSpec) -> ModelSettings {
        ModelSettings {
            main: session.model.clone(),
            provider: provider_from(&session.provider),
            subagent_model: session.env.get(env::SUBAGENT_MODEL).cloned(),
            force: session.env.get(env::SUBAGENT_MODEL_FORCE).cloned(),
            default_opus: session.env.get("ANTHROPIC_DEFAULT_OPUS_MODEL").cloned(),
            available: session.available_models.clone(),
            interactive: session.kind.is_interactive(),
        }
    }

    /// MODEL-1…14 for a run of `def` (None for a fork).
    fn choose(
        &self,
        config: &SessionConfig,
        def: &AgentDef,
        invocation: Option<&str>,
        fork: bool,
        resumed: bool,
    ) -> model::ModelChoice {
        let built_in = model::BuiltIn::from_name(&def.name);
        let kind = match (built_in, def.scope == Scope::BuiltIn) {
            (Some(built_in), true) => model::DefinitionKind::BuiltIn(built_in),
            (Some(built_in), false) => model::DefinitionKind::Overrides(built_in),
            (None, _) => model::DefinitionKind::Custom,
        };
        let request = model::ModelRequest {
            invocation,
            definition: def.model.as_deref(),
            kind,
            provider: self.provider,
            subagent_model: self.subagent_model.as_deref(),
            subagent_model_force: self.force.as_deref(),
            default_opus_model: self.default_opus.as_deref(),
            available_models: self.available.as_deref(),
            fork,
            resumed,
            interactive: self.interactive,
            ..model::ModelRequest::new(&self.main, config.gates)
        };
        model::choose(&request)
    }
}

/// The provider spelled as in scenario files (`anthropic`, `vertex`, …) or as the rules
/// crate spells it; unknown text means the Anthropic API.
fn provider_from(text: &str) -> model::Provider {
    match text {
        "anthropic" | "api" => model::Provider::AnthropicApi,
        "vertex" | "google" => model::Provider::AgentPlatform,
        "aws" => model::Provider::ClaudePlatformOnAws,
        "apps_gateway" => model::Provider::ClaudeAppsGateway,
        other => other.parse().unwrap_or_default(),
    }
}

impl<'s> Kernel<'s> {
    fn new(mut spec: SimSpec, sink: &'s mut dyn Sink) -> Kernel<'s> {
        // MAIN-1 / MAIN-4: the session agent, by exact name or by a plugin's bare name
        // (unique among plugin definitions); main then runs on its model, and subagents
        // that inherit the main model inherit that one.
        let main_agent_key = spec.session.agent.as_ref().and_then(|wanted| {
            if spec.agents.contains_key(wanted) {
                return Some(wanted.clone());
            }
            let suffix = format!(":{wanted}");
            let mut matches = spec
                .agents
                .iter()
                .filter(|(key, def)| def.scope == Scope::Plugin && key.ends_with(&suffix));
            match (matches.next(), matches.next()) {
                (Some((key, _)), None) => Some(key.clone()),
                _ => None,
            }
        });
        if let Some(model) = main_agent_key
            .as_ref()
            .and_then(|key| spec.agents.get(key))
            .and_then(|def| def.model.clone())
            .filter(|model| model != "inherit")
        {
            spec.session.model = model;
        }
        let session = &spec.session;
        let (config, notes) = SessionConfig::resolve(
            session.version,
            session.kind,
            &session.env,
            session.ultracode,
            session.agent_teams,
            session.permission_mode,
        );
        let seed = session.seed;
        let main_model: Rc<str> = Rc::from(session.model.as_str());
        let mut pool = session.tools.clone().unwrap_or_else(|| {
            // TOOLS-8 / TOOLS-10: the documented built-ins, ListAgents only with
            // cross-session messaging.
            tools::main_tools(tools::SessionTools {
                cross_session_messaging: session.cross_session_messaging,
                ..tools::SessionTools::default()
            })
        });
        for (server, server_tools) in &session.mcp {
            for tool in server_tools {
                pool.push(format!("mcp__{server}__{tool}"));
            }
        }
        let mut types = Vec::new();
        let mut type_index = BTreeMap::new();
        let mut add = |def: AgentDef, types: &mut Vec<TypeDef>| {
            let name: Rc<str> = Rc::from(def.name.as_str());
            let built_in = def.scope == Scope::BuiltIn;
            let one_shot = built_in && (def.name == "Explore" || def.name == "Plan");
            let models = ModelSettings::from_session(session);
            let choice = models.choose(&config, &def, None, false, false);
            let behavior = def.behavior.clone().unwrap_or_else(default_behavior);
            type_index.insert(def.name.clone(), types.len());
            types.push(TypeDef {
                name,
                model: Rc::from(choice.model.as_str()),
                model_rule: choice.rule,
                one_shot,
                behavior,
                def,
            });
        };
        // SPAWN-8: built-ins, less the ones the env removes.
        let builtin_env = subsim_rules::spawn::BuiltinEnv {
            disable_explore_plan: config.disable_explore_plan,
            sdk_disable_builtins: config.disable_builtins,
        };
        for built_in in model::BuiltIn::REGISTRATION {
            if !subsim_rules::spawn::registered(built_in, config.kind, builtin_env, &config.gates) {
                continue;
            }
            if spec.agents.contains_key(built_in.name()) {
                continue; // SPAWN-10: a definition of the same name overrides the built-in.
            }
            add(AgentDef::built_in(built_in), &mut types);
        }
        for (name, def) in &spec.agents {
            let mut def = def.clone();
            // DEF-5: a plugin definition is known by its scoped id, the map key.
            if def.name.is_empty() || def.scope == Scope::Plugin {
                def.name = name.clone();
            }
            add(def, &mut types);
        }
        let limits = session.limits;
        let mut kernel = Kernel {
            sink,
            config,
            notes,
            seed,
            pool,
            permissions: session.permissions.clone(),
            session_grants: Vec::new(),
            types,
            type_index,
            user_answer: spec.user.answer,
            user_answers: spec.user.answers.clone(),
            user_think: spec.user.think,
            actions: spec.user.actions.clone(),
            load: spec.load.clone(),
            limits,
            steps_left: limits.steps(),
            last_delivery: None,
            now: SimTime::ZERO,
            last_time: SimTime::ZERO,
            queue_seq: 0,
            queue: queue::TimeQueue::new(),
            now_queue: VecDeque::new(),
            next_arrival: None,
            stop_at: None,
            ties: None,
            trace_seq: 0,
            limit: None,
            slots: Vec::new(),
            free: Vec::new(),
            by_id: IdMap::default(),
            unindexed: 0,
            next_id: 1,
            running: 0,
            names: BTreeMap::new(),
            reached: BTreeMap::new(),
            profile_cache: BTreeMap::new(),
            last_profile: None,
            plans: BTreeMap::new(),
            last_plan: None,
            limit_message: Rc::from(messages::CONCURRENT_LIMIT),
            main_agent: None,
            prompts: BTreeMap::new(),
            prompt_queue: VecDeque::new(),
            person_busy: None,
            next_prompt: 1,
            arrivals: 0,
            retry_waiting: VecDeque::new(),
            load_arrival: None,
            arrival_rng: stream(seed, 0, purpose::ARRIVALS),
            load_rng: stream(seed, 0, purpose::LOAD_BEHAVIOR),
            retry_rng: stream(seed, 0, purpose::RETRY),
            user_rng: stream(seed, 0, purpose::USER),
            models: ModelSettings::from_session(session),
            // PANEL-1: only interactive sessions have a panel; load runs keep none either.
            panel: (spec.load.is_none() && subsim_rules::panel::session_has_panel(session.kind).0)
                .then(|| observe::PanelState {
                    panel: subsim_rules::panel::Panel::new(),
                    tick: None,
                    screen_reader: session.screen_reader,
                    changes: Vec::new(),
                }),
            session_hooks: session.hooks.clone(),
            trusted_dirs: session.trusted_dirs.clone(),
            auto_memory: session.auto_memory,
            fallback_models: session.fallback_models.clone(),
            continuation_budget: session.continuations,
            classifier: session.classifier,
            definitions: spec.definitions.clone(),
            session_mcp: session
                .mcp
                .keys()
                .map(|name| Rc::from(name.as_str()))
                .collect(),
            effort_env: session.env.get(env::EFFORT_LEVEL).cloned(),
            session_effort: session.effort.clone(),
            load_spawn_spec: Rc::new(
                spec.load
                    .as_ref()
                    .map(|load| load.spawn.clone())
                    .unwrap_or_default(),
            ),
            fork_arc: Rc::from("fork"),
            hooks_present: false,
        };
        kernel.hooks_present = !kernel.session_hooks.is_empty()
            || kernel
                .types
                .iter()
                .any(|type_def| !type_def.def.hooks.is_empty());
        // The main conversation is agent 0 in slot 0.
        let mut main_tools: ToolList = kernel.pool.iter().map(|t| Rc::from(t.as_str())).collect();
        let mut main_type: Rc<str> = Rc::from("main");
        if let Some(agent_name) = &session.agent {
            let key = main_agent_key.as_deref().unwrap_or(agent_name.as_str());
            match kernel.type_index.get(key).copied() {
                Some(index) => {
                    // MAIN-1 / TOOLS-19: main takes the definition's tool restrictions and
                    // model; no background filter applies to the main thread.
                    kernel.main_agent = Some(index);
                    let def = &kernel.types[index].def;
                    let placement = tools::Placement {
                        depth: 0,
                        depth_limit: kernel.config.depth_limit,
                        mode: Mode::Foreground,
                        fork: false,
                        teammate: false,
                        first_ran_foreground: true,
                        permission_mode: kernel.config.permission_mode,
                    };
                    let request = tools::ToolRequest {
                        fields: Fields {
                            tools: def.tools.as_deref(),
                            disallowed: &def.disallowed_tools,
                        },
                        main_thread: true,
                        ..tools::ToolRequest::new(&kernel.pool, placement, kernel.config.gates)
                    };
                    if let Ok(resolved) = tools::resolve_with(&request) {
                        let mut list: Vec<Rc<str>> = resolved
                            .tools
                            .iter()
                            .map(|t| Rc::from(t.as_str()))
                            .collect();
                        // MCP-2: the agent's inline `mcpServers` connect at startup for main
                        // too, alongside the session's servers.
                        for server in def.mcp_servers.iter().filter(|server| server.inline) {
                            for tool in &server.tools {
                                list.push(Rc::from(
                                    format!("mcp__{}__{tool}", server.name).as_str(),
                                ));
                            }
                        }
                        main_tools = list.into();
                    }
                    main_type = kernel.types[index].name.clone();
                }
                None => kernel.notes.push(ConfigNote {
                    rule: "MAIN-3",
                    text: format!(
                        "the session agent `{agent_name}` is not available; the session \
                         continues with default tools"
                    ),
                }),
            }
        }
        let main_profile = RunProfile {
            agent_type: main_type,
            model: main_model.clone(),
            model_rule: "MAIN-1",
            effort: None,
            permission_mode: kernel.config.permission_mode.as_str(),
            tools: main_tools,
            context: Rc::from(Vec::new()),
            mcp_servers: kernel.session_mcp.clone(),
            teammate: false,
        };
        let main = Agent {
            id: MAIN,
            type_index: None,
            invocation_model: None,
            report: None,
            continuations: 0,
            classifier: None,
            profile: Rc::new(main_profile),
            name: None,
            depth: 0,
            mode: Mode::Foreground,
            fork: false,
            teammate: false,
            profile_background: false,
            permission_mode: session_permission_mode(&spec),
            one_shot: false,
            max_turns: None,
            from_load: false,
            status: Status::Running,
            user_cancelled: false,
            program: spec.main.clone(),
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
            report_to: MAIN,
            resumed: false,
            turns: 0,
            rng: Some(Box::new(stream(seed, 0, purpose::BEHAVIOR))),
            finished_at: SimTime::ZERO,
        };
        kernel.slots.push(Some(main));
        kernel.by_id.insert(MAIN, 0);
        kernel
    }

    // -- the loop ----------------------------------------------------------------------

    fn run(&mut self) {
        let config = &self.config;
        let kind = EventKind::SessionStarted {
            version: Rc::from(config.gates.version.to_string().as_str()),
            session_kind: config.kind.as_str(),
            cap: config.cap,
            depth_limit: config.depth_limit,
            fork_mode: config.fork_mode,
            background_disabled: config.background_disabled,
            main_agent: self.main_agent.map(|index| self.types[index].name.clone()),
            permission_mode: config.permission_mode.as_str(),
        };
        self.emit(None, kind);
        self.announce_definitions();
        self.schedule(SimTime::ZERO, Wake::Step { slot: 0, gen: 0 });
        for index in 0..self.actions.len() {
            let at = self.actions[index].at;
            self.schedule(at, Wake::Action(index as u32));
        }
        if let Some(load) = &self.load {
            let first = match load.arrivals {
                Arrivals::Poisson(rate) => {
                    SimTime(Dist::Exp { mean: 1e6 / rate }.sample(&mut self.arrival_rng))
                }
                Arrivals::Every(_) | Arrivals::Burst(_) => SimTime::ZERO,
            };
            if self.load_continues(first) {
                self.schedule_arrival(first);
            }
        }
        while let Some((time, wake)) = if self.ties.is_some() {
            self.pop_chosen()
        } else {
            self.pop_next()
        } {
            if self.limit.is_some() || self.stop_at.is_some_and(|stop| time > stop) {
                break;
            }
            if time > self.limits.max_time {
                self.hit_limit("max_time", self.limits.max_time.as_micros());
                break;
            }
            debug_assert!(
                time >= self.now,
                "kernel invariant: virtual time never goes back"
            );
            self.now = time;
            self.dispatch(wake);
        }
    }

    fn report(&self) -> RunReport {
        RunReport {
            end: self.last_time,
            events: self.trace_seq,
            limit: self.limit.clone(),
            notes: self.notes.clone(),
        }
    }

    fn schedule(&mut self, at: SimTime, wake: Wake) {
        self.queue_seq += 1;
        if at == self.now {
            // Same instant: a FIFO is enough, since every seq given now is larger than any
            // seq already queued for this instant in the heap.
            self.now_queue.push_back((self.queue_seq, wake));
        } else {
            self.queue.push(at.0, self.queue_seq, wake);
        }
    }

    /// The load generator's next arrival, kept beside the heap: there is at most one.
    fn schedule_arrival(&mut self, at: SimTime) {
        self.queue_seq += 1;
        self.next_arrival = Some((at, self.queue_seq));
    }

    /// The next wake in (time, seq) order, from the heap, the same-instant FIFO and the
    /// pending arrival.
    fn pop_next(&mut self) -> Option<(SimTime, Wake)> {
        self.pop_with_seq().map(|(time, _, wake)| (time, wake))
    }

    /// Where the next wake in `(time, seq)` order is, and its key; the one place that
    /// merges the three sources (the plain loop and the tie explorer both read it).
    fn head(&self) -> Option<(SimTime, u64, Source)> {
        let mut best: Option<(SimTime, u64, Source)> = None;
        let mut consider = |time: SimTime, seq: u64, source: Source| {
            if best.is_none_or(|(t, q, _)| (time, seq) < (t, q)) {
                best = Some((time, seq, source));
            }
        };
        if let Some((time, seq)) = self.queue.peek() {
            consider(SimTime(time), seq, Source::Heap);
        }
        if let Some((seq, _)) = self.now_queue.front() {
            consider(self.now, *seq, Source::Now);
        }
        if let Some((time, seq)) = self.next_arrival {
            consider(time, seq, Source::Arrival);
        }
        best
    }

    /// Takes the next wake in `(time, seq)` order, with its key.
    fn pop_with_seq(&mut self) -> Option<(SimTime, u64, Wake)> {
        let (time, seq, source) = self.head()?;
        let wake = match source {
            Source::Heap => self.queue.pop()?.2,
            Source::Now => self.now_queue.pop_front()?.1,
            Source::Arrival => {
                self.next_arrival = None;
                Wake::Arrival
            }
        };
        Some((time, seq, wake))
    }

    fn emit(&mut self, rule: Option<RuleId>, kind: EventKind) {
        if self.limit.is_some() {
            return;
        }
        let event = Event {
            t: self.now,
            seq: self.trace_seq,
            rule,
            kind,
        };
        self.trace_seq += 1;
        self.last_time = self.now;
        self.sink.event(&event);
        if self.trace_seq >= self.limits.max_events {
            self.hit_limit("max_events", self.limits.max_events);
        }
    }

    /// `emit` for the per-arrival events: the kind is built here, from what the closure
    /// holds, so it is not copied from the caller's frame and its drop knows the variant.
    #[inline(always)]
    fn emit_with(&mut self, rule: Option<RuleId>, kind: impl FnOnce() -> EventKind) {
        if self.limit.is_some() {
            return;
        }
        let event = Event {
            t: self.now,
            seq: self.trace_seq,
            rule,
            kind: kind(),
        };
        self.emit_built(&event);
    }

    /// Hands a built event to the sink (see `emit_with`).
    #[inline(never)]
    fn emit_built(&mut self, event: &Event) {
        self.trace_seq += 1;
        self.last_time = self.now;
        self.sink.event(event);
        if self.trace_seq >= self.limits.max_events {
            self.hit_limit("max_events", self.limits.max_events);
        }
    }

    #[cold]
    #[inline(never)]
    fn hit_limit(&mut self, limit: &'static str, value: u64) {
        if self.limit.is_none() {
            if limit == "max_time" {
                // The run stops at the bound itself.
                self.now = self.limits.max_time;
            }
            // The limit event itself is the last one written; it is not counted.
            let event = Event {
                t: self.now,
                seq: self.trace_seq,
                rule: None,
                kind: EventKind::LimitReached { limit, value },
            };
            self.trace_seq += 1;
            self.sink.event(&event);
            self.limit = Some(LimitHit { limit, value });
        }
    }

    fn dispatch(&mut self, wake: Wake) {
        match wake {
            Wake::Step { slot, gen } => {
                let Some(agent) = self.slots.get_mut(slot as usize).and_then(Option::as_mut) else {
                    return;
                };
                if agent.gen != gen || agent.status != Status::Running {
                    return;
                }
                if agent.block == Block::Timer {
                    agent.block = Block::Ready;
                }
                self.advance(slot);
            }
            Wake::Arrival => self.arrival(),
            Wake::Retry(index) => {
                let spec = self.load_spawn_spec.clone();
                self.load_spawn(&spec, index, true);
            }
            Wake::Action(index) => self.user_action(index as usize),
            Wake::Answer(prompt) => self.answer(prompt),
            Wake::BashDone { agent, run } => self.bash_done(agent, run),
            Wake::PanelTick => self.panel_tick(),
        }
    }

    // -- agents ------------------------------------------------------------------------

    fn slot_of(&self, id: AgentId) -> Option<u32> {
        if id == MAIN {
            return Some(0);
        }
        if let Some(slot) = self.by_id.get(&id) {
            return Some(*slot);
        }
        // Anonymous load agents are not in the map (see `insert`); the few that are running
        // are found by a scan of the slab.
        if self.unindexed == 0 {
            return None;
        }
        self.slots
            .iter()
            .position(|slot| slot.as_ref().is_some_and(|agent| agent.id == id))
            .map(|slot| slot as u32)
    }

    fn agent(&self, slot: u32) -> &Agent {
        self.slots[slot as usize]
            .as_ref()
            .expect("slot holds an agent")
    }

    fn agent_mut(&mut self, slot: u32) -> &mut Agent {
        self.slots[slot as usize]
            .as_mut()
            .expect("slot holds an agent")
    }

    fn reference(&self, id: AgentId) -> AgentRef {
        match self.slot_of(id) {
            Some(slot) => self.agent(slot).reference(),
            None => AgentRef { id, name: None },
        }
    }

    fn is_running(&self, id: AgentId) -> bool {
        self.slot_of(id)
            .is_some_and(|slot| self.agent(slot).status == Status::Running)
    }

    /// Resolves a `to` / `stop` / `wait.for` value: an id (`a3`, `main`) or a name (the
    /// agent that holds it now).
    fn lookup(&self, text: &str) -> Option<AgentId> {
        if text == "main" {
            return Some(MAIN);
        }
        if let Some(id) = self.names.get(text) {
            return Some(*id);
        }
        let id = text.strip_prefix('a')?.parse::<AgentId>().ok()?;
        self.slot_of(id).map(|_| id)
    }

    fn wake_now(&mut self, slot: u32) {
        let agent = self.agent_mut(slot);
        agent.block = Block::Ready;
        agent.gen = agent.gen.wrapping_add(1);
        let gen = agent.gen;
        self.schedule(self.now, Wake::Step { slot, gen });
    }

    fn sample(&mut self, slot: u32, dist: &Dist) -> u64 {
        if let Dist::Const(value) = dist {
            return *value;
        }
        let seed = self.seed;
        let agent = self.slots[slot as usize]
            .as_mut()
            .expect("slot holds an agent");
        if agent.from_load {
            return dist.sample(&mut self.load_rng);
        }
        let id = u64::from(agent.id);
        let rng = agent
            .rng
            .get_or_insert_with(|| Box::new(stream(seed, id, purpose::BEHAVIOR)));
        dist.sample(rng.as_mut())
    }
}

fn session_permission_mode(spec: &SimSpec) -> PermissionMode {
    spec.session.permission_mode
}

/// Which of the kernel's three wake sources holds the next wake.
#[derive(Clone, Copy)]
enum Source {
    Heap,
    Now,
    Arrival,
}
