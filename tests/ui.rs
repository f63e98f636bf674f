//! Compile-fail cases: one per message of the derive (and two where rustc reports a
//! mistake inside a formula on the author's token). Re-bless with `TRYBUILD=overwrite`.
//!
//! The `.stderr` files hold the messages of the compiler they were blessed with
//! ([`BLESSED_WITH`]); an older compiler words some of rustc's own notes differently, so under
//! one (the minimum-Rust check in CI) the cases are skipped, saying so. The derive's own
//! messages are the same on every compiler.

/// The Rust version (major, minor) the `.stderr` files were blessed with.
const BLESSED_WITH: (u32, u32) = (1, 95);

/// The (major, minor) of the `rustc` that trybuild will run, as `rustc --version` prints it.
fn rustc_version() -> Option<(u32, u32)> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut numbers = text.split_whitespace().nth(1)?.split('.');
    Some((numbers.next()?.parse().ok()?, numbers.next()?.parse().ok()?))
}

#[test]
fn compile_fail() {
    // An older compiler words some of rustc's notes otherwise: a failure, not a pass, and
    // `.ci/run`'s minimum-version step skips this test by name, saying so.
    if let Some(v) = rustc_version().filter(|v| *v < BLESSED_WITH) {
        panic!(
            "rustc {}.{} is older than {}.{}, whose messages the .stderr files hold",
            v.0, v.1, BLESSED_WITH.0, BLESSED_WITH.1
        );
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
}
