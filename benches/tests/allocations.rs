//! Issue #7 item 5: reports, notifications, tool calls, prompts, waits, sends and resumes
//! do not allocate per event where an interned or borrowed value will do.
//!
//! `allocation_counter` (a counting global allocator, per thread, so tests running side by
//! side do not mix; linked into this test binary only) measures the allocations of a run
//! with `N` and with `2N` repetitions of one step kind; the difference over `N` is what one
//! more step costs. Counts, not timings.

use std::path::Path;

use subsim_engine::summary::Summary;
use subsim_engine::Simulation;

/// Allocations made while running `yaml` with `{N}` replaced by `n` (parsing excluded),
/// with the summary sink.
fn allocations(yaml: &str, n: u64) -> u64 {
    let source = yaml.replace("{N}", &n.to_string());
    let loaded = subsim_scenario::parse_scenario(&source, "alloc.yaml", Path::new("."))
        .unwrap_or_else(|problems| panic!("{problems}"));
    let simulation = Simulation::new(loaded.spec);
    let mut summary = Summary::default();
    let counted = allocation_counter::measure(|| {
        simulation.run(&mut summary);
    });
    assert!(summary.events() > 0, "the run wrote its trace");
    counted.count_total
}

/// Allocations per extra repetition: runs of 2000 and 4000 repetitions, so that growing
/// buffers (which double) contribute a fraction of an allocation.
fn per_step(yaml: &str) -> f64 {
    let small = allocations(yaml, 2_000);
    let large = allocations(yaml, 4_000);
    large.saturating_sub(small) as f64 / 2_000.0
}

/// How many allocations one more step of each kind costs, printed for the record.
fn check(kind: &str, yaml: &str, at_most: f64) {
    let cost = per_step(yaml);
    println!("{kind}: {cost:.3} allocations per step");
    assert!(
        cost <= at_most,
        "{kind}: {cost:.3} allocations per step, expected at most {at_most}"
    );
}

#[test]
fn tool_calls_do_not_allocate() {
    check(
        "tool call",
        "name: t\nmain:\n  - repeat: {times: {N}, steps: [{tool: {name: Read, input: notes.md}}]}\n",
        0.01,
    );
}

#[test]
fn waits_do_not_allocate() {
    check(
        "wait",
        "name: t\nmain:\n  - repeat: {times: {N}, steps: [{wait: 1s}]}\n",
        0.01,
    );
}

#[test]
fn prompts_do_not_allocate() {
    check(
        "prompt",
        "name: t\nuser: {think: 1s}\nmain:\n  - repeat: {times: {N}, steps: [{tool: {name: Bash, input: make test, prompt: true}}]}\n",
        0.01,
    );
}

#[test]
fn sends_do_not_allocate() {
    check(
        "send",
        "name: t\nmain:\n  - spawn: {agent: w, name: w, background: true}\n  - repeat: {times: {N}, steps: [{send: {to: w, message: more}}]}\nagents:\n  w:\n    description: runs long\n    behavior: [{work: 100000h}]\n",
        0.01,
    );
}

#[test]
fn reports_and_notifications_do_not_allocate() {
    // Per arrival: the run's own record (its stream, its slot) is all a run costs; a
    // report and its completion notification add nothing.
    let plain = per_step(
        "name: t\nagents:\n  w: {description: x, behavior: [{work: exp(1s)}]}\nload: {arrivals: poisson(20/s), count: {N}, spawn: {agent: w}, retry: none}\n",
    );
    let reported = per_step(
        "name: t\nsession: {kind: headless}\nagents:\n  w: {description: x, behavior: [{work: exp(1s)}, {report: done}]}\nload: {arrivals: poisson(20/s), count: {N}, spawn: {agent: w}, retry: none}\n",
    );
    println!("load arrival: {plain:.3} allocations; with a report: {reported:.3}");
    assert!(
        reported - plain <= 0.01,
        "a report costs {:.3} allocations",
        reported - plain
    );
}

#[test]
fn resumes_do_not_allocate() {
    check(
        "resume",
        "name: t\nmain:\n  - spawn: {agent: w, name: w, background: true}\n  - repeat: {times: {N}, steps: [{wait: 2s}, {send: {to: w, message: again, behavior: [{work: 1s}, {report: done}]}}]}\nagents:\n  w:\n    description: short\n    behavior: [{work: 1s}]\n",
        0.01,
    );
}
