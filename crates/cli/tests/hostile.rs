//! Regression tests for the hostile-input defects of issue #10 §4, each named after what
//! broke: the binary must answer bad input with a located error (exit 2) or a clear
//! refusal, never a panic (exit 101), a hang or an unbounded read.

use crate::support::{code, command, refused, stderr, stdout, subsim, text, TempDir};
use std::fs::File;
use std::io::Read as _;
use std::path::Path;
use std::process::{Output, Stdio};

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
    // No wall-clock bound (the project's tests assert no timings; on a loaded machine
    // this took 30 s of wall time for 4.6 s of CPU): the suffix search is linear by
    // construction (`next_suffix` in import/build/mod.rs).
    let output = subsim(&["import", text(&path), "--out", text(&out)]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
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

// -- issue #24: output that injects -------------------------------------------------------
// Each writer goes through `subsim_escape` (one module per output format); these are the
// defects the hunt found, each on the command it broke.

/// Names for the output-injection tests: a formula, an OSC-8 link with clear screen and a
/// bidi override, a newline that forges a narration line, XML-forbidden characters.
const HOSTILE_NAMES: &str = r#"name: "evil\nok   other.yaml"
main:
  - spawn: {agent: Explore, name: "=HYPERLINK(\"http://x\",\"y\")"}
  - spawn: {agent: Explore, name: "@SUM(A1)\u202e\e]8;;http://x\e\\link\e[2J"}
  - spawn: {agent: Explore, name: "a\n00:00:00.000  main  forged line"}
  - spawn: {agent: Explore, name: "x\x01y\x0bz\uFFFE"}
"#;

/// No character that acts on a terminal: C0/C1 controls other than newline, ESC, DEL,
/// bidirectional overrides, line separators.
fn assert_terminal_safe(what: &str, out: &str) {
    let bad = out.chars().find(|&c| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
    });
    assert!(bad.is_none(), "{what}: {bad:?} in {out:?}");
}

#[test]
fn run_csv_wrote_formula_names_as_bare_cells() {
    let dir = TempDir::new("csv-formula");
    let scenario = dir.write("s.yaml", HOSTILE_NAMES);
    let output = subsim(&["run", text(&scenario), "--format", "csv"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let out = stdout(&output);
    assert!(
        out.contains(r#"a1,"'=HYPERLINK(""http://x"",""y"")",Explore"#),
        "{out}"
    );
    assert!(out.contains("a2,'@SUM(A1)"), "{out}");
    for cell_start in [",=", ",@", ",\"=", ",\"@", ",+", ",-"] {
        assert!(!out.contains(cell_start), "{cell_start}: {out}");
    }
}

#[test]
fn sweep_csv_wrote_formula_set_values_as_bare_cells() {
    let dir = TempDir::new("sweep-formula");
    let scenario = dir.write(
        "l.yaml",
        "name: l\nagents:\n  worker:\n    description: w\n    behavior: [{work: 1s}]\n\
         load:\n  arrivals: poisson(5/s)\n  count: 20\n  spawn: {agent: worker}\n",
    );
    let output = subsim(&[
        "sweep",
        text(&scenario),
        "--set",
        r#"agents.worker.description==1+1,"@SUM(1)",-1+2,-3"#,
        "--seeds",
        "1",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let out = stdout(&output);
    let firsts: Vec<&str> = out
        .lines()
        .skip(1)
        .map(|line| line.split(',').next().unwrap_or(""))
        .collect();
    assert!(firsts.contains(&"'=1+1"), "{out}");
    assert!(firsts.contains(&"'-1+2"), "{out}");
    // A number stays a number.
    assert!(firsts.contains(&"-3"), "{out}");
    for first in firsts {
        assert!(
            !first.starts_with(['=', '+', '@']) && (first == "-3" || !first.starts_with('-')),
            "{out}"
        );
    }
}

#[test]
fn gantt_printed_escape_sequences_and_a_bidi_override_raw() {
    let dir = TempDir::new("gantt-escapes");
    let scenario = dir.write("s.yaml", HOSTILE_NAMES);
    let output = subsim(&["run", text(&scenario), "--format", "gantt"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let out = stdout(&output);
    assert_terminal_safe("gantt", &out);
    // The label is cut after escaping, never inside an escape.
    for line in out.lines() {
        let label = line.split(" |").next().unwrap_or("");
        let opened = label.matches("\\u{").count();
        let closed = label
            .matches("\\u{")
            .count()
            .min(label.matches('}').count());
        assert_eq!(opened, closed, "a cut escape in {label:?}");
    }
    assert!(out.contains(r"@SUM(A1)\u{202e}"), "{out}");
}

#[test]
fn a_newline_in_a_name_forged_narration_lines() {
    let dir = TempDir::new("forged-narration");
    let scenario = dir.write("s.yaml", HOSTILE_NAMES);
    for detail in ["brief", "full"] {
        let output = subsim(&["run", text(&scenario), "--detail", detail]);
        assert_eq!(code(&output), 0, "{}", stderr(&output));
        let out = stdout(&output);
        assert_terminal_safe("narration", &out);
        assert!(
            !out.lines()
                .any(|line| line.starts_with("00:00:00.000  main  forged")),
            "{out}"
        );
        assert!(
            !out.lines().any(|line| line.starts_with("ok   other")),
            "{out}"
        );
    }
    let full = stdout(&subsim(&["run", text(&scenario), "--detail", "full"]));
    assert!(
        full.contains(r"a\n00:00:00.000  main  forged line"),
        "{full}"
    );
    let summary = stdout(&subsim(&["run", text(&scenario), "--format", "summary"]));
    assert_terminal_safe("summary", &summary);
}

#[test]
fn a_newline_in_a_file_name_forged_an_ok_line_in_check() {
    let dir = TempDir::new("forged-check");
    dir.write("x.yaml\nok   other.yaml", SMALL);
    let output = subsim(&["check", text(dir.path())]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let out = stdout(&output);
    assert!(
        !out.lines().any(|line| line.starts_with("ok   other.yaml")),
        "{out}"
    );
    assert!(out.contains(r"x.yaml\nok   other.yaml"), "{out}");
    let validated = stdout(&subsim(&["validate", text(dir.path())]));
    assert!(
        !validated
            .lines()
            .any(|line| line.starts_with("ok   other.yaml")),
        "{validated}"
    );
}

#[test]
fn report_svg_and_html_wrote_characters_xml_forbids() {
    let dir = TempDir::new("report-xml");
    let scenario = dir.write("s.yaml", HOSTILE_NAMES);
    for name in ["r.svg", "r.html"] {
        let out = dir.path().join(name);
        let output = subsim(&["report", text(&scenario), "--out", text(&out)]);
        assert_eq!(code(&output), 0, "{}", stderr(&output));
        let page = std::fs::read_to_string(&out).expect("the report");
        let bad = page.chars().find(|&c| {
            !matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..='\u{10ffff}')
        });
        assert!(bad.is_none(), "{name}: {bad:?}");
        assert!(page.contains(r"x\u{1}y\u{b}z\u{fffe}"), "{name}");
    }
}

/// A transcript of one Agent call whose name and description hold `text` (JSON-escaped).
fn transcript_with(text: &str) -> String {
    format!(
        "{{\"type\":\"assistant\",\"uuid\":\"u0\",\"parentUuid\":null,\"timestamp\":\"2026-01-01T00:00:10.000Z\",\"message\":{{\"id\":\"m0\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"t0\",\"name\":\"Agent\",\"input\":{{\"name\":\"{text}\",\"description\":\"{text}\",\"prompt\":\"{text}\",\"subagent_type\":\"Explore\"}}}}]}}}}\n"
    )
}

#[test]
fn import_to_stdout_wrote_rust_escapes_and_raw_line_separators_into_yaml() {
    let dir = TempDir::new("import-yaml");
    let session = dir.write(
        "session.jsonl",
        transcript_with(r#"a\u202eb\u2028c\u2029d\u001b[2Je\"f\\g"#),
    );
    let output = subsim(&["import", text(&session), "--keep-text"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let yaml = stdout(&output);
    let strings: Vec<&str> = yaml
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .collect();
    assert!(
        !strings.iter().any(|line| line.contains("\\u{")),
        "Rust escapes in YAML: {yaml}"
    );
    assert!(
        !yaml.contains(['\u{2028}', '\u{2029}', '\u{202e}']),
        "{yaml}"
    );
    assert!(
        yaml.contains(r#"a\u202eb\u2028c\u2029d\u001b[2Je\"f\\g"#),
        "{yaml}"
    );
    // What stdout printed loads.
    let scenario = dir.write("imported.yaml", &yaml);
    let loaded = subsim(&["validate", text(&scenario)]);
    assert_eq!(code(&loaded), 0, "{}\n{yaml}", stderr(&loaded));
}

// -- issue #24: outputs that destroyed inputs ---------------------------------------------

/// Refused with exit 2 naming both paths, and `input` still holds `before`.
fn assert_input_kept(output: &Output, input: &Path, before: &[u8]) {
    let err = refused(output);
    assert!(err.contains("is the input"), "{err}");
    assert_eq!(std::fs::read(input).expect("the input"), before, "{err}");
}

#[test]
fn import_out_onto_its_transcript_overwrote_it() {
    let dir = TempDir::new("import-onto-input");
    let session = dir.write("S.jsonl", transcript_with("worker"));
    let before = std::fs::read(&session).expect("read");
    let output = subsim(&["import", text(&session), "--out", text(&session)]);
    assert_input_kept(&output, &session, &before);
}

#[test]
fn check_junit_onto_the_scenario_overwrote_it() {
    let dir = TempDir::new("junit-onto-input");
    let scenario = dir.write("x.yaml", SMALL);
    let output = subsim(&["check", text(&scenario), "--junit", text(&scenario)]);
    assert_input_kept(&output, &scenario, SMALL.as_bytes());
    // A file inside a checked folder too.
    let output = subsim(&["check", text(dir.path()), "--junit", text(&scenario)]);
    assert_input_kept(&output, &scenario, SMALL.as_bytes());
}

#[test]
fn outputs_onto_an_input_through_links_or_named_files_are_refused() {
    let dir = TempDir::new("outputs-onto-inputs");
    let agent = dir.write(
        "agents/a.md",
        "---\nname: a\ndescription: d\n---\nYou are a.\n",
    );
    let scenario = dir.write(
        "s.yaml",
        "name: s\nagents:\n  a: {file: agents/a.md}\nmain:\n  - spawn: {agent: a, name: w}\n",
    );
    let before = std::fs::read(&scenario).expect("read");
    let agent_before = std::fs::read(&agent).expect("read");
    let symlink = dir.path().join("link.yaml");
    std::os::unix::fs::symlink(&scenario, &symlink).expect("symlink");
    let hard = dir.path().join("hard.yaml");
    std::fs::hard_link(&scenario, &hard).expect("hard link");
    for out in [&scenario, &symlink, &hard] {
        for args in [
            vec!["run", text(&scenario), "--out", text(out)],
            vec![
                "run",
                text(&scenario),
                "--format",
                "jsonl",
                "--out",
                text(out),
            ],
            vec!["report", text(&scenario), "--out", text(out)],
        ] {
            assert_input_kept(&subsim(&args), &scenario, &before);
        }
    }
    // A file the scenario named is an input too.
    let output = subsim(&["run", text(&scenario), "--out", text(&agent)]);
    assert_input_kept(&output, &agent, &agent_before);
}

#[test]
fn sweep_and_merge_outputs_onto_their_inputs_are_refused() {
    let dir = TempDir::new("sweep-onto-inputs");
    let scenario = dir.write(
        "l.yaml",
        "name: l\nagents:\n  worker:\n    description: w\n    behavior: [{work: 1s}]\n\
         load:\n  arrivals: poisson(5/s)\n  count: 20\n  spawn: {agent: worker}\n",
    );
    let before = std::fs::read(&scenario).expect("read");
    let sweep = |out: &Path, shard: &str| {
        subsim(&[
            "sweep",
            text(&scenario),
            "--set",
            "session.seed=1,2",
            "--seeds",
            "1",
            "--shard",
            shard,
            "--out",
            text(out),
        ])
    };
    assert_input_kept(&sweep(&scenario, "1/2"), &scenario, &before);
    let shards = [dir.path().join("1.csv"), dir.path().join("2.csv")];
    for (index, shard) in shards.iter().enumerate() {
        let output = sweep(shard, &format!("{}/2", index + 1));
        assert_eq!(code(&output), 0, "{}", stderr(&output));
    }
    let shard_before = std::fs::read(&shards[0]).expect("read");
    let output = subsim(&[
        "merge",
        text(&shards[0]),
        text(&shards[1]),
        "--out",
        text(&shards[0]),
    ]);
    assert_input_kept(&output, &shards[0], &shard_before);
}

#[test]
fn outputs_are_renamed_into_place_and_a_safety_limit_keeps_the_trace_so_far() {
    let dir = TempDir::new("atomic-outputs");
    let scenario = dir.write(
        "s.yaml",
        "name: s\nsession: {limits: {max_events: 5}}\nmain:\n  - spawn: {agent: Explore, name: w}\n  - spawn: {agent: Explore, name: v}\n",
    );
    let out = dir.write("trace.jsonl", "the old contents\n");
    let output = subsim(&[
        "run",
        text(&scenario),
        "--format",
        "jsonl",
        "--out",
        text(&out),
    ]);
    assert_eq!(code(&output), 3, "{}", stderr(&output));
    let trace = std::fs::read_to_string(&out).expect("the trace");
    assert!(!trace.contains("the old contents"), "{trace}");
    assert!(trace.contains("\"kind\":\"limit_reached\""), "{trace}");
    // No temporary file is left beside the output.
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // A refused run leaves the old output as it was.
    let kept = dir.write("kept.txt", "kept\n");
    let output = subsim(&[
        "run",
        text(&dir.path().join("missing.yaml")),
        "--out",
        text(&kept),
    ]);
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&kept).expect("kept"), "kept\n");
}
