#!/usr/bin/env python3
"""Layer-width oracle: what the reference implementation (Hugging Face
transformers) builds for each config.json, measured on PyTorch's meta device.

Run by hand, NOT in CI (it needs torch + transformers, several GiB):

    python3 -m venv $VENV
    $VENV/bin/pip install --no-cache-dir torch transformers==5.24.0
    $VENV/bin/python widths.py arena-spec/models <extra dirs or files> \
        -o arena-spec/tests/oracle/widths.json

Each model is built with
    with torch.device("meta"): model = AutoModelForCausalLM.from_config(cfg)
so no weights are loaded and no memory is allocated; no network access and
no trust_remote_code are used.

Special cases:
  * model_type kimi_k2 is not a transformers type; its files declare the
    DeepSeek-V3 architecture, so it is built as deepseek_v3 from the same dict
    ("built_as": "deepseek_v3").
  * model_type minimax_m1 (the vendor's remote code) is built as transformers'
    port, minimax, with its attn_type_list (0 lightning, 1 softmax) passed as
    layer_types, which is all MiniMaxConfig reads.
  * Multimodal files whose text model sits under text_config (gemma3, llama4,
    qwen3_5, qwen3_5_moe, ...): only the text model is built, from the text
    sub-config with its text CausalLM class ("text_only": "text_sub_config");
    if that has no CausalLM class, the full model is built and only its
    language-model modules are kept ("text_only": "full_model_filtered").
  * Files whose name starts with "synthetic" are skipped (invented keys).
  * A model that fails to build records the exception text in "error".

Output (json, sort_keys=True, indent=1):
  {"transformers_version", "torch_version", "models": {stem: {
      "config_class", "model_class", "built_as", "text_only", "source", "error",
      "config_echo": {...},
      "modules": {pattern: [{"kind","in","out",("groups","kernel"),"count"}]},
      "params":  {pattern: [{"shape": [...], "count"}]},
      "param_count": int, "tied_embeddings": bool|null,
      "param_numel": {pattern: int}, "buffers_numel": {pattern: int}}}}
where pattern is the module/parameter path with every purely numeric
component replaced by "*"; where modules of two classes sit at one path (the
mixers of a hybrid model's layers), the path of what they own names the owner's
class: "model.layers.*.self_attn[KimiLinearDeltaAttention].q_proj".  "params" lists only parameters of >= 2 dims that
are not the weight/bias of a Linear (transformers' Conv1D included), Conv1d or Embedding module.
"param_count" is the number of parameter elements, each tensor counted once (tied
embeddings once); "param_numel" splits it by (owner-qualified) parameter pattern and
sums to it; "buffers_numel" does the same for persistent buffers; "tied_embeddings"
says whether the output embedding weight is the input embedding weight. In a
"full_model_filtered" build all four cover only the kept language-model tensors.
"config_echo" holds the resolved (text) config values of ECHO_KEYS that exist on
the config object (a key the file carries but transformers does not know, e.g.
full_attention_interval or attention_head_dim, shows up as a stray attribute).
A stem seen twice (same file name in two inputs) is keyed "<parent dir>/<stem>".
Build timings go to stderr (and to --timings FILE if given), not to the JSON.
"""

import argparse
import json
import os
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

import torch
import transformers
from torch import nn
from transformers import AutoConfig, AutoModelForCausalLM
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

ECHO_KEYS = [
    "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "head_dim", "vocab_size",
    "mamba_num_heads", "mamba_head_dim", "n_groups", "ssm_state_size", "expand",
    "layers_block_type", "layer_types", "num_experts", "n_routed_experts",
    "num_local_experts", "num_experts_per_tok", "moe_intermediate_size",
    "shared_expert_intermediate_size", "moe_shared_expert_intermediate_size",
    "moe_latent_size", "intermediate_size_mlp", "first_k_dense_replace",
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
    "v_head_dim", "index_n_heads", "index_head_dim", "index_topk",
    "linear_num_key_heads", "linear_key_head_dim", "linear_num_value_heads",
    "linear_value_head_dim",
    # extras that explain hybrid layer layouts
    "hybrid_override_pattern", "full_attention_interval", "num_heads",
    "state_size", "conv_kernel", "attention_head_dim",
]

# model_type aliases: types that are not transformers types but declare a
# transformers architecture in their own files.
ALIASES = {"kimi_k2": "deepseek_v3", "minimax_m1": "minimax"}

_MISSING = object()


def jsonable(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, torch.dtype):
        return str(v)
    if hasattr(v, "to_dict"):
        return jsonable(v.to_dict())
    return str(v)


def pattern(name):
    return ".".join("*" if p.isdigit() else p for p in name.split("."))


def collect_files(inputs):
    files = []
    for inp in inputs:
        p = Path(inp)
        if p.is_dir():
            files.extend(sorted(x for x in p.rglob("*.json") if x.is_file()))
        elif p.is_file():
            files.append(p)
        else:
            print(f"warning: {inp} does not exist, skipped", file=sys.stderr)
    return files


def stem_of(path):
    # a HF-style folder <model>/config.json is named by its folder
    return path.parent.name if path.name == "config.json" else path.stem


def load_config(d):
    """Return (config, built_as) for a raw config dict."""
    mt = d.get("model_type")
    if mt is None:
        raise ValueError("config has no model_type")
    built_as = ALIASES.get(mt, mt)
    if built_as not in CONFIG_MAPPING:
        raise ValueError(f"model_type {mt!r} is not known to transformers "
                         f"{transformers.__version__}")
    d = dict(d)
    d["model_type"] = built_as
    d.pop("auto_map", None)  # remote-code pointers; not used
    if mt == "minimax_m1" and "layer_types" not in d:
        # The vendor's MiniMaxM1Model lays its layers out by attn_type_list (0 lightning,
        # 1 softmax); transformers' MiniMaxConfig reads only layer_types (and would default
        # to alternating), so the same list is passed as layer_types.
        d["layer_types"] = ["full_attention" if t == 1 else "linear_attention"
                            for t in d["attn_type_list"]]
    cls = CONFIG_MAPPING[built_as]
    cfg = cls.from_dict(d)
    return cfg, built_as


def build(cfg):
    """Build the (text) CausalLM on the meta device.

    Returns (model, text_only, built_as_override, keep_prefixes)."""
    has_text_sub = (getattr(cfg, "sub_configs", None) or {}).get("text_config") is not None \
        and getattr(cfg, "text_config", None) is not None
    if not has_text_sub:
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(cfg)
        return model, None, None, None
    text_cfg = cfg.get_text_config()
    try:
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(text_cfg)
        # make sure it really is a text-only model
        return model, "text_sub_config", text_cfg.model_type, None
    except Exception as e:  # noqa: BLE001
        first_err = f"{type(e).__name__}: {e}"
    # fallback: full model, keep only language-model modules
    arch = (getattr(cfg, "architectures", None) or [None])[0]
    with torch.device("meta"):
        if arch and hasattr(transformers, arch):
            model = getattr(transformers, arch)._from_config(cfg)
        else:
            model = AutoModelForCausalLM.from_config(cfg)
    print(f"  text sub-config build failed ({first_err}); built full model", file=sys.stderr)
    return model, "full_model_filtered", None, ("language_model", "lm_head")


def keep(name, prefixes):
    if prefixes is None:
        return True
    parts = name.split(".")
    return any(p in parts for p in prefixes)


def owner_qualified(model):
    """Module name -> its pattern, with the parent's class appended to the parent's path
    component ("self_attn[KimiLinearDeltaAttention].q_proj") where modules of two classes
    sit at one path (Kimi-Linear's delta attention and MLA are both `self_attn`; Nemotron-H's
    Mamba-2, attention, MLP and MoE are all `mixer`), so one kind's modules are not taken
    for another's; every other pattern is unchanged."""
    modules = dict(model.named_modules())
    classes = {}  # parent pattern -> set of classes at it
    for name, m in modules.items():
        classes.setdefault(pattern(name), set()).add(type(m).__name__)
    out = {}
    for name in modules:
        if "." not in name:
            out[name] = pattern(name)
            continue
        parent, leaf = name.rsplit(".", 1)
        parent_pattern, leaf = out[parent], pattern(leaf)
        if len(classes[pattern(parent)]) > 1:
            out[name] = f"{parent_pattern}[{type(modules[parent]).__name__}].{leaf}"
        else:
            out[name] = f"{parent_pattern}.{leaf}"
    return out


def describe(model, keep_prefixes):
    mods = {}
    owned = set()
    qualified = owner_qualified(model)
    for name, m in model.named_modules():
        if isinstance(m, nn.Linear):
            rec = {"kind": "Linear", "in": m.in_features, "out": m.out_features}
        elif type(m).__name__ == "Conv1D" and hasattr(m, "nf"):
            # transformers' `Conv1D` (GPT-2's projections): a linear layer whose weight is
            # stored transposed, [in, out].
            rec = {"kind": "Linear", "in": m.weight.shape[0], "out": m.nf}
        elif isinstance(m, nn.Conv1d):
            k = m.kernel_size
            rec = {"kind": "Conv1d", "in": m.in_channels, "out": m.out_channels,
                   "groups": m.groups, "kernel": k[0] if len(k) == 1 else list(k)}
        elif isinstance(m, nn.Embedding):
            rec = {"kind": "Embedding", "in": m.num_embeddings, "out": m.embedding_dim}
        else:
            continue
        for pn in ("weight", "bias"):
            p = getattr(m, pn, None)
            if isinstance(p, torch.Tensor):
                owned.add(id(p))
        if not keep(name, keep_prefixes):
            continue
        mods.setdefault(qualified[name], Counter())[json.dumps(rec, sort_keys=True)] += 1
    params = {}
    for name, p in model.named_parameters():
        if id(p) in owned or p.dim() < 2 or not keep(name, keep_prefixes):
            continue
        rec = {"shape": list(p.shape)}
        params.setdefault(pattern(name), Counter())[json.dumps(rec, sort_keys=True)] += 1

    def flatten(d):
        out = {}
        for pat, ctr in d.items():
            lst = []
            for k, c in sorted(ctr.items()):
                r = json.loads(k)
                r["count"] = c
                lst.append(r)
            out[pat] = lst
        return out

    return flatten(mods), flatten(params)


def param_path(name, qualified):
    """Pattern of a parameter/buffer path, owner-qualified like owner_qualified's module
    patterns: the owning module's qualified pattern plus the leaf name."""
    if "." not in name:
        return pattern(name)
    owner, leaf = name.rsplit(".", 1)
    return f"{qualified[owner]}.{pattern(leaf)}"


def count_params(model, keep_prefixes):
    """(param_count, tied_embeddings, param_numel, buffers_numel).

    Every tensor is counted once (by identity): a tied lm_head/embedding weight counts once.
    In a filtered build a tensor counts if any of its names is kept; it is listed under the
    first kept name (named_parameters order)."""
    qualified = owner_qualified(model)
    kept = {}  # id -> (first kept name, numel)
    for name, p in model.named_parameters(remove_duplicate=False):
        if id(p) not in kept and keep(name, keep_prefixes):
            kept[id(p)] = (name, p.numel())
    param_count = sum(n for _, n in kept.values())
    param_numel = Counter()
    for name, n in kept.values():
        param_numel[param_path(name, qualified)] += n
    buffers = {}
    for mname, m in model.named_modules(remove_duplicate=False):
        for bname, b in m._buffers.items():
            if b is None or bname in m._non_persistent_buffers_set:
                continue
            full = f"{mname}.{bname}" if mname else bname
            if id(b) not in buffers and keep(full, keep_prefixes):
                buffers[id(b)] = (full, b.numel())
    buffers_numel = Counter()
    for name, n in buffers.values():
        buffers_numel[param_path(name, qualified)] += n
    tied = None
    try:
        emb, out = model.get_input_embeddings(), model.get_output_embeddings()
        if emb is not None and out is not None:
            tied = out.weight is emb.weight
    except Exception:  # noqa: BLE001
        tied = None
    return param_count, tied, dict(param_numel), dict(buffers_numel)


def echo(cfg):
    out = {}
    for k in ECHO_KEYS:
        try:
            v = getattr(cfg, k, _MISSING)
        except Exception:  # noqa: BLE001
            v = _MISSING
        if v is not _MISSING:
            out[k] = jsonable(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", help="config.json files or directories of them")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--timings", help="also write build seconds per model here (tsv)")
    args = ap.parse_args()

    files = collect_files(args.inputs)
    models = {}
    timings = []
    for f in files:
        if f.name.startswith("synthetic"):
            print(f"skip {f} (synthetic)", file=sys.stderr)
            continue
        stem = stem_of(f)
        key = stem if stem not in models else f"{f.parent.name}/{stem}"
        entry = {"config_class": None, "model_class": None, "built_as": None,
                 "text_only": None, "source": f"{f.parent.name}/{f.name}",
                 "error": None, "config_echo": {}, "modules": {}, "params": {},
                 "param_count": None, "tied_embeddings": None, "param_numel": {},
                 "buffers_numel": {}}
        models[key] = entry
        t0 = time.perf_counter()
        try:
            with open(f) as fh:
                d = json.load(fh)
            if not isinstance(d, dict):
                raise ValueError("top-level JSON is not an object")
            cfg, built_as = load_config(d)
            entry["config_class"] = type(cfg).__name__
            entry["built_as"] = built_as
            model, text_only, text_type, keep_prefixes = build(cfg)
            entry["model_class"] = type(model).__name__
            entry["text_only"] = text_only
            if text_type:
                entry["built_as"] = text_type
            echo_cfg = model.config if text_only == "text_sub_config" else cfg.get_text_config()
            entry["config_echo"] = echo(echo_cfg)
            entry["modules"], entry["params"] = describe(model, keep_prefixes)
            (entry["param_count"], entry["tied_embeddings"], entry["param_numel"],
             entry["buffers_numel"]) = count_params(model, keep_prefixes)
            del model
        except Exception as e:  # noqa: BLE001
            entry["error"] = f"{type(e).__name__}: {e}"
            print(f"  error in {f}:\n{traceback.format_exc()}", file=sys.stderr)
        dt = time.perf_counter() - t0
        timings.append((key, dt, entry["error"] is None))
        print(f"{key}: {dt:.2f} s{'' if entry['error'] is None else ' (FAILED)'}", file=sys.stderr)

    doc = {"transformers_version": transformers.__version__,
           "torch_version": torch.__version__, "models": models}
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as fh:
        json.dump(doc, fh, sort_keys=True, indent=1)
        fh.write("\n")
    if args.timings:
        with open(args.timings, "w") as fh:
            for k, dt, ok in timings:
                fh.write(f"{k}\t{dt:.2f}\t{'ok' if ok else 'FAILED'}\n")


if __name__ == "__main__":
    main()
