//! The `subsim` binary: glue only. `main` maps [`run()`]'s result to an exit code; the
//! commands live in their own modules and everything they simulate lives in the library
//! crates.
//!
//! Exit codes: 0 ok, 1 expectations failed, 2 bad usage or input, 3 a run stopped by a
//! safety limit (its output so far is kept).

mod args;
mod budgets;
mod capacity;
mod catalog;
mod chart;
mod check;
mod diagnostics;
mod diff;
mod erlang_cmd;
mod explain;
mod explore;
mod import;
mod load;
mod output;
mod panel;
mod report;
mod rules_cmd;
mod run;
mod serve;
mod sweep;
mod timeline;
mod tools_cmd;
mod words;

use std::process::ExitCode;

use clap::Parser as _;

use crate::args::{Cli, Command};

/// The binary's allocator is mimalloc, not the system's malloc (issue #7, W2: fewer page
/// faults and a faster allocation path for a million agents), built without transparent
/// huge pages (`no_thp` in the workspace's `Cargo.toml`): on a VM whose fresh memory faults
/// in the host, zeroing fresh huge pages made a whole run's time swing (docs/PERFORMANCE.md,
/// "Whole process"). Only this binary and the benches choose it; the library crates use
/// whatever allocator their user has. The benches and examples in `benches/` set the same
/// one, so that they measure what this binary does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How a command ended, when it did not fail outright.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Everything went as expected.
    Ok,
    /// At least one `expect:` assertion failed (or a `sweep --target` was not met).
    ExpectationsFailed,
    /// Bad input reported in the output itself (a `check`ed file that does not load):
    /// exit 2, like every other bad input.
    BadInput,
    /// A safety limit ended the run; the message naming it has been printed.
    LimitHit,
}

/// An error whose message has already been printed (diagnostics with snippets): `main`
/// only sets the exit code.
#[derive(Debug)]
pub struct AlreadyReported;

impl std::fmt::Display for AlreadyReported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the problems above were reported")
    }
}

impl std::error::Error for AlreadyReported {}

fn main() -> ExitCode {
    match run() {
        Ok(Status::Ok) => ExitCode::SUCCESS,
        Ok(Status::ExpectationsFailed) => ExitCode::from(1),
        Ok(Status::LimitHit) => ExitCode::from(3),
        Ok(Status::BadInput) => ExitCode::from(2),
        Err(error) => {
            if !error.is::<AlreadyReported>() {
                // Messages carry paths and names: shown, never obeyed by the terminal.
                let message = format!("subsim: error: {error:#}");
                eprint!(
                    "{}",
                    words::wrap_block(&output::escape_controls(&message), words::width())
                );
            }
            ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<Status> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // `--help` and `--version` print to stdout and succeed; usage errors exit 2.
            let printed = error
                .print()
                .and_then(|()| std::io::Write::flush(&mut std::io::stdout()));
            return match printed {
                _ if error.use_stderr() => Err(AlreadyReported.into()),
                // A full disk is an error; a reader that went away (`--help | head`) is not.
                Err(failed) if !output::is_broken_pipe(&failed) => {
                    Err(anyhow::Error::new(failed).context("cannot write to stdout"))
                }
                _ => Ok(Status::Ok),
            };
        }
    };
    init_tracing(cli.log_format, &cli.command);
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Check(args) => check::check(args),
        Command::Validate(args) => check::validate(args),
        Command::Explore(args) => explore::explore(args),
        Command::Panel(args) => panel::panel(args),
        Command::Rules(args) => rules_cmd::rules(args),
        Command::Explain(args) => explain::explain(args),
        Command::Diff(args) => diff::diff(args),
        Command::Tools(args) => tools_cmd::tools(args),
        Command::Report(args) => report::report(args),
        Command::Erlang(args) => erlang_cmd::erlang(args),
        Command::Import(args) => import::import(args),
        Command::Sweep(args) => sweep::sweep(args),
        Command::Merge(args) => sweep::merge(args),
        Command::Capacity(args) => capacity::capacity(args),
        Command::Serve(args) => serve::serve(args),
    }
}

/// The one subscriber every command logs through: subsim's own diagnostics go to stderr,
/// filtered by `RUST_LOG` (`RUST_LOG=subsim=debug` shows budget and thread decisions),
/// written as `--log-format` says. Without `RUST_LOG`: warnings, and for `serve` its
/// request log too (`info`).
fn init_tracing(format: args::LogFormat, command: &Command) {
    let default = match command {
        Command::Serve(_) => "warn,subsim::serve=info",
        _ => "warn",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        args::LogFormat::Text => builder
            .with_target(false)
            .with_ansi(output::stderr_color())
            .try_init(),
        args::LogFormat::Json => builder.json().with_current_span(true).try_init(),
    };
}
