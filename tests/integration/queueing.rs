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
