//! `subsim rules`: every rule of the catalog with its status, its version gates and the
//! scenarios that demonstrate it, as text for people or TSV for tools.
//!
//! The rows are `docs/rules.md`'s (embedded, see `catalog.rs`); the gates are
//! `subsim_rules::gates_table`'s. Nothing here decides a rule's status.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::args::{RulesArgs, RulesFormat};
use crate::catalog::{self, Rule};
use crate::output;
use crate::Status;

pub fn rules(args: RulesArgs) -> anyhow::Result<Status> {
    let rules = catalog::rules();
    match args.format {
        RulesFormat::Text => output::print_text(&text(&rules))?,
        RulesFormat::Tsv => output::print(&tsv(&rules))?,
    }
    Ok(Status::Ok)
}

/// The TSV columns, in order.
pub const TSV_HEADER: &str = "id\tstatus\tscenarios\tgates\tsummary";

fn tsv(rules: &[Rule]) -> String {
    let mut out = format!("{TSV_HEADER}\n");
    for rule in rules {
        let gates: Vec<&str> = rule.gates().iter().map(|gate| gate.field).collect();
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}",
            rule.id,
            rule.status,
            rule.scenarios.join(" "),
            gates.join(","),
            rule.summary.replace('\t', " ")
        );
    }
    out
}

/// The statuses `docs/rules.md` defines, in the order its counts table lists them.
const STATUSES: [&str; 5] = [
    "simulated",
    "simulated (unit-tested)",
    "planned (#3)",
    "planned (#4)",
    "not observable",
];

fn text(rules: &[Rule]) -> String {
    let mut out = String::new();
    let mut area = "";
    let width = rules.iter().map(|rule| rule.id.len()).max().unwrap_or(0);
    let pad = " ".repeat(width + 4);
    for rule in rules {
        if rule.area != area {
            if !area.is_empty() {
                out.push('\n');
            }
            area = &rule.area;
            let _ = writeln!(out, "{area}");
        }
        let _ = writeln!(out, "  {:<width$}  {}", rule.id, rule.summary);
        let _ = writeln!(out, "{pad}status: {}", rule.status);
        for gate in rule.gates() {
            let _ = writeln!(
                out,
                "{pad}gate: {}, {} — {}",
                gate.field,
                gate.when(),
                gate.what
            );
        }
        for scenario in &rule.scenarios {
            let _ = writeln!(out, "{pad}shown by: {scenario}");
        }
        if !rule.note.is_empty() {
            let _ = writeln!(out, "{pad}note: {}", rule.note);
        }
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for rule in rules {
        *counts.entry(&rule.status).or_default() += 1;
    }
    // The documented statuses in their order, then any other the page uses.
    let mut order: Vec<&str> = STATUSES.to_vec();
    order.extend(counts.keys().filter(|status| !STATUSES.contains(status)));
    let counted: Vec<String> = order
        .iter()
        .filter_map(|status| counts.get(status).map(|count| format!("{count} {status}")))
        .collect();
    let _ = writeln!(out, "\n{} rules: {}", rules.len(), counted.join(", "));
    out
}
