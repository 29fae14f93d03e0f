//! PANEL — a pure model of the subagent panel below the prompt, the footer hint and the
//! `/tasks` list (PANEL-1…12, RESUME-8).
//!
//! [`Panel`] records what happened to each run (`on_start`, `on_finish`, `on_resume`,
//! `on_dismiss`, …) with the time it happened; [`Panel::view`] answers what a person sees at
//! a given time under a version's [`Gates`]. Time is plain microseconds ([`Micros`]): this
//! crate knows nothing of the engine's clock. Because rows and list entries expire 30 s
//! after a finish, [`Panel::next_change`] tells an engine when to look again, and
//! [`Panel::changes`] turns two views into the events to trace (`row_added`,
//! `row_removed` with a reason, `row_status_changed`, `footer_hint_shown`,
//! `footer_hint_cleared`).
//!
//! It is not for deciding *whether* a run starts, finishes or stops — the engine does that —
//! nor for the keys' effects on runs beyond naming them ([`x_key`]).
//!
//! # Decisions
//! - **Q-21**: only background subagents and forks get rows and `/tasks` entries; a
//!   foreground run gets none (unless it is moved to the background, [`Panel::on_background`]).
//!   The main session gets a row while any fork row is in the panel (PANEL-1).
//! - **Q-22**: `(+N)` counts the descendants whose rows are in the panel right now, failed
//!   or stopped rows in their 30 s included; the main row counts every row under it.
//! - **Q-23**: between v2.1.208 and v2.1.231 a completed subagent stays listed in `/tasks`
//!   for 30 s, as from v2.1.232.
//! - **Windows are half-open**: a row kept "30 seconds" after a finish at `t` is shown for
//!   `t ≤ at < t + 30 s` and gone at `t + 30 s`; likewise the footer hint and `/tasks`.
//! - **The footer hint** follows every successful finish of a run that had a row, forks
//!   included ("the same as any other background subagent"); its 30 s restart with each.
//! - **A nested row whose parent has no row** (say, a background child of a foreground
//!   subagent) hangs under its nearest ancestor that has one, or at the top.
//! - **`/tasks` order**: running work first in start order, then done work in finish order.
//!   Before v2.1.205 a resumed run keeps showing its old status (RESUME-8) but is listed
//!   with the running work, which it is.
//! - **PANEL-8** is about `/tasks`: the model and effort appear on [`TaskLine`]s, not on panel
//!   [`Row`]s.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt::Write as _;
use std::rc::Rc;

use crate::messages;
use crate::{Ending, Gates, Outcome, RuleId, SessionKind};

mod diff;
mod keys;
mod render;
#[cfg(test)]
mod tests;
mod view;

pub use diff::{ChangeKind, PanelChange, RemovalReason};
pub use keys::*;
pub use render::{render_panel, render_tasks, MAX_DRAWN_LEVEL};

/// Virtual time in microseconds.
pub type Micros = u64;

/// PANEL-2/3/4/5: how long a finished row, the footer hint and a done `/tasks` entry stay.
pub const RETENTION: Micros = 30_000_000;

/// How a run without a name is labelled: its id, `a7` (the trace's spelling of agent ids).
pub fn id_label(id: u32) -> String {
    format!("a{id}")
}

/// The main session's label.
pub const MAIN_LABEL: &str = "main";

/// The status word the row of a run that ended so shows.
fn finished_status(ending: Ending) -> Status {
    match ending {
        Ending::Completed => Status::Done,
        Ending::Failed => Status::Failed,
        Ending::Stopped => Status::Stopped,
    }
}

crate::vocabulary! {
    /// The status word a row or `/tasks` entry shows.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Status {
        /// Running.
        Running => "running",
        /// Finished successfully.
        Done => "done",
        /// Failed.
        Failed => "failed",
        /// Stopped.
        Stopped => "stopped",
    }
}

/// Which row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RowId {
    /// The main session's row (PANEL-1, present while fork rows are).
    Main,
    /// A subagent's row, by the engine's agent id.
    Agent(u32),
}

/// A new run, as [`Panel::on_start`] records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Started<'a> {
    /// The engine's agent id.
    pub id: u32,
    /// The launcher's id; `None` for the main conversation.
    pub parent: Option<u32>,
    /// The agent's name; `None` for an unnamed run, which is shown by its id
    /// ([`id_label`]: `a7`). Shared with the engine's record of the run, not copied: a
    /// million named runs would otherwise hold their names twice.
    pub name: Option<Rc<str>>,
    /// The run is a fork (PANEL-4).
    pub fork: bool,
    /// The run is in the background (PANEL-1, Q-21).
    pub background: bool,
    /// The model the run uses (PANEL-8).
    pub model: &'a str,
    /// The effort level, if one is set for the subagent (PANEL-8).
    pub effort: Option<&'a str>,
}

/// What the panel keeps of one run, in 32 bytes (a test pins it), so that two share a
/// cache line and a million take 32 MB: what is rarely set or only read by
/// [`Panel::view`] (the run's name, the model and effort level) is kept beside the
/// entries, and the optional parts are split into a value and a flag (see
/// [`Entry::parent`], [`Entry::finished`]).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// When the latest finish was, if `finished_kind` is set (else 0).
    finished_at: Micros,
    id: u32,
    /// The launcher's id, if `has_parent` (else 0).
    parent_id: u32,
    /// The model and effort level, as an index into [`Panel::styles`].
    style: u32,
    has_parent: bool,
    /// The run has a name, kept in [`Panel::run_names`] (else the row shows [`id_label`];
    /// nothing is formatted or allocated per start for an unnamed run).
    named: bool,
    fork: bool,
    background: bool,
    running: bool,
    /// The kind of the latest finish.
    finished_kind: Option<Ending>,
    /// RESUME-8: how the previous run ended, while a resumed run is going.
    resumed_from: Option<Ending>,
    /// PANEL-3: the latest finished row was cleared with `x`.
    dismissed: bool,
    /// The row's status as [`Panel::update`] last showed it, and whether it was a fork's.
    shown: Option<(Status, bool)>,
    /// Touched since the last [`Panel::update`] (listed in [`Panel::dirty`]).
    dirty: bool,
}

impl Entry {
    /// The launcher's id; `None` for the main conversation.
    fn parent(&self) -> Option<u32> {
        self.has_parent.then_some(self.parent_id)
    }

    /// The latest finish: its kind and time.
    fn finished(&self) -> Option<(Ending, Micros)> {
        self.finished_kind.map(|kind| (kind, self.finished_at))
    }

    /// only background runs and forks get rows.
    fn has_rows(&self) -> bool {
        self.background || self.fork
    }

    /// RESUME-8: the status a running entry shows.
    fn running_status(&self, gates: &Gates) -> Status {
        match self.resumed_from {
            Some(kind) if !gates.resume_shows_running => finished_status(kind),
            _ => Status::Running,
        }
    }

    /// PANEL-1…4: the status of this entry's row at `at`, or `None` when it has no row.
    fn row_status(&self, at: Micros, gates: &Gates) -> Option<Status> {
        if !self.has_rows() {
            return None;
        }
        if self.running {
            return Some(self.running_status(gates));
        }
        let (kind, finished_at) = self.finished()?;
        if self.dismissed || at >= finished_at.saturating_add(RETENTION) {
            return None;
        }
        if kind == Ending::Completed && gates.success_row_removed_at_once {
            // PANEL-2 / PANEL-4: a successful row leaves at once from v2.1.232.
            return None;
        }
        Some(finished_status(kind))
    }

    /// The rule behind this entry's row appearing: a resume (RESUME-8), a fork (PANEL-4)
    /// or a background run (PANEL-1).
    fn added_rule(&self) -> RuleId {
        if self.finished_kind.is_some() {
            "RESUME-8"
        } else if self.fork {
            "PANEL-4"
        } else {
            "PANEL-1"
        }
    }

    /// Why this entry's row is gone at `at`.
    fn removal(&self, at: Micros) -> (RemovalReason, RuleId) {
        let Some((kind, finished_at)) = self.finished() else {
            return (RemovalReason::Expired, "PANEL-3");
        };
        let rule_for = |success_rule: RuleId| {
            if self.fork {
                "PANEL-4"
            } else if kind == Ending::Completed {
                success_rule
            } else {
                "PANEL-3"
            }
        };
        if self.dismissed {
            (RemovalReason::Dismissed, "PANEL-3")
        } else if kind == Ending::Completed && at < finished_at.saturating_add(RETENTION) {
            (RemovalReason::Succeeded, rule_for("PANEL-2"))
        } else {
            (RemovalReason::Expired, rule_for("PANEL-2"))
        }
    }

    /// Does the view change at `end` because this run's 30 s window (rows, PANEL-2/3/4;
    /// `/tasks`, PANEL-5) ends then, given the view at `at` (before `end`)?
    fn window_ends(&self, end: Micros, at: Micros, gates: &Gates) -> bool {
        match self.finished() {
            Some((kind, finished_at))
                if !self.running
                    && self.has_rows()
                    && finished_at.saturating_add(RETENTION) == end =>
            {
                self.row_status(at, gates).is_some()
                    || (kind == Ending::Completed && gates.tasks_lists_done)
            }
            _ => false,
        }
    }
}

/// One row of the panel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Which row.
    pub id: RowId,
    /// The label shown.
    pub label: String,
    /// Nesting depth of the agent: main is 0, a subagent it launched is 1.
    pub depth: u32,
    /// Indentation level in the tree: how many rows it hangs under.
    pub level: u32,
    /// The status word (RESUME-8 decides it for a resumed run).
    pub status: Status,
    /// PANEL-6 / Q-22: descendants whose rows are in the panel (shown as `(+N)` when > 0).
    pub descendants: u32,
    /// The row is a fork's (PANEL-4).
    pub fork: bool,
}

/// One entry of the `/tasks` list (PANEL-5, PANEL-8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskLine {
    /// The engine's agent id.
    pub id: u32,
    /// The label shown.
    pub label: String,
    /// The status word (RESUME-8 decides it for a resumed run).
    pub status: Status,
    /// The run is still going (it sorts with the running work).
    pub running: bool,
    /// PANEL-8: the model, from v2.1.242.
    pub model: Option<String>,
    /// PANEL-8: the effort level when one is set, from v2.1.242.
    pub effort: Option<String>,
}

/// What a person sees at one instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PanelView {
    /// When.
    pub at: Micros,
    /// The panel's rows, in tree order (a row, then the rows under it).
    pub rows: Vec<Row>,
    /// PANEL-2: the footer hint, when shown.
    pub footer_hint: Option<&'static str>,
    /// PANEL-5: the `/tasks` list, running work first.
    pub tasks: Vec<TaskLine>,
}

/// The panel's memory of every run: enough to answer [`Panel::view`] at any later time.
///
/// Call the `on_*` methods in time order; ask for views at or after the latest of them.
///
/// An engine that traces the panel calls [`Panel::update`] after each change and at each
/// time it returns: it keeps what it last showed and costs O(log n) per change, where
/// building and diffing two [`Panel::view`]s costs O(n) or more. Both give the same events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Panel {
    /// Every run ever started, in start order.
    entries: Vec<Entry>,
    /// Agent id → index in `entries` (looked up, never iterated).
    index: IdIndex,
    /// Model and effort names, interned (a style stores an index).
    names: Vec<String>,
    /// Name → index in `names`.
    name_index: BTreeMap<String, u32>,
    /// The `(model, effort)` pairs of runs, as indexes into `names`, interned (an entry
    /// stores an index).
    styles: Vec<(u32, Option<u32>)>,
    /// Pair → index in `styles`.
    style_index: BTreeMap<(u32, Option<u32>), u32>,
    /// The style of the latest start (most starts repeat it: no lookup for them).
    last_style: Option<u32>,
    /// The names of named runs, by agent id (see [`Entry::named`]).
    run_names: HashMap<u32, Rc<str>>,
    /// PANEL-2: the latest successful finish of a run that had a row.
    last_success: Option<Micros>,
    /// What [`Panel::update`] showed last: fork rows shown (PANEL-1's main row is shown
    /// while there are any) …
    shown_forks: u32,
    /// … and whether the footer hint was shown.
    shown_hint: bool,
    /// Entries touched since the last update, by index.
    dirty: Vec<u32>,
    /// `(end of a 30 s window, entry index, what the window knows)` of finished runs with a
    /// row or `/tasks` entry that may end then; stale ones are skipped when met.
    windows: Windows,
    /// Entries changed again after their first finish (restarted, resumed, moved to the
    /// background, dismissed or finished again), a bit per entry index: their windows
    /// read the entry (see [`Window`]).
    revisited: Vec<u64>,
    /// Scratch lists of one [`Panel::update`], kept so an update allocates nothing.
    scratch: Scratch,
}

/// Agent id → index in [`Panel::entries`]. Engines number agents 1, 2, 3, …, so ids below
/// a bound proportional to the number of entries go in a plain vector (no hashing, no
/// allocation per start); any other id goes in a map.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct IdIndex {
    /// `dense[id]` is the index + 1, or 0 for none.
    dense: Vec<u32>,
    sparse: HashMap<u32, u32>,
}

impl IdIndex {
    fn get(&self, id: u32) -> Option<u32> {
        match self.dense.get(id as usize) {
            Some(&plus_one) if plus_one > 0 => Some(plus_one - 1),
            // Not in the vector (0), or beyond it: an id kept in the map before the vector
            // grew past it is still found.
            _ => self.sparse.get(&id).copied(),
        }
    }

    /// Records `id` at `index`, a new entry (`index` is the number of entries before it).
    fn insert(&mut self, id: u32, index: u32) {
        let slot = id as usize;
        if slot < self.dense.len() {
            self.dense[slot] = index + 1;
        } else if slot < 2 * (index as usize) + 1024 {
            self.dense.resize(slot + 1, 0);
            self.dense[slot] = index + 1;
        } else {
            self.sparse.insert(id, index);
        }
    }
}

/// A 30 s window: when it ends, the entry's index, and the kind of the entry's first
/// finish when that finish opened it (else `None`).
///
/// Rules of this memo: an entry that is not [`Panel::revisited`] is in the state its first
/// finish left it in (not running, that kind and time, not dismissed, with rows), so
/// whether its window ends a row or a `/tasks` line, and whether its row is shown, follow
/// from the kind and the gates alone, and the window does not read the entry (at a
/// million runs, each read was a cache miss: a fifth of the fan-out's time). Any later
/// change to the entry marks it revisited first. Debug builds check the memo against the
/// entry.
type Window = (Micros, u32, Option<Ending>);

/// The 30 s windows in the order they end. Finishes come in time order, so their windows
/// are appended in order to `ordered` (O(1) each); a window that opens late (a finished
/// run moved to the background) goes in the `late` set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Windows {
    ordered: VecDeque<Window>,
    late: BTreeSet<Window>,
}

impl Windows {
    fn insert(&mut self, window: Window) {
        match self.ordered.back() {
            Some(&last) if window < last => {
                self.late.insert(window);
            }
            _ => self.ordered.push_back(window),
        }
    }

    fn first(&self) -> Option<Window> {
        match (self.ordered.front(), self.late.first()) {
            (Some(&a), Some(&b)) => Some(a.min(b)),
            (Some(&a), None) => Some(a),
            (None, Some(&b)) => Some(b),
            (None, None) => None,
        }
    }

    fn pop_first(&mut self) {
        let from_late = match (self.ordered.front(), self.late.first()) {
            (Some(&a), Some(&b)) => b < a,
            (None, Some(_)) => true,
            _ => false,
        };
        if from_late {
            self.late.pop_first();
        } else {
            self.ordered.pop_front();
        }
    }
}

/// The lists one [`Panel::update`] works with, empty between calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Scratch {
    removed: Vec<u32>,
    changed: Vec<(u32, Status, Status)>,
    added: Vec<u32>,
    now: Vec<Option<Status>>,
}

impl Panel {
    /// An empty panel.
    pub fn new() -> Panel {
        Panel::default()
    }

    fn position(&self, id: u32) -> Option<usize> {
        self.index.get(id).map(|index| index as usize)
    }

    fn entry(&self, id: u32) -> Option<&Entry> {
        self.position(id).map(|index| &self.entries[index])
    }

    fn entry_mut(&mut self, id: u32) -> Option<&mut Entry> {
        let index = self.position(id)?;
        self.touch(index);
        Some(&mut self.entries[index])
    }

    /// Marks an entry for the next [`Panel::update`].
    fn touch(&mut self, index: usize) {
        let entry = &mut self.entries[index];
        if !entry.dirty {
            entry.dirty = true;
            self.dirty.push(index as u32);
        }
    }

    /// Marks the entry at `index` as changed after its first finish (see [`Window`]).
    fn revisit(&mut self, index: usize) {
        let (word, bit) = (index / 64, index % 64);
        if word >= self.revisited.len() {
            self.revisited.resize(word + 1, 0);
        }
        self.revisited[word] |= 1 << bit;
    }

    /// Was the entry at `index` changed after its first finish?
    fn revisited(&self, index: usize) -> bool {
        self.revisited
            .get(index / 64)
            .is_some_and(|word| word & (1 << (index % 64)) != 0)
    }

    /// What the window `(end, index, known)` knows without reading the entry, if anything:
    /// whether the entry's row is shown (until `end`), and whether the window's end changes
    /// the view (a row or a `/tasks` line leaves). See [`Window`].
    fn known(&self, index: u32, known: Option<Ending>, gates: &Gates) -> Option<(bool, bool)> {
        let kind = known?;
        if self.revisited(index as usize) {
            return None;
        }
        let success = kind == Ending::Completed;
        let row = !(success && gates.success_row_removed_at_once);
        Some((row, row || (success && gates.tasks_lists_done)))
    }

    /// The index in [`Panel::styles`] of a run's model and effort level.
    fn style(&mut self, model: &str, effort: Option<&str>) -> u32 {
        if let Some(last) = self.last_style {
            let (last_model, last_effort) = self.styles[last as usize];
            if self.names[last_model as usize] == model
                && last_effort.map(|effort| self.names[effort as usize].as_str()) == effort
            {
                return last;
            }
        }
        let model = self.intern(model);
        let effort = effort.map(|effort| self.intern(effort));
        let style = match self.style_index.get(&(model, effort)) {
            Some(&style) => style,
            None => {
                let style = self.styles.len() as u32;
                self.styles.push((model, effort));
                self.style_index.insert((model, effort), style);
                style
            }
        };
        self.last_style = Some(style);
        style
    }

    /// The label an entry's row shows: the run's name, or its id.
    fn label(&self, entry: &Entry) -> String {
        let name = if entry.named {
            self.run_names.get(&entry.id)
        } else {
            None
        };
        match name {
            Some(name) => name.to_string(),
            None => id_label(entry.id),
        }
    }

    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&index) = self.name_index.get(name) {
            return index;
        }
        let index = self.names.len() as u32;
        self.names.push(name.to_string());
        self.name_index.insert(name.to_string(), index);
        index
    }

    /// Reads the entry at `index` (as [`Panel::on_start`] returned it) — the fields
    /// [`Panel::on_finish_at`] and [`Panel::update`] use — and returns them mixed
    /// together: a hint for an engine that ends many runs in random order, which can read
    /// ahead for several at once so that their cache misses overlap. Changes nothing.
    pub fn preload_entry(&self, index: u32) -> u64 {
        let Some(entry) = self.entries.get(index as usize) else {
            return 0;
        };
        u64::from(entry.id)
            ^ u64::from(entry.running)
            ^ u64::from(entry.background)
            ^ u64::from(entry.fork)
            ^ u64::from(entry.dismissed)
            ^ u64::from(entry.dirty)
            ^ u64::from(entry.finished_kind.is_some())
            ^ u64::from(entry.resumed_from.is_some())
            ^ u64::from(entry.shown.is_some())
            ^ u64::from(entry.style)
    }

    /// A run starts. Foreground runs are recorded too, so their background descendants can
    /// be placed in the tree, but get no row. An id seen before is started afresh
    /// (under the same launcher: an agent id is never another agent's). Returns where the
    /// run's entry is kept, for [`Panel::on_finish_at`].
    pub fn on_start(&mut self, run: Started<'_>, at: Micros) -> u32 {
        let _ = at;
        let style = self.style(run.model, run.effort);
        let mut entry = Entry {
            finished_at: 0,
            id: run.id,
            parent_id: run.parent.unwrap_or(0),
            style,
            has_parent: run.parent.is_some(),
            named: run.name.is_some(),
            fork: run.fork,
            background: run.background,
            running: true,
            finished_kind: None,
            resumed_from: None,
            dismissed: false,
            shown: None,
            dirty: false,
        };
        match run.name {
            Some(name) => {
                self.run_names.insert(run.id, name);
            }
            None if !self.run_names.is_empty() => {
                self.run_names.remove(&run.id);
            }
            None => {}
        }
        match self.position(run.id) {
            Some(index) => {
                self.revisit(index);
                let existing = &mut self.entries[index];
                entry.shown = existing.shown;
                entry.dirty = existing.dirty;
                *existing = entry;
                self.touch(index);
                index as u32
            }
            None => {
                let index = self.entries.len();
                self.index.insert(run.id, index as u32);
                self.entries.push(entry);
                self.touch(index);
                index as u32
            }
        }
    }

    /// A foreground run moves to the background (Ctrl+B): from now on it has a row.
    pub fn on_background(&mut self, id: u32, at: Micros) {
        let _ = at;
        let Some(index) = self.position(id) else {
            return;
        };
        self.touch(index);
        self.revisit(index);
        let entry = &mut self.entries[index];
        entry.background = true;
        if let Some((_, finished_at)) = entry.finished() {
            self.windows
                .insert((finished_at.saturating_add(RETENTION), index as u32, None));
        }
    }

    /// A run ends. Unknown ids are ignored.
    pub fn on_finish(&mut self, id: u32, outcome: Outcome, at: Micros) {
        if let Some(index) = self.position(id) {
            self.finish_entry(index, outcome.ending(), at);
        }
    }

    /// [`Panel::on_finish`] for the run whose entry [`Panel::on_start`] said is at
    /// `index`: its id is not looked up (at a million runs ending in random order, the
    /// id index was a cache miss of its own). An `index` that does not hold `id` is
    /// looked up by `id` instead.
    pub fn on_finish_at(&mut self, index: u32, id: u32, outcome: Outcome, at: Micros) {
        match self.entries.get(index as usize) {
            Some(entry) if entry.id == id => {
                debug_assert_eq!(self.position(id), Some(index as usize));
                self.finish_entry(index as usize, outcome.ending(), at);
            }
            _ => self.on_finish(id, outcome, at),
        }
    }

    fn finish_entry(&mut self, index: usize, kind: Ending, at: Micros) {
        self.touch(index);
        let entry = &mut self.entries[index];
        let first_finish = entry.finished_kind.is_none();
        entry.running = false;
        entry.finished_kind = Some(kind);
        entry.finished_at = at;
        entry.resumed_from = None;
        entry.dismissed = false;
        if entry.has_rows() {
            if kind == Ending::Completed {
                self.last_success = Some(at);
            }
            self.windows.insert((
                at.saturating_add(RETENTION),
                index as u32,
                first_finish.then_some(kind),
            ));
        }
        if !first_finish {
            self.revisit(index);
        }
    }

    /// A finished agent starts a new run under its id (RESUME-8). `background` is the new
    /// run's mode (resumes usually run in the background, Q-14).
    pub fn on_resume(&mut self, id: u32, background: bool, at: Micros) {
        let _ = at;
        if let Some(index) = self.position(id) {
            self.revisit(index);
        }
        let Some(entry) = self.entry_mut(id) else {
            return;
        };
        entry.resumed_from = entry.finished_kind;
        entry.running = true;
        entry.background = background;
        entry.dismissed = false;
    }

    /// PANEL-3 / PANEL-7: `x` on a finished row clears it before its 30 s are up.
    ///
    /// Returns whether a row was cleared: `x` on a running row stops the agent instead
    /// (the engine's business), and a row that is not in the panel cannot be cleared.
    pub fn on_dismiss(&mut self, id: u32, at: Micros, gates: &Gates) -> (bool, RuleId) {
        let Some(index) = self.position(id) else {
            return (false, "PANEL-7");
        };
        let entry = &self.entries[index];
        if entry.running {
            return (false, "PANEL-7");
        }
        if entry.row_status(at, gates).is_none() {
            return (false, "PANEL-3");
        }
        self.touch(index);
        self.revisit(index);
        self.entries[index].dismissed = true;
        (true, "PANEL-3")
    }

    /// Does the agent have a row in the panel at `at` (RESUME-11 asks this)?
    pub fn has_row(&self, id: u32, at: Micros, gates: &Gates) -> bool {
        self.entry(id)
            .is_some_and(|entry| entry.row_status(at, gates).is_some())
    }

    /// The ids of `id`'s ancestors, nearest first (main excluded).
    fn ancestors(&self, id: u32) -> Vec<u32> {
        let mut chain = Vec::new();
        // Past a few links, a set answers "seen before?" (a cycle guard) in O(1).
        let mut seen: Option<std::collections::HashSet<u32>> = None;
        let mut current = self.entry(id).and_then(Entry::parent);
        while let Some(parent) = current {
            let repeated = match &seen {
                Some(seen) => seen.contains(&parent),
                None => chain.contains(&parent),
            };
            if repeated || chain.len() > self.entries.len() {
                break;
            }
            chain.push(parent);
            if let Some(seen) = seen.as_mut() {
                seen.insert(parent);
            } else if chain.len() > 16 {
                seen = Some(chain.iter().copied().collect());
            }
            current = self.entry(parent).and_then(Entry::parent);
        }
        chain
    }
}
