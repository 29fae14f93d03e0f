//! `--set PATH=VALUE` overrides: a dotted key path and a YAML value, applied to the raw
//! tree of a scenario before it is validated.
//!
//! An override replaces (or adds) one value of the file; validation then runs as for the
//! file itself, so a misspelt key, a value of the wrong type or an unknown arrival process
//! gets the same message and "did you mean" as in the file. Problems that point into an
//! override are reported at the override (`--set load.count=abc:1:12: …`) instead of a
//! place in the file, and warnings about an override (an env var the simulator does not
//! read) are errors: a command line that says something should not be silently ignored.

use std::fmt;

use crate::diagnostic::Diagnostic;
use crate::raw::{self, Node, Span, Value};

/// The env var `--cap N` sets.
pub const CAP_PATH: &str = "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS";

/// Spans of nodes that came from override `k` have this offset plus `k` (far beyond any
/// file, so no snippet is ever drawn from them); see [`Override::owns`].
const OVERRIDE_OFFSET: usize = usize::MAX / 2;

/// One `--set PATH=VALUE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    /// Dotted key path, e.g. `session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS`; list
    /// items are addressed by their index (`main.0.spawn.count`) or, for a list of maps
    /// with a `name` (load streams), by that name (`load.batch.count`).
    pub path: String,
    /// The value, read as YAML (`28` is a number, `poisson(30/s)` text, `{file: x.csv}` a
    /// map).
    pub value: String,
}

impl Override {
    /// Splits `PATH=VALUE` at the first `=`; the error says what the form is.
    ///
    /// ```
    /// let set = subsim_scenario::Override::parse("load.count=5").unwrap();
    /// assert_eq!((set.path.as_str(), set.value.as_str()), ("load.count", "5"));
    /// assert!(subsim_scenario::Override::parse("load.count").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Override, String> {
        let Some((path, value)) = text.split_once('=') else {
            return Err(format!(
                "`{text}` is not PATH=VALUE; e.g. `--set load.count=1000` or \
                 `--set {CAP_PATH}=28`"
            ));
        };
        let path = path.trim();
        if path.is_empty() || path.split('.').any(|part| part.trim().is_empty()) {
            return Err(format!(
                "`{path}` is not a key path: keys joined by dots, e.g. `load.arrivals`"
            ));
        }
        Ok(Override {
            path: path.to_string(),
            value: value.to_string(),
        })
    }

    /// `--cap N`: the concurrency cap env var.
    pub fn cap(cap: u32) -> Override {
        Override {
            path: CAP_PATH.to_string(),
            value: cap.to_string(),
        }
    }

    /// Whether a diagnostic at `offset` points into override number `index`.
    fn owns(index: usize, offset: usize) -> bool {
        offset == OVERRIDE_OFFSET + index
    }
}

impl fmt::Display for Override {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--set {}={}", self.path, self.value)
    }
}

/// The span every node of override `index` carries: its column is where the value starts
/// in `PATH=VALUE`.
fn span(index: usize, set: &Override) -> Span {
    Span {
        offset: OVERRIDE_OFFSET + index,
        len: 0,
        line: 1,
        column: set.path.chars().count() + 2,
    }
}

fn respan(node: &mut Node, span: Span) {
    node.span = span;
    match &mut node.value {
        Value::Seq(items) => items.iter_mut().for_each(|item| respan(item, span)),
        Value::Map(entries) => entries.iter_mut().for_each(|(key, value)| {
            respan(key, span);
            respan(value, span);
        }),
        Value::Null | Value::Bool(..) | Value::Int(..) | Value::Float(..) | Value::Str(..) => {}
    }
}

/// Applies every override to `root`, in order. Problems that stop an override from being
/// applied at all (a path through a scalar, a list index out of range, a value that is not
/// YAML) are returned, located at the override.
pub(crate) fn apply(root: &mut Node, overrides: &[Override]) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    for (index, set) in overrides.iter().enumerate() {
        let here = span(index, set);
        let mut value = match raw::parse(&set.value) {
            Ok(value) => value,
            Err(error) => {
                problems.push(diagnostic(
                    set,
                    here,
                    format!("the value is not YAML: {}", error.message),
                    Some(
                        "quote text that contains `:` or `#`, e.g. `--set 'name=\"a: b\"'`".into(),
                    ),
                ));
                continue;
            }
        };
        respan(&mut value, here);
        if set.path == CAP_PATH {
            let positive = match &value.value {
                Value::Int(number) => *number >= 1 && *number <= i128::from(u32::MAX),
                Value::Str(text) => text.trim().parse::<u32>().is_ok_and(|cap| cap >= 1),
                Value::Null
                | Value::Bool(..)
                | Value::Float(..)
                | Value::Seq(..)
                | Value::Map(..) => false,
            };
            if !positive {
                problems.push(diagnostic(
                    set,
                    here,
                    format!(
                        "the cap must be a whole number from 1, found {}",
                        value.describe()
                    ),
                    Some(format!("e.g. `--set {CAP_PATH}=28` or `--cap 28`")),
                ));
                continue;
            }
        }
        if let Err(message) = put(root, &set.path, value, here) {
            problems.push(diagnostic(set, here, message, None));
        }
    }
    problems
}

/// Puts `value` at `path` under `node`, creating the maps on the way that do not exist
/// (validation then reports a key nobody reads, with its nearest known name).
fn put(node: &mut Node, path: &str, value: Node, here: Span) -> Result<(), String> {
    let mut current = node;
    let parts: Vec<&str> = path.split('.').map(str::trim).collect();
    for (depth, part) in parts.iter().enumerate() {
        let last = depth + 1 == parts.len();
        let walked = parts[..depth].join(".");
        let shown = if walked.is_empty() {
            "the top level".to_string()
        } else {
            format!("`{walked}`")
        };
        if current.value == Value::Null {
            current.value = Value::Map(Vec::new());
        }
        let found_kind = current.describe();
        match &mut current.value {
            Value::Map(entries) => {
                let found = entries
                    .iter()
                    .rposition(|(key, _)| key.value == Value::Str((*part).to_string()));
                let position = match found {
                    Some(position) => position,
                    None => {
                        let key = Node {
                            value: Value::Str((*part).to_string()),
                            span: here,
                        };
                        let empty = Node {
                            value: Value::Null,
                            span: here,
                        };
                        entries.push((key, empty));
                        entries.len() - 1
                    }
                };
                if last {
                    entries[position].1 = value;
                    return Ok(());
                }
                current = &mut entries[position].1;
            }
            Value::Seq(items) => {
                let count = items.len();
                // An item is addressed by its index, or by its `name` (`load.batch.rate`).
                let by_name = || items.iter().position(|item| item_name(item) == Some(part));
                let Some(item) = part
                    .parse::<usize>()
                    .ok()
                    .filter(|at| *at < count)
                    .or_else(by_name)
                else {
                    let names: Vec<&str> = items.iter().filter_map(item_name).collect();
                    let or_name = if names.is_empty() {
                        String::new()
                    } else {
                        format!(" or by its `name` ({})", names.join(", "))
                    };
                    return Err(format!(
                        "{shown} is a list of {count} item(s): address one by its index \
                         (0 to {}){or_name}, not `{part}`",
                        count.saturating_sub(1)
                    ));
                };
                if last {
                    items[item] = value;
                    return Ok(());
                }
                current = &mut items[item];
            }
            Value::Null | Value::Bool(..) | Value::Int(..) | Value::Float(..) | Value::Str(..) => {
                return Err(format!(
                    "{shown} is {}, not a map: `{part}` cannot be set inside it",
                    found_kind
                ));
            }
        }
    }
    Ok(())
}

/// The `name` of a list item that is a map with one (a load stream).
fn item_name(item: &Node) -> Option<&str> {
    let Value::Map(entries) = &item.value else {
        return None;
    };
    entries
        .iter()
        .find_map(|(key, value)| match (&key.value, &value.value) {
            (Value::Str(key), Value::Str(name)) if key == "name" => Some(name.as_str()),
            _ => None,
        })
}

fn diagnostic(set: &Override, here: Span, message: String, help: Option<String>) -> Diagnostic {
    Diagnostic {
        file: set.to_string(),
        line: here.line,
        column: here.column,
        offset: here.offset,
        len: 0,
        message,
        help,
    }
}

/// Re-labels the problems that point into an override: `--set PATH=VALUE:1:col` instead
/// of the scenario file. Returns whether any did.
pub(crate) fn relabel(problems: &mut [Diagnostic], overrides: &[Override]) -> bool {
    let mut any = false;
    for problem in problems.iter_mut() {
        for (index, set) in overrides.iter().enumerate() {
            if Override::owns(index, problem.offset) {
                problem.file = set.to_string();
                problem.line = 1;
                problem.column = set.path.chars().count() + 2;
                any = true;
            }
        }
    }
    any
}

/// Whether a problem points into an override.
pub(crate) fn is_override(problem: &Diagnostic) -> bool {
    problem.offset >= OVERRIDE_OFFSET
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const FILE: &str = "name: x\nsession:\n  env: {CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: 20}\nagents:\n  worker: {behavior: [{work: 1s}]}\nload:\n  arrivals: poisson(20/s)\n  count: 100\n  spawn: {agent: worker}\n";

    fn with(sets: &[&str]) -> Result<crate::Loaded, crate::Diagnostics> {
        let sets: Vec<Override> = sets
            .iter()
            .map(|text| Override::parse(text).unwrap())
            .collect();
        crate::parse_scenario_with(FILE, "x.yaml", Path::new("."), &sets)
    }

    fn first_error(sets: &[&str]) -> String {
        match with(sets) {
            Ok(_) => panic!("{sets:?} should not load"),
            Err(problems) => problems.problems[0].to_string(),
        }
    }

    #[test]
    fn values_replace_and_add() {
        let loaded = with(&[
            "load.count=7",
            "load.arrivals=every(2s)",
            "load.retry=after_completion",
            "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS=3",
            "agents.worker.behavior.0.work=5s",
        ])
        .unwrap();
        let load = loaded.spec.load.unwrap().streams.remove(0);
        assert_eq!(load.until, subsim_engine::spec::LoadUntil::Count(7));
        assert_eq!(
            load.arrivals,
            subsim_engine::spec::Arrivals::Every(2_000_000)
        );
        assert_eq!(load.retry, subsim_engine::spec::Retry::AfterCompletion);
        assert_eq!(
            loaded.spec.session.env[CAP_PATH.rsplit('.').next().unwrap()],
            "3"
        );
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    }

    #[test]
    fn later_overrides_win() {
        let loaded = with(&["load.count=7", "load.count=9"]).unwrap();
        assert_eq!(
            loaded.spec.load.unwrap().streams[0].until,
            subsim_engine::spec::LoadUntil::Count(9)
        );
    }

    #[test]
    fn a_misspelt_key_is_located_at_the_override_with_a_suggestion() {
        assert_eq!(
            first_error(&["load.cuont=5"]).lines().next().unwrap(),
            "--set load.cuont=5:1:12: unknown key `cuont`, did you mean `count`?"
        );
        assert!(first_error(&["sesion.seed=1"]).contains("did you mean `session`?"));
    }

    #[test]
    fn a_wrong_type_is_located_at_the_override() {
        let error = first_error(&["load.count=abc"]);
        assert!(
            error.starts_with("--set load.count=abc:1:12: `count` must be a whole number"),
            "{error}"
        );
        let error = first_error(&["load.arrivals=poison(3/s)"]);
        assert!(error.contains("did you mean `poisson`?"), "{error}");
    }

    #[test]
    fn an_env_var_nobody_reads_is_an_error_not_a_warning() {
        let error = first_error(&["session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENT=3"]);
        assert!(
            error.contains("did you mean `CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS`?"),
            "{error}"
        );
    }

    #[test]
    fn the_cap_must_be_a_positive_whole_number() {
        for bad in ["0", "abc", "2.5", "-1"] {
            let error = first_error(&[&format!("{CAP_PATH}={bad}")]);
            assert!(
                error.contains("the cap must be a whole number from 1"),
                "{error}"
            );
        }
    }

    #[test]
    fn paths_through_scalars_and_lists_are_explained() {
        let error = first_error(&["name.x=1"]);
        assert!(error.contains("`name` is `x`, not a map"), "{error}");
        let error = first_error(&["agents.worker.behavior.3.work=1s"]);
        assert!(
            error.contains("`agents.worker.behavior` is a list of 1 item(s)"),
            "{error}"
        );
    }

    const STREAMS: &str = "name: x\nagents:\n  worker: {behavior: [{work: 1s}]}\nload:\n  - name: interactive\n    arrivals: poisson(5/s)\n    count: 10\n    spawn: {agent: worker}\n  - name: batch\n    arrivals: {schedule: [{for: 1h, rate: 1/s}, {for: 1h, rate: 0/s}]}\n    count: 10\n    spawn: {agent: worker}\n";

    #[test]
    fn load_streams_are_addressed_by_index_or_name() {
        use subsim_engine::spec::{Arrivals, LoadUntil, RatePhase};
        let sets: Vec<Override> = [
            "load.batch.count=3",
            "load.0.arrivals=every(1s)",
            "load.batch.arrivals.schedule.1.rate=2/s",
        ]
        .iter()
        .map(|text| Override::parse(text).unwrap())
        .collect();
        let loaded = crate::parse_scenario_with(STREAMS, "x.yaml", Path::new("."), &sets).unwrap();
        let streams = loaded.spec.load.unwrap().streams;
        assert_eq!(streams[0].arrivals, Arrivals::Every(1_000_000));
        assert_eq!(streams[1].until, LoadUntil::Count(3));
        let phase = |rate: f64| RatePhase {
            length: 3_600_000_000,
            rate,
        };
        assert_eq!(
            streams[1].arrivals,
            Arrivals::Schedule(std::rc::Rc::from([phase(1.0), phase(2.0)]))
        );
        let sets = [Override::parse("load.nightly.count=3").unwrap()];
        let error = crate::parse_scenario_with(STREAMS, "x.yaml", Path::new("."), &sets)
            .unwrap_err()
            .problems[0]
            .to_string();
        assert!(
            error.contains("address one by its index (0 to 1) or by its `name` (interactive, batch), not `nightly`"),
            "{error}"
        );
    }

    #[test]
    fn the_value_must_be_yaml() {
        let error = first_error(&["load.spawn={agent: [worker"]);
        assert!(error.contains("the value is not YAML"), "{error}");
    }

    #[test]
    fn bad_forms_are_refused_before_loading() {
        assert!(Override::parse("load.count").is_err());
        assert!(Override::parse("=5").is_err());
        assert!(Override::parse("load..count=5").is_err());
        assert_eq!(
            Override::cap(28).to_string(),
            format!("--set {CAP_PATH}=28")
        );
    }
}
