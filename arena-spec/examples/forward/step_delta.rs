//! A gated delta-net layer's step (Qwen3.5's `linear_attention` layers), in the arena's GDN
//! buffers: the input norm into `norm_output`; `in_proj_qkv | in_proj_z` into `ssm_qkvz`
//! (`[m, q | k | v | z]`) and `in_proj_b | in_proj_a` into `ssm_ba`; β and g into
//! `ssm_gates`; per sequence, the causal conv of its rows into `ssm_conv_out_f32` (reading
//! and updating its slot's conv state) and the delta rule into `ssm_deinterleaved` (reading
//! and updating its slot's recurrent state), `[m, Hv·Dv]` from the buffer's start (Qwen3.5's
//! projections are not head-interleaved as Qwen3-Next's, so the seeds' de-interleave buffer
//! is free to take the rule's output); the gated norm over it in place; `out_proj` into
//! `hidden_states` and the residual add. `gdn_fla_scratch` is left unread: these kernels run
//! the rule token by token, FLA's chunked prefill is what it is sized for.

use crate::ops::{Gemm, Ops, Result};
use crate::params::Params;
use crate::step::Engine;
use arena_runtime::{Allocated, Device};
use arena_spec::arena::BufferArenaGdnViews;
use arena_spec::state::StateCacheViewsMut;
use arena_spec::{BufferArena, BufferArenaPhase, StateCache};

impl<O> Engine<'_, O> {
    /// Delta-net layer `layer` over the `m` rows placed, each sequence's states in its slot of
    /// `states` (`Engine::put_batch`).
    pub(crate) fn delta_net<D: Device>(
        &mut self,
        arena: &mut Allocated<BufferArena, D>,
        w: &Params<'_, D>,
        states: &mut Allocated<StateCache, D>,
        layer: usize,
        m: usize,
    ) -> Result<()>
    where
        O: Ops<D>,
    {
        let d = self.decoder;
        let (h, g, i) = (d.hidden, d.gdn, d.index_in_kind(layer));
        let (c, value) = (g.conv_dim(), g.value_dim());
        self.begin(arena, BufferArenaPhase::Gdn)?;
        let mut v = BufferArenaGdnViews::of(arena);
        let norm = w.input_norm(layer)?;
        self.sublayer_input(
            &mut v.hidden_states,
            &mut v.residual,
            &mut v.norm_output,
            &norm,
            m,
        )?;
        let ops = &mut self.ops;
        let x = v.norm_output.as_view();
        let qkvz = Gemm::rows(c + value, h);
        ops.linear(&x, &mut v.ssm_qkvz, &w.gdn_in_qkvz(i)?, qkvz, m)?;
        let ba = Gemm::rows(2 * g.v_heads, h);
        ops.linear(&x, &mut v.ssm_ba, &w.gdn_in_ba(i)?, ba, m)?;
        ops.gdn_gates(
            &v.ssm_ba.as_view(),
            &w.gdn_dt_bias_a_log(i)?,
            &mut v.ssm_gates,
            m,
        )?;
        let mut cache = StateCacheViewsMut::of(states)?;
        let mut conv_state = cache.gdn_conv.layer(i)?;
        let mut recurrent = cache.gdn_recurrent_f32.layer(i)?;
        let conv_weight = w.gdn_conv(i)?;
        for seq in &self.seq_states {
            let (rows, slot, t) = (seq.rows.clone(), seq.slot, seq.rows.len());
            ops.gdn_conv(
                &v.ssm_qkvz.as_view().row_range(rows.clone())?,
                &conv_weight,
                &mut conv_state.row_range(slot..slot + 1)?,
                &mut v.ssm_conv_out_f32.row_range(rows.clone())?,
                t,
                seq.fresh,
            )?;
            ops.gdn_delta_rule(
                &v.ssm_conv_out_f32.as_view().row_range(rows.clone())?,
                &v.ssm_gates.as_view().row_range(rows.clone())?,
                &mut recurrent.row_range(slot..slot + 1)?,
                &mut v
                    .ssm_deinterleaved
                    .range(rows.start * value..rows.end * value)?,
                t,
                seq.fresh,
            )?;
        }
        let mut core = v.ssm_deinterleaved.range(0..m * value)?;
        ops.gdn_gated_norm(&v.ssm_qkvz.as_view(), &w.gdn_norm(i)?, &mut core, m)?;
        ops.linear(
            &core.as_view(),
            &mut v.hidden_states,
            &w.gdn_out(i)?,
            Gemm::rows(h, value),
            m,
        )?;
        ops.all_reduce(&mut v.hidden_states, m * h)?;
        ops.add(&v.residual.as_view(), &mut v.hidden_states, m * h)
    }
}
