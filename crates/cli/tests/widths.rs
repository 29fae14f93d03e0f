//! Issue #32 item 4: every text output fits `COLUMNS`. Each command's text for people runs at
//! 60, 80 and 100 columns — the narration and the statistics table of every shipped
//! scenario, the other commands over a scenario of every folder — and no line of stdout or
//! stderr may be wider. (At COLUMNS=80 the widest lines were 240 columns for `diff`, 169
//! for `explain resume`, 131 for `explore`, 127 for `panel --at 10s`, 118 for `tools
//! --compare` and 102 for `run --format summary`.)

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::support::{command, repo_root};

const WIDTHS: [usize; 3] = [60, 80, 100];

/// Every `*.yaml` under `scenarios/`, sorted, as paths relative to the repository.
fn shipped() -> Vec<PathBuf> {
    fn walk(dir: &Path, root: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir)
            .expect("the scenarios folder")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, root, found);
            } else if path.extension().is_some_and(|ext| ext == "yaml") {
                found.push(path.strip_prefix(root).expect("inside").to_path_buf());
            }
        }
    }
    let root = repo_root();
    let mut found = Vec::new();
    walk(&root.join("scenarios"), &root, &mut found);
    found.sort();
    found
}

/// A scenario with a `load:` block: millions of events, so only its statistics are drawn.
fn is_load(path: &Path) -> bool {
    std::fs::read_to_string(repo_root().join(path))
        .is_ok_and(|text| text.lines().any(|line| line.starts_with("load:")))
}

/// The first scenario of every folder, and the demo.
fn sample() -> Vec<PathBuf> {
    let mut seen = Vec::new();
    let mut picked = vec![PathBuf::from("scenarios/demo.yaml")];
    for path in shipped() {
        let folder = path.parent().map(Path::to_path_buf);
        if !seen.contains(&folder) && !is_load(&path) {
            seen.push(folder);
            picked.push(path);
        }
    }
    picked
}

/// The lines of a run of `args` at `width` columns wider than it, as `(width, line)`.
fn too_wide(args: &[String], width: usize) -> Vec<String> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = command(&args)
        .current_dir(repo_root())
        .env("COLUMNS", width.to_string())
        .output()
        .expect("the subsim binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    text.lines()
        .filter(|line| line.chars().count() > width)
        .map(|line| format!("{} columns: {line}", line.chars().count()))
        .collect()
}

/// Runs every command line at every width on four threads; every line wider than its
/// width is reported with its command.
fn check_all(runs: Vec<(Vec<String>, usize)>) {
    let next = Mutex::new(runs.into_iter());
    let wide = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| loop {
                let Some((args, width)) = next.lock().expect("queue").next() else {
                    break;
                };
                let lines = too_wide(&args, width);
                if !lines.is_empty() {
                    wide.lock().expect("found").push(format!(
                        "COLUMNS={width} subsim {}:\n  {}",
                        args.join(" "),
                        lines.join("\n  ")
                    ));
                }
            });
        }
    });
    let wide = wide.into_inner().expect("found");
    assert!(wide.is_empty(), "{}", wide.join("\n"));
}

fn words(text: &str) -> Vec<String> {
    text.split(' ').map(str::to_string).collect()
}

#[test]
fn every_shipped_scenario_s_narration_and_statistics_fit_60_80_and_100_columns() {
    let mut runs = Vec::new();
    for path in shipped() {
        let file = path.display().to_string();
        if is_load(&path) {
            runs.push((words(&format!("run {file} --format summary")), 60));
            continue;
        }
        for width in WIDTHS {
            runs.push((words(&format!("run {file}")), width));
            runs.push((words(&format!("run {file} --format summary")), width));
        }
    }
    check_all(runs);
}

#[test]
fn every_command_s_text_fits_60_80_and_100_columns() {
    let mut lines: Vec<Vec<String>> = vec![
        words("rules"),
        words("explain resume"),
        words("explain permission"),
        words("explain CAP-1"),
        words("explain DEPTH-3"),
        words("explain TOOLS-1"),
        words("explain TOOLS-11"),
        words("explain PERM-9"),
        words("explain Q-29"),
        words("explain D-9"),
        words("erlang --cap 5 --load 3"),
        words("erlang --target 0.01 --load 20"),
        words("check scenarios/cap scenarios/depth"),
        words("validate scenarios/tools"),
        // Errors: usage, a missing file, a scenario that does not load.
        words("explain no-such-rule-or-words-anywhere-in-the-whole-catalogue"),
        words("run scenarios/no/such/folder/and/a/rather/long/file/name/that/is/not/there.yaml"),
        vec![
            "explain".into(),
            "depth limit of a subagent that was resumed by a teammate in the background".into(),
        ],
    ];
    for path in sample() {
        let file = path.display().to_string();
        lines.push(words(&format!("panel {file} --at 10s")));
        lines.push(words(&format!("diff {file} --from 2.1.100 --to 2.1.292")));
        lines.push(words(&format!("explore {file} --max-orderings 20")));
        lines.push(words(&format!(
            "tools --file {file} --agent general-purpose --compare"
        )));
        lines.push(words(&format!("run {file} --detail full")));
        lines.push(words(&format!("run {file} --format gantt")));
    }
    let runs = lines
        .into_iter()
        .flat_map(|args| WIDTHS.map(|width| (args.clone(), width)))
        .collect();
    check_all(runs);
}
