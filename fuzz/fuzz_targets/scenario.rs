//! cargo-fuzz target: arbitrary bytes as a scenario file → parse → validate → a run
//! bounded by the simulator's limits (20,000 events, 2,000 agents). A panic is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use subsim_engine::expect::Checker;
use subsim_engine::Simulation;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(loaded) = subsim_scenario::parse_scenario(text, "fuzz.yaml", std::path::Path::new("."))
    else {
        return;
    };
    let mut spec = loaded.spec;
    spec.session.limits.max_events = spec.session.limits.max_events.min(20_000);
    spec.session.limits.max_agents = spec.session.limits.max_agents.min(2_000);
    let mut checker = Checker::new(loaded.expect);
    let _ = Simulation::new(spec).run(&mut checker);
    let _ = checker.finish();
});
