//! Issue #8's sweep benchmark: 11 caps × 20 seeds × 100,000 arrivals (scenarios/load/
//! erlang-b-20-erlangs.yaml, caps 15..25), run by the release binary as a user runs it,
//! with `--jobs 1` and `--jobs 2` in the same group, so their ratio comes from one run
//! (the target: `--jobs 2` at most 0.6 × `--jobs 1` on the 2-core project machine). Both
//! write the same CSV to /dev/null (sweep output is byte-identical for every `--jobs`).
//!
//! `cargo build --release --bin subsim && cargo bench -p subsim-benches --bench sweep` —
//! see the "Sweep" section of docs/PERFORMANCE.md. One sample is one whole sweep (tens of
//! seconds with one job), so the run takes several minutes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};

/// The release binary next to this bench's own target folder (`target/release/subsim`).
fn release_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let binary = exe.parent()?.parent()?.join("subsim");
    binary.exists().then_some(binary)
}

/// `subsim sweep` of the benchmark with `jobs` jobs; the CSV goes to /dev/null.
fn sweep(binary: &Path, scenario: &Path, jobs: &str) {
    let status = Command::new(binary)
        .args([
            "sweep",
            scenario.to_str().expect("UTF-8 path"),
            "--set",
            "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS=15..25",
            "--set",
            "load.count=100000",
            "--seeds",
            "20",
            "--jobs",
            jobs,
        ])
        .stdout(Stdio::null())
        .status()
        .expect("the release binary runs");
    assert!(status.success(), "sweep --jobs {jobs} failed");
}

fn sweeps(c: &mut Criterion) {
    let Some(binary) = release_binary() else {
        eprintln!("sweep bench skipped: build it first (cargo build --release --bin subsim)");
        return;
    };
    let scenario =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/load/erlang-b-20-erlangs.yaml");
    let mut group = c.benchmark_group("sweep_11_caps_20_seeds_100k");
    // One sweep per sample, ten samples each: criterion's fewest.
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_millis(1));
    group.measurement_time(Duration::from_secs(1));
    for jobs in ["1", "2"] {
        group.bench_function(format!("jobs_{jobs}"), |b| {
            b.iter(|| sweep(&binary, &scenario, jobs))
        });
    }
    group.finish();
}

criterion_group!(benches, sweeps);
criterion_main!(benches);
