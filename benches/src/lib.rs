//! Workloads shared by the benches, and the hand-written baseline they are measured
//! against.
//!
//! W1 (the reference workload): Poisson spawns at 20/s against cap 20, each run
//! `work: exp(1s)`, `retry: none`. [`baseline_w1`] is the smallest honest program that
//! simulates the same loss system — a binary heap of departures, one ChaCha8 stream — so
//! subsim's time is quoted as a ratio to it, measured in the same run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};
use subsim_engine::spec::SimSpec;
use subsim_engine::time::SimTime;

/// The W1 spec with `arrivals` Poisson arrivals.
pub fn w1_spec(arrivals: u64) -> SimSpec {
    SimSpec::poisson_load("W1", 20.0, SimTime::from_secs(1), arrivals)
}

/// What the baseline measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaselineResult {
    /// Arrivals simulated.
    pub arrivals: u64,
    /// Arrivals rejected because 20 were running.
    pub rejected: u64,
    /// Time of the last departure, µs.
    pub makespan_us: u64,
}

/// The minimal hand-written binary-heap loop for W1 — the baseline the issue names:
/// arrivals and departures are events on one binary heap keyed by (time, seq); exponential
/// draws from one ChaCha8 stream, rounded to µs; a counter of rejections. It emits nothing.
pub fn baseline_w1(arrivals: u64, seed: u64) -> BaselineResult {
    #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Kind {
        Arrival,
        Departure,
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let interarrival = Exp::new(20.0_f64 / 1e6).expect("positive rate");
    let service = Exp::new(1.0_f64 / 1e6).expect("positive rate");
    let mut queue: BinaryHeap<Reverse<(u64, u64, Kind)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut running = 0u32;
    let mut rejected = 0u64;
    let mut emitted = 0u64;
    let mut makespan = 0;
    let first = interarrival.sample(&mut rng).round() as u64;
    queue.push(Reverse((first, seq, Kind::Arrival)));
    while let Some(Reverse((now, _, kind))) = queue.pop() {
        match kind {
            Kind::Arrival => {
                emitted += 1;
                if running < 20 {
                    running += 1;
                    seq += 1;
                    let done = now + service.sample(&mut rng).round() as u64;
                    queue.push(Reverse((done, seq, Kind::Departure)));
                } else {
                    rejected += 1;
                }
                if emitted < arrivals {
                    seq += 1;
                    let next = now + interarrival.sample(&mut rng).round() as u64;
                    queue.push(Reverse((next, seq, Kind::Arrival)));
                }
            }
            Kind::Departure => {
                running -= 1;
                makespan = now;
            }
        }
    }
    BaselineResult {
        arrivals: emitted,
        rejected,
        makespan_us: makespan,
    }
}

/// A tuned variant of the baseline: only departures live on the heap, the next arrival is
/// kept aside (there is always exactly one). Measured beside the plain loop so the ratio to
/// the fastest hand-written loop we know is reported too.
pub fn baseline_w1_tuned(arrivals: u64, seed: u64) -> BaselineResult {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let interarrival = Exp::new(20.0_f64 / 1e6).expect("positive rate");
    let service = Exp::new(1.0_f64 / 1e6).expect("positive rate");
    // Departures only; the next arrival is kept aside (it is always one event).
    let mut departures: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut running = 0u32;
    let mut rejected = 0u64;
    let mut now;
    let mut next_arrival = interarrival.sample(&mut rng).round() as u64;
    let mut emitted = 0u64;
    let mut makespan = 0;
    loop {
        let next_departure = departures.peek().map(|Reverse((t, _))| *t);
        match next_departure {
            Some(t) if emitted >= arrivals || t <= next_arrival => {
                departures.pop();
                now = t;
                running -= 1;
                makespan = now;
            }
            _ if emitted < arrivals => {
                now = next_arrival;
                emitted += 1;
                if running < 20 {
                    running += 1;
                    seq += 1;
                    let done = now + service.sample(&mut rng).round() as u64;
                    departures.push(Reverse((done, seq)));
                } else {
                    rejected += 1;
                }
                next_arrival = now + interarrival.sample(&mut rng).round() as u64;
            }
            _ => break,
        }
    }
    BaselineResult {
        arrivals: emitted,
        rejected,
        makespan_us: makespan,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baselines_block_like_erlang_b() {
        for result in [baseline_w1(200_000, 3), baseline_w1_tuned(200_000, 3)] {
            assert_eq!(result.arrivals, 200_000);
            let fraction = result.rejected as f64 / result.arrivals as f64;
            // Erlang B(20, 20) = 0.1589.
            assert!((fraction - 0.1589).abs() < 0.01, "{fraction}");
        }
    }
}
