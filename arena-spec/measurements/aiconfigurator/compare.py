#!/usr/bin/env python3
"""The whole-GPU plan of `arena gpu-plan` beside NVIDIA AIConfigurator's memory estimate.

Compares, per GPU, for ten models at tp 1, 2 and 8 on an H200 (141 GiB): weight bytes, KV bytes
per token and per sequence, the recurrent state of hybrid models, activation memory, the reserve
(CUDA context, cuBLAS, NCCL) and the sum of everything but the KV pool. Written as a Markdown table
(committed as table.md beside this script).

Inputs, the same for both where both take them: 141 GiB of GPU memory; 64 sequences of 8192 tokens
(AIC: batch_size 64, isl 4096 + osl 4096, max_seq_len 8192; arena: --max-batch-size 64
--max-seq-len 8192); 8192 tokens in one forward pass (AIC: num_tokens=8192; arena:
--max-batch-tokens 8192); BF16 KV cache (AIC kvcache_quant_mode bfloat16; arena --kv-dtype bf16);
experts sharded by tensor parallelism, no expert parallelism (AIC moe_tp_size=tp, moe_ep_size=1;
arena --ep 1); no MTP layers; text model only (arena --text-only; AIC's Qwen3.5
model holds no vision tower).
Both read the same files: each model's config.json and hf_quant_config.json as bundled with
aiconfigurator-core (its model_configs/ folder), copied into a temporary checkpoint directory.

How AIC is called (aiconfigurator-core 0.12.0, paths under aiconfigurator_core/), the way its own
KV-capacity estimator does (KVCacheEstimator.from_request, sdk/memory.py:245, its call at :324),
but with isl, osl and max_seq_len set to the inputs above where it passes 1:
  sdk/config_builders.py:26   build_model_config(tp_size, pp_size=1, attention_dp_size=1,
                              moe_tp_size=tp, moe_ep_size=1, kvcache_quant_mode="bfloat16")
  sdk/models/__init__.py:97   get_model(<checkpoint dir>, model_config, "vllm")
  sdk/backends/factory.py:11  get_backend("vllm")
  sdk/perf_database.py:1221   get_database("h200_sxm", "vllm", <latest version>)
  sdk/backends/base_backend.py:1673  backend._get_memory_usage(model, database, batch_size=64,
                              beam_width=1, isl=4096, osl=4096, num_tokens=8192, max_seq_len=8192,
                              mtp_activation_scaling=False) -> GiB {weights, activations, kvcache,
                              nccl, others}
  sdk/models/base.py:239      model.get_kvcache_bytes_per_sequence(n): KV per token is
                              f(1) - f(0); per sequence f(8192) - f(0); recurrent state f(0) per
                              sequence (Qwen3.5 overrides it at sdk/models/qwen35.py:235)
The table's header lists the line numbers found at run time.

Run by hand (not in CI), from the repository root, with aiconfigurator-core installed:
  python arena-spec/measurements/aiconfigurator/compare.py --arena target/debug/arena \
      -o arena-spec/measurements/aiconfigurator/table.md
"""

import argparse
import importlib.metadata
import inspect
import json
import logging
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import aiconfigurator_core
from aiconfigurator_core.sdk import perf_database
from aiconfigurator_core.sdk.backends.factory import get_backend
from aiconfigurator_core.sdk.config_builders import build_model_config
from aiconfigurator_core.sdk.models import get_model
from aiconfigurator_core.sdk.models.base import BaseModel

REPO = Path(__file__).resolve().parents[3]
GIB = 1 << 30
MIB = 1 << 20
SYSTEM, BACKEND = "h200_sxm", "vllm"
# (label, Hugging Face id as named in aiconfigurator_core/model_configs/)
MODELS = [
    ("Qwen3-32B (dense, GQA)", "Qwen/Qwen3-32B"),
    ("Qwen3-32B-FP8 (block FP8)", "Qwen/Qwen3-32B-FP8"),
    ("Llama-3.1-70B-Instruct-FP8 (ModelOpt FP8)", "nvidia/Llama-3.1-70B-Instruct-FP8"),
    ("Qwen3-235B-A22B (MoE)", "Qwen/Qwen3-235B-A22B"),
    ("Qwen3-235B-A22B-NVFP4 (MoE, ModelOpt NVFP4)", "nvidia/Qwen3-235B-A22B-NVFP4"),
    ("DeepSeek-V3 (MLA, MoE, block FP8)", "deepseek-ai/DeepSeek-V3"),
    ("GLM-5-NVFP4 (MLA + DSA indexer, NVFP4)", "nvidia/GLM-5-NVFP4"),
    ("gpt-oss-120b (MXFP4 experts, sliding window)", "openai/gpt-oss-120b"),
    ("Nemotron-3-Nano-30B-A3B-BF16 (Mamba-2 hybrid)", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"),
    ("Qwen3.5-27B (Gated DeltaNet hybrid)", "Qwen/Qwen3.5-27B"),
]


def checkpoint_dir(configs: Path, hf_id: str, root: Path) -> Path:
    """A directory holding the bundled config.json (+ hf_quant_config.json) of `hf_id`."""
    stem = hf_id.replace("/", "--")
    out = root / stem
    out.mkdir()
    shutil.copyfile(configs / f"{stem}_config.json", out / "config.json")
    quant = configs / f"{stem}_hf_quant_config.json"
    if quant.exists():
        shutil.copyfile(quant, out / "hf_quant_config.json")
    return out


def arena_plan(arena: str, ckpt: Path, tp: int, a: argparse.Namespace) -> dict:
    """One rank of `arena gpu-plan` (the binding rank), and whether the plan fits."""
    def run(gpu_memory: str):
        cmd = [arena, "gpu-plan", str(ckpt), "--gpu-memory", gpu_memory, "--tp", str(tp), "--ep", "1",
               "--max-seq-len", str(a.isl + a.osl), "--max-batch-size", str(a.batch),
               "--max-batch-tokens", str(a.tokens), "--kv-dtype", "bf16", "--text-only", "--json"]
        return subprocess.run(cmd, capture_output=True, text=True)
    p, fits = run(f"{a.gpu_gib}GiB"), True
    if p.returncode != 0:
        if "exceed the GPU" not in p.stderr:
            raise RuntimeError(f"{ckpt.name} tp{tp}: {p.stderr.strip()}")
        p, fits = run("100000GiB"), False  # still sizes weights, arena, KV per token
        if p.returncode != 0:
            raise RuntimeError(f"{ckpt.name} tp{tp}: {p.stderr.strip()}")
    d = json.loads(p.stdout)
    r = d["ranks"][d["binding_rank"]]
    return {
        "fits": fits,
        "weights": r["weights_exact_bytes"],
        "kv_token": sum(k["bytes_per_token"] for k in r["kv_layers"]),
        "kv_seq": r["sequence_bytes"],
        "state": r["state_bytes"],
        "act": r["arena_bytes"],
        "reserve": r["reserve_bytes"],
        "nccl": r["nccl_bytes"] or 0,
        "non_kv": r["weights_bytes"] + r["towers_bytes"] + r["arena_bytes"] + r["state_bytes"]
        + r["reserve_bytes"],
    }


def aic_estimate(ckpt: Path, tp: int, database, backend, a: argparse.Namespace) -> dict:
    """AIC's memory estimate for one GPU, in bytes."""
    config = build_model_config(tp_size=tp, pp_size=1, attention_dp_size=1, moe_tp_size=tp,
                                moe_ep_size=1, kvcache_quant_mode="bfloat16")
    model = get_model(str(ckpt), config, BACKEND)
    mem = backend._get_memory_usage(model, database, batch_size=a.batch, beam_width=1, isl=a.isl,
                                    osl=a.osl, num_tokens=a.tokens, max_seq_len=a.isl + a.osl,
                                    mtp_activation_scaling=False)
    mem = {k: v * GIB for k, v in mem.items()}
    seq = a.isl + a.osl
    kv0 = model.get_kvcache_bytes_per_sequence(0)
    non_kv = mem["weights"] + mem["activations"] + mem["nccl"] + mem["others"]
    return {
        "fits": non_kv <= database.system_spec["gpu"]["mem_capacity"],
        "family": model.model_family,
        "weights": mem["weights"],
        "kv_token": model.get_kvcache_bytes_per_sequence(1) - kv0,
        "kv_seq": model.get_kvcache_bytes_per_sequence(seq) - kv0,
        "state": a.batch * kv0,
        "act": mem["activations"],
        "reserve": mem["nccl"] + mem["others"],
        "nccl": mem["nccl"],
        "non_kv": non_kv,
    }


def where(obj) -> str:
    """`file:line` of a function, relative to the aiconfigurator_core package."""
    pkg = Path(aiconfigurator_core.__file__).parent
    return f"{Path(inspect.getsourcefile(obj)).relative_to(pkg)}:{inspect.getsourcelines(obj)[1]}"


def git_commit() -> str:
    p = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else "unknown"


NOTES = """\
Where the two differ, and why, as far as AIC's code tells (read against aiconfigurator-core 0.12.0;
paths under aiconfigurator_core/):

- **Reserve.** AIC adds `other_mem` = {other:.2f} GiB to every GPU (systems/{system}.yaml: "increase
  from 551MB to 3.5GB for safer deployment, this will cover part of the inaccurate mem calc"), plus
  `nccl_mem` for tp > 1 ({nccl}).
  The plan keeps the CUDA context and a cuBLAS workspace as measured on an H200
  ({reserve:.0f} MiB) and, for tp > 1, NCCL's buffers as NCCL 2.26.2's source allocates them
  with its default environment (484 MiB at tp 2, 790 at tp 8: ring buffers, small allocations
  and, above two ranks, NVLS; `gpu_plan::nccl_bytes` cites each term). AIC's figures match the
  source's allocations at initialisation (its 50 MiB step from 2 to 4 ranks is NVLS's set-up)
  and leave out the ring and NVLS buffers NCCL allocates at the first all-reduce.
- **Activations.** AIC (sdk/backends/base_backend.py, `_get_memory_usage`): `2 * num_tokens *
  num_heads * head_dim * c[min(tp, 8)]` bytes, with a coefficient per model family (the vLLM backend
  takes TRT-LLM's table: LLAMA 11/6.5/5/5, MOE and DEEPSEEK 22/13/10/10, other families 10/6/5/5 at
  tp 1/2/4/8), plus, for the DEEPSEEK and DEEPSEEKV32 families here, a MoE dispatch workspace of
  `num_tokens * h * num_experts * topk / moe_ep / 128 * 4` bytes; at least 70 MiB. With num_tokens
  given, it depends on neither the batch size nor the layer types (Mamba-2, Gated DeltaNet). The
  plan's arena is the sum of the forward pass's buffers at 8192 tokens and 64 sequences.
- **Weights.** AIC sums `get_weights()` over the model's context-phase ops only
  (base_backend.py:1706). Where the ratio is not 1:
  - Qwen3-235B-A22B (both), gpt-oss-120b: the MOE family's context ops have no LM head (its logits
    GEMM is built only among the generation ops, sdk/models/moe.py:322), so AIC leaves out
    `vocab * hidden * 2 / tp` bytes (1.16 GiB at tp 1 for Qwen3-235B-A22B, 1.08 GiB for
    gpt-oss-120b).
  - gpt-oss-120b: AIC prices the MXFP4 experts at 0.5 byte a weight (`w4a16_mxfp4`, sdk/common.py:
    1279), without the E8M0 scale of every 32 weights (+6.25 %); the plan keeps the scales and pads
    each rank's expert width to a multiple of 64 as vLLM's Triton MXFP4 backend does (360 to 384
    at tp 8), which is why the ratio falls with tp.
  - DeepSeek-V3 and GLM-5-NVFP4: AIC builds the routed experts, shared expert and router on every
    layer (`ops.MoE("context_moe", self._num_layers, ...)`, sdk/models/deepseek.py:737,
    sdk/models/deepseek_v32.py:493), where the first `first_k_dense_replace` = 3 layers hold a dense
    FFN; and it keeps the whole embedding table on every rank (deepseek.py:655,
    deepseek_v32.py:431), where vLLM shards it by vocabulary.
  - Nemotron-3-Nano: equal at tp 1; for tp > 1 AIC keeps the whole embedding table on every rank
    (sdk/models/nemotron_h.py:127).
- **KV per token.** Both count BF16 keys and values of each attention layer of one rank, KV heads
  replicated where tp exceeds their count, the MLA latent (and GLM-5's indexer keys) unsharded.
  AIC's Nemotron-H model has no override of the base formula (sdk/models/base.py:214,
  `num_kv_heads_per_gpu * head_dim * num_layers * 2`), so it counts all 52 layers of the hybrid
  pattern where 6 are attention layers (8.7 times the plan's figure), and prices no Mamba-2 conv
  or SSM state, where the plan keeps one state slot per sequence. AIC's Qwen3.5 model counts only
  the full-attention layers and prices the Gated DeltaNet state per sequence
  (sdk/models/qwen35.py:215-238), which equals the plan's state cache.
- **KV per sequence.** gpt-oss-120b: AIC caps its banded layers at the 128-token window
  (sdk/models/moe.py:66); the plan holds `window - 1 + max_batch_tokens` tokens of them, capped at
  the sequence (vLLM's `SlidingWindowSpec.max_memory_usage_bytes`), the whole 8192-token sequence
  at 8192 tokens a pass. The plan's figure is also rounded to its pool's pages (DeepSeek-V3,
  GLM-5).
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = next((p for p in ("target/release/arena", "target/debug/arena")
                    if (REPO / p).exists()), "target/debug/arena")
    ap.add_argument("--arena", default=str(REPO / default), help="the arena binary")
    ap.add_argument("-o", "--output", help="write the Markdown here (default: stdout)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--isl", type=int, default=4096)
    ap.add_argument("--osl", type=int, default=4096)
    ap.add_argument("--tokens", type=int, default=8192, help="tokens in one forward pass")
    ap.add_argument("--gpu-gib", type=int, default=141)
    ap.add_argument("--tp", type=int, nargs="+", default=[1, 2, 8])
    a = ap.parse_args()
    logging.disable(logging.WARNING)

    version = perf_database.get_latest_database_version(SYSTEM, BACKEND)
    database = perf_database.get_database(SYSTEM, BACKEND, version)
    if database is None:
        sys.exit(f"no {BACKEND} database for {SYSTEM}")
    backend = get_backend(BACKEND)
    configs = Path(aiconfigurator_core.__file__).parent / "model_configs"
    spec = database.system_spec
    capacity = spec["gpu"]["mem_capacity"]
    if capacity != a.gpu_gib * GIB:
        print(f"note: AIC's {SYSTEM} capacity is {capacity / GIB:.2f} GiB", file=sys.stderr)

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, hf_id in MODELS:
            ckpt = checkpoint_dir(configs, hf_id, Path(tmp))
            for tp in a.tp:
                rows.append((label, tp, arena_plan(a.arena, ckpt, tp, a),
                             aic_estimate(ckpt, tp, database, backend, a)))
                print(f"{hf_id} tp{tp}", file=sys.stderr)

    g = lambda b: f"{b / GIB:.2f}"
    m = lambda b: f"{b / MIB:.1f}"
    yn = lambda ok: "yes" if ok else "**no**"
    out = [
        "# Whole-GPU plan vs AIConfigurator's memory estimate (H200, per GPU)",
        "",
        f"Generated by `compare.py` (run by hand). arena at commit `{git_commit()}`; "
        f"aiconfigurator-core {importlib.metadata.version('aiconfigurator-core')}, backend "
        f"`{BACKEND}` (perf database {SYSTEM} {version}; the memory estimate reads only its "
        f"system spec). Inputs for both: {a.gpu_gib} GiB GPU, {a.batch} sequences of "
        f"{a.isl + a.osl} tokens (AIC isl {a.isl} + osl {a.osl}), {a.tokens} tokens per forward "
        "pass, BF16 KV cache, tensor parallelism with experts TP-sharded (no EP), no MTP layers, "
        "text model only. Checkpoints: the config.json and hf_quant_config.json bundled in "
        "aiconfigurator-core's model_configs/.",
        "",
        f"AIC functions used: `get_model` ({where(get_model)}), `get_database` "
        f"({where(perf_database.get_database)}), `_get_memory_usage` "
        f"({where(type(backend)._get_memory_usage)}), `get_kvcache_bytes_per_sequence` "
        f"({where(BaseModel.get_kvcache_bytes_per_sequence)}, overridden per family).",
        "",
        "Columns (GiB unless named): **weights** = arena `weights_exact_bytes` vs AIC `weights`; "
        "**KV B/tok** = the sum of arena `kv_layers[*].bytes_per_token` vs AIC "
        "`get_kvcache_bytes_per_sequence(1) - (0)`; **KV MiB/seq** = arena `sequence_bytes` vs AIC "
        f"`get_kvcache_bytes_per_sequence({a.isl + a.osl}) - (0)`; **state** = arena "
        f"`state_bytes` vs AIC {a.batch} x `get_kvcache_bytes_per_sequence(0)`; **act** = arena "
        "`arena_bytes` vs AIC `activations`; **reserve** = arena `reserve_bytes` (NCCL included) "
        "vs AIC `nccl + others`; **non-KV** = arena weights (rounded) + arena + state + reserve vs "
        f"AIC weights + activations + nccl + others; **fits** = non-KV within {a.gpu_gib} GiB "
        "(arena / AIC). A plan that does not fit 141 GiB was rerun on a larger GPU to size it.",
        "",
        "| model | tp | fits | weights arena | weights AIC | AIC / arena | KV B/tok arena | "
        "KV B/tok AIC | KV MiB/seq arena | KV MiB/seq AIC | state arena | state AIC | act arena | "
        "act AIC | reserve arena | reserve AIC | non-KV arena | non-KV AIC |",
        "|---|---:|---|" + "---:|" * 15,
    ]
    for label, tp, r, c in rows:
        fits = f"{yn(r['fits'])} / {yn(c['fits'])}"
        out.append(
            f"| {label} | {tp} | {fits} | {g(r['weights'])} | {g(c['weights'])} | "
            f"{c['weights'] / r['weights']:.3f} | {r['kv_token']:.0f} | {c['kv_token']:.0f} | "
            f"{m(r['kv_seq'])} | {m(c['kv_seq'])} | {g(r['state'])} | {g(c['state'])} | "
            f"{g(r['act'])} | {g(c['act'])} | {g(r['reserve'])} | {g(c['reserve'])} | "
            f"{g(r['non_kv'])} | {g(c['non_kv'])} |")
    nccl = ", ".join(f"tp {k}: {v / MIB:.0f} MiB" for k, v in spec["misc"]["nccl_mem"].items() if v)
    reserve = min(r["reserve"] - r["nccl"] for _, _, r, _ in rows)
    out += ["", NOTES.format(other=spec["misc"]["other_mem"] / GIB, system=SYSTEM, nccl=nccl,
                             reserve=reserve / MIB)]
    text = "\n".join(out)
    if a.output:
        Path(a.output).write_text(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
