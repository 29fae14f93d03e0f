//! `subsim import`: a Claude Code session transcript in, a scenario out (the importer
//! itself is `subsim_scenario::import`); with `--report`, the fidelity of the replay and
//! its verdict: "reproduced" (exit 0) or where the session departed from the documented
//! behaviour (exit 1); a file that cannot be imported exits 2.

use subsim_scenario::import::{fidelity, import_session, ImportOptions};

use crate::args::ImportArgs;
use crate::diagnostics::{self, Level};
use crate::{output, AlreadyReported, Status};

pub fn import(args: ImportArgs) -> anyhow::Result<Status> {
    let options = ImportOptions {
        keep_text: args.keep_text,
    };
    // Every import error is bad input (exit 2): not a transcript, unreadable, too large.
    let imported = import_session(&args.session, options)?;
    for warning in &imported.warnings {
        crate::output::note(&format!(
            "subsim: warning: {}",
            output::escape_controls(warning)
        ));
    }
    // Exit 1 when the session departed from the documented behaviour (`--report`).
    let mut status = Status::Ok;
    let report = if args.report {
        match fidelity(&imported) {
            Ok(report) => {
                if !report.reproduced() {
                    status = Status::ExpectationsFailed;
                }
                Some(report.to_string())
            }
            Err(problems) => {
                diagnostics::eprint(&problems.problems, &problems.source, Level::Error);
                return Err(AlreadyReported.into());
            }
        }
    } else {
        None
    };
    match &args.out {
        Some(path) => {
            // The transcript and its subagents' files are inputs: never overwritten.
            let mut inputs = vec![args.session.clone()];
            inputs.extend(imported.subagent_files.iter().cloned());
            output::write_file(path, &inputs, imported.yaml.as_bytes())?;
            crate::output::note(&format!(
                "subsim: wrote {} ({}, {}, {})",
                output::escape_controls(&path.display().to_string()),
                output::counted(imported.spawn_calls as u64, "Agent call", "Agent calls"),
                output::counted(
                    imported.subagent_files.len() as u64,
                    "subagent transcript",
                    "subagent transcripts"
                ),
                output::counted(
                    imported.facts.len() as u64,
                    "observed fact",
                    "observed facts"
                )
            ));
            if let Some(report) = report {
                output::print(&report)?;
            }
        }
        None => {
            let mut text = imported.yaml.clone();
            if let Some(report) = report {
                // Comment lines keep stdout a valid scenario.
                text.push_str("# fidelity (subsim import --report):\n");
                for line in report.lines() {
                    text.push_str(&format!("# {line}\n"));
                }
            }
            output::print(&text)?;
        }
    }
    Ok(status)
}
