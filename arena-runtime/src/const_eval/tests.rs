//! The const path's arithmetic, messages and budget checks, run at run time.

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
    let z = KonstArith::new("z", "m");
    let mut raw = 9;
    assert_eq!(z.finish("A", 3, 256, false, &mut raw), 256);
    assert_eq!(raw, 3, "the bytes before the floor are kept");
    assert_eq!(z.finish("A", 0, 0, true, &mut raw), 0);
    // The operations unwrap on the spot; a shape keeps its dims.
    assert_eq!(z.max(z.mul(3, 4), 5), 12);
    let mut kept = [0; 3];
    assert_eq!(z.shape(&[2, 3], &mut kept, 4), 24);
    assert_eq!(kept, [2, 3, 0]);
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
#[should_panic(expected = "buffer `x` = `m / d`: 7 / 0 divides by zero")]
fn a_division_by_zero_panics_with_its_formulas_message_and_figures() {
    Konst(F.div(7, 0)).get("buffer `x` = `m / d`");
}

#[test]
#[should_panic(
    expected = "arena `A`, const sizing: buffer `z` is not gated but its formula gives 0 bytes"
)]
fn an_ungated_zero_panics() {
    KonstArith::new("z", "m").finish("A", 0, 0, false, &mut 0);
}

#[test]
#[should_panic(expected = "buffer `x` = `m * 2`: 18446744073709551615 * 2 overflows usize")]
fn a_failed_operation_panics_with_its_formulas_message() {
    if usize::BITS != 64 {
        panic!("buffer `x` = `m * 2`: 18446744073709551615 * 2 overflows usize");
    }
    KonstArith::new("x", "buffer `x` = `m * 2`").mul(usize::MAX, 2);
}

#[test]
fn the_tables_read_the_declarations() {
    use crate::dtype::{bf16, Element};
    use crate::BufferDecl;
    let decls = [
        BufferDecl::new("a", bf16::DTYPE, "[m]", 1, ""),
        BufferDecl::new("b", u8::DTYPE, "7", 0, "").untracked(),
        BufferDecl::new("c", f32::DTYPE, "[m, 2]", 2, "").gated_by("g"),
    ];
    let bytes = [10, 7, usize::MAX];
    assert_eq!(tracked::<3>(&decls), [true, false, true]);
    assert_eq!(
        named(&decls, bytes),
        [("a", 10), ("b", 7), ("c", usize::MAX)]
    );
    assert_eq!(
        with_tracking(&decls, bytes),
        [("a", 10, true), ("b", 7, false), ("c", usize::MAX, true)]
    );
    // Saturating, as the run-time total.
    assert_eq!(tracked_total(&decls, bytes), usize::MAX);
    assert_eq!(tracked_total(&decls, [10, 7, 5]), 15);
    assert!(!decls[1].is_shape && decls[2].gated() && decls[2].elem_size == 4);
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
    let err = std::panic::catch_unwind(|| fits("model at M = 8", &named, 530, 500)).unwrap_err();
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
    let err = std::panic::catch_unwind(|| unwrap_size("`T::const_bytes`", overflow)).unwrap_err();
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
