//! Views narrow, copy and refuse as their docs say, on the host backend.

use super::*;
use crate::dtype::bf16;
use crate::HostDevice;

fn view<'a>(dims: &'a [usize], device: &'a HostDevice) -> View<'a, bf16, HostDevice> {
    let len = dims.iter().product();
    View::from_parts("qkv", DevicePtr::from_raw_parts(0x1000, len), dims, device)
}

#[test]
fn rows_narrow_within_the_capacity_and_name_the_buffer_beyond_it() {
    let device = HostDevice::new();
    let v = view(&[8, 6], &device);
    let r = v.rows(3).unwrap();
    assert_eq!((r.len(), r.as_raw()), (18, 0x1000));
    assert_eq!(r.shape(), [3, 6]);
    assert!(v.rows(0).unwrap().is_empty());
    assert_eq!(v.rows(8).unwrap().len(), 48);
    let e = v.rows(9).unwrap_err();
    assert_eq!(
        e,
        ViewError::Rows {
            buffer: "qkv",
            rows: 9,
            capacity: 8
        }
    );
    assert_eq!(
        e.to_string(),
        "buffer `qkv`: 9 rows asked, its capacity is 8 rows"
    );
    let gated = view(&[0, 6], &device);
    assert!(gated.rows(1).unwrap_err().to_string().contains("gated off"));
    let bytes = View::<u8, _>::from_parts(
        "scratch",
        DevicePtr::from_raw_parts(0x2000, 64),
        &[],
        &device,
    );
    assert_eq!(
        bytes.rows(1).unwrap_err(),
        ViewError::NoShape { buffer: "scratch" }
    );
}

#[test]
fn a_per_layer_buffer_gives_each_layer_contiguous_and_names_a_layer_past_its_count() {
    let device = HostDevice::new();
    // Three layers of [4 slots, 2, 5]: 40 elements (80 bytes) a layer.
    let v = view(&[3, 4, 2, 5], &device);
    let l2 = v.layer(2).unwrap();
    assert_eq!((l2.len(), l2.as_raw()), (40, 0x1000 + 2 * 80));
    assert_eq!(l2.shape(), [4, 2, 5]);
    // A layer narrows by rows like any buffer: its first slot of layer 1.
    let slot = v.layer(1).unwrap().rows(1).unwrap();
    assert_eq!((slot.len(), slot.as_raw()), (10, 0x1000 + 80));
    let e = v.layer(3).unwrap_err();
    assert_eq!(
        e,
        ViewError::Layer {
            buffer: "qkv",
            layer: 3,
            layers: 3
        }
    );
    assert_eq!(
        e.to_string(),
        "buffer `qkv`: layer 3 asked, it holds 3 layers"
    );
    assert!(view(&[0, 4], &device)
        .layer(0)
        .unwrap_err()
        .to_string()
        .contains("gated off"));
    // A buffer of one dimension has no layers of its own shape.
    assert!(matches!(
        view(&[3], &device).layer(0),
        Err(ViewError::Layer { layers: 0, .. })
    ));
    let mut w = ViewMut::<bf16, _>::from_parts(
        "state",
        DevicePtr::from_raw_parts(0x4000, 12),
        &[3, 4],
        &device,
    );
    assert_eq!(w.layer(1).unwrap().as_raw(), 0x4000 + 8);
    assert_eq!(w.into_layer(2).unwrap().shape(), [4]);
}

#[test]
fn ranges_and_regions_stay_inside_the_buffer() {
    let device = HostDevice::new();
    let v = view(&[4, 4], &device);
    let r = v.range(2..10).unwrap();
    assert_eq!((r.len(), r.as_raw()), (8, 0x1004));
    assert_eq!(r.shape(), [8]);
    let (start, end) = (3, 2);
    assert!(v.range(10..17).is_err() && v.range(start..end).is_err());
    let bytes = View::<u8, _>::from_parts(
        "scratch",
        DevicePtr::from_raw_parts(0x2000, 64),
        &[64],
        &device,
    );
    let ids = bytes
        .region::<i32>(Region {
            offset: 32,
            bytes: 16,
        })
        .unwrap();
    assert_eq!((ids.len(), ids.as_raw()), (4, 0x2020));
    assert!(bytes
        .region::<i32>(Region {
            offset: 56,
            bytes: 16
        })
        .is_err());
    assert!(bytes
        .region::<i32>(Region {
            offset: 0,
            bytes: 6
        })
        .is_err());
    assert!(bytes
        .region::<i32>(Region {
            offset: usize::MAX,
            bytes: 4
        })
        .is_err());
}

#[test]
fn a_writable_view_narrows_and_reads_the_same_bytes() {
    let device = HostDevice::new();
    let mut w = ViewMut::<f32, _>::from_parts(
        "out",
        DevicePtr::from_raw_parts(0x4000, 12),
        &[4, 3],
        &device,
    );
    assert_eq!(w.rows(2).unwrap().len(), 6);
    assert_eq!(w.as_view().shape(), [4, 3]);
    assert_eq!(w.reborrow().into_rows(4).unwrap().len(), 12);
    assert!(w.rows(5).is_err());
}

/// A writable view consumed into its rows or a layer keeps the narrowed shape and address,
/// reads back what it wrote, and names its buffer when debug-printed.
#[test]
fn a_consumed_writable_view_narrows_its_shape_and_address_and_reads_back() {
    use crate::Device;
    let device = HostDevice::new();
    let addr = device.alloc(3 * 4 * 4).unwrap();
    let mut w = ViewMut::<f32, _>::from_parts(
        "layers",
        DevicePtr::from_raw_parts(addr, 12),
        &[3, 4],
        &device,
    );
    assert!(format!("{w:?}").contains("layers") && format!("{:?}", w.as_view()).contains("layers"));
    let rows = w.reborrow().into_rows(2).unwrap();
    assert_eq!(rows.shape(), [2, 4]);
    assert_eq!((rows.as_raw(), rows.len()), (addr, 8));
    let layer = w.reborrow().into_layer(2).unwrap();
    assert_eq!(layer.shape(), [4]);
    assert_eq!(layer.as_raw(), addr + 2 * 16);
    let data: Vec<u8> = (0..48).collect();
    w.write_bytes(&data).unwrap();
    let mut back = vec![0u8; 48];
    w.read_bytes(&mut back).unwrap();
    assert_eq!(back, data);
    // SAFETY: the view is done with; the allocation is this test's.
    unsafe { device.free(addr, 48) }.unwrap();
}

#[test]
fn a_shape_equals_arrays_and_slices_of_its_numbers_and_prints_as_them() {
    let device = HostDevice::new();
    let shape = view(&[16, 64], &device).shape();
    assert!(shape == [16, 64] && shape != [16, 65] && shape != [16]);
    let (same, other): (&[usize], &[usize]) = (&[16, 64], &[64, 16]);
    assert!(shape == *same && shape != *other);
    assert!(shape == same && shape != other);
    assert_eq!(format!("{shape:?}"), "[16, 64]");
}

/// One KV block of one layer of a `[layers, blocks, block_tokens, width]` buffer, and a range
/// of a layer's blocks: each row whole, at its address.
#[test]
fn a_row_range_keeps_each_row_and_starts_at_its_row() {
    let device = HostDevice::new();
    let v = view(&[2, 8, 16, 4], &device);
    let layer = v.layer(1).unwrap();
    let block = layer.row_range(5..6).unwrap();
    assert_eq!(block.shape(), [1, 16, 4]);
    // Layer 1 starts 8 · 64 elements in; block 5 another 5 · 64; two bytes an element.
    assert_eq!(block.as_raw(), 0x1000 + ((8 * 64 + 5 * 64) * 2) as u64);
    assert_eq!(layer.row_range(2..5).unwrap().shape(), [3, 16, 4]);
    assert!(layer.row_range(3..3).unwrap().is_empty());
    #[allow(clippy::reversed_empty_ranges)]
    let backwards = layer.row_range(5..3);
    assert!(matches!(
        backwards,
        Err(ViewError::RowRange {
            start: 5,
            end: 3,
            rows: 8,
            ..
        })
    ));
    let e = layer.row_range(7..9).unwrap_err();
    assert_eq!(
        e.to_string(),
        "buffer `qkv`: rows 7..9 asked, it holds 8 rows"
    );
    let flat = View::<u8, _>::from_parts(
        "scratch",
        DevicePtr::from_raw_parts(0x2000, 8),
        &[],
        &device,
    );
    assert!(matches!(
        flat.row_range(0..1),
        Err(ViewError::RowRange { rows: 0, .. })
    ));
}

/// A writable view split at a row: two writable views of disjoint rows, each written without
/// touching the other.
#[test]
fn a_writable_view_splits_into_two_disjoint_ones() {
    let device = HostDevice::new();
    let addr = device.alloc(6 * 4).unwrap();
    let dims = [6usize, 4];
    {
        let whole = ViewMut::<u8, _>::from_parts(
            "buf",
            DevicePtr::from_raw_parts(addr, 24),
            &dims,
            &device,
        );
        let (mut top, mut bottom) = whole.split_rows(2).unwrap();
        assert_eq!(top.shape(), [2, 4]);
        assert_eq!(bottom.shape(), [4, 4]);
        top.write_bytes(&[1; 8]).unwrap();
        bottom.write_bytes(&[2; 16]).unwrap();
        let mut back = [0u8; 24];
        // SAFETY: the 24 bytes are the live allocation above.
        unsafe { device.read(addr, &mut back) }.unwrap();
        assert_eq!(back[..8], [1; 8]);
        assert_eq!(back[8..], [2; 16]);
    }
    let whole =
        ViewMut::<u8, _>::from_parts("buf", DevicePtr::from_raw_parts(addr, 24), &dims, &device);
    let tail = whole.into_row_range(4..6).unwrap();
    assert_eq!(tail.shape(), [2, 4]);
    assert_eq!((tail.as_raw(), tail.len()), (addr + 16, 8));
    let whole =
        ViewMut::<u8, _>::from_parts("buf", DevicePtr::from_raw_parts(addr, 24), &dims, &device);
    assert!(matches!(
        whole.split_rows(7),
        Err(ViewError::RowRange {
            start: 0,
            end: 7,
            rows: 6,
            ..
        })
    ));
    // SAFETY: freed once, nothing uses it after.
    unsafe { device.free(addr, 24) }.unwrap();
}

#[test]
fn a_byte_view_casts_to_whole_aligned_elements_and_names_the_buffer_otherwise() {
    let device = HostDevice::new();
    let bytes = |addr, len| {
        View::<u8, _>::from_parts("q_proj", DevicePtr::from_raw_parts(addr, len), &[], &device)
    };
    let v = bytes(0x1000, 24).cast::<bf16>().unwrap();
    assert_eq!((v.len(), v.as_raw(), v.name()), (12, 0x1000, "q_proj"));
    assert_eq!(v.shape(), [12]);
    assert_eq!(bytes(0x1000, 24).cast::<f32>().unwrap().len(), 6);
    assert!(bytes(0, 0).cast::<f32>().unwrap().is_empty());
    // Not whole `f32`s, and not aligned for them.
    let e = bytes(0x1000, 22).cast::<f32>().unwrap_err();
    assert_eq!(
        e,
        ViewError::Cast {
            buffer: "q_proj",
            addr: 0x1000,
            bytes: 22,
            dtype: "f32"
        }
    );
    assert_eq!(
        e.to_string(),
        "buffer `q_proj`: 22 bytes at 0x1000 are not whole, aligned `f32` elements"
    );
    assert!(matches!(
        bytes(0x1002, 8).cast::<f32>(),
        Err(ViewError::Cast { addr: 0x1002, .. })
    ));
    // A writable view casts the same way, consumed.
    let raw = DevicePtr::<u8>::from_raw_parts(0x2000, 8);
    let w = ViewMut::from_parts("o_proj", raw, &[], &device);
    let w = w.into_cast::<bf16>().unwrap();
    assert_eq!((w.len(), w.as_raw()), (4, 0x2000));
}
