//! Decisions about keys, commands and input around the panel (PANEL-7, the transcript view,
//! `/agents`, the start-up header).

use super::*;

/// What `x` does on a panel row (PANEL-7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum XAction {
    /// Stops the selected running agent (a user stop, RESUME-10).
    Stop,
    /// Clears the selected finished row (PANEL-3).
    Dismiss,
    /// Types an `x` into the prompt: on the main-session row, or on the row whose
    /// transcript is open.
    TypeIntoPrompt,
}

/// PANEL-1 / PANEL-6: does a session of this kind have the subagent panel and `/tasks`?
///
/// Only an interactive one. The panel sits "below the prompt input" (PANEL-1) and draws
/// its tree "in the terminal" (PANEL-6); its keys (PANEL-7) and transcript views
/// (PANEL-9/10) are a person's at a terminal. A `-p` run has no prompt input and the Agent
/// SDK reports runs as task events (RESUME-8 names them apart from the task list), so
/// neither keeps a panel, and neither pays for one.
pub fn session_has_panel(kind: SessionKind) -> (bool, RuleId) {
    (kind.is_interactive(), "PANEL-1")
}

/// PANEL-3 / Q-21, for an engine that keeps no [`Panel`] in a session that has one (a load
/// run's, whose rows nobody reads): is the row of a run that failed or was stopped at
/// `finished_at` still in the panel at `at`? Only a background run or a fork has a row
/// (`has_rows`, Q-21), and it is kept for the half-open window `finished_at ≤ at <
/// finished_at + 30 s`. Without a panel model `x` clears nothing, so it cannot have been
/// dismissed. Where a [`Panel`] is kept, ask [`Panel::has_row`] instead.
pub fn failed_row_kept(has_rows: bool, finished_at: Micros, at: Micros) -> (bool, RuleId) {
    (
        has_rows && at < finished_at.saturating_add(RETENTION),
        "PANEL-3",
    )
}

/// PANEL-7: what `x` does on `row`, given whether its agent is running and whether its
/// transcript was opened with `Enter`.
pub fn x_key(row: RowId, running: bool, transcript_open: bool) -> (XAction, RuleId) {
    let action = if row == RowId::Main || transcript_open {
        XAction::TypeIntoPrompt
    } else if running {
        XAction::Stop
    } else {
        XAction::Dismiss
    };
    (action, "PANEL-7")
}

impl XAction {
    /// Why a scenario's `dismiss` (the person's `x`, meant to clear a finished row, PANEL-3)
    /// does not dismiss when `x` does this instead, or `None` when it dismisses: on a running
    /// row `x` stops the agent (PANEL-3's wording, `stop` being the action for it); on the
    /// main-session row it types into the prompt (PANEL-7).
    pub fn dismiss_ignored(self) -> Option<(&'static str, RuleId)> {
        match self {
            XAction::Stop => Some((
                "is running; `x` on a running row stops it (use `stop`)",
                "PANEL-3",
            )),
            XAction::TypeIntoPrompt => Some((
                "is the main-session row; `x` there types into the prompt instead",
                "PANEL-7",
            )),
            XAction::Dismiss => None,
        }
    }
}

/// What is typed in an open transcript view (PANEL-9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ViewInput<'a> {
    /// A follow-up message.
    Message,
    /// A skill.
    Skill,
    /// A built-in command, by name without the slash (e.g. `"compact"`).
    Command(&'a str),
}

/// Where input typed in a transcript view goes (PANEL-9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ViewRoute {
    /// To the viewed agent.
    ViewedAgent,
    /// To the main conversation.
    Main,
    /// To the main conversation once the person confirms.
    MainAfterConfirmation,
    /// Not run; this notice explains why.
    Refused(&'static str),
}

/// PANEL-9: follow-ups and skills go to the viewed agent; built-in commands go to main;
/// `/compact`, `/clear` and `/rewind` ask for confirmation first; `/model` and `/fast` do not
/// run and show a notice — from v2.1.199 (DE); before, they silently ran on main.
pub fn transcript_input(input: ViewInput<'_>, gates: &Gates) -> (ViewRoute, RuleId) {
    let route = match input {
        ViewInput::Message | ViewInput::Skill => ViewRoute::ViewedAgent,
        ViewInput::Command("compact" | "clear" | "rewind") => ViewRoute::MainAfterConfirmation,
        ViewInput::Command("model" | "fast") if gates.transcript_settings_notice => {
            ViewRoute::Refused(messages::TRANSCRIPT_MAIN_SETTINGS_NOTICE)
        }
        ViewInput::Command(_) => ViewRoute::Main,
    };
    (route, "PANEL-9")
}

/// What the viewed agent is doing when a message is sent with `Ctrl+Enter` (PANEL-10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Waiting {
    /// Waiting on a shell command or subagent that can be backgrounded.
    Backgroundable,
    /// Waiting on work that cannot be backgrounded.
    NotBackgroundable,
    /// Writing a response.
    WritingResponse,
}

/// When the viewed agent reads a "read now" message (PANEL-10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReadNow {
    /// The awaited work moves to the background and keeps running; the agent reads now.
    MovedToBackground,
    /// The agent reads the message once the current work finishes.
    AfterCurrentWork,
}

/// PANEL-10: a message sent with `Ctrl+Enter` / `Ctrl+X Ctrl+S` from a transcript view
/// (v2.1.286+; before, the keys do not exist and the message waits like any other).
pub fn read_now(waiting: Waiting, gates: &Gates) -> (ReadNow, RuleId) {
    let read = if gates.read_now && waiting == Waiting::Backgroundable {
        ReadNow::MovedToBackground
    } else {
        ReadNow::AfterCurrentWork
    };
    (read, "PANEL-10")
}

/// What `/agents` does (PANEL-11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AgentsCommand {
    /// Up to v2.1.197: a wizard with a Running tab and a Library tab.
    Wizard,
    /// From v2.1.198: prints this reminder.
    Reminder(&'static str),
}

/// PANEL-11: `/agents` by version.
pub fn agents_command(gates: &Gates) -> (AgentsCommand, RuleId) {
    let command = if gates.agents_wizard {
        AgentsCommand::Wizard
    } else {
        AgentsCommand::Reminder(messages::AGENTS_REMINDER)
    };
    (command, "PANEL-11")
}

/// PANEL-12: with `--agent <name>` the startup header shows `@<name>`.
pub fn startup_header(agent: Option<&str>) -> Option<String> {
    agent.map(|name| format!("@{name}"))
}
