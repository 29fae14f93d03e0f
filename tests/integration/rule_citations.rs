//! Rule IDs in the code stay true (issue #22 items 4 and 5):
//! (a) every rule-ID string literal in the workspace's sources (`"CAP-1"`, `"Q-38"`) and
//!     every constant of `subsim_rules::id` names a rule of the catalog (`docs/rules.md`'s
//!     tables; the open questions and discrepancies `docs/rules.md` and
//!     `docs/decisions.md` name; `../shared/spec/rules.md` when it is there), and each
//!     constant's name is its ID (`PERM_9` is `"PERM-9"`);
//! (b) outside `crates/rules` no rule ID is spelt as a literal, and the `id::` constants
//!     appear only in the small list of fixed citations below, each with its reason. Every
//!     decision is the rules crate's: code elsewhere writes the rule its answer names. A
//!     new citation outside the rules crate is a decision made in the wrong place (move it
//!     into `crates/rules`), or a fixed citation to add here with its reason.
//!
//! Comments, doc comments and test code (`#[cfg(test)]` modules, `tests.rs` files) are not
//! looked at.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use subsim_tests::markdown::{cells, is_rule_id};
use subsim_tests::repo_root;

/// Fixed citations outside `crates/rules`, each an `id::` constant: (file, rule ID, how
/// many, why it is not a call into the rules crate).
const ALLOWED: [(&str, &str, usize, &str); 17] = [
    (
        "crates/engine/src/sim/finish.rs",
        "NOTIFY-6",
        1,
        "a launcher that waited for its children (notify::launcher_waits) ends with the last",
    ),
    (
        "crates/engine/src/sim/actions.rs",
        "RESUME-13",
        1,
        "the person's /clear: the event cites the rule it follows; nothing is decided",
    ),
    (
        "crates/engine/src/sim/actions.rs",
        "PANEL-3",
        2,
        "an ignored dismiss of a row not kept or of no agent cites row retention; \
         XAction::dismiss_ignored answers the other cases with its own rule",
    ),
    (
        "crates/engine/src/sim/actions.rs",
        "FGBG-5",
        2,
        "Ctrl+B's events: the person's action, no decision",
    ),
    (
        "crates/engine/src/sim/actions.rs",
        "FORK-9",
        1,
        "plan::subtask answered that the version has no user fork command",
    ),
    (
        "crates/engine/src/sim/actions.rs",
        "RESUME-17",
        1,
        "typing into a running agent's transcript delivers the message; no decision",
    ),
    (
        "crates/engine/src/sim/messaging.rs",
        "RESUME-5",
        1,
        "an agent without a record is unknown: resume::send's refusal, spelled for that case",
    ),
    (
        "crates/engine/src/sim/mod.rs",
        "MAIN-3",
        1,
        "context::main_agent's warning, kept as a session note",
    ),
    (
        "crates/engine/src/sim/mod.rs",
        "MAIN-1",
        1,
        "main's model is the session's model (context::main_agent chose its tools)",
    ),
    (
        "crates/engine/src/render/text/narrate.rs",
        "PERM-9",
        1,
        "the narration words a PERM-9 denial (a `prompt: false` call in dontAsk) apart",
    ),
    (
        "crates/scenario/src/definitions.rs",
        "DEF-6",
        1,
        "a plugin definition's ignored fields: a load note",
    ),
    (
        "crates/scenario/src/definitions.rs",
        "DEF-11",
        1,
        "a definition file's own warning: a load note",
    ),
    (
        "crates/scenario/src/definitions.rs",
        "DEF-10",
        2,
        "a Markdown file that cannot be read or is skipped: a load note",
    ),
    (
        "crates/scenario/src/definitions.rs",
        "DEF-4",
        2,
        "scope::shadowing's DEF-4 answer gets the help to rename (the rule, then the help)",
    ),
    (
        "crates/scenario/src/definitions.rs",
        "DEF-1",
        1,
        "a loaded definition's note cites the scopes",
    ),
    (
        "crates/scenario/src/agents.rs",
        "DEF-10",
        1,
        "a skipped file a scenario names: a load note",
    ),
    (
        "crates/engine/src/event.rs",
        "MODEL-2",
        1,
        "RunProfile::new, a convenience constructor for tests and examples",
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The code of a source file that counts: up to its test module, without comments.
fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .take_while(|line| line.trim() != "#[cfg(test)]")
        .filter(|line| !line.trim_start().starts_with("//"))
}

/// The rule-ID string literals of a line (`"CAP-1"`, `"Q-38"`).
fn literals(line: &str) -> Vec<&str> {
    line.split('"')
        .skip(1)
        .step_by(2)
        .filter(|text| is_rule_id(text))
        .collect()
}

/// The rule IDs a line cites through `subsim_rules::id` constants (`id::PERM_9`).
fn constants(line: &str) -> Vec<&'static str> {
    line.split("id::")
        .skip(1)
        .filter_map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            let found = subsim_rules::id::ALL
                .iter()
                .find(|(known, _)| *known == name);
            found.map(|(_, id)| *id)
        })
        .collect()
}

/// Every rule-ID literal of the code under `crates/*/src`, by file (relative to the root).
fn cited() -> BTreeMap<String, Vec<String>> {
    sources(|line| literals(line).into_iter().map(str::to_string).collect())
}

/// Every rule ID the code under `crates/*/src` cites through an `id::` constant, by file.
fn cited_constants() -> BTreeMap<String, Vec<String>> {
    sources(|line| constants(line).into_iter().map(str::to_string).collect())
}

/// What `find` finds in the code lines of each source file under `crates/*/src`, by file
/// (relative to the root); files where it finds nothing are left out.
fn sources(find: impl Fn(&str) -> Vec<String>) -> BTreeMap<String, Vec<String>> {
    let root = repo_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in files {
        let relative = path
            .strip_prefix(&root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        if !relative.contains("/src/") || relative.ends_with("/tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable source");
        let ids: Vec<String> = code_lines(&text).flat_map(&find).collect();
        if !ids.is_empty() {
            found.insert(relative, ids);
        }
    }
    found
}

/// Rule IDs of `docs/rules.md`'s tables, and of the shared catalog's `**ID**` lines (open
/// questions, discrepancies) when it is there.
fn catalog() -> Vec<String> {
    let root = repo_root();
    let doc = std::fs::read_to_string(root.join("docs/rules.md")).expect("docs/rules.md");
    let mut ids: Vec<String> = doc
        .lines()
        .filter_map(cells)
        .filter_map(|cells| cells.first().cloned())
        .filter(|id| is_rule_id(id))
        .collect();
    // Open questions and discrepancies (`Q-38`, `D-3`), as the rules doc and
    // docs/decisions.md (the adopted answers) name them.
    let decisions = std::fs::read_to_string(root.join("docs/decisions.md")).unwrap_or_default();
    for word in [&doc, &decisions]
        .into_iter()
        .flat_map(|text| text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')))
    {
        if (word.starts_with("Q-") || word.starts_with("D-")) && is_rule_id(word) {
            ids.push(word.to_string());
        }
    }
    if let Ok(shared) = std::fs::read_to_string(root.join("../shared/spec/rules.md")) {
        for line in shared.lines() {
            // `**CAP-1** …` or `**Q-1. The question?**`.
            if let Some(rest) = line.strip_prefix("**") {
                let id = rest.split(['*', '.']).next().unwrap_or_default();
                if is_rule_id(id) {
                    ids.push(id.to_string());
                }
            }
        }
    }
    ids.sort();
    ids.dedup();
    ids
}

#[test]
fn every_rule_id_in_the_code_is_in_the_catalog() {
    let catalog = catalog();
    let mut unknown = Vec::new();
    for (file, ids) in cited() {
        for id in ids {
            if catalog.binary_search(&id).is_err() {
                unknown.push(format!("{file}: \"{id}\""));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "rule IDs the catalog does not have (a typo?):\n  {}",
        unknown.join("\n  ")
    );
}

#[test]
fn every_rule_id_constant_is_in_the_catalog_under_its_own_name() {
    let catalog = catalog();
    for (name, id) in subsim_rules::id::ALL {
        assert_eq!(name.replace('_', "-"), id, "id::{name}");
        assert!(
            catalog.binary_search(&id.to_string()).is_ok(),
            "id::{name} = {id:?} is not in the catalog"
        );
    }
}

#[test]
fn rule_ids_outside_the_rules_crate_are_only_the_listed_citations() {
    let mut problems = Vec::new();
    for (file, ids) in cited() {
        if !file.starts_with("crates/rules/") {
            problems.push(format!(
                "{file}: {ids:?} spelt as literals: cite the rule its answer names, or a \
                 subsim_rules::id constant listed here with why"
            ));
        }
    }
    let cited = cited_constants();
    for (file, ids) in &cited {
        if file.starts_with("crates/rules/") {
            continue;
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for id in ids {
            *counts.entry(id.as_str()).or_default() += 1;
        }
        for (id, count) in counts {
            let allowed = ALLOWED
                .iter()
                .find(|(path, allowed_id, _, _)| path == file && *allowed_id == id)
                .map_or(0, |(_, _, count, _)| *count);
            if count > allowed {
                problems.push(format!(
                    "{file}: {id} {count}× (listed: {allowed}) — decide it in crates/rules \
                     and write the rule its answer names, or list the citation here with why"
                ));
            }
        }
    }
    for (path, id, count, _) in ALLOWED {
        let found = cited
            .get(path)
            .map_or(0, |ids| ids.iter().filter(|cited| *cited == id).count());
        if found < count {
            problems.push(format!(
                "{path}: {id} is listed {count}× but found {found}×: shorten the list"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "rule IDs outside crates/rules:\n  {}",
        problems.join("\n  ")
    );
}
