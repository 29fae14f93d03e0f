//! Loading a scenario file (or the built-in demo) for a command: its diagnostics printed to
//! stderr, warnings and errors alike, and what its expectations ask of a run.

use std::path::Path;

use subsim_engine::expect::{Expectation, FilterValue, Located};
use subsim_scenario::Loaded;

use crate::args::{Edit, Source};
use crate::diagnostics::{self, Level};
use crate::AlreadyReported;

/// The built-in demo, `scenarios/demo.yaml`: the cap, a resume past it, the depth limit,
/// a routed prompt, who hears back. Embedded, so the binary needs no repository.
pub const DEMO: &str = include_str!("../../../scenarios/demo.yaml");
/// The name the demo's diagnostics and `--explain` use.
pub const DEMO_NAME: &str = "demo.yaml";

/// Loads a scenario file under `--set` and `--cap`, its `file:` and `agent_dirs` confined
/// to its folder and those of `--allow-path`; on failure prints its diagnostics to stderr.
pub fn load(path: &Path, edit: &Edit) -> anyhow::Result<Loaded> {
    tracing::debug!(path = %path.display(), "loading");
    report(subsim_scenario::load_scenario_under(
        path,
        &edit.overrides(),
        &edit.access.options(),
    ))
}

/// Loads a scenario file, or the built-in demo without one, through the scenario-source
/// group: `--set` and `--cap` before validation, then `--seed` as its `session.seed`. Every
/// command that runs a scenario loads it here, so the flags mean the same in each.
pub fn load_source(path: Option<&Path>, source: &Source) -> anyhow::Result<Loaded> {
    let mut loaded = match path {
        Some(path) => load(path, &source.edit)?,
        None => report(subsim_scenario::parse_scenario_with(
            DEMO,
            DEMO_NAME,
            Path::new("."),
            &source.overrides(),
        ))?,
    };
    if let Some(seed) = source.seed {
        loaded.spec.session.seed = seed;
    }
    Ok(loaded)
}

/// Reads a scenario file's text under `options` (the byte limit, regular files when asked);
/// on failure prints the located problem to stderr.
pub fn read(path: &Path, options: &subsim_scenario::Options) -> anyhow::Result<String> {
    subsim_scenario::read_scenario(path, options).map_err(|problems| {
        diagnostics::eprint(&problems.problems, &problems.source, Level::Error);
        AlreadyReported.into()
    })
}

/// Prints warnings (or the errors) of a load to stderr.
pub fn report(
    loaded: Result<Loaded, subsim_scenario::diagnostic::Diagnostics>,
) -> anyhow::Result<Loaded> {
    match loaded {
        Ok(loaded) => {
            if !loaded.warnings.is_empty() {
                diagnostics::eprint(&loaded.warnings, &loaded.source, Level::Warning);
            }
            Ok(loaded)
        }
        Err(problems) => {
            diagnostics::eprint(&problems.problems, &problems.source, Level::Error);
            Err(AlreadyReported.into())
        }
    }
}

/// Does the file expect its run to be cut short (a `limit_reached` event in a filter)?
pub fn expects_limit(expectations: &[Located]) -> bool {
    expectations.iter().any(|located| {
        !matches!(located.expectation, Expectation::NoEvent(_))
            && located.expectation.filters().iter().any(|filter| {
                filter.fields.iter().any(|(name, value)| {
                    name == "kind" && *value == FilterValue::Str("limit_reached".to_string())
                })
            })
    })
}
