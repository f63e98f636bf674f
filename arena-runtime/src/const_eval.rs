//! The const sizing path: what the code `#[arena(const)]` generates calls, all `const fn`.
//!
//! At run time a formula's failure is a [`SizeError`] value. In `const` evaluation there is
//! no caller to hand it to, so each formula unwraps its checked arithmetic here and panics
//! with a message the derive wrote naming the buffer and the formula: under const evaluation
//! that panic is the compile error.

use crate::checked::CheckedArith;
use crate::error::SizeError;

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

/// The final size, as `__private::finish` at run time: at least `floor` bytes, and not 0
/// unless the buffer is gated (`zero_msg` otherwise).
pub const fn finish(bytes: usize, floor: usize, gated: bool, zero_msg: &'static str) -> usize {
    let bytes = if bytes > floor { bytes } else { floor };
    if bytes == 0 && !gated {
        panic!("{}", zero_msg)
    }
    bytes
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

/// The check behind `assert_fits!`: a compile error naming `what`, the budget, the total,
/// the overshoot and the three largest buffers the total counts when `total > budget`. Each
/// buffer is `(name, bytes, tracked)`; an untracked buffer is allocated but not in the total,
/// so it is never blamed: the untracked bytes are said apart.
pub const fn fits(
    what: &str,
    buffers: &[(&'static str, usize, bool)],
    total: usize,
    budget: usize,
) {
    if total <= budget {
        return;
    }
    let mut m = Message::new()
        .text(what)
        .text(" does not fit its budget: total_bytes ")
        .bytes(total)
        .text(" > budget ")
        .bytes(budget)
        .text(", ")
        .bytes(total - budget)
        .text(" over; largest buffers:");
    // The three largest tracked ones, by a selection that skips those already listed.
    let mut shown = [usize::MAX; 3];
    let mut rank = 0;
    while rank < 3 {
        let mut best = usize::MAX;
        let mut i = 0;
        while i < buffers.len() {
            let taken = shown[0] == i || shown[1] == i || shown[2] == i;
            if buffers[i].2 && !taken && (best == usize::MAX || buffers[i].1 > buffers[best].1) {
                best = i;
            }
            i += 1;
        }
        if best == usize::MAX {
            break;
        }
        shown[rank] = best;
        m = m
            .text(if rank == 0 { " " } else { ", " })
            .text("`")
            .text(buffers[best].0)
            .text("` ")
            .bytes(buffers[best].1);
        rank += 1;
    }
    let mut untracked = 0usize;
    let mut i = 0;
    while i < buffers.len() {
        if !buffers[i].2 {
            untracked = untracked.saturating_add(buffers[i].1);
        }
        i += 1;
    }
    if untracked > 0 {
        m = m
            .text("; untracked buffers (allocated, not in the total): ")
            .bytes(untracked);
    }
    m.panic()
}

/// The check behind `assert_fits!(.., shared_budget = ..)`: a compile error naming `what`,
/// the budget, the shared slab, the overshoot, the lower bound and the phase that sets it when
/// the shared slab does not fit.
pub const fn fits_shared(what: &str, shared: crate::SharedBytes, budget: usize) {
    if shared.footprint <= budget {
        return;
    }
    let mut m = Message::new()
        .text(what)
        .text(" does not fit its shared budget: shared slab ")
        .bytes(shared.footprint)
        .text(" > budget ")
        .bytes(budget)
        .text(", ")
        .bytes(shared.footprint - budget)
        .text(" over; lower bound ")
        .bytes(shared.lower_bound)
        .text(" (no placement needs less)");
    if let Some(phase) = shared.fullest_phase {
        m = m
            .text(", set by the buffers live in phase `")
            .text(phase)
            .text("`");
    }
    m.panic()
}

/// Asserts at compile time that a const-sized arena fits byte budgets: `budget` for
/// `total_bytes` (the tracked buffers, what a preflight reserves), `shared_budget` for the
/// shared slab (`AllocOptions::shared()`: buffers of disjoint phases share bytes, every
/// buffer counted, tracked or not), or both. On failure the build stops with an error naming
/// the label, the budget, the figure, how far over it is and who is to blame: the three
/// largest tracked buffers (and the untracked bytes apart), or the shared slab's lower bound
/// and the phase that sets it. `sizes` is a value of an arena's sizes struct computed by the
/// const path (`#[arena(const)]`: `Sizes::const_from_config` / `const_from_inputs`).
///
/// The shared slab is planned in const evaluation by the run-time planner's own code
/// (`SharedPlan::new`), so the figure checked is the bytes `allocate` takes, not a bound.
///
/// ```
/// use arena_runtime::{dtype::bf16, Arena, DevicePtr};
///
/// pub struct Dims {
///     pub hidden: usize,
///     pub vocab: usize,
/// }
/// pub const DIMS: Dims = Dims { hidden: 4096, vocab: 128_256 };
///
/// #[derive(Arena)]
/// #[arena(const, inputs(dims: &Dims, m: usize), phases(layers, lm_head))]
/// pub struct Step {
///     #[buffer(shape = [m, dims.hidden])]
///     pub hidden: DevicePtr<bf16>,
///     #[buffer(shape = [m, 3 * dims.hidden], phase = layers)]
///     pub qkv: DevicePtr<bf16>,
///     #[buffer(shape = [m, dims.vocab], phase = lm_head)]
///     pub logits: DevicePtr<f32>,
/// }
///
/// const AT_8K: StepSizes = StepSizes::const_from_config(&DIMS, 8192);
/// arena_runtime::assert_fits!("step at M = 8192", AT_8K, budget = 4300 << 20);
/// arena_runtime::assert_fits!("step at M = 8192", AT_8K, shared_budget = 4100 << 20);
/// // qkv and logits never live together: the shared slab is hidden + logits.
/// assert_eq!(AT_8K.shared_bytes().footprint, AT_8K.hidden + AT_8K.logits);
/// assert_eq!(AT_8K.shared_bytes().fullest_phase, Some("lm_head"));
/// ```
#[macro_export]
macro_rules! assert_fits {
    ($what:expr, $sizes:expr, budget = $budget:expr $(,)?) => {
        // `allow(dead_code)` makes the item a root of rustc's dead-code pass, so a constant
        // used only in a budget counts as used (Rust 1.88, the minimum, does not visit `const _`
        // bodies otherwise and reports such a constant as never used; 1.95 does).
        #[allow(dead_code)]
        const _: () = {
            let sizes = $sizes;
            $crate::__private::konst::fits(
                $what,
                &sizes.sizes_with_tracking(),
                sizes.total_bytes(),
                $budget,
            )
        };
    };
    ($what:expr, $sizes:expr, shared_budget = $budget:expr $(,)?) => {
        #[allow(dead_code)]
        const _: () = {
            let sizes = $sizes;
            $crate::__private::konst::fits_shared($what, sizes.shared_bytes(), $budget)
        };
    };
    ($what:expr, $sizes:expr, budget = $budget:expr, shared_budget = $shared:expr $(,)?) => {
        $crate::assert_fits!($what, $sizes, budget = $budget);
        $crate::assert_fits!($what, $sizes, shared_budget = $shared);
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: CheckedArith = CheckedArith::new("buf");

    #[test]
    fn values_unwrap_or_convert() {
        assert_eq!(Konst(7usize).get("m"), 7);
        assert_eq!(Konst(7u32).get("m"), 7);
        assert_eq!(Konst(7u64).get("m"), 7);
        assert_eq!(Konst(F.mul(3, 4)).get("m"), 12);
        assert_eq!(Konst(F.mul(3, 4)).into_result(F), Ok(12));
        assert_eq!(Konst(5u64).into_result(F), Ok(5));
        assert_eq!(Konst(7usize).into_result(F), Ok(7));
        assert_eq!(Konst(7u32).into_result(F), Ok(7));
        if usize::BITS == 64 {
            // Every u64 is a usize here: the largest converts, it does not fail.
            assert_eq!(Konst(u64::MAX).get("m"), usize::MAX);
            assert_eq!(Konst(u64::MAX).into_result(F), Ok(usize::MAX));
        }
        assert_eq!(finish(0, 256, false, "z"), 256);
        assert_eq!(finish(0, 0, true, "z"), 0);
        assert_eq!(total(&[1, 2, 4], &[true, false, true], "t"), 5);
    }

    #[test]
    #[should_panic(expected = "buffer `x` = `m * 2`: 18446744073709551615 * 2 overflows usize")]
    fn a_failed_formula_panics_with_its_message_and_figures() {
        if usize::BITS != 64 {
            panic!("buffer `x` = `m * 2`: 18446744073709551615 * 2 overflows usize");
        }
        Konst(F.mul(usize::MAX, 2)).get("buffer `x` = `m * 2`");
    }

    #[test]
    #[should_panic(expected = "buffer `z` is not gated but its formula gives 0 bytes")]
    fn an_ungated_zero_panics() {
        finish(
            0,
            0,
            false,
            "buffer `z` is not gated but its formula gives 0 bytes",
        );
    }

    #[test]
    fn a_blown_budget_names_the_total_and_the_largest_buffers() {
        let named = [
            ("a", 10, true),
            ("b", 300, true),
            ("c", 20, true),
            ("d", 200, true),
        ];
        fits("m", &named, 530, 1000);
        let err =
            std::panic::catch_unwind(|| fits("model at M = 8", &named, 530, 500)).unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        assert_eq!(
            msg,
            "model at M = 8 does not fit its budget: total_bytes 530 B (0.0 MiB) > budget 500 B \
             (0.0 MiB), 30 B (0.0 MiB) over; largest buffers: `b` 300 B (0.0 MiB), `d` 200 B \
             (0.0 MiB), `c` 20 B (0.0 MiB)"
        );
    }

    /// An untracked buffer is not in the total, so it is never blamed for blowing the
    /// budget, however large: its bytes are said apart.
    #[test]
    fn a_blown_budget_blames_only_buffers_the_total_counts() {
        let mib = 1 << 20;
        let buffers = [
            ("rope_cos_sin", 512 * mib, false),
            ("hidden", 300 * mib, true),
            ("qkv", 128 * mib + mib / 2, true),
        ];
        let total = 300 * mib + 128 * mib + mib / 2;
        let err = std::panic::catch_unwind(|| fits("vlm", &buffers, total, 256 * mib)).unwrap_err();
        assert_eq!(
            err.downcast_ref::<String>().unwrap(),
            "vlm does not fit its budget: total_bytes 449314816 B (428.5 MiB) > budget 268435456 \
             B (256.0 MiB), 180879360 B (172.5 MiB) over; largest buffers: `hidden` 314572800 B \
             (300.0 MiB), `qkv` 134742016 B (128.5 MiB); untracked buffers (allocated, not in the total): 536870912 B \
             (512.0 MiB)"
        );
    }

    #[test]
    fn unwrap_size_gives_the_value_or_the_errors_message() {
        assert_eq!(unwrap_size("t", Ok(96)), 96);
        let overflow = F.mul(usize::MAX, 2);
        let err =
            std::panic::catch_unwind(|| unwrap_size("`T::const_bytes`", overflow)).unwrap_err();
        assert_eq!(
            err.downcast_ref::<String>().unwrap(),
            &format!(
                "`T::const_bytes`: buffer `buf`: {} * 2 overflows usize",
                usize::MAX
            )
        );
        let zero =
            std::panic::catch_unwind(|| unwrap_size("z", Err(SizeError::Zero { buffer: "ids" })))
                .unwrap_err();
        assert_eq!(
            zero.downcast_ref::<String>().unwrap(),
            "z: buffer `ids` is not gated but its formula gives 0 bytes"
        );
    }

    fn text_of(m: &Message) -> &str {
        let (text, _) = m.buf.split_at(m.len);
        core::str::from_utf8(text).unwrap()
    }

    #[test]
    fn a_full_message_cuts_at_a_whole_character() {
        let pad = "a".repeat(Message::CAPACITY - 2);
        // "€" is 3 bytes and does not fit in the 2 left; "é" (2) does.
        let m = Message::new().text(&pad).text("€");
        assert_eq!(text_of(&m), pad);
        let m = Message::new().text(&pad).text("é€");
        assert_eq!(text_of(&m), format!("{pad}é"));
        let m = m.text("x").number(42);
        assert_eq!(m.len, Message::CAPACITY, "nothing past the capacity");
        let three = "a".repeat(Message::CAPACITY - 3);
        assert_eq!(
            text_of(&Message::new().text(&three).text("€")),
            format!("{three}€")
        );
        let long = Message::new().text(&"b".repeat(Message::CAPACITY + 10));
        assert_eq!(text_of(&long).len(), Message::CAPACITY);
    }

    #[test]
    fn a_blown_budget_lists_what_there_is_and_ties_in_field_order() {
        let err =
            std::panic::catch_unwind(|| fits("m", &[("a", 300, true), ("b", 300, true)], 600, 100))
                .unwrap_err();
        assert_eq!(
            err.downcast_ref::<String>().unwrap(),
            "m does not fit its budget: total_bytes 600 B (0.0 MiB) > budget 100 B (0.0 MiB), \
             500 B (0.0 MiB) over; largest buffers: `a` 300 B (0.0 MiB), `b` 300 B (0.0 MiB)"
        );
    }

    #[test]
    fn messages_keep_whole_characters_and_numbers() {
        let m = Message::new()
            .text("é ")
            .number(0)
            .text(" ")
            .number(usize::MAX);
        let (text, _) = m.buf.split_at(m.len);
        assert_eq!(
            core::str::from_utf8(text).unwrap(),
            format!("é 0 {}", usize::MAX)
        );
    }
}
