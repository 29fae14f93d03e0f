//! The workloads of issue #7, from their YAML files in `benches/workloads/`, each in the
//! same group as the plain heap-loop baseline (`baseline_w1`, 1,000,000 arrivals) so the
//! ratios come from one run: W1, W1r, W2 (10k, 100k, 1M workers), W3 (1k, 10k, 100k
//! deep), W4, W5 (20k and 200k load workers that each spawn a helper), the runaway, and
//! the JSONL trace of W1 written by the release binary, as a user runs it.
//!
//! `cargo build --release --bin subsim && cargo bench -p subsim-benches --bench workloads`
//! — see docs/PERFORMANCE.md. Filter with a name: `… --bench workloads -- w2`.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use subsim_benches::baseline_w1;
use subsim_engine::spec::SimSpec;
use subsim_engine::summary::Summary;
use subsim_engine::Simulation;

/// The `subsim` binary's allocator (crates/cli/src/main.rs says why), so that this measures what it does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn workloads_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads")
}

/// The spec of `benches/workloads/NAME.yaml`.
fn spec(name: &str) -> SimSpec {
    let path = workloads_dir().join(format!("{name}.yaml"));
    subsim_scenario::load_scenario(&path)
        .unwrap_or_else(|diagnostics| panic!("{}: {diagnostics}", path.display()))
        .spec
}

/// What `--format summary` does: the kernel and the statistics sink (made for the spec,
/// as `subsim run` makes it: a spec without `load` follows no runs per type).
fn summary(spec: &SimSpec) -> Summary {
    let mut summary = Summary::for_spec(spec);
    Simulation::new(spec.clone()).run_summarized(&mut summary, None, None);
    summary
}

/// The release binary next to this bench's own target folder (`target/release/subsim`).
fn release_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let binary = exe.parent()?.parent()?.join("subsim");
    binary.exists().then_some(binary)
}

fn workloads(c: &mut Criterion) {
    let mut group = c.benchmark_group("workloads");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    group.bench_function("baseline_w1_1m", |b| {
        b.iter(|| black_box(baseline_w1(1_000_000, 1)))
    });
    for name in [
        "w1", "w1r", "w2-10k", "w2-100k", "w2-1m", "w3-1k", "w3-10k", "w3-100k", "w4", "w5-20k",
        "w5-200k", "runaway",
    ] {
        let spec = spec(name);
        group.bench_function(name, |b| b.iter(|| black_box(summary(&spec))));
    }
    // The JSONL trace as a user gets it: the whole release binary, YAML read, expect:
    // checked, the trace written to /dev/null.
    if let Some(binary) = release_binary() {
        let w1 = workloads_dir().join("w1.yaml");
        group.bench_function("w1_jsonl_binary", |b| {
            b.iter(|| {
                let status = Command::new(&binary)
                    .args(["run", w1.to_str().expect("UTF-8 path"), "--format", "jsonl"])
                    .stdout(Stdio::null())
                    .status()
                    .expect("the release binary runs");
                assert!(status.success());
            })
        });
    } else {
        eprintln!("w1_jsonl_binary skipped: build it first (cargo build --release --bin subsim)");
    }
    group.finish();
}

criterion_group!(benches, workloads);
criterion_main!(benches);
