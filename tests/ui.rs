//! Compile-fail cases: one per message of the derive (and two where rustc reports a
//! mistake inside a formula on the author's token). Re-bless with `TRYBUILD=overwrite`.

#[test]
fn compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
}
