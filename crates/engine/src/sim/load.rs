//! The load generator: its streams' arrival processes (Poisson, fixed spacing, a burst, a
//! rate schedule, on/off bursts, recorded times) and the retries of rejected arrivals.
//!
//! Determinism: every stream draws its arrival times (and on/off period lengths) from its
//! own generator, derived from the seed and the stream's name — the single `load:` form's
//! one stream from the seed alone, as before there were streams — so adding a stream
//! changes no other stream's arrival times. All arrivals of one instant are made in one
//! wake, stream by stream in list order, and in file order within a stream. Arrivals are
//! numbered across the whole load (1, 2, …) in the order they are made.
//!
//! Its `#[inline(…)]` and `#[cold]` attributes are measured: docs/PERFORMANCE.md, "Choices
//! that need a benchmark".

use std::collections::BTreeMap;
use std::rc::Rc;

use rand_chacha::ChaCha8Rng;
use subsim_rules::RejectReason;

use crate::dist::Dist;
use crate::event::{DrawnFor, DrawnOn, Limit};
use crate::spec::{Arrivals, LoadSpec, LoadUntil, RatePhase, Retry, SpawnSpec};
use crate::time::SimTime;

use super::clock::Wake;
use super::spawn::Call;
use super::{purpose, stream, Kernel};

/// The load generator's state: one [`Stream`] per `load` stream.
#[derive(Default)]
pub(super) struct Streams {
    list: Vec<Stream>,
    /// Arrival → its stream, for rejected arrivals that will try again (kept only with two
    /// or more streams; with one, every arrival is stream 0's).
    waiting: BTreeMap<u64, u32>,
}

/// One stream's generator.
struct Stream {
    name: Option<Rc<str>>,
    arrivals: Arrivals,
    until: LoadUntil,
    retry: Retry,
    spawn: Rc<SpawnSpec>,
    rng: ChaCha8Rng,
    /// `Poisson`'s mean gap, µs, and its sampler (see `dist::ExpCache`).
    gap: f64,
    exp: crate::dist::ExpCache,
    /// When its next arrival is due; `None` once the stream is done.
    next: Option<SimTime>,
    /// Arrivals made so far.
    made: u64,
    /// `Schedule`: the current phase and when it started, µs.
    phase: usize,
    phase_start: u64,
    /// `OnOff`: when the current on period ends, µs.
    on_end: u64,
    /// `Times`: the next time's index.
    cursor: usize,
    /// `OnOff`: the most on/off periods one draw may pass without an arrival
    /// (`session.limits.max_silent_steps`), and whether a draw passed it: the kernel then
    /// stops the run at that limit.
    max_cycles: u64,
    stalled: bool,
}

/// Phases a rate schedule's draw walks one by one before it skips whole cycles of the
/// schedule at once: a draw that passes this many phases without an arrival is in a quiet
/// stretch (1 ms phases at a near-zero rate spun for minutes), and the walk below this
/// keeps the draws of every ordinary schedule what they were.
const SCHEDULE_WALK: u32 = 64;

/// FNV-1a of a stream's name: what its generator is derived from, so a stream keeps its
/// arrival times whatever other streams the load has, and in whatever order.
fn name_key(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Streams {
    /// The generator of `load`'s streams under `seed`.
    pub(super) fn new(load: Option<&LoadSpec>, seed: u64) -> Streams {
        let list = load
            .map(|load| load.streams.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|spec| Stream {
                name: spec.name.clone(),
                arrivals: spec.arrivals.clone(),
                until: spec.until,
                retry: spec.retry,
                spawn: Rc::new(spec.spawn.clone()),
                rng: match &spec.name {
                    None => stream(seed, 0, purpose::ARRIVALS),
                    Some(name) => stream(seed, name_key(name), purpose::ARRIVALS),
                },
                gap: match spec.arrivals {
                    Arrivals::Poisson(rate) => 1e6 / rate,
                    Arrivals::Every(..)
                    | Arrivals::Burst(..)
                    | Arrivals::Schedule(..)
                    | Arrivals::OnOff { .. }
                    | Arrivals::Times(..) => 0.0,
                },
                exp: crate::dist::ExpCache::default(),
                next: None,
                made: 0,
                phase: 0,
                phase_start: 0,
                on_end: 0,
                cursor: 0,
                max_cycles: u64::MAX,
                stalled: false,
            })
            .collect();
        Streams {
            list,
            waiting: BTreeMap::new(),
        }
    }

    /// The earliest pending arrival of any stream.
    fn earliest(&self) -> Option<SimTime> {
        self.list.iter().filter_map(|stream| stream.next).min()
    }
}

impl super::LoadGen {
    /// The name of the load stream `call` comes from, if it is a load arrival's and its
    /// stream has one (`spawn_requested.stream`).
    pub(super) fn stream_name(&self, call: Call) -> Option<&Rc<str>> {
        match call {
            Call::Step => None,
            Call::Load { stream, .. } => self.streams.list[stream].name.as_ref(),
        }
    }
}

impl Stream {
    /// Whether an arrival at `at` is still part of the stream (its count not reached,
    /// within its duration).
    fn continues(&self, at: SimTime) -> bool {
        match self.until {
            LoadUntil::Count(count) => self.made < count,
            LoadUntil::Duration(end) => at <= end,
        }
    }

    /// The stream's first arrival.
    fn first(&mut self, horizon: SimTime) -> Option<SimTime> {
        let at = match &self.arrivals {
            Arrivals::Poisson(_) => SimTime(self.exp.sample_exp(self.gap, &mut self.rng)),
            Arrivals::Every(_) | Arrivals::Burst(_) => SimTime::ZERO,
            Arrivals::Schedule(_) => self.scheduled_after(0, horizon),
            Arrivals::OnOff { on, .. } => {
                self.on_end = on.sample(&mut self.rng);
                self.on_off_after(0, horizon)
            }
            Arrivals::Times(times) => SimTime(*times.first()?),
        };
        self.continues(at).then_some(at)
    }

    /// The arrival after the one just made at `now` (`None`: the stream is done).
    ///
    /// A Poisson stream's draw is made here, inline in [`Kernel::arrival`]'s loop; every
    /// other kind is drawn out of line ([`Stream::after_other`]). As one function of its
    /// own, every kind's `after` saved six registers, built a frame and jumped through a
    /// table for every arrival.
    #[inline(always)]
    fn after(&mut self, now: SimTime, horizon: SimTime) -> Option<SimTime> {
        if let Arrivals::Poisson(_) = self.arrivals {
            let at = now.plus(self.exp.sample_exp(self.gap, &mut self.rng));
            return self.continues(at).then_some(at);
        }
        self.after_other(now, horizon)
    }

    /// [`Stream::after`] for every kind of arrivals but `Poisson`.
    #[inline(never)]
    fn after_other(&mut self, now: SimTime, horizon: SimTime) -> Option<SimTime> {
        let at = match &self.arrivals {
            Arrivals::Poisson(_) => now.plus(self.exp.sample_exp(self.gap, &mut self.rng)),
            Arrivals::Every(micros) => now.plus((*micros).max(1)),
            Arrivals::Burst(size) => {
                if self.made >= u64::from(*size) {
                    return None;
                }
                now
            }
            Arrivals::Schedule(_) => self.scheduled_after(now.as_micros(), horizon),
            Arrivals::OnOff { .. } => self.on_off_after(now.as_micros(), horizon),
            Arrivals::Times(times) => {
                self.cursor += 1;
                SimTime(*times.get(self.cursor)?)
            }
        };
        self.continues(at).then_some(at)
    }

    /// A piecewise constant Poisson rate: exact, because the exponential forgets — a draw
    /// that passes the end of its phase starts again from that end at the next phase's
    /// rate. Past `horizon` (the run's time limit) the draw stops where it is. After
    /// [`SCHEDULE_WALK`] phases without an arrival the rest of the draw is
    /// [`Stream::skip_cycles`], O(phases) whatever the rates.
    fn scheduled_after(&mut self, from: u64, horizon: SimTime) -> SimTime {
        let Arrivals::Schedule(phases) = &self.arrivals else {
            return SimTime(from);
        };
        let phases: Rc<[RatePhase]> = phases.clone();
        let mut at = from;
        for _ in 0..SCHEDULE_WALK {
            let phase = phases[self.phase];
            let end = self.phase_start.saturating_add(phase.length);
            if phase.rate > 0.0 && at < end {
                let next = at.saturating_add(
                    Dist::Exp {
                        mean: 1e6 / phase.rate,
                    }
                    .sample(&mut self.rng),
                );
                if next < end {
                    return SimTime(next);
                }
            }
            at = end;
            self.phase = (self.phase + 1) % phases.len();
            self.phase_start = end;
            if at > horizon.as_micros() {
                return SimTime(at);
            }
        }
        self.skip_cycles(&phases, horizon)
    }

    /// The next arrival of a rate schedule from the start of the current phase, by the
    /// integrated rate: one unit exponential E, whole cycles of the schedule (each
    /// expecting Σ rate × length arrivals) skipped at once, then the phases walked until
    /// their expected arrivals pass E. The same law as the walk (a Poisson process of
    /// that rate), in O(phases).
    fn skip_cycles(&mut self, phases: &[RatePhase], horizon: SimTime) -> SimTime {
        use rand_distr::Distribution as _;
        let cycle: u64 = phases
            .iter()
            .map(|phase| phase.length)
            .fold(0, u64::saturating_add);
        let mass = |phase: &RatePhase| phase.rate * phase.length as f64 / 1e6;
        let per_cycle: f64 = phases.iter().map(mass).sum();
        let mut left: f64 = rand_distr::Exp1.sample(&mut self.rng);
        let horizon = horizon.as_micros();
        // Whole cycles, but never further than just past the horizon.
        let to_horizon = horizon.saturating_sub(self.phase_start) / cycle.max(1) + 1;
        let whole = if per_cycle > 0.0 {
            ((left / per_cycle).floor() as u64).min(to_horizon)
        } else {
            to_horizon
        };
        self.phase_start = self.phase_start.saturating_add(whole.saturating_mul(cycle));
        left -= whole as f64 * per_cycle;
        loop {
            let phase = phases[self.phase];
            let end = self.phase_start.saturating_add(phase.length);
            if self.phase_start > horizon {
                return SimTime(self.phase_start);
            }
            if phase.rate > 0.0 && left < mass(&phase) {
                let offset = (left.max(0.0) * 1e6 / phase.rate) as u64;
                return SimTime(self.phase_start.saturating_add(offset).min(end - 1));
            }
            left -= mass(&phase);
            self.phase = (self.phase + 1) % phases.len();
            self.phase_start = end;
        }
    }

    /// On/off arrivals: Poisson within on periods; a draw that passes the end of its on
    /// period goes on from the end of the off period after it. Period lengths are drawn,
    /// so quiet periods cannot be skipped in bulk: a draw that passes `max_cycles` of them
    /// marks the stream stalled, and the kernel stops the run at `max_silent_steps`.
    fn on_off_after(&mut self, from: u64, horizon: SimTime) -> SimTime {
        let Arrivals::OnOff { rate, on, off } = self.arrivals else {
            return SimTime(from);
        };
        let mut at = from;
        let mut cycles: u64 = 0;
        loop {
            if at < self.on_end {
                let next = at.saturating_add(Dist::Exp { mean: 1e6 / rate }.sample(&mut self.rng));
                if next < self.on_end {
                    return SimTime(next);
                }
            }
            at = self.on_end.saturating_add(off.sample(&mut self.rng));
            self.on_end = at.saturating_add(on.sample(&mut self.rng));
            if at > horizon.as_micros() {
                return SimTime(at);
            }
            cycles += 1;
            if cycles >= self.max_cycles {
                self.stalled = true;
                return SimTime(at);
            }
        }
    }
}

impl Kernel<'_> {
    // -- load ---------------------------------------------------------------------------

    /// Schedules the load's first arrival (at the start of the run).
    pub(super) fn start_load(&mut self) {
        let horizon = self.trace.limits.max_time;
        for stream in &mut self.load.streams.list {
            stream.max_cycles = self.trace.limits.max_silent_steps;
            stream.next = stream.first(horizon);
        }
        if self.load_stalled() {
            return;
        }
        if let Some(first) = self.load.streams.earliest() {
            self.clock.schedule_arrival(first);
        }
    }

    /// Every arrival due now, stream by stream; then the next arrival is scheduled. The
    /// earliest next arrival is found on the way (an arrival changes only its own
    /// stream's next one).
    pub(super) fn arrival(&mut self) {
        let now = self.clock.now;
        let horizon = self.trace.limits.max_time;
        let mut earliest: Option<SimTime> = None;
        for index in 0..self.load.streams.list.len() {
            let mut next = self.load.streams.list[index].next;
            while next == Some(now) {
                self.load.streams.list[index].made += 1;
                self.load.arrivals += 1;
                let arrival = self.load.arrivals;
                self.load_spawn(index, arrival, false);
                if self.trace.limit.is_some() {
                    return;
                }
                let stream = &mut self.load.streams.list[index];
                next = stream.after(now, horizon);
                stream.next = next;
            }
            earliest = match (earliest, next) {
                (Some(earliest), Some(next)) => Some(earliest.min(next)),
                (earliest, next) => earliest.or(next),
            };
        }
        if self.load_stalled() {
            return;
        }
        debug_assert_eq!(earliest, self.load.streams.earliest());
        if let Some(next) = earliest {
            self.clock.schedule_arrival(next);
        }
    }

    /// Whether a stream's draw passed `max_silent_steps` quiet on/off periods (an `on_off`
    /// of 1 µs periods at a near-zero rate spun for minutes): the run stops there, at
    /// that limit, with the trace so far.
    #[inline]
    fn load_stalled(&mut self) -> bool {
        if !self.load.streams.list.iter().any(|stream| stream.stalled) {
            return false;
        }
        self.hit_limit(Limit::MaxSilentSteps, self.trace.limits.max_silent_steps);
        true
    }

    /// A rejected arrival tries again (`Wake::Retry`).
    pub(super) fn retry(&mut self, arrival: u64) {
        self.load.retries_held -= 1;
        let index = if self.load.streams.list.len() == 1 {
            Some(0)
        } else {
            self.load
                .streams
                .waiting
                .remove(&arrival)
                .map(|index| index as usize)
        };
        if let Some(index) = index {
            self.load_spawn(index, arrival, true);
        }
    }

    /// One call of stream `index` for `arrival` (or a `retry` of it): an Agent call from
    /// main that does not block main. With a `name`, arrival *i* — and each retry of it —
    /// is `NAME-i`; its `spawn_requested` carries `arrival: i` either way, and `stream`
    /// in the list form.
    fn load_spawn(&mut self, index: usize, arrival: u64, retry: bool) {
        let stream = &self.load.streams.list[index];
        let spec = stream.spawn.clone();
        let policy = stream.retry;
        let name = spec.name.as_ref().map(|name| format!("{name}-{arrival}"));
        let call = Call::Load {
            stream: index,
            arrival,
        };
        let started = self.spawn(0, &spec, name, call);
        if started != Err(Some(RejectReason::ConcurrentLimit)) {
            return;
        }
        if policy != Retry::None {
            // The call waits to be retried: one more thing held (`max_held`).
            if self.held_full() {
                return;
            }
            self.load.retries_held += 1;
        }
        match policy {
            Retry::None => return,
            Retry::AfterCompletion => self.load.retry_waiting.push_back(arrival),
            // A queued call that lost the freed slot to a call of the same instant keeps
            // its place at the head of the queue: FIFO, an M/M/c queue.
            Retry::Queue if retry => self.load.retry_waiting.push_front(arrival),
            Retry::Queue => self.load.retry_waiting.push_back(arrival),
            Retry::Backoff(dist) => {
                let delay = dist.sample(&mut self.load.retry_rng);
                if !dist.is_fixed() {
                    // Where the wait came from (issue #32).
                    let drawn_from = if self.trace.builds_events() {
                        Some(self.draws.spelled(&dist))
                    } else {
                        None
                    };
                    let drawn = super::trace::Drawn {
                        agent: None,
                        arrival: Some(arrival),
                        what: DrawnFor::Retry,
                        drawn_us: delay,
                        drawn_from,
                        drawn_on: DrawnOn::Retry,
                    };
                    self.trace.duration_drawn(self.clock.now, drawn);
                }
                self.clock
                    .schedule(self.clock.now.plus(delay), Wake::Retry(arrival));
            }
        }
        if self.load.streams.list.len() > 1 {
            self.load.streams.waiting.insert(arrival, index as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_keys_differ_by_name_and_are_stable() {
        assert_ne!(name_key("interactive"), name_key("batch"));
        // FNV-1a of the empty string is its offset basis.
        assert_eq!(name_key(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(name_key("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
