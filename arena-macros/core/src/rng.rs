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
