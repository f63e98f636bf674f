"""Checkpoint-load speed: a Qwen3-8B-shaped checkpoint (transformers' names, BF16, shards of
about 5 GB as save_pretrained writes them) from the page cache into the weight arenas
(`arena weights load`, one or several builds of it), against a plain pinned host-to-device
copy of the same bytes (the limit) and safetensors' own load to the GPU, in interleaved rounds.

Run on the GPU machine: `python3 checkpoint_load.py OUT ROUNDS ARENA[,ARENA...] [4b]`, OUT a
folder with room for 16 GB; the first round of each build also `--verify`s every byte."""
import json, os, subprocess, sys, time, torch, transformers
from pathlib import Path
from safetensors.torch import save_file, load_file

out = Path(sys.argv[1]); rounds = int(sys.argv[2])  # argv[3]: arena binaries, comma-separated
# Qwen3-8B's shapes, or Qwen3-4B's with a fourth argument "4b".
big = len(sys.argv) < 5 or sys.argv[4] != "4b"
cfg = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 4096 if big else 2560,
       "intermediate_size": 12288 if big else 9728, "num_attention_heads": 32, "num_key_value_heads": 8,
       "head_dim": 128, "num_hidden_layers": 36, "vocab_size": 151936,
       "max_position_embeddings": 40960, "rope_theta": 1000000, "tie_word_embeddings": False,
       "rms_norm_eps": 1e-6, "attention_bias": False, "torch_dtype": "bfloat16"}
if not big:
    cfg["tie_word_embeddings"] = True
out.mkdir(parents=True, exist_ok=True)
(out / "config.json").write_text(json.dumps(cfg))
config = transformers.AutoConfig.for_model(**cfg)
with torch.device("meta"):
    model = transformers.AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16)
shapes = {n: tuple(p.shape) for n, p in model.state_dict().items()}
t0 = time.time()
shards, cur, size, limit = [], {}, 0, 5 << 30
for n, s in shapes.items():
    t = torch.empty(s, dtype=torch.bfloat16).fill_(0.5)
    if size + t.numel() * 2 > limit and cur:
        shards.append(cur); cur, size = {}, 0
    cur[n] = t; size += t.numel() * 2
shards.append(cur)
weight_map, total = {}, 0
for i, sh in enumerate(shards):
    name = f"model-{i+1:05d}-of-{len(shards):05d}.safetensors"
    save_file(sh, out / name, metadata={"format": "pt"})
    for n, t in sh.items():
        weight_map[n] = name; total += t.numel() * 2
(out / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}))
del shards, cur
print(f"wrote {total} bytes in {len(weight_map)} tensors, {time.time()-t0:.1f} s", flush=True)
files = sorted(out.glob("*.safetensors"))
# Into the page cache.
for f in files:
    with open(f, "rb") as fh:
        while fh.read(1 << 26): pass
dev = torch.device("cuda:0")
def pinned_copy():
    buf = torch.empty(1 << 30, dtype=torch.uint8).pin_memory()
    dst = torch.empty(1 << 30, dtype=torch.uint8, device=dev)
    torch.cuda.synchronize(); t = time.time(); done = 0
    while done < total:
        n = min(1 << 30, total - done)
        dst[:n].copy_(buf[:n], non_blocking=True); done += n
    torch.cuda.synchronize(); return total / (time.time() - t) / 1e9
def st_load():
    torch.cuda.synchronize(); t = time.time()
    for f in files:
        d = load_file(f, device="cuda:0"); del d
    torch.cuda.synchronize(); return total / (time.time() - t) / 1e9
def arena(binary, verify=False):
    t = time.time()
    r = subprocess.run([binary, "weights", "load", str(out), "--device", "cuda:0"] + (["--verify"] if verify else []), capture_output=True, text=True)
    wall = time.time() - t
    if r.returncode: print(r.stderr); raise SystemExit(1)
    print("   ", binary, r.stdout.strip(), f"(process wall {wall:.3f} s)", flush=True)
    line = next(l for l in r.stdout.splitlines() if l.endswith("GB/s"))
    return float(line.split()[-2])
binaries = sys.argv[3].split(",")
r = subprocess.run([binaries[0], "weights", "check", str(out)], capture_output=True, text=True)
print("check rc", r.returncode, r.stdout.strip().splitlines()[0], r.stdout.strip().splitlines()[-1], flush=True)
for k in range(rounds):
    rates = [arena(b, k == 0) for b in binaries]
    p, s = pinned_copy(), st_load()
    print(f"round {k}: " + ", ".join(f"{b.split('/')[-1]} {a:.2f} GB/s ({a/p:.3f} of pinned)" for b, a in zip(binaries, rates)) + f", pinned copy {p:.2f} GB/s, safetensors load_file {s:.2f} GB/s", flush=True)
print(torch.cuda.get_device_name(0), torch.__version__)
