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
//! - [`cap::admit`]: the concurrency cap, and every check made at the moment of a call;
//! - [`tools::resolve`]: the two tool filters and `tools`/`disallowedTools`;
//! - [`prompt::route`]: where a permission prompt goes.
//!
//! ```
//! use subsim_rules::{cap, RejectReason, SessionConfig, SessionKind, PermissionMode, Version};
//! let (config, _notes) = SessionConfig::resolve(
//!     Version::NEWEST, SessionKind::Interactive, &Default::default(),
//!     &cap::Settings::default(), false, PermissionMode::Default);
//! let mut running = cap::Occupancy::default();
//! for _ in 0..20 {
//!     running.started(Some(0));
//! }
//! let call = cap::Call { fork: false, type_key: Some(0) };
//! assert_eq!(cap::admit(call, &running, &config), Err((RejectReason::ConcurrentLimit, "CAP-1")));
//! ```
#![warn(missing_docs)]

pub mod cap;
pub mod context;
pub mod depth;
pub mod errors;
pub mod gates_table;
pub mod handback;
pub mod hooks;
pub mod id;
pub mod isolation;
pub mod messages;
pub mod model;
pub mod notify;
pub mod observed;
pub mod panel;
pub mod placement;
pub mod plan;
pub mod prompt;
pub mod resume;
pub mod scan;
pub mod scope;
pub mod session;
pub mod spawn;
pub mod toolcall;
pub mod tools;
pub mod version;
pub mod vocab;
pub mod why;

pub use session::{PermissionMode, SessionConfig, SessionKind};

pub use version::{Gates, Version};

/// A rule ID from `rules.md` (e.g. `"CAP-1"`), or an open-question ID (`"Q-11"`) where
/// the catalog's adopted default decided.
pub type RuleId = &'static str;

crate::vocabulary! {
    /// Foreground or background (FGBG).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Mode {
        /// Blocks the launching conversation until it completes (FGBG-4).
        Foreground => "foreground",
        /// Runs concurrently; reports by a completion notification (NOTIFY-3).
        Background => "background",
    }
}

crate::vocabulary! {
    /// How a run ended (`agent_finished.outcome`): the one vocabulary of run endings. The
    /// rules that follow an ending read it through [`Outcome::ending`].
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Outcome {
        /// Finished its steps.
        Completed => "completed",
        /// Ended early with partial output (API error after text, ERR-3; `maxTurns`,
        /// RESUME-4).
        Partial => "partial",
        /// Ended in an error.
        Failed => "failed",
        /// Claude stopped it with TaskStop.
        Stopped => "stopped",
        /// The person stopped it (`x` in the panel, RESUME-10).
        Cancelled => "cancelled",
    }
}

/// How a run ended as the rules that follow an ending tell endings apart: a result's
/// notice (NOTIFY-3/12), the panel's status and retention (PANEL), `SubagentStop`'s rule
/// (HOOK-1, Q-25). None of them tells partial output from a completion (the run did not
/// fail: ERR-3, RESUME-4) or TaskStop from the person's stop, so this is a class of
/// [`Outcome`], never set on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ending {
    /// It finished its work, partial output included.
    Completed,
    /// It ended in an error.
    Failed,
    /// It was stopped, by TaskStop or by the person.
    Stopped,
}

impl Outcome {
    /// The class of this ending the rules read ([`Ending`]).
    pub const fn ending(self) -> Ending {
        match self {
            Outcome::Completed | Outcome::Partial => Ending::Completed,
            Outcome::Failed => Ending::Failed,
            Outcome::Stopped | Outcome::Cancelled => Ending::Stopped,
        }
    }
}

/// What a [`RejectReason`] says besides its spelling ([`RejectReason::facts`]): written in
/// its variant's entry, so a new reason does not compile without them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RejectFacts {
    /// The reason in a few words: the narration's `spawn_rejected` detail and its closing
    /// tally of rejections.
    pub words: &'static str,
    /// The refusal's message (`spawn_rejected.message`) when every refusal for this reason
    /// carries the same text (a [`messages`] constant); `None` when the refusal writes its
    /// own (it names the type, the allowed ones, the unresolved tools, …, or the reason has
    /// several rules with a text each).
    pub message: Option<&'static str>,
    /// CAP-2: what else the refusal tells Claude (`spawn_rejected.hint`), if anything.
    pub hint: Option<cap::Hint>,
}

crate::vocabulary! {
    /// Why a spawn was refused. The trace spells these with [`RejectReason::as_str`]; each
    /// reason's words, fixed message and hint are its [`RejectReason::facts`], written in
    /// its entry here.
    ///
    /// `ALL` lists every reason, in declaration order (summary tables list them in this order).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum RejectReason {
        /// CAP-1.
        ConcurrentLimit => "concurrent_limit" {
            words: "concurrency cap",
            message: Some(messages::CONCURRENT_LIMIT),
            hint: Some(cap::Hint::NoRetry),
        },
        /// DEPTH-3/4: the caller has no working `Agent` tool at its depth.
        DepthLimit => "depth_limit" {
            words: "depth limit",
            message: None,
            hint: None,
        },
        /// SPAWN-7 / SPAWN-5: the type is denied or not on the main-thread allowlist.
        Denied => "denied" {
            words: "type denied",
            message: None,
            hint: None,
        },
        /// The named type does not exist.
        UnknownType => "unknown_type" {
            words: "unknown agent type",
            message: None,
            hint: None,
        },
        /// SPAWN-3/4: no type and no `general-purpose`.
        TypeRequired => "type_required" {
            words: "no agent type given",
            message: Some(messages::TYPE_REQUIRED),
            hint: None,
        },
        /// TOOLS-12.
        ZeroTools => "zero_tools" {
            words: "no tools left",
            message: None,
            hint: None,
        },
        /// FORK-7.
        ForkInFork => "fork_in_fork" {
            words: "a fork cannot fork",
            message: Some(messages::FORK_IN_FORK),
            hint: None,
        },
        /// FGBG-1 case 1.
        TeammateBackground => "teammate_background" {
            words: "teammates cannot run in the background",
            message: None,
            hint: None,
        },
        /// FORK-3/4: `fork` requested while fork mode is off or forks are denied.
        ForkUnavailable => "fork_unavailable" {
            words: "forking unavailable",
            message: Some(messages::FORK_UNAVAILABLE),
            hint: None,
        },
        /// Q-29: only the main conversation can fork.
        ForkFromSubagent => "fork_from_subagent" {
            words: "only the main conversation can fork",
            message: Some(messages::FORK_FROM_SUBAGENT),
            hint: None,
        },
        /// DEPTH-5: the caller's own tool set has no `Agent` (its definition left it out).
        NoAgentTool => "no_agent_tool" {
            words: "the caller has no Agent tool",
            message: None,
            hint: None,
        },
        /// SPAWN-5 / MAIN-6: the type is not on the `--agent` main thread's `Agent(…)`
        /// allowlist.
        NotAllowed => "not_allowed" {
            words: "not on the main thread's Agent allowlist",
            message: None,
            hint: None,
        },
        /// Q-32 / MAIN-4: a bare name that several plugins provide; the scoped name is needed.
        Ambiguous => "ambiguous" {
            words: "ambiguous agent name",
            message: None,
            hint: None,
        },
        /// HANDBACK-7: the auto-mode classifier blocked the delegation before launch.
        ClassifierBlocked => "classifier_blocked" {
            words: "blocked by the auto-mode classifier",
            message: Some(messages::CLASSIFIER_BLOCKED),
            hint: None,
        },
    }
    /// This reason's words, fixed message and hint ([`RejectFacts`]).
    pub fn facts -> RejectFacts;
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
}
