//! Hooks, in either of the two shapes a scenario or a definition may use → [`HookSpec`]s.
//!
//! - the scenario's own list: `[{event: SubagentStart, matcher: db-agent, command: ./log.sh}]`;
//! - the documented settings / frontmatter map (HOOK-1, HOOK-4):
//!   `{PreToolUse: [{matcher: Bash, hooks: [{type: command, command: ./check.sh}]}]}`.
//!
//! Both flatten to one [`HookSpec`] per command. Commands are recorded, never run. Not for
//! deciding when a hook fires (HOOK-2/3/5/6): that is the engine's business.

use subsim_engine::spec::HookSpec;
use subsim_rules::hooks::{match_agent_type, MatcherKind};
use subsim_rules::Gates;

use crate::check::require;
use crate::check::Ctx;
use crate::diagnostic::did_you_mean;
use crate::raw::{Node, Value};

/// The events the simulator fires (HOOK-1, HOOK-5). Other names are kept with a warning.
pub(crate) const FIRED_EVENTS: [&str; 5] = [
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "PreToolUse",
    "PostToolUse",
];
/// Other hook events of Claude Code: kept without a warning, though they never fire here.
const OTHER_EVENTS: [&str; 6] = [
    "UserPromptSubmit",
    "Notification",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
    "PostToolUseFailure",
];
/// Keys of one entry of the list shape.
const LIST_KEYS: [&str; 4] = ["event", "matcher", "command", "exit_code"];
/// Keys of one matcher group of the map shape.
const GROUP_KEYS: [&str; 2] = ["matcher", "hooks"];
/// Keys of one hook of the map shape (`timeout` is accepted and ignored).
const HOOK_KEYS: [&str; 4] = ["type", "command", "timeout", "exit_code"];
const LIST_EXAMPLE: &str = "`[{event: SubagentStart, matcher: db-agent, command: ./log.sh}]`";
const MAP_EXAMPLE: &str =
    "`{PreToolUse: [{matcher: Bash, hooks: [{type: command, command: ./check.sh}]}]}`";

/// Reads hooks in either shape; `what` names the value in messages (`` `hooks` ``).
pub(crate) fn hooks(ctx: &mut Ctx<'_>, node: &Node, what: &str) -> Vec<HookSpec> {
    match &node.value {
        Value::Null => Vec::new(),
        Value::Seq(items) => items
            .iter()
            .filter_map(|item| list_entry(ctx, item, what))
            .collect(),
        Value::Map(entries) => {
            let mut found = Vec::new();
            let mut seen: Vec<&str> = Vec::new();
            for (key, groups) in entries {
                let Some(event) = ctx.key_name(key) else {
                    continue;
                };
                if seen.contains(&event) {
                    ctx.error(key.span, format!("duplicate hook event `{event}`"));
                    continue;
                }
                seen.push(event);
                check_event(ctx, key, event);
                found.extend(event_groups(ctx, event, groups));
            }
            found
        }
        Value::Bool(..) | Value::Int(..) | Value::Float(..) | Value::Str(..) => {
            ctx.error_help(
                node.span,
                format!("{what} must be a list or a map, found {}", node.describe()),
                format!("e.g. {LIST_EXAMPLE} or the settings shape {MAP_EXAMPLE}"),
            );
            Vec::new()
        }
    }
}

/// A hook event the simulator never fires is kept, with a warning when it looks like a typo.
fn check_event(ctx: &mut Ctx<'_>, at: &Node, event: &str) {
    if FIRED_EVENTS.contains(&event) || OTHER_EVENTS.contains(&event) {
        return;
    }
    let hint = did_you_mean(event, &FIRED_EVENTS);
    ctx.warn(
        at.span,
        format!("`{event}` is not a hook event the simulator fires{hint}"),
        Some(format!(
            "the hook is kept but never fires; events that fire are {}",
            crate::diagnostic::list_names(&FIRED_EVENTS)
        )),
    );
}

fn list_entry(ctx: &mut Ctx<'_>, node: &Node, what: &str) -> Option<HookSpec> {
    let fields = ctx.fields(node, &format!("an entry of {what}"), &LIST_KEYS)?;
    let event_node = require(ctx, &fields, "a hook", "event", LIST_EXAMPLE);
    let event = event_node.and_then(|value| ctx.name(value, "`event`"));
    if let (Some(event), Some(node)) = (&event, event_node) {
        check_event(ctx, node, event);
    }
    let matcher = fields.get("matcher").and_then(|value| matcher(ctx, value));
    if let (Some(event), Some(text), Some(node)) = (&event, &matcher, fields.get("matcher")) {
        check_tool_matcher(ctx, event, text, node);
    }
    let command = require(ctx, &fields, "a hook", "command", LIST_EXAMPLE)
        .and_then(|value| ctx.name(value, "`command`"));
    let exit_code = fields
        .get("exit_code")
        .and_then(|value| ctx.integer_u32(value, "`exit_code`", 0));
    Some(HookSpec {
        event: event?,
        matcher,
        command: command?,
        exit_code,
    })
}

/// An empty matcher (or `~`) matches everything, like an omitted one (HOOK-2).
fn matcher(ctx: &mut Ctx<'_>, node: &Node) -> Option<String> {
    if node.value == Value::Null {
        return None;
    }
    let text = ctx
        .text(node, "`matcher`")
        .filter(|text| !text.trim().is_empty())?;
    // HOOK-2: a matcher that is not a plain name is a regex. One the regex subset cannot
    // read would be searched for as literal text and never fire: say so here.
    let gates = Gates::for_version(ctx.version);
    if match_agent_type(Some(&text), "", &gates).kind == MatcherKind::Literal {
        ctx.error_help(
            node.span,
            format!(
                "matcher `{}` is not a regex the hook matcher can read, so it would never fire \
                 (HOOK-2)",
                text.escape_debug()
            ),
            r"look for an unclosed `(` or `[`, a stray `)`, a quantifier with nothing to repeat (`*a`, `a**`), a reversed range (`[z-a]`) or a trailing `\`; escape a literal character with `\` (`\(`); a plain name such as `db-agent` or `reviewer|tester` matches exactly",
        );
        return None;
    }
    Some(text)
}

/// The tool events, whose matcher is a tool name (HOOK-1).
const TOOL_EVENTS: [&str; 3] = ["PreToolUse", "PostToolUse", "PostToolUseFailure"];

/// A tool event's plain-name matcher (`Bash`, `Edit|Write`) whose every name is a tool no
/// one in the session can call never fires: a warning at the matcher, with the nearest
/// known name for each. Regex matchers and MCP names are not judged (an MCP server's
/// tools may come from a definition's inline server). A matcher with at least one known
/// name fires for that one, so only the unknown names are reported.
fn check_tool_matcher(ctx: &mut Ctx<'_>, event: &str, text: &str, node: &Node) {
    if !TOOL_EVENTS.contains(&event) {
        return;
    }
    let gates = Gates::for_version(ctx.version);
    if match_agent_type(Some(text), "", &gates).kind != MatcherKind::Exact {
        return;
    }
    let names: Vec<&str> = text.split('|').map(str::trim).collect();
    let unknown: Vec<(&str, String)> = names
        .iter()
        .filter_map(|name| ctx.unknown_tool(name).map(|hint| (*name, hint)))
        .collect();
    if unknown.is_empty() {
        return;
    }
    let never = unknown.len() == names.len();
    for (name, hint) in unknown {
        let consequence = if never {
            "the hook never fires: its matcher names no tool the session can call".to_string()
        } else {
            format!("`{name}` never matches; the hook still fires for the other names")
        };
        ctx.warn(
            node.span,
            format!(
                "`{event}` matcher names `{name}`, which is not a tool the session can call{hint}"
            ),
            Some(consequence),
        );
    }
}

fn event_groups(ctx: &mut Ctx<'_>, event: &str, node: &Node) -> Vec<HookSpec> {
    let mut found = Vec::new();
    let Some(groups) = ctx.list(node, &format!("the `{event}` hooks")) else {
        return found;
    };
    for group in groups {
        let Some(fields) = ctx.fields(group, "a matcher group", &GROUP_KEYS) else {
            continue;
        };
        let matcher = fields.get("matcher").and_then(|value| matcher(ctx, value));
        if let (Some(text), Some(node)) = (&matcher, fields.get("matcher")) {
            check_tool_matcher(ctx, event, text, node);
        }
        let Some(list) = require(ctx, &fields, "a matcher group", "hooks", MAP_EXAMPLE) else {
            continue;
        };
        let Some(items) = ctx.list(list, "`hooks`") else {
            continue;
        };
        for item in items {
            let Some(hook) = ctx.fields(item, "a hook", &HOOK_KEYS) else {
                continue;
            };
            if let Some(kind) = hook.get("type").and_then(|value| ctx.text(value, "`type`")) {
                if kind != "command" {
                    // Only command hooks are documented for subagents; others are kept out.
                    ctx.warn(
                        hook.span,
                        format!(
                            "{} `{kind}` hook is not simulated and is left out",
                            crate::diagnostic::article(&kind)
                        ),
                        Some("subsim records `type: command` hooks".to_string()),
                    );
                    continue;
                }
            }
            if let Some(timeout) = hook.get("timeout") {
                ctx.number(timeout, "`timeout`");
            }
            let command = require(ctx, &hook, "a hook", "command", MAP_EXAMPLE)
                .and_then(|value| ctx.name(value, "`command`"));
            let exit_code = hook
                .get("exit_code")
                .and_then(|value| ctx.integer_u32(value, "`exit_code`", 0));
            if let Some(command) = command {
                found.push(HookSpec {
                    event: event.to_string(),
                    matcher: matcher.clone(),
                    command,
                    exit_code,
                });
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::raw::parse;

    fn check(yaml: &str) -> (Vec<HookSpec>, Vec<String>, Vec<String>) {
        let node = parse(yaml).unwrap_or_else(|error| panic!("{yaml}: {error:?}"));
        let mut ctx = Ctx::new("h.yaml", Path::new("."));
        let found = hooks(&mut ctx, &node, "`hooks`");
        let errors = ctx.errors.iter().map(ToString::to_string).collect();
        let warnings = ctx.warnings.iter().map(ToString::to_string).collect();
        (found, errors, warnings)
    }

    fn hook(event: &str, matcher: Option<&str>, command: &str) -> HookSpec {
        HookSpec {
            event: event.into(),
            matcher: matcher.map(str::to_string),
            command: command.into(),
            exit_code: None,
        }
    }

    #[test]
    fn both_shapes_flatten_to_one_spec_per_command() {
        let (list, errors, _) = check(
            "- {event: SubagentStart, matcher: db-agent, command: ./a.sh}\n- {event: Stop, command: ./b.sh}\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            list,
            vec![
                hook("SubagentStart", Some("db-agent"), "./a.sh"),
                hook("Stop", None, "./b.sh")
            ]
        );
        let (map, errors, warnings) = check(
            "PreToolUse:\n  - matcher: Bash\n    hooks:\n      - {type: command, command: ./v.sh, timeout: 30}\n      - {type: command, command: ./w.sh}\nStop:\n  - hooks: [{type: command, command: ./s.sh}]\n",
        );
        assert!(
            errors.is_empty() && warnings.is_empty(),
            "{errors:?} {warnings:?}"
        );
        assert_eq!(
            map,
            vec![
                hook("PreToolUse", Some("Bash"), "./v.sh"),
                hook("PreToolUse", Some("Bash"), "./w.sh"),
                hook("Stop", None, "./s.sh"),
            ]
        );
    }

    #[test]
    fn hook_problems() {
        let (_, errors, _) = check("- {event: Stop, comand: x}\n");
        assert!(
            errors.iter().any(|e| e.contains("did you mean `command`?")),
            "{errors:?}"
        );
        let (_, _, warnings) = check("- {event: SubagentStrat, command: x}\n");
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("did you mean `SubagentStart`?")),
            "{warnings:?}"
        );
        let (found, _, warnings) = check("Stop: [{hooks: [{type: prompt, command: x}]}]\n");
        assert!(found.is_empty() && warnings[0].contains("not simulated"));
        let (_, errors, _) = check("42\n");
        assert!(errors[0].contains("must be a list or a map"), "{errors:?}");
    }
}
