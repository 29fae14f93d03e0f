//! The `## Version gates` section of `docs/rules.md` stays honest (issue #4: for each
//! version gate, a scenario on each side of it that expects the difference):
//! (a) every scenario a `before` cell links exists and its `session.version` (2.1.292 when
//!     it has none) is below the row's gate; every `from` link is at or above it (inside
//!     the range for a range row, the version itself for an `=X` row);
//! (b) every side cell links a scenario or gives a reason (`not observable: …`,
//!     `unit-tested: <test>` naming a test that exists, `not implemented: …`);
//! (c) every gate of `rules::gates_table` is cited by some row (its rule or one of its
//!     `also` IDs), so a new gate cannot be added without a row;
//! (d) every linked scenario shows the difference: re-run with its version moved to the
//!     other side of the gate (the gate's first version for a `before` link, the version
//!     just below it for a `from` link), its `expect:` block no longer passes;
//! (e) the rows follow the catalog's §23 line by line (same versions, same rules), apart
//!     from rows marked `(not in §23)`. The catalog lives beside the repository
//!     (`<repo>/../shared/spec/rules.md`); when it is absent this check is skipped with a
//!     note.
//!
//! How a version cell reads (the section's own legend): `2.1.217` (the change comes with
//! it), `2.1.161 – 2.1.211` (holds in the range), `=2.1.199` (that version only),
//! `≤2.1.197` (holds up to it; the change comes with the next version).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use subsim_engine::expect::Checker;
use subsim_engine::Simulation;
use subsim_rules::gates_table::gates;
use subsim_rules::Version;
use subsim_tests::markdown::{cells, links, scenario_path};
use subsim_tests::repo_root;

const SECTION: &str = "Version gates";
const HEADER: [&str; 5] = ["version", "what changes", "rules", "before", "from"];
const REASONS: [&str; 3] = ["not observable:", "unit-tested:", "not implemented:"];
const NOT_IN_CATALOG: &str = "(not in §23)";

/// Where the gate sits, as the version cell writes it.
#[derive(Clone, Copy, Debug)]
enum Gate {
    /// `X`: from X on.
    From(Version),
    /// `A – B`: from A to B, both included.
    Range(Version, Version),
    /// `=X`: X only.
    Only(Version),
    /// `≤X`: up to X; the change comes with the next version.
    UpTo(Version),
}

impl Gate {
    fn parse(text: &str) -> Result<Gate, String> {
        let version = |text: &str| {
            text.trim()
                .parse::<Version>()
                .map_err(|error| format!("`{}` is not a version ({error})", text.trim()))
        };
        if let Some(rest) = text.strip_prefix('=') {
            Ok(Gate::Only(version(rest)?))
        } else if let Some(rest) = text.strip_prefix('≤') {
            Ok(Gate::UpTo(version(rest)?))
        } else if let Some((low, high)) = text.split_once('–') {
            let (low, high) = (version(low)?, version(high)?);
            if low >= high {
                return Err(format!("the range {low} – {high} is empty"));
            }
            Ok(Gate::Range(low, high))
        } else {
            Ok(Gate::From(version(text)?))
        }
    }

    /// The first version on the `from` side.
    fn first(self) -> Version {
        match self {
            Gate::From(v) | Gate::Range(v, _) | Gate::Only(v) => v,
            Gate::UpTo(v) => Version::new(v.major, v.minor, v.patch + 1),
        }
    }

    /// The newest version on the `before` side.
    fn last_before(self) -> Version {
        let first = self.first();
        Version::new(first.major, first.minor, first.patch.saturating_sub(1))
    }

    /// Is `version` on the `from` side?
    fn holds_at(self, version: Version) -> bool {
        match self {
            Gate::From(v) => version >= v,
            Gate::Range(low, high) => low <= version && version <= high,
            Gate::Only(v) => version == v,
            Gate::UpTo(_) => version >= self.first(),
        }
    }

    /// The `from` side in words, for messages.
    fn after_side_in_words(self) -> String {
        match self {
            Gate::From(v) => format!("at or above {v}"),
            Gate::Range(low, high) => format!("in {low} – {high}"),
            Gate::Only(v) => format!("exactly {v}"),
            Gate::UpTo(_) => format!("at or above {}", self.first()),
        }
    }
}

/// One row of the section.
struct Row {
    line: usize,
    version_cell: String,
    gate: Gate,
    in_catalog: bool,
    rules: Vec<String>,
    before: String,
    from: String,
}

impl Row {
    fn at(&self) -> String {
        format!("docs/rules.md:{} ({})", self.line, self.version_cell)
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}

/// The lines under `## {heading}` up to the next `## `, with 1-based line numbers.
fn section<'t>(text: &'t str, heading: &str) -> Vec<(usize, &'t str)> {
    let mut inside = false;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.starts_with("## ") {
            if inside {
                break;
            }
            inside = line.trim_end() == format!("## {heading}");
            continue;
        }
        if inside {
            lines.push((index + 1, line));
        }
    }
    lines
}

/// Does `text` cite `id` exactly (`CAP-1` is not found inside `CAP-10`)?
fn cites(text: &str, id: &str) -> bool {
    text.match_indices(id).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + id.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
            && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

/// The rows of the section; malformed rows go to `problems`.
fn rows(problems: &mut Vec<String>) -> Vec<Row> {
    let text = read(&repo_root().join("docs/rules.md"));
    let lines = section(&text, SECTION);
    assert!(
        !lines.is_empty(),
        "docs/rules.md has no `## {SECTION}` section (or it is empty)"
    );
    let mut rows = Vec::new();
    for (line, content) in lines {
        let Some(cells) = cells(content) else {
            continue;
        };
        if cells[0] == HEADER[0] {
            if cells != HEADER {
                problems.push(format!(
                    "docs/rules.md:{line}: the header should be {HEADER:?}, found {cells:?}"
                ));
            }
            continue;
        }
        if cells.len() != HEADER.len() {
            problems.push(format!(
                "docs/rules.md:{line}: a version-gates row needs {} cells ({}), found {} — \
                 is there a `|` inside a cell?",
                HEADER.len(),
                HEADER.join(" | "),
                cells.len()
            ));
            continue;
        }
        let (version_text, in_catalog) = match cells[0].strip_suffix(NOT_IN_CATALOG) {
            Some(rest) => (rest.trim(), false),
            None => (cells[0].as_str(), true),
        };
        let gate = match Gate::parse(version_text) {
            Ok(gate) => gate,
            Err(error) => {
                problems.push(format!(
                    "docs/rules.md:{line}: version cell `{}`: {error}; write `2.1.217`, \
                     `2.1.161 – 2.1.211`, `=2.1.199` or `≤2.1.197`",
                    cells[0]
                ));
                continue;
            }
        };
        let rules: Vec<String> = cells[2]
            .split(',')
            .map(|id| id.trim().to_string())
            .filter(|id| !id.is_empty())
            .collect();
        if rules.is_empty() {
            problems.push(format!("docs/rules.md:{line}: the rules cell is empty"));
        }
        rows.push(Row {
            line,
            version_cell: cells[0].clone(),
            gate,
            in_catalog,
            rules,
            before: cells[3].clone(),
            from: cells[4].clone(),
        });
    }
    assert!(!rows.is_empty(), "the `## {SECTION}` section has no rows");
    rows
}

/// Which side of the gate a cell stands for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Before,
    From,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Before => "before",
            Side::From => "from",
        }
    }

    fn cell(self, row: &Row) -> &str {
        match self {
            Side::Before => &row.before,
            Side::From => &row.from,
        }
    }
}

/// The scenario files a side cell links, with problems for links that are not scenarios.
fn scenario_links(row: &Row, side: Side, problems: &mut Vec<String>) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for target in links(side.cell(row)) {
        match scenario_path(&target) {
            Some(path) if path.is_file() => found.push((target, path)),
            Some(_) => problems.push(format!(
                "{}: the {} cell links `{target}`, which does not exist",
                row.at(),
                side.name()
            )),
            None => problems.push(format!(
                "{}: the {} cell links `{target}`; link scenarios as `../scenarios/…`",
                row.at(),
                side.name()
            )),
        }
    }
    found
}

/// The `session.version` a scenario runs at.
fn scenario_version(path: &Path) -> Result<Version, String> {
    subsim_scenario::load_scenario(path)
        .map(|loaded| loaded.spec.session.version)
        .map_err(|diagnostics| format!("does not load: {diagnostics}"))
}

#[test]
fn version_gate_links_sit_on_their_side_of_the_gate() {
    let mut problems = Vec::new();
    let rows = rows(&mut problems);
    for row in &rows {
        for side in [Side::Before, Side::From] {
            for (target, path) in scenario_links(row, side, &mut problems) {
                let version = match scenario_version(&path) {
                    Ok(version) => version,
                    Err(error) => {
                        problems.push(format!("{}: `{target}` {error}", row.at()));
                        continue;
                    }
                };
                let first = row.gate.first();
                match side {
                    Side::Before if version >= first => problems.push(format!(
                        "{}: the before cell links `{target}`, which runs at {version}; a \
                         before scenario must run below {first}",
                        row.at()
                    )),
                    Side::From if !row.gate.holds_at(version) => problems.push(format!(
                        "{}: the from cell links `{target}`, which runs at {version}; a from \
                         scenario must run {}",
                        row.at(),
                        row.gate.after_side_in_words()
                    )),
                    _ => {}
                }
            }
        }
    }
    fail_if_any(&problems, "version-gate links are on the wrong side");
}

#[test]
fn every_version_gate_side_has_a_scenario_or_a_reason() {
    let mut problems = Vec::new();
    let rows = rows(&mut problems);
    let test_names = test_functions();
    for row in &rows {
        for side in [Side::Before, Side::From] {
            let cell = side.cell(row);
            if !links(cell).is_empty() {
                continue;
            }
            let Some(reason) = REASONS.iter().find(|reason| cell.starts_with(*reason)) else {
                problems.push(format!(
                    "{}: the {} cell has neither a scenario link nor a reason; start it with \
                     one of {REASONS:?}",
                    row.at(),
                    side.name()
                ));
                continue;
            };
            let said = cell[reason.len()..].trim();
            if said.is_empty() {
                problems.push(format!(
                    "{}: the {} cell says `{reason}` without saying why",
                    row.at(),
                    side.name()
                ));
            }
            if *reason == "unit-tested:" {
                // `path::to::test_fn` in backticks, right after the prefix.
                let named = said
                    .strip_prefix('`')
                    .and_then(|rest| rest.split_once('`'))
                    .map(|(path, _)| path.rsplit("::").next().unwrap_or(path));
                match named {
                    None => problems.push(format!(
                        "{}: the {} cell should name the test in backticks: \
                         `unit-tested: `module::tests::name``",
                        row.at(),
                        side.name()
                    )),
                    Some(name) if !test_names.contains(name) => problems.push(format!(
                        "{}: the {} cell names the test `{name}`, which no crate under \
                         crates/ defines",
                        row.at(),
                        side.name()
                    )),
                    Some(_) => {}
                }
            }
        }
    }
    fail_if_any(&problems, "version-gate cells are incomplete");
}

#[test]
fn every_gate_of_the_rules_has_a_row() {
    let mut problems = Vec::new();
    let rows = rows(&mut problems);
    let cited = |id: &str| {
        rows.iter()
            .any(|row| row.rules.iter().any(|r| cites(r, id)))
    };
    for gate in gates() {
        let ids: Vec<&str> = gate.rules().collect();
        if !ids.iter().any(|id| cited(id)) {
            problems.push(format!(
                "the gate `{}` ({}, {}: {}) is cited by no row of `## {SECTION}`: add a row \
                 whose rules name one of {ids:?}",
                gate.field,
                gate.rule,
                gate.when(),
                gate.what
            ));
        }
    }
    fail_if_any(&problems, "gates without a row");
}

#[test]
fn every_linked_scenario_shows_the_difference() {
    let mut problems = Vec::new();
    let rows = rows(&mut problems);
    let mut checked = 0;
    for row in &rows {
        for side in [Side::Before, Side::From] {
            let other = match side {
                Side::Before => row.gate.first(),
                Side::From => row.gate.last_before(),
            };
            for (target, path) in scenario_links(row, side, &mut problems) {
                let source = read(&path);
                let own = match scenario_version(&path) {
                    Ok(version) => version,
                    Err(error) => {
                        problems.push(format!("{}: `{target}` {error}", row.at()));
                        continue;
                    }
                };
                // The rewrite itself must not change anything: at its own version the
                // rewritten scenario passes.
                match passes_at(&source, &path, own) {
                    Ok(true) => {}
                    Ok(false) | Err(_) => {
                        problems.push(format!(
                            "{}: `{target}` does not pass once its version is rewritten to \
                             its own {own}; this test cannot move it across the gate (is \
                             `session` written as a flow map?)",
                            row.at()
                        ));
                        continue;
                    }
                }
                checked += 1;
                if let Ok(true) = passes_at(&source, &path, other) {
                    problems.push(format!(
                        "{}: the {} cell links `{target}`, but moved to {other} (the other \
                         side of the gate) it still passes its expect block: it does not \
                         show the difference",
                        row.at(),
                        side.name()
                    ));
                }
            }
        }
    }
    assert!(checked > 0, "no scenario links in `## {SECTION}`");
    fail_if_any(&problems, "linked scenarios that do not show their gate");
}

#[test]
fn version_gate_rows_follow_catalog_section_23() {
    let catalog_path = repo_root().join("../shared/spec/rules.md");
    if !catalog_path.exists() {
        eprintln!(
            "note: {} is absent; skipping the check that `## {SECTION}` follows §23",
            catalog_path.display()
        );
        return;
    }
    let catalog = read(&catalog_path);
    let lines = section(&catalog, "23. Version gates");
    assert!(
        !lines.is_empty(),
        "{} has no `## 23. Version gates` section",
        catalog_path.display()
    );
    // (versions named, rules) of each §23 line.
    let mut wanted: Vec<(usize, BTreeSet<String>, Vec<String>)> = Vec::new();
    for (line, content) in lines {
        let Some(cells) = cells(content) else {
            continue;
        };
        if cells.len() != 4 || cells[0] == "Version" {
            continue;
        }
        let rules = cells[3]
            .split(',')
            .map(|id| id.trim().to_string())
            .collect();
        wanted.push((line, versions_in(&cells[0]), rules));
    }
    let mut problems = Vec::new();
    let rows = rows(&mut problems);
    let ours: Vec<&Row> = rows.iter().filter(|row| row.in_catalog).collect();
    if ours.len() != wanted.len() {
        problems.push(format!(
            "§23 has {} lines but `## {SECTION}` has {} rows not marked `{NOT_IN_CATALOG}`",
            wanted.len(),
            ours.len()
        ));
    }
    for (row, (line, versions, rules)) in ours.iter().zip(&wanted) {
        let row_versions = versions_in(&row.version_cell);
        if &row_versions != versions || &row.rules != rules {
            problems.push(format!(
                "{}: expected §23's line {line} here (versions {versions:?}, rules {rules:?}), \
                 found versions {row_versions:?}, rules {:?}",
                row.at(),
                row.rules
            ));
            break; // the rest is shifted; one message is enough
        }
    }
    fail_if_any(&problems, "the version-gates table does not follow §23");
}

/// Every `N.N.N` in `text`.
fn versions_in(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|word| word.trim_matches('.'))
        .filter(|word| word.split('.').count() == 3 && word.split('.').all(|n| !n.is_empty()))
        .map(str::to_string)
        .collect()
}

/// Runs the scenario `source` (from `path`) with its `session.version` set to `version`:
/// does its `expect:` block pass? A scenario that does not load or hits a safety limit
/// there is an `Err`.
fn passes_at(source: &str, path: &Path, version: Version) -> Result<bool, String> {
    let rewritten = with_version(source, version)?;
    let base_dir = path.parent().unwrap_or(Path::new("."));
    let loaded = subsim_scenario::parse_scenario(&rewritten, &path.display().to_string(), base_dir)
        .map_err(|diagnostics| diagnostics.to_string())?;
    let mut checker = Checker::new(loaded.expect);
    let report = Simulation::new(loaded.spec).run(&mut checker);
    if let Some(limit) = report.limit {
        return Err(limit.to_string());
    }
    Ok(checker.finish().is_empty())
}

/// `source` with `session.version` set to `version`: the existing key is replaced, or one
/// is added to the block-style `session:` map, or a `session:` map is appended.
fn with_version(source: &str, version: Version) -> Result<String, String> {
    let value = format!("version: \"{version}\"");
    let mut out: Vec<String> = Vec::new();
    let mut in_session = false;
    let mut session_line = None;
    let mut indent = None;
    let mut replaced = false;
    for line in source.lines() {
        let top_level = !line.is_empty() && !line.starts_with([' ', '\t', '#']);
        if top_level {
            in_session = false;
            if let Some(rest) = line.strip_prefix("session:") {
                if !rest.trim().is_empty() {
                    return Err("`session` is not a block map".to_string());
                }
                in_session = true;
                session_line = Some(out.len());
            }
        } else if in_session && !line.trim().is_empty() {
            let width = line.len() - line.trim_start().len();
            let child_indent = *indent.get_or_insert(width);
            if width == child_indent && line.trim_start().starts_with("version:") {
                out.push(format!("{}{value}", &line[..width]));
                replaced = true;
                continue;
            }
        }
        out.push(line.to_string());
    }
    if !replaced {
        match session_line {
            Some(at) => {
                let pad = " ".repeat(indent.unwrap_or(2));
                out.insert(at + 1, format!("{pad}{value}"));
            }
            None => {
                out.push("session:".to_string());
                out.push(format!("  {value}"));
            }
        }
    }
    let mut text = out.join("\n");
    text.push('\n');
    Ok(text)
}

/// The names of every `fn` under `crates/*/src` (the unit tests a cell may name).
fn test_functions() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut stack = vec![repo_root().join("crates")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|name| name != "target") {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let text = read(&path);
                for line in text.lines() {
                    if let Some(rest) = line.trim_start().strip_prefix("fn ") {
                        let name: String = rest
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        names.insert(name);
                    }
                }
            }
        }
    }
    names
}

fn fail_if_any(problems: &[String], what: &str) {
    assert!(
        problems.is_empty(),
        "{what}: {} problem(s) in docs/rules.md `## {SECTION}`:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}

#[test]
fn gate_cells_and_rewrites_read_as_documented() {
    let v = |patch| Version::v2_1(patch);
    let gate = |text| Gate::parse(text).unwrap();
    assert_eq!(gate("2.1.217").first(), v(217));
    assert_eq!(gate("2.1.217").last_before(), v(216));
    assert!(gate("2.1.161 – 2.1.211").holds_at(v(211)));
    assert!(!gate("2.1.161 – 2.1.211").holds_at(v(212)));
    assert!(gate("=2.1.199").holds_at(v(199)));
    assert!(!gate("=2.1.199").holds_at(v(200)));
    assert_eq!(gate("≤2.1.197").first(), v(198));
    assert_eq!(gate("≤2.1.197").last_before(), v(197));
    assert!(Gate::parse("2.1").is_err());
    assert!(Gate::parse("2.1.219 – 2.1.217").is_err());

    let replaced = with_version(
        "name: x\nsession:\n  version: \"2.1.200\"\n  seed: 1\n",
        v(3),
    );
    assert_eq!(
        replaced.unwrap(),
        "name: x\nsession:\n  version: \"2.1.3\"\n  seed: 1\n"
    );
    let added = with_version("name: x\nsession:\n  seed: 1\nmain: []\n", v(3));
    assert_eq!(
        added.unwrap(),
        "name: x\nsession:\n  version: \"2.1.3\"\n  seed: 1\nmain: []\n"
    );
    let appended = with_version("name: x\nmain: []\n", v(3));
    assert_eq!(
        appended.unwrap(),
        "name: x\nmain: []\nsession:\n  version: \"2.1.3\"\n"
    );
    // A `version:` inside the description or a nested map is left alone.
    let nested = with_version(
        "description: |\n  version: 1\nsession:\n  env: {A: 1}\n  limits:\n    version: x\n",
        v(3),
    );
    assert_eq!(
        nested.unwrap(),
        "description: |\n  version: 1\nsession:\n  version: \"2.1.3\"\n  env: {A: 1}\n  limits:\n    version: x\n"
    );
    assert!(with_version("session: {seed: 1}\n", v(3)).is_err());
    assert_eq!(
        versions_in("2.1.197 (and earlier)"),
        BTreeSet::from(["2.1.197".to_string()])
    );
    assert_eq!(versions_in("≤2.1.197").len(), 1);
    assert_eq!(versions_in("2.1.161 – 2.1.211").len(), 2);
}
