# The reference's own rounding noise for a model of the forward example: the same weights run
# by transformers in bf16 and in f32, and the committed cached decode against one pass in bf16.
# Run from arena-spec/examples/forward after `reference.py OUT cpu qwen3-0.6b-28l` wrote OUT=/tmp/ref28.

import sys, json, torch
sys.argv = ["reference.py", "/tmp/ref28", "cpu", "qwen3-0.6b-28l"]
sys.path.insert(0, ".")
import reference as R
name, cfg, cls, layers, prefill, steps = R.MODELS[0]
ref = json.load(open("/tmp/ref28/qwen3-0.6b-28l.cpu.json"))
tokens = torch.tensor(ref["tokens"]).unsqueeze(0)
ids = ref["probe_ids"]
out = {}
for dtype in (torch.bfloat16, torch.float32):
    model, config, state = R.build(cfg, cls, layers, "cpu")
    model = model.to(dtype)
    with torch.no_grad():
        out[dtype] = model(input_ids=tokens).logits[0].float()
d = (out[torch.bfloat16][:, ids] - out[torch.float32][:, ids]).abs()
print("bf16 vs f32 over the probes, one pass of 20 tokens: max", float(d.max()), "mean per position max", float(d.mean(1).max()))
ours_vs_bf16 = [max(abs(a-b) for a,b in zip(p["probes"], out[torch.bfloat16][i, ids].tolist())) for i,p in enumerate(ref["positions"])]
print("reference (cached decode) vs one pass bf16: max", max(ours_vs_bf16))
