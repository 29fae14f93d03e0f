//! HANDBACK — how an auto-mode subagent's final report reaches its parent: the
//! `SubagentHandback` tool and the classifier's three checkpoints (HANDBACK-1…11).
//!
//! Three questions, each a pure function:
//! - [`attachment`]: does the run get `SubagentHandback` (HANDBACK-1/2)? It wraps
//!   [`tools::handback_attached`], which [`tools::resolve`] already uses, and adds the rule;
//! - [`launch_check`]: does the pre-launch checkpoint stop the spawn (HANDBACK-7)?
//! - [`review`]: what does the finish review put in front of the report, and does the
//!   review happen before or after delivery (HANDBACK-8/9)?
//!
//! This module does not decide *who* receives a result — that is [`crate::notify`] — nor
//! whether the tool survives the filters — that is [`tools::resolve`] (HANDBACK-3/4,
//! TOOLS-16).
//!
//! # Decisions
//! - **Q-27** (nested destination): the launcher's conversation, i.e. the same recipient
//!   [`crate::notify::completion`] picks; see [`destination`].
//! - **Q-28** (permission rules on `SubagentHandback`): they do not apply; calling it always
//!   runs without a prompt (HANDBACK-5); see [`crate::prompt::handback_call`].
//! - **Forks in auto mode** have no `SubagentHandback` (HANDBACK-1), so their report returns
//!   as the last message and is reviewed after delivery, as every auto-mode report was
//!   before v2.1.271 (HANDBACK-9). The pre-delivery review works *through* the handback
//!   call (JP: the report passes through the tool, so the classifier can review it before
//!   it arrives).
//! - **Before v2.1.271** the review happened after delivery, so nothing can be put in front
//!   of the report: [`Delivery::prefix`] is `None` whatever the verdict.
//! - **The pre-launch checkpoint** has no version gate in the seeds and no fork exemption.
//! - **Texts** (Q-16): the security warning and the English notice are placeholders in
//!   [`messages`]; the seed's Japanese notice is [`messages::HANDBACK_REVIEW_NOTICE_JA`].

use crate::messages;
use crate::notify::Recipient;
use crate::tools;
use crate::{Gates, PermissionMode, RuleId};

/// The tool's name.
pub const TOOL: &str = "SubagentHandback";

/// The trace spelling of the spawn rejection the pre-launch checkpoint causes
/// (`spawn_rejected.reason`).
pub const CLASSIFIER_BLOCKED: &str = "classifier_blocked";

/// Whether `SubagentHandback` is attached, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attachment {
    /// The run gets the tool.
    pub attached: bool,
    /// `HANDBACK-1` (all three conditions hold, or the version or a fork rules it out) or
    /// `HANDBACK-2` (not auto mode: the report returns as the last message).
    pub rule: RuleId,
}

/// HANDBACK-1/2: is `SubagentHandback` attached to a run in `mode`?
pub fn attachment(mode: PermissionMode, fork: bool, gates: &Gates) -> Attachment {
    let attached = tools::handback_attached(mode, fork, gates);
    let rule = if attached || !gates.handback || fork {
        "HANDBACK-1"
    } else {
        // HANDBACK-2: outside auto mode the report is the last message, as before.
        "HANDBACK-2"
    };
    Attachment { attached, rule }
}

crate::vocabulary! {
    /// One of the auto-mode classifier's three checkpoints (HANDBACK-7).
    ///
    /// `ALL` lists the three checkpoints in the order a run meets them.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Checkpoint {
        /// The delegation prompt the parent passes, before launch.
        BeforeLaunch => "before_launch",
        /// Each action during the run, judged with the parent session's rules.
        DuringRun => "during_run",
        /// The work and the final report, at finish.
        AtFinish => "at_finish",
    }
}

impl Checkpoint {
    /// HANDBACK-7: only the pre-launch checkpoint stops a subagent. A flagged action is
    /// refused on its own; a flagged report is still delivered (HANDBACK-8).
    pub fn stops_subagent(self) -> bool {
        self == Checkpoint::BeforeLaunch
    }
}

/// The pre-launch checkpoint's verdict on a spawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchVerdict {
    /// Not auto mode: there is no classifier to ask.
    NotChecked {
        /// `HANDBACK-7`.
        rule: RuleId,
    },
    /// Auto mode and the classifier let the delegation through.
    Cleared {
        /// `HANDBACK-7`.
        rule: RuleId,
    },
    /// Auto mode and the delegation looked dangerous: the spawn is rejected.
    Blocked {
        /// [`CLASSIFIER_BLOCKED`].
        reason: &'static str,
        /// [`messages::CLASSIFIER_BLOCKED`] (placeholder, Q-16).
        message: &'static str,
        /// `HANDBACK-7`.
        rule: RuleId,
    },
}

impl LaunchVerdict {
    /// Does the subagent launch?
    pub fn launches(self) -> bool {
        !matches!(self, LaunchVerdict::Blocked { .. })
    }

    /// The rule that decided.
    pub fn rule(self) -> RuleId {
        match self {
            LaunchVerdict::NotChecked { rule }
            | LaunchVerdict::Cleared { rule }
            | LaunchVerdict::Blocked { rule, .. } => rule,
        }
    }
}

/// HANDBACK-7, first checkpoint: does the classifier stop this spawn before launch?
///
/// `mode` is the effective permission mode the subagent would run in;
/// `blocked_by_classifier` is the classifier's verdict on the delegation prompt (a scenario
/// input). Neither `fork` nor the version changes the verdict: the seeds give this
/// checkpoint no gate and no fork exemption. The two parameters are taken so the function
/// has the same inputs as [`review`].
pub fn launch_check(
    blocked_by_classifier: bool,
    mode: PermissionMode,
    fork: bool,
    gates: &Gates,
) -> LaunchVerdict {
    let _ = (fork, gates);
    if mode != PermissionMode::Auto {
        return LaunchVerdict::NotChecked { rule: "HANDBACK-7" };
    }
    if blocked_by_classifier {
        // HANDBACK-7: the only checkpoint that stops a subagent.
        LaunchVerdict::Blocked {
            reason: CLASSIFIER_BLOCKED,
            message: messages::CLASSIFIER_BLOCKED,
            rule: "HANDBACK-7",
        }
    } else {
        LaunchVerdict::Cleared { rule: "HANDBACK-7" }
    }
}

crate::vocabulary! {
    /// HANDBACK-8: the four outcomes of the finish review.
    ///
    /// `ALL` lists every outcome, in the order of the HANDBACK-8 table.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub enum ReviewOutcome {
        /// No problem.
        #[default]
        Clean => "clean",
        /// The classifier flags the work or the report.
        Flagged => "flagged",
        /// A separate API safety check refuses the review.
        Refused => "refused",
        /// The classifier is unavailable.
        Unavailable => "unavailable",
    }
}

impl ReviewOutcome {
    /// HANDBACK-8: what goes in front of the report when the review runs before delivery.
    pub fn prefix(self) -> Option<&'static str> {
        match self {
            ReviewOutcome::Clean => None,
            ReviewOutcome::Flagged => Some(messages::HANDBACK_SECURITY_WARNING),
            // HANDBACK-8 lists a refused review as its own case: a warning that says so.
            ReviewOutcome::Refused => Some(messages::HANDBACK_SECURITY_WARNING_REFUSED),
            ReviewOutcome::Unavailable => Some(messages::HANDBACK_REVIEW_NOTICE),
        }
    }
}

/// How a finished run's report is handed over. The report itself is always delivered
/// (HANDBACK-8: never suppressed); this says only what comes with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Text put in front of the report (HANDBACK-8), if any.
    pub prefix: Option<&'static str>,
    /// The rule that decided.
    pub rule: RuleId,
    /// The classifier reviewed the report before the parent could read it (HANDBACK-9).
    pub reviewed_before_delivery: bool,
    /// The classifier reviewed the report at all (auto mode only, HANDBACK-7).
    pub reviewed: bool,
    /// The report travels through a `SubagentHandback` call rather than as the last
    /// message (HANDBACK-1/2/9).
    pub via_handback: bool,
}

/// HANDBACK-2/8/9: how the report of a run in `mode` is delivered, given the finish
/// review's `outcome` (ignored where no review runs before delivery).
pub fn review(outcome: ReviewOutcome, mode: PermissionMode, fork: bool, gates: &Gates) -> Delivery {
    if mode != PermissionMode::Auto {
        // HANDBACK-2: the last message, as before; no classifier.
        return Delivery {
            prefix: None,
            rule: "HANDBACK-2",
            reviewed_before_delivery: false,
            reviewed: false,
            via_handback: false,
        };
    }
    if !tools::handback_attached(mode, fork, gates) {
        // HANDBACK-9 (before v2.1.271) or a fork (HANDBACK-1): the last message is handed
        // over and reviewed afterwards, so nothing can be put in front of it.
        return Delivery {
            prefix: None,
            rule: if gates.handback {
                "HANDBACK-1"
            } else {
                "HANDBACK-9"
            },
            reviewed_before_delivery: false,
            reviewed: true,
            via_handback: false,
        };
    }
    // HANDBACK-8/9: reviewed before the parent reads it; the report is always delivered.
    Delivery {
        prefix: outcome.prefix(),
        rule: "HANDBACK-8",
        reviewed_before_delivery: true,
        reviewed: true,
        via_handback: true,
    }
}

/// The text the parent reads: the prefix (if any) on its own line, then the report.
pub fn deliver(report: &str, delivery: &Delivery) -> String {
    match delivery.prefix {
        Some(prefix) => format!("{prefix}\n{report}"),
        None => report.to_string(),
    }
}

/// HANDBACK-6 / Q-27: the conversation a handback delivers to. The tool delivers to "the
/// conversation that receives the subagent's result"; for a nested subagent (launched by
/// another subagent) the seeds do not say, and Q-27's default is the launcher's
/// conversation. Either way it is the launcher (or resumer), the recipient
/// [`crate::notify::completion`] names for a caller that is still running.
pub fn destination(launcher_is_main: bool) -> (Recipient, RuleId) {
    let rule = if launcher_is_main {
        "HANDBACK-6"
    } else {
        "Q-27"
    };
    (Recipient::Caller, rule)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::{handback_call, CallDecision, PermissionRules};
    use crate::Version;
    use PermissionMode::*;

    fn gates(patch: u32) -> Gates {
        Gates::for_version(Version::v2_1(patch))
    }

    #[test]
    fn attachment_rows() {
        let check = |mode, fork, patch, attached, rule| {
            assert_eq!(
                attachment(mode, fork, &gates(patch)),
                Attachment { attached, rule },
                "{mode:?} fork={fork} 2.1.{patch}"
            );
        };
        check(Auto, false, 271, true, "HANDBACK-1");
        check(Auto, false, 270, false, "HANDBACK-1");
        check(Auto, true, 292, false, "HANDBACK-1");
        check(Default, false, 292, false, "HANDBACK-2");
        check(AcceptEdits, false, 292, false, "HANDBACK-2");
        check(Plan, false, 292, false, "HANDBACK-2");
        check(BypassPermissions, false, 292, false, "HANDBACK-2");
        check(DontAsk, false, 292, false, "HANDBACK-2");
        // Agrees with the helper tools::resolve uses.
        for mode in [Default, AcceptEdits, Auto, DontAsk, BypassPermissions, Plan] {
            for fork in [false, true] {
                assert_eq!(
                    attachment(mode, fork, &gates(292)).attached,
                    tools::handback_attached(mode, fork, &gates(292))
                );
            }
        }
    }

    #[test]
    fn only_the_launch_checkpoint_stops() {
        let stops: Vec<Checkpoint> = Checkpoint::ALL
            .into_iter()
            .filter(|c| c.stops_subagent())
            .collect();
        assert_eq!(stops, [Checkpoint::BeforeLaunch]);
    }

    #[test]
    fn launch_check_rows() {
        let check = |blocked, mode, fork, patch, launches, rule| {
            let verdict = launch_check(blocked, mode, fork, &gates(patch));
            assert_eq!(verdict.launches(), launches, "{verdict:?}");
            assert_eq!(verdict.rule(), rule);
        };
        check(true, Auto, false, 292, false, "HANDBACK-7");
        check(true, Auto, true, 292, false, "HANDBACK-7");
        check(true, Auto, false, 200, false, "HANDBACK-7");
        check(false, Auto, false, 292, true, "HANDBACK-7");
        check(true, Default, false, 292, true, "HANDBACK-7");
        assert_eq!(
            launch_check(true, Auto, false, &gates(292)),
            LaunchVerdict::Blocked {
                reason: "classifier_blocked",
                message: messages::CLASSIFIER_BLOCKED,
                rule: "HANDBACK-7"
            }
        );
        assert_eq!(
            launch_check(false, BypassPermissions, false, &gates(292)),
            LaunchVerdict::NotChecked { rule: "HANDBACK-7" }
        );
    }

    #[test]
    fn review_rows() {
        let check = |outcome, mode, fork, patch, prefix: Option<&str>, rule, before| {
            let delivery = review(outcome, mode, fork, &gates(patch));
            assert_eq!(delivery.prefix, prefix, "{outcome:?} {mode:?} 2.1.{patch}");
            assert_eq!(delivery.rule, rule);
            assert_eq!(delivery.reviewed_before_delivery, before);
            assert_eq!(delivery.via_handback, before);
        };
        let warning = Some(messages::HANDBACK_SECURITY_WARNING);
        let notice = Some(messages::HANDBACK_REVIEW_NOTICE);
        // HANDBACK-8: the four outcomes, from v2.1.271.
        use ReviewOutcome::*;
        check(Clean, Auto, false, 271, None, "HANDBACK-8", true);
        check(Flagged, Auto, false, 271, warning, "HANDBACK-8", true);
        let refused = Some(messages::HANDBACK_SECURITY_WARNING_REFUSED);
        check(Refused, Auto, false, 292, refused, "HANDBACK-8", true);
        check(Unavailable, Auto, false, 292, notice, "HANDBACK-8", true);
        // HANDBACK-9: before v2.1.271, reviewed after delivery.
        check(Flagged, Auto, false, 270, None, "HANDBACK-9", false);
        check(Unavailable, Auto, false, 270, None, "HANDBACK-9", false);
        // Forks have no handback: reviewed after delivery.
        check(Flagged, Auto, true, 292, None, "HANDBACK-1", false);
        // HANDBACK-2: no review outside auto mode.
        check(Flagged, Default, false, 292, None, "HANDBACK-2", false);
        check(Flagged, AcceptEdits, false, 292, None, "HANDBACK-2", false);
        assert!(!review(Flagged, Default, false, &gates(292)).reviewed);
        assert!(review(Flagged, Auto, false, &gates(270)).reviewed);
    }

    #[test]
    fn report_is_never_suppressed() {
        for outcome in ReviewOutcome::ALL {
            let delivery = review(outcome, Auto, false, &gates(292));
            let text = deliver("found 3 bugs", &delivery);
            assert!(text.ends_with("found 3 bugs"), "{outcome:?}");
        }
        let flagged = review(ReviewOutcome::Flagged, Auto, false, &gates(292));
        assert_eq!(
            deliver("r", &flagged),
            format!("{}\nr", messages::HANDBACK_SECURITY_WARNING)
        );
    }

    #[test]
    fn texts() {
        assert_eq!(
            messages::HANDBACK_REVIEW_NOTICE_JA,
            "行動前にサブエージェントの作業を確認してください"
        );
        let spellings: Vec<&str> = ReviewOutcome::ALL.iter().map(|o| o.as_str()).collect();
        assert_eq!(spellings, ["clean", "flagged", "refused", "unavailable"]);
        // The checkpoints' trace spellings (mutants `cargo mutants` found alive).
        let checkpoints: Vec<&str> = Checkpoint::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(checkpoints, ["before_launch", "during_run", "at_finish"]);
    }

    #[test]
    fn destination_and_permission_rules() {
        assert_eq!(destination(true), (Recipient::Caller, "HANDBACK-6"));
        assert_eq!(destination(false), (Recipient::Caller, "Q-27"));
        assert_eq!(
            handback_call(&PermissionRules::default()),
            CallDecision::Run("HANDBACK-5")
        );
        let deny = PermissionRules {
            allow: vec![],
            deny: vec!["SubagentHandback".into()],
        };
        assert_eq!(handback_call(&deny), CallDecision::Run("Q-28"));
        let unrelated = PermissionRules {
            allow: vec!["Bash(ls)".into()],
            deny: vec!["Edit".into()],
        };
        assert_eq!(handback_call(&unrelated), CallDecision::Run("HANDBACK-5"));
    }
}
