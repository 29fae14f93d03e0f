//! What the summary costs per event against a trace into nothing (not a benchmark: use
//! `cargo bench` for numbers you quote): the minimum of `ROUNDS` alternating runs of each
//! named workload in `benches/workloads/` into the `Discard` sink (every event built,
//! none kept) and into the `Summary` as `subsim run --format summary` keeps it
//! (`Simulation::run_summarized`: the frequent events are not built), in one process; the
//! difference per event is the summary's counting less the events it did not build (it
//! may be below 0).
//!
//! `cargo run --release -p subsim-benches --example sink_cost -- [ROUNDS] NAME…`
//!
//! With `once discard|summary NAME` it runs the workload once into that sink, for
//! `valgrind --tool=callgrind` (a NAME ending in `.yaml` is a path).
use std::path::Path;
use std::time::{Duration, Instant};

use subsim_engine::sink::Discard;
use subsim_engine::summary::Summary;
use subsim_engine::Simulation;

/// The `subsim` binary's allocator (crates/cli/src/main.rs says why), so that this measures what it does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = match args.first().and_then(|first| first.parse::<usize>().ok()) {
        Some(rounds) => {
            args.remove(0);
            rounds
        }
        None => 5,
    };
    let load = |name: &str| {
        let path = if name.ends_with(".yaml") {
            Path::new(name).to_path_buf()
        } else {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("workloads")
                .join(format!("{name}.yaml"))
        };
        subsim_scenario::load_scenario(&path)
            .unwrap_or_else(|diagnostics| panic!("{}: {diagnostics}", path.display()))
            .spec
    };
    if let [once, sink, name] = &args[..] {
        if once == "once" {
            let spec = load(name);
            let mut summary = Summary::for_spec(&spec);
            match sink.as_str() {
                "discard" => drop(Simulation::new(spec).run(&mut Discard)),
                _ => drop(Simulation::new(spec).run_summarized(&mut summary, None, None)),
            }
            println!("{} events", std::hint::black_box(&summary).events());
            return;
        }
    }
    for name in &args {
        let spec = load(name);
        let mut discard = Duration::MAX;
        let mut summary = Duration::MAX;
        let mut events = 0;
        for _ in 0..rounds {
            let start = Instant::now();
            Simulation::new(spec.clone()).run(&mut Discard);
            discard = discard.min(start.elapsed());
            let start = Instant::now();
            let mut sink = Summary::for_spec(&spec);
            Simulation::new(spec.clone()).run_summarized(&mut sink, None, None);
            std::hint::black_box(&sink);
            summary = summary.min(start.elapsed());
            events = sink.events();
        }
        let extra = summary.as_secs_f64() - discard.as_secs_f64();
        println!(
            "{name}: {events} events, discard {discard:?}, summary {summary:?}, \
             summary − discard {:.2} ms = {:.2} ns/event ({:.1} % of summary)",
            extra * 1e3,
            extra * 1e9 / events.max(1) as f64,
            100.0 * extra / summary.as_secs_f64()
        );
    }
}
