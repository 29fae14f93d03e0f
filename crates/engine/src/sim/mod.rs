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
//! The `Kernel` is made of named parts, each a plain field: `session` (configuration),
//! `clock` (time and the wake queue, `clock.rs`), `agents` (the slab, `agents.rs`),
//! `person` (prompts and timed actions), `load` (the generator), `caches` and `trace`
//! (the sink and the safety limits).
//!
//! Memory grows with what is running, not with what ran: agent records live in a slab, and
//! records of load-generated agents are released when their run ends (they are anonymous
//! and cannot be addressed again).

use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use subsim_rules::cap;
use subsim_rules::context;
use subsim_rules::model;
use subsim_rules::notify::{self, Delivery, Finishing, Notice, Recipient};
use subsim_rules::placement;
use subsim_rules::prompt::{self, Asker, CallDecision, Route};
use subsim_rules::session::{env, ConfigNote};
use subsim_rules::tools::{self, Fields};
use subsim_rules::{messages, Mode, PermissionMode, RejectReason, RuleId, SessionConfig};

use crate::dist::Dist;
use crate::event::{
    AgentId, AgentRef, Event, EventKind, HookSource, IgnoredAction, Limit, MessageRejection,
    Outcome, RunProfile, StopSource, ToolList, ToolRefusal, WaitingFor, MAIN,
};
use crate::sink::Sink;
use crate::spec::{
    default_behavior, default_resume_behavior, ActionKind, AgentDef, Answer, ApiError, Arrivals,
    CallKind, LoadSpec, LoadUntil, Program, Retry, Scope, SendSpec, SimSpec, SpawnSpec, Step,
    ToolCall, WaitTarget,
};
use crate::time::SimTime;

/// Hands a kept event of `trace.hot` to the sink through the [`Sink`] method of its kind.
macro_rules! sink_hot {
    ($sink:expr, requested, $event:expr) => {
        $sink.spawn_requested($event)
    };
    ($sink:expr, rejected, $event:expr) => {
        $sink.spawn_rejected($event)
    };
    ($sink:expr, started, $event:expr) => {
        $sink.agent_started($event)
    };
    ($sink:expr, finished, $event:expr) => {
        $sink.agent_finished($event)
    };
    ($sink:expr, notification, $event:expr) => {
        $sink.notification($event)
    };
    ($sink:expr, delivered, $event:expr) => {
        $sink.report_delivered($event)
    };
    // A prompt's events (`HotEvents::prompt`), which have no `Sink` method of their own.
    ($sink:expr, prompt.$which:ident, $event:expr) => {
        $sink.event($event)
    };
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

/// Emits one of the kept events of `trace.hot` (see [`HotEvents`]): `emit_hot!(self,
/// finished, rule, |kind| { … })` sets its time, seq and rule, lets the block write the
/// kind's fields in place (`kind` is `&mut EventKind`, of the kept event's variant), and
/// hands the event to the sink (`sink_hot!`) — unless a safety limit has ended the trace
/// (then the block does not run). A prompt's events are named `prompt.answered` and so on
/// (`HotEvents::prompt`).
macro_rules! emit_hot {
    ($kernel:expr, $($which:ident).+, $rule:expr, |$kind:ident| $fill:block) => {
        if $kernel.trace.limit.is_none() {
            let now = $kernel.clock.now;
            let event = &mut $kernel.trace.hot.$($which).+;
            event.t = now;
            event.seq = $kernel.trace.seq;
            event.rule = $rule;
            let $kind = &mut event.kind;
            $fill
            $kernel.trace.seq += 1;
            $kernel.trace.last_time = now;
            sink_hot!($kernel.trace.sink, $($which).+, &$kernel.trace.hot.$($which).+);
            if $kernel.trace.seq >= $kernel.trace.limits.max_events {
                $kernel.hit_limit(Limit::MaxEvents, $kernel.trace.limits.max_events);
            }
        }
    };
}

mod actions;
mod agents;
mod ahead;
mod clock;
mod finish;
mod load;
mod messaging;
mod observe;
mod person;
mod queue;
mod spawn;
mod steps;
mod streams;
mod ties;

pub use ties::{TieBreak, TieOptions};

use agents::{Agent, AgentStart, Agents, Block, Frame, Status};
use clock::{Clock, Wake};

/// A safety limit that ended a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitHit {
    /// Which limit.
    pub limit: Limit,
    /// The bound that was hit.
    pub value: u64,
}

impl std::fmt::Display for LimitHit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.limit {
            Limit::MaxTime => write!(
                f,
                "the run reached session.limits.max_time ({}); raise it in the scenario's \
                 `session.limits` if the run is meant to be longer",
                crate::time::human_duration(self.value)
            ),
            Limit::MaxSteps => write!(
                f,
                "the run reached session.limits.max_steps ({} steps run; by default 10 × \
                 max_events): steps that take no time, such as a `repeat` of `work: 0s`, never \
                 let time pass; raise it in the scenario's `session.limits` if the run is meant \
                 to be longer",
                self.value
            ),
            Limit::MaxRunning => write!(
                f,
                "the run reached session.limits.max_running ({} subagents running at once, \
                 which bounds memory when the cap does not); raise it in the scenario's \
                 `session.limits` if the run is meant to be that wide",
                self.value
            ),
            Limit::MaxInstantSteps => write!(
                f,
                "the run reached session.limits.max_instant_steps ({} steps taken at one \
                 instant without the clock moving, checked in blocks of that many): steps \
                 that take no time, such as a `repeat` of `work: 0s`, never let time pass; \
                 raise it in the scenario's `session.limits` if the run is meant to do that \
                 much at one instant",
                self.value
            ),
            Limit::MaxSilentSteps => write!(
                f,
                "the run reached session.limits.max_silent_steps ({} steps taken in a row \
                 without an event written, checked in blocks): steps that take little time \
                 and write nothing, such as a `repeat` of `wait: 1us`, would run for \
                 minutes before `max_steps` or `max_time` stopped them; raise it in the \
                 scenario's `session.limits` if the run is meant to be that quiet",
                self.value
            ),
            Limit::MaxHeld => write!(
                f,
                "the run reached session.limits.max_held ({} agent records and waiting calls \
                 held at once: agents running, waiting or kept for a resume, such as named \
                 agents and teammates, load calls waiting to retry, and background shell \
                 commands not yet ended; it bounds memory \
                 whatever the cap says); raise it in the scenario's `session.limits` if the \
                 run is meant to hold that many",
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
    /// Steps run (what `session.limits.max_steps` counts).
    pub steps: u64,
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
        kernel.ties = Some(ties::Ties::new(ties));
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
        kernel.clock.stop_at = Some(at);
        kernel.run();
        let gates = kernel.session.config.gates;
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
    /// Its definition's frontmatter hooks (HOOK-4…6), if it has any.
    own_hooks: Option<Rc<observe::OwnHooks>>,
}

/// A prompt shown and not yet answered: 16 bytes, `Option` included, so that tens of
/// thousands waiting at once (issue #7, W4) are few cache lines and pages (a copy of the
/// call's name, input and duration was 72 bytes; the call's program and index, 32). The
/// call asked about is the `tool` step its run took last: a run blocked on a prompt takes
/// no step until the prompt is answered or withdrawn, so the step is still in the program
/// [`PendingPrompt::program`] finds.
struct PendingPrompt {
    slot: u32,
    /// The index of the `tool` step in its program, plus one (so that an `Option` of it
    /// needs no tag of its own).
    step: std::num::NonZeroU32,
    asked_at: SimTime,
}

impl PendingPrompt {
    /// A prompt of the run in `slot`, asking about the `tool` step at `pc` of its program.
    fn new(slot: u32, pc: usize, asked_at: SimTime) -> PendingPrompt {
        PendingPrompt {
            slot,
            step: std::num::NonZeroU32::MIN.saturating_add(pc as u32),
            asked_at,
        }
    }

    /// The program `agent` took its last step from: its innermost `repeat` body, or its
    /// own program when it runs none (`Kernel::next_step` takes a step of its own program
    /// only once no frame is left).
    fn program(agent: &Agent) -> &Program {
        match agent.stack().last() {
            Some(frame) => &frame.program,
            None => &agent.program,
        }
    }

    /// The tool call the prompt asks about, in `program` (its run's,
    /// [`PendingPrompt::program`]).
    fn call<'p>(&self, program: &'p Program) -> &'p ToolCall {
        match &program[self.step.get() as usize - 1] {
            Step::Tool(call) => call,
            _ => unreachable!("a pending prompt points at the tool step that asked it"),
        }
    }
}

/// The kernel: its named parts, and the two hooks a run can be driven through. Each part
/// is a plain field (no box, no indirection): `self.clock.now` costs what a flat field did.
struct Kernel<'s> {
    /// What the session was configured with; fixed once `Kernel::new` returns.
    session: Session,
    /// Virtual time and the wake queue.
    clock: Clock,
    /// The agent slab and its indexes.
    agents: Agents,
    /// The person at the keyboard: the prompt queue and the timed actions.
    person: Person,
    /// The load generator (`load:`).
    load: LoadGen,
    /// Values computed once and reused: profiles, spawn plans, shared strings.
    caches: Caches,
    /// The trace being written and the safety limits that can end it.
    trace: Trace<'s>,
    /// The panel (PANEL); `None` for load runs (whose million rows nobody reads) and for `-p` and SDK sessions (PANEL-1: the panel is a terminal's).
    panel: Option<observe::PanelState>,
    /// `run_with_ties`: who picks among same-instant wakes, and the wakes due at the
    /// instant being run (`None`: scheduling order).
    ties: Option<ties::Ties<'s>>,
}

/// What the session was configured with (read by every part; fixed after `Kernel::new`,
/// but for the notes it adds).
struct Session {
    config: SessionConfig,
    /// Notes about how settings were read (e.g. an invalid env value, MAIN-3).
    notes: Vec<ConfigNote>,
    /// The session's tool pool (TOOLS-8/10, MCP tools included).
    pool: Vec<String>,
    permissions: subsim_rules::prompt::PermissionRules,
    /// The texts of `permissions.allow` and `permissions.deny`, in their order, made once
    /// and shared by every `tool_called.permission_rule` that names one (PERM-14).
    permission_texts: [Box<[Rc<str>]>; 2],
    /// The agent types (built-ins, then definitions) and their index by name.
    types: Vec<TypeDef>,
    type_index: BTreeMap<String, usize>,
    /// `--agent`: the definition main runs as (MAIN-1).
    main_agent: Option<usize>,
    /// What the MODEL rules read.
    models: ModelSettings,
    /// Session-level hooks (HOOK-1).
    hooks: Rc<[observe::Hook]>,
    /// Whether the session or any definition has hooks (neither changes during a run).
    hooks_present: bool,
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
    mcp: ToolList,
    /// `CLAUDE_CODE_EFFORT_LEVEL` and the session's effort (MODEL-14).
    effort_env: Option<String>,
    effort: Option<String>,
}

/// The person: how they answer prompts, the prompts waiting for them, their timed actions.
struct Person {
    answer: Answer,
    /// `user.answers`: per-prompt answers, first match wins.
    answers: Vec<crate::spec::AnswerRule>,
    think: Dist,
    /// The sampler of `think` when it is `exp(…)`: its own, as the kernel's
    /// (`Caches::exp`) serves the runs' draws in between (see `dist::ExpCache`).
    think_exp: crate::dist::ExpCache,
    actions: Vec<crate::spec::UserAction>,
    /// Prompts shown and not yet answered, by number. Numbers are handed out in the
    /// order prompts are shown, so the next one the person answers is the first held
    /// that is not `busy` (no queue apart: `Window::first_key`).
    prompts: crate::ids::Window<PendingPrompt>,
    /// The prompt the person is thinking about.
    busy: Option<u64>,
    next_prompt: u64,
    /// Tools allowed for the rest of the session by an answer.
    grants: Vec<String>,
    rng: ChaCha8Rng,
}

/// The load generator (`load:`): its arrivals, retries and random streams.
struct LoadGen {
    /// The streams' arrival processes (see `load.rs`).
    streams: load::Streams,
    /// Arrivals so far, of every stream.
    arrivals: u64,
    /// Rejected load calls waiting for a slot to free (`retry: after_completion`), oldest
    /// first, by arrival index (so a named call keeps its `NAME-i`).
    retry_waiting: VecDeque<u64>,
    /// Rejected load calls waiting to be retried, by any policy: in `retry_waiting`, or
    /// due as a `Wake::Retry` (`max_held` counts them).
    retries_held: u64,
    /// The arrival whose call is being made (its `spawn_requested` carries it).
    arrival: Option<u64>,
    /// The behaviour stream every load run shares.
    rng: ChaCha8Rng,
    retry_rng: ChaCha8Rng,
}

/// Values computed once and reused (none of them changes what a run does).
struct Caches {
    profiles: BTreeMap<(usize, u8, PermissionMode), Rc<RunProfile>>,
    /// The last profile handed out, with its key (load runs ask for the same one).
    last_profile: Option<((usize, u8, PermissionMode), Rc<RunProfile>)>,
    /// Spawn plans (`rules::plan`) by kind of call: a load run makes the same call for
    /// every arrival. See `spawn::spawn_plan` for the rules of this cache.
    plans: BTreeMap<spawn::PlanKey, Rc<spawn::CachedPlan>>,
    /// The last kind of call, its caller and its plan, compared in place before the map is
    /// asked.
    last_plan: Option<spawn::LastPlan>,
    /// Tool resolutions' steps by kind of run, for refused tool calls (`steps::removal_of`).
    removals: BTreeMap<steps::RemovalKey, Rc<[tools::Step]>>,
    /// The last report delivery built, reused for the same text delivered the same way.
    last_delivery: Option<finish::Delivered>,
    /// The last tool list and tool name a tool call was checked with, and whether the
    /// list has the tool (`steps::has_tool`).
    last_tool_check: Option<(ToolList, Rc<str>, bool)>,
    /// The sampler of the last `exp(…)` a run drew from (see `dist::ExpCache`).
    exp: crate::dist::ExpCache,
    /// The runs' behaviour streams being drawn from (see `streams.rs`).
    streams: streams::Streams,
    /// CAP-2's message, shared by every refusal at the cap.
    limit_message: Rc<str>,
    fork_arc: Rc<str>,
    /// The program of a run without a `behavior` of its own ([`default_behavior`]) and of a
    /// resume without one ([`default_resume_behavior`]), built once and shared.
    default_program: Program,
    default_resume_program: Program,
}

impl Session {
    /// PERM-14: the text of a permission rule, shared ([`prompt::deciding_entry`]).
    fn permission_text(&self, entry: prompt::RuleEntry) -> Rc<str> {
        let [allow, deny] = &self.permission_texts;
        match entry {
            prompt::RuleEntry::Allow(index) => allow[index].clone(),
            prompt::RuleEntry::Deny(index) => deny[index].clone(),
        }
    }
}

/// The trace being written, and the safety limits that can end it.
struct Trace<'s> {
    sink: &'s mut dyn Sink,
    /// The next event's seq (= events written so far).
    seq: u64,
    /// Virtual time of the last event.
    last_time: SimTime,
    /// The safety limit that stopped the run, once one has.
    limit: Option<LimitHit>,
    limits: crate::spec::Limits,
    /// Steps left in the current block (`Kernel::next_step_block`): at most the smaller
    /// of `max_instant_steps` and `max_silent_steps`, and together with `steps_after`
    /// what `max_steps` (`Limits::steps`) leaves. Only this is counted per step.
    steps_left: u64,
    /// Steps `max_steps` leaves after the current block.
    steps_after: u64,
    /// When the current block began, the events written by then, and its length.
    block_start: SimTime,
    block_seq: u64,
    block_len: u64,
    /// Steps of the whole blocks just before this one taken at one instant, and taken
    /// without an event written (`max_instant_steps`, `max_silent_steps`).
    instant_run: u64,
    silent_run: u64,
    /// The events every arrival makes, kept built (see [`HotEvents`]).
    hot: HotEvents,
}

/// One kept [`Event`] for each kind a load run writes for every arrival (a request, a
/// refusal, a start, an end, a notification, a report delivered as the last one was; and
/// a prompt's request, answer and tool call). `emit_hot!` writes a new event's fields
/// into the kept one, in place, and hands it to the sink: an event built anew was written
/// field by field into a temporary and then copied whole into the `Event` with wider
/// loads, which stalled on store forwarding (the copies of `finish_run`'s two events were
/// two fifths of its time), and it was dropped through the generic drop of `EventKind`
/// afterwards. A kept event holds its last values (a few shared strings and a profile)
/// until the next event of its kind overwrites them.
struct HotEvents {
    requested: Event,
    rejected: Event,
    started: Event,
    finished: Event,
    notification: Event,
    /// A report delivered again as the last one was (`Caches::last_delivery`).
    delivered: Event,
    /// The events of a prompt shown and answered (issue #7, W4), kept apart (boxed): a run
    /// without prompts carries one pointer more, not three more events.
    prompt: Box<PromptEvents>,
}

/// The kept events of a prompt (see [`HotEvents`]).
struct PromptEvents {
    /// A prompt shown to the person (`permission_requested`, not auto-denied).
    prompted: Event,
    /// A prompt answered (`permission_answered`).
    answered: Event,
    /// A tool call answered by the person (`tool_called`).
    tool_called: Event,
}

impl HotEvents {
    /// Kept events with placeholder values (every field is written before each use).
    fn new() -> HotEvents {
        let event = |kind| Event {
            t: SimTime::ZERO,
            seq: 0,
            rule: None,
            kind,
        };
        let nobody = || AgentRef { id: 0, name: None };
        let empty: Rc<str> = Rc::from("");
        HotEvents {
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
                }),
                tool_called: event(EventKind::ToolCalled {
                    agent: nobody(),
                    tool: empty.clone(),
                    allowed: false,
                    reason: None,
                    input: None,
                    permission_rule: None,
                }),
            }),
        }
    }
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
        // The kinds of Agent call, numbered once (`SpawnSpec::call_kind`).
        spawn::number_calls(&mut spec);
        let (config, notes) = SessionConfig::resolve(
            spec.session.version,
            spec.session.kind,
            &spec.session.env,
            spec.session.ultracode,
            spec.session.agent_teams,
            spec.session.permission_mode,
        );
        let pool = tools::session_pool(
            spec.session.tools.as_deref(),
            spec.session.cross_session_messaging,
            &spec.session.mcp,
        );
        // SPAWN-8: which built-ins the env leaves registered.
        let builtin_env = subsim_rules::spawn::BuiltinEnv {
            disable_explore_plan: config.disable_explore_plan,
            sdk_disable_builtins: config.disable_builtins,
        };
        // MAIN-1…6: what main becomes when the session runs as an agent (the rules decide
        // its tools and model; MAIN-4 / Q-32 how its name is found).
        let main_agent_key = main_agent_key(&spec, &config, builtin_env);
        let main_def = main_agent_key
            .as_deref()
            .and_then(|key| match spec.agents.get(key) {
                Some(def) => Some(def.clone()),
                None => model::BuiltIn::from_name(key).map(AgentDef::built_in),
            });
        let main_agent = context::main_agent(&context::MainAgentInput {
            flag: spec.session.agent.as_deref(),
            setting: None,
            definition: main_def.as_ref().map(|def| context::MainDefinition {
                name: main_agent_key.as_deref().unwrap_or_default(),
                scope: (def.scope != Scope::BuiltIn).then_some(def.scope),
                prompt: def.prompt.as_deref(),
                memory: def.memory.is_some(),
                tools: def.tools.as_deref(),
                disallowed: &def.disallowed_tools,
                model: def.model.as_deref(),
                initial_prompt: def.initial_prompt.as_deref(),
                omit_claude_md: def.omit_claude_md,
            }),
            user_prompt: None,
            pool: &pool,
            auto_memory: spec.session.auto_memory,
            gates: config.gates,
        });
        // MAIN-1: main runs on the agent's model, and subagents that inherit the main
        // model inherit that one.
        if let Some((model, _)) = &main_agent.model {
            spec.session.model = model.clone();
        }
        let session = &spec.session;
        let seed = session.seed;
        let main_model: Rc<str> = Rc::from(session.model.as_str());
        let mut types = Vec::new();
        let mut type_index = BTreeMap::new();
        let default_program = default_behavior();
        let mut add = |def: AgentDef, types: &mut Vec<TypeDef>| {
            let name: Rc<str> = Rc::from(def.name.as_str());
            let built_in = def.scope == Scope::BuiltIn;
            // RESUME-3: the one-shot built-ins (a custom Explore is not one, SPAWN-10).
            let (one_shot, _) = subsim_rules::resume::one_shot_type(built_in, &def.name);
            let models = ModelSettings::from_session(session);
            let choice = models.choose(&config, &def, None, false, false);
            let behavior = def
                .behavior
                .clone()
                .unwrap_or_else(|| default_program.clone());
            type_index.insert(def.name.clone(), types.len());
            types.push(TypeDef {
                name,
                model: Rc::from(choice.model.as_str()),
                model_rule: choice.rule,
                one_shot,
                behavior,
                own_hooks: observe::OwnHooks::of(&def, &session.trusted_dirs, &config),
                def,
            });
        };
        // SPAWN-8: built-ins, less the ones the env removes.
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
            session: Session {
                config,
                notes,
                pool,
                permissions: session.permissions.clone(),
                permission_texts: [&session.permissions.allow, &session.permissions.deny]
                    .map(|texts| texts.iter().map(|text| Rc::from(text.as_str())).collect()),
                types,
                type_index,
                main_agent: None,
                models: ModelSettings::from_session(session),
                hooks: session
                    .hooks
                    .iter()
                    .map(|hook| observe::Hook::new(hook, subsim_rules::hooks::HookOrigin::Session))
                    .collect(),
                hooks_present: false,
                fallback_models: session.fallback_models.clone(),
                continuation_budget: session.continuations,
                classifier: session.classifier,
                auto_memory: session.auto_memory,
                trusted_dirs: session.trusted_dirs.clone(),
                definitions: spec.definitions.clone(),
                mcp: session
                    .mcp
                    .keys()
                    .map(|name| Rc::from(name.as_str()))
                    .collect(),
                effort_env: session.env.get(env::EFFORT_LEVEL).cloned(),
                effort: session.effort.clone(),
            },
            clock: Clock {
                now: SimTime::ZERO,
                seq: 0,
                heap: queue::TimeQueue::new(),
                now_queue: clock::NowQueue::default(),
                next_arrival: None,
                stop_at: None,
                shells_queued: 0,
            },
            agents: Agents::new(),
            person: Person {
                answer: spec.user.answer,
                answers: spec.user.answers.clone(),
                think: spec.user.think,
                think_exp: crate::dist::ExpCache::default(),
                actions: spec.user.actions.clone(),
                prompts: crate::ids::Window::default(),
                busy: None,
                next_prompt: 1,
                grants: Vec::new(),
                rng: stream(seed, 0, purpose::USER),
            },
            load: LoadGen {
                streams: load::Streams::new(spec.load.as_ref(), seed),
                arrivals: 0,
                retry_waiting: VecDeque::new(),
                retries_held: 0,
                arrival: None,
                rng: stream(seed, 0, purpose::LOAD_BEHAVIOR),
                retry_rng: stream(seed, 0, purpose::RETRY),
            },
            caches: Caches {
                profiles: BTreeMap::new(),
                last_profile: None,
                plans: BTreeMap::new(),
                last_plan: None,
                removals: BTreeMap::new(),
                last_delivery: None,
                last_tool_check: None,
                exp: crate::dist::ExpCache::default(),
                streams: streams::Streams::new(seed),
                limit_message: Rc::from(messages::CONCURRENT_LIMIT),
                fork_arc: Rc::from(subsim_rules::spawn::FORK_TYPE),
                default_program,
                default_resume_program: default_resume_behavior(),
            },
            trace: Trace {
                sink,
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
                hot: HotEvents::new(),
            },
            // PANEL-1: only interactive sessions have a panel; load runs keep none either.
            panel: (spec.load.is_none() && subsim_rules::panel::session_has_panel(session.kind).0)
                .then(|| observe::PanelState {
                    panel: subsim_rules::panel::Panel::new(),
                    tick: None,
                    screen_reader: session.screen_reader,
                    changes: Vec::new(),
                }),
            ties: None,
        };
        kernel.session.hooks_present = !kernel.session.hooks.is_empty()
            || kernel
                .session
                .types
                .iter()
                .any(|type_def| type_def.own_hooks.is_some());
        // The main conversation is agent 0 in slot 0. Its tools are the rules' answer
        // (MAIN-1 / TOOLS-19 / TOOLS-17), plus, for an agent, its inline `mcpServers`,
        // which connect at startup for main too (MCP-2).
        let mut main_tools: Vec<Rc<str>> = main_agent
            .tools
            .tools
            .iter()
            .map(|tool| Rc::from(tool.as_str()))
            .collect();
        let mut main_type: Rc<str> = Rc::from("main");
        if let Some(warning) = main_agent.warning {
            kernel.session.notes.push(ConfigNote {
                rule: "MAIN-3",
                text: warning,
            });
        } else if let Some(index) = main_agent_key
            .as_deref()
            .and_then(|key| kernel.session.type_index.get(key).copied())
        {
            kernel.session.main_agent = Some(index);
            let type_def = &kernel.session.types[index];
            for server in type_def
                .def
                .mcp_servers
                .iter()
                .filter(|server| server.inline)
            {
                for tool in &server.tools {
                    main_tools.push(Rc::from(tools::mcp_tool_name(&server.name, tool).as_str()));
                }
            }
            main_type = type_def.name.clone();
        }
        let main_tools: ToolList = main_tools.into();
        let main_profile = RunProfile {
            agent_type: main_type,
            model: main_model.clone(),
            model_rule: "MAIN-1",
            effort: None,
            permission_mode: kernel.session.config.permission_mode,
            tools: main_tools,
            context: Rc::from(Vec::new()),
            mcp_servers: kernel.session.mcp.clone(),
            teammate: false,
        };
        let main_profile = Rc::new(main_profile);
        let main_program = spec.main.clone();
        kernel.agents.add(|| AgentStart {
            id: MAIN,
            type_index: None,
            invocation_model: None,
            classifier: None,
            profile: &main_profile,
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
            program: &main_program,
            report_to: MAIN,
        });
        kernel
    }

    // -- the loop ----------------------------------------------------------------------

    fn run(&mut self) {
        let config = &self.session.config;
        let kind = EventKind::SessionStarted {
            version: Rc::from(config.gates.version.to_string().as_str()),
            session_kind: config.kind,
            cap: config.cap,
            depth_limit: config.depth_limit,
            fork_mode: config.fork_mode,
            background_disabled: config.background_disabled,
            main_agent: self
                .session
                .main_agent
                .map(|index| self.session.types[index].name.clone()),
            permission_mode: config.permission_mode,
        };
        self.emit(None, kind);
        self.announce_definitions();
        self.clock
            .schedule(SimTime::ZERO, Wake::Step { slot: 0, gen: 0 });
        for index in 0..self.person.actions.len() {
            let at = self.person.actions[index].at;
            self.clock.schedule(at, Wake::Action(index as u32));
        }
        self.start_load();
        // Neither `stop_at` nor `max_time` changes during the run: one comparison with the
        // earlier of the two per wake, and the two told apart only past it.
        let bound = self
            .clock
            .stop_at
            .map_or(self.trace.limits.max_time, |stop| {
                stop.min(self.trace.limits.max_time)
            });
        if self.ties.is_some() {
            self.run_wakes::<true>(bound);
        } else {
            self.run_wakes::<false>(bound);
        }
    }

    /// The run loop: every wake in order until none is left, a safety limit is reached or
    /// `bound` is passed. `TIES`: the tie explorer picks among same-instant wakes
    /// (`pop_chosen`); a plain run's loop is compiled without it, so that the choice does
    /// not weigh on every wake (with both pops in one loop, dbbcdaa's larger chooser cost
    /// W1 ~24 instructions an arrival).
    #[inline(always)]
    fn run_wakes<const TIES: bool>(&mut self, bound: SimTime) {
        while let Some((time, wake)) = if TIES {
            self.pop_chosen()
        } else {
            self.clock.pop_next()
        } {
            // The runs the timer queue gives next, loaded together (`ahead.rs`).
            if !self.clock.heap.ahead().is_empty() {
                self.load_ahead();
            }
            if self.trace.limit.is_some() {
                break;
            }
            if time > bound {
                if self.clock.stop_at.is_some_and(|stop| time > stop) {
                    break;
                }
                if !self.only_panel_ticks_left(wake) {
                    self.hit_limit(Limit::MaxTime, self.trace.limits.max_time.as_micros());
                }
                break;
            }
            debug_assert!(
                time >= self.clock.now,
                "kernel invariant: virtual time never goes back"
            );
            self.clock.now = time;
            self.dispatch(wake);
        }
    }

    /// Past `max_time` with `wake` popped: is everything still queued a panel window's end
    /// (PANEL-2/3/5)? Those only take a row off the panel: they are not the run going on,
    /// so a run whose last real event came before `max_time` ends without reaching the
    /// limit. Anything else (a step, an arrival, a person's action or answer, a shell
    /// command) means the run was cut short. Called once, when the run stops; what it pops
    /// is dropped unrun.
    #[cold]
    fn only_panel_ticks_left(&mut self, wake: Wake) -> bool {
        // The tie explorer holds the rest of the instant's wakes out of the queue.
        if self
            .ties
            .as_ref()
            .is_some_and(ties::Ties::holds_more_than_panel_ticks)
        {
            return false;
        }
        let mut next = Some(wake);
        while let Some(wake) = next {
            if !matches!(wake, Wake::PanelTick) {
                return false;
            }
            next = self.clock.pop_next().map(|(_, wake)| wake);
        }
        true
    }

    fn report(&self) -> RunReport {
        RunReport {
            end: self.trace.last_time,
            events: self.trace.seq,
            steps: self.trace.limits.steps() - self.trace.steps_after - self.trace.steps_left,
            limit: self.trace.limit.clone(),
            notes: self.session.notes.clone(),
        }
    }

    fn emit(&mut self, rule: Option<RuleId>, kind: EventKind) {
        if self.trace.limit.is_some() {
            return;
        }
        let event = Event {
            t: self.clock.now,
            seq: self.trace.seq,
            rule,
            kind,
        };
        self.trace.seq += 1;
        self.trace.last_time = self.clock.now;
        self.trace.sink.event(&event);
        if self.trace.seq >= self.trace.limits.max_events {
            self.hit_limit(Limit::MaxEvents, self.trace.limits.max_events);
        }
    }

    /// The step budget's current block is spent: the next one, or the run stops. Blocks
    /// are the smaller of `max_instant_steps` and `max_silent_steps` long. The steps of
    /// the blocks in a row taken without the clock moving, and of those taken without an
    /// event written, are added up: `max_instant_steps` and `max_silent_steps` stop the
    /// run once they reach them (so after at most a block more than the limit); none
    /// left of `max_steps` stops it there (exactly, as blocks are spent whole). Out of
    /// line and run once per block: a step only counts down `steps_left`.
    #[cold]
    #[inline(never)]
    fn next_step_block(&mut self) -> bool {
        let limits = self.trace.limits;
        if self.trace.steps_after == 0 {
            self.hit_limit(Limit::MaxSteps, limits.steps());
            return false;
        }
        let trace = &mut self.trace;
        trace.instant_run = if trace.block_start == self.clock.now {
            trace.instant_run.saturating_add(trace.block_len)
        } else {
            0
        };
        trace.silent_run = if trace.block_seq == trace.seq {
            trace.silent_run.saturating_add(trace.block_len)
        } else {
            0
        };
        if trace.instant_run >= limits.max_instant_steps {
            self.hit_limit(Limit::MaxInstantSteps, limits.max_instant_steps);
            return false;
        }
        if trace.silent_run >= limits.max_silent_steps {
            self.hit_limit(Limit::MaxSilentSteps, limits.max_silent_steps);
            return false;
        }
        let block = trace
            .steps_after
            .min(limits.max_instant_steps)
            .min(limits.max_silent_steps);
        trace.steps_after -= block;
        trace.steps_left = block;
        trace.block_start = self.clock.now;
        trace.block_seq = trace.seq;
        trace.block_len = block;
        true
    }

    /// `max_held`: whether one more agent record or waiting call would pass the limit; if
    /// so the run stops there (`limit_reached`) and this answers `true`. A new agent needs
    /// a new record only when no vacant slot is left (`agents.free` empty), so that is when
    /// a start calls this; the slab's records (the most held at once so far: the slab
    /// never shrinks) plus the waiting calls and the queued background shells
    /// (`Clock::shells_queued`; a `bash_background` step calls this) are what the kernel
    /// holds.
    #[inline(always)]
    fn held_full(&mut self) -> bool {
        let held = (self.agents.records() as u64)
            .saturating_add(self.load.retries_held)
            .saturating_add(self.clock.shells_queued);
        if held >= self.trace.limits.max_held {
            self.hit_limit(Limit::MaxHeld, self.trace.limits.max_held);
            return true;
        }
        false
    }

    #[cold]
    #[inline(never)]
    fn hit_limit(&mut self, limit: Limit, value: u64) {
        if self.trace.limit.is_none() {
            if limit == Limit::MaxTime {
                // The run stops at the bound itself.
                self.clock.now = self.trace.limits.max_time;
            }
            // The limit event itself is the last one written (so the run ends at its
            // time, `RunReport::end`); it is not counted.
            self.trace.last_time = self.clock.now;
            let event = Event {
                t: self.clock.now,
                seq: self.trace.seq,
                rule: None,
                kind: EventKind::LimitReached { limit, value },
            };
            self.trace.seq += 1;
            self.trace.sink.event(&event);
            self.trace.limit = Some(LimitHit { limit, value });
        }
    }

    /// One wake's work. Inlined into the run loop: out of line (as the compiler left it
    /// once the loop was generic over `TIES`) every wake paid a call, a frame and six saved
    /// registers (W1 1.88× → 1.75× the baseline with it inlined; docs/PERFORMANCE.md).
    #[inline(always)]
    fn dispatch(&mut self, wake: Wake) {
        match wake {
            Wake::Step { slot, gen } => {
                let Some(agent) = self.agents.at_mut(slot) else {
                    return;
                };
                if agent.gen != gen || agent.status != Status::Running {
                    return;
                }
                match agent.block {
                    Block::Timer => agent.block = Block::Ready,
                    Block::Ready => {}
                    _ => return,
                }
                // `Kernel::may_step` holds: the run loop checked the trace's limit before
                // this wake, and the run is running and ready.
                self.advance(slot);
            }
            Wake::Arrival => self.arrival(),
            Wake::Retry(index) => self.retry(index),
            Wake::Action(index) => self.user_action(index as usize),
            Wake::Answer(prompt) => self.answer(prompt),
            Wake::BashDone { agent, run } => self.bash_done(agent, run),
            Wake::PanelTick => self.panel_tick(),
        }
    }

    // -- agents ------------------------------------------------------------------------

    fn wake_now(&mut self, slot: u32) {
        let agent = self.agents.get_mut(slot);
        agent.block = Block::Ready;
        agent.gen = agent.gen.wrapping_add(1);
        let gen = agent.gen;
        self.clock
            .schedule(self.clock.now, Wake::Step { slot, gen });
    }

    fn sample(&mut self, slot: u32, dist: &Dist) -> u64 {
        if let Dist::Const(value) = dist {
            return *value;
        }
        let agent = self.agents.get_mut(slot);
        if agent.from_load {
            return self.caches.exp.sample(dist, &mut self.load.rng);
        }
        let exp = &mut self.caches.exp;
        self.caches
            .streams
            .draw(agent.id, &mut agent.rng_words, |rng| exp.sample(dist, rng))
    }
}

/// MAIN-4 / Q-32: the key of the definition `session.agent` names — a definition by its
/// name or scoped id, a plugin's by its bare name when only one plugin has it, or a
/// registered built-in — as `rules::spawn::lookup` finds it; `None` when nothing (or more
/// than one plugin) answers, which MAIN-3 reports.
fn main_agent_key(
    spec: &SimSpec,
    config: &SessionConfig,
    builtin_env: subsim_rules::spawn::BuiltinEnv,
) -> Option<String> {
    let wanted = spec.session.agent.as_deref()?;
    let keys: Vec<&String> = spec.agents.keys().collect();
    let definitions: Vec<subsim_rules::spawn::Definition<'_>> = spec
        .agents
        .iter()
        .map(|(key, def)| spawn::rules_definition(key, def.scope))
        .collect();
    match subsim_rules::spawn::lookup(
        wanted,
        &definitions,
        config.kind,
        builtin_env,
        &config.gates,
    ) {
        subsim_rules::spawn::Lookup::Custom { index, .. } => {
            keys.get(index).map(|key| key.to_string())
        }
        subsim_rules::spawn::Lookup::BuiltIn(built_in) => Some(built_in.name().to_string()),
        _ => None,
    }
}

fn session_permission_mode(spec: &SimSpec) -> PermissionMode {
    spec.session.permission_mode
}
