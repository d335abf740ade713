#!/usr/bin/python3
"""Measure the activation bytes of one Llama layer and one GPT layer fine-tuned with LoRA: the
base weights frozen, low-rank adapters on some of the linears (doc/model.md section 4.9).

Usage: /usr/bin/python3 tests/validation/lora.py OUT.csv     (`make validate`: lora.csv)

The layers are measure.py's (LlamaLayer: fused RMSNorm, rotary q and k, GQA, SwiGLU; GPTLayer:
LayerNorm, biases, GeLU MLP, 1-byte dropout masks), in bf16 on the CPU, measured the same way
(saved_bytes: the storages of the tensors autograd saves, each once, parameters and the rotary
tables left out). What changes:

- every base parameter (linears, norms, biases) has requires_grad=False;
- a targeted linear becomes LoRALinear, the forward of PEFT's `lora.Linear` with
  lora_dropout = 0 (an identity): y = W x + B (A x) * (alpha / r), A (r x d_in) and B
  (d_out x r) the only trainable parameters. A and B are bf16 here, so x reaches A as it is
  (PEFT's _cast_input_dtype casts x to the adapter's dtype; with bf16 adapters that is no
  copy). fp32 adapters under autocast, PEFT's default with a bf16 Trainer, are measured on the
  side (autocast_extra below), not in the CSV;
- the layer input requires grad: the layer stands for a middle layer, whose earlier layers
  have adapters, so the gradient must flow through its frozen weights.

Targets: `none` (the frozen base alone, memfit's precision=frozen), `qv` (q_proj and v_proj,
PEFT's default for Llama) and `all-linear` (every linear of the layer: q, k, v, o, gate, up,
down; GPT: q, k, v, the projection, fc1, fc2). Ranks 8, 16 and 64; plain and fused attention.
Every row must equal the closed formula (lora_formula, tests/validation/README.md "LoRA layers")
to the byte, its main part plus the norms' per-row statistics and a few 8-byte scalars; the
script fails otherwise.
"""
import math
import sys
import time

import torch
import torch.nn as nn

from measure import (DTYPE, GPT_SHAPES, LLAMA_SHAPES, P_DROP, GPTLayer, LlamaLayer,
                     llama_default_ffn, saved_bytes, write_csv)

COLUMNS = ["layer", "arch", "variant", "seq", "micro_batch", "hidden", "heads", "kv_heads", "ffn",
           "dropout", "attention", "lora_targets", "lora_rank", "saved_bytes"]

RANKS = [8, 16, 64]
ALPHA = 16
TARGETS = {
    "llama": {"qv": ("wq", "wv"),
              "all-linear": ("wq", "wk", "wv", "wo", "gate", "up", "down")},
    "gpt": {"qv": ("wq", "wv"),
            "all-linear": ("wq", "wk", "wv", "proj", "fc1", "fc2")},
}
# (variant prefix, flash, dropout) per architecture; GPT with its dropout (memfit's default).
ATTENTIONS = {
    "llama": [("plain", False, False), ("flash", True, False)],
    "gpt": [("plain-dropout", False, True), ("flash-dropout", True, True)],
}
GPT_LORA_SHAPES = GPT_SHAPES[:6]


class LoRALinear(nn.Module):
    """PEFT's lora.Linear forward: base(x) + lora_B(lora_A(dropout(x))) * scaling, lora_dropout
    0. The frozen base keeps nothing for its weight gradient; A keeps x, B keeps x A (r wide),
    the product with the Python scalar and the sum keep nothing.

    autocast: fp32 A and B under CPU autocast (bf16), as PEFT's default fp32 adapters run in a
    bf16 Trainer: PEFT casts x to fp32 (a copy that nothing keeps) and autocast casts it back
    to bf16 for each adapter's matmul: a fresh copy of x that A keeps, one per adapter."""

    def __init__(self, base, r, alpha, autocast=False):
        super().__init__()
        self.base, self.scaling, self.autocast = base, alpha / r, autocast
        dtype = torch.float32 if autocast else DTYPE
        self.lora_A = nn.Linear(base.in_features, r, bias=False).to(dtype)
        self.lora_B = nn.Linear(r, base.out_features, bias=False).to(dtype)
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B.weight)                      # PEFT's init: B = 0

    def forward(self, x):
        result = self.base(x)
        if not self.autocast:
            return result + self.lora_B(self.lora_A(x)) * self.scaling
        with torch.autocast("cpu", dtype=torch.bfloat16):
            delta = self.lora_B(self.lora_A(x.to(torch.float32))) * self.scaling
        return (result + delta).to(result.dtype)


def lora_layer(arch, shape, flash, drop, targets, r, autocast=False):
    """measure.py's layer in bf16, every base parameter frozen, LoRALinear on targets."""
    s, b, h, a, kvh, f = shape
    torch.manual_seed(0)
    if arch == "gpt":
        layer = GPTLayer(h, a, kvh, f, P_DROP if drop else 0.0, flash)
    else:
        layer = LlamaLayer(s, h, a, kvh, f, flash, "fused")
    layer = layer.to(DTYPE)
    for p in layer.parameters():
        p.requires_grad_(False)
    for name in TARGETS[arch].get(targets, ()):
        setattr(layer, name, LoRALinear(getattr(layer, name), r, ALPHA, autocast))
    return layer


def measure_row(arch, shape, variant, flash, drop, targets, r):
    s, b, h, a, kvh, f = shape
    f = f if f is not None else (4 * h if arch == "gpt" else llama_default_ffn(h))
    shape = (s, b, h, a, kvh, f)
    layer = lora_layer(arch, shape, flash, drop, targets, r)
    x = torch.randn(s, b, h, dtype=DTYPE, requires_grad=True)
    nbytes = saved_bytes(layer, x, False)
    tail = "" if targets == "none" else f"-r{r}"
    name = f"{arch}-{variant}-{targets}{tail}-s{s}-b{b}-h{h}-a{a}-kv{kvh}-f{f}"
    return {"layer": name, "arch": arch, "variant": f"{variant}-{targets}{tail}", "seq": s,
            "micro_batch": b, "hidden": h, "heads": a, "kv_heads": kvh, "ffn": f,
            "dropout": int(drop), "attention": "flash" if flash else "plain",
            "lora_targets": targets, "lora_rank": r, "saved_bytes": nbytes}


def rows():
    for arch, shapes in (("llama", LLAMA_SHAPES), ("gpt", GPT_LORA_SHAPES)):
        for shape in shapes:
            for variant, flash, drop in ATTENTIONS[arch]:
                yield arch, shape, variant, flash, drop, "none", 0
                for targets in ("qv", "all-linear"):
                    for r in RANKS:
                        yield arch, shape, variant, flash, drop, targets, r


def lora_formula(row):
    """The closed formula of a lora.csv row, (main, stats) in bytes: main the tensors of
    doc/model.md section 4.9, stats what the formulas leave out (the norms' per-row statistics
    and plain attention's 8-byte divisor, as in activations.csv)."""
    s, b, h, a, kvh, f = (row[k] for k in ("seq", "micro_batch", "hidden", "heads", "kv_heads",
                                           "ffn"))
    t, d = s * b, h // a
    hkv = kvh * d
    flash, gpt, drop = row["attention"] == "flash", row["arch"] == "gpt", row["dropout"]
    targets, r = row["lora_targets"], row["lora_rank"]
    qkv_in = targets != "none"                  # an adapter on q, k or v reads the norm output
    every = targets == "all-linear"
    if flash:
        core = 4 * a * t
    else:
        core = (5 if drop else 2) * a * s * s * b
    # Always: norm 1 input, Q, K, V, the attention term, norm 2 input; the SwiGLU's gate, up
    # and silu(gate) (silu and the product read them), GPT's GeLU input.
    main = 2 * t * h + 2 * t * h + 4 * t * hkv + core + 2 * t * h
    main += 2 * t * f if gpt else 6 * t * f
    if gpt and drop:
        main += 2 * t * h                       # 1-byte masks after the projection and the MLP
    main += 2 * t * h if qkv_in else 0          # norm 1 output: A of q, k or v keeps it
    main += 2 * t * h if flash or every else 0  # projection input: flash keeps its output
    main += 2 * t * h if every else 0           # norm 2 output: A of gate and up (fc1)
    main += 2 * t * f if every else 0           # down (fc2) input
    adapters = len(TARGETS[row["arch"]].get(targets, ()))
    main += adapters * 2 * t * r                # x A of each adapter, kept by B
    # Two norms' statistics per row (fp32 1/rms; bf16 mean and 1/std of LayerNorm on the CPU),
    # plain attention's divisor, and each adapter's scaling alpha / r, which mul.Tensor keeps
    # as an 8-byte 0-dim double (a wrapped Python number).
    stats = 8 * t + (0 if flash else 8) + 8 * adapters
    return main, stats


def check(rows_measured):
    """True when every row is main + stats of lora_formula exactly; prints the worst gaps."""
    exact, worst = True, {}
    for row in rows_measured:
        main, stats = lora_formula(row)
        m = row["saved_bytes"]
        if main + stats != m:
            exact = False
            print(f"  MISMATCH {row['layer']}: measured {m}, formula {main + stats} "
                  f"({m - main - stats:+d})")
        gap = (m - main) / m
        if row["arch"] not in worst or gap > worst[row["arch"]][0]:
            worst[row["arch"]] = (gap, row["layer"])
    for arch, (gap, layer) in sorted(worst.items()):
        print(f"  {arch}: measured - main at most {100 * gap:.3f}% ({layer})")
    return exact


def autocast_extra():
    """On the side: fp32 adapters under autocast against bf16 ones, same Llama layer and rank,
    plain and flash. Each adapter keeps its own bf16 copy of its input instead of sharing the
    layer's tensor, and the bf16 casts of A and B (2 bytes per adapter parameter) are kept too:
    qv +2 T h (two copies of the norm output for one), all-linear +6 T h plain (three for one
    before q, k and v, two for one before gate and up; the copies before o and down replace
    tensors nothing else keeps), +8 T h flash (o's copy beside the output flash keeps). True
    when every difference is that, to the byte."""
    s, b, h, a, kvh, f = LLAMA_SHAPES[2]
    f, t, r, d = llama_default_ffn(h), s * b, 16, h // a
    io = {"wq": (h, h), "wk": (h, kvh * d), "wv": (h, kvh * d), "wo": (h, h), "gate": (h, f),
          "up": (h, f), "down": (f, h)}
    ok = True
    for flash in (False, True):
        for targets in ("qv", "all-linear"):
            got = []
            for autocast in (False, True):
                layer = lora_layer("llama", (s, b, h, a, kvh, f), flash, False, targets, r,
                                   autocast)
                x = torch.randn(s, b, h, dtype=DTYPE, requires_grad=True)
                got.append(saved_bytes(layer, x, False))
            names = TARGETS["llama"][targets]
            casts = sum(2 * r * (io[n][0] + io[n][1]) for n in names)
            per_token = 2 * h if targets == "qv" else (8 if flash else 6) * h
            extra = got[1] - got[0] - casts
            ok = ok and extra == per_token * t
            print(f"not in the CSV: fp32 adapters under autocast, {targets}, "
                  f"{'flash' if flash else 'plain'}: {extra / t:.0f} bytes a token more than "
                  f"bf16 ones (expected {per_token}), and {casts} bytes of bf16 weight casts "
                  f"(s={s} b={b} h={h} f={f}, r={r})")
    return ok


def main(argv):
    if len(argv) != 2:
        print("usage: lora.py OUT.csv", file=sys.stderr)
        return 2
    start = time.time()
    measured = []
    for arch, shape, variant, flash, drop, targets, r in rows():
        row = measure_row(arch, shape, variant, flash, drop, targets, r)
        sbh = row["seq"] * row["micro_batch"] * row["hidden"]
        print(f"{row['layer']}: {row['saved_bytes']} bytes = {row['saved_bytes'] / sbh:.3f} sbh",
              flush=True)
        measured.append(row)
    write_csv(argv[1], COLUMNS, measured)
    print(f"{len(measured)} rows in {time.time() - start:.0f} s -> {argv[1]}")
    if not autocast_extra():
        print("lora.py: fp32 adapters under autocast no longer keep what the README says",
              file=sys.stderr)
        return 1
    if not check(measured):
        print("lora.csv: the closed formula (README) no longer matches", file=sys.stderr)
        return 1
    print("lora.csv: every row = main + stats of the README's formula, exactly")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
