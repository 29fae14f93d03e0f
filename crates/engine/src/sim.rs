//! The kernel (API stub; being implemented).
use crate::sink::Sink;
use crate::spec::SimSpec;
use crate::time::SimTime;
use subsim_rules::session::ConfigNote;

/// A safety limit that ended a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitHit {
    /// `max_events`, `max_time` or `max_agents`.
    pub limit: &'static str,
    /// The bound that was hit.
    pub value: u64,
}

/// What a finished run reports besides its events.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// Virtual time of the last event.
    pub end: SimTime,
    /// Events emitted.
    pub events: u64,
    /// The safety limit that stopped the run, if one did.
    pub limit: Option<LimitHit>,
    /// Notes about how settings were read (e.g. an invalid env value).
    pub notes: Vec<ConfigNote>,
}

/// A simulation ready to run.
pub struct Simulation {
    spec: SimSpec,
}

impl Simulation {
    /// A simulation of `spec` with the spec's own seed.
    pub fn new(spec: SimSpec) -> Simulation {
        Simulation { spec }
    }

    /// Overrides the seed (the CLI's `--seed`).
    pub fn with_seed(mut self, seed: u64) -> Simulation {
        self.spec.session.seed = seed;
        self
    }

    /// Runs to the end (or to a safety limit), handing every event to `sink`.
    pub fn run(self, sink: &mut dyn Sink) -> RunReport {
        let _ = (&self.spec, sink);
        RunReport::default()
    }
}
