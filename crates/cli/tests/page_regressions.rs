//! The playground page's defects of issue #32, one test each, in headless Chromium
//! (`support/browser.rs`) against a `subsim serve` of our own. Screenshots go to `target/`.

use serde_json::{json, Value};

use crate::support::block_on;
use crate::support::browser::{browser_available, Browser};
use crate::support::server::Server;

/// The playground doc's API example: two spawns without a `name`.
const UNNAMED: &str = "name: two\nmain:\n  - spawn: {agent: Explore, count: 2, background: true}\n";

/// Opens the page and waits until what it draws on load is done.
async fn opened(page: &Browser, server: &Server) {
    page.client
        .goto(&server.url("/"))
        .await
        .expect("the page opens");
    page.wait_until(
        "the page to be ready",
        "return document.body.dataset.ready === 'true'",
    )
    .await;
    finished(page).await;
}

/// Waits until the run on screen is over (done, refused or stopped).
async fn finished(page: &Browser) {
    page.wait_until(
        "the run to be over",
        "return ['done', 'problems', 'stopped'].includes(document.getElementById('status').dataset.state)",
    )
    .await;
}

/// Puts `text` in the editor (as typing does) and presses Run, instantly.
async fn typed_and_run(page: &Browser, text: &str) {
    page.client
        .execute(
            "const s = document.getElementById('source'); s.value = arguments[0]; \
             s.dispatchEvent(new Event('input')); \
             delete document.getElementById('status').dataset.state; \
             document.getElementById('speed').value = 'instant'; \
             document.getElementById('run').click();",
            vec![json!(text)],
        )
        .await
        .expect("typed");
    finished(page).await;
}

async fn no_script_errors(page: &Browser) {
    let errors = page.errors().await;
    assert!(errors.is_empty(), "console errors: {errors:?}");
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// Was: `TypeError … reading 'length'` on any spawn without a `name` (25 shipped
/// scenarios, and the doc's own API example), with only the rejection strip drawn.
#[test]
fn a_spawn_without_a_name_is_drawn_by_its_id_without_a_type_error() {
    if !browser_available() {
        return;
    }
    let server = Server::start(&[]);
    block_on(async {
        let page = Browser::start("unnamed", 1400, 1000).await;
        opened(&page, &server).await;
        typed_and_run(&page, UNNAMED).await;
        let seen = page
            .script(
                "return {state: document.getElementById('status').dataset.state, \
                 labels: [...document.querySelectorAll('#timeline [data-agent] text')].map(t => t.textContent), \
                 bars: document.querySelectorAll('#timeline [data-agent] rect').length}",
            )
            .await;
        assert_eq!(seen["state"], "done", "{seen}");
        assert_eq!(seen["labels"], json!(["a1", "a2"]), "{seen}");
        assert_eq!(seen["bars"], 2, "{seen}");
        // A click on an unnamed run's bar says which run it is.
        page.script("document.querySelector('#timeline [data-agent=a2]').dispatchEvent(new MouseEvent('click'))")
            .await;
        let detail = page
            .script("return document.getElementById('detail').textContent")
            .await;
        assert!(text(&detail).starts_with("a2: "), "{detail}");
        no_script_errors(&page).await;
        page.close().await;
    });
}

/// Was: the page showed nothing until Run was pressed, and ended the demo at 1:26 (the
/// panel's bookkeeping 30 s after the last decision) where the CLI and the report say 0:56.
#[test]
fn the_demo_is_drawn_on_load_and_ends_at_its_last_decision() {
    if !browser_available() {
        return;
    }
    let server = Server::start(&[]);
    block_on(async {
        let page = Browser::start("on-load", 1400, 1100).await;
        opened(&page, &server).await;
        let seen = page
            .script(
                "const t = document.getElementById('timeline'); \
                 return {bars: t.querySelectorAll('[data-agent]').length, end: t.dataset.end, \
                 max: document.getElementById('scrubber').max, \
                 status: document.getElementById('status').textContent, \
                 why: document.getElementById('why-end').textContent}",
            )
            .await;
        assert_eq!(seen["bars"], 24, "{seen}");
        assert_eq!(seen["end"], "56000000", "{seen}");
        assert_eq!(seen["max"], "56000000", "{seen}");
        assert!(
            text(&seen["status"]).starts_with("done: the session ended at 00:00:56.000"),
            "{seen}"
        );
        assert!(
            text(&seen["why"]).starts_with("It ended at 56s because"),
            "{seen}"
        );
        page.wait_until(
            "the panel",
            "return document.getElementById('panel').textContent.startsWith('At 00:00:56.000')",
        )
        .await;
        no_script_errors(&page).await;
        // The page is where it was opened: drawing on load scrolls the narration, not it.
        assert_eq!(page.script("return window.scrollY").await, 0);
        page.screenshot("playground-demo-on-load").await;
        page.close().await;
    });
}

/// Was: the page never said whether the scenario's `expect:` held.
#[test]
fn the_page_shows_whether_expect_passed_as_check_says() {
    if !browser_available() {
        return;
    }
    let server = Server::start(&[]);
    block_on(async {
        let page = Browser::start("expect", 1400, 1000).await;
        opened(&page, &server).await;
        let passed = page
            .script("return [document.getElementById('expect').className, document.getElementById('expect').textContent]")
            .await;
        assert_eq!(passed[0], "passed", "{passed}");
        assert!(
            text(&passed[1]).starts_with("expect: passed (9 assertions"),
            "{passed}"
        );
        typed_and_run(
            &page,
            "name: two\nmain:\n  - spawn: {agent: Explore, count: 2, background: true}\n\
             expect:\n  - count: {kind: agent_started}\n    equals: 3\n",
        )
        .await;
        let failed = page
            .script("return [document.getElementById('expect').className, document.getElementById('expect').textContent]")
            .await;
        assert_eq!(failed[0], "failed", "{failed}");
        assert!(
            text(&failed[1]).starts_with("expect: FAILED (1 of 1 assertion)"),
            "{failed}"
        );
        assert!(text(&failed[1]).contains("#1 (line 5)"), "{failed}");
        no_script_errors(&page).await;
        page.close().await;
    });
}

/// Was: the picker and the description kept showing the scenario picked last after an
/// edit, and the demo's after a shared link.
#[test]
fn the_picker_and_description_follow_an_edit_and_a_shared_link() {
    if !browser_available() {
        return;
    }
    let server = Server::start(&[]);
    block_on(async {
        let page = Browser::start("picker", 1400, 1000).await;
        opened(&page, &server).await;
        let shown = "const p = document.getElementById('picker'); \
                     return [p.value, p.options[p.selectedIndex].textContent, \
                     document.getElementById('description').textContent]";
        let demo = page.script(shown).await;
        assert_eq!(demo[0], "scenarios/demo.yaml", "{demo}");
        // An edit: the picker says so, and the description is the edited scenario's.
        page.script(
            "const s = document.getElementById('source'); \
             s.value = s.value.replace('1. Main asks', '0. Mine now. Main asks'); \
             s.dispatchEvent(new Event('input'));",
        )
        .await;
        page.wait_until(
            "the edited description",
            "return document.getElementById('description').textContent.startsWith('0. Mine now.')",
        )
        .await;
        let edited = page.script(shown).await;
        assert_eq!(edited[0], "", "{edited}");
        assert!(text(&edited[1]).ends_with("(edited)"), "{edited}");
        // A shared link of another scenario: its own name and description.
        page.client
            .execute(
                "document.getElementById('source').value = arguments[0]; \
                 document.getElementById('share-button').click();",
                vec![json!(
                    "name: shared one\ndescription: From a link.\nmain:\n  - work: 1s\n"
                )],
            )
            .await
            .expect("shared");
        let link = page
            .script("return document.getElementById('share').value")
            .await;
        page.client.goto("about:blank").await.expect("away");
        page.client.goto(text(&link)).await.expect("the link");
        page.wait_until(
            "the shared description",
            "return document.getElementById('description').textContent === 'From a link.'",
        )
        .await;
        let shared = page.script(shown).await;
        assert_eq!(shared[1], "shared one (shared)", "{shared}");
        // A shared link of a shipped scenario as written is that scenario.
        page.script(
            "const p = document.getElementById('picker'); p.value = 'scenarios/demo.yaml'; \
             p.dispatchEvent(new Event('change'));",
        )
        .await;
        finished(&page).await;
        page.script("document.getElementById('share-button').click()")
            .await;
        let link = page
            .script("return document.getElementById('share').value")
            .await;
        page.client.goto("about:blank").await.expect("away");
        page.client.goto(text(&link)).await.expect("the link");
        page.wait_until(
            "the demo recognised",
            "return document.getElementById('picker').value === 'scenarios/demo.yaml'",
        )
        .await;
        no_script_errors(&page).await;
        page.close().await;
    });
}

/// Issue #34 item 4. Was: the playground listed an imported session's departure under
/// expect: but drew nothing where it happened. Now the timeline marks it on its run's row
/// with its rule, as the report does (the server places it: `event: expect`'s `at_us`,
/// `agent`, `rule`).
#[test]
fn an_imported_session_s_departure_is_marked_on_its_row_with_its_rule() {
    if !browser_available() {
        return;
    }
    let session = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../tests/fixtures/import/departed/notification-removed/\
         b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl",
    );
    let scenario =
        std::env::temp_dir().join(format!("subsim-page-departure-{}.yaml", std::process::id()));
    let imported = crate::support::subsim(&[
        "import",
        session.to_str().unwrap(),
        "--out",
        scenario.to_str().unwrap(),
    ]);
    let yaml = std::fs::read_to_string(&scenario).unwrap_or_default();
    let _ = std::fs::remove_file(&scenario);
    assert_eq!(imported.status.code(), Some(0), "{imported:?}");
    let server = Server::start(&[]);
    block_on(async {
        let page = Browser::start("departure", 1400, 1000).await;
        opened(&page, &server).await;
        // The demo passes its expect: nothing is marked.
        let before = page
            .script("return document.querySelectorAll('#timeline .departure').length")
            .await;
        assert_eq!(before, 0, "the demo departs nowhere");
        typed_and_run(&page, &yaml).await;
        let seen = page
            .script(
                "const row = (g) => g.getAttribute('data-agent-row'); \
                 return {state: document.getElementById('status').dataset.state, \
                 expect: document.getElementById('expect').textContent, \
                 marks: [...document.querySelectorAll('#timeline g.departure')].map(g => \
                   ({rule: g.dataset.rule, row: row(g), flag: g.querySelector('text').textContent, \
                     title: g.querySelector('title').textContent})), \
                 rows: [...document.querySelectorAll('#timeline [data-agent]')].map(g => g.dataset.agent)}",
            )
            .await;
        page.screenshot("departure").await;
        assert_eq!(seen["state"], "done", "{seen}");
        assert!(text(&seen["expect"]).contains("(NOTIFY-3)"), "{seen}");
        let marks = seen["marks"].as_array().cloned().unwrap_or_default();
        assert_eq!(marks.len(), 1, "one departure, one mark: {seen}");
        let mark = &marks[0];
        assert_eq!(mark["rule"], "NOTIFY-3", "{seen}");
        assert_eq!(mark["flag"], "⚑ NOTIFY-3", "{seen}");
        // On the row of the run whose completion notification was removed.
        assert_eq!(mark["row"], "a3", "{seen}");
        assert!(
            seen["rows"]
                .as_array()
                .is_some_and(|rows| rows.contains(&json!("a3"))),
            "{seen}"
        );
        assert!(
            text(&mark["title"]).starts_with(
                "departed from the documented behaviour at 00:01:21.500 (NOTIFY-3): expected no event matching"
            ),
            "{seen}"
        );
        no_script_errors(&page).await;
        page.close().await;
    });
}

/// Issue #32, "where a number came from": the page's decision panel shows each duration
/// drawn from a distribution behind a clicked line or bar, with its distribution and
/// stream, from the server's model (`event: model`), not worked out again in the page.
#[test]
fn the_decision_panel_says_where_each_drawn_number_came_from() {
    if !browser_available() {
        return;
    }
    let source = std::fs::read_to_string(
        crate::support::repo_root()
            .join("scenarios/trace/drawn-durations-say-where-they-came-from.yaml"),
    )
    .expect("the scenario");
    let server = Server::start(&[]);
    block_on(async {
        let page = Browser::start("draws", 1400, 1100).await;
        opened(&page, &server).await;
        typed_and_run(&page, &source).await;
        let click_line = |words: &str| {
            format!(
                "const line = [...document.querySelectorAll('#narration li')] \
                   .find((li) => li.textContent.includes({words:?})); \
                 line.click(); \
                 return [...document.querySelectorAll('#detail .draws-head, #detail .draws li')] \
                   .map((e) => e.textContent)"
            )
        };
        // The narration is drawn a frame after the run is done.
        page.wait_until(
            "the narration's answer line",
            "return [...document.querySelectorAll('#narration li')] \
               .some((li) => li.textContent.includes(\"approved researcher's Bash\"))",
        )
        .await;
        let answered = page.script(&click_line("approved researcher's Bash")).await;
        assert_eq!(
            answered,
            json!([
                "Where its numbers came from:",
                "think 326.393ms, drawn from exp(3s), the person's stream \
                 (00:00:05.550 → 00:00:05.877)"
            ])
        );
        // The words come from the model the server sent, as they are.
        let from_model = page
            .script("return play.model.draws.map((d) => d.text)")
            .await;
        assert_eq!(
            from_model[4],
            "think 326.393ms, drawn from exp(3s), the person's stream"
        );
        let started = page.script(&click_line("session")).await;
        assert!(
            text(&started[0]).starts_with("No duration drawn from a distribution"),
            "{started}"
        );
        page.script("document.querySelector('#timeline [data-agent=a1]').dispatchEvent(new MouseEvent('click'))")
            .await;
        let bar = page
            .script("return [...document.querySelectorAll('#detail .draws li')].map((e) => e.textContent.split(',')[0])")
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
        no_script_errors(&page).await;
        page.script(&click_line("approved researcher's Bash")).await;
        page.screenshot("playground-draws").await;
        page.close().await;
    });
}
