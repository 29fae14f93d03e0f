//! Who may talk to the playground: the host and origin policy, one middleware in front of
//! every route (issue #31).
//!
//! A web page the user visits can make their browser send requests to a server on their
//! own machine. Two checks stop it turning the playground against them:
//!
//! - **Host** (DNS rebinding): a page on `evil.example`, its name rebound to 127.0.0.1,
//!   reaches this server with `Host: evil.example:PORT`. Only the names the server was
//!   bound to are answered: the bound address, `localhost`, `127.0.0.1` and `[::1]`, each
//!   with the port, and the names given with `--allow-host`. Anything else: 421.
//! - **Origin and content type** (cross-site requests): a page on another origin can POST
//!   a "simple" request (`text/plain`, a form) without the browser asking first. Every
//!   request that is not a GET or HEAD must carry an `Origin` that is one of the allowed
//!   hosts (or none at all: curl, scripts), else 403, and be `application/json`, else 415
//!   (a cross-site page cannot send JSON without the browser's preflight, which this
//!   server never grants).
//!
//! Every refusal is one JSON object (`{"error": …}`) and a `warn` log line.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::response::Response;

/// The hosts (`name:port`, lower case) the server answers to.
#[derive(Clone, Debug)]
pub struct Policy {
    hosts: Arc<Vec<String>>,
}

impl Policy {
    /// The bound address, the loopback names and `allowed` (each with the bound port,
    /// unless it names its own), lower case.
    pub fn new(bound: SocketAddr, allowed: &[String]) -> Policy {
        let port = bound.port();
        let mut hosts = vec![
            bound.to_string(),
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
            format!("[::1]:{port}"),
        ];
        for name in allowed {
            let name = name.trim().to_ascii_lowercase();
            if has_port(&name) {
                hosts.push(name);
            } else {
                hosts.push(format!("{name}:{port}"));
            }
        }
        if port == 80 {
            // Browsers leave the default port out of `Host` and `Origin`.
            let bare: Vec<String> = hosts
                .iter()
                .filter_map(|host| host.strip_suffix(":80").map(str::to_string))
                .collect();
            hosts.extend(bare);
        }
        for host in &mut hosts {
            host.make_ascii_lowercase();
        }
        hosts.sort();
        hosts.dedup();
        Policy {
            hosts: Arc::new(hosts),
        }
    }

    /// Whether `host` (a `Host` header's value) is one the server answers to.
    pub fn host_allowed(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        self.hosts.contains(&host)
    }

    /// Whether `origin` (an `Origin` header's value) is this server's own page.
    pub fn origin_allowed(&self, origin: &str) -> bool {
        origin
            .trim()
            .strip_prefix("http://")
            .is_some_and(|host| self.host_allowed(host))
    }

    /// The allowed hosts, for messages.
    fn listed(&self) -> String {
        self.hosts.join(", ")
    }

    /// Why `request` is refused, if it is: its status and a message saying what to do.
    pub fn refusal(&self, request: &Request<Body>) -> Option<(StatusCode, String)> {
        let headers = request.headers();
        let host = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string)
            .or_else(|| request.uri().authority().map(|a| a.as_str().to_string()));
        match host {
            None => {
                return Some((
                    StatusCode::MISDIRECTED_REQUEST,
                    "the request names no host (`Host:`); this server answers only to \
                     its own address"
                        .to_string(),
                ))
            }
            Some(host) if !self.host_allowed(&host) => {
                return Some((
                    StatusCode::MISDIRECTED_REQUEST,
                    format!(
                        "this server does not answer to the host {:?}: it answers only to {} \
                         (a web page whose name points here is refused; \
                         `subsim serve --allow-host NAME` adds a name)",
                        host,
                        self.listed()
                    ),
                ));
            }
            Some(_) => {}
        }
        if matches!(*request.method(), Method::GET | Method::HEAD) {
            return None;
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("(not text)");
            if !self.origin_allowed(origin) {
                return Some((
                    StatusCode::FORBIDDEN,
                    format!(
                        "a request from the page {origin:?} may not change anything here: \
                         only this server's own page (or a client that sends no `Origin`, \
                         such as curl) may POST; `subsim serve --allow-host NAME` adds a name"
                    ),
                ));
            }
        }
        let json = headers
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(is_json);
        if !json {
            return Some((
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the body must be JSON, sent with `Content-Type: application/json`".to_string(),
            ));
        }
        None
    }
}

/// `application/json`, with or without parameters (`; charset=utf-8`).
fn is_json(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// `name:port` or `[v6]:port`.
fn has_port(name: &str) -> bool {
    match name.rsplit_once(':') {
        Some((before, port)) => {
            port.parse::<u16>().is_ok() && (!before.contains(':') || before.ends_with(']'))
        }
        None => false,
    }
}

/// The middleware: refused requests never reach a route.
pub async fn check(
    axum::extract::State(policy): axum::extract::State<Policy>,
    request: Request<Body>,
    next: axum::middleware::Next,
) -> Response {
    match policy.refusal(&request) {
        None => next.run(request).await,
        Some((status, message)) => {
            let header = |name: header::HeaderName| {
                request
                    .headers()
                    .get(name)
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or("")
                    .to_string()
            };
            tracing::warn!(
                status = status.as_u16(),
                method = %request.method(),
                path = request.uri().path(),
                host = header(header::HOST),
                origin = header(header::ORIGIN),
                content_type = header(header::CONTENT_TYPE),
                "refused: {message}"
            );
            super::api::error(status, &message)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        Policy::new(
            "127.0.0.1:8080".parse().expect("an address"),
            &["lab.local".into()],
        )
    }

    fn request(method: &str, headers: &[(&str, &str)]) -> Request<Body> {
        let mut builder = Request::builder().method(method).uri("/api/run");
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.body(Body::empty()).expect("a request")
    }

    fn status(method: &str, headers: &[(&str, &str)]) -> Option<u16> {
        policy()
            .refusal(&request(method, headers))
            .map(|(status, _)| status.as_u16())
    }

    #[test]
    fn hosts_are_the_bound_ones_and_the_allowed_ones() {
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST:8080",
            "[::1]:8080",
            "lab.local:8080",
        ] {
            assert_eq!(status("GET", &[("host", host)]), None, "{host}");
        }
        for host in [
            "evil.example:8080",
            "localhost",
            "localhost:8081",
            "127.0.0.1",
            "lab.local:9",
        ] {
            assert_eq!(status("GET", &[("host", host)]), Some(421), "{host}");
        }
        assert_eq!(status("GET", &[]), Some(421));
    }

    #[test]
    fn posts_need_an_own_origin_or_none_and_json() {
        let host = ("host", "127.0.0.1:8080");
        let json = ("content-type", "application/json; charset=utf-8");
        assert_eq!(status("POST", &[host, json]), None);
        assert_eq!(
            status("POST", &[host, json, ("origin", "http://localhost:8080")]),
            None
        );
        for origin in ["http://evil.example:8080", "null", "https://127.0.0.1:8080"] {
            assert_eq!(
                status("POST", &[host, json, ("origin", origin)]),
                Some(403),
                "{origin}"
            );
        }
        for kind in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
        ] {
            assert_eq!(
                status("POST", &[host, ("content-type", kind)]),
                Some(415),
                "{kind}"
            );
        }
        assert_eq!(status("POST", &[host]), Some(415));
    }

    #[test]
    fn a_default_port_may_be_left_out() {
        let policy = Policy::new("127.0.0.1:80".parse().expect("an address"), &[]);
        assert!(policy.host_allowed("localhost"));
        assert!(policy.origin_allowed("http://127.0.0.1"));
        assert!(!policy.host_allowed("evil.example"));
    }
}
