//! No input makes the parser panic or hang: truncations and single-character damage of
//! every fixture — scenarios, agent Markdown files and `--agents` JSON — all come back as
//! `Ok` or as located diagnostics.

use std::path::{Path, PathBuf};

use subsim_scenario::parse_scenario;

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = vec![
        root.join("valid/rich.yaml"),
        root.join("valid/extended.yaml"),
        root.join("fixtures/agents/scenario.yaml"),
    ];
    if let Ok(entries) = std::fs::read_dir(root.join("invalid")) {
        files.extend(entries.filter_map(|entry| entry.ok().map(|entry| entry.path())));
    }
    files.sort();
    files
}

/// Parses and checks that every diagnostic points inside the text.
fn survives(source: &str, base_dir: &Path) {
    if let Err(problems) = parse_scenario(source, "damaged.yaml", base_dir) {
        assert!(
            !problems.problems.is_empty(),
            "an error carries at least one problem"
        );
        for problem in &problems.problems {
            assert!(problem.line >= 1 && problem.column >= 1, "{problem}");
            assert!(
                problem.offset + problem.len <= source.len(),
                "{problem} in {source:?}"
            );
            assert!(
                source.is_char_boundary(problem.offset),
                "{problem} in {source:?}"
            );
        }
    }
}

#[test]
fn truncated_files_never_panic() {
    // The budget fixtures are slow by design (each cut replays thousands of alias events)
    // and are covered by the invalid-file test.
    let fixtures = fixtures()
        .into_iter()
        .filter(|path| !path.to_string_lossy().contains("budget-"));
    for path in fixtures {
        let source = std::fs::read_to_string(&path).unwrap_or_default();
        let base_dir = path.parent().unwrap_or(Path::new("."));
        let cuts: Vec<usize> = (0..source.len())
            .step_by(3)
            .filter(|cut| source.is_char_boundary(*cut))
            .collect();
        for cut in cuts {
            survives(&source[..cut], base_dir);
        }
    }
}

#[test]
fn damaged_files_never_panic() {
    let damage = [
        ":", "[", "{", "- ", "*a", "&a ", "'", "\"", "\t", "\n  ", "(", ",", "é", "\u{0}",
    ];
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/valid/rich.yaml");
    let source = std::fs::read_to_string(&path).unwrap_or_default();
    let base_dir = path.parent().unwrap_or(Path::new("."));
    for (index, at) in (0..source.len()).step_by(11).enumerate() {
        if !source.is_char_boundary(at) || !source.is_char_boundary(at + 1) {
            continue;
        }
        let patch = damage[index % damage.len()];
        let damaged = format!("{}{}{}", &source[..at], patch, &source[at + 1..]);
        survives(&damaged, base_dir);
    }
}

/// Every agent Markdown file and `--agents` JSON file among the fixtures.
fn definition_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else if path
                .extension()
                .is_some_and(|ext| ext == "md" || ext == "json")
                && !path.ends_with("README.md")
            {
                found.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut found = Vec::new();
    walk(&root.join("fixtures"), &mut found);
    walk(&root.join("valid"), &mut found);
    found.sort();
    found
}

/// Loads `text` as an agent file (inline `file:`, a project directory and a plugin
/// directory) or as `--agents` JSON, from a fresh temp directory.
fn definition_survives(text: &str, json: bool, dir: &Path) {
    let agents = dir.join("agents");
    let _ = std::fs::remove_dir_all(&agents);
    std::fs::create_dir_all(agents.join("sub")).unwrap_or_else(|error| panic!("{error}"));
    let (file, scenario) = if json {
        (
            agents.join("agents.json"),
            "name: x\nsession:\n  kind: headless\n  agent_dirs: [{scope: cli, path: agents/agents.json, passed_as: path}]\n",
        )
    } else {
        (
            agents.join("sub/a.md"),
            "name: x\nsession:\n  agent_dirs:\n    - {scope: project, path: agents}\n    - {scope: plugin, path: agents, plugin: p}\nagents:\n  one: {file: agents/sub/a.md}\n  two: {file: agents/sub/a.md, scope: plugin}\n",
        )
    };
    std::fs::write(&file, text).unwrap_or_else(|error| panic!("{error}"));
    survives(scenario, dir);
}

#[test]
fn damaged_definition_files_never_panic() {
    let dir = std::env::temp_dir().join(format!("subsim-robust-defs-{}", std::process::id()));
    let damage = [
        ":", "[", "{", "- ", "*a", "'", "\"", "\t", "\n", "---\n", ",", "\u{0}",
    ];
    for path in definition_files() {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let json = path.extension().is_some_and(|ext| ext == "json");
        for cut in (0..text.len()).step_by(5) {
            if text.is_char_boundary(cut) {
                definition_survives(&text[..cut], json, &dir);
            }
        }
        for (index, at) in (0..text.len()).step_by(7).enumerate() {
            if !text.is_char_boundary(at) || !text.is_char_boundary(at + 1) {
                continue;
            }
            let patch = damage[index % damage.len()];
            let damaged = format!("{}{}{}", &text[..at], patch, &text[at + 1..]);
            definition_survives(&damaged, json, &dir);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
