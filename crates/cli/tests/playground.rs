//! `subsim serve`, the playground, as people and scripts use it: its API (answers, bounds,
//! the streamed trace against `subsim run --format jsonl` for every shipped scenario), a
//! full server and clients that go away or stall, the page in a real browser (Debian's
//! chromium through fantoccini; screenshots of each stage in `target/playground-*.png`),
//! and a load of honest and hostile clients at once.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::server::{client, send, trace_and_end, Server};
use crate::support::{block_on, browser, repo_root, server, TempDir, BINARY};
use serde_json::{json, Value};

fn demo() -> String {
    std::fs::read_to_string(repo_root().join("scenarios/demo.yaml")).expect("the demo")
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|error| panic!("{error}: {text}"))
}

#[test]
fn the_api_answers_as_documented() {
    let server = Server::start(&[]);
    block_on(async {
        let http = client();
        // The list: the demo first, then by family, each with its description.
        let list = send(&http, "GET", &server.url("/api/scenarios"), "").await;
        assert_eq!(list.status, 200);
        let list = json(&list.body);
        let list = list.as_array().expect("a list");
        assert_eq!(list[0]["path"], "scenarios/demo.yaml");
        assert!(list[0]["description"].as_str().unwrap().contains("cap"));
        let families: Vec<&str> = list[1..]
            .iter()
            .map(|item| item["family"].as_str().unwrap())
            .collect();
        assert!(
            families.windows(2).all(|pair| pair[0] <= pair[1]),
            "by family"
        );
        assert!(list.len() > 200, "{}", list.len());
        let source = send(
            &http,
            "GET",
            &server.url("/api/scenario/scenarios/demo.yaml"),
            "",
        )
        .await;
        assert_eq!(source.body, demo());

        // check: fine, then a typo located as the command line locates it.
        let ok = send(
            &http,
            "POST",
            &server.url("/api/check"),
            &json!({"scenario": demo()}).to_string(),
        )
        .await;
        assert_eq!(
            (ok.status, json(&ok.body)["ok"].clone()),
            (200, json!(true))
        );
        let broken = demo().replacen("\nmain:", "\nmian:", 1);
        let line = broken.lines().position(|l| l.starts_with("mian:")).unwrap() + 1;
        let bad = send(
            &http,
            "POST",
            &server.url("/api/check"),
            &json!({"scenario": broken}).to_string(),
        )
        .await;
        assert_eq!(bad.status, 422, "{}", bad.body);
        let problem = json(&bad.body)["diagnostics"][0].clone();
        assert_eq!(
            (problem["line"].as_u64(), problem["column"].as_u64()),
            (Some(line as u64), Some(1))
        );
        let dir = std::env::temp_dir().join(format!("subsim-playground-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("broken.yaml");
        std::fs::write(&file, &broken).unwrap();
        let cli = Command::new(BINARY)
            .arg("validate")
            .arg(&file)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let cli = String::from_utf8_lossy(&cli.stdout).into_owned()
            + &String::from_utf8_lossy(&cli.stderr);
        // The same words (the terminal's rendering wraps the help at 100 columns).
        let words = |text: &str| {
            text.replace('│', " ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert!(
            words(&cli).contains(&words(problem["message"].as_str().unwrap())),
            "{cli}\n{problem}"
        );
        assert!(
            words(&cli).contains(&words(problem["help"].as_str().unwrap())),
            "{cli}\n{problem}"
        );
        assert!(cli.contains(&format!("broken.yaml:{line}:1")), "{cli}");
        let _ = std::fs::remove_dir_all(&dir);
        // A control's override is checked like --set: located at the override.
        let set = json!({"scenario": demo(), "set": {"session.kind": "batch"}}).to_string();
        let bad = send(&http, "POST", &server.url("/api/check"), &set).await;
        assert_eq!(bad.status, 422, "{}", bad.body);
        assert!(json(&bad.body)["diagnostics"][0]["file"]
            .as_str()
            .unwrap()
            .starts_with("--set session.kind"));

        // A scenario reads no file of the server's.
        let reader = "name: x\nagents:\n  spy: {file: /etc/passwd}\nmain: []\n";
        let refused = send(
            &http,
            "POST",
            &server.url("/api/check"),
            &json!({"scenario": reader}).to_string(),
        )
        .await;
        assert_eq!(refused.status, 422, "{}", refused.body);
        assert!(!refused.body.contains("root:"), "{}", refused.body);
        let message = json(&refused.body)["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(message.contains("/etc/passwd"), "{message}");

        // Bounds and bad bodies.
        // A 2 MiB body is refused by its Content-Length before it is read (the server may
        // close the connection while a client still sends, so only the head goes here).
        let big = {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut socket = tokio::net::TcpStream::connect(server.addr).await.unwrap();
            let head =
                "POST /api/check HTTP/1.1\r\nHost: x\r\nContent-Length: 2097152\r\n\r\n{\"scen";
            socket.write_all(head.as_bytes()).await.unwrap();
            let mut answer = vec![0u8; 4096];
            let read = socket.read(&mut answer).await.unwrap();
            String::from_utf8_lossy(&answer[..read]).into_owned()
        };
        assert!(big.starts_with("HTTP/1.1 413"), "{big}");
        assert!(
            big.contains("request body bytes budget of 1048576 bytes"),
            "{big}"
        );
        let garbled = send(&http, "POST", &server.url("/api/run"), "{\"scenario\": ").await;
        assert_eq!(garbled.status, 400, "{}", garbled.body);
        assert!(json(&garbled.body)["error"]
            .as_str()
            .unwrap()
            .contains("not JSON"));
        let speed = json!({"scenario": demo(), "speed": -3}).to_string();
        assert_eq!(
            send(&http, "POST", &server.url("/api/run"), &speed)
                .await
                .status,
            400
        );
        assert_eq!(
            send(&http, "GET", &server.url("/nothing"), "").await.status,
            404
        );

        // The page: served with its CSP, loading only this server's files.
        let page = send(&http, "GET", &server.url("/"), "").await;
        let csp = page.headers["content-security-policy"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
            "{csp}"
        );
        assert!(
            !page.body.contains("http://") && !page.body.contains("https://"),
            "no network"
        );

        // What a click shows: explain text, the panel at an instant, where two runs part.
        let explained = send(&http, "GET", &server.url("/api/explain/cap-1"), "").await;
        assert!(json(&explained.body)["text"]
            .as_str()
            .unwrap()
            .starts_with("CAP-1:"));
        let at = json!({"scenario": demo(), "at_us": 10_000_000}).to_string();
        let panel = send(&http, "POST", &server.url("/api/panel"), &at).await;
        assert!(
            json(&panel.body)["text"]
                .as_str()
                .unwrap()
                .contains("researcher"),
            "{}",
            panel.body
        );
        let compare = json!({"scenario": demo(), "set": {}, "other": {"session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS": "30"}});
        let parted = send(
            &http,
            "POST",
            &server.url("/api/compare"),
            &compare.to_string(),
        )
        .await;
        let text = json(&parted.body)["text"].as_str().unwrap().to_string();
        assert!(text.contains("The traces part at event #62"), "{text}");
        assert!(text.contains("cap: 20 → 30"), "{text}");
    });
}

/// Every shipped scenario: the `data:` lines of `/api/run` are the lines of
/// `subsim run FILE --format jsonl`, `event: model` has the end and the counts
/// of `--format model`, and `event: end` is `--format json`. (The server's
/// limits are raised to `run`'s own for this; scenarios that name other files are refused
/// by the server, which reads none, and that refusal is checked instead.)
#[test]
fn the_streamed_trace_is_run_format_jsonl_for_every_shipped_scenario() {
    let server = Server::start(&[
        "--max-events",
        "100000000",
        "--max-agents",
        "20000000",
        "--max-steps",
        "1000000000",
    ]);
    let mut files = Vec::new();
    collect(&repo_root().join("scenarios"), &mut files);
    files.sort();
    assert!(files.len() > 200);
    // Two at a time: the server and the command line each run one scenario while the
    // other is read.
    let halves = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|half| {
                let (files, server) = (&files, &server);
                scope.spawn(move || stream_and_compare(server, files.iter().skip(half).step_by(2)))
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("a worker"))
            .collect::<Vec<_>>()
    });
    let (compared, refused) = halves.iter().fold((0, 0), |(c, r), (compared, refused)| {
        (c + compared, r + refused)
    });
    eprintln!("{compared} scenarios streamed exactly as run --format jsonl; {refused} refused (they name files)");
    assert!(refused <= 12, "{refused}");
}

/// Streams each of `files` and compares it with the command line's output; returns how
/// many were compared and how many refused.
fn stream_and_compare<'a>(
    server: &Server,
    files: impl Iterator<Item = &'a PathBuf>,
) -> (usize, usize) {
    block_on(async {
        let http = client();
        let (mut compared, mut refused) = (0, 0);
        for file in files {
            let source = std::fs::read_to_string(file).unwrap();
            let name = file.file_name().unwrap().to_str().unwrap();
            let body = json!({"scenario": source, "name": name, "seed": 7}).to_string();
            let answer = send(&http, "POST", &server.url("/api/run"), &body).await;
            let cli = |format: &str| {
                let output = Command::new(BINARY)
                    .arg("run")
                    .arg(file)
                    .args(["--seed", "7", "--format", format])
                    .output()
                    .unwrap();
                String::from_utf8(output.stdout).unwrap()
            };
            if answer.status == 422 && (source.contains("file:") || source.contains("agent_dirs")) {
                let message = json(&answer.body)["diagnostics"][0]["message"].to_string();
                assert!(
                    message.contains("cannot") || message.contains("outside"),
                    "{}: {message}",
                    file.display()
                );
                refused += 1;
                continue;
            }
            assert_eq!(answer.status, 200, "{}: {}", file.display(), answer.body);
            let (lines, end) = trace_and_end(&answer.body);
            let expected: Vec<String> = cli("jsonl").lines().map(str::to_string).collect();
            assert!(
                lines == expected,
                "{}: the streamed trace differs from run --format jsonl",
                file.display()
            );
            assert_eq!(
                end.as_deref(),
                Some(cli("json").trim_end()),
                "{}",
                file.display()
            );
            let streamed = server::events(&answer.body)
                .into_iter()
                .find(|(name, _)| name == "model")
                .map(|(_, data)| json(&data));
            let streamed =
                streamed.unwrap_or_else(|| panic!("{}: no event: model", file.display()));
            let model = json(&cli("model"));
            for part in ["end", "counts"] {
                assert_eq!(
                    streamed[part],
                    model[part],
                    "{}: model.{part}",
                    file.display()
                );
            }
            compared += 1;
        }
        (compared, refused)
    })
}

fn collect(folder: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "yaml") {
            found.push(path);
        }
    }
}

/// With one run allowed, a second is told 503 with Retry-After; a client that goes away
/// frees its run, and so, after the client timeout, does one that stops reading.
#[test]
fn a_full_server_says_retry_after_and_gone_or_stalled_clients_free_their_run() {
    let server = Server::start(&["--max-runs", "1", "--queue", "0", "--client-timeout", "2"]);
    block_on(async {
        let http = client();
        let slow = json!({"scenario": demo(), "speed": 1}).to_string();
        // A run played in real time (86 s) that we leave after its first bytes.
        let started = start_run(&server, &slow).await;
        let busy = send(&http, "POST", &server.url("/api/run"), &slow).await;
        assert_eq!(busy.status, 503, "{}", busy.body);
        assert_eq!(busy.headers["retry-after"], "1");
        drop(started);
        assert!(
            eventually_runs(&server, &http).await,
            "the gone client's run was not freed"
        );

        // A client that asks for a long trace and never reads it.
        let many = "name: many\nagents:\n  worker: {description: w, behavior: [{work: 1s}]}\n\
                    load: {arrivals: poisson(1000/s), count: 100000, spawn: {agent: worker}}\n";
        let stalled = start_run(&server, &json!({"scenario": many}).to_string()).await;
        assert!(
            eventually_runs(&server, &http).await,
            "the stalled client's run was not freed"
        );
        drop(stalled);
    });
}

/// Opens a run and reads only its first bytes; the connection stays open, unread.
async fn start_run(server: &Server, body: &str) -> tokio::net::TcpStream {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut socket = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let request = format!(
        "POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut first = [0u8; 64];
    let read = socket.read(&mut first).await.unwrap();
    assert!(
        first[..read].starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&first[..read])
    );
    socket
}

/// Whether an instant run is served within 20 s (retrying while the server is full).
async fn eventually_runs(server: &Server, http: &server::HttpClient) -> bool {
    let body = json!({"scenario": "name: tiny\nmain: []\n"}).to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        let answer = send(http, "POST", &server.url("/api/run"), &body).await;
        if answer.status == 200 {
            return trace_and_end(&answer.body).1.is_some();
        }
        assert_eq!(answer.status, 503, "{}", answer.body);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    false
}

/// The page as a teacher uses it, in Debian's chromium: load it, pick the demo, run it
/// instantly (one bar per run, the rejections marked), raise the cap to 30 (no rejection
/// by the cap), press Compare (where the traces part), break the YAML (the marker at the
/// right line), share the link; no console error at any stage. Screenshots of each stage:
/// `target/playground-1-loaded.png` … `playground-6-shared.png`.
#[test]
fn the_playground_works_in_a_real_browser() {
    if !browser::browser_available() {
        return;
    }
    let server = Server::start(&[]);
    let url = server.url("/");
    block_on(async move {
        let page = browser::Browser::start("playground", 1500, 1100).await;
        loaded(&page, &url).await;
        ran_instantly(&page).await;
        live_at_ten(&page).await;
        cap_raised_to_30(&page).await;
        compared(&page).await;
        typo_marked(&page).await;
        shared(&page).await;
        assert_no_errors(&page).await;
        page.close().await;
    });
}

/// Loaded: the page is ready, with the demo first in the picker and in the editor.
async fn loaded(page: &browser::Browser, url: &str) {
    page.client.goto(url).await.expect("the page opens");
    page.wait_until(
        "the page to be ready",
        "return document.body.dataset.ready === 'true'",
    )
    .await;
    // The demo comes first and is loaded.
    let first = page
        .script("return document.getElementById('picker').options[0].value")
        .await;
    assert_eq!(first, "scenarios/demo.yaml");
    page.script(
        "const p = document.getElementById('picker'); p.value = 'scenarios/demo.yaml'; \
                 p.dispatchEvent(new Event('change'));",
    )
    .await;
    page.wait_until(
        "the demo in the editor",
        "return document.getElementById('source').value.startsWith('# The built-in demo')",
    )
    .await;
    let description = page
        .script("return document.getElementById('description').textContent")
        .await;
    assert!(
        description.as_str().unwrap().contains("Twenty"),
        "{description}"
    );
    assert_no_errors(page).await;
    page.screenshot("playground-1-loaded").await;
}

/// Run, instantly: 24 runs, 6 rejections (5 by the cap, 1 at the depth limit).
async fn ran_instantly(page: &browser::Browser) {
    run_and_wait(page).await;
    let seen = page
        .script(
            "return {bars: document.querySelectorAll('#timeline [data-agent]').length, \
         cap: document.querySelectorAll('#timeline .reject[data-reason=concurrent_limit]').length, \
         all: document.querySelectorAll('#timeline .reject').length, \
         lines: document.querySelectorAll('#narration li').length, \
         running: document.getElementById('running').textContent, \
         panel: document.getElementById('panel').textContent}",
        )
        .await;
    assert_eq!(
        (
            seen["bars"].clone(),
            seen["cap"].clone(),
            seen["all"].clone()
        ),
        (json!(24), json!(5), json!(6)),
        "{seen}"
    );
    assert!(seen["lines"].as_u64().unwrap() > 30, "{seen}");
    assert!(
        seen["running"].as_str().unwrap().contains("/ cap 20"),
        "{seen}"
    );
    page.wait_until(
        "the panel",
        "return document.getElementById('panel').textContent.includes('Subagent panel')",
    )
    .await;
    page.screenshot("playground-2-run").await;
    // A narration line explains its rule, and the bar of a run its start.
    page.script("[...document.querySelectorAll('#narration li')].find(li => li.textContent.includes('(CAP-1)')).click()").await;
    page.wait_until(
        "the rule's explanation",
        "return document.getElementById('detail').textContent.includes('CAP-1: ')",
    )
    .await;
    page.wait_until(
        "the panel then",
        "return document.getElementById('panel').textContent.includes('At 00:00:00.000')",
    )
    .await;
    page.screenshot("playground-2b-explained").await;
    page.script("document.querySelector('#timeline [data-agent=a1]').dispatchEvent(new MouseEvent('click'))").await;
    page.wait_until(
        "the bar's decision",
        "return document.getElementById('detail').textContent.includes('FORK-3: ')",
    )
    .await;
    assert_no_errors(page).await;
}

/// Live at ×10: the stream plays in virtual time; Pause holds the picture while the
/// stream goes on, Step shows one more decision, Resume catches up.
async fn live_at_ten(page: &browser::Browser) {
    page.script(
        "document.getElementById('speed').value = '10'; document.getElementById('run').click()",
    )
    .await;
    page.wait_until(
        "the first bars",
        "return document.querySelectorAll('#timeline [data-agent]').length > 0",
    )
    .await;
    page.wait_until(
        "the count past 0 s",
        "return /^00:00:0[1-9]/.test(document.getElementById('clock').textContent)",
    )
    .await;
    page.script("document.getElementById('pause').click()")
        .await;
    page.screenshot("playground-2c-live-paused").await;
    // "N of M events shown": N holds while M, what has arrived, goes on growing.
    let shown = |text: Value| -> u64 {
        text.as_str()
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let clock = "return document.getElementById('clock').textContent.split('·')[1].trim()";
    let held = shown(page.script(clock).await);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        held,
        shown(page.script(clock).await),
        "the picture moved while paused"
    );
    page.script("document.getElementById('step').click()").await;
    let stepped = shown(page.script(clock).await);
    assert!(stepped > held, "{held} then {stepped}");
    page.script("document.getElementById('pause').click()")
        .await;
    page.wait_until(
        "the live run to end",
        "return document.getElementById('status').textContent.startsWith('done')",
    )
    .await;
    let bars = page
        .script("return document.querySelectorAll('#timeline [data-agent]').length")
        .await;
    assert_eq!(bars, 24);
}

/// The cap raised to 30: nobody is turned away by the cap.
async fn cap_raised_to_30(page: &browser::Browser) {
    page.script(
        "const c = document.getElementById('c-cap'); c.value = '30'; \
                 c.dispatchEvent(new Event('input')); c.dispatchEvent(new Event('change'));",
    )
    .await;
    run_and_wait(page).await;
    let seen = page
        .script(
            "return {bars: document.querySelectorAll('#timeline [data-agent]').length, \
         cap: document.querySelectorAll('#timeline .reject[data-reason=concurrent_limit]').length, \
         sets: document.getElementById('sets').textContent}",
        )
        .await;
    assert_eq!(
        (seen["bars"].clone(), seen["cap"].clone()),
        (json!(29), json!(0)),
        "{seen}"
    );
    assert!(
        seen["sets"]
            .as_str()
            .unwrap()
            .contains("--set session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS=30"),
        "{seen}"
    );
    page.script("window.scrollTo(0, 0)").await;
    page.screenshot("playground-3-cap-30").await;
}

/// Compare: as written (cap 20) beside cap 30, and where the traces part.
async fn compared(page: &browser::Browser) {
    page.script("document.getElementById('compare').click()")
        .await;
    page.wait_until(
        "the comparison",
        "return document.getElementById('comparison').dataset.done === 'true'",
    )
    .await;
    let parting = page
        .script("return document.getElementById('parting').textContent")
        .await;
    assert!(
        parting
            .as_str()
            .unwrap()
            .contains("The traces part at event #62"),
        "{parting}"
    );
    let sides = page
        .script(
            "return [document.querySelectorAll('#timeline-left [data-agent]').length, \
                             document.querySelectorAll('#timeline-right [data-agent]').length]",
        )
        .await;
    assert_eq!(sides, json!([24, 29]));
    page.screenshot("playground-4-compare").await;
}

/// A typo: the marker sits on its line, with the command line's message and help.
async fn typo_marked(page: &browser::Browser) {
    let line = demo().lines().position(|l| l.starts_with("main:")).unwrap() + 1;
    page.script("const s = document.getElementById('source'); \
                 s.value = s.value.replace('\\nmain:', '\\nmian:'); s.dispatchEvent(new Event('input'));").await;
    page.wait_until(
        "the error marker",
        "return document.querySelectorAll('#gutter .error').length > 0",
    )
    .await;
    let marked = page
        .script("return [...document.querySelectorAll('#gutter .error')].map(e => e.dataset.line)")
        .await;
    assert_eq!(marked, json!([line.to_string()]));
    let problems = page
        .script("return document.getElementById('problems').textContent")
        .await;
    let problems = problems.as_str().unwrap();
    assert!(
        problems.contains(&format!(
            "line {line}, column 1: unknown key `mian`, did you mean `main`?"
        )),
        "{problems}"
    );
    assert!(problems.contains("help: the top level takes"), "{problems}");
    // Scrolled so that the marked line is in view for the screenshot.
    page.script(&format!(
        "window.scrollTo(0, 0); const s = document.getElementById('source'); \
                          s.scrollTop = {}; s.dispatchEvent(new Event('scroll'));",
        line.saturating_sub(10) * 18
    ))
    .await;
    page.screenshot("playground-5-error").await;
}

/// Share: the link carries the edited scenario and the controls.
async fn shared(page: &browser::Browser) {
    page.script("document.getElementById('share-button').click()")
        .await;
    let link = page
        .script("return document.getElementById('share').value")
        .await;
    let link = link.as_str().unwrap().to_string();
    assert!(link.contains("#s="), "{link}");
    page.client.goto("about:blank").await.unwrap();
    page.client.goto(&link).await.unwrap();
    page.wait_until(
        "the shared page",
        "return document.body.dataset.ready === 'true'",
    )
    .await;
    let shared = page
        .script(
            "return [document.getElementById('source').value.includes('\\nmian:'), \
                              document.getElementById('c-cap').value]",
        )
        .await;
    assert_eq!(shared, json!([true, "30"]));
    page.wait_until(
        "the shared error marker",
        "return document.querySelectorAll('#gutter .error').length === 1",
    )
    .await;
    page.script("window.scrollTo(0, 0)").await;
    page.screenshot("playground-6-shared").await;
}

async fn run_and_wait(page: &browser::Browser) {
    page.script("document.getElementById('speed').value = 'instant'; document.getElementById('run').click()").await;
    page.wait_until(
        "the run to end",
        "return document.getElementById('status').textContent.startsWith('done')",
    )
    .await;
}

async fn assert_no_errors(page: &browser::Browser) {
    let errors = page.errors().await;
    assert!(errors.is_empty(), "console errors: {errors:?}");
}

/// Under load, on loopback: 200 concurrent clients checking, then 200 running the demo
/// instantly (their figures printed: requests/s, p50, p99 — docs/PERFORMANCE.md), then 200
/// honest run clients again while hostile ones send huge bodies, malformed JSON, half-sent
/// heads and bodies, and start long runs they never read. Every honest client gets its
/// whole trace, the server's memory stays bounded, and it still serves afterwards.
#[test]
fn under_load_every_honest_client_gets_its_whole_trace() {
    // The server's defaults (--max-runs twice the cores), and a 3 s client timeout so that
    // the hostile clients are dropped soon.
    let mut server = Server::start(&["--client-timeout", "3"]);
    // Requests per honest client in the measured phases: 1 in the test suite; more to
    // record figures (`SUBSIM_LOAD_ROUNDS=5`, docs/PERFORMANCE.md).
    let rounds: usize = std::env::var("SUBSIM_LOAD_ROUNDS")
        .ok()
        .and_then(|rounds| rounds.parse().ok())
        .unwrap_or(1);
    let pid = server.pid();
    let base = server.url("");
    let addr = server.addr;
    let peak = block_on(async move {
        let check = json!({"scenario": demo()}).to_string();
        let (elapsed, times) = honest(&base, "/api/check", &check, 200, rounds).await;
        report("check", elapsed, &times);
        let run = json!({"scenario": demo(), "speed": "instant"}).to_string();
        let (elapsed, times) = honest(&base, "/api/run", &run, 200, rounds).await;
        report("instant demo run", elapsed, &times);
        let hostile = tokio::spawn(hostile_clients(addr));
        let (_, times) = honest(&base, "/api/run", &run, 200, 1).await;
        assert_eq!(times.len(), 200);
        hostile.await.expect("the hostile clients ran");
        let peak = peak_memory(pid);
        // Still serving.
        let http = client();
        let answer = send(&http, "POST", &format!("{base}/api/run"), &run).await;
        assert_eq!(answer.status, 200);
        assert!(trace_and_end(&answer.body).1.is_some());
        peak
    });
    assert!(server.alive(), "the server died");
    eprintln!("peak resident memory of the server: {} MiB", peak / 1024);
    // Each stalled run holds at most a few hundred frames and its socket's buffers; a server
    // that kept whole traces would hold tens of MB per stalled client.
    assert!(peak < 512 * 1024, "the server grew to {} MiB", peak / 1024);
}

/// `clients` concurrent clients each sending `each` requests one after another, each
/// request sent again after `Retry-After` while the server answers 503; every answer must
/// be whole (a check's `ok`, a run's every trace line and its `end`). Returns the wall time
/// and each request's latency (from its first attempt, retries included).
async fn honest(
    base: &str,
    path: &str,
    body: &str,
    clients: usize,
    each: usize,
) -> (Duration, Vec<Duration>) {
    let http = client();
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (http, url, body) = (http.clone(), format!("{base}{path}"), body.to_string());
            tokio::spawn(async move {
                let mut times = Vec::new();
                for _ in 0..each {
                    let sent = Instant::now();
                    let mut answer = send(&http, "POST", &url, &body).await;
                    while answer.status == 503 {
                        let wait: u64 = answer.headers["retry-after"]
                            .to_str()
                            .unwrap()
                            .parse()
                            .unwrap();
                        tokio::time::sleep(Duration::from_secs(wait)).await;
                        answer = send(&http, "POST", &url, &body).await;
                    }
                    times.push(sent.elapsed());
                    assert_eq!(answer.status, 200, "{}", answer.body);
                    if url.ends_with("/api/run") {
                        let (lines, end) = trace_and_end(&answer.body);
                        let summary = json(&end.expect("the end event"));
                        assert_eq!(
                            lines.len() as u64,
                            summary["events"].as_u64().unwrap(),
                            "a whole trace"
                        );
                    } else {
                        assert_eq!(json(&answer.body)["ok"], true);
                    }
                }
                times
            })
        })
        .collect();
    let mut times = Vec::new();
    for task in tasks {
        times.extend(task.await.expect("an honest client"));
    }
    (start.elapsed(), times)
}

fn report(what: &str, elapsed: Duration, times: &[Duration]) {
    let mut sorted = times.to_vec();
    sorted.sort();
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    eprintln!(
        "{what}: {} requests from 200 concurrent clients in {:.2} s: {:.0} requests/s, p50 {:.1} ms, p99 {:.1} ms",
        sorted.len(),
        elapsed.as_secs_f64(),
        sorted.len() as f64 / elapsed.as_secs_f64(),
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3
    );
}

/// Hostile clients, 20 of each kind at once: a 2 MiB body (413), malformed JSON (400), a
/// head never finished and a body never finished (dropped after the client timeout), and a
/// long run never read (cancelled after the client timeout).
async fn hostile_clients(addr: std::net::SocketAddr) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let huge = format!("{{\"scenario\": \"{}\"}}", "x".repeat(2 * 1024 * 1024));
    let many = json!({"scenario": "name: many\nagents:\n  worker: {description: w, behavior: [{work: 1s}]}\n\
                       load: {arrivals: poisson(1000/s), count: 100000, spawn: {agent: worker}}\n"}).to_string();
    let kinds: Vec<(String, &str)> = vec![
        (
            format!(
                "POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{huge}",
                huge.len()
            ),
            "413",
        ),
        (
            "POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\n{\"scenario\":"
                .to_string(),
            "400",
        ),
        (
            "POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Le".to_string(),
            "dropped",
        ),
        (
            "POST /api/check HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"scen"
                .to_string(),
            "408",
        ),
        (
            format!(
                "POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{many}",
                many.len()
            ),
            "unread",
        ),
    ];
    let mut tasks = Vec::new();
    for (request, expect) in kinds {
        for _ in 0..20 {
            let request = request.clone();
            tasks.push(tokio::spawn(async move {
                let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
                // A huge body may be cut off by the 413; that is the point.
                let _ = socket.write_all(request.as_bytes()).await;
                if expect == "unread" {
                    // Read nothing for longer than the client timeout, then leave.
                    tokio::time::sleep(Duration::from_secs(6)).await;
                    return;
                }
                let mut answer = Vec::new();
                let read =
                    tokio::time::timeout(Duration::from_secs(30), socket.read_to_end(&mut answer))
                        .await;
                let answer = String::from_utf8_lossy(&answer).into_owned();
                match expect {
                    "dropped" => assert!(read.is_ok(), "a half-sent head was not dropped"),
                    status => {
                        // read_to_end may see a reset after a 413 that cut the body short.
                        if !answer.is_empty() {
                            assert!(
                                answer.starts_with(&format!("HTTP/1.1 {status}")),
                                "{expect}: {answer}"
                            );
                        }
                    }
                }
            }));
        }
    }
    for task in tasks {
        task.await.expect("a hostile client");
    }
}

/// Peak resident memory of the server, in KiB (`VmHWM` of /proc/PID/status: the kernel
/// keeps the high-water mark).
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// SIGTERM (what Ctrl+C's SIGINT does too) stops the server cleanly: exit 0, said on
/// stderr, with a run in progress.
#[test]
fn sigterm_stops_the_server_cleanly() {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(BINARY)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("subsim serve starts");
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(
        first.starts_with("playground at http://127.0.0.1:"),
        "{first}"
    );
    let addr: std::net::SocketAddr = first.trim()["playground at http://".len()..]
        .trim_end_matches('/')
        .parse()
        .unwrap();
    // A run played in real time, left going.
    let mut socket = std::net::TcpStream::connect(addr).unwrap();
    let body = json!({"scenario": demo(), "speed": 1}).to_string();
    std::io::Write::write_all(
        &mut socket,
        format!(
            "POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "still running 20 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert!(stderr.contains("stopped serving"), "{stderr}");
}

/// Every body and every `data:` of a stream the server wrote for hostile text: JSON that
/// parses, with no C0 control, DEL, U+2028 or U+2029 raw (a stream's own line ends
/// aside), for each hostile class of the escape crate in a scenario's names, description
/// and keys. The server wrote its own bodies with serde_json, not the workspace's JSON
/// escaper (issue #25: the server uses the same mechanisms).
#[test]
fn hostile_names_reach_every_api_body_and_stream_escaped() {
    use subsim_escape::hostile::ATOMS;
    let server = Server::start(&[]);
    let clean = |what: &str, text: &str| {
        let _: Value =
            serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: {e}: {text:?}"));
        assert!(
            !text
                .chars()
                .any(|c| c < ' ' || matches!(c, '\u{7f}' | '\u{2028}' | '\u{2029}')),
            "{what} went out raw: {text:?}"
        );
    };
    let streamed = block_on(async {
        let http = client();
        let mut streamed = 0;
        for (index, atom) in ATOMS.iter().enumerate() {
            let quoted = subsim_escape::yaml::quoted(&format!("x{atom}y"));
            let scenarios = [
                format!(
                    "name: {quoted}\ndescription: {quoted}\nmain:\n  - spawn: {{name: {quoted}, \
                     background: true}}\n  - wait: {{for: children}}\n"
                ),
                format!("name: x\n{quoted}: 1\nmain: []\n"),
                format!("name: x\nmain:\n  - spawn: {{agent: {quoted}}}\n"),
            ];
            for (variant, scenario) in scenarios.iter().enumerate() {
                let what = format!("atom {index} {atom:?}, scenario {variant}");
                let body = json!({"scenario": scenario, "speed": "instant"}).to_string();
                let checked = send(&http, "POST", &server.url("/api/check"), &body).await;
                assert!(
                    matches!(checked.status, 200 | 422),
                    "{what}: {}",
                    checked.body
                );
                clean(&format!("{what}: /api/check"), &checked.body);
                let run = send(&http, "POST", &server.url("/api/run"), &body).await;
                if run.status != 200 {
                    clean(&format!("{what}: /api/run {}", run.status), &run.body);
                    continue;
                }
                for (name, data) in server::events(&run.body) {
                    clean(&format!("{what}: /api/run event {name}"), &data);
                }
                streamed += 1;
            }
        }
        streamed
    });
    assert!(streamed >= ATOMS.len(), "only {streamed} runs streamed");
}

#[test]
fn under_an_address_space_limit_a_request_is_answered_or_refused_never_a_panic() {
    // Regression: under `ulimit -v 150000` the server panicked at its start (tokio's
    // runtime could not start its workers), and once sized, a run's thread that could not
    // start panicked inside tokio's blocking pool. Now the runtime and the runs are sized by
    // the limit and a run whose thread cannot start is refused with 503 and Retry-After.
    let dir = TempDir::new("serve-limit");
    let log = dir.path().join("stderr.txt");
    let body = json!({"scenario": demo()}).to_string();
    // (Seen with the release build at 150 MB; where a debug build's limits fall differs.
    // `SUBSIM_BINARY` runs this against another build.)
    for kib in (80_000..=320_000).step_by(10_000) {
        let server = Server::start_limited(kib, &log);
        block_on(async {
            let http = client();
            for path in ["/api/check", "/api/run"] {
                let answer = send(&http, "POST", &server.url(path), &body).await;
                match answer.status {
                    200 if path == "/api/run" => assert!(
                        answer.body.contains("event: end"),
                        "ulimit -v {kib}: {path}: {}",
                        answer.body
                    ),
                    200 | 422 => {}
                    503 => assert_eq!(answer.headers["retry-after"], "1"),
                    other => panic!("ulimit -v {kib}: {path}: {other} {}", answer.body),
                }
            }
        });
        drop(server);
        let stderr = std::fs::read_to_string(&log).expect("its stderr");
        assert!(!stderr.contains("panicked"), "ulimit -v {kib}: {stderr}");
    }
}
