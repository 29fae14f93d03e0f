//! Estimators for run statistics in bounded memory: [`BatchMeans`] (a mean with its 95 %
//! confidence interval from batch means within one run) and [`Quantiles`] (mean, p50, p95,
//! p99 and max of durations, exact for small samples, an HDR histogram beyond).
//!
//! Both cost a few arithmetic operations per observation and never grow with the run:
//! batch means keep at most [`MAX_BATCHES`] batches (adjacent batches are merged, doubling
//! the batch size, when they fill up), and quantiles keep at most [`EXACT_SAMPLES`] values
//! before moving to a histogram with three significant digits.

use hdrhistogram::Histogram;

/// Batches kept at most; when full, adjacent pairs are merged (so 32 to 64 remain).
pub const MAX_BATCHES: usize = 64;
/// Samples kept exactly before [`Quantiles`] switches to a histogram.
pub const EXACT_SAMPLES: usize = 4_096;

/// The largest whole number up to which every whole number is an `f64` (2^53).
const EXACT_WHOLE: f64 = 9_007_199_254_740_992.0;
/// [`EXACT_WHOLE`] as an integer.
const EXACT_WHOLE_U64: u64 = 1 << 53;

/// A mean with its 95 % confidence interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Estimate {
    /// The point estimate.
    pub mean: f64,
    /// Lower end of the 95 % interval (the mean itself when there are too few batches).
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// How many batch means the interval is drawn from. With fewer than two there is no
    /// interval ([`Estimate::has_interval`]): `lo` and `hi` are then the mean itself.
    pub batches: usize,
}

impl Estimate {
    /// The interval cut to what the quantity can be (a share to [0, 1], a count to ≥ 0).
    pub fn clamped(self, low: f64, high: f64) -> Estimate {
        Estimate {
            lo: self.lo.max(low),
            hi: self.hi.min(high),
            ..self
        }
    }

    /// Whether there is an interval: two or more batch means (one observation, or one
    /// stretch of time, gives none).
    pub fn has_interval(&self) -> bool {
        self.batches >= 2
    }

    /// The estimate scaled by `factor` (e.g. µs → s, running → utilisation).
    pub fn scaled(self, factor: f64) -> Estimate {
        Estimate {
            mean: self.mean * factor,
            lo: self.lo * factor,
            hi: self.hi * factor,
            ..self
        }
    }
}

/// The method of batch means: observations (value, weight) in the order they occur are
/// grouped into consecutive batches of equal count; the batch means are nearly independent
/// when batches are long compared with the run's correlation time, and Student's t over
/// them gives the interval.
///
/// ```
/// use subsim_engine::stats::BatchMeans;
/// let mut blocked = BatchMeans::default();
/// for index in 0..10_000u64 {
///     blocked.add(if index % 10 == 0 { 1.0 } else { 0.0 }, 1.0);
/// }
/// let estimate = blocked.estimate();
/// assert!((estimate.mean - 0.1).abs() < 1e-12);
/// assert!(estimate.lo <= 0.1 && 0.1 <= estimate.hi);
/// ```
#[derive(Clone, Debug)]
pub struct BatchMeans {
    /// Observations per complete batch.
    batch_size: u64,
    /// Complete batches: (Σ value·weight, Σ weight).
    batches: Vec<(f64, f64)>,
    /// The batch being filled.
    current: (f64, f64),
    current_count: u64,
    /// Over everything, the incomplete batch included.
    total: (f64, f64),
}

impl Default for BatchMeans {
    fn default() -> BatchMeans {
        BatchMeans {
            batch_size: 1,
            batches: Vec::new(),
            current: (0.0, 0.0),
            current_count: 0,
            total: (0.0, 0.0),
        }
    }
}

impl BatchMeans {
    /// One observation with its weight (1 for a count, a duration for a time average).
    #[inline]
    pub fn add(&mut self, value: f64, weight: f64) {
        let weighted = value * weight;
        self.total.0 += weighted;
        self.total.1 += weight;
        self.current.0 += weighted;
        self.current.1 += weight;
        self.current_count += 1;
        if self.current_count == self.batch_size {
            self.close_batch();
        }
    }

    /// `count` observations of 0 with weight 1: exactly what `count` calls of
    /// `add(0.0, 1.0)` leave, in a few operations instead of a few per observation.
    ///
    /// Adding `0.0 · 1.0` to a weighted sum changes it only once (a `−0.0` becomes `0.0`),
    /// and adding `1.0` `n` times to a weight that is a whole number in [−2^53, 2^53 − n]
    /// is adding `n`, exactly (every sum on the way is a whole number of at most 53
    /// bits); other weights take the observations one by one.
    #[inline]
    pub fn add_zeros(&mut self, count: u64) {
        if count < self.batch_size - self.current_count && self.zeros_fit(count) {
            self.add_zeros_within(count);
        } else {
            self.add_zeros_across(count);
        }
    }

    /// Whether `count` zeros can be added in bulk: both weights are whole numbers that
    /// stay at most 2^53.
    #[inline]
    fn zeros_fit(&self, count: u64) -> bool {
        let whole = |weight: f64| {
            count <= EXACT_WHOLE_U64
                && weight >= -EXACT_WHOLE
                && weight <= EXACT_WHOLE - count as f64
                && weight == (weight as i64) as f64
        };
        whole(self.total.1) && whole(self.current.1)
    }

    /// `count` zeros that close no batch, whose weights [fit](BatchMeans::zeros_fit).
    #[inline]
    fn add_zeros_within(&mut self, count: u64) {
        self.total.0 += 0.0;
        self.current.0 += 0.0;
        self.total.1 += count as f64;
        self.current.1 += count as f64;
        self.current_count += count;
    }

    /// [`BatchMeans::add_zeros`] that closes batches on the way (or whose weights do not
    /// fit): in bulk up to each batch's last observation, which is added alone.
    #[cold]
    fn add_zeros_across(&mut self, mut count: u64) {
        while count > 0 {
            let step = count.min(self.batch_size - self.current_count - 1);
            if step > 0 && self.zeros_fit(step) {
                self.add_zeros_within(step);
                count -= step;
            } else {
                self.add(0.0, 1.0);
                count -= 1;
            }
        }
    }

    #[cold]
    fn close_batch(&mut self) {
        self.batches.push(self.current);
        self.current = (0.0, 0.0);
        self.current_count = 0;
        if self.batches.len() == MAX_BATCHES {
            let merged: Vec<(f64, f64)> = self
                .batches
                .chunks(2)
                .map(|pair| (pair[0].0 + pair[1].0, pair[0].1 + pair[1].1))
                .collect();
            self.batches = merged;
            self.batch_size *= 2;
        }
    }

    /// Total weight seen (the number of observations for weight 1).
    pub fn weight(&self) -> f64 {
        self.total.1
    }

    /// The weighted mean (0 with no weight).
    pub fn mean(&self) -> f64 {
        if self.total.1 > 0.0 {
            self.total.0 / self.total.1
        } else {
            0.0
        }
    }

    /// The mean and its 95 % interval; the interval is the mean itself with fewer than
    /// two complete batches.
    pub fn estimate(&self) -> Estimate {
        let mean = self.mean();
        let means: Vec<f64> = self
            .batches
            .iter()
            .filter(|(_, weight)| *weight > 0.0)
            .map(|(sum, weight)| sum / weight)
            .collect();
        let count = means.len();
        if count < 2 {
            return Estimate {
                mean,
                lo: mean,
                hi: mean,
                batches: count,
            };
        }
        let batch_mean = means.iter().sum::<f64>() / count as f64;
        let variance = means
            .iter()
            .map(|value| (value - batch_mean).powi(2))
            .sum::<f64>()
            / (count - 1) as f64;
        let half = t_975(count - 1) * (variance / count as f64).sqrt();
        Estimate {
            mean,
            lo: mean - half,
            hi: mean + half,
            batches: count,
        }
    }
}

/// [`BatchMeans`] of observations that are each 0 or 1 with weight 1 (the share of events
/// with some property, e.g. arrivals that the cap blocked), kept as whole counts: an
/// observation is a few integer adds, and any number of zeros at once about as many.
///
/// Every sum `BatchMeans` keeps for such observations is a whole number no larger than
/// the number of observations, so while there are at most 2^53 of them (more than a run
/// can make: one per arrival) its `f64` sums are exact and equal these counts, and
/// [`ShareMeans::batch_means`] gives bit for bit the `BatchMeans` the same observations
/// leave.
#[derive(Clone, Debug)]
pub struct ShareMeans {
    /// Observations per complete batch.
    batch_size: u64,
    /// Complete batches: (ones, observations).
    batches: Vec<(u64, u64)>,
    /// The batch being filled: (ones, observations).
    current: (u64, u64),
    /// Over everything: (ones, observations).
    total: (u64, u64),
}

impl Default for ShareMeans {
    fn default() -> ShareMeans {
        ShareMeans {
            batch_size: 1,
            batches: Vec::new(),
            current: (0, 0),
            total: (0, 0),
        }
    }
}

impl ShareMeans {
    /// One observation: 1 if `one`, else 0 (`BatchMeans::add(0.0 or 1.0, 1.0)`).
    #[inline]
    pub fn add(&mut self, one: bool) {
        self.total.0 += u64::from(one);
        self.total.1 += 1;
        self.current.0 += u64::from(one);
        self.current.1 += 1;
        if self.current.1 == self.batch_size {
            self.close_batch();
        }
    }

    /// `count` observations of 0 (`BatchMeans::add_zeros`).
    #[inline]
    pub fn add_zeros(&mut self, mut count: u64) {
        self.total.1 += count;
        loop {
            let room = self.batch_size - self.current.1;
            if count < room {
                self.current.1 += count;
                return;
            }
            // The batch's last observation closes it, as one by one.
            self.current.1 += room;
            count -= room;
            self.close_batch();
        }
    }

    #[cold]
    fn close_batch(&mut self) {
        self.batches.push(self.current);
        self.current = (0, 0);
        if self.batches.len() == MAX_BATCHES {
            self.batches = self
                .batches
                .chunks(2)
                .map(|pair| (pair[0].0 + pair[1].0, pair[0].1 + pair[1].1))
                .collect();
            self.batch_size *= 2;
        }
    }

    /// The [`BatchMeans`] of the same observations.
    pub fn batch_means(&self) -> BatchMeans {
        debug_assert!(
            self.total.1 <= EXACT_WHOLE_U64,
            "more observations than f64 counts exactly"
        );
        let pair = |(ones, count): (u64, u64)| (ones as f64, count as f64);
        BatchMeans {
            batch_size: self.batch_size,
            batches: self.batches.iter().copied().map(pair).collect(),
            current: pair(self.current),
            current_count: self.current.1,
            total: pair(self.total),
        }
    }

    /// The share and its 95 % interval ([`BatchMeans::estimate`]).
    pub fn estimate(&self) -> Estimate {
        self.batch_means().estimate()
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (a table to 30, then the
/// Cornish–Fisher expansion, accurate to 1e-4 there).
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    if df == 0 {
        return f64::INFINITY;
    }
    if df <= TABLE.len() {
        return TABLE[df - 1];
    }
    let z: f64 = 1.959_964;
    let n = df as f64;
    z + (z.powi(3) + z) / (4.0 * n)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * n * n)
        + (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / (384.0 * n.powi(3))
}

/// The `p` quantile (0 < p < 1) of Student's t with `df` degrees of freedom, by bisection
/// on its distribution function (the regularised incomplete beta function, by its
/// continued fraction): for intervals at other confidences than 95 %, such as the
/// Bonferroni-corrected ones of `subsim capacity`. Accurate to about 1e-9.
///
/// ```
/// use subsim_engine::stats::t_quantile;
/// assert!((t_quantile(0.975, 4) - 2.776_445).abs() < 1e-5);
/// assert!((t_quantile(0.995, 10) - 3.169_273).abs() < 1e-5);
/// ```
pub fn t_quantile(p: f64, df: usize) -> f64 {
    if df == 0 || p.is_nan() || p >= 1.0 {
        return f64::INFINITY;
    }
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while t_cdf(hi, df) < p && hi < 1e12 {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi.max(1.0) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Student's t distribution function: P(T ≤ t) with `df` degrees of freedom.
pub fn t_cdf(t: f64, df: usize) -> f64 {
    let n = df as f64;
    let x = n / (n + t * t);
    let tail = 0.5 * incomplete_beta(0.5 * n, 0.5, x);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = G[0];
    for (index, g) in G.iter().enumerate().skip(1) {
        sum += g / (x + index as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The regularised incomplete beta function I_x(a, b).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        for step in [
            even,
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + step * d;
            if d.abs() < TINY {
                d = TINY;
            }
            c = 1.0 + step / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// Mean, percentiles and maximum of durations (µs), with the mean's interval.
#[derive(Clone, Debug, Default)]
pub struct Quantiles {
    /// Zeros, counted apart (a wait that did not happen is the common case).
    zeros: u64,
    /// Other values while there are at most [`EXACT_SAMPLES`] of them.
    exact: Vec<u64>,
    /// All values once there were more.
    histogram: Option<Histogram<u64>>,
    max: u64,
    mean: BatchMeans,
}

/// Records `value`, growing the (auto-resizing) histogram's range when needed; a value
/// beyond any range is kept at the top.
#[inline]
fn record(histogram: &mut Histogram<u64>, value: u64) {
    if histogram.record(value).is_err() {
        histogram.saturating_record(value);
    }
}

/// What [`Quantiles`] reports, in µs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Distribution {
    /// How many values.
    pub count: u64,
    /// Mean with its 95 % interval.
    pub mean: Estimate,
    /// Median (nearest rank).
    pub p50: u64,
    /// 95th percentile (nearest rank).
    pub p95: u64,
    /// 99th percentile (nearest rank).
    pub p99: u64,
    /// Largest value.
    pub max: u64,
}

impl Quantiles {
    /// One value, µs.
    #[inline]
    pub fn record(&mut self, value: u64) {
        self.mean.add(value as f64, 1.0);
        if value == 0 {
            self.zeros += 1;
            return;
        }
        self.max = self.max.max(value);
        match &mut self.histogram {
            Some(histogram) => record(histogram, value),
            None => {
                self.exact.push(value);
                if self.exact.len() > EXACT_SAMPLES {
                    self.spill();
                }
            }
        }
    }

    /// `count` values of 0: the same as `count` calls of `record(0)`.
    pub fn record_zeros(&mut self, count: u64) {
        self.mean.add_zeros(count);
        self.zeros += count;
    }

    #[cold]
    fn spill(&mut self) {
        // Three significant digits: every percentile within 0.1 % of the exact one.
        let mut histogram =
            Histogram::<u64>::new(3).expect("three significant digits is a valid precision");
        for value in self.exact.drain(..) {
            record(&mut histogram, value);
        }
        self.exact = Vec::new();
        self.histogram = Some(histogram);
    }

    /// How many values.
    pub fn count(&self) -> u64 {
        self.mean.weight() as u64
    }

    /// Count, mean with interval, p50, p95, p99 and max (all zero when empty).
    pub fn distribution(&self) -> Distribution {
        let count = self.count();
        if count == 0 {
            return Distribution::default();
        }
        let (p50, p95, p99) = match &self.histogram {
            Some(histogram) => {
                let mut histogram = histogram.clone();
                if self.zeros > 0 {
                    let _ = histogram.record_n(0, self.zeros);
                }
                let at = |quantile: f64| histogram.value_at_quantile(quantile).min(self.max);
                (at(0.50), at(0.95), at(0.99))
            }
            None => {
                let mut sorted = self.exact.clone();
                sorted.sort_unstable();
                // Nearest rank over the zeros followed by the sorted other values.
                let zeros = self.zeros as usize;
                let rank = |percent: usize| {
                    let rank = (zeros + sorted.len()) * percent;
                    let index = rank.div_ceil(100) - 1;
                    if index < zeros {
                        0
                    } else {
                        sorted[index - zeros]
                    }
                };
                (rank(50), rank(95), rank(99))
            }
        };
        Distribution {
            count,
            mean: self.mean.estimate(),
            p50,
            p95,
            p99,
            max: self.max,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn t_quantiles_match_the_table() {
        for df in 1..=30 {
            let q = super::t_quantile(0.975, df);
            assert!((q - super::t_975(df)).abs() < 2e-3, "df {df}: {q}");
        }
        assert!((super::t_quantile(0.999, 3) - 10.214_532).abs() < 1e-4);
        assert!((super::t_quantile(0.025, 4) + 2.776_445).abs() < 1e-5);
        assert!((super::t_quantile(0.975, 10_000) - 1.960_201).abs() < 1e-4);
    }

    use super::*;

    #[test]
    fn batches_stay_bounded_and_the_mean_is_exact() {
        let mut means = BatchMeans::default();
        for index in 0..1_000_003u64 {
            means.add((index % 7) as f64, 1.0);
        }
        assert!(means.batches.len() < MAX_BATCHES && means.batches.len() >= MAX_BATCHES / 2);
        let expected = (0..1_000_003u64).map(|i| (i % 7) as f64).sum::<f64>() / 1_000_003.0;
        assert!((means.mean() - expected).abs() < 1e-9);
        let estimate = means.estimate();
        assert!(estimate.lo <= estimate.mean && estimate.mean <= estimate.hi);
        assert!(estimate.hi - estimate.lo < 0.01, "{estimate:?}");
    }

    #[test]
    fn the_interval_covers_the_true_mean_about_95_percent_of_the_time() {
        // Independent uniform draws from a fixed LCG: 200 runs, each of 10,000 values.
        let mut state: u64 = 12_345;
        let mut covered = 0;
        for _ in 0..200 {
            let mut means = BatchMeans::default();
            for _ in 0..10_000 {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                means.add((state >> 11) as f64 / (1u64 << 53) as f64, 1.0);
            }
            let estimate = means.estimate();
            if estimate.lo <= 0.5 && 0.5 <= estimate.hi {
                covered += 1;
            }
        }
        assert!((180..=200).contains(&covered), "covered {covered} of 200");
    }

    /// A tiny xorshift generator for the property tests.
    fn draws(mut state: u64) -> impl FnMut(u64) -> u64 {
        move |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        }
    }

    #[test]
    fn share_means_leave_what_batch_means_leave() {
        // Bit for bit (the debug form prints every f64 exactly), on random mixes of ones,
        // single zeros and zeros in bulk across many batch closes and merges.
        for seed in 1..=16u64 {
            let mut draw = draws(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut share = ShareMeans::default();
            let mut means = BatchMeans::default();
            for _ in 0..3_000 {
                match draw(4) {
                    0 => {
                        let count = if draw(2) == 0 { draw(5) } else { draw(2_000) };
                        share.add_zeros(count);
                        for _ in 0..count {
                            means.add(0.0, 1.0);
                        }
                    }
                    1 => {
                        share.add(true);
                        means.add(1.0, 1.0);
                    }
                    _ => {
                        share.add(false);
                        means.add(0.0, 1.0);
                    }
                }
                assert_eq!(
                    format!("{:?}", share.batch_means()),
                    format!("{means:?}"),
                    "seed {seed}"
                );
            }
            assert_eq!(
                format!("{:?}", share.estimate()),
                format!("{:?}", means.estimate())
            );
        }
    }

    #[test]
    fn zeros_in_bulk_leave_what_zeros_one_by_one_leave() {
        // Bit for bit (the debug form prints every f64 exactly, −0.0 included), on random
        // mixes of bulk zeros, single zeros, ones, other values and weights that are not
        // whole numbers (which take the one-by-one path).
        for seed in 1..=24u64 {
            let mut draw = draws(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut bulk = BatchMeans::default();
            let mut single = BatchMeans::default();
            let mut bulk_quantiles = Quantiles::default();
            let mut single_quantiles = Quantiles::default();
            for _ in 0..2_000 {
                match draw(6) {
                    0..=2 => {
                        let count = match draw(4) {
                            0 => draw(3),
                            1 => draw(200),
                            _ => draw(3_000),
                        };
                        bulk.add_zeros(count);
                        bulk_quantiles.record_zeros(count);
                        for _ in 0..count {
                            single.add(0.0, 1.0);
                            single_quantiles.record(0);
                        }
                    }
                    3 => {
                        let value = draw(2) as f64;
                        bulk.add(value, 1.0);
                        single.add(value, 1.0);
                        let wait = draw(1_000_000);
                        bulk_quantiles.record(wait);
                        single_quantiles.record(wait);
                    }
                    4 if seed % 4 == 0 => {
                        let (value, weight) = (draw(7) as f64 * 0.3, 0.25 + draw(9) as f64);
                        bulk.add(value, weight);
                        single.add(value, weight);
                    }
                    _ if seed % 8 == 1 => {
                        bulk.add(-0.0, 1.0);
                        single.add(-0.0, 1.0);
                    }
                    _ => {}
                }
                assert_eq!(format!("{bulk:?}"), format!("{single:?}"), "seed {seed}");
            }
            assert_eq!(
                format!("{:?}", bulk.estimate()),
                format!("{:?}", single.estimate())
            );
            assert_eq!(
                format!("{bulk_quantiles:?}"),
                format!("{single_quantiles:?}")
            );
            assert_eq!(
                bulk_quantiles.distribution(),
                single_quantiles.distribution()
            );
        }
    }

    #[test]
    fn zeros_in_bulk_past_exact_whole_weights_go_one_by_one() {
        let mut bulk = BatchMeans::default();
        bulk.total.1 = EXACT_WHOLE - 2.0;
        let mut single = bulk.clone();
        bulk.add_zeros(5);
        for _ in 0..5 {
            single.add(0.0, 1.0);
        }
        assert_eq!(format!("{bulk:?}"), format!("{single:?}"));
    }

    #[test]
    fn t_quantiles() {
        assert_eq!(t_975(1), 12.706);
        assert!((t_975(31) - 2.0395).abs() < 1e-3);
        assert!((t_975(60) - 2.0003).abs() < 1e-3);
        assert!((t_975(1_000_000) - 1.96).abs() < 1e-3);
        assert!(t_975(0).is_infinite());
    }

    #[test]
    fn small_samples_are_exact() {
        let mut quantiles = Quantiles::default();
        for value in (1..=100u64).rev() {
            quantiles.record(value * 1_000);
        }
        let mut with_zeros = Quantiles::default();
        for value in (1..=4u64).chain([0; 6]) {
            with_zeros.record(value);
        }
        let distribution = with_zeros.distribution();
        assert_eq!(
            (
                distribution.p50,
                distribution.p95,
                distribution.max,
                distribution.count
            ),
            (0, 4, 4, 10)
        );
        let distribution = quantiles.distribution();
        assert_eq!(distribution.count, 100);
        assert_eq!(
            (
                distribution.p50,
                distribution.p95,
                distribution.p99,
                distribution.max
            ),
            (50_000, 95_000, 99_000, 100_000)
        );
        assert!((distribution.mean.mean - 50_500.0).abs() < 1e-9);
        assert_eq!(Quantiles::default().distribution(), Distribution::default());
    }

    #[test]
    fn large_samples_are_within_the_histogram_precision() {
        let mut quantiles = Quantiles::default();
        let mut exact = Vec::new();
        let mut state: u64 = 99;
        for _ in 0..200_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let value = (state >> 40) % 60_000_000;
            quantiles.record(value);
            exact.push(value);
        }
        exact.sort_unstable();
        let distribution = quantiles.distribution();
        assert!(quantiles.exact.is_empty() && quantiles.histogram.is_some());
        for (percent, measured) in [
            (50, distribution.p50),
            (95, distribution.p95),
            (99, distribution.p99),
        ] {
            let truth = exact[(exact.len() * percent).div_ceil(100) - 1];
            let error = (measured as f64 - truth as f64).abs() / truth as f64;
            assert!(error <= 1e-3, "p{percent}: {measured} vs exact {truth}");
        }
        assert_eq!(distribution.max, *exact.last().unwrap());
    }
}
