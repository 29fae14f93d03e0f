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
use crate::{Gates, RuleId, SessionKind};

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

/// How a run ended, as the panel sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FinishKind {
    /// Finished its work (partial output counts: the run did not fail).
    Success,
    /// Ended in an error.
    Failure,
    /// Stopped (by the person or by TaskStop).
    Stopped,
}

impl FinishKind {
    fn status(self) -> Status {
        match self {
            FinishKind::Success => Status::Done,
            FinishKind::Failure => Status::Failed,
            FinishKind::Stopped => Status::Stopped,
        }
    }
}

/// The status word a row or `/tasks` entry shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Running.
    Running,
    /// Finished successfully.
    Done,
    /// Failed.
    Failed,
    /// Stopped.
    Stopped,
}

impl Status {
    /// Every status, in declaration order.
    pub const ALL: [Status; 4] = [
        Status::Running,
        Status::Done,
        Status::Failed,
        Status::Stopped,
    ];

    /// The word shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Stopped => "stopped",
        }
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
    finished_kind: Option<FinishKind>,
    /// RESUME-8: how the previous run ended, while a resumed run is going.
    resumed_from: Option<FinishKind>,
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
    fn finished(&self) -> Option<(FinishKind, Micros)> {
        self.finished_kind.map(|kind| (kind, self.finished_at))
    }

    /// Q-21: only background runs and forks get rows.
    fn has_rows(&self) -> bool {
        self.background || self.fork
    }

    /// RESUME-8: the status a running entry shows.
    fn running_status(&self, gates: &Gates) -> Status {
        match self.resumed_from {
            Some(kind) if !gates.resume_shows_running => kind.status(),
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
        if kind == FinishKind::Success && gates.success_row_removed_at_once {
            // PANEL-2 / PANEL-4: a successful row leaves at once from v2.1.232.
            return None;
        }
        Some(kind.status())
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
            } else if kind == FinishKind::Success {
                success_rule
            } else {
                "PANEL-3"
            }
        };
        if self.dismissed {
            (RemovalReason::Dismissed, "PANEL-3")
        } else if kind == FinishKind::Success && at < finished_at.saturating_add(RETENTION) {
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
                    || (kind == FinishKind::Success && gates.tasks_lists_done)
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

/// Why a row left the panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RemovalReason {
    /// PANEL-2 / PANEL-4: a successful finish removes the row at once (v2.1.232+).
    Succeeded,
    /// PANEL-2/3/4: the row's 30 s after its finish are up.
    Expired,
    /// PANEL-3: the person cleared it with `x`.
    Dismissed,
    /// PANEL-1: the main-session row goes when the last fork row goes.
    NoForks,
}

impl RemovalReason {
    /// Every reason, in declaration order.
    pub const ALL: [RemovalReason; 4] = [
        RemovalReason::Succeeded,
        RemovalReason::Expired,
        RemovalReason::Dismissed,
        RemovalReason::NoForks,
    ];

    /// The trace spelling (`reason`).
    pub fn as_str(self) -> &'static str {
        match self {
            RemovalReason::Succeeded => "succeeded",
            RemovalReason::Expired => "expired",
            RemovalReason::Dismissed => "dismissed",
            RemovalReason::NoForks => "no_forks",
        }
    }
}

/// One visible difference between two views, for the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PanelChange {
    /// A row appeared.
    RowAdded {
        /// Which row.
        row: RowId,
        /// PANEL-1, PANEL-4 (a fork) or RESUME-8 (a resumed run).
        rule: RuleId,
    },
    /// A row left.
    RowRemoved {
        /// Which row.
        row: RowId,
        /// Why.
        reason: RemovalReason,
        /// PANEL-1, PANEL-2, PANEL-3 or PANEL-4.
        rule: RuleId,
    },
    /// A row that stays changed its status word (a failure or stop kept 30 s, a resume).
    RowStatusChanged {
        /// Which row.
        row: RowId,
        /// The old word.
        from: Status,
        /// The new word.
        to: Status,
        /// PANEL-2, PANEL-3, PANEL-4 or RESUME-8.
        rule: RuleId,
    },
    /// PANEL-2: the footer hint appeared.
    FooterHintShown {
        /// `PANEL-2`.
        rule: RuleId,
    },
    /// PANEL-2: the footer hint went away.
    FooterHintCleared {
        /// `PANEL-2`.
        rule: RuleId,
    },
}

/// Which kind of change a [`PanelChange`] is (`panel_changed.change`; PANEL-1…4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// A row appeared (PANEL-1, PANEL-4, RESUME-8).
    RowAdded,
    /// A row left (PANEL-1…4).
    RowRemoved,
    /// A row that stays changed its status word (PANEL-2…4, RESUME-8).
    RowStatusChanged,
    /// PANEL-2: the footer hint appeared.
    FooterHintShown,
    /// PANEL-2: the footer hint went away.
    FooterHintCleared,
}

impl ChangeKind {
    /// Every kind, in declaration order.
    pub const ALL: [ChangeKind; 5] = [
        ChangeKind::RowAdded,
        ChangeKind::RowRemoved,
        ChangeKind::RowStatusChanged,
        ChangeKind::FooterHintShown,
        ChangeKind::FooterHintCleared,
    ];

    /// The trace spelling (`change`).
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::RowAdded => "row_added",
            ChangeKind::RowRemoved => "row_removed",
            ChangeKind::RowStatusChanged => "row_status_changed",
            ChangeKind::FooterHintShown => "footer_hint_shown",
            ChangeKind::FooterHintCleared => "footer_hint_cleared",
        }
    }
}

impl PanelChange {
    /// The kind of change, as the trace writes it.
    pub fn kind(&self) -> ChangeKind {
        match self {
            PanelChange::RowAdded { .. } => ChangeKind::RowAdded,
            PanelChange::RowRemoved { .. } => ChangeKind::RowRemoved,
            PanelChange::RowStatusChanged { .. } => ChangeKind::RowStatusChanged,
            PanelChange::FooterHintShown { .. } => ChangeKind::FooterHintShown,
            PanelChange::FooterHintCleared { .. } => ChangeKind::FooterHintCleared,
        }
    }

    /// The rule behind the change.
    pub fn rule(&self) -> RuleId {
        match self {
            PanelChange::RowAdded { rule, .. }
            | PanelChange::RowRemoved { rule, .. }
            | PanelChange::RowStatusChanged { rule, .. }
            | PanelChange::FooterHintShown { rule }
            | PanelChange::FooterHintCleared { rule } => rule,
        }
    }
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
type Window = (Micros, u32, Option<FinishKind>);

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
    fn known(&self, index: u32, known: Option<FinishKind>, gates: &Gates) -> Option<(bool, bool)> {
        let kind = known?;
        if self.revisited(index as usize) {
            return None;
        }
        let success = kind == FinishKind::Success;
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
    /// be placed in the tree, but get no row (Q-21). An id seen before is started afresh
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
    pub fn on_finish(&mut self, id: u32, kind: FinishKind, at: Micros) {
        if let Some(index) = self.position(id) {
            self.finish_entry(index, kind, at);
        }
    }

    /// [`Panel::on_finish`] for the run whose entry [`Panel::on_start`] said is at
    /// `index`: its id is not looked up (at a million runs ending in random order, the
    /// id index was a cache miss of its own). An `index` that does not hold `id` is
    /// looked up by `id` instead.
    pub fn on_finish_at(&mut self, index: u32, id: u32, kind: FinishKind, at: Micros) {
        match self.entries.get(index as usize) {
            Some(entry) if entry.id == id => {
                debug_assert_eq!(self.position(id), Some(index as usize));
                self.finish_entry(index as usize, kind, at);
            }
            _ => self.on_finish(id, kind, at),
        }
    }

    fn finish_entry(&mut self, index: usize, kind: FinishKind, at: Micros) {
        self.touch(index);
        let entry = &mut self.entries[index];
        let first_finish = entry.finished_kind.is_none();
        entry.running = false;
        entry.finished_kind = Some(kind);
        entry.finished_at = at;
        entry.resumed_from = None;
        entry.dismissed = false;
        if entry.has_rows() {
            if kind == FinishKind::Success {
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

    /// What a person sees at `at` under `gates`; `screen_reader` hides the footer hint.
    pub fn view(&self, at: Micros, gates: &Gates, screen_reader: bool) -> PanelView {
        // PANEL-1 / Q-21: which runs have rows; `shown[i]` is entry `i`'s row, if it has one.
        let mut shown: Vec<Option<usize>> = vec![None; self.entries.len()];
        let mut visible: Vec<(&Entry, Status, usize)> = Vec::new();
        for (index, entry) in self.entries.iter().enumerate() {
            if let Some(status) = entry.row_status(at, gates) {
                shown[index] = Some(visible.len());
                visible.push((entry, status, index));
            }
        }
        let main_row = visible.iter().any(|(entry, _, _)| entry.fork);
        // PANEL-6: the tree. Each row hangs under its nearest ancestor that has a row. Every
        // run starts after its launcher, so entries are in an order where a parent comes
        // first: one pass down the entries finds each one's depth (its ancestors, main
        // excluded, plus one) and its nearest ancestor with a row from its parent's, where
        // walking up the chain for every row cost O(depth) each (a 20,000-deep chain took
        // seconds). An entry whose parent comes later (none does) walks up as before.
        let mut depth_of: Vec<u32> = Vec::with_capacity(self.entries.len());
        let mut nearest: Vec<Option<usize>> = Vec::with_capacity(self.entries.len());
        for (index, entry) in self.entries.iter().enumerate() {
            let (depth, near) = match entry.parent() {
                None => (1, None),
                Some(parent) => match self.position(parent) {
                    Some(p) if p < index => (depth_of[p] + 1, shown[p].or(nearest[p])),
                    Some(_) => {
                        let ancestors = self.ancestors(entry.id);
                        let near = ancestors
                            .iter()
                            .find_map(|ancestor| self.position(*ancestor).and_then(|a| shown[a]));
                        (ancestors.len() as u32 + 1, near)
                    }
                    // An ancestor without an entry counts, and ends the chain.
                    None => (2, None),
                },
            };
            depth_of.push(depth);
            nearest.push(near);
        }
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); visible.len()];
        let mut roots: Vec<usize> = Vec::new();
        let mut depths: Vec<u32> = Vec::with_capacity(visible.len());
        for (row, &(_, _, index)) in visible.iter().enumerate() {
            depths.push(depth_of[index]);
            match nearest[index] {
                Some(parent) => children[parent].push(row),
                None => roots.push(row),
            }
        }
        // Q-22: only descendants whose rows are in the panel count: a row's are the rows
        // below it in this tree, added up from the last row (a row comes after its parent).
        let mut descendants: Vec<u32> = vec![0; visible.len()];
        for row in (0..visible.len()).rev() {
            if let Some(parent) = nearest[visible[row].2] {
                debug_assert!(parent < row, "a row comes after its parent's");
                descendants[parent] += 1 + descendants[row];
            }
        }
        let mut rows = Vec::with_capacity(visible.len() + 1);
        let base_level = u32::from(main_row);
        if main_row {
            rows.push(Row {
                id: RowId::Main,
                label: MAIN_LABEL.to_string(),
                depth: 0,
                level: 0,
                status: Status::Running,
                descendants: visible.len() as u32,
                fork: false,
            });
        }
        // Depth-first, children in start order.
        let mut stack: Vec<(usize, u32)> = roots
            .into_iter()
            .rev()
            .map(|index| (index, base_level))
            .collect();
        while let Some((index, level)) = stack.pop() {
            let (entry, status, _) = visible[index];
            rows.push(Row {
                id: RowId::Agent(entry.id),
                label: self.label(entry),
                depth: depths[index],
                level,
                status,
                descendants: descendants[index],
                fork: entry.fork,
            });
            stack.extend(
                children[index]
                    .iter()
                    .rev()
                    .map(|&child| (child, level + 1)),
            );
        }
        PanelView {
            at,
            rows,
            footer_hint: self.footer_hint(at, gates, screen_reader),
            tasks: self.tasks(at, gates),
        }
    }

    /// PANEL-2: the footer hint, 30 s after a success, from v2.1.232, not for screen readers.
    fn footer_hint(&self, at: Micros, gates: &Gates, screen_reader: bool) -> Option<&'static str> {
        self.last_success
            .filter(|&success| {
                gates.success_row_removed_at_once
                    && !screen_reader
                    && success <= at
                    && at < success.saturating_add(RETENTION)
            })
            .map(|_| messages::FOOTER_HINT)
    }

    /// Brings what the panel shows up to `at` (after the latest `on_*` call) and appends
    /// to `out` what changed since the previous call (since an empty panel, the first
    /// time): exactly what [`Panel::changes`] gives for the two [`Panel::view`]s, in the
    /// same order. Returns [`Panel::next_change`]`(at)`, the time to call again if nothing
    /// else happens first.
    ///
    /// It looks only at the runs touched since the previous call and at the 30 s windows
    /// that ended, so a change costs O(log n) (plus the depth of the tree, to order
    /// several changes of one instant). `gates` and `screen_reader` must not change
    /// between calls.
    pub fn update(
        &mut self,
        at: Micros,
        gates: &Gates,
        screen_reader: bool,
        out: &mut Vec<PanelChange>,
    ) -> Option<Micros> {
        // PANEL-2/3/4/5: windows that ended by now. An entry whose row is not shown (as
        // its window knows) has nothing to change: it is not read.
        while let Some((end, index, known)) = self.windows.first() {
            if end > at {
                break;
            }
            self.windows.pop_first();
            match self.known(index, known, gates) {
                Some((false, _)) => {
                    let entry = &self.entries[index as usize];
                    debug_assert!(
                        entry.shown.is_none() || entry.dirty,
                        "a window's memo: the row is not shown (or the entry is dirty anyway)"
                    );
                }
                _ => self.touch(index as usize),
            }
        }
        let mut dirty = std::mem::take(&mut self.dirty);
        let Scratch {
            mut removed,
            mut changed,
            mut added,
            mut now,
        } = std::mem::take(&mut self.scratch);
        for &index in &dirty {
            let entry = &mut self.entries[index as usize];
            entry.dirty = false;
            let status = entry.row_status(at, gates);
            match (entry.shown, status) {
                (Some(_), None) => removed.push(index),
                (None, Some(_)) => added.push(index),
                (Some((from, _)), Some(to)) if from != to => changed.push((index, from, to)),
                _ => {}
            }
            now.push(status);
        }
        // Removals in the order of the rows shown before (the tree before this change).
        if removed.len() > 1 {
            removed.sort_by_cached_key(|&index| self.tree_key(index as usize));
        }
        let main_before = self.shown_forks > 0;
        for (&index, &status) in dirty.iter().zip(&now) {
            let entry = &mut self.entries[index as usize];
            if let Some((_, true)) = entry.shown {
                self.shown_forks -= 1;
            }
            entry.shown = status.map(|status| (status, entry.fork));
            if status.is_some() && entry.fork {
                self.shown_forks += 1;
            }
        }
        dirty.clear();
        self.dirty = dirty;
        let main_after = self.shown_forks > 0;
        // PANEL-1: the main-session row is the first row.
        if main_before && !main_after {
            out.push(PanelChange::RowRemoved {
                row: RowId::Main,
                reason: RemovalReason::NoForks,
                rule: "PANEL-1",
            });
        }
        for &index in &removed {
            let entry = &self.entries[index as usize];
            let (reason, rule) = entry.removal(at);
            out.push(PanelChange::RowRemoved {
                row: RowId::Agent(entry.id),
                reason,
                rule,
            });
        }
        // Status changes and additions in the order of the rows shown now.
        if changed.len() > 1 {
            changed.sort_by_cached_key(|&(index, _, _)| self.tree_key(index as usize));
        }
        for &(index, from, to) in &changed {
            let entry = &self.entries[index as usize];
            out.push(PanelChange::RowStatusChanged {
                row: RowId::Agent(entry.id),
                from,
                to,
                rule: status_rule(to, entry.fork),
            });
        }
        if !main_before && main_after {
            out.push(PanelChange::RowAdded {
                row: RowId::Main,
                rule: "PANEL-1",
            });
        }
        if added.len() > 1 {
            added.sort_by_cached_key(|&index| self.tree_key(index as usize));
        }
        for &index in &added {
            let entry = &self.entries[index as usize];
            out.push(PanelChange::RowAdded {
                row: RowId::Agent(entry.id),
                rule: entry.added_rule(),
            });
        }
        let hint = self.footer_hint(at, gates, screen_reader).is_some();
        match (self.shown_hint, hint) {
            (false, true) => out.push(PanelChange::FooterHintShown { rule: "PANEL-2" }),
            (true, false) => out.push(PanelChange::FooterHintCleared { rule: "PANEL-2" }),
            _ => {}
        }
        self.shown_hint = hint;
        removed.clear();
        changed.clear();
        added.clear();
        now.clear();
        self.scratch = Scratch {
            removed,
            changed,
            added,
            now,
        };
        // The next window whose end changes the view; stale ones are dropped on the way.
        let mut next = None;
        while let Some((end, index, known)) = self.windows.first() {
            let ends = match self.known(index, known, gates) {
                Some((_, ends)) => {
                    debug_assert_eq!(
                        ends,
                        self.entries[index as usize].window_ends(end, at, gates),
                        "a window's memo: whether its end changes the view"
                    );
                    ends
                }
                None => self.entries[index as usize].window_ends(end, at, gates),
            };
            if ends {
                next = Some(end);
                break;
            }
            self.windows.pop_first();
        }
        if gates.success_row_removed_at_once && !screen_reader {
            if let Some(end) = self
                .last_success
                .map(|success| success.saturating_add(RETENTION))
                .filter(|&end| end > at)
            {
                next = Some(next.map_or(end, |next: Micros| next.min(end)));
            }
        }
        next
    }

    /// Where a shown row sits in the tree (PANEL-6): the entry indices of its ancestors
    /// that show rows, outermost first, then its own. Rows in tree order have their keys
    /// in increasing order.
    fn tree_key(&self, index: usize) -> Vec<u32> {
        let mut key: Vec<u32> = self
            .ancestors(self.entries[index].id)
            .into_iter()
            .filter_map(|ancestor| self.position(ancestor))
            .filter(|&position| self.entries[position].shown.is_some())
            .map(|position| position as u32)
            .collect();
        key.reverse();
        key.push(index as u32);
        key
    }

    /// PANEL-5 / PANEL-8 / Q-23: the `/tasks` list at `at`.
    fn tasks(&self, at: Micros, gates: &Gates) -> Vec<TaskLine> {
        let line = |entry: &Entry, status: Status| TaskLine {
            id: entry.id,
            label: self.label(entry),
            status,
            running: entry.running,
            model: gates
                .tasks_show_model
                .then(|| self.names[self.styles[entry.style as usize].0 as usize].clone()),
            effort: self.styles[entry.style as usize]
                .1
                .filter(|_| gates.tasks_show_model)
                .map(|effort| self.names[effort as usize].clone()),
        };
        let listed = self.entries.iter().filter(|entry| entry.has_rows());
        let mut tasks: Vec<TaskLine> = listed
            .clone()
            .filter(|entry| entry.running)
            .map(|entry| line(entry, entry.running_status(gates)))
            .collect();
        // PANEL-5: done work below running work for 30 s (v2.1.208+, Q-23); failed and
        // stopped runs leave the list.
        let mut done: Vec<(Micros, &Entry)> = listed
            .filter_map(|entry| match entry.finished() {
                Some((FinishKind::Success, finished_at))
                    if !entry.running
                        && gates.tasks_lists_done
                        && at < finished_at.saturating_add(RETENTION) =>
                {
                    Some((finished_at, entry))
                }
                _ => None,
            })
            .collect();
        done.sort_by_key(|(finished_at, _)| *finished_at);
        tasks.extend(done.into_iter().map(|(_, entry)| line(entry, Status::Done)));
        tasks
    }

    /// The earliest time after `after` at which the view changes with nothing else
    /// happening — a row's or list entry's 30 s running out, or the footer hint's — or
    /// `None` if the view stays as it is. An engine schedules a look at that time.
    pub fn next_change(&self, after: Micros, gates: &Gates, screen_reader: bool) -> Option<Micros> {
        let mut candidates: Vec<Micros> = self
            .entries
            .iter()
            .filter_map(Entry::finished)
            .map(|(_, finished_at)| finished_at.saturating_add(RETENTION))
            .chain(
                self.last_success
                    .map(|success| success.saturating_add(RETENTION)),
            )
            .filter(|&time| time > after)
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        candidates.into_iter().find(|&time| {
            let now = self.view(time, gates, screen_reader);
            let just_before = self.view(time - 1, gates, screen_reader);
            (now.rows, now.footer_hint, now.tasks)
                != (just_before.rows, just_before.footer_hint, just_before.tasks)
        })
    }

    /// The events that take a person from `before` to `after` (two views of this panel,
    /// `after` taken after the latest `on_*` call). Removals come first, then status
    /// changes, then additions (each in row order), then the footer hint.
    pub fn changes(&self, before: &PanelView, after: &PanelView) -> Vec<PanelChange> {
        let mut changes = Vec::new();
        let find = |rows: &[Row], id: RowId| rows.iter().find(|row| row.id == id).cloned();
        for row in &before.rows {
            if find(&after.rows, row.id).is_some() {
                continue;
            }
            let (reason, rule) = self.removal(row, after.at);
            changes.push(PanelChange::RowRemoved {
                row: row.id,
                reason,
                rule,
            });
        }
        for row in &after.rows {
            if let Some(old) = find(&before.rows, row.id) {
                if old.status != row.status {
                    changes.push(PanelChange::RowStatusChanged {
                        row: row.id,
                        from: old.status,
                        to: row.status,
                        rule: status_rule(row.status, row.fork),
                    });
                }
            }
        }
        for row in &after.rows {
            if find(&before.rows, row.id).is_some() {
                continue;
            }
            let rule = match row.id {
                RowId::Main => "PANEL-1",
                RowId::Agent(id) => match self.entry(id) {
                    Some(entry) => entry.added_rule(),
                    None if row.fork => "PANEL-4",
                    None => "PANEL-1",
                },
            };
            changes.push(PanelChange::RowAdded { row: row.id, rule });
        }
        match (before.footer_hint, after.footer_hint) {
            (None, Some(_)) => changes.push(PanelChange::FooterHintShown { rule: "PANEL-2" }),
            (Some(_), None) => changes.push(PanelChange::FooterHintCleared { rule: "PANEL-2" }),
            _ => {}
        }
        changes
    }

    /// Why `row` is gone at `at`.
    fn removal(&self, row: &Row, at: Micros) -> (RemovalReason, RuleId) {
        let RowId::Agent(id) = row.id else {
            return (RemovalReason::NoForks, "PANEL-1");
        };
        match self.entry(id) {
            Some(entry) => entry.removal(at),
            None => (RemovalReason::Expired, "PANEL-3"),
        }
    }
}

/// The rule behind a row's new status word: a resume (RESUME-8), a fork (PANEL-4), a
/// success kept 30 s (PANEL-2, before v2.1.232) or a failure or stop (PANEL-3).
fn status_rule(to: Status, fork: bool) -> RuleId {
    match (to, fork) {
        (Status::Running, _) => "RESUME-8",
        (_, true) => "PANEL-4",
        (Status::Done, false) => "PANEL-2",
        _ => "PANEL-3",
    }
}

/// The deepest tree level [`render_panel`] indents: a deeper row is indented as this one
/// and says its level (`[level 40] a40`). Every line is padded to the longest label, so
/// a chain of N nested runs drew N² spaces (20,000 levels: 800 MB for one panel), and a
/// label past 65,535 characters panicked as a format width.
pub const MAX_DRAWN_LEVEL: u32 = 32;

/// The panel as text, the way a person sees it: one line per row, indented two spaces per
/// tree level (to [`MAX_DRAWN_LEVEL`]), `(+N)` after a label with descendants in the panel, then the status word;
/// the footer hint on the last line when it is shown.
pub fn render_panel(view: &PanelView) -> String {
    let mut out = String::new();
    // The status words line up in one column, after the longest indented label.
    let labels: Vec<String> = view
        .rows
        .iter()
        .map(|row| {
            let indent = "  ".repeat(row.level.min(MAX_DRAWN_LEVEL) as usize);
            let mut label = if row.level > MAX_DRAWN_LEVEL {
                format!("{indent}[level {}] {}", row.level, row.label)
            } else {
                format!("{indent}{}", row.label)
            };
            if row.descendants > 0 {
                let _ = write!(label, " (+{})", row.descendants);
            }
            label
        })
        .collect();
    let width = labels
        .iter()
        .map(|label| label.chars().count())
        .max()
        .unwrap_or(0);
    for (row, label) in view.rows.iter().zip(&labels) {
        let _ = writeln!(out, "{label:width$}  {}", row.status.as_str());
    }
    if let Some(hint) = view.footer_hint {
        let _ = writeln!(out, "{hint}");
    }
    out
}

/// The `/tasks` list as text: a `/tasks` heading, then one line per entry (label, status,
/// and from v2.1.242 the model and any effort), running work first.
pub fn render_tasks(view: &PanelView) -> String {
    let mut out = String::from("/tasks\n");
    if view.tasks.is_empty() {
        out.push_str("  (no tasks)\n");
        return out;
    }
    let width = view
        .tasks
        .iter()
        .map(|task| task.label.chars().count())
        .max()
        .unwrap_or(0);
    for task in &view.tasks {
        let mut line = format!(
            "  {:<width$}  {:<7}",
            task.label,
            task.status.as_str(),
            width = width
        );
        if let Some(model) = &task.model {
            let _ = write!(line, "  {model}");
            if let Some(effort) = &task.effort {
                let _ = write!(line, " · effort {effort}");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;

    /// Two entries share a cache line, a million take 32 MB (issue #7, W2's footprint).
    #[test]
    fn an_entry_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Entry>(), 32);
    }

    const S: Micros = 1_000_000;

    fn gates(patch: u32) -> Gates {
        Gates::for_version(Version::v2_1(patch))
    }

    fn run(id: u32, parent: Option<u32>, name: &str, fork: bool, background: bool) -> Started<'_> {
        Started {
            id,
            parent,
            name: Some(Rc::from(name)),
            fork,
            background,
            model: "sonnet",
            effort: None,
        }
    }

    fn bg(id: u32, name: &str) -> Started<'_> {
        run(id, None, name, false, true)
    }

    /// (row, status, descendants, level) for every row.
    fn rows(view: &PanelView) -> Vec<(RowId, Status, u32, u32)> {
        view.rows
            .iter()
            .map(|row| (row.id, row.status, row.descendants, row.level))
            .collect()
    }

    /// `update` gives exactly what diffing two full views gives, and the same next change,
    /// over long pseudo-random histories: starts (nested, forks, foreground), finishes of
    /// every kind, resumes, Ctrl+B, dismissals, restarts of a known id, several changes at
    /// one instant and 30 s windows ending, under the versions whose gates differ.
    #[test]
    fn update_matches_diffing_views() {
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut draw = move |bound: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % bound
        };
        for round in 0..240 {
            let patch = [204, 207, 208, 231, 232, 241, 242, 292][round % 8];
            let g = gates(patch);
            let screen_reader = round % 5 == 0;
            let mut panel = Panel::new();
            let mut shown = Panel::new().view(0, &g, screen_reader);
            let mut now: Micros = 0;
            let mut next: Option<Micros> = None;
            let mut ids = 0u32;
            let mut out = Vec::new();
            for _ in 0..60 {
                // Time moves on: not at all, a little, to the next change, or far.
                now = match draw(6) {
                    0 | 1 => now,
                    2 => now + draw(3 * S) + 1,
                    3 => next.unwrap_or(now + 1),
                    4 => now + RETENTION - draw(2) * S,
                    _ => now + RETENTION + draw(2),
                };
                for _ in 0..=draw(3) {
                    let id = (draw(u64::from(ids) + 1) as u32) + 1;
                    match draw(9) {
                        0..=2 => {
                            ids += 1;
                            let parent = (ids > 1 && draw(3) > 0)
                                .then(|| draw(u64::from(ids - 1)) as u32 + 1);
                            let effort = ["high", "low"][draw(2) as usize];
                            panel.on_start(
                                Started {
                                    id: ids,
                                    parent,
                                    name: ids.is_multiple_of(2).then(|| Rc::from("r")),
                                    fork: draw(4) == 0,
                                    background: draw(3) > 0,
                                    model: ["sonnet", "opus"][draw(2) as usize],
                                    effort: (draw(2) == 0).then_some(effort),
                                },
                                now,
                            );
                        }
                        3 | 4 => {
                            let kind = [
                                FinishKind::Success,
                                FinishKind::Failure,
                                FinishKind::Stopped,
                            ][draw(3) as usize];
                            panel.on_finish(id, kind, now);
                        }
                        5 => panel.on_resume(id, draw(2) == 0, now),
                        6 => panel.on_background(id, now),
                        7 => {
                            panel.on_dismiss(id, now, &g);
                        }
                        _ => {
                            // An id started again keeps its launcher (agent ids are not reused
                            // for another agent).
                            if let Some(parent) = panel.entry(id).map(Entry::parent) {
                                panel.on_start(run(id, parent, "again", draw(2) == 0, true), now);
                            }
                        }
                    }
                }
                let view = panel.view(now, &g, screen_reader);
                let expected = panel.changes(&shown, &view);
                out.clear();
                next = panel.update(now, &g, screen_reader, &mut out);
                assert_eq!(out, expected, "round {round} at {now}");
                assert_eq!(
                    next,
                    panel.next_change(now, &g, screen_reader),
                    "round {round} at {now}"
                );
                shown = view;
            }
        }
    }

    /// One finish of one background run, looked at some time later.
    fn check_finish(
        kind: FinishKind,
        fork: bool,
        patch: u32,
        look_at: Micros,
        row: Option<Status>,
        hint: bool,
        listed: Option<Status>,
    ) {
        let mut panel = Panel::new();
        panel.on_start(run(1, None, "r", fork, true), 0);
        panel.on_finish(1, kind, 10 * S);
        let view = panel.view(10 * S + look_at, &gates(patch), false);
        let label = format!("{kind:?} fork={fork} 2.1.{patch} +{look_at}us");
        let agent_row = view.rows.iter().find(|r| r.id == RowId::Agent(1));
        assert_eq!(agent_row.map(|r| r.status), row, "row: {label}");
        assert_eq!(view.footer_hint.is_some(), hint, "hint: {label}");
        assert_eq!(
            view.tasks.first().map(|t| t.status),
            listed,
            "tasks: {label}"
        );
    }

    #[test]
    fn finish_rows_panel_2_3_4_5() {
        use FinishKind::{Failure, Success};
        use Status::{Done, Failed};
        let last = RETENTION - 1;
        // PANEL-2 from v2.1.232: removed at once, hint and /tasks for 30 s.
        check_finish(Success, false, 232, 0, None, true, Some(Done));
        check_finish(Success, false, 232, last, None, true, Some(Done));
        check_finish(Success, false, 232, RETENTION, None, false, None);
        // Before v2.1.232: kept 30 s, no hint; /tasks 30 s (Q-23).
        check_finish(Success, false, 231, 0, Some(Done), false, Some(Done));
        check_finish(Success, false, 231, last, Some(Done), false, Some(Done));
        check_finish(Success, false, 231, RETENTION, None, false, None);
        // PANEL-5: before v2.1.208 a completed subagent leaves /tasks at once.
        check_finish(Success, false, 207, 0, Some(Done), false, None);
        check_finish(Success, false, 208, 0, Some(Done), false, Some(Done));
        // PANEL-3: failure or stop kept 30 s; they leave /tasks at once.
        check_finish(Failure, false, 292, 0, Some(Failed), false, None);
        check_finish(Failure, false, 292, last, Some(Failed), false, None);
        check_finish(Failure, false, 292, RETENTION, None, false, None);
        check_finish(
            FinishKind::Stopped,
            false,
            292,
            last,
            Some(Status::Stopped),
            false,
            None,
        );
        check_finish(
            FinishKind::Stopped,
            false,
            200,
            last,
            Some(Status::Stopped),
            false,
            None,
        );
        // PANEL-4: forks alike.
        check_finish(Success, true, 232, 0, None, true, Some(Done));
        check_finish(Success, true, 231, last, Some(Done), false, Some(Done));
        check_finish(Failure, true, 292, last, Some(Failed), false, None);
    }

    #[test]
    fn screen_reader_has_no_hint() {
        let mut panel = Panel::new();
        panel.on_start(bg(1, "r"), 0);
        panel.on_finish(1, FinishKind::Success, S);
        assert!(panel.view(S, &gates(292), false).footer_hint.is_some());
        assert!(panel.view(S, &gates(292), true).footer_hint.is_none());
    }

    #[test]
    fn foreground_runs_get_no_rows_q_21() {
        let mut panel = Panel::new();
        panel.on_start(run(1, None, "fg", false, false), 0);
        let view = panel.view(0, &gates(292), false);
        assert!(view.rows.is_empty());
        assert!(view.tasks.is_empty());
        panel.on_finish(1, FinishKind::Failure, S);
        assert!(panel.view(S, &gates(292), false).rows.is_empty());
        // Ctrl+B: moved to the background, it gets a row.
        let mut moved = Panel::new();
        moved.on_start(run(1, None, "fg", false, false), 0);
        moved.on_background(1, S);
        assert_eq!(moved.view(S, &gates(292), false).rows.len(), 1);
    }

    #[test]
    fn main_row_with_forks_panel_1() {
        let mut panel = Panel::new();
        panel.on_start(bg(1, "bg"), 0);
        assert_eq!(
            rows(&panel.view(0, &gates(292), false)),
            [(RowId::Agent(1), Status::Running, 0, 0)]
        );
        panel.on_start(run(2, None, "fork", true, true), S);
        assert_eq!(
            rows(&panel.view(S, &gates(292), false)),
            [
                (RowId::Main, Status::Running, 2, 0),
                (RowId::Agent(1), Status::Running, 0, 1),
                (RowId::Agent(2), Status::Running, 0, 1),
            ]
        );
        // A failed fork keeps the main row for its 30 s.
        panel.on_finish(2, FinishKind::Failure, 2 * S);
        let kept = panel.view(2 * S, &gates(292), false);
        assert_eq!(kept.rows[0].id, RowId::Main);
        let gone = panel.view(2 * S + RETENTION, &gates(292), false);
        assert_eq!(rows(&gone), [(RowId::Agent(1), Status::Running, 0, 0)]);
    }

    #[test]
    fn nested_tree_and_descendants_q_22() {
        let mut panel = Panel::new();
        panel.on_start(bg(1, "lead"), 0);
        panel.on_start(run(2, Some(1), "a", false, true), S);
        panel.on_start(run(3, Some(2), "a1", false, true), S);
        panel.on_start(run(4, Some(1), "b", false, true), S);
        let g = gates(292);
        assert_eq!(
            rows(&panel.view(S, &g, false)),
            [
                (RowId::Agent(1), Status::Running, 3, 0),
                (RowId::Agent(2), Status::Running, 1, 1),
                (RowId::Agent(3), Status::Running, 0, 2),
                (RowId::Agent(4), Status::Running, 0, 1),
            ]
        );
        // A success leaves at once and stops counting; a failure counts for its 30 s.
        panel.on_finish(3, FinishKind::Success, 2 * S);
        panel.on_finish(4, FinishKind::Failure, 2 * S);
        assert_eq!(
            rows(&panel.view(2 * S, &g, false)),
            [
                (RowId::Agent(1), Status::Running, 2, 0),
                (RowId::Agent(2), Status::Running, 0, 1),
                (RowId::Agent(4), Status::Failed, 0, 1),
            ]
        );
        let depths: Vec<u32> = panel
            .view(2 * S, &g, false)
            .rows
            .iter()
            .map(|r| r.depth)
            .collect();
        assert_eq!(depths, [1, 2, 2]);
    }

    #[test]
    fn child_of_a_rowless_parent_hangs_higher() {
        let mut panel = Panel::new();
        panel.on_start(run(1, None, "fg", false, false), 0);
        panel.on_start(run(2, Some(1), "bg-child", false, true), 0);
        let view = panel.view(0, &gates(292), false);
        assert_eq!(rows(&view), [(RowId::Agent(2), Status::Running, 0, 0)]);
        assert_eq!(view.rows[0].depth, 2);
    }

    #[test]
    fn dismiss_clears_sooner() {
        let g = gates(292);
        let mut panel = Panel::new();
        panel.on_start(bg(1, "r"), 0);
        assert_eq!(panel.on_dismiss(1, 0, &g), (false, "PANEL-7"));
        panel.on_finish(1, FinishKind::Stopped, S);
        assert!(panel.has_row(1, 2 * S, &g));
        assert_eq!(panel.on_dismiss(1, 2 * S, &g), (true, "PANEL-3"));
        assert!(!panel.has_row(1, 2 * S, &g));
        assert_eq!(panel.on_dismiss(1, 3 * S, &g), (false, "PANEL-3"));
        assert_eq!(panel.on_dismiss(9, 3 * S, &g), (false, "PANEL-7"));
        // A success row has nothing to dismiss from v2.1.232; before, it does.
        let mut success = Panel::new();
        success.on_start(bg(1, "r"), 0);
        success.on_finish(1, FinishKind::Success, S);
        assert_eq!(success.on_dismiss(1, S, &g), (false, "PANEL-3"));
        assert_eq!(success.on_dismiss(1, S, &gates(231)), (true, "PANEL-3"));
    }

    #[test]
    fn failed_row_kept_agrees_with_has_row_at_the_window_s_edges() {
        let g = gates(292);
        let mut panel = Panel::new();
        panel.on_start(bg(1, "r"), 0);
        panel.on_finish(1, FinishKind::Stopped, S);
        for at in [S, S + RETENTION - 1, S + RETENTION, S + RETENTION + 1] {
            assert_eq!(
                failed_row_kept(true, S, at),
                (panel.has_row(1, at, &g), "PANEL-3"),
                "{at}"
            );
        }
        assert!(!failed_row_kept(false, S, S).0);
    }

    #[test]
    fn resumed_shows_running_from_2_1_205() {
        let mut panel = Panel::new();
        panel.on_start(bg(1, "r"), 0);
        panel.on_finish(1, FinishKind::Failure, S);
        panel.on_resume(1, true, 2 * S);
        let new = panel.view(2 * S, &gates(205), false);
        assert_eq!(new.rows[0].status, Status::Running);
        assert_eq!(new.tasks[0].status, Status::Running);
        let old = panel.view(2 * S, &gates(204), false);
        assert_eq!(old.rows[0].status, Status::Failed);
        assert_eq!(old.tasks[0].status, Status::Failed);
        assert!(old.tasks[0].running);
        // Long after the old 30 s, the resumed run still has its row.
        assert!(panel.has_row(1, 100 * S, &gates(292)));
        // The row's change back to running is RESUME-8's, fork or not.
        let g = gates(205);
        let mut panel = Panel::new();
        panel.on_start(bg(1, "r"), 0);
        panel.on_start(run(2, None, "f", true, true), 0);
        panel.on_finish(1, FinishKind::Failure, S);
        panel.on_finish(2, FinishKind::Failure, S);
        let failed = panel.view(S, &g, false);
        panel.on_resume(1, true, 2 * S);
        panel.on_resume(2, true, 2 * S);
        let resumed = panel.view(2 * S, &g, false);
        let running: Vec<(RowId, RuleId)> = panel
            .changes(&failed, &resumed)
            .iter()
            .filter_map(|change| match change {
                PanelChange::RowStatusChanged {
                    row,
                    to: Status::Running,
                    rule,
                    ..
                } => Some((*row, *rule)),
                _ => None,
            })
            .collect();
        assert_eq!(
            running,
            [(RowId::Agent(1), "RESUME-8"), (RowId::Agent(2), "RESUME-8")]
        );
    }

    #[test]
    fn a_parent_cycle_ends_the_ancestor_chain() {
        // Each run names the other as its parent (a caller's mistake): the chain stops at
        // the first id met again instead of going round.
        let mut panel = Panel::new();
        panel.on_start(run(1, Some(2), "a", false, true), 0);
        panel.on_start(run(2, Some(1), "b", false, true), 0);
        assert_eq!(panel.ancestors(1), [2, 1]);
        assert_eq!(panel.ancestors(2), [1, 2]);
    }

    #[test]
    fn a_deep_chain_of_rows_is_drawn_in_linear_space() {
        let rows = 3000;
        let mut panel = Panel::new();
        for id in 1..=rows {
            panel.on_start(run(id, (id > 1).then(|| id - 1), "r", false, true), 0);
        }
        let view = panel.view(0, &gates(292), false);
        assert_eq!(view.rows.len(), rows as usize);
        let text = render_panel(&view);
        let widest = text.lines().map(|line| line.chars().count()).max().unwrap();
        assert!(widest < 200, "{widest}");
        assert!(text.contains("[level 33] r"), "{text}");
    }

    /// `view` finds each row's depth, its parent row and its descendants in one pass down
    /// the entries (a parent starts before its children); the per-row walk up the
    /// ancestors it replaced gives the same, on a tree where some runs have no row
    /// (foreground) and some have finished.
    #[test]
    fn one_pass_tree_matches_the_walk_up_the_ancestors() {
        let mut panel = Panel::new();
        let mut state = 0x9e37_79b9_u32;
        for id in 1..=400u32 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let parent = (id > 1 && !state.is_multiple_of(5)).then(|| 1 + state % (id - 1));
            panel.on_start(run(id, parent, "r", false, !state.is_multiple_of(3)), S);
        }
        for id in (1..=400u32).step_by(7) {
            panel.on_finish(id, FinishKind::Failure, 2 * S);
        }
        let view = panel.view(2 * S, &gates(292), false);
        let shown: Vec<u32> = view
            .rows
            .iter()
            .filter_map(|row| match row.id {
                RowId::Agent(id) => Some(id),
                RowId::Main => None,
            })
            .collect();
        assert!(shown.len() > 100 && shown.len() < 400, "{}", shown.len());
        for row in &view.rows {
            let RowId::Agent(id) = row.id else { continue };
            let ancestors = panel.ancestors(id);
            assert_eq!(row.depth, ancestors.len() as u32 + 1, "depth of {id}");
            let shown_ancestors = ancestors.iter().filter(|a| shown.contains(a)).count();
            assert_eq!(row.level, shown_ancestors as u32, "level of {id}");
            let below = shown
                .iter()
                .filter(|&&other| panel.ancestors(other).contains(&id))
                .count();
            assert_eq!(row.descendants, below as u32, "descendants of {id}");
        }
    }

    #[test]
    fn a_name_started_again_and_again_is_shared_not_copied() {
        // A named run's row label is the engine's text of the name, not a copy of it: a
        // million runs of one long name held it a million times more.
        let name: Rc<str> = Rc::from("n".repeat(250).as_str());
        let mut panel = Panel::new();
        for id in 1..=1000 {
            panel.on_start(
                Started {
                    name: Some(Rc::clone(&name)),
                    ..bg(id, "")
                },
                0,
            );
        }
        assert_eq!(Rc::strong_count(&name), 1001);
    }

    #[test]
    fn tasks_order_and_model_panel_8() {
        let mut panel = Panel::new();
        panel.on_start(bg(1, "first"), 0);
        panel.on_start(
            Started {
                effort: Some("high"),
                model: "opus",
                ..bg(2, "second")
            },
            0,
        );
        panel.on_start(bg(3, "third"), 0);
        panel.on_finish(3, FinishKind::Success, S);
        panel.on_finish(1, FinishKind::Success, 2 * S);
        let view = panel.view(2 * S, &gates(242), false);
        let order: Vec<(&str, Status)> = view
            .tasks
            .iter()
            .map(|t| (t.label.as_str(), t.status))
            .collect();
        assert_eq!(
            order,
            [
                ("second", Status::Running),
                ("third", Status::Done),
                ("first", Status::Done)
            ]
        );
        assert_eq!(view.tasks[0].model.as_deref(), Some("opus"));
        assert_eq!(view.tasks[0].effort.as_deref(), Some("high"));
        assert_eq!(view.tasks[1].effort, None);
        let old = panel.view(2 * S, &gates(241), false);
        assert_eq!(old.tasks[0].model, None);
        assert_eq!(old.tasks[0].effort, None);
    }

    #[test]
    fn next_change_finds_the_expiries() {
        let g = gates(292);
        let mut panel = Panel::new();
        assert_eq!(panel.next_change(0, &g, false), None);
        panel.on_start(bg(1, "ok"), 0);
        panel.on_start(bg(2, "bad"), 0);
        panel.on_finish(1, FinishKind::Success, S);
        panel.on_finish(2, FinishKind::Failure, 3 * S);
        assert_eq!(panel.next_change(S, &g, false), Some(S + RETENTION));
        assert_eq!(
            panel.next_change(S + RETENTION, &g, false),
            Some(3 * S + RETENTION)
        );
        assert_eq!(panel.next_change(3 * S + RETENTION, &g, false), None);
        // Before v2.1.208 in screen-reader mode, a success whose kept row was dismissed
        // changes nothing visible at +30 s: no hint, no /tasks entry, no row.
        let old = gates(207);
        let mut quiet = Panel::new();
        quiet.on_start(bg(1, "ok"), 0);
        quiet.on_finish(1, FinishKind::Success, S);
        quiet.on_dismiss(1, S, &old);
        assert_eq!(quiet.next_change(S, &old, true), None);
    }

    /// `on_start` says where the entry is; `on_finish_at` there is `on_finish` (also when
    /// the index is wrong: the id decides); the preload hint reads an entry and changes
    /// nothing.
    #[test]
    fn finish_at_the_index_start_gave() {
        let g = gates(292);
        let mut by_id = Panel::new();
        let mut at_index = Panel::new();
        for (id, name) in [(3, "a"), (1_000_000, "far"), (4, "b")] {
            assert_eq!(
                by_id.on_start(bg(id, name), 0),
                at_index.on_start(bg(id, name), 0)
            );
        }
        assert_eq!(
            at_index.on_start(bg(3, "a"), S),
            0,
            "an id seen before keeps its entry"
        );
        by_id.on_start(bg(3, "a"), S);
        let before = at_index.clone();
        assert_ne!(at_index.preload_entry(1), 0);
        assert_eq!(at_index.preload_entry(7), 0);
        assert_eq!(at_index, before);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        by_id.update(S, &g, false, &mut a);
        at_index.update(S, &g, false, &mut b);
        by_id.on_finish(1_000_000, FinishKind::Success, 2 * S);
        at_index.on_finish_at(1, 1_000_000, FinishKind::Success, 2 * S);
        by_id.on_finish(4, FinishKind::Failure, 2 * S);
        at_index.on_finish_at(0, 4, FinishKind::Failure, 2 * S);
        by_id.on_finish(3, FinishKind::Stopped, 3 * S);
        at_index.on_finish_at(9, 3, FinishKind::Stopped, 3 * S);
        assert_eq!(at_index, by_id);
        by_id.update(3 * S, &g, false, &mut a);
        at_index.update(3 * S, &g, false, &mut b);
        assert_eq!(a, b);
        assert!(!a.is_empty());
    }

    #[test]
    fn ids_out_of_order_and_far_ahead_are_found() {
        let mut index = IdIndex::default();
        // Out of order: 3 comes after 5, inside the vector 5 made.
        index.insert(5, 0);
        index.insert(3, 1);
        assert_eq!(
            (index.get(5), index.get(3), index.get(4)),
            (Some(0), Some(1), None)
        );
        // Far ahead: 5000 is kept in the map; once later ids grow the vector past it, it
        // must still be found (it was lost: the vector's 0 for "none" hid the map).
        let mut index = IdIndex::default();
        index.insert(5000, 0);
        for id in 1..=1990 {
            index.insert(id, id);
        }
        index.insert(5001, 1991);
        assert_eq!(index.get(5001), Some(1991));
        assert_eq!(index.get(5000), Some(0));
        assert_eq!(index.get(1990), Some(1990));
        assert_eq!(index.get(4999), None);
    }

    #[test]
    fn changes_name_reasons_and_rules() {
        let g = gates(292);
        let mut panel = Panel::new();
        let v0 = panel.view(0, &g, false);
        panel.on_start(bg(1, "ok"), 0);
        panel.on_start(run(2, None, "fork", true, true), 0);
        let v1 = panel.view(0, &g, false);
        assert_eq!(
            panel.changes(&v0, &v1),
            [
                PanelChange::RowAdded {
                    row: RowId::Main,
                    rule: "PANEL-1"
                },
                PanelChange::RowAdded {
                    row: RowId::Agent(1),
                    rule: "PANEL-1"
                },
                PanelChange::RowAdded {
                    row: RowId::Agent(2),
                    rule: "PANEL-4"
                },
            ]
        );
        panel.on_finish(1, FinishKind::Success, S);
        panel.on_finish(2, FinishKind::Failure, S);
        let v2 = panel.view(S, &g, false);
        let changes = panel.changes(&v1, &v2);
        assert_eq!(
            changes,
            [
                PanelChange::RowRemoved {
                    row: RowId::Agent(1),
                    reason: RemovalReason::Succeeded,
                    rule: "PANEL-2"
                },
                PanelChange::RowStatusChanged {
                    row: RowId::Agent(2),
                    from: Status::Running,
                    to: Status::Failed,
                    rule: "PANEL-4"
                },
                PanelChange::FooterHintShown { rule: "PANEL-2" },
            ]
        );
        let kinds: Vec<&str> = changes
            .iter()
            .map(|change| change.kind().as_str())
            .collect();
        assert_eq!(
            kinds,
            ["row_removed", "row_status_changed", "footer_hint_shown"]
        );
        let rules: Vec<RuleId> = changes.iter().map(PanelChange::rule).collect();
        assert_eq!(rules, ["PANEL-2", "PANEL-4", "PANEL-2"]);
        let reasons: Vec<&str> = RemovalReason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(reasons, ["succeeded", "expired", "dismissed", "no_forks"]);
        let at = panel.next_change(S, &g, false).unwrap();
        let v3 = panel.view(at, &g, false);
        assert_eq!(
            panel.changes(&v2, &v3),
            [
                PanelChange::RowRemoved {
                    row: RowId::Main,
                    reason: RemovalReason::NoForks,
                    rule: "PANEL-1"
                },
                PanelChange::RowRemoved {
                    row: RowId::Agent(2),
                    reason: RemovalReason::Expired,
                    rule: "PANEL-4"
                },
                PanelChange::FooterHintCleared { rule: "PANEL-2" },
            ]
        );
        // Dismissal, and a resume re-adding the row.
        let mut other = Panel::new();
        other.on_start(bg(5, "x"), 0);
        other.on_finish(5, FinishKind::Stopped, S);
        let before = other.view(S, &g, false);
        other.on_dismiss(5, 2 * S, &g);
        let after = other.view(2 * S, &g, false);
        assert_eq!(
            other.changes(&before, &after),
            [PanelChange::RowRemoved {
                row: RowId::Agent(5),
                reason: RemovalReason::Dismissed,
                rule: "PANEL-3"
            }]
        );
        other.on_resume(5, true, 3 * S);
        let resumed = other.view(3 * S, &g, false);
        assert_eq!(
            other.changes(&after, &resumed),
            [PanelChange::RowAdded {
                row: RowId::Agent(5),
                rule: "RESUME-8"
            }]
        );
        // Before v2.1.232 a success is a status change, then an expiry.
        let old = gates(231);
        let mut kept = Panel::new();
        kept.on_start(bg(1, "ok"), 0);
        let running = kept.view(0, &old, false);
        kept.on_finish(1, FinishKind::Success, S);
        let done = kept.view(S, &old, false);
        let expired = kept.view(S + RETENTION, &old, false);
        assert_eq!(
            kept.changes(&running, &done),
            [PanelChange::RowStatusChanged {
                row: RowId::Agent(1),
                from: Status::Running,
                to: Status::Done,
                rule: "PANEL-2"
            }]
        );
        assert_eq!(
            kept.changes(&done, &expired),
            [PanelChange::RowRemoved {
                row: RowId::Agent(1),
                reason: RemovalReason::Expired,
                rule: "PANEL-2"
            }]
        );
    }

    #[test]
    fn rendering() {
        let g = gates(292);
        let mut panel = Panel::new();
        panel.on_start(bg(1, "lead"), 0);
        panel.on_start(run(2, Some(1), "worker", false, true), 0);
        panel.on_start(run(3, None, "draft-tests", true, true), 0);
        panel.on_start(bg(4, "quick"), 0);
        panel.on_finish(4, FinishKind::Success, S);
        panel.on_finish(2, FinishKind::Failure, S);
        let view = panel.view(S, &g, false);
        assert_eq!(
            render_panel(&view),
            "main (+3)      running\n  lead (+1)    running\n    worker     failed\n  draft-tests  running\n/tasks to see subagents\n"
        );
        assert_eq!(
            render_tasks(&view),
            "/tasks\n  lead         running  sonnet\n  draft-tests  running  sonnet\n  quick        done     sonnet\n"
        );
        assert_eq!(
            render_tasks(&Panel::new().view(0, &g, false)),
            "/tasks\n  (no tasks)\n"
        );
        assert_eq!(render_panel(&Panel::new().view(0, &g, false)), "");
    }

    #[test]
    fn unnamed_runs_show_their_id_and_any_id_is_found() {
        let g = gates(292);
        let mut panel = Panel::new();
        panel.on_start(
            Started {
                name: None,
                ..bg(7, "")
            },
            0,
        );
        // An id far past the number of runs is kept in the map, not the vector.
        panel.on_start(bg(4_000_000_000, "far"), 0);
        let view = panel.view(0, &g, false);
        let labels: Vec<&str> = view.rows.iter().map(|row| row.label.as_str()).collect();
        assert_eq!(labels, ["a7", "far"]);
        assert!(panel.has_row(4_000_000_000, 0, &g));
        assert!(!panel.has_row(8, 0, &g));
    }

    #[test]
    fn a_window_opened_late_ends_first() {
        let g = gates(292);
        let mut panel = Panel::new();
        let mut out = Vec::new();
        panel.on_start(run(1, None, "fg", false, false), 0);
        panel.on_start(bg(2, "bg"), 0);
        panel.on_finish(1, FinishKind::Failure, S);
        panel.on_finish(2, FinishKind::Failure, 2 * S);
        assert_eq!(
            panel.update(2 * S, &g, false, &mut out),
            Some(2 * S + RETENTION)
        );
        // Ctrl+B on the finished foreground run: its row and its window (which ends
        // before run 2's) appear now.
        panel.on_background(1, 3 * S);
        out.clear();
        assert_eq!(
            panel.update(3 * S, &g, false, &mut out),
            Some(S + RETENTION)
        );
        assert_eq!(
            out,
            [PanelChange::RowAdded {
                row: RowId::Agent(1),
                rule: "RESUME-8"
            }]
        );
        out.clear();
        assert_eq!(
            panel.update(S + RETENTION, &g, false, &mut out),
            Some(2 * S + RETENTION)
        );
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn only_interactive_sessions_have_a_panel() {
        assert_eq!(
            session_has_panel(SessionKind::Interactive),
            (true, "PANEL-1")
        );
        assert!(!session_has_panel(SessionKind::Headless).0);
        assert!(!session_has_panel(SessionKind::Sdk).0);
    }

    #[test]
    fn keys_and_commands() {
        assert_eq!(
            x_key(RowId::Main, true, false),
            (XAction::TypeIntoPrompt, "PANEL-7")
        );
        assert_eq!(
            x_key(RowId::Agent(1), true, true).0,
            XAction::TypeIntoPrompt
        );
        assert_eq!(x_key(RowId::Agent(1), true, false).0, XAction::Stop);
        assert_eq!(x_key(RowId::Agent(1), false, false).0, XAction::Dismiss);

        let route = |input, patch| transcript_input(input, &gates(patch)).0;
        assert_eq!(route(ViewInput::Message, 292), ViewRoute::ViewedAgent);
        assert_eq!(route(ViewInput::Skill, 292), ViewRoute::ViewedAgent);
        assert_eq!(
            route(ViewInput::Command("clear"), 292),
            ViewRoute::MainAfterConfirmation
        );
        assert_eq!(route(ViewInput::Command("help"), 292), ViewRoute::Main);
        assert_eq!(
            route(ViewInput::Command("model"), 199),
            ViewRoute::Refused(messages::TRANSCRIPT_MAIN_SETTINGS_NOTICE)
        );
        assert_eq!(route(ViewInput::Command("fast"), 198), ViewRoute::Main);

        assert_eq!(
            read_now(Waiting::Backgroundable, &gates(286)),
            (ReadNow::MovedToBackground, "PANEL-10")
        );
        assert_eq!(
            read_now(Waiting::Backgroundable, &gates(285)).0,
            ReadNow::AfterCurrentWork
        );
        assert_eq!(
            read_now(Waiting::WritingResponse, &gates(292)).0,
            ReadNow::AfterCurrentWork
        );
        assert_eq!(
            read_now(Waiting::NotBackgroundable, &gates(292)).0,
            ReadNow::AfterCurrentWork
        );

        assert_eq!(
            agents_command(&gates(197)),
            (AgentsCommand::Wizard, "PANEL-11")
        );
        assert_eq!(
            agents_command(&gates(198)).0,
            AgentsCommand::Reminder(messages::AGENTS_REMINDER)
        );
        assert_eq!(
            startup_header(Some("code-reviewer")).as_deref(),
            Some("@code-reviewer")
        );
        assert_eq!(startup_header(None), None);
    }
}
