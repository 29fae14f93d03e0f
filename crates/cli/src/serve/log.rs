//! The request log (issue #31): every request is a `request` span, and one `info` line
//! when its answer is done, with its method, route, status, bytes and latency (a stream's
//! when its last byte went out, or its client went away). `RUST_LOG` filters it and
//! `--log-format json|text` shapes it (`main.rs`, `init_tracing`).

use std::time::Instant;

use axum::body::Body;
use axum::extract::MatchedPath;
use axum::http::Request;
use axum::response::Response;
use futures_util::StreamExt as _;
use tracing::Instrument as _;

/// The middleware: a span around the request, a line when its answer is done.
pub async fn request(request: Request<Body>, next: axum::middleware::Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "(none)".to_string(), |path| path.as_str().to_string());
    let span = tracing::info_span!("request", %method, route = %route);
    let response = next.run(request).instrument(span.clone()).await;
    let status = response.status().as_u16();
    let mut done = Done {
        span,
        method: method.to_string(),
        route,
        status,
        started,
        bytes: 0,
    };
    match axum::body::HttpBody::size_hint(response.body()).exact() {
        // Logged as it drops, here.
        Some(bytes) => {
            done.bytes = bytes;
            drop(done);
            response
        }
        // A stream: counted as it goes out, logged when it ends or its client goes away
        // (when the stream, and `done` with it, is dropped).
        None => {
            let (parts, body) = response.into_parts();
            let counted = body.into_data_stream().map(move |chunk| {
                if let Ok(bytes) = &chunk {
                    done.count(bytes.len());
                }
                chunk
            });
            Response::from_parts(parts, Body::from_stream(counted))
        }
    }
}

/// What is logged of a request, when its answer is done (when this is dropped).
struct Done {
    span: tracing::Span,
    method: String,
    route: String,
    status: u16,
    started: Instant,
    bytes: u64,
}

impl Done {
    fn count(&mut self, bytes: usize) {
        self.bytes += bytes as u64;
    }
}

impl Drop for Done {
    fn drop(&mut self) {
        let latency_ms = self.started.elapsed().as_secs_f64() * 1e3;
        tracing::info!(
            parent: &self.span,
            method = %self.method,
            route = %self.route,
            status = self.status,
            bytes = self.bytes,
            latency_ms = format!("{latency_ms:.1}"),
            "served"
        );
    }
}
