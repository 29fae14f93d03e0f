//! Queueing theory for the cap: Erlang B (the loss system `retry: none` forms) and
//! Erlang C (the FIFO queue `retry: queue` forms), for Poisson arrivals and exponential
//! runs, so that `subsim erlang` and `subsim sweep` can set theory beside simulation.
//!
//! `load` is the offered load A = arrival rate × mean run time, in Erlangs; `cap` is the
//! number of slots c.

/// Erlang B: the share of arrivals a loss system with `cap` slots at `load` Erlangs
/// rejects, by the stable recurrence B(0) = 1, B(k) = A·B(k−1) / (k + A·B(k−1)).
///
/// ```
/// let b = subsim_engine::erlang::erlang_b(20, 20.0);
/// assert!((b - 0.158_892).abs() < 1e-6);
/// ```
pub fn erlang_b(cap: u32, load: f64) -> f64 {
    let mut blocking = 1.0;
    for k in 1..=cap {
        blocking = load * blocking / (f64::from(k) + load * blocking);
    }
    blocking
}

/// Erlang C: the share of arrivals that wait in an M/M/c queue with `cap` slots at
/// `load` Erlangs; 1 when the queue is unstable (`load` ≥ `cap`).
///
/// ```
/// let c = subsim_engine::erlang::erlang_c(2, 1.0);
/// assert!((c - 1.0 / 3.0).abs() < 1e-12);
/// ```
pub fn erlang_c(cap: u32, load: f64) -> f64 {
    let c = f64::from(cap);
    if load >= c {
        return 1.0;
    }
    let b = erlang_b(cap, load);
    c * b / (c - load * (1.0 - b))
}

/// Mean wait of all arrivals (waiting or not) in the M/M/c queue, in mean run times:
/// C(c, A) / (c − A); infinite when the queue is unstable.
///
/// ```
/// let w = subsim_engine::erlang::mean_wait_holding_times(2, 1.0);
/// assert!((w - 1.0 / 3.0).abs() < 1e-12);
/// ```
pub fn mean_wait_holding_times(cap: u32, load: f64) -> f64 {
    let c = f64::from(cap);
    if load >= c {
        return f64::INFINITY;
    }
    erlang_c(cap, load) / (c - load)
}

/// The smallest cap whose Erlang B blocking at `load` is at most `target`, searching up
/// to `max_cap`; `None` when even `max_cap` blocks more.
///
/// ```
/// assert_eq!(subsim_engine::erlang::smallest_cap(20.0, 0.01, 1_000), Some(30));
/// ```
pub fn smallest_cap(load: f64, target: f64, max_cap: u32) -> Option<u32> {
    let mut blocking = 1.0;
    if blocking <= target {
        return Some(0);
    }
    for k in 1..=max_cap {
        blocking = load * blocking / (f64::from(k) + load * blocking);
        if blocking <= target {
            return Some(k);
        }
    }
    None
}

/// The `p` quantile (0 < p < 1) of the wait of all arrivals in the M/M/c queue, in mean
/// run times: P(W > t) = C(c, A)·e^{−(c − A)t}, so 0 when C(c, A) ≤ 1 − p and otherwise
/// ln(C / (1 − p)) / (c − A); infinite when the queue is unstable.
///
/// ```
/// // M/M/1 at ρ = 0.5: P(W > t) = 0.5·e^{−0.5t}; the p95 is 2 ln 10.
/// let q = subsim_engine::erlang::wait_quantile_holding_times(1, 0.5, 0.95);
/// assert!((q - 2.0 * 10f64.ln()).abs() < 1e-12);
/// ```
pub fn wait_quantile_holding_times(cap: u32, load: f64, p: f64) -> f64 {
    let c = f64::from(cap);
    if load >= c {
        return f64::INFINITY;
    }
    let waiting = erlang_c(cap, load);
    if waiting <= 1.0 - p {
        return 0.0;
    }
    (waiting / (1.0 - p)).ln() / (c - load)
}

/// The smallest cap above the load whose wait (in mean run times) by `wait` is under
/// `bound`, searching up to `max_cap`.
pub fn smallest_cap_for_wait(
    load: f64,
    bound: f64,
    max_cap: u32,
    wait: impl Fn(u32, f64) -> f64,
) -> Option<u32> {
    let first = (load.floor() as u64 + 1).min(u64::from(u32::MAX)) as u32;
    (first.max(1)..=max_cap).find(|cap| wait(*cap, load) < bound)
}

#[cfg(test)]
mod tests {
    #[test]
    fn wait_quantiles_and_the_smallest_cap_for_a_wait() {
        // At a cap far above the load almost nothing waits: the p95 wait is 0.
        assert_eq!(wait_quantile_holding_times(60, 30.0, 0.95), 0.0);
        assert!(wait_quantile_holding_times(30, 30.0, 0.95).is_infinite());
        let cap = smallest_cap_for_wait(30.0, 0.01, 1_000, mean_wait_holding_times).unwrap();
        assert!(mean_wait_holding_times(cap, 30.0) < 0.01);
        assert!(mean_wait_holding_times(cap - 1, 30.0) >= 0.01);
        let p95 = |cap, load| wait_quantile_holding_times(cap, load, 0.95);
        let cap = smallest_cap_for_wait(30.0, 0.1, 1_000, p95).unwrap();
        assert!(p95(cap, 30.0) < 0.1 && p95(cap - 1, 30.0) >= 0.1);
    }

    use super::*;

    #[test]
    fn known_values() {
        // Published table values.
        assert!((erlang_b(1, 1.0) - 0.5).abs() < 1e-12);
        assert!((erlang_b(10, 5.0) - 0.018_385).abs() < 1e-6);
        assert!((erlang_c(10, 5.0) - 0.036_105).abs() < 1e-6);
        // M/M/1: C = ρ, W = ρ / (1 − ρ) holding times.
        assert!((erlang_c(1, 0.5) - 0.5).abs() < 1e-12);
        assert!((mean_wait_holding_times(1, 0.5) - 1.0).abs() < 1e-12);
        assert_eq!(erlang_c(5, 5.0), 1.0);
        assert!(mean_wait_holding_times(5, 6.0).is_infinite());
    }

    #[test]
    fn smallest_cap_is_the_first_cap_at_or_below_the_target() {
        for (load, target) in [(20.0, 0.01), (5.0, 0.05), (50.0, 0.001)] {
            let cap = smallest_cap(load, target, 10_000).unwrap();
            assert!(erlang_b(cap, load) <= target);
            assert!(erlang_b(cap - 1, load) > target);
        }
        assert_eq!(smallest_cap(100.0, 1e-9, 10), None);
        assert_eq!(smallest_cap(3.0, 1.0, 10), Some(0));
    }
}
