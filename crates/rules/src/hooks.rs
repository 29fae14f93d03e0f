//! HOOK — which lifecycle hooks fire for a subagent, and when (HOOK-1…8, Q-25).
//!
//! The simulator never runs a hook's command; it records that the hook fired. This module
//! answers the questions that decide that:
//! - [`matches()`]: does a `SubagentStart`/`SubagentStop` matcher select this agent type
//!   (HOOK-2/3)?
//! - [`fires_on`]: does an event fire on a run transition (HOOK-1, Q-25, Q-3)?
//! - [`runtime_event`]: frontmatter `Stop` becomes `SubagentStop` (HOOK-5);
//! - [`frontmatter_hooks_run`]: are a definition's frontmatter hooks trusted to run
//!   (HOOK-6)?
//! - [`applies`]: is a registered hook active for an event (HOOK-1 session hooks everywhere,
//!   HOOK-4 frontmatter hooks only for their own subagent while it runs)?
//! - [`hook_fires`]: does one registered hook fire on an [`Occasion`] (a run's lifecycle
//!   event or a tool call), and which rule does it cite (HOOK-1, HOOK-4, HOOK-5, Q-25)?
//!
//! # Matchers (HOOK-2/3)
//! A matcher is either a *plain name* or a *regex*:
//! - omitted, empty or `*` matches every agent type (HOOK-2 names only the omitted case;
//!   the empty string and `*` follow Claude Code's general hooks documentation);
//! - a *plain name* — only ASCII letters, digits, `_` and `|`, and from v2.1.195 also `-` —
//!   matches exactly; `|` separates alternative names (`db-agent|reviewer`);
//! - anything else, e.g. a scoped plugin id such as `my-plugin:db-agent`, or before v2.1.195
//!   any hyphenated name, is an **unanchored** regex: it matches if it matches anywhere in
//!   the agent type, so `db-agent` selected `prod-db-agent` before v2.1.195 (HOOK-3). Anchor
//!   it with `^…$` to select one agent.
//!
//! The regex subset (no regex crate; the rules crate has no dependencies):
//! literal characters; `.` (any character); `^` and `$` (start and end); `|` alternation;
//! `( … )` groups; the quantifiers `*`, `+`, `?` on the preceding character, class or group
//! (a `?` right after a quantifier, the lazy form, is accepted and changes nothing for a
//! yes/no match); character classes `[abc]`, `[a-z]`, `[^…]`; and the escapes `\d`, `\w`,
//! `\s` (and `\D`, `\W`, `\S`), with `\` before any other character making it literal.
//! Everything else is literal, including `{` and `}` (counted repetition `{n,m}` is not
//! supported). A matcher the subset cannot parse — an unbalanced `(` or `[`, a quantifier
//! with nothing before it, a trailing `\` — is matched as literal text, unanchored.
//! Matching is case-sensitive.

use crate::messages;
use crate::{Ending, Gates, Outcome, RuleId};

/// How a matcher was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatcherKind {
    /// Omitted, empty or `*`: every agent type.
    All,
    /// A plain name (or `|`-separated names), compared exactly.
    Exact,
    /// An unanchored regex in the supported subset.
    Regex,
    /// A regex the subset cannot parse, searched for as literal text.
    Literal,
}

/// Whether a matcher selects an agent type, how it was read, and the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchDecision {
    /// The hook is selected.
    pub matched: bool,
    /// How the matcher was read.
    pub kind: MatcherKind,
    /// `HOOK-2`, or `HOOK-3` where a hyphen decided between exact and regex.
    pub rule: RuleId,
}

/// HOOK-2/3: does `matcher` select `agent_type` (the definition's `name`, or the scoped id
/// for a plugin agent, HOOK-8)? See the module docs for the exact semantics.
pub fn match_agent_type(matcher: Option<&str>, agent_type: &str, gates: &Gates) -> MatchDecision {
    let matcher = match matcher {
        None => None,
        Some(text) if text.is_empty() || text == "*" => None,
        Some(text) => Some(text),
    };
    let Some(matcher) = matcher else {
        // HOOK-2: an omitted matcher matches every subagent.
        return MatchDecision {
            matched: true,
            kind: MatcherKind::All,
            rule: "HOOK-2",
        };
    };
    let hyphenated = matcher.contains('-');
    let plain = matcher.chars().all(|c| {
        c.is_ascii_alphanumeric() || c == '_' || c == '|' || (c == '-' && gates.hook_matcher_exact)
    });
    // HOOK-3: the hyphen decides from v2.1.195 (exact) and before it (regex).
    let rule = if hyphenated { "HOOK-3" } else { "HOOK-2" };
    if plain {
        return MatchDecision {
            matched: matcher.split('|').any(|name| name == agent_type),
            kind: MatcherKind::Exact,
            rule,
        };
    }
    // HOOK-2: a scoped id (or anything not plain) is an unanchored regex.
    match Regex::parse(matcher) {
        Some(regex) => MatchDecision {
            matched: regex.search(agent_type),
            kind: MatcherKind::Regex,
            rule,
        },
        None => MatchDecision {
            matched: agent_type.contains(matcher),
            kind: MatcherKind::Literal,
            rule,
        },
    }
}

/// HOOK-2/3: [`match_agent_type`]'s yes or no.
pub fn matches(matcher: Option<&str>, agent_type: &str, gates: &Gates) -> bool {
    match_agent_type(matcher, agent_type, gates).matched
}

/// HOOK-8: the `agent_type` hooks receive is the definition's `name` (for a plugin agent,
/// its scoped id, HOOK-2), unchanged.
pub fn agent_type(definition_name: &str) -> (&str, RuleId) {
    (definition_name, "HOOK-8")
}

/// HOOK-2 / HOOK-8 / FORK-3: the agent type a `SubagentStart` / `SubagentStop` matcher reads
/// for a run: its definition's `name` ([`agent_type`]), or `fork` for a fork. A fork is a
/// subagent that Claude requests with the type `fork` (FORK-3), and a `/subtask` fork is
/// the same kind of subagent (FORK-9), so an omitted matcher fires for both and a matcher
/// `fork` selects them (issue #23; docs/decisions.md).
pub fn lifecycle_agent_type(definition_name: Option<&str>) -> (&str, RuleId) {
    match definition_name {
        Some(name) => agent_type(name),
        None => (crate::spawn::FORK_TYPE, "HOOK-2"),
    }
}

/// The hook events this module distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookEvent {
    /// A subagent begins execution.
    SubagentStart,
    /// A subagent completes.
    SubagentStop,
    /// The agent stops; in a subagent's frontmatter it becomes `SubagentStop` (HOOK-5).
    Stop,
    /// Before a tool call (HOOK-1, HOOK-7).
    PreToolUse,
    /// After a tool call (HOOK-1).
    PostToolUse,
    /// Any other event name (all events are supported in frontmatter, HOOK-4).
    Other,
}

impl HookEvent {
    /// Reads an event name as written in settings or frontmatter.
    pub fn parse(name: &str) -> HookEvent {
        match name {
            "SubagentStart" => HookEvent::SubagentStart,
            "SubagentStop" => HookEvent::SubagentStop,
            "Stop" => HookEvent::Stop,
            "PreToolUse" => HookEvent::PreToolUse,
            "PostToolUse" => HookEvent::PostToolUse,
            _ => HookEvent::Other,
        }
    }

    /// The event name (`other` for [`HookEvent::Other`]).
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::SubagentStart => "SubagentStart",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::Stop => "Stop",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Other => "other",
        }
    }
}

/// HOOK-5: the event a frontmatter hook listens for at runtime. `Stop` becomes
/// `SubagentStop` when the agent runs as a subagent; as the main session (`--agent`) it
/// stays `Stop` (HOOK-4).
pub fn runtime_event(declared: HookEvent, as_subagent: bool) -> (HookEvent, RuleId) {
    if declared == HookEvent::Stop && as_subagent {
        (HookEvent::SubagentStop, "HOOK-5")
    } else {
        (declared, "HOOK-4")
    }
}

/// What happened to a run, as hooks see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunTransition {
    /// A new run began (an Agent call or @-mention was admitted).
    Start,
    /// A finished or stopped agent began a new run under its id (RESUME-8).
    Resume,
    /// The run ended, as the trace's `agent_finished.outcome` says.
    End(Outcome),
    /// The spawn was rejected and no run began.
    Reject,
}

/// HOOK-1 / Q-25 / Q-3: does `event` fire on `transition`, and by which rule?
///
/// `SubagentStart` fires on every run start, resumes included; `SubagentStop` on every run
/// end, whatever the outcome. A rejected spawn fires nothing. Tool events and
/// `Stop` are not run transitions of a subagent.
pub fn fires(event: HookEvent, transition: RunTransition) -> (bool, RuleId) {
    use RunTransition::*;
    match (event, transition) {
        (_, Reject) => (false, "Q-3"),
        (HookEvent::SubagentStart, Start) => (true, "HOOK-1"),
        (HookEvent::SubagentStart, Resume) => (true, "Q-25"),
        (HookEvent::SubagentStop, End(outcome)) => match outcome.ending() {
            Ending::Completed => (true, "HOOK-1"),
            Ending::Failed | Ending::Stopped => (true, "Q-25"),
        },
        _ => (false, "HOOK-1"),
    }
}

/// [`fires`]'s yes or no.
pub fn fires_on(event: HookEvent, transition: RunTransition) -> bool {
    fires(event, transition).0
}

/// Where a definition was loaded from, as HOOK-6 sees it: the crate's one
/// [`crate::scope::Scope`] (a built-in agent has no frontmatter hooks).
pub use crate::scope::Scope;

/// HOOK-6 / DEF-6: do the definition's frontmatter hooks run?
///
/// `trusted` is whether the workspace trust dialog was accepted for the folder that holds
/// the agent file (a parent folder's trust does not count; an `--add-dir` folder needs its
/// own); `interactive` is false for `-p` and SDK sessions, which never count as trusted.
/// Returns the answer, the rule, and the debug-log text when hooks are skipped for lack of
/// trust. User, `--agents` and managed definitions need no trust; plugin definitions have
/// their `hooks` ignored (DEF-6). Before v2.1.218 hooks ran untrusted, non-interactive
/// sessions included.
pub fn frontmatter_hooks_run(
    scope: Scope,
    trusted: bool,
    interactive: bool,
    gates: &Gates,
) -> (bool, RuleId, Option<&'static str>) {
    if scope == Scope::Plugin {
        return (false, "DEF-6", None);
    }
    if !gates.frontmatter_hooks_need_trust || scope != Scope::Project {
        return (true, "HOOK-6", None);
    }
    if trusted && interactive {
        (true, "HOOK-6", None)
    } else {
        // HOOK-6: the subagent still runs; only its hooks are skipped, with a debug log.
        (false, "HOOK-6", Some(messages::HOOK_TRUST_DEBUG_LOG))
    }
}

/// HOOK-1 / SPAWN-11: do `SubagentStart` and `SubagentStop` fire for a run? HOOK-1 has
/// them fire "when a subagent begins execution" and "when it completes"; an agent-team
/// teammate is launched "instead of a subagent" (SPAWN-11), so they do not fire for it
/// (docs/decisions.md). The rule is the one that decided.
pub fn lifecycle_fires_for(teammate: bool) -> (bool, RuleId) {
    if teammate {
        (false, "SPAWN-11")
    } else {
        (true, "HOOK-1")
    }
}

/// DEF-16 / HOOK-4: are a definition's own frontmatter hooks applied to a run of it? A
/// definition reused as a teammate type has only "parts of it applied" (DEF-16, whose
/// details are outside the seeds), and HOOK-4 names where frontmatter hooks fire: a
/// subagent of the definition (spawned with the Agent tool or an @-mention) and the main
/// session run as the agent. A teammate is neither, so they are not applied to it; it
/// says so once, at its start, with the returned text (docs/decisions.md). A subagent's
/// are decided by [`frontmatter_hooks_run`].
pub fn frontmatter_hooks_apply(teammate: bool) -> (bool, RuleId, Option<&'static str>) {
    if teammate {
        (false, "DEF-16", Some(messages::TEAMMATE_HOOKS_NOT_APPLIED))
    } else {
        (true, "HOOK-4", None)
    }
}

/// Where a registered hook came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookOrigin {
    /// Settings files, managed policy or a plugin's hooks (HOOK-1).
    Session,
    /// A subagent definition's `hooks` field (HOOK-4).
    Frontmatter,
    /// The `hooks` field of the definition the main session runs as (`--agent` or the
    /// `agent` setting): HOOK-4 says they fire alongside the `settings.json` hooks.
    SessionAgent,
}

/// HOOK-1 / HOOK-4: is a hook of `origin` active for an event?
///
/// Session hooks apply everywhere, inside subagents too. A frontmatter hook applies only
/// to events of its own subagent's run (`event_from_owner`) while that run is active
/// (`owner_running`) — the project reads "only while that subagent is active" as scoped to
/// that subagent. An engine checks a finishing run's `SubagentStop` before it cleans the
/// hooks up. The session agent's hooks (`--agent`) are active for the whole session, the
/// time that agent runs (HOOK-4).
pub fn applies(origin: HookOrigin, owner_running: bool, event_from_owner: bool) -> (bool, RuleId) {
    match origin {
        HookOrigin::Session => (true, "HOOK-1"),
        HookOrigin::Frontmatter => (owner_running && event_from_owner, "HOOK-4"),
        HookOrigin::SessionAgent => (owner_running, "HOOK-4"),
    }
}

/// HOOK-4: is an occasion one the session agent's own hooks see? They run alongside the
/// `settings.json` hooks, in the main conversation: they see main's own tool calls and the
/// `SubagentStart` / `SubagentStop` of every subagent (the lifecycle events are the main
/// session's, HOOK-1's table), but not a subagent's own tool calls — HOOK-1 names settings
/// files, managed policy and plugins as the hooks that apply inside subagents, and a
/// frontmatter hook runs only while its own agent is active (docs/decisions.md).
pub fn session_agent_sees(occasion: &Occasion<'_>, call_by_main: bool) -> (bool, RuleId) {
    (occasion.lifecycle || call_by_main, "HOOK-4")
}

/// What a registered hook is checked against: a lifecycle event of a run, or a tool call
/// of one. Build one with [`Occasion::run`] or [`Occasion::tool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occasion<'a> {
    /// The event happening: `SubagentStart` / `SubagentStop` of a run, `PreToolUse` /
    /// `PostToolUse` of a call.
    pub event: HookEvent,
    /// What a matcher selects: the run's agent type (HOOK-2/3, HOOK-8) or the tool's name.
    pub subject: &'a str,
    /// The rule the event fires by: [`fires`]'s for a run transition (HOOK-1, Q-25), HOOK-1
    /// for a tool call.
    pub rule: RuleId,
    /// A run's lifecycle event (a frontmatter hook's matcher is not read for these).
    lifecycle: bool,
}

impl<'a> Occasion<'a> {
    /// `event` of a run of `agent_type` on `transition`, or `None` when the event does not
    /// fire on that transition ([`fires`]: HOOK-1, Q-25, Q-3).
    pub fn run(
        event: HookEvent,
        transition: RunTransition,
        agent_type: &'a str,
    ) -> Option<Occasion<'a>> {
        let (fired, rule) = fires(event, transition);
        fired.then_some(Occasion {
            event,
            subject: agent_type,
            rule,
            lifecycle: true,
        })
    }

    /// `event` (`PreToolUse` or `PostToolUse`) of a call of `tool` (HOOK-1: tool hooks fire
    /// for every call, subagents' included).
    pub fn tool(event: HookEvent, tool: &'a str) -> Occasion<'a> {
        Occasion {
            event,
            subject: tool,
            rule: "HOOK-1",
            lifecycle: false,
        }
    }
}

/// HOOK-1 / HOOK-4 / HOOK-5 / Q-25: does a hook registered by `origin` for `declared`
/// (with `matcher`) fire on `occasion`, and which rule does its `hook_fired` cite?
///
/// A session hook applies everywhere ([`applies`], HOOK-1): it fires when it was declared
/// for the occasion's event and its matcher selects the subject ([`matches()`]), and cites
/// the occasion's rule (Q-25 on a resume or an abnormal end). A frontmatter hook is asked
/// about only for its own run's events while that run is active ([`applies`], HOOK-4; a
/// finishing run's `SubagentStop` is asked before its hooks are cleaned up); its `Stop`
/// listens for `SubagentStop` ([`runtime_event`], HOOK-5); a lifecycle hook of a
/// definition names its one agent, so only a tool hook's matcher is read. It cites HOOK-5
/// when its `Stop` fired as `SubagentStop`, else HOOK-4. Whether a definition's hooks run
/// at all is [`frontmatter_hooks_run`]'s answer (HOOK-6, DEF-6).
///
/// A hook of the session agent (`--agent`, [`HookOrigin::SessionAgent`]) fires like a
/// settings hook — its matcher read on every occasion, its `Stop` left a `Stop` (HOOK-5
/// converts only a subagent's) — and cites HOOK-4; which occasions it sees is
/// [`session_agent_sees`]'s answer.
pub fn hook_fires(
    origin: HookOrigin,
    declared: HookEvent,
    matcher: Option<&str>,
    occasion: &Occasion<'_>,
    gates: &Gates,
) -> Option<RuleId> {
    let (active, rule) = applies(origin, true, true);
    if !active {
        return None;
    }
    match origin {
        HookOrigin::Session => (declared == occasion.event
            && matches(matcher, occasion.subject, gates))
        .then_some(occasion.rule),
        HookOrigin::SessionAgent => {
            let (runtime, _) = runtime_event(declared, false);
            (runtime == occasion.event && matches(matcher, occasion.subject, gates)).then_some(rule)
        }
        HookOrigin::Frontmatter => {
            let (runtime, runtime_rule) = runtime_event(declared, true);
            let selected = occasion.lifecycle || matches(matcher, occasion.subject, gates);
            (runtime == occasion.event && selected).then_some(
                if runtime_rule == crate::id::HOOK_5 {
                    runtime_rule
                } else {
                    rule
                },
            )
        }
    }
}

// ---------------------------------------------------------------------------------------
// The regex subset.

/// A parsed pattern: alternatives of sequences.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Regex {
    alternatives: Vec<Vec<Piece>>,
}

/// One atom with its repetition bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Piece {
    node: Node,
    min: u32,
    /// `None` = unbounded.
    max: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Char(char),
    Any,
    Class {
        items: Vec<ClassItem>,
        negated: bool,
    },
    Start,
    End,
    Group(Regex),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ClassItem {
    Range(char, char),
    Digit(bool),
    Word(bool),
    Space(bool),
}

impl ClassItem {
    fn contains(self, c: char) -> bool {
        match self {
            ClassItem::Range(low, high) => low <= c && c <= high,
            ClassItem::Digit(positive) => c.is_ascii_digit() == positive,
            ClassItem::Word(positive) => (c.is_ascii_alphanumeric() || c == '_') == positive,
            ClassItem::Space(positive) => c.is_whitespace() == positive,
        }
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Regex {
    /// Parses `pattern`, or `None` when the subset cannot read it.
    fn parse(pattern: &str) -> Option<Regex> {
        let mut parser = Parser {
            chars: pattern.chars().collect(),
            at: 0,
        };
        let regex = parser.alternation()?;
        (parser.at == parser.chars.len()).then_some(regex)
    }

    /// Unanchored search: does the pattern match anywhere in `text`?
    fn search(&self, text: &str) -> bool {
        let text: Vec<char> = text.chars().collect();
        (0..=text.len()).any(|start| match_alternation(self, &text, start, &|_| true))
    }
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn alternation(&mut self) -> Option<Regex> {
        let mut alternatives = vec![self.sequence()?];
        while self.peek() == Some('|') {
            self.at += 1;
            alternatives.push(self.sequence()?);
        }
        Some(Regex { alternatives })
    }

    fn sequence(&mut self) -> Option<Vec<Piece>> {
        let mut pieces: Vec<Piece> = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            self.at += 1;
            let node = match c {
                '*' | '+' | '?' => {
                    let last = pieces.last_mut()?;
                    let repeatable = !matches!(last.node, Node::Start | Node::End);
                    if !repeatable || (last.min, last.max) != (1, Some(1)) {
                        // A lazy `?` after a quantifier changes nothing for a yes/no match.
                        if c == '?' && repeatable {
                            continue;
                        }
                        return None;
                    }
                    (last.min, last.max) = match c {
                        '*' => (0, None),
                        '+' => (1, None),
                        _ => (0, Some(1)),
                    };
                    continue;
                }
                '.' => Node::Any,
                '^' => Node::Start,
                '$' => Node::End,
                '(' => {
                    let inner = self.alternation()?;
                    if self.peek() != Some(')') {
                        return None;
                    }
                    self.at += 1;
                    Node::Group(inner)
                }
                '[' => self.class()?,
                '\\' => match self.escape()? {
                    Ok(item) => Node::Class {
                        items: vec![item],
                        negated: false,
                    },
                    Err(literal) => Node::Char(literal),
                },
                other => Node::Char(other),
            };
            pieces.push(Piece {
                node,
                min: 1,
                max: Some(1),
            });
        }
        Some(pieces)
    }

    /// After a `\`: a class escape, or the literal character.
    fn escape(&mut self) -> Option<Result<ClassItem, char>> {
        let c = self.peek()?;
        self.at += 1;
        Some(match c {
            'd' => Ok(ClassItem::Digit(true)),
            'D' => Ok(ClassItem::Digit(false)),
            'w' => Ok(ClassItem::Word(true)),
            'W' => Ok(ClassItem::Word(false)),
            's' => Ok(ClassItem::Space(true)),
            'S' => Ok(ClassItem::Space(false)),
            other => Err(other),
        })
    }

    /// After a `[`: the class up to its `]`.
    fn class(&mut self) -> Option<Node> {
        let negated = self.peek() == Some('^');
        if negated {
            self.at += 1;
        }
        let mut items = Vec::new();
        loop {
            let c = self.peek()?;
            self.at += 1;
            let low = match c {
                ']' => break,
                '\\' => match self.escape()? {
                    Ok(item) => {
                        items.push(item);
                        continue;
                    }
                    Err(literal) => literal,
                },
                other => other,
            };
            let is_range = self.peek() == Some('-')
                && self.chars.get(self.at + 1).is_some_and(|&next| next != ']');
            if is_range {
                self.at += 1;
                let mut high = self.peek()?;
                self.at += 1;
                if high == '\\' {
                    high = self.escape()?.err()?;
                }
                if high < low {
                    return None;
                }
                items.push(ClassItem::Range(low, high));
            } else {
                items.push(ClassItem::Range(low, low));
            }
        }
        Some(Node::Class { items, negated })
    }
}

type Continuation<'a> = &'a dyn Fn(usize) -> bool;

fn match_alternation(regex: &Regex, text: &[char], at: usize, then: Continuation<'_>) -> bool {
    regex
        .alternatives
        .iter()
        .any(|sequence| match_sequence(sequence, text, at, then))
}

fn match_sequence(pieces: &[Piece], text: &[char], at: usize, then: Continuation<'_>) -> bool {
    match pieces.split_first() {
        None => then(at),
        Some((piece, rest)) => match_piece(piece, 0, text, at, &|next| {
            match_sequence(rest, text, next, then)
        }),
    }
}

/// Greedy repetition with backtracking; an iteration that matches nothing ends the loop
/// once the minimum is met, so `(a*)*` terminates.
fn match_piece(
    piece: &Piece,
    count: u32,
    text: &[char],
    at: usize,
    then: Continuation<'_>,
) -> bool {
    if piece.max.is_none_or(|max| count < max) {
        let more = match_node(&piece.node, text, at, &|next| {
            if next == at && count >= piece.min {
                return false;
            }
            match_piece(piece, count + 1, text, next, then)
        });
        if more {
            return true;
        }
    }
    count >= piece.min && then(at)
}

fn match_node(node: &Node, text: &[char], at: usize, then: Continuation<'_>) -> bool {
    match node {
        Node::Char(c) => text.get(at) == Some(c) && then(at + 1),
        Node::Any => at < text.len() && then(at + 1),
        Node::Class { items, negated } => text.get(at).is_some_and(|&c| {
            items.iter().any(|item| item.contains(c)) != *negated && then(at + 1)
        }),
        Node::Start => at == 0 && then(at),
        Node::End => at == text.len() && then(at),
        Node::Group(inner) => match_alternation(inner, text, at, then),
    }
}

/// HOOK-7: does a tool call's hooks block it? A `PreToolUse` hook that exits with code 2
/// (`a_hook_exits_2`, among those that fired) blocks the call and its stderr goes back to
/// the agent; no other event blocks a call.
pub fn blocks_call(event: HookEvent, a_hook_exits_2: bool) -> Option<RuleId> {
    (event == HookEvent::PreToolUse && a_hook_exits_2).then_some("HOOK-7")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;

    fn gates(patch: u32) -> Gates {
        Gates::for_version(Version::v2_1(patch))
    }

    /// Checks a matcher against an agent type at a version: match, kind and rule.
    fn check(
        matcher: Option<&str>,
        agent_type: &str,
        patch: u32,
        matched: bool,
        kind: MatcherKind,
        rule: RuleId,
    ) {
        assert_eq!(
            match_agent_type(matcher, agent_type, &gates(patch)),
            MatchDecision {
                matched,
                kind,
                rule
            },
            "{matcher:?} vs {agent_type:?} at 2.1.{patch}"
        );
    }

    #[test]
    fn documented_matcher_rows() {
        use MatcherKind::*;
        // HOOK-2: omitted matches all.
        check(None, "anything", 292, true, All, "HOOK-2");
        check(Some(""), "anything", 292, true, All, "HOOK-2");
        check(Some("*"), "anything", 292, true, All, "HOOK-2");
        // HOOK-3: hyphenated names, both sides of v2.1.195.
        check(Some("db-agent"), "db-agent", 195, true, Exact, "HOOK-3");
        check(
            Some("db-agent"),
            "prod-db-agent",
            195,
            false,
            Exact,
            "HOOK-3",
        );
        check(Some("db-agent"), "db-agent", 194, true, Regex, "HOOK-3");
        check(
            Some("db-agent"),
            "prod-db-agent",
            194,
            true,
            Regex,
            "HOOK-3",
        );
        check(
            Some("^db-agent$"),
            "prod-db-agent",
            194,
            false,
            Regex,
            "HOOK-3",
        );
        // Plain names without hyphens were always exact.
        check(Some("reviewer"), "reviewer", 194, true, Exact, "HOOK-2");
        check(
            Some("reviewer"),
            "code-reviewer",
            194,
            false,
            Exact,
            "HOOK-2",
        );
        check(Some("Explore|Plan"), "Plan", 292, true, Exact, "HOOK-2");
        // HOOK-2: a scoped id is an unanchored regex; anchor it to select one agent.
        check(
            Some("my-plugin:db-agent"),
            "my-plugin:db-agent",
            292,
            true,
            Regex,
            "HOOK-3",
        );
        check(
            Some("my-plugin:db-agent"),
            "my-plugin:db-agent-v2",
            292,
            true,
            Regex,
            "HOOK-3",
        );
        check(
            Some("^my-plugin:db-agent$"),
            "my-plugin:db-agent-v2",
            292,
            false,
            Regex,
            "HOOK-3",
        );
        check(Some("plug:x"), "plug:x", 292, true, Regex, "HOOK-2");
        check(Some("plug:x"), "other:plug:xy", 292, true, Regex, "HOOK-2");
        // Malformed regexes are literal text.
        check(Some("a:(b"), "x a:(b y", 292, true, Literal, "HOOK-2");
        check(Some("a:(b"), "a:b", 292, false, Literal, "HOOK-2");
    }

    fn search(pattern: &str, text: &str) -> Option<bool> {
        Regex::parse(pattern).map(|regex| regex.search(text))
    }

    #[test]
    fn regex_subset() {
        let rows: &[(&str, &str, Option<bool>)] = &[
            ("abc", "xabcx", Some(true)),
            ("^abc", "xabc", Some(false)),
            ("abc$", "abcx", Some(false)),
            ("^a.c$", "abc", Some(true)),
            ("^a.*c$", "a-long-c", Some(true)),
            ("^a.*c$", "a-long-d", Some(false)),
            ("^ab+c$", "ac", Some(false)),
            ("^ab+c$", "abbc", Some(true)),
            ("^ab?c$", "ac", Some(true)),
            // `?` and a plain atom match at most once; `.` needs a character.
            ("^ab?c$", "abbc", Some(false)),
            ("^abc$", "abbc", Some(false)),
            ("a.", "a", Some(false)),
            ("^ab*?c$", "abbc", Some(true)),
            ("^(db|api)-agent$", "api-agent", Some(true)),
            ("^(db|api)-agent$", "web-agent", Some(false)),
            ("^x|y$", "xz", Some(true)),
            ("^x|y$", "zy", Some(true)),
            ("^[a-c]+$", "abcab", Some(true)),
            ("^[a-c]+$", "abd", Some(false)),
            ("^[^:]+$", "plain", Some(true)),
            ("^[^:]+$", "p:x", Some(false)),
            // The `^` that negates a class is not one of its members.
            ("^[^:]+$", "a^b", Some(true)),
            ("^[^:]+$", "a[b", Some(true)),
            ("^\\w+:\\w+$", "p:x_1", Some(true)),
            ("^v\\d$", "v7", Some(true)),
            ("^a\\sb$", "a b", Some(true)),
            ("^a\\sb$", "axb", Some(false)),
            ("^a\\Sb$", "a b", Some(false)),
            ("^a\\Sb$", "axb", Some(true)),
            ("a\\.b", "a.b", Some(true)),
            ("a\\.b", "axb", Some(false)),
            ("^a{2}$", "a{2}", Some(true)),
            ("^(a*)*$", "aaa", Some(true)),
            ("^(a*)*b$", "aaac", Some(false)),
            ("^(a?)+$", "", Some(true)),
            ("[a-]", "-", Some(true)),
            // A range takes its two ends and nothing else; an end may be escaped, and a
            // one-character range `a-a` is a range.
            ("^[a-c]$", "-", Some(false)),
            ("^[!-\\/]$", "/", Some(true)),
            ("^[!-\\/]$", "A", Some(false)),
            ("^[a-a]$", "a", Some(true)),
            ("", "x", Some(true)),
            // Unparseable.
            ("(ab", "ab", None),
            ("ab)", "ab", None),
            ("[ab", "a", None),
            ("*a", "a", None),
            ("a**", "a", None),
            ("^*", "a", None),
            ("a\\", "a", None),
            ("[z-a]", "a", None),
        ];
        for (pattern, text, expected) in rows {
            assert_eq!(search(pattern, text), *expected, "{pattern:?} on {text:?}");
        }
    }

    #[test]
    fn stop_becomes_subagent_stop() {
        assert_eq!(
            runtime_event(HookEvent::Stop, true),
            (HookEvent::SubagentStop, "HOOK-5")
        );
        assert_eq!(
            runtime_event(HookEvent::Stop, false),
            (HookEvent::Stop, "HOOK-4")
        );
        assert_eq!(
            runtime_event(HookEvent::PreToolUse, true),
            (HookEvent::PreToolUse, "HOOK-4")
        );
        for name in [
            "SubagentStart",
            "SubagentStop",
            "Stop",
            "PreToolUse",
            "PostToolUse",
        ] {
            assert_eq!(HookEvent::parse(name).as_str(), name);
        }
        assert_eq!(HookEvent::parse("Notification"), HookEvent::Other);
    }

    #[test]
    fn firing_table_q_25() {
        use HookEvent::{PreToolUse, SubagentStart, SubagentStop};
        use RunTransition::*;
        let rows = [
            (SubagentStart, Start, true, "HOOK-1"),
            (SubagentStart, Resume, true, "Q-25"),
            (SubagentStart, End(Outcome::Completed), false, "HOOK-1"),
            (SubagentStart, Reject, false, "Q-3"),
            (SubagentStop, End(Outcome::Completed), true, "HOOK-1"),
            (SubagentStop, End(Outcome::Partial), true, "HOOK-1"),
            (SubagentStop, End(Outcome::Failed), true, "Q-25"),
            (SubagentStop, End(Outcome::Stopped), true, "Q-25"),
            (SubagentStop, End(Outcome::Cancelled), true, "Q-25"),
            (SubagentStop, Start, false, "HOOK-1"),
            (SubagentStop, Reject, false, "Q-3"),
            (PreToolUse, Start, false, "HOOK-1"),
        ];
        for (event, transition, fired, rule) in rows {
            assert_eq!(
                fires(event, transition),
                (fired, rule),
                "{event:?} on {transition:?}"
            );
            assert_eq!(fires_on(event, transition), fired);
        }
    }

    #[test]
    fn trust_rows_hook_6() {
        use Scope::*;
        let log = Some(messages::HOOK_TRUST_DEBUG_LOG);
        let rows = [
            // scope, trusted, interactive, version, runs, rule, log
            (Project, true, true, 218, true, "HOOK-6", None),
            (Project, false, true, 218, false, "HOOK-6", log),
            (Project, true, false, 218, false, "HOOK-6", log),
            (Project, false, false, 217, true, "HOOK-6", None),
            (Project, false, true, 217, true, "HOOK-6", None),
            (User, false, false, 218, true, "HOOK-6", None),
            (Cli, false, false, 292, true, "HOOK-6", None),
            (Managed, false, true, 292, true, "HOOK-6", None),
            (Plugin, true, true, 292, false, "DEF-6", None),
            (Plugin, true, true, 200, false, "DEF-6", None),
        ];
        for (scope, trusted, interactive, patch, runs, rule, debug) in rows {
            assert_eq!(
                frontmatter_hooks_run(scope, trusted, interactive, &gates(patch)),
                (runs, rule, debug),
                "{scope:?} trusted={trusted} interactive={interactive} 2.1.{patch}"
            );
        }
    }

    #[test]
    fn session_and_frontmatter_scope() {
        assert_eq!(applies(HookOrigin::Session, false, false), (true, "HOOK-1"));
        assert_eq!(
            applies(HookOrigin::Frontmatter, true, true),
            (true, "HOOK-4")
        );
        assert_eq!(
            applies(HookOrigin::Frontmatter, false, true),
            (false, "HOOK-4")
        );
        assert_eq!(
            applies(HookOrigin::Frontmatter, true, false),
            (false, "HOOK-4")
        );
        assert_eq!(
            agent_type("my-plugin:db-agent"),
            ("my-plugin:db-agent", "HOOK-8")
        );
    }

    #[test]
    fn which_hooks_fire_and_the_rule_they_cite() {
        use HookEvent::*;
        use HookOrigin::{Frontmatter, Session};
        let gates = gates(292);
        let start = Occasion::run(SubagentStart, RunTransition::Start, "db-agent").unwrap();
        let resume = Occasion::run(SubagentStart, RunTransition::Resume, "db-agent").unwrap();
        let done = Occasion::run(
            SubagentStop,
            RunTransition::End(Outcome::Completed),
            "db-agent",
        )
        .unwrap();
        let failed = Occasion::run(
            SubagentStop,
            RunTransition::End(Outcome::Failed),
            "db-agent",
        )
        .unwrap();
        let bash = Occasion::tool(PreToolUse, "Bash");
        let after = Occasion::tool(PostToolUse, "Bash");
        // a rejected spawn is no occasion at all.
        assert_eq!(
            Occasion::run(SubagentStart, RunTransition::Reject, "db-agent"),
            None
        );
        type Row<'a> = (
            HookOrigin,
            HookEvent,
            Option<&'a str>,
            &'a Occasion<'a>,
            Option<RuleId>,
        );
        let rows: [Row; 16] = [
            // HOOK-1: session hooks, matched on the agent type; Q-25 on a resume or a failure.
            (
                Session,
                SubagentStart,
                Some("db-agent"),
                &start,
                Some("HOOK-1"),
            ),
            (Session, SubagentStart, Some("web-agent"), &start, None),
            (Session, SubagentStart, None, &resume, Some("Q-25")),
            (Session, SubagentStop, None, &done, Some("HOOK-1")),
            (Session, SubagentStop, None, &failed, Some("Q-25")),
            (Session, SubagentStop, None, &start, None),
            // A session `Stop` is not a subagent's event (HOOK-5 is for frontmatter).
            (Session, Stop, None, &done, None),
            // HOOK-1: tool hooks, matched on the tool's name.
            (Session, PreToolUse, Some("Bash"), &bash, Some("HOOK-1")),
            (Session, PreToolUse, Some("Edit"), &bash, None),
            (Session, PostToolUse, None, &bash, None),
            // HOOK-4: a definition's own hooks; its lifecycle hooks have no matcher to read.
            (
                Frontmatter,
                SubagentStart,
                Some("other"),
                &start,
                Some("HOOK-4"),
            ),
            (Frontmatter, SubagentStop, None, &failed, Some("HOOK-4")),
            // HOOK-5: frontmatter `Stop` fires as `SubagentStop`.
            (Frontmatter, Stop, None, &done, Some("HOOK-5")),
            (Frontmatter, Stop, None, &start, None),
            (
                Frontmatter,
                PostToolUse,
                Some("Bash"),
                &after,
                Some("HOOK-4"),
            ),
            (Frontmatter, PostToolUse, Some("Edit"), &after, None),
        ];
        for (origin, declared, matcher, occasion, rule) in rows {
            assert_eq!(
                hook_fires(origin, declared, matcher, occasion, &gates),
                rule,
                "{origin:?} {declared:?} {matcher:?} on {occasion:?}"
            );
        }
    }

    #[test]
    fn matches_is_the_decision_s_answer() {
        // A mutant `cargo mutants` found alive (docs/TESTING.md): the thin wrapper.
        let gates = Gates::for_version(crate::Version::NEWEST);
        assert!(matches(Some("db-agent"), "db-agent", &gates));
        assert!(!matches(Some("db-agent"), "web-agent", &gates));
        assert!(matches(None, "anything", &gates));
    }

    #[test]
    fn only_a_pre_tool_use_hook_exiting_2_blocks_a_call() {
        assert_eq!(blocks_call(HookEvent::PreToolUse, true), Some("HOOK-7"));
        assert_eq!(blocks_call(HookEvent::PreToolUse, false), None);
        assert_eq!(blocks_call(HookEvent::PostToolUse, true), None);
    }

    #[test]
    fn session_agent_hooks_fire_alongside_settings_hooks_hook_4() {
        let gates = gates(292);
        let start = Occasion::run(HookEvent::SubagentStart, RunTransition::Start, "worker")
            .expect("SubagentStart fires on a start");
        let fires = |declared, matcher, occasion: &Occasion<'_>| {
            hook_fires(
                HookOrigin::SessionAgent,
                declared,
                matcher,
                occasion,
                &gates,
            )
        };
        // Like a settings hook: the matcher is read, and the hook cites HOOK-4.
        assert_eq!(
            fires(HookEvent::SubagentStart, None, &start),
            Some("HOOK-4")
        );
        assert_eq!(
            fires(HookEvent::SubagentStart, Some("worker"), &start),
            Some("HOOK-4")
        );
        assert_eq!(fires(HookEvent::SubagentStart, Some("other"), &start), None);
        // Its `Stop` is main's own and stays `Stop` (HOOK-5 converts only a subagent's).
        let stop = Occasion::run(
            HookEvent::SubagentStop,
            RunTransition::End(Outcome::Completed),
            "worker",
        )
        .expect("SubagentStop fires on a completion");
        assert_eq!(fires(HookEvent::Stop, None, &stop), None);
        assert_eq!(fires(HookEvent::SubagentStop, None, &stop), Some("HOOK-4"));
        // Tool hooks: main's own calls, matched on the tool name; not a subagent's calls.
        let bash = Occasion::tool(HookEvent::PreToolUse, "Bash");
        assert_eq!(
            fires(HookEvent::PreToolUse, Some("Bash"), &bash),
            Some("HOOK-4")
        );
        assert_eq!(fires(HookEvent::PreToolUse, Some("Edit"), &bash), None);
        assert_eq!(session_agent_sees(&bash, true), (true, "HOOK-4"));
        assert_eq!(session_agent_sees(&bash, false), (false, "HOOK-4"));
        assert_eq!(session_agent_sees(&start, false), (true, "HOOK-4"));
        assert_eq!(
            applies(HookOrigin::SessionAgent, true, false),
            (true, "HOOK-4")
        );
    }

    #[test]
    fn forks_are_matched_as_the_fork_type_hook_2() {
        let gates = gates(292);
        assert_eq!(lifecycle_agent_type(None), ("fork", "HOOK-2"));
        assert_eq!(
            lifecycle_agent_type(Some("db-agent")),
            ("db-agent", "HOOK-8")
        );
        let (fork, _) = lifecycle_agent_type(None);
        assert!(matches(None, fork, &gates));
        assert!(matches(Some("fork"), fork, &gates));
        assert!(!matches(Some("db-agent"), fork, &gates));
    }

    /// SPAWN-11 / HOOK-1 / DEF-16: a teammate gets no `SubagentStart`/`SubagentStop` and
    /// none of its definition's hooks; a subagent gets both.
    #[test]
    fn a_teammate_is_not_a_subagent_for_hooks() {
        assert_eq!(lifecycle_fires_for(true), (false, "SPAWN-11"));
        assert_eq!(lifecycle_fires_for(false), (true, "HOOK-1"));
        let (applies, rule, why) = frontmatter_hooks_apply(true);
        assert_eq!((applies, rule), (false, "DEF-16"));
        assert!(why.is_some_and(|why| why.contains("teammate")));
        assert_eq!(frontmatter_hooks_apply(false), (true, "HOOK-4", None));
    }
}
