//! Reading a family's keys: the file's value, else the default the family's configuration
//! class gives it, with the aliases the class reads and the checks every value passes.

use super::error::{ConfigError, MAX_DIM};
use super::family::Family;
use super::fields::{json_kind, Fields};
use serde_json::Value;

/// A family's keys: the file's value, else the family's documented default.
pub(super) struct Keys<'a> {
    pub(super) f: Fields<'a>,
    pub(super) family: Family,
}

impl<'a> Keys<'a> {
    /// The file's value; an absent key takes the family's default, an explicit `null`
    /// stays absent (Python's `None`, as the reference's `int | None` fields read it).
    pub(super) fn dim(&self, key: &str, max: usize) -> Result<Option<usize>, ConfigError> {
        match self.f.obj.get(key) {
            Some(Value::Null) => Ok(None),
            Some(_) => self.f.opt_dim(key, max),
            None => Ok(self.family.default_of(key)),
        }
    }

    /// The first spelling the file has, else the first spelling's default.
    pub(super) fn dim_any(&self, keys: &[&str], max: usize) -> Result<Option<usize>, ConfigError> {
        for key in keys {
            if let Some(v) = self.f.opt_dim(key, max)? {
                return Ok(Some(v));
            }
        }
        Ok(keys.iter().find_map(|key| self.family.default_of(key)))
    }

    /// The Mamba-2 key spellings the family's configuration reads, first wins:
    /// NemotronHConfig takes the `mamba_*` forms over the plain ones; Mamba2Config knows
    /// only the plain ones.
    pub(super) fn mamba_spellings(
        &self,
        plain: &'static str,
        legacy: &'static str,
    ) -> Vec<&'static str> {
        match self.family {
            Family::Mamba2 => vec![plain],
            _ => vec![legacy, plain],
        }
    }

    pub(super) fn dim_or(&self, key: &str, default: usize) -> Result<usize, ConfigError> {
        Ok(self.dim(key, MAX_DIM)?.unwrap_or(default))
    }

    /// A required value that must be > 0; the first spelling the file has is the one
    /// checked, else the family's default.
    pub(super) fn positive_any(&self, keys: &[&str], max: usize) -> Result<usize, ConfigError> {
        let present = keys
            .iter()
            .find(|k| self.f.obj.get(**k).is_some_and(|v| !v.is_null()));
        let key = present.unwrap_or(&keys[0]);
        match self.dim_any(keys, max)? {
            None => Err(self.f.missing(keys[keys.len() - 1])),
            Some(0) => Err(self.f.invalid(key, "is 0, but must be at least 1")),
            Some(n) => Ok(n),
        }
    }

    pub(super) fn positive(&self, key: &str, max: usize) -> Result<usize, ConfigError> {
        self.positive_any(&[key], max)
    }

    /// An array of layer indices (`mlp_only_layers`, `moe_layers`).
    pub(super) fn indices(&self, key: &str) -> Result<Option<Vec<usize>>, ConfigError> {
        let Some(v) = self.f.obj.get(key).filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        let Value::Array(items) = v else {
            return Err(self.f.invalid(
                key,
                format!("must be an array of layer indices, not {}", json_kind(v)),
            ));
        };
        items
            .iter()
            .map(|i| {
                i.as_u64()
                    .and_then(|i| usize::try_from(i).ok())
                    .ok_or_else(|| self.f.invalid(key, "must be an array of layer indices"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// An array of strings (`layer_types`, `layers_block_type`, `mlp_layer_types`).
    pub(super) fn strings(&self, key: &str) -> Result<Option<Vec<&'a str>>, ConfigError> {
        let Some(v) = self.f.obj.get(key).filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        let not_strings = || {
            self.f.invalid(
                key,
                format!("must be an array of strings, not {}", json_kind(v)),
            )
        };
        let Value::Array(items) = v else {
            return Err(not_strings());
        };
        items
            .iter()
            .map(|i| match i {
                Value::String(s) if super::json::non_finite(i).is_none() => Ok(s.as_str()),
                _ => Err(self.f.invalid(key, "must be an array of strings")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}
