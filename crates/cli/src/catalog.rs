//! What the teaching commands know without the repository: the rule table of
//! `docs/rules.md` and every scenario under `scenarios/`, both embedded at compile time.
//!
//! This module parses the table and hands out scenarios; it prints nothing. The rule
//! catalog itself (`../shared/spec/rules.md`) is never read: `docs/rules.md` is the
//! project's own page about it, kept in catalog order by `tests/integration/docs.rs`.

use std::path::{Path, PathBuf};

use subsim_rules::gates_table::{self, GateInfo};

/// `docs/rules.md` as it was when the binary was built.
const RULES_MD: &str = include_str!("../../../docs/rules.md");

// `SCENARIOS: &[(&str, &str)]`, written by build.rs.
include!(concat!(env!("OUT_DIR"), "/scenarios.rs"));

/// Where links in `docs/rules.md` point for scenarios.
const LINK_PREFIX: &str = "../scenarios/";

/// One row of the `## Rules by area` tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// `CAP-1`.
    pub id: String,
    /// The area heading the row sits under, e.g. `1. CAP — concurrency cap`.
    pub area: String,
    /// The one-line summary.
    pub summary: String,
    /// `simulated`, `planned (#3)`, …
    pub status: String,
    /// The scenarios the row links, as repository paths (`scenarios/cap/x.yaml`), in order.
    pub scenarios: Vec<String>,
    /// What the "Demonstrated by" cell says besides its links (empty when nothing, or `—`).
    pub note: String,
}

impl Rule {
    /// The version gates that serve this rule, in `Gates` order.
    pub fn gates(&self) -> Vec<&'static GateInfo> {
        gates_table::gates()
            .iter()
            .filter(|gate| gate.serves(&self.id))
            .collect()
    }
}

/// Every rule of the embedded `docs/rules.md`, in catalog order.
pub fn rules() -> Vec<Rule> {
    parse_rules(RULES_MD)
}

/// Parses the `## Rules by area` section of a rules page (public for the tests, which
/// check it against the copy on disk).
pub fn parse_rules(text: &str) -> Vec<Rule> {
    let mut rules = Vec::new();
    let mut inside = false;
    let mut area = String::new();
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            inside = heading.trim() == "Rules by area";
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(heading) = line.strip_prefix("### ") {
            area = heading.trim().to_string();
            continue;
        }
        let Some(cells) = cells(line) else {
            continue;
        };
        if cells.len() != 4 || cells[0] == "ID" || !is_rule_id(&cells[0]) {
            continue;
        }
        let (scenarios, note) = demonstrated_by(&cells[3]);
        rules.push(Rule {
            id: cells[0].clone(),
            area: area.clone(),
            summary: cells[1].clone(),
            status: cells[2].clone(),
            scenarios,
            note,
        });
    }
    rules
}

/// The cells of a table row, or `None` for other lines and separator rows.
fn cells(line: &str) -> Option<Vec<String>> {
    let line = line.trim();
    let inner = line.strip_prefix('|')?.strip_suffix('|')?;
    let cells: Vec<String> = inner
        .split('|')
        .map(|cell| cell.trim().to_string())
        .collect();
    let separator = cells
        .iter()
        .all(|cell| !cell.is_empty() && cell.chars().all(|c| c == '-' || c == ':'));
    (!separator).then_some(cells)
}

/// `AREA-N`.
fn is_rule_id(text: &str) -> bool {
    let Some((area, number)) = text.split_once('-') else {
        return false;
    };
    !area.is_empty()
        && area.chars().all(|c| c.is_ascii_uppercase())
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
}

/// The scenario links of a "Demonstrated by" cell, and the rest of its text: the note
/// after the links (`[a](…), [b](…) — only part`), or the whole cell when it links nothing.
fn demonstrated_by(cell: &str) -> (Vec<String>, String) {
    let mut scenarios = Vec::new();
    let mut rest = cell;
    let mut after_links = cell;
    while let Some(open) = rest.find('[') {
        let Some(middle) = rest[open..].find("](") else {
            break;
        };
        let target_start = open + middle + 2;
        let Some(close) = rest[target_start..].find(')') else {
            break;
        };
        let target = &rest[target_start..target_start + close];
        rest = &rest[target_start + close + 1..];
        if let Some(inside) = target.strip_prefix(LINK_PREFIX) {
            scenarios.push(format!("scenarios/{inside}"));
            after_links = rest;
        }
    }
    let note = if scenarios.is_empty() {
        cell.trim()
    } else {
        after_links
            .trim_start_matches([',', ' '])
            .trim_start_matches('—')
            .trim()
    };
    let note = if note == "—" { "" } else { note };
    (scenarios, note.to_string())
}

/// `docs/decisions.md` as it was when the binary was built.
const DECISIONS_MD: &str = include_str!("../../../docs/decisions.md");

/// An open question of the catalog (`Q-N`): the question, what `docs/rules.md` says of it,
/// the default subsim adopted (`docs/decisions.md`), and the scenarios that show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Question {
    /// `Q-29`.
    pub id: String,
    /// The question.
    pub question: String,
    /// The answer column of `docs/rules.md`.
    pub answer: String,
    /// "What subsim does" in `docs/decisions.md`, when it answers the question.
    pub adopted: Option<String>,
    /// Linked scenarios, as repository paths.
    pub scenarios: Vec<String>,
}

/// A discrepancy between the seeds (`D-N`) and what subsim does about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discrepancy {
    /// `D-9` (a row for `D-2 / D-3` gives one entry per ID).
    pub id: String,
    /// What subsim does.
    pub adopted: String,
}

/// One of the project's own settings (`SET-N`, `docs/decisions.md`): a value subsim chose
/// where the sources give none — neither a rule, an open question nor a discrepancy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// `SET-3`.
    pub id: String,
    /// What it sets.
    pub name: String,
    /// What subsim does.
    pub adopted: String,
}

/// Every project setting of `docs/decisions.md`, in its order.
pub fn settings() -> Vec<Setting> {
    DECISIONS_MD
        .lines()
        .filter_map(cells)
        .filter(|cells| cells.len() == 3 && is_setting_id(&cells[0]))
        .map(|cells| Setting {
            id: cells[0].clone(),
            name: cells[1].clone(),
            adopted: cells[2].clone(),
        })
        .collect()
}

/// `SET-N`.
fn is_setting_id(text: &str) -> bool {
    text.strip_prefix("SET-")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// Every open question, in `docs/rules.md` order.
pub fn questions() -> Vec<Question> {
    parse_questions(RULES_MD, DECISIONS_MD)
}

/// Reads the open-questions table of a rules page and the answers of a decisions page.
pub fn parse_questions(rules_md: &str, decisions_md: &str) -> Vec<Question> {
    let adopted: Vec<(String, String)> = decisions_md
        .lines()
        .filter_map(cells)
        .filter(|cells| cells.len() == 4 && is_question_id(&cells[0]))
        .map(|cells| (cells[0].clone(), cells[2].clone()))
        .collect();
    let section = rules_md
        .split("\n## ")
        .find(|part| part.starts_with("Open questions"))
        .unwrap_or("");
    section
        .lines()
        .filter_map(cells)
        .filter(|cells| cells.len() == 4 && is_question_id(&cells[0]))
        .map(|cells| {
            let (scenarios, _) = demonstrated_by(&cells[3]);
            Question {
                adopted: adopted
                    .iter()
                    .find(|(id, _)| *id == cells[0])
                    .map(|(_, text)| text.clone()),
                id: cells[0].clone(),
                question: cells[1].clone(),
                answer: cells[2].clone(),
                scenarios,
            }
        })
        .collect()
}

/// Every discrepancy of `docs/decisions.md`, one entry per ID.
pub fn discrepancies() -> Vec<Discrepancy> {
    DECISIONS_MD
        .lines()
        .filter_map(cells)
        .filter(|cells| cells.len() == 2 && cells[0].starts_with("D-"))
        .flat_map(|cells| {
            cells[0]
                .split('/')
                .map(|id| Discrepancy {
                    id: id.trim().to_string(),
                    adopted: cells[1].clone(),
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `Q-N`.
fn is_question_id(text: &str) -> bool {
    text.strip_prefix("Q-")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// The source of an embedded scenario, by repository path (`scenarios/cap/x.yaml`).
pub fn scenario(path: &str) -> Option<&'static str> {
    SCENARIOS
        .iter()
        .find(|(known, _)| *known == path)
        .map(|(_, source)| *source)
}

/// Every embedded scenario path, sorted.
pub fn scenario_paths() -> impl Iterator<Item = &'static str> {
    SCENARIOS.iter().map(|(path, _)| *path)
}

/// Where relative paths inside an embedded scenario resolve: its folder in the repository
/// the binary was built from (used only if a scenario refers to other files).
pub fn scenario_base_dir(path: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join(path)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_row_of_the_embedded_page() {
        let rules = rules();
        assert!(rules.len() >= 200, "only {} rules parsed", rules.len());
        assert_eq!(rules[0].id, "CAP-1");
        assert_eq!(rules[0].area, "1. CAP — concurrency cap");
        assert!(rules[0]
            .scenarios
            .contains(&"scenarios/cap/fan-out-25-hits-the-cap.yaml".to_string()));
    }

    #[test]
    fn questions_and_discrepancies_are_read_with_their_adopted_answers() {
        let questions = questions();
        let q29 = questions
            .iter()
            .find(|q| q.id == "Q-29")
            .expect("Q-29 is listed");
        assert_eq!(q29.question, "Can a subagent request `fork`?");
        assert!(q29
            .adopted
            .as_deref()
            .unwrap()
            .starts_with("No: only the main conversation forks"));
        assert_eq!(q29.scenarios, ["scenarios/fork/forks-cannot-fork.yaml"]);
        let discrepancies = discrepancies();
        assert!(discrepancies
            .iter()
            .any(|d| d.id == "D-3" && d.adopted.contains("SubagentHandback")));
        assert!(discrepancies.iter().any(|d| d.id == "D-9"));
        // The project's own settings are their own family, never a discrepancy.
        let settings = settings();
        assert!(settings
            .iter()
            .any(|s| s.id == "SET-3" && s.adopted.contains("`2s`")));
        assert!(!discrepancies.iter().any(|d| d.id.starts_with("SET-")));
        assert!(settings.iter().all(|s| s.id.starts_with("SET-")));
    }

    #[test]
    fn notes_are_what_the_cell_says_besides_its_links() {
        let (links, note) = demonstrated_by(
            "[cap/a](../scenarios/cap/a.yaml), [cap/b](../scenarios/cap/b.yaml) — only part",
        );
        assert_eq!(links, ["scenarios/cap/a.yaml", "scenarios/cap/b.yaml"]);
        assert_eq!(note, "only part");
        let (links, note) = demonstrated_by("needs teammates");
        assert!(links.is_empty());
        assert_eq!(note, "needs teammates");
        assert_eq!(demonstrated_by("—").1, "");
    }

    #[test]
    fn every_linked_scenario_is_embedded() {
        let embedded: Vec<&str> = scenario_paths().collect();
        assert!(!embedded.is_empty(), "build.rs embedded no scenario");
        let mut sorted = embedded.clone();
        sorted.sort_unstable();
        assert_eq!(embedded, sorted, "the table is sorted by path");
        for rule in rules() {
            for path in &rule.scenarios {
                assert!(
                    scenario(path).is_some(),
                    "{} links {path}, which is not embedded",
                    rule.id
                );
            }
        }
    }
}
