#!/usr/bin/env python3
"""The reference half of the forward-pass check: transformers' own model classes, on the GPU,
for a shipped config truncated to a few layers, with random weights from a fixed seed.

For each model it writes, under OUT (default: the current directory):

- `<name>.safetensors`: the weights, in transformers' names and bf16 (a few hundred MiB to a
  few GiB: regenerated, never committed; the seed makes them the same on every run);
- `<name>.reference.json`: what an engine's forward pass must reproduce (committed): the
  token ids, and for each position of a prefill of M tokens and of the single-token decode
  steps after it (with transformers' KV cache) the argmax, the largest logit, and the logits at
  256 vocabulary ids drawn from the seed; with the torch, transformers and GPU it ran on.

Run on the GPU machine: `python3 arena-spec/examples/forward/reference.py OUT`. Nothing is
downloaded: the configs are the shipped vendor files in `arena-spec/models/`.
"""

import json
import os
import sys
from pathlib import Path

import torch
import transformers

ROOT = Path(__file__).resolve().parents[3]
SEED = 20261201
# (name, shipped config, transformers class, layers kept, prefill tokens, decode steps)
MODELS = [
    ("qwen3-0.6b-2l", "qwen3-0.6b.json", "Qwen3ForCausalLM", 2, 16, 4),
    ("qwen3-30b-a3b-2l", "qwen3-30b-a3b.json", "Qwen3MoeForCausalLM", 2, 16, 4),
]
PROBES = 256


def build(config_file, class_name, layers):
    raw = json.loads((ROOT / "arena-spec/models" / config_file).read_text())
    raw["num_hidden_layers"] = layers
    for key in ("layer_types", "mlp_only_layers"):
        if isinstance(raw.get(key), list):
            raw[key] = raw[key][:layers]
    config_class = getattr(transformers, class_name.replace("ForCausalLM", "Config"))
    config = config_class(**raw)
    config.torch_dtype = torch.bfloat16
    torch.manual_seed(SEED)
    model = getattr(transformers, class_name)(config)  # weights drawn on the CPU: reproducible
    return model.to(torch.bfloat16).cuda().eval(), config


def probe(logits, ids):
    """Per position: argmax, max, and the logits at `ids` (float32)."""
    out = []
    for row in logits.float():
        out.append({
            "argmax": int(row.argmax()),
            "max": float(row.max()),
            "probes": [float(row[i]) for i in ids],
        })
    return out


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    from safetensors.torch import save_file

    for name, config_file, class_name, layers, prefill, steps in MODELS:
        model, config = build(config_file, class_name, layers)
        gen = torch.Generator().manual_seed(SEED + 1)
        tokens = torch.randint(0, config.vocab_size, (prefill + steps,), generator=gen)
        probe_ids = torch.randint(0, config.vocab_size, (PROBES,), generator=gen).tolist()
        state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
        if getattr(config, "tie_word_embeddings", False):
            state.pop("lm_head.weight", None)  # the same tensor as the embedding
        save_file(state, str(out / f"{name}.safetensors"))
        with torch.no_grad():
            ids = tokens[:prefill].unsqueeze(0).cuda()
            first = model(input_ids=ids, use_cache=True)
            positions = probe(first.logits[0], probe_ids)
            past = first.past_key_values
            for t in range(steps):
                step = tokens[prefill + t].view(1, 1).cuda()
                nxt = model(input_ids=step, past_key_values=past, use_cache=True)
                past = nxt.past_key_values
                positions += probe(nxt.logits[0], probe_ids)
        doc = {
            "model": name,
            "config": f"arena-spec/models/{config_file}",
            "class": class_name,
            "layers": layers,
            "seed": SEED,
            "prefill": prefill,
            "decode_steps": steps,
            "tokens": tokens.tolist(),
            "probe_ids": probe_ids,
            "positions": positions,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "device": torch.cuda.get_device_name(0),
            "attn_implementation": getattr(config, "_attn_implementation", None),
        }
        (out / f"{name}.reference.json").write_text(json.dumps(doc, indent=1) + "\n")
        size = os.path.getsize(out / f"{name}.safetensors") / (1 << 20)
        print(f"{name}: {len(positions)} positions, weights {size:.1f} MiB, "
              f"argmax {[p['argmax'] for p in positions]}")
        del model, past
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
