//! `subsim report` in a real browser: Debian's `chromium`, driven headless through
//! `chromedriver` with the fantoccini WebDriver client (`support/browser.rs`). The page must
//! load with no console errors, draw one bar per run, change the panel when the scrubber
//! moves, and show a scenario's `<script>` names as text. A screenshot is written to
//! `target/subsim-report-demo.png`.
//!
//! Skipped, with a message saying so, only when chromium or chromedriver is not installed
//! (`.ci/run` installs both).

use std::path::Path;
use std::process::Command;

use crate::support::browser::{browser_available, Browser};
use crate::support::{block_on, repo_root, BINARY};
use serde_json::{json, Value};

fn file_url(file: &Path) -> String {
    format!("file://{}", file.canonicalize().unwrap().display())
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

    block_on(report_in_browser(&page));
    let _ = std::fs::remove_dir_all(&dir);
}

async fn report_in_browser(page: &Path) {
    let driver = Browser::start("demo", 1400, 1000).await;
    driver
        .client
        .goto(&file_url(page))
        .await
        .expect("the page opens");
    let errors = driver.errors().await;
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // One bar per run: the demo starts 24 runs.
    let bars = driver
        .script("return document.querySelectorAll('svg [data-agent]').length")
        .await;
    assert_eq!(bars, 24);
    let ids = driver.script(
        "return Array.from(document.querySelectorAll('[data-agent]')).map(e => e.getAttribute('data-agent'))",
    ).await;
    assert!(ids.as_array().unwrap().iter().any(|id| id == "a1"), "{ids}");

    // Moving the scrubber changes the panel.
    let panel_at = |position: &str| {
        format!(
            "const s = document.getElementById('scrubber'); s.value = {position}; \
             s.dispatchEvent(new Event('input')); \
             return document.getElementById('panel').textContent"
        )
    };
    let start = driver.script(&panel_at("0")).await;
    let later = driver.script(&panel_at("Math.floor(s.max / 4)")).await;
    assert_ne!(start, later, "the panel did not change");
    assert!(later.as_str().unwrap().contains("researcher"), "{later}");
    // A narration line sets the scrubber (linked both ways).
    let moved = driver
        .script(
            "const items = document.querySelectorAll('#narration li[data-t]'); \
         const last = items[items.length - 1]; last.click(); \
         return [document.getElementById('scrubber').value, last.classList.contains('current')]",
        )
        .await;
    assert_ne!(moved[0], "0", "{moved}");
    assert_eq!(moved[1], true, "{moved}");
    assert!(driver.errors().await.is_empty());

    driver.screenshot("subsim-report-demo").await;
    driver.close().await;
}

/// Issue #32, "where a number came from": a click on a narration line or a bar shows, in
/// the decision panel, each duration drawn from a distribution behind it, with its
/// distribution and stream, as the run model words it.
#[test]
fn the_report_s_decision_panel_says_where_each_drawn_number_came_from() {
    if !browser_available() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("subsim-report-draws-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("draws.html");
    let scenario =
        repo_root().join("scenarios/trace/drawn-durations-say-where-they-came-from.yaml");
    write_report(Some(&scenario), &page);
    block_on(draws_in_browser(&page));
    let _ = std::fs::remove_dir_all(&dir);
}

async fn draws_in_browser(page: &Path) {
    let driver = Browser::start("draws", 1100, 1000).await;
    driver
        .client
        .goto(&file_url(page))
        .await
        .expect("the page opens");
    let click_line = |words: &str| {
        format!(
            "const line = [...document.querySelectorAll('#narration li[data-t]')] \
               .find((li) => li.textContent.includes({words:?})); \
             line.click(); \
             return [...document.querySelectorAll('#decision p, #decision li')].map((e) => e.textContent)"
        )
    };
    // The answer: the person's think time, drawn on the person's stream.
    let answered = driver
        .script(&click_line("approved researcher's Bash"))
        .await;
    assert_eq!(
        answered[2],
        "think 326.393ms, drawn from exp(3s), the person's stream (00:00:05.550 → 00:00:05.877)",
        "{answered}"
    );
    // The tool call: the wait drawn before it ends there, and its own duration starts
    // there, each drawn on the run's own stream.
    let read = driver.script(&click_line("uses Read")).await;
    assert_eq!(
        read.as_array().unwrap()[2..],
        [
            "wait 1.042s, drawn from uniform(1s, 2s), researcher's own stream \
             (00:00:02.229 → 00:00:03.271)",
            "tool call 2.28s, drawn from normal(4s, 1s), researcher's own stream \
             (00:00:03.271 → 00:00:05.550)"
        ],
        "{read}"
    );
    // A line nothing drawn leads to says so.
    let started = driver.script(&click_line("session")).await;
    assert!(
        started[1]
            .as_str()
            .unwrap()
            .starts_with("No duration drawn"),
        "{started}"
    );
    // A bar: every draw of its run, the think time of its prompt included.
    let bar = driver
        .script(
            "document.querySelector('g.bar[data-agent=a1]').dispatchEvent(new MouseEvent('click')); \
             return [...document.querySelectorAll('#draws li')].map((e) => e.textContent.split(',')[0])",
        )
        .await;
    assert_eq!(
        bar,
        json!([
            "work 229.094ms",
            "wait 1.042s",
            "tool call 2.28s",
            "background shell 7.186s",
            "think 326.393ms"
        ])
    );
    assert!(driver.errors().await.is_empty());
    driver
        .script(&click_line("approved researcher's Bash"))
        .await;
    driver.screenshot("subsim-report-draws").await;
    driver.close().await;
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

    block_on(hostile_in_browser(&page));
    let _ = std::fs::remove_dir_all(&dir);
}

async fn hostile_in_browser(page: &Path) {
    let driver = Browser::start("hostile", 1400, 1000).await;
    driver
        .client
        .goto(&file_url(page))
        .await
        .expect("the page opens");
    // Nothing the scenario wrote ran: no alert is open (the calls below would fail), no
    // flag was set, and the page has only its own two script elements.
    let pwned = driver.script("return window.pwned === undefined").await;
    assert_eq!(pwned, true);
    assert_eq!(driver.script("return document.scripts.length").await, 2);
    assert_eq!(driver.script("return document.images.length").await, 0);
    let title = driver
        .script("return document.querySelector('h1').textContent")
        .await;
    assert_eq!(
        title,
        "<script>window.pwned = 1</script> \"quoted\" 'single' & more"
    );
    let labels = driver
        .script("return document.getElementById('gantt').textContent")
        .await;
    let labels = labels.as_str().unwrap();
    assert!(labels.contains("<script>alert(1)</script>"), "{labels}");
    assert!(labels.contains("q\"uote'"), "{labels}");
    let panel = driver
        .script(
            "const s = document.getElementById('scrubber'); s.value = 1; \
         s.dispatchEvent(new Event('input')); return document.getElementById('panel').textContent",
        )
        .await;
    assert!(
        panel
            .as_str()
            .unwrap()
            .contains("<script>alert(1)</script>"),
        "{panel}"
    );
    assert!(driver.errors().await.is_empty());
    driver.close().await;
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
    let seen = block_on(async {
        let driver = Browser::start("sweep-chart", 1400, 1000).await;
        driver
            .client
            .goto(&file_url(&chart))
            .await
            .expect("the chart opens");
        let seen = driver
            .script(
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
            )
            .await;
        driver.screenshot("subsim-sweep-chart").await;
        driver.close().await;
        seen
    });
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
    assert!(
        texts.contains(&"simulated blocking (load.count=3000)"),
        "{texts:?}"
    );
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
