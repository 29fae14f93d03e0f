//! Property tests over generated scenarios: the invariants the rules promise hold for any
//! mix of spawns, nesting, prompts, resumes, stops and `/subtask` forks.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use proptest::prelude::*;
use subsim_engine::dist::Dist;
use subsim_engine::event::{Event, EventKind};
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

fn scenario() -> impl Strategy<Value = SimSpec> {
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
    let mut cap = None;
    let mut depth_limit = 0;
    let mut last_time = SimTime::ZERO;
    let mut running_runs: BTreeSet<String> = BTreeSet::new();
    // Agents whose last run ended and still owe their one result notification.
    let mut owed: BTreeMap<String, u32> = BTreeMap::new();
    let mut requested = BTreeSet::new();
    let mut answered = BTreeSet::new();
    let mut withdrawn = BTreeSet::new();
    let mut unchecked_starts = 0u32;
    // RESUME-10/11: agents the person stopped, until the person resumes them.
    let mut user_stopped: BTreeSet<String> = BTreeSet::new();
    // RESUME-12/13: the agent each name first reached in the conversation.
    let mut reached: BTreeMap<String, String> = BTreeMap::new();
    // The name-reuse check exists from v2.1.199 (RESUME-12).
    let mut name_check = false;
    // ERR-4: failed background runs that still owe their report with the last output.
    let mut owed_report: BTreeSet<String> = BTreeSet::new();
    for (index, event) in events.iter().enumerate() {
        if event.seq != index as u64 {
            return Err(format!("seq {} at position {index}", event.seq));
        }
        if event.t < last_time {
            return Err(format!("time went back at #{}", event.seq));
        }
        last_time = event.t;
        match &event.kind {
            EventKind::SessionStarted {
                version,
                cap: c,
                depth_limit: d,
                ..
            } => {
                name_check = version
                    .parse::<Version>()
                    .is_ok_and(|version| version >= Version::v2_1(199));
                cap = *c;
                depth_limit = *d;
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
                    reached.entry(name.to_string()).or_insert(agent.id_string());
                }
                if !running_runs.insert(agent.id_string()) {
                    return Err(format!(
                        "#{}: {} started twice",
                        event.seq,
                        agent.id_string()
                    ));
                }
                if !*cap_checked {
                    unchecked_starts += 1;
                }
                if let Some(cap) = cap {
                    if *cap_checked && *running > cap {
                        return Err(format!(
                            "#{}: cap-checked start left {running} > {cap} running",
                            event.seq
                        ));
                    }
                    if unchecked_starts == 0 && *running > cap {
                        return Err(format!(
                            "#{}: {running} > {cap} with no resume or /subtask",
                            event.seq
                        ));
                    }
                }
                let bound = depth_limit.max(1);
                if *depth > bound && !*fork {
                    return Err(format!(
                        "#{}: depth {depth} beyond limit {bound}",
                        event.seq
                    ));
                }
            }
            EventKind::AgentResumed { agent, .. } => {
                let id = agent.id_string();
                // A resume the person starts (typing into the transcript) clears the stop;
                // Claude's SendMessage must never resume a user-stopped agent first.
                if matches!(event.rule, Some("RESUME-11") | Some("Q-7")) {
                    user_stopped.remove(&id);
                } else {
                    check(!user_stopped.contains(&id), || {
                        format!(
                            "#{}: Claude resumed {id}, which the person stopped",
                            event.seq
                        )
                    })?;
                    if let Some(name) = &agent.name {
                        let first = reached.entry(name.to_string()).or_insert(id.clone());
                        check(!name_check || *first == id, || {
                            format!(
                                "#{}: name {name} reached {first} before, now {id}",
                                event.seq
                            )
                        })?;
                    }
                }
                unchecked_starts += 1;
                if owed.get(&agent.id_string()).copied().unwrap_or(0) > 0 {
                    return Err(format!(
                        "#{}: resumed before its result was delivered",
                        event.seq
                    ));
                }
                if !running_runs.insert(agent.id_string()) {
                    return Err(format!(
                        "#{}: {} resumed while running",
                        event.seq,
                        agent.id_string()
                    ));
                }
            }
            EventKind::AgentFinished { agent, outcome, .. } => {
                if *outcome == subsim_engine::Outcome::Cancelled {
                    user_stopped.insert(agent.id_string());
                }
                if *outcome == subsim_engine::Outcome::Failed && event.rule == Some("ERR-4") {
                    owed_report.insert(agent.id_string());
                }
                if !running_runs.remove(&agent.id_string()) {
                    return Err(format!(
                        "#{}: {} ended a run it was not running",
                        event.seq,
                        agent.id_string()
                    ));
                }
                *owed.entry(agent.id_string()).or_default() += 1;
            }
            EventKind::ReportDelivered { agent, .. } => {
                owed_report.remove(&agent.id_string());
            }
            // Claude's SendMessage to a running agent (Q-8); the person typing into a
            // transcript picks the agent on screen, not by name.
            EventKind::MessageDelivered { to, .. } if to.id != 0 && event.rule == Some("Q-8") => {
                if let Some(name) = &to.name {
                    let id = to.id_string();
                    let first = reached.entry(name.to_string()).or_insert(id.clone());
                    check(!name_check || *first == id, || {
                        format!(
                            "#{}: name {name} reached {first} before, now {id}",
                            event.seq
                        )
                    })?;
                }
            }
            EventKind::ConversationCleared => reached.clear(),
            EventKind::Notification { from, what, .. } => {
                if *what == Notice::Failed {
                    check(!owed_report.contains(&from.id_string()), || {
                        format!(
                            "#{}: {} failed in the background without its last output",
                            event.seq,
                            from.id_string()
                        )
                    })?;
                }
                if matches!(
                    *what,
                    Notice::Result | Notice::Completion | Notice::Failed | Notice::Stopped
                ) {
                    let count = owed.entry(from.id_string()).or_default();
                    if *count == 0 {
                        return Err(format!(
                            "#{}: a second result notification from {}",
                            event.seq,
                            from.id_string()
                        ));
                    }
                    *count -= 1;
                }
            }
            EventKind::PermissionRequested {
                prompt,
                auto_denied: false,
                ..
            } => {
                requested.insert(*prompt);
            }
            EventKind::PermissionAnswered { prompt, .. } => {
                let fresh = requested.contains(prompt) && !withdrawn.contains(prompt);
                let first_answer = answered.insert(*prompt);
                check(fresh && first_answer, || {
                    format!(
                        "#{}: prompt {prompt} answered twice or after withdrawal",
                        event.seq
                    )
                })?;
            }
            EventKind::PermissionWithdrawn { prompt, .. } => {
                let unanswered = !answered.contains(prompt);
                let first_withdrawal = withdrawn.insert(*prompt);
                check(unanswered && first_withdrawal, || {
                    format!("#{}: prompt {prompt} withdrawn after its answer", event.seq)
                })?;
            }
            _ => {}
        }
    }
    if let Some((agent, _)) = owed.iter().find(|(_, count)| **count > 0) {
        return Err(format!(
            "{agent} finished without its result being delivered"
        ));
    }
    if let Some(agent) = running_runs.iter().next() {
        return Err(format!("{agent} never ended"));
    }
    Ok(())
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
