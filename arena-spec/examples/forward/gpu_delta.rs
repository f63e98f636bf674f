//! Qwen3.5's ops on a CUDA device (feature `cuda`): `gpu_delta.cu`'s kernels launched with
//! views as arguments, each view's length checked against what its loops index, as `gpu.rs`
//! launches `gpu.cu`'s. `GpuOps`'s `Ops` methods for these ops call the launches here.

use crate::gpu::{launch, GpuOps};
use crate::gpu_launch::{elementwise, need};
use crate::ops::Result;
use arena_runtime::cudarc::driver::{CudaFunction, CudaModule, LaunchConfig, PushKernelArg};
use arena_runtime::dtype::bf16;
use arena_runtime::{CudaDevice, View, ViewMut};
use std::sync::Arc;

/// `gpu_delta.cu`'s kernels, loaded from the program `gpu.cu` starts.
pub struct DeltaKernels {
    pub(crate) output_gate: CudaFunction,
    pub(crate) gdn_gates: CudaFunction,
    pub(crate) gdn_conv: CudaFunction,
    pub(crate) gdn_delta_rule: CudaFunction,
    pub(crate) gdn_gated_norm: CudaFunction,
}

impl DeltaKernels {
    pub fn load(module: &Arc<CudaModule>) -> Result<DeltaKernels> {
        let f = |name: &str| module.load_function(name);
        Ok(DeltaKernels {
            output_gate: f("output_gate")?,
            gdn_gates: f("gdn_gates")?,
            gdn_conv: f("gdn_conv")?,
            gdn_delta_rule: f("gdn_delta_rule")?,
            gdn_gated_norm: f("gdn_gated_norm")?,
        })
    }
}

type In<'a, T> = View<'a, T, CudaDevice>;
type Out<'a, 'b, T> = &'b mut ViewMut<'a, T, CudaDevice>;

impl GpuOps<'_> {
    pub(crate) fn launch_output_gate(
        &mut self,
        qkv: &In<'_, bf16>,
        out: Out<'_, '_, bf16>,
        m: usize,
    ) -> Result<()> {
        let d = self.decoder;
        let (qw, width) = (d.heads * d.head_dim, d.qkv_width());
        need(qkv, m * width, "output_gate")?;
        need(&out.as_view(), m * qw, "output_gate")?;
        let (m32, qw32, w32) = (m as i32, qw as i32, width as i32);
        launch!(
            self,
            delta.output_gate,
            elementwise(m * qw),
            qkv,
            out,
            &m32,
            &qw32,
            &w32
        )
    }

    pub(crate) fn launch_gdn_gates(
        &mut self,
        ba: &In<'_, bf16>,
        dt_a: &In<'_, bf16>,
        gates: Out<'_, '_, f32>,
        m: usize,
    ) -> Result<()> {
        let hv = self.decoder.gdn.v_heads;
        need(ba, m * 2 * hv, "gdn_gates")?;
        need(dt_a, 2 * hv, "gdn_gates")?;
        need(&gates.as_view(), m * 2 * hv, "gdn_gates")?;
        let (m32, hv32) = (m as i32, hv as i32);
        launch!(
            self,
            delta.gdn_gates,
            elementwise(m * hv),
            ba,
            dt_a,
            gates,
            &m32,
            &hv32
        )
    }

    pub(crate) fn launch_gdn_conv(
        &mut self,
        qkvz: &In<'_, bf16>,
        w: &In<'_, bf16>,
        state: Out<'_, '_, bf16>,
        out: Out<'_, '_, f32>,
        t: usize,
        fresh: bool,
    ) -> Result<()> {
        let g = self.decoder.gdn;
        let (c, width) = (g.conv_dim(), g.conv_dim() + g.value_dim());
        need(qkvz, t * width, "gdn_conv")?;
        need(w, c * g.kernel, "gdn_conv")?;
        need(&state.as_view(), (g.kernel - 1) * c, "gdn_conv")?;
        need(&out.as_view(), t * c, "gdn_conv")?;
        let (t32, c32, k32, w32) = (t as i32, c as i32, g.kernel as i32, width as i32);
        let fresh = fresh as i32;
        launch!(
            self,
            delta.gdn_conv,
            elementwise(c),
            qkvz,
            w,
            state,
            out,
            &t32,
            &c32,
            &k32,
            &w32,
            &fresh
        )
    }

    pub(crate) fn launch_gdn_delta_rule(
        &mut self,
        conv: &In<'_, f32>,
        gates: &In<'_, f32>,
        state: Out<'_, '_, f32>,
        out: Out<'_, '_, bf16>,
        t: usize,
        fresh: bool,
    ) -> Result<()> {
        let g = self.decoder.gdn;
        if g.v_dim.max(g.k_dim) > 1024 || !g.v_heads.is_multiple_of(g.k_heads) {
            return Err(
                "gpu_delta.cu's delta rule takes heads of at most 1024 lanes, \
                        a whole number of value heads a key head"
                    .into(),
            );
        }
        need(conv, t * g.conv_dim(), "gdn_delta_rule")?;
        need(gates, t * 2 * g.v_heads, "gdn_delta_rule")?;
        need(
            &state.as_view(),
            g.v_heads * g.v_dim * g.k_dim,
            "gdn_delta_rule",
        )?;
        need(&out.as_view(), t * g.value_dim(), "gdn_delta_rule")?;
        let cfg = LaunchConfig {
            grid_dim: (g.v_heads as u32, 1, 1),
            block_dim: (g.v_dim.max(g.k_dim).next_multiple_of(32) as u32, 1, 1),
            shared_mem_bytes: (2 * g.k_dim * 4) as u32,
        };
        let [t32, hk, hv, dk, dv] = [t, g.k_heads, g.v_heads, g.k_dim, g.v_dim].map(|x| x as i32);
        let fresh = fresh as i32;
        launch!(
            self,
            delta.gdn_delta_rule,
            cfg,
            conv,
            gates,
            state,
            out,
            &t32,
            &hk,
            &hv,
            &dk,
            &dv,
            &fresh
        )
    }

    pub(crate) fn launch_gdn_gated_norm(
        &mut self,
        qkvz: &In<'_, bf16>,
        w: &In<'_, bf16>,
        out: Out<'_, '_, bf16>,
        m: usize,
    ) -> Result<()> {
        let (g, eps) = (self.decoder.gdn, self.decoder.eps);
        let width = g.conv_dim() + g.value_dim();
        if g.v_dim > 1024 || !g.v_dim.is_multiple_of(32) {
            return Err("gpu_delta.cu's gated norm takes value heads of 32 to 1024 lanes".into());
        }
        need(qkvz, m * width, "gdn_gated_norm")?;
        need(w, g.v_dim, "gdn_gated_norm")?;
        need(&out.as_view(), m * g.value_dim(), "gdn_gated_norm")?;
        let cfg = LaunchConfig {
            grid_dim: (m as u32, g.v_heads as u32, 1),
            block_dim: (g.v_dim as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let [hv, dv, w32] = [g.v_heads, g.v_dim, width].map(|x| x as i32);
        launch!(
            self,
            delta.gdn_gated_norm,
            cfg,
            qkvz,
            w,
            out,
            &hv,
            &dv,
            &w32,
            &eps
        )
    }
}
