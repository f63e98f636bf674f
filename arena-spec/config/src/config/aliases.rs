//! A class's `attribute_map`: the common key names read under a family's own spellings
//! ([`FamilyRules::aliases`](super::family::FamilyRules)).

use serde_json::Value;

/// `obj` with each alias's common name added where the file has only its own key (or the key
/// sits in a nested config, which wins); `None` where nothing is added.
pub(super) fn with_aliases(
    obj: &serde_json::Map<String, Value>,
    aliases: &[(&str, &str)],
) -> Option<serde_json::Map<String, Value>> {
    // The file's own key may sit in a nested object, named by a dotted path (DBRX's
    // `attn_config.kv_n_heads`). A nested key wins over the top level's: its class copies it up
    // whatever the top level says (`DbrxConfig.__post_init__`: `num_key_value_heads =
    // attn_config.kv_n_heads`); a plain alias only fills a name the file leaves out.
    let own_value = |own: &str| {
        let mut parts = own.split('.');
        let first = obj.get(parts.next()?)?;
        parts.try_fold(first, |v, part| v.get(part))
    };
    let found: Vec<_> = aliases
        .iter()
        .filter(|(name, own)| own.contains('.') || !obj.contains_key(*name))
        .filter_map(|(name, own)| Some((name, own_value(own)?)))
        .collect();
    if found.is_empty() {
        return None;
    }
    let mut out = obj.clone();
    for (name, value) in found {
        out.insert(name.to_string(), value.clone());
    }
    Some(out)
}
