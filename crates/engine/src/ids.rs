//! Maps keyed by agent id (`u32`): a fast, deterministic hasher for maps that are looked
//! up and never iterated, so no hash order can reach an output. And [`Window`], for values
//! keyed by numbers handed out in increasing order (prompt numbers).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// Multiplies the id by an odd constant (Fibonacci hashing): one instruction per key, and
/// sequential ids spread over the table's buckets.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 =
                (self.0.rotate_left(5) ^ u64::from(*byte)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u32(&mut self, value: u32) {
        self.0 = u64::from(value).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Agent id → `V`, hashed with [`IdHasher`]. Never iterate it where the order is seen.
pub(crate) type IdMap<V> = HashMap<u32, V, BuildHasherDefault<IdHasher>>;

/// Values keyed by numbers handed out in increasing order and mostly removed in about the
/// order they came (prompt numbers: the person answers the queue in order): a deque
/// indexed by `key − base`, so an insert and a remove touch one slot (a `BTreeMap` of
/// tens of thousands of waiting prompts cost a search and node moves each). A key below
/// the window, or far beyond it, goes to a small ordered map instead. Never iterated.
#[derive(Clone, Debug)]
pub(crate) struct Window<T> {
    /// The key of `slots[0]`.
    base: u64,
    slots: VecDeque<Option<T>>,
    /// `Some` entries in `slots`.
    held: usize,
    others: BTreeMap<u64, T>,
}

impl<T> Default for Window<T> {
    fn default() -> Self {
        Window {
            base: 0,
            slots: VecDeque::new(),
            held: 0,
            others: BTreeMap::new(),
        }
    }
}

impl<T> Window<T> {
    /// How many values are held.
    pub(crate) fn len(&self) -> usize {
        self.held + self.others.len()
    }

    /// Holds `value` at `key`, returning the value it replaces.
    pub(crate) fn insert(&mut self, key: u64, value: T) -> Option<T> {
        if self.held == 0 {
            self.slots.clear();
            self.base = key;
        }
        // The window grows only while at least about half of what it spans is held, so
        // keys spread thin (a named agent now and then among anonymous ones) cost their
        // own few bytes in `others`, not 8 or more bytes for every key in between.
        let offset = match key.checked_sub(self.base) {
            Some(offset)
                if offset < self.slots.len() as u64 || offset <= 2 * self.held as u64 + 4096 =>
            {
                offset as usize
            }
            _ => return self.others.insert(key, value),
        };
        if offset == self.slots.len() {
            // The common case: the next key, at the end.
            self.slots.push_back(Some(value));
            self.held += 1;
            return None;
        }
        if offset > self.slots.len() {
            self.slots.resize_with(offset + 1, || None);
        }
        let old = self.slots[offset].replace(value);
        if old.is_none() {
            self.held += 1;
        }
        old
    }

    /// The value at `key`.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<&T> {
        let held = self.slot(key).and_then(|slot| self.slots[slot].as_ref());
        match held {
            Some(value) => Some(value),
            None if self.others.is_empty() => None,
            // A key below a window that was restarted lower, or held apart while far.
            None => self.others.get(&key),
        }
    }

    /// Takes the value at `key`.
    pub(crate) fn remove(&mut self, key: u64) -> Option<T> {
        let Some(slot) = self.slot(key) else {
            return self.others.remove(&key);
        };
        let Some(value) = self.slots[slot].take() else {
            return self.others.remove(&key);
        };
        self.held -= 1;
        while matches!(self.slots.front(), Some(None)) {
            self.slots.pop_front();
            self.base += 1;
        }
        Some(value)
    }

    /// The smallest key held.
    pub(crate) fn first_key(&self) -> Option<u64> {
        // `slots` never starts with an empty slot (`insert` restarts the window at its key
        // when it holds nothing, `remove` drops the empty slots at the front), so while it
        // holds a value its first key is `base`.
        let window = (self.held > 0).then_some(self.base);
        let apart = self.others.keys().next().copied();
        match (window, apart) {
            (Some(window), Some(apart)) => Some(window.min(apart)),
            (window, apart) => window.or(apart),
        }
    }

    /// Where `key` is in `slots`, if it is in the window's range.
    fn slot(&self, key: u64) -> Option<usize> {
        let offset = usize::try_from(key.checked_sub(self.base)?).ok()?;
        (offset < self.slots.len()).then_some(offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inserts and removes in and out of order, far keys and keys below the window, against
    /// a `BTreeMap`.
    #[test]
    fn window_acts_as_a_map() {
        let mut window: Window<u64> = Window::default();
        let mut map: BTreeMap<u64, u64> = BTreeMap::new();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next_key = 1u64;
        for round in 0..50_000u64 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let key = match state % 10 {
                0..=4 => {
                    next_key += 1;
                    next_key
                }
                5 => next_key + 100_000 + state % 1_000,
                6 => state % 50,
                _ => next_key.saturating_sub(state % 64),
            };
            if state.is_multiple_of(3) {
                assert_eq!(window.remove(key), map.remove(&key), "round {round}");
            } else {
                assert_eq!(window.insert(key, round), map.insert(key, round));
            }
            assert_eq!(window.get(key), map.get(&key));
            assert_eq!(window.len(), map.len());
            assert_eq!(window.first_key(), map.keys().next().copied());
        }
        let keys: Vec<u64> = map.keys().copied().collect();
        for key in keys {
            assert_eq!(window.remove(key), map.remove(&key));
        }
        assert_eq!(window.len(), 0);
    }

    /// Keys one in a thousand (named agents among anonymous load runs) do not grow the
    /// window over the keys between them.
    #[test]
    fn thin_keys_do_not_grow_the_window() {
        let mut window: Window<u32> = Window::default();
        for index in 0..10_000u32 {
            let key = u64::from(index) * 1000;
            assert_eq!(window.insert(key, index), None);
        }
        assert!(
            window.slots.len() <= 2 * window.held + 4097,
            "{}",
            window.slots.len()
        );
        for index in 0..10_000u32 {
            assert_eq!(window.get(u64::from(index) * 1000), Some(&index));
        }
        assert_eq!(window.len(), 10_000);
    }

    /// The other side of `thin_keys_do_not_grow_the_window`: dense keys, a key ahead by
    /// up to twice what is held (plus 4096), and a key inside the window's span however
    /// few are held all live in the window's vector, not in `others` (found with
    /// cargo-mutants: the growth guard could send every key to `others` unseen).
    #[test]
    fn dense_and_near_keys_live_in_the_window() {
        let mut window: Window<u32> = Window::default();
        for index in 0..5_000u32 {
            assert_eq!(window.insert(u64::from(index), index), None);
        }
        assert!(window.others.is_empty());
        assert_eq!(window.slots.len(), 5_000);
        assert_eq!(window.insert(14_000, 1), None);
        assert!(window.others.is_empty());
        for index in 1..5_000u32 {
            assert_eq!(window.remove(u64::from(index)), Some(index));
        }
        assert_eq!(window.held, 2);
        assert_eq!(window.insert(9_000, 2), None);
        assert!(window.others.is_empty());
        assert_eq!(window.get(9_000), Some(&2));
        assert_eq!(window.len(), 3);
    }

    #[test]
    fn ids_round_trip() {
        let mut map: IdMap<usize> = IdMap::default();
        for id in 0..10_000u32 {
            map.insert(id.wrapping_mul(7_919), id as usize);
        }
        for id in 0..10_000u32 {
            assert_eq!(map.remove(&id.wrapping_mul(7_919)), Some(id as usize));
        }
        assert!(map.is_empty());
    }
}
