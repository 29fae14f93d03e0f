//! `subsim diff FILE --from V1 --to V2`: one scenario run under two Claude Code versions,
//! and what changes between them.
//!
//! It prints, in order: the version gates that differ (`subsim_rules::gates_table`), the
//! session settings of `session_started` that differ, the first event where the two traces
//! part (aligned by `seq`, narrated, with context and the fields that differ), and the
//! count of events of each kind on each side where those differ. It explains differences;
//! it does not judge which version is right.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use subsim_engine::event::Field;
use subsim_engine::render::Narrator;
use subsim_engine::sink::Collect;
use subsim_engine::{Event, EventKind, Simulation};
use subsim_rules::gates_table;
use subsim_rules::{Gates, Version};

use crate::args::DiffArgs;
use crate::{output, Status};

/// Common events shown before the first divergence.
const CONTEXT_BEFORE: usize = 3;
/// Events shown on each side from the first divergence on.
const CONTEXT_AFTER: usize = 3;

pub fn diff(args: DiffArgs) -> anyhow::Result<Status> {
    let loaded = crate::load::load_source(Some(&args.file), &args.source)?;
    let shown = args.file.display().to_string();
    let run = |version: Version| {
        let mut spec = loaded.spec.clone();
        spec.session.version = version;
        let mut simulation = Simulation::new(spec);
        if let Some(seed) = args.source.seed {
            simulation = simulation.with_seed(seed);
        }
        let mut trace = Collect::default();
        let report = simulation.run(&mut trace);
        (trace.events, report)
    };
    let (left, left_report) = run(args.from);
    let (right, right_report) = run(args.to);
    let (from, to) = (args.from.to_string(), args.to.to_string());

    let mut out = format!("{shown}: {}\n", loaded.spec.name);
    let _ = writeln!(out, "Compared: {from} and {to}\n");
    out.push_str(&gate_differences(args.from, args.to));

    out.push_str(&parting(&left, &right, &from, &to, "the version"));
    for (version, report) in [(&from, &left_report), (&to, &right_report)] {
        if let Some(limit) = &report.limit {
            let _ = writeln!(out, "note: the {version} run stopped early: {limit}");
        }
    }
    output::print_text(&out)?;
    Ok(Status::Ok)
}

/// Where two traces of one scenario part, as `diff` prints it after the gates: the
/// settings of `session_started` that differ, the first event where they part (narrated,
/// with context and the fields that differ) and the kinds of event whose counts differ.
/// `from` and `to` name the two sides, `changed` what was changed between them ("the
/// version"). `subsim serve`'s Compare shows this same text.
pub fn parting(left: &[Event], right: &[Event], from: &str, to: &str, changed: &str) -> String {
    let mut out = String::new();
    // The session line: what `session_started` resolved, less the version itself.
    let mut start = 0;
    if let (Some(a), Some(b)) = (left.first(), right.first()) {
        if matches!(a.kind, EventKind::SessionStarted { .. })
            && matches!(b.kind, EventKind::SessionStarted { .. })
        {
            start = 1;
            let changes = field_changes(&fields(a), &fields(b), &["t_us", "seq", "kind"]);
            if !changes.is_empty() {
                let _ = writeln!(out, "\nThe session differs (session_started):");
                for change in changes {
                    let _ = writeln!(out, "  {change}");
                }
            }
        }
    }

    let first = (start..left.len().max(right.len())).find(|&index| {
        match (left.get(index), right.get(index)) {
            (Some(a), Some(b)) => comparable(a) != comparable(b),
            _ => true,
        }
    });
    match first {
        None => {
            let _ = writeln!(
                out,
                "\nThe two runs are identical apart from {changed}: {} each.",
                crate::words::plural(left.len(), "event")
            );
        }
        Some(index) => out.push_str(&divergence(index, left, right, from, to)),
    }
    out.push_str(&summary(left, right, from, to));
    out
}

/// The gates whose values differ between the two versions, one line each.
fn gate_differences(from: Version, to: Version) -> String {
    let (a, b) = (Gates::for_version(from), Gates::for_version(to));
    let changed: Vec<_> = gates_table::gates()
        .iter()
        .filter(|gate| (gate.read)(&a) != (gate.read)(&b))
        .collect();
    let mut out = String::new();
    if changed.is_empty() {
        let _ = writeln!(out, "No version gate differs between {from} and {to}.");
        return out;
    }
    let _ = writeln!(
        out,
        "Version gates that differ ({} of {}):",
        changed.len(),
        gates_table::gates().len()
    );
    let width = changed
        .iter()
        .map(|gate| gate.field.len())
        .max()
        .unwrap_or(0);
    for gate in changed {
        let rules: Vec<&str> = gate.rules().collect();
        let _ = writeln!(
            out,
            "  {:<width$}  {} → {}  [{}] {} ({})",
            gate.field,
            (gate.read)(&a),
            (gate.read)(&b),
            rules.join(", "),
            gate.what,
            gate.when()
        );
    }
    out
}

/// An event's fields as `(name, value)` text, in trace order.
fn fields(event: &Event) -> Vec<(&'static str, String)> {
    let mut list = Vec::new();
    event.visit_fields(&mut |name, value| {
        let text = match value {
            Field::Str(text) => text.to_string(),
            Field::U64(number) => number.to_string(),
            Field::Bool(flag) => flag.to_string(),
            Field::List(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(|item| item.as_ref())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Field::Agent(agent) => agent.id_string(),
        };
        list.push((name, text));
    });
    list
}

/// What two aligned events are compared on: every field but `seq` (equal by alignment).
fn comparable(event: &Event) -> Vec<(&'static str, String)> {
    let mut list = fields(event);
    list.retain(|(name, _)| *name != "seq");
    list
}

/// `name: a → b` for each field that differs, is missing on one side or is new.
fn field_changes(
    a: &[(&'static str, String)],
    b: &[(&'static str, String)],
    skip: &[&str],
) -> Vec<String> {
    let find = |list: &[(&'static str, String)], name: &str| {
        list.iter()
            .find(|(known, _)| *known == name)
            .map(|(_, value)| value.clone())
    };
    let mut names: Vec<&'static str> = a.iter().map(|(name, _)| *name).collect();
    for (name, _) in b {
        if !names.contains(name) {
            names.push(name);
        }
    }
    names
        .into_iter()
        .filter(|name| !skip.contains(name) && *name != "version")
        .filter_map(|name| {
            let (x, y) = (find(a, name), find(b, name));
            (x != y).then(
                || match (x.as_deref().and_then(items), y.as_deref().and_then(items)) {
                    (Some(before), Some(after)) => {
                        let gone: Vec<&str> = before
                            .iter()
                            .filter(|item| !after.contains(item))
                            .copied()
                            .collect();
                        let new: Vec<&str> = after
                            .iter()
                            .filter(|item| !before.contains(item))
                            .copied()
                            .collect();
                        let mut parts = Vec::new();
                        if !gone.is_empty() {
                            parts.push(format!("removed {}", gone.join(", ")));
                        }
                        if !new.is_empty() {
                            parts.push(format!("added {}", new.join(", ")));
                        }
                        if parts.is_empty() {
                            parts.push("the same items in another order".to_string());
                        }
                        format!("{name}: {}", parts.join("; "))
                    }
                    _ => {
                        let word =
                            |value: Option<String>| value.unwrap_or_else(|| "(absent)".into());
                        format!("{name}: {} → {}", word(x), word(y))
                    }
                },
            )
        })
        .collect()
}

/// The items of a list field's text (`[a, b]`), or `None` for other fields.
fn items(text: &str) -> Option<Vec<&str>> {
    let inner = text.strip_prefix('[')?.strip_suffix(']')?;
    Some(if inner.is_empty() {
        Vec::new()
    } else {
        inner.split(", ").collect()
    })
}

/// The widest the name column of `diff`'s excerpts gets: one column for both sides, from
/// the first line to the last, so that an imported session's long names
/// (`map-the-orders-api`) do not shift the lines after them.
const NAME_COLUMN: usize = 20;

/// Narration lines of `events[..end]`, each as a person reads it, the name column as wide
/// as `column`.
fn narrate(events: &[Event], end: usize, column: usize) -> Vec<String> {
    let mut narrator = Narrator::with_name_column(column);
    events[..end.min(events.len())]
        .iter()
        .map(|event| {
            let mut line = String::new();
            narrator.line(event, &mut line);
            line
        })
        .collect()
}

/// The first divergence at `index`: common context, each side's events, the fields.
fn divergence(index: usize, left: &[Event], right: &[Event], from: &str, to: &str) -> String {
    let until = index + CONTEXT_AFTER;
    // The names the excerpt shows decide its column (at least the narration's usual 14, at
    // most NAME_COLUMN).
    let before = index.saturating_sub(CONTEXT_BEFORE).max(1);
    let column = [left, right]
        .iter()
        .map(|events| {
            let mut narrator = Narrator::new();
            let end = until.min(events.len());
            events[..end]
                .iter()
                .enumerate()
                .map(|(at, event)| {
                    let who = narrator.tell(event).who.chars().count();
                    if at >= before {
                        who
                    } else {
                        0
                    }
                })
                .max()
                .unwrap_or(0)
        })
        .max()
        .unwrap_or(0)
        .clamp(14, NAME_COLUMN);
    let (left_lines, right_lines) = (narrate(left, until, column), narrate(right, until, column));
    let mut out = String::new();
    let seq = |events: &[Event]| {
        events
            .get(index)
            .map(|event| format!("seq {}, {}", event.seq, event.t))
            .unwrap_or_else(|| "no more events".into())
    };
    let _ = writeln!(
        out,
        "\nThe traces part at event #{index} ({from}: {}; {to}: {}).",
        seq(left),
        seq(right)
    );
    if before < index {
        let _ = writeln!(out, "  Both runs, just before:");
        for line in &left_lines[before..index] {
            let _ = writeln!(out, "      {line}");
        }
    }
    for (version, lines) in [(from, &left_lines), (to, &right_lines)] {
        let _ = writeln!(out, "  {version}:");
        if index >= lines.len() {
            let _ = writeln!(out, "    > (the run has no more events)");
        }
        for (offset, line) in lines.iter().enumerate().skip(index) {
            let mark = if offset == index { ">" } else { " " };
            let _ = writeln!(out, "    {mark} {line}");
        }
    }
    if let (Some(a), Some(b)) = (left.get(index), right.get(index)) {
        let changes = field_changes(&comparable(a), &comparable(b), &[]);
        let _ = writeln!(out, "  Fields that differ ({from} → {to}):");
        for change in changes {
            let _ = writeln!(out, "    {change}");
        }
    }
    out
}

/// Events on each side, and the kinds whose counts differ.
fn summary(left: &[Event], right: &[Event], from: &str, to: &str) -> String {
    let mut counts: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for event in left {
        counts.entry(event.kind.name()).or_default().0 += 1;
    }
    for event in right {
        counts.entry(event.kind.name()).or_default().1 += 1;
    }
    // In the trace's order of kinds, not alphabetically.
    let differing: Vec<(&str, u64, u64)> = EventKind::NAMES
        .iter()
        .filter_map(|kind| {
            let (a, b) = counts.get(kind).copied().unwrap_or_default();
            (a != b).then_some((*kind, a, b))
        })
        .collect();
    let mut out = format!(
        "\nSummary: {} at {from}, {} at {to}; ",
        crate::words::plural(left.len(), "event"),
        right.len()
    );
    match differing.len() {
        0 => out.push_str("every kind of event occurs as often in both.\n"),
        count => {
            let _ = writeln!(
                out,
                "{count} kind{} of event occur{} a different number of times:",
                if count == 1 { "" } else { "s" },
                if count == 1 { "s" } else { "" }
            );
            let width = differing
                .iter()
                .map(|(kind, _, _)| kind.len())
                .max()
                .unwrap_or(0);
            for (kind, a, b) in differing {
                let _ = writeln!(out, "  {kind:<width$}  {a} → {b}");
            }
        }
    }
    out
}
