//! The step language of `main`, `behavior` and `repeat.steps`: one-key maps (or bare
//! strings) → [`Step`]s.
//!
//! Names that are bound at run time (`send.to`, `stop`, `wait.for`, `ask_progress`) are
//! only checked to be non-empty; agent *types* named by `spawn` are collected into
//! [`Ctx::agent_refs`] and checked once every definition is known.

use std::rc::Rc;

use subsim_engine::spec::{
    ApiError, FailSpec, Program, SendSpec, SpawnSpec, Step, ToolCall, WaitTarget,
};

use crate::check::{require, AgentRef, Ctx};
use crate::classifier::classifier;
use crate::diagnostic::{did_you_mean, list_names};
use crate::raw::{Node, Value};
use subsim_rules::isolation::{Cwd, Git};

/// Every step name, in the contract's order.
pub(crate) const STEP_NAMES: [&str; 12] = [
    "work",
    "tool",
    "spawn",
    "fork",
    "send",
    "stop",
    "wait",
    "bash_background",
    "report",
    "fail",
    "ask_progress",
    "repeat",
];

/// Keys of a `spawn` step.
pub(crate) const SPAWN_KEYS: [&str; 11] = [
    "agent",
    "name",
    "count",
    "background",
    "needs_result",
    "model",
    "effort",
    "isolation",
    "behavior",
    "prompt",
    "classifier",
];
/// Keys of a `fork` step.
const FORK_KEYS: [&str; 10] = [
    "name",
    "count",
    "background",
    "needs_result",
    "model",
    "effort",
    "isolation",
    "behavior",
    "prompt",
    "classifier",
];
const TOOL_KEYS: [&str; 6] = ["name", "input", "prompt", "duration", "cwd", "git"];
const SEND_KEYS: [&str; 3] = ["to", "message", "behavior"];
const WAIT_KEYS: [&str; 1] = ["for"];
const FAIL_KEYS: [&str; 5] = [
    "api_error",
    "after_output",
    "mid_stream",
    "recovers_after",
    "tool_calls",
];
const REPEAT_KEYS: [&str; 2] = ["times", "steps"];
const API_ERRORS: [&str; 4] = ["rate_limit", "overloaded", "server", "model_unavailable"];
/// The documented `isolation` values.
pub(crate) const ISOLATIONS: [&str; 1] = ["worktree"];

/// Which script a step list belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Script {
    /// The main conversation (`main`).
    Main,
    /// A subagent run (`behavior`, subtasks, resumed runs).
    Behavior,
}

/// An example of each step, for help texts.
fn example(step: &str) -> &'static str {
    match step {
        "work" => "`work: 10s`",
        "tool" => "`tool: Bash` or `tool: {name: Bash, input: \"git push\"}`",
        "spawn" => "`spawn: {agent: Explore, count: 3}`",
        "fork" => "`fork: {name: side-quest}`",
        "send" => "`send: {to: researcher-1, message: \"go on\"}`",
        "stop" => "`stop: researcher-1`",
        "wait" => "`wait: 5s` or `wait: {for: children}`",
        "bash_background" => "`bash_background: 2m`",
        "report" => "`report: \"all done\"`",
        "fail" => "`fail: {api_error: rate_limit}`",
        "ask_progress" => "`ask_progress: researcher-1`",
        "repeat" => "`repeat: {times: 3, steps: [{work: 5s}]}`",
        _ => "`work: 10s`",
    }
}

/// Reads a list of steps. Invalid steps are reported and left out.
pub(crate) fn steps(ctx: &mut Ctx<'_>, node: &Node, what: &str, script: Script) -> Program {
    if node.value == Value::Null {
        return Rc::from(Vec::new());
    }
    let Some(items) = ctx.list(node, what) else {
        return Rc::from(Vec::new());
    };
    let parsed: Vec<Step> = items
        .iter()
        .filter_map(|item| step(ctx, item, script))
        .collect();
    Rc::from(parsed)
}

fn step(ctx: &mut Ctx<'_>, node: &Node, script: Script) -> Option<Step> {
    match &node.value {
        Value::Str(name) => bare_step(ctx, node, name),
        Value::Map(entries) => {
            let Some((key, value)) = entries.first() else {
                ctx.error_help(
                    node.span,
                    "empty step",
                    format!("a step is one of {}", list_names(&STEP_NAMES)),
                );
                return None;
            };
            let name = ctx.key_name(key)?;
            if !STEP_NAMES.contains(&name) {
                unknown_step(ctx, key, name);
                return None;
            }
            for (extra, _) in &entries[1..] {
                extra_key(ctx, name, extra);
            }
            step_body(ctx, name, key, value, script)
        }
        Value::Null | Value::Bool(..) | Value::Int(..) | Value::Float(..) | Value::Seq(..) => {
            ctx.error_help(
                node.span,
                format!(
                    "a step is a one-key map such as `work: 10s`, found {}",
                    node.describe()
                ),
                format!("steps are {}", list_names(&STEP_NAMES)),
            );
            None
        }
    }
}

fn unknown_step(ctx: &mut Ctx<'_>, at: &Node, name: &str) {
    let hint = did_you_mean(name, &STEP_NAMES);
    ctx.error_help(
        at.span,
        format!("unknown step `{name}`{hint}"),
        format!("steps are {}", list_names(&STEP_NAMES)),
    );
}

/// A second key in a step map: usually a mis-indented key of the step, or a step that
/// should have been its own list item.
fn extra_key(ctx: &mut Ctx<'_>, step: &str, key: &Node) {
    let Some(name) = ctx.key_name(key) else {
        return;
    };
    let step_keys: &[&str] = match step {
        "spawn" => &SPAWN_KEYS,
        "fork" => &FORK_KEYS,
        "tool" => &TOOL_KEYS,
        "send" => &SEND_KEYS,
        "wait" => &WAIT_KEYS,
        "fail" => &FAIL_KEYS,
        "repeat" => &REPEAT_KEYS,
        _ => &[],
    };
    let help = if name.ends_with(')') {
        "inside `{...}` a comma ends the value: quote a distribution with two arguments, e.g. `{work: \"uniform(1s, 5s)\"}`".to_string()
    } else if step_keys.contains(&name) {
        format!("`{name}` belongs to `{step}`: indent it under `{step}:` (or write `{step}: {{{name}: …}}`)")
    } else if STEP_NAMES.contains(&name) {
        format!("start a new list item for another step: `- {name}: …`")
    } else {
        format!(
            "a step is a map with one key, the step name, e.g. {}",
            example(step)
        )
    };
    ctx.error_help(
        key.span,
        format!(
            "unexpected key `{name}` in {} `{step}` step",
            crate::diagnostic::article(step)
        ),
        help,
    );
}

fn bare_step(ctx: &mut Ctx<'_>, node: &Node, name: &str) -> Option<Step> {
    match name {
        // The argument-less forms: an Agent call with no parameters.
        "spawn" => Some(Step::Spawn(SpawnSpec {
            count: 1,
            ..SpawnSpec::default()
        })),
        "fork" => Some(Step::Spawn(SpawnSpec {
            count: 1,
            fork: true,
            ..SpawnSpec::default()
        })),
        _ if STEP_NAMES.contains(&name) => {
            ctx.error_help(
                node.span,
                format!("step `{name}` needs a value"),
                format!("e.g. {}", example(name)),
            );
            None
        }
        _ => {
            unknown_step(ctx, node, name);
            None
        }
    }
}

fn step_body(
    ctx: &mut Ctx<'_>,
    name: &str,
    key: &Node,
    value: &Node,
    script: Script,
) -> Option<Step> {
    match name {
        "work" => ctx.dist(value, "`work`").map(Step::Work),
        "tool" => tool(ctx, value).map(Step::Tool),
        "spawn" => match &value.value {
            Value::Seq(items) => spawn_together(ctx, value, items),
            Value::Null
            | Value::Bool(..)
            | Value::Int(..)
            | Value::Float(..)
            | Value::Str(..)
            | Value::Map(..) => spawn(ctx, value, "`spawn`", &SPAWN_KEYS, false).map(Step::Spawn),
        },
        "fork" => spawn(ctx, value, "`fork`", &FORK_KEYS, true).map(Step::Spawn),
        "send" => send(ctx, value).map(Step::Send),
        "stop" => run_ref(ctx, value, "`stop`", &[]).map(Step::Stop),
        "wait" => wait(ctx, value),
        "bash_background" => ctx
            .dist(value, "`bash_background`")
            .map(Step::BashBackground),
        "report" => ctx
            .text(value, "`report`")
            .map(|text| Step::Report(Rc::from(text))),
        "fail" => {
            let spec = fail(ctx, value);
            if script == Script::Main {
                ctx.error_help(
                    key.span,
                    "`fail` is only allowed in a subagent's `behavior`",
                    "it simulates an API error that ends a subagent's run (ERR); the main conversation's own errors are not simulated",
                );
                return None;
            }
            spec.map(Step::Fail)
        }
        "ask_progress" => {
            let target = ctx.name(value, "`ask_progress`");
            if script == Script::Behavior {
                ctx.error_help(
                    key.span,
                    "`ask_progress` is only allowed in `main`",
                    "it is the person at the terminal asking how an agent is doing; subagents cannot",
                );
                return None;
            }
            target.map(Step::AskProgress)
        }
        "repeat" => repeat(ctx, value, script),
        _ => {
            unknown_step(ctx, key, name);
            None
        }
    }
}

fn tool(ctx: &mut Ctx<'_>, node: &Node) -> Option<ToolCall> {
    if let Value::Str(_) | Value::Int(_) = node.value {
        return ctx.name(node, "`tool`").map(|name| ToolCall {
            name: Rc::from(name),
            ..ToolCall::default()
        });
    }
    let fields = ctx.fields(node, "`tool`", &TOOL_KEYS)?;
    let name = require(ctx, &fields, "`tool`", "name", example("tool"))
        .and_then(|value| ctx.name(value, "tool `name`"));
    let input = fields
        .get("input")
        .and_then(|value| ctx.text(value, "tool `input`"));
    let prompt = fields
        .get("prompt")
        .and_then(|value| ctx.boolean(value, "tool `prompt`"));
    let duration = fields
        .get("duration")
        .and_then(|value| ctx.dist(value, "tool `duration`"));
    // ISO-2…4: where the command's working directory resolves and what its text does to
    // git, read in an isolated run only.
    let cwd = match fields.get("cwd") {
        Some(value) => {
            let names = Cwd::ALL.map(Cwd::as_str);
            let chosen = ctx.choice(value, "tool `cwd`", &names)?;
            Cwd::ALL.into_iter().find(|cwd| cwd.as_str() == chosen)?
        }
        None => Cwd::default(),
    };
    let git = match fields.get("git") {
        Some(value) => {
            let names = Git::ALL.map(Git::as_str);
            let chosen = ctx.choice(value, "tool `git`", &names)?;
            Git::ALL.into_iter().find(|git| git.as_str() == chosen)?
        }
        None => Git::default(),
    };
    Some(ToolCall {
        name: Rc::from(name?),
        input: input.map(Rc::from),
        prompt,
        duration,
        cwd,
        git,
    })
}

/// Reads the map of a `spawn` or `fork` step (or `load.spawn`, with fewer `keys`).
pub(crate) fn spawn(
    ctx: &mut Ctx<'_>,
    node: &Node,
    what: &str,
    keys: &[&str],
    fork: bool,
) -> Option<SpawnSpec> {
    let fields = ctx.fields(node, what, keys)?;
    let mut spec = SpawnSpec {
        count: 1,
        fork,
        ..SpawnSpec::default()
    };
    let mut ok = true;
    if let Some(value) = fields.get("agent") {
        match ctx.name(value, "`agent`") {
            // `agent: fork` is the fork type: the same call as a `fork` step.
            Some(agent) if agent == "fork" => spec.fork = true,
            Some(agent) => {
                ctx.agent_refs.push(AgentRef {
                    name: agent.clone(),
                    span: value.span,
                });
                spec.agent = Some(agent);
            }
            None => ok = false,
        }
    }
    if let Some(value) = fields.get("name") {
        spec.name = ctx.run_name(value, "`name`");
        if let Some(name) = &spec.name {
            ctx.run_names.push(name.clone());
        }
        ok &= spec.name.is_some();
    }
    if let Some(value) = fields.get("count") {
        match ctx.integer_u32(value, "`count`", 1) {
            Some(count) => spec.count = count,
            None => ok = false,
        }
    }
    if let Some(value) = fields.get("background") {
        spec.background = ctx.boolean(value, "`background`");
        ok &= spec.background.is_some();
    }
    if let Some(value) = fields.get("needs_result") {
        match ctx.boolean(value, "`needs_result`") {
            Some(flag) => spec.needs_result = flag,
            None => ok = false,
        }
    }
    if let Some(value) = fields.get("model") {
        spec.model = ctx.name(value, "`model`");
        ok &= spec.model.is_some();
    }
    if let Some(value) = fields.get("effort") {
        spec.effort = ctx.name(value, "`effort`");
        ok &= spec.effort.is_some();
    }
    if let Some(value) = fields.get("isolation") {
        spec.isolation = ctx
            .choice(value, "isolation", &ISOLATIONS)
            .map(str::to_string);
        ok &= spec.isolation.is_some();
    }
    if let Some(value) = fields.get("behavior") {
        spec.behavior = Some(steps(ctx, value, "`behavior`", Script::Behavior));
    }
    if let Some(value) = fields.get("prompt") {
        spec.prompt = ctx.text(value, "`prompt`");
        ok &= spec.prompt.is_some();
    }
    if let Some(value) = fields.get("classifier") {
        let base = ctx.session_classifier;
        spec.classifier = classifier(ctx, value, base);
        ok &= spec.classifier.is_some();
    }
    ok.then_some(spec)
}

/// `spawn: [{...}, {...}]`: several different Agent calls issued in one response (each
/// item is a `spawn` map; `agent: fork` makes an item a fork).
fn spawn_together(ctx: &mut Ctx<'_>, node: &Node, items: &[Node]) -> Option<Step> {
    if items.is_empty() {
        ctx.error_help(
            node.span,
            "`spawn` with a list needs at least one call",
            "e.g. `spawn: [{agent: Explore, name: scout}, {agent: Plan, name: planner}]`",
        );
        return None;
    }
    let mut calls = Vec::with_capacity(items.len());
    let mut ok = true;
    for item in items {
        match spawn(ctx, item, "`spawn` list item", &SPAWN_KEYS, false) {
            Some(spec) => calls.push(spec),
            None => ok = false,
        }
    }
    ok.then(|| Step::SpawnTogether(Rc::from(calls)))
}

fn send(ctx: &mut Ctx<'_>, node: &Node) -> Option<SendSpec> {
    let fields = ctx.fields(node, "`send`", &SEND_KEYS)?;
    let to = require(ctx, &fields, "`send`", "to", example("send"))
        .and_then(|value| run_ref(ctx, value, "`send.to`", &[]));
    let message = fields
        .get("message")
        .map(|value| ctx.text(value, "`message`"));
    let behavior = fields
        .get("behavior")
        .map(|value| steps(ctx, value, "`behavior`", Script::Behavior));
    let message = match message {
        Some(written) => written?,
        None => String::new(),
    };
    Some(SendSpec {
        to: to?,
        message,
        behavior,
    })
}

/// The fixed words `wait.for` takes besides a run's name.
const WAIT_WORDS: [&str; 2] = ["children", "notification"];

/// A run's name (or id) read from `node`, kept to be checked against the file's `spawn`
/// names once they are all read (`words`: the fixed words the field takes besides).
pub(crate) fn run_ref(
    ctx: &mut Ctx<'_>,
    node: &Node,
    field: &'static str,
    words: &'static [&'static str],
) -> Option<String> {
    let name = ctx.name(node, field)?;
    ctx.run_refs.push(crate::check::RunRef {
        name: name.clone(),
        span: node.span,
        field,
        words,
    });
    Some(name)
}

fn wait(ctx: &mut Ctx<'_>, node: &Node) -> Option<Step> {
    if !matches!(node.value, Value::Map(_)) {
        return ctx.dist(node, "`wait`").map(Step::Sleep);
    }
    let fields = ctx.fields(node, "`wait`", &WAIT_KEYS)?;
    let target = require(ctx, &fields, "`wait`", "for", example("wait"))
        .and_then(|value| run_ref(ctx, value, "`wait.for`", &WAIT_WORDS))?;
    Some(Step::WaitFor(match target.as_str() {
        "children" => WaitTarget::Children,
        "notification" => WaitTarget::Notification,
        _ => WaitTarget::Agent(target),
    }))
}

fn fail(ctx: &mut Ctx<'_>, node: &Node) -> Option<FailSpec> {
    let fields = ctx.fields(node, "`fail`", &FAIL_KEYS)?;
    let api_error = require(ctx, &fields, "`fail`", "api_error", example("fail"))
        .and_then(|value| ctx.choice(value, "api_error", &API_ERRORS))
        .map(|name| match name {
            "rate_limit" => ApiError::RateLimit,
            "overloaded" => ApiError::Overloaded,
            "model_unavailable" => ApiError::ModelUnavailable,
            _ => ApiError::Server,
        });
    let flag = |ctx: &mut Ctx<'_>, key: &str| -> Option<Option<bool>> {
        match fields.get(key) {
            Some(value) => ctx.boolean(value, &format!("`{key}`")).map(Some),
            None => Some(None),
        }
    };
    let mid_stream = flag(ctx, "mid_stream");
    let after_output = flag(ctx, "after_output");
    let tool_calls = flag(ctx, "tool_calls");
    let recovers_after = match fields.get("recovers_after") {
        Some(value) => {
            let count = ctx.integer_u32(value, "`recovers_after`", 1);
            if mid_stream == Some(Some(true)) {
                count.map(Some)
            } else {
                ctx.error_help(
                    value.span,
                    "`recovers_after` goes with `mid_stream: true`",
                    "only a response cut mid-stream gets continuation requests (ERR-1)",
                );
                None
            }
        }
        None => Some(None),
    };
    let mid_stream = mid_stream?.unwrap_or(false);
    Some(FailSpec {
        api_error: api_error?,
        // ERR-1: a response cut mid-stream has produced text, unless the file says otherwise.
        after_output: after_output?.unwrap_or(mid_stream),
        mid_stream,
        recovers_after: recovers_after?,
        tool_calls: tool_calls?.unwrap_or(false),
    })
}

fn repeat(ctx: &mut Ctx<'_>, node: &Node, script: Script) -> Option<Step> {
    let fields = ctx.fields(node, "`repeat`", &REPEAT_KEYS)?;
    let times = require(ctx, &fields, "`repeat`", "times", example("repeat"))
        .and_then(|value| ctx.integer_u32(value, "`times`", 1));
    let body = require(ctx, &fields, "`repeat`", "steps", example("repeat"))
        .map(|value| steps(ctx, value, "`steps`", script));
    Some(Step::Repeat {
        times: times?,
        steps: body?,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::raw::parse;

    /// Parses `yaml` as a step list; returns the steps and the rendered errors.
    fn check(yaml: &str, script: Script) -> (Vec<Step>, Vec<String>) {
        let node = parse(yaml).unwrap_or_else(|error| panic!("{yaml}: {error:?}"));
        let mut ctx = Ctx::new("t.yaml", Path::new("."));
        let program = steps(&mut ctx, &node, "`main`", script);
        (
            program.to_vec(),
            ctx.errors.iter().map(ToString::to_string).collect(),
        )
    }

    fn fails(yaml: &str, script: Script, fragment: &str) {
        let (_, errors) = check(yaml, script);
        assert!(
            errors.iter().any(|error| error.contains(fragment)),
            "{yaml}: wanted {fragment:?} in {errors:?}"
        );
    }

    #[test]
    fn a_tool_step_says_where_its_command_resolves_and_what_it_does_to_git() {
        // ISO-2…4: `cwd` and `git`, defaulting to the worktree and git that stays in it.
        let (steps, errors) = check(
            "- tool: {name: Bash, cwd: linked_main_checkout, git: computed}\n- tool: Monitor",
            Script::Behavior,
        );
        assert!(errors.is_empty(), "{errors:?}");
        let calls: Vec<_> = steps
            .iter()
            .map(|step| match step {
                Step::Tool(call) => (call.cwd, call.git),
                other => panic!("a tool step, not {other:?}"),
            })
            .collect();
        assert_eq!(
            calls,
            [
                (Cwd::LinkedMainCheckout, Git::Computed),
                (Cwd::Worktree, Git::Stays)
            ]
        );
    }

    #[test]
    fn every_step_form() {
        // A subagent's behavior: `fail` is allowed there, `ask_progress` (main only) is not.
        let (steps, errors) = check(
            r#"
- work: 10s
- tool: Bash
- tool: {name: Bash, input: "git push", prompt: true, duration: exp(1s)}
- spawn: {agent: Explore, name: r, count: 3, background: true, needs_result: true, model: haiku, effort: low, isolation: worktree, behavior: [{work: 1s}]}
- spawn: {}
- spawn
- spawn: {agent: fork}
- fork: {name: f, behavior: [{report: hi}]}
- send: {to: r-1, message: "go on", behavior: [{work: 2s}]}
- stop: r-2
- wait: 5s
- wait: {for: children}
- wait: {for: notification}
- wait: {for: r-3}
- bash_background: 2m
- report: done
- fail: {api_error: rate_limit, after_output: true}
- repeat: {times: 2, steps: [{work: 1s}]}
"#,
            Script::Behavior,
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(steps.len(), 18);
        let Step::Spawn(spawn) = &steps[3] else {
            panic!("{:?}", steps[3])
        };
        assert_eq!(spawn.agent.as_deref(), Some("Explore"));
        assert_eq!(
            (
                spawn.count,
                spawn.background,
                spawn.needs_result,
                spawn.fork
            ),
            (3, Some(true), true, false)
        );
        assert_eq!(
            spawn.behavior.as_ref().map(|program| program.len()),
            Some(1)
        );
        let Step::Spawn(empty) = &steps[4] else {
            panic!()
        };
        assert_eq!(
            (empty.agent.clone(), empty.count, empty.fork),
            (None, 1, false)
        );
        let Step::Spawn(typed_fork) = &steps[6] else {
            panic!()
        };
        assert!(typed_fork.fork && typed_fork.agent.is_none());
        let Step::Spawn(fork) = &steps[7] else {
            panic!()
        };
        assert!(fork.fork && fork.name.as_deref() == Some("f"));
        assert!(matches!(&steps[11], Step::WaitFor(WaitTarget::Children)));
        assert!(matches!(
            &steps[12],
            Step::WaitFor(WaitTarget::Notification)
        ));
        assert!(matches!(&steps[13], Step::WaitFor(WaitTarget::Agent(name)) if name == "r-3"));
        assert!(matches!(
            &steps[16],
            Step::Fail(FailSpec {
                api_error: ApiError::RateLimit,
                after_output: true,
                ..
            })
        ));
        assert!(matches!(&steps[17], Step::Repeat { times: 2, .. }));
    }

    #[test]
    fn step_problems() {
        fails(
            "- wrok: 1s",
            Script::Main,
            "unknown step `wrok`, did you mean `work`?",
        );
        fails(
            "- spawn: {agent: x, backgroud: true}",
            Script::Main,
            "unknown key `backgroud`, did you mean `background`?",
        );
        fails(
            "- spawn: {count: 0}",
            Script::Main,
            "`count` must be at least 1",
        );
        fails(
            "- spawn: {agent: x}\n  count: 3",
            Script::Main,
            "unexpected key `count` in a `spawn` step",
        );
        fails("- work: 10 parsecs", Script::Main, "not a duration");
        fails("- work", Script::Main, "step `work` needs a value");
        fails(
            "- ask_progress: r-1",
            Script::Behavior,
            "only allowed in `main`",
        );
        fails("- send: {message: hi}", Script::Main, "`send` needs `to`");
        fails(
            "- fail: {api_error: ratelimit}",
            Script::Main,
            "did you mean `rate_limit`?",
        );
        fails(
            "- repeat: {times: 2}",
            Script::Main,
            "`repeat` needs `steps`",
        );
        fails("- stop: ''", Script::Main, "must not be empty");
        fails("- 42", Script::Main, "a step is a one-key map");
        fails(
            "- spawn: {isolation: worktre}",
            Script::Main,
            "did you mean `worktree`?",
        );
        fails(
            "- spawn: {behavior: work}",
            Script::Main,
            "`behavior` must be a list",
        );
        fails(
            "- tool: {name: Bash, cwd: main}",
            Script::Main,
            "did you mean `main_checkout`?",
        );
        fails(
            "- tool: {name: Bash, git: redirect}",
            Script::Main,
            "did you mean `redirects`?",
        );
        fails(
            "- fail: {api_error: server, recovers_after: 2}",
            Script::Main,
            "`recovers_after` goes with `mid_stream: true`",
        );
        fails(
            "- fail: {api_error: server, mid_stream: true, recovers_after: 0}",
            Script::Main,
            "`recovers_after` must be at least 1",
        );
        fails(
            "- fail: {api_error: model_unavailble}",
            Script::Main,
            "did you mean `model_unavailable`?",
        );
        fails(
            "- spawn: {prompt: [a]}",
            Script::Main,
            "`prompt` must be text",
        );
        fails(
            "- fork: {classifier: {review: clean, launch: blok}}",
            Script::Main,
            "unknown launch verdict `blok`, did you mean `block`?",
        );
    }

    #[test]
    fn spawned_types_are_collected_for_later() {
        let node = parse("- spawn: {agent: researcher}\n- spawn: {agent: fork}\n")
            .unwrap_or_else(|e| panic!("{e:?}"));
        let mut ctx = Ctx::new("t.yaml", Path::new("."));
        steps(&mut ctx, &node, "`main`", Script::Main);
        let names: Vec<&str> = ctx.agent_refs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, vec!["researcher"]);
    }

    #[test]
    fn a_spawn_list_is_several_different_calls_in_one_response() {
        let (steps, errors) = check(
            "- spawn: [{agent: Explore, name: scout}, {agent: fork, name: f}, {agent: Plan, count: 2}]",
            Script::Main,
        );
        assert!(errors.is_empty(), "{errors:?}");
        let Step::SpawnTogether(calls) = &steps[0] else {
            panic!("wanted SpawnTogether, got {:?}", steps[0]);
        };
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].agent.as_deref(), Some("Explore"));
        assert!(calls[1].fork);
        assert_eq!(
            (calls[2].agent.as_deref(), calls[2].count),
            (Some("Plan"), 2)
        );
        fails(
            "- spawn: []",
            Script::Main,
            "`spawn` with a list needs at least one call",
        );
        fails(
            "- spawn: [{agent: Explore, backgroud: true}]",
            Script::Main,
            "did you mean `background`?",
        );
    }
}
