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
//! [`fidelity`] runs an import and says which observed facts the model reproduces, and
//! where the session departed from the documented behaviour: a fact the transcript shows
//! that the model does not reproduce, or one the model predicts that the transcript lacks
//! (a `none:` entry); the failed facts of one run are one point, said in one line with its
//! rule, time and transcript lines ([`FactSource`]).

pub(crate) mod build;
mod privacy;
mod read;
mod transcript;
mod wire;

use std::fmt;
use std::path::{Path, PathBuf};

use std::collections::{BTreeMap, BTreeSet};

use subsim_engine::event::{Event, Field};
use subsim_engine::expect::{Checker, EventFilter, Expectation, Failure, FilterValue};
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
    /// For each `expect:` entry (same order), where in the transcript its fact is, or
    /// should have been, when the entry is about one run.
    pub sources: Vec<Option<FactSource>>,
    /// Lines of the transcripts the reader could not read and skipped.
    pub unreadable_lines: usize,
    /// How many Agent tool calls (`Task`/`Agent`) the replayed transcripts hold.
    pub spawn_calls: usize,
    /// Subagent transcripts that were read.
    pub subagent_files: Vec<PathBuf>,
}

/// Where an `expect:` entry's fact is in the transcript, or where it should have been:
/// what a departure says about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FactSource {
    /// The run the fact is about (its name in the scenario).
    pub agent: String,
    /// The documented rule that decides it (rules.md), unless the model's event names one.
    pub rule: &'static str,
    /// What the model expects, in words ("its completion notification to main").
    pub expected: String,
    /// What the transcript shows ("none", "it came to …").
    pub shown: String,
    /// The transcript file, as its path was given.
    pub file: String,
    /// The 1-based line range in `file` where the fact is or should have been.
    pub lines: (usize, usize),
    /// The entry records an absence (`none:`): the model predicts what the transcript does
    /// not show.
    pub predicted: bool,
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

/// How many of an import's observed facts its scenario reproduces when run, and where the
/// session departed from the documented behaviour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fidelity {
    /// Facts the run reproduced.
    pub reproduced: usize,
    /// Facts observed (the `expect:` entries).
    pub observed: usize,
    /// One line per fact the run did not reproduce: the fact, what was expected, what
    /// happened.
    pub mismatches: Vec<String>,
    /// One line per point where the session departed from the documented behaviour: the
    /// failed facts of one run are one point (what the model expected, by which rule, at
    /// what time, and where in the transcript).
    pub departures: Vec<String>,
    /// Lines of the transcripts the reader could not read (no departure comes from them).
    pub unreadable_lines: usize,
}

impl Fidelity {
    /// The session did what the documentation says, as far as the transcript shows.
    pub fn reproduced(&self) -> bool {
        self.departures.is_empty()
    }
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
        if self.unreadable_lines > 0 {
            writeln!(
                f,
                "{} could not be read and {} skipped; no departure is reported from {}",
                counted(self.unreadable_lines, "transcript line", "transcript lines"),
                if self.unreadable_lines == 1 {
                    "was"
                } else {
                    "were"
                },
                if self.unreadable_lines == 1 {
                    "it"
                } else {
                    "them"
                },
            )?;
        }
        if self.departures.is_empty() {
            return writeln!(f, "reproduced");
        }
        writeln!(
            f,
            "departed from the documented behaviour at {}:",
            counted(self.departures.len(), "point", "points")
        )?;
        for (index, departure) in self.departures.iter().enumerate() {
            writeln!(f, "  {}. {departure}", index + 1)?;
        }
        Ok(())
    }
}

fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Runs the imported scenario and checks each observed fact; the failed facts, grouped by
/// the run they are about, are the points where the session departed.
pub fn fidelity(imported: &Imported) -> Result<Fidelity, Diagnostics> {
    let loaded = crate::parse_scenario(&imported.yaml, "imported.yaml", Path::new("."))?;
    let observed = loaded.expect.len();
    let filters: Vec<Expectation> = loaded
        .expect
        .iter()
        .map(|located| located.expectation.clone())
        .collect();
    let spec = loaded.spec;
    let mut checker = Checker::new(loaded.expect);
    Simulation::new(spec.clone()).run(&mut checker);
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
    // The failed facts by run (a fact about no run is a point of its own), in order.
    let mut points: Vec<(Option<&FactSource>, Vec<&Failure>)> = Vec::new();
    for failure in &failures {
        let source = imported.sources.get(failure.index).and_then(Option::as_ref);
        let same = source.and_then(|source| {
            points
                .iter()
                .position(|(other, _)| other.is_some_and(|other| other.agent == source.agent))
        });
        match same {
            Some(index) => points[index].1.push(failure),
            None => points.push((source, vec![failure])),
        }
    }
    // The model's events about those runs (a second, identical run: the simulator is
    // deterministic), a few of each kind per run; and the first event that broke each
    // failed `none:` entry (the model's prediction the transcript lacks).
    let agents: BTreeSet<&str> = points
        .iter()
        .filter_map(|(source, _)| source.map(|source| source.agent.as_str()))
        .collect();
    let broken: Vec<(usize, &EventFilter)> = failures
        .iter()
        .filter_map(|failure| match filters.get(failure.index) {
            Some(Expectation::NoEvent(filter)) => Some((failure.index, filter)),
            _ => None,
        })
        .collect();
    let mut about: BTreeMap<String, Vec<Event>> = BTreeMap::new();
    let mut breaking: BTreeMap<usize, Event> = BTreeMap::new();
    if !agents.is_empty() {
        let mut kept_kinds: BTreeMap<(String, &'static str), usize> = BTreeMap::new();
        let mut sink = |event: &Event| {
            for (index, filter) in &broken {
                if !breaking.contains_key(index) && filter.matches(event) {
                    breaking.insert(*index, event.clone());
                }
            }
            let mut subject = None;
            event.visit_fields(&mut |name, value| {
                if matches!(name, "name" | "from" | "from_name") {
                    let text = match value {
                        Field::Str(text) => Some(text.to_string()),
                        Field::Agent(agent) => agent.name.as_deref().map(str::to_string),
                        Field::U64(_) | Field::Bool(_) | Field::List(_) => None,
                    };
                    if let Some(text) = text.filter(|text| agents.contains(text.as_str())) {
                        subject = Some(text);
                    }
                }
            });
            if let Some(subject) = subject {
                let count = kept_kinds
                    .entry((subject.clone(), event.kind.name()))
                    .or_default();
                if *count < 16 {
                    *count += 1;
                    about.entry(subject).or_default().push(event.clone());
                }
            }
        };
        Simulation::new(spec).run(&mut sink);
    }
    let departures = points
        .iter()
        .map(|(source, failed)| {
            let model = Model {
                filters: &filters,
                about: &about,
                breaking: &breaking,
            };
            departure(*source, failed, &model, imported)
        })
        .collect();
    Ok(Fidelity {
        reproduced: observed - failures.len(),
        observed,
        mismatches,
        departures,
        unreadable_lines: imported.unreadable_lines,
    })
}

/// What the model's run showed, for the departures: the entries, a few events about each
/// run that departed (by its name), and the event that broke each failed `none:` entry.
struct Model<'a> {
    filters: &'a [Expectation],
    about: &'a BTreeMap<String, Vec<Event>>,
    breaking: &'a BTreeMap<usize, Event>,
}

/// The value of the text field `wanted` of `event` (empty when it has none).
fn field(event: &Event, wanted: &str) -> String {
    let mut found = String::new();
    event.visit_fields(&mut |name, value| {
        if name == wanted {
            if let Field::Str(text) = value {
                found = text.to_string();
            }
        }
    });
    found
}

/// Where a prompt the model showed appears, for a departure's words ("" for none).
fn shown_in(event: &Event) -> &'static str {
    match field(event, "routed_to").as_str() {
        "main" => ", shown in the main session",
        "terminal" => ", shown in the person's terminal",
        _ => "",
    }
}

/// What the model did with a tool call the transcript shows a permission fact about: its
/// first `permission_requested` or `tool_called` of `tool`, in words, with the event.
fn permission_outcome<'e>(events: &'e [Event], tool: &str) -> Option<(String, &'e Event)> {
    let event = events.iter().find(|event| {
        matches!(event.kind.name(), "permission_requested" | "tool_called")
            && field(event, "tool") == tool
    })?;
    let mut auto_denied = false;
    let mut allowed = false;
    event.visit_fields(&mut |name, value| {
        if let Field::Bool(flag) = value {
            match name {
                "auto_denied" => auto_denied = flag,
                "allowed" => allowed = flag,
                _ => {}
            }
        }
    });
    let words = match (event.kind.name(), auto_denied, allowed) {
        ("permission_requested", true, _) => {
            format!("its {tool} call auto-denied, no prompt shown")
        }
        ("permission_requested", false, _) => {
            format!("a permission prompt for its {tool} call{}", shown_in(event))
        }
        (_, _, true) => format!("its {tool} call to run"),
        (_, _, false) => format!("its {tool} call refused: {}", field(event, "reason")),
    };
    Some((words, event))
}

/// One point of departure, in one line.
fn departure(
    source: Option<&FactSource>,
    failed: &[&Failure],
    model: &Model<'_>,
    imported: &Imported,
) -> String {
    let Model {
        filters,
        about,
        breaking,
    } = *model;
    let first = failed[0];
    let Some(source) = source else {
        let fact = imported
            .facts
            .get(first.index)
            .map_or("(unnamed fact)", String::as_str);
        return format!(
            "{fact}: the model expected {}, got {}",
            first.expected, first.got
        );
    };
    let events = about.get(&source.agent).map_or(&[][..], Vec::as_slice);
    let where_ = build::line_range(&source.file, source.lines);
    // A predicted fact the transcript lacks says the most; else the first failed fact.
    let predicted = failed.iter().find(|failure| {
        imported
            .sources
            .get(failure.index)
            .and_then(Option::as_ref)
            .is_some_and(|source| source.predicted)
    });
    if let Some(failure) = predicted {
        let source = imported.sources[failure.index].as_ref().unwrap_or(source);
        let matched = breaking.get(&failure.index);
        let rule = matched.and_then(|event| event.rule).unwrap_or(source.rule);
        let when = matched.map_or_else(|| "(time unknown)".to_string(), |e| e.t.to_string());
        return format!(
            "{}: the model expected {}{} ({rule}) at {when}; the transcript shows {} ({})",
            source.agent,
            source.expected,
            matched.map_or("", shown_in),
            source.shown,
            build::line_range(&source.file, source.lines)
        );
    }
    let fact_source = imported
        .sources
        .get(first.index)
        .and_then(Option::as_ref)
        .unwrap_or(source);
    let kind = |name: &str| events.iter().find(|event| event.kind.name() == name);
    // The filter of the first failed entry: a permission fact names its tool.
    let first_filter = filters
        .get(first.index)
        .and_then(|f| f.filters().first().copied());
    let permission_tool = first_filter
        .filter(|filter| {
            matches!(
                filter.kind(),
                Some("permission_requested" | "permission_answered" | "tool_called")
            )
        })
        .and_then(|filter| {
            filter.fields.iter().find_map(|(name, value)| {
                let FilterValue::Str(tool) = value else {
                    return None;
                };
                (name == "tool").then_some(tool.as_str())
            })
        });
    let permission = permission_tool.and_then(|tool| permission_outcome(events, tool));
    let (expected, rule, when) = if let Some((words, event)) = permission {
        (
            words,
            event.rule.unwrap_or(fact_source.rule),
            event.t.to_string(),
        )
    } else if let Some(tool) = permission_tool {
        (
            format!("no permission event for its {tool} call"),
            fact_source.rule,
            "(time unknown)".to_string(),
        )
    } else if let Some(rejected) = kind("spawn_rejected") {
        (
            format!("the call refused: {}", field(rejected, "reason")),
            rejected.rule.unwrap_or(subsim_rules::observed::rule(
                subsim_rules::observed::Observed::Refused,
            )),
            rejected.t.to_string(),
        )
    } else if let (true, Some(started)) = (
        filters.get(first.index).is_some_and(|f| {
            f.filters()
                .iter()
                .any(|f| f.kind() == Some("agent_started"))
        }),
        kind("agent_started"),
    ) {
        (
            format!("it to run in the {}", field(started, "mode")),
            started.rule.unwrap_or(fact_source.rule),
            started.t.to_string(),
        )
    } else if let Some(finished) = kind("agent_finished") {
        (
            format!("it to end {}", field(finished, "outcome")),
            finished.rule.unwrap_or(fact_source.rule),
            finished.t.to_string(),
        )
    } else {
        (
            first.got.clone(),
            fact_source.rule,
            "(time unknown)".to_string(),
        )
    };
    format!(
        "{}: the model expected {expected} ({rule}) at {when}; the transcript shows {} ({where_})",
        source.agent, fact_source.shown
    )
}
