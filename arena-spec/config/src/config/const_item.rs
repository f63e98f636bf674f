//! A `ModelConfig` written back as Rust: a `const` item a model author pastes (or a build
//! step writes), so the const sizing path can size it at compile time. The shipped models'
//! consts (`models::consts`) are this function's output, checked current by a test.

use super::{
    ModelConfig, RecurrentStateDtype, Resolution, StateDtypeSource, TextModel, Tower, WeightFormats,
};
use crate::parallel::RankShard;
use std::fmt::Write;

impl ModelConfig {
    /// This config as a Rust `const` item named `name`, borrowing `'static` data, with the
    /// paths it needs in scope (`arena_spec::{Block, Cow, Family, Resolution, TextModel, KvLayer, LayerKind, Levers, ModelConfig, RecurrentStateDtype,
    /// StateDtype, StateDtypeSource, Tower, TowerKind, Towers, FormatSource, WeightFormat,
    /// WeightFormats}`
    /// or `use` lines of the caller's). `None` for a rank's config (`ModelConfig::shard`):
    /// shard the const's whole-model config instead.
    pub fn const_item(&self, name: &str) -> Option<String> {
        // Destructured without `..`: a new field is a compile error here, not a silently
        // missing line.
        let ModelConfig {
            source,
            model_type,
            family,
            hidden_size,
            intermediate_size,
            num_hidden_layers,
            vocab_size,
            max_position_embeddings,
            num_attention_heads,
            num_key_value_heads,
            head_dim_field,
            attn_output_gate,
            mrope,
            layers,
            num_experts,
            num_experts_per_tok,
            moe_intermediate_size,
            shared_expert_intermediate_size,
            moe_latent_size,
            n_shared_experts,
            first_k_dense_replace,
            moe_dense_layers,
            dense_ffn_layers,
            weight_formats,
            tie_word_embeddings,
            attention_bias,
            mlp_bias,
            use_qk_norm,
            qk_norm_whole,
            embedding_extra_rows,
            post_norms,
            layer_norms,
            sliding_window,
            attention_chunk_size,
            hca_compress_ratio,
            kv_layers,
            zero_expert_num,
            hash_moe_layers,
            q_lora_rank,
            kv_lora_rank,
            qk_nope_head_dim,
            qk_rope_head_dim,
            v_head_dim,
            index_n_heads,
            index_head_dim,
            index_topk,
            index_compress_ratio,
            indexer_layers,
            linear_num_key_heads,
            linear_key_head_dim,
            linear_num_value_heads,
            linear_value_head_dim,
            linear_conv_kernel_dim,
            mamba_num_heads,
            mamba_head_dim,
            ssm_state_size,
            mamba_n_groups,
            mamba_conv_kernel,
            mamba_chunk_size,
            recurrent_state_dtype,
            short_conv_dim,
            short_conv_kernel,
            lightning_heads,
            lightning_head_dim,
            kda_heads,
            kda_head_dim,
            kda_conv_kernel,
            per_layer_input_dim,
            per_layer_inputs_width,
            o_groups,
            o_lora_rank,
            extra_qkv_width,
            global_head_dim,
            global_kv_heads,
            global_k_eq_v,
            full_attention_heads,
            heads_vary_within_type,
            blocks,
            attention_gate_per_head,
            shared_ffn_doubled,
            hc_mult,
            hc_lowrank_rank,
            adapter_max_rank,
            mtp_layers,
            towers,
            text_model,
            levers,
            shard,
        } = self;
        let _: &Option<RankShard> = shard;
        if shard.is_some() {
            return None;
        }
        let mut out = String::new();
        let mut field = |name: &str, value: String| {
            let _ = writeln!(out, "    {name}: {value},");
        };
        field("source", format!("Cow::Borrowed({source:?})"));
        field("model_type", format!("Cow::Borrowed({model_type:?})"));
        field("family", format!("Family::{family:?}"));
        for (name, value) in [
            ("hidden_size", hidden_size),
            ("intermediate_size", intermediate_size),
            ("num_hidden_layers", num_hidden_layers),
            ("vocab_size", vocab_size),
            ("max_position_embeddings", max_position_embeddings),
            ("num_attention_heads", num_attention_heads),
            ("num_key_value_heads", num_key_value_heads),
        ] {
            field(name, value.to_string());
        }
        field("head_dim_field", format!("{head_dim_field:?}"));
        field("attn_output_gate", attn_output_gate.to_string());
        field("global_k_eq_v", global_k_eq_v.to_string());
        field("shared_ffn_doubled", shared_ffn_doubled.to_string());
        field("heads_vary_within_type", heads_vary_within_type.to_string());
        let blocks: Vec<String> = blocks.iter().map(|b| format!("{b:?}")).collect();
        field("blocks", format!("Cow::Borrowed(&[{}])", blocks.join(", ")));
        field("mrope", mrope.to_string());
        let kinds: Vec<String> = layers.iter().map(|k| format!("LayerKind::{k:?}")).collect();
        field("layers", format!("Cow::Borrowed(&[{}])", kinds.join(", ")));
        for (name, value) in [
            ("num_experts", num_experts),
            ("num_experts_per_tok", num_experts_per_tok),
            ("moe_intermediate_size", moe_intermediate_size),
            (
                "shared_expert_intermediate_size",
                shared_expert_intermediate_size,
            ),
            ("moe_latent_size", moe_latent_size),
            ("n_shared_experts", n_shared_experts),
            ("first_k_dense_replace", first_k_dense_replace),
            ("moe_dense_layers", moe_dense_layers),
        ] {
            field(name, value.to_string());
        }
        let dense: Vec<String> = dense_ffn_layers.iter().map(bool::to_string).collect();
        field(
            "dense_ffn_layers",
            format!("Cow::Borrowed(&[{}])", dense.join(", ")),
        );
        field("weight_formats", weight_formats_item(weight_formats));
        field("tie_word_embeddings", tie_word_embeddings.to_string());
        field("attention_bias", attention_bias.to_string());
        field("mlp_bias", mlp_bias.to_string());
        field("use_qk_norm", use_qk_norm.to_string());
        field("qk_norm_whole", qk_norm_whole.to_string());
        field("embedding_extra_rows", embedding_extra_rows.to_string());
        field("post_norms", post_norms.to_string());
        field("layer_norms", format!("{layer_norms:?}"));
        field("sliding_window", sliding_window.to_string());
        field("attention_chunk_size", attention_chunk_size.to_string());
        field("hca_compress_ratio", hca_compress_ratio.to_string());
        let kv: Vec<String> = kv_layers
            .iter()
            .map(|k| format!("KvLayer::{k:?}"))
            .collect();
        field("kv_layers", format!("Cow::Borrowed(&[{}])", kv.join(", ")));
        for (name, value) in [
            ("zero_expert_num", zero_expert_num),
            ("hash_moe_layers", hash_moe_layers),
            ("q_lora_rank", q_lora_rank),
            ("kv_lora_rank", kv_lora_rank),
            ("qk_nope_head_dim", qk_nope_head_dim),
            ("qk_rope_head_dim", qk_rope_head_dim),
            ("v_head_dim", v_head_dim),
            ("index_n_heads", index_n_heads),
            ("index_head_dim", index_head_dim),
            ("index_topk", index_topk),
            ("index_compress_ratio", index_compress_ratio),
            ("linear_num_key_heads", linear_num_key_heads),
            ("linear_key_head_dim", linear_key_head_dim),
            ("linear_num_value_heads", linear_num_value_heads),
            ("linear_value_head_dim", linear_value_head_dim),
            ("linear_conv_kernel_dim", linear_conv_kernel_dim),
            ("mamba_num_heads", mamba_num_heads),
            ("mamba_head_dim", mamba_head_dim),
            ("ssm_state_size", ssm_state_size),
            ("mamba_n_groups", mamba_n_groups),
            ("mamba_conv_kernel", mamba_conv_kernel),
            ("mamba_chunk_size", mamba_chunk_size),
            ("short_conv_dim", short_conv_dim),
            ("short_conv_kernel", short_conv_kernel),
            ("lightning_heads", lightning_heads),
            ("lightning_head_dim", lightning_head_dim),
            ("kda_heads", kda_heads),
            ("kda_head_dim", kda_head_dim),
            ("kda_conv_kernel", kda_conv_kernel),
            ("per_layer_input_dim", per_layer_input_dim),
            ("per_layer_inputs_width", per_layer_inputs_width),
            ("o_groups", o_groups),
            ("o_lora_rank", o_lora_rank),
            ("extra_qkv_width", extra_qkv_width),
            ("global_head_dim", global_head_dim),
            ("global_kv_heads", global_kv_heads),
            ("full_attention_heads", full_attention_heads),
            ("attention_gate_per_head", attention_gate_per_head),
            ("hc_mult", hc_mult),
            ("hc_lowrank_rank", hc_lowrank_rank),
            ("adapter_max_rank", adapter_max_rank),
            ("mtp_layers", mtp_layers),
        ] {
            field(name, value.to_string());
        }
        let RecurrentStateDtype { dtype, source } = recurrent_state_dtype;
        let source = match source {
            StateDtypeSource::Key(key) => format!("StateDtypeSource::Key({key:?})"),
            other => format!("StateDtypeSource::{other:?}"),
        };
        field(
            "recurrent_state_dtype",
            format!("RecurrentStateDtype {{ dtype: StateDtype::{dtype:?}, source: {source} }}"),
        );
        let indexed: Vec<String> = indexer_layers.iter().map(bool::to_string).collect();
        field(
            "indexer_layers",
            format!("Cow::Borrowed(&[{}])", indexed.join(", ")),
        );
        let tower = |t: Option<Tower>| match t {
            Some(Tower { kind, params }) => {
                format!("Some(Tower {{ kind: TowerKind::{kind:?}, params: {params} }})")
            }
            None => "None".to_string(),
        };
        field(
            "towers",
            format!(
                "Towers {{ vision: {}, audio: {} }}",
                tower(towers.vision),
                tower(towers.audio)
            ),
        );
        let TextModel {
            found_by,
            not_sized,
            left_out,
        } = text_model;
        let found_by = match found_by {
            Resolution::ModelType => "Resolution::ModelType".to_string(),
            Resolution::Architecture { class } => {
                format!("Resolution::Architecture {{ class: {class:?} }}")
            }
            Resolution::Wrapper { key } => format!("Resolution::Wrapper {{ key: {key:?} }}"),
        };
        let left: Vec<String> = left_out
            .iter()
            .map(|k| format!("Cow::Borrowed({k:?})"))
            .collect();
        field(
            "text_model",
            format!(
                "TextModel {{ found_by: {found_by}, not_sized: {not_sized:?}, left_out: Cow::Borrowed(&[{}]) }}",
                left.join(", ")
            ),
        );
        field("levers", format!("{levers:?}"));
        field("shard", "None".to_string());
        Some(format!(
            "/// `{source}` ({model_type}), levers off.\npub const {name}: ModelConfig = ModelConfig {{\n{out}}};\n"
        ))
    }
}

/// A [`WeightFormats`] as a Rust struct literal.
fn weight_formats_item(f: &WeightFormats) -> String {
    if *f == WeightFormats::BF16 {
        return "WeightFormats::BF16".to_string();
    }
    let mut out = String::from("WeightFormats { ");
    for (name, format) in [
        ("attention", f.attention),
        ("attention_out", f.attention_out),
        ("mixers", f.mixers),
        ("dense_ffn", f.dense_ffn),
        ("experts", f.experts),
        ("shared_experts", f.shared_experts),
        ("other", f.other),
    ] {
        let _ = write!(out, "{name}: WeightFormat::{format:?}, ");
    }
    let unplanned = match &f.unplanned {
        Some(why) => format!("Some(Cow::Borrowed({why:?}))"),
        None => "None".to_string(),
    };
    let _ = write!(
        out,
        "mtp_16_bit: {}, source: FormatSource::{:?}, unplanned: {unplanned} }}",
        f.mtp_16_bit, f.source
    );
    out
}

/// The `const` name of a shipped model: `llama-3.1-8b` → `LLAMA_3_1_8B`.
pub fn const_name(model: &str) -> String {
    model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_rust_constants() {
        assert_eq!(const_name("llama-3.1-8b"), "LLAMA_3_1_8B");
        assert_eq!(const_name("qwen3.5-35b-a3b"), "QWEN3_5_35B_A3B");
    }
}
