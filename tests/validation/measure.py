#!/usr/bin/python3
"""Measure the activation bytes of one GPT layer and one Llama layer with PyTorch.

Usage: /usr/bin/python3 tests/validation/measure.py OUT.csv     (run by `make validate`)

Every layer is built the way doc/model.md sections 4.1-4.5 describe it, tensor by tensor, and run
forward once in bf16 on the CPU under torch.autograd.graph.saved_tensors_hooks. The pack hook sees
every tensor that autograd saves for the backward pass; we add up the bytes of their storages,
each storage once, without the parameters and the constant rotary tables (doc/model.md section
14.4). The result goes to a CSV that tests/unit/test_validation.c compares with memfit's formulas.

Written for Debian's python3-torch (PyTorch 1.13, CPU):
- Tensor.untyped_storage() is Tensor._storage() there;
- there is no F.scaled_dot_product_attention, so FusedAttention below stands for a FlashAttention
  kernel: a custom autograd Function that saves only q, k, v, the output and the fp32
  log-sum-exp of each row and head (Dao et al. 2022), and regenerates the attention dropout from
  its seed instead of keeping a mask;
- non-reentrant torch.utils.checkpoint keeps its input outside the hooks' view, so the
  checkpointed layer uses use_reentrant=True, whose Function saves the layer input (2 sbh).

Modelling choices that make the layers match doc/model.md section 4 (and real training code):
- Q, K and V come from three Linear layers that share their input (the saved norm output is one
  tensor, as with a fused QKV matrix), so q, k and v each own their storage;
- plain attention with GQA does not copy K and V per head: the g query heads that share a KV head
  are stacked along the rows (q reshaped to (b * kv_heads, g * s, d)), so one score matmul per KV
  head sees K of kv width;
- dropout is torch.native_dropout, whose mask is 1 byte per element as on a GPU (F.dropout on the
  CPU would keep a bf16 mask);
- fused RMSNorm is a Function that saves its input and one fp32 1/rms per row; the written-out
  RMSNorm is weight * (x * rsqrt(mean(x^2) + eps)) in bf16 eager PyTorch, whose autograd keeps,
  besides its input, x^2 (saved by mean() in PyTorch 1.13) and x * rsqrt (saved by the weight's
  product): +4 sbh per norm, +8 sbh per layer (doc/model.md section 4.5). The Hugging Face form,
  which upcasts to fp32, keeps +16 sbh per layer instead; it is printed on the side, not in the
  CSV.
"""
import csv
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

DTYPE = torch.bfloat16
P_DROP = 0.1

COLUMNS = ["layer", "arch", "variant", "seq", "micro_batch", "hidden", "heads", "kv_heads", "ffn",
           "dropout", "attention", "checkpoint", "norm", "saved_bytes"]

# (seq, micro_batch, hidden, heads, kv_heads, ffn); ffn None = the architecture's default.
GPT_SHAPES = [
    (128, 2, 128, 2, 2, None),
    (256, 1, 128, 4, 4, None),
    (64, 4, 192, 3, 3, None),
    (256, 2, 256, 4, 4, None),
    (128, 2, 256, 8, 8, None),
    (192, 1, 384, 6, 6, None),
    (128, 3, 512, 8, 8, None),
    (512, 1, 256, 2, 2, None),
    (96, 2, 320, 5, 5, 768),    # ffn != 4h
    (128, 2, 256, 8, 2, None),  # GQA in a GPT layer (g = 4)
]
LLAMA_SHAPES = [
    (128, 2, 128, 4, 2, None),   # g = 2
    (256, 1, 192, 6, 3, None),   # g = 2
    (128, 2, 256, 8, 2, None),   # g = 4
    (64, 4, 256, 8, 1, None),    # g = 8
    (256, 2, 384, 6, 3, None),   # g = 2
    (128, 2, 512, 8, 2, None),   # g = 4
    (192, 1, 512, 16, 2, None),  # g = 8
    (512, 1, 256, 4, 4, None),   # g = 1 (no GQA)
    (96, 3, 320, 10, 5, 640),    # g = 2, ffn != the default
    (128, 2, 256, 8, 4, 1024),   # g = 2, ffn = 4h
]


def llama_default_ffn(h):
    """doc/model.md section 2.2: 256 * ceil(floor(8h/3) / 256)."""
    return 256 * math.ceil((8 * h // 3) / 256)


# ---------------------------------------------------------------------------------------------
# Building blocks


class FusedAttention(torch.autograd.Function):
    """A FlashAttention-like kernel: q (s, b, a, d), k and v (s, b, a_kv, d) -> o (s, b, a, d).

    Saves q, k, v, o and the fp32 log-sum-exp (b, a, s): 2sbh + 4 s b h_kv + 2sbh + 4asb bytes.
    Attention dropout is regenerated in the backward pass from a seed kept as a Python int, as
    the fused kernels do, so no mask is saved. Query head j uses KV head j // g (GQA).
    """

    @staticmethod
    def _probs(q, k, scale, causal):
        s, b, a, d = q.shape
        kvh = k.shape[2]
        g = a // kvh
        qg = q.float().permute(1, 2, 0, 3).reshape(b, kvh, g * s, d)
        kg = k.float().permute(1, 2, 3, 0)                      # (b, kvh, d, s)
        scores = torch.matmul(qg, kg).reshape(b, kvh, g, s, s) * scale
        if causal:
            mask = torch.ones(s, s, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
        return scores.reshape(b, a, s, s)

    @staticmethod
    def _dropout_keep(shape, p, seed):
        gen = torch.Generator().manual_seed(seed)
        return (torch.rand(shape, generator=gen) >= p).float() / (1.0 - p)

    @staticmethod
    def _pv(probs, v):
        b, a, s, _ = probs.shape
        kvh, d = v.shape[2], v.shape[3]
        vg = v.float().permute(1, 2, 0, 3)                      # (b, kvh, s, d)
        o = torch.matmul(probs.reshape(b, kvh, (a // kvh) * s, s), vg)
        return o.reshape(b, a, s, d).permute(2, 0, 1, 3)        # (s, b, a, d)

    @staticmethod
    def forward(ctx, q, k, v, p, causal, seed):
        scale = 1.0 / math.sqrt(q.shape[-1])
        scores = FusedAttention._probs(q, k, scale, causal)
        lse = torch.logsumexp(scores, dim=-1)                   # (b, a, s), fp32
        probs = torch.exp(scores - lse.unsqueeze(-1))
        if p > 0:
            probs = probs * FusedAttention._dropout_keep(probs.shape, p, seed)
        o = FusedAttention._pv(probs, v).to(q.dtype).contiguous()
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.p, ctx.causal, ctx.seed, ctx.scale = p, causal, seed, scale
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        s, b, a, d = q.shape
        kvh = k.shape[2]
        g = a // kvh
        scores = FusedAttention._probs(q, k, ctx.scale, ctx.causal)
        probs = torch.exp(scores - lse.unsqueeze(-1))           # rebuilt from the saved lse
        keep = (FusedAttention._dropout_keep(probs.shape, ctx.p, ctx.seed) if ctx.p > 0
                else torch.ones(1))
        dof = do.float().permute(1, 2, 0, 3)                    # (b, a, s, d)
        vg = v.float().permute(1, 2, 0, 3)                      # (b, kvh, s, d)
        vrep = vg.repeat_interleave(g, dim=1)                   # backward only: transient
        dpd = torch.matmul(dof, vrep.transpose(-1, -2)) * keep  # dL/dP
        pd = probs * keep
        dv = torch.matmul(pd.transpose(-1, -2), dof).reshape(b, kvh, g, s, d).sum(2)
        delta = (dpd * probs).sum(-1, keepdim=True)
        ds = probs * (dpd - delta) * ctx.scale
        qf = q.float().permute(1, 2, 0, 3)
        krep = k.float().permute(1, 2, 0, 3).repeat_interleave(g, dim=1)
        dq = torch.matmul(ds, krep)
        dk = torch.matmul(ds.transpose(-1, -2), qf).reshape(b, kvh, g, s, d).sum(2)
        back = lambda t: t.permute(2, 0, 1, 3).to(q.dtype).contiguous()
        return back(dq), back(dk), back(dv), None, None, None


class FusedRMSNorm(torch.autograd.Function):
    """A fused RMSNorm kernel: saves its input and one fp32 1/rms per row (2 sbh + 4 sb)."""

    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        return (x.float() * rstd).to(x.dtype) * weight

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved_tensors
        xhat = x.float() * rstd
        dxhat = dy.float() * weight.float()
        dx = rstd * (dxhat - xhat * (dxhat * xhat).mean(-1, keepdim=True))
        dw = (dy.float() * xhat).reshape(-1, x.shape[-1]).sum(0)
        return dx.to(x.dtype), dw.to(weight.dtype), None


class RMSNorm(nn.Module):
    def __init__(self, h, fused, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))
        self.fused, self.eps = fused, eps

    def forward(self, x):
        if self.fused:
            return FusedRMSNorm.apply(x, self.weight, self.eps)
        # Written out in eager PyTorch, in the activations' dtype: mean() keeps x^2 (PyTorch
        # 1.13 saves its input) and the weight's product keeps x * rsqrt (2 sbh each).
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class HFRMSNorm(RMSNorm):
    """Hugging Face LlamaRMSNorm: upcast to fp32, normalise, cast back, times the weight.
    Measured on the side (not in the fixture): it keeps the fp32 x and x^2 (4 sbh each) and the
    bf16 cast (2 sbh) instead of the bf16 input: +8 sbh per norm on PyTorch 1.13."""

    def forward(self, x):
        xf = x.to(torch.float32)
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * xf.to(x.dtype)


def dropout(t, p):
    """torch.native_dropout: a 1-byte mask, like the fused dropout of a GPU."""
    return torch.native_dropout(t, p, True)[0] if p > 0 else t


def plain_attention(q, k, v, p, causal):
    """q (s, b, a, d), k and v (s, b, a_kv, d) -> (s, b, a * d), with autograd.

    The g = a / a_kv query heads of one KV head are stacked along the rows, so the two matmuls
    run once per KV head on K and V of kv width (no repeat_interleave: K and V are not copied per
    head). Keeps q, k, v (one copy each, in the matmul layout), the softmax output, and with
    dropout the 1-byte mask and the dropout output: 2as^2b (5as^2b with dropout).
    """
    s, b, a, d = q.shape
    kvh = k.shape[2]
    g = a // kvh
    qg = q.permute(1, 2, 0, 3).reshape(b * kvh, g * s, d)       # copy: (b kvh, g s, d)
    kt = k.permute(1, 2, 3, 0).reshape(b * kvh, d, s)           # copy: (b kvh, d, s)
    vg = v.permute(1, 2, 0, 3).reshape(b * kvh, s, d)           # copy: (b kvh, s, d)
    scores = torch.bmm(qg, kt) / math.sqrt(d)                   # (b kvh, g s, s)
    if causal:
        # An additive bias: an addition saves nothing, masked_fill would keep a bool mask.
        bias = torch.full((s, s), float("-inf"), dtype=scores.dtype).triu(1).repeat(g, 1)
        scores = scores + bias
    probs = dropout(torch.softmax(scores, dim=-1), p)
    o = torch.bmm(probs, vg)                                    # (b kvh, g s, d)
    return o.reshape(b, kvh, g, s, d).permute(3, 0, 1, 2, 4).reshape(s, b, a * d)


class Rotary(nn.Module):
    """Rotary position embedding of q and k (Su et al. 2021); the tables are constants."""

    def __init__(self, s, d):
        super().__init__()
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        ang = torch.outer(torch.arange(s).float(), inv)
        ang = torch.cat([ang, ang], dim=-1)                     # (s, d)
        self.register_buffer("cos", ang.cos()[:, None, None, :])
        self.register_buffer("sin", ang.sin()[:, None, None, :])

    def forward(self, t):                                       # t (s, b, heads, d)
        half = t.shape[-1] // 2
        rot = torch.cat([-t[..., half:], t[..., :half]], dim=-1)
        return t * self.cos + rot * self.sin


# ---------------------------------------------------------------------------------------------
# The two layers


class GPTLayer(nn.Module):
    """Pre-LN GPT layer of Korthikanti et al.: LayerNorm, attention, dropout, residual;
    LayerNorm, GeLU MLP, dropout, residual. Biases everywhere; GQA when kv_heads < heads."""

    def __init__(self, h, a, kvh, f, p, flash):
        super().__init__()
        d = h // a
        self.a, self.kvh, self.d, self.p, self.flash = a, kvh, d, p, flash
        self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.wq, self.wk, self.wv = nn.Linear(h, h), nn.Linear(h, kvh * d), nn.Linear(h, kvh * d)
        self.proj = nn.Linear(h, h)
        self.fc1, self.fc2 = nn.Linear(h, f), nn.Linear(f, h)

    def forward(self, x):                                       # x (s, b, h)
        s, b, h = x.shape
        y = self.ln1(x)
        q = self.wq(y).view(s, b, self.a, self.d)
        k = self.wk(y).view(s, b, self.kvh, self.d)
        v = self.wv(y).view(s, b, self.kvh, self.d)
        if self.flash:
            seed = int(torch.randint(0, 2**31 - 1, (1,)))
            o = FusedAttention.apply(q, k, v, self.p, True, seed).view(s, b, h)
        else:
            o = plain_attention(q, k, v, self.p, True)
        x = x + dropout(self.proj(o), self.p)
        return x + dropout(self.fc2(F.gelu(self.fc1(self.ln2(x)))), self.p)


class LlamaLayer(nn.Module):
    """Llama layer: RMSNorm, attention with rotary q and k and GQA, residual; RMSNorm, SwiGLU
    MLP, residual. No biases, no dropout."""

    def __init__(self, s, h, a, kvh, f, flash, norm):
        super().__init__()
        d = h // a
        self.a, self.kvh, self.d, self.flash = a, kvh, d, flash
        make = (lambda: HFRMSNorm(h, False)) if norm == "hf" else lambda: RMSNorm(h, norm == "fused")
        self.norm1, self.norm2 = make(), make()
        self.wq = nn.Linear(h, h, bias=False)
        self.wk = nn.Linear(h, kvh * d, bias=False)
        self.wv = nn.Linear(h, kvh * d, bias=False)
        self.wo = nn.Linear(h, h, bias=False)
        self.gate = nn.Linear(h, f, bias=False)
        self.up = nn.Linear(h, f, bias=False)
        self.down = nn.Linear(f, h, bias=False)
        self.rope = Rotary(s, d)

    def forward(self, x):                                       # x (s, b, h)
        s, b, h = x.shape
        y = self.norm1(x)
        q = self.rope(self.wq(y).view(s, b, self.a, self.d))
        k = self.rope(self.wk(y).view(s, b, self.kvh, self.d))
        v = self.wv(y).view(s, b, self.kvh, self.d)
        if self.flash:
            o = FusedAttention.apply(q, k, v, 0.0, True, 0).view(s, b, h)
        else:
            o = plain_attention(q, k, v, 0.0, True)
        x = x + self.wo(o)
        y = self.norm2(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


# ---------------------------------------------------------------------------------------------
# Measurement


def storage(t):
    """The storage under a tensor (untyped_storage() in newer PyTorch)."""
    return t._storage() if hasattr(t, "_storage") else t.untyped_storage()


def saved_bytes(layer, x, ckpt):
    """Bytes of the tensors autograd saves for one forward pass, each storage counted once,
    parameters and buffers (the rotary tables) not counted."""
    excluded = {storage(w).data_ptr() for w in layer.parameters()}
    excluded |= {storage(w).data_ptr() for w in layer.buffers()}
    seen = {}

    def pack(t):
        st = storage(t)
        if st.data_ptr() not in excluded:
            seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = checkpoint(layer, x, use_reentrant=True) if ckpt else layer(x)
    del out
    return sum(seen.values())


def measure(arch, variant, shape, flash, drop, ckpt, norm):
    s, b, h, a, kvh, f = shape
    if f is None:
        f = 4 * h if arch == "gpt" else llama_default_ffn(h)
    torch.manual_seed(0)
    if arch == "gpt":
        layer = GPTLayer(h, a, kvh, f, P_DROP if drop else 0.0, flash)
    else:
        layer = LlamaLayer(s, h, a, kvh, f, flash, norm)
    layer = layer.to(DTYPE)
    x = torch.randn(s, b, h, dtype=DTYPE, requires_grad=True)
    nbytes = saved_bytes(layer, x, ckpt)
    name = f"{arch}-{variant}-s{s}-b{b}-h{h}-a{a}-kv{kvh}-f{f}"
    return {"layer": name, "arch": arch, "variant": variant, "seq": s, "micro_batch": b,
            "hidden": h, "heads": a, "kv_heads": kvh, "ffn": f, "dropout": int(drop),
            "attention": "flash" if flash else "plain", "checkpoint": int(ckpt), "norm": norm,
            "saved_bytes": nbytes}


# (variant, flash, dropout, checkpoint, norm)
GPT_VARIANTS = [
    ("plain-dropout", False, True, False, "layernorm"),
    ("plain", False, False, False, "layernorm"),
    ("flash-dropout", True, True, False, "layernorm"),
    ("flash", True, False, False, "layernorm"),
    ("checkpoint", False, True, True, "layernorm"),
]
LLAMA_VARIANTS = [
    ("plain", False, False, False, "fused"),
    ("flash", True, False, False, "fused"),
    ("written-norm", False, False, False, "written"),
    ("written-norm-flash", True, False, False, "written"),
    ("checkpoint", False, False, True, "fused"),
]


def main(argv):
    if len(argv) != 2:
        print("usage: measure.py OUT.csv", file=sys.stderr)
        return 2
    rows = []
    start = time.time()
    for arch, shapes, variants in (("gpt", GPT_SHAPES, GPT_VARIANTS),
                                   ("llama", LLAMA_SHAPES, LLAMA_VARIANTS)):
        for shape in shapes:
            for variant, flash, drop, ckpt, norm in variants:
                row = measure(arch, variant, shape, flash, drop, ckpt, norm)
                sbh = row["seq"] * row["micro_batch"] * row["hidden"]
                print(f"{row['layer']}: {row['saved_bytes']} bytes = "
                      f"{row['saved_bytes'] / sbh:.3f} sbh", flush=True)
                rows.append(row)
    with open(argv[1], "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"{len(rows)} rows in {time.time() - start:.0f} s -> {argv[1]}")
    # On the side: the Hugging Face RMSNorm (fp32 upcast) against the fused one, same shape.
    shape = LLAMA_SHAPES[2]
    fused = measure("llama", "plain", shape, False, False, False, "fused")["saved_bytes"]
    hf = measure("llama", "hf-norm", shape, False, False, False, "hf")["saved_bytes"]
    sbh = shape[0] * shape[1] * shape[2]
    print(f"not in the CSV: Hugging Face fp32-upcast RMSNorm keeps {(hf - fused) / sbh:.3f} sbh "
          f"more than the fused one (s={shape[0]} b={shape[1]} h={shape[2]})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
