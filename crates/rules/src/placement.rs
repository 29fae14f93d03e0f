//! FGBG — where a Claude-spawned subagent runs: FGBG-1's first-match chain.

use crate::{messages, Mode, RejectReason, RuleId, SessionConfig};

/// The facts FGBG-1 reads for one Agent-tool spawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlacementInput {
    /// Case 1: an in-process agent-team teammate made the call.
    pub by_teammate: bool,
    /// The definition sets `background: true` (FGBG-3).
    pub definition_background: bool,
    /// The `run_in_background` parameter, when the call passes one.
    pub run_in_background: Option<bool>,
    /// the caller needs the result before going on.
    pub needs_result: bool,
}

/// The placement, or the teammate rejection of FGBG-1 case 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Run in this mode; the rule (and case) that decided.
    Run(Mode, RuleId),
    /// Rejected; the reason, rule and message.
    Reject(RejectReason, RuleId, &'static str),
}

/// FGBG-1: the first matching case decides, in exactly this order.
pub fn place(input: PlacementInput, config: &SessionConfig) -> Placement {
    // Case 1: an in-process teammate's spawn runs in the foreground, with two rejections.
    if input.by_teammate {
        if input.definition_background {
            return Placement::Reject(
                RejectReason::TeammateBackground,
                "FGBG-1",
                messages::TEAMMATE_BACKGROUND_DEF,
            );
        }
        if !config.fork_mode && !config.background_disabled && input.run_in_background == Some(true)
        {
            return Placement::Reject(
                RejectReason::TeammateBackground,
                "FGBG-1",
                messages::TEAMMATE_RUN_IN_BACKGROUND,
            );
        }
        return Placement::Run(Mode::Foreground, "FGBG-1");
    }
    // Case 2 (and Q-12: it beats `background: true`).
    if config.background_disabled {
        return Placement::Run(Mode::Foreground, "FGBG-1");
    }
    // Case 3: fork mode on → background; `run_in_background` is removed from the tool.
    if config.fork_mode {
        return Placement::Run(Mode::Background, "FORK-3");
    }
    // Case 4: fork mode off → background by default, foreground when Claude needs the
    // result or passes run_in_background: false, unless the definition says
    // background: true (FGBG-3).
    if input.definition_background {
        return Placement::Run(Mode::Background, "FGBG-3");
    }
    let wants_foreground = input.needs_result || input.run_in_background == Some(false);
    if wants_foreground {
        Placement::Run(Mode::Foreground, "FGBG-1")
    } else {
        Placement::Run(Mode::Background, "FGBG-1")
    }
}

/// FGBG-7 / Q-14: a resumed run is in the background unless background tasks are disabled.
pub fn resume_mode(config: &SessionConfig) -> (Mode, RuleId) {
    if config.background_disabled {
        (Mode::Foreground, "Q-14")
    } else {
        (Mode::Background, "FGBG-7")
    }
}

/// FGBG-4 / Q-14: does the agent that resumed a run with SendMessage wait for it? A
/// foreground resume is a foreground run, which blocks the conversation that started it —
/// when the result comes back to that conversation. A run resumed by an agent that reports
/// to it keeps its own recipient (NOTIFY-9), so the resumer does not wait for it.
pub fn resumer_waits(mode: Mode, result_to_resumer: bool) -> (bool, RuleId) {
    match (mode, result_to_resumer) {
        (Mode::Foreground, true) => (true, "FGBG-4"),
        (Mode::Foreground, false) => (false, "NOTIFY-9"),
        (Mode::Background, _) => (false, "FGBG-7"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::env;
    use crate::{PermissionMode, SessionKind, Version};

    fn config(kind: SessionKind, pairs: &[(&str, &str)]) -> SessionConfig {
        let env = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        SessionConfig::resolve(
            Version::NEWEST,
            kind,
            &env,
            &crate::cap::Settings::default(),
            false,
            PermissionMode::Default,
        )
        .0
    }

    fn check(input: PlacementInput, config: &SessionConfig, expected: Placement) {
        assert_eq!(place(input, config), expected, "{input:?}");
    }

    #[test]
    fn first_match_order() {
        let fork_on = config(SessionKind::Interactive, &[]);
        let fork_off = config(SessionKind::Headless, &[]);
        let disabled = config(
            SessionKind::Interactive,
            &[(env::DISABLE_BACKGROUND_TASKS, "1")],
        );
        let wants = PlacementInput {
            needs_result: true,
            ..Default::default()
        };
        let def_bg = PlacementInput {
            definition_background: true,
            needs_result: true,
            ..Default::default()
        };
        check(wants, &fork_on, Placement::Run(Mode::Background, "FORK-3"));
        check(wants, &fork_off, Placement::Run(Mode::Foreground, "FGBG-1"));
        check(
            PlacementInput::default(),
            &fork_off,
            Placement::Run(Mode::Background, "FGBG-1"),
        );
        check(
            def_bg,
            &fork_off,
            Placement::Run(Mode::Background, "FGBG-3"),
        );
        // the env var wins over background: true.
        check(
            def_bg,
            &disabled,
            Placement::Run(Mode::Foreground, "FGBG-1"),
        );
    }

    #[test]
    fn teammate_cases() {
        let fork_off = config(SessionKind::Headless, &[]);
        let fork_on = config(SessionKind::Interactive, &[]);
        let by_teammate = PlacementInput {
            by_teammate: true,
            ..Default::default()
        };
        check(
            by_teammate,
            &fork_on,
            Placement::Run(Mode::Foreground, "FGBG-1"),
        );
        let with_def_bg = PlacementInput {
            definition_background: true,
            ..by_teammate
        };
        assert!(matches!(
            place(with_def_bg, &fork_on),
            Placement::Reject(RejectReason::TeammateBackground, ..)
        ));
        let with_param = PlacementInput {
            run_in_background: Some(true),
            ..by_teammate
        };
        assert!(matches!(
            place(with_param, &fork_off),
            Placement::Reject(..)
        ));
        check(
            with_param,
            &fork_on,
            Placement::Run(Mode::Foreground, "FGBG-1"),
        );
    }

    #[test]
    fn a_foreground_resume_blocks_the_resumer_it_reports_to() {
        assert_eq!(resumer_waits(Mode::Foreground, true), (true, "FGBG-4"));
        assert_eq!(resumer_waits(Mode::Foreground, false), (false, "NOTIFY-9"));
        assert_eq!(resumer_waits(Mode::Background, true), (false, "FGBG-7"));
    }
}
