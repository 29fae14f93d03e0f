//! Quick manual timing of W1 (not a benchmark: use `cargo bench` for numbers you quote).
//!
//! `w1 [ARRIVALS] [kernel]`: with `kernel`, only the kernel runs (for `perf record`).
use std::time::Instant;
use subsim_benches::{baseline_w1, baseline_w1_tuned, w1_spec};
use subsim_engine::sink::Discard;
use subsim_engine::Simulation;

/// The `subsim` binary's allocator (crates/cli/src/main.rs says why), so that this measures what it does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let kernel_only = std::env::args().nth(2).as_deref() == Some("kernel");
    if kernel_only {
        let start = Instant::now();
        let report = Simulation::new(w1_spec(n)).run(&mut Discard);
        println!("kernel {:?} ({} events)", start.elapsed(), report.events);
        return;
    }
    let start = Instant::now();
    let base = baseline_w1(n, 1);
    let baseline = start.elapsed();
    let start = Instant::now();
    let tuned = baseline_w1_tuned(n, 1);
    let tuned_time = start.elapsed();
    let start = Instant::now();
    let report = Simulation::new(w1_spec(n)).run(&mut Discard);
    let kernel = start.elapsed();
    println!(
        "tuned baseline {tuned_time:?} ({} rejected)",
        tuned.rejected
    );
    println!(
        "baseline {baseline:?} ({} rejected), kernel {kernel:?} ({} events), ratio {:.2}",
        base.rejected,
        report.events,
        kernel.as_secs_f64() / baseline.as_secs_f64()
    );
}
