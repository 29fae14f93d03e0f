//! Regression tests for scenarios that once took super-linear time or unbounded memory:
//! each runs a shape that used to blow up and checks what it produced (counts, exit
//! reasons), never how long it took (timings are for `benches/`).

use std::path::Path;

use subsim_engine::Simulation;

/// Parses scenario text, runs it, and counts events by kind.
fn run_yaml(
    source: &str,
) -> (
    std::collections::BTreeMap<String, u64>,
    subsim_engine::RunReport,
) {
    let loaded = subsim_scenario::parse_scenario(source, "inline.yaml", Path::new("."))
        .unwrap_or_else(|diagnostics| panic!("{diagnostics}"));
    let mut counts = std::collections::BTreeMap::new();
    let mut sink = |event: &subsim_engine::Event| {
        *counts.entry(event.kind.name().to_string()).or_insert(0u64) += 1;
    };
    let report = Simulation::new(loaded.spec).run(&mut sink);
    (counts, report)
}

/// Issue 7: the panel was rebuilt and diffed on every start and finish, so a fan-out of
/// N subagents cost O(N³) (N = 2000 took 26 s). An 8000-agent fan-out in an interactive
/// session must run through, each worker getting its row and losing it at its finish.
#[test]
fn panel_fan_out_of_8000_is_not_cubic() {
    let (counts, report) = run_yaml(
        "name: fan-out\n\
         session:\n  kind: interactive\n  env: {CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: \"1000000\"}\n\
         main:\n  - spawn: {agent: worker, count: 8000, background: true}\n\
         agents:\n  worker:\n    behavior: [{work: 10s}, {report: done}]\n",
    );
    assert!(report.limit.is_none());
    assert_eq!(counts["agent_started"], 8000);
    assert_eq!(counts["agent_finished"], 8000);
    // A row added and removed per worker, plus the footer hint shown and cleared.
    assert_eq!(counts["panel_changed"], 2 * 8000 + 2);
}

/// The events of a run, by kind, in order (for the first and last).
fn kinds(source: &str) -> (Vec<String>, subsim_engine::RunReport) {
    let loaded = subsim_scenario::parse_scenario(source, "inline.yaml", Path::new("."))
        .unwrap_or_else(|diagnostics| panic!("{diagnostics}"));
    let mut kinds = Vec::new();
    let mut sink = |event: &subsim_engine::Event| kinds.push(event.kind.name().to_string());
    let report = Simulation::new(loaded.spec).run(&mut sink);
    (kinds, report)
}

/// Issue 7: every agent spawning two more never reached `max_agents` (killed after 30 s).
/// It stops at the limit, everything at one instant, keeping the trace so far.
#[test]
fn runaway_doubling_stops_at_max_agents() {
    let (kinds, report) = kinds(
        "name: runaway\n\
         session:\n  kind: interactive\n  limits: {max_agents: 3000}\n  \
         env: {CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: \"1000000\", \
         CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH: \"100000\"}\n\
         main:\n  - spawn: {agent: doubler, background: true}\n\
         agents:\n  doubler:\n    tools: [Agent]\n    behavior:\n      \
         - spawn: {agent: doubler, count: 2, background: true}\n",
    );
    let limit = report.limit.expect("stopped by a limit");
    assert_eq!((limit.limit.as_str(), limit.value), ("max_agents", 3000));
    assert_eq!(
        report.end.as_micros(),
        0,
        "everything happens at one instant"
    );
    assert_eq!(kinds.first().map(String::as_str), Some("session_started"));
    assert_eq!(kinds.last().map(String::as_str), Some("limit_reached"));
    let started = kinds.iter().filter(|kind| *kind == "agent_started").count();
    assert_eq!(started, 3000);
}

/// Issue 10 §4.4: a nested `repeat` of `work: 0s` writes nothing and lets no time pass,
/// so `max_events: 10` and `max_time: 1s` never stopped it. Steps count: it stops at
/// `max_steps`, by default 10 × `max_events`.
#[test]
fn zero_time_loop_stops_at_max_steps() {
    let (kinds, report) = kinds(
        "name: zero-time loop\n\
         session:\n  limits: {max_events: 10, max_time: 1s}\n\
         main:\n  - repeat:\n      times: 1000000\n      steps:\n        \
         - repeat: {times: 1000000, steps: [{work: 0s}]}\n",
    );
    let limit = report.limit.expect("stopped by a limit");
    assert_eq!((limit.limit.as_str(), limit.value), ("max_steps", 100));
    assert!(limit.to_string().contains("work: 0s"), "{limit}");
    assert_eq!(kinds, ["session_started", "limit_reached"]);
    // An explicit `max_steps` wins over the default.
    let (_, explicit) = self::kinds(
        "name: zero-time loop\n\
         session:\n  limits: {max_steps: 5000}\n\
         main:\n  - repeat: {times: 1000000, steps: [{work: 0s}]}\n",
    );
    let limit = explicit.limit.expect("stopped by a limit");
    assert_eq!((limit.limit.as_str(), limit.value), ("max_steps", 5000));
}

/// Issue 7: a chain (each agent spawns one child, depth limit raised) overflowed the
/// stack when it ended: each launcher waiting for its children ended inside its last
/// child's end, recursively. It ends now whatever its depth (a test thread has a small
/// stack: 20,000 nested ends did not fit in it).
#[test]
fn chain_of_20000_ends_without_recursion() {
    let (kinds, report) = kinds(
        "name: chain\n\
         session:\n  kind: interactive\n  \
         env: {CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH: \"20000\", \
         CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: \"1000000\"}\n\
         main:\n  - spawn: {agent: link}\n\
         agents:\n  link:\n    tools: [Agent]\n    behavior:\n      - spawn: {agent: link}\n",
    );
    assert!(report.limit.is_none());
    let count = |wanted: &str| kinds.iter().filter(|kind| *kind == wanted).count();
    // Links at depth 1 … 19,999; the last one's Agent call is refused (DEPTH-3/4).
    assert_eq!(count("agent_started"), 19_999);
    assert_eq!(count("agent_finished"), 19_999);
    assert_eq!(count("spawn_rejected"), 1);
}

/// Issue 10 §4.7: `burst(10000000)` with no cap enforced grew to 3 GB. `max_running`
/// (default 1,000,000 subagents running at once) bounds it; here set low.
#[test]
fn burst_without_a_cap_stops_at_max_running() {
    assert_eq!(
        subsim_engine::spec::Limits::default().max_running,
        1_000_000
    );
    let (kinds, report) = kinds(
        "name: burst\n\
         session:\n  ultracode: true\n  limits: {max_running: 2000}\n\
         load:\n  arrivals: burst(10000000)\n  count: 10000000\n  \
         spawn: {behavior: [{work: 1s}]}\n",
    );
    let limit = report.limit.expect("stopped by a limit");
    assert_eq!((limit.limit.as_str(), limit.value), ("max_running", 2000));
    assert!(limit.to_string().contains("running at once"), "{limit}");
    let started = kinds.iter().filter(|kind| *kind == "agent_started").count();
    assert_eq!(started, 2000);
    assert_eq!(kinds.last().map(String::as_str), Some("limit_reached"));
}

/// REVIEW defect 2: rejected calls waiting on `backoff(…)` hold no slot and were not
/// bounded (nor `queue`'s, 4.76 GB for `burst(4e9)`). `max_held` (default 1,500,000)
/// counts them with the agent records; here set low. A retry that fires is no longer held,
/// so the count is of calls waiting at once, not of rejections.
#[test]
fn backoff_retries_waiting_stop_at_max_held() {
    assert_eq!(subsim_engine::spec::Limits::default().max_held, 1_500_000);
    let (kinds, report) = kinds(
        "name: burst\n\
         session:\n  env: {CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: \"4\"}\n  \
         limits: {max_held: 50}\n\
         load:\n  arrivals: burst(100000)\n  count: 100000\n  retry: backoff(1h)\n  \
         spawn: {behavior: [{work: 1s}]}\n",
    );
    let limit = report.limit.expect("stopped by a limit");
    assert_eq!((limit.limit.as_str(), limit.value), ("max_held", 50));
    assert!(limit.to_string().contains("waiting to retry"), "{limit}");
    let started = kinds.iter().filter(|kind| *kind == "agent_started").count();
    let rejected = kinds
        .iter()
        .filter(|kind| *kind == "spawn_rejected")
        .count();
    // Main and 4 running are 5 records, 45 calls wait, the 46th rejection stops the run.
    assert_eq!((started, rejected), (4, 46));
    assert_eq!(kinds.last().map(String::as_str), Some("limit_reached"));
}

/// The same load below `max_held` is untouched: retries that fire free their place, and
/// ended anonymous runs leave their records to be reused, so a long run that never holds
/// many at once never reaches it.
#[test]
fn retries_and_reused_records_under_max_held_run_to_the_end() {
    let (kinds, report) = kinds(
        "name: trickle\n\
         session:\n  env: {CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: \"1\"}\n  \
         limits: {max_held: 40}\n\
         load:\n  arrivals: poisson(8/s)\n  count: 2000\n  retry: queue\n  \
         spawn: {behavior: [{work: 100ms}]}\n",
    );
    assert!(report.limit.is_none(), "{:?}", report.limit);
    let started = kinds.iter().filter(|kind| *kind == "agent_started").count();
    let rejected = kinds
        .iter()
        .filter(|kind| *kind == "spawn_rejected")
        .count();
    assert_eq!(started, 2000);
    // Many calls waited (and were counted, then let go), never 40 at once.
    assert!(rejected > 1000, "{rejected}");
}

/// REVIEW defect 3: a zero-time `repeat` ran 22 s before `max_steps` (a billion) stopped
/// it. `max_instant_steps` stops steps taken at one instant, counted in blocks: fewer than
/// a block at each instant never stops a run, however long; more than two blocks at one
/// instant always does.
#[test]
fn steps_at_one_instant_stop_at_max_instant_steps() {
    assert_eq!(
        subsim_engine::spec::Limits::default().max_instant_steps,
        50_000_000
    );
    // 8 steps at each instant (a 1 s turn, then 7 zero-time ones), 1000 times.
    let (_, report) = kinds(
        "name: paced\n\
         session:\n  limits: {max_instant_steps: 10}\n\
         main:\n  - repeat: {times: 1000, steps: [{work: 1s}, \
         {repeat: {times: 7, steps: [{work: 0s}]}}]}\n",
    );
    assert!(report.limit.is_none(), "{:?}", report.limit);
    // 21 steps at one instant.
    let (kinds, report) = kinds(
        "name: loop\n\
         session:\n  limits: {max_instant_steps: 10}\n\
         main:\n  - repeat: {times: 1000, steps: [{work: 1s}, \
         {repeat: {times: 20, steps: [{work: 0s}]}}]}\n",
    );
    let limit = report.limit.expect("stopped by a limit");
    assert_eq!(
        (limit.limit.as_str(), limit.value),
        ("max_instant_steps", 10)
    );
    assert!(limit.to_string().contains("work: 0s"), "{limit}");
    assert_eq!(kinds.last().map(String::as_str), Some("limit_reached"));
}

/// A loop of `wait: 1us` lets the clock move, so `max_instant_steps` never stopped it, and
/// writes nothing: it ran ~25 s until `max_steps` (a billion) did. `max_silent_steps`
/// stops steps taken in a row without an event written, counted in blocks: a run that
/// writes an event every few steps is never stopped by it, however long; a silent
/// stretch of more than two blocks always is.
#[test]
fn silent_steps_stop_at_max_silent_steps() {
    assert_eq!(
        subsim_engine::spec::Limits::default().max_silent_steps,
        50_000_000
    );
    // An event every 8 steps (a `report` is silent, a spawn is not), 1000 times.
    let (_, report) = kinds(
        "name: chatty\n\
         session:\n  limits: {max_silent_steps: 10}\n\
         main:\n  - repeat: {times: 1000, steps: [{spawn: {behavior: [{work: 1ms}]}}, \
         {repeat: {times: 7, steps: [{wait: 1us}]}}]}\n",
    );
    assert!(report.limit.is_none(), "{:?}", report.limit);
    // 21 silent steps in a row.
    let (kinds, report) = kinds(
        "name: quiet\n\
         session:\n  limits: {max_silent_steps: 10}\n\
         main:\n  - repeat: {times: 1000, steps: [{spawn: {behavior: [{work: 1ms}]}}, \
         {repeat: {times: 20, steps: [{wait: 1us}]}}]}\n",
    );
    let limit = report.limit.expect("stopped by a limit");
    assert_eq!(
        (limit.limit.as_str(), limit.value),
        ("max_silent_steps", 10)
    );
    assert!(limit.to_string().contains("wait: 1us"), "{limit}");
    assert_eq!(kinds.last().map(String::as_str), Some("limit_reached"));
}

/// Issue 10 §4.6: named load arrivals under `ultracode` rebuilt every run's context
/// (CTX-6's roster of every name in use) at each start: O(n²). The profile is shared
/// again; every arrival still starts with the roster piece, named `job-i`.
#[test]
fn named_ultracode_arrivals_share_one_profile() {
    let loaded = subsim_scenario::parse_scenario(
        "name: named\n\
         session:\n  ultracode: true\n\
         load:\n  arrivals: burst(20000)\n  count: 20000\n  \
         spawn: {name: job, behavior: [{work: 1s}]}\n",
        "inline.yaml",
        Path::new("."),
    )
    .unwrap_or_else(|diagnostics| panic!("{diagnostics}"));
    let mut started = 0u32;
    let mut with_roster = 0u32;
    let mut sink = |event: &subsim_engine::Event| {
        if let subsim_engine::EventKind::AgentStarted { agent, profile, .. } = &event.kind {
            started += 1;
            assert_eq!(
                agent.name.as_deref(),
                Some(format!("job-{started}").as_str())
            );
            if profile
                .context
                .iter()
                .any(|piece| &**piece == "sibling roster")
            {
                with_roster += 1;
            }
        }
    };
    let report = Simulation::new(loaded.spec).run(&mut sink);
    assert!(report.limit.is_none());
    assert_eq!(started, 20_000);
    // The first named run sees no other name; every later one sees the roster.
    assert_eq!(with_roster, 19_999);
}
