//! The agent slab: every run's record (`Agent`, written only by `Agent::init`), the slots
//! they live in and the indexes that find them (by id, by name).
//!
//! Memory grows with what is running, not with what ran: a vacant slot is reused with
//! the next generation (so a stale wake of the previous occupant never matches), and
//! anonymous load agents are kept out of the id map and released when their run ends.
//!
//! A released slot keeps its record, marked vacant (nothing finds it: every accessor
//! skips it), and the next run to take the slot overwrites that record field by field
//! (`Agent::init`) instead of building a new one on the stack and copying it in whole:
//! the copy of a record right after it was written field by field stalls on store
//! forwarding (docs/PERFORMANCE.md). A new slot gets a vacant record first
//! (`Agent::vacant`), so `init` is the one place a run's record is written.
//!
//! Its `#[inline(…)]` and `#[cold]` attributes are measured: docs/PERFORMANCE.md, "Choices
//! that need a benchmark".

use std::collections::BTreeMap;
use std::rc::Rc;

use subsim_rules::cap::Occupancy;
use subsim_rules::{Mode, PermissionMode};

use crate::event::{AgentId, AgentRef, Outcome, RunProfile, MAIN};
use crate::spec::{Program, Step};
use crate::time::SimTime;

/// Agent id → slot: ids are handed out in increasing order and the agents it holds stay
/// (only anonymous load runs, which it does not hold, are released), so a [`crate::ids::Window`] indexed by id (a vector, 8 bytes an id,
/// ids far from the rest held apart) finds a slot with one load. A hash map of a million
/// agents was a cache miss per lookup and per insert (and a rehash at each doubling).
pub(super) type IdMap = crate::ids::Window<u32>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Status {
    Running,
    Finished(Outcome),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Block {
    /// Ready to take its next step.
    Ready,
    /// A timer is pending.
    Timer,
    /// Waiting for its foreground children (FGBG-4).
    Foreground,
    /// Waiting for an answer to a prompt.
    Prompt(u64),
    /// `wait: {for: agent}`.
    Agent,
    /// `wait: {for: children}`.
    Children,
    /// `wait: {for: notification}`.
    Notification,
    /// Steps done; waiting for background children (NOTIFY-6).
    EndChildren,
    /// Steps done; waiting for background shell commands (NOTIFY-5, Q-5).
    EndBash,
    /// The main conversation's script is done.
    Idle,
}

pub(super) struct Frame {
    pub(super) program: Program,
    pub(super) pc: usize,
    pub(super) remaining: u32,
}

/// The facts of a new run's start, the one struct every door fills: an Agent call's
/// (`Kernel::spawn`), a teammate's (`Kernel::launch_teammate`), the person's `/subtask`
/// (`Kernel::start_subtask`) and main's (`Kernel::add_main`). The record is written from
/// it ([`Agent::init`]), with what the start works out beside it ([`Made`]); the rest of
/// the record starts empty. A door that starts a run through `Kernel::launch` gives the
/// rules' `Launch` and the call beside it too, which the record does not keep.
pub(super) struct Start {
    /// The caller's id and name (names never change: the one it had at the call); the run
    /// reports to it. Main's is main.
    pub(super) caller: AgentRef,
    /// The caller's slot (main's, 0, for main).
    pub(super) caller_slot: u32,
    pub(super) name: Option<Rc<str>>,
    /// The definition it runs (None for forks and main).
    pub(super) type_index: Option<usize>,
    /// DEPTH-1, Q-10, Q-44: the child's depth for this caller (`Kernel::launch_depth`).
    pub(super) depth: u32,
    /// The launch's mode (the rules'); foreground for main.
    pub(super) mode: Mode,
    /// The launch's permission mode (PERM-10/11/12); the session's for main.
    pub(super) permission_mode: PermissionMode,
    pub(super) fork: bool,
    /// RESUME-14: the per-invocation model of the spawn.
    pub(super) invocation_model: Option<Rc<str>>,
    /// HANDBACK-7/8: the spawn's classifier verdicts.
    pub(super) classifier: Option<crate::spec::ClassifierSpec>,
    /// SPAWN-11 / CAP-8: an agent-team teammate: no slot, its own tools (TOOLS-9).
    pub(super) teammate: bool,
    /// An Agent tool call (not the person's `/subtask`, not main): its name is one the
    /// conversation used (RESUME-12).
    pub(super) agent_call: bool,
    pub(super) from_load: bool,
}

/// What a new run's start works out beside its [`Start`] (`Kernel::launch`, from the
/// rules' launch, the call and the run's definition; main's are its own). Its profile and
/// program are borrowed: a reused record that already holds the same shared ones (every
/// run of a load, of a definition in one situation) keeps them, so a start costs no
/// reference-count increment and decrement for them (`Agent::init`).
pub(super) struct Made<'a> {
    pub(super) id: AgentId,
    pub(super) profile: &'a Rc<RunProfile>,
    pub(super) program: &'a Program,
    /// RESUME-3: returns no agent id.
    pub(super) one_shot: bool,
    pub(super) max_turns: Option<u32>,
}

/// What few runs have, kept out of the record (boxed on first use) so that the record
/// of every run is smaller: the `repeat` bodies being run, the agents waiting for it and
/// its own worktree.
#[derive(Default)]
pub(super) struct Rare {
    /// `repeat` bodies being run, innermost last.
    pub(super) stack: Vec<Frame>,
    /// `wait: {for: agent}` callers waiting for this run.
    pub(super) waiters: Vec<AgentId>,
    /// ISO-1: the agent's own temporary worktree, if its spawn asked for one (kept across
    /// its runs: a resume goes on in it, `sim/worktree`).
    pub(super) worktree: Option<Worktree>,
}

/// ISO-1: an agent's own temporary worktree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Worktree {
    /// A run of the agent is in it (made, or gone on in by a resume, and not ended).
    pub(super) open: bool,
    /// Changes made in it over its life (`rules::isolation::changes`).
    pub(super) changes: u32,
}

pub(super) struct Agent {
    pub(super) id: AgentId,
    /// The definition it runs (None for forks and main); see [`Agent::type_index`].
    type_slot: Option<u32>,
    /// NOTIFY-1: the run's last report text.
    pub(super) report: Option<Rc<str>>,
    /// ERR-1: continuation requests made for this run.
    pub(super) continuations: u32,
    /// HANDBACK-7/8: the classifier's verdicts for this run, if the spawn set them.
    pub(super) classifier: Option<crate::spec::ClassifierSpec>,
    /// RESUME-14: the per-invocation model of the spawn.
    invocation_model: Option<Rc<str>>,
    /// An agent-team teammate (SPAWN-11): its own limits, no slot (CAP-8).
    pub(super) teammate: bool,
    /// Its tool set was resolved for the background (filter 2 applied).
    pub(super) profile_background: bool,
    /// What the run runs with: type, model, effort, tools, context (RESUME-7: kept on
    /// resume, except the model where RESUME-14 says otherwise).
    pub(super) profile: Rc<RunProfile>,
    pub(super) name: Option<Rc<str>>,
    pub(super) depth: u32,
    pub(super) mode: Mode,
    pub(super) fork: bool,
    pub(super) permission_mode: PermissionMode,
    pub(super) one_shot: bool,
    pub(super) max_turns: Option<u32>,
    pub(super) from_load: bool,
    pub(super) status: Status,
    pub(super) user_cancelled: bool,
    /// The run's own program and position; `rare.stack` holds `repeat` bodies.
    pub(super) program: Program,
    pub(super) pc: u32,
    /// The `repeat` frames and waiters, if it ever had any.
    pub(super) rare: Option<Box<Rare>>,
    pub(super) block: Block,
    pub(super) gen: u32,
    pub(super) foreground_pending: u32,
    /// Which run of this agent is current (0 for the first, +1 per resume).
    pub(super) run: u32,
    /// Whether the caller is blocked on this run (foreground, not backgrounded).
    pub(super) awaited: bool,
    pub(super) children_running: u32,
    pub(super) bash_running: u32,
    pub(super) inbox: u32,
    pub(super) report_to: AgentId,
    pub(super) resumed: bool,
    pub(super) turns: u32,
    /// Words drawn from its behaviour stream so far (see `streams.rs`: the stream itself
    /// is re-made from the seed and the id at this position when it is not cached).
    pub(super) rng_words: u64,
    pub(super) finished_at: SimTime,
    /// Where the panel keeps this run's entry (`Panel::on_start`'s answer), or
    /// [`NO_PANEL_ENTRY`].
    pub(super) panel_entry: u32,
    /// The slot is free: the record is what its last occupant left, found by nothing.
    vacant: bool,
    /// `Agents::by_id` holds it (every run but an anonymous load run that has done
    /// nothing that hands its id out: see [`Agents::index`]).
    indexed: bool,
}

/// `Agent::panel_entry` of a run the panel has no entry for (yet).
pub(super) const NO_PANEL_ENTRY: u32 = u32::MAX;

impl Agent {
    /// A vacant record for a new slot at the end of the slab, holding the new run's shared
    /// profile and program: the only `Agent` literal. Its values are placeholders that
    /// [`Agent::init`] overwrites (its destructuring lists every field). Out of line: a
    /// slot is new only while the slab grows. (It takes the two references, not the
    /// [`Made`]: borrowing it would keep it in memory on the path that reuses a slot.)
    #[cold]
    #[inline(never)]
    fn vacant(profile: &Rc<RunProfile>, program: &Program) -> Agent {
        Agent {
            id: MAIN,
            type_slot: None,
            report: None,
            continuations: 0,
            classifier: None,
            invocation_model: None,
            teammate: false,
            profile_background: false,
            profile: profile.clone(),
            name: None,
            depth: 0,
            mode: Mode::Foreground,
            fork: false,
            permission_mode: PermissionMode::Default,
            one_shot: false,
            max_turns: None,
            from_load: false,
            status: Status::Running,
            user_cancelled: false,
            program: program.clone(),
            pc: 0,
            rare: None,
            block: Block::Ready,
            gen: 0,
            foreground_pending: 0,
            run: 0,
            awaited: false,
            children_running: 0,
            bash_running: 0,
            inbox: 0,
            report_to: MAIN,
            resumed: false,
            turns: 0,
            rng_words: 0,
            finished_at: SimTime::ZERO,
            panel_entry: NO_PANEL_ENTRY,
            vacant: true,
            indexed: false,
        }
    }

    /// A new run's record, the one constructor: writes it over a vacant record (a slot's
    /// last occupant's, or [`Agent::vacant`]'s for a new slot), field by field — what
    /// `start` and `made` say, everything else as an agent begins (nothing reported,
    /// pending or drawn yet), and the run's own start through [`Agent::begin_run`]. The
    /// destructurings list every field, so a field added to `Agent` must be set here (or
    /// in `begin_run`) too, and one added to `Start` read here or said to be the door's.
    #[inline(always)]
    fn init(&mut self, start: &Start, made: Made<'_>, gen: u32) {
        let Agent {
            id,
            type_slot,
            report,
            continuations,
            classifier,
            invocation_model,
            teammate,
            profile_background,
            profile,
            name,
            depth,
            fork,
            permission_mode,
            one_shot,
            max_turns,
            from_load,
            user_cancelled,
            foreground_pending,
            children_running,
            bash_running,
            inbox,
            report_to,
            rng_words,
            finished_at,
            panel_entry,
            vacant,
            indexed,
            // Set by `begin_run`, as for every run, a resumed one's too (the worktree below).
            status: _,
            mode: _,
            program: _,
            pc: _,
            rare,
            block: _,
            gen: _,
            run: _,
            resumed: _,
            awaited: _,
            turns: _,
        } = self;
        let Start {
            caller,
            name: start_name,
            type_index,
            depth: start_depth,
            mode: start_mode,
            permission_mode: start_permission_mode,
            fork: start_fork,
            invocation_model: start_model,
            classifier: start_classifier,
            teammate: start_teammate,
            from_load: start_from_load,
            // The door's own: where the caller lives, whether the name counts (RESUME-12).
            caller_slot: _,
            agent_call: _,
        } = start;
        *id = made.id;
        *type_slot = type_index.map(|index| index as u32);
        *report = None;
        *continuations = 0;
        *classifier = *start_classifier;
        invocation_model.clone_from(start_model);
        *teammate = *start_teammate;
        // Its tool set was resolved for the background (filter 2 applied).
        *profile_background = *start_mode == Mode::Background;
        // The same shared profile as the last occupant's: kept as it is.
        if !Rc::ptr_eq(profile, made.profile) {
            profile.clone_from(made.profile);
        }
        name.clone_from(start_name);
        *depth = *start_depth;
        *fork = *start_fork;
        *permission_mode = *start_permission_mode;
        *one_shot = made.one_shot;
        *max_turns = made.max_turns;
        *from_load = *start_from_load;
        *user_cancelled = false;
        *foreground_pending = 0;
        *children_running = 0;
        *bash_running = 0;
        *inbox = 0;
        *report_to = caller.id;
        *rng_words = 0;
        *finished_at = SimTime::ZERO;
        *panel_entry = NO_PANEL_ENTRY;
        *vacant = false;
        *indexed = false;
        // A new agent has no worktree yet (the door makes one, `Kernel::worktree_start`).
        if let Some(rare) = rare.as_deref_mut() {
            rare.worktree = None;
        }
        self.begin_run(made.program, *start_mode, gen, 0);
    }

    /// The start of a run, a new agent's first (`init`, run 0) or a resumed one's
    /// (`Kernel::resume`, RESUME-6: the next run under the same id): running in `mode`,
    /// ready at the first step of `program` with no `repeat` frame and no waiter (waiters
    /// are taken when a run ends), under generation `gen` (a stale wake of the last run
    /// never matches), nobody blocked on it yet, no turn taken. The one place these are
    /// set.
    #[inline(always)]
    pub(super) fn begin_run(&mut self, program: &Program, mode: Mode, gen: u32, run: u32) {
        self.status = Status::Running;
        self.mode = mode;
        // The same shared program as the last run's: kept as it is.
        if !Rc::ptr_eq(&self.program, program) {
            self.program.clone_from(program);
        }
        self.pc = 0;
        if let Some(rare) = self.rare.as_deref_mut() {
            rare.stack.clear();
            rare.waiters.clear();
        }
        self.block = Block::Ready;
        self.gen = gen;
        self.run = run;
        self.resumed = run > 0;
        self.awaited = false;
        self.turns = 0;
    }

    /// The definition it runs (None for forks and main).
    #[inline]
    pub(super) fn type_index(&self) -> Option<usize> {
        self.type_slot.map(|index| index as usize)
    }

    /// RESUME-14: the per-invocation model of the spawn.
    #[inline]
    pub(super) fn invocation_model(&self) -> Option<&Rc<str>> {
        self.invocation_model.as_ref()
    }

    /// The `repeat` frames being run, innermost last.
    #[inline]
    pub(super) fn stack(&self) -> &[Frame] {
        self.rare.as_deref().map_or(&[], |rare| &rare.stack)
    }

    /// The innermost `repeat` frame being run.
    #[inline]
    pub(super) fn stack_last_mut(&mut self) -> Option<&mut Frame> {
        self.rare
            .as_deref_mut()
            .and_then(|rare| rare.stack.last_mut())
    }

    /// Drops every `repeat` frame.
    #[inline]
    pub(super) fn clear_stack(&mut self) {
        if let Some(rare) = self.rare.as_deref_mut() {
            rare.stack.clear();
        }
    }

    /// ISO-1: the agent's own worktree, if it has one.
    #[inline]
    pub(super) fn worktree(&self) -> Option<Worktree> {
        self.rare.as_deref().and_then(|rare| rare.worktree)
    }

    /// ISO-1: the agent's own worktree, to change, if it has one.
    #[inline]
    pub(super) fn worktree_mut(&mut self) -> Option<&mut Worktree> {
        self.rare
            .as_deref_mut()
            .and_then(|rare| rare.worktree.as_mut())
    }

    /// The rarely used part of the record, made on first use.
    #[inline]
    pub(super) fn rare_mut(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Box::default)
    }

    /// Whether an agent waits for this run (`wait: {for: agent}`).
    #[inline]
    pub(super) fn has_waiters(&self) -> bool {
        self.rare
            .as_deref()
            .is_some_and(|rare| !rare.waiters.is_empty())
    }

    /// The agents waiting for this run, taken (none wait any more).
    #[inline]
    pub(super) fn take_waiters(&mut self) -> Vec<AgentId> {
        self.rare
            .as_deref_mut()
            .map(|rare| std::mem::take(&mut rare.waiters))
            .unwrap_or_default()
    }

    /// Whether its tool set was resolved for the background (TOOLS-6: a resumed run keeps
    /// the set of its first run, so this is the first run's placement).
    #[inline]
    pub(super) fn profile_mode_background(&self) -> bool {
        self.profile_background
    }

    #[inline]
    pub(super) fn reference(&self) -> AgentRef {
        AgentRef {
            id: self.id,
            name: self.name.clone(),
        }
    }
}

/// Reads `$record`'s fields given as `field => value read` (the fields of a
/// `$Type`), but only those [`spread`] picks from their offsets: one in each cache line
/// the fields lie in, whatever the layout the compiler chose. The choice is made at
/// compile time; the other reads are not compiled. Returns the values read, mixed.
macro_rules! read_spread {
    ($record:ident: $Type:ty; $($field:ident => $read:expr),+ $(,)?) => {{
        const COUNT: usize = [$(stringify!($field)),+].len();
        const PICKED: [bool; COUNT] = spread([$(std::mem::offset_of!($Type, $field)),+]);
        let mut mixed = 0u64;
        let mut index = 0;
        $(
            if PICKED[index] {
                mixed ^= $read;
            }
            index += 1;
        )+
        let _ = index;
        mixed
    }};
}

/// Of fields at `offsets` (bytes into a record), which to read so that every cache line
/// holding one of them is loaded: the lowest, then again and again the highest within 64
/// bytes above the last one picked (or, when there is none, the next one above it). Any
/// line between two picks no more than 64 bytes apart holds one of them, so with the
/// record at any address each line a field lies in is read (a field itself never
/// straddles two lines: the record is 8-aligned and so is every field of 8 bytes).
pub(super) const fn spread<const N: usize>(offsets: [usize; N]) -> [bool; N] {
    let mut picked = [false; N];
    if N == 0 {
        return picked;
    }
    let mut current = 0;
    let mut index = 1;
    while index < N {
        if offsets[index] < offsets[current] {
            current = index;
        }
        index += 1;
    }
    picked[current] = true;
    loop {
        let mut next = N;
        let mut index = 0;
        while index < N {
            let offset = offsets[index];
            if offset > offsets[current]
                && offset <= offsets[current] + 64
                && (next == N || offset > offsets[next])
            {
                next = index;
            }
            index += 1;
        }
        if next == N {
            let mut index = 0;
            while index < N {
                let offset = offsets[index];
                if offset > offsets[current] && (next == N || offset < offsets[next]) {
                    next = index;
                }
                index += 1;
            }
        }
        if next == N {
            return picked;
        }
        picked[next] = true;
        current = next;
    }
}

/// The number of records from which the slab grows fourfold, and to at least
/// [`SLAB_RESERVE`] records ([`Agents::new_slot`]).
const BIG_SLAB: usize = 1 << 10;

/// The least capacity of a slab grown past [`BIG_SLAB`] records: 262,144 records.
const SLAB_RESERVE: usize = 1 << 18;

/// Grows a full slab of `len` records (its `capacity`) with `try_reserve` (room for that
/// many more records; whether the allocator gave it): below [`BIG_SLAB`] records, or with
/// room left, nothing is asked (the push grows a small slab as any vector). Else four
/// times `len` and at least [`SLAB_RESERVE`] records are asked for; if refused, twice
/// `len`. Returns the room granted; `None` when nothing was asked or both were refused
/// (then the push grows the slab as any vector does, and the allocator's failure to give
/// even that aborts, as for any vector).
fn grow_slab(
    len: usize,
    capacity: usize,
    mut try_reserve: impl FnMut(usize) -> bool,
) -> Option<usize> {
    if len < capacity || len < BIG_SLAB {
        return None;
    }
    let wide = len.saturating_mul(4).max(SLAB_RESERVE) - len;
    if try_reserve(wide) {
        return Some(wide);
    }
    try_reserve(len).then_some(len)
}

/// The agent slab (main in slot 0) and its indexes.
pub(super) struct Agents {
    /// The records by slot; a vacant one (released) is skipped by every accessor.
    slots: Vec<Agent>,
    /// Vacant slots with their next generation.
    pub(super) free: Vec<(u32, u32)>,
    pub(super) by_id: IdMap,
    /// Running records `by_id` does not hold: anonymous load runs that have not handed
    /// their id out (see [`Agents::index`]).
    pub(super) unindexed: u32,
    /// Every run is indexed from its start: set once a text names by id an agent `by_id`
    /// does not hold while some are unindexed ([`Agents::lookup`]).
    index_all: bool,
    /// Whole-slab scans made (at most one a run: [`Agents::index_every_run`]); kept for
    /// the test that no per-event path scans the slab.
    pub(super) scans: u32,
    pub(super) next_id: AgentId,
    /// What runs now, as the moment-time admission counts it (`cap::Occupancy`: CAP-1's
    /// running count, …), changed only through `Kernel::count_start` / `count_end`.
    pub(super) occupancy: Occupancy,
    /// Who holds each name now.
    pub(super) names: BTreeMap<Rc<str>, AgentId>,
    /// RESUME-12: the agent each name first reached in this conversation.
    pub(super) reached: BTreeMap<Rc<str>, AgentId>,
}

impl Agents {
    /// Writes a new run's record into a vacant slot, from `start` and what `made` says, and
    /// indexes it; returns the slot and its generation. The start is borrowed, and the
    /// record written in place by the one inlined `init` on both paths (a new slot gets its
    /// vacant record out of line first). Measured on W1 (callgrind): a start moved in by
    /// value cost 35 instructions an arrival more, and one handed to an out-of-line
    /// function for the new slot 8 more (it stayed in memory on the path that reuses a slot
    /// too). A start moved into the record on both paths after a branch was also seen
    /// copied whole to another place on the stack first, with wider loads than the stores
    /// that had just built it, which stalls on store forwarding.
    #[inline(always)]
    pub(super) fn add(&mut self, start: &Start, made: Made<'_>) -> (u32, u32) {
        let (slot, gen) = match self.free.pop() {
            Some(found) => found,
            None => (self.new_slot(), 0),
        };
        let id = made.id;
        let unindexed = start.from_load && start.name.is_none() && !self.index_all;
        let record = match self.slots.get_mut(slot as usize) {
            Some(record) => record,
            None => self.push_vacant(made.profile, made.program),
        };
        record.init(start, made, gen);
        self.index_slot(slot, id, unindexed);
        (slot, gen)
    }

    /// A new slot's record, [`Agent::vacant`], pushed at the end of the slab. Out of line
    /// (the slab grows only until it holds the most records held at once).
    #[cold]
    #[inline(never)]
    fn push_vacant(&mut self, profile: &Rc<RunProfile>, program: &Program) -> &mut Agent {
        self.slots.push(Agent::vacant(profile, program));
        self.slots.last_mut().expect("a record was just pushed")
    }

    /// The slot a new record goes in (the end of the slab). Up to [`BIG_SLAB`] records
    /// the slab doubles, as any vector. A full slab of [`BIG_SLAB`] records or more is
    /// first grown to four times its size and to at least [`SLAB_RESERVE`] records: each
    /// growth copies every record into memory touched for the first time, so quadrupling
    /// copies a third of the records doubling does, and a run that holds a thousand agents
    /// at once is a load test that will likely hold many more (W2 and W4's peak memory,
    /// docs/PERFORMANCE.md). Capacity past the last record is never written, so it takes no
    /// memory, only address space (52 MB at [`SLAB_RESERVE`]). If the allocator refuses
    /// that, the slab doubles ([`grow_slab`]): the fourfold request must not be what ends
    /// a run that doubling would have carried (under `ulimit -v` the fourfold request can
    /// fail long before memory runs out). Out of line: the path that reuses a slot, every
    /// load arrival's, does not carry the check.
    #[inline(never)]
    fn new_slot(&mut self) -> u32 {
        let len = self.slots.len();
        let slots = &mut self.slots;
        grow_slab(len, slots.capacity(), |extra| {
            slots.try_reserve_exact(extra).is_ok()
        });
        len as u32
    }

    /// Records in the slab, vacant ones included: the most held at once so far, since a
    /// vacant slot is reused before the slab grows (`max_held`).
    pub(super) fn records(&self) -> usize {
        self.slots.len()
    }

    /// An empty slab.
    pub(super) fn new() -> Agents {
        Agents {
            slots: Vec::new(),
            free: Vec::new(),
            by_id: IdMap::default(),
            unindexed: 0,
            index_all: false,
            scans: 0,
            next_id: 1,
            occupancy: Occupancy::default(),
            names: BTreeMap::new(),
            reached: BTreeMap::new(),
        }
    }

    /// The record in `slot`, if the slot holds one.
    #[inline]
    pub(super) fn at(&self, slot: u32) -> Option<&Agent> {
        self.slots.get(slot as usize).filter(|agent| !agent.vacant)
    }

    /// The record in `slot`, if the slot holds one.
    #[inline]
    pub(super) fn at_mut(&mut self, slot: u32) -> Option<&mut Agent> {
        self.slots
            .get_mut(slot as usize)
            .filter(|agent| !agent.vacant)
    }

    /// Reads the record in `slot` where a wake and an end of its run will (see `ahead.rs`):
    /// of the fields they read, one in each cache line those fields lie in (chosen from
    /// the record's layout at compile time, [`spread`]), so that loading a record ahead
    /// costs a few instructions and all its lines. Returns what it read, mixed; changes
    /// nothing.
    #[inline]
    pub(super) fn preload(&self, slot: u32) -> u64 {
        let Some(agent) = self.slots.get(slot as usize) else {
            return 0;
        };
        read_spread!(agent: Agent;
            vacant => u64::from(agent.vacant),
            gen => u64::from(agent.gen),
            status => u64::from(agent.status == Status::Running),
            block => u64::from(agent.block == Block::Ready),
            pc => u64::from(agent.pc),
            rare => u64::from(agent.rare.is_some()),
            program => Rc::as_ptr(&agent.program) as *const Step as usize as u64,
            profile => Rc::as_ptr(&agent.profile) as usize as u64,
            type_slot => u64::from(agent.type_slot.unwrap_or(0)),
            id => u64::from(agent.id),
            report_to => u64::from(agent.report_to),
            report => u64::from(agent.report.is_some()),
            name => u64::from(agent.name.is_some()),
            children_running => u64::from(agent.children_running),
            turns => u64::from(agent.turns),
            rng_words => agent.rng_words,
            finished_at => agent.finished_at.as_micros(),
            panel_entry => u64::from(agent.panel_entry),
        )
    }

    /// Every record with its slot, in slot order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, &Agent)> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, agent)| !agent.vacant)
            .map(|(slot, agent)| (slot as u32, agent))
    }

    /// How many slots there are (held or vacant): a bound on the agents held at once.
    pub(super) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The slot of the agent `id`, if it is held and indexed: one lookup in `by_id`,
    /// never a scan of the slab. A run `by_id` does not hold is an anonymous load run
    /// that has not handed its id out ([`Agents::index`]): nothing holds its id to look
    /// it up with, but for a text that names it, which [`Agents::lookup`] resolves (debug
    /// builds check that no caller asks for one).
    #[inline]
    pub(super) fn slot_of(&self, id: AgentId) -> Option<u32> {
        let found = self.find(id);
        debug_assert!(
            found.is_some() || self.unindexed == 0 || !self.holds(id),
            "kernel invariant: agent {id} was looked up by id before it was indexed"
        );
        found
    }

    /// [`Agents::slot_of`] without its debug check (for [`Agents::reference`], which an
    /// unindexed run answers the same either way).
    #[inline]
    fn find(&self, id: AgentId) -> Option<u32> {
        if id == MAIN {
            return Some(0);
        }
        self.by_id.get(u64::from(id)).copied()
    }

    /// Whether a record for `id` is held, indexed or not (a scan: debug checks only).
    fn holds(&self, id: AgentId) -> bool {
        self.slots
            .iter()
            .any(|agent| !agent.vacant && agent.id == id)
    }

    /// Indexes the run in `slot` if `by_id` does not hold it yet. An anonymous load run
    /// is kept out of `by_id` for speed while nothing can ask for
    /// it by id; the kernel calls this before such a run takes a step that hands its id
    /// out — any step but `work`, `sleep`, `report`, `tool`, `fail` and `repeat`: a
    /// spawn (its children report to it), a send, a stop, a wait, a shell — so every id
    /// held anywhere is found by [`Agents::slot_of`] in one lookup (a scan of the slab for
    /// the rest would make a load of workers that each spawn a helper O(n²)).
    #[inline]
    pub(super) fn index(&mut self, slot: u32) {
        let agent = &mut self.slots[slot as usize];
        debug_assert!(!agent.vacant, "slot holds an agent");
        if agent.indexed {
            return;
        }
        agent.indexed = true;
        let id = agent.id;
        self.unindexed -= 1;
        self.by_id.insert(u64::from(id), slot);
    }

    /// Indexes every run held and every run started from now on: the one scan of the
    /// slab, made at most once a run, when a text names by id an agent `by_id` does not
    /// hold while some runs are unindexed ([`Agents::lookup`]).
    #[cold]
    #[inline(never)]
    fn index_every_run(&mut self) {
        self.index_all = true;
        self.scans += 1;
        for slot in 0..self.slots.len() {
            if !self.slots[slot].vacant {
                self.index(slot as u32);
            }
        }
        debug_assert_eq!(self.unindexed, 0);
    }

    #[inline]
    pub(super) fn get(&self, slot: u32) -> &Agent {
        let agent = &self.slots[slot as usize];
        debug_assert!(!agent.vacant, "slot holds an agent");
        agent
    }

    #[inline]
    pub(super) fn get_mut(&mut self, slot: u32) -> &mut Agent {
        let agent = &mut self.slots[slot as usize];
        debug_assert!(!agent.vacant, "slot holds an agent");
        agent
    }

    #[inline]
    pub(super) fn reference(&self, id: AgentId) -> AgentRef {
        // An unindexed run is anonymous: not finding it gives the same answer.
        match self.find(id) {
            Some(slot) => self.get(slot).reference(),
            None => AgentRef { id, name: None },
        }
    }

    #[inline]
    pub(super) fn is_running(&self, id: AgentId) -> bool {
        self.slot_of(id)
            .is_some_and(|slot| self.get(slot).status == Status::Running)
    }

    /// The text of a run's `name`: the one a run already holds under that name, shared,
    /// else a new one.
    pub(super) fn shared_name(&self, name: &str) -> Rc<str> {
        match self.names.get_key_value(name) {
            Some((held, _)) => Rc::clone(held),
            None => Rc::from(name),
        }
    }

    /// Resolves a `to` / `stop` / `wait.for` value: an id (`a3`, `main`) or a name (the
    /// agent that holds it now). An id `by_id` does not hold while some runs are not
    /// indexed may be one of them: then every run is indexed, once a run
    /// ([`Agents::index_every_run`]), and the id looked up again.
    pub(super) fn lookup(&mut self, text: &str) -> Option<AgentId> {
        if text == "main" {
            return Some(MAIN);
        }
        if let Some(id) = self.names.get(text) {
            return Some(*id);
        }
        let id = text.strip_prefix('a')?.parse::<AgentId>().ok()?;
        if self.find(id).is_none() && self.unindexed > 0 {
            self.index_every_run();
        }
        self.find(id).map(|_| id)
    }

    /// Records where the agent `id` that was just written into `slot` lives.
    #[inline]
    fn index_slot(&mut self, slot: u32, id: AgentId, unindexed: bool) {
        if unindexed {
            self.unindexed += 1;
        } else {
            self.slots[slot as usize].indexed = true;
            self.by_id.insert(u64::from(id), slot);
        }
    }

    /// Frees `slot` for reuse with the next generation. Its record stays where it lies,
    /// vacant (see the module doc), but for what it holds that could be large.
    #[inline]
    pub(super) fn release(&mut self, slot: u32) {
        let agent = &mut self.slots[slot as usize];
        debug_assert!(!agent.vacant, "kernel invariant: a slot is released once");
        if agent.vacant {
            return;
        }
        agent.vacant = true;
        let (id, gen, indexed) = (agent.id, agent.gen, agent.indexed);
        if indexed {
            self.by_id.remove(u64::from(id));
        } else {
            self.unindexed -= 1;
        }
        self.free.push((slot, gen.wrapping_add(1)));
    }
}

/// The kernel's view of [`Agents::occupancy`]: the counts the moment-time admission reads
/// (kernel state, like the panel model's; no decision is asked here).
impl super::Kernel<'_> {
    /// The subagents holding a slot now (`cap::Occupancy`: what CAP-1 counts, every
    /// event's `running`).
    #[inline(always)]
    pub(super) fn running(&self) -> u32 {
        self.agents.occupancy.running()
    }

    /// CAP-5/6/7: a run of the type at `type_key` took a slot (a teammate takes none,
    /// CAP-8); the moment-time admission's counts go up (`cap::Occupancy::started`).
    #[inline(always)]
    pub(super) fn count_start(&mut self, type_key: Option<usize>) {
        self.agents.occupancy.started(type_key);
    }

    /// A run of the type at `type_key` that held a slot ended; the counts go down
    /// (`cap::Occupancy::ended`).
    #[inline(always)]
    pub(super) fn count_end(&mut self, type_key: Option<usize>) {
        self.agents.occupancy.ended(type_key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;
    use crate::sim::Kernel;
    use crate::spec::{SimSpec, SpawnSpec, WaitTarget};

    /// Adds a run to `agents`: an anonymous load run when `from_load`, else main's
    /// kind of record (indexed from its start).
    fn add_run(agents: &mut Agents, from_load: bool) -> (AgentId, u32) {
        let profile = Rc::new(RunProfile::new("worker", "sonnet", &[]));
        let program: Program = Rc::from(Vec::new());
        let id = agents.next_id;
        agents.next_id += 1;
        let start = Start {
            caller: AgentRef::MAIN,
            caller_slot: 0,
            name: None,
            type_index: None,
            depth: 1,
            mode: Mode::Background,
            permission_mode: PermissionMode::Default,
            fork: false,
            invocation_model: None,
            classifier: None,
            teammate: false,
            agent_call: from_load,
            from_load,
        };
        let (slot, _) = agents.add(
            &start,
            Made {
                id,
                profile: &profile,
                program: &program,
                one_shot: false,
                max_turns: None,
            },
        );
        (id, slot)
    }

    /// Issue #7 (kreview defect 1): `slot_of` scanned the slab for anonymous load runs, so
    /// a load of workers that each spawn a helper cost O(n²) (80k arrivals: 24 s). An
    /// unindexed run is not found by id (`find` is one lookup, no scan) until it is
    /// indexed, and `index` makes it found, once, and `release` forgets it either way.
    #[test]
    fn a_load_run_is_found_by_id_only_once_indexed_never_by_a_scan() {
        let mut agents = Agents::new();
        let (main, _) = add_run(&mut agents, false);
        assert_eq!(main, 1);
        let (worker, worker_slot) = add_run(&mut agents, true);
        let (other, other_slot) = add_run(&mut agents, true);
        assert_eq!(agents.unindexed, 2);
        assert_eq!(agents.find(worker), None);
        agents.index(worker_slot);
        agents.index(worker_slot);
        assert_eq!(agents.unindexed, 1);
        assert_eq!(agents.slot_of(worker), Some(worker_slot));
        assert_eq!(agents.find(other), None);
        agents.release(worker_slot);
        agents.release(other_slot);
        assert_eq!(agents.unindexed, 0);
        assert_eq!(agents.slot_of(worker), None);
        // The next run in the slot starts unindexed again.
        let (next, next_slot) = add_run(&mut agents, true);
        assert!(next_slot == worker_slot || next_slot == other_slot);
        assert_eq!(agents.find(next), None);
        assert_eq!(agents.scans, 0);
    }

    /// Debug builds catch a caller that asks `slot_of` for a run it was never handed
    /// (the run was not indexed before it handed its id out): what used to be a scan.
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "looked up by id before it was indexed")]
    fn slot_of_an_unindexed_run_is_a_caller_bug_in_debug_builds() {
        let mut agents = Agents::new();
        add_run(&mut agents, false);
        let (worker, _) = add_run(&mut agents, true);
        let _ = agents.slot_of(worker);
    }

    /// A text naming an unindexed run by id (`stop: a3`) indexes every run, with one scan
    /// for the whole run: later lookups and later runs need none.
    #[test]
    fn a_text_naming_a_load_run_indexes_every_run_once() {
        let mut agents = Agents::new();
        add_run(&mut agents, false);
        let (first, first_slot) = add_run(&mut agents, true);
        let (second, second_slot) = add_run(&mut agents, true);
        assert_eq!(agents.lookup(&format!("a{first}")), Some(first));
        assert_eq!(agents.scans, 1);
        assert_eq!(agents.unindexed, 0);
        assert_eq!(agents.slot_of(second), Some(second_slot));
        assert_eq!(agents.lookup(&format!("a{second}")), Some(second));
        let (third, third_slot) = add_run(&mut agents, true);
        assert_eq!(agents.slot_of(third), Some(third_slot));
        assert_eq!(agents.lookup("a999"), None);
        agents.release(first_slot);
        assert_eq!(agents.lookup(&format!("a{first}")), None);
        assert_eq!(agents.scans, 1);
    }

    /// A load of workers that each spawn a helper (W5's shape), then run a shell, wait for
    /// their children and report: every worker is indexed before it hands its id out, so
    /// no lookup the run makes scans the slab (debug builds check each one) and no text
    /// lookup forced the one scan. Mid-run, every worker with a child running is found by
    /// its id in one lookup.
    #[test]
    fn load_workers_that_spawn_are_found_without_a_scan_of_the_slab() {
        let mut spec = SimSpec::poisson_load("w5", 50.0, SimTime::from_secs(1), 400);
        spec.session.admission.ultracode = true;
        let helper = Rc::from(vec![
            Step::Work(Dist::fixed(20_000_000)),
            Step::Report(Rc::from("done")),
        ]);
        let worker: Program = Rc::from(vec![
            Step::Spawn(SpawnSpec {
                agent: Some("general-purpose".into()),
                count: 1,
                background: Some(true),
                behavior: Some(helper),
                ..SpawnSpec::default()
            }),
            Step::BashBackground(Dist::fixed(1_000_000)),
            Step::WaitFor(WaitTarget::Children),
            Step::Report(Rc::from("done")),
        ]);
        spec.agents
            .get_mut("worker")
            .expect("poisson_load's worker")
            .behavior = Some(worker);
        // Mid-run (at 5 s): every worker with a helper running is found by its id.
        let mut sink = |_: &crate::event::Event| {};
        let mut kernel = Kernel::new(spec.clone(), crate::sim::Out::sink(&mut sink));
        kernel.clock.stop_at = Some(SimTime::from_secs(5));
        kernel.run();
        let mut waiting = 0;
        for (slot, agent) in kernel.agents.iter() {
            if agent.from_load && agent.children_running > 0 {
                waiting += 1;
                assert_eq!(kernel.agents.find(agent.id), Some(slot));
            }
        }
        assert!(
            waiting > 100,
            "{waiting} workers wait for their helpers at 5 s"
        );
        drop(kernel);
        // To the end: no scan, nothing left unindexed, every worker and helper finished.
        let mut finished = 0;
        let mut sink = |event: &crate::event::Event| {
            if event.kind.name() == "agent_finished" {
                finished += 1;
            }
        };
        let mut kernel = Kernel::new(spec, crate::sim::Out::sink(&mut sink));
        kernel.run();
        assert!(kernel.trace.limit.is_none());
        assert_eq!(kernel.agents.scans, 0);
        assert_eq!(kernel.agents.unindexed, 0);
        // Main and the 400 helpers (not load runs: their records stay); the workers,
        // indexed once they spawned, were forgotten when they ended.
        assert_eq!(kernel.agents.by_id.len(), 401);
        drop(kernel);
        assert_eq!(finished, 800);
    }

    /// REVIEW defect 8: a full slab asks for fourfold room (at least `SLAB_RESERVE`
    /// records), and when the allocator refuses that, for twice its size; when both are
    /// refused the push's own growth is left to abort as for any vector. A slab below
    /// `BIG_SLAB` records or with room left asks nothing.
    #[test]
    fn grow_slab_falls_back_to_doubling_when_fourfold_is_refused() {
        // The allocator gives up to `limit` records in all.
        let grow = |len: usize, capacity: usize, limit: usize| {
            let mut asked = Vec::new();
            let granted = grow_slab(len, capacity, |extra| {
                asked.push(extra);
                len + extra <= limit
            });
            (granted, asked)
        };
        let big = SLAB_RESERVE;
        assert_eq!(grow(big, big, usize::MAX), (Some(3 * big), vec![3 * big]));
        assert_eq!(
            grow(BIG_SLAB, BIG_SLAB, usize::MAX),
            (Some(SLAB_RESERVE - BIG_SLAB), vec![SLAB_RESERVE - BIG_SLAB])
        );
        assert_eq!(grow(big, big, 3 * big), (Some(big), vec![3 * big, big]));
        assert_eq!(grow(big, big, 2 * big - 1), (None, vec![3 * big, big]));
        assert_eq!(grow(big, big + 1, usize::MAX), (None, vec![]));
        assert_eq!(grow(BIG_SLAB - 1, BIG_SLAB - 1, usize::MAX), (None, vec![]));
        // No overflow in the request however large the slab.
        let huge = usize::MAX / 2;
        assert_eq!(grow(huge, huge, usize::MAX).1[0], usize::MAX - huge);
    }

    /// The record's size, pinned: W2 holds a million of them at once, and every byte more
    /// is pages to fault in and TLB entries to miss (the rarely used `repeat` stack and
    /// waiters are boxed into `Rare` for it).
    #[test]
    fn agent_record_size_is_pinned() {
        assert_eq!(std::mem::size_of::<Agent>(), 200);
    }

    /// `spread` picks the lowest offset, then the highest within 64 bytes of the last
    /// pick (or the next one up past a wider gap), in any order of the offsets given.
    #[test]
    fn spread_picks_one_field_per_64_bytes() {
        assert_eq!(
            spread([0, 8, 60, 100, 130, 240]),
            [true, false, true, true, true, true]
        );
        assert_eq!(spread([64, 0, 32, 16]), [true, true, false, false]);
        assert_eq!(spread([200, 8]), [true, true]);
        assert_eq!(spread([5]), [true]);
        assert_eq!(spread::<0>([]), []);
    }

    /// Whatever the layout, the fields `Agents::preload` reads leave no gap over 64
    /// bytes that holds one it skips: every cache line of the record's wake fields is read.
    #[test]
    fn spread_covers_every_line_of_its_fields() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2_000 {
            let mut offsets = [0usize; 12];
            for offset in &mut offsets {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *offset = (state % 400) as usize;
            }
            let picked = spread(offsets);
            for base in 0..64 {
                let line = |offset: usize| (base + offset) / 64;
                for &offset in &offsets {
                    assert!(
                        offsets
                            .iter()
                            .zip(&picked)
                            .any(|(&other, &read)| read && line(other) == line(offset)),
                        "{offsets:?} at {base}: the line of {offset} is not read"
                    );
                }
            }
        }
    }
}
