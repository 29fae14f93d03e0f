//! The tutorial (`docs/tutorial/`) and the README show what subsim prints: every
//! ```` ```console ```` block (`$ subsim ARGS` then the output) is run from the repository
//! root and its output compared with the quoted text, byte for byte; every
//! `<!-- picture: subsim ARGS -->` comment is run and the picture it writes compared with
//! the committed file. A change of wording therefore updates the docs in the same commit.

use crate::support::{repo_root, BINARY};
use std::path::PathBuf;
use std::process::{Command, Output};

/// Splits a command line on spaces, keeping double-quoted words together.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

fn subsim(args: &[String]) -> Output {
    Command::new(BINARY)
        .args(args)
        .current_dir(repo_root())
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .env_remove("RUST_LOG")
        .output()
        .expect("the subsim binary runs")
}

/// `(command, quoted output)` of every console block of `text`.
fn console_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```console\n") {
        let body = &rest[start + "```console\n".len()..];
        let end = body.find("\n```").expect("a console block ends");
        let block = &body[..end];
        let (first, output) = block.split_once('\n').unwrap_or((block, ""));
        let command = first
            .strip_prefix("$ subsim ")
            .unwrap_or_else(|| panic!("a console block starts with `$ subsim `: {first}"));
        blocks.push((command.to_string(), format!("{output}\n")));
        rest = &body[end..];
    }
    blocks
}

/// The argument lists of every `<!-- picture: subsim ARGS -->` comment of `text`.
fn pictures(text: &str) -> Vec<String> {
    text.split("<!-- picture: subsim ")
        .skip(1)
        .map(|part| part.split(" -->").next().unwrap().to_string())
        .collect()
}

fn tutorial_pages() -> Vec<PathBuf> {
    let dir = repo_root().join("docs/tutorial");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("docs/tutorial exists")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    pages.sort();
    pages
}

#[test]
fn the_tutorial_has_five_to_seven_lessons_each_with_a_run_and_a_picture() {
    let lessons: Vec<PathBuf> = tutorial_pages()
        .into_iter()
        .filter(|path| !path.ends_with("README.md"))
        .collect();
    assert!((5..=7).contains(&lessons.len()), "{lessons:?}");
    for lesson in &lessons {
        let text = std::fs::read_to_string(lesson).unwrap();
        let runs = console_blocks(&text);
        assert!(
            runs.iter()
                .any(|(command, _)| command.starts_with("run scenarios/")),
            "{} narrates no shipped scenario",
            lesson.display()
        );
        assert!(
            !pictures(&text).is_empty(),
            "{} has no picture",
            lesson.display()
        );
    }
}

#[test]
fn every_command_the_docs_show_prints_what_they_quote() {
    let mut pages = tutorial_pages();
    pages.push(repo_root().join("README.md"));
    let mut problems = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (command, quoted) in console_blocks(&text) {
            checked += 1;
            let output = subsim(&words(&command));
            let printed = String::from_utf8_lossy(&output.stdout);
            if !output.status.success() {
                problems.push(format!(
                    "{}: `subsim {command}` failed: {}",
                    page.display(),
                    String::from_utf8_lossy(&output.stderr)
                ));
            } else if printed != quoted {
                problems.push(format!(
                    "{}: `subsim {command}` prints something else now:\n{printed}",
                    page.display()
                ));
            }
        }
    }
    assert!(checked >= 6, "only {checked} commands found");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn every_picture_in_the_docs_is_what_subsim_draws() {
    let mut pages = tutorial_pages();
    pages.push(repo_root().join("README.md"));
    let scratch = std::env::temp_dir().join(format!("subsim-pictures-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut problems = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for command in pictures(&text) {
            checked += 1;
            let mut args = words(&command);
            let out = args
                .iter()
                .position(|arg| arg == "--out" || arg == "-o")
                .expect("a picture command names --out");
            let committed = repo_root().join(&args[out + 1]);
            let fresh = scratch.join(format!("picture-{checked}.svg"));
            args[out + 1] = fresh.display().to_string();
            let output = subsim(&args);
            assert!(output.status.success(), "subsim {command}: {output:?}");
            let drawn = std::fs::read_to_string(&fresh).unwrap();
            match std::fs::read_to_string(&committed) {
                Ok(kept) if kept == drawn => {}
                Ok(_) => problems.push(format!(
                    "{} is stale: run `subsim {command}` from the repository root",
                    committed.display()
                )),
                Err(error) => problems.push(format!("{}: {error}", committed.display())),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(checked >= 6, "only {checked} pictures found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn command_lines_split_like_a_shell() {
    assert_eq!(
        words(r#"explain "depth limit" --seed 3"#),
        ["explain", "depth limit", "--seed", "3"]
    );
}

/// The README's excerpts of the demo (narration lines, Gantt rows) are lines the demo
/// prints today.
#[test]
fn the_readme_quotes_the_demo_as_it_is() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let narration = String::from_utf8(subsim(&["run".to_string()]).stdout).unwrap();
    let gantt = String::from_utf8(
        subsim(&[
            "run".to_string(),
            "--format".to_string(),
            "gantt".to_string(),
        ])
        .stdout,
    )
    .unwrap();
    let mut quoted = 0;
    for block in readme.split("```text\n").skip(1) {
        let block = block.split("\n```").next().unwrap();
        // Each quoted decision, its wrapped reason included, is printed as it stands.
        if block.starts_with("00:") {
            let mut decisions: Vec<String> = Vec::new();
            for line in block.lines() {
                match decisions.last_mut() {
                    Some(decision) if line.starts_with(' ') => {
                        decision.push_str(line);
                        decision.push('\n');
                    }
                    _ => decisions.push(format!("{line}\n")),
                }
            }
            for decision in decisions {
                assert!(
                    narration.contains(&decision),
                    "the README quotes lines the demo no longer prints:\n{decision}"
                );
            }
        }
        for line in block.lines() {
            let source = if line.starts_with("00:") {
                &narration
            } else if line.contains(" |") {
                &gantt
            } else {
                continue;
            };
            quoted += 1;
            assert!(
                source.lines().any(|printed| printed == line),
                "the README quotes a line the demo no longer prints:\n{line}"
            );
        }
    }
    assert!(quoted >= 8, "only {quoted} quoted lines found");
}
