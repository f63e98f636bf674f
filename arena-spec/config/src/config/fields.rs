//! Reading the typed fields of one JSON object (a config's top level or its
//! `text_config`), each error naming the file and the key as the file spells it.

use super::error::ConfigError;
use serde_json::{Map, Value};
use std::path::Path;

/// Reads fields of one JSON object with errors naming the file and the field.
pub(crate) struct Fields<'a> {
    pub path: &'a Path,
    pub obj: &'a Map<String, Value>,
    /// `text_config.` for nested text models, so errors name the field as the file has it.
    pub prefix: &'static str,
}

impl<'a> Fields<'a> {
    fn name(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    pub fn invalid(&self, key: &str, reason: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.into(),
            field: self.name(key),
            reason: reason.into(),
        }
    }

    pub fn missing(&self, key: &str) -> ConfigError {
        ConfigError::Missing {
            path: self.path.into(),
            field: self.name(key),
        }
    }

    /// A non-negative integer dimension, `None` when absent or null.
    pub fn opt_dim(&self, key: &str, max: usize) -> Result<Option<usize>, ConfigError> {
        let Some(v) = self.obj.get(key) else {
            return Ok(None);
        };
        if v.is_null() {
            return Ok(None);
        }
        if let Some(literal) = super::json::non_finite(v) {
            return Err(self.invalid(
                key,
                format!(
                    "is {}, but must be a finite whole number",
                    super::json::spoken(literal)
                ),
            ));
        }
        let n = match v {
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    u
                } else if n.as_i64().is_some_and(|i| i < 0) {
                    return Err(self.invalid(key, format!("is {n}, but must not be negative")));
                } else {
                    // `u64::MAX as f64` is 2^64, one past the largest u64: a value there or
                    // above is named as written, not as what a saturating cast makes of it.
                    match n.as_f64() {
                        Some(f) if f >= u64::MAX as f64 => {
                            return Err(self.invalid(
                                key,
                                format!("is {n}, larger than the largest supported value {max}"),
                            ))
                        }
                        Some(f) if f.fract() == 0.0 && f >= 0.0 => f as u64,
                        _ => {
                            return Err(
                                self.invalid(key, format!("is {n}, but must be a whole number"))
                            )
                        }
                    }
                }
            }
            other => {
                return Err(self.invalid(key, format!("must be a number, not {}", json_kind(other))))
            }
        };
        match usize::try_from(n) {
            Ok(n) if n <= max => Ok(Some(n)),
            _ => Err(self.invalid(
                key,
                format!("is {n}, larger than the largest supported value {max}"),
            )),
        }
    }

    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        match self.obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.invalid(
                key,
                format!("must be true or false, not {}", json_kind(other)),
            )),
        }
    }

    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>, ConfigError> {
        match self.obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v @ Value::String(s)) if super::json::non_finite(v).is_none() => Ok(Some(s)),
            Some(other) => {
                Err(self.invalid(key, format!("must be a string, not {}", json_kind(other))))
            }
        }
    }
}

pub(crate) fn json_kind(v: &Value) -> &'static str {
    if super::json::non_finite(v).is_some() {
        return "a non-finite number";
    }
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
