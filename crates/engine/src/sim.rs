//! The kernel: an explicit discrete-event queue and the agent runs it drives.
//!
//! Each run (the main conversation included) is a small state machine that interprets its
//! step program; it advances until it blocks (a timer, a permission prompt, foreground
//! children, a wait) and is woken by a queued wake. The queue is keyed by
//! `(time, seq)`, so same-instant wakes run in the order they were scheduled.
//!
//! This module decides *when*; every *whether* is asked of `subsim-rules`, and the rule it
//! names goes into the event.
//!
//! Memory grows with what is running, not with what ran: agent records live in a slab, and
//! records of load-generated agents are released when their run ends (they are anonymous
//! and cannot be addressed again).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use subsim_rules::cap::{self, Unchecked};
use subsim_rules::depth::{agent_tool, AgentTool};
use subsim_rules::model::{self, ModelInput};
use subsim_rules::notify::{self, Delivery, Finishing, Recipient};
use subsim_rules::placement::{self, Placement, PlacementInput};
use subsim_rules::prompt::{self, Asker, CallDecision, Route};
use subsim_rules::session::{env, ConfigNote};
use subsim_rules::tools::{self, Fields};
use subsim_rules::{messages, Mode, PermissionMode, RejectReason, RuleId, SessionConfig};

use crate::dist::Dist;
use crate::event::{AgentId, AgentRef, Event, EventKind, Outcome, ToolList, MAIN};
use crate::sink::Sink;
use crate::spec::{
    default_behavior, default_resume_behavior, ActionKind, AgentDef, Answer, ApiError, Arrivals,
    LoadSpec, LoadUntil, Program, Retry, Scope, SimSpec, SpawnSpec, Step, ToolCall, WaitTarget,
};
use crate::time::SimTime;

/// A safety limit that ended a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitHit {
    /// `max_events`, `max_time` or `max_agents`.
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
        RunReport {
            end: kernel.last_time,
            events: kernel.trace_seq,
            limit: kernel.limit.clone(),
            notes: kernel.notes.clone(),
        }
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
    /// A rejected load arrival tries again.
    Retry,
    /// The person's timed action `index`.
    Action(u32),
    /// The person finished thinking about prompt `id`.
    Answer(u64),
    /// A background shell command of `agent` finished.
    BashDone { agent: AgentId, run: u32 },
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
    /// The model when no per-invocation value is given.
    model: Rc<str>,
    /// RESUME-3: Explore and Plan return no agent id.
    one_shot: bool,
    behavior: Program,
}

struct Agent {
    id: AgentId,
    name: Option<Rc<str>>,
    depth: u32,
    mode: Mode,
    fork: bool,
    tools: ToolList,
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
    fn reference(&self) -> AgentRef {
        AgentRef {
            id: self.id,
            name: self.name.clone(),
        }
    }
}

/// A cached tool resolution: the list and whether `Agent` errors, or the unresolved entries.
type ToolResolution = Result<(ToolList, bool), Vec<String>>;

struct PendingPrompt {
    agent: AgentId,
    slot: u32,
    tool: Rc<str>,
    asked_at: SimTime,
    duration: Option<Dist>,
}

struct Kernel<'s> {
    sink: &'s mut dyn Sink,
    config: SessionConfig,
    notes: Vec<ConfigNote>,
    seed: u64,
    main_model: Rc<str>,
    pool: Vec<String>,
    permissions: subsim_rules::prompt::PermissionRules,
    session_grants: Vec<String>,
    types: Vec<TypeDef>,
    type_index: BTreeMap<String, usize>,
    user_answer: Answer,
    user_think: Dist,
    actions: Vec<crate::spec::UserAction>,
    load: Option<LoadSpec>,
    limits: crate::spec::Limits,
    // Time and queue.
    now: SimTime,
    last_time: SimTime,
    queue_seq: u64,
    queue: BinaryHeap<Reverse<(SimTime, u64, Wake)>>,
    /// Wakes scheduled for the current instant, in seq order. Together with `queue` they
    /// form one (time, seq)-ordered queue: `pop_next` takes the smaller head of the two.
    now_queue: VecDeque<(u64, Wake)>,
    /// The last agent type looked up by name, and its index.
    last_type: Option<(Rc<str>, usize)>,
    /// The load generator's pending arrival `(time, seq)`.
    next_arrival: Option<(SimTime, u64)>,
    trace_seq: u64,
    limit: Option<LimitHit>,
    // Agents.
    slots: Vec<Option<Agent>>,
    free: Vec<(u32, u32)>,
    by_id: IdMap,
    next_id: AgentId,
    running: u32,
    names: BTreeMap<Rc<str>, AgentId>,
    /// RESUME-12: the agent each name first reached in this conversation.
    reached: BTreeMap<Rc<str>, AgentId>,
    tool_cache: BTreeMap<(usize, u8, PermissionMode), ToolResolution>,
    // The person.
    prompts: BTreeMap<u64, PendingPrompt>,
    prompt_queue: VecDeque<u64>,
    person_busy: Option<u64>,
    next_prompt: u64,
    // Load.
    arrivals: u64,
    retry_waiting: u64,
    arrival_rng: ChaCha8Rng,
    load_rng: ChaCha8Rng,
    retry_rng: ChaCha8Rng,
    user_rng: ChaCha8Rng,
    general_purpose_arc: Rc<str>,
    /// The load block's Agent call, shared (it is issued once per arrival).
    load_spawn_spec: Rc<SpawnSpec>,
    fork_arc: Rc<str>,
}

const BUILT_INS: [&str; 6] = [
    "general-purpose",
    "Explore",
    "Plan",
    "claude",
    "statusline-setup",
    "claude-code-guide",
];

impl<'s> Kernel<'s> {
    fn new(spec: SimSpec, sink: &'s mut dyn Sink) -> Kernel<'s> {
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
        let mut pool = session
            .tools
            .clone()
            .unwrap_or_else(tools::default_main_tools);
        for (server, server_tools) in &session.mcp {
            for tool in server_tools {
                pool.push(format!("mcp__{server}__{tool}"));
            }
        }
        let env_model = session.env.get(env::SUBAGENT_MODEL).cloned();
        let mut types = Vec::new();
        let mut type_index = BTreeMap::new();
        let disable_explore_plan = config.disable_explore_plan;
        let disable_builtins = config.disable_builtins;
        let mut add = |def: AgentDef, types: &mut Vec<TypeDef>| {
            let name: Rc<str> = Rc::from(def.name.as_str());
            let built_in = def.scope == Scope::BuiltIn;
            let one_shot = built_in && (def.name == "Explore" || def.name == "Plan");
            let (model, _) = model::resolve(ModelInput {
                invocation: None,
                definition: def.model.as_deref(),
                env: env_model.as_deref(),
                main: &session.model,
                fork: false,
                env_last: config.gates.model_order_env_last,
            });
            let behavior = def.behavior.clone().unwrap_or_else(default_behavior);
            type_index.insert(def.name.clone(), types.len());
            types.push(TypeDef {
                name,
                model: Rc::from(model),
                one_shot,
                behavior,
                def,
            });
        };
        // SPAWN-8: built-ins, less the ones the env removes.
        for built_in in BUILT_INS {
            if disable_builtins
                || (disable_explore_plan && (built_in == "Explore" || built_in == "Plan"))
            {
                continue;
            }
            if spec.agents.contains_key(built_in) {
                continue; // SPAWN-10: a definition of the same name overrides the built-in.
            }
            let mut def = AgentDef {
                name: built_in.to_string(),
                description: format!("built-in {built_in}"),
                scope: Scope::BuiltIn,
                ..AgentDef::default()
            };
            match built_in {
                // SPAWN-9: Explore and Plan are read-only.
                "Explore" | "Plan" => def.disallowed_tools = vec!["Write".into(), "Edit".into()],
                "statusline-setup" => def.model = Some("sonnet".into()),
                "claude-code-guide" => def.model = Some("haiku".into()),
                _ => {}
            }
            add(def, &mut types);
        }
        for (name, def) in &spec.agents {
            let mut def = def.clone();
            if def.name.is_empty() {
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
            main_model: main_model.clone(),
            pool,
            permissions: session.permissions.clone(),
            session_grants: Vec::new(),
            types,
            type_index,
            user_answer: spec.user.answer,
            user_think: spec.user.think,
            actions: spec.user.actions.clone(),
            load: spec.load.clone(),
            limits,
            now: SimTime::ZERO,
            last_time: SimTime::ZERO,
            queue_seq: 0,
            queue: BinaryHeap::new(),
            now_queue: VecDeque::new(),
            next_arrival: None,
            last_type: None,
            trace_seq: 0,
            limit: None,
            slots: Vec::new(),
            free: Vec::new(),
            by_id: IdMap::default(),
            next_id: 1,
            running: 0,
            names: BTreeMap::new(),
            reached: BTreeMap::new(),
            tool_cache: BTreeMap::new(),
            prompts: BTreeMap::new(),
            prompt_queue: VecDeque::new(),
            person_busy: None,
            next_prompt: 1,
            arrivals: 0,
            retry_waiting: 0,
            arrival_rng: stream(seed, 0, purpose::ARRIVALS),
            load_rng: stream(seed, 0, purpose::LOAD_BEHAVIOR),
            retry_rng: stream(seed, 0, purpose::RETRY),
            user_rng: stream(seed, 0, purpose::USER),
            general_purpose_arc: Rc::from("general-purpose"),
            load_spawn_spec: Rc::new(
                spec.load
                    .as_ref()
                    .map(|load| load.spawn.clone())
                    .unwrap_or_default(),
            ),
            fork_arc: Rc::from("fork"),
        };
        // The main conversation is agent 0 in slot 0.
        let main_tools: ToolList = kernel.pool.iter().map(|t| Rc::from(t.as_str())).collect();
        let main = Agent {
            id: MAIN,
            name: None,
            depth: 0,
            mode: Mode::Foreground,
            fork: false,
            tools: main_tools,
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
        };
        self.emit(None, kind);
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
        while let Some((time, wake)) = self.pop_next() {
            if self.limit.is_some() {
                break;
            }
            if time > self.limits.max_time {
                self.hit_limit("max_time", self.limits.max_time.as_micros());
                break;
            }
            self.now = time;
            self.dispatch(wake);
        }
    }

    fn schedule(&mut self, at: SimTime, wake: Wake) {
        self.queue_seq += 1;
        if at == self.now {
            // Same instant: a FIFO is enough, since every seq given now is larger than any
            // seq already queued for this instant in the heap.
            self.now_queue.push_back((self.queue_seq, wake));
        } else {
            self.queue.push(Reverse((at, self.queue_seq, wake)));
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
        #[derive(Clone, Copy)]
        enum Source {
            Heap,
            Now,
            Arrival,
        }
        let mut best: Option<(SimTime, u64, Source)> = None;
        let mut consider = |time: SimTime, seq: u64, source: Source| {
            if best.is_none_or(|(t, q, _)| (time, seq) < (t, q)) {
                best = Some((time, seq, source));
            }
        };
        if let Some(Reverse((time, seq, _))) = self.queue.peek() {
            consider(*time, *seq, Source::Heap);
        }
        if let Some((seq, _)) = self.now_queue.front() {
            consider(self.now, *seq, Source::Now);
        }
        if let Some((time, seq)) = self.next_arrival {
            consider(time, seq, Source::Arrival);
        }
        match best?.2 {
            Source::Heap => self
                .queue
                .pop()
                .map(|Reverse((time, _, wake))| (time, wake)),
            Source::Now => self.now_queue.pop_front().map(|(_, wake)| (self.now, wake)),
            Source::Arrival => self
                .next_arrival
                .take()
                .map(|(time, _)| (time, Wake::Arrival)),
        }
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
            Wake::Retry => {
                let spec = self.load_spawn_spec.clone();
                self.load_spawn(&spec, None);
            }
            Wake::Action(index) => self.user_action(index as usize),
            Wake::Answer(prompt) => self.answer(prompt),
            Wake::BashDone { agent, run } => self.bash_done(agent, run),
        }
    }

    // -- agents ------------------------------------------------------------------------

    fn slot_of(&self, id: AgentId) -> Option<u32> {
        if id == MAIN {
            return Some(0);
        }
        self.by_id.get(&id).copied()
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

    // -- the step interpreter ----------------------------------------------------------

    fn next_step(agent: &mut Agent) -> Option<(Program, usize)> {
        while let Some(frame) = agent.stack.last_mut() {
            if frame.pc < frame.program.len() {
                let pc = frame.pc;
                frame.pc += 1;
                return Some((frame.program.clone(), pc));
            }
            if frame.remaining > 1 {
                frame.remaining -= 1;
                frame.pc = 0;
                continue;
            }
            agent.stack.pop();
        }
        if agent.pc < agent.program.len() {
            let pc = agent.pc;
            agent.pc += 1;
            return Some((agent.program.clone(), pc));
        }
        None
    }

    fn advance(&mut self, slot: u32) {
        loop {
            if self.limit.is_some() {
                return;
            }
            let agent = self.agent_mut(slot);
            if agent.status != Status::Running || agent.block != Block::Ready {
                return;
            }
            let Some((program, pc)) = Self::next_step(agent) else {
                self.end_of_steps(slot);
                return;
            };
            match &program[pc] {
                Step::Work(dist) => {
                    let agent = self.agent_mut(slot);
                    agent.turns += 1;
                    if let Some(max_turns) = agent.max_turns {
                        if agent.turns > max_turns {
                            // RESUME-4: partial from v2.1.246; before, an ordinary result.
                            let partial = self.config.gates.max_turns_partial;
                            let outcome = if partial {
                                Outcome::Partial
                            } else {
                                Outcome::Completed
                            };
                            self.finish(
                                slot,
                                outcome,
                                Some("RESUME-4"),
                                Some(format!("stopped at maxTurns ({max_turns})")),
                            );
                            return;
                        }
                    }
                    let micros = self.sample(slot, dist);
                    self.sleep(slot, micros);
                    return;
                }
                Step::Sleep(dist) => {
                    let micros = self.sample(slot, dist);
                    self.sleep(slot, micros);
                    return;
                }
                Step::Tool(call) => {
                    if self.tool_call(slot, call) {
                        return;
                    }
                }
                Step::Spawn(spec) => {
                    if self.spawn_step(slot, spec) {
                        return;
                    }
                }
                Step::Send(send) => {
                    let caller = self.agent(slot).id;
                    self.send(caller, &send.to, send.behavior.clone());
                }
                Step::Stop(target) => {
                    let caller = self.agent(slot).id;
                    self.task_stop(caller, target);
                }
                Step::WaitFor(target) => {
                    if self.wait_for(slot, target) {
                        return;
                    }
                }
                Step::BashBackground(dist) => {
                    let micros = self.sample(slot, dist);
                    let agent = self.agent_mut(slot);
                    agent.bash_running += 1;
                    let (id, run) = (agent.id, agent.run);
                    let at = self.now.plus(micros);
                    self.schedule(at, Wake::BashDone { agent: id, run });
                }
                Step::Report(_) => {}
                Step::Fail(_) if slot == 0 => {
                    // The scenario crate rejects `fail` in `main`; a spec built in code gets
                    // a visible no-op rather than a silent stall.
                    let why = "the main conversation's API errors are not simulated; use fail in a subagent's behavior";
                    self.emit(
                        None,
                        EventKind::ActionIgnored {
                            action: "fail",
                            why: Rc::from(why),
                        },
                    );
                }
                Step::Fail(fail) => {
                    self.fail(slot, fail.api_error, fail.after_output);
                    return;
                }
                Step::AskProgress(target) => self.ask_progress(slot, target),
                Step::Repeat { times, steps } => {
                    if *times > 0 && !steps.is_empty() {
                        let frame = Frame {
                            program: steps.clone(),
                            pc: 0,
                            remaining: *times,
                        };
                        self.agent_mut(slot).stack.push(frame);
                    }
                }
            }
        }
    }

    fn sleep(&mut self, slot: u32, micros: u64) {
        let agent = self.agent_mut(slot);
        agent.block = Block::Timer;
        let gen = agent.gen;
        let at = self.now.plus(micros);
        self.schedule(at, Wake::Step { slot, gen });
    }

    /// The steps are done: wait for shells and children where the rules say so, else end.
    fn end_of_steps(&mut self, slot: u32) {
        let agent = self.agent(slot);
        if agent.id == MAIN {
            self.agent_mut(slot).block = Block::Idle;
            return;
        }
        let reference = agent.reference();
        if agent.bash_running > 0 {
            // NOTIFY-5 / Q-5: the shell reports to this run, which stays alive for it.
            let count = agent.bash_running;
            self.agent_mut(slot).block = Block::EndBash;
            self.emit(
                Some("NOTIFY-5"),
                EventKind::AgentWaiting {
                    agent: reference,
                    waiting_for: "bash",
                    count,
                },
            );
            return;
        }
        let (waits, rule) = notify::launcher_waits(self.config.kind);
        if agent.children_running > 0 && waits {
            // NOTIFY-6 / Q-4: an interactive launcher waits for its children, keeping its slot.
            let count = agent.children_running;
            self.agent_mut(slot).block = Block::EndChildren;
            self.emit(
                Some(rule),
                EventKind::AgentWaiting {
                    agent: reference,
                    waiting_for: "children",
                    count,
                },
            );
            return;
        }
        self.finish(slot, Outcome::Completed, None, None);
    }

    /// A `tool` step. Returns true if the run blocked.
    fn tool_call(&mut self, slot: u32, call: &ToolCall) -> bool {
        let agent = self.agent(slot);
        let reference = agent.reference();
        let tool: Rc<str> = Rc::from(call.name.as_str());
        if !agent.tools.iter().any(|t| **t == *call.name) {
            // TOOLS-4: a tool the run was not given cannot be called.
            let rule = if call.name == "Agent" && agent.depth > 0 {
                "DEPTH-3"
            } else {
                "TOOLS-4"
            };
            self.emit(
                Some(rule),
                EventKind::ToolCalled {
                    agent: reference,
                    tool,
                    allowed: false,
                    reason: Some("not_in_tools"),
                },
            );
            return false;
        }
        let decision = match call.prompt {
            Some(true) => CallDecision::Prompt("PERM-3"),
            Some(false) => CallDecision::Run("PERM-9"),
            None => prompt::decide(
                &call.name,
                call.input.as_deref(),
                agent.permission_mode,
                &self.permissions,
                &self.session_grants,
            ),
        };
        match decision {
            CallDecision::Run(rule) => {
                self.emit(
                    Some(rule),
                    EventKind::ToolCalled {
                        agent: reference,
                        tool,
                        allowed: true,
                        reason: None,
                    },
                );
                self.tool_runs(slot, call.duration)
            }
            CallDecision::Deny(rule) => {
                self.emit(
                    Some(rule),
                    EventKind::ToolCalled {
                        agent: reference,
                        tool,
                        allowed: false,
                        reason: Some("denied"),
                    },
                );
                false
            }
            CallDecision::Prompt(_) => {
                let asker = Asker {
                    depth: agent.depth,
                    mode: agent.mode,
                    fork: agent.fork,
                    chain_foreground: self.chain_foreground(slot),
                };
                let route = prompt::route(asker, &self.config.gates);
                let number = self.next_prompt;
                self.next_prompt += 1;
                match route {
                    Route::AutoDeny(rule) => {
                        self.emit(
                            Some(rule),
                            EventKind::PermissionRequested {
                                agent: reference.clone(),
                                tool: tool.clone(),
                                routed_to: None,
                                auto_denied: true,
                                prompt: number,
                            },
                        );
                        self.emit(
                            Some(rule),
                            EventKind::ToolCalled {
                                agent: reference,
                                tool,
                                allowed: false,
                                reason: Some("auto_denied"),
                            },
                        );
                        false
                    }
                    Route::Terminal(rule) | Route::Main(rule) => {
                        self.emit(
                            Some(rule),
                            EventKind::PermissionRequested {
                                agent: reference.clone(),
                                tool: tool.clone(),
                                routed_to: route.routed_to(),
                                auto_denied: false,
                                prompt: number,
                            },
                        );
                        let pending = PendingPrompt {
                            agent: reference.id,
                            slot,
                            tool,
                            asked_at: self.now,
                            duration: call.duration,
                        };
                        self.prompts.insert(number, pending);
                        self.prompt_queue.push_back(number);
                        let agent = self.agent_mut(slot);
                        agent.block = Block::Prompt(number);
                        self.person_next();
                        true
                    }
                }
            }
        }
    }

    /// An allowed tool call runs for its duration, if it has one. Returns true if blocked.
    fn tool_runs(&mut self, slot: u32, duration: Option<Dist>) -> bool {
        match duration {
            Some(dist) => {
                let micros = self.sample(slot, &dist);
                self.sleep(slot, micros);
                true
            }
            None => false,
        }
    }

    /// is every run from this one up to main in the foreground?
    fn chain_foreground(&self, slot: u32) -> bool {
        let mut current = self.agent(slot);
        loop {
            if current.id == MAIN {
                return true;
            }
            if current.mode != Mode::Foreground || !current.awaited {
                return false;
            }
            match self.slot_of(current.report_to) {
                Some(parent) => current = self.agent(parent),
                None => return false,
            }
        }
    }

    // -- the person and prompts --------------------------------------------------------

    /// The person answers one prompt at a time, in order, after thinking.
    fn person_next(&mut self) {
        if self.person_busy.is_some() {
            return;
        }
        while let Some(number) = self.prompt_queue.pop_front() {
            if self.prompts.contains_key(&number) {
                let think = self.user_think.sample(&mut self.user_rng);
                self.person_busy = Some(number);
                let at = self.now.plus(think);
                self.schedule(at, Wake::Answer(number));
                return;
            }
        }
    }

    fn answer(&mut self, number: u64) {
        if self.person_busy == Some(number) {
            self.person_busy = None;
        }
        let Some(pending) = self.prompts.remove(&number) else {
            self.person_next();
            return;
        };
        let answer = self.user_answer;
        let reference = self.agent(pending.slot).reference();
        let waited = self.now.as_micros() - pending.asked_at.as_micros();
        let rule = match answer {
            Answer::ApproveSession => "PERM-6",
            Answer::Deny => "PERM-4",
            Answer::Approve => "PERM-3",
        };
        self.emit(
            Some(rule),
            EventKind::PermissionAnswered {
                agent: reference.clone(),
                tool: pending.tool.clone(),
                answer,
                waited_us: waited,
                prompt: number,
            },
        );
        if answer == Answer::ApproveSession
            && !self.session_grants.iter().any(|t| **t == *pending.tool)
        {
            // PERM-6: the grant applies session-wide, main included.
            self.session_grants.push(pending.tool.to_string());
        }
        let allowed = answer != Answer::Deny;
        let reason = if allowed { None } else { Some("denied") };
        self.emit(
            Some(if allowed { "PERM-3" } else { "PERM-4" }),
            EventKind::ToolCalled {
                agent: reference,
                tool: pending.tool,
                allowed,
                reason,
            },
        );
        let _ = pending.agent;
        let agent = self.agent_mut(pending.slot);
        agent.block = Block::Ready;
        // PERM-4: Esc denies the call only; the run goes on.
        let blocked = allowed && self.tool_runs(pending.slot, pending.duration);
        if !blocked {
            self.wake_now(pending.slot);
        }
        self.person_next();
    }

    // -- spawning ----------------------------------------------------------------------

    /// A `spawn` step: `count` Agent calls issued together. Returns true if the caller
    /// blocked on foreground children.
    fn spawn_step(&mut self, slot: u32, spec: &SpawnSpec) -> bool {
        let caller = self.agent(slot).id;
        let mut foreground = 0;
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
    fn spawn(
        &mut self,
        caller: AgentId,
        spec: &SpawnSpec,
        name: Option<String>,
        from_load: bool,
    ) -> Result<(u32, Mode), Option<RejectReason>> {
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
        // SPAWN-7: deny rules on Agent and Agent(type).
        let denied = |kernel: &Kernel<'_>, type_name: &str| {
            !kernel.permissions.deny.is_empty()
                && kernel.permissions.deny.iter().any(|rule| {
                    let (tool, specifier) = prompt::split_rule(rule.trim());
                    (tool == "Agent" || tool == "Task")
                        && specifier
                            .is_none_or(|types| types.split(',').any(|t| t.trim() == type_name))
                })
        };
        let type_index;
        if spec.fork {
            // FORK-7, Q-29, FORK-3/4.
            if caller_is_fork {
                return reject(
                    self,
                    RejectReason::ForkInFork,
                    "FORK-7",
                    messages::FORK_IN_FORK.into(),
                );
            }
            if caller != MAIN {
                return reject(
                    self,
                    RejectReason::ForkFromSubagent,
                    "Q-29",
                    messages::FORK_FROM_SUBAGENT.into(),
                );
            }
            if !self.config.fork_mode {
                return reject(
                    self,
                    RejectReason::ForkUnavailable,
                    "FORK-3",
                    messages::FORK_UNAVAILABLE.into(),
                );
            }
            if denied(self, "fork") {
                return reject(
                    self,
                    RejectReason::Denied,
                    "FORK-4",
                    messages::DENIED.into(),
                );
            }
            type_index = None;
        } else {
            if let Some(type_name) = &spec.agent {
                if denied(self, type_name) {
                    return reject(
                        self,
                        RejectReason::Denied,
                        "SPAWN-7",
                        format!("{} ({type_name})", messages::DENIED),
                    );
                }
                match named_type {
                    Some(index) => type_index = Some(index),
                    None => {
                        return reject(
                            self,
                            RejectReason::UnknownType,
                            "SPAWN-3",
                            format!("Agent type '{type_name}' not found"),
                        );
                    }
                }
            } else {
                // SPAWN-3/4: no type → general-purpose, if the session still has it.
                match self.type_index.get("general-purpose") {
                    Some(index) if !denied(self, "general-purpose") => type_index = Some(*index),
                    _ => {
                        return reject(
                            self,
                            RejectReason::TypeRequired,
                            "SPAWN-4",
                            messages::TYPE_REQUIRED.into(),
                        )
                    }
                }
            }
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
                .tools
                .iter()
                .any(|t| &**t == "Agent")
        {
            return reject(
                self,
                RejectReason::NoAgentTool,
                "DEPTH-5",
                messages::NO_AGENT_TOOL.into(),
            );
        }
        // FGBG-1: where it would run.
        let definition_background = type_index.is_some_and(|i| self.types[i].def.background);
        let placement = placement::place(
            PlacementInput {
                by_teammate: false,
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
                self.agent(0).tools.clone(),
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
        // CAP-1/3/4, CAP-5: only Agent-tool spawns are checked; CAP-10: forks too.
        let admission = cap::admit(self.running, &self.config);
        if !admission.admitted {
            // The message is the documented text exactly; the count is the event's `running`
            // and the cap is `session_started.cap`. CAP-2: nothing re-issues the call.
            let rule = if spec.fork { "CAP-10" } else { admission.rule };
            let message = messages::CONCURRENT_LIMIT.to_string();
            return reject(self, RejectReason::ConcurrentLimit, rule, message);
        }
        if self.next_id as u64 > self.limits.max_agents {
            self.hit_limit("max_agents", self.limits.max_agents);
            return Err(None);
        }
        // Started.
        let model = match (&spec.model, type_index) {
            _ if spec.fork => self.main_model.clone(),
            (Some(invocation), index) => {
                let definition = index.and_then(|i| self.types[i].def.model.clone());
                let env_model = None::<&str>;
                let _ = env_model;
                let (chosen, _) = model::resolve(ModelInput {
                    invocation: Some(invocation),
                    definition: definition.as_deref(),
                    env: None,
                    main: &self.main_model,
                    fork: false,
                    env_last: self.config.gates.model_order_env_last,
                });
                Rc::from(chosen)
            }
            (None, Some(index)) => self.types[index].model.clone(),
            (None, None) => self.main_model.clone(),
        };
        let (agent_type, behavior, one_shot, max_turns) = match type_index {
            Some(index) => {
                let type_def = &self.types[index];
                (
                    type_def.name.clone(),
                    type_def.behavior.clone(),
                    type_def.one_shot,
                    type_def.def.max_turns,
                )
            }
            None => (self.fork_arc.clone(), default_behavior(), false, None),
        };
        let behavior = spec.behavior.clone().unwrap_or(behavior);
        let id = self.next_id;
        self.next_id += 1;
        self.running += 1;
        let child = Agent {
            id,
            name: name.clone(),
            depth,
            mode,
            fork: spec.fork,
            tools: tool_list.clone(),
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
            gen: 0,
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
        };
        let slot = self.insert(child);
        let gen = self.agent(slot).gen;
        self.agent_mut(caller_slot).children_running += 1;
        if let Some(name) = &name {
            self.names.insert(name.clone(), id);
            // RESUME-12: the conversation knows which agent this name reached first.
            self.reached.entry(name.clone()).or_insert(id);
        }
        let running = self.running;
        self.emit(
            Some(placement_rule),
            EventKind::AgentStarted {
                agent: AgentRef { id, name },
                agent_type,
                parent: caller_ref,
                depth,
                mode,
                fork: spec.fork,
                model,
                tools: tool_list,
                running,
                cap_checked: true,
            },
        );
        self.schedule(self.now, Wake::Step { slot, gen });
        Ok((slot, mode))
    }

    /// The index of a named agent type. Load runs ask for the same type a million times,
    /// so the last answer is kept.
    fn find_type(&mut self, name: &str) -> Option<usize> {
        if let Some((last, index)) = &self.last_type {
            if **last == *name {
                return Some(*index);
            }
        }
        let index = *self.type_index.get(name)?;
        self.last_type = Some((self.types[index].name.clone(), index));
        Some(index)
    }

    fn insert(&mut self, mut agent: Agent) -> u32 {
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
        self.by_id.insert(id, slot);
        slot
    }

    /// PERM-10/11/12: a subagent's effective permission mode.
    fn effective_permission_mode(&self, type_index: Option<usize>) -> PermissionMode {
        let main = self.config.permission_mode;
        let declared = type_index.and_then(|i| {
            let def = &self.types[i].def;
            // DEF-6: plugin definitions' permissionMode is ignored.
            if def.scope == Scope::Plugin {
                None
            } else {
                def.permission_mode
            }
        });
        match main {
            // PERM-11: these main modes override the definition.
            PermissionMode::BypassPermissions
            | PermissionMode::AcceptEdits
            | PermissionMode::Auto => main,
            _ => match declared {
                None => main,
                // PERM-12: declaring bypassPermissions keeps the main mode from v2.1.267.
                Some(PermissionMode::BypassPermissions)
                    if self.config.gates.bypass_keeps_main_mode =>
                {
                    main
                }
                Some(mode) => mode,
            },
        }
    }

    /// TOOLS-1…16 for a non-fork child, cached per (type, placement, mode).
    fn child_tools(
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
        let result =
            match tools::resolve(&self.pool, fields, placement, &self.config.gates, handback) {
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

    // -- finishing and delivering -----------------------------------------------------

    fn finish(
        &mut self,
        slot: u32,
        outcome: Outcome,
        rule: Option<RuleId>,
        detail: Option<String>,
    ) {
        let agent = self.agent(slot);
        if agent.status != Status::Running || agent.id == MAIN {
            return;
        }
        if let Block::Prompt(number) = agent.block {
            let reference = agent.reference();
            // a pending prompt is withdrawn when its run ends.
            if let Some(pending) = self.prompts.remove(&number) {
                self.emit(
                    Some("Q-38"),
                    EventKind::PermissionWithdrawn {
                        agent: reference,
                        tool: pending.tool,
                        prompt: number,
                    },
                );
                if self.person_busy == Some(number) {
                    self.person_busy = None;
                    self.person_next();
                }
            }
        }
        let now = self.now;
        let agent = self.agent_mut(slot);
        agent.status = Status::Finished(outcome);
        agent.block = Block::Ready;
        agent.gen = agent.gen.wrapping_add(1);
        agent.stack.clear();
        agent.pc = agent.program.len();
        // A run that ends is no longer blocked on anything it launched, and its shells no
        // longer report to it.
        agent.foreground_pending = 0;
        agent.bash_running = 0;
        agent.finished_at = now;
        let reference = agent.reference();
        let (mode, fork, report_to, awaited, resumed, waiters, from_load) = (
            agent.mode,
            agent.fork,
            agent.report_to,
            agent.awaited,
            agent.resumed,
            std::mem::take(&mut agent.waiters),
            agent.from_load,
        );
        self.running -= 1;
        let running = self.running;
        self.emit(
            rule,
            EventKind::AgentFinished {
                agent: reference.clone(),
                outcome,
                running,
                detail: detail.map(|d| Rc::from(d.as_str())),
            },
        );
        // NOTIFY-1…10: one result, to one recipient.
        let caller_slot = self.slot_of(report_to);
        let caller_running = caller_slot.is_some_and(|s| self.agent(s).status == Status::Running);
        let (recipient, delivery, notify_rule) = notify::completion(Finishing {
            mode: if awaited { mode } else { Mode::Background },
            fork,
            caller_is_main: report_to == MAIN,
            caller_running,
            resumed,
        });
        let what = match (delivery, outcome) {
            (Delivery::ToolResult, _) => "result",
            (_, Outcome::Completed | Outcome::Partial) => "completion",
            (_, Outcome::Failed) => "failed",
            (_, Outcome::Stopped | Outcome::Cancelled) => "stopped",
        };
        let to_id = match recipient {
            Recipient::Caller => report_to,
            Recipient::Main => MAIN,
        };
        let to = self.reference(to_id);
        let rule = if outcome == Outcome::Failed && delivery == Delivery::Notification {
            "NOTIFY-12"
        } else {
            notify_rule
        };
        self.emit(
            Some(rule),
            EventKind::Notification {
                to,
                from: reference,
                what,
            },
        );
        // The caller's bookkeeping. Its count of running children stays exact even while
        // the caller is not running (a stopped launcher may be resumed later).
        if let Some(caller_slot) = caller_slot {
            let caller = self.agent_mut(caller_slot);
            caller.children_running = caller.children_running.saturating_sub(1);
        }
        if let Some(caller_slot) = caller_slot.filter(|_| caller_running) {
            let caller = self.agent_mut(caller_slot);
            if delivery == Delivery::ToolResult {
                caller.foreground_pending = caller.foreground_pending.saturating_sub(1);
                if caller.foreground_pending == 0 && caller.block == Block::Foreground {
                    self.wake_now(caller_slot);
                }
            }
        }
        if delivery == Delivery::Notification {
            if let Some(recipient_slot) = self.slot_of(to_id) {
                self.deliver_to(recipient_slot);
            }
        }
        if let Some(caller_slot) = caller_slot.filter(|_| caller_running) {
            self.after_child_finished(caller_slot);
        }
        for waiter in waiters {
            if let Some(waiter_slot) = self.slot_of(waiter) {
                if self.agent(waiter_slot).block == Block::Agent {
                    self.wake_now(waiter_slot);
                }
            }
        }
        // CAP-3: a freed slot lets one waiting load retry go.
        if self.retry_waiting > 0 {
            self.retry_waiting -= 1;
            self.schedule(self.now, Wake::Retry);
        }
        if from_load && self.agent(slot).name.is_none() {
            self.release(slot);
        }
    }

    /// A notification reached the agent in `slot`: wake a notification wait, or keep it.
    fn deliver_to(&mut self, slot: u32) {
        let agent = self.agent_mut(slot);
        if agent.status != Status::Running {
            return;
        }
        if agent.block == Block::Notification {
            self.wake_now(slot);
        } else {
            agent.inbox += 1;
        }
    }

    /// A child of the agent in `slot` ended: end a children wait if it was the last.
    fn after_child_finished(&mut self, slot: u32) {
        let agent = self.agent(slot);
        if agent.children_running > 0 {
            return;
        }
        match agent.block {
            Block::Children => self.wake_now(slot),
            Block::EndChildren => self.finish(slot, Outcome::Completed, Some("NOTIFY-6"), None),
            _ => {}
        }
    }

    fn release(&mut self, slot: u32) {
        if let Some(agent) = self.slots[slot as usize].take() {
            self.by_id.remove(&agent.id);
            self.free.push((slot, agent.gen.wrapping_add(1)));
        }
    }

    fn bash_done(&mut self, id: AgentId, run: u32) {
        let Some(slot) = self.slot_of(id) else { return };
        let agent = self.agent_mut(slot);
        // A shell of an earlier run (the run ended, or was stopped and resumed) reports to
        // nobody: its run no longer waits for it.
        if agent.status != Status::Running || agent.run != run {
            return;
        }
        agent.bash_running -= 1;
        let reference = agent.reference();
        // NOTIFY-5: the shell's end is reported to the subagent itself.
        self.emit(
            Some("NOTIFY-5"),
            EventKind::Notification {
                to: reference.clone(),
                from: reference,
                what: "bash_done",
            },
        );
        let agent = self.agent(slot);
        if agent.block == Block::EndBash && agent.bash_running == 0 {
            self.agent_mut(slot).block = Block::Ready;
            self.end_of_steps(slot);
        } else {
            self.deliver_to(slot);
        }
    }

    fn fail(&mut self, slot: u32, error: ApiError, after_output: bool) {
        let agent = self.agent(slot);
        if agent.id == MAIN {
            return;
        }
        if agent.mode == Mode::Foreground && agent.awaited {
            if after_output {
                // ERR-3: partial output with a note.
                let detail = format!("{} error: the subagent was cut off and did not complete its task; partial output returned", error.as_str());
                self.finish(slot, Outcome::Partial, Some("ERR-3"), Some(detail));
            } else {
                let detail = format!("{}: {}", messages::API_ERROR_TERMINATED, error.as_str());
                self.finish(slot, Outcome::Failed, Some("ERR-3"), Some(detail));
            }
        } else {
            // ERR-4: marked failed; the notification names the error and carries the last output.
            let detail = format!("{} error; last output included", error.as_str());
            self.finish(slot, Outcome::Failed, Some("ERR-4"), Some(detail));
        }
    }

    // -- waits, messages, stops --------------------------------------------------------

    /// Returns true if the run blocked.
    fn wait_for(&mut self, slot: u32, target: &WaitTarget) -> bool {
        match target {
            WaitTarget::Agent(text) => {
                let Some(id) = self.lookup(text) else {
                    return false;
                };
                if !self.is_running(id) || id == self.agent(slot).id {
                    return false;
                }
                let waiter = self.agent(slot).id;
                if let Some(target_slot) = self.slot_of(id) {
                    self.agent_mut(target_slot).waiters.push(waiter);
                }
                self.agent_mut(slot).block = Block::Agent;
                true
            }
            WaitTarget::Children => {
                if self.agent(slot).children_running == 0 {
                    return false;
                }
                self.agent_mut(slot).block = Block::Children;
                true
            }
            WaitTarget::Notification => {
                let agent = self.agent_mut(slot);
                if agent.inbox > 0 {
                    agent.inbox -= 1;
                    return false;
                }
                agent.block = Block::Notification;
                true
            }
        }
    }

    /// SendMessage from `caller` (RESUME-5…13).
    fn send(&mut self, caller: AgentId, to: &str, behavior: Option<Program>) {
        let by = self.reference(caller);
        let to_arc: Rc<str> = Rc::from(to);
        let reject =
            |kernel: &mut Kernel<'_>, reason: &'static str, rule: RuleId, message: String| {
                kernel.emit(
                    Some(rule),
                    EventKind::MessageRejected {
                        to: to_arc.clone(),
                        by: by.clone(),
                        reason,
                        message: Rc::from(message.as_str()),
                    },
                );
            };
        let Some(id) = self.lookup(to) else {
            return reject(
                self,
                "unknown_agent",
                "RESUME-5",
                format!("{}: {to}", messages::UNKNOWN_AGENT),
            );
        };
        // RESUME-12: a name must still reach the agent it reached before.
        if self.config.gates.name_reuse_check {
            if let Some(first) = self.reached.get(to) {
                if *first != id {
                    let now_reaches = self.reference(id).id_string();
                    let earlier = crate::event::id_string(*first);
                    return reject(self, "name_reused", "RESUME-12", format!("The name '{to}' now reaches {now_reaches}, not {earlier}; address {earlier} by its agent ID"));
                }
            }
        }
        if self.names.contains_key(to) {
            self.reached.entry(to_arc.clone()).or_insert(id);
        }
        let target = self.reference(id);
        if id == MAIN || self.is_running(id) {
            // RESUME-17 / Q-8: a message to a running agent is direction, not a new run.
            self.emit(
                Some(if id == MAIN { "NOTIFY-9" } else { "Q-8" }),
                EventKind::MessageDelivered {
                    to: target,
                    from: by.clone(),
                },
            );
            return;
        }
        let Some(slot) = self.slot_of(id) else {
            return reject(
                self,
                "unknown_agent",
                "RESUME-5",
                format!("{}: {to}", messages::UNKNOWN_AGENT),
            );
        };
        let agent = self.agent(slot);
        if agent.one_shot {
            return reject(
                self,
                "not_resumable",
                "RESUME-3",
                messages::NOT_RESUMABLE.into(),
            );
        }
        if agent.user_cancelled {
            return reject(self, "cancelled", "RESUME-10", messages::CANCELLED.into());
        }
        self.resume(slot, caller, behavior, "CAP-7");
    }

    /// RESUME-6/8/9, CAP-7, FGBG-7: a finished agent runs again under the same id.
    fn resume(&mut self, slot: u32, by: AgentId, behavior: Option<Program>, rule: RuleId) {
        let (mode, _) = placement::resume_mode(&self.config);
        // NOTIFY-9: an agent resumed by one that reports to it (its launcher, or further up
        // the chain) keeps its own recipient; otherwise it reports to whoever resumed it.
        let target = self.agent(slot).id;
        let redirect = !self.reports_to(by, target);
        let program = behavior.unwrap_or_else(default_resume_behavior);
        self.running += 1;
        let agent = self.agent_mut(slot);
        agent.status = Status::Running;
        agent.mode = mode;
        agent.program = program;
        agent.pc = 0;
        agent.stack.clear();
        agent.block = Block::Ready;
        agent.gen = agent.gen.wrapping_add(1);
        if redirect {
            agent.report_to = by;
        }
        agent.resumed = true;
        agent.awaited = false;
        agent.run += 1;
        let report_to = agent.report_to;
        agent.turns = 0;
        // RESUME-7: tools, model and history are kept as they were.
        let reference = agent.reference();
        let gen = agent.gen;
        if let Some(caller_slot) = self.slot_of(report_to) {
            self.agent_mut(caller_slot).children_running += 1;
        }
        let by_ref = self.reference(by);
        let running = self.running;
        self.emit(
            Some(rule),
            EventKind::AgentResumed {
                agent: reference,
                by: by_ref,
                cap_checked: false,
                running,
                mode,
            },
        );
        self.schedule(self.now, Wake::Step { slot, gen });
    }

    /// Does `agent`'s result go, directly or up its chain of recipients, to `ancestor`?
    fn reports_to(&self, agent: AgentId, ancestor: AgentId) -> bool {
        let mut current = agent;
        // The chain is finite; the bound guards against a cycle all the same.
        for _ in 0..=self.slots.len() {
            if current == MAIN {
                return ancestor == MAIN;
            }
            let Some(slot) = self.slot_of(current) else {
                return false;
            };
            let next = self.agent(slot).report_to;
            if next == ancestor {
                return true;
            }
            current = next;
        }
        false
    }

    /// TaskStop from `caller`, or the person's `x` when `caller` is `None`.
    fn task_stop(&mut self, caller: AgentId, target: &str) {
        self.stop(Some(caller), target);
    }

    fn stop(&mut self, caller: Option<AgentId>, target: &str) {
        let action = if caller.is_some() {
            "stop"
        } else {
            "user_stop"
        };
        let Some(id) = self.lookup(target).filter(|id| *id != MAIN) else {
            self.emit(
                None,
                EventKind::ActionIgnored {
                    action,
                    why: Rc::from(format!("no agent named {target}").as_str()),
                },
            );
            return;
        };
        if !self.is_running(id) {
            let why = format!("{target} is not running");
            self.emit(
                None,
                EventKind::ActionIgnored {
                    action,
                    why: Rc::from(why.as_str()),
                },
            );
            return;
        }
        let slot = self.slot_of(id).expect("a running agent has a slot");
        let reference = self.agent(slot).reference();
        let (by, source, outcome, rule) = match caller {
            Some(caller) => (
                self.reference(caller),
                "task_stop",
                Outcome::Stopped,
                "RESUME-6",
            ),
            None => (AgentRef::MAIN, "user", Outcome::Cancelled, "RESUME-10"),
        };
        self.emit(
            Some(rule),
            EventKind::StopRequested {
                agent: reference,
                by,
                source,
            },
        );
        if caller.is_none() {
            self.agent_mut(slot).user_cancelled = true;
        }
        // the slot is released when the stopped run exits (no stop latency).
        self.finish(
            slot,
            outcome,
            Some(if caller.is_none() { "RESUME-10" } else { "Q-6" }),
            None,
        );
    }

    fn ask_progress(&mut self, slot: u32, target: &str) {
        let asker = self.agent(slot).reference();
        let Some(id) = self.lookup(target) else {
            self.emit(
                None,
                EventKind::ActionIgnored {
                    action: "ask_progress",
                    why: Rc::from(format!("no agent named {target}").as_str()),
                },
            );
            return;
        };
        let from = self.reference(id);
        if self.is_running(id) {
            // NOTIFY-4: Claude says it is still running (from v2.1.211; before, it sometimes
            // reported unfinished results).
            let what = if self.config.gates.waits_for_notification {
                "still_running"
            } else {
                "premature_result"
            };
            self.emit(
                Some("NOTIFY-4"),
                EventKind::Notification {
                    to: asker,
                    from,
                    what,
                },
            );
        } else {
            self.emit(
                Some("NOTIFY-4"),
                EventKind::Notification {
                    to: asker,
                    from,
                    what: "progress_done",
                },
            );
        }
    }

    // -- the person's timed actions ----------------------------------------------------

    fn user_action(&mut self, index: usize) {
        let action = self.actions[index].kind.clone();
        match action {
            ActionKind::Stop(target) => self.stop(None, &target),
            ActionKind::CtrlB => self.ctrl_b(),
            ActionKind::Dismiss(target) => self.dismiss(&target),
            ActionKind::Subtask { task, behavior } => self.subtask(&task, behavior),
            ActionKind::Clear => {
                // RESUME-13: /clear resets the name-reuse check.
                self.reached.clear();
                self.emit(Some("RESUME-13"), EventKind::ConversationCleared);
            }
            ActionKind::TypeTo {
                to,
                message: _,
                behavior,
            } => self.type_to(&to, behavior),
        }
    }

    /// PANEL-3 / PANEL-7: `x` on a finished row clears it before its 30 seconds are up.
    fn dismiss(&mut self, target: &str) {
        let why = match self.lookup(target) {
            Some(id) if self.is_running(id) => {
                format!("{target} is running; `x` on a running row stops it (use `stop`)")
            }
            Some(_) => format!("{target} has no row kept in the panel"),
            None => format!("no agent named {target}"),
        };
        self.emit(
            Some("PANEL-3"),
            EventKind::ActionIgnored {
                action: "dismiss",
                why: Rc::from(why.as_str()),
            },
        );
    }

    /// FGBG-5: Ctrl+B sends the running foreground task into the background.
    fn ctrl_b(&mut self) {
        let main = self.agent(0);
        if main.block != Block::Foreground {
            self.emit(
                Some("FGBG-5"),
                EventKind::ActionIgnored {
                    action: "ctrl_b",
                    why: Rc::from("no foreground task is running"),
                },
            );
            return;
        }
        // Every foreground child main is blocked on (a spawn step may have issued several).
        let mut candidates: Vec<(AgentId, u32)> = Vec::new();
        for (slot, agent) in self.slots.iter().enumerate() {
            if let Some(agent) = agent {
                if agent.report_to == MAIN
                    && agent.awaited
                    && agent.mode == Mode::Foreground
                    && agent.status == Status::Running
                    && agent.id != MAIN
                {
                    candidates.push((agent.id, slot as u32));
                }
            }
        }
        candidates.sort();
        for (_, slot) in candidates {
            let agent = self.agent_mut(slot);
            agent.mode = Mode::Background;
            agent.awaited = false;
            let reference = agent.reference();
            let running = self.running;
            self.emit(
                Some("FGBG-5"),
                EventKind::AgentBackgrounded {
                    agent: reference,
                    running,
                },
            );
            let main = self.agent_mut(0);
            main.foreground_pending = main.foreground_pending.saturating_sub(1);
        }
        if self.agent(0).foreground_pending == 0 {
            self.wake_now(0);
        }
    }

    /// FORK-9 / CAP-6: `/subtask` starts a fork that takes a slot without a cap check.
    fn subtask(&mut self, task: &str, behavior: Option<Program>) {
        let Some(command) = self.config.gates.user_fork_command else {
            self.emit(
                Some("FORK-9"),
                EventKind::ActionIgnored {
                    action: "subtask",
                    why: Rc::from("this version has no user fork command"),
                },
            );
            return;
        };
        let words: Vec<String> = task
            .split_whitespace()
            .take(3)
            .map(|w| w.to_lowercase())
            .collect();
        let name: Rc<str> = Rc::from(
            if words.is_empty() {
                "subtask".to_string()
            } else {
                words.join("-")
            }
            .as_str(),
        );
        let id = self.next_id;
        self.next_id += 1;
        self.running += 1;
        let tools = self.agent(0).tools.clone();
        let model = self.main_model.clone();
        let child = Agent {
            id,
            name: Some(name.clone()),
            depth: 1,
            mode: Mode::Background,
            fork: true,
            tools: tools.clone(),
            permission_mode: self.config.permission_mode,
            one_shot: false,
            max_turns: None,
            from_load: false,
            status: Status::Running,
            user_cancelled: false,
            program: behavior.unwrap_or_else(default_behavior),
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
            rng: None,
            finished_at: SimTime::ZERO,
        };
        let slot = self.insert(child);
        let gen = self.agent(slot).gen;
        self.agent_mut(0).children_running += 1;
        self.names.insert(name.clone(), id);
        let running = self.running;
        let rule = if command == "/subtask" {
            Unchecked::Subtask.rule()
        } else {
            "FORK-9"
        };
        self.emit(
            Some(rule),
            EventKind::AgentStarted {
                agent: AgentRef {
                    id,
                    name: Some(name),
                },
                agent_type: self.fork_arc.clone(),
                parent: AgentRef::MAIN,
                depth: 1,
                mode: Mode::Background,
                fork: true,
                model,
                tools,
                running,
                cap_checked: false,
            },
        );
        self.schedule(self.now, Wake::Step { slot, gen });
    }

    /// RESUME-11 / Q-7 / Q-24: the person types into an agent's transcript.
    fn type_to(&mut self, to: &str, behavior: Option<Program>) {
        let Some(id) = self.lookup(to).filter(|id| *id != MAIN) else {
            self.emit(
                None,
                EventKind::ActionIgnored {
                    action: "type_to",
                    why: Rc::from(format!("no agent named {to}").as_str()),
                },
            );
            return;
        };
        let slot = self.slot_of(id).expect("looked-up agent has a slot");
        if self.is_running(id) {
            let target = self.reference(id);
            self.emit(
                Some("RESUME-17"),
                EventKind::MessageDelivered {
                    to: target,
                    from: AgentRef::MAIN,
                },
            );
            return;
        }
        let agent = self.agent(slot);
        let in_panel = self
            .now
            .as_micros()
            .saturating_sub(agent.finished_at.as_micros())
            <= 30_000_000;
        if agent.user_cancelled && !(self.config.gates.type_to_resume && in_panel) {
            let why = if self.config.gates.type_to_resume {
                "its row has left the panel (30 s, PANEL-3)"
            } else {
                "typing to resume needs v2.1.191+"
            };
            self.emit(
                Some("RESUME-11"),
                EventKind::ActionIgnored {
                    action: "type_to",
                    why: Rc::from(why),
                },
            );
            return;
        }
        let was_cancelled = agent.user_cancelled;
        // after the person resumes it, Claude may message it again.
        self.agent_mut(slot).user_cancelled = false;
        // a resume the person starts bypasses the cap like Claude's.
        self.resume(
            slot,
            MAIN,
            behavior,
            if was_cancelled { "RESUME-11" } else { "Q-7" },
        );
    }

    // -- load ---------------------------------------------------------------------------

    fn load_continues(&self, at: SimTime) -> bool {
        let Some(load) = &self.load else { return false };
        match load.until {
            LoadUntil::Count(count) => self.arrivals < count,
            LoadUntil::Duration(end) => at <= end,
        }
    }

    fn arrival(&mut self) {
        let Some((arrivals, spawn)) = self
            .load
            .as_ref()
            .map(|load| (load.arrivals, self.load_spawn_spec.clone()))
        else {
            return;
        };
        let burst = match arrivals {
            Arrivals::Burst(count) => count.max(1),
            _ => 1,
        };
        for _ in 0..burst {
            if !self.load_continues(self.now) {
                break;
            }
            self.arrivals += 1;
            let index = self.arrivals;
            self.load_spawn(&spawn, Some(index));
            if self.limit.is_some() {
                return;
            }
        }
        let next = match arrivals {
            Arrivals::Poisson(rate) => Some(
                self.now
                    .plus(Dist::Exp { mean: 1e6 / rate }.sample(&mut self.arrival_rng)),
            ),
            Arrivals::Every(micros) => Some(self.now.plus(micros.max(1))),
            Arrivals::Burst(_) => None,
        };
        if let Some(next) = next {
            if self.load_continues(next) {
                self.schedule_arrival(next);
            }
        }
    }

    /// One load arrival (or retry): an Agent call from main that does not block main.
    fn load_spawn(&mut self, spec: &SpawnSpec, index: Option<u64>) {
        let name = spec.name.as_ref().map(|name| match index {
            Some(index) => format!("{name}-{index}"),
            None => name.clone(),
        });
        let started = self.spawn(MAIN, spec, name, true);
        if started == Err(Some(RejectReason::ConcurrentLimit)) {
            match self.load.as_ref().map(|load| load.retry) {
                Some(Retry::AfterCompletion) => self.retry_waiting += 1,
                Some(Retry::Backoff(dist)) => {
                    let delay = dist.sample(&mut self.retry_rng);
                    self.schedule(self.now.plus(delay), Wake::Retry);
                }
                _ => {}
            }
        }
    }
}

fn session_permission_mode(spec: &SimSpec) -> PermissionMode {
    spec.session.permission_mode
}
