//! Which cache each layer keeps ([`KvLayer`]): the KV pool's layer kinds, from the file's
//! `layer_types` and the family's [`KvLayers`](super::family::KvLayers) rules.

use super::error::{ConfigError, MAX_EXTENT};
use super::family::FullAt;
use super::keys::Keys;
use super::{KvLayer, LayerKind};

/// What a layer attends to, before the shared layers are marked.
#[derive(Clone, Copy, PartialEq)]
enum Span {
    Whole,
    Window,
    Chunk,
}

/// The layers' caches: the sliding window (0 where no layer slides), the chunk of chunked
/// local attention (0 where no layer is chunked), and one [`KvLayer`] per layer.
pub(super) struct KvLayout {
    pub(super) window: usize,
    pub(super) chunk: usize,
    pub(super) kinds: Vec<KvLayer>,
}

pub(super) fn kv_layers(
    k: &Keys,
    layers: &[LayerKind],
    compressed: Option<&[KvLayer]>,
) -> Result<KvLayout, ConfigError> {
    let f = &k.f;
    let rules = k.rules.kv_layers;
    let n = layers.len();
    let window_key = rules.listed_by.map_or("sliding_window", |(_, key)| key);
    let window = match k.dim(window_key, MAX_EXTENT)? {
        Some(w) => w,
        // MiMo-V2-Flash's files also carry `sliding_window`, which transformers reads.
        None => k.dim("sliding_window", MAX_EXTENT)?.unwrap_or(0),
    };
    // The class default where the key is absent; an explicit `null` (or 0) is no chunk, as
    // transformers keeps it and vLLM then runs those layers at full length.
    let chunk = match rules.chunked {
        Some(c) if f.obj.contains_key(c.chunk.0) => k.dim(c.chunk.0, MAX_EXTENT)?.unwrap_or(0),
        Some(c) => c.chunk.1,
        None => 0,
    };
    let spans: Vec<Span> = match k.strings("layer_types")? {
        // `layer_layout` has checked the list's length.
        Some(types) => types
            .iter()
            .map(|&t| match t {
                "sliding_attention" => Span::Window,
                "chunked_attention" => Span::Chunk,
                _ => Span::Whole,
            })
            .collect(),
        None => unlisted_spans(k, n, window)?,
    };
    let shared = match rules.shared_count {
        Some(key) => k.dim_or(key, 0)?,
        None => 0,
    };
    if shared > n {
        return Err(f.invalid(
            rules.shared_count.unwrap_or_default(),
            format!("is {shared}, more than the model's {n} layers"),
        ));
    }
    // DeepSeek-V4: its layers' kinds as `compressed.rs` resolved them, each with its window.
    if let Some(kinds) = compressed {
        return Ok(KvLayout {
            window,
            chunk: 0,
            kinds: kinds.to_vec(),
        });
    }
    let window = if spans.contains(&Span::Window) {
        window
    } else {
        0
    };
    let chunk = if spans.contains(&Span::Chunk) {
        chunk
    } else {
        0
    };
    let kinds = layers
        .iter()
        .zip(&spans)
        .enumerate()
        .map(|(i, (&kind, &span))| match kind {
            LayerKind::Attention if i >= n - shared && span == Span::Window => KvLayer::Shared,
            LayerKind::Attention if i >= n - shared => KvLayer::SharedFull,
            // A sliding layer without a window (`sliding_window` null or 0) keeps every token,
            // and a chunked one without a chunk.
            LayerKind::Attention if span == Span::Window && window > 0 => KvLayer::Sliding,
            LayerKind::Attention if span == Span::Chunk && chunk > 0 => KvLayer::Chunked,
            LayerKind::Attention => KvLayer::Full,
            _ => KvLayer::None,
        })
        .collect();
    Ok(KvLayout {
        window,
        chunk,
        kinds,
    })
}

/// What each layer attends to where the file lists no `layer_types`, by the family's rule.
fn unlisted_spans(k: &Keys, n: usize, window: usize) -> Result<Vec<Span>, ConfigError> {
    let f = &k.f;
    let rules = k.rules.kv_layers;
    let slide_if = |b: bool| if b { Span::Window } else { Span::Whole };
    if let Some(pattern) = rules.window_pattern {
        let every = period(k, pattern)?;
        // A dense prefix with its own period (Cohere 2 MoE), the pattern starting again after
        // it; none elsewhere.
        let (dense, first) = match rules.dense_prefix_pattern {
            Some(prefix) => (
                k.dim_or("first_k_dense_replace", 0)?.min(n),
                period(k, prefix)?,
            ),
            None => (0, every),
        };
        let slides: Vec<bool> = (0..n)
            .map(|i| match i.checked_sub(dense) {
                None => !FullAt::PeriodEnd.is_full(i, dense, first),
                Some(j) => !rules.full_at.is_full(j, n - dense, every),
            })
            .collect();
        return Ok(slides.into_iter().map(slide_if).collect());
    }
    if let Some((list_key, _)) = rules.listed_by {
        if let Some(list) = k.indices(list_key)? {
            k.one_per_layer(list_key, list.len(), n)?;
            if let Some(v) = list.iter().find(|&&v| v > 1) {
                return Err(f.invalid(list_key, format!("has {v}: its entries are 0 or 1")));
            }
            return Ok(list.iter().map(|&v| slide_if(v == 1)).collect());
        }
    }
    if let Some(c) = rules.chunked {
        // An empty list is none (`Llama4TextConfig`: `no_rope_layers if no_rope_layers else`
        // the interval's).
        let rope = match k.indices(c.rope_list)?.filter(|list| !list.is_empty()) {
            Some(list) => {
                k.one_per_layer(c.rope_list, list.len(), n)?;
                list.iter().map(|&v| v != 0).collect()
            }
            None => all_but_every_nth(k, c.interval, n)?,
        };
        let chunked = |r: bool| if r { Span::Chunk } else { Span::Whole };
        return Ok(rope.into_iter().map(chunked).collect());
    }
    Ok(vec![slide_if(rules.all_slide && window > 0); n])
}

/// One entry a layer, true but for each `every`-th layer (1-based), `every` the key's value or
/// its class default (Gemma 3's `sliding_window_pattern`, Llama 4's `no_rope_layer_interval`).
fn all_but_every_nth(
    k: &Keys,
    (key, default): (&'static str, usize),
    n: usize,
) -> Result<Vec<bool>, ConfigError> {
    let every = period(k, (key, default))?;
    Ok((0..n)
        .map(|i| !FullAt::PeriodEnd.is_full(i, n, every))
        .collect())
}

/// A period read from `key`, else `default`; an empty key: `default`, fixed by the class.
fn period(k: &Keys, (key, default): (&'static str, usize)) -> Result<usize, ConfigError> {
    if key.is_empty() {
        return Ok(default);
    }
    let every = k.dim_or(key, default)?;
    if every == 0 {
        return Err(k.f.invalid(key, "is 0, but must be at least 1"));
    }
    Ok(every)
}
