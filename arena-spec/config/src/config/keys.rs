//! Reading a family's keys: the file's value, else the default the family's configuration
//! class gives it (its row's `defaults`), with the aliases the class reads and the checks
//! every value passes.

use super::error::{ConfigError, MAX_DIM};
use super::family::{Family, FamilyRules};
use super::fields::{json_kind, Fields};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeSet;

/// A family's keys: the file's value, else the family's documented default.
pub(super) struct Keys<'a> {
    pub(super) f: Fields<'a>,
    pub(super) rules: &'static FamilyRules,
    /// Where given, every key a row's default could stand in for is noted as it is asked
    /// for, present in the file or not (`keys_asked`: each row's defaults must be keys the
    /// loader reads through here).
    pub(super) asked: Option<&'a RefCell<BTreeSet<&'static str>>>,
}

impl<'a> Keys<'a> {
    pub(super) fn new(
        f: Fields<'a>,
        family: Family,
        asked: Option<&'a RefCell<BTreeSet<&'static str>>>,
    ) -> Keys<'a> {
        Keys {
            f,
            rules: family.rules(),
            asked,
        }
    }

    /// The keys of the object under `key` (Kimi-Linear's `linear_attn_config`), read with
    /// the same row; `prefix` (`"linear_attn_config."`) names its fields in errors. `None`
    /// when absent or null.
    pub(super) fn nested(
        &self,
        key: &'static str,
        prefix: &'static str,
    ) -> Result<Option<Keys<'a>>, ConfigError> {
        match self.f.obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(obj)) => Ok(Some(Keys {
                f: Fields {
                    path: self.f.path,
                    obj,
                    prefix,
                },
                rules: self.rules,
                asked: None,
            })),
            Some(other) => Err(self
                .f
                .invalid(key, format!("must be an object, not {}", json_kind(other)))),
        }
    }

    fn note(&self, key: &'static str) {
        if let Some(asked) = self.asked {
            asked.borrow_mut().insert(key);
        }
    }

    /// The row's default for `key`, whatever the file says.
    pub(super) fn default(&self, key: &'static str) -> Option<usize> {
        self.note(key);
        self.rules.default_of(key)
    }

    /// The file's value; an absent key takes the family's default, an explicit `null`
    /// stays absent (Python's `None`, as the reference's `int | None` fields read it).
    pub(super) fn dim(&self, key: &'static str, max: usize) -> Result<Option<usize>, ConfigError> {
        self.note(key);
        match self.f.obj.get(key) {
            Some(Value::Null) => Ok(None),
            Some(_) => self.f.opt_dim(key, max),
            None => Ok(self.rules.default_of(key)),
        }
    }

    /// A boolean key: the file's value; absent or `null`, the row's default (1: true, as a
    /// row's `defaults` hold numbers), else false.
    pub(super) fn flag(&self, key: &'static str) -> Result<bool, ConfigError> {
        self.note(key);
        Ok(match self.f.opt_bool(key)? {
            Some(b) => b,
            None => self.rules.default_of(key).is_some_and(|d| d > 0),
        })
    }

    /// The file's value alone, `None` when absent or `null`: no default stands in.
    pub(super) fn file_dim(&self, key: &'static str) -> Result<Option<usize>, ConfigError> {
        self.f.opt_dim(key, MAX_DIM)
    }

    /// The first spelling the file has, else the first spelling's default.
    pub(super) fn dim_any(
        &self,
        keys: &[&'static str],
        max: usize,
    ) -> Result<Option<usize>, ConfigError> {
        for &key in keys {
            self.note(key);
        }
        for key in keys {
            if let Some(v) = self.f.opt_dim(key, max)? {
                return Ok(Some(v));
            }
        }
        Ok(keys.iter().find_map(|key| self.rules.default_of(key)))
    }

    pub(super) fn dim_or(&self, key: &'static str, default: usize) -> Result<usize, ConfigError> {
        Ok(self.dim(key, MAX_DIM)?.unwrap_or(default))
    }

    /// A required value that must be > 0; the first spelling the file has is the one
    /// checked, else the family's default.
    pub(super) fn positive_any(
        &self,
        keys: &[&'static str],
        max: usize,
    ) -> Result<usize, ConfigError> {
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

    pub(super) fn positive(&self, key: &'static str, max: usize) -> Result<usize, ConfigError> {
        self.positive_any(&[key], max)
    }

    /// A per-layer list of the file's (`layer_types`, `attn_type_list`, a per-layer head
    /// count) has one entry a layer, or the error naming the key and both counts.
    pub(super) fn one_per_layer(
        &self,
        key: &str,
        entries: usize,
        layers: usize,
    ) -> Result<(), ConfigError> {
        if entries == layers {
            return Ok(());
        }
        Err(self.f.invalid(
            key,
            format!("has {entries} entries but num_hidden_layers is {layers}"),
        ))
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
