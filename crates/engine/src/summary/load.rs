//! The load generator's statistics: arrivals, attempts, blocking, waits and running counts,
//! in total, per agent type and per stream; and the report types they become.
//!
//! Its `#[inline(…)]` and `#[cold]` attributes are measured: docs/PERFORMANCE.md, "Choices
//! that need a benchmark".

use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use crate::ids::IdMap;
use crate::stats::{BatchMeans, Distribution, Estimate, Quantiles, ShareMeans};

/// Statistics of the load generator's arrivals (`load:`), after the warm-up: arrivals and
/// attempts, blocking, delayed share, waits from the first request to the start, the
/// time-weighted running count; in total and per agent type.
#[derive(Clone, Debug, Default)]
pub(super) struct LoadStats {
    /// `load.warmup`, µs: arrivals first requested before it are left out, and time
    /// averages start there.
    pub(super) warmup: u64,
    /// Whether the load's `retry` policy tries rejected arrivals again (of any stream).
    pub(super) retries: bool,
    /// Some streams retry and others do not: the delayed share is counted apart from
    /// blocking (`TypeLoad::delayed`).
    pub(super) mixed: bool,
    /// The offered load, Erlangs, when every stream queues (`retry: queue`) and the load
    /// is known ([`SimSpec::offered_load`](crate::spec::SimSpec::offered_load)): at or
    /// past the cap the queue never settles.
    pub(super) queued_load: Option<f64>,
    /// The named streams (the list form of `load`), in list order, with whether each
    /// retries and its statistics (no running count: that is per type).
    pub(super) streams: Vec<(Rc<str>, bool, TypeLoad)>,
    /// The load request whose outcome comes next: (arrival, type index, stream index or
    /// [`NO_STREAM`], first attempt?).
    pub(super) pending: Option<(u64, usize, usize, bool)>,
    /// Arrivals rejected by the cap that a retry may still start: arrival → (first request,
    /// µs; type index; stream index; counted, i.e. after the warm-up).
    pub(super) waiting: BTreeMap<u64, (u64, usize, usize, bool)>,
    /// Running agents by id → their type index (for per-type running means), for every
    /// type but the first one started (the usual only one), so that a load of one type
    /// pays for no map; resumed runs map to [`NOT_TRACKED`].
    pub(super) running_types: RunningTypes,
    pub(super) all: TypeLoad,
    pub(super) types: Vec<(Rc<str>, TypeLoad)>,
    /// Runs finished after the warm-up.
    pub(super) finished: u64,
    /// The last type name seen by `requested` and by `started`, with its index: the
    /// kernel hands out the same `Rc` again and again, so a pointer compare finds it.
    pub(super) request_cache: Option<(Rc<str>, usize)>,
    pub(super) start_cache: Option<(Rc<str>, usize)>,
    /// A run of another type than type 0, or a resume, came: type 0's running count is
    /// kept apart from the total's. Until then it is the total's (see `split_running`).
    pub(super) split: bool,
    /// The run has no load generator ([`Summary::for_spec`] of a spec without `load`): no
    /// arrival will come and nothing here is reported, so runs are not followed per type.
    /// (A [`Summary::new`] does not know, and follows them.)
    pub(super) off: bool,
}

/// `running_types` value of a resumed run, counted in the total running only.
pub(super) const NOT_TRACKED: usize = usize::MAX;

/// Running agents by id → type index. Agent ids are handed out in start order, so the
/// running ones lie in a window of ids: a vector over that window (one byte per id,
/// trimmed from the front as the oldest end) answers without hashing, and stays a few
/// megabytes where a map of a million running agents misses the cache on every finish.
/// Ids before the window (a resumed old agent), ids far past it and type indices that do
/// not fit go in a map.
#[derive(Clone, Debug, Default)]
pub(super) struct RunningTypes {
    /// The id of `window[0]`.
    pub(super) base: u32,
    /// 0: not running here; `u8::MAX`: [`NOT_TRACKED`]; else the type index + 1.
    pub(super) window: VecDeque<u8>,
    /// Non-zero entries of `window`.
    pub(super) in_window: usize,
    pub(super) others: IdMap<usize>,
}

impl RunningTypes {
    pub(super) fn is_empty(&self) -> bool {
        self.in_window == 0 && self.others.is_empty()
    }

    pub(super) fn encode(index: usize) -> Option<u8> {
        if index == NOT_TRACKED {
            Some(u8::MAX)
        } else {
            u8::try_from(index + 1).ok().filter(|&code| code < u8::MAX)
        }
    }

    pub(super) fn insert(&mut self, id: u32, index: usize) {
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
    pub(super) fn preload(&self, id: u32) -> u64 {
        id.checked_sub(self.base)
            .and_then(|offset| self.window.get(offset as usize))
            .map_or(0, |&code| u64::from(code))
    }

    pub(super) fn remove(&mut self, id: u32) -> Option<usize> {
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
pub(super) const NO_STREAM: usize = usize::MAX;

/// One agent type's (or all) load statistics.
#[derive(Clone, Debug, Default)]
pub(super) struct TypeLoad {
    pub(super) arrivals: u64,
    pub(super) attempts: u64,
    pub(super) rejected_attempts: u64,
    /// 1 per arrival whose first attempt the cap rejected, else 0.
    pub(super) blocked: ShareMeans,
    /// 1 per arrival that was rejected by the cap and will try again, else 0; kept only
    /// when some streams retry and others do not (else it is `blocked`, or nothing).
    pub(super) delayed: ShareMeans,
    /// First request → start, µs, of every started arrival (0 for a first-attempt start).
    pub(super) wait: Quantiles,
    /// The same, of delayed arrivals only.
    pub(super) delayed_wait: Quantiles,
    /// Running count of this type (for `all`: every run, resumes included).
    pub(super) running: TimeAverage,
    /// Arrivals started at their first attempt (after the warm-up) not yet counted in the
    /// fields above. Each is an arrival, an attempt, a 0 for `blocked` (and for `delayed`
    /// when kept) and a wait of 0: the usual arrival of a load run is one add here, and
    /// [`TypeLoad::settle`] counts them in bulk before anything else is counted or read,
    /// which leaves exactly what counting them one by one left.
    pub(super) first_starts: u64,
}

impl TypeLoad {
    /// Counts the pending `first_starts` (`mixed`: `delayed` is kept).
    pub(super) fn settle(&mut self, mixed: bool) {
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
    pub(super) fn settled(&self, mixed: bool) -> TypeLoad {
        let mut stats = self.clone();
        stats.settle(mixed);
        stats
    }
}

/// A time-weighted average of a count, batched for its interval, from the warm-up on.
#[derive(Clone, Debug, Default)]
pub(super) struct TimeAverage {
    pub(super) value: u32,
    pub(super) last_t: u64,
    pub(super) peak: u32,
    pub(super) batches: BatchMeans,
}

/// `micros as f64`, the same value: converted as an `i64` when it is one (a single
/// instruction on x86-64, where converting a `u64` takes six).
#[inline]
pub(super) fn duration_f64(micros: u64) -> f64 {
    match i64::try_from(micros) {
        Ok(micros) => micros as f64,
        Err(_) => long_duration_f64(micros),
    }
}

/// [`duration_f64`] of 2^63 µs or more (out of line, or the two conversions are merged
/// back into the long one).
#[cold]
#[inline(never)]
pub(super) fn long_duration_f64(micros: u64) -> f64 {
    micros as f64
}

impl TimeAverage {
    #[inline]
    pub(super) fn set(&mut self, t: u64, value: u32, warmup: u64) {
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
    pub(super) fn advance(&mut self, t: u64, warmup: u64) {
        let from = self.last_t.max(warmup);
        if t > from {
            self.batches
                .add(f64::from(self.value), duration_f64(t - from));
        }
        self.last_t = self.last_t.max(t);
    }

    /// The average up to `end`, with its interval.
    pub(super) fn estimate(&self, end: u64, warmup: u64) -> Estimate {
        let mut closed = self.clone();
        closed.advance(end, warmup);
        closed.batches.estimate()
    }
}

impl LoadStats {
    #[cold]
    pub(super) fn type_index(
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
    pub(super) fn each(&mut self, index: usize, stream: usize, change: impl Fn(&mut TypeLoad)) {
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
    pub(super) fn first_start(&mut self, index: usize, stream: usize) {
        self.all.first_starts += 1;
        if self.types.len() > 1 {
            self.types[index].1.first_starts += 1;
        }
        if let Some((_, _, stats)) = self.streams.get_mut(stream) {
            stats.first_starts += 1;
        }
    }

    /// The index of the stream named `name` ([`NO_STREAM`] without one).
    pub(super) fn stream_index(&self, name: Option<&Rc<str>>) -> usize {
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
    pub(super) fn stream_retries(&self, stream: usize) -> bool {
        match self.streams.get(stream) {
            Some((_, retries, _)) => *retries,
            None => self.retries,
        }
    }

    /// Type `index`'s statistics, whole.
    pub(super) fn type_stats(&self, index: usize) -> TypeLoad {
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
    pub(super) fn cached_index(
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
    pub(super) fn split_running(&mut self, t: u64, total_before: u32) {
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
    pub(super) fn requested(
        &mut self,
        arrival: u64,
        agent_type: &Rc<str>,
        stream: Option<&Rc<str>>,
    ) {
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
    pub(super) fn requested_slow(
        &mut self,
        arrival: u64,
        agent_type: &Rc<str>,
        stream: Option<&Rc<str>>,
    ) {
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
    pub(super) fn rejected(&mut self, t: u64, by_cap: bool) {
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
    pub(super) fn started(&mut self, t: u64, id: u32, agent_type: &Rc<str>, total_before: u32) {
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
    pub(super) fn started_by_type(&mut self, t: u64, id: u32, index: usize, total_before: u32) {
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
    pub(super) fn started_again(&mut self, t: u64, arrival: u64, index: usize, stream: usize) {
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
    pub(super) fn resumed(&mut self, t: u64, id: u32, total_before: u32) {
        self.split_running(t, total_before);
        self.running_types.insert(id, NOT_TRACKED);
    }

    /// A run ended.
    #[inline]
    pub(super) fn finished(&mut self, t: u64, id: u32) {
        if t >= self.warmup {
            self.finished += 1;
        }
        if self.split {
            self.finished_by_type(t, id);
        }
    }

    /// [`LoadStats::finished`]'s per-type running count, once there is more than one type.
    #[inline(never)]
    pub(super) fn finished_by_type(&mut self, t: u64, id: u32) {
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

/// Load statistics of a run ([`Summary::load_report`](super::Summary::load_report)); durations in seconds.
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
    /// The offered load, Erlangs, when the queue is at or past saturation: every stream
    /// queues (`retry: queue`) and offered load ≥ cap. The mean wait of such a run has no
    /// steady value to converge to: it grows with the run's length.
    pub saturated: Option<f64>,
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

pub(super) fn seconds(distribution: Distribution) -> SecondsDistribution {
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
