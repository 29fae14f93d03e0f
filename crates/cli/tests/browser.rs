//! `subsim report` in a real browser: Debian's `chromium`, driven headless through
//! `chromedriver` (WebDriver over plain HTTP on 127.0.0.1; a few lines of client below, no
//! crate). The page must load with no console errors, draw one bar per run, change the
//! panel when the scrubber moves, and show a scenario's `<script>` names as text. A
//! screenshot is written to `target/subsim-report-demo.png`.
//!
//! Skipped, with a message saying so, only when chromium or chromedriver is not installed
//! (`.ci/run` installs both).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

const BINARY: &str = env!("CARGO_BIN_EXE_subsim");
const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `target/` of the workspace, where the screenshot goes.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"))
}

/// One HTTP/1.1 request to chromedriver; the JSON body of its answer.
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .map_err(|e| e.to_string())?;
    let body = body.map(Value::to_string).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    // Read the head, then exactly the body its Content-Length announces (chromedriver keeps
    // the connection open, so reading to the end would wait forever).
    let mut raw = Vec::new();
    let mut chunk = [0u8; 8192];
    let split = loop {
        if let Some(at) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let read = stream.read(&mut chunk).map_err(|e| e.to_string())?;
        if read == 0 {
            return Err("the connection closed before the HTTP head ended".into());
        }
        raw.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&raw[..split]).to_lowercase();
    let mut payload = raw[split + 4..].to_vec();
    let length = head.lines().find_map(|line| {
        line.strip_prefix("content-length:")
            .and_then(|value| value.trim().parse::<usize>().ok())
    });
    match length {
        Some(length) => {
            while payload.len() < length {
                let read = stream.read(&mut chunk).map_err(|e| e.to_string())?;
                if read == 0 {
                    break;
                }
                payload.extend_from_slice(&chunk[..read]);
            }
        }
        None => {
            stream
                .read_to_end(&mut payload)
                .map_err(|e| e.to_string())?;
            if head.contains("transfer-encoding: chunked") {
                payload = dechunk(&payload);
            }
        }
    }
    serde_json::from_slice(&payload)
        .map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&payload)))
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = data.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&data[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[end + 2 + size + 2..];
    }
    out
}

/// A chromedriver we started, stopped (by its own handle) when dropped.
struct Driver {
    child: Child,
    port: u16,
    session: Option<String>,
    profile: PathBuf,
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            let _ = http(self.port, "DELETE", &format!("/session/{session}"), None);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

impl Driver {
    fn start(test: &str) -> Driver {
        // A free port: bind to 0, read it, let it go.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free local port")
            .port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let profile =
            std::env::temp_dir().join(format!("subsim-browser-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&profile);
        let mut driver = Driver {
            child,
            port,
            session: None,
            profile,
        };
        // Wait until it answers (bounded: 30 s).
        let ready = (0..300).any(|_| {
            let up = http(port, "GET", "/status", None)
                .is_ok_and(|status| status["value"]["ready"] == true);
            if !up {
                std::thread::sleep(Duration::from_millis(100));
            }
            up
        });
        assert!(ready, "chromedriver did not become ready on port {port}");
        let capabilities = json!({
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": CHROMIUM,
                        "args": [
                            "--headless", "--no-sandbox", "--disable-gpu",
                            "--disable-background-networking", "--disable-component-update",
                            "--no-first-run", "--disable-sync", "--window-size=1400,1000",
                            format!("--user-data-dir={}", driver.profile.display()),
                        ],
                    },
                    "goog:loggingPrefs": {"browser": "ALL"},
                }
            }
        });
        let answer = http(port, "POST", "/session", Some(&capabilities)).expect("a session");
        let session = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {answer}"))
            .to_string();
        driver.session = Some(session);
        driver
    }

    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let session = self.session.as_deref().expect("a session");
        let answer = http(
            self.port,
            method,
            &format!("/session/{session}{path}"),
            body,
        )
        .unwrap_or_else(|error| panic!("{method} {path}: {error}"));
        if answer["value"]["error"].is_string() {
            panic!("{method} {path}: {answer}");
        }
        answer["value"].clone()
    }

    fn open(&self, file: &Path) {
        let url = format!("file://{}", file.canonicalize().unwrap().display());
        self.call("POST", "/url", Some(&json!({ "url": url })));
    }

    fn script(&self, script: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(&json!({ "script": script, "args": [] })),
        )
    }

    /// The browser console entries since the last call (chromedriver's log endpoint).
    fn console(&self) -> Vec<Value> {
        let value = self.call("POST", "/se/log", Some(&json!({ "type": "browser" })));
        value.as_array().cloned().unwrap_or_default()
    }

    fn screenshot(&self) -> Vec<u8> {
        let value = self.call("GET", "/screenshot", None);
        base64(value.as_str().expect("a base64 PNG"))
    }
}

fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::new();
    let mut buffer = 0u32;
    let mut bits = 0;
    for c in text.bytes().filter_map(value) {
        buffer = (buffer << 6) | c;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    out
}

fn browser_available() -> bool {
    let present = Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists();
    if !present {
        eprintln!(
            "SKIPPED: the browser test needs {CHROMIUM} and {CHROMEDRIVER} (Debian's chromium \
             and chromium-driver; .ci/run installs them)"
        );
    }
    present
}

/// Writes a report of `scenario` (the demo when `None`) to `out`.
fn write_report(scenario: Option<&Path>, out: &Path) {
    let mut command = Command::new(BINARY);
    command.arg("report");
    if let Some(scenario) = scenario {
        command.arg(scenario);
    }
    let output = command
        .arg("--out")
        .arg(out)
        .env("NO_COLOR", "1")
        .output()
        .expect("subsim runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn severe(entries: &[Value]) -> Vec<&Value> {
    entries
        .iter()
        .filter(|entry| entry["level"] == "SEVERE")
        .collect()
}

#[test]
fn the_report_works_in_a_real_browser() {
    if !browser_available() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("subsim-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("demo.html");
    write_report(None, &page);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("http://") || !html.contains("src=\"http"),
        "no network"
    );
    assert!(
        !html.contains("<link") && !html.contains(" src="),
        "self-contained"
    );

    let driver = Driver::start("demo");
    driver.open(&page);
    let errors = driver.console();
    assert!(severe(&errors).is_empty(), "console errors: {errors:?}");

    // One bar per run: the demo starts 24 runs.
    let bars = driver.script("return document.querySelectorAll('svg [data-agent]').length");
    assert_eq!(bars, 24);
    let ids = driver.script(
        "return Array.from(document.querySelectorAll('[data-agent]')).map(e => e.getAttribute('data-agent'))",
    );
    assert!(ids.as_array().unwrap().iter().any(|id| id == "a1"), "{ids}");

    // Moving the scrubber changes the panel.
    let panel_at = |position: &str| {
        driver.script(&format!(
            "const s = document.getElementById('scrubber'); s.value = {position}; \
             s.dispatchEvent(new Event('input')); \
             return document.getElementById('panel').textContent"
        ))
    };
    let start = panel_at("0");
    let later = panel_at("Math.floor(s.max / 4)");
    assert_ne!(start, later, "the panel did not change");
    assert!(later.as_str().unwrap().contains("researcher"), "{later}");
    // A narration line sets the scrubber (linked both ways).
    let moved = driver.script(
        "const items = document.querySelectorAll('#narration li[data-t]'); \
         const last = items[items.length - 1]; last.click(); \
         return [document.getElementById('scrubber').value, last.classList.contains('current')]",
    );
    assert_ne!(moved[0], "0", "{moved}");
    assert_eq!(moved[1], true, "{moved}");
    assert!(severe(&driver.console()).is_empty());

    let png = driver.screenshot();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG screenshot");
    let shot = target_dir().join("subsim-report-demo.png");
    std::fs::write(&shot, &png).unwrap();
    eprintln!("screenshot: {}", shot.display());
    let _ = std::fs::remove_dir_all(&dir);
}

const HOSTILE: &str = r#"name: "<script>window.pwned = 1</script> \"quoted\" 'single' & more"
description: "<img src=x onerror=\"window.pwned = 2\">"
session: {kind: interactive, seed: 3}
agents:
  "evil":
    description: "</script><script>window.pwned = 3</script>"
    behavior: [{work: 5s}, {report: "<b>bold</b>"}]
main:
  - spawn: {agent: evil, name: "<script>alert(1)</script>", background: true}
  - spawn: {agent: evil, name: "q\"uote'", background: true}
  - wait: {for: children}
"#;

#[test]
fn a_scenario_s_markup_is_shown_as_text() {
    if !browser_available() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("subsim-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("hostile.yaml");
    std::fs::write(&scenario, HOSTILE).unwrap();
    let page = dir.join("hostile.html");
    write_report(Some(&scenario), &page);

    let driver = Driver::start("hostile");
    driver.open(&page);
    // Nothing the scenario wrote ran: no alert is open (the calls below would fail), no
    // flag was set, and the page has only its own two script elements.
    let pwned = driver.script("return window.pwned === undefined");
    assert_eq!(pwned, true);
    assert_eq!(driver.script("return document.scripts.length"), 2);
    assert_eq!(driver.script("return document.images.length"), 0);
    let title = driver.script("return document.querySelector('h1').textContent");
    assert_eq!(
        title,
        "<script>window.pwned = 1</script> \"quoted\" 'single' & more"
    );
    let labels = driver.script("return document.getElementById('gantt').textContent");
    let labels = labels.as_str().unwrap();
    assert!(labels.contains("<script>alert(1)</script>"), "{labels}");
    assert!(labels.contains("q\"uote'"), "{labels}");
    let panel = driver.script(
        "const s = document.getElementById('scrubber'); s.value = 1; \
         s.dispatchEvent(new Event('input')); return document.getElementById('panel').textContent",
    );
    assert!(
        panel
            .as_str()
            .unwrap()
            .contains("<script>alert(1)</script>"),
        "{panel}"
    );
    assert!(severe(&driver.console()).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The sweep chart (`sweep --format svg`) as a person sees it: opened in chromium, every
/// text (title, axis names, tick labels, legend) lies inside the picture, there is one dot
/// per swept point and the Erlang B curve is in the legend. A screenshot is written to
/// `target/subsim-sweep-chart.png`.
#[test]
fn the_sweep_chart_is_readable_in_a_real_browser() {
    if !browser_available() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("subsim-sweep-chart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let chart = dir.join("sweep.svg");
    let scenario = repo_root().join("scenarios/load/erlang-b-20-erlangs.yaml");
    let output = Command::new(BINARY)
        .arg("sweep")
        .arg(&scenario)
        .args([
            "--set",
            "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS=15..25",
            "--set",
            "load.count=3000",
            "--seeds",
            "3",
            "--format",
            "svg",
            "--out",
        ])
        .arg(&chart)
        .env("NO_COLOR", "1")
        .output()
        .expect("subsim runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let driver = Driver::start("sweep-chart");
    driver.open(&chart);
    let seen = driver.script(
        "const svg = document.documentElement;
         const width = svg.width.baseVal.value, height = svg.height.baseVal.value;
         const frame = svg.getBoundingClientRect();
         // Where each text is drawn, rotation included (the y axis name is turned 90°).
         const texts = [...document.querySelectorAll('text')].map(t => {
             const box = t.getBoundingClientRect();
             return {text: t.textContent.trim(), x: box.left - frame.left,
                     y: box.top - frame.top, right: box.right - frame.left,
                     bottom: box.bottom - frame.top};
         });
         const outside = texts.filter(t => t.text && (t.x < 0 || t.y < 0 || t.right > width
             || t.bottom > height));
         const dots = [...document.querySelectorAll('circle')]
             .filter(c => c.getAttribute('fill') !== 'none').length;
         return {tag: svg.tagName, width, height, outside, dots,
                 texts: texts.map(t => t.text)};",
    );
    std::fs::write(
        target_dir().join("subsim-sweep-chart.png"),
        driver.screenshot(),
    )
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(seen["tag"], "svg", "{seen}");
    assert_eq!(
        seen["outside"],
        json!([]),
        "text outside the picture: {seen}"
    );
    let texts: Vec<&str> = seen["texts"]
        .as_array()
        .expect("texts")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(texts.contains(&"Erlang B"), "{texts:?}");
    assert!(texts.contains(&"simulated (load.count=3000)"), "{texts:?}");
    // The x axis of a swept cap reads 15, 16, …, 25.
    for cap in 15..=25 {
        assert!(
            texts.contains(&cap.to_string().as_str()),
            "{cap}: {texts:?}"
        );
    }
    // A filled dot per point (on its interval bar) and the legend's.
    assert_eq!(seen["dots"], 12, "{seen}");
}
