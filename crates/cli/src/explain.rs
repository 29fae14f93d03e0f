//! `subsim explain RULE-ID`: one rule in plain words (summary, status, version gates,
//! scenarios), then a narrated run of the first scenario that demonstrates it.
//!
//! The rule comes from the embedded `docs/rules.md`, the gates from
//! `subsim_rules::gates_table`, the scenario from the scenarios embedded by build.rs: the
//! command needs no file on disk.

use std::fmt::Write as _;
use std::io;

use anyhow::Context as _;
use subsim_engine::render::TextWriter;
use subsim_engine::summary::Summary;
use subsim_engine::Simulation;
use subsim_rules::Gates;

use crate::args::ExplainArgs;
use crate::catalog::{self, Rule};
use crate::{output, run, Status};

pub fn explain(args: ExplainArgs) -> anyhow::Result<Status> {
    let rules = catalog::rules();
    let wanted = args.rule.trim().to_ascii_uppercase();
    let Some(rule) = rules.iter().find(|rule| rule.id == wanted) else {
        let ids: Vec<&str> = rules.iter().map(|rule| rule.id.as_str()).collect();
        let hint = match subsim_scenario::suggest(&wanted, &ids) {
            Some(near) => format!(", did you mean `{near}`?"),
            None => String::new(),
        };
        anyhow::bail!(
            "`{}` is not a rule ID of docs/rules.md{hint} (`subsim rules` lists them all)",
            args.rule.trim()
        );
    };
    output::print(&describe(rule))?;
    let Some(path) = rule.scenarios.first() else {
        let why = if rule.note.is_empty() {
            String::new()
        } else {
            format!(": {}", rule.note)
        };
        output::print(&format!(
            "\nNo scenario demonstrates {} yet: it is {} — {}{why}.\n",
            rule.id,
            rule.status,
            status_meaning(&rule.status)
        ))?;
        return Ok(Status::Ok);
    };
    let source = catalog::scenario(path)
        .with_context(|| format!("{path} is linked from docs/rules.md but was not built in"))?;
    let loaded = run::report(subsim_scenario::parse_scenario(
        source,
        path,
        &catalog::scenario_base_dir(path),
    ))?;
    let mut intro = format!("\nRunning {path}: {}\n", loaded.spec.name);
    if let Some(description) = &loaded.spec.description {
        for line in description.trim_end().lines() {
            let _ = writeln!(intro, "  {line}");
        }
    }
    intro.push('\n');
    output::print(&intro)?;
    let load = loaded.spec.load.is_some();
    let mut simulation = Simulation::new(loaded.spec);
    if let Some(seed) = args.seed {
        simulation = simulation.with_seed(seed);
    }
    let (report, written) = if load {
        // A load scenario has millions of events: its statistics say more than its lines.
        let mut summary = Summary::new();
        let report = simulation.run(&mut summary);
        (report, output::print(&summary.render_text()))
    } else {
        let mut writer = TextWriter::new(io::stdout().lock());
        let report = simulation.run(&mut writer);
        let written = match writer.finish() {
            Err(error) if !output::is_broken_pipe(&error) => {
                Err(anyhow::Error::new(error).context("cannot write to stdout"))
            }
            _ => Ok(()),
        };
        (report, written)
    };
    written?;
    if let Some(limit) = &report.limit {
        eprintln!("subsim: {limit}");
        return Ok(Status::LimitHit);
    }
    Ok(Status::Ok)
}

/// What a status means, in `docs/rules.md`'s words.
fn status_meaning(status: &str) -> &'static str {
    match status {
        "simulated" => "the engine implements it and a scenario shows it",
        "simulated (unit-tested)" => {
            "the engine implements it and the crates' own tests cover it, but no scenario \
             shows it"
        }
        "planned (#3)" => "not covered yet; issue #3 brings it",
        "planned (#4)" => "not covered yet; issue #4 brings it",
        "not observable" => "a scheduling simulation cannot observe it",
        _ => "see docs/rules.md",
    }
}

/// The rule in words: ID, area, status, summary, gates, scenarios, note.
fn describe(rule: &Rule) -> String {
    let mut out = format!("{}: {}\n", rule.id, rule.summary);
    let _ = writeln!(out, "  Area:   {}", rule.area);
    let _ = writeln!(out, "  Status: {}", rule.status);
    let gates = rule.gates();
    if !gates.is_empty() {
        let newest = Gates::for_version(subsim_rules::Version::NEWEST);
        let _ = writeln!(out, "\nVersion gates:");
        for gate in gates {
            let _ = writeln!(
                out,
                "  {} ({}): {} — {} (at {}: {})",
                gate.field,
                gate.rules().collect::<Vec<_>>().join(", "),
                gate.when(),
                gate.what,
                newest.version,
                (gate.read)(&newest)
            );
        }
    }
    if !rule.scenarios.is_empty() {
        let _ = writeln!(out, "\nDemonstrated by:");
        for scenario in &rule.scenarios {
            let _ = writeln!(out, "  {scenario}");
        }
        if !rule.note.is_empty() {
            let _ = writeln!(out, "  note: {}", rule.note);
        }
    }
    out
}
