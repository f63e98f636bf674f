#!/usr/bin/env python3
"""The census: every causal-LM and image-text-to-text architecture of the transformers release
the oracle pins that vLLM also serves, each with its configuration class's default config.

For each (model_type, class) of transformers' MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and
MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES whose class is a key of vLLM's
_TEXT_GENERATION_MODELS or _MULTIMODAL_MODELS (vllm/model_executor/models/registry.py, read
with `ast`, not imported), writes configs/<model_type>.json: CONFIG_MAPPING[model_type]()'s
to_dict() with `architectures` set to the class, keys sorted (a non-finite default, Mamba-2's
`time_step_limit`, written as Python's `json` writes it: `Infinity`, which the loader reads). Rows whose class cannot be
built with its defaults are listed in census.json with the reason. Nothing here needs torch.

Run by hand (not in CI), from the repository root:
  python3 -m venv /tmp/census && /tmp/census/bin/pip install transformers==5.24.0
  pip download vllm==0.33.0 --no-deps -d /tmp/vllm && unzip the wheel's
      vllm/model_executor/models/registry.py
  /tmp/census/bin/python arena-spec/tests/census/census.py --registry <registry.py> \
      --vllm-version 0.33.0
The Rust test `census` (arena-spec/tests/census.rs) loads every file and holds the census
table in arena-spec/config/FAMILIES.md to what the loader does with each.
"""

import argparse
import ast
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

# A key a variant's file leaves out, so the reference derives it from its class's defaults
# when it reads the file (as a file written without it would be read).
DROP = "<left out of the file>"

# Variants of a class's defaults, for what the defaults leave unexercised or cannot run:
# (file stem, model_type, class, overrides, why). Chosen here; each is a real model's shape.
VARIANTS = [
    ("deepseek_v2.lite", "deepseek_v2", "DeepseekV2ForCausalLM",
     {"q_lora_rank": None, "num_experts_per_tok": 6, "first_k_dense_replace": 1,
      "hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 16,
      "num_hidden_layers": 27, "intermediate_size": 10944},
     "DeepSeek-V2-Lite's shape: no q LoRA (a plain q projection), 6 experts a token (the "
     "default's null top-k routes nothing)"),
    ("granitemoeshared.shared", "granitemoeshared", "GraniteMoeSharedForCausalLM",
     {"shared_intermediate_size": 1024},
     "a shared MLP (the default's width 0 builds none)"),
    ("glm4_moe.head_dim", "glm4_moe", "Glm4MoeForCausalLM", {"head_dim": 128},
     "GLM-4.5's head_dim 128 (the default's 96 heads do not divide its hidden size 4096, and "
     "it gives no head_dim: the reference floors, the loader refuses)"),
    ("llama.biases", "llama", "LlamaForCausalLM", {"attention_bias": True, "mlp_bias": True},
     "biases on every projection (`attention_bias`, `mlp_bias`)"),
    ("granite.mlp_bias", "granite", "GraniteForCausalLM", {"mlp_bias": True},
     "MLP biases (`mlp_bias`)"),
    ("minicpm3.mlp_bias", "minicpm3", "MiniCPM3ForCausalLM", {"mlp_bias": True},
     "MLP biases (`mlp_bias`)"),
    ("cohere2_moe.shared_dense", "cohere2_moe", "Cohere2MoeForCausalLM",
     {"num_shared_experts": 1, "first_k_dense_replace": 2, "prefix_dense_intermediate_size": 4096},
     "a shared MLP and two dense layers first (the default has neither)"),
    ("nemotron.kv_heads", "nemotron", "NemotronForCausalLM", {"num_key_value_heads": 8},
     "8 kv heads (the default's null kv heads cannot be built by transformers)"),
    ("hyperclovax.no_post_norm", "hyperclovax", "HyperCLOVAXForCausalLM", {"use_post_norm": False},
     "no post-norms (`use_post_norm` false; the default has them)"),
    ("granite4_vision.deepstack", "granite4_vision", "Granite4VisionForConditionalGeneration",
     {"deepstack_layer_map": [[-19, 9], [-13, 6], [-7, 3], [-1, 0]], "downsample_rate": "4/8"},
     "four deepstack layers and a Q-Former downsampling of 4/8 (the default's null "
     "`deepstack_layer_map` and `downsample_rate` cannot be built by transformers)"),
    ("flint.no_lists", "flint", "FlintForCausalLM",
     {"layer_types": DROP, "mlp_only_layers": DROP},
     "no `layer_types` and no `mlp_only_layers` (the class's defaults: the first two layers, "
     "each `i % 4 == 1` and the last full; layers 0 and 1 dense)"),
    ("lfm2_moe.layers", "lfm2_moe", "Lfm2MoeForCausalLM",
     {"layer_types": ["full_attention" if i in (2, 6, 10, 14, 18, 21, 24, 28) else "conv"
                      for i in range(32)]},
     "its layers listed (the default's `layer_types` is null, which the reference cannot "
     "build): attention at 2, 6, 10, 14, 18, 21, 24 and 28, short convolutions elsewhere"),
    ("cohere_compass.rope", "cohere_compass", "CohereCompassForConditionalGeneration",
     {"text_config": {"rope_parameters": {"full_attention": {"rope_type": "default",
                                                              "rope_theta": 10000.0}}}},
     "a RoPE for its full-attention layers (the default's empty `rope_parameters` cannot be "
     "built by transformers: its rotary embedding looks up `full_attention`)"),
    ("dbrx.rope_theta", "dbrx", "DbrxForCausalLM",
     {"attn_config": {"kv_n_heads": 1, "rope_theta": 500000.0}},
     "DBRX's `attn_config.rope_theta` (the default's attention config has none, and "
     "transformers' attention reads it)"),
    ("granitemoehybrid.attention", "granitemoehybrid", "GraniteMoeHybridForCausalLM",
     {"layer_types": ["attention" if i in (5, 15, 25) else "linear_attention" for i in range(32)],
      "num_key_value_heads": 8},
     "attention layers among the Mamba-2 ones (5, 15 and 25, 8 kv heads), as Granite 4.0-H "
     "mixes them (the default's layers are all Mamba-2)"),
    ("granitemoehybrid.dense", "granitemoehybrid", "GraniteMoeHybridForCausalLM",
     {"layer_types": ["attention" if i in (5, 15, 25) else "linear_attention" for i in range(32)],
      "num_local_experts": 0, "shared_intermediate_size": 8192},
     "no experts: each layer's FFN is its shared MLP alone (8192 wide), as in Granite 4.0-H's "
     "dense models"),
    ("minimax_m3_vl.dense_first", "minimax_m3_vl", "MiniMaxM3SparseForConditionalGeneration",
     {"text_config": {"mlp_layer_types": ["dense"] * 3 + ["sparse"] * 57}},
     "MiniMax-M3's first three layers dense (its `moe_layer_freq`), the default routes in "
     "every layer"),
    ("falcon.new_decoder", "falcon", "FalconForCausalLM",
     {"new_decoder_architecture": True, "num_kv_heads": 8, "num_attention_heads": 128,
      "hidden_size": 8192, "num_hidden_layers": 60},
     "Falcon-40B's shape: the new decoder architecture, 8 kv heads, two LayerNorms a layer (the "
     "default is Falcon-7B's multi-query layer with one)"),
    ("falcon.rw", "falcon", "FalconForCausalLM",
     {"parallel_attn": False, "multi_query": False, "bias": True, "alibi": True,
      "hidden_size": 2048, "num_attention_heads": 32, "num_hidden_layers": 24,
      "vocab_size": 50304},
     "Falcon-RW-1B's shape: sequential attention and MLP, every head its own keys and values, "
     "biases, ALiBi"),
    ("glm4v_moe.head_dim", "glm4v_moe", "Glm4vMoeForConditionalGeneration",
     {"text_config": {"head_dim": 128}}, "GLM-4.5V's head_dim 128 (as glm4_moe's)"),
]


def registry(path: Path) -> dict:
    """vLLM's class -> (module, class) for text generation and multimodal models."""
    tree = ast.parse(path.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id in (
                "_TEXT_GENERATION_MODELS",
                "_MULTIMODAL_MODELS",
            ):
                for k, v in zip(node.value.keys, node.value.values):
                    try:
                        out[ast.literal_eval(k)] = ast.literal_eval(v)
                    except ValueError:
                        pass
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--registry", required=True, type=Path, help="vLLM's registry.py")
    ap.add_argument("--vllm-version", required=True, help="the release the registry is from")
    a = ap.parse_args()

    import transformers
    from transformers import CONFIG_MAPPING
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES as CAUSAL,
        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES as IMAGE_TEXT,
    )

    served = registry(a.registry)
    rows = {}
    for mapping in (CAUSAL, IMAGE_TEXT):
        for model_type, cls in mapping.items():
            if isinstance(cls, (list, tuple)):
                cls = cls[0]
            if cls in served:
                rows[(model_type, cls)] = served[cls]
    out_dir = HERE / "configs"
    out_dir.mkdir(exist_ok=True)
    for old in out_dir.glob("*.json"):
        old.unlink()
    census = []
    for (model_type, cls), (module, vllm_cls) in sorted(rows.items()):
        entry = {"model_type": model_type, "class": cls, "vllm": f"{module}.{vllm_cls}"}
        try:
            config = CONFIG_MAPPING[model_type]()
            d = config.to_dict()
        except Exception as e:  # a class that needs arguments, or remote code
            entry["no_default"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
            census.append(entry)
            continue
        d["architectures"] = [cls]
        d.pop("transformers_version", None)
        name = f"{model_type}.json" if sum(mt == model_type for mt, _ in rows) == 1 else f"{model_type}--{cls}.json"
        entry["file"] = name
        (out_dir / name).write_text(json.dumps(d, indent=1, sort_keys=True) + "\n")
        census.append(entry)
    variants = []
    for stem, model_type, cls, overrides, why in VARIANTS:
        kept = {k: v for k, v in overrides.items() if v != DROP}
        d = CONFIG_MAPPING[model_type](**kept).to_dict()
        for k in overrides.keys() - kept.keys():
            d.pop(k)
        d["architectures"] = [cls]
        d.pop("transformers_version", None)
        (out_dir / f"{stem}.json").write_text(json.dumps(d, indent=1, sort_keys=True) + "\n")
        variants.append({"file": f"{stem}.json", "model_type": model_type, "class": cls,
                         "overrides": overrides, "why": why})
    meta = {
        "transformers": transformers.__version__,
        "vllm": a.vllm_version,
        "rows": census,
        "variants": variants,
    }
    (HERE / "census.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"{len(census)} architectures, {sum('file' in e for e in census)} with a default config")


if __name__ == "__main__":
    main()
