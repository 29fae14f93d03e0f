//! The whole file: raw tree → validated [`SimSpec`] + assertions, reporting every problem.
//!
//! This module owns the top level and the small `user` and `load` blocks; the bigger
//! blocks have their own modules (`session`, `agents`, `steps`, `expect`).

use std::path::{Path, PathBuf};

use subsim_engine::spec::{ActionKind, Answer, AnswerRule, SimSpec, UserAction, UserSpec};
use subsim_engine::SimTime;

use crate::agents::{agents, built_in_types};
use crate::check::{require, Ctx};
use crate::definitions::Loader;
use crate::diagnostic::{did_you_mean, list_names, Diagnostic, Diagnostics};
use crate::expect::expectations;
use crate::overrides::{self, Override};
use crate::raw::{self, Node, Span, Value};
use crate::read::Confine;
use crate::session::session;
use crate::steps::{run_ref, steps, Script};
use crate::{Loaded, Narration};

const TOP_KEYS: [&str; 9] = [
    "name",
    "description",
    "session",
    "agents",
    "main",
    "user",
    "load",
    "expect",
    "narration",
];
const USER_KEYS: [&str; 4] = ["answer", "answers", "think", "actions"];
/// The keys of a `user.answers` entry.
const ANSWER_RULE_KEYS: [&str; 4] = ["agent", "tool", "prompt", "answer"];
const NARRATION_KEYS: [&str; 2] = ["chapters", "next"];
const CHAPTER_KEYS: [&str; 2] = ["at", "title"];
const ANSWERS: [&str; 3] = ["approve", "deny", "approve_session"];
const ACTION_KINDS: [&str; 7] = [
    "stop", "subtask", "ctrl_b", "clear", "type_to", "dismiss", "edit",
];
const ACTION_KEYS: [&str; 10] = [
    "at", "stop", "subtask", "ctrl_b", "clear", "type_to", "dismiss", "edit", "message", "behavior",
];
const EDIT_KEYS: [&str; 2] = ["agent", "model"];
const SUBTASK_KEYS: [&str; 3] = ["task", "name", "behavior"];

/// Parses and validates a whole scenario.
pub(crate) fn build(source: &str, file: &str, base_dir: &Path) -> Result<Loaded, Diagnostics> {
    build_with(source, file, base_dir, &[], &[])
}

/// [`build`] with `--set` overrides applied to the raw tree before validation, and the
/// folders besides `base_dir` that `file:` and `agent_dirs` may read (`--allow-path`).
pub(crate) fn build_with(
    source: &str,
    file: &str,
    base_dir: &Path,
    overrides: &[Override],
    allowed: &[PathBuf],
) -> Result<Loaded, Diagnostics> {
    let mut root = match raw::parse(source) {
        Ok(root) => root,
        Err(error) => {
            let problem = Diagnostic {
                file: file.to_string(),
                line: error.span.line,
                column: error.span.column,
                offset: error.span.offset,
                len: error.span.len,
                message: error.message,
                help: error.help,
            };
            return Err(Diagnostics {
                source: source.to_string(),
                problems: vec![problem],
            });
        }
    };
    let mut ctx = Ctx::new(file, base_dir);
    ctx.confine = Confine::new(base_dir, allowed);
    let not_applied = overrides::apply(&mut root, overrides);
    if !not_applied.is_empty() {
        return Err(Diagnostics {
            source: source.to_string(),
            problems: not_applied,
        });
    }
    let loaded = scenario(&mut ctx, &root, source);
    let mut errors = std::mem::take(&mut ctx.errors);
    // A warning about an override (an env var nobody reads) is an error: what the command
    // line asks for must not be silently ignored.
    let loaded = loaded.map(|mut loaded| {
        let (about_overrides, warnings): (Vec<_>, Vec<_>) = std::mem::take(&mut loaded.warnings)
            .into_iter()
            .partition(overrides::is_override);
        errors.extend(about_overrides.into_iter().map(|mut problem| {
            problem.help = Some("a `--set` must name a key the simulator reads".to_string());
            problem
        }));
        loaded.warnings = warnings;
        loaded
    });
    overrides::relabel(&mut errors, overrides);
    match loaded {
        Some(loaded) if errors.is_empty() => Ok(loaded),
        _ => {
            // File order, so the first problem shown is the first in the file.
            errors.sort_by_key(|problem| (problem.line, problem.column));
            Err(Diagnostics {
                source: source.to_string(),
                problems: errors,
            })
        }
    }
}

fn scenario(ctx: &mut Ctx<'_>, root: &Node, source: &str) -> Option<Loaded> {
    let start = Span {
        offset: 0,
        len: 0,
        line: 1,
        column: 1,
    };
    match &root.value {
        Value::Map(_) => {}
        Value::Null => {
            ctx.error_help(
                start,
                "the scenario file is empty",
                "a scenario needs at least `name: ...`",
            );
            return None;
        }
        Value::Bool(..) | Value::Int(..) | Value::Float(..) | Value::Str(..) | Value::Seq(..) => {
            ctx.error_help(
                root.span,
                format!(
                    "a scenario file is a map of top-level keys, found {}",
                    root.describe()
                ),
                format!("top-level keys are {}", list_names(&TOP_KEYS)),
            );
            return None;
        }
    }
    let fields = ctx.fields(root, "the top level", &TOP_KEYS)?;
    let name = match fields.get("name") {
        Some(value) => ctx.name(value, "`name`"),
        None => {
            ctx.error_help(
                start,
                "missing `name`",
                "every scenario has a name: add `name: ...` at the top",
            );
            None
        }
    };
    let description = fields
        .get("description")
        .and_then(|value| ctx.text(value, "`description`"));
    let session = session(ctx, fields.get("session"));
    ctx.session_classifier = session.spec.classifier;
    ctx.session_tools = session.spec.tools.clone().unwrap_or_default();
    ctx.version = session.spec.version;
    let mut loader = Loader::new(session.spec.version, session.spec.kind, ctx.file);
    let agent_files = agents(ctx, fields.get("agents"), &mut loader);
    loader.load_dirs(ctx, &session.agent_dirs);
    let budget_at = session
        .agent_dirs_span
        .or_else(|| fields.key("agents").map(|key| key.span))
        .unwrap_or(start);
    let (defs, notes) = loader.finish(ctx, budget_at);
    let main = fields
        .get("main")
        .map(|value| steps(ctx, value, "`main`", Script::Main));
    let user = user(ctx, fields.get("user"));
    let load = fields
        .get("load")
        .and_then(|value| crate::load::load(ctx, value));
    let expect = expectations(ctx, fields.get("expect"));
    let narration = fields
        .get("narration")
        .map(|value| narration(ctx, value))
        .unwrap_or_default();

    // Agent types can only be checked once every definition is known. An unknown type is
    // a warning: the simulator rejects such a spawn at run time (`unknown_type`), which a
    // scenario may want to show.
    let mut known: Vec<&str> = built_in_types().collect();
    known.extend(defs.keys().map(String::as_str));
    for reference in std::mem::take(&mut ctx.agent_refs) {
        check_agent_type(
            ctx,
            &known,
            &reference.name,
            reference.span,
            "unknown agent type",
        );
    }
    check_run_refs(ctx);
    if let Some((agent, span)) = &session.main_agent {
        check_agent_type(
            ctx,
            &known,
            agent,
            *span,
            "`session.agent` names an unknown agent",
        );
    }

    let mut spec = SimSpec::minimal(&name?);
    spec.description = description;
    spec.session = session.spec;
    spec.agents = defs;
    spec.definitions = notes;
    if let Some(main) = main {
        spec.main = main;
    }
    spec.user = user;
    spec.load = load;
    let mut warnings = std::mem::take(&mut ctx.warnings);
    warnings.sort_by_key(|warning| (warning.line, warning.column));
    Some(Loaded {
        spec,
        expect,
        warnings,
        agent_dirs: session
            .agent_dirs
            .into_iter()
            .map(|entry| entry.dir)
            .collect(),
        agent_files,
        read_files: ctx.confine.files_read(),
        source: source.to_string(),
        narration,
    })
}

/// `narration:`: chapter headings and commands to try next, for the narration only.
fn narration(ctx: &mut Ctx<'_>, node: &Node) -> Narration {
    let mut narration = Narration::default();
    let Some(fields) = ctx.fields(node, "`narration`", &NARRATION_KEYS) else {
        return narration;
    };
    if let Some(items) = fields
        .get("chapters")
        .and_then(|value| ctx.list(value, "`chapters`"))
    {
        for item in items {
            let Some(chapter) = ctx.fields(item, "a chapter", &CHAPTER_KEYS) else {
                continue;
            };
            let at = match chapter.get("at") {
                Some(value) => ctx.duration(value, "`at`"),
                None => Some(0),
            };
            let title = match chapter.get("title") {
                Some(value) => ctx.text(value, "`title`"),
                None => {
                    ctx.error_help(
                        chapter.span,
                        "a chapter needs `title`",
                        "e.g. `{at: 30s, title: \"2. A resume slips past the cap\"}`",
                    );
                    None
                }
            };
            if let (Some(at), Some(title)) = (at, title) {
                narration.chapters.push((SimTime(at), title));
            }
        }
    }
    if let Some(items) = fields
        .get("next")
        .and_then(|value| ctx.list(value, "`next`"))
    {
        for item in items {
            if let Some(text) = ctx.text(item, "a command to try next") {
                narration.next.push(text);
            }
        }
    }
    // Headings are shown in time order whatever order the file lists them in.
    narration.chapters.sort_by_key(|(at, _)| *at);
    narration
}

/// Warns about an agent type no definition has. A bare name may stand for a plugin
/// agent's scoped id (`security` for `my-plugin:review:security`, MAIN-4); several plugin
/// agents sharing it make it ambiguous (Q-32: the spawn is rejected, asking for the
/// scoped name).
fn check_agent_type(ctx: &mut Ctx<'_>, known: &[&str], name: &str, span: Span, what: &str) {
    if known.contains(&name) {
        return;
    }
    let plugin_matches: Vec<&str> = known
        .iter()
        .copied()
        .filter(|id| id.rsplit_once(':').is_some_and(|(_, tail)| tail == name))
        .collect();
    match plugin_matches.as_slice() {
        [_] => {}
        [] => {
            let hint = did_you_mean(name, known);
            ctx.warn(
                span,
                format!("{what} `{name}`{hint}"),
                Some(format!(
                    "spawning it is rejected at run time (`unknown_type`); known types are {}",
                    list_names(known)
                )),
            );
        }
        several => ctx.warn(
            span,
            format!(
                "`{name}` is ambiguous: plugin agents {} share it (Q-32)",
                list_names(several)
            ),
            Some("write the scoped name; the bare name is rejected at run time".to_string()),
        ),
    }
}

fn user(ctx: &mut Ctx<'_>, node: Option<&Node>) -> UserSpec {
    let mut user = UserSpec::default();
    let Some(node) = node else { return user };
    let Some(fields) = ctx.fields(node, "`user`", &USER_KEYS) else {
        return user;
    };
    if let Some(value) = fields.get("answer") {
        user.answer = answer(ctx, value).unwrap_or_default();
    }
    if let Some(value) = fields.get("answers") {
        if value.value != Value::Null {
            if let Some(items) = ctx.list(value, "`answers`") {
                user.answers = items
                    .iter()
                    .filter_map(|item| answer_rule(ctx, item))
                    .collect();
            }
        }
    }
    if let Some(value) = fields.get("think") {
        if let Some(think) = ctx.dist(value, "`think`") {
            user.think = think;
        }
    }
    if let Some(value) = fields.get("actions") {
        if value.value != Value::Null {
            if let Some(items) = ctx.list(value, "`actions`") {
                user.actions = items.iter().filter_map(|item| action(ctx, item)).collect();
            }
        }
    }
    user
}

/// An optional key's value: `Some(None)` when left out, `None` when written wrong.
fn optional<T>(value: Option<Option<T>>) -> Option<Option<T>> {
    match value {
        None => Some(None),
        Some(read) => read.map(Some),
    }
}

fn answer(ctx: &mut Ctx<'_>, node: &Node) -> Option<Answer> {
    Some(match ctx.choice(node, "answer", &ANSWERS)? {
        "deny" => Answer::Deny,
        "approve_session" => Answer::ApproveSession,
        _ => Answer::Approve,
    })
}

/// One `user.answers` entry: `{agent, tool, prompt}` (at least one) and `answer`.
fn answer_rule(ctx: &mut Ctx<'_>, node: &Node) -> Option<AnswerRule> {
    let before = ctx.errors.len();
    let fields = ctx.fields(node, "a `user.answers` entry", &ANSWER_RULE_KEYS)?;
    // A misspelt selector (`promt`) is reported once, as the unknown key it is.
    let misspelt = ctx.errors.len() > before;
    let example = "`{agent: researcher-2, answer: deny}`, `{tool: Bash, answer: approve_session}` \
                   or `{prompt: 3, answer: deny}`";
    let answer = require(ctx, &fields, "a `user.answers` entry", "answer", example)
        .and_then(|value| answer(ctx, value));
    let agent = fields.get("agent").map(|value| ctx.name(value, "`agent`"));
    let tool = fields.get("tool").map(|value| ctx.name(value, "`tool`"));
    let prompt = fields
        .get("prompt")
        .map(|value| ctx.integer(value, "`prompt`", 1));
    if agent.is_none() && tool.is_none() && prompt.is_none() {
        if misspelt {
            return None;
        }
        ctx.error_help(
            fields.span,
            "a `user.answers` entry needs `agent`, `tool` or `prompt` to say which prompts it answers",
            format!("e.g. {example}; `user.answer` answers every other prompt"),
        );
        return None;
    }
    Some(AnswerRule {
        agent: optional(agent)?,
        tool: optional(tool)?,
        prompt: optional(prompt)?,
        answer: answer?,
    })
}

fn action(ctx: &mut Ctx<'_>, node: &Node) -> Option<UserAction> {
    let fields = ctx.fields(node, "an action", &ACTION_KEYS)?;
    let at = match fields.get("at") {
        Some(value) => ctx.duration(value, "`at`"),
        None => {
            ctx.error_help(
                fields.span,
                "an action needs `at`",
                "e.g. `{at: 10s, stop: researcher-3}`",
            );
            None
        }
    };
    let kinds: Vec<&str> = fields
        .names()
        .filter(|name| ACTION_KINDS.contains(name))
        .collect();
    let Some(&kind) = kinds.first() else {
        ctx.error_help(
            fields.span,
            "an action needs something to do",
            format!("add one of {}", list_names(&ACTION_KINDS)),
        );
        return None;
    };
    if let Some(second) = kinds.get(1).and_then(|name| fields.key(name)) {
        ctx.error_help(
            second.span,
            format!("`{}` and `{kind}` are two actions in one entry", kinds[1]),
            "write each action as its own list item",
        );
        return None;
    }
    for extra in ["message", "behavior"] {
        if kind != "type_to" {
            if let Some(key) = fields.key(extra) {
                ctx.error_help(
                    key.span,
                    format!("`{extra}` does not go with `{kind}`"),
                    "`message` and `behavior` go with `type_to`; a subtask takes `{task, behavior}`",
                );
            }
        }
    }
    let value = fields.get(kind)?;
    let action = match kind {
        "stop" => ActionKind::Stop(run_ref(ctx, value, "`stop`", &[])?),
        "dismiss" => ActionKind::Dismiss(run_ref(ctx, value, "`dismiss`", &[])?),
        "ctrl_b" | "clear" => {
            if !ctx.boolean(value, &format!("`{kind}`"))? {
                ctx.error_help(
                    value.span,
                    format!("`{kind}: false` does nothing"),
                    format!("write `{kind}: true`, or leave the action out"),
                );
                return None;
            }
            if kind == "clear" {
                ActionKind::Clear
            } else {
                ActionKind::CtrlB
            }
        }
        "edit" => {
            let inner = ctx.fields(value, "`edit`", &EDIT_KEYS)?;
            let example = "`edit: {agent: reviewer, model: opus}`";
            let agent = require(ctx, &inner, "`edit`", "agent", example)
                .and_then(|agent| ctx.name(agent, "`agent`"));
            let model = require(ctx, &inner, "`edit`", "model", example)
                .and_then(|model| ctx.name(model, "`model`"));
            ActionKind::Edit {
                agent: agent?,
                model: model?,
            }
        }
        "subtask" => match &value.value {
            Value::Map(_) => {
                let inner = ctx.fields(value, "`subtask`", &SUBTASK_KEYS)?;
                let task = require(
                    ctx,
                    &inner,
                    "`subtask`",
                    "task",
                    "`subtask: {task: \"draft tests\"}`",
                )
                .and_then(|task| ctx.name(task, "`task`"));
                let name = inner.get("name").map(|name| ctx.run_name(name, "`name`"));
                if let Some(Some(name)) = &name {
                    ctx.run_names.push(name.clone());
                }
                let behavior = inner
                    .get("behavior")
                    .map(|steps_node| steps(ctx, steps_node, "`behavior`", Script::Behavior));
                ActionKind::Subtask {
                    task: task?,
                    name: optional(name)?,
                    behavior,
                }
            }
            Value::Null
            | Value::Bool(..)
            | Value::Int(..)
            | Value::Float(..)
            | Value::Str(..)
            | Value::Seq(..) => ActionKind::Subtask {
                task: ctx.name(value, "`subtask`")?,
                name: None,
                behavior: None,
            },
        },
        _ => {
            let to = run_ref(ctx, value, "`type_to`", &[]);
            let message = fields
                .get("message")
                .map(|message| ctx.text(message, "`message`"));
            let behavior = fields
                .get("behavior")
                .map(|steps_node| steps(ctx, steps_node, "`behavior`", Script::Behavior));
            let message = match message {
                Some(written) => written?,
                None => String::new(),
            };
            ActionKind::TypeTo {
                to: to?,
                message,
                behavior,
            }
        }
    };
    Some(UserAction {
        at: SimTime(at?),
        kind: action,
    })
}

/// Checks every run a field names (`wait.for`, `send.to`, `stop`, …) against the names the
/// file's `spawn` steps give. A name no spawn gives that is near one of the field's fixed
/// words (`wait: {for: chidlren}`) is an error with a did-you-mean: it would silently wait
/// for a run that never exists. One near a name a spawn gives is a warning with a
/// did-you-mean. Ids (`main`, `a3`), a counted spawn's `NAME-N` and names no spawn is near
/// (a definition file's run, say) pass.
fn check_run_refs(ctx: &mut Ctx<'_>) {
    let names = std::mem::take(&mut ctx.run_names);
    let known = |name: &str| {
        name == "main"
            || name.strip_prefix('a').is_some_and(|digits| {
                !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
            })
            || names.iter().any(|given| {
                given == name
                    || name
                        .strip_prefix(given.as_str())
                        .and_then(|rest| rest.strip_prefix('-'))
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
    };
    for reference in std::mem::take(&mut ctx.run_refs) {
        if reference.words.contains(&reference.name.as_str()) || known(&reference.name) {
            continue;
        }
        let field = reference.field;
        if let Some(word) = crate::diagnostic::suggest(&reference.name, reference.words) {
            ctx.error_help(
                reference.span,
                format!(
                    "{field} `{}` is no run of this file and no word {field} takes, did you \
                     mean `{word}`?",
                    reference.name
                ),
                format!(
                    "{field} takes {} or a run's name or id",
                    crate::diagnostic::list_names(reference.words)
                ),
            );
            continue;
        }
        let given: Vec<&str> = names.iter().map(String::as_str).collect();
        // `scuot-2` is near `scout-2`, the second run of `count:` under `scout`.
        let counted = reference.name.rsplit_once('-').filter(|(_, number)| {
            !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit())
        });
        let near = crate::diagnostic::suggest(&reference.name, &given)
            .map(str::to_string)
            .or_else(|| {
                let (base, number) = counted?;
                crate::diagnostic::suggest(base, &given).map(|near| format!("{near}-{number}"))
            });
        if let Some(near) = near {
            ctx.warn(
                reference.span,
                format!(
                    "{field} `{}`: no `spawn` of this file names a run so, did you mean \
                     `{near}`?",
                    reference.name
                ),
                Some(
                    "a run is named by its spawn's `name:` (`NAME-N` for the Nth of a \
                     `count:`) or by its id (`main`, `a3`)"
                        .to_string(),
                ),
            );
        }
    }
    ctx.run_names = names;
}

#[cfg(test)]
mod tests {
    use subsim_engine::expect::Expectation;
    use subsim_engine::spec::{Answer, Arrivals, LoadUntil, Retry};

    use super::*;

    /// The examples of `scenario-format.md`, put together in one file.
    const CONTRACT_EXAMPLE: &str = r#"
name: Fan-out of 25 researchers hits the cap     # required
description: |                                    # optional, shown by `run --explain`
  Main asks for 25 researchers at once.
session:
  env:
    CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: 20
    CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH: 3
    CLAUDE_CODE_FORK_SUBAGENT: 0
    CLAUDE_CODE_DISABLE_BACKGROUND_TASKS: 1
    CLAUDE_CODE_SUBAGENT_MODEL: haiku
  permissions: {allow: [Agent(Explore)], deny: [Bash(git push *)]}
  mcp: {github: [create_issue, list_prs]}
agents:
  worker:
    description: Does one thing
main:
  - spawn: {agent: general-purpose, name: researcher, count: 25, background: true}
user:
  answer: approve          # approve | deny (Esc) | approve_session
  think: exp(3s)           # time to answer each prompt
  actions:                 # things the person does at given times
    - {at: 10s, stop: researcher-3}      # x in the tasks panel
    - {at: 12s, subtask: {task: "draft tests", behavior: [{work: 30s}]}}  # /subtask (a fork)
    - {at: 5s, ctrl_b: true}             # background the running foreground task
    - {at: 20s, clear: true}             # /clear
    - {at: 25s, type_to: researcher-3, message: "go on"}  # write in an agent's transcript
load:
  arrivals: poisson(20/s)   # or every(50ms), or burst(25)
  count: 100000             # or duration: 1h
  spawn: {agent: worker}    # what each arrival does: one Agent call from main
  retry: none               # none (as documented) | after_completion | backoff(exp(1s))
expect:
  - count: {kind: spawn_rejected, reason: concurrent_limit}
    equals: 5                      # or at_least / at_most / between: [a, b]
  - max_running: 20                # peak of the running-subagent count
  - at: 10s
    running: 20
  - final: {agent: researcher-1, outcome: completed}
  - order: [{kind: permission_answered, agent: r-1}, {kind: agent_finished, agent: r-1}]
  - event: {kind: spawn_rejected, message: "Concurrent subagent limit reached"}
  - blocking: {approx: 0.159, tolerance: 0.01}   # rejected / attempted spawns
"#;

    #[test]
    fn the_contract_example_builds() {
        let loaded = match build(CONTRACT_EXAMPLE, "contract.yaml", Path::new(".")) {
            Ok(loaded) => loaded,
            Err(problems) => panic!("{problems}"),
        };
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let spec = &loaded.spec;
        assert_eq!(spec.name, "Fan-out of 25 researchers hits the cap");
        assert_eq!(
            spec.description.as_deref(),
            Some("Main asks for 25 researchers at once.\n")
        );
        assert_eq!(spec.session.env.len(), 5);
        assert_eq!(
            spec.session.env["CLAUDE_CODE_DISABLE_BACKGROUND_TASKS"],
            "1"
        );
        assert_eq!(
            spec.session.permissions.deny,
            vec!["Bash(git push *)".to_string()]
        );
        assert_eq!(spec.main.len(), 1);
        assert_eq!(spec.user.answer, Answer::Approve);
        assert_eq!(spec.user.actions.len(), 5);
        assert_eq!(spec.user.actions[2].at, SimTime::from_secs(5));
        let load = spec.load.as_ref().map(|load| {
            (
                load.streams[0].arrivals.clone(),
                load.streams[0].until,
                load.streams[0].retry,
            )
        });
        assert_eq!(
            load,
            Some((
                Arrivals::Poisson(20.0),
                LoadUntil::Count(100_000),
                Retry::None
            ))
        );
        assert_eq!(loaded.expect.len(), 7);
        assert_eq!(
            loaded.expect[1].expectation,
            Expectation::MaxRunning(subsim_engine::expect::Compare::Equals(20))
        );
        assert_eq!(
            loaded.expect[0].location.as_deref(),
            Some("contract.yaml:34:5")
        );
    }

    #[test]
    fn load_forms() {
        let check = |arrivals: &str, until: &str| -> Result<(Arrivals, LoadUntil, Retry), String> {
            let yaml = format!("name: x\nload:\n  arrivals: {arrivals}\n  {until}\n  spawn: {{}}\n  retry: backoff(exp(1s))\n");
            build(&yaml, "l.yaml", Path::new("."))
                .map(|loaded| {
                    let load = loaded.spec.load.unwrap_or_else(|| panic!("load missing"));
                    (
                        load.streams[0].arrivals.clone(),
                        load.streams[0].until,
                        load.streams[0].retry,
                    )
                })
                .map_err(|problems| problems.to_string())
        };
        let backoff = Retry::Backoff(subsim_engine::dist::Dist::Exp { mean: 1e6 });
        assert_eq!(
            check("every(50ms)", "duration: 1h"),
            Ok((
                Arrivals::Every(50_000),
                LoadUntil::Duration(SimTime::from_secs(3_600)),
                backoff
            ))
        );
        assert_eq!(
            check("burst(25)", "count: 3"),
            Ok((Arrivals::Burst(25), LoadUntil::Count(3), backoff))
        );
        let fails = [
            ("poison(20/s)", "count: 3", "did you mean `poisson`?"),
            ("burst(0)", "count: 3", "not a burst size"),
            ("every(0s)", "count: 3", "above zero"),
            ("every(50ms)", "count: 0", "at least 1"),
            (
                "every(50ms)",
                "# no count",
                "`load` needs `count` or `duration`",
            ),
        ];
        for (arrivals, until, fragment) in fails {
            let message = check(arrivals, until).expect_err(arrivals);
            assert!(message.contains(fragment), "{arrivals} {until}: {message}");
        }
    }

    #[test]
    fn user_action_problems() {
        let cases = [
            ("- {stop: r-1}", "an action needs `at`"),
            ("- {at: 1s}", "an action needs something to do"),
            (
                "- {at: 1s, stop: a, clear: true}",
                "two actions in one entry",
            ),
            ("- {at: 1s, ctrl_b: false}", "`ctrl_b: false` does nothing"),
            (
                "- {at: 1s, stop: a, message: hi}",
                "`message` does not go with `stop`",
            ),
            ("- {at: exp(1s), stop: a}", "must be a fixed duration"),
            (
                "- {at: 1s, dismiss: a, message: hi}",
                "`message` does not go with `dismiss`",
            ),
            ("- {at: 1s, dismis: a}", "did you mean `dismiss`?"),
            (
                "- {at: 1s, subtask: {behavior: []}}",
                "`subtask` needs `task`",
            ),
        ];
        for (actions, fragment) in cases {
            let yaml = format!("name: x\nuser:\n  actions:\n    {actions}\n");
            let message = build(&yaml, "u.yaml", Path::new("."))
                .map(|_| String::new())
                .unwrap_or_else(|problems| problems.to_string());
            assert!(message.contains(fragment), "{actions}: {message}");
        }
    }

    #[test]
    fn session_extension_problems() {
        let cases = [
            (
                "continuations: -1",
                "`continuations` must be at least 0, found -1",
            ),
            ("effort: extreme", "unknown effort `extreme`"),
            ("effort: hgih", "did you mean `high`?"),
            ("provider: vertx", "did you mean `vertex`?"),
            ("trusted_dirs: here", "`trusted_dirs` must be a list"),
            (
                "auto_memory: off",
                "`auto_memory` must be `true` or `false`",
            ),
            ("classifier: {veredict: block}", "unknown key `veredict`"),
            ("hooks: [{event: Stop}]", "a hook needs `command`"),
            (
                "fallback_models: sonnet",
                "`fallback_models` must be a list",
            ),
            (
                "agent_dirs: [{scope: cli, path: a.json, passed_as: file}]",
                "unknown passed_as `file`",
            ),
            (
                "agent_dirs: [{scope: project, path: d, passed_as: path}]",
                "`passed_as` only goes with `scope: cli`",
            ),
        ];
        for (session, fragment) in cases {
            let yaml = format!("name: x\nsession:\n  {session}\n");
            let message = build(&yaml, "s.yaml", Path::new("."))
                .map(|_| String::new())
                .unwrap_or_else(|problems| problems.to_string());
            assert!(message.contains(fragment), "{session}: {message}");
        }
    }

    #[test]
    fn the_top_level_must_be_a_map_with_a_name() {
        for (yaml, fragment) in [
            ("- a\n- b\n", "a scenario file is a map"),
            ("name: ''\n", "`name` must not be empty"),
            ("name: [x]\n", "`name` must be text"),
            ("", "the scenario file is empty"),
        ] {
            let message = build(yaml, "t.yaml", Path::new("."))
                .map(|_| String::new())
                .unwrap_or_else(|problems| problems.to_string());
            assert!(message.contains(fragment), "{yaml:?}: {message}");
        }
    }

    #[test]
    fn anchors_and_merge_keys_work_and_keep_use_site_locations() {
        let yaml = "name: x\nagents:\n  base: &base {description: Base, model: haiku}\n  derived: {<<: *base, model: opus}\nmain:\n  - spawn: &s {agent: base}\n  - spawn: *s\n  - spawn: {<<: *s, cuont: 2}\n";
        let problems = build(yaml, "m.yaml", Path::new("."))
            .map(|_| String::new())
            .unwrap_or_else(|problems| problems.to_string());
        assert!(
            problems.contains("m.yaml:8:21: unknown key `cuont`, did you mean `count`?"),
            "{problems}"
        );
        let fixed = yaml.replace("cuont", "count");
        let loaded =
            build(&fixed, "m.yaml", Path::new(".")).unwrap_or_else(|problems| panic!("{problems}"));
        assert_eq!(loaded.spec.agents["derived"].model.as_deref(), Some("opus"));
        assert_eq!(loaded.spec.agents["derived"].description, "Base");
        assert_eq!(loaded.spec.main.len(), 3);
    }
}
