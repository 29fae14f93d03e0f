//! A classroom's worth of load on `subsim serve` (issue #31), for
//! `benches/scripts/playground-classroom.sh`: CLIENTS concurrent clients, each running the
//! instant demo ROUNDS times, one after another. A client answered 503 waits its
//! `Retry-After` and asks again; a run's latency is from its first attempt to the last
//! byte of its stream (which must end with `event: end`). Prints served runs, failures,
//! and the latencies' p50, p99, mean and max.
//!
//! usage: cargo run --release -p subsim --example classroom -- ADDR [CLIENTS] [ROUNDS]

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

const DEMO: &str = include_str!("../../../scenarios/demo.yaml");

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(addr) = args.first().cloned() else {
        eprintln!("usage: classroom ADDR [CLIENTS] [ROUNDS]");
        std::process::exit(2);
    };
    let clients: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(200);
    let rounds: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(5);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let body = serde_json::json!({"scenario": DEMO, "speed": "instant"}).to_string();
    let started = Instant::now();
    let results: Vec<Result<Duration, String>> = runtime.block_on(async {
        let http = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_millis(500))
            .build_http::<Full<Bytes>>();
        let url = format!("http://{addr}/api/run");
        let tasks: Vec<_> = (0..clients)
            .map(|_| {
                let (http, url, body) = (http.clone(), url.clone(), body.clone());
                tokio::spawn(async move {
                    let mut out = Vec::new();
                    for _ in 0..rounds {
                        out.push(one_run(&http, &url, &body).await);
                    }
                    out
                })
            })
            .collect();
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.expect("a client"));
        }
        all
    });
    let wall = started.elapsed();
    let mut latencies: Vec<Duration> = results
        .iter()
        .filter_map(|r| r.as_ref().ok().copied())
        .collect();
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    latencies.sort();
    let at = |q: f64| {
        latencies
            .get(((latencies.len() as f64 * q).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or_default()
    };
    let mean = latencies.iter().sum::<Duration>() / latencies.len().max(1) as u32;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "clients {clients}, rounds {rounds}: served {} of {}, failed {}, wall {:.2} s",
        latencies.len(),
        clients * rounds,
        failures.len(),
        wall.as_secs_f64()
    );
    println!(
        "latency ms: p50 {:.1}, p99 {:.1}, mean {:.1}, max {:.1}",
        ms(at(0.5)),
        ms(at(0.99)),
        ms(mean),
        ms(latencies.last().copied().unwrap_or_default())
    );
    for failure in failures.iter().take(5) {
        println!("failure: {failure}");
    }
}

/// One run, asked again after `Retry-After` while the answer is 503 (at most 60 tries).
async fn one_run(
    http: &Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>,
    url: &str,
    body: &str,
) -> Result<Duration, String> {
    let first = Instant::now();
    for _ in 0..60 {
        let request = http::Request::builder()
            .method("POST")
            .uri(url)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| e.to_string())?;
        let response = http.request(request).await.map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let retry = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(1);
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        match status {
            200 if String::from_utf8_lossy(&bytes).contains("event: end") => {
                return Ok(first.elapsed())
            }
            200 => return Err("a stream without `end`".into()),
            503 => tokio::time::sleep(Duration::from_secs(retry)).await,
            other => {
                return Err(format!(
                    "status {other}: {}",
                    String::from_utf8_lossy(&bytes)
                ))
            }
        }
    }
    Err("503 sixty times".into())
}
