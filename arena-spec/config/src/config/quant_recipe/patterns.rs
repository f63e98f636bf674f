//! How a recipe's module lists name modules, as vLLM reads each kind of recipe.

use regex::Regex;

/// How a recipe's module list names a module, as vLLM reads each recipe.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Match {
    /// The module's exact name (vLLM's `Fp8Config`: `is_layer_skipped`, `match_mode`
    /// "exact", `quantization/utils/quant_utils.py`: 619–648), its checkpoint's unfused name
    /// or vLLM's fused one.
    Exact,
    /// A substring of the name (AWQ's `modules_to_not_convert`: `is_layer_skipped`,
    /// `match_mode` "substring", `quantization/auto_awq.py`: 289–298).
    Substring,
    /// ModelOpt's: equal, a substring of the name, or an `fnmatch` wildcard (`*` any run of
    /// characters, `?` one): `ModelOptQuantConfigBase.is_layer_excluded`, `modelopt.py`:
    /// 191–226.
    ModelOpt,
    /// compressed-tensors': the exact name, or after `re:` a regular expression matched at
    /// the name's start as Python's `re.match` does (`is_equal_or_regex_match`,
    /// `quantization/utils/config_utils.py`: 432–452).
    CompressedTensors,
}

/// One entry of a recipe's module list, ready to match names.
pub(super) enum Pattern {
    Exact(String),
    Substring(String),
    ModelOpt(String),
    Regex(Regex),
}

impl Pattern {
    /// `entry` read the way `how` reads it; a `re:` entry that is not a regular expression
    /// is an error (vLLM's `re.match` would raise).
    pub(super) fn new(entry: &str, how: Match) -> Result<Pattern, regex::Error> {
        Ok(match how {
            Match::Exact => Pattern::Exact(entry.to_string()),
            Match::Substring => Pattern::Substring(entry.to_string()),
            Match::ModelOpt => Pattern::ModelOpt(entry.to_string()),
            Match::CompressedTensors => match entry.strip_prefix("re:") {
                Some(re) => Pattern::Regex(Regex::new(&format!("^(?:{re})"))?),
                None => Pattern::Exact(entry.to_string()),
            },
        })
    }

    /// Whether this entry names the module `name`.
    pub(super) fn names(&self, name: &str) -> bool {
        match self {
            Pattern::Exact(p) => p == name,
            Pattern::Substring(p) => name.contains(p.as_str()),
            Pattern::ModelOpt(p) => {
                p == name || name.contains(p.as_str()) || wildcard(p.as_bytes(), name.as_bytes())
            }
            Pattern::Regex(r) => r.is_match(name),
        }
    }
}

/// `fnmatch` without character classes (no recipe uses them): iterative, with one backtrack
/// point, so a hostile pattern costs at most `pattern × name` steps.
fn wildcard(p: &[u8], n: &[u8]) -> bool {
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == b'?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == b'*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::{wildcard, Match, Pattern};

    #[test]
    fn names_match_as_vllm_matches_them() {
        let w = |p: &str, n: &str| wildcard(p.as_bytes(), n.as_bytes());
        assert!(w(
            "model.layers.*.self_attn*",
            "model.layers.12.self_attn.q_proj"
        ));
        assert!(w("model.layers.0*", "model.layers.0.mlp.gate_up_proj"));
        assert!(!w("model.layers.0*", "model.layers.10.mlp.gate_up_proj"));
        assert!(w("*.attn.*", "layers.3.attn.wq_a"));
        assert!(!w("*.attn.*", "model.layers.3.self_attn.q_proj"));
        assert!(w("mtp.layers.?.*", "mtp.layers.0.mlp"));
        // A hostile pattern ends in pattern × name steps.
        let stars = "*a".repeat(200);
        assert!(!w(&stars, &"b".repeat(2000)));
        // Exact for FP8's lists; ModelOpt's also by substring; compressed-tensors' by `re:`
        // anchored at the start.
        let p = |entry: &str, how| Pattern::new(entry, how).unwrap();
        assert!(!p("gate", Match::Exact).names("model.layers.0.mlp.gate_proj"));
        assert!(p("gate", Match::Substring).names("model.layers.0.mlp.gate_proj"));
        let gate = p("model.layers.1.mlp.gate", Match::ModelOpt);
        assert!(gate.names("model.layers.1.mlp.gate_proj"));
        assert!(!gate.names("model.layers.10.mlp.gate_proj"));
        let attn = p("re:.*self_attn.*", Match::CompressedTensors);
        assert!(attn.names("language_model.model.layers.3.self_attn.q_a_proj"));
        let dense = p(
            r"re:.*mlp\.(gate|up|gate_up|down)_proj.*",
            Match::CompressedTensors,
        );
        assert!(dense.names("model.layers.0.mlp.gate_up_proj"));
        assert!(!dense.names("model.layers.5.mlp.experts"));
        assert!(!p("re:self_attn", Match::CompressedTensors).names("model.layers.0.self_attn"));
        assert!(Pattern::new("re:(", Match::CompressedTensors).is_err());
    }
}
