//! Richer load: a list of named streams, a rate schedule, on/off bursts and replayed
//! arrival times — their arrival counts against the rates they promise, exact replay,
//! and the determinism rule that adding a stream changes no other stream's arrivals.

use std::path::Path;

use subsim_engine::event::EventKind;
use subsim_engine::summary::Summary;
use subsim_engine::Simulation;

/// `(t_us, stream)` of every first request (arrival) of a scenario's run under `seed`.
fn arrivals(yaml: &str, base_dir: &Path, seed: u64) -> Vec<(u64, Option<String>)> {
    let loaded = subsim_scenario::parse_scenario(yaml, "streams.yaml", base_dir)
        .unwrap_or_else(|problems| panic!("{problems}"));
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    let mut sink = |event: &subsim_engine::Event| {
        if let EventKind::SpawnRequested {
            arrival: Some(arrival),
            stream,
            ..
        } = &event.kind
        {
            if seen.insert(*arrival) {
                out.push((event.t.as_micros(), stream.as_deref().map(str::to_string)));
            }
        }
    };
    let report = Simulation::new(loaded.spec).with_seed(seed).run(&mut sink);
    assert!(report.limit.is_none(), "{:?}", report.limit);
    out
}

/// Whether `count` is within `sigmas` standard deviations of a Poisson count of mean `mean`.
fn poisson_close(count: usize, mean: f64, sigmas: f64) -> bool {
    (count as f64 - mean).abs() <= sigmas * mean.sqrt()
}

fn in_window(times: &[(u64, Option<String>)], from_s: u64, to_s: u64) -> usize {
    times
        .iter()
        .filter(|(t, _)| *t >= from_s * 1_000_000 && *t < to_s * 1_000_000)
        .count()
}

const WORKER: &str = "agents:\n  worker:\n    description: w\n    behavior: [{work: 1s}]\n";

#[test]
fn a_rate_schedule_arrives_at_each_phases_rate_and_repeats() {
    // 1 h at 1/s, 1 h at 10/s, 2 h at 0: a 4 h day, twice.
    let yaml = format!(
        "name: s\nsession:\n  env: {{CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: 100}}\n{WORKER}load:\n  arrivals:\n    schedule:\n      - {{for: 1h, rate: 1/s}}\n      - {{for: 1h, rate: 10/s}}\n      - {{for: 2h, rate: 0/s}}\n  duration: 8h\n  spawn: {{agent: worker}}\n"
    );
    for seed in [1, 2, 3] {
        let times = arrivals(&yaml, Path::new("."), seed);
        for day in [0, 4] {
            let quiet = in_window(&times, (day + 2) * 3600, (day + 4) * 3600);
            let slow = in_window(&times, day * 3600, (day + 1) * 3600);
            let fast = in_window(&times, (day + 1) * 3600, (day + 2) * 3600);
            assert_eq!(
                quiet, 0,
                "seed {seed}, day from {day} h: arrivals at rate 0"
            );
            assert!(
                poisson_close(slow, 3_600.0, 5.0),
                "seed {seed}: {slow} at 1/s in 1 h"
            );
            assert!(
                poisson_close(fast, 36_000.0, 5.0),
                "seed {seed}: {fast} at 10/s in 1 h"
            );
        }
    }
}

#[test]
fn on_off_arrivals_come_only_in_on_periods_at_their_rate() {
    let yaml = format!(
        "name: s\nsession:\n  env: {{CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: 1000}}\n{WORKER}load:\n  arrivals: {{on_off: {{rate: 20/s, on: 10s, off: 30s}}}}\n  duration: 4000s\n  spawn: {{agent: worker}}\n"
    );
    let times = arrivals(&yaml, Path::new("."), 5);
    // On periods: [40k, 40k + 10) s; everything else is off.
    let off = times
        .iter()
        .filter(|(t, _)| t % 40_000_000 >= 10_000_000)
        .count();
    assert_eq!(off, 0, "arrivals during off periods");
    // 100 on periods of 10 s at 20/s.
    assert!(poisson_close(times.len(), 20_000.0, 5.0), "{}", times.len());
    // Exponential periods: the long-run rate is rate × on / (on + off) = 5/s.
    let yaml = yaml.replace("on: 10s, off: 30s", "on: exp(10s), off: exp(30s)");
    let times = arrivals(&yaml, Path::new("."), 5);
    // The count over 400 cycles varies with the periods too: a wide bound.
    let count = times.len() as f64;
    assert!((15_000.0..25_000.0).contains(&count), "{count}");
}

#[test]
fn a_times_file_replays_exactly_those_instants() {
    let dir = std::env::temp_dir().join(format!("subsim-streams-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // Irregular instants, duplicates included, in every accepted spelling.
    let mut expected = Vec::new();
    let mut file = String::from("arrival_time,user\n");
    let mut t = 0u64;
    for i in 0..500u64 {
        t += (i * 7_919) % 1_300_000;
        if i % 50 == 0 {
            file.push_str(&format!("{}ms, u{i}\n", t / 1000));
            expected.push(t / 1000 * 1000);
            continue;
        }
        if i % 3 == 0 {
            file.push_str(&format!("{}.{:06}\n", t / 1_000_000, t % 1_000_000));
            expected.push(t);
        }
        file.push_str(&format!("{}.{:06}\n", t / 1_000_000, t % 1_000_000));
        expected.push(t);
    }
    std::fs::write(dir.join("times.csv"), file).expect("write");
    let yaml = format!(
        "name: s\nsession:\n  env: {{CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: 3}}\n{WORKER}load:\n  arrivals: {{file: times.csv}}\n  spawn: {{agent: worker}}\n  retry: backoff(exp(1s))\n"
    );
    for seed in [1, 9] {
        let times: Vec<u64> = arrivals(&yaml, &dir, seed)
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        assert_eq!(times, expected, "seed {seed}");
    }
    // `count` replays the first N.
    let first = yaml.replace("  spawn:", "  count: 10\n  spawn:");
    let times: Vec<u64> = arrivals(&first, &dir, 1)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    assert_eq!(times, expected[..10]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn adding_a_stream_leaves_the_other_streams_arrivals_unchanged() {
    let stream = |name: &str, arrivals: &str| {
        format!("  - name: {name}\n    arrivals: {arrivals}\n    count: 2000\n    spawn: {{agent: worker}}\n    retry: queue\n")
    };
    let one = format!(
        "name: s\n{WORKER}load:\n{}",
        stream("interactive", "poisson(15/s)")
    );
    let two = format!(
        "name: s\n{WORKER}load:\n{}{}",
        stream("batch", "{on_off: {rate: 40/s, on: exp(5s), off: exp(5s)}}"),
        stream("interactive", "poisson(15/s)")
    );
    let only = |times: Vec<(u64, Option<String>)>, name: &str| -> Vec<u64> {
        times
            .into_iter()
            .filter(|(_, stream)| stream.as_deref() == Some(name))
            .map(|(t, _)| t)
            .collect()
    };
    let alone = only(arrivals(&one, Path::new("."), 4), "interactive");
    let together = arrivals(&two, Path::new("."), 4);
    assert_eq!(alone.len(), 2000);
    assert_eq!(only(together.clone(), "batch").len(), 2000);
    assert_eq!(only(together, "interactive"), alone);
}

#[test]
fn same_instant_arrivals_come_in_list_order() {
    let yaml = format!(
        "name: s\n{WORKER}load:\n  - {{name: b, arrivals: every(1s), count: 3, spawn: {{agent: worker}}}}\n  - {{name: a, arrivals: every(500ms), count: 5, spawn: {{agent: worker}}}}\n"
    );
    let times: Vec<(u64, String)> = arrivals(&yaml, Path::new("."), 1)
        .into_iter()
        .map(|(t, stream)| (t / 1000, stream.unwrap_or_default()))
        .collect();
    let expected: Vec<(u64, String)> = [
        (0, "b"),
        (0, "a"),
        (500, "a"),
        (1000, "b"),
        (1000, "a"),
        (1500, "a"),
        (2000, "b"),
        (2000, "a"),
    ]
    .iter()
    .map(|(t, s)| (*t, s.to_string()))
    .collect();
    assert_eq!(times, expected);
}

#[test]
fn per_stream_statistics_add_up_to_the_load() {
    let yaml = format!(
        "name: s\n{WORKER}load:\n  - {{name: fast, arrivals: poisson(30/s), count: 3000, spawn: {{agent: worker}}, retry: queue}}\n  - {{name: slow, arrivals: poisson(5/s), count: 500, spawn: {{agent: worker}}}}\n"
    );
    let loaded = subsim_scenario::parse_scenario(&yaml, "s.yaml", Path::new("."))
        .unwrap_or_else(|problems| panic!("{problems}"));
    let mut summary = Summary::for_spec(&loaded.spec);
    Simulation::new(loaded.spec).run(&mut summary);
    let load = summary.load_report().expect("load statistics");
    let streams = &load.by_stream;
    assert_eq!(
        streams
            .iter()
            .map(|(name, retries, _)| (name.as_str(), *retries))
            .collect::<Vec<_>>(),
        [("fast", true), ("slow", false)]
    );
    let (fast, slow) = (&streams[0].2, &streams[1].2);
    assert_eq!((fast.arrivals, slow.arrivals), (3000, 500));
    assert_eq!(fast.arrivals + slow.arrivals, load.all.arrivals);
    assert_eq!(fast.attempts + slow.attempts, load.all.attempts);
    // `slow` does not retry: nobody of it is delayed, and every attempt is an arrival.
    assert_eq!(slow.delayed.mean, 0.0);
    assert_eq!(slow.attempts, slow.arrivals);
    assert!(fast.delayed.mean > 0.0 && fast.delayed.mean == fast.blocking.mean);
    // The load's delayed share is the arrival-weighted mix of the two.
    let mixed = fast.delayed.mean * 3000.0 / 3500.0;
    assert!(
        (load.all.delayed.mean - mixed).abs() < 1e-9,
        "{} vs {mixed}",
        load.all.delayed.mean
    );
    // Only `fast` waits; its waits are the load's.
    assert_eq!(fast.wait.count + slow.wait.count, load.all.wait.count);
    assert_eq!(fast.delayed_wait.max, load.all.delayed_wait.max);
    let json = summary.render_json();
    assert!(json.contains("\"by_stream\":{\"fast\":{\"retries\":true,\"arrivals\":3000"));
}
