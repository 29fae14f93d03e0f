//! Maps keyed by agent id (`u32`): a fast, deterministic hasher for maps that are looked
//! up and never iterated, so no hash order can reach an output.

use std::collections::HashMap;
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

#[cfg(test)]
mod tests {
    use super::*;

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
