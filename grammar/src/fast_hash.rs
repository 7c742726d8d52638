//! A fast, unkeyed hasher for the front end's own tables, and the
//! runtime's (the evaluator, the resolver and the simulator use it too).
//!
//! Why: the checker and the name resolution build and probe hash tables
//! keyed by names, spans and symbol numbers on every keystroke (a few
//! thousand entries for a 5,000-line file), and std's SipHash was a
//! visible share of a keystroke's time. The keys come from the file being
//! edited, on the user's own machine, so the protection a keyed hash gives
//! against crafted collisions buys nothing here.
//!
//! How: the multiply-rotate step of rustc's `FxHasher`, eight bytes at a
//! time, and MurmurHash3's final mix when the hash is taken (see
//! `FastHasher::finish`). Iteration order of a [`FastMap`] is as unspecified as a
//! `HashMap`'s; nothing in the front end depends on it.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// A `HashSet` with [`FastHasher`].
pub type FastSet<T> = HashSet<T, BuildHasherDefault<FastHasher>>;

/// An empty [`FastMap`] with room for `n` entries.
pub fn map_with_capacity<K, V>(n: usize) -> FastMap<K, V> {
    FastMap::with_capacity_and_hasher(n, BuildHasherDefault::default())
}

/// An empty [`FastSet`] with room for `n` entries.
pub fn set_with_capacity<T>(n: usize) -> FastSet<T> {
    FastSet::with_capacity_and_hasher(n, BuildHasherDefault::default())
}

/// The hasher of [`FastMap`] (see the module doc).
#[derive(Default, Clone, Copy)]
pub struct FastHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            // The length in the top bits: a short tail of zero bytes
            // still changes the hash.
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
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

    /// The state mixed so that every bit of it reaches the low bits a
    /// table picks its bucket by (MurmurHash3's final mix): the multiply
    /// alone leaves the low bits a function of the low bytes of the last
    /// word, so names that differ past their first bytes (`x1`..`x999999`)
    /// shared a few buckets, and checking a file of a million one-line
    /// assignments was most of its time in probing them.
    #[inline]
    fn finish(&self) -> u64 {
        let mut h = self.hash;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash_of<T: Hash>(v: T) -> u64 {
        BuildHasherDefault::<FastHasher>::default().hash_one(v)
    }

    #[test]
    fn different_names_hash_differently_and_equal_names_alike() {
        // `str` hashing appends a terminator, so "ab" + "c" and "a" + "bc"
        // as tuples still differ; and the trailing partial word counts.
        assert_eq!(hash_of("mgpu"), hash_of(String::from("mgpu")));
        assert_ne!(hash_of("mgpu"), hash_of("mgpv"));
        assert_ne!(hash_of("abcdefgh1"), hash_of("abcdefgh2"));
        assert_ne!(hash_of(("ab", "c")), hash_of(("a", "bc")));
        assert_ne!(hash_of(1usize), hash_of(2usize));
    }

    #[test]
    fn similar_names_spread_over_the_low_bits() {
        // A hash table picks a bucket by the low bits. The multiply leaves
        // them a function of the low bytes of the name's first word alone,
        // so `x100000`..`x199999` all fell into a few buckets: a file of a
        // million one-line assignments took minutes to check.
        for (prefix, n) in [("x", 100_000), ("task_", 20_000), ("a", 1_000)] {
            let low: std::collections::HashSet<u64> = (0..n)
                .map(|i| hash_of(format!("{prefix}{i}")) & 0xffff)
                .collect();
            let expected = 65_536.0 * (1.0 - (-(n as f64) / 65_536.0).exp());
            assert!(
                low.len() as f64 > 0.9 * expected,
                "{prefix}: {} distinct low 16 bits of {n} names, about {expected:.0} expected",
                low.len()
            );
        }
    }

    #[test]
    fn a_map_keyed_by_many_names_finds_each() {
        let mut m: FastMap<String, usize> = map_with_capacity(0);
        for i in 0..5_000 {
            m.insert(format!("name_{i}"), i);
        }
        assert!((0..5_000).all(|i| m.get(format!("name_{i}").as_str()) == Some(&i)));
        assert_eq!(m.get("name_5000"), None);
    }
}
