//! DEF-1: where an agent definition came from — the one `Scope` that spawn resolution
//! (SPAWN-3/10, DEF-5: [`crate::spawn::Scope`]), hooks (HOOK-6, DEF-6:
//! [`crate::hooks::Scope`]), the startup context (MCP-3/4/6) and the engine's and scenario
//! crate's definitions (`spec::Scope`) all name. The spellings are the scenario format's
//! and the trace's (`definition_noted.scope`). [`shadowing`] says which of two same-named
//! definitions wins and why (DEF-1…4).

/// Where a definition came from (DEF-1), or a built-in type (SPAWN-9), which has no file
/// and is registered by [`crate::spawn::registered`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Managed settings, deployed by an administrator (priority 1).
    Managed,
    /// `--agents` JSON or the SDK `agents` option (priority 2).
    Cli,
    /// `.claude/agents/` of the project or an `--add-dir` directory (priority 3).
    #[default]
    Project,
    /// `~/.claude/agents/` (priority 4).
    User,
    /// A plugin's `agents/` directory (priority 5).
    Plugin,
    /// A built-in type (no file, no frontmatter hooks); ranks below every definition.
    BuiltIn,
}

/// DEF-9: whether an edit of a definition of `scope` on disk is picked up during the
/// session. Claude Code watches `~/.claude/agents/` and `.claude/agents/` (the user and
/// project scopes); a change anywhere else needs a restart.
pub fn watched(scope: Scope) -> (bool, crate::RuleId) {
    let watched = match scope {
        Scope::Project | Scope::User => true,
        Scope::Managed | Scope::Cli | Scope::Plugin | Scope::BuiltIn => false,
    };
    (watched, crate::id::DEF_9)
}

impl Scope {
    /// The scopes a definition file or name comes from (`definition_noted.scope`): every
    /// scope but the built-in types'.
    pub const NOTED: [Scope; 5] = [
        Scope::Managed,
        Scope::Cli,
        Scope::Project,
        Scope::User,
        Scope::Plugin,
    ];

    /// DEF-1: the priority; the lower number wins a name collision. A built-in type ranks
    /// below every definition (SPAWN-10: a definition of the same name overrides it).
    pub fn priority(self) -> u8 {
        match self {
            Scope::Managed => 1,
            Scope::Cli => 2,
            Scope::Project => 3,
            Scope::User => 4,
            Scope::Plugin => 5,
            Scope::BuiltIn => u8::MAX,
        }
    }

    /// The scenario's and the trace's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Managed => "managed",
            Scope::Cli => "cli",
            Scope::Project => "project",
            Scope::User => "user",
            Scope::Plugin => "plugin",
            Scope::BuiltIn => "built-in",
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a definition was found beside its scope, as DEF-1…4 rank same-named ones: the
/// scenario's inline `agents:` (the working directory's own `.claude/agents/`, DEF-2), an
/// `agent_dirs` entry, or one added with `--add-dir` (DEF-3, Q-30), in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Found {
    /// The scenario's `agents:` block (the working directory's own definitions).
    Inline,
    /// An `agent_dirs` entry.
    Dir,
    /// An `agent_dirs` entry with `add_dir: true`.
    AddDir,
}

/// One of several definitions of the same name, as DEF-1…4 see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Its scope (DEF-1).
    pub scope: Scope,
    /// Where it was found.
    pub found: Found,
    /// The position of its `agents:` key or its `agent_dirs` entry.
    pub entry: usize,
}

impl Candidate {
    /// DEF-1…4: its rank among same-named definitions; the lowest wins. Within one
    /// directory tree the file first in path order wins, which the caller adds.
    pub fn rank(self) -> (u8, Found, usize) {
        (self.scope.priority(), self.found, self.entry)
    }
}

/// Why one definition shadows another of the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shadowing {
    /// DEF-1: the higher-priority scope wins.
    ScopeOutranks {
        /// The winner's scope.
        winner: Scope,
        /// The loser's scope.
        loser: Scope,
    },
    /// DEF-3 / Q-30: of two `--add-dir` directories, the one listed earlier wins.
    AddDirListedEarlier,
    /// DEF-3 / Q-30: `--add-dir` directories rank below the working directory's own.
    AddDirBelowProject,
    /// DEF-4: the same name twice in the scenario's `agents:`; the first wins.
    InlineTwice,
    /// DEF-2: inline definitions stand for the nearest project directory.
    InlineNearest,
    /// DEF-4: inline definitions come before the scope's directories.
    InlineFirst(Scope),
    /// DEF-4 / Q-31: the same name twice in one directory tree; the first in path order.
    SameTree,
    /// DEF-2: the project directory nearer the working directory wins.
    NearerProject,
    /// DEF-4: of two directories of one scope, the one listed first wins.
    DirListedFirst(Scope),
}

impl Shadowing {
    /// The rule.
    pub fn rule(self) -> crate::RuleId {
        match self {
            Shadowing::ScopeOutranks { .. } => "DEF-1",
            Shadowing::InlineNearest | Shadowing::NearerProject => "DEF-2",
            Shadowing::AddDirListedEarlier | Shadowing::AddDirBelowProject => "DEF-3",
            Shadowing::InlineTwice
            | Shadowing::InlineFirst(_)
            | Shadowing::SameTree
            | Shadowing::DirListedFirst(_) => "DEF-4",
        }
    }

    /// Why, in words (after "shadowed by …: ").
    pub fn why(self) -> String {
        match self {
            Shadowing::ScopeOutranks { winner, loser } => {
                format!("the {winner} scope outranks the {loser} scope")
            }
            Shadowing::AddDirListedEarlier => {
                "an `--add-dir` directory listed earlier wins (Q-30)".to_string()
            }
            Shadowing::AddDirBelowProject => {
                "`--add-dir` directories rank below the working directory's project directories (Q-30)"
                    .to_string()
            }
            Shadowing::InlineTwice => {
                "the same name twice in the scenario's `agents`; the first in the file wins"
                    .to_string()
            }
            Shadowing::InlineNearest => {
                "the scenario's inline definitions stand for the working directory's own `.claude/agents/`, the nearest".to_string()
            }
            Shadowing::InlineFirst(scope) => {
                format!("the scenario's inline definitions come before the {scope} directories")
            }
            Shadowing::SameTree => {
                "the same name twice in one directory tree; the first in path order loads (Q-31); `/doctor` reports this duplicate".to_string()
            }
            Shadowing::NearerProject => {
                "the project directory nearer the working directory (listed first) wins"
                    .to_string()
            }
            Shadowing::DirListedFirst(scope) => {
                format!("both are {scope} definitions; the `agent_dirs` entry listed first wins")
            }
        }
    }
}

/// DEF-1…4: why `winner` shadows `loser`, two definitions of the same name
/// already ranked ([`Candidate::rank`]).
pub fn shadowing(winner: Candidate, loser: Candidate) -> Shadowing {
    let (w, l) = (winner.scope, loser.scope);
    let same_entry = winner.found == loser.found && winner.entry == loser.entry;
    if w != l {
        return Shadowing::ScopeOutranks {
            winner: w,
            loser: l,
        };
    }
    if loser.found == Found::AddDir {
        return match winner.found {
            Found::AddDir if !same_entry => Shadowing::AddDirListedEarlier,
            Found::AddDir => Shadowing::SameTree,
            Found::Inline | Found::Dir => Shadowing::AddDirBelowProject,
        };
    }
    match (winner.found, loser.found) {
        (Found::Inline, Found::Inline) => Shadowing::InlineTwice,
        (Found::Inline, _) if w == Scope::Project => Shadowing::InlineNearest,
        (Found::Inline, _) => Shadowing::InlineFirst(w),
        _ if same_entry => Shadowing::SameTree,
        _ if w == Scope::Project => Shadowing::NearerProject,
        _ => Shadowing::DirListedFirst(w),
    }
}

/// Why an `--agents` JSON definition is skipped (DEF-7, DEF-8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CliSkip {
    /// Its name starts with `-` (DEF-7).
    NameDash,
    /// It has no (or a blank) `description` (DEF-7).
    NoDescription,
    /// Its `prompt` is empty, before the version that allows it (DEF-8).
    EmptyPrompt,
}

/// Fields of an `--agents` JSON value that are ignored, not rejected (DEF-7).
pub const CLI_IGNORED_FIELDS: [&str; 2] = ["color", "experimental"];

/// DEF-7: is an `--agents` JSON definition skipped for its name? One whose name starts with
/// `-` is (it would read as an option).
pub fn cli_name_skipped(name: &str) -> Option<(CliSkip, crate::RuleId)> {
    name.starts_with('-')
        .then_some((CliSkip::NameDash, "DEF-7"))
}

/// DEF-7 / DEF-8: is an `--agents` JSON definition skipped for its fields? One without a
/// description is (DEF-7); one with an empty prompt is before the version that allows it
/// (DEF-8).
pub fn cli_fields_skipped(
    description: &str,
    prompt: &str,
    gates: &crate::Gates,
) -> Option<(CliSkip, crate::RuleId)> {
    if description.trim().is_empty() {
        Some((CliSkip::NoDescription, "DEF-7"))
    } else if prompt.is_empty() && !gates.empty_agent_prompt {
        Some((CliSkip::EmptyPrompt, "DEF-8"))
    } else {
        None
    }
}

/// DEF-7: the rule of the note that says an `--agents` JSON field is ignored
/// ([`CLI_IGNORED_FIELDS`]).
pub const CLI_IGNORED_RULE: crate::RuleId = "DEF-7";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn def_9_only_the_project_and_user_agents_directories_are_watched() {
        for scope in [Scope::Project, Scope::User] {
            assert_eq!(watched(scope), (true, "DEF-9"));
        }
        for scope in [Scope::Managed, Scope::Cli, Scope::Plugin, Scope::BuiltIn] {
            assert_eq!(watched(scope), (false, "DEF-9"));
        }
    }

    #[test]
    fn def_1_to_4_which_same_named_definition_wins_and_why() {
        use Found::*;
        let at = |scope, found, entry| Candidate {
            scope,
            found,
            entry,
        };
        let rows = [
            // DEF-1: the scope decides first.
            (
                at(Scope::Cli, Inline, 0),
                at(Scope::User, Dir, 0),
                Shadowing::ScopeOutranks {
                    winner: Scope::Cli,
                    loser: Scope::User,
                },
                "DEF-1",
            ),
            // DEF-3 / Q-30: `--add-dir` directories.
            (
                at(Scope::Project, AddDir, 0),
                at(Scope::Project, AddDir, 1),
                Shadowing::AddDirListedEarlier,
                "DEF-3",
            ),
            (
                at(Scope::Project, Dir, 3),
                at(Scope::Project, AddDir, 0),
                Shadowing::AddDirBelowProject,
                "DEF-3",
            ),
            (
                at(Scope::Project, AddDir, 1),
                at(Scope::Project, AddDir, 1),
                Shadowing::SameTree,
                "DEF-4",
            ),
            // DEF-2 / DEF-4: inline definitions and directories of one scope.
            (
                at(Scope::Project, Inline, 0),
                at(Scope::Project, Inline, 1),
                Shadowing::InlineTwice,
                "DEF-4",
            ),
            (
                at(Scope::Project, Inline, 0),
                at(Scope::Project, Dir, 0),
                Shadowing::InlineNearest,
                "DEF-2",
            ),
            (
                at(Scope::User, Inline, 0),
                at(Scope::User, Dir, 0),
                Shadowing::InlineFirst(Scope::User),
                "DEF-4",
            ),
            (
                at(Scope::User, Dir, 2),
                at(Scope::User, Dir, 2),
                Shadowing::SameTree,
                "DEF-4",
            ),
            (
                at(Scope::Project, Dir, 0),
                at(Scope::Project, Dir, 1),
                Shadowing::NearerProject,
                "DEF-2",
            ),
            (
                at(Scope::User, Dir, 0),
                at(Scope::User, Dir, 1),
                Shadowing::DirListedFirst(Scope::User),
                "DEF-4",
            ),
        ];
        for (winner, loser, shadowed, rule) in rows {
            assert!(winner.rank() <= loser.rank(), "{winner:?} ranks first");
            assert_eq!(
                shadowing(winner, loser),
                shadowed,
                "{winner:?} over {loser:?}"
            );
            assert_eq!(shadowed.rule(), rule);
        }
        assert_eq!(
            Shadowing::ScopeOutranks {
                winner: Scope::Cli,
                loser: Scope::User
            }
            .why(),
            "the cli scope outranks the user scope"
        );
        assert_eq!(
            Shadowing::DirListedFirst(Scope::User).why(),
            "both are user definitions; the `agent_dirs` entry listed first wins"
        );
    }

    #[test]
    fn def_1_priority_order_and_spellings() {
        let all = [
            Scope::Managed,
            Scope::Cli,
            Scope::Project,
            Scope::User,
            Scope::Plugin,
            Scope::BuiltIn,
        ];
        let priorities: Vec<u8> = all.iter().map(|scope| scope.priority()).collect();
        assert_eq!(priorities, [1, 2, 3, 4, 5, u8::MAX]);
        // The declaration order is the priority order (derived `Ord`).
        assert!(all.windows(2).all(|pair| pair[0] < pair[1]));
        let spellings: Vec<String> = all.iter().map(ToString::to_string).collect();
        assert_eq!(
            spellings,
            ["managed", "cli", "project", "user", "plugin", "built-in"]
        );
        assert!(!Scope::NOTED.contains(&Scope::BuiltIn));
        assert_eq!(Scope::default(), Scope::Project);
    }

    #[test]
    fn cli_definitions_skipped_by_name_description_or_empty_prompt() {
        use crate::{Gates, Version};
        let old = Gates::for_version(Version::v2_1(1));
        let new = Gates::for_version(Version::v2_1(400));
        assert_eq!(cli_name_skipped("-x"), Some((CliSkip::NameDash, "DEF-7")));
        assert_eq!(cli_name_skipped("x-"), None);
        assert_eq!(
            cli_fields_skipped(" ", "p", &new),
            Some((CliSkip::NoDescription, "DEF-7"))
        );
        assert_eq!(cli_fields_skipped("d", "", &new), None);
        assert_eq!(
            cli_fields_skipped("d", "", &old),
            Some((CliSkip::EmptyPrompt, "DEF-8"))
        );
        assert_eq!(cli_fields_skipped("d", "p", &old), None);
    }
}
