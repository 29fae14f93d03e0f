//! A real browser for the tests: Debian's `chromium`, headless, driven through
//! `chromedriver` with the fantoccini WebDriver client. Shared by `browser.rs` (the HTML
//! report, the sweep chart) and `playground.rs` (`subsim serve`).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder};
use serde_json::{json, Value};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Whether chromium and chromedriver are installed; says so when they are not.
pub fn browser_available() -> bool {
    let present = Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists();
    if !present {
        eprintln!(
            "SKIPPED: the browser test needs {CHROMIUM} and {CHROMEDRIVER} (Debian's chromium \
             and chromium-driver; .ci/run installs them)"
        );
    }
    present
}

/// `target/` of the workspace, where screenshots go.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

/// chromedriver's own command for the browser's console log (not in the WebDriver
/// standard, so not in fantoccini): `POST /session/ID/se/log {"type": "browser"}`.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/se/log",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(json!({ "type": "browser" }).to_string()),
        )
    }
}

/// A chromedriver we started and a session in it; [`Browser::close`] ends both, and
/// dropping it stops chromedriver (by its own handle) if a test failed first.
pub struct Browser {
    pub client: Client,
    driver: Child,
    profile: PathBuf,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

impl Browser {
    /// Starts chromedriver on a free port and opens a headless chromium session, the
    /// window `width` × `height`.
    pub async fn start(test: &str, width: u32, height: u32) -> Browser {
        Browser::start_with(test, width, height, &[]).await
    }

    /// [`Browser::start`] with more chromium arguments (`--host-resolver-rules=…`, to put
    /// a page under another name on 127.0.0.1).
    pub async fn start_with(test: &str, width: u32, height: u32, extra: &[String]) -> Browser {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free local port")
            .port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let profile =
            std::env::temp_dir().join(format!("subsim-browser-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&profile);
        // Wait until it listens (bounded: 30 s).
        let listening = (0..300).any(|_| {
            let up = TcpStream::connect(("127.0.0.1", port)).is_ok();
            if !up {
                std::thread::sleep(Duration::from_millis(100));
            }
            up
        });
        assert!(listening, "chromedriver did not listen on port {port}");
        let capabilities = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-background-networking", "--disable-component-update",
                    "--no-first-run", "--disable-sync", format!("--window-size={width},{height}"),
                    format!("--user-data-dir={}", profile.display()),
                ],
            },
            "goog:loggingPrefs": {"browser": "ALL"},
        });
        let mut capabilities = capabilities;
        if let Some(args) = capabilities["goog:chromeOptions"]["args"].as_array_mut() {
            args.extend(extra.iter().map(|arg| Value::String(arg.clone())));
        }
        let Value::Object(capabilities) = capabilities else {
            unreachable!("an object")
        };
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a chromium session");
        Browser {
            client,
            driver,
            profile,
        }
    }

    /// Runs `script` in the page (a function body; `return` gives the value).
    pub async fn script(&self, script: &str) -> Value {
        self.client
            .execute(script, Vec::new())
            .await
            .unwrap_or_else(|error| panic!("the script failed: {error}\n{script}"))
    }

    /// Waits (bounded: 60 s) until `script` returns true.
    pub async fn wait_until(&self, what: &str, script: &str) {
        for _ in 0..600 {
            if self.script(script).await == Value::Bool(true) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("waited 60 s for {what}: `{script}` never returned true");
    }

    /// The browser console entries since the last call.
    pub async fn console(&self) -> Vec<Value> {
        let entries = self
            .client
            .issue_cmd(BrowserLog)
            .await
            .expect("the browser log");
        entries.as_array().cloned().unwrap_or_default()
    }

    /// The console entries of level SEVERE (errors) since the last call.
    pub async fn errors(&self) -> Vec<Value> {
        self.console()
            .await
            .into_iter()
            .filter(|entry| entry["level"] == "SEVERE")
            .collect()
    }

    /// A PNG of the window, written to `target/NAME.png` (kept as a test artefact).
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("a screenshot");
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG screenshot");
        let path = target_dir().join(format!("{name}.png"));
        std::fs::write(&path, &png).expect("the screenshot is written");
        eprintln!("screenshot: {}", path.display());
        path
    }

    /// Ends the session (chromedriver stops when `self` drops).
    pub async fn close(self) {
        let _ = self.client.clone().close().await;
    }
}
