//! A small deterministic generator for the tests of this crate and of `arena-macros` (the
//! formula-parser differential test, the never-panics test), so a failure reproduces from
//! its seed. Not for anything else.

/// Xorshift64; the state must not be 0.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    /// Xorshift64 (13, 7, 17) from state 1: its first three outputs, computed independently
    /// (the first by hand: 1 ^ 1 << 13 = 8193; 8193 ^ 8193 >> 7 = 8257; 8257 ^ 8257 << 17 =
    /// 1082269761). The first alone would not do: an OR for an XOR gives it too, as no bits
    /// overlap yet. A weaker step would still drive the tests that use it, so the sequence is
    /// pinned here.
    #[test]
    fn the_sequence_from_one_is_xorshift64s() {
        let mut r = Rng(1);
        assert_eq!(r.next_u64(), 1_082_269_761);
        assert_eq!(r.next_u64(), 1_152_992_998_833_853_505);
        assert_eq!(r.next_u64(), 11_177_516_664_432_764_457);
        assert_eq!(Rng(7).below(1), 0);
    }
}
