//! `docs/rules.md` stays honest:
//! (a) it lists every rule ID of the catalog, once each, in catalog order;
//! (b) every rule marked `simulated` links at least one scenario, and every scenario it
//!     links exists and cites the rule ID;
//! (c) every scenario under `scenarios/` is linked from the page at least once;
//! (d) the status counts at the top match the table;
//! (e) docs/scenario-format.md names every context piece the trace can write.
//!
//! The catalog lives beside the repository (`<repo>/../shared/spec/rules.md`, also in CI);
//! when it is absent, check (a) is skipped with a note and the others still run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use subsim_tests::markdown::{cells, is_rule_id, links, scenario_path};
use subsim_tests::{repo_root, scenario_files};

/// The statuses a rule may have, in the order the counts table lists them.
const STATUSES: [&str; 5] = [
    "simulated",
    "simulated (unit-tested)",
    "planned (#3)",
    "planned (#4)",
    "not observable",
];

/// Where scenario links point from `docs/`.
const SCENARIO_LINK_PREFIX: &str = "../scenarios/";

/// One row of the rules table.
struct Row {
    line: usize,
    id: String,
    status: String,
    demonstrated_by: String,
}

fn rules_doc_path() -> PathBuf {
    repo_root().join("docs/rules.md")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}

/// The lines of the section under `## {heading}` (up to the next `## `), with their
/// 1-based line numbers.
fn section<'t>(text: &'t str, heading: &str) -> Vec<(usize, &'t str)> {
    let wanted = format!("## {heading}");
    let mut inside = false;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.starts_with("## ") {
            if inside {
                break;
            }
            inside = line.trim_end() == wanted;
            continue;
        }
        if inside {
            lines.push((index + 1, line));
        }
    }
    assert!(
        !lines.is_empty(),
        "docs/rules.md has no `{wanted}` section (or it is empty)"
    );
    lines
}

/// The rows of the `## Rules by area` tables; malformed rows are reported in `problems`.
fn rule_rows(text: &str, problems: &mut Vec<String>) -> Vec<Row> {
    let mut rows = Vec::new();
    for (line, content) in section(text, "Rules by area") {
        let Some(cells) = cells(content) else {
            continue;
        };
        if cells[0] == "ID" {
            continue; // a header row
        }
        if cells.len() != 4 {
            problems.push(format!(
                "docs/rules.md:{line}: a rules table row needs 4 cells (ID | summary | status | \
                 demonstrated by), found {} — is there a `|` inside a cell?",
                cells.len()
            ));
            continue;
        }
        if !is_rule_id(&cells[0]) {
            problems.push(format!(
                "docs/rules.md:{line}: `{}` is not a rule ID",
                cells[0]
            ));
            continue;
        }
        rows.push(Row {
            line,
            id: cells[0].clone(),
            status: cells[2].clone(),
            demonstrated_by: cells[3].clone(),
        });
    }
    rows
}

/// Does `text` cite `id` (so that `CAP-1` is not found inside `CAP-10` or `XCAP-1`)?
fn cites(text: &str, id: &str) -> bool {
    text.match_indices(id).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + id.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
            && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

/// Rule IDs of the catalog: lines that start with `**ID**`.
fn catalog_ids(catalog: &str) -> Vec<String> {
    catalog
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("**")?;
            let end = rest.find("**")?;
            let id = &rest[..end];
            is_rule_id(id).then(|| id.to_string())
        })
        .collect()
}

fn fail_if_any(problems: &[String], what: &str) {
    assert!(
        problems.is_empty(),
        "{what}: {} problem(s) in docs/rules.md:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}

#[test]
fn rules_doc_lists_every_catalog_rule_in_order() {
    let catalog_path = repo_root().join("../shared/spec/rules.md");
    if !catalog_path.exists() {
        eprintln!(
            "note: {} is absent; skipping the check that docs/rules.md lists every catalog rule",
            catalog_path.display()
        );
        return;
    }
    let catalog = catalog_ids(&read(&catalog_path));
    assert!(
        !catalog.is_empty(),
        "found no `**ID**` rule lines in {}",
        catalog_path.display()
    );
    let mut problems = Vec::new();
    let rows = rule_rows(&read(&rules_doc_path()), &mut problems);
    let listed: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
    for id in &catalog {
        if !listed.contains(&id.as_str()) {
            problems.push(format!("{id} is in the catalog but has no row"));
        }
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for row in &rows {
        if !catalog.contains(&row.id) {
            problems.push(format!(
                "docs/rules.md:{}: {} is not a rule of the catalog",
                row.line, row.id
            ));
        }
        if let Some(first) = seen.insert(&row.id, row.line) {
            problems.push(format!(
                "docs/rules.md:{}: {} is listed twice (first at line {first})",
                row.line, row.id
            ));
        }
    }
    if problems.is_empty() && listed != catalog {
        let (index, (got, want)) = listed
            .iter()
            .zip(&catalog)
            .enumerate()
            .find(|(_, (got, want))| **got != want.as_str())
            .expect("same rules in a different order differ somewhere");
        problems.push(format!(
            "row {} is {got} but the catalog's rule number {} is {want}: keep catalog order",
            index + 1,
            index + 1
        ));
    }
    fail_if_any(&problems, "the rules table does not match the catalog");
}

#[test]
fn simulated_rules_link_scenarios_that_cite_them() {
    let mut problems = Vec::new();
    let rows = rule_rows(&read(&rules_doc_path()), &mut problems);
    assert!(!rows.is_empty(), "docs/rules.md has no rule rows");
    for row in &rows {
        let at = format!("docs/rules.md:{} ({})", row.line, row.id);
        if !STATUSES.contains(&row.status.as_str()) {
            problems.push(format!(
                "{at}: unknown status `{}`; use one of {STATUSES:?}",
                row.status
            ));
            continue;
        }
        let links = scenario_links(&row.demonstrated_by);
        if row.status == "simulated" && links.is_empty() {
            problems.push(format!(
                "{at}: marked `simulated` but links no scenario file"
            ));
        }
        if row.status != "simulated" && !links.is_empty() {
            problems.push(format!(
                "{at}: links scenarios but is marked `{}`; a rule a scenario demonstrates is \
                 `simulated`",
                row.status
            ));
        }
        if row.status == "not observable" && matches!(row.demonstrated_by.as_str(), "" | "—" | "-")
        {
            problems.push(format!("{at}: marked `not observable` without a reason"));
        }
        for link in links {
            let Some(path) = scenario_path(&link) else {
                problems.push(format!(
                    "{at}: link `{link}` should start with `{SCENARIO_LINK_PREFIX}`"
                ));
                continue;
            };
            match std::fs::read_to_string(&path) {
                Err(_) => problems.push(format!("{at}: links `{link}`, which does not exist")),
                Ok(text) if !cites(&text, &row.id) => problems.push(format!(
                    "{at}: links `{link}`, whose text never cites {}",
                    row.id
                )),
                Ok(_) => {}
            }
        }
    }
    fail_if_any(&problems, "rule rows and their scenarios disagree");
}

#[test]
fn every_scenario_is_linked_from_the_rules_doc() {
    let text = read(&rules_doc_path());
    let mut problems = Vec::new();
    let mut linked = Vec::new();
    for link in scenario_links(&text) {
        match scenario_path(&link) {
            Some(path) if path.exists() => linked.push(path),
            Some(_) => problems.push(format!("links `{link}`, which does not exist")),
            None => problems.push(format!(
                "link `{link}` should start with `{SCENARIO_LINK_PREFIX}`"
            )),
        }
    }
    let scenarios = scenario_files(&repo_root().join("scenarios"));
    assert!(
        !scenarios.is_empty(),
        "found no scenario files under scenarios/"
    );
    for scenario in &scenarios {
        if !linked.contains(scenario) {
            let shown = scenario.strip_prefix(repo_root()).unwrap_or(scenario);
            problems.push(format!(
                "{} is not linked: add it to the row of a rule it cites (or to the open \
                 questions table)",
                shown.display()
            ));
        }
    }
    fail_if_any(&problems, "scenario links are incomplete");
}

#[test]
fn status_counts_match_the_table() {
    let text = read(&rules_doc_path());
    let mut problems = Vec::new();
    let rows = rule_rows(&text, &mut problems);
    let mut stated: BTreeMap<String, (usize, u64)> = BTreeMap::new();
    for (line, content) in section(&text, "Status counts") {
        let Some(cells) = cells(content) else {
            continue;
        };
        if cells.len() != 2 || cells[0] == "status" {
            continue;
        }
        match cells[1].parse::<u64>() {
            Ok(count) => {
                stated.insert(cells[0].clone(), (line, count));
            }
            Err(_) => problems.push(format!(
                "docs/rules.md:{line}: `{}` is not a count",
                cells[1]
            )),
        }
    }
    let mut actual: BTreeMap<&str, u64> = BTreeMap::new();
    for row in &rows {
        *actual.entry(row.status.as_str()).or_default() += 1;
    }
    for status in STATUSES.iter().copied().chain(["total"]) {
        let counted = if status == "total" {
            rows.len() as u64
        } else {
            actual.get(status).copied().unwrap_or(0)
        };
        match stated.get(status) {
            None => problems.push(format!(
                "the status counts table has no `{status}` row (the table has {counted})"
            )),
            Some((line, count)) if *count != counted => problems.push(format!(
                "docs/rules.md:{line}: says {count} `{status}`, the table has {counted}"
            )),
            Some(_) => {}
        }
    }
    for name in stated.keys() {
        if name != "total" && !STATUSES.contains(&name.as_str()) {
            problems.push(format!(
                "the status counts table has an unknown status `{name}`"
            ));
        }
    }
    fail_if_any(&problems, "the status counts are stale");
}

#[test]
fn citing_is_exact() {
    assert!(cites("CAP-1: the cap", "CAP-1"));
    assert!(cites("rule: CAP-1}", "CAP-1"));
    assert!(!cites("CAP-10 only", "CAP-1"));
    assert!(!cites("XCAP-1", "CAP-1"));
    assert!(cites("(CAP-7, RESUME-9)", "RESUME-9"));
    assert_eq!(
        catalog_ids("**CAP-1** — x\n**Q-1. Do …**\n**D-1. `TaskOutput`**\ntext **CAP-2**\n"),
        vec!["CAP-1"]
    );
}

/// The targets of every link in `text` that points into `scenarios/` (well-formed or not,
/// so that a malformed one is reported).
fn scenario_links(text: &str) -> Vec<String> {
    links(text)
        .into_iter()
        .filter(|target| target.starts_with(SCENARIO_LINK_PREFIX) || target.contains("scenarios/"))
        .collect()
}

/// The text of docs/scenario-format.md's `### {heading}` section (up to the next heading),
/// each paragraph on one line.
fn format_doc_section(heading: &str) -> String {
    let text = read(&repo_root().join("docs/scenario-format.md"));
    let start = text
        .find(&format!("\n### {heading}\n"))
        .unwrap_or_else(|| panic!("docs/scenario-format.md has no `### {heading}` section"));
    let body = &text[start + heading.len() + 6..];
    let end = body.find("\n#").unwrap_or(body.len());
    // A name may be wrapped across lines: lines are joined by one space, paragraphs kept.
    body[..end]
        .split("\n\n")
        .map(|paragraph| paragraph.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// (e) Every context piece the trace can write (`agent_started.context`) is named in
/// docs/scenario-format.md's "Context pieces", and the fork's paragraph names each piece a
/// fork starts with (issue #23: the doc gave a fork three pieces where the trace wrote
/// eight).
#[test]
fn every_context_piece_is_named_in_the_format_doc() {
    use subsim_rules::context::{piece, startup_context, AgentKind, StartupInput};
    let section = format_doc_section("Context pieces");
    let missing: Vec<&str> = piece::ALL
        .iter()
        .copied()
        .filter(|label| !section.contains(&format!("`{label}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/scenario-format.md's Context pieces does not name {missing:?}"
    );
    let fork_paragraph = section
        .split("\n\n")
        .find(|paragraph| paragraph.starts_with("A fork"))
        .expect("a paragraph on the fork's context");
    let gates = subsim_rules::Gates::for_version(subsim_rules::Version::v2_1(292));
    let fork = startup_context(&StartupInput::new(AgentKind::Fork, "fork", gates));
    let included: Vec<&str> = fork
        .pieces
        .iter()
        .filter(|piece| piece.included)
        .map(|piece| piece.label)
        .collect();
    for label in &included {
        assert!(
            fork_paragraph.contains(&format!("`{label}`")),
            "the fork's paragraph does not name `{label}`"
        );
    }
    let words = [
        "", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
    ];
    let count = words.get(included.len()).copied().unwrap_or("many");
    assert!(
        fork_paragraph.contains(&format!("these {count} pieces")),
        "the fork's paragraph should say `these {count} pieces`"
    );
}
