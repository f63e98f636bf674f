//! A checkpoint's files: one `.safetensors` file, or the shards a
//! `model.safetensors.index.json` lists, each memory-mapped and its header read (the
//! `safetensors` crate parses and validates it: offsets in order without overlap or gap, the
//! file as long as its header says). No tensor byte is read here.

use super::CheckpointError;
use memmap2::Mmap;
use std::collections::BTreeMap;
use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The index file transformers writes beside a sharded checkpoint.
pub const INDEX_FILE: &str = "model.safetensors.index.json";
/// The file of an unsharded checkpoint.
pub const SINGLE_FILE: &str = "model.safetensors";

/// One tensor as a checkpoint stores it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredTensor {
    /// The shard that holds it (an index into [`Checkpoint::files`]).
    pub file: usize,
    /// Its dtype as the header names it (`BF16`, `F8_E4M3`, `F32`, ...).
    pub dtype: String,
    /// Bytes an element, in bits (4 for `F4`).
    pub bits: usize,
    pub shape: Vec<usize>,
    /// Where its bytes lie in its file (the header's `data_offsets`, past the header).
    pub range: Range<usize>,
}

impl StoredTensor {
    /// Its bytes.
    pub fn bytes(&self) -> usize {
        self.range.len()
    }

    /// Its elements.
    pub fn elements(&self) -> usize {
        self.shape.iter().product()
    }
}

/// A checkpoint opened for loading: its shards mapped and every tensor's header entry.
pub struct Checkpoint {
    files: Vec<PathBuf>,
    maps: Vec<Mmap>,
    tensors: BTreeMap<String, StoredTensor>,
}

impl std::fmt::Debug for Checkpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoint")
            .field("files", &self.files)
            .field("tensors", &self.tensors.len())
            .finish()
    }
}

impl Checkpoint {
    /// Opens `path`: a `.safetensors` file, a `model.safetensors.index.json`, or a
    /// directory holding either (the index first). Every shard the index names must exist
    /// and hold the tensors the index places in it, no more; each header is checked against
    /// its file's length.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, CheckpointError> {
        let path = path.as_ref();
        let (index, single) = if path.is_dir() {
            let index = path.join(INDEX_FILE);
            match index.exists() {
                true => (Some(index), None),
                false => (None, Some(path.join(SINGLE_FILE))),
            }
        } else if path.extension().is_some_and(|e| e == "json") {
            (Some(path.to_path_buf()), None)
        } else {
            (None, Some(path.to_path_buf()))
        };
        let mut out = Checkpoint {
            files: Vec::new(),
            maps: Vec::new(),
            tensors: BTreeMap::new(),
        };
        match (index, single) {
            (Some(index), _) => {
                let map = read_index(&index)?;
                let dir = index.parent().unwrap_or(Path::new("."));
                let mut shards: Vec<&String> = map.values().collect();
                shards.sort();
                shards.dedup();
                for shard in shards {
                    let listed: Vec<&String> = map
                        .iter()
                        .filter(|(_, s)| *s == shard)
                        .map(|(n, _)| n)
                        .collect();
                    let file = out.add_file(&dir.join(shard))?;
                    for name in listed {
                        if out.tensors.get(name).is_none_or(|t| t.file != file) {
                            return Err(CheckpointError::IndexMismatch {
                                file: out.files[file].clone(),
                                why: format!(
                                    "the index places `{name}` in it, its header does not hold it"
                                ),
                            });
                        }
                    }
                    if let Some((name, _)) = out
                        .tensors
                        .iter()
                        .find(|(n, t)| t.file == file && !map.contains_key(*n))
                    {
                        return Err(CheckpointError::IndexMismatch {
                            file: out.files[file].clone(),
                            why: format!(
                                "its header holds `{name}`, which the index does not list"
                            ),
                        });
                    }
                }
            }
            (None, Some(file)) => {
                out.add_file(&file)?;
            }
            (None, None) => unreachable!("one of the two is set"),
        }
        Ok(out)
    }

    /// Maps `path` and reads its header; its tensors join the checkpoint's.
    fn add_file(&mut self, path: &Path) -> Result<usize, CheckpointError> {
        let io = |source: std::io::Error| CheckpointError::Io {
            file: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        // SAFETY: the map is read-only and lives as long as the checkpoint. A checkpoint
        // rewritten while it is loaded changes the bytes read (as any reader's would), never
        // the memory safety of this process's own data; it is documented on `load`.
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        let (header, metadata) =
            safetensors::SafeTensors::read_metadata(&map).map_err(|e| CheckpointError::Header {
                file: path.to_path_buf(),
                why: e.to_string(),
            })?;
        let start = 8 + header;
        let index = self.files.len();
        for (name, info) in metadata.tensors() {
            if let Some(other) = self.tensors.get(&name) {
                return Err(CheckpointError::IndexMismatch {
                    file: path.to_path_buf(),
                    why: format!(
                        "`{name}` is stored twice, here and in {}",
                        self.files[other.file].display()
                    ),
                });
            }
            let (a, b) = info.data_offsets;
            self.tensors.insert(
                name,
                StoredTensor {
                    file: index,
                    dtype: format!("{:?}", info.dtype),
                    bits: info.dtype.bitsize(),
                    shape: info.shape.clone(),
                    range: start + a..start + b,
                },
            );
        }
        self.files.push(path.to_path_buf());
        self.maps.push(map);
        Ok(index)
    }

    /// The shard files, in the order [`StoredTensor::file`] counts them.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Every tensor, by name.
    pub fn tensors(&self) -> &BTreeMap<String, StoredTensor> {
        &self.tensors
    }

    /// A tensor's bytes, as mapped (read from the file, or the page cache, on first touch).
    pub fn bytes(&self, tensor: &StoredTensor) -> &[u8] {
        &self.maps[tensor.file][tensor.range.clone()]
    }
}

/// The `weight_map` of an index file: tensor name → shard file name.
pub fn read_index(path: &Path) -> Result<BTreeMap<String, String>, CheckpointError> {
    #[derive(serde::Deserialize)]
    struct Index {
        weight_map: BTreeMap<String, String>,
    }
    let text = std::fs::read_to_string(path).map_err(|source| CheckpointError::Io {
        file: path.to_path_buf(),
        source,
    })?;
    let index: Index = serde_json::from_str(&text).map_err(|e| CheckpointError::Header {
        file: path.to_path_buf(),
        why: format!("not a safetensors index: {e}"),
    })?;
    Ok(index.weight_map)
}
