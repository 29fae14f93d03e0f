//! The command line, as clap derive types: what the user can type, with help text.
//!
//! Parsing only; what the commands do is in `run.rs` and `check.rs`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Simulates how Claude Code schedules its subagents, deterministically, in virtual time.
#[derive(Debug, Parser)]
#[command(name = "subsim", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scenario (or the built-in demo) and show what happened.
    Run(RunArgs),
    /// Run scenario files and check their `expect:` blocks; folders are searched for
    /// *.yaml and *.yml.
    Check(CheckArgs),
    /// Parse and validate a scenario file without running it.
    Validate(ValidateArgs),
}

/// `subsim run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The scenario file; without it, a built-in demo runs.
    pub file: Option<PathBuf>,
    /// Seed of every random stream (overrides the scenario's `session.seed`).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// What to print.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write to this file (created or truncated) instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Play the computed events against the wall clock, SPEED times faster than virtual
    /// time (1 = real time).
    #[arg(long, value_name = "SPEED", value_parser = parse_speed)]
    pub realtime: Option<f64>,
    /// Print the scenario's name and description before the run (to stderr unless the
    /// format is text).
    #[arg(long)]
    pub explain: bool,
}

/// Output formats of `subsim run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One plain-English line per event.
    Text,
    /// The trace as JSON Lines: one object per event.
    Jsonl,
    /// A table of statistics.
    Summary,
    /// The statistics as one JSON object.
    Json,
}

/// `subsim check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scenario files or folders.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// `subsim validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The scenario file.
    pub file: PathBuf,
}

fn parse_speed(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(speed) if speed.is_finite() && speed > 0.0 => Ok(speed),
        _ => Err(format!(
            "`{text}` is not a speed: give a positive number such as 1, 10 or 0.5"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn speeds() {
        assert_eq!(parse_speed("10"), Ok(10.0));
        assert!(parse_speed("0").is_err());
        assert!(parse_speed("-1").is_err());
        assert!(parse_speed("inf").is_err());
        assert!(parse_speed("fast").is_err());
    }
}
