//! The little languages inside scalar values: durations (`1.5s`), distributions
//! (`exp(10s)`) and rates (`20/s`).
//!
//! Pure functions from text to engine values; an `Err` is the message a diagnostic shows.
//! Nothing here knows where the text was written.

use subsim_engine::dist::{quantise, Dist};

/// What a duration may look like, for error messages.
pub(crate) const DURATION_FORMS: &str =
    "write a duration as `250ms`, `1.5s`, `30s`, `2m`, `1h`, or a bare number of seconds";

/// What a distribution may look like, for error messages.
pub(crate) const DIST_FORMS: &str = "write a duration (`250ms`, `1.5s`, `30s`, `2m`, `1h`, or a bare number of seconds) \
     or a distribution: `exp(10s)`, `uniform(1s, 5s)`, `normal(10s, 2s)`, `lognormal(10s, 0.5)`, `const(3s)`";

/// What a rate may look like, for error messages.
pub(crate) const RATE_FORMS: &str = "write a rate as a number per unit: `20/s`, `300/m`, `5/h`";

/// Microseconds per unit, longest suffix first so `ms` is not read as `m` + `s`.
const UNITS: [(&str, f64); 6] = [
    ("ms", 1e3),
    ("us", 1.0),
    ("µs", 1.0),
    ("s", 1e6),
    ("m", 60e6),
    ("h", 3_600e6),
];

/// Parses a plain number: digits with an optional fraction; no sign, no exponent.
fn number(text: &str) -> Option<f64> {
    let text = text.trim();
    let valid = !text.is_empty()
        && text.chars().all(|c| c.is_ascii_digit() || c == '.')
        && text.chars().filter(|c| *c == '.').count() <= 1
        && text.chars().any(|c| c.is_ascii_digit());
    if !valid {
        return None;
    }
    text.parse::<f64>().ok().filter(|value| value.is_finite())
}

/// A duration in microseconds, as a float (for distribution parameters).
fn micros_f64(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    if trimmed.starts_with('-') {
        return Err(format!(
            "`{trimmed}` is negative; durations are zero or more"
        ));
    }
    let micros = number(trimmed).map(|seconds| seconds * 1e6).or_else(|| {
        UNITS.iter().find_map(|(unit, scale)| {
            let digits = trimmed.strip_suffix(unit)?;
            number(digits).map(|value| value * scale)
        })
    });
    match micros {
        Some(value) if value <= u64::MAX as f64 => Ok(value),
        Some(_) => Err(format!("`{trimmed}` is too long a duration")),
        None => Err(format!("`{trimmed}` is not a duration")),
    }
}

/// Parses a fixed duration into whole microseconds (rounded to nearest).
pub(crate) fn parse_duration(text: &str) -> Result<u64, String> {
    micros_f64(text).map(quantise)
}

/// Parses a duration or a distribution.
pub(crate) fn parse_dist(text: &str) -> Result<Dist, String> {
    let trimmed = text.trim();
    let Some((name, rest)) = trimmed.split_once('(') else {
        return parse_duration(trimmed).map(Dist::Const);
    };
    let Some(inner) = rest.trim_end().strip_suffix(')') else {
        return Err(format!("`{trimmed}` is missing its closing `)`"));
    };
    let args: Vec<&str> = inner.split(',').map(str::trim).collect();
    let name = name.trim();
    let want = |count: usize, form: &str| -> Result<(), String> {
        if args.len() == count && args.iter().all(|arg| !arg.is_empty()) {
            Ok(())
        } else {
            Err(format!(
                "`{trimmed}` has the wrong arguments; write `{form}`"
            ))
        }
    };
    let arg = |index: usize| -> Result<f64, String> {
        micros_f64(args.get(index).copied().unwrap_or(""))
            .map_err(|message| format!("in `{trimmed}`: {message}"))
    };
    match name {
        "const" => {
            want(1, "const(3s)")?;
            Ok(Dist::Const(quantise(arg(0)?)))
        }
        "exp" => {
            want(1, "exp(10s)")?;
            Ok(Dist::Exp { mean: arg(0)? })
        }
        "uniform" => {
            want(2, "uniform(1s, 5s)")?;
            let (low, high) = (arg(0)?, arg(1)?);
            if low > high {
                return Err(format!("in `{trimmed}` the low end is above the high end"));
            }
            Ok(Dist::Uniform { low, high })
        }
        "normal" => {
            want(2, "normal(10s, 2s)")?;
            Ok(Dist::Normal {
                mean: arg(0)?,
                std_dev: arg(1)?,
            })
        }
        "lognormal" => {
            want(2, "lognormal(10s, 0.5)")?;
            let median = arg(0)?;
            let sigma_text = args.get(1).copied().unwrap_or("");
            let Some(sigma) = number(sigma_text) else {
                // A sign is not a unit: say what is wrong with the sigma it is.
                return Err(if sigma_text.trim().starts_with('-') {
                    format!(
                        "in `{trimmed}` the sigma `{sigma_text}` is negative: a spread is 0 or \
                         more (`lognormal(10s, 0.5)`)"
                    )
                } else {
                    format!(
                        "in `{trimmed}` the sigma `{sigma_text}` is not a plain number (it has \
                         no unit)"
                    )
                });
            };
            Ok(Dist::LogNormal { median, sigma })
        }
        other => {
            let hint = crate::diagnostic::did_you_mean(
                other,
                &["exp", "uniform", "normal", "lognormal", "const"],
            );
            Err(format!("unknown distribution `{other}`{hint}"))
        }
    }
}

/// Parses a rate (`20/s`, `300/m`, `5/h`) into events per second.
pub(crate) fn parse_rate(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let Some((count, unit)) = trimmed.split_once('/') else {
        return Err(format!("`{trimmed}` is not a rate"));
    };
    let per_second = match unit.trim() {
        "s" => 1.0,
        "m" => 1.0 / 60.0,
        "h" => 1.0 / 3_600.0,
        other => return Err(format!("`{other}` is not a rate unit (`s`, `m` or `h`)")),
    };
    match number(count) {
        Some(value) if value > 0.0 => Ok(value * per_second),
        Some(_) => Err(format!("`{trimmed}` is zero; a rate must be above zero")),
        None => Err(format!("`{}` is not a number", count.trim())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_duration(text: &str, expected: Result<u64, &str>) {
        let got = parse_duration(text);
        match expected {
            Ok(micros) => assert_eq!(got, Ok(micros), "{text}"),
            Err(fragment) => {
                let message = got.expect_err(text);
                assert!(message.contains(fragment), "{text}: {message}");
            }
        }
    }

    #[test]
    fn durations() {
        check_duration("250ms", Ok(250_000));
        check_duration("1.5s", Ok(1_500_000));
        check_duration("30s", Ok(30_000_000));
        check_duration("2m", Ok(120_000_000));
        check_duration("1h", Ok(3_600_000_000));
        check_duration("10", Ok(10_000_000));
        check_duration("0.25", Ok(250_000));
        check_duration(" 3s ", Ok(3_000_000));
        check_duration("0", Ok(0));
        check_duration("500us", Ok(500));
        check_duration("10sec", Err("not a duration"));
        check_duration("-1s", Err("negative"));
        check_duration("s", Err("not a duration"));
        check_duration("1.2.3s", Err("not a duration"));
        check_duration("1e3s", Err("not a duration"));
        check_duration("99999999999999999999h", Err("too long"));
    }

    #[test]
    fn distributions() {
        assert_eq!(parse_dist("3s"), Ok(Dist::Const(3_000_000)));
        assert_eq!(parse_dist("const(3s)"), Ok(Dist::Const(3_000_000)));
        assert_eq!(parse_dist("exp(10s)"), Ok(Dist::Exp { mean: 10e6 }));
        assert_eq!(
            parse_dist("uniform(1s, 5s)"),
            Ok(Dist::Uniform {
                low: 1e6,
                high: 5e6
            })
        );
        assert_eq!(
            parse_dist("normal(10s,2s)"),
            Ok(Dist::Normal {
                mean: 10e6,
                std_dev: 2e6
            })
        );
        assert_eq!(
            parse_dist("lognormal(10s, 0.5)"),
            Ok(Dist::LogNormal {
                median: 10e6,
                sigma: 0.5
            })
        );
        assert_eq!(parse_dist("exp(250ms)"), Ok(Dist::Exp { mean: 250e3 }));

        let fails = [
            ("exp(10s", "closing"),
            ("exp()", "wrong arguments"),
            ("uniform(1s)", "wrong arguments"),
            ("uniform(5s, 1s)", "low end"),
            ("lognormal(10s, 0.5s)", "plain number"),
            ("lognormal(10s, -5)", "is negative: a spread is 0 or more"),
            ("expo(10s)", "did you mean `exp`"),
            ("normal(10x, 2s)", "not a duration"),
        ];
        for (text, fragment) in fails {
            let message = parse_dist(text).expect_err(text);
            assert!(message.contains(fragment), "{text}: {message}");
        }
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("20/s"), Ok(20.0));
        assert_eq!(parse_rate("300/m"), Ok(5.0));
        assert_eq!(parse_rate("36/h"), Ok(0.01));
        assert_eq!(parse_rate("2.5 / s"), Ok(2.5));
        for (text, fragment) in [
            ("20", "not a rate"),
            ("20/d", "rate unit"),
            ("x/s", "not a number"),
            ("0/s", "zero"),
        ] {
            let message = parse_rate(text).expect_err(text);
            assert!(message.contains(fragment), "{text}: {message}");
        }
    }
}
