//! Fuzzing on stable (issue #10 §5): generated and mutated inputs — seeded from every
//! scenario under `scenarios/`, every Markdown definition and `--agents` JSON there and
//! under `crates/scenario/tests/` — go through parse → validate → a bounded run. The
//! property: nothing panics, every outcome is one of the CLI's exit codes (0 ok, 1
//! expectations failed, 2 bad input, 3 a safety limit), and every problem is located at a
//! line and column that exist. Time and memory are bounded by the simulator's own limits
//! (clamped here to 20,000 events and 2,000 agents per run), not by timing assertions.
//!
//! - CI runs [`FUZZ_CASES`] cases (`cargo test -p subsim-tests fuzz`).
//! - The long mode runs `SUBSIM_FUZZ_CASES` cases (default one million):
//!   `SUBSIM_FUZZ_CASES=5000000 cargo test --release -p subsim-tests fuzz_long -- --ignored`.
//! - A failing case is shrunk and saved by proptest in `tests/proptest-regressions/`;
//!   a crasher worth keeping as a file goes in `tests/fuzz-regressions/` (run by
//!   [`fuzz_crashers_stay_fixed`]).
//! - `fuzz/` holds a cargo-fuzz crate for people with a nightly toolchain; it is not part of
//!   the workspace.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use subsim_engine::expect::Checker;
use subsim_engine::render::{JsonlWriter, TextWriter};
use subsim_engine::sink::Tee;
use subsim_engine::{SimTime, Simulation};
use subsim_tests::repo_root;

/// Cases per run in CI: well under a minute in a debug build.
const FUZZ_CASES: u32 = 256;
/// Most trace events one fuzzed run may produce.
const MAX_EVENTS: u64 = 20_000;
/// Most agents one fuzzed run may create.
const MAX_AGENTS: u64 = 2_000;
/// Most steps one fuzzed run may take (`session.limits.max_steps`): nested `repeat`s of
/// `work: 0s` write nothing and take no time, so only the step count bounds them.
const MAX_STEPS: u64 = 10 * MAX_EVENTS;

/// What a seed file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A scenario.
    Yaml,
    /// An agent definition (Markdown with YAML frontmatter).
    Markdown,
    /// An `--agents` JSON file.
    Json,
}

/// One file of the seed corpus.
#[derive(Debug)]
struct Seed {
    path: PathBuf,
    text: Vec<u8>,
    kind: Kind,
}

/// Every seed file, in path order.
fn corpus() -> &'static [Seed] {
    static CORPUS: OnceLock<Vec<Seed>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = repo_root();
        let mut paths = Vec::new();
        for dir in ["scenarios", "crates/scenario/tests"] {
            collect(&root.join(dir), &mut paths);
        }
        paths.sort();
        paths
            .into_iter()
            .filter_map(|path| {
                let kind = match path.extension()?.to_str()? {
                    "yaml" | "yml" => Kind::Yaml,
                    "md" if !path.ends_with("README.md") => Kind::Markdown,
                    "json" => Kind::Json,
                    _ => return None,
                };
                let text = std::fs::read(&path).ok()?;
                Some(Seed { path, text, kind })
            })
            .collect()
    })
}

fn collect(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect(&path, found),
            Ok(kind) if kind.is_file() => found.push(path),
            _ => {}
        }
    }
}

/// Text spliced into inputs: YAML structure, extreme values, the forms the scenario format
/// reads, and characters that have broken diagnostics before.
const DICTIONARY: &[&str] = &[
    ": ",
    "- ",
    "[",
    "]",
    "{",
    "}",
    ",",
    "*a",
    "&a ",
    "<<: *a",
    "!!binary ",
    "!!str ",
    "~",
    "null",
    "\n",
    "\n  ",
    "\t",
    "---\n",
    "...\n",
    "\"",
    "'",
    "#",
    "|\n",
    ">-\n",
    "? ",
    "0",
    "-1",
    "4294967296",
    "18446744073709551616",
    "1e308",
    ".inf",
    ".nan",
    "0s",
    "1h",
    "999999999h",
    "0.000001s",
    "poisson(1000000/s)",
    "burst(100000)",
    "every(0ms)",
    "uniform(5s, 1s)",
    "normal(1s, 10s)",
    "exp(0s)",
    "count: 100000",
    "repeat: {times: 4294967295, steps: [{work: 0s}]}",
    "background: true",
    "agent: fork",
    "file: ../../../../etc/passwd",
    "path: /",
    "matcher: \"([\"",
    "\u{1b}[31m",
    "\u{feff}",
    "é",
    "\u{202e}",
    "max_events: 0",
    "version: \"0.0.1\"",
    "version: \"99.9.9\"",
    "wait: {for: children}",
    "send: {to: main, message: x}",
    "stop: a1",
    "fail: mid_stream",
    "scope: plugin",
    "name: -x",
    "name: a:b",
    "description: \"\"",
    "tools: [\"*\"]",
    "model: inherit",
    "isolation: worktree",
    "expect:\n  - max_running: 0\n",
    "load: {arrivals: burst(50000), spawn: {agent: Explore}}\n",
];

/// One edit of an input.
#[derive(Clone, Debug)]
enum Mutation {
    /// Overwrite a byte.
    Set { at: u32, byte: u8 },
    /// Insert dictionary text.
    Splice { at: u32, word: u8 },
    /// Delete a run of bytes.
    Delete { at: u32, len: u8 },
    /// Copy a line after another.
    DuplicateLine { from: u16, to: u16 },
    /// Cut the input short.
    Truncate { at: u32 },
    /// Replace a run of digits with another number.
    Number { at: u32, value: u64 },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<u32>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Set { at, byte }),
        (any::<u32>(), any::<u8>()).prop_map(|(at, word)| Mutation::Splice { at, word }),
        (any::<u32>(), 1..64u8).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<u16>(), any::<u16>()).prop_map(|(from, to)| Mutation::DuplicateLine { from, to }),
        any::<u32>().prop_map(|at| Mutation::Truncate { at }),
        (
            any::<u32>(),
            prop_oneof![
                Just(0u64),
                Just(u64::from(u32::MAX)),
                Just(u64::MAX),
                0..1_000_000u64
            ]
        )
            .prop_map(|(at, value)| Mutation::Number { at, value }),
    ]
}

/// Applies `mutations` to `text`, in order.
fn mutate(text: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = text.to_vec();
    for mutation in mutations {
        let position = |at: u32, len: usize| {
            if len == 0 {
                0
            } else {
                at as usize % (len + 1)
            }
        };
        match *mutation {
            Mutation::Set { at, byte } => {
                if !bytes.is_empty() {
                    let at = at as usize % bytes.len();
                    bytes[at] = byte;
                }
            }
            Mutation::Splice { at, word } => {
                let at = position(at, bytes.len());
                let word = DICTIONARY[usize::from(word) % DICTIONARY.len()].as_bytes();
                bytes.splice(at..at, word.iter().copied());
            }
            Mutation::Delete { at, len } => {
                let at = position(at, bytes.len());
                let end = (at + usize::from(len)).min(bytes.len());
                bytes.drain(at..end);
            }
            Mutation::DuplicateLine { from, to } => {
                let lines: Vec<&[u8]> = bytes.split_inclusive(|b| *b == b'\n').collect();
                if !lines.is_empty() {
                    let line = lines[usize::from(from) % lines.len()].to_vec();
                    let to = usize::from(to) % (lines.len() + 1);
                    let mut rebuilt: Vec<u8> = lines[..to].concat();
                    rebuilt.extend_from_slice(&line);
                    rebuilt.extend(lines[to..].concat());
                    bytes = rebuilt;
                }
            }
            Mutation::Truncate { at } => {
                let at = position(at, bytes.len());
                bytes.truncate(at);
            }
            Mutation::Number { at, value } => {
                let digits: Vec<usize> = bytes
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| b.is_ascii_digit())
                    .map(|(index, _)| index)
                    .collect();
                if !digits.is_empty() {
                    let start = digits[at as usize % digits.len()];
                    let end = bytes[start..]
                        .iter()
                        .position(|b| !b.is_ascii_digit())
                        .map_or(bytes.len(), |len| start + len);
                    bytes.splice(start..end, value.to_string().into_bytes());
                }
            }
        }
    }
    bytes
}

/// The exit code the CLI would give this outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// 0: loaded, ran, every expectation held.
    Ok,
    /// 1: an expectation failed.
    ExpectationsFailed,
    /// 2: the input does not load.
    BadInput,
    /// 3: a safety limit stopped the run.
    LimitHit,
}

/// Where the Markdown and JSON seeds are written for the wrapper scenario to read.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("subsim-fuzz-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch folder");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The whole pipeline for one input: what the CLI would do with it, minus the printing.
fn pipeline(kind: Kind, base_dir: &Path, bytes: &[u8], scratch: &Path) -> Result<Outcome, String> {
    let loaded = match kind {
        Kind::Yaml => match std::str::from_utf8(bytes) {
            Ok(text) => subsim_scenario::parse_scenario(text, "fuzz.yaml", base_dir),
            // Not UTF-8: through the file reader, which locates the first bad byte.
            Err(_) => {
                let path = scratch.join("fuzz.yaml");
                std::fs::write(&path, bytes).map_err(|error| error.to_string())?;
                subsim_scenario::load_scenario(&path)
            }
        },
        Kind::Markdown | Kind::Json => {
            let (file, wrapper) = if kind == Kind::Markdown {
                (
                    "agent.md",
                    "name: fuzz\nagents:\n  fuzzed: {file: agent.md}\nmain:\n  - spawn: {agent: fuzzed, background: true}\n",
                )
            } else {
                (
                    "agents.json",
                    "name: fuzz\nsession:\n  kind: headless\n  agent_dirs: [{scope: cli, path: agents.json, passed_as: path}]\nmain:\n  - spawn: {agent: reviewer}\n",
                )
            };
            std::fs::write(scratch.join(file), bytes).map_err(|error| error.to_string())?;
            let path = scratch.join("wrapper.yaml");
            std::fs::write(&path, wrapper).map_err(|error| error.to_string())?;
            subsim_scenario::load_scenario(&path)
        }
    };
    let loaded = match loaded {
        Ok(loaded) => loaded,
        Err(problems) => {
            if problems.problems.is_empty() {
                return Err("a load failed without a problem".to_string());
            }
            for problem in &problems.problems {
                located(problem, &problems.source)?;
            }
            return Ok(Outcome::BadInput);
        }
    };
    for warning in &loaded.warnings {
        located(warning, &loaded.source)?;
    }
    let mut spec = loaded.spec;
    let limits = &mut spec.session.limits;
    limits.max_events = limits.max_events.min(MAX_EVENTS);
    limits.max_agents = limits.max_agents.min(MAX_AGENTS);
    limits.max_time = limits.max_time.min(SimTime::from_secs(30 * 24 * 3_600));
    limits.max_steps = Some(limits.steps().min(MAX_STEPS));
    let mut checker = Checker::new(loaded.expect);
    let mut narration = TextWriter::new(Vec::new());
    let mut jsonl = JsonlWriter::new(Vec::new());
    let mut both = Tee {
        first: &mut narration,
        second: &mut jsonl,
    };
    let report = Simulation::new(spec).run(&mut Tee {
        first: &mut checker,
        second: &mut both,
    });
    narration.finish().map_err(|error| error.to_string())?;
    jsonl.finish().map_err(|error| error.to_string())?;
    let failures = checker.finish();
    Ok(match (report.limit, failures.is_empty()) {
        (Some(_), _) => Outcome::LimitHit,
        (None, false) => Outcome::ExpectationsFailed,
        (None, true) => Outcome::Ok,
    })
}

/// A problem's line and column exist, and its span lies in the text it points into (or
/// in another file, for problems found in a definition file).
fn located(problem: &subsim_scenario::Diagnostic, source: &str) -> Result<(), String> {
    if problem.line == 0 || problem.column == 0 {
        return Err(format!("unlocated: {problem}"));
    }
    if problem.message.trim().is_empty() {
        return Err(format!("no message at {}", problem.location()));
    }
    if !source.is_empty() && problem.file == "fuzz.yaml" {
        let lines = source.split('\n').count();
        if problem.line > lines + 1 {
            return Err(format!(
                "line {} of a {lines}-line file: {problem}",
                problem.line
            ));
        }
        if problem.offset > source.len() {
            return Err(format!("offset past the end: {problem}"));
        }
    }
    Ok(())
}

/// Runs `cases` fuzz cases; any failure (a panic included) fails the test with the
/// shrunk input.
fn fuzz(cases: u32, scratch_name: &str) {
    let corpus = corpus();
    assert!(
        corpus.len() > 100,
        "the seed corpus is too small: {}",
        corpus.len()
    );
    let scratch = Scratch::new(scratch_name);
    let config = Config {
        cases,
        // Shrinking a long mutation list can take many steps; keep it bounded.
        max_shrink_iters: 2_000,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let strategy = (0..corpus.len(), proptest::collection::vec(mutation(), 0..8));
    let result = runner.run(&strategy, |(index, mutations)| {
        let seed = &corpus[index];
        let bytes = mutate(&seed.text, &mutations);
        let base_dir = seed.path.parent().unwrap_or(Path::new("."));
        match pipeline(seed.kind, base_dir, &bytes, &scratch.0) {
            Ok(_) => Ok(()),
            Err(why) => Err(TestCaseError::fail(format!(
                "{}: {why}\ninput:\n{}",
                seed.path.display(),
                String::from_utf8_lossy(&bytes)
            ))),
        }
    });
    if let Err(error) = result {
        panic!("{error}");
    }
}

#[test]
fn fuzz_parse_validate_run_never_panics() {
    fuzz(FUZZ_CASES, "short");
}

/// The long mode: `SUBSIM_FUZZ_CASES` cases (default one million).
#[test]
#[ignore = "long: run with `-- --ignored` and SUBSIM_FUZZ_CASES"]
fn fuzz_long() {
    let cases = std::env::var("SUBSIM_FUZZ_CASES")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(1_000_000);
    fuzz(cases, "long");
}

#[test]
fn fuzz_seeds_run_unmutated() {
    // Every seed goes through the pipeline as it is: the shipped scenarios load and run.
    let scratch = Scratch::new("seeds");
    let mut outcomes = [0usize; 5];
    for seed in corpus() {
        let base_dir = seed.path.parent().unwrap_or(Path::new("."));
        let outcome = pipeline(seed.kind, base_dir, &seed.text, &scratch.0)
            .unwrap_or_else(|why| panic!("{}: {why}", seed.path.display()));
        outcomes[outcome as usize] += 1;
    }
    // Most seeds are valid scenarios that pass (the invalid fixtures are the exception).
    assert!(outcomes[Outcome::Ok as usize] > 100, "{outcomes:?}");
    assert!(outcomes[Outcome::BadInput as usize] > 0, "{outcomes:?}");
}

#[test]
fn fuzz_crashers_stay_fixed() {
    // Inputs that once broke the pipeline (issue #10 §4), kept as files, plus those built
    // here because they are too large to keep.
    let scratch = Scratch::new("crashers");
    let folder = repo_root().join("tests/fuzz-regressions");
    let mut inputs: Vec<(String, Kind, Vec<u8>)> = Vec::new();
    let mut files = Vec::new();
    collect(&folder, &mut files);
    files.sort();
    for path in files {
        let kind = match path.extension().and_then(|ext| ext.to_str()) {
            Some("yaml") => Kind::Yaml,
            Some("md") => Kind::Markdown,
            Some("json") => Kind::Json,
            _ => continue,
        };
        let bytes = std::fs::read(&path).expect("read a crasher");
        inputs.push((path.display().to_string(), kind, bytes));
    }
    assert!(
        inputs.len() >= 3,
        "tests/fuzz-regressions/ holds the crashers"
    );
    let values = vec!["1"; 200_000].join(",");
    inputs.push((
        "a 200k-value flow list".to_string(),
        Kind::Yaml,
        format!("name: x\nmain: [{values}]\n").into_bytes(),
    ));
    inputs.push((
        "an error after 65,536 spaces".to_string(),
        Kind::Yaml,
        format!("name: x\n{}nmae: 1\n", " ".repeat(65_536)).into_bytes(),
    ));
    for (name, kind, bytes) in inputs {
        pipeline(kind, &folder, &bytes, &scratch.0).unwrap_or_else(|why| panic!("{name}: {why}"));
    }
    // Loops that write nothing at one instant (once validated but not run) now run and
    // stop at `max_steps` (exit 3).
    for (name, text) in [
        (
            "a loop of 4e9 silent steps",
            "name: x\nmain:\n  - repeat: {times: 4000000000, steps: [{work: 0s}]}\n",
        ),
        (
            "nested loops of 60,000 × 60,000 silent steps",
            "name: x\nmain:\n  - repeat: {times: 60000, steps: [{repeat: {times: 60000, steps: [{work: 0s}]}}]}\n",
        ),
        (
            "a file raising max_steps past the fuzz bound",
            "name: x\nsession: {limits: {max_steps: 1000000000000}}\nmain:\n  - repeat: {times: 4000000000, steps: [{work: 0s}]}\n",
        ),
    ] {
        let outcome = pipeline(Kind::Yaml, &folder, text.as_bytes(), &scratch.0)
            .unwrap_or_else(|why| panic!("{name}: {why}"));
        assert_eq!(outcome, Outcome::LimitHit, "{name}");
    }
}
