//! Loading ahead: what the runs about to wake will read, loaded before they wake, all
//! together, so that their cache misses overlap instead of following one another.
//!
//! With many runs live (a fan-out of a million workers), the workers' timers end in random
//! order, so every structure a run's wake and end read — its record in the slab, its panel
//! entry, the summary's running-type window — is a cache (and TLB)
//! miss, and each one waits for the one before: the wake reads the record, then the end
//! finds the panel entry, then the summary its window. The timer queue knows the next
//! runs to wake (`queue.rs`: a refill from a small bucket moves exactly the entries that
//! come next), and hands them here; reading one word of each of those structures for all
//! of them, in passes with no load depending on another of its pass, lets the processor
//! have tens of misses in flight at once. Nothing here writes, and no output depends on it:
//! the loads are kept alive only by [`std::hint::black_box`]. (`_mm_prefetch` would do the
//! same with fewer loads, but it is `unsafe`, which the workspace forbids.)
//!
//! Its `#[inline(…)]` and `#[cold]` attributes are measured: docs/PERFORMANCE.md, "Choices
//! that need a benchmark".

use super::agents::Agents;
use super::clock::Wake;
use super::trace::Trace;
use super::{observe, Kernel};

impl Kernel<'_> {
    /// Loads what the wakes the timer queue gathered ([`queue::TimeQueue::ahead`]) will
    /// read, and forgets them.
    #[cold]
    #[inline(never)]
    pub(super) fn load_ahead(&mut self) {
        load(
            &self.agents,
            &self.panel,
            &self.trace,
            self.clock.heap.ahead(),
        );
        self.clock.heap.clear_ahead();
    }

    /// Loads what the answer to prompt `number` will read: the waiting prompt, then its
    /// run's record. The person answers prompts in the order they were shown, so with tens
    /// of thousands waiting both were written long ago and are cache
    /// misses; loaded when the answer is scheduled, they are at hand when it comes.
    #[inline]
    pub(super) fn load_answer_ahead(&self, number: u64) {
        let read = self
            .person
            .prompts
            .get(number)
            .map_or(0, |pending| self.agents.preload(pending.slot));
        std::hint::black_box(read);
    }
}

/// Loads what the wakes in `wakes` (the next the timer queue gives) will read: each
/// run's record, then (what it holds being at hand now) its panel entry, and the
/// summary's state of the run. Each pass is a set of independent loads.
fn load(agents: &Agents, panel: &Option<observe::PanelState>, trace: &Trace, wakes: &[Wake]) {
    let slots = || {
        wakes.iter().filter_map(|wake| match *wake {
            Wake::Step { slot, .. } => Some(slot),
            _ => None,
        })
    };
    let mut read = 0u64;
    for slot in slots() {
        read ^= agents.preload(slot);
    }
    // The passes after the first read what the first loaded: the panel entry's index and
    // the id.
    if let Some(state) = panel {
        for slot in slots() {
            if let Some(agent) = agents.at(slot) {
                read ^= state.panel.preload_entry(agent.panel_entry);
            }
        }
    }
    let ids = || slots().filter_map(|slot| agents.at(slot).map(|agent| agent.id));
    for id in ids() {
        read ^= trace.preload(id);
    }
    std::hint::black_box(read);
}
