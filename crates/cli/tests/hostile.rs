//! Regression tests for the hostile-input defects of issue #10 §4, each named after what
//! broke: the binary must answer bad input with a located error (exit 2) or a clear
//! refusal, never a panic (exit 101), a hang or an unbounded read.

use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BINARY: &str = env!("CARGO_BIN_EXE_subsim");

/// `subsim` with `args`, without colors or log filters from the environment.
fn command(args: &[&str]) -> Command {
    let mut command = Command::new(BINARY);
    command
        .args(args)
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "0")
        .env_remove("RUST_LOG");
    command
}

fn subsim(args: &[&str]) -> Output {
    command(args).output().expect("the subsim binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn code(output: &Output) -> i32 {
    output
        .status
        .code()
        .expect("subsim exits with a code, not a signal")
}

/// Exit 2, no panic; returns stderr.
fn refused(output: &Output) -> String {
    let err = stderr(output);
    assert_eq!(code(output), 2, "stdout: {}\nstderr: {err}", stdout(output));
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// A fresh folder for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        let path =
            std::env::temp_dir().join(format!("subsim-hostile-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }

    fn write(&self, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("folder");
        }
        std::fs::write(&path, text).expect("write");
        path
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn fifo(&self, name: &str) -> PathBuf {
        let path = self.0.join(name);
        let made = Command::new("mkfifo")
            .arg(&path)
            .status()
            .expect("mkfifo runs");
        assert!(made.success(), "mkfifo {}", path.display());
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temp path")
}

/// A valid scenario that runs briefly.
const SMALL: &str = "name: small\nmain:\n  - spawn: {agent: Explore, name: w}\n";

#[test]
fn defect_1_a_diagnostic_past_column_65535_does_not_panic() {
    let dir = TempDir::new("column");
    // A one-line flow list of 200k values: the budget error is located past column 65,535.
    let values = vec!["1"; 200_000].join(",");
    let wide = dir.write("wide.yaml", format!("name: x\nmain: [{values}]\n"));
    let err = refused(&subsim(&["validate", text(&wide)]));
    assert!(err.contains("wide.yaml:2:"), "{err}");
    // An error after 65,536 spaces.
    let spaces = dir.write(
        "spaces.yaml",
        format!("name: x\n{}nmae: 1\n", " ".repeat(65_536)),
    );
    let err = refused(&subsim(&["validate", text(&spaces)]));
    assert!(err.contains("spaces.yaml:2:"), "{err}");
    let err = refused(&subsim(&["run", text(&spaces)]));
    assert!(err.contains("spaces.yaml:2:"), "{err}");
}

#[test]
fn defect_2_a_non_utf8_byte_is_located_on_its_line() {
    let dir = TempDir::new("utf8");
    let file = dir.write("bad.yaml", b"name: x\nmain: []\nfoo: \xff\n");
    let err = refused(&subsim(&["validate", text(&file)]));
    assert!(err.contains("bad.yaml:3:6"), "{err}");
    assert!(err.contains("not UTF-8"), "{err}");
}

#[test]
fn defect_2_a_duplicate_frontmatter_key_is_located_on_its_line() {
    let dir = TempDir::new("dupkey");
    dir.write(
        "agents/a.md",
        "---\nname: a\ndescription: x\n\nmodel: sonnet\nmodel: haiku\n---\nbody\n",
    );
    let scenario = dir.write(
        "s.yaml",
        "name: t\nagents:\n  a: {file: agents/a.md}\nmain: []\n",
    );
    let err = refused(&subsim(&["validate", text(&scenario)]));
    assert!(
        err.contains("at 6:1: duplicate key `model` (first written at 5:1)"),
        "{err}"
    );
}

#[test]
fn defect_3_an_invalid_hook_matcher_regex_is_a_located_error() {
    let dir = TempDir::new("matcher");
    let scenario = dir.write(
        "s.yaml",
        "name: t\nsession:\n  hooks:\n    - {event: SubagentStart, matcher: \"([\", command: ./x.sh}\nmain: []\n",
    );
    let err = refused(&subsim(&["validate", text(&scenario)]));
    assert!(err.contains("s.yaml:4:"), "{err}");
    assert!(err.contains("matcher `([` is not a regex"), "{err}");
    // The settings-map shape too.
    let scenario = dir.write(
        "map.yaml",
        "name: t\nsession:\n  hooks:\n    SubagentStop:\n      - matcher: \"a**\"\n        hooks: [{type: command, command: ./x.sh}]\nmain: []\n",
    );
    let err = refused(&subsim(&["validate", text(&scenario)]));
    assert!(err.contains("map.yaml:5:"), "{err}");
}

#[cfg(unix)]
#[test]
fn defect_8_endless_files_are_read_with_a_byte_limit() {
    for args in [
        vec!["run", "/dev/zero"],
        vec!["validate", "/dev/urandom"],
        vec!["check", "/dev/zero"],
        vec!["panel", "/dev/zero", "--at", "1s"],
        vec!["tools", "--definition", "/dev/zero"],
        vec!["tools", "--file", "/dev/urandom", "--agent", "x"],
        vec!["sweep", "/dev/zero", "--set", "session.seed=1,2"],
    ] {
        let output = subsim(&args);
        let err = stderr(&output);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(matches!(code(&output), 1 | 2), "{args:?}: {err}");
        assert!(
            err.contains("bytes") || stdout(&output).contains("bytes") || err.contains("device"),
            "{args:?}: {err}"
        );
    }
    // Named by a scenario, through a symbolic link, with the folder allowed: refused as a
    // device, never read without end.
    let dir = TempDir::new("endless");
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.md")).expect("symlink");
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.json")).expect("symlink");
    let scenario = dir.write(
        "s.yaml",
        "name: t\nagents:\n  a: {file: zero.md}\nmain: []\n",
    );
    let err = refused(&subsim(&[
        "validate",
        text(&scenario),
        "--allow-path",
        "/dev",
    ]));
    assert!(err.contains("a character device"), "{err}");
    let scenario = dir.write(
        "json.yaml",
        "name: t\nsession:\n  kind: headless\n  agent_dirs: [{scope: cli, path: zero.json, passed_as: path}]\nmain: []\n",
    );
    let err = refused(&subsim(&[
        "validate",
        text(&scenario),
        "--allow-path",
        "/dev",
    ]));
    assert!(err.contains("a character device"), "{err}");
}

#[cfg(unix)]
#[test]
fn defect_9_fifos_are_refused_instead_of_blocking() {
    let dir = TempDir::new("fifo");
    dir.fifo("agent.md");
    dir.fifo("agents.json");
    let scenario = dir.write(
        "file.yaml",
        "name: t\nagents:\n  a: {file: agent.md}\nmain: []\n",
    );
    let err = refused(&subsim(&["validate", text(&scenario)]));
    assert!(err.contains("a FIFO (named pipe)"), "{err}");
    let scenario = dir.write(
        "json.yaml",
        "name: t\nsession:\n  kind: headless\n  agent_dirs: [{scope: cli, path: agents.json, passed_as: path}]\nmain: []\n",
    );
    let err = refused(&subsim(&["validate", text(&scenario)]));
    assert!(err.contains("a FIFO (named pipe)"), "{err}");
    // Found by `check` in a folder: reported as a failure, the other files still run.
    let folder = TempDir::new("fifo-check");
    folder.write("a.yaml", SMALL);
    folder.fifo("b.yaml");
    let output = subsim(&["check", text(folder.path())]);
    let out = stdout(&output);
    assert_eq!(
        code(&output),
        2,
        "a file that does not load is bad input: {out}"
    );
    assert!(out.contains("FAIL"), "{out}");
    assert!(out.contains("FIFO"), "{out}");
    assert!(out.contains("1 passed, 1 failed"), "{out}");
}

#[test]
fn defect_9_a_scenario_from_a_pipe_is_still_read() {
    // What `subsim run <(cat x.yaml)` hands over: a pipe named on the command line.
    let mut child = command(&["validate", "/dev/stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(SMALL.as_bytes()).expect("write");
    }
    let output = child.wait_with_output().expect("wait");
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(stdout(&output).contains("small"), "{}", stdout(&output));
}

#[test]
fn defect_10_file_and_agent_dirs_are_confined_to_the_scenario_folder() {
    let dir = TempDir::new("confine");
    let outside = dir.write(
        "secret/agent.md",
        "---\nname: spy\ndescription: reads what it should not\n---\nhi\n",
    );
    let scenario = dir.write(
        "scenario/s.yaml",
        "name: t\nagents:\n  a: {file: ../secret/agent.md}\nmain: []\n",
    );
    let err = refused(&subsim(&["validate", text(&scenario)]));
    assert!(err.contains("is outside the scenario's folder"), "{err}");
    assert!(err.contains("--allow-path"), "{err}");
    let secret = dir.path().join("secret");
    let allowed = subsim(&["validate", text(&scenario), "--allow-path", text(&secret)]);
    assert_eq!(code(&allowed), 0, "{}", stderr(&allowed));
    // An absolute path, and `/` scanned as a user directory.
    let absolute = dir.write(
        "scenario/abs.yaml",
        format!(
            "name: t\nagents:\n  a: {{file: '{}'}}\nmain: []\n",
            text(&outside)
        ),
    );
    refused(&subsim(&["validate", text(&absolute)]));
    let passwd = dir.write(
        "scenario/passwd.yaml",
        "name: t\nagents:\n  a: {file: ../../../../../../../../etc/passwd}\nmain: []\n",
    );
    refused(&subsim(&["run", text(&passwd)]));
    let root = dir.write(
        "scenario/root.yaml",
        "name: t\nsession:\n  agent_dirs: [{scope: user, path: /}]\nmain: []\n",
    );
    for command in ["run", "validate", "check"] {
        let output = subsim(&[command, text(&root)]);
        assert!(matches!(code(&output), 1 | 2), "{command}");
        let all = format!("{}{}", stdout(&output), stderr(&output));
        assert!(all.contains("is outside the scenario's folder"), "{all}");
    }
    let output = subsim(&["panel", text(&root), "--at", "1s"]);
    refused(&output);
    let output = subsim(&["diff", text(&root), "--from", "2.1.200", "--to", "2.1.292"]);
    refused(&output);
    refused(&subsim(&["explore", text(&root)]));
    let err = refused(&subsim(&[
        "sweep",
        text(&root),
        "--set",
        "session.seed=1,2",
    ]));
    assert!(err.contains("is outside the scenario's folder"), "{err}");
    // A symbolic link inside the folder that leads out.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, dir.path().join("scenario/link.md")).expect("link");
        let linked = dir.write(
            "scenario/link.yaml",
            "name: t\nagents:\n  a: {file: link.md}\nmain: []\n",
        );
        let err = refused(&subsim(&["validate", text(&linked)]));
        assert!(err.contains("symbolic link"), "{err}");
    }
}

#[test]
fn defect_10_the_user_scope_location_is_read_when_allowed() {
    let home = TempDir::new("home");
    home.write(
        ".claude/agents/helper.md",
        "---\nname: helper\ndescription: from the user scope\n---\nhi\n",
    );
    let work = TempDir::new("home-work");
    let scenario = work.write(
        "s.yaml",
        "name: t\nsession:\n  agent_dirs: [{scope: user, path: ~/.claude/agents}]\nmain:\n  - spawn: {agent: helper}\nexpect:\n  - event: {kind: agent_started, agent_type: helper}\n",
    );
    let run = |extra: &[&str]| {
        let mut args = vec!["check", text(&scenario)];
        args.extend_from_slice(extra);
        command(&args)
            .env("HOME", home.path())
            .output()
            .expect("runs")
    };
    let refused_run = run(&[]);
    assert_eq!(
        code(&refused_run),
        2,
        "a file that does not load: {}",
        stdout(&refused_run)
    );
    assert!(stdout(&refused_run).contains("--allow-path"));
    let agents = home.path().join(".claude/agents");
    let allowed = run(&["--allow-path", text(&agents)]);
    assert_eq!(code(&allowed), 0, "{}", stdout(&allowed));
}

#[cfg(target_os = "linux")]
#[test]
fn defect_11_validate_into_dev_full_or_a_closed_pipe_does_not_panic() {
    let dir = TempDir::new("full");
    let scenario = dir.write("s.yaml", SMALL);
    let full = File::options()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let output = command(&["validate", text(&scenario)])
        .stdout(full)
        .output()
        .expect("runs");
    let err = refused(&output);
    assert!(err.contains("cannot write to stdout"), "{err}");
    // A reader that went away: nothing is wrong, there is just no one left to read.
    let mut child = command(&["validate", text(&scenario)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("read");
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[cfg(target_os = "linux")]
#[test]
fn defect_12_help_and_version_into_dev_full_fail() {
    for flag in ["--help", "--version", "help"] {
        let full = File::options()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let output = command(&[flag]).stdout(full).output().expect("runs");
        let err = refused(&output);
        assert!(err.contains("cannot write to stdout"), "{flag}: {err}");
    }
    assert_eq!(code(&subsim(&["--version"])), 0);
}

#[test]
fn defect_13_panel_at_rejects_out_of_range_clocks_and_repeated_units() {
    let dir = TempDir::new("at");
    let scenario = dir.write("s.yaml", SMALL);
    for (at, why) in [
        ("00:99:99.000", "go up to 59"),
        ("1h1h", "twice"),
        ("1s1h", "largest unit first"),
    ] {
        let err = refused(&subsim(&["panel", text(&scenario), "--at", at]));
        assert!(err.contains(why), "{at}: {err}");
    }
    let fine = subsim(&["panel", text(&scenario), "--at", "00:00:01.000"]);
    assert_eq!(code(&fine), 0, "{}", stderr(&fine));
}

#[test]
fn scenario_names_with_ansi_escape_codes_are_escaped_in_text_output() {
    let dir = TempDir::new("ansi");
    let scenario = dir.write(
        "s.yaml",
        "name: \"evil \\e[31mRED\\e]0;title\\a\"\nmain:\n  - spawn: {agent: Explore, name: \"w\\e[1mB\"}\n",
    );
    for args in [
        vec!["validate", text(&scenario)],
        vec!["run", text(&scenario), "--explain"],
        vec!["run", text(&scenario), "--format", "summary"],
        vec!["panel", text(&scenario), "--at", "0s"],
        vec!["check", text(&scenario)],
    ] {
        let output = subsim(&args);
        let out = stdout(&output);
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{7}'),
            "{args:?}: {out:?}"
        );
        assert!(
            matches!(code(&output), 0 | 1),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    let out = stdout(&subsim(&["run", text(&scenario), "--explain"]));
    assert!(out.contains(r"evil \u{1b}[31mRED"), "{out}");
    assert!(out.contains(r"w\u{1b}[1mB"), "{out}");
}

#[test]
fn a_limit_stop_message_gives_the_time_of_the_limit_event_not_of_the_last_event_before_it() {
    // A loop of 1 ms waits writes no event: the run stopped at max_steps after 999 ms,
    // where its `limit_reached` stands, but the message said `at 00:00:00.000` (the time
    // of the last event before the limit).
    let dir = TempDir::new("limit-time");
    let scenario = dir.write(
        "s.yaml",
        "name: x\nsession: {limits: {max_steps: 1000}}\nmain:\n  - repeat: {times: 4000000000, steps: [{wait: 1ms}]}\n",
    );
    let output = subsim(&["run", text(&scenario), "--format", "jsonl"]);
    assert_eq!(code(&output), 3, "{}", stderr(&output));
    let out = stdout(&output);
    let last = out.lines().last().expect("a trace");
    assert!(
        last.contains(r#""t_us":999000"#) && last.contains("limit_reached"),
        "{last}"
    );
    let err = stderr(&output);
    assert!(
        err.contains("safety limit `max_steps` at 00:00:00.999"),
        "{err}"
    );
}

#[test]
fn a_loop_of_background_shells_stops_at_max_held_instead_of_eating_gigabytes() {
    // Each `bash_background` queues its end: a `repeat` of them at one instant held
    // 50–100 million queued shells (2–5 GB) before `max_instant_steps` stopped it.
    let dir = TempDir::new("shells");
    let scenario = dir.write(
        "s.yaml",
        "name: x\nsession: {limits: {max_held: 1000}}\nmain:\n  - repeat: {times: 4000000000, steps: [{bash_background: 1h}]}\n",
    );
    let output = subsim(&["run", text(&scenario), "--format", "jsonl"]);
    assert_eq!(code(&output), 3, "{}", stderr(&output));
    let out = stdout(&output);
    let last = out.lines().last().expect("a trace");
    assert!(
        last.contains(r#""limit":"max_held","value":1000"#),
        "{last}"
    );
    assert!(
        stderr(&output).contains("background shell"),
        "{}",
        stderr(&output)
    );
    // Shells whose ends are dispatched leave the count: a run that starts a shell and
    // waits for its end, again and again, holds one at a time.
    let scenario = dir.write(
        "t.yaml",
        "name: x\nsession: {limits: {max_held: 3}}\nmain:\n  - repeat: {times: 5000, steps: [{bash_background: 1s}, {wait: {for: notification}}]}\n",
    );
    let output = subsim(&["run", text(&scenario), "--format", "summary"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
}

#[test]
fn a_run_name_past_256_characters_is_a_located_error_not_gigabytes() {
    // Every run keeps its name and `max_held` counts records, not bytes: a 4,000-character
    // name spawned again and again held 11 GB, and a 3 MB name with `count` ran for ever
    // formatting `NAME-i`. Names are capped like agent names (DEF-10).
    let dir = TempDir::new("long-name");
    let long = "n".repeat(257);
    for (file, step) in [
        ("spawn.yaml", format!("main:\n  - spawn: {{name: {long}}}\n")),
        ("together.yaml", format!("main:\n  - spawn: [{{name: {long}}}]\n")),
        (
            "fork.yaml",
            format!("session: {{env: {{CLAUDE_CODE_FORK_SUBAGENT: \"1\"}}}}\nmain:\n  - fork: {{name: {long}}}\n"),
        ),
        (
            "load.yaml",
            format!("load: {{arrivals: burst(2), count: 2, spawn: {{name: {long}}}}}\n"),
        ),
    ] {
        let scenario = dir.write(file, format!("name: x\n{step}"));
        let err = refused(&subsim(&["run", text(&scenario)]));
        assert!(
            err.contains("`name` is 257 characters long; names are at most 256"),
            "{file}: {err}"
        );
        assert!(err.contains(&format!("{file}:")), "{file}: {err}");
    }
    let ok = dir.write(
        "ok.yaml",
        format!("name: x\nmain:\n  - spawn: {{name: {}}}\n", "é".repeat(256)),
    );
    let output = subsim(&["run", text(&ok), "--format", "summary"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
}

#[test]
fn import_of_many_calls_with_one_long_name_is_linear_and_keeps_names_loadable() {
    // Each imported run got the first free `NAME-N` by trying N = 2, 3, … (n² for n
    // calls of one name: 20,000 took over 30 s), and a name over 256 characters made a
    // scenario that does not load.
    let dir = TempDir::new("import-names");
    let long = "x".repeat(300);
    let mut transcript = String::new();
    for i in 0..4000 {
        let parent = if i == 0 {
            "null".to_string()
        } else {
            format!("\"u{}\"", i - 1)
        };
        transcript.push_str(&format!(
            "{{\"type\":\"assistant\",\"uuid\":\"u{i}\",\"parentUuid\":{parent},\"timestamp\":\"2026-01-01T00:00:10.000Z\",\"message\":{{\"id\":\"m{i}\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"t{i}\",\"name\":\"Agent\",\"input\":{{\"name\":\"{long}\",\"subagent_type\":\"Explore\"}}}}]}}}}\n"
        ));
    }
    let path = dir.write("session.jsonl", transcript);
    let out = dir.path().join("s.yaml");
    let started = std::time::Instant::now();
    let output = subsim(&["import", text(&path), "--out", text(&out)]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let scenario = std::fs::read_to_string(&out).expect("the scenario");
    let cut = "x".repeat(235);
    assert!(
        scenario.contains(&format!("name: \"{cut}\"")),
        "the first keeps the cut name"
    );
    assert!(
        scenario.contains(&format!("name: \"{cut}-4000\"")),
        "the last is numbered"
    );
    let run = subsim(&["validate", text(&out)]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
}

#[test]
fn a_gantt_for_a_huge_columns_value_is_capped_instead_of_panicking() {
    // `COLUMNS=100000000` panicked (exit 101: a format width past 65,535) and would have
    // allocated every row at that width.
    let dir = TempDir::new("gantt-columns");
    let scenario = dir.write("s.yaml", SMALL);
    for columns in ["100000000", "65536", "18446744073709551615"] {
        let output = command(&["run", text(&scenario), "--format", "gantt"])
            .env("COLUMNS", columns)
            .output()
            .expect("the subsim binary runs");
        assert_eq!(code(&output), 0, "COLUMNS={columns}: {}", stderr(&output));
        let widest = stdout(&output)
            .lines()
            .map(|line| line.chars().count())
            .max()
            .unwrap_or(0);
        assert!(
            (100..=4096).contains(&widest),
            "COLUMNS={columns}: {widest}"
        );
    }
}
