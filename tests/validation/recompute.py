#!/usr/bin/python3
"""Measure what per-module selective recomputation saves (doc/model.md 5.5): the activation bytes
of a GPT layer (with and without dropout), a Llama layer, an eager MoE layer and a multi-head latent attention layer with exactly the
modules of Megatron-Core's --recompute-modules checkpointed, and without.

Usage: /usr/bin/python3 tests/validation/recompute.py OUT.csv   (`make validate`: recompute.csv)

The layers are measure.py's (ModernLlamaLayer, MoELayer, MLALayer; its GPT layer with the norms
and the MLP as modules, GPTModules), run forward once in bf16 on
the CPU under saved-tensor hooks, counted as measure.py counts them (each storage once, no
parameters, no rotary tables). A recomputed module is wrapped in torch.utils.checkpoint
(use_reentrant=True, whose Function saves the module's inputs where the hooks see them):
- core_attn is not measured here (activations.csv holds selective recomputation of the core);
- mlp, moe and shared_experts: an ordinary checkpoint of the module (SwiGLU, MoEBlock, the shared
  SwiGLU): only its inputs are saved, its forward reruns in the backward pass;
- layernorm, moe_act and mla_up_proj are output-discarding in Megatron-Core: the module runs
  under a checkpoint, and its outputs, which the next operations save, are freed once those have
  run and recomputed before their backward. Here the outputs' storages are left out of the count
  (the hooks still see them saved by their consumers): the two norms; each routed expert's
  silu(gate) * up (its inputs gate and up kept); MLA's q and kv up-projections with the rotary
  embedding (q, k and v, from the q and kv norms' outputs and the rotary key).
Attention is the fused (flash) kernel throughout, so the core is the same in every row.
test_validation_recompute.c holds memfit's A with recompute=selective and each row's modules to
the measurement within 2%, and the saving (the row without recomputation minus the row) too.
"""
import os
import sys
import time
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure as m  # noqa: E402  (the layers and the storage accounting)

COLUMNS = ["layer", "kind", "modules", "dropout", "seq", "micro_batch", "hidden", "heads",
           "kv_heads",
           "head_dim", "ffn", "experts", "top_k", "expert_ffn", "shared_ffn", "q_lora_rank",
           "kv_lora_rank", "qk_nope_dim", "qk_rope_dim", "v_head_dim", "saved_bytes"]

DISCARDED = set()  # storages of output-discarded modules' outputs, left out of the count


class Ckpt(nn.Module):
    """An ordinary checkpoint of `mod` (core_attn, mlp, moe, shared_experts)."""

    def __init__(self, mod):
        super().__init__()
        self.mod = mod

    def forward(self, *xs):
        return checkpoint(self.mod, *xs, use_reentrant=True)


class Discard(Ckpt):
    """An output-discarding checkpoint of `mod` (layernorm, moe_act, mla_up_proj): its outputs'
    storages are freed after their consumers ran (left out of the count)."""

    def forward(self, *xs):
        out = checkpoint(self.mod, *xs, use_reentrant=True)
        for t in out if isinstance(out, tuple) else (out,):
            DISCARDED.add(m.storage(t).data_ptr())
        return out


class SiluMul(nn.Module):
    def forward(self, g, u):
        return F.silu(g) * u


class ActSwiGLU(nn.Module):
    """A routed expert with its activation output-discarded (moe_act): gate and up are the
    activation's inputs and stay; silu(gate) and the product (down's input) are rebuilt."""

    def __init__(self, expert):
        super().__init__()
        self.gate, self.up, self.down = expert.gate, expert.up, expert.down
        self.act = Discard(SiluMul())

    def forward(self, x):
        return self.down(self.act(self.gate(x), self.up(x)))


class GeLUMLP(nn.Module):
    """GPT's MLP: fc2(gelu(fc1(x))), with biases (its dropout is outside it, as Megatron-LM's
    bias-dropout-add)."""

    def __init__(self, h, f):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(h, f), nn.Linear(f, h)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class GPTModules(nn.Module):
    """measure.GPTLayer (pre-LN, biases, fused attention, dropout p) with its norms and MLP as
    modules that recompute() can wrap."""

    def __init__(self, h, a, f, p):
        super().__init__()
        self.a, self.d, self.p = a, h // a, p
        self.norm1, self.norm2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.wq, self.wk, self.wv = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.proj = nn.Linear(h, h)
        self.mlp = GeLUMLP(h, f)

    def forward(self, x):                                       # x (s, b, h)
        s, b, h = x.shape
        y = self.norm1(x)
        q = self.wq(y).view(s, b, self.a, self.d)
        k = self.wk(y).view(s, b, self.a, self.d)
        v = self.wv(y).view(s, b, self.a, self.d)
        o = m.FusedAttention.apply(q, k, v, self.p, True, 1234).view(s, b, h)
        x = x + m.dropout(self.proj(o), self.p)
        return x + m.dropout(self.mlp(self.norm2(x)), self.p)


class MLAUp(nn.Module):
    """MLA's up-projections and rotary (mla_up_proj): q from the q norm's output (or from the
    layer's norm output without q LoRA), k and v from the kv norm's output and the rotary key."""

    def __init__(self, mla):
        super().__init__()
        self.mla = mla

    def forward(self, cq, ckv, k_pe):
        a, d_n, d_r, d_v, s, b = (self.mla.a, self.mla.d_n, self.mla.d_r, self.mla.d_v,
                                  cq.shape[0], cq.shape[1])
        q = self.mla.wq_b(cq) if self.mla.r_q else self.mla.wq(cq)
        q_nope, q_pe = torch.split(q.view(s, b, a, d_n + d_r), [d_n, d_r], dim=-1)
        q = torch.cat([q_nope, self.mla.rope(q_pe)], dim=-1)
        k_pe = self.mla.rope(k_pe.unsqueeze(2))
        kv = self.mla.wkv_b(ckv).view(s, b, a, d_n + d_v)
        k_nope, v = torch.split(kv, [d_n, d_v], dim=-1)
        k = torch.cat([k_nope, k_pe.expand(-1, -1, a, -1)], dim=-1)
        return q, k, v.contiguous()


class MLARecomputed(nn.Module):
    """measure.MLA with its up-projections output-discarded."""

    def __init__(self, mla):
        super().__init__()
        self.mla = mla
        self.up = Discard(MLAUp(mla))

    def forward(self, y):
        mla = self.mla
        s, b, _ = y.shape
        cq = mla.q_norm(mla.wq_a(y)) if mla.r_q else y
        c, k_pe = torch.split(mla.wkv_a(y), [mla.r_kv, mla.d_r], dim=-1)
        q, k, v = self.up(cq, mla.kv_norm(c), k_pe)
        o = m.FusedAttention.apply(q, k, v, 0.0, True, 0).view(s, b, mla.a * mla.d_v)
        return mla.wo(o)


def recompute(layer, modules):
    """The layer with `modules` checkpointed as Megatron-Core does (module docstring)."""
    if "layernorm" in modules:
        layer.norm1, layer.norm2 = Discard(layer.norm1), Discard(layer.norm2)
    if "mlp" in modules:
        layer.mlp = Ckpt(layer.mlp)
    if "moe_act" in modules:
        layer.moe.experts = nn.ModuleList([ActSwiGLU(e) for e in layer.moe.experts])
    if "shared_experts" in modules:
        layer.moe.shared = Ckpt(layer.moe.shared)
    if "moe" in modules:
        layer.moe = Ckpt(layer.moe)
    if "mla_up_proj" in modules:
        layer.attn = MLARecomputed(layer.attn)
    return layer


def saved_bytes(layer, x):
    """measure.saved_bytes without checkpointing the layer, and without the discarded outputs."""
    excluded = {m.storage(w).data_ptr() for w in layer.parameters()}
    excluded |= {m.storage(w).data_ptr() for w in layer.buffers()}
    seen = {}
    DISCARDED.clear()

    def pack(t):
        st = m.storage(t)
        if st.data_ptr() not in excluded:
            seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = layer(x)
    kept = sum(n for p, n in seen.items() if p not in DISCARDED)
    del out
    return kept


# (seq, micro_batch, hidden, heads, dropout)
GPT_SHAPES = [
    (128, 2, 128, 2, 1),
    (256, 1, 128, 4, 0),
    (64, 4, 192, 3, 1),
    (256, 2, 256, 4, 0),
    (128, 2, 256, 8, 1),
    (192, 1, 384, 6, 0),
    (128, 3, 512, 8, 1),
    (512, 1, 256, 2, 0),
]
GPT_MODULES = ["", "layernorm", "mlp", "layernorm mlp"]
# (seq, micro_batch, hidden, heads, kv_heads, head_dim, ffn)
LLAMA_SHAPES = [
    (128, 2, 256, 4, 2, 64, 768),
    (64, 2, 128, 4, 4, 32, 384),
    (256, 1, 192, 6, 3, 32, 512),
    (96, 2, 320, 5, 1, 64, 896),
    (128, 1, 512, 8, 4, 64, 1024),
    (192, 1, 256, 8, 2, 32, 768),
    (64, 4, 384, 4, 2, 96, 1024),
    (256, 2, 128, 2, 1, 64, 320),
]
LLAMA_MODULES = ["", "layernorm", "mlp", "layernorm mlp"]
# (seq, micro_batch, hidden, heads, kv_heads, head_dim, experts, top_k, expert_ffn, shared_ffn)
MOE_SHAPES = [
    (128, 2, 256, 4, 2, 64, 8, 2, 128, 256),
    (64, 2, 128, 4, 4, 32, 4, 1, 256, 256),
    (256, 1, 256, 8, 2, 32, 16, 4, 64, 128),
    (96, 2, 192, 6, 3, 32, 6, 2, 96, 192),
    (128, 1, 384, 6, 2, 64, 8, 3, 128, 512),
    (100, 1, 128, 2, 1, 64, 6, 2, 64, 128),
    (64, 1, 256, 4, 1, 128, 32, 8, 32, 64),
    (128, 2, 320, 5, 5, 64, 4, 2, 320, 640),
]
MOE_MODULES = ["", "moe_act", "moe", "shared_experts", "layernorm", "layernorm moe_act shared_experts"]
# (seq, micro_batch, hidden, heads, q_lora_rank, kv_lora_rank, qk_nope_dim, qk_rope_dim,
#  v_head_dim, ffn)
MLA_SHAPES = [
    (128, 2, 256, 4, 128, 64, 32, 16, 32, 768),
    (64, 2, 128, 2, 64, 32, 32, 16, 32, 384),
    (256, 1, 256, 8, 96, 64, 16, 8, 16, 768),
    (128, 1, 384, 6, 0, 96, 64, 32, 64, 1024),
    (96, 2, 192, 3, 64, 48, 48, 16, 32, 512),
    (128, 2, 512, 8, 0, 128, 32, 16, 32, 1024),
    (192, 1, 320, 5, 160, 64, 64, 32, 48, 896),
    (256, 2, 128, 4, 96, 64, 32, 32, 64, 384),
]
MLA_MODULES = ["", "mla_up_proj", "layernorm mla_up_proj", "mlp"]


def row_of(kind, modules, **size):
    row = {c: 0 for c in COLUMNS}
    row.update(size)
    row.update({"kind": kind, "modules": modules})
    return row


def rows():
    """(row without saved_bytes, layer maker) for every measurement."""
    for s, b, h, a, drop in GPT_SHAPES:
        for mods in GPT_MODULES:
            yield (row_of("gpt", mods, dropout=drop, seq=s, micro_batch=b, hidden=h, heads=a,
                          kv_heads=a, ffn=4 * h),
                   partial(GPTModules, h, a, 4 * h, m.P_DROP if drop else 0.0))
    for s, b, h, a, kvh, d, f in LLAMA_SHAPES:
        for mods in LLAMA_MODULES:
            yield (row_of("llama", mods, seq=s, micro_batch=b, hidden=h, heads=a, kv_heads=kvh,
                          head_dim=d, ffn=f),
                   partial(m.ModernLlamaLayer, s, h, a, kvh, d, f, True, 0, 0, 2))
    for s, b, h, a, kvh, d, e, k, fe, fs in MOE_SHAPES:
        for mods in MOE_MODULES:
            yield (row_of("moe", mods, seq=s, micro_batch=b, hidden=h, heads=a, kv_heads=kvh,
                          head_dim=d, experts=e, top_k=k, expert_ffn=fe, shared_ffn=fs),
                   partial(m.MoELayer, s, h, a, kvh, d, True, 0, 0, (e, k, fe, fs, 0, "0")))
    for s, b, h, a, rq, rkv, dn, dr, dv, f in MLA_SHAPES:
        for mods in MLA_MODULES:
            yield (row_of("mla", mods, seq=s, micro_batch=b, hidden=h, heads=a, kv_heads=a,
                          ffn=f, q_lora_rank=rq, kv_lora_rank=rkv, qk_nope_dim=dn,
                          qk_rope_dim=dr, v_head_dim=dv),
                   partial(m.MLALayer, s, h, a, (rq, rkv, dn, dr, dv), f, True))


def measure_row(row, make):
    torch.manual_seed(0)
    layer = recompute(make().to(m.DTYPE), row["modules"].split())
    x = torch.randn(row["seq"], row["micro_batch"], row["hidden"], dtype=m.DTYPE,
                    requires_grad=True)
    row["saved_bytes"] = saved_bytes(layer, x)
    row["layer"] = (f"{row['kind']}-{row['modules'].replace(' ', '+') or 'none'}"
                    f"-s{row['seq']}-b{row['micro_batch']}-h{row['hidden']}")
    return row


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    start = time.time()
    out = [measure_row(r, make) for r, make in rows()]
    m.write_csv(argv[1], COLUMNS, out)
    print(f"{len(out)} rows in {time.time() - start:.0f} s -> {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
