//! The element type of a recurrent mixer's temporal state (GDN's and Mamba-2's `[heads, …]`
//! state a sequence keeps between steps), as the reference engine allocates it for a file.
//!
//! vLLM's rule (v0.33.0, `4ba787ec9`), followed here: the conv state is in
//! `mamba_cache_dtype`, the temporal state in `mamba_ssm_cache_dtype`, both `"auto"` by
//! default (`vllm/config/cache.py`: 296–303), `"auto"` being the model's dtype for the conv
//! state and the conv state's for the temporal one (`MambaStateDtypeCalculator.
//! _mamba_state_dtype`, `vllm/model_executor/layers/mamba/mamba_utils.py`: 98–110, which
//! Mamba-2's and GDN's calculators call) — unless a per-model hook sets it from the file
//! before the cache is built (`vllm/model_executor/models/config.py`):
//! - `NemotronHForCausalLMConfig` (812–839): the file's top-level `mamba_ssm_cache_dtype`,
//!   **FP32 where the file has no such key** (`DEFAULT_MAMBA_SSM_CACHE_DTYPE`, the family
//!   default here; transformers' `NemotronHConfig` defaults the key to `"float32"` too);
//! - `Qwen3_5ForConditionalGenerationConfig` (953–977; Qwen3.5 and Qwen3.6, dense and MoE):
//!   the text config's `mamba_ssm_dtype` (every vendor file says `float32`), the model's
//!   dtype without it;
//! - every other family: `"auto"`, the model's dtype (Qwen3-Next: `qwen3_next.py`: 882–890,
//!   no hook; Mamba-2: no hook).
//!
//! SGLang (0.5.23, `python/sglang/srt/configs/mamba_utils.py`: 47–107) reads
//! `text_config.mamba_ssm_dtype`, then the top-level key, and defaults to FP32 for every
//! hybrid family — Qwen3-Next included, where vLLM keeps the model's dtype; transformers'
//! modules never read either key. Where they differ the plan follows vLLM, the engine whose
//! pool it plans; an engine run as SGLang runs Qwen3-Next passes an override
//! (`arena_spec::gpu_plan::GpuPlanInputs::state_dtype`, `arena gpu-plan --state-dtype f32`). KDA's
//! recurrent state is FP32 and lightning attention's in the model's dtype whatever the keys
//! (`kda_state_dtype`: 133–149, `linear_attention_state_dtype`: 55–60): they are not this
//! choice.

use super::error::ConfigError;
use super::family::Family;
use super::fields::Fields;

/// The element type of a GDN or Mamba-2 temporal state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StateDtype {
    /// 4 bytes an element (`float32`).
    F32,
    /// 2 bytes an element: the model's 16-bit dtype (`bfloat16`, `float16`, `"auto"`).
    Bf16,
}

impl StateDtype {
    /// Bytes of one element.
    pub const fn bytes(self) -> usize {
        match self {
            StateDtype::F32 => 4,
            StateDtype::Bf16 => 2,
        }
    }

    /// Whether it is FP32 (the state cache's gate).
    pub const fn is_f32(self) -> bool {
        matches!(self, StateDtype::F32)
    }
}

/// Where a recurrent state's dtype was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "from", content = "key", rename_all = "snake_case")]
pub enum StateDtypeSource {
    /// The file's key, as the file spells it (`text_config.mamba_ssm_dtype`).
    Key(&'static str),
    /// The family's default in the reference engine, where the file has no key (vLLM's
    /// NemotronH hook: FP32).
    FamilyDefault,
    /// The model's dtype: the family has no hook (vLLM's `"auto"`), or the file's key says
    /// `"auto"`.
    ModelDtype,
    /// The caller chose it (`GpuPlanInputs::state_dtype`, `arena gpu-plan --state-dtype`).
    Override,
}

/// A recurrent state's dtype and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct RecurrentStateDtype {
    pub dtype: StateDtype,
    pub source: StateDtypeSource,
}

impl RecurrentStateDtype {
    /// The model's dtype, read from nothing: a family without a hook.
    pub const MODEL_DTYPE: RecurrentStateDtype = RecurrentStateDtype {
        dtype: StateDtype::Bf16,
        source: StateDtypeSource::ModelDtype,
    };

    /// `dtype` where the caller gives one, else this.
    pub const fn or_override(self, dtype: Option<StateDtype>) -> RecurrentStateDtype {
        match dtype {
            Some(dtype) => RecurrentStateDtype {
                dtype,
                source: StateDtypeSource::Override,
            },
            None => self,
        }
    }
}

/// A family's hook: the key it reads, as a flat file and a nested one spell it (the
/// report names the spelling), and its default without it.
struct Hook {
    key: &'static str,
    text_key: &'static str,
    default: RecurrentStateDtype,
}

/// vLLM's per-model hooks (`vllm/model_executor/models/config.py`, `MODELS_CONFIG_MAP`).
const fn hook(family: Family) -> Option<Hook> {
    match family {
        Family::NemotronH => Some(Hook {
            key: "mamba_ssm_cache_dtype",
            text_key: "text_config.mamba_ssm_cache_dtype",
            default: RecurrentStateDtype {
                dtype: StateDtype::F32,
                source: StateDtypeSource::FamilyDefault,
            },
        }),
        Family::Qwen35 | Family::Qwen35Moe => Some(Hook {
            key: "mamba_ssm_dtype",
            text_key: "text_config.mamba_ssm_dtype",
            default: RecurrentStateDtype::MODEL_DTYPE,
        }),
        _ => None,
    }
}

/// The temporal state's dtype for the file of `family`: `text` is the text model's object
/// (the top level for a file that does not nest one).
pub(super) fn recurrent_state_dtype(
    family: Family,
    text: &Fields,
) -> Result<RecurrentStateDtype, ConfigError> {
    let Some(hook) = hook(family) else {
        return Ok(RecurrentStateDtype::MODEL_DTYPE);
    };
    // vLLM reads the text model's config (`hf_text_config`): `text_config` where the file
    // nests one, else the top level.
    let spelled = if text.prefix.is_empty() {
        hook.key
    } else {
        hook.text_key
    };
    let Some(value) = text.opt_str(hook.key)? else {
        return Ok(hook.default);
    };
    let dtype = match value {
        "float32" | "fp32" => StateDtype::F32,
        "bfloat16" | "float16" | "half" | "bf16" | "fp16" => StateDtype::Bf16,
        "auto" => return Ok(RecurrentStateDtype::MODEL_DTYPE),
        other => {
            return Err(text.invalid(
                hook.key,
                format!(
                    "is {other:?}: a recurrent state's dtype must be float32, bfloat16, \
                     float16 or auto"
                ),
            ))
        }
    };
    Ok(RecurrentStateDtype {
        dtype,
        source: StateDtypeSource::Key(spelled),
    })
}
