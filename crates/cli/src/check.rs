//! `subsim check` (run scenario files and check their `expect:` blocks) and
//! `subsim validate` (parse and validate one file without running it).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use subsim_engine::expect::{Checker, Expectation, FilterValue, Located};
use subsim_engine::Simulation;

use crate::args::{CheckArgs, ValidateArgs};
use crate::diagnostics::{self, Level};
use crate::output;
use crate::run::load;
use crate::Status;

pub fn check(args: CheckArgs) -> anyhow::Result<Status> {
    // Every path must exist before anything runs: a typo is a usage error, not a failure.
    for path in &args.paths {
        std::fs::metadata(path).with_context(|| format!("cannot check {}", path.display()))?;
    }
    let mut files = Vec::new();
    for path in &args.paths {
        if path.is_dir() {
            let mut found = Vec::new();
            walk(path, &mut found)
                .with_context(|| format!("cannot read the folder {}", path.display()))?;
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    if files.is_empty() {
        eprintln!("subsim: warning: no scenario files (*.yaml, *.yml) found");
    }
    let color = output::stdout_color();
    let mut stdout = io::stdout().lock();
    let (mut passed, mut failed) = (0u64, 0u64);
    for file in &files {
        let (ok, text) = check_file(file, color);
        if ok {
            passed += 1;
        } else {
            failed += 1;
        }
        if let Err(error) = stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
        {
            if output::is_broken_pipe(&error) {
                // Nobody reads the rest; the exit code still tells.
                return Ok(if failed > 0 {
                    Status::ExpectationsFailed
                } else {
                    Status::Ok
                });
            }
            return Err(error).context("cannot write to stdout");
        }
    }
    let _ = writeln!(stdout, "{passed} passed, {failed} failed");
    let _ = stdout.flush();
    Ok(if failed > 0 {
        Status::ExpectationsFailed
    } else {
        Status::Ok
    })
}

/// Every `*.yaml` / `*.yml` file under `folder`, at any depth (unsorted).
fn walk(folder: &Path, found: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in std::fs::read_dir(folder)? {
        let entry = entry?;
        let path = entry.path();
        // `file_type` does not follow symlinks, so a link cycle cannot loop forever.
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&path, found)?;
        } else if matches!(
            path.extension().and_then(|ext| ext.to_str()),
            Some("yaml" | "yml")
        ) {
            found.push(path);
        }
    }
    Ok(())
}

/// Loads, runs and checks one file. Returns whether it passed, and what to print.
fn check_file(path: &Path, color: bool) -> (bool, String) {
    let shown = path.display();
    let loaded = match subsim_scenario::load_scenario(path) {
        Ok(loaded) => loaded,
        Err(problems) => {
            let rendered =
                diagnostics::render(&problems.problems, &problems.source, Level::Error, color);
            return (
                false,
                format!("FAIL {shown}: the file does not load\n{rendered}"),
            );
        }
    };
    let mut text = String::new();
    let mut notes = String::new();
    for warning in &loaded.warnings {
        notes.push_str(&format!(
            "     warning: {}\n",
            indent(&warning.to_string(), 5)
        ));
    }
    let expectations = loaded.expect.len();
    let limit_expected = expects_limit(&loaded.expect);
    let mut checker = Checker::new(loaded.expect);
    tracing::debug!(path = %shown, expectations, "checking");
    let report = Simulation::new(loaded.spec).run(&mut checker);
    let failures = checker.finish();
    let limit_failure = report.limit.as_ref().filter(|_| !limit_expected);
    if failures.is_empty() && limit_failure.is_none() {
        let note = if expectations == 0 {
            " (no expectations)"
        } else {
            ""
        };
        text.push_str(&format!("ok   {shown}{note}\n"));
        text.push_str(&notes);
        return (true, text);
    }
    text.push_str(&format!("FAIL {shown}\n"));
    text.push_str(&notes);
    if let Some(limit) = limit_failure {
        text.push_str(&format!(
            "  the run was stopped by its safety limit `{}` ({}) at {}; raise \
             `session.limits.{}`, or expect a `limit_reached` event\n",
            limit.limit, limit.value, report.end, limit.limit
        ));
    }
    for failure in failures {
        let location = failure.location.unwrap_or_else(|| shown.to_string());
        text.push_str(&format!("  expect #{} at {location}\n", failure.index + 1));
        text.push_str(&format!("    expected: {}\n", failure.expected));
        text.push_str(&format!("    got:      {}\n", failure.got));
        for (index, event) in failure.events.iter().enumerate() {
            let label = if index == 0 { "events:  " } else { "         " };
            text.push_str(&format!("    {label} {event}\n"));
        }
    }
    (false, text)
}

/// Does the file expect its run to be cut short (a `limit_reached` event in a filter)?
fn expects_limit(expectations: &[Located]) -> bool {
    let names_limit = |filter: &subsim_engine::expect::EventFilter| {
        filter.fields.iter().any(|(name, value)| {
            name == "kind" && *value == FilterValue::Str("limit_reached".to_string())
        })
    };
    expectations
        .iter()
        .any(|located| match &located.expectation {
            Expectation::Count { filter, .. } | Expectation::Exists(filter) => names_limit(filter),
            Expectation::Order(filters) => filters.iter().any(names_limit),
            _ => false,
        })
}

fn indent(text: &str, by: usize) -> String {
    text.replace('\n', &format!("\n{}", " ".repeat(by)))
}

pub fn validate(args: ValidateArgs) -> anyhow::Result<Status> {
    let loaded = load(&args.file)?;
    let warnings = match loaded.warnings.len() {
        0 => String::new(),
        1 => ", 1 warning".to_string(),
        many => format!(", {many} warnings"),
    };
    println!(
        "ok   {}: {} ({} expectations{warnings})",
        args.file.display(),
        loaded.spec.name,
        loaded.expect.len()
    );
    Ok(Status::Ok)
}
