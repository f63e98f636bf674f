//! Per-layer buffers (`#[buffer(per_layer = count, shape = [...])]`): one shape a layer, the
//! layers back to back in one allocation, sized, gated and viewed layer by layer.

use arena_runtime::{Arena, HostDevice, ViewError};
use arena_tests::per_layer::{
    HybridConfig, StateCache, StateCacheViews, StateCacheViewsMut, StateSizes,
};

const CONFIG: HybridConfig = HybridConfig {
    recurrent_layers: 3,
    conv_channels: 6,
    conv_taps: 4,
    heads: 2,
    head_dim: 4,
};

#[test]
fn a_per_layer_buffer_is_its_count_of_shapes_back_to_back() {
    let slots = 5;
    let sizes = StateSizes::from_config(&CONFIG, slots);
    // 3 layers × [5 slots, 6 channels, 3 taps] BF16; 3 × [5, 2, 4, 4] F32.
    assert_eq!(sizes.conv_state, 3 * 5 * 6 * 3 * 2);
    assert_eq!(sizes.recurrent_state, 3 * 5 * 2 * 4 * 4 * 4);
    assert_eq!(sizes.total_bytes(), 540 + 1920);
    // The layer count is the shape's first dimension, as reports show it.
    assert_eq!(StateCache::shape(&sizes, 0), [3, 5, 6, 3]);
    assert_eq!(StateCache::shape(&sizes, 1), [3, 5, 2, 4, 4]);
}

#[test]
fn each_layer_has_its_own_view_and_a_layer_past_the_count_is_an_error_naming_it() {
    let sizes = StateSizes::from_config(&CONFIG, 2);
    let mut cache = StateCache::allocate(HostDevice::new(), &sizes).unwrap();
    {
        let mut views = StateCacheViewsMut::of(&mut cache).unwrap();
        // Layer 1, slot 1: its own bytes, after layer 0's and slot 0's.
        let mut layer = views.recurrent_state.layer(1).unwrap();
        assert_eq!(layer.shape(), [2, 2, 4, 4]);
        let base = layer.as_raw();
        let mut slot = layer.range(32..64).unwrap();
        slot.write_bytes(&[7u8; 128]).unwrap();
        assert_eq!(base, cache.recurrent_state.as_raw() + 2 * 2 * 4 * 4 * 4);
    }
    let views = StateCacheViews::of(&cache);
    let mut whole = vec![0u8; views.recurrent_state.byte_len()];
    views.recurrent_state.read_bytes(&mut whole).unwrap();
    let layer_bytes = 2 * 2 * 4 * 4 * 4;
    let written = layer_bytes + 128..layer_bytes + 256;
    assert!(whole[written.clone()].iter().all(|&b| b == 7));
    assert!(whole[..written.start]
        .iter()
        .chain(&whole[written.end..])
        .all(|&b| b != 7));
    assert_eq!(
        views.conv_state.layer(3).unwrap_err(),
        ViewError::Layer {
            buffer: "conv_state",
            layer: 3,
            layers: 3
        }
    );
    cache.release().unwrap();
}

#[test]
fn no_recurrent_layers_gate_the_per_layer_buffers_off() {
    let attention_only = HybridConfig {
        recurrent_layers: 0,
        ..CONFIG
    };
    let sizes = StateSizes::from_config(&attention_only, 8);
    assert_eq!((sizes.conv_state, sizes.recurrent_state), (0, 0));
    let cache = StateCache::allocate(HostDevice::new(), &sizes).unwrap();
    assert!(cache.conv_state.is_null() && cache.recurrent_state.is_null());
    let views = StateCacheViews::of(&cache);
    // A closed gate has no shape at all: no layer to take.
    assert_eq!(
        views.conv_state.layer(0).unwrap_err(),
        ViewError::NoShape {
            buffer: "conv_state"
        }
    );
    cache.release().unwrap();
}

/// One sequence's slot of every state, through the byte views (no match over the fields): each
/// keeps its shape, last dimension in bytes, so `layer(l)` then `row_range(s..s + 1)` is
/// layer `l`'s slot `s` of any state, at the address the typed view gives.
#[test]
fn one_slot_of_every_state_through_the_byte_views() {
    let sizes = StateSizes::from_config(&CONFIG, 5);
    let mut cache = StateCache::allocate(HostDevice::new(), &sizes).unwrap();
    let shapes: Vec<Vec<usize>> = cache
        .byte_views()
        .iter()
        .map(|v| v.shape().to_vec())
        .collect();
    assert_eq!(shapes, [vec![3, 5, 6, 3 * 2], vec![3, 5, 2, 4, 4 * 4]]);
    for mut v in cache.byte_views_mut().unwrap() {
        let zeros = vec![0u8; v.byte_len()];
        v.write_bytes(&zeros).unwrap();
        let mut slot = v.layer(2).unwrap().into_row_range(4..5).unwrap();
        let bytes = vec![9u8; slot.byte_len()];
        slot.write_bytes(&bytes).unwrap();
    }
    let views = StateCacheViews::of(&cache);
    let slot = views
        .recurrent_state
        .layer(2)
        .unwrap()
        .row_range(4..5)
        .unwrap();
    let mut back = vec![0u8; slot.byte_len()];
    slot.read_bytes(&mut back).unwrap();
    assert_eq!(back, vec![9u8; 2 * 4 * 4 * 4]);
    let conv = views.conv_state.layer(2).unwrap().row_range(3..4).unwrap();
    let mut other = vec![0u8; conv.byte_len()];
    conv.read_bytes(&mut other).unwrap();
    assert!(other.iter().all(|&b| b == 0), "slot 3 untouched");
    cache.release().unwrap();
}
