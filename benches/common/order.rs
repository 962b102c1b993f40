//! A fixed shuffled order, shared by the benchmarks that look up handles out of insertion order.

/// A fixed permutation of `0..n` (xorshift Fisher-Yates): random order, same every run.
pub fn shuffled(n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for i in (1..n).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        order.swap(i, (state % (i as u64 + 1)) as usize);
    }
    order
}
