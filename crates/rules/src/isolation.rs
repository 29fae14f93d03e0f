//! ISO — worktree isolation (catalog §18): which runs are isolated, what the checks do to
//! a Bash, PowerShell or Monitor command of an isolated run, and the life of a run's own
//! temporary worktree.
//!
//! - **Who is isolated** ([`isolation`]): a run with its own `isolation: worktree` (the
//!   Agent call's parameter or its definition's field, ISO-1/2; FORK-8 for a fork), and,
//!   when the main conversation itself runs isolated in a worktree, the session and every
//!   subagent it spawns, those without `isolation` included (ISO-5).
//! - **The command checks** ([`check_command`]), asked at the call's effect, once the
//!   gate's checks 1–3 let it through (docs/decisions.md, "Issue #30: worktree
//!   isolation"): first the working directory (ISO-2, and from v2.1.210 the whole
//!   repository and a linked worktree's main checkout, ISO-3), for Bash, PowerShell and
//!   Monitor; then, for Bash and Monitor only, the command's text (ISO-4): a redirect of
//!   git to the main checkout is blocked, a command whose git cannot be verified from the
//!   text is refused.
//! - **The worktree's life** ([`own_worktree`], [`changes`], [`at_end`], [`on_resume`]): a
//!   run with its own `isolation` gets a temporary worktree branched from the repository's
//!   default branch (ISO-1); when the run ends it is removed if the run made no changes and
//!   kept otherwise. A change is an allowed call of a file-editing tool ([`CHANGE_TOOLS`]).
//!
//! Where a command's working directory resolves ([`Cwd`]) and what its text does to git
//! ([`Git`]) are the scenario's to say: a `tool` step's `cwd:` and `git:`.

use crate::{Gates, RuleId};

crate::vocabulary! {
    /// Where a command's working directory resolves (a `tool` step's `cwd:`,
    /// `tool_called.cwd`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub enum Cwd {
        /// The run's worktree (the default).
        #[default]
        Worktree => "worktree",
        /// The main checkout: the directory Claude Code was launched from (e.g. because the
        /// worktree was deleted while the subagent ran, ISO-2).
        MainCheckout => "main_checkout",
        /// Elsewhere in the repository that contains the launch directory, such as the
        /// repository's root when Claude Code was launched from a monorepo subdirectory
        /// (ISO-3).
        Repo => "repo",
        /// The main checkout a linked worktree is linked from, when the session runs in
        /// that linked worktree (ISO-3).
        LinkedMainCheckout => "linked_main_checkout",
    }
}

crate::vocabulary! {
    /// What a command's text does to git (a `tool` step's `git:`): what ISO-4's content
    /// checks read.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub enum Git {
        /// Every git it runs stays in the worktree, as its text shows (or it runs none):
        /// the default.
        #[default]
        Stays => "stays",
        /// It redirects git to the main checkout (ISO-4: blocked).
        Redirects => "redirects",
        /// Its text cannot show that every git it runs stays in the worktree, e.g. the
        /// command's name is computed at run time (ISO-4: refused).
        Computed => "computed",
    }
}

/// Why a run is isolated, and so whose worktree a command of it must stay in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// Not isolated: its commands are not checked.
    None,
    /// Its own `isolation: worktree` (ISO-1/2): its own temporary worktree.
    Own,
    /// The main conversation runs isolated in a worktree (ISO-5): the session itself, or a
    /// subagent without its own `isolation`, in the session's worktree.
    Session,
}

/// ISO-2 / ISO-5: why a run is isolated. `own` — the run has its own worktree
/// ([`own_worktree`]); `main_isolated` — the main conversation runs isolated in a
/// worktree (the session's `isolation`). A run's own worktree comes first: its commands
/// must stay in it.
pub fn isolation(own: bool, main_isolated: bool) -> Isolation {
    if own {
        Isolation::Own
    } else if main_isolated {
        Isolation::Session
    } else {
        Isolation::None
    }
}

/// ISO-1 (FORK-8): whether a new run gets its own temporary worktree — its Agent call's
/// `isolation` (`call`) or its definition's (`definition`) is `worktree` — under ISO-1.
/// A teammate gets none (docs/decisions.md: ISO-1 speaks of subagents; a teammate is
/// launched only without the call's `isolation`, SPAWN-11).
pub fn own_worktree(
    call: Option<&str>,
    definition: Option<&str>,
    teammate: bool,
) -> Option<RuleId> {
    let asked = [call, definition]
        .into_iter()
        .any(|value| value == Some("worktree"));
    (asked && !teammate).then_some("ISO-1")
}

/// Which of the checks a tool's call gets (ISO-2, ISO-4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checks {
    /// The working-directory check only (PowerShell, ISO-4).
    Cwd,
    /// The working-directory check and the content checks (Bash and Monitor, ISO-4).
    CwdAndContent,
}

/// ISO-2 / ISO-4: the checks a call of `tool` gets in an isolated run, `None` for a tool
/// that runs no command (only Bash, PowerShell and Monitor are checked).
pub fn checks(tool: &str) -> Option<Checks> {
    match tool {
        "Bash" | "Monitor" => Some(Checks::CwdAndContent),
        "PowerShell" => Some(Checks::Cwd),
        _ => None,
    }
}

/// What the checks do to a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It runs in the worktree.
    Runs,
    /// It runs outside the worktree, where its working directory resolved: the version's
    /// check did not cover that place (before v2.1.203 none did, ISO-2; before v2.1.210
    /// only the launch directory, ISO-3).
    RunsOutside,
    /// It fails with an error: its working directory resolved outside the worktree, in a
    /// place the check covers (ISO-2, ISO-3).
    Fails,
    /// It is blocked: it redirects git to the main checkout (ISO-4).
    Blocked,
    /// It is refused: its text cannot show that its git stays in the worktree (ISO-4).
    Refused,
}

impl Verdict {
    /// Whether the command runs (anywhere).
    pub fn runs(self) -> bool {
        match self {
            Verdict::Runs | Verdict::RunsOutside => true,
            Verdict::Fails | Verdict::Blocked | Verdict::Refused => false,
        }
    }
}

/// A command's checks: the verdict and the rule that decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checked {
    /// What happens to the command.
    pub verdict: Verdict,
    /// The rule: ISO-2 or ISO-3 for the working directory (its gate when it runs
    /// outside), ISO-4 for the content; ISO-5 for a refusal of a run isolated only by the
    /// main conversation's isolation. For [`Verdict::Runs`], the check's own rule (ISO-2
    /// or ISO-5), which the call's permission rule stays ahead of in the trace.
    pub rule: RuleId,
}

/// ISO-2…5: what the checks do to a call of `tool` by a run isolated as `isolation`,
/// whose working directory resolves to `cwd` and whose text does `git` to git, under
/// `gates`. `None` when nothing is checked: the run is not isolated, or the tool runs no
/// command ([`checks`]).
///
/// Order: the working directory first (ISO-2/3: every checked tool), then the content
/// (ISO-4: Bash and Monitor only); a command that runs outside its worktree because the
/// version's check did not cover the place is still content-checked.
pub fn check_command(
    isolation: Isolation,
    tool: &str,
    cwd: Cwd,
    git: Git,
    gates: &Gates,
) -> Option<Checked> {
    let own_rule = match isolation {
        Isolation::None => return None,
        Isolation::Own => "ISO-2",
        Isolation::Session => "ISO-5",
    };
    let checks = checks(tool)?;
    // A refusal of a run isolated only by main's isolation is ISO-5's: the same checks
    // apply to every subagent main spawns.
    let refusal = |rule: RuleId| match isolation {
        Isolation::Session => "ISO-5",
        Isolation::Own | Isolation::None => rule,
    };
    // ISO-2 / ISO-3: where the working directory resolves, and whether this version's
    // check covers it.
    let outside = match cwd {
        Cwd::Worktree => None,
        // ISO-2: from v2.1.203 a command resolving to the main checkout fails; before, it
        // could run there.
        Cwd::MainCheckout => Some((gates.worktree_cwd_check, "ISO-2")),
        // ISO-3: from v2.1.210 the check covers the whole repository and a linked
        // worktree's main checkout; before, only the launch directory (and before
        // v2.1.203 nothing, ISO-2).
        Cwd::Repo | Cwd::LinkedMainCheckout => {
            if gates.worktree_cwd_check {
                Some((gates.worktree_check_whole_repo, "ISO-3"))
            } else {
                Some((false, "ISO-2"))
            }
        }
    };
    if let Some((true, rule)) = outside {
        return Some(Checked {
            verdict: Verdict::Fails,
            rule: refusal(rule),
        });
    }
    // ISO-4: Bash and Monitor commands are checked for what they do to git; PowerShell
    // gets only the working-directory check.
    if checks == Checks::CwdAndContent {
        let content = match git {
            Git::Stays => None,
            Git::Redirects => Some(Verdict::Blocked),
            Git::Computed => Some(Verdict::Refused),
        };
        if let Some(verdict) = content {
            return Some(Checked {
                verdict,
                rule: refusal("ISO-4"),
            });
        }
    }
    Some(match outside {
        Some((_, rule)) => Checked {
            verdict: Verdict::RunsOutside,
            rule,
        },
        None => Checked {
            verdict: Verdict::Runs,
            rule: own_rule,
        },
    })
}

/// The tools whose allowed call is a change to the run's worktree (ISO-1's "changes";
/// docs/decisions.md): the file-editing tools. A shell command's effect on files is not
/// modelled.
pub const CHANGE_TOOLS: [&str; 3] = ["Write", "Edit", "NotebookEdit"];

/// ISO-1: whether an allowed call of `tool` changes the run's worktree.
pub fn changes(tool: &str) -> bool {
    CHANGE_TOOLS.contains(&tool)
}

crate::vocabulary! {
    /// What happened to a run's own worktree (`worktree.action`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum WorktreeAction {
        /// Made for the run, branched from the repository's default branch (ISO-1).
        Created => "created",
        /// Cleaned up when the run ended: it made no changes (ISO-1).
        Removed => "removed",
        /// Left in place when the run ended: it made changes (ISO-1).
        Kept => "kept",
    }
}

/// What a new worktree is branched from (`worktree.branched_from`): the repository's
/// default branch, not the session's `HEAD` (ISO-1).
pub const BRANCHED_FROM: &str = "default_branch";

/// ISO-1: what happens to a run's own worktree when the run ends, having made `changes`
/// changes in it over its life: "cleaned up automatically if the subagent makes no
/// changes".
pub fn at_end(changes: u32) -> (WorktreeAction, RuleId) {
    if changes == 0 {
        (WorktreeAction::Removed, "ISO-1")
    } else {
        (WorktreeAction::Kept, "ISO-1")
    }
}

/// ISO-1 on a resume (docs/decisions.md): a resumed run goes on in its kept worktree
/// (`None`: nothing new); one whose worktree was removed gets a new one (`Created`).
pub fn on_resume(changes: u32) -> Option<(WorktreeAction, RuleId)> {
    (changes == 0).then_some((WorktreeAction::Created, "ISO-1"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;

    fn gates(patch: u32) -> Gates {
        Gates::for_version(Version::v2_1(patch))
    }

    fn verdict(isolation: Isolation, tool: &str, cwd: Cwd, git: Git, patch: u32) -> Checked {
        check_command(isolation, tool, cwd, git, &gates(patch)).expect("checked")
    }

    fn is(verdict: Verdict, rule: RuleId) -> Checked {
        Checked { verdict, rule }
    }

    #[test]
    fn iso_2_main_checkout_fails_from_2_1_203_and_ran_there_before() {
        let at = |patch| verdict(Isolation::Own, "Bash", Cwd::MainCheckout, Git::Stays, patch);
        assert_eq!(at(203), is(Verdict::Fails, "ISO-2"));
        assert_eq!(at(292), is(Verdict::Fails, "ISO-2"));
        assert_eq!(at(202), is(Verdict::RunsOutside, "ISO-2"));
        // In its worktree it runs, at every version.
        for patch in [150, 202, 203, 210, 292] {
            assert_eq!(
                verdict(Isolation::Own, "Bash", Cwd::Worktree, Git::Stays, patch),
                is(Verdict::Runs, "ISO-2")
            );
        }
    }

    #[test]
    fn iso_3_the_whole_repository_from_2_1_210_the_launch_directory_before() {
        for cwd in [Cwd::Repo, Cwd::LinkedMainCheckout] {
            let at = |patch| verdict(Isolation::Own, "PowerShell", cwd, Git::Stays, patch);
            assert_eq!(at(210), is(Verdict::Fails, "ISO-3"), "{cwd}");
            assert_eq!(at(209), is(Verdict::RunsOutside, "ISO-3"), "{cwd}");
            assert_eq!(at(203), is(Verdict::RunsOutside, "ISO-3"), "{cwd}");
            // Before v2.1.203 there was no check at all.
            assert_eq!(at(202), is(Verdict::RunsOutside, "ISO-2"), "{cwd}");
        }
        // The launch directory itself was covered from v2.1.203.
        assert_eq!(
            verdict(Isolation::Own, "Bash", Cwd::MainCheckout, Git::Stays, 209),
            is(Verdict::Fails, "ISO-2")
        );
    }

    #[test]
    fn iso_4_bash_and_monitor_get_the_content_checks_powershell_only_the_cwd() {
        for tool in ["Bash", "Monitor"] {
            assert_eq!(
                verdict(Isolation::Own, tool, Cwd::Worktree, Git::Redirects, 292),
                is(Verdict::Blocked, "ISO-4")
            );
            assert_eq!(
                verdict(Isolation::Own, tool, Cwd::Worktree, Git::Computed, 292),
                is(Verdict::Refused, "ISO-4")
            );
            // The working directory is checked first.
            assert_eq!(
                verdict(Isolation::Own, tool, Cwd::MainCheckout, Git::Computed, 292),
                is(Verdict::Fails, "ISO-2")
            );
            // A command that ran outside (an old version) is still content-checked.
            assert_eq!(
                verdict(Isolation::Own, tool, Cwd::MainCheckout, Git::Redirects, 202),
                is(Verdict::Blocked, "ISO-4")
            );
        }
        for git in Git::ALL {
            assert_eq!(
                verdict(Isolation::Own, "PowerShell", Cwd::Worktree, git, 292),
                is(Verdict::Runs, "ISO-2")
            );
        }
        assert_eq!(
            verdict(
                Isolation::Own,
                "PowerShell",
                Cwd::MainCheckout,
                Git::Stays,
                292
            ),
            is(Verdict::Fails, "ISO-2")
        );
        assert_eq!(checks("Monitor"), Some(Checks::CwdAndContent));
        assert_eq!(checks("PowerShell"), Some(Checks::Cwd));
        assert_eq!(checks("Write"), None);
    }

    #[test]
    fn iso_5_main_isolated_checks_every_run_and_refusals_cite_it() {
        assert_eq!(isolation(false, false), Isolation::None);
        assert_eq!(isolation(false, true), Isolation::Session);
        assert_eq!(isolation(true, true), Isolation::Own);
        assert_eq!(isolation(true, false), Isolation::Own);
        let session = |cwd, git, patch| verdict(Isolation::Session, "Bash", cwd, git, patch);
        assert_eq!(
            session(Cwd::MainCheckout, Git::Stays, 292),
            is(Verdict::Fails, "ISO-5")
        );
        assert_eq!(
            session(Cwd::Worktree, Git::Redirects, 292),
            is(Verdict::Blocked, "ISO-5")
        );
        assert_eq!(
            session(Cwd::Worktree, Git::Stays, 292),
            is(Verdict::Runs, "ISO-5")
        );
        // The version gates still decide where it ran.
        assert_eq!(
            session(Cwd::MainCheckout, Git::Stays, 202),
            is(Verdict::RunsOutside, "ISO-2")
        );
    }

    #[test]
    fn nothing_is_checked_outside_isolation_or_for_a_tool_without_a_command() {
        let all = gates(292);
        assert_eq!(
            check_command(
                Isolation::None,
                "Bash",
                Cwd::MainCheckout,
                Git::Computed,
                &all
            ),
            None
        );
        assert_eq!(
            check_command(
                Isolation::Own,
                "Edit",
                Cwd::MainCheckout,
                Git::Computed,
                &all
            ),
            None
        );
    }

    #[test]
    fn verdicts_that_run() {
        let running: Vec<_> = [
            Verdict::Runs,
            Verdict::RunsOutside,
            Verdict::Fails,
            Verdict::Blocked,
            Verdict::Refused,
        ]
        .into_iter()
        .filter(|verdict| verdict.runs())
        .collect();
        assert_eq!(running, [Verdict::Runs, Verdict::RunsOutside]);
    }

    #[test]
    fn iso_1_own_worktree_life() {
        assert_eq!(own_worktree(Some("worktree"), None, false), Some("ISO-1"));
        assert_eq!(own_worktree(None, Some("worktree"), false), Some("ISO-1"));
        assert_eq!(own_worktree(None, None, false), None);
        assert_eq!(own_worktree(Some("worktree"), None, true), None);
        assert!(changes("Write") && changes("Edit") && changes("NotebookEdit"));
        assert!(!changes("Bash") && !changes("Read"));
        assert_eq!(at_end(0), (WorktreeAction::Removed, "ISO-1"));
        assert_eq!(at_end(2), (WorktreeAction::Kept, "ISO-1"));
        assert_eq!(on_resume(0), Some((WorktreeAction::Created, "ISO-1")));
        assert_eq!(on_resume(1), None);
        assert_eq!(Cwd::default(), Cwd::Worktree);
        assert_eq!(Git::default(), Git::Stays);
        assert_eq!(
            Cwd::ALL.map(Cwd::as_str),
            ["worktree", "main_checkout", "repo", "linked_main_checkout"]
        );
        assert_eq!(
            Git::ALL.map(Git::as_str),
            ["stays", "redirects", "computed"]
        );
    }
}
