//! Reading a checkpoint's config files: a `config.json` (or a checkpoint directory's), ModelOpt's
//! `hf_quant_config.json` beside it, or their texts; bounded reads, then `load.rs`.

use super::error::{ConfigError, MAX_CONFIG_BYTES};
use super::levers::Levers;
use super::load::from_value;
use super::ModelConfig;
use std::path::Path;

impl ModelConfig {
    /// Reads a `config.json`, or a checkpoint directory's (`DIR/config.json`), with the
    /// levers the process environment sets (`METRALE_*` and `ARENA_SCRATCH_BY_FORMAT`: [`Levers::from_env`](super::levers::Levers::from_env), read once, here): the path an engine
    /// takes, so the arena agrees with a loader that installs lever-dependent weights
    /// (`ssm_rowwise_w_bf16`, the Q2 scratch). An invalid lever value is an error naming the
    /// variable. [`Self::load_with_levers`] takes them explicitly instead (tests, callers
    /// that decide the levers themselves).
    ///
    /// ModelOpt's `hf_quant_config.json` beside the `config.json` is read too, where the
    /// `config.json` has no `quantization_config` (as vLLM reads it): its recipe prices the
    /// weights ([`ModelConfig::weight_formats`]).
    ///
    /// Each file must be a regular file of at most [`MAX_CONFIG_BYTES`]; anything else (a
    /// pipe, a device, a checkpoint shard given by mistake) is refused before a byte is read
    /// past that bound.
    pub fn load(path: impl AsRef<Path>) -> Result<ModelConfig, ConfigError> {
        Self::load_with_levers(path, Levers::from_env()?)
    }

    /// [`Self::load`] with the levers given: the process environment is not read.
    pub fn load_with_levers(
        path: impl AsRef<Path>,
        levers: Levers,
    ) -> Result<ModelConfig, ConfigError> {
        let given = path.as_ref();
        let path = match given.is_dir() {
            true if given.join("config.json").exists() => given.join("config.json"),
            true => {
                return Err(ConfigError::NotAFile {
                    path: given.into(),
                    kind: "a directory without a config.json",
                })
            }
            false => given.to_path_buf(),
        };
        let text = super::json::read_bounded(&path)?;
        let side_path = path.with_file_name(SIDE_FILE);
        let side = match side_path.is_file() {
            true => Some(super::json::read_bounded(&side_path)?),
            false => None,
        };
        Self::from_json_strs_with_levers(
            &text,
            side.as_deref().map(|s| (s, side_path.as_path())),
            &path,
            levers,
        )
    }

    /// Parses the text of a `config.json`, with the levers of the process environment (as
    /// [`Self::load`]); `path` names it in errors.
    pub fn from_json_str(text: &str, path: impl AsRef<Path>) -> Result<ModelConfig, ConfigError> {
        Self::from_json_str_with_levers(text, path, Levers::from_env()?)
    }

    /// [`Self::from_json_str`] with the levers given.
    pub fn from_json_str_with_levers(
        text: &str,
        path: impl AsRef<Path>,
        levers: Levers,
    ) -> Result<ModelConfig, ConfigError> {
        Self::from_json_strs_with_levers(text, None, path, levers)
    }

    /// The text of a `config.json` and, where the checkpoint has one, of the
    /// `hf_quant_config.json` beside it (with its path, for errors): what [`Self::load`]
    /// reads from a directory, for a caller that holds the texts (a test, a checkpoint
    /// fetched into memory).
    pub fn from_json_strs_with_levers(
        text: &str,
        hf_quant_config: Option<(&str, &Path)>,
        path: impl AsRef<Path>,
        levers: Levers,
    ) -> Result<ModelConfig, ConfigError> {
        let path = path.as_ref();
        for (t, p) in std::iter::once((text, path)).chain(hf_quant_config) {
            if t.len() > MAX_CONFIG_BYTES {
                return Err(ConfigError::TooLarge { path: p.into() });
            }
        }
        let value = super::json::parse(text, path)?;
        let side = match hf_quant_config {
            Some((t, p)) => Some((super::json::parse(t, p)?, p)),
            None => None,
        };
        let mut config = from_value(&value, path, side.as_ref().map(|(v, p)| (v, *p)), None)?;
        config.levers = levers;
        Ok(config)
    }
}

/// ModelOpt's side file, beside `config.json` in the checkpoints it made before 0.31.
const SIDE_FILE: &str = "hf_quant_config.json";
