//! The example's weights: computed from one formula that `reference.py` writes again in numpy,
//! or read from the safetensors file that script writes. Chosen here, not the seeds': the
//! formula, the seed and the scales (norm weights around 1, linears 1/sqrt(fan-in), the
//! embedding 0.1 so the tied LM head's logits stay of order 1).

use arena_runtime::dtype::bf16;
use std::collections::BTreeMap;
use std::path::Path;

/// The seed both sides use.
pub const SEED: u64 = 20261201;

/// One tensor: its shape and its values, row-major.
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<bf16>,
}

impl Tensor {
    /// The `[rows, cols]` matrix `index` of a 3-D tensor (an expert's weight), as a slice.
    pub fn matrix(&self, index: usize) -> &[bf16] {
        let per = self.shape[1] * self.shape[2];
        &self.data[index * per..(index + 1) * per]
    }
}

/// Every tensor of a model by its transformers name.
pub struct Weights {
    tensors: BTreeMap<String, Tensor>,
}

impl Weights {
    /// The tensors `names` (with their shapes) computed by the shared formula.
    pub fn generate(names: &[(String, Vec<usize>)]) -> Weights {
        let tensors = names
            .iter()
            .map(|(name, shape)| {
                let data = generate(name, shape);
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

    /// The tensors of a safetensors file (bf16 only, as `reference.py` writes them).
    pub fn read_safetensors(path: &Path) -> Result<Weights, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let header_len = u64::from_le_bytes(
            bytes
                .get(..8)
                .ok_or("shorter than a safetensors header")?
                .try_into()
                .unwrap(),
        ) as usize;
        let header: serde_json::Value =
            serde_json::from_slice(bytes.get(8..8 + header_len).ok_or("header past the end")?)
                .map_err(|e| format!("{}: header: {e}", path.display()))?;
        let data = &bytes[8 + header_len..];
        let mut tensors = BTreeMap::new();
        for (name, entry) in header.as_object().ok_or("header is not an object")? {
            if name == "__metadata__" {
                continue;
            }
            if entry["dtype"] != "BF16" {
                return Err(format!(
                    "{name}: dtype {} (only BF16 is read)",
                    entry["dtype"]
                ));
            }
            let shape: Vec<usize> = serde_json::from_value(entry["shape"].clone())
                .map_err(|e| format!("{name}: shape: {e}"))?;
            let [start, end]: [usize; 2] = serde_json::from_value(entry["data_offsets"].clone())
                .map_err(|e| format!("{name}: data_offsets: {e}"))?;
            let raw = data
                .get(start..end)
                .ok_or(format!("{name}: past the end"))?;
            let values = raw
                .chunks_exact(2)
                .map(|b| bf16::from_bits(u16::from_le_bytes([b[0], b[1]])))
                .collect();
            tensors.insert(
                name.clone(),
                Tensor {
                    shape,
                    data: values,
                },
            );
        }
        Ok(Weights { tensors })
    }

    /// Every tensor, by name (what the GPU backend uploads).
    #[cfg(feature = "cuda")]
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Tensor)> {
        self.tensors.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Each layer's q, k and v projections replaced by one tensor, stacked in that order
    /// (`self_attn.qkv_proj.weight`, `[q + 2·kv width, hidden]`): the step projects into
    /// `qkv_output` with one GEMM, as the seeds lay that buffer out.
    pub fn fuse_qkv(&mut self, layers: usize) {
        for l in 0..layers {
            let p = |s: &str| format!("model.layers.{l}.self_attn.{s}_proj.weight");
            let parts: Vec<Tensor> = ["q", "k", "v"]
                .iter()
                .map(|s| self.tensors.remove(&p(s)).expect("q, k and v projections"))
                .collect();
            let fused = Tensor {
                shape: vec![parts.iter().map(|t| t.shape[0]).sum(), parts[0].shape[1]],
                data: parts.into_iter().flat_map(|t| t.data).collect(),
            };
            self.tensors.insert(p("qkv"), fused);
        }
    }

    /// The tensor `name`; every name the step asks for is one the model has.
    pub fn get(&self, name: &str) -> &Tensor {
        self.tensors
            .get(name)
            .unwrap_or_else(|| panic!("no tensor `{name}` in the weights"))
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

/// (centre, half-width) of the uniform draw for `name`.
fn scale_of(name: &str, shape: &[usize]) -> (f64, f64) {
    if name.ends_with("norm.weight") {
        (1.0, 0.2)
    } else if name.ends_with("embed_tokens.weight") {
        (0.0, 0.1)
    } else {
        (0.0, 1.0 / (*shape.last().unwrap() as f64).sqrt())
    }
}

/// Element `i` of tensor `name` is `centre + (2u - 1) · half`, `u` the top 24 bits of
/// SplitMix64(`fnv1a64(name) ^ SEED` + i) over 2^24, computed in f64, rounded to f32, then
/// to bf16 (ties to even), exactly as numpy and torch do it in `reference.py`.
pub fn generate(name: &str, shape: &[usize]) -> Vec<bf16> {
    let key = fnv1a64(name) ^ SEED;
    let (centre, half) = scale_of(name, shape);
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
