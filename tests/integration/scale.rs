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
