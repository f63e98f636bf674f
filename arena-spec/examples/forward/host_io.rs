//! A view's values copied to and from the host, through the view (`read_bytes`,
//! `write_bytes`: on any device, on CUDA a copy waited for): what the host kernels
//! (`kernels.rs`) read and write, and how the step places its inputs in `scratch`.

use crate::ops::Result;
use arena_runtime::dtype::{bf16, Element};
use arena_runtime::{Device, View, ViewMut};

/// The first `n` bf16 values of `v`, as f32.
pub fn load_bf16<D: Device>(v: &View<'_, bf16, D>, n: usize) -> Result<Vec<f32>> {
    Ok(load_weight(v, 0..n)?
        .into_iter()
        .map(bf16::to_f32)
        .collect())
}

/// Values `range` of a weight view, as the bf16 they are: read straight into the values on a
/// little-endian host (a view's bytes are little-endian, as a `bf16`'s are there), so an LM
/// head of hundreds of MB is allocated and copied once, not twice.
pub fn load_weight<D: Device>(
    v: &View<'_, bf16, D>,
    range: std::ops::Range<usize>,
) -> Result<Vec<bf16>> {
    let mut values = vec![bf16::default(); range.end - range.start];
    #[cfg(target_endian = "little")]
    {
        // SAFETY: `bf16` is `#[repr(transparent)]` over `u16` (`arena_runtime::dtype`): the
        // values' `2 · len` bytes are initialised, any bits are a `bf16`, and `u8` has no
        // alignment to keep.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<u8>(), values.len() * 2)
        };
        v.range(range)?.read_bytes(bytes)?;
    }
    #[cfg(not(target_endian = "little"))]
    {
        let mut raw = vec![0u8; values.len() * 2];
        v.range(range)?.read_bytes(&mut raw)?;
        for (x, b) in values.iter_mut().zip(raw.chunks_exact(2)) {
            *x = bf16::from_bits(u16::from_le_bytes([b[0], b[1]]));
        }
    }
    Ok(values)
}

/// The first `n` `i64`s of `v`.
pub fn load_i64<D: Device>(v: &View<'_, i64, D>, n: usize) -> Result<Vec<i64>> {
    let mut raw = vec![0u8; n * 8];
    v.range(0..n)?.read_bytes(&mut raw)?;
    Ok(raw
        .chunks_exact(8)
        .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
        .collect())
}

/// `values` into the first `values.len()` `i64`s of `v`.
pub fn store_i64<D: Device>(v: &mut ViewMut<'_, i64, D>, values: &[i64]) -> Result<()> {
    let raw: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();
    Ok(v.range(0..values.len())?.write_bytes(&raw)?)
}

/// The whole weight view.
pub fn load_all<D: Device>(v: &View<'_, bf16, D>) -> Result<Vec<bf16>> {
    load_weight(v, 0..v.len())
}

/// `data` rounded to bf16 into the first `data.len()` values of `v`.
pub fn store_bf16<D: Device>(v: &mut ViewMut<'_, bf16, D>, data: &[f32]) -> Result<()> {
    let raw: Vec<u8> = data
        .iter()
        .flat_map(|x| bf16::from_f32(*x).to_bits().to_le_bytes())
        .collect();
    Ok(v.range(0..data.len())?.write_bytes(&raw)?)
}

/// The first `n` 4-byte values of `v` (f32, i32 or u32 bits).
pub fn load_words<T: Element, D: Device>(v: &View<'_, T, D>, n: usize) -> Result<Vec<u32>> {
    let mut raw = vec![0u8; n * 4];
    v.bytes().range(0..n * 4)?.read_bytes(&mut raw)?;
    Ok(raw
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// `words` into the first `words.len()` 4-byte values of `v`.
pub fn store_words<T: Element, D: Device>(v: &mut ViewMut<'_, T, D>, words: &[u32]) -> Result<()> {
    let raw: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    Ok(v.bytes().range(0..raw.len())?.write_bytes(&raw)?)
}

/// The first `n` f32 values of a view.
pub fn load_f32<D: Device>(v: &View<'_, f32, D>, n: usize) -> Result<Vec<f32>> {
    Ok(load_words(v, n)?.into_iter().map(f32::from_bits).collect())
}

/// `values` into the first values of a view.
pub fn store_f32<D: Device>(v: &mut ViewMut<'_, f32, D>, values: &[f32]) -> Result<()> {
    let words: Vec<u32> = values.iter().map(|x| x.to_bits()).collect();
    store_words(v, &words)
}
