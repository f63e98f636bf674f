//! Reading the text of a `config.json` the way the reference reads it: a regular file,
//! bounded in size, parsed as Python's `json` parses it.
//!
//! Hugging Face configs are written and read by Python's `json` module, which accepts three
//! literals strict JSON lacks: `NaN`, `Infinity` and `-Infinity` (NVIDIA's Nemotron-H files
//! ship `"time_step_limit": [0.0, Infinity]`). `serde_json` rejects them, and a `Value`
//! cannot hold a non-finite number, so before parsing each such literal outside a string is
//! replaced by a marker string ([`non_finite`] recognises it): a file loads exactly when
//! Python would load it, and a non-finite value in a key that sizes something is an error
//! naming that key (the field readers in `fields.rs` check for the marker).
//!
//! A syntax error names its position once, in the file as written (the replacements are
//! mapped back), and the key path it sits in (`text_config.rope_scaling.factor`).

use super::error::{ConfigError, MAX_CONFIG_BYTES};
use serde_json::Value;
use std::path::Path;

/// Prefix of the marker strings standing for non-finite numbers. It starts with a control
/// character, which a JSON string can only hold escaped, so no config carries it by accident.
const MARK: &str = "\u{1}non-finite:";

/// The Python literal (`NaN`, `Infinity`, `-Infinity`) a value stands for, if it is one.
pub(crate) fn non_finite(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => s.strip_prefix(MARK),
        _ => None,
    }
}

/// A non-finite value as an error says it: the Python literal as written, or a number too
/// large for a double with what Python makes of it (`1e400 (infinity, as Python reads it)`).
pub(crate) fn spoken(literal: &str) -> String {
    if literal.starts_with(|c: char| c.is_ascii_digit() || c == '-') && literal != "-Infinity" {
        format!("{literal} (infinity, as Python reads it)")
    } else {
        literal.to_string()
    }
}

/// Parses a config's text; `path` names it in errors.
pub(crate) fn parse(text: &str, path: &Path) -> Result<Value, ConfigError> {
    let (json, edits) = replace_non_finite(text);
    serde_json::from_str(&json).map_err(|e| {
        let (line, column) = original_position(text, &json, &edits, e.line(), e.column());
        // serde_json says "column 0" for the newline ending the line before: name that
        // newline's own position instead.
        let (line, column) = match (line, column) {
            (l, 0) if l > 1 => (l - 1, text.lines().nth(l - 2).map_or(0, str::len) + 1),
            other => other,
        };
        let message = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = message
            .strip_suffix(&suffix)
            .unwrap_or(&message)
            .to_string();
        let offset = byte_offset(text, line, column);
        ConfigError::Json {
            path: path.into(),
            line,
            column,
            key: key_path_at(text, offset),
            message,
        }
    })
}

/// The text of a config file: a regular file, read up to `MAX_CONFIG_BYTES`.
pub(crate) fn read_bounded(path: &Path) -> Result<String, ConfigError> {
    use std::io::Read;
    let io = |source| ConfigError::Io {
        path: path.into(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(|source| {
        // A link that loops or points nowhere: say so, not just the OS's errno text.
        match std::fs::symlink_metadata(path) {
            Ok(link) if link.file_type().is_symlink() => io(std::io::Error::new(
                source.kind(),
                format!("a symbolic link that does not resolve to a file ({source})"),
            )),
            _ => io(source),
        }
    })?;
    if !meta.is_file() {
        return Err(ConfigError::NotAFile {
            path: path.into(),
            kind: file_kind(&meta.file_type()),
        });
    }
    if meta.len() > MAX_CONFIG_BYTES as u64 {
        return Err(ConfigError::TooLarge { path: path.into() });
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge { path: path.into() });
    }
    // Python's `json` refuses a byte-order mark ("Unexpected UTF-8 BOM"), and transformers
    // reads configs through it, so this does too, in words rather than as a syntax error.
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "starts with a UTF-8 byte-order mark, which Python's json (and so transformers) \
             refuses: save it without one",
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        ))
    })
}

/// What a non-regular file is, in words.
fn file_kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a named pipe";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// One replacement: at `at` in the original text, `old` bytes became `new` bytes.
#[derive(Debug, Clone, Copy)]
struct Edit {
    at: usize,
    old: usize,
    new: usize,
}

/// The length of the JSON number at the start of `bytes` (`-?digits[.digits][e[+-]digits]`),
/// 0 if none starts there.
fn number_len(bytes: &[u8]) -> usize {
    let digits = |from: usize| {
        from + bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let mut i = usize::from(bytes.first() == Some(&b'-'));
    let end = digits(i);
    if end == i {
        return 0;
    }
    i = end;
    if bytes.get(i) == Some(&b'.') {
        i = digits(i + 1);
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(i + 1), Some(b'+' | b'-')));
        let end = digits(i + 1 + sign);
        if end > i + 1 + sign {
            i = end;
        }
    }
    i
}

/// The text with each non-finite literal outside a string turned into a marker string: the
/// Python literals, and numbers too large for a double (`1e400`), which Python's `json`
/// reads as infinities and `serde_json` refuses. The marker keeps the text as written.
fn replace_non_finite(text: &str) -> (String, Vec<Edit>) {
    const LITERALS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut edits = Vec::new();
    let mut in_string = false;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        // A literal starts a token: the byte before it is not part of a word or number.
        let starts_token =
            i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.');
        let literal = LITERALS.iter().find(|lit| {
            starts_token
                && bytes[i..].starts_with(lit.as_bytes())
                && !bytes
                    .get(i + lit.len())
                    .is_some_and(|c| c.is_ascii_alphanumeric())
        });
        // A number that overflows a double stands for ±infinity, as in Python.
        let overflow = match (starts_token, literal) {
            (true, None) => {
                let len = number_len(&bytes[i..]);
                let token = &text[i..i + len];
                (len > 0 && token.parse::<f64>().is_ok_and(f64::is_infinite)).then_some(token)
            }
            _ => None,
        };
        match literal.copied().or(overflow) {
            Some(lit) => {
                out.push_str(&text[copied..i]);
                let marker = format!("\"\\u0001non-finite:{lit}\"");
                edits.push(Edit {
                    at: i,
                    old: lit.len(),
                    new: marker.len(),
                });
                out.push_str(&marker);
                i += lit.len();
                copied = i;
            }
            None => i += number_len(&bytes[i..]).max(1),
        }
    }
    out.push_str(&text[copied..]);
    (out, edits)
}

/// Byte offset of a 1-based line and column (serde_json counts columns in bytes).
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (line_start + column.saturating_sub(1)).min(text.len())
}

/// Maps a position in the edited text back to the original text.
fn original_position(
    original: &str,
    edited: &str,
    edits: &[Edit],
    line: usize,
    column: usize,
) -> (usize, usize) {
    if edits.is_empty() {
        return (line, column);
    }
    let mut at = byte_offset(edited, line, column);
    let mut shift = 0usize;
    for e in edits {
        let start = e.at + shift;
        if at < start {
            break;
        }
        if at < start + e.new {
            at = start; // inside a marker: point at the literal
            break;
        }
        shift = shift + e.new - e.old;
    }
    let at = at.saturating_sub(shift).min(original.len());
    let before = &original.as_bytes()[..at];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = at
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    (line, column)
}

/// The key path (`a.b[3].c`) of the value being read at byte `offset`, if any.
fn key_path_at(text: &str, offset: usize) -> Option<String> {
    enum Frame {
        Object { key: Option<String>, in_value: bool },
        Array { index: usize },
    }
    let bytes = &text.as_bytes()[..offset.min(text.len())];
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                // A key counts once it is closed: the error may be inside an unclosed one.
                let closed = i < bytes.len();
                if let (
                    true,
                    Some(Frame::Object {
                        key,
                        in_value: false,
                    }),
                ) = (closed, stack.last_mut())
                {
                    *key = Some(printable(&String::from_utf8_lossy(&bytes[start..i])));
                }
            }
            b'{' => stack.push(Frame::Object {
                key: None,
                in_value: false,
            }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b':' => {
                if let Some(Frame::Object { in_value, .. }) = stack.last_mut() {
                    *in_value = true;
                }
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { key, in_value }) => {
                    *key = None;
                    *in_value = false;
                }
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object { key: Some(key), .. } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Object { key: None, .. } => break,
            Frame::Array { index } => path.push_str(&format!("[{index}]")),
        }
    }
    (!path.is_empty()).then_some(path)
}

/// A key as it can be shown on one line: control characters escaped.
fn printable(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text, Path::new("c.json")).unwrap_err().to_string()
    }

    #[test]
    fn non_finite_literals_load_as_python_loads_them() {
        let v = parse(
            r#"{"a": [0.0, Infinity], "b": -Infinity, "c": NaN, "d": "NaN Infinity", "e": 1}"#,
            Path::new("c.json"),
        )
        .unwrap();
        assert_eq!(non_finite(&v["a"][1]), Some("Infinity"));
        assert_eq!(non_finite(&v["b"]), Some("-Infinity"));
        assert_eq!(non_finite(&v["c"]), Some("NaN"));
        assert_eq!(v["d"], "NaN Infinity", "strings are left alone");
        assert_eq!(non_finite(&v["d"]), None);
        assert_eq!(v["e"], 1);
    }

    #[test]
    fn numbers_beyond_a_double_are_infinities_as_in_python() {
        let v = parse(
            r#"{"a": 1e400, "b": [-2.5E+999, 1e308, 12], "c": "1e400", "d": 0.5e-400}"#,
            Path::new("c.json"),
        )
        .unwrap();
        assert_eq!(non_finite(&v["a"]), Some("1e400"));
        assert_eq!(spoken("1e400"), "1e400 (infinity, as Python reads it)");
        assert_eq!(non_finite(&v["b"][0]), Some("-2.5E+999"));
        assert_eq!(v["b"][1], 1e308, "a double's range is left alone");
        assert_eq!(v["b"][2], 12);
        assert_eq!(v["c"], "1e400", "strings are left alone");
        assert_eq!(v["d"], 0.0, "an underflow is zero, as in Python");
        // A syntax error after the replacement is still placed in the file as written.
        assert!(
            err("{\"a\": 1e400,\n \"b\": }").contains("line 2"),
            "{}",
            err("{\"a\": 1e400,\n \"b\": }")
        );
    }

    #[test]
    fn words_that_merely_contain_a_literal_stay_errors() {
        assert!(parse(r#"{"a": Infinityx}"#, Path::new("c.json")).is_err());
        assert!(parse(r#"{"a": -NaN}"#, Path::new("c.json")).is_err());
        assert!(parse(r#"{"a": nan}"#, Path::new("c.json")).is_err());
    }

    #[test]
    fn a_syntax_error_names_its_position_once_and_its_key() {
        let e = err("{\n  \"text_config\": {\n    \"hidden_size\": 4096,,\n  }\n}");
        assert_eq!(
            e,
            "c.json: invalid JSON at line 3, column 25 (in `text_config`): key must be a string"
        );
        let e = err("{\n  \"text_config\": {\n    \"hidden_size\": 40x96\n  }\n}");
        assert!(e.contains("(in `text_config.hidden_size`)"), "{e}");
        assert_eq!(e.matches("line").count(), 1, "{e}");
    }

    #[test]
    fn an_error_inside_an_unclosed_key_names_the_object_on_one_line() {
        // Found by the fuzzer: the unclosed key ran into the next line.
        let e = err("{\n  \"a\": {\n  \"norm 30,\n \"b\": 1\n}}");
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains("(in `a`)"), "{e}");
        let e = err("{\"x\\u000ay\": tru}");
        assert!(e.contains("(in `x\\u000ay`)"), "{e}");
    }

    #[test]
    fn positions_are_those_of_the_file_as_written() {
        // The marker replacing `Infinity` is longer; the error column must not move.
        let with_literal = err(r#"{"t": [0.0, Infinity], "x": tru}"#);
        let same_length = err(r#"{"t": [0.0, 12345678], "x": tru}"#);
        assert_eq!(with_literal, same_length);
        assert!(with_literal.contains("(in `x`)"), "{with_literal}");
        let e = err("{\"l\": [1, 2, x]}");
        assert!(e.contains("(in `l[2]`)"), "{e}");
    }
}
