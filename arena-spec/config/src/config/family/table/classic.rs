//! The rows of the decoders from before Llama's layout: LayerNorms with biases, MLPs without a
//! gate, biased projections, learned positions or none (GPT-2, GPT-J, OPT, BLOOM).

use super::*;

/// What these decoders' layers hold where a row says nothing else: biases on q, k, v, the
/// output projection and the MLP, an MLP without a gate, LayerNorms with biases (GPT-2's and
/// BLOOM's layers exactly).
const BIASED_LAYERNORM: WeightRules = WeightRules {
    qkv_bias: Bias::Always,
    o_bias: Bias::Always,
    mlp_bias: Bias::Always,
    gated_ffn: false,
    norm_bias: true,
    ..WeightRules::LLAMA
};

// GPT-2 (gpt2/modeling_gpt2.py): the common keys under the class's own names
// (`attribute_map`: `n_embd`, `n_positions`, `n_head`, `n_layer`; configuration 70–75); one
// fused, biased `c_attn` of 3 · hidden (`Conv1D`, 107) and a biased `c_proj` (108), heads of
// hidden / heads, every head its own keys and values; an MLP without a gate (`c_fc`, `c_proj`,
// biased: `GPT2MLP`, 231–236) of `n_inner`, else 4 · hidden (`GPT2Block`, 252), which the
// arena's gated-MLP buffers hold; LayerNorms with a bias (254, 256, 496); a learned position
// embedding `wpe` of `n_positions` rows (492); the head tied to `wte` by default
// (configuration: 102). Cross-attention layers (`add_cross_attention`) are not sized.
pub(super) const GPT2: FamilyRules = FamilyRules {
    model_type: "gpt2",
    reference: reference!("gpt2", "GPT2Config", "GPT2LMHeadModel"),
    aliases: &[
        ("hidden_size", "n_embd"),
        ("max_position_embeddings", "n_positions"),
        ("num_attention_heads", "n_head"),
        ("num_hidden_layers", "n_layer"),
        ("intermediate_size", "n_inner"),
    ],
    ffn_times_hidden: 4,
    // GPT2Config (configuration: 77–79).
    defaults: &[("max_position_embeddings", 1024)],
    refusals: &[Refusal {
        key: "add_cross_attention",
        scope: RefusalScope::AnyModel,
        reason: "cross-attention layers (add_cross_attention) are not sized here",
    }],
    tied_embeddings: true,
    weights: Some(WeightRules {
        position_rows_beyond_context: Some(0),
        ..BIASED_LAYERNORM
    }),
    ..DECODER
};

// GPT-J (gptj/modeling_gptj.py): GPT-2's key names (`attribute_map`, configuration 45–50)
// and FFN rule (`n_inner`, else 4 · hidden: `GPTJBlock`, 212); q, k, v and `out_proj` without
// biases (124–127), heads of hidden / heads; one LayerNorm a layer read by the attention and
// the MLP side by side (`ln_1`, 213) and `ln_f` (276), with biases; a biased MLP without a
// gate (`fc_in`, `fc_out`, 195–196); a biased head (`lm_head`, 375), not tied by default.
// Rotary positions on `rotary_dim` of each head change no width.
pub(super) const GPTJ: FamilyRules = FamilyRules {
    model_type: "gptj",
    reference: reference!("gptj", "GPTJConfig", "GPTJForCausalLM"),
    aliases: GPT2.aliases,
    ffn_times_hidden: 4,
    // GPTJConfig (configuration: 68).
    defaults: &[("max_position_embeddings", 2048)],
    weights: Some(WeightRules {
        qkv_bias: Bias::Never,
        o_bias: Bias::Never,
        norms_per_layer: 1,
        head_bias: true,
        ..BIASED_LAYERNORM
    }),
    ..DECODER
};

// OPT (opt/modeling_opt.py): biased q, k, v and `out_proj` where `enable_bias` (class default
// true, 131–134), heads of hidden / heads; an MLP without a gate of `ffn_dim` (`fc1`, `fc2`,
// 200–201); two LayerNorms a layer (197, 202) and the decoder's final one (309) with biases;
// a learned position embedding of `max_position_embeddings` + 2 rows
// (`OPTLearnedPositionalEmbedding`, offset 2: 54–55); the head tied by default. Not sized:
// `word_embed_proj_dim` other than hidden (`project_in`, `project_out`, 292–303), norms
// without weights (`layer_norm_elementwise_affine` false), post-norm layers without the final
// norm (`do_layer_norm_before` false, `_remove_final_layer_norm`, 308).
pub(super) const OPT: FamilyRules = FamilyRules {
    model_type: "opt",
    reference: reference!("opt", "OPTConfig", "OPTForCausalLM"),
    aliases: &[
        ("intermediate_size", "ffn_dim"),
        ("attention_bias", "enable_bias"),
        ("mlp_bias", "enable_bias"),
    ],
    // OPTConfig (configuration: 57, 71): 2048 positions, `enable_bias` true.
    defaults: &[
        ("attention_bias", 1),
        ("mlp_bias", 1),
        ("max_position_embeddings", 2048),
    ],
    refusals: &[
        Refusal {
            key: "word_embed_proj_dim",
            scope: RefusalScope::UnlessHidden,
            reason: "an embedding narrower or wider than hidden_size (project_in, project_out) is not sized here",
        },
        Refusal {
            key: "layer_norm_elementwise_affine",
            scope: RefusalScope::AnyModelWhenFalse,
            reason: "LayerNorms without weights are not counted here",
        },
        Refusal {
            key: "do_layer_norm_before",
            scope: RefusalScope::AnyModelWhenFalse,
            reason: "post-norm layers without the final norm are not counted here",
        },
        Refusal {
            key: "_remove_final_layer_norm",
            scope: RefusalScope::AnyModel,
            reason: "a decoder without its final norm is not counted here",
        },
    ],
    tied_embeddings: true,
    weights: Some(WeightRules {
        qkv_bias: Bias::AttentionBias,
        o_bias: Bias::AttentionBias,
        mlp_bias: Bias::MlpBias,
        position_rows_beyond_context: Some(2),
        ..BIASED_LAYERNORM
    }),
    ..DECODER
};

// BLOOM (bloom/modeling_bloom.py): `n_layer` and `n_head` for the common names (`attribute_map`,
// configuration 52–55; `n_embed` for `hidden_size` in older files, 75–77); one fused, biased
// `query_key_value` of 3 · hidden (197) and a biased `dense` (198), heads of hidden / heads;
// an MLP without a gate of 4 · hidden, biased (`dense_h_to_4h`, `dense_4h_to_h`, 321–323);
// LayerNorms with biases: two a layer (350, 353), the embedding's (425) and `ln_f` (431); the
// head tied by default. ALiBi positions: no position weights, and no context in the file
// (the loader's default context applies).
pub(super) const BLOOM: FamilyRules = FamilyRules {
    model_type: "bloom",
    reference: reference!("bloom", "BloomConfig", "BloomForCausalLM"),
    aliases: &[
        ("num_hidden_layers", "n_layer"),
        ("num_attention_heads", "n_head"),
        ("hidden_size", "n_embed"),
    ],
    ffn_times_hidden: 4,
    tied_embeddings: true,
    weights: Some(WeightRules {
        embedding_norm: true,
        ..BIASED_LAYERNORM
    }),
    ..DECODER
};

// Falcon (falcon/modeling_falcon.py): one fused `query_key_value` of q heads + 2 · kv heads
// (230–236; the kv heads and the norms by its switches: `LayoutKeys::Falcon`), heads of
// hidden / heads, `dense` out; an MLP without a gate of `ffn_hidden_size` (absent or null:
// 4 · hidden, configuration: 95–96; `dense_h_to_4h`, `dense_4h_to_h`, 520–522); every linear
// layer biased by `bias` (class default false); LayerNorms with biases (one or two a layer,
// `ln_f`: 672); the head tied by default (configuration: 88). ALiBi (`alibi`) and rotary
// positions change no width.
pub(super) const FALCON: FamilyRules = FamilyRules {
    model_type: "falcon",
    reference: reference!("falcon", "FalconConfig", "FalconForCausalLM"),
    layout_keys: LayoutKeys::Falcon,
    aliases: &[
        // `n_embed`: FalconConfig.__post_init__'s older name for it (configuration: 91–93).
        ("hidden_size", "n_embed"),
        ("intermediate_size", "ffn_hidden_size"),
        ("attention_bias", "bias"),
        ("mlp_bias", "bias"),
    ],
    ffn_times_hidden: 4,
    tied_embeddings: true,
    weights: Some(WeightRules {
        qkv_bias: Bias::AttentionBias,
        o_bias: Bias::AttentionBias,
        mlp_bias: Bias::MlpBias,
        norms_per_layer: 1,
        ..BIASED_LAYERNORM
    }),
    ..DECODER
};
