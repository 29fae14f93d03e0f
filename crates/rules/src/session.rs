//! The session-wide settings that decide scheduling: session kind, permission modes, and
//! the documented environment variables resolved into one [`SessionConfig`].
//!
//! Not for per-agent decisions; those live in the sibling modules and read this config.

use std::collections::BTreeMap;
use std::str::FromStr;

use crate::gates_table;
use crate::version::{Gates, Version};

crate::vocabulary! {
    /// How the session was started (glossary: *session kind*).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub enum SessionKind {
        /// A terminal session.
        #[default]
        Interactive => "interactive",
        /// `claude -p`.
        Headless => "headless",
        /// The Agent SDK.
        Sdk => "sdk",
    }
}

impl SessionKind {
    /// True for a terminal session.
    pub fn is_interactive(self) -> bool {
        self == SessionKind::Interactive
    }
}

/// Something the person does at the terminal or through the SDK, rather than Claude.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PersonAction {
    /// Ctrl+B on a running foreground task (FGBG-5).
    CtrlB,
    /// `/subtask TASK` typed at the prompt (FORK-9).
    Subtask,
    /// Stopping a subagent: `x` in `/tasks` or the panel, or an SDK `stop_task` request
    /// (RESUME-10).
    Stop,
}

impl SessionKind {
    /// Why the person cannot do `action` in a session of this kind, with the rule that
    /// says how it is done; `None` when they can (docs/decisions.md, "Ctrl+B, `/subtask`
    /// and a person's stop in `-p`"). Ctrl+B is a key of the terminal (FGBG-5) and
    /// `/subtask` a command typed at its prompt (FORK-9): only an interactive session has
    /// them. A stop is `x` in `/tasks` or an SDK `stop_task` request (RESUME-10): a `-p`
    /// session has neither.
    ///
    /// ```
    /// use subsim_rules::session::{PersonAction, SessionKind};
    /// assert_eq!(SessionKind::Interactive.person_cannot(PersonAction::CtrlB), None);
    /// assert_eq!(SessionKind::Sdk.person_cannot(PersonAction::Stop), None);
    /// assert_eq!(SessionKind::Headless.person_cannot(PersonAction::Stop).map(|(_, rule)| rule), Some("RESUME-10"));
    /// ```
    pub fn person_cannot(self, action: PersonAction) -> Option<(&'static str, crate::RuleId)> {
        match (self, action) {
            (SessionKind::Interactive, _) | (SessionKind::Sdk, PersonAction::Stop) => None,
            (SessionKind::Headless, PersonAction::CtrlB) => Some((
                "a `-p` session has no terminal to press Ctrl+B in",
                "FGBG-5",
            )),
            (SessionKind::Sdk, PersonAction::CtrlB) => Some((
                "an Agent SDK session has no terminal to press Ctrl+B in",
                "FGBG-5",
            )),
            (SessionKind::Headless, PersonAction::Subtask) => {
                Some(("a `-p` session has no prompt to type /subtask at", "FORK-9"))
            }
            (SessionKind::Sdk, PersonAction::Subtask) => Some((
                "an Agent SDK session has no prompt to type /subtask at",
                "FORK-9",
            )),
            (SessionKind::Headless, PersonAction::Stop) => Some((
                "a `-p` session has neither `/tasks` nor the SDK's stop_task request",
                "RESUME-10",
            )),
        }
    }
}

impl FromStr for SessionKind {
    type Err = ();
    fn from_str(text: &str) -> Result<SessionKind, ()> {
        match text {
            "interactive" => Ok(SessionKind::Interactive),
            "headless" => Ok(SessionKind::Headless),
            "sdk" => Ok(SessionKind::Sdk),
            _ => Err(()),
        }
    }
}

crate::vocabulary! {
    /// A `permissionMode` value (PERM-9). `manual` parses to [`PermissionMode::Default`].
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum PermissionMode {
        /// Prompts for permission ("Manual").
        #[default]
        Default => "default",
        /// Auto-accepts file edits.
        AcceptEdits => "acceptEdits",
        /// The classifier reviews actions.
        Auto => "auto",
        /// Auto-denies prompts.
        DontAsk => "dontAsk",
        /// Skips prompts.
        BypassPermissions => "bypassPermissions",
        /// Read-only exploration.
        Plan => "plan",
    }
}

impl PermissionMode {
    /// Every spelling accepted in files, for "did you mean" suggestions.
    pub const NAMES: [&'static str; 7] = [
        "default",
        "acceptEdits",
        "auto",
        "dontAsk",
        "bypassPermissions",
        "plan",
        "manual",
    ];
}

impl FromStr for PermissionMode {
    type Err = ();
    fn from_str(text: &str) -> Result<PermissionMode, ()> {
        match text {
            "default" | "manual" => Ok(PermissionMode::Default),
            "acceptEdits" => Ok(PermissionMode::AcceptEdits),
            "auto" => Ok(PermissionMode::Auto),
            "dontAsk" => Ok(PermissionMode::DontAsk),
            "bypassPermissions" => Ok(PermissionMode::BypassPermissions),
            "plan" => Ok(PermissionMode::Plan),
            _ => Err(()),
        }
    }
}

/// The environment variables the scheduling rules read, by their real names.
pub mod env {
    /// CAP-1: the concurrency cap.
    pub const MAX_CONCURRENT: &str = "CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS";
    /// DEPTH-2: the depth limit.
    pub const MAX_DEPTH: &str = "CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH";
    /// FORK-2: fork mode override.
    pub const FORK_SUBAGENT: &str = "CLAUDE_CODE_FORK_SUBAGENT";
    /// FGBG-1 case 2: everything in the foreground.
    pub const DISABLE_BACKGROUND_TASKS: &str = "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS";
    /// MODEL-2: the subagent model.
    pub const SUBAGENT_MODEL: &str = "CLAUDE_CODE_SUBAGENT_MODEL";
    /// MODEL-8: force one model.
    pub const SUBAGENT_MODEL_FORCE: &str = "CLAUDE_CODE_SUBAGENT_MODEL_FORCE";
    /// MODEL-14: effort override.
    pub const EFFORT_LEVEL: &str = "CLAUDE_CODE_EFFORT_LEVEL";
    /// SPAWN-8: drop Explore and Plan.
    pub const DISABLE_EXPLORE_PLAN: &str = "CLAUDE_CODE_DISABLE_EXPLORE_PLAN_AGENTS";
    /// SPAWN-8: drop every built-in (non-interactive sessions).
    pub const SDK_DISABLE_BUILTINS: &str = "CLAUDE_AGENT_SDK_DISABLE_BUILTIN_AGENTS";
    /// MODEL-4: an explicit model for the `opus` alias on other providers.
    pub const DEFAULT_OPUS_MODEL: &str = "ANTHROPIC_DEFAULT_OPUS_MODEL";
    /// Every variable the simulator reads, for validation hints.
    pub const KNOWN: [&str; 10] = [
        MAX_CONCURRENT,
        MAX_DEPTH,
        FORK_SUBAGENT,
        DISABLE_BACKGROUND_TASKS,
        SUBAGENT_MODEL,
        SUBAGENT_MODEL_FORCE,
        EFFORT_LEVEL,
        DISABLE_EXPLORE_PLAN,
        SDK_DISABLE_BUILTINS,
        DEFAULT_OPUS_MODEL,
    ];
}

/// A note about how a setting was read, e.g. an invalid value that fell back to its default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigNote {
    /// The rule or open question that decided.
    pub rule: &'static str,
    /// What happened, in words.
    pub text: String,
}

/// The session-wide scheduling settings after applying the version gates and env vars.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionConfig {
    /// The gates of the session's version.
    pub gates: Gates,
    /// Session kind.
    pub kind: SessionKind,
    /// CAP-1: the cap, or `None` when the version has none (Q-34).
    pub cap: Option<u32>,
    /// The session's settings the moment-time admission reads (CAP-4's ultracode, …):
    /// [`crate::cap::Settings`], kept whole as the caller gave them.
    pub admission: crate::cap::Settings,
    /// DEPTH-1/2/6: how many subagent layers below main may exist (0 = no subagent may spawn).
    pub depth_limit: u32,
    /// FORK-1/2: whether fork mode is on.
    pub fork_mode: bool,
    /// FGBG-1 case 2: `CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1`.
    pub background_disabled: bool,
    /// Agent teams enabled (SPAWN-11).
    pub agent_teams: bool,
    /// The main conversation's permission mode.
    pub permission_mode: PermissionMode,
    /// SPAWN-8: `CLAUDE_CODE_DISABLE_EXPLORE_PLAN_AGENTS` in effect.
    pub disable_explore_plan: bool,
    /// SPAWN-8: `CLAUDE_AGENT_SDK_DISABLE_BUILTIN_AGENTS` in effect.
    pub disable_builtins: bool,
    /// PERM-12: whether auto mode is available to a subagent; `false` once a settings file
    /// sets `disableAutoMode` ([`SessionConfig::disable_auto_mode`]).
    pub auto_mode_available: bool,
}

/// Reads a positive integer env value (Q-9: anything else is ignored, with a note).
fn positive_int(
    env: &BTreeMap<String, String>,
    name: &str,
    notes: &mut Vec<ConfigNote>,
) -> Option<u32> {
    let raw = env.get(name)?;
    match raw.trim().parse::<u32>() {
        Ok(value) if value > 0 => Some(value),
        _ => {
            notes.push(ConfigNote {
                rule: "Q-9",
                text: format!("{name}={raw:?} is not a positive integer; the default applies"),
            });
            None
        }
    }
}

/// Reads a boolean env value: `1`/`true` or `0`/`false`; anything else is ignored with a
/// note (Q-9, applied to flags too).
fn flag(env: &BTreeMap<String, String>, name: &str, notes: &mut Vec<ConfigNote>) -> Option<bool> {
    match env.get(name).map(|value| value.trim()) {
        Some("1") | Some("true") => Some(true),
        Some("0") | Some("false") => Some(false),
        None => None,
        Some(other) => {
            notes.push(ConfigNote {
                rule: "Q-9",
                text: format!("{name}={other:?} is not 1, 0, true or false; it is ignored"),
            });
            None
        }
    }
}

impl SessionConfig {
    /// Resolves the session settings for `version`, reading the documented env vars.
    pub fn resolve(
        version: Version,
        kind: SessionKind,
        env: &BTreeMap<String, String>,
        admission: &crate::cap::Settings,
        agent_teams: bool,
        permission_mode: PermissionMode,
    ) -> (SessionConfig, Vec<ConfigNote>) {
        let gates = Gates::for_version(version);
        let mut notes = Vec::new();
        // CAP-1: default 20, any positive integer through the env var; no cap before 2.1.217.
        let cap = if gates.cap {
            Some(positive_int(env, env::MAX_CONCURRENT, &mut notes).unwrap_or(20))
        } else {
            None
        };
        // DEPTH-2 / DEPTH-6: the env var is honoured only where the limit is configurable.
        let depth_limit = if gates.depth_configurable {
            positive_int(env, env::MAX_DEPTH, &mut notes).unwrap_or(gates.default_depth)
        } else {
            if env.contains_key(env::MAX_DEPTH) {
                notes.push(ConfigNote {
                    rule: "DEPTH-6",
                    text: format!(
                        "{} is ignored before v{}; the depth limit is fixed at {}",
                        env::MAX_DEPTH,
                        gates_table::since("depth_configurable"),
                        gates.default_depth
                    ),
                });
            }
            gates.default_depth
        };
        // FORK-1 / FORK-2: interactive on from v2.1.232, -p and SDK off; the env var overrides.
        let fork_default = kind.is_interactive() && gates.fork_mode_interactive_default;
        let fork_mode = flag(env, env::FORK_SUBAGENT, &mut notes).unwrap_or(fork_default);
        let background_disabled =
            flag(env, env::DISABLE_BACKGROUND_TASKS, &mut notes).unwrap_or(false);
        // SPAWN-8: the Explore/Plan switch exists from v2.1.198; the SDK switch removes every
        // built-in, in non-interactive sessions only.
        let disable_explore_plan = flag(env, env::DISABLE_EXPLORE_PLAN, &mut notes)
            .unwrap_or(false)
            && gates.disable_explore_plan_env;
        let disable_builtins = flag(env, env::SDK_DISABLE_BUILTINS, &mut notes).unwrap_or(false)
            && !kind.is_interactive();
        let config = SessionConfig {
            gates,
            kind,
            cap,
            admission: admission.clone(),
            depth_limit,
            fork_mode,
            background_disabled,
            agent_teams,
            permission_mode,
            disable_explore_plan,
            disable_builtins,
            auto_mode_available: true,
        };
        (config, notes)
    }

    /// Why the person cannot do `action` in this session, with the rule: the session
    /// kind's answer ([`SessionKind::person_cannot`]), then FGBG-1 case 2 for Ctrl+B with
    /// `CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1`. The variable turns background off "por
    /// completo" (entirely: the BLOG's reference table, "Desactivar el segundo plano por
    /// completo | CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1"), so no running task can be sent
    /// to the background either, and the key does nothing (docs/decisions.md).
    pub fn person_cannot(&self, action: PersonAction) -> Option<(&'static str, crate::RuleId)> {
        if let Some(refusal) = self.kind.person_cannot(action) {
            return Some(refusal);
        }
        match action {
            PersonAction::CtrlB if self.background_disabled => Some((
                "background tasks are disabled (CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1): no task \
                 can be sent to the background",
                "FGBG-1",
            )),
            PersonAction::CtrlB | PersonAction::Subtask | PersonAction::Stop => None,
        }
    }

    /// PERM-12 / D-9: a settings file sets `disableAutoMode`, so auto mode is available to
    /// no subagent: one that declares `permissionMode: auto` keeps the main conversation's
    /// mode ([`crate::prompt::effective_mode`]). PERM-10 (JP): "where auto mode is
    /// unavailable the session starts in manual mode", so a main session asked to start in
    /// `auto` starts in `default`, with a note.
    pub fn disable_auto_mode(&mut self, notes: &mut Vec<ConfigNote>) {
        self.auto_mode_available = false;
        if self.permission_mode == PermissionMode::Auto {
            self.permission_mode = PermissionMode::Default;
            notes.push(ConfigNote {
                rule: "PERM-10",
                text: "disableAutoMode is set: auto mode is not available, so the session \
                       starts in default (manual) mode"
                    .to_string(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctrl_b_does_nothing_when_background_tasks_are_disabled() {
        let off = resolve(
            292,
            SessionKind::Interactive,
            &[(env::DISABLE_BACKGROUND_TASKS, "1")],
        );
        assert_eq!(
            off.person_cannot(PersonAction::CtrlB).map(|(_, rule)| rule),
            Some("FGBG-1")
        );
        assert_eq!(off.person_cannot(PersonAction::Subtask), None);
        let on = resolve(292, SessionKind::Interactive, &[]);
        assert_eq!(on.person_cannot(PersonAction::CtrlB), None);
        // The session kind answers first: a `-p` session has no terminal at all.
        let headless = resolve(
            292,
            SessionKind::Headless,
            &[(env::DISABLE_BACKGROUND_TASKS, "1")],
        );
        assert_eq!(
            headless
                .person_cannot(PersonAction::CtrlB)
                .map(|(_, rule)| rule),
            Some("FGBG-5")
        );
    }

    #[test]
    fn disable_auto_mode_makes_auto_unavailable_and_a_main_asked_for_auto_starts_in_default() {
        let mut config = resolve(292, SessionKind::Interactive, &[]);
        assert!(config.auto_mode_available);
        config.permission_mode = PermissionMode::Auto;
        let mut notes = Vec::new();
        config.disable_auto_mode(&mut notes);
        assert!(!config.auto_mode_available);
        assert_eq!(config.permission_mode, PermissionMode::Default);
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].rule, "PERM-10");
        // A main mode other than auto is left as it is, without a note.
        let mut config = resolve(292, SessionKind::Interactive, &[]);
        config.permission_mode = PermissionMode::DontAsk;
        let mut notes = Vec::new();
        config.disable_auto_mode(&mut notes);
        assert_eq!(config.permission_mode, PermissionMode::DontAsk);
        assert!(notes.is_empty());
    }

    fn resolve(version: u32, kind: SessionKind, pairs: &[(&str, &str)]) -> SessionConfig {
        let env = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        SessionConfig::resolve(
            Version::v2_1(version),
            kind,
            &env,
            &crate::cap::Settings::default(),
            false,
            PermissionMode::Default,
        )
        .0
    }

    #[test]
    fn cap_defaults_and_env() {
        assert_eq!(resolve(292, SessionKind::Interactive, &[]).cap, Some(20));
        assert_eq!(
            resolve(292, SessionKind::Interactive, &[(env::MAX_CONCURRENT, "5")]).cap,
            Some(5)
        );
        assert_eq!(
            resolve(292, SessionKind::Interactive, &[(env::MAX_CONCURRENT, "0")]).cap,
            Some(20)
        );
        assert_eq!(resolve(216, SessionKind::Interactive, &[]).cap, None);
    }

    #[test]
    fn depth_env_only_where_configurable() {
        assert_eq!(
            resolve(292, SessionKind::Interactive, &[(env::MAX_DEPTH, "1")]).depth_limit,
            1
        );
        assert_eq!(
            resolve(200, SessionKind::Interactive, &[(env::MAX_DEPTH, "1")]).depth_limit,
            5
        );
    }

    #[test]
    fn fork_mode_by_kind_and_env() {
        assert!(resolve(292, SessionKind::Interactive, &[]).fork_mode);
        assert!(!resolve(231, SessionKind::Interactive, &[]).fork_mode);
        assert!(!resolve(292, SessionKind::Headless, &[]).fork_mode);
        assert!(resolve(292, SessionKind::Sdk, &[(env::FORK_SUBAGENT, "1")]).fork_mode);
        assert!(!resolve(292, SessionKind::Interactive, &[(env::FORK_SUBAGENT, "0")]).fork_mode);
    }

    // Tests for mutants `cargo mutants` found alive (docs/TESTING.md).

    #[test]
    fn kinds_and_modes_spell_and_parse_both_ways() {
        use PermissionMode::*;
        let kinds = [
            (SessionKind::Interactive, "interactive"),
            (SessionKind::Headless, "headless"),
            (SessionKind::Sdk, "sdk"),
        ];
        for (kind, spelling) in kinds {
            assert_eq!(kind.as_str(), spelling);
            assert_eq!(spelling.parse::<SessionKind>(), Ok(kind));
        }
        assert_eq!("batch".parse::<SessionKind>(), Err(()));
        let modes = [
            (Default, "default"),
            (AcceptEdits, "acceptEdits"),
            (Auto, "auto"),
            (DontAsk, "dontAsk"),
            (BypassPermissions, "bypassPermissions"),
            (Plan, "plan"),
        ];
        for (mode, spelling) in modes {
            assert_eq!(mode.as_str(), spelling);
            assert_eq!(mode.to_string(), spelling);
            assert_eq!(spelling.parse::<PermissionMode>(), Ok(mode));
        }
    }

    #[test]
    fn spawn_8_built_in_switches_by_version_and_kind() {
        let interactive = SessionKind::Interactive;
        let headless = SessionKind::Headless;
        let explore_plan = [(env::DISABLE_EXPLORE_PLAN, "1")];
        assert!(resolve(292, interactive, &explore_plan).disable_explore_plan);
        assert!(!resolve(197, interactive, &explore_plan).disable_explore_plan);
        assert!(!resolve(292, interactive, &[]).disable_explore_plan);
        let builtins = [(env::SDK_DISABLE_BUILTINS, "1")];
        assert!(resolve(292, headless, &builtins).disable_builtins);
        assert!(resolve(292, SessionKind::Sdk, &builtins).disable_builtins);
        assert!(!resolve(292, interactive, &builtins).disable_builtins);
        assert!(!resolve(292, headless, &[]).disable_builtins);
    }
}
