//! No input makes the parser panic or hang: truncations and single-character damage of
//! every fixture all come back as `Ok` or as located diagnostics.

use std::path::{Path, PathBuf};

use subsim_scenario::parse_scenario;

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = vec![root.join("valid/rich.yaml")];
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
