#!/usr/bin/env python3
"""The table of `reuse.md`'s eager-peak section: each model's eager activation peak
(`eager_peak.json`, written by `eager_peak.py` on the GPU) beside the arena's slabs as
`arena plan MODEL --json` gives them at its defaults (M = 8192, the model's context, block 16,
batch 128, levers off), and the reuse slab again with the `scratch_by_format` lever on (the
quantized paths' activation scratch sized for the checkpoint's format only). Run from the
repository root after `cargo build --release` (or name another binary in `ARENA_BIN`):
`python3 arena-spec/measurements/eager_peak_table.py`."""

import json
import os
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
MIB = 1 << 20
ARENA = os.environ.get("ARENA_BIN", "target/release/arena")


def plan(model, *levers):
    args = [ARENA, "plan", model, "--json"] + [a for l in levers for a in ("--lever", l)]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


doc = json.loads((HERE / "eager_peak.json").read_text())
print(f"Eager: torch {doc['torch']}, transformers {doc['transformers']}, {doc['device']}, "
      f"M = {doc['max_batch_tokens']}, batch 1, logits_to_keep={doc['logits_to_keep']}, "
      "use_cache=False.\n")
print("| model | transformers class (layers kept) | eager peak | arena reuse slab | reuse / eager "
      "| reuse slab, scratch by format | that / eager | arena plain slab |")
print("|---|---|---|---|---|---|---|---|")
for row in doc["rows"]:
    doc = plan(row["model"])
    reuse, plain = doc["reuse_bytes"], doc["slab_bytes"]
    by_format = plan(row["model"], "scratch_by_format=1")["reuse_bytes"]
    if "error" in row:
        reason = row["error"].split(":")[0] + ": " + row["error"].split(":", 1)[1].strip()[:90]
        print(f"| {row['model']} | not run: {reason} | – | {reuse / MIB:.1f} MiB | – "
              f"| {by_format / MIB:.1f} MiB | – | {plain / MIB:.1f} MiB |")
        continue
    eager = row["eager_peak_bytes"]
    print(f"| {row['model']} | {row['class']} ({row['layers']}) | {eager / MIB:.1f} MiB "
          f"| {reuse / MIB:.1f} MiB | {reuse / eager:.2f}× | {by_format / MIB:.1f} MiB "
          f"| {by_format / eager:.2f}× | {plain / MIB:.1f} MiB |")
