//! Durations that may be random: the distributions of the scenario format, sampled from a
//! seeded portable generator and quantised to whole microseconds.

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Exp, LogNormal, Normal};

/// A duration, fixed or drawn from a distribution. All parameters are in microseconds
/// except `LogNormal::sigma`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// `const(3s)` or a plain duration.
    Const(u64),
    /// `exp(10s)`: exponential with that mean.
    Exp {
        /// Mean, µs.
        mean: f64,
    },
    /// `uniform(1s, 5s)`.
    Uniform {
        /// Lower bound, µs.
        low: f64,
        /// Upper bound, µs.
        high: f64,
    },
    /// `normal(10s, 2s)`, truncated at 0.
    Normal {
        /// Mean, µs.
        mean: f64,
        /// Standard deviation, µs.
        std_dev: f64,
    },
    /// `lognormal(10s, 0.5)`: median and sigma.
    LogNormal {
        /// Median, µs.
        median: f64,
        /// Sigma of the underlying normal.
        sigma: f64,
    },
}

impl Dist {
    /// A fixed duration in microseconds.
    pub const fn fixed(micros: u64) -> Dist {
        Dist::Const(micros)
    }

    /// The distribution as a scenario writes it: `exp(3s)`, `uniform(1s, 5s)`.
    pub fn spelled(&self) -> String {
        let d = |micros: f64| crate::time::human_duration(quantise(micros));
        match self {
            Dist::Const(micros) => format!("const({})", crate::time::human_duration(*micros)),
            Dist::Exp { mean } => format!("exp({})", d(*mean)),
            Dist::Uniform { low, high } => format!("uniform({}, {})", d(*low), d(*high)),
            Dist::Normal { mean, std_dev } => format!("normal({}, {})", d(*mean), d(*std_dev)),
            Dist::LogNormal { median, sigma } => format!("lognormal({}, {sigma})", d(*median)),
        }
    }

    /// True if sampling never draws from the generator.
    pub fn is_fixed(&self) -> bool {
        matches!(self, Dist::Const(_))
    }

    /// The mean in microseconds (for documentation and load math).
    pub fn mean_micros(&self) -> f64 {
        match *self {
            Dist::Const(value) => value as f64,
            Dist::Exp { mean } => mean,
            Dist::Uniform { low, high } => (low + high) / 2.0,
            Dist::Normal { mean, .. } => mean,
            Dist::LogNormal { median, sigma } => median * (sigma * sigma / 2.0).exp(),
        }
    }

    /// Draws one duration, quantised to whole microseconds (rounded to nearest).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let value = match *self {
            Dist::Const(value) => return value,
            Dist::Exp { mean } => {
                if mean <= 0.0 {
                    return 0;
                }
                Exp::new(1.0 / mean)
                    .map(|exp| exp.sample(rng))
                    .unwrap_or(mean)
            }
            Dist::Uniform { low, high } => {
                if high <= low {
                    low
                } else {
                    rng.random_range(low..high)
                }
            }
            Dist::Normal { mean, std_dev } => Normal::new(mean, std_dev.max(0.0))
                .map(|normal| normal.sample(rng))
                .unwrap_or(mean),
            Dist::LogNormal { median, sigma } => {
                if median <= 0.0 {
                    return 0;
                }
                LogNormal::new(median.ln(), sigma.max(0.0))
                    .map(|lognormal| lognormal.sample(rng))
                    .unwrap_or(median)
            }
        };
        quantise(value)
    }
}

/// The exponential sampler of the last `exp(…)` mean drawn from, so that repeated draws of
/// one distribution skip the divisions `Exp::new` costs (a chain of two or three
/// dependent divisions on every draw; W1 makes two exponential draws per arrival). The
/// sampler is built exactly as [`Dist::sample`] builds it, so the draws are bit-identical.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExpCache {
    /// The kept mean's bits (`f64::to_bits`) and its sampler; only a mean that samples is
    /// kept.
    kept: Option<(u64, Exp<f64>)>,
}

impl ExpCache {
    /// [`Dist::sample`] of `exp(mean)`, through the kept sampler when `mean` is the last.
    #[inline]
    pub fn sample_exp<R: Rng + ?Sized>(&mut self, mean: f64, rng: &mut R) -> u64 {
        let exp = match self.kept {
            Some((bits, exp)) if bits == mean.to_bits() => exp,
            _ => {
                if mean <= 0.0 {
                    return 0;
                }
                match Exp::new(1.0 / mean) {
                    Ok(exp) => {
                        self.kept = Some((mean.to_bits(), exp));
                        exp
                    }
                    Err(_) => return quantise(mean),
                }
            }
        };
        quantise(exp.sample(rng))
    }

    /// [`Dist::sample`], with an `exp(…)` drawn through [`ExpCache::sample_exp`].
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&mut self, dist: &Dist, rng: &mut R) -> u64 {
        match *dist {
            Dist::Exp { mean } => self.sample_exp(mean, rng),
            Dist::Const(..)
            | Dist::Uniform { .. }
            | Dist::Normal { .. }
            | Dist::LogNormal { .. } => dist.sample(rng),
        }
    }
}

/// Rounds to whole microseconds, truncating negatives at 0 and saturating huge values.
#[inline]
pub fn quantise(value: f64) -> u64 {
    // Every draw of a run's duration lands here: a positive value below 2^62 (NaN fails
    // `> 0`) rounds through a conversion to `i64`, which is exact there and costs about
    // half the instructions of the saturating conversion to `u64` below.
    if value > 0.0 && value < TWO_POW_62 {
        let rounded = (value + 0.5) as i64;
        debug_assert_eq!(rounded as u64, (value + 0.5) as u64);
        return rounded as u64;
    }
    if value.is_nan() || value <= 0.0 {
        0
    } else if value >= u64::MAX as f64 {
        u64::MAX
    } else {
        // floor(x + 0.5): round half up, without a libm call.
        (value + 0.5) as u64
    }
}

/// 2^62: below it, `value + 0.5` converts to `i64` exactly (see [`quantise`]).
const TWO_POW_62: f64 = 4_611_686_018_427_387_904.0;

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// `quantise`'s fast path (through `i64`) rounds exactly as the saturating path did.
    #[test]
    fn quantise_rounds_as_the_saturating_conversion_did() {
        let old = |value: f64| {
            if value.is_nan() || value <= 0.0 {
                0
            } else if value >= u64::MAX as f64 {
                u64::MAX
            } else {
                (value + 0.5) as u64
            }
        };
        let mut values = vec![
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1.0,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            1e6,
            TWO_POW_62,
            TWO_POW_62 - 1024.0,
            TWO_POW_62 + 1024.0,
            9.223372036854775e18,
            9.223372036854776e18,
            1.8446744073709552e19,
            f64::MAX,
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..10_000 {
            let bits: u64 = rng.random();
            values.push(f64::from_bits(bits));
            values.push(rng.random::<f64>() * 1e7);
        }
        for value in values {
            assert_eq!(quantise(value), old(value), "{value:e}");
        }
    }

    #[test]
    fn exp_cache_draws_exactly_what_sample_draws() {
        let mut cache = ExpCache::default();
        let mut plain = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut cached = plain.clone();
        // Means that change, repeat, and that do not sample (0, negative, NaN, tiny).
        let means = [
            1e6,
            1e6,
            3.5,
            1e6,
            0.0,
            -2.0,
            f64::NAN,
            7e9,
            7e9,
            1e-300,
            1e6,
        ];
        for _ in 0..200 {
            for mean in means {
                let dist = Dist::Exp { mean };
                assert_eq!(cache.sample(&dist, &mut cached), dist.sample(&mut plain));
            }
        }
        let dist = Dist::Uniform {
            low: 1.0,
            high: 9.0,
        };
        assert_eq!(cache.sample(&dist, &mut cached), dist.sample(&mut plain));
    }
}
