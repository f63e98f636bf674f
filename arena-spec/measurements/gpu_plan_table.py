#!/usr/bin/env python3
"""The comparison table of `gpu_plan.md`: each model's KV pool as the whole-GPU plan sized and
allocated it on the H200 (`gpu_plan.log`, written by `tests/gpu_plan.rs`) beside the KV memory
vLLM's profile-based method would leave on the same GPU, evaluated with its formula
(`vllm/v1/worker/gpu_worker.py`, v0.19.1: `requested_memory - non_kv_cache_memory`, with
`requested_memory = total * gpu_memory_utilization` at its default 0.9 and
`non_kv_cache_memory = weights + torch peak + non-torch`; the suggested `--kv-cache-memory`
subtracts its 150 MiB redundancy buffer too). vLLM is not on the GPU machine: its profile
run's torch peak is stood in for by the measured eager activation peak of the same model at
M = 8192 (`eager_peak.json`, transformers' modules on the H200), and the non-torch memory by
the context and cuBLAS handle the test measured (594 MiB). Run from the repository root:
`python3 arena-spec/measurements/gpu_plan_table.py`."""

import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
MIB = 1 << 20
log = (HERE / "gpu_plan.log").read_text()
total = int(re.search(r"device: total (\d+) MiB", log).group(1))
non_torch = int(re.search(r"reserve measured (\d+) MiB", log).group(1))
peaks = {r["model"]: r.get("eager_peak_bytes") for r in json.loads((HERE / "eager_peak.json").read_text())["rows"]}

print("| model | layout | weights MiB | plan: KV pool MiB | vLLM method: torch peak stand-in MiB | "
      "vLLM method: KV MiB at 0.9 | vLLM suggested, −150 MiB | at 1.0, −150 MiB | plan / vLLM at 0.9 |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for line in log.splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 13 or not cells[0] or cells[0] in ("model",) or cells[0].startswith("-"):
        continue
    model, layout, weights, pool = cells[0], cells[1], cells[2], float(cells[10])
    w = int(weights.split()[0])
    peak = peaks.get(model)
    if peak is None:
        print(f"| {model} | {layout} | {weights} | {pool:.0f} | – (no eager run) | – | – | – | – |")
        continue
    if layout != "tp=1 pp=1":
        # The eager peak is of one GPU holding the whole (cut) model; a rank's is not measured.
        print(f"| {model} | {layout} | {weights} | {pool:.0f} | – (a rank's peak not measured) | – | – | – | – |")
        continue
    kv = 0.9 * total - w - peak / MIB - non_torch
    full = total - w - peak / MIB - non_torch - 150
    print(f"| {model} | {layout} | {weights} | {pool:.0f} | {peak / MIB:.0f} | {kv:.0f} | {kv - 150:.0f} "
          f"| {full:.0f} | {pool / kv:.2f} |")
