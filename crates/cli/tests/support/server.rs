//! A `subsim serve` started for a test, and an HTTP client for its API (hyper-util's).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use super::BINARY;

/// A server we started, stopped (by its own handle) when dropped.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// `subsim serve --bind 127.0.0.1:0 EXTRA…`; the address is read from its first line.
    /// `SUBSIM_BINARY` names another build to serve (a release build, to record figures).
    pub fn start(extra: &[&str]) -> Server {
        let binary = std::env::var_os("SUBSIM_BINARY").unwrap_or_else(|| BINARY.into());
        let mut command = Command::new(binary);
        command
            .args(["serve", "--bind", "127.0.0.1:0"])
            .args(extra)
            .env("RUST_LOG", "subsim=warn");
        Server::started(command.stderr(Stdio::inherit()))
    }

    /// [`Server::start`] under `ulimit -v KIB` (an address-space limit), its stderr written
    /// to `stderr` (to be read once it has stopped); `SUBSIM_BINARY` as there.
    pub fn start_limited(kib: u64, stderr: &std::path::Path) -> Server {
        let binary = std::env::var_os("SUBSIM_BINARY").unwrap_or_else(|| BINARY.into());
        let script = format!(
            "ulimit -v {kib} && exec {} serve --bind 127.0.0.1:0",
            binary.to_string_lossy()
        );
        let log = std::fs::File::create(stderr).expect("a stderr file");
        let mut command = Command::new("sh");
        command
            .args(["-c", &script])
            .env("RUST_BACKTRACE", "0")
            .stderr(log);
        Server::started(&mut command)
    }

    /// Spawns `command` (a `subsim serve`, or a shell that `exec`s one) and reads its
    /// address from its first line.
    pub fn started(command: &mut Command) -> Server {
        let mut child = command
            .stdout(Stdio::piped())
            .spawn()
            .expect("subsim serve starts");
        let stdout = child.stdout.take().expect("its stdout");
        // Read on a thread of its own: a server that hangs before it listens (one that
        // panicked while starting its runtime did) fails the test instead of stalling it.
        let (line_tx, line_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut first = String::new();
            let _ = BufReader::new(stdout).read_line(&mut first);
            let _ = line_tx.send(first);
        });
        let Ok(first) = line_rx.recv_timeout(std::time::Duration::from_secs(30)) else {
            let _ = child.kill();
            panic!("subsim serve wrote no first line in 30 s");
        };
        let addr = first
            .trim()
            .strip_prefix("playground at http://")
            .and_then(|rest| rest.strip_suffix('/'))
            .unwrap_or_else(|| {
                panic!("the first line is not `playground at http://ADDR/`: {first:?}")
            })
            .parse()
            .expect("an address");
        Server { child, addr }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends SIGTERM (by process id) and waits, at most 10 s, for the server to stop;
    /// whether it did.
    pub fn terminate(&mut self) -> bool {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        for _ in 0..100 {
            if !self.alive() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        false
    }

    /// The process id, to read its memory use.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

pub type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// A pooled client that lets an idle connection go after 1 s, before the server closes it
/// (an idle keep-alive connection is closed after `--client-timeout`, at least 1 s).
pub fn client() -> HttpClient {
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(std::time::Duration::from_millis(500))
        .build_http()
}

/// An answer: status, headers, whole body as text.
pub struct Answer {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: String,
}

/// The longest [`send`] waits for a whole answer: a server that streams forever (a run
/// paced past every bound, say) fails the test instead of hanging it.
pub const ANSWER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// Sends one request and reads its whole answer, for at most [`ANSWER_TIMEOUT`].
pub async fn send(client: &HttpClient, method: &str, url: &str, body: &str) -> Answer {
    tokio::time::timeout(ANSWER_TIMEOUT, send_unbounded(client, method, url, body))
        .await
        .unwrap_or_else(|_| panic!("no whole answer to {method} {url} within {ANSWER_TIMEOUT:?}"))
}

async fn send_unbounded(client: &HttpClient, method: &str, url: &str, body: &str) -> Answer {
    let request = http::Request::builder()
        .method(method)
        .uri(url)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a request");
    let response = client.request(request).await.expect("an answer");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("the whole body")
        .to_bytes();
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// An event stream split into its events: (event name, data).
pub fn events(stream: &str) -> Vec<(String, String)> {
    stream
        .split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut name = "message".to_string();
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(value) = line.strip_prefix("event:") {
                    name = value.trim().to_string();
                } else if let Some(value) = line.strip_prefix("data:") {
                    data.push(value.strip_prefix(' ').unwrap_or(value));
                }
            }
            (name, data.join("\n"))
        })
        .collect()
}

/// The trace lines (unnamed events' data) and the `end` event's data of a run's stream.
pub fn trace_and_end(stream: &str) -> (Vec<String>, Option<String>) {
    let mut lines = Vec::new();
    let mut end = None;
    for (name, data) in events(stream) {
        match name.as_str() {
            "message" => lines.push(data),
            "end" => end = Some(data),
            _ => {}
        }
    }
    (lines, end)
}
