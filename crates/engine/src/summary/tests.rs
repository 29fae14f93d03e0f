use super::*;

/// `duration_f64` is `as f64`, bit for bit, around 0, 2^53, 2^63 and `u64::MAX`.
#[test]
fn durations_convert_as_u64_does() {
    let near = |base: u64| (0..3).map(move |step| base.wrapping_add(step).wrapping_sub(1));
    let edges = [0, 1 << 53, 1 << 63, u64::MAX]
        .into_iter()
        .flat_map(near)
        .chain([1, 5_018_749_695, (1 << 53) + 1, (1 << 63) + 1025]);
    for micros in edges {
        assert_eq!(
            duration_f64(micros).to_bits(),
            (micros as f64).to_bits(),
            "{micros}"
        );
    }
}

/// The id window answers exactly as a map would, for ids in start order, resumes of
/// old ids, far ids, untracked runs and type indices that do not fit two bytes.
#[test]
fn outcome_and_notice_indices_follow_their_lists() {
    for (index, outcome) in OUTCOMES.iter().enumerate() {
        assert_eq!(outcome_index(*outcome), index, "{outcome:?}");
    }
    for (index, what) in Notice::ALL.iter().enumerate() {
        assert_eq!(notice_index(*what), index, "{what:?}");
    }
    for (index, reason) in RejectReason::ALL.into_iter().enumerate() {
        assert_eq!(reject_index(reason), index, "{reason:?}");
    }
}

#[test]
fn running_types_behave_as_a_map() {
    let mut fast = RunningTypes::default();
    let mut model: BTreeMap<u32, usize> = BTreeMap::new();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut draw = |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound
    };
    let mut next_id = 1u32;
    for _ in 0..50_000 {
        match draw(10) {
            0..=3 => {
                let index = match draw(20) {
                    0 => NOT_TRACKED,
                    1 => 70_000,
                    n => n as usize,
                };
                let id = match draw(30) {
                    0 => next_id.saturating_sub(draw(1_000) as u32),
                    1 => next_id + 100_000,
                    2 => u32::MAX - draw(2) as u32,
                    _ => {
                        next_id += 1;
                        next_id
                    }
                };
                fast.insert(id, index);
                model.insert(id, index);
            }
            _ => {
                let id = next_id.saturating_sub(draw(200) as u32);
                assert_eq!(fast.remove(id), model.remove(&id));
            }
        }
        assert_eq!(fast.is_empty(), model.is_empty());
    }
    for (&id, &index) in &model {
        // The preload hint reads the id's code in the window (0 outside it).
        let code = fast.preload(id);
        assert!(code == 0 || code == u64::from(RunningTypes::encode(index).unwrap()));
    }
    for (id, index) in model {
        assert_eq!(fast.remove(id), Some(index));
        assert_eq!(fast.preload(id), 0);
    }
    assert!(fast.is_empty());
}
use crate::event::AgentRef;
use crate::event::RunProfile;
use crate::spec::Answer;
use std::rc::Rc;
use subsim_rules::Mode;

fn at(millis: u64, kind: EventKind) -> Event {
    Event {
        t: SimTime::from_millis(millis),
        seq: 0,
        rule: None,
        kind,
    }
}

fn agent(id: u32) -> AgentRef {
    AgentRef { id, name: None }
}

fn started(millis: u64, id: u32, running: u32) -> Event {
    at(
        millis,
        EventKind::AgentStarted {
            agent: agent(id),
            parent: AgentRef::MAIN,
            depth: 1,
            mode: Mode::Background,
            fork: false,
            running,
            cap_checked: true,
            profile: Rc::new(RunProfile::new("general-purpose", "sonnet", &[])),
        },
    )
}

fn finished(millis: u64, id: u32, outcome: Outcome, running: u32) -> Event {
    at(
        millis,
        EventKind::AgentFinished {
            agent: agent(id),
            outcome,
            running,
            detail: None,
        },
    )
}

fn requested(millis: u64) -> Event {
    at(
        millis,
        EventKind::SpawnRequested {
            caller: AgentRef::MAIN,
            agent_type: "general-purpose".into(),
            name: None,
            background: None,
            fork: false,
            arrival: None,
            stream: None,
        },
    )
}

fn rejected(millis: u64, reason: RejectReason, running: u32) -> Event {
    at(
        millis,
        EventKind::SpawnRejected {
            caller: AgentRef::MAIN,
            agent_type: "general-purpose".into(),
            name: None,
            reason,
            message: "".into(),
            hint: None,
            running,
        },
    )
}

fn session(cap: u32) -> Event {
    at(
        0,
        EventKind::SessionStarted {
            version: "2.1.230".into(),
            session_kind: subsim_rules::SessionKind::Interactive,
            cap: Some(cap),
            depth_limit: 3,
            fork_mode: true,
            background_disabled: false,
            main_agent: None,
            permission_mode: subsim_rules::PermissionMode::Default,
            main_isolated: false,
        },
    )
}

fn summarize(events: &[Event]) -> Summary {
    let mut summary = Summary::new();
    for event in events {
        summary.event(event);
    }
    summary
}

#[test]
fn time_weighted_mean_running() {
    // 1 running over [0, 2s), 2 over [2s, 6s), 1 over [6s, 10s): (2 + 8 + 4) / 10 = 1.4.
    let summary = summarize(&[
        session(20),
        started(0, 1, 1),
        started(2_000, 2, 2),
        finished(6_000, 1, Outcome::Completed, 1),
        finished(10_000, 2, Outcome::Completed, 0),
    ]);
    assert_eq!(summary.makespan(), SimTime::from_secs(10));
    assert!(
        (summary.mean_running() - 1.4).abs() < 1e-12,
        "{}",
        summary.mean_running()
    );
    assert_eq!(summary.peak_running(), 2);
    assert_eq!(summary.finished(Outcome::Completed), 2);
}

#[test]
fn empty_run() {
    let summary = Summary::new();
    assert_eq!(summary.mean_running(), 0.0);
    assert_eq!(summary.blocking(), 0.0);
    assert_eq!(
        summary.waits("main"),
        WaitStats {
            count: 0,
            mean_us: 0,
            p95_us: 0
        }
    );
    assert!(summary.render_text().contains("events"));
}

#[test]
fn rejections_and_blocking() {
    let mut events = vec![session(2)];
    for index in 0..4 {
        events.push(requested(0));
        if index < 2 {
            events.push(started(0, index + 1, index + 1));
        } else {
            events.push(rejected(0, RejectReason::ConcurrentLimit, 2));
        }
    }
    events.push(requested(1_000));
    events.push(rejected(1_000, RejectReason::DepthLimit, 2));
    let summary = summarize(&events);
    assert_eq!(summary.spawns_requested(), 5);
    assert_eq!(summary.started(), 2);
    assert_eq!(summary.rejected(RejectReason::ConcurrentLimit), 2);
    assert_eq!(summary.rejected(RejectReason::DepthLimit), 1);
    assert_eq!(summary.rejected_total(), 3);
    assert!((summary.blocking() - 0.4).abs() < 1e-12);
    let text = summary.render_text();
    assert!(text.contains("    concurrent_limit  2\n"), "{text}");
    assert!(
        !text.contains("unknown_type"),
        "zero reasons are left out of the table: {text}"
    );
    let json = summary.render_json();
    assert!(
        json.contains(r#""rejected_by_reason":{"concurrent_limit":2,"depth_limit":1,"denied":0,"#),
        "{json}"
    );
    assert!(json.contains(r#""blocking":0.4,"#), "{json}");
}

#[test]
fn resumes_past_the_cap() {
    let resumed = |millis, id, running| {
        at(
            millis,
            EventKind::AgentResumed {
                agent: agent(id),
                by: AgentRef::MAIN,
                cap_checked: false,
                running,
                mode: Mode::Background,
                model: Rc::from("opus"),
                effort: None,
            },
        )
    };
    let summary = summarize(&[
        session(2),
        resumed(0, 1, 1),
        resumed(0, 2, 2),
        resumed(0, 3, 3),
    ]);
    assert_eq!(summary.resumes(), (3, 1));
    assert_eq!(summary.peak_running(), 3);
}

/// The prompt type found through the kept `Rc` is the one found by name: a shared
/// `Rc`, a fresh one of the same name and another type, interleaved.
#[test]
fn prompt_types_found_by_pointer_or_by_name_agree() {
    let shared: Rc<str> = Rc::from("worker");
    let other: Rc<str> = Rc::from("lead");
    let mut events = vec![session(20)];
    for prompt in 1..=30u64 {
        let agent_type = match prompt % 5 {
            0 => Rc::from("worker"),
            1 | 3 => other.clone(),
            _ => shared.clone(),
        };
        events.push(at(
            prompt * 1_000,
            EventKind::PermissionRequested {
                agent: agent(1),
                agent_type,
                tool: "Bash".into(),
                routed_to: Some(subsim_rules::prompt::RoutedTo::Main),
                auto_denied: false,
                prompt,
            },
        ));
    }
    for prompt in 1..=30u64 {
        events.push(at(
            40_000 + prompt * 1_000,
            EventKind::PermissionAnswered {
                agent: agent(1),
                tool: "Bash".into(),
                answer: Answer::Approve,
                waited_us: 40_000_000,
                prompt,
                think_us: None,
                think_from: None,
            },
        ));
    }
    let by_type = summarize(&events).prompt_report_by_type();
    let counts: Vec<(&str, u64, u32)> = by_type
        .iter()
        .map(|report| {
            (
                report.agent_type.as_str(),
                report.waits.count,
                report.queue_peak,
            )
        })
        .collect();
    assert_eq!(counts, [("lead", 12, 12), ("worker", 18, 18)]);
}

#[test]
fn prompt_waits_mean_and_p95() {
    let mut events = vec![session(20)];
    // Twenty prompts shown in main, waiting 1s, 2s, …, 20s; one at the terminal; one auto-denied.
    for prompt in 1..=20u64 {
        events.push(at(
            0,
            EventKind::PermissionRequested {
                agent: agent(1),
                agent_type: Rc::from("worker"),
                tool: "Bash".into(),
                routed_to: Some(subsim_rules::prompt::RoutedTo::Main),
                auto_denied: false,
                prompt,
            },
        ));
    }
    events.push(at(
        0,
        EventKind::PermissionRequested {
            agent: agent(2),
            agent_type: Rc::from("worker"),
            tool: "Bash".into(),
            routed_to: Some(subsim_rules::prompt::RoutedTo::Terminal),
            auto_denied: false,
            prompt: 21,
        },
    ));
    events.push(at(
        0,
        EventKind::PermissionRequested {
            agent: agent(3),
            agent_type: Rc::from("worker"),
            tool: "Bash".into(),
            routed_to: None,
            auto_denied: true,
            prompt: 22,
        },
    ));
    // Answered in reverse order, to show that the percentile sorts.
    for prompt in (1..=20u64).rev() {
        events.push(at(
            prompt * 1_000,
            EventKind::PermissionAnswered {
                agent: agent(1),
                tool: "Bash".into(),
                answer: Answer::Approve,
                waited_us: prompt * 1_000_000,
                prompt,
                think_us: None,
                think_from: None,
            },
        ));
    }
    events.push(at(
        30_000,
        EventKind::PermissionAnswered {
            agent: agent(2),
            tool: "Bash".into(),
            answer: Answer::Deny,
            waited_us: 7_000_000,
            prompt: 21,
            think_us: None,
            think_from: None,
        },
    ));
    let summary = summarize(&events);
    // Mean of 1..=20 s is 10.5 s; nearest-rank p95 of 20 values is the 19th: 19 s.
    assert_eq!(
        summary.waits("main"),
        WaitStats {
            count: 20,
            mean_us: 10_500_000,
            p95_us: 19_000_000
        }
    );
    assert_eq!(
        summary.waits("terminal"),
        WaitStats {
            count: 1,
            mean_us: 7_000_000,
            p95_us: 7_000_000
        }
    );
    assert_eq!(summary.prompts_by_route().get("main"), Some(&20));
    assert_eq!(summary.auto_denied(), 1);
    let text = summary.render_text();
    assert!(
        text.contains("wait, main session  mean 10.500s, p95 19.000s (20 answered)"),
        "{text}"
    );
}

/// Prompt `prompt` of agent `a<prompt>` (of `agent_type`) shown at `millis`, routed to
/// main.
fn prompt_request(millis: u64, prompt: u64, agent_type: &str) -> Event {
    at(
        millis,
        EventKind::PermissionRequested {
            agent: agent(prompt as u32),
            agent_type: Rc::from(agent_type),
            tool: "Bash".into(),
            routed_to: Some(subsim_rules::prompt::RoutedTo::Main),
            auto_denied: false,
            prompt,
        },
    )
}

/// Prompt `prompt` approved at `millis` after `waited_ms`.
fn prompt_answer(millis: u64, prompt: u64, waited_ms: u64) -> Event {
    at(
        millis,
        EventKind::PermissionAnswered {
            agent: agent(prompt as u32),
            tool: "Bash".into(),
            answer: Answer::Approve,
            waited_us: waited_ms * 1_000,
            prompt,
            think_us: None,
            think_from: None,
        },
    )
}

#[test]
fn prompt_waits_and_queue_per_agent_type() {
    let request = prompt_request;
    let answer = prompt_answer;
    let events = vec![
        session(20),
        request(0, 1, "reviewer"),
        request(0, 2, "reviewer"),
        request(0, 3, "main"),
        answer(1_000, 1, 1_000),
        request(1_000, 4, "reviewer"),
        answer(2_000, 3, 2_000),
        answer(3_000, 2, 3_000),
        at(
            4_000,
            EventKind::PermissionWithdrawn {
                agent: agent(4),
                tool: "Bash".into(),
                prompt: 4,
            },
        ),
    ];
    let summary = summarize(&events);
    let by_type = summary.prompt_report_by_type();
    let names: Vec<&str> = by_type.iter().map(|r| r.agent_type.as_str()).collect();
    assert_eq!(names, ["reviewer", "main"]);
    let (reviewer, main) = (&by_type[0], &by_type[1]);
    assert_eq!((reviewer.waits.count, main.waits.count), (2, 1));
    assert_eq!(reviewer.waits.mean.mean, 2.0);
    assert_eq!((reviewer.waits.max, main.waits.p50), (3.0, 2.0));
    // reviewer: 2 waiting in [0, 1) s, 2 in [1, 3) (one answered, one more shown), 1 in
    // [3, 4), then 0: mean (2 + 4 + 1) / 4 = 1.75 over the 4 s; peak 2.
    assert_eq!(reviewer.queue_peak, 2);
    assert!(
        (reviewer.queue.mean - 1.75).abs() < 1e-9,
        "{:?}",
        reviewer.queue
    );
    assert_eq!(main.queue_peak, 1);
    assert!((main.queue.mean - 0.5).abs() < 1e-9, "{:?}", main.queue);
    let json = summary.render_json();
    assert!(
        json.contains("\"prompts_by_type\":{\"reviewer\":{\"waits\":{\"count\":2,"),
        "{json}"
    );
    let text = summary.render_text();
    assert!(text.contains("  type reviewer"), "{text}");
    assert!(text.contains("    prompt queue"), "{text}");
}

/// While every prompt is of one type, that type's statistics are the totals, kept
/// once; a second type, or an answer to a prompt never shown, copies them to the first
/// type, which goes on apart: its figures are those of the events of its own prompts.
#[test]
fn one_prompt_type_shares_the_totals_until_a_second_comes() {
    let request = prompt_request;
    let answer = prompt_answer;
    let one_type = vec![
        session(20),
        request(0, 1, "reviewer"),
        request(0, 2, "reviewer"),
        answer(1_000, 1, 1_000),
        answer(3_000, 2, 3_000),
    ];
    let summary = summarize(&one_type);
    let (waits, queue, peak) = summary.prompt_report();
    let by_type = summary.prompt_report_by_type();
    assert_eq!(by_type.len(), 1);
    assert_eq!(by_type[0].waits, waits);
    // (Both intervals are clamped at 0.)
    assert_eq!((by_type[0].queue, by_type[0].queue_peak), (queue, peak));
    assert_eq!((waits.count, peak), (2, 2));
    // A second type after the first one's two answers: the reviewer's figures stay its
    // own (2 waits, mean 2 s; 2 waiting in [0, 1) s, 1 in [1, 3), none in [3, 5)).
    let mut two_types = one_type.clone();
    two_types.push(request(4_000, 3, "main"));
    two_types.push(answer(5_000, 3, 1_000));
    let summary = summarize(&two_types);
    let by_type = summary.prompt_report_by_type();
    let (reviewer, main) = (&by_type[0], &by_type[1]);
    assert_eq!((reviewer.waits.count, main.waits.count), (2, 1));
    assert_eq!(reviewer.waits.mean.mean, 2.0);
    assert_eq!((reviewer.queue_peak, main.queue_peak), (2, 1));
    assert!(
        (reviewer.queue.mean - 0.8).abs() < 1e-9,
        "{:?}",
        reviewer.queue
    );
    assert!((main.queue.mean - 0.2).abs() < 1e-9, "{:?}", main.queue);
    assert_eq!(summary.prompt_report().0.count, 3);
    // An answer to a prompt never shown counts in the totals only.
    let mut unknown = one_type.clone();
    unknown.push(answer(5_000, 9, 4_000));
    let summary = summarize(&unknown);
    let by_type = summary.prompt_report_by_type();
    assert_eq!(summary.prompt_report().0.count, 3);
    assert_eq!(by_type[0].waits.count, 2);
    assert_eq!(by_type[0].waits.max, 3.0);
}

#[test]
fn p95_small_samples() {
    assert_eq!(WaitStats::of(&[5]).p95_us, 5);
    assert_eq!(WaitStats::of(&[1, 2]).p95_us, 2);
    let hundred: Vec<u64> = (1..=100).collect();
    assert_eq!(WaitStats::of(&hundred).p95_us, 95);
    assert_eq!(WaitStats::of(&hundred).mean_us, 50);
}

#[test]
fn notifications_and_json_shape() {
    let notify = |what| {
        at(
            5_000,
            EventKind::Notification {
                to: AgentRef::MAIN,
                from: agent(1),
                what,
            },
        )
    };
    let summary = summarize(&[
        session(20),
        notify(subsim_rules::notify::Notice::Completion),
        notify(subsim_rules::notify::Notice::Completion),
        notify(subsim_rules::notify::Notice::BashDone),
        finished(5_000, 1, Outcome::Stopped, 0),
    ]);
    assert_eq!(summary.notifications().get("completion"), Some(&2));
    let json = summary.render_json();
    assert!(
        json.starts_with(r#"{"events":5,"makespan_us":5000000,"cap":20,"spawns":{"#),
        "{json}"
    );
    assert!(
        json.contains(r#""notifications":{"bash_done":1,"completion":2}"#),
        "{json}"
    );
    assert!(
        json.contains(
            r#""finished":{"completed":0,"partial":0,"failed":0,"stopped":1,"cancelled":0}"#
        ),
        "{json}"
    );
    assert!(json.ends_with("\"limit\":null}\n"), "{json}");
    assert_eq!(json, summary.clone().render_json(), "deterministic");
}

#[test]
fn text_table_is_aligned() {
    let summary = summarize(&[
        session(20),
        started(0, 1, 1),
        finished(4_000, 1, Outcome::Completed, 0),
    ]);
    let text = summary.render_text();
    // The first row is `events`, padded: its value's column is every row's.
    let first = text.lines().next().unwrap();
    let column = "events".len() + first["events".len()..].find(|c: char| c != ' ').unwrap();
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        assert!(
            chars[column - 1] == ' ' && chars[column] != ' ',
            "misaligned: {line:?}\n{text}"
        );
    }
    assert!(text.contains("mean running"), "{text}");
}

fn load_request(millis: u64, arrival: u64, agent_type: &str) -> Event {
    at(
        millis,
        EventKind::SpawnRequested {
            caller: AgentRef::MAIN,
            agent_type: agent_type.into(),
            name: None,
            background: None,
            fork: false,
            arrival: Some(arrival),
            stream: None,
        },
    )
}

#[test]
fn load_arrivals_attempts_blocking_delay_and_waits() {
    let mut spec = crate::spec::SimSpec::poisson_load("t", 1.0, SimTime::from_secs(1), 10);
    if let Some(load) = spec.load.as_mut() {
        load.streams[0].retry = Retry::Queue;
        load.warmup = SimTime::from_secs(1);
    }
    let mut summary = Summary::for_spec(&spec);
    let events = [
        session(1),
        // Before the warm-up: arrival 1 starts; arrival 2 is rejected, and its retry at
        // 2 s (after the warm-up) is left out too.
        load_request(0, 1, "general-purpose"),
        started(0, 1, 1),
        load_request(500, 2, "general-purpose"),
        rejected(500, RejectReason::ConcurrentLimit, 1),
        // After it: arrival 3 is rejected, retried at 2 s (rejected: arrival 2 got the
        // slot) and at 4 s (started): one delayed arrival, 3 attempts, waited 3 s.
        load_request(1_000, 3, "general-purpose"),
        rejected(1_000, RejectReason::ConcurrentLimit, 1),
        finished(2_000, 1, Outcome::Completed, 0),
        load_request(2_000, 2, "general-purpose"),
        started(2_000, 2, 1),
        load_request(2_000, 3, "general-purpose"),
        rejected(2_000, RejectReason::ConcurrentLimit, 1),
        finished(4_000, 2, Outcome::Completed, 0),
        load_request(4_000, 3, "general-purpose"),
        started(4_000, 3, 1),
        // Arrival 4 starts at once.
        finished(5_000, 3, Outcome::Completed, 0),
        load_request(5_000, 4, "general-purpose"),
        started(5_000, 4, 1),
        finished(9_000, 4, Outcome::Completed, 0),
    ];
    for event in &events {
        summary.event(event);
    }
    let load = summary.load_report().unwrap();
    let stats = load.all;
    assert_eq!((stats.arrivals, stats.attempts), (2, 4));
    assert_eq!(stats.blocking.mean, 0.5);
    assert_eq!(stats.blocking_attempts, 0.5);
    assert_eq!(stats.delayed.mean, 0.5);
    assert_eq!(stats.wait.count, 2);
    assert_eq!((stats.wait.p50, stats.wait.max), (0.0, 3.0));
    assert_eq!(stats.wait.mean.mean, 1.5);
    assert_eq!(stats.delayed_wait.count, 1);
    assert_eq!(stats.delayed_wait.mean.mean, 3.0);
    // Running 1 over [1 s, 2 s), 0 at 2 s then 1 to 4 s, …: 1 except the instants, so 1.
    assert!(
        (stats.running.mean - 1.0).abs() < 1e-12,
        "{:?}",
        stats.running
    );
    assert_eq!(stats.utilisation.unwrap().mean, stats.running.mean);
    assert_eq!((load.warmup, load.window), (1.0, 8.0));
    // Four runs finished after the warm-up, over 8 s.
    assert_eq!(load.throughput, 0.5);
    assert_eq!(load.by_type.len(), 1);
    assert_eq!(load.by_type[0].0, "general-purpose");
    assert_eq!(load.by_type[0].1.arrivals, 2);
    let json = summary.render_json();
    assert!(
        json.contains(r#""load":{"retries":true,"warmup":1.0,"window":8.0,"throughput":0.5,"arrivals":2,"attempts":4,"blocking":{"mean":0.5,"#),
        "{json}"
    );
    let text = summary.render_text();
    assert!(
        text.contains("  arrivals            2 (4 attempts, retries included)"),
        "{text}"
    );
}

/// Random traces for the equivalence tests: load requests (first attempts and
/// retries, of three types and of named streams or none), starts, rejections, ends,
/// resumes and notifications, at times that mostly go forward (and sometimes back, as
/// a hand-made trace may).
fn random_trace(seed: u64, streams: &[Rc<str>]) -> Vec<Event> {
    let mut state = seed | 1;
    let mut draw = move |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound
    };
    let types: [Rc<str>; 3] = ["worker".into(), "lead".into(), "helper".into()];
    let profiles: Vec<Rc<RunProfile>> = types
        .iter()
        .map(|agent_type| Rc::new(RunProfile::new(agent_type, "sonnet", &[])))
        .collect();
    let mut events = vec![session(8)];
    let (mut millis, mut running, mut next_id, mut arrival) = (0u64, 0u32, 1u32, 0u64);
    for _ in 0..3_000 {
        millis = match draw(20) {
            0 => millis.saturating_sub(draw(500)),
            1..=9 => millis,
            _ => millis + draw(700),
        };
        // Mostly the first type, through the one shared `Rc` the kernel hands out.
        let kind = match draw(16) {
            0 => 2,
            1 | 2 => 1,
            _ => 0,
        };
        let agent_type = if draw(30) == 0 {
            Rc::from(&*types[kind])
        } else {
            types[kind].clone()
        };
        let event = match draw(12) {
            0..=3 => {
                let retry = arrival > 0 && draw(4) == 0;
                if !retry {
                    arrival += 1;
                }
                EventKind::SpawnRequested {
                    caller: AgentRef::MAIN,
                    agent_type,
                    name: None,
                    background: None,
                    fork: false,
                    arrival: match draw(8) {
                        0 => None,
                        _ if retry => Some(arrival.saturating_sub(draw(3))),
                        _ => Some(arrival),
                    },
                    stream: match (streams.len() as u64, draw(6)) {
                        (0, _) | (_, 0) => None,
                        (count, _) => Some(streams[draw(count) as usize].clone()),
                    },
                }
            }
            4..=6 => {
                running += 1;
                next_id += 1;
                EventKind::AgentStarted {
                    agent: agent(next_id),
                    parent: AgentRef::MAIN,
                    depth: 1,
                    mode: Mode::Background,
                    fork: false,
                    running,
                    cap_checked: true,
                    profile: profiles[kind].clone(),
                }
            }
            7 => EventKind::SpawnRejected {
                caller: AgentRef::MAIN,
                agent_type,
                name: None,
                reason: if draw(4) == 0 {
                    RejectReason::ALL[draw(RejectReason::ALL.len() as u64) as usize]
                } else {
                    RejectReason::ConcurrentLimit
                },
                message: "".into(),
                hint: None,
                running,
            },
            8..=9 => {
                running = running.saturating_sub(1);
                EventKind::AgentFinished {
                    agent: agent(next_id.saturating_sub(draw(12) as u32)),
                    outcome: OUTCOMES[draw(OUTCOMES.len() as u64) as usize],
                    running,
                    detail: None,
                }
            }
            10 => {
                running += 1;
                EventKind::AgentResumed {
                    agent: agent(next_id.saturating_sub(draw(30) as u32)),
                    by: AgentRef::MAIN,
                    cap_checked: false,
                    running,
                    mode: Mode::Background,
                    model: "sonnet".into(),
                    effort: None,
                }
            }
            _ => EventKind::Notification {
                to: AgentRef::MAIN,
                from: agent(next_id),
                what: Notice::ALL[draw(Notice::ALL.len() as u64) as usize],
            },
        };
        events.push(at(millis, event));
    }
    events
}

/// Everything a summary shows, and its running area.
fn shown(summary: &Summary) -> String {
    format!(
        "{}{}{:?}{:?}{}",
        summary.render_text(),
        summary.render_json(),
        summary.load_report(),
        summary.prompt_report(),
        summary.running_area()
    )
}

/// The running area, summed once per change of the count, is the sum of
/// `running × (t − last t)` over every event (the count holds from one event to the
/// next), on random traces whose times sometimes go back.
#[test]
fn the_running_area_is_the_sum_over_events() {
    for seed in 1..=20u64 {
        let events = random_trace(seed * 7_919, &[]);
        let mut summary = Summary::new();
        let (mut area, mut running, mut last) = (0u128, 0u32, 0u64);
        for event in &events {
            summary.event(event);
            let t = event.t.as_micros();
            area += u128::from(running) * u128::from(t.saturating_sub(last));
            last = last.max(t);
            if let Some(now) = event.kind.running() {
                running = now;
            }
            assert_eq!(summary.running_area(), area, "seed {seed}");
        }
    }
}

/// The fast paths (the typed entries, as the kernel calls them; a request or a
/// start of the type last seen; first starts counted in bulk) leave exactly what the
/// general paths leave: the same random traces into a summary through `event` only,
/// whose type caches are emptied before every event (so that every request
/// and start takes the general path) and whose pending first starts are counted after
/// every event (one by one, as before they were kept pending) show the same, bit for
/// bit; with and without a warm-up, retries, a mix of retrying and non-retrying
/// streams, named streams.
#[test]
fn fast_paths_show_what_the_general_paths_show() {
    let names: [Rc<str>; 2] = ["left".into(), "right".into()];
    for seed in 1..=24u64 {
        let mut spec = crate::spec::SimSpec::poisson_load("t", 1.0, SimTime::from_secs(1), 10);
        let streams: Vec<Rc<str>> = match seed % 4 {
            0 => Vec::new(),
            _ => names.to_vec(),
        };
        if let Some(load) = spec.load.as_mut() {
            load.warmup = SimTime::from_millis(seed % 3 * 40_000);
            let first = load.streams[0].clone();
            load.streams.clear();
            for (index, retry) in [Retry::Queue, Retry::None].into_iter().enumerate() {
                if index == 0 || !streams.is_empty() {
                    load.streams.push(crate::spec::LoadStream {
                        name: streams.get(index).cloned(),
                        retry: if seed % 2 == 0 { Retry::None } else { retry },
                        ..first.clone()
                    });
                }
            }
        }
        let events = random_trace(seed * 104_729, &streams);
        let mut fast = Summary::for_spec(&spec);
        let mut general = Summary::for_spec(&spec);
        for event in &events {
            fast.event(event);
            general.load.request_cache = None;
            general.load.start_cache = None;
            general.event(event);
            // What a first start counted before `first_starts` (not `settle`).
            let mixed = general.load.mixed;
            let count_now = |stats: &mut TypeLoad| {
                for _ in 0..std::mem::take(&mut stats.first_starts) {
                    stats.arrivals += 1;
                    stats.attempts += 1;
                    stats.blocked.add(false);
                    if mixed {
                        stats.delayed.add(false);
                    }
                    stats.wait.record(0);
                }
            };
            count_now(&mut general.load.all);
            general
                .load
                .types
                .iter_mut()
                .for_each(|(_, stats)| count_now(stats));
            general
                .load
                .streams
                .iter_mut()
                .for_each(|(_, _, stats)| count_now(stats));
        }
        assert!(fast.load_report().is_some(), "seed {seed}");
        assert_eq!(shown(&fast), shown(&general), "seed {seed}");
    }
}

/// A summary made for a spec without `load` follows no runs per type, and shows what
/// a summary that does not know shows.
#[test]
fn without_load_the_per_type_bookkeeping_is_skipped_unseen() {
    let spec = crate::spec::SimSpec::minimal("no load");
    assert!(spec.load.is_none());
    for seed in 1..=12u64 {
        let events: Vec<Event> = random_trace(seed * 15_485_863, &[])
            .into_iter()
            .map(|mut event| {
                if let EventKind::SpawnRequested { arrival, .. } = &mut event.kind {
                    *arrival = None;
                }
                event
            })
            .collect();
        let mut off = Summary::for_spec(&spec);
        let mut new = Summary::new();
        for event in &events {
            off.event(event);
            new.event(event);
        }
        assert!(off.load.off && !off.load.split && off.load.types.is_empty());
        assert!(
            new.load.split,
            "seed {seed}: the trace has runs of several types"
        );
        assert_eq!(shown(&off), shown(&new), "seed {seed}");
    }
}

#[test]
fn no_load_no_load_statistics() {
    let summary = summarize(&[session(20), started(0, 1, 1)]);
    assert!(summary.load_report().is_none());
    assert!(summary.render_json().contains(r#""load":null"#));
}

#[test]
fn load_statistics_per_agent_type() {
    let mut summary = Summary::new();
    let started_as = |millis, id, running, agent_type: &str| {
        at(
            millis,
            EventKind::AgentStarted {
                agent: agent(id),
                parent: AgentRef::MAIN,
                depth: 1,
                mode: Mode::Background,
                fork: false,
                running,
                cap_checked: true,
                profile: Rc::new(RunProfile::new(agent_type, "sonnet", &[])),
            },
        )
    };
    let events = [
        session(1),
        // Two `a` arrivals (one blocked) before any `b`; then a `b` arrival, started.
        load_request(0, 1, "a"),
        started_as(0, 1, 1, "a"),
        load_request(1_000, 2, "a"),
        rejected(1_000, RejectReason::ConcurrentLimit, 1),
        finished(2_000, 1, Outcome::Completed, 0),
        load_request(2_000, 3, "b"),
        started_as(2_000, 2, 1, "b"),
        finished(4_000, 2, Outcome::Completed, 0),
    ];
    for event in &events {
        summary.event(event);
    }
    let load = summary.load_report().unwrap();
    assert_eq!(load.all.arrivals, 3);
    let (a, b) = (&load.by_type[0], &load.by_type[1]);
    assert_eq!(
        (a.0.as_str(), a.1.arrivals, a.1.blocking.mean),
        ("a", 2, 0.5)
    );
    assert_eq!(
        (b.0.as_str(), b.1.arrivals, b.1.blocking.mean),
        ("b", 1, 0.0)
    );
    // `a` ran over [0, 2 s) of 4 s, `b` over [2 s, 4 s).
    assert_eq!(a.1.running.mean, 0.5);
    assert_eq!(b.1.running.mean, 0.5);
    assert_eq!(load.all.running.mean, 1.0);
    assert!(summary.render_text().contains("  type a"));
}
