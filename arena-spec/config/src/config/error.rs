//! What loading a config can fail with, and the bounds a loaded config's values keep.

use super::family::Family;
use std::path::PathBuf;
use thiserror::Error;

/// Largest accepted value of a model dimension (hidden size, heads, head dims, ranks...).
/// Bounding each dimension keeps every width method's product of two dimensions exact.
pub const MAX_DIM: usize = 1 << 20;
/// Largest accepted vocabulary or context length.
pub const MAX_EXTENT: usize = 1 << 24;

/// The largest `config.json` read: far above any real one (the largest vendor files are a
/// few KiB; a multimodal file with every sub-config is under 100 KiB), small enough that a
/// mistyped path to a checkpoint shard or `/dev/zero` costs nothing. Chosen here.
pub const MAX_CONFIG_BYTES: usize = 16 << 20;

/// A config file could not be turned into a `ModelConfig`. Every variant names the file
/// (`path`); `field` is a key as the file spells it, nested ones with their path
/// (`text_config.hidden_size`).
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A directory without a `config.json`, a pipe or a device: refused unread.
    #[error("{path}: is {kind}, not a config file; nothing was read")]
    NotAFile { path: PathBuf, kind: &'static str },
    /// Past [`MAX_CONFIG_BYTES`].
    #[error("{path}: larger than {} MiB, the most a config.json may be; is this a checkpoint, not its config?", MAX_CONFIG_BYTES >> 20)]
    TooLarge { path: PathBuf },
    /// A lever's environment variable could not be read.
    #[error(transparent)]
    Levers(#[from] super::levers::LeverError),
    /// Not JSON (as Python's `json` reads it).
    #[error(
        "{path}: invalid JSON at line {line}, column {column}{}: {message}",
        in_key(key)
    )]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        /// The key path the error sits in (`text_config.rope_scaling.factor`), if any.
        key: Option<String>,
        message: String,
    },
    /// A key the family needs is absent (or null) and its configuration class has no
    /// default for it.
    #[error("{path}: missing field `{field}`")]
    Missing { path: PathBuf, field: String },
    /// A key's value is of the wrong type, out of bounds, or disagrees with another key in a
    /// way the reference would refuse; `reason` says which.
    #[error("{path}: field `{field}` {reason}")]
    Invalid {
        path: PathBuf,
        field: String,
        reason: String,
    },
    /// Neither the file's `model_type`, nor its `architectures[0]`, nor a text model under
    /// one of the wrapper keys is a sized family's (`config/resolve.rs`).
    #[error(
        "{path}: unsupported model_type {model_type:?}{}{}; supported: {}",
        unsupported_class(architecture, *remote_code),
        closest.map(|c| format!("; closest sized family: {c}")).unwrap_or_default(),
        Family::model_types_of(Family::ALL).join(", ")
    )]
    UnsupportedModelType {
        path: PathBuf,
        /// The file's `model_type` (`(none)` where it has none).
        model_type: String,
        /// Its `architectures[0]`, if it lists one.
        architecture: Option<String>,
        /// The file names its own modeling code (`auto_map`): remote code.
        remote_code: bool,
        /// The sized family closest to it (`config::closest_family`): a starting point, not
        /// a size.
        closest: Option<super::closest::Closest>,
    },
}

/// What an unsupported file's class adds to the message.
fn unsupported_class(class: &Option<String>, remote_code: bool) -> String {
    let remote = if remote_code {
        ", its modeling code the vendor's own (auto_map: remote code)"
    } else {
        ""
    };
    match class {
        Some(c) => format!(" (architecture {c:?}, not a class sized here{remote})"),
        None if remote_code => format!(" ({})", &remote[2..]),
        None => String::new(),
    }
}

fn in_key(key: &Option<String>) -> String {
    key.as_ref()
        .map(|k| format!(" (in `{k}`)"))
        .unwrap_or_default()
}
