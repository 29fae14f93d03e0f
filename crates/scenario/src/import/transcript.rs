//! What one transcript file says: its tool calls and their results, completion
//! notifications, versions, and the conversation's start and end, on a time line ordered
//! by the conversation's structure rather than by file order.
//!
//! Timestamps in real files are not monotonic in file order (seen going back by up to
//! 5 s). Each line's time is therefore taken as the later of its own timestamp and its
//! parent's (`parentUuid`), so that a reply never comes before what it replies to, and
//! lines are ordered by that time (then by depth in the conversation, then file order).
//!
//! Memory: each line is reduced, as it is read, to a [`Digest`] of what the scenario
//! needs (a few dozen bytes; a line that says nothing is dropped), so an import holds a
//! small fraction of the transcript, not the parsed file. Every look-up (a call's id, a
//! line's parent, a notification already seen) goes through a map.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};

use super::read::parse_time_ms;
use super::wire::{Content, Detail, Flag, Input, Num, RawLine, Text};

/// The most characters of a tool result's text kept: the importer only looks for short
/// error and denial texts at its start and shows a hundred characters of it.
const MAX_RESULT_TEXT: usize = 4_096;

/// A tool call (`tool_use` block) of the conversation.
#[derive(Clone, Debug)]
pub(crate) struct ToolUse {
    /// The `tool_use` id.
    pub id: String,
    /// The tool's name (`Task`, `Agent`, `Read`, …).
    pub name: String,
    /// The call's input (the fields the importer reads), kept only for the calls whose
    /// input it reads (see [`keeps_input`]).
    input: Option<Box<Input>>,
    /// The assistant message it belongs to: calls of one response share it.
    pub message_id: String,
    /// When it was made (ms since the epoch, structure-ordered).
    pub t_ms: i64,
    /// The 1-based line of the file it was on.
    pub line: usize,
}

impl ToolUse {
    /// An Agent call: a `Task` (before 2.1.63) or `Agent` call, or any call whose input
    /// has `subagent_type`. Without a type it asks for `general-purpose` (SPAWN-3).
    pub fn is_spawn(&self) -> bool {
        matches!(self.name.as_str(), "Task" | "Agent")
            || self.input().subagent_type.as_str().is_some()
    }

    /// The call's input; empty for a call whose input is not kept.
    pub fn input(&self) -> &Input {
        self.input.as_deref().unwrap_or(&EMPTY_INPUT)
    }

    /// A text field of the input.
    pub fn text(&self, key: &str) -> Option<&str> {
        let input = self.input();
        match key {
            "subagent_type" => input.subagent_type.as_str(),
            "description" => input.description.as_str(),
            "prompt" => input.prompt.as_str(),
            "name" => input.name.as_str(),
            "model" => input.model.as_str(),
            "isolation" => input.isolation.as_str(),
            "command" => input.command.as_str(),
            "task_id" => input.task_id.as_str(),
            "agentId" => input.agent_id_camel.as_str(),
            "agent_id" => input.agent_id.as_str(),
            _ => None,
        }
    }
}

/// The input of a call whose input is not kept.
static EMPTY_INPUT: Input = Input {
    subagent_type: Text::Missing,
    description: Text::Missing,
    prompt: Text::Missing,
    name: Text::Missing,
    model: Text::Missing,
    isolation: Text::Missing,
    run_in_background: Flag(None),
    command: Text::Missing,
    block: Flag(None),
    task_id: Text::Missing,
    agent_id_camel: Text::Missing,
    agent_id: Text::Missing,
};

/// Whether the importer reads the input of a call of tool `name`: Agent calls (and any
/// call with a `subagent_type`), waits for an agent, and Bash (its command, under
/// `--keep-text`). Other calls keep their name, id and times only.
fn keeps_input(name: &str, input: &Input) -> bool {
    matches!(
        name,
        "Task" | "Agent" | "TaskOutput" | "AgentOutputTool" | "Bash"
    ) || input.subagent_type != Text::Missing
}

/// A tool result (`tool_result` block) with the line's `toolUseResult`.
#[derive(Clone, Debug)]
pub(crate) struct ToolResult {
    /// When it came back.
    pub t_ms: i64,
    /// Its text (the joined text blocks, or the string content), cut to
    /// [`MAX_RESULT_TEXT`] characters.
    pub text: String,
    /// `is_error`.
    pub is_error: bool,
    /// The 1-based line it came back on.
    pub line: usize,
    /// The line's top-level `toolUseResult`, when it is an object.
    pub detail: Option<Detail>,
}

impl ToolResult {
    /// `toolUseResult.status`.
    pub fn status(&self) -> Option<&str> {
        self.detail
            .as_ref()
            .and_then(|detail| detail.status.as_str())
    }

    /// `toolUseResult.isAsync`.
    pub fn is_async(&self) -> bool {
        self.detail.as_ref().and_then(|detail| detail.is_async.0) == Some(true)
    }

    /// `toolUseResult.agentId`.
    pub fn agent_id(&self) -> Option<&str> {
        self.detail
            .as_ref()
            .and_then(|detail| detail.agent_id.as_str())
    }

    /// `toolUseResult.totalDurationMs` as written.
    pub fn total_duration(&self) -> Num {
        self.detail
            .as_ref()
            .map_or(Num::Missing, |detail| detail.total_duration_ms)
    }
}

/// A background completion notification (`<agent-notification>` or `<task-notification>`).
#[derive(Clone, Debug)]
pub(crate) struct Notice {
    /// When it was enqueued (the completion time).
    pub t_ms: i64,
    /// `agent-id` / `task-id`.
    pub agent_id: Option<String>,
    /// `tool-use-id` (2.1.17+).
    pub tool_use_id: Option<String>,
    /// `completed`, `failed`, `killed`, …
    pub status: String,
    /// `duration_ms` of the `<usage>` block (2.1.37+), as written.
    pub duration_ms: Option<String>,
    /// The 1-based line it was enqueued (or first delivered) on.
    pub line: usize,
}

/// A hash of a subagent's task prompt: how an Agent call finds its subagent's file when
/// the result names no agent id (the prompt itself is not kept).
pub(crate) fn prompt_key(text: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// Everything the importer reads from one transcript file.
#[derive(Clone, Debug, Default)]
pub(crate) struct Conversation {
    /// The file, as its path was given (for reports: `file:line`).
    pub file: String,
    /// `sessionId` of the first line that has one.
    pub session_id: Option<String>,
    /// `agentId` of the first line that has one (subagent files).
    pub agent_id: Option<String>,
    /// The first `entrypoint` (`cli`, `sdk-cli`, `sdk-ts`, …), when lines carry one.
    pub entrypoint: Option<String>,
    /// The first `permissionMode` a line carries, when one does.
    pub permission_mode: Option<String>,
    /// The first `version`, and each later change with its line.
    pub versions: Vec<(usize, String)>,
    /// The first and last structure-ordered times.
    pub start_ms: Option<i64>,
    /// See `start_ms`.
    pub end_ms: Option<i64>,
    /// [`prompt_key`] of the first user message's text (a subagent's task prompt).
    pub first_prompt: Option<u64>,
    /// The first user message is `Warmup` (a 2.0.x warm-up sidechain).
    pub warmup: bool,
    /// The last assistant text (a subagent's report).
    pub last_text: Option<String>,
    /// The first assistant line's `message.model`.
    pub model: Option<String>,
    /// Every tool call, in structure order.
    pub calls: Vec<ToolUse>,
    /// Results by `tool_use` id.
    pub results: HashMap<String, ToolResult>,
    /// Completion notifications, in structure order (the first for an agent wins).
    pub notices: Vec<Notice>,
    /// Line types that were skipped because they are unknown, with their counts.
    pub unknown_types: BTreeMap<String, usize>,
    /// `(structure-ordered time, line)` of every timed line, in time order: where in the
    /// file a moment of the conversation was written (12 bytes a line, less than the
    /// reader's own per-line digest).
    pub line_times: Vec<(i64, u32)>,
    /// The conversation's last word is a text with no tool call waiting for its result:
    /// a subagent whose work was done (its report written).
    pub done: bool,
    /// Lines of the file the reader could not read and skipped (1-based, the first
    /// [`MAX_SKIPPED_KEPT`]), and how many there were in all.
    pub skipped: Vec<usize>,
    /// See `skipped`.
    pub skipped_count: usize,
}

/// How many skipped line numbers a conversation keeps (the count is kept in full).
pub(crate) const MAX_SKIPPED_KEPT: usize = 1_000;

impl Conversation {
    /// The lines after the last one written before `from_ms`, up to the last line with a
    /// time: where a fact of that moment would have been written (a line without a time,
    /// or one the reader skipped, in between could hold it too). `None` when nothing was
    /// written after it.
    pub(crate) fn lines_from(&self, from_ms: i64) -> Option<(usize, usize)> {
        let start = self.line_times.partition_point(|(t, _)| *t < from_ms);
        let after = self.line_times.get(start)?.1 as usize;
        let first = match start.checked_sub(1) {
            Some(before) => (self.line_times[before].1 as usize + 1).min(after),
            None => 1,
        };
        let last = self.line_times.last()?.1 as usize;
        Some((first.min(last), first.max(last)))
    }

    /// Whether a line the reader skipped lies within `lines` (a fact could have been on it).
    pub(crate) fn skipped_within(&self, lines: (usize, usize)) -> bool {
        self.skipped
            .iter()
            .any(|line| (lines.0..=lines.1).contains(line))
            || (self.skipped_count > self.skipped.len()
                && self.skipped.last().is_some_and(|last| *last <= lines.1))
    }
}

/// What kind of line a digest is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    User,
    Assistant,
    /// `queue-operation`, `system`, `progress`: they count for the session's start and end.
    Timed,
    /// Known types that carry nothing the importer reads (`summary`, …).
    Skipped,
}

/// What one line says, reduced to what the scenario needs.
enum Payload {
    None,
    Assistant(Box<AssistantPart>),
    User(Box<UserPart>),
    Notice(Box<Notice>),
}

struct AssistantPart {
    message_id: Option<String>,
    model: Option<String>,
    calls: Vec<(String, String, Input)>,
    text: Option<String>,
}

struct UserPart {
    results: Vec<(String, String, bool)>,
    detail: Option<Detail>,
    notice: Option<Notice>,
    prompt: Option<(u64, bool)>,
}

/// One line, reduced.
struct Digest {
    line: usize,
    kind: Kind,
    uuid: Option<u32>,
    parent: Option<u32>,
    time: Option<i64>,
    payload: Payload,
}

/// Reduces lines as they are read (see the module doc), then orders them.
#[derive(Default)]
pub(crate) struct Collector {
    digests: Vec<Digest>,
    /// Every `uuid` / `parentUuid` seen, as a small number.
    ids: HashMap<String, u32>,
    conv: Conversation,
}

impl Collector {
    fn intern(&mut self, text: Option<String>) -> Option<u32> {
        let text = text?;
        let next = u32::try_from(self.ids.len()).ok()?;
        Some(*self.ids.entry(text).or_insert(next))
    }

    /// Takes one line (an object of the file) at 1-based `line`.
    pub(crate) fn push(&mut self, line: usize, raw: RawLine) {
        let conv = &mut self.conv;
        if conv.session_id.is_none() {
            conv.session_id = raw.session_id.as_str().map(str::to_string);
        }
        if conv.agent_id.is_none() {
            conv.agent_id = raw.agent_id.as_str().map(str::to_string);
        }
        if conv.entrypoint.is_none() {
            conv.entrypoint = raw.entrypoint.as_str().map(str::to_string);
        }
        if conv.permission_mode.is_none() {
            conv.permission_mode = raw.permission_mode.as_str().map(str::to_string);
        }
        if let Some(version) = raw.version.as_str() {
            if conv.versions.last().map(|(_, v)| v.as_str()) != Some(version) {
                conv.versions.push((line, version.to_string()));
            }
        }
        let kind_text = raw.kind.as_str().unwrap_or("");
        let kind = match kind_text {
            "user" => Kind::User,
            "assistant" => Kind::Assistant,
            "queue-operation" | "system" | "progress" => Kind::Timed,
            "summary"
            | "file-history-snapshot"
            | "attachment"
            | "permission-mode"
            | "last-prompt" => Kind::Skipped,
            other => {
                *conv.unknown_types.entry(other.to_string()).or_default() += 1;
                Kind::Skipped
            }
        };
        let time = raw.timestamp.as_str().and_then(parse_time_ms);
        let payload = match kind {
            Kind::Assistant => assistant_part(raw.message.0),
            Kind::User => user_part(raw.message.0.map(|m| m.content), raw.tool_use_result.0),
            Kind::Timed if raw.operation.as_str() == Some("enqueue") => {
                notice(&raw.content.text(), 0)
                    .map_or(Payload::None, |found| Payload::Notice(Box::new(found)))
            }
            Kind::Timed | Kind::Skipped => Payload::None,
        };
        let uuid = self.intern(raw.uuid.into_string());
        let parent = self.intern(raw.parent_uuid.into_string());
        if uuid.is_none() && parent.is_none() && time.is_none() && matches!(payload, Payload::None)
        {
            return; // says nothing the scenario needs, and no other line can point at it
        }
        self.digests.push(Digest {
            line,
            kind,
            uuid,
            parent,
            time,
            payload,
        });
    }

    /// The conversation: lines in structure order, read into calls, results, notices.
    pub(crate) fn finish(self) -> Conversation {
        let Collector {
            mut digests,
            ids,
            mut conv,
        } = self;
        let times = ordered_times(&digests, ids.len());
        drop(ids);
        let mut order: Vec<usize> = (0..digests.len()).collect();
        order.sort_by_key(|&index| (times[index].0, times[index].1, index));
        let mut seen_calls: HashSet<String> = HashSet::new();
        let mut seen_notices: HashSet<(bool, String)> = HashSet::new();
        for index in order {
            let digest = &mut digests[index];
            let t_ms = times[index].0;
            if digest.kind == Kind::Skipped {
                continue;
            }
            if t_ms != i64::MIN {
                conv.start_ms = Some(conv.start_ms.map_or(t_ms, |start| start.min(t_ms)));
                conv.end_ms = Some(conv.end_ms.map_or(t_ms, |end| end.max(t_ms)));
                conv.line_times
                    .push((t_ms, u32::try_from(digest.line).unwrap_or(u32::MAX)));
            }
            let line = digest.line;
            match std::mem::replace(&mut digest.payload, Payload::None) {
                Payload::None => {}
                Payload::Assistant(part) => {
                    conv.done = part.calls.is_empty() && part.text.is_some()
                        || conv.done && part.calls.is_empty();
                    read_assistant(&mut conv, &mut seen_calls, *part, line, t_ms);
                }
                Payload::User(part) => {
                    let UserPart {
                        results,
                        detail,
                        notice,
                        prompt,
                    } = *part;
                    if !results.is_empty() || prompt.is_some() {
                        conv.done = false;
                    }
                    for (id, text, is_error) in results {
                        conv.results.entry(id).or_insert(ToolResult {
                            t_ms,
                            text,
                            is_error,
                            line,
                            detail: detail.clone(),
                        });
                    }
                    if let Some(found) = notice {
                        add_notice(&mut conv, &mut seen_notices, found, t_ms, line);
                    } else if let Some((key, warmup)) = prompt {
                        if conv.first_prompt.is_none() {
                            conv.first_prompt = Some(key);
                            conv.warmup = warmup;
                        }
                    }
                }
                Payload::Notice(found) => {
                    add_notice(&mut conv, &mut seen_notices, *found, t_ms, line);
                }
            }
        }
        conv
    }
}

/// Structure-ordered times: each line's time is max(own timestamp, parent's time), with
/// its depth in the conversation.
fn ordered_times(digests: &[Digest], ids: usize) -> Vec<(i64, usize)> {
    // The first line with each uuid.
    let mut index_of: Vec<Option<usize>> = vec![None; ids];
    for (index, digest) in digests.iter().enumerate() {
        if let Some(uuid) = digest.uuid {
            let slot = &mut index_of[uuid as usize];
            if slot.is_none() {
                *slot = Some(index);
            }
        }
    }
    let parent_of = |index: usize| -> Option<usize> {
        let parent = digests[index].parent?;
        index_of[parent as usize].filter(|&p| p != index)
    };
    // (time, depth) per line; computed iteratively along parent chains (chains can be
    // thousands of lines long, and a malformed file may even hold a cycle).
    let mut memo: Vec<Option<(i64, usize)>> = vec![None; digests.len()];
    let mut previous_time = i64::MIN;
    let mut chain = Vec::new();
    let mut on_chain = HashSet::new();
    for start in 0..digests.len() {
        if memo[start].is_some() {
            continue;
        }
        chain.clear();
        on_chain.clear();
        chain.push(start);
        on_chain.insert(start);
        let mut base: Option<(i64, usize)> = None;
        while let Some(parent) = parent_of(*chain.last().unwrap_or(&start)) {
            if let Some(known) = memo[parent] {
                base = Some(known);
                break;
            }
            if !on_chain.insert(parent) {
                break; // a cycle: treat the rest as a root
            }
            chain.push(parent);
        }
        let (mut time, mut depth) = match base {
            Some((time, depth)) => (time, depth + 1),
            None => (i64::MIN, 0),
        };
        for &index in chain.iter().rev() {
            let stamp = digests[index].time.unwrap_or(time.max(previous_time));
            time = time.max(stamp);
            memo[index] = Some((time, depth));
            depth += 1;
        }
        previous_time = previous_time.max(memo[start].map_or(i64::MIN, |(t, _)| t));
    }
    memo.into_iter()
        .map(|known| known.unwrap_or((i64::MIN, 0)))
        .collect()
}

/// The text between `<tag>` and `</tag>`.
fn tag<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&close)? + start;
    Some(text[start..end].trim())
}

/// A `<task-notification>` / `<agent-notification>` in `text`, if there is one.
fn notice(text: &str, t_ms: i64) -> Option<Notice> {
    let body = tag(text, "task-notification").or_else(|| tag(text, "agent-notification"))?;
    // The whole token after `duration_ms`, so that `1e308` or `-5` is seen as written
    // (and refused by the importer), not read as its leading digits.
    let duration_ms = tag(body, "usage").and_then(|usage| {
        let at = usage.find("duration_ms")? + "duration_ms".len();
        let token: String = usage[at..]
            .trim_start_matches([':', ' ', '='])
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '<' && *c != ',')
            .take(64)
            .collect();
        (!token.is_empty()).then_some(token)
    });
    Some(Notice {
        t_ms,
        agent_id: tag(body, "task-id")
            .or_else(|| tag(body, "agent-id"))
            .map(str::to_string),
        tool_use_id: tag(body, "tool-use-id").map(str::to_string),
        status: tag(body, "status").unwrap_or("completed").to_string(),
        duration_ms,
        line: 0,
    })
}

/// The first [`MAX_RESULT_TEXT`] characters of `text`.
fn cut(mut text: String) -> String {
    if let Some((at, _)) = text.char_indices().nth(MAX_RESULT_TEXT) {
        text.truncate(at);
    }
    text
}

fn assistant_part(message: Option<super::wire::Message>) -> Payload {
    let Some(message) = message else {
        return Payload::None;
    };
    let model = message
        .model
        .into_string()
        .filter(|model| !model.starts_with('<')); // `<synthetic>`
    let mut part = AssistantPart {
        message_id: message.id.into_string(),
        model,
        calls: Vec::new(),
        text: None,
    };
    if let Content::Blocks(blocks) = message.content {
        for block in blocks {
            match block.kind.as_str() {
                Some("tool_use") => {
                    if let (Some(id), Some(name)) =
                        (block.id.into_string(), block.name.into_string())
                    {
                        part.calls
                            .push((id, name, block.input.0.unwrap_or_default()));
                    }
                }
                Some("text") => {
                    if let Some(text) = block.text.into_string() {
                        if !text.trim().is_empty() {
                            part.text = Some(text);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    Payload::Assistant(Box::new(part))
}

fn user_part(content: Option<Content>, detail: Option<Detail>) -> Payload {
    let mut part = UserPart {
        results: Vec::new(),
        detail,
        notice: None,
        prompt: None,
    };
    let text = match content {
        None | Some(Content::None) => return Payload::None,
        Some(Content::Str(text)) => text,
        Some(Content::Blocks(blocks)) => {
            let mut plain = Vec::new();
            for block in blocks {
                match block.kind.as_str() {
                    Some("tool_result") => {
                        let Some(id) = block.tool_use_id.into_string() else {
                            continue;
                        };
                        let text = cut(block.content.text());
                        part.results
                            .push((id, text, block.is_error.0.unwrap_or(false)));
                    }
                    Some("text") => plain.extend(block.text.into_string()),
                    _ => {}
                }
            }
            plain.join("\n")
        }
    };
    if let Some(found) = notice(&text, 0) {
        part.notice = Some(found);
    } else if !text.is_empty() {
        part.prompt = Some((prompt_key(&text), text.trim() == "Warmup"));
    }
    Payload::User(Box::new(part))
}

fn add_notice(
    conv: &mut Conversation,
    seen: &mut HashSet<(bool, String)>,
    mut found: Notice,
    t_ms: i64,
    line: usize,
) {
    // The enqueue time is the completion time; the same notification repeated later as a
    // user line (2.1.17+) is a delivery, not a second completion.
    let by_agent = found.agent_id.clone().map(|id| (true, id));
    let by_call = found.tool_use_id.clone().map(|id| (false, id));
    let known = by_agent
        .iter()
        .chain(&by_call)
        .any(|key| seen.contains(key));
    if known {
        return;
    }
    seen.extend(by_agent);
    seen.extend(by_call);
    found.t_ms = t_ms;
    found.line = line;
    conv.notices.push(found);
}

fn read_assistant(
    conv: &mut Conversation,
    seen: &mut HashSet<String>,
    part: AssistantPart,
    line: usize,
    t_ms: i64,
) {
    if conv.model.is_none() {
        conv.model = part.model;
    }
    let message_id = part.message_id.unwrap_or_else(|| format!("line-{line}"));
    for (id, name, input) in part.calls {
        if !seen.insert(id.clone()) {
            continue; // a line written twice
        }
        conv.calls.push(ToolUse {
            id,
            input: keeps_input(&name, &input).then(|| Box::new(input)),
            name,
            message_id: message_id.clone(),
            t_ms,
            line,
        });
    }
    if part.text.is_some() {
        conv.last_text = part.text;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::read::{parse_entries, Strictness, MAX_TRANSCRIPT_BYTES};

    fn read(text: &str) -> Conversation {
        let mut warnings = Vec::new();
        let mut collector = Collector::default();
        parse_entries(
            &mut text.as_bytes(),
            MAX_TRANSCRIPT_BYTES,
            "t.jsonl",
            Strictness::Main,
            &mut warnings,
            &mut Default::default(),
            &mut |line, raw| collector.push(line, raw),
        )
        .unwrap_or_else(|error| panic!("{error}"));
        collector.finish()
    }

    /// Issue #34: a subagent whose last word is its report has done its work; one whose
    /// last call never came back has not (a run still working when its file ends).
    #[test]
    fn a_run_is_done_only_when_its_report_comes_last() {
        let call = r#"{"type":"assistant","uuid":"a","parentUuid":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]}}"#;
        let result = r#"{"type":"user","uuid":"b","parentUuid":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}}"#;
        let report = r#"{"type":"assistant","uuid":"c","parentUuid":"b","timestamp":"2026-01-01T00:00:03.000Z","message":{"id":"m2","content":[{"type":"text","text":"Done."}]}}"#;
        assert!(read(&format!("{call}\n{result}\n{report}\n")).done);
        assert!(!read(&format!("{call}\n{result}\n")).done);
        assert!(!read(&format!("{call}\n")).done);
    }

    /// Issue #34: where a fact of a moment should have been written: the lines after the
    /// last one written before it, up to the last line with a time.
    #[test]
    fn the_lines_of_a_moment_start_after_the_last_line_before_it() {
        let line = |uuid: &str, parent: &str, second: u32| {
            format!(
                r#"{{"type":"user","uuid":"{uuid}","parentUuid":{parent},"timestamp":"2026-01-01T00:00:{second:02}.000Z","message":{{"content":"hello"}}}}"#
            )
        };
        let conv = read(&format!(
            "{}\n{}\n{}\n{}\n",
            line("a", "null", 1),
            line("b", "\"a\"", 5),
            line("c", "\"b\"", 9),
            line("d", "\"c\"", 12)
        ));
        let at = |second: i64| conv.start_ms.unwrap_or(0) + (second - 1) * 1_000;
        assert_eq!(conv.lines_from(at(6)), Some((3, 4)));
        assert_eq!(conv.lines_from(at(5)), Some((2, 4)));
        assert_eq!(conv.lines_from(at(13)), None);
        assert!(!conv.skipped_within((3, 4)));
    }

    #[test]
    fn a_reply_stamped_before_its_parent_is_ordered_after_it() {
        // The result's timestamp goes back 3 s; structure puts it after the call.
        let conv = read(concat!(
            r#"{"type":"assistant","uuid":"a","parentUuid":null,"timestamp":"2026-01-01T00:00:10.000Z","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]}}"#,
            "\n",
            r#"{"type":"user","uuid":"b","parentUuid":"a","timestamp":"2026-01-01T00:00:07.000Z","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}}"#,
            "\n"
        ));
        let call = &conv.calls[0];
        let result = &conv.results["t1"];
        assert_eq!(result.t_ms, call.t_ms);
        assert_eq!(conv.end_ms, conv.start_ms);
    }

    #[test]
    fn file_order_does_not_decide_the_order() {
        // The child line comes first in the file.
        let conv = read(concat!(
            r#"{"type":"assistant","uuid":"b","parentUuid":"a","timestamp":"2026-01-01T00:00:05.000Z","message":{"id":"m2","content":[{"type":"tool_use","id":"t2","name":"Grep","input":{}}]}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"a","parentUuid":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]}}"#,
            "\n"
        ));
        let names: Vec<&str> = conv.calls.iter().map(|call| call.name.as_str()).collect();
        assert_eq!(names, ["Read", "Grep"]);
    }

    #[test]
    fn notifications_of_both_generations_are_read() {
        let conv = read(concat!(
            r#"{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T00:01:00.000Z","content":"<agent-notification>\n<agent-id>abc</agent-id>\n<status>completed</status>\n</agent-notification>"}"#,
            "\n",
            r#"{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T00:02:00.000Z","content":"<task-notification>\n<task-id>def</task-id>\n<tool-use-id>toolu_9</tool-use-id>\n<status>failed</status>\n<usage>total_tokens: 10\ntool_uses: 2\nduration_ms: 4321</usage>\n</task-notification>"}"#,
            "\n",
            r#"{"type":"user","timestamp":"2026-01-01T00:03:00.000Z","message":{"content":"<task-notification>\n<task-id>def</task-id>\n<status>failed</status>\n</task-notification>"}}"#,
            "\n"
        ));
        assert_eq!(
            conv.notices.len(),
            2,
            "the repeated delivery is not a second completion"
        );
        assert_eq!(conv.notices[0].agent_id.as_deref(), Some("abc"));
        assert_eq!(conv.notices[1].status, "failed");
        assert_eq!(conv.notices[1].duration_ms.as_deref(), Some("4321"));
        assert_eq!(conv.notices[1].tool_use_id.as_deref(), Some("toolu_9"));
    }

    #[test]
    fn unknown_line_types_are_counted_and_skipped() {
        let conv =
            read("{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\n{\"type\":\"hologram\"}\n");
        assert_eq!(conv.unknown_types.get("hologram"), Some(&1));
        assert_eq!(conv.first_prompt, Some(prompt_key("hi")));
    }
}
