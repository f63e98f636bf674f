#!/usr/bin/env python3
"""The peer the reuse slab is held against: PyTorch's eager forward pass, whose caching
allocator frees each tensor when it dies, measured as a profile-based engine measures it.

For every shipped config (`arena-spec/config/models/*.json`) that transformers can build, the model
is cut to the fewest leading layers that hold every kind of layer the config has (attention
kind, dense or MoE MLP, rope or not; at least 2: the kinds are read from the config object
transformers builds, see `layer_kinds`), built on the GPU in bf16 with transformers' own
initialisation, and run once on a prefill of M = 8192 random token ids, batch 1, SDPA
attention, `use_cache=False` (the KV cache is not the activation arena's), `logits_to_keep=128`.
The figure is `torch.cuda.max_memory_allocated()` during the forward minus what was allocated
before it (the weights and the input ids): the activations' peak.

Run on the GPU machine: `python3 arena-spec/measurements/eager_peak.py OUT.json [MODEL...]`;
`reuse.md` holds the committed table beside the arena's reuse slab.
"""

import json
import sys
import time
from pathlib import Path

import torch
import transformers

ROOT = Path(__file__).resolve().parents[2]
M = 8192
KEEP = 128


def layer_kinds(cfg):
    """Per layer, the tuple of what distinguishes its kind in this config."""
    n = cfg.num_hidden_layers
    kinds = [[] for _ in range(n)]

    def per_layer(values):
        if isinstance(values, (list, tuple, str)) and len(values) == n:
            for i in range(n):
                kinds[i].append(values[i])

    for key in ("layer_types", "layers_block_type", "hybrid_override_pattern", "no_rope_layers",
                "mlp_layer_types"):
        per_layer(getattr(cfg, key, None))
    first_dense = getattr(cfg, "first_k_dense_replace", None)
    if first_dense is not None:
        for i in range(n):
            kinds[i].append(("moe", i >= first_dense))
    mlp_only = getattr(cfg, "mlp_only_layers", None)
    if mlp_only:
        for i in range(n):
            kinds[i].append(("dense", i in mlp_only))
    step = getattr(cfg, "decoder_sparse_step", None) or getattr(cfg, "interleave_moe_layer_step", None)
    if step and step > 1:
        for i in range(n):
            kinds[i].append(("moe_step", (i + 1) % step == 0))
    pattern = getattr(cfg, "sliding_window_pattern", None)
    if isinstance(pattern, int) and pattern > 1 and not getattr(cfg, "layer_types", None):
        for i in range(n):
            kinds[i].append(("sliding", (i + 1) % pattern != 0))
    return [tuple(map(str, k)) for k in kinds]


def cut(cfg):
    """`cfg` cut to the shortest prefix of layers holding every kind, at least 2."""
    kinds = layer_kinds(cfg)
    first = {}
    for i, k in enumerate(kinds):
        first.setdefault(k, i)
    keep = max(2, max(first.values()) + 1)
    n = cfg.num_hidden_layers
    for key, value in list(vars(cfg).items()):
        if isinstance(value, (list, tuple, str)) and len(value) == n and key != "model_type":
            setattr(cfg, key, value[:keep])
    if getattr(cfg, "mlp_only_layers", None):
        cfg.mlp_only_layers = [i for i in cfg.mlp_only_layers if i < keep]
    cfg.num_hidden_layers = keep
    return cfg, keep


def measure(path):
    raw = json.loads(path.read_text())
    cfg = transformers.AutoConfig.for_model(raw.pop("model_type"), **raw).get_text_config()
    cfg, layers = cut(cfg)
    cfg._attn_implementation = "sdpa"
    with torch.device("cuda"):
        model = transformers.AutoModelForCausalLM.from_config(
            cfg, dtype=torch.bfloat16, attn_implementation="sdpa").eval()
    ids = torch.randint(0, cfg.vocab_size, (1, M), device="cuda",
                        generator=torch.Generator("cuda").manual_seed(1))
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    with torch.no_grad():
        model(input_ids=ids, use_cache=False, logits_to_keep=KEEP)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - before
    row = {"model": path.stem, "class": type(model).__name__, "layers": layers,
           "attn_implementation": model.config._attn_implementation, "eager_peak_bytes": peak}
    del model, ids
    torch.cuda.empty_cache()
    return row


def main():
    out = Path(sys.argv[1])
    wanted = set(sys.argv[2:])
    rows = []
    for path in sorted((ROOT / "arena-spec/config/models").glob("*.json")):
        if wanted and path.stem not in wanted:
            continue
        start = time.time()
        try:
            row = measure(path)
        except Exception as e:  # a family transformers cannot build or run: said, not hidden
            row = {"model": path.stem, "error": f"{type(e).__name__}: {str(e)[:300]}"}
            torch.cuda.empty_cache()
        row["seconds"] = round(time.time() - start, 1)
        rows.append(row)
        print(json.dumps(row), flush=True)
        doc = {"torch": torch.__version__, "transformers": transformers.__version__,
               "device": torch.cuda.get_device_name(0), "max_batch_tokens": M,
               "logits_to_keep": KEEP, "rows": rows}
        out.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
