//! The page (`page.html`, `app.js`, `app.css`, embedded in the binary) and the list of
//! shipped scenarios it offers.
//!
//! The page loads nothing but these three files and the API, and says so in its
//! Content-Security-Policy: scripts and styles only from this server, no inline script,
//! no frames, no forms posted elsewhere. Its script sets only `textContent`, never markup,
//! so nothing a scenario says is ever read as HTML.

use std::sync::OnceLock;

use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

const HTML: &str = include_str!("page.html");
const SCRIPT: &str = include_str!("app.js");
const STYLE: &str = include_str!("app.css");

/// What the page may load: itself, its script and style, and the API; nothing else.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                       connect-src 'self'; img-src 'self' data:; base-uri 'none'; \
                       form-action 'none'; frame-ancestors 'none'";

fn file(content_type: &'static str, body: &'static str) -> Response {
    let mut response = ([(header::CONTENT_TYPE, content_type)], body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

pub async fn index() -> Response {
    file("text/html; charset=utf-8", HTML)
}

pub async fn script() -> Response {
    file("text/javascript; charset=utf-8", SCRIPT)
}

pub async fn style() -> Response {
    file("text/css; charset=utf-8", STYLE)
}

/// The demo's path among the shipped scenarios.
const DEMO: &str = "scenarios/demo.yaml";

/// Every shipped scenario as `{path, family, name, description}`: the demo first, then
/// by family (its folder) and path. Computed once.
pub fn scenario_list() -> &'static Value {
    static LIST: OnceLock<Value> = OnceLock::new();
    LIST.get_or_init(|| {
        let mut paths: Vec<&str> = crate::catalog::scenario_paths().collect();
        paths.sort_by_key(|path| (*path != DEMO, family(path), *path));
        Value::Array(paths.into_iter().map(entry).collect())
    })
}

/// `scenarios/cap/x.yaml` → `cap`; the demo's family is `demo`.
fn family(path: &str) -> &str {
    let inner = path.strip_prefix("scenarios/").unwrap_or(path);
    match inner.split_once('/') {
        Some((family, _)) => family,
        None => "demo",
    }
}

fn entry(path: &str) -> Value {
    let source = crate::catalog::scenario(path).unwrap_or_default();
    let base = crate::catalog::scenario_base_dir(path);
    let (name, description) = match subsim_scenario::parse_scenario(source, path, &base) {
        Ok(loaded) => (
            loaded.spec.name,
            loaded.spec.description.unwrap_or_default(),
        ),
        Err(_) => (path.to_string(), String::new()),
    };
    json!({
        "path": path,
        "family": family(path),
        "name": name,
        "description": description.trim_end(),
    })
}

/// A shipped scenario's text by its path (`scenarios/cap/x.yaml`).
pub fn scenario_source(path: &str) -> Option<&'static str> {
    crate::catalog::scenario(path)
}
