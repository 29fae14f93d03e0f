//! What one transcript file says: its tool calls and their results, completion
//! notifications, versions, and the conversation's start and end, on a time line ordered
//! by the conversation's structure rather than by file order.
//!
//! Timestamps in real files are not monotonic in file order (seen going back by up to
//! 5 s). Each line's time is therefore taken as the later of its own timestamp and its
//! parent's (`parentUuid`), so that a reply never comes before what it replies to, and
//! lines are ordered by that time (then by depth in the conversation, then file order).

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::read::{parse_time_ms, Entry};

/// A tool call (`tool_use` block) of the conversation.
#[derive(Clone, Debug)]
pub(crate) struct ToolUse {
    /// The `tool_use` id.
    pub id: String,
    /// The tool's name (`Task`, `Agent`, `Read`, …).
    pub name: String,
    /// The call's input.
    pub input: Value,
    /// The assistant message it belongs to: calls of one response share it.
    pub message_id: String,
    /// When it was made (ms since the epoch, structure-ordered).
    pub t_ms: i64,
}

impl ToolUse {
    /// An Agent call: any tool call whose input has `subagent_type` (`Task` before
    /// 2.1.63, `Agent` after).
    pub fn is_spawn(&self) -> bool {
        self.input
            .get("subagent_type")
            .is_some_and(|value| value.is_string())
    }

    /// A text field of the input.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.input.get(key).and_then(Value::as_str)
    }
}

/// A tool result (`tool_result` block) with the line's `toolUseResult`.
#[derive(Clone, Debug)]
pub(crate) struct ToolResult {
    /// When it came back.
    pub t_ms: i64,
    /// Its text (the joined text blocks, or the string content).
    pub text: String,
    /// `is_error`.
    pub is_error: bool,
    /// The line's top-level `toolUseResult`, when it is an object.
    pub detail: Option<Value>,
}

impl ToolResult {
    /// A field of `toolUseResult`.
    pub fn detail(&self, key: &str) -> Option<&Value> {
        self.detail.as_ref().and_then(|detail| detail.get(key))
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
    /// `duration_ms` of the `<usage>` block (2.1.37+).
    pub duration_ms: Option<u64>,
}

/// Everything the importer reads from one transcript file.
#[derive(Clone, Debug, Default)]
pub(crate) struct Conversation {
    /// `sessionId` of the first line that has one.
    pub session_id: Option<String>,
    /// `agentId` of the first line that has one (subagent files).
    pub agent_id: Option<String>,
    /// The first `entrypoint` (`cli`, `sdk-cli`, `sdk-ts`, …), when lines carry one.
    pub entrypoint: Option<String>,
    /// The first `version`, and each later change with its line.
    pub versions: Vec<(usize, String)>,
    /// The first and last structure-ordered times.
    pub start_ms: Option<i64>,
    /// See `start_ms`.
    pub end_ms: Option<i64>,
    /// The first user message's text (a subagent's task prompt; `Warmup` for 2.0.x
    /// warm-up sidechains).
    pub first_prompt: Option<String>,
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
}

/// Structure-ordered times: each line's time is max(own timestamp, parent's time).
fn ordered_times(entries: &[Entry]) -> Vec<(i64, usize)> {
    let mut index_of: HashMap<&str, usize> = HashMap::new();
    for (index, entry) in entries.iter().enumerate() {
        if let Some(uuid) = entry.value.get("uuid").and_then(Value::as_str) {
            index_of.entry(uuid).or_insert(index);
        }
    }
    let parent_of = |index: usize| -> Option<usize> {
        let parent = entries[index].value.get("parentUuid")?.as_str()?;
        index_of.get(parent).copied().filter(|&p| p != index)
    };
    let own = |index: usize| -> Option<i64> {
        entries[index]
            .value
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_time_ms)
    };
    // (time, depth) per line; computed iteratively along parent chains (chains can be
    // thousands of lines long, and a malformed file may even hold a cycle).
    let mut memo: Vec<Option<(i64, usize)>> = vec![None; entries.len()];
    let mut previous_time = i64::MIN;
    for start in 0..entries.len() {
        if memo[start].is_some() {
            continue;
        }
        let mut chain = vec![start];
        let mut on_chain = std::collections::HashSet::from([start]);
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
            let stamp = own(index).unwrap_or(time.max(previous_time));
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

fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| match block {
                Value::String(text) => Some(text.as_str()),
                _ => block.get("text").and_then(Value::as_str),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
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
    let duration_ms = tag(body, "usage").and_then(|usage| {
        let at = usage.find("duration_ms")? + "duration_ms".len();
        let digits: String = usage[at..]
            .trim_start_matches([':', ' ', '='])
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    });
    Some(Notice {
        t_ms,
        agent_id: tag(body, "task-id")
            .or_else(|| tag(body, "agent-id"))
            .map(str::to_string),
        tool_use_id: tag(body, "tool-use-id").map(str::to_string),
        status: tag(body, "status").unwrap_or("completed").to_string(),
        duration_ms,
    })
}

/// Reads the entries of one file.
pub(crate) fn conversation(entries: &[Entry]) -> Conversation {
    let times = ordered_times(entries);
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&index| (times[index].0, times[index].1, index));
    let mut conv = Conversation::default();
    for index in order {
        let entry = &entries[index];
        let value = &entry.value;
        let t_ms = times[index].0;
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        if conv.session_id.is_none() {
            conv.session_id = value
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        if conv.agent_id.is_none() {
            conv.agent_id = value
                .get("agentId")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        if conv.entrypoint.is_none() {
            conv.entrypoint = value
                .get("entrypoint")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        if let Some(version) = value.get("version").and_then(Value::as_str) {
            if conv.versions.last().map(|(_, v)| v.as_str()) != Some(version) {
                conv.versions.push((entry.line, version.to_string()));
            }
        }
        match kind {
            "user" | "assistant" | "queue-operation" | "system" | "progress" => {}
            "summary"
            | "file-history-snapshot"
            | "attachment"
            | "permission-mode"
            | "last-prompt" => continue,
            other => {
                *conv.unknown_types.entry(other.to_string()).or_default() += 1;
                continue;
            }
        }
        if t_ms != i64::MIN {
            conv.start_ms = Some(conv.start_ms.map_or(t_ms, |start| start.min(t_ms)));
            conv.end_ms = Some(conv.end_ms.map_or(t_ms, |end| end.max(t_ms)));
        }
        match kind {
            "assistant" => read_assistant(&mut conv, entry, t_ms),
            "user" => read_user(&mut conv, entry, t_ms),
            "queue-operation" => {
                let enqueue = value.get("operation").and_then(Value::as_str) == Some("enqueue");
                let text = value.get("content").map(content_text).unwrap_or_default();
                if enqueue {
                    if let Some(found) = notice(&text, t_ms) {
                        add_notice(&mut conv, found);
                    }
                }
            }
            _ => {}
        }
    }
    conv
}

fn add_notice(conv: &mut Conversation, found: Notice) {
    // The enqueue time is the completion time; the same notification repeated later as a
    // user line (2.1.17+) is a delivery, not a second completion.
    let seen = conv.notices.iter().any(|known| {
        (found.agent_id.is_some() && known.agent_id == found.agent_id)
            || (found.tool_use_id.is_some() && known.tool_use_id == found.tool_use_id)
    });
    if !seen {
        conv.notices.push(found);
    }
}

fn read_assistant(conv: &mut Conversation, entry: &Entry, t_ms: i64) {
    let Some(message) = entry.value.get("message") else {
        return;
    };
    if conv.model.is_none() {
        conv.model = message
            .get("model")
            .and_then(Value::as_str)
            .filter(|model| !model.starts_with('<')) // `<synthetic>`
            .map(str::to_string);
    }
    let message_id = message
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            entry
                .value
                .get("uuid")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| format!("line-{}", entry.line));
    let Some(Value::Array(blocks)) = message.get("content") else {
        return;
    };
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("tool_use") => {
                let (Some(id), Some(name)) = (
                    block.get("id").and_then(Value::as_str),
                    block.get("name").and_then(Value::as_str),
                ) else {
                    continue;
                };
                if conv.calls.iter().any(|call| call.id == id) {
                    continue; // a line written twice
                }
                conv.calls.push(ToolUse {
                    id: id.to_string(),
                    name: name.to_string(),
                    input: block.get("input").cloned().unwrap_or(Value::Null),
                    message_id: message_id.clone(),
                    t_ms,
                });
            }
            Some("text") => {
                if let Some(text) = block.get("text").and_then(Value::as_str) {
                    if !text.trim().is_empty() {
                        conv.last_text = Some(text.to_string());
                    }
                }
            }
            _ => {}
        }
    }
}

fn read_user(conv: &mut Conversation, entry: &Entry, t_ms: i64) {
    let Some(content) = entry.value.get("message").and_then(|m| m.get("content")) else {
        return;
    };
    let detail = entry
        .value
        .get("toolUseResult")
        .filter(|detail| detail.is_object())
        .cloned();
    match content {
        Value::String(text) => {
            if let Some(found) = notice(text, t_ms) {
                add_notice(conv, found);
            } else if conv.first_prompt.is_none() {
                conv.first_prompt = Some(text.clone());
            }
        }
        Value::Array(blocks) => {
            let mut plain = Vec::new();
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_result") => {
                        let Some(id) = block.get("tool_use_id").and_then(Value::as_str) else {
                            continue;
                        };
                        let text = block.get("content").map(content_text).unwrap_or_default();
                        let is_error = block
                            .get("is_error")
                            .and_then(Value::as_bool)
                            .unwrap_or(false);
                        conv.results.entry(id.to_string()).or_insert(ToolResult {
                            t_ms,
                            text,
                            is_error,
                            detail: detail.clone(),
                        });
                    }
                    Some("text") => {
                        if let Some(text) = block.get("text").and_then(Value::as_str) {
                            plain.push(text.to_string());
                        }
                    }
                    _ => {}
                }
            }
            let joined = plain.join("\n");
            if let Some(found) = notice(&joined, t_ms) {
                add_notice(conv, found);
            } else if conv.first_prompt.is_none() && !joined.is_empty() {
                conv.first_prompt = Some(joined);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::read::{parse_entries, Strictness};

    fn read(text: &str) -> Conversation {
        let mut warnings = Vec::new();
        let entries = parse_entries(text, "t.jsonl", Strictness::Main, &mut warnings)
            .unwrap_or_else(|error| panic!("{error}"));
        conversation(&entries)
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
        assert_eq!(conv.notices[1].duration_ms, Some(4321));
        assert_eq!(conv.notices[1].tool_use_id.as_deref(), Some("toolu_9"));
    }

    #[test]
    fn unknown_line_types_are_counted_and_skipped() {
        let conv =
            read("{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\n{\"type\":\"hologram\"}\n");
        assert_eq!(conv.unknown_types.get("hologram"), Some(&1));
        assert_eq!(conv.first_prompt.as_deref(), Some("hi"));
    }
}
