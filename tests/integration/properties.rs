//! Property tests over generated scenarios: the invariants the rules promise hold for any
//! mix of spawns, nesting, prompts, resumes, stops and `/subtask` forks.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use proptest::prelude::*;
use subsim_engine::dist::Dist;
use subsim_engine::event::{AgentRef, Event, EventKind};
use subsim_engine::sink::Collect;
use subsim_engine::spec::{
    ActionKind, Answer, ApiError, FailSpec, SendSpec, SimSpec, SpawnSpec, Step, ToolCall,
    UserAction, UserSpec, WaitTarget,
};
use subsim_engine::{SimTime, Simulation};
use subsim_rules::notify::Notice;
use subsim_rules::{SessionKind, Version};

const NAMES: [&str; 4] = ["r", "s", "t", "u"];

fn leaf_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1u64..20).prop_map(|s| Step::Work(Dist::fixed(s * 1_000_000))),
        (1u64..5).prop_map(|s| Step::Work(Dist::Exp {
            mean: s as f64 * 1e6
        })),
        any::<bool>().prop_map(|prompt| Step::Tool(ToolCall {
            name: "Bash".into(),
            input: Some("make test".into()),
            prompt: Some(prompt),
            duration: None,
            ..ToolCall::default()
        })),
        (1u64..10).prop_map(|s| Step::BashBackground(Dist::fixed(s * 1_000_000))),
        Just(Step::WaitFor(WaitTarget::Children)),
        (0usize..4).prop_map(|i| Step::Send(SendSpec {
            to: NAMES[i].into(),
            message: "go on".into(),
            behavior: None
        })),
        (0usize..4).prop_map(|i| Step::Stop(NAMES[i].into())),
        Just(Step::Report("partial findings".into())),
        (any::<bool>(), any::<bool>()).prop_map(|(after_output, mid_stream)| Step::Fail(
            FailSpec {
                api_error: ApiError::Server,
                after_output,
                mid_stream,
                recovers_after: None,
                tool_calls: false,
            }
        )),
    ]
}

fn program() -> impl Strategy<Value = Vec<Step>> {
    let leaf = prop::collection::vec(leaf_step(), 1..5);
    leaf.prop_recursive(4, 96, 8, |inner| {
        prop::collection::vec(
            prop_oneof![
                3 => leaf_step(),
                3 => (0usize..4, 1u32..6, any::<Option<bool>>(), any::<bool>(), inner.clone()).prop_map(
                    |(name, count, background, needs_result, behavior)| Step::Spawn(SpawnSpec {
                        agent: Some("general-purpose".into()),
                        name: Some(NAMES[name].into()),
                        count,
                        background,
                        needs_result,
                        behavior: Some(Rc::from(behavior)),
                        ..SpawnSpec::default()
                    })
                ),
                1 => inner.clone().prop_map(|behavior| Step::Spawn(SpawnSpec {
                    fork: true,
                    name: Some("f".into()),
                    count: 1,
                    behavior: Some(Rc::from(behavior)),
                    ..SpawnSpec::default()
                })),
                1 => (1u32..3, inner).prop_map(|(times, steps)| Step::Repeat { times, steps: Rc::from(steps) }),
            ],
            1..8,
        )
    })
}

fn action() -> impl Strategy<Value = UserAction> {
    (1u64..30, 0usize..4, 0u8..6).prop_map(|(at, name, which)| UserAction {
        at: SimTime::from_secs(at),
        kind: match which {
            0 | 4 => ActionKind::Stop(NAMES[name].into()),
            5 => ActionKind::Clear,
            1 => ActionKind::Subtask {
                task: "draft the tests".into(),
                name: None,
                behavior: None,
            },
            2 => ActionKind::CtrlB,
            _ => ActionKind::TypeTo {
                to: NAMES[name].into(),
                message: "go on".into(),
                behavior: None,
            },
        },
    })
}

pub(crate) fn scenario() -> impl Strategy<Value = SimSpec> {
    (
        program(),
        prop::collection::vec(action(), 0..6),
        0u8..3,
        prop::sample::select(vec![185u32, 200, 216, 217, 219, 231, 292]),
        1u32..6,
        1u32..5,
        any::<u64>(),
        0u8..3,
    )
        .prop_map(|(main, actions, kind, version, cap, depth, seed, answer)| {
            let mut spec = SimSpec::minimal("generated");
            spec.main = Rc::from(main);
            spec.session.kind = [
                SessionKind::Interactive,
                SessionKind::Headless,
                SessionKind::Sdk,
            ][kind as usize];
            spec.session.version = Version::v2_1(version);
            spec.session.seed = seed;
            spec.session.env.insert(
                "CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS".into(),
                cap.to_string(),
            );
            spec.session.env.insert(
                "CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH".into(),
                depth.to_string(),
            );
            spec.user = UserSpec {
                answer: [Answer::Approve, Answer::Deny, Answer::ApproveSession][answer as usize],
                think: Dist::Exp { mean: 2e6 },
                actions,
                answers: Vec::new(),
            };
            spec
        })
}

/// `Ok` if `holds`, else the message.
fn check(holds: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if holds {
        Ok(())
    } else {
        Err(message())
    }
}

fn check_invariants(events: &[Event]) -> Result<(), String> {
    let mut ledger = Ledger::new();
    for (index, event) in events.iter().enumerate() {
        ledger.event(index, event)?;
    }
    ledger.end()
}

/// What [`check_invariants`] keeps between events.
struct Ledger {
    cap: Option<u32>,
    depth_limit: u32,
    last_time: SimTime,
    running_runs: BTreeSet<String>,
    /// Agents whose last run ended and still owe their one result notification.
    owed: BTreeMap<String, u32>,
    requested: BTreeSet<u64>,
    answered: BTreeSet<u64>,
    withdrawn: BTreeSet<u64>,
    unchecked_starts: u32,
    /// RESUME-10/11: agents the person stopped, until the person resumes them.
    user_stopped: BTreeSet<String>,
    /// RESUME-12/13: the agent each name first reached in the conversation.
    reached: BTreeMap<String, String>,
    /// The name-reuse check exists from v2.1.199 (RESUME-12).
    name_check: bool,
    /// ERR-4: failed background runs that still owe their report with the last output.
    owed_report: BTreeSet<String>,
}

impl Ledger {
    fn new() -> Ledger {
        Ledger {
            cap: None,
            depth_limit: 0,
            last_time: SimTime::ZERO,
            running_runs: BTreeSet::new(),
            owed: BTreeMap::new(),
            requested: BTreeSet::new(),
            answered: BTreeSet::new(),
            withdrawn: BTreeSet::new(),
            unchecked_starts: 0,
            user_stopped: BTreeSet::new(),
            reached: BTreeMap::new(),
            name_check: false,
            owed_report: BTreeSet::new(),
        }
    }

    /// The event at `index` of the trace, checked against what came before it.
    fn event(&mut self, index: usize, event: &Event) -> Result<(), String> {
        if event.seq != index as u64 {
            return Err(format!("seq {} at position {index}", event.seq));
        }
        if event.t < self.last_time {
            return Err(format!("time went back at #{}", event.seq));
        }
        self.last_time = event.t;
        match &event.kind {
            EventKind::SessionStarted {
                version,
                cap,
                depth_limit,
                ..
            } => {
                self.name_check = version
                    .parse::<Version>()
                    .is_ok_and(|version| version >= Version::v2_1(199));
                self.cap = *cap;
                self.depth_limit = *depth_limit;
            }
            EventKind::AgentStarted {
                agent,
                depth,
                running,
                cap_checked,
                fork,
                ..
            } => {
                if let Some(name) = &agent.name {
                    self.reached
                        .entry(name.to_string())
                        .or_insert(agent.id_string());
                }
                self.started(event.seq, &agent.id_string(), *running, *cap_checked)?;
                let bound = self.depth_limit.max(1);
                if *depth > bound && !*fork {
                    return Err(format!(
                        "#{}: depth {depth} beyond limit {bound}",
                        event.seq
                    ));
                }
            }
            EventKind::AgentResumed { agent, .. } => self.resumed(event, agent)?,
            EventKind::AgentFinished { agent, outcome, .. } => {
                if *outcome == subsim_engine::Outcome::Cancelled {
                    self.user_stopped.insert(agent.id_string());
                }
                if *outcome == subsim_engine::Outcome::Failed && event.rule == Some("ERR-4") {
                    self.owed_report.insert(agent.id_string());
                }
                if !self.running_runs.remove(&agent.id_string()) {
                    return Err(format!(
                        "#{}: {} ended a run it was not running",
                        event.seq,
                        agent.id_string()
                    ));
                }
                *self.owed.entry(agent.id_string()).or_default() += 1;
            }
            EventKind::ReportDelivered { agent, .. } => {
                self.owed_report.remove(&agent.id_string());
            }
            // Claude's SendMessage to a running agent (Q-8); the person typing into a
            // transcript picks the agent on screen, not by name.
            EventKind::MessageDelivered { to, .. } if to.id != 0 && event.rule == Some("Q-8") => {
                self.reached_by_name(event.seq, to)?;
            }
            EventKind::ConversationCleared => self.reached.clear(),
            EventKind::Notification { from, what, .. } => {
                self.notified(event.seq, &from.id_string(), *what)?;
            }
            EventKind::PermissionRequested {
                prompt,
                auto_denied: false,
                ..
            } => {
                self.requested.insert(*prompt);
            }
            EventKind::PermissionAnswered { prompt, .. } => {
                let fresh = self.requested.contains(prompt) && !self.withdrawn.contains(prompt);
                let first_answer = self.answered.insert(*prompt);
                check(fresh && first_answer, || {
                    format!(
                        "#{}: prompt {prompt} answered twice or after withdrawal",
                        event.seq
                    )
                })?;
            }
            EventKind::PermissionWithdrawn { prompt, .. } => {
                let unanswered = !self.answered.contains(prompt);
                let first_withdrawal = self.withdrawn.insert(*prompt);
                check(unanswered && first_withdrawal, || {
                    format!("#{}: prompt {prompt} withdrawn after its answer", event.seq)
                })?;
            }
            _ => {}
        }
        Ok(())
    }

    /// A start of `id` (`seq`): not twice, and within the cap unless a resume or
    /// `/subtask` (a start the cap did not check) came before.
    fn started(
        &mut self,
        seq: u64,
        id: &str,
        running: u32,
        cap_checked: bool,
    ) -> Result<(), String> {
        if !self.running_runs.insert(id.to_string()) {
            return Err(format!("#{seq}: {id} started twice"));
        }
        if !cap_checked {
            self.unchecked_starts += 1;
        }
        if let Some(cap) = self.cap {
            if cap_checked && running > cap {
                return Err(format!(
                    "#{seq}: cap-checked start left {running} > {cap} running"
                ));
            }
            if self.unchecked_starts == 0 && running > cap {
                return Err(format!(
                    "#{seq}: {running} > {cap} with no resume or /subtask"
                ));
            }
        }
        Ok(())
    }

    /// A resume of `agent`: never by Claude of an agent the person stopped (RESUME-10/11),
    /// never before its result was delivered, never while it runs.
    fn resumed(&mut self, event: &Event, agent: &AgentRef) -> Result<(), String> {
        let id = agent.id_string();
        // A resume the person starts (typing into the transcript) clears the stop;
        // Claude's SendMessage must never resume a user-stopped agent first.
        if matches!(event.rule, Some("RESUME-11") | Some("Q-7")) {
            self.user_stopped.remove(&id);
        } else {
            check(!self.user_stopped.contains(&id), || {
                format!(
                    "#{}: Claude resumed {id}, which the person stopped",
                    event.seq
                )
            })?;
            self.reached_by_name(event.seq, agent)?;
        }
        self.unchecked_starts += 1;
        if self.owed.get(&id).copied().unwrap_or(0) > 0 {
            return Err(format!(
                "#{}: resumed before its result was delivered",
                event.seq
            ));
        }
        if !self.running_runs.insert(id.clone()) {
            return Err(format!("#{}: {id} resumed while running", event.seq));
        }
        Ok(())
    }

    /// RESUME-12/13: a name reaches the agent it first reached (from v2.1.199).
    fn reached_by_name(&mut self, seq: u64, agent: &AgentRef) -> Result<(), String> {
        let Some(name) = &agent.name else {
            return Ok(());
        };
        let id = agent.id_string();
        let first = self.reached.entry(name.to_string()).or_insert(id.clone());
        check(!self.name_check || *first == id, || {
            format!("#{seq}: name {name} reached {first} before, now {id}")
        })
    }

    /// A notification from `from`: a failure carries the last output (ERR-4), and each
    /// ended run sends one result notification.
    fn notified(&mut self, seq: u64, from: &str, what: Notice) -> Result<(), String> {
        if what == Notice::Failed {
            check(!self.owed_report.contains(from), || {
                format!("#{seq}: {from} failed in the background without its last output")
            })?;
        }
        if matches!(
            what,
            Notice::Result | Notice::Completion | Notice::Failed | Notice::Stopped
        ) {
            let count = self.owed.entry(from.to_string()).or_default();
            if *count == 0 {
                return Err(format!("#{seq}: a second result notification from {from}"));
            }
            *count -= 1;
        }
        Ok(())
    }

    /// At the end of the trace: every result delivered, every run ended.
    fn end(&self) -> Result<(), String> {
        if let Some((agent, _)) = self.owed.iter().find(|(_, count)| **count > 0) {
            return Err(format!(
                "{agent} finished without its result being delivered"
            ));
        }
        if let Some(agent) = self.running_runs.iter().next() {
            return Err(format!("{agent} never ended"));
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_for_generated_scenarios(spec in scenario()) {
        let mut trace = Collect::default();
        let report = Simulation::new(spec).run(&mut trace);
        prop_assert!(report.limit.is_none(), "hit {:?}", report.limit);
        if let Err(problem) = check_invariants(&trace.events) {
            let dump: Vec<String> = trace.events.iter().map(|e| format!("{e:?}")).collect();
            prop_assert!(false, "{problem}\n{}", dump.join("\n"));
        }
    }
}
