//! The summary the kernel keeps through its typed entries (`Simulation::run_summarized`,
//! what `subsim run --format summary` and `sweep` use) is the summary of the events
//! (`Simulation::run` into a `Summary`), for every scenario and workload, and a sink
//! given alongside it still gets every event.

use std::path::Path;

use subsim_engine::sink::Collect;
use subsim_engine::summary::Summary;
use subsim_engine::{SimSpec, Simulation};
use subsim_tests::{repo_root, scenario_files};

/// Both summaries of `spec` under `seed`, rendered, and whether the events a sink beside
/// the kept summary got are the events of the plain run.
fn both_ways(spec: &SimSpec, seed: u64, what: &str) {
    let run = || Simulation::new(spec.clone()).with_seed(seed);
    let mut of_events = Summary::for_spec(spec);
    let mut events = Collect::default();
    let plain = run().run(&mut subsim_engine::sink::Tee {
        first: &mut of_events,
        second: &mut events,
    });
    let mut kept = Summary::for_spec(spec);
    let alone = run().run_summarized(&mut kept, None, None);
    assert_eq!(
        of_events.render_json(),
        kept.render_json(),
        "{what}, seed {seed}: the kept summary's JSON differs"
    );
    assert_eq!(
        of_events.render_text(),
        kept.render_text(),
        "{what}, seed {seed}: the kept summary's table differs"
    );
    assert_eq!(plain.events, alone.events, "{what}, seed {seed}: events");
    assert_eq!(plain.end, alone.end, "{what}, seed {seed}: end");
    let mut with_sink = Summary::for_spec(spec);
    let mut beside = Collect::default();
    run().run_summarized(&mut with_sink, Some(&mut beside), None);
    assert_eq!(
        with_sink.render_json(),
        kept.render_json(),
        "{what}, seed {seed}"
    );
    assert!(
        beside.events == events.events,
        "{what}, seed {seed}: the sink beside the kept summary got other events"
    );
}

#[test]
fn the_kept_summary_is_the_summary_of_the_events_for_every_scenario() {
    let mut tried = 0;
    for path in scenario_files(&repo_root().join("scenarios")) {
        let Ok(loaded) = subsim_scenario::load_scenario(&path) else {
            continue;
        };
        for seed in [1, 7] {
            both_ways(&loaded.spec, seed, &path.display().to_string());
        }
        tried += 1;
    }
    assert!(tried > 100, "only {tried} scenarios loaded");
}

/// The benchmark workloads (load runs of one and many types, retries, reports, prompts;
/// fan-outs, chains and the runaway), load runs cut to a few thousand arrivals; the
/// fan-outs and chains of 100k agents and more are left to their 10k and 1k forms.
#[test]
fn the_kept_summary_is_the_summary_of_the_events_for_every_workload() {
    let dir = repo_root().join("benches/workloads");
    let mut tried = 0;
    for path in scenario_files(&dir) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if ["w2-100k.yaml", "w2-1m.yaml", "w3-100k.yaml"].contains(&name.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("workload reads");
        let cut: String = text
            .lines()
            .map(|line| match line.strip_prefix("  count: ") {
                Some(count) if count.parse::<u64>().is_ok() => "  count: 3000".to_string(),
                _ => line.to_string(),
            })
            .map(|line| line + "\n")
            .collect();
        let loaded = subsim_scenario::parse_scenario(&cut, &name, Path::new(&dir))
            .unwrap_or_else(|problems| panic!("{name}: {problems}"));
        for seed in [1, 7] {
            both_ways(&loaded.spec, seed, &name);
        }
        tried += 1;
    }
    assert!(tried >= 9, "only {tried} workloads");
}
