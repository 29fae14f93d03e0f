//! `ARCHITECTURE.md` stays a true map (issue #30 item 7), and the invariants it lists that
//! no other test checks are checked here:
//! (a) the file is a map, not an inventory: at most 300 lines;
//! (b) every module its code map names (a lowercase name in backticks under a
//!     `### \`crates/X\`` heading) is a file or folder of that crate, every type it names
//!     (a capitalised name in backticks anywhere) is declared in the workspace, and every
//!     path it spells (`crates/…`, `tests/…`, `docs/…`) exists;
//! (c) no non-exhaustive attribute anywhere in the workspace, so a new variant fails to compile
//!     wherever it must be handled;
//! (d) no wall clock in the rules crate or the kernel (`sim/`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use subsim_tests::repo_root;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn workspace_sources() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = Vec::new();
    for dir in ["crates", "tests", "benches"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "found only {} Rust files", files.len());
    files
}

/// Types of the standard library the map may name.
const STD_TYPES: [&str; 6] = ["BTreeMap", "BTreeSet", "Rc", "Vec", "String", "Option"];

fn architecture() -> String {
    std::fs::read_to_string(repo_root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

/// The text between backticks on each line, with the line's number.
fn backticked(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut parts = line.split('`');
        parts.next();
        while let (Some(inside), Some(_)) = (parts.next(), parts.next()) {
            out.push((n + 1, inside.to_string()));
        }
    }
    out
}

#[test]
fn architecture_md_is_a_map_not_an_inventory() {
    let lines = architecture().lines().count();
    assert!(
        lines <= 300,
        "ARCHITECTURE.md has {lines} lines; the map is at most 300"
    );
}

#[test]
fn architecture_md_names_only_modules_types_and_paths_that_exist() {
    let root = repo_root();
    let text = architecture();
    let mut problems = Vec::new();

    // Types: every capitalised identifier in backticks is declared somewhere.
    let mut declared = BTreeSet::new();
    for file in workspace_sources() {
        let source = std::fs::read_to_string(&file).unwrap_or_default();
        for word in ["struct ", "enum ", "trait ", "type "] {
            for piece in source.split(word).skip(1) {
                let name: String = piece
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                declared.insert(name);
            }
        }
    }
    // Every `Variant` a `vocabulary!` or enum lists is not a type; only bare names are checked.
    for (line, token) in backticked(&text) {
        let is_type = token.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && token.chars().all(|c| c.is_ascii_alphanumeric())
            && token.chars().any(|c| c.is_ascii_lowercase());
        if is_type && !declared.contains(&token) && !STD_TYPES.contains(&token.as_str()) {
            problems.push(format!("line {line}: type `{token}` is declared nowhere"));
        }
    }

    // Paths spelt from the repository root exist.
    for (line, token) in backticked(&text) {
        let rooted = ["crates/", "tests/", "docs/", "scenarios/", "benches/"]
            .iter()
            .any(|p| token.starts_with(p));
        if rooted && !token.contains(['<', '*', ' ']) && !root.join(&token).exists() {
            problems.push(format!("line {line}: path `{token}` does not exist"));
        }
    }

    // Modules named under a crate's heading exist in that crate.
    let mut crate_dir: Option<PathBuf> = None;
    for (n, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("### `crates/") {
            let name = rest.split('`').next().unwrap_or_default();
            crate_dir = Some(root.join("crates").join(name).join("src"));
            continue;
        }
        if line.starts_with("## ") || line.starts_with("### ") {
            crate_dir = None;
            continue;
        }
        let Some(dir) = &crate_dir else { continue };
        for (_, token) in backticked(line) {
            let module = token.trim_end_matches('/');
            let plain = !module.is_empty()
                && module
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c == '/');
            if plain && !token.starts_with('/') && !module_exists(dir, module) {
                problems.push(format!(
                    "line {}: module `{token}` is not a file or folder of {}",
                    n + 1,
                    dir.display()
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md:\n{}",
        problems.join("\n")
    );
}

/// `name` (or `a/b`) is `name.rs` or a folder `name/` somewhere under `dir`.
fn module_exists(dir: &Path, name: &str) -> bool {
    let mut found = false;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        if current.join(format!("{name}.rs")).is_file() || current.join(name).is_dir() {
            found = true;
            break;
        }
        if let Ok(entries) = std::fs::read_dir(&current) {
            stack.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
        }
    }
    found
}

#[test]
fn no_non_exhaustive_in_the_workspace() {
    let attribute = ["#[non_", "exhaustive]"].concat();
    let offenders: Vec<String> = workspace_sources()
        .into_iter()
        .filter(|f| {
            std::fs::read_to_string(f)
                .unwrap_or_default()
                .contains(&attribute)
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(offenders.is_empty(), "{attribute} in: {offenders:?}");
}

#[test]
fn no_wall_clock_in_the_rules_or_the_kernel() {
    let root = repo_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates/rules/src"), &mut files);
    rust_files(&root.join("crates/engine/src/sim"), &mut files);
    assert!(files.len() > 20, "found only {} files", files.len());
    let clocks = [
        ["System", "Time"].concat(),
        ["Instant", "::now"].concat(),
        ["std::time::", "Instant"].concat(),
    ];
    let mut offenders = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap_or_default();
        for clock in &clocks {
            if source.contains(clock.as_str()) {
                offenders.push(format!("{}: {clock}", file.display()));
            }
        }
    }
    assert!(offenders.is_empty(), "wall clock in: {offenders:?}");
}
