//! The corpus of broken config files in `bad_configs/`: each is a clear error naming the
//! file and the field, through the library and through the CLI (non-zero exit, one line,
//! no panic). `bad_configs/expected.txt` maps each file to the text its error must contain.

use arena_spec::ModelConfig;
use assert_cmd::Command;
use std::path::PathBuf;

fn corpus() -> Vec<(PathBuf, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bad_configs");
    let expected = std::fs::read_to_string(dir.join("expected.txt")).unwrap();
    let cases: Vec<(PathBuf, String)> = expected
        .lines()
        .map(|l| {
            let (name, text) = l.split_once('\t').unwrap();
            (dir.join(format!("{name}.json")), text.to_string())
        })
        .collect();
    let files = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "json")
        })
        .count();
    assert_eq!(
        files,
        cases.len(),
        "every corpus file has an expected error"
    );
    cases
}

#[test]
fn the_library_names_the_file_and_the_field() {
    for (path, expected) in corpus() {
        let err = ModelConfig::load(&path).expect_err(&format!("{} loaded", path.display()));
        let msg = err.to_string();
        assert!(
            msg.contains(&path.display().to_string()),
            "{msg} does not name the file"
        );
        assert!(
            msg.contains(&expected),
            "{}: `{msg}` does not contain `{expected}`",
            path.display()
        );
        assert!(!msg.contains('\n'), "{msg}");
    }
}

#[test]
fn the_cli_fails_with_one_line_and_no_panic() {
    for (path, expected) in corpus() {
        let out = Command::cargo_bin("arena")
            .unwrap()
            .arg("plan")
            .arg(&path)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{}", path.display());
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert!(stderr.contains(&expected), "{stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("backtrace"),
            "{stderr}"
        );
    }
}

/// The size bound is on the text as given: exactly `MAX_CONFIG_BYTES` is read (and here
/// fails as JSON), one byte more is refused unread.
#[test]
fn a_text_at_the_size_bound_is_read_and_one_byte_more_is_not() {
    use arena_spec::config::MAX_CONFIG_BYTES;
    use arena_spec::{ConfigError, Levers, ModelConfig};
    let at = format!("{{}}{}", " ".repeat(MAX_CONFIG_BYTES - 2));
    assert_eq!(at.len(), MAX_CONFIG_BYTES);
    let err =
        ModelConfig::from_json_str_with_levers(&at, "at.json", Levers::default()).unwrap_err();
    assert!(!matches!(err, ConfigError::TooLarge { .. }), "{err}");
    let over = format!("{at} ");
    let err =
        ModelConfig::from_json_str_with_levers(&over, "over.json", Levers::default()).unwrap_err();
    assert!(matches!(err, ConfigError::TooLarge { .. }), "{err}");
}
