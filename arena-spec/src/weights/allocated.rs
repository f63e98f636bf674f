//! The six weight arenas allocated together: what an engine holds for its weights.

use super::{
    AttentionWeights, CompressedAttentionWeights, FfnWeights, LatentAttentionWeights, MixerWeights,
    ModelWeights, WeightsSizes,
};
use arena_runtime::{Allocated, ArenaError, Device};

/// Every weight arena of one config on one device, a slab each (an arena whose tensors the
/// model does not have takes nothing: its buffers are 0 bytes and NULL). Views come from each
/// part (`AttentionWeightsViews::of(&weights.attention).q_proj.layer(i)`). Dropped, it frees
/// what it holds; [`Self::release`] frees it and reports a failure.
#[derive(Debug)]
pub struct AllocatedWeights<D: Device> {
    pub model: Allocated<ModelWeights, D>,
    pub attention: Allocated<AttentionWeights, D>,
    pub latent: Allocated<LatentAttentionWeights, D>,
    pub compressed: Allocated<CompressedAttentionWeights, D>,
    pub mixers: Allocated<MixerWeights, D>,
    pub ffn: Allocated<FfnWeights, D>,
}

impl<D: Device + Clone> AllocatedWeights<D> {
    /// Allocates the six arenas of `sizes` on `device`. On a failure, the arenas already
    /// allocated are freed (dropped) and the error names the arena and its bytes.
    pub fn allocate(device: D, sizes: &WeightsSizes) -> Result<Self, ArenaError> {
        Ok(AllocatedWeights {
            model: ModelWeights::allocate(device.clone(), &sizes.model)?,
            attention: AttentionWeights::allocate(device.clone(), &sizes.attention)?,
            latent: LatentAttentionWeights::allocate(device.clone(), &sizes.latent)?,
            compressed: CompressedAttentionWeights::allocate(device.clone(), &sizes.compressed)?,
            mixers: MixerWeights::allocate(device.clone(), &sizes.mixers)?,
            ffn: FfnWeights::allocate(device, &sizes.ffn)?,
        })
    }
}

impl<D: Device> AllocatedWeights<D> {
    /// Frees every arena, each exactly once; every one is attempted, and the first failure
    /// is returned.
    pub fn release(self) -> Result<(), ArenaError> {
        let results = [
            self.model.release(),
            self.attention.release(),
            self.latent.release(),
            self.compressed.release(),
            self.mixers.release(),
            self.ffn.release(),
        ];
        results.into_iter().collect()
    }

    /// Device bytes the six slabs hold.
    pub fn allocated_bytes(&self) -> usize {
        self.model.allocated_bytes()
            + self.attention.allocated_bytes()
            + self.latent.allocated_bytes()
            + self.compressed.allocated_bytes()
            + self.mixers.allocated_bytes()
            + self.ffn.allocated_bytes()
    }
}
