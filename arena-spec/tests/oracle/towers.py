#!/usr/bin/env python3
"""Tower oracle: the parameters of the modules a multimodal file carries beside its
language model (vision tower, audio tower, projectors, their embedders), as the
reference implementation (Hugging Face transformers) builds them on PyTorch's meta
device.

Run by hand, NOT in CI (it needs torch + transformers):

    python3 towers.py arena-spec/models <extra dirs or files> \
        -o arena-spec/tests/oracle/towers.json

Only files with a non-null "vision_config" or "audio_config" are built. Each is built
whole, from its `architectures[0]` class (the ...ForConditionalGeneration class; where
transformers spells that class otherwise, the class AutoModelForImageTextToText maps its
model_type to), with
    with torch.device("meta"): model = cls._from_config(cfg)
so nothing is loaded or allocated, and every parameter whose path has no
"language_model" component and is not "lm_head" is counted as the towers'.

Output (json, sort_keys=True, indent=1):
  {"transformers_version", "torch_version", "models": {stem: {
      "model_class", "error",
      "tower_params": int,                 # every non-language-model parameter element
      "by_module": {top: int},             # split by the first path component under the
                                           # model ("vision_tower", "embed_vision", ...)
      "params": {pattern: int}}}}          # split by parameter pattern (numbers -> "*")
A model that fails to build (a model_type transformers does not ship) records the
exception text in "error". A record built by another transformers version than the
file's (Kimi-K2.5's, whose classes transformers ships from 5.24: run with that version on
the path) carries its own "transformers_version".
"""

import argparse
import json
import sys
import traceback
from pathlib import Path

import torch
import transformers
from transformers.models.auto.configuration_auto import CONFIG_MAPPING


def pattern(name):
    return ".".join("*" if p.isdigit() else p for p in name.split("."))


def files(inputs):
    out = []
    for i in inputs:
        p = Path(i)
        out += sorted(p.glob("*.json")) if p.is_dir() else [p]
    return out


def is_language(name):
    parts = name.split(".")
    return "language_model" in parts or parts[0] == "lm_head"


def top(name):
    parts = name.split(".")
    if parts[0] == "model" and len(parts) > 1:
        return parts[1]
    return parts[0]


def record(path):
    d = json.loads(path.read_text())
    if not (d.get("vision_config") or d.get("audio_config")):
        return None
    rec = {}
    try:
        mt = d["model_type"]
        if mt not in CONFIG_MAPPING:
            raise ValueError(f"model_type {mt!r} is not known to transformers "
                             f"{transformers.__version__}")
        d = dict(d)
        d.pop("auto_map", None)
        d.pop("quantization_config", None)
        cfg = CONFIG_MAPPING[mt].from_dict(d)
        arch = d["architectures"][0]
        with torch.device("meta"):
            if hasattr(transformers, arch):
                model = getattr(transformers, arch)._from_config(cfg)
            else:
                # A vendor's class name transformers spells otherwise
                # (KimiK25ForConditionalGeneration): the class its image-text-to-text
                # auto mapping gives the model_type.
                model = transformers.AutoModelForImageTextToText.from_config(cfg)
        rec["model_class"] = type(model).__name__
        seen = set()
        total, by_module, params = 0, {}, {}
        for name, p in model.named_parameters(remove_duplicate=False):
            if id(p) in seen or is_language(name):
                continue
            seen.add(id(p))
            n = p.numel()
            total += n
            by_module[top(name)] = by_module.get(top(name), 0) + n
            params[pattern(name)] = params.get(pattern(name), 0) + n
        rec.update(tower_params=total, by_module=by_module, params=params)
    except Exception as e:  # noqa: BLE001
        rec["error"] = f"{type(e).__name__}: {e}"
        traceback.print_exc(file=sys.stderr)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    models = {}
    for f in files(a.inputs):
        r = record(f)
        if r is not None:
            print(f.stem, r.get("tower_params", r.get("error")), file=sys.stderr)
            models[f.stem] = r
    out = {"transformers_version": transformers.__version__,
           "torch_version": torch.__version__, "models": models}
    Path(a.output).write_text(json.dumps(out, sort_keys=True, indent=1) + "\n")


if __name__ == "__main__":
    main()
