//! The teaching docs stay true: every relative link in `README.md` and under `docs/`
//! resolves inside the repository (no `../shared/…` that only exists on one machine), and
//! the open-questions table of `docs/rules.md` marks nothing `open` that
//! `docs/decisions.md` answers.

use std::path::{Path, PathBuf};

use subsim_tests::markdown::{cells, links};
use subsim_tests::repo_root;

/// `README.md` and every `*.md` under `docs/`, at any depth.
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()))
            .map(|entry| entry.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                found.push(path);
            }
        }
    }
    let root = repo_root();
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    walk(&root.join("docs"), &mut files);
    files
}

#[test]
fn every_relative_link_in_the_docs_resolves_inside_the_repository() {
    let root = repo_root()
        .canonicalize()
        .expect("the repository root exists");
    let mut problems = Vec::new();
    let files = markdown_files();
    assert!(files.len() >= 5, "found too few Markdown files: {files:?}");
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a Markdown file is UTF-8");
        let dir = file.parent().expect("a file has a folder");
        for target in links(&text) {
            let target = target.split_whitespace().next().unwrap_or("").to_string();
            if target.is_empty()
                || target.starts_with('#')
                || target.contains("://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            let path_part = target.split('#').next().unwrap_or("");
            let resolved = dir.join(path_part);
            let shown = file.strip_prefix(repo_root()).unwrap_or(file).display();
            match resolved.canonicalize() {
                Ok(real) if real.starts_with(&root) => {}
                Ok(real) => problems.push(format!(
                    "{shown}: `{target}` points outside the repository ({})",
                    real.display()
                )),
                Err(_) => problems.push(format!("{shown}: `{target}` does not exist")),
            }
        }
    }
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

/// The `Q-N` rows of a table in `text` whose first cell is an open-question ID: `(id,
/// cells)`.
fn question_rows(text: &str) -> Vec<(String, Vec<String>)> {
    text.lines()
        .filter_map(cells)
        .filter(|cells| {
            cells.first().is_some_and(|id| {
                id.strip_prefix("Q-")
                    .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
            })
        })
        .map(|cells| (cells[0].clone(), cells))
        .collect()
}

#[test]
fn rules_md_marks_no_question_open_that_decisions_md_answers() {
    let root = repo_root();
    let decisions = std::fs::read_to_string(root.join("docs/decisions.md")).unwrap();
    let rules = std::fs::read_to_string(root.join("docs/rules.md")).unwrap();
    let answered: Vec<String> = question_rows(&decisions)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert!(
        answered.len() >= 30,
        "decisions.md answers too few questions: {answered:?}"
    );
    let mut problems = Vec::new();
    let open_questions = rules
        .split("\n## ")
        .find(|section| section.starts_with("Open questions"))
        .expect("docs/rules.md has an open-questions section");
    for (id, cells) in question_rows(open_questions) {
        let answer = cells.get(2).map(String::as_str).unwrap_or("");
        if answered.contains(&id) && answer.starts_with("open") {
            problems.push(format!(
                "{id}: rules.md says `{answer}` but decisions.md answers it"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
