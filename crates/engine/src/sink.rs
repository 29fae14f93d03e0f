//! Where events go: the [`Sink`] trait and a few small sinks.
//!
//! The engine hands every event to one sink as soon as it is decided; nothing is buffered
//! in the engine, so memory does not grow with the length of the run.

use crate::event::Event;

/// Receives the trace, one event at a time, in order.
pub trait Sink {
    /// One event.
    fn event(&mut self, event: &Event);

    /// Not an event: the run of agent `id` will soon take a step (and may end). A sink
    /// that keeps state per run may read that state now and return anything read from it
    /// (the engine does this for several runs at once, when there are many, so that their
    /// cache misses overlap). Changes nothing; the default reads nothing.
    #[inline]
    fn preload(&self, id: u32) -> u64 {
        let _ = id;
        0
    }
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

    fn preload(&self, id: u32) -> u64 {
        self.first.preload(id) ^ self.second.preload(id)
    }
}
