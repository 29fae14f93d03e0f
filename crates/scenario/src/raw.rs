//! The raw YAML tree: every key and value with where it was written.
//!
//! This is the only module that talks to serde-saphyr. It parses untrusted text under a
//! tight [`serde_saphyr::Budget`] into a [`Node`] tree that keeps line, column and byte
//! span for every node, so validation can report every problem at its place. It knows
//! nothing about scenarios: which keys mean what is decided in the modules that build
//! engine input.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{
    Budget, DuplicateKeyPolicy, Error as YamlError, Location, MessageFormatter, Options, Spanned,
};

/// Largest scenario or agent file accepted, in bytes.
pub(crate) const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;
/// Deepest nesting of lists and maps. A `spawn` with a `behavior` costs three levels, so
/// this allows some twenty levels of nested spawns.
const MAX_DEPTH: usize = 64;
/// Stack of the parser thread: some 35 KiB per nesting level in debug builds, with room.
pub const PARSER_STACK_BYTES: usize = 16 * 1024 * 1024;
/// Most nodes (scalars, lists, maps), aliases expanded.
const MAX_NODES: usize = 100_000;
/// Most alias uses (`*name`) and anchors (`&name`).
const MAX_ALIASES: usize = 1_000;
/// Most parser events replayed by aliases: what stops a "billion laughs" file.
const MAX_REPLAYED_EVENTS: usize = 20_000;

/// Where a node was written: byte span plus 1-based line and (character) column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    /// Byte offset into the source.
    pub offset: usize,
    /// Byte length (0 for a point, e.g. an empty value or the start of a block map).
    pub len: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

/// A YAML value with its location.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    /// The value.
    pub value: Value,
    /// Where it was written (for an alias: where the alias was used).
    pub span: Span,
}

/// A YAML value. Maps keep file order and duplicate keys (validation reports those).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    /// `~`, `null` or nothing.
    Null,
    /// `true` / `false` (YAML 1.2 spellings only: `yes` stays a string).
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A list.
    Seq(Vec<Node>),
    /// A map, in file order.
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// The string, if this is a string.
    #[cfg(test)]
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(text) => Some(text),
            Value::Null
            | Value::Bool(..)
            | Value::Int(..)
            | Value::Float(..)
            | Value::Seq(..)
            | Value::Map(..) => None,
        }
    }

    /// The text of a scalar: strings as they are, numbers and booleans as YAML writes them.
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Value::Str(text) => Some(text.clone()),
            Value::Int(number) => Some(number.to_string()),
            Value::Float(number) => Some(number.to_string()),
            Value::Bool(flag) => Some(flag.to_string()),
            Value::Null | Value::Seq(_) | Value::Map(_) => None,
        }
    }

    /// A short description of what was found, for "expected X, found Y" messages.
    pub fn describe(&self) -> String {
        match &self.value {
            Value::Null => "nothing".to_string(),
            Value::Bool(flag) => format!("`{flag}`"),
            Value::Int(number) => format!("the number {number}"),
            Value::Float(number) => format!("the number {number}"),
            Value::Str(text) => {
                let shown: String = text.chars().take(40).collect();
                let ellipsis = if text.chars().count() > 40 { "…" } else { "" };
                format!("`{}{ellipsis}`", shown.escape_debug())
            }
            Value::Seq(_) => "a list".to_string(),
            Value::Map(_) => "a map".to_string(),
        }
    }
}

/// A YAML-level problem: the text is not YAML, or breaches the budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    /// Where.
    pub span: Span,
}

/// Parses one YAML document into a [`Node`] tree, under the budget.
pub(crate) fn parse(source: &str) -> Result<Node, SyntaxError> {
    let lines = LineIndex::new(source);
    if source.len() > MAX_FILE_BYTES {
        return Err(SyntaxError {
            message: format!(
                "the file is {} bytes; scenario files are at most {MAX_FILE_BYTES}",
                source.len()
            ),
            help: None,
            span: Span {
                offset: 0,
                len: 0,
                line: 1,
                column: 1,
            },
        });
    }
    // The parser recurses once per nesting level, with large frames in debug builds, so it
    // runs where the stack is known to be large enough for the depth budget (test threads
    // have 2 MiB): on a thread started with [`spawn_scoped_with_parser_stack`] (`check`'s
    // workers), on the main thread when its stack may grow far enough, or on a thread of
    // its own. A bug deep inside the YAML library panics; that
    // is contained and reported like any other unreadable file (scenario files are
    // untrusted input) instead of taking the caller down. A thread that cannot start
    // (memory or threads exhausted: `check --jobs 8` under `ulimit -v`) is not a failure
    // of the file: the parser tries again one at a time, behind [`PARSER_SLOT`], then says
    // what it is. The main thread needs no thread when its own stack has room.
    let parse_here = || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            serde_saphyr::from_str_with_options::<RawNode>(source, options())
                .map(|raw| raw.into_node(&lines))
                .map_err(|error| syntax_error(&error, &lines))
        }))
        .ok()
    };
    let parse_on_thread = || {
        std::thread::scope(|scope| {
            spawn_parser(scope, "subsim-yaml", parse_here)
                .map(|handle| handle.join().ok().flatten())
        })
    };
    // The main thread, when its stack has room, parses without a thread of its own: each
    // file's thread mapped a 16 MiB stack, which under an address-space limit (`ulimit
    // -v`, `check` left with no room for a worker) started and then left too little for
    // the work, and an allocation failed (an abort).
    let parsed = if ROOMY_STACK.get() || main_thread_has_room() {
        Ok(parse_here())
    } else {
        parse_on_thread().or_else(|error| {
            // The other parsers end within moments and give their memory back: a few
            // tries, one caller at a time.
            let _one_at_a_time = PARSER_SLOT
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let mut tried = Err(error);
            for _ in 0..PARSER_RETRIES {
                std::thread::sleep(std::time::Duration::from_millis(20));
                tried = parse_on_thread();
                if tried.is_ok() {
                    break;
                }
            }
            tried
        })
    };
    let at_start = Span {
        offset: 0,
        len: 0,
        line: 1,
        column: 1,
    };
    match parsed {
        Ok(Some(result)) => result,
        Ok(None) => Err(SyntaxError {
            message: "the YAML parser failed on this file".to_string(),
            help: Some("this is a bug in subsim; please report it with the file".to_string()),
            span: at_start,
        }),
        Err(error) => Err(SyntaxError {
            message: format!(
                "cannot start the YAML parser's thread ({PARSER_STACK_BYTES} bytes of stack): \
                 {error}"
            ),
            help: Some(
                "the machine is out of memory or threads: run fewer at once (`--jobs`) or \
                 raise the limit (`ulimit -v`)"
                    .to_string(),
            ),
            span: at_start,
        }),
    }
}

/// Starts a thread (in `scope`) whose stack is the parser's, on which `parse` runs
/// directly instead of starting a thread of its own for every file: what a pool of
/// workers that each parse many files (`check --jobs`) runs on. Fails as
/// [`std::thread::Builder::spawn_scoped`] does, when the machine cannot start one more.
pub fn spawn_scoped_with_parser_stack<'scope, 'env, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    name: &str,
    work: impl FnOnce() -> T + Send + 'scope,
) -> std::io::Result<std::thread::ScopedJoinHandle<'scope, T>> {
    spawn_parser(scope, name, move || {
        ROOMY_STACK.set(true);
        work()
    })
}

fn spawn_parser<'scope, 'env, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    name: &str,
    work: impl FnOnce() -> T + Send + 'scope,
) -> std::io::Result<std::thread::ScopedJoinHandle<'scope, T>> {
    #[cfg(test)]
    if tests::NO_THREADS.get() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::WouldBlock,
            "no threads in this test",
        ));
    }
    std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(PARSER_STACK_BYTES)
        .spawn_scoped(scope, work)
}

std::thread_local! {
    /// This thread was started with the parser's stack ([`spawn_scoped_with_parser_stack`]).
    static ROOMY_STACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The most stack the parser uses on the deepest input the budget lets through, with
/// room: measured under 3 MiB in a debug build (`[[[…` 127 deep, block maps and lists 64
/// deep), far less in a release build.
const PARSER_STACK_NEEDED: u64 = 6 * 1024 * 1024;

/// Whether this is the main thread and its stack may grow to [`PARSER_STACK_NEEDED`]:
/// Linux grows the main thread's stack up to `ulimit -s` (8 MiB unless changed), read
/// from `/proc/self/limits`; elsewhere, or when that cannot be read, no.
fn main_thread_has_room() -> bool {
    if std::thread::current().name() != Some("main") {
        return false;
    }
    let Ok(limits) = std::fs::read_to_string("/proc/self/limits") else {
        return false;
    };
    limits
        .lines()
        .find_map(|line| line.strip_prefix("Max stack size"))
        .and_then(|rest| rest.split_whitespace().next())
        .is_some_and(|soft| {
            soft == "unlimited"
                || soft
                    .parse::<u64>()
                    .is_ok_and(|bytes| bytes >= PARSER_STACK_NEEDED)
        })
}

/// How many more times a parser thread that could not start is tried, 20 ms apart.
const PARSER_RETRIES: u32 = 50;

/// Held while a parser thread that could not start is tried again, so that the retries
/// run one at a time.
static PARSER_SLOT: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn options() -> Options {
    let mut budget = Budget::default();
    budget.max_depth = MAX_DEPTH;
    // Above the depth budget (the scanner reads ahead of it), so that deep flow nesting is reported as a budget breach.
    budget.flow_nesting_limit = MAX_DEPTH * 2;
    budget.max_nodes = MAX_NODES;
    budget.max_events = MAX_NODES * 3;
    budget.max_aliases = MAX_ALIASES;
    budget.max_anchors = MAX_ALIASES;
    budget.max_documents = 1;
    budget.max_total_scalar_bytes = MAX_FILE_BYTES;
    budget.max_recorded_anchor_events = MAX_REPLAYED_EVENTS;
    budget.max_recorded_anchor_bytes = MAX_FILE_BYTES;
    budget.max_merge_keys = MAX_ALIASES;
    budget.max_inclusion_depth = 0;

    let mut options = Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = MAX_REPLAYED_EVENTS;
    options.alias_limits.max_replay_stack_depth = 16;
    // Duplicate keys reach validation, which reports every one of them at its place.
    options.duplicate_keys = DuplicateKeyPolicy::PassThrough;
    // YAML 1.2: `yes`, `no`, `on`, `off` are strings, not booleans.
    options.strict_booleans = true;
    options.reject_unsupported_tags = true;
    options.with_snippet = false;
    options
}

fn budget_help() -> String {
    format!(
        "scenario files are untrusted input and are read under a budget: nesting depth \
         {MAX_DEPTH}, {MAX_NODES} values, {MAX_ALIASES} aliases, {MAX_REPLAYED_EVENTS} \
         events replayed by aliases, one document"
    )
}

fn syntax_error(error: &YamlError, lines: &LineIndex) -> SyntaxError {
    let span = error
        .location()
        .map(|location| lines.span_of(&location, false))
        .unwrap_or_default();
    let span = if span.line == 0 {
        Span {
            offset: 0,
            len: 0,
            line: 1,
            column: 1,
        }
    } else {
        span
    };
    let (message, help) = match original_error(error) {
        YamlError::Budget { breach, .. } => budget_message(breach),
        YamlError::AliasReplayLimitExceeded { .. }
        | YamlError::AliasExpansionLimitExceeded { .. }
        | YamlError::AliasReplayStackDepthExceeded { .. }
        | YamlError::AliasReplayCounterOverflow { .. } => (
            "aliases expand beyond the budget for scenario files (an alias bomb?)".to_string(),
            Some(budget_help()),
        ),
        YamlError::MultipleDocuments { .. } => (
            "a scenario file holds one YAML document; this starts a second one".to_string(),
            Some("remove the `---` line, or split the file".to_string()),
        ),
        other => {
            let message = serde_saphyr::DefaultMessageFormatter.format_message(other);
            if message.contains("recursion limit exceeded") {
                // The parser's own bound on nested flow lists and maps (`[[[…` or
                // `{a: {b: …`), met before the budget's depth is: the same problem, said
                // the same way, with the fix.
                (
                    format!("lists and maps nest deeper than {MAX_DEPTH} levels"),
                    Some(budget_help()),
                )
            } else {
                // The formatter's text is not sanitised; keep control characters out of
                // terminals.
                (format!("invalid YAML: {}", sanitise(&message)), None)
            }
        }
    };
    SyntaxError {
        message,
        help,
        span,
    }
}

/// The error under alias and snippet wrappers (the location stays the outer one: where
/// the alias was used).
fn original_error(mut error: &YamlError) -> &YamlError {
    while let YamlError::AliasError { error: inner, .. }
    | YamlError::WithSnippet { error: inner, .. } = error
    {
        error = inner;
    }
    error
}

fn budget_message(breach: &BudgetBreach) -> (String, Option<String>) {
    let message = match breach {
        BudgetBreach::Depth { .. } => format!("lists and maps nest deeper than {MAX_DEPTH} levels"),
        BudgetBreach::Documents { .. } => {
            return (
                "a scenario file holds one YAML document; this starts a second one".to_string(),
                Some("remove the `---` line, or split the file".to_string()),
            )
        }
        BudgetBreach::Nodes { .. } | BudgetBreach::Events { .. } => {
            format!("the file has more than {MAX_NODES} values")
        }
        BudgetBreach::Aliases { .. }
        | BudgetBreach::Anchors { .. }
        | BudgetBreach::AliasAnchorRatio { .. }
        | BudgetBreach::RecordedAnchorEvents { .. }
        | BudgetBreach::RecordedAnchorBytes { .. } => {
            "aliases expand beyond the budget for scenario files (an alias bomb?)".to_string()
        }
        _ => "the file exceeds the budget for scenario files".to_string(),
    };
    (message, Some(budget_help()))
}

/// The text with control characters escaped (`\n` → `\\n`).
fn sanitise(text: &str) -> String {
    let mut clean = String::with_capacity(text.len());
    for character in text.chars() {
        if character.is_control() {
            clean.extend(character.escape_default());
        } else {
            clean.push(character);
        }
    }
    clean
}

/// Line starts of a source, to turn (line, character column) into byte offsets.
pub(crate) struct LineIndex<'s> {
    source: &'s str,
    starts: Vec<usize>,
}

impl<'s> LineIndex<'s> {
    /// Indexes `source`.
    pub fn new(source: &'s str) -> LineIndex<'s> {
        let mut starts = vec![0];
        starts.extend(source.match_indices('\n').map(|(index, _)| index + 1));
        LineIndex { source, starts }
    }

    /// The byte offset of 1-based `line` and character `column`, clamped into the source.
    pub fn offset_of(&self, line: usize, column: usize) -> usize {
        let Some(&start) = self.starts.get(line.saturating_sub(1)) else {
            return self.source.len();
        };
        let rest = &self.source[start..];
        let line_text = rest.split('\n').next().unwrap_or("");
        let within = line_text
            .char_indices()
            .nth(column.saturating_sub(1))
            .map(|(index, _)| index)
            .unwrap_or(line_text.len());
        start + within
    }

    /// The span of a saphyr location. `prefer_bytes`: trust the library's byte offset when
    /// it has one (node spans do; syntax errors often only have characters).
    fn span_of(&self, location: &Location, prefer_bytes: bool) -> Span {
        let line = usize::try_from(location.line()).unwrap_or(0);
        let column = usize::try_from(location.column()).unwrap_or(0);
        if line == 0 {
            return Span::default();
        }
        let span = location.span();
        let offset = match span
            .byte_offset()
            .and_then(|offset| usize::try_from(offset).ok())
        {
            Some(offset) if prefer_bytes && offset <= self.source.len() => offset,
            _ => self.offset_of(line, column),
        };
        let len = span
            .byte_len()
            .and_then(|len| usize::try_from(len).ok())
            .or_else(|| {
                // Characters to bytes, from the offset on.
                let chars = usize::try_from(span.len()).ok()?;
                let rest = self.source.get(offset..)?;
                Some(
                    rest.char_indices()
                        .nth(chars)
                        .map(|(index, _)| index)
                        .unwrap_or(rest.len()),
                )
            })
            .unwrap_or(0);
        let len = len.min(self.source.len().saturating_sub(offset));
        Span {
            offset,
            len,
            line,
            column,
        }
    }
}

/// What serde-saphyr builds; turned into a [`Node`] once the line index is at hand.
struct RawNode {
    value: RawValue,
    location: Location,
}

enum RawValue {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<RawNode>),
    Map(Vec<(RawNode, RawNode)>),
}

impl RawNode {
    fn into_node(self, lines: &LineIndex<'_>) -> Node {
        let span = lines.span_of(&self.location, true);
        let value = match self.value {
            RawValue::Null => Value::Null,
            RawValue::Bool(flag) => Value::Bool(flag),
            RawValue::Int(number) => Value::Int(number),
            RawValue::Float(number) => Value::Float(number),
            RawValue::Str(text) => Value::Str(text),
            RawValue::Seq(items) => Value::Seq(
                items
                    .into_iter()
                    .map(|item| item.into_node(lines))
                    .collect(),
            ),
            RawValue::Map(entries) => Value::Map(
                entries
                    .into_iter()
                    .map(|(key, value)| (key.into_node(lines), value.into_node(lines)))
                    .collect(),
            ),
        };
        Node { value, span }
    }
}

impl<'de> Deserialize<'de> for RawNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RawNode, D::Error> {
        let spanned = Spanned::<RawValue>::deserialize(deserializer)?;
        Ok(RawNode {
            value: spanned.value,
            location: spanned.referenced,
        })
    }
}

impl<'de> Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RawValue, D::Error> {
        deserializer.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = RawValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, flag: bool) -> Result<RawValue, E> {
        Ok(RawValue::Bool(flag))
    }

    fn visit_i64<E: de::Error>(self, number: i64) -> Result<RawValue, E> {
        Ok(RawValue::Int(number.into()))
    }

    fn visit_u64<E: de::Error>(self, number: u64) -> Result<RawValue, E> {
        Ok(RawValue::Int(number.into()))
    }

    fn visit_i128<E: de::Error>(self, number: i128) -> Result<RawValue, E> {
        Ok(RawValue::Int(number))
    }

    fn visit_u128<E: de::Error>(self, number: u128) -> Result<RawValue, E> {
        Ok(i128::try_from(number)
            .map(RawValue::Int)
            .unwrap_or(RawValue::Float(number as f64)))
    }

    fn visit_f64<E: de::Error>(self, number: f64) -> Result<RawValue, E> {
        Ok(RawValue::Float(number))
    }

    fn visit_char<E: de::Error>(self, character: char) -> Result<RawValue, E> {
        Ok(RawValue::Str(character.to_string()))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<RawValue, E> {
        Ok(RawValue::Str(text.to_string()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<RawValue, E> {
        Ok(RawValue::Str(text))
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<RawValue, E> {
        Ok(RawValue::Str(String::from_utf8_lossy(bytes).into_owned()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<RawValue, D::Error> {
        deserializer.deserialize_any(RawVisitor)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<RawValue, D::Error> {
        deserializer.deserialize_any(RawVisitor)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<RawValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = access.next_element::<RawNode>()? {
            items.push(item);
        }
        Ok(RawValue::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<RawValue, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = access.next_key::<RawNode>()? {
            let value = access.next_value::<RawNode>()?;
            entries.push((key, value));
        }
        Ok(RawValue::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    std::thread_local! {
        /// Set in a test: no parser thread can start on this thread, as under `ulimit -v`.
        pub(super) static NO_THREADS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    #[test]
    fn a_worker_with_the_parser_stack_parses_when_no_thread_can_start() {
        // `check --jobs 8` under `ulimit -v`: every file whose parser thread could not
        // start was marked FAIL. A worker started with the parser's stack parses itself.
        let parsed = std::thread::scope(|scope| {
            spawn_scoped_with_parser_stack(scope, "worker", || {
                NO_THREADS.set(true);
                parse("name: x\nmain: [{work: 1s}]\n")
            })
            .unwrap_or_else(|error| panic!("{error}"))
            .join()
            .unwrap_or_else(|_| panic!("the worker panicked"))
        });
        assert!(parsed.is_ok(), "{parsed:?}");
    }

    #[test]
    fn a_parser_thread_that_cannot_start_elsewhere_is_said_with_its_fix() {
        NO_THREADS.set(true);
        let error = parse("name: x\n").unwrap_err();
        NO_THREADS.set(false);
        assert!(
            error
                .message
                .starts_with("cannot start the YAML parser's thread"),
            "{error:?}"
        );
        assert!(
            error
                .help
                .as_deref()
                .is_some_and(|help| help.contains("--jobs")),
            "{error:?}"
        );
    }

    fn parse_ok(source: &str) -> Node {
        match parse(source) {
            Ok(node) => node,
            Err(error) => panic!("{source:?} did not parse: {error:?}"),
        }
    }

    fn map_entries(node: &Node) -> &[(Node, Node)] {
        match &node.value {
            Value::Map(entries) => entries,
            other => panic!("not a map: {other:?}"),
        }
    }

    #[test]
    fn keeps_locations_of_keys_and_values() {
        let source = "name: x\nmain:\n  - work: 1.5s\n";
        let root = parse_ok(source);
        let entries = map_entries(&root);
        assert_eq!(
            entries[0].0.span,
            Span {
                offset: 0,
                len: 4,
                line: 1,
                column: 1
            }
        );
        assert_eq!(
            entries[0].1.span,
            Span {
                offset: 6,
                len: 1,
                line: 1,
                column: 7
            }
        );
        let Value::Seq(steps) = &entries[1].1.value else {
            panic!("main is a list")
        };
        let step = map_entries(&steps[0]);
        assert_eq!(step[0].1.as_str(), Some("1.5s"));
        assert_eq!(step[0].1.span.line, 3);
        assert_eq!(step[0].1.span.column, 11);
        assert_eq!(
            &source[step[0].1.span.offset..][..step[0].1.span.len],
            "1.5s"
        );
    }

    #[test]
    fn scalars_follow_yaml_1_2() {
        let root = parse_ok("a: yes\nb: true\nc: 3\nd: 0.5\ne: ~\nf: \"1\"\n");
        let values: Vec<&Value> = map_entries(&root)
            .iter()
            .map(|(_, value)| &value.value)
            .collect();
        assert_eq!(
            values,
            vec![
                &Value::Str("yes".into()),
                &Value::Bool(true),
                &Value::Int(3),
                &Value::Float(0.5),
                &Value::Null,
                &Value::Str("1".into()),
            ]
        );
    }

    #[test]
    fn duplicate_keys_reach_validation() {
        let root = parse_ok("a: 1\na: 2\n");
        assert_eq!(map_entries(&root).len(), 2);
    }

    #[test]
    fn syntax_errors_are_located_with_byte_offsets() {
        let source = "a: [1, 2\nb: 3\n";
        let error = parse(source).unwrap_err();
        assert!(error.message.starts_with("invalid YAML"), "{error:?}");
        assert_eq!((error.span.line, error.span.column), (2, 2));
        assert_eq!(error.span.offset, 10);
    }

    /// Deep flow nesting (`[[[…` or `{a: {a: …`) stops in the YAML parser, before the
    /// budget's depth is reached; it said only "invalid YAML: recursion limit exceeded".
    #[test]
    fn deep_flow_nesting_is_said_as_the_budget_says_it_with_the_fix() {
        for source in [
            format!("a: {}1{}\n", "[".repeat(400), "]".repeat(400)),
            format!("a: {}1{}\n", "{b: ".repeat(400), "}".repeat(400)),
        ] {
            let error = parse(&source).unwrap_err();
            assert_eq!(
                error.message,
                format!("lists and maps nest deeper than {MAX_DEPTH} levels"),
                "{error:?}"
            );
            assert_eq!(error.help, Some(budget_help()));
            assert_eq!(error.span.line, 1, "{error:?}");
        }
    }

    #[test]
    fn alias_bombs_and_deep_nesting_breach_the_budget() {
        let mut bomb = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for (name, previous) in [
            ("b", "a"),
            ("c", "b"),
            ("d", "c"),
            ("e", "d"),
            ("f", "e"),
            ("g", "f"),
        ] {
            let refs = vec![format!("*{previous}"); 9].join(",");
            bomb.push_str(&format!("{name}: &{name} [{refs}]\n"));
        }
        let error = parse(&bomb).unwrap_err();
        assert!(error.message.contains("alias"), "{error:?}");

        let deep = format!("x: {}{}", "[".repeat(100), "]".repeat(100));
        let error = parse(&deep).unwrap_err();
        assert!(error.message.contains("nest deeper"), "{error:?}");
    }

    #[test]
    fn offsets_are_bytes_after_multibyte_text() {
        let source = "name: \"héllo wörld\"\nx: [1, 2\ny: 3\n";
        let error = parse(source).unwrap_err();
        let line_start = source.find("y:").unwrap_or(0);
        assert!(error.span.offset >= line_start - 10, "{error:?}");
        let root = parse_ok("é: ü\nk: v\n");
        let entries = map_entries(&root);
        assert_eq!(entries[1].0.span.offset, "é: ü\n".len());
    }
}
