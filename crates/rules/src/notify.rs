//! NOTIFY — who receives a finished run's result, and whether a launcher waits.

use crate::{Ending, Gates, Mode, Outcome, RuleId, SessionKind};

/// Who gets a finished run's single text result (NOTIFY-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recipient {
    /// The agent that launched (or resumed) the run.
    Caller,
    /// The main conversation.
    Main,
}

/// The facts about a finishing run that decide where its result goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finishing {
    /// The run's mode when it ends.
    pub mode: Mode,
    /// The run is a fork.
    pub fork: bool,
    /// The caller (launcher or resumer) is the main conversation.
    pub caller_is_main: bool,
    /// The caller is still running (a subagent caller may have finished, NOTIFY-7).
    pub caller_running: bool,
    /// The run is a resume started by SendMessage.
    pub resumed: bool,
}

/// What kind of delivery a result is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// The Agent tool's result to a blocked caller (NOTIFY-2).
    ToolResult,
    /// A completion notification in a later turn (NOTIFY-3).
    Notification,
}

crate::vocabulary! {
    /// What a notification delivers (`notification.what`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Notice {
        /// The Agent tool's result to a caller blocked on it (NOTIFY-2).
        Result => "result",
        /// A later-turn completion notification (NOTIFY-3/6/7/9/10).
        Completion => "completion",
        /// A later-turn notification of a failed run (NOTIFY-12).
        Failed => "failed",
        /// A later-turn notification of a stopped or cancelled run (NOTIFY-3).
        Stopped => "stopped",
        /// A teammate's result, as a team message (NOTIFY-11).
        TeamMessage => "team_message",
        /// A background shell command ended (NOTIFY-5).
        BashDone => "bash_done",
        /// `ask_progress` on a running agent: Claude says it is still running (NOTIFY-4,
        /// from v2.1.211).
        StillRunning => "still_running",
        /// `ask_progress` on a running agent before v2.1.211: an unfinished result (NOTIFY-4).
        PrematureResult => "premature_result",
        /// `ask_progress` on an agent that is done (NOTIFY-4).
        ProgressDone => "progress_done",
    }
}

/// NOTIFY-2/3/7/9/10: where a finished run's result goes, and how.
pub fn completion(finishing: Finishing) -> (Recipient, Delivery, RuleId) {
    if finishing.mode == Mode::Foreground && finishing.caller_running {
        return (Recipient::Caller, Delivery::ToolResult, "NOTIFY-2");
    }
    if finishing.caller_is_main {
        let rule = if finishing.fork {
            "NOTIFY-10"
        } else {
            "NOTIFY-3"
        };
        return (Recipient::Main, Delivery::Notification, rule);
    }
    if finishing.caller_running {
        let rule = if finishing.resumed {
            "NOTIFY-9"
        } else {
            "NOTIFY-6"
        };
        (Recipient::Caller, Delivery::Notification, rule)
    } else {
        // NOTIFY-7: an orphan reports to the main conversation.
        (Recipient::Main, Delivery::Notification, "NOTIFY-7")
    }
}

/// A finished run's one result: who gets it, how, what the notification says, and the
/// rule that decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notified {
    /// Who receives it.
    pub recipient: Recipient,
    /// The tool's result or a later-turn notification.
    pub delivery: Delivery,
    /// What the notification says (`what`).
    pub notice: Notice,
    /// The rule that decided.
    pub rule: RuleId,
}

/// NOTIFY-1…12: a finished run's one result. Where it goes and how is [`completion`]'s
/// answer; a teammate's result is a team message (NOTIFY-11); a failure notified in a later
/// turn is NOTIFY-12's failure notification.
pub fn result(finishing: Finishing, outcome: Outcome, teammate: bool) -> Notified {
    let (recipient, delivery, rule) = completion(finishing);
    let ended = outcome.ending();
    let notice = match (delivery, ended) {
        _ if teammate => Notice::TeamMessage,
        (Delivery::ToolResult, _) => Notice::Result,
        (_, Ending::Completed) => Notice::Completion,
        (_, Ending::Failed) => Notice::Failed,
        (_, Ending::Stopped) => Notice::Stopped,
    };
    let rule = if teammate {
        "NOTIFY-11"
    } else if ended == Ending::Failed && delivery == Delivery::Notification {
        "NOTIFY-12"
    } else {
        rule
    };
    Notified {
        recipient,
        delivery,
        notice,
        rule,
    }
}

/// NOTIFY-6 / NOTIFY-7: does a launcher whose steps are done wait for its background
/// children before it finishes?
pub fn launcher_waits(kind: SessionKind) -> (bool, RuleId) {
    if kind.is_interactive() {
        (true, "NOTIFY-6")
    } else {
        (false, "NOTIFY-7")
    }
}

/// NOTIFY-4: what an agent that asks about a run's progress hears. A finished run's
/// result is there ([`Notice::ProgressDone`]); of a running one, Claude says it is still
/// running from v2.1.211 (it waits for the completion notification); before, it sometimes
/// reported unfinished results ([`Notice::PrematureResult`]).
pub fn progress(running: bool, gates: &Gates) -> (Notice, RuleId) {
    let notice = if !running {
        Notice::ProgressDone
    } else if gates.waits_for_notification {
        Notice::StillRunning
    } else {
        Notice::PrematureResult
    };
    (notice, "NOTIFY-4")
}

/// NOTIFY-5 / Q-5: does a run whose steps are done wait for its background shells? While
/// any of them runs, it stays alive: a shell's end is reported to the run that started it.
pub fn waits_for_shells(shells_running: u32) -> (bool, RuleId) {
    (shells_running > 0, "NOTIFY-5")
}

/// NOTIFY-5: who hears that a background shell ended. The run that started it, if that
/// run is still the one running (`starter_running`); a shell of an earlier run (the run
/// ended, or was stopped and resumed) reports to nobody (`None`).
pub fn shell_done(starter_running: bool) -> Option<RuleId> {
    starter_running.then_some("NOTIFY-5")
}

/// NOTIFY-9: where a resumed agent's result goes. Resumed by an agent it already reports
/// to (its launcher, or one further up the chain: `resumer_upstream`), it keeps its own
/// recipient; resumed by anyone else, it reports to whoever resumed it (`true`: redirected).
pub fn redirected_on_resume(resumer_upstream: bool) -> (bool, RuleId) {
    (!resumer_upstream, "NOTIFY-9")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_spell_as_the_trace_s_what() {
        let spelled: Vec<&str> = Notice::ALL.iter().map(|notice| notice.as_str()).collect();
        assert_eq!(
            spelled,
            [
                "result",
                "completion",
                "failed",
                "stopped",
                "team_message",
                "bash_done",
                "still_running",
                "premature_result",
                "progress_done"
            ]
        );
    }

    #[test]
    fn asking_about_progress_notify_4() {
        let gates = |patch| Gates::for_version(crate::Version::v2_1(patch));
        let rows = [
            (true, 211, Notice::StillRunning),
            (true, 210, Notice::PrematureResult),
            (false, 211, Notice::ProgressDone),
            (false, 210, Notice::ProgressDone),
        ];
        for (running, patch, notice) in rows {
            assert_eq!(
                progress(running, &gates(patch)),
                (notice, "NOTIFY-4"),
                "running={running} at 2.1.{patch}"
            );
        }
    }

    fn finishing(mode: Mode, caller_is_main: bool, caller_running: bool) -> Finishing {
        Finishing {
            mode,
            fork: false,
            caller_is_main,
            caller_running,
            resumed: false,
        }
    }

    #[test]
    fn recipients() {
        assert_eq!(
            completion(finishing(Mode::Foreground, true, true)).2,
            "NOTIFY-2"
        );
        assert_eq!(
            completion(finishing(Mode::Background, true, true)),
            (Recipient::Main, Delivery::Notification, "NOTIFY-3")
        );
        assert_eq!(
            completion(finishing(Mode::Background, false, true)),
            (Recipient::Caller, Delivery::Notification, "NOTIFY-6")
        );
        assert_eq!(
            completion(finishing(Mode::Background, false, false)),
            (Recipient::Main, Delivery::Notification, "NOTIFY-7")
        );
        let fork = Finishing {
            fork: true,
            ..finishing(Mode::Background, true, true)
        };
        assert_eq!(completion(fork).2, "NOTIFY-10");
        let resumed = Finishing {
            resumed: true,
            ..finishing(Mode::Background, false, true)
        };
        assert_eq!(completion(resumed).2, "NOTIFY-9");
    }

    #[test]
    fn results_name_teammates_failures_and_tool_results() {
        let background = finishing(Mode::Background, true, true);
        let foreground = finishing(Mode::Foreground, true, true);
        let rows = [
            (
                background,
                Outcome::Completed,
                false,
                Notice::Completion,
                "NOTIFY-3",
            ),
            (
                background,
                Outcome::Failed,
                false,
                Notice::Failed,
                "NOTIFY-12",
            ),
            (
                background,
                Outcome::Stopped,
                false,
                Notice::Stopped,
                "NOTIFY-3",
            ),
            (
                background,
                Outcome::Completed,
                true,
                Notice::TeamMessage,
                "NOTIFY-11",
            ),
            (
                foreground,
                Outcome::Failed,
                false,
                Notice::Result,
                "NOTIFY-2",
            ),
            (
                foreground,
                Outcome::Completed,
                false,
                Notice::Result,
                "NOTIFY-2",
            ),
        ];
        for (finishing, ended, teammate, notice, rule) in rows {
            let result = result(finishing, ended, teammate);
            assert_eq!((result.notice, result.rule), (notice, rule), "{ended:?}");
        }
    }

    #[test]
    fn launchers_wait_only_interactively() {
        assert!(launcher_waits(SessionKind::Interactive).0);
        assert!(!launcher_waits(SessionKind::Headless).0);
        assert!(!launcher_waits(SessionKind::Sdk).0);
    }

    #[test]
    fn a_run_waits_for_its_shells_and_hears_them_while_it_is_the_run() {
        assert_eq!(waits_for_shells(0), (false, "NOTIFY-5"));
        assert_eq!(waits_for_shells(2), (true, "NOTIFY-5"));
        assert_eq!(shell_done(true), Some("NOTIFY-5"));
        assert_eq!(shell_done(false), None);
        assert_eq!(redirected_on_resume(true), (false, "NOTIFY-9"));
        assert_eq!(redirected_on_resume(false), (true, "NOTIFY-9"));
    }
}
