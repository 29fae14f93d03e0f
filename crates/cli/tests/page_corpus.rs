//! Every shipped scenario (`scenarios/**.yaml`) in the playground page, in one headless
//! Chromium session (`support/browser.rs`): each is picked in the page's picker, which
//! draws it at once (instant speed), and must reach "done" with no script error in the
//! browser's console. What the page drew (the session's end, runs started, finished and
//! rejected, the most running at once) must equal what `subsim run FILE --format json`
//! says of the same file.
//!
//! The server reads no file of its own (docs/playground.md): a scenario that names a file
//! (`file:`, `agent_dirs`) is refused with the loader's message, and the page says so. Those
//! are listed, each with its reason, not skipped silently; any other refusal fails.
//!
//! The server runs with `run`'s own limits here, so that the page and the command line run
//! the same scenario to the same end.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fantoccini::wd::TimeoutConfiguration;
use serde_json::{json, Value};

use crate::support::browser::{browser_available, Browser};
use crate::support::server::Server;
use crate::support::{block_on, command, repo_root};

/// How long one scenario may take in the page before the test gives up on it.
const PER_SCENARIO: Duration = Duration::from_secs(240);

/// Picks `path` in the picker and waits (in the page) until the run is over; answers
/// what the page shows and drew.
const PICK_AND_WAIT: &str = r#"
const [path, limitMs, done] = arguments;
const status = document.getElementById('status');
status.textContent = '';
delete status.dataset.state;
const picker = document.getElementById('picker');
picker.value = path;
picker.dispatchEvent(new Event('change'));
const started = performance.now();
const poll = () => {
  const state = status.dataset.state;
  if (['done', 'problems', 'stopped'].includes(state)) {
    const t = document.getElementById('timeline');
    done({
      state,
      status: status.textContent,
      problems: document.getElementById('problems').textContent,
      picked: picker.value,
      end: t.dataset.end === '' || t.dataset.end === undefined ? null : Number(t.dataset.end),
      runs: Number(t.dataset.runs), rejected: Number(t.dataset.rejected),
      finished: Number(t.dataset.finished), peak: Number(t.dataset.peak),
      bars: document.querySelectorAll('#timeline [data-agent]').length,
      marks: document.querySelectorAll('#timeline .reject').length,
      expect: document.getElementById('expect').textContent,
      clock: document.getElementById('clock').textContent,
      ms: Math.round(performance.now() - started),
    });
  } else if (performance.now() - started > limitMs) {
    done({ state: 'timeout', status: status.textContent });
  } else {
    setTimeout(poll, 5);
  }
};
poll();
"#;

/// What the command line says of `file`: `run --format json`.
fn cli_summary(file: &Path) -> Value {
    let output = command(&["run"])
        .arg(file)
        .args(["--format", "json"])
        .output()
        .expect("subsim runs");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "{}: run --format json is not JSON ({error}): {}",
            file.display(),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn collect(folder: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(folder).expect("a folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            collect(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "yaml") {
            found.push(path);
        }
    }
}

#[test]
fn every_shipped_scenario_renders_in_the_playground_page_as_the_cli_runs_it() {
    if !browser_available() {
        return;
    }
    let root = repo_root();
    let mut files = Vec::new();
    collect(&root.join("scenarios"), &mut files);
    files.sort();
    assert!(files.len() > 200, "{}", files.len());
    // `SUBSIM_PAGE_CORPUS=WORD` runs only the scenarios whose path has WORD (to look into
    // one); CI runs them all.
    if let Some(word) = std::env::var_os("SUBSIM_PAGE_CORPUS") {
        let word = word.to_string_lossy().into_owned();
        files.retain(|file| file.to_string_lossy().contains(&word));
    }
    let relative: Vec<String> = files
        .iter()
        .map(|file| {
            file.strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    let server = Server::start(&[
        "--max-events",
        "100000000",
        "--max-agents",
        "20000000",
        "--max-steps",
        "1000000000",
    ]);
    let started = Instant::now();
    // The command line's answers are worked out on a thread of their own while the page runs.
    let (pages, cli) = std::thread::scope(|scope| {
        let cli = scope.spawn(|| {
            files
                .iter()
                .map(|file| cli_summary(file))
                .collect::<Vec<_>>()
        });
        let pages = block_on(in_the_page(&server, &relative));
        (pages, cli.join().expect("the command line's answers"))
    });
    let elapsed = started.elapsed();

    let mut failures = Vec::new();
    let mut refused = BTreeMap::new();
    let mut rendered = 0;
    for ((path, (page, errors)), cli) in relative.iter().zip(&pages).zip(&cli) {
        if !errors.is_empty() {
            failures.push(format!("{path}: script errors: {errors:?}"));
        }
        let source = std::fs::read_to_string(root.join(path)).expect("the scenario");
        match page["state"].as_str() {
            Some("done") => {}
            Some("problems") if source.contains("file:") || source.contains("agent_dirs") => {
                let problems = page["problems"].as_str().unwrap_or_default().to_string();
                if problems.contains("cannot") || problems.contains("outside") {
                    refused.insert(path.clone(), problems);
                } else {
                    failures.push(format!("{path}: refused for another reason: {page}"));
                }
                continue;
            }
            _ => {
                failures.push(format!("{path}: did not reach done: {page}"));
                continue;
            }
        }
        if page["picked"] != json!(path) {
            failures.push(format!("{path}: the picker shows {}", page["picked"]));
        }
        let finished: u64 = cli["finished"]
            .as_object()
            .map(|by| by.values().filter_map(Value::as_u64).sum())
            .unwrap_or_default();
        let want = json!({
            "end": cli["makespan_us"],
            "runs": cli["spawns"]["started"],
            "rejected": cli["spawns"]["rejected"],
            "finished": finished,
            "peak": cli["running"]["peak"],
        });
        let got = json!({
            "end": page["end"],
            "runs": page["runs"],
            "rejected": page["rejected"],
            "finished": page["finished"],
            "peak": page["peak"],
        });
        if want != got {
            failures.push(format!("{path}: the page drew {got}; the CLI says {want}"));
        }
        // Every run has its bar (up to the 400 rows drawn), every rejection its mark.
        let runs = page["runs"].as_u64().unwrap_or_default();
        if page["bars"].as_u64() != Some(runs.min(400)) || page["marks"] != page["rejected"] {
            failures.push(format!("{path}: bars and marks: {page}"));
        }
        rendered += 1;
    }
    eprintln!(
        "{rendered} of {} shipped scenarios rendered in the page as the CLI runs them, in {:.1} s; \
         {} refused by the server by design (they name files it does not read):",
        relative.len(),
        elapsed.as_secs_f64(),
        refused.len()
    );
    let mut slowest: Vec<(u64, &String)> = relative
        .iter()
        .zip(&pages)
        .map(|(path, (page, _))| (page["ms"].as_u64().unwrap_or_default(), path))
        .collect();
    slowest.sort_unstable_by(|a, b| b.cmp(a));
    for (ms, path) in slowest.iter().take(5) {
        eprintln!("  slowest in the page: {path}: {ms} ms");
    }
    for (path, reason) in &refused {
        eprintln!("  {path}: {}", reason.lines().next().unwrap_or_default());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(rendered + refused.len(), relative.len());
    if std::env::var_os("SUBSIM_PAGE_CORPUS").is_none() {
        // The shipped scenarios that name files (docs/playground.md says how many).
        assert_eq!(refused.len(), 11, "{refused:?}");
    }
}

/// Picks each of `paths` in one page in one browser session; answers, for each, what the
/// page showed and the console errors it caused.
async fn in_the_page(server: &Server, paths: &[String]) -> Vec<(Value, Vec<Value>)> {
    let page = Browser::start("page-corpus", 1400, 1000).await;
    page.client
        .update_timeouts(TimeoutConfiguration::new(
            Some(PER_SCENARIO + Duration::from_secs(30)),
            None,
            None,
        ))
        .await
        .expect("the script timeout");
    page.client
        .goto(&server.url("/"))
        .await
        .expect("the page opens");
    page.wait_until(
        "the page to be ready",
        "return document.body.dataset.ready === 'true'",
    )
    .await;
    // The demo, drawn on load, is done before the first pick.
    page.wait_until(
        "the demo drawn on load",
        "return document.getElementById('status').dataset.state === 'done'",
    )
    .await;
    let mut seen = Vec::new();
    for path in paths {
        let answer = page
            .client
            .execute_async(
                PICK_AND_WAIT,
                vec![json!(path), json!(PER_SCENARIO.as_millis() as u64)],
            )
            .await
            .unwrap_or_else(|error| json!({"state": "webdriver", "error": error.to_string()}));
        seen.push((answer, page.errors().await));
    }
    page.close().await;
    seen
}
