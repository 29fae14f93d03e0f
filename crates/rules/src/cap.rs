//! CAP — the concurrency cap on running subagents.
//!
//! Only Agent-tool spawns are checked (CAP-5); resumes (CAP-7) and `/subtask` forks (CAP-6)
//! take a slot without a check, which is why the running count can exceed the cap.

use crate::{RuleId, SessionConfig};

/// The outcome of the cap check for one Agent-tool spawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    /// Whether the spawn may take a slot.
    pub admitted: bool,
    /// The rule that decided.
    pub rule: RuleId,
}

/// CAP-1 / CAP-3 / CAP-4: may an Agent-tool spawn start while `running` subagents run?
///
/// Admits iff `running < cap` (CAP-3), always when ultracode is on (CAP-4), and always on
/// versions without a cap.
pub fn admit(running: u32, config: &SessionConfig) -> Admission {
    match config.cap {
        None => Admission {
            admitted: true,
            rule: "Q-34",
        },
        Some(_) if config.ultracode => Admission {
            admitted: true,
            rule: "CAP-4",
        },
        Some(cap) if running < cap => Admission {
            admitted: true,
            rule: "CAP-3",
        },
        Some(_) => Admission {
            admitted: false,
            rule: "CAP-1",
        },
    }
}

crate::vocabulary! {
    /// What else a refused spawn's error tells Claude (`spawn_rejected.hint`); its
    /// spelling is the text the error carries.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Hint {
        /// CAP-2: do not retry; wait for a running subagent to finish (placeholder
        /// wording, Q-16: [`crate::messages::CONCURRENT_LIMIT_NO_RETRY`]).
        NoRetry => crate::messages::CONCURRENT_LIMIT_NO_RETRY,
    }
}

/// CAP-2: the hint a refusal for `reason` carries, if any (its entry's `hint`,
/// [`crate::RejectFacts`]): only the cap's refusal tells Claude not to retry.
pub fn hint(reason: crate::RejectReason) -> Option<Hint> {
    reason.facts().hint
}

/// How a run that is not an Agent-tool spawn takes its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unchecked {
    /// CAP-7 / RESUME-9: a resume of a finished subagent.
    Resume,
    /// CAP-6 / FORK-10: a `/subtask` fork the person started.
    Subtask,
}

impl Unchecked {
    /// The rule under which the slot is taken without a check.
    pub fn rule(self) -> RuleId {
        match self {
            Unchecked::Resume => "CAP-7",
            Unchecked::Subtask => "CAP-6",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PermissionMode, SessionKind, Version};

    #[test]
    fn cap_2_only_the_cap_s_refusal_says_do_not_retry() {
        use crate::RejectReason::*;
        assert_eq!(hint(ConcurrentLimit), Some(Hint::NoRetry));
        for other in crate::RejectReason::ALL {
            if other != ConcurrentLimit {
                assert_eq!(hint(other), None, "{other:?}");
            }
        }
        assert_eq!(
            Hint::NoRetry.as_str(),
            "do not retry; wait for a running subagent to finish"
        );
    }

    fn config(version: u32, ultracode: bool, cap: Option<&str>) -> SessionConfig {
        let mut env = std::collections::BTreeMap::new();
        if let Some(cap) = cap {
            env.insert(
                crate::session::env::MAX_CONCURRENT.to_string(),
                cap.to_string(),
            );
        }
        SessionConfig::resolve(
            Version::v2_1(version),
            SessionKind::Interactive,
            &env,
            ultracode,
            false,
            PermissionMode::Default,
        )
        .0
    }

    fn check(running: u32, config: &SessionConfig, admitted: bool, rule: RuleId) {
        assert_eq!(
            admit(running, config),
            Admission { admitted, rule },
            "running={running}"
        );
    }

    #[test]
    fn admits_below_cap_and_rejects_at_cap() {
        let newest = config(292, false, None);
        check(0, &newest, true, "CAP-3");
        check(19, &newest, true, "CAP-3");
        check(20, &newest, false, "CAP-1");
        // CAP-7: resumes may have pushed the count above the cap.
        check(23, &newest, false, "CAP-1");
    }

    #[test]
    fn env_cap_ultracode_and_old_versions() {
        check(2, &config(292, false, Some("2")), false, "CAP-1");
        check(500, &config(292, true, None), true, "CAP-4");
        check(500, &config(216, false, None), true, "Q-34");
    }

    #[test]
    fn unchecked_starts_name_their_rule() {
        // A mutant found by `cargo mutants` (docs/TESTING.md): the rule was only checked
        // through the engine's scenarios.
        assert_eq!(Unchecked::Resume.rule(), "CAP-7");
        assert_eq!(Unchecked::Subtask.rule(), "CAP-6");
    }
}
