//! The load generator: arrival processes and retries of rejected arrivals.

use super::*;

impl Kernel<'_> {
    // -- load ---------------------------------------------------------------------------

    pub(super) fn load_continues(&self, at: SimTime) -> bool {
        let Some(load) = &self.load.spec else {
            return false;
        };
        match load.until {
            LoadUntil::Count(count) => self.load.arrivals < count,
            LoadUntil::Duration(end) => at <= end,
        }
    }

    pub(super) fn arrival(&mut self) {
        let Some((arrivals, spawn)) = self
            .load
            .spec
            .as_ref()
            .map(|load| (load.arrivals, self.load.spawn_spec.clone()))
        else {
            return;
        };
        let burst = match arrivals {
            Arrivals::Burst(count) => count.max(1),
            _ => 1,
        };
        for _ in 0..burst {
            if !self.load_continues(self.clock.now) {
                break;
            }
            self.load.arrivals += 1;
            let index = self.load.arrivals;
            self.load_spawn(&spawn, index, false);
            if self.trace.limit.is_some() {
                return;
            }
        }
        let next = match arrivals {
            Arrivals::Poisson(rate) => Some(
                self.clock
                    .now
                    .plus(Dist::Exp { mean: 1e6 / rate }.sample(&mut self.load.arrival_rng)),
            ),
            Arrivals::Every(micros) => Some(self.clock.now.plus(micros.max(1))),
            Arrivals::Burst(_) => None,
        };
        if let Some(next) = next {
            if self.load_continues(next) {
                self.clock.schedule_arrival(next);
            }
        }
    }

    /// One load arrival (or a `retry` of arrival `index`): an Agent call from main that
    /// does not block main. With a `name`, arrival *i* — and each retry of it — is
    /// `NAME-i`; its `spawn_requested` carries `arrival: i` either way.
    pub(super) fn load_spawn(&mut self, spec: &SpawnSpec, index: u64, retry: bool) {
        let name = spec.name.as_ref().map(|name| format!("{name}-{index}"));
        self.load.arrival = Some(index);
        let started = self.spawn(MAIN, spec, name, true);
        self.load.arrival = None;
        if started == Err(Some(RejectReason::ConcurrentLimit)) {
            match self.load.spec.as_ref().map(|load| load.retry) {
                Some(Retry::AfterCompletion) => self.load.retry_waiting.push_back(index),
                // A queued call that lost the freed slot to a call of the same instant
                // keeps its place at the head of the queue: FIFO, an M/M/c queue.
                Some(Retry::Queue) if retry => self.load.retry_waiting.push_front(index),
                Some(Retry::Queue) => self.load.retry_waiting.push_back(index),
                Some(Retry::Backoff(dist)) => {
                    let delay = dist.sample(&mut self.load.retry_rng);
                    self.clock
                        .schedule(self.clock.now.plus(delay), Wake::Retry(index));
                }
                _ => {}
            }
        }
    }
}
