//! `subsim check` (run scenario files and check their `expect:` blocks: a test runner with
//! a filter, several seeds, parallel jobs, fail-fast, JUnit XML and JSON reports) and
//! `subsim validate` (parse and validate files without running them).

use crate::words::plural;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use subsim_engine::expect::{Checker, Failure};
use subsim_engine::Simulation;

use crate::args::{Access, CheckArgs, CheckFormat, Source, ValidateArgs};
use crate::diagnostics::{self, Level};
use crate::load::expects_limit;
use crate::{budgets, output};
use crate::{AlreadyReported, Status};
use subsim_escape::terminal;

pub fn check(args: CheckArgs) -> anyhow::Result<Status> {
    let files = collect(&args.paths, "check")?;
    // The report must not overwrite a scenario: refused before anything runs.
    if let Some(junit) = &args.junit {
        output::refuse_inputs(junit, &files)?;
    }
    let text_format = args.format == CheckFormat::Text;
    let read_with = read_with(&args.source);
    if let (Some(line), true) = (&read_with, text_format) {
        output::print_text(&format!("{line}\n"))?;
    }
    let color = text_format && output::stdout_color();
    let filter = args.filter.as_ref().map(|text| text.to_lowercase());

    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (sender, receiver) = mpsc::channel::<(usize, Option<FileResult>)>();
    let mut results: Vec<Option<Option<FileResult>>> = files.iter().map(|_| None).collect();
    let mut stdout_gone = false;
    let mut write_error = None;
    let wanted = args.jobs.min(files.len() as u32).max(1);
    // Under an address-space limit, only as many workers as it has room for (each has the
    // parser's stack and allocates as it checks); with room for none, this thread checks
    // every file itself.
    let workers = budgets::worker_threads(wanted, 0);
    std::thread::scope(|scope| {
        let (files, next, stop, filter) = (&files, &next, &stop, filter.as_deref());
        let (seeds, fail_fast) = (args.seeds, args.fail_fast);
        let (source, paths) = (&args.source, &args.paths);
        let worker = |sender: mpsc::Sender<(usize, Option<FileResult>)>| {
            move || loop {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let index = next.fetch_add(1, Ordering::SeqCst);
                let Some(path) = files.get(index) else { break };
                let options = load_options(source.access(), paths, path);
                let result = check_file(path, source, &options, filter, seeds, color);
                if fail_fast && result.as_ref().is_some_and(|result| !result.passed()) {
                    stop.store(true, Ordering::SeqCst);
                }
                if sender.send((index, result)).is_err() {
                    break;
                }
            }
        };
        // A worker has the YAML parser's stack and parses its files itself (no thread per
        // file). A thread that cannot start (memory or threads exhausted) leaves the work
        // to those that did; with none, this thread does it all before printing.
        let mut started = 0;
        for _ in 0..workers {
            match subsim_scenario::spawn_scoped_with_parser_stack(
                scope,
                "subsim-check",
                worker(sender.clone()),
            ) {
                Ok(_) => started += 1,
                Err(error) => {
                    crate::output::note(&format!(
                        "subsim: note: {started} of {workers} worker threads started \
                         ({error}); the files are checked by those"
                    ));
                    break;
                }
            }
        }
        if started == 0 {
            worker(sender.clone())();
        }
        drop(sender);
        // Over many files, a progress bar on stderr when it is a terminal (as `sweep`
        // draws); the report lines are printed above it.
        let progress = (files.len() > 1)
            .then(|| crate::sweep::progress_bar_of(files.len() as u64, args.quiet, "files"))
            .flatten();
        // Print in file order as results come in.
        let mut printed = 0;
        for (index, result) in receiver {
            if let Some(bar) = &progress {
                bar.inc(1);
            }
            results[index] = Some(result);
            while let Some(Some(result)) = results.get(printed) {
                if let (Some(result), true, false) = (result, text_format, stdout_gone) {
                    let text = crate::words::fit(&render_text(result, color, args.seeds));
                    let write = || {
                        let mut stdout = io::stdout().lock();
                        stdout
                            .write_all(text.as_bytes())
                            .and_then(|()| stdout.flush())
                    };
                    let written = match &progress {
                        Some(bar) => bar.suspend(write),
                        None => write(),
                    };
                    if let Err(error) = written {
                        // Nobody reads the rest (`| head`): stop, the exit code still tells.
                        stdout_gone = true;
                        stop.store(true, Ordering::SeqCst);
                        if !output::is_broken_pipe(&error) {
                            write_error = Some(error);
                        }
                    }
                }
                printed += 1;
            }
        }
        if let Some(bar) = progress {
            bar.finish_and_clear();
        }
    });
    if let Some(error) = write_error {
        return Err(error).context("cannot write to stdout");
    }

    let selected: Vec<&FileResult> = results.iter().flatten().flatten().collect();
    let not_run: Vec<&Path> = files
        .iter()
        .zip(&results)
        .filter(|(_, result)| result.is_none())
        .map(|(path, _)| path.as_path())
        .collect();
    if selected.is_empty() && not_run.is_empty() {
        anyhow::bail!(
            "no scenario matches --filter `{}` (searched {} by name and path)",
            args.filter.as_deref().unwrap_or_default(),
            crate::words::plural(files.len(), "file")
        );
    }
    let passed = selected.iter().filter(|result| result.passed()).count();
    let failed = selected.len() - passed;
    if let Some(path) = &args.junit {
        let xml = junit(&selected, &not_run, args.seeds);
        output::write_file(path, &files, xml.as_bytes())
            .with_context(|| format!("cannot write the JUnit report {}", path.display()))?;
    }
    let mut closing = String::new();
    if !not_run.is_empty() {
        closing.push_str(&format!(
            "stopped after the first failure (--fail-fast): {} not run\n",
            plural(not_run.len(), "file")
        ));
    }
    closing.push_str(&format!("{passed} passed, {failed} failed\n"));
    if text_format {
        if !stdout_gone {
            let mut stdout = io::stdout().lock();
            let _ = stdout
                .write_all(closing.as_bytes())
                .and_then(|()| stdout.flush());
        }
    } else {
        let json = json_report(&selected, &not_run, passed, failed, &args.source);
        let mut stdout = io::stdout().lock();
        if let Err(error) = stdout
            .write_all(json.as_bytes())
            .and_then(|()| stdout.flush())
        {
            if !output::is_broken_pipe(&error) {
                return Err(error).context("cannot write to stdout");
            }
        }
        eprint!("{closing}");
    }
    // A file that does not load is bad input (exit 2, as README says), before failures.
    let unloadable = selected.iter().any(|result| result.load_errors.is_some());
    Ok(if unloadable {
        Status::BadInput
    } else if failed > 0 {
        Status::ExpectationsFailed
    } else {
        Status::Ok
    })
}

/// Every scenario file named by `paths`: files as given, folders searched at any depth
/// (sorted within each folder). A missing path, or no file at all, is a usage error.
fn collect(paths: &[PathBuf], command: &str) -> anyhow::Result<Vec<PathBuf>> {
    // Every path must exist before anything runs: a typo is a usage error, not a failure.
    for path in paths {
        std::fs::metadata(path).with_context(|| format!("cannot {command} {}", path.display()))?;
    }
    let mut files = Vec::new();
    for path in paths {
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
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        anyhow::bail!(
            "no scenario files (*.yaml, *.yml) found in {}: nothing to {command}",
            shown.join(", ")
        );
    }
    Ok(files)
}

/// The line that says how every file was read, when `--set`, `--cap` or `--seed` changed
/// it: each applies to every file, and the report says so first.
fn read_with(source: &Source) -> Option<String> {
    let shown = source.shown();
    (!shown.is_empty())
        .then(|| format!("every file read with {}", escape_control(&shown.join(" "))))
}

/// How to load `file`: confined by `--allow-path`; a file found by searching a folder (not
/// named in `paths`) must be a regular file, since a FIFO would block forever.
fn load_options(access: &Access, paths: &[PathBuf], file: &Path) -> subsim_scenario::Options {
    subsim_scenario::Options {
        regular_file_only: !paths.iter().any(|path| path == file),
        ..access.options()
    }
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

/// What checking one file found.
struct FileResult {
    path: PathBuf,
    /// The scenario's `name`, when it loaded.
    name: Option<String>,
    /// Problems that stopped it loading: (for stdout, plain).
    load_errors: Option<(String, String)>,
    /// Warnings, one line (and its help) each.
    warnings: Vec<String>,
    expectations: usize,
    /// One run per seed, in seed order.
    runs: Vec<SeedRun>,
    /// Wall time spent loading, running and checking the file (JUnit `time` only; never
    /// part of the simulation).
    wall: Duration,
}

/// One run of a file under one seed.
struct SeedRun {
    seed: u64,
    events: u64,
    /// The safety limit that cut the run short when the file did not expect one.
    limit: Option<String>,
    failures: Vec<Failure>,
}

impl SeedRun {
    fn passed(&self) -> bool {
        self.limit.is_none() && self.failures.is_empty()
    }
}

impl FileResult {
    fn passed(&self) -> bool {
        self.load_errors.is_none() && self.runs.iter().all(SeedRun::passed)
    }
}

/// Loads, runs (under each seed) and checks one file; `None` when `filter` (lower case)
/// matches neither its path nor its name.
fn check_file(
    path: &Path,
    source: &Source,
    options: &subsim_scenario::Options,
    filter: Option<&str>,
    seeds: u64,
    color: bool,
) -> Option<FileResult> {
    let started = Instant::now();
    let path_matches =
        filter.is_none_or(|filter| path.display().to_string().to_lowercase().contains(filter));
    let mut result = FileResult {
        path: path.to_path_buf(),
        name: None,
        load_errors: None,
        warnings: Vec::new(),
        expectations: 0,
        runs: Vec::new(),
        wall: Duration::ZERO,
    };
    let loaded = match subsim_scenario::load_scenario_under(path, &source.overrides(), options) {
        Ok(mut loaded) => {
            if let Some(seed) = source.seed {
                loaded.spec.session.seed = seed;
            }
            loaded
        }
        Err(problems) => {
            if !path_matches {
                return None;
            }
            let render = |color| {
                diagnostics::render(&problems.problems, &problems.source, Level::Error, color)
            };
            result.load_errors = Some((render(color), render(false)));
            result.wall = started.elapsed();
            return Some(result);
        }
    };
    let name_matches =
        filter.is_some_and(|filter| loaded.spec.name.to_lowercase().contains(filter));
    if !path_matches && !name_matches {
        return None;
    }
    result.name = Some(loaded.spec.name.clone());
    result.warnings = loaded.warnings.iter().map(ToString::to_string).collect();
    result.expectations = loaded.expect.len();
    let limit_expected = expects_limit(&loaded.expect);
    let base = loaded.spec.session.seed;
    tracing::debug!(path = %path.display(), expectations = result.expectations, seeds, "checking");
    for offset in 0..seeds {
        let seed = base.wrapping_add(offset);
        let mut checker = Checker::new(loaded.expect.clone());
        let report = Simulation::new(loaded.spec.clone())
            .with_seed(seed)
            .run(&mut checker);
        let limit = report
            .limit
            .as_ref()
            .filter(|_| !limit_expected)
            .map(|limit| {
                format!(
                    "{}; or expect a `limit_reached` event",
                    crate::output::limit_message(limit, report.end)
                )
            });
        result.runs.push(SeedRun {
            seed,
            events: report.events,
            limit,
            failures: checker.finish(),
        });
    }
    result.wall = started.elapsed();
    Some(result)
}

/// A path, a name or a value inside one line of the report: shown, never obeyed, and
/// unable to start a line of its own (a newline in a file name cannot forge `ok   x.yaml`).
fn escape_control(text: &str) -> String {
    terminal::line(text).into_owned()
}

fn indent(text: &str, by: usize) -> String {
    text.replace('\n', &format!("\n{}", " ".repeat(by)))
}

/// The text report of one file: `ok PATH` or `FAIL PATH` with the evidence.
fn render_text(result: &FileResult, color: bool, seeds: u64) -> String {
    let shown = escape_control(&result.path.display().to_string());
    let pick = |pair: &(String, String)| {
        if color {
            pair.0.clone()
        } else {
            pair.1.clone()
        }
    };
    if let Some(errors) = &result.load_errors {
        return format!("FAIL {shown}: the file does not load\n{}", pick(errors));
    }
    let mut notes = String::new();
    for warning in &result.warnings {
        let warning = terminal::text(warning);
        notes.push_str(&format!("     warning: {}\n", indent(&warning, 5)));
    }
    if result.passed() {
        let note = if result.expectations == 0 {
            " (no expectations)"
        } else {
            ""
        };
        let seeds_note = if seeds > 1 {
            format!(" ({seeds} seeds)")
        } else {
            String::new()
        };
        return format!("ok   {shown}{note}{seeds_note}\n{notes}");
    }
    let mut text = format!("FAIL {shown}\n{notes}");
    let failing: Vec<&SeedRun> = result.runs.iter().filter(|run| !run.passed()).collect();
    if seeds > 1 {
        let list: Vec<String> = failing.iter().map(|run| run.seed.to_string()).collect();
        text.push_str(&format!(
            "  fails under {} of {seeds} seeds: {}\n",
            failing.len(),
            list.join(", ")
        ));
    }
    // The evidence of the first failing seed (the others are listed above).
    if let Some(run) = failing.first() {
        if seeds > 1 {
            text.push_str(&format!(
                "  seed {} (rerun: subsim run {shown} --seed {}):\n",
                run.seed, run.seed
            ));
        }
        // Each value is one field of one line: names in it cannot forge lines.
        let line = |text: &str| terminal::line(text).into_owned();
        if let Some(limit) = &run.limit {
            text.push_str(&format!("  {}\n", line(limit)));
        }
        for failure in &run.failures {
            let location = failure
                .location
                .as_deref()
                .map_or_else(|| shown.clone(), line);
            text.push_str(&format!("  expect #{} at {location}\n", failure.index + 1));
            text.push_str(&format!("    expected: {}\n", line(&failure.expected)));
            text.push_str(&format!("    got:      {}\n", line(&failure.got)));
            for (index, event) in failure.events.iter().enumerate() {
                let label = if index == 0 { "events:  " } else { "         " };
                text.push_str(&format!("    {label} {}\n", line(event)));
            }
            for hint in &failure.hints {
                text.push_str(&format!("    {}\n", line(hint)));
            }
        }
    }
    text
}

// -- JSON ---------------------------------------------------------------------------------

/// A JSON string literal, by the workspace's one JSON escaper.
fn json_string(text: &str) -> String {
    subsim_escape::json::string(text)
}

fn json_list(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|item| json_string(item)).collect();
    format!("[{}]", inner.join(","))
}

/// The whole report as one JSON object (see docs/scenario-format.md).
fn json_report(
    selected: &[&FileResult],
    not_run: &[&Path],
    passed: usize,
    failed: usize,
    source: &Source,
) -> String {
    let mut files = Vec::new();
    for result in selected {
        let status = if result.load_errors.is_some() {
            "error"
        } else if result.passed() {
            "passed"
        } else {
            "failed"
        };
        let mut object = format!(
            "{{\"path\":{},\"name\":{},\"status\":\"{status}\",\"expectations\":{}",
            json_string(&result.path.display().to_string()),
            result
                .name
                .as_deref()
                .map_or("null".to_string(), json_string),
            result.expectations
        );
        if let Some((_, plain)) = &result.load_errors {
            object.push_str(&format!(",\"errors\":{}", json_string(plain)));
        }
        object.push_str(&format!(",\"warnings\":{}", json_list(&result.warnings)));
        let runs: Vec<String> = result
            .runs
            .iter()
            .map(|run| {
                let failures: Vec<String> = run
                    .failures
                    .iter()
                    .map(|failure| {
                        format!(
                            "{{\"expect\":{},\"location\":{},\"expected\":{},\"got\":{},\"events\":{},\"hints\":{}}}",
                            failure.index + 1,
                            failure
                                .location
                                .as_deref()
                                .map_or("null".to_string(), json_string),
                            json_string(&failure.expected),
                            json_string(&failure.got),
                            json_list(&failure.events),
                            json_list(&failure.hints)
                        )
                    })
                    .collect();
                format!(
                    "{{\"seed\":{},\"passed\":{},\"events\":{},\"limit\":{},\"failures\":[{}]}}",
                    run.seed,
                    run.passed(),
                    run.events,
                    run.limit.as_deref().map_or("null".to_string(), json_string),
                    failures.join(",")
                )
            })
            .collect();
        object.push_str(&format!(",\"runs\":[{}]}}", runs.join(",")));
        files.push(object);
    }
    let not_run: Vec<String> = not_run
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    // `read_with`: the `--set`, `--cap` and `--seed` every file was read with (issue #32).
    format!(
        "{{\"files\":[{}],\"passed\":{passed},\"failed\":{failed},\"not_run\":{},\"read_with\":{}}}\n",
        files.join(","),
        json_list(&not_run),
        json_list(&source.shown())
    )
}

// -- JUnit --------------------------------------------------------------------------------

/// Text as XML character data (`subsim_escape::xml`): markup escaped, characters XML 1.0
/// forbids (control codes such as ESC, U+FFFE) shown as `\u{…}`.
fn xml(text: &str) -> String {
    subsim_escape::xml::text(text).into_owned()
}

/// Text as an XML attribute value: as [`xml`], and newlines and tabs kept as references.
fn xml_attr(text: &str) -> String {
    subsim_escape::xml::attr(text).into_owned()
}

/// `classname` and `name` of a file's test case: its folder (dotted) and file name.
fn case_names(path: &Path) -> (String, String) {
    let folder = path
        .parent()
        .map(|parent| parent.display().to_string())
        .unwrap_or_default();
    let classname = folder
        .trim_start_matches("./")
        .trim_end_matches('/')
        .replace(['/', '\\'], ".");
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().to_string())
        .unwrap_or_else(|| path.display().to_string());
    (
        if classname.is_empty() {
            "scenarios".to_string()
        } else {
            classname
        },
        name,
    )
}

/// The JUnit XML report: one `testcase` per file (a failure lists every failing seed).
/// `time` is wall time in seconds: a file's own for its `testcase`, their sum for the
/// suite; a file `--fail-fast` did not run has `time="0.000"`.
fn junit(selected: &[&FileResult], not_run: &[&Path], seeds: u64) -> String {
    let errors = selected
        .iter()
        .filter(|result| result.load_errors.is_some())
        .count();
    let failures = selected
        .iter()
        .filter(|result| result.load_errors.is_none() && !result.passed())
        .count();
    let tests = selected.len() + not_run.len();
    let time: Duration = selected.iter().map(|result| result.wall).sum();
    let mut cases = String::new();
    for result in selected {
        let (classname, name) = case_names(&result.path);
        cases.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" time=\"{:.3}\"",
            xml_attr(&classname),
            xml_attr(&name),
            xml_attr(&result.path.display().to_string()),
            result.wall.as_secs_f64()
        ));
        if let Some((_, plain)) = &result.load_errors {
            cases.push_str(&format!(
                ">\n      <error message=\"the file does not load\">{}</error>\n    </testcase>\n",
                xml(plain)
            ));
            continue;
        }
        if result.passed() {
            match &result.name {
                Some(scenario) => cases.push_str(&format!(
                    ">\n      <system-out>{}</system-out>\n    </testcase>\n",
                    xml(scenario)
                )),
                None => cases.push_str("/>\n"),
            }
            continue;
        }
        let message = result
            .runs
            .iter()
            .find(|run| !run.passed())
            .map(|run| match (run.failures.first(), &run.limit) {
                (Some(failure), _) => format!(
                    "expect #{}: expected {}; got {}",
                    failure.index + 1,
                    failure.expected,
                    failure.got
                ),
                (None, Some(limit)) => limit.clone(),
                (None, None) => "failed".to_string(),
            })
            .unwrap_or_default();
        let body = render_text(result, false, seeds);
        cases.push_str(&format!(
            ">\n      <failure message=\"{}\" type=\"expectation\">{}</failure>\n    </testcase>\n",
            xml_attr(&message),
            xml(&body)
        ));
    }
    for path in not_run {
        let (classname, name) = case_names(path);
        cases.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" time=\"0.000\">\n      <skipped message=\"not run: --fail-fast stopped after the first failure\"/>\n    </testcase>\n",
            xml_attr(&classname),
            xml_attr(&name),
            xml_attr(&path.display().to_string())
        ));
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <testsuites name=\"subsim check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{}\" time=\"{time:.3}\">\n  \
         <testsuite name=\"subsim check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{}\" time=\"{time:.3}\">\n\
         {cases}  </testsuite>\n</testsuites>\n",
        not_run.len(),
        not_run.len(),
        time = time.as_secs_f64()
    )
}

// -- validate -------------------------------------------------------------------------------

pub fn validate(args: ValidateArgs) -> anyhow::Result<Status> {
    let files = collect(&args.paths, "validate")?;
    let shown = args.edit.shown();
    if !shown.is_empty() {
        output::print_text(&format!(
            "every file read with {}\n",
            escape_control(&shown.join(" "))
        ))?;
    }
    let mut bad = 0usize;
    for file in &files {
        let options = load_options(&args.edit.access, &args.paths, file);
        let loaded = match crate::load::report(subsim_scenario::load_scenario_under(
            file,
            &args.edit.overrides(),
            &options,
        )) {
            Ok(loaded) => loaded,
            Err(error) => {
                if !error.is::<AlreadyReported>() {
                    let message = format!("{error:#}");
                    crate::output::note(&format!(
                        "subsim: error: {}",
                        output::escape_controls(&message)
                    ));
                }
                bad += 1;
                continue;
            }
        };
        let warnings = match loaded.warnings.len() {
            0 => String::new(),
            1 => ", 1 warning".to_string(),
            many => format!(", {many} warnings"),
        };
        output::print_text(&format!(
            "ok   {}: {} ({}{warnings})\n",
            escape_control(&file.display().to_string()),
            escape_control(&loaded.spec.name),
            plural(loaded.expect.len(), "expectation")
        ))?;
    }
    if bad > 0 {
        if files.len() > 1 {
            crate::output::note(&format!(
                "subsim: {} of {} do not validate",
                plural(bad, "file"),
                files.len()
            ));
        }
        return Err(AlreadyReported.into());
    }
    Ok(Status::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_escape_quotes_and_control_codes() {
        assert_eq!(json_string("a\"b\\c\n\u{1b}"), "\"a\\\"b\\\\c\\n\\u001b\"");
    }

    #[test]
    fn xml_escapes_markup_and_forbidden_characters() {
        assert_eq!(
            xml("<a & 'b'>\u{1b}[31m"),
            "&lt;a &amp; &#39;b&#39;&gt;\\u{1b}[31m"
        );
    }

    #[test]
    fn test_cases_are_named_by_folder_and_file() {
        assert_eq!(
            case_names(Path::new("scenarios/cap/fan-out.yaml")),
            ("scenarios.cap".to_string(), "fan-out.yaml".to_string())
        );
        assert_eq!(
            case_names(Path::new("x.yaml")),
            ("scenarios".to_string(), "x.yaml".to_string())
        );
    }
}
