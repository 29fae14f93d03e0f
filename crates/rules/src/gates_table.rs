//! The version gates of [`Gates`] as a table for people: for each field, the rule it
//! belongs to, the versions where it holds, what it switches, and how to read its value.
//!
//! `subsim rules`, `subsim explain` and `subsim diff` print from this table. It describes
//! [`Gates::for_version`] and does not decide anything: the gates themselves are computed
//! only in `version.rs`. The tests below keep the two in step: every field of [`Gates`]
//! (but `version`, which is not a gate) has exactly one row, in declaration order, and
//! every row's `version` text agrees with what [`Gates::for_version`] computes at the edges
//! of each range it names.

use crate::{Gates, RuleId};

/// One version gate, described.
#[derive(Clone, Copy, Debug)]
pub struct GateInfo {
    /// The field of [`Gates`].
    pub field: &'static str,
    /// The rule the gate belongs to (the first one its doc comment names).
    pub rule: RuleId,
    /// Other rules, decisions (`D-n`) or open questions (`Q-n`) the gate also serves.
    pub also: &'static [RuleId],
    /// Where the gate holds. A boolean gate is on at `2.1.217` (that version and later),
    /// `<2.1.186` (before it), `2.1.172–2.1.216` (both ends included) or `=2.1.199`
    /// (exactly). A gate with more than two values lists `RANGE: value` pieces joined by
    /// ` · `, e.g. `<2.1.172: 0 · 2.1.172–2.1.216: 5 · 2.1.219: 3`.
    pub version: &'static str,
    /// What it switches, in words.
    pub what: &'static str,
    /// The gate's value in `gates`, as text: `on` / `off` for a boolean gate, the value
    /// itself for the others (`none` for an absent one).
    pub read: fn(&Gates) -> String,
}

impl GateInfo {
    /// Every rule ID the gate serves: [`GateInfo::rule`], then [`GateInfo::also`].
    pub fn rules(&self) -> impl Iterator<Item = RuleId> + '_ {
        std::iter::once(self.rule).chain(self.also.iter().copied())
    }

    /// Does the gate serve `rule` (as its rule or one of its others)?
    pub fn serves(&self, rule: &str) -> bool {
        self.rules().any(|known| known == rule)
    }

    /// [`GateInfo::version`] in words: `from 2.1.217`, `before 2.1.186`,
    /// `2.1.172–2.1.216`, `only 2.1.199`; a many-valued gate's pieces are worded the same
    /// way (`before 2.1.172: 0; 2.1.172–2.1.216: 5; from 2.1.219: 3`).
    pub fn when(&self) -> String {
        self.version
            .split(" · ")
            .map(|piece| match piece.split_once(": ") {
                Some((range, value)) => format!("{}: {value}", word_range(range)),
                None => word_range(piece),
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn word_range(range: &str) -> String {
    if let Some(version) = range.strip_prefix('<') {
        format!("before {version}")
    } else if let Some(version) = range.strip_prefix('=') {
        format!("only {version}")
    } else if range.contains('–') {
        range.to_string()
    } else {
        format!("from {range}")
    }
}

fn on(value: bool) -> String {
    if value { "on" } else { "off" }.to_string()
}

/// Every gate of [`Gates`], in the order the struct declares them.
pub fn gates() -> &'static [GateInfo] {
    GATES
}

/// The row for `field`, if there is one.
pub fn gate(field: &str) -> Option<&'static GateInfo> {
    GATES.iter().find(|gate| gate.field == field)
}

/// The first version of an on-from gate (`2.1.281` for `agents_file_path`), for messages
/// that name it, so that the version is written only in this table. `field` must name a
/// gate whose [`GateInfo::version`] is one plain version; the tests check every caller's.
pub fn since(field: &str) -> &'static str {
    let version = gate(field).map(|gate| gate.version).unwrap_or_default();
    debug_assert!(
        !version.is_empty() && version.chars().all(|c| c.is_ascii_digit() || c == '.'),
        "`{field}` is not an on-from gate: {version:?}"
    );
    version
}

/// The first version at which a before-gate is off (`2.1.196` for
/// `env_inherit_forces_main`, whose [`GateInfo::version`] is `<2.1.196`), for messages
/// that say "before v…", so that the version is written only in this table.
pub fn until(field: &str) -> &'static str {
    let version = gate(field).map(|gate| gate.version).unwrap_or_default();
    let upper = version.strip_prefix('<').unwrap_or_default();
    debug_assert!(
        !upper.is_empty() && upper.chars().all(|c| c.is_ascii_digit() || c == '.'),
        "`{field}` is not a before gate: {version:?}"
    );
    upper
}

/// The first and last version of a range gate (`("2.1.198", "2.1.271")` for
/// `explore_opus_cap_option`), for messages that name the range.
pub fn range(field: &str) -> (&'static str, &'static str) {
    let version = gate(field).map(|gate| gate.version).unwrap_or_default();
    let (low, high) = version.split_once('–').unwrap_or_default();
    debug_assert!(
        [low, high]
            .iter()
            .all(|end| !end.is_empty() && end.chars().all(|c| c.is_ascii_digit() || c == '.')),
        "`{field}` is not a range gate: {version:?}"
    );
    (low, high)
}

static GATES: &[GateInfo] = &[
    GateInfo {
        field: "cap",
        rule: "CAP-1",
        also: &["Q-34"],
        version: "2.1.217",
        what: "the concurrency cap exists; earlier versions have none",
        read: |g| on(g.cap),
    },
    GateInfo {
        field: "default_depth",
        rule: "DEPTH-6",
        also: &["DEPTH-1", "Q-34"],
        version: "<2.1.172: 0 · 2.1.172–2.1.216: 5 · 2.1.217–2.1.218: 1 · 2.1.219: 3",
        what: "the default depth limit (0: nesting unsupported)",
        read: |g| g.default_depth.to_string(),
    },
    GateInfo {
        field: "depth_configurable",
        rule: "DEPTH-2",
        also: &["DEPTH-6"],
        version: "2.1.217",
        what: "CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH is honoured",
        read: |g| on(g.depth_configurable),
    },
    GateInfo {
        field: "background_prompts",
        rule: "PERM-4",
        also: &["PERM-5"],
        version: "2.1.186",
        what: "background subagents' permission prompts surface in the main session; \
               before, they were silently auto-denied",
        read: |g| on(g.background_prompts),
    },
    GateInfo {
        field: "fork_mode_interactive_default",
        rule: "FORK-1",
        also: &[],
        version: "2.1.232",
        what: "fork mode is on by default in interactive sessions",
        read: |g| on(g.fork_mode_interactive_default),
    },
    GateInfo {
        field: "user_fork_command",
        rule: "FORK-9",
        also: &[],
        version: "<2.1.161: none · 2.1.161–2.1.211: /fork · 2.1.212: /subtask",
        what: "the command the person types to fork the conversation",
        read: |g| g.user_fork_command.unwrap_or("none").to_string(),
    },
    GateInfo {
        field: "waits_for_notification",
        rule: "NOTIFY-4",
        also: &[],
        version: "2.1.211",
        what: "Claude waits for the completion notification and answers \"still running\"; \
               before, it sometimes reported unfinished results",
        read: |g| on(g.waits_for_notification),
    },
    GateInfo {
        field: "resume_shows_running",
        rule: "RESUME-8",
        also: &[],
        version: "2.1.205",
        what: "a resumed agent shows as running again",
        read: |g| on(g.resume_shows_running),
    },
    GateInfo {
        field: "name_reuse_check",
        rule: "RESUME-12",
        also: &[],
        version: "2.1.199",
        what: "SendMessage checks that a name still reaches the agent it first reached",
        read: |g| on(g.name_reuse_check),
    },
    GateInfo {
        field: "type_to_resume",
        rule: "RESUME-11",
        also: &[],
        version: "2.1.191",
        what: "typing into a user-stopped agent's transcript resumes it",
        read: |g| on(g.type_to_resume),
    },
    GateInfo {
        field: "max_turns_partial",
        rule: "RESUME-4",
        also: &[],
        version: "2.1.246",
        what: "a run stopped by maxTurns is marked as partial output",
        read: |g| on(g.max_turns_partial),
    },
    GateInfo {
        field: "model_survives_resume",
        rule: "RESUME-14",
        also: &[],
        version: "2.1.211",
        what: "a per-invocation model survives a resume",
        read: |g| on(g.model_survives_resume),
    },
    GateInfo {
        field: "zero_tools_refused",
        rule: "TOOLS-12",
        also: &["Q-19"],
        version: "2.1.208",
        what: "a spawn whose tools list resolves to nothing is refused",
        read: |g| on(g.zero_tools_refused),
    },
    GateInfo {
        field: "lsp_in_background",
        rule: "TOOLS-5",
        also: &[],
        version: "2.1.280",
        what: "LSP is on the background allow-list",
        read: |g| on(g.lsp_in_background),
    },
    GateInfo {
        field: "task_output_filtered",
        rule: "TOOLS-3",
        also: &["D-1", "Q-20"],
        version: "<2.1.272",
        what: "filter 1 removes TaskOutput (DE's list, up to v2.1.271)",
        read: |g| on(g.task_output_filtered),
    },
    GateInfo {
        field: "handback",
        rule: "HANDBACK-1",
        also: &[],
        version: "2.1.271",
        what: "SubagentHandback exists",
        read: |g| on(g.handback),
    },
    GateInfo {
        field: "success_row_removed_at_once",
        rule: "PANEL-2",
        also: &["PANEL-4"],
        version: "2.1.232",
        what: "a successful row leaves the panel at once; before, it stayed 30 s",
        read: |g| on(g.success_row_removed_at_once),
    },
    GateInfo {
        field: "tasks_lists_done",
        rule: "PANEL-5",
        also: &["Q-23"],
        version: "2.1.208",
        what: "completed agents stay listed in /tasks for 30 s",
        read: |g| on(g.tasks_lists_done),
    },
    GateInfo {
        field: "output_scanning",
        rule: "SCAN-1",
        also: &[],
        version: "2.1.210",
        what: "subagent reports are scanned before main reads them",
        read: |g| on(g.output_scanning),
    },
    GateInfo {
        field: "bypass_keeps_main_mode",
        rule: "PERM-12",
        also: &[],
        version: "2.1.267",
        what: "a subagent declaring bypassPermissions under a default/dontAsk/plan main keeps \
               the main mode",
        read: |g| on(g.bypass_keeps_main_mode),
    },
    GateInfo {
        field: "model_order_env_last",
        rule: "MODEL-2",
        also: &[],
        version: "2.1.251",
        what: "model order per-invocation > frontmatter > env > main; before, env came first",
        read: |g| on(g.model_order_env_last),
    },
    GateInfo {
        field: "disable_explore_plan_env",
        rule: "SPAWN-8",
        also: &[],
        version: "2.1.198",
        what: "CLAUDE_CODE_DISABLE_EXPLORE_PLAN_AGENTS is honoured",
        read: |g| on(g.disable_explore_plan_env),
    },
    GateInfo {
        field: "reports_failure",
        rule: "ERR-2",
        also: &[],
        version: "2.1.199",
        what: "a failed run reports failure rather than its error text as findings",
        read: |g| on(g.reports_failure),
    },
    GateInfo {
        field: "env_inherit_forces_main",
        rule: "MODEL-5",
        also: &[],
        version: "<2.1.196",
        what: "CLAUDE_CODE_SUBAGENT_MODEL=inherit forces the main model over every other \
               source; later it behaves like unset",
        read: |g| on(g.env_inherit_forces_main),
    },
    GateInfo {
        field: "explore_inherits_main",
        rule: "MODEL-12",
        also: &[],
        version: "2.1.198",
        what: "Explore inherits the main model; before, it always ran on Haiku",
        read: |g| on(g.explore_inherits_main),
    },
    GateInfo {
        field: "explore_opus_cap_option",
        rule: "MODEL-12",
        also: &["D-4", "Q-40"],
        version: "2.1.198–2.1.271",
        what: "DE's \"capped at Opus on the Claude API\" reading of Explore's model may be \
               chosen instead of ES's rule",
        read: |g| on(g.explore_opus_cap_option),
    },
    GateInfo {
        field: "family_alias_substitution",
        rule: "MODEL-7",
        also: &[],
        version: "2.1.222",
        what: "a blocked family alias runs on the newest allowed version of its family; \
               before, it fell back to the inherited model",
        read: |g| on(g.family_alias_substitution),
    },
    GateInfo {
        field: "subagent_model_force",
        rule: "MODEL-8",
        also: &[],
        version: "2.1.257",
        what: "CLAUDE_CODE_SUBAGENT_MODEL_FORCE is honoured",
        read: |g| on(g.subagent_model_force),
    },
    GateInfo {
        field: "effort_parameter",
        rule: "MODEL-14",
        also: &["RESUME-15"],
        version: "2.1.292",
        what: "the Agent tool takes a per-invocation effort parameter",
        read: |g| on(g.effort_parameter),
    },
    GateInfo {
        field: "hook_matcher_exact",
        rule: "HOOK-3",
        also: &[],
        version: "2.1.195",
        what: "a hyphenated SubagentStart/SubagentStop matcher matches exactly; before, it \
               was an unanchored regex",
        read: |g| on(g.hook_matcher_exact),
    },
    GateInfo {
        field: "frontmatter_hooks_need_trust",
        rule: "HOOK-6",
        also: &[],
        version: "2.1.218",
        what: "project-level frontmatter hooks need folder trust",
        read: |g| on(g.frontmatter_hooks_need_trust),
    },
    GateInfo {
        field: "tool_calls_only_empty_partial",
        rule: "ERR-3",
        also: &[],
        version: "=2.1.199",
        what: "a foreground tool-calls-only cut returns an empty partial result holding only \
               the interruption note",
        read: |g| on(g.tool_calls_only_empty_partial),
    },
    GateInfo {
        field: "tasks_show_model",
        rule: "PANEL-8",
        also: &[],
        version: "2.1.242",
        what: "/tasks shows each subagent's model (and effort, if set)",
        read: |g| on(g.tasks_show_model),
    },
    GateInfo {
        field: "agents_wizard",
        rule: "PANEL-11",
        also: &[],
        version: "<2.1.198",
        what: "/agents opens the Running/Library wizard; later it prints a reminder",
        read: |g| on(g.agents_wizard),
    },
    GateInfo {
        field: "transcript_settings_notice",
        rule: "PANEL-9",
        also: &[],
        version: "2.1.199",
        what: "/model and /fast in a transcript view show a notice instead of silently \
               changing the main conversation",
        read: |g| on(g.transcript_settings_notice),
    },
    GateInfo {
        field: "read_now",
        rule: "PANEL-10",
        also: &[],
        version: "2.1.286",
        what: "Ctrl+Enter / Ctrl+X Ctrl+S \"read now\" from a transcript view",
        read: |g| on(g.read_now),
    },
    GateInfo {
        field: "manual_alias",
        rule: "PERM-9",
        also: &[],
        version: "2.1.200",
        what: "permissionMode: manual is accepted as an alias of default",
        read: |g| on(g.manual_alias),
    },
    GateInfo {
        field: "append_subagent_prompt",
        rule: "CTX-8",
        also: &[],
        version: "2.1.205",
        what: "--append-subagent-system-prompt exists",
        read: |g| on(g.append_subagent_prompt),
    },
    GateInfo {
        field: "append_subagent_prompt_file",
        rule: "CTX-8",
        also: &[],
        version: "2.1.261",
        what: "--append-subagent-system-prompt-file exists",
        read: |g| on(g.append_subagent_prompt_file),
    },
    GateInfo {
        field: "sibling_roster",
        rule: "CTX-6",
        also: &[],
        version: "2.1.206",
        what: "the sibling roster joins a subagent's startup context",
        read: |g| on(g.sibling_roster),
    },
    GateInfo {
        field: "omit_claude_md",
        rule: "CTX-3",
        also: &["D-15"],
        version: "2.1.271",
        what: "the omitClaudeMd field exists; before, it is ignored",
        read: |g| on(g.omit_claude_md),
    },
    GateInfo {
        field: "inline_mcp_trust",
        rule: "MCP-3",
        also: &[],
        version: "2.1.238",
        what: "inline MCP servers from project and --add-dir agent files need folder trust",
        read: |g| on(g.inline_mcp_trust),
    },
    GateInfo {
        field: "mcp_restrictions_cover_frontmatter",
        rule: "MCP-5",
        also: &[],
        version: "2.1.153",
        what: "the main session's MCP restrictions cover frontmatter servers",
        read: |g| on(g.mcp_restrictions_cover_frontmatter),
    },
    GateInfo {
        field: "empty_agent_prompt",
        rule: "DEF-8",
        also: &["MAIN-2"],
        version: "2.1.281",
        what: "an empty agent prompt is allowed",
        read: |g| on(g.empty_agent_prompt),
    },
    GateInfo {
        field: "agents_file_path",
        rule: "DEF-8",
        also: &[],
        version: "2.1.281",
        what: "`--agents` takes a JSON file path in non-interactive sessions",
        read: |g| on(g.agents_file_path),
    },
    GateInfo {
        field: "colon_names_skipped",
        rule: "DEF-10",
        also: &[],
        version: "2.1.218",
        what: "a definition name containing `:` makes the file skipped",
        read: |g| on(g.colon_names_skipped),
    },
    GateInfo {
        field: "worktree_cwd_check",
        rule: "ISO-2",
        also: &[],
        version: "2.1.203",
        what:
            "an isolated run's command resolving to the main checkout fails; before, it ran there",
        read: |g| on(g.worktree_cwd_check),
    },
    GateInfo {
        field: "worktree_check_whole_repo",
        rule: "ISO-3",
        also: &[],
        version: "2.1.210",
        what: "the worktree cwd check covers the whole repository and a linked worktree's main \
               checkout; before, only the launch directory",
        read: |g| on(g.worktree_check_whole_repo),
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;

    /// The top-level field names of a `{:?}`-printed struct, in order.
    fn debug_field_names(debug: &str) -> Vec<String> {
        let open = debug.find('{').expect("a struct with named fields") + 1;
        let close = debug.rfind('}').expect("a closing brace");
        let body = &debug[open..close];
        let (mut names, mut depth, mut in_string, mut escaped) = (Vec::new(), 0i32, false, false);
        let mut piece = String::new();
        for c in body.chars() {
            if in_string {
                piece.push(c);
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => in_string = true,
                '{' | '(' | '[' => depth += 1,
                '}' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => {
                    names.push(std::mem::take(&mut piece));
                    continue;
                }
                _ => {}
            }
            piece.push(c);
        }
        names.push(piece);
        names
            .iter()
            .filter_map(|piece| piece.split_once(':'))
            .map(|(name, _)| name.trim().to_string())
            .filter(|name| !name.is_empty())
            .collect()
    }

    /// The gates messages name through [`since`] (RESUME-11, DEF-8, PERM-9, CTX-3/6/8,
    /// MODEL-2/7/8/12, RESUME-14, DEPTH-6, TOOLS-12, PERM-5): each is on from the version
    /// it gives and off just before.
    #[test]
    fn since_names_the_first_version_of_the_gates_messages_cite() {
        type Row = (&'static str, u32, fn(&Gates) -> bool);
        let rows: [Row; 16] = [
            ("type_to_resume", 191, |g| g.type_to_resume),
            ("agents_file_path", 281, |g| g.agents_file_path),
            ("empty_agent_prompt", 281, |g| g.empty_agent_prompt),
            ("manual_alias", 200, |g| g.manual_alias),
            ("omit_claude_md", 271, |g| g.omit_claude_md),
            ("sibling_roster", 206, |g| g.sibling_roster),
            ("append_subagent_prompt", 205, |g| g.append_subagent_prompt),
            ("append_subagent_prompt_file", 261, |g| {
                g.append_subagent_prompt_file
            }),
            ("subagent_model_force", 257, |g| g.subagent_model_force),
            ("explore_inherits_main", 198, |g| g.explore_inherits_main),
            ("model_order_env_last", 251, |g| g.model_order_env_last),
            ("model_survives_resume", 211, |g| g.model_survives_resume),
            ("family_alias_substitution", 222, |g| {
                g.family_alias_substitution
            }),
            ("depth_configurable", 217, |g| g.depth_configurable),
            ("zero_tools_refused", 208, |g| g.zero_tools_refused),
            ("background_prompts", 186, |g| g.background_prompts),
        ];
        for (field, patch, on) in rows {
            assert_eq!(since(field), format!("2.1.{patch}"), "{field}");
            assert!(on(&Gates::for_version(Version::v2_1(patch))), "{field}");
            assert!(
                !on(&Gates::for_version(Version::v2_1(patch - 1))),
                "{field}"
            );
        }
    }

    /// The before and range gates messages name through [`until`] (MODEL-5) and [`range`]
    /// on up to the versions they give, off past them.
    #[test]
    fn until_and_range_name_the_edges_of_the_gates_messages_cite() {
        let on = |patch, read: fn(&Gates) -> bool| read(&Gates::for_version(Version::v2_1(patch)));
        assert_eq!(until("env_inherit_forces_main"), "2.1.196");
        assert!(on(195, |g| g.env_inherit_forces_main));
        assert!(!on(196, |g| g.env_inherit_forces_main));
        assert_eq!(range("explore_opus_cap_option"), ("2.1.198", "2.1.271"));
        for (patch, inside) in [(197, false), (198, true), (271, true), (272, false)] {
            assert_eq!(
                on(patch, |g| g.explore_opus_cap_option),
                inside,
                "2.1.{patch}"
            );
        }
    }

    #[test]
    fn every_gates_field_has_one_row_in_declaration_order() {
        let debug = format!("{:?}", Gates::for_version(Version::NEWEST));
        let fields: Vec<String> = debug_field_names(&debug)
            .into_iter()
            // The version the gates were computed for is not a gate.
            .filter(|name| name != "version")
            .collect();
        let rows: Vec<&str> = gates().iter().map(|gate| gate.field).collect();
        let missing: Vec<&String> = fields
            .iter()
            .filter(|field| !rows.contains(&field.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "Gates fields with no row in gates_table.rs: {missing:?}; add a GateInfo for each"
        );
        let unknown: Vec<&&str> = rows
            .iter()
            .filter(|row| !fields.iter().any(|field| field == *row))
            .collect();
        assert!(unknown.is_empty(), "rows for no Gates field: {unknown:?}");
        assert_eq!(
            rows, fields,
            "gates_table.rs lists the fields in a different order than Gates"
        );
    }

    fn parse(text: &str) -> Version {
        text.parse()
            .unwrap_or_else(|error| panic!("gates_table.rs: {error}"))
    }

    fn before(version: Version) -> Version {
        Version::new(version.major, version.minor, version.patch - 1)
    }

    fn after(version: Version) -> Version {
        Version::new(version.major, version.minor, version.patch + 1)
    }

    /// `(version, inside)` pairs at the edges of `range`.
    fn edges(range: &str) -> Vec<(Version, bool)> {
        if let Some(upper) = range.strip_prefix('<') {
            let upper = parse(upper);
            vec![(before(upper), true), (upper, false)]
        } else if let Some(only) = range.strip_prefix('=') {
            let only = parse(only);
            vec![(before(only), false), (only, true), (after(only), false)]
        } else if let Some((low, high)) = range.split_once('–') {
            let (low, high) = (parse(low), parse(high));
            vec![
                (before(low), false),
                (low, true),
                (high, true),
                (after(high), false),
            ]
        } else {
            let low = parse(range);
            vec![(before(low), false), (low, true), (Version::NEWEST, true)]
        }
    }

    #[test]
    fn version_texts_agree_with_for_version() {
        for gate in gates() {
            let read = |version: Version| (gate.read)(&Gates::for_version(version));
            if gate.version.contains(": ") {
                for piece in gate.version.split(" · ") {
                    let (range, value) = piece.split_once(": ").expect("RANGE: value");
                    for (version, inside) in edges(range) {
                        if inside {
                            assert_eq!(read(version), value, "{} at {version}", gate.field);
                        }
                    }
                }
            } else {
                for (version, inside) in edges(gate.version) {
                    assert_eq!(
                        read(version),
                        on(inside),
                        "{}: `{}` says {} at {version}",
                        gate.field,
                        gate.version,
                        on(inside)
                    );
                }
            }
        }
    }

    #[test]
    fn rule_ids_look_like_ids() {
        for gate in gates() {
            for rule in gate.rules() {
                let (area, number) = rule.split_once('-').expect("AREA-N");
                assert!(
                    area.chars().all(|c| c.is_ascii_uppercase())
                        && number.chars().all(|c| c.is_ascii_digit()),
                    "{}: `{rule}`",
                    gate.field
                );
            }
        }
    }

    #[test]
    fn words() {
        let cap = gate("cap").unwrap();
        assert_eq!(cap.when(), "from 2.1.217");
        assert!(cap.serves("CAP-1") && cap.serves("Q-34") && !cap.serves("CAP-2"));
        assert_eq!(
            gate("env_inherit_forces_main").unwrap().when(),
            "before 2.1.196"
        );
        assert_eq!(
            gate("tool_calls_only_empty_partial").unwrap().when(),
            "only 2.1.199"
        );
        assert_eq!(
            gate("user_fork_command").unwrap().when(),
            "before 2.1.161: none; 2.1.161–2.1.211: /fork; from 2.1.212: /subtask"
        );
    }

    #[test]
    fn values_read_as_on_off_or_the_value() {
        // §23 as `subsim rules` prints it: CAP-1 from 2.1.217, DEPTH-6's numbers, FORK-9's
        // command or `none`.
        let read =
            |field, patch| (gate(field).unwrap().read)(&Gates::for_version(Version::v2_1(patch)));
        assert_eq!(read("cap", 216), "off");
        assert_eq!(read("cap", 217), "on");
        assert_eq!(read("default_depth", 218), "1");
        assert_eq!(read("user_fork_command", 160), "none");
        assert_eq!(read("user_fork_command", 212), "/subtask");
    }
}
