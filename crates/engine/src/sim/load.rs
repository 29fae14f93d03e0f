//! The load generator: arrival processes and retries of rejected arrivals.

use super::*;

impl Kernel<'_> {
    // -- load ---------------------------------------------------------------------------

    pub(super) fn load_continues(&self, at: SimTime) -> bool {
        let Some(load) = &self.load else { return false };
        match load.until {
            LoadUntil::Count(count) => self.arrivals < count,
            LoadUntil::Duration(end) => at <= end,
        }
    }

    pub(super) fn arrival(&mut self) {
        let Some((arrivals, spawn)) = self
            .load
            .as_ref()
            .map(|load| (load.arrivals, self.load_spawn_spec.clone()))
        else {
            return;
        };
        let burst = match arrivals {
            Arrivals::Burst(count) => count.max(1),
            _ => 1,
        };
        for _ in 0..burst {
            if !self.load_continues(self.now) {
                break;
            }
            self.arrivals += 1;
            let index = self.arrivals;
            self.load_spawn(&spawn, index, false);
            if self.limit.is_some() {
                return;
            }
        }
        let next = match arrivals {
            Arrivals::Poisson(rate) => Some(
                self.now
                    .plus(Dist::Exp { mean: 1e6 / rate }.sample(&mut self.arrival_rng)),
            ),
            Arrivals::Every(micros) => Some(self.now.plus(micros.max(1))),
            Arrivals::Burst(_) => None,
        };
        if let Some(next) = next {
            if self.load_continues(next) {
                self.schedule_arrival(next);
            }
        }
    }

    /// One load arrival (or a `retry` of arrival `index`): an Agent call from main that
    /// does not block main. With a `name`, arrival *i* — and each retry of it — is
    /// `NAME-i`; its `spawn_requested` carries `arrival: i` either way.
    pub(super) fn load_spawn(&mut self, spec: &SpawnSpec, index: u64, retry: bool) {
        let name = spec.name.as_ref().map(|name| format!("{name}-{index}"));
        self.load_arrival = Some(index);
        let started = self.spawn(MAIN, spec, name, true);
        self.load_arrival = None;
        if started == Err(Some(RejectReason::ConcurrentLimit)) {
            match self.load.as_ref().map(|load| load.retry) {
                Some(Retry::AfterCompletion) => self.retry_waiting.push_back(index),
                // A queued call that lost the freed slot to a call of the same instant
                // keeps its place at the head of the queue: FIFO, an M/M/c queue.
                Some(Retry::Queue) if retry => self.retry_waiting.push_front(index),
                Some(Retry::Queue) => self.retry_waiting.push_back(index),
                Some(Retry::Backoff(dist)) => {
                    let delay = dist.sample(&mut self.retry_rng);
                    self.schedule(self.now.plus(delay), Wake::Retry(index));
                }
                _ => {}
            }
        }
    }
}
