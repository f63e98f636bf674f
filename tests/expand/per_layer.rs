// An author's sequence-state cache for a hybrid model: every recurrent layer keeps a conv state
// and a recurrent state for each sequence slot. One field per kind of state, repeated once per
// recurrent layer (`per_layer`): the layers sit back to back in one buffer, `view.layer(i)` is
// layer i's, and a model without recurrent layers gates the buffers off.
use arena_runtime::{dtype::bf16, Arena, DevicePtr};

/// The model shapes the cache reads.
#[derive(Debug, Clone)]
pub struct HybridConfig {
    /// Layers with a recurrent mixer (the others are attention, which keeps no state here).
    pub recurrent_layers: usize,
    pub conv_channels: usize,
    pub conv_taps: usize,
    pub heads: usize,
    pub head_dim: usize,
}

/// Per sequence slot and recurrent layer: the conv's last `taps - 1` inputs and the state.
#[derive(Arena)]
#[arena(sizes = StateSizes, inputs(config: &HybridConfig, slots: usize))]
pub struct StateCache {
    /// The causal conv's last `conv_taps - 1` inputs of each channel, BF16.
    #[buffer(
        per_layer = config.recurrent_layers,
        shape = [slots, config.conv_channels, config.conv_taps - 1],
        gate = config.recurrent_layers > 0
    )]
    pub conv_state: DevicePtr<bf16>,
    /// The recurrent state, one `[head_dim, head_dim]` matrix a head, FP32.
    #[buffer(
        per_layer = config.recurrent_layers,
        shape = [slots, config.heads, config.head_dim, config.head_dim],
        gate = config.recurrent_layers > 0
    )]
    pub recurrent_state: DevicePtr<f32>,
}
