//! `subsim panel FILE --at TIME`: the subagent panel and the `/tasks` list at one instant
//! of a scenario's run, as a person would see them.
//!
//! The engine runs the scenario up to and including the instant and returns the view
//! (`Simulation::run_until`); `subsim_rules::panel` draws it. This module only frames it.

use std::fmt::Write as _;

use subsim_engine::sink::Discard;
use subsim_engine::time::human_duration;
use subsim_engine::{SimSpec, SimTime, Simulation};
use subsim_rules::panel::{render_panel, render_tasks};

use crate::args::PanelArgs;
use crate::{output, Status};

pub fn panel(args: PanelArgs) -> anyhow::Result<Status> {
    let loaded = crate::load::load_source(Some(&args.file), &args.source)?;
    let shown = args.file.display().to_string();
    output::print_text(&at_instant(loaded.spec, args.source.seed, args.at, &shown)?)?;
    Ok(Status::Ok)
}

/// The panel and `/tasks` of `spec`'s run (under `seed`, else its own) at `at`, framed with
/// what the run was doing then; `shown` names the scenario. `subsim serve` answers
/// `/api/panel` with this same text.
pub fn at_instant(
    spec: SimSpec,
    seed: Option<u64>,
    at: SimTime,
    shown: &str,
) -> anyhow::Result<String> {
    if spec.load.is_some() {
        anyhow::bail!(
            "{shown} is a load scenario (it has a `load:` block), and load runs keep no panel: \
             there is nothing to show. `subsim run {shown} --format summary` gives its statistics"
        );
    }
    let name = spec.name.clone();
    let loaded_kind = spec.session.kind.as_str();
    let simulation = |spec| match seed {
        Some(seed) => Simulation::new(spec).with_seed(seed),
        None => Simulation::new(spec),
    };
    // The whole run, only to say whether it was already over at that instant.
    let whole = simulation(spec.clone()).run(&mut Discard);
    let (report, view) = simulation(spec).run_until(&mut Discard, at);
    let Some(view) = view else {
        anyhow::bail!(
            "{shown} is a `{}` session, and only interactive sessions have the subagent panel \
             (PANEL-1): there is nothing to show. Set `session.kind: interactive` to see one",
            loaded_kind
        );
    };
    let mut out = format!(
        "At {} ({}) in {shown}: {name}\n",
        at,
        human_duration(at.as_micros())
    );
    if whole.end <= at {
        let _ = writeln!(out, "The run was over by then: it ended at {}.", whole.end);
    }
    if let Some(limit) = &report.limit {
        let _ = writeln!(out, "The run stopped early: {limit}.");
    }
    out.push_str("\nSubagent panel\n");
    let rows = render_panel(&view);
    if rows.is_empty() {
        out.push_str("  (no rows)\n");
    }
    for line in rows.lines() {
        let _ = writeln!(out, "  {line}");
    }
    out.push('\n');
    out.push_str(&render_tasks(&view));
    Ok(out)
}
