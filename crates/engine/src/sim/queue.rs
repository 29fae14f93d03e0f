//! The kernel's timer queue: wakes keyed by `(time, seq)`, taken earliest first — a
//! sorted array while it is small, a monotone radix heap while it is large.
//!
//! Most sessions keep a few tens of timers queued (about one per running run, and the
//! cap is 20 by default). There the radix heap below refilled for nearly every entry
//! taken (its buckets near `last` hold one or two entries each): a scan for the minimum
//! and a move, with branches on the times that are mispredicted. A sorted array (`Sorted`) costs a branch-free count of the larger keys and a
//! move of a few hundred bytes per push, and a pop from its end. Past [`SMALL_MAX`]
//! entries the queue moves them into the radix heap, and back below [`SMALL_MIN`]; the
//! order taken is the same `(time, seq)` order either way.
//!
//! The kernel never schedules a wake before the last one it took (virtual time never goes
//! back), so the queue can bucket each entry by the highest bit in which its time differs
//! from `last`, the time of the latest entry taken: bucket 0 holds the entries due at
//! `last` itself, bucket `b` those whose time first differs from `last` in bit `b − 1`. A
//! push is an append to one bucket; taking from an empty bucket 0 moves the smallest
//! non-empty bucket down (each entry moves at most 64 times over its life, and in practice
//! a few times), sequentially through memory, where a binary heap of a million timers
//! misses the cache on most of its ~20 levels per pop. The order taken is exactly the
//! `(time, seq)` order a binary heap gives (seqs are unique).
//!
//! A refill also knows what comes next: every entry of the bucket it moves down is taken
//! before any entry left in a higher bucket. When that bucket is small and the queue
//! large, its items are gathered for the caller ([`TimeQueue::ahead`]) before they are
//! taken (the kernel loads their runs' data together, `ahead.rs`).
//!
//! Its `#[inline(…)]` and `#[cold]` attributes are measured: docs/PERFORMANCE.md, "Choices
//! that need a benchmark".

use std::cell::Cell;
use std::collections::VecDeque;

/// One queued entry.
#[derive(Clone, Copy, Debug)]
struct Entry<T> {
    time: u64,
    seq: u64,
    item: T,
}

impl<T> Entry<T> {
    /// `(time, seq)` as one number: compared without a branch.
    #[inline(always)]
    fn key(&self) -> u128 {
        (u128::from(self.time) << 64) | u128::from(self.seq)
    }
}

/// The entries of a small queue in key order (`Entry::key`), the least last: a push
/// counts the entries with larger keys and moves the others up by one (a few hundred
/// bytes at most), a pop takes the last.
#[derive(Clone, Debug)]
struct Sorted<T> {
    entries: Vec<Entry<T>>,
    /// At least the largest seq queued (the largest pushed into the array or moved into
    /// it). A push with a larger seq — every push of the kernel's clock, whose seqs only
    /// grow; not a wake the tie explorer puts back — finds the larger keys by their times
    /// alone (see [`Sorted::push`]).
    newest: u64,
}

impl<T: Copy> Sorted<T> {
    #[inline]
    fn len(&self) -> usize {
        self.entries.len()
    }

    #[inline]
    fn peek(&self) -> Option<&Entry<T>> {
        self.entries.last()
    }

    /// Adds `entry` in its place.
    #[inline]
    fn push(&mut self, entry: Entry<T>) {
        // The number of entries with larger keys, counted: a few tens of comparisons with
        // no branch, where a binary search branches on each one and, a timer landing at
        // a random place among the others, is mispredicted half the time.
        let at = if entry.seq > self.newest {
            // Every queued seq is smaller than this one: a queued key is larger exactly
            // when its time is (at an equal time the smaller seq comes first), so one
            // 64-bit comparison per entry does, not a 128-bit one.
            self.newest = entry.seq;
            let time = entry.time;
            self.entries
                .iter()
                .filter(|queued| queued.time > time)
                .count()
        } else {
            let key = entry.key();
            self.entries
                .iter()
                .filter(|queued| queued.key() > key)
                .count()
        };
        self.entries.insert(at, entry);
    }

    /// Takes the entry with the least key.
    #[inline]
    fn pop(&mut self) -> Option<Entry<T>> {
        self.entries.pop()
    }
}

/// The queue moves its entries from the sorted array into the radix heap when a push
/// finds this many in the array (a push costs a comparison per entry queued) …
const SMALL_MAX: usize = 64;

/// … and back when a pop leaves fewer than this many in the radix heap (a quarter of
/// [`SMALL_MAX`], so that a queue whose length hovers near one bound does not move its
/// entries back and forth).
const SMALL_MIN: usize = SMALL_MAX / 4;

/// Items keyed by `(time, seq)`, taken smallest first. Pushed times must not be before the
/// time of the latest entry taken ([`TimeQueue::pop`]).
#[derive(Clone, Debug)]
pub(super) struct TimeQueue<T> {
    /// The entries while the queue is small (`radix` false); empty otherwise.
    small: Sorted<T>,
    /// The entries are in the radix heap (`due` and `buckets`), not in `small`.
    radix: bool,
    /// Bucket 0, the entries due at `last`, in `seq` order (taken from the front).
    due: VecDeque<Entry<T>>,
    /// Buckets 1…64 (at 0…63), in any order.
    buckets: [Vec<Entry<T>>; 64],
    /// Bit `b` is set when `buckets[b]` is not empty.
    occupied: u64,
    /// Time of the latest entry taken (0 before the first): every queued time is ≥ it.
    last: u64,
    len: usize,
    /// The smallest key in `buckets`, once looked for (a scan of the smallest non-empty
    /// bucket, which the next refill then moves down).
    min: Cell<Option<(u64, u64)>>,
    /// The latest time of an item gathered in `ahead`: entries due by then were gathered
    /// already (or pushed since), so each entry is gathered at most once.
    ahead_to: u64,
    /// Items that will be taken soon ([`TimeQueue::ahead`]).
    ahead: Vec<T>,
}

/// A refill gathers the items of the bucket it moves down in [`TimeQueue::ahead`] when the
/// bucket holds at most this many entries: the next items taken, few enough
/// that what the kernel loads for them (a few cache lines each) stays in the first-level
/// cache until they are taken, and enough to keep tens of misses in flight. Buckets
/// nearer `last` are smaller (their ranges of time halve), so every entry of a spread-out
/// queue passes through such a bucket before it is due.
const AHEAD_MAX: usize = 64;

/// … and when the queue holds at least this many entries. With fewer, the data of the
/// runs they wake (a few hundred bytes each) fits in a core's second-level cache and
/// loading it ahead gains nothing; a load under the default cap keeps a few tens of wakes
/// queued, so its refills skip this at the cost of one comparison.
const AHEAD_MIN_LEN: usize = 4096;

impl<T: Copy> Default for TimeQueue<T> {
    fn default() -> Self {
        TimeQueue {
            small: Sorted {
                entries: Vec::new(),
                newest: 0,
            },
            radix: false,
            due: VecDeque::new(),
            buckets: std::array::from_fn(|_| Vec::new()),
            occupied: 0,
            last: 0,
            len: 0,
            min: Cell::new(None),
            ahead_to: 0,
            ahead: Vec::new(),
        }
    }
}

impl<T: Copy> TimeQueue<T> {
    /// An empty queue.
    pub(super) fn new() -> Self {
        Self::default()
    }

    /// How many entries are queued.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Queues `item` at `(time, seq)`; `time` must be ≥ the time of the latest entry taken.
    /// The entry is built where it is pushed: built once on the stack for both branches,
    /// it would be copied into the bucket with wider loads than the stores that had just
    /// built it, which stalls on store forwarding.
    #[inline]
    pub(super) fn push(&mut self, time: u64, seq: u64, item: T) {
        debug_assert!(
            time >= self.last,
            "timer queue: {time} is before the latest entry taken ({})",
            self.last
        );
        if !self.radix {
            if self.small.len() < SMALL_MAX {
                self.len += 1;
                self.small.push(Entry { time, seq, item });
                return;
            }
            self.move_to_radix();
        }
        self.push_radix(time, seq, item);
    }

    /// [`TimeQueue::push`] into the radix heap.
    #[inline]
    fn push_radix(&mut self, time: u64, seq: u64, item: T) {
        self.len += 1;
        let differ = time ^ self.last;
        if differ == 0 {
            self.push_due(time, seq, item);
            return;
        }
        let bucket = 63 - differ.leading_zeros() as usize;
        self.buckets[bucket].push(Entry { time, seq, item });
        self.occupied |= 1 << bucket;
        if let Some(min) = self.min.get() {
            if (time, seq) < min {
                self.min.set(Some((time, seq)));
            }
        }
    }

    /// Queues an entry due at `last` itself. Usually a later seq than any queued; the tie
    /// explorer puts wakes back with their old seqs, so the order is kept in any case.
    #[inline(never)]
    fn push_due(&mut self, time: u64, seq: u64, item: T) {
        let at = self.due.partition_point(|queued| queued.seq < seq);
        self.due.insert(at, Entry { time, seq, item });
    }

    /// The smallest `(time, seq)` queued as one number (`Entry::key`), `u128::MAX` when
    /// the queue is empty.
    #[inline(always)]
    pub(super) fn peek_key(&self) -> u128 {
        if !self.radix {
            return self.small.peek().map_or(u128::MAX, Entry::key);
        }
        self.peek().map_or(u128::MAX, |(time, seq)| {
            (u128::from(time) << 64) | u128::from(seq)
        })
    }

    /// The smallest `(time, seq)` queued.
    #[inline]
    pub(super) fn peek(&self) -> Option<(u64, u64)> {
        if !self.radix {
            return self.small.peek().map(|entry| (entry.time, entry.seq));
        }
        if let Some(front) = self.due.front() {
            return Some((front.time, front.seq));
        }
        if self.occupied == 0 {
            return None;
        }
        if let Some(min) = self.min.get() {
            return Some(min);
        }
        let min = self.scan();
        self.min.set(Some(min));
        Some(min)
    }

    /// Gathers in `ahead` the items of `moving` (the bucket a refill moves down) that were
    /// not gathered before, in place of what it held (so it holds [`AHEAD_MAX`] at most,
    /// whether the caller clears it or not).
    #[cold]
    #[inline(never)]
    fn gather_ahead(&mut self, moving: &[Entry<T>]) {
        self.ahead.clear();
        let mut to = self.ahead_to;
        for entry in moving {
            if entry.time > self.ahead_to {
                self.ahead.push(entry.item);
                to = to.max(entry.time);
            }
        }
        self.ahead_to = to;
    }

    /// The smallest key of the smallest non-empty bucket (`due` being empty). Every entry
    /// there is smaller than every entry in a higher bucket.
    fn scan(&self) -> (u64, u64) {
        let bucket = &self.buckets[self.occupied.trailing_zeros() as usize];
        let mut min = (u64::MAX, u64::MAX);
        for entry in bucket {
            min = min.min((entry.time, entry.seq));
        }
        min
    }

    /// Takes the entry with the smallest `(time, seq)`.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(u64, u64, T)> {
        if !self.radix {
            let entry = self.small.pop()?;
            self.len -= 1;
            self.last = entry.time;
            return Some((entry.time, entry.seq, entry.item));
        }
        if self.len <= SMALL_MIN {
            self.move_to_small();
            return self.pop();
        }
        if self.due.is_empty() {
            if self.occupied == 0 {
                return None;
            }
            self.refill();
        }
        let entry = self.due.pop_front()?;
        self.len -= 1;
        Some((entry.time, entry.seq, entry.item))
    }

    /// Moves every entry of the sorted array into the radix heap (the queue grew past
    /// [`SMALL_MAX`]). Every entry's time is ≥ `last`, the time of the latest taken.
    #[cold]
    #[inline(never)]
    fn move_to_radix(&mut self) {
        debug_assert!(!self.radix && self.occupied == 0 && self.due.is_empty());
        self.radix = true;
        self.min.set(None);
        let len = self.len;
        self.len = 0;
        for entry in std::mem::take(&mut self.small.entries) {
            self.push_radix(entry.time, entry.seq, entry.item);
        }
        debug_assert_eq!(self.len, len);
    }

    /// Moves every entry of the radix heap into the sorted array (the queue shrank below
    /// [`SMALL_MIN`]).
    #[cold]
    #[inline(never)]
    fn move_to_small(&mut self) {
        debug_assert!(self.radix && self.small.len() == 0);
        let mut entries = std::mem::take(&mut self.small.entries);
        entries.extend(self.due.drain(..));
        let mut occupied = self.occupied;
        while occupied != 0 {
            let bucket = occupied.trailing_zeros() as usize;
            occupied &= occupied - 1;
            entries.append(&mut self.buckets[bucket]);
        }
        debug_assert_eq!(entries.len(), self.len);
        self.occupied = 0;
        self.min.set(None);
        entries.sort_unstable_by_key(|entry| std::cmp::Reverse(entry.key()));
        let newest = entries.iter().map(|entry| entry.seq).max().unwrap_or(0);
        self.small.newest = self.small.newest.max(newest);
        self.small.entries = entries;
        self.radix = false;
    }

    /// Items that will be taken soon, gathered by the latest refill (see [`AHEAD_MAX`]);
    /// empty after [`TimeQueue::clear_ahead`] and while the queue is small. The order
    /// taken does not depend on them.
    #[inline]
    pub(super) fn ahead(&self) -> &[T] {
        &self.ahead
    }

    /// Forgets the items of [`TimeQueue::ahead`] (each is gathered once).
    #[inline]
    pub(super) fn clear_ahead(&mut self) {
        self.ahead.clear();
    }

    /// Moves the smallest non-empty bucket down, around its smallest time, which becomes
    /// `last`: its entries due then go to `due` (in seq order), the others lower. The
    /// items of a small bucket of a large queue are gathered in `ahead` (see [`AHEAD_MAX`]).
    #[inline(never)]
    fn refill(&mut self) {
        let (time, _) = match self.min.take() {
            Some(min) => min,
            None => self.scan(),
        };
        let source = self.occupied.trailing_zeros() as usize;
        self.occupied &= !(1 << source);
        self.last = time;
        let mut moving = std::mem::take(&mut self.buckets[source]);
        if self.len >= AHEAD_MIN_LEN && moving.len() <= AHEAD_MAX {
            self.gather_ahead(&moving);
        }
        for entry in moving.drain(..) {
            let differ = entry.time ^ time;
            if differ == 0 {
                self.due.push_back(entry);
            } else {
                let bucket = 63 - differ.leading_zeros() as usize;
                debug_assert!(bucket < source);
                self.buckets[bucket].push(entry);
                self.occupied |= 1 << bucket;
            }
        }
        // Keep the emptied bucket's memory for later pushes.
        self.buckets[source] = moving;
        if self.due.len() > 1 {
            let due = self.due.make_contiguous();
            if !due.is_sorted_by_key(|entry| entry.seq) {
                due.sort_unstable_by_key(|entry| entry.seq);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// A tiny deterministic generator for the test's draws.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// Pushes and pops interleaved as the kernel does them (times never before the latest
    /// taken, same-instant pushes, far-future pushes, wakes put back with old seqs), against
    /// a binary heap: the same entries come out in the same order.
    #[test]
    fn takes_exactly_the_binary_heap_order() {
        for spread in [1u64, 10, 1_000, 1 << 40] {
            let mut state = 0x9e37_79b9_7f4a_7c15 ^ spread;
            let mut queue: TimeQueue<u32> = TimeQueue::new();
            let mut heap: BinaryHeap<Reverse<(u64, u64, u32)>> = BinaryHeap::new();
            let mut seq = 0u64;
            let mut now = 0u64;
            for round in 0..20_000u32 {
                let pushes = next(&mut state) % 4;
                for _ in 0..pushes {
                    seq += 1;
                    let time = match next(&mut state) % 5 {
                        0 => now,
                        1 => u64::MAX - next(&mut state) % 3,
                        _ => now.saturating_add(next(&mut state) % spread),
                    };
                    queue.push(time, seq, round);
                    heap.push(Reverse((time, seq, round)));
                }
                assert_eq!(queue.peek(), heap.peek().map(|Reverse((t, s, _))| (*t, *s)));
                if !next(&mut state).is_multiple_of(3) {
                    let taken = queue.pop();
                    assert_eq!(taken, heap.pop().map(|Reverse(entry)| entry));
                    if let Some((time, taken_seq, item)) = taken {
                        now = time;
                        // Now and then the entry goes back with its own seq, as the tie
                        // explorer puts back the wakes it did not choose.
                        if next(&mut state).is_multiple_of(7) {
                            queue.push(time, taken_seq, item);
                            heap.push(Reverse((time, taken_seq, item)));
                        }
                    }
                }
                assert_eq!(queue.len(), heap.len());
            }
            while let Some(Reverse(entry)) = heap.pop() {
                assert_eq!(queue.pop(), Some(entry));
            }
            assert_eq!(queue.pop(), None);
            assert_eq!(queue.peek(), None);
        }
    }

    /// A queue whose length swings across both bounds again and again (into the radix
    /// heap past `SMALL_MAX`, back into the sorted array below `SMALL_MIN`), with
    /// same-instant pushes and entries put back with their old seqs: it gives the binary
    /// heap's order throughout.
    #[test]
    fn keeps_the_order_across_the_moves_between_its_two_heaps() {
        let mut state = 0x51_7cc1_b727_220au64;
        let mut queue: TimeQueue<u32> = TimeQueue::new();
        let mut heap: BinaryHeap<Reverse<(u64, u64, u32)>> = BinaryHeap::new();
        let (mut seq, mut now, mut moves) = (0u64, 0u64, 0u32);
        let mut was_radix = false;
        for round in 0..12u32 {
            let target = if round % 2 == 0 {
                3 * SMALL_MAX
            } else {
                SMALL_MIN / 2
            };
            while (heap.len() < target) == (round % 2 == 0) {
                let grow = round % 2 == 0;
                if grow || next(&mut state).is_multiple_of(4) {
                    seq += 1;
                    let time = match next(&mut state) % 4 {
                        0 => now,
                        _ => now + next(&mut state) % 5_000_000,
                    };
                    queue.push(time, seq, round);
                    heap.push(Reverse((time, seq, round)));
                }
                if !grow || next(&mut state).is_multiple_of(3) {
                    let taken = queue.pop();
                    assert_eq!(taken, heap.pop().map(|Reverse(entry)| entry));
                    if let Some((time, taken_seq, item)) = taken {
                        now = time;
                        if next(&mut state).is_multiple_of(9) {
                            queue.push(time, taken_seq, item);
                            heap.push(Reverse((time, taken_seq, item)));
                        }
                    }
                }
                assert_eq!(queue.peek(), heap.peek().map(|Reverse((t, s, _))| (*t, *s)));
                assert_eq!(queue.len(), heap.len());
                if queue.radix != was_radix {
                    moves += 1;
                    was_radix = queue.radix;
                }
            }
        }
        assert!(
            moves >= 10,
            "the queue moved between its heaps {moves} times"
        );
        while let Some(Reverse(entry)) = heap.pop() {
            assert_eq!(queue.pop(), Some(entry));
        }
        assert_eq!(queue.pop(), None);
    }

    /// A queue large enough to gather items ahead (timers spread as a fan-out's are, and
    /// more pushed while it drains): it gives the order a queue whose gathered items are
    /// never read gives, every item gathered is gathered once and taken later, and most
    /// items are gathered.
    #[test]
    fn hands_the_next_items_ahead_once_and_keeps_the_order() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut queue: TimeQueue<u64> = TimeQueue::new();
        let mut plain: TimeQueue<u64> = TimeQueue::new();
        let count = 3 * AHEAD_MIN_LEN as u64;
        for seq in 0..count {
            let time = next(&mut state) % 10_000_000;
            queue.push(time, seq, seq);
            plain.push(time, seq, seq);
        }
        let mut handed = std::collections::BTreeSet::new();
        let mut taken = std::collections::BTreeSet::new();
        let mut seq = count;
        while let Some((time, _, item)) = queue.pop() {
            for &item in queue.ahead() {
                assert!(handed.insert(item), "item {item} handed ahead twice");
                assert!(
                    !taken.contains(&item),
                    "item {item} handed after it was taken"
                );
            }
            queue.clear_ahead();
            let expected = plain.pop().map(|(_, _, item)| item);
            assert_eq!(Some(item), expected);
            taken.insert(item);
            // Now and then a new timer, as a run that goes on would set.
            if item % 5 == 0 && seq < 2 * count {
                let later = time + next(&mut state) % 1_000_000;
                queue.push(later, seq, seq);
                plain.push(later, seq, seq);
                seq += 1;
            }
        }
        assert_eq!(plain.pop(), None);
        assert!(plain.ahead().len() <= AHEAD_MAX);
        assert!(handed.is_subset(&taken));
        // Items are gathered only while the queue is large: most of the first `count`.
        assert!(
            handed.len() as u64 > count / 2,
            "{} of {count} handed",
            handed.len()
        );
    }
}
