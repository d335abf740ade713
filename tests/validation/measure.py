#!/usr/bin/python3
"""Measure the activation bytes of one GPT layer and one Llama layer with PyTorch, and of the
modern layers (a Llama layer with a decoupled head_dim, qkv bias, qk norm and 4 norms, attention
sinks; OLMo 2's layer; an eager MoE layer; gpt-oss's MoE layer; a multi-head latent attention
layer).

Usage: /usr/bin/python3 tests/validation/measure.py OUT.csv [MODERN.csv]
       (`make validate`: activations.csv and modern.csv)

Every layer is built the way doc/model.md sections 4.1-4.5 describe it, tensor by tensor, and run
forward once in bf16 on the CPU under torch.autograd.graph.saved_tensors_hooks. The pack hook sees
every tensor that autograd saves for the backward pass; we add up the bytes of their storages,
each storage once, without the parameters and the constant rotary tables (doc/model.md section
14.4). The result goes to a CSV that tests/validation/test_validation.c compares with memfit's formulas.
The modern layers go to MODERN.csv, and every row is checked against the closed formulas of
modern_formula (tests/validation/README.md, "Modern layers"): the script fails if one differs.

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
from fractions import Fraction
from functools import partial

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
    """A FlashAttention-like kernel: q and k (s, b, a or a_kv, d), v (s, b, a_kv, d_v) ->
    o (s, b, a, d_v) (d_v = d but for multi-head latent attention).

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
        dv = torch.matmul(pd.transpose(-1, -2), dof).reshape(b, kvh, g, s, v.shape[-1]).sum(2)
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


def plain_attention(q, k, v, p, causal, sinks=None):
    """q (s, b, a, d), k (s, b, a_kv, d), v (s, b, a_kv, d_v) -> (s, b, a * d_v), with autograd
    (d_v = d but for multi-head latent attention).

    The g = a / a_kv query heads of one KV head are stacked along the rows, so the two matmuls
    run once per KV head on K and V of kv width (no repeat_interleave: K and V are not copied per
    head). Keeps q, k, v once each in the matmul layout (q a copy when g > 1, else a view; k and
    v views of their storage when they are laid out (s, b, heads, d), which for a v split off a
    wider tensor, as in MLA, is that whole tensor), the softmax output, and with dropout the
    1-byte mask and the dropout output: 2as^2b (5as^2b with dropout).

    sinks (a,), gpt-oss's learned sink logit per head: a column of them is appended to the
    scores, the softmax runs over the s + 1 columns and the sink's column is dropped after it
    (a view): the softmax output kept is 2as(s+1)b.
    """
    s, b, a, d = q.shape
    kvh = k.shape[2]
    g = a // kvh
    qg = q.permute(1, 2, 0, 3).reshape(b * kvh, g * s, d)       # (b kvh, g s, d), copy if g > 1
    kt = k.permute(1, 2, 3, 0).reshape(b * kvh, d, s)           # (b kvh, d, s), a view
    dv = v.shape[-1]
    vg = v.permute(1, 2, 0, 3).reshape(b * kvh, s, dv)          # (b kvh, s, d_v), a view
    scores = torch.bmm(qg, kt) / math.sqrt(d)                   # (b kvh, g s, s)
    if causal:
        # An additive bias: an addition saves nothing, masked_fill would keep a bool mask.
        bias = torch.full((s, s), float("-inf"), dtype=scores.dtype).triu(1).repeat(g, 1)
        scores = scores + bias
    if sinks is not None:
        # Head kvh_i g + g_i sits at rows g_i s .. of matrix kvh_i (b-major): its sink on each.
        col = sinks.view(1, kvh, g, 1).expand(b, kvh, g, s).reshape(b * kvh, g * s, 1)
        probs = torch.softmax(torch.cat([scores, col.to(scores.dtype)], dim=-1), dim=-1)
        probs = dropout(probs[..., :s], p)
    else:
        probs = dropout(torch.softmax(scores, dim=-1), p)
    o = torch.bmm(probs, vg)                                    # (b kvh, g s, d_v)
    return o.reshape(b, kvh, g, s, dv).permute(3, 0, 1, 2, 4).reshape(s, b, a * dv)


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
# The modern layers (modern.csv): a Llama layer with a decoupled head_dim, qkv bias, qk norm and
# four norms, attention sinks; OLMo 2's layer; an eager MoE layer; gpt-oss's MoE layer; a
# multi-head latent attention (MLA) layer. All in the style of LlamaLayer above: fused RMSNorm,
# rotary q and k, GQA without repeat_interleave, no biases but the optional attention ones (and
# gpt-oss's router and experts'), no dropout, plain or fused attention.


class SwiGLU(nn.Module):
    """down(silu(gate(x)) * up(x)) without biases. For n rows it keeps x (one tensor for gate and
    up), gate(x) (silu's input), silu(gate(x)) and up(x) (the product's inputs) and the product
    (down's input): 2 n h + 8 n f bytes."""

    def __init__(self, h, f):
        super().__init__()
        self.gate = nn.Linear(h, f, bias=False)
        self.up = nn.Linear(h, f, bias=False)
        self.down = nn.Linear(f, h, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class GQAttention(nn.Module):
    """Llama attention with a decoupled head_dim d (a d need not equal h, Gemma), optional biases
    (qkv_bias 1: on q, k, v as Qwen2; 2: on o too; 3: on o too and a sink logit per head, as
    gpt-oss) and an optional fused RMSNorm on q and on k before rotary (qk_norm 1: over each
    head's d, Qwen3; 2: over the whole projection, a d and kv d, OLMo 2). Takes the layer's
    input to the projections y (s, b, h), returns the output projection's (s, b, h). FlashAttention
    with sinks keeps what it keeps without them (the sink enters the per-row log-sum-exp)."""

    def __init__(self, s, h, a, kvh, d, flash, qkv_bias, qk_norm):
        super().__init__()
        self.a, self.kvh, self.d, self.flash = a, kvh, d, flash
        self.wq = nn.Linear(h, a * d, bias=qkv_bias > 0)
        self.wk = nn.Linear(h, kvh * d, bias=qkv_bias > 0)
        self.wv = nn.Linear(h, kvh * d, bias=qkv_bias > 0)
        self.wo = nn.Linear(a * d, h, bias=qkv_bias >= 2)
        self.sinks = nn.Parameter(torch.zeros(a)) if qkv_bias == 3 else None
        self.qk_norm = qk_norm
        self.q_norm = RMSNorm(d if qk_norm == 1 else a * d, True) if qk_norm else None
        self.k_norm = RMSNorm(d if qk_norm == 1 else kvh * d, True) if qk_norm else None
        self.rope = Rotary(s, d)

    def forward(self, y):
        s, b, _ = y.shape
        q, k, v = self.wq(y), self.wk(y), self.wv(y)
        if self.qk_norm == 2:
            # One norm over each whole projection: it keeps its input and one fp32 1/rms a row.
            q, k = self.q_norm(q), self.k_norm(k)
        q = q.view(s, b, self.a, self.d)
        k = k.view(s, b, self.kvh, self.d)
        v = v.view(s, b, self.kvh, self.d)
        if self.qk_norm == 1:
            # Each norm keeps its input (the projection's output) and one fp32 1/rms per head
            # and token; its output goes to rotary, which keeps nothing.
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = self.rope(q), self.rope(k)
        if self.flash:
            o = FusedAttention.apply(q, k, v, 0.0, True, 0).view(s, b, self.a * self.d)
        else:
            o = plain_attention(q, k, v, 0.0, True, self.sinks)
        return self.wo(o)


class ModernLlamaLayer(nn.Module):
    """LlamaLayer with GQAttention, and with layer_norms = 4 (Gemma 2) a norm after the attention
    and one after the MLP too, each before its residual add (they keep the output projection's
    and the down projection's outputs)."""

    def __init__(self, s, h, a, kvh, d, f, flash, qkv_bias, qk_norm, layer_norms):
        super().__init__()
        self.norm1, self.norm2 = RMSNorm(h, True), RMSNorm(h, True)
        self.post_attn = RMSNorm(h, True) if layer_norms == 4 else None
        self.post_mlp = RMSNorm(h, True) if layer_norms == 4 else None
        self.attn = GQAttention(s, h, a, kvh, d, flash, qkv_bias, qk_norm)
        self.mlp = SwiGLU(h, f)

    def forward(self, x):
        o = self.attn(self.norm1(x))
        x = x + (self.post_attn(o) if self.post_attn is not None else o)
        m = self.mlp(self.norm2(x))
        return x + (self.post_mlp(m) if self.post_mlp is not None else m)


class Olmo2Layer(nn.Module):
    """OLMo 2 (transformers' modeling_olmo2.py): no norm before the attention or the MLP; the
    projections read the layer's input, q and k are normed over their whole width, and a norm
    after the attention and one after the MLP, each before its residual add (they keep the
    output projection's and the down projection's outputs)."""

    def __init__(self, s, h, a, kvh, d, f, flash, qkv_bias, qk_norm):
        super().__init__()
        self.post_attn, self.post_mlp = RMSNorm(h, True), RMSNorm(h, True)
        self.attn = GQAttention(s, h, a, kvh, d, flash, qkv_bias, qk_norm)
        self.mlp = SwiGLU(h, f)

    def forward(self, x):
        x = x + self.post_attn(self.attn(x))
        return x + self.post_mlp(self.mlp(x))


def expert_capacity(tokens, experts, top_k, cf):
    """ceil(k T cf / E), exactly (cf is a decimal string such as "1.25"); None when dropless."""
    if cf == "0":
        return None
    return math.ceil(Fraction(top_k * tokens) * Fraction(cf) / experts)


def balanced_choice(tokens, experts, top_k):
    """A constant selection bias that makes top-k pick experts (i k + j) mod E for token i, in
    slot order j = 0 .. k-1 (k <= E, so they are distinct): k - j + 1 on those, 0 elsewhere. The
    probabilities are in (0, 1), so the biased scores of slot j lie in (k-j+1, k-j+2), above
    slot j+1 and above every unchosen expert. Over T tokens the kT (token, slot) pairs go round
    the experts cyclically: each expert gets floor(kT/E) or ceil(kT/E) of them."""
    bias = torch.zeros(tokens, experts)
    i = torch.arange(tokens).unsqueeze(1)
    j = torch.arange(top_k).unsqueeze(0)
    bias[i, (i * top_k + j) % experts] = (top_k - j + 1).float()
    return bias


class MoEBlock(nn.Module):
    """An eager MoE MLP in the style of transformers' MixtralSparseMoeBlock and
    Qwen2MoeSparseMoeBlock, made deterministic and balanced.

    Router: a linear h -> E, an fp32 softmax over the E scores, top-k, the k probabilities
    gathered and normalised to sum 1 (Mixtral, Qwen3-MoE, DeepSeek-V3), cast to bf16. The
    experts are chosen as DeepSeek-V3's router chooses them, by top-k over the probabilities plus
    a constant selection bias, with the weights gathered from the unbiased probabilities; here
    the bias (balanced_choice) is per token and routes token i to experts (i k + j) mod E, so
    every expert gets kT/E tokens (+-1) whatever the weights are, and the tensors autograd keeps
    are those of a real router (softmax output, top-k indices, gathered and normalised weights).

    Dispatch, per expert: the (token, slot) positions routed to it, the tokens gathered with
    index_select, a SwiGLU expert over them, the output times its bf16 routing weight, and
    index_add_ into the output (combine). With a capacity factor every expert runs on exactly
    C = ceil(k T cf / E) rows: the first C of its tokens, padded with a zero row of weight 0
    (row T of the padded input and slot T k of the padded weights); dropless, on its own tokens.
    Shared experts: one SwiGLU MLP of width f_s over all tokens, optionally times
    sigmoid(linear h -> 1) (Qwen2-MoE)."""

    def __init__(self, h, experts, top_k, f_e, f_s, shared_gate, cf):
        super().__init__()
        self.experts_n, self.top_k, self.cf = experts, top_k, cf
        self.router = nn.Linear(h, experts, bias=False)
        self.experts = nn.ModuleList([SwiGLU(h, f_e) for _ in range(experts)])
        self.shared = SwiGLU(h, f_s) if f_s else None
        self.shared_gate = nn.Linear(h, 1, bias=False) if shared_gate else None

    def forward(self, y):                                       # y (s, b, h), the norm output
        s, b, h = y.shape
        tokens, experts, k = s * b, self.experts_n, self.top_k
        x = y.view(tokens, h)
        probs = F.softmax(self.router(x), dim=-1, dtype=torch.float32)       # (T, E) fp32
        idx = torch.topk(probs + balanced_choice(tokens, experts, k), k, dim=-1).indices
        w = probs.gather(1, idx)                                              # (T, k) fp32
        w = (w / w.sum(-1, keepdim=True)).to(y.dtype)
        x_pad = torch.cat([x, x.new_zeros(1, h)])               # row T: the padding token
        w_pad = torch.cat([w.reshape(-1), w.new_zeros(1)])      # slot T k: weight 0
        cap = expert_capacity(tokens, experts, k, self.cf)
        out = x.new_zeros(tokens + 1, h)
        flat = idx.reshape(-1)                                  # (token, slot) -> token k + slot
        for e, expert in enumerate(self.experts):
            pos = (flat == e).nonzero().squeeze(1)
            if cap is not None:
                pad = pos.new_full((max(cap - pos.numel(), 0),), tokens * k)
                pos = torch.cat([pos[:cap], pad])
            tok = torch.div(pos, k, rounding_mode="floor")     # the padding slot -> row T
            ye = expert(x_pad.index_select(0, tok))
            out.index_add_(0, tok, ye * w_pad.index_select(0, pos).unsqueeze(1))
        z = out[:tokens]
        if self.shared is not None:
            sh = self.shared(x)
            if self.shared_gate is not None:
                sh = torch.sigmoid(self.shared_gate(x)) * sh
            z = z + sh
        return z.view(s, b, h)


class MoELayer(nn.Module):
    """Fused RMSNorm, GQAttention, residual; fused RMSNorm, MoEBlock, residual."""

    def __init__(self, s, h, a, kvh, d, flash, qkv_bias, qk_norm, moe):
        super().__init__()
        self.norm1, self.norm2 = RMSNorm(h, True), RMSNorm(h, True)
        self.attn = GQAttention(s, h, a, kvh, d, flash, qkv_bias, qk_norm)
        self.moe = MoEBlock(h, *moe)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.moe(self.norm2(x))


class GptOssMoE(nn.Module):
    """gpt-oss's MoE MLP as transformers' modeling_gpt_oss.py trains it (GptOssTopKRouter and the
    training loop of GptOssExperts), made deterministic and balanced like MoEBlock.

    Router: a linear h -> E with a bias, top-k over its logits, a softmax over the k chosen
    logits in the activations' dtype, scattered into a (T, E) table of routing weights. The
    experts are chosen by top-k over the logits plus balanced_choice's constant bias times 1000
    (logits are not probabilities: the bias must dominate them), the constant subtracted from the
    k values after: top-k keeps its int64 indices, the softmax its output, as without the bias.
    Experts, one by one over their tokens: gate_up = x W + b (gate and up interleaved), gate
    clamped above at 7, up to [-7, 7], glu = gate sigmoid(1.702 gate) (the Python float 1.702 is
    kept as an 8-byte scalar), (up + 1) glu, down with its bias, times the token's routing
    weight, index_add_ into the output. Two choices of a plain implementation where the modeling
    file's code keeps more (the concern of an implementation profile): each expert's weights are
    a slice of the stacked parameters (a view; the file's advanced indexing copies them), and
    the tokens and their routing weights are index_select-ed by the token indices (the file's
    advanced indexing, hidden_states[token_idx] and weights[token_idx, expert_idx], keeps int64
    copies of the indices). The token indices are a column of nonzero()'s (rows, 2) result, as
    torch.where's are in the file: 16 bytes a routed row."""

    def __init__(self, h, experts, top_k, f_e):
        super().__init__()
        self.experts_n, self.top_k = experts, top_k
        self.router = nn.Linear(h, experts, bias=True)
        self.gate_up = nn.Parameter(torch.randn(experts, h, 2 * f_e) * h ** -0.5)
        self.gate_up_bias = nn.Parameter(torch.zeros(experts, 2 * f_e))
        self.down = nn.Parameter(torch.randn(experts, f_e, h) * f_e ** -0.5)
        self.down_bias = nn.Parameter(torch.zeros(experts, h))
        self.alpha, self.limit = 1.702, 7.0

    def forward(self, y):                                       # y (s, b, h), the norm output
        s, b, h = y.shape
        tokens, k = s * b, self.top_k
        x = y.view(tokens, h)
        logits = self.router(x)                                 # (T, E)
        bias = (1000 * balanced_choice(tokens, self.experts_n, k)).to(logits.dtype)
        vals, idx = torch.topk(logits + bias, k, dim=-1)
        top = torch.softmax(vals - bias.gather(1, idx), dim=1, dtype=logits.dtype)
        weights = torch.zeros_like(logits).scatter_(1, idx, top)
        out = torch.zeros_like(x)
        for e in range(self.experts_n):
            with torch.no_grad():
                tok = (idx == e).nonzero()[:, 0]
            gate_up = x.index_select(0, tok) @ self.gate_up[e] + self.gate_up_bias[e]
            gate, up = gate_up[..., ::2], gate_up[..., 1::2]
            gate = gate.clamp(min=None, max=self.limit)
            up = up.clamp(min=-self.limit, max=self.limit)
            glu = gate * torch.sigmoid(gate * self.alpha)
            o = ((up + 1) * glu) @ self.down[e] + self.down_bias[e]
            out.index_add_(0, tok, o * weights[:, e].index_select(0, tok).unsqueeze(1))
        return out.view(s, b, h)


class GptOssLayer(nn.Module):
    """Fused RMSNorm, attention with biases and sinks, residual; fused RMSNorm, GptOssMoE,
    residual."""

    def __init__(self, s, h, a, kvh, d, flash, moe):
        super().__init__()
        self.norm1, self.norm2 = RMSNorm(h, True), RMSNorm(h, True)
        self.attn = GQAttention(s, h, a, kvh, d, flash, 3, 0)
        self.moe = GptOssMoE(h, *moe)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.moe(self.norm2(x))


class MLA(nn.Module):
    """Multi-head latent attention as in DeepSeek-V3 inference/model.py (naive path), for
    training: q = wq_b(q_norm(wq_a(y))) (or wq(y) without q LoRA), split per head into d_n
    and d_r, rotary on the d_r part; wkv_a(y) split into the latent c (r_kv) and one shared
    rotary key k_pe (d_r); wkv_b(kv_norm(c)) split per head into k_nope (d_n) and v (d_v);
    k = [k_nope, rotary(k_pe) broadcast to the a heads]; attention (plain or fused), scale
    1/sqrt(d_n + d_r); wo (a d_v -> h). No biases. Rotary is the rotate-half form of the Llama
    layer (the complex form of model.py keeps nothing either)."""

    def __init__(self, s, h, a, r_q, r_kv, d_n, d_r, d_v, flash):
        super().__init__()
        self.a, self.r_kv, self.d_n, self.d_r, self.d_v, self.flash = a, r_kv, d_n, d_r, d_v, flash
        if r_q:
            self.wq_a = nn.Linear(h, r_q, bias=False)
            self.q_norm = RMSNorm(r_q, True)
            self.wq_b = nn.Linear(r_q, a * (d_n + d_r), bias=False)
        else:
            self.wq = nn.Linear(h, a * (d_n + d_r), bias=False)
        self.r_q = r_q
        self.wkv_a = nn.Linear(h, r_kv + d_r, bias=False)
        self.kv_norm = RMSNorm(r_kv, True)
        self.wkv_b = nn.Linear(r_kv, a * (d_n + d_v), bias=False)
        self.wo = nn.Linear(a * d_v, h, bias=False)
        self.rope = Rotary(s, d_r)

    def forward(self, y):                                       # y (s, b, h), the norm output
        s, b, _ = y.shape
        a, d_n, d_r, d_v = self.a, self.d_n, self.d_r, self.d_v
        q = self.wq_b(self.q_norm(self.wq_a(y))) if self.r_q else self.wq(y)
        q_nope, q_pe = torch.split(q.view(s, b, a, d_n + d_r), [d_n, d_r], dim=-1)
        q = torch.cat([q_nope, self.rope(q_pe)], dim=-1)
        # kv_norm keeps its input, a view of wkv_a's whole output (latent and k_pe).
        c, k_pe = torch.split(self.wkv_a(y), [self.r_kv, d_r], dim=-1)
        k_pe = self.rope(k_pe.unsqueeze(2))                     # (s, b, 1, d_r)
        kv = self.wkv_b(self.kv_norm(c)).view(s, b, a, d_n + d_v)
        k_nope, v = torch.split(kv, [d_n, d_v], dim=-1)         # v: a view of wkv_b's output
        k = torch.cat([k_nope, k_pe.expand(-1, -1, a, -1)], dim=-1)
        if self.flash:
            o = FusedAttention.apply(q, k, v, 0.0, True, 0).view(s, b, a * d_v)
        else:
            o = plain_attention(q, k, v, 0.0, True)
        return self.wo(o)


class MLALayer(nn.Module):
    """Fused RMSNorm, MLA, residual; fused RMSNorm, SwiGLU MLP of width f, residual (a dense
    DeepSeek-V3 layer)."""

    def __init__(self, s, h, a, mla, f, flash):
        super().__init__()
        self.norm1, self.norm2 = RMSNorm(h, True), RMSNorm(h, True)
        self.attn = MLA(s, h, a, *mla, flash)
        self.mlp = SwiGLU(h, f)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


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


# ---------------------------------------------------------------------------------------------
# The modern fixture (modern.csv)

MODERN_COLUMNS = ["layer", "kind", "variant", "seq", "micro_batch", "hidden", "heads", "kv_heads",
                  "head_dim", "ffn", "qkv_bias", "qk_norm", "layer_norms", "experts", "top_k",
                  "expert_ffn", "shared_ffn", "shared_gate", "router_bias", "capacity_factor",
                  "q_lora_rank",
                  "kv_lora_rank", "qk_nope_dim", "qk_rope_dim", "v_head_dim", "attention", "norm",
                  "saved_bytes"]

# (seq, micro_batch, hidden, heads, kv_heads, head_dim, ffn)
MODERN_LLAMA_SHAPES = [
    (128, 2, 256, 4, 2, 128, 768),    # Gemma-like: a d_h = 2h
    (64, 2, 128, 4, 4, 64, 384),      # a d_h = 2h, no GQA
    (128, 1, 256, 8, 2, 32, 768),     # d_h = h/a
    (256, 1, 192, 6, 3, 48, 512),     # a d_h = 1.5h
    (96, 2, 320, 5, 1, 80, 896),      # one KV head (g = 5), a d_h = 1.25h
    (128, 2, 512, 8, 4, 128, 1024),   # a d_h = 2h
    (64, 2, 384, 4, 2, 64, 1024),     # a d_h = 2h/3 < h
    (192, 1, 256, 16, 4, 16, 768),    # d_h = h/a, 16 heads
    (256, 2, 128, 2, 1, 96, 320),     # a d_h = 1.5h
]
# (variant, flash, qkv_bias, qk_norm, layer_norms)
MODERN_LLAMA_VARIANTS = [
    ("plain", False, 0, 0, 2),
    ("flash", True, 0, 0, 2),
    ("qkv-bias", False, 1, 0, 2),
    ("qk-norm", False, 0, 1, 2),
    ("qk-norm-flash", True, 0, 1, 2),
    ("norms4", False, 0, 0, 4),
    ("norms4-flash", True, 0, 0, 4),
    ("all-flash", True, 1, 1, 4),
    ("qk-norm-norms4", False, 0, 1, 4),   # Gemma 3: q/k norms and four norms
    ("qk-norm-width", False, 0, 2, 2),    # q/k norms over the whole projections
    ("sinks", False, 3, 0, 2),            # gpt-oss's attention: biases on q, k, v, o and sinks
    ("sinks-flash", True, 3, 0, 2),
]
# (variant, flash): OLMo 2's layer (Olmo2Layer: post-norms only, q/k norms over the width),
# which memfit counts as a pre-norm layer with qk_norm=width.
OLMO2_VARIANTS = [
    ("olmo2", False),
    ("olmo2-flash", True),
]
# (seq, micro_batch, hidden, heads, kv_heads, head_dim, experts, top_k, expert_ffn, shared_ffn,
#  qkv_bias, qk_norm); shared_ffn is used by the variants with shared experts only.
MOE_SHAPES = [
    (128, 2, 256, 4, 2, 64, 8, 2, 128, 256, 0, 0),     # Mixtral-like: E = 8, k = 2
    (64, 2, 128, 4, 4, 32, 4, 1, 256, 256, 1, 0),      # top-1, qkv bias (Qwen2-MoE)
    (256, 1, 256, 8, 2, 32, 16, 4, 64, 128, 0, 0),
    (96, 2, 192, 6, 3, 32, 6, 2, 96, 192, 0, 0),
    (128, 1, 384, 6, 2, 64, 8, 3, 128, 512, 0, 0),
    (100, 1, 128, 2, 1, 64, 6, 2, 64, 128, 0, 0),      # kT/E = 33.3: 33 or 34 tokens an expert
    (256, 2, 512, 8, 2, 64, 8, 2, 256, 512, 0, 0),
    (64, 1, 256, 4, 1, 128, 32, 8, 32, 64, 0, 1),      # Qwen3-MoE-like: E = 32, k = 8, qk norm
    (128, 2, 320, 5, 5, 64, 4, 2, 320, 640, 0, 0),
]
# (variant, flash, shared experts, shared gate, capacity factor; "0" = dropless)
MOE_VARIANTS = [
    ("dropless", False, 0, 0, "0"),
    ("dropless-flash", True, 0, 0, "0"),
    ("shared", False, 1, 0, "0"),
    ("shared-gate", False, 1, 1, "0"),
    ("shared-gate-flash", True, 1, 1, "0"),
    ("cf1.0", False, 0, 0, "1.0"),
    ("cf1.25-shared", False, 1, 0, "1.25"),
    ("cf1.25-flash", True, 0, 0, "1.25"),
    ("cf0.5", False, 0, 0, "0.5"),                     # drops half the tokens
]
# (variant, flash): gpt-oss's layer (GptOssLayer) on the MOE_SHAPES (router_bias=experts,
# qkv_bias=sinks, dropless, no shared experts).
GPT_OSS_VARIANTS = [
    ("gpt-oss", False),
    ("gpt-oss-flash", True),
]
# (seq, micro_batch, hidden, heads, q_lora_rank, kv_lora_rank, qk_nope_dim, qk_rope_dim,
#  v_head_dim, ffn)
MLA_SHAPES = [
    (128, 2, 256, 4, 128, 64, 32, 16, 32, 768),
    (64, 2, 128, 2, 64, 32, 32, 16, 32, 384),
    (256, 1, 256, 8, 96, 64, 16, 8, 16, 768),
    (128, 1, 384, 6, 192, 96, 64, 32, 64, 1024),
    (96, 2, 192, 3, 64, 48, 48, 16, 32, 512),          # d_v < d_n
    (128, 2, 512, 8, 256, 128, 32, 16, 32, 1024),
    (192, 1, 320, 5, 160, 64, 64, 32, 48, 896),
    (64, 2, 256, 16, 128, 32, 16, 16, 16, 768),
    (256, 2, 128, 4, 96, 64, 32, 32, 64, 384),         # d_v > d_n
]
# (variant, flash, q LoRA)
MLA_VARIANTS = [
    ("plain", False, True),
    ("flash", True, True),
    ("no-q-lora", False, False),
    ("no-q-lora-flash", True, False),
]


def modern_row(kind, variant, flash, **size):
    """A modern.csv row: every size column explicit, 0 where it does not apply."""
    row = {c: 0 for c in MODERN_COLUMNS}
    row.update(size)
    row.update({"kind": kind, "variant": variant, "attention": "flash" if flash else "plain",
                "norm": "fused"})
    return row


def modern_rows():
    """(row without saved_bytes, layer) for every measurement of modern.csv."""
    for s, b, h, a, kvh, d, f in MODERN_LLAMA_SHAPES:
        for variant, flash, bias, qkn, norms in MODERN_LLAMA_VARIANTS:
            row = modern_row("llama", variant, flash, seq=s, micro_batch=b, hidden=h, heads=a,
                             kv_heads=kvh, head_dim=d, ffn=f, qkv_bias=bias, qk_norm=qkn,
                             layer_norms=norms, capacity_factor="0")
            yield row, partial(ModernLlamaLayer, s, h, a, kvh, d, f, flash, bias, qkn, norms)
        for variant, flash in OLMO2_VARIANTS:
            row = modern_row("llama", variant, flash, seq=s, micro_batch=b, hidden=h, heads=a,
                             kv_heads=kvh, head_dim=d, ffn=f, qk_norm=2, layer_norms=2,
                             capacity_factor="0")
            yield row, partial(Olmo2Layer, s, h, a, kvh, d, f, flash, 0, 2)
    for s, b, h, a, kvh, d, E, k, f_e, f_s, bias, qkn in MOE_SHAPES:
        for variant, flash, shared, gate, cf in MOE_VARIANTS:
            fs = f_s if shared else 0
            row = modern_row("moe", variant, flash, seq=s, micro_batch=b, hidden=h, heads=a,
                             kv_heads=kvh, head_dim=d, qkv_bias=bias, qk_norm=qkn,
                             layer_norms=2, experts=E, top_k=k, expert_ffn=f_e, shared_ffn=fs,
                             shared_gate=gate, capacity_factor=cf)
            yield row, partial(MoELayer, s, h, a, kvh, d, flash, bias, qkn,
                               (E, k, f_e, fs, gate, cf))
        for variant, flash in GPT_OSS_VARIANTS:
            row = modern_row("moe", variant, flash, seq=s, micro_batch=b, hidden=h, heads=a,
                             kv_heads=kvh, head_dim=d, qkv_bias=3, layer_norms=2, experts=E,
                             top_k=k, expert_ffn=f_e, router_bias=2, capacity_factor="0")
            yield row, partial(GptOssLayer, s, h, a, kvh, d, flash, (E, k, f_e))
    for s, b, h, a, r_q, r_kv, d_n, d_r, d_v, f in MLA_SHAPES:
        for variant, flash, q_lora in MLA_VARIANTS:
            rq = r_q if q_lora else 0
            row = modern_row("mla", variant, flash, seq=s, micro_batch=b, hidden=h, heads=a,
                             kv_heads=a, ffn=f, layer_norms=2, capacity_factor="0",
                             q_lora_rank=rq, kv_lora_rank=r_kv, qk_nope_dim=d_n, qk_rope_dim=d_r,
                             v_head_dim=d_v)
            yield row, partial(MLALayer, s, h, a, (rq, r_kv, d_n, d_r, d_v), f, flash)


def modern_label(r):
    size = {"llama": f"a{r['heads']}-kv{r['kv_heads']}-d{r['head_dim']}-f{r['ffn']}",
            "moe": f"a{r['heads']}-kv{r['kv_heads']}-d{r['head_dim']}-E{r['experts']}"
                   f"-k{r['top_k']}-fe{r['expert_ffn']}-fs{r['shared_ffn']}",
            "mla": f"a{r['heads']}-rq{r['q_lora_rank']}-rkv{r['kv_lora_rank']}-dn{r['qk_nope_dim']}"
                   f"-dr{r['qk_rope_dim']}-dv{r['v_head_dim']}-f{r['ffn']}"}[r["kind"]]
    return f"{r['kind']}-{r['variant']}-s{r['seq']}-b{r['micro_batch']}-h{r['hidden']}-{size}"


def measure_modern(row, make):
    torch.manual_seed(0)
    layer = make().to(DTYPE)
    x = torch.randn(row["seq"], row["micro_batch"], row["hidden"], dtype=DTYPE,
                    requires_grad=True)
    row["saved_bytes"] = saved_bytes(layer, x, False)
    row["layer"] = modern_label(row)
    return row


def moe_rows(r):
    """N: the rows the routed experts run on, k T dropless, E C with a capacity factor."""
    tokens = r["seq"] * r["micro_batch"]
    cap = expert_capacity(tokens, r["experts"], r["top_k"], str(r["capacity_factor"]))
    return r["top_k"] * tokens if cap is None else r["experts"] * cap


def modern_formula(r):
    """The closed formula of a modern.csv row, in three parts (bytes):
    main: the tensors of width h, f, d_h, ... and the attention term;
    routing: the MoE router's O(T k) bookkeeping (0 for the other kinds);
    stats: the fp32 1/rms of each norm row and plain attention's 8-byte scale, O(s b)."""
    s, b, h, a, kvh = r["seq"], r["micro_batch"], r["hidden"], r["heads"], r["kv_heads"]
    t = s * b
    flash = r["attention"] == "flash"
    core = 4 * a * t if flash else 2 * a * s * s * b    # fp32 LSE, or the bf16 softmax output
    if r["qkv_bias"] == 3 and not flash:
        core += 2 * a * t                               # the sinks' column of the softmax
    stats = 0 if flash else 8                           # plain: the 1/sqrt(d) divisor (double)
    routing = 0
    if r["kind"] in ("llama", "moe"):
        qw, kw = a * r["head_dim"], kvh * r["head_dim"]  # widths of q and of k (= of v)
        # norm 1 in and out, q, k, v, wo input, norm 2 in and out
        main = 8 * t * h + 4 * t * (qw + kw) + core
        stats += 8 * t                                  # two norms, 4 bytes a row each
        if r["qk_norm"]:
            main += 2 * t * (qw + kw)                   # the q and k projections (norm inputs)
        if r["qk_norm"] == 1:
            stats += 4 * t * (a + kvh)                  # 1/rms per token and head
        elif r["qk_norm"] == 2:
            stats += 8 * t                              # 1/rms per token, of q and of k
        if r["kind"] == "llama":
            main += 8 * t * r["ffn"]
            if r["layer_norms"] == 4:
                main += 4 * t * h                       # wo output and down output
                stats += 8 * t
        else:
            E, k, f_e, f_s = r["experts"], r["top_k"], r["expert_ffn"], r["shared_ffn"]
            n = moe_rows(r)
            if r["router_bias"] == 2:                   # gpt-oss (GptOssMoE)
                main += n * (2 * h + 14 * f_e)          # gathered inputs, clamped SwiGLU experts
                main += n * 4 * h                       # combine: expert output, weighted output
                routing = 10 * t * k + 18 * n           # top-k idx, softmax of k; per row
                stats += 8 * E                          # each expert's 1.702 (a double)
                return main, routing, stats
            main += 4 * t * E                           # fp32 router softmax
            main += n * (2 * h + 8 * f_e)               # gathered inputs, SwiGLU experts
            main += n * 4 * h                           # combine: expert output, weighted output
            main += 8 * t * f_s                         # shared SwiGLU (input = norm 2 output)
            routing = 8 * t * k + 4 * t * k + 4 * t + 18 * n  # top-k idx; normalise; per row
            if r["shared_gate"]:
                main += 2 * t * h                       # shared output, kept by the gate product
                routing += 2 * t                        # sigmoid output
    else:
        r_q, r_kv = r["q_lora_rank"], r["kv_lora_rank"]
        d_n, d_r, d_v = r["qk_nope_dim"], r["qk_rope_dim"], r["v_head_dim"]
        main = 4 * t * h                                # norm 1 in and out
        if r_q:
            main += 4 * t * r_q                         # wq_a output, q_norm output
            stats += 4 * t
        main += 2 * t * (r_kv + d_r) + 2 * t * r_kv     # wkv_a output, kv_norm output
        main += 4 * t * a * (d_n + d_r)                 # q and k after rotary
        main += 2 * t * a * (d_n + d_v)                 # wkv_b output (v is a view of it)
        main += 2 * t * a * d_v + core                  # wo input, attention term
        main += 4 * t * h + 8 * t * r["ffn"]            # norm 2 in and out, SwiGLU MLP
        stats += 12 * t                                 # norm 1, kv_norm, norm 2
    return main, routing, stats


def check_modern(rows):
    """Compare every row with modern_formula; print the worst gaps. True when the three parts
    add up to every measurement exactly."""
    exact = True
    worst = {}
    for r in rows:
        main, routing, stats = modern_formula(r)
        m = r["saved_bytes"]
        if main + routing + stats != m:
            exact = False
            print(f"  MISMATCH {r['layer']}: measured {m}, formula {main + routing + stats} "
                  f"({m - main - routing - stats:+d})")
        for part, pred in (("main + routing", main + routing), ("main", main)):
            gap = (m - pred) / m
            key = (r["kind"], part)
            if key not in worst or gap > worst[key][0]:
                worst[key] = (gap, r["layer"])
    for (kind, part), (gap, layer) in sorted(worst.items()):
        if kind == "moe" or part == "main":    # main = main + routing for llama and mla
            print(f"  {kind}: measured - ({part}) at most {100 * gap:.3f}% ({layer})")
    return exact


def write_csv(path, columns, rows):
    with open(path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: measure.py OUT.csv [MODERN.csv]", file=sys.stderr)
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
    if len(argv) == 3:
        start = time.time()
        modern = []
        for row, make in modern_rows():
            row = measure_modern(row, make)
            sbh = row["seq"] * row["micro_batch"] * row["hidden"]
            print(f"{row['layer']}: {row['saved_bytes']} bytes = "
                  f"{row['saved_bytes'] / sbh:.3f} sbh", flush=True)
            modern.append(row)
        write_csv(argv[2], MODERN_COLUMNS, modern)
        print(f"{len(modern)} rows in {time.time() - start:.0f} s -> {argv[2]}")
        if not check_modern(modern):
            print("modern.csv: the closed formulas (README) no longer match", file=sys.stderr)
            return 1
        print("modern.csv: every row = main + routing + stats of the README's formulas, exactly")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
