//! The host's tensor-parallel communicator: what `HostOps::all_reduce` sums through when each
//! rank's step runs on a thread of its own.

/// The host's stand-in for an all-reduce between tensor-parallel ranks, each rank's step on
/// a thread of its own: every rank puts its partial sums in, waits for the others, and takes
/// their sum in rank order, so every rank holds the same bits (as NCCL's all-reduce gives).
pub struct HostComm {
    rank: usize,
    shared: std::sync::Arc<(std::sync::Barrier, std::sync::Mutex<Vec<Vec<f32>>>)>,
}

impl HostComm {
    /// One communicator a rank, for `ranks` ranks.
    pub fn group(ranks: usize) -> Vec<HostComm> {
        let shared = std::sync::Arc::new((
            std::sync::Barrier::new(ranks),
            std::sync::Mutex::new(vec![Vec::new(); ranks]),
        ));
        (0..ranks)
            .map(|rank| HostComm {
                rank,
                shared: shared.clone(),
            })
            .collect()
    }

    /// The sum over the ranks of each one's `part`, in rank order.
    pub fn all_reduce(&self, part: Vec<f32>) -> Vec<f32> {
        let (barrier, slots) = &*self.shared;
        slots.lock().unwrap_or_else(|e| e.into_inner())[self.rank] = part;
        barrier.wait();
        let sum = {
            let parts = slots.lock().unwrap_or_else(|e| e.into_inner());
            let mut sum = vec![0f32; parts[0].len()];
            for part in parts.iter() {
                for (acc, x) in sum.iter_mut().zip(part) {
                    *acc += x;
                }
            }
            sum
        };
        // No rank puts its next part in before every rank has read this one's.
        barrier.wait();
        sum
    }
}
