//! The `load` block: one stream of arrivals (the map form) or a list of named streams,
//! each with its arrival process — `poisson(…)`, `every(…)`, `burst(…)`, a rate
//! `schedule`, `on_off` bursts or recorded times from a `file` — its stop (`count` or
//! `duration`), its Agent call and its `retry` policy; and the warm-up of the load
//! statistics.
//!
//! A times file is read like every file a scenario names (inside the scenario's folder
//! unless `--allow-path`, regular files only, under the size limit, UTF-8), and problems
//! inside it are reported at the `file:` value, saying where in the file they are.

use std::rc::Rc;

use subsim_engine::spec::{Arrivals, LoadSpec, LoadStream, LoadUntil, RatePhase, Retry};
use subsim_engine::SimTime;

use crate::check::{require, Ctx, Fields};
use crate::definitions::read_limited;
use crate::diagnostic::{did_you_mean, list_names};
use crate::duration::{
    parse_dist, parse_duration, parse_rate, DIST_FORMS, DURATION_FORMS, RATE_FORMS,
};
use crate::raw::{Node, Value};
use crate::steps::{spawn, SPAWN_KEYS};

/// The keys of the single form, and of each stream of the list form but `name`.
const LOAD_KEYS: [&str; 6] = ["arrivals", "count", "duration", "spawn", "retry", "warmup"];
/// The keys of a stream of the list form.
const STREAM_KEYS: [&str; 7] = [
    "name", "arrivals", "count", "duration", "spawn", "retry", "warmup",
];
const RETRIES: [&str; 4] = ["none", "after_completion", "queue", "backoff"];
const ARRIVALS_FORMS: &str = "arrivals are `poisson(20/s)`, `every(50ms)`, `burst(25)`, \
     `{schedule: [{for: 8h, rate: 2/s}, …]}`, `{on_off: {rate: 30/s, on: exp(10s), off: exp(50s)}}` \
     or `{file: times.csv}`";
/// The keys of the map forms of `arrivals`.
const ARRIVAL_MAPS: [&str; 3] = ["schedule", "on_off", "file"];
const PHASE_KEYS: [&str; 2] = ["for", "rate"];
const ON_OFF_KEYS: [&str; 3] = ["rate", "on", "off"];
const TIMES_FORMS: &str = "one arrival time per line, in seconds from the start (`12.5`) or with \
     a unit (`250ms`, `2m`), in order; the first column of a CSV line is read; blank lines, \
     `#` comments and a header line (`time`) are skipped";

/// Reads the `load` block.
pub(crate) fn load(ctx: &mut Ctx<'_>, node: &Node) -> Option<LoadSpec> {
    let Value::Seq(items) = &node.value else {
        let fields = ctx.fields(node, "`load`", &LOAD_KEYS)?;
        let stream = stream(ctx, &fields, "`load`", None);
        let warmup = warmup(ctx, &fields);
        return Some(LoadSpec {
            streams: vec![stream?],
            warmup: SimTime(warmup?),
        });
    };
    if items.is_empty() {
        ctx.error_help(
            node.span,
            "`load` lists no streams",
            "give one stream as a map (`load: {arrivals: poisson(20/s), count: 1000, spawn: {agent: worker}}`) or several as a list of maps, each with its `name`",
        );
        return None;
    }
    let mut streams = Vec::new();
    let mut names: Vec<(String, usize)> = Vec::new();
    let mut warmups: Vec<(u64, crate::raw::Span)> = Vec::new();
    let mut broken = false;
    for item in items {
        let Some(fields) = ctx.fields(item, "a `load` stream", &STREAM_KEYS) else {
            broken = true;
            continue;
        };
        let name = match fields.get("name") {
            Some(value) => ctx.name(value, "a stream's `name`").and_then(|name| {
                if let Some((_, line)) = names.iter().find(|(known, _)| *known == name) {
                    ctx.error_help(
                        value.span,
                        format!("two load streams are named `{name}` (the first at line {line})"),
                        "give every stream its own name: its statistics and its arrivals' `stream` field carry it",
                    );
                    None
                } else {
                    names.push((name.clone(), value.span.line));
                    Some(name)
                }
            }),
            None => {
                ctx.error_help(
                    fields.span,
                    "a stream of the list form of `load` needs a `name`",
                    "e.g. `- {name: interactive, arrivals: poisson(5/s), count: 1000, spawn: {agent: worker}}`",
                );
                None
            }
        };
        let what = match &name {
            Some(name) => format!("load stream `{name}`"),
            None => "a `load` stream".to_string(),
        };
        let stream = stream(ctx, &fields, &what, name.as_deref());
        if let (Some(value), Some(micros)) = (fields.get("warmup"), warmup(ctx, &fields)) {
            warmups.push((micros, value.span));
        }
        match (name, stream) {
            (Some(_), Some(stream)) => streams.push(stream),
            _ => broken = true,
        }
    }
    if let Some((first, _)) = warmups.first().copied() {
        for (micros, span) in &warmups[1..] {
            if *micros != first {
                ctx.error_help(
                    *span,
                    "the streams give different `warmup`s; the load's statistics have one warm-up",
                    "write `warmup` on one stream only (it applies to the whole load), or give every stream the same",
                );
                broken = true;
            }
        }
    }
    if broken {
        return None;
    }
    Some(LoadSpec {
        streams,
        warmup: SimTime(warmups.first().map_or(0, |(micros, _)| *micros)),
    })
}

fn warmup(ctx: &mut Ctx<'_>, fields: &Fields<'_>) -> Option<u64> {
    match fields.get("warmup") {
        Some(value) => ctx.duration(value, "`warmup`"),
        None => Some(0),
    }
}

/// One stream's arrivals, stop, call and retry policy (`what` names it in messages).
fn stream(
    ctx: &mut Ctx<'_>,
    fields: &Fields<'_>,
    what: &str,
    name: Option<&str>,
) -> Option<LoadStream> {
    let example = "`load: {arrivals: poisson(20/s), count: 1000, spawn: {agent: worker}}`";
    let arrivals =
        require(ctx, fields, what, "arrivals", example).and_then(|value| arrivals(ctx, value));
    let replay = match &arrivals {
        Some(Arrivals::Times(times)) => Some(times.len() as u64),
        _ => None,
    };
    // A times file that could not be read has been reported; it needs no stop either.
    let unread_file = arrivals.is_none()
        && fields
            .get("arrivals")
            .is_some_and(|node| match &node.value {
                Value::Map(entries) => entries
                    .iter()
                    .any(|(key, _)| key.value == Value::Str("file".to_string())),
                Value::Null
                | Value::Bool(..)
                | Value::Int(..)
                | Value::Float(..)
                | Value::Str(..)
                | Value::Seq(..) => false,
            });
    let until = match (fields.get("count"), fields.get("duration")) {
        (Some(_), Some(_)) => {
            // Point at whichever of the two comes second in the file.
            let offset = |key: &str| fields.key(key).map(|node| node.span.offset);
            let second = if offset("count") < offset("duration") {
                "duration"
            } else {
                "count"
            };
            if let Some(key) = fields.key(second) {
                ctx.error_help(
                    key.span,
                    format!("{what} takes `count` or `duration`, not both"),
                    "keep one: `count` stops after that many arrivals, `duration` after that much time",
                );
            }
            None
        }
        (Some(count), None) => {
            let count = ctx.integer(count, "`count`", 1);
            match (count, replay) {
                (Some(count), Some(held)) if count > held => {
                    if let Some(node) = fields.get("count") {
                        ctx.error_help(
                            node.span,
                            format!("`count` is {count}, but the times file holds {held} arrival time(s)"),
                            "leave `count` out to replay the whole file, or give at most as many as it holds",
                        );
                    }
                    None
                }
                (count, _) => count.map(LoadUntil::Count),
            }
        }
        (None, Some(duration)) => match ctx.duration(duration, "`duration`") {
            Some(0) => {
                ctx.error(duration.span, "`duration` must be above zero");
                None
            }
            Some(micros) => Some(LoadUntil::Duration(SimTime(micros))),
            None => None,
        },
        (None, None) => match replay {
            // A replay stops when its file does.
            Some(held) => Some(LoadUntil::Count(held)),
            None if unread_file => None,
            None => {
                ctx.error_help(
                    fields.span,
                    format!("{what} needs `count` or `duration`"),
                    "e.g. `count: 1000` or `duration: 1h`",
                );
                None
            }
        },
    };
    let spawn_keys: Vec<&str> = SPAWN_KEYS
        .iter()
        .copied()
        .filter(|key| *key != "count")
        .collect();
    let spawn = require(ctx, fields, what, "spawn", example).and_then(|value| {
        spawn(
            ctx,
            value,
            "`load.spawn` (one Agent call per arrival)",
            &spawn_keys,
            false,
        )
    });
    let retry = match fields.get("retry") {
        Some(value) => retry(ctx, value),
        None => Some(Retry::None),
    };
    Some(LoadStream {
        name: name.map(Rc::from),
        arrivals: arrivals?,
        until: until?,
        spawn: spawn?,
        retry: retry?,
    })
}

/// Splits `name(argument)`.
fn call(text: &str) -> Option<(&str, &str)> {
    let (name, rest) = text.trim().split_once('(')?;
    let argument = rest.trim_end().strip_suffix(')')?;
    Some((name.trim(), argument.trim()))
}

fn arrivals(ctx: &mut Ctx<'_>, node: &Node) -> Option<Arrivals> {
    if let Value::Map(_) = node.value {
        return arrival_map(ctx, node);
    }
    let text = ctx.text(node, "`arrivals`")?;
    let parsed = match call(&text) {
        Some(("poisson", rate)) => parse_rate(rate)
            .map(Arrivals::Poisson)
            .map_err(|message| (message, RATE_FORMS)),
        Some(("every", spacing)) => match parse_duration(spacing) {
            Ok(0) => Err(("the spacing must be above zero".to_string(), DURATION_FORMS)),
            Ok(micros) => Ok(Arrivals::Every(micros)),
            Err(message) => Err((message, DURATION_FORMS)),
        },
        Some(("burst", size)) => match size.parse::<u32>() {
            Ok(size) if size > 0 => Ok(Arrivals::Burst(size)),
            _ => Err((
                format!("`{size}` is not a burst size (a whole number from 1)"),
                ARRIVALS_FORMS,
            )),
        },
        Some((other, _)) => {
            let hint = did_you_mean(other, &["poisson", "every", "burst"]);
            Err((
                format!("unknown arrival process `{other}`{hint}"),
                ARRIVALS_FORMS,
            ))
        }
        None => Err((
            format!("`{text}` is not an arrival process"),
            ARRIVALS_FORMS,
        )),
    };
    match parsed {
        Ok(arrivals) => Some(arrivals),
        Err((message, help)) => {
            ctx.error_help(node.span, format!("`arrivals`: {message}"), help);
            None
        }
    }
}

/// `{schedule: …}`, `{on_off: …}` or `{file: …}`.
fn arrival_map(ctx: &mut Ctx<'_>, node: &Node) -> Option<Arrivals> {
    let fields = ctx.fields(node, "`arrivals`", &ARRIVAL_MAPS)?;
    let written: Vec<&str> = fields.names().collect();
    match written.as_slice() {
        ["schedule"] => schedule(ctx, fields.get("schedule")?),
        ["on_off"] => on_off(ctx, fields.get("on_off")?),
        ["file"] => times_file(ctx, fields.get("file")?),
        [] => {
            ctx.error_help(node.span, "`arrivals` is an empty map", ARRIVALS_FORMS);
            None
        }
        _ => {
            ctx.error_help(
                node.span,
                format!(
                    "`arrivals` takes one of {}, not {}",
                    list_names(&ARRIVAL_MAPS),
                    list_names(&written)
                ),
                "one stream has one arrival process; for several, make `load` a list of named streams",
            );
            None
        }
    }
}

/// A rate that may be zero (a schedule's quiet phase).
fn rate_or_zero(ctx: &mut Ctx<'_>, node: &Node, what: &str) -> Option<f64> {
    let text = ctx.text(node, what)?;
    let count = text.split('/').next().unwrap_or_default().trim();
    if count.starts_with('-') {
        ctx.error_help(
            node.span,
            format!(
                "{what}: `{}` is negative; a rate is zero or more",
                text.trim()
            ),
            RATE_FORMS,
        );
        return None;
    }
    if text.contains('/') && count.parse::<f64>().is_ok_and(|value| value == 0.0) {
        return Some(0.0);
    }
    match parse_rate(&text) {
        Ok(rate) => Some(rate),
        Err(message) => {
            ctx.error_help(node.span, format!("{what}: {message}"), RATE_FORMS);
            None
        }
    }
}

fn schedule(ctx: &mut Ctx<'_>, node: &Node) -> Option<Arrivals> {
    let example =
        "e.g. `schedule: [{for: 8h, rate: 2/s}, {for: 4h, rate: 20/s}, {for: 12h, rate: 5/s}]`";
    let items = ctx.list(node, "`schedule`")?;
    if items.is_empty() {
        ctx.error_help(
            node.span,
            "an empty `schedule`: it needs at least one phase",
            example,
        );
        return None;
    }
    let mut phases = Vec::new();
    let mut broken = false;
    for item in items {
        let Some(fields) = ctx.fields(item, "a `schedule` phase", &PHASE_KEYS) else {
            broken = true;
            continue;
        };
        let length =
            require(ctx, &fields, "a `schedule` phase", "for", example).and_then(|value| match ctx
                .duration(value, "`for`")
            {
                Some(0) => {
                    ctx.error_help(value.span, "a phase's `for` must be above zero", example);
                    None
                }
                other => other,
            });
        let rate = require(ctx, &fields, "a `schedule` phase", "rate", example)
            .and_then(|value| rate_or_zero(ctx, value, "`rate`"));
        match (length, rate) {
            (Some(length), Some(rate)) => phases.push(RatePhase { length, rate }),
            _ => broken = true,
        }
    }
    if broken {
        return None;
    }
    if phases.iter().all(|phase| phase.rate == 0.0) {
        ctx.error_help(
            node.span,
            "every phase of the `schedule` has rate 0: the stream would never arrive",
            "give at least one phase a rate above zero",
        );
        return None;
    }
    Some(Arrivals::Schedule(Rc::from(phases)))
}

fn on_off(ctx: &mut Ctx<'_>, node: &Node) -> Option<Arrivals> {
    let example = "e.g. `on_off: {rate: 30/s, on: exp(10s), off: exp(50s)}`";
    let fields = ctx.fields(node, "`on_off`", &ON_OFF_KEYS)?;
    let rate = require(ctx, &fields, "`on_off`", "rate", example).and_then(|value| {
        let text = ctx.text(value, "`rate`")?;
        match parse_rate(&text) {
            Ok(rate) => Some(rate),
            Err(message) => {
                ctx.error_help(value.span, format!("`rate`: {message}"), RATE_FORMS);
                None
            }
        }
    });
    let mut period = |key: &str| {
        let value = require(ctx, &fields, "`on_off`", key, example)?;
        let dist = ctx.dist(value, &format!("`{key}`"))?;
        if dist.mean_micros() <= 0.0 {
            ctx.error_help(
                value.span,
                format!("`{key}` periods must last longer than zero on average"),
                DIST_FORMS,
            );
            return None;
        }
        Some(dist)
    };
    let on = period("on");
    let off = period("off");
    Some(Arrivals::OnOff {
        rate: rate?,
        on: on?,
        off: off?,
    })
}

/// `{file: times.csv}`: the file's times, checked.
fn times_file(ctx: &mut Ctx<'_>, node: &Node) -> Option<Arrivals> {
    let path_text = ctx.name(node, "`file`")?;
    let path = ctx.base_dir.join(&path_text);
    let text = match read_limited(&path, &ctx.confine) {
        Ok(text) => text,
        Err(message) => {
            ctx.error_help(
                node.span,
                format!("cannot read the times file `{path_text}`: {message}"),
                format!(
                    "`file:` paths are relative to the scenario file's directory ({}) and \
                     stay inside it; to read a file elsewhere, run with `--allow-path DIR`",
                    ctx.folder().display()
                ),
            );
            return None;
        }
    };
    match parse_times(&text) {
        Ok(times) => Some(Arrivals::Times(Rc::from(times))),
        Err((line, column, message)) => {
            ctx.error_help(
                node.span,
                format!("times file `{path_text}`:{line}:{column}: {message}"),
                TIMES_FORMS,
            );
            None
        }
    }
}

/// The arrival times of a times file, µs; or where and what the first problem is
/// (1-based line and column).
pub(crate) fn parse_times(text: &str) -> Result<Vec<u64>, (usize, usize, String)> {
    let mut times: Vec<u64> = Vec::new();
    let mut last_line = 0;
    let mut seen_content = false;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let content = line.split('#').next().unwrap_or_default();
        let field = content.split(',').next().unwrap_or_default();
        let trimmed = field.trim();
        let column = field.len() - field.trim_start().len() + 1;
        if trimmed.is_empty() {
            if !content.trim().is_empty() {
                return Err((number, column, "the first column is empty".to_string()));
            }
            continue;
        }
        let first = !seen_content;
        seen_content = true;
        if first
            && trimmed
                .chars()
                .all(|c| c.is_ascii_alphabetic() || c == '_' || c == ' ')
        {
            // A header line (`time`, `arrival_time` …).
            continue;
        }
        let micros = parse_duration(trimmed)
            .map_err(|message| (number, column, format!("`{trimmed}`: {message}")))?;
        if let Some(&previous) = times.last() {
            if micros < previous {
                return Err((
                    number,
                    column,
                    format!(
                        "`{trimmed}` comes before the time of line {last_line} ({}); the times \
                         must be in order (sort the file, e.g. with `sort -g`)",
                        format_args!("{}s", previous as f64 / 1e6)
                    ),
                ));
            }
        }
        times.push(micros);
        last_line = number;
    }
    if times.is_empty() {
        return Err((1, 1, "the file holds no arrival times".to_string()));
    }
    Ok(times)
}

fn retry(ctx: &mut Ctx<'_>, node: &Node) -> Option<Retry> {
    let text = ctx.text(node, "`retry`")?;
    match text.trim() {
        "none" => return Some(Retry::None),
        "after_completion" => return Some(Retry::AfterCompletion),
        "queue" => return Some(Retry::Queue),
        _ => {}
    }
    if let Some(("backoff", delay)) = call(&text) {
        return match parse_dist(delay) {
            Ok(dist) => Some(Retry::Backoff(dist)),
            Err(message) => {
                ctx.error_help(node.span, format!("`retry`: {message}"), DIST_FORMS);
                None
            }
        };
    }
    let head = text.split('(').next().unwrap_or_default().trim();
    let hint = did_you_mean(head, &RETRIES);
    ctx.error_help(
        node.span,
        format!("unknown retry `{text}`{hint}"),
        "retry is `none`, `after_completion`, `queue` or `backoff(DIST)`, e.g. `backoff(exp(1s))`",
    );
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_files_read_seconds_units_headers_and_csv_columns() {
        assert_eq!(
            parse_times("time\n0\n0.5\n# a comment\n\n1s, user-7\n250ms\n"),
            Err((
                7,
                1,
                "`250ms` comes before the time of line 6 (1s); the times must be in order \
                 (sort the file, e.g. with `sort -g`)"
                    .to_string()
            ))
        );
        assert_eq!(
            parse_times("at\n0\n0.5\n1s, user-7\n1s\n2m # late\n"),
            Ok(vec![0, 500_000, 1_000_000, 1_000_000, 120_000_000])
        );
    }

    #[test]
    fn bad_times_files_say_where() {
        let error = parse_times("0\n1\nabc\n").unwrap_err();
        assert_eq!((error.0, error.1), (3, 1));
        assert!(error.2.contains("`abc`"), "{}", error.2);
        let error = parse_times("0\n  -2\n").unwrap_err();
        assert_eq!((error.0, error.1), (2, 3));
        assert!(error.2.contains("negative"), "{}", error.2);
        assert_eq!(
            parse_times("# nothing\n\n").unwrap_err().2,
            "the file holds no arrival times"
        );
        assert_eq!(parse_times("time\n").unwrap_err().0, 1);
        assert_eq!(
            parse_times(" ,5\n").unwrap_err().2,
            "the first column is empty"
        );
    }
}
