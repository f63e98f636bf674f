//! The const sizing path: what the code `#[arena(const)]` generates calls, all `const fn`.
//!
//! At run time a formula's failure is a [`SizeError`] value. In `const` evaluation there is
//! no caller to hand it to, so each formula unwraps its checked arithmetic here and panics
//! with a message the derive wrote naming the buffer and the formula: under const evaluation
//! that panic is the compile error.

use crate::checked::CheckedArith;
use crate::error::SizeError;

mod budget;
mod tables;
#[cfg(test)]
mod tests;

pub use budget::{fits, fits_reuse};
pub use tables::{named, tracked, tracked_total, with_tracking};

/// A formula's checked value in a const context. `get` unwraps it or panics with the
/// formula's message; `into_result` turns a call's value into a checked result without
/// panicking (`size!` and region sizes, which must still return errors at run time).
/// Inherent methods per value type, since trait methods cannot be called in a `const fn`.
pub struct Konst<T>(pub T);

impl Konst<usize> {
    pub const fn get(self, _msg: &'static str) -> usize {
        self.0
    }
    pub const fn into_result(self, _f: CheckedArith) -> Result<usize, SizeError> {
        Ok(self.0)
    }
}

impl Konst<u32> {
    pub const fn get(self, _msg: &'static str) -> usize {
        self.0 as usize
    }
    pub const fn into_result(self, _f: CheckedArith) -> Result<usize, SizeError> {
        Ok(self.0 as usize)
    }
}

impl Konst<u64> {
    pub const fn get(self, msg: &'static str) -> usize {
        if self.0 > usize::MAX as u64 {
            Message::new()
                .text(msg)
                .text(": a u64 that does not fit in usize")
                .panic()
        }
        self.0 as usize
    }
    pub const fn into_result(self, f: CheckedArith) -> Result<usize, SizeError> {
        if self.0 > usize::MAX as u64 {
            return Err(SizeError::TooLarge {
                buffer: f.name(),
                value: self.0 as u128,
            });
        }
        Ok(self.0 as usize)
    }
}

impl Konst<Result<usize, SizeError>> {
    /// The value, or a panic with `msg` and the error's own figures (`… overflows usize,
    /// divides by zero or goes below 0: 65536 * 281474976710656 overflows usize`).
    pub const fn get(self, msg: &'static str) -> usize {
        let value = match &self.0 {
            Ok(v) => *v,
            Err(e) => size_error_detail(Message::new().text(msg).text(": "), e).panic(),
        };
        // Moved on every path: a `const fn` cannot run `SizeError`'s destructor.
        core::mem::forget(self);
        value
    }
    pub const fn into_result(self, _f: CheckedArith) -> Result<usize, SizeError> {
        // SAFETY: reads the wrapper's only field, then forgets the wrapper, so the field is
        // owned once (by the return value). Moving the field out directly is refused in a
        // `const fn`: the checker cannot see the wrapper has nothing else to drop.
        let result = unsafe { core::ptr::read(&self.0) };
        core::mem::forget(self);
        result
    }
}

/// The const path's checked arithmetic: [`CheckedArith`]'s operations, each unwrapped on the
/// spot or panicking with the message of the formula it belongs to (bound once a formula,
/// so a generated operation is one call and names no text).
#[derive(Clone, Copy)]
pub struct KonstArith {
    f: CheckedArith,
    msg: &'static str,
}

/// One `const fn` an operation, each `CheckedArith`'s unwrapped.
macro_rules! unwrapped {
    ($($op:ident($($arg:ident),*)),* $(,)?) => {
        impl KonstArith {
            $(
                #[inline]
                pub const fn $op(self, $($arg: usize),*) -> usize {
                    Konst(self.f.$op($($arg),*)).get(self.msg)
                }
            )*
        }
    };
}

unwrapped!(
    add(a, b),
    sub(a, b),
    mul(a, b),
    div(a, b),
    rem(a, b),
    ceil16(x),
    round_up(x, to),
    ceil_div(a, b),
    max(a, b),
    min(a, b),
);

impl KonstArith {
    /// The context of `name`'s formula, whose failure panics with `msg`.
    pub const fn new(name: &'static str, msg: &'static str) -> Self {
        KonstArith {
            f: CheckedArith::new(name),
            msg,
        }
    }

    /// The bytes of `dims` elements of `elem_size` bytes, the dims kept in `kept` (the sizes'
    /// record of each buffer's shape, which the views read).
    #[inline]
    pub const fn shape(self, dims: &[usize], kept: &mut [usize], elem_size: usize) -> usize {
        let mut k = 0;
        while k < dims.len() && k < kept.len() {
            kept[k] = dims[k];
            k += 1;
        }
        Konst(self.f.shape(dims, elem_size)).get(self.msg)
    }

    /// The final size, as `__private::finish` at run time: at least `floor` bytes, and not 0
    /// unless the buffer is gated (a panic naming `arena` and the buffer otherwise).
    pub const fn finish(
        self,
        arena: &str,
        bytes: usize,
        floor: usize,
        gated: bool,
        raw: &mut usize,
    ) -> usize {
        *raw = bytes;
        let bytes = if bytes > floor { bytes } else { floor };
        if bytes == 0 && !gated {
            Message::new()
                .text("arena `")
                .text(arena)
                .text("`, const sizing: buffer `")
                .text(self.f.name())
                .text("` is not gated but its formula gives 0 bytes")
                .panic()
        }
        bytes
    }
}

/// `?` for a `const fn` returning `Result<_, SizeError>`: the `Ok` value, or return the
/// error. (`?` itself is not allowed in a `const fn`, and a plain `match` that leaves the
/// `Result` unmoved on the `Ok` path needs its destructor, which const evaluation cannot
/// run; this moves it on every path.)
///
/// ```
/// use arena_runtime::{const_try, CheckedArith, SizeError};
///
/// const fn area(w: usize, h: usize) -> Result<usize, SizeError> {
///     let f = CheckedArith::new("area");
///     let px = const_try!(f.mul(w, h));
///     f.mul(px, 4)
/// }
/// const A: usize = {
///     let r = area(3, 5);
///     let v = match &r { Ok(v) => *v, Err(_) => panic!("overflow") };
///     core::mem::forget(r); // moved on every path: no destructor runs in const evaluation
///     v
/// };
/// assert_eq!(A, 60);
/// ```
#[macro_export]
macro_rules! const_try {
    ($result:expr) => {{
        let result = $result;
        let value = match &result {
            ::core::result::Result::Ok(v) => *v,
            ::core::result::Result::Err(_) => return result,
        };
        ::core::mem::forget(result);
        value
    }};
}

/// The sum of the tracked sizes, checked.
pub const fn total(sizes: &[usize], tracked: &[bool], msg: &'static str) -> usize {
    let mut total = 0usize;
    let mut i = 0;
    while i < sizes.len() {
        if tracked[i] {
            total = match total.checked_add(sizes[i]) {
                Some(t) => t,
                None => panic!("{}", msg),
            };
        }
        i += 1;
    }
    total
}

/// A message built during const evaluation (numbers included), for a panic that is a
/// compile error. Text past the capacity is cut.
pub struct Message {
    buf: [u8; Message::CAPACITY],
    len: usize,
}

impl Message {
    const CAPACITY: usize = 1024;

    pub const fn new() -> Self {
        Message {
            buf: [0; Message::CAPACITY],
            len: 0,
        }
    }

    pub const fn text(mut self, s: &str) -> Self {
        let bytes = s.as_bytes();
        let mut i = 0;
        // Whole characters only, so the text stays UTF-8.
        while i < bytes.len() && self.len < Self::CAPACITY {
            let width = utf8_width(bytes[i]);
            if self.len + width > Self::CAPACITY {
                break;
            }
            let mut k = 0;
            while k < width {
                self.buf[self.len] = bytes[i + k];
                self.len += 1;
                k += 1;
            }
            i += width;
        }
        self
    }

    pub const fn number(mut self, mut n: usize) -> Self {
        let mut digits = [0u8; 20];
        let mut count = 0;
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        while count > 0 && self.len < Self::CAPACITY {
            count -= 1;
            self.buf[self.len] = digits[count];
            self.len += 1;
        }
        self
    }

    /// `n` bytes as `N B (M.m MiB)`, the MiB to one decimal, rounded down: bytes for the
    /// exact figure, MiB to read it.
    pub const fn bytes(self, n: usize) -> Self {
        let tenths = n / (1 << 20) * 10 + n % (1 << 20) * 10 / (1 << 20);
        self.number(n)
            .text(" B (")
            .number(tenths / 10)
            .text(".")
            .number(tenths % 10)
            .text(" MiB)")
    }

    pub const fn panic(&self) -> ! {
        let (text, _) = self.buf.split_at(self.len);
        match core::str::from_utf8(text) {
            Ok(s) => panic!("{}", s),
            Err(_) => panic!("(message not UTF-8)"),
        }
    }
}

impl Default for Message {
    fn default() -> Self {
        Self::new()
    }
}

const fn utf8_width(first: u8) -> usize {
    match first {
        0..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// A const sizing result as a `usize`, or a panic with the error's message (naming `what`
/// and the buffer), which under const evaluation is the compile error: what a generated
/// `const_bytes` returns, so a `const` item needs one call, not a `match` and a `forget`.
pub const fn unwrap_size(what: &str, result: Result<usize, SizeError>) -> usize {
    let value = match &result {
        Ok(v) => *v,
        Err(e) => size_error_message(Message::new().text(what).text(": "), e).panic(),
    };
    // Moved on every path: a `const fn` cannot run `SizeError`'s destructor.
    core::mem::forget(result);
    value
}

/// What failed, without the buffer's name (the message before it names the buffer): the
/// operation and its figures, in const evaluation.
const fn size_error_detail(m: Message, e: &SizeError) -> Message {
    match e {
        SizeError::Overflow { op, lhs, rhs, .. } => m
            .number(*lhs)
            .text(" ")
            .text(op)
            .text(" ")
            .number(*rhs)
            .text(" overflows usize"),
        SizeError::DivideByZero { op, lhs, .. } => {
            m.number(*lhs).text(" ").text(op).text(" 0 divides by zero")
        }
        _ => size_error_message(m, e),
    }
}

/// `SizeError`'s `Display`, in const evaluation. The const path makes no `Nested` or
/// `Derived` error (a `Box` cannot be built in a `const fn`), but one handed in is still named.
const fn size_error_message(m: Message, e: &SizeError) -> Message {
    match e {
        // The operation's figures are the detail's; the buffer's name goes before them.
        SizeError::Overflow { buffer, .. } | SizeError::DivideByZero { buffer, .. } => {
            size_error_detail(m.text("buffer `").text(buffer).text("`: "), e)
        }
        SizeError::Zero { buffer } => m
            .text("buffer `")
            .text(buffer)
            .text("` is not gated but its formula gives 0 bytes"),
        SizeError::TooLarge { buffer, .. } => m
            .text("buffer `")
            .text(buffer)
            .text("`: a value does not fit in usize"),
        SizeError::TotalOverflow { buffer } => m
            .text("the total overflows usize when adding buffer `")
            .text(buffer)
            .text("`"),
        SizeError::Nested { buffer, .. } => m
            .text("buffer `")
            .text(buffer)
            .text("`: a sizing function it calls failed"),
        SizeError::Derived { name, .. } => m.text("derived value `").text(name).text("` failed"),
    }
}
