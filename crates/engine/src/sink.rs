//! Where events go: the [`Sink`] trait and a few small sinks.
//!
//! The engine hands every event to one sink as soon as it is decided; nothing is buffered
//! in the engine, so memory does not grow with the length of the run.

use crate::event::Event;

/// Receives the trace, one event at a time, in order.
///
/// The contract, all a sink author needs:
///
/// * [`Sink::event`] is the one method a sink must write. Events come in `seq` order, each
///   once, with non-decreasing `t`; the last one of a run stopped by a safety limit is
///   `limit_reached`. The `&Event` is lent for the call only: keep what you need.
/// * The six per-kind methods (`spawn_requested` … `report_delivered`) are optional: the
///   kernel calls each, instead of `event`, for the kind it names — and only ever with an
///   event of that kind (the kernel's trace writer has one method per kind that writes
///   that kind and no other). Each defaults to `event`, so a sink that ignores them sees
///   every event through `event`. They exist for speed: a sink that counts per kind (the
///   summary) skips its match on the kind for the kinds a load run writes per arrival
///   (docs/PERFORMANCE.md). An override should still handle any event it is given.
/// * [`Sink::preload`] is a hint, not an event, and optional: it may read (never change)
///   the sink's state for a run that will soon take a step, so the kernel can overlap the
///   cache misses of many runs (`sim/ahead.rs`). What it returns is discarded.
pub trait Sink {
    /// One event.
    fn event(&mut self, event: &Event);

    /// Not an event: the run of agent `id` will soon take a step (and may end). A sink
    /// that keeps state per run may read that state now and return anything read from it;
    /// it must change nothing. The default reads nothing.
    #[inline]
    fn preload(&self, id: u32) -> u64 {
        let _ = id;
        0
    }

    /// A `spawn_requested`.
    #[inline]
    fn spawn_requested(&mut self, event: &Event) {
        self.event(event);
    }

    /// A `spawn_rejected`.
    #[inline]
    fn spawn_rejected(&mut self, event: &Event) {
        self.event(event);
    }

    /// An `agent_started`.
    #[inline]
    fn agent_started(&mut self, event: &Event) {
        self.event(event);
    }

    /// An `agent_finished`.
    #[inline]
    fn agent_finished(&mut self, event: &Event) {
        self.event(event);
    }

    /// A `notification`.
    #[inline]
    fn notification(&mut self, event: &Event) {
        self.event(event);
    }

    /// A `report_delivered`.
    #[inline]
    fn report_delivered(&mut self, event: &Event) {
        self.event(event);
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

    fn spawn_requested(&mut self, event: &Event) {
        self.first.spawn_requested(event);
        self.second.spawn_requested(event);
    }

    fn spawn_rejected(&mut self, event: &Event) {
        self.first.spawn_rejected(event);
        self.second.spawn_rejected(event);
    }

    fn agent_started(&mut self, event: &Event) {
        self.first.agent_started(event);
        self.second.agent_started(event);
    }

    fn agent_finished(&mut self, event: &Event) {
        self.first.agent_finished(event);
        self.second.agent_finished(event);
    }

    fn notification(&mut self, event: &Event) {
        self.first.notification(event);
        self.second.notification(event);
    }

    fn report_delivered(&mut self, event: &Event) {
        self.first.report_delivered(event);
        self.second.report_delivered(event);
    }
}
