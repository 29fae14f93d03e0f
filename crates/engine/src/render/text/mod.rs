//! The narration: plain-English lines for people watching a run.
//!
//! Each line reads `virtual time  who  what happened: why (RULE)`, the reason in words
//! coming from [`subsim_rules::why`], e.g.
//!
//! ```text
//! 00:00:00.000  main            spawn researcher-21 rejected with "Concurrent subagent limit reached" (20/20 running): the cap of 20 running subagents is full, and a rejected call is not queued (CAP-1)
//! 00:00:14.500  planner         permission prompt #2: asks to use Bash — shown in the main session: a background subagent has no terminal of its own, so its prompt goes to the main session, naming it (PERM-4)
//! 00:00:17.700  planner         Bash `git push origin main` denied: the deny rule `Bash(git push *)` covers it, and deny rules apply to main and every subagent (PERM-14)
//! ```
//!
//! [`TextWriter`] shows every event with [`Detail::Full`]; by default ([`Detail::Brief`]) it
//! hides bookkeeping (panel rows, footer hints, report headers, the Agent call before its
//! start or rejection) and groups same-instant runs of identical lines
//! (`researcher-1 … researcher-19 (19)  started in the background …`). It can follow one
//! agent, colour its output, show chapter headings and close with a summary.
//!
//! The narration is for reading, not parsing: its wording may change between releases.
//! Programs should read the JSON Lines trace ([`super::jsonl`]) instead.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::rc::Rc;

use subsim_rules::notify::Notice;
use subsim_rules::panel::{ChangeKind, Status as RowStatus};
use subsim_rules::prompt::RoutedTo;
use subsim_rules::RejectReason;

use crate::event::{
    id_string, AgentRef, Event, EventKind, Field, StopSource, ToolRefusal, WaitingFor,
};
use crate::sink::Sink;
use crate::spec::Answer;
use crate::time::human_duration;

use super::Buffered;

mod layout;
mod narrate;
#[cfg(test)]
mod tests;

pub use layout::{Detail, NarrationOptions, TextWriter};
pub use narrate::{Narrator, Told, Tone};
