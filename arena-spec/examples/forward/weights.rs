//! The example's weights: computed from one formula that `reference.py` writes again in numpy,
//! checked against that script's fingerprints, and written as the checkpoint the step loads
//! (`config.json` and `model.safetensors` in the names `save_pretrained` writes), which the
//! checkpoint loader then puts into the weight arenas. Chosen here, not the seeds': the
//! formula, the seed and the scales (norm weights around 1, linears 1/sqrt(fan-in), the
//! embedding 0.1 so the tied LM head's logits stay of order 1).

use arena_runtime::dtype::bf16;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

/// The seed both sides use.
pub const SEED: u64 = 20261201;

/// One tensor: its shape and its values, row-major.
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<bf16>,
}

/// Every tensor of a model by its name in transformers' `state_dict`.
pub struct Weights {
    tensors: BTreeMap<String, Tensor>,
}

/// One tensor of the file being written: a shape and a slice of a generated tensor (an
/// expert's matrix of the stacked `state_dict` tensor), turned into bytes as it is written.
struct Stored<'a> {
    shape: Vec<usize>,
    data: &'a [bf16],
}

impl safetensors::View for Stored<'_> {
    fn dtype(&self) -> safetensors::Dtype {
        safetensors::Dtype::BF16
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// The tensor's bytes from where they lie: safetensors stores little-endian, and on a
    /// little-endian host a `bf16`'s in-memory bytes are its bits' (no copy of a GB-sized
    /// checkpoint before it is written).
    #[cfg(target_endian = "little")]
    fn data(&self) -> Cow<'_, [u8]> {
        // SAFETY: `bf16` is `#[repr(transparent)]` over `u16` (`arena_runtime::dtype`), so the
        // slice's `2 · len` bytes are initialised, and `u8` has no alignment to keep.
        let bytes = unsafe {
            std::slice::from_raw_parts(self.data.as_ptr().cast::<u8>(), self.data.len() * 2)
        };
        Cow::Borrowed(bytes)
    }
    #[cfg(not(target_endian = "little"))]
    fn data(&self) -> Cow<'_, [u8]> {
        let bytes = self.data.iter().flat_map(|x| x.to_bits().to_le_bytes());
        Cow::Owned(bytes.collect())
    }
    fn data_len(&self) -> usize {
        self.data.len() * 2
    }
}

impl Weights {
    /// The tensors `names` (with their shapes) computed by the shared formula; `centred`
    /// for a model whose layer norms are zero-centred (`Decoder::centred_norm`).
    pub fn generate(names: &[(String, Vec<usize>)], centred: bool) -> Weights {
        let tensors = names
            .iter()
            .map(|(name, shape)| {
                let data = generate(name, shape, centred);
                (
                    name.clone(),
                    Tensor {
                        shape: shape.clone(),
                        data,
                    },
                )
            })
            .collect();
        Weights { tensors }
    }

    /// The checkpoint's tensors, by their stored names: the `state_dict`'s, except a MoE
    /// layer's stacked experts (`mlp.experts.gate_up_proj`, `[experts, 2 · width, hidden]`;
    /// `mlp.experts.down_proj`, `[experts, hidden, width]`), which `save_pretrained` writes one
    /// matrix an expert (`mlp.experts.{e}.gate_proj.weight`, the first `width` rows of
    /// expert `e`'s, `up_proj` the rest, `down_proj`), as transformers' `conversion_mapping.py`
    /// stacks them back on loading.
    fn stored(&self) -> Vec<(String, Stored<'_>)> {
        let mut out = Vec::new();
        for (name, t) in &self.tensors {
            let Some(prefix) = name
                .strip_suffix(".gate_up_proj")
                .or_else(|| name.strip_suffix(".down_proj"))
                .filter(|p| p.ends_with(".mlp.experts"))
            else {
                out.push((
                    name.clone(),
                    Stored {
                        shape: t.shape.clone(),
                        data: &t.data,
                    },
                ));
                continue;
            };
            let (rows, cols) = (t.shape[1], t.shape[2]);
            for (e, matrix) in t.data.chunks_exact(rows * cols).enumerate() {
                if name.ends_with(".down_proj") {
                    let shape = vec![rows, cols];
                    let data = matrix;
                    out.push((
                        format!("{prefix}.{e}.down_proj.weight"),
                        Stored { shape, data },
                    ));
                } else {
                    let (gate, up) = matrix.split_at(rows / 2 * cols);
                    for (part, data) in [("gate_proj", gate), ("up_proj", up)] {
                        let shape = vec![rows / 2, cols];
                        out.push((
                            format!("{prefix}.{e}.{part}.weight"),
                            Stored { shape, data },
                        ));
                    }
                }
            }
        }
        out
    }

    /// `dir/config.json` (`config`) and `dir/model.safetensors`, the tensors in their stored
    /// names ([`Self::stored`]): the checkpoint `save_pretrained` would write for them.
    pub fn write_checkpoint(&self, dir: &Path, config: &str) -> Result<(), String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let json = dir.join("config.json");
        std::fs::write(&json, config).map_err(|e| format!("{}: {e}", json.display()))?;
        let file = dir.join("model.safetensors");
        let metadata = [("format".to_string(), "pt".to_string())].into();
        safetensors::serialize_to_file(self.stored(), Some(metadata), &file)
            .map_err(|e| format!("{}: {e}", file.display()))
    }

    /// Every tensor against the names, shapes and [`fingerprint`]s `reference.py` wrote in
    /// `path`: the same set of tensors, each the same bits.
    pub fn check(&self, path: &Path) -> Result<(), String> {
        /// One tensor of `<model>.weights.json`.
        #[derive(serde::Deserialize)]
        struct Print {
            name: String,
            shape: Vec<usize>,
            sum: u64,
            weighted: u64,
        }
        #[derive(serde::Deserialize)]
        struct Prints {
            tensors: Vec<Print>,
        }
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let listed: Prints =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if listed.tensors.len() != self.tensors.len() {
            return Err(format!(
                "{} tensors here, {} in {}",
                self.tensors.len(),
                listed.tensors.len(),
                path.display()
            ));
        }
        for p in &listed.tensors {
            let t = self
                .tensors
                .get(&p.name)
                .ok_or(format!("no tensor `{}` here", p.name))?;
            let ours = fingerprint(&t.data);
            if p.shape != t.shape || (p.sum, p.weighted) != ours {
                return Err(format!(
                    "`{}`: shape {:?} fingerprint {ours:?} here, {:?} ({}, {}) in {}",
                    p.name,
                    t.shape,
                    p.shape,
                    p.sum,
                    p.weighted,
                    path.display()
                ));
            }
        }
        Ok(())
    }
}

fn fnv1a64(text: &str) -> u64 {
    text.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3)
    })
}

fn splitmix64(x: u64) -> u64 {
    let z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// (centre, half-width) of the uniform draw for `name`. A zero-centred norm (`centred`:
/// Qwen3.5's `Qwen3_5RMSNorm`, which scales by `1 + w`) is drawn around 0, so it scales by
/// about 1 as the others do; the delta-net's gated norm multiplies by `w` and stays around 1.
fn scale_of(name: &str, shape: &[usize], centred: bool) -> (f64, f64) {
    if name.ends_with("norm.weight") {
        let plain = !centred || name.ends_with("linear_attn.norm.weight");
        (if plain { 1.0 } else { 0.0 }, 0.2)
    } else if name.ends_with("embed_tokens.weight") {
        (0.0, 0.1)
    } else {
        (0.0, 1.0 / (*shape.last().unwrap() as f64).sqrt())
    }
}

/// Element `i` of tensor `name` is `centre + (2u - 1) · half`, `u` the top 24 bits of
/// SplitMix64(`fnv1a64(name) ^ SEED` + i) over 2^24, computed in f64, rounded to f32, then
/// to bf16 (ties to even), exactly as numpy and torch do it in `reference.py`.
pub fn generate(name: &str, shape: &[usize], centred: bool) -> Vec<bf16> {
    let key = fnv1a64(name) ^ SEED;
    let (centre, half) = scale_of(name, shape, centred);
    let n: usize = shape.iter().product();
    (0..n as u64)
        .map(|i| {
            let u = (splitmix64(key.wrapping_add(i)) >> 40) as f64 / (1u64 << 24) as f64;
            bf16::from_f32((centre + (2.0 * u - 1.0) * half) as f32)
        })
        .collect()
}

/// The sum of the bit patterns and their sum weighted by index + 1, both mod 2^64: what
/// `reference.py` writes for each tensor, so the two generators are checked bit for bit.
pub fn fingerprint(data: &[bf16]) -> (u64, u64) {
    data.iter()
        .enumerate()
        .fold((0u64, 0u64), |(sum, weighted), (i, v)| {
            let bits = u64::from(v.to_bits());
            (
                sum.wrapping_add(bits),
                weighted.wrapping_add(bits.wrapping_mul(i as u64 + 1)),
            )
        })
}
