//! Claude Code versions and the version gates of the catalog (rules.md §23).
//!
//! This module is the *one place* that maps a version to the rule set in force: every
//! gate the simulator honours is a field of [`Gates`], computed by [`Gates::for_version`].
//! It is not for parsing anything but the `major.minor.patch` form.

use std::fmt;
use std::str::FromStr;

/// A Claude Code version such as `2.1.186`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Major component.
    pub major: u32,
    /// Minor component.
    pub minor: u32,
    /// Patch component.
    pub patch: u32,
}

impl Version {
    /// The newest version the catalog documents (ES mentions v2.1.292).
    pub const NEWEST: Version = Version::new(2, 1, 292);

    /// Builds a version from its three components.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    /// `2.1.patch`, the only line the catalog speaks about.
    pub const fn v2_1(patch: u32) -> Version {
        Version::new(2, 1, patch)
    }
}

impl Default for Version {
    fn default() -> Version {
        Version::NEWEST
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Why a version string did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VersionError {
    /// The text is not three dot-separated non-negative integers.
    Malformed(String),
}

impl fmt::Display for VersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionError::Malformed(text) => write!(
                f,
                "`{text}` is not a version; write it as major.minor.patch, e.g. \"2.1.186\""
            ),
        }
    }
}

impl std::error::Error for VersionError {}

impl FromStr for Version {
    type Err = VersionError;

    fn from_str(text: &str) -> Result<Version, VersionError> {
        let trimmed = text.trim().trim_start_matches('v');
        let mut parts = trimmed.split('.');
        let mut next = || -> Option<u32> { parts.next()?.parse().ok() };
        let (Some(major), Some(minor), Some(patch)) = (next(), next(), next()) else {
            return Err(VersionError::Malformed(text.to_string()));
        };
        if parts.next().is_some() {
            return Err(VersionError::Malformed(text.to_string()));
        }
        Ok(Version::new(major, minor, patch))
    }
}

/// Every version gate that changes what the simulator does, resolved for one version.
///
/// Fields are named after what they switch on; each doc comment names the rule and the gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gates {
    /// The version these gates were computed for.
    pub version: Version,
    /// CAP-1: the concurrency cap exists from v2.1.217; earlier versions have none.
    pub cap: bool,
    /// DEPTH-6: the default depth limit (5 in 2.1.172–2.1.216, 1 in 2.1.217–2.1.218, 3 from
    /// 2.1.219); `0` below 2.1.172 where nesting is unsupported.
    pub default_depth: u32,
    /// DEPTH-2: `CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH` is honoured from v2.1.217.
    pub depth_configurable: bool,
    /// PERM-4 / PERM-5: background prompts surface in the main session from v2.1.186;
    /// before, they were silently auto-denied.
    pub background_prompts: bool,
    /// FORK-1: fork mode is on by default in interactive sessions from v2.1.232.
    pub fork_mode_interactive_default: bool,
    /// FORK-9: the user fork command: `/subtask` from v2.1.212, `/fork` in 2.1.161–2.1.211.
    pub user_fork_command: Option<&'static str>,
    /// NOTIFY-4: from v2.1.211 Claude waits for the completion notification and answers
    /// "still running"; before, it sometimes reported unfinished results.
    pub waits_for_notification: bool,
    /// RESUME-8: from v2.1.205 a resumed agent shows as running again.
    pub resume_shows_running: bool,
    /// RESUME-12: the SendMessage name-reuse check, from v2.1.199.
    pub name_reuse_check: bool,
    /// RESUME-11: typing into a user-stopped agent's transcript resumes it, from v2.1.191.
    pub type_to_resume: bool,
    /// RESUME-4: `maxTurns` partial-output marking, from v2.1.246.
    pub max_turns_partial: bool,
    /// RESUME-14: a per-invocation `model` survives resume, from v2.1.211.
    pub model_survives_resume: bool,
    /// TOOLS-12: a zero-tools spawn is refused from v2.1.208.
    pub zero_tools_refused: bool,
    /// TOOLS-5: `LSP` is on the background allow-list from v2.1.280.
    pub lsp_in_background: bool,
    /// TOOLS-3 / D-1 / Q-20: `TaskOutput` is removed by filter 1 up to v2.1.271.
    pub task_output_filtered: bool,
    /// HANDBACK-1: `SubagentHandback` exists from v2.1.271.
    pub handback: bool,
    /// PANEL-2 / PANEL-4: a successful row leaves the panel at once from v2.1.232.
    pub success_row_removed_at_once: bool,
    /// PANEL-5: completed agents stay listed in `/tasks` for 30 s from v2.1.208.
    pub tasks_lists_done: bool,
    /// SCAN-1: reports are scanned from v2.1.210.
    pub output_scanning: bool,
    /// PERM-12: a subagent declaring `bypassPermissions` under a default/dontAsk/plan main
    /// keeps the main mode from v2.1.267.
    pub bypass_keeps_main_mode: bool,
    /// MODEL-2: per-invocation > frontmatter > env > main from v2.1.251; env first before.
    pub model_order_env_last: bool,
    /// SPAWN-8: `CLAUDE_CODE_DISABLE_EXPLORE_PLAN_AGENTS` is honoured from v2.1.198.
    pub disable_explore_plan_env: bool,
    /// ERR-2: from v2.1.199 a failed run reports failure rather than error text.
    pub reports_failure: bool,
    /// MODEL-5: before v2.1.196 `CLAUDE_CODE_SUBAGENT_MODEL=inherit` forced subagents onto
    /// the main model and ignored every other source; from v2.1.196 it behaves like unset.
    pub env_inherit_forces_main: bool,
    /// MODEL-12 (DE): from v2.1.198 Explore inherits the main model; before, it always ran
    /// on Haiku.
    pub explore_inherits_main: bool,
    /// MODEL-12 / D-4 / Q-40: DE's "capped at Opus on the Claude API" reading of Explore's
    /// model may be chosen instead of ES's Fable rule, for the versions DE documents
    /// (v2.1.198 up to v2.1.271, the last version DE names). From v2.1.272 only ES's rule
    /// applies. Same DE/ES split as `task_output_filtered`.
    pub explore_opus_cap_option: bool,
    /// MODEL-7: from v2.1.222 a blocked family alias runs on the newest allowed version of
    /// its family; before, it fell back to the inherited model.
    pub family_alias_substitution: bool,
    /// MODEL-8: `CLAUDE_CODE_SUBAGENT_MODEL_FORCE` is honoured from v2.1.257.
    pub subagent_model_force: bool,
    /// MODEL-14 / RESUME-15: the per-invocation `effort` parameter exists from v2.1.292.
    pub effort_parameter: bool,
    // scan, handback, hooks, errors, panel gates
    /// HOOK-3: a hyphenated `SubagentStart`/`SubagentStop` matcher such as `db-agent`
    /// matches exactly from v2.1.195; before, it was an unanchored regex.
    pub hook_matcher_exact: bool,
    /// HOOK-6: project-level frontmatter hooks need folder trust from v2.1.218; before, they
    /// ran from untrusted folders, non-interactive sessions included.
    pub frontmatter_hooks_need_trust: bool,
    /// ERR-3: in v2.1.199 *exactly*, a foreground tool-calls-only cut returned an empty
    /// partial result holding only the interruption note.
    pub tool_calls_only_empty_partial: bool,
    /// PANEL-8: `/tasks` shows each subagent's model (and effort, if set) from v2.1.242.
    pub tasks_show_model: bool,
    /// PANEL-11: `/agents` opens the Running/Library wizard up to v2.1.197; from v2.1.198 it
    /// prints a reminder.
    pub agents_wizard: bool,
    /// PANEL-9 (DE): from v2.1.199 `/model` and `/fast` in a transcript view show a notice
    /// instead of silently running on the main conversation.
    pub transcript_settings_notice: bool,
    /// PANEL-10: `Ctrl+Enter` / `Ctrl+X Ctrl+S` "read now" from a transcript view, v2.1.286+.
    pub read_now: bool,
    // spawn, tools, permission, context gates
    /// PERM-9 (DE): `permissionMode: manual` is accepted as an alias of `default` from
    /// v2.1.200; before, the value is not recognised and the field counts as unset.
    pub manual_alias: bool,
    /// CTX-8: `--append-subagent-system-prompt` exists from v2.1.205.
    pub append_subagent_prompt: bool,
    /// CTX-8: `--append-subagent-system-prompt-file` exists from v2.1.261.
    pub append_subagent_prompt_file: bool,
    /// CTX-6: the sibling roster joins the startup context from v2.1.206.
    pub sibling_roster: bool,
    /// CTX-3 / D-15: the `omitClaudeMd` field exists from v2.1.271; before, it is ignored.
    pub omit_claude_md: bool,
    /// MCP-3: inline servers from project and `--add-dir` agent files need folder trust from
    /// v2.1.238; before, they loaded without a trust check.
    pub inline_mcp_trust: bool,
    /// MCP-5 (DE): the main session's MCP restrictions cover frontmatter servers from
    /// v2.1.153.
    pub mcp_restrictions_cover_frontmatter: bool,
    /// DEF-8 / MAIN-2: an empty agent `prompt` is allowed from v2.1.281; with no `memory`
    /// it leaves the `--agent` session's system prompt unchanged.
    pub empty_agent_prompt: bool,
    /// DEF-8: `--agents` takes a JSON file path (non-interactive sessions) from v2.1.281;
    /// before, only the JSON itself.
    pub agents_file_path: bool,
    /// DEF-10 (DE): a definition `name` containing `:` makes the file skipped from
    /// v2.1.218; before, such names were accepted.
    pub colon_names_skipped: bool,
    // isolation gates
    /// ISO-2: from v2.1.203 an isolated run's command whose working directory resolves to
    /// the main checkout fails; before, it could run there.
    pub worktree_cwd_check: bool,
    /// ISO-3: from v2.1.210 the working-directory check covers the whole repository and a
    /// linked worktree's main checkout; before, only the launch directory.
    pub worktree_check_whole_repo: bool,
}

impl Gates {
    /// The gates in force for `version` (rules.md §23).
    pub fn for_version(version: Version) -> Gates {
        let at_least = |patch: u32| version >= Version::v2_1(patch);
        let default_depth = if at_least(219) {
            3
        } else if at_least(217) {
            1
        } else if at_least(172) {
            5
        } else {
            0
        };
        let user_fork_command = if at_least(212) {
            Some("/subtask")
        } else if at_least(161) {
            Some("/fork")
        } else {
            None
        };
        Gates {
            version,
            cap: at_least(217),
            default_depth,
            depth_configurable: at_least(217),
            background_prompts: at_least(186),
            fork_mode_interactive_default: at_least(232),
            user_fork_command,
            waits_for_notification: at_least(211),
            resume_shows_running: at_least(205),
            name_reuse_check: at_least(199),
            type_to_resume: at_least(191),
            max_turns_partial: at_least(246),
            model_survives_resume: at_least(211),
            zero_tools_refused: at_least(208),
            lsp_in_background: at_least(280),
            task_output_filtered: !at_least(272),
            handback: at_least(271),
            success_row_removed_at_once: at_least(232),
            tasks_lists_done: at_least(208),
            output_scanning: at_least(210),
            bypass_keeps_main_mode: at_least(267),
            model_order_env_last: at_least(251),
            disable_explore_plan_env: at_least(198),
            reports_failure: at_least(199),
            env_inherit_forces_main: !at_least(196),
            explore_inherits_main: at_least(198),
            explore_opus_cap_option: at_least(198) && !at_least(272),
            family_alias_substitution: at_least(222),
            subagent_model_force: at_least(257),
            effort_parameter: at_least(292),
            // scan, handback, hooks, errors, panel gates
            hook_matcher_exact: at_least(195),
            frontmatter_hooks_need_trust: at_least(218),
            tool_calls_only_empty_partial: version == Version::v2_1(199),
            tasks_show_model: at_least(242),
            agents_wizard: !at_least(198),
            transcript_settings_notice: at_least(199),
            read_now: at_least(286),
            // spawn, tools, permission, context gates
            manual_alias: at_least(200),
            append_subagent_prompt: at_least(205),
            append_subagent_prompt_file: at_least(261),
            sibling_roster: at_least(206),
            omit_claude_md: at_least(271),
            inline_mcp_trust: at_least(238),
            mcp_restrictions_cover_frontmatter: at_least(153),
            empty_agent_prompt: at_least(281),
            agents_file_path: at_least(281),
            colon_names_skipped: at_least(218),
            // isolation gates
            worktree_cwd_check: at_least(203),
            worktree_check_whole_repo: at_least(210),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_orders_versions() {
        let old: Version = "2.1.185".parse().unwrap();
        let new: Version = "v2.1.292".parse().unwrap();
        assert!(old < new);
        assert_eq!(new, Version::NEWEST);
        assert!("2.1".parse::<Version>().is_err());
        assert!("2.1.x".parse::<Version>().is_err());
        assert!("2.1.3.4".parse::<Version>().is_err());
    }

    #[test]
    fn versions_print_as_written_and_bad_ones_say_how_to_write_them() {
        // §23: versions are named `major.minor.patch` in traces and messages.
        assert_eq!(Version::v2_1(186).to_string(), "2.1.186");
        assert_eq!(Version::new(10, 0, 7).to_string(), "10.0.7");
        let error = "2.1".parse::<Version>().unwrap_err();
        assert_eq!(error, VersionError::Malformed("2.1".to_string()));
        assert_eq!(
            error.to_string(),
            "`2.1` is not a version; write it as major.minor.patch, e.g. \"2.1.186\""
        );
    }

    #[test]
    fn depth_default_follows_depth_6_table() {
        let depth = |patch| Gates::for_version(Version::v2_1(patch)).default_depth;
        assert_eq!(depth(171), 0);
        assert_eq!(depth(172), 5);
        assert_eq!(depth(216), 5);
        assert_eq!(depth(217), 1);
        assert_eq!(depth(218), 1);
        assert_eq!(depth(219), 3);
        assert_eq!(depth(292), 3);
    }

    #[test]
    fn cap_and_prompt_gates() {
        let gates = |patch| Gates::for_version(Version::v2_1(patch));
        assert!(!gates(216).cap);
        assert!(gates(217).cap);
        assert!(!gates(185).background_prompts);
        assert!(gates(186).background_prompts);
        assert_eq!(gates(211).user_fork_command, Some("/fork"));
        assert_eq!(gates(212).user_fork_command, Some("/subtask"));
        assert_eq!(gates(160).user_fork_command, None);
    }

    #[test]
    fn model_gates() {
        let gates = |patch| Gates::for_version(Version::v2_1(patch));
        assert!(gates(195).env_inherit_forces_main);
        assert!(!gates(196).env_inherit_forces_main);
        assert!(!gates(197).explore_inherits_main);
        assert!(gates(198).explore_inherits_main);
        assert!(!gates(197).explore_opus_cap_option);
        assert!(gates(198).explore_opus_cap_option);
        assert!(gates(271).explore_opus_cap_option);
        assert!(!gates(272).explore_opus_cap_option);
        assert!(!gates(210).model_survives_resume);
        assert!(gates(211).model_survives_resume);
        assert!(!gates(221).family_alias_substitution);
        assert!(gates(222).family_alias_substitution);
        assert!(!gates(250).model_order_env_last);
        assert!(gates(251).model_order_env_last);
        assert!(!gates(256).subagent_model_force);
        assert!(gates(257).subagent_model_force);
        assert!(!gates(291).effort_parameter);
        assert!(gates(292).effort_parameter);
    }
}
