#!/usr/bin/python3
"""Measure the activation bytes of one transformer layer as three training stacks write it, for
memfit's implementation profiles (doc/model.md section 4.12): Megatron-Core with Transformer
Engine (`megatron`), Hugging Face transformers' Llama-family code (`hf`) and the same with PEFT's
LoRA adapters (`hf-peft`).

Usage: /usr/bin/python3 tests/validation/impl.py OUT.csv     (`make validate`: impl.csv)

Each layer is written here op for op as the framework's source writes it (read, not copied; the
file and function are named at each class), in bf16 on the CPU, and measured as measure.py
measures (saved_bytes: the storages of the tensors autograd saves in one forward pass, each
once, parameters and constant tables left out). PyTorch 1.13 has no scaled_dot_product_attention
and no flash-attn: FlashKernel stands for both CUDA kernels (it saves q, k, v, the output and the
fp32 log-sum-exp, its output laid out (b, s, heads, d) as theirs is).

- hf (transformers, models/llama/modeling_llama.py): LlamaRMSNorm (upcast to fp32, x^2's mean,
  rsqrt, cast back, times the weight), LlamaAttention with eager_attention_forward (repeat_kv,
  matmul, softmax in fp32 cast back to bf16), sdpa_attention_forward (repeat_kv, then the kernel;
  the path taken whenever an attention mask is passed or PyTorch is older than 2.5) or
  flash_attention_2 (the kernel on K and V of the kv heads); LlamaMLP; MixtralSparseMoeBlock's
  loop over experts (measure.MoEBlock). Layout (b, s, h) as transformers'.
- hf-peft (peft, tuners/lora/layer.py, Linear.forward): the hf layer frozen, fp32 adapters A
  and B on the targets, run under torch.autocast (bf16): x cast to the adapter's dtype
  (_cast_input_dtype), then each adapter's matmul casts it back: a bf16 copy per adapter, and
  autocast's bf16 copies of A and B.
- megatron (Megatron-Core): Transformer Engine's fused norm and linear (the norm's input, its
  output and an fp32 1/rms: measure.FusedRMSNorm, as TE's LayerNormLinear), FlashAttention on
  the kv heads, fused SwiGLU (core/fusions/fused_bias_swiglu.py, SwiGLUFunction: saves its input
  alone), and the MoE layer of core/transformer/moe as Megatron-LM main (d98e8a6, 2026-08) runs
  it: TopKRouter (top-k of the logits, softmax of the k in fp32), moe_utils.permute (an argsort
  of the routing map; the probabilities indexed by it; index_select of the tokens),
  SequentialMLP experts applying the probabilities in their activation
  (fused_bias_swiglu.py's WeightedSwiGLUFunction), moe_utils.unpermute without probabilities
  (scatter_add_). GPT layers: measure.GPTLayer with fused attention and dropout (TE's LayerNorm,
  fused bias-GeLU keep what LayerNorm and GeLU keep here).

Shapes: the DEV shapes were measured while memfit's profiles were written (they showed that a
frozen norm weight keeps no x-hat); the HELD_OUT shapes were added and measured after the last
change to the profiles, and their rows say held_out=1; the last two MoE shapes were added when
the Megatron MoE layer was rewritten to the current code path, after memfit's count of it.
"""
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from measure import (DTYPE, P_DROP, FusedAttention, FusedRMSNorm, GPTLayer, MoEBlock,
                     balanced_choice, llama_default_ffn, saved_bytes, write_csv)

COLUMNS = ["layer", "impl", "precision", "kind", "attention", "qk_norm", "seq", "micro_batch", "hidden", "heads",
           "kv_heads", "ffn", "experts", "top_k", "expert_ffn", "shared_ffn", "lora_targets",
           "lora_rank", "held_out", "saved_bytes"]

# (seq, micro_batch, hidden, heads, kv_heads, ffn); ffn None = Llama's default.
DEV = [
    (128, 2, 256, 8, 2, None),
    (256, 1, 384, 6, 3, None),
    (64, 4, 512, 8, 8, None),
    (192, 2, 320, 10, 2, 896),
    (96, 3, 448, 7, 7, None),
    (256, 2, 512, 16, 4, None),
]
HELD_OUT = [
    (160, 2, 384, 12, 4, None),
    (128, 3, 576, 9, 3, 1536),
]
# MoE (seq, micro_batch, hidden, heads, kv_heads, experts, top_k, expert_ffn, shared_ffn)
MOE_DEV = [(128, 2, 256, 8, 2, 8, 2, 256, 0), (64, 2, 384, 6, 3, 4, 1, 512, 512),
           (96, 2, 320, 10, 5, 6, 2, 384, 0)]
MOE_HELD_OUT = [(128, 1, 448, 8, 4, 8, 2, 320, 0), (80, 2, 256, 4, 2, 4, 2, 448, 384),
                # added with Megatron-Core main's MoE path (weighted SwiGLU, argsort permute):
                # more experts and a larger k, where the argsort's 8 E a token shows
                (96, 2, 256, 8, 2, 16, 4, 192, 0), (64, 2, 320, 5, 5, 32, 8, 128, 256)]
RANKS = [8, 64]
ALPHA = 16
TARGETS = {"qv": ("q_proj", "v_proj"),
           "all-linear": ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                          "down_proj")}


class FlashKernel(torch.autograd.Function):
    """FlashAttention 2 (flash_attn_func) and PyTorch's SDPA flash backend: q (b, s, a, d), k, v
    (b, s, a_kv, d) -> o (b, s, a, d) contiguous; saves q, k, v, o and the fp32 log-sum-exp per
    row and head (Dao 2023). Causal, no dropout. The backward recomputes the attention."""

    @staticmethod
    def _attend(q, k, v):                                       # (b, s, heads, d) each
        qs, ks, vs = (t.permute(1, 0, 2, 3) for t in (q, k, v))  # (s, b, heads, d) views
        scores = FusedAttention._probs(qs, ks, 1.0 / math.sqrt(q.shape[-1]), True)
        lse = torch.logsumexp(scores, dim=-1)
        o = FusedAttention._pv(torch.exp(scores - lse.unsqueeze(-1)), vs)  # (s, b, a, d)
        return o.permute(1, 0, 2, 3).to(q.dtype).contiguous(), lse

    @staticmethod
    def forward(ctx, q, k, v):
        o, lse = FlashKernel._attend(q, k, v)
        ctx.save_for_backward(q, k, v, o, lse)
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, _, _ = ctx.saved_tensors
        with torch.enable_grad():
            leaves = [t.detach().requires_grad_() for t in (q, k, v)]
            qs, ks, vs = (t.float().permute(1, 0, 2, 3) for t in leaves)
            scores = FusedAttention._probs(qs, ks, 1.0 / math.sqrt(q.shape[-1]), True)
            o = FusedAttention._pv(torch.softmax(scores, -1), vs).permute(1, 0, 2, 3)
            torch.autograd.backward(o, do.float())
        return tuple(t.grad for t in leaves)


# ---------------------------------------------------------------------------------------------
# transformers (models/llama/modeling_llama.py)


class LlamaRMSNorm(nn.Module):
    """LlamaRMSNorm.forward: to fp32, pow(2).mean, x * rsqrt, to the input dtype, weight *."""

    def __init__(self, h, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(hidden_states, n_rep):
    """modeling_llama.repeat_kv: (b, kv, s, d) -> (b, kv n_rep, s, d) by expand and reshape."""
    batch, kvh, slen, d = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, kvh, n_rep, slen, d)
    return hidden_states.reshape(batch, kvh * n_rep, slen, d)


def eager_attention_forward(groups, query, key, value, mask, scaling):
    key_states = repeat_kv(key, groups)
    value_states = repeat_kv(value, groups)
    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    attn_weights = attn_weights + mask
    attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_output = torch.matmul(attn_weights, value_states)
    return attn_output.transpose(1, 2).contiguous()


def sdpa_attention_forward(groups, query, key, value):
    """integrations/sdpa_attention.py with repeat_kv (use_gqa_in_sdpa false): the kernel's
    output comes back (b, a, s, d) over (b, s, a, d) memory, so the transpose and contiguous
    after it copy nothing."""
    key, value = repeat_kv(key, groups), repeat_kv(value, groups)
    if torch.is_autocast_cpu_enabled() and query.dtype == torch.float32:  # autocast's SDPA cast
        query, key, value = (t.to(torch.bfloat16) for t in (query, key, value))
    o = FlashKernel.apply(query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2))
    return o.transpose(1, 2).transpose(1, 2).contiguous()


def flash_attention_forward(query, key, value):
    """integrations/flash_attention.py: (b, heads, s, d) transposed to (b, s, heads, d) views,
    flash_attn_func on the kv heads (no repeat); fp32 q, k, v (rotary with fp32 tables under
    autocast) cast to the autocast dtype first, as flash_attention_forward does."""
    if torch.is_autocast_cpu_enabled() and query.dtype == torch.float32:
        query, key, value = (t.to(torch.bfloat16) for t in (query, key, value))
    return FlashKernel.apply(query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2))


class LlamaAttention(nn.Module):
    """LlamaAttention.forward; with qk_norm, Qwen3Attention's (models/qwen3/modeling_qwen3.py):
    Qwen3RMSNorm (LlamaRMSNorm's upcast) over each head's d of q and k, before the transpose."""

    def __init__(self, s, h, a, kvh, attention, qk_norm=False):
        super().__init__()
        self.head_dim, self.groups, self.attention = h // a, a // kvh, attention
        self.q_norm = LlamaRMSNorm(h // a) if qk_norm else None
        self.k_norm = LlamaRMSNorm(h // a) if qk_norm else None
        self.scaling = self.head_dim ** -0.5
        self.q_proj = nn.Linear(h, a * self.head_dim, bias=False)
        self.k_proj = nn.Linear(h, kvh * self.head_dim, bias=False)
        self.v_proj = nn.Linear(h, kvh * self.head_dim, bias=False)
        self.o_proj = nn.Linear(a * self.head_dim, h, bias=False)
        d = self.head_dim
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        ang = torch.outer(torch.arange(s).float(), inv)
        ang = torch.cat([ang, ang], dim=-1)[None]               # (1, s, d): LlamaRotaryEmbedding
        self.register_buffer("cos", ang.cos())
        self.register_buffer("sin", ang.sin())
        self.register_buffer("mask", torch.full((s, s), float("-inf")).triu(1)[None, None])

    def forward(self, hidden_states):                           # (b, s, h)
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        q = self.q_proj(hidden_states).view(hidden_shape)
        k = self.k_proj(hidden_states).view(hidden_shape)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        v = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        cos, sin = self.cos.unsqueeze(1), self.sin.unsqueeze(1)  # apply_rotary_pos_emb
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        if self.attention == "eager":
            o = eager_attention_forward(self.groups, q, k, v, self.mask, self.scaling)
        elif self.attention == "sdpa":
            o = sdpa_attention_forward(self.groups, q, k, v)
        else:
            o = flash_attention_forward(q, k, v)
        return self.o_proj(o.reshape(*input_shape, -1).contiguous())


class LlamaMLP(nn.Module):
    def __init__(self, h, f):
        super().__init__()
        self.gate_proj = nn.Linear(h, f, bias=False)
        self.up_proj = nn.Linear(h, f, bias=False)
        self.down_proj = nn.Linear(f, h, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class HFMoE(nn.Module):
    """measure.MoEBlock (MixtralSparseMoeBlock's loop, index_add_ combine) on (b, s, h)."""

    def __init__(self, h, experts, top_k, f_e):
        super().__init__()
        self.block = MoEBlock(h, experts, top_k, f_e, 0, False, "0")

    def forward(self, x):
        return self.block(x)


class LlamaDecoderLayer(nn.Module):
    def __init__(self, s, h, a, kvh, f, attention, moe=None, qk_norm=False):
        super().__init__()
        self.input_layernorm, self.post_attention_layernorm = LlamaRMSNorm(h), LlamaRMSNorm(h)
        self.self_attn = LlamaAttention(s, h, a, kvh, attention, qk_norm)
        self.mlp = HFMoE(h, *moe) if moe else LlamaMLP(h, f)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.self_attn(self.input_layernorm(hidden_states))
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.mlp(self.post_attention_layernorm(hidden_states))
        return residual + hidden_states


# ---------------------------------------------------------------------------------------------
# PEFT (tuners/lora/layer.py)


class LoraLinear(nn.Module):
    """lora.Linear.forward with PEFT's defaults: lora_dropout 0 (nn.Identity), fp32 A and B
    (autocast_adapter_dtype), x cast to the adapter's dtype (_cast_input_dtype); the caller runs
    the layer under torch.autocast, as a bf16 Trainer does."""

    def __init__(self, base_layer, r):
        super().__init__()
        self.base_layer, self.scaling = base_layer, ALPHA / r
        self.lora_A = nn.Linear(base_layer.in_features, r, bias=False).float()
        self.lora_B = nn.Linear(r, base_layer.out_features, bias=False).float()
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B.weight)

    def forward(self, x):
        result = self.base_layer(x)
        torch_result_dtype = result.dtype
        x = x.to(self.lora_A.weight.dtype)
        result = result + self.lora_B(self.lora_A(x)) * self.scaling
        return result.to(torch_result_dtype)


class Autocast(nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.layer(x)


def peft_layer(layer, targets, r):
    """get_peft_model: the base frozen (bf16), LoraLinear on the targets (fp32 adapters)."""
    for p in layer.parameters():
        p.requires_grad_(False)
    for parent in (layer.self_attn, layer.mlp):
        for name in TARGETS[targets]:
            if hasattr(parent, name):
                setattr(parent, name, LoraLinear(getattr(parent, name), r))
    return Autocast(layer)


# ---------------------------------------------------------------------------------------------
# Megatron-Core


class SwiGLUFunction(torch.autograd.Function):
    """core/fusions/fused_bias_swiglu.py: saves its input (gate and up, concatenated) alone."""

    @staticmethod
    def forward(ctx, y):
        ctx.save_for_backward(y)
        y1, y2 = torch.chunk(y, 2, -1)
        return F.silu(y1) * y2

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        y1, y2 = torch.chunk(y.float(), 2, -1)
        s = torch.sigmoid(y1)
        silu = y1 * s
        return torch.cat((g * s * (1 + y1 * (1 - s)) * y2, g * silu), -1).to(y.dtype)


class TENorm(nn.Module):
    """Transformer Engine's fused RMSNorm (in LayerNormLinear): input, output, fp32 1/rms."""

    def __init__(self, h):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))

    def forward(self, x):
        return FusedRMSNorm.apply(x, self.weight, 1e-6)


class MegatronMLP(nn.Module):
    """core/transformer/mlp.py with gated_linear_unit and bias_swiglu_fusion: linear_fc1 (h ->
    2f), bias_swiglu_impl, linear_fc2."""

    def __init__(self, h, f):
        super().__init__()
        self.linear_fc1 = nn.Linear(h, 2 * f, bias=False)
        self.linear_fc2 = nn.Linear(f, h, bias=False)

    def forward(self, x):
        return self.linear_fc2(SwiGLUFunction.apply(self.linear_fc1(x)))


class WeightedSwiGLUFunction(torch.autograd.Function):
    """core/fusions/fused_bias_swiglu.py, WeightedSwiGLUFunction (weighted_bias_swiglu_impl):
    silu(gate) * up times the row's routing probability; saves its input (gate and up) and the
    probabilities."""

    @staticmethod
    def forward(ctx, y, w):
        ctx.save_for_backward(y, w)
        y1, y2 = torch.chunk(y, 2, -1)
        return (F.silu(y1) * y2 * w).to(y.dtype)

    @staticmethod
    def backward(ctx, g):
        y, w = ctx.saved_tensors
        y1, y2 = torch.chunk(y.float(), 2, -1)
        s = torch.sigmoid(y1)
        silu = y1 * s
        gw = g.float() * w.float()
        dy = torch.cat((gw * s * (1 + y1 * (1 - s)) * y2, gw * silu), -1).to(y.dtype)
        return dy, (silu * y2 * g.float()).sum(-1, keepdim=True).to(w.dtype)


class MegatronExpert(nn.Module):
    """core/transformer/mlp.py, MLP.forward with per_token_scale (SequentialMLP's expert; the
    grouped TEGroupedMLP keeps the same tensors: linear_fc1's input, weighted_bias_swiglu_impl's
    input and probabilities, linear_fc2's input)."""

    def __init__(self, h, f):
        super().__init__()
        self.linear_fc1 = nn.Linear(h, 2 * f, bias=False)
        self.linear_fc2 = nn.Linear(f, h, bias=False)

    def forward(self, x, probs):
        y = WeightedSwiGLUFunction.apply(self.linear_fc1(x), probs.unsqueeze(-1))
        return self.linear_fc2(y)


class MegatronMoE(nn.Module):
    """core/transformer/moe as Megatron-LM main (d98e8a6, 2026-08) runs it, dropless, without
    the fused permutation: TopKRouter (gating linear, top-k of the logits, softmax of the k in
    fp32 cast back, scattered into a (T, E) map: moe_utils.topk_routing_with_score_function),
    moe_utils.permute (the argsort of the (E, T) map, the token index modulo T, the
    probabilities indexed by the argsort, index_select of the tokens), the experts applying the
    probabilities in their activation (SequentialMLP / TEGroupedMLP with
    weighted_bias_swiglu_impl), moe_utils.unpermute without probabilities (scatter_add_);
    shared experts (SharedExpertMLP) beside. The choice of experts is made balanced as
    measure.MoEBlock makes it (balanced_choice), the tensors kept being those of the router's
    top-k."""

    def __init__(self, h, experts, top_k, f_e, f_s):
        super().__init__()
        self.n, self.k = experts, top_k
        self.weight = nn.Parameter(torch.randn(experts, h) * 0.02)
        self.local_experts = nn.ModuleList([MegatronExpert(h, f_e) for _ in range(experts)])
        self.shared = MegatronMLP(h, f_s) if f_s else None

    def forward(self, hidden_states):                          # (s, b, h)
        s, b, h = hidden_states.shape
        x = hidden_states.view(-1, h)
        tokens = x.shape[0]
        logits = F.linear(x, self.weight)
        bias = balanced_choice(tokens, self.n, self.k).to(logits.dtype)
        top_indices = torch.topk(logits.detach() + bias, self.k, dim=1).indices
        scores = logits.gather(1, top_indices)                  # topk's values: keeps indices
        probs = torch.softmax(scores, dim=-1, dtype=torch.float32).type_as(logits)
        routing_probs = torch.zeros_like(logits).scatter(1, top_indices, probs)
        routing_map = torch.zeros_like(logits).int().scatter(1, top_indices, 1).bool()
        # moe_utils.permute (num_out_tokens = k T, dropless)
        mask = routing_map.T.contiguous()
        flat_sorted = mask.reshape(-1).argsort(descending=True, stable=True)[: self.k * tokens]
        sorted_indices = flat_sorted % tokens
        permuted_probs = routing_probs.T.contiguous().reshape(-1)[flat_sorted]
        permuted = x.index_select(0, sorted_indices)
        counts = mask.sum(1).tolist()
        outs = [e(chunk, p) for e, chunk, p in zip(self.local_experts,
                                                    torch.split(permuted, counts),
                                                    torch.split(permuted_probs, counts))]
        expert_out = torch.cat(outs)
        # moe_utils.unpermute, no probabilities: scatter_add_ (its backward reads the index)
        out = torch.zeros_like(x).scatter_add_(0, sorted_indices.unsqueeze(1).expand(-1, h),
                                               expert_out)
        if self.shared is not None:
            out = out + self.shared(x)
        return out.view(s, b, h)


class MegatronLayer(nn.Module):
    """core/transformer/transformer_layer.py with TE specs: fused norm + QKV, rotary, TE
    DotProductAttention (flash, GQA on the kv heads), linear_proj, residual; fused norm + the
    MLP (or the MoE layer), residual. Layout (s, b, h)."""

    def __init__(self, s, h, a, kvh, f, moe=None):
        super().__init__()
        d = h // a
        self.a, self.kvh, self.d = a, kvh, d
        self.norm1, self.norm2 = TENorm(h), TENorm(h)
        self.linear_q = nn.Linear(h, a * d, bias=False)
        self.linear_kv = nn.Linear(h, 2 * kvh * d, bias=False)
        self.linear_proj = nn.Linear(a * d, h, bias=False)
        self.mlp = MegatronMoE(h, *moe) if moe else MegatronMLP(h, f)
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        ang = torch.outer(torch.arange(s).float(), inv)
        ang = torch.cat([ang, ang], dim=-1)[:, None, None, :]
        self.register_buffer("cos", ang.cos())
        self.register_buffer("sin", ang.sin())

    def rope(self, t):                                          # apply_rotary_pos_emb, unfused
        return t * self.cos + rotate_half(t) * self.sin

    def forward(self, x):
        s, b, h = x.shape
        y = self.norm1(x)
        q = self.rope(self.linear_q(y).view(s, b, self.a, self.d))
        kv = self.linear_kv(y).view(s, b, self.kvh, 2 * self.d)
        k, v = self.rope(kv[..., : self.d].contiguous()), kv[..., self.d:].contiguous()
        o = FusedAttention.apply(q, k, v, 0.0, True, 0).view(s, b, self.a * self.d)
        x = x + self.linear_proj(o)
        return x + self.mlp(self.norm2(x))


# ---------------------------------------------------------------------------------------------
# The rows


def rows():
    """(row without saved_bytes and layer, make(), input layout) for every measurement."""
    for held, shapes in ((0, DEV), (1, HELD_OUT)):
        for s, b, h, a, kvh, f in shapes:
            f = f or llama_default_ffn(h)
            base = dict(kind="llama", qk_norm=0, seq=s, micro_batch=b, hidden=h, heads=a,
                        kv_heads=kvh, ffn=f, experts=0, top_k=0, expert_ffn=0, shared_ffn=0,
                        lora_targets="none", lora_rank=0, held_out=held)
            # Qwen3: q and k norms per head (full training and LoRA on every linear)
            yield (dict(base, impl="hf", attention="flash_attention_2", qk_norm=1),
                   lambda s=s, h=h, a=a, kvh=kvh, f=f:
                   LlamaDecoderLayer(s, h, a, kvh, f, "flash_attention_2", qk_norm=True), "bsh")
            yield (dict(base, impl="hf-peft", attention="eager", qk_norm=1,
                        lora_targets="all-linear", lora_rank=16),
                   lambda s=s, h=h, a=a, kvh=kvh, f=f: peft_layer(
                       LlamaDecoderLayer(s, h, a, kvh, f, "eager", qk_norm=True), "all-linear", 16),
                   "bsh")
            for attention in ("eager", "sdpa", "flash_attention_2"):
                yield (dict(base, impl="hf", attention=attention),
                       lambda s=s, h=h, a=a, kvh=kvh, f=f, at=attention:
                       LlamaDecoderLayer(s, h, a, kvh, f, at), "bsh")
                # Trainer's bf16=True: fp32 weights and residual stream under autocast
                yield (dict(base, impl="hf", attention=attention, precision="autocast"),
                       lambda s=s, h=h, a=a, kvh=kvh, f=f, at=attention:
                       Autocast(LlamaDecoderLayer(s, h, a, kvh, f, at)), "bsh")
                for targets in TARGETS:
                    for r in RANKS:
                        if attention == "sdpa":
                            continue
                        yield (dict(base, impl="hf-peft", attention=attention,
                                    lora_targets=targets, lora_rank=r),
                               lambda s=s, h=h, a=a, kvh=kvh, f=f, at=attention, t=targets, r=r:
                               peft_layer(LlamaDecoderLayer(s, h, a, kvh, f, at), t, r), "bsh")
            yield (dict(base, impl="megatron", attention="flash"),
                   lambda s=s, h=h, a=a, kvh=kvh, f=f: MegatronLayer(s, h, a, kvh, f), "sbh")
            yield (dict(base, impl="megatron", kind="gpt", attention="flash", ffn=4 * h),
                   lambda h=h, a=a, kvh=kvh: GPTLayer(h, a, kvh, 4 * h, P_DROP, True), "sbh")
    for held, shapes in ((0, MOE_DEV), (1, MOE_HELD_OUT)):
        for s, b, h, a, kvh, E, k, f_e, f_s in shapes:
            base = dict(kind="moe", qk_norm=0, seq=s, micro_batch=b, hidden=h, heads=a, kv_heads=kvh,
                        ffn=0, experts=E, top_k=k, expert_ffn=f_e, shared_ffn=f_s,
                        lora_targets="none", lora_rank=0, held_out=held)
            yield (dict(base, impl="megatron", attention="flash"),
                   lambda s=s, h=h, a=a, kvh=kvh, m=(E, k, f_e, f_s):
                   MegatronLayer(s, h, a, kvh, 0, m), "sbh")
            if f_s:
                continue  # transformers' Mixtral block has no shared experts
            for attention in ("eager", "flash_attention_2"):
                yield (dict(base, impl="hf", attention=attention),
                       lambda s=s, h=h, a=a, kvh=kvh, at=attention, m=(E, k, f_e):
                       LlamaDecoderLayer(s, h, a, kvh, 0, at, m), "bsh")


def label(r):
    size = f"s{r['seq']}-b{r['micro_batch']}-h{r['hidden']}-a{r['heads']}-kv{r['kv_heads']}"
    size += f"-E{r['experts']}-k{r['top_k']}-fe{r['expert_ffn']}-fs{r['shared_ffn']}" \
        if r["kind"] == "moe" else f"-f{r['ffn']}"
    lora = f"-{r['lora_targets']}-r{r['lora_rank']}" if r["lora_rank"] else ""
    qkn = "-qk-norm" if r["qk_norm"] else ""
    ac = "-autocast" if r["precision"] == "autocast" else ""
    return f"{r['impl']}{ac}-{r['kind']}-{r['attention']}{qkn}{lora}-{size}"


def main(argv):
    if len(argv) != 2:
        print("usage: impl.py OUT.csv", file=sys.stderr)
        return 2
    out, start = [], time.time()
    for row, make, layout in rows():
        row.setdefault("precision", "mixed")
        ac = row["precision"] == "autocast"  # fp32 weights, buffers and input
        torch.manual_seed(0)
        layer = make() if ac else make().to(DTYPE)
        for m in layer.modules():  # PEFT's adapters stay fp32 (autocast_adapter_dtype)
            if isinstance(m, LoraLinear):
                m.lora_A.float()
                m.lora_B.float()
        s, b, h = row["seq"], row["micro_batch"], row["hidden"]
        x = torch.randn((b, s, h) if layout == "bsh" else (s, b, h),
                        dtype=torch.float32 if ac else DTYPE, requires_grad=True)
        row["saved_bytes"] = saved_bytes(layer, x, False)
        row["layer"] = label(row)
        print(f"{row['layer']}: {row['saved_bytes']} bytes = "
              f"{row['saved_bytes'] / (s * b * h):.3f} sbh", flush=True)
        out.append(row)
    write_csv(argv[1], COLUMNS, out)
    print(f"{len(out)} rows in {time.time() - start:.0f} s -> {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
