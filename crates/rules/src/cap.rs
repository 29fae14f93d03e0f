//! CAP — the concurrency cap on running subagents, and every check made at the moment of a
//! call.
//!
//! Only Agent-tool spawns are checked (CAP-5); resumes (CAP-7) and `/subtask` forks (CAP-6)
//! take a slot without a check, which is why the running count can exceed the cap.
//!
//! Three pieces make the moment-time admission: [`admit`], the one decision an Agent call
//! that passed its plan meets at the moment of the call (the refusal's reason and rule, or
//! the rule that admits); [`Occupancy`], what runs now as that decision counts it, which
//! the kernel keeps and only tells of each run that takes a slot and of its end; and
//! [`Settings`], the session's own settings the decision reads, which the scenario crate
//! fills and the engine carries whole inside [`SessionConfig`]. A new reason decided at
//! the moment of the call is a check in [`admit`], reading a field of [`Settings`] and a
//! count [`Occupancy`] keeps; nothing in the kernel names it.

use crate::{RejectReason, RuleId, SessionConfig};

/// The session's settings the moment-time admission ([`admit`]) reads, besides the cap
/// itself (CAP-1: the version and the env var give it, [`SessionConfig::cap`]). The
/// scenario crate fills it from the `session` block, the engine's `SessionSpec` carries it
/// as it is and [`SessionConfig::resolve`] keeps it whole in
/// [`SessionConfig::admission`], so a new setting is a field here (and its key in the
/// scenario crate).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// CAP-4 / Q-42: ultracode exempts spawns from the cap check; slots are still counted.
    pub ultracode: bool,
}

/// What runs now, as the moment-time admission counts it: every run that holds a slot
/// (Agent-tool spawns, resumes and `/subtask` forks; a teammate holds none, CAP-8). The
/// kernel keeps one and changes it only through [`Occupancy::started`] and
/// [`Occupancy::ended`], which are given what a count may key on (the run's agent type, as
/// an opaque key), so a new count is a field here and those two bodies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Occupancy {
    /// CAP-1: subagents holding a slot now.
    running: u32,
}

impl Occupancy {
    /// The subagents holding a slot now (what CAP-1 compares with the cap, and every
    /// event's `running`).
    #[inline(always)]
    pub fn running(&self) -> u32 {
        self.running
    }

    /// A run took a slot. `type_key` is its agent type's key (the engine's index of the
    /// type; `None` for a fork).
    #[inline(always)]
    pub fn started(&mut self, type_key: Option<usize>) {
        // CAP-1 counts every run alike, whatever its type.
        let _ = type_key;
        self.running += 1;
    }

    /// A run that held a slot ended (`type_key` as it was given to
    /// [`Occupancy::started`]).
    #[inline(always)]
    pub fn ended(&mut self, type_key: Option<usize>) {
        // CAP-1 counts every run alike, whatever its type.
        let _ = type_key;
        self.running -= 1;
    }
}

/// A checked Agent call, as the moment-time admission reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    /// A fork Claude asks for (CAP-10).
    pub fork: bool,
    /// The agent type's key, as [`Occupancy::started`] is given it (`None` for a fork).
    pub type_key: Option<usize>,
}

/// The moment-time admission's answer: the rule that admits, or the refusal's reason and
/// rule.
pub type Admission = Result<RuleId, (RejectReason, RuleId)>;

/// CAP-1 / CAP-3 / CAP-4 / CAP-10, Q-34: may a checked Agent call start now, while
/// `occupancy` runs? The one check made at the moment of the call; every reason it refuses
/// for carries a fixed message ([`crate::RejectFacts::message`]), which is the refusal's
/// text.
///
/// Admits iff `running < cap` (CAP-3), always when ultracode is on (CAP-4), and always on
/// versions without a cap; a fork Claude asks for is refused at the cap like any
/// Agent-tool spawn (CAP-10).
#[inline(always)]
pub fn admit(call: Call, occupancy: &Occupancy, config: &SessionConfig) -> Admission {
    let admitted = match config.cap {
        None => "Q-34",
        Some(_) if config.admission.ultracode => "CAP-4",
        Some(cap) if occupancy.running < cap => "CAP-3",
        Some(_) if call.fork => return Err((RejectReason::ConcurrentLimit, "CAP-10")),
        Some(_) => return Err((RejectReason::ConcurrentLimit, "CAP-1")),
    };
    Ok(admitted)
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
pub(crate) fn occupied(running: u32) -> Occupancy {
    let mut occupancy = Occupancy::default();
    for index in 0..running {
        occupancy.started(Some(index as usize % 3));
    }
    occupancy
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
            &Settings { ultracode },
            false,
            PermissionMode::Default,
        )
        .0
    }

    const SUBAGENT: Call = Call {
        fork: false,
        type_key: Some(0),
    };

    fn check(running: u32, config: &SessionConfig, expected: Admission) {
        assert_eq!(
            admit(SUBAGENT, &occupied(running), config),
            expected,
            "running={running}"
        );
    }

    #[test]
    fn admits_below_cap_and_rejects_at_cap() {
        let newest = config(292, false, None);
        check(0, &newest, Ok("CAP-3"));
        check(19, &newest, Ok("CAP-3"));
        check(20, &newest, Err((RejectReason::ConcurrentLimit, "CAP-1")));
        // CAP-7: resumes may have pushed the count above the cap.
        check(23, &newest, Err((RejectReason::ConcurrentLimit, "CAP-1")));
    }

    #[test]
    fn env_cap_ultracode_and_old_versions() {
        let refused = Err((RejectReason::ConcurrentLimit, "CAP-1"));
        check(2, &config(292, false, Some("2")), refused);
        check(500, &config(292, true, None), Ok("CAP-4"));
        check(500, &config(216, false, None), Ok("Q-34"));
    }

    #[test]
    fn cap_10_a_fork_is_refused_at_the_cap_and_admitted_below_it() {
        let config = config(292, false, Some("2"));
        let fork = Call {
            fork: true,
            type_key: None,
        };
        assert_eq!(admit(fork, &occupied(1), &config), Ok("CAP-3"));
        assert_eq!(
            admit(fork, &occupied(2), &config),
            Err((RejectReason::ConcurrentLimit, "CAP-10"))
        );
    }

    #[test]
    fn every_moment_time_refusal_carries_its_reason_s_fixed_message() {
        // The kernel writes a moment-time refusal's text from its reason's facts: a reason
        // `admit` refuses for must have one (`RejectFacts::message`).
        for version in [216, 292] {
            for ultracode in [false, true] {
                let config = config(version, ultracode, Some("1"));
                for fork in [false, true] {
                    let call = Call {
                        fork,
                        type_key: (!fork).then_some(0),
                    };
                    for running in 0..3 {
                        if let Err((reason, rule)) = admit(call, &occupied(running), &config) {
                            assert!(reason.facts().message.is_some(), "{reason:?} ({rule})");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn occupancy_counts_every_start_until_its_end() {
        let mut occupancy = Occupancy::default();
        assert_eq!(occupancy.running(), 0);
        occupancy.started(Some(0));
        occupancy.started(None);
        occupancy.started(Some(0));
        assert_eq!(occupancy.running(), 3);
        occupancy.ended(Some(0));
        assert_eq!(occupancy.running(), 2);
        occupancy.ended(None);
        occupancy.ended(Some(0));
        assert_eq!(occupancy.running(), 0);
        assert_eq!(occupied(4).running(), 4);
    }

    #[test]
    fn a_run_that_ended_frees_its_place_for_the_next_call() {
        // CAP-3: one ending under a full cap admits the next call.
        let config = config(292, false, Some("2"));
        let mut occupancy = occupied(2);
        assert!(admit(SUBAGENT, &occupancy, &config).is_err());
        occupancy.ended(Some(0));
        assert_eq!(admit(SUBAGENT, &occupancy, &config), Ok("CAP-3"));
    }

    #[test]
    fn unchecked_starts_name_their_rule() {
        // A mutant found by `cargo mutants` (docs/TESTING.md): the rule was only checked
        // through the engine's scenarios.
        assert_eq!(Unchecked::Resume.rule(), "CAP-7");
        assert_eq!(Unchecked::Subtask.rule(), "CAP-6");
    }
}
