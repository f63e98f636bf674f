//! Element types a buffer can hold: the dtype of a buffer is the `T` of its `DevicePtr<T>`.
//!
//! `bf16`, `f16` and `F8E4M3` are this crate's own types, each one value kept as its bits:
//! the arena sizes and carves buffers of them and never computes with them, so it needs no
//! floating-point library (the `half` crate would add `zerocopy` and its derive to every
//! build). They are the same types with or without the `cuda` feature. An engine that
//! computes on the host converts with `from_bits` / `to_bits` (or its own `half` values,
//! which have the same bits).

/// An element type that can live in a device buffer.
///
/// The derive reads `NAME` for reports and `SIZE` for byte counts, so a buffer's
/// bytes always follow from its declared element type.
pub trait Element: Copy + 'static {
    /// The name reports print (`bf16`, `f32`, `fp8_e4m3`, ...).
    const NAME: &'static str;
    /// Bytes per element. Keep the default, `size_of::<Self>()`: pointers count whole
    /// elements of the type itself.
    const SIZE: usize = core::mem::size_of::<Self>();
    /// Both, as one value: what a [`BufferDecl`](crate::BufferDecl) is declared with.
    const DTYPE: Dtype = Dtype {
        name: Self::NAME,
        size: Self::SIZE,
    };
}

/// An element type's name and bytes (`Element::NAME`, `Element::SIZE`): `bf16::DTYPE` with
/// [`Element`] in scope (`use arena_runtime::dtype::{bf16, Element};`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dtype {
    pub name: &'static str,
    pub size: usize,
}

/// One bfloat16 value (1 sign, 8 exponent, 7 mantissa bits), kept as its bits.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct bf16(u16);

/// One IEEE 754 binary16 value (1 sign, 5 exponent, 10 mantissa bits), kept as its bits.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct f16(u16);

// `#[inline]`: the conversions are a few instructions, called once a value in host kernels;
// without it a caller in another crate pays a call each (and, in an unoptimised dependency,
// `f32::from_bits` and `is_nan` calls too).
impl bf16 {
    /// The value with these bits.
    #[inline]
    pub const fn from_bits(bits: u16) -> bf16 {
        bf16(bits)
    }

    /// Its bits.
    #[inline]
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// `x` rounded to the nearest bfloat16, ties to even; NaN stays NaN (quiet).
    #[inline]
    pub const fn from_f32(x: f32) -> bf16 {
        let bits = x.to_bits();
        if x.is_nan() {
            return bf16(((bits >> 16) as u16) | 0x0040);
        }
        let round = 0x7fff + ((bits >> 16) & 1);
        bf16((bits.wrapping_add(round) >> 16) as u16)
    }

    /// The `f32` of the same value (exact: every bfloat16 is an `f32`).
    #[inline]
    pub const fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

impl f16 {
    /// The value with these bits.
    #[inline]
    pub const fn from_bits(bits: u16) -> f16 {
        f16(bits)
    }

    /// Its bits.
    #[inline]
    pub const fn to_bits(self) -> u16 {
        self.0
    }
}

/// One FP8 E4M3 value (the OCP "E4M3FN" encoding used for FP8 activations), kept as its bits.
///
/// The arena only sizes and carves FP8 buffers; kernels interpret the bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct F8E4M3(pub u8);

/// Short alias matching the usual kernel spelling.
#[allow(non_camel_case_types)]
pub type fp8_e4m3 = F8E4M3;

macro_rules! element {
    ($($t:ty => $name:literal),* $(,)?) => {
        $(impl Element for $t { const NAME: &'static str = $name; })*
    };
}

element! {
    u8 => "u8", i8 => "i8", u16 => "u16", i16 => "i16", u32 => "u32", i32 => "i32",
    u64 => "u64", i64 => "i64", f32 => "f32", f64 => "f64",
    bf16 => "bf16", f16 => "f16", F8E4M3 => "fp8_e4m3",
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_type() {
        assert_eq!(<bf16 as Element>::SIZE, 2);
        assert_eq!(<f16 as Element>::SIZE, 2);
        assert_eq!(<F8E4M3 as Element>::SIZE, 1);
        assert_eq!(<f32 as Element>::SIZE, 4);
        assert_eq!(<u64 as Element>::NAME, "u64");
    }

    #[test]
    fn bf16_converts_as_the_format_says() {
        for (x, bits) in [
            (1.0f32, 0x3f80u16),
            (-2.0, 0xc000),
            (0.0, 0),
            (f32::INFINITY, 0x7f80),
        ] {
            assert_eq!(bf16::from_f32(x).to_bits(), bits, "{x}");
            assert_eq!(bf16::from_bits(bits).to_f32(), x);
        }
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1.0);
        // 1 + 3·2^-8 rounds up to 1 + 2^-6.
        assert_eq!(bf16::from_f32(1.0 + 1.0 / 256.0).to_bits(), 0x3f80);
        assert_eq!(bf16::from_f32(1.0 + 3.0 / 256.0).to_bits(), 0x3f82);
        assert!(bf16::from_f32(f32::NAN).to_f32().is_nan());
        // The poison pattern (every byte 0xFF) is a NaN in both 16-bit formats.
        assert!(bf16::from_bits(0xffff).to_f32().is_nan());
        assert_eq!(f16::from_bits(0xffff).to_bits() & 0x7c00, 0x7c00);
    }
}
