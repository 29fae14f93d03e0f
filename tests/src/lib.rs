//! Helpers shared by the integration tests: where the repo's scenarios live and how to run
//! one file end to end (load → simulate → check its `expect:` block).

use std::path::{Path, PathBuf};

use subsim_engine::expect::{Checker, Failure};
use subsim_engine::render::JsonlWriter;
use subsim_engine::sink::Tee;
use subsim_engine::Simulation;

pub mod markdown;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Every `*.yaml` under `dir`, recursively, sorted by path.
pub fn scenario_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .is_some_and(|ext| ext == "yaml" || ext == "yml")
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The outcome of running one scenario file.
pub struct FileRun {
    /// The JSONL trace.
    pub jsonl: Vec<u8>,
    /// Failed expectations.
    pub failures: Vec<Failure>,
    /// How many expectations the file has.
    pub expectations: usize,
}

/// Loads, runs and checks one scenario file, with an optional seed override.
pub fn run_file(path: &Path, seed: Option<u64>) -> Result<FileRun, String> {
    let loaded =
        subsim_scenario::load_scenario(path).map_err(|diagnostics| diagnostics.to_string())?;
    let expectations = loaded.expect.len();
    let limit_expected = expects_limit(&loaded.expect);
    let mut checker = Checker::new(loaded.expect);
    let mut writer = JsonlWriter::new(Vec::new());
    let mut simulation = Simulation::new(loaded.spec);
    if let Some(seed) = seed {
        simulation = simulation.with_seed(seed);
    }
    let report = simulation.run(&mut Tee {
        first: &mut checker,
        second: &mut writer,
    });
    if let Some(limit) = report.limit.filter(|_| !limit_expected) {
        return Err(format!("{}: {limit}", path.display()));
    }
    let jsonl = writer.finish().map_err(|error| error.to_string())?;
    Ok(FileRun {
        jsonl,
        failures: checker.finish(),
        expectations,
    })
}

/// Does the file expect its run to be cut short (a `limit_reached` event in a filter that
/// is not a `none`)? Then a safety limit is what it tests, as `subsim check` reads it
/// (scenarios/limits/).
fn expects_limit(expectations: &[subsim_engine::expect::Located]) -> bool {
    use subsim_engine::expect::{Expectation, FilterValue};
    expectations.iter().any(|located| {
        !matches!(located.expectation, Expectation::NoEvent(_))
            && located.expectation.filters().iter().any(|filter| {
                filter.fields.iter().any(|(name, value)| {
                    name == "kind" && *value == FilterValue::Str("limit_reached".to_string())
                })
            })
    })
}
