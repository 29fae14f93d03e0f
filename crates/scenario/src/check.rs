//! Validation helpers shared by every block: the [`Ctx`] that collects diagnostics, and
//! typed readers over [`Node`]s (`text`, `boolean`, `duration`, maps with known keys …).
//!
//! Each reader reports what is wrong at the node's place and returns `None`, so callers
//! keep going and every problem in a file gets reported. Nothing here knows what a
//! scenario means; the block modules do.

use std::path::Path;

use subsim_engine::dist::Dist;
use subsim_engine::spec::ClassifierSpec;
use subsim_rules::Version;

use crate::diagnostic::{did_you_mean, list_names, Diagnostic};
use crate::duration::{parse_dist, parse_duration, DIST_FORMS, DURATION_FORMS};
use crate::raw::{Node, Span, Value};
use crate::read::Confine;

/// The longest `name` an Agent call may give its run, in characters: the bound Claude Code
/// sets on agent names (DEF-10), which keeps a run's record and its events small.
pub const MAX_RUN_NAME: usize = 256;

/// A name referenced somewhere, checked once every definition is known.
#[derive(Clone, Debug)]
pub(crate) struct AgentRef {
    /// The agent type written.
    pub name: String,
    /// Where.
    pub span: Span,
}

/// Collects diagnostics for one file while its blocks are validated.
pub(crate) struct Ctx<'s> {
    /// File name shown in diagnostics.
    pub file: &'s str,
    /// Directory relative paths are resolved against.
    pub base_dir: &'s Path,
    /// Errors, in discovery order.
    pub errors: Vec<Diagnostic>,
    /// Warnings, in discovery order.
    pub warnings: Vec<Diagnostic>,
    /// Agent types named by `spawn` steps, checked at the end.
    pub agent_refs: Vec<AgentRef>,
    /// The run names `spawn` steps give (`name:`), for [`Ctx::run_refs`].
    pub run_names: Vec<String>,
    /// Runs named by `wait.for`, `send.to`, `stop` and the person's actions, checked at
    /// the end against [`Ctx::run_names`]: the fixed words the field also takes beside.
    pub run_refs: Vec<RunRef>,
    /// `session.classifier`: what a spawn's partial `classifier` falls back to.
    pub session_classifier: ClassifierSpec,
    /// `session.tools`: names a definition's `tools` entries may use beyond the built-ins.
    pub session_tools: Vec<String>,
    /// `session.version`: what version-gated field values are read under (PERM-9).
    pub version: Version,
    /// The folders `file:` and `agent_dirs` may read from (the scenario's own by default).
    pub confine: Confine,
    /// Lines before the text being validated in its file (a definition's frontmatter
    /// starts below the opening `---`): added to the locations messages quote.
    pub line_shift: usize,
}

/// A run named by a field that takes a run's name or id (or, for `wait.for`, a fixed
/// word), checked once every `spawn` step is read.
#[derive(Clone, Debug)]
pub(crate) struct RunRef {
    /// The name written.
    pub name: String,
    /// Where.
    pub span: Span,
    /// The field, for messages (`` `wait.for` ``).
    pub field: &'static str,
    /// The fixed words the field takes besides a name (`children`, `notification`).
    pub words: &'static [&'static str],
}

impl<'s> Ctx<'s> {
    /// A context for `file`.
    pub fn new(file: &'s str, base_dir: &'s Path) -> Ctx<'s> {
        Ctx {
            file,
            base_dir,
            errors: Vec::new(),
            warnings: Vec::new(),
            agent_refs: Vec::new(),
            run_names: Vec::new(),
            run_refs: Vec::new(),
            session_classifier: ClassifierSpec::default(),
            session_tools: Vec::new(),
            version: Version::NEWEST,
            confine: Confine::new(base_dir, &[]),
            line_shift: 0,
        }
    }

    fn diagnostic(&self, span: Span, message: String, help: Option<String>) -> Diagnostic {
        Diagnostic {
            file: self.file.to_string(),
            line: span.line.max(1),
            column: span.column.max(1),
            offset: span.offset,
            len: span.len,
            message,
            help,
        }
    }

    /// Reports an error at `span`.
    pub fn error(&mut self, span: Span, message: impl Into<String>) {
        let diagnostic = self.diagnostic(span, message.into(), None);
        self.errors.push(diagnostic);
    }

    /// Reports an error at `span`, with help.
    pub fn error_help(&mut self, span: Span, message: impl Into<String>, help: impl Into<String>) {
        let diagnostic = self.diagnostic(span, message.into(), Some(help.into()));
        self.errors.push(diagnostic);
    }

    /// Reports a warning at `span`.
    pub fn warn(&mut self, span: Span, message: impl Into<String>, help: Option<String>) {
        let diagnostic = self.diagnostic(span, message.into(), help);
        self.warnings.push(diagnostic);
    }

    /// For a tool name a hook matcher or a permission rule names: `None` when the session
    /// could have it (a built-in the catalog names, a `session.tools` entry, any MCP name
    /// `mcp__…`), else `Some` of the "did you mean" text (empty when nothing is close).
    pub(crate) fn unknown_tool(&self, name: &str) -> Option<String> {
        if name.is_empty() || name.starts_with("mcp__") {
            return None;
        }
        let mut known = subsim_rules::tools::known_builtins();
        if known.contains(&name) || self.session_tools.iter().any(|tool| tool == name) {
            return None;
        }
        known.extend(self.session_tools.iter().map(String::as_str));
        Some(did_you_mean(name, &known))
    }

    /// The folder relative paths resolve against, for messages (`.` rather than nothing).
    pub fn folder(&self) -> &Path {
        if self.base_dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            self.base_dir
        }
    }

    /// `file:line:col` of a span.
    pub fn location(&self, span: Span) -> String {
        format!("{}:{}:{}", self.file, span.line.max(1), span.column.max(1))
    }

    /// A map whose keys must all be in `known`. Reports unknown keys (with the nearest
    /// known one), duplicate keys and non-name keys. `what` names the block in messages,
    /// e.g. "`spawn`". A null value (`session:` with nothing under it) is an empty map.
    pub fn fields<'n>(&mut self, node: &'n Node, what: &str, known: &[&str]) -> Option<Fields<'n>> {
        let entries = match &node.value {
            Value::Map(entries) => entries.as_slice(),
            Value::Null => &[],
            Value::Bool(..)
            | Value::Int(..)
            | Value::Float(..)
            | Value::Str(..)
            | Value::Seq(..) => {
                self.error_help(
                    node.span,
                    format!("{what} must be a map, found {}", node.describe()),
                    format!("{what} takes: {}", list_names(known)),
                );
                return None;
            }
        };
        let mut fields = Fields {
            entries: Vec::new(),
            span: node.span,
        };
        for (key, value) in entries {
            let Some(name) = self.key_name(key) else {
                continue;
            };
            if !known.contains(&name) {
                let hint = did_you_mean(name, known);
                self.error_help(
                    key.span,
                    format!("unknown key `{name}`{hint}"),
                    format!("{what} takes: {}", list_names(known)),
                );
                continue;
            }
            if let Some(first) = fields.entries.iter().find(|(seen, _, _)| *seen == name) {
                let first_at = format!(
                    "{}:{}",
                    first.1.span.line + self.line_shift,
                    first.1.span.column
                );
                self.error(
                    key.span,
                    format!("duplicate key `{name}` (first written at {first_at})"),
                );
                continue;
            }
            fields.entries.push((name, key, value));
        }
        Some(fields)
    }

    /// The text of a map key, which must be a string (a number or a list is reported).
    pub fn key_name<'n>(&mut self, key: &'n Node) -> Option<&'n str> {
        match &key.value {
            Value::Str(text) => Some(text),
            Value::Null
            | Value::Bool(..)
            | Value::Int(..)
            | Value::Float(..)
            | Value::Seq(..)
            | Value::Map(..) => {
                self.error(
                    key.span,
                    format!("a key must be a name, found {}", key.describe()),
                );
                None
            }
        }
    }

    /// Any scalar as text (numbers and booleans as written); `what` names the value.
    pub fn text(&mut self, node: &Node, what: &str) -> Option<String> {
        let text = node.scalar_text();
        if text.is_none() {
            self.error(
                node.span,
                format!("{what} must be text, found {}", node.describe()),
            );
        }
        text
    }

    /// Non-empty text (names: agent ids, tool names …).
    pub fn name(&mut self, node: &Node, what: &str) -> Option<String> {
        let text = self.text(node, what)?;
        if text.trim().is_empty() {
            self.error(node.span, format!("{what} must not be empty"));
            return None;
        }
        Some(text)
    }

    /// The `name` of an Agent call (a spawn, fork, load call or `/subtask`): non-empty
    /// text of at most [`MAX_RUN_NAME`] characters. Every run keeps its name (a named run
    /// stays resumable, and `max_held` counts records, not bytes) and every event about it
    /// writes it, so an unbounded name made each of up to `max_held` records as large as
    /// the file: a 4,000-character name spawned again and again held 11 GB.
    pub fn run_name(&mut self, node: &Node, what: &str) -> Option<String> {
        let text = self.name(node, what)?;
        let chars = text.chars().count();
        if chars > MAX_RUN_NAME {
            self.error_help(
                node.span,
                format!("{what} is {chars} characters long; names are at most {MAX_RUN_NAME}"),
                format!(
                    "give the call a shorter name (like `researcher` or `code-reviewer`); \
                     agent names in Claude Code are at most {MAX_RUN_NAME} characters (DEF-10)"
                ),
            );
            return None;
        }
        Some(text)
    }

    /// One of `names`; anything else is reported with the nearest name.
    pub fn choice<'a>(&mut self, node: &Node, what: &str, names: &[&'a str]) -> Option<&'a str> {
        let text = self.text(node, what)?;
        if let Some(found) = names.iter().find(|name| **name == text) {
            return Some(found);
        }
        let hint = did_you_mean(&text, names);
        self.error_help(
            node.span,
            format!("unknown {what} `{text}`{hint}"),
            format!("{what} is one of {}", list_names(names)),
        );
        None
    }

    /// `true` or `false`.
    pub fn boolean(&mut self, node: &Node, what: &str) -> Option<bool> {
        match node.value {
            Value::Bool(flag) => Some(flag),
            Value::Null
            | Value::Int(..)
            | Value::Float(..)
            | Value::Str(..)
            | Value::Seq(..)
            | Value::Map(..) => {
                self.error(
                    node.span,
                    format!(
                        "{what} must be `true` or `false`, found {}",
                        node.describe()
                    ),
                );
                None
            }
        }
    }

    /// A whole number ≥ `min`.
    pub fn integer(&mut self, node: &Node, what: &str, min: u64) -> Option<u64> {
        match node.value {
            Value::Int(number) if number >= i128::from(min) => match u64::try_from(number) {
                Ok(value) => Some(value),
                Err(_) => {
                    self.error(node.span, format!("{what} is too large"));
                    None
                }
            },
            Value::Int(number) => {
                let floor = if min == 1 {
                    "at least 1".to_string()
                } else {
                    format!("at least {min}")
                };
                self.error(node.span, format!("{what} must be {floor}, found {number}"));
                None
            }
            Value::Null
            | Value::Bool(..)
            | Value::Float(..)
            | Value::Str(..)
            | Value::Seq(..)
            | Value::Map(..) => {
                self.error(
                    node.span,
                    format!("{what} must be a whole number, found {}", node.describe()),
                );
                None
            }
        }
    }

    /// A whole number ≥ `min` that fits in a `u32`.
    pub fn integer_u32(&mut self, node: &Node, what: &str, min: u32) -> Option<u32> {
        let value = self.integer(node, what, u64::from(min))?;
        match u32::try_from(value) {
            Ok(value) => Some(value),
            Err(_) => {
                self.error(node.span, format!("{what} must be at most {}", u32::MAX));
                None
            }
        }
    }

    /// A finite number (integer or decimal).
    pub fn number(&mut self, node: &Node, what: &str) -> Option<f64> {
        match node.value {
            Value::Int(number) => Some(number as f64),
            Value::Float(number) if number.is_finite() => Some(number),
            Value::Null
            | Value::Bool(..)
            | Value::Float(..)
            | Value::Str(..)
            | Value::Seq(..)
            | Value::Map(..) => {
                self.error(
                    node.span,
                    format!("{what} must be a number, found {}", node.describe()),
                );
                None
            }
        }
    }

    /// A duration or a distribution, sampled at run time.
    pub fn dist(&mut self, node: &Node, what: &str) -> Option<Dist> {
        let parsed = match &node.value {
            Value::Str(text) => parse_dist(text),
            Value::Int(_) | Value::Float(_) => {
                parse_duration(&node.scalar_text().unwrap_or_default()).map(Dist::Const)
            }
            Value::Null | Value::Bool(..) | Value::Seq(..) | Value::Map(..) => {
                Err(format!("expected a duration, found {}", node.describe()))
            }
        };
        match parsed {
            Ok(dist) => Some(dist),
            Err(message) => {
                let help = if message.contains("missing its closing") {
                    // In `{work: normal(10s, 2s)}` the comma ends the value.
                    format!("inside `{{...}}` or `[...]` a comma ends the value; quote it: `\"{}, ...)\"`", node.scalar_text().unwrap_or_default())
                } else {
                    DIST_FORMS.to_string()
                };
                self.error_help(node.span, format!("{what}: {message}"), help);
                None
            }
        }
    }

    /// A fixed duration in microseconds (no distribution).
    pub fn duration(&mut self, node: &Node, what: &str) -> Option<u64> {
        let text = match &node.value {
            Value::Str(text) => text.clone(),
            Value::Int(_) | Value::Float(_) => node.scalar_text().unwrap_or_default(),
            Value::Null | Value::Bool(..) | Value::Seq(..) | Value::Map(..) => {
                self.error_help(
                    node.span,
                    format!("{what}: expected a duration, found {}", node.describe()),
                    DURATION_FORMS,
                );
                return None;
            }
        };
        if text.contains('(') {
            self.error_help(
                node.span,
                format!("{what} must be a fixed duration, not a distribution"),
                DURATION_FORMS,
            );
            return None;
        }
        match parse_duration(&text) {
            Ok(micros) => Some(micros),
            Err(message) => {
                self.error_help(node.span, format!("{what}: {message}"), DURATION_FORMS);
                None
            }
        }
    }

    /// A list; anything else is reported.
    pub fn list<'n>(&mut self, node: &'n Node, what: &str) -> Option<&'n [Node]> {
        match &node.value {
            Value::Seq(items) => Some(items),
            Value::Null
            | Value::Bool(..)
            | Value::Int(..)
            | Value::Float(..)
            | Value::Str(..)
            | Value::Map(..) => {
                self.error(
                    node.span,
                    format!("{what} must be a list, found {}", node.describe()),
                );
                None
            }
        }
    }

    /// A list of names, or the documented comma-separated string (`"Read, Grep"`).
    pub fn name_list(&mut self, node: &Node, what: &str) -> Option<Vec<String>> {
        match &node.value {
            Value::Str(text) => Some(split_top_level(text)),
            Value::Seq(items) => {
                let names: Vec<Option<String>> =
                    items.iter().map(|item| self.name(item, what)).collect();
                names.into_iter().collect()
            }
            Value::Null | Value::Bool(..) | Value::Int(..) | Value::Float(..) | Value::Map(..) => {
                self.error_help(
                    node.span,
                    format!(
                        "{what} must be a list or a comma-separated string, found {}",
                        node.describe()
                    ),
                    "e.g. `[Read, Grep]` or `\"Read, Grep\"`",
                );
                None
            }
        }
    }

    /// A list of strings (no comma form).
    pub fn string_list(&mut self, node: &Node, what: &str) -> Option<Vec<String>> {
        let items = self.list(node, what)?;
        let names: Vec<Option<String>> = items.iter().map(|item| self.name(item, what)).collect();
        names.into_iter().collect()
    }
}

/// The keys of a validated map, in file order, without duplicates or unknown keys.
pub(crate) struct Fields<'n> {
    entries: Vec<(&'n str, &'n Node, &'n Node)>,
    /// Where the map starts.
    pub span: Span,
}

impl<'n> Fields<'n> {
    /// The value of `key`, if written.
    pub fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(name, _, _)| *name == key)
            .map(|(_, _, value)| *value)
    }

    /// The key node of `key`, if written (to point at the key rather than its value).
    pub fn key(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(name, _, _)| *name == key)
            .map(|(_, key, _)| *key)
    }

    /// Written keys, in file order.
    pub fn names(&self) -> impl Iterator<Item = &'n str> + '_ {
        self.entries.iter().map(|(name, _, _)| *name)
    }

    /// True if no key was written.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Splits the documented comma-separated tool string at the commas that are not inside
/// parentheses, so `Agent(worker, reviewer), Read` is two entries (SPAWN-5's example).
pub(crate) fn split_top_level(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for character in text.chars() {
        match character {
            '(' => {
                depth += 1;
                current.push(character);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(character);
            }
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut current));
            }
            _ => current.push(character),
        }
    }
    items.push(current);
    items
        .into_iter()
        .map(|item| item.trim().to_string())
        .filter(|item| !item.is_empty())
        .collect()
}

/// Reports a missing required key of a map step.
pub(crate) fn require<'n>(
    ctx: &mut Ctx<'_>,
    fields: &Fields<'n>,
    what: &str,
    key: &str,
    example: &str,
) -> Option<&'n Node> {
    let value = fields.get(key);
    if value.is_none() {
        ctx.error_help(
            fields.span,
            format!("{what} needs `{key}`"),
            format!("e.g. {example}"),
        );
    }
    value
}

#[cfg(test)]
mod split_tests {
    use super::split_top_level;

    #[test]
    fn commas_inside_parentheses_stay() {
        assert_eq!(
            split_top_level("Agent(worker, reviewer), Read, Bash(git push *)"),
            vec!["Agent(worker, reviewer)", "Read", "Bash(git push *)"]
        );
        assert_eq!(split_top_level(" Read ,, Grep "), vec!["Read", "Grep"]);
    }
}
