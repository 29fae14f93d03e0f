//! What may happen: the documented subagent-scheduling rules of Claude Code as pure
//! functions over plain data.
//!
//! Every function here takes plain values and returns a decision that names
//! the rule (an ID from `rules.md`) that decided. Nothing here knows about time, I/O, async,
//! randomness or serde — the engine owns time, the scenario crate owns files.
//!
//! The main types:
//! - [`SessionConfig`]: the session settings after version gates ([`Gates`]) and env vars;
//! - [`placement::place`]: FGBG-1's first-match chain;
//! - [`cap::admit`]: the concurrency cap;
//! - [`tools::resolve`]: the two tool filters and `tools`/`disallowedTools`;
//! - [`prompt::route`]: where a permission prompt goes.
//!
//! ```
//! use subsim_rules::{cap, SessionConfig, SessionKind, PermissionMode, Version};
//! let (config, _notes) = SessionConfig::resolve(
//!     Version::NEWEST, SessionKind::Interactive, &Default::default(), false, false,
//!     PermissionMode::Default);
//! let decision = cap::admit(20, &config);
//! assert!(!decision.admitted);
//! assert_eq!(decision.rule, "CAP-1");
//! ```
#![warn(missing_docs)]

pub mod cap;
pub mod context;
pub mod depth;
pub mod errors;
pub mod gates_table;
pub mod handback;
pub mod hooks;
pub mod messages;
pub mod model;
pub mod notify;
pub mod panel;
pub mod placement;
pub mod plan;
pub mod prompt;
pub mod resume;
pub mod scan;
pub mod scope;
pub mod session;
pub mod spawn;
pub mod tools;
pub mod version;
pub mod why;

pub use session::{PermissionMode, SessionConfig, SessionKind};

/// `Display` for closed trace vocabularies: each value is written as its `as_str`, the
/// spelling the JSONL trace uses.
macro_rules! display_as_str {
    ($($name:ty),+ $(,)?) => {
        $(impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        })+
    };
}

display_as_str!(
    cap::Hint,
    handback::ReviewOutcome,
    notify::Notice,
    panel::ChangeKind,
    panel::RemovalReason,
    panel::Status,
    prompt::RoutedTo,
    resume::MessageRejection,
    Mode,
    RejectReason,
    SessionKind,
);
pub use version::{Gates, Version};

/// A rule ID from `rules.md` (e.g. `"CAP-1"`), or an open-question ID (`"Q-11"`) where
/// the catalog's adopted default decided.
pub type RuleId = &'static str;

/// Foreground or background (FGBG).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Blocks the launching conversation until it completes (FGBG-4).
    Foreground,
    /// Runs concurrently; reports by a completion notification (NOTIFY-3).
    Background,
}

impl Mode {
    /// The trace spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Foreground => "foreground",
            Mode::Background => "background",
        }
    }
}

/// Why a spawn was refused. The trace spells these with [`RejectReason::as_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RejectReason {
    /// CAP-1.
    ConcurrentLimit,
    /// DEPTH-3/4: the caller has no working `Agent` tool at its depth.
    DepthLimit,
    /// SPAWN-7 / SPAWN-5: the type is denied or not on the main-thread allowlist.
    Denied,
    /// The named type does not exist.
    UnknownType,
    /// SPAWN-3/4: no type and no `general-purpose`.
    TypeRequired,
    /// TOOLS-12.
    ZeroTools,
    /// FORK-7.
    ForkInFork,
    /// FGBG-1 case 1.
    TeammateBackground,
    /// FORK-3/4: `fork` requested while fork mode is off or forks are denied.
    ForkUnavailable,
    /// Q-29: only the main conversation can fork.
    ForkFromSubagent,
    /// DEPTH-5: the caller's own tool set has no `Agent` (its definition left it out).
    NoAgentTool,
    /// SPAWN-5 / MAIN-6: the type is not on the `--agent` main thread's `Agent(…)`
    /// allowlist.
    NotAllowed,
    /// Q-32 / MAIN-4: a bare name that several plugins provide; the scoped name is needed.
    Ambiguous,
    /// HANDBACK-7: the auto-mode classifier blocked the delegation before launch.
    ClassifierBlocked,
}

impl RejectReason {
    /// The trace spelling (`reason` field).
    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::ConcurrentLimit => "concurrent_limit",
            RejectReason::DepthLimit => "depth_limit",
            RejectReason::Denied => "denied",
            RejectReason::UnknownType => "unknown_type",
            RejectReason::TypeRequired => "type_required",
            RejectReason::ZeroTools => "zero_tools",
            RejectReason::ForkInFork => "fork_in_fork",
            RejectReason::TeammateBackground => "teammate_background",
            RejectReason::ForkUnavailable => "fork_unavailable",
            RejectReason::ForkFromSubagent => "fork_from_subagent",
            RejectReason::NoAgentTool => "no_agent_tool",
            RejectReason::NotAllowed => "not_allowed",
            RejectReason::Ambiguous => "ambiguous",
            RejectReason::ClassifierBlocked => "classifier_blocked",
        }
    }

    /// Every reason, in declaration order (summary tables list them in this order).
    pub const ALL: [RejectReason; 14] = [
        RejectReason::ConcurrentLimit,
        RejectReason::DepthLimit,
        RejectReason::Denied,
        RejectReason::UnknownType,
        RejectReason::TypeRequired,
        RejectReason::ZeroTools,
        RejectReason::ForkInFork,
        RejectReason::TeammateBackground,
        RejectReason::ForkUnavailable,
        RejectReason::ForkFromSubagent,
        RejectReason::NoAgentTool,
        RejectReason::NotAllowed,
        RejectReason::Ambiguous,
        RejectReason::ClassifierBlocked,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_spellings_of_modes_and_reject_reasons() {
        // The JSONL trace contract (scenario-format.md): `mode` and `reason` fields.
        assert_eq!(Mode::Foreground.as_str(), "foreground");
        assert_eq!(Mode::Background.as_str(), "background");
        assert_eq!(RejectReason::ConcurrentLimit.as_str(), "concurrent_limit");
        assert_eq!(
            RejectReason::ClassifierBlocked.as_str(),
            "classifier_blocked"
        );
        let spellings: Vec<&str> = RejectReason::ALL.iter().map(|r| r.as_str()).collect();
        for (index, spelling) in spellings.iter().enumerate() {
            assert!(!spellings[..index].contains(spelling), "{spelling} twice");
        }
    }

    /// `RejectReason::ALL` lists every reason, in declaration order (what the engine's
    /// summary counts by). A new reason does not compile here until it has its place.
    #[test]
    fn reject_reasons_all_lists_every_reason_in_order() {
        let place = |reason: RejectReason| match reason {
            RejectReason::ConcurrentLimit => 0,
            RejectReason::DepthLimit => 1,
            RejectReason::Denied => 2,
            RejectReason::UnknownType => 3,
            RejectReason::TypeRequired => 4,
            RejectReason::ZeroTools => 5,
            RejectReason::ForkInFork => 6,
            RejectReason::TeammateBackground => 7,
            RejectReason::ForkUnavailable => 8,
            RejectReason::ForkFromSubagent => 9,
            RejectReason::NoAgentTool => 10,
            RejectReason::NotAllowed => 11,
            RejectReason::Ambiguous => 12,
            RejectReason::ClassifierBlocked => 13,
        };
        for (index, reason) in RejectReason::ALL.into_iter().enumerate() {
            assert_eq!(place(reason), index, "{reason:?}");
            assert_eq!(reason as usize, index, "{reason:?}");
        }
    }
}
