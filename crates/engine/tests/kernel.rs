//! Kernel tests on specs built in code: the core rules, observed in the trace.

use std::rc::Rc;

use subsim_engine::dist::Dist;
use subsim_engine::event::{Event, EventKind};
use subsim_engine::sink::Collect;
use subsim_engine::spec::*;
use subsim_engine::{SimTime, Simulation};

fn secs(s: u64) -> Dist {
    Dist::fixed(s * 1_000_000)
}

fn run(spec: SimSpec) -> Vec<Event> {
    let mut trace = Collect::default();
    let report = Simulation::new(spec).run(&mut trace);
    assert!(report.limit.is_none(), "{:?}", report.limit);
    trace.events
}

fn kinds<'a>(events: &'a [Event], kind: &str) -> Vec<&'a Event> {
    events.iter().filter(|e| e.kind.name() == kind).collect()
}

fn spawn(name: &str, count: u32, behavior: Vec<Step>) -> Step {
    Step::Spawn(SpawnSpec {
        agent: Some("general-purpose".into()),
        name: Some(name.into()),
        count,
        behavior: Some(Rc::from(behavior)),
        ..SpawnSpec::default()
    })
}

#[test]
fn twenty_five_background_spawns_hit_the_cap() {
    let mut spec = SimSpec::minimal("cap");
    spec.main = Rc::from(vec![spawn("r", 25, vec![Step::Work(secs(30))])]);
    let events = run(spec);
    let rejected = kinds(&events, "spawn_rejected");
    assert_eq!(rejected.len(), 5);
    assert_eq!(rejected[0].rule, Some("CAP-1"));
    assert_eq!(kinds(&events, "agent_started").len(), 20);
    let notifications = kinds(&events, "notification");
    assert_eq!(notifications.len(), 20);
    assert!(notifications.iter().all(|e| e.rule == Some("NOTIFY-3")));
    let last_finish = kinds(&events, "agent_finished").last().unwrap().t;
    assert_eq!(last_finish, SimTime::from_secs(30));
    // PANEL-2: the footer hint that followed the last success goes 30 s later.
    let last = events.last().unwrap();
    assert_eq!(
        (last.kind.name(), last.t),
        ("panel_changed", SimTime::from_secs(60))
    );
}

#[test]
fn resume_takes_a_slot_past_the_cap() {
    let mut spec = SimSpec::minimal("resume");
    spec.session
        .env
        .insert("CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS".into(), "2".into());
    spec.main = Rc::from(vec![
        spawn("early", 1, vec![Step::Work(secs(1))]),
        Step::Sleep(secs(2)),
        spawn("long", 2, vec![Step::Work(secs(30))]),
        Step::Send(SendSpec {
            to: "early".into(),
            message: "more".into(),
            behavior: None,
        }),
        spawn("late", 1, vec![Step::Work(secs(1))]),
    ]);
    let events = run(spec);
    let resumed = kinds(&events, "agent_resumed");
    assert_eq!(resumed.len(), 1);
    match &resumed[0].kind {
        EventKind::AgentResumed {
            running,
            cap_checked,
            ..
        } => {
            assert_eq!(*running, 3);
            assert!(!cap_checked);
        }
        _ => unreachable!(),
    }
    let rejected = kinds(&events, "spawn_rejected");
    assert_eq!(rejected.len(), 1, "late is rejected while 3 > 2 run");
}

#[test]
fn nesting_stops_at_the_depth_limit() {
    let mut spec = SimSpec::minimal("depth");
    let level3 = vec![spawn("l4", 1, vec![Step::Work(secs(1))])];
    let level2 = vec![spawn("l3", 1, level3)];
    let level1 = vec![spawn("l2", 1, level2)];
    spec.main = Rc::from(vec![spawn("l1", 1, level1)]);
    let events = run(spec);
    assert_eq!(kinds(&events, "agent_started").len(), 3);
    let rejected = kinds(&events, "spawn_rejected");
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0].rule, Some("DEPTH-3"));
    // NOTIFY-6: launchers wait; every agent finishes completed.
    let finished = kinds(&events, "agent_finished");
    assert_eq!(finished.len(), 3);
}

#[test]
fn background_prompt_goes_to_main_and_waits_for_the_person() {
    let mut spec = SimSpec::minimal("prompt");
    spec.user.think = secs(3);
    spec.main = Rc::from(vec![spawn(
        "b",
        1,
        vec![
            Step::Tool(ToolCall {
                name: "Bash".into(),
                input: Some("make".into()),
                prompt: None,
                duration: None,
                ..ToolCall::default()
            }),
            Step::Work(secs(1)),
        ],
    )]);
    let events = run(spec);
    let requested = kinds(&events, "permission_requested");
    assert_eq!(requested.len(), 1);
    assert_eq!(requested[0].rule, Some("PERM-4"));
    let answered = kinds(&events, "permission_answered");
    assert_eq!(answered[0].t, SimTime::from_secs(3));
    let finished = kinds(&events, "agent_finished");
    assert_eq!(finished[0].t, SimTime::from_secs(4));
}

#[test]
fn before_2_1_186_background_prompts_are_auto_denied() {
    let mut spec = SimSpec::minimal("auto-deny");
    spec.session.version = subsim_rules::Version::v2_1(185);
    spec.main = Rc::from(vec![spawn(
        "b",
        1,
        vec![Step::Tool(ToolCall {
            name: "Bash".into(),
            input: None,
            prompt: None,
            duration: None,
            ..ToolCall::default()
        })],
    )]);
    spec.session
        .env
        .insert("CLAUDE_CODE_FORK_SUBAGENT".into(), "1".into());
    let events = run(spec);
    let requested = kinds(&events, "permission_requested");
    assert_eq!(requested[0].rule, Some("PERM-5"));
    assert!(kinds(&events, "permission_answered").is_empty());
}

#[test]
fn headless_foreground_blocks_main_until_done() {
    let mut spec = SimSpec::minimal("fg");
    spec.session.kind = subsim_rules::SessionKind::Headless;
    spec.main = Rc::from(vec![
        Step::Spawn(SpawnSpec {
            agent: Some("general-purpose".into()),
            name: Some("f".into()),
            count: 1,
            needs_result: true,
            behavior: Some(Rc::from(vec![Step::Work(secs(5))])),
            ..SpawnSpec::default()
        }),
        spawn("after", 1, vec![Step::Work(secs(1))]),
    ]);
    let events = run(spec);
    let started = kinds(&events, "agent_started");
    assert_eq!(
        started[1].t,
        SimTime::from_secs(5),
        "main waited for the foreground run"
    );
    assert_eq!(kinds(&events, "notification")[0].rule, Some("NOTIFY-2"));
}

#[test]
fn load_run_releases_finished_agents() {
    let spec = SimSpec::poisson_load("load", 20.0, SimTime::from_secs(1), 20_000);
    let mut requested = 0;
    let mut sink = |e: &Event| {
        if e.kind.name() == "spawn_requested" {
            requested += 1;
        }
    };
    let report = Simulation::new(spec).run(&mut sink);
    assert!(report.limit.is_none());
    assert_eq!(requested, 20_000);
}

/// PERM-6: every "approve for the session" answer is kept, not only the first — a later
/// call of either tool runs without asking again.
#[test]
fn perm_6_each_session_grant_is_kept() {
    let mut spec = SimSpec::minimal("grants");
    spec.user.answer = Answer::ApproveSession;
    let call = |name: &str| {
        Step::Tool(ToolCall {
            name: name.into(),
            input: None,
            prompt: None,
            duration: None,
            ..ToolCall::default()
        })
    };
    spec.main = Rc::from(vec![spawn(
        "b",
        1,
        vec![call("Bash"), call("Edit"), call("Edit"), call("Bash")],
    )]);
    let events = run(spec);
    let asked: Vec<String> = kinds(&events, "permission_requested")
        .iter()
        .map(|event| format!("{:?}", event.kind))
        .collect();
    assert_eq!(asked.len(), 2, "{asked:#?}");
    let called = kinds(&events, "tool_called");
    assert_eq!(called.len(), 4);
}

/// Q-38: a prompt the person is thinking about is withdrawn when its run is stopped, and
/// the person turns to the next prompt at once rather than after the withdrawn one's
/// thinking time.
#[test]
fn q_38_a_withdrawn_prompt_frees_the_person_at_once() {
    let mut spec = SimSpec::minimal("withdrawn");
    spec.user.think = secs(10);
    let bash = Step::Tool(ToolCall {
        name: "Bash".into(),
        input: None,
        prompt: None,
        duration: None,
        ..ToolCall::default()
    });
    spec.main = Rc::from(vec![
        spawn("a", 1, vec![bash.clone()]),
        spawn("b", 1, vec![Step::Work(secs(1)), bash]),
    ]);
    spec.user.actions = vec![UserAction {
        at: SimTime::from_secs(2),
        kind: ActionKind::Stop("a".into()),
    }];
    let events = run(spec);
    let withdrawn = kinds(&events, "permission_withdrawn");
    assert_eq!(withdrawn.len(), 1);
    assert_eq!(
        (withdrawn[0].t, withdrawn[0].rule),
        (SimTime::from_secs(2), Some("Q-38"))
    );
    // b asked at 1 s; the person starts on it when a's prompt goes, at 2 s.
    let answered = kinds(&events, "permission_answered");
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0].t, SimTime::from_secs(12));
}

/// NOTIFY-3: a completion notification that arrives while its launcher is busy is kept;
/// a later `wait: {for: notification}` takes it at once instead of waiting for another.
#[test]
fn notify_3_a_notification_that_came_early_is_kept_for_the_wait() {
    let mut spec = SimSpec::minimal("inbox");
    spec.main = Rc::from(vec![
        spawn("c", 1, vec![Step::Work(secs(1))]),
        Step::Work(secs(5)),
        Step::WaitFor(WaitTarget::Notification),
        spawn("d", 1, vec![Step::Work(secs(1))]),
    ]);
    let events = run(spec);
    let notified = kinds(&events, "notification");
    assert_eq!(notified[0].t, SimTime::from_secs(1));
    let started = kinds(&events, "agent_started");
    assert_eq!(started.len(), 2, "d starts once main's wait is over");
    assert_eq!(started[1].t, SimTime::from_secs(5));
}

/// NOTIFY-5: a background shell that ends while its subagent is still working is a
/// notification to it, not the end of its run; the run ends after its last step.
#[test]
fn notify_5_a_shell_ending_mid_run_does_not_end_the_run() {
    let mut spec = SimSpec::minimal("shell");
    spec.main = Rc::from(vec![spawn(
        "s",
        1,
        vec![Step::BashBackground(secs(1)), Step::Work(secs(5))],
    )]);
    let events = run(spec);
    let shell_done = kinds(&events, "notification");
    assert_eq!(shell_done[0].t, SimTime::from_secs(1));
    let finished = kinds(&events, "agent_finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].t, SimTime::from_secs(5));
}
