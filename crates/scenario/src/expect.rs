//! The `expect` block → engine [`Located`] assertions, each remembering `file:line:col`.
//!
//! Only the shape is checked here (assertion forms, event kinds, field names); whether an
//! assertion holds is the engine's checker's business.

use subsim_engine::event::{fields_of_kind, EventKind, FIELD_NAMES};
use subsim_engine::expect::{Compare, EventFilter, Expectation, FilterValue, Located};
use subsim_engine::SimTime;

use crate::check::require;
use crate::check::{Ctx, Fields};
use crate::diagnostic::list_names;
use crate::raw::{Node, Value};

/// The keys that name an assertion; each entry has exactly one.
const HEADS: [&str; 9] = [
    "count",
    "max_running",
    "at",
    "final",
    "order",
    "event",
    "none",
    "after",
    "blocking",
];
/// What goes with `after`.
const FOLLOWS_KEYS: [&str; 3] = ["then", "within", "same"];
const COMPARES: [&str; 4] = ["equals", "at_least", "at_most", "between"];
const FINAL_KEYS: [&str; 2] = ["agent", "outcome"];
const BLOCKING_KEYS: [&str; 2] = ["approx", "tolerance"];
/// Outcomes `final` may expect: the trace's outcomes, plus `running` for a run that never ended.
const OUTCOMES: [&str; 6] = [
    "completed",
    "partial",
    "failed",
    "stopped",
    "cancelled",
    "running",
];
/// `blocking.tolerance` when left out.
const DEFAULT_TOLERANCE: f64 = 0.01;

fn entry_keys() -> Vec<&'static str> {
    HEADS
        .iter()
        .chain(COMPARES.iter())
        .chain(["running"].iter())
        .chain(FOLLOWS_KEYS.iter())
        .copied()
        .collect()
}

/// Reads the `expect` list.
pub(crate) fn expectations(ctx: &mut Ctx<'_>, node: Option<&Node>) -> Vec<Located> {
    let Some(node) = node else { return Vec::new() };
    if node.value == Value::Null {
        return Vec::new();
    }
    let Some(items) = ctx.list(node, "`expect`") else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let expectation = entry(ctx, item)?;
            Some(Located {
                expectation,
                location: Some(ctx.location(item.span)),
            })
        })
        .collect()
}

fn entry(ctx: &mut Ctx<'_>, node: &Node) -> Option<Expectation> {
    let keys = entry_keys();
    let fields = ctx.fields(node, "an `expect` entry", &keys)?;
    let heads: Vec<&str> = fields.names().filter(|name| HEADS.contains(name)).collect();
    let Some(&head) = heads.first() else {
        let help = if fields.get("running").is_some() {
            "`running` goes with `at`: `{at: 10s, running: 20}`".to_string()
        } else if fields.get("then").is_some() {
            "`then` goes with `after`: `{after: {kind: agent_finished, agent: a}, then: \
             {kind: agent_started, agent: b}, within: 3s}`"
                .to_string()
        } else {
            format!("an assertion starts with one of {}", list_names(&HEADS))
        };
        ctx.error_help(fields.span, "an `expect` entry needs an assertion", help);
        return None;
    };
    if let Some(second) = heads.get(1).and_then(|name| fields.key(name)) {
        ctx.error_help(
            second.span,
            format!(
                "`{}` and `{head}` are two assertions in one entry",
                heads[1]
            ),
            "write each assertion as its own list item",
        );
        return None;
    }
    let companions: &[&str] = match head {
        "count" => &COMPARES,
        "at" => &["running"],
        "after" => &FOLLOWS_KEYS,
        _ => &[],
    };
    let mut ok = true;
    for name in fields.names() {
        if name != head && !companions.contains(&name) {
            if let Some(key) = fields.key(name) {
                let help = if companions.is_empty() {
                    format!("`{head}` takes nothing else in its entry")
                } else {
                    format!("`{head}` goes with {}", list_names(companions))
                };
                ctx.error_help(
                    key.span,
                    format!("`{name}` does not go with `{head}`"),
                    help,
                );
                ok = false;
            }
        }
    }
    let value = fields.get(head)?;
    let expectation = match head {
        "count" => {
            let filter = filter(ctx, value);
            let compare = compare(ctx, &fields, "`count`");
            Expectation::Count {
                filter: filter?,
                compare: compare?,
            }
        }
        "max_running" => Expectation::MaxRunning(match &value.value {
            Value::Map(_) => {
                let inner = ctx.fields(value, "`max_running`", &COMPARES)?;
                compare(ctx, &inner, "`max_running`")?
            }
            Value::Null
            | Value::Bool(..)
            | Value::Int(..)
            | Value::Float(..)
            | Value::Str(..)
            | Value::Seq(..) => Compare::Equals(ctx.integer(value, "`max_running`", 0)?),
        }),
        "at" => {
            let at = ctx.duration(value, "`at`");
            let running = require(ctx, &fields, "`at`", "running", "`{at: 10s, running: 20}`")
                .and_then(|running| ctx.integer(running, "`running`", 0));
            Expectation::RunningAt {
                at: SimTime(at?),
                running: running?,
            }
        }
        "final" => {
            let inner = ctx.fields(value, "`final`", &FINAL_KEYS)?;
            let example = "`final: {agent: researcher-1, outcome: completed}`";
            let agent = require(ctx, &inner, "`final`", "agent", example)
                .and_then(|agent| ctx.name(agent, "`agent`"));
            let outcome = require(ctx, &inner, "`final`", "outcome", example)
                .and_then(|outcome| ctx.choice(outcome, "outcome", &OUTCOMES));
            Expectation::Final {
                agent: agent?,
                outcome: outcome?.to_string(),
            }
        }
        "order" => {
            let items = ctx.list(value, "`order`")?;
            if items.is_empty() {
                ctx.error(value.span, "`order` needs at least one event filter");
                return None;
            }
            let filters: Vec<Option<EventFilter>> =
                items.iter().map(|item| filter(ctx, item)).collect();
            Expectation::Order(filters.into_iter().collect::<Option<Vec<_>>>()?)
        }
        "event" => Expectation::Exists(filter(ctx, value)?),
        "none" => Expectation::NoEvent(filter(ctx, value)?),
        "after" => {
            let after = filter(ctx, value);
            let example =
                "`{after: {kind: permission_requested}, then: {kind: permission_answered}, \
                           same: [prompt], within: 30s}`";
            let then = require(ctx, &fields, "`after`", "then", example)
                .and_then(|then| filter(ctx, then));
            let within = match fields.get("within") {
                Some(within) => ctx.duration(within, "`within`").map(Some),
                None => Some(None),
            };
            let same = match fields.get("same") {
                Some(same) => same_fields(ctx, same),
                None => Some(Vec::new()),
            };
            Expectation::Follows {
                after: after?,
                then: then?,
                within: within?,
                same: same?,
            }
        }
        _ => {
            let inner = ctx.fields(value, "`blocking`", &BLOCKING_KEYS)?;
            let approx = require(
                ctx,
                &inner,
                "`blocking`",
                "approx",
                "`blocking: {approx: 0.16, tolerance: 0.01}`",
            )
            .and_then(|approx| fraction(ctx, approx, "`approx`"));
            let tolerance = match inner.get("tolerance") {
                Some(tolerance) => fraction(ctx, tolerance, "`tolerance`"),
                None => Some(DEFAULT_TOLERANCE),
            };
            Expectation::Blocking {
                approx: approx?,
                tolerance: tolerance?,
            }
        }
    };
    ok.then_some(expectation)
}

/// A number between 0 and 1.
fn fraction(ctx: &mut Ctx<'_>, node: &Node, what: &str) -> Option<f64> {
    let value = ctx.number(node, what)?;
    if !(0.0..=1.0).contains(&value) {
        ctx.error(
            node.span,
            format!("{what} is a fraction between 0 and 1, found {value}"),
        );
        return None;
    }
    Some(value)
}

/// Exactly one of `equals`, `at_least`, `at_most`, `between`.
fn compare(ctx: &mut Ctx<'_>, fields: &Fields<'_>, what: &str) -> Option<Compare> {
    let written: Vec<&str> = fields
        .names()
        .filter(|name| COMPARES.contains(name))
        .collect();
    let Some(&name) = written.first() else {
        ctx.error_help(
            fields.span,
            format!("{what} needs a comparison"),
            format!("add one of {}, e.g. `equals: 5`", list_names(&COMPARES)),
        );
        return None;
    };
    if let Some(second) = written.get(1).and_then(|name| fields.key(name)) {
        ctx.error(
            second.span,
            format!(
                "`{}` and `{name}` are two comparisons; keep one",
                written[1]
            ),
        );
        return None;
    }
    let value = fields.get(name)?;
    match name {
        "equals" => ctx.integer(value, "`equals`", 0).map(Compare::Equals),
        "at_least" => ctx.integer(value, "`at_least`", 0).map(Compare::AtLeast),
        "at_most" => ctx.integer(value, "`at_most`", 0).map(Compare::AtMost),
        _ => {
            let bounds = match &value.value {
                Value::Seq(items) if items.len() == 2 => items,
                Value::Null
                | Value::Bool(..)
                | Value::Int(..)
                | Value::Float(..)
                | Value::Str(..)
                | Value::Seq(..)
                | Value::Map(..) => {
                    ctx.error_help(
                        value.span,
                        format!("`between` takes two numbers, found {}", value.describe()),
                        "e.g. `between: [3, 5]`",
                    );
                    return None;
                }
            };
            let low = ctx.integer(&bounds[0], "the low bound", 0);
            let high = ctx.integer(&bounds[1], "the high bound", 0);
            let (low, high) = (low?, high?);
            if low > high {
                ctx.error(
                    value.span,
                    format!("`between: [{low}, {high}]` has its low bound above its high bound"),
                );
                return None;
            }
            Some(Compare::Between(low, high))
        }
    }
}

/// An event filter: a map from trace field names to wanted values.
fn filter(ctx: &mut Ctx<'_>, node: &Node) -> Option<EventFilter> {
    let fields = ctx.fields(node, "an event filter", &FIELD_NAMES)?;
    if fields.is_empty() {
        ctx.error_help(
            node.span,
            "an event filter needs at least one field",
            "e.g. `{kind: spawn_rejected}`",
        );
        return None;
    }
    let mut filter = EventFilter::default();
    let mut ok = true;
    let kind = fields.get("kind").and_then(|kind| match &kind.value {
        Value::Str(text) => fields_of_kind(text).map(|known| (text.clone(), known)),
        Value::Null
        | Value::Bool(..)
        | Value::Int(..)
        | Value::Float(..)
        | Value::Seq(..)
        | Value::Map(..) => None,
    });
    for name in fields.names() {
        if let (Some((kind, known)), Some(key)) = (&kind, fields.key(name)) {
            if !COMMON_FIELDS.contains(&name) && !known.contains(&name) {
                ctx.warn(
                    key.span,
                    format!(
                        "no `{kind}` event has {} `{name}` field, so this filter never matches",
                        crate::diagnostic::article(name)
                    ),
                    Some(format!("`{kind}` events carry {}", list_names(known))),
                );
            }
        }
        let Some(value) = fields.get(name) else {
            continue;
        };
        let wanted = if name == "kind" {
            ctx.choice(value, "event kind", &EventKind::NAMES)
                .map(|kind| FilterValue::Str(kind.to_string()))
        } else {
            let kind = kind.as_ref().map(|(kind, _)| kind.as_str());
            match closed_vocabulary(kind, name) {
                Some(known) if matches!(value.value, Value::Str(_)) => {
                    let what = match kind {
                        Some(kind) => format!("{kind} {name}"),
                        None => name.to_string(),
                    };
                    ctx.choice(value, &what, &known)
                        .map(|text| FilterValue::Str(text.to_string()))
                }
                _ => filter_value(ctx, value, name),
            }
        };
        match wanted {
            Some(wanted) => filter.fields.push((name.to_string(), wanted)),
            None => ok = false,
        }
    }
    ok.then_some(filter)
}

/// The spellings a filter's `field` can match when the trace writes it from a closed
/// vocabulary: of that field of `kind`, or without a kind of every kind that has the field
/// (`None` when some kind writes it as free text, such as `definition_noted.reason`). A
/// misspelt value (`reason: concurent_limit`) matched nothing and only failed at `check`.
fn closed_vocabulary(kind: Option<&str>, field: &str) -> Option<Vec<&'static str>> {
    let vocabularies = subsim_engine::event::vocabularies();
    let of = |kind: &str| {
        vocabularies
            .iter()
            .find(|(known, name, _)| *known == kind && *name == field)
            .map(|(_, _, values)| values.clone())
    };
    match kind {
        Some(kind) => of(kind),
        None => {
            let mut all = Vec::new();
            for kind in EventKind::NAMES {
                if fields_of_kind(kind).is_some_and(|fields| fields.contains(&field)) {
                    all.extend(of(kind)?);
                }
            }
            all.sort_unstable();
            all.dedup();
            (!all.is_empty()).then_some(all)
        }
    }
}

/// Fields every event carries.
const COMMON_FIELDS: [&str; 4] = ["t_us", "seq", "kind", "rule"];

/// `same: [FIELD, …]` (or one field as a bare word): trace field names.
fn same_fields(ctx: &mut Ctx<'_>, node: &Node) -> Option<Vec<String>> {
    let names = match &node.value {
        Value::Str(_) => vec![ctx.text(node, "`same`")?],
        Value::Null
        | Value::Bool(..)
        | Value::Int(..)
        | Value::Float(..)
        | Value::Seq(..)
        | Value::Map(..) => ctx.string_list(node, "`same`")?,
    };
    for name in &names {
        if !FIELD_NAMES.contains(&name.as_str()) {
            let suggestion = crate::diagnostic::suggest(name, &FIELD_NAMES)
                .map(|near| format!("did you mean `{near}`?"))
                .unwrap_or_else(|| "name a trace field such as `agent` or `prompt`".to_string());
            ctx.error_help(
                node.span,
                format!("`same` names an unknown field `{name}`"),
                suggestion,
            );
            return None;
        }
    }
    Some(names)
}

fn filter_value(ctx: &mut Ctx<'_>, node: &Node, field: &str) -> Option<FilterValue> {
    match &node.value {
        Value::Str(text) => Some(FilterValue::Str(text.clone())),
        Value::Bool(flag) => Some(FilterValue::Bool(*flag)),
        Value::Int(_) => ctx
            .integer(node, &format!("`{field}`"), 0)
            .map(FilterValue::Int),
        Value::Null | Value::Float(..) | Value::Seq(..) | Value::Map(..) => {
            ctx.error(
                node.span,
                format!(
                    "`{field}` in a filter must be text, a whole number or a boolean, found {}",
                    node.describe()
                ),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::raw::parse;

    fn check(yaml: &str) -> (Vec<Located>, Vec<String>) {
        let node = parse(yaml).unwrap_or_else(|error| panic!("{yaml}: {error:?}"));
        let mut ctx = Ctx::new("t.yaml", Path::new("."));
        let located = expectations(&mut ctx, Some(&node));
        (
            located,
            ctx.errors.iter().map(ToString::to_string).collect(),
        )
    }

    #[test]
    fn every_assertion_form() {
        let (located, errors) = check(
            r#"
- count: {kind: spawn_rejected, reason: concurrent_limit}
  equals: 5
- count: {kind: agent_started, background: true, depth: 2}
  between: [1, 3]
- max_running: 20
- max_running: {at_most: 4}
- at: 10s
  running: 20
- final: {agent: researcher-1, outcome: completed}
- order: [{kind: permission_answered, agent: r-1}, {kind: agent_finished, agent: r-1}]
- event: {kind: spawn_rejected, message: "Concurrent subagent limit reached"}
- blocking: {approx: 0.159, tolerance: 0.01}
"#,
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(located.len(), 9);
        assert_eq!(located[0].location.as_deref(), Some("t.yaml:2:3"));
        assert_eq!(
            located[1].expectation,
            Expectation::Count {
                filter: EventFilter {
                    fields: vec![
                        ("kind".into(), FilterValue::Str("agent_started".into())),
                        ("background".into(), FilterValue::Bool(true)),
                        ("depth".into(), FilterValue::Int(2)),
                    ]
                },
                compare: Compare::Between(1, 3),
            }
        );
        assert_eq!(
            located[2].expectation,
            Expectation::MaxRunning(Compare::Equals(20))
        );
        assert_eq!(
            located[3].expectation,
            Expectation::MaxRunning(Compare::AtMost(4))
        );
        assert_eq!(
            located[4].expectation,
            Expectation::RunningAt {
                at: SimTime::from_secs(10),
                running: 20
            }
        );
        assert_eq!(
            located[8].expectation,
            Expectation::Blocking {
                approx: 0.159,
                tolerance: 0.01
            }
        );
    }

    #[test]
    fn assertion_problems() {
        let cases = [
            (
                "- count: {kind: spawn_rejeted}\n  equals: 1",
                "unknown event kind `spawn_rejeted`, did you mean `spawn_rejected`?",
            ),
            (
                "- count: {knd: spawn_rejected}\n  equals: 1",
                "unknown key `knd`, did you mean `kind`?",
            ),
            (
                "- count: {kind: spawn_rejected}",
                "`count` needs a comparison",
            ),
            (
                "- count: {kind: spawn_rejected}\n  equals: 1\n  at_most: 2",
                "two comparisons",
            ),
            ("- running: 3", "needs an assertion"),
            (
                "- final: {agent: a, outcome: done}",
                "unknown outcome `done`",
            ),
            ("- at: 10s", "`at` needs `running`"),
            (
                "- event: {kind: agent_started}\n  equals: 3",
                "`equals` does not go with `event`",
            ),
            ("- event: {}", "at least one field"),
            (
                "- count: {kind: agent_started}\n  between: [5, 1]",
                "low bound above",
            ),
            ("- blocking: {approx: 1.5}", "between 0 and 1"),
            (
                "- max_running: 3\n  event: {kind: agent_started}",
                "two assertions in one entry",
            ),
        ];
        for (yaml, fragment) in cases {
            let (_, errors) = check(yaml);
            assert!(
                errors.iter().any(|error| error.contains(fragment)),
                "{yaml}: wanted {fragment:?} in {errors:?}"
            );
        }
    }

    #[test]
    fn none_and_after_forms() {
        let (located, errors) = check(
            r#"
- none: {kind: spawn_rejected}
- after: {kind: permission_requested, agent: r-1}
  then: {kind: permission_answered}
  within: 3s
  same: [prompt, agent]
- after: {kind: agent_finished, agent: a}
  then: {kind: agent_started, agent: b}
  same: agent
"#,
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            located[0].expectation,
            Expectation::NoEvent(EventFilter {
                fields: vec![("kind".into(), FilterValue::Str("spawn_rejected".into()))]
            })
        );
        match &located[1].expectation {
            Expectation::Follows {
                within, same, then, ..
            } => {
                assert_eq!(*within, Some(3_000_000));
                assert_eq!(same, &vec!["prompt".to_string(), "agent".to_string()]);
                assert_eq!(then.kind(), Some("permission_answered"));
            }
            other => panic!("{other:?}"),
        }
        match &located[2].expectation {
            Expectation::Follows { within, same, .. } => {
                assert_eq!(*within, None);
                assert_eq!(same, &vec!["agent".to_string()]);
            }
            other => panic!("{other:?}"),
        }
        for (yaml, fragment) in [
            ("- after: {kind: agent_started}", "`after` needs `then`"),
            (
                "- after: {kind: agent_started}\n  then: {kind: agent_finished}\n  within: soon",
                "`within`",
            ),
            (
                "- after: {kind: agent_started}\n  then: {kind: agent_finished}\n  same: [agnet]",
                "did you mean `agent`?",
            ),
            ("- then: {kind: agent_finished}", "`then` goes with `after`"),
            (
                "- none: {kind: agent_started}\n  within: 3s",
                "`within` does not go with `none`",
            ),
            ("- none: {knd: agent_started}", "did you mean `kind`?"),
        ] {
            let (_, errors) = check(yaml);
            assert!(
                errors.iter().any(|error| error.contains(fragment)),
                "{yaml}: wanted {fragment:?} in {errors:?}"
            );
        }
    }

    #[test]
    fn a_misspelt_closed_vocabulary_value_in_a_filter_fails_validation_with_the_fix() {
        // `reason: concurent_limit` passed `validate` and matched nothing, so `count ...
        // equals: 0` even passed `check`.
        for (yaml, fragment) in [
            (
                "- count: {kind: spawn_rejected, reason: concurent_limit}\n  equals: 0",
                "unknown spawn_rejected reason `concurent_limit`, did you mean `concurrent_limit`?",
            ),
            (
                "- none: {kind: agent_finished, outcome: complete}",
                "did you mean `completed`?",
            ),
            ("- none: {outcome: faild}", "did you mean `failed`?"),
            (
                "- none: {kind: tool_called, reason: denid}",
                "did you mean `denied`?",
            ),
        ] {
            let (_, errors) = check(yaml);
            assert!(
                errors.iter().any(|error| error.contains(fragment)),
                "{yaml}: wanted {fragment:?} in {errors:?}"
            );
        }
        // Spelt right, and free text (`definition_noted.reason`), pass.
        for yaml in [
            "- count: {kind: spawn_rejected, reason: concurrent_limit}\n  equals: 0",
            "- none: {reason: anything at all}",
            "- none: {kind: definition_noted, reason: anything at all}",
        ] {
            let (located, errors) = check(yaml);
            assert!(errors.is_empty(), "{yaml}: {errors:?}");
            assert_eq!(located.len(), 1, "{yaml}");
        }
    }

    #[test]
    fn a_key_no_event_of_the_kind_has_is_a_warning() {
        let node = parse("- none: {kind: agent_finished, tool: Bash}\n- event: {kind: tool_called, tool: Bash, t_us: 0}")
            .expect("parses");
        let mut ctx = Ctx::new("t.yaml", Path::new("."));
        let located = expectations(&mut ctx, Some(&node));
        assert_eq!(located.len(), 2);
        assert!(ctx.errors.is_empty());
        let warnings: Vec<String> = ctx.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("t.yaml:1:32")
                && warnings[0].contains("no `agent_finished` event has a `tool` field"),
            "{warnings:?}"
        );
    }

    /// Issue #23 item 9: the warning said "has a `agent` field".
    #[test]
    fn a_key_starting_with_a_vowel_gets_an() {
        let node = parse("- none: {kind: session_started, agent: main}").expect("parses");
        let mut ctx = Ctx::new("t.yaml", Path::new("."));
        expectations(&mut ctx, Some(&node));
        let warnings: Vec<String> = ctx.warnings.iter().map(ToString::to_string).collect();
        assert!(
            warnings
                .iter()
                .any(|warning| warning.contains("no `session_started` event has an `agent` field")),
            "{warnings:?}"
        );
    }
}
