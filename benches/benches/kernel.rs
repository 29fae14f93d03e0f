//! W1 through the kernel, against the hand-written baseline, in one run.
//!
//! `cargo bench -p subsim-benches --bench kernel` — see docs/PERFORMANCE.md.

use std::hint::black_box;
use std::io;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use subsim_benches::{baseline_w1, baseline_w1_tuned, w1_spec};
use subsim_engine::render::JsonlWriter;
use subsim_engine::sink::Discard;
use subsim_engine::summary::Summary;
use subsim_engine::Simulation;

/// The `subsim` binary's allocator (crates/cli/src/main.rs says why), so that this measures what it does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn w1(c: &mut Criterion) {
    let mut group = c.benchmark_group("w1");
    group.sample_size(10);
    for arrivals in [100_000u64, 1_000_000] {
        group.throughput(Throughput::Elements(arrivals));
        group.bench_with_input(
            BenchmarkId::new("baseline", arrivals),
            &arrivals,
            |b, &n| b.iter(|| black_box(baseline_w1(n, 1))),
        );
        group.bench_with_input(
            BenchmarkId::new("baseline_tuned", arrivals),
            &arrivals,
            |b, &n| b.iter(|| black_box(baseline_w1_tuned(n, 1))),
        );
        group.bench_with_input(
            BenchmarkId::new("subsim_discard", arrivals),
            &arrivals,
            |b, &n| b.iter(|| black_box(Simulation::new(w1_spec(n)).run(&mut Discard))),
        );
        group.bench_with_input(
            BenchmarkId::new("subsim_summary", arrivals),
            &arrivals,
            |b, &n| {
                b.iter(|| {
                    let mut summary = Summary::default();
                    Simulation::new(w1_spec(n)).run_summarized(&mut summary, None, None);
                    black_box(summary)
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("subsim_jsonl", arrivals),
            &arrivals,
            |b, &n| {
                b.iter(|| {
                    let mut writer = JsonlWriter::new(io::sink());
                    Simulation::new(w1_spec(n)).run(&mut writer);
                    black_box(writer.finish().is_ok())
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, w1);
criterion_main!(benches);
