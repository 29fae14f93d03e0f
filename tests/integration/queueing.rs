//! Queueing theory: Poisson spawns against the cap with `retry: none` form an M/M/m/m
//! loss system, so the fraction of spawns rejected by the cap must match Erlang B.

use subsim_engine::expect::{Checker, Expectation, Located};
use subsim_engine::spec::SimSpec;
use subsim_engine::time::SimTime;
use subsim_engine::Simulation;

/// Erlang B by the stable recurrence B(0) = 1, B(k) = E·B(k−1) / (k + E·B(k−1)).
fn erlang_b(offered: f64, servers: u32) -> f64 {
    let mut blocking = 1.0;
    for k in 1..=servers {
        blocking = offered * blocking / (f64::from(k) + offered * blocking);
    }
    blocking
}

fn blocking_fraction(offered: f64, arrivals: u64, seed: u64) -> (f64, u64) {
    let mut spec = SimSpec::poisson_load("erlang", offered, SimTime::from_secs(1), arrivals);
    spec.session.seed = seed;
    let mut requested = 0u64;
    let mut rejected = 0u64;
    let mut sink = |event: &subsim_engine::Event| match event.kind.name() {
        "spawn_requested" => requested += 1,
        "spawn_rejected" => rejected += 1,
        _ => {}
    };
    let report = Simulation::new(spec).run(&mut sink);
    assert!(report.limit.is_none());
    (rejected as f64 / requested as f64, requested)
}

#[test]
fn erlang_b_recurrence_matches_known_values() {
    assert!((erlang_b(20.0, 20) - 0.158_892).abs() < 1e-5);
    assert!((erlang_b(1.0, 1) - 0.5).abs() < 1e-12);
}

#[test]
fn blocking_matches_erlang_b_at_10_20_30_erlangs() {
    for (offered, tolerance) in [(10.0, 0.002), (20.0, 0.008), (30.0, 0.008)] {
        let expected = erlang_b(offered, 20);
        let (measured, attempts) = blocking_fraction(offered, 150_000, 7);
        assert_eq!(attempts, 150_000);
        assert!(
            (measured - expected).abs() <= tolerance,
            "{offered} Erlangs: measured {measured:.5}, Erlang B {expected:.5}"
        );
    }
}

#[test]
fn blocking_expectation_checks_the_same_fraction() {
    // The `blocking:` assertion of scenario files measures the same quantity.
    let expected = erlang_b(20.0, 20);
    let spec = SimSpec::poisson_load("erlang-check", 20.0, SimTime::from_secs(1), 100_000);
    let located = |expectation| Located {
        expectation,
        location: None,
    };
    let mut checker = Checker::new(vec![
        located(Expectation::Blocking {
            approx: expected,
            tolerance: 0.01,
        }),
        located(Expectation::Blocking {
            approx: expected + 0.1,
            tolerance: 0.01,
        }),
    ]);
    Simulation::new(spec).run(&mut checker);
    let failures = checker.finish();
    assert_eq!(
        failures.len(),
        1,
        "only the wrong expectation fails: {failures:?}"
    );
    assert_eq!(failures[0].index, 1);
}

/// A load of `arrivals` Poisson arrivals at `offered` Erlangs (1 s mean runs) against a
/// cap of `cap`, with `retry`, summarised.
fn summarised(
    offered: f64,
    cap: u32,
    retry: subsim_engine::spec::Retry,
    arrivals: u64,
    seed: u64,
) -> subsim_engine::summary::LoadReport {
    let mut spec = SimSpec::poisson_load("erlang", offered, SimTime::from_secs(1), arrivals);
    spec.session.seed = seed;
    spec.session.env.insert(
        "CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS".into(),
        cap.to_string(),
    );
    if let Some(load) = spec.load.as_mut() {
        load.streams[0].retry = retry;
    }
    let mut summary = subsim_engine::summary::Summary::for_spec(&spec);
    let report = Simulation::new(spec).run(&mut summary);
    assert!(report.limit.is_none());
    summary.load_report().expect("the run had arrivals")
}

#[test]
fn the_fifo_queue_matches_erlang_c_at_two_loads() {
    use subsim_engine::erlang;
    use subsim_engine::spec::Retry;
    for (offered, cap, seed) in [(15.0, 20, 11), (18.0, 20, 12)] {
        let load = summarised(offered, cap, Retry::Queue, 1_000_000, seed);
        let stats = load.all;
        assert_eq!(stats.arrivals, 1_000_000);
        let delayed = erlang::erlang_c(cap, offered);
        let wait = erlang::mean_wait_holding_times(cap, offered); // × 1 s mean run
        assert!(
            stats.delayed.lo <= delayed && delayed <= stats.delayed.hi,
            "{offered} Erlangs: delayed {:?}, Erlang C {delayed:.5}",
            stats.delayed
        );
        assert!(
            stats.wait.mean.lo <= wait && wait <= stats.wait.mean.hi,
            "{offered} Erlangs: mean wait {:?} s, Erlang C {wait:.5} s",
            stats.wait.mean
        );
        // Every arrival is served in the end: the queue loses nobody.
        assert_eq!(stats.wait.count, 1_000_000);
        // In a queue, the delayed share is the first-attempt blocking.
        assert_eq!(stats.delayed, stats.blocking);
    }
}

#[test]
fn the_blocking_interval_covers_erlang_b_in_at_least_17_of_20_seeds() {
    let expected = erlang_b(20.0, 20);
    let covered = (0..20u64)
        .filter(|seed| {
            let load = summarised(20.0, 20, subsim_engine::spec::Retry::None, 100_000, *seed);
            load.all.blocking.lo <= expected && expected <= load.all.blocking.hi
        })
        .count();
    assert!(covered >= 17, "covered {covered} of 20");
}

#[test]
fn wait_percentiles_agree_with_an_exact_computation() {
    use std::collections::BTreeMap;
    use subsim_engine::spec::Retry;
    use subsim_engine::EventKind;
    // 20,000 arrivals at 19 Erlangs against 20 slots, FIFO queue: thousands of waits, so
    // the summary's histogram is in use (more than `EXACT_SAMPLES`).
    let mut spec = SimSpec::poisson_load("exact", 19.0, SimTime::from_secs(1), 20_000);
    spec.session.seed = 3;
    if let Some(load) = spec.load.as_mut() {
        load.streams[0].retry = Retry::Queue;
    }
    let mut summary = subsim_engine::summary::Summary::for_spec(&spec);
    let mut trace = subsim_engine::sink::Collect::default();
    Simulation::new(spec.clone()).run(&mut summary);
    Simulation::new(spec).run(&mut trace);
    // Exact: first request of each arrival → its start, from the trace.
    let mut first: BTreeMap<u64, u64> = BTreeMap::new();
    let mut pending = None;
    let mut waits: Vec<u64> = Vec::new();
    for event in &trace.events {
        match &event.kind {
            EventKind::SpawnRequested { arrival, .. } => {
                pending = *arrival;
                if let Some(arrival) = arrival {
                    first.entry(*arrival).or_insert(event.t.as_micros());
                }
            }
            EventKind::AgentStarted { .. } => {
                if let Some(arrival) = pending.take() {
                    waits.push(event.t.as_micros() - first[&arrival]);
                }
            }
            _ => {}
        }
    }
    waits.sort_unstable();
    let stats = summary.load_report().unwrap().all;
    assert_eq!(stats.wait.count, waits.len() as u64);
    assert!(waits.iter().filter(|wait| **wait > 0).count() > 4_096);
    let exact = |percent: usize| waits[(waits.len() * percent).div_ceil(100) - 1] as f64 / 1e6;
    for (percent, measured) in [
        (50, stats.wait.p50),
        (95, stats.wait.p95),
        (99, stats.wait.p99),
    ] {
        let truth = exact(percent);
        assert!(
            (measured - truth).abs() <= truth * 1e-3 + 1e-6,
            "p{percent}: {measured} vs exact {truth}"
        );
    }
    assert_eq!(stats.wait.max, *waits.last().unwrap() as f64 / 1e6);
    let mean = waits.iter().sum::<u64>() as f64 / waits.len() as f64 / 1e6;
    assert!(
        (stats.wait.mean.mean - mean).abs() < 1e-9,
        "{} vs {mean}",
        stats.wait.mean.mean
    );
}
