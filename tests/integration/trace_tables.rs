//! The trace section of `docs/scenario-format.md` agrees with the engine's tables: it has
//! one `### `kind`` heading for every [`EventKind::NAMES`] entry and no other; each kind's
//! section names every field [`fields_of_kind`] lists for it; every field it marks
//! optional (`field?`) is one of them; and every key of its example JSON lines of that kind is
//! one of them (or `t_us`, `seq`, `kind`, `rule`); and every value of every closed vocabulary
//! ([`vocabularies`]: `outcome`, `reason`, `what`, `change`, …) is named, backticked, in its
//! kind's section. `subsim_engine::event`'s own tests check that the tables agree with what
//! `Event::visit_fields` writes.

use subsim_engine::event::{fields_of_kind, vocabularies, EventKind};
use subsim_tests::repo_root;

/// Every event carries these.
const COMMON: [&str; 4] = ["t_us", "seq", "kind", "rule"];

/// `(kind, section text)` for each `### `kind`` heading of the trace section.
fn kind_sections(doc: &str) -> Vec<(String, String)> {
    let start = doc
        .find("## The trace (JSON Lines)")
        .expect("docs/scenario-format.md has a trace section");
    let end = doc[start + 3..]
        .find("\n## ")
        .map_or(doc.len(), |at| start + 3 + at);
    let mut sections: Vec<(String, String)> = Vec::new();
    for line in doc[start..end].lines() {
        let heading = line
            .strip_prefix("### `")
            .and_then(|rest| rest.strip_suffix('`'));
        match (heading, sections.last_mut()) {
            (Some(kind), _) => sections.push((kind.to_string(), String::new())),
            (None, Some((_, text))) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, None) => {}
        }
    }
    sections
}

/// The backticked words of `text` outside code blocks: `(word, marked optional)`.
fn backticked(text: &str) -> Vec<(String, bool)> {
    let prose: String = text
        .lines()
        .filter(|line| !line.starts_with('{') && !line.starts_with("```"))
        .collect::<Vec<_>>()
        .join("\n");
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        // `auto_denied?: true` names the field `auto_denied?`.
        .map(|word| word.split(':').next().unwrap_or(word).trim())
        .filter(|word| {
            !word.is_empty()
                && word
                    .trim_end_matches('?')
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_')
        })
        .map(|word| (word.trim_end_matches('?').to_string(), word.ends_with('?')))
        .collect()
}

/// The keys of the section's example JSON lines of `kind` (a section may show lines of
/// other kinds around its own).
fn example_keys(text: &str, kind: &str) -> Vec<String> {
    let mut keys = Vec::new();
    for line in text.lines().filter(|line| line.starts_with("{\"t_us\"")) {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|error| panic!("not JSON ({error}): {line}"));
        if value["kind"] == kind {
            if let Some(object) = value.as_object() {
                keys.extend(object.keys().cloned());
            }
        }
    }
    keys
}

#[test]
fn trace_doc_has_a_section_per_kind_that_names_its_fields() {
    let doc = std::fs::read_to_string(repo_root().join("docs/scenario-format.md"))
        .expect("docs/scenario-format.md reads");
    let sections = kind_sections(&doc);
    let mut problems = Vec::new();
    let headings: Vec<&str> = sections.iter().map(|(kind, _)| kind.as_str()).collect();
    for name in EventKind::NAMES {
        if headings.iter().filter(|kind| **kind == name).count() != 1 {
            problems.push(format!("kind `{name}` has no (or more than one) section"));
        }
    }
    for (kind, text) in &sections {
        let Some(fields) = fields_of_kind(kind) else {
            problems.push(format!(
                "section `{kind}` is not a kind of EventKind::NAMES"
            ));
            continue;
        };
        let words = backticked(text);
        for field in fields {
            if !words.iter().any(|(word, _)| word == field) {
                problems.push(format!(
                    "`{kind}`: field `{field}` is not named in its section"
                ));
            }
        }
        for (word, optional) in &words {
            if *optional && !fields.contains(&word.as_str()) {
                problems.push(format!("`{kind}`: `{word}?` is no field of the kind"));
            }
        }
        for key in example_keys(text, kind) {
            if !fields.contains(&key.as_str()) && !COMMON.contains(&key.as_str()) {
                problems.push(format!(
                    "`{kind}`: an example line has `{key}`, no field of the kind"
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "docs/scenario-format.md and the engine's trace tables disagree:\n{}",
        problems.join("\n")
    );
}

#[test]
fn trace_doc_names_every_value_of_every_closed_vocabulary() {
    let doc = std::fs::read_to_string(repo_root().join("docs/scenario-format.md"))
        .expect("docs/scenario-format.md reads");
    let sections = kind_sections(&doc);
    let mut problems = Vec::new();
    for (kind, field, words) in vocabularies() {
        let Some((_, text)) = sections.iter().find(|(name, _)| name == kind) else {
            problems.push(format!("kind `{kind}` has no section"));
            continue;
        };
        for word in words {
            if !text.contains(&format!("`{word}`")) {
                problems.push(format!("`{kind}`: `{field}` value `{word}` is not named"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "docs/scenario-format.md leaves out values the engine writes:\n{}",
        problems.join("\n")
    );
}

/// The keys of a flat JSON object line, in the order written (serde_json's map sorts them).
fn keys_in_order(line: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut depth = 0usize;
    let mut chars = line.char_indices().peekable();
    let mut expect_key = false;
    while let Some((at, c)) = chars.next() {
        match c {
            '{' | '[' => {
                depth += 1;
                expect_key = c == '{' && depth == 1;
            }
            '}' | ']' => depth = depth.saturating_sub(1),
            ',' => expect_key = depth == 1,
            '"' => {
                let mut end = at + 1;
                while let Some((inner, c)) = chars.next() {
                    end = inner;
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                if expect_key {
                    keys.push(line[at + 1..end].to_string());
                    expect_key = false;
                }
            }
            _ => {}
        }
    }
    keys
}

/// Issue #32 item 8: every example JSON line of the trace section parses, names a kind,
/// and has its keys in the order the writer writes them (`t_us`, `seq`, `kind`, the
/// kind's fields in `fields_of_kind`'s order — `Event::visit_fields`' —, `rule` last),
/// each value of the type the field's other examples and the writer's JSON give it, written
/// as compact JSON (no spaces), as `JsonlWriter` writes.
#[test]
fn the_doc_s_example_json_lines_parse_and_follow_the_writer_s_order() {
    let doc = std::fs::read_to_string(repo_root().join("docs/scenario-format.md"))
        .expect("docs/scenario-format.md reads");
    let mut problems = Vec::new();
    let mut checked = 0;
    for line in doc.lines().filter(|line| line.starts_with("{\"t_us\"")) {
        let value: serde_json::Value = match serde_json::from_str(line) {
            Ok(value) => value,
            Err(error) => {
                problems.push(format!("not JSON ({error}): {line}"));
                continue;
            }
        };
        let Some(kind) = value["kind"].as_str() else {
            problems.push(format!("no `kind`: {line}"));
            continue;
        };
        let Some(fields) = fields_of_kind(kind) else {
            problems.push(format!("unknown kind `{kind}`: {line}"));
            continue;
        };
        let order: Vec<&str> = ["t_us", "seq", "kind"]
            .into_iter()
            .chain(fields.iter().copied())
            .chain(["rule"])
            .collect();
        let keys = keys_in_order(line);
        let positions: Vec<Option<usize>> = keys
            .iter()
            .map(|key| order.iter().position(|field| field == key))
            .collect();
        if positions.iter().any(Option::is_none) || !positions.windows(2).all(|w| w[0] < w[1]) {
            problems.push(format!(
                "`{kind}`: keys {keys:?} are not in the writer's order {order:?}"
            ));
        }
        for key in ["t_us", "seq"] {
            if !value[key].is_u64() {
                problems.push(format!("`{kind}`: `{key}` is not a whole number: {line}"));
            }
        }
        // The writer's form: compact, no space after `:` or `,`.
        let compact = serde_json::to_string(&value).expect("serialises");
        if compact.len() != line.len() {
            problems.push(format!("`{kind}`: not written as compact JSON: {line}"));
        }
        checked += 1;
    }
    assert!(checked >= 50, "only {checked} example lines found");
    assert!(
        problems.is_empty(),
        "docs/scenario-format.md's example lines disagree with the writer:\n{}",
        problems.join("\n")
    );
}
