//! `subsim import`: a Claude Code session transcript (JSON Lines) in, a scenario that
//! replays it out, with what the session showed as its `expect:` block.
//!
//! The importer lives in this crate because it writes YAML and must be able to prove its
//! output loads: it reads JSON with serde_json, writes the scenario text itself (every
//! string quoted as a JSON string, which is a valid YAML double-quoted scalar), and parses
//! that text back through [`crate::parse_scenario`] before handing it out.
//!
//! The parts:
//! - `read.rs`: bytes → located JSON objects (byte limits, two objects on a line, a
//!   half-written last line, "not a transcript" errors), and ISO-8601 times;
//! - `transcript.rs`: one file → its tool calls, results and notifications on a
//!   structure-ordered time line;
//! - `build/`: the main file and its subagent files → scenario steps, definitions,
//!   person actions and the observed facts, rendered as YAML (`files.rs`, `steps.rs`,
//!   `facts.rs`, `render.rs`: one job each);
//! - `privacy.rs`: masking of e-mail addresses and secrets;
//! - `wire.rs`: the fields of a transcript line the importer reads (lenient serde types).
//!
//! [`fidelity`] runs an import and says which observed facts the model reproduces.

mod build;
mod privacy;
mod read;
mod transcript;
mod wire;

use std::fmt;
use std::path::{Path, PathBuf};

use subsim_engine::expect::Checker;
use subsim_engine::Simulation;

use crate::Diagnostics;

/// What `import` may copy.
#[derive(Clone, Copy, Debug, Default)]
pub struct ImportOptions {
    /// Copy prompts, reports and Bash commands, and leave e-mail addresses and secrets
    /// unmasked (`--keep-text`).
    pub keep_text: bool,
}

/// A written scenario and what it says.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The scenario text (YAML), already checked to load.
    pub yaml: String,
    /// What the reader skipped or guessed (a cut-off last line, missing subagent files …).
    pub warnings: Vec<String>,
    /// One plain description per `expect:` entry, in order: the observed facts.
    pub facts: Vec<String>,
    /// How many Agent tool calls (`Task`/`Agent`) the replayed transcripts hold.
    pub spawn_calls: usize,
    /// Subagent transcripts that were read.
    pub subagent_files: Vec<PathBuf>,
}

/// Why a file could not be imported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportError {
    /// The file cannot be read (missing, a directory, a FIFO, no permission).
    Unreadable {
        /// The path as given.
        file: String,
        /// Why.
        message: String,
    },
    /// The file is larger than the importer reads.
    TooLarge {
        /// The path as given.
        file: String,
        /// Its size (or what was read before stopping).
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The file is not a Claude Code transcript.
    NotTranscript {
        /// The path as given.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// The session is too large for one scenario file (too many Agent calls).
    TooManyCalls {
        /// What was too large, and by how much.
        message: String,
    },
    /// The scenario written did not load (a bug of the importer; the text is kept).
    Internal {
        /// The problems, rendered.
        message: String,
    },
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Unreadable { file, message } => {
                write!(f, "{file}: cannot read the transcript: {message}")
            }
            ImportError::TooLarge { file, bytes, limit } => write!(
                f,
                "{file}: the file is {bytes} bytes; the importer reads at most {limit} \
                 bytes of transcript"
            ),
            ImportError::NotTranscript {
                file,
                line,
                column,
                message,
            } => write!(
                f,
                "{file}:{line}:{column}: {message}; expected a Claude Code session transcript \
                 (~/.claude/projects/<project>/<session-id>.jsonl)"
            ),
            ImportError::TooManyCalls { message } => write!(f, "{message}"),
            ImportError::Internal { message } => {
                write!(
                    f,
                    "the imported scenario does not load (an importer bug): {message}"
                )
            }
        }
    }
}

impl std::error::Error for ImportError {}

/// Imports the session transcript at `path` (its subagent files are looked for beside it,
/// in both layouts).
pub fn import_session(path: &Path, options: ImportOptions) -> Result<Imported, ImportError> {
    let imported = build::import(path, options)?;
    // The output must load; a failure here is the importer's bug, not the user's.
    if imported.yaml.len() > crate::raw::MAX_FILE_BYTES {
        // Too many calls for one scenario file: said as what it is, not as a bug.
        return Err(ImportError::TooManyCalls {
            message: format!(
                "the session's {} Agent calls make a scenario of {} bytes, past the {} a \
                 scenario file may hold; no scenario was written (import a shorter session)",
                imported.spawn_calls,
                imported.yaml.len(),
                crate::raw::MAX_FILE_BYTES
            ),
        });
    }
    if let Err(problems) = crate::parse_scenario(&imported.yaml, "imported.yaml", Path::new(".")) {
        let message = problems
            .problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        if message.contains("the file has more than") {
            return Err(ImportError::TooManyCalls {
                message: format!(
                    "the session's {} Agent calls make a scenario larger than a scenario \
                     file may be ({message}); no scenario was written (import a shorter \
                     session)",
                    imported.spawn_calls
                ),
            });
        }
        return Err(ImportError::Internal { message });
    }
    Ok(imported)
}

/// How many of an import's observed facts its scenario reproduces when run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fidelity {
    /// Facts the run reproduced.
    pub reproduced: usize,
    /// Facts observed (the `expect:` entries).
    pub observed: usize,
    /// One line per fact the run did not reproduce: the fact, what was expected, what
    /// happened.
    pub mismatches: Vec<String>,
}

impl fmt::Display for Fidelity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} of {} observed facts reproduced",
            self.reproduced, self.observed
        )?;
        for mismatch in &self.mismatches {
            writeln!(f, "  mismatch: {mismatch}")?;
        }
        Ok(())
    }
}

/// Runs the imported scenario and checks each observed fact.
pub fn fidelity(imported: &Imported) -> Result<Fidelity, Diagnostics> {
    let loaded = crate::parse_scenario(&imported.yaml, "imported.yaml", Path::new("."))?;
    let observed = loaded.expect.len();
    let mut checker = Checker::new(loaded.expect);
    Simulation::new(loaded.spec).run(&mut checker);
    let failures = checker.finish();
    let mismatches = failures
        .iter()
        .map(|failure| {
            let fact = imported
                .facts
                .get(failure.index)
                .map_or("(unnamed fact)", String::as_str);
            format!(
                "fact {}: {fact}: expected {}, got {}",
                failure.index + 1,
                failure.expected,
                failure.got
            )
        })
        .collect();
    Ok(Fidelity {
        reproduced: observed - failures.len(),
        observed,
        mismatches,
    })
}
