//! The plain heap loop of W1 (`baseline_w1`) as a process of its own, the yardstick for
//! whole-process ratios of the `subsim` binary (start-up and parsing included):
//!
//! `heap_loop [ARRIVALS] [SEED]` (defaults: 1,000,000 arrivals, seed 1) prints the number
//! of arrivals and of rejections. See docs/PERFORMANCE.md, "Whole process".
use subsim_benches::baseline_w1;

fn main() {
    let mut args = std::env::args().skip(1);
    let arrivals = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let seed = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let result = baseline_w1(arrivals, seed);
    println!("{arrivals} arrivals, {} rejected", result.rejected);
}
