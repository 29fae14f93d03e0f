//! Virtual time: integer microseconds since the start of the run.
//!
//! Not wall-clock time: nothing in the simulation reads a real clock.

use std::fmt;

/// A point in virtual time, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    /// Time zero.
    pub const ZERO: SimTime = SimTime(0);
    /// The latest representable instant.
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// From whole seconds.
    pub const fn from_secs(secs: u64) -> SimTime {
        SimTime(secs * 1_000_000)
    }

    /// From milliseconds.
    pub const fn from_millis(millis: u64) -> SimTime {
        SimTime(millis * 1_000)
    }

    /// Microseconds.
    pub const fn as_micros(self) -> u64 {
        self.0
    }

    /// Seconds as a float (for statistics and display only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// `self + micros`, saturating.
    pub fn plus(self, micros: u64) -> SimTime {
        SimTime(self.0.saturating_add(micros))
    }
}

impl fmt::Display for SimTime {
    /// `HH:MM:SS.mmm`, the narration's clock.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let millis = self.0 / 1_000;
        let (hours, rest) = (millis / 3_600_000, millis % 3_600_000);
        let (minutes, rest) = (rest / 60_000, rest % 60_000);
        let (seconds, millis) = (rest / 1_000, rest % 1_000);
        write!(f, "{hours:02}:{minutes:02}:{seconds:02}.{millis:03}")
    }
}

/// Formats a duration in microseconds for people: `250ms`, `1.5s`, `2m`, `1h30m`.
pub fn human_duration(micros: u64) -> String {
    if micros < 1_000 {
        return format!("{micros}µs");
    }
    if micros < 1_000_000 {
        return trim_float(micros as f64 / 1e3, "ms");
    }
    if micros < 60_000_000 {
        return trim_float(micros as f64 / 1e6, "s");
    }
    let seconds = micros / 1_000_000;
    if seconds < 3_600 {
        let (m, s) = (seconds / 60, seconds % 60);
        return if s == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{s}s")
        };
    }
    let (h, m) = (seconds / 3_600, (seconds % 3_600) / 60);
    if m == 0 {
        format!("{h}h")
    } else {
        format!("{h}h{m}m")
    }
}

fn trim_float(value: f64, unit: &str) -> String {
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}{unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_format() {
        assert_eq!(SimTime::from_millis(12_000).to_string(), "00:00:12.000");
        assert_eq!(SimTime(3_723_004_000).to_string(), "01:02:03.004");
    }

    #[test]
    fn human_durations() {
        assert_eq!(human_duration(250_000), "250ms");
        assert_eq!(human_duration(1_500_000), "1.5s");
        assert_eq!(human_duration(120_000_000), "2m");
        assert_eq!(human_duration(5_400_000_000), "1h30m");
    }
}
