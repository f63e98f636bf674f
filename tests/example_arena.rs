use arena_tests::example::*;
fn main() {}
