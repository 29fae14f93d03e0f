//! Run statistics: a [`Summary`] sink that aggregates the trace as it streams by, and
//! renders the result as an aligned text table or as JSON.
//!
//! Memory is constant per event, except that the waits of answered permission prompts are
//! kept (one `u64` each) for the 95th percentile. It measures what the trace says; it
//! makes no decisions and knows no rules.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::rc::Rc;

use subsim_rules::notify::Notice;
use subsim_rules::prompt::RoutedTo;
use subsim_rules::RejectReason;

use crate::event::{Event, EventKind, Limit, Outcome};
use crate::ids::IdMap;
use crate::render::jsonl::write_string;
use crate::sink::Sink;
use crate::spec::{Retry, SimSpec};
use crate::stats::{BatchMeans, Distribution, Estimate, Quantiles, ShareMeans};
use crate::time::{human_duration, SimTime};

/// The outcomes in the order tables list them.
const OUTCOMES: [Outcome; 5] = [
    Outcome::Completed,
    Outcome::Partial,
    Outcome::Failed,
    Outcome::Stopped,
    Outcome::Cancelled,
];

/// Where a prompt can be shown, as tables and JSON name it, in their (alphabetical)
/// order: counted by index, not looked up by name per prompt.
const ROUTES: [&str; 3] = ["main", "terminal", "unrouted"];

/// Where a prompt was shown, as [`ROUTES`]'s index (an enum, so that a waiting prompt's
/// entry in `Summary::pending` takes 8 bytes).
#[derive(Clone, Copy, Debug)]
enum Shown {
    Main = 0,
    Terminal = 1,
    Unrouted = 2,
}

/// Where a prompt was shown.
#[inline]
fn route_index(routed_to: Option<RoutedTo>) -> Shown {
    match routed_to {
        Some(RoutedTo::Main) => Shown::Main,
        Some(RoutedTo::Terminal) => Shown::Terminal,
        None => Shown::Unrouted,
    }
}

/// Aggregate statistics of one run.
///
/// ```
/// use subsim_engine::summary::Summary;
/// use subsim_engine::{AgentRef, Event, EventKind, Outcome, SimTime, Sink};
/// let mut summary = Summary::default();
/// summary.event(&Event { t: SimTime::from_secs(10), seq: 0, rule: None,
///     kind: EventKind::AgentFinished { agent: AgentRef { id: 1, name: None },
///         outcome: Outcome::Completed, running: 0, detail: None } });
/// assert_eq!(summary.makespan(), SimTime::from_secs(10));
/// assert!(summary.render_json().contains("\"completed\":1"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Summary {
    events: u64,
    cap: Option<u32>,
    spawns_requested: u64,
    started: u64,
    rejected: [u64; RejectReason::ALL.len()],
    rejected_other: u64,
    resumes: u64,
    resumes_past_cap: u64,
    running: u32,
    peak_running: u32,
    /// ∫ running dt, in running·µs, up to `area_to` (µs): the count is constant between
    /// its changes, so the area grows only when it changes ([`Summary::set_running`]), and
    /// [`Summary::running_area`] adds the part since.
    running_area: u128,
    area_to: u64,
    last_t: SimTime,
    /// Prompts shown, by where ([`ROUTES`]'s index; a route none was shown at has 0).
    prompts_by_route: [u64; ROUTES.len()],
    auto_denied: u64,
    withdrawn: u64,
    /// Prompt number → where it was shown and its type's index in `prompt_types`, while
    /// it waits for an answer (one window for both: one insert and one remove a prompt).
    pending: crate::ids::Window<(Shown, u32)>,
    /// Where a prompt was shown ([`ROUTES`]'s index) → the waits of its answered prompts,
    /// µs (empty: none answered there).
    waits: [Vec<u64>; ROUTES.len()],
    finished: [u64; OUTCOMES.len()],
    /// Notifications by `what`, at [`Notice::ALL`]'s index.
    notifications: [u64; Notice::ALL.len()],
    limit: Option<(Limit, u64)>,
    /// The load generator's arrivals.
    load: LoadStats,
    /// Waits of answered prompts, every route (from the warm-up on).
    prompt_waits: Quantiles,
    /// Prompts shown and not yet answered, over time.
    prompt_queue: TimeAverage,
    /// Per type of the asking agent, in order of first prompt: waits and queue length.
    prompt_types: Vec<(Rc<str>, PromptStats)>,
    /// The type of the last prompt, with its index in `prompt_types`: the kernel hands
    /// out the same `Rc` again and again, so a pointer compare finds it.
    prompt_type_cache: Option<(Rc<str>, usize)>,
    /// Whether `prompt_types` keep their statistics apart from the totals. Until then
    /// there is at most one type, every prompt shown was of it and every answer and
    /// withdrawal found its prompt, so its waits and queue are `prompt_waits` and
    /// `prompt_queue` exactly: they are recorded once, and copied to the type when that
    /// stops being true ([`Summary::prompt_types_apart`]).
    types_apart: bool,
}

/// One agent type's prompts: waits of the answered ones (shown at or after the warm-up),
/// and how many of its prompts are shown and not yet answered, over time.
#[derive(Clone, Debug, Default)]
struct PromptStats {
    waits: Quantiles,
    queue: TimeAverage,
}

/// Prompt statistics of one agent type ([`Summary::prompt_report_by_type`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PromptTypeReport {
    /// The asking agents' type (`main` for the main session).
    pub agent_type: String,
    /// Waits of its answered prompts, shown → answered, s.
    pub waits: SecondsDistribution,
    /// Time-weighted mean number of its prompts shown and not yet answered.
    pub queue: Estimate,
    /// The most of its prompts shown and not yet answered at once.
    pub queue_peak: u32,
}

/// Statistics of the load generator's arrivals (`load:`), after the warm-up: arrivals and
/// attempts, blocking, delayed share, waits from the first request to the start, the
/// time-weighted running count; in total and per agent type.
#[derive(Clone, Debug, Default)]
struct LoadStats {
    /// `load.warmup`, µs: arrivals first requested before it are left out, and time
    /// averages start there.
    warmup: u64,
    /// Whether the load's `retry` policy tries rejected arrivals again (of any stream).
    retries: bool,
    /// Some streams retry and others do not: the delayed share is counted apart from
    /// blocking (`TypeLoad::delayed`).
    mixed: bool,
    /// The named streams (the list form of `load`), in list order, with whether each
    /// retries and its statistics (no running count: that is per type).
    streams: Vec<(Rc<str>, bool, TypeLoad)>,
    /// The load request whose outcome comes next: (arrival, type index, stream index or
    /// [`NO_STREAM`], first attempt?).
    pending: Option<(u64, usize, usize, bool)>,
    /// Arrivals rejected by the cap that a retry may still start: arrival → (first request,
    /// µs; type index; stream index; counted, i.e. after the warm-up).
    waiting: BTreeMap<u64, (u64, usize, usize, bool)>,
    /// Running agents by id → their type index (for per-type running means), for every
    /// type but the first one started (the usual only one), so that a load of one type
    /// pays for no map; resumed runs map to [`NOT_TRACKED`].
    running_types: RunningTypes,
    all: TypeLoad,
    types: Vec<(Rc<str>, TypeLoad)>,
    /// Runs finished after the warm-up.
    finished: u64,
    /// The last type name seen by `requested` and by `started`, with its index: the
    /// kernel hands out the same `Rc` again and again, so a pointer compare finds it.
    request_cache: Option<(Rc<str>, usize)>,
    start_cache: Option<(Rc<str>, usize)>,
    /// A run of another type than type 0, or a resume, came: type 0's running count is
    /// kept apart from the total's. Until then it is the total's (see `split_running`).
    split: bool,
    /// The run has no load generator ([`Summary::for_spec`] of a spec without `load`): no
    /// arrival will come and nothing here is reported, so runs are not followed per type.
    /// (A [`Summary::new`] does not know, and follows them.)
    off: bool,
}

/// `running_types` value of a resumed run, counted in the total running only.
const NOT_TRACKED: usize = usize::MAX;

/// Running agents by id → type index. Agent ids are handed out in start order, so the
/// running ones lie in a window of ids: a vector over that window (one byte per id,
/// trimmed from the front as the oldest end) answers without hashing, and stays a few
/// megabytes where a map of a million running agents misses the cache on every finish.
/// Ids before the window (a resumed old agent), ids far past it and type indices that do
/// not fit go in a map.
#[derive(Clone, Debug, Default)]
struct RunningTypes {
    /// The id of `window[0]`.
    base: u32,
    /// 0: not running here; `u8::MAX`: [`NOT_TRACKED`]; else the type index + 1.
    window: VecDeque<u8>,
    /// Non-zero entries of `window`.
    in_window: usize,
    others: IdMap<usize>,
}

impl RunningTypes {
    fn is_empty(&self) -> bool {
        self.in_window == 0 && self.others.is_empty()
    }

    fn encode(index: usize) -> Option<u8> {
        if index == NOT_TRACKED {
            Some(u8::MAX)
        } else {
            u8::try_from(index + 1).ok().filter(|&code| code < u8::MAX)
        }
    }

    fn insert(&mut self, id: u32, index: usize) {
        self.remove(id);
        if self.in_window == 0 {
            self.window.clear();
            self.base = id;
        }
        let (Some(code), Some(offset)) = (Self::encode(index), id.checked_sub(self.base)) else {
            self.others.insert(id, index);
            return;
        };
        let offset = offset as usize;
        if offset >= self.window.len() {
            if offset > 4 * self.window.len() + 4096 {
                self.others.insert(id, index);
                return;
            }
            self.window.resize(offset + 1, 0);
        }
        self.window[offset] = code;
        self.in_window += 1;
    }

    /// Reads where `id`'s type is kept ([`Sink::preload`]).
    #[inline]
    fn preload(&self, id: u32) -> u64 {
        id.checked_sub(self.base)
            .and_then(|offset| self.window.get(offset as usize))
            .map_or(0, |&code| u64::from(code))
    }

    fn remove(&mut self, id: u32) -> Option<usize> {
        let offset = id.checked_sub(self.base).map(|offset| offset as usize);
        match offset.and_then(|offset| self.window.get_mut(offset)) {
            Some(code) if *code != 0 => {
                let index = match std::mem::take(code) {
                    u8::MAX => NOT_TRACKED,
                    code => usize::from(code) - 1,
                };
                self.in_window -= 1;
                while self.window.front() == Some(&0) {
                    self.window.pop_front();
                    self.base = self.base.wrapping_add(1);
                }
                Some(index)
            }
            _ => self.others.remove(&id),
        }
    }
}

/// The stream index of an arrival of the single form of `load` (no named streams).
const NO_STREAM: usize = usize::MAX;

/// One agent type's (or all) load statistics.
#[derive(Clone, Debug, Default)]
struct TypeLoad {
    arrivals: u64,
    attempts: u64,
    rejected_attempts: u64,
    /// 1 per arrival whose first attempt the cap rejected, else 0.
    blocked: ShareMeans,
    /// 1 per arrival that was rejected by the cap and will try again, else 0; kept only
    /// when some streams retry and others do not (else it is `blocked`, or nothing).
    delayed: ShareMeans,
    /// First request → start, µs, of every started arrival (0 for a first-attempt start).
    wait: Quantiles,
    /// The same, of delayed arrivals only.
    delayed_wait: Quantiles,
    /// Running count of this type (for `all`: every run, resumes included).
    running: TimeAverage,
    /// Arrivals started at their first attempt (after the warm-up) not yet counted in the
    /// fields above. Each is an arrival, an attempt, a 0 for `blocked` (and for `delayed`
    /// when kept) and a wait of 0: the usual arrival of a load run is one add here, and
    /// [`TypeLoad::settle`] counts them in bulk before anything else is counted or read,
    /// which leaves exactly what counting them one by one left.
    first_starts: u64,
}

impl TypeLoad {
    /// Counts the pending `first_starts` (`mixed`: `delayed` is kept).
    fn settle(&mut self, mixed: bool) {
        let count = std::mem::take(&mut self.first_starts);
        if count > 0 {
            self.arrivals += count;
            self.attempts += count;
            self.blocked.add_zeros(count);
            if mixed {
                self.delayed.add_zeros(count);
            }
            self.wait.record_zeros(count);
        }
    }

    /// A copy with the pending `first_starts` counted, for a report.
    fn settled(&self, mixed: bool) -> TypeLoad {
        let mut stats = self.clone();
        stats.settle(mixed);
        stats
    }
}

/// A time-weighted average of a count, batched for its interval, from the warm-up on.
#[derive(Clone, Debug, Default)]
struct TimeAverage {
    value: u32,
    last_t: u64,
    peak: u32,
    batches: BatchMeans,
}

/// `micros as f64`, the same value: converted as an `i64` when it is one (a single
/// instruction on x86-64, where converting a `u64` takes six).
#[inline]
fn duration_f64(micros: u64) -> f64 {
    match i64::try_from(micros) {
        Ok(micros) => micros as f64,
        Err(_) => long_duration_f64(micros),
    }
}

/// [`duration_f64`] of 2^63 µs or more (out of line, or the two conversions are merged
/// back into the long one).
#[cold]
#[inline(never)]
fn long_duration_f64(micros: u64) -> f64 {
    micros as f64
}

impl TimeAverage {
    #[inline]
    fn set(&mut self, t: u64, value: u32, warmup: u64) {
        // `advance` and then the new value, with the batch's observation last (so that
        // its rare batch close is a tail call: the hot callers save no registers).
        let from = self.last_t.max(warmup);
        let before = self.value;
        self.last_t = self.last_t.max(t);
        self.value = value;
        if t >= warmup {
            self.peak = self.peak.max(value);
        }
        if t > from {
            self.batches.add(f64::from(before), duration_f64(t - from));
        }
    }

    #[inline]
    fn advance(&mut self, t: u64, warmup: u64) {
        let from = self.last_t.max(warmup);
        if t > from {
            self.batches
                .add(f64::from(self.value), duration_f64(t - from));
        }
        self.last_t = self.last_t.max(t);
    }

    /// The average up to `end`, with its interval.
    fn estimate(&self, end: u64, warmup: u64) -> Estimate {
        let mut closed = self.clone();
        closed.advance(end, warmup);
        closed.batches.estimate()
    }
}

impl LoadStats {
    #[cold]
    fn type_index(
        types: &mut Vec<(Rc<str>, TypeLoad)>,
        all: &TypeLoad,
        agent_type: &Rc<str>,
    ) -> usize {
        match types.iter().position(|(known, _)| **known == **agent_type) {
            Some(index) => index,
            None => {
                if types.len() == 1 {
                    // Until now every arrival was of the first type: its statistics are
                    // the totals (which `each` alone kept while there was one type).
                    let running = std::mem::take(&mut types[0].1.running);
                    types[0].1 = TypeLoad {
                        running,
                        ..all.clone()
                    };
                }
                types.push((agent_type.clone(), TypeLoad::default()));
                types.len() - 1
            }
        }
    }

    /// Applies `change` to the totals, to type `index` (while there is only one type,
    /// to the totals only: [`LoadStats::type_stats`] reads them for it) and to stream
    /// `stream` (if it is one), each settled first ([`TypeLoad::settle`]).
    fn each(&mut self, index: usize, stream: usize, change: impl Fn(&mut TypeLoad)) {
        let mixed = self.mixed;
        let change = |stats: &mut TypeLoad| {
            stats.settle(mixed);
            change(stats);
        };
        change(&mut self.all);
        if self.types.len() > 1 {
            change(&mut self.types[index].1);
        }
        if let Some((_, _, stats)) = self.streams.get_mut(stream) {
            change(stats);
        }
    }

    /// An arrival of type `index` and stream `stream` started at its first attempt, after
    /// the warm-up: [`LoadStats::each`] of its counts, kept pending
    /// ([`TypeLoad::first_starts`]).
    #[inline]
    fn first_start(&mut self, index: usize, stream: usize) {
        self.all.first_starts += 1;
        if self.types.len() > 1 {
            self.types[index].1.first_starts += 1;
        }
        if let Some((_, _, stats)) = self.streams.get_mut(stream) {
            stats.first_starts += 1;
        }
    }

    /// The index of the stream named `name` ([`NO_STREAM`] without one).
    fn stream_index(&self, name: Option<&Rc<str>>) -> usize {
        let Some(name) = name else { return NO_STREAM };
        self.streams
            .iter()
            .position(|(known, _, _)| Rc::ptr_eq(known, name))
            .or_else(|| {
                self.streams
                    .iter()
                    .position(|(known, _, _)| **known == **name)
            })
            .unwrap_or(NO_STREAM)
    }

    /// Whether a cap-rejected arrival of `stream` will try again.
    fn stream_retries(&self, stream: usize) -> bool {
        match self.streams.get(stream) {
            Some((_, retries, _)) => *retries,
            None => self.retries,
        }
    }

    /// Type `index`'s statistics, whole.
    fn type_stats(&self, index: usize) -> TypeLoad {
        let (_, stats) = &self.types[index];
        let running = if !self.split {
            self.all.running.clone()
        } else {
            stats.running.clone()
        };
        if self.types.len() == 1 {
            TypeLoad {
                running,
                ..self.all.clone()
            }
        } else {
            TypeLoad {
                running,
                ..stats.clone()
            }
        }
    }

    /// [`LoadStats::type_index`] through a one-entry cache.
    #[inline]
    fn cached_index(
        cache: &mut Option<(Rc<str>, usize)>,
        types: &mut Vec<(Rc<str>, TypeLoad)>,
        all: &TypeLoad,
        agent_type: &Rc<str>,
    ) -> usize {
        if let Some((known, index)) = cache {
            if Rc::ptr_eq(known, agent_type) {
                return *index;
            }
        }
        let index = Self::type_index(types, all, agent_type);
        *cache = Some((agent_type.clone(), index));
        index
    }

    /// From now on type 0's running count is kept apart from the total's (a run of
    /// another type, or a resume, came).
    fn split_running(&mut self, t: u64, total_before: u32) {
        if !self.split {
            self.split = true;
            let mut running = self.all.running.clone();
            // The total may already include the run that caused the split.
            running.set(t, total_before, self.warmup);
            if let Some((_, stats)) = self.types.get_mut(0) {
                stats.running = running;
            }
        }
    }

    /// A `spawn_requested` of the load generator for `arrival` (of `stream`, if named).
    #[inline]
    fn requested(&mut self, arrival: u64, agent_type: &Rc<str>, stream: Option<&Rc<str>>) {
        // The usual request: a first attempt of the single form, of the type last asked for.
        if let (true, None, Some((known, index))) =
            (self.waiting.is_empty(), stream, &self.request_cache)
        {
            if Rc::ptr_eq(known, agent_type) {
                self.pending = Some((arrival, *index, NO_STREAM, true));
                return;
            }
        }
        self.requested_slow(arrival, agent_type, stream);
    }

    /// [`LoadStats::requested`], every case.
    #[inline(never)]
    fn requested_slow(&mut self, arrival: u64, agent_type: &Rc<str>, stream: Option<&Rc<str>>) {
        let first = self.waiting.is_empty() || !self.waiting.contains_key(&arrival);
        let index = Self::cached_index(
            &mut self.request_cache,
            &mut self.types,
            &self.all,
            agent_type,
        );
        let stream = self.stream_index(stream);
        self.pending = Some((arrival, index, stream, first));
    }

    /// The pending load request was refused (`by_cap`: by the concurrency cap).
    #[inline(never)]
    fn rejected(&mut self, t: u64, by_cap: bool) {
        let Some((arrival, index, stream, first)) = self.pending.take() else {
            return;
        };
        if first {
            let counted = t >= self.warmup;
            let delayed = by_cap && self.stream_retries(stream);
            let mixed = self.mixed;
            if counted {
                self.each(index, stream, |stats| {
                    stats.arrivals += 1;
                    stats.attempts += 1;
                    stats.rejected_attempts += u64::from(by_cap);
                    stats.blocked.add(by_cap);
                    if mixed {
                        stats.delayed.add(delayed);
                    }
                });
            }
            if delayed {
                self.waiting.insert(arrival, (t, index, stream, counted));
            }
        } else if let Some(&(_, _, _, counted)) = self.waiting.get(&arrival) {
            if counted {
                self.each(index, stream, |stats| {
                    stats.attempts += 1;
                    stats.rejected_attempts += u64::from(by_cap);
                });
            }
            if !by_cap {
                self.waiting.remove(&arrival);
            }
        }
    }

    /// A run started: the pending load request's, if there is one.
    #[inline]
    fn started(&mut self, t: u64, id: u32, agent_type: &Rc<str>, total_before: u32) {
        let index = Self::cached_index(
            &mut self.start_cache,
            &mut self.types,
            &self.all,
            agent_type,
        );
        if index != 0 || self.split {
            self.started_by_type(t, id, index, total_before);
        }
        match self.pending.take() {
            Some((_, index, stream, true)) if t >= self.warmup => self.first_start(index, stream),
            Some((arrival, index, stream, false)) => self.started_again(t, arrival, index, stream),
            _ => {}
        }
    }

    /// [`LoadStats::started`]'s per-type running count, once there is more than one type
    /// (`index`: the started run's type).
    #[inline(never)]
    fn started_by_type(&mut self, t: u64, id: u32, index: usize, total_before: u32) {
        if index != 0 {
            self.split_running(t, total_before);
            self.running_types.insert(id, index);
        }
        if self.split {
            let running = &mut self.types[index].1.running;
            let value = running.value + 1;
            running.set(t, value, self.warmup);
        }
    }

    /// A retry of `arrival` started.
    #[inline(never)]
    fn started_again(&mut self, t: u64, arrival: u64, index: usize, stream: usize) {
        if let Some((first_t, _, _, counted)) = self.waiting.remove(&arrival) {
            if counted {
                let wait = t.saturating_sub(first_t);
                self.each(index, stream, |stats| {
                    stats.attempts += 1;
                    stats.wait.record(wait);
                    stats.delayed_wait.record(wait);
                });
            }
        }
    }

    /// A finished run was resumed: its end is not counted per type.
    fn resumed(&mut self, t: u64, id: u32, total_before: u32) {
        self.split_running(t, total_before);
        self.running_types.insert(id, NOT_TRACKED);
    }

    /// A run ended.
    #[inline]
    fn finished(&mut self, t: u64, id: u32) {
        if t >= self.warmup {
            self.finished += 1;
        }
        if self.split {
            self.finished_by_type(t, id);
        }
    }

    /// [`LoadStats::finished`]'s per-type running count, once there is more than one type.
    #[inline(never)]
    fn finished_by_type(&mut self, t: u64, id: u32) {
        let index = if self.running_types.is_empty() {
            Some(0)
        } else {
            match self.running_types.remove(id) {
                Some(NOT_TRACKED) => None,
                Some(index) => Some(index),
                None => Some(0),
            }
        };
        if let Some(running) = index
            .and_then(|index| self.types.get_mut(index))
            .map(|(_, stats)| &mut stats.running)
        {
            let value = running.value.saturating_sub(1);
            running.set(t, value, self.warmup);
        }
    }
}

/// Load statistics of a run ([`Summary::load_report`]); durations in seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadReport {
    /// Whether the `retry` policy tries rejected arrivals again (else nobody is delayed
    /// and every wait is 0; the text table leaves those rows out).
    pub retries: bool,
    /// `load.warmup`, s.
    pub warmup: f64,
    /// Measured time: from the warm-up to the last event, s.
    pub window: f64,
    /// Runs finished per second of the window (every run, not only the load's).
    pub throughput: f64,
    /// Every arrival.
    pub all: TypeReport,
    /// Per agent type, in order of first appearance.
    pub by_type: Vec<(String, TypeReport)>,
    /// Per named stream (the list form of `load`), in list order, with whether the
    /// stream retries; their `running` is not measured (it is per type) and left 0.
    pub by_stream: Vec<(String, bool, TypeReport)>,
}

/// The load statistics of all arrivals or of one agent type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TypeReport {
    /// Arrivals (first attempts) after the warm-up.
    pub arrivals: u64,
    /// Attempts of those arrivals (first attempts and retries).
    pub attempts: u64,
    /// Share of arrivals whose first attempt the cap rejected.
    pub blocking: Estimate,
    /// Share of attempts the cap rejected.
    pub blocking_attempts: f64,
    /// Share of arrivals that were rejected and tried again (0 with `retry: none`).
    pub delayed: Estimate,
    /// First request → start of every started arrival (0 when the first attempt started).
    pub wait: SecondsDistribution,
    /// The same, of the delayed arrivals only.
    pub delayed_wait: SecondsDistribution,
    /// Time-weighted mean running count (for all: every run; per type: that type's).
    pub running: Estimate,
    /// Mean running / cap (for all, when there is a cap).
    pub utilisation: Option<Estimate>,
}

/// A [`Distribution`] in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SecondsDistribution {
    /// How many values.
    pub count: u64,
    /// Mean with its 95 % interval.
    pub mean: Estimate,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

fn seconds(distribution: Distribution) -> SecondsDistribution {
    let s = |micros: u64| micros as f64 / 1e6;
    SecondsDistribution {
        count: distribution.count,
        mean: distribution.mean.scaled(1e-6).clamped(0.0, f64::INFINITY),
        p50: s(distribution.p50),
        p95: s(distribution.p95),
        p99: s(distribution.p99),
        max: s(distribution.max),
    }
}

/// Mean and 95th percentile of a set of waits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WaitStats {
    /// How many waits.
    pub count: u64,
    /// Mean, µs (rounded down).
    pub mean_us: u64,
    /// 95th percentile by the nearest-rank method, µs.
    pub p95_us: u64,
}

impl WaitStats {
    /// Statistics of `waits` (empty → all zero).
    pub fn of(waits: &[u64]) -> WaitStats {
        if waits.is_empty() {
            return WaitStats {
                count: 0,
                mean_us: 0,
                p95_us: 0,
            };
        }
        let count = waits.len() as u64;
        let total: u128 = waits.iter().map(|&wait| u128::from(wait)).sum();
        // Nearest rank: the smallest value with at least 95% of the waits at or below it,
        // the value a sort would put at `rank - 1` (selected, not sorted: linear time).
        let rank = (waits.len() * 95).div_ceil(100);
        let mut copy = waits.to_vec();
        let (_, p95, _) = copy.select_nth_unstable(rank - 1);
        WaitStats {
            count,
            mean_us: (total / u128::from(count)) as u64,
            p95_us: *p95,
        }
    }
}

impl Sink for Summary {
    fn preload(&self, id: u32) -> u64 {
        self.load.running_types.preload(id)
    }

    /// Every kind: the ones every run has many of (a load run: a request, a start, an end
    /// and a notification per arrival) through their own methods, every other kind
    /// through `Summary::other_event`, out of line, so that this function stays a bare
    /// dispatch (no registers saved on every event).
    fn event(&mut self, event: &Event) {
        match &event.kind {
            EventKind::SpawnRequested { .. } => self.spawn_requested(event),
            EventKind::AgentStarted { .. } => self.agent_started(event),
            EventKind::AgentFinished { .. } => self.agent_finished(event),
            EventKind::Notification { .. } => self.notification(event),
            _ => {
                self.count(event);
                self.other_event(event);
            }
        }
    }

    #[inline(never)]
    fn spawn_requested(&mut self, event: &Event) {
        let EventKind::SpawnRequested {
            arrival,
            agent_type,
            stream,
            ..
        } = &event.kind
        else {
            return self.event(event);
        };
        self.count(event);
        self.spawns_requested += 1;
        self.load.pending = None;
        if let Some(arrival) = arrival {
            self.load.requested(*arrival, agent_type, stream.as_ref());
        }
    }

    #[inline(never)]
    fn agent_started(&mut self, event: &Event) {
        let EventKind::AgentStarted {
            agent,
            profile,
            running,
            ..
        } = &event.kind
        else {
            return self.event(event);
        };
        self.count(event);
        let t = event.t.as_micros();
        self.on_agent_started(t, agent.id, &profile.agent_type, *running);
    }

    #[inline(never)]
    fn agent_finished(&mut self, event: &Event) {
        let EventKind::AgentFinished {
            outcome,
            agent,
            running,
            ..
        } = &event.kind
        else {
            return self.event(event);
        };
        self.count(event);
        let t = event.t.as_micros();
        self.on_agent_finished(t, agent.id, *outcome, *running);
    }

    #[inline(never)]
    fn spawn_rejected(&mut self, event: &Event) {
        // A load run's usual refusal (the others, as `other_event` counts them).
        let EventKind::SpawnRejected {
            reason: RejectReason::ConcurrentLimit,
            running,
            ..
        } = &event.kind
        else {
            return self.event(event);
        };
        self.count(event);
        let t = event.t.as_micros();
        self.set_running(t, *running);
        self.rejected[CONCURRENT_LIMIT] += 1;
        if self.load.pending.is_some() {
            self.load.rejected(t, true);
        }
    }

    #[inline(never)]
    fn report_delivered(&mut self, event: &Event) {
        // A delivery carries no running count and no statistic of its own: counted only.
        if !matches!(event.kind, EventKind::ReportDelivered { .. }) {
            return self.event(event);
        }
        self.count(event);
    }

    #[inline(never)]
    fn notification(&mut self, event: &Event) {
        let EventKind::Notification { what, .. } = &event.kind else {
            return self.event(event);
        };
        self.count(event);
        self.notifications[notice_index(*what)] += 1;
    }
}

/// `RejectReason::ConcurrentLimit`'s index in [`RejectReason::ALL`] (a unit test checks
/// it).
const CONCURRENT_LIMIT: usize = 0;

/// `outcome`'s index in [`OUTCOMES`] (the declaration order; a unit test checks it).
#[inline]
fn outcome_index(outcome: Outcome) -> usize {
    outcome as usize
}

/// `what`'s index in [`Notice::ALL`] (the declaration order; a unit test checks it).
#[inline]
fn notice_index(what: Notice) -> usize {
    what as usize
}

impl Summary {
    /// Every event: counted, and the makespan.
    #[inline]
    fn count(&mut self, event: &Event) {
        self.events += 1;
        self.last_t = self.last_t.max(event.t);
    }

    /// An `agent_started` (counted).
    #[inline]
    fn on_agent_started(&mut self, t: u64, id: u32, agent_type: &Rc<str>, running: u32) {
        self.started += 1;
        let load = &mut self.load;
        if !load.off {
            // The usual start: of type 0 (the type last started), one type only so far,
            // and not a retry: [`LoadStats::started`] counts at most a first start then,
            // and touches nothing `set_running` does, so the order does not matter.
            let usual = !load.split
                && !matches!(load.pending, Some((_, _, _, false)))
                && matches!(&load.start_cache, Some((known, 0)) if Rc::ptr_eq(known, agent_type));
            if !usual {
                return self.agent_started_slow(t, id, agent_type, running);
            }
            if let Some((_, index, stream, _)) = load.pending.take() {
                if t >= load.warmup {
                    load.first_start(index, stream);
                }
            }
        }
        self.set_running(t, running);
    }

    /// [`Summary::agent_started`], every case.
    #[inline(never)]
    fn agent_started_slow(&mut self, t: u64, id: u32, agent_type: &Rc<str>, running: u32) {
        // (The total's running count first: the split of the per-type counts copies it.)
        let previous = self.set_running(t, running);
        self.load.started(t, id, agent_type, previous);
    }

    /// An `agent_finished` (counted).
    #[inline]
    fn on_agent_finished(&mut self, t: u64, id: u32, outcome: Outcome, running: u32) {
        self.finished[outcome_index(outcome)] += 1;
        if self.load.split {
            return self.agent_finished_by_type(t, id, running);
        }
        self.load.finished(t, id);
        // (Last: `load.finished` reads only the per-type counts.)
        self.set_running(t, running);
    }

    /// [`Summary::agent_finished`] once the running counts are kept per type.
    #[inline(never)]
    fn agent_finished_by_type(&mut self, t: u64, id: u32, running: u32) {
        self.load.finished(t, id);
        self.set_running(t, running);
    }

    /// The running count an event carries is `running` from `t` on; returns the count
    /// before it. `last_t` already counts the event.
    #[inline]
    fn set_running(&mut self, t: u64, running: u32) -> u32 {
        let previous = self.running;
        self.running = running;
        self.peak_running = self.peak_running.max(running);
        if running != previous {
            // The count was `previous` from `area_to` to this event (the time-weighted
            // area, one multiply per change instead of one per event).
            let now = self.last_t.as_micros();
            self.running_area += u128::from(previous) * u128::from(now - self.area_to);
            self.area_to = now;
            let warmup = self.load.warmup;
            self.load.all.running.set(t, running, warmup);
        }
        previous
    }

    /// [`Sink::event`] for the kinds without a method of their own (`count` is done).
    #[inline(never)]
    fn other_event(&mut self, event: &Event) {
        let previous_running = match event.kind.running() {
            Some(running) => self.set_running(event.t.as_micros(), running),
            None => self.running,
        };
        match &event.kind {
            EventKind::SessionStarted { cap, .. } => self.cap = *cap,
            EventKind::SpawnRejected { reason, .. } => {
                match RejectReason::ALL.iter().position(|known| known == reason) {
                    Some(index) => self.rejected[index] += 1,
                    None => self.rejected_other += 1,
                }
                if self.load.pending.is_some() {
                    self.load.rejected(
                        event.t.as_micros(),
                        *reason == RejectReason::ConcurrentLimit,
                    );
                }
            }
            EventKind::AgentResumed { running, agent, .. } => {
                if !self.load.off {
                    self.load
                        .resumed(event.t.as_micros(), agent.id, previous_running);
                }
                self.resumes += 1;
                if self.cap.is_some_and(|cap| *running > cap) {
                    self.resumes_past_cap += 1;
                }
            }
            EventKind::PermissionRequested {
                routed_to,
                auto_denied,
                prompt,
                agent_type,
                ..
            } => {
                if *auto_denied {
                    self.auto_denied += 1;
                } else {
                    let route = route_index(*routed_to);
                    self.prompts_by_route[route as usize] += 1;
                    let index = self.prompt_type(agent_type);
                    let entry = (route, index as u32);
                    let replaced = self.pending.insert(*prompt, entry).is_some();
                    if replaced && !self.types_apart {
                        // The queue keeps its length, the type's count grows.
                        self.prompt_types_apart();
                    }
                    self.prompt_queue_changed(event.t);
                    if self.types_apart {
                        self.prompt_type_queue(index, event.t, 1);
                    }
                }
            }
            EventKind::PermissionAnswered {
                waited_us, prompt, ..
            } => {
                let pending = self.pending.remove(*prompt);
                if pending.is_none() && !self.types_apart {
                    self.prompt_types_apart();
                }
                let route = pending.map_or(route_index(None), |(route, _)| route);
                self.waits[route as usize].push(*waited_us);
                let shown_at = event.t.as_micros().saturating_sub(*waited_us);
                let counted = shown_at >= self.load.warmup;
                if counted {
                    self.prompt_waits.record(*waited_us);
                }
                self.prompt_queue_changed(event.t);
                if let Some((_, index)) = pending.filter(|_| self.types_apart) {
                    let index = index as usize;
                    if counted {
                        self.prompt_types[index].1.waits.record(*waited_us);
                    }
                    self.prompt_type_queue(index, event.t, -1);
                }
            }
            EventKind::PermissionWithdrawn { prompt, .. } => {
                let pending = self.pending.remove(*prompt);
                if pending.is_none() && !self.types_apart {
                    self.prompt_types_apart();
                }
                self.withdrawn += 1;
                self.prompt_queue_changed(event.t);
                if let Some((_, index)) = pending.filter(|_| self.types_apart) {
                    let index = index as usize;
                    self.prompt_type_queue(index, event.t, -1);
                }
            }
            EventKind::LimitReached { limit, value } => {
                self.limit = Some((*limit, *value));
            }
            // Requests, starts, ends and notifications are counted in `event`.
            _ => {}
        }
    }
}

impl Summary {
    /// A summary that has seen nothing.
    pub fn new() -> Summary {
        Summary::default()
    }

    /// A summary for a run of `spec`: it knows the load's warm-up and whether its retry
    /// policy tries rejected arrivals again (what makes an arrival *delayed*).
    pub fn for_spec(spec: &SimSpec) -> Summary {
        let mut summary = Summary::default();
        summary.load.off = spec.load.is_none();
        if let Some(load) = &spec.load {
            summary.load.warmup = load.warmup.as_micros();
            let retries = |stream: &crate::spec::LoadStream| stream.retry != Retry::None;
            summary.load.retries = load.streams.iter().any(retries);
            summary.load.mixed = summary.load.retries && !load.streams.iter().all(retries);
            summary.load.streams = load
                .streams
                .iter()
                .filter_map(|stream| {
                    let name = stream.name.clone()?;
                    Some((name, retries(stream), TypeLoad::default()))
                })
                .collect();
        }
        summary
    }

    /// The index of `agent_type` in `prompt_types`, added if new.
    fn prompt_type(&mut self, agent_type: &Rc<str>) -> usize {
        if let Some((known, index)) = &self.prompt_type_cache {
            if Rc::ptr_eq(known, agent_type) {
                return *index;
            }
        }
        let index = self.prompt_type_slow(agent_type);
        self.prompt_type_cache = Some((agent_type.clone(), index));
        index
    }

    /// [`Summary::prompt_type`] by name.
    #[cold]
    fn prompt_type_slow(&mut self, agent_type: &Rc<str>) -> usize {
        match self
            .prompt_types
            .iter()
            .position(|(known, _)| **known == **agent_type)
        {
            Some(index) => index,
            None => {
                if !self.prompt_types.is_empty() && !self.types_apart {
                    // A second type: the first keeps its own statistics from now on.
                    self.prompt_types_apart();
                }
                self.prompt_types
                    .push((agent_type.clone(), PromptStats::default()));
                self.prompt_types.len() - 1
            }
        }
    }

    /// The prompt types' statistics are kept apart from the totals from now on: the only
    /// type so far (if any) starts from the totals, which were its statistics until now.
    #[cold]
    #[inline(never)]
    fn prompt_types_apart(&mut self) {
        self.types_apart = true;
        if let Some((_, stats)) = self.prompt_types.first_mut() {
            stats.waits = self.prompt_waits.clone();
            stats.queue = self.prompt_queue.clone();
        }
    }

    /// Type `index` has `change` (±1) prompts more waiting for an answer from `t` on.
    fn prompt_type_queue(&mut self, index: usize, t: SimTime, change: i32) {
        let warmup = self.load.warmup;
        let queue = &mut self.prompt_types[index].1.queue;
        let value = queue.value.saturating_add_signed(change);
        queue.set(t.as_micros(), value, warmup);
    }

    /// Prompt waits and queue length per type of the asking agent, in order of the type's
    /// first prompt (see [`Summary::prompt_report`]).
    pub fn prompt_report_by_type(&self) -> Vec<PromptTypeReport> {
        let end = self.last_t.as_micros();
        self.prompt_types
            .iter()
            .map(|(agent_type, stats)| {
                // The only type, of every prompt: its statistics are the totals.
                let (waits, queue) = if self.types_apart {
                    (&stats.waits, &stats.queue)
                } else {
                    (&self.prompt_waits, &self.prompt_queue)
                };
                PromptTypeReport {
                    agent_type: agent_type.to_string(),
                    waits: seconds(waits.distribution()),
                    queue: queue
                        .estimate(end, self.load.warmup)
                        .clamped(0.0, f64::INFINITY),
                    queue_peak: queue.peak,
                }
            })
            .collect()
    }

    fn prompt_queue_changed(&mut self, t: SimTime) {
        let length = self.pending.len() as u32;
        self.prompt_queue
            .set(t.as_micros(), length, self.load.warmup);
    }

    /// The load statistics (`None` when the run had no load arrivals after the warm-up).
    pub fn load_report(&self) -> Option<LoadReport> {
        if self.load.all.arrivals == 0 && self.load.all.first_starts == 0 {
            return None;
        }
        let end = self.last_t.as_micros();
        let warmup = self.load.warmup;
        let window = end.saturating_sub(warmup) as f64 / 1e6;
        let report = |stats: &TypeLoad, cap: Option<u32>| {
            let stats = &stats.settled(self.load.mixed);
            let running = stats
                .running
                .estimate(end, warmup)
                .clamped(0.0, f64::INFINITY);
            TypeReport {
                arrivals: stats.arrivals,
                attempts: stats.attempts,
                blocking: stats.blocked.estimate().clamped(0.0, 1.0),
                blocking_attempts: if stats.attempts == 0 {
                    0.0
                } else {
                    stats.rejected_attempts as f64 / stats.attempts as f64
                },
                // A delayed arrival is one whose first attempt the cap rejected, when the
                // policy retries: the same observations as blocking, or none (or, when
                // some streams retry and others do not, observations of their own).
                delayed: if self.load.mixed {
                    stats.delayed.estimate().clamped(0.0, 1.0)
                } else if self.load.retries {
                    stats.blocked.estimate().clamped(0.0, 1.0)
                } else {
                    Estimate::default()
                },
                wait: seconds(stats.wait.distribution()),
                delayed_wait: seconds(stats.delayed_wait.distribution()),
                running,
                utilisation: cap.map(|cap| running.scaled(1.0 / f64::from(cap.max(1)))),
            }
        };
        Some(LoadReport {
            retries: self.load.retries,
            warmup: warmup as f64 / 1e6,
            window,
            throughput: if window > 0.0 {
                self.load.finished as f64 / window
            } else {
                0.0
            },
            all: report(&self.load.all, self.cap),
            by_type: (0..self.load.types.len())
                .map(|index| {
                    let stats = self.load.type_stats(index);
                    (self.load.types[index].0.to_string(), report(&stats, None))
                })
                .collect(),
            by_stream: self
                .load
                .streams
                .iter()
                .map(|(name, retries, stats)| {
                    let blocking = stats
                        .settled(self.load.mixed)
                        .blocked
                        .estimate()
                        .clamped(0.0, 1.0);
                    let stream = TypeReport {
                        delayed: if *retries {
                            blocking
                        } else {
                            Estimate::default()
                        },
                        running: Estimate::default(),
                        ..report(stats, None)
                    };
                    (name.to_string(), *retries, stream)
                })
                .collect(),
        })
    }

    /// Waits of answered prompts (shown → answered), every route, in seconds; and the
    /// prompt queue's time-weighted mean length and peak.
    pub fn prompt_report(&self) -> (SecondsDistribution, Estimate, u32) {
        let end = self.last_t.as_micros();
        (
            seconds(self.prompt_waits.distribution()),
            self.prompt_queue.estimate(end, self.load.warmup),
            self.prompt_queue.peak,
        )
    }

    /// Time of the last event.
    pub fn makespan(&self) -> SimTime {
        self.last_t
    }

    /// The session's cap (`None` without one, or before `session_started`).
    pub fn cap(&self) -> Option<u32> {
        self.cap
    }

    /// Events seen.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Agent tool calls made.
    pub fn spawns_requested(&self) -> u64 {
        self.spawns_requested
    }

    /// Runs started (spawned agents and `/subtask` forks).
    pub fn started(&self) -> u64 {
        self.started
    }

    /// Spawns refused for `reason`.
    pub fn rejected(&self, reason: RejectReason) -> u64 {
        RejectReason::ALL
            .iter()
            .position(|known| *known == reason)
            .map_or(0, |index| self.rejected[index])
    }

    /// Spawns refused for any reason.
    pub fn rejected_total(&self) -> u64 {
        self.rejected.iter().sum::<u64>() + self.rejected_other
    }

    /// Resumes of finished agents, and how many of them left the running count above the cap.
    pub fn resumes(&self) -> (u64, u64) {
        (self.resumes, self.resumes_past_cap)
    }

    /// Peak of the running-subagent count.
    pub fn peak_running(&self) -> u32 {
        self.peak_running
    }

    /// Mean running-subagent count, weighted by time over the makespan (0 for an empty run).
    pub fn mean_running(&self) -> f64 {
        if self.last_t.as_micros() == 0 {
            return 0.0;
        }
        self.running_area() as f64 / self.last_t.as_micros() as f64
    }

    /// ∫ running dt up to the last event, in running·µs: the same sum as adding
    /// `running × (t − last t)` at every event, as the count holds from one event to the
    /// next.
    fn running_area(&self) -> u128 {
        let since = self.last_t.as_micros() - self.area_to;
        self.running_area + u128::from(self.running) * u128::from(since)
    }

    /// Cap rejections / spawn requests (0 when nothing was requested).
    pub fn blocking(&self) -> f64 {
        if self.spawns_requested == 0 {
            return 0.0;
        }
        self.rejected(RejectReason::ConcurrentLimit) as f64 / self.spawns_requested as f64
    }

    /// Prompts shown, by where they were shown (`main`, `terminal`).
    pub fn prompts_by_route(&self) -> BTreeMap<&'static str, u64> {
        self.routes_shown().collect()
    }

    /// [`Summary::prompts_by_route`] in order, without the routes no prompt was shown at.
    fn routes_shown(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        ROUTES
            .into_iter()
            .zip(self.prompts_by_route)
            .filter(|(_, count)| *count > 0)
    }

    /// The answered prompts' waits by route in order, without the routes none was
    /// answered at.
    fn routes_waited(&self) -> impl Iterator<Item = (&'static str, &[u64])> + '_ {
        ROUTES
            .into_iter()
            .zip(&self.waits)
            .filter(|(_, waits)| !waits.is_empty())
            .map(|(route, waits)| (route, &waits[..]))
    }

    /// Prompts auto-denied without being shown (PERM-5).
    pub fn auto_denied(&self) -> u64 {
        self.auto_denied
    }

    /// Wait statistics of the answered prompts that were shown at `route` (`main`: in the
    /// main session).
    pub fn waits(&self, route: &str) -> WaitStats {
        let waits = ROUTES
            .iter()
            .position(|known| *known == route)
            .map_or(&[][..], |index| &self.waits[index][..]);
        WaitStats::of(waits)
    }

    /// Runs that ended with `outcome`.
    pub fn finished(&self, outcome: Outcome) -> u64 {
        OUTCOMES
            .iter()
            .position(|known| *known == outcome)
            .map_or(0, |index| self.finished[index])
    }

    /// Notifications by `what`.
    pub fn notifications(&self) -> BTreeMap<&'static str, u64> {
        Notice::ALL
            .iter()
            .zip(self.notifications)
            .filter(|(_, count)| *count > 0)
            .map(|(what, count)| (what.as_str(), count))
            .collect()
    }

    /// The safety limit that ended the run, if one did.
    pub fn limit(&self) -> Option<(&'static str, u64)> {
        self.limit.map(|(limit, value)| (limit.as_str(), value))
    }

    /// An aligned two-column table for people.
    pub fn render_text(&self) -> String {
        let mut rows: Vec<(String, String)> = Vec::new();
        let mut row = |label: &str, value: String| rows.push((label.to_string(), value));
        row("events", self.events.to_string());
        row(
            "makespan",
            format!(
                "{} ({})",
                self.last_t,
                human_duration(self.last_t.as_micros())
            ),
        );
        row("spawns requested", self.spawns_requested.to_string());
        row(
            "  started",
            format!("{} (every run, /subtask forks included)", self.started),
        );
        row("  rejected", self.rejected_total().to_string());
        for (reason, count) in RejectReason::ALL.iter().zip(self.rejected) {
            if count > 0 {
                row(&format!("    {}", reason.as_str()), count.to_string());
            }
        }
        if self.rejected_other > 0 {
            row("    other", self.rejected_other.to_string());
        }
        row(
            "blocking",
            format!(
                "{:.3} ({} of {} spawn requests hit the cap)",
                self.blocking(),
                self.rejected(RejectReason::ConcurrentLimit),
                self.spawns_requested
            ),
        );
        row(
            "resumes",
            format!("{} ({} past the cap)", self.resumes, self.resumes_past_cap),
        );
        let cap = match self.cap {
            Some(cap) => format!(" (cap {cap})"),
            None => " (no cap)".to_string(),
        };
        row("peak running", format!("{}{cap}", self.peak_running));
        row(
            "mean running",
            format!("{:.2} (time-weighted)", self.mean_running()),
        );
        if let Some(load) = self.load_report() {
            row(
                "load",
                format!(
                    "after a warm-up of {}s, over {}s; intervals are 95 % (batch means)",
                    secs(load.warmup),
                    secs(load.window)
                ),
            );
            load_rows(&mut row, "  ", &load.all, load.retries);
            row(
                "  throughput",
                format!("{:.3} runs finished/s", load.throughput),
            );
            if load.by_type.len() > 1 {
                for (name, stats) in &load.by_type {
                    if stats.arrivals > 0 {
                        row(&format!("  type {name}"), String::new());
                        load_rows(&mut row, "    ", stats, load.retries);
                    }
                }
            }
            for (name, retries, stats) in &load.by_stream {
                row(&format!("  stream {name}"), String::new());
                stream_rows(&mut row, "    ", stats, *retries);
            }
        }
        let shown: u64 = self.prompts_by_route.iter().sum();
        let routes = self
            .routes_shown()
            .map(|(route, count)| format!("{route} {count}"))
            .collect::<Vec<_>>()
            .join(", ");
        row(
            "prompts shown",
            if routes.is_empty() {
                "0".to_string()
            } else {
                format!("{shown} ({routes})")
            },
        );
        row("  auto-denied", self.auto_denied.to_string());
        if self.withdrawn > 0 {
            row("  withdrawn", self.withdrawn.to_string());
        }
        for (route, waits) in self.routes_waited() {
            let stats = WaitStats::of(waits);
            let label = match route {
                "main" => "  wait, main session".to_string(),
                other => format!("  wait, {other}"),
            };
            row(
                &label,
                format!(
                    "mean {}, p95 {} ({} answered)",
                    human_duration(stats.mean_us),
                    human_duration(stats.p95_us),
                    stats.count
                ),
            );
        }
        let (prompt_waits, queue, queue_peak) = self.prompt_report();
        if prompt_waits.count > 0 {
            row("  wait, all prompts", wait_line(&prompt_waits));
            row(
                "  prompt queue",
                format!(
                    "mean {:.3} {}, peak {queue_peak} (shown, not yet answered)",
                    queue.mean,
                    interval(queue, |value| format!("{value:.3}"))
                ),
            );
            let by_type = self.prompt_report_by_type();
            if by_type.len() > 1 {
                for report in &by_type {
                    row(&format!("  type {}", report.agent_type), String::new());
                    let waits = &report.waits;
                    if waits.count > 0 {
                        let line = wait_line(waits);
                        row("    wait", format!("{line} ({} answered)", waits.count));
                    }
                    row(
                        "    prompt queue",
                        format!(
                            "mean {:.3} {}, peak {}",
                            report.queue.mean,
                            interval(report.queue, |value| format!("{value:.3}")),
                            report.queue_peak
                        ),
                    );
                }
            }
        }
        let finished: u64 = self.finished.iter().sum();
        let outcomes = OUTCOMES
            .iter()
            .zip(self.finished)
            .filter(|(_, count)| *count > 0)
            .map(|(outcome, count)| format!("{} {count}", outcome.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        row(
            "finished",
            if outcomes.is_empty() {
                "0".to_string()
            } else {
                format!("{finished} ({outcomes})")
            },
        );
        let notifications = self.notifications();
        let notified: u64 = notifications.values().sum();
        let whats = notifications
            .iter()
            .map(|(what, count)| format!("{what} {count}"))
            .collect::<Vec<_>>()
            .join(", ");
        row(
            "notifications",
            if whats.is_empty() {
                "0".to_string()
            } else {
                format!("{notified} ({whats})")
            },
        );
        if let Some((limit, value)) = self.limit {
            row(
                "stopped by",
                format!("safety limit {limit} = {}", limit.bound_text(value)),
            );
        }
        // Labels and values carry type and stream names: each is one field of a terminal
        // line, so a name's newline or escape sequence is shown, not obeyed.
        let rows: Vec<(String, String)> = rows
            .into_iter()
            .map(|(label, value)| {
                let line = subsim_escape::terminal::line;
                (line(&label).into_owned(), line(&value).into_owned())
            })
            .collect();
        let width = rows
            .iter()
            .map(|(label, _)| label.chars().count())
            .max()
            .unwrap_or(0);
        let mut text = String::new();
        for (label, value) in rows {
            let _ = writeln!(text, "{label:<width$}  {value}");
        }
        text
    }

    /// The statistics as one JSON object (keys in a fixed order; byte-for-byte deterministic).
    pub fn render_json(&self) -> String {
        let mut json = Json::default();
        json.open();
        json.key("events").u64(self.events);
        json.key("makespan_us").u64(self.last_t.as_micros());
        match self.cap {
            Some(cap) => json.key("cap").u64(u64::from(cap)),
            None => json.key("cap").raw("null"),
        };
        json.key("spawns").open();
        json.key("requested").u64(self.spawns_requested);
        json.key("started").u64(self.started);
        json.key("rejected").u64(self.rejected_total());
        json.key("rejected_by_reason").open();
        for (reason, count) in RejectReason::ALL.iter().zip(self.rejected) {
            json.key(reason.as_str()).u64(count);
        }
        if self.rejected_other > 0 {
            json.key("other").u64(self.rejected_other);
        }
        json.close();
        json.close();
        json.key("blocking").f64(self.blocking());
        json.key("resumes").open();
        json.key("total").u64(self.resumes);
        json.key("past_cap").u64(self.resumes_past_cap);
        json.close();
        json.key("running").open();
        json.key("peak").u64(u64::from(self.peak_running));
        json.key("mean").f64(self.mean_running());
        json.close();
        json.key("prompts").open();
        json.key("shown").open();
        for (route, count) in self.routes_shown() {
            json.key(route).u64(count);
        }
        json.close();
        json.key("auto_denied").u64(self.auto_denied);
        json.key("withdrawn").u64(self.withdrawn);
        json.key("wait").open();
        for (route, waits) in self.routes_waited() {
            let stats = WaitStats::of(waits);
            json.key(route).open();
            json.key("answered").u64(stats.count);
            json.key("mean_us").u64(stats.mean_us);
            json.key("p95_us").u64(stats.p95_us);
            json.close();
        }
        json.close();
        json.close();
        let (prompt_waits, queue, queue_peak) = self.prompt_report();
        json.key("prompt_waits");
        json_distribution(&mut json, &prompt_waits);
        json.key("prompt_queue").open();
        json.key("mean");
        json_estimate(&mut json, queue);
        json.key("peak").u64(u64::from(queue_peak));
        json.close();
        json.key("prompts_by_type").open();
        for report in self.prompt_report_by_type() {
            json.key(&report.agent_type).open();
            json.key("waits");
            json_distribution(&mut json, &report.waits);
            json.key("queue").open();
            json.key("mean");
            json_estimate(&mut json, report.queue);
            json.key("peak").u64(u64::from(report.queue_peak));
            json.close();
            json.close();
        }
        json.close();
        match self.load_report() {
            Some(load) => {
                json.key("load").open();
                json.key("retries")
                    .raw(if load.retries { "true" } else { "false" });
                json.key("warmup").f64(load.warmup);
                json.key("window").f64(load.window);
                json.key("throughput").f64(load.throughput);
                json_type(&mut json, &load.all);
                json.key("by_type").open();
                for (name, stats) in &load.by_type {
                    json.key(name).open();
                    json_type(&mut json, stats);
                    json.close();
                }
                json.close();
                if !load.by_stream.is_empty() {
                    json.key("by_stream").open();
                    for (name, retries, stats) in &load.by_stream {
                        json.key(name).open();
                        json.key("retries")
                            .raw(if *retries { "true" } else { "false" });
                        json_arrivals(&mut json, stats);
                        json.close();
                    }
                    json.close();
                }
                json.close();
            }
            None => {
                json.key("load").raw("null");
            }
        }
        json.key("finished").open();
        for (outcome, count) in OUTCOMES.iter().zip(self.finished) {
            json.key(outcome.as_str()).u64(count);
        }
        json.close();
        json.key("notifications").open();
        for (what, count) in &self.notifications() {
            json.key(what).u64(*count);
        }
        json.close();
        match self.limit {
            Some((limit, value)) => {
                json.key("limit").open();
                json.key("name").string(limit.as_str());
                json.key("value").u64(value);
                json.close();
            }
            None => {
                json.key("limit").raw("null");
            }
        }
        json.close();
        let mut text = String::from_utf8(json.out).expect("the JSON writer writes UTF-8");
        text.push('\n');
        text
    }
}

/// Seconds, three decimals.
fn secs(value: f64) -> String {
    format!("{value:.3}")
}

/// `[lo, hi]` of an estimate, each written by `show`.
fn interval(estimate: Estimate, show: impl Fn(f64) -> String) -> String {
    format!("[{}, {}]", show(estimate.lo), show(estimate.hi))
}

/// A prompt-wait line of the table (all prompts, or one type's): the mean with its
/// interval, then the percentiles and the longest, in seconds.
fn wait_line(waits: &SecondsDistribution) -> String {
    format!(
        "mean {}s {}, p50 {}s, p95 {}s, p99 {}s, max {}s",
        secs(waits.mean.mean),
        interval(waits.mean, secs),
        secs(waits.p50),
        secs(waits.p95),
        secs(waits.p99),
        secs(waits.max)
    )
}

/// The text rows of one [`TypeReport`].
fn load_rows(row: &mut impl FnMut(&str, String), indent: &str, stats: &TypeReport, retries: bool) {
    let fraction = |value: f64| format!("{value:.4}");
    row(
        &format!("{indent}arrivals"),
        format!(
            "{} ({} attempts, retries included)",
            stats.arrivals, stats.attempts
        ),
    );
    row(
        &format!("{indent}blocking"),
        format!(
            "{} {} per arrival (first attempt hit the cap); {} per attempt",
            fraction(stats.blocking.mean),
            interval(stats.blocking, fraction),
            fraction(stats.blocking_attempts)
        ),
    );
    if !retries {
        // Nobody waits under `retry: none`: no delayed share, no waits.
        let running = running_row(stats);
        row(&format!("{indent}running"), running);
        return;
    }
    row(
        &format!("{indent}delayed"),
        format!(
            "{} {} of arrivals waited for a retry",
            fraction(stats.delayed.mean),
            interval(stats.delayed, fraction)
        ),
    );
    for (label, wait) in [
        ("wait", &stats.wait),
        ("wait, delayed", &stats.delayed_wait),
    ] {
        if wait.count > 0 {
            row(
                &format!("{indent}{label}"),
                format!(
                    "mean {}s {}, p50 {}s, p95 {}s, p99 {}s, max {}s ({} started)",
                    secs(wait.mean.mean),
                    interval(wait.mean, secs),
                    secs(wait.p50),
                    secs(wait.p95),
                    secs(wait.p99),
                    secs(wait.max),
                    wait.count
                ),
            );
        }
    }
    let running = running_row(stats);
    row(&format!("{indent}running"), running);
}

/// The text rows of one stream: [`load_rows`] without the running count (which is
/// measured per type, not per stream).
fn stream_rows(
    row: &mut impl FnMut(&str, String),
    indent: &str,
    stats: &TypeReport,
    retries: bool,
) {
    let mut rows = Vec::new();
    load_rows(
        &mut |label: &str, value: String| rows.push((label.to_string(), value)),
        indent,
        stats,
        retries,
    );
    for (label, value) in rows {
        if label.trim_start() != "running" {
            row(&label, value);
        }
    }
}

/// The `running` row's text: mean running with its interval, and utilisation.
fn running_row(stats: &TypeReport) -> String {
    let fraction = |value: f64| format!("{value:.4}");
    let two = |value: f64| format!("{value:.2}");
    let mut running = format!(
        "{} {} (time-weighted)",
        two(stats.running.mean),
        interval(stats.running, two)
    );
    if let Some(utilisation) = stats.utilisation {
        let _ = write!(
            running,
            "; utilisation {} {}",
            fraction(utilisation.mean),
            interval(utilisation, fraction)
        );
    }
    running
}

fn json_estimate(json: &mut Json, estimate: Estimate) {
    json.open();
    json.key("mean").f64(estimate.mean);
    json.key("lo").f64(estimate.lo);
    json.key("hi").f64(estimate.hi);
    json.close();
}

fn json_distribution(json: &mut Json, distribution: &SecondsDistribution) {
    json.open();
    json.key("count").u64(distribution.count);
    json.key("mean");
    json_estimate(json, distribution.mean);
    json.key("p50").f64(distribution.p50);
    json.key("p95").f64(distribution.p95);
    json.key("p99").f64(distribution.p99);
    json.key("max").f64(distribution.max);
    json.close();
}

/// The members of one [`TypeReport`], into the open object.
fn json_type(json: &mut Json, stats: &TypeReport) {
    json_arrivals(json, stats);
    json.key("running");
    json_estimate(json, stats.running);
    json.key("utilisation");
    match stats.utilisation {
        Some(utilisation) => json_estimate(json, utilisation),
        None => {
            json.raw("null");
        }
    }
}

/// The members of one [`TypeReport`] about its arrivals (all but the running count).
fn json_arrivals(json: &mut Json, stats: &TypeReport) {
    json.key("arrivals").u64(stats.arrivals);
    json.key("attempts").u64(stats.attempts);
    json.key("blocking");
    json_estimate(json, stats.blocking);
    json.key("blocking_attempts").f64(stats.blocking_attempts);
    json.key("delayed");
    json_estimate(json, stats.delayed);
    json.key("wait");
    json_distribution(json, &stats.wait);
    json.key("delayed_wait");
    json_distribution(json, &stats.delayed_wait);
}

/// A tiny JSON object writer: enough for the summary, with commas placed for us.
#[derive(Default)]
struct Json {
    out: Vec<u8>,
    /// Per open object: has it had a member yet?
    had_member: Vec<bool>,
}

impl Json {
    fn open(&mut self) -> &mut Json {
        self.out.push(b'{');
        self.had_member.push(false);
        self
    }

    fn close(&mut self) -> &mut Json {
        self.had_member.pop();
        self.out.push(b'}');
        self
    }

    fn key(&mut self, key: &str) -> &mut Json {
        if let Some(had) = self.had_member.last_mut() {
            if *had {
                self.out.push(b',');
            }
            *had = true;
        }
        write_string(&mut self.out, key);
        self.out.push(b':');
        self
    }

    fn u64(&mut self, value: u64) -> &mut Json {
        crate::render::jsonl::write_u64(&mut self.out, value);
        self
    }

    /// Six decimals, trailing zeros trimmed: deterministic and readable.
    fn f64(&mut self, value: f64) -> &mut Json {
        let value = if value.is_finite() { value } else { 0.0 };
        let text = format!("{value:.6}");
        let text = text.trim_end_matches('0');
        let text = text
            .strip_suffix('.')
            .map_or(text.to_string(), |whole| format!("{whole}.0"));
        self.out.extend_from_slice(text.as_bytes());
        self
    }

    fn string(&mut self, value: &str) -> &mut Json {
        write_string(&mut self.out, value);
        self
    }

    fn raw(&mut self, value: &str) -> &mut Json {
        self.out.extend_from_slice(value.as_bytes());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `duration_f64` is `as f64`, bit for bit, around 0, 2^53, 2^63 and `u64::MAX`.
    #[test]
    fn durations_convert_as_u64_does() {
        let near = |base: u64| (0..3).map(move |step| base.wrapping_add(step).wrapping_sub(1));
        let edges = [0, 1 << 53, 1 << 63, u64::MAX]
            .into_iter()
            .flat_map(near)
            .chain([1, 5_018_749_695, (1 << 53) + 1, (1 << 63) + 1025]);
        for micros in edges {
            assert_eq!(
                duration_f64(micros).to_bits(),
                (micros as f64).to_bits(),
                "{micros}"
            );
        }
    }

    /// The id window answers exactly as a map would, for ids in start order, resumes of
    /// old ids, far ids, untracked runs and type indices that do not fit two bytes.
    #[test]
    fn outcome_and_notice_indices_follow_their_lists() {
        for (index, outcome) in OUTCOMES.iter().enumerate() {
            assert_eq!(outcome_index(*outcome), index, "{outcome:?}");
        }
        for (index, what) in Notice::ALL.iter().enumerate() {
            assert_eq!(notice_index(*what), index, "{what:?}");
        }
        assert_eq!(
            RejectReason::ALL[CONCURRENT_LIMIT],
            RejectReason::ConcurrentLimit
        );
    }

    #[test]
    fn running_types_behave_as_a_map() {
        let mut fast = RunningTypes::default();
        let mut model: BTreeMap<u32, usize> = BTreeMap::new();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut draw = |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        let mut next_id = 1u32;
        for _ in 0..50_000 {
            match draw(10) {
                0..=3 => {
                    let index = match draw(20) {
                        0 => NOT_TRACKED,
                        1 => 70_000,
                        n => n as usize,
                    };
                    let id = match draw(30) {
                        0 => next_id.saturating_sub(draw(1_000) as u32),
                        1 => next_id + 100_000,
                        2 => u32::MAX - draw(2) as u32,
                        _ => {
                            next_id += 1;
                            next_id
                        }
                    };
                    fast.insert(id, index);
                    model.insert(id, index);
                }
                _ => {
                    let id = next_id.saturating_sub(draw(200) as u32);
                    assert_eq!(fast.remove(id), model.remove(&id));
                }
            }
            assert_eq!(fast.is_empty(), model.is_empty());
        }
        for (&id, &index) in &model {
            // The preload hint reads the id's code in the window (0 outside it).
            let code = fast.preload(id);
            assert!(code == 0 || code == u64::from(RunningTypes::encode(index).unwrap()));
        }
        for (id, index) in model {
            assert_eq!(fast.remove(id), Some(index));
            assert_eq!(fast.preload(id), 0);
        }
        assert!(fast.is_empty());
    }
    use crate::event::AgentRef;
    use crate::event::RunProfile;
    use crate::spec::Answer;
    use std::rc::Rc;
    use subsim_rules::Mode;

    fn at(millis: u64, kind: EventKind) -> Event {
        Event {
            t: SimTime::from_millis(millis),
            seq: 0,
            rule: None,
            kind,
        }
    }

    fn agent(id: u32) -> AgentRef {
        AgentRef { id, name: None }
    }

    fn started(millis: u64, id: u32, running: u32) -> Event {
        at(
            millis,
            EventKind::AgentStarted {
                agent: agent(id),
                parent: AgentRef::MAIN,
                depth: 1,
                mode: Mode::Background,
                fork: false,
                running,
                cap_checked: true,
                profile: Rc::new(RunProfile::new("general-purpose", "sonnet", &[])),
            },
        )
    }

    fn finished(millis: u64, id: u32, outcome: Outcome, running: u32) -> Event {
        at(
            millis,
            EventKind::AgentFinished {
                agent: agent(id),
                outcome,
                running,
                detail: None,
            },
        )
    }

    fn requested(millis: u64) -> Event {
        at(
            millis,
            EventKind::SpawnRequested {
                caller: AgentRef::MAIN,
                agent_type: "general-purpose".into(),
                name: None,
                background: None,
                fork: false,
                arrival: None,
                stream: None,
            },
        )
    }

    fn rejected(millis: u64, reason: RejectReason, running: u32) -> Event {
        at(
            millis,
            EventKind::SpawnRejected {
                caller: AgentRef::MAIN,
                agent_type: "general-purpose".into(),
                name: None,
                reason,
                message: "".into(),
                hint: None,
                running,
            },
        )
    }

    fn session(cap: u32) -> Event {
        at(
            0,
            EventKind::SessionStarted {
                version: "2.1.230".into(),
                session_kind: subsim_rules::SessionKind::Interactive,
                cap: Some(cap),
                depth_limit: 3,
                fork_mode: true,
                background_disabled: false,
                main_agent: None,
                permission_mode: subsim_rules::PermissionMode::Default,
            },
        )
    }

    fn summarize(events: &[Event]) -> Summary {
        let mut summary = Summary::new();
        for event in events {
            summary.event(event);
        }
        summary
    }

    #[test]
    fn time_weighted_mean_running() {
        // 1 running over [0, 2s), 2 over [2s, 6s), 1 over [6s, 10s): (2 + 8 + 4) / 10 = 1.4.
        let summary = summarize(&[
            session(20),
            started(0, 1, 1),
            started(2_000, 2, 2),
            finished(6_000, 1, Outcome::Completed, 1),
            finished(10_000, 2, Outcome::Completed, 0),
        ]);
        assert_eq!(summary.makespan(), SimTime::from_secs(10));
        assert!(
            (summary.mean_running() - 1.4).abs() < 1e-12,
            "{}",
            summary.mean_running()
        );
        assert_eq!(summary.peak_running(), 2);
        assert_eq!(summary.finished(Outcome::Completed), 2);
    }

    #[test]
    fn empty_run() {
        let summary = Summary::new();
        assert_eq!(summary.mean_running(), 0.0);
        assert_eq!(summary.blocking(), 0.0);
        assert_eq!(
            summary.waits("main"),
            WaitStats {
                count: 0,
                mean_us: 0,
                p95_us: 0
            }
        );
        assert!(summary.render_text().contains("events"));
    }

    #[test]
    fn rejections_and_blocking() {
        let mut events = vec![session(2)];
        for index in 0..4 {
            events.push(requested(0));
            if index < 2 {
                events.push(started(0, index + 1, index + 1));
            } else {
                events.push(rejected(0, RejectReason::ConcurrentLimit, 2));
            }
        }
        events.push(requested(1_000));
        events.push(rejected(1_000, RejectReason::DepthLimit, 2));
        let summary = summarize(&events);
        assert_eq!(summary.spawns_requested(), 5);
        assert_eq!(summary.started(), 2);
        assert_eq!(summary.rejected(RejectReason::ConcurrentLimit), 2);
        assert_eq!(summary.rejected(RejectReason::DepthLimit), 1);
        assert_eq!(summary.rejected_total(), 3);
        assert!((summary.blocking() - 0.4).abs() < 1e-12);
        let text = summary.render_text();
        assert!(text.contains("    concurrent_limit  2\n"), "{text}");
        assert!(
            !text.contains("unknown_type"),
            "zero reasons are left out of the table: {text}"
        );
        let json = summary.render_json();
        assert!(
            json.contains(
                r#""rejected_by_reason":{"concurrent_limit":2,"depth_limit":1,"denied":0,"#
            ),
            "{json}"
        );
        assert!(json.contains(r#""blocking":0.4,"#), "{json}");
    }

    #[test]
    fn resumes_past_the_cap() {
        let resumed = |millis, id, running| {
            at(
                millis,
                EventKind::AgentResumed {
                    agent: agent(id),
                    by: AgentRef::MAIN,
                    cap_checked: false,
                    running,
                    mode: Mode::Background,
                    model: Rc::from("opus"),
                    effort: None,
                },
            )
        };
        let summary = summarize(&[
            session(2),
            resumed(0, 1, 1),
            resumed(0, 2, 2),
            resumed(0, 3, 3),
        ]);
        assert_eq!(summary.resumes(), (3, 1));
        assert_eq!(summary.peak_running(), 3);
    }

    /// The prompt type found through the kept `Rc` is the one found by name: a shared
    /// `Rc`, a fresh one of the same name and another type, interleaved.
    #[test]
    fn prompt_types_found_by_pointer_or_by_name_agree() {
        let shared: Rc<str> = Rc::from("worker");
        let other: Rc<str> = Rc::from("lead");
        let mut events = vec![session(20)];
        for prompt in 1..=30u64 {
            let agent_type = match prompt % 5 {
                0 => Rc::from("worker"),
                1 | 3 => other.clone(),
                _ => shared.clone(),
            };
            events.push(at(
                prompt * 1_000,
                EventKind::PermissionRequested {
                    agent: agent(1),
                    agent_type,
                    tool: "Bash".into(),
                    routed_to: Some(subsim_rules::prompt::RoutedTo::Main),
                    auto_denied: false,
                    prompt,
                },
            ));
        }
        for prompt in 1..=30u64 {
            events.push(at(
                40_000 + prompt * 1_000,
                EventKind::PermissionAnswered {
                    agent: agent(1),
                    tool: "Bash".into(),
                    answer: Answer::Approve,
                    waited_us: 40_000_000,
                    prompt,
                },
            ));
        }
        let by_type = summarize(&events).prompt_report_by_type();
        let counts: Vec<(&str, u64, u32)> = by_type
            .iter()
            .map(|report| {
                (
                    report.agent_type.as_str(),
                    report.waits.count,
                    report.queue_peak,
                )
            })
            .collect();
        assert_eq!(counts, [("lead", 12, 12), ("worker", 18, 18)]);
    }

    #[test]
    fn prompt_waits_mean_and_p95() {
        let mut events = vec![session(20)];
        // Twenty prompts shown in main, waiting 1s, 2s, …, 20s; one at the terminal; one auto-denied.
        for prompt in 1..=20u64 {
            events.push(at(
                0,
                EventKind::PermissionRequested {
                    agent: agent(1),
                    agent_type: Rc::from("worker"),
                    tool: "Bash".into(),
                    routed_to: Some(subsim_rules::prompt::RoutedTo::Main),
                    auto_denied: false,
                    prompt,
                },
            ));
        }
        events.push(at(
            0,
            EventKind::PermissionRequested {
                agent: agent(2),
                agent_type: Rc::from("worker"),
                tool: "Bash".into(),
                routed_to: Some(subsim_rules::prompt::RoutedTo::Terminal),
                auto_denied: false,
                prompt: 21,
            },
        ));
        events.push(at(
            0,
            EventKind::PermissionRequested {
                agent: agent(3),
                agent_type: Rc::from("worker"),
                tool: "Bash".into(),
                routed_to: None,
                auto_denied: true,
                prompt: 22,
            },
        ));
        // Answered in reverse order, to show that the percentile sorts.
        for prompt in (1..=20u64).rev() {
            events.push(at(
                prompt * 1_000,
                EventKind::PermissionAnswered {
                    agent: agent(1),
                    tool: "Bash".into(),
                    answer: Answer::Approve,
                    waited_us: prompt * 1_000_000,
                    prompt,
                },
            ));
        }
        events.push(at(
            30_000,
            EventKind::PermissionAnswered {
                agent: agent(2),
                tool: "Bash".into(),
                answer: Answer::Deny,
                waited_us: 7_000_000,
                prompt: 21,
            },
        ));
        let summary = summarize(&events);
        // Mean of 1..=20 s is 10.5 s; nearest-rank p95 of 20 values is the 19th: 19 s.
        assert_eq!(
            summary.waits("main"),
            WaitStats {
                count: 20,
                mean_us: 10_500_000,
                p95_us: 19_000_000
            }
        );
        assert_eq!(
            summary.waits("terminal"),
            WaitStats {
                count: 1,
                mean_us: 7_000_000,
                p95_us: 7_000_000
            }
        );
        assert_eq!(summary.prompts_by_route().get("main"), Some(&20));
        assert_eq!(summary.auto_denied(), 1);
        let text = summary.render_text();
        assert!(
            text.contains("wait, main session  mean 10.5s, p95 19s (20 answered)"),
            "{text}"
        );
    }

    /// Prompt `prompt` of agent `a<prompt>` (of `agent_type`) shown at `millis`, routed to
    /// main.
    fn prompt_request(millis: u64, prompt: u64, agent_type: &str) -> Event {
        at(
            millis,
            EventKind::PermissionRequested {
                agent: agent(prompt as u32),
                agent_type: Rc::from(agent_type),
                tool: "Bash".into(),
                routed_to: Some(subsim_rules::prompt::RoutedTo::Main),
                auto_denied: false,
                prompt,
            },
        )
    }

    /// Prompt `prompt` approved at `millis` after `waited_ms`.
    fn prompt_answer(millis: u64, prompt: u64, waited_ms: u64) -> Event {
        at(
            millis,
            EventKind::PermissionAnswered {
                agent: agent(prompt as u32),
                tool: "Bash".into(),
                answer: Answer::Approve,
                waited_us: waited_ms * 1_000,
                prompt,
            },
        )
    }

    #[test]
    fn prompt_waits_and_queue_per_agent_type() {
        let request = prompt_request;
        let answer = prompt_answer;
        let events = vec![
            session(20),
            request(0, 1, "reviewer"),
            request(0, 2, "reviewer"),
            request(0, 3, "main"),
            answer(1_000, 1, 1_000),
            request(1_000, 4, "reviewer"),
            answer(2_000, 3, 2_000),
            answer(3_000, 2, 3_000),
            at(
                4_000,
                EventKind::PermissionWithdrawn {
                    agent: agent(4),
                    tool: "Bash".into(),
                    prompt: 4,
                },
            ),
        ];
        let summary = summarize(&events);
        let by_type = summary.prompt_report_by_type();
        let names: Vec<&str> = by_type.iter().map(|r| r.agent_type.as_str()).collect();
        assert_eq!(names, ["reviewer", "main"]);
        let (reviewer, main) = (&by_type[0], &by_type[1]);
        assert_eq!((reviewer.waits.count, main.waits.count), (2, 1));
        assert_eq!(reviewer.waits.mean.mean, 2.0);
        assert_eq!((reviewer.waits.max, main.waits.p50), (3.0, 2.0));
        // reviewer: 2 waiting in [0, 1) s, 2 in [1, 3) (one answered, one more shown), 1 in
        // [3, 4), then 0: mean (2 + 4 + 1) / 4 = 1.75 over the 4 s; peak 2.
        assert_eq!(reviewer.queue_peak, 2);
        assert!(
            (reviewer.queue.mean - 1.75).abs() < 1e-9,
            "{:?}",
            reviewer.queue
        );
        assert_eq!(main.queue_peak, 1);
        assert!((main.queue.mean - 0.5).abs() < 1e-9, "{:?}", main.queue);
        let json = summary.render_json();
        assert!(
            json.contains("\"prompts_by_type\":{\"reviewer\":{\"waits\":{\"count\":2,"),
            "{json}"
        );
        let text = summary.render_text();
        assert!(text.contains("  type reviewer"), "{text}");
        assert!(text.contains("    prompt queue"), "{text}");
    }

    /// While every prompt is of one type, that type's statistics are the totals, kept
    /// once; a second type, or an answer to a prompt never shown, copies them to the first
    /// type, which goes on apart: its figures are those of the events of its own prompts.
    #[test]
    fn one_prompt_type_shares_the_totals_until_a_second_comes() {
        let request = prompt_request;
        let answer = prompt_answer;
        let one_type = vec![
            session(20),
            request(0, 1, "reviewer"),
            request(0, 2, "reviewer"),
            answer(1_000, 1, 1_000),
            answer(3_000, 2, 3_000),
        ];
        let summary = summarize(&one_type);
        let (waits, queue, peak) = summary.prompt_report();
        let by_type = summary.prompt_report_by_type();
        assert_eq!(by_type.len(), 1);
        assert_eq!(by_type[0].waits, waits);
        // (The type's interval is clamped at 0, the total's is not.)
        let clamped = queue.clamped(0.0, f64::INFINITY);
        assert_eq!((by_type[0].queue, by_type[0].queue_peak), (clamped, peak));
        assert_eq!((waits.count, peak), (2, 2));
        // A second type after the first one's two answers: the reviewer's figures stay its
        // own (2 waits, mean 2 s; 2 waiting in [0, 1) s, 1 in [1, 3), none in [3, 5)).
        let mut two_types = one_type.clone();
        two_types.push(request(4_000, 3, "main"));
        two_types.push(answer(5_000, 3, 1_000));
        let summary = summarize(&two_types);
        let by_type = summary.prompt_report_by_type();
        let (reviewer, main) = (&by_type[0], &by_type[1]);
        assert_eq!((reviewer.waits.count, main.waits.count), (2, 1));
        assert_eq!(reviewer.waits.mean.mean, 2.0);
        assert_eq!((reviewer.queue_peak, main.queue_peak), (2, 1));
        assert!(
            (reviewer.queue.mean - 0.8).abs() < 1e-9,
            "{:?}",
            reviewer.queue
        );
        assert!((main.queue.mean - 0.2).abs() < 1e-9, "{:?}", main.queue);
        assert_eq!(summary.prompt_report().0.count, 3);
        // An answer to a prompt never shown counts in the totals only.
        let mut unknown = one_type.clone();
        unknown.push(answer(5_000, 9, 4_000));
        let summary = summarize(&unknown);
        let by_type = summary.prompt_report_by_type();
        assert_eq!(summary.prompt_report().0.count, 3);
        assert_eq!(by_type[0].waits.count, 2);
        assert_eq!(by_type[0].waits.max, 3.0);
    }

    #[test]
    fn p95_small_samples() {
        assert_eq!(WaitStats::of(&[5]).p95_us, 5);
        assert_eq!(WaitStats::of(&[1, 2]).p95_us, 2);
        let hundred: Vec<u64> = (1..=100).collect();
        assert_eq!(WaitStats::of(&hundred).p95_us, 95);
        assert_eq!(WaitStats::of(&hundred).mean_us, 50);
    }

    #[test]
    fn notifications_and_json_shape() {
        let notify = |what| {
            at(
                5_000,
                EventKind::Notification {
                    to: AgentRef::MAIN,
                    from: agent(1),
                    what,
                },
            )
        };
        let summary = summarize(&[
            session(20),
            notify(subsim_rules::notify::Notice::Completion),
            notify(subsim_rules::notify::Notice::Completion),
            notify(subsim_rules::notify::Notice::BashDone),
            finished(5_000, 1, Outcome::Stopped, 0),
        ]);
        assert_eq!(summary.notifications().get("completion"), Some(&2));
        let json = summary.render_json();
        assert!(
            json.starts_with(r#"{"events":5,"makespan_us":5000000,"cap":20,"spawns":{"#),
            "{json}"
        );
        assert!(
            json.contains(r#""notifications":{"bash_done":1,"completion":2}"#),
            "{json}"
        );
        assert!(
            json.contains(
                r#""finished":{"completed":0,"partial":0,"failed":0,"stopped":1,"cancelled":0}"#
            ),
            "{json}"
        );
        assert!(json.ends_with("\"limit\":null}\n"), "{json}");
        assert_eq!(json, summary.clone().render_json(), "deterministic");
    }

    #[test]
    fn text_table_is_aligned() {
        let summary = summarize(&[
            session(20),
            started(0, 1, 1),
            finished(4_000, 1, Outcome::Completed, 0),
        ]);
        let text = summary.render_text();
        // The first row is `events`, padded: its value's column is every row's.
        let first = text.lines().next().unwrap();
        let column = "events".len() + first["events".len()..].find(|c: char| c != ' ').unwrap();
        for line in text.lines() {
            let chars: Vec<char> = line.chars().collect();
            assert!(
                chars[column - 1] == ' ' && chars[column] != ' ',
                "misaligned: {line:?}\n{text}"
            );
        }
        assert!(text.contains("mean running"), "{text}");
    }

    fn load_request(millis: u64, arrival: u64, agent_type: &str) -> Event {
        at(
            millis,
            EventKind::SpawnRequested {
                caller: AgentRef::MAIN,
                agent_type: agent_type.into(),
                name: None,
                background: None,
                fork: false,
                arrival: Some(arrival),
                stream: None,
            },
        )
    }

    #[test]
    fn load_arrivals_attempts_blocking_delay_and_waits() {
        let mut spec = crate::spec::SimSpec::poisson_load("t", 1.0, SimTime::from_secs(1), 10);
        if let Some(load) = spec.load.as_mut() {
            load.streams[0].retry = Retry::Queue;
            load.warmup = SimTime::from_secs(1);
        }
        let mut summary = Summary::for_spec(&spec);
        let events = [
            session(1),
            // Before the warm-up: arrival 1 starts; arrival 2 is rejected, and its retry at
            // 2 s (after the warm-up) is left out too.
            load_request(0, 1, "general-purpose"),
            started(0, 1, 1),
            load_request(500, 2, "general-purpose"),
            rejected(500, RejectReason::ConcurrentLimit, 1),
            // After it: arrival 3 is rejected, retried at 2 s (rejected: arrival 2 got the
            // slot) and at 4 s (started): one delayed arrival, 3 attempts, waited 3 s.
            load_request(1_000, 3, "general-purpose"),
            rejected(1_000, RejectReason::ConcurrentLimit, 1),
            finished(2_000, 1, Outcome::Completed, 0),
            load_request(2_000, 2, "general-purpose"),
            started(2_000, 2, 1),
            load_request(2_000, 3, "general-purpose"),
            rejected(2_000, RejectReason::ConcurrentLimit, 1),
            finished(4_000, 2, Outcome::Completed, 0),
            load_request(4_000, 3, "general-purpose"),
            started(4_000, 3, 1),
            // Arrival 4 starts at once.
            finished(5_000, 3, Outcome::Completed, 0),
            load_request(5_000, 4, "general-purpose"),
            started(5_000, 4, 1),
            finished(9_000, 4, Outcome::Completed, 0),
        ];
        for event in &events {
            summary.event(event);
        }
        let load = summary.load_report().unwrap();
        let stats = load.all;
        assert_eq!((stats.arrivals, stats.attempts), (2, 4));
        assert_eq!(stats.blocking.mean, 0.5);
        assert_eq!(stats.blocking_attempts, 0.5);
        assert_eq!(stats.delayed.mean, 0.5);
        assert_eq!(stats.wait.count, 2);
        assert_eq!((stats.wait.p50, stats.wait.max), (0.0, 3.0));
        assert_eq!(stats.wait.mean.mean, 1.5);
        assert_eq!(stats.delayed_wait.count, 1);
        assert_eq!(stats.delayed_wait.mean.mean, 3.0);
        // Running 1 over [1 s, 2 s), 0 at 2 s then 1 to 4 s, …: 1 except the instants, so 1.
        assert!(
            (stats.running.mean - 1.0).abs() < 1e-12,
            "{:?}",
            stats.running
        );
        assert_eq!(stats.utilisation.unwrap().mean, stats.running.mean);
        assert_eq!((load.warmup, load.window), (1.0, 8.0));
        // Four runs finished after the warm-up, over 8 s.
        assert_eq!(load.throughput, 0.5);
        assert_eq!(load.by_type.len(), 1);
        assert_eq!(load.by_type[0].0, "general-purpose");
        assert_eq!(load.by_type[0].1.arrivals, 2);
        let json = summary.render_json();
        assert!(
            json.contains(r#""load":{"retries":true,"warmup":1.0,"window":8.0,"throughput":0.5,"arrivals":2,"attempts":4,"blocking":{"mean":0.5,"#),
            "{json}"
        );
        let text = summary.render_text();
        assert!(
            text.contains("  arrivals            2 (4 attempts, retries included)"),
            "{text}"
        );
    }

    /// Random traces for the equivalence tests: load requests (first attempts and
    /// retries, of three types and of named streams or none), starts, rejections, ends,
    /// resumes and notifications, at times that mostly go forward (and sometimes back, as
    /// a hand-made trace may).
    fn random_trace(seed: u64, streams: &[Rc<str>]) -> Vec<Event> {
        let mut state = seed | 1;
        let mut draw = move |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        let types: [Rc<str>; 3] = ["worker".into(), "lead".into(), "helper".into()];
        let profiles: Vec<Rc<RunProfile>> = types
            .iter()
            .map(|agent_type| Rc::new(RunProfile::new(agent_type, "sonnet", &[])))
            .collect();
        let mut events = vec![session(8)];
        let (mut millis, mut running, mut next_id, mut arrival) = (0u64, 0u32, 1u32, 0u64);
        for _ in 0..3_000 {
            millis = match draw(20) {
                0 => millis.saturating_sub(draw(500)),
                1..=9 => millis,
                _ => millis + draw(700),
            };
            // Mostly the first type, through the one shared `Rc` the kernel hands out.
            let kind = match draw(16) {
                0 => 2,
                1 | 2 => 1,
                _ => 0,
            };
            let agent_type = if draw(30) == 0 {
                Rc::from(&*types[kind])
            } else {
                types[kind].clone()
            };
            let event = match draw(12) {
                0..=3 => {
                    let retry = arrival > 0 && draw(4) == 0;
                    if !retry {
                        arrival += 1;
                    }
                    EventKind::SpawnRequested {
                        caller: AgentRef::MAIN,
                        agent_type,
                        name: None,
                        background: None,
                        fork: false,
                        arrival: match draw(8) {
                            0 => None,
                            _ if retry => Some(arrival.saturating_sub(draw(3))),
                            _ => Some(arrival),
                        },
                        stream: match (streams.len() as u64, draw(6)) {
                            (0, _) | (_, 0) => None,
                            (count, _) => Some(streams[draw(count) as usize].clone()),
                        },
                    }
                }
                4..=6 => {
                    running += 1;
                    next_id += 1;
                    EventKind::AgentStarted {
                        agent: agent(next_id),
                        parent: AgentRef::MAIN,
                        depth: 1,
                        mode: Mode::Background,
                        fork: false,
                        running,
                        cap_checked: true,
                        profile: profiles[kind].clone(),
                    }
                }
                7 => EventKind::SpawnRejected {
                    caller: AgentRef::MAIN,
                    agent_type,
                    name: None,
                    reason: if draw(4) == 0 {
                        RejectReason::ALL[draw(RejectReason::ALL.len() as u64) as usize]
                    } else {
                        RejectReason::ConcurrentLimit
                    },
                    message: "".into(),
                    hint: None,
                    running,
                },
                8..=9 => {
                    running = running.saturating_sub(1);
                    EventKind::AgentFinished {
                        agent: agent(next_id.saturating_sub(draw(12) as u32)),
                        outcome: OUTCOMES[draw(OUTCOMES.len() as u64) as usize],
                        running,
                        detail: None,
                    }
                }
                10 => {
                    running += 1;
                    EventKind::AgentResumed {
                        agent: agent(next_id.saturating_sub(draw(30) as u32)),
                        by: AgentRef::MAIN,
                        cap_checked: false,
                        running,
                        mode: Mode::Background,
                        model: "sonnet".into(),
                        effort: None,
                    }
                }
                _ => EventKind::Notification {
                    to: AgentRef::MAIN,
                    from: agent(next_id),
                    what: Notice::ALL[draw(Notice::ALL.len() as u64) as usize],
                },
            };
            events.push(at(millis, event));
        }
        events
    }

    /// Hands `event` to `sink` as the kernel does: the kinds with a [`Sink`] method of
    /// their own through it.
    fn hand(sink: &mut dyn Sink, event: &Event) {
        match &event.kind {
            EventKind::SpawnRequested { .. } => sink.spawn_requested(event),
            EventKind::SpawnRejected { .. } => sink.spawn_rejected(event),
            EventKind::AgentStarted { .. } => sink.agent_started(event),
            EventKind::AgentFinished { .. } => sink.agent_finished(event),
            EventKind::Notification { .. } => sink.notification(event),
            EventKind::ReportDelivered { .. } => sink.report_delivered(event),
            _ => sink.event(event),
        }
    }

    /// Everything a summary shows, and its running area.
    fn shown(summary: &Summary) -> String {
        format!(
            "{}{}{:?}{:?}{}",
            summary.render_text(),
            summary.render_json(),
            summary.load_report(),
            summary.prompt_report(),
            summary.running_area()
        )
    }

    /// The running area, summed once per change of the count, is the sum of
    /// `running × (t − last t)` over every event (the count holds from one event to the
    /// next), on random traces whose times sometimes go back.
    #[test]
    fn the_running_area_is_the_sum_over_events() {
        for seed in 1..=20u64 {
            let events = random_trace(seed * 7_919, &[]);
            let mut summary = Summary::new();
            let (mut area, mut running, mut last) = (0u128, 0u32, 0u64);
            for (index, event) in events.iter().enumerate() {
                if index % 2 == 0 {
                    hand(&mut summary, event);
                } else {
                    summary.event(event);
                }
                let t = event.t.as_micros();
                area += u128::from(running) * u128::from(t.saturating_sub(last));
                last = last.max(t);
                if let Some(now) = event.kind.running() {
                    running = now;
                }
                assert_eq!(summary.running_area(), area, "seed {seed}");
            }
        }
    }

    /// The fast paths (the kinds' own methods, as the kernel calls them; a request or a
    /// start of the type last seen; first starts counted in bulk) leave exactly what the
    /// general paths leave: the same random traces into a summary through `event` only,
    /// whose type caches are emptied before every event (so that every request
    /// and start takes the general path) and whose pending first starts are counted after
    /// every event (one by one, as before they were kept pending) show the same, bit for
    /// bit; with and without a warm-up, retries, a mix of retrying and non-retrying
    /// streams, named streams.
    #[test]
    fn fast_paths_show_what_the_general_paths_show() {
        let names: [Rc<str>; 2] = ["left".into(), "right".into()];
        for seed in 1..=24u64 {
            let mut spec = crate::spec::SimSpec::poisson_load("t", 1.0, SimTime::from_secs(1), 10);
            let streams: Vec<Rc<str>> = match seed % 4 {
                0 => Vec::new(),
                _ => names.to_vec(),
            };
            if let Some(load) = spec.load.as_mut() {
                load.warmup = SimTime::from_millis(seed % 3 * 40_000);
                let first = load.streams[0].clone();
                load.streams.clear();
                for (index, retry) in [Retry::Queue, Retry::None].into_iter().enumerate() {
                    if index == 0 || !streams.is_empty() {
                        load.streams.push(crate::spec::LoadStream {
                            name: streams.get(index).cloned(),
                            retry: if seed % 2 == 0 { Retry::None } else { retry },
                            ..first.clone()
                        });
                    }
                }
            }
            let events = random_trace(seed * 104_729, &streams);
            let mut fast = Summary::for_spec(&spec);
            let mut general = Summary::for_spec(&spec);
            for event in &events {
                hand(&mut fast, event);
                general.load.request_cache = None;
                general.load.start_cache = None;
                general.event(event);
                // What a first start counted before `first_starts` (not `settle`).
                let mixed = general.load.mixed;
                let count_now = |stats: &mut TypeLoad| {
                    for _ in 0..std::mem::take(&mut stats.first_starts) {
                        stats.arrivals += 1;
                        stats.attempts += 1;
                        stats.blocked.add(false);
                        if mixed {
                            stats.delayed.add(false);
                        }
                        stats.wait.record(0);
                    }
                };
                count_now(&mut general.load.all);
                general
                    .load
                    .types
                    .iter_mut()
                    .for_each(|(_, stats)| count_now(stats));
                general
                    .load
                    .streams
                    .iter_mut()
                    .for_each(|(_, _, stats)| count_now(stats));
            }
            assert!(fast.load_report().is_some(), "seed {seed}");
            assert_eq!(shown(&fast), shown(&general), "seed {seed}");
        }
    }

    /// A summary made for a spec without `load` follows no runs per type, and shows what
    /// a summary that does not know shows.
    #[test]
    fn without_load_the_per_type_bookkeeping_is_skipped_unseen() {
        let spec = crate::spec::SimSpec::minimal("no load");
        assert!(spec.load.is_none());
        for seed in 1..=12u64 {
            let events: Vec<Event> = random_trace(seed * 15_485_863, &[])
                .into_iter()
                .map(|mut event| {
                    if let EventKind::SpawnRequested { arrival, .. } = &mut event.kind {
                        *arrival = None;
                    }
                    event
                })
                .collect();
            let mut off = Summary::for_spec(&spec);
            let mut new = Summary::new();
            for event in &events {
                hand(&mut off, event);
                new.event(event);
            }
            assert!(off.load.off && !off.load.split && off.load.types.is_empty());
            assert!(
                new.load.split,
                "seed {seed}: the trace has runs of several types"
            );
            assert_eq!(shown(&off), shown(&new), "seed {seed}");
        }
    }

    #[test]
    fn no_load_no_load_statistics() {
        let summary = summarize(&[session(20), started(0, 1, 1)]);
        assert!(summary.load_report().is_none());
        assert!(summary.render_json().contains(r#""load":null"#));
    }

    #[test]
    fn load_statistics_per_agent_type() {
        let mut summary = Summary::new();
        let started_as = |millis, id, running, agent_type: &str| {
            at(
                millis,
                EventKind::AgentStarted {
                    agent: agent(id),
                    parent: AgentRef::MAIN,
                    depth: 1,
                    mode: Mode::Background,
                    fork: false,
                    running,
                    cap_checked: true,
                    profile: Rc::new(RunProfile::new(agent_type, "sonnet", &[])),
                },
            )
        };
        let events = [
            session(1),
            // Two `a` arrivals (one blocked) before any `b`; then a `b` arrival, started.
            load_request(0, 1, "a"),
            started_as(0, 1, 1, "a"),
            load_request(1_000, 2, "a"),
            rejected(1_000, RejectReason::ConcurrentLimit, 1),
            finished(2_000, 1, Outcome::Completed, 0),
            load_request(2_000, 3, "b"),
            started_as(2_000, 2, 1, "b"),
            finished(4_000, 2, Outcome::Completed, 0),
        ];
        for event in &events {
            summary.event(event);
        }
        let load = summary.load_report().unwrap();
        assert_eq!(load.all.arrivals, 3);
        let (a, b) = (&load.by_type[0], &load.by_type[1]);
        assert_eq!(
            (a.0.as_str(), a.1.arrivals, a.1.blocking.mean),
            ("a", 2, 0.5)
        );
        assert_eq!(
            (b.0.as_str(), b.1.arrivals, b.1.blocking.mean),
            ("b", 1, 0.0)
        );
        // `a` ran over [0, 2 s) of 4 s, `b` over [2 s, 4 s).
        assert_eq!(a.1.running.mean, 0.5);
        assert_eq!(b.1.running.mean, 0.5);
        assert_eq!(load.all.running.mean, 1.0);
        assert!(summary.render_text().contains("  type a"));
    }
}
