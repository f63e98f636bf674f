//! The engine's six levers, read from the environment in one place ([`Levers::from_env`],
//! called by the default load paths) and carried on the config, so sizing itself never
//! reads the process environment and tests can pass the levers explicitly.

use serde::Serialize;
use thiserror::Error;

/// The engine's on/off switches. Three open a buffer: `fp8_rowwise` →
/// `ssm_rowwise_w_bf16`, `gguf_native_q2` → `q2_dequant_scratch`, `gguf_native_q2_mmq` →
/// `q2_act_q8`. One closes buffers: `scratch_by_format` (chosen here, not the seeds')
/// closes the quantized paths' activation scratch the checkpoint's format never writes. The
/// two FP32 levers (`fp32_gate`, `fp32_routing`) change no size: the buffers they read,
/// `gate_logits_f32` and `moe_router_in_f32`, are sized whatever they say, as the seeds have
/// it; they are carried so reports show the
/// configuration an arena was sized under.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Levers {
    /// `METRALE_FP32_GATE`: top-K on unrounded FP32 gate logits.
    pub fp32_gate: bool,
    /// `METRALE_FP32_ROUTING`: the router GEMM reads an FP32 MoE input.
    pub fp32_routing: bool,
    /// `METRALE_FP8_ROWWISE`: row-wise FP8 GDN prefill; needs `ssm_rowwise_w_bf16`.
    pub fp8_rowwise: bool,
    /// `METRALE_GGUF_NATIVE_Q2`: keep-packed Q2_0 prefill; needs `q2_dequant_scratch`.
    pub gguf_native_q2: bool,
    /// `METRALE_GGUF_NATIVE_Q2_MMQ`: keep-packed Q2_0 MMQ prefill; needs `q2_act_q8`.
    pub gguf_native_q2_mmq: bool,
    /// `ARENA_SCRATCH_BY_FORMAT` (chosen here; off keeps the seeds' arena as the seeds size
    /// it): size the quantized paths' activation scratch for the checkpoint's weight format
    /// (`quantization_config`) only. The seeds size `ffn_act_q8` (the Q4_K MMQ path, which
    /// no `config.json` format names), `ffn_act_a` / `ffn_act_scale(_kmajor)`, `fp8_act` /
    /// `fp8_act_scale(_kmajor)` and `moe_fp8_scratch` (FP8, NVFP4 and int8 activations) for
    /// every model; with this lever a 16-bit checkpoint has none of them and any other
    /// format keeps all but `ffn_act_q8` ([`super::ModelConfig::fp8_activation_scratch`]),
    /// unless a quantized-path lever above runs such a path anyway (`fp8_rowwise` keeps the
    /// FP8 scratch, the GGUF levers all of it).
    pub scratch_by_format: bool,
}

/// A lever's value or name was not understood.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LeverError {
    #[error("{variable}={value:?} is not a lever value: use 1 (on) or 0 (off), or leave it unset")]
    BadValue { variable: String, value: String },
    #[error("unknown lever `{name}`; the levers are: {}", Levers::NAMES.iter().map(|(n, v)| format!("{n} ({v})")).collect::<Vec<_>>().join(", "))]
    Unknown { name: String },
}

impl Levers {
    /// Each lever's field name and environment variable.
    pub const NAMES: [(&'static str, &'static str); 6] = [
        ("fp32_gate", "METRALE_FP32_GATE"),
        ("fp32_routing", "METRALE_FP32_ROUTING"),
        ("fp8_rowwise", "METRALE_FP8_ROWWISE"),
        ("gguf_native_q2", "METRALE_GGUF_NATIVE_Q2"),
        ("gguf_native_q2_mmq", "METRALE_GGUF_NATIVE_Q2_MMQ"),
        ("scratch_by_format", "ARENA_SCRATCH_BY_FORMAT"),
    ];

    /// Every lever on.
    pub const ALL_ON: Levers = Levers {
        fp32_gate: true,
        fp32_routing: true,
        fp8_rowwise: true,
        gguf_native_q2: true,
        gguf_native_q2_mmq: true,
        scratch_by_format: true,
    };

    /// The levers as the process environment sets them: the one place that reads it.
    pub fn from_env() -> Result<Levers, LeverError> {
        Self::from_lookup(|var| std::env::var(var).ok())
    }

    /// The levers from any variable lookup (`1`, `0` or unset; anything else is an error).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Levers, LeverError> {
        let mut levers = Levers::default();
        for (name, variable) in Self::NAMES {
            if let Some(value) = lookup(variable) {
                let on = parse_switch(&value).ok_or_else(|| LeverError::BadValue {
                    variable: variable.to_string(),
                    value: value.clone(),
                })?;
                levers.set(name, on)?;
            }
        }
        Ok(levers)
    }

    /// Sets a lever by field name (`fp8_rowwise`) or variable name (`METRALE_FP8_ROWWISE`).
    pub fn set(&mut self, name: &str, on: bool) -> Result<(), LeverError> {
        let field = Self::NAMES
            .iter()
            .find(|(n, v)| n.eq_ignore_ascii_case(name) || v.eq_ignore_ascii_case(name))
            .map(|(n, _)| *n)
            .ok_or_else(|| LeverError::Unknown {
                name: name.to_string(),
            })?;
        *self.field_mut(field) = on;
        Ok(())
    }

    /// Applies `NAME=0|1`.
    pub fn apply(&mut self, assignment: &str) -> Result<(), LeverError> {
        let (name, value) = assignment
            .split_once('=')
            .ok_or_else(|| LeverError::BadValue {
                variable: assignment.to_string(),
                value: String::new(),
            })?;
        let on = parse_switch(value).ok_or_else(|| LeverError::BadValue {
            variable: name.to_string(),
            value: value.to_string(),
        })?;
        self.set(name, on)
    }

    /// Each lever's field name and value.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, bool)> + '_ {
        Self::NAMES.iter().map(move |(n, _)| (*n, self.get(n)))
    }

    fn get(&self, field: &str) -> bool {
        let mut copy = *self;
        *copy.field_mut(field)
    }

    fn field_mut(&mut self, field: &str) -> &mut bool {
        match field {
            "fp32_gate" => &mut self.fp32_gate,
            "fp32_routing" => &mut self.fp32_routing,
            "fp8_rowwise" => &mut self.fp8_rowwise,
            "gguf_native_q2" => &mut self.gguf_native_q2,
            "gguf_native_q2_mmq" => &mut self.gguf_native_q2_mmq,
            "scratch_by_format" => &mut self.scratch_by_format,
            _ => unreachable!("field names come from Levers::NAMES"),
        }
    }
}

fn parse_switch(value: &str) -> Option<bool> {
    match value.trim() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn unset_zero_and_one() {
        assert_eq!(Levers::from_lookup(lookup(&[])), Ok(Levers::default()));
        let l = Levers::from_lookup(lookup(&[
            ("METRALE_FP8_ROWWISE", "1"),
            ("METRALE_FP32_GATE", "0"),
        ]))
        .unwrap();
        assert!(l.fp8_rowwise && !l.fp32_gate);
    }

    #[test]
    fn any_other_value_names_the_variable() {
        let err = Levers::from_lookup(lookup(&[("METRALE_GGUF_NATIVE_Q2", "yes")])).unwrap_err();
        assert_eq!(
            err,
            LeverError::BadValue {
                variable: "METRALE_GGUF_NATIVE_Q2".into(),
                value: "yes".into()
            }
        );
        assert!(err.to_string().contains("METRALE_GGUF_NATIVE_Q2"));
    }

    #[test]
    fn assignments_by_either_name() {
        let mut l = Levers::default();
        l.apply("fp8_rowwise=1").unwrap();
        l.apply("METRALE_GGUF_NATIVE_Q2_MMQ=1").unwrap();
        assert!(l.fp8_rowwise && l.gguf_native_q2_mmq && !l.gguf_native_q2);
        assert!(matches!(l.apply("nope=1"), Err(LeverError::Unknown { .. })));
        assert!(matches!(
            l.apply("fp8_rowwise=2"),
            Err(LeverError::BadValue { .. })
        ));
        assert_eq!(l.iter().filter(|(_, on)| *on).count(), 2);
    }
}
