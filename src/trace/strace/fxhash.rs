//! A fast hasher for the importer's tables (pids, fds, paths): the Fx hash of rustc and
//! Firefox (`rustc-hash` 1.x: rotate, xor, multiply per word). The std SipHash is built to
//! resist flooding by an adversary choosing keys; the keys here come from a trace file the user
//! chose to read, and hashing them was a tenth of the import time.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// The Fx hash state.
#[derive(Debug, Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` with the Fx hash.
pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
/// A `HashSet` with the Fx hash.
pub type FxHashSet<K> = HashSet<K, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash<T: Hash>(v: T) -> u64 {
        BuildHasherDefault::<FxHasher>::default().hash_one(v)
    }

    #[test]
    fn equal_keys_hash_equal_and_neighbours_differ() {
        assert_eq!(hash("/usr/lib/x"), hash(String::from("/usr/lib/x")));
        assert_ne!(hash("/usr/lib/x"), hash("/usr/lib/y"));
        // Same bytes up to a zero tail: the remainder's length keeps them apart.
        assert_ne!(hash(&b"ab"[..]), hash(&b"ab\0"[..]));
        assert_ne!(hash(1u32), hash(2u32));
        let mut m: FxHashMap<Option<u32>, u32> = FxHashMap::default();
        m.insert(Some(3), 1);
        m.insert(None, 2);
        assert_eq!((m[&Some(3)], m[&None]), (1, 2));
    }
}
