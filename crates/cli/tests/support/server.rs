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
        let mut child = Command::new(binary)
            .args(["serve", "--bind", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("subsim serve starts");
        let stdout = child.stdout.take().expect("its stdout");
        let mut first = String::new();
        BufReader::new(stdout)
            .read_line(&mut first)
            .expect("its first line");
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

pub async fn send(client: &HttpClient, method: &str, url: &str, body: &str) -> Answer {
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
