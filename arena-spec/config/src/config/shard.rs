//! One GPU's config of a parallel layout: [`ModelConfig::shard`] splits heads, widths,
//! experts and layers by the rules `crate::parallel` documents (vLLM's and SGLang's, cited
//! there), so the unchanged `BufferSizes::from_config` sizes that GPU's arena.

use super::{Block, ModelConfig};
use crate::parallel::{ParallelLayout, Rank, RankShard, ShardError};

/// `value / by`, or the engine's refusal naming the field.
fn split(
    model: &str,
    field: &'static str,
    value: usize,
    by_name: &'static str,
    by: usize,
) -> Result<usize, ShardError> {
    if !value.is_multiple_of(by) {
        return Err(ShardError::Indivisible {
            model: model.to_string(),
            field,
            value,
            by_name,
            by,
        });
    }
    Ok(value / by)
}

/// Heads split over `tp`, or one replicated on every rank when there are no more heads than
/// ranks (vLLM's kv heads, and Mamba-2's single group).
fn split_or_replicate(
    model: &str,
    field: &'static str,
    heads: usize,
    tp: usize,
) -> Result<usize, ShardError> {
    if heads >= tp {
        return split(model, field, heads, "tp", tp);
    }
    if !tp.is_multiple_of(heads) {
        return Err(ShardError::NotReplicable {
            model: model.to_string(),
            field,
            value: heads,
            by_name: "tp",
            by: tp,
        });
    }
    Ok(1)
}

impl ModelConfig {
    /// The config rank `rank` sees: its heads, widths, experts and layers. Size its arena
    /// with the unchanged `BufferSizes::from_config`. A split the engine would refuse (heads
    /// not divisible by `tp`, experts not divisible by `ep`, more stages than layers) is an
    /// error naming the field and the numbers.
    pub fn shard(&self, rank: &Rank) -> Result<ModelConfig, ShardError> {
        let model: &str = &self.source;
        if let Some(shard) = &self.shard {
            return Err(ShardError::AlreadySharded {
                model: model.to_string(),
                index: shard.rank.index,
            });
        }
        // `Rank`'s fields are public: re-check what `ParallelLayout::new` and `rank` check.
        let layout = ParallelLayout::new(rank.layout.tp, rank.layout.ep, rank.layout.pp)?;
        layout.rank(rank.index)?;
        let (tp, ep) = (layout.tp, layout.ep);
        let mut c = self.clone();

        if self.num_attention_layers() > 0 && self.num_attention_heads > 0 {
            // The head size stays what the whole model's is (it may have come from
            // `hidden / heads`, which the split heads would change).
            c.num_attention_heads = split(
                model,
                "num_attention_heads",
                self.num_attention_heads,
                "tp",
                tp,
            )?;
            if self.full_attention_heads > 0 {
                c.full_attention_heads = split(
                    model,
                    "num_attention_heads_per_layer",
                    self.full_attention_heads,
                    "tp",
                    tp,
                )?;
            }
            if !self.is_mla() {
                c.head_dim_field = Some(self.head_dim());
                c.num_key_value_heads =
                    split_or_replicate(model, "num_key_value_heads", self.num_key_value_heads, tp)?;
                if self.global_kv_heads > 0 {
                    c.global_kv_heads = split_or_replicate(
                        model,
                        "num_global_key_value_heads",
                        self.global_kv_heads,
                        tp,
                    )?;
                }
            }
        }

        let has_dense_ffn = !self.is_moe() || self.moe_dense_layers > 0;
        c.intermediate_size = if has_dense_ffn && self.shared_ffn_doubled {
            // Gemma 4's double-wide MLPs are twice the others, which split by tp: the
            // narrow width splits, and the wide one is twice the narrow one's share.
            2 * split(
                model,
                self.family.dense_width_key(),
                self.intermediate_size / 2,
                "tp",
                tp,
            )?
        } else if has_dense_ffn {
            split(
                model,
                self.family.dense_width_key(),
                self.intermediate_size,
                "tp",
                tp,
            )?
        } else {
            // Only LoRA and the Q2 scratch read it on a model without dense layers:
            // rounded up, never smaller than the shard the engine would make.
            self.intermediate_size.div_ceil(tp)
        };

        let local_experts = if self.is_moe() {
            c.moe_intermediate_size = split(
                model,
                "moe_intermediate_size",
                self.moe_intermediate_size,
                "tp / ep",
                layout.moe_tp(),
            )?;
            c.shared_expert_intermediate_size = split(
                model,
                "shared_expert_intermediate_size",
                self.shared_expert_intermediate_size,
                "tp",
                tp,
            )?;
            split(model, "num_experts", self.num_experts, "ep", ep)?
        } else if ep > 1 {
            return Err(ShardError::NoExperts {
                model: model.to_string(),
                ep,
            });
        } else {
            0
        };

        if self.has_gdn() {
            c.linear_num_key_heads = split(
                model,
                "linear_num_key_heads",
                self.linear_num_key_heads,
                "tp",
                tp,
            )?;
            c.linear_num_value_heads = split(
                model,
                "linear_num_value_heads",
                self.linear_num_value_heads,
                "tp",
                tp,
            )?;
        }
        if self.has_short_conv() {
            // vLLM's `ShortConv`: `in_proj` is a `MergedColumnParallelLinear` of three
            // `hidden`-wide outputs and the conv is channel-sharded, so B, C and x are each
            // `hidden / tp` on a rank.
            c.short_conv_dim = split(model, "hidden_size", self.short_conv_dim, "tp", tp)?;
        }
        if self.has_lightning() {
            // vLLM's `MiniMaxText01LinearAttention`: `qkv_proj` and `output_gate` are
            // column-parallel by head, `out_proj` row-parallel, so a rank holds heads / tp.
            c.lightning_heads =
                split(model, "num_attention_heads", self.lightning_heads, "tp", tp)?;
        }
        if self.has_kda() {
            // vLLM's `KimiDeltaAttention` (`layers/kda.py`): q/k/v, `f_b_proj`, `g_b_proj` and
            // `b_proj` column-parallel by head, `o_proj` row-parallel; the low-rank `f_a_proj`
            // and `g_a_proj` replicated (their head_dim-wide outputs stay whole).
            c.kda_heads = split(model, "linear_num_heads", self.kda_heads, "tp", tp)?;
        }
        if self.has_mamba() {
            c.mamba_num_heads = split(model, "mamba_num_heads", self.mamba_num_heads, "tp", tp)?;
            c.mamba_n_groups = if self.mamba_n_groups == 1 {
                1
            } else {
                split(model, "n_groups", self.mamba_n_groups, "tp", tp)?
            };
        }

        let n = self.layers.len();
        if layout.pp > n {
            return Err(ShardError::MoreStagesThanLayers {
                model: model.to_string(),
                pp: layout.pp,
                layers: n,
            });
        }
        let layers = layout.stage_layers(n, rank.stage());
        c.layers = self.layers[layers.clone()].to_vec().into();
        c.dense_ffn_layers = self.dense_ffn_layers[layers.clone()].to_vec().into();
        c.kv_layers = self.kv_layers[layers.clone()].to_vec().into();
        c.indexer_layers = self.indexer_layers[layers.clone()].to_vec().into();
        // DeciLM's blocks of the stage, each split as its layer is (vLLM's
        // `DeciLMDecoderLayer`: a `LlamaAttention` of the block's kv heads, a `LlamaMLP` of its
        // width).
        if !self.blocks.is_empty() {
            let mut blocks = Vec::with_capacity(layers.len());
            for b in &self.blocks[layers.clone()] {
                blocks.push(Block {
                    kv_heads: match b.kv_heads {
                        0 => 0,
                        kv => split_or_replicate(model, "block_configs.attention", kv, tp)?,
                    },
                    ffn_width: match b.ffn_width {
                        0 => 0,
                        width => split(model, "block_configs.ffn", width, "tp", tp)?,
                    },
                });
            }
            c.blocks = blocks.into();
        }
        c.num_hidden_layers = c.layers.len();
        c.moe_dense_layers = c.dense_ffn_layers.iter().filter(|&&d| d).count();
        let holds_lm_head = rank.stage() + 1 == layout.pp;
        c.shard = Some(RankShard {
            rank: *rank,
            layers,
            local_experts,
            holds_lm_head,
        });
        Ok(c)
    }
}
