//! Portable, seedable randomness.
//!
//! Every random choice in ClusterLab flows from here so that the same inputs
//! give the same bytes on every platform: SplitMix64 for the generator and
//! FNV-1a for turning names (lab id, host, GPU index) into sub-seeds. Neither
//! depends on the platform's word size, endianness or hasher.

/// FNV-1a over bytes: a stable hash for deriving seeds from names.
pub fn stable_hash(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// A SplitMix64 generator: tiny, fast and identical everywhere.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// A generator for one named stream under a parent seed, e.g.
    /// `Rng::derive(lab_seed, &["gpu-001", "gpu", "3"])`.
    pub fn derive(seed: u64, path: &[&str]) -> Self {
        let mut mixed = seed;
        for part in path {
            mixed = Rng::new(mixed ^ stable_hash(part.as_bytes())).next_u64();
        }
        Rng::new(mixed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform integer in `lo..=hi` (returns `lo` when the range is empty).
    pub fn range_u64(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo + 1;
        lo + self.next_u64() % span
    }

    pub fn range_i64(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi as i128 - lo as i128 + 1) as u128;
        (lo as i128 + (u128::from(self.next_u64()) % span) as i128) as i64
    }

    /// A uniform float in `[0, 1)` from the top 53 bits.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            let at = self.range_u64(0, items.len() as u64 - 1) as usize;
            items.get(at)
        }
    }

    /// `n` lowercase hex digits.
    pub fn hex(&mut self, n: usize) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        (0..n).map(|_| DIGITS[(self.next_u64() & 0xf) as usize] as char).collect()
    }
}

/// A version 4 UUID made from `text`, stable across runs and platforms:
/// xAPI's statement ids and Kubernetes' object UIDs. (The salt names
/// xAPI, where it was first used: changing it would change every id.)
pub fn uuid_for(text: &str) -> String {
    let high = stable_hash(format!("xapi-high:{text}").as_bytes());
    let low = stable_hash(format!("xapi-low:{text}").as_bytes());
    let high = (high & 0xffff_ffff_ffff_0fff) | 0x0000_0000_0000_4000;
    let low = (low & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    format!("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", high >> 32, (high >> 16) & 0xffff, high & 0xffff, low >> 48, low & 0xffff_ffff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_matches_the_reference_sequence() {
        // First outputs of SplitMix64 seeded with 0, as published with the algorithm.
        let mut rng = Rng::new(0);
        assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn fnv1a_matches_the_reference_value() {
        assert_eq!(stable_hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(stable_hash(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn derived_streams_are_stable_and_distinct() {
        let a = Rng::derive(7, &["gpu-001", "gpu", "0"]).next_u64();
        let b = Rng::derive(7, &["gpu-001", "gpu", "1"]).next_u64();
        assert_eq!(a, Rng::derive(7, &["gpu-001", "gpu", "0"]).next_u64());
        assert_ne!(a, b);
    }

    #[test]
    fn ranges_stay_inside_their_bounds() {
        let mut rng = Rng::new(42);
        for _ in 0..1000 {
            let v = rng.range_i64(-3, 3);
            assert!((-3..=3).contains(&v));
            let f = rng.unit_f64();
            assert!((0.0..1.0).contains(&f));
        }
        assert_eq!(rng.range_u64(5, 5), 5);
        assert_eq!(rng.range_u64(9, 1), 9);
    }
}
