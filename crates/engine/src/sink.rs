//! Where events go: the [`Sink`] trait and a few small sinks.
//!
//! The engine hands every event to one sink as soon as it is decided; nothing is buffered
//! in the engine, so memory does not grow with the length of the run.

use crate::event::Event;

/// Receives the trace, one event at a time, in order.
///
/// The contract, all a sink author needs: [`Sink::event`] is called for every event, in
/// `seq` order, each once, with non-decreasing `t`; the last one of a run stopped by a
/// safety limit is `limit_reached`. The `&Event` is lent for the call only: keep what you
/// need. (The run's statistics, [`crate::summary::Summary`], are a sink too; the kernel
/// can also keep one through its typed entries, `Simulation::run_summarized`, which
/// counts the same without building the frequent events.)
pub trait Sink {
    /// One event.
    fn event(&mut self, event: &Event);
}

/// Discards everything.
#[derive(Default)]
pub struct Discard;

impl Sink for Discard {
    fn event(&mut self, _event: &Event) {}
}

/// Keeps everything (for tests and small scenarios).
#[derive(Default)]
pub struct Collect {
    /// The events so far.
    pub events: Vec<Event>,
}

impl Sink for Collect {
    fn event(&mut self, event: &Event) {
        self.events.push(event.clone());
    }
}

impl<F: FnMut(&Event)> Sink for F {
    fn event(&mut self, event: &Event) {
        self(event)
    }
}

/// Sends every event to two sinks.
pub struct Tee<'a> {
    /// First.
    pub first: &'a mut dyn Sink,
    /// Second.
    pub second: &'a mut dyn Sink,
}

impl Sink for Tee<'_> {
    fn event(&mut self, event: &Event) {
        self.first.event(event);
        self.second.event(event);
    }
}
