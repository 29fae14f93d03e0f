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
//! `person` (prompts and timed actions), `load` (the generator), `memos` (every kept
//! rules answer, `decide.rs`), `draws` and `trace` (the sink and the safety limits).
//!
//! Memory grows with what is running, not with what ran: agent records live in a slab, and
//! records of load-generated agents are released when their run ends (they are anonymous
//! and cannot be addressed again).
//!
//! Its `#[inline(…)]` and `#[cold]` attributes are measured: docs/PERFORMANCE.md, "Choices
//! that need a benchmark".

use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use subsim_rules::context;
use subsim_rules::id;
use subsim_rules::model;
use subsim_rules::prompt::{self};
use subsim_rules::session::{env, ConfigNote};
use subsim_rules::{resume, tools, Mode, RuleId, SessionConfig};

use crate::dist::Dist;
use crate::event::{AgentRef, DrawnFor, DrawnOn, EventKind, Limit, RunProfile, ToolList, MAIN};
use crate::sink::Sink;
use crate::spec::{
    default_behavior, default_resume_behavior, AgentDef, Answer, Program, Scope, SimSpec, Step,
    ToolCall,
};
use crate::summary::Summary;
use crate::time::SimTime;

mod actions;
mod agents;
mod ahead;
mod clock;
mod decide;
mod finish;
mod gate;
mod load;
mod messaging;
mod observe;
mod person;
mod queue;
mod spawn;
mod steps;
mod streams;
mod ties;
mod trace;
mod worktree;

pub use ties::{TieBreak, TieOptions};

use agents::{Agent, Agents, Block, Made, Start, Status};
use clock::{Clock, Wake};
use trace::Trace;

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

/// Where a run's trace goes: a sink given every event, a summary kept through its typed
/// entries, or both (`sim/trace.rs`, "Where the trace goes").
struct Out<'s> {
    sink: Option<&'s mut dyn Sink>,
    summary: Option<&'s mut Summary>,
}

impl<'s> Out<'s> {
    /// Every event to `sink`, and no summary kept.
    fn sink(sink: &'s mut dyn Sink) -> Out<'s> {
        Out {
            sink: Some(sink),
            summary: None,
        }
    }
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
        let mut kernel = Kernel::new(self.spec, Out::sink(sink));
        kernel.run();
        kernel.report()
    }

    /// [`Simulation::run`], with `ties` choosing which of the same-instant wakes that could
    /// affect each other runs next (see [`TieBreak`]). A `ties` that always answers 0 gives
    /// exactly the trace of `run`.
    pub fn run_with_ties(self, sink: &mut dyn Sink, ties: &mut dyn TieBreak) -> RunReport {
        let mut kernel = Kernel::new(self.spec, Out::sink(sink));
        kernel.ties = Some(ties::Ties::new(ties));
        kernel.run();
        kernel.report()
    }

    /// Runs to the end (or to a safety limit), keeping the run's statistics in `summary`
    /// and handing every event to `sink` if one is given, with `ties` choosing at
    /// same-instant ties if given ([`Simulation::run_with_ties`]). `summary` ends exactly
    /// as it would as the sink of [`Simulation::run`], but the kernel keeps it through its
    /// typed entries: the events a load run writes for every arrival are not built unless
    /// `sink` wants them (the cost of `subsim run --format summary`, `sweep`).
    pub fn run_summarized<'a>(
        self,
        summary: &'a mut Summary,
        sink: Option<&'a mut dyn Sink>,
        ties: Option<&'a mut dyn TieBreak>,
    ) -> RunReport {
        let out = Out {
            sink,
            summary: Some(summary),
        };
        let mut kernel = Kernel::new(self.spec, out);
        kernel.ties = ties.map(ties::Ties::new);
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
        let mut kernel = Kernel::new(self.spec, Out::sink(sink));
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
/// thousands waiting at once are few cache lines and pages (it points at the call's step
/// instead of copying the call). The
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
            Step::Work(..)
            | Step::Spawn(..)
            | Step::SpawnTogether(..)
            | Step::Send(..)
            | Step::Stop(..)
            | Step::Sleep(..)
            | Step::WaitFor(..)
            | Step::BashBackground(..)
            | Step::Report(..)
            | Step::Fail(..)
            | Step::AskProgress(..)
            | Step::Repeat { .. } => {
                unreachable!("a pending prompt points at the tool step that asked it")
            }
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
    /// Every memo of a rules answer (`decide.rs`, whose ground rules say what each keeps).
    memos: decide::Memos,
    /// The random draws' kept state.
    draws: Draws,
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
    /// The tool each step that is a tool call calls, by `ToolStep` (issue #30), shared by
    /// every call of it (`""` for `tool`, whose step names its tool).
    step_tools: [Rc<str>; subsim_rules::toolcall::ToolStep::ALL.len()],
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
    /// MCP-5: the main session's MCP restrictions.
    mcp_policy: crate::spec::McpPolicySpec,
    /// CTX-8: the `--append-subagent-system-prompt` flag passed, if any.
    appended_prompt: Option<context::Appended>,
    /// PERM-9: the MCP tools marked `requiresUserInteraction`.
    requires_user_interaction: Box<[Rc<str>]>,
    /// MEM-5: the session's declared skills, if the scenario declares them.
    skills: Option<BTreeMap<String, context::SkillState>>,
    /// ISO-5: the main conversation runs isolated in a worktree.
    main_isolated: bool,
    /// `CLAUDE_CODE_EFFORT_LEVEL` and the session's effort (MODEL-14).
    effort_env: Option<String>,
    effort: Option<String>,
    /// The fixed message of each reason (`RejectFacts::message`, by the reason's index),
    /// shared by every refusal at the moment of the call (CAP-1's at the cap, …).
    refusal_texts: spawn::RefusalTexts,
    /// The type a fork runs as (FORK-3), shared.
    fork_arc: Rc<str>,
    /// The program of a run without a `behavior` of its own ([`default_behavior`]) and of a
    /// resume without one ([`default_resume_behavior`]), built once and shared.
    default_program: Program,
    default_resume_program: Program,
}

/// The person: how they answer prompts, the prompts waiting for them, their timed actions.
struct Person {
    answer: Answer,
    /// `user.answers`: per-prompt answers, first match wins.
    answers: Vec<crate::spec::AnswerRule>,
    think: Dist,
    /// The sampler of `think` when it is `exp(…)`: its own, as the kernel's
    /// (`Draws::exp`) serves the runs' draws in between (see `dist::ExpCache`).
    think_exp: crate::dist::ExpCache,
    actions: Vec<crate::spec::UserAction>,
    /// Prompts shown and not yet answered, by number. Numbers are handed out in the
    /// order prompts are shown, so the next one the person answers is the first held
    /// that is not `busy` (no queue apart: `Window::first_key`).
    prompts: crate::ids::Window<PendingPrompt>,
    /// The prompt the person is thinking about.
    busy: Option<u64>,
    /// The think time drawn for `busy`, µs (`permission_answered`'s `think_us`).
    thought: u64,
    /// `think` spelt as a scenario writes it (`permission_answered`'s `think_from`).
    think_from: Rc<str>,
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
    /// The behaviour stream every load run shares.
    rng: ChaCha8Rng,
    retry_rng: ChaCha8Rng,
}

/// The random draws' state that is kept between draws (none of it changes what is drawn).
struct Draws {
    /// The sampler of the last `exp(…)` a run drew from (see `dist::ExpCache`).
    exp: crate::dist::ExpCache,
    /// The runs' behaviour streams being drawn from (see `streams.rs`).
    streams: streams::Streams,
    /// The last distributions spelt for a `duration_drawn` (`Dist::spelled`), newest
    /// last: a scenario draws from a few, and each draw's event shares its text.
    spelled: Vec<(Dist, Rc<str>)>,
}

/// How many spellings [`Draws::spelled`] keeps.
const SPELLED: usize = 8;

impl Draws {
    /// `dist` as a scenario writes it, shared between the draws from it.
    fn spelled(&mut self, dist: &Dist) -> &Rc<str> {
        let index = match self.spelled.iter().position(|(kept, _)| kept == dist) {
            Some(index) => index,
            None => {
                if self.spelled.len() >= SPELLED {
                    self.spelled.remove(0);
                }
                self.spelled.push((*dist, Rc::from(dist.spelled())));
                self.spelled.len() - 1
            }
        };
        &self.spelled[index].1
    }
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
        // MODEL-1…14: the model a run gets.
        model::choose(&request)
    }
}

/// The settings `SessionConfig::resolve` does not read, applied to what it answered:
/// PERM-12 / PERM-10's `disableAutoMode` (`SessionConfig::disable_auto_mode`), and MCP-5's
/// managed allow/deny lists over the session's own servers (`context::session_servers`),
/// which drops the blocked ones from `session.mcp` and notes each.
fn session_settings(
    session: &mut crate::spec::SessionSpec,
    config: &mut SessionConfig,
    notes: &mut Vec<ConfigNote>,
) {
    if session.disable_auto_mode {
        config.disable_auto_mode(notes);
    }
    let (kept, blocked) = subsim_rules::context::session_servers(
        session.mcp.keys().map(String::as_str),
        &session.mcp_policy.policy(),
    );
    if !blocked.is_empty() {
        let kept: Vec<String> = kept.into_iter().map(str::to_string).collect();
        session.mcp.retain(|name, _| kept.contains(name));
        notes.extend(blocked.into_iter().map(|note| ConfigNote {
            rule: note.rule,
            text: note.text,
        }));
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
    fn new(mut spec: SimSpec, out: Out<'s>) -> Kernel<'s> {
        // CAP-1, DEPTH-2, DEPTH-6, FORK-1, FORK-2, SPAWN-8: the session's settings for its
        // version, kind and env vars, and the notes on settings it ignores.
        let (mut config, mut notes) = SessionConfig::resolve(
            spec.session.version,
            spec.session.kind,
            &spec.session.env,
            &spec.session.admission,
            spec.session.agent_teams,
            spec.session.permission_mode,
        );
        // PERM-12 / PERM-10 (`disableAutoMode`), MCP-5 (the managed allow/deny lists).
        session_settings(&mut spec.session, &mut config, &mut notes);
        // TOOLS-1 / TOOLS-8 / TOOLS-10: the session's tool pool — the scenario's, else the
        // documented built-ins — and its MCP servers' tools.
        let mut pool = tools::session_pool(
            spec.session.tools.as_deref(),
            spec.session.cross_session_messaging,
            &spec.session.mcp,
        );
        // SPAWN-8: which built-ins the env leaves registered.
        let builtin_env = subsim_rules::spawn::BuiltinEnv {
            disable_explore_plan: config.disable_explore_plan,
            sdk_disable_builtins: config.disable_builtins,
        };
        // MAIN-1…6: what main becomes when the session runs as an agent.
        let (main_agent_key, main_agent, main_servers) =
            main_agent_of(&spec, &config, builtin_env, &mut pool);
        // MAIN-1: main runs on the agent's model, and subagents that inherit the main
        // model inherit that one.
        if let Some((model, _)) = &main_agent.model {
            spec.session.model = model.clone();
        }
        let session = &spec.session;
        let seed = session.seed;
        let main_model: Rc<str> = Rc::from(session.model.as_str());
        let default_program = default_behavior();
        let (types, type_index) = agent_types(&spec, &config, builtin_env, &default_program);
        let limits = session.limits;
        let mut kernel = Kernel {
            session: Session::new(
                &spec,
                config,
                notes,
                pool,
                (types, type_index),
                &main_servers,
                default_program,
            ),
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
                think_from: Rc::from(spec.user.think.spelled()),
                thought: 0,
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
                rng: stream(seed, 0, purpose::LOAD_BEHAVIOR),
                retry_rng: stream(seed, 0, purpose::RETRY),
            },
            memos: decide::Memos::default(),
            draws: Draws {
                exp: crate::dist::ExpCache::default(),
                streams: streams::Streams::new(seed),
                spelled: Vec::new(),
            },
            trace: Trace::new(out.sink, out.summary, limits),
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
        kernel.add_main(&spec, main_agent, main_agent_key.as_deref(), main_model);
        kernel
    }

    /// The main conversation, agent 0 in slot 0: its tools are the rules' answer (MAIN-1 /
    /// TOOLS-19 / TOOLS-17), plus, for an agent (`main_agent_key`, MAIN-4), its inline
    /// `mcpServers`, which connect at startup for main too (MCP-2); MAIN-3's warning when
    /// the agent is not found.
    fn add_main(
        &mut self,
        spec: &SimSpec,
        main_agent: context::MainAgent,
        main_agent_key: Option<&str>,
        main_model: Rc<str>,
    ) {
        // The main conversation is agent 0 in slot 0. Its tools are the rules' answer
        // (MAIN-1 / TOOLS-19 / TOOLS-17), from a pool that holds, for an agent, its inline
        // `mcpServers`' tools (MCP-2, above).
        let main_tools: Vec<Rc<str>> = main_agent
            .tools
            .tools
            .iter()
            .map(|tool| Rc::from(tool.as_str()))
            .collect();
        let mut main_type: Rc<str> = Rc::from("main");
        if let Some(warning) = main_agent.warning {
            self.session.notes.push(ConfigNote {
                rule: id::MAIN_3,
                text: warning,
            });
        } else if let Some(index) =
            main_agent_key.and_then(|key| self.session.type_index.get(key).copied())
        {
            self.session.main_agent = Some(index);
            main_type = self.session.types[index].name.clone();
        }
        let main_tools: ToolList = main_tools.into();
        let main_profile = RunProfile {
            agent_type: main_type,
            model: main_model,
            model_rule: id::MAIN_1,
            effort: None,
            permission_mode: self.session.config.permission_mode,
            tools: main_tools,
            context: Rc::from(Vec::new()),
            mcp_servers: self.session.mcp.clone(),
            skills: None,
            teammate: false,
        };
        let main_profile = Rc::new(main_profile);
        let main_program = spec.main.clone();
        let start = Start {
            caller: AgentRef::MAIN,
            caller_slot: 0,
            name: None,
            type_index: None,
            depth: 0,
            mode: Mode::Foreground,
            permission_mode: self.session.config.permission_mode,
            fork: false,
            invocation_model: None,
            classifier: None,
            teammate: false,
            agent_call: false,
            from_load: false,
        };
        self.agents.add(
            &start,
            Made {
                id: MAIN,
                profile: &main_profile,
                program: &main_program,
                one_shot: false,
                max_turns: None,
            },
        );
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
            main_isolated: self.session.main_isolated,
        };
        self.emit(None, kind);
        self.announce_definitions();
        self.announce_session_agent_hooks();
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
    /// not weigh on every wake.
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

    /// Writes `kind` now under `rule` (`Trace::event`).
    fn emit(&mut self, rule: Option<RuleId>, kind: EventKind) {
        self.trace.event(self.clock.now, rule, kind);
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

    /// The safety limit `limit` (its bound `value`) stops the run now (`max_time` at its
    /// bound itself), unless one already has.
    #[cold]
    #[inline(never)]
    fn hit_limit(&mut self, limit: Limit, value: u64) {
        if self.trace.limit.is_none() && limit == Limit::MaxTime {
            self.clock.now = self.trace.limits.max_time;
        }
        self.trace.limit_reached(self.clock.now, limit, value);
    }

    /// One wake's work. Inlined into the run loop: out of line (as the compiler leaves it
    /// once the loop is generic over `TIES`) every wake pays a call, a frame and saved
    /// registers (docs/PERFORMANCE.md, "Choices that need a benchmark").
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
                    Block::Foreground
                    | Block::Prompt(..)
                    | Block::Agent
                    | Block::Children
                    | Block::Notification
                    | Block::EndChildren
                    | Block::EndBash
                    | Block::Idle => return,
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

    /// A duration of the run in `slot` for `what`: a fixed one as it is, else drawn from
    /// the run's stream (a load run's: the load runs' shared stream) and traced as a
    /// `duration_drawn` (issue #32).
    fn sample(&mut self, slot: u32, dist: &Dist, what: DrawnFor) -> u64 {
        if let Dist::Const(value) = dist {
            return *value;
        }
        let agent = self.agents.get_mut(slot);
        let (micros, on) = if agent.from_load {
            (
                self.draws.exp.sample(dist, &mut self.load.rng),
                DrawnOn::Load,
            )
        } else {
            let exp = &mut self.draws.exp;
            let micros = self
                .draws
                .streams
                .draw(agent.id, &mut agent.rng_words, |rng| exp.sample(dist, rng));
            (micros, DrawnOn::Run)
        };
        if self.trace.builds_events() {
            self.draw_written(slot, dist, what, micros, on);
        } else {
            // Only a summary (W1's path): the draw is counted, nothing is built.
            self.trace.draw_counted(self.clock.now);
        }
        micros
    }

    /// The `duration_drawn` of a draw of the run in `slot`, for a sink (out of line: a
    /// run with only a summary counts it, `Trace::draw_counted`).
    #[inline(never)]
    fn draw_written(&mut self, slot: u32, dist: &Dist, what: DrawnFor, micros: u64, on: DrawnOn) {
        let agent = self.agents.get(slot);
        let drawn = trace::Drawn {
            agent: Some((agent.id, &agent.name)),
            arrival: None,
            what,
            drawn_us: micros,
            drawn_from: Some(self.draws.spelled(dist)),
            drawn_on: on,
        };
        self.trace.duration_drawn(self.clock.now, drawn);
    }
}

/// The agent types (SPAWN-8's registered built-ins, less those a definition of the same
/// name overrides, SPAWN-10; then the definitions, DEF-5: a plugin's by its scoped id) and
/// their index by name; a type without a `behavior` runs `default_program`.
fn agent_types(
    spec: &SimSpec,
    config: &SessionConfig,
    builtin_env: subsim_rules::spawn::BuiltinEnv,
    default_program: &Program,
) -> (Vec<TypeDef>, BTreeMap<String, usize>) {
    let session = &spec.session;
    let mut types = Vec::new();
    let mut type_index = BTreeMap::new();
    let mut add = |def: AgentDef, types: &mut Vec<TypeDef>| {
        let name: Rc<str> = Rc::from(def.name.as_str());
        // RESUME-3: the one-shot built-ins (a custom Explore is not one, SPAWN-10).
        let (one_shot, _) = resume::one_shot_type(def.scope == Scope::BuiltIn, &def.name);
        let models = ModelSettings::from_session(session);
        let choice = models.choose(config, &def, None, false, false);
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
            own_hooks: observe::OwnHooks::of(&def, &session.trusted_dirs, config),
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
    (types, type_index)
}

impl Session {
    /// The session `spec` configures (`config`, with `notes` about how it was read), its
    /// tool `pool`, its agent types and their index, and `default_program` shared.
    fn new(
        spec: &SimSpec,
        config: SessionConfig,
        notes: Vec<ConfigNote>,
        pool: Vec<String>,
        (types, type_index): (Vec<TypeDef>, BTreeMap<String, usize>),
        main_servers: &[crate::spec::McpServerRef],
        default_program: Program,
    ) -> Session {
        let session = &spec.session;
        Session {
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
            step_tools: subsim_rules::toolcall::ToolStep::ALL
                .map(|step| Rc::from(step.facts().tool.unwrap_or(""))),
            fallback_models: session.fallback_models.clone(),
            continuation_budget: session.continuations,
            classifier: session.classifier,
            auto_memory: session.auto_memory,
            trusted_dirs: session.trusted_dirs.clone(),
            definitions: spec.definitions.clone(),
            mcp: session
                .mcp
                .keys()
                .chain(main_servers.iter().map(|server| &server.name))
                .map(|name| Rc::from(name.as_str()))
                .collect(),
            mcp_policy: session.mcp_policy.clone(),
            appended_prompt: session.appended_prompt,
            requires_user_interaction: session
                .requires_user_interaction
                .iter()
                .map(|tool| Rc::from(tool.as_str()))
                .collect(),
            skills: session.skills.clone(),
            main_isolated: session.main_isolated,
            effort_env: session.env.get(env::EFFORT_LEVEL).cloned(),
            effort: session.effort.clone(),
            refusal_texts: spawn::refusal_texts(),
            fork_arc: Rc::from(subsim_rules::spawn::FORK_TYPE),
            default_program,
            default_resume_program: default_resume_behavior(),
        }
    }
}

/// MAIN-1…6: what main becomes when the session runs as an agent — the rules decide its
/// tools and model (`context::main_agent`), MAIN-4 / Q-32 how its name is found
/// ([`main_agent_key`]) — with the key of the definition it runs, if any.
fn main_agent_of(
    spec: &SimSpec,
    config: &SessionConfig,
    builtin_env: subsim_rules::spawn::BuiltinEnv,
    pool: &mut Vec<String>,
) -> (
    Option<String>,
    context::MainAgent,
    Vec<crate::spec::McpServerRef>,
) {
    let main_agent_key = main_agent_key(spec, config, builtin_env);
    let main_def = main_agent_key
        .as_deref()
        .and_then(|key| match spec.agents.get(key) {
            Some(def) => Some(def.clone()),
            None => model::BuiltIn::from_name(key).map(AgentDef::built_in),
        });
    // MCP-2 / MCP-3: the session agent's inline servers connect at start alongside the
    // session's own, under its file's folder's trust, and are main's servers from then
    // on: main's subagents inherit their tools (TOOLS-1).
    let main_servers = main_def
        .as_ref()
        .map(|def| session_agent_servers(def, &spec.session, config))
        .unwrap_or_default();
    for server in &main_servers {
        pool.extend(decide::server_tools(server));
    }
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
        pool,
        auto_memory: spec.session.auto_memory,
        gates: config.gates,
    });
    (main_agent_key, main_agent, main_servers)
}

/// MCP-2 / MCP-3: the inline servers of the session agent `def` that connect at start
/// ([`context::session_agent_servers`]).
fn session_agent_servers(
    def: &AgentDef,
    session: &crate::spec::SessionSpec,
    config: &SessionConfig,
) -> Vec<crate::spec::McpServerRef> {
    let servers = decide::mcp_servers(def);
    let source_dir = observe::trust_folder(def);
    let configured: Vec<String> = session.mcp.keys().cloned().collect();
    let input = context::McpInput {
        servers: &servers,
        scope: def.scope,
        source_dir: Some(&source_dir),
        trusted_dirs: &session.trusted_dirs,
        configured: &configured,
        policy: session.mcp_policy.policy(),
    };
    let (connected, _, _) = context::session_agent_servers(&input, &config.gates);
    def.mcp_servers
        .iter()
        .filter(|server| connected.contains(&server.name.as_str()))
        .cloned()
        .collect()
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
        .map(|(key, def)| decide::rules_definition(key, def.scope))
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
