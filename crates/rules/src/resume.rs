//! RESUME — what a SendMessage does with the agent it names: deliver to a running one
//! (Q-8, NOTIFY-9), resume a finished one (CAP-7), or refuse (RESUME-3/5/10/12); and what
//! the person typing into a finished agent's transcript does (RESUME-11, Q-7); how a stop
//! plays out (RESUME-6, RESUME-10, Q-6) and whether a run cut at `maxTurns` returns
//! partial output (RESUME-4).

use crate::{Gates, RuleId};

crate::vocabulary! {
    /// Why a SendMessage was refused (`message_rejected.reason`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum MessageRejection {
        /// No agent has that id or name (RESUME-5).
        UnknownAgent => "unknown_agent",
        /// The name now reaches another agent than it first did (RESUME-12).
        NameReused => "name_reused",
        /// A one-shot run (Explore, Plan) cannot be resumed (RESUME-3).
        NotResumable => "not_resumable",
        /// The person cancelled the run (RESUME-10).
        Cancelled => "cancelled",
    }
}

/// What the simulator knows about the agent a SendMessage's `to` names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Addressee {
    /// `to` names an agent: its id, or a name in use.
    pub found: bool,
    /// `to` is a name that first reached another agent than it reaches now (RESUME-12).
    pub name_reached_another: bool,
    /// The agent is the main conversation.
    pub main: bool,
    /// The agent is running.
    pub running: bool,
    /// The agent's record is kept (an anonymous load run's is forgotten when it ends).
    pub kept: bool,
    /// A one-shot built-in (Explore, Plan): it returned no agent ID (RESUME-3).
    pub one_shot: bool,
    /// The person cancelled its last run (RESUME-10).
    pub cancelled: bool,
}

/// What a SendMessage does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Send {
    /// Refused, with the reason and the rule.
    Refused(MessageRejection, RuleId),
    /// Delivered to a running agent as direction: Q-8 (a subagent), NOTIFY-9 (main).
    Delivered(RuleId),
    /// The finished agent runs again under the same id, without a cap check (CAP-7).
    Resumed(RuleId),
}

/// RESUME-3/5/10/12, Q-8, NOTIFY-9, CAP-7: what a SendMessage to `to` does, checked in
/// this order: the name is known (RESUME-5); a name still reaches the agent it first
/// reached (RESUME-12, from v2.1.199); a running agent, main included, takes the message
/// as direction; a finished one is resumed unless its record is gone (RESUME-5), it is
/// one-shot (RESUME-3) or the person cancelled it (RESUME-10).
pub fn send(to: &Addressee, gates: &Gates) -> Send {
    if !to.found {
        return Send::Refused(MessageRejection::UnknownAgent, "RESUME-5");
    }
    if gates.name_reuse_check && to.name_reached_another {
        return Send::Refused(MessageRejection::NameReused, "RESUME-12");
    }
    if to.main {
        return Send::Delivered("NOTIFY-9");
    }
    if to.running {
        return Send::Delivered("Q-8");
    }
    if !to.kept {
        return Send::Refused(MessageRejection::UnknownAgent, "RESUME-5");
    }
    if to.one_shot {
        return Send::Refused(MessageRejection::NotResumable, "RESUME-3");
    }
    if to.cancelled {
        return Send::Refused(MessageRejection::Cancelled, "RESUME-10");
    }
    Send::Resumed(crate::cap::Unchecked::Resume.rule())
}

/// Where a finished agent's row is when the person types into its transcript (RESUME-11
/// asks whether the row is "still in the subagent panel").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypedRow {
    /// The row is in the panel now ([`crate::panel::Panel::has_row`]).
    InPanel,
    /// The session has a panel, but the row is not in it: its 30 s are up (half-open, Q-23's
    /// decision), it was cleared with `x` (PANEL-3), or the run never had one.
    Gone,
    /// The session keeps no panel at all: `-p` and SDK sessions (PANEL-1,
    /// [`crate::panel::session_has_panel`]).
    NoPanel,
}

/// Why typing into a user-stopped agent's transcript did not resume it (RESUME-11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypedRefusal {
    /// The version predates RESUME-11's gate.
    NeedsVersion,
    /// The row is no longer in the panel.
    RowGone,
    /// The session has no panel to type from.
    NoPanel,
    /// The run is a one-shot built-in (Explore, Plan): it cannot be resumed (RESUME-3).
    OneShot,
}

impl TypedRefusal {
    /// The `action_ignored.why` text. The version is read from the gate table, not written
    /// here.
    pub fn why(self) -> String {
        match self {
            TypedRefusal::NeedsVersion => {
                let since = crate::gates_table::since("type_to_resume");
                format!("typing to resume needs v{since}+")
            }
            TypedRefusal::RowGone => {
                "its row is no longer in the panel (kept 30 s unless cleared with x, PANEL-3)"
                    .to_owned()
            }
            TypedRefusal::NoPanel => {
                "a -p or SDK session has no subagent panel to type from (PANEL-1)".to_owned()
            }
            TypedRefusal::OneShot => {
                "Explore and Plan are one-shot: they cannot be resumed (RESUME-3)".to_owned()
            }
        }
    }
}

/// What typing into a finished agent's transcript does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Typed {
    /// The agent runs again under the same id, without a cap check: RESUME-11 for a run the
    /// person stopped, Q-7 for any other.
    Resumed(RuleId),
    /// Nothing runs (`action_ignored`), with the reason and the rule.
    Refused(TypedRefusal, RuleId),
}

/// RESUME-11 / Q-7: the person types into the transcript of a finished agent. One the person
/// did not stop resumes. One the person stopped (`cancelled`) resumes only from
/// v2.1.191 and only while its row is still in the subagent panel (`row`).
pub fn type_to_finished(cancelled: bool, row: TypedRow, gates: &Gates) -> Typed {
    if !cancelled {
        return Typed::Resumed("Q-7");
    }
    if !gates.type_to_resume {
        return Typed::Refused(TypedRefusal::NeedsVersion, "RESUME-11");
    }
    match row {
        TypedRow::InPanel => Typed::Resumed("RESUME-11"),
        TypedRow::Gone => Typed::Refused(TypedRefusal::RowGone, "RESUME-11"),
        TypedRow::NoPanel => Typed::Refused(TypedRefusal::NoPanel, "RESUME-11"),
    }
}

/// RESUME-3, then RESUME-11 / Q-7: the person types into the transcript of a finished
/// agent. A one-shot built-in (Explore, Plan) is refused whoever asks: RESUME-3 says it
/// "cannot be resumed" and to use `general-purpose` or a custom subagent "when work must
/// continue" — the missing agent ID is its reason for Claude, not a limit on the rule
/// (issue #23, docs/decisions.md). Otherwise [`type_to_finished`] decides.
pub fn type_to(one_shot: bool, cancelled: bool, row: TypedRow, gates: &Gates) -> Typed {
    if one_shot {
        return Typed::Refused(TypedRefusal::OneShot, "RESUME-3");
    }
    type_to_finished(cancelled, row, gates)
}

/// How a running agent's stop plays out: the rule of its `stop_requested`, the rule of
/// its end, and whether it ends `cancelled` (the person's stop) rather than `stopped`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stopping {
    /// The rule `stop_requested` cites.
    pub request_rule: RuleId,
    /// The rule the run's end cites.
    pub end_rule: RuleId,
    /// The person stopped it: it ends `cancelled`, and SendMessage no longer resumes it
    /// (RESUME-10).
    pub cancelled: bool,
}

/// RESUME-6 / RESUME-10 / Q-6: a running agent is stopped, by another agent's TaskStop
/// (`by_person` false) or by the person (`x` in `/tasks`). A TaskStop ends the run
/// `stopped` at once, its slot released as it exits; the person's stop cancels it
/// (RESUME-10).
pub fn stop(by_person: bool) -> Stopping {
    if by_person {
        Stopping {
            request_rule: "RESUME-10",
            end_rule: "RESUME-10",
            cancelled: true,
        }
    } else {
        Stopping {
            request_rule: "RESUME-6",
            end_rule: "Q-6",
            cancelled: false,
        }
    }
}

/// RESUME-4: a run stops at its `maxTurns` limit; is its output marked as partial (from
/// v2.1.246), or returned as an ordinary result (before)?
pub fn max_turns_partial(gates: &Gates) -> (bool, RuleId) {
    (gates.max_turns_partial, "RESUME-4")
}

/// How a resumed run's model is found (RESUME-14).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResumedModel {
    /// Chosen again with the per-invocation model the run was launched with (it persists
    /// from v2.1.211; before, the choice falls back to the definition's model or main's).
    ChooseAgain,
    /// The model the run ran on.
    Keep,
}

/// RESUME-14: the model of a resumed run. A run launched with a per-invocation model has
/// its model chosen again (under the version's gates, by the model rules); a fork, or a run
/// without a per-invocation model, keeps the model it ran on.
pub fn resumed_model(has_invocation_model: bool, fork: bool) -> (ResumedModel, RuleId) {
    let model = if has_invocation_model && !fork {
        ResumedModel::ChooseAgain
    } else {
        ResumedModel::Keep
    };
    (model, "RESUME-14")
}

/// RESUME-3: is an agent type one-shot (it returns no agent ID, so it cannot be resumed)?
/// Only the built-in one-shot types are; a custom definition that reuses such a name is
/// not one (SPAWN-10).
pub fn one_shot_type(built_in: bool, name: &str) -> (bool, RuleId) {
    let one_shot = built_in
        && crate::model::BuiltIn::from_name(name).is_some_and(crate::model::BuiltIn::one_shot);
    (one_shot, "RESUME-3")
}

/// RESUME-3 / SPAWN-11: does a run of a type returns no agent ID? RESUME-3 is about
/// subagents: a teammate of a one-shot type is still addressed by its name (SPAWN-11).
pub fn returns_no_id(type_one_shot: bool, teammate: bool) -> (bool, RuleId) {
    if teammate {
        (false, "SPAWN-11")
    } else {
        (type_one_shot, "RESUME-3")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;

    #[test]
    fn stops_resume_6_resume_10_q_6() {
        assert_eq!(
            stop(false),
            Stopping {
                request_rule: "RESUME-6",
                end_rule: "Q-6",
                cancelled: false
            }
        );
        assert_eq!(
            stop(true),
            Stopping {
                request_rule: "RESUME-10",
                end_rule: "RESUME-10",
                cancelled: true
            }
        );
    }

    #[test]
    fn max_turns_marks_partial_output_from_2_1_246() {
        let at = |patch| max_turns_partial(&Gates::for_version(Version::v2_1(patch)));
        assert_eq!(at(246), (true, "RESUME-4"));
        assert_eq!(at(245), (false, "RESUME-4"));
    }

    #[test]
    fn rejections_spell_as_the_trace_s_reason() {
        let spelled: Vec<&str> = MessageRejection::ALL
            .iter()
            .map(|reason| reason.as_str())
            .collect();
        assert_eq!(
            spelled,
            ["unknown_agent", "name_reused", "not_resumable", "cancelled"]
        );
    }

    fn finished() -> Addressee {
        Addressee {
            found: true,
            kept: true,
            ..Addressee::default()
        }
    }

    #[test]
    fn sends_in_the_documented_order() {
        let gates = Gates::for_version(Version::NEWEST);
        let rows = [
            (
                Addressee::default(),
                Send::Refused(MessageRejection::UnknownAgent, "RESUME-5"),
            ),
            (
                Addressee {
                    name_reached_another: true,
                    running: true,
                    ..finished()
                },
                Send::Refused(MessageRejection::NameReused, "RESUME-12"),
            ),
            (
                Addressee {
                    main: true,
                    ..finished()
                },
                Send::Delivered("NOTIFY-9"),
            ),
            (
                Addressee {
                    running: true,
                    one_shot: true,
                    ..finished()
                },
                Send::Delivered("Q-8"),
            ),
            (
                Addressee {
                    kept: false,
                    ..finished()
                },
                Send::Refused(MessageRejection::UnknownAgent, "RESUME-5"),
            ),
            (
                Addressee {
                    one_shot: true,
                    cancelled: true,
                    ..finished()
                },
                Send::Refused(MessageRejection::NotResumable, "RESUME-3"),
            ),
            (
                Addressee {
                    cancelled: true,
                    ..finished()
                },
                Send::Refused(MessageRejection::Cancelled, "RESUME-10"),
            ),
            (finished(), Send::Resumed("CAP-7")),
        ];
        for (addressee, expected) in rows {
            assert_eq!(send(&addressee, &gates), expected, "{addressee:?}");
        }
    }

    #[test]
    fn before_2_1_199_a_reused_name_reaches_its_new_agent() {
        let old = Gates::for_version(Version::v2_1(198));
        let reused = Addressee {
            name_reached_another: true,
            ..finished()
        };
        assert_eq!(send(&reused, &old), Send::Resumed("CAP-7"));
    }

    #[test]
    fn typing_resumes_a_stopped_agent_only_while_its_row_is_in_the_panel() {
        let gates = Gates::for_version(Version::NEWEST);
        let old = Gates::for_version(Version::v2_1(190));
        let rows = [
            (false, TypedRow::Gone, &gates, Typed::Resumed("Q-7")),
            (false, TypedRow::NoPanel, &old, Typed::Resumed("Q-7")),
            (true, TypedRow::InPanel, &gates, Typed::Resumed("RESUME-11")),
            (
                true,
                TypedRow::Gone,
                &gates,
                Typed::Refused(TypedRefusal::RowGone, "RESUME-11"),
            ),
            (
                true,
                TypedRow::NoPanel,
                &gates,
                Typed::Refused(TypedRefusal::NoPanel, "RESUME-11"),
            ),
            (
                true,
                TypedRow::InPanel,
                &old,
                Typed::Refused(TypedRefusal::NeedsVersion, "RESUME-11"),
            ),
        ];
        for (cancelled, row, gates, expected) in rows {
            assert_eq!(type_to_finished(cancelled, row, gates), expected, "{row:?}");
        }
    }

    #[test]
    fn the_version_in_the_refusal_is_the_gate_s() {
        assert_eq!(
            TypedRefusal::NeedsVersion.why(),
            "typing to resume needs v2.1.191+"
        );
        assert!(Gates::for_version(Version::v2_1(191)).type_to_resume);
        assert!(!Gates::for_version(Version::v2_1(190)).type_to_resume);
    }

    #[test]
    fn resumed_models_and_one_shot_types() {
        assert_eq!(
            resumed_model(true, false),
            (ResumedModel::ChooseAgain, "RESUME-14")
        );
        assert_eq!(resumed_model(true, true).0, ResumedModel::Keep);
        assert_eq!(resumed_model(false, false).0, ResumedModel::Keep);
        assert_eq!(one_shot_type(true, "Explore"), (true, "RESUME-3"));
        assert!(
            !one_shot_type(false, "Explore").0,
            "a custom Explore is not one (SPAWN-10)"
        );
        assert!(!one_shot_type(true, "general-purpose").0);
        assert_eq!(returns_no_id(true, false), (true, "RESUME-3"));
        assert_eq!(returns_no_id(true, true), (false, "SPAWN-11"));
    }

    #[test]
    fn typing_into_a_one_shot_run_is_refused_resume_3() {
        let gates = Gates::for_version(crate::Version::v2_1(292));
        assert_eq!(
            type_to(true, false, TypedRow::InPanel, &gates),
            Typed::Refused(TypedRefusal::OneShot, "RESUME-3")
        );
        assert_eq!(
            type_to(false, false, TypedRow::InPanel, &gates),
            Typed::Resumed("Q-7")
        );
    }
}
