//! The modules a multimodal file runs beside its language model: a vision tower (and an
//! audio tower) with the projector that maps its output into the text model's embeddings.
//! An engine serving the file loads them (vLLM builds the whole `...ForConditionalGeneration`
//! model: +0.85 GiB for Mistral-Small-3.2, +1.5 GiB for Gemma-4-26B in its logs), so the
//! whole-GPU plan counts them unless asked for the text model alone.
//!
//! Each tower's parameters are counted from its `vision_config` / `audio_config` as the
//! reference module builds them (the transformers 5.17 classes named below; MoonViT, which
//! transformers 5.17 does not ship, as vLLM v0.33.0's `kimi_k25_vit.py` builds it), and
//! `tests/towers.rs` holds every shipped and vendor multimodal file to the parameter counts
//! transformers builds on the meta device (`tests/oracle/towers.py`, `towers.json`). A
//! `vision_config` of a kind not counted here, or with a key that would change a counted
//! kind's shapes, is `TowerKind::Unsized`: the plan refuses it unless asked for the text
//! model alone, never plans it as nothing.

use super::error::{ConfigError, MAX_DIM};
use super::fields::{json_kind, Fields};
use serde_json::Value;

/// The towers a file carries; both `None` for a text-only file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Towers {
    pub vision: Option<Tower>,
    pub audio: Option<Tower>,
}

/// One tower: what reads it, and its parameters with its projector's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Tower {
    pub kind: TowerKind,
    /// Parameter elements of the tower and of the projector into the text model; 0 for
    /// [`TowerKind::Unsized`].
    pub params: u64,
}

/// The reference module a tower is counted as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TowerKind {
    /// `SiglipVisionModel` (`siglip_vision_model`: Gemma 3) and `Siglip2VisionModel`
    /// (`siglip2_vision_model`: LFM2-VL).
    Siglip,
    Siglip2,
    /// `Gemma4VisionModel` and `Gemma4AudioModel`, each with its `Gemma4MultimodalEmbedder`.
    Gemma4Vision,
    Gemma4Audio,
    /// `PixtralVisionModel` with `Mistral3MultiModalProjector` (Mistral 3, Devstral).
    Pixtral,
    /// `Qwen3VLVisionModel` (and Qwen3.5's, the same blocks without deepstack mergers).
    QwenVision,
    /// `Llama4VisionModel` with `Llama4MultiModalProjector`.
    Llama4Vision,
    /// Kimi-K2.5's MoonViT with its patch-merger projector (vLLM's `MoonViT3dPretrainedModel`,
    /// `KimiK25MultiModalProjector`).
    MoonVit,
    /// A tower this crate does not count.
    Unsized,
}

impl Towers {
    /// Parameters of every tower (0 for an unsized one).
    pub const fn params(&self) -> u64 {
        let v = match self.vision {
            Some(t) => t.params,
            None => 0,
        };
        let a = match self.audio {
            Some(t) => t.params,
            None => 0,
        };
        v.saturating_add(a)
    }

    /// The bytes of every tower's weights: 16 bits a parameter. Chosen here: the checkpoints
    /// keep their towers unquantized (a quantized file's `modules_to_not_convert` or `ignore`
    /// lists them) in the model's 16-bit dtype, and vLLM loads them so.
    pub const fn bytes(&self) -> u64 {
        self.params().saturating_mul(2)
    }

    /// Whether the file has no tower.
    pub const fn is_none(&self) -> bool {
        self.vision.is_none() && self.audio.is_none()
    }
}

/// The towers of a file: `top` is its top level, `text_hidden` the text model's width.
pub(super) fn towers(top: &Fields, text_hidden: usize) -> Result<Towers, ConfigError> {
    let wrapper = top.opt_str("model_type")?.unwrap_or("");
    let sub = |key: &'static str, prefix: &'static str| match top.obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(obj)) => Ok(Some(Fields {
            path: top.path,
            obj,
            prefix,
        })),
        Some(other) => {
            Err(top.invalid(key, format!("must be an object, not {}", json_kind(other))))
        }
    };
    let t = text_hidden as u128;
    let vision = match sub("vision_config", "vision_config.")? {
        Some(v) => Some(vision_tower(wrapper, top, &v, t)?),
        None => None,
    };
    let audio = match sub("audio_config", "audio_config.")? {
        Some(a) if a.opt_str("model_type")? == Some("gemma4_audio") => Some(Tower {
            kind: TowerKind::Gemma4Audio,
            params: total(&a, gemma4_audio(&a, t)?)?,
        }),
        Some(_) => Some(Tower {
            kind: TowerKind::Unsized,
            params: 0,
        }),
        None => None,
    };
    Ok(Towers { vision, audio })
}

/// A width from a tower's config: the file's value, else the reference config class's
/// default (`None`: the key is required). Counted in `u128`: a product of four widths of at
/// most [`MAX_DIM`] cannot overflow it, and [`total`] turns the sum back into a `u64` or an
/// error.
fn dim(f: &Fields, key: &str, default: Option<u128>) -> Result<u128, ConfigError> {
    match f.opt_dim(key, MAX_DIM)? {
        Some(v) => Ok(v as u128),
        None => default.ok_or_else(|| f.missing(key)),
    }
}

/// A tower's count as a `u64`, or an error naming its config where it is past one.
fn total(f: &Fields, params: u128) -> Result<u64, ConfigError> {
    u64::try_from(params).map_err(|_| {
        f.invalid(
            "hidden_size",
            format!("makes a tower of {params} parameters, more than any device holds"),
        )
    })
}

/// The vision tower of a wrapper (`model_type`), where its `vision_config.model_type` is
/// the class the wrapper's config builds (MoonViT's files name none).
fn vision_tower(wrapper: &str, top: &Fields, v: &Fields, t: u128) -> Result<Tower, ConfigError> {
    // The wrapper's vision class, where the sub-config names it as the wrapper's config
    // class does (or names nothing: the class's default).
    let (kind, names): (TowerKind, &[&str]) = match wrapper {
        "gemma3" => (TowerKind::Siglip, &["siglip_vision_model"]),
        "lfm2_vl" => (TowerKind::Siglip2, &["siglip2_vision_model"]),
        "gemma4" => (TowerKind::Gemma4Vision, &["gemma4_vision"]),
        "mistral3" => (TowerKind::Pixtral, &["pixtral"]),
        "qwen3_vl" => (TowerKind::QwenVision, &["qwen3_vl", "qwen3_vl_vision"]),
        "qwen3_vl_moe" => (
            TowerKind::QwenVision,
            &["qwen3_vl_moe", "qwen3_vl_moe_vision"],
        ),
        "qwen3_5" => (TowerKind::QwenVision, &["qwen3_5", "qwen3_5_vision"]),
        "qwen3_5_moe" => (
            TowerKind::QwenVision,
            &["qwen3_5_moe", "qwen3_5_moe_vision"],
        ),
        "llama4" => (TowerKind::Llama4Vision, &["llama4_vision_model"]),
        "kimi_k25" => (TowerKind::MoonVit, &[]),
        _ => (TowerKind::Unsized, &[]),
    };
    let kind = match v.opt_str("model_type")? {
        // An empty name is no name (NVIDIA's Kimi-K2.5/2.6 files write `""`).
        Some(named) if !named.is_empty() && !names.contains(&named) => TowerKind::Unsized,
        _ => kind,
    };
    let params = match kind {
        TowerKind::Siglip | TowerKind::Siglip2 => siglip(kind, wrapper, top, v, t)?,
        TowerKind::Gemma4Vision => gemma4_vision(v, t)?,
        TowerKind::Pixtral => pixtral(top, v, t)?,
        TowerKind::QwenVision => qwen_vision(v)?,
        TowerKind::Llama4Vision => llama4_vision(v, t)?,
        TowerKind::MoonVit => moonvit(v, t)?,
        TowerKind::Gemma4Audio | TowerKind::Unsized => None,
    };
    // A variant whose shapes the count above does not follow is not counted as nothing.
    match params {
        Some(params) => Ok(Tower {
            kind,
            params: total(v, params)?,
        }),
        None => Ok(Tower {
            kind: TowerKind::Unsized,
            params: 0,
        }),
    }
}

/// A pre-norm ViT encoder layer with biased q, k, v, o and a two-matrix GELU MLP and two
/// LayerNorms (weight and bias): SigLIP's, Llama 4's, Qwen-VL's (fused qkv) and MoonViT's.
const fn vit_layer(d: u128, i: u128) -> u128 {
    4 * (d * d + d) + (d * i + i) + (i * d + d) + 4 * d
}

/// `SiglipVisionTransformer` / `Siglip2VisionTransformer` (no pooling head where
/// `vision_use_head` is false) and the wrapper's projector: Gemma 3's
/// `mm_input_projection_weight` `[d, text]` with its `mm_soft_emb_norm` `[d]`; LFM2-VL's
/// `Lfm2VlMultiModalProjector` (an optional LayerNorm over `d · factor²`, `linear_1` to
/// `projector_hidden_size`, `linear_2` to the text width, biased where `projector_bias`).
fn siglip(
    kind: TowerKind,
    wrapper: &str,
    top: &Fields,
    v: &Fields,
    t: u128,
) -> Result<Option<u128>, ConfigError> {
    if v.opt_bool("vision_use_head")? != Some(false) {
        return Ok(None); // The MAP pooling head is not counted: neither wrapper builds it.
    }
    let d = dim(v, "hidden_size", Some(768))?;
    let i = dim(v, "intermediate_size", Some(3072))?;
    let layers = dim(v, "num_hidden_layers", Some(12))?;
    let p = dim(v, "patch_size", Some(16))?;
    let c = dim(v, "num_channels", Some(3))?;
    let (patch, positions) = match kind {
        // A conv with a bias; a position a patch of the square image.
        TowerKind::Siglip => {
            let side = dim(v, "image_size", Some(224))? / p.max(1);
            (c * p * p * d + d, side * side)
        }
        // A linear over the flattened patch, with a bias; `num_patches` positions.
        _ => (c * p * p * d + d, dim(v, "num_patches", Some(256))?),
    };
    let tower = patch + positions * d + layers * vit_layer(d, i) + 2 * d;
    let projector = match wrapper {
        "gemma3" => d * t + d,
        _ => {
            let factor = dim(top, "downsample_factor", Some(2))?;
            let inner = d * factor * factor;
            let hidden = dim(top, "projector_hidden_size", Some(2560))?;
            let bias = top.opt_bool("projector_bias")?.unwrap_or(true) as u128;
            let norm = top.opt_bool("projector_use_layernorm")?.unwrap_or(true) as u128;
            norm * 2 * inner + inner * hidden + bias * hidden + hidden * t + bias * t
        }
    };
    Ok(Some(tower + projector))
}

/// `Gemma4VisionModel`: a linear patch embedder (`3 · p²` to `d`, no bias), a 2-D position
/// table `[2, position_embedding_size, d]`, layers of q/k/v/o without bias (k and v at
/// `num_key_value_heads`), q and k norms `[head_dim]`, four RMSNorms `[d]` and a gated MLP;
/// then `embed_vision`'s projection `[d, text]`.
fn gemma4_vision(v: &Fields, t: u128) -> Result<Option<u128>, ConfigError> {
    if v.opt_bool("attention_bias")? == Some(true) {
        return Ok(None);
    }
    let d = dim(v, "hidden_size", None)?;
    let i = dim(v, "intermediate_size", None)?;
    let layers = dim(v, "num_hidden_layers", None)?;
    let heads = dim(v, "num_attention_heads", None)?;
    let kv = dim(v, "num_key_value_heads", Some(heads))?;
    let hd = dim(v, "head_dim", None)?;
    let p = dim(v, "patch_size", Some(16))?;
    let positions = dim(v, "position_embedding_size", Some(10240))?;
    let layer = 2 * d * heads * hd + 2 * d * kv * hd + 3 * d * i + 4 * d + 2 * hd;
    Ok(Some(
        3 * p * p * d + 2 * positions * d + layers * layer + d * t,
    ))
}

/// `Gemma4AudioModel` (a conformer): two subsampling convs (3×3, no bias, each with a norm),
/// `input_proj_linear` from `c0 / 4 · c1`, per layer two macaron feed-forwards
/// (`d → 4d → d`, pre and post norms), a light conv block (`linear_start` to `2d`, a
/// depthwise conv of `conv_kernel_size`, a norm, `linear_end`), attention (q, k, v, post and
/// `relative_k_proj`, `per_dim_scale` `[d / heads]`) and three norms; `output_proj` to
/// `output_proj_dims` with a bias; then `embed_audio`'s projection `[output_proj_dims, text]`.
fn gemma4_audio(a: &Fields, t: u128) -> Result<u128, ConfigError> {
    let d = dim(a, "hidden_size", Some(1024))?;
    let layers = dim(a, "num_hidden_layers", Some(12))?;
    let heads = dim(a, "num_attention_heads", Some(8))?.max(1);
    let k = dim(a, "conv_kernel_size", Some(5))?;
    let out = dim(a, "output_proj_dims", Some(1536))?;
    let (c0, c1) = match a.obj.get("subsampling_conv_channels") {
        None | Some(Value::Null) => (128, 32),
        Some(Value::Array(c)) if c.len() == 2 => match (c[0].as_u64(), c[1].as_u64()) {
            (Some(c0), Some(c1)) if c0 <= MAX_DIM as u64 && c1 <= MAX_DIM as u64 => {
                (c0 as u128, c1 as u128)
            }
            _ => return Err(a.invalid("subsampling_conv_channels", "must be two whole numbers")),
        },
        Some(_) => return Err(a.invalid("subsampling_conv_channels", "must be two whole numbers")),
    };
    let subsample = 9 * c0 + c0 + 9 * c0 * c1 + c1 + (c0 / 4) * c1 * d;
    let layer = 2 * (8 * d * d + 2 * d)
        + (d + 2 * d * d + d * k + d + d * d)
        + 3 * d
        + 5 * d * d
        + d / heads;
    Ok(subsample + layers * layer + d * out + out + out * t)
}

/// `PixtralVisionModel` (a conv patch embedding without bias, `ln_pre`, layers of q/k/v/o
/// without bias, two RMSNorms and a gated MLP) and `Mistral3MultiModalProjector` (an RMSNorm,
/// the patch merger's `[d · s², d]`, `linear_1` `[d, text]`, `linear_2` `[text, text]`,
/// biased where `multimodal_projector_bias`).
fn pixtral(top: &Fields, v: &Fields, t: u128) -> Result<Option<u128>, ConfigError> {
    let d = dim(v, "hidden_size", None)?;
    let i = dim(v, "intermediate_size", None)?;
    let layers = dim(v, "num_hidden_layers", None)?;
    let heads = dim(v, "num_attention_heads", None)?;
    let hd = dim(v, "head_dim", Some(d / heads.max(1)))?;
    let p = dim(v, "patch_size", None)?;
    let c = dim(v, "num_channels", Some(3))?;
    let s = dim(top, "spatial_merge_size", Some(2))?;
    let bias = top.opt_bool("multimodal_projector_bias")?.unwrap_or(false) as u128;
    let layer = 4 * d * heads * hd + 2 * d + 3 * d * i;
    let tower = c * p * p * d + d + layers * layer;
    let projector = d + d * s * s * d + d * t + bias * t + t * t + bias * t;
    Ok(Some(tower + projector))
}

/// `Qwen3VLVisionModel`: a conv3d patch embedding with a bias (`in_channels ·
/// temporal_patch_size · p²` to `d`), `num_position_embeddings` positions, `depth` blocks
/// (fused biased qkv, biased proj, a biased two-matrix MLP, two LayerNorms), the merger (a
/// LayerNorm `[d]`, `[d · s²]²` and `[d · s², out_hidden_size]`, biased) and one deepstack
/// merger a `deepstack_visual_indexes` entry (the same with its LayerNorm over `d · s²`).
/// The merger writes `out_hidden_size`, the text width, so no projector follows.
fn qwen_vision(v: &Fields) -> Result<Option<u128>, ConfigError> {
    let d = dim(v, "hidden_size", None)?;
    let i = dim(v, "intermediate_size", None)?;
    let depth = dim(v, "depth", None)?;
    let p = dim(v, "patch_size", Some(16))?;
    let tp = dim(v, "temporal_patch_size", Some(2))?;
    let c = dim(v, "in_channels", Some(3))?;
    let positions = dim(v, "num_position_embeddings", Some(2304))?;
    let s = dim(v, "spatial_merge_size", Some(2))?;
    let out = dim(v, "out_hidden_size", None)?;
    let deepstack = match v.obj.get("deepstack_visual_indexes") {
        None | Some(Value::Null) => 0,
        Some(Value::Array(a)) => a.len() as u128,
        Some(other) => {
            return Err(v.invalid(
                "deepstack_visual_indexes",
                format!("must be a list, not {}", json_kind(other)),
            ))
        }
    };
    let merged = d * s * s;
    let mlp = merged * merged + merged + merged * out + out;
    let tower = c * tp * p * p * d + d + positions * d + depth * vit_layer(d, i);
    // Saturating: a list past any device's tower is refused by `total`, not wrapped.
    let deepstack = deepstack.saturating_mul(2 * merged + mlp);
    Ok(Some((tower + 2 * d + mlp).saturating_add(deepstack)))
}

/// `Llama4VisionModel`: a linear patch embedding without bias, a class embedding, `(side² + 1)`
/// positions, pre and post LayerNorms, ViT layers, and the pixel-shuffle adapter
/// (`[intermediate, projector_input_dim]`, `[projector_output_dim]²`, no bias); then
/// `Llama4MultiModalProjector`'s `[vision_output_dim, text]` without bias.
fn llama4_vision(v: &Fields, t: u128) -> Result<Option<u128>, ConfigError> {
    let d = dim(v, "hidden_size", None)?;
    let i = dim(v, "intermediate_size", None)?;
    let layers = dim(v, "num_hidden_layers", None)?;
    let p = dim(v, "patch_size", None)?;
    let c = dim(v, "num_channels", Some(3))?;
    let side = dim(v, "image_size", None)? / p.max(1);
    let pin = dim(v, "projector_input_dim", None)?;
    let pout = dim(v, "projector_output_dim", None)?;
    let vout = dim(v, "vision_output_dim", None)?;
    let tower = c * p * p * d + d + (side * side + 1) * d + 4 * d + layers * vit_layer(d, i);
    Ok(Some(tower + i * pin + pout * pout + vout * t))
}

/// MoonViT as vLLM v0.33.0 builds it (`kimi_k25_vit.py`: `MoonVision3dPatchEmbed`, a biased
/// conv and a `[height, width, d]` position table; `MoonViTEncoderLayer`, two LayerNorms,
/// fused biased `wqkv`, biased `wo`, a biased two-matrix MLP; `final_layernorm`;
/// `KimiK25MultiModalProjector`'s `patchmerger`: a LayerNorm `[d]`, `[4d]²` and
/// `[4d, text]`, biased), from the file's `vt_*` keys.
fn moonvit(v: &Fields, t: u128) -> Result<Option<u128>, ConfigError> {
    let projector = v.opt_str("mm_projector_type")?.unwrap_or("patchmerger");
    if projector != "patchmerger" || v.obj.get("qkv_hidden_size").is_some_and(|q| !q.is_null()) {
        return Ok(None);
    }
    let d = dim(v, "vt_hidden_size", None)?;
    let i = dim(v, "vt_intermediate_size", None)?;
    let layers = dim(v, "vt_num_hidden_layers", None)?;
    let p = dim(v, "patch_size", Some(14))?;
    let h = dim(v, "init_pos_emb_height", Some(64))?;
    let w = dim(v, "init_pos_emb_width", Some(64))?;
    let merge = match v.obj.get("merge_kernel_size") {
        Some(Value::Array(m)) if m.len() == 2 => m
            .iter()
            .map(|x| x.as_u64().filter(|&x| x <= 16).map(u128::from))
            .product::<Option<u128>>()
            .ok_or_else(|| v.invalid("merge_kernel_size", "must be two small whole numbers"))?,
        _ => 4,
    };
    let t = match v.opt_dim("text_hidden_size", MAX_DIM)? {
        Some(width) => width as u128,
        None => t,
    };
    let tower = 3 * p * p * d + d + h * w * d + layers * vit_layer(d, i) + 2 * d;
    let merged = merge * d;
    Ok(Some(
        tower + 2 * d + merged * merged + merged + merged * t + t,
    ))
}
