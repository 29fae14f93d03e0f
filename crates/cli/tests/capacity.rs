//! `subsim capacity` and what issue #33 added around it: settled picks that agree with
//! Erlang B, the same answer for any `--jobs`, targets refused before anything runs,
//! progress bars under a pseudo-terminal, `erlang` in the tester's terms, and the
//! container recipe's commands run outside a container.

use std::process::Command;

use crate::support::{code, flat, repo_root, stderr, stdout, subsim, TempDir};

fn erlang_b_scenario() -> String {
    repo_root()
        .join("scenarios/load/erlang-b-20-erlangs.yaml")
        .display()
        .to_string()
}

/// 3 Erlangs (3/s of exp(1s) runs), 1,500 arrivals a run: Erlang B is 0.110 at cap 5 and
/// 0.052 at cap 6, so the smallest cap under 0.08 is 6.
fn small_caps(extra: &[&str]) -> std::process::Output {
    small_caps_over("3..8", extra)
}

fn small_caps_over(values: &str, extra: &[&str]) -> std::process::Output {
    let file = erlang_b_scenario();
    let mut args = vec![
        "capacity",
        file.as_str(),
        "--set",
        "load.arrivals=poisson(3/s)",
        "--set",
        "load.count=1500",
        "--target",
        "blocking<0.08",
        "--values",
        values,
        "--quiet",
    ];
    args.extend_from_slice(extra);
    subsim(&args)
}

#[test]
fn capacity_settles_on_erlang_bs_cap_and_is_the_same_for_any_jobs() {
    let theory = (1..100)
        .find(|cap| {
            let mut b = 1.0f64;
            for k in 1..=*cap {
                b = 3.0 * b / (f64::from(k) + 3.0 * b);
            }
            b < 0.08
        })
        .unwrap();
    assert_eq!(theory, 6);
    for seed in ["1", "2", "3"] {
        let one = small_caps(&["--seed", seed, "--jobs", "1"]);
        let two = small_caps(&["--seed", seed, "--jobs", "2"]);
        assert_eq!(code(&one), 0, "{}{}", stdout(&one), stderr(&one));
        assert_eq!(stdout(&one), stdout(&two), "--jobs changed the answer");
        let text = flat(&stdout(&one));
        assert!(text.starts_with("cap 6: blocking "), "{text}");
        assert!(
            text.contains("cap 5: ") && text.contains("misses; settled after"),
            "{text}"
        );
    }
    let json = small_caps(&["--seed", "1", "--format", "json"]);
    let answer: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(answer["settled"], true);
    assert_eq!(answer["pick"], "6");
    assert_eq!(answer["values"].as_array().unwrap().len(), 6);
}

#[test]
fn capacity_runs_are_the_sweeps_runs() {
    // Seeds are derived per value and replica as `sweep` derives them per point, so the
    // first look's runs are the sweep's first four replicas.
    let file = erlang_b_scenario();
    let capacity = subsim(&[
        "capacity",
        &file,
        "--set",
        "load.count=500",
        "--target",
        "blocking<0.5",
        "--values",
        "18,20",
        "--max-seeds",
        "4",
        "--format",
        "json",
        "--quiet",
    ]);
    let sweep = subsim(&[
        "sweep",
        &file,
        "--set",
        "load.count=500",
        "--cap",
        "18,20",
        "--seeds",
        "4",
    ]);
    let answer: serde_json::Value = serde_json::from_str(&stdout(&capacity)).unwrap();
    let table = stdout(&sweep);
    let header: Vec<&str> = table.lines().next().unwrap().split(',').collect();
    let blocking = header.iter().position(|name| *name == "blocking").unwrap();
    let means: Vec<f64> = table
        .lines()
        .filter(|line| line.contains(",all,"))
        .map(|line| line.split(',').nth(blocking).unwrap().parse().unwrap())
        .collect();
    for (value, mean) in answer["values"].as_array().unwrap().iter().zip(means) {
        let got = value["mean"].as_f64().unwrap();
        assert!((got - mean).abs() < 1e-6, "{got} vs the sweep's {mean}");
    }
}

#[test]
fn an_unsettled_pick_says_which_values_are_in_doubt_and_how_many_more_seeds() {
    // 6 runs in all: the first look (6 values × 4 seeds) already passes the budget.
    let output = small_caps(&["--max-runs", "30", "--max-seeds", "64"]);
    let text = flat(&stdout(&output));
    if text.starts_with("not settled") {
        assert_eq!(code(&output), 1);
        assert!(text.contains("in doubt: cap "), "{text}");
        assert!(text.contains("more seeds"), "{text}");
    } else {
        assert_eq!(code(&output), 0, "{text}");
    }
    let none = small_caps_over("1..3", &[]);
    assert_eq!(code(&none), 1);
    assert!(
        stdout(&none).starts_with("no cap from 1 to 3 meets"),
        "{}",
        stdout(&none)
    );
}

#[test]
fn targets_are_checked_before_anything_runs_and_nothing_is_written() {
    let dir = TempDir::new("capacity-refusals");
    let out = dir.path().join("out.txt");
    let out_text = out.display().to_string();
    let file = erlang_b_scenario();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--target", "wait_p95<0.05"], "under `retry: none`"),
        (vec!["--target", "delayed<0.05"], "nothing waits"),
        (vec!["--target", "blockng<0.01"], "did you mean `blocking`?"),
        (vec!["--target", "blocking>0.01"], "upper bound"),
        (vec!["--target", "blocking<x"], "`x` is not a number"),
        (
            vec!["--target", "blocking<0.01", "--max-runs", "0"],
            "--max-runs",
        ),
        (
            vec!["--target", "blocking<0.01", "--max-time", "0s"],
            "no time at all",
        ),
        (
            vec!["--target", "blocking<0.01", "--cap", "20"],
            "--cap fixes the cap",
        ),
    ];
    for (extra, expected) in cases {
        let mut args = vec![
            "capacity",
            file.as_str(),
            "--values",
            "18..20",
            "--out",
            &out_text,
        ];
        args.extend(extra.iter());
        let output = subsim(&args);
        assert_eq!(code(&output), 2, "{extra:?}: {}", stderr(&output));
        assert!(
            flat(&stderr(&output)).contains(expected),
            "{extra:?}: {}",
            stderr(&output)
        );
        assert!(!out.exists(), "{extra:?} wrote its output");
    }
    // The sweep refuses the same, and a chart axis it cannot draw, before running.
    let svg = dir.path().join("chart.svg").display().to_string();
    for (extra, expected) in [
        (
            vec![
                "--cap",
                "18,20",
                "--target",
                "wait_p95<0.05",
                "--vary",
                "cap",
            ],
            "nothing waits",
        ),
        (
            vec![
                "--set",
                "load.arrivals=poisson(1/s),poisson(2/s)",
                "--format",
                "svg",
            ],
            "is not a number",
        ),
    ] {
        let mut args = vec!["sweep", file.as_str(), "--out", &svg];
        args.extend(extra.iter());
        let output = subsim(&args);
        assert_eq!(code(&output), 2, "{extra:?}: {}", stderr(&output));
        assert!(
            flat(&stderr(&output)).contains(expected),
            "{extra:?}: {}",
            stderr(&output)
        );
        assert!(!std::path::Path::new(&svg).exists());
    }
}

#[test]
fn sweep_wait_percentiles_get_intervals_across_replicas_in_appended_columns() {
    let file = erlang_b_scenario();
    let output = subsim(&[
        "sweep",
        &file,
        "--cap",
        "18,40",
        "--set",
        "load.count=800",
        "--set",
        "load.retry=queue",
        "--seeds",
        "3",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let table = stdout(&output);
    let header: Vec<&str> = table.lines().next().unwrap().split(',').collect();
    // The old columns keep their places; the new ones come after them.
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    assert_eq!(
        at("erlang_wait"),
        header.len() - 8,
        "seven columns appended after it"
    );
    assert!(at("wait_p95_lo") > at("erlang_wait"));
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let all18 = rows
        .iter()
        .find(|r| r[0] == "18" && r[at("replica")] == "all")
        .unwrap();
    let (lo, p95, hi) = (
        all18[at("wait_p95_lo")].parse::<f64>().unwrap(),
        all18[at("wait_p95")].parse::<f64>().unwrap(),
        all18[at("wait_p95_hi")].parse::<f64>().unwrap(),
    );
    assert!(lo <= p95 && p95 <= hi && lo >= 0.0, "{lo} {p95} {hi}");
    // A replica's own row has no interval of its percentiles.
    let one = rows
        .iter()
        .find(|r| r[0] == "18" && r[at("replica")] == "0")
        .unwrap();
    assert_eq!(one[at("wait_p95_lo")], "");
    // At 40 slots for 20 Erlangs almost nothing waits: a p99 of 0 everywhere has none.
    let all40 = rows
        .iter()
        .find(|r| r[0] == "40" && r[at("replica")] == "all")
        .unwrap();
    if all40[at("wait_p50")] == "0" {
        assert_eq!(all40[at("wait_p50_lo")], "");
    }
}

/// The empty part of indicatif's bar: drawn only by a progress bar.
const BAR: &str = "░░░";

fn under_a_terminal(command: &str) -> Option<String> {
    // `script` (util-linux) runs the command under a pseudo-terminal: stderr is a terminal.
    let output = Command::new("script")
        .args(["-qec", command, "/dev/null"])
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn capacity_and_check_draw_progress_under_a_terminal_unless_quiet() {
    let binary = env!("CARGO_BIN_EXE_subsim");
    let folder = repo_root().join("scenarios/load");
    let check = format!("{binary} check {}", folder.display());
    let Some(drawn) = under_a_terminal(&check) else {
        eprintln!("skipped: `script` (util-linux) is not installed");
        return;
    };
    assert!(drawn.contains(" files, ") && drawn.contains(BAR), "{drawn}");
    let quiet = under_a_terminal(&format!("{check} --quiet")).unwrap();
    assert!(!quiet.contains(BAR), "{quiet}");
    let capacity = format!(
        "{binary} capacity {} --set load.count=300 --target 'blocking<0.3' --values 16..18 \
         --max-seeds 4",
        erlang_b_scenario()
    );
    assert!(under_a_terminal(&capacity).unwrap().contains(BAR));
    let quiet = under_a_terminal(&format!("{capacity} -q")).unwrap();
    assert!(!quiet.contains(BAR), "{quiet}");
    // Not a terminal: no bar at all.
    let piped = subsim(&["check", &folder.display().to_string()]);
    assert!(!stderr(&piped).contains(BAR));
}

#[test]
fn erlang_takes_a_rate_and_a_mean_and_finds_a_cap_for_a_wait() {
    let output = subsim(&["erlang", "--rate", "3/s", "--mean", "10s", "--cap", "42"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        stdout(&output).contains("load     30 Erlangs (3/s × 10 s"),
        "{}",
        stdout(&output)
    );
    assert!(stdout(&output).contains("erlang_b 0.007397"));
    let json: serde_json::Value = serde_json::from_str(&stdout(&subsim(&[
        "erlang",
        "--rate",
        "180/m",
        "--mean",
        "10s",
        "--target-wait",
        "1s",
        "--wait-figure",
        "p95",
        "--format",
        "json",
    ])))
    .unwrap();
    assert_eq!(json["load"], 30.0);
    let cap = json["cap"].as_u64().unwrap();
    assert!(json["wait_p95_s"].as_f64().unwrap() < 1.0);
    // The cap below does not meet it (Erlang C's p95 wait of all arrivals).
    let below = subsim(&[
        "erlang",
        "--load",
        "30",
        "--mean",
        "10s",
        "--cap",
        &(cap - 1).to_string(),
        "--format",
        "json",
    ]);
    let below: serde_json::Value = serde_json::from_str(&stdout(&below)).unwrap();
    assert!(below["wait_p95_s"].as_f64().unwrap() >= 1.0, "{below}");
    for bad in [
        &["erlang", "--rate", "3/s", "--cap", "4"][..],
        &["erlang", "--rate", "3/x", "--mean", "1s", "--cap", "4"],
        &["erlang", "--load", "3", "--target-wait", "2s"],
        &[
            "erlang", "--load", "3", "--rate", "1/s", "--mean", "1s", "--cap", "4",
        ],
    ] {
        assert_eq!(code(&subsim(bad)), 2, "{bad:?}");
    }
}

/// docs/distributed.md's Kubernetes recipe runs, in the image the Containerfile builds,
/// `subsim sweep /scenarios/… --shard I/2 --out …` on two pods and `subsim merge`: no
/// container builder is available to CI, so the same commands run here, outside a
/// container, and must give the one-machine sweep byte for byte.
#[test]
fn the_container_recipes_two_shard_sweep_and_merge_give_the_one_machine_sweep() {
    let recipe = std::fs::read_to_string(repo_root().join("docs/distributed.md")).unwrap();
    assert!(
        recipe.contains("Containerfile"),
        "the recipe names the image it uses"
    );
    let file = repo_root().join("scenarios/load/capacity-at-30-erlangs.yaml");
    let file = file.display().to_string();
    let dir = TempDir::new("container-recipe");
    let sweep = [
        "--cap",
        "40..43",
        "--set",
        "load.count=2000",
        "--seeds",
        "2",
    ];
    let mut shards = Vec::new();
    for shard in ["1/2", "2/2"] {
        let out = dir.path().join(format!("shard-{}.csv", &shard[..1]));
        let mut args = vec!["sweep", file.as_str(), "--shard", shard, "--out"];
        let out_text = out.display().to_string();
        args.push(&out_text);
        args.extend(sweep);
        assert_eq!(code(&subsim(&args)), 0);
        shards.push(out_text);
    }
    let merged = subsim(&["merge", &shards[0], &shards[1]]);
    let mut whole = vec!["sweep", file.as_str()];
    whole.extend(sweep);
    assert_eq!(stdout(&merged), stdout(&subsim(&whole)));
}
