//! DEF-1: where an agent definition came from — the one `Scope` that spawn resolution
//! (SPAWN-3/10, DEF-5: [`crate::spawn::Scope`]), hooks (HOOK-6, DEF-6:
//! [`crate::hooks::Scope`]), the startup context (MCP-3/4/6) and the engine's and scenario
//! crate's definitions (`spec::Scope`) all name. The spellings are the scenario format's
//! and the trace's (`definition_noted.scope`).

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
