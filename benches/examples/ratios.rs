//! Quick manual ratios (not a benchmark: use `cargo bench` for numbers you quote): the
//! minimum of `ROUNDS` alternating runs of the heap-loop baseline and of each named
//! workload in `benches/workloads/` with the summary sink, in one process.
//!
//! `cargo run --release -p subsim-benches --example ratios -- [ROUNDS] NAME…`
use std::path::Path;
use std::time::{Duration, Instant};

use subsim_benches::baseline_w1;
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
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads");
    let specs: Vec<_> = args
        .iter()
        .map(|name| {
            let path = dir.join(format!("{name}.yaml"));
            let loaded = subsim_scenario::load_scenario(&path)
                .unwrap_or_else(|diagnostics| panic!("{}: {diagnostics}", path.display()));
            (name.clone(), loaded.spec)
        })
        .collect();
    let mut best_baseline = Duration::MAX;
    let mut best: Vec<Duration> = vec![Duration::MAX; specs.len()];
    for _ in 0..rounds {
        let start = Instant::now();
        std::hint::black_box(baseline_w1(1_000_000, 1));
        best_baseline = best_baseline.min(start.elapsed());
        for ((_, spec), best) in specs.iter().zip(&mut best) {
            let start = Instant::now();
            let mut summary = Summary::for_spec(spec);
            Simulation::new(spec.clone()).run_summarized(&mut summary, None, None);
            std::hint::black_box(&summary);
            *best = (*best).min(start.elapsed());
        }
    }
    println!("baseline_w1_1m {best_baseline:?}");
    for ((name, _), best) in specs.iter().zip(&best) {
        println!(
            "{name} {best:?} ratio {:.2}",
            best.as_secs_f64() / best_baseline.as_secs_f64()
        );
    }
}
