//! Element types a buffer can hold: the dtype of a buffer is the `T` of its `DevicePtr<T>`.

pub use half::{bf16, f16};

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
}
