#![doc = include_str!("../../FAMILIES.md")]
//!
//! Each question whose answer differs between families (where the text model sits, how
//! the layers are laid out, which keys hold the expert count and widths, which defaults a
//! file may rely on, what it refuses) is one field of [`FamilyRules`], and each family is
//! one row of [`Family::rules`] (an exhaustive `match` in `family/table.rs`, the rows in
//! `family/table/`), so a new family does not compile until it has one. A row states its
//! `model_type`, its reference and what it answers differently from the plain attention
//! decoder (`DECODER`, `..DECODER` last), so a row reads as the family's differences. The loader (`load.rs`, `keys.rs`, `layers.rs`, `moe.rs`, `mamba.rs`) reads
//! the row and names no family.

/// The family table's documentation (`FAMILIES.md`, this module's page): a section a family,
/// each config key, what it sizes and the reference's file and class. Tests hold every row to
/// its section.
pub const FAMILIES_MD: &str = include_str!("../../FAMILIES.md");

mod schema;
mod shared_keys;
mod table;
mod weights;

pub use schema::*;
pub use weights::{Bias, QkNorm, WeightRules};

/// Declares [`Family`] and [`Family::ALL`] from one list, so `ALL` cannot leave a variant out.
macro_rules! families {
    ($($(#[$doc:meta])* $variant:ident,)*) => {
        /// The model families the arena knows, one [`FamilyRules`] row each
        /// ([`Family::rules`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Family {
            $($(#[$doc])* $variant,)*
        }

        impl Family {
            /// Every family, in declaration order (written from the same list as the enum).
            pub const ALL: [Family; [$(Family::$variant),*].len()] = [$(Family::$variant),*];
        }
    };
}

families! {
    Llama,
    Cohere,
    Mistral,
    Ministral3,
    Mistral3,
    Mixtral,
    Qwen2,
    Qwen2Moe,
    Qwen3,
    Qwen3Moe,
    Qwen3Next,
    Qwen35,
    Qwen35Moe,
    Qwen3Vl,
    Qwen3VlMoe,
    DeepseekV3,
    DeepseekV32,
    DeepseekV4,
    KimiK2,
    KimiK25,
    Glm4Moe,
    GlmMoeDsa,
    GptOss,
    Llama4,
    Gemma3,
    Phi3,
    Gemma4,
    MimoV2Flash,
    Laguna,
    Olmo3,
    Exaone4,
    MinimaxM2,
    MinimaxM1,
    KimiLinear,
    Lfm2,
    NemotronH,
    NemotronNas,
    Mamba2,
    Gemma,
    Gemma2,
    Glm4,
    Granite,
    Qwen2Vl,
    Qwen25Vl,
    Olmoe,
    GraniteMoe,
    GraniteMoeShared,
    GraniteSwa,
    GraniteMoeSwa,
    GlmOcr,
    Cosmos3Edge,
    HyperClovaX,
    Axk1,
    Ernie45Moe,
    Cohere2Moe,
    StableLm,
    Nemotron,
    Afmoe,
    MuseGlimmer,
    Beam,
    PaddleOcrVl,
    Aria,
    DeepseekV2,
    Glm4MoeLite,
    Cohere2,
    Glm4v,
    Glm4vMoe,
    Ernie45,
    ExaoneMoe,
    HyV3,
    MiniCpm3,
    Apertus,
    Lfm2Moe,
    Flint,
    Gpt2,
    Gptj,
    Opt,
    Bloom,
    Granite4Vision,
    Gemma4Unified,
    CohereCompass,
    Dbrx,
    Molmo2,
    OlmoHybrid,
    GraniteMoeHybrid,
    MinimaxM3Vl,
    Step3p7,
    Falcon,
    /// Not a published family: the shipped `synthetic-*` configs, which turn on every
    /// feature the arena sizes at once (MLA, experts, Gated DeltaNet, Mamba-2, the
    /// synthetic hyper-connection and grouped-O features) so each formula runs above its
    /// floor. Its keys follow DeepSeek (attention, experts) and Nemotron-H (Mamba-2).
    Synthetic,
}

/// Model types the arena knows of and does not size, each with the reason, so a file of one
/// is refused in one line naming `model_type` and what is missing rather than as an unknown
/// type. (A row's `refusals` refuse one feature of a family it does size.)
pub const UNSIZED_MODEL_TYPES: &[(&str, &str)] = &[(
    "kimi_k3",
    "Kimi-K3 is not sized: beyond Kimi delta attention and latent experts it adds attention \
     residuals (`attn_res_block_size`), a full-rank delta-attention gate \
     (`linear_attn_config.use_full_rank_gate`) and an MLA output gate (`mla_use_output_gate`), \
     and no reference was found to check their widths against (transformers cannot build it: \
     its `situ` activation is unknown; no modeling file of Moonshot's was found)",
)];

/// Everything the loader asks of one family: one row of [`Family::rules`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FamilyRules {
    /// The `model_type` of the family's (multimodal, where it has one) config files.
    pub model_type: &'static str,
    /// The `model_type` of a file holding the text model alone, for families whose main
    /// files nest it under `text_config`; `None`: the text model is the top level.
    pub text_model_type: Option<&'static str>,
    /// The transformers files and classes the row follows; `None` for the synthetic
    /// configs, which have no reference.
    pub reference: Option<Reference>,
    /// How the layers are laid out.
    pub mixers: Mixers,
    /// Multi-head latent attention: q/kv low-rank projections (`q_lora_rank`,
    /// `kv_lora_rank`, nope/rope/v head dims); a file with attention layers must give a
    /// `kv_lora_rank` of at least 1. (The MLA keys are read for every family.)
    pub mla: bool,
    /// How the family names its experts; `None` for a dense family. A MoE family's file
    /// may still have no routed experts (0 experts is sized dense).
    pub moe: Option<MoeKeys>,
    /// The keys of the Mamba-2 mixer; `None` for a family without Mamba-2 layers.
    pub mamba: Option<MambaKeys>,
    /// Where the attention head size comes from.
    pub head_dim: HeadDim,
    /// The attention output is gated by a second half of the q projection: `Some(true)`,
    /// the reference's `q_proj` is `heads · head_dim · 2` wide whatever the file says;
    /// `Some(false)`, never; `None`, the file's `attn_output_gate` decides (absent: off).
    pub output_gate: Option<bool>,
    /// The configuration class refuses a file whose `hidden_size` is not a multiple of
    /// `num_attention_heads`, even with an explicit `head_dim` (`validate_architecture`).
    pub heads_divide_hidden: bool,
    /// Where the kv head count and the norms a layer holds come from.
    pub layout_keys: LayoutKeys,
    /// Whether positions carry three streams (multimodal RoPE).
    pub mrope: Mrope,
    /// The key of the dense FFN width (`intermediate_size` but for Llama 4).
    pub dense_width_key: &'static str,
    /// Every layer is a token mixer alone, with no FFN (a plain Mamba-2 model): a file
    /// without a dense FFN width is not refused.
    pub mixer_only: bool,
    /// The value the configuration class gives a key when a file leaves it out, for the
    /// keys vendor files are known to leave out. Other keys a file lacks are refused as
    /// missing rather than guessed; an explicit `null` is not replaced.
    pub defaults: &'static [(&'static str, usize)],
    /// Keys whose feature the arena does not size: a file that sets one is refused.
    pub refusals: &'static [Refusal],
    /// The key of the per-layer input width P where the family feeds every layer a P-wide
    /// slice of a per-token embedding of all layers (Gemma 4's `hidden_size_per_layer_input`:
    /// `embed_tokens_per_layer`, `per_layer_model_projection`, each layer's
    /// `per_layer_input_gate` and `per_layer_projection`); 0 or null: none.
    pub per_layer_inputs: Option<&'static str>,
    /// The class's `attribute_map`: (the name the loader reads, the file's own key), for
    /// classes whose files spell the common keys their own way (GPT-2's `n_embd` for
    /// `hidden_size`). A file without the name takes its own key's value; a dotted key names
    /// one inside a nested object (DBRX's `attn_config.kv_n_heads`), which wins over the
    /// name at the top level, as the class copies it up.
    pub aliases: &'static [(&'static str, &'static str)],
    /// The key of the rows the input embedding holds beyond `vocab_size` (Molmo2's
    /// `additional_vocab_size`); `None`: the embedding has `vocab_size` rows.
    pub embedding_extra_rows: Option<&'static str>,
    /// Where the dense FFN width key is absent or null, the FFN is this many times
    /// `hidden_size` (GPT-2's `n_inner` null: `4 · n_embd`, `GPT2Block`); 0: no such rule.
    pub ffn_times_hidden: usize,
    /// The spellings of the context length, first present wins (`max_position_embeddings`;
    /// Kimi-Linear's `attribute_map` points it at `model_max_length`, which its files write).
    pub context_keys: &'static [&'static str],
    /// A token mixer of a kind beyond the seeds' (short convolution, lightning attention,
    /// Kimi delta attention): the keys it is sized by. `None` for every family without one.
    pub linear_mixer: Option<LinearMixer>,
    /// The dense FFN's width when the family derives it from the width key rather than
    /// using it as written (LFM2's `block_auto_adjust_ff_dim`); `None`: as written.
    pub ffn_auto_adjust: Option<FfnAutoAdjust>,
    /// `tie_word_embeddings`' class default, for a file without the key (`Gemma3TextConfig`,
    /// `Gemma4TextConfig`, `Lfm2Config`: true; the others false).
    pub tied_embeddings: bool,
    /// Which attention layers keep only a window of keys and values, or none (the KV pool's
    /// layer kinds, [`super::KvLayer`]).
    pub kv_layers: KvLayers,
    /// DeepSeek-V4's compressed attention (`None` for every other family).
    pub compressed: Option<CompressedAttention>,
    /// Attention widths that differ by layer (MiMo-V2-Flash, Laguna; `None` for every other
    /// family).
    pub layer_widths: Option<LayerWidths>,
    /// What the layers hold beyond their widths, for the weights (biases, norms, the FFN's
    /// shape); `None`: the family's weights are not counted, and are refused by name.
    pub weights: Option<WeightRules>,
}

impl FamilyRules {
    /// The row's default for `key`, if it has one.
    pub fn default_of(&self, key: &str) -> Option<usize> {
        self.defaults
            .iter()
            .find_map(|&(k, v)| (k == key).then_some(v))
    }
}

/// The transformers model folder and classes a row follows (transformers 5.24.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reference {
    /// The folder under `transformers/models/`, holding `configuration_<folder>.py` and
    /// `modeling_<folder>.py`.
    pub folder: &'static str,
    /// The configuration class the text model's keys are read by.
    pub config_class: &'static str,
    /// The modeling class of the text model.
    pub modeling_class: &'static str,
}

/// A row's [`Reference`]: the transformers folder and classes it follows (a macro, so the
/// row stays a constant the table can borrow for `'static`).
macro_rules! reference {
    ($folder:literal, $config_class:literal, $modeling_class:literal $(,)?) => {
        Some(Reference {
            folder: $folder,
            config_class: $config_class,
            modeling_class: $modeling_class,
        })
    };
}
use reference;

impl Family {
    /// The `model_type`s the rows of `families` read: each row's own and its text model's,
    /// once each, in the order given (error messages list them).
    pub fn model_types_of(families: impl IntoIterator<Item = Family>) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for f in families {
            for t in [Some(f.model_type()), f.text_model_type()]
                .into_iter()
                .flatten()
            {
                if !out.contains(&t) {
                    out.push(t);
                }
            }
        }
        out
    }

    /// The `model_type` of the family's (multimodal, where it has one) config files.
    pub fn model_type(self) -> &'static str {
        self.rules().model_type
    }

    /// The `model_type` of a file holding the text model alone, for families whose main
    /// files nest it under `text_config`.
    pub fn text_model_type(self) -> Option<&'static str> {
        self.rules().text_model_type
    }

    /// The family of a `model_type`, and whether that file nests its text model under
    /// `text_config`.
    ///
    /// A family's own `model_type` wins over another's text model type: a text-only
    /// `kimi_k2` file is the `kimi_k2` row's, though `kimi_k25` files nest one.
    pub(crate) fn from_model_type(s: &str) -> Option<(Family, bool)> {
        let own = Family::ALL
            .into_iter()
            .find(|f| f.model_type() == s)
            .map(|f| (f, f.text_model_type().is_some()));
        own.or_else(|| {
            Family::ALL
                .into_iter()
                .find(|f| f.text_model_type() == Some(s))
                .map(|f| (f, false))
        })
    }

    /// The transformers model folder whose configuration and modeling files this family
    /// follows (`kimi_k2` files declare the DeepSeek-V3 architecture); the synthetic
    /// configs, which follow none, and `nemotron-nas`, whose reference is NVIDIA's remote code,
    /// their own `model_type`. The folder alone: the classes are
    /// in [`Family::rules`]'s `reference`.
    pub fn reference(self) -> &'static str {
        match self.rules().reference {
            Some(reference) => reference.folder,
            None => self.model_type(),
        }
    }

    /// The key of the dense FFN width ([`FamilyRules::dense_width_key`]).
    pub(crate) fn dense_width_key(self) -> &'static str {
        self.rules().dense_width_key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_declaration_order_and_each_model_type_names_one_family() {
        for (i, f) in Family::ALL.into_iter().enumerate() {
            assert_eq!(f as usize, i, "{f:?}");
            assert_eq!(
                Family::from_model_type(f.model_type()).map(|(g, _)| g),
                Some(f)
            );
            if let Some(text) = f.text_model_type() {
                // A text model type that is another row's own model type is that row's.
                let owner = Family::ALL.into_iter().find(|g| g.model_type() == text);
                assert_eq!(
                    Family::from_model_type(text),
                    Some((
                        owner.unwrap_or(f),
                        owner.is_some_and(|g| g.text_model_type().is_some())
                    ))
                );
            }
        }
    }

    #[test]
    fn each_row_is_consistent() {
        for f in Family::ALL {
            let r = f.rules();
            // A row with Mamba-2 layers names their keys, and only such a row.
            let mamba_layers = matches!(
                r.mixers,
                Mixers::Mamba2 | Mixers::Mamba2Hybrid | Mixers::NemotronHybrid | Mixers::AnyKind
            );
            assert_eq!(r.mamba.is_some(), mamba_layers, "{f:?}");
            assert_eq!(r.mixer_only, r.mixers == Mixers::Mamba2, "{f:?}");
            for (i, (key, _)) in r.defaults.iter().enumerate() {
                assert!(
                    r.defaults[..i].iter().all(|(k, _)| k != key),
                    "{f:?}: {key} twice"
                );
            }
            if let Some(moe) = r.moe {
                assert!(moe.experts.contains(&moe.experts_field), "{f:?}");
            }
            // No transformers reference: the synthetic configs, and DeciLM's remote code.
            assert_eq!(
                r.reference.is_none(),
                matches!(f, Family::Synthetic | Family::NemotronNas),
                "{f:?}"
            );
        }
    }
}
