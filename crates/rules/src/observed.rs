//! Which documented rule a fact seen in a real session's transcript stands for (issue #34):
//! the importer labels each fact it extracts, and the report each departure, from this one
//! table, so a fact's rule is the catalog's and never spelt where it is used.

use crate::RuleId;

/// A kind of fact an imported transcript shows about one subagent call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observed {
    /// The Agent call was refused (no such type, or another refusal the tool answered).
    Refused,
    /// Where the run was placed: the foreground, or launched in the background.
    Placement,
    /// A foreground call's result came back to its caller.
    ResultReturned,
    /// A background run's completion notification reached its launcher.
    Notified,
    /// A background run's notification said it failed.
    FailedNotice,
    /// The person interrupted the run, or its notification said it was stopped.
    Stopped,
    /// A foreground subagent's tool call asked the person's permission in the terminal, and
    /// the person answered it.
    Prompted,
    /// A background subagent's tool call asked the person's permission in the main session,
    /// naming the subagent, and the person answered it.
    PromptedInMain,
    /// A background subagent's tool call that needed permission was auto-denied, no prompt
    /// shown.
    AutoDenied,
    /// The permission mode denied the call without asking (`dontAsk`).
    ModeDenied,
}

/// The rule `fact` demonstrates: SPAWN-14 (the call's refusal is its tool result), FGBG-1
/// (the first-match placement), NOTIFY-2 (a foreground result is the tool result),
/// NOTIFY-3 (a background completion notifies its launcher), ERR-4 (a failed run's
/// notification), RESUME-10 (how a stopped run ends); PERM-3 (a foreground subagent's prompt
/// in the terminal), PERM-4 (a background subagent's in the main session), PERM-5 (the
/// auto-denial before v2.1.186), PERM-9 (`dontAsk` denies without asking).
pub const fn rule(fact: Observed) -> RuleId {
    match fact {
        Observed::Refused => "SPAWN-14",
        Observed::Placement => "FGBG-1",
        Observed::ResultReturned => "NOTIFY-2",
        Observed::Notified => "NOTIFY-3",
        Observed::FailedNotice => "ERR-4",
        Observed::Stopped => "RESUME-10",
        Observed::Prompted => "PERM-3",
        Observed::PromptedInMain => "PERM-4",
        Observed::AutoDenied => "PERM-5",
        Observed::ModeDenied => "PERM-9",
    }
}

#[cfg(test)]
mod tests {
    use super::{rule, Observed};

    #[test]
    fn each_fact_names_its_rule() {
        assert_eq!(rule(Observed::Refused), "SPAWN-14");
        assert_eq!(rule(Observed::Placement), "FGBG-1");
        assert_eq!(rule(Observed::ResultReturned), "NOTIFY-2");
        assert_eq!(rule(Observed::Notified), "NOTIFY-3");
        assert_eq!(rule(Observed::FailedNotice), "ERR-4");
        assert_eq!(rule(Observed::Stopped), "RESUME-10");
        assert_eq!(rule(Observed::Prompted), "PERM-3");
        assert_eq!(rule(Observed::PromptedInMain), "PERM-4");
        assert_eq!(rule(Observed::AutoDenied), "PERM-5");
        assert_eq!(rule(Observed::ModeDenied), "PERM-9");
    }
}
