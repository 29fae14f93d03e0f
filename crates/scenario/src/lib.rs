//! The YAML scenario format: parse → validate → build engine input.
//!
//! This is the only crate that knows YAML. A scenario file (its contract is
//! `scenario-format.md`) becomes a [`subsim_engine::SimSpec`] plus the `expect:`
//! assertions, or a list of every problem in the file, each at `file:line:col`.
//!
//! The tour:
//! - [`parse_scenario`] / [`load_scenario`]: text or a path in, [`Loaded`] or
//!   [`Diagnostics`] out;
//! - [`Loaded`]: the engine input, the located assertions and the warnings;
//! - [`Diagnostic`]: one located problem, with a byte span for snippet rendering and an
//!   optional help line ("did you mean …" hints live in the message).
//!
//! Internally the file is parsed by serde-saphyr, under a budget, into a raw tree that
//! keeps the location of every key and value; validation then walks that tree by hand
//! so that it can report every problem rather than the first.
//!
//! Definition files are read here too, the way Claude Code reads them: the directories of
//! `session.agent_dirs` (scanned recursively), `--agents` JSON files and `agents.*.file`.
//! Same-named definitions are resolved by scope priority, and what happened to every file
//! (loaded, skipped with the documented reason, shadowed by which file) is in
//! [`SimSpec::definitions`](subsim_engine::SimSpec::definitions), for the engine to
//! report at time 0; skipped and duplicate files are also [`Loaded::warnings`].
//!
//! ```
//! use std::path::Path;
//! use subsim_engine::spec::Step;
//!
//! let yaml = "
//! name: Two researchers
//! main:
//!   - spawn: {agent: Explore, count: 2, background: true}
//!   - wait: {for: children}
//! expect:
//!   - max_running: 2
//! ";
//! let loaded = subsim_scenario::parse_scenario(yaml, "two.yaml", Path::new(".")).unwrap();
//! assert_eq!(loaded.spec.name, "Two researchers");
//! assert!(matches!(&loaded.spec.main[0], Step::Spawn(spawn) if spawn.count == 2));
//! assert_eq!(loaded.expect[0].location.as_deref(), Some("two.yaml:7:5"));
//!
//! let broken = "name: x\nmain:\n  - spawn: {agent: Explore, backgroud: true}\n";
//! let problems = subsim_scenario::parse_scenario(broken, "x.yaml", Path::new(".")).unwrap_err();
//! assert_eq!(
//!     problems.problems[0].to_string().lines().next(),
//!     Some("x.yaml:3:29: unknown key `backgroud`, did you mean `background`?")
//! );
//! ```
#![warn(missing_docs)]

mod agents;
mod build;
mod check;
mod classifier;
mod definitions;
pub mod diagnostic;
mod duration;
mod expect;
mod fields;
mod hooks;
pub mod import;
mod load;
mod overrides;
mod raw;
pub mod read;
mod session;
mod steps;

use std::path::{Path, PathBuf};

pub use diagnostic::{suggest, Diagnostic, Diagnostics};
pub use overrides::{Override, CAP_PATH};
pub use raw::{spawn_scoped_with_parser_stack, PARSER_STACK_BYTES};
pub use session::AgentDir;
use subsim_engine::expect::Located;
use subsim_engine::SimSpec;

/// A valid scenario: what the engine runs, what to check afterwards, and what to warn about.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The engine input.
    pub spec: SimSpec,
    /// The `expect:` assertions, each with its `file:line:col`.
    pub expect: Vec<Located>,
    /// Problems that do not stop the run (unknown agent types, unknown env vars, skipped
    /// agent files …), in file order.
    pub warnings: Vec<Diagnostic>,
    /// `session.agent_dirs`, resolved against the scenario file's directory (what they
    /// loaded is in `spec.agents` and `spec.definitions`).
    pub agent_dirs: Vec<AgentDir>,
    /// `(agent key, resolved path)` of every `agents.*.file`, in file order.
    pub agent_files: Vec<(String, PathBuf)>,
    /// Every file the scenario named and the loader read (agent definitions, the files of
    /// `agent_dirs`, arrival times files), in order: with the scenario file itself, the
    /// inputs an output must not overwrite.
    pub read_files: Vec<PathBuf>,
    /// The scenario text, so warnings can be rendered with snippets.
    pub source: String,
    /// `narration:`: chapter headings and commands to try next.
    pub narration: Narration,
}

/// A scenario's `narration:` block: what the narration adds for a reader, nothing the
/// simulation uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Narration {
    /// `(at, title)`: a one-line heading shown before the first event at or after `at`.
    pub chapters: Vec<(subsim_engine::SimTime, String)>,
    /// Commands to try next, shown after the closing summary.
    pub next: Vec<String>,
}

/// How a scenario may reach the file system beyond its own text.
///
/// A scenario is untrusted input (people share them): by default its `file:` and
/// `agent_dirs` paths must lie inside the scenario's own folder. The user widens that with
/// `--allow-path DIR` ([`Options::allowed`]).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Folders outside the scenario's own that its `file:` and `agent_dirs` paths may
    /// read (`--allow-path`).
    pub allowed: Vec<PathBuf>,
    /// Refuse a scenario file that is not a regular file (a FIFO, a device) instead of
    /// reading it: for files found by searching a folder. A file named on the command line
    /// may be a pipe (`subsim run <(cat x.yaml)`); it is read up to the byte limit.
    pub regular_file_only: bool,
}

/// Parses and validates scenario text. `file_name` is what diagnostics and assertion
/// locations call the file; `base_dir` is where relative paths (`file:`, `agent_dirs`)
/// are resolved.
pub fn parse_scenario(
    source: &str,
    file_name: &str,
    base_dir: &Path,
) -> Result<Loaded, Diagnostics> {
    build::build(source, file_name, base_dir)
}

/// [`parse_scenario`] with `--set PATH=VALUE` overrides applied, in order, before
/// validation. A problem in an override is located at the override
/// (`--set load.count=abc:1:12`).
///
/// ```
/// use std::path::Path;
/// use subsim_scenario::Override;
///
/// let yaml = "name: x\nsession: {env: {CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: 20}}\n";
/// let sets = [Override::cap(28)];
/// let loaded = subsim_scenario::parse_scenario_with(yaml, "x.yaml", Path::new("."), &sets).unwrap();
/// assert_eq!(loaded.spec.session.env["CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS"], "28");
///
/// let typo = [Override::parse("load.cuont=5").unwrap()];
/// let problems = subsim_scenario::parse_scenario_with(yaml, "x.yaml", Path::new("."), &typo).unwrap_err();
/// assert!(problems.to_string().starts_with("--set load.cuont=5:1:12: unknown key `cuont`"), "{problems}");
/// ```
pub fn parse_scenario_with(
    source: &str,
    file_name: &str,
    base_dir: &Path,
    overrides: &[Override],
) -> Result<Loaded, Diagnostics> {
    parse_scenario_under(source, file_name, base_dir, overrides, &Options::default())
}

/// [`parse_scenario_with`] under [`Options`]: the folders `file:` and `agent_dirs` may
/// read besides `base_dir`.
pub fn parse_scenario_under(
    source: &str,
    file_name: &str,
    base_dir: &Path,
    overrides: &[Override],
    options: &Options,
) -> Result<Loaded, Diagnostics> {
    build::build_with(source, file_name, base_dir, overrides, &options.allowed)
}

/// Reads a scenario file and parses it; relative paths inside resolve against its
/// directory and stay inside it. An unreadable file is reported as a [`Diagnostic`] at 1:1;
/// text that is not UTF-8 at its first bad byte.
pub fn load_scenario(path: &Path) -> Result<Loaded, Diagnostics> {
    load_scenario_with(path, &[])
}

/// [`load_scenario`] with `--set` overrides (see [`parse_scenario_with`]).
pub fn load_scenario_with(path: &Path, overrides: &[Override]) -> Result<Loaded, Diagnostics> {
    load_scenario_under(path, overrides, &Options::default())
}

/// [`load_scenario_with`] under [`Options`]. Whatever the file is, at most 4 MiB are read;
/// text that is not UTF-8 is reported at its first bad byte.
pub fn load_scenario_under(
    path: &Path,
    overrides: &[Override],
    options: &Options,
) -> Result<Loaded, Diagnostics> {
    let file_name = path.display().to_string();
    let source = read_scenario(path, options)?;
    let base_dir = path.parent().unwrap_or(Path::new("."));
    parse_scenario_under(&source, &file_name, base_dir, overrides, options)
}

/// Reads a scenario file's text the way [`load_scenario_under`] does (at most 4 MiB whatever
/// the file is; a non-regular file refused when [`Options::regular_file_only`]; text that is
/// not UTF-8 located at its first bad byte), for callers that parse it several times.
pub fn read_scenario(path: &Path, options: &Options) -> Result<String, Diagnostics> {
    let file_name = path.display().to_string();
    match read::read_text(path, options.regular_file_only) {
        Ok(source) => Ok(source),
        Err(error @ (read::ReadError::Io(_) | read::ReadError::TooLarge(_))) => Err(Diagnostics {
            source: String::new(),
            problems: vec![Diagnostic {
                file: file_name,
                line: 0,
                column: 0,
                offset: 0,
                len: 0,
                message: format!("cannot read the scenario file: {error}"),
                help: None,
            }],
        }),
        Err(read::ReadError::NotUtf8 {
            lossy,
            offset,
            line,
            column,
        }) => Err(Diagnostics {
            source: lossy,
            problems: vec![Diagnostic {
                file: file_name,
                line,
                column,
                offset,
                len: '\u{fffd}'.len_utf8(),
                message: "the scenario file is not UTF-8 text: this byte is not valid UTF-8"
                    .to_string(),
                help: Some(
                    "save the file as UTF-8 (the snippet shows the bad byte as \u{fffd})"
                        .to_string(),
                ),
            }],
        }),
    }
}
