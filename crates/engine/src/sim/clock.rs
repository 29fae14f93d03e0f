//! The kernel's clock: virtual time and the wake queue, one `(time, seq)` order over three
//! sources (a monotone radix heap, the same-instant FIFO, the load generator's one pending arrival).
//!
//! Its `#[inline(…)]` and `#[cold]` attributes are measured: docs/PERFORMANCE.md, "Choices
//! that need a benchmark".

use crate::event::AgentId;
use crate::time::SimTime;

use super::queue;

/// Something queued for a moment in virtual time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Wake {
    /// Continue a run's program (guarded by the run's generation).
    Step { slot: u32, gen: u32 },
    /// The load generator's next arrival.
    Arrival,
    /// A rejected load arrival (its index) tries again.
    Retry(u64),
    /// The person's timed action `index`.
    Action(u32),
    /// The person finished thinking about prompt `id`.
    Answer(u64),
    /// A panel window (30 s after a finish, PANEL-2/3/5) ends.
    PanelTick,
    /// A background shell command of `agent` finished.
    BashDone { agent: AgentId, run: u32 },
}

/// Virtual time and the wake queue: one `(time, seq)` order over three sources (the heap,
/// the same-instant FIFO and the load generator's pending arrival).
pub(super) struct Clock {
    pub(super) now: SimTime,
    /// The last seq handed out.
    pub(super) seq: u64,
    /// Future wakes (a monotone radix heap, `queue.rs`).
    pub(super) heap: queue::TimeQueue<Wake>,
    /// Wakes scheduled for the current instant, in seq order. Together with `heap` they
    /// form one (time, seq)-ordered queue: `pop_next` takes the smaller head of the two.
    pub(super) now_queue: NowQueue,
    /// The load generator's pending arrival `(time, seq)`.
    pub(super) next_arrival: Option<(SimTime, u64)>,
    /// `run_until`: stop before the first wake after this instant.
    pub(super) stop_at: Option<SimTime>,
    /// `Wake::BashDone`s queued (background shells started and not yet due, whether or
    /// not their run still waits for them): `max_held` counts them, since nothing else
    /// bounds them (a `repeat` of `bash_background` queues one per step).
    pub(super) shells_queued: u64,
}

impl Clock {
    #[inline(always)]
    pub(super) fn schedule(&mut self, at: SimTime, wake: Wake) {
        self.seq += 1;
        if at == self.now {
            // Same instant: a FIFO is enough, since every seq given now is larger than any
            // seq already queued for this instant in the heap.
            self.now_queue.push_back((self.seq, wake));
        } else {
            self.heap.push(at.0, self.seq, wake);
        }
    }

    /// The load generator's next arrival, kept beside the heap: there is at most one.
    #[inline]
    pub(super) fn schedule_arrival(&mut self, at: SimTime) {
        self.seq += 1;
        self.next_arrival = Some((at, self.seq));
    }

    /// The next wake in (time, seq) order, from the heap, the same-instant FIFO and the
    /// pending arrival. The three heads are compared as packed keys ([`key`]): every
    /// queued wake is due now or later, so the same-instant FIFO's front (due now) goes
    /// first unless a wake of the heap or the arrival is due now with a smaller seq, which
    /// is exactly when its key is the smaller.
    #[inline(always)]
    pub(super) fn pop_next(&mut self) -> Option<(SimTime, Wake)> {
        let heap = self.heap.peek_key();
        let arrival = self.next_arrival.map_or(NONE, |(time, seq)| key(time, seq));
        if let Some(&(seq, wake)) = self.now_queue.front() {
            let front = key(self.now, seq);
            if front < heap && front < arrival {
                self.now_queue.pop_front();
                return Some((self.now, wake));
            }
        }
        if arrival < heap {
            let (time, _) = self.next_arrival.take()?;
            return Some((time, Wake::Arrival));
        }
        if heap == NONE {
            return None;
        }
        let (time, _, wake) = self.heap.pop()?;
        Some((SimTime(time), wake))
    }

    /// Where the next wake in `(time, seq)` order is, and its key; the one place that
    /// merges the three sources (the plain loop and the tie explorer both read it).
    #[inline(always)]
    pub(super) fn head(&self) -> Option<(SimTime, u64, Source)> {
        let mut best: Option<(SimTime, u64, Source)> = None;
        let mut consider = |time: SimTime, seq: u64, source: Source| {
            if best.is_none_or(|(t, q, _)| (time, seq) < (t, q)) {
                best = Some((time, seq, source));
            }
        };
        if let Some((time, seq)) = self.heap.peek() {
            consider(SimTime(time), seq, Source::Heap);
        }
        if let Some((seq, _)) = self.now_queue.front() {
            consider(self.now, *seq, Source::Now);
        }
        if let Some((time, seq)) = self.next_arrival {
            consider(time, seq, Source::Arrival);
        }
        best
    }

    /// Takes the next wake in `(time, seq)` order, with its key.
    #[inline(always)]
    pub(super) fn pop_with_seq(&mut self) -> Option<(SimTime, u64, Wake)> {
        let (time, seq, source) = self.head()?;
        let wake = match source {
            Source::Heap => self.heap.pop()?.2,
            Source::Now => self.now_queue.pop_front()?.1,
            Source::Arrival => {
                self.next_arrival = None;
                Wake::Arrival
            }
        };
        Some((time, seq, wake))
    }
}

/// `(time, seq)` as one number, ordered as the pair: compared without a branch.
#[inline(always)]
pub(super) fn key(time: SimTime, seq: u64) -> u128 {
    (u128::from(time.0) << 64) | u128::from(seq)
}

/// The key of an empty source: larger than every wake's, as no seq reaches `u64::MAX` (one
/// is handed out per wake scheduled).
pub(super) const NONE: u128 = u128::MAX;

/// The same-instant FIFO: a vector read from `head`. A start's first step passes through
/// it (one push, one pop per started run), where a `VecDeque`'s ring arithmetic costs
/// more. It is emptied, keeping its memory, whenever everything in it
/// has been read, and its read part is dropped once that is most of it, so that wakes
/// that keep scheduling more at one instant hold only what is unread.
#[derive(Default)]
pub(super) struct NowQueue {
    items: Vec<(u64, Wake)>,
    /// The next item to read.
    head: usize,
}

impl NowQueue {
    /// Drop the read part when it is at least this long and at least half the vector.
    const COMPACT_AT: usize = 1024;

    #[inline(always)]
    pub(super) fn push_back(&mut self, item: (u64, Wake)) {
        self.items.push(item);
    }

    #[inline(always)]
    pub(super) fn front(&self) -> Option<&(u64, Wake)> {
        self.items.get(self.head)
    }

    #[inline(always)]
    pub(super) fn pop_front(&mut self) -> Option<(u64, Wake)> {
        let item = *self.items.get(self.head)?;
        self.head += 1;
        if self.head == self.items.len() {
            self.items.clear();
            self.head = 0;
        } else if self.head >= Self::COMPACT_AT && self.head * 2 >= self.items.len() {
            self.compact();
        }
        Some(item)
    }

    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        self.items.drain(..self.head);
        self.head = 0;
    }
}

/// Which of the kernel's three wake sources holds the next wake.
#[derive(Clone, Copy)]
pub(super) enum Source {
    Heap,
    Now,
    Arrival,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Pushes and pops interleaved — draining it now and then, and long stretches where
    /// every pop is followed by pushes (the read part compacted) — give a `VecDeque`'s
    /// FIFO order, and the vector never holds much more than what is unread.
    #[test]
    fn now_queue_is_a_fifo_that_holds_what_is_unread() {
        let mut queue = NowQueue::default();
        let mut plain: VecDeque<(u64, Wake)> = VecDeque::new();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let (mut seq, mut compactions) = (0u64, 0u32);
        for round in 0..40_000u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // One or two pushes per pop (a queue that never empties), drained every 5,000.
            let pushes = match (round % 5_000 == 4_999, state % 8) {
                (true, _) => 0,
                (false, 0) => 2,
                (false, _) => 1,
            };
            for _ in 0..pushes {
                seq += 1;
                let wake = Wake::Step {
                    slot: seq as u32,
                    gen: 0,
                };
                queue.push_back((seq, wake));
                plain.push_back((seq, wake));
            }
            let drain = round % 5_000 == 4_999;
            let head = queue.head;
            loop {
                assert_eq!(queue.front(), plain.front());
                assert_eq!(queue.pop_front(), plain.pop_front());
                if !drain || plain.is_empty() {
                    break;
                }
            }
            if !plain.is_empty() && queue.head < head {
                compactions += 1;
            }
            assert!(queue.items.len() - queue.head == plain.len());
            assert!(queue.head < NowQueue::COMPACT_AT || queue.head * 2 < queue.items.len());
        }
        assert!(compactions > 0, "the read part was never dropped");
    }
}
