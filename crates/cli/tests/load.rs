//! End-to-end runs of the load-testing commands of the `subsim` binary: `run --set` and
//! `--cap`, `erlang`. Statistics themselves are tested in the engine.

use crate::support::{code, flat, stderr, stdout, subsim, BINARY};
use std::path::PathBuf;
use std::process::{Command, Output};

fn erlang_scenario() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join("scenarios/load/erlang-b-20-erlangs.yaml")
        .display()
        .to_string()
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(output)).expect("JSON on stdout")
}

#[test]
fn cap_and_set_change_the_run_without_editing_the_file() {
    let file = erlang_scenario();
    let output = subsim(&[
        "run",
        &file,
        "--format",
        "json",
        "--cap",
        "28",
        "--set",
        "load.count=2000",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let stats = json(&output);
    assert_eq!(stats["cap"], 28);
    assert_eq!(stats["spawns"]["requested"], 2000);
    // The same through the env var's path: identical output.
    let by_path = subsim(&[
        "run",
        &file,
        "--format",
        "json",
        "--set",
        "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS=28",
        "--set",
        "load.count=2000",
    ]);
    assert_eq!(stdout(&by_path), stdout(&output));
}

#[test]
fn a_bad_set_is_exit_2_with_the_fix() {
    let file = erlang_scenario();
    for (set, expected) in [
        ("load.cuont=5", "did you mean `count`?"),
        ("load.count=abc", "`count` must be a whole number"),
        ("load.arrivals=poison(30/s)", "did you mean `poisson`?"),
        (
            "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENT=3",
            "did you mean `CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS`?",
        ),
        ("load.count", "is not PATH=VALUE"),
    ] {
        let output = subsim(&["run", &file, "--set", set]);
        assert_eq!(code(&output), 2, "{set}");
        // miette wraps long lines: compare the words.
        let error = stderr(&output)
            .split_whitespace()
            .filter(|word| *word != "│")
            .collect::<Vec<_>>()
            .join(" ");
        assert!(error.contains(expected), "{set}: {error}");
        assert!(stdout(&output).is_empty(), "{set}: nothing runs");
    }
    let output = subsim(&["run", &file, "--cap", "0"]);
    assert_eq!(code(&output), 2);
}

#[test]
fn erlang_prints_b_and_c_and_the_smallest_cap() {
    let output = subsim(&["erlang", "--cap", "30", "--load", "20", "--format", "json"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let answer = json(&output);
    assert_eq!(answer["cap"], 30);
    assert_eq!(answer["load"], 20.0);
    let b = answer["erlang_b"].as_f64().unwrap();
    let c = answer["erlang_c"].as_f64().unwrap();
    let wait = answer["mean_wait_holding_times"].as_f64().unwrap();
    assert!((b - 0.008_457).abs() < 1e-6, "{b}");
    assert!((c - 0.024_950).abs() < 1e-6, "{c}");
    assert!((wait - c / 10.0).abs() < 1e-12, "{wait}");

    let target = subsim(&[
        "erlang", "--target", "0.01", "--load", "20", "--format", "json",
    ]);
    assert_eq!(code(&target), 0);
    assert_eq!(json(&target)["cap"], 30);
    let text = subsim(&["erlang", "--target", "0.01", "--load", "20"]);
    assert!(stdout(&text).starts_with("smallest cap with blocking ≤ 0.01 at 20 Erlangs: 30\n"));

    // An unstable queue has no finite wait.
    let unstable = subsim(&["erlang", "--cap", "20", "--load", "20", "--format", "json"]);
    assert_eq!(
        json(&unstable)["mean_wait_holding_times"],
        serde_json::Value::Null
    );
    assert_eq!(json(&unstable)["erlang_c"], 1);

    for bad in [
        &["erlang", "--load", "20"][..],
        &["erlang", "--cap", "3", "--target", "0.1", "--load", "20"],
        &["erlang", "--target", "2", "--load", "20"],
        &["erlang", "--cap", "3", "--load", "-1"],
    ] {
        assert_eq!(code(&subsim(bad)), 2, "{bad:?}");
    }
}

/// A fresh folder for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!("subsim-load-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }

    fn file(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("folder");
        }
        std::fs::write(&path, text).expect("write");
        path.display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A small sweep: 5 caps × 3 seeds × 2,000 arrivals.
fn sweep_args(file: &str) -> Vec<String> {
    [
        "sweep",
        file,
        "--set",
        "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS=16..24:2",
        "--set",
        "load.count=2000",
        "--seeds",
        "3",
    ]
    .iter()
    .map(|arg| arg.to_string())
    .collect()
}

fn run_sweep(extra: &[&str]) -> Output {
    let file = erlang_scenario();
    let mut args = sweep_args(&file);
    args.extend(extra.iter().map(|arg| arg.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    subsim(&refs)
}

#[test]
fn sweep_output_is_the_same_for_any_jobs_and_has_the_documented_columns() {
    let one = run_sweep(&["--jobs", "1"]);
    let two = run_sweep(&["--jobs", "2"]);
    assert_eq!(code(&one), 0, "{}", stderr(&one));
    assert_eq!(stdout(&one), stdout(&two));
    let text = stdout(&one);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header[..4],
        [
            "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS",
            "load.count",
            "replica",
            "seed"
        ]
    );
    for column in [
        "arrivals",
        "blocking",
        "blocking_lo",
        "blocking_hi",
        "wait_mean",
        "wait_p95",
        "utilisation",
        "delayed",
        "erlang_b",
    ] {
        assert!(header.contains(&column), "{column} missing: {header:?}");
    }
    let rows: Vec<Vec<&str>> = lines.map(|line| line.split(',').collect()).collect();
    // 5 points × (3 replicas + 1 aggregated row).
    assert_eq!(rows.len(), 20);
    let at = |row: &Vec<&str>, name: &str| {
        row[header.iter().position(|h| *h == name).unwrap()].to_string()
    };
    let aggregated: Vec<&Vec<&str>> = rows.iter().filter(|row| row[2] == "all").collect();
    assert_eq!(aggregated.len(), 5);
    for row in &aggregated {
        assert_eq!(at(row, "arrivals"), "6000");
        assert_eq!(at(row, "seed"), "");
        let (lo, mean, hi) = (
            at(row, "blocking_lo").parse::<f64>().unwrap(),
            at(row, "blocking").parse::<f64>().unwrap(),
            at(row, "blocking_hi").parse::<f64>().unwrap(),
        );
        assert!(lo <= mean && mean <= hi, "{row:?}");
        assert!(
            !at(row, "erlang_b").is_empty(),
            "retry: none with exp runs: Erlang B applies"
        );
    }
    // Blocking falls as the cap grows.
    let blocking: Vec<f64> = aggregated
        .iter()
        .map(|row| at(row, "blocking").parse().unwrap())
        .collect();
    assert!(
        blocking.windows(2).all(|pair| pair[0] > pair[1]),
        "{blocking:?}"
    );
}

#[test]
fn sharded_and_merged_is_byte_for_byte_the_one_machine_sweep() {
    let dir = TempDir::new("shards");
    let whole = run_sweep(&[]);
    let whole_json = run_sweep(&["--format", "json"]);
    let mut shards = Vec::new();
    for index in 1..=3 {
        let path = dir.file(&format!("shard-{index}.csv"));
        let shard = format!("{index}/3");
        let output = run_sweep(&["--shard", &shard, "--out", &path]);
        assert_eq!(code(&output), 0, "{}", stderr(&output));
        shards.push(path);
    }
    // In any order.
    let merged = subsim(&["merge", &shards[2], &shards[0], &shards[1]]);
    assert_eq!(code(&merged), 0, "{}", stderr(&merged));
    assert_eq!(stdout(&merged), stdout(&whole));
    let merged_json = subsim(&[
        "merge", &shards[0], &shards[1], &shards[2], "--format", "json",
    ]);
    assert_eq!(stdout(&merged_json), stdout(&whole_json));
    serde_json::from_str::<serde_json::Value>(&stdout(&whole_json)).expect("valid JSON");

    // A missing shard, a shard given twice, a shard of another sweep: exit 2, no output.
    let missing = subsim(&["merge", &shards[0], &shards[1]]);
    assert_eq!(code(&missing), 2);
    assert!(
        stderr(&missing).contains("3/3 missing"),
        "{}",
        stderr(&missing)
    );
    let twice = subsim(&["merge", &shards[0], &shards[0], &shards[1], &shards[2]]);
    assert_eq!(code(&twice), 2);
    let other = dir.file("other.csv");
    let output = run_sweep(&["--shard", "1/3", "--seed", "99", "--out", &other]);
    assert_eq!(code(&output), 0);
    let mixed = subsim(&["merge", &other, &shards[1], &shards[2]]);
    assert_eq!(code(&mixed), 2);
    assert!(
        stderr(&mixed).contains("different sweeps"),
        "{}",
        stderr(&mixed)
    );
    assert!(stdout(&mixed).is_empty());
    let not_a_shard = subsim(&["merge", &shards[0], &erlang_scenario()]);
    assert_eq!(code(&not_a_shard), 2);
}

#[test]
fn a_sharded_sweep_through_gnu_parallel_merges_to_the_one_machine_result() {
    if Command::new("parallel").arg("--version").output().is_err() {
        // `.ci/run` installs GNU parallel; say so loudly rather than pass silently.
        panic!("GNU parallel is not installed (apt-get install parallel; .ci/run does it)");
    }
    let dir = TempDir::new("parallel");
    let file = erlang_scenario();
    let args = sweep_args(&file).join(" ");
    let pattern = dir.file("shard-{}.csv");
    let output = Command::new("parallel")
        .args(["--will-cite", "-j", "2"])
        .arg(format!("{BINARY} {args} --shard {{}}/4 --out {pattern}"))
        .args([":::", "1", "2", "3", "4"])
        .output()
        .expect("parallel runs");
    assert!(output.status.success(), "{}", stderr(&output));
    let shards: Vec<String> = (1..=4)
        .map(|index| dir.file(&format!("shard-{index}.csv")))
        .collect();
    let mut merge = vec!["merge"];
    merge.extend(shards.iter().map(String::as_str));
    let merged = subsim(&merge);
    assert_eq!(code(&merged), 0, "{}", stderr(&merged));
    assert_eq!(stdout(&merged), stdout(&run_sweep(&[])));
}

#[test]
fn bad_sweeps_are_exit_2_with_the_fix() {
    let file = erlang_scenario();
    for (args, expected) in [
        (vec!["--set", "load.cuont=1,2"], "did you mean `count`?"),
        (vec!["--set", "load.count=a,b"], "must be a whole number"),
        (vec!["--set", "load.count=5..1"], "the range is empty"),
        (
            vec!["--set", "load.count=1000", "--shard", "3/2"],
            "1 ≤ I ≤ N",
        ),
        (
            vec![
                "--set",
                "load.count=1000",
                "--target",
                "blockng<0.1",
                "--vary",
                "load.count",
            ],
            "did you mean `blocking`?",
        ),
    ] {
        let mut all = vec!["sweep", file.as_str()];
        all.extend(args.iter());
        let output = subsim(&all);
        assert_eq!(code(&output), 2, "{args:?}");
        assert!(
            flat(&stderr(&output)).contains(expected),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty(), "{args:?}");
    }
}

#[test]
fn target_finds_the_smallest_cap_and_the_chart_is_svg() {
    let file = erlang_scenario();
    let output = subsim(&[
        "sweep",
        &file,
        "--set",
        "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS=24..36:2",
        "--set",
        "load.count=20000",
        "--target",
        "blocking<0.01",
        "--vary",
        "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let said = stderr(&output);
    // Erlang B at 20 Erlangs: 30 slots give 0.85 %, 32 give 0.37 %; with the interval of
    // 20,000 arrivals the answer is one of them.
    assert!(
        said.contains("smallest session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS = 30 ")
            || said.contains("smallest session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS = 32 "),
        "{said}"
    );
    let chart = run_sweep(&["--format", "svg"]);
    assert_eq!(code(&chart), 0, "{}", stderr(&chart));
    let svg = stdout(&chart);
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(
        svg.contains("Erlang B"),
        "the analytic curve is in the legend"
    );
}

#[test]
fn run_csv_has_one_row_per_run_with_its_wait() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let file = root
        .join("scenarios/load/queue-keeps-its-place-when-a-slot-is-taken.yaml")
        .display()
        .to_string();
    let output = subsim(&["run", &file, "--format", "csv"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "id,name,type,parent,depth,requested,started,finished,outcome,wait,mode\n\
         a1,w-1,worker,main,1,0,0,10,completed,0,background\n\
         a2,w-3,worker,main,1,10,10,20,completed,0,background\n\
         a3,w-5,worker,main,1,20,20,30,completed,0,background\n\
         a4,w-2,worker,main,1,5,30,40,completed,25,background\n\
         a5,w-4,worker,main,1,15,40,50,completed,25,background\n"
    );
}

/// A scenario whose load has the given `arrivals` (and whatever else `extra` adds).
fn streams_scenario(arrivals: &str, extra: &str) -> String {
    format!(
        "name: s\nagents:\n  worker:\n    description: w\n    behavior: [{{work: 1s}}]\nload:\n  arrivals: {arrivals}\n  spawn: {{agent: worker}}\n{extra}"
    )
}

#[test]
fn bad_load_streams_are_exit_2_at_their_place_with_the_fix() {
    let dir = TempDir::new("bad-streams");
    dir.write("unsorted.csv", "time\n0\n5\n3.2\n");
    dir.write("garbage.csv", "0\n1\nsoon\n");
    dir.write("empty.csv", "# nothing yet\n");
    dir.write("sorted.csv", "0\n1\n2\n");
    let cases: Vec<(String, &str, &str)> = vec![
        (
            streams_scenario("{schedule: []}", "  duration: 1h\n"),
            "an empty `schedule`: it needs at least one phase",
            "{for: 8h, rate: 2/s}",
        ),
        (
            streams_scenario("{schedule: [{for: 1h, rate: -2/s}]}", "  duration: 1h\n"),
            "`rate`: `-2/s` is negative; a rate is zero or more",
            "`20/s`",
        ),
        (
            streams_scenario("{schedule: [{for: 1h, rate: 0/s}]}", "  duration: 1h\n"),
            "every phase of the `schedule` has rate 0",
            "a rate above zero",
        ),
        (
            streams_scenario("{on_off: {rate: 5/s, on: 0s, off: 1s}}", "  duration: 1h\n"),
            "`on` periods must last longer than zero on average",
            "exp(10s)",
        ),
        (
            streams_scenario("{file: unsorted.csv}", ""),
            "times file `unsorted.csv`:4:1: `3.2` comes before the time of line 3 (5s)",
            "one arrival time per line",
        ),
        (
            streams_scenario("{file: garbage.csv}", ""),
            "times file `garbage.csv`:3:1: `soon`",
            "one arrival time per line",
        ),
        (
            streams_scenario("{file: empty.csv}", ""),
            "times file `empty.csv`:1:1: the file holds no arrival times",
            "one arrival time per line",
        ),
        (
            streams_scenario("{file: missing.csv}", ""),
            "cannot read the times file `missing.csv`",
            "relative to the scenario file's directory",
        ),
        (
            streams_scenario("{file: sorted.csv}", "  count: 99\n"),
            "`count` is 99, but the times file holds 3 arrival time(s)",
            "leave `count` out",
        ),
        (
            "name: s\nload: []\n".to_string(),
            "`load` lists no streams",
            "each with its `name`",
        ),
        (
            "name: s\nagents:\n  worker: {description: w}\nload:\n  - {name: a, arrivals: every(1s), count: 1, spawn: {agent: worker}}\n  - {name: a, arrivals: every(1s), count: 1, spawn: {agent: worker}}\n".to_string(),
            "two load streams are named `a` (the first at line 5)",
            "give every stream its own name",
        ),
        (
            "name: s\nagents:\n  worker: {description: w}\nload:\n  - {arrivals: every(1s), count: 1, spawn: {agent: worker}}\n".to_string(),
            "a stream of the list form of `load` needs a `name`",
            "e.g. `- {name: interactive",
        ),
        (
            "name: s\nagents:\n  worker: {description: w}\nload:\n  - {name: a, arrivals: every(1s), count: 1, spawn: {agent: worker}, warmup: 1s}\n  - {name: b, arrivals: every(1s), count: 1, spawn: {agent: worker}, warmup: 2s}\n".to_string(),
            "the streams give different `warmup`s",
            "write `warmup` on one stream only",
        ),
    ];
    for (yaml, message, fix) in cases {
        let file = dir.write("s.yaml", &yaml);
        let output = subsim(&["run", &file, "--format", "summary"]);
        let err = stderr(&output);
        // Located: the problem's `file:line:col` (the `arrivals` value, or `count`).
        if yaml.contains("  count: 99") {
            assert!(err.contains("s.yaml:9:10]"), "{err}");
        } else if yaml.contains("  arrivals: {") {
            assert!(err.contains("s.yaml:7:"), "{err}");
        }
        assert_eq!(code(&output), 2, "{yaml}\n{err}");
        assert!(
            err.contains(message),
            "{yaml}\nwanted: {message}\ngot: {err}"
        );
        assert!(err.contains(fix), "{yaml}\nwanted help: {fix}\ngot: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_times_file_is_confined_to_the_scenario_folder_and_must_be_a_regular_file() {
    let dir = TempDir::new("times-confined");
    let outside = dir.write("recorded/times.csv", "0\n0.5\n1\n");
    let scenario = dir.write(
        "scenario/s.yaml",
        &streams_scenario("{file: ../recorded/times.csv}", ""),
    );
    let refused = subsim(&["run", &scenario, "--format", "summary"]);
    let err = stderr(&refused);
    assert_eq!(code(&refused), 2, "{err}");
    assert!(err.contains("is outside the scenario's folder"), "{err}");
    assert!(err.contains("--allow-path"), "{err}");
    let recorded = dir.0.join("recorded").display().to_string();
    let allowed = subsim(&[
        "run",
        &scenario,
        "--format",
        "json",
        "--allow-path",
        &recorded,
    ]);
    assert_eq!(code(&allowed), 0, "{}", stderr(&allowed));
    assert_eq!(json(&allowed)["load"]["arrivals"], 3);
    // An absolute path is outside too.
    let absolute = dir.write(
        "scenario/abs.yaml",
        &streams_scenario(&format!("{{file: '{outside}'}}"), ""),
    );
    assert_eq!(code(&subsim(&["run", &absolute])), 2);
    // Endless and non-regular files are refused before they are read.
    std::os::unix::fs::symlink("/dev/zero", dir.0.join("scenario/zero.csv")).expect("symlink");
    let fifo = dir.0.join("scenario/fifo.csv");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    for (name, allow, why) in [
        (
            "zero.csv",
            "/nowhere",
            "leads through a symbolic link to `/dev/zero`",
        ),
        (
            "zero.csv",
            "/dev",
            "it is a character device, not a regular file",
        ),
        (
            "fifo.csv",
            "/nowhere",
            "it is a FIFO (named pipe), not a regular file",
        ),
    ] {
        let scenario = dir.write(
            "scenario/special.yaml",
            &streams_scenario(&format!("{{file: {name}}}"), ""),
        );
        let output = subsim(&["run", &scenario, "--allow-path", allow]);
        let err = stderr(&output);
        assert_eq!(code(&output), 2, "{name}: {err}");
        assert!(err.contains(why), "{name}: {err}");
        // The one problem is the file; a replay needs no `count`.
        assert!(!err.contains("needs `count`"), "{name}: {err}");
    }
}

#[test]
fn set_reaches_a_stream_by_name_and_the_summary_shows_each_stream() {
    let dir = TempDir::new("streams-set");
    let file = dir.write(
        "s.yaml",
        "name: s\nagents:\n  worker:\n    description: w\n    behavior: [{work: exp(1s)}]\nload:\n  - {name: interactive, arrivals: poisson(8/s), count: 400, spawn: {agent: worker}, retry: queue}\n  - {name: batch, arrivals: {on_off: {rate: 30/s, on: exp(5s), off: exp(20s)}}, count: 400, spawn: {agent: worker}}\n",
    );
    let output = subsim(&[
        "run",
        &file,
        "--format",
        "json",
        "--set",
        "load.batch.count=250",
        "--cap",
        "10",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let stats = json(&output);
    assert_eq!(stats["load"]["arrivals"], 650);
    assert_eq!(stats["load"]["by_stream"]["batch"]["arrivals"], 250);
    assert_eq!(stats["load"]["by_stream"]["batch"]["retries"], false);
    assert_eq!(stats["load"]["by_stream"]["interactive"]["arrivals"], 400);
    let text = subsim(&["run", &file, "--format", "summary"]);
    let text = stdout(&text);
    assert!(text.contains("  stream interactive"), "{text}");
    assert!(text.contains("  stream batch"), "{text}");
    let bad = subsim(&["run", &file, "--set", "load.nightly.count=3"]);
    assert_eq!(code(&bad), 2);
    assert!(
        stderr(&bad).contains("or by its `name` (interactive, batch)"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn sweep_cap_is_short_for_the_cap_path_and_the_first_axis() {
    // `sweep` had no `--cap` although `run` has one.
    let file = erlang_scenario();
    let by_cap = subsim(&["sweep", &file, "--cap", "18,20", "--set", "load.count=500"]);
    let by_path = subsim(&[
        "sweep",
        &file,
        "--set",
        "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS=18,20",
        "--set",
        "load.count=500",
    ]);
    assert_eq!(code(&by_cap), 0, "{}", stderr(&by_cap));
    assert_eq!(stdout(&by_cap), stdout(&by_path));
}

#[test]
fn sweep_target_with_a_misspelt_column_suggests_the_right_one() {
    let file = erlang_scenario();
    let output = subsim(&[
        "sweep",
        &file,
        "--cap",
        "18",
        "--target",
        "blockng<0.01",
        "--vary",
        "cap",
    ]);
    assert_eq!(code(&output), 2);
    assert!(
        flat(&stderr(&output)).contains("did you mean `blocking`?"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn sweep_target_that_no_value_meets_exits_1_and_says_not_met() {
    // It exited 0, so a script could not tell.
    let file = erlang_scenario();
    let output = subsim(&[
        "sweep",
        &file,
        "--cap",
        "16,18",
        "--set",
        "load.count=500",
        "--target",
        "blocking<0.001",
        "--vary",
        "cap",
    ]);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    assert!(stderr(&output).contains("not met"), "{}", stderr(&output));
    assert!(
        stdout(&output).starts_with("session.env."),
        "the table is still written"
    );
}

#[test]
fn sweep_wait_p95_target_claims_no_interval_it_does_not_have() {
    // It said "95 % interval wholly under" for a column with no interval.
    let file = erlang_scenario();
    let output = subsim(&[
        "sweep",
        &file,
        "--cap",
        "30,40",
        "--set",
        "load.count=500",
        "--set",
        "load.retry=queue",
        "--target",
        "wait_p95<1000",
        "--vary",
        "cap",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let said = stderr(&output);
    assert!(said.contains("wait_p95 has no interval"), "{said}");
    assert!(!said.contains("95 % interval wholly under"), "{said}");
}

#[test]
fn sweep_chart_names_the_cap_in_words_pads_its_end_points_and_draws_the_target() {
    // The axis title was the raw environment-variable path, the first and last points
    // sat on the frame (half their bars cut), and `--target` drew nothing.
    let file = erlang_scenario();
    let output = subsim(&[
        "sweep",
        &file,
        "--cap",
        "18..22",
        "--set",
        "load.count=500",
        "--format",
        "svg",
        "--target",
        "blocking<0.1",
        "--vary",
        "cap",
    ]);
    assert!(matches!(code(&output), 0 | 1), "{}", stderr(&output));
    let svg = stdout(&output);
    assert!(
        svg.contains("blocking against cap (concurrent subagents"),
        "{svg}"
    );
    assert!(svg.contains("target: blocking &lt; 0.1") || svg.contains("target: blocking < 0.1"));
    // The x labels are the swept caps, and there is room beyond 18 and 22 (labels are
    // only drawn at whole numbers, so the padding shows as the frame beyond them).
    let labels: Vec<&str> = svg
        .split("</text>")
        .filter_map(|chunk| chunk.rsplit('>').next())
        .map(str::trim)
        .collect();
    for cap in ["18", "22"] {
        assert!(labels.contains(&cap), "{cap}: {labels:?}");
    }
    assert!(
        !labels.contains(&"17") && !labels.contains(&"23"),
        "{labels:?}"
    );
}

/// Issue #23 item 7: a queue at or past saturation (offered load ≥ cap, `retry: queue`)
/// reported a mean wait that looked converged. The summary now warns, and the JSON says
/// `saturated`; below saturation, and with `retry: none`, there is no warning.
#[test]
fn a_saturated_queue_warns_that_its_mean_wait_grows_with_the_run() {
    let dir = TempDir::new("saturated");
    let scenario = |rate: &str, retry: &str| {
        format!(
            "name: s\nsession: {{env: {{CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: 2}}}}\n\
             agents:\n  worker: {{description: w, behavior: [{{work: exp(1s)}}]}}\n\
             load: {{arrivals: poisson({rate}), count: 400, spawn: {{agent: worker}}, retry: {retry}}}\n"
        )
    };
    // 2/s × 1 s = 2 Erlangs against 2 slots: at saturation.
    let at = dir.write("at.yaml", &scenario("2/s", "queue"));
    let summary = stdout(&subsim(&["run", &at, "--format", "summary"]));
    assert!(
        flat(&summary).contains(
            "warning offered load 2.00 Erlangs ≥ cap 2: the queue is at or past saturation, \
             so the mean wait is unstable and grows with the run's length"
        ),
        "{summary}"
    );
    assert_eq!(
        json(&subsim(&["run", &at, "--format", "json"]))["load"]["saturated"],
        true
    );
    // 1/s × 1 s = 1 Erlang against 2 slots, and the same load lost instead of queued.
    for (name, yaml) in [
        ("below.yaml", scenario("1/s", "queue")),
        ("lost.yaml", scenario("2/s", "none")),
    ] {
        let file = dir.write(name, &yaml);
        let summary = stdout(&subsim(&["run", &file, "--format", "summary"]));
        assert!(!summary.contains("warning"), "{name}: {summary}");
        let stats = json(&subsim(&["run", &file, "--format", "json"]));
        assert_eq!(stats["load"]["saturated"], false, "{name}");
    }
}

/// Issue #23 item 7: the demo's summary printed `prompt queue mean 0.052 [-1.382, 1.487]`
/// (a queue length below zero) and, for its one answered prompt, `[4.491, 4.491]` as if
/// one observation had an interval.
#[test]
fn summary_intervals_stay_at_or_above_zero_and_one_observation_has_none() {
    let summary = stdout(&subsim(&["run", "--format", "summary"]));
    let line = |label: &str| {
        summary
            .lines()
            .find(|line| line.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label} row in\n{summary}"))
            .to_string()
    };
    let queue = line("prompt queue");
    assert!(queue.contains("[0.000, "), "{queue}");
    let waits = line("wait, all prompts");
    assert!(waits.contains("(n = 1, no interval)"), "{waits}");
    assert!(!summary.contains("[-"), "{summary}");
    // JSON keeps `lo` and `hi` (the mean) and flags that they are no interval.
    let stats = json(&subsim(&["run", "--format", "json"]));
    let mean = &stats["prompt_waits"]["mean"];
    assert_eq!(mean["interval"], false, "{mean}");
    assert_eq!(mean["lo"], mean["mean"]);
    assert_eq!(stats["prompt_queue"]["mean"]["interval"], true);
    assert_eq!(stats["prompt_queue"]["mean"]["lo"], 0.0);
}

/// Issue #23 item 9: the summary wrote one wait as `6s` and the next as `6.000s`. Every
/// duration in its rows is now seconds with three decimals (the makespan keeps its clock
/// and a short reading beside it).
#[test]
fn summary_waits_are_written_in_one_format() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let file = root.join("scenarios/perm/background-prompt-goes-to-main.yaml");
    let summary = stdout(&subsim(&[
        "run",
        file.to_str().unwrap(),
        "--format",
        "summary",
    ]));
    assert!(
        summary.contains("  wait, main session  mean 3.000s, p95 3.000s (1 answered)"),
        "{summary}"
    );
    for line in summary.lines().filter(|line| !line.starts_with("makespan")) {
        for word in line.split([' ', ',', '(', ')', '[', ']']) {
            let number = word.strip_suffix('s').unwrap_or("");
            if !number.is_empty() && number.chars().all(|c| c.is_ascii_digit() || c == '.') {
                assert!(number.contains('.'), "{line}");
            }
        }
    }
}
