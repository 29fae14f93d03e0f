//! What set the session's end: the chain of decisions and waits behind its last decision,
//! the critical path through the run's tree, latest first.
//!
//! From the last decision the walk goes back through whatever the agent it is about was
//! doing: waiting for its children (to the child that finished last), for a shell (to the
//! shell's start), on a prompt (to the prompt), for a foreground subagent's result (to that
//! subagent), running its own steps (to what started them: its launch, a resume, the end of
//! a wait). It stops at main's own steps, at a load arrival, or at a run not kept.

use std::collections::BTreeSet;

use super::{Link, RunModel, State};
use crate::event::{id_string, AgentId, MAIN};
use crate::time::human_duration;

/// The most links a chain has: a deeper chain ends with "…".
const MAX_LINKS: usize = 64;

/// `µs` as a person reads it: `0s`, `1.5s`, `1m30s`.
pub fn when(micros: u64) -> String {
    if micros == 0 {
        "0s".to_string()
    } else {
        human_duration(micros)
    }
}

fn label(model: &RunModel, id: AgentId) -> String {
    model
        .run(id)
        .map_or_else(|| id_string(id), |run| run.label.clone())
}

/// The chain that set `model`'s end, latest first.
pub fn chain(model: &RunModel) -> Vec<Link> {
    let mut links = Vec::new();
    let end = &model.end;
    let at = end.at;
    let push = |links: &mut Vec<Link>, agent: String, from, to, text: String, rule| {
        links.push(Link {
            from,
            to,
            agent,
            text,
            rule,
        })
    };
    if let Some(limit) = end.limit {
        push(
            &mut links,
            "session".into(),
            at,
            at,
            format!("a safety limit ({limit}) stopped the run at {}", when(at)),
            end.rule,
        );
        return links;
    }
    let start = match (end.agent, end.from) {
        (Some(to), Some((from, "bash_done"))) => {
            push(
                &mut links,
                label(model, to),
                at,
                at,
                format!(
                    "{}'s background shell ended then and {} heard of it",
                    label(model, from),
                    label(model, to)
                ),
                end.rule,
            );
            let shell = model
                .run(from)
                .and_then(|run| run.shells.iter().copied().rfind(|s| *s <= at));
            match shell {
                Some(started) => {
                    push(
                        &mut links,
                        label(model, from),
                        started,
                        at,
                        format!(
                            "the shell ran {} in the background, from {}",
                            human_duration(at - started),
                            when(started)
                        ),
                        None,
                    );
                    Some((from, started))
                }
                None => None,
            }
        }
        (Some(to), Some((from, notice))) => {
            push(
                &mut links,
                label(model, to),
                at,
                at,
                format!(
                    "{} heard {}'s {} then",
                    label(model, to),
                    label(model, from),
                    notice.replace('_', " ")
                ),
                end.rule,
            );
            if matches!(
                notice,
                "result" | "completion" | "failed" | "stopped" | "team_message"
            ) {
                Some((from, at))
            } else {
                Some((to, at))
            }
        }
        (Some(agent), None) => {
            push(
                &mut links,
                label(model, agent),
                at,
                at,
                format!(
                    "the last decision was {}'s {} then",
                    label(model, agent),
                    end.kind.replace('_', " ")
                ),
                end.rule,
            );
            Some((agent, at))
        }
        (None, _) => {
            push(
                &mut links,
                "session".into(),
                at,
                at,
                format!(
                    "the last decision was a {} then",
                    end.kind.replace('_', " ")
                ),
                end.rule,
            );
            None
        }
    };
    if let Some((agent, t)) = start {
        walk(model, agent, t, &mut links);
    }
    links
}

/// Appends the links behind agent `agent` being where it was at `t`.
fn walk(model: &RunModel, mut agent: AgentId, mut t: u64, links: &mut Vec<Link>) {
    let mut seen = BTreeSet::new();
    while links.len() < MAX_LINKS {
        let Some(run) = model.run(agent) else {
            links.push(Link {
                from: t,
                to: t,
                agent: id_string(agent),
                text: format!(
                    "{} is past the views' row budget, so the chain stops here",
                    id_string(agent)
                ),
                rule: None,
            });
            return;
        };
        let name = &run.label;
        let Some(index) = run
            .spans
            .iter()
            .rposition(|span| span.from < t)
            .or_else(|| run.spans.iter().position(|span| span.from <= t))
        else {
            return;
        };
        if !seen.insert((agent, t, index)) {
            return;
        }
        let span = &run.spans[index];
        let mut link = |from: u64, to: u64, text: String, rule| {
            links.push(Link {
                from,
                to,
                agent: name.clone(),
                text,
                rule,
            })
        };
        match span.state {
            State::Children => {
                let last = model
                    .runs
                    .iter()
                    .filter(|child| child.parent == agent && child.id != agent)
                    .filter_map(|child| child.finished.map(|at| (at, child.id)))
                    .filter(|(at, _)| *at >= span.from && *at <= t)
                    .max_by_key(|(at, _)| *at);
                match last {
                    Some((finished, child)) => {
                        link(
                            span.from,
                            t,
                            format!(
                                "{name} had waited for its children since {}, its steps done, \
                                 and the last of them, {}, finished at {}",
                                when(span.from),
                                label(model, child),
                                when(finished)
                            ),
                            span.rule,
                        );
                        agent = child;
                        t = finished;
                    }
                    None => {
                        link(
                            span.from,
                            t,
                            format!("{name} waited for its children from {}", when(span.from)),
                            span.rule,
                        );
                        return;
                    }
                }
            }
            State::Shell => {
                let started = run.shells.iter().copied().rfind(|s| *s <= span.from);
                link(
                    span.from,
                    t,
                    match started {
                        Some(s) => format!(
                            "{name} waited for its background shell (started at {}) from {} to {}",
                            when(s),
                            when(span.from),
                            when(t)
                        ),
                        None => format!(
                            "{name} waited for its background shell from {} to {}",
                            when(span.from),
                            when(t)
                        ),
                    },
                    span.rule,
                );
                t = started.unwrap_or(span.from);
            }
            State::Prompt => {
                link(
                    span.from,
                    t,
                    format!(
                        "{name} waited {} on a permission prompt, from {} until it was answered",
                        human_duration(t - span.from),
                        when(span.from)
                    ),
                    span.rule,
                );
                t = span.from;
            }
            State::Queued => {
                let arrival = run
                    .arrival
                    .map_or_else(String::new, |n| format!(" (arrival {n})"));
                link(
                    span.from,
                    span.to,
                    format!(
                        "{name}{arrival} asked at {} and was rejected and retried until it \
                         started at {}",
                        when(span.from),
                        when(span.to)
                    ),
                    span.rule,
                );
                return;
            }
            State::Running | State::Backgrounded => {
                let heard = run
                    .heard
                    .iter()
                    .rfind(|(at, _, what, _)| *what == "result" && *at > span.from && *at <= t)
                    .copied();
                if let Some((at, child, _, rule)) = heard {
                    if at < t {
                        link(
                            at,
                            t,
                            format!("{name} ran its own steps for {}", human_duration(t - at)),
                            None,
                        );
                    }
                    link(
                        at,
                        at,
                        format!(
                            "{name} had waited for its foreground subagent {}, whose result \
                             came at {}",
                            label(model, child),
                            when(at)
                        ),
                        rule,
                    );
                    agent = child;
                    t = at;
                    continue;
                }
                if span.from < t {
                    link(
                        span.from,
                        t,
                        format!(
                            "{name} ran its own steps for {}, from {}",
                            human_duration(t - span.from),
                            when(span.from)
                        ),
                        None,
                    );
                }
                if let Some((_, by, rule)) = run.resumes.iter().find(|(at, _, _)| *at == span.from)
                {
                    link(
                        span.from,
                        span.from,
                        format!(
                            "{name} was resumed by {} at {}",
                            label(model, *by),
                            when(span.from)
                        ),
                        *rule,
                    );
                    agent = *by;
                    t = span.from;
                } else if index > 0 && run.spans[index - 1].state != State::Queued {
                    t = span.from;
                } else if agent == MAIN {
                    if span.from == 0 && t > 0 && links.last().is_some_and(|l| l.agent != "main") {
                        links.push(Link {
                            from: 0,
                            to: t,
                            agent: "main".into(),
                            text: format!("main's own steps ran until {}", when(t)),
                            rule: None,
                        });
                    }
                    return;
                } else {
                    let (started, rule, _) = run.started;
                    link(
                        started,
                        started,
                        format!(
                            "{name} was launched by {} at {}, in the {}",
                            label(model, run.parent),
                            when(started),
                            run.mode
                        ),
                        rule,
                    );
                    if let Some(queued) = index.checked_sub(1).map(|i| &run.spans[i]) {
                        let arrival = run
                            .arrival
                            .map_or_else(String::new, |n| format!(" (arrival {n})"));
                        links.push(Link {
                            from: queued.from,
                            to: queued.to,
                            agent: name.clone(),
                            text: format!(
                                "{name}{arrival} had asked at {} and was rejected and retried \
                                 until then",
                                when(queued.from)
                            ),
                            rule: queued.rule,
                        });
                        return;
                    }
                    agent = run.parent;
                    t = started;
                }
            }
        }
    }
    links.push(Link {
        from: t,
        to: t,
        agent: label(model, agent),
        text: "…".into(),
        rule: None,
    });
}

/// "it ended at 56s because …": the chain in one sentence.
/// The first `upto` links, and a pointer to the rest.
pub fn because(model: &RunModel, upto: usize) -> String {
    let mut text = format!("It ended at {} because ", when(model.end.at));
    let mut parts: Vec<String> = model
        .chain
        .iter()
        .take(upto)
        .map(|link| match link.rule {
            Some(rule) => format!("{} ({rule})", link.text),
            None => link.text.clone(),
        })
        .collect();
    if upto < model.chain.len() {
        parts
            .push("… (`subsim explain --end` with the scenario gives the whole chain)".to_string());
    }
    if parts.is_empty() {
        text = format!(
            "It ended at {}: nothing happened after the start",
            when(model.end.at)
        );
    } else {
        text.push_str(&parts.join("; "));
    }
    text.push('.');
    text
}
