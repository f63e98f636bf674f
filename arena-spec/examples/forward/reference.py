#!/usr/bin/env python3
"""The reference half of the forward-pass check: transformers' own model classes for a shipped
config truncated to a few layers, with weights that both sides compute from one formula.

The weights are `weights.rs`'s counter-based generator (SplitMix64 of a per-tensor key and the
element index, scaled, rounded to bf16), written here again with numpy: the Rust step needs no
file and no Python to have them, and this script proves the two agree by writing each tensor's
fingerprint (`<name>.weights.json`, committed; the Rust tests recompute it).

For each model it writes, under OUT:

- `<name>/`: the model as `save_pretrained` writes it (`config.json`, `model.safetensors` in
  the checkpoint's names and bf16; hundreds of MiB to a few GiB: regenerated, never committed),
  which `forward --weights OUT` loads into the weight arenas instead of the checkpoint it
  writes from the same formula;
- `<name>.weights.json`: every tensor's name, shape and fingerprint;
- `<name>.<device>.json`: what an engine's forward pass must reproduce: the token ids, and for
  each position of a prefill of M tokens and of the single-token decode steps after it (with
  transformers' KV cache) the argmax, the largest logit and the logits at 256 vocabulary ids,
  and the reference's own rounding noise there (`noise`: the largest distance of those logits
  from the same model's one pass over the tokens in float32, each in units of max(|logit|, 2),
  the scale of the run's tolerance, which takes twice it where that is more);
  with the torch, transformers and device it ran on. `<device>` is `h200` or `h100` on those
  GPUs and `cpu` without a GPU.

Run: `python3 arena-spec/examples/forward/reference.py OUT [cpu|cuda] [MODEL...]`. Nothing is downloaded:
the configs are the shipped vendor files in `arena-spec/config/models/`.
"""

import json
import sys
from pathlib import Path

import numpy as np
import torch
import transformers

ROOT = Path(__file__).resolve().parents[3]
SEED = 20261201
# The host test's narrow hybrid (`model.rs`'s `narrow`, the same fields): Qwen3.5-27B's text
# model at widths a host runs in seconds.
NARROW = {"hidden_size": 512, "intermediate_size": 1024, "vocab_size": 4096,
          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
          "linear_num_key_heads": 2, "linear_num_value_heads": 6, "linear_key_head_dim": 32,
          "linear_value_head_dim": 32}
# (name, shipped config, transformers class, layers kept, prefill tokens, decode steps, fields
# set over the file's). Qwen3.5-27B keeps its first 4 layers: 3 gated delta-net layers and
# the first full-attention one, the fewest leading layers holding both kinds.
MODELS = [m for m in [
    ("qwen3-0.6b-2l", "qwen3-0.6b.json", "Qwen3ForCausalLM", 2, 16, 4, {}),
    ("qwen3-30b-a3b-2l", "qwen3-30b-a3b.json", "Qwen3MoeForCausalLM", 2, 16, 4, {}),
    ("qwen3-0.6b-28l", "qwen3-0.6b.json", "Qwen3ForCausalLM", 28, 16, 4, {}),
    ("qwen3.5-27b-narrow-4l", "qwen3.5-27b.json", "Qwen3_5ForCausalLM", 4, 16, 4, NARROW),
    ("qwen3.5-27b-4l", "qwen3.5-27b.json", "Qwen3_5ForCausalLM", 4, 16, 4, {}),
] if len(sys.argv) < 4 or m[0] in sys.argv[3:]]
PROBES = 256
MASK = (1 << 64) - 1


# --- the weight generator (weights.rs has the same, line for line) -------------------------

def fnv1a64(text):
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & MASK
    return h


def splitmix64(x):
    """SplitMix64's output function of `x` (numpy uint64 arrays wrap like Rust's wrapping ops)."""
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def scale_of(name, shape, centred):
    """(centre, half-width) of the uniform draw: norms around 1 (a zero-centred norm, which
    scales by 1 + w, around 0; `centred` for Qwen3.5), linears and the router 1/sqrt(fan-in),
    the embedding 0.1 (so the tied LM head's logits stay of order 1)."""
    if name.endswith("norm.weight"):
        plain = not centred or name.endswith("linear_attn.norm.weight")
        return (1.0 if plain else 0.0), 0.2
    if name.endswith("embed_tokens.weight"):
        return 0.0, 0.1
    return 0.0, 1.0 / np.sqrt(float(shape[-1]))


def generate(name, shape, centred=False):
    """The tensor `name` as float32 values that are exactly bf16 numbers."""
    n = int(np.prod(shape))
    key = np.uint64(fnv1a64(name) ^ SEED)
    centre, half = scale_of(name, shape, centred)
    out = np.empty(n, dtype=np.float32)
    chunk = 1 << 24
    with np.errstate(over="ignore"):
        for start in range(0, n, chunk):
            i = np.arange(start, min(n, start + chunk), dtype=np.uint64)
            u = (splitmix64(key + i) >> np.uint64(40)).astype(np.float64) / float(1 << 24)
            out[start:start + len(i)] = (centre + (2.0 * u - 1.0) * half).astype(np.float32)
    return torch.from_numpy(out).to(torch.bfloat16).reshape(shape)


def fingerprint(t):
    """Sum of the bf16 bit patterns and their sum weighted by (index + 1), both mod 2^64."""
    bits = t.reshape(-1).view(torch.int16).numpy().view(np.uint16).astype(np.uint64)
    with np.errstate(over="ignore"):
        weighted = (bits * np.arange(1, len(bits) + 1, dtype=np.uint64)).sum(dtype=np.uint64)
    return {"sum": int(bits.sum(dtype=np.uint64)), "weighted": int(weighted)}


# --- the reference run ------------------------------------------------------------------------

def build(config_file, class_name, layers, device, narrow):
    raw = json.loads((ROOT / "arena-spec/config/models" / config_file).read_text())
    if "text_config" in raw:  # a multimodal file: its text model (`model.rs` does the same)
        tied = raw.get("tie_word_embeddings")
        raw = raw["text_config"]
        if tied is not None and "tie_word_embeddings" not in raw:
            raw["tie_word_embeddings"] = tied
    raw.update(narrow)
    if "mtp_num_hidden_layers" in raw:
        raw["mtp_num_hidden_layers"] = 0
    raw["num_hidden_layers"] = layers
    for key in ("layer_types", "mlp_only_layers"):
        if isinstance(raw.get(key), list):
            raw[key] = raw[key][:layers]
    config_class = getattr(transformers, class_name.replace("ForCausalLM", "Config")
                           .replace("Qwen3_5Config", "Qwen3_5TextConfig"))
    config = config_class(**raw)
    with torch.device("meta"):
        model = getattr(transformers, class_name)(config)
    state = {}
    for key, param in model.state_dict().items():
        if config.tie_word_embeddings and key == "lm_head.weight":
            continue  # the same tensor as the embedding
        state[key] = generate(key, tuple(param.shape), config.model_type == "qwen3_5_text")
    model = model.to_empty(device=device).to(torch.bfloat16)
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and set(missing) <= {"lm_head.weight"}, (missing, unexpected)
    if config.tie_word_embeddings:
        model.tie_weights()
    # `to_empty` leaves the rotary table's (non-persistent) buffers unset: build it anew.
    model.model.rotary_emb = type(model.model.rotary_emb)(model.config).to(device)
    return model.eval(), config, state


def probe(out, ids, top_k):
    """Per position: argmax, max, the logits at `ids` (float32) and, for a MoE model, each
    layer's chosen experts (sorted), so a run can tell a routing near-tie from an error."""
    rows = [{"argmax": int(row.argmax()), "max": float(row.max()),
             "probes": [float(row[i]) for i in ids]} for row in out.logits[0].float()]
    for layer in getattr(out, "router_logits", None) or ():
        chosen = torch.topk(torch.softmax(layer.float(), dim=-1), top_k, dim=-1).indices
        for row, experts in zip(rows, chosen.tolist()):
            row.setdefault("experts", []).append(sorted(experts))
    return rows


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    device = sys.argv[2] if len(sys.argv) > 2 else ("cuda" if torch.cuda.is_available() else "cpu")
    out.mkdir(parents=True, exist_ok=True)

    for name, config_file, class_name, layers, prefill, steps, narrow in MODELS:
        model, config, state = build(config_file, class_name, layers, device, narrow)
        gen = torch.Generator().manual_seed(SEED + 1)
        tokens = torch.randint(0, config.vocab_size, (prefill + steps,), generator=gen)
        probe_ids = torch.randint(0, config.vocab_size, (PROBES,), generator=gen).tolist()
        model.save_pretrained(out / name)
        tensors = [{"name": k, "shape": list(v.shape), **fingerprint(v)} for k, v in state.items()]
        (out / f"{name}.weights.json").write_text(json.dumps(
            {"model": name, "seed": SEED, "tensors": tensors}, indent=1) + "\n")
        moe = getattr(config, "num_experts", 0) > 0
        extra = {"output_router_logits": True} if moe else {}
        top_k = getattr(config, "num_experts_per_tok", 0)
        with torch.no_grad():
            ids = tokens[:prefill].unsqueeze(0).to(device)
            first = model(input_ids=ids, use_cache=True, **extra)
            positions = probe(first, probe_ids, top_k)
            past = first.past_key_values
            for t in range(steps):
                step = tokens[prefill + t].view(1, 1).to(device)
                nxt = model(input_ids=step, past_key_values=past, use_cache=True, **extra)
                past = nxt.past_key_values
                positions += probe(nxt, probe_ids, top_k)
            # The same weights in float32, one pass over every token: how far bf16 rounding
            # (the reference's own) took each position's logits, each relative to the scale the
            # run's tolerance has at it (max(|logit|, 2)).
            exact = model.float()(input_ids=tokens.unsqueeze(0).to(device)).logits[0].float()
            for i, p in enumerate(positions):
                ids = probe_ids + [p["argmax"]]
                values = p["probes"] + [p["max"]]
                p["noise"] = max(abs(float(exact[i, j]) - v) / max(abs(v), 2.0)
                                 for j, v in zip(ids, values))
        gpu = torch.cuda.get_device_name(0) if device.startswith("cuda") else ""
        tag = "h200" if "H200" in gpu else "h100" if "H100" in gpu else device.split(":")[0]
        doc = {
            "model": name,
            "config": f"arena-spec/config/models/{config_file}",
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
            "device": torch.cuda.get_device_name(0) if device.startswith("cuda") else "cpu",
            "attn_implementation": getattr(config, "_attn_implementation", None),
            "narrowed": narrow,
        }
        (out / f"{name}.{tag}.json").write_text(json.dumps(doc, indent=1) + "\n")
        print(f"{name} on {doc['device']}: {len(positions)} positions, "
              f"argmax {[p['argmax'] for p in positions]}")
        del model, past, state


if __name__ == "__main__":
    main()
