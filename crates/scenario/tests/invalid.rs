//! Every file in `tests/invalid/` must be rejected with the diagnostics its header names.
//!
//! Header comment lines (at the top of each file):
//! - `# expect-error: TEXT` (one or more): TEXT appears in the rendered diagnostics;
//! - `# expect-location: LINE:COL`: where the first problem is;
//! - `# expect-problems: N` (optional): exactly N problems are reported.

use std::path::{Path, PathBuf};

use subsim_scenario::parse_scenario;

struct Header {
    errors: Vec<String>,
    location: Option<(usize, usize)>,
    problems: Option<usize>,
}

fn header(source: &str, file: &Path) -> Header {
    let mut header = Header {
        errors: Vec::new(),
        location: None,
        problems: None,
    };
    for line in source.lines().take_while(|line| line.starts_with('#')) {
        let line = line.trim_start_matches('#').trim();
        if let Some(text) = line.strip_prefix("expect-error:") {
            header.errors.push(text.trim().to_string());
        } else if let Some(text) = line.strip_prefix("expect-location:") {
            let parsed = text
                .trim()
                .split_once(':')
                .and_then(|(line, column)| Some((line.parse().ok()?, column.parse().ok()?)));
            assert!(
                parsed.is_some(),
                "{}: bad expect-location {text:?}",
                file.display()
            );
            header.location = parsed;
        } else if let Some(text) = line.strip_prefix("expect-problems:") {
            header.problems = text.trim().parse().ok();
        }
    }
    assert!(
        !header.errors.is_empty(),
        "{}: no `# expect-error:` line",
        file.display()
    );
    assert!(
        header.location.is_some(),
        "{}: no `# expect-location:` line",
        file.display()
    );
    header
}

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/invalid");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_invalid_file_is_rejected_with_its_diagnostics() {
    let files = fixtures();
    assert!(files.len() >= 14, "only {} fixtures", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let source = std::fs::read_to_string(path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let header = header(&source, path);
        let base_dir = path.parent().unwrap_or(Path::new("."));
        let problems = match parse_scenario(&source, &name, base_dir) {
            Ok(_) => {
                failures.push(format!("{name}: accepted, but should fail"));
                continue;
            }
            Err(problems) => problems,
        };
        let rendered = problems.to_string();
        for wanted in &header.errors {
            if !rendered.contains(wanted.as_str()) {
                failures.push(format!("{name}: wanted {wanted:?} in:\n{rendered}"));
            }
        }
        if let Some(first) = problems.problems.first() {
            let at = (first.line, first.column);
            if Some(at) != header.location {
                failures.push(format!(
                    "{name}: first problem at {}:{}, wanted {:?}:\n{rendered}",
                    at.0, at.1, header.location
                ));
            }
            // The byte span must point into the source at the same place.
            let line_start: usize = source
                .split_inclusive('\n')
                .take(first.line - 1)
                .map(str::len)
                .sum();
            if first.offset < line_start || first.offset + first.len > source.len() {
                failures.push(format!(
                    "{name}: span {}+{} is not on line {}",
                    first.offset, first.len, first.line
                ));
            }
        }
        if let Some(count) = header.problems {
            if problems.problems.len() != count {
                failures.push(format!(
                    "{name}: {} problems, wanted {count}:\n{rendered}",
                    problems.problems.len()
                ));
            }
        }
        assert_eq!(
            problems.source, source,
            "{name}: diagnostics carry the source"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
