//! MODEL — which model and which effort level a subagent runs on (rules.md §12, with
//! RESUME-14/15, FORK-11, SPAWN-9/10, D-4, D-12, Q-40 and Q-43).
//!
//! The full resolution is [`choose`]: it takes a [`ModelRequest`] (everything the rules
//! read, as plain values) and returns a [`ModelChoice`] — the model, the rule that decided,
//! the steps that explain it, and MODEL-7's interactive warning when the allowlist
//! substituted a model. [`resolve_effort`] does the same for MODEL-14's effort order.
//! [`resolve`] is the older MODEL-2-only core that the engine still calls; it shares the
//! source order with [`choose`].
//!
//! This module is not for parsing settings or env vars from files (the scenario crate
//! does that), and it does not know which models exist: the alias targets below are
//! placeholders, because the seeds give only example IDs.
//!
//! # How [`choose`] decides
//! 1. A fork runs on the main model (FORK-5), also under FORCE (FORK-11).
//! 2. `CLAUDE_CODE_SUBAGENT_MODEL_FORCE` (v2.1.257+, MODEL-8) replaces everything below.
//! 3. Before v2.1.196 `CLAUDE_CODE_SUBAGENT_MODEL=inherit` forces the main model (MODEL-5).
//! 4. The sources in MODEL-2's order — per-invocation (or the mod hook's model, MODEL-3;
//!    dropped on a resume before v2.1.211, RESUME-14), the definition (or the built-in's
//!    own model: MODEL-12, MODEL-13, SPAWN-9, SPAWN-10), the env var (not for the built-in
//!    Explore and Plan, MODEL-6), the main model — env first before v2.1.251.
//! 5. The winning value is settled: `inherit` → main; a family alias → the exact main
//!    model (MODEL-4) or the alias target; then the `availableModels` check (MODEL-7,
//!    Q-43).
//!
//! # Decisions where the catalog is ambiguous
//! - **Q-40 / D-4** (Explore's model): ES's rule by default. DE's "capped at Opus on the
//!   Claude API" is [`ExploreRule::DeOpusCap`], honoured only where
//!   [`Gates::explore_opus_cap_option`] is on (v2.1.198–v2.1.271, the versions DE
//!   documents); elsewhere it falls back to ES with a step saying so. The two differ only
//!   where the providers differ: DE's "Claude API" is [`Provider::is_anthropic_api`], so a
//!   gateway reached via `ANTHROPIC_BASE_URL` inherits directly under DE but gets the
//!   `opus` target for a Fable main under ES; and DE caps any tier above Opus, ES names
//!   only Fable (the same thing for the four known families).
//! - **Q-43** (MODEL-7's "tries `CLAUDE_CODE_SUBAGENT_MODEL` first"): the adopted default —
//!   a blocked per-invocation or definition value first gets its own family substitution
//!   (the table's first row), then the env-var model if it is set and allowed after its own
//!   family substitution, then the inherited (main) model.
//! - MODEL-4 (b)'s "provider other than the Anthropic API" is read literally: everything
//!   but [`Provider::is_anthropic_api`], so an `ANTHROPIC_BASE_URL` gateway counts as
//!   "other" (its model IDs may be anything, which is exactly (b)'s situation).
//! - MODEL-3: the mod hook's model takes the per-invocation parameter's place, so MODEL-4
//!   and the allowlist treat it as the parameter. FORCE beats it ("one model for every
//!   subagent").
//! - MODEL-6 is applied at every version, also to MODEL-5's pre-2.1.196 forcing: the env
//!   var alone never moves the built-in Explore and Plan.
//! - A per-invocation model still beats the built-in Explore's and Plan's own model
//!   (MODEL-2 puts the parameter first for every subagent), also before v2.1.198 when
//!   Explore otherwise "always" ran on Haiku.
//! - Built-in fixed models (statusline-setup's Sonnet, claude-code-guide's Haiku,
//!   Explore's Haiku or `opus` target) stand in for a frontmatter value: they follow the
//!   order and the allowlist, but not MODEL-4 (which names only the parameter and the
//!   frontmatter), so they resolve to the alias target.
//! - MODEL-7 allowlist matching: an entry allows a value when it names the same model
//!   (ignoring case and a `[1m]` suffix) or the value's alias target, or when the entry is
//!   a family alias and the value belongs to that family. "Providers where substitution
//!   does not operate" are not named by the seeds, so the caller says so with
//!   [`ModelRequest::substitution_unavailable`].
//! - A skill running in a subagent with `model: inherit` takes the definition's place
//!   when FORCE is off; under FORCE it runs on the main model (MODEL-8).
//! - The inherited model is the main conversation's model, with aliases expanded to their
//!   targets (a `[1m]` suffix kept), so every answer is a model ID.

use crate::{gates_table, Gates, RuleId};
use std::fmt;
use std::str::FromStr;

/// The suffix that selects a model's extended context window (MODEL-4 keeps it).
pub const LONG_CONTEXT_SUFFIX: &str = "[1m]";

/// Splits a model value into its base and its `[1m]` suffix (empty when absent).
pub fn split_suffix(model: &str) -> (&str, &str) {
    match model.strip_suffix(LONG_CONTEXT_SUFFIX) {
        Some(base) => (base, LONG_CONTEXT_SUFFIX),
        None => (model, ""),
    }
}

crate::vocabulary! {
    /// A model family, named by its alias (MODEL-1: `sonnet`, `opus`, `haiku`, `fable`).
    ///
    /// `ALL` lists every family, cheapest tier first.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Family {
        /// `haiku`.
        Haiku,
        /// `sonnet`.
        Sonnet,
        /// `opus`.
        Opus,
        /// `fable`, the tier above Opus (ES's MODEL-12 caps a Fable main at Opus for Explore).
        Fable,
    }
}

impl Family {
    /// The alias that names the family.
    pub fn alias(self) -> &'static str {
        match self {
            Family::Haiku => "haiku",
            Family::Sonnet => "sonnet",
            Family::Opus => "opus",
            Family::Fable => "fable",
        }
    }

    /// What the alias resolves to. **Placeholders** (SET-4, a setting of the project): the
    /// seeds give only example IDs (ES `claude-opus-5-5`, `claude-sonnet-5`); the Haiku and
    /// Fable IDs are invented.
    pub fn placeholder_target(self) -> &'static str {
        match self {
            Family::Haiku => "claude-haiku-4-5",
            Family::Sonnet => "claude-sonnet-5",
            Family::Opus => "claude-opus-5-5",
            Family::Fable => "claude-fable-1",
        }
    }

    /// The family a bare alias names (case-insensitive, no suffix), if any.
    pub fn from_alias(text: &str) -> Option<Family> {
        Family::ALL
            .into_iter()
            .find(|family| text.eq_ignore_ascii_case(family.alias()))
    }

    /// The family of a model value: an alias (with or without `[1m]`), or a full ID that
    /// contains the word `claude` and a family word, such as `claude-opus-5-5[1m]` or
    /// `us.anthropic.claude-sonnet-5-v1:0`. `None` when it cannot be told, e.g. a Bedrock
    /// application inference-profile ARN (MODEL-4 (b)).
    pub fn of(model: &str) -> Option<Family> {
        let base = split_suffix(model.trim()).0;
        if let Some(family) = Family::from_alias(base) {
            return Some(family);
        }
        let words: Vec<&str> = base
            .split(['-', '.', ':', '/', '_'])
            .filter(|word| !word.is_empty())
            .collect();
        if !words.iter().any(|word| word.eq_ignore_ascii_case("claude")) {
            return None;
        }
        words.iter().find_map(|word| Family::from_alias(word))
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.alias())
    }
}

/// Expands an alias (keeping a `[1m]` suffix) to its target; any other value is returned
/// as given. `opus` resolves to `ANTHROPIC_DEFAULT_OPUS_MODEL` when that is set (MODEL-4).
pub fn expand_alias(value: &str, default_opus_model: Option<&str>) -> String {
    let (base, suffix) = split_suffix(value.trim());
    let target = match (Family::from_alias(base), default_opus_model) {
        (Some(Family::Opus), Some(pinned)) => pinned.trim(),
        (Some(family), _) => family.placeholder_target(),
        (None, _) => return value.trim().to_string(),
    };
    format!("{target}{suffix}")
}

crate::vocabulary! {
    /// How Claude Code reaches the model (MODEL-4 (b), MODEL-7, MODEL-12).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub enum Provider {
        /// The Anthropic API with an API key.
        #[default]
        AnthropicApi => "anthropic-api",
        /// A Claude subscription.
        Subscription => "subscription",
        /// An Anthropic Console account.
        Console => "console",
        /// An LLM gateway reached via `ANTHROPIC_BASE_URL`.
        Gateway => "gateway",
        /// Amazon Bedrock.
        Bedrock => "bedrock",
        /// Google Cloud's Agent Platform.
        AgentPlatform => "agent-platform",
        /// Microsoft Foundry.
        Foundry => "foundry",
        /// Claude Platform on AWS.
        ClaudePlatformOnAws => "claude-platform-on-aws",
        /// A Claude apps gateway.
        ClaudeAppsGateway => "claude-apps-gateway",
    }
}

impl Provider {
    /// A direct connection to Anthropic: the API, a subscription or a Console account.
    /// This is "the Anthropic API" of MODEL-4 (b) and DE's "Claude API" of MODEL-12.
    pub fn is_anthropic_api(self) -> bool {
        matches!(
            self,
            Provider::AnthropicApi | Provider::Subscription | Provider::Console
        )
    }

    /// ES's MODEL-12 list of connections on which a Fable main sends Explore to the `opus`
    /// alias target: the direct ones plus an `ANTHROPIC_BASE_URL` gateway.
    pub fn fable_explore_uses_opus(self) -> bool {
        self.is_anthropic_api() || self == Provider::Gateway
    }
}

impl FromStr for Provider {
    type Err = ();

    /// Parses [`Provider::as_str`]'s spelling.
    fn from_str(text: &str) -> Result<Provider, ()> {
        Provider::ALL
            .into_iter()
            .find(|provider| provider.as_str() == text)
            .ok_or(())
    }
}

crate::vocabulary! {
    /// The built-in subagent types (SPAWN-9).
    ///
    /// `ALL` lists every built-in, in SPAWN-9's order.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum BuiltIn {
        /// `Explore`: MODEL-12.
        Explore,
        /// `Plan`: inherits the main model unless the env var is set and forced (MODEL-13).
        Plan,
        /// `general-purpose`: the env var if nothing else assigns a model, else main (MODEL-13).
        GeneralPurpose,
        /// `claude`: no model of its own; follows the order (MODEL-13).
        Claude,
        /// `statusline-setup`: Sonnet (SPAWN-9).
        StatuslineSetup,
        /// `claude-code-guide`: Haiku (SPAWN-9).
        ClaudeCodeGuide,
    }
}

impl BuiltIn {
    /// The type name Claude passes as `subagent_type`.
    pub fn name(self) -> &'static str {
        match self {
            BuiltIn::Explore => "Explore",
            BuiltIn::Plan => "Plan",
            BuiltIn::GeneralPurpose => "general-purpose",
            BuiltIn::Claude => "claude",
            BuiltIn::StatuslineSetup => "statusline-setup",
            BuiltIn::ClaudeCodeGuide => "claude-code-guide",
        }
    }

    /// Every built-in, in the order a session registers them (the simulator's type table
    /// and `subsim tools` list them so).
    pub const REGISTRATION: [BuiltIn; 6] = [
        BuiltIn::GeneralPurpose,
        BuiltIn::Explore,
        BuiltIn::Plan,
        BuiltIn::Claude,
        BuiltIn::StatuslineSetup,
        BuiltIn::ClaudeCodeGuide,
    ];

    /// SPAWN-9: the tools the built-in's definition disallows (Explore and Plan are
    /// read-only).
    pub fn disallowed_tools(self) -> &'static [&'static str] {
        match self {
            BuiltIn::Explore | BuiltIn::Plan => &["Write", "Edit"],
            BuiltIn::GeneralPurpose
            | BuiltIn::Claude
            | BuiltIn::StatuslineSetup
            | BuiltIn::ClaudeCodeGuide => &[],
        }
    }

    /// SPAWN-9: the model alias the built-in's definition names, if it names one
    /// (statusline-setup: Sonnet; claude-code-guide: Haiku).
    pub fn definition_model(self) -> Option<&'static str> {
        match self {
            BuiltIn::StatuslineSetup => Some("sonnet"),
            BuiltIn::ClaudeCodeGuide => Some("haiku"),
            _ => None,
        }
    }

    /// RESUME-3: Explore and Plan are one-shot: they return no agent ID, so SendMessage
    /// cannot resume them.
    pub fn one_shot(self) -> bool {
        matches!(self, BuiltIn::Explore | BuiltIn::Plan)
    }

    /// The built-in with this type name, if any (exact match).
    pub fn from_name(name: &str) -> Option<BuiltIn> {
        BuiltIn::ALL
            .into_iter()
            .find(|built_in| built_in.name() == name)
    }
}

/// What kind of definition the subagent runs from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DefinitionKind {
    /// A user, project, plugin, managed or `--agents` definition; its `model` field is
    /// [`ModelRequest::definition`].
    #[default]
    Custom,
    /// The built-in itself; [`ModelRequest::definition`] is ignored, the built-in's own
    /// model applies (SPAWN-9, MODEL-12, MODEL-13).
    BuiltIn(BuiltIn),
    /// A user or project definition that overrides a built-in of the same name and keeps
    /// its own `model` field (SPAWN-10), e.g. a custom `Explore` with `model: haiku`.
    Overrides(BuiltIn),
}

/// Which reading of Explore's model applies (MODEL-12, D-4, Q-40).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ExploreRule {
    /// ES (newest, the Q-40 default): the main model, except that a Fable main on a
    /// [`Provider::fable_explore_uses_opus`] connection runs Explore on the `opus` target.
    #[default]
    Es,
    /// DE: the main model capped at Opus on the Claude API ([`Provider::is_anthropic_api`]);
    /// other providers inherit directly. Honoured only where
    /// [`Gates::explore_opus_cap_option`] is on; elsewhere ES applies.
    DeOpusCap,
}

/// Everything the model rules read for one subagent run, as plain values.
///
/// Build one with [`ModelRequest::new`] and struct-update syntax.
#[derive(Clone, Copy, Debug)]
pub struct ModelRequest<'a> {
    /// The per-invocation `model` parameter. On a resume, the value the original run was
    /// given (RESUME-14 decides whether it still applies).
    pub invocation: Option<&'a str>,
    /// The definition's `model` field (`Custom` and `Overrides` definitions only).
    pub definition: Option<&'a str>,
    /// Whether the definition is custom, a built-in, or a custom override of a built-in.
    pub kind: DefinitionKind,
    /// The main conversation's model: an alias or a full ID, possibly with `[1m]`.
    pub main: &'a str,
    /// How Claude Code reaches the model.
    pub provider: Provider,
    /// `CLAUDE_CODE_SUBAGENT_MODEL`, raw (empty and `inherit` behave like unset, MODEL-5).
    pub subagent_model: Option<&'a str>,
    /// `CLAUDE_CODE_SUBAGENT_MODEL_FORCE`, raw; on when `1` or `true` (MODEL-8).
    pub subagent_model_force: Option<&'a str>,
    /// `ANTHROPIC_DEFAULT_OPUS_MODEL`: what `opus` resolves to; when set, MODEL-4 (b) does
    /// not apply.
    pub default_opus_model: Option<&'a str>,
    /// The organization's `availableModels` allowlist; `None` allows everything (MODEL-7).
    pub available_models: Option<&'a [String]>,
    /// The model an installed mod's `agent.spawn` hook sets (MODEL-3).
    pub hook_model: Option<&'a str>,
    /// The run is a fork (FORK-5, FORK-11).
    pub fork: bool,
    /// The run is an agent-team teammate or a workflow agent. MODEL-8 names them beside
    /// subagents; the catalog gives them no other model rule, so this only adds a step.
    pub teammate: bool,
    /// The run is a resume or a follow-up of an earlier run (RESUME-14, MODEL-11).
    pub resumed: bool,
    /// A skill running in a subagent with `model: inherit` (MODEL-8).
    pub skill_inherit: bool,
    /// The session is interactive: MODEL-7's substitution warning is shown.
    pub interactive: bool,
    /// The provider is one where `/model`'s family substitution does not operate (MODEL-7's
    /// third row). The seeds do not say which providers these are.
    pub substitution_unavailable: bool,
    /// Which reading of Explore's model applies (Q-40).
    pub explore_rule: ExploreRule,
    /// The version gates in force.
    pub gates: Gates,
}

impl<'a> ModelRequest<'a> {
    /// A request for a custom definition with no model anywhere: everything off or unset,
    /// the Anthropic API, a non-interactive session, ES's Explore rule.
    pub fn new(main: &'a str, gates: Gates) -> ModelRequest<'a> {
        ModelRequest {
            invocation: None,
            definition: None,
            kind: DefinitionKind::Custom,
            main,
            provider: Provider::AnthropicApi,
            subagent_model: None,
            subagent_model_force: None,
            default_opus_model: None,
            available_models: None,
            hook_model: None,
            fork: false,
            teammate: false,
            resumed: false,
            skill_inherit: false,
            interactive: false,
            substitution_unavailable: false,
            explore_rule: ExploreRule::Es,
            gates,
        }
    }
}

/// The model a subagent runs on, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelChoice {
    /// The model ID (aliases expanded; a `[1m]` suffix kept where MODEL-4 keeps it).
    pub model: String,
    /// The rule that decided last.
    pub rule: RuleId,
    /// What happened, in order, each with the rule that made it happen (teaching output).
    pub steps: Vec<(String, RuleId)>,
    /// MODEL-7: in interactive sessions, a warning naming the requested model and the model
    /// actually used, when the allowlist substituted one.
    pub warning: Option<String>,
}

/// MODEL-7: whether `available_models` allows `value` — an alias, a full ID or either
/// with `[1m]`. `default_opus_model` is what `opus` resolves to, when set.
///
/// An entry allows a value when it names the same model (ignoring case and `[1m]`) or
/// the value's alias target, or when the entry is a family alias and the value belongs to
/// that family.
pub fn allows(available_models: &[String], value: &str, default_opus_model: Option<&str>) -> bool {
    let resolved = expand_alias(value, default_opus_model);
    available_models
        .iter()
        .any(|entry| entry_allows(entry, value) || entry_allows(entry, &resolved))
}

fn entry_allows(entry: &str, model: &str) -> bool {
    let entry = split_suffix(entry.trim()).0;
    let base = split_suffix(model.trim()).0;
    if entry.eq_ignore_ascii_case(base) {
        return true;
    }
    match Family::from_alias(entry) {
        Some(family) => Family::of(model) == Some(family),
        None => false,
    }
}

/// MODEL-7: the newest version of `family` that `available_models` names by full ID, as
/// written there. "Newest" compares the numbers after `claude-<family>` (a date of eight or
/// more digits is skipped); on a tie the entry listed first wins.
pub fn newest_allowed(available_models: &[String], family: Family) -> Option<&str> {
    let mut best: Option<(Vec<u32>, &str)> = None;
    for entry in available_models {
        let entry = entry.trim();
        if Family::from_alias(split_suffix(entry).0).is_some() || Family::of(entry) != Some(family)
        {
            continue;
        }
        let key = version_key(entry, family);
        if best.as_ref().is_none_or(|(best_key, _)| key > *best_key) {
            best = Some((key, entry));
        }
    }
    best.map(|(_, entry)| entry)
}

/// The version numbers after the family word, e.g. `[5, 5]` for `claude-opus-5-5`.
fn version_key(model: &str, family: Family) -> Vec<u32> {
    let base = split_suffix(model).0.to_ascii_lowercase();
    let mut words = base
        .split(['-', '.', ':', '/', '_'])
        .filter(|word| !word.is_empty());
    // Skip up to and including the family word.
    for word in words.by_ref() {
        if word == family.alias() {
            break;
        }
    }
    words
        .map_while(|word| word.parse::<u32>().ok().map(|number| (word.len(), number)))
        .filter(|(digits, _)| *digits < 8)
        .map(|(_, number)| number)
        .collect()
}

/// A value competing in MODEL-2's order: the text, where it came from, and its rule.
type Candidate<'a> = (&'a str, Origin, RuleId);

/// Where a candidate value came from; decides whether MODEL-4 and Q-43 apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// The per-invocation parameter.
    Invocation,
    /// A mod's `agent.spawn` hook, in the parameter's place (MODEL-3).
    Hook,
    /// The definition's `model` field (or a skill's `model: inherit`).
    Definition,
    /// A built-in's own model (SPAWN-9, MODEL-12, MODEL-13).
    BuiltIn,
    /// `CLAUDE_CODE_SUBAGENT_MODEL`.
    Env,
}

/// The three configurable sources of MODEL-2, in the order the rule lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Invocation,
    Definition,
    Env,
}

/// MODEL-2: the first present source, in the order of the version (env first before
/// v2.1.251). `None` means the main model.
fn first_source(env_last: bool, invocation: bool, definition: bool, env: bool) -> Option<Source> {
    let order = if env_last {
        [Source::Invocation, Source::Definition, Source::Env]
    } else {
        [Source::Env, Source::Invocation, Source::Definition]
    };
    order.into_iter().find(|source| match source {
        Source::Invocation => invocation,
        Source::Definition => definition,
        Source::Env => env,
    })
}

/// MODEL-5: the env var's value when it names a model; empty and `inherit` are unset.
fn env_model(raw: Option<&str>) -> Option<&str> {
    raw.map(str::trim)
        .filter(|value| !value.is_empty() && !value.eq_ignore_ascii_case("inherit"))
}

fn present(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|value| !value.is_empty())
}

/// The full model resolution (MODEL-1 … MODEL-13, RESUME-14, FORK-5/11, SPAWN-9/10, Q-40,
/// Q-43). See the module docs for the order and the decisions taken.
///
/// ```
/// use subsim_rules::model::{choose, ModelRequest};
/// use subsim_rules::{Gates, Version};
/// let gates = Gates::for_version(Version::NEWEST);
/// // MODEL-4 (a): `opus` on an Opus main runs on the exact main model, `[1m]` included.
/// let request = ModelRequest { invocation: Some("opus"), ..ModelRequest::new("claude-opus-5[1m]", gates) };
/// let choice = choose(&request);
/// assert_eq!(choice.model, "claude-opus-5[1m]");
/// assert_eq!(choice.rule, "MODEL-4");
/// ```
pub fn choose(request: &ModelRequest<'_>) -> ModelChoice {
    Resolver::new(request).run()
}

/// One resolution in progress: the request, the inherited model and the steps so far.
struct Resolver<'r, 'a> {
    request: &'r ModelRequest<'a>,
    /// The inherited model: the main model with an alias expanded.
    main: String,
    main_family: Option<Family>,
    /// The env var's model, MODEL-5-normalised (not yet MODEL-6-filtered).
    env: Option<&'a str>,
    steps: Vec<(String, RuleId)>,
}

impl<'r, 'a> Resolver<'r, 'a> {
    fn new(request: &'r ModelRequest<'a>) -> Resolver<'r, 'a> {
        let main = expand_alias(request.main, request.default_opus_model);
        Resolver {
            request,
            main_family: Family::of(&main).or_else(|| Family::of(request.main)),
            main,
            env: env_model(request.subagent_model),
            steps: Vec::new(),
        }
    }

    fn step(&mut self, text: impl Into<String>, rule: RuleId) {
        self.steps.push((text.into(), rule));
    }

    fn finish(self, model: String, rule: RuleId, warning: Option<String>) -> ModelChoice {
        ModelChoice {
            model,
            rule,
            steps: self.steps,
            warning,
        }
    }

    fn main_model(mut self, text: impl fmt::Display, rule: RuleId) -> ModelChoice {
        let main = self.main.clone();
        self.step(format!("{text}: the main model `{main}`"), rule);
        self.finish(main, rule, None)
    }

    /// The built-in Explore and Plan ignore the env var on its own (MODEL-6).
    fn env_exempt(&self) -> bool {
        matches!(
            self.request.kind,
            DefinitionKind::BuiltIn(BuiltIn::Explore | BuiltIn::Plan)
        )
    }

    fn run(mut self) -> ModelChoice {
        let request = self.request;
        let gates = request.gates;
        if self.main != request.main.trim() {
            let text = format!("the main model `{}` is `{}`", request.main, self.main);
            self.step(text, "MODEL-1");
        }
        let force_set = matches!(
            request.subagent_model_force.map(str::trim),
            Some("1") | Some("true")
        );
        // MODEL-8: FORCE exists from v2.1.257.
        let force = force_set && gates.subagent_model_force;
        if force_set && !force {
            let since = gates_table::since("subagent_model_force");
            self.step(
                format!("CLAUDE_CODE_SUBAGENT_MODEL_FORCE needs v{since}; ignored"),
                "MODEL-8",
            );
        }

        // FORK-5: a fork runs on the main model; FORK-11: FORCE does not change that.
        if request.fork {
            return if force {
                self.main_model(
                    "a fork is unaffected by CLAUDE_CODE_SUBAGENT_MODEL_FORCE",
                    "FORK-11",
                )
            } else {
                self.main_model("a fork inherits the whole conversation", "FORK-5")
            };
        }
        if force {
            return self.forced();
        }

        // MODEL-5: `inherit` in the env var — unset from v2.1.196, forcing main before.
        let env_inherit = request
            .subagent_model
            .map(str::trim)
            .is_some_and(|value| value.eq_ignore_ascii_case("inherit"));
        if env_inherit {
            if !gates.env_inherit_forces_main {
                self.step(
                    "CLAUDE_CODE_SUBAGENT_MODEL=inherit behaves like unset",
                    "MODEL-5",
                );
            } else if self.env_exempt() {
                // MODEL-6 applies to the pre-2.1.196 forcing too (module docs).
                self.step(
                    "CLAUDE_CODE_SUBAGENT_MODEL=inherit alone does not move the built-in Explore or Plan",
                    "MODEL-6",
                );
            } else {
                let until = gates_table::until("env_inherit_forces_main");
                return self.main_model(
                    format_args!(
                        "before v{until} CLAUDE_CODE_SUBAGENT_MODEL=inherit forces every subagent"
                    ),
                    "MODEL-5",
                );
            }
        }
        self.ordered()
    }

    /// MODEL-8: `CLAUDE_CODE_SUBAGENT_MODEL_FORCE` is on (v2.1.257+).
    fn forced(mut self) -> ModelChoice {
        let request = self.request;
        let who = if request.teammate {
            "a teammate or workflow agent"
        } else {
            "every subagent"
        };
        self.step(
            format!("CLAUDE_CODE_SUBAGENT_MODEL_FORCE is on: one model for {who}"),
            "MODEL-8",
        );
        if request.skill_inherit {
            return self.main_model(
                "a skill running in a subagent with `model: inherit`",
                "MODEL-8",
            );
        }
        if present(request.invocation).is_some() || present(request.hook_model).is_some() {
            self.step(
                "Claude cannot pass a model while FORCE is on; the value is ignored",
                "MODEL-8",
            );
        }
        let has_own_model = match request.kind {
            DefinitionKind::Custom | DefinitionKind::Overrides(_) => {
                present(request.definition).is_some()
            }
            // Only these built-ins carry a model of their own (SPAWN-9).
            DefinitionKind::BuiltIn(built_in) => {
                !matches!(built_in, BuiltIn::GeneralPurpose | BuiltIn::Claude)
            }
        };
        if has_own_model {
            self.step(
                "the definition's `model` field is ignored, built-ins included",
                "MODEL-8",
            );
        }
        if let Some(env) = self.env {
            self.step(
                format!("both variables are set: CLAUDE_CODE_SUBAGENT_MODEL=`{env}`"),
                "MODEL-8",
            );
            return self.settle(env, Origin::Env, "MODEL-8");
        }
        if request.kind == DefinitionKind::BuiltIn(BuiltIn::Explore) {
            self.step(
                "only FORCE is set: the built-in Explore keeps its own rule",
                "MODEL-8",
            );
            let explore = self.explore_default();
            return self.settle(explore, Origin::BuiltIn, "MODEL-12");
        }
        self.main_model("only FORCE is set", "MODEL-8")
    }

    /// MODEL-12: the built-in Explore's own model — `"inherit"`, `"opus"` or `"haiku"`.
    fn explore_default(&mut self) -> &'static str {
        let request = self.request;
        let gates = request.gates;
        if !gates.explore_inherits_main {
            let since = gates_table::since("explore_inherits_main");
            self.step(
                format!("before v{since} the built-in Explore always runs on Haiku"),
                "MODEL-12",
            );
            return "haiku";
        }
        let de_cap = match request.explore_rule {
            ExploreRule::DeOpusCap if gates.explore_opus_cap_option => true,
            ExploreRule::DeOpusCap => {
                let (from, to) = gates_table::range("explore_opus_cap_option");
                let text = format!(
                    "DE's Opus cap is an option only for v{from}–v{to}; v{} follows ES",
                    gates.version
                );
                self.step(text, "Q-40");
                false
            }
            ExploreRule::Es => false,
        };
        let provider = request.provider;
        if de_cap {
            // Q-40 / D-4: DE caps the inherited model at Opus on the Claude API.
            let above_opus = self.main_family.is_some_and(|family| family > Family::Opus);
            if provider.is_anthropic_api() && above_opus {
                let text = format!("DE: on {provider} Explore's model is capped at Opus");
                self.step(text, "Q-40");
                return "opus";
            }
            let text = if provider.is_anthropic_api() {
                "DE: the main model is not above Opus (or its tier is unknown), so Explore inherits it"
            } else {
                "DE: off the Claude API Explore inherits the main model directly"
            };
            self.step(text, "Q-40");
            return "inherit";
        }
        // MODEL-12 (ES): Fable on a direct connection or gateway → the `opus` target.
        if self.main_family == Some(Family::Fable) {
            if provider.fable_explore_uses_opus() {
                let text = format!(
                    "the main model runs Fable on {provider}: Explore runs on the `opus` target"
                );
                self.step(text, "MODEL-12");
                return "opus";
            }
            let text = format!("the main model runs Fable on {provider}: Explore stays on it");
            self.step(text, "MODEL-12");
            return "inherit";
        }
        self.step(
            "the built-in Explore uses the main conversation's model",
            "MODEL-12",
        );
        "inherit"
    }

    /// MODEL-2's order, with MODEL-3, RESUME-14, the built-ins and MODEL-6.
    fn ordered(mut self) -> ModelChoice {
        let request = self.request;
        let gates = request.gates;

        let (invocation, invocation_dropped) = self.invocation_slot();
        let definition = self.definition_slot();

        // MODEL-6: the env var alone does not move the built-in Explore and Plan.
        let env = if self.env_exempt() {
            if let Some(env) = self.env {
                let text = format!("CLAUDE_CODE_SUBAGENT_MODEL=`{env}` alone does not change the built-in Explore or Plan");
                self.step(text, "MODEL-6");
            }
            None
        } else {
            self.env
        };

        // MODEL-2: first match wins; the env var is first before v2.1.251.
        let source = first_source(
            gates.model_order_env_last,
            invocation.is_some(),
            definition.is_some(),
            env.is_some(),
        );
        let plain_built_in = matches!(
            request.kind,
            DefinitionKind::BuiltIn(BuiltIn::GeneralPurpose | BuiltIn::Claude)
        );
        // A rule that follows from RESUME-14 dropping the parameter is RESUME-14's.
        let after_drop = |rule: RuleId| {
            if invocation_dropped {
                "RESUME-14"
            } else {
                rule
            }
        };
        match (source, invocation, definition, env) {
            (Some(Source::Invocation), Some((value, origin, rule)), _, _) => {
                if origin == Origin::Invocation && rule == crate::id::MODEL_2 {
                    self.step(
                        format!("the per-invocation `{value}` comes first"),
                        "MODEL-2",
                    );
                }
                self.settle(value, origin, rule)
            }
            (Some(Source::Definition), _, Some((value, origin, rule)), _) => {
                if origin == Origin::Definition {
                    self.step(format!("the definition's `model: {value}`"), rule);
                }
                self.settle(value, origin, after_drop(rule))
            }
            (Some(Source::Env), _, _, Some(env)) => {
                let rule = if gates.model_order_env_last {
                    let text = if plain_built_in {
                        format!("nothing else assigns a model: CLAUDE_CODE_SUBAGENT_MODEL=`{env}`")
                    } else {
                        format!(
                            "no parameter or definition model: CLAUDE_CODE_SUBAGENT_MODEL=`{env}`"
                        )
                    };
                    let rule = if plain_built_in {
                        "MODEL-13"
                    } else {
                        "MODEL-2"
                    };
                    self.step(text, rule);
                    rule
                } else {
                    let since = gates_table::since("model_order_env_last");
                    let text = format!(
                        "before v{since} CLAUDE_CODE_SUBAGENT_MODEL=`{env}` comes first and overrides the parameter and the definition"
                    );
                    self.step(text, "MODEL-2");
                    "MODEL-2"
                };
                self.settle(env, Origin::Env, after_drop(rule))
            }
            _ => {
                let rule = if plain_built_in {
                    "MODEL-13"
                } else {
                    "MODEL-2"
                };
                self.main_model("no source sets a model", after_drop(rule))
            }
        }
    }

    /// The per-invocation slot of MODEL-2: MODEL-3's hook model, else the parameter —
    /// which a resume before v2.1.211 drops (RESUME-14; the `bool` says it was dropped).
    fn invocation_slot(&mut self) -> (Option<Candidate<'a>>, bool) {
        let request = self.request;
        let gates = request.gates;
        let mut invocation_dropped = false;
        let invocation = if let Some(hook) = present(request.hook_model) {
            let text = match present(request.invocation) {
                Some(parameter) => {
                    format!("a mod's agent.spawn hook sets `{hook}` instead of the parameter `{parameter}`")
                }
                None => format!("a mod's agent.spawn hook sets `{hook}`"),
            };
            self.step(text, "MODEL-3");
            Some((hook, Origin::Hook, "MODEL-3"))
        } else {
            match present(request.invocation) {
                Some(parameter) if request.resumed && !gates.model_survives_resume => {
                    let since = gates_table::since("model_survives_resume");
                    let text =
                        format!("before v{since} a resume drops the per-invocation `{parameter}`");
                    self.step(text, "RESUME-14");
                    invocation_dropped = true;
                    None
                }
                Some(parameter) if request.resumed => {
                    let text = format!("the per-invocation `{parameter}` persists on resume");
                    self.step(text, "RESUME-14");
                    Some((parameter, Origin::Invocation, "RESUME-14"))
                }
                Some(parameter) => Some((parameter, Origin::Invocation, "MODEL-2")),
                None => None,
            }
        };
        (invocation, invocation_dropped)
    }

    /// The definition slot of MODEL-2: a skill's `model: inherit`, the custom definition's
    /// field, or the built-in's own model.
    fn definition_slot(&mut self) -> Option<Candidate<'a>> {
        let request = self.request;
        if request.skill_inherit {
            self.step(
                "a skill running in the subagent sets `model: inherit`",
                "MODEL-2",
            );
            Some(("inherit", Origin::Definition, "MODEL-2"))
        } else {
            match request.kind {
                DefinitionKind::Custom => {
                    present(request.definition).map(|model| (model, Origin::Definition, "MODEL-2"))
                }
                DefinitionKind::Overrides(built_in) => {
                    // SPAWN-10: a custom `Explore` keeps its own `model` field.
                    let rule = if built_in == BuiltIn::Explore {
                        "SPAWN-10"
                    } else {
                        "MODEL-2"
                    };
                    present(request.definition).map(|model| (model, Origin::Definition, rule))
                }
                DefinitionKind::BuiltIn(BuiltIn::Explore) => {
                    let explore = self.explore_default();
                    Some((explore, Origin::BuiltIn, "MODEL-12"))
                }
                // MODEL-13 / SPAWN-9: Plan inherits the main model.
                DefinitionKind::BuiltIn(BuiltIn::Plan) => {
                    Some(("inherit", Origin::BuiltIn, "MODEL-13"))
                }
                // MODEL-13: general-purpose and claude have no model of their own.
                DefinitionKind::BuiltIn(BuiltIn::GeneralPurpose | BuiltIn::Claude) => None,
                // SPAWN-9: the helper agents' fixed models.
                DefinitionKind::BuiltIn(BuiltIn::StatuslineSetup) => {
                    Some(("sonnet", Origin::BuiltIn, "SPAWN-9"))
                }
                DefinitionKind::BuiltIn(BuiltIn::ClaudeCodeGuide) => {
                    Some(("haiku", Origin::BuiltIn, "SPAWN-9"))
                }
            }
        }
    }

    /// The winning value becomes a model: `inherit`, MODEL-4, alias targets, MODEL-7.
    fn settle(mut self, value: &str, origin: Origin, rule: RuleId) -> ModelChoice {
        let request = self.request;
        if value.eq_ignore_ascii_case("inherit") {
            return self.main_model("`inherit`", rule);
        }
        let family = Family::from_alias(split_suffix(value).0);
        if let Some(family) = family {
            match origin {
                Origin::Invocation | Origin::Hook | Origin::Definition => {
                    // MODEL-4 (a): the main model belongs to the alias's family.
                    if self.main_family == Some(family) {
                        let text = format!("`{value}` names the main model's family");
                        return self.main_model(&text, "MODEL-4");
                    }
                    // MODEL-4 (b): `opus` off the Anthropic API, main family unknown.
                    if family == Family::Opus
                        && !request.provider.is_anthropic_api()
                        && self.main_family.is_none()
                    {
                        if request.default_opus_model.is_none() {
                            let text = format!(
                                "`opus` on {} with a main model of unknown family",
                                request.provider
                            );
                            return self.main_model(&text, "MODEL-4");
                        }
                        self.step(
                            "ANTHROPIC_DEFAULT_OPUS_MODEL is set, so `opus` resolves to it, not to the main model",
                            "MODEL-4",
                        );
                    }
                }
                Origin::Env => {
                    if self.main_family == Some(family) {
                        self.step(
                            "an alias in CLAUDE_CODE_SUBAGENT_MODEL always resolves to its target, even in the main model's family",
                            "MODEL-4",
                        );
                    }
                }
                Origin::BuiltIn => {}
            }
        }
        let resolved = expand_alias(value, request.default_opus_model);
        if resolved != value {
            self.step(format!("`{value}` resolves to `{resolved}`"), "MODEL-1");
        }
        let Some(list) = request.available_models else {
            return self.finish(resolved, rule, None);
        };
        if allows(list, value, request.default_opus_model) {
            self.step(format!("availableModels allows `{value}`"), "MODEL-7");
            return self.finish(resolved, rule, None);
        }
        self.substitute(list, value, family, origin)
    }

    /// MODEL-7's table for a blocked value, with Q-43's env-var fallback.
    fn substitute(
        mut self,
        list: &[String],
        requested: &str,
        family: Option<Family>,
        origin: Origin,
    ) -> ModelChoice {
        self.step(format!("availableModels blocks `{requested}`"), "MODEL-7");
        if let Some(family) = family {
            if let Some(model) = self.family_substitute(list, family) {
                return self.substituted(requested, model, "MODEL-7");
            }
        }
        // Q-43: the env-var model is tried before the inherited model, under the same rules
        // (not for a value that came from the env var, nor for Explore/Plan — MODEL-6).
        if origin != Origin::Env && !self.env_exempt() {
            if let Some(env) = self.env {
                let default_opus = self.request.default_opus_model;
                if allows(list, env, default_opus) {
                    let model = expand_alias(env, default_opus);
                    let text =
                        format!("CLAUDE_CODE_SUBAGENT_MODEL=`{env}` is tried first and allowed");
                    self.step(text, "Q-43");
                    return self.substituted(requested, model, "Q-43");
                }
                self.step(
                    format!("CLAUDE_CODE_SUBAGENT_MODEL=`{env}` is tried first and blocked too"),
                    "Q-43",
                );
                if let Some(env_family) = Family::from_alias(split_suffix(env).0) {
                    if let Some(model) = self.family_substitute(list, env_family) {
                        return self.substituted(requested, model, "Q-43");
                    }
                }
            }
        }
        let main = self.main.clone();
        self.step(
            format!("the inherited model `{main}` runs instead"),
            "MODEL-7",
        );
        self.substituted(requested, main, "MODEL-7")
    }

    /// MODEL-7's first row: the newest allowed version of a blocked family alias.
    fn family_substitute(&mut self, list: &[String], family: Family) -> Option<String> {
        let request = self.request;
        if !request.gates.family_alias_substitution {
            self.step(
                format!(
                    "before v{} a blocked `{family}` is not substituted within its family",
                    gates_table::since("family_alias_substitution")
                ),
                "MODEL-7",
            );
            return None;
        }
        if request.substitution_unavailable {
            self.step(
                "family substitution does not operate on this provider",
                "MODEL-7",
            );
            return None;
        }
        match newest_allowed(list, family) {
            Some(model) => {
                self.step(
                    format!("the newest allowed `{family}` is `{model}`"),
                    "MODEL-7",
                );
                Some(model.to_string())
            }
            None => {
                self.step(
                    format!("availableModels allows no version of `{family}`"),
                    "MODEL-7",
                );
                None
            }
        }
    }

    /// Ends with a substituted model and, in interactive sessions, MODEL-7's warning.
    fn substituted(self, requested: &str, model: String, rule: RuleId) -> ModelChoice {
        let warning = self.request.interactive.then(|| {
            format!("subagent model `{requested}` is not in availableModels; running on `{model}` instead")
        });
        self.finish(model, rule, warning)
    }
}

/// MODEL-14 / RESUME-15: the effort level a subagent runs at, first present wins:
/// `CLAUDE_CODE_EFFORT_LEVEL` > the per-invocation `effort` (v2.1.292+, non-fork only) >
/// the frontmatter `effort` > the session's level. `None` when none is set.
///
/// On a resume pass the original run's per-invocation value: it persists (RESUME-15). D-12:
/// DE knows only frontmatter > session; ES (newer) adds the env var and the parameter. The
/// levels a model accepts are not checked here.
pub fn resolve_effort(
    env: Option<&str>,
    invocation: Option<&str>,
    frontmatter: Option<&str>,
    session: Option<&str>,
    fork: bool,
    gates: &Gates,
) -> (Option<String>, RuleId) {
    let invocation = present(invocation).filter(|_| gates.effort_parameter && !fork);
    let chosen = present(env)
        .or(invocation)
        .or(present(frontmatter))
        .or(present(session));
    (chosen.map(str::to_string), "MODEL-14")
}

/// The inputs of MODEL-2's resolution order (the engine's older entry point; [`choose`]
/// is the full resolution).
#[derive(Clone, Copy, Debug, Default)]
pub struct ModelInput<'a> {
    /// The per-invocation `model` parameter.
    pub invocation: Option<&'a str>,
    /// The definition's `model` field.
    pub definition: Option<&'a str>,
    /// `CLAUDE_CODE_SUBAGENT_MODEL`.
    pub env: Option<&'a str>,
    /// The main conversation's model.
    pub main: &'a str,
    /// The run is a fork (FORK-5: always the main model).
    pub fork: bool,
    /// MODEL-2's gate: the env var is third from v2.1.251, first before.
    pub env_last: bool,
}

/// MODEL-2 only: the first source that gives a model wins. `inherit` means the main model,
/// and `CLAUDE_CODE_SUBAGENT_MODEL=inherit` behaves like unset (MODEL-5). Values are returned
/// as given (no alias expansion, no MODEL-4, no allowlist); use [`choose`] for those.
pub fn resolve<'a>(input: ModelInput<'a>) -> (&'a str, RuleId) {
    if input.fork {
        return (input.main, "FORK-5");
    }
    let env = input
        .env
        .filter(|value| !value.is_empty() && *value != "inherit");
    let or_main = |value: &'a str| {
        if value == "inherit" {
            input.main
        } else {
            value
        }
    };
    let source = first_source(
        input.env_last,
        input.invocation.is_some(),
        input.definition.is_some(),
        env.is_some(),
    );
    let model = match source {
        Some(Source::Invocation) => input.invocation.map(or_main),
        Some(Source::Definition) => input.definition.map(or_main),
        Some(Source::Env) => env,
        None => None,
    };
    (model.unwrap_or(input.main), "MODEL-2")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;
    use BuiltIn::{Claude, ClaudeCodeGuide, Explore, GeneralPurpose, Plan, StatuslineSetup};
    use Provider::{AgentPlatform, AnthropicApi, Bedrock, ClaudeAppsGateway, ClaudePlatformOnAws};
    use Provider::{Console, Foundry, Gateway, Subscription};

    const OPUS: &str = "claude-opus-5-5";
    const SONNET: &str = "claude-sonnet-5";
    const HAIKU: &str = "claude-haiku-4-5";
    const FABLE: &str = "claude-fable-1";
    const ARN: &str = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2";

    /// A request at version 2.1.`patch` with main model `main`.
    fn at(patch: u32, main: &'static str) -> ModelRequest<'static> {
        ModelRequest::new(main, Gates::for_version(Version::v2_1(patch)))
    }

    /// A request at the newest version.
    fn new(main: &'static str) -> ModelRequest<'static> {
        at(292, main)
    }

    /// Short setters, so one table row fits on one line.
    impl<'a> ModelRequest<'a> {
        fn inv(self, model: &'a str) -> Self {
            ModelRequest {
                invocation: Some(model),
                ..self
            }
        }
        fn def(self, model: &'a str) -> Self {
            ModelRequest {
                definition: Some(model),
                ..self
            }
        }
        fn env(self, model: &'a str) -> Self {
            ModelRequest {
                subagent_model: Some(model),
                ..self
            }
        }
        fn force(self) -> Self {
            ModelRequest {
                subagent_model_force: Some("1"),
                ..self
            }
        }
        fn hook(self, model: &'a str) -> Self {
            ModelRequest {
                hook_model: Some(model),
                ..self
            }
        }
        fn built_in(self, built_in: BuiltIn) -> Self {
            ModelRequest {
                kind: DefinitionKind::BuiltIn(built_in),
                ..self
            }
        }
        fn overrides(self, built_in: BuiltIn) -> Self {
            ModelRequest {
                kind: DefinitionKind::Overrides(built_in),
                ..self
            }
        }
        fn via(self, provider: Provider) -> Self {
            ModelRequest { provider, ..self }
        }
        fn allow(self, available_models: &'a [String]) -> Self {
            ModelRequest {
                available_models: Some(available_models),
                ..self
            }
        }
        fn pin_opus(self, model: &'a str) -> Self {
            ModelRequest {
                default_opus_model: Some(model),
                ..self
            }
        }
        fn main(self, main: &'a str) -> Self {
            ModelRequest { main, ..self }
        }
        fn teammate(self) -> Self {
            ModelRequest {
                teammate: true,
                ..self
            }
        }
        fn skill_inherit(self) -> Self {
            ModelRequest {
                skill_inherit: true,
                ..self
            }
        }
        fn fork(self) -> Self {
            ModelRequest { fork: true, ..self }
        }
        fn resumed(self) -> Self {
            ModelRequest {
                resumed: true,
                ..self
            }
        }
        fn de_cap(self) -> Self {
            ModelRequest {
                explore_rule: ExploreRule::DeOpusCap,
                ..self
            }
        }
    }

    #[track_caller]
    fn check(request: ModelRequest<'_>, expected_model: &str, expected_rule: RuleId) {
        let choice = choose(&request);
        assert_eq!(
            (choice.model.as_str(), choice.rule),
            (expected_model, expected_rule),
            "steps: {:#?}",
            choice.steps
        );
    }

    fn list(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|entry| entry.to_string()).collect()
    }

    #[test]
    fn model_1_values() {
        check(new(SONNET).inv("opus"), OPUS, "MODEL-2");
        check(new(OPUS).inv("sonnet"), SONNET, "MODEL-2");
        check(new(OPUS).inv("haiku"), HAIKU, "MODEL-2");
        check(new(OPUS).inv("fable"), FABLE, "MODEL-2");
        check(new(SONNET).inv("claude-opus-5"), "claude-opus-5", "MODEL-2");
        check(new(SONNET).def("inherit"), SONNET, "MODEL-2");
        check(new(SONNET).inv("inherit"), SONNET, "MODEL-2");
        check(
            new(SONNET).inv("opus[1m]"),
            "claude-opus-5-5[1m]",
            "MODEL-2",
        );
        // An alias main is expanded, so every answer is a model ID.
        check(new("sonnet"), SONNET, "MODEL-2");
        check(new("opus[1m]"), "claude-opus-5-5[1m]", "MODEL-2");
    }

    #[test]
    fn family_detection_and_spellings() {
        assert_eq!(Family::of("opus"), Some(Family::Opus));
        assert_eq!(Family::of("Sonnet[1m]"), Some(Family::Sonnet));
        assert_eq!(Family::of("claude-opus-5-5[1m]"), Some(Family::Opus));
        assert_eq!(
            Family::of("us.anthropic.claude-sonnet-5-v1:0"),
            Some(Family::Sonnet)
        );
        assert_eq!(Family::of("claude-3-5-haiku-20241022"), Some(Family::Haiku));
        assert_eq!(Family::of("claude-fable-1"), Some(Family::Fable));
        assert_eq!(Family::of(ARN), None);
        assert_eq!(Family::of("my-opus-finetune"), None);
        assert!(Family::Fable > Family::Opus && Family::Opus > Family::Sonnet);
        // A family prints as its alias (MODEL-1), as the warnings and steps name it.
        for family in Family::ALL {
            assert_eq!(family.to_string(), family.alias());
        }
        assert_eq!(Family::Haiku.to_string(), "haiku");
        assert_eq!(expand_alias("opus", Some("my-opus")), "my-opus");
        assert_eq!(expand_alias("haiku[1m]", None), "claude-haiku-4-5[1m]");
        assert_eq!(expand_alias("claude-x", None), "claude-x");
        for provider in Provider::ALL {
            assert_eq!(provider.as_str().parse(), Ok(provider));
            assert_eq!(provider.to_string(), provider.as_str());
        }
        assert_eq!(Provider::Bedrock.to_string(), "bedrock");
        for built_in in BuiltIn::ALL {
            assert_eq!(BuiltIn::from_name(built_in.name()), Some(built_in));
        }
    }

    #[test]
    fn model_2_order_from_2_1_251() {
        let base = at(251, OPUS).env("fable");
        check(base.inv("sonnet").def("haiku"), SONNET, "MODEL-2");
        check(base.def("haiku"), HAIKU, "MODEL-2");
        check(base.def("inherit"), OPUS, "MODEL-2");
        check(base, FABLE, "MODEL-2");
        check(at(251, OPUS), OPUS, "MODEL-2");
    }

    #[test]
    fn model_2_env_first_before_2_1_251() {
        let base = at(250, OPUS).env("haiku");
        check(base.inv("sonnet").def("fable"), HAIKU, "MODEL-2");
        check(base.def("inherit"), HAIKU, "MODEL-2");
        check(at(250, OPUS).inv("sonnet"), SONNET, "MODEL-2");
        check(at(250, OPUS).def("sonnet"), SONNET, "MODEL-2");
    }

    #[test]
    fn model_3_mod_hook_replaces_the_parameter() {
        check(new(OPUS).hook("sonnet").inv("haiku"), SONNET, "MODEL-3");
        check(new(OPUS).hook("sonnet").def("haiku"), SONNET, "MODEL-3");
        check(new(OPUS).hook("sonnet"), SONNET, "MODEL-3");
        // Before v2.1.251 the env var still comes first.
        check(at(250, OPUS).hook("sonnet").env("haiku"), HAIKU, "MODEL-2");
    }

    #[test]
    fn model_4_family_alias_resolves_to_main() {
        // (a) the main model belongs to the family: the exact main model, `[1m]` kept.
        let opus_1m = "claude-opus-5[1m]";
        check(new(opus_1m).inv("opus"), opus_1m, "MODEL-4");
        check(new(opus_1m).def("opus"), opus_1m, "MODEL-4");
        check(
            new("claude-opus-5").hook("opus"),
            "claude-opus-5",
            "MODEL-4",
        );
        check(
            new("opus[1m]").inv("opus"),
            "claude-opus-5-5[1m]",
            "MODEL-4",
        );
        check(new("opus[1m]").inv("sonnet"), SONNET, "MODEL-2");
        check(new(SONNET).inv("opus"), OPUS, "MODEL-2");
        // (b) `opus` on another provider with a main model of unknown family …
        let bedrock = new(ARN).via(Bedrock);
        check(bedrock.inv("opus"), ARN, "MODEL-4");
        check(bedrock.def("opus"), ARN, "MODEL-4");
        check(new(ARN).via(Gateway).inv("opus"), ARN, "MODEL-4");
        // … only `opus`,
        check(bedrock.inv("sonnet"), SONNET, "MODEL-2");
        // … not with ANTHROPIC_DEFAULT_OPUS_MODEL,
        check(
            bedrock.inv("opus").pin_opus("arn:opus"),
            "arn:opus",
            "MODEL-2",
        );
        // … and not on the Anthropic API.
        check(new("custom-model").inv("opus"), OPUS, "MODEL-2");
        // An alias in CLAUDE_CODE_SUBAGENT_MODEL always resolves to its target.
        check(new(opus_1m).env("opus"), OPUS, "MODEL-2");
        check(bedrock.env("opus"), OPUS, "MODEL-2");
    }

    #[test]
    fn model_5_env_inherit_both_sides_of_2_1_196() {
        let new_side = at(196, OPUS).env("inherit");
        check(new_side.def("haiku"), HAIKU, "MODEL-2");
        check(new_side.inv("sonnet"), SONNET, "MODEL-2");
        check(new_side, OPUS, "MODEL-2");
        let old_side = at(195, OPUS).env("inherit");
        check(old_side.inv("sonnet").def("haiku"), OPUS, "MODEL-5");
        check(old_side.built_in(StatuslineSetup), OPUS, "MODEL-5");
        // MODEL-6 holds before 2.1.196 too: Explore (pre-2.1.198: Haiku) is not moved.
        check(old_side.built_in(Explore), HAIKU, "MODEL-12");
        // An empty value is unset as well.
        check(new(OPUS).env(""), OPUS, "MODEL-2");
    }

    #[test]
    fn model_6_env_alone_does_not_move_explore_and_plan() {
        for (patch, general_purpose_rule) in [(250, "MODEL-2"), (292, "MODEL-13")] {
            let base = at(patch, SONNET).env("haiku");
            check(base.built_in(Explore), SONNET, "MODEL-12");
            check(base.built_in(Plan), SONNET, "MODEL-13");
            check(base.built_in(GeneralPurpose), HAIKU, general_purpose_rule);
        }
    }

    #[test]
    fn model_7_allowlist_table_from_2_1_222() {
        let allowed = list(&["claude-opus-5", "claude-opus-4-1-20250805", SONNET]);
        let base = at(222, SONNET).allow(&allowed);
        // Row 1: a blocked family alias → the newest allowed version of the family.
        check(base.inv("opus"), "claude-opus-5", "MODEL-7");
        check(base.def("opus"), "claude-opus-5", "MODEL-7");
        check(base.env("opus"), "claude-opus-5", "MODEL-7");
        // Row 2: any other blocked value → the inherited model.
        check(base.inv("claude-opus-4"), SONNET, "MODEL-7");
        check(base.env("claude-opus-4"), SONNET, "MODEL-7");
        // Row 3: providers where substitution does not operate → the inherited model.
        let no_substitution = ModelRequest {
            substitution_unavailable: true,
            ..base
        };
        check(no_substitution.inv("opus"), SONNET, "MODEL-7");
        // Row 4: a family with no allowed version → the inherited model.
        check(base.inv("haiku"), SONNET, "MODEL-7");
        // Allowed values pass: by ID, by alias target, by a family entry.
        check(base.inv("claude-opus-5"), "claude-opus-5", "MODEL-2");
        let by_target = list(&[OPUS]);
        check(base.allow(&by_target).inv("opus"), OPUS, "MODEL-2");
        let by_family = list(&["opus"]);
        check(
            base.allow(&by_family).inv("claude-opus-4"),
            "claude-opus-4",
            "MODEL-2",
        );
        // MODEL-4's main model and `inherit` are the inherited model: not checked.
        check(
            base.main("claude-opus-4").inv("opus"),
            "claude-opus-4",
            "MODEL-4",
        );
        let only_haiku = list(&[HAIKU]);
        check(base.allow(&only_haiku).def("inherit"), SONNET, "MODEL-2");
    }

    #[test]
    fn model_7_family_alias_before_2_1_222_falls_back() {
        let allowed = list(&["claude-opus-5", SONNET]);
        let base = at(221, SONNET).allow(&allowed);
        check(base.inv("opus"), SONNET, "MODEL-7");
        check(base.env("opus"), SONNET, "MODEL-7");
    }

    #[test]
    fn q_43_env_model_is_the_first_fallback() {
        let allowed = list(&["claude-opus-5", SONNET]);
        let base = new(HAIKU).allow(&allowed);
        // Blocked value → the env model if it is set and allowed …
        check(base.inv("claude-opus-4").env("sonnet"), SONNET, "Q-43");
        check(base.def("fable").env(SONNET), SONNET, "Q-43");
        // … allowed after its own family substitution …
        check(
            base.inv("claude-opus-4").env("opus"),
            "claude-opus-5",
            "Q-43",
        );
        // … which needs 2.1.222; a blocked env model → the inherited model.
        let old = at(221, HAIKU).allow(&allowed);
        check(old.inv("claude-opus-4").env("opus"), HAIKU, "MODEL-7");
        check(
            base.inv("claude-opus-4").env("claude-opus-3"),
            HAIKU,
            "MODEL-7",
        );
        // The value's own family substitution (row 1) comes before the env model.
        check(base.inv("opus").env("sonnet"), "claude-opus-5", "MODEL-7");
        // MODEL-6: the env model is no fallback for the built-in Explore or Plan.
        let pre_198 = at(197, FABLE)
            .allow(&allowed)
            .built_in(Explore)
            .env("sonnet");
        check(pre_198, FABLE, "MODEL-7");
    }

    #[test]
    fn model_7_warning_only_in_interactive_sessions() {
        let allowed = list(&["claude-opus-5"]);
        let base = new(SONNET).allow(&allowed).inv("opus");
        assert_eq!(choose(&base).warning, None);
        let interactive = ModelRequest {
            interactive: true,
            ..base
        };
        let warning = choose(&interactive)
            .warning
            .expect("interactive sessions warn");
        assert!(
            warning.contains("`opus`") && warning.contains("`claude-opus-5`"),
            "{warning}"
        );
        assert_eq!(choose(&interactive.inv("claude-opus-5")).warning, None);
    }

    #[test]
    fn newest_allowed_skips_dates_and_aliases() {
        let allowed = list(&["opus", "claude-opus-4-20250514", "claude-opus-4-1", SONNET]);
        assert_eq!(
            newest_allowed(&allowed, Family::Opus),
            Some("claude-opus-4-1")
        );
        assert_eq!(newest_allowed(&allowed, Family::Haiku), None);
        let tie = list(&["claude-opus-5", "us.anthropic.claude-opus-5-v1:0"]);
        assert_eq!(newest_allowed(&tie, Family::Opus), Some("claude-opus-5"));
    }

    #[test]
    fn model_8_force() {
        let both = at(257, OPUS).env("haiku").force();
        let force_only = at(257, OPUS).force();
        // Both variables → the env model for every subagent, teammate and workflow agent.
        check(both.inv("sonnet").def("fable"), HAIKU, "MODEL-8");
        check(both.hook("sonnet"), HAIKU, "MODEL-8");
        check(both.inv("sonnet").teammate(), HAIKU, "MODEL-8");
        for built_in in BuiltIn::ALL {
            check(both.built_in(built_in), HAIKU, "MODEL-8");
        }
        check(both.overrides(Explore).def("sonnet"), HAIKU, "MODEL-8");
        // FORCE only → the main model; definitions (built-ins too) and parameters ignored …
        check(force_only.inv("sonnet").def("haiku"), OPUS, "MODEL-8");
        check(force_only.built_in(StatuslineSetup), OPUS, "MODEL-8");
        check(force_only.built_in(Plan), OPUS, "MODEL-8");
        check(force_only.overrides(Explore).def("haiku"), OPUS, "MODEL-8");
        check(force_only.teammate(), OPUS, "MODEL-8");
        // … except the built-in Explore, on its own rule (MODEL-12).
        let fable_explore = force_only.main(FABLE).built_in(Explore);
        check(fable_explore.via(Console), OPUS, "MODEL-12");
        check(fable_explore.via(Bedrock), FABLE, "MODEL-12");
        check(force_only.built_in(Explore).inv("haiku"), OPUS, "MODEL-12");
        // `inherit` in the env var with FORCE is FORCE only.
        check(force_only.env("inherit").def("haiku"), OPUS, "MODEL-8");
        // Still on the main model: a fork (FORK-11) and a skill with `model: inherit`.
        check(both.fork(), OPUS, "FORK-11");
        check(both.skill_inherit(), OPUS, "MODEL-8");
        // An env alias still resolves to its target, and the allowlist still applies.
        check(both.env("opus").main("claude-opus-5[1m]"), OPUS, "MODEL-8");
        let allowed = list(&["claude-haiku-4"]);
        check(both.allow(&allowed), "claude-haiku-4", "MODEL-7");
        // `true` is on as well; before 2.1.257 FORCE is ignored.
        let spelled_true = ModelRequest {
            subagent_model_force: Some("true"),
            ..both
        };
        check(spelled_true.def("sonnet"), HAIKU, "MODEL-8");
        let old = at(256, OPUS).env("haiku").force();
        check(old.inv("sonnet"), SONNET, "MODEL-2");
        check(old.built_in(Plan), OPUS, "MODEL-13");
    }

    #[test]
    fn fork_runs_on_the_main_model() {
        let fork = |request: ModelRequest<'static>| request.fork();
        check(fork(new(OPUS).inv("haiku").env("sonnet")), OPUS, "FORK-5");
        check(fork(new("opus[1m]")), "claude-opus-5-5[1m]", "FORK-5");
        // FORCE before 2.1.257 is ignored, so the fork is FORK-5's.
        check(fork(at(256, OPUS).force()), OPUS, "FORK-5");
    }

    #[test]
    fn skill_with_model_inherit_without_force() {
        let skill = new(OPUS).skill_inherit();
        check(skill.def("haiku"), OPUS, "MODEL-2");
        check(skill.env("haiku"), OPUS, "MODEL-2");
    }

    #[test]
    fn resume_14_both_sides_of_2_1_211() {
        let resumed = |patch| at(patch, OPUS).inv("sonnet").resumed();
        check(resumed(211).def("haiku"), SONNET, "RESUME-14");
        check(resumed(211), SONNET, "RESUME-14");
        check(resumed(210).def("haiku"), HAIKU, "RESUME-14");
        check(resumed(210), OPUS, "RESUME-14");
        // A first run is not affected by the gate.
        check(at(210, OPUS).inv("sonnet"), SONNET, "MODEL-2");
    }

    #[test]
    fn model_12_explore() {
        let explore = |patch, main| at(patch, main).built_in(Explore);
        // Before 2.1.198: always Haiku.
        check(explore(197, OPUS), HAIKU, "MODEL-12");
        check(explore(197, FABLE).via(Bedrock), HAIKU, "MODEL-12");
        // ES: the main model …
        check(explore(292, SONNET), SONNET, "MODEL-12");
        check(
            explore(292, "claude-opus-5[1m]"),
            "claude-opus-5[1m]",
            "MODEL-12",
        );
        // … except a Fable main on the API, a subscription, Console or a gateway.
        for provider in [AnthropicApi, Subscription, Console, Gateway] {
            check(explore(292, FABLE).via(provider), OPUS, "MODEL-12");
            check(explore(292, "fable[1m]").via(provider), OPUS, "MODEL-12");
        }
        let pinned = explore(292, FABLE).pin_opus("claude-opus-5");
        check(pinned, "claude-opus-5", "MODEL-12");
        for provider in [
            Bedrock,
            AgentPlatform,
            Foundry,
            ClaudePlatformOnAws,
            ClaudeAppsGateway,
        ] {
            check(explore(292, FABLE).via(provider), FABLE, "MODEL-12");
        }
        // A per-invocation model still comes first.
        check(explore(292, FABLE).inv("haiku"), HAIKU, "MODEL-2");
        check(explore(197, OPUS).inv("sonnet"), SONNET, "MODEL-2");
    }

    #[test]
    fn q_40_de_opus_cap_option() {
        let de = |patch, main, provider| at(patch, main).built_in(Explore).via(provider).de_cap();
        check(de(271, FABLE, Console), OPUS, "MODEL-12");
        check(de(198, FABLE, AnthropicApi), OPUS, "MODEL-12");
        check(de(271, SONNET, Console), SONNET, "MODEL-12");
        check(de(271, OPUS, Subscription), OPUS, "MODEL-12");
        // Only a tier above Opus is capped: another Opus main is inherited as it is, not
        // replaced by the `opus` alias target.
        check(
            de(271, "claude-opus-4-1", Subscription),
            "claude-opus-4-1",
            "MODEL-12",
        );
        check(de(271, FABLE, Bedrock), FABLE, "MODEL-12");
        // Where DE and ES differ: a gateway is not DE's "Claude API".
        check(de(271, FABLE, Gateway), FABLE, "MODEL-12");
        let es = ModelRequest {
            explore_rule: ExploreRule::Es,
            ..de(271, FABLE, Gateway)
        };
        check(es, OPUS, "MODEL-12");
        // From 2.1.272 the option is gone: ES's rule, with a Q-40 step.
        let late = choose(&de(272, FABLE, Gateway));
        assert_eq!((late.model.as_str(), late.rule), (OPUS, "MODEL-12"));
        assert!(late.steps.iter().any(|(_, rule)| *rule == "Q-40"));
        // Before 2.1.198, Haiku whatever the reading.
        check(de(197, FABLE, Console), HAIKU, "MODEL-12");
        // FORCE only: Explore keeps its cap.
        check(de(271, FABLE, Console).force(), OPUS, "MODEL-12");
    }

    #[test]
    fn spawn_10_custom_explore_keeps_its_model() {
        let custom = new(FABLE).overrides(Explore);
        check(custom.def("haiku"), HAIKU, "SPAWN-10");
        // Not the built-in, so MODEL-6 does not shield it from the env var.
        check(custom.env("haiku"), HAIKU, "MODEL-2");
        check(custom, FABLE, "MODEL-2");
    }

    #[test]
    fn model_13_built_ins() {
        let general_purpose = new(OPUS).built_in(GeneralPurpose);
        check(general_purpose, OPUS, "MODEL-13");
        check(general_purpose.env("haiku"), HAIKU, "MODEL-13");
        check(
            general_purpose.inv("sonnet").env("haiku"),
            SONNET,
            "MODEL-2",
        );
        // A definition model on a built-in is not read: built-ins carry their own.
        check(general_purpose.def("haiku"), OPUS, "MODEL-13");
        let claude = new(OPUS).built_in(Claude);
        check(claude, OPUS, "MODEL-13");
        check(claude.env("haiku"), HAIKU, "MODEL-13");
        let plan = new(OPUS).built_in(Plan);
        check(plan, OPUS, "MODEL-13");
        check(plan.inv("sonnet"), SONNET, "MODEL-2");
    }

    #[test]
    fn resume_3_only_explore_and_plan_are_one_shot() {
        let one_shot: Vec<&str> = BuiltIn::ALL
            .into_iter()
            .filter(|built_in| built_in.one_shot())
            .map(BuiltIn::name)
            .collect();
        assert_eq!(one_shot, ["Explore", "Plan"]);
    }

    #[test]
    fn spawn_9_built_in_catalogue() {
        // (built-in, the tools its definition denies, the model alias it names)
        let rows: [(BuiltIn, &[&str], Option<&str>); 6] = [
            (Explore, &["Write", "Edit"], None),
            (Plan, &["Write", "Edit"], None),
            (GeneralPurpose, &[], None),
            (Claude, &[], None),
            (StatuslineSetup, &[], Some("sonnet")),
            (ClaudeCodeGuide, &[], Some("haiku")),
        ];
        for (built_in, denied, model) in rows {
            assert_eq!(built_in.disallowed_tools(), denied, "{built_in:?}");
            assert_eq!(built_in.definition_model(), model, "{built_in:?}");
        }
    }

    #[test]
    fn spawn_9_helper_models() {
        check(new(OPUS).built_in(StatuslineSetup), SONNET, "SPAWN-9");
        check(new(OPUS).built_in(ClaudeCodeGuide), HAIKU, "SPAWN-9");
        // Not MODEL-4: a Sonnet main with `[1m]` does not pass its suffix on.
        let sonnet_1m = new("claude-sonnet-5[1m]");
        check(sonnet_1m.built_in(StatuslineSetup), SONNET, "SPAWN-9");
        // The fixed model stands in for frontmatter: it beats the env var from 2.1.251 …
        check(
            new(OPUS).built_in(StatuslineSetup).env("haiku"),
            SONNET,
            "SPAWN-9",
        );
        // … and loses to it before.
        check(
            at(250, OPUS).built_in(StatuslineSetup).env("haiku"),
            HAIKU,
            "MODEL-2",
        );
    }

    #[test]
    fn steps_explain_the_choice() {
        let choice = choose(&new("claude-opus-5[1m]").inv("opus"));
        assert_eq!(choice.steps.last().map(|(_, rule)| *rule), Some("MODEL-4"));
        assert!(choice.steps.iter().all(|(text, _)| !text.is_empty()));
        let choice = choose(&at(250, OPUS).env("haiku"));
        let texts: Vec<&str> = choice.steps.iter().map(|(text, _)| text.as_str()).collect();
        assert!(
            texts.iter().any(|text| text.contains("before v2.1.251")),
            "{texts:?}"
        );
    }

    /// Each version a step names is its gate's, from the gate table: the step is given at
    /// the last version before the gate's edge and not at the edge itself, so a step that
    /// named another gate's version, or a gate that moved without its words, fails here.
    #[test]
    fn step_versions_are_their_gates_edges() {
        let patch = |version: &str| -> u32 {
            let patch = version.strip_prefix("2.1.").and_then(|p| p.parse().ok());
            patch.unwrap_or_else(|| panic!("not a 2.1.N version: {version:?}"))
        };
        let allowed = list(&["claude-opus-5", SONNET]);
        let blocked = |p| {
            at(p, HAIKU)
                .allow(&allowed)
                .inv("claude-opus-4")
                .env("opus")
        };
        // (the version, the words naming it, the request at a patch, the rule)
        type Row<'a> = (
            &'a str,
            String,
            Box<dyn Fn(u32) -> ModelRequest<'a> + 'a>,
            RuleId,
        );
        let force = gates_table::since("subagent_model_force");
        let inherit = gates_table::until("env_inherit_forces_main");
        let haiku = gates_table::since("explore_inherits_main");
        let env_first = gates_table::since("model_order_env_last");
        let dropped = gates_table::since("model_survives_resume");
        let family = gates_table::since("family_alias_substitution");
        let rows: Vec<Row<'_>> = vec![
            (
                force,
                format!("CLAUDE_CODE_SUBAGENT_MODEL_FORCE needs v{force}; ignored"),
                Box::new(|p| at(p, OPUS).force()),
                "MODEL-8",
            ),
            (
                inherit,
                format!("before v{inherit} CLAUDE_CODE_SUBAGENT_MODEL=inherit forces"),
                Box::new(|p| at(p, OPUS).env("inherit")),
                "MODEL-5",
            ),
            (
                haiku,
                format!("before v{haiku} the built-in Explore always runs on Haiku"),
                Box::new(|p| at(p, OPUS).built_in(Explore)),
                "MODEL-12",
            ),
            (
                env_first,
                format!("before v{env_first} CLAUDE_CODE_SUBAGENT_MODEL=`haiku` comes first"),
                Box::new(|p| at(p, OPUS).env("haiku")),
                "MODEL-2",
            ),
            (
                dropped,
                format!("before v{dropped} a resume drops the per-invocation `sonnet`"),
                Box::new(|p| at(p, OPUS).inv("sonnet").resumed()),
                "RESUME-14",
            ),
            (
                family,
                format!("before v{family} a blocked `"),
                Box::new(blocked),
                "MODEL-7",
            ),
        ];
        for (version, text, request, rule) in &rows {
            let edge = patch(version);
            assert!(
                says(request(edge - 1), text, rule),
                "{text} at {}",
                edge - 1
            );
            assert!(!says(request(edge), text, rule), "{text} at {edge}");
        }
        // Q-40: the range DE's cap is an option for; outside it, past its end, the step.
        let (from, to) = gates_table::range("explore_opus_cap_option");
        let text = format!("only for v{from}–v{to};");
        let de = |p| at(p, OPUS).built_in(Explore).de_cap();
        assert!(!says(de(patch(from)), &text, "Q-40"));
        assert!(!says(de(patch(to)), &text, "Q-40"));
        assert!(says(de(patch(to) + 1), &text, "Q-40"));
    }

    /// Whether the choice's explanation has a step citing `rule` whose text contains `text`.
    fn says(request: ModelRequest<'_>, text: &str, rule: RuleId) -> bool {
        choose(&request)
            .steps
            .iter()
            .any(|(step, cited)| step.contains(text) && *cited == rule)
    }

    #[test]
    fn steps_name_each_rule_that_applied() {
        // MODEL-1: an alias main model is named with what it is.
        let alias_main = "the main model `opus` is `claude-opus-5-5`";
        assert!(says(new("opus"), alias_main, "MODEL-1"));
        assert!(!says(new(OPUS), "the main model `", "MODEL-1"));
        // MODEL-1: an alias value resolves to its target; a full ID needs no step.
        assert!(says(
            new(SONNET).inv("opus"),
            "`opus` resolves to `claude-opus-5-5`",
            "MODEL-1"
        ));
        assert!(!says(new(SONNET).inv(OPUS), "resolves to", "MODEL-1"));
        // MODEL-8: FORCE before v2.1.257 is ignored, with a step; not otherwise.
        let too_early = "FORCE needs v2.1.257";
        assert!(says(at(256, OPUS).force(), too_early, "MODEL-8"));
        assert!(!says(at(257, OPUS).force(), too_early, "MODEL-8"));
        assert!(!says(at(256, OPUS), too_early, "MODEL-8"));
        // MODEL-8: a parameter (or a hook's model) under FORCE is named as ignored.
        let ignored = "Claude cannot pass a model while FORCE is on";
        assert!(says(
            at(257, OPUS).force().inv("sonnet"),
            ignored,
            "MODEL-8"
        ));
        assert!(says(
            at(257, OPUS).force().hook("sonnet"),
            ignored,
            "MODEL-8"
        ));
        assert!(!says(at(257, OPUS).force(), ignored, "MODEL-8"));
        // MODEL-8: only a definition with a model of its own has one to ignore.
        let own = "the definition's `model` field is ignored";
        let forced = at(257, OPUS).force();
        assert!(says(forced.built_in(StatuslineSetup), own, "MODEL-8"));
        assert!(!says(forced.built_in(GeneralPurpose), own, "MODEL-8"));
        assert!(!says(forced.built_in(Claude), own, "MODEL-8"));
        // MODEL-2: the per-invocation parameter that wins is named; a hook's model or a
        // resumed parameter is named by its own rule instead.
        let first = "the per-invocation `sonnet` comes first";
        assert!(says(new(OPUS).inv("sonnet"), first, "MODEL-2"));
        assert!(!says(new(OPUS).hook("sonnet"), "comes first", "MODEL-2"));
        assert!(!says(
            new(OPUS).inv("sonnet").resumed(),
            "comes first",
            "MODEL-2"
        ));
        assert!(says(
            new(OPUS).inv("sonnet").resumed(),
            "the per-invocation `sonnet` persists on resume",
            "RESUME-14"
        ));
        // MODEL-2: a definition's field is named; a built-in's own model is not a field.
        assert!(says(
            new(OPUS).def("haiku"),
            "the definition's `model: haiku`",
            "MODEL-2"
        ));
        assert!(!says(
            new(OPUS).built_in(Plan),
            "the definition's",
            "MODEL-13"
        ));
        // MODEL-4: an env alias in the main model's family still resolves to its target.
        let env_alias = "an alias in CLAUDE_CODE_SUBAGENT_MODEL always resolves";
        assert!(says(new(OPUS).env("opus"), env_alias, "MODEL-4"));
        assert!(!says(new(SONNET).env("opus"), env_alias, "MODEL-4"));
    }

    #[test]
    fn model_14_effort_order() {
        let effort = |env, invocation, frontmatter, session, fork, patch| {
            let gates = Gates::for_version(Version::v2_1(patch));
            resolve_effort(env, invocation, frontmatter, session, fork, &gates)
        };
        let level = |text: &str| (Some(text.to_string()), "MODEL-14");
        let none = (None, "MODEL-14");
        // env > per-invocation > frontmatter > session.
        assert_eq!(
            effort(
                Some("low"),
                Some("high"),
                Some("max"),
                Some("medium"),
                false,
                292
            ),
            level("low")
        );
        assert_eq!(
            effort(None, Some("high"), Some("max"), Some("medium"), false, 292),
            level("high")
        );
        assert_eq!(
            effort(None, None, Some("max"), Some("medium"), false, 292),
            level("max")
        );
        assert_eq!(
            effort(None, None, None, Some("medium"), false, 292),
            level("medium")
        );
        assert_eq!(effort(None, None, None, None, false, 292), none);
        // The parameter needs v2.1.292 …
        assert_eq!(
            effort(None, Some("high"), Some("max"), None, false, 291),
            level("max")
        );
        assert_eq!(
            effort(None, Some("high"), None, Some("low"), false, 291),
            level("low")
        );
        // … and is for non-fork runs only.
        assert_eq!(
            effort(None, Some("high"), Some("max"), None, true, 292),
            level("max")
        );
        assert_eq!(effort(None, Some("high"), None, None, true, 292), none);
        // The env var wins for a fork and before 2.1.292 too; empty means unset.
        assert_eq!(
            effort(Some("xhigh"), None, Some("max"), None, true, 250),
            level("xhigh")
        );
        assert_eq!(
            effort(Some(""), None, Some("max"), None, false, 292),
            level("max")
        );
    }

    #[test]
    fn legacy_resolve_order_and_gate() {
        let base = ModelInput {
            main: "opus",
            env_last: true,
            ..Default::default()
        };
        let definition = |model| ModelInput {
            definition: Some(model),
            ..base
        };
        let invocation = |model| ModelInput {
            invocation: Some(model),
            ..base
        };
        assert_eq!(resolve(base).0, "opus");
        assert_eq!(resolve(definition("haiku")).0, "haiku");
        assert_eq!(resolve(definition("inherit")).0, "opus");
        assert_eq!(
            resolve(ModelInput {
                definition: Some("haiku"),
                ..invocation("sonnet")
            })
            .0,
            "sonnet"
        );
        assert_eq!(resolve(invocation("inherit")).0, "opus");
        assert_eq!(
            resolve(ModelInput {
                env: Some("haiku"),
                ..base
            })
            .0,
            "haiku"
        );
        let env_and_definition = ModelInput {
            env: Some("haiku"),
            ..definition("sonnet")
        };
        assert_eq!(resolve(env_and_definition).0, "sonnet");
        assert_eq!(
            resolve(ModelInput {
                env: Some("inherit"),
                ..base
            })
            .0,
            "opus"
        );
        assert_eq!(
            resolve(ModelInput {
                env_last: false,
                ..env_and_definition
            })
            .0,
            "haiku"
        );
        let fork = ModelInput {
            fork: true,
            env: Some("haiku"),
            ..base
        };
        assert_eq!(resolve(fork), ("opus", "FORK-5"));
    }
}
